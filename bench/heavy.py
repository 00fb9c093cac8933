#!/usr/bin/env python3
"""What heavy requests cost the other connections of a loop.

usage: bench/heavy.py [CORRAL]     (default build/corral)

Starts `corral apiserver --threads 1 --no-fsync` on a fresh data directory,
then sends each heavy request below while another process polls /healthz
every 10 ms on its own keep-alive connection (the same loop: there is only
one), and prints per request its time, the server's CPU time and the worst
/healthz answer meanwhile. docs/benchmarks.md records a run.
"""
import http.client
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CORRAL = sys.argv[1] if len(sys.argv) > 1 else "build/corral"
CMS = "/api/v1/namespaces/default/configmaps"


def poll(port, stop, worst):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    w = 0.0
    while not stop.is_set():
        t = time.monotonic()
        c.request("GET", "/healthz")
        c.getresponse().read()
        w = max(w, time.monotonic() - t)
        time.sleep(0.01)
    worst.value = w


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request(port, method, path, body=None, ctype="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request(method, path, body=body, headers={"Content-Type": ctype} if body else {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, len(data)


def measure(port, pid, name, method, path, body=None, ctype="application/json"):
    stop, worst = multiprocessing.Event(), multiprocessing.Value("d", 0.0)
    p = multiprocessing.Process(target=poll, args=(port, stop, worst))
    p.start()
    time.sleep(0.1)
    cpu0, t0 = cpu_s(pid), time.monotonic()
    status, n = request(port, method, path, body, ctype)
    dt, cpu = time.monotonic() - t0, cpu_s(pid) - cpu0
    time.sleep(0.05)
    stop.set()
    p.join()
    print("| %s | %d | %.2f s | %.2f s | %.3f s |" % (name, status, dt, cpu, worst.value))
    sys.stdout.flush()


def cm(name, data):
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": data}, separators=(",", ":"))


def main():
    d = tempfile.mkdtemp()
    srv = subprocess.Popen([CORRAL, "apiserver", "--data-dir", d + "/data", "--listen",
                            "127.0.0.1:0", "--threads", "1", "--no-fsync"],
                           stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", srv.stderr.readline())
        port, pid = int(m.group(1)), srv.pid
        print("| request | status | time | server CPU | worst /healthz |")
        print("|---|---|---|---|---|")
        keys = {"k%06d" % i: "" for i in range(180000)}
        big = cm("keys", keys)
        measure(port, pid, "create ConfigMap, 180,000 keys (%.1f MB)" % (len(big) / 1e6),
                "POST", CMS, big)
        measure(port, pid, "merge patch of one key into it", "PATCH", CMS + "/keys",
                '{"data":{"x":"y"}}', "application/merge-patch+json")
        measure(port, pid, "update it with its keys reversed", "PUT", CMS + "/keys",
                cm("keys", dict(reversed(list(keys.items())))))
        measure(port, pid, "merge patch deleting half its keys", "PATCH", CMS + "/keys",
                json.dumps({"data": {k: None for k in list(keys)[::2]}}),
                "application/merge-patch+json")
        values = cm("values", {"v%02d" % i: "x" * 100000 for i in range(28)})
        measure(port, pid, "create ConfigMap, 28 values of 100 KB", "POST", CMS, values)
        env = [{"name": "E%05d" % i, "value": "v"} for i in range(40000)]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "env"},
               "spec": {"containers": [{"name": "c", "image": "x", "env": env}]}}
        pods = "/api/v1/namespaces/default/pods/env?fieldManager=bench"
        apply = "application/apply-patch+yaml"
        measure(port, pid, "apply a pod with 40,000 env entries", "PATCH", pods,
                json.dumps(pod), apply)
        pod["spec"]["containers"][0]["env"] = env[::-1]
        measure(port, pid, "apply it again, env reversed", "PATCH", pods, json.dumps(pod), apply)
        measure(port, pid, "list ConfigMaps", "GET", CMS)
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
