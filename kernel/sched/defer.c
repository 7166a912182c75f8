// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred wakeup: a task tagged with SCHED_FLAG_DEFER_WAKEUP that is woken
 * while the CPU chosen for it is busy is not enqueued there. It is parked,
 * in TASK_WAKING and on no runqueue, on that CPU's list, and placed onto
 * the least loaded CPU it may run on, nearest first in the scheduling
 * domains, by whichever comes first: the parking CPU's periodic or newly
 * idle balance (which takes one task itself), the nohz idle balance, or
 * the end of the deferral window, sysctl_sched_defer_wakeup_max_us after
 * the list became non-empty: a soft hrtimer of the parking CPU, armed
 * there through an irq_work when the waker runs elsewhere. A list whose
 * oldest task has waited longer than the window, or which holds as many
 * as one window can place, takes no more: wake-ups then go through at
 * once. Only wake-ups from an interruptible sleep are deferred, and not
 * those that may leave the task owning a lock (see defer_wakeup_excluded()).
 * A parked task made real-time or deadline meanwhile (sched_setscheduler(),
 * priority inheritance), untagged, waited for on an rt_mutex it owns, made
 * a requeue-PI waiter, handed a lock, sent a fatal signal or frozen, is
 * taken off its list and placed at once (__defer_wakeup_hurry()).
 *
 * Placement runs in batches of DEFER_WAKEUP_BATCH tasks, each scanning at
 * most DEFER_WAKEUP_SCAN CPUs: a batch is the longest that the placement
 * keeps preemption (softirq) off; the newly idle balance, with interrupts
 * off, takes one task and scans nothing. What a batch leaves is placed by
 * the timer DEFER_WAKEUP_GAP_NS later, so the CPU runs something else in
 * between. Each task is queued on its CPU directly, not through that
 * CPU's wake list, so that the next placement sees it in nr_running.
 *
 * Lock order: p->pi_lock -> defer_wakeup_cpu::lock -> hrtimer base lock.
 * A hurry places @p under p->pi_lock after dropping defer_wakeup_cpu::lock,
 * as a wake-up does, so it may run under whatever locks a
 * try_to_wake_up() may (futex hash bucket, rt_mutex wait_lock, ...).
 * A parked task is only ever placed by whoever took it off its list under
 * the list's lock (a drain, or __defer_wakeup_hurry(), which p->defer_wakeup_cpu
 * tells where to look); nothing else can wake it, as TASK_WAKING matches
 * no wake-up state.
 * p->defer_wakeup_node is on a list exactly while @p is parked: it is
 * added and removed under p->pi_lock (others may relink it meanwhile, but
 * never empty it), so defer_wakeup_parked() is stable under that lock.
 * Parking leaves task_cpu() alone, and that CPU may go offline: whatever
 * acts on a TASK_WAKING task through task_cpu() must test
 * defer_wakeup_parked() first, as affine_move_task() does.
 *
 * See Documentation/scheduler/sched-defer-wakeup.rst.
 */

#define DEFER_WAKEUP_BATCH	8
#define DEFER_WAKEUP_SCAN	64
#define DEFER_WAKEUP_GAP_NS	(20 * NSEC_PER_USEC)

struct defer_wakeup_stats {
	u64			nr_parked;
	u64			nr_placed[DEFER_PLACED_NR];
	u64			nr_direct;
	u64			wait_sum_ns;
	u64			wait_max_ns;
	u64			batch_max_ns;
};

struct defer_wakeup_cpu {
	raw_spinlock_t		lock;
	struct list_head	parked;
	/* Places what is parked here, in softirq context, on @cpu */
	struct hrtimer		timer;
	/* Arms @timer on @cpu for @arm_at, the earliest asked, from elsewhere */
	struct irq_work		arm;
	ktime_t			arm_at;
	bool			arm_pending;
	/* Tasks on @parked */
	unsigned int		nr;
	int			cpu;
	/* Under @lock */
	struct defer_wakeup_stats stats;
};

static DEFINE_PER_CPU_SHARED_ALIGNED(struct defer_wakeup_cpu, defer_wakeup_cpus);

#define DEFER_WAKEUP_MAX_US_DEFAULT	1000
static unsigned int sysctl_sched_defer_wakeup_max_us = DEFER_WAKEUP_MAX_US_DEFAULT;
static unsigned int defer_wakeup_max_us_min = 100;
static unsigned int defer_wakeup_max_us_max = 100000;

