/*
 * corral describe KIND NAME: one object in kubectl's describe layout
 * ("Key:  value" lines aligned per indentation level, nested sections,
 * tables), then its events. Pods show their containers with resources,
 * the GPUs Corral assigned, the conditions with PodScheduled's reason and
 * message (why a pod is pending), and events; nodes (describe_node.c)
 * their capacity, allocatable, GPU topology matrix, pods and allocated
 * resources. InferenceServices (describe_isvc.c) their revisions, traffic,
 * replicas and last cold start. Volcano objects are shown field by field as
 * kubectl shows custom resources, followed by their pods.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/table.h"
#include "corral/timefmt.h"

/* --- the writer ------------------------------------------------------------------------------ */

enum { DW_KV, DW_RAW };

typedef struct dw_entry {
    int type, indent;
    char *key, *val; /* DW_RAW: val is the whole line(s) */
} dw_entry_t;

void corral__dw_init(corral__dw_t *w)
{
    memset(w, 0, sizeof(*w));
}

static dw_entry_t *dw_add(corral__dw_t *w)
{
    corral_grow((void **)&w->e, &w->cap, w->n + 1, sizeof(dw_entry_t));
    dw_entry_t *e = (dw_entry_t *)w->e + w->n++;
    memset(e, 0, sizeof(*e));
    return e;
}

void corral__dw_kv(corral__dw_t *w, int indent, const char *key, const char *fmt, ...)
{
    dw_entry_t *e = dw_add(w);
    e->type = DW_KV;
    e->indent = indent;
    e->key = corral_strdup(key);
    corral_buf_t b;
    corral_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    corral_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    e->val = corral_buf_steal(&b);
    if (!e->val)
        e->val = corral_strdup("");
}

void corral__dw_raw(corral__dw_t *w, const char *text)
{
    dw_entry_t *e = dw_add(w);
    e->type = DW_RAW;
    e->val = corral_strdup(text);
}

void corral__dw_table(corral__dw_t *w, int indent, const char *const *header,
                      const char *const *rows, size_t nrows, size_t ncols)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    if (!fp)
        return;
    corral_table_print(fp, header, rows, nrows, ncols);
    fclose(fp);
    corral_buf_t b;
    corral_buf_init(&b);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        corral_buf_printf(&b, "%*s%.*s\n", indent * 2, "", (int)n, p);
        p = nl ? nl + 1 : p + n;
    }
    free(text); /* from open_memstream */
    if (b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = '\0';
    corral__dw_raw(w, corral_buf_str(&b));
    corral_buf_fini(&b);
}

void corral__dw_flush(corral__dw_t *w, FILE *fp)
{
    dw_entry_t *e = w->e;
    size_t width[16] = {0};
    for (size_t i = 0; i < w->n; i++) {
        if (e[i].type == DW_KV && e[i].val[0] && e[i].indent < 16) {
            size_t l = strlen(e[i].key) + 1;
            width[e[i].indent] = l > width[e[i].indent] ? l : width[e[i].indent];
        }
    }
    for (size_t i = 0; i < w->n; i++) {
        if (e[i].type == DW_RAW) {
            fprintf(fp, "%s\n", e[i].val);
        } else if (!e[i].val[0]) {
            fprintf(fp, "%*s%s:\n", e[i].indent * 2, "", e[i].key);
        } else {
            int pad = (int)width[e[i].indent < 16 ? e[i].indent : 15] + 2;
            int col = e[i].indent * 2 + pad;
            char kc[256];
            snprintf(kc, sizeof(kc), "%s:", e[i].key);
            fprintf(fp, "%*s%-*s", e[i].indent * 2, "", pad, kc);
            for (const char *p = e[i].val; *p;) { /* continuation lines align */
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t)(nl - p) : strlen(p);
                fprintf(fp, "%.*s\n", (int)n, p);
                p = nl ? nl + 1 : p + n;
                if (*p)
                    fprintf(fp, "%*s", col, "");
            }
        }
        corral_free(e[i].key);
        corral_free(e[i].val);
    }
    corral_free(w->e);
    corral__dw_init(w);
}

