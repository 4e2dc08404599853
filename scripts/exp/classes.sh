#!/usr/bin/env bash
# classes.sh - the four priority classes offered together at 3 x C, each
# from its own source address (one /32 prefix per class), shares chosen so
# the two top classes alone fit (0.3 + 0.5 C) and the rest do not (0.7 and
# 1.5 C). Three configurations: no shedd; strict priority (every floor 0);
# shedd's default floors (10 % of the rate each). Per class: its success
# rate, its share of C, and how long the lowest class waits for its first
# success. Writes classes.csv, classes.md and classes.png.
#   SECS=15   seconds of load per configuration
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin classes 3 20 SECS
testbed_script experiments

SECS=${SECS:-15}
STEADY=4
PATIENCE_MS=250
CLASSES="critical_plus critical sheddable_plus sheddable"
SHARES="0.3 0.5 0.7 1.5"
CSV="$EXP_OUT/classes.csv"
MD="$EXP_OUT/classes.md"
CAP=400 # slowserver, 4 workers x 10 ms

testbed_up
slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600
prefixes=()
set -- $SHARES
i=0
for c in $CLASSES; do
	i=$((i + 1))
	in_cli ip addr add "198.18.0.1$i/24" dev "$IF_CLI"
	prefixes+=(--prefix "198.18.0.1$i/32=$c")
done

echo "config,class,share_of_c,offered_per_sec,ok,offered,success_pct,steady_success_pct,ok_pct_of_c,first_ok_s,longest_wait_s,p99_ms" >"$CSV"

# run CONFIG SHEDD_ARGS...: the four classes for SECS, shedd started with
# them (none: without shedd).
run() {
	local config=$1 i=0 c share rate pids=() line first
	shift
	exp_cell "$config"
	: >"$TESTBED_TMP/shedd.log"
	[ "$config" = none ] || shedd_start --port "$PORT" "${prefixes[@]}" "$@"
	set -- $SHARES
	for c in $CLASSES; do
		i=$((i + 1))
		share=${!i}
		rate=$(awk -v c="$CAP" -v s="$share" 'BEGIN { printf "%d", c * s }')
		ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" \
			--bind "198.18.0.1$i" --rate "$rate" --poisson --duration "$SECS" \
			--patience-ms "$PATIENCE_MS" --seed "$i" \
			>"$TESTBED_TMP/$config-$c" 2>"$TESTBED_TMP/$config-$c.sec" &
		pids+=($!)
		PIDS+=($!)
	done
	wait "${pids[@]}"
	if [ "$config" != none ]; then
		kill -TERM "$SHEDD_PID"
		wait "$SHEDD_PID" || true
	fi
	i=0
	set -- $SHARES
	for c in $CLASSES; do
		i=$((i + 1))
		share=${!i}
		line=$(cat "$TESTBED_TMP/$config-$c")
		# The first second whose requests had a success ("never" if
		# none), and the longest run of seconds without one.
		first=$(awk '/^t=/ { split($1, t, "="); for (i = 2; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "ok" && kv[2] > 0) { print t[2] - 1; exit } } }' "$TESTBED_TMP/$config-$c.sec")
		gap=$(awk '/^t=/ { for (i = 2; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "ok") { run = kv[2] > 0 ? 0 : run + 1; if (run > m) m = run } } }
			END { print m + 0 }' "$TESTBED_TMP/$config-$c.sec")
		awk -v cfg="$config" -v c="$c" -v s="$share" -v cap="$CAP" -v secs="$SECS" \
			-v first="${first:-never}" -v gap="$gap" -v p99="$(field p99_ms "$line")" \
			-v ok="$(field ok "$line")" -v off="$(field offered "$line")" \
			-v sok="$(ok_per_sec "$config-$c" "$STEADY" "$SECS")" 'BEGIN {
			printf "%s,%s,%s,%d,%d,%d,%.1f,%.1f,%.1f,%s,%d,%s\n", cfg, c, s, cap * s, ok, off,
				off ? 100 * ok / off : 0, 100 * sok / (cap * s), 100 * ok / secs / cap, first, gap, p99 }' |
			tee -a "$CSV" >&2
	done
	sleep 2 # the queue drains
}

run none
run strict --floor 0
run floors

cat >"$TESTBED_TMP/classes.gp" <<EOF
set terminal pngcairo noenhanced size 1000,500 font ",10"
set output png
set datafile separator ","
set title "Four classes at 3 x C (shares 0.3, 0.5, 0.7, 1.5 C): success per class, ${SECS} s"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:110]
set ylabel "requests served within the patience, %"
set grid ytics
set key top right
plot "< awk -F, '\$1 == \"none\"' $CSV" u 7:xtic(2) t "no shedd" lc rgb "#cc0000", \
     "< awk -F, '\$1 == \"strict\"' $CSV" u 7 t "strict priority (floors 0)" lc rgb "#0055cc", \
     "< awk -F, '\$1 == \"floors\"' $CSV" u 7 t "default floors (0.1 each)" lc rgb "#008800"
EOF
exp_plot "$TESTBED_TMP/classes.gp"

{
	exp_header "Priority classes at 3 x C"
	cat <<EOF

Server: slowserver, 4 workers x 10 ms fixed (C = $CAP/s nominal), backlog 128.
Clients: one loadgen per class (Poisson arrivals, patience $PATIENCE_MS ms),
from its own address, \`--prefix 198.18.0.1N/32=CLASS\`; offered shares of C:
critical_plus 0.3, critical 0.5, sheddable_plus 0.7, sheddable 1.5 (3 x C in
all; the top two fit in C). strict: \`--floor 0\`; floors: shedd's defaults
(10 % of the rate reserved for each class). Every configuration starts cold.
success %: requests served within the patience over the whole run; steady %:
seconds $STEADY-$SECS, of what the class offered; % of C: the class's goodput
over the run in % of C; first ok: the second (from 0) of the first request
that succeeded; longest wait: the longest run of seconds none of whose
requests succeeded (the class starved).

![classes](classes.png)

EOF
	exp_md_table "$CSV" config class share_of_c offered_per_sec success_pct steady_success_pct ok_pct_of_c first_ok_s longest_wait_s p99_ms
} >"$MD"
cat "$MD"
