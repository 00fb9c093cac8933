#!/usr/bin/env bash
# corral controller as a Deployment runs it: two replicas with leader
# election on a Lease, only the leader acts (the other starts no informer),
# kill -9 of the leader and the other takes over within the lease; and
# --controllers "*,-job" (beside Volcano's controller-manager) leaves
# Volcano Jobs alone while PodGroup and Queue status still run.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/apiserver_lib.bash"
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || exit 77

A_PID="" B_PID="" C_PID=""
cleanup() {
    for p in $A_PID $B_PID $C_PID; do kill -9 "$p" 2>/dev/null; done
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT

start_server "$TMP/data"
NS=/api/v1/namespaces/default
JOBS=/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs
LEASE=/apis/coordination.k8s.io/v1/namespaces/default/leases/corral-controller

expect_exit 2 "$CORRAL" controller --leader-elect=maybe
expect_out "wants true or false"
expect_exit 2 "$CORRAL" controller --lease-duration 10ms
expect_out "from 100ms to 1h"

ctl() { # ctl LOG ARGS...: a controller in the background, its pid in CTL
    local log=$1
    shift
    "$CORRAL" controller --server "$API" --metrics-listen off --status-period 100ms "$@" \
        2>"$TMP/$log" &
    CTL=$!
}
elect=(--leader-elect --lease-namespace default --lease-duration 2s --renew-deadline 1500ms
    --retry-period 200ms)
job() { # job NAME QUEUE
    expect_call 201 POST $JOBS "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",
      \"metadata\":{\"name\":\"$1\"},\"spec\":{\"queue\":\"$2\",\"minAvailable\":1,
        \"tasks\":[{\"name\":\"w\",\"replicas\":1,\"template\":{\"spec\":{\"restartPolicy\":\"Never\",
          \"containers\":[{\"name\":\"c\",\"image\":\"x\",\"command\":[\"true\"]}]}}}]}}"
}
log_has() { # log_has FILE TEXT: wait up to 10 s for TEXT in the log
    for _ in $(seq 1 100); do
        grep -q "$2" "$TMP/$1" && return 0
        sleep 0.1
    done
    fail "$1 lacks '$2': $(tail -5 "$TMP/$1")"
}

# --- two replicas: one leads, the other waits ------------------------------------------------
ctl a.log "${elect[@]}"
A_PID=$CTL
log_has a.log "became leader"
ctl b.log "${elect[@]}"
B_PID=$CTL
log_has b.log "once elected leader"
job j1 default
wait_for "j1's pod by the leader" "$NS/pods/j1-w-0" "o['metadata']['name']" j1-w-0
HOLDER=$(jv $LEASE "o['spec']['holderIdentity']")
grep -q "became leader" "$TMP/b.log" && fail "both controllers lead"
grep -q "caches synced" "$TMP/b.log" && fail "the standby started its informers"

# --- kill -9 of the leader: the other takes over ----------------------------------------------
kill -9 "$A_PID"
wait "$A_PID" 2>/dev/null
A_PID=""
log_has b.log "became leader"
[ "$(jv $LEASE "o['spec']['holderIdentity']")" != "$HOLDER" ] || fail "the Lease kept its holder"
job j2 default
wait_for "j2's pod by the new leader" "$NS/pods/j2-w-0" "o['metadata']['name']" j2-w-0

# SIGTERM releases the Lease at once (holder "").
kill -TERM "$B_PID"
wait "$B_PID"
rc=$?
B_PID=""
[ "$rc" -eq 0 ] || fail "the leader exited $rc on SIGTERM"
[ "$(jv $LEASE "o['spec'].get('holderIdentity', '')")" = "" ] || fail "the Lease was not released"

# --- --controllers "*,-job": Jobs left to Volcano, queue status still written ---------------
expect_exit 2 "$CORRAL" controller --controllers "*,-jobs"
expect_out "unknown controller \"jobs\""
expect_call 201 POST /apis/scheduling.volcano.sh/v1beta1/queues \
    '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q3"},"spec":{"weight":1}}'
job j3 q3
# A PodGroup Volcano's controller would have made, with a pod of it running.
expect_call 201 POST /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups \
    '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg3"},
      "spec":{"queue":"q3","minMember":1}}'
ctl c.log --controllers "*,-job"
C_PID=$CTL
wait_for "q3's status from the queue controller" \
    /apis/scheduling.volcano.sh/v1beta1/queues/q3 "o.get('status', {}).get('state')" Open
[ "$(jv "$NS/pods?labelSelector=volcano.sh/job-name%3Dj3" "len(o['items'])")" = 0 ] ||
    fail "the job controller ran although --controllers left it out"
kill -TERM "$C_PID"
wait "$C_PID"
C_PID=""
finish
