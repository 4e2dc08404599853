#!/usr/bin/env bash
# goodput.sh - goodput against offered load, 0.25 x to 10 x the capacity C,
# on two servers: the accept-bound one (slowserver, 4 workers x 10 ms behind
# a 128-entry accept queue, clients with a patience of 250 ms) and nginx in
# front of an upstream of 200 requests/s (scripts/proxy.sh, patience
# 500 ms). Three configurations at each load: no shedding, a fixed
# threshold of 0.9 x C (shedd --controller off --rate 0.9C), and shedd's
# adaptive loop (its defaults, started cold: shedd and the load start
# together). Writes goodput.csv, goodput.md and goodput.png, the
# measurements drawn beside the model: min(L, C^2/L) without shedding,
# min(L, T) with a threshold T.
#   SECS=8               seconds of load per cell
#   LOADS="..."          loads of the accept-bound server, in C
#   NGINX_LOADS="..."    loads behind nginx, in C
#   SERVERS="accept nginx"
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin goodput 0 12 SECS LOADS NGINX_LOADS SERVERS
testbed_script experiments

SECS=${SECS:-8}
LOADS=${LOADS:-"0.25 0.5 1 1.5 2 3 5 10"}
NGINX_LOADS=${NGINX_LOADS:-"0.25 0.5 1 2 4 10"}
SERVERS=${SERVERS:-"accept nginx"}
PATIENCE_MS=250
STEADY=4
CSV="$EXP_OUT/goodput.csv"
MD="$EXP_OUT/goodput.md"

cells=0
for s in $SERVERS; do
	case $s in
	accept) set -- $LOADS; cells=$((cells + 3 * $# + 1)) ;;
	nginx) ;; # scripts/proxy.sh counts its own
	*) echo "goodput: unknown server '$s' (accept, nginx)" >&2; exit 2 ;;
	esac
done
exp_cells "$cells"

HEADER="server,config,load,capacity_per_sec,offered_per_sec,seconds,whole_pct,steady_pct,model_pct,p50_ms,p99_ms,refused,timeouts,errors"
echo "$HEADER" >"$CSV"

# model CONFIG LOAD: the model's goodput in % of C.
model() {
	awk -v c="$1" -v l="$2" 'BEGIN {
		g = l < 1 ? l : 1 / l
		if (c != "none") g = l < 0.9 ? l : 0.9
		printf "%.0f", 100 * g }'
}

pct() { awk -v g="$1" -v c="$2" 'BEGIN { printf "%.0f", 100 * g / c }'; }

accept_bound() {
	local cap l rate name config line
	testbed_up
	slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600
	# C: the accept rate of the saturated server as shedd's signals
	# measure it, shedd not shedding (the median of seconds 3-6).
	exp_cell "accept capacity"
	shedd_start --port "$PORT" --controller off --rate 100000
	load cap 1000 6 5000
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	cap=$(status_field accepts | sed -n 3,6p | cut -d/ -f1 | sort -n | sed -n 2p | cut -d. -f1)
	sleep 6 # the clients of that run give up or finish
	echo "accept-bound server: 4 workers x 10 ms, backlog 128; C = $cap req/s (median accept rate while saturated)" >&2
	for l in $LOADS; do
		rate=$(awk -v c="$cap" -v l="$l" 'BEGIN { printf "%d", c * l }')
		for config in none fixed shedd; do
			exp_cell "accept $config ${l}x ($rate/s)"
			name="accept-$config-$l"
			: >"$TESTBED_TMP/shedd.log"
			case $config in
			none) ;;
			fixed) shedd_start --port "$PORT" --controller off --rate $((cap * 9 / 10)) ;;
			shedd) shedd_start --port "$PORT" ;;
			esac
			load "$name" "$rate" "$SECS" "$PATIENCE_MS"
			if [ "$config" != none ]; then
				kill -TERM "$SHEDD_PID"
				wait "$SHEDD_PID" || true
			fi
			line=$(cat "$TESTBED_TMP/$name")
			echo "accept,$config,$l,$cap,$rate,$SECS,$(pct "$(ok_per_sec "$name" 1 "$SECS")" "$cap"),$(pct "$(ok_per_sec "$name" "$STEADY" "$SECS")" "$cap"),$(model "$config" "$l"),$(field p50_ms "$line"),$(field p99_ms "$line"),$(sec_sum "$name" '^refused$'),$(sec_sum "$name" '^timeout'),$(sec_sum "$name" '^error$')" |
				tee -a "$CSV" >&2
			sleep 2 # the queue of this cell drains
		done
	done
	testbed_down
}

