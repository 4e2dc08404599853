# shedd - build, test and demo. `make help` lists the targets.
# Everything is built under $(OUTPUT); only ./shedd lands at the top.

OUTPUT ?= .output
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
PKG_CONFIG ?= pkg-config
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX_H ?= $(OUTPUT)/vmlinux.h

# SAN=1 builds userspace (daemon, tests, tools) with ASan and UBSan.
ifeq ($(SAN),1)
OUTPUT := .output-san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS ?= -O2 -g
# user/: core/ the pure, deterministic modules (unit-tested without root);
# maps/ the pinned-map layer both binaries use; daemon/ shedd's I/O; shedctl/
# the operator's tool; tools/ build-time programs (gendocs).
USER_DIRS := user/core user/maps user/daemon user/shedctl user/tools
USER_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $(SAN_FLAGS) \
	-Iinclude $(addprefix -I,$(USER_DIRS)) -I$(OUTPUT)
LIBBPF_LIBS := $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)
INIH_LIBS := $(shell $(PKG_CONFIG) --libs inih 2>/dev/null || echo -linih)
MHD_LIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)
SERVICE_LIBS := $(shell $(PKG_CONFIG) --libs libsystemd libcap-ng 2>/dev/null || echo -lsystemd -lcap-ng)
CAPNG_LIBS := $(shell $(PKG_CONFIG) --libs libcap-ng 2>/dev/null || echo -lcap-ng)
NFT_LIBS := $(shell $(PKG_CONFIG) --libs libnftables jansson 2>/dev/null || echo -lnftables -ljansson)
JANSSON_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson)
NCURSES_CFLAGS := $(shell $(PKG_CONFIG) --cflags ncursesw 2>/dev/null)
NCURSES_LIBS := $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)
LDFLAGS += $(SAN_FLAGS)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Iinclude -Ibpf -I$(dir $(VMLINUX_H))

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_OBJ := $(OUTPUT)/shedd.bpf.o $(OUTPUT)/sojourn.bpf.o $(OUTPUT)/handoff.bpf.o \
	$(OUTPUT)/carry.bpf.o
SKEL := $(OUTPUT)/shedd.skel.h $(OUTPUT)/sojourn.skel.h $(OUTPUT)/handoff.skel.h \
	$(OUTPUT)/carry.skel.h
