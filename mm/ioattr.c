// SPDX-License-Identifier: GPL-2.0
/*
 * I/O attribution: remember which task dirtied each page-cache page, so
 * that the bio that writes it back, submitted by a flusher kworker, can be
 * attributed to that task and its cgroup (tracepoint block:block_bio_origin).
 *
 * The tag lives in page_ext (16 bytes per page), is written when a clean
 * page becomes dirty (folio_account_dirtied(), so the first dirtier since
 * the last writeback wins), is set on every page of the folio (so a split
 * keeps it) and copied when a dirty folio migrates. It is read only for a
 * folio under writeback, which was tagged when it became dirty since it
 * entered the page cache; so nothing clears it, and only page-cache
 * folios of regular files are ever touched.
 * Off unless booted with ioattr=on; then a static key turns the hooks on.
 * See Documentation/admin-guide/mm/ioattr.rst.
 */
#define pr_fmt(fmt) "ioattr: " fmt

#include <linux/backing-dev.h>
#include <linux/bio.h>
#include <linux/cgroup.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/ioattr.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/page_ext.h>
#include <linux/pagemap.h>
#include <linux/pid_namespace.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/string.h>

#define IOATTR_TAG_VALID	BIT(0)
#define IOATTR_TAG_KTHREAD	BIT(1)
/*
 * Bits 2-7: the epoch the tag was written in, bumped each time tagging is
 * switched on again through debugfs (bench/ioattr): pages dirtied while it
 * was off keep a tag of an earlier epoch, which is then not believed.
 */
#define IOATTR_TAG_EPOCH_SHIFT	2
#define IOATTR_TAG_EPOCH	GENMASK(7, IOATTR_TAG_EPOCH_SHIFT)
/*
 * Bits 8-31 (IOATTR_TAG_STAMP_SHIFT): when the dirtier's process started
 * (start_boottime in units of 2^20 ns, wrapping after 4.9 hours), so that
 * a later process that got the same pid is not named as the dirtier.
 */
u32 ioattr_stamp(struct task_struct *t)
{
	return (u32)(t->start_boottime >> 20) << IOATTR_TAG_STAMP_SHIFT;
}

static bool ioattr_param __initdata;
static u32 ioattr_epoch;	/* in place, a multiple of BIT(IOATTR_TAG_EPOCH_SHIFT) */
/* booted with ioattr=on (tagging may be switched off since, debugfs) */
bool ioattr_booted __ro_after_init;

DEFINE_STATIC_KEY_FALSE(ioattr_enabled);

static int __init ioattr_setup(char *buf)
{
	if (kstrtobool(buf ?: "", &ioattr_param)) {
		pr_warn("ioattr=%s not understood: want on or off; staying off\n",
			buf ?: "");
		ioattr_param = false;
	}
	return 0;
}
early_param("ioattr", ioattr_setup);

static bool __init ioattr_need(void)
{
	return ioattr_param;
}

static void __init ioattr_init(void)
{
	if (!ioattr_param)
		return;
	ioattr_booted = true;
	static_branch_enable(&ioattr_enabled);
	pr_info("tagging dirtied pages with their task (%zu bytes per page)\n",
		sizeof(struct ioattr_tag));
}

#ifdef CONFIG_DEBUG_FS
/*
 * debugfs ioattr/tagging: turn the hooks off and on again at run time, for
 * bench/ioattr, which compares the costs of both states in one boot. Pages
 * dirtied while off keep tags of an earlier epoch, which are then ignored
 * (the writeback goes to its submitter) unless 64 switches later the epoch
 * has come round again; not an interface for anything else.
 */
static int ioattr_tagging_get(void *data, u64 *val)
{
	*val = static_key_enabled(&ioattr_enabled);
	return 0;
}

static int ioattr_tagging_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	static DEFINE_MUTEX(lock);

	mutex_lock(&lock);
	if (val && !static_key_enabled(&ioattr_enabled)) {
		WRITE_ONCE(ioattr_epoch, (ioattr_epoch + BIT(IOATTR_TAG_EPOCH_SHIFT)) &
			   IOATTR_TAG_EPOCH);
		static_branch_enable(&ioattr_enabled);
	} else if (!val) {
		static_branch_disable(&ioattr_enabled);
	}
	mutex_unlock(&lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ioattr_tagging_fops, ioattr_tagging_get,
			 ioattr_tagging_set, "%llu\n");

