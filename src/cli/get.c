/*
 * corral get KIND [NAME...] | KIND/NAME...: objects as kubectl prints them:
 * a table (kubectl's columns; more with -o wide; NAMESPACE first with -A),
 * or the objects as JSON or YAML (several as a v1 List), or kind/name
 * lines (-o name). KIND is what kubectl takes: plural, singular, short
 * name (po, no, ns, pg, q, vcjob, isvc) or plural.group, and several kinds
 * separated by commas. -w lists, then watches the one kind for changes and
 * prints a row (or object) per change until the stream ends.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/table.h"

#define MAX_TARGETS 64

static void get_usage(FILE *fp)
{
    fprintf(fp, "usage: corral get KIND[,KIND...] [NAME...] [options]\n"
                "       corral get KIND/NAME... [options]\n"
                "\n"
                "  -A, --all-namespaces    every namespace\n"
                "  -l, --selector SEL      label selector (app=web,tier!=db)\n"
                "      --field-selector SEL  field selector (spec.nodeName=gpu-1)\n"
                "  -o, --output FORMAT     wide, json, yaml or name (default: a table)\n"
                "      --no-headers        tables without the header line\n"
                "  -w, --watch             after listing, print changes as they happen\n"
                "\n"
                "Kinds: pods (po), nodes (no), namespaces (ns), events (ev), queues (q),\n"
                "podgroups (pg), jobs (vcjob), hypernodes (hn), inferenceservices (isvc),\n"
                "priorityclasses (pc), leases, configmaps (cm), secrets, roles, rolebindings,\n"
                "clusterroles, clusterrolebindings, scenarios.\n\n" CORRAL__CLI_HELP);
}

typedef struct target {
    const corral_kind_info_t *info;
    const char *name; /* NULL: the collection */
} target_t;

typedef struct get {
    corral__cli_t k;
    corral_arena_t a;
    bool all_ns, watch, no_headers;
    const char *labels, *fields, *output;
    target_t t[MAX_TARGETS];
    size_t nt;
    bool multi_kind; /* prefix names with their kind */
    int failed;
} get_t;

/* Percent-encode a query value. */
static const char *esc(corral_arena_t *a, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    corral_buf_t b;
    corral_buf_init(&b);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p)) {
            corral_buf_putc(&b, (char)*p);
        } else {
            corral_buf_putc(&b, '%');
            corral_buf_putc(&b, hex[*p >> 4]);
            corral_buf_putc(&b, hex[*p & 15]);
        }
    }
    const char *r = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return r;
}

/* The collection's path with the selectors (and extra query). */
static const char *list_path(get_t *g, const corral_kind_info_t *k, const char *extra)
{
    const char *p = corral__cli_path(&g->a, k, g->all_ns ? NULL : g->k.ns, NULL, NULL);
    char sep = '?';
    if (g->labels) {
        p = corral_arena_printf(&g->a, "%s%clabelSelector=%s", p, sep, esc(&g->a, g->labels));
        sep = '&';
    }
    if (g->fields) {
        p = corral_arena_printf(&g->a, "%s%cfieldSelector=%s", p, sep, esc(&g->a, g->fields));
        sep = '&';
    }
    if (extra)
        p = corral_arena_printf(&g->a, "%s%c%s", p, sep, extra);
    return p;
}

/* --- output ------------------------------------------------------------------------------------
 */

typedef struct cols {
    const corral_table_col_t *all;
    size_t nall;
    size_t idx[32]; /* shown columns (indexes into all) */
    size_t n;
    bool ns; /* a NAMESPACE column first */
} cols_t;

static void pick_cols(const get_t *g, const corral_kind_info_t *k, cols_t *c)
{
    c->all = corral_table_columns(k->kind, &c->nall);
    bool wide = g->output && strcmp(g->output, "wide") == 0;
    c->n = 0;
    for (size_t i = 0; i < c->nall && c->n < CORRAL_ARRAY_LEN(c->idx); i++) {
        if (c->all[i].priority == 0 || wide)
            c->idx[c->n++] = i;
    }
    c->ns = g->all_ns && k->namespaced;
}

/* One row of shown cells for obj (cells: c->n + 1 slots). */
static void row_cells(get_t *g, const corral_kind_info_t *k, const cols_t *c,
                      const corral_val_t *obj, const char **out)
{
    const char *all[64];
    corral_table_row(k->kind, obj, corral__cli_now_us(), &g->a, all);
    size_t o = 0;
    if (c->ns) {
        const char *ns = corral_val_get_str(corral_val_get(obj, "metadata"), "namespace");
        out[o++] = ns ? ns : "";
    }
    for (size_t i = 0; i < c->n; i++) {
        const char *cell = all[c->idx[i]];
        if (g->multi_kind && strcmp(c->all[c->idx[i]].name, "NAME") == 0)
            cell = corral_arena_printf(&g->a, "%s/%s", corral__cli_kind_ref(&g->a, k), cell);
        out[o++] = cell;
    }
}

