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

# upstream_start WORKERS SERVICE_MS BACKLOG [DIST]: the upstream in srv,
# paced, so its capacity is WORKERS * 1000 / SERVICE_MS; service times
# fixed (the default) or exponential of that mean (DIST exp); UP_PID.
upstream_start() {
	ip netns exec "$NS_SRV" "$SLOWSERVER" --http --addr "$SRV_IP" \
		--port "$UPSTREAM_PORT" --workers "$1" --service-ms "$2" \
		--dist "${4:-fixed}" --paced --backlog "$3" --duration 3600 \
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
	log_format shedd 'shedd rt=\$request_time urt=\$upstream_response_time cr=\$connection_requests st=\$status';
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

# httperf, a standard open-loop HTTP client from Debian, beside loadgen.
# httperf prints totals only; a per-second goodput comes from one httperf
# per second of arrivals: the arrivals of a Poisson process at RATE are
# counted per second beforehand, and at the start of second k the
# processes of that second are started, --num-conns their share of the
# second's arrivals, --period=e (exponential gaps, together RATE/s). The 2xx
# replies of second k's processes are that second's goodput: the requests
# started in second k that succeeded, as loadgen counts them.
#
# --timeout is the patience, but per phase (httperf's core.c arms it for
# the connect, then again once the request is written, for the reply), not
# over the request as loadgen's patience is (measured: with the first SYN
# of each connection dropped and a server answering in 700 ms, --timeout
# 1.5 counted 3 of 3 replies, connect 1.01 s, 1.73-1.92 s in all; loadgen
# with a patience of 1500 ms gave such a request up). Here the connect
# phase is a round trip, or a SYN dropped that waits for its retransmit
# (1 s, past the patience): a success took at most about one patience, as
# with loadgen; a timeout ends the connection with a FIN (loadgen's with a
# RST).
#
# httperf polls its sockets with select() and a zero timeout: one process
# keeps a core busy (measured: 96-99 % of a core, at 150/s as at 600/s;
# behind nginx the median reply at 150/s went from 21 to 75 ms when it
# shared a core with the front and the upstream; 24-30 ms in the cgroup
# below, 21-26 ms unbounded, side by side, and once 124 ms in the cgroup
# with the machine busy). Every httperf of a run
# runs in a cpu cgroup of its own with a quota of HTTPERF_CPU_US per
# HTTPERF_PERIOD_US (default 2 ms per 5 ms, 40 % of a core, over all of
# them): a process is held at most 3 ms, and the rest of the machine keeps
# the CPU. With no cpu cgroup to make it runs unbounded, with a warning.
#
# select() also caps a process at FD_SETSIZE (1024) descriptors. A
# connection holds one for at most about a patience, so a process sees
# about its rate x patience open at once when every request waits out its
# patience: each second's arrivals are split over enough processes for
# HTTPERF_OPEN (default 500) each (at 10 x C, 2000/s with 0.5 s of
# patience: 2 processes). A process that hit the cap says so (fd_unavail).
#
# Its TIME_WAIT sockets: httperf closes first after each reply, and with
# --hog binds its own ports (bind() skips a port in TIME_WAIT), so 60 s of
# them at 2000/s would take every port; the client namespace keeps at most
# 4096 (net.ipv4.tcp_max_tw_buckets), which the server does not see.
HTTPERF_CPU_US=${HTTPERF_CPU_US:-2000}
HTTPERF_PERIOD_US=${HTTPERF_PERIOD_US:-5000}
HTTPERF_OPEN=${HTTPERF_OPEN:-500}
HTTPERF_CG=

# httperf_cg_make: the cpu cgroup for this testbed's httperf processes, in
# HTTPERF_CG (cgroup v2 or the v1 cpu hierarchy); those of testbeds whose
# owner is gone are removed first.
httperf_cg_make() {
	local base d id
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		base=/sys/fs/cgroup
	elif [ -d /sys/fs/cgroup/cpu ]; then
		base=/sys/fs/cgroup/cpu
	else
		echo "httperf: no cpu cgroup: httperf runs without a CPU bound" >&2
		return 0
	fi
	for d in "$base"/shedd-httperf-*; do
		[ -d "$d" ] || continue
		id=${d##*-}
		testbed_owned "$id" || rmdir "$d" 2>/dev/null || true
	done
	d="$base/shedd-httperf-$TESTBED_ID"
	if ! mkdir -p "$d" 2>/dev/null; then
		echo "httperf: cannot make the cgroup $d: httperf runs without a CPU bound" >&2
		return 0
	fi
	if [ "$base" = /sys/fs/cgroup ]; then
		echo "$HTTPERF_CPU_US $HTTPERF_PERIOD_US" >"$d/cpu.max" 2>/dev/null
	else
		echo "$HTTPERF_PERIOD_US" >"$d/cpu.cfs_period_us" &&
			echo "$HTTPERF_CPU_US" >"$d/cpu.cfs_quota_us"
	fi || {
		rmdir "$d"
		echo "httperf: cannot set a CPU quota on $d: httperf runs without a CPU bound" >&2
		return 0
	}
	HTTPERF_CG=$d
}

# httperf_cg_remove: the cgroup, once its processes have ended.
httperf_cg_remove() {
	[ -n "$HTTPERF_CG" ] || return 0
	rmdir "$HTTPERF_CG" 2>/dev/null || true
	HTTPERF_CG=
}

# poisson_counts RATE SECONDS SEED: the arrivals of a Poisson process at
# RATE/s counted in each of SECONDS seconds, one count a line.
poisson_counts() {
	awk -v r="$1" -v n="$2" -v seed="$3" 'BEGIN {
		srand(seed)
		for (t = -log(1 - rand()) / r; t < n; t += -log(1 - rand()) / r)
			c[int(t)]++
		for (k = 0; k < n; k++)
			print c[k] + 0
	}'
}

# httperf_parse FILE...: one httperf summary each; prints their sums as
# "conns ok bad_status timeout refused reset fd_unavail addr_unavail
# error cpu_s", or fails if one of them has no summary (it did not end).
httperf_parse() {
	awk '
	BEGIN { files = ARGC - 1 }
	/^Total: connections/ { conns += $3; seen++ }
	/^Reply status:/ {
		for (i = 3; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "2xx") ok += kv[2]; else bad += kv[2]
		}
	}
	/^CPU time/ { cpu += $5 + $7 }
	/^Errors: total/ { timo += $5; err += $7; refused += $9; reset += $11 }
	/^Errors: fd-unavail/ { fd += $3; addr += $5; err += $7 + $9 }
	END {
		if (seen != files || files == 0) exit 1
		printf "%d %d %d %d %d %d %d %d %d %.2f\n", conns, ok, bad, timo,
			refused, reset, fd, addr, err, cpu
	}' "$@"
}

