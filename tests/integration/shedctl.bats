#!/usr/bin/env bats
# shedctl.bats - shedctl works from the pins, while shedd runs and after it
# died: status (text and JSON), top (in tmux; its heavy hitters in JSON and
# into a pipe), manual prefixes, the rate pin and detach; what it changes is seen by a running shedd at its next
# tick, is not undone by it, and survives a restart. A ctl_state pinned by
# an older shedd (version 1) is converted, and the controller resumes.

# The floods are spoofed: shedd runs with --verify off, so they are charged
# to their class and shed by the token bucket.

load lib

SHEDCTL=${SHEDCTL:-"$ROOT/shedctl"}

setup() { testbed_up; listener_start; }
teardown() {
	[ -z "${TMUX_SOCK:-}" ] || tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
	testbed_down
}

ctl() { "$SHEDCTL" --netns "$NS_SRV" "$@"; }

# ctl_field NAME: a field of the pinned ctl_state.
ctl_field() {
	bpftool map dump pinned "$PIN_DIR/ctl_state" | jq ".[0].value.$1"
}

# admitted_over SECONDS CLASS SRC RATE: SYNs admitted in CLASS while
# flooding from SRC at RATE for SECONDS, per second.
admitted_over() {
	local before after
	before=$(stat_sum admitted "$2")
	flood "$3" "$4" "$1" >/dev/null
	after=$(stat_sum admitted "$2")
	echo $(( (after - before) / $1 ))
}

restart_shedd() {
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	shedd_start "$@"
	grep -q 'adopted' "$TESTBED_TMP/shedd.log"
}

syns_above() { [ "$(stat_sum syn 3)" -gt "$1" ]; }

@test "status --json: one object with stable keys, while shedd runs and after it died" {
	shedd_start --verify off --port "$PORT" --rate 200
	flood_bg /dev/null 198.19.0.0/16 1000 4
	# The flood is judged, and a tick has counted it.
	wait_for "the flood judged" 5 syns_above 100
	wait_ticks 2
	run ctl status --json
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e 'type == "object"'
	[ "$(echo "$output" | jq -c 'keys')" = '["classes","controller","controller_limit_per_sec","daemon_running","fail_static_per_sec","heartbeat_age_s","iface","interval_s","last_good_per_sec","lease_expired","lease_s","limit_per_sec","mode","peak_accept_per_sec","peak_served_per_sec","pin_dir","pinned","pinned_rate_per_sec","signals","stage","stages","state_age_s","total","why","xdp_tx_blocked"]' ]
	# No lease unless asked (--lease): null, never expired.
	echo "$output" | jq -e '.lease_s == null and .lease_expired == false and .fail_static_per_sec == null' 
	[ "$(echo "$output" | jq -c '.signals | keys')" = '["admitted_per_sec","backlog","demand_per_sec","depth","latency_p99_ms","latency_target_ms","sojourn_min_ms"]' ]
	[ "$(echo "$output" | jq -c '.classes[0] | keys')" = '["admitted_per_sec","class","cookies_per_sec","fair","offered_per_sec","rate_per_sec","shed_per_sec"]' ]
	echo "$output" | jq -e '.daemon_running == true and .iface == "'"$IF_SRV"'" and
		.controller == "fixed" and .pinned == false and .limit_per_sec == 200 and
		.xdp_tx_blocked == false'
	echo "$output" | jq -e '[.classes[].class] == ["critical_plus","critical","sheddable_plus","sheddable"]'
	# The flood is sheddable (the default class): offered 1000/s, 200/s admitted.
	within "$(echo "$output" | jq '.classes[3].offered_per_sec | round')" 850 1100
	within "$(echo "$output" | jq '.classes[3].admitted_per_sec | round')" 150 230
	within "$(echo "$output" | jq '.classes[3].shed_per_sec | round')" 650 900
	within "$(echo "$output" | jq '.signals.backlog')" 1 1000000
	# The text view says the same.
	run ctl status
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"limit 200 SYN/s"* ]]
	[[ "$output" == *"sheddable "* ]]
	# shedd dies: the pins still answer.
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	run ctl status --json --interval 200ms
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.daemon_running == false and .limit_per_sec == 200'
	run ctl status
	[ "$status" -eq 0 ]
	[[ "$output" == *"NOT RUNNING"* ]]
}

