# corral agent with tokens (API server with --token-auth-file and its Node
# authorizer): an agent with its node's token registers, renews its Lease,
# reads a ConfigMap its pod refers to, writes pod status and confirms a
# deletion; a token of another node cannot register this node; hollow
# nodes write with their own tokens from --token-file.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash

AGENT_PID=""
stop_agent() {
    if [ -n "$AGENT_PID" ]; then
        kill -TERM "$AGENT_PID" 2>/dev/null
        wait "$AGENT_PID" 2>/dev/null
        local rc=$?
        AGENT_PID=""
        [ "$rc" -eq 0 ] || fail "the agent exited with $rc"
    fi
}
trap 'stop_agent; stop_server; rm -rf "$TMP"' EXIT

cat >"$TMP/tokens.csv" <<'EOF'
admintok,admin,1,system:masters
n1tok,system:node:n1,2,system:nodes
n2tok,system:node:n2,3,system:nodes
h0tok,system:node:hollow-0,4,system:nodes
h1tok,system:node:hollow-1,5,system:nodes
EOF
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv"
H='Authorization: Bearer admintok'
get() { curl -s -H "$H" "$API$1"; }
post() {
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "$H" -H 'Content-Type: application/json' \
        -X POST "$API$1" -d "$2")
    [ "$code" = 201 ] || fail "POST $1: HTTP $code"
}
# until_in PATH TEXT: wait (up to ~30 s) until GET PATH contains TEXT.
until_in() {
    for _ in $(seq 1 150); do
        get "$1" | grep -qF -- "$2" && return 0
        sleep 0.2
    done
    fail "$1 never contained $2: $(get "$1" | head -c 400)"
}

"$CORRAL" agent --server "$API" --metrics-listen off --token n1tok --node-name n1 --gpus sim:h100-sxm-8 \
    --root "$TMP/root" --heartbeat-seconds 1 --status-every 1 2>"$TMP/agent.log" &
AGENT_PID=$!
until_in /api/v1/nodes/n1 '"nvidia.com/gpu":"8"'
until_in /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1 '"holderIdentity":"n1"'
post /api/v1/namespaces/default/configmaps \
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"from-cm"}}'
post /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},
  "spec":{"nodeName":"n1","containers":[{"name":"main","image":"x","command":["sh","-c","echo K=$K; exec sleep 600"],
  "env":[{"name":"K","valueFrom":{"configMapKeyRef":{"name":"cm","key":"k"}}}]}]}}'
until_in /api/v1/namespaces/default/pods/p1 '"phase":"Running"'
expect_exit 0 "$CORRAL" logs -s "$API" --token admintok p1
expect_out "K=from-cm"
curl -s -o /dev/null -H "$H" -X DELETE "$API/api/v1/namespaces/default/pods/p1"
until_in /api/v1/namespaces/default/pods/p1 '"code":404'
stop_agent

# Another node's token cannot register n1.
"$CORRAL" agent --server "$API" --metrics-listen off --token n2tok --node-name n1 --gpus none --root "$TMP/root2" \
    --heartbeat-seconds 1 2>"$TMP/agent2.log" &
AGENT_PID=$!
for _ in $(seq 1 100); do grep -q forbidden "$TMP/agent2.log" && break; sleep 0.1; done
grep -q 'node "n2" is not allowed to modify node "n1"' "$TMP/agent2.log" ||
    fail "no 403 for another node: $(cat "$TMP/agent2.log")"
stop_agent

# Hollow nodes, each with its own token.
printf 'hollow-0,h0tok\nhollow-1,h1tok\n' >"$TMP/hollow-tokens"
"$CORRAL" agent --server "$API" --metrics-listen off --token admintok --hollow-nodes 2 --token-file "$TMP/hollow-tokens" \
    --heartbeat-seconds 1 2>"$TMP/hollow.log" &
AGENT_PID=$!
until_in /api/v1/nodes/hollow-1 '"type":"Ready","status":"True"'
until_in /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/hollow-0 '"holderIdentity":"hollow-0"'
post /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"h",
  "annotations":{"corral.dev/sim-duration":"200ms"}},"spec":{"nodeName":"hollow-1","containers":[{"name":"c","image":"x"}]}}'
until_in /api/v1/namespaces/default/pods/h '"phase":"Succeeded"'
stop_agent
grep -q "HTTP 403" "$TMP/hollow.log" && fail "hollow: forbidden requests: $(cat "$TMP/hollow.log")"
finish