# httperf_load NAME RATE SECONDS PATIENCE_MS [WARMUP]: httperf from cli
# against the front, RATE requests/s (Poisson) for SECONDS, one request
# per connection. Per-second lines as loadgen's in $TESTBED_TMP/NAME.sec
# ("t=K offered= ok= refused= timeout= reset= error= bad_status=
# fd_unavail= addr_unavail="; no line for a second whose processes did not
# all report), a summary in $TESTBED_TMP/NAME (goodput_per_sec over the
# seconds after WARMUP; cpu_s: httperf's CPU time, all processes; start:
# the epoch time the first second began).
httperf_load() {
	local name=$1 rate=$2 secs=$3 pat_ms=$4 warm=${5:-0}
	local dir="$TESTBED_TMP/$1.httperf" parts k p n share t0 wait_s seed
	local pids=() counts tmo period sums pid
	rm -rf "$dir"
	mkdir -p "$dir"
	httperf_cg_make
	in_cli sysctl -qw net.ipv4.tcp_max_tw_buckets=4096
	parts=$(((rate * pat_ms + HTTPERF_OPEN * 1000 - 1) / (HTTPERF_OPEN * 1000)))
	[ "$parts" -ge 1 ] || parts=1
	tmo=$(awk -v p="$pat_ms" 'BEGIN { printf "%.3f", p / 1000 }')
	period=$(awk -v r="$rate" -v p="$parts" 'BEGIN { printf "%.6f", p / r }')
	seed=${HTTPERF_SEED:-$((RANDOM * 32768 + RANDOM))}
	mapfile -t counts < <(poisson_counts "$rate" "$secs" "$seed")
	t0=$(awk -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + 0.2 }')
	for ((k = 1; k <= secs; k++)); do
		wait_s=$(awk -v t="$t0" -v k="$k" -v n="$(date +%s.%N)" \
			'BEGIN { w = t + k - 1 - n; printf "%.3f", (w > 0 ? w : 0) }')
		sleep "$wait_s"
		n=${counts[k - 1]}
		for ((p = 0; p < parts; p++)); do
			share=$((n / parts + (p < n % parts ? 1 : 0)))
			if [ "$share" -eq 0 ]; then
				# Nothing to start: an empty summary, so the second
				# still reports.
				printf 'Total: connections 0\n' >"$dir/$k.$p"
				continue
			fi
			# Into the cgroup first, then into the namespace: ip netns
			# exec mounts a sysfs of its own, without the cgroups.
			sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' _ \
				"$HTTPERF_CG" ip netns exec "$NS_CLI" timeout -k 1 \
				$((2 + 3 * pat_ms / 1000 + share * parts / rate)) \
				httperf --hog --server "$SRV_IP" --port "$PORT" --uri / \
				--num-conns "$share" --num-calls 1 --period "e$period" \
				--timeout "$tmo" >"$dir/$k.$p" 2>"$dir/$k.$p.err" &
			pids+=($!)
			PIDS+=($!)
		done
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || true
		pids_forget "$pid"
	done
	httperf_cg_remove
	: >"$TESTBED_TMP/$name.sec"
	for ((k = 1; k <= secs; k++)); do
		# shellcheck disable=SC2046 # the files of second k
		sums=$(httperf_parse $(for ((p = 0; p < parts; p++)); do echo "$dir/$k.$p"; done)) ||
			{ echo "httperf: second $k: a process did not report" >&2; continue; }
		echo "$k ${counts[k - 1]} $sums"
	done | awk '{
		printf "t=%d offered=%d ok=%d refused=%d timeout=%d reset=%d error=%d bad_status=%d fd_unavail=%d addr_unavail=%d\n",
			$1, $2, $4, $7, $6, $8, $11, $5, $9, $10
	}' >"$TESTBED_TMP/$name.sec"
	awk -v w="$warm" -v n="$secs" -v parts="$parts" -v seed="$seed" -v t0="$t0" \
		-v cpu="$(httperf_parse "$dir"/*.[0-9] | cut -d' ' -f10)" '
	{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		for (f in v) if (f != "t") tot[f] += v[f]
		if (v["t"] > w) good += v["ok"]
	}
	END {
		printf "offered=%d ok=%d refused=%d timeout=%d reset=%d error=%d bad_status=%d fd_unavail=%d addr_unavail=%d goodput_per_sec=%.1f connections=%d processes_per_sec=%d cpu_s=%s seed=%s start=%s\n",
			tot["offered"], tot["ok"], tot["refused"], tot["timeout"], tot["reset"],
			tot["error"], tot["bad_status"], tot["fd_unavail"], tot["addr_unavail"],
			(n > w ? good / (n - w) : 0), tot["offered"], parts, cpu, seed, t0
	}' "$TESTBED_TMP/$name.sec" >"$TESTBED_TMP/$name"
}

