#!/usr/bin/env bats
# tunnels.bats - no way around shedd through a tunnel that ends on the
# server: the kernel decapsulates IPIP, SIT, IP6IP6, GRE, VXLAN, Geneve,
# FOU and GUE after XDP has run and gives the inner SYN to the listener, so shedd must
# judge the inner SYN on the physical interface. Each test makes one tunnel
# in srv, a listener on an address behind it, and floods it with crafted
# encapsulated SYNs (tests/tools/tunflood.py) from cli. What got past XDP
# is counted in the kernel: the packets the tunnel device received, each
# one the kernel opened and handed on; and, as a figure, the listener's
# half-open connections (ss state syn-recv), one per SYN it was given.

# The flood is spoofed and sheds at --rate: an encapsulated SYN is never
# answered with a cookie, --verify off keeps the figures those of the token
# bucket. The last tests put a real client, direct, beside a tunnelled
# flood of its own class: the flood is charged in the tunnel class space
# (or not at all, where no device takes it), never the client's tokens.

load lib

TUNFLOOD="$ROOT/tests/tools/tunflood.py"

setup() { testbed_up; }
teardown() { testbed_down; }

# tunnel_up KIND: a tunnel of KIND in srv ending on srv's veth address, an
# inner address INNER_DST on it, the spoofed inner sources INNER_SRC routed
# back into it, and a listener on INNER_DST.
tunnel_up() {
	local six=0
	KIND=$1
	UDP_PORT=0
	ETH_TUN=0
	INNER_DST=198.18.200.1
	INNER_SRC=198.19.128.0/17
	case "$KIND" in
	ipip) run in_srv ip link add tnl0 type ipip local "$SRV_IP" remote "$CLI_IP" ;;
	sit) run in_srv ip link add tnl0 type sit local "$SRV_IP" remote "$CLI_IP"; six=1 ;;
	gre) run in_srv ip link add tnl0 type gre local "$SRV_IP" remote "$CLI_IP" \
		key 7 csum seq ;;
	ip6ip6) run in_srv ip link add tnl0 type ip6tnl mode ip6ip6 local "$SRV_IP6" \
		remote "$CLI_IP6"; six=1 ;;
	ip6gre) run in_srv ip link add tnl0 type ip6gre local "$SRV_IP6" remote "$CLI_IP6" ;;
	vxlan) UDP_PORT=4789 ETH_TUN=1
		run in_srv ip link add tnl0 type vxlan id 42 local "$SRV_IP" remote "$CLI_IP" \
			dstport "$UDP_PORT" ;;
	vxlan6) UDP_PORT=4789 ETH_TUN=1
		run in_srv ip link add tnl0 type vxlan id 42 local "$SRV_IP6" remote "$CLI_IP6" \
			dstport "$UDP_PORT" ;;
	geneve) UDP_PORT=6081 ETH_TUN=1
		run in_srv ip link add tnl0 type geneve id 42 remote "$CLI_IP" ;;
	fou | gue)
		# An ipip device whose packets come in UDP: the fou port
		# hands them to it (ipproto 4), or the GUE header does.
		UDP_PORT=5555
		[ "$KIND" = fou ] || UDP_PORT=5556
		# The fou module is not loaded by asking for its family.
		modprobe -q fou 2>/dev/null || true
		run in_srv ip fou show
		if [ "$status" -ne 0 ]; then
			skip "kernel $(uname -r) has no fou module ($output)"
		fi
		if [ "$KIND" = fou ]; then
			run in_srv ip fou add port "$UDP_PORT" ipproto 4
		else
			run in_srv ip fou add port "$UDP_PORT" gue
		fi
		if [ "$status" -ne 0 ]; then
			echo "tunnel_up: ip fou add port $UDP_PORT: $output" >&2
			return 1
		fi
		run in_srv ip link add tnl0 type ipip local "$SRV_IP" remote "$CLI_IP" \
			encap "$KIND" encap-sport auto encap-dport "$UDP_PORT" ;;
	*) echo "tunnel_up: unknown kind '$KIND'" >&2; return 1 ;;
	esac
	if [ "$status" -ne 0 ]; then
		# The kernel of this run was built without the tunnel.
		if [[ "$output" == *"Unknown device type"* ]]; then
			skip "kernel $(uname -r) has no $KIND tunnels ($output)"
		fi
		echo "tunnel_up: ip link add $KIND: $output" >&2
		return 1
	fi
	DEV=tnl0
	if [ -n "${TUN_VLAN:-}" ]; then
		# The inner frames carry an 802.1Q tag: the listener is
		# behind a VLAN device on the tunnel.
		run in_srv ip link add link tnl0 name tnl0.v type vlan id "$TUN_VLAN"
		if [ "$status" -ne 0 ]; then
			if [[ "$output" == *"Unknown device type"* ]]; then
				skip "kernel $(uname -r) has no VLAN devices ($output)"
			fi
			echo "tunnel_up: ip link add vlan: $output" >&2
			return 1
		fi
		in_srv ip link set tnl0 up
		DEV=tnl0.v
	fi
	if [ "$six" = 1 ]; then
		INNER_DST=2001:db8:200::1
		INNER_SRC=2001:db8:ff80::/64
		in_srv ip -6 addr add "$INNER_DST/128" dev "$DEV" nodad
	else
		in_srv ip addr add "$INNER_DST/32" dev "$DEV"
	fi
	in_srv ip link set "$DEV" up
	if [ "$ETH_TUN" = 0 ]; then
		in_srv ip route add "$INNER_SRC" dev "$DEV"
	else
		# An Ethernet tunnel: the replies to thousands of spoofed
		# sources go through one neighbour, or the neighbour table
		# overflows and the listener forgets the SYNs it could not
		# answer.
		in_srv ip route add "$INNER_SRC" via 198.18.200.2 dev "$DEV" onlink
		in_srv ip neigh add 198.18.200.2 lladdr 02:00:00:00:00:01 dev "$DEV" nud permanent
	fi
	# The inner frames' destination: the device's own MAC where they are
	# Ethernet frames (an IP tunnel's "address" is an IP address).
	INNER_MAC=02:00:00:00:00:02
	[ "$ETH_TUN" = 0 ] || INNER_MAC=$(in_srv cat /sys/class/net/tnl0/address)
	listener_start "$INNER_DST"
}

