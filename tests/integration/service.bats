#!/usr/bin/env bats
# service.bats - shedd under a service manager: the sd_notify protocol
# (against a listener of the test's own), journald levels, the status
# interval, exit codes, the capabilities of the running daemon (as root and
# as a user with only the capabilities it documents), the modes of what it
# creates, `make install`, the systemd unit and the man page.

load lib

setup() {
	testbed_up
	listener_start
	NOTIFY_OUT=$BATS_TEST_TMPDIR/notify.out
	: >"$NOTIFY_OUT"
}

teardown() {
	testbed_down
	[ -z "${CONF_DIR:-}" ] || rm -rf "$CONF_DIR"
	# A pin folder made for a daemon that ran as another user.
	if [ -n "${USER_PIN_PARENT:-}" ]; then
		rm -rf "$USER_PIN_PARENT"
		rmdir /sys/fs/bpf/shedd 2>/dev/null || true
	fi
}

# notify_listen: a datagram socket that plays systemd's end of sd_notify;
# every message is a line of $NOTIFY_OUT. Ends by itself after 30 s.
notify_listen() {
	NOTIFY_SOCK=$BATS_TEST_TMPDIR/notify.sock
	python3 "$ROOT/tests/tools/notifylisten.py" "$NOTIFY_SOCK" "$NOTIFY_OUT" 30 &
	PIDS+=($!)
	wait_for "the notify socket" 5 test -S "$NOTIFY_SOCK"
}

# status_lines: how many status lines shedd logged.
status_lines() {
	grep -c ' | critical_plus ' "$TESTBED_TMP/shedd.log" || true
}

# stop_shedd: SIGTERM, and the exit status in $SHEDD_STATUS.
stop_shedd() {
	kill -TERM "$SHEDD_PID"
	SHEDD_STATUS=0
	wait "$SHEDD_PID" || SHEDD_STATUS=$?
}

# pins_gone: the program is detached and its pin folder removed.
pins_gone() {
	if xdp_attached; then
		echo "XDP is still attached to $IF_SRV" >&2
		return 1
	fi
	if [ -e "$PIN_DIR" ]; then
		echo "left in $PIN_DIR:" $(ls -A "$PIN_DIR") >&2
		return 1
	fi
}

@test "sd_notify: READY once attached and ticking, STATUS each second, WATCHDOG at half the interval, STOPPING last" {
	notify_listen
	NOTIFY_SOCKET=$NOTIFY_SOCK WATCHDOG_USEC=400000 \
		shedd_start --verify off --port "$PORT" --rate 100 --status-interval 0
	wait_for READY=1 5 grep -q READY=1 "$NOTIFY_OUT"
	sleep 2.5
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	wait_for STOPPING=1 5 grep -q STOPPING=1 "$NOTIFY_OUT"
	cat "$NOTIFY_OUT"
	# The first message: ready, with a status and the daemon's pid.
	run sed -n 1p "$NOTIFY_OUT"
	[[ "$output" == *READY=1* && "$output" == *STATUS=* && "$output" == *"MAINPID=$SHEDD_PID"* ]]
	[ "$(grep -c READY=1 "$NOTIFY_OUT")" -eq 1 ]
	# The last: stopping.
	run tail -n 1 "$NOTIFY_OUT"
	[[ "$output" == *STOPPING=1* ]]
	# The status line's short form, though the line is not logged
	# (--status-interval 0), is the service's STATUS once a second.
	[ "$(status_lines)" -eq 0 ]
	within "$(grep -cE 'STATUS=mode=fixed limit=100/s offered=[0-9]+/s admitted=[0-9]+/s shed=[0-9]+/s$' \
		"$NOTIFY_OUT")" 2 4
	# WATCHDOG=1 every 200 ms (half of 400 ms) on the 100 ms ticks: every
	# gap between two of them is 200 or 300 ms, and none is missing.
	run awk '/WATCHDOG=1/ { if (last) { gap = int(($1 - last) * 1000 + 0.5); print gap }
		last = $1 }' "$NOTIFY_OUT"
	echo "watchdog gaps (ms): $output"
	within "${#lines[@]}" 8 14
	for gap in "${lines[@]}"; do
		within "$gap" 150 350
	done
}

