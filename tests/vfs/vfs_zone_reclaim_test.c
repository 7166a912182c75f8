// SPDX-License-Identifier: GPL-2.0
/*
 * zone_reclaim_mode after the node-reclaim refactor of the nodeN/reclaim
 * backport (__node_reclaim() is shared with proactive reclaim now). On
 * emulated nodes of 256 MiB (tests/vfs/vm), a reader on node 1's CPU
 * reads a 400 MiB file: with zone_reclaim_mode 0 (the control) its page
 * cache spills to other nodes; with 1, node_reclaim() must reclaim node 1
 * instead (zone_reclaim_success in /proc/vmstat grows) and the spill must
 * be under half of the control's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fleet_test.h"
#include "../../kselftest_harness.h"

#define IMG	"/tmp/vfs-zr.img"
#define MNT	"/mnt/vfs-zr"

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

static long vmstat(const char *key)
{
	char name[64];
	long v, ret = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, key))
			ret = v;
	fclose(f);
	return ret;
}

/* File pages (KiB) on every node but @nid */
static long file_kb_elsewhere(int nid)
{
	char path[128], line[256];
	long sum = 0, v;
	int n, m;
	FILE *f;

	for (n = 0; n < 64; n++) {
		if (n == nid)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", n);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Node %d FilePages: %ld", &m, &v) == 2)
				sum += v;
		fclose(f);
	}
	return sum;
}

static int node1_cpu(void)
{
	FILE *f = fopen("/sys/devices/system/node/node1/cpulist", "r");
	int cpu = -1;

	if (f) {
		if (fscanf(f, "%d", &cpu) != 1)
			cpu = -1;
		fclose(f);
	}
	return cpu;
}

/* Read the big file on node 1's CPU; the file pages that went elsewhere */
static long spill(int mode, long *success)
{
	char m[4], cmd[128];
	long before, s0;

	snprintf(m, sizeof(m), "%d", mode);
	if (write_path("/proc/sys/vm/zone_reclaim_mode", m) ||
	    write_path("/proc/sys/vm/drop_caches", "3"))
		return -1;
	before = file_kb_elsewhere(1);
	s0 = vmstat("zone_reclaim_success");
	snprintf(cmd, sizeof(cmd), "taskset -c %d cat %s/big > /dev/null", node1_cpu(), MNT);
	if (run(cmd))
		return -1;
	*success = vmstat("zone_reclaim_success") - s0;
	return file_kb_elsewhere(1) - before;
}

TEST(zone_reclaim_keeps_node_local)
{
	long spill0, spill1, succ0, succ1;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_LE(0, node1_cpu()) TH_LOG("node 1 has no CPU (tests/vfs/vm)");
	ASSERT_EQ(0, run("truncate -s 700M " IMG " && d=$(losetup -f --show " IMG
			 ") && mkfs.ext4 -q $d && mkdir -p " MNT " && mount $d " MNT
			 " && head -c 400M /dev/zero > " MNT "/big && sync"));
	spill0 = spill(0, &succ0);
	spill1 = spill(1, &succ1);
	write_path("/proc/sys/vm/zone_reclaim_mode", "0");
	run("d=$(findmnt -n -o SOURCE " MNT "); umount " MNT "; losetup -d $d; rm -f " IMG);
	TH_LOG("400 MiB read on node 1's CPU: spilled to other nodes %ld kB with zone_reclaim_mode 0 (%ld node reclaims), %ld kB with 1 (%ld)",
	       spill0, succ0, spill1, succ1);
	ASSERT_LE(0, spill0);
	ASSERT_LE(0, spill1);
	EXPECT_LT(100 * 1024L, spill0) TH_LOG("the control did not spill: node 1 too big?");
	EXPECT_EQ(0, succ0);
	EXPECT_LT(0, succ1);
	EXPECT_GT(spill0 / 2, spill1);
}

TEST_HARNESS_MAIN
