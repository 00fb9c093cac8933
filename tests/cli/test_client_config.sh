# Client configuration as client-go resolves it, end to end against a
# `corral apiserver` with HTTPS and tokens: an exec credential plugin in a
# kubeconfig (run once, KUBERNETES_EXEC_INFO given), $KUBECONFIG files
# merged (context in one, cluster and user in another), the in-cluster
# service account (KUBERNETES_SERVICE_HOST/PORT, token, ca.crt, namespace)
# when nothing else names a server, and the components' --kube-api-* flags.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; [ -n "${CPID:-}" ] && kill "$CPID" 2>/dev/null; rm -rf "$TMP"' EXIT

make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
SERVER="https://127.0.0.1:$PORT"
CA64=$(base64 -w0 "$TMP/cert.pem")
unset CORRAL_SERVER KUBECONFIG
export HOME="$TMP/home"

# An exec plugin: counts its runs, keeps what it was given.
mkdir -p "$TMP/bin"
cat >"$TMP/bin/get-token" <<PLUGIN
#!/bin/sh
echo run >>"$TMP/runs"
printf '%s' "\$KUBERNETES_EXEC_INFO" >"$TMP/exec-info"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "\$1"
PLUGIN
chmod +x "$TMP/bin/get-token"
cat >"$TMP/exec.kc" <<KC
apiVersion: v1
kind: Config
current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "$SERVER", certificate-authority-data: "$CA64"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: bin/get-token
      args: [admin-token-0123456789]
      interactiveMode: Never
      provideClusterInfo: true
KC
expect_exit 0 "$CORRAL" get ns --kubeconfig "$TMP/exec.kc"
expect_out "kube-public"
[ "$(wc -l <"$TMP/runs")" = 1 ] || fail "the plugin ran $(wc -l <"$TMP/runs") times"
grep -q "\"server\":\"$SERVER\"" "$TMP/exec-info" || fail "exec info: $(cat "$TMP/exec-info")"
sed -i 's/admin-token-0123456789/wrong-token/' "$TMP/exec.kc"
expect_exit 1 "$CORRAL" get ns --kubeconfig "$TMP/exec.kc"
expect_out "Unauthorized"
[ "$(wc -l <"$TMP/runs")" = 3 ] || fail "a 401 should run the plugin again: $(wc -l <"$TMP/runs") runs"

# KUBECONFIG merged: the context in one file, cluster and user in another.
mkdir -p "$TMP/a" "$TMP/b"
printf 'apiVersion: v1\nkind: Config\ncurrent-context: m\ncontexts: [{name: m, context: {cluster: c, user: u, namespace: kube-public}}]\n' >"$TMP/a/config"
cat >"$TMP/b/config" <<KC
apiVersion: v1
kind: Config
current-context: ignored
clusters: [{name: c, cluster: {server: "$SERVER", certificate-authority: ../cert.pem}}]
users: [{name: u, user: {tokenFile: tok}}]
KC
printf 'admin-token-0123456789\n' >"$TMP/b/tok"
KUBECONFIG="$TMP/missing:$TMP/a/config:$TMP/b/config" expect_exit 0 "$CORRAL" get clusterroles
expect_out "cluster-admin"

# In a pod: the service account, when nothing else names a server.
mkdir -p "$TMP/sa"
cp "$TMP/cert.pem" "$TMP/sa/ca.crt"
printf 'alice-token-0123456789' >"$TMP/sa/token"
printf 'ml' >"$TMP/sa/namespace"
export CORRAL_SERVICEACCOUNT_DIR="$TMP/sa" KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$PORT
expect_exit 1 "$CORRAL" get pods
expect_out 'User "alice" cannot list resource "pods" in API group "" in the namespace "ml"'
printf 'admin-token-0123456789' >"$TMP/sa/token"
expect_exit 0 "$CORRAL" get ns
expect_out "kube-public"
KUBECONFIG="$TMP/exec.kc" expect_exit 1 "$CORRAL" get ns
expect_out "Unauthorized" # the kubeconfig wins over the service account

# The components take the shared flags, and the service account.
expect_exit 2 "$CORRAL" controller --kube-api-qps fast
expect_out "--kube-api-qps wants a number"
expect_exit 2 "$CORRAL" router --kube-api-content-type text/plain
expect_out "--kube-api-content-type is application/json or"
"$CORRAL" controller --kube-api-qps 20 --kube-api-burst 40 \
    --kube-api-content-type application/json --metrics-listen off >"$TMP/ctl.log" 2>&1 &
CPID=$!
until_ok 50 grep -q "watching $SERVER" "$TMP/ctl.log" || fail "controller: $(cat "$TMP/ctl.log")"
kill -TERM "$CPID"
wait "$CPID" 2>/dev/null
CPID=""
finish
