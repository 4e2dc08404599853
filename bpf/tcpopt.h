/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tcpopt.h - the TCP options of a SYN or of the ACK that ends a cookie
 * handshake, walked on a copy of the header with bpf_loop() (kernel 5.17),
 * which the verifier checks once rather than once per option.
 */
#ifndef SHEDD_TCPOPT_H
#define SHEDD_TCPOPT_H

#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WINDOW 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_TIMESTAMP 8
#define TCPOPT_MD5SIG 19 /* RFC 2385 */
#define TCPOPT_AO 29     /* RFC 5925 */
#define TCP_MAX_WSCALE 14
#define TCP_MAX_HLEN 60

/* What the options offered. */
struct syn_opts {
	__u32 tsval;
	__u32 tsecr;
	__u8 ts;     /* a timestamp option */
	__u8 sack;   /* SACK permitted */
	__u8 ws;     /* window scaling offered */
	__u8 wscale; /* its shift, at most TCP_MAX_WSCALE */
	__u8 auth;   /* OPT_AUTH_*: the signatures it carries */
	__u8 _pad[3];
};

/* syn_opts.auth: a TCP-MD5 option, a TCP-AO option, of any length (the
 * kernel drops a segment whose auth option has a wrong one). */
#define OPT_AUTH_MD5 1
#define OPT_AUTH_AO 2

/* The walk: the TCP header copied to th (len bytes, 20..60) and the
 * offset of the next option. */
struct opt_walk {
	__u8 th[64];
	__u32 len;
	__u32 i;
	struct syn_opts o;
};

/* Byte @idx of the 64-byte copy @th. The barrier keeps the mask, which
 * the compiler would drop and the verifier needs. */
static __always_inline __u8 opt_byte(const __u8 *th, __u32 idx)
{
	asm volatile("" : "+r"(idx));
	return th[idx & 63];
}

static __always_inline __u32 opt_be32(const __u8 *th, __u32 i)
{
	return ((__u32)opt_byte(th, i) << 24) | ((__u32)opt_byte(th, i + 1) << 16) |
	       ((__u32)opt_byte(th, i + 2) << 8) | (__u32)opt_byte(th, i + 3);
}

/* One option per call. Malformed options end the walk with what was found
 * so far, as the kernel's tcp_parse_options() does.
 * Return: 0 to go on, 1 to stop. */
static long opt_step(__u64 n, void *ctx)
{
	struct opt_walk *w = ctx;
	__u32 i = w->i, len = w->len;
	__u8 kind, olen;

	if (i >= len || i >= TCP_MAX_HLEN)
		return 1;
	kind = opt_byte(w->th, i);
	if (kind == TCPOPT_EOL)
		return 1;
	if (kind == TCPOPT_NOP) {
		w->i = i + 1;
		return 0;
	}
	if (i + 1 >= len)
		return 1;
	olen = opt_byte(w->th, i + 1);
	if (olen < 2 || i + olen > len)
		return 1;
	if (kind == TCPOPT_WINDOW && olen == 3) {
		w->o.ws = 1;
		w->o.wscale = opt_byte(w->th, i + 2);
		if (w->o.wscale > TCP_MAX_WSCALE)
			w->o.wscale = TCP_MAX_WSCALE;
	} else if (kind == TCPOPT_SACK_PERM && olen == 2) {
		w->o.sack = 1;
	} else if (kind == TCPOPT_TIMESTAMP && olen == 10) {
		w->o.ts = 1;
		w->o.tsval = opt_be32(w->th, i + 2);
		w->o.tsecr = opt_be32(w->th, i + 6);
	} else if (kind == TCPOPT_MD5SIG) {
		w->o.auth |= OPT_AUTH_MD5;
	} else if (kind == TCPOPT_AO) {
		w->o.auth |= OPT_AUTH_AO;
	}
	w->i = i + olen;
	return 0;
}

/* The options of a Linux SYN, the commonest by far, read without a walk:
 * MSS, SACK_PERM, TS, NOP, WS (doff 10). Return: 1 if that was the
 * layout, 0 to walk. */
static __always_inline int opt_linux_syn(struct opt_walk *w)
{
	const __u8 *o = w->th + 20;

	if (w->len != 40 || o[0] != TCPOPT_MSS || o[1] != 4 || o[4] != TCPOPT_SACK_PERM ||
	    o[5] != 2 || o[6] != TCPOPT_TIMESTAMP || o[7] != 10 || o[16] != TCPOPT_NOP ||
	    o[17] != TCPOPT_WINDOW || o[18] != 3)
		return 0;
	w->o.sack = 1;
	w->o.ts = 1;
	w->o.tsval = opt_be32(w->th, 28);
	w->o.tsecr = opt_be32(w->th, 32);
	w->o.ws = 1;
	w->o.wscale = o[19] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : o[19];
	return 1;
}

/* Walk the options of the header in @w (th and len set). */
static __always_inline void opt_walk(struct opt_walk *w)
{
	w->i = 20;
	bpf_loop(TCP_MAX_HLEN - 20, opt_step, w, 0);
}

#endif /* SHEDD_TCPOPT_H */
