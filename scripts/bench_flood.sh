#!/usr/bin/env bash
# bench_flood.sh - `make bench`'s flood throughput: a spoofed SYN flood at
# full speed (the live-frames generator, --rate max) into the flood
# testbed's server veth, whose receive NAPI thread is pinned to one CPU
# (scripts/floodbed.sh), against each configuration in turn: trivial
# XDP_DROP, XDP_DROP after reading the TCP flags, shedd's drop path and
# cookie path, an nftables ingress limit, an iptables hashlimit rule, the
# kernel alone with SYN cookies; IPv4 and IPv6. For each: the packets per
# second the server handled (what its veth's XDP program ran on; frames the
# full ring refused are not handled) and the nanoseconds its receive CPU
# spent per packet. The configurations are interleaved round-robin, every
# round runs each once; min / median / max over the rounds, and ratios
# between configurations, each from one round and then summarised the same
# way. Environment:
#   BENCH_ROUNDS=5      rounds
#   BENCH_SECS=3        measured seconds per cell (after BENCH_WARM_S=1)
#   BENCH_FAMILIES="4 6"
#   BENCH_FLOOD_CONFIGS="xdp-drop xdp-readdrop shedd-drop shedd-drop-nofair shedd-cookie nft
#                        hashlimit kernel"
#   BENCH_OUT           directory of the CSV files (default: a new
#                       temporary directory): flood_rounds.csv (one row per
#                       round, family and configuration), flood_summary.csv,
#                       flood_ratios.csv
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/floodbed.sh
source scripts/floodbed.sh
testbed_script bench_flood

BENCH_ROUNDS=${BENCH_ROUNDS:-5}
BENCH_SECS=${BENCH_SECS:-3}
BENCH_FAMILIES=${BENCH_FAMILIES:-"4 6"}
BENCH_FLOOD_CONFIGS=${BENCH_FLOOD_CONFIGS:-$BENCH_CONFIGS_ALL}
BENCH_OUT=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/shedd-bench.XXXXXX")}

bad() { echo "bench_flood: $*" >&2; exit 2; }
if ! [[ "$BENCH_ROUNDS" =~ ^[1-9][0-9]?$ ]]; then
	bad "BENCH_ROUNDS: '$BENCH_ROUNDS' is not a count of rounds in 1..99"
fi
if ! [[ "$BENCH_SECS" =~ ^[1-9][0-9]?$ ]]; then
	bad "BENCH_SECS: '$BENCH_SECS' is not a number of seconds in 1..99"
fi
for f in $BENCH_FAMILIES; do
	case $f in 4 | 6) ;; *) bad "BENCH_FAMILIES: '$f' is neither 4 nor 6" ;; esac
done
for c in $BENCH_FLOOD_CONFIGS; do
	case " $BENCH_CONFIGS_ALL " in
	*" $c "*) ;;
	*) bad "BENCH_FLOOD_CONFIGS: unknown configuration '$c' (known: $BENCH_CONFIGS_ALL)" ;;
	esac
done
[ "$BENCH_ROUNDS" -ge 5 ] ||
	echo "bench_flood: $BENCH_ROUNDS rounds (fewer than 5): a preliminary run" >&2
for t in "$FLOODGEN" "$XDPROUTER" "$SLOWSERVER" "$SHEDD" "$ROOT/.output/xdp_drop.bpf.o" \
	"$ROOT/.output/xdp_readdrop.bpf.o" "$XDP_PASS_OBJ"; do
	[ -e "$t" ] || bad "$t is missing: build with make all"
done
mkdir -p "$BENCH_OUT" || bad "cannot create BENCH_OUT '$BENCH_OUT'"

ROUNDS_CSV=$BENCH_OUT/flood_rounds.csv
SUMMARY_CSV=$BENCH_OUT/flood_summary.csv
RATIOS_CSV=$BENCH_OUT/flood_ratios.csv
FIELDS="handled_pps ns_per_pkt napi_cpu_pct sent_pps ring_drop_pps answered_pps"
echo "round,family,config,secs,${FIELDS// /,}" >"$ROUNDS_CSV"

