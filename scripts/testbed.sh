# shellcheck shell=bash
# testbed.sh - a two-namespace testbed for shedd, sourced by the demo and
# the integration tests. "cli" (load generator) and "srv" (shedd's XDP on its
# veth, the listeners) are joined by a veth pair. Addresses come only from
# 198.18.0.0/15 and 2001:db8::/32; spoofed SYN sources from 198.19.0.0/16
# and 2001:db8:ff00::/40 are routed back to cli. testbed_down removes the
# namespaces, shedd's pins and every process started through the testbed.
# TESTBED_TMP names a folder for logs and counters.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHEDD=${SHEDD:-"$ROOT/shedd"}
SYNFLOOD="$ROOT/.output/synflood"
TCPSTREAM="$ROOT/.output/tcpstream"
PORT=8080

CLI_IP=198.18.0.1
SRV_IP=198.18.0.2
CLI_IP6=2001:db8::1
SRV_IP6=2001:db8::2

# Testbeds that overlap (several runs on one machine) take their id under a
# lock in TESTBED_RUN, where each id's file names its owner: the pid and the
# start time of the shell that made it (a pid alone may be reused).
TESTBED_RUN=${TESTBED_RUN:-/run/shedd-testbed}
TESTBED_ID=

# proc_start PID: the start time of PID (field 22 of /proc/PID/stat, read
# after the command name, which may hold spaces); fails if PID is gone.
proc_start() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	echo "$stat" | cut -d' ' -f20
}

# testbed_leftovers ID: the pin folders and latency sockets shedd may have
# made for the testbed ID's interface, one a line: today's, under the
# server namespace's ns:INODE (any inode: the namespace of a killed run may
# be gone, and the interface name is the testbed's alone), and those of a
# shedd run in the initial namespace (the path before ns:INODE).
testbed_leftovers() {
	local p
	for p in /sys/fs/bpf/shedd/ns:*/"shds$1" "/sys/fs/bpf/shedd/shds$1" \
		/run/shedd/ns:*/"shds$1.sock" "/run/shedd/shds$1.sock"; do
		[ -e "$p" ] && echo "$p"
	done
	return 0
}

# testbed_remove ID: the namespaces, their processes, the pins and the
# latency socket of the testbed ID. Only names with the testbed's prefix.
testbed_remove() {
	local id=$1 ns pid p
	for ns in "shd-cli-$id" "shd-rtr-$id" "shd-srv-$id"; do
		[ -e "/run/netns/$ns" ] || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null || true
		done
		ip netns del "$ns" 2>/dev/null || true
	done
	# The pinned link goes with the pins; the folders of namespaces left
	# empty go too.
	for p in $(testbed_leftovers "$id"); do
		rm -rf "$p"
		case $p in
		*/ns:*/*) rmdir "${p%/*}" 2>/dev/null || true ;;
		esac
	done
	rm -rf "/sys/fs/bpf/shedd-rtr-$id"
	rm -f "/sys/fs/bpf/shedd-test-foreign-shds$id"
}

# testbed_owned ID: the owner recorded for testbed ID runs. Its pid in
# $OWNER_PID.
testbed_owned() {
	local start
	OWNER_PID=
	read -r OWNER_PID start 2>/dev/null <"$TESTBED_RUN/$1" || true
	[ -n "$OWNER_PID" ] && [ "$(proc_start "$OWNER_PID")" = "$start" ]
}

# testbed_sweep: remove every testbed whose owner is gone (killed before its
# teardown ran). Testbeds without an owner file are never touched: they may
# belong to a run of an older testbed.sh. Call with the lock held.
testbed_sweep() {
	local f id
	for f in "$TESTBED_RUN"/[0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
		[ -f "$f" ] || continue
		id=${f##*/}
		testbed_owned "$id" && continue
		echo "testbed: removing testbed $id left by pid ${OWNER_PID:-?}, which is gone" >&2
		testbed_remove "$id"
		rm -f "$f"
	done
}

# testbed_free ID: nothing of the testbed ID exists yet.
testbed_free() {
	[ ! -e "$TESTBED_RUN/$1" ] && [ ! -e "/run/netns/shd-cli-$1" ] &&
		[ ! -e "/run/netns/shd-rtr-$1" ] && [ ! -e "/run/netns/shd-srv-$1" ] &&
		[ -z "$(testbed_leftovers "$1")" ] && [ ! -e "/sys/fs/bpf/shedd-rtr-$1" ]
}

