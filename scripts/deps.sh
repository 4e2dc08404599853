#!/bin/sh
# deps.sh - install the Debian packages that shedd's build, tests and demo
# need. Idempotent: does nothing when every package is present. With
# arguments (package names or .deb files) it installs those instead, the
# same way. The host is left as it was: no service the installation enables
# or starts stays enabled or running (see below).
set -eu

# package: why
#   clang llvm       compile the XDP program to BPF (clang -target bpf)
#   libclang-rt-dev  clang's runtime: libFuzzer, ASan and UBSan for the
#                    fuzz targets (a Recommends, which this script skips)
#   bpftool          vmlinux.h, the libbpf skeleton, and inspecting pinned maps
#   libbpf-dev       load, attach and pin the program (userspace BPF library)
#   libelf-dev zlib1g-dev  libbpf's own link dependencies
#   gcc make pkg-config    build the daemon and tests
#   libcmocka-dev    the C unit-test framework
#   libinih-dev      parse the config file (--config FILE, INI)
#   bats             the shell integration-test framework
#   iproute2         network namespaces and veth pairs for the testbed
#   perl             prove, which runs every test and prints the summary
#                    (and bench_daemon.sh stamps shedd's log lines with it)
#   jq ethtool       read bpftool's JSON; turn on GRO on the testbed veth
#   nftables         the flood experiment's SYN limit rule, shedd's rival
#   iptables         the flood benchmark's other rival: a per-source hashlimit
#                    rule on SYNs (iptables, ip6tables)
#   procps util-linux  ps and taskset: pin the flood testbed's NAPI threads
#   libsystemd-dev   sd_notify: readiness, status and watchdog under systemd
#   libcap-ng-dev libcap-ng-utils  drop capabilities after attach; getpcaps
#   systemd          systemd-analyze verify of the unit (service.bats)
#   python3          service.bats' sd_notify listener
#   strace           service.bats: the system calls that enter namespaces
#   man-db           tests/mancheck.sh renders man pages (shedd.8, shedctl.8)
#                    with man --warnings
#   libncurses-dev   shedctl top's screen (ncursesw)
#   tmux             shedctl.bats reads shedctl top's screen from a tmux pane
#   libmicrohttpd-dev  the HTTP server of shedd's Prometheus metrics endpoint
#   libnftables-dev libjansson-dev  read the namespace's nftables ruleset
#                    (as `nft -j list ruleset`) at start and on a reload, to
#                    name the protected ports a NAT redirect, DNAT or TPROXY
#                    takes after XDP (verified admission cannot see where
#                    those SYNs go); jansson parses its JSON
#   prometheus curl  metrics.bats: promtool on a live scrape, a real
#                    Prometheus (in a test namespace only) that scrapes shedd
#   qemu-system-x86 busybox-static cpio kmod xz-utils
#                    the kernel matrix (make test-kernels): Debian's kernel
#                    packages booted under qemu on this machine's user space;
#                    busybox is the guest's init, kmod finds its modules
#   nginx haproxy    the reverse proxies whose request logs feed shedd's
#                    latency signal (tests and the proxy experiment run them
#                    inside test namespaces only; see below)
#   httperf          a standard open-loop HTTP client (Poisson arrivals, a
#                    timeout), beside the project's loadgen, in proxy.bats
#                    and the proxy experiment: a client nobody here wrote
#   gnuplot-nox      the experiments' plots (PNG through pngcairo, no X)
#   nghttp2-client   h2load: keep-alive clients (HTTP/1.1 with --h1, or
#                    HTTP/2) that keep their connection and send a set rate
#                    of requests each, in the keepalive experiment
PKGS="clang llvm libclang-rt-dev bpftool libbpf-dev libelf-dev zlib1g-dev gcc make pkg-config \
libcmocka-dev libinih-dev bats iproute2 perl jq ethtool nftables iptables procps util-linux \
libsystemd-dev libcap-ng-dev libcap-ng-utils systemd python3 strace man-db libncurses-dev tmux \
libmicrohttpd-dev libnftables-dev libjansson-dev prometheus curl nginx haproxy httperf gnuplot-nox nghttp2-client qemu-system-x86 busybox-static cpio kmod xz-utils"