/* --- shared pieces ------------------------------------------------------------------------------
 */

const char *corral__desc_str(const corral_val_t *o, const char *path)
{
    const corral_val_t *v = corral_val_dig(o, path);
    if (!v || v->kind == CORRAL_VAL_MAP || v->kind == CORRAL_VAL_SEQ || v->kind == CORRAL_VAL_NULL)
        return NULL;
    return v->s;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* "k=v" lines of a label map, or <none>. */
static void kv_lines(corral__dw_t *w, const char *key, const corral_val_t *m, const char *sep)
{
    if (!m || m->kind != CORRAL_VAL_MAP || m->n == 0) {
        corral__dw_kv(w, 0, key, "<none>");
        return;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < m->n; i++) {
        const corral_val_t *v = m->pairs[i].val;
        corral_buf_printf(&b, "%s%s%s%s", i ? "\n" : "", m->pairs[i].key->s, sep,
                          v && v->s ? v->s : "");
    }
    corral__dw_kv(w, 0, key, "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
}

void corral__desc_meta(corral__dw_t *w, const corral_val_t *o, bool ns, const char *roles)
{
    const corral_val_t *m = corral_val_get(o, "metadata");
    corral__dw_kv(w, 0, "Name", "%s", or_empty(corral_val_get_str(m, "name")));
    if (roles)
        corral__dw_kv(w, 0, "Roles", "%s", roles);
    if (ns)
        corral__dw_kv(w, 0, "Namespace", "%s", or_empty(corral_val_get_str(m, "namespace")));
    kv_lines(w, "Labels", corral_val_get(m, "labels"), "=");
    kv_lines(w, "Annotations", corral_val_get(m, "annotations"), ": ");
}

/* RFC 1123 with numeric zone, as kubectl prints timestamps. */
const char *corral__desc_time(corral_arena_t *a, const char *rfc3339)
{
    int64_t us;
    if (!rfc3339 || corral_time_parse(rfc3339, strlen(rfc3339), &us) != 0)
        return rfc3339 ? rfc3339 : "<unset>";
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[64];
    strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S +0000", &tm);
    return corral_arena_strdup(a, buf);
}

static int event_cmp(const void *x, const void *y)
{
    const corral_val_t *a = *(const corral_val_t *const *)x, *b = *(const corral_val_t *const *)y;
    const char *ta = corral__desc_str(a, "lastTimestamp"),
               *tb = corral__desc_str(b, "lastTimestamp");
    return strcmp(ta ? ta : "", tb ? tb : "");
}

void corral__desc_events(corral__cli_t *k, corral__dw_t *w, corral_arena_t *a,
                         const corral_kind_info_t *info, const char *ns, const char *name,
                         const char *uid)
{
    const corral_kind_info_t *ev = corral_kind_get(CORRAL_KIND_EVENT);
    const char *path = corral_arena_printf(
        a, "%s?fieldSelector=involvedObject.kind%%3D%s%%2CinvolvedObject.name%%3D%s%s%s",
        corral__cli_path(a, ev, info->namespaced ? ns : NULL, NULL, NULL), info->name, name,
        uid && *uid ? "%2CinvolvedObject.uid%3D" : "", uid && *uid ? uid : "");
    corral_val_t *list = corral__cli_get(k, a, path, NULL);
    corral_val_t *items = corral_val_get(list, "items");
    if (!items || items->kind != CORRAL_VAL_SEQ || items->n == 0) {
        corral__dw_kv(w, 0, "Events", "<none>");
        return;
    }
    qsort(items->items, items->n, sizeof(corral_val_t *), event_cmp);
    corral__dw_kv(w, 0, "Events", "%s", "");
    size_t n = items->n;
    const char **cells = corral_arena_alloc(a, (n + 1) * 5 * sizeof(*cells));
    static const char *const header[] = {"Type", "Reason", "Age", "From", "Message"};
    static const char *const rule[] = {"----", "------", "----", "----", "-------"};
    memcpy(cells, rule, sizeof(rule));
    int64_t now = corral__cli_now_us();
    for (size_t i = 0; i < n; i++) {
        const corral_val_t *e = items->items[i];
        const char **c = cells + (i + 1) * 5;
        const char *ls = corral__desc_str(e, "lastTimestamp");
        const char *age = corral_table_age(e, now, a);
        if (ls) {
            int64_t us;
            char d[32] = "";
            if (corral_time_parse(ls, strlen(ls), &us) == 0)
                corral_human_duration((now - us) / 1000000, d, sizeof(d));
            age = corral_arena_strdup(a, d);
        }
        const char *cnt = corral__desc_str(e, "count");
        if (cnt && strtol(cnt, NULL, 10) > 1)
            age = corral_arena_printf(a, "%s (x%s over %s)", age, cnt, corral_table_age(e, now, a));
        const char *from = corral__desc_str(e, "source.component");
        if (!from)
            from = corral__desc_str(e, "reportingComponent");
        c[0] = or_empty(corral__desc_str(e, "type"));
        c[1] = or_empty(corral__desc_str(e, "reason"));
        c[2] = age;
        c[3] = or_empty(from);
        c[4] = or_empty(corral__desc_str(e, "message"));
    }
    corral__dw_table(w, 1, header, cells, n + 1, 5);
}

void corral__desc_resources(corral__dw_t *w, int indent, const char *key, const corral_val_t *m)
{
    if (!m || m->kind != CORRAL_VAL_MAP || m->n == 0)
        return;
    corral__dw_kv(w, indent, key, "%s", "");
    for (size_t i = 0; i < m->n; i++) {
        const corral_val_t *v = m->pairs[i].val;
        corral__dw_kv(w, indent + 1, m->pairs[i].key->s, "%s", v && v->s ? v->s : "");
    }
}

/* --- pods
 * ----------------------------------------------------------------------------------------- */

static void desc_container(corral__dw_t *w, const corral_val_t *c, const corral_val_t *status)
{
    corral__dw_kv(w, 1, corral_val_get_str(c, "name") ? corral_val_get_str(c, "name") : "?", "%s",
                  "");
    corral__dw_kv(w, 2, "Image", "%s", or_empty(corral_val_get_str(c, "image")));
    const corral_val_t *cmd = corral_val_get(c, "command");
    const corral_val_t *args = corral_val_get(c, "args");
    const corral_val_t *lists[] = {cmd, args};
    static const char *const names[] = {"Command", "Args"};
    for (size_t k = 0; k < 2; k++) {
        if (!lists[k] || lists[k]->kind != CORRAL_VAL_SEQ || !lists[k]->n)
            continue;
        corral__dw_kv(w, 2, names[k], "%s", "");
        for (size_t i = 0; i < lists[k]->n; i++) {
            char line[1024];
            const corral_val_t *it = lists[k]->items[i];
            snprintf(line, sizeof(line), "      %s", it && it->s ? it->s : "");
            corral__dw_raw(w, line);
        }
    }
    const char *state = "Waiting";
    if (corral_val_dig(status, "state.running"))
        state = "Running";
    else if (corral_val_dig(status, "state.terminated"))
        state = "Terminated";
    if (status)
        corral__dw_kv(w, 2, "State", "%s", state);
    const corral_val_t *res = corral_val_get(c, "resources");
    corral__desc_resources(w, 2, "Limits", corral_val_get(res, "limits"));
    corral__desc_resources(w, 2, "Requests", corral_val_get(res, "requests"));
    const corral_val_t *env = corral_val_get(c, "env");
    if (!env || env->kind != CORRAL_VAL_SEQ || !env->n) {
        corral__dw_kv(w, 2, "Environment", "<none>");
        return;
    }
    corral__dw_kv(w, 2, "Environment", "%s", "");
    for (size_t i = 0; i < env->n; i++) {
        const char *n = corral_val_get_str(env->items[i], "name");
        const char *v = corral_val_get_str(env->items[i], "value");
        corral__dw_kv(w, 3, n ? n : "?", "%s", v ? v : "(set from a reference)");
    }
}

static const corral_val_t *container_status(const corral_val_t *pod, const char *name)
{
    const corral_val_t *cs = corral_val_dig(pod, "status.containerStatuses");
    for (size_t i = 0; name && cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        const char *n = corral_val_get_str(cs->items[i], "name");
        if (n && strcmp(n, name) == 0)
            return cs->items[i];
    }
    return NULL;
}

/* Conditions with PodScheduled's reason and message: why a pod waits. */
void corral__desc_conditions(corral__dw_t *w, corral_arena_t *a, const corral_val_t *o)
{
    const corral_val_t *cs = corral_val_dig(o, "status.conditions");
    if (!cs || cs->kind != CORRAL_VAL_SEQ || !cs->n) {
        corral__dw_kv(w, 0, "Conditions", "<none>");
        return;
    }
    corral__dw_kv(w, 0, "Conditions", "%s", "");
    static const char *const header[] = {"Type", "Status", "Reason", "Message"};
    const char **cells = corral_arena_alloc(a, cs->n * 4 * sizeof(*cells));
    for (size_t i = 0; i < cs->n; i++) {
        const corral_val_t *c = cs->items[i];
        cells[i * 4] = or_empty(corral_val_get_str(c, "type"));
        cells[i * 4 + 1] = or_empty(corral_val_get_str(c, "status"));
        cells[i * 4 + 2] = or_empty(corral_val_get_str(c, "reason"));
        cells[i * 4 + 3] = or_empty(corral_val_get_str(c, "message"));
    }
    corral__dw_table(w, 1, header, cells, cs->n, 4);
}

static void desc_tolerations(corral__dw_t *w, const corral_val_t *o)
{
    const corral_val_t *ts = corral_val_dig(o, "spec.tolerations");
    if (!ts || ts->kind != CORRAL_VAL_SEQ || !ts->n) {
        corral__dw_kv(w, 0, "Tolerations", "<none>");
        return;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < ts->n; i++) {
        const corral_val_t *t = ts->items[i];
        const char *key = corral_val_get_str(t, "key"), *op = corral_val_get_str(t, "operator");
        const char *val = corral_val_get_str(t, "value"), *eff = corral_val_get_str(t, "effect");
        corral_buf_printf(&b, "%s%s", i ? "\n" : "", key ? key : "");
        if (op && !strcmp(op, "Exists"))
            corral_buf_puts(&b, key ? " op=Exists" : "op=Exists");
        else if (val)
            corral_buf_printf(&b, "=%s", val);
        if (eff)
            corral_buf_printf(&b, ":%s", eff);
    }
    corral__dw_kv(w, 0, "Tolerations", "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
}

static int describe_pod(corral__cli_t *k, corral_arena_t *a, const corral_val_t *o)
{
    corral__dw_t w;
    corral__dw_init(&w);
    corral__desc_meta(&w, o, true, NULL);
    const char *pcn = corral__desc_str(o, "spec.priorityClassName");
    corral__dw_kv(&w, 0, "Priority", "%s", or_empty(corral__desc_str(o, "spec.priority")));
    if (pcn)
        corral__dw_kv(&w, 0, "Priority Class Name", "%s", pcn);
    const char *node = corral__desc_str(o, "spec.nodeName");
    const char *hip = corral__desc_str(o, "status.hostIP");
    corral__dw_kv(&w, 0, "Node", "%s%s%s", node ? node : "<none>", node && hip ? "/" : "",
                  node && hip ? hip : "");
    const char *st = corral__desc_str(o, "status.startTime");
    if (st)
        corral__dw_kv(&w, 0, "Start Time", "%s", corral__desc_time(a, st));
    const corral_val_t *del = corral_val_dig(o, "metadata.deletionTimestamp");
    corral__dw_kv(&w, 0, "Status", "%s",
                  del ? "Terminating" : or_empty(corral__desc_str(o, "status.phase")));
    corral__dw_kv(&w, 0, "Scheduler", "%s", or_empty(corral__desc_str(o, "spec.schedulerName")));
    const corral_val_t *ann = corral_val_dig(o, "metadata.annotations");
    const char *gpus = corral_val_get_str(ann, "corral.dev/gpu-ids");
    corral__dw_kv(&w, 0, "GPUs", "%s", gpus ? gpus : "<none>");
    corral__dw_kv(&w, 0, "IP", "%s", or_empty(corral__desc_str(o, "status.podIP")));
    const corral_val_t *cs = corral_val_dig(o, "spec.containers");
    corral__dw_kv(&w, 0, "Containers", "%s", "");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++)
        desc_container(&w, cs->items[i],
                       container_status(o, corral_val_get_str(cs->items[i], "name")));
    corral__desc_conditions(&w, a, o);
    corral__dw_kv(&w, 0, "QoS Class", "%s", or_empty(corral__desc_str(o, "status.qosClass")));
    const corral_val_t *nsel = corral_val_dig(o, "spec.nodeSelector");
    if (nsel && nsel->kind == CORRAL_VAL_MAP && nsel->n) {
        corral_buf_t b;
        corral_buf_init(&b);
        for (size_t i = 0; i < nsel->n; i++)
            corral_buf_printf(&b, "%s%s=%s", i ? "\n" : "", nsel->pairs[i].key->s,
                              nsel->pairs[i].val->s ? nsel->pairs[i].val->s : "");
        corral__dw_kv(&w, 0, "Node-Selectors", "%s", corral_buf_str(&b));
        corral_buf_fini(&b);
    } else {
        corral__dw_kv(&w, 0, "Node-Selectors", "<none>");
    }
    desc_tolerations(&w, o);
    corral__desc_events(k, &w, a, corral_kind_get(CORRAL_KIND_POD),
                        corral__desc_str(o, "metadata.namespace"),
                        corral__desc_str(o, "metadata.name"), corral__desc_str(o, "metadata.uid"));
    corral__dw_flush(&w, stdout);
    return CORRAL_EXIT_OK;
}

/* --- custom resources: field by field
 * -------------------------------------------------------------- */

/* kubectl's smartLabelFor: "minMember" -> "Min Member"; keys with other
 * characters than letters and '-' ("nvidia.com/gpu") stay as they are. */
static const char *smart_label(corral_arena_t *a, const char *k)
{
    for (const char *p = k; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '-'))
            return k;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    for (const char *p = k; *p; p++) {
        bool upper = *p >= 'A' && *p <= 'Z';
        bool start = p == k || (upper && !(p[-1] >= 'A' && p[-1] <= 'Z'));
        if (start && p != k)
            corral_buf_putc(&b, ' ');
        corral_buf_putc(&b, (char)(start && !upper ? *p - 'a' + 'A' : *p));
    }
    static const char *const acronyms[] = {"Api", "Url", "Uid", "Gpu", "Ip"};
    char *out = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(acronyms); i++) {
        size_t n = strlen(acronyms[i]);
        for (char *p = strstr(out, acronyms[i]); p; p = strstr(p + n, acronyms[i])) {
            bool word = (p == out || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ');
            for (size_t j = 1; word && j < n; j++)
                p[j] = (char)(p[j] - 32);
        }
    }
    return out;
}

static void desc_value(corral__dw_t *w, corral_arena_t *a, int indent, const char *key,
                       const corral_val_t *v, int depth)
{
    const char *label = smart_label(a, key);
    if (!v || v->kind == CORRAL_VAL_NULL) {
        corral__dw_kv(w, indent, label, "<nil>");
    } else if (v->kind == CORRAL_VAL_MAP) {
        corral__dw_kv(w, indent, label, "%s", "");
        for (size_t i = 0; i < v->n && depth < 20; i++)
            desc_value(w, a, indent + 1, v->pairs[i].key->s, v->pairs[i].val, depth + 1);
    } else if (v->kind == CORRAL_VAL_SEQ) {
        corral__dw_kv(w, indent, label, "%s", "");
        for (size_t i = 0; i < v->n && depth < 20; i++) {
            const corral_val_t *it = v->items[i];
            if (it && it->kind == CORRAL_VAL_MAP) {
                for (size_t j = 0; j < it->n; j++)
                    desc_value(w, a, indent + 1, it->pairs[j].key->s, it->pairs[j].val, depth + 1);
            } else {
                char line[1024];
                snprintf(line, sizeof(line), "%*s%s", (indent + 1) * 2, "",
                         it && it->s ? it->s : "");
                corral__dw_raw(w, line);
            }
        }
    } else {
        corral__dw_kv(w, indent, label, "%s", v->s ? v->s : "");
    }
}

/* The pods of a workload: those whose label (or annotation) key is name. */
static void desc_pods(corral__cli_t *k, corral__dw_t *w, corral_arena_t *a, const char *ns,
                      const char *key, const char *name, bool annotation)
{
    const corral_kind_info_t *pod = corral_kind_get(CORRAL_KIND_POD);
    const char *path = corral__cli_path(a, pod, ns, NULL, NULL);
    if (!annotation)
        path = corral_arena_printf(a, "%s?labelSelector=%s%%3D%s", path, key, name);
    corral_val_t *list = corral__cli_get(k, a, path, NULL);
    const corral_val_t *items = corral_val_get(list, "items");
    size_t n = 0;
    const char **cells = corral_arena_alloc(a, (items ? items->n : 0) * 4 * sizeof(*cells) + 1);
    for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++) {
        const corral_val_t *p = items->items[i];
        const char *v = corral_val_get_str(corral_val_dig(p, "metadata.annotations"), key);
        if (annotation && (!v || strcmp(v, name) != 0))
            continue;
        const char *row[9];
        corral_table_row(CORRAL_KIND_POD, p, corral__cli_now_us(), a, row);
        cells[n * 4] = row[0];
        cells[n * 4 + 1] = row[2];
        cells[n * 4 + 2] = row[6];
        cells[n * 4 + 3] = row[8];
        n++;
    }
    if (!n) {
        corral__dw_kv(w, 0, "Pods", "<none>");
        return;
    }
    static const char *const header[] = {"Name", "Status", "Node", "GPUs"};
    corral__dw_kv(w, 0, "Pods", "%s", "");
    corral__dw_table(w, 1, header, cells, n, 4);
}

