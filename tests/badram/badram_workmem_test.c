// SPDX-License-Identifier: GPL-2.0
/*
 * No bad page is used as working memory while the bad pages are being
 * reserved. memblock allocates top-down, so the arrays badram_reserve()
 * works in (the parsed patterns, the ranges it sorts) and memblock's own
 * array of reserved regions, moved when it fills up during the
 * reservation loop, could land on bad pages not reserved yet, be written
 * and be read back: silent corruption on non-ECC RAM, a machine check at
 * every boot on ECC RAM.
 *
 * The oracle is memblock's debug log (the shapes that run this test boot
 * with memblock=debug and a log buffer that holds it): every memblock
 * allocation that a badram function asks for, the address memblock
 * reserved for it, and every move of the reserved array, from the first
 * badram allocation to badram's summary line. The bad pages come from
 * tests/badram/badram.h, not from the kernel.
 *
 * After the summary line, until the page allocator takes over, no memblock
 * allocation may land on a bad page either: memory freed then (memblock's
 * old array, working memory that had to go on bad pages, on EFI boots the
 * firmware's memory map) released the bad pages reserved under it, unless
 * they are reserved again at once.
 *
 * The shapes that run it leave room between the bad pages for all of it;
 * one (4 GiB, a bad page in every 256 KiB) leaves no gap as long as
 * memblock's array of all the ranges, which must then grow in steps.
 */
#include "../../kselftest_harness.h"
#include "badram.h"

#define MAX_REGIONS 256

struct region {
	uint64_t start, end;	/* physical, inclusive */
	char what[48];
};

FIXTURE(workmem) {
	struct expect *e;
	char *log;
	struct region r[MAX_REGIONS];
	int nr;
	int allocs;		/* allocations a badram function asked for */
	int moves;		/* moves of memblock.reserved's array */
	bool summary;		/* badram's summary line was seen */
};

static void add_region(FIXTURE_DATA(workmem) *self, uint64_t s, uint64_t e,
		       const char *what)
{
	if (self->nr == MAX_REGIONS)
		return;
	self->r[self->nr].start = s;
	self->r[self->nr].end = e;
	snprintf(self->r[self->nr].what, sizeof(self->r[0].what), "%s", what);
	self->nr++;
}

/*
 * memblock=debug prints, for an allocation,
 *   memblock_phys_alloc_range: 4096 bytes align=0x1000 from=... badram_apply+0x4a/0x2f0
 *   memblock_reserve: [0x000000003fe00000-0x000000003fe00fff] memblock_alloc_range_nid+0xc4/0x150
 * and for a move of a regions array
 *   memblock: reserved is doubled to 256 at [0x...-0x...]
 * ("is resized to" where badram made room for its reservations).
 */
FIXTURE_SETUP(workmem)
{
	bool pending = false, in = false;
	char *line, *next, *p;
	unsigned long long s, t;

	if (access(SYSFS, F_OK))
		SKIP(return, "no " SYSFS " (CONFIG_BADRAM=n?)");
	self->e = expect_load();
	ASSERT_NE(NULL, self->e);
	self->log = kernel_log();
	ASSERT_NE(NULL, self->log);
	ASSERT_NE(NULL, strstr(self->log, "memblock_reserve: ["))
		TH_LOG("no memblock debug output: boot with memblock=debug log_buf_len=8M");
	for (line = self->log; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strstr(line, "badram: ") && strstr(line, " patterns, ") &&
		    strstr(line, " pages excluded")) {
			self->summary = true;
			break;
		}
		if (strstr(line, "memblock_") && strstr(line, " bytes align=") &&
		    strstr(line, " badram_")) {
			in = true;
			pending = true;
			self->allocs++;
			continue;
		}
		/* badram may move memblock's array before it allocates */
		if (strstr(line, "memblock: reserved is resized to"))
			in = true;
		if (!in)
			continue;
		p = strstr(line, "memblock_reserve: [");
		if (pending && p && strstr(line, "memblock_alloc_range_nid") &&
		    sscanf(p, "memblock_reserve: [%llx-%llx]", &s, &t) == 2) {
			add_region(self, s, t, "badram allocation");
			pending = false;
			continue;
		}
		p = strstr(line, "memblock: reserved is ");
		if (p && (p = strstr(p, " at [")) &&
		    sscanf(p, " at [%llx-%llx]", &s, &t) == 2) {
			add_region(self, s, t, "memblock.reserved array");
			self->moves++;
		}
	}
	TH_LOG("%d badram allocations, %d moves of memblock.reserved, %llu bad pages",
	       self->allocs, self->moves, (unsigned long long)self->e->nbadpages);
}

FIXTURE_TEARDOWN(workmem)
{
	free(self->log);
}

