// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM with a periodic pattern, what a failing address line looks like:
 * one bad page in every 512 KiB, 1 MiB, 2 MiB or 16 MiB of RAM (tests/badram/vm
 * boots each at 1 GiB and 6 GiB, KASLR on). Reserving all of them at once
 * leaves no contiguous run of memory large enough for early boot, which
 * died before its console came up ("memblocks_present: Failed to allocate
 * 2097152 bytes"). Reaching user space is half of the test; the rest:
 * every bad page is reserved and none is in use by anything that came from
 * the page allocator, the counts agree with the oracle, and the bad pages
 * that early boot took (early_pages) lie in the one window of low memory
 * that the boot log names, kept free for early boot.
 */
#include <sys/mman.h>

#include "../../kselftest_harness.h"
#include "badram.h"

FIXTURE(periodic) {
	struct expect *e;
	uint64_t *flags;
	uint64_t win_start, win_end;	/* pfns of the early-boot window */
	char *log;
};

FIXTURE_SETUP(periodic)
{
	unsigned long long s, t;
	const char *w;

	if (access(SYSFS, F_OK))
		SKIP(return, "no " SYSFS " (CONFIG_BADRAM=n?)");
	self->e = expect_load();
	ASSERT_NE(NULL, self->e);
	ASSERT_EQ(1UL, self->e->npats) TH_LOG("boot with one periodic badram= pattern");
	self->flags = kpageflags(self->e->max_pfn);
	ASSERT_NE(NULL, self->flags) TH_LOG("cannot read /proc/kpageflags");
	self->log = kernel_log();
	ASSERT_NE(NULL, self->log);
	w = strstr(self->log, "are reserved at the end of early boot");
	if (w) {
		while (w > self->log && w[-1] != '\n')
			w--;
		w = strstr(w, "[mem ");
		ASSERT_NE(NULL, w);
		ASSERT_EQ(2, sscanf(w, "[mem %llx-%llx]", &s, &t));
		self->win_start = s / PAGE;
		self->win_end = (t + 1) / PAGE;
	}
	TH_LOG("pattern 0x%llx,0x%llx: %llu bad pages in %llu MiB; early-boot window %s [pfn 0x%llx-0x%llx)",
	       (unsigned long long)self->e->pats[0].addr,
	       (unsigned long long)self->e->pats[0].mask,
	       (unsigned long long)self->e->nbadpages,
	       (unsigned long long)(self->e->max_pfn * PAGE >> 20),
	       w ? "named" : "none",
	       (unsigned long long)self->win_start,
	       (unsigned long long)self->win_end);
}

FIXTURE_TEARDOWN(periodic)
{
	free(self->flags);
	free(self->log);
}

/* The kernel matched as many pages as the oracle, and all are reserved. */
TEST_F(periodic, every_bad_page_reserved)
{
	const uint64_t busy = 1ULL << KPF_BUDDY | 1ULL << KPF_LRU |
			      1ULL << KPF_ANON | 1ULL << KPF_SLAB;
	uint64_t pfn, seen = 0, notres = 0, used = 0;

	for (pfn = 0; pfn < self->e->max_pfn; pfn++) {
		if (!is_bad(self->e, pfn))
			continue;
		seen++;
		if (!(self->flags[pfn] >> KPF_RESERVED & 1) && notres++ < 5)
			TH_LOG("bad pfn 0x%llx not reserved (flags 0x%llx)",
			       (unsigned long long)pfn,
			       (unsigned long long)self->flags[pfn]);
		if ((self->flags[pfn] & busy) && used++ < 5)
			TH_LOG("bad pfn 0x%llx in use (flags 0x%llx)",
			       (unsigned long long)pfn,
			       (unsigned long long)self->flags[pfn]);
	}
	ASSERT_LT(0UL, seen);
	ASSERT_EQ(self->e->nbadpages, seen);
	ASSERT_EQ(0UL, notres);
	ASSERT_EQ(0UL, used);
	ASSERT_EQ((long)seen, read_long(SYSFS "excluded_pages"));
	ASSERT_EQ((long)seen * (long)(PAGE / 1024), meminfo_kb("BadRAM:"));
}

/*
 * Bad pages taken by early boot: only in the window, so at most the
 * window's share of the bad pages, and the log says how many.
 */
TEST_F(periodic, early_pages_only_in_window)
{
	long early = read_long(SYSFS "early_pages");
	uint64_t pfn, in_window = 0;
	char want[96];

	for (pfn = self->win_start; pfn < self->win_end; pfn++)
		in_window += is_bad(self->e, pfn);
	TH_LOG("%ld bad pages taken by early boot; %llu bad pages in the window",
	       early, (unsigned long long)in_window);
	ASSERT_LE(0, early);
	ASSERT_LE((uint64_t)early, in_window);
	if (early) {
		snprintf(want, sizeof(want), "badram: %ld bad pages in total were allocated", early);
		ASSERT_NE(NULL, strstr(self->log, want)) TH_LOG("no warning \"%s\"", want);
	}
}

/* The memory between the bad pages works: most of it can be had. */
TEST_F(periodic, memory_between_bad_pages_usable)
{
	long avail = meminfo_kb("MemAvailable:");
	size_t len = (size_t)avail * 1024 / 2, i, hits = 0;
	char *buf;

	ASSERT_GT(avail, 0);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i < len / PAGE; i++) {
		uint64_t pfn = virt_to_pfn(buf + i * PAGE);

		ASSERT_NE(0UL, pfn) TH_LOG("no pfn for page %zu (not root?)", i);
		if (is_bad(self->e, pfn) && hits++ < 5)
			TH_LOG("got bad pfn 0x%llx", (unsigned long long)pfn);
	}
	munmap(buf, len);
	ASSERT_EQ(0UL, hits);
}

TEST_HARNESS_MAIN
