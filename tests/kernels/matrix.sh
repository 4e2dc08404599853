#!/bin/bash
# matrix.sh KERNEL... - run tests/kernels/guest.sh on each of Debian's
# kernels under qemu (scripts/kernels.sh), and print what each passed,
# failed and skipped, then the total. Exits non-zero if any test failed or
# a guest gave no result. Each guest's whole console is in
# $MATRIX_LOGS/KERNEL.log (default .output/kernels/).
set -u
cd "$(dirname "$0")/../.." || exit 1
MATRIX_LOGS=${MATRIX_LOGS:-.output/kernels}
# A guest runs the whole selection: give it room under emulation (CI's
# selection takes 4-6 minutes a kernel; the wide one, a test of every
# integration file, about half an hour on a loaded 2-CPU host: the
# Makefile gives it 3600 s).
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-1500}
mkdir -p "$MATRIX_LOGS"
[ "$#" -gt 0 ] || set -- $(scripts/kernels.sh list)

# run_kernel K: boot K, run the guest's tests, its console into $log (the
# lines that say how it goes also to the terminal, each marked with K).
run_kernel() {
	local k=$1 log="$MATRIX_LOGS/$1.log" start rc
	start=$(date +%s)
	echo "matrix: kernel $k: booting"
	# The serial console brings the terminal's colour codes and CRs.
	scripts/kernels.sh run "$k" tests/kernels/guest.sh 2>&1 |
		sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\r//g' | tee "$log" |
		grep --line-buffered -E '^(ok|not ok|guest:|init:|kernels.sh:|exec.sh:|Files=|Result:)' |
		sed -u "s/^/[$k] /"
	rc=${PIPESTATUS[0]}
	echo "$rc $(( $(date +%s) - start ))" >"$log.rc"
}

# The guests side by side, MATRIX_JOBS at a time (default: as many as
# this host has CPUs over the guest's GUEST_CPUS; CI's guests have one
# each): under software emulation a guest runs on as many host threads as
# it has CPUs, and its tests rarely keep more than one busy.
export GUEST_CPUS=${GUEST_CPUS:-1}
MATRIX_JOBS=${MATRIX_JOBS:-$(( $(nproc) / GUEST_CPUS ))}
[ "$MATRIX_JOBS" -ge 1 ] || MATRIX_JOBS=1
running=0
for k in "$@"; do
	rm -f "$MATRIX_LOGS/$k.log.rc"
	if [ "$running" -ge "$MATRIX_JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_kernel "$k" &
	running=$((running + 1))
done
wait

total_pass=0 total_fail=0 total_skip=0 bad=0 summary=""
for k in "$@"; do
	log="$MATRIX_LOGS/$k.log"
	read -r rc secs <"$log.rc" 2>/dev/null || { rc=125 secs=0; }
	# TAP: "ok N name", "not ok N name", and a skip is "ok N name # skip
	# why" from bats, "not ok N # SKIP name" from cmocka.
	# Only the last boot counts: a guest that died is booted again
	# (kernels.sh), and each boot starts with guest.sh's first line.
	awk '/^guest: kernel/ { n = 0 } { line[n++] = $0 } END { for (i = 0; i < n; i++) print line[i] }' \
		"$log" >"$log.last"
	skip=$(grep -cE '^(not )?ok [0-9]+.*# (skip|SKIP)' "$log.last")
	pass=$(grep -E '^ok [0-9]+' "$log.last" | grep -cvE '# (skip|SKIP)')
	fail=$(grep -E '^not ok [0-9]+' "$log.last" | grep -cvE '# (skip|SKIP)')
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		# No result, or a file that died before its tests: a failure.
		fail=1
	fi
	[ "$rc" -eq 0 ] || bad=1
	release=$(grep -m1 -o '^guest: kernel .*' "$log" | cut -d' ' -f3)
	line=$(printf '  %-6s %s (exit %s): %d passed, %d failed, %d skipped in %ds' \
		"$k" "$release" "$rc" "$pass" "$fail" "$skip" "$secs")
	summary="$summary$line
"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done
# Each failed test with its first lines of diagnostics (bats' "# " lines),
# so that the run's tail says what failed and why without the whole log.
for k in "$@"; do
	awk -v k="$k" -v max=40 '
		/^not ok [0-9]+/ && !/# (skip|SKIP)/ { n = 0; show = 1; print "[" k "] " $0; next }
		show && /^#/ { if (n++ < max) print "[" k "]   " $0; else if (n == max + 1) print "[" k "]   # ..."; next }
		{ show = 0 }' "$MATRIX_LOGS/$k.log.last" 2>/dev/null
	# A guest that gave no result: how its console ended.
	read -r rc _ <"$MATRIX_LOGS/$k.log.rc" 2>/dev/null || rc=125
	if [ "$rc" -ne 0 ] && ! grep -qE '^not ok [0-9]+' "$MATRIX_LOGS/$k.log.last" 2>/dev/null; then
		echo "[$k] no test failed, exit $rc; the console ended:"
		tail -n 15 "$MATRIX_LOGS/$k.log" 2>/dev/null | sed "s/^/[$k]   /"
	fi
done
echo "matrix: per kernel"
printf '%s' "$summary"
echo "kernels: $total_pass passed, $total_fail failed, $total_skip skipped"
exit "$bad"
