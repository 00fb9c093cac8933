/* The node agent's pure parts: $(VAR) expansion, environment resolution,
 * the restart policy and backoff, kubelet's pod phase, status and Node JSON. */
#include <criterion/criterion.h>
#include <string.h>

#include "agent/agent_int.h"
#include "corral/json.h"

static const char *lookup(void *ctx, const char *name)
{
    (void)ctx;
    if (!strcmp(name, "A"))
        return "1";
    if (!strcmp(name, "EMPTY"))
        return "";
    return NULL;
}

static const char *expand(corral_buf_t *b, const char *in)
{
    corral_buf_reset(b);
    corral__expand(in, lookup, NULL, b);
    return corral_buf_str(b);
}

Test(agent, expand)
{
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_str_eq(expand(&b, "x$(A)y"), "x1y");
    cr_assert_str_eq(expand(&b, "$(A)$(A)"), "11");
    cr_assert_str_eq(expand(&b, "$(B)"), "$(B)", "undefined kept as written");
    cr_assert_str_eq(expand(&b, "$$(A)"), "$(A)", "$$ escapes");
    cr_assert_str_eq(expand(&b, "$$$(A)"), "$1");
    cr_assert_str_eq(expand(&b, "a$b $"), "a$b $");
    cr_assert_str_eq(expand(&b, "$(A"), "$(A", "unterminated kept");
    cr_assert_str_eq(expand(&b, "[$(EMPTY)]"), "[]");
    cr_assert_str_eq(expand(&b, "$()"), "$()");
    corral_buf_fini(&b);
}

/* --- environment ------------------------------------------------------------------------------ */

static corral_val_t *parse(corral_arena_t *a, const char *json)
{
    corral_val_t *v = NULL;
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(a, json, strlen(json), &v, &e), 0, "%s", e.msg);
    return v;
}

static const corral_val_t *fetch(void *ctx, corral_arena_t *a, const char *ns, const char *kind,
                                 const char *name, char *err, size_t errlen)
{
    (void)ctx;
    (void)err;
    (void)errlen;
    cr_assert_str_eq(ns, "team");
    if (!strcmp(kind, "configmaps") && !strcmp(name, "cm"))
        return parse(a, "{\"data\":{\"k\":\"v\",\"other\":\"o\"}}");
    if (!strcmp(kind, "secrets") && !strcmp(name, "s"))
        return parse(a, "{\"data\":{\"pw\":\"czNjcjN0\",\"one\":\"YQ==\"}}");
    return NULL;
}

static const char *POD =
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team\",\"uid\":\"u-1\","
    "\"labels\":{\"app\":\"x\"},\"annotations\":{\"a.b/c\":\"d\"}},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"main\",\"command\":[\"echo\"],"
    "\"args\":[\"$(NAME)\",\"$$(NAME)\",\"$(NOPE)\"],"
    "\"resources\":{\"limits\":{\"cpu\":\"1500m\",\"memory\":\"1Gi\"}},"
    "\"envFrom\":[{\"configMapRef\":{\"name\":\"cm\"},\"prefix\":\"CM_\"}],"
    "\"env\":["
    "{\"name\":\"NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}},"
    "{\"name\":\"NS\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.namespace\"}}},"
    "{\"name\":\"APP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.labels['app']\"}}},"
    "{\"name\":\"ANN\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.annotations['a.b/"
    "c']\"}}},"
    "{\"name\":\"NODE\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"spec.nodeName\"}}},"
    "{\"name\":\"IP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.podIP\"}}},"
    "{\"name\":\"CPU\",\"valueFrom\":{\"resourceFieldRef\":{\"resource\":\"limits.cpu\"}}},"
    "{\"name\":\"MEM\",\"valueFrom\":{\"resourceFieldRef\":{\"resource\":\"limits.memory\","
    "\"divisor\":\"1Mi\"}}},"
    "{\"name\":\"K\",\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"cm\",\"key\":\"k\"}}},"
    "{\"name\":\"PW\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"pw\"}}},"
    "{\"name\":\"OPT\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"no\","
    "\"optional\":true}}},"
    "{\"name\":\"GREETING\",\"value\":\"hi $(NAME) $(UNSET)\"},"
    "{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"user-set\"}"
    "]}]}}";