# pinned_seen N: shedd's next status line and its metrics say the rate is
# pinned at N SYN/s (0: that it is not pinned).
pinned_seen() {
	local line scrape
	status_next
	line=$(grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | tail -n 1)
	echo "status line: $line"
	if [ "$1" -gt 0 ]; then
		[[ "$line" == *" pinned=$1/s "* ]]
	else
		[[ "$line" != *"pinned="* ]]
	fi
	scrape=$(in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics)
	grep '^shedd_rate_pinned' <<<"$scrape"
	grep -qx "shedd_rate_pinned{iface=\"$IF_SRV\"} $(($1 > 0))" <<<"$scrape"
	grep -qx "shedd_rate_pinned_syn_per_second{iface=\"$IF_SRV\"} $1" <<<"$scrape"
}

@test "rate pin: a running shedd applies it at its next tick, keeps it across a restart; unpin gives the rate back" {
	shedd_start --verify off --port "$PORT" --rate 1000
	run ctl rate pin 300
	echo "$output"
	[ "$status" -eq 0 ]
	wait_for "the pin in ctl_state" 2 sh -c \
		"bpftool map dump pinned '$PIN_DIR/ctl_state' | jq -e '.[0].value.applied_mrate == 300000 and .[0].value.flags == 1' >/dev/null"
	[ "$(ctl_field pinned_mrate)" -eq 300000 ]
	grep -q 'rate pinned at 300 SYN/s' "$TESTBED_TMP/shedd.log"
	# Offered 3000/s of sheddable: the pinned 300/s pass, not the 1000/s of --rate.
	within "$(admitted_over 3 3 198.19.0.0/16 3000)" 250 340
	ctl status --json --interval 200ms | jq -e '.pinned == true and .pinned_rate_per_sec == 300 and .limit_per_sec == 300'
	run ctl status --interval 200ms
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"limit 300 SYN/s PINNED"* ]]
	[[ "$output" == *"rate pinned at 300 SYN/s"* ]]
	# The status line and the metrics say it too.
	pinned_seen 300
	# A restart with the same options adopts the program: the pin holds.
	restart_shedd --verify off --port "$PORT" --rate 1000
	wait_ticks 3
	[ "$(ctl_field applied_mrate)" -eq 300000 ]
	within "$(admitted_over 3 3 198.19.0.0/16 3000)" 250 340
	# Unpinned: --rate again.
	run ctl rate unpin
	[ "$status" -eq 0 ]
	wait_for "the unpin in ctl_state" 2 sh -c \
		"bpftool map dump pinned '$PIN_DIR/ctl_state' | jq -e '.[0].value.applied_mrate == 1000000 and .[0].value.flags == 0' >/dev/null"
	within "$(admitted_over 3 3 198.19.0.0/16 3000)" 900 1100
	pinned_seen 0
}

@test "rate pin with the aimd controller: the pin is applied, the controller's own state goes on" {
	shedd_start --verify off --port "$PORT" --controller aimd --rate 2000
	ctl rate pin 400
	wait_for "the pin in ctl_state" 2 sh -c \
		"bpftool map dump pinned '$PIN_DIR/ctl_state' | jq -e '.[0].value.applied_mrate == 400000' >/dev/null"
	[ "$(ctl_field controller)" -eq 0 ]
	[ "$(ctl_field flags)" -eq 1 ]
	# The controller decides from the pinned rate: its limit is about it.
	within "$(( $(ctl_field limit_mrate) / 1000 ))" 300 500
	run ctl status --json --interval 200ms
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.controller == "aimd" and .pinned == true and .limit_per_sec == 400 and
		(.mode | IN("steady","overload","recovering"))'
}