# behind_nginx: the cells of scripts/proxy.sh: no shedd, the fixed
# threshold, shedd fed by nginx's log, all started cold.
behind_nginx() {
	local l cells="" out="$TESTBED_TMP/proxy"
	for l in $NGINX_LOADS; do
		cells+="nginx loadgen none - - $l 1"$'\n'
		cells+="nginx loadgen fixed cold default $l 1"$'\n'
		cells+="nginx loadgen log cold default $l 1"$'\n'
	done
	mkdir -p "$out"
	# Its progress lines are its own (proxy: cell i/N).
	PROXY_CELLS=list CELLS="$cells" EXP_OUT="$out" SECS="$SECS" STEADY="$STEADY" \
		scripts/proxy.sh >/dev/null
	# proxy.csv: front,client,config,start,verify,load,rpc,offered,seconds,
	# whole_pct,from3_pct,steady_pct,steady_per_sec,p50,p99,shed,refused,
	# timeouts,errors,...
	tail -n +2 "$out/proxy.csv" | while IFS=, read -r _ _ config _ _ l _ rate secs whole _ steady _ p50 p99 _ refused timeouts errors _; do
		case $config in log) config=shedd ;; esac
		echo "nginx,$config,$l,200,$rate,$secs,$whole,$steady,$(model "$config" "$l"),$p50,$p99,$refused,$timeouts,$errors"
	done >>"$CSV"
}

for s in $SERVERS; do
	case $s in
	accept) accept_bound ;;
	nginx) behind_nginx ;;
	esac
done

cat >"$TESTBED_TMP/goodput.gp" <<EOF
set terminal pngcairo noenhanced size 1200,500 font ",10"
set output png
set datafile separator ","
set multiplot layout 1,2 title "Goodput against offered load (whole run of ${SECS} s per cell)"
set logscale x
set samples 400
set xrange [0.2:12]
set yrange [0:1.15]
set xlabel "offered load L / C"
set ylabel "goodput / C"
set key top right
set grid
none(x) = x < 1 ? x : 1 / x
thr(x) = x < 0.9 ? x : 0.9
do for [s in "accept nginx"] {
	set title (s eq "accept" ? "accept-bound server (4 x 10 ms, patience 250 ms)" : "behind nginx (upstream 200/s, patience 500 ms)")
	plot none(x) w l lw 1 dt 2 lc rgb "#cc0000" t "model: no shedding", \
	     thr(x) w l lw 1 dt 2 lc rgb "#0055cc" t "model: threshold 0.9 C", \
	     "$CSV" u (strcol(1) eq s && strcol(2) eq "none" ? \$3 : NaN):(\$7/100.) w lp pt 7 lc rgb "#cc0000" t "no shedding", \
	     "" u (strcol(1) eq s && strcol(2) eq "fixed" ? \$3 : NaN):(\$7/100.) w lp pt 5 lc rgb "#0055cc" t "fixed 0.9 C", \
	     "" u (strcol(1) eq s && strcol(2) eq "shedd" ? \$3 : NaN):(\$7/100.) w lp pt 9 lc rgb "#008800" t "shedd adaptive"
}
unset multiplot
EOF
exp_plot "$TESTBED_TMP/goodput.gp"

{
	exp_header "Goodput against offered load"
	cat <<EOF

Each cell offers L x C for $SECS s with open-loop clients (loadgen; Poisson
arrivals behind nginx), every cell started cold: shedd starts with the load.
Accept-bound: slowserver, 4 workers x 10 ms fixed, listen backlog 128,
patience 250 ms; C is measured at the start (the median accept rate while
saturated). Behind nginx: scripts/proxy.sh's upstream of 4 workers x 20 ms
(C = 200/s), patience 500 ms; shedd is fed nginx's request log. fixed:
\`shedd --controller off --rate 0.9C\`; shedd: its defaults. whole %: goodput
(replies within the patience) over the whole cell in % of C; steady %:
seconds $STEADY-$SECS; model %: min(L, C^2/L) without shedding, min(L, 0.9 C)
with a threshold (the adaptive loop has no threshold of its own; its line is
the threshold's). p50/p99 of the replies that came.

![goodput](goodput.png)

EOF
	exp_md_table "$CSV" server config load offered_per_sec whole_pct steady_pct model_pct p50_ms p99_ms refused timeouts errors
} >"$MD"
cat "$MD"
