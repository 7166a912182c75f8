// SPDX-License-Identifier: GPL-2.0
/*
 * Per-node VFS caches: /sys/devices/system/node/nodeN/vfs_cache,
 * nodeN/drop_caches and the vfs_* lines of nodeN/vmstat, and mainline's
 * nodeN/reclaim, on a VM of two emulated nodes with a CPU each
 * (tests/vfs/vm).
 *
 * An ext4 file system on a loop device holds two trees of NFILES files,
 * d0 and d1. After a global drop, a task bound to node N (its CPU, and
 * MPOL_BIND to N) stats every file of dN: the dentries and inodes it
 * brings in are allocated on N and sit on the LRUs once it exits. The
 * per-node counts must follow, and a drop of one node must free that
 * node's and leave the other's. The page cache is judged the same way,
 * file by file, with mincore(2).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fleet_test.h"
#include "../../kselftest_harness.h"

#define IMG	"/tmp/vfs.img"
#define MNT	"/mnt/vfs"
#define IMG2	"/tmp/vfs2.img"
#define MNT2	"/mnt/vfs2"
#define NFILES	8000
#define FILE_MB	32
#define NODE	"/sys/devices/system/node/node%d/%s"
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_path(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Write @val to nodeN/@file: 0 or -errno */
static int node_write(int nid, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), NODE, nid, file);
	return write_path(path, val);
}

/* The value of "@key N" in nodeN/@file, or -1 */
static long node_value(int nid, const char *file, const char *key)
{
	char path[128], name[64];
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE, nid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, key))
			ret = v;
	fclose(f);
	return ret;
}

/* The first CPU of node @nid, or -1 */
static int node_cpu(int nid)
{
	char path[128];
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE, nid, "cpulist");
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &cpu) != 1)
		cpu = -1;
	fclose(f);
	return cpu;
}

/* Bind the caller to node @nid: its first CPU, and its memory */
static int bind_node(int nid)
{
	unsigned long mask = 1UL << nid;
	int cpu = node_cpu(nid);

	if (cpu < 0 || pin_cpu(0, cpu))
		return -1;
	return syscall(SYS_set_mempolicy, MPOL_BIND, &mask, sizeof(mask) * 8) ? -1 : 0;
}

#define CGROUP	"/sys/fs/cgroup/vfs-test"

/*
 * In a child bound to node @nid (and in cgroup CGROUP if @cg): stat every
 * file of tree @dir, and unlink it if @unlink; 0 or -1
 */
static int walk(int nid, const char *dir, bool unlink_it, bool cg)
{
	pid_t pid = fork();
	int st, i;

	if (pid < 0)
		return -1;
	if (!pid) {
		char path[256], me[16];
		struct stat sb;

		snprintf(me, sizeof(me), "%d", getpid());
		if (cg && write_path(CGROUP "/cgroup.procs", me))
			_exit(4);
		if (bind_node(nid))
			_exit(2);
		for (i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/%s/f%05d", MNT, dir, i);
			if (stat(path, &sb) || (unlink_it && unlink(path)))
				_exit(3);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* In a child bound to node @nid: stat every file of tree @dir; 0 or -1 */
static int walk_on(int nid, const char *dir)
{
	return walk(nid, dir, false, false);
}

/*
 * In a child bound to node @nid (and in cgroup CGROUP if @cg): read bytes
 * [@from, @to) of file @path into the page cache, without readahead past
 * @to if @random; 0 or -1
 */
static int read_path_on(int nid, const char *path, off_t from, off_t to,
			bool random, bool cg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		static char buf[1 << 16];
		char me[16];
		ssize_t n;
		int fd;

		snprintf(me, sizeof(me), "%d", getpid());
		if (cg && write_path(CGROUP "/cgroup.procs", me))
			_exit(4);
		if (bind_node(nid))
			_exit(2);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(3);
		/* the next range may be another node's */
		if (random)
			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		while (from < to &&
		       (n = pread(fd, buf, sizeof(buf), from)) > 0)
			from += n;
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* read_path_on() of the whole of file @path, readahead on */
static int read_file_on(int nid, const char *path, bool cg)
{
	return read_path_on(nid, path, 0, (off_t)FILE_MB << 20, false, cg);
}

/* read_path_on() of bytes [@from, @to) of file @name of MNT, no readahead */
static int read_range_on(int nid, const char *name, off_t from, off_t to)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", MNT, name);
	return read_path_on(nid, path, from, to, true, false);
}

/* In a child bound to node @nid: read file @name into the page cache */
static int read_on(int nid, const char *name)
{
	return read_range_on(nid, name, 0, (off_t)FILE_MB << 20);
}

/* Percentage of pages [@from, @to) of file @path in the page cache, or -1 */
static double resident_path(const char *path, size_t from, size_t to)
{
	size_t len = FILE_MB << 20, pages = len / getpagesize(), i, n = 0;
	size_t first = from / getpagesize(), last = to / getpagesize();
	unsigned char *vec = malloc(pages);
	void *p;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || !vec)
		return -1;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED || mincore(p, len, vec)) {
		free(vec);
		return -1;
	}
	for (i = first; i < last && i < pages; i++)
		n += vec[i] & 1;
	munmap(p, len);
	free(vec);
	return 100.0 * n / (last - first);
}

/* resident_path() of file @name of MNT */
static double resident_range(const char *name, size_t from, size_t to)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", MNT, name);
	return resident_path(path, from, to);
}

