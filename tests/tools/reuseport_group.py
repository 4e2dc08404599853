#!/usr/bin/env python3
# reuseport_group.py - an SO_REUSEPORT group told apart member by member,
# for listeners.bats.
#   serve ADDR PORT N STOP SECONDS OUT: N listeners on ADDR:PORT (IPv4),
#     backlog 16, member i (1..N) with SO_PRIORITY i; member STOP (0: none)
#     never accepts. Prints "listening" once all listen; after SECONDS (or
#     SIGTERM) writes OUT: a JSON object, client port -> member that
#     accepted it.
#   connect ADDR PORT COUNT BASE: COUNT connections one after the other,
#     from source ports BASE, BASE + 1, ... (never one 4-tuple twice), each
#     given 300 ms; prints "ok=N fail=N".
import json
import select
import signal
import socket
import sys
import time


def serve(addr, port, n, stop, secs, out):
    ls = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, i + 1)
        s.bind((addr, port))
        s.listen(16)
        s.setblocking(False)
        ls.append(s)
    got = {}
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    print("listening", flush=True)
    active = [s for i, s in enumerate(ls) if i + 1 != stop]
    end = time.monotonic() + secs
    while not done and time.monotonic() < end:
        try:
            ready, _, _ = select.select(active, [], [], 0.1)
        except InterruptedError:
            continue
        for s in ready:
            try:
                c, peer = s.accept()
            except BlockingIOError:
                continue
            got[peer[1]] = ls.index(s) + 1
            c.close()
    with open(out, "w") as f:
        json.dump(got, f)


def connect(addr, port, count, base):
    ok = fail = 0
    for i in range(count):
        s = socket.socket()
        s.settimeout(0.3)
        try:
            s.bind(("", base + i))
            s.connect((addr, port))
            ok += 1
        except OSError:
            fail += 1
        s.close()
    print("ok=%d fail=%d" % (ok, fail))


def main():
    a = sys.argv[1:]
    if len(a) == 7 and a[0] == "serve":
        serve(a[1], int(a[2]), int(a[3]), int(a[4]), float(a[5]), a[6])
    elif len(a) == 5 and a[0] == "connect":
        connect(a[1], int(a[2]), int(a[3]), int(a[4]))
    else:
        print("usage: reuseport_group.py serve ADDR PORT N STOP SECONDS OUT | "
              "connect ADDR PORT COUNT BASE", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
