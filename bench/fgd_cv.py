#!/usr/bin/env python3
"""Cross-validation of the corral policy's score constants on the openb lists.

Reads the runs bench/fgd_cv prints (variant, list, seed, unallocated GPU % at
100% arrived, failed pods) and prints markdown:

  1. every variant on every list (mean over seeds), next to the paper's FGD;
  2. for each of the 6 ways to pick two of the four shared lists: the variant
     chosen on those two ("train") and what it gives on the other two
     ("test"), under two rules:
       mean     the lowest mean unallocated % over the two train lists;
       no-harm  the lowest worst-case change against the default ("base") over
                the two train lists; base unless some variant is better on both
                by more than MARGIN (0.05 points: about one standard error of a
                paired 3-seed difference, so noise does not pick);
  3. the held-out lists (bench/fgd_variants.py): every variant, and which
     rule-chosen variants help or hurt there.

Usage: fgd_cv.py FGD_EXPECTED_DIR RUNS.tsv...
"""
import collections
import csv
import itertools
import os
import statistics
import sys

SHARED = ["default", "gpushare100", "gpuspec33", "multigpu50"]
MARGIN = 0.05


def paper_fgd(expected_dir):
    """{list: (mean, sd)} of the paper's FGD, unallocated % at 100% arrived."""
    runs = collections.defaultdict(list)
    path = os.path.join(expected_dir, "analysis_allo_discrete.csv")
    for row in csv.DictReader(open(path)):
        if row["sc_policy"] == "06-FGD":
            runs[row["workload"].replace("openb_pod_list_", "")].append(100 - float(row["100"]))
    return {k: (statistics.mean(v), statistics.stdev(v)) for k, v in runs.items()}


def load(paths):
    res = collections.defaultdict(list)
    order_v, order_l = {}, {}
    for p in paths:
        for line in open(p):
            v, lst, _seed, u, _failed = line.rstrip("\n").split("\t")
            res[(v, lst)].append(float(u))
            order_v.setdefault(v, len(order_v))
            order_l.setdefault(lst, len(order_l))
    return res, list(order_v), list(order_l)


def mean(res, v, lst):
    vals = res.get((v, lst))
    return statistics.mean(vals) if vals else None


def fmt(x):
    return "—" if x is None else "%.2f" % x


def choose(res, variants, train, rule):
    cands = [v for v in variants if v != "fgd" and all(mean(res, v, t) is not None for t in train)]
    if rule == "mean":
        return min(cands, key=lambda v: (sum(mean(res, v, t) for t in train), v != "base"))
    worst = {v: max(mean(res, v, t) - mean(res, "base", t) for t in train) for v in cands}
    best = min(cands, key=lambda v: (worst[v], v != "base"))
    return best if worst[best] < -MARGIN else "base"


def main():
    pub = paper_fgd(sys.argv[1])
    res, variants, lists = load(sys.argv[2:])
    shared = [x for x in SHARED if x in lists]
    held = [x for x in lists if x not in SHARED]
    nseeds = max(len(v) for v in res.values())
    print("### Every variant, unallocated GPU %% at 100%% arrived (mean of %d seeds)\n" % nseeds)
    print("| variant | " + " | ".join(lists) + " |")
    print("|---|" + "---|" * len(lists))
    for v in variants:
        print("| %s | %s |" % (v, " | ".join(fmt(mean(res, v, x)) for x in lists)))
    print("| paper: FGD | %s |" % " | ".join(
        "%.2f ± %.2f" % pub[x] if x in pub else "—" for x in lists))
    for rule in ("mean", "no-harm"):
        print("\n### Cross-validation, rule `%s`: tuned on two lists, reported on the other two\n"
              % rule)
        print("| train | chosen | test list | chosen | base | paper FGD |")
        print("|---|---|---|---|---|---|")
        for train in itertools.combinations(shared, 2):
            pick = choose(res, variants, train, rule)
            for t in (x for x in shared if x not in train):
                print("| %s | %s | %s | %s | %s | %s |" % (
                    " + ".join(train), pick, t, fmt(mean(res, pick, t)),
                    fmt(mean(res, "base", t)), "%.2f ± %.2f" % pub[t] if t in pub else "—"))
            if held:
                held_d = [mean(res, pick, h) - mean(res, "base", h) for h in held
                          if mean(res, pick, h) is not None and mean(res, "base", h) is not None]
                if held_d:
                    print("| %s | %s | held-out (%d lists): change vs base | mean %+.2f, "
                          "worst %+.2f | | |" % (" + ".join(train), pick, len(held_d),
                                                 statistics.mean(held_d), max(held_d)))


if __name__ == "__main__":
    main()