Test(agent, env_build)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *pod = parse(&a, POD);
    const char *uuids[] = {"GPU-zero", "GPU-one", "GPU-two", "GPU-three"};
    corral__envctx_t e = {.pod = pod,
                          .ctr = corral_val_dig(pod, "spec.containers")->items[0],
                          .host_ip = "127.0.0.1",
                          .gpu_ids = "1,3",
                          .uuids = uuids,
                          .ngpu = 4,
                          .node_cpu_milli = 8000,
                          .node_memory = 1 << 30,
                          .fetch = fetch};
    char **envp = NULL, err[256];
    cr_assert_eq(corral__env_build(&a, &e, &envp, err, sizeof(err)), 0, "%s", err);
    struct {
        const char *k, *v;
    } want[] = {{"NAME", "p"},
                {"NS", "team"},
                {"APP", "x"},
                {"ANN", "d"},
                {"NODE", "n1"},
                {"IP", "127.0.0.1"},
                {"CPU", "2"},
                {"MEM", "1024"},
                {"K", "v"},
                {"PW", "s3cr3t"},
                {"GREETING", "hi p $(UNSET)"},
                {"CM_k", "v"},
                {"CM_other", "o"},
                {"HOSTNAME", "p"},
                {"CUDA_VISIBLE_DEVICES", "1,3"},
                {"NVIDIA_VISIBLE_DEVICES", "GPU-one,GPU-three"},
                {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(want); i++) {
        const char *v = corral__env_get(envp, want[i].k);
        cr_assert_not_null(v, "%s unset", want[i].k);
        cr_assert_str_eq(v, want[i].v, "%s", want[i].k);
    }
    cr_assert_null(corral__env_get(envp, "OPT"), "optional and absent: not set");
    cr_assert_not_null(corral__env_get(envp, "PATH"));
    char **argv = NULL;
    cr_assert_eq(corral__argv_build(&a, e.ctr, envp, &argv), 0);
    cr_assert_str_eq(argv[0], "echo");
    cr_assert_str_eq(argv[1], "p");
    cr_assert_str_eq(argv[2], "$(NAME)");
    cr_assert_str_eq(argv[3], "$(NOPE)");
    cr_assert_null(argv[4]);
    corral_arena_fini(&a);
}

Test(agent, env_no_gpus_and_errors)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *pod =
        parse(&a, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team\"},\"spec\":{\"containers\":"
                  "[{\"name\":\"c\",\"image\":\"nginx\",\"env\":[{\"name\":\"X\",\"valueFrom\":"
                  "{\"configMapKeyRef\":{\"name\":\"cm\",\"key\":\"missing\"}}}]},"
                  "{\"name\":\"d\",\"env\":[{\"name\":\"Y\",\"valueFrom\":{\"secretKeyRef\":"
                  "{\"name\":\"gone\",\"key\":\"k\"}}}]},{\"name\":\"e\"}]}}");
    const corral_val_t *cs = corral_val_dig(pod, "spec.containers");
    corral__envctx_t e = {.pod = pod, .ctr = cs->items[2], .host_ip = "127.0.0.1", .fetch = fetch};
    char **envp = NULL, err[256];
    cr_assert_eq(corral__env_build(&a, &e, &envp, err, sizeof(err)), 0);
    cr_assert_str_eq(corral__env_get(envp, "CUDA_VISIBLE_DEVICES"), "");
    cr_assert_str_eq(corral__env_get(envp, "NVIDIA_VISIBLE_DEVICES"), "void");
    char **argv = NULL;
    cr_assert_eq(corral__argv_build(&a, cs->items[2], envp, &argv), CORRAL_EINVAL, "no command");
    e.ctr = cs->items[0];
    cr_assert_eq(corral__env_build(&a, &e, &envp, err, sizeof(err)), CORRAL_ENOENT);
    cr_assert_str_eq(err, "couldn't find key missing in ConfigMap team/cm");
    e.ctr = cs->items[1];
    cr_assert_eq(corral__env_build(&a, &e, &envp, err, sizeof(err)), CORRAL_ENOENT);
    cr_assert_str_eq(err, "secret \"gone\" not found");
    corral_arena_fini(&a);
}

