#!/usr/bin/env bash
# soak.sh - shedd for SOAK_MINUTES (default 30) in front of the accept-bound
# server: every minute 30 s of calm (0.5 x C) then 30 s of overload (3 x C)
# from real clients in class critical, a spoofed SYN flood in the lowest
# class (sheddable) all along, and a SIGHUP every minute that reloads a
# config file whose floors alternate. Per minute: goodput of the calm and of
# the overload half, the daemon's RSS and open descriptors, the reloads it
# applied, and every counter of its stats map, which must never go
# backwards. Writes soak.csv, soak.md and soak.png. Not in the default set.
#   SOAK_MINUTES=30
#   SOAK_FLOOD_RATE=20000   spoofed SYNs per second
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin soak 0 60 SOAK_MINUTES SOAK_FLOOD_RATE
testbed_script experiments

SOAK_MINUTES=${SOAK_MINUTES:-30}
SOAK_FLOOD_RATE=${SOAK_FLOOD_RATE:-20000}
case $SOAK_MINUTES in ""|*[!0-9]*) echo "soak: SOAK_MINUTES=$SOAK_MINUTES: expected 1-55" >&2; exit 2 ;; esac
if [ "$SOAK_MINUTES" -lt 1 ] || [ "$SOAK_MINUTES" -gt 55 ]; then
	echo "soak: SOAK_MINUTES=$SOAK_MINUTES: expected 1-55 (the server runs an hour at most)" >&2
	exit 2
fi
exp_cells "$SOAK_MINUTES"
CAP=400 # slowserver, 4 workers x 10 ms
PATIENCE_MS=250
CSV="$EXP_OUT/soak.csv"
MD="$EXP_OUT/soak.md"
CONF="$TESTBED_TMP/shedd.conf"

# conf N: the config file of reload N; the floor of sheddable alternates.
conf() {
	cat >"$CONF" <<EOF
[shedd]
port = $PORT
prefix = 198.18.0.0/24=critical
floor = sheddable=$([ $(($1 % 2)) = 0 ] && echo 0.05 || echo 0.1)
EOF
}

# counters: every counter of the stats map summed over CPUs, one
# "name value" a line (the per-class ones as cls.N.name).
counters() {
	bpftool map dump pinned "$PIN_DIR/stats" | jq -r '
		[.[0].values[].value | to_entries[] |
			if .key == "cls" then (.value | to_entries[] | .key as $k | .value | to_entries[] |
				{key: "cls.\($k).\(.key)", value: .value})
			else . end | select(.value | type == "number")] |
		group_by(.key)[] | "\(.[0].key) \(map(.value) | add)"'
}

testbed_up
slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600
conf 0
shedd_start --config "$CONF" --user root

echo "minute,calm_offered,calm_ok_per_sec,calm_pct,overload_offered,overload_ok_per_sec,overload_pct_of_c,rss_kib,fds,reloads,counters,counters_backwards,shed_per_sec,cookies_per_sec" >"$CSV"
counters >"$TESTBED_TMP/counters.0"
prev_shed=0
prev_cookies=0
for ((m = 1; m <= SOAK_MINUTES; m++)); do
	exp_cell "minute $m"
	# The flood of this minute (a flood runs 600 s at most).
	flood_bg "$TESTBED_TMP/flood$m" 198.19.0.0/16 "$SOAK_FLOOD_RATE" 60
	load "calm$m" $((CAP / 2)) 30 "$PATIENCE_MS"
	load "over$m" $((CAP * 3)) 30 "$PATIENCE_MS"
	wait "$FLOOD_PID" || true
	conf "$m"
	kill -HUP "$SHEDD_PID"
	wait_for "reload $m" 5 sh -c "[ \$(grep -c 'shedd: reloaded' '$TESTBED_TMP/shedd.log') -ge $m ]"
	counters >"$TESTBED_TMP/counters.$m"
	back=$(awk 'NR == FNR { v[$1] = $2; next } ($1 in v) && $2 < v[$1] { n++ } END { print n + 0 }' \
		"$TESTBED_TMP/counters.$((m - 1))" "$TESTBED_TMP/counters.$m")
	shed=$(awk '$1 ~ /^cls\.[0-9]+\.(dropped|rst_sent)$/ { s += $2 } END { print s + 0 }' "$TESTBED_TMP/counters.$m")
	cookies=$(awk '$1 ~ /^cls\.[0-9]+\.cookie_sent$/ { s += $2 } END { print s + 0 }' "$TESTBED_TMP/counters.$m")
	calm=$(cat "$TESTBED_TMP/calm$m")
	over=$(cat "$TESTBED_TMP/over$m")
	echo "$m,$(field offered "$calm"),$(field goodput_per_sec "$calm"),$(awk -v g="$(field goodput_per_sec "$calm")" -v c=$((CAP / 2)) 'BEGIN { printf "%.1f", 100 * g / c }'),$(field offered "$over"),$(field goodput_per_sec "$over"),$(awk -v g="$(field goodput_per_sec "$over")" -v c="$CAP" 'BEGIN { printf "%.1f", 100 * g / c }'),$(awk '/^VmRSS:/ { print $2 }' "/proc/$SHEDD_PID/status"),$(find "/proc/$SHEDD_PID/fd" -mindepth 1 | wc -l),$(grep -c 'shedd: reloaded' "$TESTBED_TMP/shedd.log"),$(wc -l <"$TESTBED_TMP/counters.$m"),$back,$(((shed - prev_shed) / 60)),$(((cookies - prev_cookies) / 60))" |
		tee -a "$CSV" >&2
	prev_shed=$shed
	prev_cookies=$cookies
