#!/usr/bin/env bats
# logfeed.bats - request latency from the servers' own logs: nginx and
# HAProxy, started in the server namespace with their workers under their
# own users, log every request to shedd's latency socket over syslog (the
# snippets of contrib/); shedd counts a sample per request, the upstream
# time beside it, and refuses what is not a sample, by reason.

load lib

NGINX=/usr/sbin/nginx
HAPROXY=/usr/sbin/haproxy
FRONT_PORT=8081 # the proxy, protected by shedd
UP_PORT=8083    # its upstream, on the server's loopback
REQUESTS=60

setup() {
	# scripts/deps.sh installs both: missing is a broken set-up, not a skip.
	[ -x "$NGINX" ] || { echo "nginx is not installed (scripts/deps.sh)" >&2; return 1; }
	[ -x "$HAPROXY" ] || { echo "haproxy is not installed (scripts/deps.sh)" >&2; return 1; }
	testbed_up
}
teardown() { testbed_down; }

# nginx_start: one worker as www-data; a proxy on FRONT_PORT to an upstream
# on UP_PORT that answers 200 itself; the proxy logs with the shedd format.
nginx_start() {
	local d=$TESTBED_TMP/nginx
	mkdir -p "$d"
	cat >"$d/nginx.conf" <<-EOF
		daemon off;
		user www-data;
		worker_processes 1;
		pid $d/nginx.pid;
		error_log $d/error.log info;
		events { worker_connections 256; }
		http {
			client_body_temp_path $d/body;
			proxy_temp_path $d/proxy;
			fastcgi_temp_path $d/fastcgi;
			uwsgi_temp_path $d/uwsgi;
			scgi_temp_path $d/scgi;
			access_log off;
			$(grep -v '^#' "$ROOT/contrib/nginx/shedd.conf" | grep log_format)
			server {
				listen $SRV_IP:$FRONT_PORT;
				access_log syslog:server=unix:$LATENCY_SOCK,nohostname,tag=shedd shedd;
				location / { proxy_pass http://127.0.0.1:$UP_PORT; }
			}
			server {
				listen 127.0.0.1:$UP_PORT;
				location / { return 200 "ok\n"; }
			}
		}
	EOF
	ip netns exec "$NS_SRV" "$NGINX" -e "$d/error.log" -p "$d" -c "$d/nginx.conf" \
		>"$d/out" 2>&1 &
	PIDS+=($!)
	wait_listening nginx "$FRONT_PORT"
}

# haproxy_start: as the haproxy user; a frontend on FRONT_PORT that logs with
# the shedd format, to a backend on UP_PORT that answers 200 itself.
haproxy_start() {
	local d=$TESTBED_TMP/haproxy
	mkdir -p "$d"
	cat >"$d/haproxy.cfg" <<-EOF
		global
			log unix@$LATENCY_SOCK local0
			user haproxy
			group haproxy
			pidfile $d/haproxy.pid
			nbthread 1
		defaults
			mode http
			log global
			timeout connect 2s
			timeout client 5s
			timeout server 5s
		frontend fe
			bind $SRV_IP:$FRONT_PORT
			$(grep -v '^#' "$ROOT/contrib/haproxy/shedd.cfg" | grep log-format)
			default_backend be
		backend be
			server up 127.0.0.1:$UP_PORT
		frontend up
			bind 127.0.0.1:$UP_PORT
			no log
			http-request return status 200 content-type text/plain string ok
	EOF
	ip netns exec "$NS_SRV" "$HAPROXY" -db -f "$d/haproxy.cfg" >"$d/out" 2>&1 &
	PIDS+=($!)
	wait_listening haproxy "$FRONT_PORT"
}

# requests N: N HTTP/1.0 requests from cli, one connection each, through
# bash's /dev/tcp; prints how many were answered 200. Bounded: 30 s in all.
requests() {
	timeout 30 ip netns exec "$NS_CLI" bash -c '
		ok=0
		for ((i = 0; i < $1; i++)); do
			exec 3<>"/dev/tcp/$2/$3" || continue
			printf "GET /r%d HTTP/1.0\r\nHost: shedd.test\r\n\r\n" "$i" >&3
			IFS= read -r -t 2 line <&3 && [[ $line == "HTTP/1."?" 200 "* ]] && ok=$((ok + 1))
			exec 3<&-
		done
		echo "$ok"' _ "$1" "$SRV_IP" "$FRONT_PORT"
}

# sum FIELD: FIELD=... summed over every status line so far.
sum() {
	local t=0 v
	for v in $(status_field "$1"); do t=$((t + v)); done
	echo "$t"
}

# at_least FIELD N: the sum of FIELD has reached N.
at_least() { [ "$(sum "$1")" -ge "$2" ]; }

status_lines() { grep -c ' | critical_plus ' "$TESTBED_TMP/shedd.log" || true; }
status_lines_past() { [ "$(status_lines)" -ge "$1" ]; }

# bad_why REASON: REASON's count summed over the status lines.
bad_why() {
	local t=0 v kv
	for v in $(status_field bad_why); do
		for kv in ${v//,/ }; do
			[ "${kv%%:*}" = "$1" ] && t=$((t + ${kv#*:}))
		done
	done
	echo "$t"
}

# shedd_stop: SIGTERM; shedd exits 0 (under `make san`, a leak or an
# overflow ASan or UBSan found makes it exit otherwise) and removes its socket.
shedd_stop() {
	local rc=0
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID" || rc=$?
	grep -E 'Sanitizer|runtime error' "$TESTBED_TMP/shedd.log" && return 1
	[ "$rc" -eq 0 ]
	[ ! -e "$LATENCY_SOCK" ]
}

# logger_send ARGS...: one datagram to shedd's socket through util-linux
# logger, as any syslog client would send it.
logger_send() {
	in_srv logger --socket-errors=on -u "$LATENCY_SOCK" -d "$@"
}

@test "nginx's log lines arrive as samples, with the upstream time; garbage is refused" {
	shedd_start --port "$FRONT_PORT" --controller off --rate 100000 --latency-group www-data
	[ "$(stat -c '%G %a' "$LATENCY_SOCK")" = "www-data 660" ]
	grep -q "latency socket $LATENCY_SOCK (group 33, mode 0660)" "$TESTBED_TMP/shedd.log"
	nginx_start
	ok=$(requests "$REQUESTS")
	echo "answered: $ok of $REQUESTS"
	[ "$ok" -eq "$REQUESTS" ]
	wait_for "$REQUESTS log samples" 10 at_least log_n "$REQUESTS"
	# a status line with them: every sample came from a log line
	[ "$(sum log_n)" -eq "$(sum latency_n)" ]
	status_field upstream_p99_ms | grep -q .
	[ "$(sum bad)" -eq 0 ]
	# Garbage, and a line longer than shedd reads, are refused and counted.
	logger_send "not a sample"
	logger_send --size 8192 "shedd rt=0.001 pad=$(printf '%*s' 5000 '' | tr ' ' x)"
	wait_for "two refusals" 5 at_least bad 2
	echo "refused: $(status_field bad_why | tr '\n' ' ')"
	[ "$(bad_why no_marker)" -eq 1 ]
	[ "$(bad_why truncated)" -eq 1 ]
	# A plain syslog client's line in the format is a sample too.
	logger_send -t app "shedd rt=0.250 st=200"
	wait_for "one more log sample" 5 at_least log_n $((REQUESTS + 1))
	[ "$(sum bad)" -eq 2 ]
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | grep -o 'latency_n=.*lost=[0-9]*' | tail -3
	shedd_stop
}

@test "HAProxy's log lines arrive as samples" {
	shedd_start --port "$FRONT_PORT" --controller off --rate 100000 --latency-group haproxy
	[ "$(stat -c '%G %a' "$LATENCY_SOCK")" = "haproxy 660" ]
	haproxy_start
	ok=$(requests "$REQUESTS")
	echo "answered: $ok of $REQUESTS"
	[ "$ok" -eq "$REQUESTS" ]
	wait_for "$REQUESTS log samples" 10 at_least log_n "$REQUESTS"
	[ "$(sum log_n)" -eq "$(sum latency_n)" ]
	status_field upstream_p99_ms | grep -q .
	[ "$(sum bad)" -eq 0 ]
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | grep -o 'latency_n=.*lost=[0-9]*' | tail -3
	shedd_stop
}

@test "without the group, nginx's workers cannot write to the socket" {
	shedd_start --port "$FRONT_PORT" --controller off --rate 100000
	[ "$(stat -c '%G %a' "$LATENCY_SOCK")" = "root 660" ]
	nginx_start
	ok=$(requests 5)
	[ "$ok" -eq 5 ]
	# nginx says why; shedd got nothing
	wait_for "nginx's permission error" 5 grep -q 'Permission denied' "$TESTBED_TMP/nginx/error.log"
	# two more status lines after it: the second covers a whole second
	# after the requests, and no sample arrived
	lines=$(status_lines)
	wait_for "two status lines" 5 status_lines_past $((lines + 2))
	[ "$(sum latency_n)" -eq 0 ]
}

@test "an unknown --latency-group is refused before anything is loaded" {
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --latency-group no-such-group-shedd
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--latency-group: no group 'no-such-group-shedd'"* ]]
	run xdp_attached
	[ "$status" -ne 0 ]
}
