#!/bin/bash
# make bench-cv: cross-validation of the corral policy's score constants
# (docs/efficiency.md, "Cross-validation").
#
#   1. builds held-out pod lists from the shared ones (bench/fgd_variants.py)
#      into $OUT/lists (never committed, never under the shared traces);
#   2. runs the FGD protocol for every variant below on the four shared lists
#      and the held-out ones (build/bench/fgd_cv, niced, $SEEDS seeds);
#   3. picks, for each pair of shared lists, the variant that does best on
#      them and reports it on the other two (bench/fgd_cv.py) -> $OUT/cv.md.
#
# SEEDS=3 seeds on the shared lists, HELD_SEEDS=2 on the held-out ones (the
# table in docs/efficiency.md used these): about 30 minutes on 2 busy cores.
# THREADS sets the parallel runs (2).
set -eu
TRACES=${TRACES:-../shared/traces}
OUT=${OUT:-build/bench-cv}
SEEDS=${SEEDS:-3}
HELD_SEEDS=${HELD_SEEDS:-2}
THREADS=${THREADS:-2}
openb=$TRACES/alibaba-openb-2023
mkdir -p "$OUT/lists"
python3 bench/fgd_variants.py "$TRACES" "$OUT/lists" >/dev/null

# Each variant is a set of corral_score_tune_t fields over the defaults
# (include/corral/engine.h); "base" is the engine's default, "fgd" the fgd
# policy for reference.
VARIANTS=(
    fgd
    base
    sgpu:share_gpu=1
    sfirst:share_first=1
    snode:share_node=1
    cpupod:cpu_pod=1
    cpupod2:cpu_pod=2
    wcpu:whole_cpu=1
    nosp:share_pack=0
    nowp:whole_pack=0
    always:share_heavy=1000
    nopack:share_pack=0,whole_pack=0,cpu_pack=0
)
args=()
for v in "${VARIANTS[@]}"; do args+=(--variant "$v"); done
cluster=$openb/openb_node_list_gpu_node.csv
shared=()
for l in default gpushare100 gpuspec33 multigpu50; do
    shared+=(--list "$l=$openb/openb_pod_list_$l.csv")
done
held=()
for f in "$OUT"/lists/openb_pod_list_*.csv; do
    l=${f##*/openb_pod_list_}
    held+=(--list "${l%.csv}=$f")
done
nice -n 10 build/bench/fgd_cv --cluster "$cluster" "${shared[@]}" "${args[@]}" \
    --seeds "$SEEDS" --threads "$THREADS" >"$OUT/runs-shared.tsv"
nice -n 10 build/bench/fgd_cv --cluster "$cluster" "${held[@]}" "${args[@]}" \
    --seeds "$HELD_SEEDS" --threads "$THREADS" >"$OUT/runs-held.tsv"
python3 bench/fgd_cv.py "$TRACES/fgd-expected-results" "$OUT/runs-shared.tsv" "$OUT/runs-held.tsv" >"$OUT/cv.md"
echo "cross-validation: $OUT/cv.md"
