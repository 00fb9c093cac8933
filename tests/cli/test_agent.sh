# corral agent against a fresh `corral apiserver`: the Node it registers
# (GPU capacity, labels, topology annotation, Ready), the Lease it renews,
# pods run as processes (env with fieldRef, ConfigMap and Secret keys,
# CUDA_VISIBLE_DEVICES from corral.dev/gpu-ids, log and exit files), restart
# with OnFailure, graceful deletion that leaves no process, a pod without a
# command failing with the reason, adoption after kill -9 of the agent,
# --stop-pods-on-exit, and the hollow runtime with 50 nodes and 200 pods.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash

AGENT_PID=""
TAG=$$ # unique sleep arguments, so that pgrep sees only this test's processes
stop_agent() {
    if [ -n "$AGENT_PID" ]; then
        kill -TERM "$AGENT_PID" 2>/dev/null
        wait "$AGENT_PID" 2>/dev/null
        local rc=$?
        AGENT_PID=""
        [ "$rc" -eq 0 ] || fail "the agent exited with $rc"
    fi
}
cleanup() {
    stop_agent
    stop_server
    pkill -KILL -f "^sleep 7${TAG}" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

start_server "$TMP/data"
start_agent() {
    "$CORRAL" agent --server "$API" --node-name n1 --gpus sim:h100-sxm-8 --root "$TMP/root" \
        --metrics-listen off \
        --heartbeat-seconds 1 --status-every 1 --lease-duration-seconds 5 \
        --restart-backoff-ms 100 --restart-backoff-max-ms 400 "$@" 2>>"$TMP/agent.log" &
    AGENT_PID=$!
}

# jq-like: jget PATH PYEXPR (d is the parsed object; prints the value or "").
jget() {
    curl -s "$API$1" | python3 -c "
import json, sys
try:
    d = json.load(sys.stdin)
    v = $2
except Exception:
    v = ''
print('' if v is None else v)"
}
# until_eq PATH PYEXPR WANT: wait (up to ~30 s) until the value is WANT.
until_eq() {
    local v=""
    for _ in $(seq 1 150); do
        v=$(jget "$1" "$2")
        [ "$v" = "$3" ] && return 0
        sleep 0.2
    done
    fail "$1: $2 = '$v' (want '$3')"
    return 1
}
create() {
    call POST "/api/v1/namespaces/default/$1" "$2"
    [ "$CODE" = 201 ] || fail "create $1: HTTP $CODE: $BODY"
}
pod() { # pod NAME SPEC-JSON [ANNOTATIONS-JSON]
    create pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"annotations\":${3:-{\}}},\"spec\":$2}"
}
P=/api/v1/namespaces/default/pods
ST='d["status"]["containerStatuses"][0]'

start_agent

# --- the Node and its Lease ------------------------------------------------------------------
until_eq /api/v1/nodes/n1 'd["status"]["capacity"]["nvidia.com/gpu"]' 8
until_eq /api/v1/nodes/n1 '[c["status"] for c in d["status"]["conditions"] if c["type"]=="Ready"][0]' True
until_eq /api/v1/nodes/n1 'd["metadata"]["labels"]["kubernetes.io/hostname"]' n1
until_eq /api/v1/nodes/n1 '"nvidia.com/gpu.product" in d["metadata"]["labels"]' True
until_eq /api/v1/nodes/n1 '"corral.dev/gpu-topology" in d["metadata"]["annotations"]' True
until_eq /api/v1/nodes/n1 'd["status"]["nodeInfo"]["kubeletVersion"].endswith("corral")' True
L=/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1
until_eq $L 'd["spec"]["holderIdentity"]' n1
r1=$(jget $L 'd["spec"]["renewTime"]')
until_eq $L 'd["spec"]["renewTime"] != "'"$r1"'"' True

# --- a pod with env, GPUs and logs ---------------------------------------------------------
create configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"greeting":"hello"}}'
create secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec"},"data":{"pw":"czNjcjN0"}}'
pod env '{"nodeName":"n1","restartPolicy":"Never","containers":[{"name":"main","image":"busybox",
  "command":["sh","-c","echo CUDA=$CUDA_VISIBLE_DEVICES; echo $MY_NAME; echo $(GREETING)-$PW-$NVIDIA_VISIBLE_DEVICES; echo opt=${OPT:-unset}"],
  "env":[{"name":"MY_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
         {"name":"GREETING","valueFrom":{"configMapKeyRef":{"name":"cm","key":"greeting"}}},
         {"name":"PW","valueFrom":{"secretKeyRef":{"name":"sec","key":"pw"}}},
         {"name":"OPT","valueFrom":{"configMapKeyRef":{"name":"nope","key":"x","optional":true}}}]}]}' \
    '{"corral.dev/gpu-ids":"0,1"}'
