// SPDX-License-Identifier: GPL-2.0
/*
 * I/O attribution when it is not on: booted with ioattr=off (or with a
 * value that does not parse, which must say so and stay off), nothing is
 * tagged or counted and block:block_bio_origin still reports every bio,
 * writeback to its submitter. Runs at the shapes of tests/ioattr/vm that
 * name it; needs root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kselftest_harness.h"

#define TRACING	"/sys/kernel/tracing"
#define MNT	"/tmp/ioattr-off-mnt"
#define IMG	"/tmp/ioattr-off.img"
#define MB	(1024 * 1024)

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

/* The value of ioattr= on the command line, "" if it is not there. */
static void cmdline_value(char *val, size_t len)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/cmdline", "r");

	val[0] = 0;
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		p = strstr(buf, "ioattr=");
		if (p)
			snprintf(val, len, "%.*s", (int)strcspn(p + 7, " \n"), p + 7);
	}
	fclose(f);
}

FIXTURE(off) {
	char dev[64];
	dev_t rdev;
};

FIXTURE_SETUP(off)
{
	char cmd[512], val[64];
	struct stat st;
	FILE *p;

	if (geteuid())
		SKIP(return, "needs root");
	cmdline_value(val, sizeof(val));
	if (!strcmp(val, "on") || !strcmp(val, "1"))
		SKIP(return, "booted with ioattr=%s: tests/ioattr's other shapes", val);
	ASSERT_EQ(0, run("truncate -s 256M " IMG));
	p = popen("losetup -f --show " IMG, "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(self->dev, sizeof(self->dev), p));
	pclose(p);
	self->dev[strcspn(self->dev, "\n")] = 0;
	ASSERT_EQ(0, stat(self->dev, &st));
	self->rdev = st.st_rdev;
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s && mkdir -p %s && mount %s %s",
		 self->dev, MNT, self->dev, MNT);
	ASSERT_EQ(0, run(cmd));
	write_str("/proc/sys/vm/dirty_writeback_centisecs", "0");
	write_str("/proc/sys/vm/dirty_expire_centisecs", "360000");
}

FIXTURE_TEARDOWN(off)
{
	char cmd[256];

	write_str(TRACING "/events/block/block_bio_origin/enable", "0");
	write_str("/proc/sys/vm/dirty_writeback_centisecs", "500");
	write_str("/proc/sys/vm/dirty_expire_centisecs", "3000");
	snprintf(cmd, sizeof(cmd), "umount %s 2>/dev/null; losetup -d %s 2>/dev/null; rm -f %s",
		 MNT, self->dev, IMG);
	run(cmd);
}

/*
 * Off: not announced as on, and a value that does not parse is named in a
 * warning; no writeback totals, no debugfs switch.
 */
TEST_F(off, stays_off)
{
	char val[64], cmd[256];

	cmdline_value(val, sizeof(val));
	TH_LOG("booted with ioattr=%s", val);
	ASSERT_NE(0, run("dmesg | grep -q 'ioattr: tagging dirtied pages'"));
	if (val[0] && strcmp(val, "off") && strcmp(val, "0")) {
		snprintf(cmd, sizeof(cmd), "dmesg | grep -qF 'ioattr=%s not understood'", val);
		ASSERT_EQ(0, run(cmd)) TH_LOG("no warning for ioattr=%s", val);
	}
	ASSERT_NE(0, run("grep -q writeback_bytes /proc/self/io"));
	ASSERT_NE(0, access("/sys/kernel/debug/ioattr", F_OK));
}

/*
 * A writer exits before writeback: the tracepoint reports every written
 * byte, none of them for the writer (the flusher submits them), and
 * io.stat counts nothing as dirtied.
 */
TEST_F(off, writeback_goes_to_submitter)
{
	unsigned long long total = 0, writer = 0, dirtier = 0;
	char line[512], path[128], want[32];
	size_t len = 8 * MB;
	pid_t pid;
	FILE *f;
	int st;

	if (access(TRACING "/events/block/block_bio_origin", F_OK))
		SKIP(return, "no block:block_bio_origin (CONFIG_IO_ATTRIBUTION=n?)");
	ASSERT_EQ(0, write_str(TRACING "/buffer_size_kb", "4096"));
	ASSERT_EQ(0, write_str(TRACING "/trace", ""));
	ASSERT_EQ(0, write_str(TRACING "/events/block/block_bio_origin/enable", "1"));
	snprintf(path, sizeof(path), "%s/data", MNT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *buf = malloc(len);
		int fd = open(path, O_WRONLY | O_CREAT, 0644);

		prctl(PR_SET_NAME, "ioattr-off");
		if (!buf || fd < 0)
			_exit(1);
		memset(buf, 0x5a, len);
		_exit(write(fd, buf, len) == (ssize_t)len ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st);
	sync();
	ASSERT_EQ(0, write_str(TRACING "/events/block/block_bio_origin/enable", "0"));
	snprintf(want, sizeof(want), " tgid=%d ", pid);
	f = fopen(TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int ma, mi, bytes;
		char rwbs[8];
		char *p = strstr(line, "block_bio_origin: ");

		if (!p || sscanf(p + 18, "%u,%u %7s %*u bytes=%u", &ma, &mi, rwbs, &bytes) != 4 ||
		    makedev(ma, mi) != self->rdev || !strchr(rwbs, 'W'))
			continue;
		total += bytes;
		writer += strstr(line, want) ? bytes : 0;
		dirtier += strstr(line, "source=dirtier") ? bytes : 0;
	}
	fclose(f);
	TH_LOG("%llu bytes written traced, %llu for the writer, %llu as a dirtier's",
	       total, writer, dirtier);
	ASSERT_GE(total, len);
	ASSERT_EQ(0, writer);
	ASSERT_EQ(0, dirtier);
	ASSERT_NE(0, run("grep -q dirtied_wbytes /sys/fs/cgroup/io.stat"));
}

TEST_HARNESS_MAIN
