# The API-client verbs under valgrind (no invalid accesses, no leaks) against
# a live server, over HTTPS with a kubeconfig: apply, get in each format,
# describe node and pod, delete, and the error paths (404, bad kubeconfig).
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
vg() {
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$CORRAL" "$@"
}
make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
write_kubeconfig "$TMP/kc" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
export KUBECONFIG=$TMP/kc
expect_exit 0 vg apply -f examples/nodes.yaml -f examples/gpu-pod.yaml -f examples/queues.yaml
expect_exit 0 vg get nodes -o wide
expect_exit 0 vg get po,q -A -o yaml
expect_exit 0 vg get q -o json
expect_exit 0 vg describe node gpu-node-1
expect_exit 0 vg describe pod cuda-vector-add
expect_exit 0 vg describe queue training-queue
expect_exit 1 vg get pod nope
expect_exit 0 vg delete -f examples/queues.yaml
printf 'current-context: x\n' >"$TMP/bad.kc"
expect_exit 1 vg get pods --kubeconfig "$TMP/bad.kc"
finish
