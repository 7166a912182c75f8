/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests of tests/badram expect, worked out independently of the
 * kernel: the patterns are read from /proc/cmdline (badram=) and from the
 * list the initrd was made of (fleet_test.badram_list=PATH, a parameter the
 * kernel ignores), parsed by the rules of badram.rst, and the bad pages are
 * found by brute force over the System RAM of /proc/iomem.
 */
#ifndef BADRAM_TEST_H
#define BADRAM_TEST_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

#define PAGE		4096ULL
#define PAGE_MASK64	(~(PAGE - 1))
#define SYSFS		"/sys/kernel/mm/badram/"
#define MAX_PATS	200000
#define MAX_BAD_TOKENS	64
#define NAMED_TOKENS	8		/* malformed tokens the kernel names */
#define MAX_PARAMS	16		/* badram= parameters the kernel takes */
#define MAX_RAM		64

#define KPF_SLAB	7
#define KPF_BUDDY	10
#define KPF_LRU		5
#define KPF_ANON	12
#define KPF_HWPOISON	19
#define KPF_RESERVED	32

struct pat {
	uint64_t addr;
	uint64_t mask;
};

struct expect {
	struct pat *pats;		/* accepted, in order */
	size_t npats;
	size_t rejected;		/* over the memory budget */
	char *bad_tokens[MAX_BAD_TOKENS];	/* malformed tokens seen */
	size_t nbad;			/* of them stored */
	size_t nbad_all;		/* malformed tokens in all */
	uint64_t ram[MAX_RAM][2];	/* System RAM pfn ranges [s, e) */
	size_t nram;
	uint64_t max_pfn;
	uint8_t *bad;			/* bitmap of bad pfns */
	uint64_t nbadpages;
	char list_path[256];		/* fleet_test.badram_list, or "" */
	size_t params_ignored;		/* badram= beyond MAX_PARAMS */
	char ignored_param[33];		/* the first of them, 32 characters */
};

static inline char *read_file(const char *path, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				break;
		}
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static inline bool is_sep(char c)
{
	return c == ',' || c == '\0' || isspace((unsigned char)c);
}

static inline bool parse_num(const char *tok, size_t n, uint64_t *v)
{
	char num[32], *end;

	if (n > 24)
		return false;
	memcpy(num, tok, n);
	num[n] = '\0';
	if (num[0] == '-' || num[0] == '+')
		return false;
	errno = 0;
	*v = strtoull(num, &end, 0);
	return !errno && *end == '\0' && end != num;
}

/* The pairs of @buf, positional; malformed tokens go to e->bad_tokens. */
static inline void parse_list(struct expect *e, const char *buf, size_t len,
			      struct pat *out, size_t *nout)
{
	bool have = false, addr_ok = false;
	size_t i = 0, start;
	uint64_t addr = 0, v = 0;

	for (;;) {
		bool ok;

		for (;;) {
			while (i < len && is_sep(buf[i]))
				i++;
			if (i < len && buf[i] == '#') {
				while (i < len && buf[i] != '\n')
					i++;
				continue;
			}
			break;
		}
		if (i >= len)
			break;
		start = i;
		while (i < len && !is_sep(buf[i]) && buf[i] != '#')
			i++;
		ok = parse_num(buf + start, i - start, &v);
		e->nbad_all += !ok;
		if (!ok && e->nbad < MAX_BAD_TOKENS)
			e->bad_tokens[e->nbad++] = strndup(buf + start,
					i - start > 32 ? 32 : i - start);
		if (!have) {
			have = true;
			addr_ok = ok;
			addr = v;
			continue;
		}
		have = false;
		if (ok && addr_ok && *nout < MAX_PATS) {
			out[*nout].addr = addr & v;
			out[*nout].mask = v;
			(*nout)++;
		}
	}
}

