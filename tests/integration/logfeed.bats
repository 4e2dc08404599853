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
DOWN_PORT=8084  # an upstream that is down: nothing listens there
REQUESTS=60

setup() {
	# scripts/deps.sh installs both: missing is a broken set-up, not a skip.
	[ -x "$NGINX" ] || { echo "nginx is not installed (scripts/deps.sh)" >&2; return 1; }
	[ -x "$HAPROXY" ] || { echo "haproxy is not installed (scripts/deps.sh)" >&2; return 1; }
	testbed_up
}
teardown() { testbed_down; }

# nginx_start [FIELDS]: one worker as www-data; a proxy on FRONT_PORT to an
# upstream on UP_PORT that answers 200 itself (and, under /down, to a port
# where nothing listens: 502); the proxy logs with the shedd format of
# contrib/, to shedd and to $TESTBED_TMP/nginx/access.log, with FIELDS of
# the operator's own after shedd's.
nginx_start() {
	local d=$TESTBED_TMP/nginx fmt
	mkdir -p "$d"
	fmt=$(grep -v '^#' "$ROOT/contrib/nginx/shedd.conf" | grep log_format)
	[ -z "${1:-}" ] || fmt="${fmt%\';} $1';"
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
			$fmt
			server {
				listen $SRV_IP:$FRONT_PORT;
				access_log syslog:server=unix:$LATENCY_SOCK,nohostname,tag=shedd shedd;
				access_log $d/access.log shedd;
				location / { proxy_pass http://127.0.0.1:$UP_PORT; }
				location /down { proxy_pass http://127.0.0.1:$DOWN_PORT; }
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

# haproxy_start [FIELDS]: as the haproxy user; a frontend on FRONT_PORT that
# logs with the shedd format of contrib/, FIELDS of the operator's own after
# shedd's (the User-Agent captured as capture.req.hdr(0)), to shedd and to
# HAProxy's stdout ($TESTBED_TMP/haproxy/out); to a backend on UP_PORT that
# answers 200 itself, and under /down to one where nothing listens (503).
haproxy_start() {
	local d=$TESTBED_TMP/haproxy fmt
	mkdir -p "$d"
	fmt=$(grep -v '^#' "$ROOT/contrib/haproxy/shedd.cfg" | grep log-format)
	[ -z "${1:-}" ] || fmt="${fmt%\"} $1\""
	cat >"$d/haproxy.cfg" <<-EOF
		global
			log unix@$LATENCY_SOCK local0
			log stdout format raw local0
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
			$fmt
			http-request capture req.hdr(user-agent) len 200
			use_backend down if { path_beg /down }
			default_backend be
		backend be
			server up 127.0.0.1:$UP_PORT
		backend down
			retries 0
			server down 127.0.0.1:$DOWN_PORT
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

# metric 'NAME{LABELS}': one series of shedd's metrics endpoint (labels in
# the order shedd prints them, iface first and implied); fails if absent.
metric() {
	local name=${1%%\{*} labels="" v
	[[ "$1" == *"{"* ]] && labels=",${1#*\{}" && labels=${labels%\}}
	v=$(in_srv curl -sS --fail --max-time 5 http://127.0.0.1:9464/metrics |
		grep -F "$name{iface=\"$IF_SRV\"$labels} " | awk '{ print $2 }')
	if [ -z "$v" ]; then
		echo "metric: no series $1" >&2
		return 1
	fi
	echo "$v"
}
metric_at_least() { [ "$(metric "$1")" -ge "$2" ]; }

# forged_requests N UA CODE TIMEOUT: N requests from cli to /down with the
# User-Agent UA, each answered CODE within TIMEOUT seconds.
forged_requests() {
	run in_cli bash -c 'for ((i = 0; i < $1; i++)); do
		curl -sS -o /dev/null -m "$5" -w "%{http_code}\n" -A "$2" "http://$3:$4/down"
	done' _ "$1" "$2" "$SRV_IP" "$FRONT_PORT" "$4"
	echo "answered: $(echo $output)"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^$3\$" <<<"$output")" -eq "$1" ]
}

# only_unserved N MAX_SUM: the N samples shedd took are all not served,
# and their latencies sum to less than MAX_SUM seconds.
only_unserved() {
	run metric 'shedd_latency_samples_total{result="unserved"}'
	[ "$output" -eq "$1" ]
	run metric 'shedd_latency_samples_total{result="served"}'
	[ "$output" -eq 0 ]
	run metric shedd_service_latency_seconds_sum
	echo "latency sum: $output s"
	[ "$status" -eq 0 ]
	run awk -v s="$output" -v m="$2" 'BEGIN { exit !(s >= 0 && s < m) }'
	[ "$status" -eq 0 ]
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

@test "a User-Agent that carries a sample does not change nginx's: the true one counts" {
	# What a client writes (its User-Agent) follows shedd's fields, where
	# contrib/nginx/shedd.conf lets an operator put fields of their own.
	# Each request failed within milliseconds (502: not served); its
	# User-Agent claims an hour-long success behind a marker of its own,
	# with a quote nginx writes as \x22.
	local ua='x" shedd rt=3000.000 urt=3000.000 st=200 x' n=20
	shedd_start --port "$FRONT_PORT" --controller off --rate 100000 --latency-group www-data
	nginx_start 'ua="$http_user_agent"'
	forged_requests "$n" "$ua" 502 2
	# The lines nginx sent carry the forged fields after shedd's.
	run grep -c 'st=502 ua="x\\x22 shedd rt=3000.000 urt=3000.000 st=200 x"$' \
		"$TESTBED_TMP/nginx/access.log"
	[ "$status" -eq 0 ]
	[ "$output" -eq "$n" ]
	wait_for "$n log samples" 10 at_least log_n "$n"
	wait_for "$n samples in the metrics" 5 metric_at_least shedd_service_latency_seconds_count "$n"
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | grep -o 'latency_n=.*lost=[0-9]*' | tail -3
	# Each sample is nginx's own: not served, under a second in all.
	only_unserved "$n" 1
	run metric shedd_service_latency_seconds_count
	[ "$output" -eq "$n" ]
	run metric 'shedd_service_latency_seconds_bucket{le="0.1"}'
	[ "$output" -eq "$n" ]
	[ "$(sum bad)" -eq 0 ]
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

@test "a User-Agent that carries a sample does not change HAProxy's: the true one counts" {
	# The same through HAProxy, which writes the captured header as it
	# came: quotes and all. Each request failed at once (503: the server
	# is down); its User-Agent claims an hour-long success.
	local ua='x" shedd rt_ms=3000000 urt_ms=3000000 st=200 x' n=20
	shedd_start --port "$FRONT_PORT" --controller off --rate 100000 --latency-group haproxy
	haproxy_start '%{+Q}r ua=%{+Q}[capture.req.hdr(0)]'
	forged_requests "$n" "$ua" 503 5
	wait_for "$n log samples" 10 at_least log_n "$n"
	# The lines HAProxy sent carry the forged fields after shedd's.
	tail -n 1 "$TESTBED_TMP/haproxy/out"
	run grep -c -F "st=503 \"GET /down HTTP/1.1\" ua=\"$ua\"" "$TESTBED_TMP/haproxy/out"
	[ "$status" -eq 0 ]
	[ "$output" -eq "$n" ]
	wait_for "$n samples in the metrics" 5 metric_at_least shedd_service_latency_seconds_count "$n"
	grep ' | critical_plus ' "$TESTBED_TMP/shedd.log" | grep -o 'latency_n=.*lost=[0-9]*' | tail -3
	only_unserved "$n" 2
	[ "$(sum bad)" -eq 0 ]
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
