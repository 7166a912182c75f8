// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred wakeup (SCHED_FLAG_DEFER_WAKEUP): the sched_attr flag ABI and the
 * kernel.sched_defer_wakeup_max_us bound; parked wakeups placed within the
 * bound, on idle CPUs at once, spread over the CPUs; SIGKILL, CPU hotplug
 * and a million wakeups of tagged threads, none lost, each parked wakeup
 * placed (debugfs sched/defer_wakeup); affinity, cpuset, cgroup, policy,
 * ptrace and freezer changes to parked tasks whose last CPU is offline
 * complete. Needs root. tests/defer/vm boots 2
 * and 16 vCPUs under TCG, so every time limit has generous slack and the
 * measured figures are logged. Built with DEFER_PLACE (defer_place_test.c)
 * it holds the placement tests instead: spread against mainline's wakeups,
 * a backlog placed in bounded batches, lock hand-offs not deferred, no
 * balance softirq per tick; those run at 2 vCPUs and at 2 sockets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <linux/types.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fleet_test.h"
#include "../../kselftest_harness.h"

#define MS		1000000ULL
#define SLACK_NS	(20 * MS)	/* TCG: timers, IPIs and vCPU turns run late */
#define MAX_CPUS	512
#define BOUND		"/proc/sys/kernel/sched_defer_wakeup_max_us"
#define BOUND_DEFAULT	1000
#define STATS		"/sys/kernel/debug/sched/defer_wakeup"
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define CGROOT		"/sys/fs/cgroup"
#define PARK_CG_A	CGROOT "/defer-test-a"	/* every CPU */
#define PARK_CG_B	CGROOT "/defer-test-b"	/* cpu3 */

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define ADD(x, v)	__atomic_add_fetch(&(x), (v), __ATOMIC_ACQ_REL)
/* a counter that only its own thread writes, read by others */
#define BUMP(x)		__atomic_store_n(&(x), (x) + 1, __ATOMIC_RELAXED)

static int set_attr(pid_t pid, int policy, int nice, int prio, __u64 flags)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = policy,
		.sched_flags = flags,
		.sched_nice = nice,
		.sched_priority = prio,
	};

	return fleet_sched_setattr(pid, &attr);
}

/*
 * Tag thread @pid keeping its policy and parameters (SCHED_FLAG_KEEP_ALL),
 * or untag it: that takes a call naming its policy, since one keeping the
 * policy keeps the tag; SCHED_FLAG_KEEP_PARAMS keeps the parameters, and
 * SCHED_FLAG_RESET_ON_FORK is passed on as it is.
 */
static int defer_set(pid_t pid, bool on)
{
	struct sched_attr attr = { .size = sizeof(attr) };
	int ret;

	if (on)
		return set_attr(pid, 0, 0, 0,
				SCHED_FLAG_KEEP_ALL | SCHED_FLAG_DEFER_WAKEUP);
	ret = fleet_sched_getattr(pid, &attr);
	if (ret)
		return ret;
	return set_attr(pid, attr.sched_policy, 0, 0, SCHED_FLAG_KEEP_PARAMS |
			(attr.sched_flags & SCHED_FLAG_RESET_ON_FORK));
}

/* sched_flags of thread @pid, or -errno. */
static long long get_flags(pid_t pid)
{
	struct sched_attr attr = { .size = sizeof(attr) };
	int ret = fleet_sched_getattr(pid, &attr);

	return ret ? ret : (long long)attr.sched_flags;
}

/* 1 if thread @pid is tagged, 0 if not, or -errno. */
static int defer_get(pid_t pid)
{
	long long flags = get_flags(pid);

	return flags < 0 ? flags : !!(flags & SCHED_FLAG_DEFER_WAKEUP);
}

static long futex_op(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* Read @path into @buf (NUL-terminated); the length or -errno. */
static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY), len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0)
		len = -errno;
	else
		buf[len] = 0;
	close(fd);
	return len;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = write(fd, s, strlen(s));
	if (len < 0)
		ret = -errno;
	else if (len != (ssize_t)strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

/* The deferral bound in microseconds, or -errno. */
static long long read_bound(void)
{
	char buf[64];
	int len = read_file(BOUND, buf, sizeof(buf));

	return len < 0 ? len : strtoll(buf, NULL, 10);
}

/* Online cpu1 if it is offline (a test stopped half way). */
static int cpu1_online(void)
{
	char buf[8];

	if (read_file(CPU1_ONLINE, buf, sizeof(buf)) > 0 && buf[0] == '0')
		return write_file(CPU1_ONLINE, "1");
	return 0;
}

/* The CPUs this thread may use (the active ones), ascending; their number. */
static int online_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* The possible CPUs (/sys/devices/system/cpu/possible) into @set; their number. */
static int possible_cpus(bool *set, int max)
{
	char buf[256], *p = buf, *end;
	long a, b, cpu;
	int n = 0;

	if (read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return -EIO;
	while (*p && *p != '\n') {
		a = strtol(p, &end, 10);
		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				return -EINVAL;
		}
		for (cpu = a; cpu <= b && cpu < max; cpu++, n++)
			set[cpu] = true;
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* State letter of thread @tid of process @pid ('R', 'S'...), or '?'. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return '?';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Wait until the thread sleeps (interruptibly), so that a wake is a wakeup. */
static int wait_asleep(pid_t pid, pid_t tid, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;

	do {
		if (thread_state(pid, tid) == 'S')
			return 0;
		usleep(100);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

/* Wait for a child to be reaped within @timeout_ns; 0 if it was. */
static int reap_within(pid_t pid, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;

	do {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 0;
		usleep(1000);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

/* Run @fn in a child and return its exit status (or 255 on a signal). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 254;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* An untagged nice-0 child spinning on @cpu (< 0: anywhere); it dies with us. */
static pid_t spawn_hog(int cpu)
{
	pid_t ppid = getpid(), pid = fork();
	volatile unsigned long spin = 0;

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(0);
	if (defer_set(0, false) || setpriority(PRIO_PROCESS, 0, 0))
		_exit(2);
	if (cpu >= 0 && pin_cpu(0, cpu))
		_exit(3);
	for (;;)
		spin++;
}

/* debugfs sched/defer_wakeup */
struct cpu_stat {
	unsigned long long parked, balance, idle, forced, direct, wait_sum, wait_max;
	unsigned long long batch_max;	/* longest placement batch, ns */
	unsigned long long hurry;	/* placed by a call it could not wait out */
};

struct snap {
	struct cpu_stat cpu[MAX_CPUS];
	struct cpu_stat sum;		/* wait_max: the largest */
	unsigned char seen[MAX_CPUS];	/* lines naming the CPU */
	int lines;			/* CPU lines */
	bool header;			/* the first line starts with '#' */
	int bad;			/* lines that are neither */
	int fields;			/* numbers on a CPU line */
};

static unsigned long long placed(const struct cpu_stat *c)
{
	return c->balance + c->idle + c->forced + c->hurry;
}

static int snap_take(struct snap *s)
{
	char line[512];
	bool first = true;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(STATS, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct cpu_stat c;
		int cpu, end = 0, n;

		if (first && line[0] == '#') {
			s->header = true;
			first = false;
			continue;
		}
		first = false;
		memset(&c, 0, sizeof(c));
		n = sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu%n %llu%n %llu%n", &cpu,
			   &c.parked, &c.balance, &c.idle, &c.forced, &c.direct,
			   &c.wait_sum, &c.wait_max, &end, &c.batch_max, &end, &c.hurry, &end);
		if (n < 8 || (line[end] && line[end] != '\n') || cpu < 0 || cpu >= MAX_CPUS) {
			s->bad++;
			continue;
		}
		s->fields = n - 1;
		s->cpu[cpu] = c;
		s->seen[cpu]++;
		s->lines++;
		s->sum.parked += c.parked;
		s->sum.balance += c.balance;
		s->sum.idle += c.idle;
		s->sum.forced += c.forced;
		s->sum.direct += c.direct;
		s->sum.hurry += c.hurry;
		s->sum.wait_sum += c.wait_sum;
		if (c.wait_max > s->sum.wait_max)
			s->sum.wait_max = c.wait_max;
		if (c.batch_max > s->sum.batch_max)
			s->sum.batch_max = c.batch_max;
	}
	fclose(f);
	return s->lines ? 0 : -ENODATA;
}

/*
 * The program's own process (not a test's): a test killed at its timeout
 * skips its teardown, so put back the bound and cpu1 when all is done.
 */
static pid_t harness_pid;
static char boot_bound[32];

static void __attribute__((constructor)) note_state(void)
{
	harness_pid = getpid();
	if (read_file(BOUND, boot_bound, sizeof(boot_bound)) <= 0)
		boot_bound[0] = 0;
}

static void __attribute__((destructor)) restore_state(void)
{
	if (getpid() != harness_pid || geteuid())
		return;
	if (boot_bound[0])
		write_file(BOUND, boot_bound);
	cpu1_online();
}

FIXTURE(defer) {
	char saved_bound[32];
	int cpus[MAX_CPUS];	/* online at the start */
	int ncpus;
	pid_t hogs[MAX_CPUS];	/* hogs[i] spins on cpus[i] */
	int nhogs;
	pid_t parkees;		/* parked_changes: its sleepers' process */
};

FIXTURE_SETUP(defer)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (access("/sys/kernel/debug/sched", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (cpu1_online())
		TH_LOG("cannot online cpu1, left offline before");
	ASSERT_LT(0, read_file(BOUND, self->saved_bound, sizeof(self->saved_bound)))
		TH_LOG("no %s: CONFIG_SCHED_DEFER_WAKEUP off?", BOUND);
	self->ncpus = online_cpus(self->cpus, MAX_CPUS);
	ASSERT_LT(0, self->ncpus);
	/* untagged and unpinned: what this thread forks or creates inherits that */
	ASSERT_EQ(0, defer_set(0, false));
	ASSERT_EQ(0, pin_cpu(0, -1));
}

static void kill_hogs(FIXTURE_DATA(defer) *self)
{
	int i;

	for (i = 0; i < self->nhogs; i++)
		kill(self->hogs[i], SIGKILL);
	for (i = 0; i < self->nhogs; i++)
		waitpid(self->hogs[i], NULL, 0);
	self->nhogs = 0;
}

/* A hog on every CPU: no CPU is idle, so tagged wakeups get parked. */
static void spawn_hogs(FIXTURE_DATA(defer) *self)
{
	for (self->nhogs = 0; self->nhogs < self->ncpus; self->nhogs++)
		self->hogs[self->nhogs] = spawn_hog(self->cpus[self->nhogs]);
	usleep(200 * 1000);
}

static int cg_write(const char *cg, const char *file, const char *s)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_file(path, s);
}

/* parked_changes: its sleepers gone (before cpu1 comes back), its cgroups */
static void park_cleanup(FIXTURE_DATA(defer) *self)
{
	if (self->parkees > 0) {
		cg_write(PARK_CG_A, "cgroup.freeze", "0");
		kill(self->parkees, SIGKILL);
		if (reap_within(self->parkees, 10000 * MS))
			fprintf(stderr, "# sleepers %d not reaped\n", self->parkees);
		self->parkees = 0;
	}
	rmdir(PARK_CG_B);
	rmdir(PARK_CG_A);
}

FIXTURE_TEARDOWN(defer)
{
	char now[32];

	park_cleanup(self);
	kill_hogs(self);
	if (self->saved_bound[0] && read_file(BOUND, now, sizeof(now)) > 0 &&
	    strcmp(now, self->saved_bound))
		EXPECT_EQ(0, write_file(BOUND, self->saved_bound));
	EXPECT_EQ(0, cpu1_online());
}

#ifndef DEFER_PLACE
/* 0 if this process is tagged, 1 if not, 2 if it cannot tell. */
static int child_tag(void)
{
	int tag = defer_get(0);

	return tag < 0 ? 2 : !tag;
}

/* As nobody: tag itself, not someone else's task. */
static int unprivileged(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 10;
	if (defer_set(0, true))
		return 11;
	if (defer_get(0) != 1)
		return 12;
	if (defer_set(1, true) != -EPERM)
		return 13;
	if (defer_set(0, false) || defer_get(0) != 0)
		return 14;
	return 0;
}

/* A thread that reports its tag at birth, then sleeps until told. */
struct idler {
	pthread_t th;
	pid_t tid;
	int tagged;
	uint32_t go;
};

static void *idler_fn(void *arg)
{
	struct idler *i = arg;

	i->tagged = defer_get(0);
	STORE(i->tid, gettid());
	while (!LOAD(i->go))
		futex_op(&i->go, FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

static int idler_start(struct idler *i)
{
	memset(i, 0, sizeof(*i));
	if (pthread_create(&i->th, NULL, idler_fn, i))
		return -1;
	while (!LOAD(i->tid))
		usleep(1000);
	return 0;
}

static void idler_stop(struct idler *i)
{
	STORE(i->go, 1);
	futex_op(&i->go, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(i->th, NULL);
}

TEST_F(defer, flag_abi)
{
	const __u64 both = SCHED_FLAG_DEFER_WAKEUP | SCHED_FLAG_RESET_ON_FORK;
	struct sched_attr attr = { .size = sizeof(attr) };
	struct sched_attr dl = {
		.size = sizeof(dl),
		.sched_policy = SCHED_DEADLINE,
		.sched_flags = SCHED_FLAG_DEFER_WAKEUP,
		.sched_runtime = 10 * MS,
		.sched_deadline = 100 * MS,
		.sched_period = 100 * MS,
	};
	struct sched_param sp = { 0 };
	struct idler idler;
	char comm[32] = "";
	pid_t pid;

	/* set, get, clear */
	ASSERT_EQ(0, defer_set(0, true)) TH_LOG("SCHED_FLAG_DEFER_WAKEUP refused");
	EXPECT_EQ(1, defer_get(0));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	EXPECT_EQ(0, defer_set(0, false));
	EXPECT_EQ(0, defer_get(0));

	/* inherited by a child and by a new thread; a thread's own */
	ASSERT_EQ(0, defer_set(0, true));
	EXPECT_EQ(0, in_child(child_tag)) TH_LOG("a forked child was not tagged");
	ASSERT_EQ(0, idler_start(&idler));
	EXPECT_EQ(1, idler.tagged) TH_LOG("a new thread was not tagged");
	ASSERT_EQ(0, defer_set(0, false));
	EXPECT_EQ(1, defer_get(idler.tid)) TH_LOG("untagging one thread untagged another");
	EXPECT_EQ(0, defer_set(idler.tid, false));
	EXPECT_EQ(0, defer_get(idler.tid));
	EXPECT_EQ(0, defer_set(idler.tid, true));
	EXPECT_EQ(1, defer_get(idler.tid));
	EXPECT_EQ(0, defer_get(0)) TH_LOG("tagging one thread tagged another");
	idler_stop(&idler);

	/* root tags another process */
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, defer_set(pid, true));
	EXPECT_EQ(1, defer_get(pid));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	/* the child of a SCHED_FLAG_RESET_ON_FORK task starts untagged */
	ASSERT_EQ(0, set_attr(0, SCHED_OTHER, 0, 0, both));
	EXPECT_EQ(both, get_flags(0) & both);
	EXPECT_EQ(1, in_child(child_tag)) TH_LOG("the child kept the tag despite RESET_ON_FORK");
	EXPECT_EQ(0, set_attr(0, SCHED_OTHER, 0, 0, 0));
	EXPECT_EQ(0ULL, get_flags(0) & both);

	/* fair and idle policies may be tagged */
	EXPECT_EQ(0, set_attr(0, SCHED_BATCH, 0, 0, SCHED_FLAG_DEFER_WAKEUP));
	EXPECT_EQ(SCHED_BATCH, sched_getscheduler(0));
	EXPECT_EQ(1, defer_get(0));
	EXPECT_EQ(0, set_attr(0, SCHED_IDLE, 0, 0, SCHED_FLAG_DEFER_WAKEUP));
	EXPECT_EQ(SCHED_IDLE, sched_getscheduler(0));
	EXPECT_EQ(1, defer_get(0));
	if (sched_get_priority_max(SCHED_GIDLE) == 0) {
		EXPECT_EQ(0, set_attr(0, SCHED_GIDLE, 0, 0, SCHED_FLAG_DEFER_WAKEUP));
		EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(0));
		EXPECT_EQ(1, defer_get(0));
	} else {
		TH_LOG("no SCHED_GIDLE in this kernel: not tried with it");
	}
	ASSERT_EQ(0, set_attr(0, SCHED_OTHER, 0, 0, 0));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	EXPECT_EQ(0, defer_get(0));

	/* real-time and deadline tasks may not */
	EXPECT_EQ(-EINVAL, set_attr(0, SCHED_FIFO, 0, 1, SCHED_FLAG_DEFER_WAKEUP));
	EXPECT_EQ(-EINVAL, set_attr(0, SCHED_RR, 0, 1, SCHED_FLAG_DEFER_WAKEUP));
	EXPECT_EQ(-EINVAL, fleet_sched_setattr(0, &dl));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	EXPECT_EQ(0, defer_get(0));

	/* a tagged task switched to SCHED_FIFO without the flag loses the tag */
	ASSERT_EQ(0, defer_set(0, true));
	EXPECT_EQ(0, set_attr(0, SCHED_FIFO, 0, 1, 0));
	EXPECT_EQ(SCHED_FIFO, sched_getscheduler(0));
	EXPECT_EQ(0, defer_get(0)) TH_LOG("a SCHED_FIFO task kept the tag");
	EXPECT_EQ(-EINVAL, defer_set(0, true)) TH_LOG("a SCHED_FIFO task was tagged");
	EXPECT_EQ(0, defer_get(0));
	ASSERT_EQ(0, set_attr(0, SCHED_OTHER, 0, 0, 0));

	/* sched_setparam() keeps it, sched_setscheduler() and sched_setattr() drop it */
	ASSERT_EQ(0, defer_set(0, true));
	EXPECT_EQ(0, sched_setparam(0, &sp));
	EXPECT_EQ(1, defer_get(0)) TH_LOG("sched_setparam() dropped the tag");
	EXPECT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &sp));
	EXPECT_EQ(0, defer_get(0)) TH_LOG("sched_setscheduler() kept the tag");
	EXPECT_EQ(0, set_attr(0, SCHED_OTHER, 3, 0, SCHED_FLAG_DEFER_WAKEUP));
	EXPECT_EQ(1, defer_get(0));
	EXPECT_EQ(0, fleet_sched_getattr(0, &attr));
	EXPECT_EQ(3, attr.sched_nice);
	EXPECT_EQ(0, set_attr(0, SCHED_OTHER, 0, 0, 0));
	EXPECT_EQ(0, defer_get(0)) TH_LOG("sched_setattr() without the flag kept the tag");

	/*
	 * one that keeps the policy keeps the tag: SCHED_FLAG_KEEP_ALL (a
	 * util-clamp update), SCHED_FLAG_KEEP_POLICY with a new nice value
	 */
	ASSERT_EQ(0, defer_set(0, true));
	EXPECT_EQ(0, set_attr(0, 0, 0, 0, SCHED_FLAG_KEEP_ALL));
	EXPECT_EQ(1, defer_get(0)) TH_LOG("SCHED_FLAG_KEEP_ALL without the flag dropped the tag");
	EXPECT_EQ(0, set_attr(0, 0, 4, 0, SCHED_FLAG_KEEP_POLICY));
	EXPECT_EQ(1, defer_get(0)) TH_LOG("SCHED_FLAG_KEEP_POLICY without the flag dropped the tag");
	EXPECT_EQ(0, fleet_sched_getattr(0, &attr));
	EXPECT_EQ(4, attr.sched_nice);
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(0));
	EXPECT_EQ(0, defer_set(0, false));
	EXPECT_EQ(0, defer_get(0));
	EXPECT_EQ(0, fleet_sched_getattr(0, &attr));
	EXPECT_EQ(4, attr.sched_nice) TH_LOG("untagging changed the nice value");
	ASSERT_EQ(0, set_attr(0, SCHED_OTHER, 0, 0, 0));

	/* no such flag; no kernel threads */
	EXPECT_EQ(-EINVAL, set_attr(0, 0, 0, 0, SCHED_FLAG_KEEP_ALL | 1ULL << 62));
	EXPECT_EQ(-EINVAL, set_attr(0, 0, 0, 0,
				    SCHED_FLAG_KEEP_ALL | SCHED_FLAG_DEFER_WAKEUP | 1ULL << 62));
	EXPECT_EQ(0, defer_get(0));
	EXPECT_LT(0, read_file("/proc/2/comm", comm, sizeof(comm)));
	EXPECT_STREQ("kthreadd\n", comm);
	EXPECT_EQ(-EINVAL, defer_set(2, true)) TH_LOG("a kernel thread was tagged");
	EXPECT_EQ(0, defer_get(2));

	/* anyone may tag their own threads, and only those */
	EXPECT_EQ(0, in_child(unprivileged));
}

TEST_F(defer, bound_sysctl)
{
	static const char *const good[] = { "100", "100000", "2000\n" };
	static const char *const bad[] = { "0", "99", "100001", "-1", "abc" };
	unsigned int i;

	EXPECT_EQ(BOUND_DEFAULT, read_bound());
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		EXPECT_EQ(0, write_file(BOUND, good[i])) TH_LOG("writing %s", good[i]);
		EXPECT_EQ(strtoll(good[i], NULL, 10), read_bound());
	}
	ASSERT_EQ(2000, read_bound());
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, write_file(BOUND, bad[i])) TH_LOG("writing %s", bad[i]);
		EXPECT_EQ(2000, read_bound()) TH_LOG("after writing %s", bad[i]);
	}
}

TEST_F(defer, stats_format)
{
	static struct snap s;
	bool possible[MAX_CPUS] = { false };
	int n, cpu;

	n = possible_cpus(possible, MAX_CPUS);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, snap_take(&s)) TH_LOG("cannot read %s", STATS);
	EXPECT_TRUE(s.header) TH_LOG("no '#' header line first");
	EXPECT_EQ(0, s.bad) TH_LOG("lines neither the header nor 'cpuN' and 7 to 9 numbers");
	EXPECT_EQ(9, s.fields) TH_LOG("no batch_ns_max or placed_hurry column");
	EXPECT_EQ(n, s.lines);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		EXPECT_EQ(possible[cpu], s.seen[cpu]) TH_LOG("cpu%d", cpu);
		EXPECT_LE(s.cpu[cpu].wait_max, s.cpu[cpu].wait_sum) TH_LOG("cpu%d", cpu);
	}
	EXPECT_LE(placed(&s.sum), s.sum.parked);
	TH_LOG("since boot: %llu parked, %llu placed, %llu direct", s.sum.parked,
	       placed(&s.sum), s.sum.direct);
}

