/*
 * LocalModelCache status (src/controller/modelcache.c): the nodes of the
 * cache's node groups with their state from the LocalModelNodes (KServe's
 * ModelStatus -> NodeStatus), NodeNotReady for nodes not Ready, the copies,
 * the InferenceServices whose storageUri the cache holds, and the
 * comparison that keeps an unchanged status from being written again.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/controller_int.h"
#include "corral/yaml.h"

static corral_arena_t A;

static void setup(void)
{
    corral_arena_init(&A);
}

static void teardown(void)
{
    corral_arena_fini(&A);
}

TestSuite(modelcache, .init = setup, .fini = teardown);

static corral_obj_t *dec(const char *text)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&A, text, strlen(text), "t.yaml", NULL, &d, &docs, &n), 0);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(&A, docs[0].root, "t.yaml", &d, &o);
    cr_assert_eq(rc, 0, "decode failed: %s\n%s", d.n ? d.items[0].msg : "", text);
    corral_diag_fini(&d);
    return o;
}

static corral_obj_t *node(const char *name, const char *labels, bool ready)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s}}\n"
             "status: {conditions: [{type: Ready, status: \"%s\"}]}\n",
             name, labels, ready ? "True" : "False");
    return dec(buf);
}

static corral_obj_t *lmnode(const char *name, const char *status)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "apiVersion: serving.kserve.io/v1alpha1\nkind: LocalModelNode\n"
             "metadata: {name: %s}\nspec: {localModels: []}\n"
             "status: {modelStatus: {%s}}\n",
             name, status);
    return dec(buf);
}

static corral_obj_t *isvc(const char *ns, const char *name, const char *uri)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
             "metadata: {name: %s, namespace: %s}\n"
             "spec: {predictor: {model: {modelFormat: {name: hf}, storageUri: \"%s\"}}}\n",
             name, ns, uri);
    return dec(buf);
}

static const char *json(const corral_val_t *v)
{
    static char out[4096];
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(v, &b, false);
    snprintf(out, sizeof(out), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return out;
}

Test(modelcache, aggregation)
{
    corral_obj_t *cache = dec("apiVersion: serving.kserve.io/v1alpha1\nkind: LocalModelCache\n"
                              "metadata: {name: llama}\n"
                              "spec: {sourceModelUri: \"file:///models/llama/\", modelSize: 1Gi, "
                              "nodeGroups: [gpus, spare]}\n");
    const corral_obj_t *groups[] = {
        dec("apiVersion: serving.kserve.io/v1alpha1\nkind: LocalModelNodeGroup\n"
            "metadata: {name: gpus}\nspec: {storageLimit: 10Gi, nodeSelector: {gpu: \"true\"}}\n"),
        dec("apiVersion: serving.kserve.io/v1alpha1\nkind: LocalModelNodeGroup\n"
            "metadata: {name: other}\nspec: {storageLimit: 10Gi}\n"),
    };
    const corral_obj_t *nodes[] = {
        node("n4", "gpu: \"true\"", true), node("n1", "gpu: \"true\"", true),
        node("n2", "gpu: \"true\"", true), node("n3", "gpu: \"true\"", false),
        node("n5", "gpu: \"true\"", true), node("cpu", "gpu: \"false\"", true),
    };
    const corral_obj_t *lmn[] = {
        lmnode("n1", "llama: ModelDownloaded, other: ModelDownloadError"),
        lmnode("n2", "llama: ModelDownloading"),
        lmnode("n3", "llama: ModelDownloaded"),
        lmnode("n4", "llama: ModelDownloadError"),
        lmnode("cpu", "llama: ModelDownloaded"),
    };
    const corral_obj_t *svcs[] = {
        isvc("ml", "b", "file:///models/llama"),
        isvc("ml", "a", "file:///models/llama/8b"),
        isvc("dev", "z", "file:///models/llama/"),
        isvc("ml", "c", "file:///models/llama3"),
        dec("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
            "metadata: {name: custom}\n"
            "spec: {predictor: {containers: [{name: c, image: i}]}}\n"),
    };
    corral__lmc_world_t w = {(const corral_obj_t **)groups, 2, (const corral_obj_t **)nodes, 6,
                             (const corral_obj_t **)lmn,    5, (const corral_obj_t **)svcs,  5};
    corral_val_t *st = corral__lmc_status(&A, cache, &w);
    cr_assert_str_eq(
        json(st), "{\"copies\":{\"available\":1,\"total\":5,\"failed\":1},"
                  "\"nodeStatus\":{\"n1\":\"NodeDownloaded\",\"n2\":\"NodeDownloading\","
                  "\"n3\":\"NodeNotReady\",\"n4\":\"NodeDownloadError\","
                  "\"n5\":\"NodeDownloadPending\"},"
                  "\"inferenceServices\":[{\"namespace\":\"dev\",\"name\":\"z\"},"
                  "{\"namespace\":\"ml\",\"name\":\"a\"},{\"namespace\":\"ml\",\"name\":\"b\"}]}");
    /* what was written compares equal; any difference does not */
    cr_assert(corral__lmc_status_same(st, st));
    cr_assert_not(corral__lmc_status_same(NULL, st));
    corral_val_t *other = corral_val_copy(&A, st);
    corral_val_set(&A, corral_val_get(other, "nodeStatus"), "n2",
                   corral_val_new_str(&A, "NodeDownloaded"));
    cr_assert_not(corral__lmc_status_same(other, st));
    other = corral_val_copy(&A, st);
    corral_val_set(&A, corral_val_get(other, "nodeStatus"), "gone",
                   corral_val_new_str(&A, "NodeDownloaded"));
    cr_assert_not(corral__lmc_status_same(other, st));
    other = corral_val_copy(&A, st);
    corral_val_get(other, "inferenceServices")->n = 2;
    cr_assert_not(corral__lmc_status_same(other, st));
}

Test(modelcache, empty_and_omitted_fields)
{
    corral_obj_t *cache = dec("apiVersion: serving.kserve.io/v1alpha1\nkind: LocalModelCache\n"
                              "metadata: {name: m}\n"
                              "spec: {sourceModelUri: \"s3://b/m\", modelSize: 1Gi, "
                              "nodeGroups: [missing]}\n");
    corral__lmc_world_t w;
    memset(&w, 0, sizeof(w));
    corral_val_t *st = corral__lmc_status(&A, cache, &w);
    cr_assert_str_eq(json(st), "{\"copies\":{\"available\":0,\"total\":0,\"failed\":0},"
                               "\"nodeStatus\":{},\"inferenceServices\":[]}");
    /* upstream omits zero counts and empty lists: still the same */
    corral_obj_t *written = dec("apiVersion: serving.kserve.io/v1alpha1\nkind: LocalModelCache\n"
                                "metadata: {name: m}\n"
                                "spec: {sourceModelUri: \"s3://b/m\", modelSize: 1Gi, "
                                "nodeGroups: [missing]}\n"
                                "status: {copies: {}}\n");
    cr_assert(corral__lmc_status_same(corral_val_get(written->raw, "status"), st));
    cr_assert(corral__lmc_status_same(NULL, st));
}