# tun_flood COUNT RATE [OPTIONS...]: COUNT encapsulated SYNs at RATE from
# cli, each flood from the next block of source ports; prints the line.
tun_flood() {
	local outer_src=$CLI_IP outer_dst=$SRV_IP n
	case "$KIND" in ip6* | *6) outer_src=$CLI_IP6; outer_dst=$SRV_IP6 ;; esac
	n=$(cat "$TESTBED_TMP/tun.n" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$TESTBED_TMP/tun.n"
	in_cli taskset -c "$(( $(nproc) - 1 ))" python3 "$TUNFLOOD" --iface "$IF_CLI" \
		--dst-mac "$SRV_MAC" --kind "$KIND" --outer-src "$outer_src" \
		--outer-dst "$outer_dst" --src "$INNER_SRC" --dst "$INNER_DST" --dport "$PORT" \
		--udp-port "$UDP_PORT" --inner-mac "$INNER_MAC" --count "$1" --rate "$2" \
		--sport-base $((1024 + 4096 * n)) ${TUN_VLAN:+--vlan "$TUN_VLAN"} "${@:3}"
}

# half_open: the listener's half-open connections (a SYN it was given each).
half_open() {
	in_srv ss -Htn state syn-recv "sport = :$PORT" | wc -l
}

# tun_rx: packets the tunnel device in srv received (the kernel opened).
tun_rx() {
	in_srv cat /sys/class/net/tnl0/statistics/rx_packets
}

# syn_judged: encapsulated SYNs charged to a class, summed over classes.
syn_judged() {
	bpftool map dump pinned "$PIN_DIR/stats" | jq '[.[0].values[].value.cls[].syn] | add'
}

judged_reach() { [ "$(syn_judged)" -ge "$1" ]; }

# tun_stat FIELD: a counter of the pinned tun_stats map, summed over CPUs.
tun_stat() {
	bpftool map dump pinned "$PIN_DIR/tun_stats" | jq "[.[0].values[].value.$1] | add"
}

