#!/usr/bin/env bats
# signed.bats - listeners a SYN cookie cannot answer, behind a verified
# class that a flood has put in cookie mode: a BGP-style listener with a
# TCP-MD5 key (its peer drops an unsigned SYN-ACK, and a cookie SYN-ACK is
# unsigned), and an MPTCP listener (the tc hand-off cannot take it). Their
# clients are real sockets of the client's kernel.

load lib

setup() { testbed_up; }
teardown() { testbed_down; }

MD5_KEY=shedd-test-md5-key

# md5_py: the python3 helpers of the tests below, with a TCP-MD5 key
# (setsockopt TCP_MD5SIG, struct tcp_md5sig of linux/tcp.h) for one peer.
md5_py() {
	cat <<'PY'
import socket, struct, sys, time

TCP_MD5SIG = 14

def md5sig(peer, key):
    """struct tcp_md5sig: the peer's sockaddr in 128 bytes, flags,
    prefixlen, keylen, ifindex, the key in 80 bytes."""
    if ':' in peer:
        sa = struct.pack('=H', socket.AF_INET6) + struct.pack('!HI', 0, 0) + \
            socket.inet_pton(socket.AF_INET6, peer) + struct.pack('=I', 0)
    else:
        sa = struct.pack('=H', socket.AF_INET) + struct.pack('!H', 0) + \
            socket.inet_pton(socket.AF_INET, peer)
    k = key.encode()
    return sa.ljust(128, b'\0') + struct.pack('=BBHi', 0, 0, len(k), 0) + k.ljust(80, b'\0')

def family(addr):
    return socket.AF_INET6 if ':' in addr else socket.AF_INET
PY
	ok_py
}

# ok_py: python3's serve() (a listener that answers each connection "OK")
# and connect() (a client that reads it within 5 s, says how it went, and
# exits 0 only if "OK" came), for the MD5 and MPTCP sockets alike.
ok_py() {
	cat <<'PY'
import socket, sys, time

def serve(s, addr, port):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        c.sendall(b'OK\n')
        c.close()

def connect(s, addr, port):
    s.settimeout(5.0)
    t = time.monotonic()
    try:
        s.connect((addr, port))
        reply = s.recv(16)
    except OSError as e:
        print(f'{addr}: {e!r} after {(time.monotonic() - t) * 1000:.0f} ms')
        sys.exit(1)
    print(f'{addr}: {reply!r} in {(time.monotonic() - t) * 1000:.0f} ms')
    sys.exit(0 if reply == b'OK\n' else 1)
PY
}

# md5_server ADDR PEER: a listener in srv on ADDR:$PORT with a TCP-MD5 key
# for PEER that answers each connection with "OK", for 60 s.
md5_server() {
	ip netns exec "$NS_SRV" timeout 60 python3 -c "$(md5_py)
addr, peer, port, key = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = socket.socket(family(addr), socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, TCP_MD5SIG, md5sig(peer, key))
serve(s, addr, port)
" "$1" "$2" "$PORT" "$MD5_KEY" >/dev/null 2>>"$TESTBED_TMP/md5.err" &
	PIDS+=($!)
	wait_listening "MD5 listener on $1" "$PORT"
}

# md5_client ADDR: a connection from cli to ADDR:$PORT signed with the key,
# on CPU $FLOOD_CPU as the flood (the class's cookie mode is per CPU);
# prints how it went, fails unless "OK" came back within 5 s.
md5_client() {
	local cpu=${FLOOD_CPU:-$(( $(nproc) - 1 ))}
	ip netns exec "$NS_CLI" taskset -c "$cpu" timeout 20 python3 -c "$(md5_py)
addr, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(family(addr), socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, TCP_MD5SIG, md5sig(addr, key))
connect(s, addr, port)
" "$1" "$PORT" "$MD5_KEY"
}

# signed_count: the syn_signed counter of the pinned syn_checks map.
signed_count() {
	bpftool map dump pinned "$PIN_DIR/syn_checks" | jq '[.[0].values[].value.syn_signed] | add'
}

