/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xdprouter.h - what the flood testbed's XDP router and its loader share:
 * the per-CPU counters of the rtr_stats map. */
#ifndef SHEDD_XDPROUTER_H
#define SHEDD_XDPROUTER_H

struct xdprouter_stats {
	__u64 to_srv;       /* client frames redirected to the server */
	__u64 to_cli;       /* server frames redirected to the clients */
	__u64 spoof_synack; /* SYN-ACKs to spoofed sources, dropped */
	__u64 spoof_rst;    /* RSTs to spoofed sources, dropped */
	__u64 spoof_other;  /* anything else to spoofed sources, dropped */
	__u64 passed;       /* left to the router's kernel (ARP, its own) */
};

#endif /* SHEDD_XDPROUTER_H */
