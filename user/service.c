// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* service.c - sd_notify through libsystemd, capabilities through
 * libcap-ng. Capabilities are per thread: service_drop_caps() changes the
 * calling thread; a helper thread started before it drops its own with
 * service_drop_thread_caps().
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cap-ng.h>
#include <linux/capability.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "service.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void service_init(struct service *s)
{
	uint64_t usec = 0;

	s->watchdog_ns = 0;
	s->last_watchdog_ns = 0;
	s->ready = false;
	/* > 0 only when WATCHDOG_USEC is set (and WATCHDOG_PID, if set, is
	 * ours); keep the variables: nothing we start needs them gone. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec)
		s->watchdog_ns = (__u64)usec * 1000ULL;
}

void service_ready(struct service *s, const char *status)
{
	if (s->ready)
		return;
	s->ready = true;
	s->last_watchdog_ns = monotonic_ns();
	sd_notifyf(0, "READY=1\nSTATUS=%s\nMAINPID=%lu", status, (unsigned long)getpid());
}

void service_status(const char *status)
{
	sd_notifyf(0, "STATUS=%s", status);
}

void service_tick(struct service *s, __u64 now_ns)
{
	if (!s->watchdog_ns || !s->ready)
		return;
	/* Ticks land a hair before or after the half interval; one that is
	 * within a tenth of it pings now rather than a whole tick late, so
	 * the pings keep the half interval's pace instead of drifting to the
	 * next tick (early is harmless: only a late ping counts). */
	if (now_ns - s->last_watchdog_ns + s->watchdog_ns / 20 < s->watchdog_ns / 2)
		return;
	s->last_watchdog_ns = now_ns;
	sd_notify(0, "WATCHDOG=1");
}

void service_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000ULL +
			   (unsigned long long)ts.tv_nsec / 1000ULL);
}

void service_reloaded(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void service_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

bool service_may_attach(void)
{
	if (capng_get_caps_process())
		return false;
	return (capng_have_capability(CAPNG_EFFECTIVE, CAP_BPF) ||
		capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_ADMIN)) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_NET_ADMIN);
}

/*
 * What the attached daemon still needs, found by running it with less:
 *  CAP_BPF        the bpf() map commands on the fds it holds (lookups of
 *                 the counters, updates of the rates): kernels before 6.5
 *                 refuse every bpf() command without it while
 *                 kernel.unprivileged_bpf_disabled is set (Debian's
 *                 default), and a reload writes ports and prefixes.
 *  CAP_NET_ADMIN  the stop: detaching the tc hand-off (a netlink request)
 *                 and putting net.unix.max_dgram_qlen and the verified
 *                 admission sysctls back in shedd's network namespace.
 * Everything else goes: CAP_PERFMON (tracepoints are attached),
 * CAP_SYS_ADMIN, CAP_DAC_*, CAP_SETPCAP, ... Nothing is inheritable or
 * ambient: shedd runs no program.
 */
int service_drop_caps(void)
{
	int err, keep_bounds;

	if (capng_get_caps_process())
		return -EPERM;
	/* Dropping from the bounding set needs CAP_SETPCAP (root has it; a
	 * unit's CapabilityBoundingSet= does that job otherwise). */
	keep_bounds = !capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	capng_clear(keep_bounds ? CAPNG_SELECT_CAPS : CAPNG_SELECT_BOTH);
	if (capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_BPF, CAP_NET_ADMIN,
			  -1))
		return -EINVAL;
	if (!keep_bounds &&
	    capng_updatev(CAPNG_ADD, CAPNG_BOUNDING_SET, CAP_BPF, CAP_NET_ADMIN, -1))
		return -EINVAL;
	/* The ambient set empties itself with the inheritable one. */
	err = capng_apply(keep_bounds ? CAPNG_SELECT_CAPS : CAPNG_SELECT_BOTH);
	if (err) {
		log_err("drop capabilities: capng_apply failed (%d)", err);
		return -EPERM;
	}
	return 0;
}

void service_drop_thread_caps(void)
{
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_apply(CAPNG_SELECT_CAPS))
		log_warn("drop the capabilities of a helper thread: capng_apply failed");
}
