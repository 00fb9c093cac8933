#!/usr/bin/env python3
"""How many GPUs must stay unallocated because shares of a GPU leave gaps.

For each openb pod list: draw pods as the FGD protocol does (with
replacement, until the next one would take the GPU request past the
cluster's capacity: "100% arrived"), keep the GPU shares (one GPU, under
1000 milli), and pack them into GPUs of 1000 milli three ways:

  L2      Martello and Toth's lower bound on the number of GPUs any packing
          needs (no scheduler, even offline with migration, does better);
  FFD     first-fit decreasing, offline (sees every share, sorted);
  BF      best fit, online, in arrival order (the tightest GPU that fits).

The room left in those GPUs cannot hold whole-GPU pods, so it is a floor on
the unallocated GPU % at 100% arrived (cpu, GPU models and multi-GPU pods
needing one node only add to it). Printed as % of cluster GPU capacity,
mean over the seeds. Usage: share_bound.py TRACES_DIR [SEEDS]
"""
import bisect
import csv
import math
import random
import sys


def load(path):
    with open(path, newline="") as f:
        return [(int(r["num_gpu"]), int(r["gpu_milli"])) for r in csv.DictReader(f)]


def capacity(path):
    with open(path, newline="") as f:
        return sum(int(r["gpu"]) for r in csv.DictReader(f)) * 1000


def sample(pods, cap, seed):
    """Shares among pods drawn until the next would exceed capacity."""
    rnd = random.Random(seed)
    shares, total = [], 0
    while True:
        gpus, milli = pods[rnd.randrange(len(pods))]
        if total + gpus * milli > cap:
            return shares
        total += gpus * milli
        if gpus == 1 and milli < 1000:
            shares.append(milli)


def l2_bins(shares):
    """Martello-Toth L2: for each threshold a <= 500, items above 1000-a need
    a GPU each, items in (500, 1000-a] too, and items in [a, 500] can only
    use the room those leave."""
    best = 0
    for a in sorted({0} | {x for x in shares if x <= 500}):
        big = sum(1 for x in shares if x > 1000 - a)
        mid = [x for x in shares if 500 < x <= 1000 - a]
        small = sum(x for x in shares if a <= x <= 500)
        spill = small - (len(mid) * 1000 - sum(mid))
        best = max(best, big + len(mid) + max(0, math.ceil(spill / 1000)))
    return best


def ffd_bins(shares):
    rooms = []
    for s in sorted(shares, reverse=True):
        for i, room in enumerate(rooms):
            if room >= s:
                rooms[i] -= s
                break
        else:
            rooms.append(1000 - s)
    return len(rooms)


def bf_bins(shares):
    rooms, n = [], 0  # rooms kept sorted
    for s in shares:
        i = bisect.bisect_left(rooms, s)
        if i < len(rooms):
            room = rooms.pop(i) - s
            bisect.insort(rooms, room)
        else:
            n += 1
            bisect.insort(rooms, 1000 - s)
    return n


def main():
    traces = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    base = traces + "/alibaba-openb-2023/"
    cap = capacity(base + "openb_node_list_gpu_node.csv")
    print("| list | L2 (floor) | FFD, offline | best fit, online |")
    print("|---|---|---|---|")
    for name in ("default", "gpushare100", "gpuspec33", "multigpu50"):
        pods = load(base + "openb_pod_list_%s.csv" % name)
        res = {"l2": 0.0, "ffd": 0.0, "bf": 0.0}
        for seed in range(seeds):
            shares = sample(pods, cap, seed)
            used = sum(shares)
            for key, fn in (("l2", l2_bins), ("ffd", ffd_bins), ("bf", bf_bins)):
                res[key] += 100.0 * (fn(shares) * 1000 - used) / cap / seeds
        print("| %s | %.2f | %.2f | %.2f |" % (name, res["l2"], res["ffd"], res["bf"]))


if __name__ == "__main__":
    main()
