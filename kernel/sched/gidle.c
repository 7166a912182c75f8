// SPDX-License-Identifier: GPL-2.0
/*
 * SCHED_GIDLE: a scheduling class strictly below fair (and ext).
 *
 * A GIDLE task runs on a CPU only when no stop, deadline, rt, fair or ext
 * task is runnable there, and any such wakeup preempts it. GIDLE tasks of
 * one CPU share it round-robin. Idle CPUs find GIDLE work: wakeups go to an
 * idle CPU, a CPU about to go idle pulls a waiting GIDLE task after fair
 * newidle balancing found nothing, and a GIDLE task preempted by a higher
 * class is pushed to an idle CPU if there is one.
 *
 * A class strictly below fair would turn every kernel lock a GIDLE task
 * holds into an unbounded priority inversion. So a GIDLE task that blocks,
 * or is preempted, while in the kernel is boosted into the fair class (at
 * the weight of its nice value) until it next returns to user space, where
 * it drops back; a task preempted in user space holds no kernel lock and
 * is not boosted. An rt_mutex waiter (a PI futex, say) lifts a GIDLE owner
 * into the fair class as well.
 *
 * The boost must not be a way out of the class (a loop of long system
 * calls, an io_uring SQPOLL or io-wq thread, which never returns to user
 * space): a task's boosted run time beside other fair work is paid from
 * its boost credit, and a boosted task without credit waits in the GIDLE
 * class until it has some again.
 *
 * cpu.max bounds a group's GIDLE tasks too: their run time is charged to
 * their groups' bandwidth, and a GIDLE task of a throttled group waits on
 * its group's cfs_rq until the group is unthrottled.
 * See Documentation/scheduler/sched-gidle.rst.
 */

/* Round-robin slice among the GIDLE tasks of a CPU, in ticks. */
#define GIDLE_TIMESLICE		max(1, 10 * HZ / 1000)

/* CPUs with a GIDLE task queued that is not running there. */
static struct cpumask gidle_waiting_mask;

#ifdef CONFIG_SMP
static DEFINE_PER_CPU(struct balance_callback, gidle_push_head);
#endif

void init_gidle_rq(struct gidle_rq *gidle_rq)
{
	INIT_LIST_HEAD(&gidle_rq->queue);
	gidle_rq->nr_running = 0;
	gidle_rq->nr_throttled = 0;
	gidle_rq->curr = NULL;
	gidle_rq->waiting = false;
}

bool sched_gidle_waiting(void)
{
	return !cpumask_empty(&gidle_waiting_mask);
}

static void gidle_update_waiting(struct rq *rq)
{
	bool waiting = rq->gidle.nr_running > (rq->gidle.curr ? 1 : 0);

	if (waiting == rq->gidle.waiting)
		return;
	rq->gidle.waiting = waiting;
	if (waiting)
		cpumask_set_cpu(cpu_of(rq), &gidle_waiting_mask);
	else
		cpumask_clear_cpu(cpu_of(rq), &gidle_waiting_mask);
}

static void update_curr_gidle(struct rq *rq)
{
	s64 delta_exec = update_curr_common(rq);

	if (delta_exec <= 0)
		return;
	rq->gidle.run_ns += delta_exec;
	if (rq->gidle.curr)
		gidle_account_cfs_runtime(rq->gidle.curr, delta_exec);
}

#ifdef CONFIG_CFS_BANDWIDTH
/*
 * A task whose group is throttled (cpu.max) waits on its group's
 * gidle_throttled list, out of nr_running, as a throttled fair task waits
 * out of its hierarchy; it may still be current until the next pick.
 * @queued: it is on rq->gidle.queue now.
 */
static void gidle_throttle(struct rq *rq, struct task_struct *p, bool queued)
{
	if (queued) {
		list_del(&p->gidle.run_list);
		rq->gidle.nr_running--;
		sub_nr_running(rq, 1);
	}
	list_add_tail(&p->gidle.run_list, &p->se.cfs_rq->gidle_throttled);
	p->gidle.throttled = 1;
	rq->gidle.nr_throttled++;
}

