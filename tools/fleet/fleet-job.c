// SPDX-License-Identifier: GPL-2.0
/*
 * fleet-job: jobs on NUMA nodes, one cgroup v2 cgroup each.
 *
 *   fleet-job create NAME --class ls|batch|be --nodes N [--cpu-max CPUS]
 *   fleet-job run NAME -- COMMAND [ARG...]
 *   fleet-job resize NAME --nodes N
 *   fleet-job list
 *   fleet-job destroy NAME
 *
 * A job is the cgroup fleet-jobs/NAME below the cgroup v2 mount (--root
 * DIR, default: the first cgroup2 mount). It owns N memory nodes that no
 * other job has (cpuset.mems) and runs on the CPUs of those nodes
 * (cpuset.cpus); with the kernel's stock NUMA emulation every emulated
 * node lists every CPU of its physical node, so jobs then share CPUs.
 * Its class sets the CPU policy: ls gets cpu.weight 10000, batch 100, be 1
 * and its commands run under SCHED_GIDLE (SCHED_IDLE on a kernel without
 * it). --cpu-max caps the job at that many CPUs (cpu.max, 100 ms period).
 * The class is kept in the user.fleet.class attribute of the cgroup.
 * Resizing changes cpuset.mems; cgroup v2 migrates the job's memory off
 * the nodes it loses. A job's OOM kills are confined to its nodes' tasks
 * by the kernel's cpuset-constrained OOM killer; memory.oom.group makes
 * one kill take the whole job.
 *
 * Nothing is left half-made: a create that fails removes its cgroup.
 * Documentation/admin-guide/fleet-jobs.rst describes the model.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <linux/compiler.h>
#include <linux/kernel.h>

#define JOBS_DIR	"fleet-jobs"
#define CLASS_XATTR	"user.fleet.class"
#define MAX_NODES	1024
#define MAX_CPUS	8192
#define SCHED_GIDLE	8
#define CPU_PERIOD	100000

static const char *prog = "fleet-job";
#define ROOT_MAX	1024
static char root[ROOT_MAX];		/* the cgroup v2 mount */
static char jobs[ROOT_MAX + 16];	/* root/fleet-jobs */

struct class {
	const char *name;
	unsigned int weight;
};

static const struct class classes[] = {
	{ "ls", 10000 },
	{ "batch", 100 },
	{ "be", 1 },
};

static void __printf(1, 2) err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void help(void)
{
	fprintf(stderr,
		"Usage: %s [--root DIR] create NAME --class ls|batch|be --nodes N [--cpu-max CPUS]\n"
		"       %s [--root DIR] run NAME -- COMMAND [ARG...]\n"
		"       %s [--root DIR] resize NAME --nodes N\n"
		"       %s [--root DIR] list\n"
		"       %s [--root DIR] destroy NAME\n",
		prog, prog, prog, prog, prog);
	exit(2);
}

/* ---- files ------------------------------------------------------------ */

/* Write @val to @dir/@file; 0 or -errno. */
static int put_quiet(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	ssize_t len = strlen(val), n;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		ret = -errno;
	else if (n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/* The same, saying what failed; 0 or -1. */
static int put(const char *dir, const char *file, const char *val)
{
	int ret = put_quiet(dir, file, val);

	if (ret)
		err("writing \"%s\" to %s/%s: %s", val, dir, file, strerror(-ret));
	return ret ? -1 : 0;
}

/* Read @dir/@file into @buf, without its trailing newline; length or -1. */
static ssize_t get(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = 0, len = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)len < size - 1 &&
	       (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0)
		return -1;
	buf[len] = '\0';
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return len;
}

/* ---- node and CPU lists (the kernel's "0-3,8" format) ------------------ */

/* Parse a list into @set (size @max); -1 on anything malformed. */
static int parse_list(const char *s, bool *set, int max)
{
	memset(set, 0, max * sizeof(*set));
	while (*s && *s != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return -1;
		a = strtol(s, &end, 10);
		b = a;
		if (a >= max)
			return -1;
		s = end;
		if (*s == '-') {
			if (!isdigit((unsigned char)s[1]))
				return -1;
			b = strtol(s + 1, &end, 10);
			if (b < a || b >= max)
				return -1;
			s = end;
		}
		for (long i = a; i <= b; i++)
			set[i] = true;
		if (*s != ',')
			return *s && *s != '\n' ? -1 : 0;
		if (!isdigit((unsigned char)*++s))
			return -1;
	}
	return 0;
}

/* @set as a list in @buf; -1 if it does not fit. */
static int format_list(const bool *set, int max, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < max; i++) {
		int j = i;

		if (!set[i])
			continue;
		while (j + 1 < max && set[j + 1])
			j++;
		len += snprintf(buf + len, size - len, "%s%d", len ? "," : "", i);
		if (len < size && j > i)
			len += snprintf(buf + len, size - len, "-%d", j);
		if (len >= size)
			return -1;
		i = j;
	}
	return 0;
}

