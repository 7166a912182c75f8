// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred wakeup: a task tagged with SCHED_FLAG_DEFER_WAKEUP that is woken
 * while the CPU chosen for it is busy is not enqueued there. It is parked,
 * in TASK_WAKING and on no runqueue, on that CPU's list, and placed by the
 * next load balance (the periodic balance softirq, the nohz idle balance or
 * the newly idle balance of the parking CPU) onto the least loaded CPU it
 * may run on. An hrtimer bounds the wait by sysctl_sched_defer_wakeup_max_us.
 *
 * Lock order: p->pi_lock -> defer_wakeup_cpu::lock -> hrtimer base lock.
 * A parked task is only ever placed by the one drain that took its list;
 * nothing else can wake it, as TASK_WAKING matches no wake-up state.
 * p->defer_wakeup_node is on a list exactly while @p is parked: it is
 * added and removed under p->pi_lock (others may relink it meanwhile, but
 * never empty it), so defer_wakeup_parked() is stable under that lock.
 * Parking leaves task_cpu() alone, and that CPU may go offline: whatever
 * acts on a TASK_WAKING task through task_cpu() must test
 * defer_wakeup_parked() first, as affine_move_task() does.
 *
 * See Documentation/scheduler/sched-defer-wakeup.rst.
 */

struct defer_wakeup_stats {
	u64			nr_parked;
	u64			nr_placed[DEFER_PLACED_NR];
	u64			nr_direct;
	u64			wait_sum_ns;
	u64			wait_max_ns;
};

struct defer_wakeup_cpu {
	raw_spinlock_t		lock;
	struct list_head	parked;
	/* Places what is parked here when the bound expires */
	struct hrtimer		bound;
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
		u64 bound = READ_ONCE(sysctl_sched_defer_wakeup_max_us) * NSEC_PER_USEC;

		hrtimer_start(&dw->bound, ns_to_ktime(bound), HRTIMER_MODE_REL_PINNED_HARD);
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

/* Runnable tasks on @cpu that @p would compete with */
static unsigned int defer_wakeup_load(struct task_struct *p, int cpu)
{
	struct rq *rq = cpu_rq(cpu);
	unsigned int load = READ_ONCE(rq->nr_running) + READ_ONCE(rq->ttwu_pending);

	/* A fair task takes a CPU from GIDLE tasks at once */
	if (p->sched_class == &fair_sched_class)
		load -= min(load, gidle_nr_running(rq));
	return load;
}

/*
 * Where should the parked @p go, given that the normal wake-up selection
 * chose @cpu? There if it is idle; otherwise on an idle CPU @p may run on,
 * or on the one with the fewest runnable tasks, @cpu on a tie.
 */
int defer_wakeup_select_cpu(struct task_struct *p, int cpu)
{
	unsigned int load, min_load;
	int i, best = cpu;

	lockdep_assert_held(&p->pi_lock);

	if (available_idle_cpu(cpu))
		return cpu;

	min_load = defer_wakeup_load(p, cpu);
	for_each_cpu_and(i, p->cpus_ptr, cpu_active_mask) {
		if (available_idle_cpu(i))
			return i;
		load = defer_wakeup_load(p, i);
		if (load < min_load) {
			min_load = load;
			best = i;
		}
	}
	return best;
}

/*
 * Place every wake-up parked on @cpu, accounting them to @how. Called from
 * the balance softirq, the newly idle balance (rq lock dropped), the bound
 * hrtimer and CPU hotplug, with no scheduler lock held.
 */
void defer_wakeup_drain(int cpu, enum defer_wakeup_placer how)
{
	struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
	u64 now, wait, sum = 0, max = 0, nr = 0;
	struct task_struct *p, *n;
	unsigned long flags;
	LIST_HEAD(list);

	if (!defer_wakeup_pending(cpu))
		return;

	raw_spin_lock_irqsave(&dw->lock, flags);
	list_splice_init(&dw->parked, &list);
	/* A later park re-arms it under the lock; it may be running: no wait */
	hrtimer_try_to_cancel(&dw->bound);
	raw_spin_unlock_irqrestore(&dw->lock, flags);

	now = local_clock();
	list_for_each_entry_safe(p, n, &list, defer_wakeup_node) {
		/* local_clock() of another CPU may be slightly ahead */
		wait = now > p->defer_wakeup_start ? now - p->defer_wakeup_start : 0;
		sum += wait;
		max = max(max, wait);
		nr++;
		/* Unlinks @p under p->pi_lock; @n stays parked until its turn */
		ttwu_place_deferred(p);
	}

	if (!nr)
		return;
	raw_spin_lock_irqsave(&dw->lock, flags);
	dw->stats.nr_placed[how] += nr;
	dw->stats.wait_sum_ns += sum;
	dw->stats.wait_max_ns = max(dw->stats.wait_max_ns, max);
	raw_spin_unlock_irqrestore(&dw->lock, flags);
}

static enum hrtimer_restart defer_wakeup_bound_expired(struct hrtimer *timer)
{
	struct defer_wakeup_cpu *dw = container_of(timer, struct defer_wakeup_cpu, bound);

	/* The timer may have moved to another CPU: place @dw's own list */
	defer_wakeup_drain(dw->cpu, DEFER_PLACED_FORCED);
	return HRTIMER_NORESTART;
}

/* @cpu is no longer active: nothing parks there any more, place the rest */
static int defer_wakeup_cpu_down(unsigned int cpu)
{
	defer_wakeup_drain(cpu, DEFER_PLACED_FORCED);
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
		hrtimer_init(&dw->bound, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		dw->bound.function = defer_wakeup_bound_expired;
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

	seq_puts(m, "# cpu parked placed_balance placed_idle placed_forced direct wait_ns_sum wait_ns_max\n");
	for_each_possible_cpu(cpu) {
		struct defer_wakeup_cpu *dw = per_cpu_ptr(&defer_wakeup_cpus, cpu);
		struct defer_wakeup_stats s;
		unsigned long flags;

		raw_spin_lock_irqsave(&dw->lock, flags);
		s = dw->stats;
		raw_spin_unlock_irqrestore(&dw->lock, flags);

		seq_printf(m, "cpu%d %llu %llu %llu %llu %llu %llu %llu\n", cpu,
			   s.nr_parked, s.nr_placed[DEFER_PLACED_BALANCE],
			   s.nr_placed[DEFER_PLACED_NEWIDLE],
			   s.nr_placed[DEFER_PLACED_FORCED], s.nr_direct,
			   s.wait_sum_ns, s.wait_max_ns);
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
