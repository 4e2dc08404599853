#!/usr/bin/env bash
# recovery.sh - ramped recovery: clients that retry, a spike, and the way
# back. The accept-bound server (4 workers x 10 ms, backlog 128); clients at
# 0.8 x C for CALM s, 4 x C for SPIKE s, then 0.8 x C for AFTER s, each
# failed attempt retried at once up to 3 times, with a retry budget (10 %
# of requests) and without one. No shedding; shedd with its ramp off
# (--ramp none); shedd with its ramp (its default); and shedd restarted
# (SIGTERM, --keep-on-exit, started again) in the middle of its ramp.
# Goodput and shedd's limit per second; the time to recover after the
# spike; whether the service stays down after the spike ends (a metastable
# failure) and whether it falls back after recovering (a relapse). Writes
# recovery.csv (per second), recovery.md and recovery.png.
#   CALM=5 SPIKE=10 AFTER=25   seconds of each phase
#   RECOVERY_CELLS="..."       CLIENT:CONFIG pairs (client retry or budget;
#                              config none, noramp, ramp or restart)
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/proxybed.sh
source scripts/proxybed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin recovery 0 45 CALM SPIKE AFTER RECOVERY_CELLS
testbed_script experiments

CALM=${CALM:-5}
SPIKE=${SPIKE:-10}
AFTER=${AFTER:-25}
RECOVERY_CELLS=${RECOVERY_CELLS:-"retry:none retry:noramp retry:ramp retry:restart budget:none budget:noramp budget:ramp"}
CAP=400 # 4 workers x 10 ms
BASE=$((CAP * 8 / 10))
PEAK=$((CAP * 4))
PATIENCE_MS=250
RETRIES=3
BUDGET=0.1
SECS=$((CALM + SPIKE + AFTER))
CSV="$EXP_OUT/recovery.csv"
MD="$EXP_OUT/recovery.md"
SUMMARY="$TESTBED_TMP/summary.csv"
set -- $RECOVERY_CELLS
exp_cells $#

testbed_up
slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600
echo "cell,client,config,second,offered,ok,retries,ok_pct_of_base,limit" >"$CSV"
echo "client,config,calm_pct,spike_pct_of_c,after_pct,last10_pct,recover_s,relapse_s,stays_down,restarted_at_s" >"$SUMMARY"

# restart_in_ramp T0: once shedd's controller is recovering (a stage of its
# ramp) after the spike, stop it (SIGTERM; --keep-on-exit leaves the
# program shedding) and start it again; prints the second of the restart.
restart_in_ramp() {
	local t0=$1 deadline=$(($(date +%s) + SECS)) n
	n=$(wc -l <"$TESTBED_TMP/shedd.log")
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if tail -n +$((n + 1)) "$TESTBED_TMP/shedd.log" | grep -q 'mode=recovering'; then
			awk -v a="$t0" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", n - a }'
			kill -TERM "$SHEDD_PID"
			wait "$SHEDD_PID" || true
			pids_forget "$SHEDD_PID"
			shedd_start --port "$PORT" --keep-on-exit --status-interval 200ms
			limit_watch
			return 0
		fi
		sleep 0.05
	done
	echo "-"
}

