// SPDX-License-Identifier: GPL-2.0
/*
 * I/O attribution: every bio is traced by block:block_bio_origin with the
 * task it is done for. Page-cache writeback, submitted by a flusher
 * kworker, must name the task that dirtied the pages and its cgroup.
 *
 * Each test makes a file system (ext4, xfs) on a loop device backed by
 * tmpfs, runs writers in child processes, and sums the bytes that the
 * tracepoint attributed to each child on that device. Needs root and a
 * kernel booted with ioattr=on (tests/ioattr/vm).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <stdint.h>
#include <unistd.h>
#include <linux/sched.h>

#include "../../kselftest_harness.h"

#define TRACING	"/sys/kernel/tracing"
#define MNT	"/tmp/ioattr-mnt"
#define IMG	"/tmp/ioattr.img"
#define CGROOT	"/sys/fs/cgroup"
#define MB	(1024 * 1024)
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE	(1 << 1)
#endif

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -EIO;
}

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* One parsed block_bio_origin (or block_bio_queue) event on our device. */
struct ev {
	char rwbs[8], comm[17], source[16];
	unsigned int bytes, share;
	unsigned long long cgroup;
	int tgid;
	bool mixed;
};

/* Totals the test asks for, over the events on the device. */
struct sums {
	unsigned long long writes, reads;	/* all data bytes */
	unsigned long long tgid_w, tgid_r;	/* bytes attributed to tgid */
	unsigned long long cg_w;		/* of those, with cgroup cg */
	unsigned long long kernel, mixed;	/* source=kernel, mixed bios */
	unsigned long long tgid_share;		/* share= of the tgid's writes */
	unsigned long long bad_share;		/* mixed bios with share < bytes/2 */
	unsigned long long jbd2;		/* kernel bytes from jbd2 */
	unsigned long long stock_w;		/* block_bio_queue, comm == tgid's */
	char how[16];				/* source of the tgid's writes */
};

FIXTURE(fs) {
	char dev[64];
	dev_t rdev;
	char file[128];
};

FIXTURE_VARIANT(fs) {
	const char *mkfs;
	const char *mount;	/* mount options */
	bool jbd2;		/* journal written by a jbd2 thread */
	/* data=journal: why the test does not apply, NULL if it does */
	const char *no_dio, *no_mmap, *no_migrate;
};

/* Skip a test that does not apply to the variant, saying why. */
#define NOT_FOR(why) do { if (why) SKIP(return, "%s", why); } while (0)

FIXTURE_VARIANT_ADD(fs, ext4) {
	.mkfs = "mkfs.ext4 -q -F",
	.mount = "",
	.jbd2 = true,
};

/*
 * data=journal: ext4 redirties (folio_redirty_for_writepage()) the folios
 * whose data is not yet committed to the journal when the flusher first
 * gets to them, and writes them in place on a later pass.
 */
FIXTURE_VARIANT_ADD(fs, ext4_journal) {
	.mkfs = "mkfs.ext4 -q -F",
	.mount = "-o data=journal",
	.jbd2 = true,
	.no_dio = "data=journal disables O_DIRECT",
	.no_mmap = "data=journal: mmap-written data goes out through jbd2's checkpoint (submit_bh, no folio writeback) and is the kernel's: not attributed yet",
	.no_migrate = "data=journal: folios whose buffers the journal holds do not migrate",
};

FIXTURE_VARIANT_ADD(fs, xfs) {
	.mkfs = "mkfs.xfs -q -f",
	.mount = "",
};

static void trace_reset(void)
{
	write_str(TRACING "/tracing_on", "0");
	write_str(TRACING "/trace", "");
	write_str(TRACING "/tracing_on", "1");
}

FIXTURE_SETUP(fs)
{
	char cmd[512];
	struct stat st;
	FILE *p;

	if (geteuid())
		SKIP(return, "needs root");
	if (access(TRACING "/events/block/block_bio_origin", F_OK))
		SKIP(return, "no block:block_bio_origin (CONFIG_IO_ATTRIBUTION=n?)");
	ASSERT_EQ(0, run("grep -qw ioattr=on /proc/cmdline"))
		TH_LOG("boot with ioattr=on (tests/ioattr/vm)");
	ASSERT_EQ(0, run("truncate -s 512M " IMG));
	p = popen("losetup -f --show " IMG, "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(self->dev, sizeof(self->dev), p));
	pclose(p);
	self->dev[strcspn(self->dev, "\n")] = 0;
	ASSERT_EQ(0, stat(self->dev, &st));
	self->rdev = st.st_rdev;
	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null && mkdir -p %s && mount %s %s %s",
		 variant->mkfs, self->dev, MNT, variant->mount ?: "", self->dev, MNT);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s failed", cmd);
	snprintf(self->file, sizeof(self->file), "%s/data", MNT);
	/* writeback only when the test says so */
	write_str("/proc/sys/vm/dirty_writeback_centisecs", "0");
	write_str("/proc/sys/vm/dirty_expire_centisecs", "360000");
	ASSERT_EQ(0, write_str(TRACING "/buffer_size_kb", "8192"));
	ASSERT_EQ(0, write_str(TRACING "/events/block/block_bio_origin/enable", "1"));
	ASSERT_EQ(0, write_str(TRACING "/events/block/block_bio_queue/enable", "1"));
	sync();
	trace_reset();
}

