// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred wakeup (SCHED_FLAG_DEFER_WAKEUP) against the mainline wakeup
 * path, side by side on one kernel:
 *
 *  A. skewed RPC: one dispatcher pinned to the first CPU (an RSS queue)
 *     wakes K workers per request through their futexes and keeps D
 *     requests in flight; each worker runs a fixed CPU work unit;
 *  B. uniform: one dispatcher pinned to each CPU, each waking K / ncpu of
 *     its own W / ncpu workers per request; balanced, for regressions.
 *
 * Each scenario runs with untagged workers (mainline wakeup) and workers
 * tagged with SCHED_FLAG_DEFER_WAKEUP, REPS times each, alternating with
 * the order flipped every rep (U T, T U, U T, ...). Reported per
 * configuration (medians over reps; the latency max is the worst rep):
 * requests/s, per-CPU utilization from /proc/stat, worker migrations
 * (se.nr_migrations), wakeup-to-run latency and the deltas of
 * /sys/kernel/debug/sched/defer_wakeup; then the tagged/untagged ratios
 * and the targets of bench/defer/README.
 *
 * Environment: SECS (5) measured seconds per run, REPS (3), W (4 * ncpu)
 * workers, K (ncpu) workers woken per request, D (2) requests in flight
 * per dispatcher, WORK_US (200) CPU per wakeup, WARMUP_MS (300) before
 * each measurement, SCEN ("AB"), DEFER_ALLOW_UNTAGGED=1 (run "tagged"
 * workers untagged where the kernel lacks the flag: smoke tests only).
 */
#define _GNU_SOURCE
#include "fleet_test.h"

#include <ctype.h>
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEFER_STATS	"/sys/kernel/debug/sched/defer_wakeup"
#define DEFER_SYSCTL	"/proc/sys/kernel/sched_defer_wakeup_max_us"
#define MAX_CPUS	1024
#define MAX_REPS	16
#define MAX_DEPTH	64
#define DRAIN_SECS	30
#define NSEC		1000000000ULL

#ifndef __aligned
#define __aligned(x)	__attribute__((aligned(x)))
#endif

/* Worker futex word */
enum { IDLE, POSTED, EXIT };

struct disp;

struct worker {
	_Atomic uint32_t word;		/* futex: IDLE, POSTED or EXIT */
	int slot;			/* request slot of the current post */
	uint64_t wake_ns;		/* CLOCK_MONOTONIC just before FUTEX_WAKE */
	struct disp *d;
	pid_t tid;
	int tag_err;
	float *lat;			/* wakeup-to-run samples (us) */
	unsigned long nlat, dropped;
	double maxlat;
	pthread_t th;
} __aligned(64);

struct slot {
	_Atomic uint32_t done;		/* workers of this request done */
	int busy;
} __aligned(64);

struct disp {
	_Atomic uint32_t completions;	/* futex: bumped per completed request */
	_Atomic unsigned long completed;
	int cpu, k, nw, next, stuck;
	struct worker *w;
	struct slot *slot;
	pthread_t th;
} __aligned(64);

struct dwstat {
	int ok;
	unsigned long long parked, pbal, pidle, ptimer, direct, wsum;
	unsigned long long wmax[MAX_CPUS], bmax[MAX_CPUS];
};

struct result {
	double rps, umean, umax, umin, usd;
	double migr;			/* < 0: n/a */
	double p50, p99, pmax;
	double nsamples, dropped;
	int dw_ok;
	double parked, pbal, pidle, ptimer, direct;
	double wmean_us;		/* < 0: nothing placed */
	double bmax_us;			/* longest placement batch; < 0: none new */
	double wmax_us;			/* < 0: no new per-CPU max this run */
	double wmax_boot_us;
};

static int secs, reps, nworkers, kwake, depth, work_us, warmup_ms;
static int ncpu, cpus[MAX_CPUS], tag_ok, tag_mode, cap_lat;
static cpu_set_t allowed;
static uint64_t work_iters;
static atomic_int stop, measuring, nready;
static volatile uint64_t sink;
static struct worker *workers;

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)uaddr, op, val, ts, NULL, 0);
}