/* Queues: the PodGroups that name them, by phase. */
static void desc_queue_groups(corral__cli_t *k, corral__dw_t *w, corral_arena_t *a,
                              const char *name)
{
    const corral_kind_info_t *pg = corral_kind_get(CORRAL_KIND_PODGROUP);
    corral_val_t *list = corral__cli_get(k, a, corral__cli_path(a, pg, NULL, NULL, NULL), NULL);
    const corral_val_t *items = corral_val_get(list, "items");
    corral_buf_t b;
    corral_buf_init(&b);
    size_t n = 0;
    for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++) {
        const corral_val_t *g = items->items[i];
        const char *q = corral__desc_str(g, "spec.queue");
        if (strcmp(q ? q : "default", name) != 0)
            continue;
        const char *phase = corral__desc_str(g, "status.phase");
        corral_buf_printf(&b, "%s%s/%s (%s)", n++ ? "\n" : "",
                          or_empty(corral__desc_str(g, "metadata.namespace")),
                          or_empty(corral__desc_str(g, "metadata.name")),
                          phase ? phase : "Pending");
    }
    corral__dw_kv(&*w, 0, "PodGroups", "%s", n ? corral_buf_str(&b) : "<none>");
    corral_buf_fini(&b);
}

static int describe_custom(corral__cli_t *k, corral_arena_t *a, const corral_kind_info_t *info,
                           const corral_val_t *o)
{
    corral__dw_t w;
    corral__dw_init(&w);
    corral__desc_meta(&w, o, info->namespaced, NULL);
    corral__dw_kv(&w, 0, "API Version", "%s", info->api_version);
    corral__dw_kv(&w, 0, "Kind", "%s", info->name);
    const corral_val_t *m = corral_val_get(o, "metadata");
    corral__dw_kv(&w, 0, "Metadata", "%s", "");
    static const char *const mkeys[] = {"creationTimestamp", "generation", "resourceVersion",
                                        "uid"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(mkeys); i++) {
        const corral_val_t *v = corral_val_get(m, mkeys[i]);
        if (v)
            desc_value(&w, a, 1, mkeys[i], v, 1);
    }
    for (size_t i = 0; i < o->n; i++) {
        const char *key = o->pairs[i].key->s;
        if (strcmp(key, "apiVersion") != 0 && strcmp(key, "kind") != 0 &&
            strcmp(key, "metadata") != 0)
            desc_value(&w, a, 0, key, o->pairs[i].val, 0);
    }
    const char *ns = corral__desc_str(o, "metadata.namespace");
    const char *name = corral__desc_str(o, "metadata.name");
    if (info->kind == CORRAL_KIND_QUEUE)
        desc_queue_groups(k, &w, a, name);
    else if (info->kind == CORRAL_KIND_PODGROUP)
        desc_pods(k, &w, a, ns, "scheduling.k8s.io/group-name", name, true);
    else if (info->kind == CORRAL_KIND_VCJOB)
        desc_pods(k, &w, a, ns, "volcano.sh/job-name", name, false);
    corral__desc_events(k, &w, a, info, ns, name, corral__desc_str(o, "metadata.uid"));
    corral__dw_flush(&w, stdout);
    return CORRAL_EXIT_OK;
}