static bool defer_wakeup_class(struct task_struct *p)
{
	if (p->sched_class == &fair_sched_class)
		return true;
#ifdef CONFIG_SCHED_CLASS_GIDLE
	if (p->sched_class == &gidle_sched_class)
		return true;
#endif
	return false;
}

static u64 defer_wakeup_window_ns(void)
{
	return (u64)READ_ONCE(sysctl_sched_defer_wakeup_max_us) * NSEC_PER_USEC;
}

/* Start @dw's timer for @at, on this CPU, unless it fires earlier already */
static void defer_wakeup_arm_local(struct defer_wakeup_cpu *dw, ktime_t at)
{
	if (!hrtimer_is_queued(&dw->timer) ||
	    ktime_before(at, hrtimer_get_expires(&dw->timer)))
		hrtimer_start(&dw->timer, at, HRTIMER_MODE_ABS_PINNED_SOFT);
}

/*
 * Have @dw's timer fire @ns from now at the latest, on its own CPU. Under
 * dw->lock, which orders it with the irq_work below.
 */
static void defer_wakeup_arm(struct defer_wakeup_cpu *dw, u64 ns)
{
	ktime_t at = ktime_add_ns(ktime_get(), ns);

	lockdep_assert_held(&dw->lock);

	if (dw->cpu == smp_processor_id()) {
		defer_wakeup_arm_local(dw, at);
		return;
	}
	if (!dw->arm_pending || ktime_before(at, dw->arm_at))
		dw->arm_at = at;
	dw->arm_pending = true;
	/* Parks and placements need @dw->cpu active, so it is online */
	irq_work_queue_on(&dw->arm, dw->cpu);
}

static void defer_wakeup_arm_fn(struct irq_work *work)
{
	struct defer_wakeup_cpu *dw = container_of(work, struct defer_wakeup_cpu, arm);

	guard(raw_spinlock)(&dw->lock);
	if (dw->arm_pending && !list_empty(&dw->parked))
		defer_wakeup_arm_local(dw, dw->arm_at);
	dw->arm_pending = false;
}

/*
 * Could placing @p later do better than @cpu? Not if nothing will search:
 * @cpu is in no scheduling domain (isolated), or energy aware scheduling
 * is in charge (not overutilized) and its choice stands. Under p->pi_lock,
 * interrupts off: an RCU read side.
 */
static bool defer_wakeup_can_place(int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (!rcu_access_pointer(rq->sd))
		return false;
#ifdef CONFIG_ENERGY_MODEL
	if (sched_energy_enabled()) {
		struct root_domain *rd = READ_ONCE(rq->rd);

		/* EAS is in charge where the root domain has a perf domain */
		if (rcu_access_pointer(rd->pd) && !READ_ONCE(rd->overutilized))
			return false;
	}
#endif
	return true;
}

#ifdef CONFIG_RT_MUTEXES
static bool defer_wakeup_has_pi_waiters(struct task_struct *p)
{
	return !RB_EMPTY_ROOT(&p->pi_waiters.rb_root);
}

static bool defer_wakeup_pi_blocked(struct task_struct *p)
{
	return p->pi_blocked_on;
}
#else
static bool defer_wakeup_has_pi_waiters(struct task_struct *p)
{
	return false;
}

static bool defer_wakeup_pi_blocked(struct task_struct *p)
{
	return false;
}
#endif

/*
 * Must the wake-up of @p, with @wake_flags, not be deferred? Under
 * p->pi_lock, @p off its CPU. Not if:
 * - it may leave @p owning something that others wait for, since a parked
 *   owner makes every waiter convoy behind it: the lock code woke it with
 *   wake_up_q_handoff() or wake_up_process_handoff() (a lock handed over,
 *   a SysV semop() done for it, a ww_mutex owner wounded), it waits for an
 *   rt_mutex (a PI futex: FUTEX_UNLOCK_PI makes the woken waiter the owner
 *   before the wake-up), or it owns an rt_mutex that others wait for;
 * - its waker asked for it on the waker's CPU (WF_CURRENT_CPU);
 * - it waits for I/O (in_iowait; io_uring sets it for any request in
 *   flight) or in a memory stall: nr_iowait and PSI would stay charged to
 *   its old CPU while it is parked.
 */