static int tag_self(void)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_OTHER,
		.sched_flags = SCHED_FLAG_DEFER_WAKEUP |
			       SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_KEEP_PARAMS,
	};

	return fleet_sched_setattr(0, &attr);
}

static void *probe_fn(void *arg)
{
	*(int *)arg = tag_self();
	return NULL;
}

/* The work unit: a dependent xorshift chain the compiler cannot shorten. */
static uint64_t spin(uint64_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

/* Iterations per @us of this thread's CPU time: the best of 5 runs. */
static uint64_t calibrate(int us)
{
	uint64_t n = 1000, t0, dt;
	double best = 0;
	int i;

	for (;;) {
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		sink = spin(n);
		dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (dt >= 20000000 || n >= (1ULL << 40))
			break;
		n *= 2;
	}
	for (i = 0; i < 5; i++) {
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		sink = spin(n);
		dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (dt && (double)n / dt > best)
			best = (double)n / dt;
	}
	n = best * us * 1000;
	return n ? n : 1;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct disp *d = w->d;

	w->tid = syscall(SYS_gettid);
	if (tag_mode && tag_ok)
		w->tag_err = tag_self();
	atomic_fetch_add(&nready, 1);
	for (;;) {
		uint32_t v;
		uint64_t t;
		int slot;

		while ((v = atomic_load_explicit(&w->word, memory_order_acquire)) == IDLE)
			futex(&w->word, FUTEX_WAIT_PRIVATE, IDLE, NULL);
		if (v == EXIT)
			break;
		t = now_ns();
		if (atomic_load_explicit(&measuring, memory_order_relaxed)) {
			double us = (int64_t)(t - w->wake_ns) / 1e3;

			if (w->nlat < (unsigned long)cap_lat)
				w->lat[w->nlat++] = us;
			else
				w->dropped++;
			if (us > w->maxlat)
				w->maxlat = us;
		}
		sink = spin(work_iters);
		slot = w->slot;
		atomic_store_explicit(&w->word, IDLE, memory_order_release);
		if (atomic_fetch_add(&d->slot[slot].done, 1) + 1 == (uint32_t)d->k) {
			atomic_fetch_add(&d->completions, 1);
			futex(&d->completions, FUTEX_WAKE_PRIVATE, 1, NULL);
		}
	}
	return NULL;
}

/*
 * Wake d->k idle workers, round robin, for request slot @s. At most
 * (depth - 1) * k workers are busy when a slot is free and nw >= depth * k,
 * so there are always k idle ones.
 */
static void post(struct disp *d, int s)
{
	int n = 0;

	atomic_store(&d->slot[s].done, 0);
	d->slot[s].busy = 1;
	while (n < d->k) {
		struct worker *w = &d->w[d->next];

		d->next = (d->next + 1) % d->nw;
		if (atomic_load_explicit(&w->word, memory_order_acquire) != IDLE)
			continue;
		w->slot = s;
		w->wake_ns = now_ns();
		atomic_store_explicit(&w->word, POSTED, memory_order_release);
		futex(&w->word, FUTEX_WAKE_PRIVATE, 1, NULL);
		n++;
	}
}

static void *disp_fn(void *arg)
{
	const struct timespec tmo = { 0, 100000000 };
	struct disp *d = arg;
	uint64_t deadline;
	uint32_t c;
	int s;

	while (!atomic_load(&stop)) {
		int posted = 0;

		c = atomic_load(&d->completions);
		for (s = 0; s < depth; s++) {
			if (d->slot[s].busy) {
				if (atomic_load(&d->slot[s].done) != (uint32_t)d->k)
					continue;
				atomic_fetch_add(&d->completed, 1);
				d->slot[s].busy = 0;
			}
			if (atomic_load(&stop))
				continue;
			post(d, s);
			posted = 1;
		}
		if (!posted)
			futex(&d->completions, FUTEX_WAIT_PRIVATE, c, &tmo);
	}
	/* Drain: a request never completing is a lost wakeup. */
	deadline = now_ns() + DRAIN_SECS * NSEC;
	for (s = 0; s < depth; s++) {
		while (d->slot[s].busy) {
			c = atomic_load(&d->completions);
			if (atomic_load(&d->slot[s].done) == (uint32_t)d->k)
				break;
			if (now_ns() > deadline) {
				d->stuck = 1;
				return NULL;
			}
			futex(&d->completions, FUTEX_WAIT_PRIVATE, c, &tmo);
		}
	}
	return NULL;
}

/* Busy and total jiffies per CPU id; busy = user+nice+system+irq+softirq+steal. */
static int read_stat(unsigned long long *busy, unsigned long long *total)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = { 0 };
		int cpu;

		if (strncmp(line, "cpu", 3) || !isdigit((unsigned char)line[3]))
			continue;
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 5 ||
		    cpu < 0 || cpu >= MAX_CPUS)
			continue;
		busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
		total[cpu] = busy[cpu] + v[3] + v[4];
	}
	fclose(f);
	return 0;
}

