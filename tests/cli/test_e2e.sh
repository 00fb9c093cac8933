# The platform end to end, as a user drives it: `corral up` with three
# simulated nodes (two 8xH100 NVSwitch, one DGX-1 V100 cube-mesh), jobs
# applied with kubectl and corral, run as real processes by the node agents.
#   - an 8-GPU job lands on one node and its process sees all eight GPUs;
#   - a 4-GPU pod on the DGX-1 node gets a fully NVLinked quad;
#   - a 2x8 gang waits while one node is busy, then starts whole;
#   - a higher-priority job preempts a gang, whose Volcano Job restarts;
#   - a queue reclaims what another queue borrowed;
#   - a pod that does not tolerate a taint stays pending, and says why;
#   - a stopped agent's node goes NotReady and its pod is rescheduled;
#   - a second scheduler takes over when the leader stops;
#   - a node's token cannot modify another node;
#   - kill -9 of `corral up` and a restart lose no job; Ctrl-C leaves no
#     process behind; examples/ applies.
# Waits are bounded by E2E_WAIT seconds each; timings are shortened with
# --extra-config (heartbeats, leases, grace periods).
. tests/cli/lib.bash
. tests/cli/kube_lib.bash
W=${E2E_WAIT:-60}
UP_PID=""
SCHED2_PID=""
D=$TMP/d

cleanup() {
    [ -n "$SCHED2_PID" ] && kill -KILL "$SCHED2_PID" 2>/dev/null
    [ -n "$UP_PID" ] && kill -KILL "$UP_PID" 2>/dev/null
    for p in $(pgrep -f -- "$D/"); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
find_kubectl
PORT=$(free_port)
K() { "$KUBECTL" --kubeconfig "$D/kubeconfig" --request-timeout=10s "$@"; }
C() { KUBECONFIG="$D/kubeconfig" "$CORRAL" "$@"; }
jp() { K get "$1" "$2" -o jsonpath="$3" 2>/dev/null; }

# wait_for DESC CMD...: retry CMD until it succeeds; fail after W seconds.
wait_for() {
    local desc=$1
    shift
    until_ok "$W" "$@" || { fail "timed out waiting for: $desc"; return 1; }
}

phase_is() { [ "$(jp pod "$1" '{.status.phase}')" = "$2" ]; }
bound() { [ -n "$(jp pod "$1" '{.spec.nodeName}')" ]; }
gone_pod() { ! K get pod "$1" >/dev/null 2>&1; }
ready_nodes() { [ "$(K get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" -eq "$1" ]; }
node_ready_is() {
    [ "$(jp node "$1" '{.status.conditions[?(@.type=="Ready")].status}')" = "$2" ]
}
no_pods() { [ -z "$(K get pods --no-headers 2>/dev/null)" ]; }
# The processes of a component of this corral up ("agent --node-name X", ...).
comp_pids() { pgrep -f -- "corral $1.*$D/" || true; }

UP_ARGS=(--data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 3
    --sim-profile h100-sxm-8,h100-sxm-8,dgx1-v100-8 --stop-timeout 5 --ready-timeout "$W"
    --extra-config agent.heartbeat-seconds=1 --extra-config agent.lease-duration-seconds=4
    --extra-config agent.restart-backoff-ms=200
    --extra-config controller.node-monitor-grace-period=4s
    --extra-config controller.node-monitor-period=500ms
    --extra-config controller.default-toleration-seconds=2
    --extra-config scheduler.lease-duration=3s --extra-config scheduler.renew-deadline=2s
    --extra-config scheduler.retry-period=500ms)

start_up() {
    up_start "$W" "${UP_ARGS[@]}" || exit 1
}

# clean: delete every Job and Pod, wait until none is left.
clean() {
    K delete jobs.batch.volcano.sh --all --wait=false >/dev/null 2>&1
    K delete pods --all --wait=false >/dev/null 2>&1
    wait_for "all pods gone" no_pods
}

H100=NVIDIA-H100-80GB-HBM3
V100=Tesla-V100-SXM2-32GB

# pod NAME GPUS PRODUCT COMMAND [PRIORITYCLASS]: a pod manifest on stdout.
pod() {
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  ${5:+priorityClassName: $5}
  nodeSelector: {nvidia.com/gpu.product: $3}
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "$4"]
    resources: {limits: {nvidia.com/gpu: $2}}
EOF
}

# job NAME REPLICAS MIN GPUS QUEUE PRIORITYCLASS COMMAND [any]: a Volcano Job
# on the H100 nodes, or on any node with "any".
job() {
    local sel="nodeSelector: {nvidia.com/gpu.product: $H100}"
    [ "${8:-}" = any ] && sel=
    cat <<EOF
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  schedulerName: volcano
  minAvailable: $3
  queue: $5
  priorityClassName: $6
  maxRetry: 5
  policies:
  - {event: PodEvicted, action: RestartJob}
  tasks:
  - name: w
    replicas: $2
    template:
      spec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 1
        $sel
        containers:
        - name: c
          image: busybox
          command: ["sh", "-c", "$7"]
          resources: {limits: {nvidia.com/gpu: $4}}
EOF
}