/* Percentage of file @name's pages in the page cache, or -1 */
static double resident(const char *name)
{
	return resident_range(name, 0, (size_t)FILE_MB << 20);
}

struct counts {
	long d[2], i[2];
};

static void take(struct counts *c)
{
	int n;

	for (n = 0; n < 2; n++) {
		c->d[n] = node_value(n, "vfs_cache", "nr_dentry_unused");
		c->i[n] = node_value(n, "vfs_cache", "nr_inode_unused");
	}
}

FIXTURE(vfs) {
	char dev[64];
};

FIXTURE_SETUP(vfs)
{
	char cmd[512];
	FILE *p;
	int n, i, fd;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, access("/sys/devices/system/node/node1/vfs_cache", R_OK))
		TH_LOG("no node1/vfs_cache: boot with two NUMA nodes (tests/vfs/vm) on Fleet");
	ASSERT_LE(0, node_cpu(1)) TH_LOG("node 1 has no CPU (numa_emu_cpus=spread?)");
	ASSERT_NE(node_cpu(0), node_cpu(1));
	ASSERT_EQ(0, run("truncate -s 512M " IMG));
	p = popen("losetup -f --show " IMG, "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(self->dev, sizeof(self->dev), p));
	pclose(p);
	self->dev[strcspn(self->dev, "\n")] = 0;
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F -N 40000 %s && mkdir -p %s && mount %s %s",
		 self->dev, MNT, self->dev, MNT);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s failed", cmd);
	for (n = 0; n < 2; n++) {
		snprintf(cmd, sizeof(cmd), "%s/d%d", MNT, n);
		ASSERT_EQ(0, mkdir(cmd, 0755));
		for (i = 0; i < NFILES; i++) {
			snprintf(cmd, sizeof(cmd), "%s/d%d/f%05d", MNT, n, i);
			fd = open(cmd, O_CREAT | O_WRONLY, 0644);
			ASSERT_LE(0, fd);
			close(fd);
		}
		snprintf(cmd, sizeof(cmd), "head -c %dM /dev/urandom > %s/file%d",
			 FILE_MB, MNT, n);
		ASSERT_EQ(0, run(cmd));
	}
	sync();
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "3"));
	ASSERT_EQ(0, write_path("/sys/fs/cgroup/cgroup.subtree_control", "+memory"));
	ASSERT_TRUE(mkdir(CGROUP, 0755) == 0 || errno == EEXIST);
}

FIXTURE_TEARDOWN(vfs)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "umount %s 2>/dev/null; losetup -d %s 2>/dev/null; rm -f %s",
		 MNT, self->dev, IMG);
	run(cmd);
	rmdir(CGROUP);
}

/*
 * A walk on node 1 fills node 1's counts, not node 0's; a walk on node 0
 * the other way round. Most of the NFILES dentries must show on the
 * walker's node (90%), few on the other (10%: the walker's own allocations
 * outside the walk, and anything else the VM does meanwhile). An inode
 * goes on the LRU only once no dentry holds it, so the walks leave the
 * inode counts alone (inode_counts_follow_the_node tests those).
 */
