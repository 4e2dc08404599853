#!/usr/bin/env bats
# deps.bats - scripts/deps.sh leaves the host's services as it found them:
# a package it installs that enables and starts its service the Debian way
# (dh_installsystemd's maintainer scripts) ends with the service disabled
# and stopped; a service the operator had enabled stays enabled; and
# scripts/hoststate.sh, which make test, demo and san end with, takes a
# package installed during the run and left disabled and stopped for the
# host as it was. The package is made by the test (a unit that runs a
# process until it is stopped, so "stopped" is a state it can fail), its
# name unique to the run, and purged after.

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	PKG=shedd-deps-test-$$
	UNIT=$PKG.service
}

teardown() {
	dpkg --purge "$PKG" >/dev/null 2>&1 || true
	rm -f "/etc/systemd/system/multi-user.target.wants/$UNIT"
}

# make_deb VERSION: a package that ships $UNIT and enables it, as
# dh_installsystemd's postinst does: on a first install, and on an upgrade
# only if its links are there. Its path in $DEB.
make_deb() {
	local d=$BATS_TEST_TMPDIR/pkg-$1
	mkdir -p "$d/DEBIAN" "$d/lib/systemd/system"
	cat >"$d/lib/systemd/system/$UNIT" <<-EOF
		[Unit]
		Description=deps.bats test service
		[Service]
		ExecStart=/bin/sleep 600
		[Install]
		WantedBy=multi-user.target
	EOF
	cat >"$d/DEBIAN/control" <<-EOF
		Package: $PKG
		Version: $1
		Architecture: all
		Maintainer: shedd tests <root@localhost>
		Description: a service for deps.bats
	EOF
	cat >"$d/DEBIAN/postinst" <<-EOF
		#!/bin/sh
		set -e
		if [ "\$1" = configure ]; then
		    deb-systemd-helper unmask '$UNIT' >/dev/null || true
		    if deb-systemd-helper --quiet was-enabled '$UNIT'; then
		        deb-systemd-helper enable '$UNIT' >/dev/null || true
		    else
		        deb-systemd-helper update-state '$UNIT' >/dev/null || true
		    fi
		    if [ -d /run/systemd/system ]; then
		        systemctl --system daemon-reload >/dev/null || true
		        deb-systemd-invoke start '$UNIT' >/dev/null || true
		    fi
		fi
	EOF
	cat >"$d/DEBIAN/postrm" <<-EOF
		#!/bin/sh
		set -e
		if [ "\$1" = purge ]; then
		    deb-systemd-helper purge '$UNIT' >/dev/null || true
		    deb-systemd-helper unmask '$UNIT' >/dev/null || true
		fi
	EOF
	chmod 755 "$d/DEBIAN/postinst" "$d/DEBIAN/postrm"
	DEB=$BATS_TEST_TMPDIR/${PKG}_$1_all.deb
	dpkg-deb --build --root-owner-group "$d" "$DEB" >/dev/null
}

@test "the test package enables its service when installed by dpkg alone" {
	# The control: what deps.sh must undo.
	make_deb 1
	run dpkg -i "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	run systemctl is-enabled "$UNIT"
	[ "$output" = enabled ]
	if [ -d /run/systemd/system ]; then
		run systemctl is-active "$UNIT"
		[ "$output" = active ]
		systemctl stop "$UNIT"
	fi
}

@test "deps.sh: a service its installation enabled ends disabled and stopped, and stays so on an upgrade" {
	make_deb 1
	run "$ROOT/scripts/deps.sh" "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$UNIT: disabled"* ]]
	run dpkg-query -W -f='${Status}' "$PKG"
	[ "$output" = "install ok installed" ]
	run systemctl is-enabled "$UNIT"
	[ "$output" = disabled ]
	if [ -d /run/systemd/system ]; then
		run systemctl is-active "$UNIT"
		[ "$output" != active ]
	fi
	# An upgrade by any means keeps it disabled.
	make_deb 2
	run dpkg -i "$DEB"
	[ "$status" -eq 0 ]
	run systemctl is-enabled "$UNIT"
	[ "$output" = disabled ]
}

@test "deps.sh: a service the operator enabled stays enabled" {
	make_deb 1
	run "$ROOT/scripts/deps.sh" "$DEB"
	[ "$status" -eq 0 ]
	systemctl enable --quiet "$UNIT"
	dpkg --remove "$PKG" >/dev/null
	# Removed, not purged: the operator's choice is on record; deps.sh
	# installs it again.
	make_deb 2
	run "$ROOT/scripts/deps.sh" "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"$UNIT: disabled"* ]]
	run systemctl is-enabled "$UNIT"
	[ "$output" = enabled ]
}

@test "hoststate: a service installed during the run and left disabled and stopped is the host as it was; left enabled it is not" {
	make_deb 1
	export HOSTSTATE_SERVICES=$UNIT
	run "$ROOT/scripts/hoststate.sh" save "$BATS_TEST_TMPDIR/before"
	[ "$status" -eq 0 ]
	grep -qx "service $UNIT absent -" "$BATS_TEST_TMPDIR/before"
	run "$ROOT/scripts/deps.sh" "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	run "$ROOT/scripts/hoststate.sh" check "$BATS_TEST_TMPDIR/before"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"the host is as the run found it"* ]]
	# What the run must not leave: the service enabled.
	systemctl enable --quiet "$UNIT"
	run "$ROOT/scripts/hoststate.sh" check "$BATS_TEST_TMPDIR/before"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"service $UNIT enabled"* ]]
}
