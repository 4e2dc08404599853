#!/usr/bin/env bats
# upgrade.bats - a new shedd takes over from the previous release without a
# gap: the release's shedd (built from git, commit UPGRADE_FROM) runs on the
# testbed with a manual prefix and a rate pin made by its own shedctl, and
# today's shedd replaces it under a SYN flood. Every SYN of the flood is
# judged (the program's SYN counter grows by exactly what was sent, the link
# never changes), no counter goes back, the prefix and the pin stay, and the
# shedctl of either release reads the pins or refuses them. A failure
# injected at each step of the upgrade leaves the old program and its pins.
#
# The flood is spoofed: shedd runs with --verify off, so that every SYN is
# charged and counted in cls[].syn (verified.bats tests cookies).

load lib

# The commit main was at before layouts were versioned: the last release.
UPGRADE_FROM=${UPGRADE_FROM:-6fa4655}
# A release from before the pins moved under ns:INODE/ (and before verified
# admission changed the per-class counters).
UPGRADE_FROM_OLDER_PATH=${UPGRADE_FROM_OLDER_PATH:-1bd3075}
# The last commit of layout version 3, whose program has no port_set.
UPGRADE_FROM_PREV=${UPGRADE_FROM_PREV:-ee42690}
# The last commit of layout version 6, whose sketch has 1024 cells a row.
UPGRADE_FROM_L6=${UPGRADE_FROM_L6:-7b55db0}
SHEDCTL=${SHEDCTL:-$ROOT/shedctl}
# This build's layout version and the oldest it lets adopt its pins
# (include/shedd.h).
LAYOUT=$(awk '$1 == "#define" && $2 == "SHEDD_LAYOUT_VERSION" { print $3 }' "$ROOT/include/shedd.h")
COMPAT=$(awk '$1 == "#define" && $2 == "SHEDD_LAYOUT_COMPAT" { print $3 }' "$ROOT/include/shedd.h")

# The releases are built once per tree, under .output (make clean removes
# them), by the first test that needs each: `make test` and `make san` both
# run this file, and a test that needs none (the kernel matrix runs one)
# builds none.
RELEASES="$ROOT/.output/releases"

# A tree without the releases' commits (a shallow clone, an archive)
# cannot test upgrades: that fails, unless SHEDD_UPGRADE_SKIP=1 says to skip
# them, so a missing history never passes for a tested upgrade.
setup_file() {
	local c missing=
	export OLD="$RELEASES/$UPGRADE_FROM" OLD0="$RELEASES/$UPGRADE_FROM_OLDER_PATH"
	export PREV="$RELEASES/$UPGRADE_FROM_PREV" L6="$RELEASES/$UPGRADE_FROM_L6"
	for c in "$UPGRADE_FROM" "$UPGRADE_FROM_OLDER_PATH" "$UPGRADE_FROM_PREV" "$UPGRADE_FROM_L6"; do
		git -C "$ROOT" cat-file -e "$c^{commit}" 2>/dev/null || missing="$missing $c"
	done
	if [ -n "$missing" ]; then
		if [ "${SHEDD_UPGRADE_SKIP:-0}" = 1 ]; then
			export OLD_MISSING="the repository has no commit$missing (a shallow clone?); SHEDD_UPGRADE_SKIP=1"
			export PREV_MISSING=$OLD_MISSING
			return 0
		fi
		echo "upgrade.bats: the repository has no commit$missing (a shallow clone?):" \
			"fetch the history, or set SHEDD_UPGRADE_SKIP=1 to skip the upgrade tests" >&3
		return 1
	fi
}

# build_release COMMIT DIR TARGETS...: the tree of COMMIT from git, built,
# unless an earlier run built it into DIR (DIR.built says it finished).
build_release() {
	local commit=$1 dir=$2
	shift 2
	[ ! -e "$dir.built" ] || return 0
	rm -rf "$dir"
	mkdir -p "$dir"
	git -C "$ROOT" archive "$commit" | tar -x -C "$dir"
	make -C "$dir" -j2 "$@" >"$dir.log" 2>&1 || {
		echo "building $commit failed:" >&3
		tail -20 "$dir.log" >&3
		return 1
	}
	touch "$dir.built"
}

