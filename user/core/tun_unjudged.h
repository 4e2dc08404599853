/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tun_unjudged.h - the decapsulating devices whose inner SYNs the XDP
 * program does not judge: the kernel opens (or decrypts) what reaches the
 * physical interface and hands the inner packet to the stack on the
 * device, after XDP has run, so shedd passes the outer packet unjudged as
 * it passes established traffic. The daemon names each device of these
 * kinds (rtnetlink IFLA_INFO_KIND) in a warning and counts them in
 * shedd_unjudged_tunnel_devices (docs/datapath.md, "Decapsulations shedd
 * does not open"). Pure: no I/O.
 */
#ifndef SHEDD_TUN_UNJUDGED_H
#define SHEDD_TUN_UNJUDGED_H

#include <string.h>

enum tun_unjudged {
	TUN_UJ_BAREUDP,   /* bareudp: IP or MPLS in UDP */
	TUN_UJ_ERSPAN,    /* erspan: ERSPAN (GRE) over IPv4 */
	TUN_UJ_IP6ERSPAN, /* ip6erspan: ERSPAN over IPv6 */
	TUN_UJ_L2TPETH,   /* l2tpeth: an L2TPv3 Ethernet pseudowire session */
	TUN_UJ_WIREGUARD, /* wireguard: decrypted */
	TUN_UJ_XFRM,      /* xfrm: an IPsec interface, decrypted */
	TUN_UJ_VTI,       /* vti: IPsec over IPv4, decrypted */
	TUN_UJ_VTI6,      /* vti6: IPsec over IPv6, decrypted */
	TUN_UJ_VXLAN_GPE, /* a vxlan device with gpe: no Ethernet inside */
	TUN_UJ_MPLS,      /* a device taking MPLS (net.mpls.conf.DEV.input) */
	TUN_UJ_NR,
};

/* The name of @k as the metric's label and the log say it (the
 * rtnetlink kind; "vxlan_gpe" for a VXLAN-GPE device, "mpls" for a
 * device MPLS is enabled on). */
static inline const char *tun_unjudged_name(unsigned int k)
{
	static const char *const names[TUN_UJ_NR] = {
		[TUN_UJ_BAREUDP] = "bareudp",     [TUN_UJ_ERSPAN] = "erspan",
		[TUN_UJ_IP6ERSPAN] = "ip6erspan", [TUN_UJ_L2TPETH] = "l2tpeth",
		[TUN_UJ_WIREGUARD] = "wireguard", [TUN_UJ_XFRM] = "xfrm",
		[TUN_UJ_VTI] = "vti",             [TUN_UJ_VTI6] = "vti6",
		[TUN_UJ_VXLAN_GPE] = "vxlan_gpe", [TUN_UJ_MPLS] = "mpls",
	};

	return k < TUN_UJ_NR ? names[k] : "?";
}

/* The enum tun_unjudged of rtnetlink kind @kind, or -1 for a kind the
 * program opens or that is no tunnel (a vxlan device is one only with
 * gpe: the caller tells; MPLS is a setting of any device). */
static inline int tun_unjudged_kind(const char *kind)
{
	unsigned int k;

	for (k = 0; k < TUN_UJ_VXLAN_GPE; k++)
		if (!strcmp(kind, tun_unjudged_name(k)))
			return (int)k;
	return -1;
}

#endif /* SHEDD_TUN_UNJUDGED_H */
