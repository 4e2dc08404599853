#!/usr/bin/env bash
# scale.sh - shedd at the scale of real hosts, from the simulations that run
# the daemon's and the program's own code in simulated time (tests/test_*.c;
# no testbed, no root): new connections per second (1 k to 1 M), CPUs (1 to
# 128), sources per window (10 to 1 M) and SO_REUSEPORT listeners (1 to 64,
# one stopped). Each test binary, run with SHEDD_SIM_CSV (tests/sim_table.h),
# writes its tables as CSV; each table becomes scale-NAME.csv under EXP_OUT,
# a section of scale.md and a panel of scale.png.
#   SCALE_QUICK=1    each sweep without its largest size(s) (SHEDD_SIM_QUICK):
#                    about 10 s instead of about a minute
#   OUTPUT=.output   where the test binaries are (built when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin scale 4 15 SCALE_QUICK

SCALE_QUICK=${SCALE_QUICK:-0}
OUTPUT=${OUTPUT:-.output}
[[ "$SCALE_QUICK" =~ ^[01]$ ]] || { echo "scale: SCALE_QUICK must be 0 or 1" >&2; exit 2; }

# ---- the tables ----
# scale_table NAME BINARY TABLE TITLE X Y...: tests/BINARY.c, run with
# SHEDD_SIM_CSV, writes TABLE.csv; it becomes scale-NAME.csv and a section
# TITLE of scale.md, with the reading about_NAME prints (when there is one)
# and the markdown table md_NAME prints (the whole CSV otherwise); its
# panel of scale.png is panel_NAME's, or the Y columns against X.
# A table of another simulation joins with one line here.
NAMES=()
declare -A BIN=() TABLE=() TITLE=() XCOL=() YCOLS=()
scale_table() {
	local name=$1
	NAMES+=("$name")
	BIN[$name]=$2
	TABLE[$name]=$3
	TITLE[$name]=$4
	XCOL[$name]=$5
	shift 5
	YCOLS[$name]="$*"
}

scale_table rate test_cold_start cold_start "New connections per second, 1 k to 1 M: a fresh start and an overload" \
	conn_per_sec shed_pct
scale_table cpus test_spread spread "CPUs, 1 to 128: class rates under every RSS spread" \
	cpus admitted_pct
scale_table cpus-burst test_spread spread_burst "CPUs, 2 to 128: a spike after a pause" \
	cpus admitted burst
scale_table cpus-fair test_spread spread_fair "CPUs, 2 to 128: a heavy source beside 100 light ones" \
	cpus light_fair_pct light_nofair_pct
scale_table sources test_fair_scale fair_scale "Sources per window, 10 to 1 M: per-source fairness" \
	sources light_ok_fair_pct light_ok_nofair_pct
scale_table sources-rate test_fair_scale fair_scale_rate "Sources, 10 to 1 M, of a class at 10 000 SYN/s: per-source fairness" \
	sources light_ok_fair_pct light_ok_nofair_pct
scale_table listeners test_listeners listeners_stopped "SO_REUSEPORT listeners, 1 to 64, one stopped" \
	listeners one_by_one_pct summed_pct
scale_table listeners-overload test_listeners listeners_overload "SO_REUSEPORT listeners, 2 to 64, one stopped, the group at 3 x its capacity" \
	listeners healthy_capacity_per_sec no_shedd_per_sec shedd_per_sec
scale_table ports test_ports ports_stopped "Protected ports, 1 to 8 over 1 to 64 listeners, one port stopped" \
	listeners before_pct ports_pct
scale_table ports-overload test_ports ports_overloaded "Protected ports, 2 to 8 over 2 to 64 listeners, one port at 3 x its capacity" \
	listeners before_per_sec ports_per_sec
scale_table keepalive test_keepalive keepalive "Requests per connection, 1 to 100: keep-alive sessions behind a proxy" \
	n goodput_shedd_pct goodput_none_pct

# ---- run ----
BINS=()
for name in "${NAMES[@]}"; do
	[[ " ${BINS[*]} " == *" ${BIN[$name]} "* ]] || BINS+=("${BIN[$name]}")
done
exp_cells "${#BINS[@]}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rm -f "$EXP_OUT"/scale-*.csv

