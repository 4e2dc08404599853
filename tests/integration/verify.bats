#!/usr/bin/env bats
# verify.bats - the daemon's side of verified admission on this kernel: the
# hand-off it reports, the tc filter of the tc hand-off (attached, replaced
# by a restarted shedd, detached by SIGTERM and --remove, kept by an error
# exit of the daemon, with the program shedding on), the sysctls it sets in the server's namespace only, the settings it
# writes. Cookie traffic itself is tested elsewhere.

load lib

setup() {
	testbed_up
	listener_start
	HOST_SYNCOOKIES=$(cat /proc/sys/net/ipv4/tcp_syncookies)
	HOST_TIMESTAMPS=$(cat /proc/sys/net/ipv4/tcp_timestamps)
}
teardown() { testbed_down; }

# The shedd hand-off filters at tc ingress of the server veth, one a line.
tc_handoff() {
	in_srv tc filter show dev "$IF_SRV" ingress | grep 'shedd_handoff' || true
}

# The id of the one shedd hand-off filter; fails unless there is exactly one.
tc_handoff_id() {
	local lines
	lines=$(tc_handoff)
	if [ "$(printf '%s' "$lines" | grep -c .)" -ne 1 ]; then
		echo "expected one shedd_handoff filter, got: '$lines'" >&2
		return 1
	fi
	printf '%s\n' "$lines" | grep -o ' id [0-9]*' | cut -d' ' -f3
}

no_tc_handoff() {
	local lines
	lines=$(tc_handoff)
	if [ -n "$lines" ]; then
		echo "a shedd hand-off is still attached: $lines" >&2
		return 1
	fi
}