/*
 * tg_unthrottle_up(): @cfs_rq is throttled at no level any more. Requeue
 * the GIDLE tasks it held.
 */
void gidle_unthrottle(struct rq *rq, struct cfs_rq *cfs_rq)
{
	struct task_struct *p, *n;

	lockdep_assert_rq_held(rq);
	if (list_empty(&cfs_rq->gidle_throttled))
		return;
	list_for_each_entry_safe(p, n, &cfs_rq->gidle_throttled, gidle.run_list) {
		list_move_tail(&p->gidle.run_list, &rq->gidle.queue);
		p->gidle.throttled = 0;
		rq->gidle.nr_throttled--;
		rq->gidle.nr_running++;
		add_nr_running(rq, 1);
	}
	gidle_update_waiting(rq);
	if (is_idle_task(rcu_access_pointer(rq->curr)))
		resched_curr(rq);
}
#else
static inline void gidle_throttle(struct rq *rq, struct task_struct *p, bool queued) { }
#endif

static void enqueue_task_gidle(struct rq *rq, struct task_struct *p, int flags)
{
	if (unlikely(gidle_task_throttled(p))) {
		gidle_throttle(rq, p, false);
		return;
	}
	list_add_tail(&p->gidle.run_list, &rq->gidle.queue);
	rq->gidle.nr_running++;
	add_nr_running(rq, 1);
	gidle_update_waiting(rq);
	/*
	 * Wake-ups and migrations preempt the idle task through
	 * wakeup_preempt(), a cgroup move out of a throttled group does not.
	 */
	if (is_idle_task(rcu_access_pointer(rq->curr)))
		resched_curr(rq);
}

static bool dequeue_task_gidle(struct rq *rq, struct task_struct *p, int flags)
{
	list_del_init(&p->gidle.run_list);
	if (unlikely(p->gidle.throttled)) {
		p->gidle.throttled = 0;
		rq->gidle.nr_throttled--;
	} else {
		rq->gidle.nr_running--;
		sub_nr_running(rq, 1);
	}
	if (rq->gidle.curr == p) {
		update_curr_gidle(rq);
		rq->gidle.curr = NULL;
	}
	gidle_update_waiting(rq);
	return true;
}

static void yield_task_gidle(struct rq *rq)
{
	/* sched_yield() is called by the task to move: current */
	if (!current->gidle.throttled)
		list_move_tail(&current->gidle.run_list, &rq->gidle.queue);
}

static void wakeup_preempt_gidle(struct rq *rq, struct task_struct *p, int flags)
{
	/* GIDLE tasks never preempt each other: they rotate at the tick. */
}

static struct task_struct *pick_task_gidle(struct rq *rq)
{
	struct task_struct *p;

	/* throttled since it was queued: a group or an ancestor ran out */
	while ((p = list_first_entry_or_null(&rq->gidle.queue, struct task_struct,
					     gidle.run_list))) {
		if (likely(!gidle_task_throttled(p)))
			return p;
		gidle_throttle(rq, p, true);
	}
	gidle_update_waiting(rq);
	return NULL;
}

static void set_next_task_gidle(struct rq *rq, struct task_struct *p, bool first)
{
	p->se.exec_start = rq_clock_task(rq);
	rq->gidle.curr = p;
	gidle_update_waiting(rq);
}

#ifdef CONFIG_SMP
static void gidle_push_tasks(struct rq *rq);

static void put_prev_task_gidle(struct rq *rq, struct task_struct *p,
				struct task_struct *next)
{
	bool next_gidle = next && next->sched_class == &gidle_sched_class;

	update_curr_gidle(rq);
	rq->gidle.curr = NULL;
	gidle_update_waiting(rq);

	/*
	 * In the pick path, preempted by a higher class or rotated out for
	 * another GIDLE task: a GIDLE task is left waiting here, which an
	 * idle CPU may take over.
	 */
	if (next && rq->gidle.nr_running > next_gidle)
		queue_balance_callback(rq, &per_cpu(gidle_push_head, cpu_of(rq)),
				       gidle_push_tasks);
}