/* se.nr_migrations of one thread (CONFIG_SCHED_DEBUG); -1 if missing. */
static long long nr_migrations(pid_t tid)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/sched", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "se.nr_migrations", 16) && c) {
			v = strtoll(c + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static long long sum_migrations(struct worker *w, int n)
{
	long long sum = 0, v;
	int i;

	for (i = 0; i < n; i++) {
		v = nr_migrations(w[i].tid);
		if (v < 0)
			return -1;
		sum += v;
	}
	return sum;
}

/*
 * '#' header, then `cpuN parked placed_balance placed_idle placed_timer
 * direct wait_ns_sum wait_ns_max batch_ns_max`
 */
static void read_dw(struct dwstat *s)
{
	FILE *f = fopen(DEFER_STATS, "r");
	char line[512];

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = { 0 };
		int cpu;

		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 8 ||
		    cpu < 0 || cpu >= MAX_CPUS)
			continue;
		s->ok = 1;
		s->parked += v[0];
		s->pbal += v[1];
		s->pidle += v[2];
		s->ptimer += v[3];
		s->direct += v[4];
		s->wsum += v[5];
		s->wmax[cpu] = v[6];
		s->bmax[cpu] = v[7];
	}
	fclose(f);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / NSEC, ns % NSEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "defer_bench: %s: %s\n", what, strerror(err));
	exit(2);
}

static void start_thread(pthread_t *th, void *(*fn)(void *), void *arg,
			 const cpu_set_t *set)
{
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_attr_setaffinity_np(&attr, sizeof(*set), set);
	err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err)
		fail("pthread_create", err);
}

