// SPDX-License-Identifier: GPL-2.0
/*
 * The VFS caches of one NUMA node: their counts (nodeN/vfs_cache), their
 * reclaim counters (the vfs_* lines of nodeN/vmstat), and drop_caches for
 * one node (nodeN/drop_caches). See
 * Documentation/admin-guide/mm/node-caches.rst.
 */

#include <linux/fs.h>
#include <linux/list_lru.h>
#include <linux/mm.h>
#include <linux/node_caches.h>
#include <linux/nodemask.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/swap.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>
#include "internal.h"

/*
 * Per-CPU counts of the VFS reclaim events, nr_node_ids *
 * NR_NODE_CACHE_EVENTS of them on each CPU: counting takes no shared
 * cache line. Published once allocated; counting before that is lost.
 */
static unsigned long __percpu *node_cache_events;

static const char * const node_cache_event_names[NR_NODE_CACHE_EVENTS] = {
	[NODE_VFS_DENTRY_SCANNED]	= "vfs_dentry_scanned",
	[NODE_VFS_DENTRY_FREED]		= "vfs_dentry_freed",
	[NODE_VFS_INODE_SCANNED]	= "vfs_inode_scanned",
	[NODE_VFS_INODE_FREED]		= "vfs_inode_freed",
};

static int __init node_cache_events_init(void)
{
	unsigned long __percpu *ev;

	ev = __alloc_percpu(nr_node_ids * NR_NODE_CACHE_EVENTS *
			    sizeof(unsigned long), sizeof(unsigned long));
	if (!ev) {
		pr_warn("node_caches: no memory for the per-node VFS counters\n");
		return -ENOMEM;
	}
	/* pairs with the acquires below: the zeroed counters come first */
	smp_store_release(&node_cache_events, ev);
	return 0;
}
core_initcall(node_cache_events_init);

/* Count @nr events of @item on node @nid: dentry and inode LRU reclaim */
void node_cache_count(int nid, enum node_cache_event item, long nr)
{
	/* pairs with node_cache_events_init()'s release */
	unsigned long __percpu *ev = smp_load_acquire(&node_cache_events);

	if (nr > 0 && ev && nid >= 0 && nid < nr_node_ids)
		this_cpu_add(ev[nid * NR_NODE_CACHE_EVENTS + item], nr);
}

/* Append node @nid's VFS reclaim counters to nodeN/vmstat at @len */
int node_cache_vmstat_show(int nid, char *buf, int len)
{
	/* pairs with node_cache_events_init()'s release */
	unsigned long __percpu *ev = smp_load_acquire(&node_cache_events);
	unsigned long sum;
	int i, cpu;

	for (i = 0; i < NR_NODE_CACHE_EVENTS; i++) {
		sum = 0;
		if (ev)
			for_each_possible_cpu(cpu)
				sum += *per_cpu_ptr(ev + nid * NR_NODE_CACHE_EVENTS + i,
						    cpu);
		len += sysfs_emit_at(buf, len, "%s %lu\n",
				     node_cache_event_names[i], sum);
	}
	return len;
}

struct vfs_cache_count {
	int nid;
	unsigned long dentries;
	unsigned long inodes;
};

static void vfs_cache_count_sb(struct super_block *sb, void *arg)
{
	struct vfs_cache_count *c = arg;

	c->dentries += list_lru_count_node(&sb->s_dentry_lru, c->nid);
	c->inodes += list_lru_count_node(&sb->s_inode_lru, c->nid);
}

/*
 * nodeN/vfs_cache: the unused dentries and inodes on node @nid, that is
 * those on the superblocks' LRUs, from the LRUs' per-node counts. Any
 * user may read it, so it never waits: a superblock whose s_umount is
 * taken (being mounted, unmounted or remounted) is left out of the sum.
 */
int node_vfs_cache_show(int nid, char *buf)
{
	struct vfs_cache_count c = { .nid = nid };
	int len = 0;

	iterate_supers_trylock(vfs_cache_count_sb, &c);
	len += sysfs_emit_at(buf, len, "nr_dentry_unused %lu\n", c.dentries);
	len += sysfs_emit_at(buf, len, "nr_inode_unused %lu\n", c.inodes);
	return len;
}

/* A per-node page-cache drop: the node, and whether a fatal signal stopped it */
struct drop_node {
	int nid;
	bool stopped;
};

/*
 * Drop the clean page cache on dn->nid of every inode of @sb: the walk of
 * drop_caches' drop_pagecache_sb(), with invalidate_mapping_node() for
 * invalidate_mapping_pages(), stopping at a fatal signal.
 */
static void drop_pagecache_sb_node(struct super_block *sb, void *arg)
{
	struct inode *inode, *toput_inode = NULL;
	struct drop_node *dn = arg;

	if (dn->stopped)
		return;

	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		spin_lock(&inode->i_lock);
		/*
		 * We must skip inodes in unusual state. We may also skip
		 * inodes without pages but we deliberately won't in case
		 * we need to reschedule to avoid softlockups.
		 */
		if ((inode->i_state & (I_FREEING | I_WILL_FREE | I_NEW)) ||
		    (mapping_empty(inode->i_mapping) && !need_resched())) {
			spin_unlock(&inode->i_lock);
			continue;
		}
		__iget(inode);
		spin_unlock(&inode->i_lock);
		spin_unlock(&sb->s_inode_list_lock);

		invalidate_mapping_node(inode->i_mapping, dn->nid);
		iput(toput_inode);
		toput_inode = inode;

		cond_resched();
		spin_lock(&sb->s_inode_list_lock);
		if (fatal_signal_pending(current)) {
			dn->stopped = true;
			break;
		}
	}
	spin_unlock(&sb->s_inode_list_lock);
	iput(toput_inode);
}

/**
 * node_drop_caches - drop_caches for one node
 * @nid: the node
 * @what: 1 for clean page cache, 2 for reclaimable slab, 3 for both
 *
 * Page cache: clean, unmapped, unlocked folios on @nid of every inode of
 * every superblock. Slab: what the NUMA-aware shrinkers (dentries, inodes,
 * and any other) hold on @nid. Other nodes' caches are left alone. The
 * caller has checked CAP_SYS_ADMIN.
 *
 * Return: 0, -EINVAL for a bad @what, -ENODEV for a node without memory
 * or -EINTR if a fatal signal stopped it.
 */
int node_drop_caches(int nid, int what)
{
	struct drop_node dn = { .nid = nid };

	if (what < 1 || what > 3)
		return -EINVAL;
	if (nid < 0 || nid >= nr_node_ids || !node_state(nid, N_MEMORY))
		return -ENODEV;
	pr_info_ratelimited("%s (%d): node %d drop_caches: %d\n",
			    current->comm, task_pid_nr(current), nid, what);
	if (what & 1) {
		lru_add_drain_all();
		iterate_supers(drop_pagecache_sb_node, &dn);
		if (dn.stopped || fatal_signal_pending(current))
			return -EINTR;
		count_vm_event(DROP_PAGECACHE);
	}
	if (what & 2) {
		if (drop_slab_node_only(nid))
			return -EINTR;
		count_vm_event(DROP_SLAB);
	}
	return 0;
}
