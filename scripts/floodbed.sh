# shellcheck shell=bash
# floodbed.sh - the flood testbed, sourced after scripts/testbed.sh by the
# flood experiment and its test. Three namespaces: cli (legitimate clients),
# rtr (a router all in XDP, tests/tools/xdprouter.bpf.c) and srv (the
# server, shedd on its veth). The router redirects the clients' frames into
# the veth on which the live-frames generator (tests/tools/floodgen) sends
# its spoofed SYNs, so both reach the server through the same receive ring,
# handled by the same NAPI thread pinned to one CPU ($SRV_CPU), as frames
# from one NIC queue would be. The generator and the router's work on the
# server's answers, the server's application and shedd's daemon run on
# $WORLD_CPU (see SRV_APP_CPU); the clients and the router's work on their
# frames on $SRV_CPU, ahead of the server (see FLOOD_LEGIT_CPU).
#
#   cli 198.18.1.1/24 -- 198.18.1.254 rtr 198.18.2.254 -- 198.18.2.1/24 srv
#   spoofed sources 198.19.0.0/16, routed by srv to rtr, answers dropped there
#   IPv6 between rtr 2001:db8:2::fe -- 2001:db8:2::1/64 srv only (the flood
#   benchmark's): spoofed sources 2001:db8:ff00::/40, routed and dropped alike
#
# floodbed_down (or testbed_down) removes it all, including the router.

FLOODGEN="$ROOT/.output/floodgen"
XDPROUTER="$ROOT/.output/xdprouter"
XDP_PASS_OBJ="$ROOT/.output/xdp_pass.bpf.o"

FB_CLI_NET=198.18.1.0/24
FB_SRV_NET=198.18.2.0/24
FB_SPOOF_NET=198.19.0.0/16
FB_RTR_CLI_IP=198.18.1.254
FB_RTR_SRV_IP=198.18.2.254
FB_RTR_SRV_IP6=2001:db8:2::fe
FB_SPOOF_NET6=2001:db8:ff00::/40
# The IPv6 flood's sources: 65536 hosts of that prefix, as many as the
# IPv4 flood's 198.19.0.0/16 has.
FB_SPOOF_SRC6=2001:db8:ff00::/112
SRV_CPU=${SRV_CPU:-0}
WORLD_CPU=${WORLD_CPU:-$(( $(nproc) - 1 ))}
# The legitimate clients run on the server's CPU, above its receive thread
# (they need little CPU): on the generator's CPU they would run only while
# the generator is paused and the server drains its ring, so their frames
# would meet a ring with room in it far more often than the flood's do.
FLOOD_LEGIT_CPU=${FLOOD_LEGIT_CPU:-$SRV_CPU}
# The server's application and shedd's daemon run on the other CPU, as a
# server's processes run on other cores than the one its NIC queue
# interrupts, at real-time priority 40: ahead of the generator, below the
# router's NAPI threads, as on cores of their own. On the receive CPU,
# below a saturated NAPI thread, or sharing a CPU with the generator, they
# would wait for milliseconds, and shedd would read that as overload.
# Their CPU time is measured apart.
SRV_APP_CPU=${SRV_APP_CPU:-$WORLD_CPU}
SRV_APP_PRIO=40

in_rtr() { ip netns exec "$NS_RTR" "$@"; }

# napi_thread IF: the pid of IF's threaded-NAPI kthread ("napi/IF-ID").
# Interface names carry the testbed id, so the prefix is unique.
napi_thread() {
	local pid comm
	# shellcheck disable=SC2009 # comm of kernel threads: ps is simplest
	ps -e -o pid=,comm= | while read -r pid comm; do
		case $comm in "napi/$1-"*) echo "$pid" ;; esac
	done
}

# napi_pin NS IF CPU [PRIO]: IF's receive processing in a kthread of its
# own (threaded NAPI), on CPU only, real-time priority PRIO (50). veth has
# NAPI only while an XDP program is attached, so call it again after every
# attach; prints the kthread's pid.
napi_pin() {
	local ns=$1 ifc=$2 cpu=$3 prio=${4:-50} pid
	ip netns exec "$ns" sh -c "echo 1 >/sys/class/net/$ifc/threaded" || return 1
	pid=$(napi_thread "$ifc")
	if [ -z "$pid" ] || [ "$(echo "$pid" | wc -l)" -ne 1 ]; then
		echo "floodbed: no single NAPI thread for $ifc ('$pid')" >&2
		return 1
	fi
	taskset -pc "$cpu" "$pid" >/dev/null || return 1
	# Receive work on a host runs in softirq, ahead of every process: a
	# real-time thread comes closest (the kernel's RT throttling still
	# leaves others 5 % of the CPU).
	chrt -f -p "$prio" "$pid" || return 1
	echo "$pid"
}

