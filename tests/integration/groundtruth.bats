#!/usr/bin/env bats
# groundtruth.bats - the fuzzer's reference model (tests/fuzz_xdp.c) is the
# kernel's word, not ours: a table of crafted SYNs (VLAN stacks of priority
# tags and of VIDs with VLAN devices, IPv4 options and fragments, IPv6
# chains and fragments, IP-in-IP and GRE, bad lengths) goes through a real
# veth to a real listener, with no XDP program on either end, and the
# model must say, row by row, which ones the kernel answers with a SYN-ACK
# (tests/tools/groundtruth.py).

load lib

setup() {
	testbed_up --plain
	listener_start
	listener_start "$SRV_IP6"
	# The VLAN devices the table's non-zero VIDs go through: 802.1Q 100,
	# and 802.1ad 100 with 802.1Q 101 inside. VID 200 has none. A kernel
	# without 8021q has none at all: those rows then only check that the
	# kernel drops what the model over-approximates.
	VLAN_OPT=()
	if in_srv ip link add link "$IF_SRV" name "$IF_SRV.q" type vlan id 100 2>/dev/null; then
		in_srv ip link add link "$IF_SRV" name "$IF_SRV.ad" type vlan proto 802.1ad id 100
		in_srv ip link add link "$IF_SRV.ad" name "$IF_SRV.adq" type vlan id 101
		for dev in "$IF_SRV.q" "$IF_SRV.ad" "$IF_SRV.adq"; do
			in_srv ip link set "$dev" up
		done
	else
		VLAN_OPT=(--no-vlan-devices)
	fi
	# A SYN that comes in on a VLAN device is for an address of the
	# veth: no reverse-path filter in the way (the namespace's default).
	in_srv sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

teardown() { testbed_down; }

@test "no XDP program on either end of the link" {
	run xdp_attached
	[ "$status" -ne 0 ]
	run in_cli ip link show dev "$IF_CLI"
	[ "$status" -eq 0 ]
	[[ "$output" != *xdp* ]]
}

@test "the reference model says, row by row, which SYNs the kernel delivers" {
	run timeout 60 ip netns exec "$NS_CLI" python3 "$ROOT/tests/tools/groundtruth.py" \
		"${VLAN_OPT[@]}" "$ROOT/.output/fuzz_xdp" "$IF_CLI" "$SRV_MAC" "$CLI_IP" "$SRV_IP" \
		"$CLI_IP6" "$SRV_IP6" "$PORT"
	echo "$output"
	[ "$status" -eq 0 ]
	# Not a table the kernel ignored: the plain SYNs, the priority tags
	# past shedd's walk and the fragments were all delivered.
	[[ "$(grep -c '^IPv[46] SYN  *deliver  *deliver  *judge$' <<<"$output")" -eq 2 ]]
	[[ "$(grep -c '^IPv4 SYN, 8 priority tags  *deliver  *deliver  *judge$' <<<"$output")" -eq 1 ]]
	[[ "$(grep -c '^~IPv4 SYN, 12 priority tags  *[a-z]*  *deliver  *refuse$' <<<"$output")" -eq 1 ]]
	[[ "$(grep -c '^IPv6 SYN in two fragments  *deliver  *deliver  *judge$' <<<"$output")" -eq 1 ]]
	[[ "$output" =~ groundtruth:\ ([0-9]+)\ rows,\ ([0-9]+)\ delivered\ by\ the\ kernel,\ 0\ wrong ]]
	rows=${BASH_REMATCH[1]} delivered=${BASH_REMATCH[2]}
	within "$rows" 30 100
	within "$delivered" 15 "$rows"
}
