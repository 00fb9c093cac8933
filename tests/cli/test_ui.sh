# The web dashboard (/ui) in headless Chromium against a running `corral up`
# with two simulated 8xH100 nodes, driven through chromedriver's WebDriver
# API (tests/cli/ui_driver.py):
#   - the files are served with their types, an ETag (304 on a match) and a
#     Content-Security-Policy, without a token (no data in them);
#   - `corral up` prints the dashboard's address with the admin token in the
#     fragment; the page opened there shows 2 nodes and 16 GPUs, none
#     allocated, each node's NVLink matrix and the default queue;
#   - a pod asking for 2 GPUs, created with kubectl, turns 2 cells of the grid
#     allocated (through the watch), with the pod named on hover, in the pods
#     table and in the queue's allocation; a pod that cannot fit is listed
#     with its pending reason;
#   - the DCGM parser reads an exposition as dcgm-exporter prints it; where
#     the API server proxies node metrics, allocated GPUs show utilization;
#   - a pod finished before the page opened is in the accounting table;
#   - a wrong token gets the sign-in box; the console has no errors;
#   - screenshot: build/test-results/ui-dashboard.png.
# Skips (exit 77) only when chromium or chromedriver is not installed (the
# Makefile's deps-test installs them where it can). UI_WAIT bounds waits.
. tests/cli/lib.bash
. tests/cli/kube_lib.bash
W=${UI_WAIT:-30}
UP_PID=""
CD_PID=""
SID=""
D=$TMP/d
SHOT=${UI_SHOT:-build/test-results/ui-dashboard.png}

CHROMIUM=$(command -v chromium || true)
CHROMEDRIVER=$(command -v chromedriver || true)
if [ -z "$CHROMIUM" ] || [ -z "$CHROMEDRIVER" ]; then
    echo "SKIP: chromium and chromium-driver are not installed (apt-get install chromium chromium-driver; make deps-test tries)"
    exit 77
fi
if ! "$CORRAL" agent --help >/dev/null 2>&1; then
    echo "SKIP: this build has no 'corral agent'"
    exit 77
fi

cleanup() {
    [ -n "$SID" ] && python3 tests/cli/ui_driver.py "$WD" quit "$SID" >/dev/null 2>&1
    [ -n "$CD_PID" ] && kill "$CD_PID" 2>/dev/null
    [ -n "$UP_PID" ] && kill -KILL "$UP_PID" 2>/dev/null
    for p in $(pgrep -f -- "$D/"); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
find_kubectl
PORT=$(free_port)
WDPORT=$(free_port)
WD=http://127.0.0.1:$WDPORT
K() { "$KUBECTL" --kubeconfig "$D/kubeconfig" --request-timeout=10s "$@"; }
B() { python3 tests/cli/ui_driver.py "$WD" "$@"; }
# js_wait DESC SCRIPT: wait until SCRIPT (a function body) returns truthy.
js_wait() {
    local desc=$1
    OUT=$(B wait "$SID" "$2" "$W" 2>&1) || { fail "page: timed out waiting for $desc (last: $OUT)"; return 1; }
}

up_start "$W" --data-dir "$D" --listen "127.0.0.1:$PORT" --sim-nodes 2 --sim-profile h100-sxm-8 \
    --stop-timeout 5 --ready-timeout "$W" || exit 1
BASE=https://127.0.0.1:$PORT
URL=$(awk '$1 == "dashboard" {print $2}' "$TMP/up.out")
TOKEN=$(grep ',admin,' "$D/tokens.csv" | cut -d, -f1)
[ "$URL" = "$BASE/ui/#token=$TOKEN" ] || fail "banner's dashboard line: '$URL'"
for _ in $(seq 1 $((W * 5))); do
    [ "$(K get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" -eq 2 ] && break
    sleep 0.2
done

# A short pod that has finished before the page opens: accounting's row.
cat >"$TMP/warmup.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: ui-warmup, annotations: {corral.dev/sim-utilization: "60"}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: busybox, command: ["sh", "-c", "sleep 2"], resources: {limits: {nvidia.com/gpu: 1}}}
EOF
expect_exit 0 K apply -f "$TMP/warmup.yaml"
for _ in $(seq 1 $((W * 5))); do
    [ "$(K get pod ui-warmup -o jsonpath='{.status.phase}' 2>/dev/null)" = Succeeded ] && break
    sleep 0.2
done

# --- the files, over plain HTTPS without a token ---
CURL=(curl -s --cacert "$D/pki/ca.crt")
expect_exit 0 "${CURL[@]}" -D "$TMP/h" -o "$TMP/index.html" "$BASE/ui/"
OUT=$(cat "$TMP/h")
expect_out "HTTP/1.1 200"
expect_out "Content-Type: text/html; charset=utf-8"
expect_out "Content-Security-Policy: default-src 'none'; script-src 'self'"
expect_out "X-Content-Type-Options: nosniff"
grep -q 'id="gpu-grid"' "$TMP/index.html" || fail "/ui/ is not the dashboard page"
ETAG=$(tr -d '\r' <"$TMP/h" | awk -F': ' 'tolower($1) == "etag" {print $2}')
[ -n "$ETAG" ] || fail "no ETag on /ui/"
expect_exit 0 "${CURL[@]}" -o /dev/null -w '%{http_code}' -H "If-None-Match: $ETAG" "$BASE/ui/"
[ "$OUT" = 304 ] || fail "If-None-Match with the ETag: $OUT, want 304"
for f in "ui 200 text/html" "ui/app.js 200 text/javascript" "ui/style.css 200 text/css" \
    "ui/favicon.svg 200 image/svg+xml" "ui/nope.js 404 application/json"; do
    set -- $f
    expect_exit 0 "${CURL[@]}" -o /dev/null -w '%{http_code} %{content_type}' "$BASE/$1"
    case "$OUT" in "$2 $3"*) ;; *) fail "/$1: '$OUT', want '$2 $3'" ;; esac
