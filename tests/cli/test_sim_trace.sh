# corral sim on traces: both protocols end to end on tiny hand-made files,
# JSON and reports, bad rows (FILE:LINE, exit 2), bad flags, determinism.
. tests/cli/lib.bash

json() { # json FILE EXPR: print a value from a JSON file
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
}

# --- replay: the worked example of tests/sim/test_replay.c, as a Philly CSV ---
cat >"$TMP/jobs.csv" <<'CSV'
timestamp,duration,num_gpus,gpu_time,cluster
2017-10-09 07:00:00,100,2,200,vc1
2017-10-09 07:00:10,50,4,200,vc1
2017-10-09 07:00:20,30,1,30,vc2
2017-10-09 07:03:20,10,1,10,vc2
CSV
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" --policy fifo \
    --output json
printf '%s' "$OUT" >"$TMP/fifo.json"
[ "$(json "$TMP/fifo.json" 'd["allocation_mean_pct"]')" = "53.75" ] || fail "fifo allocation: $OUT"
[ "$(json "$TMP/fifo.json" 'd["queueing_delay_s"]["p99"]')" = "130.0" ] || fail "fifo p99: $OUT"
[ "$(json "$TMP/fifo.json" 'd["jct_s"]["mean"]')" = "102.5" ] || fail "fifo jct: $OUT"
[ "$(json "$TMP/fifo.json" 'len(d["queues"])')" = "2" ] || fail "queues: $OUT"

# Text table, several policies side by side, and the report with its charts.
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" \
    --policy fifo --policy corral --report "$TMP/rep"
expect_out "fifo       53.75"
expect_out "corral"
expect_out "share of GPU-time by queue"
for f in report.md allocation.svg delay-cdf.svg; do
    [ -s "$TMP/rep/$f" ] || fail "report lacks $f"
done
xmllint --noout "$TMP/rep/allocation.svg" "$TMP/rep/delay-cdf.svg" || fail "SVG not well-formed"
grep -q '| fifo | 53.75' "$TMP/rep/report.md" || fail "report table: $(cat "$TMP/rep/report.md")"

# The same run twice: the same output.
"$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" --policy all --output json \
    >"$TMP/a.json" 2>&1
"$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" --policy all --output json \
    >"$TMP/b.json" 2>&1
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "two replays differ"
[ "$(json "$TMP/a.json" 'len(d["policies"])')" = "7" ] || fail "--policy all: $(cat "$TMP/a.json")"

# Nodes from a YAML file of Node objects.
cat >"$TMP/nodes.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.product: H100}}
status:
  allocatable: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
YAML
expect_exit 0 "$CORRAL" sim --cluster "$TMP/nodes.yaml" --trace "$TMP/jobs.csv" --policy fifo
expect_out "1 nodes, 4 GPUs"
expect_out "fifo       53.75"

# --- fgd: two one-GPU nodes, pods of 0.6 GPU (tests/sim/test_fgd_protocol.c) ---
printf 'sn,cpu_milli,memory_mib,gpu,model\na,32000,65536,1,V100M16\nb,32000,65536,1,V100M16\n' \
    >"$TMP/nodes.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,600\n' >"$TMP/pods.csv"
expect_exit 0 "$CORRAL" sim --protocol fgd --cluster "$TMP/nodes.csv" --trace "$TMP/pods.csv" \
    --seeds 3 --output json
printf '%s' "$OUT" >"$TMP/fgd.json"
[ "$(json "$TMP/fgd.json" 'd["unallocated_gpu_pct_at_100"]')" = "40.0" ] || fail "fgd: $OUT"
[ "$(json "$TMP/fgd.json" 'd["points"][3]["frag_pct"]')" = "40.0" ] || fail "fgd frag: $OUT"
expect_exit 0 "$CORRAL" sim --protocol fgd --cluster "$TMP/nodes.csv" --trace "$TMP/pods.csv" \
    --seeds 2 --policy binpack --policy bestfit --report "$TMP/fgdrep"
expect_out "unallocated GPU %"
[ -s "$TMP/fgdrep/allocation.svg" ] || fail "fgd report lacks its chart"

# --- --config: a SchedulerConfiguration applies to the policies run ---
# One queue: with backfill (corral) the 1-GPU job at 20 s runs at once, in
# strict order without backfill it waits for the 4-GPU job (130 s).
sed 's/vc2/vc1/' "$TMP/jobs.csv" >"$TMP/jobs1.csv"
cat >"$TMP/strict.yaml" <<'YAML'
apiVersion: corral.dev/v1alpha1
kind: SchedulerConfiguration
metadata: {name: strict}
spec:
  actions: enqueue, allocate
  strictOrder: true
  policy: binpack