/* is_cpu_allowed() for a user task (GIDLE tasks are user tasks) */
static bool gidle_cpu_allowed(struct task_struct *p, int cpu)
{
	if (!cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;
	return is_migration_disabled(p) ? cpu_online(cpu) : cpu_active(cpu);
}

static int find_idle_cpu_gidle(struct task_struct *p, int from)
{
	int cpu;

	for_each_cpu_wrap(cpu, p->cpus_ptr, from) {
		if (cpu != from && cpu_active(cpu) && available_idle_cpu(cpu))
			return cpu;
	}
	return -1;
}

/* A queued GIDLE task of @rq that another CPU could run. */
static struct task_struct *gidle_pushable_task(struct rq *rq)
{
	struct task_struct *p;

	list_for_each_entry(p, &rq->gidle.queue, gidle.run_list) {
		if (p != rq->gidle.curr && !task_on_cpu(rq, p) &&
		    !is_migration_disabled(p) && p->nr_cpus_allowed > 1 &&
		    !gidle_task_throttled(p))
			return p;
	}
	return NULL;
}

/*
 * Move waiting GIDLE tasks of @rq to idle CPUs, a few at a time. Called
 * with rq locked (and unpinned), from a balance callback or on wakeup;
 * double_lock_balance() may drop the lock, so look again after it.
 */
static void gidle_push_tasks(struct rq *rq)
{
	int budget;

	for (budget = 4; budget; budget--) {
		struct task_struct *p = gidle_pushable_task(rq);
		struct rq *dst_rq;
		bool moved = false;
		int cpu;

		if (!p)
			return;
		cpu = find_idle_cpu_gidle(p, cpu_of(rq));
		if (cpu < 0)
			return;
		dst_rq = cpu_rq(cpu);
		double_lock_balance(rq, dst_rq);
		if (task_rq(p) == rq && task_on_rq_queued(p) &&
		    p->sched_class == &gidle_sched_class && !task_on_cpu(rq, p) &&
		    p != rq->gidle.curr && !dst_rq->nr_running &&
		    !is_migration_disabled(p) && !gidle_task_throttled(p) &&
		    gidle_cpu_allowed(p, cpu)) {
			deactivate_task(rq, p, 0);
			set_task_cpu(p, cpu);
			activate_task(dst_rq, p, 0);
			resched_curr(dst_rq);
			rq->gidle.nr_pushed++;
			moved = true;
		}
		double_unlock_balance(rq, dst_rq);
		if (!moved)
			return;
	}
}

static void task_woken_gidle(struct rq *rq, struct task_struct *p)
{
	if (rq->gidle.waiting && p->nr_cpus_allowed > 1 && !task_on_cpu(rq, p))
		gidle_push_tasks(rq);
}

/*
 * A CPU about to go idle pulls a waiting GIDLE task from another CPU. Called
 * from the pick path after the classes above found nothing. prev_balance()
 * starts at prev's class, so when the last task of a CPU, a GIDLE task,
 * blocks, the fair class has not looked for work yet: its newidle balance
 * goes first then, before a GIDLE pull. (A CPU that keeps running GIDLE
 * tasks finds fair work by periodic balancing, as an idle CPU.)
 */
static int balance_gidle(struct rq *rq, struct task_struct *prev,
			 struct rq_flags *rf)
{
	if (prev->sched_class == &gidle_sched_class && !rq->nr_running &&
	    fair_sched_class.balance(rq, prev, rf))
		return 1;
	if (rq->gidle.nr_running)
		return 1;
	return sched_gidle_pull(rq, rf);
}

/*
 * @rq is about to go idle, and the classes above found nothing: pull a
 * GIDLE task waiting on another CPU. Also called from the fast pick path,
 * after fair newidle balancing found nothing, so that it does not run
 * twice. Returns whether anything is queued on @rq now.
 */
int sched_gidle_pull(struct rq *rq, struct rq_flags *rf)
{
	int this_cpu = cpu_of(rq), cpu;

	if (cpumask_empty(&gidle_waiting_mask) || !cpu_active(this_cpu))
		return 0;

	rq_unpin_lock(rq, rf);
	for_each_cpu(cpu, &gidle_waiting_mask) {
		struct rq *src_rq = cpu_rq(cpu);
		struct task_struct *p, *pulled = NULL;

		if (cpu == this_cpu)
			continue;
		double_lock_balance(rq, src_rq);
		list_for_each_entry(p, &src_rq->gidle.queue, gidle.run_list) {
			if (p == src_rq->gidle.curr || task_on_cpu(src_rq, p) ||
			    is_migration_disabled(p) || gidle_task_throttled(p) ||
			    !gidle_cpu_allowed(p, this_cpu))
				continue;
			deactivate_task(src_rq, p, 0);
			set_task_cpu(p, this_cpu);
			activate_task(rq, p, 0);
			pulled = p;
			break;
		}
		double_unlock_balance(rq, src_rq);
		if (pulled) {
			rq->gidle.nr_pulled++;
			break;
		}
		if (rq->nr_running)
			break;
	}
	rq_repin_lock(rq, rf);

	return rq->nr_running > 0;
}

static int select_task_rq_gidle(struct task_struct *p, int prev_cpu, int flags)
{
	unsigned int best_nr = UINT_MAX;
	int cpu, best = prev_cpu;

	if (!(flags & (WF_TTWU | WF_FORK | WF_EXEC)))
		return prev_cpu;

	/* Spread: an idle CPU first, else the one with the fewest tasks. */
	if (cpumask_test_cpu(prev_cpu, p->cpus_ptr) && available_idle_cpu(prev_cpu))
		return prev_cpu;

	for_each_cpu_wrap(cpu, p->cpus_ptr, prev_cpu) {
		unsigned int nr;

		if (!cpu_active(cpu))
			continue;
		if (available_idle_cpu(cpu))
			return cpu;
		nr = READ_ONCE(cpu_rq(cpu)->nr_running);
		if (nr < best_nr) {
			best_nr = nr;
			best = cpu;
		}
	}
	return best;
}
#else
static void put_prev_task_gidle(struct rq *rq, struct task_struct *p,
				struct task_struct *next)
{
	update_curr_gidle(rq);
	rq->gidle.curr = NULL;
	gidle_update_waiting(rq);
}
#endif /* CONFIG_SMP */

static void task_tick_gidle(struct rq *rq, struct task_struct *p, int queued)
{
	update_curr_gidle(rq);

	if (p->gidle.throttled || --p->gidle.time_slice)
		return;
	p->gidle.time_slice = GIDLE_TIMESLICE;
	if (rq->gidle.nr_running > 1) {
		list_move_tail(&p->gidle.run_list, &rq->gidle.queue);
		resched_curr(rq);
	}
}

static void switched_to_gidle(struct rq *rq, struct task_struct *p)
{
	if (!task_on_rq_queued(p))
		return;
	if (rcu_access_pointer(rq->curr) == p) {
		/*
		 * Anything of a higher class queued here goes first, and a
		 * task of a throttled group stops.
		 */
		if (p->gidle.throttled || rq->nr_running > rq->gidle.nr_running)
			resched_curr(rq);
	} else if (is_idle_task(rcu_access_pointer(rq->curr))) {
		resched_curr(rq);
	}
}

static void prio_changed_gidle(struct rq *rq, struct task_struct *p, int oldprio)
{
}

static unsigned int get_rr_interval_gidle(struct rq *rq, struct task_struct *p)
{
	return GIDLE_TIMESLICE;
}

#if defined(CONFIG_SCHED_CORE) && defined(CONFIG_CFS_BANDWIDTH)
static int task_is_throttled_gidle(struct task_struct *p, int cpu)
{
	return task_group(p)->cfs_rq[cpu]->throttle_count;
}
#endif

DEFINE_SCHED_CLASS(gidle) = {
	.enqueue_task		= enqueue_task_gidle,
	.dequeue_task		= dequeue_task_gidle,
	.yield_task		= yield_task_gidle,

	.wakeup_preempt		= wakeup_preempt_gidle,

	.pick_task		= pick_task_gidle,
	.put_prev_task		= put_prev_task_gidle,
	.set_next_task		= set_next_task_gidle,

#ifdef CONFIG_SMP
	.balance		= balance_gidle,
	.select_task_rq		= select_task_rq_gidle,
	.task_woken		= task_woken_gidle,
	.set_cpus_allowed	= set_cpus_allowed_common,
#endif

	.task_tick		= task_tick_gidle,

	.prio_changed		= prio_changed_gidle,
	.switched_to		= switched_to_gidle,
	.get_rr_interval	= get_rr_interval_gidle,
	.update_curr		= update_curr_gidle,
#if defined(CONFIG_SCHED_CORE) && defined(CONFIG_CFS_BANDWIDTH)
	.task_is_throttled	= task_is_throttled_gidle,
#endif
};

/*
 * Move @p between the GIDLE and the fair class (boost and unboost), the way
 * rt_mutex_setprio() changes a class. Called with rq locked; @p may be
 * running, queued or blocked.
 */
static void gidle_switch_class(struct rq *rq, struct task_struct *p,
			       const struct sched_class *next_class)
{
	const struct sched_class *prev_class = p->sched_class;
	int flags = DEQUEUE_SAVE | DEQUEUE_MOVE | DEQUEUE_NOCLOCK;
	bool queued, running;

	lockdep_assert_rq_held(rq);
	if (prev_class == next_class)
		return;

	if (p->se.sched_delayed)
		dequeue_task(rq, p, DEQUEUE_SLEEP | DEQUEUE_DELAYED | DEQUEUE_NOCLOCK);

	queued = task_on_rq_queued(p);
	/*
	 * rq->curr is __rcu: compare it with rcu_access_pointer() rather than
	 * through task_current() and put_prev_task(), which sparse flags.
	 */
	running = rcu_access_pointer(rq->curr) == p;
	if (queued)
		dequeue_task(rq, p, flags);
	if (running)
		p->sched_class->put_prev_task(rq, p, NULL);

	p->sched_class = next_class;
	check_class_changing(rq, p, prev_class);

	if (queued)
		enqueue_task(rq, p, flags);
	if (running)
		set_next_task(rq, p);

	check_class_changed(rq, p, prev_class, p->prio);
}

/* Jiffies that refill the credit from its lowest to its highest value */
#define GIDLE_REFILL_JIFFIES \
	((((u64)2 * GIDLE_CREDIT_MAX) << GIDLE_CREDIT_SHIFT) / TICK_NSEC + 1)

/* Refill @p's boost credit with what it earned since. Rq lock held. */
static void gidle_credit_refill(struct task_struct *p)
{
	unsigned long delta = jiffies - p->gidle.credit_stamp;
	s64 gain;

	if (!delta)
		return;
	p->gidle.credit_stamp += delta;
	delta = min_t(unsigned long, delta, GIDLE_REFILL_JIFFIES);
	gain = ((u64)delta * TICK_NSEC) >> GIDLE_CREDIT_SHIFT;
	WRITE_ONCE(p->gidle.credit, min_t(s64, p->gidle.credit + gain, GIDLE_CREDIT_MAX));
}

/*
 * sched_fork(): child @p of a GIDLE task takes half of its parent's boost
 * credit, so that forking creates none.
 */
void sched_gidle_fork(struct task_struct *p)
{
	struct rq_flags rf;
	struct rq *rq;
	s64 half;

	rq = task_rq_lock(current, &rf);
	gidle_credit_refill(current);
	half = max_t(s64, current->gidle.credit, 0) / 2;
	WRITE_ONCE(current->gidle.credit, current->gidle.credit - half);
	task_rq_unlock(rq, current, &rf);
	p->gidle.credit = half;
	p->gidle.credit_stamp = jiffies;
}

/*
 * Would moving @p alone into SCHED_GIDLE leave a thread of its process with
 * another policy, one that may wait on a user-space lock @p holds? Threads
 * the kernel runs for the process (io_uring, vhost: PF_USER_WORKER) take
 * no such locks, and dying ones (group exit, exec, SIGKILL) none any more.
 * Not looked at: tasks that share @p's mm but not its thread group
 * (clone(CLONE_VM) without CLONE_THREAD), and a thread that a sibling is
 * creating (clone() copies the policy before the new thread is linked).
 * A hint for sched_setscheduler(), taken without a lock, against a
 * mistake; SCHED_FLAG_GIDLE_THREAD asks for the same result. It walks the
 * thread group to the first thread of another policy, under RCU.
 */
bool gidle_splits_thread_group(struct task_struct *p)
{
	struct task_struct *t;

	guard(rcu)();
	if (READ_ONCE(p->signal->flags) & SIGNAL_GROUP_EXIT)
		return false;
	for_each_thread(p, t) {
		if (t == p || (READ_ONCE(t->flags) & (PF_USER_WORKER | PF_EXITING)))
			continue;
		/* A hint (above): a racing SIGKILL is seen at worst next time */
		if (data_race(__fatal_signal_pending(t)))
			continue;
		if (!gidle_policy(READ_ONCE(t->policy)))
			return true;
	}
	return false;
}

/*
 * A stop signal sent to @p, not blocked, that would stop it: only the task
 * itself turns one into a group stop (JOBCTL_STOP_PENDING), so look at
 * what is pending. (It may still be discarded, in an orphaned process
 * group: which is why it lifts only within the boost credit.)
 * Read without the siglock (the rq lock, IRQs off, keeps sighand): a lift
 * is decided again at every tick.
 */
static bool gidle_stop_signal_pending(struct task_struct *p)
{
	static const int stops[] = { SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU };
	int i;

	for (i = 0; i < ARRAY_SIZE(stops); i++) {
		int sig = stops[i];

		if ((sigismember(&p->pending.signal, sig) ||
		     sigismember(&p->signal->shared_pending.signal, sig)) &&
		    !sigismember(&p->blocked, sig) &&
		    (sig == SIGSTOP ||
		     READ_ONCE(rcu_dereference_sched(p->sighand)->action[sig - 1].sa.sa_handler) ==
		     SIG_DFL))
			return true;
	}
	return false;
}

/*
 * Must @p run now to act on SIGKILL or a freeze request (system or cgroup)?
 * Waiting behind busy fair work, it would hold its memory or the freezer
 * until the CPU goes idle. These end in its exit or its freeze and cannot
 * be raised again and again: such a task runs without boost credit.
 */
static bool gidle_must_run(struct task_struct *p)
{
	return (p->flags & PF_EXITING) || __fatal_signal_pending(p) || freezing(p) ||
	       (p->jobctl & JOBCTL_TRAP_FREEZE);
}

/*
 * Should @p, waiting behind busy fair work, be lifted at the tick? For the
 * above, and, within its boost credit, to act on a stop signal, a group
 * stop or a ptrace trap (PTRACE_INTERRUPT, PTRACE_LISTEN), so that a stop
 * or its debugger need not wait for the CPU to go idle. Those a task can
 * raise for itself again and again (a timer sending SIGTSTP in an orphaned
 * process group, where it is discarded): the credit bounds them.
 */
static bool gidle_should_lift(struct task_struct *p)
{
	return gidle_must_run(p) ||
	       (p->jobctl & (JOBCTL_STOP_PENDING | JOBCTL_TRAP_MASK)) ||
	       (task_sigpending(p) && gidle_stop_signal_pending(p));
}

/*
 * Boosted @p: is it out of credit, and so left in the GIDLE class? Not if
 * it must run. Callers hold the rq lock (and the class follows from it:
 * gidle_class_of()).
 */
void gidle_set_spent(struct task_struct *p)
{
	bool spent;

	gidle_credit_refill(p);
	spent = p->gidle.credit <= 0 && !gidle_must_run(p);
	if (spent && !p->gidle.spent)
		p->gidle.nr_spent++;
	p->gidle.spent = spent;
}

/*
 * __schedule() is switching @p out in the kernel: it blocks, or it is
 * preempted in kernel mode. It may hold a mutex, an rwsem or a page lock,
 * so it competes in the fair class until it returns to user space, while
 * it has boost credit. A boosted task out of credit that blocks again
 * stays where it is.
 */
void sched_gidle_boost(struct rq *rq, struct task_struct *p)
{
	/* boosted in fair: charge what it ran since the last update first */
	if (rcu_access_pointer(rq->curr) == p && p->sched_class == &fair_sched_class)
		p->sched_class->update_curr(rq);
	if (!p->gidle.boosted) {
		WRITE_ONCE(p->gidle.boosted, 1);
		p->gidle.nr_boosts++;
	}
	gidle_set_spent(p);
	gidle_switch_class(rq, p, gidle_class_of(p, &gidle_sched_class));
}

/* Back to user space: drop the boost. Interrupts are disabled. */
void sched_gidle_unboost(void)
{
	struct task_struct *p = current;
	struct rq_flags rf;
	struct rq *rq;

	rq = task_rq_lock(p, &rf);
	if (p->gidle.boosted) {
		update_rq_clock(rq);
		WRITE_ONCE(p->gidle.boosted, 0);
		p->gidle.spent = 0;
		/* gidle_enter_class() would boost it again: not entering */
		gidle_switch_class(rq, p,
				   gidle_class_of(p, __setscheduler_class(p->policy, p->prio)));
	}
	task_rq_unlock(rq, p, &rf);
}

/*
 * At each tick: a boosted task that ran out of credit while other fair
 * tasks waited for its CPU (gidle_charge()) goes back to the GIDLE class;
 * boosted tasks waiting there go back to fair once they have credit again;
 * a GIDLE task waiting behind busy fair work that must act on a signal or
 * a freeze is lifted into fair (it acts on them in the kernel).
 */
void sched_gidle_tick(struct rq *rq, struct task_struct *curr)
{
	struct task_struct *p, *n;

	lockdep_assert_rq_held(rq);
	if (unlikely(curr->gidle.boosted) && curr->sched_class == &fair_sched_class &&
	    !rt_mutex_get_top_task(curr)) {
		gidle_set_spent(curr);
		if (curr->gidle.spent) {
			gidle_switch_class(rq, curr, &gidle_sched_class);
			resched_curr(rq);
		}
	}
	if (!rq->gidle.waiting)
		return;
	list_for_each_entry_safe(p, n, &rq->gidle.queue, gidle.run_list) {
		if (p == rq->gidle.curr)
			continue;
		if (p->gidle.boosted) {
			gidle_set_spent(p);
			if (!p->gidle.spent)
				gidle_switch_class(rq, p, &fair_sched_class);
		} else if (gidle_should_lift(p)) {
			sched_gidle_boost(rq, p);
		}
	}
}

#ifdef CONFIG_SCHED_DEBUG
static int sched_gidle_stats_show(struct seq_file *m, void *v)
{
	int cpu;

	seq_puts(m, "# cpu nr_running run_ns boosted_ns pulled pushed throttled\n");
	for_each_online_cpu(cpu) {
		struct rq *rq = cpu_rq(cpu);

		seq_printf(m, "cpu%d %u %llu %llu %llu %llu %u\n", cpu,
			   READ_ONCE(rq->gidle.nr_running),
			   READ_ONCE(rq->gidle.run_ns),
			   READ_ONCE(rq->gidle.boosted_ns),
			   READ_ONCE(rq->gidle.nr_pulled),
			   READ_ONCE(rq->gidle.nr_pushed),
			   READ_ONCE(rq->gidle.nr_throttled));
	}
	return 0;
}

static int sched_gidle_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, sched_gidle_stats_show, NULL);
}

const struct file_operations sched_gidle_stats_fops = {
	.open		= sched_gidle_stats_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};
#endif
