#!/usr/bin/env python3
"""Markdown tables for docs/efficiency.md from bench/sim.sh's results.

usage: sim_tables.py RESULTS_DIR FGD_EXPECTED_DIR

Corral's FGD-protocol numbers (mean and standard deviation over seeds) next
to the FGD paper's published per-seed results for the same lists, and the
Philly replay summary.
"""
import collections
import csv
import json
import os
import statistics
import sys

LISTS = ["default", "gpushare100", "gpuspec33", "multigpu50"]
POINTS = [50, 75, 90, 100, 110, 130]
PUBLISHED = ["01-Random", "02-DotProd", "03-GpuClustering", "04-GpuPacking", "05-BestFit", "06-FGD"]


def published(expected_dir):
    """{(list, policy): {point: (mean, sd)}} for allocation and fragmentation."""
    out = {}
    for what, name in (("alloc", "allo"), ("frag", "frag"), ("ratio", "frag_ratio")):
        path = os.path.join(expected_dir, f"analysis_{name}_discrete.csv")
        runs = collections.defaultdict(list)
        for row in csv.DictReader(open(path)):
            runs[(row["workload"].replace("openb_pod_list_", ""), row["sc_policy"])].append(row)
        for key, rows in runs.items():
            for p in POINTS:
                vals = [float(r[str(p)]) for r in rows]
                out.setdefault(key, {}).setdefault(what, {})[p] = (
                    statistics.mean(vals), statistics.stdev(vals) if len(vals) > 1 else 0.0)
    return out


def ours(results):
    """{(list, policy): {"unalloc"|"frag"|"ratio": {point: (mean, sd)}}}"""
    out = {}
    for lst in LISTS:
        path = os.path.join(results, f"fgd-{lst}.json")
        if not os.path.exists(path):
            continue
        d = json.load(open(path))
        for pol in d.get("policies", [d]):
            m = {"unalloc": {}, "frag": {}, "ratio": {}}
            for pt in pol["points"]:
                p = pt["arrived_pct"]
                m["unalloc"][p] = (pt["unallocated_pct"], pt["allocation_pct_sd"])
                m["frag"][p] = (pt["frag_pct"], pt["frag_pct_sd"])
                m["ratio"][p] = (pt["frag_ratio_pct"], 0.0)
            out[(lst, pol["policy"])] = m
    return out


def unalloc_table(o, pub):
    print("### Unallocated GPU % at 100% arrived (mean ± sd over 10 seeds; lower is better)\n")
    print("| policy | " + " | ".join(LISTS) + " |")
    print("|---|" + "---|" * len(LISTS))
    names = sorted({p for (_, p) in o}, key=lambda p: (p != "corral", p))
    for pol in names:
        cells = []
        for lst in LISTS:
            v = o.get((lst, pol), {}).get("unalloc", {}).get(100)
            cells.append(f"{v[0]:.2f} ± {v[1]:.2f}" if v else "")
        label = "**corral**" if pol == "corral" else pol + (" (ours)" if pol == "fgd" else "")
        print(f"| {label} | " + " | ".join(cells) + " |")
    for pol in PUBLISHED:
        cells = []
        for lst in LISTS:
            v = pub.get((lst, pol), {}).get("alloc", {}).get(100)
            cells.append(f"{100 - v[0]:.2f} ± {v[1]:.2f}" if v else "")
        print(f"| paper: {pol[3:]} | " + " | ".join(cells) + " |")
    print()


def points_table(o, pub, lst, what, title):
    print(f"### {lst}: {title}\n")
    print("| policy | " + " | ".join(f"{p}%" for p in POINTS) + " |")
    print("|---|" + "---|" * len(POINTS))
    for (l, pol), m in sorted(o.items(), key=lambda kv: (kv[0][1] != "corral", kv[0][1])):
        if l != lst:
            continue
        print(f"| {pol} | " + " | ".join(f"{m[what][p][0]:.2f}" for p in POINTS) + " |")
    key = {"unalloc": "alloc", "frag": "frag", "ratio": "ratio"}[what]
    for pol in PUBLISHED:
        m = pub.get((lst, pol), {}).get(key)
        if not m:
            continue
        vals = [100 - m[p][0] if what == "unalloc" else m[p][0] for p in POINTS]
        print(f"| paper: {pol[3:]} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    print()


def philly_table(results):
    path = os.path.join(results, "philly.json")
    if not os.path.exists(path):
        return
    d = json.load(open(path))
    print(f"### Philly replay: {d['nodes']} nodes, {d['gpus']} GPUs, "
          f"arrivals over {d['window_s'] / 86400:.1f} days\n")
    print("| policy | mean alloc % | p50 alloc % | delay p50 | delay p95 | delay p99 | JCT mean |"
          " evicted pods | lost GPU-h |")
    print("|---|---|---|---|---|---|---|---|---|")

    def dur(s):
        return f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.1f} d"
    for p in d["policies"]:
        q = p["queueing_delay_s"]
        print(f"| {p['policy']} | {p['allocation_mean_pct']:.2f} | {p['allocation_p50_pct']:.2f} | "
              f"{dur(q['p50'])} | {dur(q['p95'])} | {dur(q['p99'])} | {dur(p['jct_s']['mean'])} | "
              f"{p['preempted_pods']} | {p['lost_gpu_hours']:.0f} |")
    print()


FAIR_RUNS = ["user", "oracle", "none", "user-ckpt1h", "user-ckpt30m-minrt30m", "user-minrt1h"]


def philly_fair_table(results):
    """The fair comparison: every policy given the same estimates, per model."""
    rows = []
    for run in FAIR_RUNS:
        path = os.path.join(results, f"philly-fair-{run}.json")
        if os.path.exists(path):
            d = json.load(open(path))
            for p in d.get("policies", [d]):
                rows.append((d, p))
    if not rows:
        return
    print("### Philly replay, the fair comparison (same estimates for every policy)\n")
    print("| policy | estimates | checkpoints | min-runtime | mean alloc % | p50 alloc % | delay p50 |"
          " delay p95 | delay p99 | JCT mean | evicted pods | lost GPU-h |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")

    def dur(s):
        return f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.1f} d"

    def opt(s):
        return dur(s) if s > 0 else "-"
    for d, p in rows:
        q = p["queueing_delay_s"]
        print(f"| {p['policy']} | {d['estimates']} | {opt(d['checkpoint_interval_s'])} | "
              f"{opt(d['min_runtime_s'])} | {p['allocation_mean_pct']:.2f} | "
              f"{p['allocation_p50_pct']:.2f} | {dur(q['p50'])} | {dur(q['p95'])} | "
              f"{dur(q['p99'])} | {dur(p['jct_s']['mean'])} | {p['preempted_pods']} | "
              f"{p['lost_gpu_hours']:.0f} |")
    print()


def main():
    results, expected = sys.argv[1], sys.argv[2]
    o, pub = ours(results), published(expected)
    unalloc_table(o, pub)
    for lst in LISTS:
        points_table(o, pub, lst, "unalloc", "unallocated GPU % as work arrives")
        points_table(o, pub, lst, "frag", "fragmentation, % of GPU capacity")
    philly_table(results)
    philly_fair_table(results)
    times = os.path.join(results, "times.txt")
    if os.path.exists(times):
        print("### Run times (seconds)\n")
        print("| run | s |\n|---|---|")
        for line in open(times):
            name, secs = line.split()
            print(f"| {name} | {secs} |")


if __name__ == "__main__":
    main()