# need_release COMMIT DIR TARGETS...: the release COMMIT built into DIR,
# and its XDP program accepted by this kernel's verifier, or the test is
# skipped, naming why: releases before the fixes for 6.0-6.8 and 6.12
# verifiers (Kernels in docs/verified-admission.md) are rejected there.
# Asked once per kernel: bpftool loads the release's object as its shedd
# would, pinned in a scratch folder of bpffs that is removed at once.
need_release() {
	local commit=$1 dir=$2 verdict pin out
	shift 2
	build_release "$commit" "$dir" "$@"
	verdict="$dir.loads-$(uname -r)"
	if [ ! -e "$verdict" ]; then
		# (bpffs refuses names with a dot, so no mktemp.)
		pin=/sys/fs/bpf/shedd-release-$BASHPID-$RANDOM
		mkdir "$pin"
		if out=$(bpftool prog loadall "$dir/.output/shedd.bpf.o" "$pin" 2>&1); then
			echo yes >"$verdict"
		else
			printf '%s\n' "$out" | grep -m1 -iE 'invalid|unbounded|error|failed|-[0-9]+' |
				cut -c1-160 >"$verdict"
			[ -s "$verdict" ] || echo "bpftool prog loadall failed" >"$verdict"
		fi
		rm -rf "$pin"
	fi
	[ "$(cat "$verdict")" = yes ] ||
		skip "release $commit's XDP program does not load on kernel $(uname -r): $(cat "$verdict")"
}

# need_old: the last release, with its shedctl (OLD).
need_old() {
	[ -z "${OLD_MISSING:-}" ] || skip "$OLD_MISSING"
	need_release "$UPGRADE_FROM" "$OLD" shedd shedctl
}

setup() {
	testbed_up
	listener_start
}

teardown() {
	testbed_down
	# The older path of this testbed's interface (its name is the testbed's).
	[ -z "${OLDER_DIR:-}" ] || rm -rf "$OLDER_DIR"
}

# old_start ARGS: the release's shedd, through the testbed's shedd_start.
old_start() {
	SHEDD="$OLD/shedd" shedd_start "$@"
}

# stop: SIGTERM to a shedd started with --keep-on-exit: its program stays.
stop() {
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
}

# num: its input, which must be one whole number (an id, a size); a missing
# pin gives none, and an empty id must not compare equal, or unequal, to
# anything.
num() {
	local v
	v=$(cat)
	if ! [[ "$v" =~ ^[0-9]+$ ]]; then
		echo "num: '$v' is not a number" >&2
		return 1
	fi
	echo "$v"
}
link_prog() { bpftool -j link show pinned "$PIN_DIR/link" | jq .prog_id | num; }
link_id() { bpftool -j link show pinned "$PIN_DIR/link" | jq .id | num; }
value_size() { bpftool -j map show pinned "$PIN_DIR/$1" | jq .bytes_value | num; }

# syn_all: cls[].syn summed over classes and CPUs.
syn_all() {
	bpftool map dump pinned "$PIN_DIR/stats" | jq '[.[0].values[].value.cls[].syn] | add'
}

# counters FILE [DIR]: every counter of the stats map, summed over CPUs, one
# "name value" a line (class counters as cls.N.name).
counters() {
	bpftool map dump pinned "${2:-$PIN_DIR}/stats" | jq -r '
		[.[0].values[].value] as $v
		| ($v[0] | keys_unsorted | map(select(. != "cls"))) as $g
		| ([$g[] as $k | "\($k) \([$v[][$k]] | add)"]
		   + [range(4) as $c | ($v[0].cls[0] | keys_unsorted)[] as $k
		      | "cls.\($c).\($k) \([$v[].cls[$c][$k]] | add)"])[]' >"$1"
}

# kept BEFORE AFTER: every counter of BEFORE is in AFTER and not smaller.
kept() {
	local name v now bad=0
	while read -r name v; do
		now=$(awk -v n="$name" '$1 == n { print $2 }' "$2")
		if [ -z "$now" ] || [ "$now" -lt "$v" ]; then
			echo "counter $name: before $v, after ${now:-missing}" >&2
			bad=1
		fi
	done <"$1"
	return "$bad"
}

# figures BEFORE AFTER: the main counters, before and after, for the log.
figures() {
	local k
	for k in packets cls.3.syn cls.3.admitted cls.3.dropped non_syn; do
		echo "# $k: before $(awk -v n="$k" '$1 == n { print $2 }' "$1")," \
			"after $(awk -v n="$k" '$1 == n { print $2 }' "$2")" >&3
	done
}

# xdp_prog: the id of the XDP program on the server's veth, or "null".
xdp_prog() {
	nsenter --net="/run/netns/$NS_SRV" bpftool -j net show dev "$IF_SRV" |
		jq '.[0].xdp[0].id'
}

# xdp_watch FILE: "MS ID" lines, the time (ms since the epoch) and the XDP
# program on the server's veth, every 100 ms for at most 30 s.
xdp_watch() {
	local i
	for ((i = 0; i < 300; i++)); do
		echo "$(date +%s%3N) $(xdp_prog)"
		sleep 0.1
	done >"$1"
}

