#!/usr/bin/env bats
# reload.bats - SIGHUP reloads --config: the new file is checked whole and
# applied to the running program (pinned maps, per-class counts on the wire);
# a broken file changes nothing, fails the unit's ExecReload (its
# --check-config) and is counted in the metrics; reloads under load lose no
# packet of an established connection and leave no gap in the shedding.

# The floods are spoofed: verified admission would answer them with cookies
# instead of charging them, so the file sets verify = off.

load lib

setup() {
	testbed_up
	listener_start
	CONF="$BATS_TEST_TMPDIR/shedd.conf"
}
teardown() { testbed_down; }

# conf RATE PORTS PREFIX FLOOR [EXTRA]: a config file (the interface and the
# namespace come from the command line, which wins).
conf() {
	cat >"$CONF.new" <<-EOC
	; written by reload.bats
	[shedd]
	port = $2
	rate = $1
	burst = 100
	prefix = $3
	floor = sheddable=$4
	$5

	[controller]
	controller = off

	[verify]
	verify = off
	EOC
	mv "$CONF.new" "$CONF" # whole, as an editor's save would be
}

# reloads: how many reloads shedd has logged.
reloads() { grep -c '^shedd: reloaded ' "$TESTBED_TMP/shedd.log" || true; }

# hup N: SIGHUP and wait for the Nth "reloaded" (or refused, or unchanged)
# line.
hup() {
	kill -HUP "$SHEDD_PID"
	wait_for "reload $1" 5 sh -c "[ \$(grep -cE '^shedd: (reloaded|reload refused|reload: .*: the configuration is unchanged)' \
		'$TESTBED_TMP/shedd.log') -ge $1 ]"
}

