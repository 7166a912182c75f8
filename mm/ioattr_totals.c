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
#include <linux/slab.h>
#include <linux/xarray.h>

/*
 * A process's count, kept here rather than in signal_struct (whose header
 * four objects in five include): by tgid (in the initial pid namespace),
 * with the stamp of the process that owns it, from its first written-back
 * byte until release_task() of its leader. None outlives its process, see
 * ioattr_proc_add().
 */
struct ioattr_proc {
	u32 stamp;
	atomic64_t bytes;
	struct rcu_head rcu;
};

static DEFINE_XARRAY(ioattr_procs);

static u32 ioattr_tag_stamp(const struct ioattr_tag *tag)
{
	return tag->flags & ~(BIT(IOATTR_TAG_STAMP_SHIFT) - 1);
}

/* Take @e out of the table if it is still in. */
static void ioattr_proc_del(unsigned long tgid, struct ioattr_proc *e)
{
	if (xa_cmpxchg(&ioattr_procs, tgid, e, NULL, 0) == e)
		kfree_rcu(e, rcu);
}

/*
 * Add @bytes to the count of the process @key (tgid and stamp) names, if it
 * still exists. @gfp is for a new entry and the table's nodes, never
 * allocated with the lock dropped. An entry put in is checked against the
 * process once more after a full barrier, as __ioattr_release() looks for
 * it after the pid is unhashed and a barrier: one of the two sees the
 * other and takes it out.
 */
static void ioattr_proc_add(const struct ioattr_tag *key, u64 bytes, gfp_t gfp)
{
	u32 stamp = ioattr_tag_stamp(key);
	struct ioattr_proc *e, *old;
	bool alive, in = false;

	rcu_read_lock();
	e = xa_load(&ioattr_procs, key->tgid);
	if (e && e->stamp == stamp) {
		atomic64_add(bytes, &e->bytes);
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();

	e = kzalloc(sizeof(*e), gfp);
	if (!e)
		return;
	e->stamp = stamp;
	atomic64_set(&e->bytes, bytes);
	xa_lock(&ioattr_procs);
	rcu_read_lock();
	alive = ioattr_process(key);
	rcu_read_unlock();
	old = xa_load(&ioattr_procs, key->tgid);
	if (alive && old && old->stamp == stamp) {
		/* another charge put it in meanwhile */
		atomic64_add(bytes, &old->bytes);
		old = NULL;
	} else if (alive) {
		/*
		 * Any entry here is of an earlier process with this pid, which
		 * __ioattr_release() would have taken out: not expected.
		 */
		old = __xa_store(&ioattr_procs, key->tgid, e,
				 gfp & ~__GFP_DIRECT_RECLAIM);
		in = !xa_is_err(old);
		if (!in)
			old = NULL;
	} else {
		old = NULL;
	}
	xa_unlock(&ioattr_procs);
	if (!in) {
		kfree(e);
		return;
	}
	if (old)
		kfree_rcu(old, rcu);
	smp_mb();	/* the entry in before the process is looked up again */
	rcu_read_lock();
	alive = ioattr_process(key);
	rcu_read_unlock();
	if (!alive)
		ioattr_proc_del(key->tgid, e);
}

/* @bytes of @bio's pages tagged @tag are written back: count them. */
static void ioattr_charge(struct bio *bio, const struct ioattr_tag *tag,
			  u64 bytes)
{
	/*
	 * Not from interrupts: finding a cgroup by its id may drop the last
	 * reference to a kernfs node, which takes a lock that is not IRQ-safe,
	 * and the table of processes is locked without disabling them.
	 * Reclaim does not allocate from reserves for statistics.
	 */
	if (!in_task() || irqs_disabled())
		return;
	ioattr_proc_add(tag, bytes, GFP_NOWAIT | __GFP_NOWARN | __GFP_NOMEMALLOC);
	if (tag->cgroup)
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

/* The key of @t's process: its tgid and stamp. */
static void ioattr_key(struct task_struct *t, struct ioattr_tag *key)
{
	memset(key, 0, sizeof(*key));
	key->tgid = t->tgid;
	key->flags = ioattr_stamp(t->group_leader);
}

/* The count of @t's process. */
static u64 ioattr_proc_bytes(struct task_struct *t)
{
	struct ioattr_proc *e;
	struct ioattr_tag key;
	u64 bytes = 0;

	ioattr_key(t, &key);
	rcu_read_lock();
	e = xa_load(&ioattr_procs, key.tgid);
	if (e && e->stamp == ioattr_tag_stamp(&key))
		bytes = atomic64_read(&e->bytes);
	rcu_read_unlock();
	return bytes;
}

/*
 * wait_task_zombie(): @parent reaps @child, whose count becomes its, as
 * the other counters of /proc/PID/io do. Bytes that the child is charged
 * between this and its release are lost.
 */
void __ioattr_reap(struct task_struct *parent, struct task_struct *child)
{
	u64 bytes = ioattr_proc_bytes(child);
	struct ioattr_tag key;

	if (!bytes)
		return;
	ioattr_key(parent, &key);
	ioattr_proc_add(&key, bytes, GFP_KERNEL);
}

/*
 * release_task(): a process's leader is released, its count goes. Its pid
 * is unhashed by now; after a barrier, an entry that a charge puts in
 * concurrently is either seen here or sees the pid gone itself.
 */
void __ioattr_release(struct task_struct *p)
{
	struct ioattr_proc *e;

	if (!thread_group_leader(p))
		return;
	smp_mb();	/* the pid unhashed before the table is looked at */
	e = xa_load(&ioattr_procs, p->tgid);
	if (e && e->stamp == ioattr_stamp(p))
		ioattr_proc_del(p->tgid, e);
}

/*
 * /proc/PID/io, not task/TID/io: a tag names the process, not the thread,
 * so there is no per-thread count to show there.
 */
void ioattr_show_io(struct task_struct *task, struct seq_file *m, int whole)
{
	if (ioattr_booted && whole)
		seq_printf(m, "writeback_bytes: %llu\n", ioattr_proc_bytes(task));
}
