#!/usr/bin/env bats
# fragments.bats - no way around shedd through a real kernel: a SYN sent as
# two IP fragments is reassembled by the server's kernel and answered like
# any SYN, so shedd must judge the first fragment and shed it at --rate,
# and never answer one with a RST. Counted at the sender (distinct SYN-ACKs
# and RSTs) and in shedd's stats.

# The flood here is spoofed and sheds: verified admission would answer it
# with cookies instead of charging it. These tests measure the token bucket
# itself, so shedd runs with --verify off; verified.bats tests cookies.

load lib

# Each SYN shedd sheds leaves its second fragment in the server's
# reassembly queue until the fragment timeout (60 s), where it counts
# against ip(6)frag_high_thresh (4 MiB); past it the kernel drops every new
# fragment, an admitted SYN's too. A tail costs its skb's truesize, which
# the kernel and driver decide: 1 261 bytes on 6.18 (2 794 tails, 3.5 MiB,
# after the IPv6 test), more on 6.1, where the admitted SYNs were then
# refused at reassembly (30 SYN-ACKs for about 300 admitted). The tests
# count what shedd admits, so the server's namespace gets room for them.
setup() {
	testbed_up
	in_srv sysctl -qw net.ipv4.ipfrag_high_thresh=67108864 net.ipv6.ip6frag_high_thresh=67108864
	listener_start
	listener_start "$SRV_IP6"
}
teardown() { testbed_down; }

# flood_frag SRC_CIDR RATE SECONDS [DST]: flood with every SYN in two
# fragments; prints synflood's line.
flood_frag() {
	flood_cmd "$@"
	"${FLOOD_CMD[@]}" --fragment
}

# frag_shed SRC DST: without shedd the kernel answers every fragmented SYN;
# with shedd at --rate 100 a flood of 1000/s for 3 s gets about the rate.
frag_shed() {
	line=$(flood_frag "$1" 300 1 "$2")
	echo "without shedd: $line"
	# The kernel reassembles the fragments and answers them all.
	within "$(field synack "$line")" $(( $(field sent "$line") - 2 )) "$(field sent "$line")"

	shedd_start --verify off --port "$PORT" --rate 100 --burst 10 --controller off
	flood_frag "$1" 1000 1 "$2" >/dev/null # the allocator learns the CPU
	before=$(stat_sum frag_judged)
	line=$(flood_frag "$1" 1000 3 "$2")
	echo "with shedd --rate 100: $line"
	sent=$(field sent "$line")
	within "$sent" 2900 3000
	# 3 s at 100/s, the burst, and the refill during the 1 s --wait.
	within "$(field synack "$line")" 200 450
	[ "$(field rst "$line")" -eq 0 ]
	# Every first fragment was judged.
	within $(( $(stat_sum frag_judged) - before )) "$sent" $(( sent + 2 ))
}

@test "IPv4 SYNs in two fragments are judged and shed at --rate" {
	frag_shed 198.19.0.0/16 "$SRV_IP"
}

@test "IPv6 SYNs behind a Fragment header are judged and shed at --rate" {
	frag_shed 2001:db8:ff00::/64 "$SRV_IP6"
}

@test "--reject rst never answers a fragment; whole SYNs get RSTs within --rst-rate" {
	shedd_start --verify off --port "$PORT" --rate 50 --burst 5 --controller off --reject rst \
		--rst-rate 200
	# The settings carry the interface's MAC: a RST only answers SYNs sent to it.
	mac=$(settings .mac | jq -r 'map(. as $b | "0123456789abcdef" | .[($b / 16 | floor):($b / 16 | floor) + 1] + .[($b % 16):($b % 16) + 1]) | join(":")')
	[ "$mac" = "$SRV_MAC" ]

	line=$(flood_frag 198.19.0.0/16 1000 2)
	echo "fragments: $line"
	[ "$(field rst "$line")" -eq 0 ]
	[ "$(stat_sum rst_sent 3)" -eq 0 ]

	# Whole SYNs: answered, but only as fast as the RST budget of the
	# flood's CPU allows (200/s split over the CPUs, rounded up, with a
	# tenth of a second of depth), for the 2 s of the flood and 1 s of --wait.
	per_cpu=$(settings .rst_rate_per_sec)
	depth=$(settings .rst_burst)
	line=$(flood 198.19.1.0/24 2000 2)
	echo "whole SYNs: $line (RST budget ${per_cpu}/s, depth $depth per CPU)"
	within "$(field rst "$line")" $(( per_cpu * 2 )) $(( per_cpu * 3 + depth + 2 ))
	[ "$(stat_sum rst_limited)" -gt 2000 ]
}
