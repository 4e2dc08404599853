#!/usr/bin/env bats
# backend.bats - a front-end that accepts every connection at once (as nginx
# or HAProxy) in front of a slow backend on another port of the server
# namespace. The front's accept queue stays empty, the backend's fills:
# without --backend-port shedd sees no overload and its limit stays far above
# what the backend serves; with it, shedd cuts, and goodput (the clients'
# answers within their patience) rises. The backend's SYNs are never judged.

load lib

setup() { testbed_up; }
teardown() { testbed_down; }

BACKEND_PORT=8090
PATIENCE_MS=250
# The backend: 4 workers x 10 ms, at most 400 answers/s, behind a queue of
# 128, whose sojourn when full (about 320 ms) passes the clients' patience.
# Offered: 1200 clients/s, three times what it can serve.
OFFERED=1200
LOAD_S=10
RELAY=${RELAY:-"$ROOT/.output/relay"}

# front_and_backend SECONDS: the relay on $PORT (backlog 4096) in front of
# the slowserver on $BACKEND_PORT, both on the server's address. Started
# through ip netns exec itself, not in_srv's subshell, so that their pids
# are theirs and the teardown ends them: bats waits for every process
# that holds its output, and the test would last the SECONDS.
front_and_backend() {
	ip netns exec "$NS_SRV" "$SLOWSERVER" --addr "$SRV_IP" --port "$BACKEND_PORT" --workers 4 \
		--service-ms 10 --dist fixed --backlog 128 --duration "$1" \
		>"$TESTBED_TMP/slow.out" 2>"$TESTBED_TMP/slow.err" &
	SLOW_PID=$!
	PIDS+=("$SLOW_PID")
	wait_listening slowserver "$BACKEND_PORT"
	ip netns exec "$NS_SRV" "$RELAY" --addr "$SRV_IP" --port "$PORT" --backend-addr "$SRV_IP" \
		--backend-port "$BACKEND_PORT" --duration "$1" \
		>"$TESTBED_TMP/relay.out" 2>"$TESTBED_TMP/relay.err" &
	RELAY_PID=$!
	PIDS+=("$RELAY_PID")
	wait_listening relay "$PORT"
}

# The backend's queue empties between the runs: the clients of the last
# one have given up, the workers take what they left.
backend_drained() {
	wait_for "an empty backend queue" 15 sh -c \
		"ip netns exec $NS_SRV ss -ltnH 'sport = :$BACKEND_PORT' | awk '{ q += \$2 } END { exit !(NR && q == 0) }'"
}

# run_phase NAME [SHEDD OPTION...]: shedd (aimd, its default start) with
# those options, the load, shedd stopped; GOOD is the mean ok/s of seconds
# 5-10, LIMIT the median limit of the status lines of seconds 5-9.
run_phase() {
	local name=$1
	shift
	: >"$TESTBED_TMP/shedd.log"
	shedd_start --port "$PORT" "$@"
	load "$name" "$OFFERED" "$LOAD_S" "$PATIENCE_MS"
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	cp "$TESTBED_TMP/shedd.log" "$TESTBED_TMP/shedd.$name.log"
	cat "$TESTBED_TMP/$name"
	GOOD=$(ok_per_sec "$name" 5 10)
	LIMIT=$(status_field limit | sed -n 5,9p | cut -d/ -f1 | cut -d. -f1 | sort -n | sed -n 3p)
	echo "$name: goodput ${GOOD}/s, median limit ${LIMIT}/s"
	grep -E 'mode=|why=' "$TESTBED_TMP/shedd.$name.log" | grep -v ' | ' | head -n 5 || true
}

@test "a backend's full queue: ignored without --backend-port, shed on with it" {
	front_and_backend 60

	# Not named: the front's queue is empty, the backend's is not shedd's
	# business. The limit stays above what is offered; goodput collapses.
	run_phase unnamed
	within "$LIMIT" "$OFFERED" 10000000
	[ "$GOOD" -lt 120 ]
	unnamed_good=$GOOD
	# The backend's overflows were there to see: they did not count.
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.unnamed.log" | grep -q 'overflows=[1-9]'

	backend_drained
	# Named: shedd cuts to what the backend serves, and goodput returns.
	run_phase named --backend-port "$BACKEND_PORT"
	grep -q 'why=' "$TESTBED_TMP/shedd.named.log"
	within "$LIMIT" 1 $((OFFERED * 2 / 3))
	within "$GOOD" 200 400
	[ "$GOOD" -ge $((unnamed_good * 2)) ]
	# The status line's depth is the backend's, against its own backlog of
	# 128, not the sum with the front's 4096.
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.named.log" | grep -q 'depth=[0-9]*/128 '
}

@test "a backend port is never in the XDP port map, and is not shed" {
	# Scaled: under emulation shedd's start alone can outlast 20 s.
	front_and_backend $((20 * TESTBED_TIME_SCALE))
	# A fixed rate of 1 SYN/s sheds nearly every SYN to the protected port.
	shedd_start --port "$PORT" --backend-port "$BACKEND_PORT" --controller off --rate 1 \
		--burst 1
	bpftool map dump pinned "$PIN_DIR/ports" >"$TESTBED_TMP/ports.json"
	cat "$TESTBED_TMP/ports.json"
	[ "$(jq -c '[.[].key]' "$TESTBED_TMP/ports.json")" = "[$PORT]" ]
	# From the client side, straight to the backend: all pass XDP.
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$BACKEND_PORT" --rate 100 \
		--duration 2 --patience-ms 2000 >"$TESTBED_TMP/direct" 2>/dev/null
	cat "$TESTBED_TMP/direct"
	ok=$(field ok "$(cat "$TESTBED_TMP/direct")")
	within "$ok" 195 200
}