/* Bad pages of [@s, @e] (physical, inclusive), by the oracle. */
static uint64_t bad_in(const struct expect *e, uint64_t s, uint64_t t)
{
	uint64_t pfn, n = 0;

	for (pfn = s / PAGE; pfn <= t / PAGE; pfn++)
		n += is_bad(e, pfn);
	return n;
}

/* The log was complete: badram allocated, and its summary came after. */
TEST_F(workmem, log_complete)
{
	ASSERT_TRUE(self->summary) TH_LOG("no badram summary line in the log");
	ASSERT_LT(self->nr, MAX_REGIONS) TH_LOG("more regions than the test keeps");
	ASSERT_LT(0, self->allocs);
	ASSERT_EQ(self->allocs, self->nr - self->moves)
		TH_LOG("an allocation without its address in the log");
}

/* Bad pages the kernel says its working memory and memblock's array took. */
static uint64_t reported(const char *log)
{
	const char *p, *q, *eol;
	unsigned long long n, sum = 0;

	for (p = strstr(log, "badram: "); p; p = strstr(p + 1, "badram: ")) {
		eol = strchr(p, '\n');
		if (!eol)
			break;
		q = strstr(p, " is on ");
		if (q && q < eol && sscanf(q, " is on %llu bad pages", &n) == 1)
			sum += n;
		q = strstr(p, " moved onto ");
		if (q && q < eol && sscanf(q, " moved onto %llu bad pages", &n) == 1)
			sum += n;
	}
	return sum;
}

/* The longest run of RAM pages with no bad page, by the oracle. */
static uint64_t longest_clean_run(const struct expect *e)
{
	uint64_t pfn, run = 0, best = 0;

	for (pfn = 0; pfn < e->max_pfn; pfn++) {
		run = is_ram(e, pfn) && !is_bad(e, pfn) ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

/*
 * None of badram's working memory, nor memblock's array, is a bad page;
 * unless no run of RAM between the bad pages is twice as long as the
 * largest of them, and then the kernel says how many it used, exactly.
 */
TEST_F(workmem, no_bad_page_used)
{
	uint64_t n, all = 0, largest = 0, run = longest_clean_run(self->e);
	char *log = kernel_log();	/* the setup cut self->log into lines */
	uint64_t said;
	int i;

	ASSERT_NE(NULL, log);
	said = reported(log);
	free(log);

	for (i = 0; i < self->nr; i++) {
		n = bad_in(self->e, self->r[i].start, self->r[i].end);
		TH_LOG("%s [0x%llx-0x%llx]: %llu bad pages", self->r[i].what,
		       (unsigned long long)self->r[i].start,
		       (unsigned long long)self->r[i].end,
		       (unsigned long long)n);
		all += n;
		n = (self->r[i].end - self->r[i].start) / PAGE + 1;
		if (n > largest)
			largest = n;
	}
	TH_LOG("%llu bad pages used, %llu said; longest clean run %llu pages, largest region %llu",
	       (unsigned long long)all, (unsigned long long)said,
	       (unsigned long long)run, (unsigned long long)largest);
	ASSERT_EQ(all, said);
	if (run >= 2 * largest)
		ASSERT_EQ(0ULL, (unsigned long long)all);
}

/*
 * Every memblock allocation and move of memblock's array from badram's
 * summary line to the end of the log, by the same parse: none may take a
 * bad page (they are all reserved by then).
 */
TEST_F(workmem, later_allocations_avoid_bad_pages)
{
	char *log = kernel_log(), *line, *next, *p;
	uint64_t n, all = 0;
	unsigned long long s, t;
	bool after = false;
	int checked = 0;

	ASSERT_NE(NULL, log);
	for (line = log; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!after) {
			after = strstr(line, "badram: ") &&
				strstr(line, " pages excluded");
			continue;
		}
		p = strstr(line, "memblock_reserve: [");
		if (p && strstr(line, "memblock_alloc_range_nid") &&
		    sscanf(p, "memblock_reserve: [%llx-%llx]", &s, &t) == 2)
			goto check;
		p = strstr(line, "memblock: reserved is ");
		if (p && (p = strstr(p, " at [")) &&
		    sscanf(p, " at [%llx-%llx]", &s, &t) == 2)
			goto check;
		continue;
check:
		checked++;
		n = bad_in(self->e, s, t);
		if (n)
			TH_LOG("[0x%llx-0x%llx] has %llu bad pages: %s", s, t,
			       (unsigned long long)n, line);
		all += n;
	}
	free(log);
	TH_LOG("%d later allocations checked, %llu bad pages in them", checked,
	       (unsigned long long)all);
	ASSERT_TRUE(after) TH_LOG("no badram summary line in the log");
	ASSERT_LT(0, checked);
	ASSERT_EQ(0ULL, (unsigned long long)all);
}

TEST_HARNESS_MAIN