static void header_cells(const cols_t *c, const char **out)
{
    size_t o = 0;
    if (c->ns)
        out[o++] = "NAMESPACE";
    for (size_t i = 0; i < c->n; i++)
        out[o++] = c->all[c->idx[i]].name;
}

static void print_table(get_t *g, const corral_kind_info_t *k, corral_val_t **objs, size_t n)
{
    cols_t c;
    pick_cols(g, k, &c);
    size_t nc = c.n + (c.ns ? 1 : 0);
    const char **cells = corral_arena_alloc(&g->a, (n ? n : 1) * nc * sizeof(*cells));
    for (size_t i = 0; i < n; i++)
        row_cells(g, k, &c, objs[i], cells + i * nc);
    const char *header[40];
    header_cells(&c, header);
    corral_table_print(stdout, g->no_headers ? NULL : header, cells, n, nc);
}

static void print_name(get_t *g, const corral_kind_info_t *k, const corral_val_t *obj)
{
    const char *name = corral_val_get_str(corral_val_get(obj, "metadata"), "name");
    printf("%s/%s\n", corral__cli_kind_ref(&g->a, k), name ? name : "");
}

static void print_doc(const corral_val_t *v, bool yaml)
{
    corral_buf_t b;
    corral_buf_init(&b);
    if (yaml)
        corral_val_to_yaml(v, &b);
    else
        corral_val_to_json(v, &b, true);
    fputs(corral_buf_str(&b), stdout);
    if (!yaml)
        fputc('\n', stdout);
    corral_buf_fini(&b);
}

/* JSON/YAML: one object as itself, several as a List. */
static void print_objects(get_t *g, corral_val_t **objs, size_t n, bool single)
{
    bool yaml = strcmp(g->output, "yaml") == 0;
    if (single && n == 1) {
        print_doc(objs[0], yaml);
        return;
    }
    corral_val_t *list = corral_val_new(&g->a, CORRAL_VAL_MAP);
    corral_val_set(&g->a, list, "apiVersion", corral_val_new_str(&g->a, "v1"));
    corral_val_t *items = corral_val_new(&g->a, CORRAL_VAL_SEQ);
    for (size_t i = 0; i < n; i++)
        corral_val_push(&g->a, items, objs[i]);
    corral_val_set(&g->a, list, "items", items);
    corral_val_set(&g->a, list, "kind", corral_val_new_str(&g->a, "List"));
    corral_val_t *meta = corral_val_new(&g->a, CORRAL_VAL_MAP);
    corral_val_set(&g->a, meta, "resourceVersion", corral_val_new_str(&g->a, ""));
    corral_val_set(&g->a, list, "metadata", meta);
    print_doc(list, yaml);
}

/* --- fetching ----------------------------------------------------------------------------------
 */

typedef struct fetched {
    const corral_kind_info_t *info;
    corral_val_t **objs;
    size_t n;
    const char *rv; /* of the list */
} fetched_t;

static void push(get_t *g, fetched_t *f, corral_val_t *o, size_t *cap)
{
    if (f->n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        f->objs = corral_arena_grow(&g->a, f->objs, *cap * sizeof(corral_val_t *),
                                    ncap * sizeof(corral_val_t *));
        *cap = ncap;
    }
    f->objs[f->n++] = o;
}

/* Fetch target t (a collection or one object) into f. */
static void fetch(get_t *g, const target_t *t, fetched_t *f, size_t *cap)
{
    f->info = t->info;
    if (t->name) {
        long code = 0;
        const char *path = corral__cli_path(&g->a, t->info, g->k.ns, t->name, NULL);
        corral_val_t *o = corral__cli_get(&g->k, &g->a, path, &code);
        if (o)
            push(g, f, o, cap);
        else if (code == 404)
            fprintf(stderr, "Error from server (NotFound): %s%s%s \"%s\" not found\n",
                    t->info->plural, t->info->group[0] ? "." : "", t->info->group, t->name);
        if (!o)
            g->failed = 1;
        return;
    }
    corral_val_t *list = corral__cli_get(&g->k, &g->a, list_path(g, t->info, NULL), NULL);
    if (!list) {
        g->failed = 1;
        return;
    }
    f->rv = corral_val_get_str(corral_val_get(list, "metadata"), "resourceVersion");
    const corral_val_t *items = corral_val_get(list, "items");
    for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++)
        push(g, f, items->items[i], cap);
}

