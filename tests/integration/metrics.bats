#!/usr/bin/env bats
# metrics.bats - shedd's Prometheus endpoint on a live testbed: the
# exposition passes promtool and holds every family; its counters are the
# pinned maps' (and continue across a SIGKILL and an adopting shedd); a real
# Prometheus scrapes it and answers PromQL with the pinned figures; a stuck
# scraper does not hold up the tick; a heavy source shows among the heavy
# hitters of per-source fairness, in bounded series; the Grafana dashboard
# queries only metrics that exist. shedd runs in the server namespace (--netns), so its
# endpoint is 127.0.0.1:9464 there: curl and Prometheus run there too.

load lib

METRICS_URL=http://127.0.0.1:9464/metrics
DASHBOARD="$ROOT/contrib/grafana/shedd.json"

# Every family the documentation promises: the reference table of
# docs/metrics.md, which make docs generates from what metrics_format()
# writes (so a family added to the code is asked for here too).
mapfile -t FAMILIES < <(sed -n '/<!-- generated: metrics/,/<!-- end generated: metrics/p' \
	"$ROOT/docs/metrics.md" | grep -o '^| `shedd_[a-z_]*`' | tr -d '|` ')

setup() { testbed_up; }
teardown() {
	local pid
	for pid in ${PROM_PID:-} ${STUCK_PIDS[@]+"${STUCK_PIDS[@]}"}; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	testbed_down
}

# scrape FILE: the endpoint's text into FILE; fails on any HTTP error.
scrape() {
	in_srv curl -sS --fail --max-time 5 "$METRICS_URL" >"$1"
}

# scrape_ticked FILE: a scrape made once two more ticks have published
# (shedd_ticks_total grown by two: the first may have read the stats before
# now), so it holds the figures of everything done before the call.
scrape_ticked() {
	local t0
	scrape "$1"
	t0=$(metric "$1" shedd_ticks_total)
	wait_for "two more ticks" 3 ticked_past "$1" $((t0 + 1))
}
ticked_past() { scrape "$1" && [ "$(metric "$1" shedd_ticks_total)" -gt "$2" ]; }

# metric FILE 'NAME{LABELS}': the value of one series (labels in the
# order shedd prints them, iface first and implied); fails if absent.
metric() {
	local name=${2%%\{*} labels="" v
	[[ "$2" == *"{"* ]] && labels=",${2#*\{}" && labels=${labels%\}}
	v=$(grep -F "$name{iface=\"$IF_SRV\"$labels} " "$1" | awk '{ print $2 }')
	if [ -z "$v" ]; then
		echo "metric: no series $2 in $1" >&2
		return 1
	fi
	echo "$v"
}

# a server of real connections that sends shedd latency samples, and
# shedd on the testbed (its options as arguments)
# (the clients are critical, the spoofed floods sheddable).
serve_and_shed() {
	shedd_start --verify off --port "$PORT" --prefix "$CLI_IP/32=critical" "$@"
	slow_start --workers 4 --service-ms 2 --duration 60 --latency-socket "$LATENCY_SOCK"
}

