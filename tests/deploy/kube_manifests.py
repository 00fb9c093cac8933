#!/usr/bin/env python3
"""Checks of the rendered deploy/kubernetes manifests (tests/cli/test_kube_deploy.sh).

usage: kube_manifests.py same A.yaml B.yaml         the same objects (two kubectls)
       kube_manifests.py check RENDERED.yaml CORRAL  contents (below); exit 1 on a problem
       kube_manifests.py pods RENDERED.yaml          each workload's pod template as a Pod
       kube_manifests.py crds RENDERED.yaml          the CRDs' names
       kube_manifests.py drop KIND... < IN > OUT     the objects of other kinds
       kube_manifests.py break RENDERED.yaml         the scheduler's Deployment with a
                                                     selector its template does not match

check: the kinds; every namespaced object in corral-system (the node-Lease
Role aside); the image; the scheduler's two replicas, name and Lease; the
controller's two replicas; the agent on GPU nodes with its hostPaths,
NODE_NAME and port 9400; every flag in a container's arguments known to
`corral CMD --help`; the ClusterRoles and Roles the same rules as
deploy/rbac's; the dashboards' ConfigMaps the files of deploy/grafana; every
object under kubectl apply's 256 KiB last-applied annotation.
"""
import glob
import json
import os
import re
import subprocess
import sys

import yaml

NS = "corral-system"
IMAGE = "ghcr.io/corral-dev/corral:latest"
ANNOTATION_LIMIT = 256 * 1024
# Flags of parts merged separately (`corral agent --kube`, the agentkube part):
# when the binary has no `--kube` at all, these are reported, not failed.
AGENTKUBE_FLAGS = {"--kube", "--device-plugin-dir", "--device-plugin-resource", "--cdi-dir"}

problems = []
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def problem(msg):
    problems.append(msg)


def load(path):
    with open(path) as f:
        return [d for d in yaml.load_all(f, Loader=LOADER) if d]


def key(o):
    m = o["metadata"]
    return (o["kind"], m.get("namespace", ""), m["name"])


def by_key(objs):
    return {key(o): o for o in objs}


def workloads(objs):
    return [o for o in objs if o["kind"] in ("Deployment", "DaemonSet")]


def containers(o):
    return o["spec"]["template"]["spec"]["containers"]


def help_text(corral, cmd, cache={}):
    if cmd not in cache:
        r = subprocess.run([corral, cmd, "--help"], capture_output=True, text=True)
        cache[cmd] = r.stdout + r.stderr
    return cache[cmd]


def check_flags(corral, o):
    for c in containers(o):
        args = c.get("args", [])
        if not args:
            problem("%s: container %s has no arguments" % (key(o), c["name"]))
            continue
        cmd, text = args[0], help_text(corral, args[0])
        has_kube = re.search(r"(^|[\s,])--kube\b", text) is not None
        for a in args[1:]:
            flag = a.split("=", 1)[0]
            if not flag.startswith("--"):
                continue
            if re.search(r"(^|[\s,\[])" + re.escape(flag) + r"(\b|=|\[)", text):
                continue
            if cmd == "agent" and flag in AGENTKUBE_FLAGS and not has_kube:
                print("note: corral agent %s is not in this binary yet (the agentkube part)" % flag)
                continue
            problem("%s: `corral %s` has no flag %s" % (key(o)[2], cmd, flag))


def rbac_rules(path_glob):
    out = {}
    for f in sorted(glob.glob(path_glob)):
        for o in load(f):
            if o["kind"] in ("ClusterRole", "Role"):
                out[(o["kind"], o["metadata"]["name"])] = (o["metadata"].get("namespace", ""),
                                                           o.get("rules", []))
    return out


def triples(rules):
    return {(g, r, v) for x in rules for g in x.get("apiGroups", [])
            for r in x.get("resources", []) for v in x.get("verbs", [])}


def norm(rules):
    return sorted(json.dumps({k: sorted(v) for k, v in r.items()}, sort_keys=True) for r in rules)