static int count(const bool *set, int max)
{
	int n = 0;

	for (int i = 0; i < max; i++)
		n += set[i];
	return n;
}

/* The CPUs of the nodes in @nodes, as the kernel lists them. */
static int node_cpus(const bool *nodes, bool *cpus)
{
	static bool one[MAX_CPUS];
	char dir[64], buf[4096];

	memset(cpus, 0, MAX_CPUS * sizeof(*cpus));
	for (int n = 0; n < MAX_NODES; n++) {
		if (!nodes[n])
			continue;
		snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%d", n);
		if (get(dir, "cpulist", buf, sizeof(buf)) < 0 ||
		    parse_list(buf, one, MAX_CPUS)) {
			err("%s/cpulist: cannot read it", dir);
			return -1;
		}
		for (int c = 0; c < MAX_CPUS; c++)
			cpus[c] |= one[c];
	}
	return 0;
}

/* ---- the cgroup hierarchy -------------------------------------------- */

static int find_root(const char *opt)
{
	char line[4096];
	FILE *f;

	if (opt) {
		if (strlen(opt) >= sizeof(root)) {
			err("--root: the path is too long");
			return -1;
		}
		memcpy(root, opt, strlen(opt) + 1);
		goto check;
	}
	f = fopen("/proc/self/mounts", "re");
	if (!f) {
		err("/proc/self/mounts: %s", strerror(errno));
		return -1;
	}
	root[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char dev[256], dir[PATH_MAX], type[64];

		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2") && strlen(dir) < sizeof(root)) {
			memcpy(root, dir, strlen(dir) + 1);
			break;
		}
	}
	fclose(f);
	if (!root[0]) {
		err("no cgroup v2 mount (mount -t cgroup2 none /sys/fs/cgroup)");
		return -1;
	}
check:
	if (get(root, "cgroup.controllers", line, sizeof(line)) < 0) {
		err("%s is not a cgroup v2 directory", root);
		return -1;
	}
	snprintf(jobs, sizeof(jobs), "%s/" JOBS_DIR, root);
	return 0;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* Enable cpuset, cpu and memory for the children of @dir. */
static int enable_controllers(const char *dir)
{
	static const char * const need[] = { "cpuset", "cpu", "memory" };
	char have[1024], on[1024], val[32];
	int ret;

	if (get(dir, "cgroup.controllers", have, sizeof(have)) < 0 ||
	    get(dir, "cgroup.subtree_control", on, sizeof(on)) < 0) {
		err("%s: cannot read its controllers", dir);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(need); i++) {
		if (has_word(on, need[i]))
			continue;
		if (!has_word(have, need[i])) {
			err("no cgroup v2 controller \"%s\" in %s (it has: %s)",
			    need[i], dir, have[0] ? have : "none");
			return -1;
		}
		snprintf(val, sizeof(val), "+%s", need[i]);
		ret = put_quiet(dir, "cgroup.subtree_control", val);
		if (ret == -EBUSY) {
			err("cannot enable %s below %s: it has processes of its own", need[i], dir);
			err("(the no-internal-process rule): use --root with a cgroup without any");
			return -1;
		}
		if (ret) {
			err("enabling %s in %s/cgroup.subtree_control: %s", need[i], dir,
			    strerror(-ret));
			return -1;
		}
	}
	return 0;
}