static bool defer_wakeup_excluded(struct task_struct *p, int wake_flags)
{
	if ((wake_flags & (WF_HANDOFF | WF_CURRENT_CPU)) || p->in_iowait)
		return true;
	if (defer_wakeup_pi_blocked(p) || defer_wakeup_has_pi_waiters(p))
		return true;
#ifdef CONFIG_PSI
	if (p->in_memstall)
		return true;
#endif
	return false;
}

/*
 * Does something wait for @p to act on a fatal signal (the OOM killer for
 * its memory, an exit for its threads) or on the freezer (the PM freezer,
 * cgroup v1 and v2)? Then it must not wait for its placement. Read without
 * siglock, racing the sender's stores: the sender sets them before its
 * wake-up, whose try_to_wake_up() takes p->pi_lock after any park in
 * progress and reads them again (a stop signal or a ptrace trap is not
 * looked at: nothing in the kernel waits for it, and the window bounds it).
 */
static bool defer_wakeup_must_act(struct task_struct *p)
{
	/* Racy by design: see above */
	return data_race(__fatal_signal_pending(p) ||
			 (p->jobctl & JOBCTL_TRAP_FREEZE)) || freezing(p);
}

/*
 * A synchronous wake-up (the waker sleeps next) onto the waker's CPU, where
 * the waker runs alone: that CPU is as good as idle, as wake_affine_idle()
 * judges it, and the wakee runs there once the waker sleeps.
 */
static bool defer_wakeup_sync_idle(int cpu, int wake_flags)
{
	return (wake_flags & WF_SYNC) && cpu == smp_processor_id() &&
	       cpu_rq(cpu)->nr_running == 1;
}

/* As many as a CPU can place in one window, in batches: more are not parked */
static unsigned int defer_wakeup_max_parked(u64 window)
{
	return max_t(u64, DEFER_WAKEUP_BATCH,
		     div_u64(window, DEFER_WAKEUP_GAP_NS) * DEFER_WAKEUP_BATCH);
}

/*
 * Park @p, which try_to_wake_up() holds in TASK_WAKING and is about to
 * enqueue on @cpu, unless it should run at once: @cpu is idle (or about to
 * be, after a synchronous wake-up from its lone task), @p has no
 * other CPU to go to, its wake-up is excluded (above), nothing would place it
 * better, it has to act on a fatal signal or the freezer, or @cpu's list
 * is already behind (its oldest task waited longer than the window, or it
 * holds as many as one window can place). Returns true if @p was parked;
 * the wake-up is then complete for the waker.
 */
bool __defer_wakeup_park(struct task_struct *p, int cpu, int wake_flags)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
	u64 now, window = defer_wakeup_window_ns();
	struct task_struct *first;
	bool direct;

	lockdep_assert_held(&p->pi_lock);

	if (!defer_wakeup_class(p) || p->nr_cpus_allowed == 1 ||
	    is_migration_disabled(p) || defer_wakeup_excluded(p, wake_flags))
		return false;

	direct = available_idle_cpu(cpu) || defer_wakeup_sync_idle(cpu, wake_flags) ||
		 !defer_wakeup_can_place(cpu) || defer_wakeup_must_act(p);

	raw_spin_lock(&dw->lock);
	/* sched_cpu_deactivate() waited for us (RCU) if it saw @cpu active */
	if (unlikely(!cpu_active(cpu))) {
		raw_spin_unlock(&dw->lock);
		return false;
	}
	now = local_clock();
	first = list_first_entry_or_null(&dw->parked, struct task_struct, defer_wakeup_node);
	/* local_clock() of another CPU may be slightly ahead */
	if (first && (now > first->defer_wakeup_start + window ||
		      dw->nr >= defer_wakeup_max_parked(window)))
		direct = true;
	if (direct) {
		dw->stats.nr_direct++;
		raw_spin_unlock(&dw->lock);
		return false;
	}

	p->defer_wakeup_start = now;
	p->defer_wakeup_cpu = cpu;
	if (!first)
		defer_wakeup_arm(dw, window);
	list_add_tail(&p->defer_wakeup_node, &dw->parked);
	dw->nr++;
	dw->stats.nr_parked++;
	raw_spin_unlock(&dw->lock);

	return true;
}

