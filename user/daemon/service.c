// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* service.c - sd_notify through libsystemd, capabilities through
 * libcap-ng. Capabilities are per thread: service_drop_caps() changes the
 * calling thread; a helper thread started before it drops its own with
 * service_drop_thread_caps().
 */
#include <errno.h>
#include <stdatomic.h>
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

/* A change of users (--user) is to come: see service_drop_thread_caps().
 * Set by the main thread, read by the helper threads it starts. */
static atomic_bool id_change_planned;

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

bool service_may_change_id(void)
{
	if (capng_get_caps_process())
		return false;
	return capng_have_capability(CAPNG_EFFECTIVE, CAP_SETUID) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_SETGID) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_CHOWN);
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
 * CAP_SYS_ADMIN, CAP_DAC_*, CAP_SETPCAP, CAP_SETUID, ... Nothing is
 * inheritable or ambient: shedd runs no program.
 * As another user than root (--user) it needs no more: the net.* sysctls
 * let CAP_NET_ADMIN write them as their owner would; the pins are
 * unlinked through folders of the user's group (pindir_share());
 * the latency and metrics sockets are bound already; SIGHUP reads the
 * config file as that user.
 */
int service_drop_caps(__u32 uid, __u32 gid)
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
	if (uid) {
		/* PR_SET_KEEPCAPS around setresgid, setgroups and setresuid,
		 * then the sets above; CAP_SETUID and CAP_SETGID go with them. */
		err = capng_change_id((int)uid, (int)gid,
				      CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_AMBIENT |
				      (keep_bounds ? CAPNG_NO_FLAG : CAPNG_CLEAR_BOUNDING));
		if (err) {
			log_err("become uid %u gid %u: capng_change_id failed (%d)", uid, gid, err);
			return -EPERM;
		}
		id_change_planned = false; /* done: later threads keep nothing */
		return 0;
	}
	/* The ambient set empties itself with the inheritable one. */
	err = capng_apply(keep_bounds ? CAPNG_SELECT_CAPS : CAPNG_SELECT_BOTH);
	if (err) {
		log_err("drop capabilities: capng_apply failed (%d)", err);
		return -EPERM;
	}
	return 0;
}

/* glibc runs set*id() in every thread of the process, and aborts it when
 * one thread may not: a helper thread started before the daemon becomes
 * --user keeps CAP_SETUID and CAP_SETGID (nothing else) for that moment.
 * The switch itself then empties them: a thread whose uids all leave 0
 * without PR_SET_KEEPCAPS (the main thread's alone) loses its permitted
 * set. */
void service_plan_change_id(void)
{
	id_change_planned = true;
}

void service_drop_thread_caps(void)
{
	capng_clear(CAPNG_SELECT_CAPS);
	if (id_change_planned &&
	    capng_updatev(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_SETUID, CAP_SETGID, -1))
		log_warn("keep CAP_SETUID and CAP_SETGID in a helper thread: capng_updatev failed");
	if (capng_apply(CAPNG_SELECT_CAPS))
		log_warn("drop the capabilities of a helper thread: capng_apply failed");
}
