#!/usr/bin/env bats
# noprobes.bats - the loop without the accept-queue sojourn probes (no
# tracefs to attach them through, as in a container that gives shedd no
# CAP_SYS_ADMIN to mount it): the limit must be able to grow again after an
# overload, from the namespace's passive opens, and a spoofed flood must
# not grow it; where no measure of completed handshakes can be trusted,
# shedd runs at a fixed rate and says so. SIGHUP with an unchanged file
# changes nothing, also after a fallback to a fixed rate.

load lib

setup() { testbed_up; }
teardown() { testbed_down; }

BATS_TEST_TIMEOUT=150
METRICS_URL=http://127.0.0.1:9464/metrics

# shedd_noprobes [--no-sock-diag] ARGS...: shedd in the server's namespace,
# in a mount namespace of its own where tracefs is hidden under an empty
# tmpfs (and debugfs, where an older libbpf looks), with the capabilities a
# unit grants it and without CAP_SYS_ADMIN, so it cannot mount tracefs
# again: the sojourn probes do not attach. --no-sock-diag also refuses it
# sock_diag (tests/tools/nosockdiag.py). Waits until it has attached.
shedd_noprobes() {
	local log=$TESTBED_TMP/shedd.log seen=0 caps=+bpf,+net_admin,+perfmon,+dac_read_search
	local wrap=()
	if [ "${1:-}" = --no-sock-diag ]; then
		wrap=(python3 "$ROOT/tests/tools/nosockdiag.py")
		shift
	fi
	[ -f "$log" ] && seen=$(wc -l <"$log")
	nsenter --net="/run/netns/$NS_SRV" unshare -m sh -c '
		mount -t tmpfs none /sys/kernel/tracing || exit 1
		if [ -d /sys/kernel/debug ]; then mount -t tmpfs none /sys/kernel/debug || exit 1; fi
		exec "$@"' _ "${wrap[@]}" setpriv --inh-caps=-all,$caps --ambient-caps=-all,$caps \
		--bounding-set=-all,$caps "$SHEDD" --iface "$IF_SRV" "$@" 2>>"$log" &
	SHEDD_PID=$!
	PIDS+=("$SHEDD_PID")
	wait_for "shedd attached" 5 sh -c \
		"tail -n +$((seen + 1)) '$log' | grep -qE 'attached to|adopted'"
	# Only a test whose shedd really runs without the probes counts.
	tail -n +$((seen + 1)) "$log" | grep -q 'accept-queue sojourn probes unavailable'
}

# metric NAME{LABELS}: its value on the metrics endpoint.
metric() {
	in_srv curl -sS --fail --max-time 5 "$METRICS_URL" |
		awk -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }'
}

# limits_of FROM: the limits of the status lines after line FROM of the log.
limits_of() {
	tail -n +"$1" "$TESTBED_TMP/shedd.log" | grep ' | critical_plus ' |
		grep -o ' limit=[0-9]*' | cut -d= -f2
}

# max_of, min_of: of the numbers on stdin; fail on none.
max_of() { sort -n | awk 'END { if (!NR) exit 1; print }'; }
min_of() { sort -n | awk 'NR == 1 { print; found = 1 } END { exit !found }'; }

@test "without the probes the limit grows again after an overload, from passive opens, also after a restart; a spoofed flood does not grow it" {
	server_with_capacity 70
	slow_pid=$SLOW_PID
	shedd_noprobes --port "$PORT" --verify off --controller aimd --rate 600
	# The server sends no latency samples: overload is read from the
	# accept queue's depth and the listener's overflows (sock_diag).

	# A spoofed flood binds the limit; none of its SYNs completes: no
	# growth (the estimate counts opens, not SYNs).
	mark=$(($(wc -l <"$TESTBED_TMP/shedd.log") + 1))
	flood 198.19.128.0/17 3000 3 >"$TESTBED_TMP/flood"
	cat "$TESTBED_TMP/flood"
	limits=$(limits_of "$mark" | tr '\n' ' ')
	echo "limits under the spoofed flood: $limits"
	run max_of <<<"$(limits_of "$mark")"
	[ "$status" -eq 0 ]
	[ "$output" -le 600 ]

	# An overload episode cuts the limit; then 1.5 x C: the limit must
	# climb back to the capacity, not stay where the episode left it.
	load over "$OFFERED" 6 250
	mark=$(($(wc -l <"$TESTBED_TMP/shedd.log") + 1))
	load after $((CAPACITY * 3 / 2)) 10 250
	limits=$(limits_of "$mark" | tr '\n' ' ')
	echo "limits at 1.5 x C after the episode: $limits (capacity ${CAPACITY}/s)"
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | tail -n 3 | cut -c1-200
	run max_of <<<"$(limits_of "$mark" | tail -n 5)"
	[ "$status" -eq 0 ]
	[ "$output" -ge $((CAPACITY * 9 / 10)) ]

	# A restart adopts the limit and the controller's state; the limit
	# still grows after an episode.
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	shedd_noprobes --port "$PORT" --verify off
	load over2 "$OFFERED" 5 250
	mark=$(($(wc -l <"$TESTBED_TMP/shedd.log") + 1))
	load after2 $((CAPACITY * 3 / 2)) 10 250
	limits=$(limits_of "$mark" | tr '\n' ' ')
	echo "limits at 1.5 x C after a restart and an episode: $limits"
	run max_of <<<"$(limits_of "$mark" | tail -n 5)"
	[ "$status" -eq 0 ]
	[ "$output" -ge $((CAPACITY * 9 / 10)) ]
	kill -0 "$slow_pid"
	# Said at start, in the metrics and on the status line.
	grep -q 'no sojourn probes: completed handshakes are estimated from the network namespace.s TcpPassiveOpens' \
		"$TESTBED_TMP/shedd.log"
	run metric 'shedd_completion_source{iface="'"$IF_SRV"'",source="passive_opens"}'
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	[ "$(tail -n +"$mark" "$TESTBED_TMP/shedd.log" | grep -c ' completed=[0-9.]*/s ')" -ge 5 ]
}

