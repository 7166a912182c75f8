/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by tests/gidle and bench/gidle: CPU hogs of a policy,
 * per-process CPU time, and a lock holder that sleeps in the kernel with a
 * file's i_rwsem held (a write() whose source buffer faults on a
 * userfaultfd page that the caller resolves when it likes); and the escape
 * cases: a fair worker measuring what a companion task takes from it, the
 * companion looping over long read()s or polling from an SQPOLL thread.
 * pin_cpu(),
 * now_ns() and the sched_attr wrappers are in tests/lib/fleet_test.h.
 */
#ifndef FLEET_GIDLE_H
#define FLEET_GIDLE_H

#define _GNU_SOURCE
#include "../lib/fleet_test.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline int set_policy(pid_t pid, int policy)
{
	struct sched_param sp = { 0 };

	return sched_setscheduler(pid, policy, &sp) ? -errno : 0;
}

static inline int unpin(pid_t pid)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN); cpu++)
		CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

/* A child spinning in user space under @policy, on @cpu (-1: anywhere). */
static inline pid_t spawn_hog(int policy, int cpu)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (cpu >= 0 && pin_cpu(0, cpu))
		_exit(2);
	if (cpu == -2 && unpin(0))
		_exit(2);
	if (policy != SCHED_OTHER && set_policy(0, policy))
		_exit(3);
	for (volatile unsigned long n = 0;; n++)
		;
}

static inline void kill_all(pid_t *pids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
}

