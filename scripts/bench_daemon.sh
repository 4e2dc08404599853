#!/usr/bin/env bash
# bench_daemon.sh - sections 3 and 4 of `make bench`: what shedd's daemon
# costs, and how fast its controller reacts. Run as root; every process,
# namespace and pin it makes is removed on exit.
#
# 3. Daemon cost, on the flood testbed (scripts/floodbed.sh): the CPU time
#    of the shedd process (every thread, /proc/PID/task/*/schedstat) over a
#    window of DAEMON_SECS, as a share of one core, and its peak resident
#    set (VmHWM of /proc/PID/status, the peak reset through clear_refs at
#    the window's start) in three cells, interleaved round by round:
#      idle   shedd on the server's veth, the server listening, no traffic
#      flood  a spoofed SYN flood of DAEMON_FLOOD_RATE/s (floodgen)
#      lat    DAEMON_LAT_RATE latency samples/s on shedd's latency socket
#    One shedd for every cell, started as the flood experiment starts it
#    (drop mode, aimd from the server's capacity, pinned beside the
#    server's application).
# 4. Reaction, on the two-namespace testbed: a server of 4 workers x 10 ms
#    behind a 128-entry accept queue, its capacity C measured first, open-
#    loop clients (patience 250 ms) at 0.5 C, then 3 C for REACT_STEP_SECS,
#    then 0.5 C again. A fresh shedd each round (nothing pinned from the
#    round before), --status-interval 100ms, every line of its log stamped
#    on arrival, in two starts interleaved: its default start rate
#    (default), and --controller aimd --rate C (at-capacity). The times
#    are defined at react_parse.
#
# Output: a table per section on stdout, and in $BENCH_OUT (default a new
# temporary folder) daemon.csv, reaction.csv (one row per cell or round)
# and daemon_summary.csv, reaction_summary.csv (min, median, max), and
# shedd's stamped log of every reaction round.
#   BENCH_DAEMON_SECTIONS="cost reaction"
#   DAEMON_ROUNDS=5 DAEMON_SECS=3 DAEMON_FLOOD_RATE=1000000 DAEMON_LAT_RATE=100000
#   REACT_ROUNDS=5 REACT_PRE_SECS=3 REACT_STEP_SECS=6 REACT_POST_SECS=6
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/floodbed.sh
source scripts/floodbed.sh
testbed_script bench

# The two-namespace testbed's addresses: the flood testbed sets its own.
TB_CLI_IP=$CLI_IP
TB_SRV_IP=$SRV_IP
TB_SRV_IP6=$SRV_IP6
SECTIONS=${BENCH_DAEMON_SECTIONS:-"cost reaction"}
DAEMON_ROUNDS=${DAEMON_ROUNDS:-5}
DAEMON_SECS=${DAEMON_SECS:-3}
DAEMON_FLOOD_RATE=${DAEMON_FLOOD_RATE:-1000000}
DAEMON_LAT_RATE=${DAEMON_LAT_RATE:-100000}
REACT_ROUNDS=${REACT_ROUNDS:-5}
REACT_PRE_SECS=${REACT_PRE_SECS:-3}
REACT_STEP_SECS=${REACT_STEP_SECS:-6}
REACT_POST_SECS=${REACT_POST_SECS:-6}
REACT_PATIENCE_MS=250
# shedd's default --target-delay: the sojourn the controller aims under.
REACT_TARGET_MS=5
# The issue's targets for the daemon under flood.
TARGET_CPU_PCT=2
TARGET_RSS_MIB=20
LATBENCH="$ROOT/.output/latbench"

for n in DAEMON_ROUNDS DAEMON_SECS DAEMON_FLOOD_RATE DAEMON_LAT_RATE REACT_ROUNDS \
	REACT_PRE_SECS REACT_STEP_SECS REACT_POST_SECS; do
	if ! [[ "${!n}" =~ ^[1-9][0-9]*$ ]]; then
		echo "bench_daemon: $n='${!n}': expected a positive integer" >&2
		exit 2
	fi