# metrics_have NAME{LABELS} VALUE...: shedd's metrics (published every
# tick) hold each sample, its interface label first.
metrics_have() {
	local m name labels
	m=$(in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics) || return 1
	while [ "$#" -ge 2 ]; do
		name=${1%%\{*} labels=${1#*\{}
		grep -qxF "$name{iface=\"$IF_SRV\",$labels $2" <<<"$m" || return 1
		shift 2
	done
}

# cookie_mode_flood: every port protected (no --port), the default class
# verified while it sheds (the default), a rate the flood empties: a
# spoofed flood to the service's port puts the class in cookie mode on
# the flood's CPU for the hold (10 s); FLOOD_LINE is the flood's file.
cookie_mode_flood() {
	shedd_start --controller off --rate 100 $(cookie_handoff) "$@"
	FLOOD_LINE="$TESTBED_TMP/flood.line"
	flood_bg "$FLOOD_LINE" 198.19.128.0/17 2000 8
	wait_for "the class answers the flood with cookies" 5 \
		sh -c "[ \"\$(bpftool map dump pinned '$PIN_DIR/stats' |
			jq '[.[0].values[].value.cls[3].cookie_sent] | add')\" -gt 100 ]"
}

# A BGP peer with TCP-MD5 connects while its class answers a flood with
# cookies: its signed SYN goes to the kernel, which signs the SYN-ACK.
# Without that, the peer drops the unsigned cookie SYN-ACK and times out.
@test "a TCP-MD5 client connects to its MD5 listener while the flood's class answers cookies" {
	md5_server "$SRV_IP" "$CLI_IP"
	cookie_mode_flood
	run md5_client "$SRV_IP"
	echo "$output"
	echo "cookie_sent=$(stat_sum cookie_sent 3) charged=$(stat_sum charged 3)" \
		"admitted=$(stat_sum admitted 3)"
	[ "$status" -eq 0 ]
	signed=$(signed_count)
	echo "syn_signed=$signed"
	within "$signed" 1 3
	# The flood was answered with cookies, not charged.
	within "$(stat_sum cookie_sent 3)" 100 100000
	# The SYN was charged; its ACK is not charged again (with the
	# kernel hand-off the kernel answered with a cookie of its own).
	within "$(stat_sum ack_admitted 3)" 0 0
	# The daemon names the port, and counts it.
	grep -F "listeners a SYN cookie cannot answer on ports $PORT (TCP-MD5)" \
		"$TESTBED_TMP/shedd.log"
	wait_for "the metrics show the port and the SYN" 3 metrics_have \
		'shedd_signed_listener_ports{kind="md5"}' 1 \
		'shedd_xdp_events_total{event="syn_signed"}' "$signed"
}

@test "a TCP-MD5 client over IPv6 connects to its MD5 listener while the class answers cookies" {
	# The flood (IPv4) needs a listener to be answered with cookies.
	md5_server "$SRV_IP" "$CLI_IP"
	md5_server "$SRV_IP6" "$CLI_IP6"
	cookie_mode_flood
	run md5_client "$SRV_IP6"
	echo "$output"
	echo "cookie_sent=$(stat_sum cookie_sent 3)"
	[ "$status" -eq 0 ]
	signed=$(signed_count)
	echo "syn_signed=$signed"
	within "$signed" 1 3
	within "$(stat_sum ack_admitted 3)" 0 0
}

# mptcp_py: an MPTCP listener in srv on ADDR:$PORT that answers "OK"
# (argument "serve"), or a client that connects and reads it ("connect").
mptcp_py() {
	ok_py
	cat <<'PY'
IPPROTO_MPTCP = 262
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM, IPPROTO_MPTCP)
if mode == 'serve':
    serve(s, addr, port)
connect(s, addr, port)
PY
}

# An MPTCP listener's clients are answered by the kernel: the tc hand-off
# cannot give an MPTCP listener a request socket, so a cookie's ACK would
# be refused.
@test "an MPTCP client connects to an MPTCP listener while the flood's class answers cookies" {
	need_tc_handoff
	in_srv python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)' ||
		skip "kernel $(uname -r) has no MPTCP"
	local mp=$((PORT + 1))
	# The flood goes to a plain listener on $PORT: any port of the class
	# puts it in cookie mode. The MPTCP listener is on the next port.
	listener_start
	ip netns exec "$NS_SRV" timeout 60 python3 -c "$(mptcp_py)" serve "$SRV_IP" "$mp" \
		>/dev/null 2>>"$TESTBED_TMP/mptcp.err" &
	PIDS+=($!)
	wait_listening "MPTCP listener" "$mp"
	cookie_mode_flood --handoff tc
	run ip netns exec "$NS_CLI" taskset -c "$(( $(nproc) - 1 ))" timeout 20 \
		python3 -c "$(mptcp_py)" connect "$SRV_IP" "$mp"
	echo "$output"
	echo "cookie_sent=$(stat_sum cookie_sent 3)"
	[ "$status" -eq 0 ]
	signed=$(signed_count)
	echo "syn_signed=$signed"
	within "$signed" 1 3
	grep -F "listeners a SYN cookie cannot answer on ports $mp (MPTCP)" \
		"$TESTBED_TMP/shedd.log"
}
