#!/usr/bin/env bash
# recovery.sh - recovery after an overload, with clients that retry. The
# accept-bound server (4 workers x 10 ms, backlog 128); clients at 0.8 x C
# for CALM s, 4 x C for SPIKE s, then 0.8 x C for AFTER s, each failed
# attempt retried at once up to 3 times, with a retry budget (10 % of
# requests) and without one. Two scenarios: spike, the arrivals alone; and
# stall, the same with the application stopped (SIGSTOP) for the last
# STALL s of the spike, the case shedd's ramp is for (a service that went
# down: the cut is deep, and the rate must come back without overloading
# it again). Configurations: no shedding; shedd with its ramp off (--ramp
# none: the additive climb); a jump straight back to the last good rate
# (--ramp 1); shedd's ramp (its default, 0.1,0.5,1); and shedd restarted
# (SIGTERM, --keep-on-exit, started again) in the middle of its ramp.
# Goodput and shedd's limit per second; the time to recover; whether the
# service stays down after the spike ends (a metastable failure) and
# whether it falls back after recovering (a relapse). Writes recovery.csv
# (per second), recovery-summary.csv, recovery.md and recovery.png.
#   CALM=5 SPIKE=10 AFTER=20 STALL=3   seconds
#   RECOVERY_LOGS=DIR      keep each cell's shedd log there, as NAME.log
#   RECOVERY_CELLS="..."   CLIENT:CONFIG:SCENARIO (client retry or budget;
#                          config none, noramp, jump, ramp or restart;
#                          scenario spike or stall)
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/proxybed.sh
source scripts/proxybed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin recovery 0 42 CALM SPIKE AFTER STALL RECOVERY_CELLS
testbed_script experiments

CALM=${CALM:-5}
SPIKE=${SPIKE:-10}
AFTER=${AFTER:-20}
STALL=${STALL:-3}
RECOVERY_CELLS=${RECOVERY_CELLS:-"retry:none:spike budget:none:spike retry:ramp:spike budget:ramp:spike
	retry:none:stall retry:noramp:stall retry:jump:stall retry:ramp:stall retry:restart:stall"}
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
testbed_up
slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600
echo "cell,client,config,scenario,second,offered,ok,retries,ok_pct_of_base,limit" >"$CSV"
echo "client,config,scenario,calm_pct,spike_pct_of_c,after_pct,last10_pct,recover_s,relapse_s,stays_down,restarted_at_s" >"$SUMMARY"

# restart_in_ramp T0: once shedd's controller is recovering (a stage of its
# ramp) after the spike, stop it (SIGTERM; --keep-on-exit leaves the
# program shedding) and start it again; RESTARTED is the second of the
# restart after T0 (- if no ramp came). Not in a subshell: the new shedd
# must be this shell's SHEDD_PID, in PIDS, for the teardown.
restart_in_ramp() {
	local t0=$1 deadline=$(($(date +%s) + SECS)) n
	RESTARTED=-
	n=$(wc -l <"$TESTBED_TMP/shedd.log")
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if tail -n +$((n + 1)) "$TESTBED_TMP/shedd.log" | grep -q 'mode=recovering'; then
			RESTARTED=$(awk -v a="$t0" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", n - a }')
			kill -TERM "$SHEDD_PID"
			wait "$SHEDD_PID" || true
			pids_forget "$SHEDD_PID"
			# The limit watch follows the new shedd, into the same file.
			wait "$LIMIT_WATCH_PID" 2>/dev/null || true
			pids_forget "$LIMIT_WATCH_PID"
			cp "$TESTBED_TMP/limits.ts" "$TESTBED_TMP/limits.before"
			shedd_start --port "$PORT" --keep-on-exit --status-interval 200ms
			limit_watch
			return 0
		fi
		sleep 0.05
	done
}

cell() {
	local client=$1 config=$2 scen=$3 name="$1-$2-$3" t0 lpid budget=() restarted=- limits
	exp_cell "$client clients, $config, $scen"
	[ "$client" = budget ] && budget=(--retry-budget "$BUDGET")
	: >"$TESTBED_TMP/shedd.log"
	SHEDD_PID=
	case $config in
	none) ;;
	noramp) shedd_start --port "$PORT" --ramp none --status-interval 200ms ;;
	jump) shedd_start --port "$PORT" --ramp 1 --status-interval 200ms ;;
	ramp) shedd_start --port "$PORT" --status-interval 200ms ;;
	restart) shedd_start --port "$PORT" --keep-on-exit --status-interval 200ms ;;
	*) echo "recovery: unknown configuration '$config'" >&2; return 1 ;;
	esac
	if [ -n "$SHEDD_PID" ]; then limit_watch; fi
	t0=$(date +%s.%N)
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --poisson --seed 5 \
		--phases "$CALM:$BASE,$SPIKE:$PEAK,$AFTER:$BASE" --patience-ms "$PATIENCE_MS" \
		--retries "$RETRIES" "${budget[@]}" >"$TESTBED_TMP/$name" 2>"$TESTBED_TMP/$name.sec" &
	lpid=$!
	PIDS+=("$lpid")
	case $scen in
	spike) ;;
	stall)
		# The application stops for the spike's last STALL seconds (a
		# point in time of the scenario, not a wait for a condition).
		sleep_until "$t0" $((CALM + SPIKE - STALL))
		kill -STOP "$SLOW_PID"
		sleep_until "$t0" $((CALM + SPIKE))
		kill -CONT "$SLOW_PID"
		;;
	*) echo "recovery: unknown scenario '$scen'" >&2; return 1 ;;
	esac
	if [ "$config" = restart ]; then
		sleep_until "$t0" $((CALM + SPIKE))
		restart_in_ramp "$t0"
		restarted=$RESTARTED
	fi
	wait "$lpid"
	pids_forget "$lpid"
	limits=$(seq "$SECS" | sed 's/.*/-/' | tr '\n' ' ')
	if [ -n "$SHEDD_PID" ]; then
		stop_pid "$SHEDD_PID"
		wait "$LIMIT_WATCH_PID" 2>/dev/null || true
		pids_forget "$LIMIT_WATCH_PID"
		# Before a restart, the first shedd's limits, then the second's.
		if [ "$restarted" != - ]; then
			cat "$TESTBED_TMP/limits.ts" >>"$TESTBED_TMP/limits.before"
			mv "$TESTBED_TMP/limits.before" "$TESTBED_TMP/limits.ts"
		fi
		limits=$(limit_trace "$t0" "$SECS")
		if [ -n "${RECOVERY_LOGS:-}" ]; then cp "$TESTBED_TMP/shedd.log" "$RECOVERY_LOGS/$name.log"; fi
		# A shedd left with --keep-on-exit: its program goes too.
		"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove >/dev/null 2>&1 || true
	fi
	# The per-second rows, then the cell's summary.
	awk -v cell="$name" -v cl="$client" -v cf="$config" -v sc="$scen" -v base="$BASE" -v lim="$limits" '
		BEGIN { n = split(lim, L, " ") }
		/^t=/ { split($1, t, "="); s = t[2]; off = ok = rt = 0
			for (i = 2; i <= NF; i++) { split($i, kv, "=")
				if (kv[1] == "offered") off = kv[2]; if (kv[1] == "ok") ok = kv[2]; if (kv[1] == "retries") rt = kv[2] }
			printf "%s,%s,%s,%s,%d,%d,%d,%d,%.1f,%s\n", cell, cl, cf, sc, s, off, ok, rt, 100 * ok / base, (s <= n ? L[s] : "-") }' \
		"$TESTBED_TMP/$name.sec" >>"$CSV"
	awk -F, -v cell="$name" -v cl="$client" -v cf="$config" -v sc="$scen" -v calm="$CALM" -v spike="$SPIKE" \
		-v secs="$SECS" -v base="$BASE" -v cap="$CAP" -v rs="$restarted" '
		$1 == cell { ok[$5] = $7 }
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
			printf "%s,%s,%s,%.0f,%.0f,%.0f,%.0f,%s,%s,%s,%s\n", cl, cf, sc, 100 * mean(1, calm) / base,
				100 * mean(calm + 1, e) / cap, 100 * mean(e + 1, secs) / base, 100 * last / base,
				rec, rel, (last < 0.5 * base ? "yes" : "no"), rs
		}' "$CSV" | tee -a "$SUMMARY" >&2
	sleep 3 # the queue of this cell drains
}