FIXTURE_TEARDOWN(fs)
{
	char cmd[256];

	write_str(TRACING "/events/block/block_bio_origin/enable", "0");
	write_str(TRACING "/events/block/block_bio_queue/enable", "0");
	write_str("/proc/sys/vm/dirty_writeback_centisecs", "500");
	write_str("/proc/sys/vm/dirty_expire_centisecs", "3000");
	snprintf(cmd, sizeof(cmd), "umount %s 2>/dev/null; losetup -d %s 2>/dev/null; rm -f %s",
		 MNT, self->dev, IMG);
	run(cmd);
}

static bool parse(const char *line, const char *event, struct ev *e,
		  dev_t rdev)
{
	const char *p = strstr(line, event);
	unsigned int ma, mi, nsec;
	unsigned long long sector;
	char src[16] = "";

	if (!p)
		return false;
	p += strlen(event);
	memset(e, 0, sizeof(*e));
	if (!strcmp(event, "block_bio_queue: ")) {
		/* 7,0 WS 2048 + 8 [kworker/u8:2] */
		if (sscanf(p, "%u,%u %7s %llu + %u [%16[^]]]", &ma, &mi, e->rwbs,
			   &sector, &nsec, e->comm) != 6)
			return false;
		e->bytes = nsec * 512;
	} else if (sscanf(p, "%u,%u %7s %llu bytes=%u tgid=%d comm=%16s cgroup=%llu source=%15s share=%u",
			  &ma, &mi, e->rwbs, &sector, &e->bytes, &e->tgid, e->comm,
			  &e->cgroup, src, &e->share) != 10) {
		return false;
	}
	strcpy(e->source, src);
	e->mixed = strstr(p, " mixed") != NULL;
	return makedev(ma, mi) == rdev;
}

/* Sum the trace since trace_reset() for tgid (comm for stock events). */
static void sums(dev_t rdev, int tgid, const char *comm,
		 unsigned long long cg, struct sums *s)
{
	FILE *f = fopen(TRACING "/trace", "r");
	char line[512];
	struct ev e;

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (parse(line, "block_bio_queue: ", &e, rdev)) {
			if (strchr(e.rwbs, 'W') && e.bytes && !strcmp(e.comm, comm))
				s->stock_w += e.bytes;
			continue;
		}
		if (!parse(line, "block_bio_origin: ", &e, rdev) || !e.bytes)
			continue;
		if (strchr(e.rwbs, 'W')) {
			s->writes += e.bytes;
			if (e.tgid == tgid) {
				s->tgid_w += e.bytes;
				s->tgid_share += e.share;
				s->cg_w += e.cgroup == cg ? e.bytes : 0;
				strcpy(s->how, e.source);
			}
		} else if (strchr(e.rwbs, 'R')) {
			s->reads += e.bytes;
			s->tgid_r += e.tgid == tgid ? e.bytes : 0;
		}
		if (!strcmp(e.source, "kernel")) {
			s->kernel += e.bytes;
			s->jbd2 += strncmp(e.comm, "jbd2", 4) ? 0 : e.bytes;
		}
		s->mixed += e.mixed;
		s->bad_share += e.mixed && e.share * 2 < e.bytes;
	}
	fclose(f);
}

enum how { BUFFERED, FSYNC, DIRECT, MMAP };

/*
 * In a child named comm (in cgroup cg if given): write len bytes at off
 * of path and exit, without fsync unless asked.
 */
static pid_t writer(const char *path, off_t off, size_t len, enum how how,
		    const char *comm, const char *cg)
{
	pid_t pid = fork();
	char *buf, pids[32];
	int fd, flags = O_RDWR | O_CREAT;
	ssize_t n = 0;

	if (pid)
		return pid;
	if (prctl(PR_SET_NAME, comm))
		_exit(10);
	if (cg) {
		char procs[256];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		snprintf(pids, sizeof(pids), "%d", getpid());
		if (write_str(procs, pids))
			_exit(11);
	}
	if (how == DIRECT)
		flags |= O_DIRECT;
	fd = open(path, flags, 0644);
	if (fd < 0 || posix_memalign((void **)&buf, 4096, len))
		_exit(12);
	memset(buf, 0x5a, len);
	if (how == MMAP) {
		char *m;

		if (ftruncate(fd, off + len) && errno != EINVAL)
			_exit(13);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
		if (m == MAP_FAILED)
			_exit(14);
		memcpy(m, buf, len);
		munmap(m, len);
		n = len;
	} else {
		n = pwrite(fd, buf, len, off);
	}
	if (n != (ssize_t)len)
		_exit(15);
	if (how == FSYNC && fsync(fd))
		_exit(16);
	_exit(0);
}

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Flusher writeback of everything dirty, not done by us. */
static void flush(void)
{
	sync();
}

static unsigned long long cgroup_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

/*
 * Run writer() in the root cgroup to its end, then, if @writeback, have the
 * flusher write back what it left dirty; sum the trace for it into @s.
 * Returns the writer's pid, or -1 if it failed.
 */
static pid_t write_and_sum(const char *file, dev_t rdev, size_t len, enum how how,
			   const char *comm, bool writeback, struct sums *s)
{
	pid_t pid = writer(file, 0, len, how, comm, NULL);

	if (reap(pid))
		return -1;
	if (writeback)
		flush();
	sums(rdev, pid, comm, cgroup_ino(CGROOT), s);
	return pid;
}

#define PCT(a, b) ((b) ? 100.0 * (a) / (b) : 0.0)

