// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp_replay.bpf.c - the benchmark's harness for programs that rewrite the
 * frame they judge. BPF_PROG_TEST_RUN with a repeat count runs the program
 * again and again on one buffer that it never re-initialises, so a SYN
 * answered with a SYN-ACK in place would be a SYN-ACK from the second run
 * on. This program writes the original frame back (bytes and length) before
 * every run, optionally clears one map entry the judged program keeps per
 * flow, then tail-calls the program under test (replay_target[0]). Its own
 * cost is measured the same way in front of a trivial XDP_DROP.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define REPLAY_MAX 256 /* bytes of a replayed frame */
#define REPLAY_NO_SCRUB 0xffffffffU

struct replay_frame {
	__u32 len;        /* bytes in data, 14..REPLAY_MAX */
	__u32 scrub_slot; /* entry of replay_scrub cleared before each run */
	__u8 data[REPLAY_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct replay_frame);
} replay_frame SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} replay_target SEC(".maps");

/* Replaced before load by a map of the program under test (any ARRAY whose
 * value starts with a 32-bit word that 0 marks empty), or left unused. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} replay_scrub SEC(".maps");

SEC("xdp")
int xdp_replay(struct xdp_md *ctx)
{
	__u32 zero = 0, len, slot, *word;
	struct replay_frame *f = bpf_map_lookup_elem(&replay_frame, &zero);
	long cur;

	if (!f)
		return XDP_ABORTED;
	len = f->len;
	if (len < 14 || len > REPLAY_MAX)
		return XDP_ABORTED;
	cur = (long)ctx->data_end - (long)ctx->data;
	if (cur != (long)len && bpf_xdp_adjust_tail(ctx, (int)len - (int)cur))
		return XDP_ABORTED;
	if (bpf_xdp_store_bytes(ctx, 0, f->data, len))
		return XDP_ABORTED;
	slot = f->scrub_slot;
	if (slot != REPLAY_NO_SCRUB) {
		word = bpf_map_lookup_elem(&replay_scrub, &slot);
		if (word)
			*word = 0;
	}
	bpf_tail_call(ctx, &replay_target, 0);
	return XDP_ABORTED;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