static void print_fetched(get_t *g, fetched_t *f, size_t nf)
{
    const char *out = g->output;
    if (out && (!strcmp(out, "json") || !strcmp(out, "yaml"))) {
        size_t total = 0, cap = 0;
        fetched_t all = {NULL, NULL, 0, NULL};
        for (size_t i = 0; i < nf; i++)
            total += f[i].n;
        for (size_t i = 0; i < nf; i++) {
            for (size_t j = 0; j < f[i].n; j++)
                push(g, &all, f[i].objs[j], &cap);
        }
        bool single = g->nt == 1 && g->t[0].name;
        if (total || !single)
            print_objects(g, all.objs, all.n, single);
        return;
    }
    size_t shown = 0;
    for (size_t i = 0; i < nf; i++) {
        if (!f[i].n)
            continue;
        if (out && !strcmp(out, "name")) {
            for (size_t j = 0; j < f[i].n; j++)
                print_name(g, f[i].info, f[i].objs[j]);
        } else {
            if (shown)
                printf("\n");
            print_table(g, f[i].info, f[i].objs, f[i].n);
        }
        shown++;
    }
    bool named = g->nt && g->t[0].name;
    if (!shown && !named && !g->failed) {
        bool cluster = !f[0].info->namespaced;
        if (g->all_ns || cluster)
            fprintf(stderr, "No resources found\n");
        else
            fprintf(stderr, "No resources found in %s namespace.\n", g->k.ns);
    }
}

/* --- watch ---------------------------------------------------------------------------------------
 */

typedef struct watch {
    get_t *g;
    const corral_kind_info_t *info;
    cols_t cols;
    size_t width[40];
    int failed;
} watch_t;

static void watch_widths(watch_t *w, const fetched_t *f)
{
    const char *header[40];
    header_cells(&w->cols, header);
    size_t nc = w->cols.n + (w->cols.ns ? 1 : 0);
    for (size_t j = 0; j < nc; j++)
        w->width[j] = strlen(header[j]);
    const char *cells[40];
    for (size_t i = 0; i < f->n; i++) {
        row_cells(w->g, w->info, &w->cols, f->objs[i], cells);
        for (size_t j = 0; j < nc; j++) {
            size_t l = strlen(cells[j]);
            w->width[j] = l > w->width[j] ? l : w->width[j];
        }
    }
}

static void print_row(const watch_t *w, const char **cells)
{
    size_t nc = w->cols.n + (w->cols.ns ? 1 : 0);
    for (size_t j = 0; j < nc; j++) {
        if (j + 1 < nc)
            printf("%-*s   ", (int)w->width[j], cells[j]);
        else
            printf("%s\n", cells[j]);
    }
}

static int watch_line(void *ctx, const char *text, size_t len)
{
    watch_t *w = ctx;
    get_t *g = w->g;
    corral_val_t *ev = NULL;
    corral_buf_t b = {(char *)text, len, len};
    ev = corral__cli_json(&g->a, &b);
    const char *type = corral_val_get_str(ev, "type");
    corral_val_t *obj = corral_val_get(ev, "object");
    if (!type || !obj)
        return 0;
    if (!strcmp(type, "ERROR")) {
        fprintf(stderr, "Error from server: %s\n",
                corral_val_get_str(obj, "message") ? corral_val_get_str(obj, "message") : "?");
        w->failed = 1;
        return 1;
    }
    if (!strcmp(type, "BOOKMARK"))
        return 0;
    const char *out = g->output;
    if (out && (!strcmp(out, "json") || !strcmp(out, "yaml"))) {
        if (!strcmp(out, "yaml"))
            printf("---\n");
        print_doc(obj, !strcmp(out, "yaml"));
    } else if (out && !strcmp(out, "name")) {
        print_name(g, w->info, obj);
    } else {
        const char *cells[40];
        row_cells(g, w->info, &w->cols, obj, cells);
        print_row(w, cells);
    }
    fflush(stdout);
    return 0;
}

static int run_watch(get_t *g)
{
    if (g->nt != 1) {
        fprintf(stderr, "error: you may only specify a single resource type to watch\n");
        return CORRAL_EXIT_INVALID;
    }
    fetched_t f;
    memset(&f, 0, sizeof(f));
    size_t cap = 0;
    target_t t = g->t[0];
    const char *name = t.name;
    t.name = NULL;
    if (name)
        g->fields = corral_arena_printf(&g->a, "metadata.name=%s", name);
    fetch(g, &t, &f, &cap);
    if (g->failed)
        return CORRAL_EXIT_FAIL;
    watch_t w;
    memset(&w, 0, sizeof(w));
    w.g = g;
    w.info = t.info;
    pick_cols(g, t.info, &w.cols);
    print_fetched(g, &f, 1);
    watch_widths(&w, &f);
    fflush(stdout);
    const char *extra = corral_arena_printf(&g->a, "watch=1&resourceVersion=%s", f.rv ? f.rv : "0");
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_stream(g->k.c, list_path(g, t.info, extra), watch_line, &w, &r);
    if (rc != 0 || r.code != 200) {
        corral__cli_error(&g->k, &r);
        w.failed = 1;
    }
    corral_client_resp_fini(&r);
    return w.failed ? CORRAL_EXIT_FAIL : CORRAL_EXIT_OK;
}