#endif /* !DEFER_PLACE */

/*
 * A tagged wakee, woken @n times by the test's thread through a futex, an
 * eventfd or a socketpair, each time once it sleeps: the latency from just
 * before the wake to the wakee running again.
 */
enum { WAKE_FUTEX, WAKE_EVENTFD, WAKE_SOCKET, WAKE_KINDS };
static const char *const wake_name[] = { "futex", "eventfd", "socketpair" };

struct wakee {
	pthread_t th;
	int kind, n;
	int start, cpu;			/* run on start first, then on cpu; < 0: any */
	int fd[2];
	uint32_t word;			/* futex: rounds started */
	pid_t tid;
	int err, done;			/* rounds done */
	bool untagged;			/* the control: mainline wakeups */
	unsigned long long t0;		/* just before the wake */
	unsigned long long *lat;
};

static int wakee_wait(struct wakee *w, int i)
{
	uint64_t v;
	char c;

	switch (w->kind) {
	case WAKE_FUTEX:
		while (LOAD(w->word) == (uint32_t)i)
			if (futex_op(&w->word, FUTEX_WAIT_PRIVATE, i) && errno != EAGAIN &&
			    errno != EINTR)
				return -errno;
		return 0;
	case WAKE_EVENTFD:
		return read(w->fd[0], &v, sizeof(v)) == sizeof(v) ? 0 : -EIO;
	default:
		return read(w->fd[1], &c, 1) == 1 ? 0 : -EIO;
	}
}

static int wakee_wake(struct wakee *w, int i)
{
	uint64_t one = 1;

	switch (w->kind) {
	case WAKE_FUTEX:
		STORE(w->word, i + 1);
		return futex_op(&w->word, FUTEX_WAKE_PRIVATE, 1) < 0 ? -errno : 0;
	case WAKE_EVENTFD:
		return write(w->fd[0], &one, sizeof(one)) == sizeof(one) ? 0 : -EIO;
	default:
		return write(w->fd[0], "w", 1) == 1 ? 0 : -EIO;
	}
}

static void *wakee_fn(void *arg)
{
	struct wakee *w = arg;
	int i, err;

	err = w->start >= 0 ? pin_cpu(0, w->start) : 0;
	if (!err)
		err = pin_cpu(0, w->cpu);
	if (!err)
		err = defer_set(0, !w->untagged);
	if (err) {
		w->err = err;
		STORE(w->tid, gettid());
		return NULL;
	}
	STORE(w->tid, gettid());
	for (i = 0; i < w->n; i++) {
		err = wakee_wait(w, i);
		if (err) {
			w->err = err;
			break;
		}
		w->lat[i] = now_ns() - LOAD(w->t0);
		STORE(w->done, i + 1);
	}
	return NULL;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

struct measured {
	unsigned long long p50, p90, p99, max;	/* wake to run, ns */
	unsigned long long parked, direct;	/* deltas over the run */
};

/*
 * Wake a tagged thread allowed on @cpu (< 0: any), which sleeps on @start
 * first (< 0: where it was created), @n times by @kind; what it took.
 */
static void measure_as(struct __test_metadata *_metadata, int kind, int n, int start,
		       int cpu, bool untagged, struct measured *m)
{
	static struct snap s0, s1;
	unsigned long long end;
	struct wakee *w;
	int i;

	w = calloc(1, sizeof(*w));	/* left to a stuck thread on failure */
	ASSERT_NE(NULL, w);
	w->lat = calloc(n, sizeof(*w->lat));
	ASSERT_NE(NULL, w->lat);
	w->kind = kind;
	w->n = n;
	w->start = start;
	w->cpu = cpu;
	w->untagged = untagged;
	if (kind == WAKE_EVENTFD) {
		w->fd[0] = eventfd(0, EFD_CLOEXEC);
		ASSERT_LE(0, w->fd[0]);
	} else if (kind == WAKE_SOCKET) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, w->fd));
	}
	ASSERT_EQ(0, pthread_create(&w->th, NULL, wakee_fn, w));
	while (!LOAD(w->tid))
		usleep(1000);
	ASSERT_EQ(0, w->err) TH_LOG("%s wakee: cannot pin or tag it", wake_name[kind]);

	ASSERT_EQ(0, wait_asleep(getpid(), w->tid, 5000 * MS));
	ASSERT_EQ(0, snap_take(&s0));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, wait_asleep(getpid(), w->tid, 5000 * MS))
			TH_LOG("%s wakee not asleep before wakeup %d", wake_name[kind], i);
		STORE(w->t0, now_ns());
		ASSERT_EQ(0, wakee_wake(w, i));
		end = now_ns() + 2000 * MS;
		while (LOAD(w->done) <= i && !w->err && now_ns() < end)
			usleep(100);
		ASSERT_EQ(0, w->err) TH_LOG("%s wakee failed to wait", wake_name[kind]);
		ASSERT_LT(i, LOAD(w->done))
			TH_LOG("%s wakeup %d lost: the wakee did not run within 2 s (state %c)",
			       wake_name[kind], i, thread_state(getpid(), w->tid));
	}
	ASSERT_EQ(0, pthread_join(w->th, NULL));
	ASSERT_EQ(0, snap_take(&s1));

	qsort(w->lat, n, sizeof(*w->lat), cmp_ull);
	m->p50 = w->lat[n / 2];
	m->p90 = w->lat[n * 9 / 10];
	m->p99 = w->lat[n * 99 / 100];
	m->max = w->lat[n - 1];
	m->parked = s1.sum.parked - s0.sum.parked;
	m->direct = s1.sum.direct - s0.sum.direct;
	if (kind != WAKE_FUTEX) {
		close(w->fd[0]);
		if (kind == WAKE_SOCKET)
			close(w->fd[1]);
	}
	free(w->lat);
	free(w);
}

static void measure(struct __test_metadata *_metadata, int kind, int n, int start,
		    int cpu, struct measured *m)
{
	measure_as(_metadata, kind, n, start, cpu, false, m);
}

#ifndef DEFER_PLACE
/* The worst lateness of a @ns sleep (timer expiry to running) over @n tries */
static unsigned long long timer_lateness(int n, unsigned long long ns)
{
	unsigned long long t0, late, worst = 0;
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };
	int i;

	for (i = 0; i < n; i++) {
		t0 = now_ns();
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		late = now_ns() - t0 - ns;
		if (late > worst)
			worst = late;
	}
	return worst;
}

#endif /* !DEFER_PLACE */

/*
 * cyclictest's measure: a SCHED_FIFO thread pinned to @cpu sleeps @period_ns
 * (200 us if 0) at a time to an absolute deadline and notes how late it
 * woke: a stall of the CPU (interrupts or preemption off, or under TCG the
 * vCPU not running) shows as lateness.
 */
struct probe {
	pthread_t th;
	int cpu, stop, err;
	unsigned long long period_ns, worst, n;
};

static void *probe_fn(void *arg)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct probe *pr = arg;
	struct timespec ts;
	unsigned long long next, late;

	if (pin_cpu(0, pr->cpu)) {
		STORE(pr->err, EINVAL);
		return NULL;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		STORE(pr->err, errno);
		return NULL;
	}
	next = now_ns();
	while (!LOAD(pr->stop)) {
		next += pr->period_ns ?: 200000;
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		late = now_ns() - next;
		if (late > pr->worst)
			pr->worst = late;
		pr->n++;
		if (late > (pr->period_ns ?: 200000))
			next = now_ns();
	}
	return NULL;
}

#ifndef DEFER_PLACE
#define BOUND_US	2000
#define BOUND_ROUNDS	200

/*
 * The longest a wakeup may stay parked: the bound, plus the worst lateness
 * of a sleep of the bound's length seen so far, kept in @late and measured
 * again at each call (it drifts with the host), plus SLACK_NS.
 */
static unsigned long long parked_limit_ns(unsigned long long *late)
{
	unsigned long long now = timer_lateness(BOUND_ROUNDS / 2, BOUND_US * 1000ULL);

	if (now > *late)
		*late = now;
	return BOUND_US * 1000ULL + *late + SLACK_NS;
}

/*
 * A hog on every CPU, so that no CPU is idle: each wakeup of an unpinned
 * tagged thread is parked, and it stays parked no longer than the bound;
 * a tagged thread pinned to one CPU is never parked.
 *
 * The bound is on the time parked, which the kernel measures for every
 * parked wakeup (wait_ns_max): that is checked against the window plus
 * the worst stall that a SCHED_FIFO probe on each CPU (1 ms periods, for
 * the whole test) saw, plus 2 ms for the IPI that arms a remote CPU's
 * timer and the softirq: the window ends in an hrtimer, which can fire
 * no more punctually than the probe's. Under TCG those stalls are tens of
 * milliseconds; on hardware, microseconds.
 *
 * Wake to run adds the wait for the CPU the task is placed on, as for any
 * woken task. For each kind an untagged control is measured just before
 * the tagged thread, and the tagged p50 and p90 may exceed the control's
 * p50 and max by no more than the parked limit. The single slowest wakeup
 * is reported but not judged: under TCG one run-queue wait can take 200 ms
 * beside a control whose slowest of 200 took 46 ms, tagged or not.
 */
TEST_F_TIMEOUT(defer, wakeup_bound, 200)
{
	unsigned long long late, park_limit;
	static struct snap s0, s1, f0, f1;
	static struct probe mon[MAX_CPUS];
	unsigned long long stall = 0;
	struct measured c, fc, m;
	char bound[16];
	int kind, cpu;

	memset(mon, 0, sizeof(mon));
	snprintf(bound, sizeof(bound), "%d", BOUND_US);
	ASSERT_EQ(0, write_file(BOUND, bound));
	spawn_hogs(self);
	for (cpu = 0; cpu < self->ncpus; cpu++) {
		mon[cpu].cpu = self->cpus[cpu];
		mon[cpu].period_ns = MS;
		ASSERT_EQ(0, pthread_create(&mon[cpu].th, NULL, probe_fn, &mon[cpu]));
	}

	late = 0;
	ASSERT_EQ(0, snap_take(&s0));
	for (kind = 0; kind < WAKE_KINDS; kind++) {
		park_limit = parked_limit_ns(&late);
		TH_LOG("a %d us sleep beside the hogs ran late by up to %.2f ms: parked <= %.2f ms",
		       BOUND_US, late / 1e6, park_limit / 1e6);
		measure_as(_metadata, kind, BOUND_ROUNDS, -1, -1, true, &c);
		if (kind == WAKE_FUTEX)
			fc = c;
		measure(_metadata, kind, BOUND_ROUNDS, -1, -1, &m);
		TH_LOG("%s: %d wakeups, %llu parked, %llu direct", wake_name[kind],
		       BOUND_ROUNDS, m.parked, m.direct);
		TH_LOG("%s: wake to run p50/p90/p99/max, untagged %.2f/%.2f/%.2f/%.2f ms, tagged %.2f/%.2f/%.2f/%.2f ms",
		       wake_name[kind], c.p50 / 1e6, c.p90 / 1e6, c.p99 / 1e6, c.max / 1e6,
		       m.p50 / 1e6, m.p90 / 1e6, m.p99 / 1e6, m.max / 1e6);
		EXPECT_LE(m.p50, c.p50 + park_limit)
			TH_LOG("%s: the median tagged wakeup ran later than an untagged one plus the bound",
			       wake_name[kind]);
		EXPECT_LE(m.p90, c.max + park_limit)
			TH_LOG("%s: a tenth of tagged wakeups ran later than the slowest untagged one plus the bound",
			       wake_name[kind]);
		EXPECT_LE(BOUND_ROUNDS / 2ULL, m.parked)
			TH_LOG("%s: wakeups with no idle CPU were not parked", wake_name[kind]);
	}

	measure(_metadata, WAKE_FUTEX, 50, -1, self->cpus[self->ncpus - 1], &m);
	TH_LOG("pinned to cpu%d: 50 wakeups, %llu parked, max %.2f ms",
	       self->cpus[self->ncpus - 1], m.parked, m.max / 1e6);
	EXPECT_EQ(0ULL, m.parked) TH_LOG("a thread pinned to one CPU was parked");

	/* a bound shorter than a tick (HZ=1000): its hrtimer places them */
	ASSERT_EQ(0, write_file(BOUND, "100"));
	ASSERT_EQ(0, snap_take(&f0));
	measure(_metadata, WAKE_FUTEX, BOUND_ROUNDS, -1, -1, &m);
	ASSERT_EQ(0, snap_take(&f1));
	TH_LOG("bound 100 us: %d wakeups, %llu parked, %llu placed by the bound, p50 %.2f p90 %.2f max %.2f ms",
	       BOUND_ROUNDS, m.parked, f1.sum.forced - f0.sum.forced,
	       m.p50 / 1e6, m.p90 / 1e6, m.max / 1e6);
	EXPECT_LT(0ULL, f1.sum.forced - f0.sum.forced)
		TH_LOG("the bound's hrtimer placed no parked wakeup");
	EXPECT_LE(m.p50, fc.p50 + park_limit);
	EXPECT_LE(m.p90, fc.max + park_limit);

	/* the longest a task stayed parked, where that grew during the test */
	ASSERT_EQ(0, snap_take(&s1));
	for (cpu = 0; cpu < self->ncpus; cpu++) {
		STORE(mon[cpu].stop, 1);
		pthread_join(mon[cpu].th, NULL);
		ASSERT_EQ(0, mon[cpu].err) TH_LOG("probe on cpu%d: cannot pin or make SCHED_FIFO",
						  mon[cpu].cpu);
		if (mon[cpu].worst > stall)
			stall = mon[cpu].worst;
	}
	park_limit = BOUND_US * 1000ULL + stall + 2 * MS;
	TH_LOG("the worst stall a 1 ms SCHED_FIFO probe saw on any CPU over the test: %.2f ms: parked <= %.2f ms",
	       stall / 1e6, park_limit / 1e6);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if (s1.cpu[cpu].wait_max <= s0.cpu[cpu].wait_max)
			continue;
		EXPECT_LE(s1.cpu[cpu].wait_max, park_limit)
			TH_LOG("cpu%d kept a task parked %.2f ms", cpu,
			       s1.cpu[cpu].wait_max / 1e6);
	}
	TH_LOG("parked %llu, mean %.3f ms, longest since boot %.3f ms",
	       s1.sum.parked - s0.sum.parked,
	       (s1.sum.wait_sum - s0.sum.wait_sum) / 1e6 /
	       (s1.sum.parked - s0.sum.parked ?: 1), s1.sum.wait_max / 1e6);
}

