"""Flips one byte of the cpu tables' blob inside an executable (found by its
header: VOUCHTBL and a version below 256; the first one is the cpu Program's): damage
that only the blob's checksum can catch.

usage: damage_tables.py EXECUTABLE OUTPUT
"""
import sys

data = bytearray(open(sys.argv[1], "rb").read())
at = data.find(b"VOUCHTBL")
while at >= 0 and data[at + 9:at + 12] != b"\x00\x00\x00":
    at = data.find(b"VOUCHTBL", at + 1)  # the string, not a blob's header
if at < 0:
    sys.exit("no VOUCHTBL blob in " + sys.argv[1])
data[at + 28 + 40] ^= 0x01  # a byte of the payload, past the 28-byte header
open(sys.argv[2], "wb").write(data)
