#!/usr/bin/env bats
# verified.bats - verified admission end to end: real clients connect through
# a class that XDP answers with SYN cookies, exchange data, and negotiate the
# same TCP options as without shedd, on both hand-off paths; a proven client
# without a token is refused at once; a forged cookie is counted.

load lib

TCPECHO="$ROOT/.output/tcpecho"
COOKIEACK="$ROOT/.output/cookieack"

setup() {
	testbed_up
	echo_start "$SRV_IP" "$SRV_IP:$PORT"
	echo_start "$SRV_IP6" "[$SRV_IP6]:$PORT"
}
teardown() { testbed_down; }

# echo_start ADDR SS_ADDR [PORT]: an echo server on ADDR:PORT (default
# $PORT) in srv, for 60 s; SS_ADDR is how ss writes ADDR:PORT.
echo_start() {
	ip netns exec "$NS_SRV" "$TCPECHO" serve --addr "$1" --port "${3:-$PORT}" \
		--duration 60 >/dev/null 2>>"$TESTBED_TMP/echo.err" &
	PIDS+=($!)
	wait_for "echo server on $2" 5 sh -c "ip netns exec $NS_SRV ss -ltnH | grep -qF '$2 '"
}

# exchange NAME ADDR [PORT]: one client connection from cli to ADDR:PORT
# (default $PORT), 1 MB each way,
# then held open 1.5 s (4.5 s where TESTBED_TIME_SCALE slows the waits: in
# a loaded guest the two `ss` took longer than 1.5 s); while it is held,
# `ss -tni` of the client's end goes to NAME.cli and the server's to
# NAME.srv. Fails unless the echo came back whole. Called directly, not
# inside $(...).
exchange() {
	local out="$TESTBED_TMP/$1" port=${3:-$PORT} pid hold=1500
	if [ "$TESTBED_TIME_SCALE" -gt 1 ]; then hold=4500; fi
	ip netns exec "$NS_CLI" "$TCPECHO" connect --addr "$2" --port "$port" \
		--bytes 1000000 --hold-ms "$hold" >"$out" 2>"$out.err" &
	pid=$!
	PIDS+=("$pid")
	# The client's first line: its data came back, or it failed.
	if ! wait_for "client $1 exchanged its data" 10 grep -qE '^(exchanged|result=)' "$out" ||
	   ! grep -q '^exchanged' "$out"; then
		cat "$out" "$out.err"
		return 1
	fi
	in_cli ss -tnioH state established "( dport = :$port )" >"$out.cli"
	in_srv ss -tnioH state established "( sport = :$port )" >"$out.srv"
	if ! wait "$pid"; then
		cat "$out" "$out.err"
		return 1
	fi
	cat "$out"
	grep -q '^result=ok' "$out"
}

# tcp_opts FILE: what `ss -tni` says the one connection in FILE negotiated:
# wscale:S,R, mss:N and the words ts, sack and ecn where present, sorted.
tcp_opts() {
	local n
	n=$(grep -c ' rto:' "$1" || true)
	if [ "$n" != 1 ]; then
		echo "tcp_opts: $1 shows $n connections, expected 1" >&2
		cat "$1" >&2
		return 1
	fi
	{
		grep -oE 'wscale:[0-9]+,[0-9]+' "$1"
		grep -oE '(^|[[:space:]])mss:[0-9]+' "$1" | tr -d '[:space:]'
		echo
		grep -owE 'ts|sack|ecn' "$1"
	} | sort | tr '\n' ' '
}

# same_opts NAME BASE [WORD...]: both ends of NAME negotiated what those of
# BASE did, and BASE shows every WORD (so the comparison has something to
# compare).
same_opts() {
	local end got want word name=$1 base=$2
	shift 2
	for end in cli srv; do
		want=$(tcp_opts "$TESTBED_TMP/$base.$end")
		got=$(tcp_opts "$TESTBED_TMP/$name.$end")
		echo "$end: $base [$want], with shedd [$got]"
		for word in mss "$@"; do
			[[ "$want" == *"$word"* ]]
		done
		[ "$got" = "$want" ]
	done
}

