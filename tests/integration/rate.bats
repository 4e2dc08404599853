#!/usr/bin/env bats
# rate.bats - shedd admits SYNs at the configured --rate, measured at the
# sender by the distinct SYN-ACKs the server's kernel sent back.

# The flood here is spoofed and sheds: verified admission would answer it
# with cookies instead of charging it. These tests measure the token bucket
# itself, so shedd runs with --verify off; verified.bats tests cookies.

load lib

setup() { testbed_up; listener_start; listener_start "$SRV_IP6"; }
teardown() { testbed_down; }

# measure_rate SRC DST: warm up for 1 s (the allocator learns which CPU the
# flood is on), then offer 2000 SYN/s for 4 s; RATE is the admitted SYN/s
# seen on the wire. The bucket refills during the gap of --wait: at most
# --burst of the count is not rate. Called directly, not inside $(...),
# where a failed check would be lost.
measure_rate() {
	local line sent synack
	flood "$1" 2000 1 "$2" >/dev/null
	line=$(flood "$1" 2000 4 "$2")
	echo "$line"
	sent=$(field sent "$line")
	synack=$(field synack "$line")
	within "$sent" 7900 8100
	RATE=$(( synack / 4 ))
}

@test "IPv4 SYNs at 4x the rate pass at --rate (within 10 %)" {
	shedd_start --verify off --port "$PORT" --rate 500 --burst 50
	measure_rate 198.19.0.0/16 "$SRV_IP"
	echo "admitted ${RATE}/s against --rate 500"
	within "$RATE" 450 550
	# What shedd counted agrees with what the wire saw.
	syn=$(stat_sum syn 3)
	admitted=$(stat_sum admitted 3)
	[ "$syn" -eq 10000 ]
	within "$admitted" $(( RATE * 4 )) $(( RATE * 4 + 600 ))
}

@test "IPv6 SYNs at 4x the rate pass at --rate (within 10 %)" {
	shedd_start --verify off --port "$PORT" --rate 500 --burst 50
	measure_rate 2001:db8:ff00::/64 "$SRV_IP6"
	echo "admitted ${RATE}/s against --rate 500"
	within "$RATE" 450 550
}

# A real NIC spreads SYNs over CPUs, and a sender that is not pinned moves
# between them: the class rate must hold whichever CPUs the SYNs arrive on.
@test "SYNs from a sender the scheduler moves between CPUs pass at --rate (within 5 %)" {
	shedd_start --verify off --port "$PORT" --rate 500 --burst 50
	FLOOD_CPU=any measure_rate 198.19.0.0/16 "$SRV_IP"
	echo "admitted ${RATE}/s against --rate 500 (sender not pinned)"
	within "$RATE" 475 525
}

@test "SYNs below the rate all pass; other ports are not touched" {
	shedd_start --verify off --port "$PORT" --rate 1000
	# The first tick splits the rate before any demand is seen: warm up.
	flood 198.19.0.0/16 300 1 >/dev/null
	line=$(flood 198.19.0.0/16 300 3)
	echo "$line"
	sent=$(field sent "$line")
	synack=$(field synack "$line")
	within "$sent" 880 920
	within "$synack" $(( sent - 2 )) "$sent"
	# SYNs to an unprotected port pass whatever the rate: the server's
	# kernel answers each with a RST (nothing listens on 9090).
	run in_cli "$SYNFLOOD" --iface "$IF_CLI" --dst-mac "$SRV_MAC" --dst "$SRV_IP" \
		--dport 9090 --src 198.19.0.0/16 --rate 2000 --duration 1 --wait 1
	echo "$output"
	[ "$status" -eq 0 ]
	sent=$(field sent "$output")
	rst=$(field rst "$output")
	unprotected=$(stat_sum unprotected)
	within "$sent" 1900 2100
	[ "$rst" -eq "$sent" ]
	[ "$unprotected" -ge "$sent" ]
}

@test "--reject rst answers shed SYNs with a RST the client's kernel accepts" {
	shedd_start --verify off --port "$PORT" --rate 100 --burst 10 --reject rst
	line=$(flood 198.19.0.0/16 1000 2)
	echo "$line"
	sent=$(field sent "$line")
	acked=$(field synack "$line")
	rst=$(field rst "$line")
	within "$sent" 1900 2100
	# Every SYN got exactly one answer: a SYN-ACK or shedd's RST.
	within $(( acked + rst )) $(( sent - 2 )) "$sent"
	within "$rst" $(( sent - 300 )) "$sent"
	rst_sent=$(stat_sum rst_sent 3)
	[ "$rst_sent" -ge "$rst" ]
	# A real connect() to the protected port (the listener is up) fails
	# fast with ECONNREFUSED once the bucket is empty, and shedd sent it.
	before=$(stat_sum rst_sent 3)
	run in_cli timeout 5 bash -c "for i in \$(seq 1 200); do exec 3<>/dev/tcp/$SRV_IP/$PORT || exit 0; exec 3>&-; done; exit 1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"refused"* ]]
	after=$(stat_sum rst_sent 3)
	[ "$after" -gt "$before" ]
}
