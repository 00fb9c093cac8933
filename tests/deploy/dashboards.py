#!/usr/bin/env python3
"""Check the Grafana dashboards of deploy/grafana/ and list their queries.

usage: dashboards.py check FILE...     structure (below); exit 1 on a problem
       dashboards.py exprs FILE...     every query, Grafana variables replaced
                                       ($instance -> .*, $__rate_interval -> 1m),
                                       one JSON string a line
       dashboards.py rules FILE...     the same queries as a Prometheus rules
                                       file (one recording rule each), for
                                       `promtool check rules` to parse them

A dashboard is importable when it is valid JSON with a uid, a title, an
integer schemaVersion, a datasource variable (type datasource, query
prometheus) that every panel and target uses, unique panel ids, grid
positions inside the 24 columns, and a non-empty expr on every target.
corral-gpus.json must also hold every query of NVIDIA's DCGM exporter
dashboard (grafana/dcgm-exporter-dashboard.json in NVIDIA/dcgm-exporter), so
that either dashboard works on either exporter.
"""
import json
import re
import sys

# The queries of NVIDIA's dashboard, verbatim.
NVIDIA_EXPRS = [
    'DCGM_FI_DEV_GPU_TEMP{instance=~"$instance", gpu=~"$gpu"}',
    'avg(DCGM_FI_DEV_GPU_TEMP{instance=~"$instance", gpu=~"$gpu"})',
    'DCGM_FI_DEV_POWER_USAGE{instance=~"$instance", gpu=~"$gpu"}',
    'sum(DCGM_FI_DEV_POWER_USAGE{instance=~"$instance", gpu=~"$gpu"})',
    'DCGM_FI_DEV_SM_CLOCK{instance=~"$instance", gpu=~"$gpu"} * 1000000',
    'DCGM_FI_DEV_GPU_UTIL{instance=~"$instance", gpu=~"$gpu"}',
    'DCGM_FI_DEV_FB_USED{instance=~"$instance", gpu=~"$gpu"}',
    'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~"$instance", gpu=~"$gpu"}',
]
NVIDIA_VARS = {"instance": "label_values(DCGM_FI_DEV_GPU_TEMP, instance)",
               "gpu": "label_values(DCGM_FI_DEV_GPU_TEMP, gpu)"}
DS_UID = "${datasource}"


def panels_of(d):
    for p in d.get("panels", []):
        yield p
        for sub in p.get("panels", []):
            yield sub


def targets_of(d):
    for p in panels_of(d):
        for t in p.get("targets", []):
            yield p, t


def check(path, d):
    errs = []
    for key, kind in (("uid", str), ("title", str), ("schemaVersion", int)):
        if not isinstance(d.get(key), kind) or d.get(key) in ("", None):
            errs.append(f"{key} missing or not a {kind.__name__}")
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        errs.append("no datasource variable of type datasource, query prometheus")
    ids = set()
    for p in panels_of(d):
        pid = p.get("id")
        if pid in ids:
            errs.append(f"panel id {pid} used twice")
        ids.add(pid)
        gp = p.get("gridPos", {})
        if not all(isinstance(gp.get(k), int) for k in "hwxy") or gp["x"] + gp["w"] > 24:
            errs.append(f"panel {p.get('title')!r}: bad gridPos {gp}")
        if p.get("type") == "row":
            continue
        if (p.get("datasource") or {}).get("uid") != DS_UID:
            errs.append(f"panel {p.get('title')!r} does not use the datasource variable")
        if not p.get("targets"):
            errs.append(f"panel {p.get('title')!r} has no query")
    for p, t in targets_of(d):
        if not isinstance(t.get("expr"), str) or not t["expr"].strip():
            errs.append(f"panel {p.get('title')!r}: target {t.get('refId')} has no expr")
        if (t.get("datasource") or {}).get("uid") != DS_UID:
            errs.append(f"panel {p.get('title')!r}: target {t.get('refId')} does not use the datasource variable")
    for name, v in variables.items():
        if v.get("type") == "query" and (v.get("datasource") or {}).get("uid") != DS_UID:
            errs.append(f"variable {name} does not use the datasource variable")
    if path.endswith("corral-gpus.json"):
        have = {t["expr"] for _, t in targets_of(d)}
        errs += [f"lacks NVIDIA's query {e}" for e in NVIDIA_EXPRS if e not in have]
        for name, q in NVIDIA_VARS.items():
            if variables.get(name, {}).get("definition") != q:
                errs.append(f"variable {name} is not NVIDIA's {q}")
    return [f"{path}: {e}" for e in errs]


def concrete(expr):
    """The expression as Grafana would send it with every variable at All."""
    expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "1m")
    return re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", ".*", expr)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "exprs", "rules"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, files = sys.argv[1], sys.argv[2:]
    errs, exprs = [], []
    for path in files:
        try:
            d = load(path)
        except (OSError, ValueError) as e:
            errs.append(f"{path}: not valid JSON: {e}")
            continue
        errs += check(path, d)
        exprs += [concrete(t["expr"]) for _, t in targets_of(d) if isinstance(t.get("expr"), str)]
    if mode == "check":
        for e in errs:
            print(e)
        print(f"{len(files)} dashboards, {len(exprs)} queries, {len(errs)} problems")
        return 1 if errs else 0
    if mode == "exprs":
        for e in exprs:
            print(json.dumps(e))
        return 0
    print("groups:\n- name: dashboard-queries\n  rules:")
    for i, e in enumerate(exprs):
        print(f"  - record: dashboard_query_{i}\n    expr: {json.dumps(e)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
