#!/usr/bin/env bash
# proxy.sh - goodput with nginx or HAProxy in front of an upstream of known
# capacity C: without shedd, with shedd on its kernel signals only, and with
# shedd fed by the proxy's request log; each with two open-loop clients,
# the project's loadgen and httperf (Debian's); shedd started into the
# overload (cold) or after a calm spell (warm), verifying (its default) or
# with --verify off; keep-alive clients too. Each cell's goodput over the
# whole run, from its third second on and over the steady window, and the
# limit's coefficient of variation over that window. Writes
# docs/results/proxy.csv, proxy-limits.csv, proxy.md and proxy.png
# (EXP_OUT=DIR elsewhere).
# Every cell starts the upstream, shedd and the proxy afresh and stops them;
# every load is bounded; the testbed is removed on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/proxybed.sh
source scripts/proxybed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin proxy 0 18 PROXY_CELLS FRONTS CLIENTS SECS STEADY CALM PATIENCE_MS BACKLOG PROXY_SHEDD_ARGS WORKERS SERVICE_MS UPSTREAM_DIST
testbed_script experiments
trap 'testbed_down; httperf_cg_remove; rm -rf "$TESTBED_TMP"' EXIT

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
# WORKERS, SERVICE_MS and UPSTREAM_DIST (fixed or exp: exponential
# service times of that mean) give the upstream another shape; C follows.
WORKERS=${WORKERS:-4}
SERVICE_MS=${SERVICE_MS:-20}
UPSTREAM_DIST=${UPSTREAM_DIST:-fixed}
BACKLOG=${BACKLOG:-128}
CAP=$((WORKERS * 1000 / SERVICE_MS))
# Patience 500 ms, as in the measurement of the problem: 25 service times,
# so a calm upstream answers well within it, and shorter than the client
# kernel's first SYN retransmit (1 s), so a dropped SYN is a lost request
# and a request that waits for the upstream past it is lost too.
PATIENCE_MS=${PATIENCE_MS:-500}
# SECS: seconds of load per cell. Three goodputs from the clients'
# per-second lines: the whole run (seconds 1-SECS, the controller's
# warm-up included), from the third second on (3-SECS), and the steady
# window (STEADY-SECS).
SECS=${SECS:-15}
STEADY=${STEADY:-6}
# A warm cell runs CALM seconds at 0.5 x C first (not measured), with the
# cell's client: the service ran calm before the overload came, and shedd
# saw its calm latency. A cold cell has no calm: shedd is started
# COLD_LEAD seconds before the load, as after a restart in an incident.
CALM=${CALM:-5}
COLD_LEAD=${COLD_LEAD:-2}
# PROXY_CELLS: default (about 5 minutes), full (about 13 minutes), all
# (every combination, about 40 minutes) or list (the lines of CELLS=, as
# cells prints them); FRONTS= and CLIENTS= narrow default, full and all.
PROXY_CELLS=${PROXY_CELLS:-default}
FRONTS=${FRONTS:-"nginx haproxy"}
CLIENTS=${CLIENTS:-"loadgen httperf"}
OUT=$EXP_OUT
# STATUS_INTERVAL: shedd's --status-interval; its status lines give the
# limit's samples (scripts/proxybed.sh, limit_watch).
STATUS_INTERVAL=${STATUS_INTERVAL:-200ms}
# PROXY_SHEDD_ARGS: options added to every shedd run (e.g. a latency target)
# PROXY_LOGS=DIR: keep each cell's shedd log there, as the cell's name .log,
# and the client's per-second lines, as its name .sec

mkdir -p "$OUT"
CSV="$OUT/proxy.csv"
LIMITS="$OUT/proxy-limits.csv"
MD="$OUT/proxy.md"