static inline bool page_matches(const struct pat *p, uint64_t pfn)
{
	uint64_t m = p->mask & PAGE_MASK64;

	return ((pfn * PAGE) & m) == (p->addr & m);
}

static inline bool is_ram(const struct expect *e, uint64_t pfn)
{
	for (size_t i = 0; i < e->nram; i++)
		if (pfn >= e->ram[i][0] && pfn < e->ram[i][1])
			return true;
	return false;
}

static inline bool is_bad(const struct expect *e, uint64_t pfn)
{
	return pfn < e->max_pfn && (e->bad[pfn / 8] >> (pfn % 8) & 1);
}

/* Bad pages of one pattern, marked in @mark (may be NULL): brute force. */
static inline uint64_t pattern_pages(struct expect *e, const struct pat *p,
				     uint8_t *mark)
{
	uint64_t n = 0;

	if ((p->mask | (PAGE - 1)) == UINT64_MAX) {	/* one page */
		uint64_t pfn = p->addr / PAGE;

		if (!is_ram(e, pfn))
			return 0;
		if (mark)
			mark[pfn / 8] |= 1 << (pfn % 8);
		return 1;
	}
	for (size_t r = 0; r < e->nram; r++)
		for (uint64_t pfn = e->ram[r][0]; pfn < e->ram[r][1]; pfn++)
			if (page_matches(p, pfn)) {
				n++;
				if (mark)
					mark[pfn / 8] |= 1 << (pfn % 8);
			}
	return n;
}

