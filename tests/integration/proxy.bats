#!/usr/bin/env bats
# proxy.bats - shedd in front of a reverse proxy (nginx, HAProxy) that
# accepts every connection at once, with an upstream of known capacity C
# behind it (scripts/proxybed.sh): the HTTP client and the proxies' log
# wiring, a calm run that sheds nothing, and overload at 3x C where shedd,
# fed by the proxy's request log, keeps goodput near C. The overload tests
# need shedd to read the proxies' log lines as latency samples and to find
# a latency target by itself: without those they measure a goodput of 0.

load lib
source "$(dirname "$BATS_TEST_FILENAME")/../../scripts/proxybed.sh"

setup() {
	# scripts/deps.sh installs both: missing is a broken set-up, not a skip.
	command -v nginx >/dev/null && command -v haproxy >/dev/null || {
		echo "nginx or haproxy is not installed (scripts/deps.sh)" >&2
		return 1
	}
	testbed_up
	in_srv sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1
}
teardown() { testbed_down; }

# As scripts/proxy.sh: C = 4 workers x 20 ms = 200/s; a backlog of 128
# holds 640 ms of work, more than the patience of 500 ms.
WORKERS=4
SERVICE_MS=20
BACKLOG=128
CAP=200
PATIENCE_MS=500
SOCK_NAME=latency.sock

upstream() { upstream_start "$WORKERS" "$SERVICE_MS" "$BACKLOG"; }

# shedd_fed_by FRONT: shedd protecting $PORT, fed by FRONT's request log.
shedd_fed_by() {
	shedd_start --port "$PORT" --latency-socket "$TESTBED_TMP/$SOCK_NAME"
	front_start "$1" "$TESTBED_TMP/$SOCK_NAME"
}

# status_sum FIELD: FIELD summed over shedd's status lines so far.
status_sum() {
	status_field "$1" | awk '{ s += $1 } END { print s + 0 }'
}

# datagrams_are N: shedd counted N datagrams on its latency socket.
datagrams_are() {
	[ $(($(status_sum latency_n) + $(status_sum bad))) -eq "$1" ]
}

# report NAME: the client's summary and shedd's last status lines.
report() {
	echo "client: $(cat "$TESTBED_TMP/$1")"
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | tail -n 3 || true
}

@test "loadgen --http: keep-alive through nginx carries 10 requests per connection, all ok" {
	upstream
	front_start nginx
	http_load ka 25 4 "$PATIENCE_MS" 10
	line=$(cat "$TESTBED_TMP/ka")
	echo "$line"
	[ "$(field offered "$line")" -eq 100 ]
	[ "$(field ok "$line")" -eq 100 ]
	# Requests 40 ms apart, served in about 21 ms: each finds the last
	# one's connection idle, so 100 / 10 = 10 connections, a few more if
	# a request outlasted the gap.
	within "$(field connections "$line")" 10 15
}

@test "loadgen --http: a 502 from the proxy is bad_status, not ok" {
	# nginx with no upstream listening answers 502 Bad Gateway.
	front_start nginx
	http_load bad 20 2 "$PATIENCE_MS"
	line=$(cat "$TESTBED_TMP/bad")
	echo "$line"
	[ "$(field ok "$line")" -eq 0 ]
	[ "$(field bad_status "$line")" -eq 40 ]
}

@test "nginx logs each request to shedd's latency socket" {
	upstream
	shedd_fed_by nginx
	http_load calm 50 3 "$PATIENCE_MS"
	# One datagram per request, taken as a sample (latency_n) or, by a
	# shedd that cannot parse the format, refused as malformed (bad); the
	# status line of the last second comes up to a second later.
	wait_for "150 datagrams counted" 3 datagrams_are 150
	report calm
	echo "datagrams: latency_n=$(status_sum latency_n) bad=$(status_sum bad)"
}

@test "calm nginx at 0.5x C with shedd fed by its log: nothing shed, every request ok" {
	upstream
	shedd_fed_by nginx
	http_load calm $((CAP / 2)) 8 "$PATIENCE_MS"
	report calm
	line=$(cat "$TESTBED_TMP/calm")
	echo "shed: $(shed_total)"
	[ "$(shed_total)" -eq 0 ]
	[ "$(field refused "$line")" -eq 0 ]
	[ "$(field ok "$line")" -eq "$(field offered "$line")" ]
}

# overload FRONT: 4 s of calm at 0.5x C (shedd learns the service's calm
# latency, as it does before any overload), then 3x C for 16 s, the first
# 6 s (the controller finding the rate) left out; goodput at least 90 % of
# C, and the queue behind the latency drained: shedd says it began a drain,
# and the successful requests' p50 is under 80 ms (20 ms of service; 98 and
# 133 ms with the drain taken out, 42-58 ms with it).
overload() {
	upstream
	shedd_fed_by "$1"
	http_load calm $((CAP / 2)) 4 "$PATIENCE_MS" 1 0
	[ "$(field ok "$(cat "$TESTBED_TMP/calm")")" -eq "$(field offered "$(cat "$TESTBED_TMP/calm")")" ]
	grep -q 'latency_target=auto:[0-9]' "$TESTBED_TMP/shedd.log"
	http_load over $((3 * CAP)) 16 "$PATIENCE_MS" 1 6
	report over
	line=$(cat "$TESTBED_TMP/over")
	good=$(field goodput_per_sec "$line" | cut -d. -f1)
	p50=$(field p50_ms "$line" | cut -d. -f1)
	echo "goodput ${good}/s of C ${CAP}/s, p50 ${p50} ms; shed $(shed_total) SYNs"
	# At most C, and 5 % for the window's edges: the goodput counts the
	# requests started in the window, answered up to a patience later,
	# so a queue that shrinks over the window adds a few to it.
	within "$good" $((CAP * 90 / 100)) $((CAP * 105 / 100))
	grep -q 'drain: latency [0-9]* ms over target' "$TESTBED_TMP/shedd.log"
	within "$p50" 0 80
}

@test "nginx at 3x C, shedd fed by its log: goodput >= 90 % of C, the queue drained" {
	overload nginx
}

@test "HAProxy at 3x C, shedd fed by its log: goodput >= 90 % of C, the queue drained" {
	overload haproxy
}