set -- $RECOVERY_CELLS
exp_cells $#
for c in $RECOVERY_CELLS; do
	IFS=: read -r cl cf sc <<<"$c"
	cell "$cl" "$cf" "${sc:-spike}"
done
cp "$SUMMARY" "$EXP_OUT/recovery-summary.csv"

cat >"$TESTBED_TMP/recovery.gp" <<EOF
set terminal pngcairo noenhanced size 1300,850 font ",10"
set output png
set datafile separator ","
set multiplot layout 2,2 title "Recovery after ${SPIKE} s at 4 x C (0.8 x C before and after), clients retrying up to ${RETRIES} times"
set grid
set xlabel "second"
set xrange [1:$SECS]
set object 1 rect from $CALM.5, graph 0 to $((CALM + SPIKE)).5, graph 1 fc rgb "#eeeeee" behind
f = "$CSV"
sel(cl, cf, sc) = strcol(2) eq cl && strcol(3) eq cf && strcol(4) eq sc
set title "spike: goodput"
set ylabel "goodput, requests/s"
set yrange [0:$((CAP * 13 / 10))]
plot $BASE w l dt 3 lc rgb "#666666" t "0.8 x C (first attempts)", \\
     f u (sel("retry", "none", "spike") ? \$5 : NaN):7 w l lw 2 lc rgb "#cc0000" t "no shedding, retries", \\
     f u (sel("budget", "none", "spike") ? \$5 : NaN):7 w l lw 2 dt 2 lc rgb "#cc0000" t "no shedding, retry budget", \\
     f u (sel("retry", "ramp", "spike") ? \$5 : NaN):7 w l lw 2 lc rgb "#008800" t "shedd, retries", \\
     f u (sel("budget", "ramp", "spike") ? \$5 : NaN):7 w l lw 2 dt 2 lc rgb "#008800" t "shedd, retry budget"
