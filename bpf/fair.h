/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fair.h - per-source fairness in the XDP program: count a source's
 * admissions, and while its class sheds, shed a source over its limit
 * before it takes a token (the maps and their meaning: shedd.h; the
 * arithmetic: fair_sketch.h; the limits: the daemon, user/core/fair.c).
 *
 * Work per SYN is constant: one SipHash (fair_hashes()) and FAIR_ROWS
 * cells per level the class counts, at most FAIR_LEVELS, each read before
 * any is raised (the conservative update). Memory is fixed: a spoofed
 * flood can raise counts, never add state. The inner SYN of a tunnel is
 * counted and judged as a direct one, by its inner source (tunnel.h:
 * @l2_len is then the inner IP header's offset).
 * Included by shedd.bpf.c after syncookie.h (lens_bound(), CK_*).
 */
#ifndef SHEDD_BPF_FAIR_H
#define SHEDD_BPF_FAIR_H

#include "fair_sketch.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FAIR_CELLS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct shedd_fair_cell);
} fair_cells SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_fair_class);
} fair_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS);
	__type(key, __u32);
	__type(value, struct shedd_fair_heavy);
} fair_heavy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS);
	__type(key, __u32);
	__type(value, struct shedd_fair_heavy_cpu);
} fair_heavy_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_fair_stats);
} fair_stats SEC(".maps");

/* shedd_fair()'s @how: the class, and what to do. */
#define FAIR_CHECK 0U          /* is the source over its limit? */
#define FAIR_COUNT (1U << 8)   /* count an admission of the source */

/* Does class @cls count its sources, and is it shedding (@active)? The
 * caller's cheap test before it calls shedd_fair(). */
static __always_inline struct shedd_fair_class *fair_of(__u32 cls)
{
	__u32 key = cls;
	struct shedd_fair_class *fc = bpf_map_lookup_elem(&fair_config, &key);

	return fc && fc->levels ? fc : NULL;
}

/* Is the source in @a (4 words, @family, @level) the prefix @pfx? */
static __always_inline int fair_same(const __u8 *a, __u8 family, __u8 level, int f, __u32 l,
				     const __u32 *pfx)
{
	const __u32 *w = (const __u32 *)a;

	return family == f && level == l && w[0] == pfx[0] && w[1] == pfx[1] &&
	       w[2] == pfx[2] && w[3] == pfx[3];
}

/* Remember the source (its prefix @pfx at @level) seen at @est over its
 * limit, in the slot of its hash @h: a slot another source holds is taken
 * over when that one is older than a window or lighter. The slot is
 * shared by every CPU: one this CPU finds holding the source is rewritten
 * (its estimate, the time, the sheds this CPU counted meanwhile in its
 * fair_heavy_cpu entry) only once FAIR_NOTE_NS passed since it was last
 * written, so a flood of one source does not move the slot's cache line
 * from CPU to CPU for every SYN it sheds. */
static __always_inline void fair_note(__u32 cls, __u32 level, int family, const __u32 *pfx,
				      __u32 est, __u64 h, __u64 now, int shed)
{
	__u32 key = cls * FAIR_HEAVY_SLOTS + fair_slot(h);
	struct shedd_fair_heavy *s = bpf_map_lookup_elem(&fair_heavy, &key);
	struct shedd_fair_heavy_cpu *p = bpf_map_lookup_elem(&fair_heavy_cpu, &key);
	int same;

	if (!s || !p)
		return;
	same = fair_same(s->addr, s->family, s->level, family, level, pfx);
	if (!fair_same(p->addr, p->family, p->level, family, level, pfx)) {
		/* Another source's count: into the slot while it holds it
		 * (two sources of one slot, on this CPU by turns). */
		if (p->shed && fair_same(s->addr, s->family, s->level, p->family, p->level,
					 (const __u32 *)p->addr))
			FAIR_ADD(&s->shed, p->shed);
		__builtin_memcpy(p->addr, pfx, 16);
		p->family = (__u8)family;
		p->level = (__u8)level;
		p->shed = 0;
	}
	if (shed)
		p->shed++;
	/* Signed: another CPU's stamp a moment ahead is recent too. */
	if (same && (__s64)(now - s->last_ns) < (__s64)FAIR_NOTE_NS)
		return;
	if (!same) {
		if (s->family && now - s->last_ns < FAIR_WINDOW_NS && s->estimate > est)
			return;
		__builtin_memcpy(s->addr, pfx, 16);
		s->family = (__u8)family;
		s->level = (__u8)level;
		s->prefixlen = (__u8)fair_prefixlen(family, level);
		s->shed = 0;
	}
	s->estimate = est;
	s->last_ns = now;
	if (p->shed) {
		FAIR_ADD(&s->shed, p->shed);
		p->shed = 0;
	}
}

