#!/usr/bin/env python3
# notifylisten.py SOCKET OUT SECONDS - the service manager's end of the
# sd_notify protocol, for tests: bind a UNIX datagram socket at SOCKET and
# write each message to OUT as one line, "MONOTONIC_SECONDS FIELD FIELD...".
# Stops after SECONDS or on SIGTERM, and removes SOCKET.
import os
import signal
import socket
import sys
import time


def main():
    if len(sys.argv) != 4:
        print("usage: notifylisten.py SOCKET OUT SECONDS", file=sys.stderr)
        return 2
    path, out, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    end = time.monotonic() + secs
    try:
        with open(out, "a", buffering=1) as f:
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    return 0
                sock.settimeout(left)
                try:
                    msg = sock.recv(4096)
                except socket.timeout:
                    return 0
                fields = msg.decode(errors="replace").strip("\n").split("\n")
                f.write("%.3f %s\n" % (time.monotonic(), " ".join(fields)))
    finally:
        os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
