#!/usr/bin/env bats
# redirect.bats - SYNs that netfilter gives to another socket after XDP: a
# real nftables `redirect` in the server's namespace sends port REDIR to
# the listener on PORT. XDP sees such a SYN addressed to REDIR, where its
# socket lookup finds no listener: in a verified class it is judged as in
# an unverified class (charged to the class's bucket, passed with a token,
# shed without one), never passed uncharged nor dropped for want of a
# listener; and shedd names the port at start.

load lib

setup() {
	command -v nft >/dev/null ||
		skip "nft is not installed (scripts/deps.sh installs nftables)"
	testbed_up
	REDIR=$((PORT + 100))
	in_srv nft -f - <<-EOF
		table inet shedd_redirect {
			chain pre {
				type nat hook prerouting priority dstnat;
				tcp dport $REDIR redirect to :$PORT
			}
		}
	EOF
	# The redirect sends each family to the address it came in on.
	listener_start
	listener_start "$SRV_IP6"
	wait_for "IPv6 listener" 5 sh -c "ip netns exec $NS_SRV ss -ltnH | grep -qF '[$SRV_IP6]:$PORT '"
}
teardown() { testbed_down; }

# connect_ok ADDR PORT: a connection from cli to ADDR:PORT completes its
# handshake within 5 s (the kernel's SYN retransmits after 1 s and 3 s
# included).
connect_ok() {
	ip netns exec "$NS_CLI" timeout 10 python3 - "$@" <<'PY'
import socket, sys, time
addr, port = sys.argv[1], int(sys.argv[2])
fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(5.0)
t = time.monotonic()
try:
    s.connect((addr, port))
except OSError as e:
    print(f'{addr} port {port}: {e!r}')
    sys.exit(1)
print(f'{addr} port {port}: connected in {(time.monotonic() - t) * 1000:.0f} ms')
PY
}

@test "a verified class's SYNs to a port a NAT redirect takes are charged: a flood is shed at the class's rate, clients still connect" {
	local sent synack charged0 charged dropped cookies nolisten out
	# At 100/s with a depth of 10: at most 10 + 100 x 3 s (the flood's
	# 2 s, its start and the wait for answers; scaled as the waits are).
	local cap=$((10 + 300 * TESTBED_TIME_SCALE))
	shedd_start --port "$REDIR" --port "$PORT" --controller off --rate 100 --burst 10 \
		--verify sheddable=always $(cookie_handoff)
	run connect_ok "$SRV_IP" "$REDIR"
	echo "$output"
	[ "$status" -eq 0 ]
	run connect_ok "$SRV_IP6" "$REDIR"
	echo "$output"
	[ "$status" -eq 0 ]
	charged0=$(stat_sum charged 3)
	# 2000 spoofed SYNs in 2 s to the redirected port: 20 times the rate.
	out=$(PORT=$REDIR flood 198.19.128.0/17 1000 2)
	echo "$out"
	sent=$(field sent "$out")
	synack=$(field synack "$out")
	charged=$(( $(stat_sum charged 3) - charged0 ))
	dropped=$(stat_sum dropped 3)
	cookies=$(stat_sum cookie_sent 3)
	nolisten=$(stat_sum syn_no_listener)
	echo "sent=$sent synack=$synack charged=$charged dropped=$dropped cookie_sent=$cookies" \
		"syn_no_listener=$nolisten"
	within "$sent" 1000 2000
	# Every flood SYN charged to the class; none answered with a cookie
	# (nothing listens on REDIR as addressed).
	within "$charged" "$sent" "$sent"
	within "$cookies" 0 0
	within "$nolisten" $((sent + 2)) $((sent + 2))
	# What the rate does not admit is shed, and the kernel answers only
	# what was admitted.
	within "$dropped" $((sent - cap)) "$sent"
	within "$synack" 1 "$cap"
	# Not black-holed: the class's real clients are judged, not refused.
	run connect_ok "$SRV_IP" "$REDIR"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "shedd names at start the protected ports a NAT redirect takes" {
	shedd_start --port "$REDIR" --port "$PORT" --controller off --rate 1000 \
		--verify sheddable=always $(cookie_handoff)
	run grep -F "verified admission: port $REDIR (redirect to :$PORT, nftables inet shedd_redirect pre)" \
		"$TESTBED_TMP/shedd.log"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "shedd names at start a port not protected that a NAT redirect sends to a protected one" {
	# Only PORT protected: SYNs to REDIR reach its listener unjudged.
	shedd_start --port "$PORT" --controller off --rate 1000 --verify off
	run grep -F "port $REDIR (redirect to :$PORT, nftables inet shedd_redirect pre): netfilter gives SYNs of ports not protected to protected port $PORT" \
		"$TESTBED_TMP/shedd.log"
	echo "$output"
	[ "$status" -eq 0 ]
	# Nothing verified: nothing to say of verified admission.
	run grep -c "verified admission: port" "$TESTBED_TMP/shedd.log"
	[ "$output" = 0 ]
}

@test "shedd names a NAT redirect added after its start, and says when none is left" {
	local redir2=$((PORT + 101)) log="$TESTBED_TMP/shedd.log"
	shedd_start --port "$redir2" --port "$PORT" --controller off --rate 1000 \
		--verify sheddable=always $(cookie_handoff)
	# At start only the setup's rule, which sends REDIR (not protected)
	# to PORT.
	run grep -cF "verified admission: port $redir2" "$log"
	[ "$output" = 0 ]
	in_srv nft add rule inet shedd_redirect pre tcp dport "$redir2" redirect to :"$PORT"
	# nftables announces the change; read within the watch's gap (5 s).
	wait_for "the added redirect named" 10 grep -qF \
		"verified admission: port $redir2 (redirect to :$PORT, nftables inet shedd_redirect pre)" \
		"$log"
	run grep -c "netfilter or IPVS changed; what takes protected ports" "$log"
	echo "$output"
	[ "$output" = 1 ]
	in_srv nft flush chain inet shedd_redirect pre
	wait_for "the rules' end told" 10 grep -qF \
		"netfilter or IPVS changed: nothing takes a protected port after XDP any more" "$log"
}