done
for s in $SECTIONS; do
	case $s in
	cost | reaction) ;;
	*) echo "bench_daemon: unknown section '$s' (cost, reaction)" >&2; exit 2 ;;
	esac
done
for f in "$SHEDD" "$FLOODGEN" "$XDPROUTER" "$LATBENCH" "$SLOWSERVER" "$LOADGEN" "$XDP_PASS_OBJ"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "bench_daemon: $f is missing: run make all" >&2; exit 1; }
done
command -v perl >/dev/null || { echo "bench_daemon: perl is missing (scripts/deps.sh)" >&2; exit 1; }

BENCH_OUT=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/shedd-bench.XXXXXX")}
mkdir -p "$BENCH_OUT"

has_section() { [[ " $SECTIONS " == *" $1 "* ]]; }

# eta DONE TOTAL START_S: the estimated seconds left, from the pace so far.
eta() {
	local now
	now=$(date +%s)
	if [ "$1" -gt 0 ]; then
		echo "ETA $(( (now - $3) * ($2 - $1) / $1 )) s"
	else
		echo "ETA ?"
	fi
}

# summarize CSV KEYCOL VALCOL...: min, median, max of each value column per
# key, in the order keys first appear; rows whose value is "-" are left out
# (and counted in n_missing). Prints key,column,n,n_missing,min,median,max.
summarize() {
	local csv=$1 key=$2
	shift 2
	awk -F, -v key="$key" -v cols="$*" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{
			k = $col[key]
			if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
			nc = split(cols, c, " ")
			for (j = 1; j <= nc; j++) {
				v = $col[c[j]]
				if (v == "-" || v == "") { miss[k, c[j]]++; continue }
				n[k, c[j]]++
				val[k, c[j], n[k, c[j]]] = v + 0
			}
		}
		END {
			print key ",column,n,n_missing,min,median,max"
			nc = split(cols, c, " ")
			for (i = 1; i <= nk; i++) for (j = 1; j <= nc; j++) {
				k = order[i]; m = n[k, c[j]] + 0
				for (a = 1; a <= m; a++) s[a] = val[k, c[j], a]
				for (a = 2; a <= m; a++) {	# insertion sort
					x = s[a]
					for (b = a - 1; b >= 1 && s[b] > x; b--) s[b + 1] = s[b]
					s[b + 1] = x
				}
				if (m == 0) { printf "%s,%s,0,%d,-,-,-\n", k, c[j], miss[k, c[j]] + 0; continue }
				med = m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
				printf "%s,%s,%d,%d,%g,%g,%g\n", k, c[j], m, miss[k, c[j]] + 0, s[1], med, s[m]
			}
		}' "$csv"
}

# stat3 SUMMARY KEY COLUMN: "min / median / max" of one summary row.
stat3() {
	awk -F, -v k="$2" -v c="$3" '$1 == k && $2 == c {
		if ($3 == 0) print "-"; else printf "%s / %s / %s%s\n", $5, $6, $7,
			($4 > 0 ? sprintf(" (%d of %d missing)", $4, $3 + $4) : "")
	}' "$1"
}

# ---------------------------------------------------------------- cost ---

# thread_ns PID: "TID NS" for every thread of PID, its time on CPU.
thread_ns() {
	local f
	for f in /proc/"$1"/task/*/schedstat; do
		f=${f%/schedstat}
		echo "${f##*/} $(cut -d' ' -f1 "$f/schedstat" 2>/dev/null || echo 0)"
	done
}

# thread_split PID DT_NS BEFORE AFTER: each thread's share of one core over
# DT_NS, "main=P" for the main thread and "tTID=P" for the others, joined
# by ";" (the daemon's threads are unnamed).
thread_split() {
	awk -v pid="$1" -v dt="$2" -v a="$3" -v b="$4" 'BEGIN {
		n = split(a, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], x, " "); t0[x[1]] = x[2] }
		n = split(b, l, "\n")
		for (i = 1; i <= n; i++) {
			split(l[i], x, " ")
			printf "%s%s=%.3f", (i > 1 ? ";" : ""), (x[1] == pid ? "main" : "t" x[1]),
				100 * (x[2] - t0[x[1]]) / dt
		}
	}'
}