# pin_sum MAP FIELD: a counter of a pinned per-CPU map of shedd, summed.
pin_sum() {
	bpftool map dump pinned "$PIN_DIR/$1" | jq "[.[0].values[].value.$2] | add"
}

# The counters of the default class (3, sheddable) after real clients went
# through it verified: answered with cookies, proven, admitted by ACK, and
# no SYN charged directly nor any cookie found invalid. The client's data
# segments that reached XDP before the kernel made its connection (those
# of the ACK's NAPI poll, under emulation often several) follow the ACK,
# uncharged, in ack_repeat.
verified_counters() {
	local sent valid admitted invalid direct
	sent=$(stat_sum cookie_sent 3)
	valid=$(stat_sum ack_valid 3)
	admitted=$(stat_sum ack_admitted 3)
	invalid=$(stat_sum ack_invalid 3)
	direct=$(stat_sum admitted 3)
	echo "cookie_sent=$sent ack_valid=$valid ack_admitted=$admitted ack_invalid=$invalid" \
		"admitted=$direct ack_repeat=$(stat_sum ack_repeat)"
	within "$sent" "$1" 1000
	within "$valid" "$1" 1000
	within "$admitted" "$1" 1000
	within "$invalid" 0 0
	within "$direct" 0 0
}

@test "tc hand-off: an IPv4 client with ECN exchanges data; options as without shedd" {
	need_tc_handoff
	# The client asks for ECN, so the cookie must carry it too.
	in_cli sysctl -qw net.ipv4.tcp_ecn=1
	exchange base "$SRV_IP"
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff tc
	exchange verified "$SRV_IP"
	same_opts verified base wscale sack ts ecn
	verified_counters 1
	assigned=$(pin_sum handoff_stats assigned)
	echo "handoff_stats.assigned=$assigned"
	within "$assigned" 1 1000
}

@test "tc hand-off: an IPv6 client exchanges data; options as without shedd" {
	need_tc_handoff
	exchange base "$SRV_IP6"
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff tc
	exchange verified "$SRV_IP6"
	same_opts verified base wscale sack ts
	verified_counters 1
	assigned=$(pin_sum handoff_stats assigned)
	echo "handoff_stats.assigned=$assigned"
	within "$assigned" 1 1000
}

@test "kernel hand-off: an IPv4 client exchanges data; options as without shedd" {
	exchange base "$SRV_IP"
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff kernel
	[ "$(in_srv sysctl -n net.ipv4.tcp_syncookies)" = 2 ]
	[ "$(in_srv sysctl -n net.ipv4.tcp_timestamps)" = 2 ]
	exchange verified "$SRV_IP"
	same_opts verified base wscale sack ts
	verified_counters 1
}

@test "kernel hand-off: an IPv6 client exchanges data; options as without shedd" {
	exchange base "$SRV_IP6"
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff kernel
	exchange verified "$SRV_IP6"
	same_opts verified base wscale sack ts
	verified_counters 1
}

# A client without timestamps (Windows by default): a cookie then carries
# its MSS alone. The kernel hand-off leaves its ACK to the kernel's own
# check; the tc hand-off gives the listener a request socket with the MSS
# the XDP program kept for the flow. Either way the options must be those
# the kernel's own cookies give (tcp_syncookies=2, no shedd): the MSS, no
# window scaling, no SACK. The kernel takes a cookie only on a listener
# that sent one of its own lately (tcp_synq_no_recent_overflow): the
# reference runs on a listener of its own, so the one shedd protects has
# sent none.
# no_timestamps HANDOFF ADDR SS_ADDR: that, to the server's ADDR (ss writes
# it SS_ADDR with the port).
no_timestamps() {
	local port=$((PORT + 1))
	in_cli sysctl -qw net.ipv4.tcp_timestamps=0
	in_srv sysctl -qw net.ipv4.tcp_syncookies=2
	echo_start "$2" "$3:$port" "$port"
	exchange base "$2" "$port"
	in_srv sysctl -qw net.ipv4.tcp_syncookies=1
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff "$1"
	exchange verified "$2"
	same_opts verified base
	verified_counters 1
}