# Names unique to this testbed, short enough for IFNAMSIZ: an id that no
# live testbed holds, taken under the lock, its owner recorded.
testbed_names() {
	local fd id i start me=$BASHPID
	mkdir -p "$TESTBED_RUN"
	exec {fd}>>"$TESTBED_RUN/lock"
	if ! flock -w 30 "$fd"; then
		exec {fd}>&-
		echo "testbed: lock $TESTBED_RUN/lock: still held after 30 s" >&2
		return 1
	fi
	testbed_sweep
	id=
	for ((i = 0; i < 64; i++)); do
		printf -v id '%04x' $(( (RANDOM << 1 ^ RANDOM) & 0xffff ))
		testbed_free "$id" && break
		id=
	done
	start=$(proc_start "$me")
	if [ -z "$id" ] || [ -z "$start" ] ||
	   ! echo "$me $start" >"$TESTBED_RUN/$id"; then
		exec {fd}>&-
		echo "testbed: no free testbed id in $TESTBED_RUN" >&2
		return 1
	fi
	exec {fd}>&-
	TESTBED_ID=$id
	NS_CLI="shd-cli-$id"
	NS_SRV="shd-srv-$id"
	IF_CLI="shdc$id"
	IF_SRV="shds$id"
	PIN_DIR="/sys/fs/bpf/shedd/$IF_SRV"
	PIDS=()
}

# Background processes are started as `ip netns exec NS cmd &`, never through
# these functions, so that $! is the process itself and teardown ends it.
in_cli() { ip netns exec "$NS_CLI" "$@"; }
in_srv() { ip netns exec "$NS_SRV" "$@"; }

# testbed_up [--plain]: the testbed. The client's veth runs an XDP program
# of its own, as a NIC would take shedd's XDP_TX frames; with --plain it
# runs none and has GRO off, as a container's interface: the kernel then
# drops every frame shedd sends back with XDP_TX (TESTBED_PLAIN=1).
testbed_up() {
	TESTBED_PLAIN=0
	case "${1:-}" in
	"") ;;
	--plain) TESTBED_PLAIN=1 ;;
	*) echo "testbed_up: unknown option '$1' (expected --plain)" >&2; return 1 ;;
	esac
	testbed_names || return 1
	ip netns add "$NS_CLI"
	ip netns add "$NS_SRV"
	# Outside the initial network namespace shedd's pins and latency socket
	# carry the namespace's inode (see docs/pins.md).
	NS_SRV_TAG="ns:$(stat -L -c %i "/run/netns/$NS_SRV")"
	PIN_DIR="/sys/fs/bpf/shedd/$NS_SRV_TAG/$IF_SRV"
	LATENCY_SOCK="/run/shedd/$NS_SRV_TAG/$IF_SRV.sock"
	ip link add "$IF_CLI" netns "$NS_CLI" type veth peer name "$IF_SRV" netns "$NS_SRV"
	in_cli ip link set lo up
	in_srv ip link set lo up
	in_cli ip addr add "$CLI_IP/24" dev "$IF_CLI"
	in_srv ip addr add "$SRV_IP/24" dev "$IF_SRV"
	in_cli ip -6 addr add "$CLI_IP6/64" dev "$IF_CLI" nodad
	in_srv ip -6 addr add "$SRV_IP6/64" dev "$IF_SRV" nodad
	in_cli ip link set "$IF_CLI" up
	in_srv ip link set "$IF_SRV" up
	in_srv ip route add 198.19.0.0/16 via "$CLI_IP"
	in_srv ip -6 route add 2001:db8:ff00::/40 via "$CLI_IP6"
	# veth delivers XDP_TX frames (shedd's cookies and RSTs) only to a
	# peer that runs an XDP program of its own or has GRO on.
	if [ "$TESTBED_PLAIN" = 1 ]; then
		in_cli ethtool -K "$IF_CLI" gro off
	else
		testbed_client_xdp
	fi
	# Spoofed SYNs are answered by the kernel from a full SYN queue with
	# cookies: raise the queue so admitted SYNs are all answered alike.
	in_srv sysctl -qw net.ipv4.tcp_max_syn_backlog=65536 net.core.somaxconn=65535
	# Real clients (loadgen) open thousands of connections a second.
	in_cli sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
	SRV_MAC=$(in_srv cat "/sys/class/net/$IF_SRV/address")
}

