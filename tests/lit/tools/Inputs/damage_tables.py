"""Flips one byte of the cpu tables' blob inside an executable (found by its
header: VOUCHTBL and version 1; the first one is the cpu Program's): damage
that only the blob's checksum can catch.

usage: damage_tables.py EXECUTABLE OUTPUT
"""
import sys

data = bytearray(open(sys.argv[1], "rb").read())
at = data.find(b"VOUCHTBL\x01\x00\x00\x00")
if at < 0:
    sys.exit("no VOUCHTBL blob in " + sys.argv[1])
data[at + 28 + 40] ^= 0x01  # a byte of the payload, past the 28-byte header
open(sys.argv[2], "wb").write(data)