/* A buffered writer exits before writeback: the flusher's bios are its. */
TEST_F(fs, writer_exits_before_writeback)
{
	size_t len = 8 * MB;
	struct sums s;

	ASSERT_LT(0, write_and_sum(self->file, self->rdev, len, BUFFERED, "ioattr-w1", true, &s));
	TH_LOG("%llu of %zu bytes attributed to the writer (%.1f%%, source %s); stock block_bio_queue: %.1f%%",
	       s.tgid_w, len, PCT(s.tgid_w, len), s.how, PCT(s.stock_w, len));
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
	/* and no more: journal copies are not the writer's data written */
	ASSERT_LE(s.tgid_w * 100, (unsigned long long)len * 101);
	ASSERT_STREQ("dirtier", s.how);
	ASSERT_GE(s.cg_w * 100, (unsigned long long)len * 99);
	/* and it really was writeback: stock tracing did not see the writer */
	ASSERT_LT(s.stock_w * 100, (unsigned long long)len);
}

/* Two cgroups: each writer's bytes carry its own cgroup id. */
TEST_F(fs, two_cgroups)
{
	const char *cg[2] = { CGROOT "/ioattr-a", CGROOT "/ioattr-b" };
	char path[2][160], comm[2][16];
	size_t len = 4 * MB;
	struct sums s;
	pid_t pid[2];
	int i;

	for (i = 0; i < 2; i++) {
		rmdir(cg[i]);
		ASSERT_EQ(0, mkdir(cg[i], 0755)) TH_LOG("mkdir %s: %s", cg[i], strerror(errno));
		snprintf(path[i], sizeof(path[i]), "%s.%d", self->file, i);
		snprintf(comm[i], sizeof(comm[i]), "ioattr-cg%d", i);
		pid[i] = writer(path[i], 0, len, BUFFERED, comm[i], cg[i]);
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, reap(pid[i]));
	flush();
	for (i = 0; i < 2; i++) {
		sums(self->rdev, pid[i], comm[i], cgroup_ino(cg[i]), &s);
		TH_LOG("%s: %.1f%% of its bytes, %.1f%% with cgroup %llu",
		       cg[i], PCT(s.tgid_w, len), PCT(s.cg_w, len), cgroup_ino(cg[i]));
		EXPECT_GE(s.cg_w * 100, (unsigned long long)len * 99);
		rmdir(cg[i]);
	}
}

/*
 * Two writers to one file, 2 and 6 MiB side by side: the flusher may put
 * both in one bio. Each bio goes to its largest share, is marked mixed if
 * it holds both, and its share= never counts the other writer's bytes.
 */
TEST_F(fs, two_writers_one_file)
{
	size_t la = 2 * MB, lb = 6 * MB;
	struct sums sa, sb;
	pid_t a, b;

	a = writer(self->file, 0, la, BUFFERED, "ioattr-a", NULL);
	ASSERT_EQ(0, reap(a));
	b = writer(self->file, la, lb, BUFFERED, "ioattr-b", NULL);
	ASSERT_EQ(0, reap(b));
	flush();
	sums(self->rdev, a, "ioattr-a", cgroup_ino(CGROOT), &sa);
	sums(self->rdev, b, "ioattr-b", cgroup_ino(CGROOT), &sb);
	TH_LOG("a: %llu bytes in its bios (share %llu), b: %llu (share %llu); %llu mixed bios",
	       sa.tgid_w, sa.tgid_share, sb.tgid_w, sb.tgid_share, sa.mixed);
	/* all data went to one of the two */
	ASSERT_GE((sa.tgid_w + sb.tgid_w) * 100, (unsigned long long)(la + lb) * 99);
	/* shares are exact: no writer is credited with the other's bytes */
	ASSERT_LE(sa.tgid_share, la);
	ASSERT_LE(sb.tgid_share, lb);
	/* a bio holding both is marked, and went to its larger share (two
	 * writers: at least half the bio)
	 */
	if (sa.tgid_share < sa.tgid_w || sb.tgid_share < sb.tgid_w)
		ASSERT_GT(sa.mixed, 0);
	ASSERT_EQ(0, sa.bad_share);
}

/* Writes through a shared mapping, never msync'ed. */
TEST_F(fs, mmap_writes)
{
	NOT_FOR(variant->no_mmap);
	size_t len = 8 * MB;
	struct sums s;

	ASSERT_LT(0, write_and_sum(self->file, self->rdev, len, MMAP, "ioattr-mmap", true, &s));
	TH_LOG("%.1f%% of %zu bytes attributed (source %s)", PCT(s.tgid_w, len), len, s.how);
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
	ASSERT_STREQ("dirtier", s.how);
}

/* The writer's own fsync. */
TEST_F(fs, fsync)
{
	size_t len = 4 * MB;
	struct sums s;

	ASSERT_LT(0, write_and_sum(self->file, self->rdev, len, FSYNC, "ioattr-fsync", false, &s));
	TH_LOG("%.1f%% of %zu bytes attributed (source %s)", PCT(s.tgid_w, len), len, s.how);
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
}

/* O_DIRECT: the submitter is the origin, with no page-cache tag. */
TEST_F(fs, direct_io)
{
	NOT_FOR(variant->no_dio);
	size_t len = 4 * MB;
	struct sums s;

	ASSERT_LT(0, write_and_sum(self->file, self->rdev, len, DIRECT, "ioattr-dio", false, &s));
	TH_LOG("%.1f%% of %zu bytes attributed (source %s)", PCT(s.tgid_w, len), len, s.how);
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
	ASSERT_STREQ("submitter", s.how);
}

