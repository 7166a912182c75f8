// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred wakeup: a task tagged with SCHED_FLAG_DEFER_WAKEUP that is woken
 * while the CPU chosen for it is busy is not enqueued there. It is parked,
 * in TASK_WAKING and on no runqueue, on that CPU's list, and placed onto
 * the least loaded CPU it may run on, nearest first in the scheduling
 * domains, by whichever comes first: the parking CPU's periodic or newly
 * idle balance, the nohz idle balance, or the CPU's placement timer, a soft
 * hrtimer armed one tick (at most sysctl_sched_defer_wakeup_max_us) after
 * its list became non-empty.
 *
 * Placement runs in batches of DEFER_WAKEUP_BATCH tasks: a batch is the
 * longest the placement keeps interrupts (newly idle balance) or preemption
 * (softirq) off. What a batch leaves is placed by the timer,
 * DEFER_WAKEUP_GAP_NS later, so the CPU runs something else in between.
 * Each task is queued on its CPU directly, not through that CPU's wake
 * list, so that the next placement sees it in nr_running.
 *
 * Lock order: p->pi_lock -> defer_wakeup_cpu::lock -> hrtimer base lock.
 * A parked task is only ever placed by the one drain that took it off its
 * list; nothing else can wake it, as TASK_WAKING matches no wake-up state.
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
	/* Places what is parked here, in softirq context */
	struct hrtimer		timer;
	int			cpu;
	/* Under @lock */
	struct defer_wakeup_stats stats;
};

static DEFINE_PER_CPU_SHARED_ALIGNED(struct defer_wakeup_cpu, defer_wakeup_cpus);

#define DEFER_WAKEUP_MAX_US_DEFAULT	5000
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

/*
 * Park @p, which try_to_wake_up() holds in TASK_WAKING and is about to
 * enqueue on @cpu, unless it should run at once: @cpu is idle, @p has no
 * other CPU to go to, or it has to act on a fatal signal or the freezer.
 * Returns true if @p was parked; the wake-up is then complete for the waker.
 */
bool __defer_wakeup_park(struct task_struct *p, int cpu)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
	bool direct;

	lockdep_assert_held(&p->pi_lock);

	if (!defer_wakeup_class(p) || p->nr_cpus_allowed == 1 ||
	    is_migration_disabled(p))
		return false;

	direct = available_idle_cpu(cpu) || __fatal_signal_pending(p) ||
		 freezing(p);

	raw_spin_lock(&dw->lock);
	/* sched_cpu_deactivate() waited for us (RCU) if it saw @cpu active */
	if (unlikely(!cpu_active(cpu))) {
		raw_spin_unlock(&dw->lock);
		return false;
	}
	if (direct) {
		dw->stats.nr_direct++;
		raw_spin_unlock(&dw->lock);
		return false;
	}

	p->defer_wakeup_start = local_clock();
	if (list_empty(&dw->parked)) {
		u64 wait = READ_ONCE(sysctl_sched_defer_wakeup_max_us) * NSEC_PER_USEC;

		/* Placed within a tick, as by the tick's balance, or the bound */
		hrtimer_start(&dw->timer, ns_to_ktime(min_t(u64, wait, TICK_NSEC)),
			      HRTIMER_MODE_REL_PINNED_SOFT);
	}
	list_add_tail(&p->defer_wakeup_node, &dw->parked);
	dw->stats.nr_parked++;
	raw_spin_unlock(&dw->lock);

	return true;
}

/* Does @cpu hold parked wake-ups? A hint, read without the lock. */
bool defer_wakeup_pending(int cpu)
{
	return !list_empty_careful(&per_cpu_ptr(&defer_wakeup_cpus, cpu)->parked);
}

/*
 * The tasks @p would share @cpu with, counting itself, per unit of @cpu's
 * capacity: comparable across CPUs of different capacity.
 */
static unsigned long defer_wakeup_load(struct task_struct *p, int cpu)
{
	struct rq *rq = cpu_rq(cpu);
	unsigned long nr = READ_ONCE(rq->nr_running) + READ_ONCE(rq->ttwu_pending);

	/* A fair task takes a CPU from GIDLE tasks at once */
	if (p->sched_class == &fair_sched_class)
		nr -= min(nr, (unsigned long)gidle_nr_running(rq));
	return (nr + 1) * SCHED_CAPACITY_SCALE / max(READ_ONCE(rq->cpu_capacity), 1UL);
}

