#!/bin/sh
# exec.sh - how prove runs one test file: cmocka binaries speak TAP when asked,
# bats files through bats --tap, libFuzzer targets through fuzz.sh.
case "$1" in
*.bats) exec bats --tap "$1" ;;
*/fuzz_logline | */fuzz_config | */fuzz_options | */fuzz_cidr) exec "$(dirname "$0")/fuzz.sh" "$1" ;;
*) CMOCKA_MESSAGE_OUTPUT=TAP exec "$1" ;;
esac
