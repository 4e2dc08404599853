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
*)
	# cmocka writes a skipped test as "not ok N # SKIP", which prove
	# counts as a failure: TAP's skip is "ok N # SKIP". The binary's own
	# status is kept.
	exec 3>&1
	rc=$({ { CMOCKA_MESSAGE_OUTPUT=TAP "$1"; echo $? >&4; } |
		sed -u 's/^not ok \([0-9][0-9]*\) # SKIP/ok \1 # SKIP/' >&3; } 4>&1)
	exit "$rc"
	;;
esac
