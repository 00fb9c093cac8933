#!/usr/bin/python3
"""Write a Prometheus configuration that scrapes a running `corral up`.

It is prometheus.yml (beside this script) with the installation's addresses
and credentials filled in:

  - the API server's address from DATA_DIR/endpoints.json (else from
    DATA_DIR/kubeconfig), its CA DATA_DIR/pki/ca.crt, and a bearer token
    (--token-file, else the metrics reader's DATA_DIR/kubeconfigs/metrics.token
    that `corral up` writes for the user system:corral-metrics, which may read
    /metrics, nodes, nodes/proxy and metrics.k8s.io and nothing else; the
    admin's from DATA_DIR/kubeconfig only for an installation without one)
    copied to a 0600 file beside the output;
  - the scheduler's and controller's metrics addresses from endpoints.json (a
    job whose address is not recorded there is left out, with a warning);
  - the nodes listed from the API server now, each a static target carrying
    the label __meta_kubernetes_node_name (and the node's labels as
    __meta_kubernetes_node_label_*), as kubernetes_sd_configs (role node)
    would give, so the relabeling of prometheus.yml applies unchanged. Debian's
    prometheus is built without kubernetes_sd_configs; with an upstream
    build, --kubernetes-sd keeps the discovery instead. Run the script again
    (and reload Prometheus) when nodes are added.

usage: corral-up-config.py --data-dir DIR --out FILE [--scrape-interval 15s]
                           [--token-file FILE] [--kubernetes-sd]
Exit status: 0 written, 1 the installation could not be read, 2 usage.
"""
import argparse
import json
import os
import re
import ssl
import sys
import urllib.parse
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE_API = "127.0.0.1:6443"
TEMPLATE_CA = "/etc/prometheus/corral/ca.crt"
TEMPLATE_TOKEN = "/etc/prometheus/corral/token"
TEMPLATE_JOBS = {"corral-scheduler": "scheduler", "corral-controller": "controller"}


def fail(msg):
    print("corral-up-config: " + msg, file=sys.stderr)
    sys.exit(1)


def read_endpoints(data_dir):
    path = os.path.join(data_dir, "endpoints.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def admin_credentials(data_dir):
    """(server URL, token) of the current context of DATA_DIR/kubeconfig."""
    with open(os.path.join(data_dir, "kubeconfig"), encoding="utf-8") as f:
        kc = yaml.safe_load(f)
    ctx_name = kc.get("current-context")
    ctx = next((c["context"] for c in kc.get("contexts", []) if c["name"] == ctx_name), None)
    if ctx is None:
        ctx = kc["contexts"][0]["context"]
    cluster = next(c["cluster"] for c in kc["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in kc["users"] if u["name"] == ctx["user"])
    return cluster["server"], user.get("token", "")


def list_nodes(server, ca, token):
    ctx = ssl.create_default_context(cafile=ca)
    req = urllib.request.Request(server.rstrip("/") + "/api/v1/nodes",
                                 headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        return json.load(resp).get("items", [])


def hostport(url):
    u = urllib.parse.urlsplit(url)
    return u.scheme, u.netloc


def node_targets(nodes):
    out = []
    for n in nodes:
        meta = n.get("metadata", {})
        labels = {"__meta_kubernetes_node_name": meta["name"]}
        for k, v in (meta.get("labels") or {}).items():
            labels["__meta_kubernetes_node_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", k)] = v
        out.append({"targets": [meta["name"]], "labels": labels})
    return out


def substitute(obj, repl):
    """obj with every string's template addresses and paths replaced."""
    if isinstance(obj, dict):
        return {k: substitute(v, repl) for k, v in obj.items()}
    if isinstance(obj, list):
        return [substitute(v, repl) for v in obj]
    if isinstance(obj, str):
        for old, new in repl:
            obj = obj.replace(old, new)
    return obj


def build(args):
    endpoints = read_endpoints(args.data_dir)
    server, token = admin_credentials(args.data_dir)
    server = endpoints.get("apiserver") or server
    reader = os.path.join(args.data_dir, "kubeconfigs", "metrics.token")
    if not args.token_file and os.path.exists(reader):
        args.token_file = reader
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as f:
            token = f.read().strip()
    if not token:
        fail("no token: give --token-file")
    ca = os.path.join(os.path.abspath(args.data_dir), "pki", "ca.crt")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    token_path = os.path.join(out_dir, "corral-token")
    fd = os.open(token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")

    with open(os.path.join(HERE, "prometheus.yml"), encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    _, api = hostport(server)
    cfg = substitute(cfg, [(TEMPLATE_API, api), (TEMPLATE_CA, ca), (TEMPLATE_TOKEN, token_path)])
    cfg["global"]["scrape_interval"] = args.scrape_interval
    cfg["global"]["evaluation_interval"] = args.scrape_interval
    cfg["rule_files"] = [os.path.join(HERE, r) for r in cfg.get("rule_files", [])]

    jobs = []
    for job in cfg["scrape_configs"]:
        name = job["job_name"]
        if name in TEMPLATE_JOBS:
            url = endpoints.get(TEMPLATE_JOBS[name])
            if not url:
                print(f"corral-up-config: {args.data_dir}/endpoints.json has no "
                      f"{TEMPLATE_JOBS[name]} address: job {name} left out", file=sys.stderr)
                continue
            job["scheme"], addr = hostport(url)
            job["static_configs"] = [{"targets": [addr]}]
        if "kubernetes_sd_configs" in job and not args.kubernetes_sd:
            del job["kubernetes_sd_configs"]
            job["static_configs"] = node_targets(list_nodes(server, ca, token))
        jobs.append(job)
    cfg["scrape_configs"] = jobs
    return cfg


def main():
    p = argparse.ArgumentParser(description="Prometheus configuration for a running corral up")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--scrape-interval", default="15s")
    p.add_argument("--token-file")
    p.add_argument("--kubernetes-sd", action="store_true")
    args = p.parse_args()
    try:
        cfg = build(args)
    except (OSError, KeyError, StopIteration, ValueError, yaml.YAMLError) as e:
        fail(f"cannot read the installation in {args.data_dir}: {e}")
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# Written by deploy/prometheus/corral-up-config.py for "
                f"{os.path.abspath(args.data_dir)}\n")
        yaml.safe_dump(cfg, f, sort_keys=False)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
