# corral validate: the reference examples, the typos people make, and hostile
# input (empty, binary, huge, deeply nested) that must fail cleanly and fast.
# run-scripts: alone (hostile input must fail within 5 s)
. tests/cli/lib.bash

expect_exit 0 "$CORRAL" validate -f examples/
for ref in Node/gpu-node-1 Node/gpu-node-2 Pod/default/cuda-vector-add Queue/training-queue \
    Queue/inference Job/default/llama-finetune Job/default/pretrain-8gpu \
    InferenceService/default/llama3-service HyperNode/rack-a HyperNode/rack-b HyperNode/spine; do
    expect_out "ok  $ref"
done

# The exact text from the issue: located on line 9, names the field, suggests the fix.
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n name: training-queue\nspec:\n weight: 10\n capability:\n  nvidia.com/gpu: 16\n reclaimable:true\n' >"$TMP/q.yaml"
expect_exit 2 "$CORRAL" validate -f "$TMP/q.yaml"
expect_out "$TMP/q.yaml:9:"
expect_out "reclaimable: true"

# Several errors in one file are all reported, in line order, with hints.
cat >"$TMP/many.yaml" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: pg
spec:
  minMemeber: 8
  minResources:
    memory: 16GB
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: x
    resources:
      limits:
        nvidia.com/gpu: 0.5
YAML
expect_exit 2 "$CORRAL" validate -f "$TMP/many.yaml"
expect_out "$TMP/many.yaml:6:3: warning: spec.minMemeber"
expect_out "did you mean \`minMember\`"
expect_out "$TMP/many.yaml:8:13: spec.minResources.memory"
expect_out "\`16Gi\` or \`16G\`"
expect_out "$TMP/many.yaml:20:25:"
expect_out "corral.dev/gpu-milli"
first=$(printf '%s\n' "$OUT" | grep -n 'many.yaml:6:' | cut -d: -f1)
last=$(printf '%s\n' "$OUT" | grep -n 'many.yaml:20:' | cut -d: -f1)
[ "$first" -lt "$last" ] || fail "diagnostics not in line order"

# A list item without a space after the dash.
cat >"$TMP/dash.yaml" <<'YAML'
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: s
spec:
  predictor:
    scaleMetrics:
    -type: gpu_utilization
    containers:
    - name: c
      image: x
YAML
expect_exit 2 "$CORRAL" validate -f "$TMP/dash.yaml"
expect_out "$TMP/dash.yaml:8:"
expect_out "- type"

# Warnings alone still pass; --strict turns them into failures.
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  lables: {a: b}\n' >"$TMP/warn.yaml"
expect_exit 0 "$CORRAL" validate -f "$TMP/warn.yaml"
expect_out "did you mean \`labels\`"
expect_out "ok  Namespace/ml"
expect_exit 2 "$CORRAL" validate --strict -f "$TMP/warn.yaml"

# Standard input, JSON, multi-document.
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"j"}}' >"$TMP/ns.json"
expect_exit 0 "$CORRAL" validate -f "$TMP/ns.json"
expect_out "ok  Namespace/j"
OUT=$(printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n' | "$CORRAL" validate -f - 2>&1) || fail "stdin"
expect_out "ok  Namespace/b"

# A NUL character from an escape is refused in a name (C code would see
# "ab"), in YAML and in JSON; ConfigMap data may hold one, as in kube.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "ab\\u0000c"\n' >"$TMP/nul.yaml"
expect_exit 2 "$CORRAL" validate -f "$TMP/nul.yaml"
expect_out "nul.yaml:4:10: metadata.name: must not contain a NUL character"
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ab\\u0000c"}}' >"$TMP/nul.json"
expect_exit 2 "$CORRAL" validate -f "$TMP/nul.json"
expect_out "metadata.name: must not contain a NUL character"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\ndata:\n  k: "a\\u0000b"\n' >"$TMP/nuldata.yaml"
expect_exit 0 "$CORRAL" validate -f "$TMP/nuldata.yaml"

# A tab in indentation is reported on its own line, not the next one.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\ndata:\n  a: b\n' >"$TMP/tab.yaml"
expect_exit 2 "$CORRAL" validate -f "$TMP/tab.yaml"
expect_out "tab.yaml:4:1: metadata: YAML syntax error: tab character"

# Hostile input: clean error, exit 2, fast (the timeout makes a hang fail).
: >"$TMP/empty.yaml"
head -c 1000000 /dev/urandom >"$TMP/random.yaml"
python3 -c "print('['*10000 + ']'*10000)" >"$TMP/nested.yaml"
python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    for i in range(10000): f.write(' ' * i + '-\n')" "$TMP/nested2.yaml"
head -c 100000000 /dev/zero | tr '\0' 'a' >"$TMP/huge.yaml"
for f in empty random nested nested2 huge; do
    expect_exit 2 timeout 5 "$CORRAL" validate -f "$TMP/$f.yaml"
    expect_out "$TMP/$f.yaml"
    printf '%s' "$OUT" | grep -qiE 'sanitizer|segmentation|core dumped' && fail "$f crashed"
done

# The engine's limits, said rather than ignored: a node with more GPUs than
# Corral places on (a warning), more kinds of extended resources than it
# tracks (the node: a warning; a pending pod asking for one: an error), a
# queue tree that loops.
python3 - "$TMP/limits.yaml" <<'PY'
import sys
docs = ["apiVersion: v1\nkind: Node\nmetadata: {name: big}\nstatus: {allocatable: {cpu: '8', "
        "nvidia.com/gpu: '72'}}\n"]
res = ", ".join("ex.com/r%d: '1'" % i for i in range(12))
docs.append("apiVersion: v1\nkind: Node\nmetadata: {name: many}\nstatus: {allocatable: {cpu: "
            "'8', %s}}\n" % res)
docs.append("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, "
            "image: x, resources: {limits: {ex.com/r11: 1}}}]}\n")
for q, parent in (("qa", "qc"), ("qb", "qa"), ("qc", "qb")):
    docs.append("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\n"
                "spec: {weight: 1, parent: %s}\n" % (q, parent))
open(sys.argv[1], "w").write("---\n".join(docs))
PY
expect_exit 2 "$CORRAL" validate -f "$TMP/limits.yaml"
expect_out "node big has 72 GPUs; Corral places pods on at most 64"
expect_out "Node many: extended resource ex.com/r11 is one too many: Corral tracks at most 11"
expect_out "Pod p: extended resource ex.com/r11 is one too many"
expect_out "the pod is not scheduled"
expect_out "queue qc: its parent qb is the queue itself or one of its descendants"
expect_out "ok  Node/big"
printf '%s' "$OUT" | grep -q "ok  Pod/default/p" && fail "a refused pod is not ok"

# Missing files and unknown options.
expect_exit 2 "$CORRAL" validate -f "$TMP/nope.yaml"
expect_out "No such file"
expect_exit 2 "$CORRAL" validate
expect_exit 2 "$CORRAL" validate --bogus
finish