/*
 * Open (and with @make, make) fleet-jobs with its controllers on, and
 * lock it: exclusively (@how LOCK_EX) to make, change or remove jobs,
 * shared (LOCK_SH) to join one. Returns the locked fd or -1.
 */
static int lock_jobs(bool make, int how)
{
	int fd;

	if (make) {
		bool made;

		if (enable_controllers(root))
			return -1;
		made = !mkdir(jobs, 0755);
		if (!made && errno != EEXIST) {
			err("%s: %s", jobs, strerror(errno));
			return -1;
		}
		if (enable_controllers(jobs)) {
			if (made)
				rmdir(jobs);
			return -1;
		}
	}
	fd = open(jobs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			err("no jobs (%s does not exist)", jobs);
		else
			err("%s: %s", jobs, strerror(errno));
		return -1;
	}
	if (flock(fd, how)) {
		err("%s: lock: %s", jobs, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static bool valid_name(const char *name)
{
	size_t n = strlen(name);

	/* no '.': the cgroup's own files are named "<controller>.<file>" */
	if (!n || n > 64 || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

static const struct class *class_of(const char *dir);

/* The directory of job @name, which fleet-job made; 0 or -1. */
static int job_dir(const char *name, char *dir, size_t size)
{
	struct stat st;

	if (!valid_name(name)) {
		err("\"%s\" is not a job name (1 to 64 of A-Z a-z 0-9 _ -)", name);
		return -1;
	}
	snprintf(dir, size, "%s/%s", jobs, name);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		err("no job \"%s\"", name);
		return -1;
	}
	if (!class_of(dir)) {
		err("%s has no valid %s: not a job made by fleet-job", dir, CLASS_XATTR);
		return -1;
	}
	return 0;
}

static const struct class *class_of(const char *dir)
{
	char buf[32];
	ssize_t n = getxattr(dir, CLASS_XATTR, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(classes); i++)
		if (!strcmp(buf, classes[i].name))
			return &classes[i];
	return NULL;
}

/* The nodes held by jobs other than @skip (NULL: all jobs). */
static int used_nodes(bool *used, const char *skip)
{
	static bool one[MAX_NODES];
	char dir[PATH_MAX], buf[4096];
	struct dirent *de;
	DIR *d = opendir(jobs);

	memset(used, 0, MAX_NODES * sizeof(*used));
	if (!d) {
		err("%s: %s", jobs, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    (skip && !strcmp(de->d_name, skip)))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", jobs, de->d_name);
		if (get(dir, "cpuset.mems", buf, sizeof(buf)) < 0 ||
		    parse_list(buf, one, MAX_NODES)) {
			err("%s/cpuset.mems: cannot read it", dir);
			closedir(d);
			return -1;
		}
		for (int n = 0; n < MAX_NODES; n++)
			used[n] |= one[n];
	}
	closedir(d);
	return 0;
}

/* The memory nodes the machine has. */
static int online_nodes(bool *nodes)
{
	char buf[4096];

	if (get("/sys/devices/system/node", "has_memory", buf, sizeof(buf)) < 0 ||
	    parse_list(buf, nodes, MAX_NODES)) {
		err("/sys/devices/system/node/has_memory: cannot read it");
		return -1;
	}
	return 0;
}

/*
 * Give the job in @dir @want nodes: keep what it has (@have) up to @want,
 * dropping its highest nodes first, then add the lowest free ones, and
 * the CPUs of those nodes (none: the CPUs of fleet-jobs, for nodes without
 * CPUs). On failure, both files are put back as they were.
 */
static int set_nodes(const char *dir, const bool *have, int want, const char *self)
{
	static bool online[MAX_NODES], used[MAX_NODES], next[MAX_NODES], cpus[MAX_CPUS];
	char mems[4096], cpulist[4096], old_mems[4096], old_cpus[4096];
	int n = 0, free = 0;

	if (online_nodes(online) || used_nodes(used, self))
		return -1;
	memset(next, 0, sizeof(next));
	for (int i = 0; i < MAX_NODES && n < want; i++)
		if (have[i] && online[i]) {
			next[i] = true;
			n++;
		}
	for (int i = 0; i < MAX_NODES; i++)
		free += online[i] && !used[i] && !next[i];
	if (n + free < want) {
		err("%d nodes wanted, %d available (%d nodes with memory, %d held by other jobs)",
		    want, n + free, count(online, MAX_NODES), count(used, MAX_NODES));
		return -1;
	}
	for (int i = 0; i < MAX_NODES && n < want; i++)
		if (online[i] && !used[i] && !next[i]) {
			next[i] = true;
			n++;
		}
	if (node_cpus(next, cpus))
		return -1;
	if (format_list(next, MAX_NODES, mems, sizeof(mems)) ||
	    format_list(cpus, MAX_CPUS, cpulist, sizeof(cpulist))) {
		err("the node or CPU list is too long");
		return -1;
	}
	if (get(dir, "cpuset.mems", old_mems, sizeof(old_mems)) < 0 ||
	    get(dir, "cpuset.cpus", old_cpus, sizeof(old_cpus)) < 0) {
		err("%s: cannot read its cpuset", dir);
		return -1;
	}
	/* cgroup v2 migrates the job's pages off the nodes it loses */
	if (put(dir, "cpuset.cpus", cpulist))
		return -1;
	if (put(dir, "cpuset.mems", mems)) {
		put(dir, "cpuset.cpus", old_cpus);
		return -1;
	}
	return 0;
}

/* Bytes of the job's memory (anon and file) per node, from memory.numa_stat. */
static void node_bytes(const char *dir, unsigned long long *bytes)
{
	char path[PATH_MAX + 32], line[8192];
	FILE *f;

	memset(bytes, 0, MAX_NODES * sizeof(*bytes));
	snprintf(path, sizeof(path), "%s/memory.numa_stat", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (strncmp(line, "anon ", 5) && strncmp(line, "file ", 5))
			continue;
		for (p = strstr(line, " N"); p; p = strstr(p + 1, " N")) {
			int n;
			unsigned long long v;

			if (sscanf(p, " N%d=%llu", &n, &v) == 2 && n >= 0 && n < MAX_NODES)
				bytes[n] += v;
		}
	}
	fclose(f);
}

/*
 * After a shrink: migration is best effort (pages the kept nodes have no
 * room for, and page cache no task maps, stay), so say what is left on
 * nodes the job no longer has.
 */
static void left_behind(const char *dir, const bool *had)
{
	static unsigned long long bytes[MAX_NODES];
	static bool now[MAX_NODES];
	char buf[4096];

	if (get(dir, "cpuset.mems", buf, sizeof(buf)) < 0 ||
	    parse_list(buf, now, MAX_NODES))
		return;
	node_bytes(dir, bytes);
	for (int n = 0; n < MAX_NODES; n++)
		if (had[n] && !now[n] && bytes[n] >= 1 << 20)
			err("warning: %llu MiB of the job is still on node %d, which it lost",
			    bytes[n] >> 20, n);
}

/* ---- commands ---------------------------------------------------------- */

/* A decimal number from @min to @max, digits only; -1 if not. */
static long parse_num(const char *s, long min, long max)
{
	char *end;
	long n;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n < min || n > max)
		return -1;
	return n;
}

static int parse_nodes(const char *s)
{
	long n = parse_num(s, 1, MAX_NODES);

	if (n < 0)
		err("--nodes %s: want a number of nodes from 1 to %d", s, MAX_NODES);
	return n;
}

/* --cpu-max: CPUS as a quota over CPU_PERIOD, at most 3 decimals; -1 if bad. */
static long long parse_cpus(const char *s)
{
	long long whole = 0, frac = 0;
	int digits = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > 4096)
			goto bad;
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p) && digits < 3; p++, digits++)
			frac = frac * 10 + (*p - '0');
		if (!digits)
			goto bad;
	}
	if (*p)
		goto bad;
	while (digits++ < 3)
		frac *= 10;
	if (!whole && !frac)
		goto bad;
	return whole * CPU_PERIOD + frac * (CPU_PERIOD / 1000);
