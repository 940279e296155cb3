#!/usr/bin/env python3
"""Assembles the PTX of every gpu.binary in an MLIR file with ptxas.

Usage: check-ptx.py PTXAS ARCH FILE.mlir
Decodes each `assembly = "..."` string (MLIR escapes bytes as \\XX), writes
it to a .ptx file beside FILE and runs `PTXAS -arch=ARCH` on it. Prints one
line per kernel module and exits 1 when ptxas rejects one.
"""

import re
import subprocess
import sys

ptxas, arch, path = sys.argv[1:4]
text = open(path).read()
modules = re.findall(r'gpu\.binary @(\w+).*?assembly = "((?:[^"\\]|\\.)*)"',
                     text)
if not modules:
    sys.exit(f"check-ptx.py: no PTX in {path}")
failed = 0
for name, escaped in modules:
    ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
                 escaped)
    ptx_path = f"{path}.{name}.ptx"
    with open(ptx_path, "w") as f:
        f.write(ptx)
    out = subprocess.run([ptxas, f"-arch={arch}", ptx_path, "-o",
                          ptx_path + ".cubin"], capture_output=True, text=True)
    entries = len(re.findall(r"\.visible \.entry", ptx))
    if out.returncode:
        failed += 1
        print(f"{name}: ptxas failed:\n{out.stderr}")
    else:
        print(f"{name}: {entries} kernel(s) accepted by ptxas -arch={arch}")
sys.exit(1 if failed else 0)
