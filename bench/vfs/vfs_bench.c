// SPDX-License-Identifier: GPL-2.0
/*
 * Per-node drop_caches against the global one (see README). Two jobs, A
 * on node 0 and B on node 1, each with a tree of NFILES files and a file
 * of FILE_MB MiB on one ext4 file system; both warm their caches, then
 * B's caches are dropped, either by /proc/sys/vm/drop_caches (mainline:
 * everyone's go) or by node1/drop_caches (Fleet), side by side, REPS times
 * each, alternating. Per drop: its time, how much of A's caches (dentries
 * on node 0, pages of A's file) and of B's survive, and what A pays to
 * warm its caches again (stat of its tree and a read of its file).
 *
 *   vfs_bench MNT REPS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet_test.h"

#define NFILES	20000
#define FILE_MB	64
#define NODE	"/sys/devices/system/node/node%d/%s"
#define MPOL_BIND_ 2

static const char *mnt;

static void die(const char *what)
{
	fprintf(stderr, "vfs_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_path(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

static long node_dentries(int nid)
{
	char path[128], name[64];
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE, nid, "vfs_cache");
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, "nr_dentry_unused"))
			ret = v;
	fclose(f);
	return ret;
}

static int node_cpu(int nid)
{
	char path[128];
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE, nid, "cpulist");
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d", &cpu) != 1)
		die(path);
	fclose(f);
	return cpu;
}

/* Percentage of file @name's pages in the page cache */
static double resident(const char *name)
{
	size_t len = (size_t)FILE_MB << 20, pages = len / getpagesize(), i, n = 0;
	unsigned char *vec = malloc(pages);
	char path[256];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", mnt, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || !vec)
		die(path);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED || mincore(p, len, vec))
		die("mincore");
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(p, len);
	free(vec);
	return 100.0 * n / pages;
}

/*
 * Job @job ('A' on node 0, 'B' on node 1), in a child bound to its node:
 * stat its tree, read its file. Returns the time it took, in ms.
 */
static double warm(char job)
{
	int nid = job - 'A', st, fd, i;
	unsigned long long t0 = now_ns();
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		unsigned long mask = 1UL << nid;
		static char buf[1 << 16];
		char path[256];
		struct stat sb;

		if (pin_cpu(0, node_cpu(nid)) ||
		    syscall(SYS_set_mempolicy, MPOL_BIND_, &mask, sizeof(mask) * 8))
			_exit(2);
		for (i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/d%c/f%05d", mnt, job, i);
			if (stat(path, &sb))
				_exit(3);
		}
		snprintf(path, sizeof(path), "%s/f%c", mnt, job);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(4);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("warm");
	return (now_ns() - t0) / 1e6;
}

static void setup(void)
{
	char path[256];
	int i, fd;
	char job;

	for (job = 'A'; job <= 'B'; job++) {
		snprintf(path, sizeof(path), "%s/d%c", mnt, job);
		if (mkdir(path, 0755) && errno != EEXIST)
			die(path);
		for (i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/d%c/f%05d", mnt, job, i);
			fd = open(path, O_CREAT | O_WRONLY, 0644);
			if (fd < 0)
				die(path);
			close(fd);
		}
		snprintf(path, sizeof(path), "head -c %dM /dev/urandom > %s/f%c",
			 FILE_MB, mnt, job);
		if (system(path))
			die("head");
	}
	sync();
}

#define MODES 2
static const char *const mode_name[MODES] = { "global", "node" };

int main(int argc, char **argv)
{
	double t_drop[MODES][64], a_dent[MODES][64], a_file[MODES][64];
	double b_dent[MODES][64], b_file[MODES][64], rewarm[MODES][64];
	double cold[64];
	int reps, r, m, k;

	if (argc != 3 || (reps = atoi(argv[2])) < 1 || reps > 64) {
		fprintf(stderr, "usage: vfs_bench MNT REPS (1-64)\n");
		return 2;
	}
	mnt = argv[1];
	setup();
	for (r = 0; r < reps; r++) {
		/* the cold cost of A's warm-up, after a global drop */
		write_path("/proc/sys/vm/drop_caches", "3");
		cold[r] = warm('A');
		for (k = 0; k < MODES; k++) {
			long d0, d1;
			double f0, f1;
			unsigned long long t0;

			m = (r + k) % MODES;	/* alternate which goes first */
			warm('A');
			warm('B');
			d0 = node_dentries(0);
			d1 = node_dentries(1);
			f0 = resident("fA");
			f1 = resident("fB");
			t0 = now_ns();
			if (m == 0)
				write_path("/proc/sys/vm/drop_caches", "3");
			else
				write_path("/sys/devices/system/node/node1/drop_caches", "3");
			t_drop[m][r] = (now_ns() - t0) / 1e6;
			a_dent[m][r] = 100.0 * node_dentries(0) / (d0 ? d0 : 1);
			b_dent[m][r] = 100.0 * node_dentries(1) / (d1 ? d1 : 1);
			a_file[m][r] = 100.0 * resident("fA") / (f0 ? f0 : 1);
			b_file[m][r] = 100.0 * resident("fB") / (f1 ? f1 : 1);
			rewarm[m][r] = warm('A');
			printf("# rep %d %-6s drop %8.1f ms; A survives: dentries %5.1f%%, file %5.1f%%; B survives: dentries %5.1f%%, file %5.1f%%; A re-warm %8.1f ms (cold %.1f)\n",
			       r, mode_name[m], t_drop[m][r], a_dent[m][r], a_file[m][r],
			       b_dent[m][r], b_file[m][r], rewarm[m][r], cold[r]);
			fflush(stdout);
		}
	}
	printf("%-28s %10s %10s %8s\n", "median of REPS (min-max)", "global", "node", "node/global");
#define ROW(label, arr) do {							\
		double g = fleet_median(arr[0], reps), n = fleet_median(arr[1], reps); \
		char q[16] = "-";					\
									\
		if (g >= 1)	/* a ratio to 0% says nothing */		\
			snprintf(q, sizeof(q), "%.3f", n / g);		\
		printf("%-28s %10.1f %10.1f %8s   (global %.1f-%.1f, node %.1f-%.1f)\n", \
		       label, g, n, q, arr[0][0], arr[0][reps - 1],		\
		       arr[1][0], arr[1][reps - 1]);				\
	} while (0)
	ROW("drop time, ms", t_drop);
	ROW("A dentries survive, %", a_dent);
	ROW("A file pages survive, %", a_file);
	ROW("B dentries survive, %", b_dent);
	ROW("B file pages survive, %", b_file);
	ROW("A re-warm, ms", rewarm);
	printf("%-28s %10.1f\n", "A cold warm-up, ms", fleet_median(cold, reps));
	printf("target: A's caches survive a node-1 drop >= 99%%: dentries %s, file %s\n",
	       fleet_median(a_dent[1], reps) >= 99 ? "met" : "MISSED",
	       fleet_median(a_file[1], reps) >= 99 ? "met" : "MISSED");
	return 0;
}