@test "without WATCHDOG_USEC no WATCHDOG=1 is sent" {
	notify_listen
	NOTIFY_SOCKET=$NOTIFY_SOCK shedd_start --verify off --port "$PORT" --rate 100
	wait_for READY=1 5 grep -q READY=1 "$NOTIFY_OUT"
	sleep 1.2
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	wait_for STOPPING=1 5 grep -q STOPPING=1 "$NOTIFY_OUT"
	run grep -c WATCHDOG=1 "$NOTIFY_OUT"
	[ "$output" -eq 0 ]
}

@test "when stderr is the journal, every line carries its level" {
	local log=$TESTBED_TMP/shedd.log
	: >"$log"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$log") \
		shedd_start --verify off --port "$PORT" --rate 100 --status-interval 300ms
	sleep 1
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	cat "$log"
	# Not one line without a level, not one in the plain form.
	run grep -cv '^<[0-7]>' "$log"
	[ "$output" -eq 0 ]
	grep -q "^<5>attached to $IF_SRV " "$log"
	grep -q "^<6>$IF_SRV: mode=fixed .* | critical_plus " "$log"
	run grep -c '^<[0-7]>shedd' "$log"
	[ "$output" -eq 0 ]
}

@test "a JOURNAL_STREAM that is not stderr leaves the plain lines" {
	JOURNAL_STREAM=1:2 shedd_start --verify off --port "$PORT" --rate 100
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	grep -q "^shedd: attached to $IF_SRV " "$TESTBED_TMP/shedd.log"
	run grep -c '^<[0-7]>' "$TESTBED_TMP/shedd.log"
	[ "$output" -eq 0 ]
}

@test "--status-interval sets the pace of the status line" {
	shedd_start --verify off --port "$PORT" --rate 100 --status-interval 250ms
	sleep 2
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	within "$(status_lines)" 6 9
}

@test "exit codes: usage 2, environment 3, nothing to remove 0" {
	run "$SHEDD" --iface "$IF_SRV" --rate lots
	[ "$status" -eq 2 ]
	[[ "$output" == *"--rate"* ]]
	run "$SHEDD" --bogus
	[ "$status" -eq 2 ]
	# An interface that is not there.
	run "$SHEDD" --netns "$NS_SRV" --iface shdnone0
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"interface shdnone0"* ]]
	# A network namespace that is not there.
	run "$SHEDD" --netns "shd-none-$TESTBED_ID" --iface "$IF_SRV"
	[ "$status" -eq 3 ]
	# No capabilities.
	run nsenter --net="/run/netns/$NS_SRV" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups --inh-caps=-all --bounding-set=-all "$SHEDD" --iface "$IF_SRV"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"needs CAP_BPF and CAP_NET_ADMIN"* ]]
	# Another shedd owns the interface.
	shedd_start --verify off --port "$PORT" --rate 100
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --rate 100
	[ "$status" -eq 3 ]
	[[ "$output" == *"another shedd is running"* ]]
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	# Nothing to remove: said, and a success.
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing to remove"* ]]
}

# handoff_pick: HANDOFF, the tc hand-off where the kernel has it (its
# detach at the stop is part of what the kept capabilities must allow), the
# kernel hand-off where it does not (6.0-6.8), so those kernels test the
# rest.
handoff_pick() {
	HANDOFF=(--handoff kernel)
	if has_tc_handoff; then
		HANDOFF=(--handoff tc)
	fi
}

