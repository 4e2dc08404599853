#!/bin/sh
# guest.sh - the kernel matrix's tests, inside a guest booted by
# scripts/kernels.sh on one of Debian's kernels: the XDP program's
# BPF_PROG_TEST_RUN suite, the verifier's work on each program
# (test_verifier), the fuzzer's short run, and a selection of the
# integration tests (tests/kernels/selection, CI's; selection-wide, a test
# of every file but flood.bats and tunnels.bats whole). One prove run, so one summary; a
# test that needs what the kernel lacks skips, naming it.
cd "$(dirname "$0")/../.." || exit 1
echo "guest: kernel $(uname -r)"
# Software emulation: waits stretch, the fuzzer runs fewer frames.
export TESTBED_TIME_SCALE="${TESTBED_TIME_SCALE:-8}"
export SHEDD_FUZZ_FRAMES="${SHEDD_FUZZ_FRAMES:-100000}"
# Emulated, a program's cost beside a trivial one's is not the CPU's: a
# shed SYN measured 7.6 x XDP_DROP on 6.1 (under 6 natively).
export SHEDD_FASTPATH_TESTRUN_MAX_RATIO="${SHEDD_FASTPATH_TESTRUN_MAX_RATIO:-12}"
# A selection line whose test names match nothing fails its file
# (tests/exec.sh). SHEDD_BATS_SELECT may name another selection.
export SHEDD_BATS_SELECT="${SHEDD_BATS_SELECT:-tests/kernels/selection}"
# SHEDD_GUEST_PS=N: every N seconds the busiest processes go to the
# console ("guest-ps:" lines), to see what a test that hangs is doing.
if [ -n "${SHEDD_GUEST_PS:-}" ]; then
	while sleep "$SHEDD_GUEST_PS"; do
		ps -eo pid,ppid,etimes,pcpu,stat,wchan:22,args | grep -v "\[" | cut -c1-170 |
			sed 's/^/guest-ps: /' >/dev/console
	done &
fi
exec prove -v --timer --exec tests/exec.sh .output/test_xdp .output/test_port_limit \
	.output/test_verifier .output/fuzz_xdp \
	$(awk '/^#/ || NF == 0 { next } !seen[$1]++ { print $1 }' "$SHEDD_BATS_SELECT")
