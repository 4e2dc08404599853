#!/usr/bin/env bash
# fairness.sh - per-source fairness: 100 light real clients (each from its
# own /24) and one heavy real client (one address) in one class, at a fixed
# class rate (--controller off --rate RATE), the light ones offering 1.1 x
# RATE in all, so the class sheds. The heavy one offers 0 (the baseline),
# 1, 2, 5, 10, 20 and 50 times its fair share (RATE / 101 sources), with
# shedd's fairness on (the default, --fair 2) and off (--fair off). Per cell:
# the light clients' success (all of them, and the 10th percentile of their
# sources' own success), against the baseline's; the heavy one's admitted
# rate against its share and its limit. Every cell starts cold: a new shedd,
# and the figures are of the whole run. Writes fairness.csv, fairness.md and
# fairness.png.
#   SECS=20          seconds of load per cell
#   RATE=200         the class's fixed rate, SYN/s
#   MULTIPLES="1 2 5 10 20 50"   the heavy source's offered rate, x its share
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin fairness 14 26 SECS RATE MULTIPLES
testbed_script experiments

SECS=${SECS:-20}
RATE=${RATE:-200}
MULTIPLES=${MULTIPLES:-"1 2 5 10 20 50"}
LIGHTS=100
LIGHT_BASE=198.19.1.7 # source i: 198.19.(1 + i).7, each in its own /24
HEAVY=198.19.250.1
PATIENCE_MS=1000
CLASS=critical
CSV="$EXP_OUT/fairness.csv"
MD="$EXP_OUT/fairness.md"
SHEDCTL=${SHEDCTL:-"$ROOT/shedctl"}

