// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_verifier.c - the verifier's work on shedd's programs, on the kernel
 * the test runs on: each is verified in at most half of the verifier's
 * budget of 1 M instructions (the kernel's verified_insns), so that the
 * code added next does not turn into a program that loads nowhere. The
 * kernel matrix runs it on every kernel (tests/kernels/guest.sh). Loads
 * the programs as the daemon does and attaches them nowhere; needs root.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <cmocka.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "shedd.h"
#include "flow_hash.h"
#include "kernel_features.h"
#include "shedd.skel.h"
#include "handoff.skel.h"

/* BPF_COMPLEXITY_LIMIT_INSNS of the kernel (include/linux/bpf.h, 1 M
 * since 5.2): what the verifier may process for one program. */
#define VERIFIER_INSNS_LIMIT 1000000U
#define VERIFIER_INSNS_MAX (VERIFIER_INSNS_LIMIT / 2)

static const struct shedd_flow_key key = { 0x5eddf10e4b3c2a19ULL, 0x0123456789abcdefULL };

static int print_warn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* The instructions the verifier processed for the loaded program @fd. */
static __u32 verified_insns(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	return info.verified_insns;
}

static void insns_within(const char *prog, __u32 insns)
{
	print_message("%s: %u instructions verified, at most %u (half the verifier's %u)\n", prog,
		      insns, VERIFIER_INSNS_MAX, VERIFIER_INSNS_LIMIT);
	assert_int_not_equal(insns, 0);
	if (insns > VERIFIER_INSNS_MAX)
		fail_msg("%s: %u instructions verified, more than half the verifier's %u", prog,
			 insns, VERIFIER_INSNS_LIMIT);
}

/* The XDP program as the daemon loads it on a kernel with the SYN cookie
 * helpers (6.0 on, every kernel shedd starts on): every function in. With
 * the tests' clock too, which test_xdp and the fuzzer load. */
static void xdp_program(void **state)
{
	int test_clock;

	(void)state;
	for (test_clock = 0; test_clock <= 1; test_clock++) {
		struct shedd_bpf *s = shedd_bpf__open();
		__u32 insns;
		int err;

		assert_non_null(s);
		s->rodata->verify_enabled = 1;
		s->rodata->use_test_clock = (__u8)test_clock;
		SET_FLOW_SIP(s->rodata, key);
		err = shedd_bpf__load(s);
		if (err) {
			shedd_bpf__destroy(s);
			fail_msg("load the XDP program: %s", strerror(-err));
		}
		insns = verified_insns(bpf_program__fd(s->progs.shedd_xdp));
		shedd_bpf__destroy(s);
		insns_within(test_clock ? "shedd_xdp (test clock)" : "shedd_xdp", insns);
	}
}

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

/* The kernel's BTF has the function @name. */
static int kernel_has(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int has;

	assert_non_null(vmlinux);
	has = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return has;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		fail_msg("read a map's id: %s", strerror(errno));
	return info.id;
}

/* Wait until the kernel has freed the program that used the map of
 * @used_id, which nothing else holds: bpf_prog_free_deferred() puts the
 * program's maps, then unbinds it from its device (kernel/bpf/core.c,
 * 6.3 and later). At most 30 s. */
static void bound_prog_freed(__u32 used_id)
{
	int i, fd;

	for (i = 0; i < 3000; i++) {
		fd = bpf_map_get_fd_by_id(used_id);
		if (fd < 0) {
			if (errno == ENOENT)
				return;
			fail_msg("look up map %u: %s", used_id, strerror(errno));
		}
		close(fd);
		usleep(10000);
	}
	fail_msg("the program bound to the test's veth still holds map %u after 30 s", used_id);
}

/* shedd_xdp_vlan, which the daemon loads bound to a device whose driver
 * gives XDP the VLAN tag it strips (bpf_xdp_metadata_rx_vlan_tag, 6.8):
 * bound here to a veth of a network namespace of the test's own (a
 * device-bound program needs a device with native XDP). Elsewhere the
 * daemon never loads it, and the test says so and skips. */
static void xdp_vlan_program(void **state)
{
	struct shedd_bpf *s;
	unsigned int ifindex;
	__u32 insns, settings_id;
	struct utsname u;
	int err;

	(void)state;
	if (!kernel_has("bpf_xdp_metadata_rx_vlan_tag")) {
		print_message("this kernel lacks bpf_xdp_metadata_rx_vlan_tag (6.8): "
			      "no shedd_xdp_vlan\n");
		skip();
	}
	/* The daemon binds it only from 6.18 (kernel_features.h): Debian's
	 * 6.12.118 oopses when the device goes while it is bound, or after,
	 * before the kernel has unbound it (docs/limits.md). */
	if (uname(&u) ||
	    !kernel_at_least(u.release, NIC_VLAN_TAG_MIN_MAJOR, NIC_VLAN_TAG_MIN_MINOR)) {
		print_message("kernel %s: shedd binds no program before %d.%d: no "
			      "shedd_xdp_vlan\n", u.release, NIC_VLAN_TAG_MIN_MAJOR,
			      NIC_VLAN_TAG_MIN_MINOR);
		skip();
	}
	if (unshare(CLONE_NEWNET))
		fail_msg("a network namespace of the test's own: %s", strerror(errno));
	if (system("ip link add shdvt0 type veth peer name shdvt1"))
		fail_msg("make a veth in the test's network namespace");
	ifindex = if_nametoindex("shdvt0");
	assert_int_not_equal(ifindex, 0);
	s = shedd_bpf__open();
	assert_non_null(s);
	s->rodata->verify_enabled = 1;
	SET_FLOW_SIP(s->rodata, key);
	bpf_program__set_autoload(s->progs.shedd_xdp, false);
	bpf_program__set_autoload(s->progs.shedd_xdp_vlan, true);
	bpf_program__set_ifindex(s->progs.shedd_xdp_vlan, ifindex);
	bpf_program__set_flags(s->progs.shedd_xdp_vlan,
			       bpf_program__flags(s->progs.shedd_xdp_vlan) | BPF_F_XDP_DEV_BOUND_ONLY);
	err = shedd_bpf__load(s);
	if (err) {
		shedd_bpf__destroy(s);
		fail_msg("load shedd_xdp_vlan: %s", strerror(-err));
	}
	insns = verified_insns(bpf_program__fd(s->progs.shedd_xdp_vlan));
	settings_id = map_id(bpf_map__fd(s->maps.settings));
	shedd_bpf__destroy(s);
	/* The program must be gone before its device is: Debian's 6.12.118
	 * oopses in bpf_dev_bound_netdev_unregister() when a device goes
	 * while a program as large as this one is bound to it
	 * (docs/limits.md), as the namespace would at the process's exit. */
	bound_prog_freed(settings_id);
	insns_within("shedd_xdp_vlan", insns);
}

/* The tc hand-off, where the kernel has its kfunc (6.9): elsewhere the
 * daemon never loads it, and the test says so and skips. */
static void tc_handoff(void **state)
{
	struct handoff_bpf *h;
	__u32 insns;
	int err;

	(void)state;
	if (!kernel_has("bpf_sk_assign_tcp_reqsk")) {
		print_message("this kernel lacks bpf_sk_assign_tcp_reqsk (6.9): no tc hand-off\n");
		skip();
	}
	h = handoff_bpf__open();
	assert_non_null(h);
	SET_FLOW_SIP(h->rodata, key);
	err = handoff_bpf__load(h);
	if (err) {
		handoff_bpf__destroy(h);
		fail_msg("load the tc hand-off: %s", strerror(-err));
	}
	insns = verified_insns(bpf_program__fd(h->progs.shedd_handoff));
	handoff_bpf__destroy(h);
	insns_within("shedd_handoff", insns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "XDP program: verified in at most half the verifier's 1 M instructions",
		  xdp_program, NULL, NULL, NULL },
		{ "tc hand-off: verified in at most half the verifier's 1 M instructions",
		  tc_handoff, NULL, NULL, NULL },
		/* Last: it moves the test into a network namespace of its own. */
		{ "XDP program bound to a device, with the stripped VLAN tag: verified in at "
		  "most half the verifier's 1 M instructions",
		  xdp_vlan_program, NULL, NULL, NULL },
	};

	libbpf_set_print(print_warn);
	return cmocka_run_group_tests_name("verifier headroom", tests, NULL, NULL);
}
