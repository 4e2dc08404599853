#!/usr/bin/env bats
# ports.bats - ports judged one by one, on real sockets: two protected
# ports, each served by its own server, clients on both; the server of one
# port is stopped (SIGSTOP) while clients keep coming. Its queue fills and
# its SYNs overflow while the other port accepts: its trouble is its own.
# shedd does not cut the other port's admissions for it, names it, and
# sheds the SYNs to it at a limit of its own in the XDP program.

load lib

setup() {
	testbed_up
	STOPPED=()
	PORT2=$((PORT + 1))
}

# A stopped process takes no SIGTERM until it runs again: every server
# stopped here is continued before the testbed's teardown ends it.
teardown() {
	local pid
	for pid in "${STOPPED[@]}"; do
		kill -CONT "$pid" 2>/dev/null || true
	done
	testbed_down
}

# servers_start: a slowserver on each port, 2 workers x 10 ms (about
# 200/s each), backlog 128; their pids in SRV1, SRV2.
servers_start() {
	local p
	for p in "$PORT" "$PORT2"; do
		ip netns exec "$NS_SRV" "$SLOWSERVER" --addr "$SRV_IP" --port "$p" --duration 150 \
			--workers 2 --service-ms 10 --dist fixed --backlog 128 \
			>"$TESTBED_TMP/slow$p.out" 2>"$TESTBED_TMP/slow$p.err" &
		PIDS+=($!)
		[ "$p" = "$PORT" ] && SRV1=$! || SRV2=$!
		wait_listening "slowserver on $p" "$p"
	done
}

# run_both NAME: clients at $RATE/s Poisson on each port for $SECS s, the
# server of $PORT2 stopped $STOP_AT s in and continued at the end; the
# per-second lines in NAME1.sec (healthy port) and NAME2.sec. Then waits
# for the accept queues to empty.
run_both() {
	local t0 lg1 lg2
	t0=$(date +%s.%N)
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$RATE" --poisson \
		--seed 7 --duration "$SECS" --patience-ms "$PATIENCE_MS" >"$TESTBED_TMP/${1}1" \
		2>"$TESTBED_TMP/${1}1.sec" &
	lg1=$!
	PIDS+=("$lg1")
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT2" --rate "$RATE" \
		--poisson --seed 8 --duration "$SECS" --patience-ms "$PATIENCE_MS" \
		>"$TESTBED_TMP/${1}2" 2>"$TESTBED_TMP/${1}2.sec" &
	lg2=$!
	PIDS+=("$lg2")
	sleep_until "$t0" "$STOP_AT"
	kill -STOP "$SRV2"
	STOPPED+=("$SRV2")
	wait "$lg1"
	wait "$lg2" || true
	kill -CONT "$SRV2"
	STOPPED=()
	cat "$TESTBED_TMP/${1}1" "$TESTBED_TMP/${1}2"
	wait_for "empty accept queues" 10 sh -c \
		"ip netns exec $NS_SRV ss -ltnH '( sport = :$PORT or sport = :$PORT2 )' | awk '{ q += \$2 } END { exit !(NR && q == 0) }'"
}

# The SYNs the program shed for the ports' own limits: port_buckets, every
# slot and CPU.
port_shed() {
	bpftool map dump pinned "$PIN_DIR/port_buckets" |
		jq '[.[] | .values[] | .value.shed] | add // 0'
}

# Clients at 100/s on each port (half a server's capacity), patience 1 s;
# the server of the second port stopped at second 5 of 22; goodput of the
# first port measured over seconds 12-22, once a limit cut for the stopped
# one would have come down. An emulated guest of the kernel matrix serves
# about half as much: the rate is divided by TESTBED_TIME_SCALE there.
RATE=$((100 / TESTBED_TIME_SCALE))
SECS=22
STOP_AT=5
PATIENCE_MS=1000

@test "one of two protected ports stopped: the other's goodput with shedd >= 90 % of without; the port is named and its SYNs shed at XDP" {
	servers_start
	run_both without
	without=$(ok_per_sec without1 12 "$SECS")
	echo "healthy port without shedd: ${without}/s of ${RATE}/s offered"
	within "$without" $((RATE * 85 / 100)) $((RATE * 115 / 100))

	shedd_start --port "$PORT" --port "$PORT2"
	run_both with
	with=$(ok_per_sec with1 12 "$SECS")
	echo "healthy port with shedd: ${with}/s of ${RATE}/s offered (${without}/s without)"
	grep -E 'mode=|port ' "$TESTBED_TMP/shedd.log" | cut -c1-300 | tail -n 20 || true
	limits=$(status_field limit | cut -d/ -f1)
	echo "the service's limit:" $limits
	[ "$with" -ge $((without * 90 / 100)) ]
	# Named, once, with what the other port does.
	run grep -c "port $PORT2: every listener in trouble (listeners: 1, accept queue [0-9]*/128) while port $PORT accepts: its own trouble" \
		"$TESTBED_TMP/shedd.log"
	[ "$status" -eq 0 ]
	[ "$output" -eq 1 ]
	status_field port_limits | grep -q "^$PORT2:"
	# The program shed the stopped port's SYNs at its own limit: most of
	# what its clients sent from the limit on (about 2 s after the stop).
	shed=$(port_shed)
	echo "SYNs to port $PORT2 shed at its own limit: $shed"
	within "$shed" $((RATE * (SECS - STOP_AT - 4) / 2)) $((RATE * SECS * 4))
	# Back: the server accepts again, the queue drained, the limit removed.
	wait_for "the port's limit removed" 10 grep -q "port $PORT2 accepts again" \
		"$TESTBED_TMP/shedd.log"
}