/* Reads are the reader's. */
TEST_F(fs, reads)
{
	size_t len = 4 * MB;
	char *buf = malloc(len);
	struct sums s;
	int fd;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, reap(writer(self->file, 0, len, FSYNC, "ioattr-pre", NULL)));
	ASSERT_EQ(0, write_str("/proc/sys/vm/drop_caches", "3"));
	trace_reset();
	fd = open(self->file, O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)len, read(fd, buf, len));
	close(fd);
	free(buf);
	sums(self->rdev, getpid(), "-", cgroup_ino(CGROOT), &s);
	TH_LOG("%llu of %llu read bytes attributed to the reader", s.tgid_r, s.reads);
	ASSERT_GE(s.tgid_r, (unsigned long long)len);
}

/* Truncated before writeback: nothing written for it, nothing breaks. */
TEST_F(fs, truncated_before_writeback)
{
	size_t len = 8 * MB;
	struct sums s;
	pid_t pid;

	pid = writer(self->file, 0, len, BUFFERED, "ioattr-trunc", NULL);
	ASSERT_EQ(0, reap(pid));
	ASSERT_EQ(0, truncate(self->file, 0));
	flush();
	sums(self->rdev, pid, "ioattr-trunc", cgroup_ino(CGROOT), &s);
	TH_LOG("%llu bytes written for the truncated writer, %llu in all", s.tgid_w, s.writes);
	ASSERT_LT(s.tgid_w, (unsigned long long)len / 100);
}

/* File system metadata and the journal are the kernel's, marked so. */
TEST_F(fs, metadata_is_kernel)
{
	size_t len = 4 * MB;
	struct sums s;

	ASSERT_LT(0, write_and_sum(self->file, self->rdev, len, BUFFERED, "ioattr-meta", true, &s));
	TH_LOG("%llu bytes marked kernel (%llu by jbd2), %llu of data by the writer",
	       s.kernel, s.jbd2, s.tgid_w);
	ASSERT_GT(s.kernel, 0);
	if (variant->jbd2)
		ASSERT_GT(s.jbd2, 0);
}

/* Dirty pages migrated to another node before writeback keep their tag. */
TEST_F(fs, migrated_before_writeback)
{
	size_t len = 4 * MB, i, npages = len / 4096;
	int *status = calloc(npages, sizeof(int)), *nodes = calloc(npages, sizeof(int));
	void **pages = calloc(npages, sizeof(void *));
	int fd, target, moved = 0;
	struct sums s;
	char *m;
	pid_t pid;

	NOT_FOR(variant->no_migrate);
	ASSERT_TRUE(status && nodes && pages);
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "needs two NUMA nodes (--numa 2)");
	pid = writer(self->file, 0, len, BUFFERED, "ioattr-mig", NULL);
	ASSERT_EQ(0, reap(pid));
	fd = open(self->file, O_RDONLY);
	ASSERT_GE(fd, 0);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	for (i = 0; i < npages; i++) {
		(void)*(volatile char *)(m + i * 4096);
		pages[i] = m + i * 4096;
	}
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, npages, pages, NULL, status, 0));
	target = status[0] == 0 ? 1 : 0;
	for (i = 0; i < npages; i++)
		nodes[i] = target;
	ASSERT_LE(0, syscall(SYS_move_pages, 0, npages, pages, nodes, status, MPOL_MF_MOVE));
	for (i = 0; i < npages; i++)
		moved += status[i] == target;
	munmap(m, len);
	close(fd);
	TH_LOG("%d of %zu dirty pages moved to node %d", moved, npages, target);
	ASSERT_GE(moved * 2, (int)npages);
	flush();
	sums(self->rdev, pid, "ioattr-mig", cgroup_ino(CGROOT), &s);
	TH_LOG("%.1f%% of %zu bytes attributed after migration", PCT(s.tgid_w, len), len);
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
	free(status);
	free(nodes);
	free(pages);
}

#define GIGA		(1024UL * MB)
#define HUGE_1G_DIR	"/sys/kernel/mm/hugepages/hugepages-1048576kB"
#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB	(30 << 26)
#endif

static long node_free_1g(int node)
{
	char path[160], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/hugepages/hugepages-1048576kB/free_hugepages",
		 node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return atol(buf);
}

/*
 * A 1 GiB hugetlb folio spans eight memory sections, and page_ext is
 * allocated per section: a migration that copied the tags of every page
 * by stepping from entry to entry past the first section's array wrote
 * into memory that is not page_ext. Migrate one between the two nodes and
 * back, with dirty page-cache pages waiting for writeback, and check that
 * their tags and the kernel survived (scripts/guest-suite fails the test
 * if the kernel reports anything meanwhile). Hugetlb folios carry no tag,
 * so user space cannot see a tag of the folio itself; CONFIG_DEBUG_VM
 * kernels check every entry of every walk.
 */
