#!/bin/bash
# make bench-sim: the efficiency comparison of docs/efficiency.md.
#
#   - the FGD protocol (10 seeds) on the four shared openb pod lists, every
#     policy plus our FGD implementation, next to the FGD paper's published
#     per-seed results (fgd-expected-results/);
#   - the Philly replay on 50 nodes x 8 GPUs: fifo, spread, binpack, corral;
#   - the fair Philly comparison: fifo, fifo-easy (EASY backfill) and corral
#     given the same runtime estimates (user, oracle, none), and corral with
#     checkpointing jobs;
#   - the share-packing floor of each openb list (bench/share_bound.py).
#
# Results (JSON, reports with SVG charts, timings and the markdown tables)
# go to build/bench-sim/. The traces are read in place from ../shared/traces
# (TRACES overrides). Run on an otherwise idle machine for the timings.
set -eu
TRACES=${TRACES:-../shared/traces}
CORRAL=${CORRAL:-build/corral}
OUT=${OUT:-build/bench-sim}
SEEDS=${SEEDS:-10}
openb=$TRACES/alibaba-openb-2023
mkdir -p "$OUT"

timed() { # timed NAME CMD...: run CMD, append "NAME seconds" to $OUT/times.txt
    local name=$1 t0 t1
    shift
    t0=$(date +%s.%N)
    "$@"
    t1=$(date +%s.%N)
    printf "%s %.1f\n" "$name" "$(echo "$t1 - $t0" | bc)" | tee -a "$OUT/times.txt" >&2
}

: >"$OUT/times.txt"
{
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "date: $(date -u +%Y-%m-%d)"
    echo "corral: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$OUT/machine.txt"

for list in default gpushare100 gpuspec33 multigpu50; do
    # Every policy of --policy all plus our FGD, 10 seeds: one run, timed.
    timed "fgd-$list" "$CORRAL" sim --protocol fgd --cluster "$openb/openb_node_list_gpu_node.csv" \
        --trace "$openb/openb_pod_list_$list.csv" --policy all --policy fgd --seeds "$SEEDS" \
        --output json --report "$OUT/fgd-$list" >"$OUT/fgd-$list.json"
done

timed philly-replay "$CORRAL" sim --nodes 50 --gpus-per-node 8 \
    --trace "$TRACES/philly/philly_jobs_pollux.csv" --policy fifo --policy spread \
    --policy binpack --policy corral --estimates oracle --output json --report "$OUT/philly" \
    >"$OUT/philly.json"

# The fair comparison (docs/efficiency.md "The Philly replay"). fifo ignores
# estimates (no backfill), so it runs once; fifo-easy walks its whole deep
# queue at every completion, so these runs take minutes, not seconds.
philly() { # philly NAME ARGS...: one replay of the fair comparison, as JSON
    local name=$1
    shift
    timed "philly-fair-$name" "$CORRAL" sim --nodes 50 --gpus-per-node 8 \
        --trace "$TRACES/philly/philly_jobs_pollux.csv" --output json "$@" \
        >"$OUT/philly-fair-$name.json"
}
philly user --policy fifo --policy fifo-easy --policy corral --estimates user
philly oracle --policy fifo-easy --policy corral --estimates oracle
philly none --policy fifo-easy --policy corral --estimates none
philly user-ckpt1h --policy corral --estimates user --checkpoint-interval 1h
philly user-ckpt30m-minrt30m --policy corral --estimates user --checkpoint-interval 30m \
    --min-runtime 30m
philly user-minrt1h --policy corral --estimates user --min-runtime 1h

python3 bench/sim_tables.py "$OUT" "$TRACES/fgd-expected-results" >"$OUT/tables.md"
{
    echo
    echo "### Share-packing floor (bench/share_bound.py, % of GPU capacity)"
    echo
    python3 bench/share_bound.py "$TRACES" "$SEEDS"
} >>"$OUT/tables.md"
echo "tables: $OUT/tables.md"
