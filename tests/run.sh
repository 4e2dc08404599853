#!/bin/sh
# run.sh - every test of `make test`, through prove, which prints the summary:
# the test binaries named as arguments (unit tests, XDP tests on crafted
# packets) and the integration tests on a namespace testbed (root).
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: the XDP and integration tests need root (sudo make test)" >&2
	exit 1
fi
# The test binaries come from the Makefile (its UNIT_TESTS and XDP_TESTS).
exec prove -v --timer --exec tests/exec.sh "$@" tests/integration/*.bats