# unit_reload: what `systemctl reload shedd@IFACE` runs, from the unit
# file (UNIT, default the tree's): each ExecReload= line in turn, with the
# testbed's interface, config file, namespace (SHEDD_ARGS) and shedd's pid
# (MAINPID), stopping at the first that fails, as systemd does. Its
# status is the reload's.
UNIT=${UNIT:-$ROOT/contrib/systemd/shedd@.service}
unit_reload() {
	local cmd
	while IFS= read -r cmd; do
		cmd=${cmd//@SBINDIR@\/shedd/$SHEDD}
		cmd=${cmd//\/etc\/shedd\/%i.conf/$CONF}
		cmd=${cmd//%i/$IF_SRV}
		cmd=${cmd//\$SHEDD_ARGS/--netns $NS_SRV}
		cmd=${cmd//\$MAINPID/$SHEDD_PID}
		echo "ExecReload: $cmd"
		bash -c "$cmd" || return
	done < <(sed -n 's/^ExecReload=//p' "$UNIT")
}

# metric NAME{LABELS}: a sample of shedd's /metrics, in the server's
# namespace.
metric() {
	in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics |
		awk -v s="$1" 'index($0, s) == 1 { print $NF }'
}
reloads_metric() { metric "shedd_config_reloads_total{iface=\"$IF_SRV\",result=\"$1\"}"; }
last_reload_ok() { metric "shedd_config_last_reload_successful{iface=\"$IF_SRV\"}"; }

# host_prefixes FIRST N: "prefix = ADDR/32" lines of N IPv4 hosts of
# 198.18.0.0/15 from the FIRST-th on (awk: a bash loop under bats' traps
# takes a minute).
host_prefixes() {
	awk -v first="$1" -v n="$2" 'BEGIN { for (i = first; i < first + n; i++)
		printf "prefix = 198.%d.%d.%d/32\n", 18 + int(i / 65536), int(i / 256) % 256, i % 256 }'
}

ports() { bpftool map dump pinned "$PIN_DIR/ports" | jq -c '[.[].key] | sort'; }
prefixes() {
	bpftool map dump pinned "$PIN_DIR/prefix_v4" |
		jq -c '[.[] | "\(.key.addr | map(tostring) | join("."))/\(.key.prefixlen)=\(.value)"] | sort'
}
total_rate() { bpftool map dump pinned "$PIN_DIR/rates" | jq '[.[].value.r.rate_per_sec] | add'; }
class_rate() { bpftool map dump pinned "$PIN_DIR/rates" | jq ".[] | select(.key == $1) | .value.r.rate_per_sec"; }

@test "a reload applies rate, ports, prefixes and floors: pinned maps and SYNs per class" {
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF"
	wait_for "rate 1000" 3 sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/rates' |
		jq '[.[].value.r.rate_per_sec] | add')\" = 1000 ]"
	[ "$(ports)" = "[$PORT]" ]
	[ "$(prefixes)" = '["198.19.1.0/24=0"]' ]

	conf 3000 "$PORT,9090" 198.19.2.0/24=critical 0.3
	hup 1
	grep -q "reloaded $CONF: limit 3000 SYN/s, 2 port(s), 1 prefix(es); changed: port, prefix, floor, rate" \
		"$TESTBED_TMP/shedd.log"
	[ "$(ports)" = "[$PORT,9090]" ]
	[ "$(prefixes)" = '["198.19.2.0/24=1"]' ]
	# The next tick publishes the new limit; with no demand the split
	# gives sheddable (3) at least its new floor.
	wait_for "rate 3000" 3 sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/rates' |
		jq '[.[].value.r.rate_per_sec] | add')\" = 3000 ]"
	within "$(class_rate 3)" 900 3000

	# On the wire: the new prefix is critical (1), the old one is now
	# unmatched, sheddable (3).
	crit=$(stat_sum syn 1)
	shed=$(stat_sum syn 3)
	flood 198.19.2.0/24 200 1 >/dev/null
	flood 198.19.1.0/24 200 1 >/dev/null
	echo "syn critical +$(( $(stat_sum syn 1) - crit )), sheddable +$(( $(stat_sum syn 3) - shed ))" >&3
	within $(( $(stat_sum syn 1) - crit )) 190 210
	within $(( $(stat_sum syn 3) - shed )) 190 210
	# The new limit holds on the wire: 3000/s is not shed at 2000/s.
	line=$(flood 198.19.128.0/17 2000 2)
	within "$(field synack "$line")" 3800 4000
	kill -0 "$SHEDD_PID"
}

@test "a broken file on reload is named by line and changes nothing; shedd runs on" {
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF"
	conf 2000 "$PORT,9090" 198.19.9.0/24=critical 0.2 "rate = 5x"
	hup 1
	grep -q "^shedd: reload refused, the running configuration stays: $CONF:8: key 'rate' is given twice (also on line 4)" \
		"$TESTBED_TMP/shedd.log"
	conf 2000 "$PORT" "198.19.9.1/24=critical" 0.2
	hup 2
	grep -q "^shedd: reload refused, the running configuration stays: $CONF:6: prefix: '198.19.9.1/24' has bits set past /24" \
		"$TESTBED_TMP/shedd.log"
	conf 2000 "$PORT" 198.19.9.0/24=critical 0.7 "floor = critical=0.7"
	hup 3
	grep -q "^shedd: reload refused, the running configuration stays: $CONF:8: --floor: the floors add up to" \
		"$TESTBED_TMP/shedd.log"
	wait_ticks 3 # a few ticks: nothing may have changed
	kill -0 "$SHEDD_PID"
	[ "$(ports)" = "[$PORT]" ]
	[ "$(prefixes)" = '["198.19.1.0/24=0"]' ]
	[ "$(total_rate)" = 1000 ]
	# Still shedding at the old limit.
	line=$(flood 198.19.128.0/17 3000 2)
	within "$(field synack "$line")" 1700 2200
	# And a good file after the broken ones is applied.
	conf 2000 "$PORT" 198.19.9.0/24=critical 0.2
	hup 4
	[ "$(prefixes)" = '["198.19.9.0/24=1"]' ]
}

@test "a refused reload is visible: the unit's ExecReload fails, no SIGHUP is sent; the metrics count the daemon's refusals" {
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF"
	[ "$(reloads_metric ok)" = 0 ]
	[ "$(reloads_metric refused)" = 0 ]
	[ "$(last_reload_ok)" = 1 ]

	# A typo: systemctl reload would fail, with the check's message, and
	# the daemon is not even asked.
	conf 2000 "$PORT" 198.19.9.0/24=critical 0.2 "rate = 5x"
	run unit_reload
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"shedd: $CONF:8: key 'rate' is given twice (also on line 4)"* ]]
	[[ "$output" != *"ExecReload: /bin/kill"* ]]
	wait_ticks 2
	run grep -c 'reload' "$TESTBED_TMP/shedd.log"
	[ "$output" = 0 ]
	[ "$(total_rate)" = 1000 ]

	# A SIGHUP sent anyway (kill -HUP, as before the unit checked): the
	# daemon refuses the file and says so, in its log and its metrics.
	hup 1
	grep -q "^shedd: reload refused, the running configuration stays: $CONF:8: key 'rate' is given twice" \
		"$TESTBED_TMP/shedd.log"
	[ "$(reloads_metric refused)" = 1 ]
	[ "$(reloads_metric ok)" = 0 ]
	[ "$(last_reload_ok)" = 0 ]
	[ "$(total_rate)" = 1000 ]

	# A good file: the unit's reload succeeds and the daemon applies it.
	conf 2000 "$PORT" 198.19.9.0/24=critical 0.2
	run unit_reload
	echo "$output"
	[ "$status" -eq 0 ]
	wait_for "reload 2" 5 sh -c "grep -q '^shedd: reloaded ' '$TESTBED_TMP/shedd.log'"
	[ "$(prefixes)" = '["198.19.9.0/24=1"]' ]
	[ "$(reloads_metric ok)" = 1 ]
	[ "$(reloads_metric refused)" = 1 ]
	[ "$(last_reload_ok)" = 1 ]
}

