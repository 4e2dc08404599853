// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* settings.c - the settings record switched whole (settings.h). */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "settings.h"

void settings_wait_readers(void)
{
	int inner, outer = -1;
	__u32 zero = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32), sizeof(__u32), 1, NULL);
	if (inner >= 0) {
		LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = inner);

		outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, sizeof(__u32),
				       sizeof(__u32), 1, &opts);
	}
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY)) {
		/* A program run lasts microseconds: 10 ms is plenty. */
		usleep(10000);
	}
	if (outer >= 0)
		close(outer);
	if (inner >= 0)
		close(inner);
}

/* settings_cur whole: the entry in use and the flags beside it. */
static __u32 cur_word(int cur_fd)
{
	__u32 zero = 0, cur = 0;

	/* A map never written reads 0: the first entry, no flag. */
	if (bpf_map_lookup_elem(cur_fd, &zero, &cur))
		cur = 0;
	return cur;
}

static __u32 slot_in_use(int cur_fd)
{
	return cur_word(cur_fd) & SHEDD_CUR_SLOT;
}

int settings_read(int slots_fd, int cur_fd, struct shedd_config *cfg)
{
	__u32 slot = slot_in_use(cur_fd);

	if (bpf_map_lookup_elem(slots_fd, &slot, cfg))
		return -errno;
	return 0;
}

int settings_publish(int slots_fd, int cur_fd, const struct shedd_config *cfg)
{
	__u32 zero = 0, word = cur_word(cur_fd), next = (word & SHEDD_CUR_SLOT) ^ 1;
	__u32 cur = (word & ~SHEDD_CUR_SLOT) | next; /* the flags kept */

	settings_wait_readers();
	if (bpf_map_update_elem(slots_fd, &next, cfg, BPF_ANY) ||
	    bpf_map_update_elem(cur_fd, &zero, &cur, BPF_ANY))
		return -errno;
	return 0;
}

__u32 settings_flags(int cur_fd)
{
	return cur_word(cur_fd) & ~SHEDD_CUR_SLOT;
}

int settings_set_flags(int cur_fd, __u32 flags)
{
	__u32 zero = 0, cur = slot_in_use(cur_fd) | (flags & ~SHEDD_CUR_SLOT);

	if (bpf_map_update_elem(cur_fd, &zero, &cur, BPF_ANY))
		return -errno;
	return 0;
}
