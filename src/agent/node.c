/*
 * The agent's Node and its heartbeat, as kubelet does them. Registration
 * creates the Node with its labels (kubernetes.io/hostname, os, arch and the
 * GPU Feature Discovery labels), the corral.dev/gpu-topology annotation,
 * capacity = allocatable (nvidia.com/gpu, cpu, memory, pods), nodeInfo,
 * addresses, the log server's port and the four conditions; when the Node
 * exists it keeps the user's labels, annotations and taints and refreshes
 * ours. The heartbeat renews the Lease kube-node-lease/<node> every
 * heartbeat and refreshes Ready (with lastHeartbeatTime) every status_every
 * heartbeats: the GET before the PATCH notices a Node the controller marked
 * NotReady/Unknown (its Ready transition is then now) or one that was deleted
 * (registered again).
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "corral/json.h"
#include "corral/timefmt.h"

#define NODE_PATH  "/api/v1/nodes"
#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"

static const char *go_arch(void)
{
    struct utsname u;
    if (uname(&u) != 0)
        return "amd64";
    if (!strcmp(u.machine, "x86_64"))
        return "amd64";
    if (!strcmp(u.machine, "aarch64"))
        return "arm64";
    if (!strncmp(u.machine, "ppc64le", 7))
        return "ppc64le";
    return "amd64";
}

void corral__node_init(corral__node_t *n, const char *name, const corral_gpu_inventory_t *inv,
                       int lease_s)
{
    memset(n, 0, sizeof(*n));
    corral_arena_init(&n->arena);
    n->name = corral_arena_strdup(&n->arena, name);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    n->cpu_milli = (cpus > 0 ? cpus : 1) * 1000;
    n->memory_bytes = (pages > 0 && psz > 0) ? (int64_t)pages * psz : 0;
    n->lease_s = lease_s;
    if (inv) {
        if (inv->cpu_milli > 0)
            n->cpu_milli = inv->cpu_milli;
        if (inv->memory_bytes > 0)
            n->memory_bytes = inv->memory_bytes;
        n->ngpu = inv->n;
        n->labels = corral_arena_alloc(&n->arena, 64 * sizeof(corral_kv_t));
        n->nlabels = corral_gpu_labels(inv, &n->arena, n->labels, 64);
        if (inv->topology && inv->topology[0])
            n->topology = corral_arena_strdup(&n->arena, inv->topology);
    }
}

void corral__node_fini(corral__node_t *n)
{
    corral_arena_fini(&n->arena);
    memset(n, 0, sizeof(*n));
}

static void conditions(corral_arena_t *a, corral_val_t *st, const corral__node_t *n, int64_t now)
{
    static const char *const types[][3] = {
        {"MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
        {"DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"Ready", "KubeletReady", "corral agent is posting ready status"},
    };
    char hb[40], tr[40];
    corral__fmt_time(now, false, hb, sizeof(hb));
    corral__fmt_time(n->ready_since_us ? n->ready_since_us : now, false, tr, sizeof(tr));
    corral_val_t *seq = corral__jseq(a, st, "conditions");
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(types); i++) {
        corral_val_t *c = corral__jmap(a, NULL, NULL);
        corral__jstr(a, c, "type", types[i][0]);
        corral__jstr(a, c, "status", i == 3 ? "True" : "False");
        corral__jstr(a, c, "lastHeartbeatTime", hb);
        corral__jstr(a, c, "lastTransitionTime", tr);
        corral__jstr(a, c, "reason", types[i][1]);
        corral__jstr(a, c, "message", types[i][2]);
        corral_val_push(a, seq, c);
    }
    if (n->ngpu > 0) /* telemetry.c: XIDs and unreadable GPUs */
        corral_val_push(a, seq, corral__node_gpu_condition(a, n, now));
}

