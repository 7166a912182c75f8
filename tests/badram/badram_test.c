// SPDX-License-Identifier: GPL-2.0
/*
 * BadRAM at boot: the kernel must have reserved exactly the pages that the
 * boot's patterns (badram= and the early initrd list) match, refused what
 * badram.rst says it refuses, said so in the log, and never let a bad page
 * reach the page allocator, even under memory pressure.
 *
 * The expectation is worked out here independently (tests/badram/badram.h):
 * parsing by the documented rules and brute force over System RAM.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "../../kselftest_harness.h"
#include "badram.h"

FIXTURE(boot) {
	struct expect *e;
	uint64_t *flags;
};

FIXTURE_SETUP(boot)
{
	if (access(SYSFS, F_OK))
		SKIP(return, "no " SYSFS " (CONFIG_BADRAM=n?)");
	self->e = expect_load();
	ASSERT_NE(NULL, self->e);
	self->flags = kpageflags(self->e->max_pfn);
	ASSERT_NE(NULL, self->flags) TH_LOG("cannot read /proc/kpageflags");
	TH_LOG("%zu patterns expected (%zu rejected, %zu malformed tokens): %llu bad pages",
	       self->e->npats, self->e->rejected, self->e->nbad,
	       (unsigned long long)self->e->nbadpages);
}

FIXTURE_TEARDOWN(boot)
{
	free(self->flags);
}

/* The boot file lists the accepted patterns, in order, canonical. */
TEST_F(boot, boot_list_matches)
{
	size_t len, i = 0;
	char *list = read_file(SYSFS "boot", &len), *line, *save;

	ASSERT_NE(NULL, list);
	for (line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		unsigned long long a, m;

		ASSERT_EQ(2, sscanf(line, "0x%llx,0x%llx", &a, &m));
		ASSERT_LT(i, self->e->npats) TH_LOG("extra line %s", line);
		ASSERT_EQ(self->e->pats[i].addr, a) TH_LOG("line %zu: %s", i, line);
		ASSERT_EQ(self->e->pats[i].mask, m) TH_LOG("line %zu: %s", i, line);
	}
	ASSERT_EQ(self->e->npats, i);
	ASSERT_EQ((long)self->e->rejected, read_long(SYSFS "rejected"));
	free(list);
}

/* Every bad page is reserved and was never handed out. */
TEST_F(boot, bad_pages_reserved)
{
	uint64_t pfn, seen = 0, used = 0, notres = 0;
	const uint64_t busy = 1ULL << KPF_BUDDY | 1ULL << KPF_LRU |
			      1ULL << KPF_ANON | 1ULL << KPF_SLAB;

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
	ASSERT_EQ(self->e->nbadpages, seen);
	ASSERT_EQ(0, notres);
	ASSERT_EQ(0, used);
}

/* Only the bad pages: their good neighbours are ordinary memory. */
TEST_F(boot, neighbours_not_reserved)
{
	uint64_t pfn, checked = 0, reserved = 0;

	for (pfn = 1; pfn + 1 < self->e->max_pfn; pfn++) {
		uint64_t n[2] = { pfn - 1, pfn + 1 };

		if (!is_bad(self->e, pfn))
			continue;
		for (int i = 0; i < 2; i++) {
			if (is_bad(self->e, n[i]) || !is_ram(self->e, n[i]))
				continue;
			checked++;
			if (self->flags[n[i]] >> KPF_RESERVED & 1 && reserved++ < 5)
				TH_LOG("good pfn 0x%llx next to a bad one is reserved",
				       (unsigned long long)n[i]);
		}
	}
	TH_LOG("%llu good neighbours checked", (unsigned long long)checked);
	if (self->e->nbadpages)
		ASSERT_GT(checked, 0);
	ASSERT_EQ(0, reserved);
}

/* The counts: sysfs, /proc/meminfo, nothing allocated before the reservation. */
TEST_F(boot, counts)
{
	ASSERT_EQ((long)self->e->nbadpages, read_long(SYSFS "excluded_pages"));
	ASSERT_EQ((long)self->e->nbadpages * (long)(PAGE / 1024),
		  meminfo_kb("BadRAM:"));
	ASSERT_EQ(0, read_long(SYSFS "early_pages"));
}

/*
 * KASLR on: the decompressor placed the kernel image clear of the bad
 * pages, which the kernel itself reserves only later.
 */
TEST_F(boot, kernel_image_clear)
{
	uint64_t first, end, pfn, hits = 0;

	ASSERT_EQ(0, kernel_image_pfns(&first, &end)) TH_LOG("no Kernel code/bss in /proc/iomem");
	for (pfn = first; pfn < end; pfn++)
		if (is_bad(self->e, pfn) && hits++ < 5)
			TH_LOG("bad pfn 0x%llx in the kernel image", (unsigned long long)pfn);
	TH_LOG("kernel image at pfn 0x%llx-0x%llx, %llu bad pages in it",
	       (unsigned long long)first, (unsigned long long)end - 1,
	       (unsigned long long)hits);
	ASSERT_EQ(0, hits);
}