# swapped_in_flood WATCH OLD T0 T1: the program OLD ran the interface when
# the flood was under way (after T0), and another one replaced it before
# the flood ended (T1): the swap happened during the flood, not before or
# after it. Says when it was.
swapped_in_flood() {
	awk -v old="$2" -v t0="$3" -v t1="$4" '
		$2 == old { last_old = $1; next }
		last_old && $2 ~ /^[0-9]+$/ && !swap { swap = $1; id = $2 }
		END {
			printf "# swap from program %s to %s between %d and %d ms into the flood (%d ms long)\n",
				old, id, last_old - t0, swap - t0, t1 - t0 > "/dev/fd/3"
			if (!last_old || !swap || last_old < t0 || swap > t1) {
				printf "the swap was not during the flood: old program last seen at %s, " \
					"new one first at %s, flood from %s to %s\n",
					last_old, swap, t0, t1 > "/dev/stderr"
				exit 1
			}
		}' "$1"
}

# upgrade_under_flood NAME ENV...: flood 2000 SYN/s for up to 10 s (a loaded
# host may take seconds to load shedd; the swap must come while it runs), and
# 1 s into it start today's shedd with the environment ENV and the options
# UPGRADE_OPTS (default --verify off); the flood runs on for 1 s after the
# new program is seen on the interface, then ends (synflood's SIGUSR1). Sets
# SENT, and FLOOD_LINE. Fails unless the program was swapped while the flood
# ran.
upgrade_under_flood() {
	local out="$BATS_TEST_TMPDIR/$1.flood" watch="$BATS_TEST_TMPDIR/$1.xdp" old t0 t1 wpid
	shift
	old=$(xdp_prog | num)
	xdp_watch "$watch" &
	wpid=$!
	PIDS+=("$wpid")
	t0=$(date +%s%3N)
	flood_bg "$out" 198.19.0.0/16 2000 10
	sleep 1
	# shellcheck disable=SC2086 # UPGRADE_OPTS: words
	env "$@" "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" ${UPGRADE_OPTS:---verify off} \
		--port "$PORT" --rate 200 --burst 20 --keep-on-exit 2>>"$BATS_TEST_TMPDIR/shedd.log" &
	SHEDD_PID=$!
	PIDS+=("$SHEDD_PID")
	while kill -0 "$FLOOD_PID" 2>/dev/null &&
		! awk -v old="$old" '$2 != old && $2 ~ /^[0-9]+$/ { found = 1 } END { exit !found }' "$watch"; do
		sleep 0.1
	done
	sleep 1
	kill -USR1 "$FLOOD_PID" 2>/dev/null || true
	wait "$FLOOD_PID"
	# synflood waits 1 s for answers after its last SYN.
	t1=$(($(date +%s%3N) - 1000))
	kill "$wpid"
	wait "$wpid" || true
	FLOOD_LINE=$(cat "$out")
	SENT=$(field sent "$FLOOD_LINE")
	echo "flood: $FLOOD_LINE"
	swapped_in_flood "$watch" "$old" "$t0" "$t1"
}

