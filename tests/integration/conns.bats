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
	in_srv curl -sS --max-time 5 "$METRICS_URL" 2>&1 | grep -E "^shedd_(connections|requests_)" || true
	testbed_down
}

# metric NAME CLASS: the sample of NAME{class="CLASS"} in a fresh scrape.
metric() {
	in_srv curl -sS --fail --max-time 5 "$METRICS_URL" |
		awk -v n="$1" -v c="class=\"$2\"}" \
			'index($1, n "{") == 1 && substr($1, length($1) - length(c) + 1) == c {
				print $2; found = 1 } END { exit !found }'
}

# metric1 NAME: the sample of NAME (no class) in a fresh scrape.
metric1() {
	in_srv curl -sS --fail --max-time 5 "$METRICS_URL" |
		awk -v n="$1" 'index($1, n "{") == 1 { print $2; found = 1 } END { exit !found }'
}

# metric_is NAME CLASS VALUE: the sample is VALUE now.
metric_is() {
	[ "$(metric "$1" "$2")" = "$3" ]
}

# hold N [ADDR PORT NS]: N connections from the client namespace (or NS)
# to ADDR:PORT (the server's protected port), each held open after its
# exchange until hold_end (at most HOLD_MS), in the background.
HOLD_MS=50000
hold() {
	local i ns=${4:-$NS_CLI} t=$((5000 * TESTBED_TIME_SCALE))
	[ "$t" -le 60000 ] || t=60000 # tcpecho's bound
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$ns" "$TCPECHO" connect --addr "${2:-$SRV_IP}" --port "${3:-$PORT}" \
			--bytes 100 --hold-ms "$HOLD_MS" --timeout-ms "$t" \
			>>"${HOLD_OUT:-$TESTBED_TMP/hold.out}" 2>&1 &
		HOLD_PIDS+=($!)
		PIDS+=($!)
	done
}

# hold_end: the held connections end their hold now (tcpecho: SIGTERM),
# each saying how its connection was; waits for them.
hold_end() {
	local pid
	for pid in "${HOLD_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${HOLD_PIDS[@]}"; do
		wait "$pid" || true
	done
	HOLD_PIDS=()
}

# hold_done_in FILE OK RESET: the held connections that wrote to FILE
# ended, OK of them well and RESET reset during their hold.
hold_done_in() {
	hold_end
	echo "$1:"
	cat "$1"
	run grep -c '^result=ok' "$1"
	[ "$output" = "$2" ]
	run grep -c '^result=ECONNRESET stage=hold' "$1"
	[ "$output" = "$3" ]
}

# hold_done N: the held connections end their hold, N of them well.
hold_done() {
	hold_end
	cat "$TESTBED_TMP/hold.out"
	run grep -c '^result=ok' "$TESTBED_TMP/hold.out"
	[ "$output" = "$1" ]
}

