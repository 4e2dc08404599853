# lib.bash - helpers of the integration tests, on top of scripts/testbed.sh.

TESTBED_TMP=$BATS_TEST_TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/testbed.sh"

# within VALUE LOW HIGH: integer bounds check that says what failed. A value
# that is not an integer (an empty field, a missing counter) fails too: `[`
# on a non-number errs, and inside an `if` that error would read as success.
within() {
	local n
	for n in "$@"; do
		if ! [[ "$n" =~ ^-?[0-9]+$ ]]; then
			echo "within: '$n' is not an integer (expected $2 <= '$1' <= $3)" >&2
			return 1
		fi
	done
	if [ "$1" -lt "$2" ] || [ "$1" -gt "$3" ]; then
		echo "expected $2 <= $1 <= $3" >&2
		return 1
	fi
}

xdp_attached() {
	in_srv ip link show dev "$IF_SRV" | grep -q 'xdp'
}

# need_tc_handoff: skip the test on a kernel without the kfunc of the tc
# hand-off (bpf_sk_assign_tcp_reqsk, Linux 6.9); the kernel matrix's 6.1
# lacks it. Asked of the kernel's BTF, as shedd itself asks.
need_tc_handoff() {
	if [ -z "${TC_HANDOFF_KFUNC:-}" ]; then
		TC_HANDOFF_KFUNC=no
		bpftool btf dump file /sys/kernel/btf/vmlinux format raw 2>/dev/null |
			grep -q "FUNC 'bpf_sk_assign_tcp_reqsk'" && TC_HANDOFF_KFUNC=yes
	fi
	[ "$TC_HANDOFF_KFUNC" = yes ] ||
		skip "kernel $(uname -r) lacks bpf_sk_assign_tcp_reqsk (the tc hand-off needs 6.9)"
}