/*
 * shedd_fair() - judge or count the source of the SYN or ACK in @ctx.
 * @l2_len, @l3_len, @flags: as for shedd_syncookie_reply() (CK_V6)
 * @how: its class | FAIR_CHECK or FAIR_COUNT
 *
 * FAIR_CHECK: is the source's estimate at some level the class counts at
 * or over that level's limit? Then it is noted as a heavy hitter and
 * counted as shed. FAIR_COUNT: count an admission at every level; one
 * counted over a limit is noted too.
 * A global function, so the verifier checks it once.
 * Return: 1 to shed (FAIR_CHECK, over), else 0.
 */
__noinline int shedd_fair(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags, __u64 how)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct sip_state init = { flow_sip[0], flow_sip[1], flow_sip[2], flow_sip[3] };
	__u32 cls = how & 0xff, count = (how & FAIR_COUNT) != 0, a[4] = {}, mask, l;
	struct shedd_fair_class *fc;
	struct shedd_fair_stats *st;
	int family, over = 0;
	__u64 now, hs[FAIR_LEVELS];

	if (cls >= SHEDD_NR_CLASSES)
		return 0;
	lens_bound_inner(&l2_len, &l3_len);
	fc = fair_of(cls);
	st = bpf_map_lookup_elem(&fair_stats, &cls);
	if (!fc || !st)
		return 0;
	if (flags & CK_V6) {
		struct ipv6hdr *ip6 = data + l2_len;

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		__builtin_memcpy(a, &ip6->saddr, 16);
		family = 6;
	} else {
		struct iphdr *ip = data + l2_len;

		if ((void *)(ip + 1) > data_end)
			return 0;
		a[0] = ip->saddr;
		family = 4;
	}
	mask = fair_level_mask(fc->levels, family);
	now = clock_coarse_ns();
	fair_hashes(&init, a, family, hs);
#pragma unroll
	for (l = 0; l < FAIR_LEVELS; l++) {
		__u32 pfx[4] = {}, est = ~0U, limit, r;
		struct shedd_fair_cell *c[FAIR_ROWS];
		__u64 h = hs[l];

		if (!(mask & (1U << l)))
			continue;
#pragma unroll
		for (r = 0; r < FAIR_ROWS; r++) {
			__u32 key = fair_cell_index(cls, l, r, fair_col(h, r)), e;

			c[r] = bpf_map_lookup_elem(&fair_cells, &key);
			if (!c[r])
				return 0; /* cannot be: fail open */
			e = fair_cell_estimate(c[r], now);
			if (e < est)
				est = e;
		}
		if (count)
			fair_cells_raise(c, now);
		limit = fc->limit[l];
		if (!limit || est < limit)
			continue;
		/* The prefix, as the slot keeps it. */
		pfx[0] = a[0];
		if (family == 4) {
			if (l)
				pfx[0] &= FAIR_BE32(0xffffff00U);
		} else {
			pfx[1] = l == 2 ? a[1] & FAIR_BE32(0xffff0000U) : a[1];
			if (l == 0) {
				pfx[2] = a[2];
				pfx[3] = a[3];
			}
		}
		fair_note(cls, l, family, pfx, est, h, now, !count);
		over = 1;
		if (!count)
			break;
	}
	if (count) {
		st->counted++;
		st->over += over;
		return 0;
	}
	st->checked++;
	st->shed += over;
	return over;
}

#endif /* SHEDD_BPF_FAIR_H */
