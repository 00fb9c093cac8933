/*
 * `corral report usage`: accounting in the form Slurm's sacct/sreport give,
 * from the UsageRecords the controller writes (one per finished pod,
 * docs/observability.md): the records that finished within --since,
 * grouped by queue, namespace (the "user"), job or pod, with the count of
 * pods, GPU-hours allocated and used, efficiency (used over allocated, on
 * the records whose use is known), mean and 95th percentile wait, and the
 * failed ones; a TOTAL line ends the table. Read through the API like any
 * client (list, 500 records a page); -o json gives the same numbers.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/hmap.h"
#include "corral/json.h"
#include "corral/table.h"
#include "corral/timefmt.h"

static const char usage_text[] =
    "usage: corral report usage [--since DUR] [--by queue|namespace|job|pod] [-o json]\n"
    "                           [-n NS] [connection options]\n"
    "\n"
    "GPU accounting from the UsageRecords the controller keeps (one per finished pod):\n"
    "per group, pods, GPU-hours allocated and used, efficiency, mean and p95 wait,\n"
    "failed pods.\n"
    "\n"
    "  --since DUR      records of pods that finished within DUR (7d; e.g. 12h, 30m)\n"
    "  --by KEY         group by queue (default), namespace, job or pod\n"
    "  -o json          JSON instead of a table\n"
    "  -n NS            one namespace (default: every namespace)\n" CORRAL__CLI_HELP;

typedef struct group {
    const char *key;
    size_t pods, failed;
    double alloc_s, used_s, known_alloc_s; /* GPU-seconds; allocated where use is known */
    bool any_used;
    double *waits;
    size_t nwaits, capwaits;
} group_t;

typedef struct report {
    corral_arena_t a;
    const char *by; /* queue, namespace, job, pod */
    int64_t since_us;
    group_t *g;
    size_t ng, capg;
    corral_hmap_t idx;
    group_t total;
} report_t;

static double num(const corral_val_t *spec, const char *key, bool *known)
{
    const corral_val_t *v = corral_val_get(spec, key);
    if (!v || (v->kind != CORRAL_VAL_INT && v->kind != CORRAL_VAL_FLOAT)) {
        if (known)
            *known = false;
        return 0;
    }
    if (known)
        *known = true;
    return strtod(v->s, NULL);
}

static void add_to(group_t *g, const corral_val_t *spec)
{
    bool known;
    double alloc = num(spec, "gpuSecondsAllocated", NULL);
    double used = num(spec, "gpuSecondsUsed", &known);
    g->pods++;
    g->alloc_s += alloc;
    if (known) {
        g->any_used = true;
        g->used_s += used;
        g->known_alloc_s += alloc;
    }
    const char *ph = corral_val_get_str(spec, "phase");
    g->failed += ph && strcmp(ph, "Succeeded") != 0;
    corral_grow((void **)&g->waits, &g->capwaits, g->nwaits + 1, sizeof(*g->waits));
    g->waits[g->nwaits++] = num(spec, "waitSeconds", NULL);
}

static void take(report_t *r, const corral_val_t *item)
{
    const corral_val_t *meta = corral_val_get(item, "metadata");
    const corral_val_t *spec = corral_val_get(item, "spec");
    const char *fin = corral_val_get_str(spec, "finishedAt");
    int64_t us = 0;
    if (!spec || !fin || corral_time_parse(fin, strlen(fin), &us) != 0 || us < r->since_us)
        return;
    const char *key = !strcmp(r->by, "namespace") ? corral_val_get_str(meta, "namespace")
                      : !strcmp(r->by, "job")     ? corral_val_get_str(spec, "job")
                      : !strcmp(r->by, "pod")     ? corral_val_get_str(spec, "pod")
                                                  : corral_val_get_str(spec, "queue");
    if (!strcmp(r->by, "pod") || !strcmp(r->by, "job")) /* names are per namespace */
        key = corral_arena_printf(&r->a, "%s/%s", corral_val_get_str(meta, "namespace"),
                                  key && *key ? key : "-");
    else
        key = corral_arena_strdup(&r->a, key && *key ? key : "-");
    uint32_t id;
    if (!corral_hmap_get(&r->idx, key, &id)) {
        corral_grow((void **)&r->g, &r->capg, r->ng + 1, sizeof(*r->g));
        id = (uint32_t)r->ng++;
        memset(&r->g[id], 0, sizeof(r->g[id]));
        r->g[id].key = key;
        corral_hmap_put(&r->idx, key, id);
    }
    add_to(&r->g[id], spec);
    add_to(&r->total, spec);
}