declare -A SECS=()
for bin in "${BINS[@]}"; do
	exp_cell "$bin"
	make -s --no-print-directory OUTPUT="$OUTPUT" "$OUTPUT/$bin" >&2
	t0=$(date +%s.%N)
	if ! SHEDD_SIM_CSV="$TMP" SHEDD_SIM_QUICK="$SCALE_QUICK" "$OUTPUT/$bin" >"$TMP/$bin.out" 2>&1; then
		cat "$TMP/$bin.out" >&2
		echo "scale: $bin failed: its table is not what it claims, no results written" >&2
		exit 1
	fi
	SECS[$bin]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	echo "scale: $bin ran in ${SECS[$bin]} s" >&2
done
for name in "${NAMES[@]}"; do
	csv="$TMP/${TABLE[$name]}.csv"
	if [ ! -s "$csv" ] || [ "$(wc -l <"$csv")" -lt 2 ]; then
		echo "scale: ${BIN[$name]} wrote no rows of ${TABLE[$name]}.csv (SHEDD_SIM_CSV)" >&2
		exit 1
	fi
	cp "$csv" "$EXP_OUT/scale-$name.csv"
done

# ---- the plot ----
# col NAME COLUMN: the column's number in scale-NAME.csv, for gnuplot.
col() {
	awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) { print i; exit } exit 1 }' \
		"$EXP_OUT/scale-$1.csv" || { echo "scale: scale-$1.csv has no column $2" >&2; exit 1; }
}

# Every panel starts from gnuplot's defaults; "skip 1" passes the header.
panel_head() {
	cat <<EOF
reset
set datafile separator ","
set grid
set title "$1"
EOF
}

panel_rate() {
	local f="$EXP_OUT/scale-rate.csv"
	panel_head "New connections/s, healthy service (capacity 2 x demand), 20 s from a start"
	cat <<EOF
set logscale x
set xlabel "new connections/s"
set ylabel "SYNs shed in the 20 s, %"
set yrange [-3:103]
set key top left
plot "$f" skip 1 u 6:(strcol(1) eq "healthy" && strcol(2) eq "fresh" && \$3 == 128 && \$5 > 1e6 ? \$10 : 1/0) w lp pt 7 lc rgb "#008800" t "fresh start, 128 CPUs", \\
     "$f" skip 1 u 6:(strcol(1) eq "healthy" && strcol(2) eq "fresh" && \$3 == 2 && \$5 > 1e6 ? \$10 : 1/0) w lp pt 6 dt 2 lc rgb "#00aa00" t "fresh start, 2 CPUs", \\
     "$f" skip 1 u 6:(strcol(2) eq "rate-10000" ? \$10 : 1/0) w lp pt 5 lc rgb "#0055cc" t "--rate 10000", \\
     "$f" skip 1 u 6:(strcol(2) eq "before" ? \$10 : 1/0) w lp pt 9 lc rgb "#cc0000" t "the law before the open start"
EOF
	panel_head "New connections/s, overloaded service (capacity half the demand), fresh start"
	cat <<EOF
set logscale x
set xlabel "new connections/s offered"
set ylabel "% of capacity, the last 10 s of 20"
set yrange [0:130]
set key bottom right
plot "$f" skip 1 u 6:(strcol(1) eq "overloaded" && strcol(4) eq "yes" ? 100 * \$12 / \$7 : 1/0) w lp pt 7 lc rgb "#0055cc" t "mean limit", \\
     "$f" skip 1 u 6:(strcol(1) eq "overloaded" && strcol(4) eq "yes" ? \$14 : 1/0) w lp pt 5 lc rgb "#008800" t "goodput", \\
     "$f" skip 1 u 6:(strcol(1) eq "overloaded" && strcol(4) eq "no" ? 100 * \$12 / \$7 : 1/0) w lp pt 6 dt 2 lc rgb "#0055cc" t "mean limit, no sojourn probes", \\
     "$f" skip 1 u 6:(strcol(1) eq "overloaded" && strcol(4) eq "no" ? \$14 : 1/0) w lp pt 4 dt 2 lc rgb "#008800" t "goodput, no sojourn probes"
EOF
}