@test "an upgrade from the last release under a SYN flood judges every SYN and keeps counters, prefixes and the rate pin" {
	need_old
	old_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	run "$OLD/shedctl" --netns "$NS_SRV" prefix add 198.19.7.0/24 critical
	[ "$status" -eq 0 ]
	run "$OLD/shedctl" --netns "$NS_SRV" rate pin 150
	[ "$status" -eq 0 ]
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	xdp_attached
	# Today's shedctl reads the release's pins (layout version 1).
	run "$SHEDCTL" --netns "$NS_SRV" status --json --interval 100ms
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
	run "$SHEDCTL" --netns "$NS_SRV" prefix list --json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"198.19.7.0/24"'* ]]
	old_prog=$(link_prog)
	link=$(link_id)
	old_daemon=$(value_size daemon_stats)
	old_stats=$(value_size stats)
	counters "$BATS_TEST_TMPDIR/before"
	before=$(syn_all)
	[ "$before" -eq 1000 ]

	upgrade_under_flood upgrade
	cat "$BATS_TEST_TMPDIR/shedd.log"
	wait_for "the new shedd adopted" 5 grep -q 'adopted the running shedd' \
		"$BATS_TEST_TMPDIR/shedd.log"
	grep -q "upgraded the pins of $IF_SRV from layout version 1 to $LAYOUT" \
		"$BATS_TEST_TMPDIR/shedd.log"
	# One link all along, another program in it: the swap, not a gap.
	[ "$(link_id)" = "$link" ]
	now=$(link_prog)
	[ "$now" != "$old_prog" ]
	[ "$(value_size daemon_stats)" -gt "$old_daemon" ]
	# Every SYN sent was judged by one program or the other.
	after=$(syn_all)
	echo "# SYNs judged: before $before, sent $SENT during the upgrade, after $after" >&3
	# At least 2 s of the flood: 1 s before the start, 1 s after the swap.
	[ "$SENT" -ge 4000 ]
	[ "$after" -eq $((before + SENT)) ]
	counters "$BATS_TEST_TMPDIR/after"
	kept "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	figures "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# The manual prefix and the rate pin, through today's shedctl.
	run "$SHEDCTL" --netns "$NS_SRV" prefix list --json
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.prefixes[] | select(.prefix == "198.19.7.0/24") |
		"\(.class) \(.origin)"')" = "critical manual" ]
	run "$SHEDCTL" --netns "$NS_SRV" status --json --interval 100ms
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .pinned)" = true ]
	[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
	new_status=$output
	grep -q 'rate pinned at 150 SYN/s' "$BATS_TEST_TMPDIR/shedd.log"
	# The release's shedctl reads today's pins alike, while stats keeps
	# the release's size: it reads stats into a buffer of its own size
	# (pins_read_stats() of 6fa4655), which a stats grown since overruns.
	size=$(value_size stats)
	if [ "$size" -eq "$old_stats" ]; then
		run "$OLD/shedctl" --netns "$NS_SRV" status --json --interval 100ms
		echo "$output"
		[ "$status" -eq 0 ]
		[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
		[ "$(echo "$output" | jq .limit_per_sec)" = "$(echo "$new_status" | jq .limit_per_sec)" ]
	else
		echo "# stats grew from $old_stats to $size bytes since the release:" \
			"its shedctl status would overrun its buffer; not run" >&3
	fi
	run "$OLD/shedctl" --netns "$NS_SRV" prefix list --json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"198.19.7.0/24"'* ]]
	echo "# after: prefix $(echo "$output" | jq -c '.prefixes[]'), pinned rate" \
		"$(echo "$new_status" | jq .pinned_rate_per_sec) SYN/s" >&3
	# The prefix still classifies: its SYNs are critical's.
	crit=$(bpftool map dump pinned "$PIN_DIR/stats" | jq '[.[0].values[].value.cls[1].syn] | add')
	flood 198.19.7.0/24 100 1 >/dev/null
	[ "$(bpftool map dump pinned "$PIN_DIR/stats" | jq '[.[0].values[].value.cls[1].syn] | add')" \
		-eq $((crit + 100)) ]
	run bpftool map dump pinned "$PIN_DIR/daemon_stats"
	[[ "$output" == *'"layout_migrations": 1'* ]]
	[ -z "$(ls "$PIN_DIR" | grep pending)" ]
}

@test "an upgrade that replaces every map, stats too, carries the counters made up to the swap" {
	need_old
	old_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	# Today's shedd first (layout 2), then one that replaces every map.
	shedd_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	run "$SHEDCTL" --netns "$NS_SRV" prefix add 198.19.7.0/24 critical
	[ "$status" -eq 0 ]
	run "$SHEDCTL" --netns "$NS_SRV" rate pin 150
	[ "$status" -eq 0 ]
	stop
	stats_id=$(bpftool -j map show pinned "$PIN_DIR/stats" | jq .id | num)
	counters "$BATS_TEST_TMPDIR/before"
	before=$(syn_all)
	upgrade_under_flood all SHEDD_TEST_MIGRATE=all
	cat "$BATS_TEST_TMPDIR/shedd.log"
	wait_for "the new shedd adopted" 5 grep -q 'adopted the running shedd' \
		"$BATS_TEST_TMPDIR/shedd.log"
	grep -q "upgraded the pins of $IF_SRV from layout version $LAYOUT to $LAYOUT: [34][0-9] maps" \
		"$BATS_TEST_TMPDIR/shedd.log"
	# Carried by the carry program's atomic adds, not the fallback.
	run grep -c 'the carry program does not run' "$BATS_TEST_TMPDIR/shedd.log"
	[ "$output" -eq 0 ]
	now=$(bpftool -j map show pinned "$PIN_DIR/stats" | jq .id | num)
	[ "$now" != "$stats_id" ]
	after=$(syn_all)
	echo "# SYNs judged: before $before, sent $SENT during the upgrade, after $after" >&3
	[ "$after" -eq $((before + SENT)) ]
	counters "$BATS_TEST_TMPDIR/after"
	kept "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	figures "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# The manual prefix and the rate pin, copied into their new maps.
	run "$SHEDCTL" --netns "$NS_SRV" prefix list --json
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.prefixes[] | select(.prefix == "198.19.7.0/24") |
		"\(.class) \(.origin)"')" = "critical manual" ]
	run "$SHEDCTL" --netns "$NS_SRV" status --json --interval 100ms
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
}

@test "an upgrade that fails at any step leaves the old program and its pins" {
	need_old
	old_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	run "$OLD/shedctl" --netns "$NS_SRV" prefix add 198.19.7.0/24 critical
	[ "$status" -eq 0 ]
	stop
	old_prog=$(link_prog)
	old_daemon=$(value_size daemon_stats)
	for step in copy swap commit; do
		before=$(syn_all)
		run timeout 20 env SHEDD_TEST_MIGRATE_FAIL=$step "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" \
			--verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
		echo "$step: $output"
		[ "$status" -eq 3 ]
		[[ "$output" == *"failing at step '$step'"* ]]
		[ "$(link_prog)" = "$old_prog" ]
		[ "$(value_size daemon_stats)" = "$old_daemon" ]
		[ ! -e "$PIN_DIR/layout" ]
		[ -z "$(ls "$PIN_DIR" | grep pending)" ]
		# The old program still judges, with its maps.
		line=$(flood 198.19.0.0/16 500 1)
		[ "$(syn_all)" -eq $((before + $(field sent "$line"))) ]
		run "$OLD/shedctl" --netns "$NS_SRV" prefix list --json
		[ "$status" -eq 0 ]
		[[ "$output" == *'"198.19.7.0/24"'* ]]
	done
	# And then the upgrade goes through.
	shedd_start --verify off --port "$PORT" --rate 200 --burst 20
	grep -q "upgraded the pins of $IF_SRV" "$BATS_TEST_TMPDIR/shedd.log"
	now=$(link_prog)
	[ "$now" != "$old_prog" ]
}

@test "an upgrade killed between its swap and its renames is completed by the next shedd" {
	need_old
	old_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	run "$OLD/shedctl" --netns "$NS_SRV" prefix add 198.19.7.0/24 critical
	[ "$status" -eq 0 ]
	stop
	old_prog=$(link_prog)
	old_daemon=$(value_size daemon_stats)
	run timeout 20 env SHEDD_TEST_MIGRATE_FAIL=crash "$SHEDD" --netns "$NS_SRV" \
		--iface "$IF_SRV" --verify off --port "$PORT" --rate 200 --keep-on-exit
	[ "$status" -eq 1 ]
	crashed=$(link_prog)
	[ "$crashed" != "$old_prog" ]
	[ -e "$PIN_DIR/daemon_stats_pending" ]
	shedd_start --verify off --port "$PORT" --rate 200 --burst 20
	cat "$BATS_TEST_TMPDIR/shedd.log"
	grep -q 'an upgrade of .* was cut short after its swap' "$BATS_TEST_TMPDIR/shedd.log"
	[ -z "$(ls "$PIN_DIR" | grep pending)" ]
	# Its maps are the running ones now: a plain adoption, no second upgrade.
	run grep -c "upgraded the pins" "$BATS_TEST_TMPDIR/shedd.log"
	[ "$output" -eq 0 ]
	[ "$(value_size daemon_stats)" -gt "$old_daemon" ]
	now=$(link_prog)
	[ "$now" != "$crashed" ]
	run bpftool map dump pinned "$PIN_DIR/daemon_stats"
	[[ "$output" == *'"layout_migrations": 1'* ]]
	run "$SHEDCTL" --netns "$NS_SRV" prefix list --json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"198.19.7.0/24"'* ]]
}

@test "the release's pins without its program are carried over when shedd attaches afresh" {
	need_old
	old_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	run "$OLD/shedctl" --netns "$NS_SRV" prefix add 198.19.7.0/24 critical
	[ "$status" -eq 0 ]
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	# The link's pin was its last holder: the program is gone, the maps stay.
	rm "$PIN_DIR/link"
	run xdp_attached
	[ "$status" -ne 0 ]
	shedd_start --verify off --port "$PORT" --rate 200 --burst 20
	cat "$BATS_TEST_TMPDIR/shedd.log"
	grep -q "upgraded the pins of $IF_SRV from layout version 1 to $LAYOUT: 31 maps of a new layout (their values carried over)$" \
		"$BATS_TEST_TMPDIR/shedd.log"
	grep -q "attached to $IF_SRV" "$BATS_TEST_TMPDIR/shedd.log"
	xdp_attached
	[ "$(syn_all)" -eq 1000 ]
	run "$SHEDCTL" --netns "$NS_SRV" prefix list --json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"198.19.7.0/24"'* ]]
}

@test "shedctl refuses pins of a layout it does not know, and says so" {
	shedd_start --verify off --port "$PORT" --rate 200 --keep-on-exit
	stop
	run "$SHEDCTL" --netns "$NS_SRV" status --interval 100ms
	[ "$status" -eq 0 ]
	# A newer layout version, which no older build may adopt.
	bpftool map update pinned "$PIN_DIR/layout" key 0 0 0 0 value 99 0 0 0 0 0 0 0
	bpftool map update pinned "$PIN_DIR/layout_compat" key 0 0 0 0 value 99 0 0 0
	run "$SHEDCTL" --netns "$NS_SRV" status --interval 100ms
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"layout version 99"* ]]
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --verify off --port "$PORT" --rate 200
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"layout version 99"* ]]
	link_prog
	bpftool map update pinned "$PIN_DIR/layout" key 0 0 0 0 value 2 0 0 0 0 0 0 0
	# A map of a size it does not know: the stats of a newer build.
	rm "$PIN_DIR/stats"
	bpftool map create "$PIN_DIR/stats" type percpu_array key 4 value 1024 entries 1 \
		name stats
	run "$SHEDCTL" --netns "$NS_SRV" status --interval 100ms
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stats: 1024-byte values, a layout this build does not know"* ]]
}

