// SPDX-License-Identifier: GPL-2.0
/*
 * What ioattr's hooks cost the kernel, with tagging on against tagging off
 * (the hooks patched out, as in mainline), side by side in one boot with
 * ioattr=on: debugfs ioattr/tagging switches between the two.
 *
 * Each sample is a child that, in a directory on a writeback-capable file
 * system (argument DIR), exercises every path a hook sits on or near:
 *
 *   anon     maps, touches and unmaps MB MiB of anonymous memory (page
 *            allocation and freeing: no hook should run)
 *   dirty    writes a file of MB MiB in 64 KiB write()s (a tag per page)
 *   migrate  maps it and moves its dirty pages to the other node (a tag
 *            copy per page)
 *   flush    fsync()s it (writeback submitted in the child's context: the
 *            writeback totals are counted)
 *   drop     drops it from the page cache (page freeing)
 *   read     reads it back (page-cache insertion)
 *
 * The parent takes the child's system time from wait4() (rusage: CPU time
 * of the child alone, not the wall time the loop device or other tasks
 * add), and each phase's from getrusage() in the child. REPS rounds, each
 * one sample with tagging on and one off, in alternating order; the table
 * gives each mode's median and the median of the per-round ratios on/off,
 * each with a distribution-free 95% confidence interval; the overhead
 * target is met when that interval stays below 1.02.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <math.h>
#include <unistd.h>

#define TAGGING	"/sys/kernel/debug/ioattr/tagging"
#define MAXREPS	200
#define PHASES	5
#define CHUNK	(64 << 10)
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

static const char *const phase_name[PHASES] = {
	"anon", "dirty", "migrate", "flush", "drop+read",
};

/*
 * System time of each phase of the last sample, and then how many of its
 * pages moved, written by the child.
 */
static double *phase_us;

static double stime_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
}

static void die(const char *what)
{
	fprintf(stderr, "ioattr_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void tagging(int on)
{
	int fd = open(TAGGING, O_WRONLY);

	if (fd < 0 || write(fd, on ? "1" : "0", 1) != 1)
		die(TAGGING " (boot with ioattr=on, debugfs mounted)");
	close(fd);
}

static void sample(const char *dir, size_t bytes)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t i, n = bytes / psz;
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes));
	int *status = calloc(n, sizeof(*status));
	char path[4096], *buf, *p;
	double t0, t;
	int fd;

	if (!pages || !nodes || !status)
		die("calloc");
	buf = malloc(CHUNK);
	if (!buf)
		die("malloc");
	memset(buf, 0x5a, CHUNK);
	t0 = stime_us();

	/* anon */
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap anon");
	for (i = 0; i < bytes; i += psz)
		p[i] = 1;
	munmap(p, bytes);
	t = stime_us();
	phase_us[0] = t - t0;
	t0 = t;

	/* dirty */
	snprintf(path, sizeof(path), "%s/ioattr-bench.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	for (i = 0; i < bytes; i += CHUNK)
		if (write(fd, buf, CHUNK) != CHUNK)
			die("write");
	t = stime_us();
	phase_us[1] = t - t0;
	t0 = t;
	/* migrate the dirty pages: every page to the node it is not on */
	p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap file");
	for (i = 0; i < n; i++) {
		(void)*(volatile char *)(p + i * psz);
		pages[i] = p + i * psz;
	}
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
		die("move_pages (query)");
	for (i = 0; i < n; i++)
		nodes[i] = status[i] == 0 ? 1 : 0;
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		die("move_pages");
	phase_us[PHASES] = 0;
	for (i = 0; i < n; i++)
		phase_us[PHASES] += status[i] == nodes[i];
	munmap(p, bytes);
	t = stime_us();
	phase_us[2] = t - t0;
	t0 = t;

	/* flush */
	if (fsync(fd))
		die("fsync");
	t = stime_us();
	phase_us[3] = t - t0;
	t0 = t;

	/* drop, read, drop */
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("fadvise");
	for (i = 0; i < bytes; i += CHUNK)
		if (pread(fd, buf, CHUNK, i) != CHUNK)
			die("pread");
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	phase_us[4] = stime_us() - t0;
	close(fd);
	unlink(path);
}

/* The child's system time in microseconds. */
static double run(const char *dir, size_t bytes)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		sample(dir, bytes);
		_exit(0);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		die("wait4");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		exit(1);
	return ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The median of @v with, in *lo and *hi, a distribution-free 95%
 * confidence interval for it (order statistics n/2 -+ 0.98 sqrt(n)), or
 * the min and max when there are too few values for one.
 */
static double median(double *v, int n, double *lo, double *hi)
{
	double s[MAXREPS];
	int j = floor(n / 2.0 - 0.98 * sqrt(n)), k = ceil(n / 2.0 + 0.98 * sqrt(n));

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp);
	*lo = s[j < 0 ? 0 : j];
	*hi = s[k > n - 1 ? n - 1 : k];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	double t[2][MAXREPS], ph[2][PHASES][MAXREPS], ratio[MAXREPS];
	double med, lo, hi;
	int reps, r, k, i;
	size_t mb;

	if (argc != 4) {
		fprintf(stderr, "usage: ioattr_bench DIR REPS MB\n");
		return 2;
	}
	reps = atoi(argv[2]);
	mb = strtoul(argv[3], NULL, 0);
	if (reps < 3 || reps > MAXREPS || !mb)
		return 2;
	phase_us = mmap(NULL, (PHASES + 1) * sizeof(*phase_us), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (phase_us == MAP_FAILED)
		die("mmap");

	run(argv[1], mb << 20);		/* warm up */
	for (r = 0; r < reps; r++) {
		for (k = 0; k < 2; k++) {
			int on = (r + k) % 2;

			tagging(on);
			t[on][r] = run(argv[1], mb << 20);
			for (i = 0; i < PHASES; i++)
				ph[on][i][r] = phase_us[i];
		}
		ratio[r] = t[1][r] / t[0][r];
		printf("round %d: system time off %.0f us, on %.0f us, on/off %.4f (%.0f dirty pages migrated)\n",
		       r, t[0][r], t[1][r], ratio[r], phase_us[PHASES]);
	}
	tagging(1);

	printf("%-14s %12s %12s %12s   (median and its 95%% CI over %d rounds)\n",
	       "tagging", "sys us", "lo", "hi", reps);
	for (k = 0; k < 2; k++) {
		med = median(t[k], reps, &lo, &hi);
		printf("%-14s %12.0f %12.0f %12.0f\n", k ? "on" : "off (mainline)",
		       med, lo, hi);
	}
	for (i = 0; i < PHASES; i++) {
		double m0 = median(ph[0][i], reps, &lo, &hi);
		double m1 = median(ph[1][i], reps, &lo, &hi);

		printf("phase %-9s off %9.0f us, on %9.0f us (medians)\n",
		       phase_name[i], m0, m1);
	}
	med = median(ratio, reps, &lo, &hi);
	printf("on/off system time, median of %d rounds: %.4f (95%% CI %.4f-%.4f): overhead %+.1f%%, target <= 2%%: %s\n",
	       reps, med, lo, hi, (med - 1) * 100,
	       hi <= 1.02 ? "met" : med <= 1.02 ? "not resolved (CI reaches past 2%)" : "MISSED");
	return 0;
}
