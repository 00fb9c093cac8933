#!/usr/bin/env bash
# corral router against a real corral apiserver with InferenceServices and
# pods written by hand (status through the status subresources, as the
# controller and the agent would) and small Python HTTP servers as the
# replicas, each bound to its pod's own loopback address. Checks: routing by
# Host and by /serving/NS/S (prefix stripped), X-Forwarded-*, 404 naming what
# was looked up, a 10% canary gets exactly 200 of 2,000 requests, tags
# (latest-/prev- hosts, Knative-Serving-Tag, Corral-Revision), a request to a
# revision at zero waits and is answered once a replica accepts, the queue
# bound (503 with a reason), request bodies (Content-Length, chunked,
# 100-continue), HTTP/1.0, pipelining in order, SSE relayed chunk by
# chunk (order-based: the replica sends its last event only after the test
# saw the first), and the metrics the autoscaler reads.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/apiserver_lib.bash"
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || exit 77

PIDS=()
ROUTER_PID=""
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$ROUTER_PID" ] && kill "$ROUTER_PID" 2>/dev/null
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    stop_server
    rm -rf "$TMP"
}
trap cleanup EXIT

cat >"$TMP/replica.py" <<'EOF'
import http.server, os, sys, time
host, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
gate = sys.argv[4] if len(sys.argv) > 4 else ""
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self, text):
        body = text.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            def chunk(s):
                b = s.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
                self.wfile.flush()
            chunk("data: first\n\n")
            while not os.path.exists(gate):
                time.sleep(0.02)
            chunk("data: last\n\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        self.reply("%s %s xff=%s xfh=%s\n" % (name, self.path,
                   self.headers.get("X-Forwarded-For"), self.headers.get("X-Forwarded-Host")))
    def do_POST(self):
        data = b""
        if self.headers.get("Transfer-Encoding") == "chunked":
            while True:
                n = int(self.rfile.readline().strip(), 16)
                if n == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(n)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.reply("%s got %d bytes\n" % (name, len(data)))
class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
S((host, port), H).serve_forever()
EOF

start_server "$TMP/data"
ISVCS=/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices
PODS=/api/v1/namespaces/default/pods
# Loopback addresses for this run's replicas: a free /24 of 127.x.y.0, so
# tests running at once do not collide on ports.
NET=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1))
RPORT=$(free_port)

# isvc NAME TRAFFIC_JSON: create the service and write its traffic.
isvc() {
    expect_call 201 POST $ISVCS "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\",\"metadata\":{\"name\":\"$1\"},\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"m\",\"image\":\"x\",\"ports\":[{\"containerPort\":$RPORT}]}]}}}"
    expect_call 200 PATCH "$ISVCS/$1/status" "{\"status\":{\"components\":{\"predictor\":{\"traffic\":$2}}}}" application/merge-patch+json
}
# pod NAME SERVICE REVISION N READY: a replica with podIP $NET.N.
pod() {
    expect_call 201 POST $PODS "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"labels\":{\"serving.kserve.io/inferenceservice\":\"$2\",\"corral.dev/revision\":\"$3\"}},\"spec\":{\"containers\":[{\"name\":\"m\",\"image\":\"x\",\"ports\":[{\"containerPort\":$RPORT}]}]}}"
    pod_status "$1" "$4" "$5"
}
pod_status() {
    expect_call 200 PATCH "$PODS/$1/status" "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$NET.$2\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"$3\"}]}}" application/merge-patch+json
}
# replica N NAME [GATE]: the Python server on $NET.N.
replica() {
    $PY "$TMP/replica.py" "$NET.$1" "$RPORT" "$2" "${3:-}" &
    PIDS+=($!)
}
replica_up() { curl -s -o /dev/null "http://$NET.$1:$RPORT/ping"; }