/*
 * Where should the parked @p go, given that the class's wake-up selection
 * chose @cpu? There if it is idle. Otherwise the scheduling domains of
 * @cpu are searched from the smallest up, each for the CPUs its child did
 * not cover: the first idle CPU @p may run on, or else the least loaded
 * one of the first domain that has one less loaded than @cpu. So @p
 * leaves the LLC (or node) the class chose only for a CPU less loaded than
 * all of it. With energy aware scheduling in charge (not overutilized),
 * its choice stands.
 * O(CPUs in the domains of @cpu) loads read without locks.
 */
int defer_wakeup_select_cpu(struct task_struct *p, int cpu)
{
	const struct cpumask *done = cpumask_of(cpu);
	unsigned long load, min_load;
	struct sched_domain *sd;
	int i, best = cpu;

	lockdep_assert_held(&p->pi_lock);

	if (available_idle_cpu(cpu))
		return cpu;
	if (sched_energy_enabled() && !READ_ONCE(cpu_rq(cpu)->rd->overutilized))
		return cpu;

	min_load = defer_wakeup_load(p, cpu);
	guard(rcu)();
	/* for_each_domain(), with ->parent dereferenced as the __rcu it is */
	for (sd = rcu_dereference(cpu_rq(cpu)->sd); sd; sd = rcu_dereference(sd->parent)) {
		for_each_cpu_wrap(i, sched_domain_span(sd), cpu) {
			if (cpumask_test_cpu(i, done) || !cpumask_test_cpu(i, p->cpus_ptr) ||
			    !cpu_active(i))
				continue;
			if (available_idle_cpu(i))
				return i;
			load = defer_wakeup_load(p, i);
			if (load < min_load) {
				min_load = load;
				best = i;
			}
		}
		if (best != cpu)
			return best;
		done = sched_domain_span(sd);
	}
	return best;
}

/*
 * Place up to @budget wake-ups parked on @cpu, accounting them to @how;
 * if some are left, have the timer place them DEFER_WAKEUP_GAP_NS later.
 * Returns true if some are left. Called from the balance softirq, the
 * newly idle balance (rq lock dropped, interrupts off), the timer and CPU
 * hotplug, with no scheduler lock held.
 */
static bool defer_wakeup_place(int cpu, enum defer_wakeup_placer how, unsigned int budget)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
	u64 start, now, wait, sum = 0, max = 0, nr = 0;
	struct task_struct *p, *n;
	unsigned long flags;
	bool more;
	LIST_HEAD(list);

	if (!defer_wakeup_pending(cpu))
		return false;

	start = local_clock();
	raw_spin_lock_irqsave(&dw->lock, flags);
	while (nr < budget && !list_empty(&dw->parked)) {
		list_move_tail(dw->parked.next, &list);
		nr++;
	}
	more = !list_empty(&dw->parked);
	if (more)
		hrtimer_start(&dw->timer, ns_to_ktime(DEFER_WAKEUP_GAP_NS),
			      HRTIMER_MODE_REL_PINNED_SOFT);
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
		/* Unlinks @p under p->pi_lock; @n stays on @list until its turn */
		ttwu_place_deferred(p);
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

/* A balance of @cpu: place a batch of what is parked there */
void defer_wakeup_drain(int cpu, enum defer_wakeup_placer how)
{
	defer_wakeup_place(cpu, how, DEFER_WAKEUP_BATCH);
}

static enum hrtimer_restart defer_wakeup_timer_fn(struct hrtimer *timer)
{
	struct defer_wakeup_cpu *dw = container_of(timer, struct defer_wakeup_cpu, timer);

	/* The timer may have moved to another CPU: place @dw's own list */
	defer_wakeup_place(dw->cpu, DEFER_PLACED_TIMER, DEFER_WAKEUP_BATCH);
	return HRTIMER_NORESTART;
}

/* @cpu is no longer active: nothing parks there any more, place the rest */
static int defer_wakeup_cpu_down(unsigned int cpu)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);

	while (defer_wakeup_place(cpu, DEFER_PLACED_TIMER, DEFER_WAKEUP_BATCH))
		cond_resched();
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

	seq_puts(m, "# cpu parked placed_balance placed_idle placed_timer direct wait_ns_sum wait_ns_max batch_ns_max\n");
	for_each_possible_cpu(cpu) {
		struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
		struct defer_wakeup_stats s;
		unsigned long flags;

		raw_spin_lock_irqsave(&dw->lock, flags);
		s = dw->stats;
		raw_spin_unlock_irqrestore(&dw->lock, flags);

		seq_printf(m, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu\n", cpu,
			   s.nr_parked, s.nr_placed[DEFER_PLACED_BALANCE],
			   s.nr_placed[DEFER_PLACED_NEWIDLE],
			   s.nr_placed[DEFER_PLACED_TIMER], s.nr_direct,
			   s.wait_sum_ns, s.wait_max_ns, s.batch_max_ns);
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
