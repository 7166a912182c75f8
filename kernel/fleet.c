// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/fleet: what this kernel carries on top of its base source.
 *
 * Fleet is carried as a quilt series on a pinned base. Operators and test
 * suites need to know which base a running kernel was built from and which
 * patches it carries, with the upstream status of each, without access to the
 * build. Both are recorded at build time from the series (see
 * kernel/gen_fleet_series.sh) and exposed read-only:
 *
 *   base     the base source version, e.g. "6.12.118-1~deb12u1"
 *   patches  one line per applied patch, in series order:
 *            "<patch> <upstream status>"
 *
 * Documentation/ABI/testing/sysfs-kernel-fleet describes the format.
 */

#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "fleet_series.h"

static const char fleet_patches[] = FLEET_PATCHES;

static ssize_t base_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", FLEET_BASE);
}

static struct kobj_attribute base_attr = __ATTR_RO(base);

/* A binary attribute: the list may be longer than one page. */
static ssize_t patches_read(struct file *file, struct kobject *kobj,
			    struct bin_attribute *attr, char *buf,
			    loff_t off, size_t count)
{
	return memory_read_from_buffer(buf, count, &off, fleet_patches,
				       sizeof(fleet_patches) - 1);
}

static BIN_ATTR_RO(patches, sizeof(fleet_patches) - 1);

static struct attribute *fleet_attrs[] = {
	&base_attr.attr,
	NULL,
};

static struct bin_attribute *fleet_bin_attrs[] = {
	&bin_attr_patches,
	NULL,
};

static const struct attribute_group fleet_attr_group = {
	.attrs = fleet_attrs,
	.bin_attrs = fleet_bin_attrs,
};

static int __init fleet_info_init(void)
{
	struct kobject *kobj;
	int ret;

	kobj = kobject_create_and_add("fleet", kernel_kobj);
	if (!kobj)
		return -ENOMEM;

	ret = sysfs_create_group(kobj, &fleet_attr_group);
	if (ret) {
		pr_warn("fleet: cannot create /sys/kernel/fleet: %d\n", ret);
		kobject_put(kobj);
	}
	return ret;
}
late_initcall(fleet_info_init);