isvc llm '[{"revisionName":"llm-predictor-00001","percent":90,"tag":"prev"},{"revisionName":"llm-predictor-00002","percent":10,"tag":"latest","latestRevision":true}]'
pod llm-a llm llm-predictor-00001 1 True
pod llm-b llm llm-predictor-00002 2 True
replica 1 old "$TMP/gate"
replica 2 new
until_ok 20 replica_up 1 || fail "replica 1 did not start"
until_ok 20 replica_up 2 || fail "replica 2 did not start"

LPORT=$(free_port)
MPORT=$(free_port)
R=http://127.0.0.1:$LPORT
"$CORRAL" router --server "$API" --listen "127.0.0.1:$LPORT" --metrics-listen "127.0.0.1:$MPORT" \
    --queue-limit 2 --probe-period 20ms 2>"$TMP/router.log" &
ROUTER_PID=$!
routed() { curl -sf -H 'Knative-Serving-Tag: prev' "$R/serving/default/llm/x" | grep -q old; }
until_ok 20 routed || {
    fail "the router does not route"
    cat "$TMP/router.log"
}

# --- routes ---
OUT=$(curl -s -H 'Host: llm.default.example.com:8080' -H 'Corral-Revision: llm-predictor-00001' "$R/v1/models?a=1")
expect_out "old /v1/models?a=1 xff=127.0.0.1 xfh=llm.default.example.com:8080"
OUT=$(curl -s -H 'Corral-Revision: llm-predictor-00002' "$R/serving/default/llm/v1/completions")
expect_out "new /v1/completions"
OUT=$(curl -s -H 'Corral-Revision: llm-predictor-00002' "$R/serving/default/llm")
expect_out "new / "
OUT=$(curl -s -H 'Host: latest-llm.default' "$R/t")
expect_out "new /t"
OUT=$(curl -s -H 'Host: prev-llm.default.svc' "$R/t")
expect_out "old /t"
OUT=$(curl -s -H 'Host: llm.default' -H 'Knative-Serving-Tag: latest' "$R/t")
expect_out "new /t"
OUT=$(curl -s -w ' %{http_code}' "$R/serving/default/nosuch/x")
expect_out "no InferenceService default/nosuch"
expect_out " 404"
OUT=$(curl -s -w ' %{http_code}' -H 'Corral-Revision: llm-predictor-00009' "$R/serving/default/llm/x")
expect_out "revision llm-predictor-00009 is not in the traffic list"
expect_out " 404"

# --- the canary: exactly 10% of 2,000 (deterministic weighted round robin) ---
$PY - "$LPORT" >"$TMP/split" <<'EOF'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
n = {"old": 0, "new": 0}
for i in range(2000):
    c.request("GET", "/serving/default/llm/split")
    n[c.getresponse().read().decode().split()[0]] += 1
print(n["old"], n["new"])
EOF
read -r OLD NEW <"$TMP/split"
[ "${NEW:-0}" -ge 140 ] && [ "${NEW:-0}" -le 260 ] || fail "canary got $NEW of 2000 (want 200 +- 60)"
[ "${NEW:-0}" = 200 ] || fail "canary got $NEW of 2000, old $OLD (the split is exact: want 200)"

# --- request bodies ---
head -c 100000 /dev/urandom >"$TMP/body"
OUT=$(curl -s -H 'Corral-Revision: llm-predictor-00002' --data-binary @"$TMP/body" "$R/serving/default/llm/p")
expect_out "new got 100000 bytes"
OUT=$(curl -s -H 'Corral-Revision: llm-predictor-00002' -H 'Transfer-Encoding: chunked' --data-binary @"$TMP/body" "$R/serving/default/llm/p")
expect_out "new got 100000 bytes"