# tc_handoff_attached: the tc hand-off is on the server's ingress, where
# HANDOFF asked for it.
tc_handoff_attached() {
	if [ "${HANDOFF[1]}" = tc ]; then
		in_srv tc filter show dev "$IF_SRV" ingress | grep -q shedd_handoff
	fi
}

@test "after attach the daemon holds CAP_BPF and CAP_NET_ADMIN only, and still stops cleanly" {
	handoff_pick
	shedd_start --port "$PORT" --rate 100 "${HANDOFF[@]}"
	# The drop follows the attach line: wait for a tick.
	wait_for "a status line" 5 sh -c "grep -q ' | critical_plus ' '$TESTBED_TMP/shedd.log'"
	run getpcaps "$SHEDD_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *": cap_net_admin,cap_bpf=ep" ]]
	# Every other thread (the latency socket's) holds none.
	local t n=0
	for t in /proc/"$SHEDD_PID"/task/*; do
		[ "${t##*/}" != "$SHEDD_PID" ] || continue
		grep -q '^CapEff:[[:space:]]*0000000000000000$' "$t/status"
		grep -q '^CapPrm:[[:space:]]*0000000000000000$' "$t/status"
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
	grep -q '^CapInh:[[:space:]]*0000000000000000$' "/proc/$SHEDD_PID/status"
	grep -q '^CapAmb:[[:space:]]*0000000000000000$' "/proc/$SHEDD_PID/status"
	# The stop needs what was kept: XDP and the tc hand-off detached.
	tc_handoff_attached
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	pins_gone
	run in_srv tc filter show dev "$IF_SRV" ingress
	[[ "$output" != *shedd_handoff* ]]
	run grep -E 'Operation not permitted|could not drop' "$TESTBED_TMP/shedd.log"
	[ "$status" -eq 1 ]
}

@test "as user nobody with CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON (+ CAP_DAC_READ_SEARCH): attaches, sheds, exits cleanly" {
	local caps=+bpf,+net_admin,+perfmon,+dac_read_search run_dir=$BATS_TEST_TMPDIR/run
	# A pin folder the user owns (/sys/fs/bpf is root's, mode 1700), and a
	# folder for the latency socket.
	USER_PIN_PARENT=$(dirname "$PIN_DIR")
	mkdir -p "$USER_PIN_PARENT"
	chown nobody "$USER_PIN_PARENT"
	mkdir -p "$run_dir"
	chown nobody "$run_dir"
	chmod 755 "$BATS_TEST_TMPDIR"
	nsenter --net="/run/netns/$NS_SRV" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all,$caps --ambient-caps=-all,$caps --bounding-set=-all,$caps \
		"$SHEDD" --iface "$IF_SRV" --verify off --port "$PORT" --rate 50 --burst 5 \
		--latency-socket "$run_dir/lat.sock" 2>>"$TESTBED_TMP/shedd.log" &
	SHEDD_PID=$!
	PIDS+=("$SHEDD_PID")
	wait_for "shedd attached" 5 grep -q 'attached to' "$TESTBED_TMP/shedd.log"
	wait_for "a status line" 5 sh -c "grep -q ' | critical_plus ' '$TESTBED_TMP/shedd.log'"
	[ "$(ps -o user= -p "$SHEDD_PID")" = nobody ]
	run getpcaps "$SHEDD_PID"
	echo "$output"
	[[ "$output" == *": cap_net_admin,cap_bpf=ep" ]]
	# It sheds: 500 SYNs in a second against 50/s.
	flood 198.19.0.0/16 500 1
	[ "$(stat_sum dropped 3)" -ge 300 ]
	[ "$(stat_sum admitted 3)" -le 120 ]
	# Sojourn probes attached (tracefs reached at start).
	run grep 'sojourn probes unavailable' "$TESTBED_TMP/shedd.log"
	[ "$status" -eq 1 ]
	stop_shedd
	cat "$TESTBED_TMP/shedd.log" | grep -v ' | critical_plus '
	[ "$SHEDD_STATUS" -eq 0 ]
	pins_gone
}