/*
 * The waker on the first CPU, the others idle: the wakee's last CPU is idle
 * when it is woken, so it is placed there at once, not parked.
 */
TEST_F_TIMEOUT(defer, idle_cpu_direct, 60)
{
	struct measured m;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	ASSERT_EQ(0, pin_cpu(0, self->cpus[0]));
	measure(_metadata, WAKE_FUTEX, 100, self->cpus[1], -1, &m);
	pin_cpu(0, -1);
	TH_LOG("100 wakeups on idle CPUs: %llu direct, %llu parked; max %.2f ms",
	       m.direct, m.parked, m.max / 1e6);
	EXPECT_LE(95ULL, m.direct) TH_LOG("wakeups with an idle CPU at hand were not direct");
	EXPECT_GE(2ULL, m.parked) TH_LOG("wakeups with an idle CPU at hand were parked");
	EXPECT_LE(m.max, BOUND_DEFAULT * 1000ULL + SLACK_NS);
}

/*
 * A synchronous wake-up (WF_SYNC: a pipe write, after which the waker
 * sleeps) that selects the waker's CPU, where the waker runs alone, is
 * placed there at once: that CPU is as good as idle, as wake_affine_idle()
 * judges it, and parking the wakee would only add a placement. Two tagged
 * threads allowed on the first two CPUs ping-pong over two pipes, with a
 * hog pinned on the second CPU and on no other: the wake-ups parked are
 * counted over SYNC_ROUNDS round trips, first untagged (the control: none
 * can be parked) and then tagged, and may be no more than a tenth of the
 * tagged wake-ups (the threads may be balanced onto the hog's CPU, from
 * where a wake-up is not synchronous onto a lone waker).
 */
#define SYNC_ROUNDS	2000

struct pingpong {
	int in, out, rounds, err, tagged, *ready;
	long sleeps;
	cpu_set_t allowed;
};

static void *pingpong_fn(void *arg)
{
	struct pingpong *pp = arg;
	struct rusage ru;
	char c = 0;
	int i;

	if (sched_setaffinity(0, sizeof(pp->allowed), &pp->allowed) ||
	    defer_set(0, pp->tagged))
		pp->err = errno ?: EINVAL;
	ADD(*pp->ready, 1);
	for (i = 0; !pp->err && i < pp->rounds; i++) {
		if (read(pp->in, &c, 1) != 1 || write(pp->out, &c, 1) != 1)
			pp->err = errno ?: EIO;
	}
	if (!getrusage(RUSAGE_THREAD, &ru))
		pp->sleeps = ru.ru_nvcsw;
	return NULL;
}

/* SYNC_ROUNDS round trips; the wake-ups parked and placed direct meanwhile */
static int pingpong_run(FIXTURE_DATA(defer) *self, bool tagged, unsigned long long *parked,
			unsigned long long *direct, long *sleeps)
{
	struct pingpong pp[2] = { 0 };
	int ab[2], ba[2], i, ready = 0, ret = 0;
	struct snap s0, s1;
	pthread_t th[2];
	char c = 0;

	if (pipe(ab))
		return -errno;
	if (pipe(ba)) {
		ret = -errno;
		close(ab[0]);
		close(ab[1]);
		return ret;
	}
	pp[0].in = ba[0];
	pp[0].out = ab[1];
	pp[1].in = ab[0];
	pp[1].out = ba[1];
	for (i = 0; i < 2; i++) {
		pp[i].rounds = SYNC_ROUNDS;
		pp[i].tagged = tagged;
		pp[i].ready = &ready;
		CPU_ZERO(&pp[i].allowed);
		CPU_SET(self->cpus[0], &pp[i].allowed);
		CPU_SET(self->cpus[1], &pp[i].allowed);
	}
	if (pthread_create(&th[0], NULL, pingpong_fn, &pp[0])) {
		ret = -EAGAIN;
		goto out;
	}
	if (pthread_create(&th[1], NULL, pingpong_fn, &pp[1])) {
		ret = -EAGAIN;
		close(ba[1]);
		pthread_join(th[0], NULL);
		goto out;
	}
	while (LOAD(ready) < 2)
		usleep(1000);
	if (snap_take(&s0) || write(ba[1], &c, 1) != 1)
		ret = -EIO;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (!ret && snap_take(&s1))
		ret = -EIO;
	*parked = s1.sum.parked - s0.sum.parked;
	*direct = s1.sum.direct - s0.sum.direct;
	*sleeps = pp[0].sleeps + pp[1].sleeps;
	if (!ret)
		ret = -(pp[0].err ?: pp[1].err);
out:
	for (i = 0; i < 2; i++) {
		close(ab[i]);
		close(ba[i]);
	}
	return ret;
}

TEST_F_TIMEOUT(defer, sync_wakeup_direct, 120)
{
	unsigned long long parked[2], direct[2];
	long sleeps[2];
	int mode;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	self->hogs[0] = spawn_hog(self->cpus[1]);
	self->nhogs = 1;
	usleep(200 * 1000);
	for (mode = 0; mode < 2; mode++) {
		ASSERT_EQ(0, pingpong_run(self, mode, &parked[mode], &direct[mode],
					  &sleeps[mode]))
			TH_LOG("%s ping-pong failed", mode ? "tagged" : "untagged");
		TH_LOG("%s: %d round trips over pipes, %ld sleeps; %llu wake-ups parked, %llu direct",
		       mode ? "tagged" : "untagged", SYNC_ROUNDS, sleeps[mode], parked[mode],
		       direct[mode]);
	}
	kill_hogs(self);
	EXPECT_EQ(0ULL, parked[0]);
	EXPECT_LE(parked[1] * 10, 2ULL * SYNC_ROUNDS)
		TH_LOG("synchronous wake-ups onto a lone waker's CPU were parked");
}

/*
 * A SCHED_GIDLE task that blocks in the kernel is boosted into the fair
 * class until it returns to user space; a tagged one parked on its wake-up
 * must keep that boost, or it waits behind every fair task while still in
 * the kernel. A GIDLE thread loops in splice() from one pipe to another, a
 * fair hog runs on every CPU. Each round the hogs are stopped until the
 * thread sleeps in splice() again (it runs in user space as GIDLE only
 * while nothing fair runs), then resumed; a byte written into the first
 * pipe must come out of the second, moved by the boosted thread, within
 * BOOST_TIMEOUT_MS. Untagged GIDLE (logged), tagged SCHED_OTHER (the
 * control: parked and placed as a fair task) and tagged GIDLE, in the same
 * run: the tagged GIDLE median may be no more than twice the control's
 * p90. Without the boost the byte would wait until the hogs stop: every
 * round would time out.
 */
#define BOOST_ROUNDS		20
#define BOOST_TIMEOUT_MS	2000

struct splicer {
	int in, out, tagged, policy, err;
	pid_t tid;
};

static void *splicer_fn(void *arg)
{
	struct splicer *sp = arg;

	/* one thread of this process, alone in GIDLE: asked for with the flag */
	if (set_attr(0, sp->policy, 0, 0, (sp->tagged ? SCHED_FLAG_DEFER_WAKEUP : 0) |
		     (sp->policy == SCHED_GIDLE ? SCHED_FLAG_GIDLE_THREAD : 0)))
		sp->err = errno ?: EINVAL;
	STORE(sp->tid, gettid());
	while (!sp->err && splice(sp->in, NULL, sp->out, NULL, 1, 0) == 1)
		;
	return NULL;
}

static void hogs_signal(FIXTURE_DATA(defer) *self, int sig)
{
	int i;

	for (i = 0; i < self->nhogs; i++)
		kill(self->hogs[i], sig);
}

/*
 * Field @name ("gidle.spent", "gidle.nr_spent") of thread @tid of this
 * process in /proc/.../sched, or -1 (not a GIDLE task)
 */