# --kernels [NAME...]: also fetch the kernel matrix's kernel packages
# (scripts/kernels.sh fetch: unpacked into a cache, never installed).
# Other arguments: install these packages instead of shedd's (deps.bats).
kernels=""
if [ "${1:-}" = --kernels ]; then
	shift
	kernels="${*:-all}"
	set --
fi
[ "$#" -gt 0 ] && PKGS="$*"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
fetch_kernels() {
	[ -n "$kernels" ] || return 0
	if [ "$kernels" = all ]; then
		"$(dirname "$0")/kernels.sh" fetch
	else
		# shellcheck disable=SC2086
		"$(dirname "$0")/kernels.sh" fetch $kernels
	fi
}
if [ -z "$missing" ]; then
	fetch_kernels
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive

# nginx's, haproxy's and prometheus' packages enable their service (it
# would start at the next boot, Prometheus on port 9090 of every
# interface) and start it when they are installed. shedd only ever runs
# them inside its test namespaces, with configurations of its own. So:
# - installation is told not to start anything: policy-rc.d exiting 101 is
#   Debian's way to say so (unless the machine has a policy of its own);
# - of the units the newly installed packages ship, those enabled or
#   running after the installation that were not before are disabled or
#   stopped. A unit the operator had enabled (or running) before stays so.
#   A later upgrade keeps the unit disabled: a package's postinst
#   re-enables only a unit whose links are there (deb-systemd-helper
#   was-enabled).
# Without systemd as PID 1 (a container, a chroot) nothing runs, and
# systemctl enables and disables offline, on the unit files.
booted() { [ -d /run/systemd/system ]; }
installed() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
# Enabled: by systemctl, or with the links of an enabled unit whose package
# was removed but not purged (its postinst enables it again).
enabled_units() {
	{
		systemctl list-unit-files --state=enabled --no-legend --no-pager 2>/dev/null |
			awk '{ print $1 }'
		find /etc/systemd/system -mindepth 2 -maxdepth 2 -type l \
			\( -path '*.wants/*' -o -path '*.requires/*' \) -printf '%f\n' 2>/dev/null
	} | sort -u
}
active_units() {
	booted || return 0
	systemctl list-units --state=active --no-legend --no-pager --plain 2>/dev/null |
		awk '{ print $1 }' | sort
}
state=$(mktemp -d)
policy=/usr/sbin/policy-rc.d
made_policy=""
cleanup() {
	[ -z "$made_policy" ] || rm -f "$policy"
	rm -rf "$state"
}
trap cleanup EXIT
installed >"$state/packages"
enabled_units >"$state/enabled"
active_units >"$state/active"
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	made_policy=1
fi

# Package files alone (deps.bats) need no fresh package lists.
case " $missing" in
*" "[!./]*) apt-get update -qq ;;
esac
# Other installs on the machine hold the dpkg lock for a while: wait.
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 $missing

# The units of the packages this installation added, and of those the
# ones it enabled or started.
for p in $(installed | comm -13 "$state/packages" -); do
	dpkg-query -L "$p" | grep -E '/systemd/system/[^/]+\.(service|socket|timer|path)$' |
		sed 's|.*/||' || true
done | sort -u >"$state/units"
enabled_units | comm -13 "$state/enabled" - | comm -12 "$state/units" - >"$state/enabled.new"
active_units | comm -13 "$state/active" - | comm -12 "$state/units" - >"$state/active.new"
while read -r u; do
	echo "deps.sh: $u: disabled (the installation enabled it; shedd's tests run it in namespaces of their own)"
	systemctl disable --quiet "$u"
done <"$state/enabled.new"
while read -r u; do
	echo "deps.sh: $u: stopped (the installation started it)"
	systemctl stop "$u"
done <"$state/active.new"
fetch_kernels
