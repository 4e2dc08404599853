#!/usr/bin/env bats
# tunnels_unjudged.bats - the decapsulations the kernel does that shedd's
# XDP program does not open (bareudp, ERSPAN, L2TPv3 Ethernet pseudowires,
# WireGuard, IPsec interfaces xfrm, vti and vti6, VXLAN-GPE, MPLS taken on
# a device): the inner SYN
# reaches the stack on the device after XDP has run, unjudged, so shedd
# names each such device in a warning, once, and counts them by kind in
# shedd_unjudged_tunnel_devices. Each test makes in srv the devices the
# kernel of the run can make: this VM lacks most of the modules, the
# kernel matrix's Debian kernels have all of them but bareudp.

load lib

setup() {
	testbed_up
	MADE=()
}
teardown() { testbed_down; }

# make_dev KIND NAME: a device of KIND named NAME in srv, up, ending on
# srv's addresses (mpls: MPLS enabled on device NAME); NAME added to MADE
# as NAME:KIND. Returns 2 when the kernel of the run cannot make KIND, 1
# on another failure.
make_dev() {
	local kind=$1 name=$2
	case "$kind" in
	bareudp) run in_srv ip link add "$name" type bareudp dstport 6635 ethertype ipv4 ;;
	erspan) run in_srv ip link add "$name" type erspan local "$SRV_IP" remote "$CLI_IP" \
		seq key 100 erspan_ver 1 erspan 123 ;;
	ip6erspan) run in_srv ip link add "$name" type ip6erspan local "$SRV_IP6" \
		remote "$CLI_IP6" seq key 101 erspan_ver 1 erspan 123 ;;
	wireguard) run in_srv ip link add "$name" type wireguard ;;
	xfrm) run in_srv ip link add "$name" type xfrm dev "$IF_SRV" if_id 7 ;;
	vti) run in_srv ip link add "$name" type vti local "$SRV_IP" remote "$CLI_IP" key 5 ;;
	vti6) run in_srv ip link add "$name" type vti6 local "$SRV_IP6" remote "$CLI_IP6" key 5 ;;
	vxlan_gpe) run in_srv ip link add "$name" type vxlan gpe external dstport 4790 ;;
	mpls)
		# Not a device of its own: MPLS taken on NAME (af_mpls.c).
		modprobe -q mpls_router 2>/dev/null || true
		run in_srv sysctl -qw net.mpls.platform_labels=100
		if [ "$status" -eq 0 ]; then
			run in_srv sysctl -qw "net.mpls.conf.$name.input=1"
		fi ;;
	*) echo "make_dev: unknown kind '$kind'" >&2; return 1 ;;
	esac
	if [ "$status" -ne 0 ]; then
		echo "make_dev $kind: $output" >&2
		# The kernel of this run was built without it.
		if [[ "$output" == *"Unknown device type"* || "$output" == *"not supported"* ||
			"$output" == *"Error talking to the kernel"* || "$output" == *"No such file"* ||
			"$output" == *"Protocol not supported"* || "$output" == *"Unknown family"* ]]; then
			return 2
		fi
		return 1
	fi
	run in_srv ip link set "$name" up
	if [ "$status" -ne 0 ]; then
		echo "make_dev $kind: ip link set $name up: $output" >&2
		return 1
	fi
	MADE+=("$name:$kind")
}

# make_all: every kind the kernel of the run can make, one device each;
# skips the test when it can make none.
make_all() {
	local kind rc lacks=""
	# mpls first: the last one made is a device a test may delete.
	# Not l2tpeth: a session device made with `ip l2tp` on Debian's 6.1
	# and 6.12 was never named or counted (datapath.md says so).
	for kind in mpls bareudp erspan ip6erspan wireguard xfrm vti vti6 vxlan_gpe; do
		rc=0
		if [ "$kind" = mpls ]; then
			make_dev mpls "$IF_SRV" || rc=$?
		else
			make_dev "$kind" "uj$kind" || rc=$?
		fi
		if [ "$rc" -eq 2 ]; then
			lacks+=" $kind"
		elif [ "$rc" -ne 0 ]; then
			return 1
		fi
	done
	echo "kernel $(uname -r) made: ${MADE[*]:-none}; lacks:${lacks:- nothing}"
	[ "${#MADE[@]}" -gt 0 ] || skip "kernel $(uname -r) makes none of these devices"
}

