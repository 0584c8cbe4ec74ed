#!/usr/bin/env python3
"""Seeds for the `icc` fuzz target: ICC profiles cut out of files (every ICC header has "acsp" at byte 36)
and the .icc/.icm files of system folders.  icc_seeds.py OUT SOURCE_DIR..."""
import os, sys

out, n = sys.argv[1], 0
for folder in sys.argv[2:]:
    if not os.path.isdir(folder):
        continue
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or os.path.getsize(path) > 4 << 20:
            continue
        data = open(path, "rb").read()
        at = data.find(b"acsp")
        while at >= 36:
            size = int.from_bytes(data[at - 36:at - 32], "big")
            if 132 <= size <= len(data) - (at - 36):
                with open(os.path.join(out, "%s.%d.icc" % (name, n)), "wb") as f:
                    f.write(data[at - 36:at - 36 + size])
                n += 1
            at = data.find(b"acsp", at + 4)