@test "tc hand-off: an IPv4 client without timestamps gets what the kernel's own cookies give" {
	need_tc_handoff
	no_timestamps tc "$SRV_IP" "$SRV_IP"
}

@test "tc hand-off: an IPv6 client without timestamps gets what the kernel's own cookies give" {
	need_tc_handoff
	no_timestamps tc "$SRV_IP6" "[$SRV_IP6]"
}

@test "kernel hand-off: an IPv4 client without timestamps gets what the kernel's own cookies give" {
	no_timestamps kernel "$SRV_IP" "$SRV_IP"
}

@test "kernel hand-off: an IPv6 client without timestamps gets what the kernel's own cookies give" {
	no_timestamps kernel "$SRV_IP6" "[$SRV_IP6]"
}

# A proven client without a token: its ACK gets a RST, so the client fails
# at once instead of waiting on retransmissions.
@test "out of tokens: proven clients are reset at once" {
	shedd_start --port "$PORT" --controller off --rate 1 --burst 1 \
		--verify sheddable=always $(cookie_handoff)
	reset=0
	for i in 1 2 3 4 5; do
		run ip netns exec "$NS_CLI" "$TCPECHO" connect --addr "$SRV_IP" --port "$PORT" \
			--bytes 1000 --timeout-ms 3000
		echo "client $i: status $status: $output"
		[ "$status" -eq 0 ] && continue
		result=$(field result "$output")
		[ "$result" = ECONNRESET ] || [ "$result" = ECONNREFUSED ]
		ms=$(field elapsed_ms "$output")
		within "${ms%.*}" 0 300
		reset=$((reset + 1))
	done
	# A class rate of 1/s and a depth of 1 admit at most one of five.
	within "$reset" 4 5
	refused=$(stat_sum ack_refused 3)
	echo "reset=$reset ack_refused=$refused"
	within "$refused" "$reset" 1000
}

# A handshake by hand: the genuine cookie is proven, the same with one bit
# of the cookie flipped is not, and is counted.
@test "kernel hand-off: a SYN admitted directly is charged once, its ACK to the kernel's cookie passes" {
	# Verify while shedding, tokens to spare: the SYN is charged and
	# passed, and the kernel answers it with a cookie of its own
	# (tcp_syncookies=2). Its ACK reaches the listener with that cookie and
	# must not be charged again: with the bucket empty by then, the client
	# would be reset after its connect() returned.
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=shedding --handoff kernel
	[ "$(in_srv sysctl -n net.ipv4.tcp_syncookies)" = 2 ]
	exchange once "$SRV_IP"
	exchange once6 "$SRV_IP6"
	direct=$(stat_sum admitted 3)
	charged=$(stat_sum charged 3)
	acks=$(stat_sum ack_admitted 3)
	repeat=$(stat_sum ack_repeat)
	echo "admitted=$direct charged=$charged ack_admitted=$acks ack_repeat=$repeat"
	within "$direct" 2 2
	within "$charged" 2 2
	within "$acks" 0 0
	within "$repeat" 2 1000
}

