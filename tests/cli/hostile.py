#!/usr/bin/env python3
"""Hostile requests against `corral apiserver` (tests/cli/test_hostile.sh).

Each case sends one request meant to hurt the server and checks the
answer, that it came within a liveness bound, and that /healthz on another
connection kept answering within HEALTH_MAX seconds meanwhile.
Usage: hostile.py HOST PORT SERVER_PID CASE...   (prints one line per case)
"""
import http.client
import json
import os
import socket
import sys
import threading
import time

# The sanitized binary (make test's cli-san) runs 2-3x slower and ASan's
# shadow memory and quarantine inflate its RSS: bounds scale with it.
SANITIZED = bool(os.environ.get("ASAN_OPTIONS"))
SLOW = 3.0 if SANITIZED else 1.0
REQ_MAX = 5.0 * SLOW     # liveness bound for the hostile request itself
HEALTH_MAX = 1.0 * SLOW  # /healthz on another connection meanwhile
RSS_MAX = 1024 if SANITIZED else 512  # MiB, through 1,000 watches
HOST, PORT, PID = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
CMS = "/api/v1/namespaces/default/configmaps"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def request(method, path, body=None, ctype="application/json", timeout=30, headers=None):
    c = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    headers = dict(headers or {})
    if body is not None:
        headers["Content-Type"] = ctype
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def rss_mib(hwm=False):
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmHWM:" if hwm else "VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


class Health(threading.Thread):
    """Polls /healthz on its own keep-alive connection; records the worst."""

    def __init__(self):
        super().__init__(daemon=True)
        self.worst, self.n, self.stop, self.err = 0.0, 0, False, None
        self.conn = http.client.HTTPConnection(HOST, PORT, timeout=10)
        self.conn.request("GET", "/healthz")  # connected before the case starts
        self.conn.getresponse().read()

    def run(self):
        while not self.stop:
            t = time.monotonic()
            try:
                self.conn.request("GET", "/healthz")
                r = self.conn.getresponse()
                body = r.read()
                if r.status != 200 or body != b"ok":
                    self.err = "healthz %d %r" % (r.status, body)
            except Exception as e:  # noqa: BLE001 - reported as the failure
                self.err = "healthz: %s" % e
                return
            self.worst = max(self.worst, time.monotonic() - t)
            self.n += 1
            time.sleep(0.01)


# Known stalls (docs/apiserver.md, Limits): a body of 100,000+ keys is parsed,
# validated and stored on its loop thread in about 1 s of CPU; until that
# work moves off the loop, /healthz on the same loop may wait that long.
# Cases made of several big requests get a longer liveness bound (each
# request is linear; a quadratic one takes minutes).
REQ_SLOW = {"watches": 30.0, "lists": 15.0, "hash": 15.0, "huge-list": 15.0}
# The known stalls above are about 1 s of CPU on the loop: on a machine
# whose other cores are busy (make test runs suites side by side) /healthz
# waits longer; what these cases check is that it is answered at all.
HEALTH_SLOW = {"huge-list": 5.0, "hash": 5.0}


def guarded(name, fn, bound=REQ_MAX):
    h = Health()
    h.start()
    t = time.monotonic()
    fn()
    took = time.monotonic() - t
    time.sleep(0.05)
    h.stop = True
    h.join()
    if took > bound:
        fail("%s: took %.2f s (bound %.0f s)" % (name, took, bound))
    if h.err:
        fail("%s: %s" % (name, h.err))
    if h.worst > HEALTH_SLOW.get(name, 1.0) * HEALTH_MAX:
        fail("%s: /healthz took %.2f s meanwhile" % (name, h.worst))
    if h.n == 0:
        fail("%s: /healthz was not answered meanwhile" % name)
    print("ok %s: %.2f s, /healthz %d times, worst %.3f s" % (name, took, h.n, h.worst))


def expect(status, data, want, text):
    if status != want or text.encode() not in data:
        fail("got %d (want %d with %r): %s" % (status, want, text, data[:300]))


def cm(name, data=None):
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name}, "data": data or {}},
                      separators=(",", ":"))


# --- the cases ---------------------------------------------------------------

