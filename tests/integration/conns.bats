#!/usr/bin/env bats
# conns.bats - the live connections to protected ports, counted in the
# kernel by the class of their peer (bpf/sojourn.bpf.c: opened when the
# child leaves SYN_RECV, closed at TCP_CLOSE) and exported as
# shedd_connections_live: real
# connections held open from the client namespace, one class by prefix and
# the default class, beside connections that must not count (another
# port, another namespace).

load lib

TCPECHO="$ROOT/.output/tcpecho"
METRICS_URL=http://127.0.0.1:9464/metrics
OTHER_PORT=8090

setup() {
	testbed_up
	local secs=$((60 * TESTBED_TIME_SCALE))
	[ "$secs" -le 600 ] || secs=600
	for p in "$PORT" "$OTHER_PORT"; do
		ip netns exec "$NS_SRV" "$TCPECHO" serve --addr "$SRV_IP" --port "$p" \
			--duration "$secs" >/dev/null 2>>"$TESTBED_TMP/echo.err" &
		PIDS+=($!)
		wait_listening echo "$p"
	done
}
teardown() {
	echo "shedd's log:"
	cat "$TESTBED_TMP/shedd.log" 2>/dev/null || true
	echo "the clients and the server said:"
	cat "$TESTBED_TMP/hold.out" "$TESTBED_TMP/echo.err" 2>/dev/null || true
	echo "the counts (conn_count) and the metric:"
	bpftool -j map dump name conn_count 2>&1 | jq -c '.[].formatted | [.key, ([.values[].value.opened] | add), ([.values[].value.closed] | add)]' 2>&1 || true
	in_srv curl -sS --max-time 5 "$METRICS_URL" 2>&1 | grep connections_live || true
	testbed_down
}

# metric NAME CLASS: the sample of NAME{class="CLASS"} in a fresh scrape.
metric() {
	in_srv curl -sS --fail --max-time 5 "$METRICS_URL" |
		awk -v n="$1" -v c="class=\"$2\"}" \
			'index($1, n "{") == 1 && substr($1, length($1) - length(c) + 1) == c {
				print $2; found = 1 } END { exit !found }'
}

# metric_is NAME CLASS VALUE: the sample is VALUE now.
metric_is() {
	[ "$(metric "$1" "$2")" = "$3" ]
}

# hold N MS [ADDR PORT NS]: N connections from the client namespace (or NS)
# to ADDR:PORT (the server's protected port), each held open MS ms after
# its exchange, in the background.
hold() {
	local i ns=${5:-$NS_CLI} t=$(($2 + 5000 * TESTBED_TIME_SCALE))
	[ "$t" -le 60000 ] || t=60000 # tcpecho's bound
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$ns" "$TCPECHO" connect --addr "${3:-$SRV_IP}" --port "${4:-$PORT}" \
			--bytes 100 --hold-ms "$2" --timeout-ms "$t" \
			>>"$TESTBED_TMP/hold.out" 2>&1 &
		HOLD_PIDS+=($!)
		PIDS+=($!)
	done
}

# hold_done: every held connection ended well.
hold_done() {
	local pid
	for pid in "${HOLD_PIDS[@]}"; do
		wait "$pid"
	done
	HOLD_PIDS=()
	cat "$TESTBED_TMP/hold.out"
	run grep -c '^result=ok' "$TESTBED_TMP/hold.out"
	[ "$output" = "$1" ]
}

@test "connections held open count as live in their peer's class while open, and as closed once they end" {
	HOLD_PIDS=()
	shedd_start --port "$PORT" --verify off --prefix "$CLI_IP/32=critical"
	hold 6 $((3000 * TESTBED_TIME_SCALE))
	wait_for "6 live critical connections" 5 metric_is shedd_connections_live critical 6
	run metric shedd_connections_live sheddable
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
	hold_done 6
	wait_for "the 6 closed" 5 metric_is shedd_connections_live critical 0
}

@test "a peer no prefix names counts in the default class; another port and another namespace's connections do not count" {
	HOLD_PIDS=()
	shedd_start --port "$PORT" --verify off --default-class sheddable_plus
	# Another port of the same server, not protected.
	hold 3 $((3000 * TESTBED_TIME_SCALE)) "$SRV_IP" "$OTHER_PORT"
	# The protected port's number in the client's own namespace, over
	# its loopback: the tracepoint sees every namespace's sockets.
	ip netns exec "$NS_CLI" "$TCPECHO" serve --addr 127.0.0.1 --port "$PORT" \
		--duration $((60 * TESTBED_TIME_SCALE)) >/dev/null 2>>"$TESTBED_TMP/echo.err" &
	PIDS+=($!)
	wait_for "echo in cli" 5 sh -c "ip netns exec $NS_CLI ss -ltnH | grep -q '127.0.0.1:$PORT '"
	hold 2 $((3000 * TESTBED_TIME_SCALE)) 127.0.0.1 "$PORT"
	hold 4 $((3000 * TESTBED_TIME_SCALE))
	wait_for "4 live sheddable_plus connections" 5 \
		metric_is shedd_connections_live sheddable_plus 4
	# The 5 others are open too (each side's ss sees them established).
	wait_for "3 on the other port" 5 sh -c \
		"[ \$(ip netns exec $NS_SRV ss -tnH state established '( sport = :$OTHER_PORT )' | wc -l) -eq 3 ]"
	wait_for "2 over the client's loopback" 5 sh -c \
		"[ \$(ip netns exec $NS_CLI ss -tnH state established '( sport = :$PORT )' | wc -l) -eq 2 ]"
	for c in critical_plus critical sheddable_plus sheddable; do
		run metric shedd_connections_live "$c"
		[ "$status" -eq 0 ]
		[ "$output" = "$([ "$c" = sheddable_plus ] && echo 4 || echo 0)" ]
	done
	hold_done 9
	wait_for "the 4 closed" 5 metric_is shedd_connections_live sheddable_plus 0
}
