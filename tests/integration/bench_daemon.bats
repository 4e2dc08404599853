#!/usr/bin/env bats
# bench_daemon.bats - scripts/bench_daemon.sh (sections 3 and 4 of `make
# bench`) on a short run: every cell and round measured and written as CSV,
# the targets compared, the testbeds removed; bad settings refused.

load lib

BENCH="$ROOT/scripts/bench_daemon.sh"

# csv_col FILE ROW COLUMN: the value of COLUMN (by its header) in data row
# ROW (1-based) of FILE.
csv_col() {
	awk -F, -v r="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		NR == r + 1 { print k ? $k : "no-column" }' "$1"
}

# positive VALUE: a number above 0.
positive() {
	[[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "'$1' is not a number" >&2; return 1; }
	awk -v v="$1" 'BEGIN { exit !(v > 0) }' || { echo "'$1' is not above 0" >&2; return 1; }
}

@test "bench_daemon: a short run measures every cell and round, writes them as CSV and leaves nothing behind" {
	out=$BATS_TEST_TMPDIR/out
	run env BENCH_OUT="$out" DAEMON_ROUNDS=1 DAEMON_SECS=1 DAEMON_FLOOD_RATE=200000 \
		REACT_ROUNDS=1 REACT_PRE_SECS=2 REACT_STEP_SECS=3 REACT_POST_SECS=3 "$BENCH"
	echo "$output"
	[ "$status" -eq 0 ]
	# The start-up and the three cells, one row each.
	[ "$(tail -n +2 "$out/daemon.csv" | cut -d, -f2 | tr '\n' ' ')" = "startup idle flood lat " ]
	positive "$(csv_col "$out/daemon.csv" 1 peak_rss_mib)"
	for row in 2 3 4; do
		cpu=$(csv_col "$out/daemon.csv" "$row" cpu_pct)
		positive "$cpu"
		awk -v v="$cpu" 'BEGIN { exit !(v < 100) }'
		positive "$(csv_col "$out/daemon.csv" "$row" peak_rss_mib)"
		[[ "$(csv_col "$out/daemon.csv" "$row" threads_cpu_pct)" == main=* ]]
	done
	# The flood reached shedd, the samples its socket.
	positive "$(csv_col "$out/daemon.csv" 3 shedd_syn_per_s)"
	positive "$(csv_col "$out/daemon.csv" 4 load_sent_per_s)"
	[ "$(csv_col "$out/daemon.csv" 4 load_unsent)" -eq 0 ]
	echo "$output" | grep -E 'under flood: CPU median [0-9.]+ % .*target <= 2 %: (met|MISSED)'
	echo "$output" | grep -E 'under flood: peak RSS median [0-9.]+ MiB .*target <= 20 MiB: (met|MISSED)'
	grep -q '^flood,cpu_pct,1,0,' "$out/daemon_summary.csv"
	# Both starts of the reaction; from its default start, open at
	# --max-rate (10 000 000), far above the server, a 3x step is cut
	# within the step.
	[ "$(tail -n +2 "$out/reaction.csv" | cut -d, -f1 | tr '\n' ' ')" = "default at-capacity " ]
	[ "$(csv_col "$out/reaction.csv" 1 limit_before)" -eq 10000000 ]
	positive "$(csv_col "$out/reaction.csv" 1 t_cut_s)"
	lim=$(csv_col "$out/reaction.csv" 1 limit_at_cut)
	within "$lim" 10 9999
	positive "$(csv_col "$out/reaction.csv" 1 t_unbound_s)"
	[[ "$(csv_col "$out/reaction.csv" 1 ack_refused_after)" =~ ^[0-9]+$ ]]
	grep -q '^default,t_cut_s,1,0,' "$out/reaction_summary.csv"
	[ -s "$out/reaction_shedd.default.1.log" ]
	# Both testbeds gone: namespaces, pins, owner files.
	ids=$(echo "$output" | awk '$1 == "testbed" { print $2 }')
	[ "$(echo "$ids" | wc -w)" -eq 2 ]
	for id in $ids; do
		for ns in cli rtr srv; do [ ! -e "/run/netns/shd-$ns-$id" ]; done
		[ ! -e "/sys/fs/bpf/shedd-rtr-$id" ]
		[ ! -e "$TESTBED_RUN/$id" ]
	done
}

@test "bench_daemon: a bad setting is refused, named, before any testbed" {
	run env DAEMON_ROUNDS=0 "$BENCH"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"DAEMON_ROUNDS='0': expected a positive integer"* ]]
	run env BENCH_DAEMON_SECTIONS="cost flood" "$BENCH"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown section 'flood'"* ]]
}