panel_cpus() {
	local f="$EXP_OUT/scale-cpus.csv"
	panel_head "CPUs: each class of each case (4 RSS spreads x 4 clocks)"
	cat <<EOF
set logscale x 2
set xrange [0.7:180]
set xlabel "CPUs"
set ylabel "admitted, %"
set yrange [95:101]
set key bottom right
plot "$f" skip 1 u (\$2 * (0.92 + 0.16 * rand(0))):(strcol(10) eq "yes" ? \$11 : 1/0) w p pt 7 ps 0.6 lc rgb "#0055cc" t "class over its allocation: % of the allocation", \\
     "$f" skip 1 u (\$2 * (0.92 + 0.16 * rand(0))):(strcol(10) eq "no" ? \$11 : 1/0) w p pt 6 ps 0.6 lc rgb "#008800" t "class under it: % of its SYNs", \\
     99.5 w l dt 2 lc rgb "#888888" t "99.5 % (the test's floor under it)"
EOF
}

panel_cpus_fair() {
	local f="$EXP_OUT/scale-cpus-fair.csv"
	panel_head "CPUs: a heavy source at 10 x its share beside 100 light ones"
	cat <<EOF
set logscale x 2
set xrange [1.5:180]
set xlabel "CPUs"
set ylabel "light sources admitted, %"
set yrange [80:101]
set y2label "heavy source admitted, x its share"
set y2range [0:12]
set y2tics
set key bottom right
plot "$f" skip 1 u 2:6 w p pt 7 lc rgb "#008800" t "light, fairness on", \\
     "$f" skip 1 u 2:7 w p pt 5 lc rgb "#cc0000" t "light, fairness off", \\
     "$f" skip 1 u 2:(\$8 / \$4) axes x1y2 w p pt 6 lc rgb "#008800" t "heavy, on", \\
     "$f" skip 1 u 2:(\$10 / \$4) axes x1y2 w p pt 4 lc rgb "#cc0000" t "heavy, off"
EOF
}

panel_sources() {
	panel_fair "$EXP_OUT/scale-sources.csv" "Sources per window: a class shedding 10 %, three heavy sources at 10 x their share" \
		"sources a window"
}

panel_sources_rate() {
	panel_fair "$EXP_OUT/scale-sources-rate.csv" "Sources of a class at 10 000 SYN/s, shedding 10 %, three heavy at 10 x their share" \
		"sources"
}

# panel_fair CSV TITLE XLABEL: a table of tests/test_fair_scale.c.
panel_fair() {
	local f=$1
	panel_head "$2"
	cat <<EOF
set logscale x
set xrange [5:2e6]
set xlabel "$3"
set ylabel "%"
set yrange [0:105]
set y2label "heavy admitted, x its share"
set y2range [0:15]
set y2tics
set key center right
plot "$f" skip 1 u 1:3 w lp pt 7 lc rgb "#008800" t "light crowd admitted, fairness on", \\
     "$f" skip 1 u 1:4 w lp pt 5 lc rgb "#cc0000" t "light crowd admitted, fairness off", \\
     "$f" skip 1 u 1:2 w lp pt 9 lc rgb "#000000" t "never-seen sources shed", \\
     "$f" skip 1 u 1:5 axes x1y2 w lp pt 6 dt 2 lc rgb "#0055cc" t "heavy address (on)", \\
     "$f" skip 1 u 1:6 axes x1y2 w lp pt 4 dt 2 lc rgb "#7700aa" t "heavy /64 (on)", \\
     "$f" skip 1 u 1:7 axes x1y2 w lp pt 8 dt 2 lc rgb "#cc7700" t "heavy /24 (on)"
EOF
}

panel_listeners() {
	local f="$EXP_OUT/scale-listeners.csv"
	panel_head "Listeners, one stopped, clients at 75 % (from 2: with 1 the service stopped)"
	cat <<EOF
set logscale x 2
set xrange [1.5:90]
set xlabel "SO_REUSEPORT listeners"
set ylabel "healthy listeners' goodput, % of no shedd"
set yrange [0:110]
set key center right
plot "$f" skip 1 u 1:(\$1 > 1 ? \$7 : 1/0) w lp pt 7 lc rgb "#008800" t "shedd (judged one by one)", \\
     "$f" skip 1 u 1:(\$1 > 1 ? \$5 : 1/0) w lp pt 5 lc rgb "#cc0000" t "listeners summed (shedd before)", \\
     100 w l dt 2 lc rgb "#888888" t "no shedd"
EOF
}

