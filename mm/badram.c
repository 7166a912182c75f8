// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM: keep physical memory that is known to be bad away from the page
 * allocator, from boot on, and tell user space what is bad so that the
 * list can be carried into the next boot.
 *
 * A pattern is an address and a mask, as in the BadRAM patches of Rick van
 * Rein: it names every physical address A with (A & mask) == (addr & mask).
 * A page is bad when any address in it matches, so only the mask bits at
 * and above PAGE_SHIFT matter.  Patterns come from badram= on the command
 * line and from the file kernel/badram in an uncompressed cpio archive at
 * the start of the initrd (the way early CPU microcode is found), which has
 * room for lists far beyond the command line.
 *
 * The architecture calls badram_reserve() once memblock knows the memory
 * map, the direct map is up and the initrd is reserved, before any memory
 * is released to the page allocator.  Every pattern is turned into the
 * ranges of pages it matches in memblock.memory, the ranges are sorted and
 * merged and reserved with memblock, marked MEMBLOCK_RSRV_KEEP so that
 * freeing an early allocation around them does not release them: no
 * matching page ever becomes a free page.  Pages that early boot had
 * already allocated before that point are counted and reported, not
 * reclaimed.
 *
 * Hostile input is refused, never obeyed into a dead machine: a malformed
 * token invalidates its pair, patterns that would take more than half of
 * memory or more than BADRAM_MAX_RANGES ranges are ignored, each with a
 * warning naming it.
 *
 * /sys/kernel/mm/badram/ lists the patterns applied at boot and every page
 * that is hardware-poisoned (soft or hard offlined) now, in the same
 * syntax; see Documentation/admin-guide/mm/badram.rst.
 */
#define pr_fmt(fmt) "badram: " fmt

#include <linux/badram.h>
#include <linux/bitops.h>
#include <linux/ctype.h>
#include <linux/earlycpio.h>
#include <linux/fault-inject.h>
#include <linux/init.h>
#include <linux/initrd.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/memblock.h>
#include <linux/memory.h>
#include <linux/memory_hotplug.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/pfn.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/sysfs.h>
/* after what it needs: ctype, string, kstrtox */
#include <linux/badram_pattern.h>

#include "internal.h"

#define BADRAM_INITRD_PATH	"kernel/badram"
#define BADRAM_MAX_PARAMS	16		/* badram= on the command line */
#define BADRAM_MAX_RANGES	BIT(20)		/* disjoint ranges at boot */
#define BADRAM_NAMED_TOKENS	8		/* malformed tokens named in the log */
#define BADRAM_TRIES		16		/* windows tried for working memory */
#define BADRAM_SLACK		64		/* spare memblock.reserved regions */
#define BADRAM_SWEEP		1024		/* ranges per window, no range array */
/* One line of the sysfs lists: "0x%016llx,0x%016llx\n". */
#define BADRAM_LINE_LEN		38

struct badram_pattern {
	u64 addr;		/* always addr & mask */
	u64 mask;
};

struct badram_range {
	unsigned long start;	/* first pfn */
	unsigned long end;	/* pfn after the last */
};

struct badram_src {
	const char *name;
	const char *buf;
	size_t len;
};

static char *badram_params[BADRAM_MAX_PARAMS] __initdata;
static unsigned int badram_nr_params __initdata;

static struct badram_pattern *badram_patterns __ro_after_init;
static unsigned long badram_nr_patterns __ro_after_init;
static unsigned long badram_nr_rejected __ro_after_init;
static unsigned long badram_pages __ro_after_init;
static unsigned long badram_early_pages __ro_after_init;
static unsigned long badram_nr_malformed __initdata;
/*
 * Bad ranges memblock could not reserve (it had no memory to grow its
 * array): offlined once the page allocator runs, see badram_offline_failed().
 */
#define BADRAM_MAX_FAILED	16
static unsigned long badram_failed[BADRAM_MAX_FAILED][2] __initdata;
static unsigned long badram_nr_failed __initdata;
static unsigned long badram_failed_pages __initdata;
/* pfns of the run kept free for the mem_section roots, if any */
static unsigned long badram_window_start __initdata;
static unsigned long badram_window_end __initdata;

static int __init badram_setup(char *str)
{
	if (!str || !*str) {
		pr_warn("empty badram= ignored\n");
		return 0;
	}
	if (badram_nr_params == BADRAM_MAX_PARAMS) {
		pr_warn("more than %d badram= parameters, \"%.32s\" ignored: use the initrd list\n",
			BADRAM_MAX_PARAMS, str);
		return 0;
	}
	badram_params[badram_nr_params++] = str;
	return 0;
}
early_param("badram", badram_setup);

/*
 * Count a malformed token; true if it is one of the first few, which the
 * log names (badram_reserve() sums up the rest in one line).
 */
static bool __init badram_name_malformed(void)
{
	return ++badram_nr_malformed <= BADRAM_NAMED_TOKENS;
}

/*
 * The next well-formed address,mask pair of @src from *@pos on, into @p;
 * warn about malformed input if @warn. Pairs are positional: a malformed
 * token invalidates the pair it belongs to, and the pairs after it still
 * apply. *@idx counts the pairs read. Returns false at the end of @src.
 */
static bool __init badram_next_pair(const struct badram_src *src,
				    size_t *pos, unsigned long *idx,
				    struct badram_pattern *p, bool warn)
{
	const char *atok, *mtok;
	size_t an, mn;
	u64 addr, mask;
	bool aok, mok;

