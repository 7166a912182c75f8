// SPDX-License-Identifier: GPL-2.0
/*
 * What slab_strict_numa costs a task confined by its cgroup cpuset (Fleet's
 * extension) against one confined by a memory policy (MPOL_BIND, the
 * mainline mechanism), side by side in one boot. Each sample is a child
 * pinned to node 0's CPU that creates and closes OPS eventfds (two slab
 * objects each: the eventfd context and the struct file) and reports the
 * time per pair. Modes:
 *
 *   free            root cpuset, no memory policy (not redirected)
 *   mpol-local      MPOL_BIND to node 0 (its CPU's node)
 *   cpuset-local    cpuset.mems 0
 *   mpol-remote     MPOL_BIND to node 1 (objects from the other node)
 *   cpuset-remote   cpuset.mems 1
 *
 * REPS rounds, each running every mode once in a rotated order; the table
 * gives the median with min-max and the ratio cpuset/mpol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CG	"/sys/fs/cgroup/slab-strict-bench"
#define MODES	5
#define MAXREPS	64
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif

static const char *const name[MODES] = {
	"free", "mpol-local", "cpuset-local", "mpol-remote", "cpuset-remote",
};

static void die(const char *what)
{
	fprintf(stderr, "slab_strict_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int write_path(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, val, strlen(val)) < 0)
		ret = -1;
	close(fd);
	return ret;
}

static int node_cpu(int nid)
{
	char path[96];
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nid);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &cpu) != 1)
			cpu = -1;
		fclose(f);
	}
	return cpu;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One sample: ns per eventfd create+close in mode @m */
static double sample(int m, long ops)
{
	int pfd[2], st;
	double ns = -1;
	pid_t pid;

	if (pipe(pfd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		unsigned long mask = 1UL << (m >= 3);
		char me[16], sub[64];
		cpu_set_t set;
		double t;
		long i;
		int fd;

		if (m == 2 || m == 4) {
			snprintf(sub, sizeof(sub), CG "/n%d/cgroup.procs", m == 4);
			snprintf(me, sizeof(me), "%d", getpid());
			if (write_path(sub, me))
				_exit(2);
		} else if (m) {
			if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask, sizeof(mask) * 8))
				_exit(3);
		}
		CPU_ZERO(&set);
		CPU_SET(node_cpu(0), &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(4);
		for (i = 0; i < ops / 10; i++)	/* warm up */
			close(eventfd(0, 0));
		t = now_ns();
		for (i = 0; i < ops; i++) {
			fd = eventfd(0, 0);
			if (fd < 0)
				_exit(5);
			close(fd);
		}
		t = (now_ns() - t) / ops;
		if (write(pfd[1], &t, sizeof(t)) != sizeof(t))
			_exit(6);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "slab_strict_bench: %s sample failed (status %d)\n", name[m], st);
		exit(1);
	}
	return ns;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static double ns[MODES][MAXREPS];
	double med[MODES];
	int reps, r, i, m;
	long ops;
	static char cmd[4096];
	FILE *f;

	if (argc != 3 || (reps = atoi(argv[1])) < 1 || reps > MAXREPS ||
	    (ops = atol(argv[2])) < 1000) {
		fprintf(stderr, "usage: slab_strict_bench REPS(1-%d) OPS(>=1000)\n", MAXREPS);
		return 2;
	}
	f = fopen("/proc/cmdline", "r");
	if (!f || !fgets(cmd, sizeof(cmd), f))
		die("/proc/cmdline");
	fclose(f);
	if (node_cpu(0) < 0 || node_cpu(1) < 0 || node_cpu(0) == node_cpu(1)) {
		fprintf(stderr, "slab_strict_bench: needs nodes 0 and 1 with a CPU each (bench/slab-strict/vm)\n");
		return 1;
	}
	if (write_path("/sys/fs/cgroup/cgroup.subtree_control", "+cpuset") ||
	    (mkdir(CG, 0755) && errno != EEXIST) ||
	    write_path(CG "/cgroup.subtree_control", "+cpuset") ||
	    (mkdir(CG "/n0", 0755) && errno != EEXIST) ||
	    (mkdir(CG "/n1", 0755) && errno != EEXIST) ||
	    write_path(CG "/n0/cpuset.mems", "0") ||
	    write_path(CG "/n1/cpuset.mems", "1"))
		die("cgroups");

	for (r = 0; r < reps; r++)
		for (i = 0; i < MODES; i++) {
			m = (r + i) % MODES;
			ns[m][r] = sample(m, ops);
		}
	rmdir(CG "/n0");
	rmdir(CG "/n1");
	rmdir(CG);

	printf("slab_strict_numa %s; %d rounds of %ld eventfd create+close on node 0's CPU\n",
	       strstr(cmd, "slab_strict_numa") ? "on" : "OFF (the bench measures nothing of it)",
	       reps, ops);
	printf("%-15s %10s %22s\n", "mode", "ns/op", "(min-max)");
	for (m = 0; m < MODES; m++) {
		qsort(ns[m], reps, sizeof(double), cmp);
		med[m] = ns[m][reps / 2];
		printf("%-15s %10.0f %10.0f-%-10.0f\n", name[m], med[m], ns[m][0], ns[m][reps - 1]);
	}
	printf("ratio cpuset/mpol: local %.3f, remote %.3f; cpuset-local/free %.3f\n",
	       med[2] / med[1], med[4] / med[3], med[2] / med[0]);
	return 0;
}
