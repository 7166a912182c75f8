/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-node view and reclaim of the VFS caches: the dentry and inode LRUs
 * and the page cache of one NUMA node (/sys/devices/system/node/nodeN/
 * vfs_cache and drop_caches, and the vfs_* lines of nodeN/vmstat).
 */
#ifndef _LINUX_NODE_CACHES_H
#define _LINUX_NODE_CACHES_H

#include <linux/types.h>

struct address_space;

enum node_cache_event {
	NODE_VFS_DENTRY_SCANNED,
	NODE_VFS_DENTRY_FREED,
	NODE_VFS_INODE_SCANNED,
	NODE_VFS_INODE_FREED,
	NR_NODE_CACHE_EVENTS
};

#ifdef CONFIG_NUMA
void node_cache_count(int nid, enum node_cache_event item, long nr);
int node_cache_vmstat_show(int nid, char *buf, int len);
int node_vfs_cache_show(int nid, char *buf);
int node_drop_caches(int nid, int what);

int drop_slab_node_only(int nid);
unsigned long invalidate_mapping_node(struct address_space *mapping, int nid);
#else
static inline void node_cache_count(int nid, enum node_cache_event item,
				    long nr)
{
}

static inline unsigned long invalidate_mapping_node(struct address_space *mapping,
						    int nid)
{
	return 0;
}
#endif

#endif /* _LINUX_NODE_CACHES_H */
