#!/bin/bash
# `corral standin-kubelet` as a command (the device plugin against it is
# tests/agent/test_deviceplugin.c; with `corral agent --kube`, the end-to-end
# script): flags, a starting kubelet's removal of stale sockets, the pod watch
# (a GPU pod with no plugin registered is refused as kubelet refuses it, a pod
# without GPUs is not its business), and a clean stop on SIGTERM.
source tests/cli/lib.bash
source tests/cli/apiserver_lib.bash

expect_exit 2 "$CORRAL" standin-kubelet
expect_out "usage: corral standin-kubelet"
expect_exit 2 "$CORRAL" standin-kubelet --dir "$TMP" --server http://127.0.0.1:1
expect_exit 1 "$CORRAL" standin-kubelet --dir "$TMP/missing"
expect_out "cannot open $TMP/missing"

start_server "$TMP/data"
mkdir -p "$TMP/dp"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$TMP/dp/old-plugin.sock"
"$CORRAL" standin-kubelet --dir "$TMP/dp" --server "$API" --node-name n1 >"$TMP/out" 2>"$TMP/err" &
KPID=$!
until_ok 10 test -S "$TMP/dp/kubelet.sock" || fail "kubelet.sock never appeared: $(cat "$TMP/err")"
[ -e "$TMP/dp/old-plugin.sock" ] && fail "the stale plugin socket was not removed"

cat >"$TMP/pods.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: cpu, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: gpu, namespace: default}
spec:
  nodeName: n1
  containers:
  - name: c
    image: x
    resources: {limits: {nvidia.com/gpu: 2}}
YAML
expect_exit 0 "$CORRAL" apply --server "$API" -f "$TMP/pods.yaml"
until_ok 20 grep -q '"pod":"default/gpu"' "$TMP/out" || fail "no admission line: $(cat "$TMP/out" "$TMP/err")"
grep -qF '{"pod":"default/gpu","error":"UnexpectedAdmissionError: 2 nvidia.com/gpu wanted, 0 free and healthy"}' "$TMP/out" ||
    fail "unexpected admission line: $(cat "$TMP/out")"
grep -q 'default/cpu' "$TMP/out" && fail "a pod without GPUs was admitted: $(cat "$TMP/out")"

kill -TERM "$KPID"
wait "$KPID"
rc=$?
[ "$rc" -eq 0 ] || fail "standin-kubelet exited $rc on SIGTERM: $(cat "$TMP/err")"
[ -e "$TMP/dp/kubelet.sock" ] && fail "kubelet.sock left behind"
stop_server
finish
