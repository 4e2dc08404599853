#!/bin/bash
# run.sh - run test files through prove, which prints the summaries: cmocka
# binaries (unit tests, XDP tests on crafted packets) and bats files
# (integration tests on a namespace testbed). `make test` passes every test
# file; `make test T=FILE` one. Each file must be built already.
set -eu
cd "$(dirname "$0")/.."

if [ "$#" -eq 0 ]; then
	echo "usage: tests/run.sh TEST_FILE... (or: make test [T=FILE])" >&2
	exit 2
fi
for t in "$@"; do
	if [ ! -e "$t" ]; then
		echo "run.sh: $t: no such test file (make test T=$t builds it)" >&2
		exit 2
	fi
	# The XDP tests load BPF programs; the bats files make namespaces.
	case "$t" in
	*.bats | */test_xdp)
		if [ "$(id -u)" -ne 0 ]; then
			echo "run.sh: $t needs root: run it as root (a root shell, or sudo)" >&2
			exit 1
		fi
		;;
	esac
done
# The test binaries, fuzzers and checks compute what they assert (the XDP
# tests on a test clock): they run two at a time (TEST_JOBS, default 2),
# each file's output printed whole when it ends. The bats files measure
# real traffic on the host's CPUs: one at a time, after them.
par=() seq=()
for t in "$@"; do
	case "$t" in
	*.bats) seq+=("$t") ;;
	*) par+=("$t") ;;
	esac
done
rc=0
if [ "${#par[@]}" -gt 0 ]; then
	prove -v --timer -j "${TEST_JOBS:-2}" --exec tests/exec.sh "${par[@]}" || rc=$?
fi
if [ "${#seq[@]}" -gt 0 ]; then
	prove -v --timer --exec tests/exec.sh "${seq[@]}" || rc=$?
fi
exit "$rc"
