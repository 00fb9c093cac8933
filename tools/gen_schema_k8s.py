#!/usr/bin/env python3
"""Generate src/model/schema_k8s.c, the field table of the k8s.io/api and
apimachinery messages Corral serves (see include/corral/schema.h).

Facts only are taken from upstream: message and field names, protobuf field
numbers and types (from the generated.proto files), and from the Go types
next to them which fields are embedded (JSON inline), which scalars are
non-pointer with omitempty (CORRAL_SCHEMA_OMITZERO) and the JSON names.

Rerun (Python 3 standard library only) after fetching kubernetes/api and
kubernetes/apimachinery, as git directories or checkouts:

    python3 tools/gen_schema_k8s.py \\
        --api /work/.mirror/kubernetes+api/repo \\
        --apimachinery /work/.mirror/kubernetes+apimachinery/repo \\
        --apiextensions /work/.mirror/kubernetes+apiextensions-apiserver/repo \\
        > src/model/schema_k8s.c
"""
import argparse
import os
import re
import subprocess
import sys

APIEXT = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"

# Top-level kinds: (apiVersion, kind, package, message).
TOPS = [
    ("v1", "Namespace", "k8s.io.api.core.v1", "Namespace"),
    ("v1", "Node", "k8s.io.api.core.v1", "Node"),
    ("v1", "Pod", "k8s.io.api.core.v1", "Pod"),
    ("v1", "Event", "k8s.io.api.core.v1", "Event"),
    ("v1", "ConfigMap", "k8s.io.api.core.v1", "ConfigMap"),
    ("v1", "Secret", "k8s.io.api.core.v1", "Secret"),
    ("v1", "ServiceAccount", "k8s.io.api.core.v1", "ServiceAccount"),
    ("v1", "Service", "k8s.io.api.core.v1", "Service"),
    ("v1", "Endpoints", "k8s.io.api.core.v1", "Endpoints"),
    ("v1", "ResourceQuota", "k8s.io.api.core.v1", "ResourceQuota"),
    ("v1", "LimitRange", "k8s.io.api.core.v1", "LimitRange"),
    ("v1", "Binding", "k8s.io.api.core.v1", "Binding"),
    ("v1", "DeleteOptions", "k8s.io.apimachinery.pkg.apis.meta.v1", "DeleteOptions"),
    ("meta.k8s.io/v1", "DeleteOptions", "k8s.io.apimachinery.pkg.apis.meta.v1", "DeleteOptions"),
    ("events.k8s.io/v1", "Event", "k8s.io.api.events.v1", "Event"),
    ("scheduling.k8s.io/v1", "PriorityClass", "k8s.io.api.scheduling.v1", "PriorityClass"),
    ("coordination.k8s.io/v1", "Lease", "k8s.io.api.coordination.v1", "Lease"),
    ("rbac.authorization.k8s.io/v1", "Role", "k8s.io.api.rbac.v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "k8s.io.api.rbac.v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "k8s.io.api.rbac.v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "k8s.io.api.rbac.v1",
     "ClusterRoleBinding"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "k8s.io.api.authorization.v1",
     "SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SubjectAccessReview", "k8s.io.api.authorization.v1",
     "SubjectAccessReview"),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview", "k8s.io.api.authorization.v1",
     "LocalSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "k8s.io.api.authorization.v1",
     "SelfSubjectRulesReview"),
    ("authentication.k8s.io/v1", "SelfSubjectReview", "k8s.io.api.authentication.v1",
     "SelfSubjectReview"),
    ("authentication.k8s.io/v1", "TokenRequest", "k8s.io.api.authentication.v1", "TokenRequest"),
    ("authentication.k8s.io/v1", "TokenReview", "k8s.io.api.authentication.v1", "TokenReview"),
    ("autoscaling/v1", "Scale", "k8s.io.api.autoscaling.v1", "Scale"),
    ("policy/v1", "Eviction", "k8s.io.api.policy.v1", "Eviction"),
    ("apps/v1", "ControllerRevision", "k8s.io.api.apps.v1", "ControllerRevision"),
    ("apps/v1", "Deployment", "k8s.io.api.apps.v1", "Deployment"),
    ("apps/v1", "DaemonSet", "k8s.io.api.apps.v1", "DaemonSet"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", APIEXT, "CustomResourceDefinition"),
]

# Package -> (repository, directory).
PACKAGES = {
    "k8s.io.api.core.v1": ("api", "core/v1"),
    "k8s.io.api.events.v1": ("api", "events/v1"),
    "k8s.io.api.scheduling.v1": ("api", "scheduling/v1"),
    "k8s.io.api.coordination.v1": ("api", "coordination/v1"),
    "k8s.io.api.rbac.v1": ("api", "rbac/v1"),
    "k8s.io.api.authorization.v1": ("api", "authorization/v1"),
    "k8s.io.api.authentication.v1": ("api", "authentication/v1"),
    "k8s.io.api.autoscaling.v1": ("api", "autoscaling/v1"),
    "k8s.io.api.policy.v1": ("api", "policy/v1"),
    "k8s.io.api.apps.v1": ("api", "apps/v1"),
    APIEXT: ("apiextensions", "pkg/apis/apiextensions/v1"),
    "k8s.io.apimachinery.pkg.apis.meta.v1": ("apimachinery", "pkg/apis/meta/v1"),
    "k8s.io.apimachinery.pkg.runtime": ("apimachinery", "pkg/runtime"),
    "k8s.io.apimachinery.pkg.runtime.schema": ("apimachinery", "pkg/runtime/schema"),
    "k8s.io.apimachinery.pkg.api.resource": ("apimachinery", "pkg/api/resource"),
    "k8s.io.apimachinery.pkg.util.intstr": ("apimachinery", "pkg/util/intstr"),
}

# Messages with their own JSON form.
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "CORRAL_SCHEMA_TIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "CORRAL_SCHEMA_MICROTIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "CORRAL_SCHEMA_DURATION",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "CORRAL_SCHEMA_FIELDSV1",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "CORRAL_SCHEMA_QUANTITY",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "CORRAL_SCHEMA_INTORSTRING",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "CORRAL_SCHEMA_RAW",
    # A CRD schema's default, enum and example values: any JSON value, on the
    # wire a message holding it as JSON bytes (field 1).
    APIEXT + ".JSON": "CORRAL_SCHEMA_JSON",
    # A schema or a list of them, a schema or a bool, a schema or a list of
    # strings: in JSON one or the other, with no protobuf form read here.
    APIEXT + ".JSONSchemaPropsOrArray": "CORRAL_SCHEMA_ANY",
    APIEXT + ".JSONSchemaPropsOrBool": "CORRAL_SCHEMA_ANY",
    APIEXT + ".JSONSchemaPropsOrStringArray": "CORRAL_SCHEMA_ANY",
}

SCALARS = {
    "string": "CORRAL_SCHEMA_STRING",
    "bool": "CORRAL_SCHEMA_BOOL",
    "int32": "CORRAL_SCHEMA_INT32",
    "int64": "CORRAL_SCHEMA_INT64",
    "double": "CORRAL_SCHEMA_DOUBLE",
    "bytes": "CORRAL_SCHEMA_BYTES",
}


class Source:
    """Files of one repository: a git directory (read at HEAD) or a checkout."""

    def __init__(self, path):
        self.path = path
        self.git = not os.path.exists(os.path.join(path, "go.mod")) and (
            os.path.exists(os.path.join(path, "HEAD")))

    def commit(self):
        if not self.git:
            return "checkout"
        out = subprocess.run(["git", "--git-dir", self.path, "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def read(self, rel):
        if self.git:
            out = subprocess.run(["git", "--git-dir", self.path, "show", "HEAD:" + rel],
                                 capture_output=True, text=True, check=True)
            return out.stdout
        with open(os.path.join(self.path, rel), encoding="utf-8") as f:
            return f.read()

    def listdir(self, rel):
        if self.git:
            out = subprocess.run(["git", "--git-dir", self.path, "ls-tree", "--name-only",
                                  "HEAD", rel + "/"], capture_output=True, text=True, check=True)
            return [os.path.basename(p) for p in out.stdout.split()]
        return os.listdir(os.path.join(self.path, rel))


def first_sentence(lines):
    """A one-line description from comment lines (markers dropped)."""
    text = " ".join(l.strip() for l in lines if l.strip() and not l.strip().startswith("+"))
    text = re.sub(r"\s+", " ", text).strip()
    m = re.match(r"(.+?\.)(\s|$)", text)
    if m:
        text = m.group(1)
    if len(text) > 200:
        text = text[:197].rstrip() + "..."
    return text or None


FIELD_RE = re.compile(r"^\s*(optional|repeated)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)")
MAP_RE = re.compile(r"^\s*map<\s*string\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)")


def parse_proto(text, pkg):
    """{message: {"doc":..., "fields":[(label, type, name, num, doc)]}}."""
    msgs = {}
    cur = None
    comments = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("//"):
            comments.append(s[2:])
            continue
        m = re.match(r"^message\s+(\w+)\s*\{", s)
        if m:
            cur = {"doc": first_sentence(comments), "fields": []}
            msgs[m.group(1)] = cur
            comments = []
            continue
        if s == "}":
            cur = None
            comments = []
            continue
        if cur is not None:
            fm = FIELD_RE.match(line)
            mm = MAP_RE.match(line)
            if fm:
                cur["fields"].append((fm.group(1), fm.group(2), fm.group(3), int(fm.group(4)),
                                      first_sentence(comments)))
            elif mm:
                cur["fields"].append(("map", mm.group(1), mm.group(2), int(mm.group(3)),
                                      first_sentence(comments)))
            elif s:
                if not s.startswith("option") and not s.startswith("reserved"):
                    sys.exit("unparsed line in %s: %s" % (pkg, s))
        comments = []
    return msgs


GO_FIELD_RE = re.compile(r"^\s*(?:(\w+)\s+)?([*\[\]\w.]+)\s+`([^`]*)`")


def parse_go(text):
    """{struct: {num: {"json":..., "omitempty":..., "pointer":..., "embedded":...}}} and the
    names of types declared as slices (type X []string)."""
    structs = {}
    slices = set()
    cur = None
    for line in text.splitlines():
        m = re.match(r"^type\s+(\w+)\s+struct\s*\{", line)
        if m:
            cur = structs.setdefault(m.group(1), {})
            continue
        m = re.match(r"^type\s+(\w+)\s+\[\]", line)
        if m:
            slices.add(m.group(1))
            continue
        if line.startswith("}"):
            cur = None
            continue
        if cur is None:
            continue
        code = line.split("//")[0] if "`" not in line else line
        fm = GO_FIELD_RE.match(code)
        if not fm:
            continue
        name, gotype, tag = fm.groups()
        pm = re.search(r'protobuf:"[a-z0-9]+,(\d+),', tag)
        if not pm:
            continue
        jm = re.search(r'json:"([^"]*)"', tag)
        jparts = jm.group(1).split(",") if jm else [""]
        cur[int(pm.group(1))] = {
            "json": jparts[0],
            "omitempty": "omitempty" in jparts[1:],
            "pointer": gotype.startswith("*"),
            "embedded": name is None,
        }
    return structs, slices


def openapi_name(pkg, msg):
    parts = pkg.replace("apiextensions_apiserver", "apiextensions-apiserver").split(".")
    return ".".join([parts[1], parts[0]] + parts[2:] + [msg])


def c_ident(pkg, msg):
    parts = pkg.split(".")
    tail = parts[-2:] if parts[-1].startswith("v") and len(parts) > 4 else parts[-1:]
    return "m_" + "_".join(tail + [msg])


def c_str(s):
    if s is None:
        return "NULL"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--api", required=True)
    ap.add_argument("--apimachinery", required=True)
    ap.add_argument("--apiextensions", required=True,
                    help="kubernetes/apiextensions-apiserver (CustomResourceDefinition)")
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args()
    repos = {"api": Source(args.api), "apimachinery": Source(args.apimachinery),
             "apiextensions": Source(args.apiextensions)}

    protos, gos, slices = {}, {}, set()
    for pkg, (repo, d) in PACKAGES.items():
        src = repos[repo]
        protos[pkg] = parse_proto(src.read(d + "/generated.proto"), pkg)
        gos[pkg] = {}
        for f in sorted(src.listdir(d)):
            if (f.endswith(".go") and not f.endswith("_test.go") and not f.startswith("zz_")
                    and not f.startswith("generated")):
                st, sl = parse_go(src.read(d + "/" + f))
                gos[pkg].update(st)
                slices.update(pkg + "." + s for s in sl)

    def resolve(pkg, t):
        """Fully qualified name of a proto type used in pkg."""
        if t in SCALARS:
            return t
        if t.startswith("."):
            return t[1:]
        return pkg + "." + t

    def split(full):
        pkg, _, msg = full.rpartition(".")
        if pkg not in protos or msg not in protos[pkg]:
            sys.exit("unknown message " + full)
        return pkg, msg

    # Closure over the messages reachable from the top-level kinds.
    order, seen = [], set()
    todo = [pkg + "." + msg for (_, _, pkg, msg) in TOPS]
    while todo:
        full = todo.pop(0)
        if full in seen or full in SPECIAL:
            continue
        seen.add(full)
        order.append(full)
        pkg, msg = split(full)
        for (label, t, name, num, _) in protos[pkg][msg]["fields"]:
            r = resolve(pkg, t)
            if r not in SCALARS and r not in SPECIAL:
                if r in slices:
                    continue
                todo.append(r)
    order.sort(key=lambda f: openapi_name(*split(f)))

    out = []
    w = out.append
    w("/*")
    w(" * Field schemas of the k8s.io/api and apimachinery messages the API server")
    w(" * decodes (protobuf request bodies) and documents (OpenAPI): names, field")
    w(" * numbers and types from the upstream generated.proto files, JSON names,")
    w(" * embedding and omitempty from the Go types beside them. Generated by")
    w(" * tools/gen_schema_k8s.py (see its header to rerun); do not edit by hand.")
    w(" * Sources: kubernetes/api %s," % repos["api"].commit())
    w(" * kubernetes/apimachinery %s," % repos["apimachinery"].commit())
    w(" * kubernetes/apiextensions-apiserver %s." % repos["apiextensions"].commit())
    w(" */")
    w("#include \"model/schema_int.h\"")
    w("")
    w("/* clang-format off */")
    w("")
    for full in order:
        pkg, msg = split(full)
        w("static const corral_schema_msg_t %s;" % c_ident(pkg, msg))
    w("")
    for full in order:
        pkg, msg = split(full)
        fields = protos[pkg][msg]["fields"]
        gostruct = gos[pkg].get(msg, {})
        rows = []
        for (label, t, name, num, doc) in fields:
            g = gostruct.get(num, {})
            jname = g.get("json") or name
            r = resolve(pkg, t)
            flags = []
            ref = "NULL"
            if label == "repeated":
                flags.append("CORRAL_SCHEMA_REPEATED")
            if label == "map":
                flags.append("CORRAL_SCHEMA_MAP")
            if r in SCALARS:
                ctype = SCALARS[r]
                if g.get("omitempty") and not g.get("pointer") and label == "optional":
                    flags.append("CORRAL_SCHEMA_OMITZERO")
            elif r in SPECIAL:
                ctype = SPECIAL[r]
            elif r in slices:
                # A named slice (type ExtraValue []string): on the wire a message
                # holding the items as field 1, in JSON the list itself.
                ipkg, imsg = r.rpartition(".")[0], r.rpartition(".")[2]
                inner = protos[ipkg][imsg]["fields"]
                if len(inner) != 1 or inner[0][0] != "repeated" or inner[0][1] not in SCALARS:
                    sys.exit("unsupported slice message " + r)
                ctype = SCALARS[inner[0][1]]
                flags.append("CORRAL_SCHEMA_REPEATED")
            else:
                ctype = "CORRAL_SCHEMA_MSG"
                ref = "&" + c_ident(*split(r))
                if g.get("embedded") and not g.get("json"):
                    flags.append("CORRAL_SCHEMA_INLINE")
                    jname = name
            if g.get("json") == "-":
                jname = name
            fl = "|".join(flags) if flags else "0"
            rows.append("    {%s, %d, %s, %s, %s, %s}," % (
                c_str(jname), num, ctype, fl, ref, "NULL" if args.no_docs else c_str(doc)))
        ident = c_ident(pkg, msg)
        fname = "f" + ident[1:]
        if rows:
            w("static const corral_schema_field_t %s[] = {" % fname)
            out.extend(rows)
            w("};")
            w("static const corral_schema_msg_t %s = {%s, %s, %d, %s};" % (
                ident, c_str(openapi_name(pkg, msg)), fname, len(rows),
                "NULL" if args.no_docs else c_str(protos[pkg][msg]["doc"])))
        else:
            w("static const corral_schema_msg_t %s = {%s, NULL, 0, %s};" % (
                ident, c_str(openapi_name(pkg, msg)),
                "NULL" if args.no_docs else c_str(protos[pkg][msg]["doc"])))
        w("")
    w("static const corral_schema_msg_t *const all_msgs[] = {")
    for full in order:
        w("    &%s," % c_ident(*split(full)))
    w("};")
    w("")
    w("static const corral__schema_top_t all_tops[] = {")
    for (av, kind, pkg, msg) in TOPS:
        w("    {%s, %s, &%s}," % (c_str(av), c_str(kind), c_ident(pkg, msg)))
    w("};")
    w("")
    w("/* clang-format on */")
    w("")
    w("const corral_schema_msg_t *const *corral__schema_k8s_msgs(size_t *n)")
    w("{")
    w("    *n = sizeof all_msgs / sizeof all_msgs[0];")
    w("    return all_msgs;")
    w("}")
    w("")
    w("const corral__schema_top_t *corral__schema_k8s_tops(size_t *n)")
    w("{")
    w("    *n = sizeof all_tops / sizeof all_tops[0];")
    w("    return all_tops;")
    w("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
