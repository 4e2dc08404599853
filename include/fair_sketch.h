/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fair_sketch.h - the count-min sketch of per-source admissions (see
 * fair_sketch in shedd.h), compiled by the XDP program and by the daemon
 * and the tests, so all three read a cell the same way.
 *
 * A cell counts the admissions of the window it is in and keeps the count
 * of the window before; its estimate at @now is the sliding-window count
 *   cur + prev * (1 - f),  f = how far @now is into its window,
 * the count of the last 2^FAIR_WINDOW_SHIFT ns if admissions were even
 * within the previous window. A cell not touched for two windows reads 0,
 * so nothing needs clearing. A source's estimate is the least over its
 * FAIR_ROWS cells.
 *
 * Counting is a conservative update (Estan and Varghese, 2002) of the
 * current window's counts: an admission raises only the source's cells
 * whose count of the window is the least of its cells', the others
 * already count at least as much of it. So each cell's count of a window
 * is at least the count of every source it holds in that window, its
 * count of the window before too, and a source's estimate is never below
 * its true count, also across the turn of a window (save increments lost
 * to a race of two CPUs on the same cells: turning a window, or counting
 * the same source at the same instant, a few per window). Above the true
 * count it is by at most what plain count-min would add (e/FAIR_COLS of
 * the level's total with probability 1 - e^-FAIR_ROWS, Cormode and
 * Muthukrishnan, 2005), and in a crowd of light sources by about the
 * total over FAIR_ROWS * FAIR_COLS: each admission raises one cell of its
 * FAIR_ROWS, the least loaded, so the crowd spreads evenly over every row
 * (balanced allocations, the least of two choices) instead of adding its
 * whole total to each row.
 *
 * A source's cells come from a SipHash-1-3 of its prefix under the flow
 * key (flow_hash.h): without the key a sender cannot choose addresses that
 * share a light client's cells and make it look heavy.
 */
#ifndef SHEDD_FAIR_SKETCH_H
#define SHEDD_FAIR_SKETCH_H

#include "shedd.h"
#include "flow_hash.h"

#define FAIR_WINDOW_NS (1ULL << FAIR_WINDOW_SHIFT)
/* A mask of the first bytes of an address word, as the word is read. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FAIR_BE32(x) __builtin_bswap32(x)
#else
#define FAIR_BE32(x) (x)
#endif
#define FAIR_WINDOW_MASK (FAIR_WINDOW_NS - 1)

#ifdef __bpf__
#define FAIR_ADD(p, v) __sync_fetch_and_add((p), (v))
#else
#define FAIR_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#endif

/* The index of cell @col of row @row of class @cls at @level. */
static inline __attribute__((always_inline)) __u32 fair_cell_index(__u32 cls, __u32 level,
								    __u32 row, __u32 col)
{
	return ((cls * FAIR_LEVELS + level) * FAIR_ROWS + row) * FAIR_COLS + (col & (FAIR_COLS - 1));
}

/* The column of row @row for the hash @h: rows take disjoint bits. */
static inline __attribute__((always_inline)) __u32 fair_col(__u64 h, __u32 row)
{
	return (__u32)(h >> (row * 32)) & (FAIR_COLS - 1);
}

/* The heavy-hitter slot of the hash @h (of FAIR_HEAVY_SLOTS). */
static inline __attribute__((always_inline)) __u32 fair_slot(__u64 h)
{
	return (__u32)(h >> 16) % FAIR_HEAVY_SLOTS;
}

/* The estimate of @c at @now: admissions in the last window. */
static inline __attribute__((always_inline)) __u32 fair_cell_estimate(const struct shedd_fair_cell *c,
								       __u64 now)
{
	__u32 epoch = (__u32)(now >> FAIR_WINDOW_SHIFT);
	__u64 rest = FAIR_WINDOW_NS - (now & FAIR_WINDOW_MASK); /* 1 .. 2^S */
	__u32 ce = c->epoch;

	if (ce == epoch)
		return c->cur + (__u32)(((__u64)c->prev * rest) >> FAIR_WINDOW_SHIFT);
	if (ce == epoch - 1)
		return (__u32)(((__u64)c->cur * rest) >> FAIR_WINDOW_SHIFT);
	return 0;
}

/* Does @c hold a source at @now: is its estimate, unrounded, at least
 * one half? A source seen once is then held for a window on average (the
 * rest of its own window and half the next), as the sliding count has
 * it; read as the rounded estimate, it would drop out as the window turns,
 * and steady sources seen once a window would count as half as many. */
static inline __attribute__((always_inline)) int fair_cell_present(const struct shedd_fair_cell *c,
								    __u64 now)
{
	__u32 epoch = (__u32)(now >> FAIR_WINDOW_SHIFT);
	__u64 rest = FAIR_WINDOW_NS - (now & FAIR_WINDOW_MASK);

	if (c->epoch == epoch)
		return c->cur > 0 || 2 * (__u64)c->prev * rest >= FAIR_WINDOW_NS;
	if (c->epoch == epoch - 1)
		return 2 * (__u64)c->cur * rest >= FAIR_WINDOW_NS;
	return 0;
}

/* Turn @c to the window of @now if it is of an older one; return its
 * count of the window of @now. Two CPUs may turn the window of the same
 * cell at once: the loser's few increments of that instant are lost,
 * never invented. */
static inline __attribute__((always_inline)) __u32 fair_cell_turn(struct shedd_fair_cell *c,
								   __u64 now)
{
	__u32 epoch = (__u32)(now >> FAIR_WINDOW_SHIFT);
	__u32 ce = c->epoch;

	if (ce != epoch) {
		c->prev = ce == epoch - 1 ? c->cur : 0;
		c->cur = 0;
		c->epoch = epoch;
	}
	return c->cur;
}