done
# The page is public; the API is not.
expect_exit 0 "${CURL[@]}" -o /dev/null -w '%{http_code}' "$BASE/api/v1/nodes"
[ "$OUT" = 401 ] || fail "the API without a token answered $OUT"

# --- the page in Chromium ---
"$CHROMEDRIVER" --port="$WDPORT" >"$TMP/chromedriver.log" 2>&1 &
CD_PID=$!
for _ in $(seq 1 50); do
    curl -s "$WD/status" 2>/dev/null | grep -q '"ready": *true' && break
    sleep 0.1
done
SID=$(B new "$URL" 1600x1200) || { cat "$TMP/chromedriver.log"; echo "cannot start chromium"; exit 1; }

js_wait "the first lists" "return document.body.dataset.ready === '1' && document.getElementById('gpu-grid').dataset.gpus === '16'"
expect_exit 0 B js "$SID" "const g = document.getElementById('gpu-grid'); return [g.dataset.nodes, g.dataset.gpus, g.dataset.allocated, document.querySelectorAll('#gpu-grid .gpu').length, document.querySelectorAll('#gpu-grid .gpu[data-state=free]').length].join(' ')"
[ "$OUT" = '"2 16 0 16 16"' ] || fail "grid (nodes gpus allocated cells free): $OUT, want 2 16 0 16 16"
expect_exit 0 B js "$SID" "return document.getElementById('stat-nodes').textContent + ' | ' + document.getElementById('stat-gpus').textContent"
[ "$OUT" = '"2 / 2 | 0 / 16"' ] || fail "stat cards: $OUT"
# The token left the address bar.
expect_exit 0 B js "$SID" "return location.href"
[ "$OUT" = "\"$BASE/ui/\"" ] || fail "address after load: $OUT"
# NVLink: an 8x8 matrix, every pair NV18 on an HGX H100.
expect_exit 0 B js "$SID" "const t = document.querySelector('#topo svg'); return t.dataset.gpus + ' ' + t.querySelectorAll('rect.nvlink').length + ' ' + document.getElementById('topo-legend').textContent"
expect_out '8 56 NV18 × 28 pairs'
expect_exit 0 B js "$SID" "const q = document.querySelector('#queues tr[data-queue=default]'); return q ? q.dataset.allocated : 'none'"
[ "$OUT" = '"0"' ] || fail "default queue row: $OUT"

# The exposition parser, on dcgm-exporter's own format.
expect_exit 0 B js "$SID" 'const t = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n\",container=\"c\",namespace=\"default\",pod=\"p\"} 85\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",device=\"nvidia0\",modelName=\"x\",Hostname=\"n\",container=\"\",namespace=\"\",pod=\"\"} 1024\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",device=\"nvidia1\",modelName=\"x\",Hostname=\"n\",container=\"\",namespace=\"\",pod=\"\"} 0\n"; const r = corralDashboard.parseDcgm(t); return [r["0"].util, r["0"].fbUsed, r["0"].pod, r["0"].uuid, r["1"].util].join(" ")'
[ "$OUT" = '"85 1024 p GPU-a 0"' ] || fail "parseDcgm: $OUT"

# --- a job starts: 2 GPUs, in a queue of its own ---
cat >"$TMP/queue.yaml" <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 2, deserved: {nvidia.com/gpu: "8"}, capability: {nvidia.com/gpu: "12"}}
EOF
expect_exit 0 K apply -f "$TMP/queue.yaml"
js_wait "the research queue" "return !!document.querySelector('#queues tr[data-queue=research]')"
cat >"$TMP/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: ui-train
  labels: {volcano.sh/queue-name: research}
  annotations: {corral.dev/sim-utilization: "85"}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "sleep 300"]
    resources: {limits: {nvidia.com/gpu: 2}}