# panel_ports: a point per row, labelled listeners/ports.
panel_ports() {
	local f="$EXP_OUT/scale-ports.csv"
	panel_head "Ports, every listener of one stopped, clients at 75 % (from 2 ports)"
	cat <<EOF
set xlabel "listeners / ports"
set ylabel "healthy ports' goodput, % of no shedd"
set yrange [0:110]
set offsets 0.5, 0.5, 0, 0
set key center right
plot "$f" skip 1 u 0:(\$2 > 1 ? \$8 : 1/0):xtic(sprintf("%d/%d", \$1, \$2)) w lp pt 7 lc rgb "#008800" t "shedd (ports judged one by one)", \\
     "$f" skip 1 u 0:(\$2 > 1 ? \$6 : 1/0) w lp pt 5 lc rgb "#cc0000" t "a port whole in trouble is overload (shedd before)", \\
     100 w l dt 2 lc rgb "#888888" t "no shedd"
EOF
}

panel_ports_overload() {
	local f="$EXP_OUT/scale-ports-overload.csv"
	panel_head "Ports, one offered 3 x its capacity, the others 50 %"
	cat <<EOF
set xlabel "listeners / ports"
set ylabel "goodput, requests/s"
set yrange [0:*]
set offsets 0.5, 0.5, 0, 0
set key top left
plot "$f" skip 1 u 0:6:xtic(sprintf("%d/%d", \$1, \$2)) w lp pt 7 lc rgb "#008800" t "other ports, shedd", \\
     "$f" skip 1 u 0:5 w lp pt 5 lc rgb "#cc0000" t "other ports, shedd before", \\
     "$f" skip 1 u 0:4 w lp pt 4 dt 2 lc rgb "#888888" t "other ports, no shedd", \\
     "$f" skip 1 u 0:11 w lp pt 9 lc rgb "#0055cc" t "the port at 3 x, shedd", \\
     "$f" skip 1 u 0:7 w l dt 3 lc rgb "#0055cc" t "its capacity"
EOF
}

# The Y columns of a table against its X, as points.
panel_keepalive() {
	local f="$EXP_OUT/scale-keepalive.csv" l
	panel_head "Requests per connection: goodput behind a proxy, cold start"
	for l in 1.5 3.0 10.0; do
		awk -F, -v l="$l" 'NR > 1 && $2 == l' "$f" >"$TMP/keepalive-$l.dat"
	done
	cat <<EOF
set logscale x
set xrange [0.8:130]
set xlabel "requests per connection"
set ylabel "goodput, % of C"
set yrange [0:110]
set key bottom left
set datafile separator ","
plot "$TMP/keepalive-1.5.dat" u 1:3 w lp pt 7 lc rgb "#008800" t "shedd, 1.5 x C", \\
     "$TMP/keepalive-3.0.dat" u 1:3 w lp pt 5 lc rgb "#0055cc" t "shedd, 3 x C", \\
     "$TMP/keepalive-10.0.dat" u 1:3 w lp pt 9 lc rgb "#7700aa" t "shedd, 10 x C", \\
     "$TMP/keepalive-3.0.dat" u 1:4 w lp pt 4 dt 2 lc rgb "#cc0000" t "no shedding, 3 x C", \\
     "$TMP/keepalive-10.0.dat" u 1:4 w lp pt 6 dt 2 lc rgb "#cc6600" t "no shedding, 10 x C"
EOF
}

panel_generic() {
	local name=$1 f="$EXP_OUT/scale-$1.csv" x y sep="plot" pt=7
	x=$(col "$name" "${XCOL[$name]}")
	panel_head "${TITLE[$name]}"
	cat <<EOF
set logscale x
set xlabel "${XCOL[$name]}"
set yrange [0:*]
set key bottom right
EOF
	for y in ${YCOLS[$name]}; do
		printf '%s "%s" skip 1 u %d:%d w p pt %d t "%s"' "$sep" "$f" "$x" "$(col "$name" "$y")" "$pt" "$y"
		sep=", \\"$'\n'"    "
		pt=$((pt - 2))
	done
	echo
}

# panel_count NAME: how many panels NAME draws.
panel_count() {
	case $1 in
	rate) echo 2 ;;
	*) echo 1 ;;
	esac
}