@test "a reload with more prefixes than the trie holds is refused by the limit's name; the old prefixes stay" {
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF"
	# 16385 distinct IPv4 host prefixes of 198.18.0.0/15.
	{
		cat "$CONF"
		printf '[class.critical]\n'
		host_prefixes 0 16385
	} >"$CONF.new"
	mv "$CONF.new" "$CONF"
	run unit_reload
	echo "$output" | tail -2
	[ "$status" -eq 2 ]
	[[ "$output" == *"--prefix: 16386 IPv4 prefixes; the IPv4 trie holds at most 16384 (MAX_PREFIXES)"* ]]
	hup 1
	grep -q "^shedd: reload refused, the running configuration stays: $CONF:.*: --prefix: 16386 IPv4 prefixes; the IPv4 trie holds at most 16384 (MAX_PREFIXES)" \
		"$TESTBED_TMP/shedd.log"
	[ "$(prefixes)" = '["198.19.1.0/24=0"]' ]
	[ "$(last_reload_ok)" = 0 ]
	run kill -0 "$SHEDD_PID"
	[ "$status" -eq 0 ]
}

@test "a reload that replaces a long prefix list with another, each within the trie, is applied" {
	# 10 000 IPv4 host prefixes, then 10 000 others: 20 000 together,
	# more than the trie's 16 384, though each list fits.
	big_conf() {
		{
			printf '[shedd]\nport = %s\nrate = 1000\n[verify]\nverify = off\n' "$PORT"
			printf '[controller]\ncontroller = off\n[class.critical]\n'
			host_prefixes "$1" 10000
		} >"$CONF.new"
		mv "$CONF.new" "$CONF"
	}
	# v4_span: how many IPv4 prefixes the trie holds, the lowest and the
	# highest address, as numbers.
	v4_span() {
		bpftool map dump pinned "$PIN_DIR/prefix_v4" |
			jq -c '[.[].key.addr | .[0] * 16777216 + .[1] * 65536 + .[2] * 256 + .[3]] |
				[length, min, max]'
	}
	ip4() { echo $(( (198 << 24) + ((18 + $1 / 65536) << 16) + (($1 / 256 % 256) << 8) + $1 % 256 )); }
	big_conf 0
	shedd_start --config "$CONF"
	[ "$(v4_span)" = "[10000,$(ip4 0),$(ip4 9999)]" ]
	big_conf 10000
	run unit_reload
	[ "$status" -eq 0 ]
	hup 1
	grep -q "^shedd: reloaded $CONF: limit 1000 SYN/s, 1 port(s), 10000 prefix(es); changed: prefix" \
		"$TESTBED_TMP/shedd.log"
	# The new list, whole, and nothing of the old.
	[ "$(v4_span)" = "[10000,$(ip4 10000),$(ip4 19999)]" ]
	[ "$(last_reload_ok)" = 1 ]
}

