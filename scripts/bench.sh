#!/usr/bin/env bash
# bench.sh - `make bench`: every section in one run, then the report.
#   1. per-packet cost with BPF_PROG_TEST_RUN (.output/bench_xdp)
#   2. flood throughput on the flood testbed (scripts/bench_flood.sh)
#   3, 4. the daemon's cost and the controller's reaction
#      (scripts/bench_daemon.sh)
# Each section keeps its own options (see each script); this one shares
# their output folder and writes what each printed, with the command, the
# machine, the date and how long each took, to $BENCH_MD. Run as root.
#   BENCH_OUT=DIR      the sections' CSV files (default: a new temporary dir)
#   BENCH_MD=FILE      the report (default docs/results/bench.md)
#   BENCH_SECTIONS="perpkt flood daemon"
#   BENCH_REPORT_ONLY=1  write the report from the logs in $BENCH_OUT of an
#                        earlier run, without running anything
set -euo pipefail
cd "$(dirname "$0")/.."

# The command that reproduces this run: the settings given, then make.
command="make bench"
for v in BENCH_SECTIONS BENCH_ROUNDS BENCH_REPEAT BENCH_SECS BENCH_FAMILIES \
	BENCH_FLOOD_CONFIGS DAEMON_ROUNDS REACT_ROUNDS; do
	[ -n "${!v:-}" ] && command="$v=\"${!v}\" $command"
done
BENCH_SECTIONS=${BENCH_SECTIONS:-"perpkt flood daemon"}
BENCH_MD=${BENCH_MD:-docs/results/bench.md}
export BENCH_OUT=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/shedd-bench.XXXXXX")}
mkdir -p "$BENCH_OUT" "$(dirname "$BENCH_MD")"
for s in $BENCH_SECTIONS; do
	case $s in perpkt | flood | daemon) ;;
	*) echo "bench: unknown section '$s' (perpkt, flood, daemon)" >&2; exit 2 ;;
	esac
done

# run NAME CMD...: a section, its output on the terminal and in its log.
run() {
	local name=$1 t0 rc=0
	shift
	echo "=== bench: $name"
	t0=$(date +%s)
	"$@" 2>&1 | tee "$BENCH_OUT/$name.log" || rc=$?
	echo $(( $(date +%s) - t0 )) >"$BENCH_OUT/$name.secs"
	echo "$rc" >"$BENCH_OUT/$name.rc"
}

if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
	start=$(date +%s)
	for s in $BENCH_SECTIONS; do
		case $s in
		perpkt) run perpkt .output/bench_xdp ;;
		flood) run flood scripts/bench_flood.sh ;;
		daemon) run daemon scripts/bench_daemon.sh ;;
		esac
	done
	echo $(( $(date +%s) - start )) >"$BENCH_OUT/total.secs"
fi
total=$(cat "$BENCH_OUT/total.secs")

{
	echo "# Benchmarks"
	echo
	echo "Made by \`$command\` on $(date -u +%Y-%m-%d), Linux $(uname -r)," \
		"$(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo))," \
		"in $total s. Every figure is one of a side-by-side run: the" \
		"configurations of a section interleaved round by round, min / median /" \
		"max over the rounds, ratios within the run."
	for s in $BENCH_SECTIONS; do
		case $s in
		perpkt) title="1. Per-packet cost (BPF_PROG_TEST_RUN)" ;;
		flood) title="2. Flood throughput (the flood testbed)" ;;
		daemon) title="3, 4. The daemon's cost and the controller's reaction" ;;
		esac
		echo
		echo "## $title"
		echo
		echo "$(cat "$BENCH_OUT/$s.secs") s, exit status $(cat "$BENCH_OUT/$s.rc")."
		echo
		echo '```'
		# Where this machine kept the files is of no use to a reader.
		sed -e "s|$BENCH_OUT|\$BENCH_OUT|g" -e "s|$PWD/|./|g" "$BENCH_OUT/$s.log"
		echo '```'
	done
} >"$BENCH_MD"
echo "bench: wrote $BENCH_MD; CSV files in $BENCH_OUT"
for s in $BENCH_SECTIONS; do
	[ "$(cat "$BENCH_OUT/$s.rc")" -eq 0 ] || { echo "bench: section $s failed" >&2; exit 1; }
done
