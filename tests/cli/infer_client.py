#!/usr/bin/env python3
"""OpenAI-style load for the inference tests and benchmarks (stdlib only).

usage:
  infer_client.py burst URL N CONC [--max-tokens K] [--stream] [--timeout S] [--times]
      N completion requests on CONC threads; prints one JSON line:
      {"ok", "failed", "codes", "by_pod", "by_revision", "ttfb_ms": {p50, p99, max}}
      (--times: and "first_byte", the time.monotonic() of each first byte)
  infer_client.py hold URL CONC STOPFILE [--max-tokens K]
      CONC streaming clients, each sending requests back to back until
      STOPFILE exists; prints {"ok", "failed", "codes"}.
  infer_client.py stream URL MAX_TOKENS [--metrics-of-pod CMD]
      one streaming chat request; checks it is chunked server-sent events,
      one token per event, ending in [DONE]; with --metrics-of-pod, after the
      first token asks the answering replica's /metrics (CMD POD prints its
      URL) and fails when the request had already finished there.

URL is the completions URL, e.g. http://127.0.0.1:8080/serving/default/llm/v1/completions
(the chat URL is derived from it). The replica answering is read from the
X-Corral-Pod header, its revision from Corral-Revision (set by the router).
"""
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request


def split(url):
    u = urllib.parse.urlsplit(url)
    return u.hostname, u.port or 80, u.path


def one(url, max_tokens, stream, timeout):
    """One request: (code, pod, revision, ttfb seconds, first-byte time)."""
    host, port, path = split(url)
    t0 = time.monotonic()
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        body = {"prompt": "hello", "max_tokens": max_tokens, "stream": stream}
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        first = r.read(1)
        t1 = time.monotonic()
        rest = r.read()
        data = first + rest
        if r.status == 200 and stream and b"data: [DONE]" not in data:
            return (-1, None, None, t1 - t0, t1)
        return (r.status, r.getheader("X-Corral-Pod"), r.getheader("Corral-Revision"),
                t1 - t0, t1)
    except (OSError, http.client.HTTPException):
        return (0, None, None, time.monotonic() - t0, None)
    finally:
        c.close()


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def burst(args):
    url, n, conc = args[0], int(args[1]), int(args[2])
    max_tokens = int(opt(args, "--max-tokens", "1"))
    stream = "--stream" in args
    timeout = float(opt(args, "--timeout", "300"))
    lock = threading.Lock()
    res = []
    left = [n]

    def worker():
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            r = one(url, max_tokens, stream, timeout)
            with lock:
                res.append(r)

    ts = [threading.Thread(target=worker) for _ in range(conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out = {"ok": 0, "failed": 0, "codes": {}, "by_pod": {}, "by_revision": {}}
    ttfb, firsts = [], []
    for code, pod, rev, dt, first in res:
        out["codes"][str(code)] = out["codes"].get(str(code), 0) + 1
        if code == 200:
            out["ok"] += 1
            ttfb.append(dt * 1000)
            firsts.append(first)
            out["by_pod"][pod or "?"] = out["by_pod"].get(pod or "?", 0) + 1
            if rev:
                out["by_revision"][rev] = out["by_revision"].get(rev, 0) + 1
        else:
            out["failed"] += 1
    out["ttfb_ms"] = {"p50": pct(ttfb, 0.5), "p99": pct(ttfb, 0.99), "max": max(ttfb or [0])}
    if "--times" in args:
        out["first_byte"] = sorted(firsts)
    print(json.dumps(out))
    return 0


def hold(args):
    url, conc, stop = args[0], int(args[1]), args[2]
    max_tokens = int(opt(args, "--max-tokens", "50"))
    lock = threading.Lock()
    out = {"ok": 0, "failed": 0, "codes": {}}

    def worker():
        while not os.path.exists(stop):
            code = one(url, max_tokens, True, 300)[0]
            with lock:
                out["codes"][str(code)] = out["codes"].get(str(code), 0) + 1
                out["ok" if code == 200 else "failed"] += 1

    ts = [threading.Thread(target=worker) for _ in range(conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps(out))
    return 0


def success_count(metrics_url):
    body = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
    for line in body.splitlines():
        if line.startswith("vllm:request_success_total{"):
            return float(line.split()[-1])
    return 0.0


def stream(args):
    url, max_tokens = args[0], int(args[1])
    pod_cmd = opt(args, "--metrics-of-pod", None)
    host, port, path = split(url)
    path = path.replace("/v1/completions", "/v1/chat/completions")
    c = http.client.HTTPConnection(host, port, timeout=120)
    c.request("POST", path, json.dumps({"max_tokens": max_tokens, "stream": True,
              "messages": [{"role": "user", "content": "hi"}]}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        print(f"stream: HTTP {r.status}: {r.read()[:300]!r}")
        return 1
    if r.getheader("Transfer-Encoding") != "chunked":
        print(f"stream: not chunked: {r.getheaders()}")
        return 1
    tokens, done, before = [], False, None
    metrics = None
    if pod_cmd:
        pod = r.getheader("X-Corral-Pod")
        metrics = subprocess.run(pod_cmd.split() + [pod], capture_output=True, text=True,
                                 check=True).stdout.strip() + "/metrics"
        before = success_count(metrics)
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
        delta = json.loads(data)["choices"][0].get("delta", {})
        if delta.get("content"):
            tokens.append(delta["content"])
            if len(tokens) == 1 and metrics and success_count(metrics) != before:
                print("stream: the first token came only after the request had finished")
                return 1
    if not done or len(tokens) != max_tokens:
        print(f"stream: {len(tokens)} tokens (want {max_tokens}), [DONE] {done}")
        return 1
    print(json.dumps({"tokens": len(tokens)}))
    return 0


def opt(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def main():
    cmds = {"burst": burst, "hold": hold, "stream": stream}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        print(__doc__)
        return 2
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