until_eq $P/env 'd["status"]["phase"]' Succeeded
until_eq $P/env "$ST"'["state"]["terminated"]["exitCode"]' 0
until_eq $P/env "$ST"'["state"]["terminated"]["reason"]' Completed
uid=$(jget $P/env 'd["metadata"]["uid"]')
log="$TMP/root/logs/default_env_$uid/main/0.log"
[ -f "$log" ] || fail "no log file $log"
grep -qx 'CUDA=0,1' "$log" || fail "log: $(cat "$log")"
grep -qx 'env' "$log" || fail "log lacks the pod name: $(cat "$log")"
grep -qx 'hello-s3cr3t-GPU-.*' "$log" || fail "log lacks ConfigMap/Secret values: $(cat "$log")"
grep -qx 'opt=unset' "$log" || fail "optional ref set: $(cat "$log")"
[ "$(cat "$TMP/root/logs/default_env_$uid/main/0.exit")" = 0 ] || fail "exit file"
# The same log through the API server's pods/log and the agent's log server.
expect_exit 0 "$CORRAL" logs -s "$API" env
expect_out "CUDA=0,1"

# A missing ConfigMap keeps the container waiting with kubelet's reason.
pod cfgerr '{"nodeName":"n1","containers":[{"name":"main","image":"x","command":["true"],
  "env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"missing","key":"k"}}}]}]}'
until_eq $P/cfgerr "$ST"'["state"]["waiting"]["reason"]' CreateContainerConfigError

# --- restart policy ------------------------------------------------------------------------
pod crash '{"nodeName":"n1","restartPolicy":"OnFailure","containers":[{"name":"main","image":"x","command":["sh","-c","echo run; exit 3"]}]}'
until_eq $P/crash "$ST"'["restartCount"] >= 2' True
until_eq $P/crash "$ST"'["lastState"]["terminated"]["exitCode"]' 3
until_eq $P/crash 'd["status"]["phase"]' Running
expect_exit 0 "$CORRAL" logs -s "$API" crash --previous
expect_out "run"
pod never '{"nodeName":"n1","restartPolicy":"Never","containers":[{"name":"main","image":"x","command":["sh","-c","exit 5"]}]}'
until_eq $P/never 'd["status"]["phase"]' Failed
until_eq $P/never "$ST"'["state"]["terminated"]["exitCode"]' 5

# --- init containers run first, in order, in the pod's directory ---------------------------
pod init '{"nodeName":"n1","restartPolicy":"Never",
  "initContainers":[{"name":"one","image":"x","command":["sh","-c","echo a > f"]},
                    {"name":"two","image":"x","command":["sh","-c","echo b >> f"]}],
  "containers":[{"name":"main","image":"x","command":["cat","f"]}]}'