# counters_monotonic OLD NEW: every counter and histogram series of OLD is
# in NEW with a value at least as large.
counters_monotonic() {
	awk '
		FNR == 1 { file++ }
		/^# TYPE / { kind[$3] = $4; next }
		/^#/ { next }
		{
			series = $1; fam = series; sub(/\{.*/, "", fam)
			base = fam; sub(/_(bucket|sum|count)$/, "", base)
			if (!(kind[fam] == "counter" || kind[base] == "histogram")) next
			if (file == 1) { old[series] = $2; n++ } else { new[series] = $2 }
		}
		END {
			bad = 0
			for (s in old) {
				if (!(s in new)) { print "gone: " s; bad = 1 }
				else if (new[s] + 0 < old[s] + 0) { print "went back: " s " " old[s] " -> " new[s]; bad = 1 }
			}
			if (n < 100) { print "only " n " counter series"; bad = 1 }
			exit bad
		}' "$1" "$2"
}

@test "a live scrape under load passes promtool and holds every family" {
	serve_and_shed --max-rate 300
	load clients 200 2 1000 &
	local load_pid=$!
	flood 198.19.0.0/16 2000 2 >/dev/null
	wait "$load_pid"
	scrape_ticked "$BATS_TEST_TMPDIR/m.txt"
	head -n 30 "$BATS_TEST_TMPDIR/m.txt"
	run promtool check metrics <"$BATS_TEST_TMPDIR/m.txt"
	echo "promtool: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# The table read: more than the first families (61 when written).
	[ "${#FAMILIES[@]}" -ge 60 ]
	for f in "${FAMILIES[@]}"; do
		grep -q "^# TYPE $f " "$BATS_TEST_TMPDIR/m.txt" || { echo "missing family $f"; return 1; }
		grep -q "^# HELP $f " "$BATS_TEST_TMPDIR/m.txt" || { echo "no HELP for $f"; return 1; }
	done
	# The clients' connections were accepted (sojourn) and timed by the
	# server (latency); the flood was shed.
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_accept_queue_sojourn_seconds_count{listener="protected"}')" -ge 300 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_service_latency_seconds_count')" -ge 300 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_latency_samples_total{result="served"}')" -ge 300 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_syn_packets_total{class="sheddable",verdict="dropped"}')" -ge 1 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_controller_mode{mode="fixed"}')" -eq 0 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_ticks_total')" -ge 10 ]
	# The latency samples of 2 ms service times sit under the 5 ms bound.
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_service_latency_seconds_bucket{le="0.0025"}')" -ge 100 ]
	# / points at /metrics; anything else is not found.
	run in_srv curl -sS http://127.0.0.1:9464/
	[[ "$output" == *'href="/metrics"'* ]]
	run in_srv curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9464/other
	[ "$output" = 404 ]
	# It stops cleanly with the HTTP thread (a sanitized build's leaks or
	# errors would show in the exit status).
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
}

