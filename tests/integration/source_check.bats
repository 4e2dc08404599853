#!/usr/bin/env bats
# source_check.bats - a source that claims a class above the default class
# must be routed back through the interface its SYN came in on
# (--source-check strict, the default). In the server's namespace the
# client's address is critical_plus and routed back through the testbed's
# veth; 198.19.5.0/24 is critical_plus too but routed through another
# interface, so a flood from it arriving on the veth is spoofed: it is
# judged as the default class (src_failed) and spends none of
# critical_plus's tokens, while the real client keeps its class. Where
# the interface does not forward, the kernel cannot look it up: the class
# is kept and counted (src_unchecked). A real client on an asymmetric
# route (its route back leaves by another link) fails the check: it keeps
# its class only without the check, by proving its address.

load lib

teardown() { testbed_down; }

PROBE="$ROOT/tests/tools/synprobe.py"

setup_routes() {
	testbed_up
	CLI_MAC=$(in_cli cat "/sys/class/net/$IF_CLI/address")
	# Another interface of the server, where 198.19.5.0/24 lives.
	in_srv ip link add shdo0 type veth peer name shdo1
	in_srv ip link set shdo0 up
	in_srv ip link set shdo1 up
	in_srv ip route add 198.19.5.0/24 dev shdo0
	listener_start
}

# one_syn SPORT: one SYN of the real client, from $CLI_IP.
one_syn() {
	in_cli python3 "$PROBE" probe "$IF_CLI" "$CLI_MAC" "$SRV_MAC" "$CLI_IP" "$SRV_IP" \
		"$1" "$PORT" --opts linux
}

@test "strict: a spoofed critical_plus flood from a prefix routed elsewhere spends the default class's tokens, the real client keeps its class" {
	local cp0 cp1 sh0 sh1 failed
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	shedd_start --port "$PORT" --verify off --controller off --rate 100000 \
		--prefix "$CLI_IP/32=critical_plus" --prefix 198.19.5.0/24=critical_plus
	cp0=$(stat_sum syn 0)
	sh0=$(stat_sum syn 3)
	flood 198.19.5.0/24 1000 1
	run one_syn 43000
	echo "$output"
	[ "$status" -eq 0 ]
	# The kernel answered it: admitted in its class.
	jq -e '.reply.flags == 18' <<<"$output"
	cp1=$(stat_sum syn 0)
	sh1=$(stat_sum syn 3)
	failed=$(stat_sum src_failed)
	echo "critical_plus syn $cp0 -> $cp1, sheddable syn $sh0 -> $sh1, src_failed $failed"
	[ $((cp1 - cp0)) -eq 1 ]
	within "$failed" 900 1000
	[ $((sh1 - sh0)) -eq "$failed" ]
	[ "$(stat_sum src_unchecked)" -eq 0 ]
}

@test "strict, the interface does not forward: the class is kept, counted src_unchecked" {
	local cp0 cp1 unchecked
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=0"
	shedd_start --port "$PORT" --verify off --controller off --rate 100000 \
		--prefix 198.19.5.0/24=critical_plus
	grep -q "source check: IPv4.* does not forward on $IF_SRV" "$TESTBED_TMP/shedd.log"
	cp0=$(stat_sum syn 0)
	flood 198.19.5.0/24 1000 1
	cp1=$(stat_sum syn 0)
	unchecked=$(stat_sum src_unchecked)
	echo "critical_plus syn $cp0 -> $cp1, src_unchecked $unchecked"
	within $((cp1 - cp0)) 900 1000
	[ "$unchecked" -eq $((cp1 - cp0)) ]
	[ "$(stat_sum src_failed)" -eq 0 ]
}

