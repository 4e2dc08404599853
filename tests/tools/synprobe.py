#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""synprobe.py - send one crafted TCP SYN on an interface (AF_PACKET) and
print the reply to it (a SYN-ACK or a RST), field by field, as one JSON
line; or listen on a port. For synack.bats, which compares shedd's replies
with the kernel's own to the same SYN.

  synprobe.py listen PORT SECONDS
  synprobe.py probe IFACE SRC_MAC DST_MAC SRC_IP DST_IP SPORT DPORT
              [--opts linux|bsd|mss1400|none] [--ecn] [--tos N] [--tries N]

The reply's fields: IP version, TTL or hop limit, TOS or traffic class
(with its ECN bits), IPv4 DF and id, IPv6 flow label (zero or not), TCP
flags, window, urgent pointer, seq (0 or not) and ack (relative to the
SYN's), the options in order, values kept but the timestamp value (its
low bits only: they carry the cookie's options, and the rest is a clock).
Checksums are checked. Prints {"reply": null} when nothing came within
a second of each try.
"""
import json
import os
import select
import socket
import struct
import sys
import time

from inetsum import csum

ETH_P_ALL = 0x0003
ISN = 0x1A2B3C4D
TSVAL = 0xA1B2C3D4


def mac(text):
    return bytes(int(b, 16) for b in text.split(":"))


def syn_options(kind, v6):
    mss = 1440 if v6 else 1460
    ts = struct.pack("!BBII", 8, 10, TSVAL, 0)
    if kind == "linux":
        return struct.pack("!BBH", 2, 4, mss) + b"\x04\x02" + ts + b"\x01\x03\x03\x07"
    if kind == "bsd":
        return (struct.pack("!BBH", 2, 4, mss) + b"\x01\x03\x03\x06\x01\x01" + ts +
                b"\x04\x02\x00\x00")
    if kind == "mss1400":
        return struct.pack("!BBH", 2, 4, 1400)
    if kind == "none":
        return b""
    raise SystemExit("synprobe: unknown --opts %s" % kind)


def build(a):
    v6 = ":" in a["dst_ip"]
    opts = syn_options(a["opts"], v6)
    flags = 0x02 | (0xC0 if a["ecn"] else 0)  # SYN, ECE and CWR
    hl = 20 + len(opts)
    tcp = struct.pack("!HHIIBBHHH", a["sport"], a["dport"], ISN, 0, (hl // 4) << 4, flags,
                      64240, 0, 0) + opts
    if v6:
        src = socket.inet_pton(socket.AF_INET6, a["src_ip"])
        dst = socket.inet_pton(socket.AF_INET6, a["dst_ip"])
        pseudo = src + dst + struct.pack("!IxxxB", len(tcp), 6)
        tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
        ip = struct.pack("!IHBB", (6 << 28) | (a["tos"] << 20), len(tcp), 6, 64) + src + dst
        proto = 0x86DD
    else:
        src = socket.inet_aton(a["src_ip"])
        dst = socket.inet_aton(a["dst_ip"])
        pseudo = src + dst + struct.pack("!xBH", 6, len(tcp))
        tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, a["tos"], 20 + len(tcp), 0x1234, 0x4000, 64,
                         6, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        proto = 0x0800
    return mac(a["dst_mac"]) + mac(a["src_mac"]) + struct.pack("!H", proto) + ip + tcp


def parse_reply(frame, a):
    """The reply to our SYN in @frame, as a dict, or None if it is not one."""
    if len(frame) < 14:
        return None
    proto = struct.unpack("!H", frame[12:14])[0]
    p = frame[14:]
    out = {}
    if proto == 0x0800 and len(p) >= 20:
        ver_ihl, tos, tot, ipid, frag, ttl, pr = struct.unpack("!BBHHHBB", p[:10])
        ihl = (ver_ihl & 15) * 4
        if pr != 6 or p[12:16] != socket.inet_aton(a["dst_ip"]):
            return None
        out.update(version=4, ttl=ttl, tos=tos, df=bool(frag & 0x4000),
                   mf_offset=frag & 0x3FFF, id=ipid, ihl=ihl,
                   ip_csum_ok=csum(p[:ihl]) == 0)
        seg = p[ihl:tot]
        pseudo = p[12:16] + p[16:20] + struct.pack("!xBH", 6, len(seg))
    elif proto == 0x86DD and len(p) >= 40:
        vtf, plen, nh, hlim = struct.unpack("!IHBB", p[:8])
        if nh != 6 or p[8:24] != socket.inet_pton(socket.AF_INET6, a["dst_ip"]):
            return None
        out.update(version=6, hop_limit=hlim, tclass=(vtf >> 20) & 0xFF,
                   flowlabel_set=bool(vtf & 0xFFFFF))
        seg = p[40:40 + plen]
        pseudo = p[8:24] + p[24:40] + struct.pack("!IxxxB", len(seg), 6)
    else:
        return None
    if len(seg) < 20:
        return None
    sport, dport, seq, ack, off, flags, win, _, urg = struct.unpack("!HHIIBBHHH", seg[:20])
    if sport != a["dport"] or dport != a["sport"]:
        return None
    hl = (off >> 4) * 4
    out.update(tcp_csum_ok=csum(pseudo + seg) == 0, flags=flags, window=win, urg=urg,
               reserved=off & 15, seq_zero=seq == 0, ack_rel=(ack - ISN) & 0xFFFFFFFF,
               doff=hl, payload=len(seg) - hl)
    opts, i, o = [], 20, seg
    while i < hl:
        kind = o[i]
        if kind in (0, 1):
            opts.append(["EOL" if kind == 0 else "NOP"])
            i += 1
            continue
        if i + 1 >= hl or o[i + 1] < 2:
            opts.append(["BAD", kind])
            break
        ln = o[i + 1]
        val = o[i + 2:i + ln]
        if kind == 2 and ln == 4:
            opts.append(["MSS", struct.unpack("!H", val)[0]])
        elif kind == 3 and ln == 3:
            opts.append(["WS", val[0]])
        elif kind == 4 and ln == 2:
            opts.append(["SACK_PERM"])
        elif kind == 8 and ln == 10:
            tsval, tsecr = struct.unpack("!II", val)
            # The low 6 bits carry the cookie's options (the kernel's
            # layout); the rest is the sender's clock.
            opts.append(["TS", "low6=%d" % (tsval & 63), "ecr=%#x" % tsecr])
        else:
            opts.append(["OPT", kind, val.hex()])
        i += ln
    out["options"] = opts
    return out


def probe(argv):
    a = dict(iface=argv[0], src_mac=argv[1], dst_mac=argv[2], src_ip=argv[3],
             dst_ip=argv[4], sport=int(argv[5]), dport=int(argv[6]), opts="linux",
             ecn=False, tos=0, tries=1)
    rest = argv[7:]
    while rest:
        k = rest.pop(0)
        if k == "--opts":
            a["opts"] = rest.pop(0)
        elif k == "--ecn":
            a["ecn"] = True
        elif k == "--tos":
            a["tos"] = int(rest.pop(0), 0)
        elif k == "--tries":
            a["tries"] = int(rest.pop(0))
        else:
            raise SystemExit("synprobe: unknown option %s" % k)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((a["iface"], 0))
    frame = build(a)
    for _ in range(a["tries"]):
        s.send(frame)
        end = time.monotonic() + 1.0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([s], [], [], left)
            if not r:
                break
            data, addr = s.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            rep = parse_reply(data, a)
            if rep is not None:
                print(json.dumps({"reply": rep}, sort_keys=True))
                return 0
    print(json.dumps({"reply": None}))
    return 0


def listen(argv):
    port, secs = int(argv[0]), float(argv[1])
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", port))
    s.listen(128)
    s.settimeout(0.2)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            c, _ = s.accept()
            c.close()
        except socket.timeout:
            pass
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "listen":
        return listen(sys.argv[2:])
    if len(sys.argv) >= 9 and sys.argv[1] == "probe":
        return probe(sys.argv[2:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