TEST_F(vfs, counts_follow_the_node)
{
	struct counts a, b, c;
	int n;

	take(&a);
	for (n = 0; n < 2; n++) {
		ASSERT_LE(0, a.d[n]);
		ASSERT_LE(0, a.i[n]);
	}
	ASSERT_EQ(0, walk_on(1, "d1"));
	take(&b);
	TH_LOG("walk of %d files on node 1: dentries node0 %ld -> %ld, node1 %ld -> %ld; inodes node0 %ld -> %ld, node1 %ld -> %ld",
	       NFILES, a.d[0], b.d[0], a.d[1], b.d[1], a.i[0], b.i[0], a.i[1], b.i[1]);
	EXPECT_LE(NFILES * 9 / 10, b.d[1] - a.d[1]);
	EXPECT_GE(NFILES / 10, b.d[0] - a.d[0]);
	ASSERT_EQ(0, walk_on(0, "d0"));
	take(&c);
	TH_LOG("walk of %d files on node 0: dentries node0 %ld -> %ld, node1 %ld -> %ld; inodes node0 %ld -> %ld, node1 %ld -> %ld",
	       NFILES, b.d[0], c.d[0], b.d[1], c.d[1], b.i[0], c.i[0], b.i[1], c.i[1]);
	EXPECT_LE(NFILES * 9 / 10, c.d[0] - b.d[0]);
	EXPECT_GE(NFILES / 10, c.d[1] - b.d[1]);
}

/*
 * Both nodes filled, node 1's from a child memory cgroup (its dentries
 * and inodes are charged there and sit on its own LRU lists, which only
 * a walk of every memcg's shrinkers reaches); "2" to node1/drop_caches
 * takes node 1's dentries and inodes down to a tenth of the walk and
 * leaves 99% of node 0's dentries, and node 1's vmstat counts what it
 * freed: the dentries, then the inodes they held (which pass through the
 * inode LRU as their dentries go). The control: "2" to the global
 * drop_caches takes both nodes down.
 */
TEST_F(vfs, drop_slab_one_node)
{
	long f0, f1, s1, i0, i1;
	struct counts a, b, c;

	ASSERT_EQ(0, walk_on(0, "d0"));
	ASSERT_EQ(0, walk(1, "d1", false, true));
	take(&a);
	f0 = node_value(0, "vmstat", "vfs_dentry_freed");
	f1 = node_value(1, "vmstat", "vfs_dentry_freed");
	s1 = node_value(1, "vmstat", "vfs_inode_scanned");
	i0 = node_value(0, "vmstat", "vfs_inode_freed");
	i1 = node_value(1, "vmstat", "vfs_inode_freed");
	ASSERT_LE(0, i0);
	ASSERT_LE(0, i1);
	ASSERT_LE(0, f0);
	ASSERT_LE(0, f1);
	ASSERT_LE(0, s1);
	ASSERT_EQ(0, node_write(1, "drop_caches", "2"));
	take(&b);
	TH_LOG("node1 drop: dentries node0 %ld -> %ld, node1 %ld -> %ld; inodes node0 %ld -> %ld, node1 %ld -> %ld",
	       a.d[0], b.d[0], a.d[1], b.d[1], a.i[0], b.i[0], a.i[1], b.i[1]);
	TH_LOG("vfs_dentry_freed node0 +%ld, node1 +%ld; vfs_inode_scanned node1 +%ld; vfs_inode_freed node0 +%ld, node1 +%ld",
	       node_value(0, "vmstat", "vfs_dentry_freed") - f0,
	       node_value(1, "vmstat", "vfs_dentry_freed") - f1,
	       node_value(1, "vmstat", "vfs_inode_scanned") - s1,
	       node_value(0, "vmstat", "vfs_inode_freed") - i0,
	       node_value(1, "vmstat", "vfs_inode_freed") - i1);
	EXPECT_LE(a.d[0] * 99 / 100, b.d[0]);
	EXPECT_LE(a.i[0] * 99 / 100, b.i[0]);
	EXPECT_GE(NFILES / 10, b.d[1]);
	EXPECT_GE(NFILES / 10, b.i[1]);
	EXPECT_LE(NFILES * 9 / 10, node_value(1, "vmstat", "vfs_dentry_freed") - f1);
	EXPECT_LE(NFILES * 9 / 10, node_value(1, "vmstat", "vfs_inode_scanned") - s1);
	EXPECT_LE(NFILES * 9 / 10, node_value(1, "vmstat", "vfs_inode_freed") - i1);
	EXPECT_EQ(f0, node_value(0, "vmstat", "vfs_dentry_freed"));
	EXPECT_EQ(i0, node_value(0, "vmstat", "vfs_inode_freed"));

	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "2"));
	take(&c);
	TH_LOG("global drop: dentries node0 %ld -> %ld, node1 %ld -> %ld",
	       b.d[0], c.d[0], b.d[1], c.d[1]);
	EXPECT_GE(NFILES / 10, c.d[0]);
}