static inline int read_ram(struct expect *e)
{
	char *io = read_file("/proc/iomem", NULL), *line, *save;

	if (!io)
		return -1;
	for (line = strtok_r(io, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long s, t;

		if (line[0] == ' ' || !strstr(line, ": System RAM"))
			continue;
		if (sscanf(line, "%llx-%llx", &s, &t) != 2 || e->nram == MAX_RAM)
			continue;
		e->ram[e->nram][0] = (s + PAGE - 1) / PAGE;
		e->ram[e->nram][1] = (t + 1) / PAGE;
		if (e->ram[e->nram][1] > e->max_pfn)
			e->max_pfn = e->ram[e->nram][1];
		e->nram++;
	}
	free(io);
	return e->nram ? 0 : -1;
}

/* First pfn after the kernel image ("Kernel bss" in /proc/iomem), or 0. */
static inline uint64_t kernel_end_pfn(void)
{
	char *io = read_file("/proc/iomem", NULL), *line, *save;
	unsigned long long s, t = 0;

	if (!io)
		return 0;
	for (line = strtok_r(io, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, ": Kernel bss") &&
		    sscanf(line, " %llx-%llx", &s, &t) == 2)
			break;
	free(io);
	return t ? (t + 1 + PAGE - 1) / PAGE : 0;
}

/* The pfn after the highest System RAM in /proc/iomem, or 0. */
static inline uint64_t ram_end_pfn(void)
{
	char *io = read_file("/proc/iomem", NULL), *line, *save;
	unsigned long long s, t, end = 0;

	if (!io)
		return 0;
	for (line = strtok_r(io, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (line[0] != ' ' && strstr(line, ": System RAM") &&
		    sscanf(line, "%llx-%llx", &s, &t) == 2 && t + 1 > end)
			end = t + 1;
	free(io);
	return end / PAGE;
}

/* The kernel image's pfns, "Kernel code" to "Kernel bss" in /proc/iomem. */
static inline int kernel_image_pfns(uint64_t *first, uint64_t *end)
{
	char *io = read_file("/proc/iomem", NULL), *line, *save;
	unsigned long long s, t;

	*first = *end = 0;
	if (!io)
		return -1;
	for (line = strtok_r(io, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, " %llx-%llx", &s, &t) != 2)
			continue;
		if (strstr(line, ": Kernel code"))
			*first = s / PAGE;
		if (strstr(line, ": Kernel bss"))
			*end = (t + PAGE) / PAGE;
	}
	free(io);
	return *first && *end > *first ? 0 : -1;
}

/* Build the expectation; returns NULL with a message on stderr. */
static inline struct expect *expect_load(void)
{
	struct expect *e = calloc(1, sizeof(*e));
	struct pat *all = calloc(MAX_PATS, sizeof(*all));
	char *cmd = read_file("/proc/cmdline", NULL), *tok, *save;
	size_t nall = 0, ram_pages = 0, nparams = 0;
	uint64_t sum = 0;

	if (!e || !all || !cmd)
		return NULL;
	if (read_ram(e)) {
		fprintf(stderr, "no System RAM in /proc/iomem\n");
		return NULL;
	}
	for (size_t r = 0; r < e->nram; r++)
		ram_pages += e->ram[r][1] - e->ram[r][0];
	for (tok = strtok_r(cmd, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (!strncmp(tok, "badram=", 7) && nparams++ >= MAX_PARAMS) {
			if (!e->params_ignored++)
				snprintf(e->ignored_param, sizeof(e->ignored_param), "%s", tok + 7);
		} else if (!strncmp(tok, "badram=", 7))
			parse_list(e, tok + 7, strlen(tok + 7), all, &nall);
		else if (!strncmp(tok, "fleet_test.badram_list=", 23))
			snprintf(e->list_path, sizeof(e->list_path), "%s", tok + 23);
	}
	if (e->list_path[0]) {
		size_t len;
		char *list = read_file(e->list_path, &len);

		if (!list) {
			fprintf(stderr, "cannot read %s\n", e->list_path);
			return NULL;
		}
		parse_list(e, list, len, all, &nall);
		free(list);
	}
	e->bad = calloc(e->max_pfn / 8 + 1, 1);
	e->pats = calloc(nall + 1, sizeof(*e->pats));
	if (!e->bad || !e->pats)
		return NULL;
	for (size_t i = 0; i < nall; i++) {
		uint64_t n = pattern_pages(e, &all[i], NULL);

		if (sum + n > ram_pages / 2) {
			e->rejected++;
			continue;
		}
		sum += n;
		pattern_pages(e, &all[i], e->bad);
		e->pats[e->npats++] = all[i];
	}
	for (uint64_t pfn = 0; pfn < e->max_pfn; pfn++)
		e->nbadpages += is_bad(e, pfn);
	free(all);
	free(cmd);
	return e;
}

/* /proc/kpageflags of pfns [0, max_pfn): malloc'd array. */
static inline uint64_t *kpageflags(uint64_t max_pfn)
{
	uint64_t *f = calloc(max_pfn, sizeof(*f));
	size_t want = max_pfn * sizeof(*f), got = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0 || !f)
		return NULL;
	while (got < want) {
		ssize_t r = pread(fd, (char *)f + got, want - got, got);

		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	return got == want ? f : NULL;
}

static inline long read_long(const char *path)
{
	char *s = read_file(path, NULL);
	long v = -1;

	if (s)
		v = strtol(s, NULL, 10);
	free(s);
	return v;
}

static inline long meminfo_kb(const char *key)
{
	char *s = read_file("/proc/meminfo", NULL), *p;
	long v = -1;

	if (s && (p = strstr(s, key)))
		v = strtol(p + strlen(key), NULL, 10);
	free(s);
	return v;
}

/* The kernel log, NUL-terminated, malloc'd. */
static inline char *kernel_log(void)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf;
	int n;

	if (size <= 0)
		size = 1 << 20;
	buf = malloc(size + 1);
	if (!buf)
		return NULL;
	n = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* The pfn behind @addr of this process, or 0. */
static inline uint64_t virt_to_pfn(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t ent = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, 8, (uintptr_t)addr / PAGE * 8) != 8)
		ent = 0;
	close(fd);
	if (!(ent >> 63 & 1))
		return 0;
	return ent & ((1ULL << 55) - 1);
}

#endif
