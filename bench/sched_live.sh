#!/usr/bin/env bash
# 2,000 pods (1 in 5 with a GPU) on 100 fake Nodes through corral apiserver +
# corral scheduler: time from the first create to all bound. Usage:
# bench/sched_live.sh [BINDERS] (after make); numbers in docs/benchmarks.md.
set -u
BINDERS=${1:-16}
D=$(mktemp -d)
build/corral apiserver --data-dir $D/data --listen 127.0.0.1:0 2>$D/server.log &
SP=$!
sleep 0.5
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' $D/server.log)
API=http://127.0.0.1:$PORT
python3 - "$API" <<'PY'
import json, sys, urllib.request, concurrent.futures
api = sys.argv[1]
def post(path, obj):
    req = urllib.request.Request(api + path, json.dumps(obj).encode(), {"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
alloc = {"nvidia.com/gpu": "8", "cpu": "64", "memory": "512Gi", "pods": "110"}
with concurrent.futures.ThreadPoolExecutor(8) as ex:
    list(ex.map(lambda i: post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n%03d" % i}, "status": {"capacity": alloc, "allocatable": alloc}}), range(100)))
PY
build/corral scheduler --server $API --leader-elect=false --binders $BINDERS 2>$D/sched.log &
SC=$!
sleep 1
python3 - "$API" <<'PY'
import json, sys, time, urllib.request, concurrent.futures
api = sys.argv[1]
def post(i):
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%04d" % i}, "spec": {"schedulerName": "corral", "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}, "limits": {"nvidia.com/gpu": "%d" % (i % 5 == 0)}}}]}}
    req = urllib.request.Request(api + "/api/v1/namespaces/default/pods", json.dumps(obj).encode(), {"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
t0 = time.time()
with concurrent.futures.ThreadPoolExecutor(16) as ex:
    list(ex.map(post, range(2000)))
t1 = time.time()
while True:
    items = json.load(urllib.request.urlopen(api + "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3D"))["items"]
    if not items: break
    time.sleep(0.05)
t2 = time.time()
print("created 2000 pods in %.2f s (%.0f/s); all bound %.2f s after the first create: %.0f pods/s" % (t1 - t0, 2000 / (t1 - t0), t2 - t0, 2000 / (t2 - t0)))
PY
kill -TERM $SC; wait $SC; tail -1 $D/sched.log
kill -TERM $SP; wait $SP
rm -rf $D