/*
 * Inodes go on their LRU once no dentry holds them. Every file of d1 gets
 * a second name in d1l; a walker on node 1 looks each up by its first
 * name (the inode is allocated on node 1) and unlinks that name: the
 * dentry goes, the inode stays (its other name is not looked up) and,
 * once written back, sits unused on node 1's inode LRU. Node 1's
 * nr_inode_unused must grow by 90% of the files, node 0's by at most a
 * tenth; "2" to node1/drop_caches takes node 1's back down.
 */
TEST_F(vfs, inode_counts_follow_the_node)
{
	char from[256], to[256];
	struct counts a, b, c;
	int i;

	snprintf(to, sizeof(to), "%s/d1l", MNT);
	ASSERT_EQ(0, mkdir(to, 0755));
	for (i = 0; i < NFILES; i++) {
		snprintf(from, sizeof(from), "%s/d1/f%05d", MNT, i);
		snprintf(to, sizeof(to), "%s/d1l/f%05d", MNT, i);
		ASSERT_EQ(0, link(from, to));
	}
	sync();
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "2"));
	take(&a);
	ASSERT_EQ(0, walk(1, "d1", true, false));
	sync();
	take(&b);
	TH_LOG("lookup and unlink of %d first names on node 1: inodes node0 %ld -> %ld, node1 %ld -> %ld",
	       NFILES, a.i[0], b.i[0], a.i[1], b.i[1]);
	EXPECT_LE(NFILES * 9 / 10, b.i[1] - a.i[1]);
	EXPECT_GE(NFILES / 10, b.i[0] - a.i[0]);
	ASSERT_EQ(0, node_write(1, "drop_caches", "2"));
	take(&c);
	TH_LOG("node1 drop: inodes node0 %ld -> %ld, node1 %ld -> %ld",
	       b.i[0], c.i[0], b.i[1], c.i[1]);
	EXPECT_GE(NFILES / 10, c.i[1]);
	EXPECT_LE(b.i[0] * 99 / 100, c.i[0]);
}

/*
 * The page cache, page by page: file0 read on node 0; file1's first half
 * read on node 0, its second half on node 1. "1" to node1/drop_caches
 * drops file1's second half (at most 1% stays) and keeps 99% of the rest.
 * What it must not drop on node 1: dirty pages (written there and not
 * synced: they stay, with their data) and pages mapped by a process (a
 * file faulted in there and kept mapped). Slab is not touched: node 1's
 * dentries stay.
 */
