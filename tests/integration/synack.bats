#!/usr/bin/env bats
# synack.bats - shedd's replies against the kernel's own, field by field.
# The same crafted SYN (tests/tools/synprobe.py, AF_PACKET on the client's
# veth) goes to a real listener twice: once with shedd not attached and
# net.ipv4.tcp_syncookies=2, so the kernel answers it with a cookie
# SYN-ACK of its own, and once with shedd answering it at XDP with its
# cookie (--verify always). The sysctls behind the options are varied
# (tcp_timestamps, tcp_sack, tcp_window_scaling, tcp_ecn), and SYNs without
# an MSS option, with a small MSS, in BSD option order, IPv4 and IPv6. The
# same for the RST: the kernel's to a SYN for a closed port, shedd's to a
# SYN it refuses. Compared: TTL or hop limit, TOS or traffic class, DF and
# the IP id, the TCP flags, window, urgent pointer, the ack, seq 0 or not,
# both checksums, and the option list with its values; not the ISN or
# cookie, and the timestamp value only in its low 6 bits where no random
# offset hides them (tcp_timestamps=2). The differences left, each
# stated: the IPv6 flow label (the kernel hashes one; shedd sends 0,
# RFC 6437's "no label"); the kernel's TCP checksums, which on a veth are
# left to offload (shedd's are checked to be right instead).

load lib

teardown() {
	local f
	if [ -e "$PIN_DIR/stats" ]; then
		for f in syn_martian syn_bad_csum rst_refused rst_limited src_failed; do
			echo "$f=$(stat_sum $f)"
		done
	fi
	echo "shedd's log:"
	cat "$TESTBED_TMP/shedd.log" 2>/dev/null || true
	testbed_down
}

PROBE="$ROOT/tests/tools/synprobe.py"
CLOSED_PORT=8081

# The cases: NAME FAMILY SYSCTLS SYN-OPTIONS. SYSCTLS: timestamps, sack,
# window scaling, ecn. SYN-OPTIONS: synprobe.py's --opts, and --ecn.
CASES=(
	"v4-defaults 4 1,1,1,2 linux"
	"v4-ts2 4 2,1,1,2 linux"
	"v4-no-timestamps 4 0,1,1,2 linux"
	"v4-no-sack 4 2,0,1,2 linux"
	"v4-no-wscale 4 2,1,0,2 linux"
	"v4-ecn 4 2,1,1,1 linux --ecn"
	"v4-ecn-off 4 2,1,1,0 linux --ecn"
	"v4-no-mss 4 1,1,1,2 none"
	"v4-mss1400 4 1,1,1,2 mss1400"
	"v4-bsd 4 2,1,1,2 bsd"
	"v6-defaults 6 1,1,1,2 linux"
	"v6-ts2 6 2,1,1,2 linux"
	"v6-no-timestamps 6 0,1,1,2 linux"
	"v6-no-sack-wscale 6 2,0,0,2 linux"
	"v6-ecn 6 2,1,1,1 linux --ecn"
	"v6-no-mss 6 1,1,1,2 none"
)

# sysctls TS,SACK,WS,ECN: set them in srv.
sysctls() {
	local ts sack ws ecn
	IFS=, read -r ts sack ws ecn <<<"$1"
	in_srv sysctl -qw net.ipv4.tcp_timestamps="$ts" net.ipv4.tcp_sack="$sack" \
		net.ipv4.tcp_window_scaling="$ws" net.ipv4.tcp_ecn="$ecn"
}

# probe FAMILY SPORT DPORT ARGS...: the reply to one SYN, as JSON.
probe() {
	local fam=$1 src=$CLI_IP dst=$SRV_IP
	shift
	if [ "$fam" = 6 ]; then
		src=$CLI_IP6
		dst=$SRV_IP6
	fi
	in_cli python3 "$PROBE" probe "$IF_CLI" "$CLI_MAC" "$SRV_MAC" "$src" "$dst" "$@"
}

# compare NAME KERNEL SHEDD TS: the two replies' fields, the stated
# differences taken out; the timestamp's low bits only where TS is 2.
compare() {
	local filter='.reply | del(.flowlabel_set, .tcp_csum_ok)'
	if [ "$4" != 2 ]; then
		filter="$filter | .options |= map(if .[0] == \"TS\" then del(.[1]) else . end)"
	fi
	diff -u <(jq -S "$filter" <<<"$2") <(jq -S "$filter" <<<"$3") >"$TESTBED_TMP/diff" || {
		echo "$1: shedd's reply differs from the kernel's (- kernel, + shedd):"
		cat "$TESTBED_TMP/diff"
		return 1
	}
}

setup_testbed() {
	testbed_up
	CLI_MAC=$(in_cli cat "/sys/class/net/$IF_CLI/address")
	in_srv sysctl -qw net.ipv4.tcp_syncookies=2
	ip netns exec "$NS_SRV" python3 "$PROBE" listen "$PORT" 300 &
	PIDS+=($!)
	wait_listening "the listener" "$PORT"
}