/* --- the command ---------------------------------------------------------------------------------
 */

static void describe_usage(FILE *fp)
{
    fprintf(fp, "usage: corral describe KIND NAME [-n NS] [connection flags]\n"
                "       corral describe KIND/NAME\n"
                "\n"
                "KIND: node, pod, queue, podgroup, job (vcjob), inferenceservice (isvc), or any\n"
                "other kind `corral get` knows (shown field by field).\n\n" CORRAL__CLI_HELP);
}

static int describe_one(corral__cli_t *k, const corral_kind_info_t *info, const char *name)
{
    corral_arena_t a;
    corral_arena_init(&a);
    long code = 0;
    corral_val_t *o = corral__cli_get(k, &a, corral__cli_path(&a, info, k->ns, name, NULL), &code);
    int rc;
    if (!o) {
        if (code == 404)
            fprintf(stderr, "Error from server (NotFound): %s%s%s \"%s\" not found\n", info->plural,
                    info->group[0] ? "." : "", info->group, name);
        rc = CORRAL_EXIT_FAIL;
    } else if (info->kind == CORRAL_KIND_NODE) {
        rc = corral__describe_node(k, &a, o);
    } else if (info->kind == CORRAL_KIND_POD) {
        rc = describe_pod(k, &a, o);
    } else if (info->kind == CORRAL_KIND_ISVC) {
        rc = corral__describe_isvc(k, &a, o);
    } else {
        rc = describe_custom(k, &a, info, o);
    }
    corral_arena_fini(&a);
    return rc;
}

