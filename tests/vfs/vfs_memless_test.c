// SPDX-License-Identifier: GPL-2.0
/*
 * Per-node VFS caches on a node without memory (tests/vfs/vm: two sockets,
 * the second a node with a CPU and no memory): a drop there is refused
 * with ENODEV, bad input still with EINVAL; vfs_cache reads zero; the
 * drop of the node with memory works beside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../kselftest_harness.h"

#define NODE	"/sys/devices/system/node/node%d/%s"

static int write_node(int nid, const char *file, const char *val)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), NODE, nid, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Whether node @nid is listed in /sys/devices/system/node/@list */
static int node_in(const char *list, int nid)
{
	char path[128], buf[256], *p = buf;
	int a, b, n, ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/%s", list);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	while (sscanf(p, "%d%n", &a, &n) == 1) {
		b = a;
		p += n;
		if (*p == '-' && sscanf(p + 1, "%d%n", &b, &n) == 1)
			p += n + 1;
		if (nid >= a && nid <= b)
			ret = 1;
		if (*p != ',')
			break;
		p++;
	}
	return ret;
}

TEST(memoryless_node)
{
	char path[128], buf[128];
	int fd, n;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(1, node_in("has_cpu", 1)) TH_LOG("node 1 has no CPU: run in tests/vfs/vm's shape");
	ASSERT_EQ(0, node_in("has_memory", 1)) TH_LOG("node 1 has memory: run in tests/vfs/vm's shape");
	ASSERT_EQ(1, node_in("has_memory", 0));

	EXPECT_EQ(-ENODEV, write_node(1, "drop_caches", "3"));
	EXPECT_EQ(-ENODEV, write_node(1, "drop_caches", "1"));
	EXPECT_EQ(-EINVAL, write_node(1, "drop_caches", "4"));
	EXPECT_EQ(0, write_node(0, "drop_caches", "3"));

	snprintf(path, sizeof(path), NODE, 1, "vfs_cache");
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, n);
	buf[n] = 0;
	EXPECT_EQ(0, strcmp(buf, "nr_dentry_unused 0\nnr_inode_unused 0\n")) TH_LOG("%s", buf);
}

TEST_HARNESS_MAIN