start_up
wait_for "three Ready nodes" ready_nodes 3
OUT=$(K get nodes -o wide)
expect_out "$H100"
expect_out "$V100"

echo "--- an 8-GPU job lands on one node and sees all eight GPUs"
expect_exit 0 C apply -f examples/quickstart/train-8gpu.yaml
wait_for "train-8gpu running" phase_is train-8gpu-trainer-0 Running
wait_for "its log" sh -c "KUBECONFIG=$D/kubeconfig $CORRAL logs train-8gpu-trainer-0 | grep -q 'training on GPUs 0,1,2,3,4,5,6,7'"
expect_exit 0 C logs train-8gpu-trainer-0
expect_out "training on GPUs 0,1,2,3,4,5,6,7"
[ "$(jp pod train-8gpu-trainer-0 '{.metadata.annotations.corral\.dev/gpu-ids}')" = "0,1,2,3,4,5,6,7" ] ||
    fail "gpu-ids of the 8-GPU pod"
clean

echo "--- a 4-GPU pod on the DGX-1 node gets a fully NVLinked quad"
pod quad 4 "$V100" 'echo CUDA=$CUDA_VISIBLE_DEVICES' | K apply -f - >/dev/null
wait_for "quad done" phase_is quad Succeeded
ids=$(jp pod quad '{.metadata.annotations.corral\.dev/gpu-ids}')
case "$ids" in 0,1,2,3 | 4,5,6,7) ;; *) fail "quad got GPUs '$ids', not an NVLinked quad" ;; esac
expect_exit 0 C logs quad
expect_out "CUDA=$ids"
clean

echo "--- a 2x8 gang waits while a node is busy, then starts whole"
pod blocker 8 "$H100" 'sleep 600' | K apply -f - >/dev/null
wait_for "blocker running" phase_is blocker Running
job gang 2 2 8 default "" 'sleep 600' | sed '/priorityClassName: $/d' | K apply -f - >/dev/null
sleep 3
bound gang-w-0 && fail "gang-w-0 bound while the other node is busy"
bound gang-w-1 && fail "gang-w-1 bound while the other node is busy"
expect_exit 0 C describe pod gang-w-0
expect_out "pod group is not ready"
K delete pod blocker --wait=false >/dev/null
wait_for "gang-w-0 running" phase_is gang-w-0 Running
wait_for "gang-w-1 running" phase_is gang-w-1 Running
[ "$(jp pod gang-w-0 '{.spec.nodeName}')" != "$(jp pod gang-w-1 '{.spec.nodeName}')" ] ||
    fail "the two 8-GPU workers share a node"
clean

echo "--- a higher-priority job preempts a gang; the victim's Job restarts"
K apply -f - >/dev/null <<EOF
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
EOF
job victim 2 2 8 default e2e-low 'sleep 600' | K apply -f - >/dev/null
wait_for "victim running" phase_is victim-w-1 Running
wait_for "victim running" phase_is victim-w-0 Running
pod urgent 8 "$H100" 'sleep 600' e2e-high | K apply -f - >/dev/null
wait_for "urgent running" phase_is urgent Running
wait_for "victim job restarted" sh -c "[ \"\$($KUBECTL --kubeconfig $D/kubeconfig get vcjob victim -o jsonpath='{.status.retryCount}')\" -ge 1 ]"
expect_exit 0 K get events --field-selector reason=Preempted -o name
[ -n "$OUT" ] || fail "no Preempted event"
clean

echo "--- a queue reclaims what another queue borrowed"
K apply -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: qa}
spec: {weight: 1, reclaimable: true}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: qb}
spec: {weight: 1, reclaimable: true}
EOF
# qa borrows all 24 GPUs; qb then asks for 8: the queues deserve 16 and 8
# (equal weights, water-filled over their demands), so one of qa's pods goes.
job borrower 3 1 8 qa e2e-low 'sleep 600' any | K apply -f - >/dev/null
wait_for "borrower running" phase_is borrower-w-0 Running
wait_for "borrower running" phase_is borrower-w-1 Running
wait_for "borrower running" phase_is borrower-w-2 Running
job owner 1 1 8 qb e2e-low 'sleep 600' any | K apply -f - >/dev/null
wait_for "qb's job running after reclaim" phase_is owner-w-0 Running
expect_exit 0 K get events --field-selector reason=Preempted -o jsonpath='{.items[*].message}'
clean

echo "--- a pod without the toleration stays pending and says why"
expect_exit 0 K taint nodes --all nvidia.com/gpu=present:NoSchedule
pod shy 1 "$H100" 'true' | K apply -f - >/dev/null
sleep 2
phase_is shy Pending || fail "shy is not Pending"
wait_for "the reason" sh -c "KUBECONFIG=$D/kubeconfig $CORRAL describe pod shy | grep -q 'untolerated taint {nvidia.com/gpu: present}'"
expect_exit 0 K taint nodes --all nvidia.com/gpu-
wait_for "shy runs once the taint is gone" phase_is shy Succeeded
clean

