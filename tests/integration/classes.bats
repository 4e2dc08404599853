#!/usr/bin/env bats
# classes.bats - priority with floors on the wire: a higher class keeps what
# it asks for while a lower one is shed, and the lower one keeps its floor.

# The flood here is spoofed and sheds: verified admission would answer it
# with cookies instead of charging it. These tests measure the token bucket
# itself, so shedd runs with --verify off; verified.bats tests cookies.

load lib

setup() { testbed_up; listener_start; }
teardown() { testbed_down; }

# r N: the rate N (SYN/s) divided by TESTBED_TIME_SCALE: a guest under
# software emulation (the kernel matrix) sends a few thousand SYN/s at
# most, so there every rate, flood and bound is that much lower; the
# shares and floors are the same.
r() { echo $(( $1 / TESTBED_TIME_SCALE )); }

# rates CP_OFFERED SH_OFFERED: cp_rate and sh_rate, the SYN/s admitted in
# the 5 s floods of both classes (started together: FLOOD_AT), after checking that each flood sent what
# it was asked (a flood that did not run must not pass for a shed one).
rates() {
	local cp sh cp_sent sh_sent cp_acked sh_acked
	cp=$(cat "$BATS_TEST_TMPDIR/cp")
	sh=$(cat "$BATS_TEST_TMPDIR/sh")
	echo "critical_plus: $cp"
	echo "sheddable:     $sh"
	cp_sent=$(field sent "$cp")
	sh_sent=$(field sent "$sh")
	cp_acked=$(field synack "$cp")
	sh_acked=$(field synack "$sh")
	within "$cp_sent" $(( $1 * 5 * 99 / 100 )) $(( $1 * 5 ))
	within "$sh_sent" $(( $2 * 5 * 99 / 100 )) $(( $2 * 5 ))
	cp_rate=$(( cp_acked / 5 ))
	sh_rate=$(( sh_acked / 5 ))
}

@test "critical_plus keeps its share, sheddable is shed to what is left, not below its floor" {
	shedd_start --verify off --port "$PORT" --rate "$(r 1000)" --burst "$(r 100)" \
		--prefix 198.19.1.0/24=critical_plus --floor sheddable=0.1
	at=$(flood_at_soon)
	FLOOD_AT=$at FLOOD_CPU=0 flood_bg "$BATS_TEST_TMPDIR/cp" 198.19.1.0/24 "$(r 700)" 5
	FLOOD_AT=$at flood 198.19.128.0/17 "$(r 5000)" 5 >"$BATS_TEST_TMPDIR/sh"
	wait "$FLOOD_PID"
	rates "$(r 700)" "$(r 5000)"
	echo "admitted critical_plus ${cp_rate}/s of $(r 700)/s, sheddable ${sh_rate}/s of $(r 5000)/s"
	# critical_plus asks 700 of 1000: it gets at least 90 % of it.
	within "$cp_rate" "$(r 630)" "$(r 720)"
	# sheddable gets the remaining ~300/s, never less than its floor of 100/s.
	within "$sh_rate" "$(r 100)" "$(r 400)"
	# Together they stay at the limit.
	within $(( cp_rate + sh_rate )) "$(r 900)" "$(r 1100)"
}

@test "a flood of the highest class leaves the lowest its floor" {
	shedd_start --verify off --port "$PORT" --rate "$(r 1000)" --burst "$(r 100)" \
		--prefix 198.19.1.0/24=critical_plus --floor sheddable=0.2
	at=$(flood_at_soon)
	FLOOD_AT=$at FLOOD_CPU=0 flood_bg "$BATS_TEST_TMPDIR/cp" 198.19.1.0/24 "$(r 5000)" 5
	FLOOD_AT=$at flood 198.19.128.0/17 "$(r 1000)" 5 >"$BATS_TEST_TMPDIR/sh"
	wait "$FLOOD_PID"
	rates "$(r 5000)" "$(r 1000)"
	echo "admitted critical_plus ${cp_rate}/s, sheddable ${sh_rate}/s (floor $(r 200)/s)"
	within "$sh_rate" "$(r 180)" "$(r 260)"
	within "$cp_rate" "$(r 720)" "$(r 880)"
}
