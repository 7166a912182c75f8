// SPDX-License-Identifier: GPL-2.0
/*
 * tools/fleet/fleet-job on emulated NUMA nodes (numa=fake=8, see vm):
 * a job's memory lands only on its nodes, its class sets its CPU policy,
 * an out-of-memory best-effort job is killed inside its own nodes while a
 * latency-sensitive job keeps its memory and its process, resizing
 * migrates memory, and bad input is refused with nothing left behind.
 *
 * The workload is this program itself: "jobs_test --hold MIB [interleave]"
 * allocates and touches MIB MiB (interleaved over every node if asked, so
 * that only the cpuset can keep the pages on the job's nodes), prints where
 * its pages are (move_pages(2)), and prints again for every line on stdin
 * until EOF.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kselftest_harness.h"
#include "jobs.h"

#define CG	"/sys/fs/cgroup"
#define JOBS	CG "/fleet-jobs"
#define MAXN	64
#define MPOL_INTERLEAVE_ 3

/* ---- the workload ------------------------------------------------------ */

static void report(char *buf, size_t len)
{
	size_t n = len / 4096, hist[MAXN] = { 0 };
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	size_t busy = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		pages[i] = buf + i * 4096;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		printf("error move_pages %d\n", errno);
		fflush(stdout);
		return;
	}
	/*
	 * A page that compaction or khugepaged is moving at this instant
	 * has no node (a migration entry: -ENOENT); ask again for those,
	 * one at a time, for up to a second. A page really missing still
	 * counts as missing.
	 */
	for (size_t i = 0; i < n; i++) {
		for (int try = 0; status[i] < 0 && try < 50; try++) {
			if (!try)
				busy++;
			usleep(20000);
			syscall(SYS_move_pages, 0, 1, &pages[i], NULL, &status[i], 0);
		}
		if (status[i] >= 0 && status[i] < MAXN)
			hist[status[i]]++;
		else
			err = status[i];
	}
	printf("nodes");
	for (int i = 0; i < MAXN; i++)
		if (hist[i])
			printf(" %d=%zu", i, hist[i]);
	/* after the counts, which the parser stops before */
	printf(" busy=%zu", busy);
	if (err)
		printf(" last-error=%d", err);
	printf("\n");
	fflush(stdout);
	free(pages);
	free(status);
}

