#!/usr/bin/env python3
# groundtruth.py - the fuzzer's reference model against a real kernel. Each
# row of a table of crafted SYNs (VLAN stacks of VID 0 and not, IPv4
# options and fragments, IPv6 extension chains and fragments, tunnels,
# malformed lengths) is sent on IFACE, from a namespace without shedd, to
# a listener on PORT behind the peer; a SYN-ACK back to the row's source
# port says the kernel delivered it. fuzz_xdp --model reads the row's
# first frame and says whether it would be delivered; every row must
# agree, except the rows the model over-approximates on purpose, where it
# must say "delivered" whatever this kernel does: a VID without a VLAN
# device, AH without an SA, a bad checksum (the model takes them as
# deliverable, so shedd judges them: a token spent, never a way past), and
# more than eight priority tags, which the source of Linux strips without
# end and a 6.18 of 2026 was seen to drop behind nine (RECURSION_LIMIT in
# __netif_receive_skb_core), so the model keeps the view of the source.
#
# usage: groundtruth.py [--no-vlan-devices] MODEL IFACE DST_MAC SRC_IP DST_IP
#                       SRC_IP6 DST_IP6 PORT
#   MODEL   the fuzz_xdp binary (run as MODEL --model)
#   --no-vlan-devices  the peer has no VLAN devices for VIDs 100 (802.1Q)
#           and 100/101 (802.1ad/802.1Q), as on a kernel without 8021q:
#           their rows are then over-approximated by the model too
# Prints one line per row and a summary; exit 0 when every row agrees,
# 1 on a disagreement, 2 on bad arguments or a failed step.
import os
import select
import socket
import struct
import subprocess
import sys
import time

from inetsum import csum

ETH_P_ALL = 0x0003
WAIT_S = 2.0  # for SYN-ACKs after the last row is sent
SEQ = 0x1000


