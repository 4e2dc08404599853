#!/bin/sh
# run.sh - every test of `make test`, through prove, which prints the summary:
# unit tests (no root), XDP tests on crafted packets (BPF_PROG_TEST_RUN) and
# the integration tests on a namespace testbed (both need root).
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: the XDP and integration tests need root (sudo make test)" >&2
	exit 1
fi
OUT=${OUTPUT:-.output}
exec prove -v --timer --exec tests/exec.sh \
	"$OUT/test_bucket" "$OUT/test_alloc" "$OUT/test_options" "$OUT/test_xdp" \
	tests/integration/*.bats
