# shellcheck shell=bash
# explib.sh - what every experiment shares, sourced after testbed.sh: the
# command that reproduces a run, a progress line per cell with an ETA, the
# header of each results file (command, machine, date, duration), and the
# plots (gnuplot, PNG). Results go to $EXP_OUT (default docs/results), each
# file named after its experiment: NAME.csv, NAME.md, NAME.png.

EXP_OUT=${EXP_OUT:-docs/results}

# exp_begin NAME CELLS SECS_PER_CELL VAR...: start experiment NAME of CELLS
# cells, about SECS_PER_CELL each (the ETA until the first cell is done).
# The VARs given in the environment are part of the command that reproduces
# it (call before the script assigns their defaults).
exp_begin() {
	local v
	EXP_NAME=$1
	EXP_CELLS=$2
	EXP_CELL_EST=$3
	shift 3
	EXP_CMD="make experiments EXPERIMENT=$EXP_NAME"
	for v in "$@"; do
		[ -n "${!v+set}" ] && EXP_CMD+=" $v=\"${!v}\""
	done
	EXP_CMD=${EXP_CMD//\"/}
	EXP_T0=$(date +%s)
	EXP_DATE=$(date -u +%Y-%m-%d)
	EXP_DONE=0
	mkdir -p "$EXP_OUT"
}

# exp_cells N: the number of cells, once the script knows it.
exp_cells() { EXP_CELLS=$1; }

# exp_mmss SECONDS
exp_mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# exp_cell LABEL: the progress line of the next cell, on stderr.
exp_cell() {
	local el left
	el=$(($(date +%s) - EXP_T0))
	if [ "$EXP_DONE" -gt 0 ]; then
		left=$((el * (EXP_CELLS - EXP_DONE) / EXP_DONE))
	else
		left=$((EXP_CELL_EST * EXP_CELLS))
	fi
	EXP_DONE=$((EXP_DONE + 1))
	printf '%s: cell %d/%d %s (%s elapsed, ETA %s)\n' "$EXP_NAME" "$EXP_DONE" \
		"$EXP_CELLS" "$1" "$(exp_mmss "$el")" "$(exp_mmss "$left")" >&2
}

# exp_machine: the kernel and CPUs, for the results' header.
exp_machine() {
	local model
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	printf 'Linux %s, %d CPUs (%s)' "$(uname -r)" "$(nproc)" "${model:-unknown}"
}

# exp_header TITLE: the first lines of NAME.md: the title, the command,
# the date, the machine and how long the run took.
exp_header() {
	local took=$(($(date +%s) - EXP_T0))
	printf '# %s\n\nMade by `%s` on %s, %s, in %s (m:ss).\n' "$1" "$EXP_CMD" \
		"$EXP_DATE" "$(exp_machine)" "$(exp_mmss "$took")"
}

# exp_plot SCRIPT: run the gnuplot SCRIPT (a file) that writes
# $EXP_OUT/$EXP_NAME.png; fails unless the PNG is there afterwards.
exp_plot() {
	local png="$EXP_OUT/$EXP_NAME.png"
	rm -f "$png"
	gnuplot -e "png='$png'" "$1" || { echo "$EXP_NAME: gnuplot $1 failed" >&2; return 1; }
	[ -s "$png" ] || { echo "$EXP_NAME: gnuplot wrote no $png" >&2; return 1; }
	echo "$EXP_NAME: wrote $EXP_OUT/$EXP_NAME.csv, $EXP_NAME.md, $EXP_NAME.png" >&2
}

# exp_md_table CSV COLS...: a markdown table of the CSV's columns COLS
# (by name), header and rows.
exp_md_table() {
	local csv=$1
	shift
	awk -F, -v cols="$*" '
	NR == 1 { n = split(cols, want, " ")
		for (i = 1; i <= n; i++) { for (j = 1; j <= NF; j++) if ($j == want[i]) idx[i] = j
			if (!idx[i]) { printf "exp_md_table: no column %s\n", want[i] > "/dev/stderr"; exit 1 } }
		line = "|"; sep = "|"
		for (i = 1; i <= n; i++) { line = line " " want[i] " |"; sep = sep "---|" }
		print line; print sep; next }
	{ line = "|"; for (i = 1; i <= n; i++) line = line " " $(idx[i]) " |"; print line }' "$csv"
}
