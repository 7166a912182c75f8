// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM with a periodic pattern, what a failing address line looks like:
 * one bad page in every 512 KiB, 1 MiB, 2 MiB or 16 MiB of RAM (tests/badram/vm
 * boots each at 1 GiB and 6 GiB, KASLR on). Reserving all of them at once
 * leaves no contiguous run of memory large enough for early boot, which
 * died before its console came up ("memblocks_present: Failed to allocate
 * 2097152 bytes"). Reaching user space is half of the test; the rest:
 * every bad page is reserved and none is in use by anything that came from
 * the page allocator, the counts agree with the oracle, the bad pages that
 * early boot took are reported, and the run kept for the mem_section roots
 * is as small as the boot log says.
 */
#include <sys/mman.h>

#include "../../kselftest_harness.h"
#include "badram.h"

FIXTURE(periodic) {
	struct expect *e;
	uint64_t *flags;
	uint64_t win_start, win_end;	/* pfns of the run kept for the roots */
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
	w = strstr(self->log, "for the mem_section roots: allocated in");
	if (w) {
		while (w > self->log && w[-1] != '\n')
			w--;
		w = strstr(w, "[mem ");
		ASSERT_NE(NULL, w);
		ASSERT_EQ(2, sscanf(w, "[mem %llx-%llx]", &s, &t));
		self->win_start = s / PAGE;
		self->win_end = (t + 1) / PAGE;
	}
	TH_LOG("pattern 0x%llx,0x%llx: %llu bad pages in %llu MiB; roots run %s [pfn 0x%llx-0x%llx)",
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

/*
 * The kernel matched as many pages as the oracle, and all are reserved,
 * also those that early boot had allocated and freed since (the kernel's
 * init sections); none is in use by anything the page allocator handed
 * out.
 */
TEST_F(periodic, every_bad_page_reserved)
{
	const uint64_t busy = 1ULL << KPF_BUDDY | 1ULL << KPF_LRU |
			      1ULL << KPF_ANON | 1ULL << KPF_SLAB;
	uint64_t pfn, seen = 0, notres = 0, used = 0;

	for (pfn = 0; pfn < self->e->max_pfn; pfn++) {
		if (!is_bad(self->e, pfn))
			continue;
		seen++;
		/* reserved even where early boot freed what it had there */
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
 * Bad pages that early boot had in use before the reservation (the kernel
 * image, early page tables, the log buffer, and the mem_section roots when
 * no run between the bad pages could hold them) are counted, and the count
 * is in the boot warning. The run kept for the roots is small (the roots
 * are 2 MiB at most) and the number of its bad pages under the roots is at
 * most the number of bad pages in it.
 */
TEST_F(periodic, early_pages_reported)
{
	long early = read_long(SYSFS "early_pages");
	unsigned long long wpages = 0, wbad = 0, under = 0, image_bad = 0, pfn;
	const char *w = strstr(self->log, "for the mem_section roots: allocated in");
	uint64_t kend = kernel_end_pfn();
	char want[96];

	for (pfn = 0; pfn < kend && pfn < self->e->max_pfn; pfn++)
		image_bad += is_bad(self->e, pfn);
	TH_LOG("%ld bad pages taken by early boot (%llu bad pages below the kernel image's end)",
	       early, image_bad);
	ASSERT_LE(0, early);
	if (early) {
		snprintf(want, sizeof(want), "badram: %ld bad pages were allocated before", early);
		ASSERT_NE(NULL, strstr(self->log, want)) TH_LOG("no warning \"%s\"", want);
	}
	if (!w)
		return;
	ASSERT_EQ(2, sscanf(strstr(w, "before its "), "before its %llu bad pages were reserved, %llu of them",
			    &wbad, &under));
	wpages = self->win_end - self->win_start;
	TH_LOG("roots run: %llu pages, %llu bad, %llu under the roots", wpages, wbad, under);
	ASSERT_LE(wpages, 1024ULL);
	ASSERT_LE(under, wbad);
	ASSERT_LE(under, (unsigned long long)early);
	for (pfn = self->win_start, wpages = 0; pfn < self->win_end; pfn++)
		wpages += is_bad(self->e, pfn);
	ASSERT_EQ(wpages, wbad);
}

/*
 * The memory between the bad pages works: half of MemAvailable (at most
 * 256 MiB) can be had, and none of it is a bad page. The walk looks up
 * 65536 pages, waiting 10 ms for each one in migration: with the densest
 * pattern, beside another VM, it outlasted the harness's default 30 s once
 * (2026-12-07), hence its own timeout.
 */
TEST_F_TIMEOUT(periodic, memory_between_bad_pages_usable, 120)
{
	long avail = meminfo_kb("MemAvailable:");
	size_t len = (size_t)avail * 1024 / 2, i, hits = 0;
	char *buf;

	ASSERT_GT(avail, 0);
	/* at most 256 MiB: a walk over more takes too long under TCG */
	if (len > 256UL << 20)
		len = 256UL << 20;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i < len / PAGE; i++) {
		uint64_t pfn = 0;
		int try;

		/*
		 * a page may be on its way to another pfn: compaction runs
		 * hard when no free block is larger than the period
		 */
		for (try = 0; try < 50 && !pfn; try++) {
			if (try)
				usleep(10000);
			buf[i * PAGE] = 1;
			pfn = virt_to_pfn(buf + i * PAGE);
		}
		ASSERT_NE(0UL, pfn) TH_LOG("no pfn for page %zu (not root?)", i);
		if (is_bad(self->e, pfn) && hits++ < 5)
			TH_LOG("got bad pfn 0x%llx", (unsigned long long)pfn);
	}
	munmap(buf, len);
	ASSERT_EQ(0UL, hits);
}

TEST_HARNESS_MAIN