	for (;;) {
		an = badram_next_token(src->buf, src->len, pos, &atok);
		if (!an)
			return false;
		aok = badram_parse_u64(atok, an, &addr);
		if (!aok && warn && badram_name_malformed())
			pr_warn("%s: pair %lu: bad address \"%.*s\", pair ignored\n",
				src->name, *idx + 1, (int)min_t(size_t, an, 32), atok);
		mn = badram_next_token(src->buf, src->len, pos, &mtok);
		if (!mn) {
			if (warn)
				pr_warn("%s: address \"%.*s\" has no mask, ignored\n",
					src->name, (int)min_t(size_t, an, 32), atok);
			return false;
		}
		(*idx)++;
		mok = badram_parse_u64(mtok, mn, &mask);
		if (!mok && warn && badram_name_malformed())
			pr_warn("%s: pair %lu: bad mask \"%.*s\", pair ignored\n",
				src->name, *idx, (int)min_t(size_t, mn, 32), mtok);
		if (aok && mok) {
			p->mask = mask;
			p->addr = addr & mask;
			return true;
		}
	}
}

/*
 * Parse the well-formed address,mask pairs of @src into @out, warning about
 * malformed input; returns how many. With @out NULL, only an upper bound on
 * it, counted quietly.
 */
static unsigned long __init badram_parse(const struct badram_src *src,
					 struct badram_pattern *out)
{
	unsigned long pairs = 0, idx = 0;
	const char *tok;
	size_t pos = 0;

	if (!out) {
		/* an upper bound is all the caller needs: count tokens */
		while (badram_next_token(src->buf, src->len, &pos, &tok))
			idx++;
		return idx / 2;
	}
	while (badram_next_pair(src, &pos, &idx, &out[pairs], true))
		pairs++;
	return pairs;
}

/* Page frame mask and value of a pattern. */
static void __init badram_pfn_mask(const struct badram_pattern *p,
				   u64 *m, u64 *v)
{
	*m = p->mask >> PAGE_SHIFT;
	*v = p->addr >> PAGE_SHIFT;
}

/*
 * A pattern that fixes every bit of the page frame number names one page:
 * the common case (lists of single bad pages), done without the bit walks.
 */
static bool __init badram_single(const struct badram_pattern *p)
{
	return (p->mask | ~PAGE_MASK) == U64_MAX;
}

/*
 * Fill @r with up to @room ranges of pages in [@start, @end) that @p
 * matches, from the lowest up.  Returns the number filled; *@next is the
 * pfn to continue from.
 */
static unsigned long __init badram_fill(const struct badram_pattern *p,
					u64 start, u64 end,
					struct badram_range *r,
					unsigned long room, u64 *next)
{
	u64 m, v, low, x = start;
	unsigned long n = 0;

	badram_pfn_mask(p, &m, &v);
	if (badram_single(p)) {
		*next = end;
		if (!room || v < start || v >= end)
			return 0;
		r->start = v;
		r->end = v + 1;
		return 1;
	}
	/* matches come in aligned runs of 2^(trailing free bits) pages */
	low = m ? (1ULL << __ffs64(m)) - 1 : U64_MAX;
	while (n < room) {
		u64 e;

		x = badram_next_match(x, m, v);
		if (x >= end)
			break;
		e = low == U64_MAX ? end : min((x | low) + 1, end);
		r[n].start = x;
		r[n].end = e;
		n++;
		x = e;
	}
	*next = x;
	return n;
}

/* Pages of RAM that @p matches, and an upper bound on their ranges. */
static u64 __init badram_pattern_pages(const struct badram_pattern *p,
				       u64 *ranges)
{
	unsigned long start, end;
	u64 m, v, pages = 0, shift;
	int i;

	badram_pfn_mask(p, &m, &v);
	if (badram_single(p)) {
		pages = memblock_is_memory(p->addr) ? 1 : 0;
		*ranges = pages;
		return pages;
	}
	shift = m ? __ffs64(m) : 63;
	*ranges = 0;
	for_each_mem_pfn_range(i, MAX_NUMNODES, &start, &end, NULL) {
		u64 n = badram_count_below(end, m, v) -
			badram_count_below(start, m, v);

		pages += n;
		if (n)
			*ranges += (n >> shift) + 2;
	}
	return pages;
}

/* Reserve [@start, @end) or record it as failed; returns the pages reserved. */
static unsigned long __init badram_memblock_reserve(unsigned long start,
						    unsigned long end)
{
	if (!memblock_reserve_keep(PFN_PHYS(start), PFN_PHYS(end - start)))
		return end - start;
	if (badram_nr_failed < BADRAM_MAX_FAILED) {
		badram_failed[badram_nr_failed][0] = start;
		badram_failed[badram_nr_failed][1] = end;
	}
	badram_nr_failed++;
	badram_failed_pages += end - start;
	return 0;
}

/*
 * Reserve the pages [@start, @end), but those in the window kept for the
 * mem_section roots (badram_place_roots()); returns how many it reserved.
 */
static unsigned long __init badram_reserve_pfns(unsigned long start,
						unsigned long end)
{
	unsigned long ws = badram_window_start, we = badram_window_end;
	unsigned long n = 0;

	if (start < ws)
		n += badram_memblock_reserve(start, min(end, ws));
	if (end > we)
		n += badram_memblock_reserve(max(start, we), end);
	return n;
}