@test "connections held open count as live in their peer's class while open, and as closed once they end" {
	HOLD_PIDS=()
	shedd_start --port "$PORT" --verify off --prefix "$CLI_IP/32=critical"
	hold 6
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
	hold 3 "$SRV_IP" "$OTHER_PORT"
	# The protected port's number in the client's own namespace, over
	# its loopback: the tracepoint sees every namespace's sockets.
	ip netns exec "$NS_CLI" "$TCPECHO" serve --addr 127.0.0.1 --port "$PORT" \
		--duration $((60 * TESTBED_TIME_SCALE)) >/dev/null 2>>"$TESTBED_TMP/echo.err" &
	PIDS+=($!)
	wait_for "echo in cli" 5 sh -c "ip netns exec $NS_CLI ss -ltnH | grep -q '127.0.0.1:$PORT '"
	hold 2 127.0.0.1 "$PORT"
	hold 4
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

# overload_feed ROUNDS: ROUNDS bursts of 100 log lines 100 ms apart, each a
# request answered in 1 s that followed another on its connection (cr=5),
# to shedd's latency socket: a latency overload on keep-alive connections,
# as nginx would log it, in the background (bounded: ROUNDS x 100 ms).
# A burst is large enough that the served rate reads over 100/s even where
# a round takes a second (a guest under emulation): Little's law then
# cuts the 30 connections to the floor, 8 (served x 0.95 s > 30).
overload_feed() {
	local i
	(
		for ((i = 0; i < $1; i++)); do
			yes "shedd rt=1.000 cr=5 st=200" | head -n 100 |
				in_srv logger --socket-errors=off -u "$LATENCY_SOCK" -d
			sleep 0.1
		done
	) &
	PIDS+=($!)
}

# tries N: N new connections from the client to the protected port, one
# after another, each given 1 s (scaled); prints how many exchanged.
tries() {
	local i ok=0
	for ((i = 0; i < $1; i++)); do
		if ip netns exec "$NS_CLI" "$TCPECHO" connect --addr "$SRV_IP" --port "$PORT" \
			--bytes 100 --timeout-ms $((1000 * TESTBED_TIME_SCALE)) 2>&1 |
			grep -q '^result=ok'; then
			ok=$((ok + 1))
		fi
	done
	echo "$ok"
}

@test "a latency overload on keep-alive connections holds the live connections at the door: the open ones stay, new ones wait" {
	HOLD_PIDS=()
	shedd_start --port "$PORT" --verify off --prefix "$CLI_IP/32=critical" \
		--latency-target 50ms
	hold 30
	wait_for "30 live critical connections" 5 metric_is shedd_connections_live critical 30
	run metric1 shedd_connections_limit_in_force
	[ "$output" = 0 ] # no limit while calm
	run metric shedd_connections_limit critical
	[ "$output" = 0 ]
	overload_feed $((80 * TESTBED_TIME_SCALE))
	wait_for "the connection limit" 5 grep -q "connection limit: " "$TESTBED_TMP/shedd.log"
	grep "connection limit" "$TESTBED_TMP/shedd.log"
	run metric1 shedd_connections_limit_in_force
	[ "$output" = 1 ]
	run metric shedd_connections_limit critical
	echo "limit: $output"
	[ "$status" -eq 0 ]
	[ "$output" -gt 0 ]
	[ "$output" -lt 30 ]
	# The log's session shape says the requests come on open connections.
	run metric1 shedd_requests_per_connection_known
	[ "$output" = 1 ] # the log's session shape
	run metric1 shedd_requests_on_open_connections_ratio
	echo "requests on open connections: $output"
	run awk -v v="$output" 'BEGIN { exit !(v > 0.5) }'
	[ "$status" -eq 0 ]
	# The door is shut to the class while it holds more than its share:
	# at most the one token of depth a bucket always has gets in.
	run tries 10
	echo "new connections that got in: $output of 10"
	[ "$output" -le 1 ]
	# The open ones were never touched.
	hold_done 30
}

@test "--conn-limit off: the same overload, the SYN limit alone lets new connections in" {
	HOLD_PIDS=()
	shedd_start --port "$PORT" --verify off --prefix "$CLI_IP/32=critical" \
		--latency-target 50ms --conn-limit off
	hold 30
	wait_for "30 live critical connections" 5 metric_is shedd_connections_live critical 30
	overload_feed $((80 * TESTBED_TIME_SCALE))
	wait_for "a latency overload" 5 grep -q "overload" "$TESTBED_TMP/shedd.log"
	run tries 10
	echo "new connections that got in: $output of 10"
	[ "$output" -ge 5 ]
	run metric1 shedd_connections_limit_in_force
	[ "$output" = 0 ]
	run grep -c "connection limit: " "$TESTBED_TMP/shedd.log"
	[ "$output" = 0 ]
	hold_done 30
}

# recalled CLASS: the idle connections of CLASS --recall ended so far.
recalled() {
	metric shedd_connections_recalled_total "$1"
}

# recalled_at_least CLASS N
recalled_at_least() {
	local v
	v=$(recalled "$1") || return 1
	[ "$v" -ge "$2" ]
}

@test "--recall: over its share, a class's idle connections go back to the door, the youngest first; the oldest stay" {
	HOLD_PIDS=()
	shedd_start --port "$PORT" --verify off --prefix "$CLI_IP/32=critical" \
		--latency-target 50ms --recall 100
	# 10 connections, then 20 younger ones, all idle after their
	# exchange (tcpecho's server waits for the next bytes).
	HOLD_OUT="$TESTBED_TMP/old.out" hold 10
	wait_for "10 live critical connections" 5 metric_is shedd_connections_live critical 10
	HOLD_OUT="$TESTBED_TMP/young.out" hold 20
	wait_for "30 live critical connections" 5 metric_is shedd_connections_live critical 30
	overload_feed $((80 * TESTBED_TIME_SCALE))
	wait_for "the connection limit" 5 grep -q "connection limit: " "$TESTBED_TMP/shedd.log"
	limit=$(metric shedd_connections_limit critical)
	echo "limit: $limit"
	[ "$limit" -lt 10 ]
	# Ended down to the class's share, at most 100 a second: the 20
	# younger ones, then the youngest of the older ones. (The limit is
	# 8 on an overload's tick, and grows only while the latency is within
	# its target: some 20-22 are ended.)
	wait_for "20 recalled" 10 recalled_at_least critical 20
	grep "recall: ending idle connections" "$TESTBED_TMP/shedd.log"
	run metric1 shedd_connections_recall_failures_total
	[ "$output" = 0 ]
	hold_end
	run recalled critical
	echo "recalled: $output"
	[ "$status" -eq 0 ]
	within "$output" 20 22
	n=$output
	hold_done_in "$TESTBED_TMP/young.out" 0 20
	hold_done_in "$TESTBED_TMP/old.out" $((30 - n)) $((n - 20))
}