static long long gidle_field(pid_t tid, const char *name)
{
	char path[64], line[256], fmt[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/sched", tid);
	snprintf(fmt, sizeof(fmt), " %s : %%lld", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Median and p90 of BOOST_ROUNDS byte transits (ns); 0 or -errno */
static int boost_rounds(struct __test_metadata *_metadata, FIXTURE_DATA(defer) *self,
			int policy, bool tagged, unsigned long long *med,
			unsigned long long *p90, unsigned long long *parked,
			unsigned long long *wait)
{
	unsigned long long lat[BOOST_ROUNDS], t0;
	struct splicer sp = { .tagged = tagged, .policy = policy };
	int a[2], b[2], i, excused, ret = 0;
	struct snap s0, s1;
	pthread_t th;
	char c = 0;

	if (pipe(a))
		return -errno;
	if (pipe(b)) {
		ret = -errno;
		goto close_a;
	}
	sp.in = a[0];
	sp.out = b[1];
	/* GIDLE in user space, it runs only while the hogs are stopped */
	hogs_signal(self, SIGSTOP);
	if (pthread_create(&th, NULL, splicer_fn, &sp)) {
		hogs_signal(self, SIGCONT);
		ret = -EAGAIN;
		goto close_b;
	}
	while (!LOAD(sp.tid))
		usleep(1000);
	snap_take(&s0);
	for (i = 0, excused = 0; i < BOOST_ROUNDS && !ret;) {
		struct pollfd pfd = { .fd = b[0], .events = POLLIN };
		long long spent = gidle_field(sp.tid, "gidle.nr_spent");

		hogs_signal(self, SIGSTOP);
		ret = wait_asleep(getpid(), sp.tid, 5000 * MS);
		hogs_signal(self, SIGCONT);
		if (ret)
			break;
		usleep(20 * 1000);
		t0 = now_ns();
		if (write(a[1], &c, 1) != 1) {
			ret = -EIO;
			break;
		}
		if (poll(&pfd, 1, BOOST_TIMEOUT_MS) != 1) {
			/*
			 * Out of boost credit (sched-gidle.rst), which waits
			 * behind the hogs by design: a vCPU of 16 in one TCG
			 * thread is charged for the others' turns. That bound
			 * is tested in tests/gidle. Let the byte through, wait
			 * for the credit to come back (32 ms at 1/256 of the
			 * time passing), and do the round again; twice at most.
			 */
			if ((gidle_field(sp.tid, "gidle.spent") > 0 ||
			     gidle_field(sp.tid, "gidle.nr_spent") > spent) && excused < 2) {
				TH_LOG("round %d: the splicer ran out of boost credit (gidle.nr_spent %lld -> %lld): again",
				       i, spent, gidle_field(sp.tid, "gidle.nr_spent"));
				excused++;
				hogs_signal(self, SIGSTOP);
				poll(&pfd, 1, BOOST_TIMEOUT_MS);
				hogs_signal(self, SIGCONT);
				if (read(b[0], &c, 1) != 1)
					ret = -EIO;
				sleep(9);
				continue;
			}
			TH_LOG("round %d: the byte did not come through in %d ms", i,
			       BOOST_TIMEOUT_MS);
			ret = -ETIMEDOUT;
			break;
		}
		lat[i++] = now_ns() - t0;
		if (read(b[0], &c, 1) != 1)
			ret = -EIO;
	}
	snap_take(&s1);
	*parked = s1.sum.parked - s0.sum.parked;
	*wait = (s1.sum.wait_sum - s0.sum.wait_sum) / (*parked ?: 1);
	hogs_signal(self, SIGSTOP);
	close(a[1]);
	pthread_join(th, NULL);
	hogs_signal(self, SIGCONT);
	if (!ret && sp.err)
		ret = -sp.err;
	if (!ret) {
		qsort(lat, BOOST_ROUNDS, sizeof(lat[0]), cmp_ull);
		*med = lat[BOOST_ROUNDS / 2];
		*p90 = lat[BOOST_ROUNDS * 9 / 10];
	}
close_b:
	close(b[0]);
	close(b[1]);
close_a:
	close(a[0]);
	if (ret != -EAGAIN)
		return ret;
	close(a[1]);
	return ret;
}

TEST_F_TIMEOUT(defer, gidle_boost_kept_parked, 240)
{
	static const char *const what[] = {
		"untagged GIDLE", "tagged SCHED_OTHER", "tagged GIDLE"
	};
	static const int policy[] = { SCHED_GIDLE, SCHED_OTHER, SCHED_GIDLE };
	unsigned long long med[3], p90[3], parked[3], wait[3];
	int mode;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	if (sched_get_priority_max(SCHED_GIDLE) != 0)
		SKIP(return, "no SCHED_GIDLE in this kernel");
	spawn_hogs(self);
	for (mode = 0; mode < 3; mode++) {
		ASSERT_EQ(0, boost_rounds(_metadata, self, policy[mode], mode > 0, &med[mode],
					  &p90[mode], &parked[mode], &wait[mode]))
			TH_LOG("%s splicer", what[mode]);
		TH_LOG("%s splicer, %d rounds: %llu parked for %.3f ms on average; byte through in median %.3f ms, p90 %.3f ms",
		       what[mode], BOOST_ROUNDS, parked[mode], wait[mode] / 1e6,
		       med[mode] / 1e6, p90[mode] / 1e6);
	}
	kill_hogs(self);
	EXPECT_LE(BOOST_ROUNDS / 2ULL, parked[2]) TH_LOG("the tagged GIDLE splicer was not parked");
	/* parked and placed as a tagged fair task is, not behind the hogs */
	EXPECT_LE(med[2], 2 * p90[1])
		TH_LOG("the parked GIDLE splicer was slower than a parked fair one");
}

/*
 * A waker that asks for its wakee on its own CPU (WF_CURRENT_CPU) hands it
 * work to run there at once: seccomp's user notification with
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, where a supervisor answers each
 * system call of its target, both asleep in turn. Such wake-ups are not
 * deferred. A tagged target calls getppid() SECCOMP_ROUNDS times, each
 * answered by a tagged supervisor thread, with a hog on every CPU; the
 * same without the flag (plain wake-ups) is the control, which must park
 * some, or the test could not tell.
 */
#define SECCOMP_ROUNDS	200

struct notif_pair {
	int fd, err, done, ready;
	bool sync;
};

static void *notif_target_fn(void *arg)
{
	struct notif_pair *np = arg;
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };
	int fd, i;

	if (defer_set(0, true) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		STORE(np->err, errno ?: EINVAL);
		STORE(np->ready, -1);
		return NULL;
	}
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0) {
		STORE(np->err, errno);
		STORE(np->ready, -1);
		return NULL;
	}
	STORE(np->fd, fd);
	STORE(np->ready, 1);
	while (LOAD(np->ready) != 2)
		usleep(1000);
	for (i = 0; i < SECCOMP_ROUNDS; i++)
		if (syscall(SYS_getppid) != 4242)
			STORE(np->err, EPROTO);
	STORE(np->done, 1);
	return NULL;
}

static void *notif_super_fn(void *arg)
{
	struct notif_pair *np = arg;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int i;

	if (defer_set(0, true)) {
		STORE(np->err, errno);
		return NULL;
	}
	for (i = 0; i < SECCOMP_ROUNDS; i++) {
		memset(&req, 0, sizeof(req));
		if (ioctl(np->fd, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
			STORE(np->err, errno);
			return NULL;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.val = 4242;
		if (ioctl(np->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp)) {
			STORE(np->err, errno);
			return NULL;
		}
	}
	return NULL;
}

/* SECCOMP_ROUNDS answered calls; the wake-ups parked and direct meanwhile */
static int notif_run(bool sync, unsigned long long *parked, unsigned long long *direct)
{
	struct notif_pair np = { .sync = sync };
	struct snap s0, s1;
	pthread_t t, sv;
	int ret = 0;

	if (pthread_create(&t, NULL, notif_target_fn, &np))
		return -EAGAIN;
	while (!LOAD(np.ready))
		usleep(1000);
	if (LOAD(np.ready) < 0) {
		pthread_join(t, NULL);
		return -np.err;
	}
	if (sync) {
		__u64 flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

		if (ioctl(np.fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags))
			ret = -errno;
	}
	if (!ret && pthread_create(&sv, NULL, notif_super_fn, &np))
		ret = -EAGAIN;
	if (ret) {
		close(np.fd);	/* the target's calls fail with ENOSYS */
		STORE(np.ready, 2);
		pthread_join(t, NULL);
		return ret;
	}
	usleep(10000);
	if (snap_take(&s0))
		ret = -EIO;
	STORE(np.ready, 2);
	pthread_join(t, NULL);
	pthread_join(sv, NULL);
	if (!ret && snap_take(&s1))
		ret = -EIO;
	close(np.fd);
	*parked = s1.sum.parked - s0.sum.parked;
	*direct = s1.sum.direct - s0.sum.direct;
	return ret ?: -np.err;
}

TEST_F_TIMEOUT(defer, current_cpu_direct, 120)
{
	unsigned long long parked[2], direct[2];
	int mode;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	spawn_hogs(self);
	for (mode = 0; mode < 2; mode++) {
		ASSERT_EQ(0, notif_run(mode, &parked[mode], &direct[mode]))
			TH_LOG("%s seccomp notifications failed", mode ? "on-current-CPU" : "plain");
		TH_LOG("%s: %d calls answered (%d wake-ups); %llu parked, %llu direct",
		       mode ? "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP" : "plain wake-ups",
		       SECCOMP_ROUNDS, 2 * SECCOMP_ROUNDS, parked[mode], direct[mode]);
	}
	kill_hogs(self);
	/* the control parks, or this test could not fail */
	ASSERT_LE(2ULL * SECCOMP_ROUNDS / 10, parked[0])
		TH_LOG("plain wake-ups between the two threads were not parked");
	EXPECT_LE(parked[1] * 100, 2ULL * SECCOMP_ROUNDS)
		TH_LOG("wake-ups onto the waker's CPU (WF_CURRENT_CPU) were parked");
}

/*
 * A parked task that becomes real-time while it waits must not wait out
 * the rest of its placement: placement is a fair-class matter, and a
 * real-time task preempts anything fair. Two ways in: sched_setscheduler()
 * to SCHED_FIFO by another thread, and a priority-inheritance boost when
 * a SCHED_FIFO thread blocks on a PI futex that the parked thread holds
 * (the boost comes after the park, so the park cannot exclude it). With
 * a fair hog on every CPU and the window at its largest (100 ms), so that
 * a parked thread waits for the next balance of a busy CPU, each round
 * wakes a sleeping thread W and, in order:
 *  - "parked": W tagged, nothing else; the time from the wake-up until W
 *    runs (what a boosted W would wait if the boost changed nothing);
 *  - "setscheduler": W tagged, made SCHED_FIFO at once; the time from the
 *    call's return until W runs;
 *  - "untagged": the same calls for an untagged W, never parked: the
 *    control, timed from the wake-up (W may run before the call returns);
 *  - "PI": W tagged and holding a PI futex; a SCHED_FIFO thread R is woken
 *    and blocks on it; the time until R gets the futex;
 *  - "PI fair": the same with R at SCHED_OTHER nice -20, which leaves W in
 *    the fair class: an owner with waiters is not parked, so it must not
 *    stay parked either;
 *  - "untag": W untagged by a sched_setattr() that changes nothing else
 *    (its early exit); the time from the call's return until W runs;
 *  - "PI untagged": W untagged, holding the PI futex, asleep; R blocks on
 *    it; then W is woken; the time from that wake-up until R gets the
 *    futex: the control of the PI arms, which take two wake-ups (W's,
 *    then R's) where the other control takes one.
 * A round counts for all but the controls only if W was parked.
 * The limit for the boosted cases' medians is twice their control's p90
 * plus 1 ms of TCG slack (one TCG thread for 16 vCPUs gives each vCPU its
 * turn every few ms, and each wake-up waits for one); the test first
 * requires the larger limit to be under 3/4 of the parked wait's median,
 * so that a boost which waited out the park would fail.
 */
#define RTB_ROUNDS	12
#define RTB_ARMS	7
#define RTB_TIMEOUT_NS	(2000 * MS)

struct rtb {
	uint32_t go, rgo, lock, ran_seq, r_seq;
	int pi, stop, err;
	pid_t tid, rtid;
	unsigned long long ran, r_before, r_got;
};

static long futex_pi(uint32_t *uaddr, int op)
{
	return syscall(SYS_futex, uaddr, op, 0, NULL, NULL, 0);
}

/*
 * W: sleeps until @go names a command (RTB_PREP or RTB_RUN), notes when
 * it ran, lets go of the PI futex if it holds it, and on RTB_PREP takes it
 * if @pi asks (so never again before R has had it).
 */
#define RTB_RUN		1
#define RTB_PREP	2

static void *rtb_w_fn(void *arg)
{
	struct rtb *b = arg;
	bool held = false;
	uint32_t cmd;

	STORE(b->tid, gettid());
	while (!LOAD(b->stop)) {
		while (!(cmd = LOAD(b->go)) && !LOAD(b->stop))
			futex_op(&b->go, FUTEX_WAIT, 0);
		STORE(b->go, 0);
		STORE(b->ran, now_ns());
		ADD(b->ran_seq, 1);
		futex_op(&b->ran_seq, FUTEX_WAKE, 1);
		if (held && futex_pi(&b->lock, FUTEX_UNLOCK_PI))
			STORE(b->err, errno);
		held = false;
		if (cmd == RTB_PREP && LOAD(b->pi)) {
			if (futex_pi(&b->lock, FUTEX_LOCK_PI))
				STORE(b->err, errno);
			else
				held = true;
		}
	}
	if (held)
		futex_pi(&b->lock, FUTEX_UNLOCK_PI);
	return NULL;
}

static void *rtb_r_fn(void *arg)
{
	struct rtb *b = arg;

	STORE(b->rtid, gettid());
	while (!LOAD(b->stop)) {
		while (!LOAD(b->rgo) && !LOAD(b->stop))
			futex_op(&b->rgo, FUTEX_WAIT, 0);
		if (LOAD(b->stop))
			break;
		STORE(b->rgo, 0);
		b->r_before = now_ns();
		if (futex_pi(&b->lock, FUTEX_LOCK_PI))
			STORE(b->err, errno);
		b->r_got = now_ns();
		if (futex_pi(&b->lock, FUTEX_UNLOCK_PI))
			STORE(b->err, errno);
		ADD(b->r_seq, 1);
		futex_op(&b->r_seq, FUTEX_WAKE, 1);
	}
	return NULL;
}

/* Wait until *@seq passes @old; 0, or -ETIMEDOUT */
static int rtb_wait_seq(uint32_t *seq, uint32_t old)
{
	unsigned long long end = now_ns() + RTB_TIMEOUT_NS;

	while (LOAD(*seq) == old) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

/*
 * One round of @arm; the latency in @lat, whether W was parked in @parked
 * and placed by the call that made it unable to wait in @hurried.
 */
static int rtb_round(struct rtb *b, int arm, unsigned long long *lat, bool *parked,
		     bool *hurried)
{
	uint32_t ran = LOAD(b->ran_seq), r = LOAD(b->r_seq);
	struct sched_attr untag = { .size = sizeof(untag) };
	unsigned long long t;
	struct snap s0, s1;
	int ret;

	STORE(b->pi, arm == 3 || arm == 4 || arm == 6);
	/* R: SCHED_FIFO, or fair at nice -20 for "PI fair" */
	if (set_attr(b->rtid, arm == 4 ? SCHED_OTHER : SCHED_FIFO, arm == 4 ? -20 : 0,
		     arm == 4 ? 0 : 1, 0))
		return -errno;
	/* W takes the PI futex, if asked, on its way back to sleep (RTB_PREP) */
	if (set_attr(b->tid, SCHED_OTHER, 0, 0,
		     arm == 2 || arm == 6 ? 0 : SCHED_FLAG_DEFER_WAKEUP))
		return -errno;
	STORE(b->go, RTB_PREP);
	futex_op(&b->go, FUTEX_WAKE, 1);
	if (rtb_wait_seq(&b->ran_seq, ran))
		return -ENOTCONN;
	ran = LOAD(b->ran_seq);
	if (wait_asleep(getpid(), b->tid, RTB_TIMEOUT_NS) || LOAD(b->err))
		return -EIO;
	if (LOAD(b->pi) && LOAD(b->lock) != (uint32_t)b->tid)
		return -ENOLCK;
	if ((arm == 5 && fleet_sched_getattr(b->tid, &untag)) || snap_take(&s0))
		return -EIO;
	if (arm == 6) {
		/* R blocks on the futex of the sleeping W first */
		STORE(b->rgo, 1);
		futex_op(&b->rgo, FUTEX_WAKE, 1);
		usleep(1000);
		if (wait_asleep(getpid(), b->rtid, RTB_TIMEOUT_NS))
			return -EIO;
	}
	t = now_ns();
	STORE(b->go, RTB_RUN);
	futex_op(&b->go, FUTEX_WAKE, 1);
	if (arm == 1 || arm == 2) {
		if (set_attr(b->tid, SCHED_FIFO, 0, 1, 0))
			return -errno;
		/* the control's time runs from its wake-up: it may run before */
		if (arm == 1)
			t = now_ns();
	} else if (arm == 5) {
		/* all as it was (the slice too) but the tag: the early exit */
		untag.sched_flags &= ~(__u64)SCHED_FLAG_DEFER_WAKEUP;
		if (fleet_sched_setattr(b->tid, &untag))
			return -errno;
		t = now_ns();
	} else if (b->pi) {
		if (arm != 6) {
			STORE(b->rgo, 1);
			futex_op(&b->rgo, FUTEX_WAKE, 1);
		}
		if (rtb_wait_seq(&b->r_seq, r))
			return -ETIME;
	}
	if (rtb_wait_seq(&b->ran_seq, ran))
		return -ESRCH;
	if (snap_take(&s1))
		return -EIO;
	*parked = s1.sum.parked > s0.sum.parked;
	*hurried = s1.sum.hurry > s0.sum.hurry;
	if (arm == 6)
		*lat = b->r_got - t;
	else if (b->pi)
		*lat = b->r_got - b->r_before;
	else
		*lat = LOAD(b->ran) > t ? LOAD(b->ran) - t : 0;
	ret = LOAD(b->err) ? -LOAD(b->err) : 0;
	/* W back to SCHED_OTHER, asleep, holding nothing */
	if (!ret && set_attr(b->tid, SCHED_OTHER, 0, 0, 0))
		ret = -errno;
	if (!ret && wait_asleep(getpid(), b->tid, RTB_TIMEOUT_NS))
		ret = -EDEADLK;
	return ret;
}

TEST_F_TIMEOUT(defer, rt_boost_while_parked, 240)
{
	static const char *const what[RTB_ARMS] = {
		"parked", "setscheduler", "untagged", "PI", "PI fair", "untag", "PI untagged"
	};
	unsigned long long lat[RTB_ARMS][RTB_ROUNDS], med[RTB_ARMS], p90[RTB_ARMS];
	unsigned long long limit, limit_pi;
	int n[RTB_ARMS] = { 0 }, unparked[RTB_ARMS] = { 0 }, hurries[RTB_ARMS] = { 0 }, arm, i;
	struct rtb b = { 0 };
	pthread_t w, r;
	char buf[32];

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	snprintf(buf, sizeof(buf), "%d", 100000);
	ASSERT_EQ(0, write_file(BOUND, buf));
	ASSERT_EQ(0, pthread_create(&w, NULL, rtb_w_fn, &b));
	ASSERT_EQ(0, pthread_create(&r, NULL, rtb_r_fn, &b));
	while (!LOAD(b.tid) || !LOAD(b.rtid))
		usleep(1000);
	ASSERT_EQ(0, set_attr(b.rtid, SCHED_FIFO, 0, 1, 0));
	spawn_hogs(self);
	/* the waker is not delayed by the hogs between its two calls */
	ASSERT_EQ(0, set_attr(0, SCHED_FIFO, 0, 2, 0));
	ASSERT_EQ(0, wait_asleep(getpid(), b.tid, RTB_TIMEOUT_NS));
	for (i = 0; i < RTB_ROUNDS; i++) {
		for (arm = 0; arm < RTB_ARMS; arm++) {
			unsigned long long l;
			bool parked, hurried;
			int ret = rtb_round(&b, arm, &l, &parked, &hurried);

			if (ret) {
				TH_LOG("%s round %d: %s", what[arm], i, strerror(-ret));
				break;
			}
			if (arm != 2 && arm != 6 && !parked) {
				unparked[arm]++;
				continue;
			}
			hurries[arm] += hurried;
			lat[arm][n[arm]++] = l;
		}
		if (arm < RTB_ARMS)
			break;
	}
	set_attr(0, SCHED_OTHER, 0, 0, 0);
	kill_hogs(self);
	STORE(b.stop, 1);
	STORE(b.go, 1);
	STORE(b.rgo, 1);
	futex_op(&b.go, FUTEX_WAKE, 1);
	futex_op(&b.rgo, FUTEX_WAKE, 1);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	ASSERT_EQ(RTB_ROUNDS, i);
	for (arm = 0; arm < RTB_ARMS; arm++) {
		ASSERT_LE(RTB_ROUNDS / 3, n[arm])
			TH_LOG("%s: W was parked in %d of %d rounds", what[arm], n[arm],
			       RTB_ROUNDS);
		qsort(lat[arm], n[arm], sizeof(lat[arm][0]), cmp_ull);
		med[arm] = lat[arm][n[arm] / 2];
		p90[arm] = lat[arm][n[arm] * 9 / 10];
		TH_LOG("%-12s %2d rounds (%d more not parked), %2d placed by the call: median %.3f ms, p90 %.3f ms, max %.3f ms",
		       what[arm], n[arm], unparked[arm], hurries[arm], med[arm] / 1e6,
		       p90[arm] / 1e6, lat[arm][n[arm] - 1] / 1e6);
	}
	limit = 2 * p90[2] + MS;
	limit_pi = 2 * p90[6] + MS;
	ASSERT_LT(4 * (limit > limit_pi ? limit : limit_pi), 3 * med[0])
		TH_LOG("a parked wait (median %.3f ms) too short to tell a boost that waits it out from one that does not (limits %.3f and %.3f ms)",
		       med[0] / 1e6, limit / 1e6, limit_pi / 1e6);
	/* the boosted were placed by the call itself, not a balance meanwhile */
	for (arm = 1; arm < 6; arm++)
		if (arm != 2)
			EXPECT_LE(n[arm] / 2, hurries[arm])
				TH_LOG("%s: %d of %d parked rounds placed by the call", what[arm],
				       hurries[arm], n[arm]);
	/* nothing else is placed that way */
	EXPECT_EQ(0, hurries[0] + hurries[2] + hurries[6]);
	EXPECT_LE(med[1], limit)
		TH_LOG("a thread made SCHED_FIFO while parked waited for its placement");
	EXPECT_LE(med[5], limit)
		TH_LOG("a thread untagged while parked waited for its placement");
	EXPECT_LE(med[3], limit_pi)
		TH_LOG("a PI boost of a parked thread waited for its placement");
	EXPECT_LE(med[4], limit_pi)
		TH_LOG("a parked owner of a PI futex with a fair waiter waited for its placement");
}

#endif /* !DEFER_PLACE */

#ifdef DEFER_PLACE
static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * A dispatcher pinned to the first CPU wakes 4 workers per CPU in bursts;
 * each notes the CPU it was placed on (its CPU when it starts running),
 * spins 2 ms and sleeps again. Before each burst every worker is made to
 * run on the dispatcher's CPU once, so that it is the last CPU of all of
 * them, as when one CPU takes all the requests. The same workers run the
 * bursts untagged (mainline's placement, the control) and tagged, in the
 * same run. The spread of a burst is the most workers placed on one CPU
 * minus the fewest on another. Mainline's wakeups stay in the dispatcher's
 * LLC (select_idle_sibling() looks no further); parked ones are placed on
 * the least loaded CPU, so once the idle CPUs are taken every placement
 * must see the ones before it, in every LLC: tagged, the mean spread must
 * be smaller than untagged.
 */
#define SPREAD_BURSTS	16	/* 8 failed once in about 15 runs (3.12 against 3.12) */
#define SPREAD_MODES	2	/* untagged, tagged */

struct spread {
	int stop, err, done, primed;
};

struct worker {
	pthread_t th;
	pid_t tid;
	uint32_t word;			/* wakeups */
	int prime;			/* the next wakeup only primes its last CPU */
	int cpu[SPREAD_MODES * SPREAD_BURSTS];	/* where it was placed in each */
	int bursts;			/* bursts run */
	struct spread *sp;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned long long t;
	uint32_t seen = 0, v;
	int cpu;

	if (pin_cpu(0, -1))
		ADD(w->sp->err, 1);
	STORE(w->tid, gettid());
	for (;;) {
		v = LOAD(w->word);
		if (v == seen) {
			futex_op(&w->word, FUTEX_WAIT_PRIVATE, seen);
			continue;
		}
		cpu = sched_getcpu();
		seen = v;
		if (LOAD(w->sp->stop))
			break;
		if (LOAD(w->prime)) {
			STORE(w->prime, 0);
			ADD(w->sp->primed, 1);
			continue;
		}
		for (t = thread_cpu_ns(); thread_cpu_ns() - t < 2 * MS;)
			;
		if (w->bursts < SPREAD_MODES * SPREAD_BURSTS)
			w->cpu[w->bursts++] = cpu;
		ADD(w->sp->done, 1);
	}
	return NULL;
}

/* The first worker not asleep within 10 s, or -1. */
static int workers_awake(struct worker *w, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (wait_asleep(getpid(), w[i].tid, 10000 * MS))
			return i;
	return -1;
}

/* Wake every worker once on @cpu alone, then allow it every CPU again */
static int workers_prime(struct worker *w, int n, int cpu)
{
	unsigned long long end = now_ns() + 30000 * MS;
	int want = LOAD(w->sp->primed) + n, i;
	cpu_set_t one, all;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CPU_ZERO(&all);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	for (i = 0; i < n; i++) {
		if (sched_setaffinity(w[i].tid, sizeof(one), &one))
			return -errno;
		STORE(w[i].prime, 1);
		ADD(w[i].word, 1);
		futex_op(&w[i].word, FUTEX_WAKE_PRIVATE, 1);
	}
	while (LOAD(w->sp->primed) < want && now_ns() < end)
		usleep(1000);
	if (LOAD(w->sp->primed) < want || workers_awake(w, n) >= 0)
		return -ETIMEDOUT;
	for (i = 0; i < n; i++)
		if (sched_setaffinity(w[i].tid, sizeof(all), &all))
			return -errno;
	return 0;
}

TEST_F_TIMEOUT(defer, spread, 240)
{
	int n = 4 * self->ncpus, i, b, c, mode, burst, lo, hi;
	int disp = self->cpus[0], on[MAX_CPUS];
	static struct snap s0, s1;
	double mean[SPREAD_MODES] = { 0 };
	struct spread sp = { 0 };
	unsigned long long end;
	struct worker *w;
	char hist[4096];
	int len;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	w = calloc(n, sizeof(*w));	/* left to stuck threads on failure */
	ASSERT_NE(NULL, w);
	for (i = 0; i < n; i++) {
		w[i].sp = &sp;
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, worker_fn, &w[i]));
	}
	for (i = 0; i < n; i++)
		while (!LOAD(w[i].tid))
			usleep(1000);
	ASSERT_EQ(0, sp.err) TH_LOG("workers could not be unpinned");
	ASSERT_EQ(0, pin_cpu(0, disp));

	for (mode = 0; mode < SPREAD_MODES; mode++) {
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, defer_set(w[i].tid, mode));
		ASSERT_EQ(0, snap_take(&s0));
		for (b = 0; b < SPREAD_BURSTS; b++) {
			burst = mode * SPREAD_BURSTS + b;
			i = workers_awake(w, n);
			ASSERT_EQ(-1, i) TH_LOG("worker %d not asleep before burst %d", i, burst);
			ASSERT_EQ(0, workers_prime(w, n, disp)) TH_LOG("burst %d", burst);
			for (i = 0; i < n; i++) {
				ADD(w[i].word, 1);
				futex_op(&w[i].word, FUTEX_WAKE_PRIVATE, 1);
			}
			end = now_ns() + 30000 * MS;
			while (LOAD(sp.done) < n * (burst + 1) && now_ns() < end)
				usleep(1000);
			ASSERT_EQ(n * (burst + 1), LOAD(sp.done))
				TH_LOG("burst %d: %d of %d workers ran within 30 s", burst,
				       LOAD(sp.done) - n * burst, n);
		}
		ASSERT_EQ(0, snap_take(&s1));
		TH_LOG("%s: %d wakeups, %llu parked, %llu direct", mode ? "tagged" : "untagged",
		       n * SPREAD_BURSTS, s1.sum.parked - s0.sum.parked,
		       s1.sum.direct - s0.sum.direct);
		if (mode)
			EXPECT_LE(n * SPREAD_BURSTS * 9 / 10ULL,
				  s1.sum.parked - s0.sum.parked + s1.sum.direct - s0.sum.direct)
				TH_LOG("tagged wakeups were neither parked nor direct");
	}
	pin_cpu(0, -1);
	STORE(sp.stop, 1);
	for (i = 0; i < n; i++) {
		ADD(w[i].word, 1);
		futex_op(&w[i].word, FUTEX_WAKE_PRIVATE, 1);
	}
	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);

	for (mode = 0; mode < SPREAD_MODES; mode++) {
		for (b = 0; b < SPREAD_BURSTS; b++) {
			burst = mode * SPREAD_BURSTS + b;
			memset(on, 0, sizeof(on));
			for (i = 0; i < n; i++)
				if (w[i].cpu[burst] >= 0 && w[i].cpu[burst] < MAX_CPUS)
					on[w[i].cpu[burst]]++;
			lo = n;
			hi = 0;
			len = 0;
			for (c = 0; c < self->ncpus; c++) {
				int k = on[self->cpus[c]];

				lo = k < lo ? k : lo;
				hi = k > hi ? k : hi;
				if (len < (int)sizeof(hist) - 16)
					len += snprintf(hist + len, sizeof(hist) - len, " %d", k);
			}
			mean[mode] += (double)(hi - lo) / SPREAD_BURSTS;
			TH_LOG("%s burst %d: %d workers placed per CPU:%s (spread %d)",
			       mode ? "tagged" : "untagged", b, n, hist, hi - lo);
		}
	}
	TH_LOG("%d workers from cpu%d: mean spread untagged %.2f, tagged %.2f", n, disp,
	       mean[0], mean[1]);
	EXPECT_LT(mean[1], mean[0])
		TH_LOG("deferral did not spread the bursts better than mainline's wakeups");
	free(w);
}

/*
 * A backlog of 5000 parked wakeups must be placed in bounded steps, not in
 * one long section with interrupts or preemption off. The sleepers were
 * last on cpu P and may run on P and Q; the waker, on another CPU W (Q
 * itself with 2 CPUs), wakes
 * them all with one FUTEX_WAKE beside hogs on every CPU, so tagged they are
 * all parked on P and placed from P. A SCHED_FIFO probe pinned to P sleeps
 * 200 us at a time (cyclictest's measure) and notes its worst lateness in
 * each window: beside the hogs alone (the baseline: under TCG, the vCPU's
 * own stalls, which no kernel change removes), while mainline's wakeups of
 * the untagged sleepers are queued (logged: one FUTEX_WAKE of 5000 queues
 * them through P's wake list, flushed in one interrupt), and while the
 * tagged backlog is placed; BACKLOG_ROUNDS windows of each, the baseline
 * as long as the last tagged one. The deferral window is set to its
 * longest, so that the whole backlog parks (a list whose oldest task
 * waited longer than the window takes no more). The control is the larger
 * of the baseline's and the untagged windows' medians: mainline's own
 * handling of the same burst stalls P too (a CI run, 16 vCPUs in one TCG
 * thread: baseline 19.7 ms, untagged 47.9, tagged 42.8), so the hogs alone
 * are not the whole of what a kernel without deferral does here. Tagged,
 * the median worst lateness may exceed the control by no more than its own
 * size plus 1 ms: placing 5000 tasks in one go (the landed code) takes over
 * 15 ms here beside a baseline of 5. The 100 us bound itself is below what
 * TCG can resolve; the kernel's longest placement batch on P (batch_ns_max,
 * where it grew in the tagged rounds) is held to the same limit. With
 * batches of 5000 instead of 8 both fail (2026-12-07): at 2 vCPUs tagged
 * 38.9 ms and batch 58.3 against a limit of 12.6; at 2 sockets 106 and 128
 * against 86, 81 and 84 against 51; batches of 8 gave 7.0 (limit 13.9) and
 * 36.0 (limit 89.3).
 */
#define BACKLOG_THREADS	5000
#define BACKLOG_ROUNDS	3

struct backlog {
	uint32_t word;			/* wake generation */
	int woken;			/* sleepers that ran this generation */
	int err;
};

struct sleeper {
	pthread_t th;
	pid_t tid;
	struct backlog *bl;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	uint32_t seen = 0;

	STORE(s->tid, gettid());
	for (;;) {
		while (LOAD(s->bl->word) == seen)
			futex_op(&s->bl->word, FUTEX_WAIT_PRIVATE, seen);
		seen = LOAD(s->bl->word);
		if (seen == UINT32_MAX)
			break;
		ADD(s->bl->woken, 1);
	}
	return NULL;
}

/* Set the affinity of every sleeper to @a (and @b if >= 0) */
static int sleepers_allow(struct sleeper *s, int n, int a, int b)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	if (b >= 0)
		CPU_SET(b, &set);
	for (i = 0; i < n; i++)
		if (sched_setaffinity(s[i].tid, sizeof(set), &set))
			return -errno;
	return 0;
}

