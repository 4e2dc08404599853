#!/usr/bin/env bats
# experiments.bats - `make experiments` end to end on a short run: an
# experiment (recovery, one cell of a few seconds) makes its own testbed,
# prints a progress line per cell, and writes its CSV, its markdown table
# with the command that reproduces it, and its plot as a PNG; it leaves no
# testbed behind. The scale experiment, on its short run, writes a CSV of
# every simulation's table, a section of scale.md for each dimension and
# its plot. And the model behind the knee experiment gives the textbook
# M/M/1 figures.

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
	[[ "$output" == *"unknown experiment 'nosuch' (goodput, classes, recovery, knee, fairness, flood, proxy, keepalive, soak, scale)"* ]]
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

@test "a short scale run writes a CSV of every table, scale.md naming each dimension, and scale.png" {
	out="$BATS_TEST_TMPDIR/out"
	run env EXP_OUT="$out" SCALE_QUICK=1 "$ROOT/scripts/experiments.sh" scale
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^scale: cell 6/6 test_keepalive ([0-9]*:[0-9][0-9] elapsed, ETA [0-9]*:[0-9][0-9])$'
	# Each table: its header, and a row of each size the short run keeps.
	[ "$(head -n 1 "$out/scale-rate.csv")" = "service,start,cpus,probes,max_rate_per_sec,conn_per_sec,capacity_per_sec,offered,shed,shed_pct,reach_s,mean_limit_per_sec,goodput_per_sec,goodput_pct_of_capacity,overload_ticks,at_max_ticks,ticks" ]
	for r in 1000 10000 50000 150000; do
		grep -q "^healthy,fresh,128,yes,10000000,$r,$((2 * r)),[0-9]*,0,0.000,0.0," "$out/scale-rate.csv"
		grep -q "^overloaded,fresh,128,yes,10000000,$r,$((r / 2)),[0-9]*,[1-9][0-9]*," "$out/scale-rate.csv"
	done
	[ "$(head -n 1 "$out/scale-cpus.csv")" = "case,cpus,rate_per_sec,spread,clock_tick_ms,class,offered_per_sec,admitted_per_sec,allocated_per_sec,saturated,admitted_pct" ]
	for n in 1 2 16 32 64 128; do
		[ "$(awk -F, -v n="$n" '$2 == n' "$out/scale-cpus.csv" | wc -l)" -ge 16 ]
	done
	[ "$(head -n 1 "$out/scale-cpus-burst.csv")" = "cpus,clock_tick_ms,spike_syns,admitted,burst,rate_per_sec" ]
	[ "$(awk -F, 'NR > 1 { print $1 }' "$out/scale-cpus-burst.csv" | sort -nu | tr '\n' ' ')" = "2 16 64 128 " ]
	[ "$(head -n 1 "$out/scale-cpus-fair.csv")" = "heavy,cpus,rate_per_sec,share_per_sec,light_alone_pct,light_fair_pct,light_nofair_pct,heavy_fair_per_sec,heavy_limit_per_sec,heavy_nofair_per_sec,heavy_fits_per_sec" ]
	[ "$(awk -F, 'NR > 1' "$out/scale-cpus-fair.csv" | wc -l)" -eq 12 ]
	[ "$(head -n 1 "$out/scale-sources.csv")" = "sources,fresh_shed_pct,light_ok_fair_pct,light_ok_nofair_pct,heavy_addr_x_share,heavy_net64_x_share,heavy_net24_x_share,limit_addr_per_window,noise_addr_per_window,counted_addr,rate_per_sec,share_per_sec" ]
	[ "$(awk -F, 'NR > 1 { print $1 }' "$out/scale-sources.csv" | tr '\n' ' ')" = "10 1000 10000 " ]
	[ "$(head -n 1 "$out/scale-listeners.csv")" = "listeners,offered_per_sec,no_shedd_per_sec,summed_per_sec,summed_pct,one_by_one_per_sec,one_by_one_pct,limit_per_sec,stuck_named_ticks,ticks" ]
	[ "$(awk -F, 'NR > 1 { print $1 }' "$out/scale-listeners.csv" | tr '\n' ' ')" = "1 2 4 16 " ]
	[ "$(head -n 1 "$out/scale-listeners-overload.csv")" = "listeners,offered_per_sec,healthy_capacity_per_sec,no_shedd_per_sec,shedd_per_sec,limit_per_sec,overload_pct" ]
	[ "$(awk -F, 'NR > 1 { print $1 }' "$out/scale-listeners-overload.csv" | tr '\n' ' ')" = "2 4 16 " ]
	[ "$(head -n 1 "$out/scale-ports.csv")" = "listeners,ports,offered_per_sec,no_shedd_per_sec,before_per_sec,before_pct,ports_per_sec,ports_pct,limit_per_sec,own_ticks,limited_ticks,ticks,port_syn,port_shed" ]
	[ "$(awk -F, 'NR > 1 { print $1 "/" $2 }' "$out/scale-ports.csv" | tr '\n' ' ')" = "1/1 2/2 4/2 4/4 8/2 8/8 16/4 16/8 " ]
	[ "$(head -n 1 "$out/scale-ports-overload.csv")" = "listeners,ports,offered_per_sec,no_shedd_per_sec,before_per_sec,ports_per_sec,hot_capacity_per_sec,hot_offered_per_sec,hot_no_shedd_per_sec,hot_before_per_sec,hot_ports_per_sec,limited_ticks,ticks" ]
	[ "$(awk -F, 'NR > 1 { print $1 "/" $2 }' "$out/scale-ports-overload.csv" | tr '\n' ' ')" = "2/2 4/2 8/4 16/8 " ]
	[ "$(head -n 1 "$out/scale-keepalive.csv")" = "n,load,goodput_shedd_pct,goodput_none_pct,sessions_offered_per_sec,admitted,completed,none_admitted,none_completed,limit_per_sec,fits_per_sec" ]
	[ "$(awk -F, 'NR > 1 { print $1 "@" $2 }' "$out/scale-keepalive.csv" | tr '\n' ' ')" = "1@3.0 5@3.0 20@3.0 100@3.0 " ]
	# The table: the command, a section per dimension, each with rows.
	grep -q '^Made by `make experiments EXPERIMENT=scale SCALE_QUICK=1` on ' "$out/scale.md"
	grep -q '^## New connections per second, 1 k to 1 M' "$out/scale.md"
	grep -q '^## CPUs, 1 to 128' "$out/scale.md"
	grep -q '^## Sources per window, 10 to 1 M' "$out/scale.md"
	grep -q '^## SO_REUSEPORT listeners, 1 to 64, one stopped' "$out/scale.md"
	grep -q '^| fresh | 128 | 10000000 | 150000 | ' "$out/scale.md"
	grep -q '^| 128 | 16 | ' "$out/scale.md"
	grep -q '^| 10000 | ' "$out/scale.md"
	grep -q '^| 16 | 2255.0 | ' "$out/scale.md"
	grep -q '^## Protected ports, 1 to 8 over 1 to 64 listeners, one port stopped' "$out/scale.md"
	grep -q '^## Protected ports, 2 to 8 over 2 to 64 listeners, one port at 3 x its capacity' "$out/scale.md"
	grep -q '^## Requests per connection, 1 to 100: keep-alive sessions behind a proxy' "$out/scale.md"
	grep -q '^| 20 | 3.0 | ' "$out/scale.md"
	grep -q '^!\[scale\](scale.png)$' "$out/scale.md"
	[ "$(png_magic "$out/scale.png")" = 89504e470d0a1a0a ]
	[ "$(stat -c %s "$out/scale.png")" -gt 10000 ]
}