@test "prefix add: SYNs from it count in its class at once, a restart keeps it and it wins over a configured one; del removes it" {
	shedd_start --verify off --port "$PORT" --rate 1000 --prefix 198.19.1.0/24=critical
	run ctl prefix add 198.19.2.0/24 critical_plus
	echo "$output"
	[ "$status" -eq 0 ]
	ctl prefix add 198.19.1.0/24 critical_plus   # over the configured one
	ctl prefix add 2001:db8:ff00::/48 critical_plus
	run ctl prefix list
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"198.19.2.0/24"*"critical_plus"*"manual"* ]]
	[[ "$output" == *"198.19.1.0/24"*"critical_plus"*"manual"* ]]
	[[ "$output" == *"2001:db8:ff00::/48"*"critical_plus"*"manual"* ]]
	before=$(stat_sum syn 0)
	flood 198.19.2.0/24 200 1 >/dev/null
	flood 198.19.1.0/24 200 1 >/dev/null
	within "$(( $(stat_sum syn 0) - before ))" 380 420
	# A restart writes the configured prefixes again: the manual ones stay,
	# and 198.19.1.0/24 stays critical_plus.
	restart_shedd --verify off --port "$PORT" --rate 1000 --prefix 198.19.1.0/24=critical \
		--prefix 198.19.3.0/24=critical
	run ctl prefix list --json
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '[.prefixes[] | select(.origin == "manual")] | length == 3'
	echo "$output" | jq -e '.prefixes[] | select(.prefix == "198.19.1.0/24") |
		.class == "critical_plus" and .origin == "manual" and .replaces == "critical"'
	echo "$output" | jq -e '.prefixes[] | select(.prefix == "198.19.3.0/24") | .class == "critical" and .origin == "config"'
	before=$(stat_sum syn 0)
	flood 198.19.2.0/24 200 1 >/dev/null
	flood 198.19.1.0/24 200 1 >/dev/null
	within "$(( $(stat_sum syn 0) - before ))" 380 420
	# del: a manual prefix goes, and the configured class it replaced comes
	# back; a configured one is shedd's to change.
	run ctl prefix del 198.19.2.0/24
	[ "$status" -eq 0 ]
	run ctl prefix del 198.19.1.0/24
	[ "$status" -eq 0 ]
	ctl prefix list --json | jq -e '.prefixes[] | select(.prefix == "198.19.1.0/24") |
		.class == "critical" and .origin == "config"'
	before=$(stat_sum syn 1)
	flood 198.19.1.0/24 200 1 >/dev/null
	within "$(( $(stat_sum syn 1) - before ))" 190 210
	run ctl prefix del 198.19.3.0/24
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"configuration"* ]]
	run ctl prefix del 198.19.9.0/24
	[ "$status" -eq 1 ]
	before=$(stat_sum syn 3)
	flood 198.19.2.0/24 200 1 >/dev/null
	within "$(( $(stat_sum syn 3) - before ))" 190 210
	run ctl prefix list
	[ "$status" -eq 0 ]
	[[ "$output" != *"198.19.2.0/24"* ]]
}

@test "top: an 80-column live view in tmux that quits on q" {
	shedd_start --verify off --port "$PORT" --rate 200
	flood_bg /dev/null 198.19.0.0/16 500 4
	TMUX_SOCK="shedctl-$TESTBED_ID"
	rc="$BATS_TEST_TMPDIR/top.rc"
	tmux -L "$TMUX_SOCK" new-session -d -x 80 -y 24 \
		"'$SHEDCTL' --netns '$NS_SRV' top; echo \$? >'$rc'"
	wait_for "top's screen" 5 sh -c \
		"tmux -L '$TMUX_SOCK' capture-pane -p | grep -q '^sheddable .* 200 *$'"
	screen=$(tmux -L "$TMUX_SOCK" capture-pane -p)
	echo "$screen"
	[[ "$screen" == *"shedd on $IF_SRV: running"* ]]
	[[ "$screen" == *"critical_plus"* ]]
	[[ "$screen" == *"q quits"* ]]
	# Every line fits 80 columns.
	[ "$(echo "$screen" | awk '{ if (length($0) > m) m = length($0) } END { print m }')" -le 80 ]
	tmux -L "$TMUX_SOCK" send-keys q
	wait_for "top to exit" 3 test -s "$rc"
	[ "$(cat "$rc")" -eq 0 ]
}

# heavy_seen SRC: shedctl top --json lists SRC as a heavy hitter of
# sheddable, shed for fairness.
heavy_seen() {
	ctl top --json --class sheddable | jq -e --arg s "$1" \
		'.classes[0].fair.top | any(.source == $s and .shed > 0)' >/dev/null
}