/* Wake every sleeper (one FUTEX_WAKE) and wait until all ran and sleep again */
static int sleepers_cycle(struct sleeper *s, int n, struct backlog *bl,
			  unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;
	int want = LOAD(bl->woken) + n, i;

	ADD(bl->word, 1);
	futex_op(&bl->word, FUTEX_WAKE_PRIVATE, INT32_MAX);
	while (LOAD(bl->woken) < want)
		if (now_ns() > end)
			return -ETIMEDOUT;
		else
			usleep(1000);
	for (i = 0; i < n; i++)
		if (wait_asleep(getpid(), s[i].tid, end > now_ns() ? end - now_ns() : 0))
			return -ETIMEDOUT;
	return 0;
}

/* The probe's worst lateness on @cpu over @ns, its sleeps in @n; or -errno */
static long long probe_window(int cpu, unsigned long long ns, unsigned long long *n)
{
	struct probe pr = { .cpu = cpu };
	int err = pthread_create(&pr.th, NULL, probe_fn, &pr);

	if (err)
		return -err;
	usleep(ns / 1000);
	STORE(pr.stop, 1);
	pthread_join(pr.th, NULL);
	*n = pr.n;
	return pr.err ? -pr.err : (long long)pr.worst;
}

static int cmp_ull(const void *a, const void *b);

TEST_F_TIMEOUT(defer, backlog_latency, 900)
{
	unsigned long long worst[3][BACKLOG_ROUNDS], med[3], ctl, len = 1000 * MS, t0, nr = 0;
	unsigned long long batch = 0;
	int W, P, Q, n = BACKLOG_THREADS, i, round, mode;
	long long ret;
	static const char *const what[] = { "baseline", "untagged", "tagged" };
	static struct snap s0, s1;
	struct backlog bl = { 0 };
	struct sleeper *s;
	struct probe pr;
	pthread_attr_t attr;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	/* with 2 CPUs, W is the other allowed CPU: wake_affine() picks P */
	W = self->cpus[0];
	P = self->cpus[self->ncpus - 1];
	Q = self->cpus[self->ncpus > 2 ? self->ncpus - 2 : 0];
	s = calloc(n, sizeof(*s));
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pin_cpu(0, W));
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 64 * 1024));
	for (i = 0; i < n; i++) {
		s[i].bl = &bl;
		ASSERT_EQ(0, pthread_create(&s[i].th, &attr, sleeper_fn, &s[i]))
			TH_LOG("sleeper %d", i);
	}
	for (i = 0; i < n; i++)
		while (!LOAD(s[i].tid))
			usleep(1000);
	spawn_hogs(self);
	/* the longest window: one FUTEX_WAKE of 5000 takes ms, all must park */
	ASSERT_EQ(0, write_file(BOUND, "100000"));

	for (round = 0; round < BACKLOG_ROUNDS; round++) {
		ret = probe_window(P, len, &nr);
		ASSERT_LE(0, ret) TH_LOG("probe: %s", strerror(-ret));
		ASSERT_LT(0ULL, nr) TH_LOG("probe: never woke in %.2f s", len / 1e9);
		worst[0][round] = ret;
		TH_LOG("baseline: probe on cpu%d beside the hogs for %.2f s: %llu sleeps, worst %.3f ms late",
		       P, len / 1e9, nr, worst[0][round] / 1e6);
		for (mode = 0; mode < 2; mode++) {
			/* every sleeper last ran on P */
			ASSERT_EQ(0, sleepers_allow(s, n, P, -1));
			ASSERT_EQ(0, sleepers_cycle(s, n, &bl, 120000 * MS))
				TH_LOG("round %d", round);
			ASSERT_EQ(0, sleepers_allow(s, n, P, Q));
			for (i = 0; i < n; i++)
				ASSERT_EQ(0, defer_set(s[i].tid, mode));

			memset(&pr, 0, sizeof(pr));
			pr.cpu = P;
			ASSERT_EQ(0, pthread_create(&pr.th, NULL, probe_fn, &pr));
			usleep(100 * 1000);
			t0 = now_ns();
			ASSERT_EQ(0, snap_take(&s0));
			ASSERT_EQ(0, sleepers_cycle(s, n, &bl, 120000 * MS))
				TH_LOG("round %d", round);
			ASSERT_EQ(0, snap_take(&s1));
			usleep(100 * 1000);
			STORE(pr.stop, 1);
			pthread_join(pr.th, NULL);
			ASSERT_EQ(0, pr.err) TH_LOG("probe: cannot pin or make SCHED_FIFO");
			if (mode)
				len = now_ns() - t0 + 100 * MS;
			worst[1 + mode][round] = pr.worst;
			if (mode && s1.cpu[P].batch_max > s0.cpu[P].batch_max &&
			    s1.cpu[P].batch_max > batch)
				batch = s1.cpu[P].batch_max;
			TH_LOG("%s: %d wakeups, %llu parked on cpu%d; probe: %llu sleeps, worst %.3f ms late; batch_ns_max %.3f ms",
			       what[1 + mode], n, s1.cpu[P].parked - s0.cpu[P].parked, P,
			       pr.n, pr.worst / 1e6, s1.cpu[P].batch_max / 1e6);
			if (mode)
				EXPECT_LE(n * 9 / 10ULL, s1.cpu[P].parked - s0.cpu[P].parked)
					TH_LOG("the backlog was not parked on cpu%d", P);
		}
	}
	kill_hogs(self);
	STORE(bl.word, UINT32_MAX);
	futex_op(&bl.word, FUTEX_WAKE_PRIVATE, INT32_MAX);
	for (i = 0; i < n; i++)
		pthread_join(s[i].th, NULL);
	pin_cpu(0, -1);
	for (mode = 0; mode < 3; mode++) {
		qsort(worst[mode], BACKLOG_ROUNDS, sizeof(worst[mode][0]), cmp_ull);
		med[mode] = worst[mode][BACKLOG_ROUNDS / 2];
	}
	ctl = med[0] > med[1] ? med[0] : med[1];
	TH_LOG("probe on cpu%d, median of %d windows' worst lateness: baseline %.3f ms, untagged %.3f ms, tagged %.3f ms; limit %.3f ms",
	       P, BACKLOG_ROUNDS, med[0] / 1e6, med[1] / 1e6, med[2] / 1e6,
	       (2 * ctl + MS) / 1e6);
	EXPECT_LE(med[2], 2 * ctl + MS)
		TH_LOG("placing the backlog held cpu%d far longer than mainline's stalls", P);
	TH_LOG("longest placement batch on cpu%d while the tagged backlogs were placed: %.3f ms",
	       P, batch / 1e6);
	EXPECT_LE(batch, 2 * ctl + MS)
		TH_LOG("a placement batch on cpu%d outlasted mainline's stalls", P);
	free(s);
}

/*
 * Wakeups that hand a thread a lock must not be deferred, or lock convoys
 * follow: the lock (or the hand-off reserving it) sits with a parked task.
 * 64 threads beside hogs on every CPU, for CONVOY_MS, untagged and tagged,
 * CONVOY_REPS times each, alternating; the tagged median of operations
 * must reach 0.8 of the untagged one, and no tagged run may park more
 * wake-ups (debugfs, while all threads are at it) than a hundredth of the
 * mean tagged operations: the lock's wake-ups are the only ones there. Two locks: the inode's i_rwsem, as
 * each thread writes 4 KiB to the start of one memfd (its waiters sleep
 * uninterruptibly, woken by the holder's up_write()); and a
 * PTHREAD_PRIO_INHERIT mutex around a 20 us critical section (a PI futex:
 * its waiters sleep interruptibly on an rt_mutex, and FUTEX_UNLOCK_PI
 * makes the woken waiter the owner before it runs); and a SysV semaphore
 * used as a mutex around the same critical section (semop() performs the
 * waiter's decrement for it before waking it, and the waiter sleeps
 * interruptibly: the hand-off the wake-up carries is the same).
 */
#define CONVOY_THREADS	64
#define CONVOY_MS	1000
#define CONVOY_REPS	5

enum { CONVOY_RWSEM, CONVOY_PI_MUTEX, CONVOY_SYSV_SEM, CONVOY_KINDS };
static const char *const convoy_name[] = { "i_rwsem", "PI mutex", "SysV semaphore" };

struct convoy {
	int kind, fd, semid, go, stop, err, tagged, ready;
	pthread_mutex_t pi;
	unsigned long long ops;
};

static void *appender_fn(void *arg)
{
	struct convoy *c = arg;
	unsigned long long n = 0, t;
	char buf[4096];

	memset(buf, 'a', sizeof(buf));
	if (pin_cpu(0, -1) || defer_set(0, c->tagged))
		ADD(c->err, 1);
	ADD(c->ready, 1);
	while (!LOAD(c->go))
		usleep(1000);
	while (!LOAD(c->stop)) {
		if (c->kind == CONVOY_PI_MUTEX) {
			if (pthread_mutex_lock(&c->pi)) {
				ADD(c->err, 1);
				break;
			}
			for (t = now_ns(); now_ns() - t < 20000;)
				;
			pthread_mutex_unlock(&c->pi);
		} else if (c->kind == CONVOY_SYSV_SEM) {
			struct sembuf down = { .sem_op = -1 }, up = { .sem_op = 1 };

			if (semop(c->semid, &down, 1)) {
				ADD(c->err, 1);
				break;
			}
			for (t = now_ns(); now_ns() - t < 20000;)
				;
			if (semop(c->semid, &up, 1)) {
				ADD(c->err, 1);
				break;
			}
		} else if (pwrite(c->fd, buf, sizeof(buf), 0) != sizeof(buf)) {
			ADD(c->err, 1);
			break;
		}
		n++;
	}
	__atomic_add_fetch(&c->ops, n, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * One run of @kind: the operations done, and the wake-ups parked while all
 * threads were at it (from 20 ms after the start to the stop) in @parked.
 * 0, or -errno if the lock could not be set up.
 */
static int convoy_run(struct __test_metadata *_metadata, int kind, int tagged,
		      unsigned long long *ops, unsigned long long *parked)
{
	struct convoy c = { .kind = kind, .tagged = tagged, .fd = -1, .semid = -1 };
	pthread_t th[CONVOY_THREADS];
	pthread_mutexattr_t ma;
	struct snap s0, s1;
	int i, ret = 0;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	ret = pthread_mutex_init(&c.pi, &ma);
	pthread_mutexattr_destroy(&ma);
	if (ret)
		return -ret;
	if (kind == CONVOY_RWSEM) {
		c.fd = memfd_create("defer-convoy", 0);
		if (c.fd < 0)
			ret = -errno;
	} else if (kind == CONVOY_SYSV_SEM) {
		c.semid = semget(IPC_PRIVATE, 1, 0600);
		if (c.semid < 0 || semctl(c.semid, 0, SETVAL, 1))
			ret = -errno;
	}
	if (ret)
		goto out;
	for (i = 0; i < CONVOY_THREADS; i++)
		if (pthread_create(&th[i], NULL, appender_fn, &c))
			break;
	while (LOAD(c.ready) < i)
		usleep(1000);
	STORE(c.go, 1);
	usleep(20 * 1000);
	snap_take(&s0);
	usleep(CONVOY_MS * 1000);
	snap_take(&s1);
	STORE(c.stop, 1);
	while (i--)
		pthread_join(th[i], NULL);
	*ops = c.ops;
	*parked = s1.sum.parked - s0.sum.parked;
	EXPECT_EQ(0, c.err) TH_LOG("threads could not be tagged or take the %s",
				   convoy_name[kind]);
out:
	if (c.fd >= 0)
		close(c.fd);
	if (c.semid >= 0)
		semctl(c.semid, 0, IPC_RMID);
	pthread_mutex_destroy(&c.pi);
	return ret;
}

TEST_F_TIMEOUT(defer, lock_handoff, 180)
{
	unsigned long long n[2][CONVOY_REPS], med[2], ops, parked, tagged_ops;
	unsigned long long most_parked;
	int kind, rep, mode, ret;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	spawn_hogs(self);
	for (kind = 0; kind < CONVOY_KINDS; kind++) {
		most_parked = 0;
		tagged_ops = 0;
		for (rep = 0; rep < CONVOY_REPS; rep++) {
			for (mode = 0; mode < 2; mode++) {
				int tagged = rep & 1 ? !mode : mode;

				ret = convoy_run(_metadata, kind, tagged, &ops, &parked);
				if (ret == -ENOSYS)
					break;
				ASSERT_EQ(0, ret) TH_LOG("cannot set up the %s", convoy_name[kind]);
				n[tagged][rep] = ops;
				if (tagged) {
					tagged_ops += ops;
					if (parked > most_parked)
						most_parked = parked;
				}
				TH_LOG("%s rep %d %s: %llu operations by %d threads in %d ms, %llu wake-ups parked",
				       convoy_name[kind], rep, tagged ? "tagged" : "untagged",
				       ops, CONVOY_THREADS, CONVOY_MS, parked);
			}
			if (ret == -ENOSYS)
				break;
		}
		if (ret == -ENOSYS) {
			TH_LOG("%s: not in this kernel, not tried", convoy_name[kind]);
			continue;
		}
		for (mode = 0; mode < 2; mode++) {
			qsort(n[mode], CONVOY_REPS, sizeof(n[mode][0]), cmp_ull);
			med[mode] = n[mode][CONVOY_REPS / 2];
		}
		TH_LOG("%s: median operations untagged %llu, tagged %llu (%.2f); at most %llu wake-ups parked in a tagged run",
		       convoy_name[kind], med[0], med[1], med[0] ? (double)med[1] / med[0] : 0,
		       most_parked);
		ASSERT_LT(0ULL, med[0]);
		EXPECT_LE(med[0] * 8, med[1] * 10)
			TH_LOG("tagged threads convoyed on the %s", convoy_name[kind]);
		/* the lock's wake-ups themselves must not be parked at all */
		EXPECT_LE(most_parked * 100, tagged_ops / CONVOY_REPS)
			TH_LOG("wake-ups that hand over the %s were parked", convoy_name[kind]);
	}
}

/*
 * While wakeups are parked, the scheduler tick must not run the whole load
 * balance softirq each time (with update_blocked_averages()). Hogs on every
 * CPU; a thread allowed anywhere is woken 500 times, each time once it
 * sleeps, untagged (the control) and then tagged. The SCHED softirqs
 * (/proc/softirqs) are counted on the CPUs that parked at least a tenth of
 * the tagged wakeups, in both runs: tagged, they may exceed the control's
 * rate over the same time by no more than a quarter, plus one for every
 * tenth parked wakeup. Raising it on every tick while a wakeup is parked
 * adds about one per parked wakeup there.
 */
/* SCHED softirqs per CPU into @v; 0 or -errno */
static int sched_softirqs(long long *v, int max)
{
	char line[8192], *p, *end;
	int ret = -ENOENT, cpu;
	FILE *f = fopen("/proc/softirqs", "r");

	if (!f)
		return -errno;
	memset(v, 0, max * sizeof(*v));
	while (fgets(line, sizeof(line), f)) {
		p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, "SCHED:", 6))
			continue;
		/* one column per possible CPU, in order */
		for (p += 6, cpu = 0; cpu < max; p = end, cpu++) {
			v[cpu] = strtoll(p, &end, 10);
			if (end == p)
				break;
		}
		ret = 0;
	}
	fclose(f);
	return ret;
}

