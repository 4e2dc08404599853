#!/usr/bin/env bash
# flood.sh - the flood experiment: legitimate clients (default class, half
# the server's capacity, patience 3 s) under a spoofed SYN flood of rising
# rate, on the flood testbed (scripts/floodbed.sh: clients and flood share
# the server's receive ring and CPU) with four defences: the kernel alone
# (tcp_syncookies=1), an nftables SYN limit, shedd dropping, shedd verifying.
# For contrast, the kernel alone on the plain two-namespace testbed (the
# flood sent on the clients' veth, no router). Writes
# $FLOOD_OUT/flood.csv and flood.md; every run is bounded, everything is
# removed at the end.
#   FLOOD_RATES="100000 500000 1000000 2000000 max"  flood packets/s
#   SECS=6            seconds of clients per run (the flood lasts 3 s more)
#   FLOOD_CONFIGS="plain kernel nft shedd-drop shedd-verified"
#   FLOOD_OUT=docs/results
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/floodbed.sh
source scripts/floodbed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin flood 0 12 SECS FLOOD_RATES FLOOD_CONFIGS
testbed_script flood

SECS=${SECS:-6}
FLOOD_RATES=${FLOOD_RATES:-"100000 500000 1000000 2000000 max"}
FLOOD_CONFIGS=${FLOOD_CONFIGS:-"plain kernel nft shedd-drop shedd-verified"}
# shedd's controller starts at the server's capacity, as an operator who
# knows the server would start it, and moves on evidence.
FLOOD_SHEDD_START=${FLOOD_SHEDD_START-"--controller aimd --rate $FLOOD_CAPACITY"}
FLOOD_OUT=${FLOOD_OUT:-$EXP_OUT}
EXP_OUT=$FLOOD_OUT
set -- $FLOOD_RATES
nrates=$#
set -- $FLOOD_CONFIGS
exp_cells $((nrates * $#))
FIELDS="flood_target flood_pps legit_offered legit_ok success_pct srv_rx_pps ring_drop_pps
	synack_spoof_pps srv_out_pps napi_cpu_pct napi_ns_per_pkt proc_cpu_pct shedd_limit_max
	shedd_syn shedd_cookie_sent shedd_ack_admitted"

mkdir -p "$FLOOD_OUT"
CSV=$TESTBED_TMP/flood.csv
{
	printf 'testbed,config'
	for f in $FIELDS; do printf ',%s' "$f"; done
	echo
} >"$CSV"

# record TESTBED CONFIG: FR_LINE as a CSV row and a line on stdout.
record() {
	local f
	{
		printf '%s,%s' "$1" "$2"
		for f in $FIELDS; do printf ',%s' "$(field "$f" "$FR_LINE")"; done
		echo
	} >>"$CSV"
	printf '%-8s %-15s %s\n' "$1" "$2" "$FR_LINE"
}

has_config() {
	[[ " $FLOOD_CONFIGS " == *" $1 "* ]]
}

echo "flood experiment: server $FLOOD_WORKERS workers x $FLOOD_SERVICE_MS ms" \
	"(capacity $FLOOD_CAPACITY req/s), clients $FLOOD_LEGIT_RATE/s," \
	"patience $FLOOD_PATIENCE_MS ms, $SECS s per run; server CPU $SRV_CPU," \
	"flood on CPU $WORLD_CPU, clients on CPU $FLOOD_LEGIT_CPU, server processes on CPU $SRV_APP_CPU"
SKIPPED=
if has_config shedd-verified && ! shedd_has_verify; then
	SKIPPED="shedd-verified (this shedd has no --verify)"
	echo "flood: skipping $SKIPPED" >&2
fi

if has_config plain; then
	# The plain testbed: the flood from cli straight into the server's
	# veth; the clients' packets take the veth's other path.
	plainbed_up
	for r in $FLOOD_RATES; do
		exp_cell "plain kernel $r/s"
		flood_run "$r" "$SECS"
		record plain kernel
	done
	testbed_down
	unset FLOOD_NS FLOOD_IF
	SLOW_PID=
fi

floodbed_up
for c in kernel nft shedd-drop shedd-verified; do
	has_config "$c" || continue
	[ "$c" = shedd-verified ] && [ -n "$SKIPPED" ] && continue
	flood_config_start "$c"
	for r in $FLOOD_RATES; do
		exp_cell "floodbed $c $r/s"
		flood_run "$r" "$SECS"
		record floodbed "$c"
	done
	flood_config_stop "$c"
done

cp "$CSV" "$FLOOD_OUT/flood.csv"

# The plot: the legitimate clients served against the flood's rate, one
# line per configuration; and the server's CPU per received packet.
cat >"$TESTBED_TMP/flood.gp" <<EOF
set terminal pngcairo noenhanced size 1200,500 font ",10"
set output png
set datafile separator ","
set multiplot layout 1,2 title "Legitimate clients (${FLOOD_LEGIT_RATE}/s, half of C) under a spoofed SYN flood, ${SECS} s per run"
set logscale x
set format x "%.0s%c"
set xrange [50000:*]
set grid
set key bottom left
set xlabel "flood sent, packets/s"
set ylabel "legitimate connections served, %"
set yrange [0:105]
f = "$FLOOD_OUT/flood.csv"
sel(t, c) = (strcol(1) eq t && strcol(2) eq c)
plot f u (sel("plain", "kernel") ? \$4 : NaN):7 w lp pt 4 lc rgb "#999999" t "plain veth, kernel", \\
     f u (sel("floodbed", "kernel") ? \$4 : NaN):7 w lp pt 7 lc rgb "#cc0000" t "kernel (syncookies)", \\
     f u (sel("floodbed", "nft") ? \$4 : NaN):7 w lp pt 5 lc rgb "#ff8800" t "nftables limit", \\
     f u (sel("floodbed", "shedd-drop") ? \$4 : NaN):7 w lp pt 9 lc rgb "#0055cc" t "shedd, drop", \\
     f u (sel("floodbed", "shedd-verified") ? \$4 : NaN):7 w lp pt 11 lc rgb "#008800" t "shedd, verified"
set ylabel "server NAPI CPU per received packet, ns"
set logscale y
set yrange [100:*]
set key top right
plot f u (sel("floodbed", "kernel") ? \$4 : NaN):13 w lp pt 7 lc rgb "#cc0000" t "kernel (syncookies)", \\
     f u (sel("floodbed", "nft") ? \$4 : NaN):13 w lp pt 5 lc rgb "#ff8800" t "nftables limit", \\
     f u (sel("floodbed", "shedd-drop") ? \$4 : NaN):13 w lp pt 9 lc rgb "#0055cc" t "shedd, drop", \\
     f u (sel("floodbed", "shedd-verified") ? \$4 : NaN):13 w lp pt 11 lc rgb "#008800" t "shedd, verified"
unset multiplot
EOF
exp_plot "$TESTBED_TMP/flood.gp"

# The Markdown report: the table, then the cost of the SYN-ACK paths.
{
	exp_header "Flood experiment"
	echo
	echo "Server: $FLOOD_WORKERS workers x $FLOOD_SERVICE_MS ms (capacity" \
		"$FLOOD_CAPACITY req/s), tcp_syncookies=1, backlog 1024. Clients:" \
		"$FLOOD_LEGIT_RATE connections/s in the default class, patience" \
		"$FLOOD_PATIENCE_MS ms (one SYN retransmission), $SECS s per run; the" \
		"flood runs from the clients' start to the end of their patience." \
		"nftables: SYNs to the port limited to $FLOOD_NFT_RATE/s at the ingress hook." \
		"shedd drop: \`${FLOOD_DROP_ARGS:-(no options)}\`; verified:" \
		"\`$FLOOD_VERIFY_ARGS\`; both start their controller at the server's" \
		"capacity (\`--controller aimd --rate $FLOOD_CAPACITY\`) and move it on evidence."
	[ -z "$SKIPPED" ] || { echo; echo "Not run: $SKIPPED."; }
	echo
	echo "Columns: flood sent (packets/s), legitimate connections served" \
		"within their patience, what the server's veth received and what its" \
		"ring refused, SYN-ACKs to spoofed sources (counted and dropped by the" \
		"router), the TCP segments the server's kernel sent (answers" \
		"of XDP_TX not included), the server NAPI thread's CPU and" \
		"its cost per received packet, the server processes' CPU (slowserver" \
		"and shedd), shedd's highest limit."
	echo
	echo "![flood](flood.png)"
	echo
	echo "| testbed | config | flood target | flood sent/s | legit ok | rx/s | ring drops/s | SYN-ACK spoofed/s | srv TCP out/s | NAPI CPU | ns/pkt | procs CPU | shedd limit |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	# The plain testbed has no NAPI thread to measure, no router to count.
	tail -n +2 "$CSV" | awk -F, '{
		napi = $1 == "plain" ? "-" : $12 " %"
		ns = $1 == "plain" ? "-" : sprintf("%d", $13)
		syn = $1 == "plain" ? "-" : sprintf("%d", $10)
		printf "| %s | %s | %s | %d | %s %% (%d/%d) | %d | %d | %s | %d | %s | %s | %s %% | %s |\n",
			$1, $2, $3, $4, $7, $6, $5, $8, $9, syn, $11, napi, ns, $14, $15
	}'
	echo
	echo "The server's CPU at the highest flood rate of each configuration on" \
		"the flood testbed, side by side: packets it received and SYN-ACKs" \
		"it sent to spoofed sources, per second and per second of its NAPI" \
		"thread's CPU."
	echo
	echo "| testbed | config | received/s | SYN-ACK spoofed/s | NAPI CPU | received per CPU-second | SYN-ACK per CPU-second | ns per received packet |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	tail -n +2 "$CSV" | awk -F, '$1 != "plain" { last[$1 "," $2] = $0; order[$1 "," $2] = NR }
		END {
			for (k in last) print order[k] "\t" last[k]
		}' | sort -n | cut -f2 | awk -F, '{
		cps = $12 > 0 ? $10 / ($12 / 100) : 0
		rps = $12 > 0 ? $8 / ($12 / 100) : 0
		printf "| %s | %s | %d | %d | %s %% | %d | %d | %d |\n", $1, $2, $8, $10, $12, rps, cps, $13
	}'
} >"$FLOOD_OUT/flood.md"
echo
echo "wrote $FLOOD_OUT/flood.csv and $FLOOD_OUT/flood.md"
