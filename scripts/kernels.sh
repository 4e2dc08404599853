#!/bin/bash
# kernels.sh - boot Debian's own kernel packages under qemu and run a command
# of this tree inside, on this machine's user space (shared read-only over
# virtio 9p, with a tmpfs overlay for writes). The packages are downloaded
# from the Debian archive and unpacked into a cache; the host's /boot, its
# boot loader and its package database are never touched. The guest has no
# network device: its only links are the ones a test makes in it.
#
#   kernels.sh fetch [NAME...]     download and unpack the kernels
#   kernels.sh list                the names of the matrix (6.1 6.12)
#   kernels.sh run NAME CMD...     boot NAME, run CMD in this folder, exit with
#                                  its status (124 when the guest timed out)
#
# NAME is 6.1 (Debian 12's default kernel, linux-image-amd64) or 6.12 (its
# newest linux-image-6.12.*+deb12-amd64). KERNEL_CACHE (default
# /var/cache/shedd/kernels) holds the packages; GUEST_TIMEOUT (seconds,
# default 900) bounds a boot; GUEST_MEM (default 2048 MiB) and GUEST_CPUS
# (default 2) size the guest.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KERNEL_CACHE=${KERNEL_CACHE:-/var/cache/shedd/kernels}
GUEST_TIMEOUT=${GUEST_TIMEOUT:-900}
GUEST_MEM=${GUEST_MEM:-2048}
GUEST_CPUS=${GUEST_CPUS:-2}
MATRIX="6.1 6.12"
# What the guest needs to reach its root over 9p, in load order once
# modules.dep has named their dependencies.
BOOT_MODULES="virtio_pci 9pnet_virtio 9p overlay"

die() {
	echo "kernels.sh: $*" >&2
	exit 1
}

# package_of NAME: the Debian package of kernel NAME (the unsigned image: the
# same kernel and modules as the signed one, without the signature wrapper).
package_of() {
	local pkg
	case "$1" in
	6.1)
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-6\.1\.[^ ]*-amd64\)$/\1/p' | head -n 1)
		;;
	6.12)
		pkg=$(apt-cache pkgnames linux-image-6.12. 2>/dev/null |
			grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' | sort -V | tail -n 1)
		;;
	*) die "unknown kernel '$1' (known: $MATRIX)" ;;
	esac
	[ -n "$pkg" ] || return 1
	echo "$pkg-unsigned"
}

# kdir NAME: the unpacked kernel's folder (holds boot/ and lib/modules/).
kdir() { echo "$KERNEL_CACHE/$1"; }

# kver NAME: the kernel release (uname -r) of the unpacked kernel NAME.
kver() {
	local d
	d=$(ls -d "$(kdir "$1")"/lib/modules/*/ 2>/dev/null | head -n 1)
	[ -n "$d" ] || die "kernel $1 is not fetched (scripts/kernels.sh fetch $1)"
	basename "$d"
}

fetch_one() {
	local name=$1 pkg dir tmp deb
	# A machine whose package lists were never fetched knows no kernel.
	pkg=$(package_of "$name") || { apt-get update -qq && pkg=$(package_of "$name"); } ||
		die "no package for kernel $name in the Debian archive's lists"
	dir=$(kdir "$name")
	if [ -f "$dir/.package" ] && [ "$(cat "$dir/.package")" = "$pkg" ]; then
		return 0
	fi
	echo "kernels.sh: fetching $pkg for $name"
	mkdir -p "$KERNEL_CACHE"
	tmp=$(mktemp -d "$KERNEL_CACHE/.fetch.XXXXXX")
	# apt-get download writes into the current folder; _apt cannot write
	# into a root-only one, which only costs a warning.
	(cd "$tmp" && apt-get download -q "$pkg" 2>&1 | grep -v 'unsandboxed' >&2) ||
		{ rm -rf "$tmp"; die "apt-get download $pkg failed"; }
	deb=$(ls "$tmp"/*.deb)
	mkdir "$tmp/x"
	dpkg-deb -x "$deb" "$tmp/x" || { rm -rf "$tmp"; die "unpack $deb failed"; }
	rm -f "$deb"
	local ver
	ver=$(basename "$(ls -d "$tmp"/x/lib/modules/*/ | head -n 1)")
	depmod -b "$tmp/x" "$ver" || { rm -rf "$tmp"; die "depmod for $ver failed"; }
	echo "$pkg" >"$tmp/x/.package"
	rm -rf "$dir"
	mv "$tmp/x" "$dir"
	rm -rf "$tmp"
}