/* CPU time a process has used, in ns (0 if it is gone). */
static inline unsigned long long cputime_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return 0;
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A field of /proc/PID/sched ("gidle.nr_boosts", "policy"), or -1. */
static inline long long proc_sched_field(pid_t pid, const char *name)
{
	char path[64], line[256];
	long long val = -1;
	size_t len = strlen(name);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, name, len) && line[len] == ' ' && colon) {
			val = strtoll(colon + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

static inline int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static inline int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

/*
 * The holder: a child that write()s @npages pages to @path from a buffer
 * whose pages are missing under userfaultfd. The write takes the file's
 * i_rwsem, then faults the source in and sleeps in handle_userfault() until
 * the parent resolves the fault: a task asleep in the kernel with a lock
 * held. After holder_resolve() a thread resolves each further fault as it
 * comes, so the holder needs @npages wake-ups to get through.
 */
struct holder {
	pid_t pid;
	int uffd, npages;
	unsigned long addr;
	unsigned long long faulted_ns, resolved_ns;
	pthread_t resolver;
	volatile int stop, resolving;
};

static inline int holder_start_n(struct holder *h, int policy, const char *path,
				 int npages)
{
	int sv[2], ready = 0;
	struct uffd_msg msg;
	struct pollfd pfd;

	memset(h, 0, sizeof(*h));
	h->npages = npages;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (!h->pid) {
		long page = sysconf(_SC_PAGESIZE);
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = { 0 };
		void *area;
		int uffd, fd;

		close(sv[0]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		area = mmap(NULL, page * npages, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		if (fd < 0 || area == MAP_FAILED || uffd < 0 ||
		    ioctl(uffd, UFFDIO_API, &api))
			_exit(10);
		reg.range.start = (unsigned long)area;
		reg.range.len = page * npages;
		reg.mode = UFFDIO_REGISTER_MODE_MISSING;
		if (ioctl(uffd, UFFDIO_REGISTER, &reg) || send_fd(sv[1], uffd))
			_exit(11);
		if (write(sv[1], &area, sizeof(area)) != sizeof(area))
			_exit(12);
		if (read(sv[1], &ready, sizeof(ready)) != sizeof(ready))
			_exit(13);
		if (policy != SCHED_OTHER && set_policy(0, policy))
			_exit(14);
		if (write(fd, area, page * npages) != page * npages)
			_exit(15);
		_exit(0);
	}
	close(sv[1]);
	h->uffd = recv_fd(sv[0]);
	if (h->uffd < 0 || read(sv[0], &h->addr, sizeof(h->addr)) != sizeof(h->addr))
		goto fail;
	if (write(sv[0], &ready, sizeof(ready)) != sizeof(ready))
		goto fail;
	pfd.fd = h->uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 30000) != 1 || read(h->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		goto fail;
	h->addr = msg.arg.pagefault.address;
	h->faulted_ns = now_ns();
	close(sv[0]);
	return 0;
fail:
	close(sv[0]);
	kill(h->pid, SIGKILL);
	waitpid(h->pid, NULL, 0);
	h->pid = 0;
	return -EIO;
}

static inline int holder_start(struct holder *h, int policy, const char *path)
{
	return holder_start_n(h, policy, path, 1);
}

static inline int zeropage(int uffd, unsigned long addr)
{
	struct uffdio_zeropage zp = { 0 };

	zp.range.start = addr & ~(sysconf(_SC_PAGESIZE) - 1);
	zp.range.len = sysconf(_SC_PAGESIZE);
	return ioctl(uffd, UFFDIO_ZEROPAGE, &zp) ? -errno : 0;
}

static inline void *resolver_fn(void *arg)
{
	struct holder *h = arg;
	struct pollfd pfd = { .fd = h->uffd, .events = POLLIN };
	struct uffd_msg msg;

	fcntl(h->uffd, F_SETFL, O_NONBLOCK);
	while (!h->stop) {
		if (poll(&pfd, 1, 50) != 1)
			continue;
		if (pfd.revents & (POLLHUP | POLLERR))
			break;		/* the holder's mm is gone */
		if (read(h->uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_PAGEFAULT)
			zeropage(h->uffd, msg.arg.pagefault.address);
	}
	return NULL;
}

/* Let the holder go on: resolve the pending fault, and later ones. */
static inline int holder_resolve(struct holder *h)
{
	h->resolved_ns = now_ns();
	if (zeropage(h->uffd, h->addr))
		return -errno;
	if (h->npages > 1 && !pthread_create(&h->resolver, NULL, resolver_fn, h))
		h->resolving = 1;
	return 0;
}

/* Stop the resolver and drop the userfaultfd (the holder is gone). */
static inline void holder_stop(struct holder *h)
{
	h->stop = 1;
	if (h->resolving)
		pthread_join(h->resolver, NULL);
	close(h->uffd);
}

/* A waiter thread: write() to the file the holder holds the lock of. */
struct waiter {
	pthread_t thread;
	const char *path;
	int fd;
	volatile int done;
	unsigned long long start_ns, end_ns;
};

static inline void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	w->start_ns = now_ns();
	if (write(w->fd, "w", 1) != 1)
		w->done = -1;
	w->end_ns = now_ns();
	if (!w->done)
		w->done = 1;
	return NULL;
}

static inline int waiter_start(struct waiter *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = open(path, O_WRONLY);
	if (w->fd < 0)
		return -errno;
	return -pthread_create(&w->thread, NULL, waiter_fn, w);
}

/* Wait up to @timeout_ns for the waiter; 0 if it got the lock. */
static inline int waiter_wait(struct waiter *w, unsigned long long timeout_ns)
{
	unsigned long long end = now_ns() + timeout_ns;

	while (!w->done && now_ns() < end)
		usleep(1000);
	if (!w->done)
		return -ETIMEDOUT;
	pthread_join(w->thread, NULL);
	close(w->fd);
	return w->done == 1 ? 0 : -EIO;
}

/* Time the calling thread spent runnable but waiting for a CPU, in ns. */
static inline unsigned long long run_delay_ns(void)
{
	unsigned long long run = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &delay) != 2)
		delay = 0;
	fclose(f);
	return delay;
}

/*
 * A fair worker, this thread, on @cpu for @ms: it spins 10 ms and sleeps
 * 1 ms, again and again (each wakeup preempts whatever runs there). The
 * share of its time spent runnable but waiting, in parts per million: what
 * another task took from it.
 */
static inline unsigned long long worker_wait_ppm(int cpu, int ms)
{
	unsigned long long t0, d0, end, spin_end, t1;

	pin_cpu(0, cpu);
	d0 = run_delay_ns();
	t0 = now_ns();
	end = t0 + ms * 1000000ULL;
	while (now_ns() < end) {
		spin_end = now_ns() + 10 * 1000000ULL;
		while (now_ns() < spin_end)
			;
		usleep(1000);
	}
	t1 = now_ns();
	return (run_delay_ns() - d0) * 1000000ULL / (t1 - t0);
}

#define GIDLE_READ_FILE	"/tmp/gidle-read"
#define GIDLE_READ_SIZE	(16 << 20)

/* The tmpfs file the "read" companion reads: 0 or -errno. */
static inline int gidle_read_file_create(void)
{
	char *buf = calloc(1, GIDLE_READ_SIZE);
	int fd = open(GIDLE_READ_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600), ret = 0;

	if (!buf || fd < 0 || write(fd, buf, GIDLE_READ_SIZE) != GIDLE_READ_SIZE)
		ret = -EIO;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/*
 * A companion of the worker on @cpu, under @policy (-1: none): "read", a
 * loop of 16 MiB read()s of a tmpfs file (long system calls, preempted in
 * the kernel); "sqpoll", an io_uring SQPOLL thread on @cpu polling an
 * empty ring for a minute (a kernel-side user worker that never returns
 * to user space).
 */
static inline pid_t spawn_companion(const char *kind, int policy, int cpu)
{
	pid_t pid;

	if (policy < 0)
		return 0;
	pid = fork();
	if (pid)
		return pid;
	if (policy != SCHED_OTHER && set_policy(0, policy))
		_exit(3);
	if (!strcmp(kind, "read")) {
		char *buf = malloc(GIDLE_READ_SIZE);
		int fd = open(GIDLE_READ_FILE, O_RDONLY);

		if (!buf || fd < 0 || pin_cpu(0, cpu))
			_exit(4);
		memset(buf, 1, GIDLE_READ_SIZE);
		for (;;)
			if (pread(fd, buf, GIDLE_READ_SIZE, 0) != GIDLE_READ_SIZE)
				_exit(5);
	} else {
		struct io_uring_params p = { 0 };
		struct io_uring_sqe *sqe;
		unsigned int *tail;
		char *sq;
		int fd;

		/* one NOP: the thread then polls for sq_thread_idle */
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF;
		p.sq_thread_cpu = cpu;
		p.sq_thread_idle = 60000;
		fd = pin_cpu(0, 0) ? -1 : syscall(__NR_io_uring_setup, 8, &p);
		if (fd < 0)
			_exit(6);
		sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(__u32),
			  PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
		sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, IORING_OFF_SQES);
		if (sq == MAP_FAILED || sqe == MAP_FAILED)
			_exit(7);
		tail = (unsigned int *)(sq + p.sq_off.tail);
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_NOP;
		((unsigned int *)(sq + p.sq_off.array))[*tail & (p.sq_entries - 1)] = 0;
		__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
		if (syscall(__NR_io_uring_enter, fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0) < 0)
			_exit(8);
		for (;;)
			pause();
	}
}

/* A thread that sleeps until @stop; its TID in @tid */
struct sibling {
	uint32_t stop;
	pid_t tid;
	int policy;		/* of a thread it creates, seen from there */
};

static inline void *sibling_fn(void *arg)
{
	struct sibling *s = arg;

	__atomic_store_n(&s->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &s->stop, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

#endif
