// SPDX-License-Identifier: GPL-2.0
/*
 * Where a job's dentries go when its CPU is on another node than its
 * memory: a walker runs on node 0's CPU and is confined to node 1, by a
 * memory policy (MPOL_BIND) or by a cgroup cpuset (cpuset.mems), and
 * stats a tree of NFILES files on ext4. tests/vfs/vm runs it twice: with
 * the stock allocator (mainline's placement, the control: the objects
 * come from the CPU's slab, on node 0, whatever the walker's nodes) and
 * with slab_strict_numa, where 90% of them must land on node 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fleet_test.h"
#include "../../kselftest_harness.h"

#define IMG	"/tmp/vfs-place.img"
#define MNT	"/mnt/vfs-place"
#define CG	"/sys/fs/cgroup/vfs-place"
#define NFILES	6000
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

static long dentries(int nid)
{
	char path[128], name[64];
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), NODE, nid, "vfs_cache");
	f = fopen(path, "r");
	if (!f)
		return -1;
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
	if (!f)
		return -1;
	if (fscanf(f, "%d", &cpu) != 1)
		cpu = -1;
	fclose(f);
	return cpu;
}

static bool strict(void)
{
	char buf[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return strstr(buf, "slab_strict_numa");
}

/* In a child on node 0's CPU, confined to node 1 (@how): stat the tree */
static int walk(const char *how)
{
	pid_t pid = fork();
	int st, i;

	if (pid < 0)
		return -1;
	if (!pid) {
		char path[256], me[16];
		unsigned long mask = 1UL << 1;
		struct stat sb;

		if (!strcmp(how, "cpuset")) {
			snprintf(me, sizeof(me), "%d", getpid());
			if (write_path(CG "/cgroup.procs", me))
				_exit(4);
		} else if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask, sizeof(mask) * 8)) {
			_exit(5);
		}
		if (pin_cpu(0, node_cpu(0)))
			_exit(2);
		for (i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/d/f%05d", MNT, i);
			if (stat(path, &sb))
				_exit(3);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

FIXTURE(place) {
	char dev[64];
};

FIXTURE_VARIANT(place) {
	const char *how;
};

FIXTURE_VARIANT_ADD(place, mempolicy) {
	.how = "mempolicy",
};

FIXTURE_VARIANT_ADD(place, cpuset) {
	.how = "cpuset",
};

FIXTURE_SETUP(place)
{
	char cmd[512];
	FILE *p;
	int i, fd;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_LE(0, node_cpu(1)) TH_LOG("node 1 has no CPU (tests/vfs/vm)");
	ASSERT_NE(node_cpu(0), node_cpu(1));
	ASSERT_EQ(0, run("truncate -s 256M " IMG));
	p = popen("losetup -f --show " IMG, "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(self->dev, sizeof(self->dev), p));
	pclose(p);
	self->dev[strcspn(self->dev, "\n")] = 0;
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s && mkdir -p %s/ && mount %s %s && mkdir %s/d",
		 self->dev, MNT, self->dev, MNT, MNT);
	ASSERT_EQ(0, run(cmd));
	for (i = 0; i < NFILES; i++) {
		snprintf(cmd, sizeof(cmd), "%s/d/f%05d", MNT, i);
		fd = open(cmd, O_CREAT | O_WRONLY, 0644);
		ASSERT_LE(0, fd);
		close(fd);
	}
	sync();
	ASSERT_EQ(0, write_path("/sys/fs/cgroup/cgroup.subtree_control", "+cpuset"));
	ASSERT_TRUE(mkdir(CG, 0755) == 0 || errno == EEXIST);
	snprintf(cmd, sizeof(cmd), "%d", node_cpu(0));
	ASSERT_EQ(0, write_path(CG "/cpuset.cpus", cmd));
	ASSERT_EQ(0, write_path(CG "/cpuset.mems", "1"));
	ASSERT_EQ(0, write_path("/proc/sys/vm/drop_caches", "2"));
}

FIXTURE_TEARDOWN(place)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "umount %s 2>/dev/null; losetup -d %s 2>/dev/null; rm -f %s",
		 MNT, self->dev, IMG);
	run(cmd);
	rmdir(CG);
}

TEST_F(place, dentries_follow_the_job)
{
	long a0 = dentries(0), a1 = dentries(1), d0, d1;

	ASSERT_LE(0, a0);
	ASSERT_LE(0, a1);
	ASSERT_EQ(0, walk(variant->how));
	d0 = dentries(0) - a0;
	d1 = dentries(1) - a1;
	TH_LOG("%s, slab_strict_numa %s: %d dentries from node 0's CPU for node 1: +%ld on node 0, +%ld on node 1",
	       variant->how, strict() ? "on" : "off", NFILES, d0, d1);
	if (strict()) {
		EXPECT_LE(NFILES * 9 / 10, d1);
	} else {
		/* mainline: the CPU's slab, on node 0 */
		EXPECT_LE(NFILES * 9 / 10, d0);
	}
}

TEST_HARNESS_MAIN
