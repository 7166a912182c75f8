/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_BADRAM_H
#define _LINUX_BADRAM_H

#include <linux/init.h>

/*
 * BadRAM: physical memory known to be bad, named by address/mask patterns
 * on the command line (badram=) or in the early initramfs, and kept away
 * from the page allocator (see Documentation/admin-guide/mm/badram.rst).
 */
#ifdef CONFIG_BADRAM
void __init badram_reserve(void);
bool badram_page_is_bad(unsigned long pfn);
unsigned long badram_excluded_pages(void);
#else
static inline void badram_reserve(void) { }
static inline bool badram_page_is_bad(unsigned long pfn) { return false; }
static inline unsigned long badram_excluded_pages(void) { return 0; }
#endif

#endif /* _LINUX_BADRAM_H */