/* Every record, a page at a time. 0, or an exit code. */
static int load(corral__cli_t *k, report_t *r, bool all_ns)
{
    char cont[2048] = "";
    do {
        corral_arena_t pa;
        corral_arena_init(&pa);
        corral_buf_t p;
        corral_buf_init(&p);
        corral_buf_puts(&p, corral__cli_path(&pa, corral_kind_get(CORRAL_KIND_USAGE),
                                             all_ns ? NULL : k->ns, NULL, NULL));
        corral_buf_puts(&p, "?limit=500");
        if (cont[0]) {
            corral_buf_puts(&p, "&continue=");
            for (const char *s = cont; *s; s++) {
                if (strchr("+/=&%#? ", *s))
                    corral_buf_printf(&p, "%%%02X", (unsigned char)*s);
                else
                    corral_buf_putc(&p, *s);
            }
        }
        long code = 0;
        corral_val_t *list = corral__cli_get(k, &pa, corral_buf_str(&p), &code);
        corral_buf_fini(&p);
        if (!list) {
            corral_arena_fini(&pa);
            if (code == 404)
                fprintf(stderr, "corral report: this API server has no UsageRecords\n");
            return CORRAL_EXIT_FAIL;
        }
        const corral_val_t *items = corral_val_get(list, "items");
        for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++)
            take(r, items->items[i]);
        const char *next = corral_val_get_str(corral_val_get(list, "metadata"), "continue");
        snprintf(cont, sizeof(cont), "%s", next ? next : "");
        corral_arena_fini(&pa);
    } while (cont[0]);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    double alloc_h, used_h, eff, mean_wait, p95_wait;
    bool has_used;
} stats_t;

static void stats_of(group_t *g, stats_t *s)
{
    s->alloc_h = g->alloc_s / 3600.0;
    s->used_h = g->used_s / 3600.0;
    s->has_used = g->any_used;
    s->eff = g->known_alloc_s > 0 ? 100.0 * g->used_s / g->known_alloc_s : -1;
    double sum = 0;
    for (size_t i = 0; i < g->nwaits; i++)
        sum += g->waits[i];
    s->mean_wait = g->nwaits ? sum / (double)g->nwaits : 0;
    qsort(g->waits, g->nwaits, sizeof(*g->waits), cmp_double);
    /* Nearest rank: the smallest wait with at least 95% of the pods at or below it. */
    size_t rank = g->nwaits ? (size_t)ceil(0.95 * (double)g->nwaits) : 0;
    s->p95_wait = rank ? g->waits[rank - 1] : 0;
}

static const char *dur(corral_arena_t *a, double s)
{
    if (s < 10)
        return corral_arena_printf(a, "%.1fs", s);
    char buf[32];
    corral_human_duration((int64_t)(s + 0.5), buf, sizeof(buf));
    return corral_arena_strdup(a, buf);
}

static void row(report_t *r, group_t *g, const char **c)
{
    stats_t s;
    stats_of(g, &s);
    c[0] = g->key;
    c[1] = corral_arena_printf(&r->a, "%zu", g->pods);
    c[2] = corral_arena_printf(&r->a, "%.3f", s.alloc_h);
    c[3] = s.has_used ? corral_arena_printf(&r->a, "%.3f", s.used_h) : "-";
    c[4] = s.eff >= 0 ? corral_arena_printf(&r->a, "%.0f%%", s.eff) : "-";
    c[5] = dur(&r->a, s.mean_wait);
    c[6] = dur(&r->a, s.p95_wait);
    c[7] = corral_arena_printf(&r->a, "%zu", g->failed);
}

static int cmp_group(const void *a, const void *b)
{
    return strcmp(((const group_t *)a)->key, ((const group_t *)b)->key);
}

static void print_table(report_t *r)
{
    char by[32];
    snprintf(by, sizeof(by), "%s", r->by);
    for (char *p = by; *p; p++)
        *p = (char)(*p - 32 * (*p >= 'a' && *p <= 'z'));
    const char *header[] = {by,           "PODS",      "GPU-HOURS", "USED-GPU-HOURS",
                            "EFFICIENCY", "MEAN-WAIT", "P95-WAIT",  "FAILED"};
    size_t nrows = r->ng + 1;
    const char **cells = corral_arena_alloc(&r->a, nrows * 8 * sizeof(*cells));
    for (size_t i = 0; i < r->ng; i++)
        row(r, &r->g[i], cells + i * 8);
    r->total.key = "TOTAL";
    row(r, &r->total, cells + r->ng * 8);
    corral_table_print(stdout, header, cells, nrows, 8);
}

static void json_group(corral_buf_t *b, group_t *g)
{
    stats_t s;
    stats_of(g, &s);
    corral_buf_puts(b, "{\"key\":");
    corral_json_quote(b, g->key, strlen(g->key));
    corral_buf_printf(b, ",\"pods\":%zu,\"gpuHoursAllocated\":%.6f", g->pods, s.alloc_h);
    if (s.has_used)
        corral_buf_printf(b, ",\"gpuHoursUsed\":%.6f", s.used_h);
    else
        corral_buf_puts(b, ",\"gpuHoursUsed\":null");
    if (s.eff >= 0)
        corral_buf_printf(b, ",\"efficiencyPercent\":%.2f", s.eff);
    else
        corral_buf_puts(b, ",\"efficiencyPercent\":null");
    corral_buf_printf(b, ",\"meanWaitSeconds\":%.3f,\"p95WaitSeconds\":%.3f,\"failed\":%zu}",
                      s.mean_wait, s.p95_wait, g->failed);
}

static void print_json(report_t *r, const char *since)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"since\":");
    corral_json_quote(&b, since, strlen(since));
    corral_buf_printf(&b, ",\"by\":\"%s\",\"groups\":[", r->by);
    for (size_t i = 0; i < r->ng; i++) {
        if (i)
            corral_buf_putc(&b, ',');
        json_group(&b, &r->g[i]);
    }
    corral_buf_puts(&b, "],\"total\":");
    r->total.key = "TOTAL";
    json_group(&b, &r->total);
    corral_buf_puts(&b, "}\n");
    fputs(corral_buf_str(&b), stdout);
    corral_buf_fini(&b);
}

static int parse(int argc, char **argv, corral__cli_t *k, report_t *r, const char **since,
                 const char **out, bool *all_ns)
{
    static const struct option opts[] = {
        {"since", required_argument, NULL, 'S'},
        {"by", required_argument, NULL, 'B'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        CORRAL__CLI_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "s:n:o:h", opts, NULL)) != -1) {
        if (ch == 'n')
            *all_ns = false;
        if (corral__cli_opt(k, ch, optarg))
            continue;
        if (ch == 'S')
            *since = optarg;
        else if (ch == 'B')
            r->by = optarg;
        else if (ch == 'o')
            *out = optarg;
        else if (ch == 'h') {
            fputs(usage_text, stdout);
            return CORRAL_EXIT_OK;
        } else {
            fputs(usage_text, stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    static const char *const bys[] = {"queue", "namespace", "job", "pod"};
    bool ok = false;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bys); i++)
        ok = ok || !strcmp(r->by, bys[i]);
    if (!ok || (*out && strcmp(*out, "json") != 0)) {
        fprintf(stderr, "corral report: --by wants queue, namespace, job or pod; -o wants json\n");
        return CORRAL_EXIT_INVALID;
    }
    if (optind >= argc || strcmp(argv[optind], "usage") != 0 || optind + 1 < argc) {
        fputs(usage_text, stderr);
        return CORRAL_EXIT_INVALID;
    }
    return -1;
}

int corral_cmd_report(int argc, char **argv)
{
    corral__cli_t k;
    corral__cli_init(&k, "corral report");
    report_t r;
    memset(&r, 0, sizeof(r));
    corral_arena_init(&r.a);
    corral_hmap_init(&r.idx);
    r.by = "queue";
    const char *since = "7d", *out = NULL;
    bool all_ns = true;
    int rc = parse(argc, argv, &k, &r, &since, &out, &all_ns);
    int64_t ns = 0;
    if (rc < 0 && !corral__flag_days("report", "since", since, &ns))
        rc = CORRAL_EXIT_INVALID;
    if (rc < 0 && !corral__cli_connect(&k))
        rc = CORRAL_EXIT_FAIL;
    bool loaded = false;
    if (rc < 0) {
        r.since_us = corral__cli_now_us() - ns / 1000;
        rc = load(&k, &r, all_ns);
        loaded = rc == 0;
    }
    if (loaded) {
        qsort(r.g, r.ng, sizeof(*r.g), cmp_group);
        if (out)
            print_json(&r, since);
        else
            print_table(&r);
        rc = CORRAL_EXIT_OK;
    }
    for (size_t i = 0; i < r.ng; i++)
        corral_free(r.g[i].waits);
    corral_free(r.g);
    corral_free(r.total.waits);
    corral_hmap_fini(&r.idx);
    corral_arena_fini(&r.a);
    corral__cli_fini(&k);
    return rc;
}
