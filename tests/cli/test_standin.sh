# The stand-in model server (`corral standin-llm`) as a client sees it:
# completions and chat (JSON and server-sent events), tokens that arrive
# one by one before the request ends, vLLM's metric names, requests beyond
# --max-num-seqs that wait, a start-up that reads the model files, the GPU
# load file, clear 4xx answers for what it refuses, and a SIGTERM drain that
# finishes the stream in flight and exits 0. Order-based: waits are bounded
# by WAIT seconds, nothing asserts on how long a step took.
. tests/cli/lib.bash
WAIT=${WAIT:-20}
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

expect_exit 0 "$CORRAL" standin-llm --help
expect_out "not vLLM"
expect_exit 2 "$CORRAL" standin-llm --max-num-seqs 0
expect_out "--max-num-seqs wants"
expect_exit 1 "$CORRAL" standin-llm --model-dir "$TMP/none" --port 0
expect_out "model directory $TMP/none"

# A model of two files (3 MB and a config), one of them in a subdirectory.
mkdir -p "$TMP/model/sub"
head -c 3000000 /dev/urandom >"$TMP/model/weights.bin"
echo '{"architectures": ["Standin"]}' >"$TMP/model/sub/config.json"
SIZE=$(($(stat -c %s "$TMP/model/weights.bin") + $(stat -c %s "$TMP/model/sub/config.json")))

PORT=$(free_port)
U=http://127.0.0.1:$PORT
CORRAL_GPU_LOAD_FILE=$TMP/gpu-load HOSTNAME=pod-a "$CORRAL" standin-llm --port "$PORT" \
    --model-dir "$TMP/model" --served-model-name demo --token-ms 50 --max-num-seqs 2 \
    --load-ms-per-gib 300000 >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
PIDS+=($SPID)
until_ok "$WAIT" curl -sf "$U/health" || { fail "no /health: $(cat "$TMP/s.err")"; finish; }

# It read every byte before it listened, and waited its simulated load.
grep -q "read $SIZE bytes in 2 files from $TMP/model" "$TMP/s.err" ||
    fail "the start-up did not report reading $SIZE bytes: $(cat "$TMP/s.err")"
want_load=$(python3 -c "print('%.3f' % ($SIZE / 2**30 * 300))")
grep -q "simulated load $want_load s" "$TMP/s.err" || fail "simulated load is not $want_load s: $(cat "$TMP/s.err")"
[ "$(grep -n 'read ' "$TMP/s.err" | cut -d: -f1)" -lt "$(grep -n 'serving demo' "$TMP/s.err" | cut -d: -f1)" ] ||
    fail "it listened before it had loaded the model"

# /v1/models says what it is.
OUT=$(curl -sf "$U/v1/models")
expect_out '"id":"demo"'
expect_out "not vLLM"

# Completions, chat: JSON with choices and usage; the same prompt, the same text.
python3 - "$U" <<'EOF' || fail "completions"
import json, sys, urllib.request
u = sys.argv[1]
def post(path, body):
    r = urllib.request.urlopen(urllib.request.Request(u + path, json.dumps(body).encode(),
                               {"Content-Type": "application/json"}))
    assert r.headers["X-Corral-Pod"] == "pod-a", r.headers
    return json.load(r)