def tcp_syn(src, dst, sport, dport, v6, bad_sum=False, doff=None, data=b""):
    """A SYN with an MSS option (and @data, which a listener takes with
    it); checksummed over the pseudo header."""
    opts = struct.pack("!BBH", 2, 4, 1460)
    hlen = 20 + len(opts)
    off = (doff if doff is not None else hlen // 4) << 4
    th = struct.pack("!HHIIBBHHH", sport, dport, SEQ + sport, 0, off, 0x02, 64240, 0, 0)
    th += opts + data
    if v6:
        pseudo = src + dst + struct.pack("!IxxxB", len(th), 6)
    else:
        pseudo = src + dst + struct.pack("!xBH", 6, len(th))
    s = csum(pseudo + th)
    if bad_sum:
        s ^= 0x5555
    return th[:16] + struct.pack("!H", s) + th[18:]


def ipv4(src, dst, proto, payload, opts=b"", frag=0, ident=1, tot_len=None, ihl=None):
    hl = 20 + len(opts)
    tl = tot_len if tot_len is not None else hl + len(payload)
    vi = 0x40 | (ihl if ihl is not None else hl // 4)
    h = struct.pack("!BBHHHBBH4s4s", vi, 0, tl, ident, frag, 64, proto, 0, src, dst) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ipv6(src, dst, nh, payload, plen=None):
    pl = plen if plen is not None else len(payload)
    return struct.pack("!IHBB16s16s", 0x60000000, pl, nh, 64, src, dst) + payload


def ext_opts(nh):
    """A hop-by-hop or destination options header: 8 bytes, PadN."""
    return struct.pack("!BBBB4x", nh, 0, 1, 4)


def ext_frag(nh, off8, more, ident):
    return struct.pack("!BBHI", nh, 0, (off8 << 3) | (1 if more else 0), ident)


def ext_ah(nh):
    """AH with a 12-byte ICV: 24 bytes, its length field 24 / 4 - 2."""
    return struct.pack("!BBHII", nh, 4, 0, 0x100, 1) + b"\0" * 12


def eth(dst_mac, src_mac, tags, ethertype, payload):
    """tags: (tpid, tci) from the outside in."""
    types = [t[0] for t in tags] + [ethertype]
    f = dst_mac + src_mac + struct.pack("!H", types[0])
    for i, (_, tci) in enumerate(tags):
        f += struct.pack("!HH", tci, types[i + 1])
    return f + payload


class Rows:
    def __init__(self, a):
        self.a = a
        self.rows = []
        self.sport = 20000

    def add(self, name, build, exact=True, device=False):
        """build(sport) -> list of frames; the first goes to the model.
        device: a non-zero VID that needs a VLAN device on the peer."""
        self.sport += 1
        if device and not self.a["vlan_devices"]:
            exact = False
            name = name.replace("(VLAN devices)", "(no device)").replace(
                "(a VLAN device)", "(no device)")
        self.rows.append({"name": name, "sport": self.sport,
                          "frames": build(self.sport), "exact": exact})


def table(a):
    r = Rows(a)
    dm, sm = a["dst_mac"], a["src_mac"]
    s4, d4, s6, d6, port = a["s4"], a["d4"], a["s6"], a["d6"], a["port"]
    Q, AD = 0x8100, 0x88A8
    prio = 5 << 13  # PCP 5, VID 0

    def v4(sport, tags=(), opts=b"", **kw):
        return [eth(dm, sm, tags, 0x0800, ipv4(s4, d4, 6, tcp_syn(s4, d4, sport, port, False),
                                               opts, **kw))]

    def v6(sport, tags=(), exts=(), **kw):
        """exts: builders of extension headers, nh -> bytes, outside in."""
        pl = tcp_syn(s6, d6, sport, port, True, **kw)
        nh = 6
        for b in reversed(exts):
            pl = b(nh) + pl
            nh = {"hbh": 0, "dst": 60, "ah": 51, "frag": 44}[b.kind]
        return [eth(dm, sm, tags, 0x86DD, ipv6(s6, d6, nh, pl))]

    def ext(kind, fn):
        fn.kind = kind
        return fn

    hbh = ext("hbh", ext_opts)
    dst = ext("dst", ext_opts)
    ah = ext("ah", ext_ah)
    atomic = ext("frag", lambda nh: ext_frag(nh, 0, False, 7))

    r.add("IPv4 SYN", lambda p: v4(p))
    r.add("IPv6 SYN", lambda p: v6(p))
    for n in (1, 2, 3, 4, 8, 9, 12):
        tags = [(AD if i == 0 and n > 1 else Q, prio) for i in range(n)]
        r.add("IPv4 SYN, %d priority tags" % n, lambda p, t=tags: v4(p, t), exact=n <= 8)
    for n in (3, 9):
        r.add("IPv6 SYN, %d priority tags" % n,
              lambda p, n=n: v6(p, [(Q, prio)] * n), exact=n <= 8)
    r.add("IPv4 SYN, 802.1Q VID 100 (a VLAN device)", lambda p: v4(p, [(Q, 100)]),
          device=True)
    r.add("IPv4 SYN, 802.1ad 100 + 802.1Q 101 (VLAN devices)",
          lambda p: v4(p, [(AD, 100), (Q, 101)]), device=True)
    r.add("IPv6 SYN, 802.1ad 100 + 802.1Q 101 (VLAN devices)",
          lambda p: v6(p, [(AD, 100), (Q, 101)]), device=True)
    r.add("IPv4 SYN, priority tag then VID 100 (a VLAN device)",
          lambda p: v4(p, [(Q, prio), (Q, 100)]), device=True)
    r.add("IPv4 SYN, VID 100 (a VLAN device) then 3 priority tags",
          lambda p: v4(p, [(Q, 100)] + [(Q, prio)] * 3), device=True)
    r.add("IPv4 SYN, VID 200 (no VLAN device)", lambda p: v4(p, [(Q, 200)]), exact=False)
    r.add("IPv4 SYN, TPID 0x9100 VID 0 (not a VLAN to Linux)",
          lambda p: v4(p, [(0x9100, prio)]))
    r.add("IPv4 SYN, 8 bytes of IP options", lambda p: v4(p, opts=b"\x01" * 7 + b"\x00"))
    r.add("IPv4 SYN, 40 bytes of IP options", lambda p: v4(p, opts=b"\x01" * 39 + b"\x00"))
    r.add("IPv4 SYN, padded past tot_len", lambda p: [v4(p)[0] + b"\0" * 10])
    r.add("IPv4 SYN, tot_len past the frame", lambda p: v4(p, tot_len=20 + 24 + 8))
    r.add("IPv4 SYN, tot_len cuts the TCP header", lambda p: v4(p, tot_len=20 + 16))
    r.add("IPv4 SYN, ihl 4", lambda p: v4(p, ihl=4))
    r.add("IPv4 SYN, data offset past the segment",
          lambda p: [eth(dm, sm, (), 0x0800,
                         ipv4(s4, d4, 6, tcp_syn(s4, d4, p, port, False, doff=15)))])
    r.add("IPv4 SYN, bad TCP checksum",
          lambda p: [eth(dm, sm, (), 0x0800,
                         ipv4(s4, d4, 6, tcp_syn(s4, d4, p, port, False, bad_sum=True)))],
          exact=False)

    # Fragments: the 24-byte TCP header in the first, 16 bytes of data in
    # the second (offsets count 8 bytes).
    data = b"groundtruth-data"

    def v4_frags(p, tags=()):
        seg = tcp_syn(s4, d4, p, port, False, data=data)
        ident = 0x4000 + p
        first = ipv4(s4, d4, 6, seg[:24], frag=0x2000, ident=ident)
        second = ipv4(s4, d4, 6, seg[24:], frag=3, ident=ident)
        return [eth(dm, sm, tags, 0x0800, first), eth(dm, sm, tags, 0x0800, second)]

    r.add("IPv4 SYN in two fragments", lambda p: v4_frags(p))
    r.add("IPv4 SYN in two fragments, 3 priority tags",
          lambda p: v4_frags(p, [(Q, prio)] * 3))

    def v6_frags(p):
        seg = tcp_syn(s6, d6, p, port, True, data=data)
        ident = 0x6000 + p
        first = ext_frag(6, 0, True, ident) + seg[:24]
        second = ext_frag(6, 3, False, ident) + seg[24:]
        return [eth(dm, sm, (), 0x86DD, ipv6(s6, d6, 44, first)),
                eth(dm, sm, (), 0x86DD, ipv6(s6, d6, 44, second))]

    r.add("IPv6 SYN in two fragments", v6_frags)
    r.add("IPv6 SYN, atomic fragment", lambda p: v6(p, exts=[atomic]))
    r.add("IPv6 SYN, hop-by-hop", lambda p: v6(p, exts=[hbh]))
    r.add("IPv6 SYN, hop-by-hop and 5 destination options",
          lambda p: v6(p, exts=[hbh] + [dst] * 5))
    r.add("IPv6 SYN, 7 destination options headers", lambda p: v6(p, exts=[dst] * 7))
    r.add("IPv6 SYN, 12 destination options headers", lambda p: v6(p, exts=[dst] * 12))
    r.add("IPv6 SYN, AH (no SA)", lambda p: v6(p, exts=[ah]), exact=False)
    r.add("IPv6 SYN, payload_len past the frame",
          lambda p: [eth(dm, sm, (), 0x86DD,
                         ipv6(s6, d6, 6, tcp_syn(s6, d6, p, port, True), plen=60))])

    def ipip(p):
        inner = ipv4(s4, d4, 6, tcp_syn(s4, d4, p, port, False))
        return [eth(dm, sm, (), 0x0800, ipv4(s4, d4, 4, inner))]

    def gre(p):
        inner = ipv4(s4, d4, 6, tcp_syn(s4, d4, p, port, False))
        return [eth(dm, sm, (), 0x0800, ipv4(s4, d4, 47, struct.pack("!HH", 0, 0x0800) + inner))]

    r.add("IPv4 SYN in IP-in-IP (no tunnel device)", ipip)
    r.add("IPv4 SYN in GRE (no tunnel device)", gre)
    return r.rows


def synacks(sock, port, until):
    """Source ports of the SYN-ACKs from PORT seen before until."""
    seen = set()
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return seen
        rd, _, _ = select.select([sock], [], [], left)
        if not rd:
            continue
        f = sock.recv(65535)
        off, et = 14, struct.unpack("!H", f[12:14])[0]
        while et in (0x8100, 0x88A8) and len(f) >= off + 4:
            et = struct.unpack("!H", f[off + 2:off + 4])[0]
            off += 4
        if et == 0x0800 and len(f) >= off + 20:
            proto, hl = f[off + 9], (f[off] & 15) * 4
            th = off + hl
        elif et == 0x86DD and len(f) >= off + 40:
            proto, th = f[off + 6], off + 40
        else:
            continue
        if proto != 6 or len(f) < th + 14:
            continue
        sp, dp = struct.unpack("!HH", f[th:th + 4])
        if sp == port and f[th + 13] & 0x12 == 0x12:
            seen.add(dp)


def main(argv):
    vlan_devices = True
    if len(argv) > 1 and argv[1] == "--no-vlan-devices":
        vlan_devices = False
        argv = argv[1:]
    if len(argv) != 9:
        print("usage: groundtruth.py [--no-vlan-devices] MODEL IFACE DST_MAC SRC_IP DST_IP "
              "SRC_IP6 DST_IP6 PORT", file=sys.stderr)
        return 2
    model, iface = argv[1], argv[2]
    try:
        a = {"vlan_devices": vlan_devices,
             "dst_mac": bytes.fromhex(argv[3].replace(":", "")),
             "s4": socket.inet_pton(socket.AF_INET, argv[4]),
             "d4": socket.inet_pton(socket.AF_INET, argv[5]),
             "s6": socket.inet_pton(socket.AF_INET6, argv[6]),
             "d6": socket.inet_pton(socket.AF_INET6, argv[7]),
             "port": int(argv[8])}
        with open("/sys/class/net/%s/address" % iface) as f:
            a["src_mac"] = bytes.fromhex(f.read().strip().replace(":", ""))
    except (ValueError, OSError) as e:
        print("groundtruth: arguments: %s" % e, file=sys.stderr)
        return 2
    rows = table(a)
    hexes = "".join(row["frames"][0].hex() + "\n" for row in rows)
    try:
        out = subprocess.run([model, "--model"], input=hexes, capture_output=True, text=True,
                             timeout=30, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError) as e:
        print("groundtruth: the model (%s --model): %s" % (model, e), file=sys.stderr)
        return 2
    for row, line in zip(rows, out):
        kind, delivered = line.split()
        row["kind"], row["model"] = kind, delivered == "1"
    try:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        sock.bind((iface, 0))
        for row in rows:
            for fr in row["frames"]:
                sock.send(fr)
        seen = synacks(sock, a["port"], time.monotonic() + WAIT_S)
    except OSError as e:
        print("groundtruth: AF_PACKET on %s: %s" % (iface, e), file=sys.stderr)
        return 2
    wrong = 0
    print("%-60s %-7s %-9s %s" % ("row (~: the model may over-approximate)", "kernel",
                                  "model", "shedd"))
    for row in rows:
        kernel = row["sport"] in seen
        ok = kernel == row["model"] if row["exact"] else row["model"]
        wrong += not ok
        print("%-60s %-7s %-9s %s%s" % (("" if row["exact"] else "~") + row["name"],
                                        "deliver" if kernel else "drop",
                                        "deliver" if row["model"] else "drop", row["kind"],
                                        "" if ok else "  <-- WRONG"))
    print("groundtruth: %d rows, %d delivered by the kernel, %d wrong" %
          (len(rows), sum(r["sport"] in seen for r in rows), wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