proc_hwm_kib() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"; }
proc_rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }

# cost_cell CELL ROUND: one window of DAEMON_SECS on CELL; a row of
# daemon.csv. The load starts half a second before the window, so the
# window holds none of its start, and ends half a second after it.
cost_cell() {
	local cell=$1 round=$2 load_pid="" t0 t1 c0 c1 rx0 rx1 syn0 syn1 hwm rss
	local offered=0 received=- judged=- sent_rate=- unsent=- out th0 th1
	case $cell in
	idle) ;;
	flood)
		flood_live "$DAEMON_FLOOD_RATE" $((DAEMON_SECS + 1)) "$TESTBED_TMP/cost.out"
		load_pid=$FLOOD_PID
		offered=$DAEMON_FLOOD_RATE
		;;
	lat)
		# On the server's receive CPU: shedd's own CPU is the other one.
		ip netns exec "$NS_SRV" taskset -c "$SRV_CPU" "$LATBENCH" --socket "$LATENCY_SOCK" \
			--rate "$DAEMON_LAT_RATE" --duration $((DAEMON_SECS + 1)) \
			>"$TESTBED_TMP/cost.out" 2>"$TESTBED_TMP/latbench.err" &
		load_pid=$!
		PIDS+=("$load_pid")
		offered=$DAEMON_LAT_RATE
		;;
	esac
	# The half second before the window: a duration, not a condition.
	[ -z "$load_pid" ] || sleep 0.5
	echo 5 >"/proc/$SHEDD_PID/clear_refs"
	t0=$(date +%s%N)
	c0=$(cpu_ns "$SHEDD_PID")
	th0=$(thread_ns "$SHEDD_PID")
	rx0=$(veth_stat "$NS_SRV" "$IF_SRV" rx_queue_0_xdp_packets)
	syn0=$(shedd_class_stat syn)
	sleep "$DAEMON_SECS"
	t1=$(date +%s%N)
	c1=$(cpu_ns "$SHEDD_PID")
	th1=$(thread_ns "$SHEDD_PID")
	rx1=$(veth_stat "$NS_SRV" "$IF_SRV" rx_queue_0_xdp_packets)
	syn1=$(shedd_class_stat syn)
	hwm=$(proc_hwm_kib "$SHEDD_PID")
	rss=$(proc_rss_kib "$SHEDD_PID")
	if [ -n "$load_pid" ]; then
		if ! wait "$load_pid"; then
			echo "bench_daemon: the $cell load failed:" >&2
			cat "$TESTBED_TMP/floodgen.err" "$TESTBED_TMP/latbench.err" 2>/dev/null >&2 || true
			return 1
		fi
		out=$(cat "$TESTBED_TMP/cost.out")
		if [ "$cell" = flood ]; then
			sent_rate=$(field rate_pps "$out")
		else
			sent_rate=$(field rate "$out" | tr -d '/s')
			unsent=$(field unsent "$out")
		fi
	fi
	# shedd must still be the process measured, alive.
	kill -0 "$SHEDD_PID" 2>/dev/null || { echo "bench_daemon: shedd died in cell $cell" >&2; return 1; }
	received=$(( (rx1 - rx0) * 1000000000 / (t1 - t0) ))
	judged=$(( (syn1 - syn0) * 1000000000 / (t1 - t0) ))
	COST_ROW=$(awk -v r="$round" -v c="$cell" -v dt=$((t1 - t0)) -v dc=$((c1 - c0)) \
		-v hwm="$hwm" -v rss="$rss" -v o="$offered" -v s="$sent_rate" \
		-v u="$unsent" -v rx="$received" -v j="$judged" 'BEGIN {
		printf "%d,%s,%.3f,%.3f,%.2f,%.2f,%d,%s,%s,%d,%d\n", r, c, dt / 1e9,
			100 * dc / dt, hwm / 1024, rss / 1024, o, s, u, rx, j }')
	COST_ROW="$COST_ROW,$(thread_split "$SHEDD_PID" $((t1 - t0)) "$th0" "$th1")"
	echo "$COST_ROW" >>"$BENCH_OUT/daemon.csv"
}

