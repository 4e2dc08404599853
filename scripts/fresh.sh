#!/bin/bash
# fresh.sh - the README's two commands on a fresh Debian 12, as a new user
# would run them: a minimal Debian 12 root (mmdebstrap --variant=minbase
# bookworm, from the Debian archive), entered with chroot on this kernel
# (/proc, /sys and /dev of the host), where only what the README says
# comes first is installed (make and git); then a clone of this tree's
# HEAD runs `make demo` and a short `make test T=...` that builds every
# test binary (fuzzers included) and runs the unit tests, the fuzzers'
# short runs, the XDP tests and FRESH_BATS. A package the suite needs that
# only a hand-installed machine has makes it fail here.
#
#   fresh.sh [STEP...]   STEP: demo, test (default: both)
#
# FRESH_CACHE (default /var/cache/shedd/fresh) keeps the minbase root as a
# tarball (made once a month, then unpacked anew for every run) and the downloaded
# package files (so a second run fetches nothing; it installs everything
# again). FRESH_BATS (default service.bats and deps.bats) names the
# integration tests to run. What is tested is HEAD: commit first.
# The root and its mounts are removed at the end, also on failure; the
# mounts live in a mount namespace of the run's own.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FRESH_CACHE=${FRESH_CACHE:-/var/cache/shedd/fresh}
FRESH_BATS=${FRESH_BATS:-tests/integration/service.bats tests/integration/deps.bats}
SUITE=bookworm
steps=${*:-demo test}

die() {
	echo "fresh.sh: $*" >&2
	exit 1
}
for s in $steps; do
	case $s in demo | test) ;; *) die "unknown step '$s' (demo, test)" ;; esac
done
[ "$(id -u)" -eq 0 ] || die "run as root: it builds and enters a Debian root"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (scripts/deps.sh mmdebstrap)"
git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null || die "$ROOT is not a git checkout"
# Everything below runs in a mount namespace of its own: the root's mounts
# (a BPF file system among them, which iproute2 would take for the host's
# in a test of another run under ip netns exec) are never seen outside it,
# and go with it.
if [ -z "${FRESH_MOUNT_NS:-}" ]; then
	FRESH_MOUNT_NS=1 exec unshare --mount --propagation slave "$0" "$@"
fi

# The host's Debian sources (this machine may reach the archive through a
# mirror of its own); deb.debian.org where it has none.
sources() {
	local f
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
		[ -s "$f" ] && grep -q "$SUITE" "$f" && { echo "$f"; return; }
	done
	echo "http://deb.debian.org/debian"
}

mkdir -p "$FRESH_CACHE/archives/partial"
base=$FRESH_CACHE/$SUITE-minbase.tar
# A root a month old is made again: a fresh machine is installed from
# today's archive.
if [ ! -s "$base" ] || [ -n "$(find "$base" -mtime +30)" ]; then
	echo "fresh.sh: building a minimal Debian 12 root (mmdebstrap --variant=minbase $SUITE)"
	# The name's ending tells mmdebstrap to write a tarball.
	mmdebstrap --quiet --variant=minbase "$SUITE" "$FRESH_CACHE/new.tar" "$(sources)" </dev/null
	mv "$FRESH_CACHE/new.tar" "$base"
fi

dir=$(mktemp -d /var/tmp/shedd-fresh.XXXXXX)
cleanup() {
	local rc=$?
	# Whatever the run left mounted inside the root (namespaces' files,
	# bpffs) goes with it.
	if [ -d "$dir/root" ]; then
		findmnt -rn -o TARGET | grep -F "$dir/root" | sort -r |
			while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
	fi
	rm -rf --one-file-system "$dir"
	rmdir "$dir/root" "$dir" 2>/dev/null || true
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$dir/root"
tar -C "$dir/root" -xf "$base"
r=$dir/root
# The root is a mount point of its own, as a booted system's is: ip netns
# exec remounts / (--make-rslave), which a plain folder refuses.
mount --bind "$r" "$r"
mount -t proc proc "$r/proc"
mount --rbind /sys "$r/sys"
mount --make-rslave "$r/sys"
# A BPF file system of its own, as a machine of its own has: the pins of
# the host's runs are not the fresh root's (and its are not the host's).
mount -t bpf bpf "$r/sys/fs/bpf"
mount --rbind /dev "$r/dev"
mount --make-rslave "$r/dev"
mount -t tmpfs tmpfs "$r/run"
mount -t tmpfs tmpfs "$r/tmp"
mkdir -p "$r/var/cache/apt/archives"
mount --bind "$FRESH_CACHE/archives" "$r/var/cache/apt/archives"
# HEAD with its history (upgrade.bats builds releases from it), as a
# bundle: a checkout may be a worktree whose git folder is elsewhere.
git -C "$ROOT" bundle create -q "$r/tmp/shedd.bundle" HEAD
cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true

# in_root CMD: CMD (a shell line) as root in the fresh root, with a login's
# environment and nothing of this one's but the terminal type.
in_root() {
	chroot "$r" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "$1" </dev/null
}

start=$(date +%s)
echo "fresh.sh: in a fresh Debian $(cat "$r/etc/debian_version") root: apt-get install make git, as the README says"
in_root 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make git >/dev/null'
in_root "git clone -q /tmp/shedd.bundle /root/shedd && rm /tmp/shedd.bundle"
echo "fresh.sh: cloned $(git -C "$ROOT" rev-parse --short HEAD) into /root/shedd"
rc=0
for s in $steps; do
	case $s in
	demo)
		echo "fresh.sh: make demo"
		in_root 'cd /root/shedd && make demo' || { rc=$?; echo "fresh.sh: make demo FAILED (exit $rc)"; }
		;;
	test)
		# Every test binary: the unit tests, the XDP tests, the fuzzers.
		tests=$(cd "$ROOT" && ls tests/test_*.c tests/fuzz_*.c | tr '\n' ' ')
		echo "fresh.sh: make test T=\"(every test binary) $FRESH_BATS\""
		in_root "cd /root/shedd && make test T='$tests $FRESH_BATS'" ||
			{ rc=$?; echo "fresh.sh: make test FAILED (exit $rc)"; }
		;;
	esac
done
echo "fresh.sh: $([ "$rc" -eq 0 ] && echo passed || echo FAILED) in $(($(date +%s) - start))s: $steps"
exit "$rc"