# ids_of PID: the Uid, Gid and Groups lines of every thread of PID, each
# with its values only.
ids_of() {
	local t
	for t in /proc/"$1"/task/*; do
		awk '/^(Uid|Gid|Groups):/ { $1 = $1; print }' "$t/status"
	done | sort | uniq -c
}

@test "--user nobody: once attached every thread is nobody's, the main one with CAP_BPF and CAP_NET_ADMIN; it sheds, reloads, takes samples, serves metrics and stops cleanly" {
	# A folder nobody can reach, as /etc/shedd is (the test's own is not).
	CONF_DIR=$(mktemp -d /tmp/shedd-user-conf.XXXXXX)
	chmod 755 "$CONF_DIR"
	local conf=$CONF_DIR/shedd.conf
	printf '[shedd]\nrate = 50\nburst = 5\nprefix = 198.19.1.0/24=critical_plus\n' >"$conf"
	chmod 644 "$conf"
	handoff_pick
	shedd_start --port "$PORT" "${HANDOFF[@]}" --user nobody --config "$conf"
	wait_for "a status line" 5 sh -c "grep -q ' | critical_plus ' '$TESTBED_TMP/shedd.log'"
	grep -q '^shedd: running as user nobody (uid 65534, gid 65534) with CAP_BPF and CAP_NET_ADMIN$' \
		"$TESTBED_TMP/shedd.log"
	run ids_of "$SHEDD_PID"
	echo "$output"
	local n
	n=$(ls /proc/"$SHEDD_PID"/task | wc -l)
	[ "$n" -ge 2 ]
	[[ "$output" == *"$n Uid: 65534 65534 65534 65534"* ]]
	[[ "$output" == *"$n Gid: 65534 65534 65534 65534"* ]]
	[[ "$output" == *"$n Groups:"* ]]
	[ "${#lines[@]}" -eq 3 ]
	run getpcaps "$SHEDD_PID"
	echo "$output"
	[[ "$output" == *": cap_net_admin,cap_bpf=ep" ]]
	local t
	for t in /proc/"$SHEDD_PID"/task/*; do
		[ "${t##*/}" != "$SHEDD_PID" ] || continue
		grep -q '^CapEff:[[:space:]]*0000000000000000$' "$t/status"
		grep -q '^CapPrm:[[:space:]]*0000000000000000$' "$t/status"
	done
	# It sheds (bpf() on its maps): 500 SYNs of critical_plus in a second
	# against 50/s, dropped or (the testbed does not forward: the source
	# check cannot run, and the top classes verify while shedding)
	# answered with cookies.
	flood 198.19.1.0/24 500 1
	[ $(($(stat_sum dropped 0) + $(stat_sum cookie_sent 0))) -ge 300 ]
	# The latency socket takes a sample.
	in_srv logger --socket-errors=on -u "$LATENCY_SOCK" -d "shedd rt=0.250 st=200"
	wait_for "a latency sample" 5 sh -c "grep -q 'latency_n=[1-9]' '$TESTBED_TMP/shedd.log'"
	# The metrics endpoint answers.
	in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics >"$BATS_TEST_TMPDIR/m.txt"
	grep -q '^shedd_build_info{' "$BATS_TEST_TMPDIR/m.txt"
	# SIGHUP reads the file as nobody: a new rate reaches the pinned map.
	sed -i 's/^rate = 50$/rate = 80/' "$conf"
	kill -HUP "$SHEDD_PID"
	wait_for "reloaded" 5 grep -q "^shedd: reload" "$TESTBED_TMP/shedd.log"
	grep "^shedd: reload" "$TESTBED_TMP/shedd.log"
	wait_for "rate 80" 3 sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/rates' |
		jq '[.[].value.r.rate_per_sec] | add')\" = 80 ]"
	# A file nobody cannot read: the reload is refused, shedd runs on.
	chmod 600 "$conf"
	kill -HUP "$SHEDD_PID"
	wait_for "refused" 5 grep -q "^shedd: reload refused, the running configuration stays: .*$conf.*Permission denied" \
		"$TESTBED_TMP/shedd.log"
	kill -0 "$SHEDD_PID"
	# The stop: XDP and the tc hand-off detached, pins and socket gone.
	tc_handoff_attached
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	pins_gone
	# The namespace's pin folder too, reached from the pin folder.
	[ ! -e "$(dirname "$PIN_DIR")" ]
	run in_srv tc filter show dev "$IF_SRV" ingress
	[[ "$output" != *shedd_handoff* ]]
	[ ! -e "$LATENCY_SOCK" ]
	run grep -E 'Operation not permitted|Permission denied|could not' "$TESTBED_TMP/shedd.log"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ] # the refused reload's line only
}