cost_section() {
	local r c done=0 total start
	echo "== 3. daemon cost: shedd's CPU (all threads, share of one core) and peak RSS"
	echo "   $DAEMON_ROUNDS rounds x (idle, flood $DAEMON_FLOOD_RATE SYN/s, latency $DAEMON_LAT_RATE" \
		"samples/s), $DAEMON_SECS s windows"
	floodbed_up
	flood_server_restart
	FLOOD_SHEDD_START=${FLOOD_SHEDD_START-"--controller aimd --rate $FLOOD_CAPACITY"}
	flood_config_start shedd-drop
	echo "   testbed $TESTBED_ID"
	echo "   shedd pid $SHEDD_PID on CPU $SRV_APP_CPU (rt $SRV_APP_PRIO), $SHEDD" \
		"--port $PORT $FLOOD_SHEDD_START ${FLOOD_DROP_ARGS:-}; receive on CPU $SRV_CPU"
	echo "round,cell,window_s,cpu_pct,peak_rss_mib,rss_mib,load_target,load_sent_per_s,load_unsent,srv_rx_per_s,shedd_syn_per_s,threads_cpu_pct" \
		>"$BENCH_OUT/daemon.csv"
	# Round 0: the peak of the start-up (loading and attaching the
	# program), before any window resets it.
	awk -v h="$(proc_hwm_kib "$SHEDD_PID")" -v r="$(proc_rss_kib "$SHEDD_PID")" 'BEGIN {
		printf "0,startup,-,-,%.2f,%.2f,0,-,-,-,-,-\n", h / 1024, r / 1024 }' >>"$BENCH_OUT/daemon.csv"
	echo "   peak RSS of shedd's start-up: $(tail -n 1 "$BENCH_OUT/daemon.csv" | cut -d, -f5) MiB"
	total=$((DAEMON_ROUNDS * 3))
	start=$(date +%s)
	for ((r = 1; r <= DAEMON_ROUNDS; r++)); do
		for c in idle flood lat; do
			cost_cell "$c" "$r"
			done=$((done + 1))
			echo "$COST_ROW" | awk -F, -v eta="$(eta "$done" "$total" "$start")" -v d="$done" \
				-v t="$total" '{
				printf "   [%d/%d] round %d %-5s cpu %6.3f %%  peak rss %6.2f MiB", d, t, $1, $2, $4, $5
				if ($2 == "flood") printf "  flood sent %s/s, srv rx %s/s, shedd judged %s SYN/s", $8, $10, $11
				if ($2 == "lat") printf "  samples sent %s/s, unsent %s", $8, $9
				printf "  threads %s", $12
				printf "  (%s)\n", eta
			}'
		done
	done
	flood_config_stop shedd-drop
	testbed_down
	SLOW_PID=
	summarize "$BENCH_OUT/daemon.csv" cell cpu_pct peak_rss_mib load_sent_per_s shedd_syn_per_s \
		>"$BENCH_OUT/daemon_summary.csv"
	local s=$BENCH_OUT/daemon_summary.csv
	echo
	printf '   %-6s %-28s %-28s %s\n' cell "CPU % of one core" "peak RSS MiB" "load sent/s"
	printf '   %-6s %-28s %-28s %s\n' "" "(min / median / max)" "(min / median / max)" "(median)"
	printf '   %-6s %-28s %-28s %s\n' startup - "$(stat3 "$s" startup peak_rss_mib)" -
	for c in idle flood lat; do
		printf '   %-6s %-28s %-28s %s\n' "$c" "$(stat3 "$s" "$c" cpu_pct)" \
			"$(stat3 "$s" "$c" peak_rss_mib)" \
			"$(awk -F, -v k="$c" '$1 == k && $2 == "load_sent_per_s" { print $6 }' "$s")"
	done
	awk -F, -v tc="$TARGET_CPU_PCT" -v tr="$TARGET_RSS_MIB" -v rate="$DAEMON_FLOOD_RATE" '
		$1 == "flood" && $2 == "cpu_pct" { cpu = $7; cmed = $6 }
		$1 == "flood" && $2 == "peak_rss_mib" { rss = $7; rmed = $6 }
		$1 == "flood" && $2 == "shedd_syn_per_s" { judged = $6 }
		END {
			printf "   under flood: shedd judged a median %s SYN/s\n", judged
			if (judged + 0 < 0.9 * rate)
				printf "   WARNING: the flood reached %.0f %% of its %d SYN/s (a busy machine?)\n",
					100 * judged / rate, rate
			printf "   under flood: CPU median %s %% (max %s %%), target <= %d %%: %s\n", cmed, cpu, tc,
				cpu + 0 <= tc ? "met" : "MISSED"
			printf "   under flood: peak RSS median %s MiB (max %s MiB), target <= %d MiB: %s\n", rmed,
				rss, tr, rss + 0 <= tr ? "met" : "MISSED"
		}' "$s"
	echo
}