# tunnel_judged KIND [OPTIONS...]: the kernel gives the listener every
# encapsulated SYN without shedd; with shedd at --rate 100 a flood of 2000
# at 1000/s reaches it at about the rate, and every SYN was judged.
tunnel_judged() {
	local before judged tjudged rx line sent
	if [ -n "${SHEDD_FIRST:-}" ]; then
		# shedd runs before the tunnel exists: it hears of the new
		# device and reads the tunnels again.
		shedd_start --verify off --port "$PORT" --rate 100 --burst 10 --controller off
	fi
	tunnel_up "$1"
	shift
	before=$(half_open)
	rx=$(tun_rx)
	if [ -z "${SHEDD_FIRST:-}" ]; then
		line=$(tun_flood 200 1000 "$@")
		echo "without shedd: $line"
		# The kernel opens every one of them.
		wait_for "the tunnel to receive 200 packets" 5 \
			sh -c "[ \$(ip netns exec $NS_SRV cat /sys/class/net/tnl0/statistics/rx_packets) -ge $((rx + 200)) ]"
		echo "without shedd: the tunnel received $(( $(tun_rx) - rx )), the listener holds $(( $(half_open) - before )) more half-open connections"
		shedd_start --verify off --port "$PORT" --rate 100 --burst 10 --controller off
		# shedd read the fou port from generic netlink.
		case "$KIND" in
		fou) grep -q "tunnels that end here: .*fou:$UDP_PORT/4/ipv4" "$TESTBED_TMP/shedd.log" ;;
		gue) grep -q "tunnels that end here: .*gue:$UDP_PORT/ipv4" "$TESTBED_TMP/shedd.log" ;;
		esac
	else
		wait_for "shedd to read the new tunnel" 5 \
			grep -q "tunnels that end here: .*vxlan:$UDP_PORT" "$TESTBED_TMP/shedd.log"
	fi
	tun_flood 500 1000 "$@" >/dev/null # the allocator learns the CPU
	sleep 1
	before=$(half_open)
	rx=$(tun_rx)
	judged=$(syn_judged)
	tjudged=$(tun_stat judged)
	line=$(tun_flood 2000 1000 "$@")
	echo "with shedd --rate 100: $line"
	sent=$(field sent "$line")
	[ "$sent" -eq 2000 ]
	# Every frame sent is judged by the time the counters show it.
	wait_for "the inner SYNs judged" 5 judged_reach $((judged + sent))
	echo "judged: $(( $(syn_judged) - judged )) passed to the tunnel: $(( $(tun_rx) - rx )) reached the listener: $(( $(half_open) - before ))"
	echo "tun_stats: $(tun_stat decap) opened, $(tun_stat judged) judged, $(tun_stat refused) refused"
	# Every inner SYN was judged, in its class and as a tunnel's ...
	within $(( $(syn_judged) - judged )) 2000 2000
	within $(( $(tun_stat judged) - tjudged )) 2000 2000
	# ... and about 2 s at 100/s and the burst got past XDP.
	within $(( $(tun_rx) - rx )) 150 320
}

@test "IPIP: inner SYNs are judged and shed at --rate" {
	tunnel_judged ipip
}

@test "GRE with key, checksum and sequence number: inner SYNs are judged and shed at --rate" {
	tunnel_judged gre --gre-key 7 --gre-csum --gre-seq
}

@test "VXLAN: inner SYNs (inner Ethernet) are judged and shed at --rate" {
	tunnel_judged vxlan
}

@test "VXLAN over IPv6, inner IPv4: inner SYNs are judged and shed at --rate" {
	tunnel_judged vxlan6
}

@test "VXLAN with an inner 802.1Q tag: inner SYNs are judged and shed at --rate" {
	TUN_VLAN=5 tunnel_judged vxlan
}

@test "VXLAN made while shedd runs: its inner SYNs are judged from then on" {
	SHEDD_FIRST=1 tunnel_judged vxlan
}

@test "Geneve with options: inner SYNs are judged and shed at --rate" {
	tunnel_judged geneve --geneve-opt 8
}

@test "SIT (IPv6 in IPv4): inner SYNs are judged and shed at --rate" {
	tunnel_judged sit
}

@test "IP6IP6 (ip6tnl): inner SYNs are judged and shed at --rate" {
	tunnel_judged ip6ip6
}

@test "ip6gre: inner SYNs are judged and shed at --rate" {
	tunnel_judged ip6gre
}

@test "FOU (ipip, encap fou, ipproto 4): inner SYNs are judged and shed at --rate" {
	tunnel_judged fou
}

@test "GUE (ipip, encap gue) with 8 bytes of fields: inner SYNs are judged and shed at --rate" {
	tunnel_judged gue --gue-opt 8
}

# direct_client [recv]: a real client, the kernel's stack in cli, connects
# straight to the listener on $SRV_IP within 0.9 s, before its SYN's first
# retransmission (1 s): its first SYN was admitted. With recv, it sends a
# byte and reads it back within 0.9 s from the echo server (echo_start): its
# cookie ACK was admitted, not refused (a listener that closes at once would
# reset the byte itself, so only an echo tells).
direct_client() {
	in_cli python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=0.9)
if len(sys.argv) > 3:
    s.sendall(b"x")
    if s.recv(1) != b"x":
        sys.exit("no echo")
' "$SRV_IP" "$PORT" "$@"
}

# echo_start ADDR: an echo server on ADDR:$PORT in srv, for 60 s.
echo_start() {
	ip netns exec "$NS_SRV" "$ROOT/.output/tcpecho" serve --addr "$1" --port "$PORT" \
		--duration 60 >/dev/null 2>&1 &
	PIDS+=($!)
	wait_for "echo server on $1" 5 sh -c "ip netns exec $NS_SRV ss -ltnH | grep -qF ' $1:$PORT '"
}

# tun_check FIELD: a counter of the pinned tun_checks map, summed over CPUs.
tun_check() {
	bpftool map dump pinned "$PIN_DIR/tun_checks" | jq "[.[0].values[].value.$1] | add"
}

