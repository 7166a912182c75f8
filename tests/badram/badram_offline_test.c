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
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "../../kselftest_harness.h"
#include "badram.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 4U
#endif
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
	 * Offline a page that the next boot does not use before badram runs,
	 * so that the persisted boot must reserve it from the list: anywhere
	 * (the kernel image of that boot is placed clear of it, see
	 * kernel_image_clear) but in the top 64 MiB of RAM, where the boot
	 * loader puts the initrd and memblock allocates top-down before
	 * badram runs. A bad page there is what early_pages counts; that is
	 * tested in badram_test's hostile and periodic shapes.
	 */
	lo = 0;
	hi = ram_end_pfn();
	ASSERT_GT(hi, (64 << 20) / PAGE);
	hi -= (64 << 20) / PAGE;
	/*
	 * The buddy allocator may hand out the top first: take chunks
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

/* The patterns of @text (address,mask lines) into @p, at most @max. */
static int list_parse(const char *text, uint64_t (*p)[2], int max)
{
	unsigned long long a, m;
	int n = 0;

	for (; text && *text && n < max; text = strchr(text, '\n'), text = text ? text + 1 : NULL) {
		if (sscanf(text, "%llx,%llx", &a, &m) != 2)
			continue;
		p[n][1] = m & PAGE_MASK64;
		p[n][0] = a & p[n][1];
		n++;
	}
	return n;
}

static bool pats_cover(uint64_t (*p)[2], int n, uint64_t pfn)
{
	for (int i = 0; i < n; i++)
		if (((pfn * PAGE) & p[i][1]) == p[i][0])
			return true;
	return false;
}

/* Does the list in @text name @pfn? */
static bool list_covers(const char *text, uint64_t pfn)
{
	uint64_t p[256][2];

	return pats_cover(p, list_parse(text, p, 256), pfn);
}

static volatile sig_atomic_t got_sigbus;

static void on_sigbus(int sig)
{
	got_sigbus = 1;
}

/*
 * A hardware error in one subpage of a huge page that stays in use (a
 * hugetlbfs file keeps it in its page cache): the kernel marks the head
 * and keeps the raw page on a list. The list, and the persisted list
 * built from it, must name the raw page and not the head, 7 pages away
 * here and up to 1 GiB away with gigantic pages.
 *
 * MADV_HWPOISON is memory_failure() with MF_ACTION_REQUIRED: when it
 * unmaps the dirty huge page from the caller, the caller gets SIGBUS
 * (seen in one run of four on 2026-12-06); that is the kernel telling the mapping's
 * owner, not a failure of the listing, so it is caught and logged.
 */
TEST(hugetlb_subpage_listed_exactly)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	const char *top = getenv("FLEET_TOP");
	uint64_t head, raw, *flags;
	char cmd[1024], *list;
	size_t huge = 2 << 20;
	FILE *f;
	char *p;
	int fd;

	ASSERT_NE(NULL, top);
	f = fopen("/proc/sys/vm/nr_hugepages", "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "4\n");
	ASSERT_EQ(0, fclose(f));
	fd = memfd_create("badram", MFD_HUGETLB);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, huge));
	p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("no 2 MiB huge page: %s", strerror(errno));
	memset(p, 0x5a, huge);
	head = virt_to_pfn(p);
	raw = virt_to_pfn(p + 7 * PAGE);
	ASSERT_NE(0, head);
	ASSERT_EQ(head + 7, raw);
	ASSERT_FALSE(offlined_lists(raw));
	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
	ASSERT_EQ(0, madvise(p + 7 * PAGE, PAGE, MADV_HWPOISON))
		TH_LOG("MADV_HWPOISON: %s", strerror(errno));
	TH_LOG("SIGBUS %s", got_sigbus ? "received: the huge page was unmapped" :
					 "not sent");
	/* the page stays in the file: its raw page is what is bad */
	flags = kpageflags(raw + 1);
	ASSERT_NE(NULL, flags);
	TH_LOG("head pfn 0x%llx flags 0x%llx, raw pfn 0x%llx flags 0x%llx",
	       (unsigned long long)head, (unsigned long long)flags[head],
	       (unsigned long long)raw, (unsigned long long)flags[raw]);
	free(flags);
	EXPECT_TRUE(offlined_lists(raw))
		TH_LOG("raw pfn 0x%llx not in %sofflined", (unsigned long long)raw, SYSFS);
	EXPECT_FALSE(offlined_lists(head))
		TH_LOG("head pfn 0x%llx listed in its place", (unsigned long long)head);

	/* what the next boot would exclude */
	snprintf(cmd, sizeof(cmd), "%s/tools/fleet/badram-persist --list /tmp/hugetlb.list",
		 top);
	ASSERT_EQ(0, system(cmd));
	list = read_file("/tmp/hugetlb.list", NULL);
	ASSERT_NE(NULL, list);
	EXPECT_TRUE(list_covers(list, raw));
	EXPECT_FALSE(list_covers(list, head));
	free(list);
	munmap(p, huge);
	close(fd);
}