@test "the pins of a release from before they moved under ns:INODE are found, carried over and moved" {
	[ -z "${OLD_MISSING:-}" ] || skip "$OLD_MISSING"
	need_release "$UPGRADE_FROM_OLDER_PATH" "$OLD0" shedd
	OLDER_DIR="/sys/fs/bpf/shedd/$IF_SRV"
	[ ! -e "$OLDER_DIR" ]
	SHEDD="$OLD0/shedd" shedd_start --port "$PORT" --rate 200 --burst 20 --keep-on-exit \
		--prefix 198.19.7.0/24=critical
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	[ -e "$OLDER_DIR/link" ]
	[ -e "$OLDER_DIR/stats" ]
	[ ! -e "$PIN_DIR/link" ]
	old_prog=$(bpftool -j link show pinned "$OLDER_DIR/link" | jq .prog_id)
	link=$(bpftool -j link show pinned "$OLDER_DIR/link" | jq .id)
	[ "$(bpftool -j map show pinned "$OLDER_DIR/stats" | jq .bytes_value)" -eq 184 ]
	counters "$BATS_TEST_TMPDIR/before" "$OLDER_DIR"
	before=$(bpftool map dump pinned "$OLDER_DIR/stats" | jq '[.[0].values[].value.cls[].syn] | add')
	[ "$before" -eq 1000 ]
	upgrade_under_flood older
	cat "$BATS_TEST_TMPDIR/shedd.log"
	wait_for "the new shedd adopted" 5 grep -q 'adopted the running shedd' \
		"$BATS_TEST_TMPDIR/shedd.log"
	grep -q "found the running shedd of $IF_SRV at the older path" "$BATS_TEST_TMPDIR/shedd.log"
	[ "$(link_id)" = "$link" ]
	now=$(link_prog)
	[ "$now" != "$old_prog" ]
	[ ! -e "$OLDER_DIR" ]
	after=$(syn_all)
	echo "# SYNs judged: before $before, sent $SENT during the upgrade, after $after" >&3
	[ "$after" -eq $((before + SENT)) ]
	# The per-class counters moved to their fields in today's layout.
	counters "$BATS_TEST_TMPDIR/after"
	kept "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# The configured prefix was carried (the new shedd's configuration
	# then decides: it has none).
	grep -q 'upgrade: prefix_v4: 1 entries carried over' "$BATS_TEST_TMPDIR/shedd.log"
	run "$SHEDCTL" --netns "$NS_SRV" status --interval 100ms
	[ "$status" -eq 0 ]
}

