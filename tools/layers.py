#!/usr/bin/env python3
"""Check that modules depend only on the modules below them.

usage: tools/layers.py OBJDIR   (e.g. build/obj)

Reads the global symbols each module's objects define and use (nm) and
fails when a module uses a symbol defined by a module it may not depend on.
The order is the one docs/architecture.md draws; objects whose source file
no longer exists (left over from a rename) are ignored.
"""
import collections
import glob
import os
import subprocess
import sys

ALLOWED = {
    "common": set(),
    "model": {"common"},
    "engine": {"common", "model"},
    "client": {"common", "model"},
    "apiserver": {"common", "model"},
    "sim": {"common", "model", "engine"},
    "scheduler": {"common", "model", "engine", "client"},
    "controller": {"common", "model", "client"},
    "agent": {"common", "model", "client"},
    "router": {"common", "model", "client"},
    "up": {"common", "model", "client", "agent"},
    "standin": {"common"},
    "cli": None,  # the commands: may use every module
}


def main():
    objdir = sys.argv[1] if len(sys.argv) > 1 else "build/obj"
    defs, uses = {}, collections.defaultdict(set)
    objs = sorted(glob.glob(os.path.join(objdir, "src", "*", "*.o")))
    if not objs:
        print(f"layers: no objects under {objdir}/src (build first)")
        return 2
    for obj in objs:
        rel = os.path.relpath(obj, objdir)
        if not os.path.exists(rel[:-2] + ".c"):
            continue
        mod = rel.split(os.sep)[1]
        out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRC":
                defs[f[2]] = mod
            elif len(f) == 2 and f[0] == "U":
                uses[(mod, rel)].add(f[1])
    bad = 0
    for (mod, rel), syms in sorted(uses.items()):
        if mod not in ALLOWED:
            print(f"layers: module {mod} ({rel}) is not in tools/layers.py's order")
            bad += 1
            continue
        allowed = ALLOWED[mod]
        for s in sorted(syms):
            d = defs.get(s)
            if d and d != mod and allowed is not None and d not in allowed:
                print(f"layers: {rel} uses {s} from module {d}; {mod} may use only {sorted(allowed)}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