/* One measured run of scenario @scen ('A' or 'B'), tagged or not. */
static void run(char scen, int tagged, struct result *r)
{
	static unsigned long long b0[MAX_CPUS], t0[MAX_CPUS], b1[MAX_CPUS], t1[MAX_CPUS];
	static struct dwstat dw0, dw1;
	int nd = scen == 'A' ? 1 : ncpu, i, j, nw, used;
	unsigned long c0 = 0, c1 = 0, n = 0;
	long long m0 = -1, m1 = -1;
	uint64_t ts0, ts1;
	struct disp *d;
	float *all;
	double sum = 0, sq = 0;

	d = aligned_alloc(64, nd * sizeof(*d));
	if (!d)
		fail("aligned_alloc", ENOMEM);
	memset(d, 0, nd * sizeof(*d));
	nw = scen == 'A' ? nworkers : nworkers / ncpu;
	used = nd * nw;
	for (i = 0; i < nd; i++) {
		d[i].cpu = cpus[i];
		d[i].k = scen == 'A' ? kwake : (kwake / ncpu > 0 ? kwake / ncpu : 1);
		d[i].nw = nw;
		d[i].w = &workers[i * nw];
		d[i].slot = aligned_alloc(64, depth * sizeof(struct slot));
		if (!d[i].slot)
			fail("aligned_alloc", ENOMEM);
		memset(d[i].slot, 0, depth * sizeof(struct slot));
	}
	for (i = 0; i < used; i++) {
		struct worker *w = &workers[i];

		atomic_store(&w->word, IDLE);
		w->d = &d[i / nw];
		w->nlat = w->dropped = 0;
		w->maxlat = 0;
		w->tag_err = 0;
	}
	tag_mode = tagged;
	atomic_store(&stop, 0);
	atomic_store(&measuring, 0);
	atomic_store(&nready, 0);
	for (i = 0; i < used; i++)
		start_thread(&workers[i].th, worker_fn, &workers[i], &allowed);
	while (atomic_load(&nready) < used)
		usleep(1000);
	for (i = 0; i < used; i++)
		if (workers[i].tag_err)
			fail("tagging a worker (sched_setattr SCHED_FLAG_DEFER_WAKEUP)",
			     -workers[i].tag_err);
	for (i = 0; i < nd; i++) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(d[i].cpu, &one);
		start_thread(&d[i].th, disp_fn, &d[i], &one);
	}

	sleep_ns(warmup_ms * 1000000ULL);
	read_stat(b0, t0);
	m0 = sum_migrations(workers, used);
	read_dw(&dw0);
	for (i = 0; i < nd; i++)
		c0 += atomic_load(&d[i].completed);
	ts0 = now_ns();
	atomic_store(&measuring, 1);

	sleep_ns(secs * NSEC);

	atomic_store(&measuring, 0);
	ts1 = now_ns();
	for (i = 0; i < nd; i++)
		c1 += atomic_load(&d[i].completed);
	read_dw(&dw1);
	m1 = sum_migrations(workers, used);
	read_stat(b1, t1);

	atomic_store(&stop, 1);
	for (i = 0; i < nd; i++) {
		atomic_fetch_add(&d[i].completions, 1);
		futex(&d[i].completions, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	for (i = 0; i < nd; i++) {
		pthread_join(d[i].th, NULL);
		if (d[i].stuck) {
			fprintf(stderr, "defer_bench: scenario %c %s: a request was not complete %d s after the run: a lost wakeup?\n",
				scen, tagged ? "tagged" : "untagged", DRAIN_SECS);
			exit(2);
		}
	}
	for (i = 0; i < used; i++) {
		atomic_store(&workers[i].word, EXIT);
		futex(&workers[i].word, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	for (i = 0; i < used; i++)
		pthread_join(workers[i].th, NULL);

	memset(r, 0, sizeof(*r));
	r->rps = (c1 - c0) / ((ts1 - ts0) / 1e9);

	/* Utilization over every CPU we may run on, the dispatcher's included. */
	r->umin = 1;
	for (i = 0; i < ncpu; i++) {
		int c = cpus[i];
		double u = t1[c] > t0[c] ? (double)(b1[c] - b0[c]) / (t1[c] - t0[c]) : 0;

		sum += u;
		sq += u * u;
		if (u > r->umax)
			r->umax = u;
		if (u < r->umin)
			r->umin = u;
	}
	r->umean = sum / ncpu;
	r->usd = sqrt(fmax(0, sq / ncpu - r->umean * r->umean));
	r->migr = m0 >= 0 && m1 >= 0 ? m1 - m0 : -1;

	for (i = 0; i < used; i++) {
		n += workers[i].nlat;
		r->dropped += workers[i].dropped;
		if (workers[i].maxlat > r->pmax)
			r->pmax = workers[i].maxlat;
	}
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		fail("malloc", ENOMEM);
	for (i = 0, n = 0; i < used; i++) {
		memcpy(all + n, workers[i].lat, workers[i].nlat * sizeof(*all));
		n += workers[i].nlat;
	}
	qsort(all, n, sizeof(*all), cmp_float);
	r->nsamples = n;
	r->p50 = n ? all[n / 2] : 0;
	r->p99 = n ? all[(n * 99 + 99) / 100 - 1] : 0;
	free(all);

	r->dw_ok = dw0.ok && dw1.ok;
	if (r->dw_ok) {
		unsigned long long placed;

		r->parked = dw1.parked - dw0.parked;
		r->pbal = dw1.pbal - dw0.pbal;
		r->pidle = dw1.pidle - dw0.pidle;
		r->ptimer = dw1.ptimer - dw0.ptimer;
		r->direct = dw1.direct - dw0.direct;
		placed = r->pbal + r->pidle + r->ptimer;
		r->wmean_us = placed ? (dw1.wsum - dw0.wsum) / 1e3 / placed : -1;
		r->wmax_us = -1;
		r->bmax_us = -1;
		for (j = 0; j < MAX_CPUS; j++) {
			if (dw1.bmax[j] > dw0.bmax[j] && dw1.bmax[j] / 1e3 > r->bmax_us)
				r->bmax_us = dw1.bmax[j] / 1e3;
			if (dw1.wmax[j] > dw0.wmax[j] && dw1.wmax[j] / 1e3 > r->wmax_us)
				r->wmax_us = dw1.wmax[j] / 1e3;
			if (dw1.wmax[j] / 1e3 > r->wmax_boot_us)
				r->wmax_boot_us = dw1.wmax[j] / 1e3;
		}
	}

	for (i = 0; i < nd; i++)
		free(d[i].slot);
	free(d);
}

static const char *mode_name(int tagged)
{
	if (!tagged)
		return "untagged";
	return tag_ok ? "tagged" : "tagged*";
}

static void print_run(char scen, int tagged, int rep, const struct result *r)
{
	printf("   %c %-8s rep %d: %9.1f req/s  util %.1f..%.1f%%  p50 %8.1f p99 %8.1f max %9.1f us  migr ",
	       scen, mode_name(tagged), rep + 1, r->rps, 100 * r->umin, 100 * r->umax,
	       r->p50, r->p99, r->pmax);
	if (r->migr >= 0)
		printf("%.0f", r->migr);
	else
		printf("n/a");
	printf("  (%.0f samples", r->nsamples);
	if (r->dropped)
		printf(", %.0f dropped", r->dropped);
	printf(")\n");
	fflush(stdout);
}

/* Medians over reps; the latency max and the wait max are the worst rep's. */
static void summarize(struct result *v, int n, struct result *m)
{
	double x[MAX_REPS];
	int i;

#define MED(f) do {						\
		for (i = 0; i < n; i++)				\
			x[i] = v[i].f;				\
		m->f = fleet_median(x, n);			\
	} while (0)
	memset(m, 0, sizeof(*m));
	MED(rps);
	MED(umean);
	MED(umax);
	MED(umin);
	MED(usd);
	MED(p50);
	MED(p99);
	MED(nsamples);
	MED(parked);
	MED(pbal);
	MED(pidle);
	MED(ptimer);
	MED(direct);
	MED(wmean_us);
#undef MED
	m->migr = 0;
	m->dw_ok = 1;
	m->wmax_us = -1;
	m->bmax_us = -1;
	for (i = 0; i < n; i++) {
		if (v[i].bmax_us > m->bmax_us)
			m->bmax_us = v[i].bmax_us;
		x[i] = v[i].migr;
		if (v[i].migr < 0)
			m->migr = -1;
		if (!v[i].dw_ok)
			m->dw_ok = 0;
		if (v[i].pmax > m->pmax)
			m->pmax = v[i].pmax;
		if (v[i].wmax_us > m->wmax_us)
			m->wmax_us = v[i].wmax_us;
		if (v[i].wmax_boot_us > m->wmax_boot_us)
			m->wmax_boot_us = v[i].wmax_boot_us;
		m->dropped += v[i].dropped;
	}
	if (m->migr >= 0)
		m->migr = fleet_median(x, n);
}

static void print_row(const char *scen, int tagged, const struct result *m)
{
	printf("%-11s %-9s %9.1f   %5.1f %5.1f %5.1f %6.1f %5.1f ",
	       scen, mode_name(tagged), m->rps, 100 * m->umean, 100 * m->umax,
	       100 * m->umin, 100 * (m->umax - m->umin), 100 * m->usd);
	if (m->migr >= 0)
		printf("%10.0f", m->migr);
	else
		printf("%10s", "n/a");
	printf("   %8.1f %8.1f %9.1f\n", m->p50, m->p99, m->pmax);
}

static void print_dw(const char *scen, int tagged, const struct result *m)
{
	printf("%-11s %-9s ", scen, mode_name(tagged));
	if (!m->dw_ok) {
		printf("n/a (%s not readable)\n", DEFER_STATS);
		return;
	}
	printf("parked %.0f, placed at balance %.0f, idle %.0f, timer %.0f, direct %.0f; wait mean ",
	       m->parked, m->pbal, m->pidle, m->ptimer, m->direct);
	if (m->wmean_us >= 0)
		printf("%.1f us", m->wmean_us);
	else
		printf("n/a");
	if (m->wmax_us >= 0)
		printf(", max %.1f us", m->wmax_us);
	else
		printf(", max <= %.1f us (no new per-CPU max in these runs)",
		       m->wmax_boot_us);
	if (m->bmax_us >= 0)
		printf("; longest placement batch %.1f us\n", m->bmax_us);
	else
		printf("; no longer placement batch than before\n");
}

/* a / b where 0 / 0 is 1: an equal (zero) spread */
static double ratio(double a, double b)
{
	if (b > 0)
		return a / b;
	return a > 0 ? INFINITY : 1;
}

static long read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int main(void)
{
	struct result res[2][2][MAX_REPS], med[2][2];
	const char *names[2] = { "A skewed", "B uniform" };
	const char *scens = getenv("SCEN") ?: "AB";
	int allow = env_int("DEFER_ALLOW_UNTAGGED", 0) == 1;
	int s, r, i, have[2] = { 0 }, probe_err = 0;
	long bound;
	pthread_t th;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		fail("sched_getaffinity", errno);
	for (i = 0; i < MAX_CPUS; i++)
		if (CPU_ISSET(i, &allowed))
			cpus[ncpu++] = i;
	secs = env_int("SECS", 5);
	reps = env_int("REPS", 3);
	if (reps > MAX_REPS)
		reps = MAX_REPS;
	nworkers = env_int("W", 4 * ncpu);
	kwake = env_int("K", ncpu);
	depth = env_int("D", 2);
	work_us = env_int("WORK_US", 200);
	warmup_ms = env_int("WARMUP_MS", 300);
	if (depth > MAX_DEPTH)
		depth = MAX_DEPTH;
	if (strchr(scens, 'A') && nworkers < depth * kwake) {
		fprintf(stderr, "defer_bench: scenario A needs W >= D * K (%d < %d * %d)\n",
			nworkers, depth, kwake);
		return 2;
	}
	if (strchr(scens, 'B') &&
	    nworkers / ncpu < depth * (kwake / ncpu > 0 ? kwake / ncpu : 1)) {
		fprintf(stderr, "defer_bench: scenario B needs W / ncpu >= D * max(1, K / ncpu)\n");
		return 2;
	}

	/* Probe in a throwaway thread: the main thread stays untagged. */
	if (pthread_create(&th, NULL, probe_fn, &probe_err))
		fail("pthread_create", errno);
	pthread_join(th, NULL);
	tag_ok = !probe_err;
	if (!tag_ok && !allow) {
		fprintf(stderr, "defer_bench: sched_setattr(SCHED_FLAG_DEFER_WAKEUP) failed: %s\n"
			"defer_bench: this kernel lacks deferred wakeup (run it in the Fleet guest: make bench BENCH=defer);\n"
			"defer_bench: DEFER_ALLOW_UNTAGGED=1 runs the \"tagged\" workers untagged, for a smoke test\n",
			strerror(-probe_err));
		return 2;
	}
	if (tag_ok && access("/sys/kernel/debug/sched", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	bound = read_sysctl(DEFER_SYSCTL);

	work_iters = calibrate(work_us);
	{
		struct dwstat dw;
		uint64_t t = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		/* the cap is an upper bound: a worker wakes at most once per work unit */
		cap_lat = (double)secs * 1e6 / work_us + 1024;
		if (cap_lat > (1 << 20))
			cap_lat = 1 << 20;
		workers = aligned_alloc(64, nworkers * sizeof(*workers));
		if (!workers)
			fail("aligned_alloc", ENOMEM);
		memset(workers, 0, nworkers * sizeof(*workers));
		for (i = 0; i < nworkers; i++) {
			workers[i].lat = malloc(cap_lat * sizeof(float));
			if (!workers[i].lat)
				fail("malloc", ENOMEM);
		}
		sink = spin(work_iters);
		t = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t;
		read_dw(&dw);
		printf("# defer bench: %d CPUs (%d..%d), W %d workers, K %d per request, D %d in flight, work unit %d us (%llu iterations; one more just took %.0f us of CPU)\n",
		       ncpu, cpus[0], cpus[ncpu - 1], nworkers, kwake, depth, work_us,
		       (unsigned long long)work_iters, t / 1e3);
		printf("# %d s runs after %d ms warm-up, %d reps (medians; latency max: worst rep), scenarios %s\n",
		       secs, warmup_ms, reps, scens);
		printf("# sched_defer_wakeup_max_us %s", bound >= 0 ? "" : "n/a");
		if (bound >= 0)
			printf("%ld", bound);
		printf(", %s %s\n", DEFER_STATS, dw.ok ? "readable" : "n/a");
		if (!tag_ok)
			printf("# WARNING: tagging unavailable (%s): \"tagged*\" runs are untagged; DEFER_ALLOW_UNTAGGED smoke test, figures mean nothing\n",
			       strerror(-probe_err));
	}
	fflush(stdout);

	printf("\nRuns\n");
	for (s = 0; s < 2; s++) {
		char scen = "AB"[s];

		if (!strchr(scens, scen))
			continue;
		have[s] = 1;
		for (r = 0; r < reps; r++) {
			for (i = 0; i < 2; i++) {
				int tagged = (r & 1) ? !i : i;

				run(scen, tagged, &res[s][tagged][r]);
				print_run(scen, tagged, r, &res[s][tagged][r]);
			}
		}
		summarize(res[s][0], reps, &med[s][0]);
		summarize(res[s][1], reps, &med[s][1]);
	}

	printf("\nMedians of %d reps (util: busy share of each of all %d CPUs from /proc/stat, none excluded, the dispatchers' included;\n"
	       "latency: futex wake to the worker running, us; migr: se.nr_migrations of the workers)\n", reps, ncpu);
	printf("%-11s %-9s %9s   %5s %5s %5s %6s %5s %10s   %8s %8s %9s\n",
	       "scenario", "mode", "req/s", "util%", "max", "min", "spread", "sd",
	       "migr", "p50", "p99", "max");
	for (s = 0; s < 2; s++)
		for (i = 0; have[s] && i < 2; i++)
			print_row(names[s], i, &med[s][i]);
	printf("\n%s deltas (all tasks on the system; untagged runs should park none)\n",
	       DEFER_STATS);
	for (s = 0; s < 2; s++)
		for (i = 0; have[s] && i < 2; i++)
			print_dw(names[s], i, &med[s][i]);

	printf("\nRatios tagged/untagged\n");
	for (s = 0; s < 2; s++) {
		struct result *u = &med[s][0], *t = &med[s][1];
		double su = u->umax - u->umin, st = t->umax - t->umin;

		if (!have[s])
			continue;
		printf("   %-10s requests/s %.3f; utilization spread (max-min) %.3f (untagged %.1f, tagged %.1f points); p99 %.3f\n",
		       names[s], t->rps / u->rps, ratio(st, su), 100 * su, 100 * st,
		       t->p99 / u->p99);
	}

	printf("\nTargets\n");
	if (have[0]) {
		struct result *u = &med[0][0], *t = &med[0][1];
		double rr = t->rps / u->rps;
		double lower = ratio(u->umax - u->umin, t->umax - t->umin);
		int met = rr >= 1.2 || (lower >= 2 && rr >= 0.98);
		long b = bound >= 0 ? bound : 1000;

		printf("   A: tagged >= 1.2x requests/s, or spread (max-min) >= 2x lower at >= 0.98x: requests/s %.3fx, spread %.2fx lower %s\n",
		       rr, lower, met ? "met" : "MISSED");
		printf("   A: tagged p99 wakeup-to-run within sched_defer_wakeup_max_us (%ld us%s): %.1f us (untagged %.1f) %s\n",
		       b, bound >= 0 ? "" : ", sysctl missing: the default", t->p99, u->p99,
		       t->p99 <= b ? "met" : "MISSED");
		if (t->dw_ok && t->wmax_us >= 0)
			printf("   A: (for reference, not a target) longest parked wait (debugfs) %.1f us, bound %ld us\n",
			       t->wmax_us, b);
	}
	if (have[1]) {
		double rr = med[1][1].rps / med[1][0].rps;

		printf("   B: tagged >= 0.95x untagged requests/s: %.3fx %s\n",
		       rr, rr >= 0.95 ? "met" : "MISSED");
	}
	if (!tag_ok)
		printf("   (tagging unavailable: these compare untagged with untagged)\n");
	return 0;
}
