#!/usr/bin/env bats
# vlan.bats - a client on a VLAN whose tag the server's NIC strips into its
# receive descriptor, so that shedd's XDP program sees the client's frames
# without it. tests/tools/vlan_tag.bpf.c on the client's veth sets the tag
# out of band, which veth hands to its peer as such a NIC does, or, with
# tx-vlan-offload off, in the frame; and it drops a SYN-ACK or RST that
# comes back without the tag, as the client's VLAN would never bring it.
# A SYN whose tag was stripped is judged as one with the tag in the frame:
# its cookie carries the tag with --nic-vlan-tag auto, on kernels whose
# driver gives XDP the tag (6.8 and later; veth does), and leaves without it
# by default. Where the kernel makes VLAN devices (8021q),
# a client's VLAN device reaches the server's through the same veth.

load lib

TCPECHO="$ROOT/.output/tcpecho"
VLAN_TAG="$ROOT/.output/vlan_tag.bpf.o"
# The echo server's life, scaled as the waits are (a client that times out
# takes 5 s, 40 s in a slow guest), at most tcpecho's 600 s.
ECHO_SECS=$((60 * TESTBED_TIME_SCALE))
[ "$ECHO_SECS" -le 600 ] || ECHO_SECS=600

setup() {
	testbed_up
	ip netns exec "$NS_SRV" "$TCPECHO" serve --addr "$SRV_IP" --port "$PORT" \
		--duration "$ECHO_SECS" >/dev/null 2>>"$TESTBED_TMP/echo.err" &
	PIDS+=($!)
	wait_listening echo "$PORT"
	in_cli tc qdisc add dev "$IF_CLI" clsact
	in_cli tc filter add dev "$IF_CLI" egress bpf da obj "$VLAN_TAG" sec tc
	in_cli tc filter add dev "$IF_CLI" ingress bpf da obj "$VLAN_TAG" sec classifier
}
teardown() {
	echo "shedd's log:"
	cat "$TESTBED_TMP/shedd.log" 2>/dev/null || true
	testbed_down
}

# need_rx_vlan: skip on a kernel before 6.8, which has no
# bpf_xdp_metadata_rx_vlan_tag (shedd then says it cannot see the tag).
need_rx_vlan() {
	printf '%s\n' 6.8 "$(uname -r | cut -d- -f1)" | sort -V -C ||
		skip "kernel $(uname -r) gives XDP no stripped VLAN tag (6.8)"
}

# need_bound: skip before 6.18, where shedd binds no program (Debian's
# 6.12.118 oopses when a device goes while one is bound to it).
need_bound() {
	need_rx_vlan
	printf '%s\n' 6.18 "$(uname -r | cut -d- -f1)" | sort -V -C ||
		skip "kernel $(uname -r): shedd binds no program before 6.18 (docs/limits.md)"
}

# xdp_prog: the name of the XDP program on the server's veth.
xdp_prog() {
	in_srv ip link show dev "$IF_SRV" | grep -o 'prog/xdp id [0-9]* name [a-z_]*' |
		awk '{ print $5 }'
}

# link_id: the id of shedd's pinned link.
link_id() {
	bpftool -j link show pinned "$PIN_DIR/link" | jq -e .id
}

# exchange NAME: one client connection from cli, 100 kB each way; fails
# unless the echo came back whole within 5 s (a client whose SYN-ACKs are
# dropped has given up by then, after two retransmissions).
exchange() {
	local out="$TESTBED_TMP/client.$1"
	if ! in_cli "$TCPECHO" connect --addr "$SRV_IP" --port "$PORT" --bytes 100000 \
		--timeout-ms $((5000 * TESTBED_TIME_SCALE)) >"$out" 2>&1; then
		cat "$out"
		return 1
	fi
	cat "$out"
	grep -q '^result=ok' "$out"
}

# verified CLIENTS: the default class answered CLIENTS SYNs with cookies
# and admitted their ACKs, charging no SYN directly.
verified() {
	local sent valid direct
	sent=$(stat_sum cookie_sent 3)
	valid=$(stat_sum ack_admitted 3)
	direct=$(stat_sum admitted 3)
	echo "cookie_sent=$sent ack_admitted=$valid admitted=$direct"
	within "$sent" "$1" "$1"
	within "$valid" "$1" "$1"
	within "$direct" 0 0
}

@test "tag in the frame: the cookie keeps it, the client connects" {
	in_cli ethtool -K "$IF_CLI" txvlan off
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff)
	exchange inframe
	verified 1
}