TEST_F_TIMEOUT(fs, gigantic_folio_migration, 180)
{
	size_t len = 8 * MB, off;
	int node, target, round, status;
	struct sums s;
	char *m;
	pid_t pid;

	if (access(HUGE_1G_DIR, F_OK) || run("grep -qw hugepagesz=1G /proc/cmdline"))
		SKIP(return, "needs 1 GiB huge pages (boot with hugepagesz=1G hugepages=2)");
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK))
		TH_LOG("needs two NUMA nodes (--numa 2)");
	ASSERT_LE(1, node_free_1g(0)) TH_LOG("no free 1 GiB page on node 0");
	ASSERT_LE(1, node_free_1g(1)) TH_LOG("no free 1 GiB page on node 1");
	pid = writer(self->file, 0, len, BUFFERED, "ioattr-giga", NULL);
	ASSERT_EQ(0, reap(pid));
	m = mmap(NULL, GIGA, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_1GB, -1, 0);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap of a 1 GiB page: %s", strerror(errno));
	for (off = 0; off < GIGA; off += 64 * 1024)
		m[off] = (char)(off >> 16);
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, 1, &m, NULL, &node, 0));
	ASSERT_TRUE(node == 0 || node == 1) TH_LOG("the page is on node %d", node);
	for (round = 0; round < 2; round++) {
		target = !node;
		status = -1;
		ASSERT_EQ(0, syscall(SYS_move_pages, 0, 1, &m, &target, &status,
				     MPOL_MF_MOVE))
			TH_LOG("move_pages: %s", strerror(errno));
		ASSERT_EQ(target, status) TH_LOG("round %d: the page went to %d, not %d",
						 round, status, target);
		node = target;
	}
	for (off = 0; off < GIGA; off += 64 * 1024)
		if (m[off] != (char)(off >> 16))
			break;
	EXPECT_EQ(GIGA, off) TH_LOG("the page's contents changed at %zu", off);
	munmap(m, GIGA);
	flush();
	sums(self->rdev, pid, "ioattr-giga", cgroup_ino(CGROOT), &s);
	TH_LOG("1 GiB page moved twice; %.1f%% of %zu dirty bytes attributed afterwards",
	       PCT(s.tgid_w, len), len);
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
}

/* A child with pid @pid (clone3 set_tid), named @comm, that waits */
static pid_t spawn_with_pid(pid_t pid, const char *comm)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (unsigned long)&pid,
		.set_tid_size = 1,
	};
	long ret = syscall(SYS_clone3, &args, sizeof(args));

	if (ret)
		return ret;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, comm);
	for (;;)
		pause();
}

/*
 * The writer exits and another process gets its pid before writeback:
 * the bios are the writer's (tgid, source=dirtier), and the name they
 * carry is "-" (gone), not that of the newcomer.
 */
TEST_F(fs, pid_reused_before_writeback)
{
	unsigned long long mine = 0, named_new = 0;
	pid_t pid, imp;
	char line[512];
	size_t len = 4 * MB;
	struct ev e;
	FILE *f;

	pid = writer(self->file, 0, len, BUFFERED, "ioattr-old", NULL);
	ASSERT_EQ(0, reap(pid));
	imp = spawn_with_pid(pid, "ioattr-imp");
	if (imp < 0 && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "clone3(set_tid): %s", strerror(errno));
	ASSERT_EQ(pid, imp) TH_LOG("clone3(set_tid=%d): %s", pid, strerror(errno));
	flush();
	f = fopen(TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (!parse(line, "block_bio_origin: ", &e, self->rdev) ||
		    !strchr(e.rwbs, 'W') || e.tgid != pid)
			continue;
		mine += e.bytes;
		named_new += strcmp(e.comm, "ioattr-imp") ? 0 : e.bytes;
	}
	fclose(f);
	kill(imp, SIGKILL);
	waitpid(imp, NULL, 0);
	TH_LOG("%llu of %zu bytes attributed to pid %d, %llu of them named after the process that reused it",
	       mine, len, pid, named_new);
	ASSERT_GE(mine * 100, (unsigned long long)len * 99);
	ASSERT_EQ(0, named_new);
}

/*
 * A writer that is still alive at writeback is named: the start stamp in
 * the tag matches its process.
 */
TEST_F(fs, live_writer_named)
{
	unsigned long long mine = 0, named = 0;
	int pfd[2], fd;
	size_t len = 4 * MB;
	char line[512], c;
	struct ev e;
	pid_t pid;
	FILE *f;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static char buf[4 * MB];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "ioattr-live");
		memset(buf, 0x5a, sizeof(buf));
		fd = open(self->file, O_RDWR | O_CREAT, 0644);
		if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf) ||
		    write(pfd[1], "", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	flush();
	f = fopen(TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (!parse(line, "block_bio_origin: ", &e, self->rdev) ||
		    !strchr(e.rwbs, 'W') || e.tgid != pid)
			continue;
		mine += e.bytes;
		named += strcmp(e.comm, "ioattr-live") ? 0 : e.bytes;
	}
	fclose(f);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	TH_LOG("%llu of %zu bytes attributed to the live writer, %llu of them with its name",
	       mine, len, named);
	ASSERT_GE(mine * 100, (unsigned long long)len * 99);
	ASSERT_EQ(mine, named);
}

#define IOTOP_INSTANCE	TRACING "/instances/ioattr-test-iotop"