TEST_F_TIMEOUT(defer, tick_quiet, 120)
{
	static long long before[2][MAX_CPUS], after[2][MAX_CPUS];
	static struct snap s0, s1;
	long long count[2] = { 0 };
	unsigned long long t[2], t0, parked;
	struct measured m;
	double expect;
	int mode, cpu, nparking = 0;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	spawn_hogs(self);
	for (mode = 0; mode < 2; mode++) {
		ASSERT_EQ(0, sched_softirqs(before[mode], MAX_CPUS))
			TH_LOG("no SCHED line in /proc/softirqs");
		ASSERT_EQ(0, snap_take(&s0));
		t0 = now_ns();
		measure_as(_metadata, WAKE_FUTEX, 500, -1, -1, !mode, &m);
		t[mode] = now_ns() - t0;
		ASSERT_EQ(0, snap_take(&s1));
		ASSERT_EQ(0, sched_softirqs(after[mode], MAX_CPUS));
	}
	parked = s1.sum.parked - s0.sum.parked;
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		if ((s1.cpu[cpu].parked - s0.cpu[cpu].parked) * 10 < parked || !parked)
			continue;
		nparking++;
		for (mode = 0; mode < 2; mode++)
			count[mode] += after[mode][cpu] - before[mode][cpu];
		TH_LOG("cpu%d parked %llu: SCHED softirqs untagged %lld, tagged %lld", cpu,
		       s1.cpu[cpu].parked - s0.cpu[cpu].parked,
		       after[0][cpu] - before[0][cpu], after[1][cpu] - before[1][cpu]);
	}
	TH_LOG("500 wakeups: untagged in %.2f s, tagged in %.2f s (%llu parked); SCHED softirqs on the %d parking CPUs %lld, %lld",
	       t[0] / 1e9, t[1] / 1e9, parked, nparking, count[0], count[1]);
	ASSERT_LE(50ULL, parked) TH_LOG("too few wakeups were parked to judge");
	expect = (double)count[0] * t[1] / t[0];
	TH_LOG("the control's rate over the tagged run: %.0f SCHED softirqs", expect);
	EXPECT_LE(count[1], 1.25 * expect + parked / 10.0)
		TH_LOG("parked wakeups made the ticks run the balance softirq");
}

#endif /* DEFER_PLACE */

#ifndef DEFER_PLACE
/*
 * A tagged thread of a child process asleep on a futex, hogs on every CPU:
 * wake it (it is parked) and SIGKILL the child at once; it must be reaped.
 */
#define KILL_ROUNDS	300
#define KILL_BUDGET_NS	(15000 * MS)	/* 16 vCPUs, one TCG thread: about 70 */

struct killee {
	uint32_t word;
	int ready;		/* 1 tagged and about to wait, -1 failed */
	pid_t tid;
};

static void *killee_fn(void *arg)
{
	struct killee *k = arg;
	volatile unsigned long spin = 0;

	if (defer_set(0, true)) {
		STORE(k->ready, -1);
		return NULL;
	}
	STORE(k->tid, gettid());
	STORE(k->ready, 1);
	while (!LOAD(k->word))
		futex_op(&k->word, FUTEX_WAIT, 0);
	for (;;)	/* woken: run until the SIGKILL lands */
		spin++;
	return NULL;
}

static void killee_child(struct killee *k, pid_t ppid)
{
	pthread_t th;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(1);
	if (pthread_create(&th, NULL, killee_fn, k)) {
		STORE(k->ready, -1);
		_exit(1);
	}
	pthread_join(th, NULL);
	_exit(2);
}

TEST_F_TIMEOUT(defer, sigkill_parked, 180)
{
	unsigned long long start, end, t, reap, max_reap = 0;
	int i, ready, asleep, lost = 0;
	static struct snap s0, s1;
	struct killee *k;
	pid_t ppid = getpid(), pid;

	k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, k);
	spawn_hogs(self);
	ASSERT_EQ(0, snap_take(&s0));
	start = now_ns();
	for (i = 0; i < KILL_ROUNDS && now_ns() - start < KILL_BUDGET_NS; i++) {
		memset(k, 0, sizeof(*k));
		pid = fork();
		if (!pid)
			killee_child(k, ppid);
		ASSERT_LT(0, pid);
		end = now_ns() + 10000 * MS;
		while (!LOAD(k->ready) && now_ns() < end)
			usleep(500);
		ready = LOAD(k->ready);
		asleep = ready == 1 ? wait_asleep(pid, k->tid, 10000 * MS) : -1;
		if (asleep) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		ASSERT_EQ(1, ready) TH_LOG("round %d: no tagged thread", i);
		ASSERT_EQ(0, asleep) TH_LOG("round %d: the tagged thread did not sleep", i);

		STORE(k->word, 1);
		futex_op(&k->word, FUTEX_WAKE, 1);
		kill(pid, SIGKILL);
		t = now_ns();
		if (reap_within(pid, 2000 * MS)) {
			lost++;
			TH_LOG("round %d: not reaped within 2 s (thread state %c)", i,
			       thread_state(pid, k->tid));
			ASSERT_EQ(0, reap_within(pid, 10000 * MS))
				TH_LOG("round %d: not reaped within 12 s", i);
		}
		reap = now_ns() - t;
		if (reap > max_reap)
			max_reap = reap;
	}
	ASSERT_EQ(0, snap_take(&s1));
	TH_LOG("%d rounds in %.1f s: %d not reaped in 2 s, slowest reap %.1f ms, %llu parked",
	       i, (now_ns() - start) / 1e9, lost, max_reap / 1e6,
	       s1.sum.parked - s0.sum.parked);
	EXPECT_EQ(0, lost);
	EXPECT_LE(50, i) TH_LOG("too few rounds within %llu s", KILL_BUDGET_NS / MS / 1000);
	/* most are parked (a hog on every CPU); a quarter shows the case ran */
	EXPECT_LE((unsigned long long)i / 4, s1.sum.parked - s0.sum.parked)
		TH_LOG("the wakeups before the kill were not parked");
	munmap(k, sizeof(*k));
}

/*
 * Pairs of tagged threads handing a futex back and forth: each handoff is
 * one wakeup. The turn holder stops the pair (PP_STOP) when told to or when
 * the total reaches the target, so that each side's sends are exactly the
 * other side's receives; a lost wakeup leaves its pair stuck.
 */
#define PP_STOP		0x80000000u

struct pp;

struct pp_end {
	pthread_t th;
	pid_t tid;
	int side;
	unsigned long long sends, recvs;
	struct pp_pair *pair;
};

struct pp_pair {
	_Alignas(64) uint32_t word;	/* handoffs so far; odd: side 1's turn */
	struct pp *pp;
	struct pp_end end[2];
};

struct pp {
	struct pp_pair *pair;
	int npairs, stop, exited, err;
	unsigned long long target, total;
};

static void *pp_fn(void *arg)
{
	struct pp_end *e = arg;
	struct pp_pair *p = e->pair;
	struct pp *pp = p->pp;
	uint32_t v;

	if (pin_cpu(0, -1) || defer_set(0, true))
		ADD(pp->err, 1);
	STORE(e->tid, gettid());
	for (;;) {
		v = LOAD(p->word);
		if (v == PP_STOP)
			break;
		if ((v & 1) != (uint32_t)e->side) {
			futex_op(&p->word, FUTEX_WAIT_PRIVATE, v);
			continue;
		}
		if (v)
			BUMP(e->recvs);
		if (LOAD(pp->stop) || LOAD(pp->total) >= LOAD(pp->target)) {
			STORE(p->word, PP_STOP);
			futex_op(&p->word, FUTEX_WAKE_PRIVATE, 1);
			break;
		}
		BUMP(e->sends);
		ADD(pp->total, 1);
		STORE(p->word, v + 1);
		futex_op(&p->word, FUTEX_WAKE_PRIVATE, 1);
	}
	ADD(pp->exited, 1);
	return NULL;
}

/* Start @npairs pairs; stopped by pp->stop or at @target handoffs in all. */
static int pp_start(struct pp *pp, int npairs, unsigned long long target)
{
	int i, s;

	memset(pp, 0, sizeof(*pp));
	if (posix_memalign((void **)&pp->pair, 64, npairs * sizeof(*pp->pair)))
		return -ENOMEM;
	memset(pp->pair, 0, npairs * sizeof(*pp->pair));
	pp->npairs = npairs;
	pp->target = target;
	for (i = 0; i < npairs; i++) {
		pp->pair[i].pp = pp;
		for (s = 0; s < 2; s++) {
			pp->pair[i].end[s].side = s;
			pp->pair[i].end[s].pair = &pp->pair[i];
			if (pthread_create(&pp->pair[i].end[s].th, NULL, pp_fn,
					   &pp->pair[i].end[s]))
				return -EAGAIN;
		}
	}
	for (i = 0; i < npairs; i++)
		for (s = 0; s < 2; s++)
			while (!LOAD(pp->pair[i].end[s].tid))
				usleep(1000);
	return 0;
}

static unsigned long long pp_handoffs(struct pp_pair *p)
{
	return __atomic_load_n(&p->end[0].sends, __ATOMIC_RELAXED) +
	       __atomic_load_n(&p->end[1].sends, __ATOMIC_RELAXED);
}

static void pp_report(struct __test_metadata *_metadata, struct pp *pp)
{
	struct pp_pair *p;
	int i;

	for (i = 0; i < pp->npairs; i++) {
		p = &pp->pair[i];
		if (LOAD(p->word) == PP_STOP)
			continue;
		TH_LOG("pair %d stuck at handoff %u: sends %llu/%llu recvs %llu/%llu, states %c/%c",
		       i, LOAD(p->word), p->end[0].sends, p->end[1].sends, p->end[0].recvs,
		       p->end[1].recvs, thread_state(getpid(), p->end[0].tid),
		       thread_state(getpid(), p->end[1].tid));
	}
}

/*
 * Wait until every pair has handed off again (a stuck pair lost a wakeup);
 * 0, or the number of pairs that did not within @timeout_ns.
 */
static int pp_progress(struct __test_metadata *_metadata, struct pp *pp,
		       unsigned long long timeout_ns)
{
	unsigned long long *seen, end = now_ns() + timeout_ns;
	int i, left;

	seen = calloc(pp->npairs, sizeof(*seen));
	if (!seen)
		return pp->npairs;
	for (i = 0; i < pp->npairs; i++)
		seen[i] = pp_handoffs(&pp->pair[i]);
	do {
		usleep(10 * 1000);
		for (i = 0, left = 0; i < pp->npairs; i++)
			left += pp_handoffs(&pp->pair[i]) == seen[i];
	} while (left && now_ns() < end);
	if (left)
		pp_report(_metadata, pp);
	free(seen);
	return left;
}

/*
 * Wait for every thread to exit; -EDEADLK if no handoff happened for
 * @stall_ns while some are still running, -ETIMEDOUT at @deadline.
 */
static int pp_wait(struct __test_metadata *_metadata, struct pp *pp,
		   unsigned long long deadline, unsigned long long stall_ns)
{
	unsigned long long total, last = LOAD(pp->total), at = now_ns(), t;
	int i, s;

	while (LOAD(pp->exited) < 2 * pp->npairs) {
		usleep(20 * 1000);
		t = now_ns();
		total = LOAD(pp->total);
		if (total != last) {
			last = total;
			at = t;
		}
		if (t - at > stall_ns || t > deadline) {
			TH_LOG("%s after %llu handoffs, %d of %d threads exited",
			       t > deadline ? "out of time" : "no progress", total,
			       LOAD(pp->exited), 2 * pp->npairs);
			pp_report(_metadata, pp);
			return t > deadline ? -ETIMEDOUT : -EDEADLK;
		}
	}
	for (i = 0; i < pp->npairs; i++)
		for (s = 0; s < 2; s++)
			pthread_join(pp->pair[i].end[s].th, NULL);
	return 0;
}

/* Each side's sends are the other side's receives; the number of pairs where not. */
static int pp_unbalanced(struct __test_metadata *_metadata, struct pp *pp,
			 unsigned long long *sum)
{
	struct pp_pair *p;
	int i, bad = 0;

	*sum = 0;
	for (i = 0; i < pp->npairs; i++) {
		p = &pp->pair[i];
		*sum += p->end[0].sends + p->end[1].sends;
		if (p->end[0].sends == p->end[1].recvs && p->end[1].sends == p->end[0].recvs)
			continue;
		TH_LOG("pair %d: sends %llu/%llu, recvs %llu/%llu", i, p->end[0].sends,
		       p->end[1].sends, p->end[0].recvs, p->end[1].recvs);
		bad++;
	}
	return bad;
}

/*
 * After a short settle, every parked wakeup has been placed, one way or
 * another; the number parked since @s0.
 */
static unsigned long long check_all_placed(struct __test_metadata *_metadata,
					   const struct snap *s0)
{
	static struct snap s1;

	usleep(50 * 1000);
	ASSERT_EQ(0, snap_take(&s1));
	TH_LOG("parked %llu; placed at balance %llu, newly idle %llu, forced %llu; direct %llu",
	       s1.sum.parked - s0->sum.parked, s1.sum.balance - s0->sum.balance,
	       s1.sum.idle - s0->sum.idle, s1.sum.forced - s0->sum.forced,
	       s1.sum.direct - s0->sum.direct);
	EXPECT_EQ(s1.sum.parked, placed(&s1.sum))
		TH_LOG("since boot %llu parked but %llu placed", s1.sum.parked,
		       placed(&s1.sum));
	return s1.sum.parked - s0->sum.parked;
}

/*
 * Hogs on every CPU and tagged pairs handing off all the time while cpu1
 * goes offline and online: every pair keeps going through each step, and
 * all stop when told, every wakeup accounted for.
 */
TEST_F_TIMEOUT(defer, cpu_hotplug, 200)
{
	unsigned long long sum;
	static struct snap s0;
	int i, c, hog1 = -1;
	struct pp *pp;

	if (self->ncpus < 2 || access(CPU1_ONLINE, W_OK))
		SKIP(return, "cpu1 cannot be offlined here");
	for (i = 0; i < self->ncpus; i++)
		if (self->cpus[i] == 1)
			hog1 = i;
	ASSERT_LE(0, hog1) TH_LOG("cpu1 is not online");
	pp = calloc(1, sizeof(*pp));	/* left to stuck threads on failure */
	ASSERT_NE(NULL, pp);
	spawn_hogs(self);
	ASSERT_EQ(0, snap_take(&s0));
	ASSERT_EQ(0, pp_start(pp, self->ncpus, ~0ULL));
	ASSERT_EQ(0, pp->err) TH_LOG("pair threads could not be unpinned or tagged");
	ASSERT_EQ(0, pp_progress(_metadata, pp, 5000 * MS));

	for (c = 0; c < 5; c++) {
		ASSERT_EQ(0, write_file(CPU1_ONLINE, "0")) TH_LOG("offline cpu1, round %d", c);
		usleep(100 * 1000);
		EXPECT_EQ(0, pp_progress(_metadata, pp, 5000 * MS))
			TH_LOG("pairs stuck after cpu1 went offline, round %d", c);
		ASSERT_EQ(0, write_file(CPU1_ONLINE, "1")) TH_LOG("online cpu1, round %d", c);
		pin_cpu(self->hogs[hog1], 1);
		usleep(100 * 1000);
		EXPECT_EQ(0, pp_progress(_metadata, pp, 5000 * MS))
			TH_LOG("pairs stuck after cpu1 came back, round %d", c);
	}

	STORE(pp->stop, 1);
	ASSERT_EQ(0, pp_wait(_metadata, pp, now_ns() + 5000 * MS, 5000 * MS))
		TH_LOG("threads did not all stop within 5 s");
	EXPECT_EQ(0, pp_unbalanced(_metadata, pp, &sum));
	EXPECT_EQ(LOAD(pp->total), sum);
	TH_LOG("%d pairs, %llu handoffs across 5 offline/online cycles of cpu1",
	       pp->npairs, sum);
	kill_hogs(self);
	EXPECT_LT(0ULL, check_all_placed(_metadata, &s0))
		TH_LOG("no wakeup parked, with a hog on every CPU");
	free(pp->pair);
	free(pp);
}