bad:
	err("--cpu-max %s: want a number of CPUs (up to 4096, 3 decimals), e.g. 1.5", s);
	return -1;
}

static int cmd_create(int argc, char **argv)
{
	static bool none[MAX_NODES];
	const struct class *cls = NULL;
	char dir[PATH_MAX], val[64];
	long long quota = 0;
	const char *name;
	int nodes = 0, fd;

	if (argc < 2)
		help();
	name = argv[1];
	for (int i = 2; i < argc; i += 2) {
		if (i + 1 >= argc)
			help();
		if (!strcmp(argv[i], "--class")) {
			cls = NULL;
			for (size_t c = 0; c < ARRAY_SIZE(classes); c++)
				if (!strcmp(argv[i + 1], classes[c].name))
					cls = &classes[c];
			if (!cls) {
				err("--class %s: want ls, batch or be", argv[i + 1]);
				return 1;
			}
		} else if (!strcmp(argv[i], "--nodes")) {
			nodes = parse_nodes(argv[i + 1]);
			if (nodes < 0)
				return 1;
		} else if (!strcmp(argv[i], "--cpu-max")) {
			quota = parse_cpus(argv[i + 1]);
			if (quota < 0)
				return 1;
		} else {
			help();
		}
	}
	if (!cls || !nodes) {
		err("create needs --class and --nodes");
		return 1;
	}
	if (!valid_name(name)) {
		err("\"%s\" is not a job name (1 to 64 of A-Z a-z 0-9 _ -)", name);
		return 1;
	}
	fd = lock_jobs(true, LOCK_EX);
	if (fd < 0)
		return 1;
	snprintf(dir, sizeof(dir), "%s/%s", jobs, name);
	if (mkdir(dir, 0755)) {
		if (errno == EEXIST)
			err("job \"%s\" exists", name);
		else
			err("%s: %s", dir, strerror(errno));
		close(fd);
		return 1;
	}
	if (setxattr(dir, CLASS_XATTR, cls->name, strlen(cls->name), 0)) {
		err("%s: setting %s: %s", dir, CLASS_XATTR, strerror(errno));
		goto undo;
	}
	snprintf(val, sizeof(val), "%u", cls->weight);
	if (set_nodes(dir, none, nodes, name) || put(dir, "cpu.weight", val) ||
	    put(dir, "memory.oom.group", "1"))
		goto undo;
	/* be: the whole group idle against its siblings, as SCHED_IDLE is */
	if (!strcmp(cls->name, "be") && put(dir, "cpu.idle", "1"))
		goto undo;
	if (quota) {
		snprintf(val, sizeof(val), "%lld %d", quota, CPU_PERIOD);
		if (put(dir, "cpu.max", val))
			goto undo;
	}
	close(fd);
	return 0;
undo:
	/* no task can have joined: run waits for the lock */
	if (rmdir(dir))
		err("%s: could not remove it after the failure: %s", dir, strerror(errno));
	close(fd);
	return 1;
}

