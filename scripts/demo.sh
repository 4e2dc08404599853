#!/usr/bin/env bash
# demo.sh - shedd's main job on a built-in testbed: a service on port 8080
# gets legitimate traffic of two important classes and a SYN flood from a
# spoofed range at 20x the admitted rate; shedd admits the important traffic
# whole, answers the flood with SYN cookies once its class sheds (verified
# admission: no token for a source that never proves its address), and
# everything is removed after.
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

# Admission is read from shedd's counters: the sender sees a SYN-ACK for
# an admitted SYN and for a cookie alike.
printf '%-15s %10s %11s %8s %10s %11s\n' class "offered/s" "admitted/s" "shed/s" \
	"cookies/s" "answered/s"
row() {
	local name=$1 c=$3 line sent acked adm shed ck
	line=$(cat "$TESTBED_TMP/$2")
	sent=$(field sent "$line")
	acked=$(field synack "$line")
	adm=$(($(stat_sum admitted "$c") + $(stat_sum ack_admitted "$c")))
	shed=$(($(stat_sum dropped "$c") + $(stat_sum rst_sent "$c")))
	ck=$(stat_sum cookie_sent "$c")
	printf '%-15s %10d %11d %8d %10d %11d\n' "$name" $((sent / SECS)) $((adm / SECS)) \
		$((shed / SECS)) $((ck / SECS)) $((acked / SECS))
}
row critical_plus cp 0
row critical cr 1
row sheddable sh 3
echo "(admitted and shed: shedd's counters; cookies: SYNs answered with a SYN cookie,"
echo " which spend no token; answered: SYN-ACKs counted at the sender, cookies included."
echo " The flood's sources are spoofed: none completes a handshake, none gets a token.)"
echo
echo "shedd's status lines:"
sed 's/^/  /' "$TESTBED_TMP/shedd.log"
kill -TERM "$SHEDD_PID"
wait "$SHEDD_PID" || true
echo
echo "shedd stopped: program detached, pins removed; the testbed goes next."