corral_val_t *corral__node_gpu_condition(corral_arena_t *a, const corral__node_t *n, int64_t now)
{
    corral_val_t *c = corral__jmap(a, NULL, NULL);
    char hb[40], gt[40];
    corral__fmt_time(now, false, hb, sizeof(hb));
    corral__fmt_time(n->gpu_since_us ? n->gpu_since_us : now, false, gt, sizeof(gt));
    corral__jstr(a, c, "type", "GPUHealthy");
    corral__jstr(a, c, "status", n->gpu_bad ? "False" : "True");
    corral__jstr(a, c, "lastHeartbeatTime", hb);
    corral__jstr(a, c, "lastTransitionTime", gt);
    corral__jstr(a, c, "reason", n->gpu_reason[0] ? n->gpu_reason : "GPUsHealthy");
    corral__jstr(a, c, "message",
                 n->gpu_msg[0] ? n->gpu_msg : "every GPU is readable and has no XID");
    return c;
}

bool corral__node_set_gpu_health(corral__node_t *n, bool healthy, const char *reason,
                                 const char *msg, int64_t now_us)
{
    bool changed = n->gpu_bad == healthy || strcmp(n->gpu_reason, reason) != 0;
    snprintf(n->gpu_reason, sizeof(n->gpu_reason), "%s", reason);
    snprintf(n->gpu_msg, sizeof(n->gpu_msg), "%s", msg);
    if (n->gpu_bad == healthy || !n->gpu_since_us)
        n->gpu_since_us = now_us;
    n->gpu_bad = !healthy;
    return changed;
}

corral_val_t *corral__node_gpu_taints(corral_arena_t *a, const corral__node_t *n,
                                      const corral_val_t *node)
{
    const corral_val_t *cur = corral_val_dig(node, "spec.taints");
    corral_val_t *out = corral_val_new(a, CORRAL_VAL_SEQ);
    bool have = false;
    for (size_t i = 0; cur && cur->kind == CORRAL_VAL_SEQ && i < cur->n; i++) {
        const char *k = corral_val_get_str(cur->items[i], "key");
        if (k && !strcmp(k, CORRAL__GPU_TAINT))
            have = true;
        else
            corral_val_push(a, out, corral_val_copy(a, cur->items[i]));
    }
    if (have == n->gpu_bad)
        return NULL;
    if (n->gpu_bad) {
        corral_val_t *t = corral__jmap(a, NULL, NULL);
        corral__jstr(a, t, "key", CORRAL__GPU_TAINT);
        corral__jstr(a, t, "effect", "NoSchedule");
        char ts[40];
        corral__fmt_time(n->gpu_since_us, false, ts, sizeof(ts));
        corral__jstr(a, t, "timeAdded", ts);
        corral_val_push(a, out, t);
    }
    return out;
}

static void resources(corral_arena_t *a, corral_val_t *m, const corral__node_t *n)
{
    char buf[64];
    corral_qty_format_milli(n->cpu_milli, buf, sizeof(buf));
    corral__jstr(a, m, "cpu", buf);
    corral_qty_format_bytes(n->memory_bytes, buf, sizeof(buf));
    corral__jstr(a, m, "memory", buf);
    corral__jstr(a, m, "pods", "110");
    corral__jstr(a, m, "ephemeral-storage", "100Gi");
    if (n->ngpu > 0)
        corral__jstr(a, m, "nvidia.com/gpu", corral_arena_printf(a, "%d", n->ngpu));
}