/* Is fleet-iotop's trace instance there with the exit event on? */
static bool iotop_ready(void)
{
	FILE *f = fopen(IOTOP_INSTANCE "/events/sched/sched_process_exit/enable", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == '1';
}

static void *thread_exits(void *arg)
{
	prctl(PR_SET_NAME, "ioattr-thr");
	return NULL;
}

/*
 * tools/fleet/fleet-iotop charges the writeback to the exited writer, by
 * its name (not that of a thread of it that exited first, nor that of the
 * process that got its pid before the report), from a trace instance of
 * its own: the global buffer, which the fixture traces into,
 * keeps every event for other readers.
 */
TEST_F(fs, reporter_names_exited_writer)
{
	const char *top = getenv("FLEET_TOP");
	unsigned long long r, w, wb, best = 0, thr = 0;
	char cmd[512], line[512], comm[32];
	size_t len = 8 * MB;
	struct sums s;
	pid_t pid, imp;
	int tgid, i;
	FILE *p;

	ASSERT_NE(NULL, top) TH_LOG("FLEET_TOP not set (run by scripts/run-tests)");
	snprintf(cmd, sizeof(cmd),
		 "%s/tools/fleet/fleet-iotop -i 15 -n 1 -d %u:%u --instance ioattr-test-iotop",
		 top, major(self->rdev), minor(self->rdev));
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	for (i = 0; i < 100 && !iotop_ready(); i++)
		usleep(100000);
	ASSERT_LT(i, 100) TH_LOG("fleet-iotop did not start");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static char buf[8 * MB];
		pthread_t t;
		int fd;

		/* a thread of the writer, named otherwise, exits first */
		prctl(PR_SET_NAME, "ioattr-rep");
		if (pthread_create(&t, NULL, thread_exits, NULL) || pthread_join(t, NULL))
			_exit(20);
		memset(buf, 0x5a, sizeof(buf));
		fd = open(self->file, O_RDWR | O_CREAT, 0644);
		if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf))
			_exit(21);
		_exit(0);
	}
	ASSERT_EQ(0, reap(pid));
	/* and a new process gets its pid before the report */
	imp = spawn_with_pid(pid, "ioattr-imp");
	flush();
	while (fgets(line, sizeof(line), p)) {
		fputs(line, stderr);
		if (sscanf(line, "%d %31s %lluK %lluK %lluK", &tgid, comm, &r, &w, &wb) != 5)
			continue;
		if (!strcmp(comm, "ioattr-rep") && wb > best)
			best = wb;
		if (!strcmp(comm, "ioattr-thr") || !strcmp(comm, "ioattr-imp"))
			thr += wb;
	}
	ASSERT_EQ(0, pclose(p));
	if (imp > 0) {
		kill(imp, SIGKILL);
		waitpid(imp, NULL, 0);
	}
	ASSERT_EQ(pid, imp) TH_LOG("clone3(set_tid=%d): %s", pid, strerror(errno));
	sums(self->rdev, pid, "ioattr-rep", cgroup_ino(CGROOT), &s);
	TH_LOG("fleet-iotop: %lluK written back for ioattr-rep, %lluK for its thread or the pid's next owner; the global buffer kept %.1f%%",
	       best, thr, PCT(s.tgid_w, len));
	ASSERT_GE(best * 1024 * 100, (unsigned long long)len * 99);
	ASSERT_EQ(0, thr);
	ASSERT_GE(s.tgid_w * 100, (unsigned long long)len * 99);
	/* and it removed its instance */
	ASSERT_NE(0, access(IOTOP_INSTANCE, F_OK));
}

/* A field of an io file of /proc, -1 if it is not there. */
static long long io_field(const char *path, const char *field)
{
	size_t n = strlen(field);
	char line[128];
	long long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = atoll(line + n + 1);
	fclose(f);
	return v;
}

/* A field of /proc/PID/io (PID 0: ourselves). */
static long long proc_io(pid_t pid, const char *field)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/io", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/io");
	return io_field(path, field);
}

/* A key of @cg's io.stat line for @rdev: 0 if not there, -1 if no file. */
static long long io_stat(const char *cg, dev_t rdev, const char *key)
{
	char path[256], dev[32], line[1024], *p;
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/io.stat", cg);
	snprintf(dev, sizeof(dev), "%u:%u ", major(rdev), minor(rdev));
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, dev, strlen(dev)))
			continue;
		for (p = strtok(line + strlen(dev), " \n"); p; p = strtok(NULL, " \n"))
			if (!strncmp(p, key, strlen(key)) && p[strlen(key)] == '=')
				v = atoll(p + strlen(key) + 1);
	}
	fclose(f);
	return v;
}

/*
 * The WRITEBACK column of the line for process id or cgroup path @key in
 * `fleet-iotop --totals -d @rdev`, in bytes (KiB resolution); -1 if there
 * is no such line, -2 if the tool did not run.
 */
static long long iotop_totals(const char *key, dev_t rdev)
{
	const char *top = getenv("FLEET_TOP");
	char cmd[512], line[512], a[256], b[256];
	long long v = -1, k;
	FILE *p;

	if (!top)
		return -2;
	snprintf(cmd, sizeof(cmd), "%s/tools/fleet/fleet-iotop --totals -d %u:%u",
		 top, major(rdev), minor(rdev));
	p = popen(cmd, "r");
	if (!p)
		return -2;
	while (fgets(line, sizeof(line), p)) {
		/* "TGID COMM NK" or "NK CGROUP" */
		if ((sscanf(line, "%255s %255s %lldK", a, b, &k) == 3 ||
		     sscanf(line, "%lldK %255s", &k, a) == 2) && !strcmp(a, key))
			v = k << 10;
	}
	if (pclose(p))
		return -2;
	return v;
}

/* The share= bytes the tracepoint gave to @tgid (writes on @rdev). */
static unsigned long long traced(dev_t rdev, pid_t tgid, const char *comm)
{
	struct sums s;

	sums(rdev, tgid, comm, 0, &s);
	return s.tgid_share;
}

/*
 * Per-process totals: a writer that is still alive when the flusher writes
 * its data back gets it counted in /proc/PID/io writeback_bytes (not at
 * dirtying time, as write_bytes is), exactly as the tracepoint traced it,
 * and the count goes to the parent when the writer is reaped.
 */