# tc_prog: the program id of the tc hand-off's filter on the server's veth.
tc_prog() {
	in_srv tc filter show dev "$IF_SRV" ingress | grep -o 'shedd_handoff.* id [0-9]*' |
		grep -o '[0-9]*$'
}

@test "with verified admission's tc hand-off, an upgrade replaces it and a failed one puts it back" {
	need_old
	if ! old_start --port "$PORT" --rate 200 --burst 20 --keep-on-exit --handoff tc; then
		skip "the release's tc hand-off does not load on this kernel"
	fi
	stop
	old_tc=$(tc_prog)
	[ -n "$old_tc" ]
	old_prog=$(link_prog)
	run timeout 20 env SHEDD_TEST_MIGRATE_FAIL=swap "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" \
		--port "$PORT" --rate 200 --burst 20 --keep-on-exit --handoff tc
	echo "$output"
	[ "$status" -eq 3 ]
	[ "$(link_prog)" = "$old_prog" ]
	[ "$(tc_prog)" = "$old_tc" ]
	[ "$(bpftool -j prog show pinned "$PIN_DIR/handoff" | jq .id)" = "$old_tc" ]
	before=$(syn_all)
	UPGRADE_OPTS="--handoff tc" upgrade_under_flood verified
	cat "$BATS_TEST_TMPDIR/shedd.log"
	grep -q "upgraded the pins of $IF_SRV" "$BATS_TEST_TMPDIR/shedd.log"
	now=$(link_prog)
	[ "$now" != "$old_prog" ]
	now=$(tc_prog)
	[ "$now" != "$old_tc" ]
	after=$(syn_all)
	echo "# SYNs judged (verified admission): before $before, sent $SENT, after $after" >&3
	[ "$after" -eq $((before + SENT)) ]
}