@test "top: the heavy hitters of per-source fairness, in JSON and into a pipe; status --json has each class's fairness" {
	shedd_start --verify off --port "$PORT" --rate 300
	# One source at 400/s beside 600/s from many: sheddable sheds, and
	# the one source is over its share.
	flood_bg /dev/null 198.19.0.5/32 400 6
	local heavy_pid=$FLOOD_PID
	flood_bg /dev/null 198.19.128.0/17 600 6
	wait_for "198.19.0.5 a heavy hitter" 5 heavy_seen 198.19.0.5
	run ctl top --json --class sheddable
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c 'keys')" = '["classes","daemon_running","iface","pin_dir","window_s"]' ]
	[ "$(echo "$output" | jq -c '[.classes[].class]')" = '["sheddable"]' ]
	[ "$(echo "$output" | jq -c '.classes[0].fair | keys')" = '["active","counted","enabled","levels","per_level","shed","top"]' ]
	echo "$output" | jq -e '.classes[0].fair | .enabled and .active and .levels == "addr+24+64+48" and
		.shed > 0 and .counted > 0 and ([.per_level[].level] == ["addr","24+64","48"])'
	echo "$output" | jq -e '.classes[0].fair.per_level[0] | .sources >= 1 and .limit_per_sec > 0'
	# The heaviest first; 198.19.0.5 over the limit of its level.
	echo "$output" | jq -e '.classes[0].fair.top | length >= 1 and length <= 10 and
		(map(.rate_per_sec) == (map(.rate_per_sec) | sort | reverse))'
	echo "$output" | jq -e '.classes[0].fair.top[] | select(.source == "198.19.0.5") |
		.family == 4 and .level == "addr" and .rate_per_sec >= .limit_per_sec and .age_s < 5'
	[ "$(echo "$output" | jq -c '.classes[0].fair.top[0] | keys')" = '["age_s","family","level","limit_per_sec","rate_per_sec","shed","source"]' ]
	# Into a pipe: the same once, as text.
	run ctl top
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sheddable      fairness ACTIVE (addr+24+64+48)"* ]]
	[[ "$output" == *"class          heavy hitter"*"rate/s   limit/s      shed"* ]]
	echo "$output" | grep -qE '^sheddable +198\.19\.0\.5 +addr +[0-9.]+ +[0-9.]+ +[0-9]+$'
	# Another class has none.
	run ctl top --class critical
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"heavy hitters: none over its share in the last 5s in critical"* ]]
	# status --json: a fair object in every class.
	run ctl status --json --interval 200ms
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '[.classes[].fair.enabled] == [true,true,true,true]'
	echo "$output" | jq -e '.classes[3].fair | .active and .shed > 0 and
		any(.top[]; .source == "198.19.0.5")'
	echo "$output" | jq -e '.classes[0].fair | (.active | not) and .top == []'
	wait "$heavy_pid"
}

@test "top: pins without the fairness maps (an older shedd) are said so, status has fair null" {
	shedd_start --verify off --port "$PORT" --rate 300
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	rm "$PIN_DIR/fair_heavy"
	run ctl top --json
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"has no fair_heavy map: the shedd that made these pins is older than per-source fairness"* ]]
	run ctl top
	[ "$status" -eq 1 ]
	[[ "$output" == *"older than per-source fairness"* ]]
	run ctl status --json --interval 200ms
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '[.classes[].fair] == [null,null,null,null]'
	run ctl status --interval 200ms
	[ "$status" -eq 0 ]
	[[ "$output" == *"heavy hitters: "*"has no fair_heavy map"* ]]
}

@test "detach: refused while shedd runs, removes a shedd left behind; usage errors exit 2" {
	shedd_start --verify off --port "$PORT" --rate 200
	run ctl detach --iface "$IF_SRV"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"running"* ]]
	xdp_attached
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	run ctl detach --iface "$IF_SRV"
	echo "$output"
	[ "$status" -eq 0 ]
	if xdp_attached; then false; fi
	[ ! -e "$PIN_DIR" ]
	# Nothing left: a runtime error, not a usage one.
	run ctl status
	echo "$output"
	[ "$status" -eq 1 ]
	for args in "" "bogus" "rate pin" "rate pin 0" "rate pin x" "prefix add 198.19.0.1/8 critical" \
		"prefix add 198.19.0.0/16 nosuch" "detach" "status --interval 5ms" "top --class nosuch" \
		"status --class critical" "rate pin 5 --json" "status extra" "--nosuch status"; do
		run "$SHEDCTL" $args
		echo "shedctl $args -> $status: $output"
		[ "$status" -eq 2 ]
	done
	run "$SHEDCTL" rate --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: shedctl rate pin N"* ]]
}