static int hold(int argc, char **argv)
{
	size_t len = strtoul(argv[2], NULL, 0) << 20;
	unsigned long all = ~0UL;
	char line[64], *buf;

	if (argc > 3 && !strcmp(argv[3], "interleave") &&
	    syscall(SYS_set_mempolicy, MPOL_INTERLEAVE_, &all, MAXN))
		return 3;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 4;
	for (size_t i = 0; i < len; i += 4096)
		buf[i] = 1;
	report(buf, len);
	while (fgets(line, sizeof(line), stdin))
		report(buf, len);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

/* Run "./fleet-job ARGS" through the shell; exit status, output in @out. */
static int __attribute__((format(printf, 3, 4)))
job(char *out, size_t size, const char *fmt, ...)
{
	char cmd[4200], tmp[4096];
	size_t len = 0;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "./fleet-job %s 2>&1", tmp);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (out && size)
		out[0] = '\0';
	while (fgets(tmp, sizeof(tmp), f)) {
		if (out && len < size - 1) {
			snprintf(out + len, size - len, "%s", tmp);
			len = strlen(out);
		}
	}
	st = pclose(f);
	/* one line, for the log */
	for (char *p = out; p && *p; p++)
		if (*p == '\n')
			*p = p[1] ? '|' : '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static unsigned long long job_mask(const char *name, const char *file)
{
	char path[256], buf[256];

	snprintf(path, sizeof(path), JOBS "/%s/%s", name, file);
	if (read_str(path, buf, sizeof(buf)))
		return 0;
	return mask_of(buf);
}

/* Jobs now, as one string of names (to compare before and after). */
static void jobs_now(char *buf, size_t size)
{
	struct dirent *de;
	DIR *d = opendir(JOBS);
	size_t len = 0;

	snprintf(buf, size, "%s", d ? "" : "(none)");
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.' && len < size)
			len += snprintf(buf + len, size - len, "%s ", de->d_name);
	closedir(d);
}

struct holder {
	pid_t pid;
	FILE *in, *out;
	char last[1024];	/* its last report, for the log */
};

/* Start "fleet-job run JOB -- ./jobs_test --hold MIB [MODE]" (JOB NULL: no job). */
static int start_holder(struct holder *h, const char *jobname, int mib, const char *mode)
{
	int to[2], from[2];
	char mb[16];

	snprintf(mb, sizeof(mb), "%d", mib);
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -1;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (!h->pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		if (jobname)
			execl("./fleet-job", "fleet-job", "run", jobname, "--",
			      "./jobs_test", "--hold", mb, mode, (char *)NULL);
		else
			execl("./jobs_test", "jobs_test", "--hold", mb, mode, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	h->in = fdopen(to[1], "w");
	h->out = fdopen(from[0], "r");
	return 0;
}

/*
 * The holder's next report: pages per node into @pages; total pages, or
 * -1 if it died or reported an error.
 */
static long holder_nodes(struct holder *h, long *pages)
{
	char *line = h->last, *p;
	long total = 0;

	memset(pages, 0, MAXN * sizeof(*pages));
	line[0] = '\0';
	if (!fgets(line, sizeof(h->last), h->out) || strncmp(line, "nodes", 5))
		return -1;
	for (p = line + 5; *p == ' '; ) {
		int n;
		long v;
		int used;

		if (sscanf(p, " %d=%ld%n", &n, &v, &used) != 2 || n < 0 || n >= MAXN)
			break;
		pages[n] = v;
		total += v;
		p += used;
	}
	return total;
}

static long holder_again(struct holder *h, long *pages)
{
	fputs("again\n", h->in);
	fflush(h->in);
	return holder_nodes(h, pages);
}

static int stop_holder(struct holder *h)
{
	int st = 0;

	fclose(h->in);
	fclose(h->out);
	waitpid(h->pid, &st, 0);
	return st;
}

static long pages_outside(const long *pages, unsigned long long nodes)
{
	long n = 0;

	for (int i = 0; i < MAXN; i++)
		if (!(nodes >> i & 1))
			n += pages[i];
	return n;
}

static int nodes_used(const long *pages)
{
	int n = 0;

	for (int i = 0; i < MAXN; i++)
		n += pages[i] > 0;
	return n;
}

static void cleanup_jobs(void)
{
	struct dirent *de;
	DIR *d = opendir(JOBS);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.')
			job(NULL, 0, "destroy %s", de->d_name);
	closedir(d);
}

/* ---- tests -------------------------------------------------------------- */

FIXTURE(jobs) {
	char out[4096];
};

FIXTURE_SETUP(jobs)
{
	if (online_nodes() < 8)
		SKIP(return, "needs 8 memory nodes (boot with numa=fake=8)");
	cleanup_jobs();
}

FIXTURE_TEARDOWN(jobs)
{
	cleanup_jobs();
	rmdir(CG "/nc/sub");
	rmdir(CG "/nc");
}

/*
 * Memory interleaved over every node lands only on the job's two nodes,
 * and on both; the same workload outside any job spreads wider (the
 * control: the check can fail). cpuset.cpus is the CPUs of those nodes.
 */
TEST_F(jobs, pages_land_on_job_nodes)
{
	unsigned long long mems;
	long pages[MAXN], total;
	struct holder h;

	ASSERT_EQ(0, job(self->out, sizeof(self->out), "create first --class batch --nodes 2"))
		TH_LOG("%s", self->out);
	ASSERT_EQ(0, job(self->out, sizeof(self->out), "create t --class batch --nodes 2"))
		TH_LOG("%s", self->out);
	mems = job_mask("t", "cpuset.mems");
	ASSERT_EQ(2, __builtin_popcountll(mems));
	ASSERT_EQ(0ULL, mems & job_mask("first", "cpuset.mems"));
	ASSERT_EQ(cpus_of(mems), job_mask("t", "cpuset.cpus"));
	/* numa_emu_cpus=spread: the two jobs have CPUs of their own */
	if (spread_mode()) {
		EXPECT_NE(0ULL, job_mask("t", "cpuset.cpus"));
		EXPECT_EQ(0ULL, job_mask("t", "cpuset.cpus") & job_mask("first", "cpuset.cpus"));
	}

	ASSERT_EQ(0, start_holder(&h, NULL, 64, "interleave"));
	total = holder_nodes(&h, pages);
	stop_holder(&h);
	ASSERT_EQ(64 * 256, total);
	TH_LOG("outside any job: %ld of %ld pages off the job's nodes, on %d nodes",
	       pages_outside(pages, mems), total, nodes_used(pages));
	ASSERT_GT(pages_outside(pages, mems), 0);

	ASSERT_EQ(0, start_holder(&h, "t", 64, "interleave"));
	total = holder_nodes(&h, pages);
	stop_holder(&h);
	ASSERT_EQ(64 * 256, total);
	TH_LOG("in job t (nodes %#llx): %ld pages off its nodes, on %d nodes",
	       mems, pages_outside(pages, mems), nodes_used(pages));
	EXPECT_EQ(0, pages_outside(pages, mems));
	EXPECT_EQ(2, nodes_used(pages));

	ASSERT_EQ(0, job(self->out, sizeof(self->out), "list"));
	TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "|t "));
	EXPECT_NE(NULL, strstr(self->out, "batch"));
}

/* Each class's CPU policy, and --cpu-max. */
TEST_F(jobs, class_policy)
{
	char path[256], buf[256];
	long pol;
	FILE *f;

	ASSERT_EQ(0, job(self->out, sizeof(self->out), "create l --class ls --nodes 1 --cpu-max 1.5"))
		TH_LOG("%s", self->out);
	ASSERT_EQ(0, job(NULL, 0, "create b --class batch --nodes 1"));
	ASSERT_EQ(0, job(NULL, 0, "create e --class be --nodes 1"));
	ASSERT_EQ(0, read_str(JOBS "/l/cpu.weight", buf, sizeof(buf)));
	EXPECT_STREQ("10000", buf);
	ASSERT_EQ(0, read_str(JOBS "/l/cpu.max", buf, sizeof(buf)));
	EXPECT_STREQ("150000 100000", buf);
	ASSERT_EQ(0, read_str(JOBS "/b/cpu.weight", buf, sizeof(buf)));
	EXPECT_STREQ("100", buf);
	ASSERT_EQ(0, read_str(JOBS "/b/cpu.max", buf, sizeof(buf)));
	EXPECT_STREQ("max 100000", buf);
	ASSERT_EQ(0, read_str(JOBS "/e/cpu.weight", buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	ASSERT_EQ(0, read_str(JOBS "/e/memory.oom.group", buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	ASSERT_EQ(0, read_str(JOBS "/e/cpu.idle", buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	ASSERT_EQ(0, read_str(JOBS "/b/cpu.idle", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);

	/* a command in e runs under SCHED_GIDLE (8), one in b under SCHED_OTHER */
	f = popen("./fleet-job run e -- sh -c 'cut -d\" \" -f41 /proc/$$/stat; cat /proc/self/cgroup'", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	pol = strtol(buf, NULL, 10);
	ASSERT_NE(NULL, fgets(path, sizeof(path), f));
	pclose(f);
	EXPECT_EQ(8, pol);
	EXPECT_STREQ("0::/fleet-jobs/e\n", path);
	f = popen("./fleet-job run b -- sh -c 'cut -d\" \" -f41 /proc/$$/stat'", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	pclose(f);
	EXPECT_EQ(0, strtol(buf, NULL, 10));
}

/*
 * A best-effort job that allocates past its one node (512 MiB) is
 * OOM-killed; a latency-sensitive job on two other nodes keeps its
 * process and every page where it was, and sees no OOM kill. The ls job
 * holds 700 MiB, more than the be job can reach, so an OOM killer that
 * chose among all tasks by size (not only those that may use the full
 * node) would kill the ls job instead.
 */
TEST_F(jobs, be_oom_stays_in_its_nodes)
{
	long pages[MAXN], total, again[MAXN];
	unsigned long long ls_mems;
	struct holder ls, be;
	char ev[512];
	FILE *f;
	int st;

	ASSERT_EQ(0, job(NULL, 0, "create l --class ls --nodes 2"));
	ASSERT_EQ(0, job(NULL, 0, "create e --class be --nodes 1"));
	ls_mems = job_mask("l", "cpuset.mems");
	ASSERT_EQ(0, start_holder(&ls, "l", 700, ""));
	total = holder_nodes(&ls, pages);
	TH_LOG("ls holder: %s", ls.last);
	ASSERT_EQ(700 * 256, total);
	ASSERT_EQ(0, pages_outside(pages, ls_mems));

	ASSERT_EQ(0, start_holder(&be, "e", 1024, ""));
	EXPECT_EQ(-1, holder_nodes(&be, again));
	st = stop_holder(&be);
	TH_LOG("be job: exit status %#x", st);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	ASSERT_EQ(0, read_str(JOBS "/e/memory.events", ev, sizeof(ev)));
	EXPECT_NE(NULL, strstr(ev, "oom_kill ")) TH_LOG("%s", ev);
	EXPECT_EQ(NULL, strstr(ev, "oom_kill 0")) TH_LOG("%s", ev);
	/* the kill was confined to the tasks allowed on the full node */
	f = popen("dmesg | grep -o 'constraint=CONSTRAINT_[A-Z_]*' | tail -n 1", "r");
	ASSERT_NE(NULL, f);
	if (!fgets(ev, sizeof(ev), f))
		ev[0] = '\0';
	pclose(f);
	EXPECT_STREQ("constraint=CONSTRAINT_CPUSET\n", ev);

	/* the ls holder is alive, with every page where it was */
	EXPECT_EQ(0, kill(ls.pid, 0));
	EXPECT_EQ(total, holder_again(&ls, again)) TH_LOG("holder: %s", ls.last);
	EXPECT_EQ(0, memcmp(pages, again, sizeof(pages)));
	ASSERT_EQ(0, read_str(JOBS "/l/memory.events", ev, sizeof(ev)));
	EXPECT_NE(NULL, strstr(ev, "oom_kill 0")) TH_LOG("%s", ev);
	EXPECT_EQ(0, stop_holder(&ls));
}

/*
 * Eight creates at once, one node each, on the seven nodes left: seven
 * succeed on seven different nodes, one fails, and nothing is half-made.
 */
TEST_F(jobs, concurrent_creates_share_nothing)
{
	unsigned long long seen = 0;
	pid_t pids[8];
	int ok = 0;

	ASSERT_EQ(0, job(NULL, 0, "create first --class batch --nodes 1"));
	seen = job_mask("first", "cpuset.mems");
	for (int i = 0; i < 8; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i]) {
			char name[16];

			snprintf(name, sizeof(name), "c%d", i);
			_exit(job(NULL, 0, "create %s --class be --nodes 1", name));
		}
	}
	for (int i = 0; i < 8; i++) {
		char name[16];
		int st;

		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		snprintf(name, sizeof(name), "c%d", i);
		if (WIFEXITED(st) && !WEXITSTATUS(st)) {
			unsigned long long m = job_mask(name, "cpuset.mems");

			EXPECT_EQ(1, __builtin_popcountll(m));
			EXPECT_EQ(0ULL, m & seen) TH_LOG("%s got node %#llx, already held (%#llx)",
							 name, m, seen);
			seen |= m;
			ok++;
		} else {
			char path[64];

			snprintf(path, sizeof(path), JOBS "/%s", name);
			EXPECT_NE(0, access(path, F_OK)) TH_LOG("%s failed but exists", name);
		}
	}
	EXPECT_EQ(7, ok);
}

/* Shrinking a job moves its pages off the node it loses; growing adds free nodes. */
TEST_F(jobs, resize_migrates_memory)
{
	unsigned long long before, after;
	long pages[MAXN], total;
	struct holder h;

	ASSERT_EQ(0, job(NULL, 0, "create r --class batch --nodes 2"));
	before = job_mask("r", "cpuset.mems");
	ASSERT_EQ(0, start_holder(&h, "r", 64, "interleave"));
	total = holder_nodes(&h, pages);
	ASSERT_EQ(64 * 256, total);
	ASSERT_EQ(2, nodes_used(pages));

	ASSERT_EQ(0, job(self->out, sizeof(self->out), "resize r --nodes 1"))
		TH_LOG("%s", self->out);
	after = job_mask("r", "cpuset.mems");
	ASSERT_EQ(1, __builtin_popcountll(after));
	ASSERT_EQ(after, before & after);
	EXPECT_EQ(cpus_of(after), job_mask("r", "cpuset.cpus"));
	EXPECT_EQ(total, holder_again(&h, pages));
	TH_LOG("after the shrink to %#llx: %ld pages elsewhere", after, pages_outside(pages, after));
	EXPECT_EQ(0, pages_outside(pages, after));

	ASSERT_EQ(0, job(self->out, sizeof(self->out), "resize r --nodes 3"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(3, __builtin_popcountll(job_mask("r", "cpuset.mems")));
	EXPECT_EQ(after, job_mask("r", "cpuset.mems") & after);
	EXPECT_EQ(0, stop_holder(&h));
}

/* destroy kills what runs in the job and removes it. */
TEST_F(jobs, destroy_kills_and_removes)
{
	long pages[MAXN];
	struct holder h;
	struct stat sb;
	int st;

	ASSERT_EQ(0, job(NULL, 0, "create d --class be --nodes 1"));
	ASSERT_EQ(0, start_holder(&h, "d", 8, ""));
	ASSERT_EQ(8 * 256, holder_nodes(&h, pages));
	ASSERT_EQ(0, job(self->out, sizeof(self->out), "destroy d")) TH_LOG("%s", self->out);
	EXPECT_NE(0, stat(JOBS "/d", &sb));
	st = stop_holder(&h);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) TH_LOG("status %#x", st);
}

/* Bad input: a clear error, a failing status, and no job made or changed. */
TEST_F(jobs, bad_input_leaves_nothing)
{
	static const char * const bad[] = {
		"create a/b --class batch --nodes 1",
		"create x.y --class batch --nodes 1",
		"create '' --class batch --nodes 1",
		"create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa --class batch --nodes 1",
		"create n --class gold --nodes 1",
		"create n --class batch --nodes 0",
		"create n --class batch --nodes two",
		"create n --class batch --nodes 8",
		"create n --class batch",
		"create n --class be --nodes 1 --cpu-max abc",
		"create n --class be --nodes 1 --cpu-max -1",
		/* refused by the kernel (quota below 1 ms), after the mkdir */
		"create n --class be --nodes 1 --cpu-max 0.001",
		"create keep --class batch --nodes 1",
		"run nosuch -- true",
		"run keep true",
		"resize nosuch --nodes 1",
		"resize keep --nodes 0",
		"resize keep --nodes 8",
		"destroy nosuch",
		"destroy ../..",
		"--root /tmp create n --class batch --nodes 1",
		"--root " CG "/nc/sub create n --class batch --nodes 1",
		"frobnicate",
	};
	char before[1024], after[1024], mems[64], mems2[64];

	ASSERT_EQ(0, job(NULL, 0, "create keep --class batch --nodes 1"));
	ASSERT_EQ(0, job(NULL, 0, "create other --class ls --nodes 6"));
	/* a cgroup without the cpuset controller for --root */
	mkdir(CG "/nc", 0755);
	mkdir(CG "/nc/sub", 0755);
	ASSERT_EQ(0, read_str(JOBS "/keep/cpuset.mems", mems, sizeof(mems)));
	jobs_now(before, sizeof(before));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = job(self->out, sizeof(self->out), "%s", bad[i]);

		TH_LOG("fleet-job %s: status %d: %s", bad[i], st, self->out);
		EXPECT_NE(0, st);
		EXPECT_NE(NULL, strstr(self->out, "fleet-job: ") ?: strstr(self->out, "Usage: "));
		jobs_now(after, sizeof(after));
		EXPECT_STREQ(before, after);
		ASSERT_EQ(0, read_str(JOBS "/keep/cpuset.mems", mems2, sizeof(mems2)));
		EXPECT_STREQ(mems, mems2);
	}
	EXPECT_NE(0, access(CG "/nc/sub/fleet-jobs", F_OK));
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--hold"))
		return hold(argc, argv);
	return test_harness_run(argc, argv);
}