# Pins of the layout before port_set: every map they have is reused, and
# the program, which has no port_set, is still replaced by one that reads
# it, filled from the configuration before the swap.
@test "an upgrade from layout version 3, every map reused, swaps in the program that reads port_set" {
	[ -z "${PREV_MISSING:-}" ] || skip "$PREV_MISSING"
	need_release "$UPGRADE_FROM_PREV" "$PREV" shedd
	local old_prog now ids
	SHEDD="$PREV/shedd" shedd_start --verify off --port "$PORT" --rate 200 --burst 20 \
		--keep-on-exit
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	old_prog=$(link_prog)
	counters "$BATS_TEST_TMPDIR/before"
	upgrade_under_flood prev
	cat "$BATS_TEST_TMPDIR/shedd.log"
	wait_for "the new shedd adopted" 5 grep -q 'adopted the running shedd' \
		"$BATS_TEST_TMPDIR/shedd.log"
	grep -q "upgraded the pins of $IF_SRV from layout version 3 to $LAYOUT: 17 maps of a new layout" \
		"$BATS_TEST_TMPDIR/shedd.log"
	now=$(link_prog)
	[ "$now" != "$old_prog" ]
	# The program in the link reads the pinned port_set.
	ids=$(bpftool -j prog show id "$now" | jq -r '.map_ids[]')
	grep -qx "$(bpftool -j map show pinned "$PIN_DIR/port_set" | jq .id | num)" <<<"$ids"
	counters "$BATS_TEST_TMPDIR/after"
	figures "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	kept "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# Every SYN of the flood was judged, by one program or the other.
	[ "$(syn_all)" -eq $(( 1000 + SENT )) ]
	# And the new one protects the port: a flood after the upgrade is judged.
	flood 198.19.0.0/16 500 1 >/dev/null
	[ "$(syn_all)" -eq $(( 1500 + SENT )) ]
}

# next_layout VERSION OLDEST: the pins as a shedd of layout VERSION would
# leave them, saying a shedd of version OLDEST may adopt them
# (layout_compat), with a map of its own this build does not know.
next_layout() {
	bpftool map update pinned "$PIN_DIR/layout" key 0 0 0 0 value "$1" 0 0 0 0 0 0 0
	bpftool map update pinned "$PIN_DIR/layout_compat" key 0 0 0 0 value "$2" 0 0 0
	[ -e "$PIN_DIR/next_map" ] ||
		bpftool map create "$PIN_DIR/next_map" type array key 4 value 8 entries 1 name next_map
}
layout_now() { bpftool map dump pinned "$PIN_DIR/layout" | jq '.[0].value.version' | num; }

@test "pins of the next layout version that say this build may adopt them are adopted under a flood; pins that do not are refused while the program sheds" {
	shedd_start --verify off --port "$PORT" --rate 200 --burst 20 --keep-on-exit
	run "$SHEDCTL" --netns "$NS_SRV" rate pin 150
	[ "$status" -eq 0 ]
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	[ "$(bpftool map dump pinned "$PIN_DIR/layout_compat" | jq '.[0].value.oldest')" -eq "$COMPAT" ]
	# The next release ran and left them: readable by this build's version.
	next=$((LAYOUT + 1))
	next_layout "$next" "$LAYOUT"
	link=$(link_id)
	old_prog=$(link_prog)
	before=$(syn_all)
	run "$SHEDCTL" --netns "$NS_SRV" status --json --interval 100ms
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
	upgrade_under_flood next
	cat "$BATS_TEST_TMPDIR/shedd.log"
	wait_for "the shedd adopted" 5 grep -q 'adopted the running shedd' "$BATS_TEST_TMPDIR/shedd.log"
	grep -q "are of layout version $next, newer than this build's $LAYOUT, and say a shedd of version $LAYOUT may adopt them as they are: adopted" \
		"$BATS_TEST_TMPDIR/shedd.log"
	run grep -c 'upgraded the pins' "$BATS_TEST_TMPDIR/shedd.log"
	[ "$output" -eq 0 ]
	# No gap: the same link, our program in it, every SYN judged.
	[ "$(link_id)" = "$link" ]
	now=$(link_prog)
	[ "$now" != "$old_prog" ]
	[ "$(syn_all)" -eq $((before + SENT)) ]
	# What it does not know is left as it is; what it knows is its own.
	[ -e "$PIN_DIR/next_map" ]
	[ "$(layout_now)" -eq "$LAYOUT" ]
	run "$SHEDCTL" --netns "$NS_SRV" status --json --interval 100ms
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
	stop

	# Pins of a layout that changed what this build reads (oldest the
	# next): refused before anything changes, the program sheds on.
	next_layout "$next" "$next"
	prog=$(link_prog)
	run timeout 20 "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --verify off --port "$PORT" \
		--rate 200 --keep-on-exit
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"are of layout version $next, which a shedd of version $next or later may adopt; this build knows versions up to $LAYOUT"* ]]
	[[ "$output" == *"remove them with --remove to start afresh"* ]]
	[ "$(link_prog)" = "$prog" ]
	[ "$(layout_now)" -eq "$next" ]
	before=$(syn_all)
	line=$(flood 198.19.0.0/16 500 1)
	[ "$(syn_all)" -eq $((before + $(field sent "$line"))) ]
	run "$SHEDCTL" --netns "$NS_SRV" status --interval 100ms
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"layout version $next"* ]]
	# --remove takes everything, the newer map too.
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	[ "$status" -eq 0 ]
	[ ! -e "$PIN_DIR" ]
}