PANELS=0
for name in "${NAMES[@]}"; do
	PANELS=$((PANELS + $(panel_count "$name")))
done
ROWS=$(((PANELS + 1) / 2))
{
	cat <<EOF
set terminal pngcairo noenhanced size 1400,$((450 * ROWS)) font ",10"
set output png
set multiplot layout $ROWS,2 title "shedd at scale: simulations with the daemon's and the program's own code"
EOF
	for name in "${NAMES[@]}"; do
		fn="panel_${name//-/_}"
		if declare -F "$fn" >/dev/null; then "$fn"; else panel_generic "$name"; fi
	done
	echo "unset multiplot"
} >"$TMP/scale.gp"
rm -f "$EXP_OUT/scale.png"
gnuplot -e "png='$EXP_OUT/scale.png'" "$TMP/scale.gp" || { echo "scale: gnuplot failed" >&2; exit 1; }
[ -s "$EXP_OUT/scale.png" ] || { echo "scale: gnuplot wrote no scale.png" >&2; exit 1; }

# ---- the tables ----
# The rows of scale-NAME.csv that AWK_COND selects, as a markdown table of COLS.
md_rows() {
	local name=$1 cond=$2
	shift 2
	exp_md_table <(awk -F, "NR == 1 || ($cond)" "$EXP_OUT/scale-$name.csv") "$@"
}

about_rate() {
	cat <<'EOF'
`tests/test_cold_start.c`: Poisson SYNs at conn_per_sec, all of the default
class, each charged on one of 128 (or 2) CPUs as RSS spreads them, through
the program's own buckets (`include/token_bucket.h`) and the daemon's own
start and tick (`tick_start()`, `tick_step()`); a server that takes
connections FIFO from an accept queue of 4096 at capacity_per_sec, patience
500 ms. Healthy: capacity 2 x the demand, 20 s from the start. start:
`fresh` (no `--rate`: open, at `--max-rate`), `rate-10000` (`--rate 10000`,
or a running program's lower rate), `before` (the law before the open start:
10 000, +1 % a tick, `--max-rate 100000`). reach_s: when the limit reached
the demand (0: nothing was shed; nan: never). Overloaded: capacity half the
demand, a fresh start; the mean limit and the goodput over the last 10 s,
with the sojourn probes and without them (depth, overflows and completed
handshakes only). Left out: the latency feed, retransmits (a shed SYN is
counted once), several classes.
EOF
}

# shellcheck disable=SC2016 # awk's fields, not the shell's
md_rate() {
	echo "Healthy services:"
	echo
	md_rows rate '$1 == "healthy"' start cpus max_rate_per_sec conn_per_sec offered shed shed_pct reach_s at_max_ticks
	echo
	echo "Overloaded services (the last 10 s):"
	echo
	md_rows rate '$1 == "overloaded"' probes conn_per_sec capacity_per_sec mean_limit_per_sec goodput_per_sec goodput_pct_of_capacity shed overload_ticks ticks
}

about_cpus() {
	cat <<'EOF'
`tests/test_spread.c`: the program's per-CPU caches and shared reserves
(`include/token_bucket.h`) and the allocator (`alloc_rates()`,
`alloc_publish()`) every 100 ms tick, SYNs of Poisson streams charged on the
CPU the spread gives them: even, skewed (half on CPU 0), all on one, or
moving to another CPU every tick; with one clock and with the kernel's coarse
clock at ticks of 1, 4 and 10 ms. 10 s measured after 2 s (2 s for the
1.5 M SYN/s case). A class offered more than its allocation should admit its
allocation (admitted_pct of it); one offered less should lose nothing
(admitted_pct of its SYNs). Every class of every case is a row of
scale-cpus.csv; the table gives, by CPUs, the worst and best of each.
Left out: the NIC itself, CPUs that run late (a softirq's time on a CPU is
instantaneous here).
EOF
}