done
refused=$(grep -c 'reload refused' "$TESTBED_TMP/shedd.log" || true)
kill -TERM "$SHEDD_PID"
wait "$SHEDD_PID" || true

cat >"$TESTBED_TMP/soak.gp" <<EOF
set terminal pngcairo noenhanced size 1000,800 font ",10"
set output png
set datafile separator ","
set multiplot layout 3,1 title "Soak: ${SOAK_MINUTES} minutes of calm and 3 x C overload, a ${SOAK_FLOOD_RATE}/s spoofed flood, a reload a minute"
set grid
set xlabel "minute"
set ylabel "goodput, % of offered (calm) / of C (overload)"
set yrange [0:110]
set key bottom right
plot "$CSV" u 1:4 w lp pt 7 t "calm (0.5 x C)", "" u 1:7 w lp pt 5 t "overload (3 x C)"
set yrange [0:*]
set ylabel "RSS, MiB"
plot "$CSV" u 1:(\$8/1024.) w lp pt 7 lc rgb "#0055cc" t "shedd RSS"
set ylabel "open descriptors"
plot "$CSV" u 1:9 w lp pt 7 lc rgb "#008800" t "shedd fds"
unset multiplot
EOF
exp_plot "$TESTBED_TMP/soak.gp"

{
	exp_header "Soak"
	cat <<EOF

Server: slowserver, 4 workers x 10 ms fixed (C = $CAP/s nominal), backlog 128.
shedd: \`--config FILE\`, the file \`port = $PORT\`, \`prefix =
198.18.0.0/24=critical\` and a floor of sheddable alternating between 0.05 and
0.1, rewritten and reloaded with SIGHUP at the end of every minute; otherwise
its defaults (the adaptive loop; sheddable verifies while shedding). Each
minute: loadgen at 0.5 x C for 30 s, then at 3 x C for 30 s (class critical,
patience $PATIENCE_MS ms); a spoofed SYN flood of $SOAK_FLOOD_RATE/s from
198.19.0.0/16 (class sheddable) all along. Per minute: goodput of each half,
shedd's RSS and open descriptors at the minute's end, the reloads applied so
far, the stats map's counters and how many went backwards since the minute
before, the SYNs shed per second (dropped or refused with a RST) and those answered
with a cookie SYN-ACK (the flood, once its class sheds).

Reloads refused over the run: $refused.

![soak](soak.png)

EOF
	exp_md_table "$CSV" minute calm_pct overload_ok_per_sec overload_pct_of_c rss_kib fds reloads counters counters_backwards shed_per_sec cookies_per_sec
	echo
	awk -F, 'NR == 2 { r0 = $8; f0 = $9 } NR > 1 { r = $8; f = $9; b += $12; if ($9 > fmax) fmax = $9 }
		END { printf "RSS %d KiB in the first minute, %d KiB in the last; descriptors %d then %d (at most %d); counters gone backwards: %d.\n", r0, r, f0, f, fmax, b }' "$CSV"
} >"$MD"
cat "$MD"
