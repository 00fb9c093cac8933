#!/usr/bin/env bash
# corral controller against a real corral apiserver, no scheduler and no
# agent: the test binds pods itself (pods/binding), sets their status as an
# agent would (PATCH pods/status) and renews or abandons node Leases.
# Checks: a Volcano Job becomes its PodGroup and pods (names, labels,
# ownerReferences); a failed pod with a RestartJob policy recreates the pods
# (retryCount 1); PodGroup counts and Queue allocated; a node whose Lease
# stops renewing becomes Ready=Unknown and tainted, its pods are evicted after
# their tolerationSeconds and the job restarts (PodEvicted policy); a renewed
# Lease removes the taints; deleting the job deletes its pods and PodGroup;
# SIGTERM stops the controller cleanly.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/apiserver_lib.bash"
# The system interpreter when there is one (version-manager shims start slowly).
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || exit 77

CTL_PID=""
RENEW_PID=""
cleanup() {
    [ -n "$RENEW_PID" ] && kill "$RENEW_PID" 2>/dev/null
    [ -n "$CTL_PID" ] && kill "$CTL_PID" 2>/dev/null
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT

# jv and wait_for: apiserver_lib.bash.

now() { date -u +%Y-%m-%dT%H:%M:%S.000000Z; }

start_server "$TMP/data"
NS=/api/v1/namespaces/default
JOBS=/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs
PGS=/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups
LEASES=/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases

node() { # node NAME
    expect_call 201 POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",
      \"metadata\":{\"name\":\"$1\"},\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"8\",\"cpu\":\"8\",
      \"memory\":\"16Gi\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",
      \"reason\":\"KubeletReady\"}]}}"
}
lease() { # lease NAME RENEWTIME
    call GET /api/v1/namespaces/kube-node-lease
    [ "$CODE" = 200 ] || expect_call 201 POST /api/v1/namespaces \
        '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-node-lease"}}'
    expect_call 201 POST $LEASES "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",
      \"metadata\":{\"name\":\"$1\"},\"spec\":{\"holderIdentity\":\"$1\",
      \"leaseDurationSeconds\":40,\"renewTime\":\"$2\"}}"
}
renew() { # renew NAME
    call PATCH "$LEASES/$1" "{\"spec\":{\"renewTime\":\"$(now)\"}}" application/merge-patch+json
}
bind_run() { # bind_run POD NODE: bind and report Running, as scheduler and agent would
    expect_call 201 POST "$NS/pods/$1/binding" "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",
      \"metadata\":{\"name\":\"$1\"},\"target\":{\"kind\":\"Node\",\"name\":\"$2\"}}"
    expect_call 200 PATCH "$NS/pods/$1/status" '{"status":{"phase":"Running"}}' \
        application/merge-patch+json
}

# Node n1 with a Lease the test keeps renewing (a live agent).
node n1
lease n1 "$(now)"
(while :; do
    renew n1
    sleep 0.3
done) &
RENEW_PID=$!
expect_call 201 POST /apis/scheduling.volcano.sh/v1beta1/queues \
    '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q1"},"spec":{"weight":1}}'

# The autoscaler's flags are checked before anything starts.
expect_exit 2 "$CORRAL" controller --max-scale-up-rate 1
expect_out "greater than 1"
expect_exit 2 "$CORRAL" controller --autoscaler-stable-window 2h
expect_out "from 1s to 1h0m0s"

# A router that is not there: the autoscaler logs it (once) and keeps going.
"$CORRAL" controller --server "$API" --metrics-listen off --node-monitor-grace-period 2s --node-monitor-period 200ms \
    --status-period 100ms --default-toleration-seconds 300 \
    --router-metrics "127.0.0.1:$(free_port)" --autoscaler-tick 100ms 2>"$TMP/ctl.log" &
CTL_PID=$!

# --- a job becomes its PodGroup and pods ---------------------------------------------------
expect_call 201 POST $JOBS '{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
  "metadata":{"name":"j1","annotations":{"team":"a"}},
  "spec":{"queue":"q1","minAvailable":2,
    "policies":[{"event":"PodFailed","action":"RestartJob"},{"event":"PodEvicted","action":"RestartJob"}],
    "tasks":[{"name":"worker","replicas":2,"template":{"metadata":{"labels":{"app":"t"}},
      "spec":{"restartPolicy":"Never","schedulerName":"corral",
        "tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists",
                        "effect":"NoExecute","tolerationSeconds":1}],
        "containers":[{"name":"c","image":"x","command":["sleep","100"],
          "resources":{"requests":{"nvidia.com/gpu":"1","cpu":"1"}}}]}}}]}}'