[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || { echo "fairness: SECS must be a whole number of seconds" >&2; exit 2; }
[[ "$RATE" =~ ^[1-9][0-9]*$ ]] || { echo "fairness: RATE must be a whole number of SYN/s" >&2; exit 2; }
for k in $MULTIPLES; do
	[[ "$k" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "fairness: MULTIPLES: '$k' is not a number" >&2; exit 2; }
done
exp_cells $((2 * (1 + $(wc -w <<<"$MULTIPLES"))))

testbed_up
# A server far faster than RATE: what is shed is shedd's doing, not its.
slow_start --workers 4 --service-ms 1 --duration 3600
client_addrs 198.19.0.0/17 "$HEAVY/32"

LIGHT_RATE=$(awk -v r="$RATE" 'BEGIN { printf "%d", 1.1 * r }')
SHARE=$(awk -v r="$RATE" -v n="$LIGHTS" 'BEGIN { printf "%.3f", r / (n + 1) }')

echo "config,heavy_x_share,heavy_offered_per_sec,heavy_ok_per_sec,heavy_x_admitted,limit_per_sec,light_offered_per_sec,light_success_pct,light_pct_of_baseline,light_p10_source_pct,fair_shed,class_rate_per_sec,sources" >"$CSV"

# cell CONFIG K: K x the share from the heavy source (0: none) for SECS,
# beside the light ones, shedd started with CONFIG's --fair.
cell() {
	local config=$1 k=$2 fair heavy_rate pids=() st light heavy base p10
	exp_cell "$config heavy ${k}x"
	fair=2
	[ "$config" = nofair ] && fair=off
	: >"$TESTBED_TMP/shedd.log"
	shedd_start --port "$PORT" --prefix "198.19.0.0/16=$CLASS" --controller off \
		--rate "$RATE" --verify off --fair "$fair"
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --bind "$LIGHT_BASE" \
		--sources "$LIGHTS" --source-prefix 24 --per-source --rate "$LIGHT_RATE" --poisson \
		--duration "$SECS" --patience-ms "$PATIENCE_MS" --seed 1 \
		>"$TESTBED_TMP/light" 2>"$TESTBED_TMP/light.sec" &
	pids+=($!)
	PIDS+=($!)
	heavy_rate=$(awk -v s="$SHARE" -v k="$k" 'BEGIN { printf "%d", s * k + 0.5 }')
	if [ "$heavy_rate" -gt 0 ]; then
		ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --bind "$HEAVY" \
			--rate "$heavy_rate" --poisson --duration "$SECS" --patience-ms "$PATIENCE_MS" \
			--seed 2 >"$TESTBED_TMP/heavy" 2>"$TESTBED_TMP/heavy.sec" &
		pids+=($!)
		PIDS+=($!)
	else
		echo "offered=0 ok=0" >"$TESTBED_TMP/heavy"
	fi
	# The class's rate, sources and limit near the end of the run.
	sleep "$((SECS - 2))"
	"$SHEDCTL" status --netns "$NS_SRV" --iface "$IF_SRV" --json >"$TESTBED_TMP/status.json"
	wait "${pids[@]}"
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	st=$(jq -r --arg c "$CLASS" '.classes[] | select(.class == $c) |
		((.fair.per_level // []) | map(select(.level == "addr")) | .[0] // {}) as $a |
		[.rate_per_sec, ($a.sources // "nan"), ($a.limit_per_sec // "nan"), (.fair.shed // 0)] |
		map(tostring) | join(" ")' "$TESTBED_TMP/status.json")
	light=$(head -n 1 "$TESTBED_TMP/light")
	heavy=$(cat "$TESTBED_TMP/heavy")
	# The 10th percentile of the light sources' own success.
	p10=$(awk '/^source=/ { o = 0; k = 0
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "offered") o = kv[2]; if (kv[1] == "ok") k = kv[2] }
		if (o) print 100 * k / o }' "$TESTBED_TMP/light" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR - 1) / 10) + 1]; else print "nan" }')
	base=${BASE_PCT[$config]:-}
	read -r crate sources limit shed <<<"$st"
	awk -v cfg="$config" -v k="$k" -v hr="$heavy_rate" -v share="$SHARE" -v secs="$SECS" \
		-v hok="$(field ok "$heavy")" -v lok="$(field ok "$light")" -v loff="$(field offered "$light")" \
		-v lrate="$LIGHT_RATE" -v base="$base" -v p10="$p10" -v limit="$limit" -v shed="$shed" \
		-v crate="$crate" -v sources="$sources" 'BEGIN {
		pct = loff ? 100 * lok / loff : 0
		printf "%s,%s,%d,%.1f,%.2f,%s,%d,%.1f,%s,%.1f,%s,%s,%s\n", cfg, k, hr, hok / secs,
			hok / secs / share, limit, lrate, pct, base == "" ? "100.0" : sprintf("%.1f", 100 * pct / base),
			p10, shed, crate, sources }' | tee -a "$CSV" >&2
	[ -n "$base" ] || BASE_PCT[$config]=$(tail -n 1 "$CSV" | cut -d, -f8)
	sleep 1
}

declare -A BASE_PCT=()
for config in fair nofair; do
	cell "$config" 0
	for k in $MULTIPLES; do
		cell "$config" "$k"
	done
done

cat >"$TESTBED_TMP/fairness.gp" <<EOF
set terminal pngcairo noenhanced size 1100,500 font ",10"
set output png
set datafile separator ","
set multiplot layout 1,2 title "One heavy source beside ${LIGHTS} light ones in a class at ${RATE} SYN/s (the light ones offer ${LIGHT_RATE}/s), ${SECS} s a cell"
set logscale x
set xrange [0.8:70]
set xlabel "heavy source's offered rate, x its fair share (${SHARE}/s)"
set grid
set key bottom left
set title "light clients"
set ylabel "light clients' success, % of attempts"
set yrange [0:105]
plot "< awk -F, '\$1 == \"fair\" && \$2 > 0' $CSV" u 2:8 w lp pt 7 lc rgb "#008800" t "fairness on (--fair 2)", \
     "< awk -F, '\$1 == \"nofair\" && \$2 > 0' $CSV" u 2:8 w lp pt 5 lc rgb "#cc0000" t "fairness off", \
     "< awk -F, '\$1 == \"fair\" && \$2 > 0' $CSV" u 2:10 w lp pt 6 dt 2 lc rgb "#008800" t "on: 10th percentile of the light sources", \
     "< awk -F, '\$1 == \"nofair\" && \$2 > 0' $CSV" u 2:10 w lp pt 4 dt 2 lc rgb "#cc0000" t "off: 10th percentile of the light sources", \
     ${BASE_PCT[fair]} w l dt 3 lc rgb "#008800" t "on, without the heavy source", \
     ${BASE_PCT[nofair]} w l dt 3 lc rgb "#cc0000" t "off, without the heavy source"
set title "the heavy source"
set ylabel "heavy source's admitted rate, x its fair share"
set logscale y
set yrange [0.5:70]
set key top left
plot "< awk -F, '\$1 == \"fair\" && \$2 > 0' $CSV" u 2:5 w lp pt 7 lc rgb "#008800" t "fairness on (--fair 2)", \
     "< awk -F, '\$1 == \"nofair\" && \$2 > 0' $CSV" u 2:5 w lp pt 5 lc rgb "#cc0000" t "fairness off", \
     x w l dt 3 lc rgb "#888888" t "all it offers", \
     2 w l dt 2 lc rgb "#0055cc" t "the slack (2) x its share"
unset multiplot
EOF
exp_plot "$TESTBED_TMP/fairness.gp"

{
	exp_header "Per-source fairness: a heavy source beside light ones"
	cat <<EOF

Server: slowserver, 4 workers x 1 ms (far above the class's rate).
shedd: \`--controller off --rate $RATE --verify off --prefix 198.19.0.0/16=$CLASS\`
(an unverified class: fairness counts the SYNs that took a token), and
\`--fair 2\` (fair, the default) or \`--fair off\` (nofair); a new shedd for
every cell, so each starts cold and its figures are of the whole run.
Light clients: one loadgen, \`--sources $LIGHTS --source-prefix 24\` (each
source in its own /24), Poisson arrivals at $LIGHT_RATE/s in all (1.1 x the
rate: the class sheds), patience $PATIENCE_MS ms. The heavy client: one
address, Poisson at heavy_x_share x the fair share (RATE / 101 sources =
$SHARE/s). heavy_x_admitted: its successes per second over the share.
limit_per_sec, class_rate_per_sec, sources: the address level's limit, the
class's rate and the sources counted, from \`shedctl status --json\` 2 s
before the end (the limit is the fair share times the slack, 2, from the
sources the sketch counted). light_pct_of_baseline: the light clients'
success over theirs without the heavy one (heavy_x_share 0) in the same
configuration; light_p10_source_pct: the 10th percentile of the light
sources' own success. fair_shed: SYNs shed for fairness (\`fair.shed\`).

![fairness](fairness.png)

EOF
	exp_md_table "$CSV" config heavy_x_share heavy_offered_per_sec heavy_ok_per_sec heavy_x_admitted limit_per_sec light_success_pct light_pct_of_baseline light_p10_source_pct fair_shed class_rate_per_sec sources
} >"$MD"
cat "$MD"
