# pods/log end to end with real clients: `corral apiserver` proxies to the
# log endpoint a Node advertises (status.addresses + daemonEndpoints), and
# kubectl logs / corral logs print what the node serves. The node agent's
# own log server is tested in tests/agent and tests/apiserver/test_api_logs.c;
# here a stand-in agent (python3's http.server over a directory laid out as
# /containerLogs/NS/POD/CONTAINER) serves the bytes, so this script checks
# the proxy and the clients.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
agent_pid=""
trap 'stop_server; [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; rm -rf "$TMP"' EXIT
command -v python3 >/dev/null || exit 77
find_kubectl

mkdir -p "$TMP/agent/containerLogs/default/p"
printf 'hello from p\nsecond line\n' >"$TMP/agent/containerLogs/default/p/main"
(cd "$TMP/agent" && exec python3 -m http.server --bind 127.0.0.1 0) >"$TMP/agent.log" 2>&1 &
agent_pid=$!
APORT=""
for _ in $(seq 1 100); do
    APORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMP/agent.log" | head -1)
    [ -n "$APORT" ] && break
    sleep 0.05
done
[ -n "$APORT" ] || { echo "the stand-in agent did not start: $(cat "$TMP/agent.log")"; exit 1; }

start_server "$TMP/data"
expect_call 201 POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":$APORT}}}}"
expect_call 201 POST /api/v1/namespaces/default/pods '{"metadata":{"name":"p"},"spec":{"nodeName":"n1","containers":[{"name":"main","image":"x"}]}}'
expect_call 201 POST /api/v1/namespaces/default/pods '{"metadata":{"name":"two"},"spec":{"nodeName":"n1","containers":[{"name":"a","image":"x"},{"name":"b","image":"x"}]}}'

expect_call 200 GET /api/v1/namespaces/default/pods/p/log
expect_body "hello from p"

if [ -n "${KUBECTL:-}" ]; then
    expect_exit 0 "$KUBECTL" --server "$API" logs p
    expect_out "hello from p"
    expect_out "second line"
    expect_exit 0 "$KUBECTL" --server "$API" logs p -c main --tail=5
    expect_out "second line"
    expect_exit 1 "$KUBECTL" --server "$API" logs two -c c
    expect_out "container c is not valid for pod two"
fi

expect_exit 0 "$CORRAL" logs p --server "$API"
expect_out "hello from p"
expect_exit 0 "$CORRAL" logs p -s "$API" -c main --tail 1 -f
expect_out "second line"
expect_exit 1 "$CORRAL" logs two -s "$API"
expect_out "a container name must be specified for pod two, choose one of: [a b]"

# The agent goes away: the server names the node and its address.
kill "$agent_pid"
wait "$agent_pid" 2>/dev/null
agent_pid=""
expect_exit 1 "$CORRAL" logs p -s "$API"
expect_out "node \"n1\" at 127.0.0.1:$APORT"
finish
