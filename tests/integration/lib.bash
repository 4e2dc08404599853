# lib.bash - helpers of the integration tests, on top of scripts/testbed.sh.

TESTBED_TMP=$BATS_TEST_TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/testbed.sh"

# within VALUE LOW HIGH: integer bounds check that says what failed.
within() {
	if [ "$1" -lt "$2" ] || [ "$1" -gt "$3" ]; then
		echo "expected $2 <= $1 <= $3" >&2
		return 1
	fi
}

xdp_attached() {
	in_srv ip link show dev "$IF_SRV" | grep -q 'xdp'
}
