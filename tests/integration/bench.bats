#!/usr/bin/env bats
# bench.bats - the per-packet benchmark's interface, on short runs: the CSV
# it writes into BENCH_OUT, and --check-ratio, which a regression check of
# the fast path can use. It asserts how the bench reports, not shedd's
# figures: the ratios checked hold on any machine (a case against itself,
# shedd's shed path against a program that only drops).

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	BENCH=${BENCH_XDP:-$ROOT/.output/bench_xdp}
	OUT=$(mktemp -d)
	# Short runs: fewer repetitions than figures need (the bench says so).
	SHORT=(--cases syn4_shed --rounds 5 --repeat 100000)
}

teardown() {
	rm -rf "$OUT"
}

@test "a run writes a CSV row per case and round and a summary per case" {
	run env BENCH_OUT="$OUT" "$BENCH" "${SHORT[@]}"
	[ "$status" -eq 0 ]
	[[ "$output" == *"bpf_stats_enabled=0"* ]]
	for c in pass drop readdrop syn4_shed; do
		run grep -c "^round,$c," "$OUT/perpkt.csv"
		[ "$output" -eq 5 ]
		run grep -c "^summary,$c," "$OUT/perpkt.csv"
		[ "$output" -eq 1 ]
	done
	# Every repetition of the shed case was counted as shed.
	run grep "^summary,syn4_shed," "$OUT/perpkt.csv"
	[[ "$output" == *",DROP,direct,100000,"* ]]
	run grep -c '^kernel=' "$OUT/perpkt.env"
	[ "$output" -eq 1 ]
}

@test "--check-ratio exits 0 within every limit and 1 over one" {
	run env BENCH_OUT="$OUT" "$BENCH" "${SHORT[@]}" --check-ratio syn4_shed:syn4_shed:1
	[ "$status" -eq 0 ]
	[[ "$output" == *"check-ratio syn4_shed:syn4_shed:1: "*": ok"* ]]

	run env BENCH_OUT="$OUT" "$BENCH" "${SHORT[@]}" --check-ratio drop:drop:1 \
		--check-ratio syn4_shed:drop:1
	[ "$status" -eq 1 ]
	[[ "$output" == *"check-ratio drop:drop:1: "*": ok"* ]]
	[[ "$output" == *"check-ratio syn4_shed:drop:1: "*": FAIL"* ]]
}

@test "a malformed --check-ratio or an unknown case is refused before the run" {
	run "$BENCH" --check-ratio syn4_shed:readdrop
	[ "$status" -eq 2 ]
	[[ "$output" == *"CASE:REF:MAX"* ]]
	run "$BENCH" --check-ratio syn4_shed:nosuch:3
	[ "$status" -eq 2 ]
	run "$BENCH" --check-ratio syn4_shed:readdrop:0
	[ "$status" -eq 2 ]
	run "$BENCH" --cases syn4_shed,nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *"no case 'nosuch'"* ]]
	[[ "$output" != *"round 1/"* ]]
}
