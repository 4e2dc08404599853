// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* port_maps.c - the port limits in the maps (port_maps.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloc.h"
#include "port_maps.h"
#include "settings.h"
#include "shedd.skel.h"

/* How long a CPU keeps tokens it borrowed from a port's reserve: a port
 * limit is low, and tokens cached elsewhere are tokens lost to it. */
#define PORT_LIMIT_LEASE_NS ALLOC_MAX_LEASE_NS

int port_maps_add(struct loader *l, const struct port_limit_entry *e, __u64 now_ns)
{
	struct shedd_reserve empty = { 0 };
	struct shedd_port_limit v;
	__u32 slot = e->slot;

	if (slot >= MAX_PORT_LIMITS)
		return -EINVAL;
	port_limit_record(e, PORT_LIMIT_LEASE_NS, now_ns, &v);
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.port_reserve), &slot, &empty,
				BPF_F_LOCK) ||
	    bpf_map_update_elem(bpf_map__fd(l->skel->maps.port_limit), &e->port, &v, BPF_ANY))
		return -errno;
	return 0;
}

int port_maps_set(struct loader *l, const struct port_limit_entry *e, __u64 now_ns)
{
	int fd = bpf_map__fd(l->skel->maps.port_limit);
	struct shedd_port_limit cur = { 0 }, next;
	struct shedd_reserve res = { 0 };
	__u32 slot = e->slot;

	port_limit_record(e, PORT_LIMIT_LEASE_NS, now_ns, &next);
	if (bpf_map_lookup_elem_flags(fd, &e->port, &cur, BPF_F_LOCK))
		return port_maps_add(l, e, now_ns); /* gone: made again */
	if (bpf_map_lookup_elem_flags(bpf_map__fd(l->skel->maps.port_reserve), &slot, &res,
				      BPF_F_LOCK))
		return -errno;
	alloc_publish(&cur.r, &next.r, res.s.last_ns, now_ns);
	if (bpf_map_update_elem(fd, &e->port, &cur, BPF_F_LOCK))
		return -errno;
	return 0;
}

int port_maps_del(struct loader *l, __u16 port)
{
	if (bpf_map_delete_elem(bpf_map__fd(l->skel->maps.port_limit), &port) && errno != ENOENT)
		return -errno;
	return 0;
}

int port_maps_clear(struct loader *l)
{
	int fd = bpf_map__fd(l->skel->maps.port_limit), err;
	__u16 key;

	if ((err = port_maps_flag(l, false)))
		return err;
	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			return -errno;
	return 0;
}

int port_maps_flag(struct loader *l, bool on)
{
	int fd = bpf_map__fd(l->skel->maps.settings_cur);
	__u32 flags = settings_flags(fd);

	flags = on ? flags | SHEDD_CUR_PORT_LIMITS : flags & ~SHEDD_CUR_PORT_LIMITS;
	return settings_set_flags(fd, flags);
}

int port_maps_read(struct loader *l, struct shedd_port_bucket sum[MAX_PORT_LIMITS])
{
	struct shedd_port_bucket *v = calloc((size_t)l->ncpus, sizeof(*v));
	int fd = bpf_map__fd(l->skel->maps.port_buckets), c, ret = 0;
	__u32 slot;

	if (!v)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum) * MAX_PORT_LIMITS);
	for (slot = 0; slot < MAX_PORT_LIMITS; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, v)) {
			ret = -errno;
			break;
		}
		for (c = 0; c < l->ncpus; c++) {
			sum[slot].syn += v[c].syn;
			sum[slot].admitted += v[c].admitted;
			sum[slot].shed += v[c].shed;
		}
	}
	free(v);
	return ret;
}
