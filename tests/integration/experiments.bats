#!/usr/bin/env bats
# experiments.bats - `make experiments` end to end on a short run: an
# experiment (recovery, one cell of a few seconds) makes its own testbed,
# prints a progress line per cell, and writes its CSV, its markdown table
# with the command that reproduces it, and its plot as a PNG; it leaves no
# testbed behind. And the model behind the knee experiment gives the
# textbook M/M/1 figures.

load lib

# png_magic FILE: the first 8 bytes of FILE in hex.
png_magic() {
	od -An -tx1 -N8 "$1" | tr -d ' \n'
}

@test "a short recovery run writes recovery.csv, recovery.md and recovery.png and removes its testbed" {
	out="$BATS_TEST_TMPDIR/out"
	before=$(ls /run/netns 2>/dev/null | grep -c '^shd-' || true)
	run env EXP_OUT="$out" RECOVERY_CELLS="budget:ramp:stall" CALM=1 SPIKE=2 AFTER=3 STALL=1 \
		"$ROOT/scripts/experiments.sh" recovery
	echo "$output"
	[ "$status" -eq 0 ]
	# The progress line of its one cell, with the time so far (the testbed
	# may take a second or more to come up on a loaded host) and an ETA.
	echo "$output" | grep -q '^recovery: cell 1/1 budget clients, ramp, stall ([0-9]*:[0-9][0-9] elapsed, ETA [0-9]*:[0-9][0-9])$'
	# One row per second of the 6 s run, each with its goodput and the
	# limit shedd had (a number: shedd ran and was read).
	[ "$(head -n 1 "$out/recovery.csv")" = "cell,client,config,scenario,second,offered,ok,retries,ok_pct_of_base,limit" ]
	[ "$(grep -c '^budget-ramp-stall,budget,ramp,stall,' "$out/recovery.csv")" -eq 6 ]
	[ "$(awk -F, 'NR > 1 && $10 ~ /^[0-9.]+$/' "$out/recovery.csv" | wc -l)" -ge 4 ]
	[ "$(awk -F, 'NR > 1 { s += $7 } END { print s + 0 }' "$out/recovery.csv")" -gt 0 ]
	# The table says how to reproduce it, and has the cell's row.
	grep -q '^Made by `make experiments EXPERIMENT=recovery CALM=1 SPIKE=2 AFTER=3 STALL=1 RECOVERY_CELLS=budget:ramp:stall` on ' "$out/recovery.md"
	grep -q '^| budget | ramp | stall | [0-9]* | [0-9]* | [0-9]* | [0-9]* | ' "$out/recovery.md"
	grep -q '^!\[recovery\](recovery.png)$' "$out/recovery.md"
	# A PNG, not an empty file or an error message.
	[ "$(png_magic "$out/recovery.png")" = 89504e470d0a1a0a ]
	[ "$(stat -c %s "$out/recovery.png")" -gt 10000 ]
	after=$(ls /run/netns 2>/dev/null | grep -c '^shd-' || true)
	[ "$after" -le "$before" ]
}

@test "an unknown experiment is refused with the list of the known ones" {
	run "$ROOT/scripts/experiments.sh" nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown experiment 'nosuch' (goodput, classes, recovery, knee, fairness, flood, proxy, soak)"* ]]
}

@test "the knee's M/M/c model gives M/M/1's p99 of ln(100) S / (1 - rho): 92 ms at 50 %, 921 ms at 95 %" {
	# The function as the experiment defines it.
	eval "$(sed -n '/^mmc() {$/,/^}$/p' "$ROOT/scripts/exp/knee.sh")"
	SERVICE_MS=10
	run mmc 1 0.5
	[ "$status" -eq 0 ]
	[ "$output" = "13.86 92.10 0.12" ]
	run mmc 1 0.95
	[ "$output" = "138.63 921.03 15.60" ]
	# M/M/4 at 90 %: Erlang C of 0.7455; the response time's p99 by
	# the closed form, 121.9 ms (wait rate c mu - lambda = 40/s).
	run mmc 4 0.9
	[ "$output" = "22.55 121.93 0.95" ]
}
