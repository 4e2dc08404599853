#!/usr/bin/env bash
# keepalive.sh - overload that arrives on open connections: a pool of POOL
# keep-alive clients within capacity (h2load --h1, RPS requests a second
# each, every client one connection it keeps), then CROWD more that arrive
# at CROWD_AT s and stay, through nginx to an upstream of C = WORKERS x
# 1000 / SERVICE_MS requests/s (exponential service times), nginx's log
# feeding shedd. Four cells, each cold: no shedding (none), the SYN limit
# alone (syn: --conn-limit off), the connection limit (limit: --conn-limit
# auto, the default), and the full set (full: --conn-limit auto, --recall
# RECALL). Per second: answers within GOOD_MS (goodput, % of C)
# and the pool's p99; per cell: the goodput and the pool's p50/p99 over
# [20 s, SECS), the live connections, the limit and what was recalled.
# Writes keepalive.csv (per second), keepalive.md and keepalive.png.
# KEEPALIVE_LOGS=DIR keeps each cell's shedd log there as MODE.log, and its
# metrics near the end as MODE.metrics.
#   SECS=70 POOL=50 CROWD=400 CROWD_AT=10 RPS=2 WORKERS=4 SERVICE_MS=20
#   GOOD_MS=500 RECALL=100 MODES="none syn limit full"
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/proxybed.sh
source scripts/proxybed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin keepalive 4 80 SECS POOL CROWD CROWD_AT RPS WORKERS SERVICE_MS GOOD_MS RECALL MODES
testbed_script experiments

SECS=${SECS:-70}
POOL=${POOL:-50}
CROWD=${CROWD:-400}
CROWD_AT=${CROWD_AT:-10}
RPS=${RPS:-2}
WORKERS=${WORKERS:-4}
SERVICE_MS=${SERVICE_MS:-20}
GOOD_MS=${GOOD_MS:-500}
RECALL=${RECALL:-100}
MODES=${MODES:-"none syn limit full"}
WIN_START=20
CSV="$EXP_OUT/keepalive.csv"
MD="$EXP_OUT/keepalive.md"
SLOWSERVER=${SLOWSERVER:-"$ROOT/.output/slowserver"}

for v in SECS POOL CROWD CROWD_AT RPS WORKERS SERVICE_MS GOOD_MS RECALL; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "keepalive: $v must be a whole number > 0" >&2; exit 2; }
done
[ "$SECS" -gt $((WIN_START + 5)) ] || { echo "keepalive: SECS must be over $((WIN_START + 5))" >&2; exit 2; }
[ "$CROWD_AT" -lt "$SECS" ] || { echo "keepalive: CROWD_AT must be under SECS" >&2; exit 2; }
for m in $MODES; do
	case $m in none | syn | limit | full) ;; *) echo "keepalive: MODES: '$m' is not none, syn, limit or full" >&2; exit 2 ;; esac
done
command -v h2load >/dev/null || { echo "keepalive: h2load missing (make deps: nghttp2-client)" >&2; exit 2; }
exp_cells "$(wc -w <<<"$MODES")"
C=$((WORKERS * 1000 / SERVICE_MS))

testbed_up
echo "mode,second,answered,good,good_pct_of_c,pool_answered,pool_p99_ms" >"$CSV"
SUMMARY="$TESTBED_TMP/summary.csv"
echo "mode,goodput_pct_of_c,pool_p50_ms,pool_p99_ms,pool_answered,crowd_answered,live,limit,recalled,crowd_failed" >"$SUMMARY"

# metric NAME: the sum of NAME's samples in shedd's metrics (empty: none).
metric() {
	ip netns exec "$NS_SRV" curl -sS --max-time 5 http://127.0.0.1:9464/metrics 2>/dev/null |
		awk -v n="$1" 'index($1, n "{") == 1 { s += $2; f = 1 } END { if (f) print s }'
}