# spared_during_flood WHAT [recv] -- FLOOD-OPTIONS...: 3000 encapsulated SYNs
# at 1000/s from cli in the background, all from spoofed sources of the
# class of the real client (the default class); meanwhile the client
# connects five times, each at once (direct_client).
spared_during_flood() {
	local what=$1 recv="" i
	shift
	[ "$1" = recv ] && { recv=recv; shift; }
	[ "$1" = -- ] && shift
	tun_flood 3000 1000 "$@" >"$TESTBED_TMP/flood.line" &
	PIDS+=($!)
	local flood=$!
	sleep 0.5
	for i in 1 2 3 4 5; do
		run direct_client $recv
		echo "$what: direct client $i: status $status $output"
		[ "$status" -eq 0 ]
		sleep 0.3
	done
	wait "$flood"
	echo "$what: $(cat "$TESTBED_TMP/flood.line")"
}

# tunnel_spares_direct KIND VALID-OPTIONS -- BOGUS-OPTIONS: through a
# tunnel of KIND, a flood the server's device does not take (BOGUS: a VNI
# or key of no device, wrong inner checksums), then a flood it takes; the
# real client, direct, in the class the flood's sources claim, connects at
# once during both. shedd: 20 SYN/s and a burst of 20 for the class.
tunnel_spares_direct() {
	local kind=$1 valid=() bogus=() judged
	shift
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do valid+=("$1"); shift; done
	shift
	bogus=("$@" --bad-csum)
	tunnel_up "$kind"
	listener_start "$SRV_IP"
	shedd_start --verify off --port "$PORT" --rate 20 --burst 20 --controller off
	spared_during_flood "no device takes it" -- "${bogus[@]}"
	echo "tun_checks.no_device $(tun_check no_device), judged $(syn_judged)"
	within "$(tun_check no_device)" 2900 3000
	judged=$(tun_stat judged)
	spared_during_flood "the device takes it" -- "${valid[@]}"
	echo "tun_stats.judged $judged -> $(tun_stat judged)"
	within $(( $(tun_stat judged) - judged )) 2900 3000
}

@test "VXLAN: a flood of a bogus VNI and checksums, then a valid one, spends none of a direct client's tokens" {
	tunnel_spares_direct vxlan -- --vni 43
}

@test "Geneve: a flood of a bogus VNI and checksums, then a valid one, spends none of a direct client's tokens" {
	tunnel_spares_direct geneve -- --vni 43
}

@test "GRE: a flood of a bogus key and checksums, then a valid one, spends none of a direct client's tokens" {
	tunnel_spares_direct gre --gre-key 7 --gre-csum --gre-seq -- --gre-key 8 --gre-csum --gre-seq
}

@test "VXLAN, a verified class: a tunnelled flood of it leaves the direct client's cookie ACK its token" {
	tunnel_up vxlan
	echo_start "$SRV_IP"
	shedd_start --verify sheddable=always $(cookie_handoff) --port "$PORT" --rate 20 \
		--burst 20 --controller off
	spared_during_flood "a verified class" recv
	echo "sheddable: cookie_sent $(stat_sum cookie_sent 3), ack_admitted $(stat_sum ack_admitted 3), ack_refused $(stat_sum ack_refused 3)"
	# Each client's cookie ACK admitted (a slow guest's kernel hand-off
	# may judge a segment behind it again), none refused.
	[ "$(stat_sum ack_admitted 3)" -ge 5 ]
	[ "$(stat_sum ack_refused 3)" -eq 0 ]
}

# map_len NAME: the number of entries of the pinned map NAME.
map_len() {
	bpftool map dump pinned "$PIN_DIR/$1" | jq length
}

# map_len_is NAME N: map NAME has N entries (for wait_for).
map_len_is() {
	[ "$(map_len "$1")" -eq "$2" ]
}

# map_len_below NAME N: map NAME has fewer than N entries (for wait_for).
map_len_below() {
	[ "$(map_len "$1")" -lt "$2" ]
}

@test "a tunnel device deleted: its entry in tun_devs and its address in tun_local are deleted" {
	local devs locals
	tunnel_up vxlan
	shedd_start --port "$PORT" --rate 20 --controller off
	wait_for "the VXLAN device in tun_devs" 5 map_len_is tun_devs 1
	locals=$(map_len tun_local)
	echo "before: tun_devs 1, tun_local $locals"
	in_srv ip link del tnl0
	wait_for "tun_devs emptied" 5 map_len_is tun_devs 0
	# The inner address (and the device's link-local one) went with it.
	run wait_for "tun_local without $INNER_DST" 5 map_len_below tun_local "$locals"
	devs=$(map_len tun_devs)
	echo "after: tun_devs $devs, tun_local $(map_len tun_local)"
	bpftool map dump pinned "$PIN_DIR/tun_local" | jq -c '.[].key'
	[ "$status" -eq 0 ]
}