/*
 * The log names the first NAMED_TOKENS malformed tokens and sums up the
 * rest in one line (a corrupt list must not hold the boot on a serial
 * console), and names every refused pattern.
 */
TEST_F(boot, warnings_logged)
{
	size_t named = self->e->nbad_all < NAMED_TOKENS ? self->e->nbad_all : NAMED_TOKENS;
	char *log = kernel_log(), want[128];
	int refused = 0, lines = 0;
	const char *p;

	ASSERT_NE(NULL, log);
	for (size_t i = 0; i < named; i++) {
		snprintf(want, sizeof(want), "\"%s\"", self->e->bad_tokens[i]);
		EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no warning naming %s", want);
	}
	for (p = log; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *w = strstr(p, "badram: ");

		if (!w || (eol && w > eol))
			continue;
		w = strstr(w, ": bad ");
		if (w && (!eol || w < eol))
			lines += !strncmp(w, ": bad address", 13) ||
				 !strncmp(w, ": bad mask", 10);
	}
	TH_LOG("%zu malformed tokens, %d named in the log", self->e->nbad_all, lines);
	EXPECT_EQ((int)named, lines);
	if (self->e->nbad_all > NAMED_TOKENS) {
		snprintf(want, sizeof(want), "badram: %zu malformed tokens in all",
			 self->e->nbad_all);
		EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no line \"%s\"", want);
	}
	TH_LOG("%zu badram= parameters beyond %d", self->e->params_ignored, MAX_PARAMS);
	if (self->e->params_ignored) {
		snprintf(want, sizeof(want), "more than %d badram= parameters, \"%s\" ignored",
			 MAX_PARAMS, self->e->ignored_param);
		EXPECT_NE(NULL, strstr(log, want)) TH_LOG("no line \"%s\"", want);
	}
	for (p = log; (p = strstr(p, "badram: pattern ")); p++)
		refused += !!strstr(p, " ignored: ") &&
			   strstr(p, " ignored: ") < strchr(p, '\n');
	ASSERT_EQ((int)self->e->rejected, refused);
	free(log);
}

/*
 * Memory pressure: fill most of memory (and let stress-ng churn beside it)
 * and check that no page this process got is a bad one.
 */
TEST_F(boot, pressure_never_gets_bad_pages)
{
	long avail = meminfo_kb("MemAvailable:");
	size_t len, pages, i, hits = 0;
	pid_t ng = -1;
	char *buf;

	ASSERT_GT(avail, 0);
	if (!access("/usr/bin/stress-ng", X_OK)) {
		ng = fork();
		ASSERT_GE(ng, 0);
		if (!ng) {
			execl("/usr/bin/stress-ng", "stress-ng", "--vm", "1",
			      "--vm-bytes", "15%", "--page-in", "--timeout", "60s",
			      "--temp-path", "/tmp", "--quiet", NULL);
			_exit(127);
		}
		sleep(2);
	} else {
		TH_LOG("no stress-ng: filling memory alone");
	}
	len = (size_t)avail * 1024 / 100 * 60;
	pages = len / PAGE;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (i = 0; i < pages; i++) {
		uint64_t pfn;

		buf[i * PAGE] = 1;
		pfn = virt_to_pfn(buf + i * PAGE);
		ASSERT_NE(0, pfn) TH_LOG("no pfn for page %zu (not root?)", i);
		if (is_bad(self->e, pfn) && hits++ < 5)
			TH_LOG("got bad pfn 0x%llx", (unsigned long long)pfn);
	}
	TH_LOG("%zu pages (%ld%% of MemAvailable) checked", pages, 60L);
	/* and, with stress-ng still running, no one else has a bad page */
	{
		uint64_t *now = kpageflags(self->e->max_pfn), pfn;
		const uint64_t busy = 1ULL << KPF_BUDDY | 1ULL << KPF_LRU |
				      1ULL << KPF_ANON | 1ULL << KPF_SLAB;

		ASSERT_NE(NULL, now);
		for (pfn = 0; pfn < self->e->max_pfn; pfn++)
			if (is_bad(self->e, pfn) && (now[pfn] & busy) && hits++ < 5)
				TH_LOG("bad pfn 0x%llx in use under pressure",
				       (unsigned long long)pfn);
		free(now);
	}
	munmap(buf, len);
	if (ng > 0) {
		int st;
		pid_t done = waitpid(ng, &st, WNOHANG);

		/* stress-ng must still be churning: else it did not really run */
		kill(ng, SIGTERM);
		waitpid(ng, &st, 0);
		ASSERT_EQ(0, done) TH_LOG("stress-ng exited early (status 0x%x)", st);
	}
	ASSERT_EQ(0, hits);
}

TEST_HARNESS_MAIN