/* Physical addresses are for root only. */
TEST(lists_root_only)
{
	const char *files[] = { "boot", "offlined" };
	struct stat st;

	for (int i = 0; i < 2; i++) {
		char path[128];

		snprintf(path, sizeof(path), SYSFS "%s", files[i]);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0, st.st_mode & 0077)
			TH_LOG("%s is mode %o", path, st.st_mode & 0777);
	}
}

/*
 * Reads at any offset and of any size give the bytes of one whole read
 * there, never past the end; a read that starts at a line's start and
 * asks for a line or more gives whole lines only.
 */
TEST(offlined_read_at_offsets)
{
	size_t len, sizes[] = { 1, 5, 37, 38, 39, 100 };
	char *all = read_file(SYSFS "offlined", &len), buf[128];
	int fd = open(SYSFS "offlined", O_RDONLY);

	ASSERT_NE(NULL, all);
	ASSERT_LE(0, fd);
	ASSERT_GE(len, 2 * 38) TH_LOG("want two lines at least, have %zu bytes", len);
	{
		struct timespec t0, t1;
		char big[4096];

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < 100; i++)
			ASSERT_EQ((ssize_t)len, pread(fd, big, sizeof(big), 0));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		TH_LOG("a whole read of %zu bytes takes %.1f us (100 reads, %ld MiB RAM)",
		       len, ((t1.tv_sec - t0.tv_sec) * 1e9 + t1.tv_nsec - t0.tv_nsec) / 100 / 1e3,
		       meminfo_kb("MemTotal:") / 1024);
	}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t off = 0; off <= len; off += 7) {
			ssize_t n = pread(fd, buf, sizes[s], off);
			size_t most = off + sizes[s] <= len ? sizes[s] : len - off;

			ASSERT_LE(n, (ssize_t)most) TH_LOG("size %zu at %zu", sizes[s], off);
			if (off < len)
				ASSERT_LT(0, n) TH_LOG("size %zu at %zu", sizes[s], off);
			ASSERT_EQ(0, memcmp(buf, all + off, n));
			if (off % 38 == 0 && sizes[s] >= 38)
				ASSERT_EQ(0, n % 38) TH_LOG("size %zu at %zu: %zd", sizes[s], off, n);
			if (off % 38 == 0 && most >= 38)
				ASSERT_LE(38, n);
		}
	}
	close(fd);
	free(all);
}

/* Run badram-persist with @args; 0 if it succeeded. */
static int persist(const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/tools/fleet/badram-persist --no-sysfs %s",
		 getenv("FLEET_TOP"), args);
	return system(cmd);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * A DIMM replaced: --forget drops every bad page in a physical range and
 * keeps every other one, whatever the shape of the patterns.
 */
/* badram-persist runs python several times: slow under TCG */
FIXTURE(persist) {};
FIXTURE_SETUP(persist) {}
FIXTURE_TEARDOWN(persist) {}

