#!/usr/bin/env bats
# lifecycle.bats - what shedd leaves behind: nothing after SIGTERM, a
# shedding program after SIGKILL or --keep-on-exit, adopted by the next shedd
# with counters intact; pinned maps readable by bpftool with field names;
# an established connection untouched while new SYNs are shed.

load lib

setup() { testbed_up; listener_start; }
teardown() { testbed_down; }

@test "SIGTERM detaches and removes every pin" {
	shedd_start --port "$PORT" --rate 100
	xdp_attached
	[ -e "$PIN_DIR/link" ] && [ -e "$PIN_DIR/stats" ]
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	! xdp_attached
	[ ! -e "$PIN_DIR" ]
}

@test "bpftool dumps the pinned maps with field names" {
	shedd_start --port "$PORT" --rate 100 --prefix 198.19.1.0/24=critical
	flood 198.19.1.0/24 50 1 >/dev/null
	run bpftool map dump pinned "$PIN_DIR/stats"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"admitted":'* ]]
	[[ "$output" == *'"unprotected":'* ]]
	run bpftool map dump pinned "$PIN_DIR/rates"
	[[ "$output" == *'"rate_per_sec":'* ]]
	run bpftool map dump pinned "$PIN_DIR/prefix_v4"
	echo "$output"
	[[ "$output" == *'"prefixlen": 24'* ]]
	[ "$(stat_sum admitted 1)" -ge 45 ]
}

@test "SIGKILL leaves shedding in place; a new shedd adopts it with counters intact" {
	shedd_start --port "$PORT" --rate 200 --burst 20
	# The daemon dies in the middle of a flood: the program keeps the rates
	# it last wrote for that flood.
	flood_bg /dev/null 198.19.0.0/16 1000 3
	sleep 1.5
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	wait "$FLOOD_PID"
	xdp_attached
	link_id=$(bpftool -j link show pinned "$PIN_DIR/link" | jq .id)
	line=$(flood 198.19.0.0/16 1000 2)
	echo "no daemon: $line"
	within "$(field synack "$line")" 360 460
	before=$(stat_sum syn 3)
	[ "$before" -eq 5000 ]
	shedd_start --port "$PORT" --rate 200 --burst 20
	grep -q 'adopted the running shedd' "$BATS_TEST_TMPDIR/shedd.log"
	# Same link, so no gap; counters continue from where they were.
	[ "$(bpftool -j link show pinned "$PIN_DIR/link" | jq .id)" = "$link_id" ]
	[ "$(stat_sum syn 3)" -ge "$before" ]
	line=$(flood 198.19.0.0/16 1000 2)
	echo "adopted: $line"
	within "$(field synack "$line")" 360 460
	[ "$(stat_sum syn 3)" -eq 7000 ]
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	! xdp_attached
	[ ! -e "$PIN_DIR" ]
}

@test "an adopting shedd's controller carries on from the running rate" {
	# The controller's limit is held at 300 by --max-rate.
	shedd_start --port "$PORT" --max-rate 300
	grep -q 'aimd, start rate 300 SYN/s' "$BATS_TEST_TMPDIR/shedd.log"
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	# A restart without --rate starts from the program's 300, not from the
	# default of 10000.
	shedd_start --port "$PORT" --max-rate 5000
	grep 'adopted' "$BATS_TEST_TMPDIR/shedd.log"
	grep -q 'adopted the running shedd on .* aimd, start rate 300 SYN/s' "$BATS_TEST_TMPDIR/shedd.log"
}

@test "--keep-on-exit leaves the program; --remove takes it away" {
	shedd_start --port "$PORT" --rate 100 --keep-on-exit
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	xdp_attached
	[ -e "$PIN_DIR/link" ]
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	[ "$status" -eq 0 ]
	! xdp_attached
	[ ! -e "$PIN_DIR" ]
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	[ "$status" -ne 0 ]
	[[ "$output" == *"nothing to remove"* ]]
}

@test "another program's XDP attachment is kept unless --force" {
	# Any XDP program that is not shedd's: a copy loaded and attached by
	# bpftool through netlink.
	FOREIGN_PIN="/sys/fs/bpf/shedd-test-foreign-$IF_SRV"
	bpftool prog load "$ROOT/.output/shedd.bpf.o" "$FOREIGN_PIN" type xdp
	foreign_id=$(bpftool -j prog show pinned "$FOREIGN_PIN" | jq .id)
	nsenter --net="/run/netns/$NS_SRV" bpftool net attach xdpgeneric id "$foreign_id" dev "$IF_SRV"
	rm -f "$FOREIGN_PIN"
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --xdp-mode generic
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"already has an XDP program"* ]]
	[ ! -e "$PIN_DIR/link" ]
	[ "$(nsenter --net="/run/netns/$NS_SRV" bpftool -j net show dev "$IF_SRV" | jq '.[0].xdp[0].id')" = "$foreign_id" ]
	shedd_start --xdp-mode generic --force --rate 100
	[ -e "$PIN_DIR/link" ]
	attached=$(nsenter --net="/run/netns/$NS_SRV" bpftool -j net show dev "$IF_SRV" | jq '.[0].xdp[0].id')
	[ "$attached" != "$foreign_id" ]
	[ "$attached" = "$(bpftool -j link show pinned "$PIN_DIR/link" | jq .prog_id)" ]
}

@test "an established connection keeps flowing while every new SYN is shed" {
	ip netns exec "$NS_SRV" "$TCPSTREAM" serve --addr "$SRV_IP" --port 8081 --duration 20 \
		>"$BATS_TEST_TMPDIR/recv" 2>&1 &
	PIDS+=($!)
	wait_listening "stream listener" 8081
	ip netns exec "$NS_CLI" "$TCPSTREAM" send --addr "$SRV_IP" --port 8081 --duration 5 \
		>"$BATS_TEST_TMPDIR/sent" 2>/dev/null &
	send_pid=$!
	PIDS+=("$send_pid")
	sleep 0.5 # the connection is established before shedd arrives
	shedd_start --port 8080,8081 --rate 0
	line=$(flood 198.19.0.0/16 5000 3)
	echo "flood: $line"
	[ "$(field synack "$line")" -eq 0 ]
	wait "$send_pid"
	sent=$(cat "$BATS_TEST_TMPDIR/sent")
	echo "stream: $sent"
	[ "$(field min_per_sec "$sent")" -gt 0 ]
	# A new connection to the protected port is refused at the door.
	run in_cli timeout 3 bash -c "exec 3<>/dev/tcp/$SRV_IP/8081"
	[ "$status" -ne 0 ]
	[ "$(stat_sum non_syn)" -gt 1000 ]
}
