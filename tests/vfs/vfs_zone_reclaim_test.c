// SPDX-License-Identifier: GPL-2.0
/*
 * zone_reclaim_mode after the node-reclaim refactor of the nodeN/reclaim
 * backport (__node_reclaim() is shared with proactive reclaim now). On
 * emulated nodes of 256 MiB (tests/vfs/vm), a reader on node 1's CPU
 * reads a 400 MiB file, twice with zone_reclaim_mode 0 (the control) and
 * twice with 1, alternately. With 0 the page cache spills to other nodes
 * whenever node 1 is below its low watermark, as fast as kswapd lets it;
 * with 1, node_reclaim() reclaims node 1 in the reader instead: node
 * reclaims succeed, pages are reclaimed in the reader's context, and the
 * spill must be under half of the control's.
 *
 * Measured (2 vCPUs, TCG, two VMs at once as in make check): one round
 * spilled 24 to 380 MiB with 0 (kswapd reclaimed 36 to 124 MiB of node 1
 * meanwhile) and 0.8 to 3.9 MiB with 1; two rounds 84 and 105 MiB with 0,
 * 1.3 and 10.7 MiB with 1. A node_reclaim() that reclaims nothing fails
 * the success count; one that reclaims the wrong node spills as the
 * control does.
 *
 * The file system lives on a loop device whose backing file is on a tmpfs
 * interleaved over nodes 2-7: with the backing file on /tmp (shmem, which
 * cannot be reclaimed without swap) node 1 held whatever the loop worker
 * wrote there, and a CI run spilled 206 MiB with zone_reclaim_mode 1. The
 * file system is mounted again before each pass so that no shadow entry
 * of the previous pass turns its reads into refaults.
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

#define BACK	"/mnt/vfs-zr-back"
#define IMG	BACK "/img"
#define MNT	"/mnt/vfs-zr"
#define ROUNDS	2

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

static long read_vmstat(const char *key)
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

struct pass {
	long spill;	/* kB of the file's pages on other nodes */
	long success;	/* node reclaims that succeeded */
	long kswapd;	/* pages reclaimed by kswapd */
	long direct;	/* pages reclaimed in the reader's context */
};

/* Read the big file on node 1's CPU */
static long spill(int mode, struct pass *p)
{
	char m[4], cmd[128];
	long before, s0, k0, d0;

	snprintf(m, sizeof(m), "%d", mode);
	if (run("d=$(findmnt -n -o SOURCE " MNT ") && umount " MNT " && mount $d " MNT))
		return -1;
	if (write_path("/proc/sys/vm/zone_reclaim_mode", m) ||
	    write_path("/proc/sys/vm/drop_caches", "3"))
		return -1;
	before = file_kb_elsewhere(1);
	s0 = read_vmstat("zone_reclaim_success");
	k0 = read_vmstat("pgsteal_kswapd");
	d0 = read_vmstat("pgsteal_direct");
	snprintf(cmd, sizeof(cmd), "taskset -c %d cat %s/big > /dev/null", node1_cpu(), MNT);
	if (run(cmd))
		return -1;
	p->success = read_vmstat("zone_reclaim_success") - s0;
	p->kswapd = read_vmstat("pgsteal_kswapd") - k0;
	p->direct = read_vmstat("pgsteal_direct") - d0;
	p->spill = file_kb_elsewhere(1) - before;
	return p->spill;
}

static void add(struct pass *sum, const struct pass *p)
{
	sum->spill += p->spill;
	sum->success += p->success;
	sum->kswapd += p->kswapd;
	sum->direct += p->direct;
}

FIXTURE(zone_reclaim) {};
FIXTURE_SETUP(zone_reclaim) {}
FIXTURE_TEARDOWN(zone_reclaim) {}

/* Four 400 MiB reads take 20 to 60 s under TCG */
TEST_F_TIMEOUT(zone_reclaim, keeps_node_local, 300)
{
	struct pass p, p0 = { 0 }, p1 = { 0 };
	int round;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_LE(0, node1_cpu()) TH_LOG("node 1 has no CPU (tests/vfs/vm)");
	ASSERT_EQ(0, run("mkdir -p " BACK " && mount -t tmpfs -o size=800M,mpol=interleave:2-7 none "
			 BACK " && truncate -s 700M " IMG
			 " && d=$(losetup -f --show " IMG
			 ") && mkfs.ext4 -q $d && mkdir -p " MNT " && mount $d " MNT
			 " && head -c 400M /dev/zero > " MNT "/big && sync"));
	for (round = 0; round < ROUNDS; round++) {
		ASSERT_LE(0, spill(0, &p));
		add(&p0, &p);
		ASSERT_LE(0, spill(1, &p));
		add(&p1, &p);
	}
	write_path("/proc/sys/vm/zone_reclaim_mode", "0");
	run("d=$(findmnt -n -o SOURCE " MNT "); umount " MNT "; losetup -d $d; umount " BACK);
	TH_LOG("%d x 400 MiB read on node 1's CPU: spilled to other nodes %ld kB with zone_reclaim_mode 0 (%ld node reclaims), %ld kB with 1 (%ld)",
	       ROUNDS, p0.spill, p0.success, p1.spill, p1.success);
	TH_LOG("pages reclaimed by kswapd / in the reader: %ld / %ld with 0, %ld / %ld with 1",
	       p0.kswapd, p0.direct, p1.kswapd, p1.direct);
	EXPECT_EQ(0, p0.success);
	EXPECT_LT(0, p1.success);
	EXPECT_LT(0, p1.direct);
	EXPECT_GT(p0.spill / 2, p1.spill);
}

TEST_HARNESS_MAIN
