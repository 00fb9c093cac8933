# The Python Kubernetes client (Debian's python3-kubernetes) lists, watches,
# creates, patches and deletes through a fresh `corral apiserver` over HTTPS
# with a bearer token (tests/cli/kube_client.py does the work); a token
# without RBAC grants is refused with 403.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
. tests/cli/kube_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT
find_python_client

make_tls "$TMP"
make_tokens "$TMP/tokens.csv"
start_server "$TMP/data" --token-auth-file "$TMP/tokens.csv" --tls-cert-file "$TMP/cert.pem" \
    --tls-private-key-file "$TMP/key.pem"
write_kubeconfig "$TMP/admin.kubeconfig" "https://127.0.0.1:$PORT" admin-token-0123456789 "$TMP/cert.pem"
write_kubeconfig "$TMP/alice.kubeconfig" "https://127.0.0.1:$PORT" alice-token-0123456789 "$TMP/cert.pem"

expect_exit 0 timeout 60 "$PYTHON" tests/cli/kube_client.py "$TMP/admin.kubeconfig"
expect_out "ok"
expect_exit 0 timeout 30 "$PYTHON" -c '
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
try:
    client.CoreV1Api().list_namespaced_pod("default")
    print("allowed")
except ApiException as e:
    print(e.status, e.reason)
' "$TMP/alice.kubeconfig"
expect_out "403 Forbidden"
finish