# cells: the cells to run, one a line: FRONT CLIENT CONFIG START VERIFY
# LOAD REQUESTS_PER_CONN (START cold, warm or - without shedd; VERIFY
# default, off or -).
cells() {
	local f c l v
	case $PROXY_CELLS in
	default)
		for f in $FRONTS; do
			case " $CLIENTS " in *" loadgen "*) echo "$f loadgen none - - 3 1"; echo "$f loadgen none - - 10 1" ;; esac
			for l in 3 10; do
				for c in $CLIENTS; do echo "$f $c log cold default $l 1"; done
			done
			for c in $CLIENTS; do echo "$f $c log warm default 4 1"; done
		done
		;;
	full)
		for f in $FRONTS; do
			for l in 3 10; do
				case " $CLIENTS " in *" loadgen "*) echo "$f loadgen none - - $l 1" ;; esac
			done
			for l in 3 10; do
				for v in default off; do
					for c in $CLIENTS; do echo "$f $c log cold $v $l 1"; done
				done
			done
			for l in 2 4 10; do
				for c in $CLIENTS; do echo "$f $c log warm default $l 1"; done
			done
			for c in $CLIENTS; do echo "$f $c log warm off 4 1"; done
		done
		;;
	all)
		for f in $FRONTS; do
			for l in 0.5 1 2 4 10; do
				for c in $CLIENTS; do
					echo "$f $c none - - $l 1"
					echo "$f $c kernel warm default $l 1"
				done
			done
			for v in default off; do
				for c in $CLIENTS; do
					for l in 3 10; do echo "$f $c log cold $v $l 1"; done
					for l in 0.5 1 2 3 4 10; do echo "$f $c log warm $v $l 1"; done
				done
			done
		done
		for l in 2 4; do
			for r in 1 10 100; do echo "nginx loadgen log warm default $l $r"; done
		done
		;;
	list) printf '%s\n' "$CELLS" | sed '/^[[:space:]]*$/d' ;;
	*)
		echo "proxy.sh: PROXY_CELLS='$PROXY_CELLS': expected default, full, all or list" >&2
		return 1
		;;
	esac
}

# client_load CLIENT NAME RATE SECONDS RPC: the cell's client; per-second
# lines in NAME.sec.
client_load() {
	case $1 in
	loadgen) http_load "$2" "$3" "$4" "$PATIENCE_MS" "$5" 0 ;;
	httperf)
		if [ "$5" != 1 ]; then
			echo "proxy.sh: httperf cells have one request per connection" >&2
			return 1
		fi
		httperf_load "$2" "$3" "$4" "$PATIENCE_MS" 0
		;;
	*) echo "proxy.sh: unknown client '$1' (loadgen, httperf)" >&2; return 1 ;;
	esac
}

# pct_of_cap NAME FROM TO: the mean goodput of seconds FROM-TO in % of C.
pct_of_cap() {
	awk -v g="$(ok_per_sec "$1" "$2" "$3")" -v c="$CAP" 'BEGIN { printf "%.0f", 100 * g / c }'
}

# sum_status FIELD: FIELD summed over shedd's status lines of the cell.
sum_status() {
	status_field "$1" | awk '{ s += $1 } END { printf "%d\n", s }'
}