static int __init ioattr_debugfs_init(void)
{
	struct dentry *dir;

	if (!ioattr_param)
		return 0;
	dir = debugfs_create_dir("ioattr", NULL);
	debugfs_create_file_unsafe("tagging", 0600, dir, NULL,
				   &ioattr_tagging_fops);
	return 0;
}
late_initcall(ioattr_debugfs_init);
#endif

struct page_ext_operations ioattr_page_ext_ops = {
	.size = sizeof(struct ioattr_tag),
	.need = ioattr_need,
	.init = ioattr_init,
};

static struct ioattr_tag *ioattr_tag(struct page_ext *ext)
{
	return page_ext_data(ext, &ioattr_page_ext_ops);
}

static u64 ioattr_task_cgroup(struct task_struct *t)
{
#ifdef CONFIG_CGROUPS
	u64 id;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(t));
	rcu_read_unlock();
	return id;
#else
	return 0;
#endif
}

/*
 * page_ext is allocated per memory section (on SPARSEMEM): a folio that
 * spans sections, a 1 GiB hugetlb folio spans eight sections of 128 MiB,
 * must not be walked with page_ext_next() past a section's end. The walk
 * looks the entry up again at each section start, as page_ext_iter does in
 * later kernels, and hands page_ext_put() what page_ext_get() returned.
 */
struct ioattr_walk {
	struct page_ext *ext;	/* the entry of pfn */
	struct page_ext *held;	/* what page_ext_get() returned */
	unsigned long pfn;
};

static bool ioattr_section_start(unsigned long pfn)
{
#ifdef CONFIG_SPARSEMEM
	return !(pfn & (PAGES_PER_SECTION - 1));
#else
	return false;
#endif
}

static struct ioattr_tag *ioattr_walk_start(struct ioattr_walk *w,
					    unsigned long pfn)
{
	w->pfn = pfn;
	w->held = page_ext_get(pfn_to_page(pfn));
	w->ext = w->held;
	return w->ext ? ioattr_tag(w->ext) : NULL;
}

static struct ioattr_tag *ioattr_walk_next(struct ioattr_walk *w)
{
	w->pfn++;
	if (!ioattr_section_start(w->pfn)) {
		w->ext = page_ext_next(w->ext);
	} else {
		page_ext_put(w->held);
		w->held = page_ext_get(pfn_to_page(w->pfn));
		w->ext = w->held;
		if (!w->ext)
			return NULL;
	}
	if (IS_ENABLED(CONFIG_DEBUG_VM)) {
		struct page_ext *e = page_ext_get(pfn_to_page(w->pfn));

		VM_WARN_ON_ONCE(e != w->ext);
		page_ext_put(e);
	}
	return ioattr_tag(w->ext);
}

static void ioattr_walk_end(struct ioattr_walk *w)
{
	page_ext_put(w->held);
}

/*
 * A tag is written under the mapping's i_pages lock (or the folio lock)
 * but read locklessly when a bio is submitted: word by word (the cgroup,
 * then the process: tgid and flags with its start stamp), so that a
 * reader gets whole words.
 */
static void ioattr_write(struct ioattr_tag *t, const struct ioattr_tag *v)
{
	WRITE_ONCE(t->cgroup, v->cgroup);
	WRITE_ONCE(t->who, v->who);
}

static void ioattr_read(const struct ioattr_tag *t, struct ioattr_tag *v)
{
	v->cgroup = READ_ONCE(t->cgroup);
	v->who = READ_ONCE(t->who);
}

/*
 * Only page-cache pages of regular files that can be written back carry a
 * tag (a block device's page cache is file system metadata, the
 * submitter's; tmpfs and hugetlbfs are never written back): nothing else
 * pays for the tags.
 */
static bool ioattr_mapping(struct address_space *mapping)
{
	return mapping && mapping->host && S_ISREG(mapping->host->i_mode) &&
	       mapping_can_writeback(mapping);
}