@test "the counters are the pinned stats map's, summed over CPUs" {
	shedd_start --verify off --port "$PORT" --rate 300 --prefix 198.19.1.0/24=critical
	listener_start
	flood 198.19.1.0/24 400 1 >/dev/null
	# Sheddable sources outside the critical prefix (synflood walks its
	# range in order: 198.19.0.0/16 would send 256 of them from it).
	flood 198.19.128.0/17 1500 1 >/dev/null
	# The flood is over (synflood waited for the replies); the next ticks
	# publish the last figures.
	scrape_ticked "$BATS_TEST_TMPDIR/m.txt"
	local c v
	for c in 1:critical 3:sheddable; do
		for v in admitted:admitted dropped:dropped rst_sent:rst; do
			echo "${c#*:} ${v#*:}: pinned $(stat_sum "${v%%:*}" "${c%%:*}")"
			[ "$(metric "$BATS_TEST_TMPDIR/m.txt" "shedd_syn_packets_total{class=\"${c#*:}\",verdict=\"${v#*:}\"}")" \
				-eq "$(stat_sum "${v%%:*}" "${c%%:*}")" ]
		done
		[ "$(metric "$BATS_TEST_TMPDIR/m.txt" "shedd_token_requests_total{class=\"${c#*:}\"}")" \
			-eq "$(stat_sum charged "${c%%:*}")" ]
	done
	[ "$(stat_sum syn 1)" -eq 400 ]
	[ "$(stat_sum syn 3)" -eq 1500 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_syn_packets_total{class="sheddable",verdict="dropped"}')" -ge 900 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_admit_limit_syn_per_second')" -eq 300 ]
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_controller_mode{mode="fixed"}')" -eq 1 ]
}

# fair_shed_seen FILE SRC: a scrape in FILE names SRC a heavy hitter of
# sheddable and counts sheds for fairness.
fair_shed_seen() {
	scrape "$1" || return 1
	grep -qF "shedd_fair_heavy_hitter_rate{iface=\"$IF_SRV\",class=\"sheddable\",level=\"addr\",source=\"$2\"} " "$1" &&
		[ "$(metric "$1" 'shedd_fair_shed_total{class="sheddable"}')" -ge 1 ]
}

# fair_counted_over FILE N: a scrape in FILE counts at least N SYNs of
# sheddable for fairness.
fair_counted_over() {
	scrape "$1" || return 1
	[ "$(metric "$1" 'shedd_fair_counted_total{class="sheddable"}')" -ge "$2" ]
}

@test "per-source fairness: a heavy source is a heavy hitter, its sheds are counted, the series are bounded" {
	shedd_start --verify off --port "$PORT" --rate 300
	listener_start
	flood_bg /dev/null 198.19.0.5/32 400 5
	local heavy_pid=$FLOOD_PID
	flood_bg /dev/null 198.19.128.0/17 600 5
	local m=$BATS_TEST_TMPDIR/m.txt
	wait_for "198.19.0.5 a heavy hitter in the metrics" 5 fair_shed_seen "$m" 198.19.0.5
	# The first scrape that names it may come before 100 SYNs were
	# counted (a loaded host starts the floods late): the count grows.
	wait_for "100 SYNs counted for fairness" 5 fair_counted_over "$m" 100
	grep '^shedd_fair_' "$m"
	[ "$(metric "$m" 'shedd_fair_active{class="sheddable"}')" -eq 1 ]
	[ "$(metric "$m" 'shedd_fair_active{class="critical"}')" -eq 0 ]
	[ "$(metric "$m" 'shedd_fair_sources{class="sheddable",level="addr"}')" -ge 10 ]
	metric "$m" 'shedd_fair_limit_per_second{class="sheddable",level="24+64"}'
	metric "$m" 'shedd_fair_sources{class="critical",level="48"}'
	# At most 5 heavy hitters a class.
	[ "$(grep -c '^shedd_fair_heavy_hitter_rate{.*class="sheddable"' "$m")" -le 5 ]
	[ "$(grep -c '^shedd_fair_heavy_hitter_rate{' "$m")" -le 20 ]
	# The counters are the pinned fair_stats', summed over CPUs (read after
	# the floods end and two more ticks).
	wait "$heavy_pid"
	wait "$FLOOD_PID"
	scrape_ticked "$m"
	[ "$(metric "$m" 'shedd_fair_shed_total{class="sheddable"}')" -eq \
		"$(bpftool map dump pinned "$PIN_DIR/fair_stats" | jq '[.[3].values[].value.shed] | add')" ]
	run promtool check metrics <"$m"
	echo "promtool: $output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# latency_handled FILE N: the latency histogram's count and the refused
# datagrams add up to N at least (every datagram sent was read).
latency_handled() {
	local c r
	scrape "$1" || return 1
	c=$(metric "$1" shedd_service_latency_seconds_count) || return 1
	r=$(metric "$1" 'shedd_latency_samples_total{result="refused"}') || return 1
	[ $((c + r)) -ge "$2" ]
}

@test "a binary latency sample above one hour is refused as range: the histogram's sum does not wrap" {
	local m=$BATS_TEST_TMPDIR/m.txt
	shedd_start --port "$PORT" --controller off --rate 1000
	# 1 ms; 2^63 ns twice (version 1 and 2: their sum wraps 64 bits to
	# 0); exactly the cap, one hour.
	run python3 - "$LATENCY_SOCK" <<-'EOF'
		import socket, struct, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
		s.connect(sys.argv[1])
		magic = 0x4c444853
		s.send(struct.pack("=IHHQ", magic, 1, 0, 1000000))
		s.send(struct.pack("=IHHQ", magic, 1, 0, 1 << 63))
		s.send(struct.pack("=IHHQII", magic, 2, 0, 1 << 63, 0, 0))
		s.send(struct.pack("=IHHQ", magic, 1, 0, 3600 * 10**9))
	EOF
	[ "$status" -eq 0 ]
	wait_for "four datagrams read" 5 latency_handled "$m" 4
	grep -E '^shedd_(service_latency_seconds_(sum|count)|latency_datagrams_refused_total.*range)' "$m"
	run metric "$m" shedd_service_latency_seconds_count
	[ "$output" -eq 2 ]
	run metric "$m" shedd_service_latency_seconds_sum
	[ "$output" = 3600.001 ]
	run metric "$m" 'shedd_latency_datagrams_refused_total{reason="range"}'
	[ "$output" -eq 2 ]
	run metric "$m" 'shedd_latency_datagrams_refused_total{reason="binary"}'
	[ "$output" -eq 0 ]
	# The hour is above the last bound (60 s), the millisecond below 2.5 ms.
	run metric "$m" 'shedd_service_latency_seconds_bucket{le="60"}'
	[ "$output" -eq 1 ]
	run metric "$m" 'shedd_service_latency_seconds_bucket{le="0.0025"}'
	[ "$output" -eq 1 ]
	# The status line names the reason.
	wait_for "bad_why=range:2" 3 sh -c "grep -q 'bad_why=range:2' '$TESTBED_TMP/shedd.log'"
}

@test "a SIGKILL and an adopting shedd keep every counter monotonic" {
	serve_and_shed
	load clients 200 1 1000
	flood 198.19.0.0/16 1000 1 >/dev/null
	scrape_ticked "$BATS_TEST_TMPDIR/before.txt"
	[ "$(metric "$BATS_TEST_TMPDIR/before.txt" 'shedd_accept_queue_sojourn_seconds_count{listener="protected"}')" -ge 100 ]
	kill -KILL "$SHEDD_PID"
	wait "$SHEDD_PID" || true
	shedd_start --verify off --port "$PORT"
	grep -q 'adopted the running shedd' "$BATS_TEST_TMPDIR/shedd.log"
	# At once, before the new shedd counts anything of its own.
	scrape "$BATS_TEST_TMPDIR/after.txt"
	run counters_monotonic "$BATS_TEST_TMPDIR/before.txt" "$BATS_TEST_TMPDIR/after.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	# The daemon's own counters came back from the pins, not from zero.
	[ "$(metric "$BATS_TEST_TMPDIR/after.txt" 'shedd_accept_queue_sojourn_seconds_count{listener="protected"}')" -ge \
		"$(metric "$BATS_TEST_TMPDIR/before.txt" 'shedd_accept_queue_sojourn_seconds_count{listener="protected"}')" ]
	[ "$(metric "$BATS_TEST_TMPDIR/before.txt" 'shedd_ticks_total')" -ge 10 ]
	[ "$(metric "$BATS_TEST_TMPDIR/after.txt" 'shedd_ticks_total')" -ge \
		"$(metric "$BATS_TEST_TMPDIR/before.txt" 'shedd_ticks_total')" ]
	# And it goes on counting after the restart.
	load clients2 200 1 1000
	scrape_ticked "$BATS_TEST_TMPDIR/later.txt"
	run counters_monotonic "$BATS_TEST_TMPDIR/after.txt" "$BATS_TEST_TMPDIR/later.txt"
	[ "$status" -eq 0 ]
	[ "$(metric "$BATS_TEST_TMPDIR/later.txt" 'shedd_accept_queue_sojourn_seconds_count{listener="protected"}')" -ge \
		$(( $(metric "$BATS_TEST_TMPDIR/after.txt" 'shedd_accept_queue_sojourn_seconds_count{listener="protected"}') + 100 )) ]
}

# prom_query EXPR: the first value of an instant query, from Prometheus'
# HTTP API in the server namespace.
prom_query() {
	in_srv curl -sS --fail --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
		--data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}

# prom_is EXPR VALUE: the instant query gives VALUE.
prom_is() { [ "$(prom_query "$1")" = "$2" ]; }

@test "a real Prometheus scrapes shedd and PromQL agrees with the pinned counters" {
	shedd_start --verify off --port "$PORT" --rate 200 --burst 20
	listener_start
	# A namespace of the test's own: nothing else listens there.
	PROM_PORT=19090
	local dir=$BATS_TEST_TMPDIR/prom
	mkdir -p "$dir/data"
	cat >"$dir/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  evaluation_interval: 1s
		scrape_configs:
		  - job_name: shedd
		    static_configs:
		      - targets: ['127.0.0.1:9464']
	EOF
	ip netns exec "$NS_SRV" prometheus --config.file="$dir/prometheus.yml" \
		--storage.tsdb.path="$dir/data" --web.listen-address="127.0.0.1:$PROM_PORT" \
		>"$dir/prometheus.log" 2>&1 &
	PROM_PID=$!
	wait_for "prometheus ready" 30 in_srv curl -sf -o /dev/null "http://127.0.0.1:$PROM_PORT/-/ready"
	wait_for "a first scrape" 10 sh -c "[ -n \"\$(ip netns exec $NS_SRV curl -sS 'http://127.0.0.1:$PROM_PORT/api/v1/query?query=up' | jq -r '.data.result[0].value[1] // empty')\" ]"
	# 1000 SYN/s for 6 s against a fixed 200/s: the admitted rate
	# Prometheus computes over the flood is shedd's rate.
	flood_bg "$BATS_TEST_TMPDIR/flood.txt" 198.19.0.0/16 1000 6
	# A point inside the flood, 3 s of it behind: a time, no condition.
	sleep 4.5
	rate=$(prom_query 'rate(shedd_syn_packets_total{class="sheddable",verdict="admitted"}[3s])')
	echo "admitted rate by PromQL during the flood: $rate/s"
	within "$(printf '%.0f' "$rate")" 160 240
	wait "$FLOOD_PID"
	# Until a scrape after the last SYN has given Prometheus the pinned
	# counter (10 s at most).
	pinned=$(stat_sum admitted 3)
	q='shedd_syn_packets_total{class="sheddable",verdict="admitted"}'
	wait_for "Prometheus' counter at the pinned $pinned" 10 prom_is "$q" "$pinned" ||
		{ echo "PromQL: $(prom_query "$q")"; false; }
	promql=$(prom_query 'shedd_syn_packets_total{class="sheddable",verdict="admitted"}')
	total=$(prom_query 'sum(shedd_syn_packets_total{class="sheddable"})')
	echo "admitted: pinned $pinned, PromQL $promql; judged: pinned $(stat_sum syn 3), PromQL $total"
	[ "$promql" = "$pinned" ]
	[ "$total" = "$(stat_sum syn 3)" ]
	[ "$total" -eq 6000 ]
}

@test "a stuck or slow scraper does not hold up the tick" {
	# The controller (no --rate) stamps ctl_state every tick.
	shedd_start --verify off --port "$PORT"
	STUCK_PIDS=()
	local i
	# Connections that send nothing, one that sends half a request (their
	# sockets are held by the five sleeps), and a reader throttled to a
	# byte a second (curl takes its first buffer at once, so it may be done
	# early: it is not counted below).
	for i in 1 2 3 4; do
		ip netns exec "$NS_SRV" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9464; sleep 8' &
		STUCK_PIDS+=($!)
	done
	ip netns exec "$NS_SRV" bash -c \
		'exec 3<>/dev/tcp/127.0.0.1/9464; printf "GET /metrics HTTP/1.1\r\nHost: x\r\n" >&3; sleep 8' &
	STUCK_PIDS+=($!)
	ip netns exec "$NS_SRV" curl -s --limit-rate 1 --max-time 8 -o /dev/null "$METRICS_URL" &
	STUCK_PIDS+=($!)
	# Scrapers that hammer the endpoint meanwhile.
	ip netns exec "$NS_SRV" bash -c \
		"end=\$((SECONDS + 4)); while [ \$SECONDS -lt \$end ]; do curl -s -o /dev/null --max-time 2 $METRICS_URL; done" &
	STUCK_PIDS+=($!)
	# The five held connections, by the client sockets the sleeps own (a
	# count of all would take a hammering scraper's for one of them).
	wait_for "the stuck scrapers connected" 5 sh -c \
		"[ \$(ip netns exec $NS_SRV ss -tnpH state established '( dport = :9464 )' | grep -c '((\"sleep\"') -eq 5 ]"
	w0=$(date +%s%N)
	t0=$(bpftool map dump pinned "$PIN_DIR/ctl_state" | jq '.[0].value.written_ns')
	k0=$(bpftool map dump pinned "$PIN_DIR/daemon_stats" | jq '.[0].value.ticks')
	# The window measured: a duration.
	sleep 3
	t1=$(bpftool map dump pinned "$PIN_DIR/ctl_state" | jq '.[0].value.written_ns')
	k1=$(bpftool map dump pinned "$PIN_DIR/daemon_stats" | jq '.[0].value.ticks')
	wall=$(( ($(date +%s%N) - w0) / 1000000 ))
	echo "in $wall ms: ctl_state written $(( (t1 - t0) / 1000000 )) ms later, $((k1 - k0)) ticks"
	# A tick every 100 ms all along; a few lost to a busy VM are allowed,
	# a stall is not.
	within $((k1 - k0)) $((wall / 100 - 5)) $((wall / 100 + 1))
	# t0 is the stamp of the tick before w0, up to a tick (100 ms) older.
	within $(( (t1 - t0) / 1000000 )) $((wall - 500)) $((wall + 100))
	# And a well-behaved scraper is still served.
	scrape "$BATS_TEST_TMPDIR/m.txt"
	[ "$(metric "$BATS_TEST_TMPDIR/m.txt" 'shedd_ticks_total')" -ge "$k1" ]
}

@test "--metrics-addr: a taken address given stops shedd before it attaches; none and IPv6" {
	# Something else has the port in the server namespace.
	ip netns exec "$NS_SRV" "$TCPSTREAM" sink --addr 127.0.0.1 --port 9464 --duration 30 \
		>/dev/null 2>&1 &
	other=$!
	PIDS+=("$other")
	wait_listening "the other listener" 9464
	run timeout 10 "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --port "$PORT" --rate 100 \
		--metrics-addr 127.0.0.1:9464
	echo "$output"
	[ "$status" -eq 3 ] # cannot start here
	[[ "$output" == *"listen on 127.0.0.1:9464: Address already in use"* ]]
	if xdp_attached; then echo "XDP attached after a failed start"; return 1; fi
	[ ! -e "$PIN_DIR" ]
	# A malformed address is a usage error.
	run "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --metrics-addr 127.0.0.1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--metrics-addr"* ]]
	kill "$other"
	wait "$other" || true
	# none: no endpoint at all, shedd runs.
	shedd_start --verify off --port "$PORT" --rate 100 --metrics-addr none
	xdp_attached
	run in_srv curl -s --max-time 2 "$METRICS_URL"
	[ "$status" -ne 0 ]
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
	# IPv6 loopback.
	shedd_start --verify off --port "$PORT" --rate 100 --metrics-addr '[::1]:9465'
	in_srv curl -sS --fail --max-time 5 'http://[::1]:9465/metrics' >"$BATS_TEST_TMPDIR/m6.txt"
	grep -q '^shedd_build_info{' "$BATS_TEST_TMPDIR/m6.txt"
	kill -TERM "$SHEDD_PID"
	wait "$SHEDD_PID"
}

@test "the default metrics address that cannot be had is a warning: shedd sheds without metrics" {
	# The namespace's loopback down and without its address, as in a
	# namespace whose loopback was never up: 127.0.0.1 cannot be bound.
	in_srv ip addr flush dev lo
	in_srv ip link set lo down
	run in_srv ip -4 addr show dev lo
	[ -z "$output" ]
	# The journal's form of the lines (service.bats): each with its level.
	local log=$TESTBED_TMP/shedd.log
	: >"$log"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$log") shedd_start --verify off --port "$PORT" --rate 100
	cat "$log"
	grep -q "^<4>metrics: listen on 127.0.0.1:9464: Cannot assign requested address; the default address: shedd runs without metrics" \
		"$log"
	xdp_attached
	flood 198.19.0.0/16 500 1
	[ "$(stat_sum dropped 3)" -ge 300 ]
	kill -TERM "$SHEDD_PID"
	local st=0
	wait "$SHEDD_PID" || st=$?
	[ "$st" -eq 0 ]
	# The same address given is required: no start, nothing attached.
	run timeout 10 "$SHEDD" --netns "$NS_SRV" --iface "$IF_SRV" --port "$PORT" --rate 100 \
		--metrics-addr 127.0.0.1:9464
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"shedd: metrics: listen on 127.0.0.1:9464: Cannot assign requested address"* ]]
	[[ "$output" != *"the default address"* ]]
	if xdp_attached; then echo "XDP attached after a failed start"; return 1; fi
	[ ! -e "$PIN_DIR" ]
	# Taken by another process, the default address costs only the metrics too.
	in_srv ip link set lo up
	wait_for "127.0.0.1 back on lo" 5 sh -c "ip netns exec $NS_SRV ip -4 addr show dev lo | grep -q 127.0.0.1"
	ip netns exec "$NS_SRV" "$TCPSTREAM" sink --addr 127.0.0.1 --port 9464 --duration 30 \
		>/dev/null 2>&1 &
	PIDS+=($!)
	wait_listening "the other listener" 9464
	shedd_start --verify off --port "$PORT" --rate 100
	grep -q "^shedd: metrics: listen on 127.0.0.1:9464: Address already in use; the default address" \
		"$log"
	xdp_attached
}

@test "the Grafana dashboard is JSON and queries only metrics a live shedd exposes" {
	jq -e '.__inputs[0].type == "datasource" and (.panels | length) >= 7' "$DASHBOARD"
	shedd_start --verify off --port "$PORT"
	listener_start
	flood 198.19.0.0/16 200 1 >/dev/null
	scrape_ticked "$BATS_TEST_TMPDIR/m.txt"
	names=$(jq -r '.. | objects | select(has("expr")) | .expr' "$DASHBOARD" |
		grep -o 'shedd_[a-z_]*' | sort -u)
	[ -n "$names" ]
	local n fam
	for n in $names; do
		fam=$n
		[[ "$fam" =~ _(bucket|sum|count)$ ]] && fam=${fam%_*}
		grep -q "^# TYPE $fam " "$BATS_TEST_TMPDIR/m.txt" || { echo "dashboard queries $n: not exposed"; return 1; }
	done
	echo "dashboard queries: $(echo $names)"
}