OUT=$(curl -sv -H 'Corral-Revision: llm-predictor-00002' -H 'Expect: 100-continue' --data-binary @"$TMP/body" "$R/serving/default/llm/p" 2>&1)
expect_out "HTTP/1.1 100 Continue"
expect_out "new got 100000 bytes"
# HTTP/1.0: answered, and the connection closed after it
OUT=$(curl -s0 -i -H 'Corral-Revision: llm-predictor-00002' "$R/serving/default/llm/ten")
expect_out "new /ten"
expect_out "Connection: close"
# pipelined requests are answered in order on one connection
cat >"$TMP/pipe.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"".join(b"GET /serving/default/llm/pipe%d HTTP/1.1\r\nHost: x\r\nCorral-Revision: llm-predictor-00002\r\n\r\n" % i for i in range(5)))
data = b""
while data.count(b"new /pipe") < 5:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(" ".join(w.decode() for w in data.split() if w.startswith(b"/pipe")))
EOF
OUT=$($PY "$TMP/pipe.py" "$LPORT")
expect_out "/pipe0 /pipe1 /pipe2 /pipe3 /pipe4"

# --- SSE: the first event arrives before the replica sends the last ---
curl -sN -H 'Corral-Revision: llm-predictor-00001' "$R/serving/default/llm/sse" >"$TMP/sse" &
SSE_PID=$!
first() { grep -q "data: first" "$TMP/sse"; }
until_ok 20 first || fail "the first event did not arrive while the stream was open"
grep -q "data: last" "$TMP/sse" && fail "the last event came before the replica sent it"
touch "$TMP/gate"
wait $SSE_PID
grep -q "data: last" "$TMP/sse" || fail "the stream did not finish: $(cat "$TMP/sse")"

# --- scale from zero: held, then answered once a replica accepts ---
isvc zero '[{"revisionName":"zero-predictor-00001","percent":100,"latestRevision":true,"tag":"latest"}]'
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | grep "^$1{" | grep "revision=\"zero-predictor-00001\"" | awk '{print $2}'; }
for i in 1 2; do
    curl -s -m 60 "$R/serving/default/zero/q$i" >"$TMP/q$i" &
    PIDS+=($!)
done
queued2() { [ "$(metric corral_router_queued_requests)" = 2 ]; }
until_ok 20 queued2 || fail "two requests are not queued: $(metric corral_router_queued_requests)"
OUT=$(curl -s -w ' %{http_code}' "$R/serving/default/zero/q3")
expect_out "queue is full (2 requests)"
expect_out " 503"
[ -s "$TMP/q1" ] && fail "a request to a revision at zero was answered: $(cat "$TMP/q1")"
# a starting pod (Running, not Ready) is probed: it gets the queue once it accepts
pod zero-a zero zero-predictor-00001 3 False
replica 3 zero
answered() { grep -q "zero /q1" "$TMP/q1" && grep -q "zero /q2" "$TMP/q2"; }
until_ok 30 answered || fail "queued requests were not answered: $(cat "$TMP/q1" "$TMP/q2")"
[ "$(metric corral_router_request_arrivals_total)" = 3 ] || fail "arrivals $(metric corral_router_request_arrivals_total), want 3"
[ "$(metric corral_router_queue_overflows_total)" = 1 ] || fail "overflows $(metric corral_router_queue_overflows_total), want 1"
C=$(metric corral_router_concurrency_seconds_total)
$PY -c "import sys; sys.exit(0 if float('$C') > 0 else 1)" || fail "concurrency integral is $C"
OUT=$(curl -s "http://127.0.0.1:$MPORT/metrics")
expect_out 'corral_router_requests_total{namespace="default",service="llm",revision="llm-predictor-00002",code="200"}'
expect_out 'corral_router_pod_in_flight_requests{namespace="default",pod="llm-a"} 0'
expect_out 'corral_router_request_duration_seconds_bucket{namespace="default",service="llm"'

# --- the pod Ready (as the agent reports it) serves like any other ---
pod_status zero-a 3 True
OUT=$(curl -s "$R/serving/default/zero/ready")
expect_out "zero /ready"

kill -TERM "$ROUTER_PID"
wait "$ROUTER_PID" || fail "the router did not exit cleanly on SIGTERM"
ROUTER_PID=""
finish
