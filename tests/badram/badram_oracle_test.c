// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM against a hand-written oracle: for the fixed badram= parameters
 * of two shapes in tests/badram/vm, the bad pages are written out below,
 * worked out by hand from the rules of badram.rst, not computed by a
 * tokenizer or a matcher that could share the kernel's mistakes. The test
 * finds the entry whose parameters this boot has (a boot with none is a
 * failure), and checks that exactly those pages are excluded: each is
 * reserved, the kernel's count equals the hand count, and the pages next
 * to them are not reserved. A shape with fail_badram_sort= runs it on the
 * path taken when there is no memory to sort the ranges.
 */
#include "../../kselftest_harness.h"
#include "badram.h"

struct run {
	uint64_t first, end, step;	/* pfns first, first + step, ... < end */
	const char *why;
};

struct oracle {
	const char *params[2];		/* the shape's badram= parameters */
	struct run runs[4];
	uint64_t pages;			/* the sum of the runs, by hand */
	long rejected;
};

static const struct oracle oracles[] = {
	{	/* shape 1, 1 GiB */
		{ "badram=0x20000000,0xfffffffffffff000,0x21000000,0xffffffffffff0000,0x20000000,0xffffffffffffc000,0x30000000,0xfff01000",
		  "badram=0xZZ,0xfffff000,0x0,0x0,0x22000000" },
		{ { 0x20000, 0x20004, 1, "16 KiB at 512 MiB (holds the single page)" },
		  { 0x21000, 0x21010, 1, "64 KiB at 528 MiB" },
		  { 0x30000, 0x30100, 2, "bit 12 clear in the MiB at 768 MiB" } },
		4 + 16 + 128,
		1,		/* 0x0,0x0: all memory */
	},
	{	/* RAM above 4 GiB, 6 GiB */
		{ "badram=0x130000000,0xfffffffffffff000,0x100000000,0xffffffffffe00000,0x30000000,0xfff01000" },
		{ { 0x30000, 0x30100, 2, "bit 12 clear in the MiB at 768 MiB" },
		  { 0x100000, 0x100200, 1, "2 MiB at 4 GiB" },
		  { 0x130000, 0x130100, 2, "bit 12 clear in the MiB at 4864 MiB (holds the single page)" } },
		128 + 512 + 128,
		0,
	},
};

static bool has_param(const char *cmdline, const char *param)
{
	size_t n = strlen(param);
	const char *p;

	for (p = strstr(cmdline, param); p; p = strstr(p + 1, param))
		if ((p == cmdline || p[-1] == ' ') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

FIXTURE(oracle) {
	const struct oracle *o;
	struct expect ram;		/* only its System RAM ranges */
	uint64_t max_pfn;
	uint64_t *flags;
};

FIXTURE_SETUP(oracle)
{
	char *cmd = read_file("/proc/cmdline", NULL);
	size_t i, k;

	if (access(SYSFS, F_OK))
		SKIP(return, "no " SYSFS " (CONFIG_BADRAM=n?)");
	ASSERT_NE(NULL, cmd);
	for (i = 0; i < sizeof(oracles) / sizeof(oracles[0]) && !self->o; i++) {
		for (k = 0; k < 2 && oracles[i].params[k]; k++)
			if (!has_param(cmd, oracles[i].params[k]))
				break;
		if (k == 2 || !oracles[i].params[k])
			self->o = &oracles[i];
	}
	ASSERT_NE(NULL, self->o) TH_LOG("no oracle for this boot's badram= parameters");
	ASSERT_EQ(0, read_ram(&self->ram));
	self->max_pfn = self->ram.max_pfn;
	ASSERT_LT(0ULL, (unsigned long long)self->max_pfn);
	self->flags = kpageflags(self->max_pfn);
	ASSERT_NE(NULL, self->flags);
	free(cmd);
}

FIXTURE_TEARDOWN(oracle)
{
	free(self->flags);
}

static bool reserved(FIXTURE_DATA(oracle) *self, uint64_t pfn)
{
	return pfn < self->max_pfn && (self->flags[pfn] >> KPF_RESERVED & 1);
}

/* Every page the oracle names is reserved, and the table adds up. */
TEST_F(oracle, named_pages_reserved)
{
	uint64_t pfn, sum = 0, missing = 0;
	const struct run *r;

	for (r = self->o->runs; r->step; r++) {
		ASSERT_LT(r->first, self->max_pfn) TH_LOG("%s: beyond RAM", r->why);
		for (pfn = r->first; pfn < r->end; pfn += r->step) {
			sum++;
			if (!reserved(self, pfn) && missing++ < 5)
				TH_LOG("%s: pfn 0x%llx not reserved", r->why,
				       (unsigned long long)pfn);
		}
	}
	ASSERT_EQ(self->o->pages, sum);
	ASSERT_EQ(0ULL, (unsigned long long)missing);
}

/* Nothing else: the kernel's count is the hand count. */
TEST_F(oracle, counts)
{
	ASSERT_EQ((long)self->o->pages, read_long(SYSFS "excluded_pages"));
	ASSERT_EQ((long)self->o->pages * 4, meminfo_kb("BadRAM:"));
	ASSERT_EQ(self->o->rejected, read_long(SYSFS "rejected"));
}

/*
 * The pages between and around the runs are not reserved: the skipped
 * pages of a strided run, and the page on each side of every run.
 */
TEST_F(oracle, neighbours_free)
{
	uint64_t pfn, bad = 0, checked = 0;
	const struct run *r;

	for (r = self->o->runs; r->step; r++) {
		for (pfn = r->first + 1; r->step > 1 && pfn < r->end; pfn += r->step) {
			checked++;
			if (reserved(self, pfn) && bad++ < 5)
				TH_LOG("%s: pfn 0x%llx between bad pages is reserved",
				       r->why, (unsigned long long)pfn);
		}
		/* the hole below 4 GiB has no pages to check */
		checked += is_ram(&self->ram, r->first - 1) + is_ram(&self->ram, r->end);
		if (is_ram(&self->ram, r->first - 1) && reserved(self, r->first - 1) &&
		    bad++ < 5)
			TH_LOG("pfn 0x%llx below %s is reserved",
			       (unsigned long long)r->first - 1, r->why);
		if (is_ram(&self->ram, r->end) && reserved(self, r->end) && bad++ < 5)
			TH_LOG("pfn 0x%llx above %s is reserved",
			       (unsigned long long)r->end, r->why);
	}
	TH_LOG("%llu pages checked", (unsigned long long)checked);
	ASSERT_EQ(0ULL, (unsigned long long)bad);
}

/*
 * The path taken: with fail_badram_sort= (a fault-injection option) the
 * range array is refused and the pages are reserved in windows, which the
 * tests above find just as exact; without it, the array is used.
 */
TEST_F(oracle, path_taken)
{
	char *cmd = read_file("/proc/cmdline", NULL), *log = kernel_log();
	bool forced, swept;

	ASSERT_NE(NULL, cmd);
	ASSERT_NE(NULL, log);
	forced = strstr(cmd, "fail_badram_sort=") != NULL;
	swept = strstr(log, "badram: no memory to sort ") != NULL &&
		strstr(log, " pages reserved in ") != NULL;
	TH_LOG("fail_badram_sort= %s, windowed path %s", forced ? "given" : "not given",
	       swept ? "taken" : "not taken");
	ASSERT_EQ(forced, swept);
	free(cmd);
	free(log);
}

TEST_HARNESS_MAIN
