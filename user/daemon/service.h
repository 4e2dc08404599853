/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* service.h - shedd under a service manager: exit codes, the sd_notify
 * protocol (READY, STATUS, WATCHDOG, RELOADING, STOPPING) and least
 * privilege (the capabilities kept once the program is attached).
 * Without NOTIFY_SOCKET every notification is a no-op.
 */
#ifndef SHEDD_SERVICE_H
#define SHEDD_SERVICE_H

#include <stdbool.h>
#include <linux/types.h>

/* Exit status of shedd, as --help, shedd(8) and docs/service.md document. */
enum shedd_exit {
	SHEDD_EXIT_OK = 0,      /* success; also --remove with nothing to remove */
	SHEDD_EXIT_FAILURE = 1, /* failure after the program was attached */
	SHEDD_EXIT_USAGE = 2,   /* bad command line */
	SHEDD_EXIT_ENV = 3,     /* cannot start here: permission, interface, kernel
				 * features, BPF load or attach, IFACE taken */
};

struct service {
	__u64 watchdog_ns;      /* WatchdogSec= as WATCHDOG_USEC gave it; 0 = off */
	__u64 last_watchdog_ns; /* CLOCK_MONOTONIC of the last WATCHDOG=1 */
	bool ready;             /* READY=1 sent */
};

/* Read the watchdog interval from the environment (sd_watchdog_enabled). */
void service_init(struct service *s);
/* READY=1 with a first STATUS=, once: the program is attached (or adopted)
 * and the first tick ran. */
void service_ready(struct service *s, const char *status);
/* STATUS=: one line, shown by `systemctl status`. */
void service_status(const char *status);
/* From the tick loop, after a tick that ran: WATCHDOG=1 every half
 * interval, so a stuck loop is caught by the manager. */
void service_tick(struct service *s, __u64 now_ns);
/* RELOADING=1 (with MONOTONIC_USEC) before a reload, READY=1 after it. */
void service_reloading(void);
void service_reloaded(const char *status);
/* STOPPING=1: shedd is on its way out. */
void service_stopping(void);

/* True when the process may become another user once attached:
 * CAP_SETUID, CAP_SETGID and CAP_CHOWN (its folders go to the user's
 * group) in its effective set. */
bool service_may_change_id(void);
/* After attach: keep only what the running daemon needs (see service.c)
 * in the calling thread's effective and permitted sets; empty the
 * inheritable and ambient sets, and the bounding set where allowed. With
 * @uid not 0, become @uid and @gid (every thread: glibc's set*id apply to
 * the process; no supplementary group) keeping those capabilities.
 * Returns 0 or a negative errno. */
int service_drop_caps(__u32 uid, __u32 gid);
/* For a helper thread that needs no privilege at all (capabilities are
 * per thread): drop every capability of the calling thread; after
 * service_plan_change_id(), all but CAP_SETUID and CAP_SETGID, which the
 * change of users takes (see service.c). */
void service_drop_thread_caps(void);
/* Before the first helper thread: the daemon will become another user. */
void service_plan_change_id(void);

#endif /* SHEDD_SERVICE_H */
