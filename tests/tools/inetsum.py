# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""inetsum.py - the Internet checksum (RFC 1071) of the crafted-frame tools
(groundtruth.py, synprobe.py, tunflood.py), which import it from their own
folder."""

import struct


def csum(data):
    """The ones' complement of the ones' complement sum of @data's 16-bit
    words, an odd last byte padded with zero."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF
