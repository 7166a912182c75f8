// SPDX-License-Identifier: GPL-2.0
/*
 * SCHED_GIDLE: policy ABI, strict priority below fair, idle CPUs filled,
 * no priority inversion through kernel locks, and kill / freeze / CPU
 * hotplug of GIDLE tasks. Needs root (tests/gidle/vm boots 2 and 16 vCPUs).
 */
#include "../lib/fleet_test.h"
#include "gidle.h"

#include <dirent.h>
#include <linux/futex.h>
#include <linux/types.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../../kselftest_harness.h"

#define MS		1000000ULL
#define LOCKFILE	"/tmp/gidle-lock"
#define CGDIR		"/sys/fs/cgroup/gidle-test"

static int ncpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -errno;
	close(fd);
	return ok;
}

/* Run @fn in a child and return its exit status (or 255 on a signal). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(fn());
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* Start one fair hog per CPU, each pinned. */
static int saturate(pid_t *hogs)
{
	int i, n = ncpus();

	for (i = 0; i < n; i++)
		hogs[i] = spawn_hog(SCHED_OTHER, i);
	return n;
}

/* Wait for a child to be reaped within @timeout_ns; 0 if it was. */
static int reap_within(pid_t pid, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;

	while (now_ns() < end) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		usleep(2000);
	}
	return -ETIMEDOUT;
}

/* Per-CPU run_ns from debugfs sched/gidle; returns CPUs read or -errno. */
static int gidle_stats(unsigned long long *run_ns, int max)
{
	char line[256];
	int n = 0;
	FILE *f;

	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	f = fopen("/sys/kernel/debug/sched/gidle", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long run;
		unsigned int nr;
		int cpu;

		if (sscanf(line, "cpu%d %u %llu", &cpu, &nr, &run) == 3 &&
		    cpu >= 0 && cpu < max) {
			run_ns[cpu] = run;
			n++;
		}
	}
	fclose(f);
	return n;
}

TEST(policy_set_get)
{
	struct sched_attr attr = { .size = sizeof(attr) };
	char path[64], buf[1024], *p;
	int fd, i, policy = -1;
	ssize_t len;

	ASSERT_EQ(0, set_policy(0, SCHED_GIDLE));
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(0));
	ASSERT_EQ(0, fleet_sched_getattr(0, &attr));
	EXPECT_EQ(SCHED_GIDLE, (int)attr.sched_policy);
	EXPECT_EQ(0, attr.sched_nice);
	EXPECT_EQ(0, sched_get_priority_min(SCHED_GIDLE));
	EXPECT_EQ(0, sched_get_priority_max(SCHED_GIDLE));
	EXPECT_EQ(SCHED_GIDLE, proc_sched_field(getpid(), "policy"));
	EXPECT_LE(0, proc_sched_field(getpid(), "gidle.nr_boosts"));

	/* /proc/PID/stat field 41 is what ps -o cls, policy reads */
	snprintf(path, sizeof(path), "/proc/%d/stat", getpid());
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, len);
	buf[len] = 0;
	p = strrchr(buf, ')');
	ASSERT_NE(NULL, p);
	/* fields after ")" start at 3 (state) */
	for (i = 3; p && i <= 41; i++) {
		p = strchr(p + 1, ' ');
		if (p && i == 41)
			policy = atoi(p + 1);
	}
	EXPECT_EQ(SCHED_GIDLE, policy);

	/* nice is kept and reported */
	attr.sched_policy = SCHED_GIDLE;
	attr.sched_nice = 5;
	ASSERT_EQ(0, fleet_sched_setattr(0, &attr));
	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, fleet_sched_getattr(0, &attr));
	EXPECT_EQ(SCHED_GIDLE, (int)attr.sched_policy);
	EXPECT_EQ(5, attr.sched_nice);

	ASSERT_EQ(0, set_policy(0, SCHED_OTHER));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
}

TEST(invalid_attributes)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct sched_attr attr = { .size = sizeof(attr) };

	errno = 0;
	EXPECT_EQ(-1, sched_setscheduler(0, SCHED_GIDLE, &sp));
	EXPECT_EQ(EINVAL, errno);
	attr.sched_policy = SCHED_GIDLE;
	attr.sched_priority = 10;
	EXPECT_EQ(-EINVAL, fleet_sched_setattr(0, &attr));
	attr.sched_priority = 0;
	attr.sched_flags = 1ULL << 62;	/* no such flag (0x10000000 is SUGOV's) */
	EXPECT_EQ(-EINVAL, fleet_sched_setattr(0, &attr));
	/* policy 9 does not exist */
	sp.sched_priority = 0;
	EXPECT_EQ(-1, sched_setscheduler(0, 9, &sp));
	EXPECT_EQ(EINVAL, errno);
	/* kernel threads never return to user space to drop a boost */
	EXPECT_EQ(-EINVAL, set_policy(2, SCHED_GIDLE));	/* kthreadd */
	EXPECT_NE(SCHED_GIDLE, sched_getscheduler(2));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
}

static int child_policy(void)
{
	return sched_getscheduler(0);
}

/*
 * GIDLE is inherited, and SCHED_RESET_ON_FORK keeps it, as it keeps
 * SCHED_IDLE: a reset never raises a child above its parent.
 */
TEST(fork_inherits_reset_on_fork_keeps)
{
	ASSERT_EQ(0, set_policy(0, SCHED_GIDLE));
	EXPECT_EQ(SCHED_GIDLE, in_child(child_policy));
	ASSERT_EQ(0, set_policy(0, SCHED_GIDLE | SCHED_RESET_ON_FORK));
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(0) & ~SCHED_RESET_ON_FORK);
	EXPECT_EQ(SCHED_GIDLE, in_child(child_policy));
	ASSERT_EQ(0, set_policy(0, SCHED_OTHER));
}

/* The child of a reset-on-fork GIDLE task: 0 if GIDLE at nice 19 */
static int reset_child_state(void)
{
	if (sched_getscheduler(0) != SCHED_GIDLE)
		return 10 + (sched_getscheduler(0) & 0x7f);
	errno = 0;
	return getpriority(PRIO_PROCESS, 0) == 19 && !errno ? 0 : 30;
}

/*
 * An unprivileged task confined to nice 19 (RLIMIT_NICE 0) enters GIDLE
 * with SCHED_RESET_ON_FORK and forks: the child must not escape to
 * SCHED_OTHER (10 + policy) or to a lower nice value (30).
 */
static int unprivileged_reset_on_fork(void)
{
	struct rlimit rl = { .rlim_cur = 0, .rlim_max = 20 };

	if (setpriority(PRIO_PROCESS, 0, 19) || setrlimit(RLIMIT_NICE, &rl) ||
	    setgid(65534) || setuid(65534))
		return 100;
	if (set_policy(0, SCHED_GIDLE | SCHED_RESET_ON_FORK))
		return 101;
	return in_child(reset_child_state);
}

TEST(reset_on_fork_is_no_escape)
{
	EXPECT_EQ(0, in_child(unprivileged_reset_on_fork));
}

/* As an unprivileged user with RLIMIT_NICE 0 (hard 20). */
static int unprivileged(void)
{
	struct rlimit rl = { .rlim_cur = 0, .rlim_max = 20 };

	if (setrlimit(RLIMIT_NICE, &rl) || setgid(65534) || setuid(65534))
		return 100;
	if (set_policy(0, SCHED_IDLE))
		return 101;
	if (set_policy(0, SCHED_GIDLE))		/* anyone may enter GIDLE */
		return 102;
	if (sched_getscheduler(0) != SCHED_GIDLE)
		return 103;
	if (set_policy(0, SCHED_OTHER) != -EPERM)	/* leaving needs headroom */
		return 104;
	if (set_policy(0, SCHED_IDLE) != -EPERM)
		return 105;
	if (set_policy(0, SCHED_GIDLE))		/* staying is fine */
		return 106;
	if (set_policy(1, SCHED_GIDLE) != -EPERM)	/* not someone else's */
		return 107;
	rl.rlim_cur = 20;			/* nice 0 allowed: may leave */
	if (setrlimit(RLIMIT_NICE, &rl) || set_policy(0, SCHED_OTHER))
		return 108;
	return sched_getscheduler(0) == SCHED_OTHER ? 0 : 109;
}

TEST(permissions)
{
	EXPECT_EQ(0, in_child(unprivileged));
}

/*
 * One thread of a process moves into GIDLE beside threads of other classes
 * only if the caller asks for it (SCHED_FLAG_GIDLE_THREAD): a GIDLE thread
 * preempted in user space while it holds a plain (not PI) futex, a
 * pthread mutex say, stalls its fair siblings until its CPU has nothing
 * else to do. -EBUSY otherwise, and nothing changes.
 */
static void *policy_fn(void *arg)
{
	((struct sibling *)arg)->policy = sched_getscheduler(0);
	return NULL;
}

static int set_flags(pid_t pid, int policy, int nice, __u64 flags)
{
	struct sched_attr attr = {
		.size = sizeof(attr), .sched_policy = policy, .sched_nice = nice,
		.sched_flags = flags,
	};

	return fleet_sched_setattr(pid, &attr);
}

/* A process whose only other threads are kernel workers (SQPOLL): 0 */
static int alone_with_sqpoll(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 1000 };
	int fd = syscall(__NR_io_uring_setup, 8, &p), threads = 0;
	struct dirent *d;
	DIR *dir;

	if (fd < 0)
		return 20;
	dir = opendir("/proc/self/task");
	while (dir && (d = readdir(dir)))
		threads += d->d_name[0] != '.';
	if (dir)
		closedir(dir);
	if (threads != 2)	/* this one and iou-sqp */
		return 21;
	if (set_policy(0, SCHED_GIDLE))
		return 22;
	close(fd);
	return sched_getscheduler(0) == SCHED_GIDLE ? 0 : 23;
}

/*
 * As nobody, moving another user's thread: EPERM, as before, not EBUSY
 * (which would tell whether its siblings are GIDLE).
 */
static int refused_as_nobody(pid_t tid)
{
	if (setgid(65534) || setuid(65534))
		return 100;
	return set_policy(tid, SCHED_GIDLE) == -EPERM ? 0 : 101;
}

static int in_child_arg(int (*fn)(pid_t), pid_t arg)
{
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(fn(arg));
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

TEST(thread_alone_needs_flag)
{
	struct sched_attr attr = { .size = sizeof(attr) }, bad = { .size = sizeof(bad) };
	struct sibling s = { 0 }, n = { 0 };
	pthread_t th, nt;
	int nice0;

	ASSERT_EQ(0, pthread_create(&th, NULL, sibling_fn, &s));
	while (!__atomic_load_n(&s.tid, __ATOMIC_ACQUIRE))
		usleep(1000);

	/* either thread alone: refused, nothing changed */
	EXPECT_EQ(-EBUSY, set_policy(s.tid, SCHED_GIDLE));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(s.tid));
	EXPECT_EQ(-EBUSY, set_policy(0, SCHED_GIDLE));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	errno = 0;
	nice0 = getpriority(PRIO_PROCESS, 0);
	ASSERT_EQ(0, errno);
	EXPECT_EQ(-EBUSY, set_flags(0, SCHED_GIDLE, nice0 + 5, SCHED_FLAG_RESET_ON_FORK));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	EXPECT_EQ(nice0, getpriority(PRIO_PROCESS, 0)) TH_LOG("a refused call changed nice");
	/* a sibling of any other policy counts */
	ASSERT_EQ(0, set_policy(s.tid, SCHED_IDLE));
	EXPECT_EQ(-EBUSY, set_policy(0, SCHED_GIDLE));
	ASSERT_EQ(0, set_policy(s.tid, SCHED_BATCH));
	EXPECT_EQ(-EBUSY, set_policy(0, SCHED_GIDLE));
	ASSERT_EQ(0, set_policy(s.tid, SCHED_OTHER));
	/* other errors come first: a bad priority, a task not the caller's */
	EXPECT_EQ(0, in_child_arg(refused_as_nobody, s.tid));
	bad.sched_policy = SCHED_GIDLE;
	bad.sched_priority = 10;
	EXPECT_EQ(-EINVAL, fleet_sched_setattr(0, &bad));

	/* the flag asks for it, and only goes with SCHED_GIDLE named */
	EXPECT_EQ(-EINVAL, set_flags(s.tid, SCHED_OTHER, 0, SCHED_FLAG_GIDLE_THREAD));
	EXPECT_EQ(-EINVAL, set_flags(s.tid, SCHED_IDLE, 0, SCHED_FLAG_GIDLE_THREAD));
	EXPECT_EQ(-EINVAL, set_flags(s.tid, -1, 0,
				     SCHED_FLAG_KEEP_POLICY | SCHED_FLAG_GIDLE_THREAD));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(s.tid));
	ASSERT_EQ(0, set_flags(s.tid, SCHED_GIDLE, 0, SCHED_FLAG_GIDLE_THREAD));
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(s.tid));
	/* it is a request, not state */
	ASSERT_EQ(0, fleet_sched_getattr(s.tid, &attr));
	EXPECT_EQ(0, attr.sched_flags & SCHED_FLAG_GIDLE_THREAD);
	/* a thread that stays GIDLE is not moved: a nice change needs no flag */
	EXPECT_EQ(0, set_flags(s.tid, SCHED_GIDLE, 5, 0));

	/* the last fair thread joins its GIDLE siblings: nothing is split */
	EXPECT_EQ(0, set_policy(0, SCHED_GIDLE));
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(0));
	/* what a GIDLE thread creates is GIDLE */
	n.policy = -1;
	ASSERT_EQ(0, pthread_create(&nt, NULL, policy_fn, &n));
	pthread_join(nt, NULL);
	EXPECT_EQ(SCHED_GIDLE, n.policy);

	/* leaving is not checked (rtkit and the like raise single threads) */
	EXPECT_EQ(0, set_policy(s.tid, SCHED_OTHER));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(s.tid));
	/* and back: every other thread is GIDLE */
	EXPECT_EQ(0, set_policy(s.tid, SCHED_GIDLE));

	EXPECT_EQ(0, set_policy(0, SCHED_OTHER));
	EXPECT_EQ(0, set_policy(s.tid, SCHED_OTHER));
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(th, NULL);

	/* io_uring's threads of a process are not its threads in this sense */
	EXPECT_EQ(0, in_child(alone_with_sqpoll));
}

/*
 * What the flag asks for: a GIDLE thread (moved with the flag) holding a
 * pthread mutex, preempted in user space by a fair hog on its CPU, keeps
 * its fair sibling waiting until the hog is gone (1 s here); without the
 * hog, for its own 20 ms of work. sched-gidle.rst documents it (the
 * reason the flag exists); asserted as documented, so that a change
 * either way shows.
 */
struct mix {
	pthread_mutex_t m;
	int got, go;
};

static void *mix_holder(void *arg)
{
	struct mix *x = arg;
	unsigned long long t;

	if (pin_cpu(0, 0) || set_flags(0, SCHED_GIDLE, 0, SCHED_FLAG_GIDLE_THREAD)) {
		__atomic_store_n(&x->got, -1, __ATOMIC_RELEASE);
		return (void *)1;
	}
	pthread_mutex_lock(&x->m);
	__atomic_store_n(&x->got, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&x->go, __ATOMIC_ACQUIRE))
		;
	for (t = now_ns(); now_ns() - t < 20 * MS;)
		;
	pthread_mutex_unlock(&x->m);
	return NULL;
}

static long long mix_wait(bool hog_there)
{
	struct mix x = { .m = PTHREAD_MUTEX_INITIALIZER };
	unsigned long long t0, t1;
	pid_t hog = 0, killer = 0;
	pthread_t th;
	void *ret;

	if (pthread_create(&th, NULL, mix_holder, &x))
		return -1;
	for (t0 = now_ns(); !__atomic_load_n(&x.got, __ATOMIC_ACQUIRE);) {
		if (now_ns() - t0 > 5000 * MS)
			return -1;	/* the holder is left to the test's exit */
		usleep(1000);
	}
	if (x.got < 0) {
		pthread_join(th, NULL);
		return -1;
	}
	if (hog_there) {
		hog = spawn_hog(SCHED_OTHER, 0);
		if (hog <= 0)
			return -1;
		usleep(100 * 1000);
	}
	__atomic_store_n(&x.go, 1, __ATOMIC_RELEASE);
	pin_cpu(0, 1);
	t0 = now_ns();
	if (hog > 0) {
		killer = fork();
		if (!killer) {
			usleep(1000 * 1000);
			kill(hog, SIGKILL);
			_exit(0);
		}
	}
	pthread_mutex_lock(&x.m);
	t1 = now_ns();
	pthread_mutex_unlock(&x.m);
	if (hog > 0) {
		kill(hog, SIGKILL);
		waitpid(hog, NULL, 0);
	}
	if (killer > 0)
		waitpid(killer, NULL, 0);
	pthread_join(th, &ret);
	unpin(0);
	return ret ? -1 : (long long)(t1 - t0);
}

TEST(gidle_thread_with_mutex_stalls_siblings)
{
	long long alone, beside_hog;

	if (ncpus() < 2)
		SKIP(return, "needs 2 CPUs");
	alone = mix_wait(false);
	beside_hog = mix_wait(true);
	ASSERT_LT(0, alone) TH_LOG("no GIDLE holder on CPU 0, or no hog");
	ASSERT_LT(0, beside_hog) TH_LOG("no GIDLE holder on CPU 0, or no hog");
	TH_LOG("fair sibling waited %.1f ms for the mutex of a GIDLE thread, %.1f ms with a fair hog on the holder's CPU for 1 s",
	       alone / 1e6, beside_hog / 1e6);
	EXPECT_LT(alone, 500 * MS);
	EXPECT_LE(900 * MS, beside_hog);
}

/*
 * A fair hog and two GIDLE hogs on one CPU: the fair hog gets all of it,
 * and GIDLE hogs preempted in user space are never boosted.
 */
TEST(fair_hog_gets_the_cpu)
{
	unsigned long long t0, t1, f0, f1, g0 = 0, g1 = 0, b0 = 0, b1 = 0;
	int cpu = ncpus() - 1, i;
	pid_t pids[3];

	if (ncpus() > 1)
		ASSERT_EQ(0, pin_cpu(0, 0));
	pids[0] = spawn_hog(SCHED_OTHER, cpu);
	pids[1] = spawn_hog(SCHED_GIDLE, cpu);
	pids[2] = spawn_hog(SCHED_GIDLE, cpu);
	usleep(500 * 1000);
	ASSERT_EQ(SCHED_GIDLE, sched_getscheduler(pids[1]));
	t0 = now_ns();
	f0 = cputime_ns(pids[0]);
	for (i = 1; i < 3; i++) {
		g0 += cputime_ns(pids[i]);
		b0 += proc_sched_field(pids[i], "gidle.nr_boosts");
	}
	sleep(2);
	t1 = now_ns();
	f1 = cputime_ns(pids[0]);
	for (i = 1; i < 3; i++) {
		g1 += cputime_ns(pids[i]);
		b1 += proc_sched_field(pids[i], "gidle.nr_boosts");
	}
	kill_all(pids, 3);
	unpin(0);
	TH_LOG("fair %.3f%%, gidle %.4f%% of %.2f s, boosts %llu",
	       100.0 * (f1 - f0) / (t1 - t0), 100.0 * (g1 - g0) / (t1 - t0),
	       (t1 - t0) / 1e9, b1 - b0);
	EXPECT_GE((f1 - f0) * 100, (t1 - t0) * 95);
	/* SCHED_IDLE would take ~0.3%; GIDLE must take nothing measurable */
	EXPECT_LE((g1 - g0) * 1000, t1 - t0);
	EXPECT_EQ(b0, b1);
}

/*
 * N GIDLE hogs, all started on CPU 0, alone on N CPUs: they spread and use
 * every CPU (pulled by CPUs going idle, pushed off at the round-robin).
 */
TEST(gidle_fills_idle_cpus)
{
	unsigned long long t0, t1, c0 = 0, c1 = 0, r0[256] = { 0 }, r1[256] = { 0 };
	int n = ncpus(), i, stats;
	pid_t pids[256];

	ASSERT_LE(n, 256);
	ASSERT_EQ(0, pin_cpu(0, 0));
	for (i = 0; i < n; i++)
		pids[i] = spawn_hog(SCHED_GIDLE, -2);	/* forked on CPU 0, then unpinned */
	ASSERT_EQ(0, unpin(0));
	usleep(500 * 1000);
	stats = gidle_stats(r0, 256);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		c0 += cputime_ns(pids[i]);
	sleep(2);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		c1 += cputime_ns(pids[i]);
	gidle_stats(r1, 256);
	kill_all(pids, n);
	TH_LOG("%d GIDLE hogs used %.1f%% of %d CPUs", n,
	       100.0 * (c1 - c0) / ((t1 - t0) * n), n);
	EXPECT_GE((c1 - c0) * 100, (t1 - t0) * n * 90);
	ASSERT_EQ(n, stats);
	for (i = 0; i < n; i++)
		EXPECT_LT(r0[i], r1[i]) TH_LOG("CPU %d ran no GIDLE task", i);
}

/* Wait until @pid sleeps (state S or D) and its run time stops moving. */
static int wait_sleeping(pid_t pid, unsigned long long timeout_ns)
{
	unsigned long long start = now_ns(), prev = ~0ULL, run;
	char path[64], buf[512], *s;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	while (now_ns() - start < timeout_ns) {
		f = fopen(path, "r");
		if (!f)
			return -1;
		s = fgets(buf, sizeof(buf), f);
		fclose(f);
		s = s ? strrchr(buf, ')') : NULL;
		run = cputime_ns(pid);
		if (s && (s[2] == 'S' || s[2] == 'D') && run == prev)
			return 0;
		prev = run;
		usleep(20 * 1000);
	}
	return -1;
}

/*
 * Release the holder's lock after fair hogs saturate every CPU: timed. The
 * holder sets @policy itself before it blocks; if @move_to is not -1,
 * another task (this one) then moves it to @move_to while it sleeps in the
 * kernel with the lock held, as "tools/fleet/gidle -p PID" does.
 */
static void inversion(struct __test_metadata *_metadata, int policy,
		      int move_to, unsigned long long *wait_ns, long long *boosts)
{
	pid_t hogs[256];
	struct holder h;
	struct waiter w;
	int n;

	ASSERT_EQ(0, holder_start(&h, policy, LOCKFILE));
	if (move_to != -1) {
		/* off its CPU, asleep in the kernel, before it is moved */
		ASSERT_EQ(0, wait_sleeping(h.pid, 5000 * MS));
		ASSERT_EQ(0, set_policy(h.pid, move_to));
	}
	n = saturate(hogs);
	usleep(100 * 1000);
	ASSERT_EQ(0, waiter_start(&w, LOCKFILE));
	usleep(100 * 1000);
	EXPECT_FALSE(w.done);		/* it waits for the holder's i_rwsem */
	ASSERT_EQ(0, holder_resolve(&h));
	EXPECT_EQ(0, waiter_wait(&w, 20000 * MS));
	*wait_ns = w.done == 1 ? w.end_ns - h.resolved_ns : ~0ULL;
	*boosts = proc_sched_field(h.pid, "gidle.nr_boosts");
	kill_all(hogs, n);
	if (!w.done)
		waiter_wait(&w, 20000 * MS);
	kill_all(&h.pid, 1);
	holder_stop(&h);
}

/*
 * The holder sleeps in the kernel (in a page fault, in write()) holding
 * the file's i_rwsem; fair hogs take every CPU; a fair task waits for the
 * lock. Boosted, the GIDLE holder releases it as a SCHED_OTHER one would.
 */
TEST(lock_holder_sleeping_in_kernel_is_boosted)
{
	unsigned long long wait_ns;
	long long boosts;

	inversion(_metadata, SCHED_GIDLE, -1, &wait_ns, &boosts);
	TH_LOG("fair waiter got the lock %.1f ms after the GIDLE holder could go on; %lld boosts",
	       wait_ns / 1e6, boosts);
	EXPECT_LT(wait_ns, 2000 * MS);
	EXPECT_LE(1, boosts);
}

/*
 * The same, but the holder blocks as a SCHED_OTHER task and another task
 * moves it into GIDLE while it sleeps with the lock held: no switch-out
 * in the kernel happens as a GIDLE task, yet it must be boosted. The
 * control is the same holder left in SCHED_OTHER, in the same run: the
 * waiter must get the lock within four times its wait plus 500 ms (the
 * landed kernel kept it waiting for more than 60 s; the waiter gives up
 * after 20).
 */
TEST(holder_moved_into_gidle_while_asleep_is_boosted)
{
	unsigned long long ctl_ns, wait_ns;
	long long boosts, ctl_boosts;

	inversion(_metadata, SCHED_OTHER, -1, &ctl_ns, &ctl_boosts);
	ASSERT_NE(~0ULL, ctl_ns) TH_LOG("the control waiter never got the lock");
	inversion(_metadata, SCHED_OTHER, SCHED_GIDLE, &wait_ns, &boosts);
	TH_LOG("fair waiter got the lock %.1f ms after the holder moved into GIDLE could go on (SCHED_OTHER holder: %.1f ms); %lld boosts",
	       wait_ns / 1e6, ctl_ns / 1e6, boosts);
	EXPECT_LT(wait_ns, ctl_ns * 4 + 500 * MS);
	EXPECT_LE(1, boosts);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The worker beside no companion, a SCHED_IDLE one and a GIDLE one, three
 * rounds interleaved: first 500 ms in which the companion may spend its
 * boost credit (32 ms), then 1.5 s measured. Median waiting shares in ppm
 * into @ppm[3], median waits in the first 500 ms in ns into @burst[3].
 */
static void steal_rounds(struct __test_metadata *_metadata, const char *kind,
			 unsigned long long ppm[3], unsigned long long burst[3])
{
	static const int policies[3] = { -1, SCHED_IDLE, SCHED_GIDLE };
	unsigned long long r[3][3], b[3][3];
	int cpu = ncpus() - 1, round, i;
	pid_t pid;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 3; i++) {
			pid = spawn_companion(kind, policies[i], cpu);
			ASSERT_LE(0, pid);
			usleep(300 * 1000);
			if (pid)
				ASSERT_EQ(0, waitpid(pid, NULL, WNOHANG))
					TH_LOG("the %s companion failed", kind);
			b[i][round] = worker_wait_ppm(cpu, 500) * 500 * MS / 1000000;
			r[i][round] = worker_wait_ppm(cpu, 1500);
			if (pid)
				kill_all(&pid, 1);
		}
	}
	for (i = 0; i < 3; i++) {
		qsort(r[i], 3, sizeof(r[i][0]), cmp_ull);
		qsort(b[i], 3, sizeof(b[i][0]), cmp_ull);
		ppm[i] = r[i][1];
		burst[i] = b[i][1];
		TH_LOG("%s, companion %s: worker waited %.1f ms of the first 500, then %.3f%% (%.3f%% .. %.3f%%)",
		       kind, i == 0 ? "none" : i == 1 ? "SCHED_IDLE" : "SCHED_GIDLE",
		       burst[i] / 1e6, ppm[i] / 1e4, r[i][0] / 1e4, r[i][2] / 1e4);
	}
}

/*
 * The boost is no way out of the class. A GIDLE task looping over long
 * read()s beside a fair task that wakes every 10 ms is preempted in the
 * kernel at each wakeup; the landed kernel then boosted it into fair at
 * nice 0 weight for the rest of the read, and the fair task lost about
 * half its CPU. Once the companion's boost credit is spent, the fair task
 * may lose at most 1% of its time more than with no companion at all
 * (SCHED_IDLE's share is logged beside it); before, at most the credit
 * (32 ms), a tick and 1% of the 500 ms.
 */
#define BURST_NS	(32 * MS + 1 * MS + 5 * MS)

TEST(long_syscalls_take_no_fair_time)
{
	unsigned long long ppm[3], burst[3];

	ASSERT_EQ(0, gidle_read_file_create());
	steal_rounds(_metadata, "read", ppm, burst);
	unlink(GIDLE_READ_FILE);
	unpin(0);
	EXPECT_LE(ppm[2], ppm[0] + 10000);
	EXPECT_LE(burst[2], burst[0] + BURST_NS);
}

/*
 * An io_uring SQPOLL thread of a GIDLE process is a GIDLE task that never
 * returns to user space: once boosted, the landed kernel kept it in the
 * fair class for good. Beside the same fair worker it may take no more
 * than the long read()s may.
 */
TEST(sqpoll_thread_takes_no_fair_time)
{
	unsigned long long ppm[3], burst[3];

	steal_rounds(_metadata, "sqpoll", ppm, burst);
	unpin(0);
	EXPECT_LE(ppm[2], ppm[0] + 10000);
	EXPECT_LE(burst[2], burst[0] + BURST_NS);
}

/*
 * Boosted, a GIDLE task competes at the weight of its own nice value, not
 * at nice 0's (a nice 10 task asleep in the kernel: 110 << 10).
 */
TEST(boosted_weight_is_own_nice)
{
	long long weight;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		if (setpriority(PRIO_PROCESS, 0, 10) || set_policy(0, SCHED_GIDLE))
			_exit(3);
		for (;;)
			usleep(1000 * 1000);
	}
	ASSERT_EQ(0, wait_sleeping(pid, 5000 * MS));
	weight = proc_sched_field(pid, "se.load.weight");
	EXPECT_EQ(1, proc_sched_field(pid, "gidle.boosted"));
	kill_all(&pid, 1);
	EXPECT_EQ(110 << 10, weight);
}

/* SIGKILL reaches a boosted GIDLE task asleep in the kernel. */
TEST(kill_boosted_holder)
{
	pid_t hogs[256];
	struct holder h;
	struct waiter w;
	int n;

	ASSERT_EQ(0, holder_start(&h, SCHED_GIDLE, LOCKFILE));
	n = saturate(hogs);
	ASSERT_EQ(0, waiter_start(&w, LOCKFILE));
	usleep(100 * 1000);
	EXPECT_LE(1, proc_sched_field(h.pid, "gidle.nr_boosts"));
	ASSERT_EQ(0, kill(h.pid, SIGKILL));
	EXPECT_EQ(0, reap_within(h.pid, 5000 * MS));
	/* the lock it held is free again */
	EXPECT_EQ(0, waiter_wait(&w, 5000 * MS));
	kill_all(hogs, n);
	holder_stop(&h);
}

/* SIGKILL reaches a GIDLE task waiting behind a fair hog (never ran). */
TEST(kill_waiting_gidle_task)
{
	int cpu = ncpus() - 1;
	pid_t fair, gidle;

	fair = spawn_hog(SCHED_OTHER, cpu);
	usleep(200 * 1000);
	gidle = spawn_hog(SCHED_GIDLE, cpu);
	usleep(300 * 1000);
	ASSERT_EQ(0, kill(gidle, SIGKILL));
	EXPECT_EQ(0, reap_within(gidle, 5000 * MS));
	kill_all(&fair, 1);
}

/* Wait for a stop of @pid (traced or not) within @timeout_ns; 0 if seen. */
static int stopped_within(pid_t pid, int flags, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;
	int st;

	while (now_ns() < end) {
		if (waitpid(pid, &st, WNOHANG | flags) == pid && WIFSTOPPED(st))
			return 0;
		usleep(2000);
	}
	return -ETIMEDOUT;
}

/*
 * A GIDLE task waiting behind a fair hog in user space (never boosted)
 * acts on a group stop (SIGSTOP) and on a ptrace interrupt (a ptrace stop
 * is a stop too: a debugger attached to a GIDLE job must not hang) within
 * one tick's lift, not when the CPU goes idle.
 */
TEST(stop_and_ptrace_interrupt_waiting_gidle_task)
{
	int cpu = ncpus() - 1;
	pid_t fair, gidle;

	fair = spawn_hog(SCHED_OTHER, cpu);
	usleep(200 * 1000);
	gidle = spawn_hog(SCHED_GIDLE, cpu);
	usleep(300 * 1000);
	ASSERT_EQ(0, kill(gidle, SIGSTOP));
	EXPECT_EQ(0, stopped_within(gidle, WUNTRACED, 5000 * MS))
		TH_LOG("no group stop: policy %lld boosted %lld boosts %lld",
		       proc_sched_field(gidle, "policy"),
		       proc_sched_field(gidle, "gidle.boosted"),
		       proc_sched_field(gidle, "gidle.nr_boosts"));
	ASSERT_EQ(0, kill(gidle, SIGCONT));
	usleep(100 * 1000);
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, gidle, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, gidle, 0, 0));
	EXPECT_EQ(0, stopped_within(gidle, 0, 5000 * MS)) TH_LOG("no ptrace stop");
	ptrace(PTRACE_DETACH, gidle, 0, 0);
	kill_all(&gidle, 1);
	kill_all(&fair, 1);
}

static int cg_frozen(void)
{
	char buf[256] = { 0 };
	int fd = open(CGDIR "/cgroup.events", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
		return -1;
	close(fd);
	return !!strstr(buf, "frozen 1");
}

/*
 * A PI futex owned by a GIDLE task spinning in user space (so not boosted),
 * fair hogs on every CPU: a fair waiter's futex_lock_pi() must lift the
 * owner (rt_mutex priority inheritance) so that it runs and unlocks.
 */
struct pi_shared {
	pthread_mutex_t lock;
	volatile int owned, waiting, released;
};

TEST(pi_futex_waiter_lifts_gidle_owner)
{
	struct pi_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long long t0, end;
	pthread_mutexattr_t ma;
	pid_t hogs[256], owner;
	int n;

	ASSERT_NE(MAP_FAILED, sh);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	ASSERT_EQ(0, pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT));
	ASSERT_EQ(0, pthread_mutex_init(&sh->lock, &ma));
	owner = fork();
	if (!owner) {
		if (set_policy(0, SCHED_GIDLE) || pthread_mutex_lock(&sh->lock))
			_exit(1);
		sh->owned = 1;
		while (!sh->waiting)
			;
		/* give the waiter time to block in futex_lock_pi() */
		for (t0 = now_ns(); now_ns() - t0 < 20 * MS;)
			;
		sh->released = 1;
		pthread_mutex_unlock(&sh->lock);
		for (;;)
			;
	}
	end = now_ns() + 5000 * MS;
	while (!sh->owned && now_ns() < end)
		usleep(1000);
	ASSERT_TRUE(sh->owned);
	n = saturate(hogs);
	usleep(200 * 1000);
	t0 = now_ns();
	sh->waiting = 1;
	EXPECT_EQ(0, pthread_mutex_lock(&sh->lock));
	TH_LOG("fair waiter got the PI futex after %.1f ms", (now_ns() - t0) / 1e6);
	EXPECT_TRUE(sh->released);
	EXPECT_LT(now_ns() - t0, 2000 * MS);
	pthread_mutex_unlock(&sh->lock);
	kill_all(hogs, n);
	kill_all(&owner, 1);
	munmap(sh, sizeof(*sh));
}

/* A GIDLE child asleep in the kernel (so boosted) in pause(). */
static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (!pid) {
		if (set_policy(0, SCHED_GIDLE))
			_exit(3);
		for (;;)
			pause();
	}
	return pid;
}

/*
 * cgroup v2 freeze and thaw, fair hogs on every CPU, of a GIDLE task asleep
 * in the kernel (boosted) and of one waiting in user space (never ran).
 */