cell() {
	local client=$1 config=$2 name="$1-$2" t0 lpid budget=() restarted=- limits
	exp_cell "$client clients, $config"
	[ "$client" = budget ] && budget=(--retry-budget "$BUDGET")
	: >"$TESTBED_TMP/shedd.log"
	SHEDD_PID=
	case $config in
	none) ;;
	noramp) shedd_start --port "$PORT" --ramp none --status-interval 200ms ;;
	ramp) shedd_start --port "$PORT" --status-interval 200ms ;;
	restart) shedd_start --port "$PORT" --keep-on-exit --status-interval 200ms ;;
	esac
	if [ -n "$SHEDD_PID" ]; then limit_watch; fi
	t0=$(date +%s.%N)
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --poisson --seed 5 \
		--phases "$CALM:$BASE,$SPIKE:$PEAK,$AFTER:$BASE" --patience-ms "$PATIENCE_MS" \
		--retries "$RETRIES" "${budget[@]}" >"$TESTBED_TMP/$name" 2>"$TESTBED_TMP/$name.sec" &
	lpid=$!
	PIDS+=("$lpid")
	if [ "$config" = restart ]; then
		sleep "$((CALM + SPIKE))"
		restarted=$(restart_in_ramp "$t0")
	fi
	wait "$lpid"
	pids_forget "$lpid"
	limits=$(seq "$SECS" | sed 's/.*/-/' | tr '\n' ' ')
	if [ -n "$SHEDD_PID" ]; then
		stop_pid "$SHEDD_PID"
		wait "$LIMIT_WATCH_PID" 2>/dev/null || true
		pids_forget "$LIMIT_WATCH_PID"
		limits=$(limit_trace "$t0" "$SECS")
		# A shedd left with --keep-on-exit: its program goes too.
		"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove >/dev/null 2>&1 || true
	fi
	# The per-second rows, then the cell's summary.
	awk -v cell="$name" -v cl="$client" -v cf="$config" -v base="$BASE" -v lim="$limits" '
		BEGIN { n = split(lim, L, " ") }
		/^t=/ { split($1, t, "="); s = t[2]; off = ok = rt = 0
			for (i = 2; i <= NF; i++) { split($i, kv, "=")
				if (kv[1] == "offered") off = kv[2]; if (kv[1] == "ok") ok = kv[2]; if (kv[1] == "retries") rt = kv[2] }
			printf "%s,%s,%s,%d,%d,%d,%d,%.1f,%s\n", cell, cl, cf, s, off, ok, rt, 100 * ok / base, (s <= n ? L[s] : "-") }' \
		"$TESTBED_TMP/$name.sec" >>"$CSV"
	awk -F, -v cell="$name" -v cl="$client" -v cf="$config" -v calm="$CALM" -v spike="$SPIKE" \
		-v secs="$SECS" -v base="$BASE" -v cap="$CAP" -v rs="$restarted" '
		$1 == cell { ok[$4] = $6 }
		function mean(a, b,   s, k) { s = 0; for (k = a; k <= b; k++) s += ok[k]; return s / (b - a + 1) }
		END {
			e = calm + spike # the spike ends after second e
			# Recovered: the first second after the spike from which three
			# seconds in a row serve >= 90 % of the base rate.
			rec = "never"
			for (k = e + 1; k <= secs - 2; k++)
				if (ok[k] >= 0.9 * base && ok[k + 1] >= 0.9 * base && ok[k + 2] >= 0.9 * base) { rec = k - e; break }
			# A relapse: after recovering, a second under half the base rate.
			rel = "-"
			if (rec != "never")
				for (k = e + rec + 3; k <= secs; k++) if (ok[k] < 0.5 * base) { rel = k - e; break }
			last = mean(secs - 9, secs)
			printf "%s,%s,%.0f,%.0f,%.0f,%.0f,%s,%s,%s,%s\n", cl, cf, 100 * mean(1, calm) / base,
				100 * mean(calm + 1, e) / cap, 100 * mean(e + 1, secs) / base, 100 * last / base,
				rec, rel, (last < 0.5 * base ? "yes" : "no"), rs
		}' "$CSV" | tee -a "$SUMMARY" >&2
	sleep 3 # the queue of this cell drains
}

for c in $RECOVERY_CELLS; do
	cell "${c%%:*}" "${c#*:}"
done
cp "$SUMMARY" "$EXP_OUT/recovery-summary.csv"

