# Helpers for the client tests (sourced after lib.bash and apiserver_lib.bash):
# find Debian's kubectl, make a self-signed certificate and a token file, and
# write kubeconfigs. A test is skipped (exit 77) only when a client cannot be
# installed at all (no network for apt-get), never for any other reason.

# find_kubectl: sets KUBECTL to Debian's kubectl (kubernetes-client 1.20),
# installing it through tools/deps.sh when it is missing.
find_kubectl() {
    local unpacked=build/deps/kubernetes-client/usr/bin/kubectl
    for attempt in 1 2; do
        if [ -x "$unpacked" ]; then
            KUBECTL=$unpacked
        elif dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null | grep -q "install ok installed"; then
            KUBECTL=/usr/bin/kubectl
        else
            KUBECTL=""
        fi
        [ -n "$KUBECTL" ] && return 0
        [ "$attempt" = 1 ] && tools/deps.sh test >/dev/null 2>&1
    done
    echo "kubectl (Debian kubernetes-client) cannot be installed here"
    exit 77
}

# find_python_client: sets PYTHON to a Python with Debian's python3-kubernetes.
find_python_client() {
    PYTHON=/usr/bin/python3
    for attempt in 1 2; do
        "$PYTHON" -c 'import kubernetes' 2>/dev/null && return 0
        [ "$attempt" = 1 ] && tools/deps.sh test >/dev/null 2>&1
    done
    echo "python3-kubernetes cannot be installed here"
    exit 77
}

# make_tls DIR: a self-signed certificate for 127.0.0.1 (DIR/cert.pem, DIR/key.pem).
make_tls() {
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/key.pem" -out "$1/cert.pem" -days 1 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 ||
        { echo "openssl cannot make a certificate"; exit 1; }
}

# make_tokens FILE: admin (system:masters) and alice (no group of note).
make_tokens() {
    cat >"$1" <<TOKENS
admin-token-0123456789,admin,uid-admin,"system:masters"
alice-token-0123456789,alice,uid-alice,"dev,ml"
TOKENS
}

# write_kubeconfig FILE SERVER TOKEN [CA_FILE]
write_kubeconfig() {
    local file=$1 server=$2 token=$3 ca=${4:-}
    {
        echo "apiVersion: v1"
        echo "kind: Config"
        echo "clusters:"
        echo "- name: corral"
        echo "  cluster:"
        echo "    server: $server"
        [ -n "$ca" ] && echo "    certificate-authority-data: $(base64 -w0 "$ca")"
        echo "contexts:"
        echo "- name: corral"
        echo "  context: {cluster: corral, user: u, namespace: default}"
        echo "current-context: corral"
        echo "users:"
        echo "- name: u"
        echo "  user: {token: $token}"
    } >"$file"
}