@test "options fixed for the daemon's life are reported as needing a restart and keep their value" {
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF"
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1 "tick_ms = 50
xdp_mode = generic
latency_socket = /run/shedd-reload-test.sock"
	hup 1
	grep -q "^shedd: reload: latency-socket, xdp-mode, tick-ms: needs a restart; the running value stays" \
		"$TESTBED_TMP/shedd.log"
	# Still the native attachment (xdp, not xdpgeneric) and no new socket.
	in_srv ip -d link show dev "$IF_SRV" | grep -q 'prog/xdp '
	[ ! -e /run/shedd-reload-test.sock ]
	# The command line wins over the file, at start and at a reload.
	shedd_pid=$SHEDD_PID
	kill "$shedd_pid"
	wait "$shedd_pid" || true
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF" --rate 700
	wait_for "rate 700" 3 sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/rates' |
		jq '[.[].value.r.rate_per_sec] | add')\" = 700 ]"
	conf 1500 "$PORT" 198.19.1.0/24=critical_plus 0.1
	hup 2
	# The file's new rate is the command line's: nothing to apply.
	grep -q "^shedd: reload: $CONF: the configuration is unchanged; nothing to do$" \
		"$TESTBED_TMP/shedd.log"
	wait_ticks 3
	[ "$(total_rate)" = 700 ]
}

@test "without --config, SIGHUP says there is nothing to reload and shedd runs on" {
	shedd_start --verify off --port "$PORT" --rate 1000
	kill -HUP "$SHEDD_PID"
	wait_for "the SIGHUP line" 3 grep -q 'SIGHUP: shedd runs without --config, nothing to reload' \
		"$TESTBED_TMP/shedd.log"
	wait_ticks 3
	kill -0 "$SHEDD_PID"
	[ "$(total_rate)" = 1000 ]
}

