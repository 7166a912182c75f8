// SPDX-License-Identifier: GPL-2.0
/*
 * I/O attribution totals: bytes written back per process (/proc/PID/io
 * writeback_bytes) and per cgroup and device (io.stat dirtied_wbytes),
 * counted from the page tags of every write bio at submission, so that
 * they need no tracing and outlive the writer. See
 * Documentation/admin-guide/mm/ioattr.rst.
 */
#include <linux/bio.h>
#include <linux/ioattr.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>

/* @bytes of @bio's pages tagged @tag are written back: count them. */
static void ioattr_charge(struct bio *bio, const struct ioattr_tag *tag,
			  u64 bytes)
{
	struct task_struct *t;

	rcu_read_lock();
	t = ioattr_process(tag);
	if (t)
		atomic64_add(bytes, &t->signal->ioattr_wb_bytes);
	rcu_read_unlock();
	if (tag->cgroup)
		blkcg_ioattr_charge(bio, tag->cgroup, bytes);
}

/*
 * submit_bio(): add the bytes of a write bio's tagged pages to the
 * writeback totals of the processes (/proc/PID/io writeback_bytes) and
 * cgroups (io.stat dirtied_wbytes) that dirtied them, every dirtier of the
 * bio its own bytes. A process that no longer exists is not counted (its
 * cgroup is); one that exited but was not yet reaped is, and the count
 * goes to its parent when it is reaped.
 */
void __ioattr_account(struct bio *bio)
{
	struct ioattr_tag run, tag;
	struct bvec_iter iter;
	struct bio_vec bv;
	u64 bytes = 0;

	if (!ioattr_bio_tagged(bio))
		return;
	bio_for_each_segment(bv, bio, iter) {
		if (!ioattr_page_tag(bv.bv_page, &tag))
			continue;
		if (bytes && ioattr_same(&run, &tag)) {
			bytes += bv.bv_len;
			continue;
		}
		if (bytes)
			ioattr_charge(bio, &run, bytes);
		run = tag;
		bytes = bv.bv_len;
	}
	if (bytes)
		ioattr_charge(bio, &run, bytes);
}

/* wait_task_zombie(): a reaped process's totals go to its parent. */
void ioattr_reap(struct signal_struct *parent, struct signal_struct *child)
{
	atomic64_add(atomic64_read(&child->ioattr_wb_bytes),
		     &parent->ioattr_wb_bytes);
}

/*
 * /proc/PID/io (and task/TID/io, which shows the process's count: a tag
 * names the process, not the thread).
 */
void ioattr_show_io(struct task_struct *task, struct seq_file *m)
{
	if (ioattr_booted)
		seq_printf(m, "writeback_bytes: %lld\n",
			   atomic64_read(&task->signal->ioattr_wb_bytes));
}