# ------------------------------------------------------------ reaction ---

# react_capacity: CAP, the accept rate of the saturated server as shedd's
# probes measure it with shedd not shedding (as scripts/experiments.sh):
# the median of seconds 3-7 of patient clients at 1000/s.
react_capacity() {
	shedd_start --port "$PORT" --controller off --rate 100000
	load cap 1000 8 5000
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove >/dev/null 2>&1 || true
	CAP=$(status_field accepts | sed -n 3,7p | cut -d/ -f1 | cut -d. -f1 | sort -n | sed -n 3p)
	if ! [[ "${CAP:-}" =~ ^[0-9]+$ ]] || [ "$CAP" -lt 50 ]; then
		echo "bench_daemon: capacity: no accept rate measured ('${CAP:-}'); shedd said:" >&2
		tail -n 5 "$TESTBED_TMP/shedd.log" >&2
		return 1
	fi
	react_idle
}

# react_shedd_start LOG ARGS...: a fresh shedd with ARGS and a status line
# every tick, each line of its stderr stamped with the wall clock (s, ns
# resolution) as it arrives, into LOG. Waits until it has attached.
react_shedd_start() {
	local fifo=$TESTBED_TMP/shedd.fifo log=$1
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	: >"$log"
	perl -MTime::HiRes=time -ne 'BEGIN { $| = 1 } printf "%.6f %s", time, $_' <"$fifo" >"$log" &
	STAMP_PID=$!
	PIDS+=("$STAMP_PID")
	"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --port "$PORT" --status-interval 100ms "$@" \
		2>"$fifo" &
	SHEDD_PID=$!
	PIDS+=("$SHEDD_PID")
	wait_for "shedd attached" 5 grep -qE 'attached to' "$log"
}

# react_shedd_stop: shedd gone, and with it everything it pinned (the
# controller's state above all), so the next round starts as fresh.
react_shedd_stop() {
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	wait "$STAMP_PID" || true
	"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove >/dev/null 2>&1 || true
	if [ -e "$PIN_DIR/ctl_state" ]; then
		echo "bench_daemon: $PIN_DIR/ctl_state is still pinned after shedd --remove" >&2
		return 1
	fi
}

# react_idle: until the server's accept queue is empty (what the last
# clients left is worked off).
react_idle() {
	wait_for "an empty accept queue" 10 sh -c \
		"ip netns exec $NS_SRV ss -ltnH 'sport = :$PORT' | awk '{ q += \$2 } END { exit !(NR && q == 0) }'"
}