# The kernel's own cookies under the tc hand-off. A SYN XDP charges and
# passes (verify while shedding, tokens to spare) is answered by the
# kernel, with a cookie of its own under tcp_syncookies=2 (as after a
# listener's overflow). With tcp_timestamps=1 its timestamp carries the
# options plus the flow's offset, which only the kernel's cookie check
# takes off: decoded as shedd's, the offset's bits came out as a random
# window scale, SACK, MSS and ECN. The hand-off leaves that ACK to the
# kernel (handoff_stats.invalid, never assigned): the connection must
# negotiate what the kernel alone gives.
@test "tc hand-off: the ACK of the kernel's own cookie is left to the kernel; options as without shedd" {
	need_tc_handoff
	in_srv sysctl -qw net.ipv4.tcp_syncookies=2 net.ipv4.tcp_timestamps=1
	in_cli sysctl -qw net.ipv4.tcp_timestamps=1 net.ipv4.tcp_sack=1 \
		net.ipv4.tcp_window_scaling=1
	exchange base "$SRV_IP"
	exchange base6 "$SRV_IP6"
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=shedding --handoff tc
	[ "$(in_srv sysctl -n net.ipv4.tcp_syncookies)" = 2 ]
	[ "$(in_srv sysctl -n net.ipv4.tcp_timestamps)" = 1 ]
	exchange kernel "$SRV_IP"
	exchange kernel6 "$SRV_IP6"
	same_opts kernel base wscale sack ts
	same_opts kernel6 base6 wscale sack ts
	direct=$(stat_sum admitted 3)
	acks=$(stat_sum ack_admitted 3)
	assigned=$(pin_sum handoff_stats assigned)
	invalid=$(pin_sum handoff_stats invalid)
	echo "admitted=$direct ack_admitted=$acks handoff_stats: assigned=$assigned" \
		"invalid=$invalid"
	within "$direct" 2 2
	within "$acks" 0 0
	within "$assigned" 0 0
	within "$invalid" 2 1000
}

@test "a forged cookie is counted in ack_invalid, the genuine one in ack_valid" {
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always $(cookie_handoff)
	ack() {
		ip netns exec "$NS_CLI" "$COOKIEACK" --iface "$IF_CLI" --dst-mac "$SRV_MAC" \
			--src 198.19.7.7 --dst "$SRV_IP" --sport "$1" --dport "$PORT" --corrupt "$2"
	}
	ack 40001 0x100
	ack 40002 0x10000
	invalid=$(stat_sum ack_invalid 3)
	valid=$(stat_sum ack_valid 3)
	echo "after two forged: ack_invalid=$invalid ack_valid=$valid"
	within "$invalid" 2 2
	within "$valid" 0 0
	ack 40003 0
	invalid=$(stat_sum ack_invalid 3)
	valid=$(stat_sum ack_valid 3)
	echo "after the genuine one: ack_invalid=$invalid ack_valid=$valid"
	within "$invalid" 2 2
	within "$valid" 1 1
}

# reuse_client ADDR PORT SPORT [N]: N (default 2) requests from cli to
# ADDR:PORT, all from source port SPORT, each as soon as the last is over.
# The server (slowserver) closes first, so it holds the 4-tuple in
# TIME_WAIT when the next SYN comes. Each must be answered within 2 s.
reuse_client() {
	ip netns exec "$NS_CLI" timeout 15 python3 - "$@" <<'PY'
import socket, sys, time
addr, port, sport = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
count = int(sys.argv[4]) if len(sys.argv) > 4 else 2
fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
for i in range(1, count + 1):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('::' if fam == socket.AF_INET6 else '0.0.0.0', sport))
    s.settimeout(2.0)
    t = time.monotonic()
    try:
        s.connect((addr, port))
        s.sendall(b'GET\n')
        reply = s.recv(16)
        while s.recv(16):  # to the server's FIN: it closed first
            pass
    except OSError as e:
        print(f'request {i} from port {sport}: {e!r} after {(time.monotonic() - t) * 1000:.0f} ms')
        sys.exit(1)
    print(f'request {i} from port {sport}: {reply!r} in {(time.monotonic() - t) * 1000:.0f} ms')
    s.close()
    if reply != b'OK\n':
        sys.exit(1)
PY
}

# slow_on ADDR PORT: slowserver on ADDR:PORT in srv, answering at once.
slow_on() {
	ip netns exec "$NS_SRV" "$SLOWSERVER" --addr "$1" --port "$2" --workers 2 \
		--service-ms 1 --dist fixed --duration 60 >/dev/null 2>>"$TESTBED_TMP/slow.err" &
	PIDS+=($!)
	wait_listening slowserver "$2"
}