@test "strict, the interface does not forward, --verify silent on the top classes: they verify while shedding, so a spoofed critical_plus flood spends almost nothing" {
	local charged cookies
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=0"
	shedd_start --port "$PORT" --controller off --rate 100 --burst 10 $(cookie_handoff) \
		--prefix 198.19.5.0/24=critical_plus
	grep -q "source check: IPv4.* does not forward on $IF_SRV: .* critical_plus, critical verify while shedding" \
		"$TESTBED_TMP/shedd.log"
	flood 198.19.5.0/24 1000 1
	charged=$(stat_sum charged 0)
	cookies=$(stat_sum cookie_sent 0)
	echo "# critical_plus charged $charged, cookie_sent $cookies, src_unchecked $(stat_sum src_unchecked)" >&3
	# The class's burst and what shed before the CPU turned to cookies.
	[ "$charged" -le 100 ]
	within "$cookies" 850 1000
}

@test "strict, the interface does not forward, --verify naming a top class: that class is left as asked" {
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=0"
	shedd_start --port "$PORT" --controller off --rate 100 --burst 10 $(cookie_handoff) \
		--verify critical_plus=off --prefix 198.19.5.0/24=critical_plus
	grep -q "source check: .* so critical verify while shedding" "$TESTBED_TMP/shedd.log"
	flood 198.19.5.0/24 1000 1
	echo "critical_plus charged $(stat_sum charged 0), cookie_sent $(stat_sum cookie_sent 0)"
	within "$(stat_sum charged 0)" 900 1000
	[ "$(stat_sum cookie_sent 0)" -eq 0 ]
}

@test "off: a spoofed critical_plus flood keeps its class" {
	local cp0 cp1
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	shedd_start --port "$PORT" --verify off --controller off --rate 100000 \
		--prefix 198.19.5.0/24=critical_plus --source-check off
	cp0=$(stat_sum syn 0)
	flood 198.19.5.0/24 1000 1
	cp1=$(stat_sum syn 0)
	echo "critical_plus syn $cp0 -> $cp1"
	within $((cp1 - cp0)) 900 1000
	[ "$(stat_sum src_failed)" -eq 0 ]
	[ "$(stat_sum src_unchecked)" -eq 0 ]
}

# one_uplink: 198.19.6.0/24, critical_plus, routed back through the veth
# the flood comes in on, as a partner's prefix reached over a host's one
# uplink: the check passes every source of it, spoofed or not.
one_uplink() {
	setup_routes
	# Both families forward, as on a router: the check runs, so the top
	# classes are not made to verify by default.
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	in_srv sysctl -qw "net.ipv6.conf.$IF_SRV.forwarding=1"
	in_srv ip route add 198.19.6.0/24 dev "$IF_SRV"
}

@test "strict, one uplink: a spoofed flood from a top class's prefix routed back by its interface passes the check and spends the class's tokens" {
	one_uplink
	shedd_start --port "$PORT" --verify off --controller off --rate 100000 \
		--prefix 198.19.6.0/24=critical_plus
	flood 198.19.6.0/24 1000 1
	echo "critical_plus charged $(stat_sum charged 0), src_failed $(stat_sum src_failed)"
	within "$(stat_sum charged 0)" 900 1000
	[ "$(stat_sum src_failed)" -eq 0 ]
}

@test "strict, one uplink, the class verifying while shedding: the same flood is answered with cookies and spends almost nothing" {
	local charged cookies
	one_uplink
	shedd_start --port "$PORT" --controller off --rate 100 --burst 10 $(cookie_handoff) \
		--verify critical_plus=shedding --prefix 198.19.6.0/24=critical_plus
	flood 198.19.6.0/24 1000 1
	charged=$(stat_sum charged 0)
	cookies=$(stat_sum cookie_sent 0)
	echo "critical_plus charged $charged, cookie_sent $cookies, src_failed $(stat_sum src_failed)"
	# The class's burst and what shed before the CPU turned to cookies.
	[ "$charged" -le 100 ]
	within "$cookies" 850 1000
	[ "$(stat_sum src_failed)" -eq 0 ]
}