/* --- restart policy and phase ------------------------------------------------------------------
 */

Test(agent, restart_policy)
{
    cr_assert(corral__should_restart("Always", 0));
    cr_assert(corral__should_restart("Always", 1));
    cr_assert(!corral__should_restart("OnFailure", 0));
    cr_assert(corral__should_restart("OnFailure", 137));
    cr_assert(!corral__should_restart("Never", 1));
    cr_assert_eq(corral__backoff_next(0, 10000, 300000), 10000);
    cr_assert_eq(corral__backoff_next(10000, 10000, 300000), 20000);
    cr_assert_eq(corral__backoff_next(160000, 10000, 300000), 300000);
    cr_assert_eq(corral__backoff_next(300000, 10000, 300000), 300000);
}

static corral__pod_t *mkpod(const char *policy, size_t ninit, size_t n)
{
    corral__pod_t *p = corral_calloc(1, sizeof(*p));
    p->uid = corral_strdup("u");
    p->ns = corral_strdup("default");
    p->name = corral_strdup("p");
    p->restart_policy = corral_strdup(policy);
    p->ninit = ninit;
    p->nctrs = ninit + n;
    p->ctrs = corral_calloc(p->nctrs, sizeof(corral__ctr_t));
    for (size_t i = 0; i < p->nctrs; i++) {
        p->ctrs[i].name = corral_strdup(i < ninit ? "init" : "main");
        p->ctrs[i].image = corral_strdup("img");
        p->ctrs[i].init = i < ninit;
    }
    return p;
}

static void ended(corral__ctr_t *c, int code)
{
    c->st = CORRAL__C_TERMINATED;
    c->term.set = true;
    c->term.exit_code = code;
    snprintf(c->term.reason, sizeof(c->term.reason), "%s", code ? "Error" : "Completed");
}

Test(agent, phase)
{
    corral__pod_t *p = mkpod("Never", 1, 2);
    cr_assert_str_eq(corral__pod_phase(p), "Pending");
    ended(&p->ctrs[0], 0);
    cr_assert_str_eq(corral__pod_phase(p), "Pending", "containers not started");
    p->ctrs[1].st = CORRAL__C_RUNNING;
    cr_assert_str_eq(corral__pod_phase(p), "Pending", "one still waiting");
    p->ctrs[2].st = CORRAL__C_RUNNING;
    cr_assert_str_eq(corral__pod_phase(p), "Running");
    ended(&p->ctrs[1], 0);
    cr_assert_str_eq(corral__pod_phase(p), "Running");
    ended(&p->ctrs[2], 0);
    cr_assert_str_eq(corral__pod_phase(p), "Succeeded");
    ended(&p->ctrs[2], 2);
    cr_assert_str_eq(corral__pod_phase(p), "Failed");
    ended(&p->ctrs[0], 1);
    cr_assert_str_eq(corral__pod_phase(p), "Failed", "init failed under Never");
    corral__pod_free(p);

    p = mkpod("OnFailure", 0, 1);
    p->ctrs[0].st = CORRAL__C_WAITING; /* restarting after a failure */
    p->ctrs[0].last.set = true;
    p->ctrs[0].last.exit_code = 1;
    cr_assert_str_eq(corral__pod_phase(p), "Running");
    ended(&p->ctrs[0], 0);
    cr_assert_str_eq(corral__pod_phase(p), "Succeeded");
    corral__pod_free(p);

    p = mkpod("Always", 0, 1);
    ended(&p->ctrs[0], 0);
    cr_assert_str_eq(corral__pod_phase(p), "Running", "Always never finishes");
    snprintf(p->freason, sizeof(p->freason), "NoCommand");
    cr_assert_str_eq(corral__pod_phase(p), "Failed");
    corral__pod_free(p);
}