/* Set @tag on every page of @folio. */
static void ioattr_set(struct folio *folio, const struct ioattr_tag *tag)
{
	long i, nr = folio_nr_pages(folio);
	struct ioattr_walk w;
	struct ioattr_tag *t;

	t = ioattr_walk_start(&w, folio_pfn(folio));
	for (i = 0; t && i < nr; i++) {
		ioattr_write(t, tag);
		if (i + 1 < nr)
			t = ioattr_walk_next(&w);
	}
	ioattr_walk_end(&w);
}

void __ioattr_dirty(struct folio *folio)
{
	struct ioattr_tag tag = {
		.flags = IOATTR_TAG_VALID | READ_ONCE(ioattr_epoch),
	};

	if (!ioattr_mapping(folio->mapping))
		return;

	/*
	 * Dirtied from interrupt context (a bio completion dirtying the pages
	 * it read into): current is whoever was interrupted, so the kernel.
	 */
	if (in_task()) {
		tag.cgroup = ioattr_task_cgroup(current);
		tag.tgid = current->tgid;
		tag.flags |= ioattr_stamp(current->group_leader);
	}
	if (!in_task() || current->flags & PF_KTHREAD)
		tag.flags |= IOATTR_TAG_KTHREAD;
	ioattr_set(folio, &tag);
}

/*
 * folio_redirty_for_writepage(): a file system declines to write a folio
 * now and makes it dirty again. The data is still the dirtier's, not the
 * flusher's or that of the task whose fsync() ran ->writepages(): save the
 * tag (every page of a folio has the same) before, put it back after.
 */
void __ioattr_save(struct folio *folio, struct ioattr_tag *tag)
{
	struct page_ext *ext = page_ext_get(&folio->page);

	memset(tag, 0, sizeof(*tag));
	if (!ext)
		return;
	ioattr_read(ioattr_tag(ext), tag);
	page_ext_put(ext);
}

void __ioattr_restore(struct folio *folio, const struct ioattr_tag *tag)
{
	ioattr_set(folio, tag);
}

void __ioattr_copy(struct folio *dst, struct folio *src)
{
	long i, nr = folio_nr_pages(src);
	struct ioattr_walk ws, wd;
	struct ioattr_tag *s, *d;

	/*
	 * Only a dirty folio's tag is ever read (when it is written back): a
	 * clean one is tagged anew when it is dirtied. Dirtiness has moved
	 * to @dst by now (__folio_migrate_mapping()).
	 */
	if (!(folio_test_dirty(dst) || folio_test_dirty(src)) ||
	    !ioattr_mapping(folio_mapping(src)))
		return;
	s = ioattr_walk_start(&ws, folio_pfn(src));
	d = ioattr_walk_start(&wd, folio_pfn(dst));
	for (i = 0; s && d && i < nr; i++) {
		struct ioattr_tag v;

		ioattr_read(s, &v);
		ioattr_write(d, &v);
		if (i + 1 < nr) {
			s = ioattr_walk_next(&ws);
			d = ioattr_walk_next(&wd);
		}
	}
	ioattr_walk_end(&wd);
	ioattr_walk_end(&ws);
}

/*
 * The tag of a folio that a write bio carries, if it is a regular file's
 * page-cache folio under writeback (not a block device's page cache, which
 * is file system metadata) tagged in the current epoch. Every page of a
 * folio has the same tag: the first page's is read. The mapping is read
 * under RCU: a bio that is not the folio's writeback (a splice of it to
 * O_DIRECT) may see the writeback end and the inode go meanwhile.
 */
bool ioattr_folio_tag(struct folio *folio, struct ioattr_tag *tag)
{
	struct page_ext *ext;
	bool ok;

	if (!folio_test_writeback(folio))
		return false;
	rcu_read_lock();
	ok = ioattr_mapping(folio_mapping(folio));
	rcu_read_unlock();
	if (!ok)
		return false;
	ext = page_ext_get(&folio->page);
	if (!ext)
		return false;
	ioattr_read(ioattr_tag(ext), tag);
	page_ext_put(ext);
	return tag->flags & IOATTR_TAG_VALID &&
	       (tag->flags & IOATTR_TAG_EPOCH) == READ_ONCE(ioattr_epoch);
}

