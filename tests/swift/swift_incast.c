// SPDX-License-Identifier: GPL-2.0
/*
 * Incast for the Swift tests and benchmark: FLOWS TCP connections from the
 * sender namespace to one receiver in the receiver namespace, all connected
 * first, then all sending BYTES at once. A transfer is complete when the
 * receiver has read all its bytes and the EOF, and the sender has seen the
 * receiver close (so every byte is delivered and acknowledged).
 *
 *   swift_incast -c CC -n FLOWS -b BYTES -s SND_NETNS -r RCV_NETNS -a ADDR
 *                [-p PORT] [-t TIMEOUT_S]
 *
 * Prints one line per flow and a summary line:
 *   flow I port P sent B received B fct_us T retrans R
 *   incast cc CC flows N bytes B completed C max_fct_us T retrans R
 * and exits 0 only when every flow completed with all its bytes in time.
 * Netns names are those of ip-netns(8) (/run/netns/NAME).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FLOWS	256

struct flow {
	int fd;
	unsigned short port;		/* local port of the sender */
	unsigned long long sent;
	unsigned long long received;	/* as reported by the receiver */
	unsigned long long fct_us;	/* 0: not completed */
	unsigned int retrans;
	int eof;
};

static void die(const char *what)
{
	fprintf(stderr, "swift_incast: %s: %s\n", what, strerror(errno));
	exit(1);
}

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (setns(fd, CLONE_NEWNET))
		die("setns");
	close(fd);
}

/*
 * Receiver: accept nflows connections and read each to EOF, then report
 * "PORT BYTES" per connection on out and close it.
 */