# cell FRONT CLIENT CONFIG START VERIFY LOAD RPC: one run; prints one CSV
# row and appends the limit's trace to $LIMITS. Not in a subshell: the
# processes it starts must stay in PIDS for the teardown.
cell() {
	local front=$1 client=$2 config=$3 start=$4 verify=$5 load=$6 rpc=$7
	local rate sock="" name t0 t1 s0 s1 t_up lpid line limits cov
	local samples=- bad=- limit=- p50=- p99=- cpu=-
	local args
	rate=$(awk -v c="$CAP" -v l="$load" 'BEGIN { printf "%d", c * l }')
	name="$front-$client-$config-$start-$verify-$load-$rpc"
	upstream_start "$WORKERS" "$SERVICE_MS" "$BACKLOG" "$UPSTREAM_DIST"
	: >"$TESTBED_TMP/shedd.log"
	SHEDD_PID=
	args=(--status-interval "$STATUS_INTERVAL")
	[ "$verify" = off ] && args+=(--verify off)
	# shellcheck disable=SC2206 # extra shedd options, split on purpose
	args+=(${PROXY_SHEDD_ARGS:-})
	case $config in
	none) ;;
	kernel) shedd_start --port "$PORT" "${args[@]}" ;;
	# A fixed threshold at 0.9 x C, no controller.
	fixed) shedd_start --port "$PORT" --controller off --rate $((CAP * 9 / 10)) "${args[@]}" ;;
	log)
		sock="$TESTBED_TMP/latency.sock"
		shedd_start --port "$PORT" --latency-socket "$sock" "${args[@]}"
		;;
	esac
	t_up=$(date +%s.%N)
	if [ -n "$SHEDD_PID" ]; then limit_watch; fi
	front_start "$front" "$sock"
	case $start in
	warm) client_load "$client" "$name.calm" "$((CAP / 2))" "$CALM" "$rpc" ;;
	cold)
		# The load comes COLD_LEAD s after shedd started: a lead of
		# time, not a wait for a condition.
		sleep_until "$t_up" "$COLD_LEAD"
		;;
	esac
	s0=0
	if [ -n "$SHEDD_PID" ]; then s0=$(shed_total); fi
	t0=$(date +%s.%N)
	client_load "$client" "$name" "$rate" "$SECS" "$rpc" &
	lpid=$!
	PIDS+=("$lpid")
	wait "$lpid"
	pids_forget "$lpid"
	t1=$(date +%s.%N)
	# httperf's first second begins when its first processes start.
	line=$(cat "$TESTBED_TMP/$name")
	if [ "$client" = httperf ]; then t0=$(field start "$line"); fi
	s1=0
	if [ -n "$SHEDD_PID" ]; then s1=$(shed_total); fi
	stop_pid "$FRONT_PID"
	limits=
	cov=-
	if [ -n "$SHEDD_PID" ]; then
		stop_pid "$SHEDD_PID"
		if [ -n "${PROXY_LOGS:-}" ]; then
			cp "$TESTBED_TMP/shedd.log" "$PROXY_LOGS/$name.log"
			cp "$TESTBED_TMP/$name.sec" "$PROXY_LOGS/$name.sec"
		fi
		samples=$(sum_status latency_n)
		bad=$(sum_status bad)
		wait "$LIMIT_WATCH_PID" 2>/dev/null || true
		pids_forget "$LIMIT_WATCH_PID"
		limits=$(limit_trace "$t0" "$SECS")
		limit=$(echo "$limits" | awk '{ print $NF }')
		cov=$(field cov_pct "$(limit_stats "$t0" "$STEADY" "$SECS")")
	fi
	stop_pid "$UP_PID"
	if [ "$client" = loadgen ]; then
		p50=$(field p50_ms "$line")
		p99=$(field p99_ms "$line")
	else
		cpu=$(awk -v c="$(field cpu_s "$line")" -v s="$SECS" 'BEGIN { printf "%.0f", 100 * c / s }')
	fi
	echo "$name,$limits" >>"$LIMITS"
	echo "$front,$client,$config,$start,$verify,$load,$rpc,$rate,$SECS,$(pct_of_cap "$name" 1 "$SECS"),$(pct_of_cap "$name" 3 "$SECS"),$(pct_of_cap "$name" "$STEADY" "$SECS"),$(ok_per_sec "$name" "$STEADY" "$SECS"),$p50,$p99,$(awk -v a="$s0" -v b="$s1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }'),$(sec_sum "$name" '^refused$'),$(sec_sum "$name" '^timeout'),$(sec_sum "$name" '^(error|reset|fd_unavail|addr_unavail)$'),$(sec_sum "$name" '^bad_status$'),$samples,$bad,$limit,$cov,$cpu"
}

HEADER="front,client,config,start,verify,load,requests_per_conn,offered_per_sec,seconds,whole_pct,from3_pct,steady_pct,steady_per_sec,p50_ms,p99_ms,shed_per_sec,refused,timeouts,errors,bad_status,latency_samples,latency_bad,last_limit,limit_cov_pct,client_cpu_pct"
cells >"$TESTBED_TMP/cells"
testbed_up
# The proxy opens a connection to the upstream per request, and closes
# first those its client gave up: widen the ports and let it reuse
# TIME_WAIT ones, or a run starves the next of local ports.
in_srv sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1

echo "$HEADER" >"$CSV"
echo "cell,limit_per_second" >"$LIMITS"
echo "upstream: $WORKERS workers x $SERVICE_MS ms $UPSTREAM_DIST (C = $CAP/s), backlog $BACKLOG; patience $PATIENCE_MS ms; $SECS s per cell; $(wc -l <"$TESTBED_TMP/cells") cells ($PROXY_CELLS)"
exp_cells "$(wc -l <"$TESTBED_TMP/cells")"
while read -r front client config start verify load rpc; do
	exp_cell "$front $client $config $start $verify ${load}x"
	cell "$front" "$client" "$config" "$start" "$verify" "$load" "$rpc" >"$TESTBED_TMP/row"
	tee -a "$CSV" <"$TESTBED_TMP/row"