# possible_cpus: how many CPUs the per-CPU maps have (libbpf's count).
possible_cpus() {
	local n=0 r lo hi
	for r in $(tr ',' ' ' </sys/devices/system/cpu/possible); do
		lo=${r%-*} hi=${r#*-}
		n=$((n + hi - lo + 1))
	done
	echo "$n"
}

host_sysctls_unchanged() {
	[ "$(cat /proc/sys/net/ipv4/tcp_syncookies)" = "$HOST_SYNCOOKIES" ]
	[ "$(cat /proc/sys/net/ipv4/tcp_timestamps)" = "$HOST_TIMESTAMPS" ]
}

@test "--handoff tc: reports it, attaches the tc hand-off, writes the settings; SIGTERM detaches" {
	need_tc_handoff
	shedd_start --port "$PORT" --rate 100 --handoff tc --verify critical=always
	run grep -c 'shedd: verified admission: tc hand-off (bpf_sk_assign_tcp_reqsk)' \
		"$TESTBED_TMP/shedd.log"
	[ "$output" = 1 ]
	tc_handoff_id
	in_srv tc filter show dev "$IF_SRV" ingress | grep -q 'handle 0x5edd shedd_handoff'
	for pin in handoff handoff_stats cookie_budget refresh; do
		[ -e "$PIN_DIR/$pin" ] || { echo "no pin $pin" >&2; false; }
	done
	bpftool map dump pinned "$PIN_DIR/handoff_stats" | grep -q '"assigned":'
	# critical_plus, not named, verifies while shedding: the testbed's
	# interface does not forward, so the source check cannot run.
	[ "$(settings .verify)" = '[1,2,1,1]' ]
	[ "$(settings .handoff)" = 0 ]
	# The window scale of the kernel's own SYN-ACKs in this namespace.
	rmem=$(in_srv cat /proc/sys/net/ipv4/tcp_rmem | awk '{print $3}')
	rmax=$(in_srv cat /proc/sys/net/core/rmem_max)
	space=$(( rmem > rmax ? rmem : rmax )); log=-1
	while [ "$space" -gt 0 ]; do space=$((space >> 1)); log=$((log + 1)); done
	want=$(( log - 15 < 0 ? 0 : log - 15 > 14 ? 14 : log - 15 ))
	[ "$(settings .wscale)" = "$want" ]
	# --cookie-rate is the host's: each CPU gets its share, rounded up.
	share=$(( (1000000 + $(possible_cpus) - 1) / $(possible_cpus) ))
	[ "$(settings .cookie_rate_per_sec)" = "$share" ]
	[ "$(settings .cookie_burst)" = $(( share / 100 )) ]
	[ "$(settings .verify_hold_ns)" = 10000000000 ]
	host_sysctls_unchanged

	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	no_tc_handoff
	[ ! -e "$PIN_DIR" ]
}

@test "an error exit keeps the tc hand-off and the program shedding; a restarted shedd replaces it in place; --remove detaches it" {
	need_tc_handoff
	# The daemon's own error path, not a kill: its 30th tick fails as a
	# failed read of the stats map would (SHEDD_TEST_FAIL_TICK, a fault
	# injected for tests), and it exits 1.
	SHEDD_TEST_FAIL_TICK=30 shedd_start --port "$PORT" --rate 100 --burst 10 --handoff tc
	first=$(tc_handoff_id)
	prog=$(in_srv ip -j link show dev "$IF_SRV" | jq '.[0].xdp.prog.id')
	rc=0
	wait "$SHEDD_PID" || rc=$?
	[ "$rc" -eq 1 ]
	grep -q 'read stats: Input/output error (tick 30, as SHEDD_TEST_FAIL_TICK asks)' \
		"$TESTBED_TMP/shedd.log"
	grep -q "exiting on error; the program stays attached to $IF_SRV" "$TESTBED_TMP/shedd.log"
	[ "$(tc_handoff_id)" = "$first" ]
	[ "$(in_srv ip -j link show dev "$IF_SRV" | jq '.[0].xdp.prog.id')" = "$prog" ]
	# With no daemon, the program judges on by its last rates: of 4000
	# SYNs in 2 s, the sheddable class admits at most its share of 100/s
	# and its burst; the rest are shed (dropped or answered with a cookie).
	syn0=$(stat_sum syn 3)
	admitted0=$(stat_sum admitted 3)
	flood 198.19.0.0/16 2000 2 >/dev/null
	syn=$(( $(stat_sum syn 3) - syn0 ))
	admitted=$(( $(stat_sum admitted 3) - admitted0 ))
	echo "after the error exit: $syn SYNs judged, $admitted admitted"
	within "$syn" 3800 4100
	within "$admitted" 0 230

	shedd_start --port "$PORT" --rate 100 --handoff tc
	grep -q 'adopted the running shedd' "$TESTBED_TMP/shedd.log"
	second=$(tc_handoff_id)
	[ "$second" != "$first" ]
	# The pin names the program the filter runs.
	[ "$(bpftool -j prog show pinned "$PIN_DIR/handoff" | jq .id)" = "$second" ]
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true

	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	echo "$output"
	[ "$status" -eq 0 ]
	no_tc_handoff
	! xdp_attached || { echo "XDP is still attached" >&2; false; }
	[ ! -e "$PIN_DIR" ]
}

@test "a restart without the tc hand-off detaches the one left behind" {
	need_tc_handoff
	shedd_start --port "$PORT" --rate 100 --handoff tc
	tc_handoff_id
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	shedd_start --port "$PORT" --rate 100 --verify off
	grep -q 'verified admission: off (--verify off for every class)' "$TESTBED_TMP/shedd.log"
	no_tc_handoff
	[ ! -e "$PIN_DIR/handoff" ]
	[ "$(settings .verify)" = '[0,0,0,0]' ]
}

@test "--handoff tc sets tcp_syncookies=1 in the server's namespace only, when it is 0" {
	need_tc_handoff
	in_srv sysctl -qw net.ipv4.tcp_syncookies=0
	shedd_start --port "$PORT" --rate 100 --handoff tc
	grep -q 'shedd: set net.ipv4.tcp_syncookies=1 (was 0; put back when shedding stops)' \
		"$TESTBED_TMP/shedd.log"
	[ "$(in_srv cat /proc/sys/net/ipv4/tcp_syncookies)" = 1 ]
	host_sysctls_unchanged
	# A stop that detaches puts it back.
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	grep -q 'shedd: put net.ipv4.tcp_syncookies back to 0 (shedd had set 1)' "$TESTBED_TMP/shedd.log"
	[ "$(in_srv cat /proc/sys/net/ipv4/tcp_syncookies)" = 0 ]
}

# srv_sysctls: tcp_syncookies and tcp_timestamps of the server's namespace.
srv_sysctls() {
	echo "$(in_srv cat /proc/sys/net/ipv4/tcp_syncookies)" \
		"$(in_srv cat /proc/sys/net/ipv4/tcp_timestamps)"
}

@test "--handoff kernel: reports it, sets tcp_syncookies=2 and tcp_timestamps=2 in the server's namespace only, no tc program" {
	in_srv sysctl -qw net.ipv4.tcp_syncookies=1 net.ipv4.tcp_timestamps=1
	shedd_start --port "$PORT" --rate 100 --handoff kernel
	log="$TESTBED_TMP/shedd.log"
	grep -q 'shedd: verified admission: kernel hand-off (tcp_syncookies=2)' "$log"
	grep -q 'shedd: set net.ipv4.tcp_syncookies=2 (was 1; put back when shedding stops)' "$log"
	grep -q 'shedd: set net.ipv4.tcp_timestamps=2 (was 1; put back when shedding stops)' "$log"
	[ "$(srv_sysctls)" = "2 2" ]
	host_sysctls_unchanged
	[ "$(settings .handoff)" = 1 ]
	# The top classes too: the source check cannot run here.
	[ "$(settings .verify)" = '[1,1,1,1]' ]
	no_tc_handoff
	[ ! -e "$PIN_DIR/handoff" ]
	# What it found is in the pins, for whichever shedd stops shedding.
	[ "$(bpftool map dump pinned "$PIN_DIR/sysctls" |
		jq -c '.[0].value | [.changed, .found[0:2], .set[0:2]]')" = '[3,[1,1],[2,2]]' ]
}

@test "--handoff kernel: the sysctls go back when shedding stops, and only then" {
	log="$TESTBED_TMP/shedd.log"
	in_srv sysctl -qw net.ipv4.tcp_syncookies=1 net.ipv4.tcp_timestamps=1
	# A stop that detaches puts both back.
	shedd_start --port "$PORT" --rate 100 --handoff kernel
	[ "$(srv_sysctls)" = "2 2" ]
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	cat "$log"
	grep -q 'shedd: put net.ipv4.tcp_syncookies back to 1 (shedd had set 2)' "$log"
	grep -q 'shedd: put net.ipv4.tcp_timestamps back to 1 (shedd had set 2)' "$log"
	[ "$(srv_sysctls)" = "1 1" ]
	host_sysctls_unchanged

	# A stop that leaves the program shedding keeps them; so does a
	# killed daemon. The shedd that adopts finds them set (and says
	# nothing), and its stop puts back what the first one found.
	: >"$log"
	shedd_start --port "$PORT" --rate 100 --handoff kernel --keep-on-exit
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	xdp_attached
	[ "$(srv_sysctls)" = "2 2" ]
	shedd_start --port "$PORT" --rate 100 --handoff kernel
	grep -q 'adopted the running shedd' "$log"
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	[ "$(srv_sysctls)" = "2 2" ]
	shedd_start --port "$PORT" --rate 100 --handoff kernel
	run grep -c 'shedd: set net' "$log"
	[ "$status" -eq 0 ]
	[ "$output" -eq 2 ]
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	[ "$(srv_sysctls)" = "1 1" ]

	# --remove of a program left shedding puts them back too; a value an
	# operator changed since shedd set it is theirs, and stays.
	: >"$log"
	shedd_start --port "$PORT" --rate 100 --handoff kernel --keep-on-exit
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	in_srv sysctl -qw net.ipv4.tcp_timestamps=0
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"put net.ipv4.tcp_syncookies back to 1 (shedd had set 2)"* ]]
	[[ "$output" == *"left net.ipv4.tcp_timestamps=0 as it is: it changed since shedd set 2 (it was 1 before)"* ]]
	[ "$(srv_sysctls)" = "1 0" ]
	run xdp_attached
	[ "$status" -ne 0 ]

	# Values that already fit are left alone, not reported, and not
	# changed by a stop.
	in_srv sysctl -qw net.ipv4.tcp_syncookies=2 net.ipv4.tcp_timestamps=2
	: >"$log"
	shedd_start --port "$PORT" --rate 100 --handoff kernel
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	run grep -c -e 'shedd: set ' -e 'shedd: put ' "$log"
	[ "$status" -eq 1 ]
	[ "$output" = 0 ]
	[ "$(srv_sysctls)" = "2 2" ]
	host_sysctls_unchanged
}

# --cookie-rate, like --rst-rate, bounds the host: the settings hold each
# CPU's share, rounded up, with 10 ms of it as depth.
@test "--cookie-rate is the host's total: each CPU gets its share" {
	local n share
	n=$(possible_cpus)
	shedd_start --port "$PORT" --rate 100 --verify sheddable=always --cookie-rate 1001 $(cookie_handoff)
	share=$(( (1001 + n - 1) / n ))
	echo "$n CPUs: cookie_rate_per_sec=$(settings .cookie_rate_per_sec)" \
		"cookie_burst=$(settings .cookie_burst), expected $share"
	[ "$(settings .cookie_rate_per_sec)" = "$share" ]
	[ "$(settings .cookie_burst)" = $(( share / 100 > 0 ? share / 100 : 1 )) ]
}
