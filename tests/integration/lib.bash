# lib.bash - helpers of the integration tests, on top of scripts/testbed.sh.

TESTBED_TMP=$BATS_TEST_TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/testbed.sh"

# Every test ends within BATS_TEST_TIMEOUT seconds: bats (1.7.0 or later)
# then fails it ("timeout after Ns"), ends its processes and runs its
# teardown, so a hung shedd or client fails its test instead of hanging
# `make test`. 240 s, scaled as every wait is in the kernel matrix's
# guests: far more than a test here needs. A file whose tests need more
# sets it before `load lib`; the environment may set it too.
if ! printf '%s\n' 1.7.0 "${BATS_VERSION:-0}" | sort -V -C; then
	echo "lib.bash: bats ${BATS_VERSION:-of unknown version} cannot time a test out" \
		"(BATS_TEST_TIMEOUT needs 1.7.0 or later)" >&2
	exit 1
fi
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-$((240 * TESTBED_TIME_SCALE))}

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

# has_tc_handoff: the kernel has the kfunc of the tc hand-off
# (bpf_sk_assign_tcp_reqsk, Linux 6.9); the kernel matrix's 6.1 lacks it.
# Asked of the kernel's BTF, as shedd itself asks, once a run.
# TC_HANDOFF_KFUNC=no in the environment makes the tests take a kernel that
# has it for one that has not (shedd is not told: it is given what a test
# passes it).
has_tc_handoff() {
	local f="${BATS_RUN_TMPDIR:-/tmp}/tc_handoff_kfunc"
	if [ -z "${TC_HANDOFF_KFUNC:-}" ]; then
		if [ ! -s "$f" ]; then
			if bpftool btf dump file /sys/kernel/btf/vmlinux format raw 2>/dev/null |
				grep -q "FUNC 'bpf_sk_assign_tcp_reqsk'"; then
				echo yes >"$f"
			else
				echo no >"$f"
			fi
		fi
		TC_HANDOFF_KFUNC=$(cat "$f")
	fi
	[ "$TC_HANDOFF_KFUNC" = yes ]
}

# need_tc_handoff: skip a test of the tc hand-off itself on a kernel
# without it.
need_tc_handoff() {
	has_tc_handoff ||
		skip "kernel $(uname -r) lacks bpf_sk_assign_tcp_reqsk (the tc hand-off needs 6.9)"
}

# cookie_handoff: what a test of cookies, not of the tc hand-off, adds to
# shedd's options for verified admission on this kernel: nothing where the
# tc hand-off is (the default), --handoff kernel where it is not (6.0-6.8,
# where auto leaves verification off and an explicit --verify is refused),
# so those kernels run the test too.
cookie_handoff() {
	has_tc_handoff || echo --handoff kernel
}

# need_xdp_features: skip a test on a kernel whose drivers do not report
# their XDP features (the netdev generic netlink family, Linux 6.3; 6.1
# lacks it): shedd cannot tell a veth's XDP_TX black hole at attach there,
# only by the driver's error counters once it sends.
need_xdp_features() {
	genl ctrl get name netdev >/dev/null 2>&1 ||
		skip "kernel $(uname -r) has no netdev netlink family (XDP features, 6.3)"
}

# server_with_capacity SECONDS: a server of 4 workers x 10 ms behind a
# 128-entry accept queue for SECONDS, and CAPACITY, its accept rate while
# saturated, measured on this run as the goodput experiment does: patient
# clients at 1000/s for 8 s, shedd watching but not shedding, the median of
# the per-second accept rates of seconds 3-7. OFFERED is OFFERED_X
# (default 3) times that capacity.
server_with_capacity() {
	local accepts
	# The server's life is scaled as the waits are: in a slow guest the
	# measurement alone outlasted 45 s, and the test then waited for a
	# listener that had ended.
	slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 \
		--duration $(( $1 * TESTBED_TIME_SCALE ))
	shedd_start --port "$PORT" --controller off --rate 100000
	load cap 1000 8 5000
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	accepts=$(status_field accepts | sed -n 3,7p | cut -d/ -f1 | cut -d. -f1 | sort -n)
	echo "accepts/s while saturated: $(echo $accepts)"
	[ "$(echo "$accepts" | wc -w)" -eq 5 ]
	CAPACITY=$(echo "$accepts" | sed -n 3p)
	# 4 workers x 10 ms cannot serve more than 400/s; far less is a broken
	# server or signal, not a capacity (or, by TESTBED_TIME_SCALE, a guest
	# under software emulation: 188/s measured there).
	within "$CAPACITY" $((200 / TESTBED_TIME_SCALE)) 400
	OFFERED=$((CAPACITY * ${OFFERED_X:-3}))
	echo "capacity ${CAPACITY}/s measured; offering ${OFFERED}/s"
	# The server works off the queue the measurement left (its clients
	# have finished or given up when load returns); the log starts afresh
	# for the shedd of the test.
	wait_for "an empty accept queue" 10 sh -c \
		"ip netns exec $NS_SRV ss -ltnH 'sport = :$PORT' | awk '{ q += \$2 } END { exit !(NR && q == 0) }'"
	: >"$TESTBED_TMP/shedd.log"
}

# settings FIELD: a field of the settings record in use (jq path): the
# entry of the pinned settings map that settings_cur names.
settings() {
	local cur
	cur=$(bpftool map dump pinned "$PIN_DIR/settings_cur" | jq -r '.[0].value')
	bpftool map dump pinned "$PIN_DIR/settings" | jq -c ".[$cur].value$1"
}

# status_lines: how many status lines shedd has logged.
status_lines() {
	grep -c ' | critical_plus ' "$TESTBED_TMP/shedd.log" || true
}

# status_next: until shedd logs its next status line, the first that covers
# what happened up to now (the end of a load, a flood).
status_next() {
	local n
	n=$(status_lines)
	wait_for "the next status line" 3 status_lines_above "$n"
}
status_lines_above() { [ "$(status_lines)" -gt "$1" ]; }

# ticks_now: the ticks the running shedd has counted (daemon_stats).
ticks_now() {
	bpftool map dump pinned "$PIN_DIR/daemon_stats" | jq -e '.[0].value.ticks'
}

# wait_ticks N: until shedd has run N more ticks than now (what a tick
# would change has had its chance).
wait_ticks() {
	local t0
	t0=$(ticks_now)
	wait_for "$1 more ticks" 5 ticks_above $((t0 + $1 - 1))
}
ticks_above() { [ "$(ticks_now)" -gt "$1" ]; }
