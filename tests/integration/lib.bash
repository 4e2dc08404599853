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

# server_with_capacity SECONDS: a server of 4 workers x 10 ms behind a
# 128-entry accept queue for SECONDS, and CAPACITY, its accept rate while
# saturated, measured on this run as the goodput experiment does: patient
# clients at 1000/s for 8 s, shedd watching but not shedding, the median of
# the per-second accept rates of seconds 3-7. OFFERED is OFFERED_X
# (default 3) times that capacity.
server_with_capacity() {
	local accepts
	slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration "$1"
	shedd_start --port "$PORT" --controller off --rate 100000
	load cap 1000 8 5000
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	accepts=$(status_field accepts | sed -n 3,7p | cut -d/ -f1 | cut -d. -f1 | sort -n)
	echo "accepts/s while saturated: $(echo $accepts)"
	[ "$(echo "$accepts" | wc -w)" -eq 5 ]
	CAPACITY=$(echo "$accepts" | sed -n 3p)
	# 4 workers x 10 ms cannot serve more than 400/s; far less is a broken
	# server or signal, not a capacity.
	within "$CAPACITY" 200 400
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