# cell MODE: a fresh upstream, nginx and shedd (MODE), the pool, the crowd.
cell() {
	local mode=$1 d="$TESTBED_TMP/$1" url p1 p2 t0 live limit recalled failed
	exp_cell "$mode"
	mkdir -p "$d"
	upstream_start "$WORKERS" "$SERVICE_MS" 128 exp
	: >"$TESTBED_TMP/shedd.log"
	case $mode in
	syn) shedd_start --port "$PORT" --conn-limit off ;;
	limit) shedd_start --port "$PORT" --conn-limit auto ;;
	full) shedd_start --port "$PORT" --conn-limit auto --recall "$RECALL" ;;
	esac
	front_start nginx "$LATENCY_SOCK"
	url="http://$SRV_IP:$PORT/"
	ip netns exec "$NS_CLI" timeout $((SECS + 30)) h2load --h1 -c "$POOL" --rps "$RPS" \
		-D "$SECS" --log-file "$d/pool.log" "$url" >"$d/pool.out" 2>&1 &
	p1=$!
	PIDS+=("$p1")
	sleep "$CROWD_AT"
	ip netns exec "$NS_CLI" timeout $((SECS + 30)) h2load --h1 -c "$CROWD" -t 2 \
		--rps "$RPS" -D $((SECS - CROWD_AT)) --log-file "$d/crowd.log" "$url" \
		>"$d/crowd.out" 2>&1 &
	p2=$!
	PIDS+=("$p2")
	sleep $((SECS - CROWD_AT - 3))
	live=$(metric shedd_connections_live || true)
	limit=none
	[ "$(metric shedd_connections_limit_in_force || true)" != 1 ] ||
		limit=$(metric shedd_connections_limit || true)
	recalled=$(metric shedd_connections_recalled_total || true)
	[ -z "${KEEPALIVE_LOGS:-}" ] || [ "$mode" = none ] ||
		ip netns exec "$NS_SRV" curl -sS --max-time 5 http://127.0.0.1:9464/metrics \
			>"$KEEPALIVE_LOGS/$mode.metrics" 2>&1 || true
	wait "$p1" "$p2" || true
	pids_forget "$p1"
	pids_forget "$p2"
	failed=$(sed -n 's/^requests: .* \([0-9]*\) failed.*/\1/p' "$d/crowd.out" | sed -n 1p)
	[ "$mode" = none ] || stop_pid "$SHEDD_PID"
	[ -z "${KEEPALIVE_LOGS:-}" ] || cp "$TESTBED_TMP/shedd.log" "$KEEPALIVE_LOGS/$mode.log"
	stop_pid "$FRONT_PID"
	stop_pid "$UP_PID"
	t0=$(awk -F'\t' 'NR == 1 || $1 < m { m = $1 } END { print m }' "$d/pool.log")
	# h2load's log: start (us since the epoch), status, us to the end of
	# the response. Each answer in the second it ended, from the pool's
	# first request (SRC 1 the pool, 2 the crowd); a request not answered
	# 200 counts as never answered (1e9 ms).
	awk -F'\t' -v t0="$t0" 'FNR == 1 { f++ }
		{ printf "%d %.3f %.3f\n", f, ($1 - t0) / 1e6 + $3 / 1e6, ($2 == 200 ? $3 / 1e3 : 1e9) }' \
		"$d/pool.log" "$d/crowd.log" >"$d/answers"
	# Per second: answered, within GOOD_MS, and the pool's p99 (a
	# second's latencies sorted: the last of its group at the 99th rank).
	awk -v secs="$SECS" '$1 == 1 && $2 >= 0 && $2 < secs { print int($2), $3 }' "$d/answers" |
		sort -k1,1n -k2,2g | awk '
		function flush() { if (k) printf "%d %s\n", cur, v[int((k - 1) * 0.99) + 1]; k = 0 }
		$1 != cur { flush(); cur = $1 } { v[++k] = $2 } END { flush() }' >"$d/pool_p99"
	awk -v mode="$mode" -v good="$GOOD_MS" -v c="$C" -v secs="$SECS" '
		FILENAME == ARGV[1] { p99[$1] = $2; next }
		{ s = int($2); if ($2 < 0 || s >= secs) next; n[s]++; if ($3 <= good) g[s]++; if ($1 == 1) pn[s]++ }
		END { for (s = 0; s < secs; s++) {
			p = (s in p99) && p99[s] < 1e9 ? p99[s] : "nan"
			printf "%s,%d,%d,%d,%.1f,%d,%s\n", mode, s, n[s], g[s], 100 * g[s] / c, pn[s], p } }' \
		"$d/pool_p99" "$d/answers" >>"$CSV"
	# The window: goodput, and the pool's p50/p99 (sorted).
	awk -v w0="$WIN_START" -v secs="$SECS" '$1 == 1 && $2 >= w0 && $2 < secs { print $3 }' \
		"$d/answers" | sort -g >"$d/pool_win"
	awk -v mode="$mode" -v good="$GOOD_MS" -v c="$C" -v w0="$WIN_START" -v secs="$SECS" \
		-v live="${live:-nan}" -v limit="${limit:-none}" -v recalled="${recalled:-0}" \
		-v failed="${failed:-nan}" '
		FILENAME == ARGV[1] { v[++np] = $1; next }
		$2 >= w0 && $2 < secs { if ($3 <= good) g++; if ($1 == 2) nc++ }
		END { p50 = np ? v[int((np - 1) * 0.5) + 1] : 1e9; p99 = np ? v[int((np - 1) * 0.99) + 1] : 1e9
		  printf "%s,%.1f,%s,%s,%d,%d,%s,%s,%s,%s\n", mode, 100 * g / (secs - w0) / c,
			(p50 >= 1e9 ? "none" : sprintf("%.0f", p50)), (p99 >= 1e9 ? "none" : sprintf("%.0f", p99)),
			np, nc, live, limit, recalled, failed }' "$d/pool_win" "$d/answers" |
		tee -a "$SUMMARY" >&2
	sleep 1
}