floodbed_up() {
	testbed_names || return 1
	NS_RTR="shd-rtr-$TESTBED_ID"
	IF_RC="shdrc$TESTBED_ID"
	IF_RS="shdrs$TESTBED_ID"
	CLI_IP=198.18.1.1
	SRV_IP=198.18.2.1
	SRV_IP6=2001:db8:2::1
	RTR_PIN="/sys/fs/bpf/shedd-rtr-$TESTBED_ID"
	# The router pins its counters: the BPF file system where a host has
	# not mounted it, as shedd itself mounts it (the same mode).
	if [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" != bpf_fs ]; then
		mount -t bpf -o mode=0700 bpf /sys/fs/bpf || return 1
	fi
	LEGIT_CPU=$FLOOD_LEGIT_CPU
	ip netns add "$NS_CLI"
	ip netns add "$NS_RTR"
	ip netns add "$NS_SRV"
	NS_SRV_TAG="ns:$(stat -L -c %i "/run/netns/$NS_SRV")"
	PIN_DIR="/sys/fs/bpf/shedd/$NS_SRV_TAG/$IF_SRV"
	LATENCY_SOCK="/run/shedd/$NS_SRV_TAG/$IF_SRV.sock"
	ip link add "$IF_CLI" netns "$NS_CLI" type veth peer name "$IF_RC" netns "$NS_RTR"
	ip link add "$IF_RS" netns "$NS_RTR" type veth peer name "$IF_SRV" netns "$NS_SRV"
	in_cli ip link set lo up
	in_rtr ip link set lo up
	in_srv ip link set lo up
	in_cli ip addr add "$CLI_IP/24" dev "$IF_CLI"
	in_rtr ip addr add "$FB_RTR_CLI_IP/24" dev "$IF_RC"
	in_rtr ip addr add "$FB_RTR_SRV_IP/24" dev "$IF_RS"
	in_srv ip addr add "$SRV_IP/24" dev "$IF_SRV"
	in_rtr ip -6 addr add "$FB_RTR_SRV_IP6/64" dev "$IF_RS" nodad
	in_srv ip -6 addr add "$SRV_IP6/64" dev "$IF_SRV" nodad
	# A frame redirected by XDP leaves its skb behind, and with it a
	# checksum left to offload: the hosts compute theirs in software.
	in_cli ethtool -K "$IF_CLI" tx off >/dev/null
	in_srv ethtool -K "$IF_SRV" tx off >/dev/null
	in_cli ip link set "$IF_CLI" up
	in_rtr ip link set "$IF_RC" up
	in_rtr ip link set "$IF_RS" up
	in_srv ip link set "$IF_SRV" up
	CLI_MAC=$(in_cli cat "/sys/class/net/$IF_CLI/address")
	SRV_MAC=$(in_srv cat "/sys/class/net/$IF_SRV/address")
	RC_MAC=$(in_rtr cat "/sys/class/net/$IF_RC/address")
	RS_MAC=$(in_rtr cat "/sys/class/net/$IF_RS/address")
	# Fixed neighbours: no ARP through the router under a flood.
	in_cli ip neigh replace "$FB_RTR_CLI_IP" lladdr "$RC_MAC" dev "$IF_CLI" nud permanent
	in_srv ip neigh replace "$FB_RTR_SRV_IP" lladdr "$RS_MAC" dev "$IF_SRV" nud permanent
	in_srv ip -6 neigh replace "$FB_RTR_SRV_IP6" lladdr "$RS_MAC" dev "$IF_SRV" nud permanent
	in_cli ip route add "$FB_SRV_NET" via "$FB_RTR_CLI_IP"
	in_srv ip route add "$FB_CLI_NET" via "$FB_RTR_SRV_IP"
	in_srv ip route add "$FB_SPOOF_NET" via "$FB_RTR_SRV_IP"
	in_srv ip -6 route add "$FB_SPOOF_NET6" via "$FB_RTR_SRV_IP6"
	in_cli sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
	# The server as a stock host: SYN cookies when the SYN queue is full.
	in_srv sysctl -qw net.ipv4.tcp_syncookies=1 net.core.somaxconn=4096
	# The router: XDP only; its own kernel forwards nothing.
	in_rtr sysctl -qw net.ipv4.ip_forward=0
	nsenter --net="/run/netns/$NS_RTR" "$XDPROUTER" --cli-if "$IF_RC" --srv-if "$IF_RS" \
		--cli-mac "$CLI_MAC" --srv-mac "$SRV_MAC" --cli-net "$FB_CLI_NET" \
		--srv-net "$FB_SRV_NET" --spoof-net "$FB_SPOOF_NET" \
		--spoof-net6 "$FB_SPOOF_NET6" --pin "$RTR_PIN" \
		--duration 3600 >"$TESTBED_TMP/xdprouter.out" 2>"$TESTBED_TMP/xdprouter.err" &
	RTR_PID=$!
	PIDS+=("$RTR_PID")
	wait_for "the XDP router" 10 grep -qs attached "$TESTBED_TMP/xdprouter.err" || return 1
	# veth hands redirected frames only to a peer with NAPI, which it has
	# while an XDP program is attached: the clients' side gets a pass-only
	# one, the server's side one too until shedd takes its place.
	in_cli ip link set dev "$IF_CLI" xdpdrv obj "$XDP_PASS_OBJ" sec xdp
	srv_xdp_pass on || return 1
	napi_pin "$NS_CLI" "$IF_CLI" "$WORLD_CPU" >/dev/null || return 1
	# The clients' frames enter the server's ring from the server's CPU,
	# at once (above the server's own thread): on the generator's CPU they
	# would only ever be sent while the generator is paused, into a ring
	# the server had a moment to drain, and never be lost.
	napi_pin "$NS_RTR" "$IF_RC" "$SRV_CPU" 60 >/dev/null || return 1
	napi_pin "$NS_RTR" "$IF_RS" "$WORLD_CPU" >/dev/null || return 1
}

floodbed_down() {
	testbed_down
}

# plainbed_up: for contrast, the plain two-namespace testbed (testbed_up) as
# it stands: the flood sent from cli straight into the server's veth, the
# server's answers to spoofed sources routed back into cli, nothing pinned
# but the generator and the clients (as on the flood testbed), the server's
# receive work in stock softirq, wherever veth schedules it (no NAPI thread
# to measure: SRV_NAPI_PID is empty). The clients' packets share the ring
# with the flood here too: veth turns TSO off on the peer of a veth that
# gets an XDP program, and a packet without TSO is taken into the ring.
# flood_run works on it.
plainbed_up() {
	testbed_up || return 1
	LEGIT_CPU=$FLOOD_LEGIT_CPU
	in_srv sysctl -qw net.ipv4.tcp_syncookies=1
	in_srv ip link set dev "$IF_SRV" xdpdrv obj "$XDP_PASS_OBJ" sec xdp || return 1
	SRV_NAPI_PID=
	FLOOD_NS=$NS_CLI
	FLOOD_IF=$IF_CLI
}

# srv_xdp_pass on|off: the pass-only program on the server's veth (the
# path every configuration receives through); SRV_NAPI_PID is then the
# server's NAPI thread, pinned to $SRV_CPU.
srv_xdp_pass() {
	if [ "$1" = on ]; then
		in_srv ip link set dev "$IF_SRV" xdpdrv obj "$XDP_PASS_OBJ" sec xdp || return 1
		SRV_NAPI_PID=$(napi_pin "$NS_SRV" "$IF_SRV" "$SRV_CPU") || return 1
	else
		in_srv ip link set dev "$IF_SRV" xdpdrv off
	fi
}

# srv_napi_repin: after shedd attached its program in place of xdp_pass.
srv_napi_repin() {
	SRV_NAPI_PID=$(napi_pin "$NS_SRV" "$IF_SRV" "$SRV_CPU")
}

# rtr_stats: the router's counters, one key=value line (none without it).
rtr_stats() {
	if [ -n "${RTR_PIN:-}" ]; then
		"$XDPROUTER" --stats "$RTR_PIN"
	else
		echo "spoof_synack=0"
	fi
}

# flood_live RATE SECONDS [OUT]: the live-frames generator in rtr, on
# $WORLD_CPU, sending SYNs to $SRV_IP:$PORT from 198.19.0.0/16 into the
# server's veth (FLOOD_FAMILY=6: to $SRV_IP6 from $FB_SPOOF_SRC6); RATE in
# packets/s or "max". Its line goes to OUT (default stdout); in the
# background when OUT is given (FLOOD_PID).
flood_live_cmd() {
	local dst=$SRV_IP src=$FB_SPOOF_NET
	if [ "${FLOOD_FAMILY:-4}" = 6 ]; then
		dst=$SRV_IP6
		src=$FB_SPOOF_SRC6
	fi
	# FLOODGEN_ARGS: more floodgen options (e.g. --batch 16), split on purpose.
	# shellcheck disable=SC2206
	FLOOD_CMD=(ip netns exec "${FLOOD_NS:-$NS_RTR}" "$FLOODGEN" --iface "${FLOOD_IF:-$IF_RS}"
		--dst-mac "$SRV_MAC"
		--dst "$dst" --dport "$PORT" --src "$src" --rate "$1"
		--duration "$2" --cpu "$WORLD_CPU" ${FLOODGEN_ARGS:-})
}

flood_live() {
	flood_live_cmd "$1" "$2"
	if [ -n "${3:-}" ]; then
		"${FLOOD_CMD[@]}" >"$3" 2>>"$TESTBED_TMP/floodgen.err" &
		FLOOD_PID=$!
		PIDS+=("$FLOOD_PID")
	else
		"${FLOOD_CMD[@]}" 2>>"$TESTBED_TMP/floodgen.err"
	fi
}

# cpu_ns PID...: nanoseconds on CPU of the processes (every thread), from
# /proc/PID/task/TID/schedstat; threads that ended are not counted.
cpu_ns() {
	local pid
	for pid in "$@"; do
		cat /proc/"$pid"/task/*/schedstat 2>/dev/null || true
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# cpu_busy_ns CPU: time CPU spent not idle (user, nice, system, irq,
# softirq, steal), in ns, from /proc/stat (USER_HZ ticks).
cpu_busy_ns() {
	awk -v c="cpu$1" -v hz="$(getconf CLK_TCK)" '$1 == c {
		printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * 1e9 / hz }' /proc/stat
}

# veth_stat NS IF NAME: one of ethtool -S's counters of a veth.
veth_stat() {
	ip netns exec "$1" ethtool -S "$2" | awk -v n="$3:" '$1 == n { print $2 }'
}

# nft_syn_limit RATE: in srv, at the ingress hook of its veth, accept SYNs
# to $PORT up to RATE/s (burst RATE/10) and drop the rest. nft_clear removes it.
nft_syn_limit() {
	local burst=$(( $1 / 10 > 5 ? $1 / 10 : 5 ))
	in_srv nft -f - <<-EOF
	table netdev shedd_flood {
		chain syn {
			type filter hook ingress device "$IF_SRV" priority 0; policy accept;
			tcp dport $PORT tcp flags & (syn | ack | rst | fin) == syn limit rate $1/second burst $burst packets accept
			tcp dport $PORT tcp flags & (syn | ack | rst | fin) == syn counter drop
		}
	}
	EOF
}

nft_clear() {
	in_srv nft delete table netdev shedd_flood 2>/dev/null || true
}

# The flood runs (the experiment and its test). A server of known capacity
# (FLOOD_WORKERS x FLOOD_SERVICE_MS), restarted for every run so no run
# inherits another's SYN queue; legitimate clients in the default class at
# FLOOD_LEGIT_RATE with a patience of 3 s (the SYN and one retransmission,
# sent after 1 s).
FLOOD_WORKERS=${FLOOD_WORKERS:-8}
FLOOD_SERVICE_MS=${FLOOD_SERVICE_MS:-20}
FLOOD_CAPACITY=$(( FLOOD_WORKERS * 1000 / FLOOD_SERVICE_MS ))
FLOOD_LEGIT_RATE=${FLOOD_LEGIT_RATE:-$(( FLOOD_CAPACITY / 2 ))}
FLOOD_PATIENCE_MS=3000
# The nftables rule admits SYNs at the server's capacity.
FLOOD_NFT_RATE=${FLOOD_NFT_RATE:-$FLOOD_CAPACITY}
# shedd's two modes; --verify only where this shedd has it.
FLOOD_DROP_ARGS=${FLOOD_DROP_ARGS-"--verify sheddable=off,sheddable_plus=off"}
FLOOD_VERIFY_ARGS=${FLOOD_VERIFY_ARGS-"--verify sheddable=shedding"}
SHEDDABLE=3 # class index of the default class (include/shedd.h)

# Not grep -q: it leaves at the first match, and under pipefail (flood.sh)
# the second write of the help then fails shedd with SIGPIPE, which made
# this say "no --verify" in about one call of ten.
shedd_has_verify() {
	"$SHEDD" --help 2>&1 | grep -- '--verify' >/dev/null
}

# flood_server_restart: a fresh slowserver on $SRV_APP_CPU.
flood_server_restart() {
	if [ -n "${SLOW_PID:-}" ]; then
		kill "$SLOW_PID" 2>/dev/null || true
		wait "$SLOW_PID" 2>/dev/null || true
	fi
	slow_start --workers "$FLOOD_WORKERS" --service-ms "$FLOOD_SERVICE_MS" \
		--dist fixed --backlog 1024 --duration 3600 || return 1
	taskset -apc "$SRV_APP_CPU" "$SLOW_PID" >/dev/null &&
		chrt -a -f -p "$SRV_APP_PRIO" "$SLOW_PID"
}

# flood_config_start CONFIG: kernel | nft | shedd-drop | shedd-verified
# on the flood testbed. Fails for shedd-verified when shedd has no --verify.
flood_config_start() {
	local args
	case $1 in
	kernel) ;;
	nft) nft_syn_limit "$FLOOD_NFT_RATE" ;;
	shedd-drop | shedd-verified)
		if [ "$1" = shedd-drop ]; then
			args=$FLOOD_DROP_ARGS
			shedd_has_verify || args=
		else
			shedd_has_verify || { echo "flood: this shedd has no --verify" >&2; return 1; }
			args=$FLOOD_VERIFY_ARGS
		fi
		srv_xdp_pass off || return 1
		: >"$TESTBED_TMP/shedd.log"
		# shellcheck disable=SC2086 # options, split on purpose
		# FLOOD_SHEDD_START: how the controller starts (the experiment
		# starts it at the server's capacity); by default shedd's own.
		shedd_start --port "$PORT" ${FLOOD_SHEDD_START:-} $args || return 1
		taskset -apc "$SRV_APP_CPU" "$SHEDD_PID" >/dev/null
		chrt -a -f -p "$SRV_APP_PRIO" "$SHEDD_PID"
		srv_napi_repin || return 1
		;;
	*) echo "flood: unknown configuration '$1'" >&2; return 1 ;;
	esac
}

flood_config_stop() {
	case $1 in
	nft) nft_clear ;;
	shedd-*)
		kill -TERM "$SHEDD_PID" 2>/dev/null || true
		wait "$SHEDD_PID" 2>/dev/null || true
		SHEDD_PID=
		srv_xdp_pass on
		;;
	esac
}

# shedd_class_stat FIELD: a counter of the default class, or 0 without shedd
# (or without that counter).
shedd_class_stat() {
	local v
	[ -e "$PIN_DIR/stats" ] || { echo 0; return 0; }
	v=$(stat_sum "$1" "$SHEDDABLE" 2>/dev/null) || v=0
	[[ "$v" =~ ^[0-9]+$ ]] || v=0
	echo "$v"
}

# flood_snapshot: the counters a run is measured by, one key=value line.
flood_snapshot() {
	echo "t_ns=$(date +%s%N) napi_ns=$(cpu_ns "$SRV_NAPI_PID")" \
		"proc_ns=$(cpu_ns "$SLOW_PID" ${SHEDD_PID:+"$SHEDD_PID"})" \
		"srv_rx=$(veth_stat "$NS_SRV" "$IF_SRV" rx_queue_0_xdp_packets)" \
		"ring_drop=$(veth_stat "${FLOOD_NS:-$NS_RTR}" "${FLOOD_IF:-$IF_RS}" tx_queue_0_xdp_xmit_errors)" \
		"srv_out=$(in_srv nstat -as TcpOutSegs | awk '$1 == "TcpOutSegs" { print $2 }')" \
		"$(rtr_stats)" \
		"syn=$(shedd_class_stat syn) cookie_sent=$(shedd_class_stat cookie_sent)" \
		"ack_admitted=$(shedd_class_stat ack_admitted)"
}

# flood_run RATE SECS: one run on the configuration in place: a fresh
# server, the flood at RATE (packets/s or max) for SECS + the patience, and
# clients for SECS, from the flood's start. Sets FR_LINE, one key=value line
# of the results (see scripts/flood.sh for the fields).
flood_run() {
	local rate=$1 secs=$2 a b g l limit
	flood_server_restart || return 1
	[ -z "${SHEDD_PID:-}" ] || : >"$TESTBED_TMP/shedd.log"
	a=$(flood_snapshot)
	flood_live "$rate" $(( secs + FLOOD_PATIENCE_MS / 1000 )) "$TESTBED_TMP/flood.out"
	ip netns exec "$NS_CLI" taskset -c "$LEGIT_CPU" chrt -f 70 "$LOADGEN" --dst "$SRV_IP" \
		--port "$PORT" --rate "$FLOOD_LEGIT_RATE" --duration "$secs" \
		--patience-ms "$FLOOD_PATIENCE_MS" >"$TESTBED_TMP/legit.out" \
		2>"$TESTBED_TMP/legit.err" || return 1
	wait "$FLOOD_PID" || { cat "$TESTBED_TMP/floodgen.err" >&2; return 1; }
	b=$(flood_snapshot)
	g=$(cat "$TESTBED_TMP/flood.out")
	l=$(cat "$TESTBED_TMP/legit.out")
	limit=0
	if [ -n "${SHEDD_PID:-}" ] && [ -s "$TESTBED_TMP/shedd.log" ]; then
		limit=$(grep -o ' limit=[0-9]*' "$TESTBED_TMP/shedd.log" | cut -d= -f2 |
			sort -n | tail -1)
	fi
	FR_LINE=$(awk -v a="$a" -v b="$b" -v g="$g" -v l="$l" -v limit="${limit:-0}" \
		-v rate="$rate" 'function kv(s, m,   n, i, p) {
			n = split(s, p, " ")
			for (i = 1; i <= n; i++) { split(p[i], x, "="); m[x[1]] = x[2] }
		}
		BEGIN {
			kv(a, A); kv(b, B); kv(g, G); kv(l, L)
			s = (B["t_ns"] - A["t_ns"]) / 1e9
			d_napi = B["napi_ns"] - A["napi_ns"]
			rx = B["srv_rx"] - A["srv_rx"]
			printf "flood_target=%s flood_pps=%.0f", rate, G["sent"] / s
			printf " legit_offered=%d legit_ok=%d success_pct=%.1f", L["offered"], L["ok"],
				L["offered"] ? 100 * L["ok"] / L["offered"] : 0
			printf " srv_rx_pps=%.0f ring_drop_pps=%.0f", rx / s,
				(B["ring_drop"] - A["ring_drop"]) / s
			printf " synack_spoof_pps=%.0f", (B["spoof_synack"] - A["spoof_synack"]) / s
			printf " srv_out_pps=%.0f", (B["srv_out"] - A["srv_out"]) / s
			printf " napi_cpu_pct=%.1f napi_ns_per_pkt=%.0f", 100 * d_napi / 1e9 / s,
				rx ? d_napi / rx : 0
			printf " proc_cpu_pct=%.1f", 100 * (B["proc_ns"] - A["proc_ns"]) / 1e9 / s
			printf " shedd_limit_max=%.0f shedd_syn=%.0f shedd_cookie_sent=%.0f shedd_ack_admitted=%.0f\n",
				limit, B["syn"] - A["syn"], B["cookie_sent"] - A["cookie_sent"],
				B["ack_admitted"] - A["ack_admitted"]
		}')
}

# The flood benchmark (scripts/bench_flood.sh) and its regression check
# (tests/integration/fastpath.bats): one configuration at a time on the
# server, the generator at full speed, and what the server's receive thread
# handled (the frames its veth's XDP program ran on: those the ring took)
# and spent on each. Configurations:
#   xdp-drop      .output/xdp_drop.bpf.o, the trivial program
#   xdp-readdrop  .output/xdp_readdrop.bpf.o: reads the headers, drops a SYN
#   shedd-drop    shedd $BENCH_SHEDD_DROP_ARGS: the flood shed by XDP_DROP
#   shedd-drop-nofair  the same with --fair off: what per-source fairness
#                 costs the flood's path beside it
#   shedd-cookie  shedd $BENCH_SHEDD_COOKIE_ARGS: a cookie SYN-ACK (XDP_TX)
#                 to every SYN, a listener on the port
#   nft           nft_syn_limit $FLOOD_NFT_RATE at the veth's ingress hook
#   hashlimit     iptables (ip6tables) hashlimit: above $BENCH_HASHLIMIT per
#                 source address, SYNs to the port are dropped in INPUT
#   kernel        the kernel alone: a listener, tcp_syncookies=1
#   obj:PATH      any XDP object (section xdp) on the server's veth
# Every one but the XDP objects has a fresh listener on the port.
BENCH_CONFIGS_ALL="xdp-drop xdp-readdrop shedd-drop shedd-drop-nofair shedd-cookie nft hashlimit kernel"
BENCH_SHEDD_DROP_ARGS=${BENCH_SHEDD_DROP_ARGS-"--rate 1000 --verify off"}
# The cookie budget out of the way (--cookie-rate at its most, 10 M/s over
# all CPUs): the path is measured, not the budget.
BENCH_SHEDD_COOKIE_ARGS=${BENCH_SHEDD_COOKIE_ARGS-"--verify sheddable=always --cookie-rate 10000000"}
BENCH_HASHLIMIT=${BENCH_HASHLIMIT:-1/second}
# Time from the generator's start to the measured window, so the window
# sees the steady state (rings full, tables warm).
BENCH_WARM_S=${BENCH_WARM_S:-1}
# Frames per live-frames batch: the most (256, the ring's size). Each
# wake-up of the receive thread costs (on a virtual machine, an IPI and a
# halt exit), and with smaller batches that are not back to back the
# thread wakes for a few frames at a time, so a cheap program's cost per
# packet is mostly wake-ups: trivial XDP_DROP measured 69 ns with batches
# of 256 and 167-235 ns with 64 or 16, shedd 380, 432 and 577 ns. Full
# batches are what a NIC under a flood gives its NAPI poll.
BENCH_BATCH=${BENCH_BATCH:-256}

# bench_srv_ip FAMILY: the server's address of that family (4 or 6).
bench_srv_ip() {
	if [ "$1" = 6 ]; then echo "$SRV_IP6"; else echo "$SRV_IP"; fi
}

# bench_listener FAMILY: a fresh listener on the port (a slowserver with a
# 1024-entry accept queue: the kernel answers the rest with cookies).
bench_listener() {
	ip netns exec "$NS_SRV" "$SLOWSERVER" --addr "$(bench_srv_ip "$1")" --port "$PORT" \
		--workers 1 --service-ms 1 --dist fixed --backlog 1024 --duration 3600 \
		>"$TESTBED_TMP/slow.out" 2>"$TESTBED_TMP/slow.err" &
	SLOW_PID=$!
	PIDS+=("$SLOW_PID")
	wait_listening "the benchmark's listener" "$PORT" || return 1
	taskset -apc "$SRV_APP_CPU" "$SLOW_PID" >/dev/null &&
		chrt -a -f -p "$SRV_APP_PRIO" "$SLOW_PID"
}

# bench_xdp_obj OBJ: OBJ in place of the pass-only program.
bench_xdp_obj() {
	[ -r "$1" ] || { echo "bench: no XDP object '$1'" >&2; return 1; }
	srv_xdp_pass off || return 1
	in_srv ip link set dev "$IF_SRV" xdpdrv obj "$1" sec xdp || {
		echo "bench: attaching $1 to $IF_SRV failed" >&2
		return 1
	}
	srv_napi_repin
}

# bench_config_start CONFIG FAMILY / bench_config_stop CONFIG FAMILY
bench_config_start() {
	local ipt=iptables
	[ "$2" = 6 ] && ipt=ip6tables
	case $1 in
	xdp-drop) bench_xdp_obj "$ROOT/.output/xdp_drop.bpf.o" ;;
	xdp-readdrop) bench_xdp_obj "$ROOT/.output/xdp_readdrop.bpf.o" ;;
	obj:*) bench_xdp_obj "${1#obj:}" ;;
	shedd-drop | shedd-drop-nofair | shedd-cookie)
		bench_listener "$2" || return 1
		srv_xdp_pass off || return 1
		: >"$TESTBED_TMP/shedd.log"
		# shellcheck disable=SC2086 # options, split on purpose
		if [ "$1" = shedd-drop ]; then
			shedd_start --port "$PORT" $BENCH_SHEDD_DROP_ARGS
		elif [ "$1" = shedd-drop-nofair ]; then
			shedd_start --port "$PORT" $BENCH_SHEDD_DROP_ARGS --fair off
		else
			shedd_start --port "$PORT" $BENCH_SHEDD_COOKIE_ARGS
		fi || { echo "bench: shedd did not attach:" >&2; cat "$TESTBED_TMP/shedd.log" >&2; return 1; }
		taskset -apc "$SRV_APP_CPU" "$SHEDD_PID" >/dev/null
		chrt -a -f -p "$SRV_APP_PRIO" "$SHEDD_PID"
		srv_napi_repin
		;;
	nft)
		bench_listener "$2" || return 1
		nft_syn_limit "$FLOOD_NFT_RATE"
		;;
	hashlimit)
		bench_listener "$2" || return 1
		in_srv "$ipt" -I INPUT -p tcp --dport "$PORT" --syn -m hashlimit \
			--hashlimit-name "shedd-bench$2" --hashlimit-mode srcip \
			--hashlimit-above "$BENCH_HASHLIMIT" --hashlimit-burst 5 \
			--hashlimit-htable-size 65536 --hashlimit-htable-max 131072 -j DROP
		;;
	kernel) bench_listener "$2" ;;
	*) echo "bench: unknown configuration '$1'" >&2; return 1 ;;
	esac
}

bench_config_stop() {
	local ipt=iptables
	[ "$2" = 6 ] && ipt=ip6tables
	case $1 in
	xdp-* | obj:*)
		in_srv ip link set dev "$IF_SRV" xdpdrv off
		srv_xdp_pass on || return 1
		;;
	shedd-*)
		kill -TERM "$SHEDD_PID" 2>/dev/null || true
		wait "$SHEDD_PID" 2>/dev/null || true
		SHEDD_PID=
		srv_xdp_pass on || return 1
		;;
	nft) nft_clear ;;
	hashlimit) in_srv "$ipt" -F INPUT ;;
	esac
	if [ -n "${SLOW_PID:-}" ]; then
		kill "$SLOW_PID" 2>/dev/null || true
		wait "$SLOW_PID" 2>/dev/null || true
		SLOW_PID=
	fi
}

# bench_snapshot: the counters a measurement is taken from, key=value.
bench_snapshot() {
	echo "napi_ns=$(cpu_ns "$SRV_NAPI_PID") t_ns=$(date +%s%N)" \
		"srv_rx=$(veth_stat "$NS_SRV" "$IF_SRV" rx_queue_0_xdp_packets)" \
		"ring_drop=$(veth_stat "$NS_RTR" "$IF_RS" tx_queue_0_xdp_xmit_errors)" \
		"$(rtr_stats)"
}

# bench_measure SECS FAMILY: the generator at full speed for
# BENCH_WARM_S + SECS, measured over the last SECS. Sets BM_LINE:
# handled_pps ns_per_pkt napi_cpu_pct sent_pps ring_drop_pps answered_pps
# (SYN-ACKs to the spoofed sources, counted by the router).
bench_measure() {
	local secs=$1 a b g rc=0
	FLOOD_FAMILY=$2 FLOODGEN_ARGS="--batch $BENCH_BATCH ${FLOODGEN_ARGS:-}" \
		flood_live max $(( BENCH_WARM_S + secs + 2 )) "$TESTBED_TMP/flood.out"
	sleep "$BENCH_WARM_S"
	a=$(bench_snapshot)
	sleep "$secs"
	b=$(bench_snapshot)
	kill -TERM "$FLOOD_PID" 2>/dev/null || true
	wait "$FLOOD_PID" || rc=$?
	# Stopped by the signal it exits 1 and says so; anything else is an error.
	if [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 1 ] &&
			tail -1 "$TESTBED_TMP/floodgen.err" | grep -q interrupted; }; then
		echo "bench: the flood generator failed ($rc):" >&2
		cat "$TESTBED_TMP/floodgen.err" >&2
		return 1
	fi
	: >"$TESTBED_TMP/floodgen.err"
	g=$(cat "$TESTBED_TMP/flood.out")
	BM_LINE=$(awk -v a="$a" -v b="$b" -v g="$g" 'function kv(s, m,   n, i, p, x) {
			n = split(s, p, " ")
			for (i = 1; i <= n; i++) { split(p[i], x, "="); m[x[1]] = x[2] }
		}
		BEGIN {
			kv(a, A); kv(b, B); kv(g, G)
			s = (B["t_ns"] - A["t_ns"]) / 1e9
			rx = B["srv_rx"] - A["srv_rx"]
			napi = B["napi_ns"] - A["napi_ns"]
			if (s <= 0 || rx <= 0 || napi <= 0) {
				printf "bench: nothing measured (%.3f s, %d frames handled, %d ns on the receive CPU)\n",
					s, rx, napi > "/dev/stderr"
				exit 1
			}
			printf "handled_pps=%.0f ns_per_pkt=%.1f napi_cpu_pct=%.1f", rx / s, napi / rx,
				100 * napi / 1e9 / s
			printf " sent_pps=%.0f ring_drop_pps=%.0f answered_pps=%.0f\n", G["rate_pps"],
				(B["ring_drop"] - A["ring_drop"]) / s,
				(B["spoof_synack"] - A["spoof_synack"]) / s
		}')
}