# admitted_all: SYNs admitted by XDP, every class.
admitted_all() { echo $(( $(stat_sum admitted 0) + $(stat_sum admitted 1) + $(stat_sum admitted 2) + $(stat_sum admitted 3) )); }
# dropped_established: segments of connections (not SYNs) that shedd dropped.
dropped_established() {
	bpftool map dump pinned "$PIN_DIR/stats" | jq '[.[0].values[].value |
		.frag_refused + .deep_refused + .ack_queue_full + .ack_after_rst +
		([.cls[].ack_invalid] | add)] | add'
}
retransmits() { in_cli nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ {print $2}'; }

@test "reloads under load: an established stream loses nothing, shedding has no gap" {
	local n=20 limit=1000 burst=100 secs=6 flood_rate=5000
	# The stream runs to a protected port, which the reloads rewrite.
	conf "$limit" "$PORT,8081" 198.19.1.0/24=critical_plus 0.1
	shedd_start --config "$CONF"
	ip netns exec "$NS_SRV" "$TCPSTREAM" serve --addr "$SRV_IP" --port 8081 --duration 30 \
		>"$BATS_TEST_TMPDIR/recv" 2>&1 &
	recv_pid=$!
	PIDS+=("$recv_pid")
	wait_listening "stream listener" 8081
	ip netns exec "$NS_CLI" "$TCPSTREAM" send --addr "$SRV_IP" --port 8081 --duration "$((secs + 3))" \
		>"$BATS_TEST_TMPDIR/sent" 2>/dev/null &
	send_pid=$!
	PIDS+=("$send_pid")
	# Two seconds of the stream alone: the veth's own retransmits.
	sleep 0.5
	retrans0=$(retransmits)
	sleep 2
	retrans1=$(retransmits)
	admitted0=$(admitted_all)
	dropped0=$(dropped_established)
	non_syn0=$(stat_sum non_syn)
	unprotected0=$(stat_sum unprotected)
	flood_bg "$BATS_TEST_TMPDIR/flood" 198.19.128.0/17 "$flood_rate" "$secs"
	start=$(date +%s%N)
	# Each reload rewrites ports and prefixes (one added, then removed).
	for ((i = 1; i <= n; i++)); do
		if ((i % 2)); then
			conf "$limit" "$PORT,8081,9090" "198.19.1.0/24=critical_plus
prefix = 198.19.77.0/24=critical" 0.1
		else
			conf "$limit" "$PORT,8081" 198.19.1.0/24=critical_plus 0.1
		fi
		hup "$i"
		sleep 0.2
	done
	reload_ms=$(( ($(date +%s%N) - start) / 1000000 ))
	wait "$FLOOD_PID"
	retrans2=$(retransmits)
	admitted=$(( $(admitted_all) - admitted0 ))
	dropped=$(( $(dropped_established) - dropped0 ))
	non_syn=$(( $(stat_sum non_syn) - non_syn0 ))
	unprotected=$(( $(stat_sum unprotected) - unprotected0 ))
	wait "$send_pid"
	wait "$recv_pid"
	sent=$(field sent "$(cat "$BATS_TEST_TMPDIR/sent")")
	received=$(field received "$(cat "$BATS_TEST_TMPDIR/recv")")
	min_per_sec=$(field min_per_sec "$(cat "$BATS_TEST_TMPDIR/sent")")
	flood_line=$(cat "$BATS_TEST_TMPDIR/flood")
	echo "# reloads: $(reloads) in ${reload_ms} ms during a ${secs} s flood of ${flood_rate}/s at a limit of ${limit}/s (burst ${burst})" >&3
	echo "# stream: sent=$sent received=$received lost=$(( sent - received )) bytes, slowest second ${min_per_sec} bytes" >&3
	echo "# stream segments through XDP during the reloads: $non_syn passed, $dropped dropped by shedd" >&3
	echo "# TCP retransmits of the stream: $(( (retrans1 - retrans0) / 2 ))/s alone, $(( (retrans2 - retrans1) / secs ))/s during the flood and the reloads (none is a segment shedd dropped: see the line above)" >&3
	echo "# flood: $flood_line; admitted by XDP $admitted, bound $(( limit * secs + burst ))" >&3
	echo "# SYNs to a port not protected at that moment, during the reloads: $unprotected" >&3
	# No gap: the flood's port was protected at every moment (a SYN
	# that found it unprotected would pass unjudged, counted here), and
	# nothing else sends a SYN in this testbed.
	[ "$unprotected" -eq 0 ]
	[ "$(reloads)" -eq "$n" ]
	run grep -c 'reload refused' "$TESTBED_TMP/shedd.log"
	[ "$output" = 0 ]
	[ "$sent" -gt 0 ]
	[ "$received" -eq "$sent" ]
	[ "$min_per_sec" -gt 0 ]
	[ "$non_syn" -gt 10000 ]
	[ "$dropped" -eq 0 ]
	# No gap: the flood was shed all along, never above limit + burst.
	within "$admitted" $(( limit * secs * 8 / 10 )) $(( limit * secs + burst ))
	within "$(field synack "$flood_line")" $(( limit * secs * 8 / 10 )) $(( limit * secs + burst ))
}

@test "an invalid file at start: exit 2 with file, line and problem, nothing attached" {
	conf 1000 "$PORT" 198.19.1.0/24=critical_plus 0.1 "rat = 5"
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --config "$CONF"
	echo "$output"
	[ "$status" -eq 2 ]
	[ "$output" = "shedd: $CONF:8: unknown key 'rat' in [shedd]" ]
	[ ! -e "$PIN_DIR" ]
	run xdp_attached
	[ "$status" -ne 0 ]
}