# asymmetric: a real critical_plus client, 198.19.7.2, on an asymmetric
# route: its segments come in by the veth, the server's route back to
# 198.19.7.0/24 leaves by a second link (shda0 in srv, shda1 in cli), so
# its SYN fails the check while its connection works both ways. rp_filter
# off in both namespaces, as on such a network. The interface forwards, so
# the check runs. The default class sheds: sheddable is flooded
# (198.19.200.0/24, unverified) far above the rate in the background.
asymmetric() {
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	in_srv ip link add shda0 type veth peer name shda1 netns "$NS_CLI"
	in_srv ip link set shda0 up
	in_cli ip link set shda1 up
	in_srv sysctl -qw net.ipv4.conf.all.rp_filter=0 "net.ipv4.conf.$IF_SRV.rp_filter=0"
	in_cli sysctl -qw net.ipv4.conf.all.rp_filter=0 "net.ipv4.conf.$IF_CLI.rp_filter=0" \
		net.ipv4.conf.shda1.rp_filter=0
	client_addrs 198.19.7.2/32
	in_srv ip route add 198.19.7.0/24 dev shda0
	in_srv ip neigh add 198.19.7.2 lladdr "$(in_cli cat /sys/class/net/shda1/address)" dev shda0
}

# asym_connect: one connection of the asymmetric client to the listener,
# within 3 s; prints "connected" or the error.
asym_connect() {
	in_cli python3 -c '
import socket, sys
s = socket.socket()
s.bind(("198.19.7.2", 0))
s.settimeout(3)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except OSError as e:
    print("failed", e)
    sys.exit(1)
' "$SRV_IP" "$PORT"
}

# asym_run OPTIONS...: shedd with OPTIONS, the sheddable flood, and one
# connection of the asymmetric client while sheddable sheds.
asym_run() {
	asymmetric
	shedd_start --port "$PORT" --controller off --rate 100 --burst 10 $(cookie_handoff) \
		--prefix 198.19.7.0/24=critical_plus "$@"
	flood_bg "$TESTBED_TMP/flood.out" 198.19.200.0/24 2000 4
	wait_for "sheddable shedding" 3 sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/stats' |
		jq '[.[0].values[].value.cls[3].dropped] | add')\" -gt 100 ]"
	run asym_connect
	echo "# client: $output" >&3
	ASYM_STATUS=$status
	wait "$FLOOD_PID"
	echo "# critical_plus syn $(stat_sum syn 0) charged $(stat_sum charged 0)" \
		"cookie_sent $(stat_sum cookie_sent 0) ack_admitted $(stat_sum ack_admitted 0);" \
		"sheddable charged $(stat_sum charged 3) dropped $(stat_sum dropped 3);" \
		"src_failed $(stat_sum src_failed)" >&3
}

@test "off, critical_plus verifying: an asymmetric client keeps its class while the default class sheds" {
	asym_run --source-check off --verify off --verify critical_plus=always
	[ "$ASYM_STATUS" -eq 0 ]
	within "$(stat_sum ack_admitted 0)" 1 1
	within "$(stat_sum charged 0)" 1 1
	[ "$(stat_sum src_failed)" -eq 0 ]
}

@test "strict, critical_plus verifying: an asymmetric client fails the check and is judged as the default class" {
	asym_run --verify off --verify critical_plus=always
	# Today's behaviour: its SYNs are charged to sheddable, which sheds
	# them while it has no token; critical_plus never sees it.
	within "$(stat_sum src_failed)" 1 4
	[ "$(stat_sum charged 3)" -eq $(( $(field sent "$(cat "$TESTBED_TMP/flood.out")") + $(stat_sum src_failed) )) ]
	[ "$(stat_sum syn 0)" -eq 0 ]
	[ "$(stat_sum ack_admitted 0)" -eq 0 ]
	[ "$(stat_sum cookie_sent 0)" -eq 0 ]
}

@test "verify: an asymmetric client fails the check and keeps its class by proving its address" {
	asym_run --source-check verify --verify off
	[ "$ASYM_STATUS" -eq 0 ]
	# Answered with a cookie in its class, though critical_plus does not
	# verify, and charged there once its ACK came back.
	within "$(stat_sum src_failed)" 1 3
	within "$(stat_sum cookie_sent 0)" 1 3
	within "$(stat_sum ack_admitted 0)" 1 1
	within "$(stat_sum charged 0)" 1 1
	[ "$(stat_sum charged 3)" -eq "$(field sent "$(cat "$TESTBED_TMP/flood.out")")" ]
}

