#!/bin/sh
# exec.sh - how prove runs one test file: cmocka binaries speak TAP when asked,
# bats files through bats --tap.
case "$1" in
*.bats) exec bats --tap "$1" ;;
*) CMOCKA_MESSAGE_OUTPUT=TAP exec "$1" ;;
esac