# A client that reuses its port while the server holds the last
# connection on it in TIME_WAIT (as NAT does): its SYN goes to the kernel,
# which recycles the TIME_WAIT socket. A cookie would make a handshake the
# old socket swallows, and the request would hang. Both the flows that
# closed before shedd started and those that closed since: the socket
# lookup of every SYN a cookie would answer finds them.
@test "verified class: a client reusing its port while the server holds it in TIME_WAIT is served" {
	need_tc_handoff
	local p4=$((PORT + 1)) p6=$((PORT + 2)) busy
	slow_on "$SRV_IP" "$p4"
	slow_on "$SRV_IP6" "$p6"
	# Closed before shedd starts: in TIME_WAIT when it does.
	run reuse_client "$SRV_IP" "$p4" 41003 1
	[ "$status" -eq 0 ]
	run reuse_client "$SRV_IP6" "$p6" 41004 1
	[ "$status" -eq 0 ]
	in_srv ss -tanH state time-wait | grep -qF ":41003"
	shedd_start --port "$PORT,$p4,$p6" --rate 1000 --verify sheddable=always --handoff tc
	run reuse_client "$SRV_IP" "$p4" 41003 1
	echo "$output"
	[ "$status" -eq 0 ]
	run reuse_client "$SRV_IP6" "$p6" 41004 1
	echo "$output"
	[ "$status" -eq 0 ]
	run reuse_client "$SRV_IP" "$p4" 41001
	echo "$output"
	[ "$status" -eq 0 ]
	run reuse_client "$SRV_IP6" "$p6" 41002
	echo "$output"
	[ "$status" -eq 0 ]
	busy=$(stat_sum syn_tuple_busy)
	echo "syn_tuple_busy=$busy cookie_sent=$(stat_sum cookie_sent 3)"
	within "$busy" 4 4
	within "$(stat_sum cookie_sent 3)" 2 2
}

# connect_refused ADDR PORT: a connection from cli to ADDR:PORT must be
# refused (the kernel's RST) within 2 s; a handshake that completes fails.
connect_refused() {
	ip netns exec "$NS_CLI" timeout 10 python3 - "$@" <<'PY'
import socket, sys, time
addr, port = sys.argv[1], int(sys.argv[2])
fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(2.0)
t = time.monotonic()
try:
    s.connect((addr, port))
except ConnectionRefusedError:
    print(f'{addr} port {port}: refused in {(time.monotonic() - t) * 1000:.0f} ms')
    sys.exit(0)
except OSError as e:
    print(f'{addr} port {port}: {e!r}, not refused')
    sys.exit(1)
print(f'{addr} port {port}: a handshake completed, nobody listens there')
sys.exit(1)
PY
}

# Every port protected (no --port): a port scan must not see every port
# open. A SYN to a port without a listener goes to the kernel, which
# refuses it; the listener's port still gets its cookie.
@test "no --port: a verified class's SYN to a port nobody listens on is refused by the kernel, no cookie" {
	need_tc_handoff
	local closed=$((PORT + 7))
	shedd_start --rate 1000 --verify sheddable=always --handoff tc
	run connect_refused "$SRV_IP" "$closed"
	echo "$output"
	[ "$status" -eq 0 ]
	run connect_refused "$SRV_IP6" "$closed"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "after the closed port: cookie_sent=$(stat_sum cookie_sent 3)" \
		"syn_no_listener=$(stat_sum syn_no_listener)"
	within "$(stat_sum cookie_sent 3)" 0 0
	within "$(stat_sum syn_no_listener)" 2 2
	exchange open4 "$SRV_IP"
	echo "after the listener's port: cookie_sent=$(stat_sum cookie_sent 3)"
	within "$(stat_sum cookie_sent 3)" 1 1
}

