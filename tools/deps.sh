#!/bin/sh
# Install the Debian packages a build step needs, only when some are missing.
#
# usage: tools/deps.sh build|test|fuzz|bench
#
# Checked with dpkg-query (one call, ~10 ms), so it is cheap to run on every
# `make`. Installs with apt-get as root, else through sudo, else prints the exact
# command to run and fails, so a build never half-works for lack of a library.
set -eu

build_pkgs="make pkg-config gcc libfyaml-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev libevent-dev libssl-dev libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler"
# Real clients in the CLI tests: kubectl (Debian kubernetes-client, 1.20; see
# ensure_kubectl) and the Python client (python3-kubernetes), plus openssl
# for the TLS tests' self-signed certificates; Debian's prometheus (with
# promtool) and python3-yaml for the deploy/ checks and the real-Prometheus
# test (tests/cli/test_deploy.sh, test_prometheus.sh).
test_pkgs="$build_pkgs libcriterion-dev clang libclang-rt-14-dev clang-format clang-tidy cppcheck valgrind libxml2-utils curl openssl python3-kubernetes python3-yaml prometheus"
fuzz_pkgs="$build_pkgs clang libclang-rt-14-dev"
# The HTTP library comparison (bench/http_choice.sh) also needs the loser and wrk;
# the API server benchmark runs etcd beside Corral (bench/apiserver.sh); the
# router benchmark compares with nginx as a proxy (bench/router_bench.sh).
bench_pkgs="$build_pkgs libmicrohttpd-dev wrk etcd-server nginx"

case "${1:-build}" in
build) want=$build_pkgs ;;
test) want=$test_pkgs ;;
fuzz) want=$fuzz_pkgs ;;
bench) want=$bench_pkgs ;;
*) echo "usage: $0 build|test|fuzz|bench" >&2; exit 2 ;;
esac

installed() {
    case "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" in
    *"install ok installed"*) return 0 ;;
    *) return 1 ;;
    esac
}

# kubectl from Debian's kubernetes-client. Where another package already
# owns /usr/bin/kubectl (Google Cloud SDK's "kubectl" package, say), dpkg
# refuses to install it beside that one, so its .deb is unpacked under
# build/deps/kubernetes-client instead, without touching the system's
# kubectl; tests/cli/kube_lib.bash looks there first.
KUBECTL_DIR=build/deps/kubernetes-client
ensure_kubectl() {
    installed kubernetes-client && return 0
    [ -x "$KUBECTL_DIR/usr/bin/kubectl" ] && return 0
    if ! dpkg-query -S /usr/bin/kubectl >/dev/null 2>&1; then
        missing="$missing kubernetes-client"
        return 0
    fi
    echo "deps: /usr/bin/kubectl belongs to another package; unpacking Debian's kubernetes-client in $KUBECTL_DIR" >&2
    rm -rf "$KUBECTL_DIR.tmp" && mkdir -p "$KUBECTL_DIR.tmp"
    (cd "$KUBECTL_DIR.tmp" && { apt-get download kubernetes-client >/dev/null 2>&1 ||
        { $sudo apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null 2>&1; apt-get download kubernetes-client; }; }) &&
        dpkg-deb -x "$KUBECTL_DIR.tmp"/kubernetes-client_*.deb "$KUBECTL_DIR.tmp/root" &&
        rm -rf "$KUBECTL_DIR" && mv "$KUBECTL_DIR.tmp/root" "$KUBECTL_DIR"
    rc=$?
    rm -rf "$KUBECTL_DIR.tmp"
    return $rc
}

# Packages only one test needs (chromium for tests/cli/test_ui.sh): installed
# when possible; where they cannot be, that test skips and says why.
ensure_optional() {
    opt=""
    for p in "$@"; do installed "$p" || opt="$opt $p"; done
    [ -z "$opt" ] && return 0
    [ "$sudo" = false ] && return 1
    echo "deps: installing optional test packages:$opt" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends $opt >/dev/null 2>&1 ||
        { $sudo apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends $opt >/dev/null 2>&1; }
}

if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
else
    sudo="false"
fi

missing=""
if [ "${1:-build}" = test ]; then
    ensure_kubectl || echo "deps: could not unpack kubernetes-client (kubectl tests will be skipped)" >&2
    ensure_optional chromium chromium-driver fonts-dejavu-core ||
        echo "deps: could not install chromium and chromium-driver (the dashboard test will be skipped)" >&2
fi
for p in $want; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

echo "deps: installing missing Debian packages:$missing" >&2
if [ "$sudo" = false ]; then
    echo "deps: cannot install as $(id -un); run this, then make again:" >&2
    echo "    sudo apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have stale or empty package lists: update once and retry.
if ! $sudo apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends $missing >/dev/null 2>&1; then
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null 2>&1 || true
    $sudo apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends $missing
fi