a = post("/v1/completions", {"model": "demo", "prompt": "one two three", "max_tokens": 5})
assert a["object"] == "text_completion" and a["model"] == "demo", a
assert a["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}, a
assert a["choices"][0]["finish_reason"] == "length" and len(a["choices"][0]["text"].split()) == 5, a
b = post("/v1/completions", {"prompt": "one two three", "max_tokens": 5})
assert b["choices"][0]["text"] == a["choices"][0]["text"], (a, b)
c = post("/v1/chat/completions", {"model": "demo", "max_tokens": 4,
         "messages": [{"role": "user", "content": "hello there"}]})
assert c["object"] == "chat.completion", c
m = c["choices"][0]["message"]
assert m["role"] == "assistant" and len(m["content"].split()) == 4, c
d = post("/v1/completions", {"prompt": "x"})
assert d["usage"]["completion_tokens"] == 16, d
EOF

# Streaming: chunked SSE, one event per token; the first token arrives while
# the request is still running (the server's own count says it has not
# finished), and the events end with [DONE].
python3 - "$U" <<'EOF' || fail "streaming"
import http.client, json, sys, urllib.request
u = sys.argv[1]
host, port = u[7:].split(":")
def success():
    for l in urllib.request.urlopen(u + "/metrics").read().decode().splitlines():
        if l.startswith("vllm:request_success_total{"):
            return float(l.split()[-1])
    return 0.0
before = success()
c = http.client.HTTPConnection(host, int(port))
c.request("POST", "/v1/chat/completions", json.dumps({"model": "demo", "max_tokens": 6,
          "stream": True, "messages": [{"role": "user", "content": "hi"}]}),
          {"Content-Type": "application/json"})
r = c.getresponse()
assert r.status == 200 and r.getheader("Transfer-Encoding") == "chunked", r.getheaders()
assert r.getheader("Content-Type").startswith("text/event-stream")
tokens, done, checked = [], False, False
while True:
    line = r.readline().decode()
    if not line:
        break
    if not line.startswith("data: "):
        continue
    data = line[6:].strip()
    if data == "[DONE]":
        done = True
        break
    ch = json.loads(data)
    delta = ch["choices"][0]["delta"]
    if delta.get("content"):
        tokens.append(delta["content"])
        if not checked:
            assert success() == before, "the first token came only after the request finished"
            checked = True
assert done and len(tokens) == 6, (done, tokens)
assert success() == before + 1
EOF

# Metrics: vLLM's names and types, with the model_name label.
OUT=$(curl -sf "$U/metrics")
for m in "vllm:num_requests_running gauge" "vllm:num_requests_waiting gauge" \
    "vllm:gpu_cache_usage_perc gauge" "vllm:prompt_tokens_total counter" \
    "vllm:generation_tokens_total counter" "vllm:request_success_total counter" \
    "vllm:time_to_first_token_seconds histogram" "vllm:e2e_request_latency_seconds histogram" \
    "vllm:time_per_output_token_seconds histogram"; do
    expect_out "# TYPE $m"
done
expect_out 'vllm:num_requests_running{model_name="demo"} 0'
expect_out 'vllm:generation_tokens_total{model_name="demo"} 36'
PROMTOOL=$(command -v promtool || true)
if [ -n "$PROMTOOL" ]; then
    # vLLM's own names have a colon (a recording-rule style promtool warns about).
    printf '%s\n' "$OUT" | "$PROMTOOL" check metrics 2>&1 | grep -v "should not contain ':'" >"$TMP/lint"
    [ ! -s "$TMP/lint" ] || fail "promtool: $(cat "$TMP/lint")"
fi

# Beyond --max-num-seqs requests wait; the GPU load file says 100% while two run.
metric() { curl -sf "$U/metrics" | grep -q "^vllm:$1{model_name=\"demo\"} $2\$"; }
for i in 1 2 3 4; do
    curl -sf "$U/v1/completions" -d '{"prompt": "p'$i'", "max_tokens": 20}' >"$TMP/q$i" &
    PIDS+=($!)
done
until_ok "$WAIT" metric num_requests_running 2 || fail "not 2 running"
until_ok "$WAIT" metric num_requests_waiting 2 || fail "not 2 waiting: $(curl -s "$U/metrics" | grep num_requests)"
until_ok "$WAIT" grep -qx "100.0" "$TMP/gpu-load" || fail "GPU load file: $(cat "$TMP/gpu-load")"
until_ok "$WAIT" metric num_requests_waiting 0 || fail "the waiting requests did not start"
for i in 1 2 3 4; do
    until_ok "$WAIT" grep -q '"completion_tokens":20' "$TMP/q$i" || fail "request $i: $(cat "$TMP/q$i")"
done
until_ok "$WAIT" grep -qx "0.0" "$TMP/gpu-load" || fail "GPU load file not back to 0: $(cat "$TMP/gpu-load")"

# What it refuses, with clear 4xx answers.
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }
[ "$(code "$U/v1/completions" -d '{"prompt": "x", "model": "other"}')" = 404 ] && grep -q 'other' "$TMP/body" ||
    fail "an unknown model: $(cat "$TMP/body")"
[ "$(code "$U/v1/completions" -d '{"prompt": ')" = 400 ] && grep -q 'not valid JSON' "$TMP/body" ||
    fail "bad JSON: $(cat "$TMP/body")"
[ "$(code "$U/v1/completions" -d '{"prompt": "x", "max_tokens": 100000}')" = 400 ] ||
    fail "max_tokens over the bound: $(cat "$TMP/body")"
[ "$(code "$U/v1/chat/completions" -d '{"messages": []}')" = 400 ] || fail "no messages"
head -c 1100000 /dev/zero | tr '\0' 'a' >"$TMP/big"
[ "$(code "$U/v1/completions" --data-binary @"$TMP/big")" = 413 ] || fail "a 1.1 MB body: $(cat "$TMP/body")"
[ "$(code "$U/v1/completions" -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' b)" -d '{}')" = 431 ] ||
    fail "a 20 KB header"
[ "$(code "$U/nothing")" = 404 ] || fail "an unknown path"
[ "$(code -X DELETE "$U/v1/models")" = 405 ] || fail "a wrong method"

# SIGTERM: the stream in flight finishes, /health says 503 meanwhile, exit 0.
PORT2=$(free_port)
"$CORRAL" standin-llm --port "$PORT2" --token-ms 100 --drain-window 2s >"$TMP/d.out" 2>"$TMP/d.err" &
DPID=$!
PIDS+=($DPID)
until_ok "$WAIT" curl -sf "http://127.0.0.1:$PORT2/health" || fail "second server"
python3 - "$PORT2" "$DPID" <<'EOF' || fail "drain: $(cat "$TMP/d.err")"
import http.client, json, os, signal, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("POST", "/v1/completions", json.dumps({"prompt": "x", "max_tokens": 8, "stream": True}))
r = c.getresponse()
tokens, done = 0, False
while True:
    line = r.readline().decode()
    if not line:
        break
    if line.startswith("data: [DONE]"):
        done = True
    elif line.startswith("data: "):
        tokens += 1
        if tokens == 1:
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):  # the signal is handled in the server's own time
                h = http.client.HTTPConnection("127.0.0.1", port)
                h.request("GET", "/health")
                if h.getresponse().status == 503:
                    break
                time.sleep(0.02)
            else:
                raise AssertionError("/health never said 503 while draining")
assert done and tokens == 8, (done, tokens)
EOF
wait "$DPID"
rc=$?
[ "$rc" -eq 0 ] || fail "exit $rc after SIGTERM (want 0): $(cat "$TMP/d.err")"
grep -q "stopping: draining 1 request" "$TMP/d.err" || fail "no drain line: $(cat "$TMP/d.err")"
kill -TERM "$SPID" && wait "$SPID" || fail "the first server did not stop cleanly"
finish