@test "verify: a spoofed critical_plus flood that fails the check spends no token of any class" {
	local sent
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	shedd_start --port "$PORT" --verify off --controller off --rate 100 --burst 10 \
		$(cookie_handoff) --source-check verify --prefix 198.19.5.0/24=critical_plus
	sent=$(field sent "$(flood 198.19.5.0/24 1000 1)")
	echo "# sent $sent: critical_plus charged $(stat_sum charged 0), cookie_sent" \
		"$(stat_sum cookie_sent 0); sheddable charged $(stat_sum charged 3);" \
		"src_failed $(stat_sum src_failed)" >&3
	[ "$(stat_sum charged 0)" -eq 0 ]
	[ "$(stat_sum charged 3)" -eq 0 ]
	[ "$(stat_sum src_failed)" -eq "$sent" ]
	[ "$(stat_sum cookie_sent 0)" -eq "$sent" ]
}

@test "verify where auto finds no hand-off (6.0-6.8): checked as strict, and said at start" {
	local failed sent
	has_tc_handoff && skip "kernel $(uname -r) has the tc hand-off, which auto takes"
	setup_routes
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	shedd_start --port "$PORT" --verify off --controller off --rate 100000 \
		--source-check verify --prefix 198.19.5.0/24=critical_plus
	grep -q "source check: verify needs verified admission, off in this run" \
		"$TESTBED_TMP/shedd.log"
	# An emulated guest sends fewer than asked: every one sent must fail.
	sent=$(field sent "$(flood 198.19.5.0/24 1000 1)")
	failed=$(stat_sum src_failed)
	echo "sent $sent: src_failed $failed, sheddable charged $(stat_sum charged 3)," \
		"critical_plus cookie_sent $(stat_sum cookie_sent 0)"
	[ "$failed" -eq "$sent" ]
	[ "$(stat_sum charged 3)" -eq "$failed" ]
	[ "$(stat_sum cookie_sent 0)" -eq 0 ]
}

@test "strict, a client behind a VLAN device: its SYN fails the check whether the tag was in the frame or stripped (shedd knows only its interface)" {
	local v=198.18.100
	testbed_up
	if ! in_srv ip link add link "$IF_SRV" name "${IF_SRV}v" type vlan id 100; then
		skip "kernel $(uname -r) makes no VLAN devices (8021q)"
	fi
	in_cli ip link add link "$IF_CLI" name "${IF_CLI}v" type vlan id 100
	in_srv ip addr add "$v.2/24" dev "${IF_SRV}v"
	in_cli ip addr add "$v.1/24" dev "${IF_CLI}v"
	in_srv ip link set "${IF_SRV}v" up
	in_cli ip link set "${IF_CLI}v" up
	in_srv sysctl -qw "net.ipv4.conf.$IF_SRV.forwarding=1"
	listener_start "$v.2"
	shedd_start --port "$PORT" --verify off --controller off --rate 100000 \
		--prefix "$v.1/32=critical_plus"
	# tx-vlan-offload on: the tag goes to the server out of band, as behind
	# a NIC that strips it; off: in the frame.
	for offload in on off; do
		in_cli ethtool -K "$IF_CLI" txvlan "$offload"
		run in_cli timeout $((5 * TESTBED_TIME_SCALE)) bash -c "exec 3<>/dev/tcp/$v.2/$PORT"
		[ "$status" -eq 0 ]
	done
	echo "critical_plus syn $(stat_sum syn 0), sheddable syn $(stat_sum syn 3)," \
		"src_failed $(stat_sum src_failed)"
	[ "$(stat_sum syn 0)" -eq 0 ]
	[ "$(stat_sum syn 3)" -eq 2 ]
	[ "$(stat_sum src_failed)" -eq 2 ]
}