@test "without the probes and with backend ports (passive opens not the protected ports' alone): a fixed rate, said on stderr and in the metrics" {
	slow_start --workers 4 --service-ms 10 --dist fixed --backlog 128 --duration 30
	shedd_noprobes --port "$PORT" --backend-port 8081 --verify off --controller aimd --rate 500
	# An overload does not move it (no ratchet, no open-loop climb).
	load over 1500 4 250
	cat "$TESTBED_TMP/over"
	limits=$(limits_of 1 | tr '\n' ' ')
	echo "limits: $limits"
	run min_of <<<"$(limits_of 1)"
	[ "$status" -eq 0 ]
	[ "$output" -eq 500 ]
	run max_of <<<"$(limits_of 1)"
	[ "$output" -eq 500 ]
	[ "$(grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | grep -vc ' mode=fixed ')" -eq 0 ]
	# Said at start and in the metrics.
	grep -q 'no measure of completed handshakes (no sojourn probes; TcpPassiveOpens would count the backend ports.* opens too): the aimd controller could only lower its limit; FALLING BACK to a fixed rate of 500 SYN/s' \
		"$TESTBED_TMP/shedd.log"
	run metric 'shedd_completion_source{iface="'"$IF_SRV"'",source="none"}'
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	run metric 'shedd_controller_mode{iface="'"$IF_SRV"'",mode="fixed"}'
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
}

@test "with the probes: completed handshakes come from them, no estimate" {
	shedd_start --port "$PORT" --verify off --controller aimd --rate 500
	run metric 'shedd_completion_source{iface="'"$IF_SRV"'",source="probes"}'
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	run metric 'shedd_completion_source{iface="'"$IF_SRV"'",source="passive_opens"}'
	[ "$output" = 0 ]
	run grep -E 'sojourn probes unavailable|no sojourn probes|FALLING BACK' "$TESTBED_TMP/shedd.log"
	[ "$status" -eq 1 ]
}

@test "SIGHUP with an unchanged file changes nothing, also at the fixed rate of the no-signal fallback; a changed rate applies" {
	local conf=$BATS_TEST_TMPDIR/shedd.conf blocked=$BATS_TEST_TMPDIR/not-a-socket
	printf '[shedd]\nport = %s\n\n[verify]\nverify = off\n' "$PORT" >"$conf"
	# A program that sheds at 300/s, left behind by a shedd that was killed.
	shedd_start --port "$PORT" --verify off --controller off --rate 300
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	# Adopted without --rate and without any delay signal (no probes, no
	# sock_diag, a file where the latency socket would be): the aimd
	# controller falls back to the rate it adopted.
	: >"$blocked"
	mark=$(($(wc -l <"$TESTBED_TMP/shedd.log") + 1))
	shedd_noprobes --no-sock-diag --config "$conf" --latency-socket "$blocked"
	grep -q 'no delay signal .*FALLING BACK to a fixed rate of 300 SYN/s' "$TESTBED_TMP/shedd.log"
	wait_for "a status line" 5 sh -c "tail -n +$mark '$TESTBED_TMP/shedd.log' | grep -q ' | critical_plus '"
	# The unchanged file: a no-op, said so; the limit stays.
	kill -HUP "$SHEDD_PID"
	wait_for "the reload line" 5 grep -qE '^shedd: reload(ed|:) ' "$TESTBED_TMP/shedd.log"
	grep -E '^shedd: reload(ed|:) ' "$TESTBED_TMP/shedd.log"
	mark=$(($(wc -l <"$TESTBED_TMP/shedd.log") + 1))
	wait_for "two status lines" 5 sh -c "[ \$(tail -n +$mark '$TESTBED_TMP/shedd.log' | grep -c ' | critical_plus ') -ge 2 ]"
	limits=$(limits_of "$mark" | tr '\n' ' ')
	echo "limits after the SIGHUP: $limits"
	run min_of <<<"$(limits_of "$mark")"
	[ "$status" -eq 0 ]
	[ "$output" -eq 300 ]
	run max_of <<<"$(limits_of "$mark")"
	[ "$output" -eq 300 ]
	[ "$(bpftool map dump pinned "$PIN_DIR/rates" | jq '[.[].value.r.rate_per_sec] | add')" = 300 ]
	grep -q "^shedd: reload: $conf: the configuration is unchanged; nothing to do$" "$TESTBED_TMP/shedd.log"
	# A file that changes the rate is applied: the new fixed rate.
	printf '[shedd]\nport = %s\nrate = 400\n\n[verify]\nverify = off\n' "$PORT" >"$conf.new"
	mv "$conf.new" "$conf"
	kill -HUP "$SHEDD_PID"
	wait_for "the second reload" 5 grep -q '^shedd: reloaded .*: limit 400 SYN/s' "$TESTBED_TMP/shedd.log"
	wait_for "rate 400" 3 sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/rates' |
		jq '[.[].value.r.rate_per_sec] | add')\" = 400 ]"
}