done <"$TESTBED_TMP/cells"

# The plot: each cell's goodput over the whole run and over the steady
# window, one pair of bars per cell.
awk -F, 'NR > 1 { printf "%s %s %s %s %s %sx,%s,%s\n", $1, $2, $3, $4, $5, $6, $10, $12 }' "$CSV" >"$TESTBED_TMP/bars.csv"
cat >"$TESTBED_TMP/proxy.gp" <<EOF
set terminal pngcairo noenhanced size 1400,650 font ",9"
set output png
set datafile separator ","
set title "Goodput behind a reverse proxy, C = $CAP/s, $SECS s per cell"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:110]
set ylabel "goodput, % of C"
set xtics rotate by -50 left
set bmargin 11
set grid ytics
set key top left
plot "$TESTBED_TMP/bars.csv" u 2:xtic(1) t "whole run" lc rgb "#0055cc", "" u 3 t "steady window (s $STEADY-$SECS)" lc rgb "#008800"
EOF
exp_plot "$TESTBED_TMP/proxy.gp"

# The markdown table, from the CSV.
{
	exp_header "Goodput behind a reverse proxy"
	echo
	echo "Upstream: slowserver --http --paced, $WORKERS workers x $SERVICE_MS ms $UPSTREAM_DIST (C = $CAP requests/s; paced: a busy worker answers on a $SERVICE_MS ms grid), listen backlog $BACKLOG, accepting only when a worker is free."
	echo "Front: nginx 1.22 (1 worker, 4096 connections) or HAProxy 2.6 (maxconn 9000, option abortonclose) in the same namespace, proxying to it."
	echo "Clients, open loop at load x C requests/s, patience $PATIENCE_MS ms, $SECS s per cell: loadgen --http (Poisson arrivals; the patience over the whole request) or httperf (Poisson arrivals, --period=e, one process per second of arrivals, --timeout $PATIENCE_MS ms per phase, --hog; scripts/proxybed.sh)."
	echo "Start: cold, shedd started $COLD_LEAD s before the load, no calm; warm, after $CALM s at 0.5 x C with the same client (not measured); - without shedd. Verify: shedd's default (the default class verifies while shedding) or --verify off."
	echo "Configurations: none (no shedd); kernel (shedd --port $PORT, no latency samples); fixed (shedd --controller off --rate 0.9 x C); log (shedd fed by the front's request log over --latency-socket)${PROXY_SHEDD_ARGS:+; shedd options: $PROXY_SHEDD_ARGS}."
	echo
	echo "![proxy](proxy.png)"
	echo
	echo "Goodput in % of C, from the clients' per-second lines (the requests started in a second that succeeded): whole run (seconds 1-$SECS), from the third second on (3-$SECS), steady window ($STEADY-$SECS). limit CoV: standard deviation / mean of shedd's limit over the steady window, from its status lines (--status-interval $STATUS_INTERVAL, stamped as they come). shed/s: connections shedd refused per second over the run (SYNs dropped or answered with a RST; proven ACKs refused with a RST in a verified class, which the client counts as an error). timeouts: the client's timeouts (loadgen: connect + response; httperf: client-timo); errors: resets and other errors (httperf: also fd_unavail and addr_unavail, a process out of descriptors or ports); bad: non-2xx replies. samples / bad dgrams: latency datagrams shedd took as samples / refused as malformed. limit: shedd's limit at the end. httperf CPU: its CPU time over the run in % of a core (bounded by a cgroup quota). The limit at the end of each second of a cell: proxy-limits.csv."
	echo
	echo "| front | client | config | start | verify | load | req/conn | whole % | from 3rd s % | steady % | limit CoV % | p50 ms | p99 ms | shed/s | refused | timeouts | errors | bad | samples | bad dgrams | limit | httperf CPU % |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %sx | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $10, $11, $12, $24, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $25 }'
} >"$MD"
echo
cat "$MD"