static void receiver(int port, int nflows, int ready, int out)
{
	struct pollfd pfd[MAX_FLOWS + 1];
	unsigned long long bytes[MAX_FLOWS + 1] = { 0 };
	unsigned short peer[MAX_FLOWS + 1] = { 0 };
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int lfd, one = 1, accepted = 0, done = 0, i;
	static char buf[1 << 16];

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	if (listen(lfd, nflows + 8))
		die("listen");
	if (write(ready, "r", 1) != 1)
		die("ready");
	close(ready);

	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	for (i = 1; i <= nflows; i++)
		pfd[i].fd = -1;
	while (done < nflows) {
		pfd[0].fd = accepted < nflows ? lfd : -1;
		if (poll(pfd, nflows + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pfd[0].revents & POLLIN) {
			socklen_t len = sizeof(sa);
			int fd = accept(lfd, (struct sockaddr *)&sa, &len);

			if (fd < 0)
				die("accept");
			accepted++;
			pfd[accepted].fd = fd;
			pfd[accepted].events = POLLIN;
			peer[accepted] = ntohs(sa.sin_port);
		}
		for (i = 1; i <= accepted; i++) {
			ssize_t n;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (n > 0) {
				bytes[i] += n;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			/* EOF (or reset): report, then close */
			dprintf(out, "%u %llu\n", peer[i], bytes[i]);
			close(pfd[i].fd);
			pfd[i].fd = -1;
			done++;
		}
	}
	close(out);
	exit(0);
}

static void usage(void)
{
	fputs("usage: swift_incast -c CC -n FLOWS -b BYTES -s SND_NETNS -r RCV_NETNS -a ADDR [-p PORT] [-t TIMEOUT_S]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *cc = NULL, *snd = NULL, *rcv = NULL, *addr = NULL;
	int nflows = 0, port = 5301, tmo = 60, ready[2], res[2], opt, i;
	unsigned long long bytes = 0, t0, deadline, max_fct = 0;
	unsigned int completed = 0, retrans = 0;
	static struct flow flows[MAX_FLOWS];
	static char buf[1 << 16];
	struct pollfd pfd[MAX_FLOWS];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char line[128], got[64];
	int left, status;
	FILE *rf;
	pid_t rpid;

	while ((opt = getopt(argc, argv, "c:n:b:s:r:a:p:t:")) != -1) {
		switch (opt) {
		case 'c':
			cc = optarg;
			break;
		case 'n':
			nflows = atoi(optarg);
			break;
		case 'b':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 's':
			snd = optarg;
			break;
		case 'r':
			rcv = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 't':
			tmo = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!cc || !snd || !rcv || !addr || nflows < 1 || nflows > MAX_FLOWS ||
	    !bytes || tmo < 1)
		usage();
	sa.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		usage();
	memset(buf, 'x', sizeof(buf));
	signal(SIGPIPE, SIG_IGN);

	if (pipe(ready) || pipe(res))
		die("pipe");
	rpid = fork();
	if (rpid < 0)
		die("fork");
	if (!rpid) {
		close(ready[0]);
		close(res[0]);
		alarm(tmo + 10);
		enter_netns(rcv);
		receiver(port, nflows, ready[1], res[1]);
	}
	close(ready[1]);
	close(res[1]);
	if (read(ready[0], line, 1) != 1) {
		fprintf(stderr, "swift_incast: receiver did not start\n");
		return 1;
	}
	alarm(tmo + 10);
	enter_netns(snd);

	/* Connect every flow first, so that all start together. */
	for (i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];
		struct sockaddr_in la;
		socklen_t len = sizeof(got);

		f->fd = socket(AF_INET, SOCK_STREAM, 0);
		if (f->fd < 0)
			die("socket");
		if (setsockopt(f->fd, IPPROTO_TCP, TCP_CONGESTION, cc,
			       strlen(cc)))
			die("TCP_CONGESTION");
		memset(got, 0, sizeof(got));
		if (getsockopt(f->fd, IPPROTO_TCP, TCP_CONGESTION, got, &len) ||
		    strcmp(got, cc)) {
			fprintf(stderr, "swift_incast: congestion control is %s, not %s\n",
				got, cc);
			return 1;
		}
		if (connect(f->fd, (struct sockaddr *)&sa, sizeof(sa)))
			die("connect");
		len = sizeof(la);
		if (getsockname(f->fd, (struct sockaddr *)&la, &len))
			die("getsockname");
		f->port = ntohs(la.sin_port);
		fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) | O_NONBLOCK);
	}

	t0 = now_us();
	deadline = t0 + tmo * 1000000ULL;
	left = nflows;
	while (left && now_us() < deadline) {
		for (i = 0; i < nflows; i++) {
			pfd[i].fd = flows[i].eof ? -1 : flows[i].fd;
			pfd[i].events = flows[i].sent < bytes ? POLLOUT : POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, nflows, 100) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (i = 0; i < nflows; i++) {
			struct flow *f = &flows[i];
			ssize_t n;

			if (!pfd[i].revents)
				continue;
			if (f->sent < bytes) {
				size_t want = sizeof(buf);

				if (want > bytes - f->sent)
					want = bytes - f->sent;
				n = write(f->fd, buf, want);
				if (n < 0 && errno != EAGAIN && errno != EINTR) {
					f->eof = 1;	/* failed: not completed */
					left--;
					continue;
				}
				if (n > 0)
					f->sent += n;
				if (f->sent == bytes)
					shutdown(f->fd, SHUT_WR);
				continue;
			}
			n = read(f->fd, buf, sizeof(buf));
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n == 0) {
				struct tcp_info ti;
				socklen_t len = sizeof(ti);

				f->fct_us = now_us() - t0;
				if (!getsockopt(f->fd, IPPROTO_TCP, TCP_INFO,
						&ti, &len))
					f->retrans = ti.tcpi_total_retrans;
			}
			f->eof = 1;	/* EOF, or unexpected data: done */
			left--;
		}
	}
	for (i = 0; i < nflows; i++)
		close(flows[i].fd);

	if (left)	/* timed out: the receiver still waits */
		kill(rpid, SIGKILL);

	/* The receiver's byte counts, by the sender's port. */
	rf = fdopen(res[0], "r");
	if (!rf)
		die("fdopen");
	while (fgets(line, sizeof(line), rf)) {
		unsigned int p;
		unsigned long long b;

		if (sscanf(line, "%u %llu", &p, &b) != 2)
			continue;
		for (i = 0; i < nflows; i++)
			if (flows[i].port == p)
				flows[i].received = b;
	}
	fclose(rf);
	waitpid(rpid, &status, 0);

	for (i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		printf("flow %d port %u sent %llu received %llu fct_us %llu retrans %u\n",
		       i, f->port, f->sent, f->received, f->fct_us, f->retrans);
		if (f->fct_us && f->sent == bytes && f->received == bytes)
			completed++;
		if (f->fct_us > max_fct)
			max_fct = f->fct_us;
		retrans += f->retrans;
	}
	printf("incast cc %s flows %d bytes %llu completed %u max_fct_us %llu retrans %u\n",
	       cc, nflows, bytes, completed, max_fct, retrans);
	return completed == (unsigned int)nflows ? 0 : 1;
}