@test "tag stripped before XDP, --nic-vlan-tag off (the default): shedd_xdp, says the driver gives the tag, the cookie leaves without it" {
	need_bound
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff)
	[ "$(xdp_prog)" = shedd_xdp ]
	run grep -c "not read on $IF_SRV (--nic-vlan-tag off).*--nic-vlan-tag auto reads" \
		"$TESTBED_TMP/shedd.log"
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	run exchange untagged
	[ "$status" -ne 0 ]
	[[ "$output" == *'result=ETIMEDOUT stage=connect'* ]]
}

@test "tag stripped before XDP: read from the descriptor, the cookie carries it, the client connects" {
	need_bound
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff) \
		--nic-vlan-tag auto
	run grep -c "XDP: shedd_xdp_vlan, bound to $IF_SRV" "$TESTBED_TMP/shedd.log"
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	exchange stripped
	verified 1
}

@test "tag stripped before XDP: a shed SYN's RST carries it, the client is refused at once" {
	need_bound
	# One SYN a second, the lowest rate there is: of 4 connections at
	# once at least 3 are shed, each refused with a RST the client takes.
	shedd_start --port "$PORT" --verify off --fair off --controller off --rate 1 --burst 1 \
		--reject rst --nic-vlan-tag auto
	for i in 1 2 3 4; do
		in_cli "$TCPECHO" connect --addr "$SRV_IP" --port "$PORT" --bytes 1000 \
			--timeout-ms $((3000 * TESTBED_TIME_SCALE)) >"$TESTBED_TMP/rst.$i" 2>&1 || true
		cat "$TESTBED_TMP/rst.$i"
	done
	refused=$(cat "$TESTBED_TMP"/rst.* | grep -c '^result=ECONNREFUSED' || true)
	timedout=$(cat "$TESTBED_TMP"/rst.* | grep -c '^result=ETIMEDOUT' || true)
	rst=$(stat_sum rst_sent 3)
	echo "refused=$refused timed out=$timedout rst_sent=$rst"
	within "$refused" 3 4
	within "$timedout" 0 0
	within "$rst" "$refused" "$refused"
}

@test "an adopting shedd swaps shedd_xdp for shedd_xdp_vlan in the running link, and back" {
	need_bound
	# --nic-vlan-tag off (the default): shedd_xdp, whose cookie leaves
	# without the tag, and the client never gets it.
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff)
	[ "$(xdp_prog)" = shedd_xdp ]
	id=$(link_id)
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff) \
		--nic-vlan-tag auto
	grep -q 'adopted the running shedd' "$TESTBED_TMP/shedd.log"
	[ "$(link_id)" = "$id" ]
	[ "$(xdp_prog)" = shedd_xdp_vlan ]
	exchange adopted
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	# Asked, but without the driver's word (as before 6.8): shedd_xdp.
	SHEDD_TEST_NO_XDP_FEATURES=1 shedd_start --port "$PORT" --rate 1000 \
		--verify sheddable=always $(cookie_handoff) --nic-vlan-tag auto
	[ "$(link_id)" = "$id" ]
	[ "$(xdp_prog)" = shedd_xdp ]
	run exchange plain
	[ "$status" -ne 0 ]
	[[ "$output" == *'result=ETIMEDOUT stage=connect'* ]]
}

@test "VLAN devices at both ends, the tag stripped before XDP: a verified client connects to the server's VLAN address" {
	local v=198.18.100
	need_bound
	# The client's VLAN device, not the tc programs, tags its frames here.
	in_cli tc qdisc del dev "$IF_CLI" clsact
	if ! in_srv ip link add link "$IF_SRV" name "${IF_SRV}v" type vlan id 100; then
		skip "kernel $(uname -r) makes no VLAN devices (8021q)"
	fi
	in_cli ip link add link "$IF_CLI" name "${IF_CLI}v" type vlan id 100
	in_srv ip addr add "$v.2/24" dev "${IF_SRV}v"
	in_cli ip addr add "$v.1/24" dev "${IF_CLI}v"
	in_srv ip link set "${IF_SRV}v" up
	in_cli ip link set "${IF_CLI}v" up
	ip netns exec "$NS_SRV" "$TCPECHO" serve --addr "$v.2" --port "$PORT" \
		--duration "$ECHO_SECS" >/dev/null 2>>"$TESTBED_TMP/echo.err" &
	PIDS+=($!)
	wait_for "echo server on $v.2" 5 sh -c "ip netns exec $NS_SRV ss -ltnH | grep -qF '$v.2:$PORT '"
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff) \
		--nic-vlan-tag auto
	[ "$(xdp_prog)" = shedd_xdp_vlan ]
	in_cli "$TCPECHO" connect --addr "$v.2" --port "$PORT" --bytes 100000 \
		--timeout-ms $((5000 * TESTBED_TIME_SCALE)) >"$TESTBED_TMP/client.dev" 2>&1 || true
	cat "$TESTBED_TMP/client.dev"
	grep -q '^result=ok' "$TESTBED_TMP/client.dev"
	verified 1
}