md_cpus() {
	echo "| cpus | runs | classes over their allocation | admitted, % of the allocation (min-max) | classes under it | admitted, % of their SYNs (min) |"
	echo "|---|---|---|---|---|---|"
	awk -F, 'NR > 1 { n = $2; k = n SUBSEP $1 SUBSEP $4 SUBSEP $5
		if (!(k in seen)) { seen[k] = 1; runs[n]++ }
		if ($10 == "yes") { s[n]++; if (!(n in smin) || $11 < smin[n]) smin[n] = $11; if (!(n in smax) || $11 > smax[n]) smax[n] = $11 }
		else { u[n]++; if (!(n in umin) || $11 < umin[n]) umin[n] = $11 } }
	END { for (n in runs)
		printf "| %s | %d | %d | %s | %d | %s |\n", n, runs[n], s[n], s[n] ? smin[n] "-" smax[n] : "-", u[n], u[n] ? umin[n] : "-" }' \
		"$EXP_OUT/scale-cpus.csv" | sort -t'|' -k2,2n
}

about_cpus_burst() {
	cat <<'EOF'
`tests/test_spread.c`: 3 s of a 20 000 SYN/s flood in a class at 1 000/s,
a pause long enough for every CPU's cache to go stale, then 5 000 SYNs over
every CPU within 1 ms: admitted should be the class's burst (plus what 1 ms
of its rate adds), never one burst per CPU.
EOF
}

about_cpus_fair() {
	cat <<'EOF'
`tests/test_spread.c`: the sketch (`include/fair_sketch.h`) shared by every
simulated CPU, the daemon's limits (`user/core/fair.c`) every tick: 100 light
sources at 10/s each and a heavy one at 100/s (one IPv4 address, 200
addresses of one /24, or IPv6 addresses of one /64), each SYN on a random
CPU, in a class at 1 000/s. light_alone_pct: the light sources without the
heavy one; heavy_fits_per_sec: the heavy one when the light ones ask half
their share (nothing of it should be shed). Left out: two CPUs turning one
sketch cell's window at the same instant (a few counts lost, never
invented).
EOF
}

about_sources() {
	cat <<'EOF'
`tests/test_fair_scale.c`: one class simulated SYN by SYN through the
sketch's own code and the daemon's limit law every 100 ms, fairness on and
off. N light sources (each an IPv6 /64), 2 SYNs a window each (at least
1 100 SYN/s in all), the class's rate what they ask over 1.1, so it sheds
throughout; beside them a heavy address, a heavy /64 and a heavy IPv4 /24
of 10 addresses each, each at 10 x the share (the rate over N + 3).
fresh_shed_pct: never-seen sources judged during the measured windows,
shed for fairness; light_ok: the light crowd's success from its arrival
(a flash crowd into an empty sketch), with fairness and without;
heavy_x_share: the heavy ones' admissions over their share (10 is all
they ask). limit/noise/counted: the address level's limit a window, what
the sketch's noise floor added to it, the sources it counted (linear
counting reads at most 16 384 ln 16 384, about 159 000). Left out: more
than one CPU (see CPUs above), a light crowd of IPv4 sources.
EOF
}

about_sources_rate() {
	cat <<'EOF'
`tests/test_fair_scale.c`, as the table above, with the class at 10 000
SYN/s whatever N: the crowd asks 11 000 SYN/s spread over N sources, a
source at 10 x its share asks 10 x 21 475 / N SYNs a window (0.2 at
1 M: nothing can tell it from the crowd). It is held under what it asks
while that is over its limit, N below about 8 x 21 475 / (3 + floor).
EOF
}

about_keepalive() {
	cat <<'EOF'
`tests/test_keepalive.c`: a proxy that accepts every admitted connection at
once, an upstream of 8 workers, exponential service of 8 ms (C = 1000
requests/s) taken FIFO; Poisson sessions at load x C requests/s, each one
connection carrying n requests one after another, patience 500 ms a request
(a client whose request times out abandons its session); the log feed
gives each answered request's latency and `cr=` (its number on its
connection); completed handshakes are the admitted connections. Cold
start, the daemon's defaults, measured over seconds 10-55. goodput: requests
answered within the patience, in % of C, with shedd and without;
admitted/completed: sessions that arrived in the window, admitted by shedd
and completed whole; limit_per_sec: the mean limit in connections/s, beside
what fits (C / n). Left out: think time between requests, connections
reused across sessions, retransmits.
EOF
}

