#!/bin/sh
# deps.sh - install the Debian packages that shedd's build, tests and demo
# need. Idempotent: does nothing when every package is present.
set -eu

# package: why
#   clang llvm       compile the XDP program to BPF (clang -target bpf)
#   bpftool          vmlinux.h, the libbpf skeleton, and inspecting pinned maps
#   libbpf-dev       load, attach and pin the program (userspace BPF library)
#   libelf-dev zlib1g-dev  libbpf's own link dependencies
#   gcc make pkg-config    build the daemon and tests
#   libcmocka-dev    the C unit-test framework
#   libinih-dev      parse the config file (--config FILE, INI)
#   bats             the shell integration-test framework
#   iproute2         network namespaces and veth pairs for the testbed
#   perl             prove, which runs every test and prints the summary
#   jq ethtool       read bpftool's JSON; turn on GRO on the testbed veth
#   nftables         the flood experiment's SYN limit rule, shedd's rival
#   procps util-linux  ps and taskset: pin the flood testbed's NAPI threads
#   libsystemd-dev   sd_notify: readiness, status and watchdog under systemd
#   libcap-ng-dev libcap-ng-utils  drop capabilities after attach; getpcaps
#   systemd          systemd-analyze verify of the unit (service.bats)
#   python3          service.bats' sd_notify listener
#   man-db           tests/mancheck.sh renders man pages (shedd.8, shedctl.8)
#                    with man --warnings
#   libncurses-dev   shedctl top's screen (ncursesw)
#   tmux             shedctl.bats reads shedctl top's screen from a tmux pane
#   libmicrohttpd-dev  the HTTP server of shedd's Prometheus metrics endpoint
#   prometheus curl  metrics.bats: promtool on a live scrape, a real
#                    Prometheus (in a test namespace only) that scrapes shedd
#   qemu-system-x86 busybox-static cpio kmod xz-utils
#                    the kernel matrix (make test-kernels): Debian's kernel
#                    packages booted under qemu on this machine's user space;
#                    busybox is the guest's init, kmod finds its modules
#   nginx haproxy    the reverse proxies whose request logs feed shedd's
#                    latency signal (tests and the proxy experiment run them
#                    inside test namespaces only; see below)
PKGS="clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev gcc make pkg-config \
libcmocka-dev libinih-dev bats iproute2 perl jq ethtool nftables procps util-linux \
libsystemd-dev libcap-ng-dev libcap-ng-utils systemd python3 man-db libncurses-dev tmux \
libmicrohttpd-dev prometheus curl nginx haproxy qemu-system-x86 busybox-static cpio kmod xz-utils"

# --kernels [NAME...]: also fetch the kernel matrix's kernel packages
# (scripts/kernels.sh fetch: unpacked into a cache, never installed).
kernels=""
if [ "${1:-}" = --kernels ]; then
	shift
	kernels="${*:-all}"
fi

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
apt-get update -qq
# nginx's, haproxy's and prometheus' packages start a service on the host
# when they are installed. shedd only ever runs them inside its test
# namespaces, so installation is told not to start anything (policy-rc.d
# exiting 101 is Debian's way to say so), unless the machine has a policy of
# its own.
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	made_policy=1
	trap 'rm -f "$policy"' EXIT
fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
if [ -n "$made_policy" ]; then
	rm -f "$policy"
	trap - EXIT
fi
fetch_kernels