/*
 * Parked @p can wait no longer: it left the deferrable classes (made
 * real-time or deadline by sched_setscheduler() or by priority
 * inheritance), lost its tag, owns an rt_mutex that others now wait for,
 * or waits for one (a requeue-PI proxy waiter), was sent a fatal signal or
 * frozen, or (@handoff) a lock was handed to it: what would have kept it
 * from being parked. Take it off
 * its list and place it here, at once, unless a drain has already taken
 * it (that drain places it within its batch, with preemption off); a
 * dying or freezing task as its wake-up would have been placed, at that
 * cost (a group exit hurries every parked thread under siglock). Under
 * p->pi_lock, interrupts off, no runqueue lock held.
 */
void __defer_wakeup_hurry(struct task_struct *p, bool handoff)
{
	struct defer_wakeup_cpu *dw;
	bool act;
	u64 now, wait;
	int cpu;

	lockdep_assert_held(&p->pi_lock);

	act = defer_wakeup_must_act(p);
	if (!handoff && !act && p->sched_defer_wakeup && defer_wakeup_class(p) &&
	    !defer_wakeup_has_pi_waiters(p) && !defer_wakeup_pi_blocked(p))
		return;
	/* Set under the lock of the list that holds @p; -1 once a drain took it */
	cpu = READ_ONCE(p->defer_wakeup_cpu);
	if (cpu < 0)
		return;
	dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
	scoped_guard (raw_spinlock, &dw->lock) {
		if (p->defer_wakeup_cpu != cpu)
			return;
		/* No longer parked (see defer_wakeup_parked()): under both locks */
		list_del_init(&p->defer_wakeup_node);
		p->defer_wakeup_cpu = -1;
		dw->nr--;
		dw->stats.nr_placed[DEFER_PLACED_HURRY]++;
		now = local_clock();
		/* local_clock() of another CPU may be slightly ahead */
		wait = now > p->defer_wakeup_start ? now - p->defer_wakeup_start : 0;
		dw->stats.wait_sum_ns += wait;
		dw->stats.wait_max_ns = max(dw->stats.wait_max_ns, wait);
		if (list_empty(&dw->parked))
			hrtimer_try_to_cancel(&dw->timer);
	}
	/* Dying or freezing: placed as a wake-up is, at a wake-up's cost */
	if (act)
		ttwu_place_parked_now(p);
	else
		ttwu_place_deferred(p, cpu, false);
}

/* For the rt_mutex code (sched/rt.h): under p->pi_lock, no runqueue lock */
void sched_defer_wakeup_hurry(struct task_struct *p)
{
	defer_wakeup_hurry(p);
}

/* Does @cpu hold parked wake-ups? A hint, read without the lock. */
bool defer_wakeup_pending(int cpu)
{
	return !list_empty_careful(&per_cpu_ptr(&defer_wakeup_cpus, cpu)->parked);
}

/* The tasks @p would share @cpu with */
static unsigned long defer_wakeup_nr(struct task_struct *p, struct rq *rq)
{
	unsigned long nr = READ_ONCE(rq->nr_running) + READ_ONCE(rq->ttwu_pending);

	/* A fair task takes a CPU from GIDLE tasks at once */
	if (p->sched_class == &fair_sched_class)
		nr -= min(nr, (unsigned long)gidle_nr_running(rq));
	return nr;
}

/*
 * Where should @p, parked on @cpu, go? This CPU if @here (it goes idle).
 * Otherwise @cpu if it is idle. Otherwise the scheduling domains of @cpu
 * are searched from the smallest up, each for the CPUs its child did not
 * cover: the first idle CPU @p may run on, or else the least loaded one
 * (tasks per unit of capacity) of the first domain that has one less
 * loaded than @cpu. So @p leaves the LLC (or node) that the class chose
 * only for a CPU less loaded than all of it. At most DEFER_WAKEUP_SCAN
 * loads are read, without locks. Returns -1 when the class must choose:
 * @p is no longer in a deferrable class, or nothing allowed was found.
 */