# client_addrs PREFIX...: make every address of each PREFIX (IPv4 or IPv6,
# e.g. 198.19.200.0/24, 2001:db8:ffc8:1::/64) bindable in cli, so loadgen's
# --sources can come from them: a local route each (AnyIP), and for IPv6
# non-local binds, in cli only and gone with the namespace. The server routes 198.19.0.0/16 and 2001:db8:ff00::/40 back.
# Never the whole flood range: cli would answer the SYN-ACKs of spoofed
# SYNs with RSTs.
client_addrs() {
	local p
	for p in "$@"; do
		case $p in
		198.19.*/* | 2001:db8:ff*) ;;
		*) echo "client_addrs: '$p' is not inside 198.19.0.0/16 or 2001:db8:ff00::/40" >&2; return 1 ;;
		esac
		in_cli ip route add local "$p" dev lo || return 1
		# IPv6 binds only to an address of an interface, not one that
		# is local by a route, unless non-local binds are allowed.
		case $p in
		*:*) in_cli sysctl -qw net.ipv6.ip_nonlocal_bind=1 || return 1 ;;
		esac
	done
}

# testbed_client_xdp: an XDP program on the client's veth (what makes the
# testbed NIC-like: veth then delivers srv's XDP_TX frames).
testbed_client_xdp() {
	in_cli ip link set dev "$IF_CLI" xdpdrv obj "$ROOT/.output/xdp_pass.bpf.o" sec xdp
}

testbed_down() {
	# Runs from traps, also under set -e: nothing here may stop it early.
	local pid bound_maps="" i id left
	# A program bound to the server's veth (shedd_xdp_vlan) must be freed
	# before the veth goes: Debian's 6.12.118 oopses when a device goes
	# while such a program is bound to it (docs/limits.md). The kernel
	# puts the program's maps just before it unbinds it
	# (bpf_prog_free_deferred()): wait, at most 10 s, until they are gone.
	if [ -n "$TESTBED_ID" ] &&
		ip -n "$NS_SRV" link show dev "$IF_SRV" 2>/dev/null | grep -q 'prog/xdp id [0-9]* name shedd_xdp_vlan'; then
		bound_maps=$(bpftool -j prog show id "$(ip -n "$NS_SRV" link show dev "$IF_SRV" |
			grep -o 'prog/xdp id [0-9]*' | awk '{ print $3 }')" 2>/dev/null |
			jq -r '.map_ids[]?' 2>/dev/null | tr '\n' ' ') || true
	fi
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	[ -n "$TESTBED_ID" ] || return 0
	rm -f "/sys/fs/bpf/shedd-test-foreign-$IF_SRV"
	if [ -e "$PIN_DIR" ]; then
		"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --remove >/dev/null 2>&1 || true
		rm -rf "$PIN_DIR"
	fi
	rmdir "$(dirname "$PIN_DIR")" /sys/fs/bpf/shedd 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		left=
		for id in $bound_maps; do
			bpftool map show id "$id" >/dev/null 2>&1 && left=$id
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	# A shedd that was killed leaves its latency socket: remove it, or a
	# later namespace that gets the same inode finds it in its folder.
	if [ -n "${LATENCY_SOCK:-}" ]; then
		rm -f "$LATENCY_SOCK"
		rmdir "$(dirname "$LATENCY_SOCK")" 2>/dev/null || true
	fi
	ip netns del "$NS_CLI" 2>/dev/null || true
	ip netns del "$NS_SRV" 2>/dev/null || true
	# The flood testbed's router (scripts/floodbed.sh).
	ip netns del "shd-rtr-$TESTBED_ID" 2>/dev/null || true
	rm -f "/sys/fs/bpf/shedd-rtr-$TESTBED_ID"
	# Last, so the id is not handed out while anything of it is left.
	rm -f "$TESTBED_RUN/$TESTBED_ID"
	TESTBED_ID=
}

# Start shedd on the server veth in the background; its stderr goes to
# $TESTBED_TMP/shedd.log. Waits until it has attached, at most
# SHEDD_ATTACH_SECS (default 5) seconds.
shedd_start() {
	local log="$TESTBED_TMP/shedd.log" seen
	seen=0
	[ -f "$log" ] && seen=$(wc -l <"$log")
	"$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" "$@" 2>>"$log" &
	SHEDD_PID=$!
	PIDS+=("$SHEDD_PID")
	wait_for "shedd attached" "${SHEDD_ATTACH_SECS:-5}" sh -c \
		"tail -n +$((seen + 1)) '$log' | grep -qE 'attached to|adopted'"
}

# testbed_script NAME: the prologue of a script (demo, experiments) that
# runs on the testbed: root, a scratch folder, and a teardown on any exit.
testbed_script() {
	[ "$(id -u)" -eq 0 ] || { echo "$1: run as root (make $1 in a root shell)" >&2; exit 1; }
	TESTBED_TMP=$(mktemp -d)
	trap 'testbed_down; rm -rf "$TESTBED_TMP"' EXIT
	trap 'exit 130' INT TERM
}

# wait_listening WHAT PORT: until something listens on PORT in srv.
wait_listening() {
	wait_for "$1" 5 sh -c "ip netns exec $NS_SRV ss -ltnH | grep -q ':$2 '"
}

# wait_for WHAT SECONDS CMD...: poll CMD every 50 ms, fail after SECONDS
# times TESTBED_TIME_SCALE (default 1; the kernel matrix's guests run under
# software emulation, where loading the program alone takes seconds).
TESTBED_TIME_SCALE=${TESTBED_TIME_SCALE:-1}
# SECONDS x 20 polls 50 ms apart, so a poll's own time adds to the wait
# (under the sanitizers a reload's poll took long enough that 5 s of clock
# were not enough), but never longer than 3 x SECONDS by the clock: in a
# slow guest one poll (ip netns exec, ss) took a second, and the 1 600
# polls of an 80 s wait half an hour.
wait_for() {
	local what=$1 secs=$(($2 * TESTBED_TIME_SCALE)) i end
	shift 2
	end=$((${EPOCHREALTIME/./} + 3 * secs * 1000000))
	for ((i = 0; i < secs * 20; i++)); do
		"$@" && return 0
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || break
		sleep 0.05
	done
	echo "timed out after ${secs}s (${i} polls) waiting for: $what" >&2
	return 1
}

# A listener in srv that accepts and closes every connection, for 120 s
# times TESTBED_TIME_SCALE, at most tcpstream's 600 (the test's teardown
# ends it before that): a test that runs long on a loaded host, or with
# the sanitized daemon, still has its listener (after it, SYNs admitted
# meet a RST).
listener_start() {
	local secs=$((120 * TESTBED_TIME_SCALE))
	[ "$secs" -le 600 ] || secs=600
	ip netns exec "$NS_SRV" "$TCPSTREAM" sink --addr "${1:-$SRV_IP}" --port "$PORT" \
		--duration "$secs" >/dev/null 2>&1 &
	PIDS+=($!)
	wait_listening listener "$PORT"
}

# flood SRC_CIDR RATE SECONDS [DST]: SYNs from cli; prints synflood's line.
# flood_bg FILE SRC_CIDR RATE SECONDS [DST]: the same in the background, its
# line into FILE; FLOOD_PID is synflood's own pid.
# Every flood of a test takes the next block of source ports, so no flow of
# an earlier flood is still half-open on the server. The sender is pinned to
# CPU $FLOOD_CPU (default the last one), as RSS keeps a flow on one CPU;
# FLOOD_CPU=any leaves it to the scheduler, which moves it between CPUs.
flood_cmd() {
	local dst=${4:-$SRV_IP} cpu=${FLOOD_CPU:-$(( $(nproc) - 1 ))} n pin
	# A counter in a file: floods also run inside $(...) subshells.
	n=$(flock "$TESTBED_TMP/flood.lock" sh -c \
		'f="$1/flood.n"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"; echo "$n"' \
		_ "$TESTBED_TMP")
	pin=(taskset -c "$cpu")
	[ "$cpu" = any ] && pin=()
	FLOOD_CMD=(ip netns exec "$NS_CLI" "${pin[@]}" "$SYNFLOOD" --iface "$IF_CLI"
		--dst-mac "$SRV_MAC" --dst "$dst" --dport "$PORT" --src "$1" --rate "$2"
		--duration "$3" --wait 1 --sport-base $((1024 + 64 * n))
		${FLOOD_AT:+--start-at "$FLOOD_AT"})
}

# flood_at_soon: a wall-clock start (ms) for floods that must overlap
# (FLOOD_AT=$(flood_at_soon) flood_bg ...; FLOOD_AT=... flood ...): far
# enough ahead for both to have started, however slow a guest is to start
# a process (a 6.1 guest started the second flood of two 1.5 s after the
# first, which then had the limit alone for that long).
flood_at_soon() { echo $(( $(date +%s%3N) + 500 + 500 * TESTBED_TIME_SCALE )); }

flood() {
	flood_cmd "$@"
	"${FLOOD_CMD[@]}"
}

flood_bg() {
	local out=$1
	shift
	flood_cmd "$@"
	"${FLOOD_CMD[@]}" >"$out" &
	FLOOD_PID=$!
	PIDS+=("$FLOOD_PID")
}

# field NAME LINE: the value of NAME=value in a key=value line.
field() {
	local kv
	for kv in $2; do
		[ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return 0; }
	done
	return 1
}

# stat_sum FIELD [CLASS]: a counter of the pinned stats map, summed over CPUs.
stat_sum() {
	local q
	if [ -n "${2:-}" ]; then
		q="[.[0].values[].value.cls[$2].$1] | add"
	else
		q="[.[0].values[].value.$1] | add"
	fi
	# Plain output is the BTF-formatted one (-j would print raw bytes too).
	bpftool map dump pinned "$PIN_DIR/stats" | jq "$q"
}

SLOWSERVER="$ROOT/.output/slowserver"
LOADGEN="$ROOT/.output/loadgen"

# slow_start ARGS...: a server of known capacity on $SRV_IP:$PORT in srv
# (see slowserver --help); SLOW_PID is its pid. Waits until it listens.
slow_start() {
	ip netns exec "$NS_SRV" "$SLOWSERVER" --addr "$SRV_IP" --port "$PORT" "$@" \
		>"$TESTBED_TMP/slow.out" 2>"$TESTBED_TMP/slow.err" &
	SLOW_PID=$!
	PIDS+=("$SLOW_PID")
	wait_listening slowserver "$PORT"
}

# load NAME RATE SECONDS PATIENCE_MS: real clients from cli; the summary line
# goes to $TESTBED_TMP/NAME, the per-second lines to $TESTBED_TMP/NAME.sec.
load() {
	ip netns exec "$NS_CLI" "$LOADGEN" --dst "$SRV_IP" --port "$PORT" --rate "$2" \
		--duration "$3" --patience-ms "$4" >"$TESTBED_TMP/$1" 2>"$TESTBED_TMP/$1.sec"
}

# ok_per_sec NAME FROM TO: mean ok/s of connections started in seconds
# FROM..TO (1-based) of a load. Fails unless every one of those seconds
# was reported: a missing measurement is not a goodput of 0.
ok_per_sec() {
	awk -v a="$2" -v b="$3" -v f="$1" '/^t=/ {
		split($1, t, "="); n = t[2]; ok = ""
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ok") ok = kv[2] }
		if (n >= a && n <= b && ok != "") { s += ok; c++ }
	} END {
		if (c != b - a + 1) {
			printf "ok_per_sec: %s reports %d of seconds %d-%d\n", f, c, a, b > "/dev/stderr"
			exit 1
		}
		printf "%d\n", s / c
	}' "$TESTBED_TMP/$1.sec"
}

# sec_sum NAME REGEX: the fields of a load's per-second lines (NAME.sec)
# whose names match REGEX, summed over every second.
sec_sum() {
	awk -v re="$2" '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] ~ re) s += kv[2] } }
		END { print s + 0 }' "$TESTBED_TMP/$1.sec"
}

# sleep_until T0 S: sleep until S seconds after T0 (epoch seconds, with
# fractions): a point in time of a scenario, not a wait for a condition.
sleep_until() {
	sleep "$(awk -v a="$1" -v s="$2" -v n="$(date +%s.%N)" 'BEGIN { w = a + s - n; printf "%.3f", (w > 0 ? w : 0) }')"
}

# status_field NAME [N]: the values of NAME=... in shedd's last N (default
# all) status lines, one per line.
status_field() {
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | tail -n "${2:-+1}" |
		grep -o " $1=[^ ]*" | cut -d= -f2
}