set title "stall of ${STALL} s at the spike's end, retries: goodput"
set object 2 rect from $((CALM + SPIKE - STALL)).5, graph 0 to $((CALM + SPIKE)).5, graph 1 fc rgb "#ffdddd" behind
plot $BASE w l dt 3 lc rgb "#666666" t "0.8 x C (first attempts)", \\
     f u (sel("retry", "none", "stall") ? \$5 : NaN):7 w l lw 2 lc rgb "#cc0000" t "no shedding", \\
     f u (sel("retry", "noramp", "stall") ? \$5 : NaN):7 w l lw 2 lc rgb "#0055cc" t "shedd --ramp none", \\
     f u (sel("retry", "jump", "stall") ? \$5 : NaN):7 w l lw 2 lc rgb "#ff8800" t "shedd --ramp 1 (jump)", \\
     f u (sel("retry", "ramp", "stall") ? \$5 : NaN):7 w l lw 2 lc rgb "#008800" t "shedd, ramp", \\
     f u (sel("retry", "restart", "stall") ? \$5 : NaN):7 w l lw 2 dt 2 lc rgb "#aa00aa" t "shedd, ramp, restarted"
unset object 2
set title "spike: shedd's limit"
set ylabel "limit, SYN/s (cut at 2 x C)"
set yrange [0:$((CAP * 2))]
# The line at 0 keeps a panel without a shedd cell drawable.
plot 0 w l lc rgb "#000000" notitle, \\
     f u (sel("retry", "ramp", "spike") && strcol(10) ne "-" ? \$5 : NaN):10 w l lw 2 lc rgb "#008800" t "retries", \\
     f u (sel("budget", "ramp", "spike") && strcol(10) ne "-" ? \$5 : NaN):10 w l lw 2 dt 2 lc rgb "#008800" t "retry budget"
set title "stall: shedd's limit"
set object 2 rect from $((CALM + SPIKE - STALL)).5, graph 0 to $((CALM + SPIKE)).5, graph 1 fc rgb "#ffdddd" behind
plot 0 w l lc rgb "#000000" notitle, \\
     f u (sel("retry", "noramp", "stall") && strcol(10) ne "-" ? \$5 : NaN):10 w l lw 2 lc rgb "#0055cc" t "--ramp none", \\
     f u (sel("retry", "jump", "stall") && strcol(10) ne "-" ? \$5 : NaN):10 w l lw 2 lc rgb "#ff8800" t "--ramp 1", \\
     f u (sel("retry", "ramp", "stall") && strcol(10) ne "-" ? \$5 : NaN):10 w l lw 2 lc rgb "#008800" t "ramp", \\
     f u (sel("retry", "restart", "stall") && strcol(10) ne "-" ? \$5 : NaN):10 w l lw 2 dt 2 lc rgb "#aa00aa" t "ramp, restarted"
unset multiplot
EOF
exp_plot "$TESTBED_TMP/recovery.gp"

{
	exp_header "Recovery after a spike, with retrying clients"
	cat <<EOF

Server: slowserver, 4 workers x 10 ms fixed (C = $CAP/s nominal), backlog 128.
Clients: one loadgen, Poisson arrivals, \`--phases $CALM:$BASE,$SPIKE:$PEAK,$AFTER:$BASE\`
(0.8 x C, 4 x C, 0.8 x C), patience $PATIENCE_MS ms per attempt, every failed
attempt retried at once up to $RETRIES times (\`--retries $RETRIES\`, client retry);
budget: within \`--retry-budget $BUDGET\` (retries at most 10 % of requests).
Scenarios: spike, the arrivals alone; stall, the application also stopped
(SIGSTOP) for the spike's last $STALL s and resumed as it ends. Configurations: none,
no shedd; noramp, \`shedd --ramp none\` (after a cut, the additive climb); jump,
\`--ramp 1\` (straight back to the last good rate); ramp, shedd's default
(\`--ramp 0.1,0.5,1\`, 1 s a stage); restart: the ramp, with \`--keep-on-exit\`,
stopped with SIGTERM once its status line says \`mode=recovering\` after the
spike and started again (it adopts the pins and resumes from \`ctl_state\`).
Every cell starts cold (shedd with the load).

Columns: calm %, after %, last 10 s %: goodput (replies within the patience,
retries included) in % of the base rate of 0.8 x C, before the spike, over
the whole after phase and over its last 10 s; spike %: goodput during the
spike in % of C; recover: seconds after the spike ended until three seconds
in a row serve 90 % of the base rate (never: not within the run); relapse:
the second after the spike at which goodput fell under half the base rate
again after recovering (-: none); stays down: the last 10 s under half the
base rate (a metastable failure: the overload outlives its cause);
restarted: the second of the restart (-: none). The per-second goodput and
limit of each cell are in recovery.csv.

![recovery](recovery.png)

EOF
	exp_md_table "$SUMMARY" client config scenario calm_pct spike_pct_of_c after_pct last10_pct recover_s relapse_s stays_down restarted_at_s
} >"$MD"
cat "$MD"
