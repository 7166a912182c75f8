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

/* In a child bound to node @nid: stat every file of tree @dir; 0 or -1 */
static int walk_on(int nid, const char *dir)
{
	pid_t pid = fork();
	int st, i;

	if (pid < 0)
		return -1;
	if (!pid) {
		char path[256];
		struct stat sb;

		if (bind_node(nid))
			_exit(2);
		for (i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/%s/f%05d", MNT, dir, i);
			if (stat(path, &sb))
				_exit(3);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* In a child bound to node @nid: read file @name into the page cache */
static int read_on(int nid, const char *name)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		static char buf[1 << 16];
		char path[256];
		int fd;

		if (bind_node(nid))
			_exit(2);
		snprintf(path, sizeof(path), "%s/%s", MNT, name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(3);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* Percentage of file @name's pages in the page cache, or -1 */
static double resident(const char *name)
{
	size_t len = FILE_MB << 20, pages = len / getpagesize(), i, n = 0;
	unsigned char *vec = malloc(pages);
	char path[256];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", MNT, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || !vec)
		return -1;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED || mincore(p, len, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(p, len);
	free(vec);
	return 100.0 * n / pages;
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
}

FIXTURE_TEARDOWN(vfs)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "umount %s 2>/dev/null; losetup -d %s 2>/dev/null; rm -f %s",
		 MNT, self->dev, IMG);
	run(cmd);
}

/*
 * A walk on node 1 fills node 1's counts, not node 0's; a walk on node 0
 * the other way round. Most of the NFILES dentries must show on the
 * walker's node (90%), few on the other (10%: the walker's own allocations
 * outside the walk, and anything else the VM does meanwhile). An inode
 * goes on the LRU only once no dentry holds it: these stay off it while
 * their dentries are cached, and must not show on the other node either.
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
	EXPECT_GE(NFILES / 10, b.i[0] - a.i[0]);
	ASSERT_EQ(0, walk_on(0, "d0"));
	take(&c);
	TH_LOG("walk of %d files on node 0: dentries node0 %ld -> %ld, node1 %ld -> %ld; inodes node0 %ld -> %ld, node1 %ld -> %ld",
	       NFILES, b.d[0], c.d[0], b.d[1], c.d[1], b.i[0], c.i[0], b.i[1], c.i[1]);
	EXPECT_LE(NFILES * 9 / 10, c.d[0] - b.d[0]);
	EXPECT_GE(NFILES / 10, c.d[1] - b.d[1]);
	EXPECT_GE(NFILES / 10, c.i[1] - b.i[1]);
}

/*
 * Both nodes filled; "2" to node1/drop_caches takes node 1's dentries and
 * inodes down to a tenth of the walk and leaves 99% of node 0's dentries,
 * and node 1's vmstat counts what it freed: the dentries, then the inodes
 * they held (which pass through the inode LRU as their dentries go). The
 * control: "2" to the global drop_caches takes both nodes down.
 */
TEST_F(vfs, drop_slab_one_node)
{
	long f0, f1, s1, i0, i1;
	struct counts a, b, c;

	ASSERT_EQ(0, walk_on(0, "d0"));
	ASSERT_EQ(0, walk_on(1, "d1"));
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
 * file0 read on node 0, file1 on node 1; "1" to node1/drop_caches drops
 * file1 (at most 1% stays) and keeps 99% of file0. Slab is not touched:
 * node 1's dentries stay.
 */
TEST_F(vfs, drop_pagecache_one_node)
{
	double r0, r1;
	struct counts a, b;

	ASSERT_EQ(0, read_on(0, "file0"));
	ASSERT_EQ(0, read_on(1, "file1"));
	ASSERT_EQ(0, walk_on(1, "d1"));
	r0 = resident("file0");
	r1 = resident("file1");
	TH_LOG("before: file0 %.1f%% resident, file1 %.1f%%", r0, r1);
	ASSERT_LE(99.0, r0);
	ASSERT_LE(99.0, r1);
	take(&a);
	ASSERT_EQ(0, node_write(1, "drop_caches", "1"));
	take(&b);
	r0 = resident("file0");
	r1 = resident("file1");
	TH_LOG("after node1 drop 1: file0 %.1f%% resident, file1 %.1f%%; node1 dentries %ld -> %ld",
	       r0, r1, a.d[1], b.d[1]);
	EXPECT_LE(99.0, r0);
	EXPECT_GE(1.0, r1);
	EXPECT_LE(a.d[1] * 99 / 100, b.d[1]);
}

/* "Node N FilePages: K kB" of nodeN/meminfo, in KiB, or -1 */
static long node_file_kb(int nid)
{
	char path[128], line[256];
	long kb = -1, v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), NODE, nid, "meminfo");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %d FilePages: %ld", &n, &v) == 2)
			kb = v;
	fclose(f);
	return kb;
}

/*
 * nodeN/reclaim, mainline's per-node proactive reclaim (backported):
 * "16M" to node 1 reclaims at least 12 MiB of node 1's file pages
 * (file1, 32 MiB, read there; reclaim may also take slab, and stops at
 * the amount asked) and leaves 99% of file0, read on node 0. Bad input
 * gets EINVAL, and memory.reclaim, which now shares the parser, still
 * works.
 */
TEST_F(vfs, node_reclaim)
{
	static const char *const bad[] = { "abc", "16M bogus", "16M swappiness=201",
					    "16M swappiness=-1", "M" };
	long before, after;
	unsigned int i;
	double r0;

	ASSERT_EQ(0, read_on(0, "file0"));
	ASSERT_EQ(0, read_on(1, "file1"));
	before = node_file_kb(1);
	ASSERT_LT(FILE_MB * 1024L, before);
	ASSERT_EQ(0, node_write(1, "reclaim", "16M"));
	after = node_file_kb(1);
	r0 = resident("file0");
	TH_LOG("node1 reclaim 16M: node1 FilePages %ld -> %ld kB; file0 %.1f%% resident, file1 %.1f%%",
	       before, after, r0, resident("file1"));
	EXPECT_LE(12 * 1024L, before - after);
	EXPECT_LE(99.0, r0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, node_write(1, "reclaim", bad[i])) {
			TH_LOG("\"%s\"", bad[i]);
		}
	}
	EXPECT_EQ(0, node_write(1, "reclaim", "1M swappiness=0"));
	EXPECT_EQ(-EINVAL, write_path("/sys/fs/cgroup/memory.reclaim", "abc"));
	EXPECT_EQ(0, write_path("/sys/fs/cgroup/memory.reclaim", "1M"));
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

TEST_HARNESS_MAIN