static int __init badram_range_cmp(const void *a, const void *b)
{
	const struct badram_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The sources: each badram= and the initrd's kernel/badram. */
static unsigned int __init badram_sources(struct badram_src *src)
{
	unsigned int i, n = 0;

	for (i = 0; i < badram_nr_params; i++) {
		src[n].name = "badram=";
		src[n].buf = badram_params[i];
		src[n].len = strlen(badram_params[i]);
		n++;
	}
#ifdef CONFIG_BLK_DEV_INITRD
	if (initrd_start && initrd_end > initrd_start) {
		size_t off = 0, size = initrd_end - initrd_start;
		struct cpio_data cd;
		long next;

		/* find_cpio_data() matches a prefix: take the exact name */
		while (off < size) {
			cd = find_cpio_data(BADRAM_INITRD_PATH,
					    (void *)(initrd_start + off),
					    size - off, &next);
			if (!cd.data || cd.name[0] == '\0')
				break;
			off += next;
		}
		if (off < size && cd.data && cd.size) {
			src[n].name = "initrd " BADRAM_INITRD_PATH;
			src[n].buf = cd.data;
			src[n].len = cd.size;
			n++;
		}
	}
#endif
	return n;
}

/*
 * Keep the patterns that fit the limits, in place; returns how many, and
 * the number of ranges they need in *@nr_ranges.
 */
static unsigned long __init badram_validate(struct badram_pattern *p,
					    unsigned long nr,
					    unsigned long *nr_ranges)
{
	u64 budget = (memblock_phys_mem_size() >> PAGE_SHIFT) / 2;
	u64 pages_sum = 0, ranges_sum = 0;
	unsigned long i, kept = 0;

	for (i = 0; i < nr; i++) {
		u64 ranges, pages = badram_pattern_pages(&p[i], &ranges);

		if (pages_sum + pages > budget) {
			pr_warn("pattern 0x%llx,0x%llx ignored: it matches %llu pages, which with the patterns before it is more than half of memory\n",
				p[i].addr, p[i].mask, pages);
			badram_nr_rejected++;
			continue;
		}
		if (ranges_sum + ranges > BADRAM_MAX_RANGES) {
			pr_warn("pattern 0x%llx,0x%llx ignored: with the patterns before it, more than %lu ranges\n",
				p[i].addr, p[i].mask, BADRAM_MAX_RANGES);
			badram_nr_rejected++;
			continue;
		}
		if (!pages)
			pr_info("pattern 0x%llx,0x%llx matches no RAM\n",
				p[i].addr, p[i].mask);
		pages_sum += pages;
		ranges_sum += ranges;
		p[kept++] = p[i];
	}
	*nr_ranges = ranges_sum;
	return kept;
}

/*
 * Where the bad pages are, for placing working memory before they are
 * reserved: the sources themselves (before anything is parsed into
 * memory), the parsed patterns, or their sorted, merged ranges.
 */
struct badram_set {
	const struct badram_src *src;
	unsigned int nsrc;
	const struct badram_pattern *p;
	unsigned long nr;
	const struct badram_range *r;
	unsigned long n;
};

/* The first pfn of [@lo, @hi) that @p matches, or @hi. */
static unsigned long __init badram_first_match(const struct badram_pattern *p,
					       unsigned long lo,
					       unsigned long hi)
{
	u64 m, v, x;

	badram_pfn_mask(p, &m, &v);
	x = badram_next_match(lo, m, v);
	return x < hi ? x : hi;
}

/*
 * The first bad pfn of @set in [@lo, @hi), or @hi. From the sources, every
 * well-formed pattern counts but one that alone matches more than half of
 * memory, which badram_validate() refuses anyway; those it may refuse for
 * the sum only make the answer more careful.
 */
static unsigned long __init badram_first_bad(const struct badram_set *set,
					     unsigned long lo, unsigned long hi)
{
	u64 half = (memblock_phys_mem_size() >> PAGE_SHIFT) / 2, ranges;
	unsigned long i, a = 0, b = set->n, k, idx, x;
	struct badram_pattern p;
	size_t pos;

	if (set->r) {
		/* the roots' window is kept free: as good as bad here */
		if (badram_window_start < hi && badram_window_end > lo)
			hi = max(badram_window_start, lo);
		/* the first range that ends above @lo */
		while (a < b) {
			k = a + (b - a) / 2;
			if (set->r[k].end <= lo)
				a = k + 1;
			else
				b = k;
		}
		if (a < set->n && set->r[a].start < hi)
			return max(set->r[a].start, lo);
		return hi;
	}
	for (i = 0; i < set->nr; i++)
		hi = badram_first_match(&set->p[i], lo, hi);
	for (i = 0; i < set->nsrc; i++) {
		pos = 0;
		idx = 0;
		while (badram_next_pair(&set->src[i], &pos, &idx, &p, false)) {
			x = badram_first_match(&p, lo, hi);
			if (x < hi && badram_pattern_pages(&p, &ranges) <= half)
				hi = x;
		}
	}
	return hi;
}

/*
 * A free block of @size bytes (a multiple of the page size) below
 * memblock's limit with no bad page of @set, or 0. Top-down, as memblock
 * allocates: a window with a bad page is followed by the highest window
 * below its lowest bad page. Read from the sources or the patterns, each
 * window costs a pass over all of them, so only BADRAM_TRIES are tried.
 */
static phys_addr_t __init badram_find_clean(size_t size,
					    const struct badram_set *set)
{
	phys_addr_t limit = memblock_get_current_limit(), ps, pe;
	unsigned long pages = PFN_DOWN(size), lo, hi, bad;
	unsigned long tries = set->r ? ULONG_MAX : BADRAM_TRIES;
	u64 i;

	for_each_free_mem_range_reverse(i, NUMA_NO_NODE, MEMBLOCK_NONE,
					&ps, &pe, NULL) {
		hi = PFN_DOWN(min(pe, limit));
		while (hi >= PFN_UP(ps) + pages) {
			lo = hi - pages;
			bad = badram_first_bad(set, lo, hi);
			if (bad == hi)
				return PFN_PHYS(lo);
			if (!--tries)
				return 0;
			hi = bad;
		}
	}
	return 0;
}

/*
 * @size bytes (a multiple of the page size) of working memory on no bad
 * page of @set, not written yet. Failing that, any, with a warning:
 * badram_count_early() then counts the bad pages under it.
 */
static void *__init badram_alloc_work(size_t size,
				      const struct badram_set *set,
				      const char *what)
{
	phys_addr_t at = badram_find_clean(size, set), addr = 0;

	if (at)
		addr = memblock_phys_alloc_range(size, PAGE_SIZE, at, at + size);
	if (!addr) {
		pr_warn("no %zu KiB free of bad pages found for the %s: it may be on some\n",
			size >> 10, what);
		addr = memblock_phys_alloc_range(size, PAGE_SIZE, 0,
						 MEMBLOCK_ALLOC_ACCESSIBLE);
	}
	return addr ? phys_to_virt(addr) : NULL;
}

/*
 * Room in memblock.reserved for @cnt regions, its array on no bad page of
 * @set: when full, memblock_add_range() would move it to wherever memblock
 * allocates, in the middle of the reservation, and copy it there.
 */
static void __init badram_make_room(unsigned long cnt,
				    const struct badram_set *set)
{
	size_t size = PAGE_ALIGN(cnt * sizeof(struct memblock_region));
	phys_addr_t at;

	if (cnt <= memblock.reserved.max)
		return;
	at = badram_find_clean(size, set);
	if (at && !memblock_reserve_room(cnt, at, at + size))
		return;
	pr_warn("no %zu KiB free of bad pages found for memblock's reserved regions: they may move onto some\n",
		size >> 10);
}

/* Pages of [@s, @e) in the disjoint ranges @x[0..@nx). */
static unsigned long __init badram_overlap(unsigned long s, unsigned long e,
					   const struct badram_range *x,
					   unsigned int nx)
{
	unsigned long n = 0;
	unsigned int i;

	for (i = 0; i < nx; i++)
		if (x[i].start < e && x[i].end > s)
			n += min(e, x[i].end) - max(s, x[i].start);
	return n;
}

/*
 * Bad pages in use before badram_reserve() reserved them: what early boot
 * allocated before it ran, its own working memory and memblock's array
 * where no place free of bad pages was found (badram_alloc_work(),
 * badram_make_room()), but not the window kept for the mem_section roots,
 * counted by badram_place_roots(). One pass over memblock.reserved and
 * the sorted, merged ranges @r; adds to *@overlaps, unless NULL, the
 * pairs of a range and a reserved region that overlap.
 */
static unsigned long __init badram_count_early(const struct badram_range *r,
					       unsigned long n,
					       unsigned long *overlaps)
{
	struct badram_range w = { badram_window_start, badram_window_end };
	unsigned long i = 0, k, done = 0, early = 0, s, e, os, oe;
	phys_addr_t rs, re;
	u64 j;

	for_each_reserved_mem_range(j, &rs, &re) {
		/* a page that two unaligned regions share counts once */
		s = max(PFN_DOWN(rs), done);
		e = PFN_UP(re);
		if (s >= e)
			continue;
		while (i < n && r[i].end <= s)
			i++;
		for (k = i; k < n && r[k].start < e; k++) {
			os = max(s, r[k].start);
			oe = min(e, r[k].end);
			early += oe - os - badram_overlap(os, oe, &w, 1);
			if (overlaps && oe > os)
				(*overlaps)++;
		}
		done = e;
	}
	return early;
}

/*
 * The longest run of free memory that memblock_alloc() may use and that
 * none of the sorted, merged ranges @r covers, in pages.
 */
static unsigned long __init badram_longest_free(const struct badram_range *r,
						unsigned long n)
{
	phys_addr_t limit = memblock_get_current_limit(), ps, pe;
	unsigned long best = 0, j = 0;
	u64 i;

	for_each_free_mem_range(i, NUMA_NO_NODE, MEMBLOCK_NONE, &ps, &pe, NULL) {
		unsigned long x = PFN_UP(ps), k;
		unsigned long end = PFN_DOWN(min(pe, limit));

		if (x >= end)
			continue;
		while (j < n && r[j].end <= x)
			j++;
		for (k = j; k < n && r[k].start < end; k++) {
			if (r[k].start > x)
				best = max(best, r[k].start - x);
			x = max(x, r[k].end);
		}
		if (end > x)
			best = max(best, end - x);
	}
	return best;
}

/*
 * Early boot needs some physically contiguous memory before the page
 * allocator runs. Nearly every such allocation falls back to smaller
 * pieces when it must (vmemmap to base pages, the percpu first chunk to
 * pages, the hash tables halve, swiotlb shrinks or goes without, KFENCE
 * switches off); the mem_section roots that sparse_init() allocates do not
 * (1 or 2 MiB with 5-level paging, 16 or 32 KiB without), and their
 * failure is a panic before the console is up. A periodic pattern such as
 * a failing address line (one bad page in every MiB) leaves no run that
 * long once its pages are reserved. Then pick a run of @pages pages that
 * starts right after a bad range (or at a free range's start), whose first
 * @clean pages hold no bad page, and allocate the roots exactly there:
 * the bad pages under them fall in roots for sections above max_pfn, which
 * nothing uses (memory hot-added that high would).
 */
static void __init badram_pick_window(const struct badram_range *r,
				      unsigned long n, unsigned long pages,
				      unsigned long clean)
{
	unsigned long limit = PFN_DOWN(memblock_get_current_limit());
	unsigned long k, p, next;

	for (k = 0; k < n; k++) {
		p = r[k].end;
		next = k + 1 < n ? r[k + 1].start : ULONG_MAX;
		if (next - p < clean || p + pages > limit ||
		    !memblock_is_region_memory(PFN_PHYS(p), PFN_PHYS(pages)) ||
		    memblock_is_region_reserved(PFN_PHYS(p), PFN_PHYS(pages)))
			continue;
		badram_window_start = p;
		badram_window_end = p + pages;
		return;
	}
	pr_warn("no free run of %lu pages is left for the mem_section roots: the boot may fail\n",
		pages);
}

/*
 * Allocate the mem_section roots in the window, then reserve the window's
 * bad pages (sorted, merged ranges @r): those under the roots are counted
 * as early pages. Returns the bad pages of the window.
 */
static unsigned long __init badram_place_roots(const struct badram_range *r,
					       unsigned long n)
{
	unsigned long ws = badram_window_start, we = badram_window_end;
	unsigned long i, pfn, pages = 0, early = 0;

	if (ws == we)
		return 0;
	sparse_alloc_roots(PFN_PHYS(ws), PFN_PHYS(we));
	for (i = 0; i < n; i++) {
		for (pfn = max(r[i].start, ws); pfn < min(r[i].end, we); pfn++) {
			pages++;
			if (memblock_is_region_reserved(PFN_PHYS(pfn), PAGE_SIZE))
				early++;
			if (memblock_reserve_keep(PFN_PHYS(pfn), PAGE_SIZE))
				pages--;
		}
	}
	badram_window_start = 0;
	badram_window_end = 0;
	badram_early_pages += early;
	pr_info("the patterns leave no %lu contiguous pages for the mem_section roots: allocated in [mem %#010llx-%#010llx] before its %lu bad pages were reserved, %lu of them under the roots\n",
		we - ws, (u64)PFN_PHYS(ws), (u64)PFN_PHYS(we) - 1, pages, early);
	return pages;
}

/*
 * Regions of memblock.reserved that pfns [@s, @e) overlaps or touches:
 * memblock_add_range() needs at most one new region more than that.
 */
static unsigned long __init badram_spanned(unsigned long s, unsigned long e)
{
	const struct memblock_type *t = &memblock.reserved;
	phys_addr_t base = PFN_PHYS(s), end = PFN_PHYS(e);
	unsigned long a = 0, b = t->cnt, k;

	while (a < b) {
		k = a + (b - a) / 2;
		if (t->regions[k].base + t->regions[k].size < base)
			a = k + 1;
		else
			b = k;
	}
	for (k = a; k < t->cnt && t->regions[k].base <= end; k++)
		;
	return k - a;
}

/*
 * Move memblock.reserved's array, with room for @cnt regions, into free
 * memory below pfn @below but not into the window kept for the mem_section
 * roots. Called while the sorted ranges are reserved from the bottom up:
 * every bad page below @below is reserved by then (those of the window
 * excepted), so that memory holds none.
 */
static bool __init badram_grow_below(unsigned long cnt, unsigned long below)
{
	unsigned long ws = badram_window_start, we = badram_window_end;

	if (ws == we)
		return !memblock_reserve_room(cnt, 0, PFN_PHYS(below));
	if (we < below &&
	    !memblock_reserve_room(cnt, PFN_PHYS(we), PFN_PHYS(below)))
		return true;
	return !memblock_reserve_room(cnt, 0, PFN_PHYS(min(below, ws)));
}

/* Bytes of memblock.reserved's array, and where it is. */
static size_t __init badram_array_size(void)
{
	return PAGE_ALIGN(memblock.reserved.max * sizeof(struct memblock_region));
}

/* Is pfn @k in one of the sorted, disjoint ranges @r[0..@n)? */
static bool __init badram_range_has(const struct badram_range *r,
				    unsigned long n, unsigned long k)
{
	unsigned long a = 0, b = n, m;

	while (a < b) {
		m = a + (b - a) / 2;
		if (r[m].end <= k)
			a = m + 1;
		else
			b = m;
	}
	return a < n && r[a].start <= k;
}

/*
 * memblock grew its array by itself, to wherever it allocates: count the
 * bad pages of @set under the new one, which is written at once.
 */
static void __init badram_check_array(const struct badram_set *set)
{
	unsigned long lo = PFN_DOWN(__pa(memblock.reserved.regions));
	unsigned long hi = lo + PFN_DOWN(badram_array_size()), n = 0, k;

	for (k = lo; k < hi; k++)
		n += set->r ? badram_range_has(set->r, set->n, k) :
			      badram_first_bad(set, k, k + 1) == k;
	if (!n)
		return;
	badram_early_pages += n;
	pr_err("memblock's reserved regions moved onto %lu bad pages\n", n);
}

/*
 * Working memory at @ptr, @size bytes, that had to go where @set names
 * bad pages (badram_alloc_work() found no block free of them): say how
 * many. badram_count_early() counts them.
 */
static void __init badram_report_work(const struct badram_set *set,
				      const void *ptr, size_t size,
				      const char *what)
{
	unsigned long lo = PFN_DOWN(__pa(ptr)), k, n = 0;

	for (k = lo; k < lo + PFN_UP(size); k++)
		n += badram_range_has(set->r, set->n, k);
	if (n)
		pr_err("the %s is on %lu bad pages\n", what, n);
}

/*
 * Reserve the sorted, merged ranges @r[0..@n) from the bottom up. Should
 * memblock.reserved be about to run out of room (badram_make_room() found
 * no block for all of it), grow its array first, into memory below the
 * range (badram_grow_below()): memblock would double it to wherever it
 * allocates, which is above, on bad pages not reserved yet. If memblock
 * grows it all the same, count what that costs. Returns the pages
 * reserved.
 */
static u64 __init badram_reserve_ranges(const struct badram_range *r,
					unsigned long n,
					const struct badram_set *set)
{
	struct memblock_type *t = &memblock.reserved;
	struct memblock_region *regions;
	unsigned long i, need;
	u64 pages = 0;

	for (i = 0; i < n; i++) {
		/* the range may be split around the roots' window: +2 */
		need = t->cnt + badram_spanned(r[i].start, r[i].end) + 2;
		if (need + BADRAM_SLACK > t->max)
			badram_grow_below(max(2 * t->max, need + BADRAM_SLACK),
					  r[i].start);
		regions = t->regions;
		pages += badram_reserve_pfns(r[i].start, r[i].end);
		if (t->regions != regions)
			badram_check_array(set);
	}
	return pages;
}

/*
 * Sort @r[0..@n) by start and merge the ranges that overlap or touch;
 * returns how many are left.
 */
static unsigned long __init badram_sort_merge(struct badram_range *r,
					      unsigned long n)
{
	unsigned long i, merged = 0;

	/* lists written by badram-persist are sorted already */
	for (i = 1; i < n && r[i - 1].start <= r[i].start; i++)
		;
	if (i < n)
		sort(r, n, sizeof(*r), badram_range_cmp, NULL);
	for (i = 0; i < n; i++) {
		if (merged && r[i].start <= r[merged - 1].end)
			r[merged - 1].end = max(r[merged - 1].end, r[i].end);
		else
			r[merged++] = r[i];
	}
	return merged;
}

#ifdef CONFIG_FAULT_INJECTION
/* fail_badram_sort=: as if there were no memory for the range array */
static DECLARE_FAULT_ATTR(fail_badram_sort);

static int __init fail_badram_sort_setup(char *str)
{
	if (!setup_fault_attr(&fail_badram_sort, str))
		return -EINVAL;
	/* no debugfs to quiet it: one line names the failure, no stack */
	fail_badram_sort.verbose = 1;
	return 0;
}
early_param("fail_badram_sort", fail_badram_sort_setup);

static bool __init badram_fail_sort(size_t size)
{
	return should_fail(&fail_badram_sort, size);
}
#else
static inline bool badram_fail_sort(size_t size)
{
	return false;
}
#endif

/* Windows of the sweep, in the kernel image, which KASLR keeps off bad pages. */
static struct badram_range badram_sweep_buf[BADRAM_SWEEP] __initdata;

/*
 * Without memory for the range array: sweep the pfns from the bottom up,
 * in windows of at most BADRAM_SWEEP ranges that are sorted, merged,
 * counted and reserved as the whole array would be. A window fills up as
 * the patterns are read; when it is full even after merging, it ends
 * where the upper half of it starts. A pass over the patterns per window:
 * slow, just as exact. The mem_section roots get no run of their own
 * (badram_pick_window()) on this path. Returns the pages reserved.
 */
static u64 __init badram_apply_sweep(const struct badram_pattern *p,
				     unsigned long nr)
{
	struct badram_range *r = badram_sweep_buf;
	struct badram_set set = { .p = p, .nr = nr };
	unsigned long lo = 0, hi, n, i, s, e, start, end, windows = 0;

	u64 pages = 0, next;
	int j;

	do {
		hi = ULONG_MAX;
		n = 0;
		for (i = 0; i < nr; i++) {
			for_each_mem_pfn_range(j, MAX_NUMNODES, &start, &end, NULL) {
				s = max(start, lo);
				e = min(end, hi);
				while (s < e) {
					n += badram_fill(&p[i], s, e, r + n,
							 BADRAM_SWEEP - n, &next);
					s = next;
					if (n < BADRAM_SWEEP)
						break;
					n = badram_sort_merge(r, n);
					if (n < BADRAM_SWEEP)
						continue;
					/* disjoint and sorted: r[n/2 - 1] ends below */
					hi = r[BADRAM_SWEEP / 2].start;
					n = BADRAM_SWEEP / 2;
					e = min(e, hi);
				}
			}
		}
		n = badram_sort_merge(r, n);
		badram_early_pages += badram_count_early(r, n, NULL);
		pages += badram_reserve_ranges(r, n, &set);
		windows++;
		lo = hi;
	} while (hi != ULONG_MAX);
	pr_info("%llu pages reserved in %lu windows\n", pages, windows);
	return pages;
}

/*
 * Sort and merge the ranges of all patterns @p, reserve them; returns the
 * pages reserved.
 */
static u64 __init badram_apply(const struct badram_pattern *p, size_t psize,
			       unsigned long nr, unsigned long nr_ranges)
{
	size_t size = PAGE_ALIGN(max(nr_ranges, 1UL) * sizeof(struct badram_range));
	struct badram_set set = { .p = p, .nr = nr };
	struct badram_range *r = NULL;
	unsigned long i, n = 0, merged, need, overlaps = 0;
	unsigned long start, end;
	u64 pages = 0, next;
	int j;

	if (!badram_fail_sort(size))
		r = badram_alloc_work(size, &set, "range array");
	if (!r) {
		pr_warn("no memory to sort %lu ranges: reserving them in windows of %d\n",
			nr_ranges, BADRAM_SWEEP);
		return badram_apply_sweep(p, nr);
	}
	for (i = 0; i < nr; i++) {
		if (badram_single(&p[i])) {
			if (n < nr_ranges && memblock_is_memory(p[i].addr)) {
				r[n].start = PHYS_PFN(p[i].addr);
				r[n++].end = PHYS_PFN(p[i].addr) + 1;
			}
			continue;
		}
		/* nr_ranges is an upper bound: one call per region does */
		for_each_mem_pfn_range(j, MAX_NUMNODES, &start, &end, NULL)
			n += badram_fill(&p[i], start, end, r + n,
					 nr_ranges - n, &next);
	}
	merged = badram_sort_merge(r, n);
	need = sparse_roots_size();
	if (need) {
		/* the roots of sections up to max_pfn, and a page of slack */
		unsigned long used = (SECTION_NR_TO_ROOT(pfn_to_section_nr(max_pfn)) + 1) *
				     sizeof(struct mem_section *);

		need = PFN_UP(need);
		if (badram_longest_free(r, merged) < need)
			badram_pick_window(r, merged, need, PFN_UP(used) + 1);
	}
	set = (struct badram_set){ .r = r, .n = merged };
	badram_early_pages = badram_count_early(r, merged, &overlaps);
	badram_report_work(&set, p, psize, "patterns");
	badram_report_work(&set, r, size, "range array");
	/*
	 * Room for every range at once, off bad pages. A range that spans k
	 * regions needs k + 1 new ones before memblock merges them; marked
	 * to be kept, it stays a region of its own, and what is left of the
	 * regions it overlaps takes one more at most: one per overlap.
	 */
	for (i = 0, n = 0; i < merged; i++)
		n = max(n, badram_spanned(r[i].start, r[i].end));
	badram_make_room(memblock.reserved.cnt + merged + n + 2 + BADRAM_SLACK +
			 overlaps + badram_window_end - badram_window_start,
			 &set);
	/* an array on bad pages already is counted above; move it off them */
	start = PFN_DOWN(__pa(memblock.reserved.regions));
	end = start + PFN_DOWN(badram_array_size());
	if (badram_first_bad(&set, start, end) < end)
		badram_make_room(memblock.reserved.max + 1, &set);
	pages = badram_reserve_ranges(r, merged, &set);
	/* a region per bad page of the roots' window, anywhere but there */
	need = memblock.reserved.cnt + badram_window_end - badram_window_start +
	       BADRAM_SLACK;
	if (need > memblock.reserved.max)
		badram_grow_below(need, max_pfn);
	pages += badram_place_roots(r, merged);
	memblock_free(r, size);	/* its bad pages stay reserved */
	return pages;
}

void __init badram_reserve(void)
{
	struct badram_src src[BADRAM_MAX_PARAMS + 1];
	struct badram_pattern *p, *keep;
	unsigned long parsed = 0, nr = 0, nr_ranges, i;
	struct badram_set set = { .src = src };
	unsigned int nsrc;
	u64 t0 = local_clock();
	size_t psize;

	nsrc = badram_sources(src);
	if (!nsrc)
		return;
	set.nsrc = nsrc;
	/* an upper bound first, then the real parse into the array */
	for (i = 0; i < nsrc; i++)
		parsed += badram_parse(&src[i], NULL);
	psize = PAGE_ALIGN(max(parsed, 1UL) * sizeof(*p));
	/*
	 * Nothing may be written to a bad page: the arrays are placed off
	 * them, and memblock's array gets room for what they take first.
	 */
	badram_make_room(memblock.reserved.cnt + BADRAM_SLACK, &set);
	p = badram_alloc_work(psize, &set, "patterns");
	if (!p) {
		pr_err("no memory for %lu patterns: none applied\n", parsed);
		return;
	}
	for (i = 0; i < nsrc; i++)
		nr += badram_parse(&src[i], p + nr);
	if (badram_nr_malformed > BADRAM_NAMED_TOKENS)
		pr_warn("%lu malformed tokens in all, the first %d named above\n",
			badram_nr_malformed, BADRAM_NAMED_TOKENS);
	if (!nr) {
		pr_warn("no valid address,mask pair given\n");
		memblock_free(p, psize);
		return;
	}

	nr = badram_validate(p, nr, &nr_ranges);
	if (!nr) {
		pr_warn("all %lu patterns rejected\n", badram_nr_rejected);
		memblock_free(p, psize);
		return;
	}
	badram_pages = badram_apply(p, psize, nr, nr_ranges);

	/* The list for sysfs, allocated now that it avoids the bad pages. */
	keep = memblock_alloc(nr * sizeof(*p), SMP_CACHE_BYTES);
	if (keep) {
		memcpy(keep, p, nr * sizeof(*p));
		badram_patterns = keep;
		badram_nr_patterns = nr;
		memblock_free(p, psize);
	} else {
		badram_patterns = p;	/* may sit on a bad page: keep it */
		badram_nr_patterns = nr;
	}

	pr_info("%lu patterns, %lu rejected: %lu pages excluded, %lu of them already in use by early boot (%llu us)\n",
		badram_nr_patterns, badram_nr_rejected, badram_pages,
		badram_early_pages, div_u64(local_clock() - t0, NSEC_PER_USEC));
	if (badram_early_pages)
		pr_warn("%lu bad pages were allocated before badram could reserve them\n",
			badram_early_pages);
	if (badram_nr_failed)
		pr_err("memblock could not reserve %lu bad pages in %lu ranges: offlined once the page allocator runs\n",
		       badram_failed_pages, badram_nr_failed);
}

/*
 * Bad pages that memblock could not reserve have reached the page
 * allocator: take them out of use as a run-time error would be.
 */
static int __init badram_offline_failed(void)
{
	unsigned long i, pfn, lost = 0;

	for (i = 0; i < min(badram_nr_failed, BADRAM_MAX_FAILED); i++) {
		for (pfn = badram_failed[i][0]; pfn < badram_failed[i][1]; pfn++) {
			if (soft_offline_page(pfn, 0))
				lost++;
			cond_resched();
		}
	}
	if (badram_nr_failed > BADRAM_MAX_FAILED)
		pr_err("%lu of the ranges memblock could not reserve were not recorded: their pages stay in use\n",
		       badram_nr_failed - BADRAM_MAX_FAILED);
	if (lost)
		pr_err("%lu bad pages could not be offlined and stay in use\n", lost);
	return 0;
}
late_initcall(badram_offline_failed);

/*
 * Is @pfn a bad page? For memory that early boot allocated on a bad page
 * before it could be reserved, and frees later (the kernel's init sections,
 * the initrd, memblock's own arrays, EFI boot services): free_reserved_area(),
 * free_reserved_page() and memblock_free_late() leave such a page reserved,
 * unwritten, instead of handing it to the page allocator. A walk over the
 * patterns: a few thousand pages are freed that way at boot.
 */
bool badram_page_is_bad(unsigned long pfn)
{
	u64 a = PFN_PHYS(pfn);
	unsigned long i;

	for (i = 0; i < badram_nr_patterns; i++) {
		u64 m = badram_patterns[i].mask & PAGE_MASK;

		if ((a & m) == (badram_patterns[i].addr & m))
			return true;
	}
	return false;
}

unsigned long badram_excluded_pages(void)
{
	return badram_pages;
}

/* ---- /sys/kernel/mm/badram ---- */

/*
 * Copy fixed-length lines to @buf from byte @off on; @line(@idx) formats
 * line @idx, or returns false when there is none. Once a read has given
 * bytes, it gives whole lines only: a read that starts at a line's start
 * ends at one, so no line is made of two walks of a changing list.
 */
static ssize_t badram_read_lines(char *buf, loff_t off, size_t count,
				 bool (*line)(unsigned long idx, u64 *addr,
					      u64 *mask, void *state),
				 void *state)
{
	char text[BADRAM_LINE_LEN + 1];
	size_t done = 0;

	while (done < count) {
		u64 idx = div_u64(off, BADRAM_LINE_LEN);
		size_t skip = off - idx * BADRAM_LINE_LEN, n;
		u64 addr, mask;

		if (done && !skip && count - done < BADRAM_LINE_LEN)
			break;
		if (!line(idx, &addr, &mask, state))
			break;
		snprintf(text, sizeof(text), "0x%016llx,0x%016llx\n", addr, mask);
		n = min(count - done, BADRAM_LINE_LEN - skip);
		memcpy(buf + done, text + skip, n);
		done += n;
		off += n;
	}
	return done;
}

static bool badram_boot_line(unsigned long idx, u64 *addr, u64 *mask,
			     void *state)
{
	if (idx >= badram_nr_patterns)
		return false;
	*addr = badram_patterns[idx].addr;
	*mask = badram_patterns[idx].mask;
	return true;
}

static ssize_t boot_read(struct file *file, struct kobject *kobj,
			 struct bin_attribute *attr, char *buf, loff_t off,
			 size_t count)
{
	return badram_read_lines(buf, off, count, badram_boot_line, NULL);
}

/* physical addresses: root only */
static BIN_ATTR_ADMIN_RO(boot, 0);

/* Lines of "offlined" are found by walking memory; cache the last one. */
struct badram_walk {
	unsigned long idx;	/* line number of @pfn */
	unsigned long pfn;	/* pfn of line @idx; ULONG_MAX: none yet */
};

/* The walk's step: a memory block, or a section without hotplug. */
static unsigned long badram_walk_step(void)
{
#ifdef CONFIG_MEMORY_HOTPLUG
	return PHYS_PFN(memory_block_size_bytes());
#else
	return PAGES_PER_SECTION;
#endif
}

/*
 * Can the step at @pfn hold a poisoned page? Memory blocks count theirs
 * (num_poisoned_pages_inc() calls memblk_nr_poison_inc()).
 */
static bool badram_step_poisoned(unsigned long pfn)
{
#ifdef CONFIG_MEMORY_HOTPLUG
	struct memory_block *mem = find_memory_block(pfn_to_section_nr(pfn));
	bool ret;

	if (!mem)
		return false;
	ret = atomic_long_read(&mem->nr_hwpoison);
	put_device(&mem->dev);
	return ret;
#else
	return true;
#endif
}

/*
 * The next page from @pfn on that holds a hardware error, or ULONG_MAX: a
 * lookup per memory block and a walk of the blocks that have errors, each
 * under the locks that keep it online (hwpoison_find_raw()).
 */
static unsigned long badram_next_poisoned(unsigned long pfn)
{
	unsigned long step = badram_walk_step(), end, hit;

	while (pfn < max_pfn) {
		end = min(ALIGN(pfn + 1, step), max_pfn);
		if (badram_step_poisoned(pfn)) {
			hit = hwpoison_find_raw(pfn, end);
			if (hit < end)
				return hit;
		}
		pfn = end;
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	return ULONG_MAX;
}

static bool badram_offlined_line(unsigned long idx, u64 *addr, u64 *mask,
				 void *state)
{
	struct badram_walk *w = state;

	if (w->pfn == ULONG_MAX || idx < w->idx) {
		w->idx = 0;
		w->pfn = badram_next_poisoned(0);
	}
	while (w->pfn != ULONG_MAX && w->idx < idx) {
		w->pfn = badram_next_poisoned(w->pfn + 1);
		w->idx++;
	}
	if (w->pfn == ULONG_MAX)
		return false;
	*addr = PFN_PHYS((u64)w->pfn);
	*mask = (u64)PAGE_MASK;
	return true;
}

static ssize_t offlined_read(struct file *file, struct kobject *kobj,
			     struct bin_attribute *attr, char *buf,
			     loff_t off, size_t count)
{
	struct badram_walk w = { .pfn = ULONG_MAX };

	return badram_read_lines(buf, off, count, badram_offlined_line, &w);
}
static BIN_ATTR_ADMIN_RO(offlined, 0);

static ssize_t excluded_pages_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", badram_pages);
}

static struct kobj_attribute excluded_pages_attr = __ATTR_RO(excluded_pages);

static ssize_t early_pages_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", badram_early_pages);
}

static struct kobj_attribute early_pages_attr = __ATTR_RO(early_pages);

static ssize_t rejected_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", badram_nr_rejected);
}

static struct kobj_attribute rejected_attr = __ATTR_RO(rejected);

static struct attribute *badram_attrs[] = {
	&excluded_pages_attr.attr,
	&early_pages_attr.attr,
	&rejected_attr.attr,
	NULL,
};

static struct bin_attribute *badram_bin_attrs[] = {
	&bin_attr_boot,
	&bin_attr_offlined,
	NULL,
};

static const struct attribute_group badram_group = {
	.attrs = badram_attrs,
	.bin_attrs = badram_bin_attrs,
};

static int __init badram_sysfs_init(void)
{
	struct kobject *kobj;
	int err;

	kobj = kobject_create_and_add("badram", mm_kobj);
	if (!kobj)
		return -ENOMEM;
	err = sysfs_create_group(kobj, &badram_group);
	if (err) {
		pr_err("cannot create /sys/kernel/mm/badram: %d\n", err);
		kobject_put(kobj);
	}
	return err;
}
subsys_initcall(badram_sysfs_init);
