#!/usr/bin/env python3
"""Writes a small .npy file without NumPy: make-npy.py PATH DESCR SHAPE
(e.g. make-npy.py x.npy '<f4' 32,64). Values are 0, 1, 2, ... mod 7."""
import struct
import sys

path, descr, shape = sys.argv[1], sys.argv[2], sys.argv[3]
dims = [int(d) for d in shape.split(",") if d]
count = 1
for d in dims:
    count *= d
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
    descr, "".join(f"{d}, " for d in dims) if len(dims) != 1 else f"{dims[0]},")
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
fmt = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q"}[descr]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%d%s" % (count, fmt), *[i % 7 for i in range(count)]))
