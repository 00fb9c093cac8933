# deploy/prometheus and deploy/grafana as shipped, checked without a cluster:
#   - the alert rules pass `promtool check rules` and their unit tests
#     (`promtool test rules`), and a broken rule is refused;
#   - prometheus.yml passes `promtool check config` (Debian's promtool has no
#     kubernetes_sd_configs: there the discovery block is replaced by an
#     equivalent static target and everything else is checked as written);
#   - the corral:prometheus ClusterRole is a valid manifest;
#   - the Grafana dashboards are importable (tests/deploy/dashboards.py) and
#     every query parses (each becomes a recording rule for promtool), and
#     the checkers refuse a broken dashboard and a broken query.
# tests/cli/test_prometheus.sh runs the same queries against a live Prometheus.
. tests/cli/lib.bash
command -v promtool >/dev/null || { echo "promtool is not installed (Debian prometheus)"; exit 77; }
P=deploy/prometheus
G=deploy/grafana
PY=/usr/bin/python3

expect_exit 0 promtool check rules "$P/corral-alerts.yml"
expect_out "SUCCESS: 6 rules found"
expect_exit 0 promtool test rules "$P/tests/corral-alerts-test.yml"
expect_out "SUCCESS"
# The unit tests can fail: the temperature threshold moved to 86 °C.
cp -r "$P" "$TMP/p"
sed -i 's/DCGM_FI_DEV_GPU_TEMP > 85/DCGM_FI_DEV_GPU_TEMP > 86/' "$TMP/p/corral-alerts.yml"
expect_exit 1 promtool test rules "$TMP/p/tests/corral-alerts-test.yml"
expect_out "alertname: GPUTemperatureHigh"
printf 'groups:\n- name: g\n  rules:\n  - alert: A\n    expr: rate(x[5m]\n' >"$TMP/bad-rules.yml"
expect_exit 1 promtool check rules "$TMP/bad-rules.yml"

# prometheus.yml: as written where promtool knows kubernetes_sd_configs,
# else with each such block made a static target (same relabeling); its
# credentials and rule files are checked too.
if promtool check config "$P/prometheus.yml" >"$TMP/cc.out" 2>&1; then
    echo "promtool checked prometheus.yml as written"
elif grep -q "field kubernetes_sd_configs not found" "$TMP/cc.out"; then
    "$PY" - "$P/prometheus.yml" "$TMP/static.yml" <<'EOF' || fail "rewriting prometheus.yml"
import os, sys, yaml
src, dst = sys.argv[1], sys.argv[2]
cfg = yaml.safe_load(open(src))
cfg["rule_files"] = [os.path.join(os.path.abspath(os.path.dirname(src)), r) for r in cfg["rule_files"]]
for job in cfg["scrape_configs"]:
    sd = job.pop("kubernetes_sd_configs", None)
    if sd is not None:
        assert [s["role"] for s in sd] == ["node"], sd
        job["static_configs"] = [{"targets": ["node-0"], "labels": {"__meta_kubernetes_node_name": "node-0"}}]
# The credentials it names, made up, so that promtool can check they exist.
text = yaml.safe_dump(cfg).replace("/etc/prometheus/corral/", os.path.dirname(dst) + "/etc/")
open(dst, "w").write(text)
EOF
    mkdir -p "$TMP/etc" && echo token >"$TMP/etc/token" && cp "$TMP/p/prometheus.yml" "$TMP/etc/ca.crt"
    expect_exit 0 promtool check config "$TMP/static.yml"
    expect_out "is valid prometheus config file syntax"
else
    fail "promtool check config $P/prometheus.yml: $(cat "$TMP/cc.out")"
fi
expect_exit 0 "$CORRAL" validate -f "$P/rbac.yaml"
expect_out "ok  ClusterRole/corral:prometheus"

# Grafana: importable JSON; every query parses.
expect_exit 0 python3 tests/deploy/dashboards.py check "$G"/*.json
expect_out "2 dashboards"
python3 tests/deploy/dashboards.py rules "$G"/*.json >"$TMP/queries.yml" || fail "listing the queries"
expect_exit 0 promtool check rules "$TMP/queries.yml"
# ... and the checks can fail: a dashboard without uid, NVIDIA's query
# missing, a query that does not parse.
mkdir -p "$TMP/broken"
python3 - "$G/corral-gpus.json" "$TMP/broken/corral-gpus.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
del d["uid"]
for p in d["panels"]:
    for t in p.get("targets", []):
        if t["expr"].startswith("DCGM_FI_DEV_GPU_TEMP{"):
            t["expr"] = "DCGM_FI_DEV_GPU_TEMP{instance=~\"$instance\""
json.dump(d, open(sys.argv[2], "w"))
EOF
expect_exit 1 python3 tests/deploy/dashboards.py check "$TMP/broken/corral-gpus.json"
expect_out "uid missing"
expect_out "lacks NVIDIA's query DCGM_FI_DEV_GPU_TEMP"
python3 tests/deploy/dashboards.py rules "$TMP/broken/corral-gpus.json" >"$TMP/bq.yml"
expect_exit 1 promtool check rules "$TMP/bq.yml"
finish
