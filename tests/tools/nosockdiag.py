#!/usr/bin/env python3
# nosockdiag.py - run a command where socket(AF_NETLINK, *, NETLINK_SOCK_DIAG)
# fails with EAFNOSUPPORT, as under a seccomp profile or a container runtime
# that refuses that netlink family, so a test can see what shedd does
# without sock_diag. Every other system call, and every other netlink
# family (rtnetlink, generic netlink), is left alone.
#
# Usage: nosockdiag.py COMMAND [ARG...]
# Exit: 2 on a usage error or an architecture it has no filter for; 1 if
# the filter cannot be installed; otherwise it becomes COMMAND.
import ctypes
import os
import platform
import struct
import sys

AUDIT_ARCH_X86_64 = 0xC000003E
NR_SOCKET_X86_64 = 41
AF_NETLINK = 16
NETLINK_SOCK_DIAG = 4
EAFNOSUPPORT = 97
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000

# Classic BPF opcodes.
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_RET_K = 0x06

# struct seccomp_data: nr at 0, arch at 4, args[] from 16, 8 bytes each
# (the low half first on a little-endian machine).
OFF_NR, OFF_ARCH, OFF_ARG0, OFF_ARG2 = 0, 4, 16, 32


def insn(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k)


def program():
    # Each test jumps over the rest to "allow" (the last instruction) when
    # it does not match; jf counts the instructions left before it.
    return b"".join([
        insn(BPF_LD_W_ABS, 0, 0, OFF_ARCH),
        insn(BPF_JEQ_K, 0, 7, AUDIT_ARCH_X86_64),
        insn(BPF_LD_W_ABS, 0, 0, OFF_NR),
        insn(BPF_JEQ_K, 0, 5, NR_SOCKET_X86_64),
        insn(BPF_LD_W_ABS, 0, 0, OFF_ARG0),
        insn(BPF_JEQ_K, 0, 3, AF_NETLINK),
        insn(BPF_LD_W_ABS, 0, 0, OFF_ARG2),
        insn(BPF_JEQ_K, 0, 1, NETLINK_SOCK_DIAG),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ])


def main():
    if len(sys.argv) < 2:
        print("usage: nosockdiag.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    if platform.machine() != "x86_64":
        print("nosockdiag.py: no filter for %s (x86_64 only)" % platform.machine(),
              file=sys.stderr)
        return 2
    code = program()
    buf = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(code) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p,
                           ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0):
        err = ctypes.get_errno()
        print("nosockdiag.py: install the seccomp filter: %s" % os.strerror(err),
              file=sys.stderr)
        return 1
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    except OSError as e:
        print("nosockdiag.py: %s: %s" % (sys.argv[1], e.strerror), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
