#!/usr/bin/env python3
"""Generate the CustomResourceDefinitions of deploy/kubernetes/crds/ from what
`corral apiserver` serves, so that they never drift from the kinds Corral reads.

usage: gen_crds.py [--corral build/corral] [--out deploy/kubernetes/crds]

For every Volcano, KServe and corral.dev kind a Corral component reads, it
starts a temporary `corral apiserver` (empty data directory, port 0), and
builds the CRD from:
  - /apis/GROUP/VERSION (discovery): plural, kind, scope, short names,
    categories, and the status subresource when `RESOURCE/status` is listed;
  - /openapi/v3/apis/GROUP/VERSION: the kind's schema, made structural
    (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
    custom-resource-definitions/#specifying-a-structural-schema): every $ref
    and allOf inlined, every node typed, x-kubernetes-preserve-unknown-fields
    where the schema is open, x-kubernetes-int-or-string for IntOrString and
    Quantity, no $ref/allOf/oneOf left, the root's metadata only `type: object`;
  - the Table the server answers for a list (Accept: as=Table): the printer
    columns, each mapped to its JSON path below (the names must match the
    server's, in order and priority, or generation fails).
Descriptions of the Kubernetes types inlined (io.k8s.*) are dropped: a Job's
pod template would otherwise push its CRD past kubectl apply's 256 KiB
last-applied annotation; the kinds' own descriptions stay.

Output: crds/{volcano,kserve,corral}/GROUP_PLURAL.yaml and a
kustomization.yaml in each. tests/cli/test_kube_deploy.sh regenerates into a
temporary directory and fails on any difference with the checked-in files.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

# (set, group, version, kind): the kinds a component reads (the scheduler,
# controller, router and agent informers; docs/kubernetes.md). Scenario is a
# file-level kind of `corral sim`, read by no component: not here.
KINDS = [
    ("volcano", "scheduling.volcano.sh", "v1beta1", "Queue"),
    ("volcano", "scheduling.volcano.sh", "v1beta1", "PodGroup"),
    ("volcano", "batch.volcano.sh", "v1alpha1", "Job"),
    ("volcano", "topology.volcano.sh", "v1alpha1", "HyperNode"),
    ("kserve", "serving.kserve.io", "v1beta1", "InferenceService"),
    ("kserve", "serving.kserve.io", "v1alpha1", "ServingRuntime"),
    ("kserve", "serving.kserve.io", "v1alpha1", "ClusterServingRuntime"),
    ("kserve", "serving.kserve.io", "v1alpha1", "LocalModelCache"),
    ("kserve", "serving.kserve.io", "v1alpha1", "LocalModelNodeGroup"),
    ("kserve", "serving.kserve.io", "v1alpha1", "LocalModelNode"),
    ("corral", "corral.dev", "v1", "UsageRecord"),
    ("corral", "corral.dev", "v1alpha1", "SchedulerConfiguration"),
]

AGE = ("Age", ".metadata.creationTimestamp", 0)
# kind -> printer columns after Name: (name, JSON path, priority). The
# server's Table columns (src/model/table.c) must be these, case aside.
COLUMNS = {
    "Queue": [("Weight", ".spec.weight", 0), ("Reclaimable", ".spec.reclaimable", 0),
              ("State", ".status.state", 0), AGE, ("Parent", ".spec.parent", 1)],
    "PodGroup": [("Status", ".status.phase", 0), ("MinMember", ".spec.minMember", 0),
                 ("Runnings", ".status.running", 0), AGE, ("Queue", ".spec.queue", 1)],
    "Job": [("Status", ".status.state.phase", 0), ("MinAvailable", ".spec.minAvailable", 0),
            ("Runnings", ".status.running", 0), AGE, ("Queue", ".spec.queue", 1)],
    "HyperNode": [("Tier", ".spec.tier", 0), ("NodeCount", ".status.nodeCount", 0), AGE],
    "InferenceService": [
        ("URL", ".status.url", 0),
        ("Ready", ".status.conditions[?(@.type=='Ready')].status", 0),
        ("Prev", ".status.components.predictor.traffic[?(@.tag=='prev')].percent", 0),
        ("Latest", ".status.components.predictor.traffic[?(@.latestRevision==true)].percent", 0),
        ("PrevRolledoutRevision",
         ".status.components.predictor.traffic[?(@.tag=='prev')].revisionName", 0),
        ("LatestReadyRevision", ".status.components.predictor.latestReadyRevision", 0),
        AGE,
        ("Min", ".spec.predictor.minReplicas", 1),
        ("Max", ".spec.predictor.maxReplicas", 1),
    ],
    "ServingRuntime": [("Disabled", ".spec.disabled", 0),
                       ("ModelType", ".spec.supportedModelFormats[*].name", 0),
                       ("Containers", ".spec.containers[*].name", 0), AGE],
    "UsageRecord": [("Pod", ".spec.pod", 0), ("Queue", ".spec.queue", 0),
                    ("Phase", ".spec.phase", 0), ("GPUs", ".spec.gpus", 0),
                    ("Wait", ".spec.waitSeconds", 0), ("Run", ".spec.runSeconds", 0), AGE,
                    ("Job", ".spec.job", 1), ("Node", ".spec.node", 1),
                    ("GPU-Seconds", ".spec.gpuSecondsAllocated", 1),
                    ("Used", ".spec.gpuSecondsUsed", 1)],
}
COLUMNS["ClusterServingRuntime"] = COLUMNS["ServingRuntime"]

FORMATS = {"int32", "int64", "float", "double", "byte", "date", "date-time", "duration"}
MAX_DEPTH = 64


class GenError(Exception):
    pass


# --- the temporary API server ----------------------------------------------------------------

def start_server(corral, tmp):
    log = open(os.path.join(tmp, "apiserver.log"), "w+")
    proc = subprocess.Popen([corral, "apiserver", "--data-dir", os.path.join(tmp, "data"),
                             "--listen", "127.0.0.1:0", "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(200):
        log.seek(0)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read())
        if m:
            return proc, "http://127.0.0.1:%s" % m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    log.seek(0)
    raise GenError("corral apiserver did not start:\n" + log.read())


def get(base, path, accept="application/json"):
    req = urllib.request.Request(base + path, headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


# --- structural schema ------------------------------------------------------------------------

REF = "#/components/schemas/"


def ref_name(node):
    """The component a node names ($ref, or allOf of one $ref), else None."""
    if "$ref" in node:
        return node["$ref"][len(REF):]
    all_of = node.get("allOf")
    if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
        return all_of[0]["$ref"][len(REF):]
    if all_of:
        raise GenError("allOf other than one $ref: %s" % json.dumps(node)[:200])
    return None


def structural(node, comps, where, depth=0, root_meta=False, k8s=False):
    """node made structural; k8s: inside a Kubernetes type (descriptions dropped)."""
    if depth > MAX_DEPTH:
        raise GenError("%s: schema nested past %d levels (a cycle?)" % (where, MAX_DEPTH))
    name = ref_name(node)
    if name is not None:
        if name not in comps:
            raise GenError("%s: $ref to missing %s" % (where, name))
        desc = node.get("description")
        target = comps[name]
        if name == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" and root_meta:
            return {"type": "object"}
        if name in ("io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                      "io.k8s.apimachinery.pkg.api.resource.Quantity"):
            out = {"x-kubernetes-int-or-string": True}
            if name.endswith("Quantity"):
                # kube-apiserver's own pattern for a Quantity in a CRD (controller-gen's).
                out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
                out["pattern"] = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|"
                                  r"[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|"
                                  r"(\.[0-9]+))))?$")
        else:
            out = structural(target, comps, where + "<" + name + ">", depth + 1,
                             k8s=k8s or name.startswith("io.k8s."))
        if desc and not k8s:
            out["description"] = desc
        elif k8s or name.startswith("io.k8s."):
            out.pop("description", None)
        return order(out)
    out = {}
    for k, v in node.items():
        if k in ("x-kubernetes-group-version-kind", "example", "$ref", "allOf"):
            continue
        if k == "description" and k8s:
            continue
        if k == "oneOf":
            types = sorted(s.get("type") for s in v)
            if types == ["integer", "string"]:
                out["x-kubernetes-int-or-string"] = True
                continue
            raise GenError("%s: oneOf %s has no structural form" % (where, types))
        if k == "anyOf":
            raise GenError("%s: anyOf has no structural form here" % where)
        if k == "format":
            if v in FORMATS:
                out[k] = v
            continue
        if k == "properties":
            out[k] = {p: structural(s, comps, where + "." + p, depth + 1, k8s=k8s)
                      for p, s in v.items()}
        elif k == "items":
            out[k] = structural(v, comps, where + "[]", depth + 1, k8s=k8s)
        elif k == "additionalProperties":
            if v is True:
                out["x-kubernetes-preserve-unknown-fields"] = True
            elif v is False:
                continue
            else:
                out[k] = structural(v, comps, where + "{}", depth + 1, k8s=k8s)
        else:
            out[k] = v
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    elif out.get("type") == "object" and "properties" not in out and \
            "additionalProperties" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    elif "type" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        out["x-kubernetes-preserve-unknown-fields"] = True
    if "properties" in out and "additionalProperties" in out:
        raise GenError("%s: both properties and additionalProperties" % where)
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {"x-kubernetes-preserve-unknown-fields": True}
    return order(out)


KEY_ORDER = ["description", "type", "format", "x-kubernetes-int-or-string", "anyOf", "pattern",
             "x-kubernetes-preserve-unknown-fields", "enum", "required", "items",
             "additionalProperties", "properties"]


def order(d):
    keys = sorted(d, key=lambda k: (KEY_ORDER.index(k) if k in KEY_ORDER else 99, k))
    return {k: d[k] for k in keys}


def check_structural(s, where, typed_required=True):
    """Every node typed (or int-or-string, or preserving unknown fields); no
    $ref, allOf, oneOf; properties and additionalProperties never both."""
    for bad in ("$ref", "allOf", "oneOf", "not"):
        if bad in s:
            raise GenError("%s: %s left in the schema" % (where, bad))
    if "anyOf" in s and not s.get("x-kubernetes-int-or-string"):
        raise GenError("%s: anyOf without x-kubernetes-int-or-string" % where)
    open_ = s.get("x-kubernetes-preserve-unknown-fields") or s.get("x-kubernetes-int-or-string")
    if typed_required and not s.get("type") and not open_:
        raise GenError("%s: no type" % where)
    for p, sub in s.get("properties", {}).items():
        check_structural(sub, where + "." + p)
    if isinstance(s.get("additionalProperties"), dict):
        check_structural(s["additionalProperties"], where + "{}")
    if "items" in s:
        check_structural(s["items"], where + "[]")


def column_type(schema, path):
    """The printer column type of the schema node at a JSON path."""
    if path == ".metadata.creationTimestamp":
        return "date"
    node = schema
    for seg in re.sub(r"\[[^\]]*\]", "[]", path).lstrip(".").split("."):
        m = re.match(r"^([A-Za-z0-9_]+)(\[.*\])?$", seg)
        if not m:
            raise GenError("column path %s: cannot read segment %s" % (path, seg))
        props = node.get("properties", {})
        if not props and node.get("x-kubernetes-preserve-unknown-fields"):
            return "string"  # below an open node: kept as written, shown as text
        if m.group(1) not in props:
            raise GenError("column path %s: no field %s in the schema" % (path, m.group(1)))
        node = props[m.group(1)]
        if m.group(2):
            node = node.get("items", {"x-kubernetes-preserve-unknown-fields": True})
    t = node.get("type")
    if t in ("integer", "number", "boolean", "string"):
        return t
    return "string"


# --- the CRDs ---------------------------------------------------------------------------------

def build(base):
    disc, openapi, crds = {}, {}, []
    for cset, group, version, kind in KINDS:
        gv = group + "/" + version
        if gv not in disc:
            disc[gv] = get(base, "/apis/" + gv)["resources"]
            openapi[gv] = get(base, "/openapi/v3/apis/" + gv)["components"]["schemas"]
        res = [r for r in disc[gv] if r["kind"] == kind and "/" not in r["name"]]
        if len(res) != 1:
            raise GenError("%s %s: %d resources in discovery" % (gv, kind, len(res)))
        r = res[0]
        plural = r["name"]
        subs = {x["name"].split("/", 1)[1] for x in disc[gv] if x["name"].startswith(plural + "/")}
        comps = openapi[gv]
        top = [n for n, s in comps.items()
               if {"group": group, "version": version, "kind": kind}
               in s.get("x-kubernetes-group-version-kind", [])]
        if len(top) != 1:
            raise GenError("%s %s: %d schemas in /openapi/v3" % (gv, kind, len(top)))
        schema = dict(comps[top[0]])
        props = dict(schema["properties"])
        schema["properties"] = props
        out = {}
        for p, s in props.items():
            out[p] = structural(s, comps, kind + "." + p, root_meta=(p == "metadata"))
        schema = order({k: v for k, v in schema.items() if k != "x-kubernetes-group-version-kind"})
        schema["properties"] = out
        schema["type"] = "object"
        schema = order(schema)
        check_structural(schema, kind)
        if out.get("metadata") != {"type": "object"}:
            raise GenError("%s: the root metadata must be only type: object" % kind)

        scope = "Namespaced" if r["namespaced"] else "Cluster"
        path = ("/apis/%s/namespaces/default/%s" if r["namespaced"] else "/apis/%s/%s") % (gv, plural)
        table = get(base, path, "application/json;as=Table;v=v1;g=meta.k8s.io")
        served = [(c["name"].lower(), c["priority"]) for c in table["columnDefinitions"]]
        mine = COLUMNS.get(kind, [AGE])
        want = [("name", 0)] + [(n.lower(), p) for n, _, p in mine]
        if served != want:
            raise GenError("%s: the server's Table columns %s are not the mapped ones %s: "
                           "update COLUMNS in tools/gen_crds.py" % (kind, served, want))
        columns = []
        for n, jp, prio in mine:
            col = {"name": n, "type": column_type(schema, jp), "jsonPath": jp}
            if prio:
                col["priority"] = prio
            columns.append(col)

        names = {"kind": kind, "listKind": kind + "List", "plural": plural,
                 "singular": kind.lower()}
        if r.get("shortNames"):
            names["shortNames"] = r["shortNames"]
        if r.get("categories"):
            names["categories"] = r["categories"]
        ver = {"name": version, "served": True, "storage": True,
               "schema": {"openAPIV3Schema": schema}}
        if "status" in subs:
            ver["subresources"] = {"status": {}}
        ver["additionalPrinterColumns"] = columns
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {
                "name": plural + "." + group,
                "labels": {"app.kubernetes.io/part-of": "corral"},
                "annotations": {"corral.dev/generated-by": "tools/gen_crds.py"},
            },
            "spec": {"group": group, "names": names, "scope": scope, "versions": [ver]},
        }
        crds.append((cset, group, plural, crd))
    return crds


class Dumper(yaml.SafeDumper):
    pass


def _str(dumper, s):
    style = "|" if "\n" in s else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


Dumper.add_representer(str, _str)

HEADER = ("# Generated by tools/gen_crds.py from what `corral apiserver` serves\n"
          "# (/apis discovery, /openapi/v3, the Table columns). Do not edit: run\n"
          "#   python3 tools/gen_crds.py\n")


def write(crds, out):
    by_set = {}
    for cset, group, plural, crd in crds:
        by_set.setdefault(cset, []).append((group, plural, crd))
    for cset, items in by_set.items():
        d = os.path.join(out, cset)
        os.makedirs(d, exist_ok=True)
        files = []
        for group, plural, crd in items:
            fn = "%s_%s.yaml" % (group, plural)
            files.append(fn)
            text = yaml.dump(crd, Dumper=Dumper, sort_keys=False, width=100,
                             default_flow_style=False)
            size = len(json.dumps(crd, separators=(",", ":")))
            if size > 200 * 1024:
                raise GenError("%s is %d bytes as JSON: too close to kubectl apply's "
                               "256 KiB annotation limit" % (fn, size))
            with open(os.path.join(d, fn), "w") as f:
                f.write(HEADER + text)
        with open(os.path.join(d, "kustomization.yaml"), "w") as f:
            f.write(HEADER + "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                    "resources:\n" + "".join("- %s\n" % fn for fn in sorted(files)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--corral", default=os.path.join(here, "build", "corral"))
    ap.add_argument("--out", default=os.path.join(here, "deploy", "kubernetes", "crds"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gen-crds-")
    proc = None
    try:
        proc, base = start_server(args.corral, tmp)
        crds = build(base)
        write(crds, args.out)
        print("%d CRDs written under %s" % (len(crds), args.out))
    except GenError as e:
        print("gen_crds.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        if proc:
            proc.terminate()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