JOB_UID=$(jv $JOBS/j1 "o['metadata']['uid']")
wait_for "pod j1-worker-0" "$NS/pods/j1-worker-0" "o['metadata']['name']" j1-worker-0
wait_for "pod j1-worker-1" "$NS/pods/j1-worker-1" "o['metadata']['name']" j1-worker-1
P=$NS/pods/j1-worker-0
[ "$(jv $P "o['metadata']['ownerReferences'][0]['uid']")" = "$JOB_UID" ] || fail "pod owner uid"
[ "$(jv $P "o['metadata']['ownerReferences'][0]['controller']")" = True ] || fail "controller ref"
[ "$(jv $P "o['metadata']['labels']['volcano.sh/job-name']")" = j1 ] || fail "job-name label"
[ "$(jv $P "o['metadata']['labels']['volcano.sh/queue-name']")" = q1 ] || fail "queue label"
[ "$(jv $P "o['metadata']['labels']['app']")" = t ] || fail "template label"
[ "$(jv $P "o['metadata']['annotations']['scheduling.k8s.io/group-name']")" = j1 ] ||
    fail "group annotation"
[ "$(jv $P "o['metadata']['annotations']['volcano.sh/task-spec']")" = worker ] || fail "task-spec"
[ "$(jv $P "o['spec']['schedulerName']")" = corral ] || fail "schedulerName"
wait_for "podgroup" $PGS/j1 "o['spec']['minMember']" 2
[ "$(jv $PGS/j1 "o['spec']['queue']")" = q1 ] || fail "podgroup queue"
[ "$(jv $PGS/j1 "o['metadata']['ownerReferences'][0]['uid']")" = "$JOB_UID" ] || fail "pg owner"
[ "$(jv $PGS/j1 "o['spec']['minResources']['nvidia.com/gpu']")" = 2 ] || fail "minResources"
wait_for "job phase" $JOBS/j1 "o['status']['state']['phase']" Pending

# --- running: PodGroup counts, Queue allocated, job Running --------------------------------------
bind_run j1-worker-0 n1
bind_run j1-worker-1 n1
wait_for "job running" $JOBS/j1 "o['status']['state']['phase']" Running
wait_for "job running count" $JOBS/j1 "o['status']['running']" 2
wait_for "podgroup running" $PGS/j1 "o['status']['running']" 2
wait_for "queue allocated gpu" /apis/scheduling.volcano.sh/v1beta1/queues/q1 \
    "o['status']['allocated']['nvidia.com/gpu']" 2
[ "$(jv /apis/scheduling.volcano.sh/v1beta1/queues/q1 "o['status']['state']")" = Open ] ||
    fail "queue state"

# --- a failed pod restarts the job (RestartJob) ----------------------------------------------------
OLD_UID=$(jv $NS/pods/j1-worker-1 "o['metadata']['uid']")
expect_call 200 PATCH "$NS/pods/j1-worker-0/status" '{"status":{"phase":"Failed"}}' \
    application/merge-patch+json
# The running pod is deleted gracefully; confirm as its agent would.
wait_for "graceful delete of j1-worker-1" $NS/pods/j1-worker-1 \
    "'yes' if o['metadata'].get('deletionTimestamp') or o['metadata']['uid'] != '$OLD_UID' else 'no'" yes