# Pins of layout version 6: the sketch had 1024 cells a row, and where a
# cell lies depends on the row's size, so version 7 counts in a map of its
# own (fair_cells) that starts afresh; every other map is reused, the
# program swapped under a flood. fair_sketch stays, unused, and the release
# of version 6 adopts the pins back as they are.
@test "an upgrade from layout version 6 under a flood starts the wider sketch afresh and keeps the rest; version 6 adopts the pins back" {
	[ -z "${OLD_MISSING:-}" ] || skip "$OLD_MISSING"
	need_release "$UPGRADE_FROM_L6" "$L6" shedd shedctl
	local old_prog link cells counted
	SHEDD="$L6/shedd" shedd_start --verify off --port "$PORT" --rate 200 --burst 20 \
		--keep-on-exit
	run "$L6/shedctl" --netns "$NS_SRV" rate pin 150
	[ "$status" -eq 0 ]
	flood 198.19.0.0/16 1000 1 >/dev/null
	stop
	old_prog=$(link_prog)
	link=$(link_id)
	cells=$(bpftool -j map show pinned "$PIN_DIR/fair_sketch" | jq .max_entries | num)
	[ "$cells" -eq $((4 * 3 * 2 * 1024)) ]
	[ ! -e "$PIN_DIR/fair_cells" ]
	counters "$BATS_TEST_TMPDIR/before"
	before=$(syn_all)
	upgrade_under_flood l6
	cat "$BATS_TEST_TMPDIR/shedd.log"
	wait_for "the new shedd adopted" 5 grep -q 'adopted the running shedd' \
		"$BATS_TEST_TMPDIR/shedd.log"
	grep -q "upgraded the pins of $IF_SRV from layout version 6 to $LAYOUT" \
		"$BATS_TEST_TMPDIR/shedd.log"
	# No gap: the same link, every SYN judged, no counter back.
	[ "$(link_id)" = "$link" ]
	[ "$(link_prog)" != "$old_prog" ]
	[ "$(syn_all)" -eq $((before + SENT)) ]
	counters "$BATS_TEST_TMPDIR/after"
	kept "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	[ "$(bpftool -j map show pinned "$PIN_DIR/fair_cells" | jq .max_entries | num)" -eq \
		$((4 * 3 * 2 * 16384)) ]
	# The old sketch is left as it was, for version 6.
	[ "$(bpftool -j map show pinned "$PIN_DIR/fair_sketch" | jq .max_entries | num)" -eq "$cells" ]
	run "$SHEDCTL" --netns "$NS_SRV" status --json --interval 100ms
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .pinned_rate_per_sec)" = 150 ]
	# The new sketch counts what the program admits.
	counted=$(bpftool map dump pinned "$PIN_DIR/fair_stats" | jq '[.[].values[].value.counted] | add')
	flood 198.19.0.0/16 500 1 >/dev/null
	[ "$(bpftool map dump pinned "$PIN_DIR/fair_stats" | jq '[.[].values[].value.counted] | add')" \
		-gt "$counted" ]
	stop
	# The release of version 6 adopts them back as they are, under a
	# flood: a downgrade without a gap.
	link=$(link_id)
	before=$(syn_all)
	SHEDD="$L6/shedd" upgrade_under_flood back
	wait_for "version 6 adopted" 5 grep -q \
		"are of layout version $LAYOUT, newer than this build's 6, and say a shedd of version $COMPAT may adopt them as they are: adopted" \
		"$BATS_TEST_TMPDIR/shedd.log"
	[ "$(link_id)" = "$link" ]
	[ "$(syn_all)" -eq $((before + SENT)) ]
	[ "$(layout_now)" -eq 6 ]
	stop
	run "$L6/shedd" --netns "$NS_SRV" --iface "$IF_SRV" --remove
	[ "$status" -eq 0 ]
	[ ! -e "$PIN_DIR" ]
}