/* --- arguments
 * ------------------------------------------------------------------------------------ */

/* KIND[,KIND] NAME... or KIND/NAME... into g->t. */
static bool parse_targets(get_t *g, char **args, size_t n)
{
    if (n == 0) {
        fprintf(stderr, "You must specify the type of resource to get. Use \"corral get --help\" "
                        "for the kinds.\n");
        return false;
    }
    if (strchr(args[0], '/')) {
        for (size_t i = 0; i < n && g->nt < MAX_TARGETS; i++) {
            char *slash = strchr(args[i], '/');
            if (!slash) {
                fprintf(stderr, "error: there is no need to specify a resource type as a separate "
                                "argument when passing arguments in resource/name form\n");
                return false;
            }
            *slash = '\0';
            g->t[g->nt].info = corral__cli_resource(&g->k, args[i]);
            g->t[g->nt++].name = slash + 1;
            if (!g->t[g->nt - 1].info)
                return false;
        }
    } else {
        char *save = NULL;
        for (char *kind = strtok_r(args[0], ",", &save); kind && g->nt < MAX_TARGETS;
             kind = strtok_r(NULL, ",", &save)) {
            const corral_kind_info_t *info = corral__cli_resource(&g->k, kind);
            if (!info)
                return false;
            for (size_t i = 1; i < n && g->nt < MAX_TARGETS; i++)
                g->t[g->nt++] = (target_t){info, args[i]};
            if (n == 1)
                g->t[g->nt++] = (target_t){info, NULL};
        }
    }
    for (size_t i = 1; i < g->nt; i++)
        g->multi_kind = g->multi_kind || g->t[i].info != g->t[0].info;
    return true;
}

static int parse_get_opts(get_t *g, int argc, char **argv)
{
    static const struct option opts[] = {{"all-namespaces", no_argument, NULL, 'A'},
                                         {"selector", required_argument, NULL, 'l'},
                                         {"field-selector", required_argument, NULL, 'F'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"watch", no_argument, NULL, 'w'},
                                         {"no-headers", no_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         CORRAL__CLI_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "Al:o:whn:s:", opts, NULL)) != -1) {
        if (c == 'A')
            g->all_ns = true;
        else if (c == 'l')
            g->labels = optarg;
        else if (c == 'F')
            g->fields = optarg;
        else if (c == 'o')
            g->output = optarg;
        else if (c == 'w')
            g->watch = true;
        else if (c == 'H')
            g->no_headers = true;
        else if (c == 'h')
            return -1;
        else if (!corral__cli_opt(&g->k, c, optarg))
            return CORRAL_EXIT_INVALID;
    }
    static const char *const formats[] = {"wide", "json", "yaml", "name"};
    bool ok = !g->output;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(formats) && !ok; i++)
        ok = strcmp(g->output, formats[i]) == 0;
    if (!ok) {
        fprintf(stderr,
                "error: unable to match a printer suitable for the output format \"%s\", "
                "the allowed formats are: json,name,wide,yaml\n",
                g->output);
        return CORRAL_EXIT_INVALID;
    }
    return 0;
}

int corral_cmd_get(int argc, char **argv)
{
    get_t *g = corral_calloc(1, sizeof(*g));
    corral__cli_init(&g->k, "corral get");
    corral_arena_init(&g->a);
    int rc = parse_get_opts(g, argc, argv);
    if (rc < 0)
        get_usage(stdout);
    else if (rc)
        get_usage(stderr);
    else if (!parse_targets(g, argv + optind, (size_t)(argc - optind)))
        rc = CORRAL_EXIT_INVALID;
    else if (!corral__cli_connect(&g->k))
        rc = CORRAL_EXIT_FAIL;
    else if (g->watch)
        rc = run_watch(g);
    else {
        fetched_t *f = corral_arena_alloc(&g->a, g->nt * sizeof(*f));
        size_t nf = 0, cap = 0;
        for (size_t i = 0; i < g->nt; i++) {
            if (nf == 0 || f[nf - 1].info != g->t[i].info) {
                nf++;
                cap = 0;
            }
            fetch(g, &g->t[i], &f[nf - 1], &cap);
        }
        print_fetched(g, f, nf);
        rc = g->failed ? CORRAL_EXIT_FAIL : CORRAL_EXIT_OK;
    }
    corral__cli_fini(&g->k);
    corral_arena_fini(&g->a);
    corral_free(g);
    return rc < 0 ? CORRAL_EXIT_OK : rc;
}