about_listeners() {
	cat <<'EOF'
`tests/test_listeners.c`: L listeners of 2 workers each, exponential service
of 10 ms (200 req/s a listener), accept queues of 128, Poisson clients at
75 % of the group's capacity hashed uniformly over the listeners, patience
1 s, no retransmits; at 10 s listener 0 stops accepting (its queue fills and
its SYNs overflow, as the kernel does). The goodput of the healthy
listeners over seconds 15-40, without shedd, with the listeners summed
(shedd before listeners were judged one by one) and one by one, through the
daemon's own tick pipeline; limit_per_sec: shedd's mean limit (its start,
10 000, where nothing is cut). With one listener the service itself has
stopped: nothing is served either way.
EOF
}

about_ports() {
	cat <<'EOF'
`tests/test_ports.c`: L listeners over P protected ports (listener i on port
i % P), 2 workers each, exponential service, accept queues of 128; Poisson
clients at 75 % of the capacity spread evenly over the ports, patience 1 s,
no retransmits; at 10 s every listener of port 0 stops accepting. Goodput
of the healthy ports' clients over seconds 15-40: without shedd, judged as
before (a port whole in trouble is the service's overload: before_pct) and
port by port (ports_pct; limit_per_sec, the service's limit, its mean;
port_syn and port_shed, its SYNs and those its limit shed). With one port
the service itself has stopped.
EOF
}

about_ports_overload() {
	cat <<'EOF'
The same, with port 0 offered 3 x its capacity (its server slower than what
is sent to it) and the others 50 % of theirs: goodput of the other ports
(offered_per_sec to ports_per_sec) and of port 0 (hot_*), limited at what
it accepts.
EOF
}

about_listeners_overload() {
	cat <<'EOF'
The same group at 3 x its capacity with one listener stopped: still an
overload, cut (overload_pct: ticks judged overloaded), the healthy listeners
serving near their capacity. Without shedd they serve theirs too here:
their queues of 128 drain in 0.64 s, inside the clients' 1 s; the collapse
without shedd is the goodput experiment's.
EOF
}

{
	exp_header "shedd at scale: simulations with its own code"
	# shellcheck disable=SC2016 # backquotes are markdown's
	cat <<EOF

Each dimension is a cmocka test that links the daemon's and the program's
own code (controller, allocator, buckets, sketch, listeners' verdict) and
runs it in simulated time, deterministically: what a 2-CPU VM cannot drive
with real sockets. The runs' figures are those the tests check (the tests'
TAP comments); the tests, run with \`SHEDD_SIM_CSV\`, write them as CSV
(\`tests/sim_table.h\`), one file per table: $(for n in "${NAMES[@]}"; do printf '`scale-%s.csv`, ' "$n"; done | sed 's/, $//').
Every check of the tests passed in this run (a failed one stops the
experiment). Run time of each test binary: $(for b in "${BINS[@]}"; do printf '%s %s s, ' "$b" "${SECS[$b]}"; done | sed 's/, $//').
EOF
	if [ "$SCALE_QUICK" = 1 ]; then
		cat <<'EOF'
This is a short run (`SCALE_QUICK=1`): each sweep without its largest
size(s) (1 M conn/s, the 1.5 M SYN/s case of the CPUs, 100 k and 1 M
sources, 64 listeners).
EOF
	fi
	cat <<'EOF'

Another simulation that writes its table with `tests/sim_table.h` joins
this experiment with one `scale_table` line in `scripts/exp/scale.sh` (its
CSV, its section here and a panel of the plot follow from that line).

![scale](scale.png)
EOF
	for name in "${NAMES[@]}"; do
		fn=${name//-/_}
		printf '\n## %s\n\n' "${TITLE[$name]}"
		if declare -F "about_$fn" >/dev/null; then
			"about_$fn"
		else
			echo "From \`tests/${BIN[$name]}.c\` (its opening comment gives the model)."
		fi
		echo
		if declare -F "md_$fn" >/dev/null; then
			"md_$fn"
		else
			# Every column of the header, one word each.
			read -r -a cols <<<"$(head -n 1 "$EXP_OUT/scale-$name.csv" | tr , ' ')"
			exp_md_table "$EXP_OUT/scale-$name.csv" "${cols[@]}"
		fi
	done
} >"$EXP_OUT/scale.md"
cat "$EXP_OUT/scale.md"
echo "scale: wrote $EXP_OUT/scale-*.csv, scale.md, scale.png" >&2