echo "--- a node's token cannot modify another node"
NK=("$KUBECTL" --kubeconfig "$D/kubeconfigs/node-sim-node-0.kubeconfig" --request-timeout=10s)
expect_exit 1 "${NK[@]}" label node sim-node-1 e2e=x
expect_out "forbidden"
expect_exit 0 "${NK[@]}" get node sim-node-1

echo "--- a stopped agent's node goes NotReady and its pod is rescheduled"
job survivor 1 1 1 default e2e-low 'sleep 600' | K apply -f - >/dev/null
wait_for "survivor running" phase_is survivor-w-0 Running
n1=$(jp pod survivor-w-0 '{.spec.nodeName}')
uid1=$(jp pod survivor-w-0 '{.metadata.uid}')
agent=$(comp_pids "agent --node-name $n1 ")
[ -n "$agent" ] || fail "no agent process for $n1"
kill -STOP $agent
wait_for "$n1 NotReady" node_ready_is "$n1" Unknown
wait_for "survivor rescheduled" sh -c "[ \"\$($KUBECTL --kubeconfig $D/kubeconfig get pod survivor-w-0 -o jsonpath='{.metadata.uid}/{.status.phase}/{.spec.nodeName}')\" != '$uid1/Running/$n1' ] && [ \"\$($KUBECTL --kubeconfig $D/kubeconfig get pod survivor-w-0 -o jsonpath='{.status.phase}')\" = Running ]"
[ "$(jp pod survivor-w-0 '{.spec.nodeName}')" != "$n1" ] || fail "survivor went back to $n1"
kill -CONT $agent
wait_for "$n1 Ready again" node_ready_is "$n1" True
# (the bracket keeps the pattern from matching this shell's own command line)
wait_for "the old pod's process is stopped" sh -c "! pgrep -f -- '[a]gent-shim.*$uid1' >/dev/null"
clean

echo "--- a second scheduler takes over when the leader stops"
leader() { jp lease corral-scheduler '{.spec.holderIdentity}' -n kube-system; }
jpn() { K -n kube-system get lease corral-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
first=$(jpn)
[ -n "$first" ] || fail "no scheduler lease holder"
"$CORRAL" scheduler --kubeconfig "$D/kubeconfigs/scheduler.kubeconfig" \
    --scheduler-name corral,volcano,default-scheduler --lease-duration 3s --renew-deadline 2s \
    --retry-period 500ms --metrics-listen off >"$TMP/sched2.log" 2>&1 &
SCHED2_PID=$!
sleep 1
old=$(comp_pids "scheduler --kubeconfig")
old=$(echo "$old" | grep -vx "$SCHED2_PID" | head -1)
kill -STOP $old
wait_for "the lease changes hands" sh -c "[ \"\$($KUBECTL --kubeconfig $D/kubeconfig -n kube-system get lease corral-scheduler -o jsonpath='{.spec.holderIdentity}')\" != '$first' ]"
pod late 1 "$H100" 'true' | K apply -f - >/dev/null
wait_for "a pod scheduled by the new leader" phase_is late Succeeded
kill -CONT $old
kill -TERM $SCHED2_PID
wait $SCHED2_PID 2>/dev/null
SCHED2_PID=""
clean

echo "--- kill -9 of corral up and a restart lose no job"
pod persist 1 "$H100" 'echo started; sleep 6; echo finished' | K apply -f - >/dev/null
wait_for "persist running" phase_is persist Running
kill -KILL $UP_PID
wait $UP_PID 2>/dev/null
UP_PID=""
sleep 1
for c in apiserver scheduler controller "agent --node"; do
    [ -z "$(comp_pids "$c")" ] || fail "$c survived kill -9 of corral up"
done
start_up
wait_for "persist finished" phase_is persist Succeeded
[ "$(jp pod persist '{.status.containerStatuses[0].restartCount}')" = 0 ] ||
    fail "persist was restarted instead of adopted"
expect_exit 0 C logs persist
expect_out "finished"

echo "--- examples/ applies"
expect_exit 0 C apply -f examples/
expect_exit 0 K get queue training-queue

echo "--- Ctrl-C stops everything"
pod sleeper 1 "$H100" 'sleep 600' | K apply -f - >/dev/null
wait_for "sleeper running" phase_is sleeper Running
kill -INT $UP_PID
wait $UP_PID
rc=$?
UP_PID=""
[ $rc -eq 0 ] || fail "corral up exited $rc on SIGINT"
left=$(pgrep -f -- "$D/" || true)
[ -z "$left" ] || fail "processes left after Ctrl-C: $(ps -o args= -p "${left//$'\n'/,}")"
# Under the sanitizer build, a component's report lands in its log.
bad=$(grep -l -E "Sanitizer|runtime error:" "$D"/logs/*.log* 2>/dev/null)
[ -z "$bad" ] || fail "sanitizer reports in: $bad
$(grep -h -A20 -E "Sanitizer|runtime error:" $bad | head -60)"
finish
