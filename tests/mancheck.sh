#!/bin/sh
# mancheck.sh BINARY PAGE - a man page agrees with its program's --help:
# the page's OPTIONS section and --help name the same long options, and the
# page renders without a warning of man/groff. Prints what differs; exits 1
# when anything does.
set -eu

if [ "$#" -ne 2 ]; then
	echo "usage: tests/mancheck.sh BINARY PAGE" >&2
	exit 2
fi
bin=$1 page=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The long options a text names: --word, once each, sorted.
long_opts() {
	grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u
}

"$bin" --help >"$tmp/help"
LC_ALL=C MANWIDTH=80 man --warnings -l "$page" >"$tmp/page" 2>"$tmp/warnings"
long_opts <"$tmp/help" >"$tmp/help.opts"
# The OPTIONS section: from its heading to the next one (headings start in
# the first column); examples elsewhere may name other programs' options.
awk '/^[A-Z]/ { in_opts = ($0 == "OPTIONS") } in_opts' "$tmp/page" | long_opts >"$tmp/page.opts"

status=0
if [ ! -s "$tmp/help.opts" ]; then
	echo "mancheck: $bin --help names no long option" >&2
	status=1
fi
if [ -s "$tmp/warnings" ]; then
	echo "mancheck: $page renders with warnings:" >&2
	cat "$tmp/warnings" >&2
	status=1
fi
missing=$(comm -23 "$tmp/help.opts" "$tmp/page.opts")
extra=$(comm -13 "$tmp/help.opts" "$tmp/page.opts")
if [ -n "$missing" ]; then
	echo "mancheck: in '$bin --help' but not in $page:" $missing >&2
	status=1
fi
if [ -n "$extra" ]; then
	echo "mancheck: in $page but not in '$bin --help':" $extra >&2
	status=1
fi
[ "$status" -ne 0 ] || echo "mancheck: $page agrees with $bin --help ($(wc -l <"$tmp/help.opts") long options)"
exit "$status"