@test "cookie SYN-ACK: every field as the kernel's own cookie SYN-ACK, sysctls varied" {
	local c name fam sc opts sport=40000 kern=() failed=0 i=0 got
	setup_testbed
	# The kernel's replies, shedd not attached.
	for c in "${CASES[@]}"; do
		read -r name fam sc opts <<<"$c"
		sysctls "$sc"
		kern+=("$(probe "$fam" $((sport + i)) "$PORT" --opts $opts)")
		echo "kernel $name: ${kern[$i]}"
		# SYN-ACK, or SYN-ACK with ECE.
		run jq -e '.reply.flags == 18 or .reply.flags == 82' <<<"${kern[$i]}"
		[ "$status" -eq 0 ]
		i=$((i + 1))
	done
	# shedd's, answering every SYN with a cookie.
	shedd_start --port "$PORT" --verify always --controller off --rate 100000 $(cookie_handoff)
	i=0
	for c in "${CASES[@]}"; do
		read -r name fam sc opts <<<"$c"
		sysctls "$sc"
		# shedd reads the sysctls again once a second.
		sleep 1.2
		got=$(probe "$fam" $((sport + 100 + i)) "$PORT" --opts $opts)
		echo "shedd  $name: $got"
		compare "$name" "${kern[$i]}" "$got" "${sc%%,*}" || failed=$((failed + 1))
		jq -e '.reply.tcp_csum_ok' <<<"$got" >/dev/null || {
			echo "$name: shedd's SYN-ACK has a wrong TCP checksum"
			failed=$((failed + 1))
		}
		i=$((i + 1))
	done
	run stat_sum cookie_sent 3
	echo "cookie_sent=$output"
	[ "$status" -eq 0 ]
	[ "$output" -ge "${#CASES[@]}" ]
	[ "$failed" -eq 0 ]
}

@test "RST: every field as the kernel's RST to a closed port" {
	local fam tos k s n0 n1 sport
	setup_testbed
	for fam in 4 6; do
		for tos in 0 0x28; do
			k=$(probe "$fam" $((41000 + fam)) "$CLOSED_PORT" --opts linux --tos "$tos")
			echo "kernel v$fam tos $tos: $k"
			run jq -e '.reply.flags == 20' <<<"$k"
			[ "$status" -eq 0 ]
			eval "KRST_${fam}_${tos}=\$k"
		done
	done
	# shedd refuses every SYN to the listener with a RST: the kernel would
	# answer it with a SYN-ACK, so a RST is shedd's.
	shedd_start --port "$PORT" --verify off --reject rst --controller off --rate 1 --burst 1
	n0=$(stat_sum rst_sent 3)
	sport=42000
	for fam in 4 6; do
		for tos in 0 0x28; do
			# The first SYNs may take the burst's token.
			for ((i = 0; i < 5; i++)); do
				s=$(probe "$fam" "$sport" "$PORT" --opts linux --tos "$tos")
				sport=$((sport + 1))
				jq -e '.reply.flags == 20' <<<"$s" >/dev/null && break
			done
			echo "shedd  v$fam tos $tos: $s"
			eval "k=\$KRST_${fam}_${tos}"
			compare "rst v$fam tos $tos" "$k" "$s" 0
			run jq -e '.reply.tcp_csum_ok' <<<"$s"
			[ "$status" -eq 0 ]
		done
	done
	n1=$(stat_sum rst_sent 3)
	echo "rst_sent $n0 -> $n1"
	within $((n1 - n0)) 4 20
}

# With tcp_sack or tcp_window_scaling at 0 the kernel's cookie check
# refuses an ACK whose timestamp carries that option
# (cookie_timestamp_decode()): under the kernel hand-off, where the kernel
# checks shedd's cookie itself, a client whose SYN offered them must get a
# cookie without them, or its ACK is refused after its token was spent.
@test "kernel hand-off, tcp_sack=0 and tcp_window_scaling=0: a client proven by a cookie is served" {
	local valid admitted
	testbed_up
	ip netns exec "$NS_SRV" "$ROOT/.output/tcpecho" serve --addr "$SRV_IP" --port "$PORT" \
		--duration 60 >/dev/null 2>&1 &
	PIDS+=($!)
	wait_listening "the echo server" "$PORT"
	in_srv sysctl -qw net.ipv4.tcp_sack=0 net.ipv4.tcp_window_scaling=0
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff kernel
	run ip netns exec "$NS_CLI" "$ROOT/.output/tcpecho" connect --addr "$SRV_IP" \
		--port "$PORT" --bytes 100000 --timeout-ms 4000
	echo "$output"
	valid=$(stat_sum ack_valid 3)
	admitted=$(stat_sum ack_admitted 3)
	echo "cookie_sent=$(stat_sum cookie_sent 3) ack_valid=$valid ack_admitted=$admitted"
	[ "$status" -eq 0 ]
	[[ "$output" == *result=ok* ]]
	within "$admitted" 1 1
}
