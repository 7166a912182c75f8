// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM at run time: a page offlined while the system runs is listed in
 * /sys/kernel/mm/badram/offlined, and tools/fleet/badram-persist turns the
 * boot list plus the offlined pages into the list for the next boot.
 *
 * Leaves in $FLEET_STATE (shared with the next VM run, see tests/badram/vm):
 * persist.cpio (the early cpio), persist.list (the same list, plain) and
 * offlined-pfn (the pfn this test offlined), for badram_persist_test.
 */
#include <sys/mman.h>

#include "../../kselftest_harness.h"
#include "badram.h"

#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif

#define POOL 4096	/* pages per chunk to choose the victim from */
#define CHUNKS 32	/* at most 32 chunks (512 MiB) */

static bool offlined_lists(uint64_t pfn)
{
	char *list = read_file(SYSFS "offlined", NULL), want[64];
	bool found;

	if (!list)
		return false;
	snprintf(want, sizeof(want), "0x%016llx,0xfffffffffffff000\n",
		 (unsigned long long)(pfn * PAGE));
	found = strstr(list, want);
	free(list);
	return found;
}

TEST(soft_offline_listed_and_persisted)
{
	const char *state = getenv("FLEET_STATE"), *top = getenv("FLEET_TOP");
	char cmd[1024], path[512];
	uint64_t pfn, lo, hi, *flags;
	char *pool, *page;
	long before;
	int i, chunk;
	FILE *f;

	if (access(SYSFS, F_OK))
		SKIP(return, "no " SYSFS " (CONFIG_BADRAM=n?)");
	ASSERT_NE(NULL, state) TH_LOG("FLEET_STATE not set (run by scripts/run-tests)");
	ASSERT_NE(NULL, top);
	before = meminfo_kb("HardwareCorrupted:");

	/*
	 * Offline a page that the next boot does not use before badram runs:
	 * not in the kernel image (whose init pages are freed after boot and
	 * so may be handed to us) and not in the top half of memory, where
	 * the initrd and memblock's top-down allocations go. A bad page in
	 * those is what early_pages counts; that is tested in badram_test.
	 */
	lo = kernel_end_pfn();
	ASSERT_NE(0, lo) TH_LOG("no Kernel bss in /proc/iomem");
	lo += (16 << 20) / PAGE;
	hi = (uint64_t)meminfo_kb("MemTotal:") * 1024 / PAGE / 2;
	/*
	 * The buddy allocator may hand out the top half first: take chunks
	 * until one holds a page in range (the rest stay mapped until exit).
	 */
	for (chunk = 0, page = NULL; chunk < CHUNKS && !page; chunk++) {
		pool = mmap(NULL, POOL * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ASSERT_NE(MAP_FAILED, pool);
		for (i = 0; i < POOL && !page; i++) {
			pfn = virt_to_pfn(pool + i * PAGE);
			ASSERT_NE(0, pfn);
			if (pfn >= lo && pfn < hi)
				page = pool + i * PAGE;
		}
	}
	ASSERT_NE(NULL, page)
		TH_LOG("none of %d pages in pfn 0x%llx-0x%llx", CHUNKS * POOL,
		       (unsigned long long)lo, (unsigned long long)hi);
	TH_LOG("victim found in chunk %d of %d", chunk, CHUNKS);
	memset(page, 0x5a, PAGE);
	ASSERT_EQ(pfn, virt_to_pfn(page));
	ASSERT_FALSE(offlined_lists(pfn));
	ASSERT_EQ(0, madvise(page, PAGE, MADV_SOFT_OFFLINE))
		TH_LOG("MADV_SOFT_OFFLINE: %s", strerror(errno));
	/* the data moved to a new page, the old one is poisoned */
	ASSERT_EQ(0x5a, page[PAGE - 1]);
	ASSERT_NE(pfn, virt_to_pfn(page));
	flags = kpageflags(pfn + 1);
	ASSERT_NE(NULL, flags);
	ASSERT_TRUE(flags[pfn] >> KPF_HWPOISON & 1);
	free(flags);
	ASSERT_EQ(before + (long)(PAGE / 1024), meminfo_kb("HardwareCorrupted:"));
	ASSERT_TRUE(offlined_lists(pfn))
		TH_LOG("pfn 0x%llx not in %sofflined", (unsigned long long)pfn, SYSFS);
	TH_LOG("soft-offlined pfn 0x%llx", (unsigned long long)pfn);

	snprintf(cmd, sizeof(cmd),
		 "%s/tools/fleet/badram-persist --cpio %s/persist.cpio --list %s/persist.list",
		 top, state, state);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s failed", cmd);
	snprintf(path, sizeof(path), "%s/offlined-pfn", state);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "0x%llx\n", (unsigned long long)pfn);
	ASSERT_EQ(0, fclose(f));
}

TEST_HARNESS_MAIN