int defer_wakeup_select_cpu(struct task_struct *p, int cpu, bool here)
{
	unsigned long nr, cap, best_nr = 0, best_cap = 1;
	const struct cpumask *done = cpumask_of(cpu);
	int i, best = -1, scanned = 0;
	struct sched_domain *sd;

	lockdep_assert_held(&p->pi_lock);

	if (!defer_wakeup_class(p))
		return -1;
	i = smp_processor_id();
	if (here && cpumask_test_cpu(i, p->cpus_ptr) && cpu_active(i))
		return i;
	if (cpumask_test_cpu(cpu, p->cpus_ptr) && cpu_active(cpu)) {
		if (available_idle_cpu(cpu))
			return cpu;
		best = cpu;
		best_nr = defer_wakeup_nr(p, cpu_rq(cpu));
		best_cap = READ_ONCE(cpu_rq(cpu)->cpu_capacity) ?: 1;
	}

	guard(rcu)();
	/* for_each_domain(), with ->parent dereferenced as the __rcu it is */
	for (sd = rcu_dereference(cpu_rq(cpu)->sd); sd; sd = rcu_dereference(sd->parent)) {
		for_each_cpu_wrap(i, sched_domain_span(sd), cpu) {
			if (cpumask_test_cpu(i, done) || !cpumask_test_cpu(i, p->cpus_ptr) ||
			    !cpu_active(i))
				continue;
			if (available_idle_cpu(i))
				return i;
			nr = defer_wakeup_nr(p, cpu_rq(i));
			cap = READ_ONCE(cpu_rq(i)->cpu_capacity) ?: 1;
			/* (nr + 1) / cap < (best_nr + 1) / best_cap, @p counted */
			if (best < 0 || (nr + 1) * best_cap < (best_nr + 1) * cap) {
				best = i;
				best_nr = nr;
				best_cap = cap;
			}
			if (++scanned >= DEFER_WAKEUP_SCAN)
				return best;
		}
		if (best >= 0 && best != cpu)
			return best;
		done = sched_domain_span(sd);
	}
	return best;
}

/*
 * Place up to @budget wake-ups parked on @cpu (on this CPU if @here),
 * accounting them to @how; if some are left, have the timer place them
 * DEFER_WAKEUP_GAP_NS later. Returns true if some are left. Called from
 * the balance softirq, the newly idle balance (rq lock dropped, interrupts
 * off), the timer and CPU hotplug, with no scheduler lock held.
 */
static bool defer_wakeup_place(int cpu, enum defer_wakeup_placer how, unsigned int budget,
			       bool here)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
	u64 start, now, wait, sum = 0, max = 0, nr = 0;
	struct task_struct *p, *n;
	unsigned long flags;
	bool more;
	LIST_HEAD(list);

	if (!defer_wakeup_pending(cpu))
		return false;

	/*
	 * Taken tasks are placed by us alone (__defer_wakeup_hurry() leaves
	 * them): no preemption until they are, wherever this runs (hotplug,
	 * or softirqs in threads on PREEMPT_RT).
	 */
	guard(preempt)();
	start = local_clock();
	raw_spin_lock_irqsave(&dw->lock, flags);
	while (nr < budget && !list_empty(&dw->parked)) {
		p = list_first_entry(&dw->parked, struct task_struct, defer_wakeup_node);
		/* Taken: __defer_wakeup_hurry() leaves it to us */
		WRITE_ONCE(p->defer_wakeup_cpu, -1);
		list_move_tail(&p->defer_wakeup_node, &list);
		nr++;
	}
	dw->nr -= nr;
	more = !list_empty(&dw->parked);
	if (more)
		defer_wakeup_arm(dw, DEFER_WAKEUP_GAP_NS);
	else
		/* A later park re-arms it under the lock; it may be running: no wait */
		hrtimer_try_to_cancel(&dw->timer);
	raw_spin_unlock_irqrestore(&dw->lock, flags);
	if (!nr)
		return more;

	list_for_each_entry_safe(p, n, &list, defer_wakeup_node) {
		now = local_clock();
		/* local_clock() of another CPU may be slightly ahead */
		wait = now > p->defer_wakeup_start ? now - p->defer_wakeup_start : 0;
		sum += wait;
		max = max(max, wait);
		/* @n stays on @list until its turn */
		scoped_guard (raw_spinlock_irqsave, &p->pi_lock) {
			/* No longer parked: see defer_wakeup_parked() */
			list_del_init(&p->defer_wakeup_node);
			ttwu_place_deferred(p, cpu, here);
		}
	}
	now = local_clock();

	raw_spin_lock_irqsave(&dw->lock, flags);
	dw->stats.nr_placed[how] += nr;
	dw->stats.wait_sum_ns += sum;
	dw->stats.wait_max_ns = max(dw->stats.wait_max_ns, max);
	dw->stats.batch_max_ns = max(dw->stats.batch_max_ns, now - start);
	raw_spin_unlock_irqrestore(&dw->lock, flags);
	return more;
}

