// SPDX-License-Identifier: GPL-2.0
/*
 * I/O attribution: remember which task dirtied each page-cache page, so
 * that the bio that writes it back, submitted by a flusher kworker, can be
 * attributed to that task and its cgroup (tracepoint block:block_bio_origin).
 *
 * The tag lives in page_ext (16 bytes per page), is written when a clean
 * page becomes dirty (folio_account_dirtied(), so the first dirtier since
 * the last writeback wins), is set on every page of the folio (so a split
 * keeps it), is copied on migration and cleared when the page is freed.
 * Off unless booted with ioattr=on; then a static key turns the hooks on.
 * See Documentation/admin-guide/mm/ioattr.rst.
 */
#define pr_fmt(fmt) "ioattr: " fmt

#include <linux/bio.h>
#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/ioattr.h>
#include <linux/mm.h>
#include <linux/page_ext.h>
#include <linux/pid_namespace.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/string.h>

#define IOATTR_TAG_VALID	BIT(0)
#define IOATTR_TAG_KTHREAD	BIT(1)

struct ioattr_tag {
	u64 cgroup;
	u32 tgid;
	u32 flags;
};

static bool ioattr_param __initdata;

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
	static_branch_enable(&ioattr_enabled);
	pr_info("tagging dirtied pages with their task (%zu bytes per page)\n",
		sizeof(struct ioattr_tag));
}

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

void __ioattr_dirty(struct folio *folio)
{
	long i, nr = folio_nr_pages(folio);
	struct ioattr_tag tag = { .flags = IOATTR_TAG_VALID };
	struct page_ext *ext;

	/*
	 * Dirtied from interrupt context (a bio completion dirtying the pages
	 * it read into): current is whoever was interrupted, so the kernel.
	 */
	if (in_task()) {
		tag.cgroup = ioattr_task_cgroup(current);
		tag.tgid = current->tgid;
	}
	if (!in_task() || current->flags & PF_KTHREAD)
		tag.flags |= IOATTR_TAG_KTHREAD;
	ext = page_ext_get(&folio->page);

	if (unlikely(!ext))
		return;
	for (i = 0; i < nr; i++, ext = page_ext_next(ext))
		*ioattr_tag(ext) = tag;
	page_ext_put(ext);
}

void __ioattr_free(struct page *page, unsigned int order)
{
	struct page_ext *ext = page_ext_get(page);
	unsigned long i;

	if (unlikely(!ext))
		return;
	for (i = 0; i < (1UL << order); i++, ext = page_ext_next(ext))
		memset(ioattr_tag(ext), 0, sizeof(struct ioattr_tag));
	page_ext_put(ext);
}

void __ioattr_copy(struct folio *dst, struct folio *src)
{
	struct page_ext *s = page_ext_get(&src->page), *d;
	long i, nr = folio_nr_pages(src);

	if (unlikely(!s))
		return;
	d = page_ext_get(&dst->page);
	if (unlikely(!d)) {
		page_ext_put(s);
		return;
	}
	for (i = 0; i < nr; i++) {
		*ioattr_tag(d) = *ioattr_tag(s);
		s = page_ext_next(s);
		d = page_ext_next(d);
	}
	page_ext_put(d);
	page_ext_put(s);
}

/*
 * The tag of a page that a write bio carries, if it is a regular file's
 * page-cache page under writeback (not direct I/O from user memory, not a
 * block device's page cache, which is file system metadata).
 */
static bool ioattr_page_tag(struct page *page, struct ioattr_tag *tag)
{
	struct folio *folio = page_folio(page);
	struct address_space *mapping;
	struct page_ext *ext;

	if (folio_test_anon(folio) || !folio_test_writeback(folio))
		return false;
	mapping = folio->mapping;
	if (!mapping || !mapping->host || !S_ISREG(mapping->host->i_mode))
		return false;
	ext = page_ext_get(page);
	if (!ext)
		return false;
	*tag = *ioattr_tag(ext);
	page_ext_put(ext);
	return tag->flags & IOATTR_TAG_VALID;
}

#define IOATTR_SHARES 4

static void ioattr_name(struct ioattr_origin *o)
{
	struct task_struct *t;

	rcu_read_lock();
	t = find_task_by_pid_ns(o->tgid, &init_pid_ns);
	if (t)
		strscpy(o->comm, t->comm, sizeof(o->comm));
	else
		strscpy(o->comm, "-", sizeof(o->comm));
	rcu_read_unlock();
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
	if (static_branch_unlikely(&ioattr_enabled) && op_is_write(bio_op(bio)) &&
	    bio_has_data(bio)) {
		bio_for_each_segment(bv, bio, iter) {
			struct ioattr_tag tag;

			if (!ioattr_page_tag(bv.bv_page, &tag))
				continue;
			for (i = 0; i < n; i++)
				if (share[i].tag.tgid == tag.tgid &&
				    share[i].tag.cgroup == tag.cgroup)
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
		ioattr_name(o);
		return;
	}
	o->tgid = current->tgid;
	o->share = bio->bi_iter.bi_size;
	o->cgroup = ioattr_task_cgroup(current);
	o->source = current->flags & PF_KTHREAD ? IOATTR_KERNEL : IOATTR_SUBMITTER;
	strscpy(o->comm, current->comm, sizeof(o->comm));
}