TEST(freeze_gidle_tasks)
{
	pid_t hogs[256], pids[2];
	unsigned long long end;
	char pid[32];
	int n, i;

	mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	rmdir(CGDIR);
	ASSERT_EQ(0, mkdir(CGDIR, 0755));
	/* asleep (boosted) before the hogs start, or it could not get there */
	pids[0] = spawn_sleeper();
	end = now_ns() + 5000 * MS;
	while (proc_sched_field(pids[0], "gidle.nr_boosts") < 1 && now_ns() < end)
		usleep(5000);
	EXPECT_LE(1, proc_sched_field(pids[0], "gidle.nr_boosts"));
	n = saturate(hogs);
	pids[1] = spawn_hog(SCHED_GIDLE, ncpus() - 1);
	usleep(300 * 1000);
	for (i = 0; i < 2; i++) {
		snprintf(pid, sizeof(pid), "%d", pids[i]);
		ASSERT_EQ(0, write_str(CGDIR "/cgroup.procs", pid));
	}

	ASSERT_EQ(0, write_str(CGDIR "/cgroup.freeze", "1"));
	end = now_ns() + 5000 * MS;
	while (cg_frozen() != 1 && now_ns() < end)
		usleep(5000);
	EXPECT_EQ(1, cg_frozen());

	ASSERT_EQ(0, write_str(CGDIR "/cgroup.freeze", "0"));
	end = now_ns() + 5000 * MS;
	while (cg_frozen() != 0 && now_ns() < end)
		usleep(5000);
	EXPECT_EQ(0, cg_frozen());

	/* thawed, both still there and still GIDLE */
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, waitpid(pids[i], NULL, WNOHANG));
		EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(pids[i]));
	}
	kill_all(hogs, n);
	kill_all(pids, 2);
	rmdir(CGDIR);
}

#define CGMAX		"/sys/fs/cgroup/gidle-cpumax"

/*
 * The CPU time @n hogs of @policy (on @cpu, or -2: anywhere), moved into
 * cgroup @dir, take in 2 s, as a share of one CPU.
 */
static double share_in_cgroup(int policy, const char *dir, int cpu, int n)
{
	unsigned long long t0, t1, c0 = 0, c1 = 0;
	char procs[128], pid_s[32];
	pid_t pids[256];
	int i, err = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	for (i = 0; i < n; i++) {
		pids[i] = spawn_hog(policy, cpu);
		snprintf(pid_s, sizeof(pid_s), "%d", pids[i]);
		err = err ?: write_str(procs, pid_s);
	}
	usleep(300 * 1000);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		c0 += cputime_ns(pids[i]);
	sleep(2);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		c1 += cputime_ns(pids[i]);
	kill_all(pids, n);
	return err ? -1 : (double)(c1 - c0) / (t1 - t0);
}

/* GIDLE tasks throttled by cpu.max on @cpu (debugfs sched/gidle), or -1 */
static int gidle_throttled_on(int cpu)
{
	unsigned int nr, throttled;
	unsigned long long x[4];
	char line[256];
	int c, found = -1;
	FILE *f;

	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	f = fopen("/sys/kernel/debug/sched/gidle", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu%d %u %llu %llu %llu %llu %u", &c, &nr, &x[0],
			   &x[1], &x[2], &x[3], &throttled) == 7 && c == cpu)
			found = throttled;
	fclose(f);
	return found;
}

/*
 * A GIDLE hog on @cpu in cgroup CGMAX, once throttled there: after @release
 * (a move out of the group, or the limit lifted), it must run at once. A
 * move does not go through a wake-up, so nothing else would get an idle
 * CPU to pick it. Returns its share of the CPU in the second after.
 */
static double share_after_release(struct __test_metadata *_metadata, int cpu,
				  const char *path, const char *what)
{
	unsigned long long t0, t1, c0, c1, end;
	char pid_s[32];
	pid_t pid = spawn_hog(SCHED_GIDLE, cpu);
	int throttled = 0;

	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	EXPECT_EQ(0, write_str(CGMAX "/cgroup.procs", pid_s));
	/* poll gently: a busy poller on @cpu would leave the hog no time */
	for (end = now_ns() + 3000 * MS; now_ns() < end && throttled < 1; usleep(5000))
		throttled = gidle_throttled_on(cpu);
	EXPECT_EQ(1, throttled) TH_LOG("the hog was not seen throttled on cpu%d", cpu);
	EXPECT_EQ(0, write_str(path, strcmp(what, "pid") ? what : pid_s));
	t0 = now_ns();
	c0 = cputime_ns(pid);
	sleep(1);
	t1 = now_ns();
	c1 = cputime_ns(pid);
	kill_all(&pid, 1);
	return (double)(c1 - c0) / (t1 - t0);
}

/*
 * cpu.max bounds a cgroup's GIDLE tasks as it bounds its fair ones, also
 * through an ancestor's limit, on an otherwise idle CPU; and a throttled
 * GIDLE task runs again in the next period. The control is a fair hog in
 * the same cgroup: the same tick-based charge, so GIDLE may exceed its
 * share by 2 points of a CPU (a fifth of the quota), and must get at least
 * half of it. On the landed kernel a GIDLE hog ignored cpu.max (100%).
 * With one hog per CPU the quota is the group's, shared by all CPUs: the
 * bound is the same, from the one-hog control. (Unpinned fair hogs are
 * logged beside them, not judged: at 16 vCPUs under TCG they got only 2.6%
 * of the 10% quota.)
 */
