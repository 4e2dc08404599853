// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* carry.bpf.c - adds the counters an upgrade carries over from the stats map
 * of the program it replaced into the new one, while the new program counts
 * into it. Run once with BPF_PROG_TEST_RUN (user/maps/migrate.c): each word is
 * added with an atomic instruction, so an XDP program that interrupts it on
 * this CPU, or runs on another, loses no count of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "shedd.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CARRY_WORDS (sizeof(struct shedd_stats) / sizeof(__u64))

/* The new program's stats map (the loader hands this object its fd). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_stats);
} stats SEC(".maps");

/* What to add, word by word, in today's layout: written by userspace. */
__u64 carry[CARRY_WORDS];

SEC("raw_tp")
int shedd_carry(void *ctx)
{
	__u32 zero = 0, i;
	__u64 *v = bpf_map_lookup_elem(&stats, &zero);

	if (!v)
		return 1;
	for (i = 0; i < CARRY_WORDS; i++)
		__sync_fetch_and_add(&v[i], carry[i]);
	return 0;
}