@test "--user nobody: a restarted shedd adopts the one that ran as nobody, and runs as nobody" {
	shedd_start --verify off --port "$PORT" --rate 100 --user nobody --keep-on-exit
	wait_for "a status line" 5 sh -c "grep -q ' | critical_plus ' '$TESTBED_TMP/shedd.log'"
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	xdp_attached
	[ "$(stat -c '%U %G %a' "$PIN_DIR")" = "root nogroup 770" ]
	shedd_start --verify off --port "$PORT" --rate 100 --user nobody
	grep -q "adopted the running shedd on $IF_SRV" "$TESTBED_TMP/shedd.log"
	wait_for "running as nobody" 5 sh -c "[ \$(grep -c '^shedd: running as user nobody' '$TESTBED_TMP/shedd.log') -eq 2 ]"
	[ "$(ps -o user= -p "$SHEDD_PID")" = nobody ]
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
	pins_gone
}

@test "--user without CAP_SETUID, CAP_SETGID and CAP_CHOWN is refused before attach; an unknown user is a usage error" {
	local caps=+bpf,+net_admin,+perfmon
	run nsenter --net="/run/netns/$NS_SRV" setpriv --inh-caps=-all,$caps \
		--ambient-caps=-all,$caps --bounding-set=-all,$caps \
		"$SHEDD" --iface "$IF_SRV" --verify off --port "$PORT" --rate 100 --user nobody
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"--user nobody needs CAP_SETUID, CAP_SETGID and CAP_CHOWN"* ]]
	if xdp_attached; then echo "XDP attached after a refused start"; return 1; fi
	[ ! -e "$PIN_DIR" ]
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --user shedd-no-such-user
	[ "$status" -eq 2 ]
	[[ "$output" == *"--user: no user 'shedd-no-such-user'"* ]]
}

@test "modes: pin folder 0700, pins 0600, latency socket 0660 in its group" {
	shedd_start --verify off --port "$PORT" --rate 100 --latency-group nogroup
	[ "$(stat -c %a "$PIN_DIR")" = 700 ]
	[ "$(stat -c %a "$(dirname "$PIN_DIR")")" = 700 ]
	run sh -c "find '$PIN_DIR' -mindepth 1 ! -perm 0600"
	[ -z "$output" ]
	[ -n "$(find "$PIN_DIR" -mindepth 1 -perm 0600)" ]
	[ "$(stat -c '%a %G' "$LATENCY_SOCK")" = "660 nogroup" ]
	stop_shedd
	[ "$SHEDD_STATUS" -eq 0 ]
}