YAML
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" --output json \
    --estimates oracle
printf '%s' "$OUT" >"$TMP/c0.json"
[ "$(json "$TMP/c0.json" 'd["queueing_delay_s"]["p99"]')" = "90.0" ] || fail "corral p99: $OUT"
[ "$(json "$TMP/c0.json" 'd["estimates"]')" = "oracle" ] || fail "estimates: $OUT"

# --- --estimates: what every policy is told (tests/sim/test_replay.c) ---
# By default users ask for a time limit: the 100 s job asks for 15m, so the
# 30 s job (asking 15m too) no longer ends before the reservation: it waits.
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" --output json
printf '%s' "$OUT" >"$TMP/c0u.json"
[ "$(json "$TMP/c0u.json" 'd["queueing_delay_s"]["p99"]')" = "130.0" ] || fail "user p99: $OUT"
[ "$(json "$TMP/c0u.json" 'd["estimates"]')" = "user" ] || fail "default estimates: $OUT"
# FIFO with EASY backfill, oracle estimates: the 1-GPU job backfills (ends
# at 50 s, before the 4-GPU job's reservation at 100 s); without estimates
# nothing is reserved and it starts at once too: in both the 4-GPU job waits
# 90 s for the first one to end (p99 90 s; plain fifo: 130 s).
for e in oracle none; do
    expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
        --policy fifo-easy --estimates "$e" --output json
    printf '%s' "$OUT" >"$TMP/e.json"
    [ "$(json "$TMP/e.json" 'd["queueing_delay_s"]["p99"]')" = "90.0" ] || fail "easy $e: $OUT"
done
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
    --policy fifo --estimates oracle --checkpoint-interval 1h --min-runtime 30m
expect_out "runtime estimates: oracle; checkpoints every 60m; min-runtime 30m"
expect_out "fifo       53.75"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" --estimates exact
expect_out "--estimates must be oracle, user or none"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
    --checkpoint-interval soon
expect_out "--checkpoint-interval expects a duration"
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
    --config "$TMP/strict.yaml" --policy corral --output json
printf '%s' "$OUT" >"$TMP/c1.json"
[ "$(json "$TMP/c1.json" 'd["queueing_delay_s"]["p99"]')" = "130.0" ] || fail "strict p99: $OUT"
[ "$(json "$TMP/c1.json" 'd["policy"]')" = "corral" ] || fail "--policy decides: $OUT"
expect_exit 0 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
    --config "$TMP/strict.yaml" --output json
printf '%s' "$OUT" >"$TMP/c2.json"
[ "$(json "$TMP/c2.json" 'd["policy"]')" = "binpack" ] || fail "config's policy: $OUT"
printf 'apiVersion: corral.dev/v1alpha1\nkind: SchedulerConfiguration\nmetadata: {name: x}\n'\
'spec:\n  actions: [allocate, prempt]\n' >"$TMP/badconf.yaml"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
    --config "$TMP/badconf.yaml"
expect_out "$TMP/badconf.yaml:5:23: spec.actions[1]: unknown action \"prempt\"; did you mean \`preempt\`?"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs1.csv" \
    --config "$TMP/jobs1.csv"

# --- bad input: each bad row as FILE:LINE, exit 2, nothing run ---
printf 'timestamp,duration,num_gpus\n2017-10-09 07:00:00,100,2\n2017-10-09 07:00:10,x,4\n' \
    >"$TMP/bad.csv"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/bad.csv"
expect_out "$TMP/bad.csv:3:"
printf 'sn,cpu_milli,memory_mib,gpu,model\na,32000,65536,-1,V100M16\n' >"$TMP/badnodes.csv"
expect_exit 2 "$CORRAL" sim --protocol fgd --cluster "$TMP/badnodes.csv" --trace "$TMP/pods.csv"
expect_out "$TMP/badnodes.csv:2:"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/none.csv"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" --policy nope
expect_out 'unknown policy "nope"'
expect_exit 2 "$CORRAL" sim --trace "$TMP/jobs.csv"
expect_out "--nodes N --gpus-per-node G"
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" --protocol x
expect_exit 2 "$CORRAL" sim --nodes 1 --gpus-per-node 4 --trace "$TMP/jobs.csv" --seeds 0
# Pods without creation times cannot be replayed, only placed (fgd).
expect_exit 2 "$CORRAL" sim --cluster "$TMP/nodes.csv" --trace "$TMP/pods.csv"
expect_out "use --protocol fgd"

finish
