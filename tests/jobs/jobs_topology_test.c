// SPDX-License-Identifier: GPL-2.0
/*
 * numa_emu_cpus= (as /proc/cmdline gives it) on emulated NUMA nodes: with
 * "spread" every CPU is on one emulated node, nodes are 11 apart and the
 * scheduler has a domain spanning them all; without it, or with a bad
 * value (refused with a warning), every emulated node lists every CPU.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../kselftest_harness.h"
#include "jobs.h"

/*
 * Which emulated nodes list which CPUs, the distances between the nodes
 * and the scheduler's widest domain, against numa_emu_cpus=.
 */
TEST(cpus_follow_numa_emu_cpus)
{
	unsigned long long all, seen = 0, span = 0;
	int nodes = online_nodes(), ncpus, with_cpus = 0;
	char val[64], path[128], buf[4096], names[256], verbose[8];
	FILE *f;

	if (nodes < 2)
		SKIP(return, "needs emulated nodes (numa=fake=)");
	ASSERT_EQ(0, read_str("/sys/devices/system/cpu/online", buf, sizeof(buf)));
	all = mask_of(buf);
	ncpus = __builtin_popcountll(all);
	emu_cpus_param(val, sizeof(val));
	TH_LOG("numa_emu_cpus=%s, %d CPUs, %d nodes", val, ncpus, nodes);

	for (int n = 0; n < nodes; n++) {
		unsigned long long cpus = cpus_of(1ULL << n);
		char dist[256], want[256] = "";

		if (cpus)
			with_cpus++;
		if (spread_mode()) {
			EXPECT_EQ(0ULL, cpus & seen) TH_LOG("node %d: %#llx", n, cpus);
		} else {
			EXPECT_EQ(all, cpus) TH_LOG("node %d: %#llx", n, cpus);
		}
		seen |= cpus;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", n);
		ASSERT_EQ(0, read_str(path, dist, sizeof(dist)));
		for (int m = 0; m < nodes; m++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%d",
				 m ? " " : "", m == n ? 10 : spread_mode() ? 11 : 10);
		EXPECT_STREQ(want, dist);
	}
	EXPECT_EQ(all, seen);
	if (spread_mode()) {
		/* every CPU's node is the one that lists it */
		for (int c = 0; c < 64; c++) {
			if (!(all >> c & 1))
				continue;
			for (int n = 0; n < nodes; n++) {
				snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", c, n);
				EXPECT_EQ(!!(cpus_of(1ULL << n) >> c & 1), !access(path, F_OK))
					TH_LOG("cpu%d node%d", c, n);
			}
		}
		EXPECT_EQ(ncpus < nodes ? ncpus : nodes, with_cpus);
		/* with fewer CPUs than nodes, the first nodes have them */
		for (int n = 0; n < nodes; n++) {
			int has = cpus_of(1ULL << n) != 0;

			EXPECT_EQ(n < ncpus, has) TH_LOG("node %d", n);
		}
	}

	/*
	 * cpu0's domains by name: spread, a NUMA level and no PKG (the
	 * package is split as SNC splits it); stock, no NUMA level.
	 */
	names[0] = '\0';
	/* the domains appear in debugfs while sched/verbose is on */
	ASSERT_EQ(0, read_str("/sys/kernel/debug/sched/verbose", verbose, sizeof(verbose)));
	f = fopen("/sys/kernel/debug/sched/verbose", "w");
	ASSERT_NE(NULL, f);
	fputs("Y", f);
	fclose(f);
	for (int d = 0; d < 8; d++) {
		char name[32];

		snprintf(path, sizeof(path), "/sys/kernel/debug/sched/domains/cpu0/domain%d/name", d);
		if (read_str(path, name, sizeof(name)))
			break;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 d ? " " : "", name);
	}
	f = fopen("/sys/kernel/debug/sched/verbose", "w");
	ASSERT_NE(NULL, f);
	fputs(verbose, f);
	fclose(f);
	TH_LOG("cpu0's domains: %s", names);
	if (ncpus > 1 && spread_mode()) {
		EXPECT_NE(NULL, strstr(names, "NUMA"));
		EXPECT_EQ(NULL, strstr(names, "PKG"));
	} else if (ncpus > 1) {
		EXPECT_NE('\0', names[0]);
		EXPECT_EQ(NULL, strstr(names, "NUMA"));
	}

	/* the widest domain of cpu0 (its last domainN line) spans every CPU */
	f = fopen("/proc/schedstat", "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "cpu", 3) && strncmp(buf, "cpu0 ", 5) && span)
			break;
		if (!strncmp(buf, "domain", 6)) {
			char mask[64];

			if (sscanf(buf, "%*s %63s", mask) == 1)
				span = strtoull(mask, NULL, 16);
		}
	}
	fclose(f);
	TH_LOG("cpu0's widest domain spans %#llx", span);
	if (ncpus > 1)
		EXPECT_EQ(all, span);

	/* a bad value is refused with a warning (and the stock mapping) */
	if (val[0] && strcmp(val, "spread") && strcmp(val, "all")) {
		f = popen("dmesg | grep -c 'numa_emu_cpus=.*: want'", "r");
		ASSERT_NE(NULL, f);
		ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
		pclose(f);
		EXPECT_EQ(1, atoi(buf));
	}
}

TEST_HARNESS_MAIN