/*
 * Changes to parked tasks whose last CPU is offline. Tagged threads of a
 * child process sleep on cpu1, allowed on cpus 1-3; cpu1 goes offline and
 * a hog spins on every other CPU, so that a wakeup is parked (on cpu2 or
 * cpu3) with task_cpu() still cpu1. A prober process wakes one thread and
 * at once changes it: its affinity to cpu3, its policy, a ptrace seize and
 * interrupt, a cgroup v2 freeze, its cpuset's CPUs to cpu3 and back, a move
 * to a cpuset of cpu3 and back; a fresh thread each round, with the
 * longest window (100 ms), so that the thread is still parked when the
 * slower calls begin, and through them but for ptrace and the freeze,
 * which wait for it to run, and the cgroup moves, which outlast the window
 * under TCG: every kind must meet parked threads. Each call must
 * complete: one that hangs (sched_setaffinity() used to wait in D state
 * for a migration stopper queued on the offline cpu1) is reported after
 * PARK_STUCK_NS and left behind, and the cpuset calls, which would hang
 * holding cpuset_mutex and cpus_read_lock and with them CPU hotplug, are
 * then not tried. Every woken thread must run.
 */
#define PARK_ROUNDS	10
/* at 16 vCPUs under TCG a few in 10 wakeups stay parked through the call */
#define PARK_AFF_ROUNDS	40
#define PARK_STUCK_NS	(30000 * MS)

/* The freeze wakes every sleeper, which then sleeps elsewhere: it is last */
enum { OP_AFFINITY, OP_SETSCHED, OP_PTRACE, OP_CPUSET, OP_CGMOVE, OP_FREEZE, OP_NR };
static const char *const op_name[] = {
	"sched_setaffinity", "sched_setattr", "ptrace seize+interrupt",
	"cpuset.cpus write", "cpuset cgroup move", "cgroup freeze",
};

/* Those that hold cpuset_mutex and cpus_read_lock */
static bool op_is_cpuset(int op)
{
	return op == OP_CPUSET || op == OP_CGMOVE;
}

#define PARK_SLEEPERS	(PARK_AFF_ROUNDS + PARK_ROUNDS * (OP_NR - 1))

struct parkees {
	uint32_t word[PARK_SLEEPERS];	/* 0 asleep, 1 woken */
	pid_t tid[PARK_SLEEPERS];
	int ran_on[PARK_SLEEPERS];	/* the CPU once woken, -1 before */
	int err;			/* sleepers that could not pin or tag */
	int next;			/* the prober's next sleeper */
	int rounds;			/* rounds the prober completed */
	int hits;			/* rounds whose thread was parked throughout */
	int started;			/* rounds whose thread was parked at the call */
	int op_errno;			/* of the prober's failed call */
	char all[64];			/* the possible CPUs, a cpu list */
};

struct parkee {
	struct parkees *pk;
	int i;
};

static void *parkee_fn(void *arg)
{
	struct parkee *a = arg;
	struct parkees *pk = a->pk;
	int i = a->i;

	if (pin_cpu(0, 1) || defer_set(0, true))
		ADD(pk->err, 1);
	STORE(pk->ran_on[i], -1);
	STORE(pk->tid[i], gettid());
	while (!LOAD(pk->word[i]))
		futex_op(&pk->word[i], FUTEX_WAIT, 0);
	STORE(pk->ran_on[i], sched_getcpu());
	for (;;)
		futex_op(&pk->word[i], FUTEX_WAIT, 1);
	return NULL;
}

static void parkees_child(struct parkees *pk, pid_t ppid)
{
	static struct parkee args[PARK_SLEEPERS];
	pthread_t th;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(1);
	for (i = 0; i < PARK_SLEEPERS; i++) {
		args[i].pk = pk;
		args[i].i = i;
		if (pthread_create(&th, NULL, parkee_fn, &args[i])) {
			ADD(pk->err, 1);
			break;
		}
	}
	for (;;)
		pause();
}