floodbed_up

read -ra families <<<"$BENCH_FAMILIES"
read -ra configs <<<"$BENCH_FLOOD_CONFIGS"
cells=$(( BENCH_ROUNDS * ${#families[@]} * ${#configs[@]} ))
echo "flood throughput: $BENCH_ROUNDS rounds x ${#families[@]} families x" \
	"${#configs[@]} configurations, ${BENCH_SECS} s each; receive CPU $SRV_CPU," \
	"generator on $WORLD_CPU; kernel $(uname -r)"
start=$(date +%s)
done_cells=0
for ((round = 1; round <= BENCH_ROUNDS; round++)); do
	for fam in "${families[@]}"; do
		for cfg in "${configs[@]}"; do
			bench_config_start "$cfg" "$fam" ||
				{ echo "bench_flood: starting $cfg (IPv$fam) failed" >&2; exit 1; }
			bench_measure "$BENCH_SECS" "$fam" ||
				{ echo "bench_flood: measuring $cfg (IPv$fam) failed" >&2; exit 1; }
			bench_config_stop "$cfg" "$fam" ||
				{ echo "bench_flood: stopping $cfg (IPv$fam) failed" >&2; exit 1; }
			row="$round,$fam,$cfg,$BENCH_SECS"
			for f in $FIELDS; do row+=",$(field "$f" "$BM_LINE")"; done
			echo "$row" >>"$ROUNDS_CSV"
			done_cells=$(( done_cells + 1 ))
			now=$(date +%s)
			eta=$(( (now - start) * (cells - done_cells) / done_cells ))
			printf '[%3d/%d] round %d IPv%s %-13s %6.2f Mpps %7.1f ns/pkt (CPU %s%%, ring drop %.2f Mpps, answered %.2f Mpps)  ETA %dm%02ds\n' \
				"$done_cells" "$cells" "$round" "$fam" "$cfg" \
				"$(awk -v v="$(field handled_pps "$BM_LINE")" 'BEGIN { print v / 1e6 }')" \
				"$(field ns_per_pkt "$BM_LINE")" "$(field napi_cpu_pct "$BM_LINE")" \
				"$(awk -v v="$(field ring_drop_pps "$BM_LINE")" 'BEGIN { print v / 1e6 }')" \
				"$(awk -v v="$(field answered_pps "$BM_LINE")" 'BEGIN { print v / 1e6 }')" \
				$(( eta / 60 )) $(( eta % 60 ))
		done
	done
done

# The summary: min / median / max per configuration ("Mpps/CPU": packets per
# second one full receive CPU would handle at the median cost, 1000 / ns;
# a configuration whose CPU % is well below 100 was held back by the
# generator, not by the server), then the ratios, each
# computed within a round (side by side) and summarised over the rounds.
# A ratio is NUM/DEN of a field: "pps" handled packets/s, "ns" ns/packet,
# "ans" answered SYN-ACKs/s.
RATIOS="shedd-drop/xdp-drop:pps shedd-drop/xdp-drop:ns shedd-drop/xdp-readdrop:ns
	shedd-drop/shedd-drop-nofair:ns
	xdp-readdrop/xdp-drop:ns shedd-drop/nft:pps shedd-drop/hashlimit:pps
	shedd-drop/kernel:pps shedd-cookie/kernel:pps shedd-cookie/kernel:ans
	shedd-cookie/xdp-drop:ns"
awk -F, -v ratios="$RATIOS" -v order="$BENCH_FLOOD_CONFIGS" -v fams="$BENCH_FAMILIES" \
	-v summary="$SUMMARY_CSV" -v ratios_csv="$RATIOS_CSV" '
function sortn(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
}
# mmm KEY: "min median max" of the values V[KEY, 1..N[KEY]]
function mmm(key,   i, n, a) {
	n = N[key]
	for (i = 1; i <= n; i++) a[i] = V[key, i]
	sortn(a, n)
	MIN = a[1]; MAX = a[n]
	MED = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(key, v) { V[key, ++N[key]] = v }
NR == 1 { next }
{
	r = $1; f = $2; c = $3
	PPS[r, f, c] = $5; NS[r, f, c] = $6; ANS[r, f, c] = $10
	add(f SUBSEP c SUBSEP "pps", $5 / 1e6); add(f SUBSEP c SUBSEP "ns", $6)
	add(f SUBSEP c SUBSEP "ans", $10 / 1e6); add(f SUBSEP c SUBSEP "cpu", $7)
	if (r > rounds) rounds = r
}
END {
	nc = split(order, cs, " "); nf = split(fams, fs, " "); nr = split(ratios, rs, " ")
	print "family,config,mpps_min,mpps_median,mpps_max,ns_min,ns_median,ns_max,mpps_per_cpu,answered_mpps_median,cpu_pct_median" >summary
	print "family,ratio,field,min,median,max" >ratios_csv
	for (i = 1; i <= nf; i++) {
		f = fs[i]
		printf "\nIPv%s, %d rounds (min / median / max)\n", f, rounds
		printf "| %-13s | %-22s | %-22s | %-8s | %-13s | %s |\n", "configuration", "Mpps handled",
			"ns/packet", "Mpps/CPU", "answered Mpps", "CPU %"
		printf "|---------------|------------------------|------------------------|----------|---------------|-------|\n"
		for (j = 1; j <= nc; j++) {
			c = cs[j]; k = f SUBSEP c
			if (!N[k SUBSEP "pps"]) continue
			mmm(k SUBSEP "pps"); p1 = MIN; p2 = MED; p3 = MAX
			mmm(k SUBSEP "ns"); n1 = MIN; n2 = MED; n3 = MAX
			mmm(k SUBSEP "ans"); a2 = MED
			mmm(k SUBSEP "cpu"); u2 = MED
			printf "| %-13s | %6.2f / %6.2f / %6.2f | %6.0f / %6.0f / %6.0f | %8.2f | %13.2f | %5.0f |\n",
				c, p1, p2, p3, n1, n2, n3, 1000 / n2, a2, u2
			printf "%s,%s,%.4f,%.4f,%.4f,%.1f,%.1f,%.1f,%.4f,%.4f,%.1f\n", f, c, p1, p2, p3,
				n1, n2, n3, 1000 / n2, a2, u2 >summary
		}
		printf "\nIPv%s ratios, each within one round (min / median / max)\n", f
		for (j = 1; j <= nr; j++) {
			split(rs[j], x, ":"); split(x[1], nd, "/"); fld = x[2]
			key = "ratio" SUBSEP f SUBSEP rs[j]; N[key] = 0
			for (r = 1; r <= rounds; r++) {
				if (fld == "pps") { a = PPS[r, f, nd[1]]; b = PPS[r, f, nd[2]] }
				else if (fld == "ns") { a = NS[r, f, nd[1]]; b = NS[r, f, nd[2]] }
				else { a = ANS[r, f, nd[1]]; b = ANS[r, f, nd[2]] }
				if (a == "" || b == "" || b + 0 == 0) continue
				add(key, a / b)
			}
			if (!N[key]) continue
			mmm(key)
			name = fld == "pps" ? "packets/s" : fld == "ns" ? "ns/packet" : "answered/s"
			printf "  %-26s %-10s %6.2f / %6.2f / %6.2f x\n", x[1], name, MIN, MED, MAX
			printf "%s,%s,%s,%.3f,%.3f,%.3f\n", f, x[1], fld, MIN, MED, MAX >ratios_csv
		}
	}
}' "$ROUNDS_CSV"
echo
echo "flood throughput: CSV in $BENCH_OUT (flood_rounds.csv, flood_summary.csv, flood_ratios.csv)"