#define IOATTR_SHARES 4

/*
 * The process that dirtied the pages tagged @tag, if it still exists (a
 * zombie included), not a later process that got the same pid. Under
 * rcu_read_lock().
 */
struct task_struct *ioattr_process(const struct ioattr_tag *tag)
{
	u32 stamp = tag->flags & ~(BIT(IOATTR_TAG_STAMP_SHIFT) - 1);
	struct task_struct *t;

	/*
	 * The thread whose pid is the tgid is its process's leader, or about
	 * to be during a non-leader's exec (de_thread(), which copies the
	 * start time before it swaps the pids).
	 */
	t = find_task_by_pid_ns(tag->tgid, &init_pid_ns);
	if (t && t->tgid == tag->tgid && ioattr_stamp(t) == stamp)
		return t;
	return NULL;
}

/* The name of the process that dirtied the pages tagged @tag, or "-". */
static void ioattr_name(struct ioattr_origin *o, const struct ioattr_tag *tag)
{
	struct task_struct *t;

	rcu_read_lock();
	t = ioattr_process(tag);
	strscpy(o->comm, t ? t->comm : "-", sizeof(o->comm));
	rcu_read_unlock();
}

/*
 * Whether the pages of @bio may carry tags: a write of data that is not
 * user memory pinned for direct I/O (the submitter's, even when it maps
 * page-cache pages) nor metadata or journal (REQ_META: the submitter's,
 * though jbd2 writes data=journal copies straight from the file's folios),
 * nor a clone (a split, a mirror's copy: the original is counted).
 */
bool ioattr_bio_tagged(struct bio *bio)
{
	return op_is_write(bio_op(bio)) && bio_has_data(bio) &&
	       !bio_flagged(bio, BIO_PAGE_PINNED) && !(bio->bi_opf & REQ_META) &&
	       !bio_flagged(bio, BIO_CLONED);
}

/**
 * ioattr_bio_origin - find the task a bio is done for
 * @bio: a bio about to be submitted
 * @o: filled in
 *
 * A write of page-cache pages is attributed to the dirtier with the largest
 * share of its bytes (@o->mixed says there were several); anything else,
 * and a bio whose pages carry no tag, to the submitting task, or to the
 * kernel when the submitter is a kernel thread.
 */
void ioattr_bio_origin(struct bio *bio, struct ioattr_origin *o)
{
	struct {
		struct ioattr_tag tag;
		unsigned int bytes;
	} share[IOATTR_SHARES];
	int i, n = 0, best = -1;
	struct bvec_iter iter;
	struct bio_vec bv;

	memset(o, 0, sizeof(*o));
	if (static_branch_unlikely(&ioattr_enabled) && ioattr_bio_tagged(bio)) {
		bio_for_each_segment(bv, bio, iter) {
			struct ioattr_tag tag;

			if (!ioattr_folio_tag(page_folio(bv.bv_page), &tag))
				continue;
			for (i = 0; i < n; i++)
				if (ioattr_same(&share[i].tag, &tag))
					break;
			if (i == n) {
				if (n)
					o->mixed = true;
				if (n == IOATTR_SHARES)
					continue;
				share[n].tag = tag;
				share[n++].bytes = 0;
			}
			share[i].bytes += bv.bv_len;
		}
		for (i = 0; i < n; i++)
			if (best < 0 || share[i].bytes > share[best].bytes)
				best = i;
	}
	if (best >= 0) {
		o->tgid = share[best].tag.tgid;
		o->share = share[best].bytes;
		o->cgroup = share[best].tag.cgroup;
		o->source = share[best].tag.flags & IOATTR_TAG_KTHREAD ?
			    IOATTR_KERNEL : IOATTR_DIRTIER;
		ioattr_name(o, &share[best].tag);
		return;
	}
	o->tgid = current->tgid;
	o->share = bio->bi_iter.bi_size;
	o->cgroup = ioattr_task_cgroup(current);
	o->source = current->flags & PF_KTHREAD ? IOATTR_KERNEL : IOATTR_SUBMITTER;
	strscpy(o->comm, current->comm, sizeof(o->comm));
}