/*
 * A balance of @cpu: place a batch of what is parked there; the newly idle
 * balance of @cpu itself takes one task to run here, with no search.
 */
void defer_wakeup_drain(int cpu, enum defer_wakeup_placer how)
{
	if (how == DEFER_PLACED_NEWIDLE)
		defer_wakeup_place(cpu, how, 1, true);
	else
		defer_wakeup_place(cpu, how, DEFER_WAKEUP_BATCH, false);
}

static enum hrtimer_restart defer_wakeup_timer_fn(struct hrtimer *timer)
{
	struct defer_wakeup_cpu *dw = container_of(timer, struct defer_wakeup_cpu, timer);

	defer_wakeup_place(dw->cpu, DEFER_PLACED_TIMER, DEFER_WAKEUP_BATCH, false);
	return HRTIMER_NORESTART;
}

/* @cpu is no longer active: nothing parks there any more, place the rest */
static int defer_wakeup_cpu_down(unsigned int cpu)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);

	while (defer_wakeup_place(cpu, DEFER_PLACED_TIMER, DEFER_WAKEUP_BATCH, false))
		cond_resched();
	/* Parks need @cpu active: none can have come since */
	WARN_ON_ONCE(defer_wakeup_pending(cpu));
	hrtimer_cancel(&dw->timer);
	return 0;
}

static struct ctl_table sched_defer_wakeup_sysctls[] = {
	{
		.procname	= "sched_defer_wakeup_max_us",
		.data		= &sysctl_sched_defer_wakeup_max_us,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &defer_wakeup_max_us_min,
		.extra2		= &defer_wakeup_max_us_max,
	},
};

/*
 * From sched_init(), before the first schedule(): the balance paths look at
 * every CPU's list from then on (the newly idle balance runs before any
 * initcall, e.g. while rcu_init_tasks_generic() waits at boot).
 */
void __init defer_wakeup_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);

		raw_spin_lock_init(&dw->lock);
		dw->cpu = cpu;
		INIT_LIST_HEAD(&dw->parked);
		hrtimer_init(&dw->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_SOFT);
		dw->timer.function = defer_wakeup_timer_fn;
		dw->arm = IRQ_WORK_INIT_HARD(defer_wakeup_arm_fn);
	}
}

static int __init sched_defer_wakeup_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "sched/defer_wakeup:online",
					NULL, defer_wakeup_cpu_down);
	if (ret < 0)
		pr_warn("sched: deferred wakeup: no CPU hotplug callback (%d)\n", ret);

	register_sysctl_init("kernel", sched_defer_wakeup_sysctls);
	return 0;
}
early_initcall(sched_defer_wakeup_init);

#ifdef CONFIG_SCHED_DEBUG
static int sched_defer_wakeup_stats_show(struct seq_file *m, void *v)
{
	int cpu;

	seq_puts(m, "# cpu parked placed_balance placed_idle placed_timer direct wait_ns_sum wait_ns_max batch_ns_max placed_hurry\n");
	for_each_possible_cpu(cpu) {
		struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
		struct defer_wakeup_stats s;
		unsigned long flags;

		raw_spin_lock_irqsave(&dw->lock, flags);
		s = dw->stats;
		raw_spin_unlock_irqrestore(&dw->lock, flags);

		/* placed_hurry last: the columns before it keep their places */
		seq_printf(m, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", cpu,
			   s.nr_parked, s.nr_placed[DEFER_PLACED_BALANCE],
			   s.nr_placed[DEFER_PLACED_NEWIDLE],
			   s.nr_placed[DEFER_PLACED_TIMER], s.nr_direct,
			   s.wait_sum_ns, s.wait_max_ns, s.batch_max_ns,
			   s.nr_placed[DEFER_PLACED_HURRY]);
	}
	return 0;
}

static int sched_defer_wakeup_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, sched_defer_wakeup_stats_show, NULL);
}

const struct file_operations sched_defer_wakeup_stats_fops = {
	.open		= sched_defer_wakeup_stats_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};
#endif