# now_s: the wall clock in seconds, as the log's stamps.
now_s() { date +%s.%N; }


# acks_refused: proven ACKs refused for want of a token, every class and
# CPU, from the pinned stats.
acks_refused() {
	local v
	v=$(bpftool map dump pinned "$PIN_DIR/stats" | jq '[.[0].values[].value.cls[].ack_refused] | add')
	[[ "$v" =~ ^[0-9]+$ ]] || { echo "bench_daemon: no ack_refused in $PIN_DIR/stats ('$v')" >&2; return 1; }
	echo "$v"
}

# react_round ROUND: one step up and back on the clients' schedule: 0.5 C
# for the whole round, 2.5 C more from REACT_PRE_SECS for REACT_STEP_SECS.
# T_STEP and T_BACK: when the extra clients start and end (their own
# duration), on the log's clock.
react_round() {
	local r=$1 half extra base_pid extra_pid
	half=$((CAP / 2))
	extra=$((CAP * 3 - half))
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$half" \
		--duration $((REACT_PRE_SECS + REACT_STEP_SECS + REACT_POST_SECS)) \
		--patience-ms "$REACT_PATIENCE_MS" >"$TESTBED_TMP/base.$r" 2>/dev/null &
	base_pid=$!
	PIDS+=("$base_pid")
	# The steps come on the clients' schedule: durations, not conditions.
	sleep "$REACT_PRE_SECS"
	T_STEP=$(now_s)
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$extra" \
		--duration "$REACT_STEP_SECS" --patience-ms "$REACT_PATIENCE_MS" \
		>"$TESTBED_TMP/extra.$r" 2>/dev/null &
	extra_pid=$!
	PIDS+=("$extra_pid")
	T_BACK=$(awk -v t="$T_STEP" -v s="$REACT_STEP_SECS" 'BEGIN { printf "%.6f", t + s }')
	wait "$extra_pid" || { echo "bench_daemon: the 3x clients failed in round $r" >&2; return 1; }
	REFUSED0=$(acks_refused)
	wait "$base_pid" || { echo "bench_daemon: the 0.5x clients failed in round $r" >&2; return 1; }
	REFUSED1=$(acks_refused)
	kill -0 "$SHEDD_PID" 2>/dev/null || { echo "bench_daemon: shedd died in round $r" >&2; return 1; }
}

