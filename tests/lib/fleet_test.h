/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Fleet suites (tests/<suite>) and benches (bench/<name>) share:
 * the sched_attr syscalls, CPU pinning, the monotonic clock, and the median
 * and percentiles of samples.
 *
 * Suites include it as "../lib/fleet_test.h" and build against the Fleet
 * kernel's exported headers (KHDR_INCLUDES); benches build in the guest
 * with -I tests/lib against the system's headers, which may predate the
 * Fleet ABI: hence the fallbacks below. Include it before any libc header,
 * or define _GNU_SOURCE first.
 *
 * tests/lib is not a suite: it has no Makefile and no config.
 */
#ifndef FLEET_TEST_H
#define FLEET_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>
/*
 * struct sched_attr, SCHED_ATTR_SIZE_VER*. Older uapi headers (Debian 12's
 * 6.1, for one) also define the struct sched_param that <sched.h> has:
 * rename theirs out of the way.
 */
#define sched_param fleet_uapi_sched_param
#include <linux/sched/types.h>
#undef sched_param

/* The Fleet ABI, for builds against headers without it */
#ifndef SCHED_GIDLE
#define SCHED_GIDLE			8
#endif
#ifndef SCHED_FLAG_DEFER_WAKEUP
#define SCHED_FLAG_DEFER_WAKEUP		0x80
#endif
#ifndef SCHED_FLAG_GIDLE_THREAD
#define SCHED_FLAG_GIDLE_THREAD		0x100
#endif

/*
 * sched_setattr(2) and sched_getattr(2) of thread @pid (0: the caller),
 * flags 0; 0 or -errno. Getattr asks for sizeof(*attr) bytes.
 */
static inline int fleet_sched_setattr(pid_t pid, struct sched_attr *attr)
{
	return syscall(SYS_sched_setattr, pid, attr, 0) ? -errno : 0;
}

static inline int fleet_sched_getattr(pid_t pid, struct sched_attr *attr)
{
	return syscall(SYS_sched_getattr, pid, attr, sizeof(*attr), 0) ?
	       -errno : 0;
}

/* Pin thread @pid (0: the caller) to @cpu, or to any CPU if @cpu < 0. */
static inline int pin_cpu(pid_t pid, int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

/* CLOCK_MONOTONIC in nanoseconds */
static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline int fleet_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort @n samples in ascending order, in place. */
static inline void fleet_sort(double *v, int n)
{
	if (n > 0)
		qsort(v, n, sizeof(*v), fleet_cmp_double);
}

/*
 * The median of @n samples: the middle one, or the mean of the two in the
 * middle if @n is even; -1 if there are none. Sorts @v in place.
 */
static inline double fleet_median(double *v, int n)
{
	if (n <= 0)
		return -1;
	fleet_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The @pct-th percentile (0 to 100) of @n samples: the sorted sample at
 * index n * pct / 100, rounded down (so the 50th is v[n / 2], the 100th
 * the largest); -1 if there are none. Sorts @v in place.
 */
static inline double fleet_percentile(double *v, int n, int pct)
{
	long long i = (long long)n * pct / 100;

	if (n <= 0)
		return -1;
	fleet_sort(v, n);
	if (i < 0)
		i = 0;
	if (i > n - 1)
		i = n - 1;
	return v[i];
}

#endif /* FLEET_TEST_H */
