#!/usr/bin/env bats
# coldstart.bats - first, do no harm, with real sockets: shedd started
# fresh with its defaults (no --rate) in front of a healthy server that is
# already serving COLD_RATE new connections a second admits every SYN at
# once: none dropped, none refused with a RST, none answered with a
# cookie. On this 2-CPU VM, shared with other runs (load average 4-8),
# loadgen against this server completed every connection at 10 000-12 000/s
# when the host was quieter, but at 10 000/s under that load the server
# itself stalled (a full accept queue, a fifth of the clients timed out)
# and shedd cut it, rightly; at 8 000/s it stayed healthy and this test
# passed. COLD_RATE is 6 000 by default, a margin under that; COLD_RATE=8000
# runs it at the highest. The law before the open start shed at both: its
# first tick split 10 000/s evenly over the four classes (2 500/s for the
# one that gets every SYN), and the class then answered with cookies for
# its verification hold (10 s): 7 801 of 44 508 SYNs at 6 000/s. And a
# healthy service above --max-rate is shed by the ceiling alone: said once
# (the warning is once a minute), in the status line, and in the metrics.

load lib

setup() { testbed_up; }
teardown() { testbed_down; }

COLD_RATE=${COLD_RATE:-6000}
COLD_SECS=10

# class_sum FIELD: a per-class counter of the stats map, summed over the
# classes and the CPUs.
class_sum() {
	bpftool map dump pinned "$PIN_DIR/stats" | jq "[.[0].values[].value.cls[].$1] | add"
}

# healthy_load RATE SECS: a server of far more than RATE (8 workers of
# 1 us, a backlog of 4096) and loadgen offering it RATE connections/s for
# SECS seconds in the background (LOAD_PID; its lines into cold and
# cold.sec), a second under way on return. Both run at nice -10: on a host
# whose two CPUs other runs share, a server starved for 100 ms holds its
# accept queue above 5 ms, which is overload, rightly cut; these tests are
# of a healthy one. The service runs before shedd starts, as a deployment
# or a restart after --remove finds it: the first SYN shedd judges is of a
# load at full rate.
healthy_load() {
	nice -n -10 ip netns exec "$NS_SRV" "$SLOWSERVER" --addr "$SRV_IP" --port "$PORT" \
		--workers 8 --service-ms 0.001 --dist fixed --backlog 4096 --duration 60 \
		>"$TESTBED_TMP/slow.out" 2>"$TESTBED_TMP/slow.err" &
	PIDS+=($!)
	wait_listening slowserver "$PORT"
	nice -n -10 ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$1" \
		--duration "$2" --patience-ms 1000 >"$TESTBED_TMP/cold" 2>"$TESTBED_TMP/cold.sec" &
	LOAD_PID=$!
	PIDS+=("$LOAD_PID")
	wait_for "loadgen's start" 5 grep -q '^loadgen: dst ' "$TESTBED_TMP/cold.sec"
	sleep 1
}

@test "a fresh start in front of a healthy server at COLD_RATE conn/s sheds no SYN" {
	local summary offered ok syn adm shed cookies
	# Bounded: COLD_SECS of offering, then at most the patience.
	healthy_load "$COLD_RATE" "$COLD_SECS"
	shedd_start --port "$PORT"
	grep 'attached to' "$TESTBED_TMP/shedd.log"
	wait "$LOAD_PID"
	summary=$(cat "$TESTBED_TMP/cold")
	cat "$TESTBED_TMP/cold.sec"
	echo "loadgen: $summary"
	# What the program counted, once the last tick has read it too.
	wait_ticks 2
	syn=$(class_sum syn)
	adm=$(class_sum admitted)
	shed=$(( $(class_sum dropped) + $(class_sum rst_sent) ))
	cookies=$(class_sum cookie_sent)
	echo "SYNs at XDP $syn, admitted at once $adm, dropped or refused $shed, answered with a cookie $cookies"
	grep -E 'mode=(overload|recovering)|binds at --max-rate' "$TESTBED_TMP/shedd.log" || true
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | cut -c1-240 | tail -n 12
	offered=$(field offered "$summary")
	ok=$(field ok "$summary")
	# shedd judged seconds of the load (it started a second into it, and
	# a loaded host may take seconds more to load and attach it) ...
	[ "$syn" -ge $((COLD_RATE * 3)) ]
	# ... and admitted every SYN of it at once.
	[ "$shed" -eq 0 ]
	[ "$cookies" -eq 0 ]
	[ "$adm" -eq "$syn" ]
	# The server was healthy: it answered nearly every connection in time
	# (what a loaded host's client may miss is not shedd's).
	within "$ok" $((offered * 90 / 100)) "$offered"
	# It said how it started.
	grep -q 'aimd, start rate 10000000 SYN/s (open: no overload seen yet)' "$TESTBED_TMP/shedd.log"
}

@test "a healthy service above --max-rate is warned of once, shown and counted" {
	local m
	healthy_load 300 8
	shedd_start --port "$PORT" --max-rate 100
	wait_for "the warning" 5 grep -q 'binds at --max-rate 100 SYN/s' "$TESTBED_TMP/shedd.log"
	status_next
	m=$(in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics)
	wait "$LOAD_PID"
	grep 'binds at --max-rate' "$TESTBED_TMP/shedd.log"
	echo "$m" | grep '^shedd_max_rate_b'
	[ "$(echo "$m" | awk '{ sub(/\{.*/, "", $1) } $1 == "shedd_max_rate_binding" { print $2 }')" = 1 ]
	[ "$(echo "$m" | awk '{ sub(/\{.*/, "", $1) } $1 == "shedd_max_rate_bound_ticks_total" { print $2 }')" -ge 5 ]
	grep -q ' AT_MAX_RATE ' "$TESTBED_TMP/shedd.log"
	# Loud, not every tick: once a minute at most.
	[ "$(grep -c 'binds at --max-rate' "$TESTBED_TMP/shedd.log")" -eq 1 ]
}
