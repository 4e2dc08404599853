#!/bin/sh
# fuzz.sh BINARY [SECONDS] - a libFuzzer target for SECONDS (default
# $SHEDD_FUZZ_SECONDS, else 3) from its seed corpus tests/corpus/NAME/ and
# dictionary tests/corpus/NAME.dict (NAME: the binary's name without fuzz_),
# reported as one TAP test. New inputs go to a temporary folder, so the
# seed corpus does not change; a crashing input is kept next to the binary
# (crash-*), and the line to replay it is printed.
set -u
bin=$1
secs=${2:-${SHEDD_FUZZ_SECONDS:-3}}
name=$(basename "$bin")
name=${name#fuzz_}
root=$(cd "$(dirname "$0")/.." && pwd)
seeds="$root/tests/corpus/$name"
dict="$root/tests/corpus/$name.dict"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
art="$(cd "$(dirname "$bin")" && pwd)/"

echo "1..1"
"$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
	-dict="$dict" -artifact_prefix="$art" "$work" "$seeds" >"$work/log" 2>&1
rc=$?
sed 's/^/# /' "$work/log" | grep -E '^# (INFO: seed|#[0-9]+[[:space:]]*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|==|SUMMARY|.*ERROR|.*Test unit written|.*runtime error)'
if [ "$rc" -eq 0 ]; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	echo "ok 1 - $name: $runs inputs in ${secs}s, no crash, every check held"
else
	echo "# full log:"
	sed 's/^/#   /' "$work/log" | tail -n 60
	echo "# replay: $bin $art""crash-..."
	echo "not ok 1 - $name: libFuzzer exit $rc"
	exit 1
fi