TEST(cpu_max_bounds_gidle)
{
	double fair, gidle, nested, fair_n, gidle_n, moved, lifted;
	int cpu = ncpus() - 1, n = ncpus();

	mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	rmdir(CGMAX "/child");
	rmdir(CGMAX);
	ASSERT_EQ(0, write_str("/sys/fs/cgroup/cgroup.subtree_control", "+cpu"));
	ASSERT_EQ(0, mkdir(CGMAX, 0755));
	ASSERT_EQ(0, write_str(CGMAX "/cpu.max", "10000 100000"));
	ASSERT_EQ(0, write_str(CGMAX "/cgroup.subtree_control", "+cpu"));
	ASSERT_EQ(0, mkdir(CGMAX "/child", 0755));

	fair = share_in_cgroup(SCHED_OTHER, CGMAX, cpu, 1);
	gidle = share_in_cgroup(SCHED_GIDLE, CGMAX, cpu, 1);
	nested = share_in_cgroup(SCHED_GIDLE, CGMAX "/child", cpu, 1);
	fair_n = share_in_cgroup(SCHED_OTHER, CGMAX, -2, n);
	gidle_n = share_in_cgroup(SCHED_GIDLE, CGMAX, -2, n);
	moved = share_after_release(_metadata, cpu, "/sys/fs/cgroup/cgroup.procs", "pid");
	lifted = share_after_release(_metadata, cpu, CGMAX "/cpu.max", "max 100000");
	TH_LOG("cpu.max 10000 100000: fair %.2f%%, gidle %.2f%%, gidle in a child %.2f%%",
	       100 * fair, 100 * gidle, 100 * nested);
	TH_LOG("%d unpinned hogs: fair %.2f%%, gidle %.2f%%", n, 100 * fair_n,
	       100 * gidle_n);
	TH_LOG("throttled gidle hog, then moved out: %.2f%%; then the limit lifted: %.2f%%",
	       100 * moved, 100 * lifted);
	EXPECT_GT(fair, 0.05);
	EXPECT_LT(fair, 0.15);
	EXPECT_LE(gidle, fair + 0.02);
	EXPECT_GE(gidle, fair / 2);
	EXPECT_LE(nested, fair + 0.02);
	EXPECT_GE(nested, fair / 2);
	EXPECT_LE(gidle_n, fair + 0.02);
	EXPECT_GE(gidle_n, fair / 2);
	EXPECT_GT(moved, 0.9);
	EXPECT_GT(lifted, 0.9);
	EXPECT_EQ(0, gidle_throttled_on(cpu));
	rmdir(CGMAX "/child");
	rmdir(CGMAX);
}

/*
 * @n fair workers, each needing 100 ms of CPU, started two per CPU on the
 * first half of the CPUs and then allowed on all: the time until the last
 * one is done, in ns.
 */
static unsigned long long fair_makespan(int n)
{
	int start[2], i, half = ncpus() / 2 ? ncpus() / 2 : 1;
	unsigned long long t0;
	pid_t pids[256];
	char c = 0;

	if (pipe(start))
		return 0;
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			struct timespec ts;

			if (pin_cpu(0, i % half) || read(start[0], &c, 1) != 1 || unpin(0))
				_exit(2);
			do
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
			while (ts.tv_sec * 1000000000ULL + ts.tv_nsec < 100 * MS);
			_exit(0);
		}
	}
	usleep(100 * 1000);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (write(start[1], &c, 1) != 1)
			return 0;
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	close(start[0]);
	close(start[1]);
	return now_ns() - t0;
}

/*
 * A CPU busy with GIDLE work looks for fair work to pull before more GIDLE
 * work: fair workers that start crowded on half of the CPUs spread to the
 * CPUs that run a GIDLE backlog as fast as to CPUs that run a SCHED_IDLE
 * backlog (mainline's way to keep work below fair; the same number of busy
 * vCPUs, which under TCG changes how fast the guest's own work goes). Rounds
 * alternate between no backlog (logged), 4 SCHED_IDLE hogs per CPU (the
 * control) and 4 GIDLE hogs per CPU; the GIDLE median may exceed the
 * control's by a fifth. The landed kernel took 199 ms against 103 ms with
 * no backlog at 2 vCPUs: the fair workers never left their CPU.
 */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, fair_work_found_before_gidle_backlog, 180)
{
	static const int policy[3] = { -1, SCHED_IDLE, SCHED_GIDLE };
	unsigned long long span[3][5];
	int n = ncpus(), r, k, i;
	pid_t hogs[1024];

	if (n < 2)
		SKIP(return, "needs 2 CPUs");
	for (r = 0; r < 5; r++) {
		for (k = 0; k < 3; k++) {
			int nr_hogs = policy[k] < 0 ? 0 : 4 * n;

			for (i = 0; i < nr_hogs; i++)
				hogs[i] = spawn_hog(policy[k], -2);
			usleep(200 * 1000);
			span[k][r] = fair_makespan(n);
			kill_all(hogs, nr_hogs);
			ASSERT_NE(0, span[k][r]);
		}
	}
	for (k = 0; k < 3; k++)
		qsort(span[k], 5, sizeof(span[k][0]), cmp_ull);
	TH_LOG("%d fair workers of 100 ms, makespan median (min-max) in ms: idle CPUs %.1f (%.1f-%.1f), SCHED_IDLE backlog %.1f (%.1f-%.1f), GIDLE backlog %.1f (%.1f-%.1f)",
	       n, span[0][2] / 1e6, span[0][0] / 1e6, span[0][4] / 1e6,
	       span[1][2] / 1e6, span[1][0] / 1e6, span[1][4] / 1e6,
	       span[2][2] / 1e6, span[2][0] / 1e6, span[2][4] / 1e6);
	EXPECT_LE(span[2][2] * 5, span[1][2] * 6);
}

/* Offline a CPU that runs GIDLE tasks: they move, keep running, none lost. */
TEST(hotplug_cpu_running_gidle)
{
	char online[64];
	unsigned long long c0[257], c1[257];
	int n = ncpus(), cpu = n - 1, i;
	pid_t pids[257];

	if (n < 2)
		SKIP(return, "needs 2 CPUs");
	snprintf(online, sizeof(online), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (access(online, W_OK))
		SKIP(return, "cpu%d cannot be offlined", cpu);
	for (i = 0; i < n; i++)
		pids[i] = spawn_hog(SCHED_GIDLE, -2);
	pids[n] = spawn_hog(SCHED_GIDLE, cpu);	/* only allowed there */
	usleep(300 * 1000);
	ASSERT_EQ(0, write_str(online, "0"));
	usleep(200 * 1000);
	for (i = 0; i <= n; i++)
		c0[i] = cputime_ns(pids[i]);
	sleep(2);
	for (i = 0; i <= n; i++)
		c1[i] = cputime_ns(pids[i]);
	EXPECT_EQ(0, write_str(online, "1"));
	for (i = 0; i <= n; i++) {
		EXPECT_EQ(0, waitpid(pids[i], NULL, WNOHANG)) TH_LOG("hog %d died", i);
		EXPECT_LT(c0[i], c1[i]) TH_LOG("hog %d did not run after the offline", i);
	}
	kill_all(pids, n + 1);
}

TEST_HARNESS_MAIN
