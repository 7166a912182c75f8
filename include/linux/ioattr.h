/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_IOATTR_H
#define _LINUX_IOATTR_H

#include <linux/jump_label.h>
#include <linux/sched.h>
#include <linux/types.h>

struct bio;
struct folio;
struct seq_file;

/* Where the origin of a bio came from. */
enum ioattr_source {
	IOATTR_SUBMITTER,	/* the submitting user task (read, direct I/O) */
	IOATTR_DIRTIER,		/* the task that dirtied the page cache */
	IOATTR_KERNEL,		/* a kernel thread: metadata, journal, untagged */
};

/**
 * struct ioattr_origin - the task a bio is attributed to
 * @tgid: thread group of the origin
 * @cgroup: cgroup id (cgroup v2 inode number) of the origin at the time
 * @comm: command name, if the origin still runs, else "-"
 * @source: an &enum ioattr_source
 * @mixed: the pages of the bio came from more than one dirtier
 * @share: bytes of the bio that are the origin's (all unless @mixed)
 */
struct ioattr_origin {
	u64 cgroup;
	pid_t tgid;
	unsigned int share;
	char comm[TASK_COMM_LEN];
	u8 source;
	bool mixed;
};

/*
 * The page_ext tag of a page: who dirtied it (mm/ioattr.c). tgid and flags
 * (which holds the process's start stamp) are one word, written and read
 * whole, so that a lockless reader never pairs a pid with another
 * process's stamp.
 */
struct ioattr_tag {
	u64 cgroup;
	union {
		struct {
			u32 tgid;
			u32 flags;
		};
		u64 who;
	};
};

static inline bool ioattr_same(const struct ioattr_tag *a,
			       const struct ioattr_tag *b)
{
	return a->who == b->who && a->cgroup == b->cgroup;
}

#ifdef CONFIG_IO_ATTRIBUTION
DECLARE_STATIC_KEY_FALSE(ioattr_enabled);
extern struct page_ext_operations ioattr_page_ext_ops;
extern bool ioattr_booted;

/* For mm/ioattr*.c */
bool ioattr_bio_tagged(struct bio *bio);
bool ioattr_folio_tag(struct folio *folio, struct ioattr_tag *tag);
struct task_struct *ioattr_process(const struct ioattr_tag *tag);
u32 ioattr_stamp(struct task_struct *t);
#define IOATTR_TAG_STAMP_SHIFT	8

void __ioattr_dirty(struct folio *folio);
void __ioattr_save(struct folio *folio, struct ioattr_tag *tag);
void __ioattr_restore(struct folio *folio, const struct ioattr_tag *tag);
void __ioattr_copy(struct folio *dst, struct folio *src);
void __ioattr_account(struct bio *bio);
void __ioattr_reap(struct task_struct *parent, struct task_struct *child);
void __ioattr_release(struct task_struct *p);
void ioattr_show_io(struct task_struct *task, struct seq_file *m, int whole);

static inline void ioattr_dirty(struct folio *folio)
{
	if (static_branch_unlikely(&ioattr_enabled))
		__ioattr_dirty(folio);
}

/*
 * Around a redirty (folio_redirty_for_writepage()): the dirtier of the
 * data stays its dirtier.
 */
static inline void ioattr_save(struct folio *folio, struct ioattr_tag *tag)
{
	if (static_branch_unlikely(&ioattr_enabled))
		__ioattr_save(folio, tag);
}

static inline void ioattr_restore(struct folio *folio,
				  const struct ioattr_tag *tag)
{
	if (static_branch_unlikely(&ioattr_enabled))
		__ioattr_restore(folio, tag);
}

static inline void ioattr_copy(struct folio *dst, struct folio *src)
{
	if (static_branch_unlikely(&ioattr_enabled))
		__ioattr_copy(dst, src);
}

/* Count a write bio's bytes for the tasks and cgroups that dirtied them. */
static inline void ioattr_account(struct bio *bio)
{
	if (static_branch_unlikely(&ioattr_enabled))
		__ioattr_account(bio);
}

/* wait_task_zombie(): @parent reaps @child, whose totals become its. */
static inline void ioattr_reap(struct task_struct *parent,
			       struct task_struct *child)
{
	if (ioattr_booted)
		__ioattr_reap(parent, child);
}

/* release_task(): @p is gone, its totals with it. */
static inline void ioattr_release(struct task_struct *p)
{
	if (ioattr_booted)
		__ioattr_release(p);
}

void ioattr_bio_origin(struct bio *bio, struct ioattr_origin *o);

#ifdef CONFIG_BLK_CGROUP
void blkcg_ioattr_charge(struct bio *bio, u64 id, u64 bytes);
#else
static inline void blkcg_ioattr_charge(struct bio *bio, u64 id, u64 bytes) { }
#endif
#else
static inline void ioattr_dirty(struct folio *folio) { }
static inline void ioattr_save(struct folio *folio, struct ioattr_tag *tag) { }
static inline void ioattr_restore(struct folio *folio,
				  const struct ioattr_tag *tag) { }
static inline void ioattr_copy(struct folio *dst, struct folio *src) { }
static inline void ioattr_reap(struct task_struct *parent,
			       struct task_struct *child) { }
static inline void ioattr_release(struct task_struct *p) { }
static inline void ioattr_show_io(struct task_struct *task,
				  struct seq_file *m, int whole) { }
#endif

#endif /* _LINUX_IOATTR_H */