call DELETE "$NS/pods/j1-worker-1?gracePeriodSeconds=0"
wait_for "retryCount" $JOBS/j1 "o['status']['retryCount']" 1
wait_for "pod recreated" $NS/pods/j1-worker-1 \
    "'new' if o['metadata']['uid'] != '$OLD_UID' else 'old'" new
wait_for "new pod version" $NS/pods/j1-worker-0 \
    "o['metadata']['annotations']['volcano.sh/job-version']" 1
wait_for "job pending again" $JOBS/j1 "o['status']['state']['phase']" Pending

# --- node lifecycle: n2's lease is old and never renewed ------------------------------------------
node n2
lease n2 "2020-01-01T00:00:00.000000Z"
bind_run j1-worker-0 n2
bind_run j1-worker-1 n2
wait_for "job running on n2" $JOBS/j1 "o['status']['state']['phase']" Running
N2=/api/v1/nodes/n2
wait_for "n2 Ready=Unknown" $N2 \
    "[c['status'] for c in o['status']['conditions'] if c['type']=='Ready'][0]" Unknown
[ "$(jv $N2 "[c['reason'] for c in o['status']['conditions'] if c['type']=='Ready'][0]")" = \
    NodeStatusUnknown ] || fail "Ready reason"
wait_for "n2 taints" $N2 \
    "','.join(sorted(t['effect'] for t in o['spec'].get('taints',[]) if t['key']=='node.kubernetes.io/unreachable'))" \
    NoExecute,NoSchedule
# n1 stays healthy
[ "$(jv /api/v1/nodes/n1 "len(o.get('spec',{}).get('taints',[]))")" = 0 ] || fail "n1 tainted"
# tolerationSeconds 1: the pods are evicted (forced) and the job restarts (PodEvicted policy)
wait_for "retryCount after eviction" $JOBS/j1 "o['status']['retryCount']" 2
wait_for "pods recreated after eviction" $NS/pods/j1-worker-0 "o['spec'].get('nodeName','')" ""
grep -q "evicting it" "$TMP/ctl.log" || fail "no eviction logged: $(cat "$TMP/ctl.log")"
# the lease renews (its agent is back): the taints go
kill "$RENEW_PID"
(while :; do
    renew n1
    renew n2
    sleep 0.3
done) &
RENEW_PID=$!
wait_for "n2 untainted" $N2 "len(o.get('spec',{}).get('taints',[]))" 0

# --- deleting the job deletes its pods and PodGroup (garbage collection) ---------------------------
expect_call 200 DELETE $JOBS/j1
wait_for "pods gone" "$NS/pods?labelSelector=volcano.sh/job-name%3Dj1" "len(o['items'])" 0
wait_for "podgroup gone" "$PGS?fieldSelector=metadata.name%3Dj1" "len(o['items'])" 0

# --- an orphan pod (owner never existed) is collected ------------------------------------------------
expect_call 201 POST $NS/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"orphan",
  "ownerReferences":[{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"gone",
  "uid":"00000000-0000-0000-0000-000000000000","controller":true}]},
  "spec":{"containers":[{"name":"c","image":"x"}]}}'
wait_for "orphan collected" "$NS/pods?fieldSelector=metadata.name%3Dorphan" "len(o['items'])" 0

# --- SIGTERM ---------------------------------------------------------------------------------------
kill -TERM "$CTL_PID"
wait "$CTL_PID"
rc=$?
CTL_PID=""
[ "$rc" -eq 0 ] || fail "controller exit $rc on SIGTERM"
grep -q "shutting down" "$TMP/ctl.log" || fail "no shutdown line"
grep -q "autoscaler: router metrics: http://127.0.0.1:" "$TMP/ctl.log" || fail "no autoscaler line"
[ "$fails" -eq 0 ] || {
    echo "--- controller log"
    cat "$TMP/ctl.log"
}
finish
