#!/usr/bin/env bash
# hoststate.sh - did a run leave the host as it found it? `save FILE` writes
# what a run may change on the host: the state of the services whose
# packages the tests install (enabled, and running under systemd), the
# network namespaces, shedd's pins, the XDP programs on the host's own
# interfaces, and the processes a run starts (this tree's binaries
# anywhere; nginx, HAProxy and Prometheus in the network namespace of the
# run itself, the host's).
# `check FILE` compares the host with FILE: a service whose state changed,
# or anything that is there now and was not then, fails (exit 1), named.
# One change is the host as it was: a service whose package was absent
# and that is now installed (by scripts/deps.sh, during the run), disabled
# and not running; what the run installed serves its tests and does
# nothing on its own.
# Runs that overlap on one machine: what belongs to another live testbed
# (scripts/testbed.sh, an id whose owner runs) is not counted.
set -euo pipefail

# shellcheck source=scripts/testbed.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed.sh"

SERVICES=${HOSTSTATE_SERVICES:-nginx.service haproxy.service prometheus.service}
HOST_PROCS="nginx haproxy prometheus"

state() {
	local u en act pid exe comm host_net ns
	for u in $SERVICES; do
		en=$(systemctl is-enabled "$u" 2>/dev/null) || true
		act=-
		if [ -d /run/systemd/system ]; then
			act=$(systemctl is-active "$u" 2>/dev/null) || true
		fi
		echo "service $u ${en:-absent} $act"
	done
	# A fresh machine has no iproute2 before scripts/deps.sh installs it
	# (then it has no XDP program that ip would show either), and no
	# /run/netns until a namespace is made.
	if command -v ip >/dev/null; then
		ip -o link show 2>/dev/null | awk -F': ' '/ xdp/ { sub(/@.*/, "", $2); print "xdp " $2 }'
	fi
	find /run/netns -mindepth 1 -maxdepth 1 -printf 'netns %f\n' 2>/dev/null || true
	find /sys/fs/bpf -maxdepth 1 -name 'shedd*' ! -name shedd -printf 'pin %f\n' 2>/dev/null || true
	# The folder of a namespace (ns:INODE) by what it holds, or itself
	# when it is left empty.
	find /sys/fs/bpf/shedd -mindepth 1 -maxdepth 2 -type d \
		\( ! -name 'ns:*' -o -empty \) -printf 'pin shedd/%P\n' 2>/dev/null || true
	host_net=$(readlink /proc/self/ns/net)
	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
		comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
		ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || continue
		if [[ "$exe" == "$ROOT"/* ]] ||
		   { [ "$ns" = "$host_net" ] && [[ " $HOST_PROCS " == *" $comm "* ]]; }; then
			echo "proc $pid $comm $exe"
		fi
	done
}

# other_testbed LINE: LINE is a namespace or pin of a testbed whose owner
# is alive (another run on the machine, not ours).
other_testbed() {
	[[ "$1" =~ (shd-(cli|srv|rtr)-|shds|shedd-rtr-)([0-9a-f]{4}) ]] &&
		testbed_owned "${BASH_REMATCH[3]}"
}

# newly_installed_idle WAS NOW: service lines (service UNIT ENABLED ACTIVE)
# of one unit before and after; true when its package came during the run
# and left the unit disabled and not running.
newly_installed_idle() {
	local was_en now_en now_act
	read -r _ _ was_en _ <<<"$1"
	read -r _ _ now_en now_act <<<"$2"
	[ "$was_en" = absent ] && [ "$now_en" = disabled ] &&
		{ [ "$now_act" = - ] || [ "$now_act" = inactive ]; }
}

case "${1:-} ${2:-}" in
save\ ?*)
	state | sort >"$2"
	;;
check\ ?*)
	now=$(state | sort)
	bad=0
	while read -r line; do
		[ -n "$line" ] || continue
		case $line in
		service\ *)
			was=$(grep "^${line% * *} " "$2" || true)
			newly_installed_idle "$was" "$line" && continue
			echo "hoststate: $line (was: ${was:-not recorded})" >&2
			bad=1
			;;
		*)
			other_testbed "$line" && continue
			echo "hoststate: left behind: $line" >&2
			bad=1
			;;
		esac
	done < <(comm -13 "$2" <(echo "$now"))
	# A service that was recorded and has no line now (it cannot happen:
	# every service always has one) would be a change too.
	while read -r line; do
		case $line in
		service\ *)
			grep -q "^${line% * *} " <<<"$now" || { echo "hoststate: gone: $line" >&2; bad=1; }
			;;
		esac
	done <"$2"
	if [ "$bad" -ne 0 ]; then
		echo "hoststate: the host is not as the run found it (before: $2)" >&2
		exit 1
	fi
	echo "hoststate: the host is as the run found it: services" \
		"($(grep '^service ' <<<"$now" | cut -d' ' -f2- | paste -sd, -)), namespaces," \
		"pins, XDP attachments and processes"
	;;
*)
	echo "usage: hoststate.sh save FILE | check FILE" >&2
	exit 2
	;;
esac