for m in $MODES; do
	cell "$m"
done

cat >"$TESTBED_TMP/keepalive.gp" <<GP
set terminal pngcairo size 1000,700 font ",10"
set output png
set datafile separator ","
set multiplot layout 2,1 title "$POOL keep-alive clients, then $CROWD more at ${CROWD_AT} s that stay; nginx, C = $C req/s"
set ylabel "answered within $GOOD_MS ms, % of C"
set yrange [0:*]
set key top right
set grid
plot for [m in "$MODES"] "$CSV" using (strcol(1) eq m ? \$2 : 1/0):5 with lines lw 2 title m
set ylabel "the first $POOL clients' p99 (ms)"
set xlabel "seconds"
set logscale y
set yrange [*:*]
plot for [m in "$MODES"] "$CSV" using (strcol(1) eq m ? \$2 : 1/0):7 with lines lw 2 title m
unset multiplot
GP
exp_plot "$TESTBED_TMP/keepalive.gp"

{
	exp_header "Keep-alive overload: a crowd that comes and stays"
	cat <<TXT

$POOL keep-alive clients (\`h2load --h1\`, $RPS requests a second each on
the one connection each keeps) from the start, then $CROWD more from
${CROWD_AT} s that stay, through nginx to an upstream of C = $C requests/s
($WORKERS workers, $SERVICE_MS ms exponential), nginx's log (with
\`cr=\`) feeding shedd: $(( (POOL + CROWD) * RPS )) requests/s offered,
$(awk -v o=$(( (POOL + CROWD) * RPS )) -v c=$C 'BEGIN { printf "%.1f", o / c }') × C.
Every cell starts cold. Goodput: answers within $GOOD_MS ms over
[$WIN_START s, $SECS s), in % of C; the pool's p50/p99 over the same
window (\`none\`: most got no answer); live connections, the limit and the
connections recalled near the end (shedd's metrics); the crowd's failed
requests as h2load counts them.

- none: no shedd;
- syn: the SYN limit alone (\`--conn-limit off\`);
- limit: the connection limit (\`--conn-limit auto\`, the default);
- full: \`--conn-limit auto --recall $RECALL\`.

TXT
	exp_md_table "$SUMMARY" mode goodput_pct_of_c pool_p50_ms pool_p99_ms pool_answered \
		crowd_answered live limit recalled crowd_failed
	printf '\n![goodput and the pool'"'"'s p99 per second](keepalive.png)\n'
} >"$MD"