def case_params():
    for q in ["watch=1&resourceVersion=99999999999999999999", "watch=1&resourceVersion=-1",
              "watch=1&resourceVersion=abc", "watch=1&timeoutSeconds=-5",
              "watch=1&timeoutSeconds=x", "resourceVersion=1e9", "limit=-1", "limit=abc",
              "limit=99999999999999999999", "resourceVersionMatch=Exact"]:
        s, d = request("GET", CMS + "?" + q)
        expect(s, d, 400, '"reason":"BadRequest"')
    s, d = request("GET", CMS + "?resourceVersion=9223372036854775807")
    expect(s, d, 504, "Too large resource version")
    # A watch far in the future: bounded wait, then kube's ERROR event.
    s, d = request("GET", CMS + "?watch=1&resourceVersion=9223372036854775807")
    expect(s, d, 200, '"code":504')
    cpu0 = cpu_ticks()
    time.sleep(0.5)
    if cpu_ticks() - cpu0 > 25:  # 0.25 s of CPU in 0.5 s idle: a spinning thread
        fail("server busy after the watch ended")


def cpu_ticks():
    with open("/proc/%d/stat" % PID) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def case_patch():
    request("POST", CMS, cm("hp"))
    ops = [{"op": "add", "path": "/data", "value": {"x": ["y" * 100]}}]
    ops += [{"op": "copy", "from": "/data/x", "path": "/data/x/-"}] * 40
    s, d = request("PATCH", CMS + "/hp", json.dumps(ops), "application/json-patch+json")
    expect(s, d, 422, "accumulated size increase of copy")
    ops = [{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 20000
    s, d = request("PATCH", CMS + "/hp", json.dumps(ops), "application/json-patch+json")
    expect(s, d, 413, "maximum operations in a JSON patch is 10000, got 20000")
    if rss_mib(hwm=True) > 512:
        fail("resident memory peaked at %.0f MiB" % rss_mib(hwm=True))


def case_yaml():
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: bomb",
             "  labels:", "    a0: &a0 " + "x" * 60, "data:"]
    for i in range(1, 12):
        lines.append("  k%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * 10)))
    s, d = request("POST", CMS, "\n".join(lines) + "\n", "application/yaml")
    expect(s, d, 400, "aliases would expand the document")
    deep = "[" * 5000 + "]" * 5000
    s, d = request("POST", CMS, deep)
    expect(s, d, 400, "levels")
    s, d = request("POST", CMS, "a:\n" + "".join("%s- \n" % ("  " * i) for i in range(300)),
                   "application/yaml")
    expect(s, d, 400, "levels")


def fnv_colliding_keys(n, bits=20):
    """Keys whose FNV-1a hashes agree in the low `bits` bits: the low bits
    of FNV depend only on low bits and each step inverts, so a suffix is run
    backwards to the state some 3-character prefix reaches."""
    P, mask = 16777619, (1 << bits) - 1
    pinv = pow(P, -1, 1 << 32)
    alpha = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
    table = {}
    for a in alpha:
        ha = ((2166136261 ^ a) * P) & mask
        for b in alpha:
            hb = ((ha ^ b) * P) & mask
            for c in alpha:
                table.setdefault(((hb ^ c) * P) & mask, bytes((a, b, c)))
    keys = []
    for a in alpha:
        for b in alpha:
            for c in alpha:
                for d in alpha:
                    s = 0
                    for ch in (d, c, b, a):
                        s = ((s * pinv) & mask) ^ ch
                    pre = table.get(s)
                    if pre:
                        keys.append((pre + bytes((a, b, c, d))).decode())
                        if len(keys) == n:
                            return keys
    return keys


def case_hash():
    keys = HASH_KEYS
    body = cm("collide", {k: "" for k in keys})
    if not 2_400_000 < len(body) < 3_000_000:
        fail("body is %d bytes" % len(body))
    s, d = request("POST", CMS, body)
    expect(s, d, 201, '"name":"collide"')
    s, d = request("GET", CMS + "/collide")
    expect(s, d, 200, keys[-1])
    s, d = request("PATCH", CMS + "/collide", '{"data":{"x":"y"}}',
                   "application/merge-patch+json")
    expect(s, d, 200, '"x":"y"')


def case_big_body():
    body = cm("big", {"k%06d" % i: "v" * 20 for i in range(90000)})
    s, d = request("POST", CMS, body)
    expect(s, d, 201, '"name":"big"')


def create_parallel(what, n, conns, body_of):
    """Create ConfigMaps body_of(0..n-1) over conns keep-alive connections
    (the store's writer batches concurrent writes); all must get 201."""
    errs = []

    def part(k):
        c = http.client.HTTPConnection(HOST, PORT, timeout=60)
        for i in range(k, n, conns):
            c.request("POST", CMS, body_of(i), {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            if r.status != 201:
                errs.append(r.status)
        c.close()
    ts = [threading.Thread(target=part, args=(k,)) for k in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        fail("%s: %s" % (what, errs[:5]))


def fill(n):
    """n ConfigMaps of about 1 KB."""
    create_parallel("fill", n, 16, lambda i: cm("f%06d" % i, {"k": "v" * 900}))


def case_lists():
    """Lists merged by key or as sets: a patch of n items against a list of
    m costs n + m lookups, not n * m comparisons (20,000 env entries
    applied, re-applied reversed, patched, pruned; 30,000 finalizers)."""
    env = [{"name": "E%05d" % i, "value": "v"} for i in range(20000)]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lists"},
           "spec": {"containers": [{"name": "c", "image": "x", "env": env}]}}
    path = "/api/v1/namespaces/default/pods/lists"
    apply = "application/apply-patch+yaml"
    s, d = request("PATCH", path + "?fieldManager=t", json.dumps(pod), apply)
    expect(s, d, 201, '"E19999"')
    pod["spec"]["containers"][0]["env"] = env[::-1]
    s, d = request("PATCH", path + "?fieldManager=t", json.dumps(pod), apply)
    expect(s, d, 200, '"E00000"')
    smp = {"spec": {"containers": [{"name": "c", "env": env[::2]}]}}
    s, d = request("PATCH", path, json.dumps(smp), "application/strategic-merge-patch+json")
    expect(s, d, 200, '"E00002"')
    pod["spec"]["containers"][0]["env"] = [{"name": "only", "value": "v"}]
    s, d = request("PATCH", path + "?fieldManager=t", json.dumps(pod), apply)
    expect(s, d, 200, '"only"')
    if b'"E00001"' in d:
        fail("apply did not prune the env entries it stopped applying")
    fin = {"metadata": {"finalizers": ["f%06d/x" % i for i in range(30000)]}}
    for _ in range(2):
        s, d = request("PATCH", path, json.dumps(fin), "application/strategic-merge-patch+json")
        expect(s, d, 200, '"f029999/x"')
    drop = {"metadata": {"$deleteFromPrimitiveList/finalizers": fin["metadata"]["finalizers"]}}
    s, d = request("PATCH", path, json.dumps(drop), "application/strategic-merge-patch+json")
    expect(s, d, 200, '"name":"lists"')
    if b'"f000000/x"' in d:
        fail("$deleteFromPrimitiveList left finalizers")


def case_gone():
    """Clients that send a big write and go away at once: the writes still
    happen (the request was complete), nothing leaks or crashes, and the
    server keeps answering."""
    body = cm("gone", {"k%06d" % i: "" for i in range(100000)}).encode()
    head = ("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % (CMS, len(body))).encode()
    for _ in range(4):
        sk = socket.create_connection((HOST, PORT), timeout=5)
        sk.sendall(head + body)
        sk.close()
    deadline = time.monotonic() + 10
    while True:
        s, d = request("GET", CMS + "/gone")
        if s == 200:
            break
        if time.monotonic() > deadline:
            fail("the write of a client that went away never happened: %d" % s)
        time.sleep(0.1)
    expect(s, d, 200, '"k099999"')


def case_big_list():
    s, d = request("GET", "/api/v1/configmaps")
    expect(s, d, 200, '"kind":"ConfigMapList"')


def fill_big(n):
    """n ConfigMaps of 2.5 MB (one value each: cheap to parse), so that a
    list of them is 100 MB: rendered at once it would hold the loop for
    about a second."""
    create_parallel("fill-big", n, 4,
                    lambda i: cm("big%03d" % i, {"v": chr(97 + i % 26) * 2_500_000}))


def case_huge_list():
    """A 100 MB list, as JSON and as a Table, and a watch that starts with
    it: each is rendered in slices, so /healthz on the same loop keeps
    answering meanwhile (docs/apiserver.md, Limits)."""
    # Read in pieces: scanning 100 MB at once would hold the GIL that the
    # /healthz thread needs, and time the client instead of the server.
    c = http.client.HTTPConnection(HOST, PORT, timeout=30)
    c.request("GET", CMS)
    r = c.getresponse()
    n, size = 0, 0
    while True:
        piece = r.read(1 << 20)
        if not piece:
            break
        n += piece.count(b'"name":"big')
        size += len(piece)
    c.close()
    if r.status != 200 or n < 30 or size < 100_000_000:
        fail("huge list: %d, %d bytes" % (r.status, size))
    s, d = request("GET", CMS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    expect(s, d, 200, '"kind":"Table"')
    sk = socket.create_connection((HOST, PORT), timeout=30)
    sk.sendall(("GET %s?watch=1&resourceVersion=0&timeoutSeconds=2 HTTP/1.1\r\nHost: x\r\n\r\n"
                % CMS).encode())
    got, n = b"", 0
    while not got.endswith(b"0\r\n\r\n"):
        chunk = sk.recv(1 << 20)
        if not chunk:
            break
        n += chunk.count(b'"name":"big')
        got = got[-16:] + chunk
    sk.close()
    if n < 30:  # a name may straddle two reads
        fail("huge watch: %d initial objects" % n)


def case_te():
    for te in ["chunked, gzip", "gzip, chunked", "gzip"]:
        sk = socket.create_connection((HOST, PORT), timeout=5)
        sk.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: %s\r\n\r\n0\r\n\r\n" % (CMS, te)).encode())
        head = sk.recv(4096).decode(errors="replace")
        sk.close()
        if not head.startswith("HTTP/1.1 501"):
            fail("Transfer-Encoding %s: %s" % (te, head[:100]))


def case_watches():
    n = 1000
    with open("/proc/%d/clear_refs" % PID, "w") as f:
        f.write("5")  # the peak below is this case's, not an earlier one's
    socks = []
    for i in range(n):
        sk = socket.create_connection((HOST, PORT), timeout=30)
        sk.sendall(("GET %s?watch=1&resourceVersion=%s HTTP/1.1\r\nHost: x\r\n\r\n"
                    % (CMS, START_RV)).encode())
        socks.append(sk)
    events = 20
    for i in range(events):
        s, d = request("POST", CMS, cm("w%02d" % i, {"i": str(i)}))
        expect(s, d, 201, "w%02d" % i)
    deadline = time.monotonic() + 30
    for i, sk in enumerate(socks):
        buf = b""
        while buf.count(b'"type":"ADDED"') < events:
            sk.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                chunk = sk.recv(65536)
            except socket.timeout:
                chunk = b""
            if not chunk:
                fail("watch %d got %d of %d events" % (i, buf.count(b'"ADDED"'), events))
            buf += chunk
    peak = rss_mib(hwm=True)
    for sk in socks:
        sk.close()
    if peak > RSS_MAX:
        fail("resident memory peaked at %.0f MiB with %d watches" % (peak, n))
    print("   %d watches, %d events each, peak RSS %.0f MiB" % (n, events, peak))


def current_rv():
    s, d = request("GET", CMS + "?limit=1")
    return json.loads(d)["metadata"]["resourceVersion"]


CASES = {"params": case_params, "patch": case_patch, "yaml": case_yaml, "hash": case_hash,
         "big-body": case_big_body, "big-list": case_big_list, "huge-list": case_huge_list,
         "te": case_te, "lists": case_lists, "gone": case_gone,
         "watches": case_watches}
START_RV = None
HASH_KEYS = fnv_colliding_keys(200000) if "hash" in sys.argv[4:] else None
for name in sys.argv[4:]:
    if name.startswith("fill="):
        fill(int(name[5:]))
        continue
    if name.startswith("fill-big="):
        fill_big(int(name[9:]))
        continue
    if name == "watches":
        START_RV = current_rv()
    guarded(name, CASES[name], REQ_SLOW.get(name, REQ_MAX / SLOW) * SLOW)