@test "a ctl_state of version 1 (an older shedd) is converted, and the controller resumes from it" {
	shedd_start --verify off --port "$PORT" --controller aimd
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	# The version 1 layout: 4 x u32 (version 1, steady), 7 x u64 with the
	# limit and the last good rate at 1234 SYN/s.
	rm "$PIN_DIR/ctl_state"
	bpftool map create "$PIN_DIR/ctl_state" type array key 4 value 72 entries 1 name ctl_state
	le64() { printf '%016x' "$1" | sed 's/../& /g' | tr ' ' '\n' | grep . | tac | sed 's/^/0x/' | tr '\n' ' '; }
	value="0x01 0 0 0  0 0 0 0  0 0 0 0  0 0 0 0 $(le64 1234000) $(le64 1234000) $(printf '0 %.0s' $(seq 40))"
	bpftool map update pinned "$PIN_DIR/ctl_state" key 0 0 0 0 value $value
	bpftool map dump pinned "$PIN_DIR/ctl_state"
	shedd_start --verify off --port "$PORT" --controller aimd
	cat "$TESTBED_TMP/shedd.log"
	grep -q 'controller state of version 1 converted to version 3' "$TESTBED_TMP/shedd.log"
	grep -q 'controller resumes: mode=steady stage=1 limit=1234/s last_good=1234/s' \
		"$TESTBED_TMP/shedd.log"
	wait_ticks 2
	[ "$(ctl_field version)" -eq 3 ]
	ctl status --json --interval 200ms | jq -e '.controller == "aimd" and .daemon_running'
}

@test "the manual page lists every command and option exactly as --help shows them" {
	page=$(MANWIDTH=200 man -l "$ROOT/man/shedctl.8" 2>/dev/null | col -b | tr -s ' ')
	entries=$("$SHEDCTL" --help | sed -n '/^Commands:/,/^CLASS/p' | grep -E '^  [^ ]' |
		sed -e 's/^  //' -e 's/  .*//')
	echo "$entries"
	[ "$(echo "$entries" | wc -l)" -eq 15 ]
	missing=
	while IFS= read -r e; do
		grep -qF -- "$e" <<<"$page" || missing+="'$e' "
	done <<<"$entries"
	# And the other way: every option the page lists is in --help.
	options=$(grep -oE '^ *-[a-zA-Z], --[a-z-]+' <<<"$page" | sed 's/^ *//')
	[ "$(echo "$options" | wc -l)" -eq 7 ]
	while IFS= read -r o; do
		"$SHEDCTL" --help | grep -qF -- "$o" || missing+="'$o' (not in --help) "
	done <<<"$options"
	echo "missing: $missing"
	[ -z "$missing" ]
	# Each command's own help names it as the page does.
	for c in status top prefix rate detach; do
		"$SHEDCTL" "$c" --help | grep -q "^Usage: shedctl $c"
	done
}

@test "shedctl probing the lock while shedd starts does not make it fail" {
	local i rc loop_pid stop="$BATS_TEST_TMPDIR/stop"
	LOG="$TESTBED_TMP/shedd.log"
	shedd_start --verify off --port "$PORT" --rate 200 --keep-on-exit
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	# shedctl status without a pause, bounded: 400 runs or 60 s, or until
	# the test is done. Each tells a running shedd by a shared flock on
	# the pin folder, taken and dropped at once.
	(
		for ((n = 0; n < 400 && SECONDS < 60; n++)); do
			[ -e "$stop" ] && break
			ctl status --interval 10ms >/dev/null 2>&1 || true
		done
	) &
	loop_pid=$!
	PIDS+=("$loop_pid")
	for ((i = 0; i < 5; i++)); do
		# And one that holds it 600 ms, as a shedctl descheduled between
		# its lock and its unlock on a busy host would; shedd starts
		# while it holds it.
		rm -f "$BATS_TEST_TMPDIR/held"
		flock -s "$PIN_DIR" sh -c "touch '$BATS_TEST_TMPDIR/held'; sleep 0.6" &
		PIDS+=($!)
		wait_for "the probe's shared lock" 2 test -e "$BATS_TEST_TMPDIR/held"
		: >"$LOG"
		"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --verify off --port "$PORT" \
			--rate 200 --keep-on-exit 2>>"$LOG" &
		SHEDD_PID=$!
		PIDS+=("$SHEDD_PID")
		wait_for "shedd adopted" 5 grep -q 'adopted the running shedd' "$LOG" ||
			{ cat "$LOG"; false; }
		kill -TERM "$SHEDD_PID"
		rc=0
		wait "$SHEDD_PID" || rc=$?
		echo "start $i: exit $rc"
		[ "$rc" -eq 0 ]
	done
	touch "$stop"
	wait "$loop_pid"
	# An owner is still refused, after the wait a probe may take.
	shedd_start --verify off --port "$PORT" --rate 200
	run timeout 20 "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --port "$PORT" --rate 5
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"another shedd is running on $IF_SRV"* ]]
}