TEST_F(vfs, drop_pagecache_one_node)
{
	size_t half = (size_t)FILE_MB << 19, len = 4 << 20, i;
	char path[256], *data, *back;
	double r0, r1a, r1b;
	struct counts a, b;
	volatile char sum = 0;
	void *map;
	int fd;

	ASSERT_EQ(0, read_on(0, "file0"));
	ASSERT_EQ(0, read_range_on(0, "file1", 0, half));
	ASSERT_EQ(0, read_range_on(1, "file1", half, 2 * half));
	ASSERT_EQ(0, walk_on(1, "d1"));
	/* on node 1: a dirty file, and a mapped one */
	ASSERT_EQ(0, run("head -c 4M /dev/urandom > " MNT "/mapped && sync"));
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "1"));
	ASSERT_EQ(0, read_on(0, "file0"));
	ASSERT_EQ(0, read_range_on(0, "file1", 0, half));
	ASSERT_EQ(0, read_range_on(1, "file1", half, 2 * half));
	ASSERT_EQ(0, bind_node(1));
	data = malloc(len);
	back = malloc(len);
	ASSERT_NE(NULL, data);
	ASSERT_NE(NULL, back);
	for (i = 0; i < len; i++)
		data[i] = (char)(i * 7 + 3);
	snprintf(path, sizeof(path), "%s/dirty", MNT);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, data, len));
	snprintf(path, sizeof(path), "%s/mapped", MNT);
	i = open(path, O_RDONLY);
	ASSERT_LE(0, (int)i);
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, (int)i, 0);
	close((int)i);
	ASSERT_NE(MAP_FAILED, map);
	for (i = 0; i < len; i += getpagesize())
		sum += ((char *)map)[i];
	pin_cpu(0, -1);
	syscall(SYS_set_mempolicy, 0, NULL, 0);

	r0 = resident("file0");
	r1a = resident_range("file1", 0, half);
	r1b = resident_range("file1", half, 2 * half);
	TH_LOG("before: file0 %.1f%% resident, file1 first half %.1f%%, second half %.1f%%",
	       r0, r1a, r1b);
	ASSERT_LE(99.0, r0);
	ASSERT_LE(99.0, r1a);
	ASSERT_LE(99.0, r1b);
	take(&a);
	ASSERT_EQ(0, node_write(1, "drop_caches", "1"));
	take(&b);
	r0 = resident("file0");
	r1a = resident_range("file1", 0, half);
	r1b = resident_range("file1", half, 2 * half);
	TH_LOG("after node1 drop 1: file0 %.1f%%, file1 first half %.1f%%, second half %.1f%%; dirty %.1f%%, mapped %.1f%%; node1 dentries %ld -> %ld",
	       r0, r1a, r1b, resident_range("dirty", 0, len),
	       resident_range("mapped", 0, len), a.d[1], b.d[1]);
	EXPECT_LE(99.0, r0);
	EXPECT_LE(99.0, r1a);
	EXPECT_GE(1.0, r1b);
	EXPECT_LE(99.0, resident_range("dirty", 0, len));
	EXPECT_LE(99.0, resident_range("mapped", 0, len));
	EXPECT_LE(a.d[1] * 99 / 100, b.d[1]);
	ASSERT_EQ((ssize_t)len, pread(fd, back, len, 0));
	EXPECT_EQ(0, memcmp(data, back, len));
	munmap(map, len);
	close(fd);
	free(data);
	free(back);
}

/* "Node N @key: K kB" of nodeN/meminfo, in KiB, or -1 */
static long node_meminfo_kb(int nid, const char *key)
{
	char path[128], line[256], name[64];
	long kb = -1, v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), NODE, nid, "meminfo");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %d %63[^:]: %ld", &n, name, &v) == 3 &&
		    !strcmp(name, key))
			kb = v;
	fclose(f);
	return kb;
}

/* Node @nid's file LRU pages in KiB */
static long node_file_lru_kb(int nid)
{
	return node_meminfo_kb(nid, "Active(file)") +
	       node_meminfo_kb(nid, "Inactive(file)");
}

/*
 * nodeN/reclaim, mainline's per-node proactive reclaim (backported):
 * "16M" to node 1 takes at least 12 MiB off node 1's file LRU (file1,
 * 32 MiB, read there; reclaim may also count slab, and stops near the
 * amount asked) and leaves 99% of file0, read on node 0. Then with a
 * small page cache on node 1 (its cache dropped, a new 8 MiB file read:
 * less than 1% of the node, zone_reclaim_mode's floor), "4M swappiness=0"
 * must succeed and reclaim at least 2 MiB: the floor holds node_reclaim()
 * back, not a user's request (with it: nothing reclaimed, EAGAIN), and
 * the last pages of a request must not be a batch of 0 (with that: 1021
 * of 1024 pages, then EAGAIN). Bad input gets EINVAL, and memory.reclaim,
 * which now shares the parser, still works.
 */
