#!/usr/bin/env python3
"""Held-out openb pod lists built from the shared ones, to mimic the published
variants we do not have (the trace's README: the other lists are sampled from
the default one, emphasizing GPU-sharing, multi-GPU or cpu-only pods; the
gpuspec ones add GPU-model constraints). Written to OUTDIR (build/, never
committed, never under the shared traces):

  gpushare50 ... 80       default with whole-GPU pods turned into shares drawn
                          from default's shares, until 50/60/70/80% of the GPU
                          pods are shares (default: 44%, gpushare100: 100%)
  gpuspec15               gpuspec33 with GPU-model constraints kept on a
                          random 15% of the GPU pods instead of 34%
  multigpu30              default plus multi-GPU pods resampled from default's
                          until they ask for 30% of the GPU work (multigpu50:
                          50%, as that list is built)
  cpuonly2x               default plus as many cpu-only pods again, resampled

Usage: fgd_variants.py TRACES_DIR OUTDIR [SEED]
"""
import csv
import random
import sys


def read(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def write(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def is_share(r):
    return int(r["num_gpu"]) == 1 and int(r["gpu_milli"]) < 1000


def demand(r):
    return int(r["num_gpu"]) * int(r["gpu_milli"])


def gpushare(rows, frac, rnd):
    gpu = [r for r in rows if int(r["num_gpu"]) > 0]
    shares = [r for r in gpu if is_share(r)]
    f0 = len(shares) / len(gpu)
    q = (frac - f0) / (1 - f0)
    out = []
    for r in rows:
        r = dict(r)
        if int(r["num_gpu"]) > 0 and not is_share(r) and rnd.random() < q:
            s = rnd.choice(shares)
            r["num_gpu"], r["gpu_milli"] = s["num_gpu"], s["gpu_milli"]
        out.append(r)
    return out


def gpuspec(rows, frac, rnd):
    gpu = sum(1 for r in rows if int(r["num_gpu"]) > 0)
    spec = sum(1 for r in rows if r["gpu_spec"])
    keep = frac * gpu / spec
    out = []
    for r in rows:
        r = dict(r)
        if r["gpu_spec"] and rnd.random() >= keep:
            r["gpu_spec"] = ""
        out.append(r)
    return out


def multigpu(rows, frac, rnd):
    multi = [r for r in rows if int(r["num_gpu"]) > 1]
    out = [dict(r) for r in rows]
    total = sum(demand(r) for r in rows)
    mdem = sum(demand(r) for r in multi)
    k = 0
    while mdem < frac * total:
        r = dict(rnd.choice(multi))
        r["name"] = "%s-m%d" % (r["name"], k)
        k += 1
        out.append(r)
        mdem += demand(r)
        total += demand(r)
    return out


def cpuonly(rows, factor, rnd):
    cpu = [r for r in rows if int(r["num_gpu"]) == 0]
    out = [dict(r) for r in rows]
    for k in range(int(len(cpu) * (factor - 1))):
        r = dict(rnd.choice(cpu))
        r["name"] = "%s-c%d" % (r["name"], k)
        out.append(r)
    return out


def main():
    base = sys.argv[1] + "/alibaba-openb-2023/"
    outdir = sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    fields, default = read(base + "openb_pod_list_default.csv")
    _, spec33 = read(base + "openb_pod_list_gpuspec33.csv")
    lists = {
        "gpushare50": gpushare(default, 0.50, random.Random(seed)),
        "gpushare60": gpushare(default, 0.60, random.Random(seed)),
        "gpushare70": gpushare(default, 0.70, random.Random(seed)),
        "gpushare80": gpushare(default, 0.80, random.Random(seed)),
        "gpuspec15": gpuspec(spec33, 0.15, random.Random(seed)),
        "multigpu30": multigpu(default, 0.30, random.Random(seed)),
        "cpuonly2x": cpuonly(default, 2.0, random.Random(seed)),
    }
    for name, rows in lists.items():
        write("%s/openb_pod_list_%s.csv" % (outdir, name), fields, rows)
        print(name, len(rows))


if __name__ == "__main__":
    main()
