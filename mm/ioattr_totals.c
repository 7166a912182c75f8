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
	/*
	 * Finding a cgroup by its id may drop the last reference to a kernfs
	 * node, which takes a lock that is not IRQ-safe: not from interrupts.
	 */
	if (tag->cgroup && in_task())
		blkcg_ioattr_charge(bio, tag->cgroup, bytes);
}

#define IOATTR_RUNS 4

/*
 * submit_bio(): add the bytes of a write bio's tagged folios to the
 * writeback totals of the processes (/proc/PID/io writeback_bytes) and
 * cgroups (io.stat dirtied_wbytes) that dirtied them, every dirtier of the
 * bio its own bytes, one charge per dirtier (up to IOATTR_RUNS of them,
 * then one per folio). A process that no longer exists is not counted
 * (its cgroup is); one that exited but was not yet reaped is, and the
 * count goes to its parent when it is reaped.
 */
void __ioattr_account(struct bio *bio)
{
	struct {
		struct ioattr_tag tag;
		u64 bytes;
	} run[IOATTR_RUNS];
	struct folio_iter fi;
	struct ioattr_tag tag;
	int i, n = 0;

	if (!ioattr_bio_tagged(bio))
		return;
	bio_for_each_folio_all(fi, bio) {
		if (!ioattr_folio_tag(fi.folio, &tag))
			continue;
		for (i = 0; i < n; i++)
			if (ioattr_same(&run[i].tag, &tag))
				break;
		if (i < n) {
			run[i].bytes += fi.length;
		} else if (n < IOATTR_RUNS) {
			run[n].tag = tag;
			run[n++].bytes = fi.length;
		} else {
			ioattr_charge(bio, &tag, fi.length);
		}
	}
	for (i = 0; i < n; i++)
		ioattr_charge(bio, &run[i].tag, run[i].bytes);
}

/* wait_task_zombie(): a reaped process's totals go to its parent. */
void ioattr_reap(struct signal_struct *parent, struct signal_struct *child)
{
	atomic64_add(atomic64_read(&child->ioattr_wb_bytes),
		     &parent->ioattr_wb_bytes);
}

/*
 * /proc/PID/io, not task/TID/io: a tag names the process, not the thread,
 * so there is no per-thread count to show there.
 */
void ioattr_show_io(struct task_struct *task, struct seq_file *m, int whole)
{
	if (ioattr_booted && whole)
		seq_printf(m, "writeback_bytes: %llu\n",
			   (u64)atomic64_read(&task->signal->ioattr_wb_bytes));
}