USER_HDRS := $(wildcard $(addsuffix /*.h,$(USER_DIRS))) $(wildcard include/*.h)
# By folder: shedd links all three, shedctl only core/ and maps/ (and its
# own pins.c).
CORE_SRCS := user/core/alloc.c user/core/options.c user/core/status.c user/core/aimd.c \
	user/core/latency_target.c user/core/drain.c user/core/req_per_conn.c \
	user/core/signal_parse.c user/core/listeners.c user/core/sample_agg.c user/core/tick.c \
	user/core/conc.c user/core/recall_pick.c user/core/controller_params.c \
	user/core/kernel_features.c user/core/logline.c user/core/config.c user/core/log.c \
	user/core/metrics.c user/core/fair.c user/core/fair_view.c user/core/port_limit.c \
	user/core/signed_ports.c
MAPS_SRCS := user/maps/ctl.c user/maps/ctl_state.c user/maps/layout.c user/maps/migrate.c \
	user/maps/settings.c user/maps/fair_maps.c user/maps/pindir.c user/maps/detach.c \
	user/maps/handle.c user/maps/prefixes.c user/maps/sysctls.c user/maps/port_maps.c
DAEMON_SRCS := user/daemon/loader.c user/daemon/tc_handoff.c user/daemon/configure.c \
	user/daemon/signals.c user/daemon/probe.c user/daemon/reload.c user/daemon/service.c \
	user/daemon/metrics_http.c user/daemon/sockdiag.c user/daemon/xdptx.c \
	user/daemon/tunnels.c user/daemon/redirects.c user/daemon/redirects_scan.c \
	user/daemon/signed_scan.c user/daemon/recall.c
USER_SRCS := $(CORE_SRCS) $(MAPS_SRCS) $(DAEMON_SRCS)
CORE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(CORE_SRCS)))
MAPS_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(MAPS_SRCS)))
AIMD_OBJS := $(OUTPUT)/aimd.o $(OUTPUT)/latency_target.o $(OUTPUT)/drain.o \
	$(OUTPUT)/req_per_conn.o $(OUTPUT)/sample_agg.o
USER_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(notdir $(USER_SRCS)))
BIN := shedd
CTL_BIN := shedctl
ifeq ($(SAN),1)
BIN := $(OUTPUT)/shedd
CTL_BIN := $(OUTPUT)/shedctl
endif
UNIT_TESTS := $(OUTPUT)/test_bucket $(OUTPUT)/test_alloc $(OUTPUT)/test_conc $(OUTPUT)/test_recall $(OUTPUT)/test_options \
	$(OUTPUT)/test_aimd $(OUTPUT)/test_sim $(OUTPUT)/test_cold_start $(OUTPUT)/test_keepalive $(OUTPUT)/test_crowd $(OUTPUT)/test_signals $(OUTPUT)/test_spread \
	$(OUTPUT)/test_kernel_features $(OUTPUT)/test_status $(OUTPUT)/test_auto_target \
	$(OUTPUT)/test_logline $(OUTPUT)/test_log $(OUTPUT)/test_ctl $(OUTPUT)/test_metrics \
	$(OUTPUT)/test_xdptx $(OUTPUT)/test_layout $(OUTPUT)/test_tunnels $(OUTPUT)/test_fair \
	$(OUTPUT)/test_fair_scale $(OUTPUT)/test_listeners $(OUTPUT)/test_ports \
	$(OUTPUT)/test_redirects $(OUTPUT)/test_signed_ports
XDP_TESTS := $(OUTPUT)/test_xdp $(OUTPUT)/test_port_limit $(OUTPUT)/test_verifier \
	$(OUTPUT)/fuzz_xdp
# libFuzzer targets (clang): `make test` gives each a few seconds.
FUZZ_TESTS := $(OUTPUT)/fuzz_logline $(OUTPUT)/fuzz_config $(OUTPUT)/fuzz_options \
	$(OUTPUT)/fuzz_cidr
FUZZ_CFLAGS := -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude $(addprefix -I,$(USER_DIRS)) \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TOOLS := $(OUTPUT)/synflood $(OUTPUT)/tcpstream $(OUTPUT)/slowserver $(OUTPUT)/loadgen \
	$(OUTPUT)/xdp_pass.bpf.o $(OUTPUT)/xdp_drop.bpf.o $(OUTPUT)/xdp_readdrop.bpf.o \
	$(OUTPUT)/xdp_replay.bpf.o $(OUTPUT)/xdp_member.bpf.o $(OUTPUT)/vlan_tag.bpf.o \
	$(OUTPUT)/latbench $(OUTPUT)/uringserver $(OUTPUT)/floodgen $(OUTPUT)/xdprouter \
	$(OUTPUT)/tcpecho $(OUTPUT)/cookieack $(OUTPUT)/relay
# Tools with a BPF side of their own: tests/tools/X.bpf.c, X.c, X.h.
BPF_TOOLS := floodgen xdprouter

.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJ)
.PHONY: all help clean deps docs docs-check test test-unit test-kernels test-fresh demo san experiments bench fuzz fuzz-logline \
	fuzz-config fuzz-options fuzz-cidr install

all: $(BIN) $(CTL_BIN) $(TOOLS)

help:
	@echo 'Targets:'
	@echo '  all              build ./shedd, ./shedctl and the testbed tools (default)'
	@echo '  test             install deps, build, run every test (as root)'
	@echo '  test T=FILE...   build what FILE needs and run only it, e.g.'
	@echo '                   T=tests/integration/rate.bats or T=tests/test_alloc.c'
	@echo '  test-unit        unit tests: need neither root nor clang nor bpftool'
	@echo '                   (bucket, allocator, options, aimd, simulation, signals,'
	@echo '                   kernel features, status counters, log lines, daemon log,'
	@echo '                   rate pin, metrics, fairness)'
	@echo '  test-kernels     the kernel matrix: boot Debian 12'"'"'s own kernels (6.1, 6.12)'
	@echo '                   under qemu and run the XDP tests, a short fuzz run and'
	@echo '                   the integration tests of tests/kernels/selection inside'
	@echo '                   (root; KERNELS=, SELECTION=wide: a test of every integration'
	@echo '                   file but flood.bats, and tunnels.bats whole)'
	@echo '  test-fresh       the two commands in a fresh Debian 12 root (mmdebstrap minbase,'
	@echo '                   chroot): make demo, every test binary, service.bats, deps.bats'
	@echo '                   (root; commit first: it clones HEAD; FRESH_CACHE=, FRESH_BATS=)'
	@echo '  demo             install deps, build, run shedd against a SYN flood on a namespace testbed'
	@echo '  experiments      the experiments, each a CSV, a table and a plot in docs/results'
	@echo '                   (root; about 38 min): goodput, classes, recovery, knee, fairness,'
	@echo '                   flood, proxy, keepalive, scale (the simulations at 1 k-1 M conn/s, 1-128 CPUs,'
	@echo '                   10-1 M sources, 1-64 listeners, 1-8 ports; SCALE_QUICK=1 for a short run);'
	@echo '                   EXPERIMENT= names some, EXPERIMENT=soak the 30-min soak'
	@echo '  docs             write the option and metric reference tables of docs/usage.md'
	@echo '                   and docs/metrics.md from the code (docs-check: fail if they differ)'
	@echo '  bench            scripts/bench.sh: XDP cost per packet beside trivial programs,'
	@echo '                   flood throughput against nftables, hashlimit and the kernel,'
	@echo '                   IPv4 and IPv6, the daemon'"'"'s CPU and memory, the controller'"'"'s'
	@echo '                   reaction; writes docs/results/bench.md (root; BENCH_OUT=,'
	@echo '                   BENCH_ROUNDS=, BENCH_REPEAT=, BENCH_SECS=, DAEMON_ROUNDS=,'
	@echo '                   REACT_ROUNDS=)'
	@echo '  fuzz             millions of random and mutated frames through the XDP program,'
	@echo '                   invariants checked on each (root; FUZZ_FRAMES=, FUZZ_SEED=),'
	@echo '                   after fuzz-logline'
	@echo '  fuzz-logline, fuzz-config, fuzz-options, fuzz-cidr'
	@echo '                   libFuzzer with ASan+UBSan on one parser: the latency'
	@echo '                   socket (log lines, binary samples), the config file, the'
	@echo '                   command line, CIDR prefixes; FUZZ_SECS= (default 600)'
	@echo '  deps             install the Debian packages the build, tests and demo need'
	@echo '  san              ASan+UBSan build; unit, XDP and lifecycle tests with it'
	@echo '  install          install shedd (and shedctl when built), the systemd unit,'
	@echo '                   man pages, the latency header, the dashboard'
	@echo '                   and the system user shedd (sysusers.d)'
	@echo '                   (PREFIX=/usr/local, DESTDIR=, UNITDIR=, SYSUSERSDIR=)'
	@echo '  clean            remove build output'
	@echo 'Variables: V=1 (show commands), SAN=1, VMLINUX_H=path, CLANG=, BPFTOOL='

$(OUTPUT):
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c bpf/*.h include/*.h $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/xdp_pass.bpf.o $(OUTPUT)/xdp_drop.bpf.o $(OUTPUT)/xdp_readdrop.bpf.o \
		$(OUTPUT)/xdp_replay.bpf.o $(OUTPUT)/xdp_member.bpf.o \
		$(OUTPUT)/vlan_tag.bpf.o: $(OUTPUT)/%.bpf.o: tests/tools/%.bpf.c $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(patsubst %,$(OUTPUT)/%.bpf.o,$(BPF_TOOLS)): $(OUTPUT)/%.bpf.o: tests/tools/%.bpf.c \
		tests/tools/%.h $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itests/tools -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# Only the objects that include a skeleton depend on it (and so on clang and
# bpftool): the pure ones, and the unit tests built from them, do not.
$(OUTPUT)/%.o: user/core/%.c $(USER_HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@
$(OUTPUT)/%.o: user/maps/%.c $(USER_HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@
$(OUTPUT)/%.o: user/daemon/%.c $(USER_HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(OUTPUT)/loader.o $(OUTPUT)/tc_handoff.o: $(OUTPUT)/shedd.skel.h $(OUTPUT)/handoff.skel.h
$(OUTPUT)/ctl.o $(OUTPUT)/handle.o $(OUTPUT)/configure.o $(OUTPUT)/prefixes.o: $(OUTPUT)/shedd.skel.h
$(OUTPUT)/migrate.o: $(OUTPUT)/shedd.skel.h $(OUTPUT)/handoff.skel.h $(OUTPUT)/carry.skel.h

$(OUTPUT)/shedctl.o: user/shedctl/shedctl.c $(USER_HDRS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(NCURSES_CFLAGS) -c $< -o $@
$(OUTPUT)/signals.o: $(OUTPUT)/sojourn.skel.h
$(OUTPUT)/metrics_http.o: $(OUTPUT)/shedd.skel.h
$(OUTPUT)/fair_maps.o $(OUTPUT)/port_maps.o: $(OUTPUT)/shedd.skel.h

$(BIN): $(OUTPUT)/main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIBBPF_LIBS) $(INIH_LIBS) $(SERVICE_LIBS) $(MHD_LIBS) $(NFT_LIBS) -lm -pthread -o $@

# shedctl: the operator's tool, from the pins (user/maps/pins.c); detach is
# shedd --remove's (user/maps/detach.c). Only core/ and maps/: neither
# libmicrohttpd nor libsystemd.
$(CTL_BIN): $(OUTPUT)/shedctl.o $(OUTPUT)/pins.o $(CORE_OBJS) $(MAPS_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIBBPF_LIBS) $(INIH_LIBS) $(CAPNG_LIBS) $(NCURSES_LIBS) -lm -o $@

$(OUTPUT)/test_bucket: tests/test_bucket.c include/*.h | $(OUTPUT)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(LDFLAGS) $(CMOCKA_LIBS) -o $@

$(OUTPUT)/test_alloc: tests/test_alloc.c $(OUTPUT)/alloc.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_conc: tests/test_conc.c $(OUTPUT)/conc.o $(OUTPUT)/alloc.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_recall: tests/test_recall.c $(OUTPUT)/recall_pick.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_aimd: tests/test_aimd.c $(AIMD_OBJS)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_auto_target: tests/test_auto_target.c tests/splitmix.h $(AIMD_OBJS) \
		$(OUTPUT)/sample_agg.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_signed_ports: tests/test_signed_ports.c $(OUTPUT)/signed_ports.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -o $@

$(OUTPUT)/test_signals: tests/test_signals.c $(OUTPUT)/signal_parse.o $(OUTPUT)/listeners.o \
		$(OUTPUT)/sample_agg.o $(OUTPUT)/logline.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_xdptx: tests/test_xdptx.c $(OUTPUT)/xdptx.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -o $@

$(OUTPUT)/test_log: tests/test_log.c $(OUTPUT)/log.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -o $@

$(OUTPUT)/test_ctl: tests/test_ctl.c $(OUTPUT)/ctl_state.o $(OUTPUT)/tick.o $(OUTPUT)/conc.o $(AIMD_OBJS) \
		$(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_layout: tests/test_layout.c $(OUTPUT)/layout.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_tunnels: tests/test_tunnels.c $(OUTPUT)/tunnels.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -o $@

$(OUTPUT)/test_redirects: tests/test_redirects.c $(OUTPUT)/redirects.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) $(JANSSON_LIBS) -o $@

$(OUTPUT)/test_fair: tests/test_fair.c tests/splitmix.h include/*.h $(OUTPUT)/fair.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_fair_scale: tests/test_fair_scale.c tests/splitmix.h tests/sim_table.h include/*.h $(OUTPUT)/fair.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_logline: tests/test_logline.c $(OUTPUT)/logline.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) -o $@

# gendocs: the reference tables of docs/usage.md and docs/metrics.md, from
# the option table and the metric families (scripts/docs.sh).
$(OUTPUT)/gendocs: user/tools/gendocs.c $(OUTPUT)/metrics.o $(OUTPUT)/options.o \
		$(OUTPUT)/config.o $(AIMD_OBJS) $(OUTPUT)/logline.o $(OUTPUT)/sample_agg.o \
		$(OUTPUT)/fair_view.o $(OUTPUT)/fair.o $(OUTPUT)/listeners.o
	$(call msg,BIN,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(INIH_LIBS) -lm -o $@

$(OUTPUT)/test_metrics: tests/test_metrics.c $(OUTPUT)/metrics.o $(OUTPUT)/options.o \
		$(OUTPUT)/config.o $(AIMD_OBJS) $(OUTPUT)/logline.o $(OUTPUT)/sample_agg.o \
		$(OUTPUT)/fair_view.o $(OUTPUT)/fair.o $(OUTPUT)/listeners.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) $(INIH_LIBS) -lm -o $@

$(OUTPUT)/test_sim: tests/test_sim.c tests/splitmix.h tests/sim_daemon.h include/*.h $(OUTPUT)/tick.o $(OUTPUT)/conc.o $(AIMD_OBJS) \
		$(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_cold_start: tests/test_cold_start.c tests/splitmix.h tests/sim_daemon.h tests/sim_table.h include/*.h $(OUTPUT)/tick.o $(OUTPUT)/conc.o \
		$(AIMD_OBJS) $(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_crowd: tests/test_crowd.c tests/splitmix.h tests/sim_daemon.h include/*.h $(OUTPUT)/tick.o $(OUTPUT)/conc.o \
		$(AIMD_OBJS) $(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_keepalive: tests/test_keepalive.c tests/splitmix.h tests/sim_daemon.h tests/sim_table.h include/*.h $(OUTPUT)/tick.o $(OUTPUT)/conc.o \
		$(AIMD_OBJS) $(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_listeners: tests/test_listeners.c tests/listener_sim.h tests/splitmix.h tests/sim_daemon.h tests/sim_table.h include/*.h $(OUTPUT)/tick.o $(OUTPUT)/conc.o \
		$(AIMD_OBJS) $(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o $(OUTPUT)/signal_parse.o \
		$(OUTPUT)/listeners.o $(OUTPUT)/logline.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_ports: tests/test_ports.c tests/listener_sim.h tests/splitmix.h tests/sim_daemon.h tests/sim_table.h include/*.h $(OUTPUT)/tick.o $(OUTPUT)/conc.o \
		$(AIMD_OBJS) $(OUTPUT)/alloc.o $(OUTPUT)/sample_agg.o $(OUTPUT)/signal_parse.o \
		$(OUTPUT)/listeners.o $(OUTPUT)/logline.o $(OUTPUT)/port_limit.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_spread: tests/test_spread.c tests/splitmix.h tests/sim_table.h include/*.h $(OUTPUT)/alloc.o \
		$(OUTPUT)/fair.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_options: tests/test_options.c $(OUTPUT)/options.o $(OUTPUT)/config.o $(OUTPUT)/fair.o \
		$(OUTPUT)/controller_params.o \
		$(AIMD_OBJS) contrib/shedd.conf.example
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -DSRCDIR='"$(CURDIR)"' $(filter %.c %.o,$^) $(LDFLAGS) $(CMOCKA_LIBS) $(INIH_LIBS) -lm -o $@

$(OUTPUT)/test_kernel_features: tests/test_kernel_features.c $(OUTPUT)/kernel_features.o $(OUTPUT)/options.o \
		$(OUTPUT)/config.o $(OUTPUT)/fair.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) $(INIH_LIBS) -lm -o $@

$(OUTPUT)/test_status: tests/test_status.c $(OUTPUT)/status.o $(OUTPUT)/options.o $(OUTPUT)/config.o $(OUTPUT)/fair.o \
		$(OUTPUT)/sample_agg.o $(OUTPUT)/logline.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDFLAGS) $(CMOCKA_LIBS) $(INIH_LIBS) -lm -o $@

$(OUTPUT)/bench_xdp: tests/bench_xdp.c tests/packets.h tests/tun_packets.h $(SKEL)
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(LDFLAGS) $(LIBBPF_LIBS) -o $@

$(OUTPUT)/test_xdp: tests/test_xdp.c tests/packets.h tests/tun_packets.h tests/xdp_harness.h \
		$(SKEL) $(OUTPUT)/settings.o $(OUTPUT)/fair.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(OUTPUT)/settings.o $(OUTPUT)/fair.o $(LDFLAGS) \
		$(LIBBPF_LIBS) $(CMOCKA_LIBS) -lpthread -lm -o $@

$(OUTPUT)/test_port_limit: tests/test_port_limit.c tests/packets.h tests/xdp_harness.h $(SKEL) \
		$(OUTPUT)/settings.o
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(OUTPUT)/settings.o $(LDFLAGS) $(LIBBPF_LIBS) \
		$(CMOCKA_LIBS) -lm -o $@

$(OUTPUT)/test_verifier: tests/test_verifier.c user/core/kernel_features.h $(SKEL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(LDFLAGS) $(LIBBPF_LIBS) $(CMOCKA_LIBS) -o $@

$(OUTPUT)/fuzz_xdp: tests/fuzz_xdp.c tests/packets.h tests/tun_packets.h tests/xdp_harness.h tests/splitmix.h $(SKEL)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests $< $(LDFLAGS) $(LIBBPF_LIBS) $(CMOCKA_LIBS) -o $@

# The latency socket's parsers under libFuzzer, ASan and UBSan; built from
# the sources, not the gcc objects, so every line is instrumented.
$(OUTPUT)/fuzz_logline: tests/fuzz_logline.c user/core/logline.c user/core/signal_parse.c $(USER_HDRS) \
		include/*.h | $(OUTPUT)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@

# The config file, the command line and the CIDR parser, the same way
# (libinih itself is the Debian library, not instrumented).
$(OUTPUT)/fuzz_config $(OUTPUT)/fuzz_options $(OUTPUT)/fuzz_cidr: $(OUTPUT)/fuzz_%: \
		tests/fuzz_%.c user/core/options.c user/core/config.c user/core/fair.c $(USER_HDRS) | $(OUTPUT)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(filter %.c,$^) $(INIH_LIBS) -lm -o $@

$(OUTPUT)/%: tests/tools/%.c tests/tools/*.h tests/splitmix.h include/*.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(LDFLAGS) -lpthread -lm -o $@

$(patsubst %,$(OUTPUT)/%,$(BPF_TOOLS)): $(OUTPUT)/%: tests/tools/%.c tests/tools/%.h \
		tests/tools/toolopts.h $(OUTPUT)/%.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(LDFLAGS) $(LIBBPF_LIBS) -o $@

deps:
	$(Q)scripts/deps.sh

# T=FILE... runs only those test files: a bats file needs shedd and the
# tools (groundtruth.bats the fuzzer too, for its reference model, and
# bench.bats the benchmark); a test
# source tests/X.c (or its binary) needs only its binary.
test_bin = $(if $(filter %.bats,$(1)),all $(if $(filter %groundtruth.bats,$(1)),$(OUTPUT)/fuzz_xdp) $(if $(filter %bench.bats %fastpath.bats,$(1)),$(OUTPUT)/bench_xdp),$(if $(filter %docs_check.sh,$(1)),$(OUTPUT)/gendocs,$(patsubst tests/%.c,$(OUTPUT)/%,$(1))))
test_run = $(patsubst tests/%.c,$(OUTPUT)/%,$(1))

# The builds that test, demo, san and the others make first use every CPU
# (JOBS, default nproc), unless make was given -j itself.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
SUBMAKE = $(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

# test, demo and san leave the host as they found it: scripts/hoststate.sh
# records it before the dependencies are installed and checks it after the
# run (services enabled or running, namespaces, pins, XDP, processes).
HOSTSTATE = $(OUTPUT)/hoststate.before
host_save = mkdir -p $(OUTPUT) && scripts/hoststate.sh save $(HOSTSTATE) && scripts/deps.sh
host_check = || rc=$$?; scripts/hoststate.sh check $(HOSTSTATE) || rc=1; exit $$rc

# The integration files whose daemon runs sanitized: `make test` runs them
# once, with shedd and shedctl of the sanitizer build (tests/exec.sh), and
# `make san` runs them again unless SAN_BATS_RUN=no. `make test` runs the
# unit and XDP tests once too, sanitized (SAN_TESTS); their plain build
# runs in `make test-fresh` and in each guest of `make test-kernels`.
SAN_BATS := tests/integration/lifecycle.bats tests/integration/logfeed.bats \
	tests/integration/check_config.bats tests/integration/verify.bats \
	tests/integration/reload.bats tests/integration/service.bats \
	tests/integration/shedctl.bats tests/integration/metrics.bats \
	tests/integration/upgrade.bats

SAN_TESTS = $(subst .output,.output-san,$(UNIT_TESTS) $(XDP_TESTS))

test:
	$(Q)$(host_save)
ifeq ($(strip $(T)),)
	$(Q)$(SUBMAKE) all $(FUZZ_TESTS) $(OUTPUT)/fuzz_xdp $(OUTPUT)/bench_xdp $(OUTPUT)/gendocs
	$(Q)$(SUBMAKE) SAN=1 all $(SAN_TESTS)
	$(Q)rc=0; SHEDD_SAN_BATS="$(SAN_BATS)" SHEDD_SAN_DIR=$(CURDIR)/.output-san \
		tests/run.sh $(SAN_TESTS) $(FUZZ_TESTS) tests/docs_check.sh tests/include_check.py \
		tests/integration/*.bats \
		$(host_check)
else
	$(Q)$(SUBMAKE) $(sort $(foreach t,$(T),$(call test_bin,$(t))))
	$(Q)rc=0; tests/run.sh $(call test_run,$(T)) $(host_check)
endif

# The kernel matrix: each kernel package (scripts/kernels.sh fetches them
# from the Debian archive into a cache, never into /boot) boots under qemu
# on this tree's binaries and runs tests/kernels/guest.sh: the selection
# that fits CI (tests/kernels/selection), or with SELECTION=wide a test of
# every integration file (tests/kernels/selection-wide; half an hour or
# more a kernel under emulation).
KERNELS ?= 6.1 6.12
test-kernels: deps
	$(Q)scripts/deps.sh --kernels $(KERNELS)
	$(Q)$(SUBMAKE) all $(XDP_TESTS) $(OUTPUT)/bench_xdp
	$(Q)$(if $(filter wide,$(SELECTION)),SHEDD_GUEST_ENV=SHEDD_BATS_SELECT=tests/kernels/selection-wide \
		GUEST_TIMEOUT=$${GUEST_TIMEOUT:-3600}) tests/kernels/matrix.sh $(KERNELS)

# The README's two commands in a fresh Debian 12 root (scripts/fresh.sh):
# mmdebstrap's minbase, chroot, make and git installed, HEAD cloned, make
# demo and a short make test (every test binary, FRESH_BATS).
test-fresh:
	$(Q)scripts/deps.sh mmdebstrap
	$(Q)scripts/fresh.sh

test-unit: $(UNIT_TESTS)
	$(Q)prove --exec tests/exec.sh $(UNIT_TESTS)

demo:
	$(Q)$(host_save)
	$(Q)$(SUBMAKE) all
	$(Q)rc=0; scripts/demo.sh $(host_check)

# EXPERIMENT= names the experiments to run, in order (scripts/experiments.sh
# lists them); soak is not in the default set.
EXPERIMENT ?= goodput classes recovery knee fairness flood proxy keepalive scale
experiments: deps
	$(Q)$(SUBMAKE) all
	$(Q)for e in $(EXPERIMENT); do scripts/experiments.sh $$e || exit 1; done

# docs: write the generated tables into docs/usage.md and docs/metrics.md;
# docs-check: fail when the committed ones differ (make test runs it too).
docs docs-check: $(OUTPUT)/gendocs
	$(Q)scripts/docs.sh $(if $(filter docs-check,$@),check,write) $(OUTPUT)/gendocs

bench: deps
	$(Q)$(SUBMAKE) all $(OUTPUT)/bench_xdp
	$(Q)scripts/bench.sh

# The long fuzz run; `make test` runs the same binary on a short run.
FUZZ_FRAMES ?= 5000000
FUZZ_SEED ?= $(shell date +%s)
# fuzz-logline, fuzz-config, fuzz-options, fuzz-cidr: one parser's
# libFuzzer target for FUZZ_SECS (default 600).
FUZZ_SECS ?= 600
fuzz-logline fuzz-config fuzz-options fuzz-cidr: fuzz-%: $(OUTPUT)/fuzz_%
	$(Q)tests/fuzz.sh $(OUTPUT)/fuzz_$* $(FUZZ_SECS)

fuzz: $(OUTPUT)/fuzz_xdp fuzz-logline
	$(Q)SHEDD_FUZZ_FRAMES=$(FUZZ_FRAMES) SHEDD_FUZZ_SEED=$(FUZZ_SEED) \
		SHEDD_FUZZ_SECONDS=3600 $(OUTPUT)/fuzz_xdp

# The fuzz targets are built with ASan and UBSan in every build: make test
# runs them, san does not run them twice.
# The sanitized daemon also runs the lifecycle integration tests (load,
# adopt, remove; the tc hand-off's too; under a service manager, with fewer
# capabilities; the metrics endpoint's; an upgrade), and the sanitized
# shedctl its own, where a leak or an overflow fails the test.
san:
	$(Q)$(host_save)
	$(Q)$(SUBMAKE) all
	$(Q)$(SUBMAKE) SAN=1 all $(SAN_TESTS)
	$(Q)rc=0; SHEDD=$(CURDIR)/.output-san/shedd SHEDCTL=$(CURDIR)/.output-san/shedctl \
		SHEDD_BATS_SELECT=tests/san-selection prove -v --exec tests/exec.sh \
		$(SAN_TESTS) \
		$(if $(filter no,$(SAN_BATS_RUN)),,$(SAN_BATS)) $(host_check)

# install: PREFIX (default /usr/local) is where the files will live,
# DESTDIR a staging root to put them under (packaging, tests); the
# Grafana dashboard is installed when the tree has it.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share/shedd
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
INSTALL ?= install
install: $(BIN) $(CTL_BIN)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	$(Q)$(INSTALL) -m 0755 shedd $(DESTDIR)$(SBINDIR)/shedd
	$(Q)$(INSTALL) -m 0755 shedctl $(DESTDIR)$(SBINDIR)/shedctl
	$(Q)$(INSTALL) -m 0644 man/*.8 $(DESTDIR)$(MANDIR)/man8/
	$(Q)$(INSTALL) -m 0644 include/shedd_latency.h $(DESTDIR)$(INCLUDEDIR)/shedd_latency.h
	$(Q)sed 's|@SBINDIR@|$(SBINDIR)|g' contrib/systemd/shedd@.service \
		>$(DESTDIR)$(UNITDIR)/shedd@.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/shedd@.service
	$(Q)$(INSTALL) -m 0644 contrib/systemd/shedd.sysusers $(DESTDIR)$(SYSUSERSDIR)/shedd.conf
	$(Q)if ls contrib/grafana/*.json >/dev/null 2>&1; then \
		$(INSTALL) -d -m 0755 $(DESTDIR)$(DATADIR)/grafana && \
		$(INSTALL) -m 0644 contrib/grafana/*.json $(DESTDIR)$(DATADIR)/grafana/; fi

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf .output .output-san $(BIN) $(CTL_BIN)
