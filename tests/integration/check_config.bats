#!/usr/bin/env bats
# check_config.bats - shedd --check-config: the command line and the config
# file are checked as a start checks them (exit 2 and the same message, or
# exit 0), and nothing is loaded, attached, pinned or locked; the systemd
# unit runs it before a start and before a reload.

load lib

setup() {
	testbed_up
	CONF=$BATS_TEST_TMPDIR/shedd.conf
}
teardown() {
	testbed_down
	[ -z "${CONF_DIR:-}" ] || rm -rf "$CONF_DIR"
}

# conf LINES...: the config file, one line an argument, after [shedd].
conf() {
	printf '[shedd]\n' >"$CONF"
	printf '%s\n' "$@" >>"$CONF"
}

# check ARGS...: shedd --check-config on the testbed's interface.
check() {
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --config "$CONF" "$@" --check-config
	echo "check: status $status: $output"
}

# start ARGS...: a real start with the same arguments, in the foreground;
# a start that passes the checks is stopped after 3 s.
start() {
	run timeout -s TERM 3 "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --config "$CONF" "$@"
	echo "start: status $status: $output"
}

nothing_loaded() {
	[ ! -e "$PIN_DIR" ] || { echo "pins: $(ls "$PIN_DIR")" >&2; return 1; }
	if xdp_attached; then
		echo "XDP is attached to $IF_SRV" >&2
		return 1
	fi
}

@test "a good configuration: exit 0, says so, loads and attaches nothing" {
	conf "port = $PORT" "rate = 500" "prefix = 198.18.0.0/24=critical_plus" \
		"prefix = 2001:db8:1::/48=critical" "[class.sheddable]" "reject = rst"
	check --verify off
	[ "$status" -eq 0 ]
	[ "$output" = "shedd: $CONF: the configuration is good: iface $IF_SRV, 1 port(s), fixed at 500 SYN/s, 1 IPv4 and 1 IPv6 prefix(es)" ]
	nothing_loaded
	# The same without a file: the command line alone.
	run "$SHEDD" --iface "$IF_SRV" --port 80,443 --check-config
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"the configuration is good: iface $IF_SRV, 2 port(s), aimd from 10000000 SYN/s"* ]]
	nothing_loaded
}

@test "each error a start refuses before loading: exit 2 and the start's own message, nothing loaded" {
	local -a cases=(
		"rat = 5"
		"prefix = 198.18.0.1/24=critical"
		"prefix = 198.18.0.0/24=vip"
		"floor = critical=0.7|floor = sheddable=0.7"
		"rate = 0"
		"[class.vip]|floor = 0.2"
		"[class.critical]|reject = maybe"
		"latency_group = shedd-no-such-group"
		"metrics_addr = 127.0.0.1:99999"
		"backend_port = 9000"
	)
	local c
	for c in "${cases[@]}"; do
		IFS='|' read -r -a lines <<<"$c"
		conf "${lines[@]}"
		check
		[ "$status" -eq 2 ]
		[[ "$output" == "shedd: "* ]]
		checked=$output
		start
		[ "$status" -eq 2 ]
		[ "$output" = "$checked" ]
		nothing_loaded
	done
}

@test "more prefixes than a family's trie holds: refused by name of the limit" {
	# 16385 distinct IPv4 host prefixes of 198.18.0.0/15.
	awk 'BEGIN { print "[shedd]"; for (i = 0; i < 16385; i++)
		printf "prefix = 198.%d.%d.%d/32=critical\n", 18 + int(i / 65536), int(i / 256) % 256, i % 256 }' >"$CONF"
	check
	[ "$status" -eq 2 ]
	[ "$output" = "shedd: $CONF:16386: --prefix: 16385 IPv4 prefixes; the IPv4 trie holds at most 16384 (MAX_PREFIXES)" ]
	nothing_loaded
	# One fewer fits.
	sed -i '$d' "$CONF"
	check
	[ "$status" -eq 0 ]
	[[ "$output" == *"16384 IPv4 and 0 IPv6 prefix(es)" ]]
}

@test "while a shedd runs on the interface: no lock needed, the running one untouched" {
	listener_start
	conf "port = $PORT" "rate = 1000" "[verify]" "verify = off"
	shedd_start --config "$CONF"
	prog=$(in_srv ip -j link show dev "$IF_SRV" | jq '.[0].xdp.prog.id')
	check
	[ "$status" -eq 0 ]
	conf "port = $PORT" "rate = 10x"
	check
	[ "$status" -eq 2 ]
	[ "$output" = "shedd: $CONF:3: rate: '10x' is not a whole number" ]
	run kill -0 "$SHEDD_PID"
	[ "$status" -eq 0 ]
	[ "$(in_srv ip -j link show dev "$IF_SRV" | jq '.[0].xdp.prog.id')" = "$prog" ]
	run grep -c 'another shedd\|reload' "$TESTBED_TMP/shedd.log"
	[ "$output" = 0 ]
}

@test "a file the daemon's user cannot read is refused: every reload would be" {
	# A folder the user can enter (the test's own is root's, 0700).
	CONF_DIR=$(mktemp -d /tmp/shedd-check-conf.XXXXXX)
	chmod 755 "$CONF_DIR"
	CONF=$CONF_DIR/shedd.conf
	conf "port = $PORT" "rate = 1000"
	chmod 600 "$CONF"
	check --user nobody
	[ "$status" -eq 2 ]
	[ "$output" = "shedd: $CONF: the daemon reads it at a reload as user nobody, who cannot: Permission denied; every reload would be refused (make it readable by nobody: mode 0644, or 0640 in its group)" ]
	chmod 640 "$CONF"
	chgrp nogroup "$CONF"
	check --user nobody
	[ "$status" -eq 0 ]
	# As root the daemon reads what root can.
	chmod 600 "$CONF"
	check --user root
	[ "$status" -eq 0 ]
	nothing_loaded
}

@test "the unit checks the configuration before a start and before a reload" {
	local unit=$ROOT/contrib/systemd/shedd@.service
	run grep -c '^ExecStartPre=@SBINDIR@/shedd --iface %i --config /etc/shedd/%i.conf \$SHEDD_ARGS --check-config$' "$unit"
	[ "$output" = 1 ]
	# The check first, then the signal: a refused check stops the reload.
	run sed -n 's/^ExecReload=//p' "$unit"
	echo "$output"
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = '@SBINDIR@/shedd --iface %i --config /etc/shedd/%i.conf $SHEDD_ARGS --check-config' ]
	[ "${lines[1]}" = '/bin/kill -HUP $MAINPID' ]
}