TEST_F(vfs, node_reclaim)
{
	/* "M" is 0M to memparse(), as for memory.reclaim: reclaims nothing */
	static const char *const bad[] = { "abc", "16M bogus", "16M swappiness=201",
					    "16M swappiness=-1", "-16M" };
	long before, after;
	unsigned int i;
	double r0;

	ASSERT_EQ(0, read_on(0, "file0"));
	ASSERT_EQ(0, read_on(1, "file1"));
	before = node_file_lru_kb(1);
	ASSERT_LT(FILE_MB * 1024L, before);
	ASSERT_EQ(0, node_write(1, "reclaim", "16M"));
	after = node_file_lru_kb(1);
	r0 = resident("file0");
	TH_LOG("node1 reclaim 16M: node1 file LRU %ld -> %ld kB; file0 %.1f%% resident, file1 %.1f%%",
	       before, after, r0, resident("file1"));
	EXPECT_LE(12 * 1024L, before - after);
	EXPECT_LE(99.0, r0);

	/* a new file: no shadow entries, its pages are not refaults */
	ASSERT_EQ(0, run("head -c 8M /dev/urandom > " MNT "/small && sync"));
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "1"));
	ASSERT_EQ(0, node_write(1, "drop_caches", "1"));
	ASSERT_EQ(0, read_on(1, "small"));
	before = node_file_lru_kb(1);
	TH_LOG("node1 file LRU: active %ld kB, inactive %ld kB (node: %ld kB)",
	       node_meminfo_kb(1, "Active(file)"), node_meminfo_kb(1, "Inactive(file)"),
	       node_meminfo_kb(1, "MemTotal"));
	EXPECT_EQ(0, node_write(1, "reclaim", "4M swappiness=0"));
	after = node_file_lru_kb(1);
	TH_LOG("node1 reclaim 4M swappiness=0: file LRU %ld -> %ld kB", before, after);
	EXPECT_LE(2 * 1024L, before - after);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, node_write(1, "reclaim", bad[i])) {
			TH_LOG("\"%s\"", bad[i]);
		}
	}
	EXPECT_EQ(-EINVAL, write_path("/sys/fs/cgroup/memory.reclaim", "abc"));
	EXPECT_EQ(0, write_path("/sys/fs/cgroup/memory.reclaim", "1M"));
	/* a memcg with page cache of its own, reclaimed file-only */
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "1"));
	ASSERT_EQ(0, read_file_on(0, MNT "/file0", true));
	EXPECT_EQ(-EINVAL, write_path(CGROUP "/memory.reclaim", "1M swappiness=201"));
	EXPECT_EQ(0, write_path(CGROUP "/memory.reclaim", "1M swappiness=0"));
}

/* "N reclaimable objects" of ext4's es_shrinker_info for @dev, or -1 */
static long es_reclaimable(const char *dev)
{
	char path[128], line[256];
	const char *name = strrchr(dev, '/');
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/fs/ext4/%s/es_shrinker_info",
		 name ? name + 1 : dev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* the first "N reclaimable objects" line, under "stats:" */
	while (ret < 0 && fgets(line, sizeof(line), f))
		if (strstr(line, " reclaimable objects") && sscanf(line, "%ld", &v) == 1)
			ret = v;
	fclose(f);
	return ret;
}

/*
 * Shrinkers that are not NUMA-aware are left out of a node's drop: they
 * cannot free one node's objects only. ext4's extent status shrinker is
 * one (shrinker_alloc(0, ...)); its count is in es_shrinker_info. A file
 * of 4000 one-block extents with holes between them, read from node 0
 * (its inode, and the extent status tree hanging off it, live there),
 * gives thousands of entries (enough to show in the shrinker's per-CPU
 * count): "2" to node1/drop_caches must leave 99% of them. The control:
 * "2" to the global drop_caches frees most of them.
 */
TEST_F(vfs, non_numa_aware_shrinkers_skipped)
{
	static char block[4096];
	long before, after, global;
	int fd, i;

	fd = open(MNT "/frag", O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	for (i = 0; i < 4000; i++)
		ASSERT_EQ((ssize_t)sizeof(block),
			  pwrite(fd, block, sizeof(block), (off_t)i * 2 * sizeof(block)));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "3"));
	ASSERT_EQ(0, read_path_on(0, MNT "/frag", 0, 8000 * sizeof(block), true, false));
	before = es_reclaimable(self->dev);
	ASSERT_LT(4000, before) TH_LOG("%ld reclaimable extent status entries for %s",
				       before, self->dev);
	ASSERT_EQ(0, node_write(1, "drop_caches", "2"));
	after = es_reclaimable(self->dev);
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "2"));
	global = es_reclaimable(self->dev);
	TH_LOG("ext4 reclaimable extent status entries: %ld, after node1 drop %ld, after global drop %ld",
	       before, after, global);
	EXPECT_LE(before * 99 / 100, after);
	EXPECT_GT(before / 2, global);
}

/*
 * XFS caches files in large folios (ext4 on 6.12 does not): the per-node
 * page-cache drop must handle multi-index entries. fx0 is read on node 0
 * and fx1 on node 1, with readahead (which allocates the large folios);
 * "1" to node1/drop_caches drops fx1 (at most 1% stays) and keeps 99% of
 * fx0.
 */