static corral_val_t *status_body(corral_arena_t *a, const corral__node_t *n, int64_t now)
{
    corral_val_t *st = corral__jmap(a, NULL, NULL);
    resources(a, corral__jmap(a, st, "capacity"), n);
    resources(a, corral__jmap(a, st, "allocatable"), n);
    conditions(a, st, n, now);
    corral_val_t *addrs = corral__jseq(a, st, "addresses");
    const char *at[][2] = {{"InternalIP", "127.0.0.1"}, {"Hostname", n->name}};
    for (size_t i = 0; i < 2; i++) {
        corral_val_t *ad = corral__jmap(a, NULL, NULL);
        corral__jstr(a, ad, "type", at[i][0]);
        corral__jstr(a, ad, "address", at[i][1]);
        corral_val_push(a, addrs, ad);
    }
    corral_val_t *ep = corral__jmap(a, corral__jmap(a, st, "daemonEndpoints"), "kubeletEndpoint");
    corral__jint(a, ep, "Port", n->kubelet_port);
    corral_val_t *ni = corral__jmap(a, st, "nodeInfo");
    struct utsname u;
    bool un = uname(&u) == 0;
    corral__jstr(a, ni, "machineID", "");
    corral__jstr(a, ni, "systemUUID", "");
    corral__jstr(a, ni, "bootID", "");
    corral__jstr(a, ni, "kernelVersion", un ? u.release : "");
    corral__jstr(a, ni, "osImage", un ? u.sysname : "Linux");
    corral__jstr(a, ni, "containerRuntimeVersion", "corral-process://0.1.0");
    corral__jstr(a, ni, "kubeletVersion", CORRAL__AGENT_KUBELET_VERSION);
    corral__jstr(a, ni, "kubeProxyVersion", "");
    corral__jstr(a, ni, "operatingSystem", "linux");
    corral__jstr(a, ni, "architecture", go_arch());
    return st;
}

corral_val_t *corral__node_object(corral_arena_t *a, const corral__node_t *n,
                                  const corral_val_t *existing, int64_t now_us)
{
    corral_val_t *o = existing ? corral_val_copy(a, existing) : corral__jmap(a, NULL, NULL);
    corral__jstr(a, o, "apiVersion", "v1");
    corral__jstr(a, o, "kind", "Node");
    corral_val_t *meta = corral_val_ensure_map(a, o, "metadata");
    corral__jstr(a, meta, "name", n->name);
    corral_val_t *labels = corral_val_ensure_map(a, meta, "labels");
    corral__jstr(a, labels, "kubernetes.io/hostname", n->name);
    corral__jstr(a, labels, "kubernetes.io/os", "linux");
    corral__jstr(a, labels, "kubernetes.io/arch", go_arch());
    corral__jstr(a, labels, "beta.kubernetes.io/os", "linux");
    corral__jstr(a, labels, "beta.kubernetes.io/arch", go_arch());
    for (size_t i = 0; i < n->nlabels; i++)
        corral__jstr(a, labels, n->labels[i].key, n->labels[i].value);
    corral_val_t *ann = corral_val_ensure_map(a, meta, "annotations");
    if (n->topology)
        corral__jstr(a, ann, CORRAL_GPU_TOPO_ANNOTATION, n->topology);
    corral__jstr(a, ann, "node.alpha.kubernetes.io/ttl", "0");
    corral_val_t *spec = corral_val_ensure_map(a, o, "spec");
    corral_val_t *taints = corral__node_gpu_taints(a, n, o);
    if (taints)
        corral_val_set(a, spec, "taints", taints);
    corral_val_set(a, o, "status", status_body(a, n, now_us));
    return o;
}

corral_val_t *corral__node_status_patch(corral_arena_t *a, const corral__node_t *n, int64_t now_us)
{
    corral_val_t *o = corral__jmap(a, NULL, NULL);
    corral_val_set(a, o, "status", status_body(a, n, now_us));
    return o;
}

int corral__agent_send(corral_client_t *c, const char *method, const char *path, const char *ctype,
                       const corral_val_t *body, corral_client_resp_t *r)
{
    corral_buf_t b;
    corral_buf_init(&b);
    if (body)
        corral_val_to_json(body, &b, false);
    corral_client_resp_fini(r);
    corral_client_resp_init(r);
    int rc = corral_client_request(c, method, path, ctype, body ? corral_buf_str(&b) : NULL,
                                   body ? b.len : 0, r);
    corral_buf_fini(&b);
    return rc;
}

