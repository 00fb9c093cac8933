#!/bin/sh
# Install the Debian packages a build step needs, only when some are missing.
#
# usage: tools/deps.sh build|test|fuzz|bench
#
# Checked with dpkg-query (one call, ~10 ms), so it is cheap to run on every
# `make`. Installs with apt-get as root, else through sudo, else prints the exact
# command to run and fails, so a build never half-works for lack of a library.
set -eu

build_pkgs="make pkg-config gcc libfyaml-dev libjansson-dev libsqlite3-dev libcurl4-openssl-dev libevent-dev"
test_pkgs="$build_pkgs libcriterion-dev clang libclang-rt-14-dev clang-format clang-tidy cppcheck valgrind libxml2-utils curl"
fuzz_pkgs="$build_pkgs clang libclang-rt-14-dev"
# The HTTP library comparison (bench/http_choice.sh) also needs the loser and wrk.
bench_pkgs="$build_pkgs libmicrohttpd-dev wrk"

case "${1:-build}" in
build) want=$build_pkgs ;;
test) want=$test_pkgs ;;
fuzz) want=$fuzz_pkgs ;;
bench) want=$bench_pkgs ;;
*) echo "usage: $0 build|test|fuzz|bench" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

echo "deps: installing missing Debian packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
else
    echo "deps: cannot install as $(id -un); run this, then make again:" >&2
    echo "    sudo apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have stale or empty package lists: update once and retry.
if ! $sudo apt-get install -y --no-install-recommends $missing >/dev/null 2>&1; then
    $sudo apt-get update -q >/dev/null 2>&1 || true
    $sudo apt-get install -y --no-install-recommends $missing
fi