TEST_F(vfs, drop_pagecache_large_folios)
{
	char cmd[512], dev2[64];
	double r0, r1;
	FILE *p;

	/* mkfs.xfs wants 300 MB at least */
	ASSERT_EQ(0, run("truncate -s 512M " IMG2));
	p = popen("losetup -f --show " IMG2, "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(dev2, sizeof(dev2), p));
	pclose(p);
	dev2[strcspn(dev2, "\n")] = 0;
	snprintf(cmd, sizeof(cmd),
		 "mkfs.xfs -q -f %s && mkdir -p %s && mount -t xfs %s %s && head -c %dM /dev/urandom > %s/fx0 && head -c %dM /dev/urandom > %s/fx1 && sync && echo 1 > /proc/sys/vm/drop_caches",
		 dev2, MNT2, dev2, MNT2, FILE_MB, MNT2, FILE_MB, MNT2);
	ASSERT_EQ(0, run(cmd)) TH_LOG("%s failed", cmd);
	ASSERT_EQ(0, read_file_on(0, MNT2 "/fx0", false));
	ASSERT_EQ(0, read_file_on(1, MNT2 "/fx1", false));
	r0 = resident_path(MNT2 "/fx0", 0, (size_t)FILE_MB << 20);
	r1 = resident_path(MNT2 "/fx1", 0, (size_t)FILE_MB << 20);
	TH_LOG("xfs before: fx0 %.1f%% resident, fx1 %.1f%%", r0, r1);
	EXPECT_LE(99.0, r0);
	EXPECT_LE(99.0, r1);
	ASSERT_EQ(0, node_write(1, "drop_caches", "1"));
	r0 = resident_path(MNT2 "/fx0", 0, (size_t)FILE_MB << 20);
	r1 = resident_path(MNT2 "/fx1", 0, (size_t)FILE_MB << 20);
	TH_LOG("xfs after node1 drop 1: fx0 %.1f%% resident, fx1 %.1f%%", r0, r1);
	EXPECT_LE(99.0, r0);
	EXPECT_GE(1.0, r1);
	snprintf(cmd, sizeof(cmd), "umount %s; losetup -d %s; rm -f %s", MNT2, dev2, IMG2);
	run(cmd);
}

/* Drop one capability from the caller's effective set */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

TEST_F(vfs, invalid_writes)
{
	/* an empty write never reaches the store: write(2) returns 0 */
	static const char *const bad[] = { "0", "4", "-1", "7", "abc", "1x", " ", "1 2" };
	char path[128];
	unsigned int i;
	pid_t pid;
	int st;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, node_write(1, "drop_caches", bad[i])) {
			TH_LOG("\"%s\"", bad[i]);
		}
	}
	EXPECT_EQ(0, node_write(1, "drop_caches", "3\n"));
	/* write-only, and root only */
	snprintf(path, sizeof(path), NODE, 1, "drop_caches");
	EXPECT_EQ(-1, open(path, O_RDONLY));
	snprintf(path, sizeof(path), NODE, 1, "vfs_cache");
	EXPECT_EQ(-EACCES, write_path(path, "1"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_cap(CAP_SYS_ADMIN))
			_exit(2);
		_exit(node_write(1, "drop_caches", "1") == -EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("a writer without CAP_SYS_ADMIN was not refused with EPERM");
}

/*
 * Per-node drops and vfs_cache reads against mounts and unmounts of a
 * second file system whose caches they walk: for 10 s, a child writes 3
 * to node1/drop_caches and reads vfs_cache in a loop while the parent
 * mounts, fills (on node 1), and unmounts. Every step must succeed;
 * scripts/vm fails the run on any kernel report or hung task.
 */
TEST_F_TIMEOUT(vfs, drop_during_umount, 120)
{
	char cmd[512], dev2[64], path[256];
	unsigned long long end;
	int rounds = 0, i, fd, st;
	pid_t pid;
	FILE *p;

	ASSERT_EQ(0, run("truncate -s 64M " IMG2));
	p = popen("losetup -f --show " IMG2, "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(dev2, sizeof(dev2), p));
	pclose(p);
	dev2[strcspn(dev2, "\n")] = 0;
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s && mkdir -p %s", dev2, MNT2);
	ASSERT_EQ(0, run(cmd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			if (node_write(1, "drop_caches", "3"))
				_exit(1);
			if (node_value(1, "vfs_cache", "nr_dentry_unused") < 0)
				_exit(2);
		}
	}
	ASSERT_EQ(0, bind_node(1));
	end = now_ns() + 10000000000ULL;
	while (now_ns() < end) {
		ASSERT_EQ(0, mount(dev2, MNT2, "ext4", 0, NULL)) TH_LOG("round %d", rounds);
		for (i = 0; i < 200; i++) {
			snprintf(path, sizeof(path), "%s/f%d", MNT2, i);
			fd = open(path, O_CREAT | O_WRONLY, 0644);
			ASSERT_LE(0, fd);
			close(fd);
		}
		ASSERT_EQ(0, umount(MNT2)) TH_LOG("round %d", rounds);
		rounds++;
	}
	ASSERT_EQ(0, waitpid(pid, &st, WNOHANG)) TH_LOG("the dropping child stopped");
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	TH_LOG("%d mount/fill/umount rounds beside per-node drops", rounds);
	EXPECT_LE(3, rounds);
	pin_cpu(0, -1);
	syscall(SYS_set_mempolicy, 0, NULL, 0);
	snprintf(cmd, sizeof(cmd), "losetup -d %s; rm -f %s", dev2, IMG2);
	run(cmd);
}

#define NSMALL	4000

/*
 * In a child bound to node 1: write (@create) or read NSMALL files of
 * 16 KiB under MNT/s; 0 or -1
 */
static int small_files_on_node1(bool create)
{
	pid_t pid = fork();
	int st, i;

	if (pid < 0)
		return -1;
	if (!pid) {
		static char buf[16 << 10];
		char path[256];
		int fd;

		if (bind_node(1))
			_exit(2);
		memset(buf, 0x5a, sizeof(buf));
		for (i = 0; i < NSMALL; i++) {
			snprintf(path, sizeof(path), "%s/s/f%05d", MNT, i);
			fd = create ? open(path, O_CREAT | O_WRONLY, 0644) : open(path, O_RDONLY);
			if (fd < 0)
				_exit(3);
			if ((create ? write(fd, buf, sizeof(buf)) : read(fd, buf, sizeof(buf))) !=
			    sizeof(buf))
				_exit(4);
			close(fd);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/*
 * A fatal signal stops a node's drop: node 1 holds the page cache of
 * NSMALL small files; an uninterrupted drop of node 1 (the control) takes
 * D and frees F. After the files are read again, a child writes "1" to
 * node1/drop_caches and is killed D/8 later: it must be gone within D/2
 * and have freed under half of F (the walk visits the superblocks in turn,
 * so it may not have reached the ext4 one yet: anything from 0 to about an
 * eighth, measured 37% when killed at D/4). A drop that ignored the signal
 * would run to its end: 7D/8 and all of F.
 */
TEST_F_TIMEOUT(vfs, drop_stops_at_fatal_signal, 180)
{
	unsigned long long t, d, lat;
	long k0, k1, k2, k3;
	int pfd[2], st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, mkdir(MNT "/s", 0755));
	ASSERT_EQ(0, small_files_on_node1(true));
	sync();
	k0 = node_meminfo_kb(1, "FilePages");
	t = now_ns();
	ASSERT_EQ(0, node_write(1, "drop_caches", "1"));
	d = now_ns() - t;
	k1 = node_meminfo_kb(1, "FilePages");
	ASSERT_EQ(0, small_files_on_node1(false));
	k2 = node_meminfo_kb(1, "FilePages");

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (write(pfd[1], "", 1) != 1)
			_exit(2);
		node_write(1, "drop_caches", "1");
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	usleep(d / 8000);
	t = now_ns();
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	lat = now_ns() - t;
	k3 = node_meminfo_kb(1, "FilePages");
	TH_LOG("node 1 drop of %d small files' cache: %.1f ms, freed %ld kB; killed at an eighth: gone %.1f ms later, freed %ld kB of %ld",
	       NSMALL, d / 1e6, k0 - k1, lat / 1e6, k2 - k3, k2 - k1);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	EXPECT_LE(NSMALL * 16L * 8 / 10, k0 - k1) TH_LOG("the control dropped too little");
	EXPECT_LE(NSMALL * 16L * 8 / 10, k2 - k1) TH_LOG("the files were not read back on node 1");
	EXPECT_GT(d / 2, lat);
	EXPECT_GT((k0 - k1) / 2, k2 - k3);
}

TEST_HARNESS_MAIN
