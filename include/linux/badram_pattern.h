/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_BADRAM_PATTERN_H
#define _LINUX_BADRAM_PATTERN_H

/*
 * BadRAM patterns: their syntax and the arithmetic of matching, shared by
 * mm/badram.c and the x86 decompressor, which keeps the randomized kernel
 * image off bad pages (see Documentation/admin-guide/mm/badram.rst). The
 * includer provides isspace(), memcpy() and kstrtoull().
 */
#include <linux/limits.h>
#include <linux/types.h>

#define BADRAM_TOKEN_MAX	24	/* characters in a number */

static inline bool badram_is_sep(char c)
{
	return c == ',' || c == '\0' || isspace(c);
}

/*
 * The next token of @buf from *@pos on: tokens are separated by commas and
 * white space, and '#' comments out the rest of a line.  Returns the
 * token's length, 0 at the end of @buf.
 */
static inline size_t badram_next_token(const char *buf, size_t len,
				       size_t *pos, const char **tok)
{
	size_t i = *pos, start;

	for (;;) {
		while (i < len && badram_is_sep(buf[i]))
			i++;
		if (i < len && buf[i] == '#') {
			while (i < len && buf[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	start = i;
	while (i < len && !badram_is_sep(buf[i]) && buf[i] != '#')
		i++;
	*pos = i;
	*tok = buf + start;
	return i - start;
}

/* A number as kstrtoull(.., 0, ..) takes it, at most BADRAM_TOKEN_MAX long. */
static inline bool badram_parse_u64(const char *tok, size_t n, u64 *val)
{
	char num[BADRAM_TOKEN_MAX + 1];
	unsigned long long v;

	if (n > BADRAM_TOKEN_MAX)
		return false;
	memcpy(num, tok, n);
	num[n] = '\0';
	if (kstrtoull(num, 0, &v))
		return false;
	*val = v;
	return true;
}

/* The number of x in [0, @n) with (x & @m) == @v, where @v == (@v & @m). */
static inline u64 badram_count_below(u64 n, u64 m, u64 v)
{
	int bit, nfree = 0;	/* mask bits that are clear, below @bit */
	u64 cnt = 0;

	for (bit = 0; bit < 64; bit++)
		nfree += !(m & (1ULL << bit));
	for (bit = 63; bit >= 0; bit--) {
		u64 b = 1ULL << bit;

		nfree -= !(m & b);
		if (n & b) {
			/* x has 0 here, so any free bits below are fine */
			if (!(v & b))
				cnt += 1ULL << nfree;
			/* continue with x equal to n so far, if it may be 1 */
			if ((m & b) && !(v & b))
				return cnt;
		} else if (v & b) {
			return cnt;
		}
	}
	return cnt;
}

/* The smallest x >= @lo with (x & @m) == @v, or U64_MAX if there is none. */
static inline u64 badram_next_match(u64 lo, u64 m, u64 v)
{
	u64 x = 0, cand = U64_MAX;
	int bit;

	for (bit = 63; bit >= 0; bit--) {
		u64 b = 1ULL << bit, low = b - 1;

		if (m & b) {
			if ((v & b) && !(lo & b))
				return x | b | (v & low);
			if (!(v & b) && (lo & b))
				return cand;
			x |= v & b;
		} else if (lo & b) {
			x |= b;
		} else {
			/* setting this free bit instead gives a larger x */
			cand = x | b | (v & low);
		}
	}
	return x;
}

#endif /* _LINUX_BADRAM_PATTERN_H */
