/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* clock.h - the clocks of the XDP program and the tc hand-off, one
 * definition for both, so that what one stamps (the verdicts kept in
 * proven, config_maps.h) the other judges on the same clock. Each program
 * has its own copy of the test clock's variables.
 */
#ifndef SHEDD_BPF_CLOCK_H
#define SHEDD_BPF_CLOCK_H

/* Set before load by tests only: read the clock from test_clock_ns instead
 * of bpf_ktime_get_ns(). In production the verifier prunes the branch. */
const volatile __u8 use_test_clock = 0;
__u64 test_clock_ns = 0;

static __always_inline __u64 clock_ns(void)
{
	if (use_test_clock)
		return test_clock_ns;
	return bpf_ktime_get_ns();
}

/* The same clock as of the kernel's last tick: behind clock_ns() by less
 * than one tick (1 to 10 ms by CONFIG_HZ), and far cheaper to read, since
 * bpf_ktime_get_ns() reads the TSC (about 40 ns in a virtual machine,
 * where it was the largest part of a shed SYN's cost). Every decision
 * reads it but two: a class's reserve is refilled to clock_ns(), so its
 * rate is exact, and a SYN-ACK's TCP timestamp for the kernel hand-off
 * is clock_ns()'s, which the kernel's own segments continue. A CPU's
 * lease or back-off seen ending up to a tick late costs a class nothing
 * while its reserve lasts longer than a lease and a tick (the default
 * burst, rate/10, lasts 100 ms); the
 * per-CPU budgets of RSTs and cookies, with the same depth, and the
 * stamps of flows (units of a millisecond, held 50 ms and more) and of
 * cookies (units of a second) need no finer clock either. */
static __always_inline __u64 clock_coarse_ns(void)
{
	if (use_test_clock)
		return test_clock_ns;
	return bpf_ktime_get_coarse_ns();
}

#endif /* SHEDD_BPF_CLOCK_H */