static void resp_err(const corral_client_resp_t *r, const char *what, char *err, size_t errlen)
{
    char reason[64], msg[400];
    if (!r->code) {
        snprintf(err, errlen, "%s: %s", what, r->error);
        return;
    }
    corral_client_error(r, reason, sizeof(reason), msg, sizeof(msg));
    snprintf(err, errlen, "%s: HTTP %ld: %s", what, r->code, msg);
}

static void keep_uid(corral__node_t *n, const corral_client_resp_t *r)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    corral_json_err_t je;
    if (r->body.len && corral_json_parse(&a, r->body.p, r->body.len, &v, &je) == 0) {
        const char *uid = corral_val_get_str(corral_val_get(v, "metadata"), "uid");
        if (uid)
            n->uid = corral_arena_strdup(&n->arena, uid);
    }
    corral_arena_fini(&a);
}

int corral__node_register(corral_client_t *c, corral__node_t *n, char *err, size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int64_t now = corral__now_us();
    n->ready_since_us = now;
    int rc = CORRAL_EIO;
    char path[512];
    snprintf(path, sizeof(path), NODE_PATH "/%s", n->name);
    if (corral__agent_send(c, "POST", NODE_PATH, NULL, corral__node_object(&a, n, NULL, now), &r) ==
            0 &&
        r.code == 201) {
        keep_uid(n, &r);
        rc = 0;
    } else if (r.code == 409 && corral__agent_send(c, "GET", path, NULL, NULL, &r) == 0 &&
               r.code == 200) {
        corral_val_t *cur = NULL;
        corral_json_err_t je;
        if (corral_json_parse(&a, r.body.p, r.body.len, &cur, &je) == 0) {
            corral_val_t *o = corral__node_object(&a, n, cur, now);
            corral_val_t *meta = corral_val_get(o, "metadata");
            corral_val_del(meta, "resourceVersion"); /* unconditional, as a registration */
            if (corral__agent_send(c, "PUT", path, NULL, o, &r) == 0 && r.code == 200) {
                keep_uid(n, &r);
                snprintf(path, sizeof(path), NODE_PATH "/%s/status", n->name);
                if (corral__agent_send(c, "PATCH", path, "application/merge-patch+json",
                                       corral__node_status_patch(&a, n, now), &r) == 0 &&
                    r.code == 200)
                    rc = 0;
            }
        }
    }
    if (rc)
        resp_err(&r, "registering node", err, errlen);
    corral_client_resp_fini(&r);
    corral_arena_fini(&a);
    return rc;
}

int corral__node_lease(corral_client_t *c, corral__node_t *n, int64_t now_us, char *err,
                       size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *o = corral__jmap(&a, NULL, NULL);
    corral__jstr(&a, o, "apiVersion", "coordination.k8s.io/v1");
    corral__jstr(&a, o, "kind", "Lease");
    corral_val_t *meta = corral__jmap(&a, o, "metadata");
    corral__jstr(&a, meta, "name", n->name);
    corral__jstr(&a, meta, "namespace", "kube-node-lease");
    if (n->uid) {
        corral_val_t *refs = corral__jseq(&a, meta, "ownerReferences");
        corral_val_t *ref = corral__jmap(&a, NULL, NULL);
        corral__jstr(&a, ref, "apiVersion", "v1");
        corral__jstr(&a, ref, "kind", "Node");
        corral__jstr(&a, ref, "name", n->name);
        corral__jstr(&a, ref, "uid", n->uid);
        corral_val_push(&a, refs, ref);
    }
    corral_val_t *spec = corral__jmap(&a, o, "spec");
    char ts[40];
    corral__fmt_time(now_us, true, ts, sizeof(ts));
    corral__jstr(&a, spec, "holderIdentity", n->name);
    corral__jint(&a, spec, "leaseDurationSeconds", n->lease_s);
    corral__jstr(&a, spec, "renewTime", ts);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    char path[512];
    snprintf(path, sizeof(path), LEASE_PATH "/%s", n->name);
    bool ok =
        n->lease_exists && corral__agent_send(c, "PUT", path, NULL, o, &r) == 0 && r.code == 200;
    if (!ok && (!n->lease_exists || r.code == 404))
        ok = corral__agent_send(c, "POST", LEASE_PATH, NULL, o, &r) == 0 && r.code == 201;
    if (!ok && r.code == 409) /* made meanwhile (or by an earlier run) */
        ok = corral__agent_send(c, "PUT", path, NULL, o, &r) == 0 && r.code == 200;
    int rc = ok ? 0 : CORRAL_EIO;
    n->lease_exists = rc == 0;
    if (rc)
        resp_err(&r, "renewing lease", err, errlen);
    corral_client_resp_fini(&r);
    corral_arena_fini(&a);
    return rc;
}

