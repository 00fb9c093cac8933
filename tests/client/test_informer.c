/*
 * Informers against an in-process API server: the initial LIST becomes
 * ADDED events and a SYNCED marker, later writes arrive through the WATCH,
 * a server restart resumes without duplicate events, and stop returns
 * promptly.
 */
#include "../apiserver/api_test.h"
#include "corral/informer.h"

static corral_evq_t *q;
static corral_informer_t *inf;

static void cm(const char *name, const char *val)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"k\":\"%s\"}}",
             name, val);
    api_resp_t r;
    api_req(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL, body);
    cr_assert_eq(r.code, 201, "%s", r.body.p);
    api_free(&r);
}

/* Collect events until want of them (SYNCED included) came, or 10 s. */
static size_t collect(corral_watch_ev_t **out, size_t want)
{
    size_t n = 0;
    for (int i = 0; i < 100 && n < want; i++) {
        corral_watch_ev_t *list = corral_evq_take(q, 100);
        while (list) {
            corral_watch_ev_t *next = list->next;
            cr_assert_lt(n, 64);
            out[n++] = list;
            list = next;
        }
    }
    return n;
}

static void start_informer(void)
{
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", api_srv.port);
    cfg.server = corral_strdup(url);
    corral_informer_opts_t o = {.kind = CORRAL_KIND_CONFIGMAP, .ns = "default", .page_size = 2};
    char err[256];
    q = corral_evq_new();
    cr_assert_eq(corral_informer_start(&cfg, &o, q, &inf, err, sizeof(err)), 0, "%s", err);
    corral_client_config_fini(&cfg);
}

Test(informer, list_then_watch)
{
    api_start();
    cm("a", "1");
    cm("b", "2");
    cm("c", "3");
    start_informer();
    corral_watch_ev_t *ev[64];
    size_t n = collect(ev, 4);
    cr_assert_eq(n, 4);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(ev[i]->type, CORRAL_WATCH_ADDED);
        cr_assert_not_null(ev[i]->obj);
        cr_assert_str_eq(ev[i]->ns, "default");
        cr_assert_str_eq(ev[i]->obj->info->name, "ConfigMap");
    }
    cr_assert_eq(ev[3]->type, CORRAL_WATCH_SYNCED);
    cr_assert(corral_informer_synced(inf));
    for (size_t i = 0; i < n; i++)
        corral_watch_ev_free(ev[i]);

    cm("d", "4");
    api_resp_t r;
    api_req(&r, "PATCH", "/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json",
            "{\"data\":{\"k\":\"9\"}}");
    cr_assert_eq(r.code, 200);
    api_free(&r);
    api_req(&r, "DELETE", "/api/v1/namespaces/default/configmaps/b", NULL, NULL);
    cr_assert_eq(r.code, 200);
    api_free(&r);
    n = collect(ev, 3);
    cr_assert_eq(n, 3);
    cr_assert_eq(ev[0]->type, CORRAL_WATCH_ADDED);
    cr_assert_str_eq(ev[0]->name, "d");
    cr_assert_eq(ev[1]->type, CORRAL_WATCH_MODIFIED);
    cr_assert_str_eq(ev[1]->name, "a");
    cr_assert_str_eq(corral_strmap_get(&ev[1]->obj->u.cm->data, "k"), "9");
    cr_assert_eq(ev[2]->type, CORRAL_WATCH_DELETED);
    cr_assert_str_eq(ev[2]->name, "b");
    for (size_t i = 0; i < n; i++)
        corral_watch_ev_free(ev[i]);
    corral_informer_stop(inf);
    corral_evq_free(q);
    api_stop();
}

/* The server goes away and comes back on the same data and port: the
 * informer resumes (or relists) and delivers only what changed. */
Test(informer, server_restart_no_duplicates)
{
    api_start();
    cm("a", "1");
    cm("b", "2");
    start_informer();
    corral_watch_ev_t *ev[64];
    size_t n = collect(ev, 3);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < n; i++)
        corral_watch_ev_free(ev[i]);

    int port = api_srv.port;
    corral_apiserver_free(api_srv.s);
    corral_apiserver_opts_t o;
    memset(&o, 0, sizeof(o));
    o.data_dir = api_srv.dir;
    char listen[32];
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
    o.listen = listen;
    o.threads = 1;
    char err[256] = "";
    cr_assert_eq(corral_apiserver_new(&o, &api_srv.s, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(corral_apiserver_start(api_srv.s), 0);
    cm("c", "3");
    n = collect(ev, 1);
    cr_assert_geq(n, 1);
    size_t added_c = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i]->type == CORRAL_WATCH_ADDED && strcmp(ev[i]->name, "c") == 0)
            added_c++;
        else if (ev[i]->type != CORRAL_WATCH_SYNCED)
            other++;
        corral_watch_ev_free(ev[i]);
    }
    /* Anything late would show in another take. */
    corral_watch_ev_t *late = corral_evq_take(q, 300);
    for (corral_watch_ev_t *e = late; e; e = e->next)
        other += e->type != CORRAL_WATCH_SYNCED;
    corral_watch_ev_free_list(late);
    cr_assert_eq(added_c, 1);
    cr_assert_eq(other, 0, "no duplicate events after a restart");
    corral_informer_stop(inf);
    corral_evq_free(q);
    api_stop();
}

Test(informer, obj_from_json)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_obj_t *o = NULL;
    char err[256];
    const char *good =
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"x\"}}";
    cr_assert_eq(corral_obj_from_json(&a, good, strlen(good), &o, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(o->meta.name, "x");
    cr_assert_eq(corral_obj_from_json(&a, "{", 1, &o, err, sizeof(err)), CORRAL_EINVAL);
    cr_assert_null(o);
    const char *unknown =
        "{\"apiVersion\":\"x/v1\",\"kind\":\"Nope\",\"metadata\":{\"name\":\"x\"}}";
    cr_assert_eq(corral_obj_from_json(&a, unknown, strlen(unknown), &o, err, sizeof(err)),
                 CORRAL_EINVAL);
    corral_arena_fini(&a);
}