def check(rendered, corral):
    objs = load(rendered)
    idx = by_key(objs)
    kinds = {o["kind"] for o in objs}
    want = {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
            "RoleBinding", "Deployment", "DaemonSet", "Service", "ConfigMap",
            "CustomResourceDefinition"}
    if kinds != want:
        problem("kinds %s, want %s" % (sorted(kinds), sorted(want)))
    crds = {o["metadata"]["name"] for o in objs if o["kind"] == "CustomResourceDefinition"}
    for name in ("queues.scheduling.volcano.sh", "podgroups.scheduling.volcano.sh",
                 "jobs.batch.volcano.sh", "inferenceservices.serving.kserve.io",
                 "usagerecords.corral.dev", "schedulerconfigurations.corral.dev"):
        if name not in crds:
            problem("no CRD %s" % name)
    cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding",
                      "CustomResourceDefinition", "PriorityClass"}
    for o in objs:
        k, ns, name = key(o)
        if k in cluster_scoped:
            if ns:
                problem("%s/%s: cluster-scoped with a namespace" % (k, name))
        elif ns != NS and not (k in ("Role", "RoleBinding") and ns == "kube-node-lease"):
            problem("%s/%s: namespace %r, want %s" % (k, name, ns, NS))
        size = len(json.dumps(o, separators=(",", ":")))
        if size > ANNOTATION_LIMIT - 4096:
            problem("%s/%s: %d bytes as JSON, past kubectl apply's annotation limit" % (k, name, size))

    for o in workloads(objs):
        for c in containers(o):
            if c["image"] != IMAGE:
                problem("%s: image %s" % (key(o), c["image"]))
            sc = c.get("securityContext", {})
            if not sc.get("readOnlyRootFilesystem") or sc.get("allowPrivilegeEscalation", True):
                problem("%s: not readOnlyRootFilesystem without privilege escalation" % (key(o),))
            if sc.get("privileged"):
                problem("%s: privileged" % (key(o),))
            for p in ("livenessProbe", "readinessProbe"):
                if c.get(p, {}).get("httpGet", {}).get("path") != "/healthz":
                    problem("%s: %s is not /healthz" % (key(o), p))
            if "requests" not in c.get("resources", {}) or "limits" not in c["resources"]:
                problem("%s: no resource requests and limits" % (key(o),))
        check_flags(corral, o)
        sel = o["spec"]["selector"]["matchLabels"]
        labels = o["spec"]["template"]["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in sel.items()):
            problem("%s: selector does not match the template" % (key(o),))

    sched = idx.get(("Deployment", NS, "corral-scheduler"))
    if not sched:
        problem("no scheduler Deployment")
    else:
        args = containers(sched)[0]["args"]
        if sched["spec"]["replicas"] != 2:
            problem("scheduler replicas %s, want 2" % sched["spec"]["replicas"])
        for a in ("--scheduler-name=corral", "--leader-elect=true", "--lease-namespace=" + NS):
            if a not in args:
                problem("scheduler lacks %s" % a)
        if sched["spec"]["template"]["spec"].get("priorityClassName") != "system-cluster-critical":
            problem("scheduler priorityClassName")
    ctrl = idx.get(("Deployment", NS, "corral-controller"))
    if not ctrl or ctrl["spec"]["replicas"] != 2:
        problem("the controller must be two replicas with leader election")
    else:
        args = containers(ctrl)[0]["args"]
        for a in ("--leader-elect=true", "--lease-namespace=" + NS):
            if a not in args:
                problem("controller lacks %s" % a)
    ds = idx.get(("DaemonSet", NS, "corral-agent"))
    if not ds:
        problem("no agent DaemonSet")
    else:
        spec = ds["spec"]["template"]["spec"]
        c = spec["containers"][0]
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        gpu_keys = {e["key"] for t in terms["nodeSelectorTerms"] for e in t["matchExpressions"]}
        if gpu_keys != {"nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present"}:
            problem("agent node affinity %s" % sorted(gpu_keys))
        if not any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", [])):
            problem("agent does not tolerate nvidia.com/gpu")
        paths = {v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        for p in ("/var/lib/kubelet/device-plugins", "/var/lib/corral/models"):
            if p not in paths:
                problem("agent lacks hostPath %s" % p)
        env = {e["name"]: e for e in c.get("env", [])}
        if env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") \
                != "spec.nodeName":
            problem("agent NODE_NAME is not the downward API's spec.nodeName")
        for a in ("--kube", "--node-name=$(NODE_NAME)", "--metrics-listen=0.0.0.0:9400"):
            if a not in c["args"]:
                problem("agent lacks %s" % a)
        if not any(p["containerPort"] == 9400 for p in c.get("ports", [])):
            problem("agent does not expose 9400")

    # RBAC: deploy/rbac's ClusterRoles rule for rule; the leader-election
    # Role is the scheduler's of deploy/rbac, moved to corral-system.
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    up = rbac_rules(os.path.join(here, "deploy", "rbac", "*.yaml"))
    mine = {(o["kind"], o["metadata"]["name"]): (o["metadata"].get("namespace", ""),
                                                  o.get("rules", []))
            for o in objs if o["kind"] in ("ClusterRole", "Role")}
    for (kind, name), (ns, rules) in up.items():
        if name == "corral:metrics-reader":
            continue  # Prometheus's (deploy/prometheus)
        if (kind, name) not in mine:
            problem("%s %s of deploy/rbac is not in deploy/kubernetes" % (kind, name))
            continue
        mns, mrules = mine[(kind, name)]
        if name == "corral:controller":
            # kube-controller-manager runs node lifecycle and garbage
            # collection on a cluster: a subset, without node writes.
            extra = triples(mrules) - triples(rules)
            if extra:
                problem("%s %s: rules beyond deploy/rbac's: %s" % (kind, name, sorted(extra)))
            if {t for t in triples(mrules) if t[1] in ("nodes", "nodes/status")
                    and t[2] not in ("get", "list", "watch")}:
                problem("%s %s: writes nodes (node lifecycle is off)" % (kind, name))
        elif norm(mrules) != norm(rules):
            problem("%s %s: rules differ from deploy/rbac's" % (kind, name))
        if kind == "Role" and name.endswith("leader-election"):
            if mns != NS:
                problem("%s %s: namespace %s, want %s" % (kind, name, mns, NS))
        elif mns != ns:
            problem("%s %s: namespace %s, deploy/rbac's %s" % (kind, name, mns, ns))
    for o in objs:
        if o["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            for s in o["subjects"]:
                if s["kind"] != "ServiceAccount" or s.get("namespace") != NS:
                    problem("%s %s binds %s %s" % (o["kind"], o["metadata"]["name"], s["kind"],
                                                    s["name"]))

    for name, fn in (("corral-dashboard-gpus", "corral-gpus.json"),
                     ("corral-dashboard-cluster", "corral-cluster.json")):
        cm = idx.get(("ConfigMap", NS, name))
        with open(os.path.join(here, "deploy", "grafana", fn)) as f:
            text = f.read()
        if not cm or cm["data"].get(fn) != text:
            problem("ConfigMap %s is not deploy/grafana/%s" % (name, fn))
        elif cm["metadata"].get("labels", {}).get("grafana_dashboard") != "1":
            problem("ConfigMap %s lacks the label grafana_dashboard: \"1\"" % name)


def pods(rendered):
    out = []
    for o in workloads(load(rendered)):
        t = o["spec"]["template"]
        meta = dict(t.get("metadata", {}), name=o["metadata"]["name"],
                    namespace=o["metadata"]["namespace"])
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": t["spec"]})
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "same" and len(sys.argv) == 4:
        a, b = by_key(load(sys.argv[2])), by_key(load(sys.argv[3]))
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                problem("%s/%s/%s differs" % k)
        if not a:
            problem("nothing rendered")
    elif cmd == "crds" and len(sys.argv) == 3:
        print(" ".join(sorted(o["metadata"]["name"] for o in load(sys.argv[2])
                              if o["kind"] == "CustomResourceDefinition")))
    elif cmd == "check" and len(sys.argv) == 4:
        check(sys.argv[2], sys.argv[3])
    elif cmd == "pods" and len(sys.argv) == 3:
        pods(sys.argv[2])
    elif cmd == "drop":
        objs = [d for d in yaml.load_all(sys.stdin, Loader=LOADER)
                if d and d["kind"] not in sys.argv[2:]]
        yaml.dump_all(objs, sys.stdout, Dumper=DUMPER, sort_keys=False)
    elif cmd == "break" and len(sys.argv) == 3:
        o = by_key(load(sys.argv[2]))[("Deployment", NS, "corral-scheduler")]
        o["spec"]["selector"]["matchLabels"] = {"app.kubernetes.io/name": "not-the-scheduler"}
        yaml.safe_dump(o, sys.stdout, sort_keys=False)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print("problem: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
