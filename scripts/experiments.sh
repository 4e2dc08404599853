#!/usr/bin/env bash
# experiments.sh - goodput against offered load, with and without shedd, on
# the namespace testbed with real sockets: a server of 4 workers x 10 ms
# behind a 128-entry accept queue, open-loop clients with a patience of
# 250 ms. Prints one table; every run is bounded and the testbed is removed.
# Usage: experiments.sh [goodput|flood|proxy] (default goodput); the flood
# experiment is scripts/flood.sh, the reverse-proxy one scripts/proxy.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-goodput} in
goodput) ;;
flood) exec scripts/flood.sh ;;
proxy) exec scripts/proxy.sh ;;
*) echo "experiments.sh: unknown experiment '$1' (goodput, flood, proxy)" >&2; exit 2 ;;
esac

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
testbed_script experiments

SECS=${SECS:-10}
PATIENCE_MS=250
LOADS=${LOADS:-"0.5 1 2 3 5"}
# EXPERIMENT_SHEDD_ARGS: options added to every shedd run (e.g. "--interval 200ms")

testbed_up
slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 3600

# Capacity: the accept rate of the saturated server (its completion rate at
# steady state), as shedd's signals measure it, with shedd not shedding.
shedd_start --port "$PORT" --controller off --rate 100000
load cap 1000 6 5000
kill -TERM "$SHEDD_PID"
wait "$SHEDD_PID" || true
CAP=$(status_field accepts | sed -n 3,6p | cut -d/ -f1 | sort -n | sed -n 2p | cut -d. -f1)
sleep 6 # the clients of that run give up or finish
echo "server: 4 workers x 10 ms, backlog 128; capacity ${CAP} req/s (median accept rate while saturated); patience ${PATIENCE_MS} ms; ${SECS} s per run, goodput over seconds 4-${SECS}"
echo

# sojourn_p50: median of shedd's per-second sojourn p50 over the run.
sojourn_p50() {
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | tail -n $((SECS - 3)) |
		grep -o ' sojourn_ms=[^ ]*' | cut -d/ -f2 | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'
}

printf '%6s %9s | %17s | %17s %17s\n' load "offered/s" "without shedd" "with shedd (aimd)" "sojourn p50 ms"
for l in $LOADS; do
	rate=$(awk -v c="$CAP" -v l="$l" 'BEGIN { printf "%d", c * l }')
	load "base$l" "$rate" "$SECS" "$PATIENCE_MS"
	without=$(ok_per_sec "base$l" 4 "$SECS")
	sleep 2 # the queue of the last run drains
	: >"$TESTBED_TMP/shedd.log"
	# shellcheck disable=SC2086 # EXPERIMENT_SHEDD_ARGS: extra shedd options, split on purpose
	shedd_start --port "$PORT" ${EXPERIMENT_SHEDD_ARGS:-}
	load "shed$l" "$rate" "$SECS" "$PATIENCE_MS"
	with=$(ok_per_sec "shed$l" 4 "$SECS")
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	sleep 2
	printf '%5sx %9d | %7d/s (%4d %%) | %7d/s (%4d %%) %17s\n' "$l" "$rate" \
		"$without" $((100 * without / CAP)) "$with" $((100 * with / CAP)) "$(sojourn_p50)"
done
echo
echo "goodput = responses within ${PATIENCE_MS} ms per second; % of the measured capacity"