/* Is the Node's Ready condition True (as we last set it)? */
static bool ready_true(const corral_val_t *node)
{
    const corral_val_t *cs = corral_val_dig(node, "status.conditions");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        const char *t = corral_val_get_str(cs->items[i], "type");
        if (t && !strcmp(t, "Ready")) {
            const char *s = corral_val_get_str(cs->items[i], "status");
            return s && !strcmp(s, "True");
        }
    }
    return false;
}

int corral__node_status(corral_client_t *c, corral__node_t *n, int64_t now_us, char *err,
                        size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    char path[512];
    snprintf(path, sizeof(path), NODE_PATH "/%s", n->name);
    int rc = CORRAL_EIO;
    if (corral__agent_send(c, "GET", path, NULL, NULL, &r) == 0 && r.code == 404) {
        corral__log("node %s is gone from the API: registering it again", n->name);
        rc = corral__node_register(c, n, err, errlen);
        goto out;
    }
    if (r.code == 200) {
        corral_val_t *cur = NULL;
        corral_json_err_t je;
        if (corral_json_parse(&a, r.body.p, r.body.len, &cur, &je) == 0 && !ready_true(cur)) {
            corral__log("node %s was not Ready in the API: posting Ready again", n->name);
            n->ready_since_us = now_us;
        }
        corral_val_t *taints = cur ? corral__node_gpu_taints(&a, n, cur) : NULL;
        if (taints) { /* the resourceVersion makes a concurrent edit of the taints conflict */
            corral_val_t *patch = corral__jmap(&a, NULL, NULL);
            const char *rv = corral_val_get_str(corral_val_get(cur, "metadata"), "resourceVersion");
            if (rv)
                corral__jstr(&a, corral__jmap(&a, patch, "metadata"), "resourceVersion", rv);
            corral_val_set(&a, corral__jmap(&a, patch, "spec"), "taints", taints);
            if (corral__agent_send(c, "PATCH", path, "application/merge-patch+json", patch, &r) !=
                    0 ||
                r.code != 200)
                corral__log("node %s: cannot %s the %s taint: HTTP %ld", n->name,
                            n->gpu_bad ? "add" : "remove", CORRAL__GPU_TAINT, r.code);
        }
    }
    snprintf(path, sizeof(path), NODE_PATH "/%s/status", n->name);
    if (corral__agent_send(c, "PATCH", path, "application/merge-patch+json",
                           corral__node_status_patch(&a, n, now_us), &r) == 0 &&
        r.code == 200)
        rc = 0;
    else
        resp_err(&r, "updating node status", err, errlen);
out:
    corral_client_resp_fini(&r);
    corral_arena_fini(&a);
    return rc;
}

void corral__node_heartbeat(corral_client_t *c, corral__node_t *n, int64_t now_us, int hb_s,
                            int status_every)
{
    char err[512];
    if (now_us >= n->next_lease_us) {
        n->next_lease_us = now_us + (int64_t)hb_s * 1000000;
        if (corral__node_lease(c, n, now_us, err, sizeof(err)) != 0)
            corral__log("%s", err);
    }
    if (now_us >= n->next_status_us) {
        n->next_status_us = now_us + (int64_t)hb_s * status_every * 1000000;
        if (corral__node_status(c, n, now_us, err, sizeof(err)) != 0)
            corral__log("%s", err);
    }
}
