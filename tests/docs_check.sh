#!/bin/sh
# docs_check.sh - the docs' generated reference tables (docs/usage.md's
# options, docs/metrics.md's metric families) are what the code gives, as
# TAP for prove: scripts/docs.sh check with .output/gendocs (make builds
# it). `make docs` writes them.
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(scripts/docs.sh check .output/gendocs 2>&1); then
	echo "ok 1 - docs/usage.md and docs/metrics.md hold the option and metric tables the code gives"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok 1 - docs/usage.md and docs/metrics.md hold the option and metric tables the code gives"
	exit 1
fi