TEST_F(fs, totals_per_process)
{
	long long dirtied, wb_before, wb_after, thread, mine0, mine1, tool;
	char c, path[64], pid_s[16];
	size_t len = 8 * MB;
	unsigned long long tr;
	int go[2], done[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	mine0 = proc_io(0, "writeback_bytes");
	ASSERT_LE(0, mine0) TH_LOG("no writeback_bytes in /proc/self/io");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *buf = malloc(len);
		int fd = open(self->file, O_RDWR | O_CREAT, 0644);

		prctl(PR_SET_NAME, "ioattr-tot");
		if (fd < 0 || !buf)
			_exit(1);
		memset(buf, 0x5a, len);
		if (pwrite(fd, buf, len, 0) != (ssize_t)len)
			_exit(2);
		close(fd);
		c = 1;
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	dirtied = proc_io(pid, "write_bytes");
	wb_before = proc_io(pid, "writeback_bytes");
	tr = traced(self->rdev, pid, "ioattr-tot");
	flush();
	wb_after = proc_io(pid, "writeback_bytes");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/io", pid, pid);
	thread = io_field(path, "writeback_bytes");
	TH_LOG("write_bytes %lld at dirtying; writeback_bytes %lld before sync (traced %llu), %lld after (traced %llu)",
	       dirtied, wb_before, tr, wb_after, traced(self->rdev, pid, "ioattr-tot"));
	ASSERT_GE(dirtied, (long long)len);	/* mainline's counter, the control */
	/* what was written back so far (xfs may start early), not what was dirtied */
	ASSERT_EQ(tr, (unsigned long long)wb_before);
	ASSERT_EQ((long long)len, wb_after);
	ASSERT_EQ(traced(self->rdev, pid, "ioattr-tot"), (unsigned long long)wb_after);
	ASSERT_EQ(-1, thread);	/* per process: no line in task/TID/io */
	/* and fleet-iotop --totals shows it */
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	tool = iotop_totals(pid_s, self->rdev);
	TH_LOG("fleet-iotop --totals: %lld", tool);
	ASSERT_NE(-2, tool) TH_LOG("fleet-iotop did not run (FLEET_TOP set by scripts/run-tests?)");
	ASSERT_EQ(wb_after, tool);
	/* a zombie keeps its count; reaped, it goes to the parent */
	c = 1;
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(0, reap(pid));
	mine1 = proc_io(0, "writeback_bytes");
	TH_LOG("parent's writeback_bytes %lld -> %lld", mine0, mine1);
	ASSERT_EQ((long long)len, mine1 - mine0);
}

static int enable_io_controller(void)
{
	return write_str(CGROOT "/cgroup.subtree_control", "+io");
}

/*
 * Per-cgroup totals: two cgroups write halves of one file and exit; the
 * flusher writes it back. Mainline's io.stat wbytes charges the cgroup
 * that owns the inode; dirtied_wbytes gives each cgroup its own half,
 * exactly as traced, and the root counts both.
 */
TEST_F(fs, totals_two_cgroups_one_file)
{
	const char *cg[2] = { CGROOT "/ioattr-ta", CGROOT "/ioattr-tb" };
	long long root0, root1, d[2], w[2];
	size_t half = 4 * MB;
	char comm[2][16];
	struct sums s;
	pid_t pid[2];
	int i;

	ASSERT_EQ(0, enable_io_controller());
	root0 = io_stat(CGROOT, self->rdev, "dirtied_wbytes");
	for (i = 0; i < 2; i++) {
		rmdir(cg[i]);
		ASSERT_EQ(0, mkdir(cg[i], 0755));
		snprintf(comm[i], sizeof(comm[i]), "ioattr-t%d", i);
		pid[i] = writer(self->file, i * half, half, BUFFERED, comm[i], cg[i]);
		ASSERT_EQ(0, reap(pid[i]));
	}
	flush();
	root1 = io_stat(CGROOT, self->rdev, "dirtied_wbytes");
	for (i = 0; i < 2; i++) {
		d[i] = io_stat(cg[i], self->rdev, "dirtied_wbytes");
		w[i] = io_stat(cg[i], self->rdev, "wbytes");
		sums(self->rdev, pid[i], comm[i], cgroup_ino(cg[i]), &s);
		TH_LOG("%s: dirtied_wbytes %lld (traced as the largest share of a bio: %llu), mainline wbytes %lld",
		       cg[i], d[i], s.tgid_share, w[i]);
		EXPECT_EQ((long long)half, d[i]);
		/* and fleet-iotop --totals shows it */
		EXPECT_EQ(d[i], iotop_totals(cg[i] + strlen(CGROOT), self->rdev));
	}
	TH_LOG("root dirtied_wbytes %lld -> %lld", root0, root1);
	EXPECT_GE(root1 - root0, (long long)(2 * half));
	for (i = 0; i < 2; i++)
		rmdir(cg[i]);
}

/*
 * A writer's cgroup is removed before writeback: the tracepoint still
 * names it; the totals cannot find it any more and count it nowhere (the
 * documented limit), and nothing breaks.
 */
TEST_F(fs, cgroup_removed_before_writeback)
{
	const char *cg = CGROOT "/ioattr-gone";
	unsigned long long id;
	long long root0, root1;
	size_t len = 4 * MB;
	struct sums s;
	pid_t pid;

	ASSERT_EQ(0, enable_io_controller());
	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	id = cgroup_ino(cg);
	pid = writer(self->file, 0, len, BUFFERED, "ioattr-gone", cg);
	ASSERT_EQ(0, reap(pid));
	ASSERT_EQ(0, rmdir(cg));
	root0 = io_stat(CGROOT, self->rdev, "dirtied_wbytes");
	flush();
	root1 = io_stat(CGROOT, self->rdev, "dirtied_wbytes");
	sums(self->rdev, pid, "ioattr-gone", id, &s);
	TH_LOG("%.1f%% of the bytes traced with the removed cgroup %llu; root dirtied_wbytes +%lld",
	       PCT(s.cg_w, len), id, root1 - root0);
	ASSERT_GE(s.cg_w * 100, (unsigned long long)len * 99);
	ASSERT_STREQ("dirtier", s.how);
}

/* Whether the page at @off of @fd's page cache is part of a large folio. */
static int in_large_folio(int fd, off_t off)
{
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t ent, flags;
	int pm, kf, ret = -1;
	char *m;

	m = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, off);
	if (m == MAP_FAILED)
		return -1;
	(void)*(volatile char *)m;
	pm = open("/proc/self/pagemap", O_RDONLY);
	kf = open("/proc/kpageflags", O_RDONLY);
	if (pm >= 0 && kf >= 0 &&
	    pread(pm, &ent, 8, (uintptr_t)m / psz * 8) == 8 && (ent >> 63) &&
	    pread(kf, &flags, 8, (ent & ((1ULL << 55) - 1)) * 8) == 8)
		ret = !!(flags & (1ULL << 15 | 1ULL << 16));	/* head, tail */
	close(pm);
	close(kf);
	munmap(m, psz);
	return ret;
}