# limit_watch: in the background, until shedd ($SHEDD_PID) ends: the limit
# of each of shedd's status lines, stamped with the time the line came
# (polled every 100 ms), "SECONDS LIMIT" a line, into
# $TESTBED_TMP/limits.ts; LIMIT_WATCH_PID. shedd prints a status line every
# --status-interval (1 s by default): the tests and the experiment ask for
# 200 ms, five samples of the limit a second (its controller ticks every
# 100 ms); the lines carry no time of their own.
limit_watch() {
	local log="$TESTBED_TMP/shedd.log" ts="$TESTBED_TMP/limits.ts"
	: >"$ts"
	(
		seen=$(wc -l <"$log")
		while kill -0 "$SHEDD_PID" 2>/dev/null; do
			n=$(wc -l <"$log")
			if [ "$n" -gt "$seen" ]; then
				now=$(date +%s.%N)
				sed -n "$((seen + 1)),${n}p" "$log" | grep ' | critical_plus ' |
					grep -o ' limit=[0-9.]*' | sed "s/^ limit=/$now /" >>"$ts" || true
				seen=$n
			fi
			sleep 0.1
		done
	) &
	LIMIT_WATCH_PID=$!
	PIDS+=("$LIMIT_WATCH_PID")
}

# limit_stats T0 FROM TO: the limits stamped in seconds FROM-TO (1-based)
# after T0 (epoch seconds): "n=N mean=M cov_pct=C min= max=" (cov_pct: the
# standard deviation over the mean, in %; - for fewer than 2 samples).
limit_stats() {
	awk -v t0="$1" -v a="$2" -v b="$3" '
	$1 >= t0 + a - 1 && $1 < t0 + b { v = $2; s += v; q += v * v; n++
		if (n == 1 || v < lo) lo = v; if (n == 1 || v > hi) hi = v }
	END {
		if (n < 2 || s == 0) { printf "n=%d mean=- cov_pct=- min=- max=-\n", n; exit }
		m = s / n; var = (q - n * m * m) / (n - 1); if (var < 0) var = 0
		printf "n=%d mean=%.0f cov_pct=%.1f min=%.0f max=%.0f\n", n, m, 100 * sqrt(var) / m, lo, hi
	}' "$TESTBED_TMP/limits.ts"
}

# limit_trace T0 SECONDS: the limit in each second after T0, the last
# stamped in that second ("-" for none), space-separated.
limit_trace() {
	awk -v t0="$1" -v n="$2" '{ k = int($1 - t0) + 1; if (k >= 1 && k <= n) v[k] = $2 }
		END { for (k = 1; k <= n; k++) printf "%s%s", (k in v ? v[k] : "-"), (k < n ? " " : "\n") }' \
		"$TESTBED_TMP/limits.ts"
}
