// SPDX-License-Identifier: GPL-2.0
/*
 * The workloads of bench/jobs (see README):
 *
 *   jobs_bench ls MEM_OPS WRITE_OPS FILE   latency-sensitive: memory
 *        operations (touch 64 random pages of a 256 MiB working set) and
 *        small writes (64 KiB buffered pwrite into a 64 MiB ring in FILE);
 *        prints "mem_p50 mem_p99 write_p50 write_p99" in microseconds
 *   jobs_bench be-mem MIB                  best effort: map, touch and unmap
 *        MIB MiB of anonymous memory, forever
 *   jobs_bench be-dirty FILE MIB           best effort: rewrite the first MIB
 *        MiB of FILE 1 MiB at a time, forever (dirty page cache)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fleet_test.h"

#define WSET	(256UL << 20)
#define TOUCH	64

static int ls(long mem_ops, long write_ops, const char *file)
{
	double *mem = calloc(mem_ops, sizeof(*mem));
	double *wr = calloc(write_ops, sizeof(*wr));
	char *buf = mmap(NULL, WSET, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char piece[64 << 10];
	unsigned int seed = 1;
	int fd;

	if (!mem || !wr || buf == MAP_FAILED)
		return 1;
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	memset(buf, 1, WSET);
	for (long i = 0; i < mem_ops; i++) {
		unsigned long long t = now_ns();

		for (int j = 0; j < TOUCH; j++)
			buf[(rand_r(&seed) % (WSET / 4096)) * 4096] += j;
		mem[i] = (now_ns() - t) / 1e3;
	}
	for (long i = 0; i < write_ops; i++) {
		unsigned long long t = now_ns();

		piece[0] = i;
		if (pwrite(fd, piece, sizeof(piece), (i % 1024) * sizeof(piece)) !=
		    sizeof(piece))
			return 1;
		wr[i] = (now_ns() - t) / 1e3;
	}
	printf("%.0f %.0f %.0f %.0f\n", fleet_percentile(mem, mem_ops, 50),
	       fleet_percentile(mem, mem_ops, 99), fleet_percentile(wr, write_ops, 50),
	       fleet_percentile(wr, write_ops, 99));
	return 0;
}

static int be_mem(unsigned long mib)
{
	for (;;) {
		char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		for (unsigned long i = 0; i < mib << 20; i += 4096)
			p[i] = 1;
		munmap(p, mib << 20);
	}
}

static int be_dirty(const char *file, unsigned long mib)
{
	static char chunk[1 << 20];

	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return 1;
	for (unsigned char pass = 1;; pass++) {
		memset(chunk, pass, sizeof(chunk));
		for (unsigned long i = 0; i < mib; i++)
			if (pwrite(fd, chunk, sizeof(chunk), i << 20) != sizeof(chunk))
				return 1;
	}
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "ls"))
		return ls(atol(argv[2]), atol(argv[3]), argv[4]);
	if (argc == 3 && !strcmp(argv[1], "be-mem"))
		return be_mem(strtoul(argv[2], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "be-dirty"))
		return be_dirty(argv[2], strtoul(argv[3], NULL, 0));
	fprintf(stderr, "usage: see the comment at the top of jobs_bench.c\n");
	return 2;
}