/*
 * A large folio dirtied by two writers: the first dirtier since the last
 * writeback takes the whole folio (every page carries its tag), pages that
 * others dirtied later and pages nobody dirtied included, since the whole
 * folio is written back. The file is written in one call and written back
 * (a file system with large folios caches it in large folios, and they
 * stay); then A, in one cgroup, rewrites its first page and B, in another,
 * the second. In a large folio both pages, and the rest of the folio, are
 * A's; in small folios each has its own page. The cgroups' dirtied_wbytes
 * count it (the tracepoint gives a bio that holds both pages to one).
 */
TEST_F(fs, large_folio_two_writers)
{
	const char *cg[2] = { CGROOT "/ioattr-la", CGROOT "/ioattr-lb" };
	long long ta, tb;
	size_t len = 2 * MB;
	int fd, large, i;
	pid_t pid;

	ASSERT_EQ(0, enable_io_controller());
	pid = writer(self->file, 0, len, BUFFERED, "ioattr-l0", NULL);
	ASSERT_EQ(0, reap(pid));
	flush();
	for (i = 0; i < 2; i++) {
		rmdir(cg[i]);
		ASSERT_EQ(0, mkdir(cg[i], 0755));
		pid = writer(self->file, i * 4096, 4096, BUFFERED, "ioattr-l", cg[i]);
		ASSERT_EQ(0, reap(pid));
	}
	fd = open(self->file, O_RDONLY);
	ASSERT_LE(0, fd);
	large = in_large_folio(fd, 4096);
	close(fd);
	ASSERT_LE(0, large) TH_LOG("cannot read pagemap/kpageflags");
	flush();
	ta = io_stat(cg[0], self->rdev, "dirtied_wbytes");
	tb = io_stat(cg[1], self->rdev, "dirtied_wbytes");
	for (i = 0; i < 2; i++)
		rmdir(cg[i]);
	TH_LOG("the two pages in a %s folio: A %lld bytes written back, B %lld",
	       large ? "large" : "small", ta, tb);
	if (large) {
		ASSERT_EQ(0, tb);
		ASSERT_GE(ta, 8192);
	} else {
		ASSERT_EQ(4096, ta);
		ASSERT_EQ(4096, tb);
	}
}

#define TAGGING "/sys/kernel/debug/ioattr/tagging"

/*
 * debugfs ioattr/tagging (bench/ioattr's switch): while it is off, a page
 * that B dirties keeps A's tag from before; once it is on again, that tag
 * is of an old epoch and is not believed, so B's data is not charged to
 * A (the flusher submits it as its own).
 */
TEST_F(fs, tagging_switch_forgets_old_tags)
{
	size_t len = 4 * MB;
	struct sums sa, sb;
	pid_t a, b;

	if (access(TAGGING, F_OK))
		run("mount -t debugfs none /sys/kernel/debug 2>/dev/null");
	ASSERT_EQ(0, access(TAGGING, W_OK));
	a = writer(self->file, 0, len, BUFFERED, "ioattr-ea", NULL);
	ASSERT_EQ(0, reap(a));
	/* A's writeback is A's */
	flush();
	sums(self->rdev, a, "ioattr-ea", cgroup_ino(CGROOT), &sa);
	ASSERT_GE(sa.tgid_share * 100, (unsigned long long)len * 99);
	/* A dirties it again (tagged), it is written back, clean, tag kept */
	a = writer(self->file, 0, len, BUFFERED, "ioattr-ea", NULL);
	ASSERT_EQ(0, reap(a));
	flush();
	ASSERT_EQ(0, write_str(TAGGING, "0"));
	b = writer(self->file, 0, len, BUFFERED, "ioattr-eb", NULL);
	ASSERT_EQ(0, reap(b));
	ASSERT_EQ(0, write_str(TAGGING, "1"));
	trace_reset();
	flush();
	sums(self->rdev, a, "ioattr-ea", cgroup_ino(CGROOT), &sa);
	sums(self->rdev, b, "ioattr-eb", cgroup_ino(CGROOT), &sb);
	TH_LOG("dirtied by B while tagging was off: %llu bytes to A (old tag), %llu to B, %llu of %llu written as the kernel's",
	       sa.tgid_w, sb.tgid_w, sa.kernel, sa.writes);
	ASSERT_EQ(0, sa.tgid_w);
	ASSERT_GE(sa.writes, (unsigned long long)len);
}

TEST_HARNESS_MAIN
