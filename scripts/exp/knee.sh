#!/usr/bin/env bash
# knee.sh - the testbed against queueing theory: p50 and p99 latency against
# utilisation (0.5-0.99) on the capacity server (slowserver, exponential
# service of 10 ms, 1 and 4 workers: M/M/1 and M/M/4), Poisson arrivals, no
# shedd, beside the M/M/c model's quantiles of the response time. A short
# run at high utilisation never reaches steady state (the relaxation time
# grows as 1/(1 - sqrt(rho))^2), so each run's length is stated against it.
# Writes knee.csv, knee.md and knee.png.
#   KNEE_SECS=15                      seconds per cell
#   KNEE_UTILS="0.5 0.7 0.8 0.9 0.95 0.99"
#   KNEE_WORKERS="1 4"
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
# shellcheck source=scripts/explib.sh
source scripts/explib.sh
exp_begin knee 0 17 KNEE_SECS KNEE_UTILS KNEE_WORKERS
testbed_script experiments

KNEE_SECS=${KNEE_SECS:-15}
KNEE_UTILS=${KNEE_UTILS:-"0.5 0.7 0.8 0.9 0.95 0.99"}
KNEE_WORKERS=${KNEE_WORKERS:-"1 4"}
SERVICE_MS=10
PATIENCE_MS=60000
CSV="$EXP_OUT/knee.csv"
MD="$EXP_OUT/knee.md"
set -- $KNEE_UTILS
nu=$#
set -- $KNEE_WORKERS
exp_cells $((nu * $#))

# mmc C RHO: the M/M/c response time's p50 and p99 in ms (service mean
# SERVICE_MS) and the relaxation time 1 / (c mu (1 - sqrt(rho))^2) in s.
# P(T > t) = (1 - Pw) e^(-mu t) + Pw P(W' + S > t), Pw Erlang's C, W' the
# wait of a queued request, exponential with rate c mu - lambda.
mmc() {
	awk -v c="$1" -v rho="$2" -v s="$SERVICE_MS" '
	function tail(t,   a, b) {
		a = exp(-mu * t)
		if (th == mu) b = (1 + mu * t) * exp(-mu * t)
		else b = (th * exp(-mu * t) - mu * exp(-th * t)) / (th - mu)
		return (1 - pw) * a + pw * b
	}
	function q(p,   lo, hi, m, i) {
		lo = 0; hi = 1
		while (tail(hi) > 1 - p) hi *= 2
		for (i = 0; i < 100; i++) { m = (lo + hi) / 2; if (tail(m) > 1 - p) lo = m; else hi = m }
		return m
	}
	BEGIN {
		mu = 1000 / s; a = rho * c; lam = a * mu; th = c * mu - lam
		sum = 0; term = 1
		for (k = 0; k < c; k++) { if (k > 0) term *= a / k; sum += term }
		last = term * a / c / (1 - rho)
		pw = last / (sum + last)
		printf "%.2f %.2f %.2f\n", 1000 * q(0.5), 1000 * q(0.99), 1 / (c * mu * (1 - sqrt(rho)) ^ 2)
	}'
}

echo "workers,utilisation,rate_per_sec,seconds,requests,p50_ms,p99_ms,model_p50_ms,model_p99_ms,relaxation_s,run_over_relaxation,timeouts" >"$CSV"
testbed_up
for c in $KNEE_WORKERS; do
	slow_start --workers "$c" --service-ms "$SERVICE_MS" --dist exp --backlog 4096 \
		--duration 3600 --seed 7
	for u in $KNEE_UTILS; do
		rate=$(awk -v u="$u" -v c="$c" -v s="$SERVICE_MS" 'BEGIN { printf "%.2f", u * c * 1000 / s }')
		exp_cell "M/M/$c rho=$u ($rate/s)"
		name="knee-$c-$u"
		ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$rate" \
			--poisson --seed 11 --duration "$KNEE_SECS" --patience-ms "$PATIENCE_MS" \
			>"$TESTBED_TMP/$name" 2>"$TESTBED_TMP/$name.sec"
		line=$(cat "$TESTBED_TMP/$name")
		read -r m50 m99 relax < <(mmc "$c" "$u")
		echo "$c,$u,$rate,$KNEE_SECS,$(field offered "$line"),$(field p50_ms "$line"),$(field p99_ms "$line"),$m50,$m99,$relax,$(awk -v s="$KNEE_SECS" -v r="$relax" 'BEGIN { printf "%.2f", s / r }'),$(($(field timeout_connect "$line") + $(field timeout_response "$line")))" |
			tee -a "$CSV" >&2
	done
	kill -TERM "$SLOW_PID"
	wait "$SLOW_PID" || true
done

# The model's curves, densely.
for c in $KNEE_WORKERS; do
	for u in $(seq 0.40 0.01 0.99); do
		echo "$c $u $(mmc "$c" "$u")"
	done
done >"$TESTBED_TMP/model.dat"

tail -n +2 "$CSV" | tr , ' ' >"$TESTBED_TMP/knee.dat"
cat >"$TESTBED_TMP/knee.gp" <<EOF
set terminal pngcairo noenhanced size 1000,550 font ",10"
set output png
set title "Latency against utilisation: the testbed beside M/M/c (service exp 10 ms, ${KNEE_SECS} s per point)"
set logscale y
set xrange [0.45:1]
set xlabel "utilisation rho = lambda / (c mu)"
set ylabel "response time, ms"
set grid
set key top left
m = "$TESTBED_TMP/model.dat"
d = "$TESTBED_TMP/knee.dat"
plot m u (\$1 == 1 ? \$2 : NaN):4 w l lc rgb "#cc0000" dt 2 t "M/M/1 p99", \\
     m u (\$1 == 1 ? \$2 : NaN):3 w l lc rgb "#0055cc" dt 2 t "M/M/1 p50", \\
     m u (\$1 == 4 ? \$2 : NaN):4 w l lc rgb "#ff8800" dt 2 t "M/M/4 p99", \\
     m u (\$1 == 4 ? \$2 : NaN):3 w l lc rgb "#008800" dt 2 t "M/M/4 p50", \\
     d u (\$1 == 1 ? \$2 : NaN):7 w p pt 7 lc rgb "#cc0000" t "1 worker p99", \\
     d u (\$1 == 1 ? \$2 : NaN):6 w p pt 7 lc rgb "#0055cc" t "1 worker p50", \\
     d u (\$1 == 4 ? \$2 : NaN):7 w p pt 5 lc rgb "#ff8800" t "4 workers p99", \\
     d u (\$1 == 4 ? \$2 : NaN):6 w p pt 5 lc rgb "#008800" t "4 workers p50"
EOF
exp_plot "$TESTBED_TMP/knee.gp"

{
	exp_header "The latency knee against M/M/c"
	cat <<EOF

Server: slowserver, c workers (1 and 4), exponential service of mean
$SERVICE_MS ms (cut at 20 x the mean), accepting only when a worker is free,
backlog 4096: M/M/c with the queue in the kernel's accept queue. Clients:
loadgen, Poisson arrivals at rho x c x 100/s for $KNEE_SECS s, patience
${PATIENCE_MS} ms (none gives up); latency from the connect to the whole
reply. Model: the response time of M/M/c (Erlang C), its p50 and p99.
Relaxation: 1 / (c mu (1 - sqrt rho)^2), the time the queue takes to reach
its steady state from empty; a run much shorter than it starts empty and
ends before the long queues come, so it shows less than the model.

![knee](knee.png)

EOF
	exp_md_table "$CSV" workers utilisation rate_per_sec requests p50_ms model_p50_ms p99_ms model_p99_ms relaxation_s run_over_relaxation timeouts
} >"$MD"
cat "$MD"
