/*
 * The RBAC of `corral up` (include/corral/up.h): the manifests of
 * deploy/rbac/ are assembled into the binary (.incbin, so the files stay the
 * one source: the same YAML is applied on real clusters and checked by
 * `corral validate -f deploy/`), and applied at every start as
 * create-or-update: an unconditional PUT, then a POST when the object is
 * absent. Re-applying is harmless (an unchanged object is not rewritten),
 * and a role edited by hand is put back as shipped.
 */
#include <stdio.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/client.h"
#include "corral/diag.h"
#include "corral/embed.h"
#include "corral/model.h"
#include "corral/up.h"
#include "corral/yaml.h"

CORRAL_EMBED(rbac_scheduler, "deploy/rbac/scheduler.yaml");
CORRAL_EMBED(rbac_controller, "deploy/rbac/controller.yaml");
CORRAL_EMBED(rbac_metrics, "deploy/rbac/metrics-reader.yaml");
CORRAL_EMBED(rbac_agent, "deploy/rbac/agent.yaml");

static const struct {
    const char *name;
    const char *start, *end;
} manifests[] = {
    {"deploy/rbac/scheduler.yaml", rbac_scheduler_start, rbac_scheduler_end},
    {"deploy/rbac/controller.yaml", rbac_controller_start, rbac_controller_end},
    {"deploy/rbac/metrics-reader.yaml", rbac_metrics_start, rbac_metrics_end},
    {"deploy/rbac/agent.yaml", rbac_agent_start, rbac_agent_end},
};

size_t corral_up_rbac_count(void)
{
    return sizeof(manifests) / sizeof(manifests[0]);
}

const char *corral_up_rbac_name(size_t i)
{
    return i < corral_up_rbac_count() ? manifests[i].name : NULL;
}

const char *corral_up_rbac_text(size_t i, size_t *len)
{
    if (i >= corral_up_rbac_count())
        return NULL;
    *len = (size_t)(manifests[i].end - manifests[i].start);
    return manifests[i].start;
}

/* PUT, else POST: one object. */
static int apply_one(corral_client_t *c, const corral_val_t *root, const char *where, char *err,
                     size_t errlen)
{
    const char *av = corral_val_get_str(root, "apiVersion");
    const char *kind = corral_val_get_str(root, "kind");
    const char *name = corral_val_get_str(corral_val_get(root, "metadata"), "name");
    const char *ns = corral_val_get_str(corral_val_get(root, "metadata"), "namespace");
    const corral_kind_info_t *info = av && kind ? corral_kind_find(av, kind) : NULL;
    if (!info || !name || (info->namespaced && !ns)) {
        snprintf(err, errlen, "%s: not an object the API server knows (apiVersion, kind, name)",
                 where);
        return CORRAL_EINVAL;
    }
    char coll[1024], obj[1280];
    const char *prefix = *info->group ? "/apis" : "/api";
    if (info->namespaced)
        snprintf(coll, sizeof(coll), "%s/%s/namespaces/%s/%s", prefix, info->api_version, ns,
                 info->plural);
    else
        snprintf(coll, sizeof(coll), "%s/%s/%s", prefix, info->api_version, info->plural);
    snprintf(obj, sizeof(obj), "%s/%s", coll, name);
    corral_buf_t body;
    corral_buf_init(&body);
    corral_val_to_json(root, &body, false);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(c, "PUT", obj, NULL, corral_buf_str(&body), body.len, &r);
    if (rc == 0 && r.code == 404) {
        corral_client_resp_fini(&r);
        corral_client_resp_init(&r);
        rc = corral_client_request(c, "POST", coll, NULL, corral_buf_str(&body), body.len, &r);
    }
    if (rc != 0 || r.code / 100 != 2) {
        char reason[64], msg[512];
        corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
        snprintf(err, errlen, "%s: %s %s/%s: %s", where, r.code ? "applying" : "cannot apply",
                 info->name, name, r.code ? msg : r.error);
        rc = rc ? rc : CORRAL_EIO;
    }
    corral_client_resp_fini(&r);
    corral_buf_fini(&body);
    return rc;
}

int corral_up_apply(corral_client_t *c, const char *text, size_t len, const char *file, char *err,
                    size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t diag;
    corral_diag_init(&diag);
    corral_doc_t *docs = NULL;
    size_t ndocs = 0;
    int rc = corral_yaml_parse(&a, text, len, file, NULL, &diag, &docs, &ndocs);
    if (rc != 0)
        snprintf(err, errlen, "%s: not valid YAML", file);
    for (size_t i = 0; i < ndocs && rc == 0; i++) {
        if (!docs[i].root)
            continue;
        char where[600];
        snprintf(where, sizeof(where), "%s:%d", file, docs[i].line);
        rc = apply_one(c, docs[i].root, where, err, errlen);
    }
    corral_diag_fini(&diag);
    corral_arena_fini(&a);
    return rc;
}
