# corral scheduler against a real `corral apiserver`: Nodes are plain
# objects (no agent). A pod is bound with its GPU ids; an unschedulable pod
# gets PodScheduled=False and a FailedScheduling event; a 2-pod gang binds
# both or none; a higher-priority pod preempts through the eviction API; a
# deleted node is forgotten; of two schedulers with leader election only one
# binds, and after kill -9 of the leader the other takes over. A pod bound to
# a node not known yet is fed to the engine when the node comes.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
SCHED_PIDS=""
cleanup() {
    for p in $SCHED_PIDS; do kill -9 "$p" 2>/dev/null; done
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT
command -v python3 >/dev/null || exit 77
WAIT=${SCHED_TEST_WAIT:-10} # seconds to wait for an outcome

start_server "$TMP/data"

node() { # node NAME GPUS
    expect_call 201 POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\",\"labels\":{\"kubernetes.io/hostname\":\"$1\"}},\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"$2\",\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"},\"allocatable\":{\"nvidia.com/gpu\":\"$2\",\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"}}}"
}
pod() { # pod NAME GPUS [ANNOTATIONS-JSON] [PRIORITY-CLASS]
    local ann=${3:-\{\}} pc=""
    [ -n "${4:-}" ] && pc=",\"priorityClassName\":\"$4\""
    expect_call 201 POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"annotations\":$ann},\"spec\":{\"schedulerName\":\"corral\"$pc,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"$2\"}}}]}}"
}
# field POD PYTHON-EXPR: print an expression of the pod (p) or nothing when gone.
field() {
    call GET "/api/v1/namespaces/default/pods/$1"
    [ "$CODE" = 200 ] || return 0
    printf '%s' "$BODY" | python3 -c "import json,sys; p=json.load(sys.stdin); print($2)"
}
node_of() { field "$1" 'p["spec"].get("nodeName") or ""'; }
# wait_for DESCRIPTION CMD...: until CMD succeeds or WAIT seconds pass.
wait_for() {
    local what=$1
    shift
    for _ in $(seq 1 $((WAIT * 10))); do
        "$@" && return 0
        sleep 0.1
    done
    fail "timed out waiting: $what"
    return 1
}
bound() { [ -n "$(node_of "$1")" ]; }
gone() { call GET "/api/v1/namespaces/default/pods/$1"; [ "$CODE" = 404 ]; }
events_of() {
    call GET "/api/v1/namespaces/default/events"
    printf '%s' "$BODY" | python3 -c "import json,sys
for e in json.load(sys.stdin)['items']:
    if e['involvedObject']['name'] == '$1': print(e['reason'], e.get('count'), e['message'])" 2>/dev/null
}
sched() { # sched LOG [flags...]: start a scheduler in the background
    local log=$1
    shift
    "$CORRAL" scheduler --server "$API" --retry-period 200ms --metrics-listen off "$@" 2>"$TMP/$log" &
    SCHED_PIDS="$SCHED_PIDS $!"
    LAST_PID=$!
}

expect_exit 2 "$CORRAL" scheduler --binders 0
expect_exit 2 "$CORRAL" scheduler --lease-duration soon

node n1 8
node n2 8
expect_call 201 POST /apis/scheduling.k8s.io/v1/priorityclasses '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000}'
expect_call 201 POST /apis/scheduling.volcano.sh/v1beta1/queues '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"research"},"spec":{"weight":1}}'

# --- one scheduler, no election ---------------------------------------------------
sched one.log --leader-elect=false --v 1
ONE=$LAST_PID
pod a 4
wait_for "pod a bound" bound a
[ "$(field a 'p["metadata"]["annotations"].get("corral.dev/gpu-ids","")')" = "0,1,2,3" ] ||
    fail "pod a: gpu-ids $(field a 'p["metadata"].get("annotations")')"
wait_for "Scheduled event" bash -c "$(declare -f events_of call); API=$API; events_of a | grep -q '^Scheduled 1 Successfully assigned default/a to n'"

pod huge 16
has_reason() { field huge '[c.get("message","") for c in p["status"].get("conditions",[]) if c["type"]=="PodScheduled" and c["status"]=="False"]' | grep -q "Insufficient nvidia.com/gpu"; }
wait_for "PodScheduled=False on huge" has_reason
wait_for "FailedScheduling event" bash -c "$(declare -f events_of call); API=$API; events_of huge | grep -q '^FailedScheduling 1 0/2 nodes are available'"

# A gang of 2 x 8 GPUs: n2 has 8 free and n1 4, so neither pod binds.
expect_call 201 POST /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"gang"},"spec":{"minMember":2,"queue":"research"}}'
pod g1 8 '{"scheduling.k8s.io/group-name":"gang"}'
pod g2 8 '{"scheduling.k8s.io/group-name":"gang"}'
pg_phase() {
    call GET /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/gang
    printf '%s' "$BODY" | python3 -c "import json,sys; print(json.load(sys.stdin).get('status',{}).get('phase',''))"
}
wait_for "gang Pending/Inqueue" bash -c "$(declare -f pg_phase call); API=$API; pg_phase | grep -qE 'Pending|Inqueue'"
[ -z "$(node_of g1)$(node_of g2)" ] || fail "half a gang was bound: g1=$(node_of g1) g2=$(node_of g2)"
# Free n1: both bind at once.
expect_call 200 DELETE "/api/v1/namespaces/default/pods/a?gracePeriodSeconds=0"
wait_for "gang bound" bash -c "$(declare -f field call node_of); API=$API; [ -n \"\$(node_of g1)\" ] && [ -n \"\$(node_of g2)\" ]"
wait_for "gang Running" bash -c "$(declare -f pg_phase call); API=$API; pg_phase | grep -q Running"

