# corral up as a user runs it: first start (PKI, tokens, kubeconfig, RBAC,
# the API server over TLS answering kubectl), a second `corral up` on the
# same directory and one on a busy port refused, Ctrl-C stopping every child
# with exit 0, a restart resuming the same CA and objects, and kill -9 of
# `corral up` leaving no child behind. Node checks run only when this build
# has `corral agent`. UP_WAIT bounds every wait (seconds).
. tests/cli/lib.bash
. tests/cli/kube_lib.bash
UP_WAIT=${UP_WAIT:-30}
UP_PID=""
D=$TMP/d

# Children of corral up are the processes whose command line holds "$D/".
children() { pgrep -f -- "$D/" || true; }

cleanup() {
    [ -n "$UP_PID" ] && kill -KILL "$UP_PID" 2>/dev/null
    for p in $(children); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
find_kubectl
PORT=$(free_port)
K() { "$KUBECTL" --kubeconfig "$D/kubeconfig" --request-timeout=10s "$@"; }

# start_up: corral up in the background; waits for its banner.
start_up() {
    up_start "$UP_WAIT" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 1 --stop-timeout 5 \
        --ready-timeout "$UP_WAIT" || exit 1
}

# gone PID...: wait until none of the processes exists.
gone() {
    for _ in $(seq 1 $((UP_WAIT * 10))); do
        local left=""
        for p in "$@"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    fail "processes left behind:$left"
    ps -o pid,args -p "${left// /,}" 2>/dev/null
}

# The RBAC manifests corral up applies are valid as shipped (deploy/ also
# holds Prometheus and Grafana files, which are not manifests).
expect_exit 0 "$CORRAL" validate -f deploy/rbac/ -f deploy/prometheus/rbac.yaml
expect_out "ok  ClusterRole/corral:scheduler"

start_up
OUT=$(cat "$TMP/up.out")
expect_out "https://127.0.0.1:$PORT"
expect_out "export KUBECONFIG=$D/kubeconfig"
expect_out "kubectl get nodes"
expect_out "corral apply -f examples/quickstart/gang-2x8.yaml"
for f in kubeconfig tokens.csv pki/ca.key pki/apiserver.key kubeconfigs/scheduler.kubeconfig; do
    [ "$(stat -c %a "$D/$f")" = 600 ] || fail "$f is mode $(stat -c %a "$D/$f"), want 600"
done
expect_exit 0 K get --raw /readyz
expect_out "ok"
expect_exit 0 K get clusterrole corral:scheduler corral:controller -o name
expect_out "clusterrole.rbac.authorization.k8s.io/corral:controller"
expect_exit 0 K -n kube-system get rolebinding corral:scheduler-leader-election -o name
expect_exit 0 K create configmap up-test --from-literal=k=v
# Plain HTTP and no token are refused; the CA is needed.
expect_exit 0 curl -s --cacert "$D/pki/ca.crt" "https://127.0.0.1:$PORT/api/v1/namespaces/default/configmaps"
expect_out '"code":401'
if "$CORRAL" agent --help >/dev/null 2>&1; then
    expect_exit 0 K get nodes -o name
    expect_out "node/sim-node-0"
else
    echo "note: this build has no 'corral agent': node checks skipped"
fi

# One corral up per data directory; a busy port is reported.
expect_exit 1 "$CORRAL" up --data-dir "$D" --listen "127.0.0.1:$PORT"
expect_out "another corral up (pid $UP_PID) is running on $D"
expect_exit 1 "$CORRAL" up --data-dir "$TMP/other" --listen "127.0.0.1:$PORT" --sim-nodes 0
expect_out "cannot listen on 127.0.0.1:$PORT"
expect_exit 2 "$CORRAL" up --data-dir "$TMP/other" --listen "127.0.0.1"
expect_out "--listen wants HOST:PORT"

# Ctrl-C: every child stops, exit 0.
KIDS=$(children)
[ -n "$KIDS" ] || fail "no child process found"
CA=$(sha256sum <"$D/pki/ca.crt")
kill -INT "$UP_PID"
wait "$UP_PID"
rc=$?
UP_PID=""
[ "$rc" = 0 ] || fail "corral up exited $rc after SIGINT: $(cat "$TMP/up.err")"
gone $KIDS
OUT=$(cat "$TMP/up.err")
expect_out "apiserver          stopped"

# Start again: same CA, same data.
start_up
[ "$(sha256sum <"$D/pki/ca.crt")" = "$CA" ] || fail "the CA changed across starts"
grep -q "made a CA" "$TMP/up.err" && fail "a second CA was made"
expect_exit 0 K get configmap up-test -o jsonpath='{.data.k}'
[ "$OUT" = v ] || fail "configmap after restart: $OUT"

# kill -9 of corral up: its children die with it; a restart works.
KIDS=$(children)
kill -KILL "$UP_PID"
wait "$UP_PID" 2>/dev/null
UP_PID=""
gone $KIDS
[ -z "$(children)" ] || fail "left behind: $(children)"
start_up
expect_exit 0 K get configmap up-test -o name
kill -TERM "$UP_PID"
wait "$UP_PID"
rc=$?
UP_PID=""
[ "$rc" = 0 ] || fail "corral up exited $rc after SIGTERM"
finish