EOF
expect_exit 0 K apply -f "$TMP/pod.yaml"
js_wait "2 allocated GPUs" "return document.getElementById('gpu-grid').dataset.allocated === '2' && document.querySelectorAll('#gpu-grid .gpu[data-state=allocated][data-pod=\"default/ui-train\"]').length === 2"
NODE=$(K get pod ui-train -o jsonpath='{.spec.nodeName}')
IDS=$(K get pod ui-train -o jsonpath='{.metadata.annotations.corral\.dev/gpu-ids}')
expect_exit 0 B js "$SID" "return [...document.querySelectorAll('#gpu-grid .gpu[data-state=allocated]')].map(e => e.dataset.node + ':' + e.dataset.gpu).join(',')"
want=$(echo "$IDS" | tr ',' '\n' | sed "s/^/$NODE:/" | paste -sd,)
[ "$OUT" = "\"$want\"" ] || fail "allocated cells $OUT, want $want (pod's node and gpu-ids)"
expect_exit 0 B js "$SID" "const c = document.querySelector('#gpu-grid .gpu[data-state=allocated]'); c.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); return document.getElementById('tip').textContent"
expect_out "pod default/ui-train"
js_wait "the pod Running in the table" "const r = document.querySelector('#pods tr[data-pod=\"default/ui-train\"]'); return r && r.dataset.phase === 'Running'"
js_wait "the queue's allocation" "const q = document.querySelector('#queues tr[data-queue=research]'); return q && q.dataset.allocated === '2'"
expect_exit 0 B js "$SID" "return document.querySelector('#queues tr[data-queue=research]').textContent"
expect_out "2 / 8 / 12"
expect_exit 0 B js "$SID" "return document.getElementById('stat-gpus').textContent"
[ "$OUT" = '"2 / 16"' ] || fail "GPUs card after the pod: $OUT"

# A pod no node can hold waits, and the page says why.
sed -e 's/name: ui-train/name: ui-too-big/' -e 's/nvidia.com\/gpu: 2/nvidia.com\/gpu: 9/' -e 's/queue-name: research/queue-name: default/' "$TMP/pod.yaml" >"$TMP/big.yaml"
expect_exit 0 K apply -f "$TMP/big.yaml"
js_wait "the pending reason" "const r = document.querySelector('#pods tr[data-pod=\"default/ui-too-big\"]'); return r && r.dataset.phase === 'Pending' && r.querySelector('.reason').textContent"
[ "$OUT" != '""' ] || fail "no pending reason shown"

# Utilization where the API server proxies node metrics (nodes/proxy).
if "${CURL[@]}" -H "Authorization: Bearer $TOKEN" -o /dev/null -w '%{http_code}' "$BASE/api/v1/nodes/$NODE/proxy/metrics" | grep -q 200; then
    js_wait "utilization on the allocated GPUs" "const c = [...document.querySelectorAll('#gpu-grid .gpu[data-state=allocated]')]; return c.length === 2 && c.every(e => e.dataset.util !== '') && c.map(e => e.dataset.util).join(',')"
    js_wait "a utilization sample in the chart" "return document.getElementById('chart-legend').textContent.match(/utilized [0-9]+%/)"
else
    echo "note: this API server does not proxy node metrics: utilization not checked"
fi
# Accounting: the finished pod's UsageRecord, where the server keeps them.
if K get usagerecords.corral.dev -A >/dev/null 2>&1; then
    js_wait "the finished pod in the accounting table" "return !!document.querySelector('#usage tr[data-pod=\"default/ui-warmup\"]')"
else
    echo "note: this API server has no UsageRecords: accounting not checked"
fi
js_wait "a few chart samples" "return +document.querySelector('#chart svg').dataset.samples >= 3"

# The screenshot: the whole page.
mkdir -p "$(dirname "$SHOT")"
B fullshot "$SID" "$SHOT" || fail "no screenshot"
[ "$(head -c 8 "$SHOT" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || fail "$SHOT is not a PNG"

# The console: no errors (but a node proxy missing or a node's agent away,
# which the page shows as "no metrics").
B logs "$SID" >"$TMP/console"
grep '^SEVERE' "$TMP/console" | grep -v '/proxy/metrics - Failed to load resource' >"$TMP/errors"
[ -s "$TMP/errors" ] && fail "browser console errors:
$(cat "$TMP/errors")"

# A wrong token: the sign-in box, with the reason.
expect_exit 0 B js "$SID" "sessionStorage.clear(); history.replaceState(null, '', '/ui/#token=wrong'); setTimeout(() => location.reload(), 0); return 1"
js_wait "the sign-in box" "return !document.getElementById('login').hidden && document.getElementById('main').hidden && document.getElementById('login-error').textContent"
expect_out "not accepted"

K delete pod ui-train ui-too-big --wait=false >/dev/null 2>&1
finish
