#!/usr/bin/env bats
# testbed.bats - the testbed itself: runs that overlap never share a
# namespace name, and what a run killed before its teardown left behind is
# removed by the next run.

load lib

# other_run FILE SEED: a testbed in another process, as a second run on the
# machine would make, its RANDOM seeded with SEED: it writes its id to FILE
# and waits to be killed.
other_run() {
	bash -c 'source "$1/scripts/testbed.sh"; TESTBED_TMP=$2
		RANDOM=$4
		testbed_up || exit 1
		echo "$TESTBED_ID" >"$3.tmp" && mv "$3.tmp" "$3"
		exec sleep 60' _ "$ROOT" "$BATS_TEST_TMPDIR" "$1" "$2" 2>>"$BATS_TEST_TMPDIR/other.log" &
	OTHER_PID=$!
	OTHER_PIDS+=("$OTHER_PID")
	wait_for "the other run's testbed" 10 test -s "$1"
	OTHER_ID=$(cat "$1")
	OTHER_IDS+=("$OTHER_ID")
}

OTHER_PIDS=()
OTHER_IDS=()

teardown() {
	local pid id
	for pid in "${OTHER_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	for id in "${OTHER_IDS[@]}"; do
		testbed_remove "$id"
		rm -f "$TESTBED_RUN/$id"
	done
	testbed_down
}

@test "overlapping runs whose random numbers agree still get distinct names" {
	other_run "$BATS_TEST_TMPDIR/other.id" 7
	echo "other run: testbed $OTHER_ID"
	[ -e "/run/netns/shd-cli-$OTHER_ID" ]
	# The same seed draws the same first id here: it is taken, so another.
	RANDOM=7
	testbed_up
	echo "this run: testbed $TESTBED_ID"
	[ "$TESTBED_ID" != "$OTHER_ID" ]
	[ -e "/run/netns/$NS_CLI" ]
	[ -e "/run/netns/shd-cli-$OTHER_ID" ]
	# Both owners are recorded, each with its own pid.
	read -r owner _ <"$TESTBED_RUN/$OTHER_ID"
	[ "$owner" -eq "$OTHER_PID" ]
	read -r owner _ <"$TESTBED_RUN/$TESTBED_ID"
	[ "$owner" -eq "$BASHPID" ]
}

@test "a run killed before its teardown is swept by the next, a live one is not" {
	other_run "$BATS_TEST_TMPDIR/dead.id" 7
	dead=$OTHER_ID
	# That run's shedd left its program shedding: its pins where today's
	# shedd makes them (under ns:INODE), and its latency socket.
	dead_pins="/sys/fs/bpf/shedd/ns:$(stat -L -c %i "/run/netns/shd-srv-$dead")/shds$dead"
	"$SHEDD" --netns "shd-srv-$dead" --iface "shds$dead" --verify off --rate 100 \
		--metrics-addr none 2>"$BATS_TEST_TMPDIR/dead.log" &
	dead_shedd=$!
	OTHER_PIDS+=("$dead_shedd")
	wait_for "the killed run's shedd attached" 5 grep -q 'attached to' "$BATS_TEST_TMPDIR/dead.log"
	kill -KILL "$dead_shedd"
	wait "$dead_shedd" || true
	[ -e "$dead_pins/link" ]
	dead_sock=$(ls /run/shedd/ns:*/"shds$dead.sock")
	# And pins at the path of a shedd in the initial namespace.
	mkdir -p "/sys/fs/bpf/shedd/shds$dead"
	kill -KILL "$OTHER_PID"
	wait "$OTHER_PID" || true
	[ -e "/run/netns/shd-srv-$dead" ]
	[ -e "$TESTBED_RUN/$dead" ]
	other_run "$BATS_TEST_TMPDIR/live.id" 8
	live=$OTHER_ID
	testbed_up
	cat "$BATS_TEST_TMPDIR/other.log"
	# The dead run's namespaces and owner file are gone; the live run's stay.
	[ ! -e "/run/netns/shd-cli-$dead" ]
	[ ! -e "/run/netns/shd-srv-$dead" ]
	[ ! -e "$TESTBED_RUN/$dead" ]
	[ ! -e "/sys/fs/bpf/shedd/shds$dead" ]
	[ ! -e "$dead_pins" ]
	[ ! -e "${dead_pins%/*}" ]
	[ ! -e "$dead_sock" ]
	[ -e "/run/netns/shd-cli-$live" ]
	[ -e "$TESTBED_RUN/$live" ]
	grep -q "removing testbed $dead left by pid" "$BATS_TEST_TMPDIR/other.log"
}
