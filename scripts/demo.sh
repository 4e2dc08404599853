#!/usr/bin/env bash
# demo.sh - shedd's main job on a built-in testbed: a service on port 8080
# gets legitimate traffic of two important classes and a SYN flood from a
# spoofed range at 20x the admitted rate; shedd admits the important traffic
# whole, holds the flood to what is left, and everything is removed after.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/testbed.sh
source scripts/testbed.sh
testbed_script demo

RATE=1000
SECS=5
testbed_up
listener_start
echo "testbed: $NS_CLI ($CLI_IP) --veth-- $NS_SRV ($SRV_IP, shedd on $IF_SRV, listener on :$PORT)"
shedd_start --port "$PORT" --rate "$RATE" \
	--prefix 198.19.1.0/24=critical_plus --prefix 198.19.2.0/24=critical
echo "shedd: --rate $RATE SYN/s; 198.19.1.0/24 critical_plus, 198.19.2.0/24 critical, the rest sheddable"
echo "load for ${SECS}s: critical_plus 300/s, critical 300/s, a flood of 20000/s from 198.19.128.0/17"
echo

FLOOD_CPU=0 flood_bg "$TESTBED_TMP/cp" 198.19.1.0/24 300 "$SECS"
cp_pid=$FLOOD_PID
FLOOD_CPU=0 flood_bg "$TESTBED_TMP/cr" 198.19.2.0/24 300 "$SECS"
flood 198.19.128.0/17 20000 "$SECS" >"$TESTBED_TMP/sh"
wait "$cp_pid" "$FLOOD_PID"

printf '%-15s %10s %12s %9s %14s\n' class "offered/s" "admitted/s" "shed/s" "admitted (%)"
row() {
	local name=$1 line sent acked
	line=$(cat "$TESTBED_TMP/$2")
	sent=$(field sent "$line")
	acked=$(field synack "$line")
	printf '%-15s %10d %12d %9d %13d%%\n' "$name" $((sent / SECS)) $((acked / SECS)) \
		$(((sent - acked) / SECS)) $((sent ? 100 * acked / sent : 0))
}
row critical_plus cp
row critical cr
row sheddable sh
echo "(admitted = SYN-ACKs the server's kernel sent back, counted at the sender)"
echo
echo "shedd's own counters (bpftool map dump pinned $PIN_DIR/stats, summed over CPUs):"
for c in 0 1 3; do
	printf '  class %d: syn=%s admitted=%s dropped=%s\n' "$c" "$(stat_sum syn $c)" \
		"$(stat_sum admitted $c)" "$(stat_sum dropped $c)"
done
echo
echo "shedd's status lines:"
sed 's/^/  /' "$TESTBED_TMP/shedd.log"
kill -TERM "$SHEDD_PID"
wait "$SHEDD_PID" || true
echo
echo "shedd stopped: program detached, pins removed; the testbed goes next."
