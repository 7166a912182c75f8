/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tests/jobs' programs share: small sysfs readers, node and CPU
 * lists, and numa_emu_cpus= from the kernel command line.
 */
#ifndef FLEET_JOBS_H
#define FLEET_JOBS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

/* A "0-3,5" list as a bit mask (nodes and CPUs below 64). */
static inline unsigned long long mask_of(const char *s)
{
	unsigned long long m = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i < 64; i++)
			m |= 1ULL << i;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return m;
}

/* The CPUs the kernel lists for the nodes in @nodes. */
static inline unsigned long long cpus_of(unsigned long long nodes)
{
	unsigned long long m = 0;
	char path[128], buf[256];

	for (int n = 0; n < 64; n++) {
		if (!(nodes >> n & 1))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		if (!read_str(path, buf, sizeof(buf)))
			m |= mask_of(buf);
	}
	return m;
}

/* The value of numa_emu_cpus= on the kernel command line, or "". */
static inline void emu_cpus_param(char *val, size_t size)
{
	char buf[4096], *p;

	val[0] = '\0';
	if (read_str("/proc/cmdline", buf, sizeof(buf)))
		return;
	p = strstr(buf, "numa_emu_cpus=");
	if (p)
		sscanf(p + strlen("numa_emu_cpus="), "%63s", val);
	(void)size;
}

static inline bool spread_mode(void)
{
	char val[64];

	emu_cpus_param(val, sizeof(val));
	return !strcmp(val, "spread");
}

static inline int online_nodes(void)
{
	char buf[256];

	if (read_str("/sys/devices/system/node/has_memory", buf, sizeof(buf)))
		return 0;
	return __builtin_popcountll(mask_of(buf));
}

#endif /* FLEET_JOBS_H */