static int cmd_run(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	const struct class *cls;
	char dir[PATH_MAX];
	int fd;

	if (argc < 4 || strcmp(argv[2], "--"))
		help();
	/* shared: a create or destroy of the job is not half-way through */
	fd = lock_jobs(false, LOCK_SH);
	if (fd < 0)
		return 1;
	if (job_dir(argv[1], dir, sizeof(dir)) || put(dir, "cgroup.procs", "0"))
		return 1;
	close(fd);
	cls = class_of(dir);
	if (cls && !strcmp(cls->name, "be") && sched_setscheduler(0, SCHED_GIDLE, &sp)) {
		if (errno != EINVAL || sched_setscheduler(0, SCHED_IDLE, &sp)) {
			err("SCHED_GIDLE and SCHED_IDLE: %s", strerror(errno));
			return 1;
		}
	}
	execvp(argv[3], argv + 3);
	err("%s: %s", argv[3], strerror(errno));
	return 127;
}

static int cmd_resize(int argc, char **argv)
{
	static bool have[MAX_NODES];
	char dir[PATH_MAX], buf[4096];
	int nodes, fd, ret = 1;

	if (argc != 4 || strcmp(argv[2], "--nodes"))
		help();
	nodes = parse_nodes(argv[3]);
	if (nodes < 0)
		return 1;
	fd = lock_jobs(false, LOCK_EX);
	if (fd < 0)
		return 1;
	if (job_dir(argv[1], dir, sizeof(dir)))
		goto out;
	if (get(dir, "cpuset.mems", buf, sizeof(buf)) < 0 ||
	    parse_list(buf, have, MAX_NODES)) {
		err("%s/cpuset.mems: cannot read it", dir);
		goto out;
	}
	if (set_nodes(dir, have, nodes, argv[1]))
		goto out;
	left_behind(dir, have);
	ret = 0;
out:
	close(fd);
	return ret;
}

