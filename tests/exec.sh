#!/bin/sh
# exec.sh - how prove runs one test file: cmocka binaries speak TAP when asked,
# bats files through bats --tap, libFuzzer targets through fuzz.sh.
# SHEDD_BATS_SELECT names a file of "BATS_FILE REGEX" lines: a bats file
# listed there runs only its tests whose names match REGEX (the kernel
# matrix runs a selection in each guest).
case "$1" in
*.bats)
	if [ -n "${SHEDD_BATS_SELECT:-}" ]; then
		filter=$(awk -v f="$1" '$1 == f { sub(/^[^ \t]+[ \t]+/, ""); print; exit }' \
			"$SHEDD_BATS_SELECT")
		[ -n "$filter" ] && exec bats --tap -f "$filter" "$1"
	fi
	exec bats --tap "$1"
	;;
*/fuzz_logline | */fuzz_config | */fuzz_options | */fuzz_cidr) exec "$(dirname "$0")/fuzz.sh" "$1" ;;
*) CMOCKA_MESSAGE_OUTPUT=TAP exec "$1" ;;
esac