# held_client ADDR PORT TRIGGER: a connection from cli to ADDR:PORT that
# prints "connected", waits for the file TRIGGER, then sends a request;
# prints "reset" (and succeeds) if the server answers it with a RST within
# 3 s.
held_client() {
	ip netns exec "$NS_CLI" timeout 20 python3 - "$@" <<'PY'
import os, socket, sys, time
addr, port, trigger = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
s = socket.create_connection((addr, port), timeout=2)
print('connected', flush=True)
while not os.path.exists(trigger):
    time.sleep(0.05)
s.settimeout(3.0)
t = time.monotonic()
try:
    s.sendall(b'GET\n')
    data = s.recv(16)
    print(f'answered {data!r}: the connection was not gone')
    sys.exit(1)
except ConnectionResetError:
    print(f'reset in {(time.monotonic() - t) * 1000:.0f} ms')
    sys.exit(0)
except OSError as e:
    print(f'{e!r}: not reset')
    sys.exit(1)
PY
}

# A server restart loses its connections without a word to the clients.
# Their next segment, to the listener again, carries no valid cookie; no
# cookie was sent, so none is forged: the kernel resets it at once, the
# client does not retransmit for 15 minutes.
@test "an ACK without a valid cookie to a listener that sent no cookie is reset by the kernel" {
	need_tc_handoff
	local p=$((PORT + 3)) out="$TESTBED_TMP/held" trig="$TESTBED_TMP/held.go" pid rc
	ip netns exec "$NS_SRV" timeout 30 python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(8)
conns = []
while True:
    conns.append(s.accept()[0])
' "$SRV_IP" "$p" &
	PIDS+=($!)
	wait_listening "restarted server" "$p"
	held_client "$SRV_IP" "$p" "$trig" >"$out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_for "client connected" 5 grep -q '^connected' "$out"
	shedd_start --port "$p" --rate 1000 --verify sheddable=always --handoff tc
	# The server's side of the connection goes without a RST reaching
	# the client, as in a crash; its listener stays.
	in_srv nft add table inet shedd_test
	in_srv nft add chain inet shedd_test out '{ type filter hook output priority 0; }'
	in_srv nft add rule inet shedd_test out tcp sport "$p" drop
	in_srv ss -K -tn state established "( sport = :$p )"
	in_srv nft delete table inet shedd_test
	run in_srv ss -tnH state established "( sport = :$p )"
	[ -z "$output" ]
	touch "$trig"
	rc=0
	wait "$pid" || rc=$?
	cat "$out"
	[ "$rc" -eq 0 ]
	echo "ack_to_kernel=$(stat_sum ack_to_kernel) ack_invalid=$(stat_sum ack_invalid 3)"
	within "$(stat_sum ack_to_kernel)" 1 3
	within "$(stat_sum ack_invalid 3)" 0 0
}

# A spoofed flood past the host's cookie budget: the SYN-ACKs sent stay
# within --cookie-rate over all CPUs (each CPU's share, rounded up, and
# 10 ms of depth), and every SYN refused a cookie is counted, in the pins
# and in the metrics.
@test "the cookie budget is the host's: a flood over it is refused cookies, and counted" {
	need_tc_handoff
	local line sent limited syn n scraped
	n=$(tr ',' '\n' </sys/devices/system/cpu/possible |
		awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }')
	shedd_start --port "$PORT" --rate 1000 --verify sheddable=always --handoff tc \
		--cookie-rate 200
	FLOOD_CPU=any
	line=$(flood 198.19.128.0/17 2000 2)
	echo "$line"
	sent=$(stat_sum cookie_sent 3)
	limited=$(stat_sum cookie_limited 3)
	syn=$(stat_sum syn 3)
	echo "syn=$syn cookie_sent=$sent cookie_limited=$limited on $n CPUs"
	within "$(field sent "$line")" 3000 4000
	# 2 s of the flood and the 1 s it waits after, at 200/s over all
	# CPUs, each rounded up, and each CPU's depth.
	within "$sent" 1 $(( 3 * (200 + n) + n * 2 ))
	within "$limited" $(( syn - sent )) $(( syn - sent ))
	within "$limited" 2000 "$syn"
	scraped=$(in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics |
		grep '^shedd_syn_cookie_limited_total{.*class="sheddable"' | awk '{ print $2 }')
	echo "shedd_syn_cookie_limited_total{class=sheddable} $scraped"
	within "$scraped" "$limited" "$limited"
}