int corral_cmd_describe(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'}, CORRAL__CLI_LONGOPTS, {NULL, 0, NULL, 0}};
    corral__cli_t k;
    corral__cli_init(&k, "corral describe");
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hn:s:", opts, NULL)) != -1) {
        if (c == 'h') {
            describe_usage(stdout);
            return CORRAL_EXIT_OK;
        }
        if (!corral__cli_opt(&k, c, optarg)) {
            describe_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    char **args = argv + optind;
    size_t n = (size_t)(argc - optind);
    char *kind = n ? args[0] : NULL;
    char *slash = kind ? strchr(kind, '/') : NULL;
    if (slash)
        *slash = '\0';
    if (!kind || (!slash && n < 2)) {
        describe_usage(stderr);
        return CORRAL_EXIT_INVALID;
    }
    const corral_kind_info_t *info = corral__cli_resource(&k, kind);
    if (!info)
        return CORRAL_EXIT_INVALID;
    int rc = CORRAL_EXIT_FAIL;
    if (corral__cli_connect(&k)) {
        rc = CORRAL_EXIT_OK;
        if (slash)
            rc = describe_one(&k, info, slash + 1);
        for (size_t i = 1; i < n; i++) {
            if (i > 1 || slash)
                printf("\n\n");
            int r = describe_one(&k, info, args[i]);
            rc = r ? r : rc;
        }
    }
    corral__cli_fini(&k);
    return rc;
}
