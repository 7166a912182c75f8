// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/fleet must state exactly what the running kernel carries: the
 * base version from BASE and, in order, every patch of the series with the
 * Upstream-Status line of its header. FLEET_TOP names the Fleet checkout the
 * kernel was built from (the Fleet test runner sets it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../../kselftest_harness.h"

#define SYSFS_DIR "/sys/kernel/fleet"

/* Read a whole file into a NUL-terminated buffer, chunk bytes at a time. */
static char *slurp(const char *path, size_t chunk, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		if (cap - len < chunk) {
			cap = 2 * cap + chunk;
			buf = realloc(buf, cap + 1);
			if (!buf)
				break;
		}
		n = read(fd, buf + len, chunk);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (buf)
		buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

static const char *top(void)
{
	const char *t = getenv("FLEET_TOP");

	return t && *t ? t : NULL;
}

/* The "Upstream-Status:" value of a patch header, or "unknown". */
static void upstream_status(const char *patch, char *out, size_t outlen)
{
	char path[4096], line[4096];
	FILE *f;

	snprintf(out, outlen, "unknown");
	snprintf(path, sizeof(path), "%s/patches/%s", top(), patch);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "---\n"))
			break;
		if (!strncmp(line, "Upstream-Status:", 16)) {
			char *v = line + 16;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, outlen, "%s", v);
			break;
		}
	}
	fclose(f);
}

/* The expected "patches" file, built from the checkout's series. */
static char *expected_patches(void)
{
	char path[4096], line[4096], status[2048];
	size_t cap = 1 << 16, len = 0;
	char *exp = calloc(1, cap);
	FILE *f;

	snprintf(path, sizeof(path), "%s/series", top());
	f = fopen(path, "r");
	if (!f || !exp) {
		free(exp);
		if (f)
			fclose(f);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *name = line, *end;

		line[strcspn(line, "#")] = '\0';
		name += strspn(name, " \t\n");
		if (!*name)
			continue;
		end = name + strcspn(name, " \t\n");
		*end = '\0';
		upstream_status(name, status, sizeof(status));
		len += snprintf(exp + len, cap - len, "%s %s\n", name, status);
		if (len >= cap)
			break;
	}
	fclose(f);
	return exp;
}

TEST(base_matches_pinned_base)
{
	char path[4096], *want, *got;

	ASSERT_NE(NULL, top()) TH_LOG("FLEET_TOP is not set");
	snprintf(path, sizeof(path), "%s/BASE", top());
	want = slurp(path, 4096, NULL);
	ASSERT_NE(NULL, want) TH_LOG("cannot read %s", path);
	got = slurp(SYSFS_DIR "/base", 4096, NULL);
	ASSERT_NE(NULL, got) TH_LOG("cannot read " SYSFS_DIR "/base: %s",
				    strerror(errno));
	EXPECT_STREQ(want, got);
	free(want);
	free(got);
}

TEST(patches_match_series)
{
	char *want, *got;
	size_t len;

	ASSERT_NE(NULL, top()) TH_LOG("FLEET_TOP is not set");
	want = expected_patches();
	ASSERT_NE(NULL, want);
	ASSERT_NE('\0', want[0]) TH_LOG("the series is empty");
	got = slurp(SYSFS_DIR "/patches", 4096, &len);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(strlen(got), len) TH_LOG("NUL byte inside patches");
	EXPECT_STREQ(want, got);
	free(want);
	free(got);
}

/* Small reads at odd offsets must assemble the same text. */
TEST(patches_small_reads)
{
	char *whole, *bits;
	size_t a, b;
	struct stat st;

	whole = slurp(SYSFS_DIR "/patches", 65536, &a);
	bits = slurp(SYSFS_DIR "/patches", 7, &b);
	ASSERT_NE(NULL, whole);
	ASSERT_NE(NULL, bits);
	EXPECT_EQ(a, b);
	EXPECT_STREQ(whole, bits);
	/* The binary attribute's size is the text's length. */
	ASSERT_EQ(0, stat(SYSFS_DIR "/patches", &st));
	EXPECT_EQ((off_t)a, st.st_size);
	free(whole);
	free(bits);
}

TEST(read_only)
{
	EXPECT_EQ(-1, open(SYSFS_DIR "/base", O_WRONLY));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, open(SYSFS_DIR "/patches", O_WRONLY));
	EXPECT_EQ(EACCES, errno);
}

/* CONFIG_LOCALVERSION "-fleet", then "-debug" for the debug variant */
TEST(release_is_fleet)
{
	const char *tag;
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	tag = strstr(u.release, "-fleet");
	ASSERT_NE(NULL, tag) TH_LOG("release %s", u.release);
	tag += strlen("-fleet");
	EXPECT_TRUE(!strcmp(tag, "") || !strcmp(tag, "-debug"))
		TH_LOG("release %s: something after -fleet", u.release);
}

TEST_HARNESS_MAIN