Test(agent, status_json)
{
    corral__pod_t *p = mkpod("Never", 0, 2);
    p->start_us = INT64_C(1700000000000000);
    corral__ctr_t *r = &p->ctrs[0];
    r->st = CORRAL__C_RUNNING;
    r->started_us = p->start_us;
    r->restarts = 2;
    snprintf(r->cid, sizeof(r->cid), "corral://42");
    r->last.set = true;
    r->last.exit_code = 137;
    snprintf(r->last.reason, sizeof(r->last.reason), "OOMKilled");
    ended(&p->ctrs[1], 3);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *o = corral__pod_status(&a, p, "127.0.0.1", p->start_us);
    const corral_val_t *st = corral_val_get(o, "status");
    cr_assert_str_eq(corral_val_get_str(st, "phase"), "Running");
    cr_assert_str_eq(corral_val_get_str(st, "podIP"), "127.0.0.1");
    cr_assert_str_eq(corral_val_get_str(st, "startTime"), "2023-11-14T22:13:20Z");
    const corral_val_t *cs = corral_val_get(st, "containerStatuses");
    cr_assert_eq(cs->n, 2);
    cr_assert_str_eq(corral_val_dig(cs->items[0], "state.running.startedAt")->s,
                     "2023-11-14T22:13:20Z");
    cr_assert_eq(corral_val_get(cs->items[0], "restartCount")->u.i, 2);
    cr_assert_eq(corral_val_get(cs->items[0], "ready")->u.b, true);
    cr_assert_str_eq(corral_val_get_str(cs->items[0], "containerID"), "corral://42");
    cr_assert_str_eq(corral_val_dig(cs->items[0], "lastState.terminated.reason")->s, "OOMKilled");
    cr_assert_eq(corral_val_dig(cs->items[1], "state.terminated.exitCode")->u.i, 3);
    cr_assert_str_eq(corral_val_dig(cs->items[1], "state.terminated.reason")->s, "Error");
    const corral_val_t *conds = corral_val_get(st, "conditions");
    cr_assert_eq(conds->n, 4);
    cr_assert_str_eq(corral_val_get_str(conds->items[0], "type"), "PodScheduled");
    cr_assert_str_eq(corral_val_get_str(conds->items[3], "status"), "False");
    corral_arena_fini(&a);
    corral__pod_free(p);
}

Test(agent, node_object_keeps_user_fields)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__node_t n;
    corral__node_init(&n, "n1", NULL, 40);
    n.ngpu = 2;
    n.cpu_milli = 64000;
    n.memory_bytes = INT64_C(1) << 40;
    n.kubelet_port = 10250;
    corral_val_t *cur = parse(&a, "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"team\":\"a\","
                                  "\"kubernetes.io/hostname\":\"old\"}},\"spec\":{\"taints\":"
                                  "[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]}}");
    corral_val_t *o = corral__node_object(&a, &n, cur, 0);
    cr_assert_str_eq(corral_val_dig(o, "metadata.labels.team")->s, "a");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_dig(o, "metadata.labels"), "kubernetes.io/hostname"), "n1");
    cr_assert_eq(corral_val_dig(o, "spec.taints")->n, 1);
    const corral_val_t *cap = corral_val_dig(o, "status.capacity");
    cr_assert_str_eq(corral_val_get_str(cap, "nvidia.com/gpu"), "2");
    cr_assert_str_eq(corral_val_get_str(cap, "cpu"), "64");
    cr_assert_str_eq(corral_val_get_str(cap, "memory"), "1Ti");
    cr_assert_str_eq(corral_val_get_str(cap, "pods"), "110");
    cr_assert_eq(corral_val_dig(o, "status.daemonEndpoints.kubeletEndpoint.Port")->u.i, 10250);
    const corral_val_t *conds = corral_val_dig(o, "status.conditions");
    cr_assert_str_eq(corral_val_get_str(conds->items[3], "type"), "Ready");
    cr_assert_str_eq(corral_val_get_str(conds->items[3], "reason"), "KubeletReady");
    corral__node_fini(&n);
    corral_arena_fini(&a);
}