# react_parse CONFIG ROUND LOG: REACT_ROW, a row of reaction.csv from the stamped
# log of one round (its status lines, one a tick):
#   limit_before       the limit of the last status line before the step
#   t_cut_s            step -> shedd's first "mode=overload" line (the tick
#                      that cut the limit); limit_at_cut, the limit it set
#   limit_min          the lowest limit during the step
#   t_sojourn_under_s  step -> the first of 5 status lines in a row (0.5 s)
#                      whose sojourn p50 is at or under the target (5 ms),
#                      after one above it; "-" if it never went above or
#                      never came back during the step
#   sojourn_p50_peak_ms  the highest p50 during the step
#   t_unbound_s        step back -> the first of 10 status lines in a row
#                      (1 s) in which no SYN was shed (drop= and rst= of
#                      every class 0): the limit no longer binds. A SYN
#                      answered with a cookie is not counted as shed; its
#                      ACK, proven, may still find no token (ack_refused,
#                      which the status line does not show): see
#                      ack_refused_after
#   t_steady_s         step back -> the first status line from which every
#                      line to the round's end says mode=steady: the
#                      recovery ramp is done, the limit at 100 % of its
#                      last good rate (0.1 if steady at the step back)
#   limit_end          the limit of the round's last status line
#   ack_refused_after  proven ACKs refused for want of a token (every
#                      class, the pinned stats) from the end of the 3x
#                      clients to the round's end: 0 means t_unbound_s
#                      missed none
#   step_at, back_at   T_STEP and T_BACK (the stamps of the log, which is
#                      kept as reaction_shedd.log)
react_parse() {
	REACT_ROW=$(awk -v cfg="$1" -v r="$2" -v refused=$((REFUSED1 - REFUSED0)) -v ts="$T_STEP" -v tb="$T_BACK" -v tgt="$REACT_TARGET_MS" '
		function num(s, name,   m) {
			if (!match(s, " " name "=[0-9.]+")) return ""
			m = substr(s, RSTART + length(name) + 2, RLENGTH - length(name) - 2)
			return m + 0
		}
		function shed(s,   t, n, i, kv, x) {
			n = split(s, t, " ")
			for (i = 1; i <= n; i++)
				if (t[i] ~ /^(drop|rst)=[0-9]/) { split(t[i], kv, "="); x += kv[2] }
			return x + 0
		}
		function fmt(v) { return v == "" ? "-" : sprintf("%.3f", v) }
		{ t = $1 + 0 }
		/ mode=overload / && !/ \| / && t >= ts && t < tb && t_cut == "" {
			t_cut = t - ts; cut_lim = num($0, "limit")
		}
		!/ \| critical_plus / { next }
		{ lim = num($0, "limit"); last = lim }
		t < ts { pre = lim; next }
		t < tb {
			p50 = -1
			if (match($0, " sojourn_ms=[0-9.]+/[0-9.]+")) {
				split(substr($0, RSTART + 12, RLENGTH - 12), sj, "/"); p50 = sj[2] + 0
			}
			if (p50 > peak) peak = p50
			if (lim != "" && (minlim == "" || lim < minlim)) minlim = lim
			if (p50 > tgt) { above = 1; run = 0; next }
			if (above && t_soj == "") {
				if (p50 >= 0) { if (!run++) run_t = t; if (run == 5) t_soj = run_t - ts }
				else run = 0
			}
			next
		}
		{
			if (t_unb == "") {
				if (shed($0) == 0) { if (!urun++) urun_t = t; if (urun == 10) t_unb = urun_t - tb }
				else urun = 0
			}
			if ($0 ~ / mode=steady /) { if (steady_t == "") steady_t = t }
			else steady_t = ""
		}
		END {
			printf "%s,%d,%s,%s,%s,%s,%s,%.2f,%s,%s,%s,%d,%.6f,%.6f\n", cfg, r,
				pre == "" ? "-" : pre, fmt(t_cut), cut_lim == "" ? "-" : cut_lim,
				minlim == "" ? "-" : minlim, fmt(t_soj), peak, fmt(t_unb),
				fmt(steady_t == "" ? "" : steady_t - tb), last == "" ? "-" : last, refused,
				ts, tb
		}' "$3")
}

reaction_section() {
	local r c done=0 total start log
	echo "== 4. reaction: a step from 0.5x to 3x the server's capacity and back"
	CLI_IP=$TB_CLI_IP
	SRV_IP=$TB_SRV_IP
	SRV_IP6=$TB_SRV_IP6
	testbed_up
	echo "   testbed $TESTBED_ID"
	slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600
	: >"$TESTBED_TMP/shedd.log"
	react_capacity
	# Two starts of the controller, interleaved, each round a fresh shedd
	# (nothing pinned from the round before): its default start, open at
	# --max-rate, far above the server, as a shedd that never met an
	# overload; and the
	# measured capacity, as an operator who knows the server starts it.
	REACT_CONFIGS="default at-capacity"
	echo "   server 4 workers x 10 ms, backlog 128: capacity $CAP/s (median accept rate while" \
		"saturated); clients $((CAP / 2))/s for $REACT_PRE_SECS s, $((CAP * 3))/s for" \
		"$REACT_STEP_SECS s, $((CAP / 2))/s for $REACT_POST_SECS s, patience $REACT_PATIENCE_MS ms;" \
		"a fresh shedd each round, --status-interval 100ms, started with its default rate" \
		"(default) or with --controller aimd --rate $CAP (at-capacity)"
	echo "config,round,limit_before,t_cut_s,limit_at_cut,limit_min,t_sojourn_under_s,sojourn_p50_peak_ms,t_unbound_s,t_steady_s,limit_end,ack_refused_after,step_at,back_at" \
		>"$BENCH_OUT/reaction.csv"
	total=$((REACT_ROUNDS * 2))
	start=$(date +%s)
	for ((r = 1; r <= REACT_ROUNDS; r++)); do
		for c in $REACT_CONFIGS; do
			log=$BENCH_OUT/reaction_shedd.$c.$r.log
			react_idle
			if [ "$c" = default ]; then
				react_shedd_start "$log"
			else
				react_shedd_start "$log" --controller aimd --rate "$CAP"
			fi
			react_round "$r"
			react_shedd_stop
			react_parse "$c" "$r" "$log"
			echo "$REACT_ROW" >>"$BENCH_OUT/reaction.csv"
			done=$((done + 1))
			echo "$REACT_ROW" | awk -F, -v eta="$(eta "$done" "$total" "$start")" -v d="$done" \
				-v t="$total" '{
				printf "   [%d/%d] round %d %s: limit %s/s; cut after %s s to %s/s (min %s/s);", d, t, $2, $1, $3, $4, $5, $6
				printf " sojourn p50 under target after %s s (peak %s ms);", $7, $8
				printf " back: unbound after %s s, steady after %s s at %s/s, %s proven ACKs refused  (%s)\n",
					$9, $10, $11, $12, eta
			}'
		done
	done
	testbed_down
	local s=$BENCH_OUT/reaction_summary.csv
	summarize "$BENCH_OUT/reaction.csv" config t_cut_s t_sojourn_under_s t_unbound_s t_steady_s \
		limit_before limit_at_cut limit_min sojourn_p50_peak_ms limit_end ack_refused_after >"$s"
	echo
	for c in $REACT_CONFIGS; do
		printf '   %-56s %s\n' "$c: step 0.5x -> 3x (capacity $CAP/s), $REACT_ROUNDS rounds" "min / median / max"
		printf '   %-56s %s\n' "limit before the step (/s)" "$(stat3 "$s" "$c" limit_before)"
		printf '   %-56s %s\n' "time to the first cut (s)" "$(stat3 "$s" "$c" t_cut_s)"
		printf '   %-56s %s\n' "limit set by that cut (/s)" "$(stat3 "$s" "$c" limit_at_cut)"
		printf '   %-56s %s\n' "lowest limit during the step (/s)" "$(stat3 "$s" "$c" limit_min)"
		printf '   %-56s %s\n' "peak sojourn p50 during the step (ms)" "$(stat3 "$s" "$c" sojourn_p50_peak_ms)"
		printf '   %-56s %s\n' "time until sojourn p50 <= $REACT_TARGET_MS ms for 0.5 s (s)" "$(stat3 "$s" "$c" t_sojourn_under_s)"
		printf '   %-56s %s\n' "back to 0.5x: time until nothing shed for 1 s (s)" "$(stat3 "$s" "$c" t_unbound_s)"
		printf '   %-56s %s\n' "back to 0.5x: time until steady to the round's end (s)" "$(stat3 "$s" "$c" t_steady_s)"
		printf '   %-56s %s\n' "limit at the round's end (/s)" "$(stat3 "$s" "$c" limit_end)"
		printf '   %-56s %s\n' "back to 0.5x: proven ACKs refused (no token)" "$(stat3 "$s" "$c" ack_refused_after)"
		echo
	done
}

echo "bench_daemon: sections '$SECTIONS'; results in $BENCH_OUT"
if has_section cost; then cost_section; fi
if has_section reaction; then reaction_section; fi
echo "bench_daemon: wrote the CSV files in $BENCH_OUT:" "$BENCH_OUT"/*.csv
