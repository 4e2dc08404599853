#!/usr/bin/env bash
# proxy.sh - goodput with nginx or HAProxy in front of an upstream of known
# capacity C, without shedd, with shedd on its kernel signals only, and with
# shedd fed by the proxy's request log; then keep-alive clients (several
# requests per connection) with shedd fed by nginx's log. Writes
# docs/results/proxy.csv and docs/results/proxy.md (OUT=DIR elsewhere).
# Every cell starts the upstream, shedd and the proxy afresh and stops them;
# every load is bounded; the testbed is removed on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/proxybed.sh
source scripts/proxybed.sh
testbed_script experiments

# The upstream: 4 workers x 20 ms = C of 200 requests/s, the capacity of
# the measured deployment, behind a listen backlog of 128: a full queue
# holds 128 / C = 640 ms of work, more than the patience, so under steady
# overload the upstream serves only requests whose clients have given up
# (and what overflows the queue waits for a SYN retransmit, 1 s): the
# measured collapse to a goodput of 0. (With a backlog of 64, 320 ms of
# work, the queue stays inside the patience and goodput stays near C
# without any shedding.)
# The workers are paced (slowserver --paced): a busy worker answers on a
# 20 ms grid, so C is the upstream's real capacity; unpaced, the hand-off
# and accept between two requests made it 2-3 % less, and "1 x C" was a
# slight overload whose queue grew all along (p50 302 ms behind nginx).
WORKERS=4
SERVICE_MS=20
BACKLOG=${BACKLOG:-128}
CAP=$((WORKERS * 1000 / SERVICE_MS))
# Patience 500 ms, as in the measurement of the problem: 25 service times,
# so a calm upstream answers well within it, and shorter than the client
# kernel's first SYN retransmit (1 s), so a dropped SYN is a lost request
# and a request that waits for the upstream past it is lost too.
PATIENCE_MS=${PATIENCE_MS:-500}
SECS=${SECS:-10}
WARM=${WARM:-3}
# CALM: seconds at 0.5 x C before each cell's load (not measured): shedd
# derives its latency target from the calm service it has seen; a shedd
# started straight into an overload learns an overloaded latency (README,
# "Latency target"). CALM=0 starts the load at once.
CALM=${CALM:-5}
LOADS=${LOADS:-"0.5 1 2 4 10"}
FRONTS=${FRONTS:-"nginx haproxy"}
CONFIGS=${CONFIGS:-"none kernel log"}
KA_LOADS=${KA_LOADS-"2 4"}
KA_RPCS=${KA_RPCS:-"1 10 100"}
OUT=${OUT:-docs/results}
# PROXY_SHEDD_ARGS: options added to every shedd run (e.g. a latency target)
# PROXY_LOGS=DIR: keep each cell's shedd log there, as FRONT-CONFIG-LOAD-RPC.log

mkdir -p "$OUT"
CSV="$OUT/proxy.csv"
MD="$OUT/proxy.md"

testbed_up
# The proxy opens a connection to the upstream per request, and closes
# first those its client gave up: widen the ports and let it reuse
# TIME_WAIT ones, or a run starves the next of local ports.
in_srv sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1

# sum_status FIELD: FIELD summed over shedd's status lines of the cell.
sum_status() {
	status_field "$1" | awk '{ s += $1 } END { printf "%d\n", s }'
}

