# shellcheck shell=bash
# proxybed.sh - a reverse proxy in front of an upstream of known capacity,
# on the namespace testbed (source scripts/testbed.sh first). In srv:
# slowserver --http on $SRV_IP:$UPSTREAM_PORT (capacity workers / service
# time, accepting only when a worker is free, a small backlog) and nginx or
# HAProxy on $SRV_IP:$PORT, started from configs generated in $TESTBED_TMP,
# logging each request to shedd's latency socket as a syslog datagram whose
# message is "shedd rt=SECONDS urt=SECONDS st=STATUS" (nginx) or
# "shedd rt_ms=MS urt_ms=MS st=STATUS" (HAProxy). Every process started
# here is in PIDS, so testbed_down ends it.
#
# The proxies' workers run as root inside the test namespace, so they can
# write to the latency socket (mode 0660, root's group) without a group
# option; a deployment runs them as www-data / haproxy.

UPSTREAM_PORT=8081

# upstream_start WORKERS SERVICE_MS BACKLOG: the upstream in srv, paced, so
# its capacity is WORKERS * 1000 / SERVICE_MS; UP_PID.
upstream_start() {
	ip netns exec "$NS_SRV" "$SLOWSERVER" --http --addr "$SRV_IP" \
		--port "$UPSTREAM_PORT" --workers "$1" --service-ms "$2" \
		--dist fixed --paced --backlog "$3" --duration 3600 \
		>"$TESTBED_TMP/upstream.out" 2>"$TESTBED_TMP/upstream.err" &
	UP_PID=$!
	PIDS+=("$UP_PID")
	wait_listening upstream "$UPSTREAM_PORT"
}

# nginx_conf DIR [SOCK]: nginx.conf for DIR; with SOCK, every request is
# logged to the UNIX datagram socket SOCK.
nginx_conf() {
	local dir=$1 sock=${2:-} log="access_log off;"
	if [ -n "$sock" ]; then
		log="access_log syslog:server=unix:$sock,nohostname,tag=shedd shedd;"
	fi
	mkdir -p "$dir"
	cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
user root root;
worker_processes 1;
worker_rlimit_nofile 20000;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	log_format shedd 'shedd rt=\$request_time urt=\$upstream_response_time st=\$status';
	$log
	upstream app { server $SRV_IP:$UPSTREAM_PORT; }
	server {
		listen $SRV_IP:$PORT;
		location / { proxy_pass http://app; }
	}
}
EOF
}

# haproxy_conf DIR [SOCK]: haproxy.cfg for DIR; with SOCK, every request is
# logged to the UNIX datagram socket SOCK.
haproxy_conf() {
	local dir=$1 sock=${2:-} glog="" flog=""
	if [ -n "$sock" ]; then
		glog="log unix@$sock local0"
		flog='log-format "shedd rt_ms=%Ta urt_ms=%Tr st=%ST"'
	fi
	mkdir -p "$dir"
	cat >"$dir/haproxy.cfg" <<EOF
global
	maxconn 9000
	pidfile $dir/haproxy.pid
	$glog
defaults
	mode http
	log global
	option abortonclose
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend fe
	bind $SRV_IP:$PORT
	$flog
	default_backend app
backend app
	server up $SRV_IP:$UPSTREAM_PORT
EOF
}

# front_start nginx|haproxy [SOCK]: the proxy in srv on $SRV_IP:$PORT, in
# front of the upstream; with SOCK it logs to shedd's latency socket SOCK.
# FRONT_PID is its (master) process.
front_start() {
	local dir="$TESTBED_TMP/$1"
	rm -rf "$dir"
	case $1 in
	nginx)
		nginx_conf "$dir" "${2:-}"
		ip netns exec "$NS_SRV" nginx -p "$dir" -c "$dir/nginx.conf" \
			-e "$dir/error.log" >"$dir/out" 2>&1 &
		;;
	haproxy)
		haproxy_conf "$dir" "${2:-}"
		ip netns exec "$NS_SRV" haproxy -db -f "$dir/haproxy.cfg" \
			>"$dir/out" 2>&1 &
		;;
	*)
		echo "front_start: unknown front '$1' (nginx, haproxy)" >&2
		return 1
		;;
	esac
	FRONT_PID=$!
	PIDS+=("$FRONT_PID")
	wait_listening "$1" "$PORT"
}

# pids_forget PID: take PID out of PIDS once it has been waited for, so the
# teardown does not signal a reused pid.
pids_forget() {
	local p keep=()
	for p in "${PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# stop_pid PID: SIGTERM, then wait for it (at most 5 s, then SIGKILL).
stop_pid() {
	local i
	if kill -TERM "$1" 2>/dev/null; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$1" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$1" 2>/dev/null || true
	fi
	wait "$1" 2>/dev/null || true
	pids_forget "$1"
}

# http_load NAME RATE SECONDS PATIENCE_MS [REQUESTS_PER_CONN [WARMUP]]:
# HTTP clients from cli against the front; summary in $TESTBED_TMP/NAME,
# per-second lines in $TESTBED_TMP/NAME.sec.
http_load() {
	ip netns exec "$NS_CLI" "$LOADGEN" --http --dst "$SRV_IP" --port "$PORT" \
		--rate "$2" --duration "$3" --patience-ms "$4" \
		--requests-per-conn "${5:-1}" --warmup "${6:-0}" \
		>"$TESTBED_TMP/$1" 2>"$TESTBED_TMP/$1.sec"
}

# shed_total: connections shed by shedd so far, over every class and CPU:
# SYNs dropped or refused with a RST, and, in a verified class (the
# default class verifies while shedding), proven ACKs refused with a RST,
# which a client sees as a reset right after its connect.
shed_total() {
	bpftool map dump pinned "$PIN_DIR/stats" |
		jq '[.[0].values[].value.cls[] | .dropped + .rst_sent + .ack_refused] | add'
}