@test "--netns enters with setns(CLONE_NEWNET) only: what the unit's RestrictNamespaces=net allows" {
	# systemd's RestrictNamespaces=net lets setns() through with the type
	# CLONE_NEWNET alone (type 0 and every other type are refused), and
	# unshare()/clone() with no CLONE_NEW* flag but CLONE_NEWNET.
	local trace=$BATS_TEST_TMPDIR/strace.out
	run timeout -s TERM 3 strace -f -qq -e trace=setns,unshare,clone,clone3 -o "$trace" \
		"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --verify off --port "$PORT" --rate 100
	echo "$output"
	[ "$status" -eq 124 ] # ran until the timeout's SIGTERM
	[[ "$output" == *"attached to $IF_SRV"* ]]
	run grep -E ' (setns|unshare|clone|clone3)\(' "$trace"
	echo "$output"
	[ "$(grep -c ' setns(.*, CLONE_NEWNET) *= 0$' "$trace")" -ge 1 ]
	[ "$(grep -c ' setns(' "$trace")" -eq "$(grep -c ' setns(.*, CLONE_NEWNET)' "$trace")" ]
	run grep -E ' unshare\(|CLONE_NEW(NS|UTS|IPC|USER|PID|CGROUP|TIME)|clone3?\(.*CLONE_NEWNET' "$trace"
	[ "$status" -eq 1 ]
}

@test "make install: files and modes under DESTDIR; the installed unit passes systemd-analyze verify" {
	local root=$BATS_TEST_TMPDIR/root
	run make -C "$ROOT" --no-print-directory install DESTDIR="$root" PREFIX=/usr
	echo "$output"
	[ "$status" -eq 0 ]
	run sh -c "cd '$root' && find . -type f -printf '%m %p\n' | sort -k2"
	echo "$output"
	[[ "$output" == *"755 ./usr/sbin/shedd"* ]]
	[[ "$output" == *"644 ./usr/share/man/man8/shedd.8"* ]]
	[[ "$output" == *"644 ./usr/include/shedd_latency.h"* ]]
	[[ "$output" == *"644 ./usr/lib/systemd/system/shedd@.service"* ]]
	[ -z "$(cd "$root" && find . -type f ! -perm 0644 ! -perm 0755)" ]
	# The unit runs the installed binary, with --keep-on-exit.
	grep -q "^ExecStart=/usr/sbin/shedd --iface %i --keep-on-exit " \
		"$root/usr/lib/systemd/system/shedd@.service"
	# systemd-analyze needs the binary where ExecStart says: a copy of the
	# unit that names the staged one.
	local unit_dir=$BATS_TEST_TMPDIR/units
	mkdir -p "$unit_dir"
	sed "s|/usr/sbin/shedd|$root/usr/sbin/shedd|" \
		"$root/usr/lib/systemd/system/shedd@.service" >"$unit_dir/shedd@.service"
	ln -s shedd@.service "$unit_dir/shedd@$IF_SRV.service"
	# --man=no: shedctl(8) comes with shedctl; shedd(8) is checked below.
	run systemd-analyze verify --man=no "$unit_dir/shedd@$IF_SRV.service"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# The capabilities the unit grants are those the man page documents.
	grep -q '^CapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN CAP_PERFMON CAP_SETUID CAP_SETGID CAP_CHOWN$' \
		"$unit_dir/shedd@.service"
	# --netns is a setns(CLONE_NEWNET): the sandbox allows that kind of
	# namespace and no other.
	grep -q '^RestrictNamespaces=net$' "$unit_dir/shedd@.service"
	[ "$(grep -c '^RestrictNamespaces=' "$unit_dir/shedd@.service")" -eq 1 ]
	# The user the daemon becomes once attached, for systemd-sysusers.
	[ "$(stat -c %a "$root/usr/lib/sysusers.d/shedd.conf")" = 644 ]
	run systemd-sysusers --root="$BATS_TEST_TMPDIR/sysroot" --dry-run "$root/usr/lib/sysusers.d/shedd.conf"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Creating user 'shedd'"* ]]
	grep -q '^Type=notify$' "$unit_dir/shedd@.service"
}

@test "shedd(8) names every option of shedd --help and no other, and renders without warnings" {
	run "$ROOT/tests/mancheck.sh" "$SHEDD" "$ROOT/man/shedd.8"
	echo "$output"
	[ "$status" -eq 0 ]
}