# metric KIND: shedd_unjudged_tunnel_devices{kind=KIND} as scraped.
metric() {
	in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics |
		sed -n "s/^shedd_unjudged_tunnel_devices{iface=\"$IF_SRV\",kind=\"$1\"} //p"
}

metric_is() { [ "$(metric "$1")" = "$2" ]; }

# warned NAME KIND: how many warnings name device NAME of KIND.
warned() {
	grep -cF "$1 ($2): SYNs " "$TESTBED_TMP/shedd.log" || true
}

# named_once: every device made is named in one warning, and counted; a
# kind with no device is exported at 0.
named_once() {
	local d name kind all=" ${MADE[*]} "
	for d in "${MADE[@]}"; do
		name=${d%%:*} kind=${d#*:}
		# MPLS settings are read once a second, devices on their event.
		wait_for "$name ($kind) counted" 5 metric_is "$kind" 1
		wait_for "$name ($kind) named" 5 \
			grep -qF "$name ($kind): SYNs " "$TESTBED_TMP/shedd.log"
		echo "$name ($kind): $(warned "$name" "$kind") warnings, metric $(metric "$kind")"
		[ "$(warned "$name" "$kind")" -eq 1 ]
	done
	for kind in mpls bareudp erspan ip6erspan wireguard xfrm vti vti6 vxlan_gpe; do
		[[ "$all" == *":$kind "* ]] || metric_is "$kind" 0
	done
}

# tunnel_lines: the lines that say what shedd read of the tunnels.
tunnel_lines() { grep -c 'tunnels that end here' "$TESTBED_TMP/shedd.log" || true; }

@test "each decapsulating device shedd does not open is named in one warning at start and counted by kind" {
	make_all
	shedd_start --verify off --controller off
	wait_for "the metrics" 5 metric_is "${MADE[0]#*:}" 1
	named_once
}

@test "a decapsulating device made while shedd runs is named once, and no longer counted once removed" {
	local last before
	shedd_start --verify off --controller off
	wait_for "the metrics" 5 metric_is wireguard 0
	make_all
	last=${MADE[-1]}
	wait_for "shedd to name ${last%%:*}" 5 \
		grep -qF "${last%%:*} (${last#*:}): SYNs " "$TESTBED_TMP/shedd.log"
	wait_for "the metric of ${last#*:}" 5 metric_is "${last#*:}" 1
	# Another change (a local address) reads the links again: no
	# device is named twice.
	before=$(tunnel_lines)
	run in_srv ip addr add 198.18.77.1/32 dev lo
	[ "$status" -eq 0 ]
	wait_for "shedd to read the links again" 5 sh -c "[ \$(grep -c 'tunnels that end here' \
		'$TESTBED_TMP/shedd.log') -gt $before ]"
	named_once
	# Removed: counted no more, not named again.
	run in_srv ip link del "${last%%:*}"
	[ "$status" -eq 0 ]
	wait_for "the metric of ${last#*:} back to 0" 5 metric_is "${last#*:}" 0
	[ "$(warned "${last%%:*}" "${last#*:}")" -eq 1 ]
}

@test "shedd refuses a device without an Ethernet header (tun, as wireguard, xfrm, vti, bareudp), where it would judge nothing" {
	run in_srv ip tuntap add dev ujtun0 mode tun
	# The kernel matrix's guests have no /dev/net/tun.
	[ "$status" -eq 0 ] || skip "no tun device here ($output)"
	run in_srv ip link set ujtun0 up
	[ "$status" -eq 0 ]
	# Generic XDP attaches there; shedd must not (timeout: a shedd that
	# attached runs until it is stopped).
	run timeout $((10 * TESTBED_TIME_SCALE)) "$SHEDD" --netns "$NS_SRV" --iface ujtun0 \
		--xdp-mode generic --verify off --controller off
	echo "$output"
	# 3: the environment (as for an interface that is not there).
	[ "$status" -eq 3 ]
	[[ "$output" == *"ujtun0 is not an Ethernet device (link type 65534)"* ]]
	run in_srv ip -d link show ujtun0
	[ "$status" -eq 0 ]
	[[ "$output" != *xdp* ]]
}
