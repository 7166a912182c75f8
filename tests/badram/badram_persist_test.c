// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM across a reboot: the page badram_offline_test offlined in the
 * previous VM run is excluded from the start of this one, through the
 * early cpio that badram-persist wrote (tests/badram/vm, second shape).
 */
#include "../../kselftest_harness.h"
#include "badram.h"

TEST(offlined_page_excluded_from_boot)
{
	const char *state = getenv("FLEET_STATE");
	struct expect *e;
	unsigned long long pfn;
	uint64_t *flags;
	char path[512];
	size_t i, hits = 0;
	FILE *f;

	if (access(SYSFS, F_OK))
		SKIP(return, "no " SYSFS " (CONFIG_BADRAM=n?)");
	ASSERT_NE(NULL, state);
	snprintf(path, sizeof(path), "%s/offlined-pfn", state);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f) TH_LOG("no %s: did badram_offline_test run?", path);
	ASSERT_EQ(1, fscanf(f, "%llx", &pfn));
	fclose(f);

	e = expect_load();
	ASSERT_NE(NULL, e);
	ASSERT_NE(0, e->list_path[0]) TH_LOG("booted without fleet_test.badram_list=");
	/* the boot list came from the initrd and names the page */
	for (i = 0; i < e->npats; i++)
		hits += page_matches(&e->pats[i], pfn);
	ASSERT_GT(hits, 0) TH_LOG("persisted list does not cover pfn 0x%llx", pfn);
	ASSERT_TRUE(is_bad(e, pfn));
	ASSERT_EQ((long)e->nbadpages, read_long(SYSFS "excluded_pages"));

	/* reserved from boot on, not poisoned at run time */
	flags = kpageflags(pfn + 1);
	ASSERT_NE(NULL, flags);
	ASSERT_TRUE(flags[pfn] >> KPF_RESERVED & 1);
	ASSERT_FALSE(flags[pfn] >> KPF_HWPOISON & 1);
	free(flags);
	ASSERT_EQ(0, meminfo_kb("HardwareCorrupted:"));
	TH_LOG("pfn 0x%llx reserved at boot from the persisted list", pfn);
}

TEST_HARNESS_MAIN