# initrd NAME: build (once) the guest's initramfs: busybox, the init script
# and the boot modules (decompressed: busybox insmod reads plain .ko). It is
# named by the checksum of the init and the module list, so checkouts with
# different inits that share the cache never boot each other's.
initrd() {
	local name=$1 ver dir out stage m dep mods="" sum
	ver=$(kver "$name")
	dir=$(kdir "$name")
	sum=$({ cat "$ROOT/tests/kernels/init"; echo "$BOOT_MODULES"; } | sha1sum | cut -c1-12)
	out="$dir/initrd-$sum.img"
	if [ -f "$out" ]; then
		echo "$out"
		return 0
	fi
	[ -x /bin/busybox ] || die "busybox is missing (scripts/deps.sh installs busybox-static)"
	stage=$(mktemp -d)
	mkdir -p "$stage/bin" "$stage/mod" "$stage/proc" "$stage/sys" "$stage/dev"
	cp /bin/busybox "$stage/bin/busybox"
	cp "$ROOT/tests/kernels/init" "$stage/init"
	: >"$stage/modules.order"
	for m in $BOOT_MODULES; do
		dep=$(modprobe -d "$dir" -S "$ver" --show-depends "$m" 2>/dev/null |
			sed -n 's/^insmod \([^ ]*\).*/\1/p') || true
		[ -n "$dep" ] || continue # built in
		for f in $dep; do
			local base=${f##*/}
			base=${base%.xz}
			base=${base%.zst}
			case " $mods " in *" $base "*) continue ;; esac
			mods="$mods $base"
			case "$f" in
			*.xz) xz -dc "$f" >"$stage/mod/$base" ;;
			*.zst) zstd -dqc "$f" >"$stage/mod/$base" ;;
			*) cp "$f" "$stage/mod/$base" ;;
			esac
			echo "$base" >>"$stage/modules.order"
		done
	done
	local tmp
	tmp=$(mktemp "$dir/.initrd.XXXXXX")
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp"
	chmod 644 "$tmp"
	mv "$tmp" "$out"
	rm -rf "$stage"
	echo "$out"
}

# run NAME CMD...: boot kernel NAME, run CMD (a shell command line) in this
# folder as root, print the guest's console, exit with CMD's status.
run_in() {
	local name=$1 ver dir img out rc
	shift
	ver=$(kver "$name")
	dir=$(kdir "$name")
	img=$(initrd "$name")
	out=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$out'" EXIT
	printf '%s\n' "$*" >"$out/cmd"
	# The init keeps this folder visible when it is under /tmp or /run.
	printf '%s\n' "$ROOT" >"$out/dir"
	{
		printf 'export SHEDD_GUEST_DIR=%q\n' "$ROOT"
		printf 'export SHEDD_GUEST_KERNEL=%q\n' "$name"
		printf 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n'
		printf 'export HOME=/root TERM=dumb LANG=C.UTF-8\n'
		[ -z "${SHEDD_GUEST_ENV:-}" ] || printf 'export %s\n' $SHEDD_GUEST_ENV
	} >"$out/env"
	# Under software emulation 6.12 now and then dies patching its own
	# text (an int3 oops in text_poke_bp() across two vCPUs), at boot or
	# when a program attaches. A guest whose kernel died gave no result:
	# that is the emulator's, so the guest boots again, three times at
	# most, and each death is said with where it happened. A test that
	# fails writes its result and is never run again. (With both vCPUs on
	# one host thread the oops went away, but the timing tests drifted.)
	local attempt
	for attempt in 1 2 3; do
		rm -f "$out/rc" "$out/booted"
		rc=0
		timeout --foreground -k 10 "$GUEST_TIMEOUT" qemu-system-x86_64 \
			-machine q35 -cpu max -smp "$GUEST_CPUS" -m "$GUEST_MEM" \
			-fw_cfg name=etc/sercon-port,string=0 \
			-nographic -no-reboot -nic none -monitor none -serial stdio \
			-kernel "$dir/boot/vmlinuz-$ver" -initrd "$img" \
			-append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" \
			-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
			-virtfs "local,path=$dir/lib/modules/$ver,mount_tag=mods,security_model=none,readonly=on" \
			-virtfs "local,path=$out,mount_tag=out,security_model=none" \
			</dev/null 2> >(grep -v 'fw_cfg item names should be prefixed' >&2) || rc=$?
		if [ "$rc" -eq 124 ]; then
			echo "kernels.sh: kernel $name ($ver): no result within ${GUEST_TIMEOUT}s" >&2
			return 124
		fi
		[ -f "$out/rc" ] && break
		if [ -f "$out/booted" ]; then
			echo "kernels.sh: kernel $name ($ver): the guest died after init, no result (boot $attempt of 3)" >&2
		else
			echo "kernels.sh: kernel $name ($ver): the guest died before init (boot $attempt of 3)" >&2
		fi
	done
	[ -f "$out/rc" ] || return 125
	return "$(cat "$out/rc")"
}

case "${1:-}" in
fetch)
	shift
	[ "$#" -gt 0 ] || set -- $MATRIX
	for n in "$@"; do fetch_one "$n"; done
	;;
list) echo "$MATRIX" ;;
run)
	[ "$#" -ge 3 ] || die "usage: kernels.sh run NAME CMD..."
	name=$2
	shift 2
	run_in "$name" "$@"
	;;
*)
	sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//'
	[ "${1:-}" = -h ] || [ "${1:-}" = --help ] || exit 2
	;;
esac