/* The CPU thread @tid of process @pid last ran on (stat field 39), or -1. */
static int thread_last_cpu(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')');
	for (field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

/* Wait for "frozen @on" in @cg's cgroup.events; 0, or -ETIMEDOUT. */
static int cg_wait_frozen(const char *cg, int on, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;
	char path[256], buf[256], want[16];

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	snprintf(want, sizeof(want), "frozen %d", on);
	do {
		if (read_file(path, buf, sizeof(buf)) > 0 && strstr(buf, want))
			return 0;
		usleep(1000);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

/*
 * cgroup v2 PARK_CG_A (every CPU) and PARK_CG_B (cpu3): 2 with cpusets,
 * 1 with PARK_CG_A only (no cpuset controller), 0 without cgroup v2.
 */
static int park_cgroups(const char *all)
{
	mount("cgroup2", CGROOT, "cgroup2", 0, NULL);
	rmdir(PARK_CG_B);
	rmdir(PARK_CG_A);
	if (access(CGROOT "/cgroup.controllers", F_OK) || mkdir(PARK_CG_A, 0755))
		return 0;
	/* the cpu controller, where there is one: sched_move_task() as well */
	write_file(CGROOT "/cgroup.subtree_control", "+cpu");
	if (write_file(CGROOT "/cgroup.subtree_control", "+cpuset") ||
	    cg_write(PARK_CG_A, "cpuset.cpus", all) || mkdir(PARK_CG_B, 0755) ||
	    cg_write(PARK_CG_B, "cpuset.cpus", "3"))
		return 1;
	return 2;
}

/* The change @op to thread @tid of process @pid; 0 or -errno. */
static int park_op(struct parkees *pk, int op, pid_t pid, pid_t tid)
{
	char spid[16];
	cpu_set_t set;
	int st, ret;

	switch (op) {
	case OP_AFFINITY:
		CPU_ZERO(&set);
		CPU_SET(3, &set);
		return sched_setaffinity(tid, sizeof(set), &set) ? -errno : 0;
	case OP_SETSCHED:
		return set_attr(tid, SCHED_BATCH, 0, 0, SCHED_FLAG_DEFER_WAKEUP);
	case OP_PTRACE:
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0))
			return -errno;
		if (waitpid(tid, &st, __WALL) != tid)
			return -errno;
		return ptrace(PTRACE_DETACH, tid, 0, 0) ? -errno : 0;
	case OP_FREEZE:
		ret = cg_write(PARK_CG_A, "cgroup.freeze", "1");
		if (!ret)
			ret = cg_wait_frozen(PARK_CG_A, 1, 5000 * MS);
		if (!ret)
			ret = cg_write(PARK_CG_A, "cgroup.freeze", "0");
		return ret ? ret : cg_wait_frozen(PARK_CG_A, 0, 5000 * MS);
	case OP_CPUSET:
		ret = cg_write(PARK_CG_A, "cpuset.cpus", "3");
		return ret ? ret : cg_write(PARK_CG_A, "cpuset.cpus", pk->all);
	default:
		snprintf(spid, sizeof(spid), "%d", pid);
		ret = cg_write(PARK_CG_B, "cgroup.procs", spid);
		return ret ? ret : cg_write(PARK_CG_A, "cgroup.procs", spid);
	}
}

/* The prober: @n rounds of waking a fresh sleeper and changing it at once */
static int park_prober(struct parkees *pk, int op, pid_t pid, int n)
{
	int r, i, ret;

	for (r = 0; r < n; r++) {
		i = LOAD(pk->next);
		STORE(pk->next, i + 1);
		STORE(pk->word[i], 1);
		futex_op(&pk->word[i], FUTEX_WAKE, 1);
		if (LOAD(pk->ran_on[i]) < 0 && thread_last_cpu(pid, pk->tid[i]) == 1)
			ADD(pk->started, 1);
		ret = park_op(pk, op, pid, pk->tid[i]);
		if (ret) {
			STORE(pk->op_errno, -ret);
			return 1;
		}
		/*
		 * Still on cpu1 and not run: parked before the call and still
		 * parked after it (placement moves task_cpu() off cpu1).
		 */
		if (LOAD(pk->ran_on[i]) < 0 && thread_last_cpu(pid, pk->tid[i]) == 1)
			ADD(pk->hits, 1);
		STORE(pk->rounds, r + 1);
	}
	return 0;
}

/*
 * Run the prober for @op in a child, watched: 0 if it completed its rounds,
 * -EDEADLK if it stopped making progress in D state (it is left there),
 * -ETIMEDOUT if it stopped otherwise (killed), or its failed call's -errno.
 */
static int park_probe(struct __test_metadata *_metadata, struct parkees *pk,
		      int op, pid_t pid, int n)
{
	unsigned long long at = now_ns();
	int st, r, last = 0;
	pid_t prober;
	char state;

	STORE(pk->rounds, 0);
	STORE(pk->hits, 0);
	STORE(pk->started, 0);
	STORE(pk->op_errno, 0);
	prober = fork();
	if (!prober)
		_exit(park_prober(pk, op, pid, n));
	if (prober < 0)
		return -errno;
	for (;;) {
		if (waitpid(prober, &st, WNOHANG) == prober) {
			if (WIFEXITED(st) && !WEXITSTATUS(st))
				return 0;
			return LOAD(pk->op_errno) ? -LOAD(pk->op_errno) : -EIO;
		}
		r = LOAD(pk->rounds);
		if (r != last) {
			last = r;
			at = now_ns();
		}
		if (now_ns() - at > PARK_STUCK_NS)
			break;
		usleep(10 * 1000);
	}
	state = thread_state(prober, prober);
	TH_LOG("%s: no progress in %llu s after %d of %d rounds, the caller in state %c%s",
	       op_name[op], PARK_STUCK_NS / MS / 1000, last, n, state,
	       state == 'D' ? ": left there" : "");
	if (state == 'D')
		return -EDEADLK;
	kill(prober, SIGKILL);
	waitpid(prober, NULL, 0);
	return -ETIMEDOUT;
}

TEST_F_TIMEOUT(defer, parked_changes, 300)
{
	int i, op, ret, first, cg, on3, n, stuck = 0, have = 0, aff_hits = 0;
	unsigned long long end;
	static struct snap s0, s1;
	pid_t ppid = getpid(), pid;
	struct parkees *pk;
	char spid[16];
	cpu_set_t set;

	for (i = 0; i < self->ncpus; i++)
		have |= self->cpus[i] >= 1 && self->cpus[i] <= 3 ? 1 << self->cpus[i] : 0;
	if (self->ncpus < 4 || have != 0xe || access(CPU1_ONLINE, W_OK))
		SKIP(return, "needs 4 CPUs, cpus 1-3 online and cpu1 to go offline");
	pk = mmap(NULL, sizeof(*pk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pk);
	ASSERT_LT(0, read_file("/sys/devices/system/cpu/possible", pk->all, sizeof(pk->all)));
	pk->all[strcspn(pk->all, "\n")] = 0;
	cg = park_cgroups(pk->all);
	if (cg < 2)
		TH_LOG("no cgroup v2%s: not tried with the cgroup changes",
		       cg ? " cpuset controller" : "");

	pid = fork();
	if (!pid)
		parkees_child(pk, ppid);
	ASSERT_LT(0, pid);
	self->parkees = pid;
	end = now_ns() + 10000 * MS;
	for (i = 0; i < PARK_SLEEPERS; i++)
		while (!LOAD(pk->tid[i]) && !LOAD(pk->err) && now_ns() < end)
			usleep(1000);
	ASSERT_EQ(0, LOAD(pk->err)) TH_LOG("sleepers could not be created, pinned or tagged");
	for (i = 0; i < PARK_SLEEPERS; i++) {
		ASSERT_NE(0, LOAD(pk->tid[i])) TH_LOG("sleeper %d did not start", i);
		ASSERT_EQ(0, wait_asleep(pid, pk->tid[i], 10000 * MS));
	}
	snprintf(spid, sizeof(spid), "%d", pid);
	if (cg)
		ASSERT_EQ(0, cg_write(PARK_CG_A, "cgroup.procs", spid));

	/* asleep on cpu1, pinned there; now allowed on cpus 1-3 */
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	CPU_SET(2, &set);
	CPU_SET(3, &set);
	for (i = 0; i < PARK_SLEEPERS; i++) {
		ASSERT_EQ(0, sched_setaffinity(pk->tid[i], sizeof(set), &set));
		ASSERT_EQ(1, thread_last_cpu(pid, pk->tid[i])) TH_LOG("sleeper %d", i);
	}
	ASSERT_EQ(0, write_file(CPU1_ONLINE, "0"));
	for (i = 0; i < PARK_SLEEPERS; i++)
		EXPECT_EQ(1, thread_last_cpu(pid, pk->tid[i]))
			TH_LOG("sleeper %d moved when cpu1 went offline", i);
	for (i = 0; i < self->ncpus; i++)
		if (self->cpus[i] != 1)
			self->hogs[self->nhogs++] = spawn_hog(self->cpus[i]);
	usleep(200 * 1000);

	/* the longest window: a wake-up stays parked through the slower calls */
	ASSERT_EQ(0, write_file(BOUND, "100000"));
	ASSERT_EQ(0, snap_take(&s0));
	for (op = 0; op < OP_NR; op++) {
		if ((op == OP_FREEZE && !cg) || (op_is_cpuset(op) && cg < 2))
			continue;
		/*
		 * The cpuset calls would hang holding cpuset_mutex and
		 * cpus_read_lock (and with them CPU hotplug, the teardown's
		 * too): only tried once the affinity change has completed on
		 * threads that were really parked.
		 */
		if (op_is_cpuset(op) && (stuck || !aff_hits)) {
			TH_LOG("%s: not tried, the affinity change %s", op_name[op],
			       stuck ? "got stuck" : "never met a parked thread");
			continue;
		}
		first = LOAD(pk->next);
		n = op == OP_AFFINITY ? PARK_AFF_ROUNDS : PARK_ROUNDS;
		ret = park_probe(_metadata, pk, op, pid, n);
		stuck += ret == -EDEADLK;
		EXPECT_EQ(0, ret) TH_LOG("%s of a parked task whose last CPU is offline: %s",
					 op_name[op], strerror(-ret));
		if (ret == -EDEADLK || ret == -ETIMEDOUT)
			continue;

		/* every woken thread runs; one moved to cpu3 runs there */
		on3 = 0;
		for (i = first; i < LOAD(pk->next); i++) {
			end = now_ns() + 5000 * MS;
			while (LOAD(pk->ran_on[i]) < 0 && now_ns() < end)
				usleep(1000);
			EXPECT_LE(0, LOAD(pk->ran_on[i]))
				TH_LOG("%s: woken sleeper %d did not run within 5 s (state %c)",
				       op_name[op], i, thread_state(pid, pk->tid[i]));
			on3 += LOAD(pk->ran_on[i]) == 3;
		}
		TH_LOG("%s: of %d rounds, %d met a thread parked when the call began, %d parked throughout",
		       op_name[op], n, LOAD(pk->started), LOAD(pk->hits));
		/* a case that never met a parked thread showed nothing */
		EXPECT_LT(0, LOAD(pk->started))
			TH_LOG("%s never met a parked thread", op_name[op]);
		/*
		 * ptrace and freeze wait for the thread to stop: it must run;
		 * a cgroup move (two, with rcu_sync in each) outlasts 100 ms
		 */
		if (op != OP_PTRACE && op != OP_FREEZE && op != OP_CGMOVE)
			EXPECT_LT(0, LOAD(pk->hits))
				TH_LOG("%s never completed on a parked thread", op_name[op]);
		if (op == OP_AFFINITY) {
			aff_hits = LOAD(pk->hits);
			TH_LOG("%s: %d of %d ran on cpu3 first", op_name[op], on3, n);
			/* those moved while parked run on cpu3, their only CPU */
			EXPECT_LE(aff_hits, on3);
		}
	}
	ASSERT_EQ(0, snap_take(&s1));
	TH_LOG("%d sleepers woken, %llu wakeups parked", LOAD(pk->next),
	       s1.sum.parked - s0.sum.parked);
	EXPECT_LT(0ULL, s1.sum.parked - s0.sum.parked)
		TH_LOG("no wakeup was parked: the case did not run");
	park_cleanup(self);
	kill_hogs(self);
	munmap(pk, sizeof(*pk));
}

/*
 * A task in an I/O wait is never parked: nr_iowait and PSI would stay
 * charged to its old CPU while it waited for its placement. io_uring waits
 * for completions interruptibly, with in_iowait set while the task has
 * requests in flight: a tagged thread that waits in io_uring_enter() for
 * a read of a pipe, woken by the write (the completion's task work), must
 * not be parked. The control is the same thread waiting in a plain read()
 * of the pipe, in the same run, with a hog on every CPU: most of its
 * wake-ups are parked, so the case is one that would park.
 */
#define IOW_ROUNDS	40

struct iow {
	int fd[2];		/* the pipe */
	int ring;		/* io_uring, or -1: plain read() */
	uint32_t done;		/* rounds the thread has finished */
	int stop, err;
	pid_t tid;
	char *sq, *cq;
	struct io_uring_sqe *sqe;
	struct io_uring_params p;
};

static int iow_ring(struct iow *w)
{
	memset(&w->p, 0, sizeof(w->p));
	w->ring = syscall(__NR_io_uring_setup, 4, &w->p);
	if (w->ring < 0)
		return -errno;
	w->sq = mmap(NULL, w->p.sq_off.array + w->p.sq_entries * sizeof(__u32),
		     PROT_READ | PROT_WRITE, MAP_SHARED, w->ring, IORING_OFF_SQ_RING);
	w->cq = mmap(NULL, w->p.cq_off.cqes + w->p.cq_entries * sizeof(struct io_uring_cqe),
		     PROT_READ | PROT_WRITE, MAP_SHARED, w->ring, IORING_OFF_CQ_RING);
	w->sqe = mmap(NULL, w->p.sq_entries * sizeof(*w->sqe), PROT_READ | PROT_WRITE,
		      MAP_SHARED, w->ring, IORING_OFF_SQES);
	if (w->sq == MAP_FAILED || w->cq == MAP_FAILED || w->sqe == MAP_FAILED)
		return -ENOMEM;
	return 0;
}

/* Read one byte of the pipe through the ring, waiting in io_uring_enter() */
static int iow_ring_read(struct iow *w, char *c)
{
	unsigned int *tail = (unsigned int *)(w->sq + w->p.sq_off.tail);
	unsigned int *array = (unsigned int *)(w->sq + w->p.sq_off.array);
	unsigned int *chead = (unsigned int *)(w->cq + w->p.cq_off.head);
	unsigned int *ctail = (unsigned int *)(w->cq + w->p.cq_off.tail);
	struct io_uring_cqe *cqes = (struct io_uring_cqe *)(w->cq + w->p.cq_off.cqes);
	unsigned int t = *tail, h;
	int res;

	memset(&w->sqe[0], 0, sizeof(w->sqe[0]));
	w->sqe[0].opcode = IORING_OP_READ;
	w->sqe[0].fd = w->fd[0];
	w->sqe[0].addr = (unsigned long)c;
	w->sqe[0].len = 1;
	array[t & (w->p.sq_entries - 1)] = 0;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, w->ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	h = *chead;
	if (h == __atomic_load_n(ctail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	res = cqes[h & (w->p.cq_entries - 1)].res;
	__atomic_store_n(chead, h + 1, __ATOMIC_RELEASE);
	return res == 1 ? 0 : res < 0 ? res : -EIO;
}

static void *iow_fn(void *arg)
{
	struct iow *w = arg;
	char c;
	int ret;

	/* tagged, fair: it inherited the waker's SCHED_FIFO */
	if (set_attr(0, SCHED_OTHER, 0, 0, SCHED_FLAG_DEFER_WAKEUP)) {
		STORE(w->err, errno ?: EINVAL);
		return NULL;
	}
	STORE(w->tid, gettid());
	while (!LOAD(w->stop)) {
		if (w->ring >= 0)
			ret = iow_ring_read(w, &c);
		else
			ret = read(w->fd[0], &c, 1) == 1 ? 0 : -EIO;
		if (ret) {
			STORE(w->err, -ret);
			break;
		}
		ADD(w->done, 1);
	}
	return NULL;
}

/* IOW_ROUNDS wake-ups of the thread; how many were parked, or -errno */
static long long iow_run(bool ring)
{
	struct iow w = { .ring = -1 };
	static struct snap s0, s1;
	long long ret = 0;
	pthread_t th;
	uint32_t d;
	int i;

	if (pipe(w.fd))
		return -errno;
	if (ring && (ret = iow_ring(&w)))
		goto out;
	if (pthread_create(&th, NULL, iow_fn, &w)) {
		ret = -EAGAIN;
		goto out;
	}
	while (!LOAD(w.tid) && !LOAD(w.err))
		usleep(1000);
	if (snap_take(&s0))
		ret = -EIO;
	for (i = 0; i < IOW_ROUNDS && !ret && !LOAD(w.err); i++) {
		d = LOAD(w.done);
		if (wait_asleep(getpid(), w.tid, 5000 * MS) || write(w.fd[1], "x", 1) != 1)
			ret = -EIO;
		while (!ret && LOAD(w.done) == d && !LOAD(w.err))
			usleep(200);
	}
	if (!ret && snap_take(&s1))
		ret = -EIO;
	if (!ret)
		ret = s1.sum.parked - s0.sum.parked;
	if (LOAD(w.err))
		ret = -LOAD(w.err);
	STORE(w.stop, 1);
	if (write(w.fd[1], "x", 1) != 1)
		ret = -EIO;
	pthread_join(th, NULL);
out:
	close(w.fd[0]);
	close(w.fd[1]);
	if (w.ring >= 0)
		close(w.ring);
	return ret;
}

TEST_F_TIMEOUT(defer, iowait_not_parked, 120)
{
	long long plain, iowait;

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	spawn_hogs(self);
	/* the waker is not delayed by the hogs */
	ASSERT_EQ(0, set_attr(0, SCHED_FIFO, 0, 2, 0));
	plain = iow_run(false);
	iowait = iow_run(true);
	set_attr(0, SCHED_OTHER, 0, 0, 0);
	kill_hogs(self);
	ASSERT_LE(0, plain) TH_LOG("plain read(): %s", strerror(-plain));
	ASSERT_LE(0, iowait) TH_LOG("io_uring: %s", strerror(-iowait));
	TH_LOG("%d wake-ups each: %lld parked from read(), %lld from an io_uring wait with I/O in flight",
	       IOW_ROUNDS, plain, iowait);
	ASSERT_LE(IOW_ROUNDS / 2, plain) TH_LOG("the control's wake-ups were not parked");
	EXPECT_EQ(0, iowait) TH_LOG("a task in an I/O wait was parked");
}

/*
 * A parked thread whose process is sent SIGKILL, or whose cgroup is frozen,
 * must not wait out the window: the killer (the OOM killer waits for the
 * victim's memory) and the freezer wait for it. Window 100 ms, a hog on
 * every CPU; the tagged thread of a child process is woken (and parked),
 * then at once the child is killed (time until it can be reaped) or its
 * cgroup frozen (time until cgroup.events says frozen). The controls are
 * the same with an untagged thread, and a parked wake-up alone (time until
 * the thread runs), and a SIGCONT (a signal whose wake-up finds the
 * thread parked but asks nothing of it: it must not place it). Limits are
 * 2x the control's p90 plus 1 ms; all parked rounds but one must be placed
 * by the kill or the freeze itself (debugfs placed_hurry: a drain may take
 * the thread first), which a kill that waits for the window or a balance
 * fails.
 */
#define KF_ROUNDS	10
#define KF_ARMS		6
#define KF_CG		CGROOT "/defer-test-kf"

struct kf {
	uint32_t word;
	int ready;		/* 1 tagged as asked and about to wait, -1 failed */
	int tag;
	pid_t tid;
	unsigned long long ran;
};

static void *kf_fn(void *arg)
{
	struct kf *k = arg;
	volatile unsigned long spin = 0;

	if (defer_set(0, k->tag)) {
		STORE(k->ready, -1);
		return NULL;
	}
	STORE(k->tid, gettid());
	STORE(k->ready, 1);
	while (!LOAD(k->word))
		futex_op(&k->word, FUTEX_WAIT, 0);
	STORE(k->ran, now_ns());
	for (;;)	/* woken: run until killed or frozen */
		spin++;
	return NULL;
}

static void kf_child(struct kf *k, pid_t ppid)
{
	pthread_t th;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the parent is SCHED_FIFO */
	if (getppid() != ppid || set_attr(0, SCHED_OTHER, 0, 0, 0) ||
	    pthread_create(&th, NULL, kf_fn, k)) {
		STORE(k->ready, -1);
		_exit(1);
	}
	pthread_join(th, NULL);
	_exit(2);
}

/* Poll until @cg's cgroup.events says "frozen 1"; 0, or -ETIMEDOUT */
static int kf_wait_frozen(const char *cg, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;
	char path[256], buf[256];

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	do {
		if (read_file(path, buf, sizeof(buf)) > 0 && strstr(buf, "frozen 1"))
			return 0;
		usleep(100);
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

/*
 * One round of @arm (0 parked, 1 kill, 2 kill untagged, 3 freeze, 4 freeze
 * untagged, 5 SIGCONT): the latency in @lat, whether the thread was parked
 * and whether the kill or freeze placed it (@parked, @hurried).
 */
static int kf_round(struct kf *k, int arm, bool freeze, unsigned long long *lat,
		    bool *parked, bool *hurried)
{
	bool tag = arm != 2 && arm != 4;
	pid_t ppid = getpid(), pid;
	unsigned long long t, end;
	struct snap s0, s1;
	struct pollfd pfd;
	int ret = 0, pfdn;
	char spid[16];

	memset(k, 0, sizeof(*k));
	k->tag = tag;
	pid = fork();
	if (!pid)
		kf_child(k, ppid);
	if (pid < 0)
		return -errno;
	pfdn = syscall(SYS_pidfd_open, pid, 0);
	end = now_ns() + 10000 * MS;
	while (!LOAD(k->ready) && now_ns() < end)
		usleep(500);
	if (pfdn < 0 || LOAD(k->ready) != 1 || wait_asleep(pid, k->tid, 10000 * MS))
		ret = -ESRCH;
	snprintf(spid, sizeof(spid), "%d", pid);
	if (!ret && freeze && cg_write(KF_CG, "cgroup.procs", spid))
		ret = -EIO;
	if (!ret && snap_take(&s0))
		ret = -EIO;
	if (ret)
		goto out;

	t = now_ns();
	STORE(k->word, 1);
	futex_op(&k->word, FUTEX_WAKE, 1);
	/* timed from before the call: a hurry places the thread inside it */
	if (arm == 1 || arm == 2) {
		t = now_ns();
		kill(pid, SIGKILL);
		pfd = (struct pollfd){ .fd = pfdn, .events = POLLIN };
		if (poll(&pfd, 1, 5000) != 1)
			ret = -ETIME;
	} else if (arm == 3 || arm == 4) {
		t = now_ns();
		if (cg_write(KF_CG, "cgroup.freeze", "1"))
			ret = -EIO;
		if (!ret && kf_wait_frozen(KF_CG, 5000 * MS))
			ret = -ETIME;
	} else {
		/* SIGCONT: ignored, but its wake-up of stopped threads finds it */
		if (arm == 5)
			kill(pid, SIGCONT);
		while (!LOAD(k->ran) && now_ns() - t < 5000 * MS)
			usleep(100);
		if (!LOAD(k->ran))
			ret = -ETIME;
	}
	*lat = now_ns() - t;
	if (arm == 0 || arm == 5)
		*lat = LOAD(k->ran) - t;
	if (!ret && snap_take(&s1))
		ret = -EIO;
	if (!ret) {
		*parked = s1.sum.parked > s0.sum.parked;
		*hurried = s1.sum.hurry > s0.sum.hurry;
	}
out:
	kill(pid, SIGKILL);
	if (freeze)
		cg_write(KF_CG, "cgroup.freeze", "0");
	waitpid(pid, NULL, 0);
	if (pfdn >= 0)
		close(pfdn);
	return ret;
}

TEST_F_TIMEOUT(defer, kill_freeze_while_parked, 240)
{
	static const char *const what[KF_ARMS] = {
		"parked", "SIGKILL", "SIGKILL untagged", "freeze", "freeze untagged", "SIGCONT"
	};
	unsigned long long lat[KF_ARMS][KF_ROUNDS], med[KF_ARMS], p90[KF_ARMS];
	int n[KF_ARMS] = { 0 }, unparked[KF_ARMS] = { 0 }, hurries[KF_ARMS] = { 0 };
	unsigned long long limit_kill, limit_freeze;
	int arm, i;
	struct kf *k;
	char buf[32];

	if (self->ncpus < 2)
		SKIP(return, "needs 2 CPUs");
	k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, k);
	if (access(CGROOT "/cgroup.controllers", F_OK))
		mount("cgroup2", CGROOT, "cgroup2", 0, NULL);
	rmdir(KF_CG);
	ASSERT_EQ(0, mkdir(KF_CG, 0755)) TH_LOG("no cgroup v2 at %s", CGROOT);
	ASSERT_EQ(0, access(KF_CG "/cgroup.freeze", W_OK)) TH_LOG("no cgroup v2 freezer");
	snprintf(buf, sizeof(buf), "%d", 100000);
	ASSERT_EQ(0, write_file(BOUND, buf));
	spawn_hogs(self);
	/* the waker is not delayed by the hogs between its two calls */
	ASSERT_EQ(0, set_attr(0, SCHED_FIFO, 0, 2, 0));
	for (i = 0; i < KF_ROUNDS; i++) {
		for (arm = 0; arm < KF_ARMS; arm++) {
			bool parked = false, hurried = false;
			unsigned long long l = 0;
			int ret, try;

			/* a tagged arm again while the wake-up was not parked */
			for (try = 0; try < 3; try++) {
				ret = kf_round(k, arm, arm == 3 || arm == 4, &l, &parked,
					       &hurried);
				if (ret || arm == 2 || arm == 4 || parked)
					break;
				unparked[arm]++;
			}
			if (ret) {
				TH_LOG("%s round %d: %s", what[arm], i, strerror(-ret));
				break;
			}
			if (arm != 2 && arm != 4 && !parked)
				continue;
			hurries[arm] += hurried;
			lat[arm][n[arm]++] = l;
		}
		if (arm < KF_ARMS)
			break;
	}
	set_attr(0, SCHED_OTHER, 0, 0, 0);
	kill_hogs(self);
	rmdir(KF_CG);
	munmap(k, sizeof(*k));
	ASSERT_EQ(KF_ROUNDS, i);
	for (arm = 0; arm < KF_ARMS; arm++) {
		ASSERT_LE(KF_ROUNDS / 3, n[arm])
			TH_LOG("%s: the thread was parked in %d of %d rounds", what[arm], n[arm],
			       KF_ROUNDS);
		qsort(lat[arm], n[arm], sizeof(lat[arm][0]), cmp_ull);
		med[arm] = lat[arm][n[arm] / 2];
		p90[arm] = lat[arm][n[arm] * 9 / 10];
		TH_LOG("%-16s %2d rounds (%d tries not parked), %2d placed by the call: median %.3f ms, p90 %.3f ms, max %.3f ms",
		       what[arm], n[arm], unparked[arm], hurries[arm], med[arm] / 1e6,
		       p90[arm] / 1e6, lat[arm][n[arm] - 1] / 1e6);
	}
	limit_kill = 2 * p90[2] + MS;
	limit_freeze = 2 * p90[4] + MS;
	/*
	 * A balance places a parked thread well within the window (every 30
	 * ms or so at 2 vCPUs), so the times alone may not tell a kill that
	 * waits for that from one that does not: the count of placements by
	 * the call does.
	 */
	if (limit_kill >= med[0] || limit_freeze >= med[0])
		TH_LOG("the parked median (%.3f ms) is within a limit (%.3f, %.3f ms): only the placements by the call tell",
		       med[0] / 1e6, limit_kill / 1e6, limit_freeze / 1e6);
	EXPECT_LE(n[1] - 1, hurries[1])
		TH_LOG("SIGKILL: %d of %d parked rounds placed by the kill", hurries[1], n[1]);
	EXPECT_LE(n[3] - 1, hurries[3])
		TH_LOG("freeze: %d of %d parked rounds placed by the freeze", hurries[3], n[3]);
	/* nothing else is placed that way: SIGCONT's wake-up asks nothing */
	EXPECT_EQ(0, hurries[0] + hurries[2] + hurries[4] + hurries[5])
		TH_LOG("placed by a call in the rounds without a kill or freeze");
	EXPECT_LE(med[1], limit_kill)
		TH_LOG("a parked thread sent SIGKILL waited for its placement");
	EXPECT_LE(med[3], limit_freeze)
		TH_LOG("a parked thread whose cgroup was frozen waited for its placement");
}

/*
 * A million wakeups: a pair of tagged threads per CPU handing off until the
 * total is reached, none lost, and afterwards every parked wakeup placed.
 * DEFER_WAKEUPS sets the total; without it, a VM too slow for a million in
 * WAKEUPS_BUDGET_S does what fits in that time, but never fewer than
 * WAKEUPS_FLOOR (the count is logged).
 */
#define WAKEUPS_DEFAULT		1000000ULL
#define WAKEUPS_FLOOR		200000ULL
#define WAKEUPS_BUDGET_S	90
#define WAKEUPS_CALIBRATE_S	3

TEST_F_TIMEOUT(defer, million_wakeups, 300)
{
	unsigned long long target = WAKEUPS_DEFAULT, fits, done, sum, t0, t1;
	const char *env = getenv("DEFER_WAKEUPS");
	static struct snap s0;
	struct pp *pp;
	double rate;

	if (env && *env)
		target = strtoull(env, NULL, 0);
	ASSERT_LT(0ULL, target);
	pp = calloc(1, sizeof(*pp));	/* left to stuck threads on failure */
	ASSERT_NE(NULL, pp);
	ASSERT_EQ(0, snap_take(&s0));
	t0 = now_ns();
	ASSERT_EQ(0, pp_start(pp, self->ncpus, target));
	ASSERT_EQ(0, pp->err) TH_LOG("pair threads could not be unpinned or tagged");

	sleep(WAKEUPS_CALIBRATE_S);
	done = LOAD(pp->total);
	rate = done / ((now_ns() - t0) / 1e9);
	if (!(env && *env) && done < target && rate * WAKEUPS_BUDGET_S < target) {
		fits = (unsigned long long)(rate * WAKEUPS_BUDGET_S) / 10000 * 10000;
		if (fits < WAKEUPS_FLOOR)
			fits = WAKEUPS_FLOOR;
		TH_LOG("%.0f wakeups/s: %llu would take %.0f s; doing %llu (DEFER_WAKEUPS sets it)",
		       rate, target, target / rate, fits);
		target = fits;
		STORE(pp->target, target);
	}

	ASSERT_EQ(0, pp_wait(_metadata, pp, t0 + 270000 * MS, 15000 * MS));
	t1 = now_ns();
	EXPECT_EQ(0, pp_unbalanced(_metadata, pp, &sum));
	EXPECT_EQ(LOAD(pp->total), sum);
	EXPECT_LE(target, sum);
	TH_LOG("%llu wakeups by %d pairs in %.1f s (%.0f/s)", sum, pp->npairs,
	       (t1 - t0) / 1e9, sum / ((t1 - t0) / 1e9));
	EXPECT_LT(0ULL, check_all_placed(_metadata, &s0))
		TH_LOG("not one of the wakeups was parked");
	free(pp->pair);
	free(pp);
}

#endif /* !DEFER_PLACE */

TEST_HARNESS_MAIN