# cell FRONT CONFIG LOAD RPC: one run; prints one CSV row. Not in a
# subshell: the processes it starts must stay in PIDS for the teardown.
cell() {
	local front=$1 config=$2 load=$3 rpc=$4 rate sock="" name t0 t1 s0 s1
	local line ok shed_per_sec samples bad limit
	rate=$(awk -v c="$CAP" -v l="$load" 'BEGIN { printf "%d", c * l }')
	name="$front-$config-$load-$rpc"
	upstream_start "$WORKERS" "$SERVICE_MS" "$BACKLOG"
	: >"$TESTBED_TMP/shedd.log"
	SHEDD_PID=
	case $config in
	none) ;;
	kernel)
		# shellcheck disable=SC2086 # extra shedd options, split on purpose
		shedd_start --port "$PORT" ${PROXY_SHEDD_ARGS:-}
		;;
	log)
		sock="$TESTBED_TMP/latency.sock"
		# shellcheck disable=SC2086
		shedd_start --port "$PORT" --latency-socket "$sock" ${PROXY_SHEDD_ARGS:-}
		;;
	esac
	front_start "$front" "$sock"
	# A calm spell first: the service ran at half its capacity before the
	# overload came, as a service does, and shedd learned its calm latency.
	if [ "$CALM" -gt 0 ]; then
		http_load "$name.calm" "$((CAP / 2))" "$CALM" "$PATIENCE_MS" "$rpc" 0
	fi
	http_load "$name" "$rate" "$SECS" "$PATIENCE_MS" "$rpc" "$WARM" &
	local lpid=$!
	PIDS+=("$lpid")
	sleep "$WARM"
	t0=$(date +%s.%N)
	s0=0
	if [ -n "$SHEDD_PID" ]; then s0=$(shed_total); fi
	wait "$lpid"
	pids_forget "$lpid"
	t1=$(date +%s.%N)
	s1=0
	if [ -n "$SHEDD_PID" ]; then s1=$(shed_total); fi
	stop_pid "$FRONT_PID"
	samples=- bad=- limit=-
	if [ -n "$SHEDD_PID" ]; then
		stop_pid "$SHEDD_PID"
		if [ -n "${PROXY_LOGS:-}" ]; then cp "$TESTBED_TMP/shedd.log" "$PROXY_LOGS/$name.log"; fi
		samples=$(sum_status latency_n)
		bad=$(sum_status bad)
		limit=$(status_field limit | tail -n 1 | cut -d/ -f1)
		limit=${limit:--}
	fi
	stop_pid "$UP_PID"
	line=$(cat "$TESTBED_TMP/$name")
	ok=$(field ok "$line")
	shed_per_sec=$(awk -v a="$s0" -v b="$s1" -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }')
	echo "$front,$config,$load,$rate,$rpc,$(field goodput_per_sec "$line"),$(awk -v g="$(field goodput_per_sec "$line")" -v c="$CAP" 'BEGIN { printf "%.0f", 100 * g / c }'),$(field p50_ms "$line"),$(field p99_ms "$line"),$shed_per_sec,$(field refused "$line"),$(field timeout_connect "$line"),$(field timeout_response "$line"),$(field error "$line"),$(field bad_status "$line"),$(field offered "$line"),$ok,$(field connections "$line"),$samples,$bad,$limit"
}

HEADER="front,config,load,offered_per_sec,requests_per_conn,goodput_per_sec,goodput_pct,p50_ms,p99_ms,shed_per_sec,refused,timeout_connect,timeout_response,error,bad_status,requests,ok,connections,latency_samples,latency_bad,last_limit"
echo "$HEADER" >"$CSV"
echo "upstream: $WORKERS workers x $SERVICE_MS ms (C = $CAP/s), backlog $BACKLOG; patience $PATIENCE_MS ms; $SECS s per cell, the first $WARM s left out"
for front in $FRONTS; do
	for config in $CONFIGS; do
		for load in $LOADS; do
			cell "$front" "$config" "$load" 1 >"$TESTBED_TMP/row"
			tee -a "$CSV" <"$TESTBED_TMP/row"
		done
	done
done
for load in $KA_LOADS; do
	for rpc in $KA_RPCS; do
		cell nginx log "$load" "$rpc" >"$TESTBED_TMP/row"
		tee -a "$CSV" <"$TESTBED_TMP/row"
	done
done

# The markdown table, from the CSV.
{
	echo "# Goodput behind a reverse proxy (make experiments EXPERIMENT=proxy)"
	echo
	echo "Upstream: slowserver --http --paced, $WORKERS workers x $SERVICE_MS ms fixed (C = $CAP requests/s; paced: a busy worker answers on a $SERVICE_MS ms grid), listen backlog $BACKLOG, accepting only when a worker is free."
	echo "Front: nginx 1.22 (1 worker, 4096 connections) or HAProxy 2.6 (maxconn 9000, option abortonclose) in the same namespace, proxying to it."
	echo "Clients: loadgen --http, open loop at load x C requests/s, patience $PATIENCE_MS ms, $SECS s per cell with the first $WARM s left out, after $CALM s at 0.5 x C (not measured; shedd learns the calm latency)."
	echo "Configurations: none (no shedd); kernel (shedd --port $PORT, no latency samples); log (shedd fed by the front's request log over --latency-socket)${PROXY_SHEDD_ARGS:+; shedd options: $PROXY_SHEDD_ARGS}."
	echo "shed/s: connections shedd refused per second after the warm-up (SYNs dropped or answered with a RST; proven ACKs refused with a RST in a verified class, which the client counts as an error: a reset before the reply). timeouts: the client's timeout_connect + timeout_response; errors: error + bad_status (a non-2xx reply). samples / bad: latency datagrams shedd took as samples / refused as malformed over the cell. limit: shedd's admitted rate at the end."
	echo
	echo "| front | config | load | req/conn | conns | goodput/s | % of C | p50 ms | p99 ms | shed/s | refused | timeouts | errors | samples | bad | limit |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %sx | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $5, $18, $6, $7, $8, $9, $10, $11, $12 + $13, $14 + $15, $19, $20, $21 }'
} >"$MD"
echo
cat "$MD"