# Preemption: the cluster is full; a high-priority 8-GPU pod evicts a gang pod
# through the eviction API (graceful: the victim gets a deletionTimestamp and
# holds its GPUs until it is gone; no agent here, so the test finishes it).
pod vip 8 '{"scheduling.volcano.sh/queue-name":"research"}' high
evicted() { field "$1" 'p["metadata"].get("deletionTimestamp") or ""' | grep -q .; }
wait_for "a victim evicted" bash -c "$(declare -f call field evicted); API=$API; evicted g1 || evicted g2"
wait_for "Preempted event" bash -c "$(declare -f events_of call); API=$API; (events_of g1; events_of g2) | grep -q '^Preempted 1 Preempted by pod'"
sleep 0.5
[ -z "$(node_of vip)" ] || fail "vip bound before its victims were gone"
for p in g1 g2; do call DELETE "/api/v1/namespaces/default/pods/$p?gracePeriodSeconds=0"; done
wait_for "vip bound" bound vip
grep -q "evicting default/g" "$TMP/one.log" || fail "no eviction logged: $(cat "$TMP/one.log")"

# A deleted node is forgotten: pods on it are gone; a 8-GPU pod then waits
# with a reason naming 1 node.
expect_call 200 DELETE /api/v1/nodes/n1
expect_call 200 DELETE "/api/v1/namespaces/default/pods/huge?gracePeriodSeconds=0"
call DELETE "/api/v1/namespaces/default/pods/vip?gracePeriodSeconds=0"
pod after 16
after_reason() { field after '[c.get("message","") for c in p["status"].get("conditions",[]) if c["type"]=="PodScheduled"]' | grep -q "0/1 nodes are available"; }
wait_for "the engine forgot node n1" after_reason
expect_call 200 DELETE "/api/v1/namespaces/default/pods/after?gracePeriodSeconds=0"

# A pod bound to a node the scheduler does not know yet waits for it: once
# n3 comes, the pod holds n3's GPUs, so a pod that may only go to n3 waits;
# the same after n3 is deleted and comes back. A bound pod whose node never
# came is dropped when it goes: n4 then takes a pod.
bound_pod() { # bound_pod NAME NODE GPUS
    expect_call 201 POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\"},\"spec\":{\"nodeName\":\"$2\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"$3\"}}}]}}"
}
pod_on() { # pod_on NAME NODE GPUS: a pending pod that may only go to NODE
    expect_call 201 POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\"},\"spec\":{\"schedulerName\":\"corral\",\"nodeSelector\":{\"kubernetes.io/hostname\":\"$2\"},\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"$3\"}}}]}}"
}
waits() { [ "$(grep -c "pod default/$1 waits for its node" "$TMP/one.log")" -ge "$2" ]; }
on3_reason() { field on3 '[c.get("message","") for c in p["status"].get("conditions",[]) if c["type"]=="PodScheduled" and c["status"]=="False"]' | grep -q "Insufficient nvidia.com/gpu"; }
bound_pod early n3 8
wait_for "early set aside" waits early 1
node n3 8
pod_on on3 n3 8
wait_for "on3 waits: early holds n3" on3_reason
expect_call 200 DELETE /api/v1/nodes/n3
wait_for "early set aside again" waits early 2
node n3 8
sleep 1
[ -z "$(node_of on3)" ] || fail "on3 bound to $(node_of on3): early was not fed again with n3"
expect_call 200 DELETE "/api/v1/namespaces/default/pods/early?gracePeriodSeconds=0"
wait_for "on3 bound once early is gone" bound on3
bound_pod ghost n4 8
wait_for "ghost set aside" waits ghost 1
expect_call 200 DELETE "/api/v1/namespaces/default/pods/ghost?gracePeriodSeconds=0"
node n4 8
pod_on on4 n4 8
wait_for "on4 bound: ghost was dropped" bound on4
for p in on3 on4; do call DELETE "/api/v1/namespaces/default/pods/$p?gracePeriodSeconds=0"; done
kill -TERM "$ONE"
wait "$ONE" || fail "scheduler did not stop cleanly: $(tail -5 "$TMP/one.log")"

# --- two schedulers, one Lease --------------------------------------------------------
LEASE="--lease-duration 2s --renew-deadline 1500ms --retry-period 200ms --lease-namespace default"
# shellcheck disable=SC2086
sched s1.log $LEASE
S1=$LAST_PID
wait_for "s1 leads" grep -q "became leader" "$TMP/s1.log"
# shellcheck disable=SC2086
sched s2.log $LEASE
S2=$LAST_PID
pod l1 1
wait_for "l1 bound" bound l1
sleep 1
grep -q "became leader" "$TMP/s2.log" && fail "both schedulers lead"
grep -q "Successfully\|cycle" "$TMP/s2.log" && fail "the follower acted"
kill -9 "$S1"
wait "$S1" 2>/dev/null
pod l2 1
wait_for "s2 takes over" grep -q "became leader" "$TMP/s2.log"
wait_for "l2 bound by the new leader" bound l2
kill -TERM "$S2"
wait "$S2" || fail "s2 did not stop cleanly"
grep -q "released the lease" "$TMP/s2.log" || fail "s2 did not release the lease: $(cat "$TMP/s2.log")"

finish