cat >"$TESTBED_TMP/recovery.gp" <<EOF
set terminal pngcairo size 1200,800 font ",10"
set output png
set datafile separator ","
set multiplot layout 2,2 title "Recovery after a ${SPIKE} s spike to 4 x C (0.8 x C before and after), clients retrying up to ${RETRIES} times"
set grid
set xlabel "second"
set xrange [1:$SECS]
set object 1 rect from $CALM.5, graph 0 to $((CALM + SPIKE)).5, graph 1 fc rgb "#eeeeee" behind
f = "$CSV"
do for [cl in "retry budget"] {
	set title (cl eq "retry" ? "retries without a budget" : "retries within a budget of 10 %")
	set ylabel "goodput, requests/s"
	set yrange [0:$((CAP * 13 / 10))]
	plot f u (strcol(2) eq cl && strcol(3) eq "none" ? \$4 : NaN):6 w l lw 2 lc rgb "#cc0000" t "no shedding", \\
	     f u (strcol(2) eq cl && strcol(3) eq "noramp" ? \$4 : NaN):6 w l lw 2 lc rgb "#0055cc" t "shedd, ramp off", \\
	     f u (strcol(2) eq cl && strcol(3) eq "ramp" ? \$4 : NaN):6 w l lw 2 lc rgb "#008800" t "shedd, ramp", \\
	     f u (strcol(2) eq cl && strcol(3) eq "restart" ? \$4 : NaN):6 w l lw 2 dt 2 lc rgb "#aa00aa" t "shedd, ramp, restarted", \\
	     $BASE w l dt 3 lc rgb "#666666" t "0.8 x C offered (first attempts)"
}
do for [cl in "retry budget"] {
	set title "shedd's limit, " . (cl eq "retry" ? "no budget" : "budget 10 %")
	set ylabel "limit, SYN/s (cut at 2 x C)"
	set yrange [0:$((CAP * 2))]
	# The line at 0 keeps a panel without a shedd cell drawable.
	plot 0 w l lc rgb "#000000" notitle, \\
	     f u (strcol(2) eq cl && strcol(3) eq "noramp" && strcol(9) ne "-" ? \$4 : NaN):9 w l lw 2 lc rgb "#0055cc" t "ramp off", \\
	     f u (strcol(2) eq cl && strcol(3) eq "ramp" && strcol(9) ne "-" ? \$4 : NaN):9 w l lw 2 lc rgb "#008800" t "ramp", \\
	     f u (strcol(2) eq cl && strcol(3) eq "restart" && strcol(9) ne "-" ? \$4 : NaN):9 w l lw 2 dt 2 lc rgb "#aa00aa" t "ramp, restarted"
}
unset multiplot
EOF
exp_plot "$TESTBED_TMP/recovery.gp"

{
	exp_header "Recovery after a spike, with retrying clients"
	cat <<EOF

Server: slowserver, 4 workers x 10 ms fixed (C = $CAP/s nominal), backlog 128.
Clients: one loadgen, Poisson arrivals, \`--phases $CALM:$BASE,$SPIKE:$PEAK,$AFTER:$BASE\`
(0.8 x C, 4 x C, 0.8 x C), patience $PATIENCE_MS ms per attempt, every failed
attempt retried at once up to $RETRIES times (\`--retries $RETRIES\`); budget: within
\`--retry-budget $BUDGET\` (retries at most 10 % of requests). Configurations: no
shedd; \`shedd --ramp none\`; shedd's default ramp (\`--ramp 0.1,0.5,1\`, 1 s a
stage); restart: shedd with \`--keep-on-exit\`, stopped with SIGTERM once its
status line says \`mode=recovering\` after the spike and started again (it
adopts the pins and resumes the ramp from \`ctl_state\`). Every cell starts
cold (shedd with the load).

Columns: calm %, after %, last 10 s %: goodput (replies within the patience,
retries included) in % of the base rate of 0.8 x C, before the spike, over
the whole after phase and over its last 10 s; spike %: goodput during the
spike in % of C; recover: seconds after the spike ended until three seconds
in a row serve 90 % of the base rate (never: not within the run); relapse:
the second after the spike at which goodput fell under half the base rate
again after recovering (-: none); stays down: the last 10 s under half the
base rate (a metastable failure: the overload outlives its cause);
restarted: the second of the restart. The per-second goodput and limit of
each cell are in recovery.csv.

![recovery](recovery.png)

EOF
	exp_md_table "$SUMMARY" client config calm_pct spike_pct_of_c after_pct last10_pct recover_s relapse_s stays_down restarted_at_s
} >"$MD"
cat "$MD"