/* Lines in @dir/@file (processes in cgroup.procs); -1 if unreadable. */
static int count_lines(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];
	int c, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int cmd_list(void)
{
	static unsigned long long bytes[MAX_NODES];
	static bool mems[MAX_NODES];
	char dir[PATH_MAX], m[4096], c[4096];
	struct dirent *de;
	DIR *d = opendir(jobs);

	printf("%-16s %-6s %-10s %-12s %6s  %s\n", "JOB", "CLASS", "NODES", "CPUS",
	       "TASKS", "MEMORY (MiB per node)");
	if (!d) {
		if (errno == ENOENT)
			return 0;
		err("%s: %s", jobs, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		const struct class *cls;
		int tasks = 0;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", jobs, de->d_name);
		cls = class_of(dir);
		if (get(dir, "cpuset.mems", m, sizeof(m)) < 0 ||
		    get(dir, "cpuset.cpus", c, sizeof(c)) < 0)
			continue;
		tasks = count_lines(dir, "cgroup.procs");
		printf("%-16s %-6s %-10s %-12s %6d ", de->d_name,
		       cls ? cls->name : "?", m, c, tasks);
		node_bytes(dir, bytes);
		if (parse_list(m, mems, MAX_NODES))
			memset(mems, 0, sizeof(mems));
		/* the job's nodes, and any other node it still has pages on */
		for (int n = 0; n < MAX_NODES; n++)
			if (mems[n] || bytes[n])
				printf(" N%d=%llu", n, bytes[n] >> 20);
		putchar('\n');
	}
	closedir(d);
	return 0;
}

static int cmd_destroy(int argc, char **argv)
{
	char dir[PATH_MAX], ev[256];
	int fd, ret = 1;

	if (argc != 2)
		help();
	fd = lock_jobs(false, LOCK_EX);
	if (fd < 0)
		return 1;
	if (job_dir(argv[1], dir, sizeof(dir)))
		goto out;
	/* kill every task, wait until none is left, then remove the cgroup */
	if (put(dir, "cgroup.kill", "1"))
		goto out;
	for (int i = 0; i < 1000; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (get(dir, "cgroup.events", ev, sizeof(ev)) < 0 ||
		    strstr(ev, "populated 0"))
			break;
		nanosleep(&ts, NULL);
	}
	if (rmdir(dir)) {
		err("%s: %s", dir, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	const char *opt_root = NULL;

	if (argc > 2 && !strcmp(argv[1], "--root")) {
		opt_root = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2)
		help();
	if (find_root(opt_root))
		return 1;
	if (!strcmp(argv[1], "create"))
		return cmd_create(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "resize"))
		return cmd_resize(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list") && argc == 2)
		return cmd_list();
	if (!strcmp(argv[1], "destroy"))
		return cmd_destroy(argc - 1, argv + 1);
	help();
	return 2;
}