until_eq $P/init 'd["status"]["phase"]' Succeeded
until_eq $P/init 'd["status"]["initContainerStatuses"][1]["state"]["terminated"]["reason"]' Completed
expect_exit 0 "$CORRAL" logs -s "$API" init
[ "$OUT" = "a
b" ] || fail "init containers: $OUT"

# --- no command ----------------------------------------------------------------------------
pod nocmd '{"nodeName":"n1","containers":[{"name":"web","image":"nginx"}]}'
until_eq $P/nocmd 'd["status"]["phase"]' Failed
until_eq $P/nocmd 'd["status"]["reason"]' NoCommand
until_eq $P/nocmd '"container web has no command" in d["status"]["message"]' True

# --- graceful deletion -----------------------------------------------------------------------
pod sleeper '{"nodeName":"n1","terminationGracePeriodSeconds":30,"containers":[{"name":"main","image":"x","command":["sleep","7'"$TAG"'1"]}]}'
until_eq $P/sleeper 'd["status"]["phase"]' Running
pgrep -f "^sleep 7${TAG}1" >/dev/null || fail "no sleep process"
suid=$(jget $P/sleeper 'd["metadata"]["uid"]')
call DELETE $P/sleeper
until_eq $P/sleeper 'd.get("code")' 404
for _ in $(seq 1 25); do [ -d "$TMP/root/logs/default_sleeper_$suid" ] || break; sleep 0.2; done
[ -d "$TMP/root/logs/default_sleeper_$suid" ] && fail "the deleted pod's logs are still there"
[ -d "$TMP/root/pods/$suid" ] && fail "the deleted pod's directory is still there"
pgrep -f "^sleep 7${TAG}1" >/dev/null && fail "sleep survived the deletion"
# One that ignores SIGTERM is killed after its grace period.
pod stubborn '{"nodeName":"n1","terminationGracePeriodSeconds":1,"containers":[{"name":"main","image":"x","command":["sh","-c","trap \"\" TERM; sleep 7'"$TAG"'2 & wait; wait"]}]}'
until_eq $P/stubborn 'd["status"]["phase"]' Running
call DELETE $P/stubborn
until_eq $P/stubborn 'd.get("code")' 404
sleep 0.2
pgrep -f "^sleep 7${TAG}2" >/dev/null && fail "stubborn sleep survived SIGKILL of its group"

# --- adoption after kill -9 ------------------------------------------------------------------
pod adopt '{"nodeName":"n1","containers":[{"name":"main","image":"x","command":["sleep","7'"$TAG"'3"]}]}'
until_eq $P/adopt 'd["status"]["phase"]' Running
pid1=$(pgrep -f "^sleep 7${TAG}3")
pod stray '{"nodeName":"n1","containers":[{"name":"main","image":"x","command":["sleep","7'"$TAG"'4"]}]}'
until_eq $P/stray 'd["status"]["phase"]' Running
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
AGENT_PID=""
pgrep -f "^sleep 7${TAG}3" >/dev/null || fail "the workload died with the agent"
call DELETE "$P/stray?gracePeriodSeconds=0" # deleted while the agent is down
start_agent
until_eq /api/v1/nodes/n1 '[c["status"] for c in d["status"]["conditions"] if c["type"]=="Ready"][0]' True
until_eq $P/adopt 'd["status"]["phase"]' Running
for _ in $(seq 1 50); do pgrep -f "^sleep 7${TAG}4" >/dev/null || break; sleep 0.2; done
pgrep -f "^sleep 7${TAG}4" >/dev/null && fail "the deleted pod's process was not killed"
[ "$(pgrep -f "^sleep 7${TAG}3")" = "$pid1" ] || fail "not the same process after adoption"
grep -q "adopted (pid $pid1)" "$TMP/agent.log" || fail "no adoption in the log"
call DELETE $P/adopt
until_eq $P/adopt 'd.get("code")' 404
pgrep -f "^sleep 7${TAG}3" >/dev/null && fail "adopted process survived the deletion"

# --- --stop-pods-on-exit ---------------------------------------------------------------------
stop_agent
start_agent --stop-pods-on-exit
pod again '{"nodeName":"n1","restartPolicy":"Never","containers":[{"name":"main","image":"x","command":["sleep","7'"$TAG"'5"]}]}'
until_eq $P/again 'd["status"]["phase"]' Running
stop_agent
pgrep -f "^sleep 7${TAG}5" >/dev/null && fail "--stop-pods-on-exit left the pod running"
start_agent --stop-pods-on-exit
until_eq $P/again "$ST"'["restartCount"]' 1
until_eq $P/again 'd["status"]["phase"]' Running
until_eq $P/again "$ST"'["lastState"]["terminated"]["message"]' "stopped by agent shutdown"
call DELETE $P/again
until_eq $P/again 'd.get("code")' 404
stop_agent
grep -q "shutting down" "$TMP/agent.log" || fail "no clean shutdown"

# --- hollow nodes ----------------------------------------------------------------------------
"$CORRAL" agent --server "$API" --hollow-nodes 50 --node-prefix hollow- --heartbeat-seconds 1 \
    --metrics-listen off \
    --status-every 2 2>>"$TMP/hollow.log" &
AGENT_PID=$!
until_eq "/api/v1/nodes" 'len([n for n in d["items"] if n["metadata"]["name"].startswith("hollow-")])' 50
until_eq $L/../hollow-49 'd["spec"]["holderIdentity"]' hollow-49
python3 - "$API" <<'EOF' || fail "creating hollow pods"
import json, sys, urllib.request
api = sys.argv[1]
for i in range(200):
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "h%d" % i, "annotations": {"corral.dev/sim-duration": "500ms"}},
            "spec": {"nodeName": "hollow-%d" % (i % 50), "containers": [{"name": "c", "image": "x"}]}}
    req = urllib.request.Request(api + "/api/v1/namespaces/default/pods", method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
EOF
until_eq "$P" 'len([p for p in d["items"] if p["metadata"]["name"].startswith("h") and p["status"].get("phase")=="Succeeded"])' 200
pod hforever '{"nodeName":"hollow-3","containers":[{"name":"c","image":"x"}]}'
until_eq $P/hforever 'd["status"]["phase"]' Running
call DELETE $P/hforever
until_eq $P/hforever 'd.get("code")' 404
stop_agent
grep -q "hollow: shutting down" "$TMP/hollow.log" || fail "hollow: no clean shutdown"

[ "$fails" -eq 0 ] || { echo "--- agent log"; tail -40 "$TMP/agent.log"; }
finish
