#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tunflood.py - testbed source of encapsulated TCP SYNs: each SYN, from its
own spoofed inner source, is wrapped in one tunnel header (IPIP, SIT,
IP6IP6, GRE, GRE-TAP, VXLAN, Geneve, FOU or GUE) and an outer IPv4 or IPv6
header,
then sent as an Ethernet frame through AF_PACKET, paced. Prints one line:
sent=N elapsed_ms=N. Exit 0 ok, 1 error, 2 usage.
"""
import argparse
import ipaddress
import socket
import struct
import sys
import time

from inetsum import csum

MAX_COUNT = 100000
MAX_RATE = 100000

# kind: (outer family, IP protocol or UDP, what the tunnel header carries)
KINDS = {
    "ipip": (4, 4, "ip"),
    "sit": (4, 41, "ip"),
    "ip6ip6": (6, 41, "ip"),
    "ip4ip6": (6, 4, "ip"),
    "gre": (4, 47, "ip"),
    "gretap": (4, 47, "eth"),
    "ip6gre": (6, 47, "ip"),
    "ip6gretap": (6, 47, "eth"),
    "vxlan": (4, 17, "eth"),
    "vxlan6": (6, 17, "eth"),
    "geneve": (4, 17, "eth"),
    "geneve6": (6, 17, "eth"),
    # FOU and GUE of an ipip device: inner IPv4 after UDP (and GUE).
    "fou": (4, 17, "ip"),
    "gue": (4, 17, "ip"),
}


def ipv4(src, dst, proto, payload):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64,
                      proto, 0, src.packed, dst.packed)
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + payload


def ipv6(src, dst, nexthdr, payload):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nexthdr, 64,
                       src.packed, dst.packed) + payload


def pseudo(src, dst, proto, length):
    if src.version == 4:
        return struct.pack("!4s4sBBH", src.packed, dst.packed, 0, proto, length)
    return struct.pack("!16s16sIxxxB", src.packed, dst.packed, length, proto)


def tcp_syn(src, dst, sport, dport, seq, bad_csum=False):
    # 20 bytes and an MSS option; a checksum made wrong if asked.
    hdr = struct.pack("!HHIIBBHHHBBH", sport, dport, seq, 0, 6 << 4, 0x02, 64240, 0, 0,
                      2, 4, 1400)
    c = csum(pseudo(src, dst, 6, len(hdr)) + hdr) ^ (0x5A5A if bad_csum else 0)
    return hdr[:16] + struct.pack("!H", c) + hdr[18:]


def inner_ip(src, dst, sport, dport, seq, bad_csum=False):
    tcp = tcp_syn(src, dst, sport, dport, seq, bad_csum)
    if src.version == 4:
        return ipv4(src, dst, 6, tcp)
    return ipv6(src, dst, 6, tcp)


def main():
    ap = argparse.ArgumentParser(description="encapsulated SYN flood (testbed only)")
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--kind", required=True, choices=sorted(KINDS))
    ap.add_argument("--outer-src", required=True)
    ap.add_argument("--outer-dst", required=True)
    ap.add_argument("--src", required=True, help="inner source prefix, one address per SYN")
    ap.add_argument("--dst", required=True, help="inner destination")
    ap.add_argument("--dport", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--udp-port", type=int, default=0, help="VXLAN/Geneve port")
    ap.add_argument("--vni", type=int, default=42)
    ap.add_argument("--inner-mac", default="02:00:00:00:00:02",
                    help="inner destination MAC (VXLAN, Geneve, GRE-TAP)")
    ap.add_argument("--vlan", type=int, default=-1, help="an inner 802.1Q tag of this VID")
    ap.add_argument("--gre-key", type=int, default=-1, help="GRE: a key field")
    ap.add_argument("--gre-seq", action="store_true", help="GRE: a sequence number")
    ap.add_argument("--gre-csum", action="store_true", help="GRE: a checksum")
    ap.add_argument("--geneve-opt", type=int, default=0,
                    help="Geneve: bytes of options (a multiple of 4, at most 252)")
    ap.add_argument("--gue-opt", type=int, default=0,
                    help="GUE: bytes of optional fields (a multiple of 4, at most 124)")
    ap.add_argument("--sport-base", type=int, default=1024)
    ap.add_argument("--bad-csum", action="store_true",
                    help="inner TCP checksums made wrong (the kernel drops them)")
    a = ap.parse_args()

    fam, proto, carries = KINDS[a.kind]
    if not 1 <= a.count <= MAX_COUNT or not 1 <= a.rate <= MAX_RATE:
        ap.error("--count 1-%d, --rate 1-%d" % (MAX_COUNT, MAX_RATE))
    if not 1 <= a.dport <= 65535 or (proto == 17 and not 1 <= a.udp_port <= 65535):
        ap.error("--dport 1-65535; VXLAN, Geneve, FOU and GUE need --udp-port 1-65535")
    if a.geneve_opt % 4 or not 0 <= a.geneve_opt <= 252:
        ap.error("--geneve-opt: a multiple of 4 in 0-252")
    if a.gue_opt % 4 or not 0 <= a.gue_opt <= 124:
        ap.error("--gue-opt: a multiple of 4 in 0-124")
    osrc = ipaddress.ip_address(a.outer_src)
    odst = ipaddress.ip_address(a.outer_dst)
    if osrc.version != fam or odst.version != fam:
        ap.error("--kind %s takes IPv%d outer addresses" % (a.kind, fam))
    net = ipaddress.ip_network(a.src)
    idst = ipaddress.ip_address(a.dst)
    if net.version != idst.version:
        ap.error("--src and --dst: one family")
    if proto == 4 and idst.version != 4 or proto == 41 and idst.version != 6:
        ap.error("--kind %s carries IPv%d" % (a.kind, 4 if proto == 4 else 6))
    if a.kind in ("fou", "gue") and idst.version != 4:
        ap.error("--kind %s (of an ipip device) carries IPv4" % a.kind)
    if net.num_addresses < a.count + 2:
        ap.error("--src %s has fewer addresses than --count" % a.src)
    try:
        dmac = bytes.fromhex(a.dst_mac.replace(":", ""))
        imac = bytes.fromhex(a.inner_mac.replace(":", ""))
        assert len(dmac) == 6 and len(imac) == 6
    except (ValueError, AssertionError):
        ap.error("MAC: want aa:bb:cc:dd:ee:ff")

    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((a.iface, 0))
        smac = s.getsockname()[4]
    except OSError as e:
        print("tunflood: open AF_PACKET on %s: %s" % (a.iface, e), file=sys.stderr)
        return 1

    inner_type = 0x0800 if idst.version == 4 else 0x86DD
    outer_type = 0x0800 if fam == 4 else 0x86DD
    gap = 1.0 / a.rate
    start = time.monotonic()
    sent = 0
    for i in range(a.count):
        src = net[1 + i]
        pkt = inner_ip(src, idst, (a.sport_base + i) % 64512 + 1024, a.dport, 1000 + i,
                       a.bad_csum)
        if carries == "eth":
            l2 = imac + b"\x02\x00\x00\x00\x00\x01"
            if a.vlan >= 0:
                l2 += struct.pack("!HH", 0x8100, a.vlan)
            pkt = l2 + struct.pack("!H", inner_type) + pkt
        if proto == 47:
            flags = (0x8000 if a.gre_csum else 0) | (0x2000 if a.gre_key >= 0 else 0) | \
                    (0x1000 if a.gre_seq else 0)
            ptype = 0x6558 if carries == "eth" else inner_type
            opt = b""
            if a.gre_csum:
                opt += b"\0\0\0\0"
            if a.gre_key >= 0:
                opt += struct.pack("!I", a.gre_key)
            if a.gre_seq:
                opt += struct.pack("!I", a.sport_base + i)  # rising across runs
            gre = struct.pack("!HH", flags, ptype) + opt + pkt
            if a.gre_csum:
                gre = gre[:4] + struct.pack("!H", csum(gre)) + gre[6:]
            payload = gre
        elif proto == 17:
            if a.kind == "fou":
                tun = b""
            elif a.kind == "gue":
                # Version 0, not control, the fields' length; protocol 4.
                tun = struct.pack("!BBH", a.gue_opt // 4, 4, 0) + b"\0" * a.gue_opt
            elif a.kind.startswith("vxlan"):
                tun = struct.pack("!II", 0x08000000, a.vni << 8)
            else:
                tun = struct.pack("!BBHI", a.geneve_opt // 4, 0, 0x6558, a.vni << 8)
                # Options: experimental class 0xffff, type 0, the length.
                left = a.geneve_opt
                while left:
                    n = min(left, 128)
                    tun += struct.pack("!HBB", 0xFFFF, 0, n // 4 - 1) + b"\0" * (n - 4)
                    left -= n
            body = tun + pkt
            sport = 49152 + i % 16384
            udp = struct.pack("!HHHH", sport, a.udp_port, 8 + len(body), 0) + body
            c = csum(pseudo(osrc, odst, 17, len(udp)) + udp) or 0xFFFF
            payload = udp[:6] + struct.pack("!H", c) + udp[8:]
        else:
            payload = pkt
        outer = ipv4(osrc, odst, proto, payload) if fam == 4 else ipv6(osrc, odst, proto, payload)
        frame = dmac + smac + struct.pack("!H", outer_type) + outer
        due = start + i * gap
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        try:
            s.send(frame)
        except OSError as e:
            print("tunflood: send on %s: %s" % (a.iface, e), file=sys.stderr)
            return 1
        sent += 1
    print("sent=%d elapsed_ms=%d" % (sent, (time.monotonic() - start) * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
