/*
 * The web dashboard at /ui (docs/observability.md): a few static files
 * (src/apiserver/ui/) assembled into the binary (.incbin, as src/up/rbac.c
 * does for the RBAC manifests; the Makefile makes this object depend on
 * them) and served as they are. The page holds no data: its script reads
 * the cluster through the ordinary API with the user's bearer token, which
 * never reaches these routes (it travels in the URL fragment). So the files
 * are served to whoever RBAC lets GET /ui (system:public-info-viewer, like
 * /healthz), each with an ETag (revalidated: the server's Cache-Control is
 * no-cache) and a Content-Security-Policy that allows only this origin's
 * script, style and API calls.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/embed.h"

CORRAL_EMBED(ui_index_html, "src/apiserver/ui/index.html");
CORRAL_EMBED(ui_app_js, "src/apiserver/ui/app.js");
CORRAL_EMBED(ui_style_css, "src/apiserver/ui/style.css");
CORRAL_EMBED(ui_favicon_svg, "src/apiserver/ui/favicon.svg");

typedef struct ui_file {
    const char *name;
    const char *ctype;
    const char *start, *end;
} ui_file_t;

static const ui_file_t files[] = {
    {"index.html", "text/html; charset=utf-8", ui_index_html_start, ui_index_html_end},
    {"app.js", "text/javascript; charset=utf-8", ui_app_js_start, ui_app_js_end},
    {"style.css", "text/css; charset=utf-8", ui_style_css_start, ui_style_css_end},
    {"favicon.svg", "image/svg+xml", ui_favicon_svg_start, ui_favicon_svg_end},
};

#define NFILES (sizeof(files) / sizeof(files[0]))

/* Strong ETags: FNV-1a of each file, computed once. */
static char etags[NFILES][20];
static pthread_once_t etags_once = PTHREAD_ONCE_INIT;

static void etags_init(void)
{
    for (size_t i = 0; i < NFILES; i++) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *p = files[i].start; p < files[i].end; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
        snprintf(etags[i], sizeof(etags[i]), "\"%016llx\"", (unsigned long long)h);
    }
}

/* Only this origin's script, style, images and API calls; no framing, no
 * plugins, no inline script (the page has none). */
#define UI_CSP                                                                                     \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "                    \
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

void corral__h_ui(corral__req_t *r)
{
    const char *want = r->name ? r->name : "index.html";
    const ui_file_t *f = NULL;
    size_t i = 0;
    for (; i < NFILES && !f; i++)
        if (strcmp(files[i].name, want) == 0)
            f = &files[i];
    if (!f) {
        corral__status(r, 404, "NotFound", NULL, NULL, "the dashboard has no file \"%s\"", want);
        return;
    }
    i--;
    pthread_once(&etags_once, etags_init);
    corral_buf_printf(&r->headers,
                      "ETag: %s\r\nContent-Security-Policy: " UI_CSP "\r\n"
                      "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
                      "X-Frame-Options: DENY\r\n",
                      etags[i]);
    size_t inm_len = 0;
    const char *inm = corral_http_header(r->http, "if-none-match", &inm_len);
    if (inm && memmem(inm, inm_len, etags[i], strlen(etags[i]))) {
        corral__reply(r, 304, NULL, NULL, 0);
        return;
    }
    corral__reply(r, 200, f->ctype, f->start, (size_t)(f->end - f->start));
}
