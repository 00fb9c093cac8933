# The InferenceService controller under `corral up`: a service whose
# predictor is a long-running command gets revision 1 (a ControllerRevision),
# a replica in the queue `inference` (created for it), status Ready with
# 100% of the traffic; a predictor change with canaryTrafficPercent 10
# makes revision 2 and splits 90/10 with the tags prev/latest once it is
# ready; 0 rolls back, 10 again and then no percent promote it (revision 1
# scales to zero); `kubectl scale isvc/web --replicas=3` makes 3 replicas;
# `corral get` and `corral describe` show it; deleting the service removes
# its pods. UP_WAIT bounds every wait (seconds).
. tests/cli/lib.bash
. tests/cli/kube_lib.bash
UP_WAIT=${UP_WAIT:-30}
UP_PID=""
D=$TMP/d
trap up_stop EXIT
if ! "$CORRAL" agent --help >/dev/null 2>&1; then
    echo "note: this build has no 'corral agent': skipped"
    exit 0
fi
find_kubectl
PORT=$(free_port)
up_start "$UP_WAIT" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 1 --stop-timeout 5 \
    --ready-timeout "$UP_WAIT" || { fail "corral up did not come up"; finish; }
export KUBECONFIG=$D/kubeconfig
CTRL=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['controller'])" "$D/endpoints.json")

# svc CMD [CANARY]: the service with the predictor running sleep CMD.
svc() {
    cat <<YAML
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: web}
spec:
  predictor:
    minReplicas: 1
    ${2:+canaryTrafficPercent: $2}
    containers:
    - name: kserve-container
      image: sleeper
      command: [sleep, "$1"]
      ports: [{containerPort: 8000}]
      readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
      resources: {limits: {nvidia.com/gpu: 1}}
YAML
}

# py EXPR: EXPR over the service as JSON (o), printed.
py() {
    "$CORRAL" get isvc web -o json 2>/dev/null |
        python3 -c "import json,sys; o=json.load(sys.stdin); p=o.get('status',{}).get('components',{}).get('predictor',{}); print($1)"
}
# traffic: "rev:percent:tag,..." of the status.
traffic() {
    py "','.join('%s:%s:%s' % (t['revisionName'][-5:], t['percent'], t.get('tag','')) for t in p.get('traffic',[]))"
}
is() { [ "$(eval "$1")" = "$2" ]; }
pods_of() { # REVISION: the names of its pods, not terminating
    "$CORRAL" get pods -l "corral.dev/revision=$1" -o json 2>/dev/null |
        python3 -c "import json,sys; print(len([p for p in json.load(sys.stdin)['items'] if not p['metadata'].get('deletionTimestamp')]))"
}

R1=web-predictor-00001
R2=web-predictor-00002
svc 1000 >"$TMP/s1.yaml"
expect_exit 0 "$CORRAL" apply -f "$TMP/s1.yaml"
until_ok "$UP_WAIT" is traffic "00001:100:latest" || fail "revision 1 has no traffic: $(traffic)"
until_ok "$UP_WAIT" is "py \"p.get('latestReadyRevision')\"" "$R1" ||
    fail "revision 1 not ready: $(py "o.get('status')")"
is "py \"[c['status'] for c in o['status']['conditions'] if c['type']=='Ready'][0]\"" True ||
    fail "not Ready: $(py "o['status']['conditions']")"
is "py \"o['status']['url']\"" "http://web.default.example.com" || fail "url: $(py "o['status']['url']")"
ROUTER=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["router"])' "$D/endpoints.json")
is "py \"o['status']['address']['url']\"" "$ROUTER/serving/default/web" ||
    fail "address: $(py "o['status']['address']")"
is "py \"p.get('latestRolledoutRevision')\"" "$R1" || fail "revision 1 not rolled out"
expect_exit 0 "$CORRAL" get controllerrevision "$R1" -o json
expect_out '"revision": 1'
expect_out '"corral.dev/revision-hash"'
expect_exit 0 "$CORRAL" get queue inference
is "pods_of $R1" 1 || fail "revision 1 pods: $(pods_of $R1)"
expect_exit 0 "$CORRAL" get pods -l "corral.dev/revision=$R1" -o json
expect_out '"scheduling.volcano.sh/queue-name": "inference"'
expect_out '"app": "isvc.web-predictor"'
expect_out '"name": "PORT"'
expect_out '"generateName": "web-predictor-00001-"'

# A canary: revision 2 takes 10% once ready.
svc 1001 10 >"$TMP/s2.yaml"
expect_exit 0 "$CORRAL" apply -f "$TMP/s2.yaml"
until_ok "$UP_WAIT" is traffic "00002:10:latest,00001:90:prev" || fail "no 90/10 split: $(traffic)"
is "py \"p.get('latestRolledoutRevision')\"" "$R1" || fail "revision 2 rolled out too early"
expect_exit 0 "$CORRAL" get isvc web
expect_out "PREVROLLEDOUTREVISION"
printf '%s\n' "$OUT" | grep -q "True *90 *10 *$R1 *$R2" || fail "get isvc columns: $OUT"
# 0 rolls back, 10 again, then no percent promotes.
K() { "$KUBECTL" "$@"; }
expect_exit 0 K patch isvc web --type=merge -p '{"spec":{"predictor":{"canaryTrafficPercent":0}}}'
until_ok "$UP_WAIT" is traffic "00002:0:latest,00001:100:prev" || fail "no rollback: $(traffic)"
expect_exit 0 K patch isvc web --type=merge -p '{"spec":{"predictor":{"canaryTrafficPercent":10}}}'
until_ok "$UP_WAIT" is traffic "00002:10:latest,00001:90:prev" || fail "no canary again: $(traffic)"
expect_exit 0 K patch isvc web --type=merge -p '{"spec":{"predictor":{"canaryTrafficPercent":null}}}'
until_ok "$UP_WAIT" is traffic "00002:100:latest" || fail "no promotion: $(traffic)"
is "py \"p.get('latestRolledoutRevision'), p.get('previousRolledoutRevision')\"" "$R2 $R1" ||
    fail "rolled out: $(py "p")"
until_ok "$UP_WAIT" is "pods_of $R1" 0 || fail "revision 1 keeps $(pods_of $R1) pods"

# kubectl scale sets minReplicas: 3 replicas.
expect_exit 0 K scale isvc/web --replicas=3
until_ok "$UP_WAIT" is "pods_of $R2" 3 || fail "scale: $(pods_of $R2) pods"
expect_exit 0 "$CORRAL" describe isvc web
for s in Revisions Traffic Replicas "Last Cold Start" "$R2" "100%" latest; do expect_out "$s"; done
until_ok "$UP_WAIT" sh -c "curl -sf '$CTRL/metrics' | grep -q 'corral_inference_cold_start_seconds_count{namespace=\"default\",service=\"web\",phase=\"total\"}'" ||
    fail "no cold start metric: $(curl -sf "$CTRL/metrics" | grep cold_start | head -5)"

expect_exit 0 "$CORRAL" delete isvc web
until_ok "$UP_WAIT" is "\"$CORRAL\" get pods -l serving.kserve.io/inferenceservice=web -o name 2>/dev/null | wc -l" 0 ||
    fail "pods left: $("$CORRAL" get pods -l serving.kserve.io/inferenceservice=web -o name)"
finish
