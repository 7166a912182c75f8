// SPDX-License-Identifier: GPL-2.0
/*
 * tools/fleet/gidle, installed beside this test: -p refuses one thread of
 * a process whose other threads have other policies (exit status 1, and
 * says why), -t moves it alone, -a moves every thread; misuse is exit
 * status 2. Needs root. A separate program so that tests/gidle/vm runs it
 * at 2 vCPUs only: the tool is the same at any CPU count, and a Python
 * start takes about 3 s at 16 vCPUs in one TCG thread.
 */
#include "../lib/fleet_test.h"
#include "gidle.h"

#include <linux/futex.h>
#include <sys/prctl.h>

#include "../../kselftest_harness.h"

/*
 * Run ./gidle (the tool, installed beside this test) with @argv; its exit
 * status, and what it wrote to stderr in @err.
 */
static int run_gidle(char *const argv[], char *err, size_t size)
{
	int fds[2], st;
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fds[1], 2);
		execv("./gidle", argv);
		_exit(127);
	}
	close(fds[1]);
	while (size > 1 && (r = read(fds[0], err + n, size - 1 - n)) > 0)
		n += r;
	if (size)
		err[n] = 0;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* A child process of two threads, both asleep; the second's TID in @tid */
static pid_t two_threads(pid_t *tid)
{
	struct sibling *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_t th;
	pid_t pid;

	if (s == MAP_FAILED)
		return -1;
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&th, NULL, sibling_fn, s))
			_exit(1);
		for (;;)
			pause();
	}
	while (pid > 0 && !__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE)) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = -1;	/* no thread: it exited */
			break;
		}
		usleep(1000);
	}
	*tid = s->tid;
	munmap(s, sizeof(*s));
	return pid;
}

/* tools/fleet/gidle: -p refuses a thread alone, -t moves it, -a them all */
TEST(tool_moves_threads)
{
	struct sched_attr attr = { .size = sizeof(attr) };
	char spid[16], stid[16], err[512];
	pid_t pid, tid;

	if (access("./gidle", X_OK))
		SKIP(return, "./gidle (tools/fleet/gidle) is not installed beside the test");
	pid = two_threads(&tid);
	ASSERT_LT(0, pid);
	snprintf(spid, sizeof(spid), "%d", pid);
	snprintf(stid, sizeof(stid), "%d", tid);

	/* misuse: argparse's exit status 2, nothing moved */
	EXPECT_EQ(2, run_gidle((char *const[]){ "gidle", "-a", "-t", "-p", spid, NULL }, err,
			       sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "not both")) TH_LOG("stderr: %s", err);
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(tid));
	/* refused (exit status 1), saying why */
	EXPECT_EQ(1, run_gidle((char *const[]){ "gidle", "-p", stid, NULL }, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "other classes")) TH_LOG("stderr: %s", err);
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(tid));
	/* -t keeps nice and the deferred-wakeup tag */
	attr.sched_policy = SCHED_OTHER;
	attr.sched_nice = 3;
	attr.sched_flags = SCHED_FLAG_DEFER_WAKEUP;
	ASSERT_EQ(0, fleet_sched_setattr(tid, &attr));
	EXPECT_EQ(0, run_gidle((char *const[]){ "gidle", "-t", "-p", stid, NULL }, err,
			       sizeof(err))) TH_LOG("stderr: %s", err);
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(tid));
	EXPECT_EQ(SCHED_OTHER, sched_getscheduler(pid));
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	ASSERT_EQ(0, fleet_sched_getattr(tid, &attr));
	EXPECT_EQ(3, attr.sched_nice);
	EXPECT_NE(0, attr.sched_flags & SCHED_FLAG_DEFER_WAKEUP);
	EXPECT_EQ(0, set_policy(tid, SCHED_OTHER));
	EXPECT_EQ(0, run_gidle((char *const[]){ "gidle", "-a", "-p", spid, NULL }, err,
			       sizeof(err))) TH_LOG("stderr: %s", err);
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(tid));
	EXPECT_EQ(SCHED_GIDLE, sched_getscheduler(pid));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST_HARNESS_MAIN
