/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* configure.h - what the XDP program of a loader is told: ports, prefixes,
 * settings, the namespace's broadcast addresses, the tunnels that end here.
 */
#ifndef SHEDD_CONFIGURE_H
#define SHEDD_CONFIGURE_H

#include "handle.h"
#include "options.h"

/* Write settings, ports and prefixes. New entries go in before stale ones
 * are deleted, so an adopted program never sees a half-written set. With
 * verified admission, first the sysctls its hand-off needs (probe.h). */
int loader_configure(struct loader *l, const struct shedd_options *o);

/* Read again what the namespace may change while shedd runs (the sysctls
 * behind the SYN-ACK's options, the IPv4 broadcast addresses) and rewrite
 * settings if it changed, saying so. Only the daemon's thread writes
 * settings. 0 or a negative errno, with a message. */
int loader_refresh_host(struct loader *l);

struct tun_found;
/* The tunnels that end here (tunnels.h): the local addresses into tun_local
 * (new ones first, then the stale ones deleted), the devices into tun_devs,
 * then the kinds, UDP ports and what is matched into tun_config, then the
 * stale devices deleted. 0 or a negative errno, said on stderr. */
int loader_write_tunnels(struct loader *l, const struct tun_found *f);

#endif /* SHEDD_CONFIGURE_H */
