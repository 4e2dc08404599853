#!/bin/sh
# exec.sh - how prove runs one test file: cmocka binaries speak TAP when asked,
# bats files through bats --tap, libFuzzer targets through fuzz.sh.
# SHEDD_SAN_BATS (make test) names bats files to run with the sanitized
# daemon. SHEDD_BATS_SELECT names a file of "BATS_FILE [REGEX]" lines (and #
# comments): a bats file listed there runs only its tests whose names match
# one of its lines' REGEX (a line without one selects the whole file), and
# fails when a line's REGEX matched no test, so a renamed test cannot drop
# out of the selection unseen (the kernel matrix runs a selection in each
# guest).
case "$1" in
*.bats)
	# SHEDD_SAN_BATS names the files whose shedd and shedctl are the
	# sanitizer build's, in SHEDD_SAN_DIR (make test: each of them runs
	# once, sanitized, rather than once plain and again in make san).
	case " ${SHEDD_SAN_BATS:-} " in
	*" $1 "*)
		export SHEDD="$SHEDD_SAN_DIR/shedd" SHEDCTL="$SHEDD_SAN_DIR/shedctl"
		echo "# $1: shedd and shedctl of the sanitizer build"
		;;
	esac
	[ -n "${SHEDD_BATS_SELECT:-}" ] || exec bats --tap "$1"
	sel=$(awk -v f="$1" '/^#/ { next } $1 == f { sub(/^[^ \t]+[ \t]*/, ""); print ($0 == "" ? "." : $0) }' \
		"$SHEDD_BATS_SELECT")
	[ -n "$sel" ] || exec bats --tap "$1"
	filter=$(printf '%s\n' "$sel" | awk '{ f = f (NR > 1 ? "|" : "") "(" $0 ")" } END { print f }')
	tap=$(mktemp)
	exec 3>&1
	rc=$({ { bats --tap -f "$filter" "$1"; echo $? >&4; } | tee "$tap" >&3; } 4>&1)
	# The names that ran, skipped ones too, without bats' "# skip" note.
	sed -n '/^\(not \)\{0,1\}ok [0-9]/ { s/^\(not \)\{0,1\}ok [0-9][0-9]* //; s/ # skip\( .*\)\{0,1\}$//; p; }' \
		"$tap" >"$tap.names"
	printf '%s\n' "$sel" | {
		while IFS= read -r re; do
			grep -Eq -- "$re" "$tap.names" && continue
			echo "exec.sh: $1: the selection's '$re' matches no test" >&2
			rc=1
		done
		rm -f "$tap" "$tap.names"
		exit "$rc"
	}
	exit
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