/* Count one admission into the cells @c, one a row, of a source at @now:
 * the conservative update, every row read before one is written, and only
 * the cells whose count of the window is the least of them raised. */
static inline __attribute__((always_inline)) void fair_cells_raise(struct shedd_fair_cell **c,
								    __u64 now)
{
	__u32 r, least = ~0U, cur[FAIR_ROWS];

#ifdef __clang__
#pragma unroll
#endif
	for (r = 0; r < FAIR_ROWS; r++) {
		cur[r] = fair_cell_turn(c[r], now);
		if (cur[r] < least)
			least = cur[r];
	}
#ifdef __clang__
#pragma unroll
#endif
	for (r = 0; r < FAIR_ROWS; r++)
		if (cur[r] == least)
			FAIR_ADD(&c[r]->cur, 1);
}

/* The levels of a source of @family (4 or 6) in the FAIR_* bits @levels,
 * as a mask of levels 0..2. */
static inline __attribute__((always_inline)) __u32 fair_level_mask(__u32 levels, int family)
{
	__u32 m = (levels & FAIR_ADDR) ? 1U : 0U;

	if (family == 4)
		return m | ((levels & FAIR_NET24) ? 2U : 0U);
	return m | ((levels & FAIR_NET64) ? 2U : 0U) | ((levels & FAIR_NET48) ? 4U : 0U);
}

/* The prefix length of @level for @family. */
static inline __attribute__((always_inline)) __u32 fair_prefixlen(int family, __u32 level)
{
	if (family == 4)
		return level == 0 ? 32 : 24;
	return level == 0 ? 128 : level == 1 ? 64 : 48;
}

/* The finaliser of MurmurHash3: a bijection of 64 bits that spreads each
 * input bit over the output. */
static inline __attribute__((always_inline)) __u64 fair_fmix(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/*
 * fair_hashes() - the 64-bit hashes of a source's prefixes at each level.
 * @init: the SipHash state of the flow key (flow_hash.h)
 * @a:    the source address's words as they lie in the packet (1 for
 *        IPv4, 4 for IPv6), read as host-order __u32
 * @h:    out: h[0] the address's, h[1] the /24's or the /64's, h[2] the
 *        /48's (IPv4: h[2] = h[1])
 * One SipHash per source, of its widest prefix (the IPv4 /24, the IPv6
 * /48) and a word naming the family; each narrower level is the one above
 * it mixed with the bits it adds, through a bijection (an odd multiplier,
 * then fair_fmix()): two prefixes that differ in those bits never share a
 * hash, and without the key the hash of no prefix can be known, so a
 * sender cannot choose addresses that fall in a light client's cells.
 */
static inline __attribute__((always_inline)) void fair_hashes(const struct sip_state *init,
							      const __u32 *a, int family,
							      __u64 *h)
{
	struct sip_state s = *init;
	__u64 tag = (__u64)0x66616972ULL << 32 | (__u32)family;

	if (family == 4) {
		sip_word(&s, a[0] & FAIR_BE32(0xffffff00U), 1);
		sip_word(&s, tag, 1);
		h[1] = h[2] = sip_final(&s, 3);
		h[0] = fair_fmix(h[1] ^ (((__u64)(FAIR_BE32(a[0]) & 0xff) + 1) *
					 0x9e3779b97f4a7c15ULL));
		return;
	}
	sip_word(&s, a[0] | (__u64)(a[1] & FAIR_BE32(0xffff0000U)) << 32, 1);
	sip_word(&s, tag, 1);
	h[2] = sip_final(&s, 3);
	h[1] = fair_fmix(h[2] ^ (((__u64)(FAIR_BE32(a[1]) & 0xffff) + 1) * 0x9e3779b97f4a7c15ULL));
	FLOW_HASH_BARRIER(a);
	h[0] = fair_fmix(h[1] ^ ((a[2] | (__u64)a[3] << 32) * 0xd6e8feb86659fd93ULL));
}

#ifndef __bpf__
/* The hash of one level (userspace: the daemon's readers, the tests). */
static inline __u64 fair_hash(const struct sip_state *init, const __u32 *a, int family,
			      __u32 level)
{
	__u64 h[FAIR_LEVELS];

	fair_hashes(init, a, family, h);
	return h[level < FAIR_LEVELS ? level : 0];
}
#endif

/* The least estimate over the rows of the source of hash @h at @level of
 * class @cls, in the sketch @cells (userspace: the whole map; the BPF
 * program looks each cell up instead). */
#ifndef __bpf__
static inline __u32 fair_estimate(const struct shedd_fair_cell *cells, __u32 cls, __u32 level,
				  __u64 h, __u64 now)
{
	__u32 r, best = ~0U;

	for (r = 0; r < FAIR_ROWS; r++) {
		__u32 e = fair_cell_estimate(&cells[fair_cell_index(cls, level, r, fair_col(h, r))], now);

		if (e < best)
			best = e;
	}
	return best;
}

/* Count one admission of the source of hash @h; return its estimate
 * before. */
static inline __u32 fair_count(struct shedd_fair_cell *cells, __u32 cls, __u32 level, __u64 h,
			       __u64 now)
{
	struct shedd_fair_cell *c[FAIR_ROWS];
	__u32 est = fair_estimate(cells, cls, level, h, now), r;

	for (r = 0; r < FAIR_ROWS; r++)
		c[r] = &cells[fair_cell_index(cls, level, r, fair_col(h, r))];
	fair_cells_raise(c, now);
	return est;
}
#endif

#endif /* SHEDD_FAIR_SKETCH_H */