TEST_F_TIMEOUT(persist, forget_range, 240)
{
	uint64_t pfn, pats[256][2];
	char *out;
	int n;

	write_text("/tmp/in.list",
		   "0x5000,0xff000\n"			/* one page per MiB */
		   "0x40003000,0xfffffffffffff000\n"	/* a single page */
		   "0x80000000,0xfffffffff0000000\n");	/* 256 MiB */
	ASSERT_EQ(0, persist("--extra /tmp/in.list --forget 0x40000000-0x9fffffff --list /tmp/out.list"));
	out = read_file("/tmp/out.list", NULL);
	ASSERT_NE(NULL, out);
	n = list_parse(out, pats, 256);
	ASSERT_LT(n, 256);
	TH_LOG("%d patterns after --forget", n);
	/* an oracle over the first 4 GiB: bad iff listed and not forgotten */
	for (pfn = 0; pfn < (4ULL << 30) / PAGE; pfn++) {
		uint64_t a = pfn * PAGE;
		bool forgotten = a >= 0x40000000 && a <= 0x9fffffff;
		bool bad = (a & 0xff000) == 0x5000 || a == 0x40003000 ||
			   (a & 0xfffffffff0000000ULL) == 0x80000000;

		ASSERT_EQ(bad && !forgotten, pats_cover(pats, n, pfn))
			TH_LOG("pfn 0x%llx", (unsigned long long)pfn);
	}
	free(out);
	/* malformed ranges are refused */
	EXPECT_NE(0, persist("--extra /tmp/in.list --forget 0x2000-0x1000 --list /tmp/x.list"));
	EXPECT_NE(0, persist("--extra /tmp/in.list --forget zz --list /tmp/x.list"));
	/* whole pages only: a partly covered page is not silently forgotten */
	EXPECT_NE(0, persist("--extra /tmp/in.list --forget 0x40000000-0x9ffffff0 --list /tmp/x.list"));
}

/* The list is replaced whole or not at all, and nothing is left behind. */
TEST_F_TIMEOUT(persist, write_atomic, 240)
{
	char *out;

	write_text("/tmp/in.list", "0x40003000,0xfffffffffffff000\n");
	ASSERT_EQ(0, system("mkdir -p /tmp/ro && rm -f /tmp/ro/*"));
	ASSERT_EQ(0, persist("--extra /tmp/in.list --list /tmp/ro/out.list"));
	/* a read-only directory: the old list must stay, whole */
	ASSERT_EQ(0, chmod("/tmp/ro", 0555));
	write_text("/tmp/in.list", "0x50003000,0xfffffffffffff000\n");
	ASSERT_EQ(0, access("/usr/bin/setpriv", X_OK)) TH_LOG("no setpriv (util-linux)");
	EXPECT_NE(0, system("setpriv --reuid=65534 --regid=65534 --clear-groups "
			    "$FLEET_TOP/tools/fleet/badram-persist --no-sysfs "
			    "--extra /tmp/in.list --list /tmp/ro/out.list"));
	out = read_file("/tmp/ro/out.list", NULL);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ("0x0000000040003000,0xfffffffffffff000\n", out);
	free(out);
	/* and a good write leaves only the list */
	ASSERT_EQ(0, chmod("/tmp/ro", 0755));
	ASSERT_EQ(0, persist("--extra /tmp/in.list --list /tmp/ro/out.list"));
	EXPECT_EQ(0, system("test \"$(ls -A /tmp/ro)\" = out.list"));

	/* a file planted where a fixed temporary name would go is not followed */
	write_text("/tmp/victim", "keep\n");
	ASSERT_EQ(0, symlink("/tmp/victim", "/tmp/ro/out.list.tmp"));
	ASSERT_EQ(0, persist("--extra /tmp/in.list --list /tmp/ro/out.list"));
	out = read_file("/tmp/victim", NULL);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ("keep\n", out);
	free(out);
	out = read_file("/tmp/ro/out.list", NULL);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ("0x0000000050003000,0xfffffffffffff000\n", out);
	free(out);

	/* a list reached through a symlink is written where the link points */
	unlink("/tmp/ro/link.list");
	ASSERT_EQ(0, symlink("/tmp/ro/out.list", "/tmp/ro/link.list"));
	write_text("/tmp/in.list", "0x60003000,0xfffffffffffff000\n");
	ASSERT_EQ(0, persist("--extra /tmp/in.list --list /tmp/ro/link.list"));
	out = read_file("/tmp/ro/out.list", NULL);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ("0x0000000060003000,0xfffffffffffff000\n", out);
	free(out);
	{
		struct stat lst;

		ASSERT_EQ(0, lstat("/tmp/ro/link.list", &lst));
		EXPECT_TRUE(S_ISLNK(lst.st_mode));
	}

	/* durable before it replaces the old list: the file and its directory */
	ASSERT_EQ(0, system("strace --seccomp-bpf -f -o /tmp/persist.strace -e trace=fsync,fdatasync "
			    "$FLEET_TOP/tools/fleet/badram-persist --no-sysfs "
			    "--extra /tmp/in.list --list /tmp/ro/out.list"));
	EXPECT_EQ(0, system("test $(grep -c 'sync(.*= 0' /tmp/persist.strace) -ge 2"))
		TH_LOG("fewer than two fsyncs (file, directory) in /tmp/persist.strace");
}

TEST_HARNESS_MAIN
