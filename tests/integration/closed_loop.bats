#!/usr/bin/env bats
# closed_loop.bats - shedd's AIMD loop end to end on a real kernel: a server
# of known capacity, real clients with a patience offering 3x that capacity.
# Without shedd the accept queue fills and goodput collapses; with shedd the
# sojourn settles near the target, overflows stop, goodput stays near
# capacity, and after a stall of the application the rate returns in stages.

load lib

setup() { testbed_up; }
teardown() { testbed_down; }

OFFERED_X=3
PATIENCE_MS=250

@test "without shedd, 3x overload collapses goodput" {
	server_with_capacity 45
	load base "$OFFERED" 8 "$PATIENCE_MS"
	cat "$TESTBED_TMP/base"
	good=$(ok_per_sec base 4 8)
	echo "goodput ${good}/s of capacity ${CAPACITY}/s without shedd"
	[ "$good" -lt $((CAPACITY / 2)) ]
}

@test "aimd at 3x capacity: sojourn near target, no overflows, goodput >= 85 %; staged ramp after a stall" {
	server_with_capacity 80
	shedd_start --port "$PORT" --ramp-hold 1s
	load first "$OFFERED" 14 "$PATIENCE_MS"
	cat "$TESTBED_TMP/first"
	good=$(ok_per_sec first 6 14)
	echo "goodput ${good}/s of capacity ${CAPACITY}/s with shedd (seconds 6-14)"
	[ "$good" -ge $((CAPACITY * 85 / 100)) ]
	# The last five status lines of the load: sojourn and overflows. Each
	# line must carry both: a missing signal is a failure, not a pass.
	lines=$(grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | tail -n 5)
	echo "$lines" | cut -c1-160
	[ "$(echo "$lines" | grep -c ' sojourn_ms=[0-9.]*/[0-9.]*/')" -eq 5 ]
	[ "$(echo "$lines" | grep -c ' overflows=[0-9][0-9]* ')" -eq 5 ]
	median=$(echo "$lines" | grep -o ' sojourn_ms=[^ ]*' | cut -d/ -f2 | sort -n | sed -n 3p)
	echo "median of the per-second sojourn p50: ${median} ms (target 5 ms)"
	[[ "$median" =~ ^[0-9]+(\.[0-9]+)?$ ]]
	awk -v m="$median" 'BEGIN { exit !(m + 0 <= 25) }'
	for o in $(echo "$lines" | grep -o ' overflows=[0-9]*' | cut -d= -f2); do
		[ "$o" -eq 0 ]
	done

	# The load ends, and returns; the application then stalls for 3 s
	# (as in a long GC pause) while the clients keep coming.
	sleep 3
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$OFFERED" \
		--duration 12 --patience-ms "$PATIENCE_MS" >"$TESTBED_TMP/second" \
		2>"$TESTBED_TMP/second.sec" &
	lg=$!
	PIDS+=("$lg")
	sleep 3
	# What shedd says from the stall on, not what it said while it found
	# the rate at start-up.
	mark=$(wc -l <"$TESTBED_TMP/shedd.log")
	kill -STOP "$SLOW_PID"
	sleep 3
	kill -CONT "$SLOW_PID"
	wait "$lg"
	cat "$TESTBED_TMP/second"
	after=$(tail -n +$((mark + 1)) "$TESTBED_TMP/shedd.log" | grep -v ' | ')
	echo "$after" | grep -E 'mode=(overload|recovering|steady) '
	# The stall was seen, and the rate came back in stages, not at once.
	echo "$after" | grep -q 'why=.*stall'
	[ "$(echo "$after" | grep -c 'mode=recovering stage=')" -ge 2 ]
	echo "$after" | grep -q 'mode=recovering stage=3/3'
	good=$(ok_per_sec second 10 12)
	echo "goodput ${good}/s in the last seconds after the stall"
	[ "$good" -ge $((CAPACITY * 80 / 100)) ]
}
