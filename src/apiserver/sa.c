/*
 * ServiceAccounts as kube-apiserver and its controllers keep them: signed
 * tokens (TokenRequest, `kubectl create token`) and their authentication,
 * the "default" ServiceAccount of every namespace, the `kubernetes`
 * Service and its Endpoints in `default`, and SelfSubjectReview
 * (`kubectl auth whoami`).
 *
 * Tokens are JWTs signed HS256 with a 32-byte key the server keeps in
 * DATA_DIR/sa-signing.key (mode 0600, created at first start; see
 * docs/decisions.md). A token names the ServiceAccount's namespace, name
 * and uid (the "kubernetes.io" claim, as upstream) and is accepted until
 * exp while a ServiceAccount of that name and uid exists, as the user
 * system:serviceaccount:NS:NAME in groups system:serviceaccounts,
 * system:serviceaccounts:NS and system:authenticated. Only tokens whose
 * audiences include the server's own are accepted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "corral/base64.h"
#include "apiserver/apiserver_int.h"
#include "corral/json.h"
#include "corral/timefmt.h"

#define AUDIENCE       "https://kubernetes.default.svc.cluster.local"
#define ISSUER         AUDIENCE
#define KEY_FILE       "sa-signing.key"
#define DEFAULT_EXPIRY 3600
#define MIN_EXPIRY     600
#define MAX_EXPIRY     ((int64_t)1 << 32)

/* --- the signing key ----------------------------------------------------------------------- */

static int read_key(const char *path, unsigned char *key, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CORRAL_ENOENT;
    ssize_t n = read(fd, key, CORRAL__SA_KEY_LEN);
    close(fd);
    if (n != CORRAL__SA_KEY_LEN) {
        snprintf(err, errlen, "%s: expected %d bytes of key", path, CORRAL__SA_KEY_LEN);
        return CORRAL_EINVAL;
    }
    return 0;
}

int corral__sa_key_init(corral_apiserver_t *s, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", s->opts.data_dir, KEY_FILE);
    int rc = read_key(path, s->sa_key, err, errlen);
    if (rc != CORRAL_ENOENT)
        return rc;
    unsigned char key[CORRAL__SA_KEY_LEN];
    if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
        snprintf(err, errlen, "cannot read random bytes for the token signing key");
        return CORRAL_EIO;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) /* another process made it first */
        return read_key(path, s->sa_key, err, errlen);
    bool ok = fd >= 0 && write(fd, key, sizeof(key)) == (ssize_t)sizeof(key) && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write the token signing key: %s", path, strerror(errno));
        return CORRAL_EIO;
    }
    memcpy(s->sa_key, key, sizeof(key));
    OPENSSL_cleanse(key, sizeof(key));
    return 0;
}

/* --- base64url and HMAC -------------------------------------------------------------------------
 */

static void b64url(corral_buf_t *b, const unsigned char *p, size_t n)
{
    corral_base64_encode(p, n, CORRAL_B64_URL, b);
}

/* Decode unpadded base64url; false on a bad character or length. */
static bool unb64url(const char *s, size_t n, corral_buf_t *out)
{
    return memchr(s, '=', n) == NULL && corral_base64_decode(s, n, CORRAL_B64_URL, out) == 0;
}

static void sign(const corral_apiserver_t *s, const char *data, size_t n, unsigned char *mac)
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), s->sa_key, CORRAL__SA_KEY_LEN, (const unsigned char *)data, n, mac, &len);
}

static int64_t now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec;
}

/* --- TokenRequest
 * ---------------------------------------------------------------------------------- */

static void quoted(corral_buf_t *b, const char *s)
{
    corral_json_quote(b, s, strlen(s));
}

/* The signed token for ServiceAccount ns/name (uid), expiring at exp. */
static void make_token(const corral_apiserver_t *s, corral_buf_t *tok, const char *ns,
                       const char *name, const char *uid, const corral_val_t *aud, int64_t iat,
                       int64_t exp)
{
    static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    corral_buf_t claims;
    corral_buf_init(&claims);
    corral_buf_puts(&claims, "{\"aud\":");
    corral_val_to_json(aud, &claims, false);
    corral_buf_printf(&claims, ",\"exp\":%lld,\"iat\":%lld,\"nbf\":%lld,\"iss\":\"%s\",\"sub\":",
                      (long long)exp, (long long)iat, (long long)iat, ISSUER);
    char sub[600];
    snprintf(sub, sizeof(sub), "system:serviceaccount:%s:%s", ns, name);
    quoted(&claims, sub);
    corral_buf_puts(&claims, ",\"kubernetes.io\":{\"namespace\":");
    quoted(&claims, ns);
    corral_buf_puts(&claims, ",\"serviceaccount\":{\"name\":");
    quoted(&claims, name);
    corral_buf_puts(&claims, ",\"uid\":");
    quoted(&claims, uid);
    corral_buf_puts(&claims, "}}}");
    b64url(tok, (const unsigned char *)header, sizeof(header) - 1);
    corral_buf_putc(tok, '.');
    b64url(tok, (const unsigned char *)claims.p, claims.len);
    unsigned char mac[32];
    sign(s, tok->p, tok->len, mac);
    corral_buf_putc(tok, '.');
    b64url(tok, mac, sizeof(mac));
    corral_buf_fini(&claims);
}

static void token_invalid(corral__req_t *r, const char *field, const char *msg)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_diag_add(&d, CORRAL_SEV_ERROR, NULL, 0, 0, field, "%s", msg);
    corral__invalid(r, "TokenRequest", r->name, &d);
    corral_diag_fini(&d);
}

/* spec.audiences (default: the server's) as a JSON list tree. */
static corral_val_t *audiences(corral__req_t *r, const corral_val_t *spec)
{
    corral_val_t *aud = corral_val_get(spec, "audiences");
    if (aud && aud->kind == CORRAL_VAL_SEQ && aud->n) {
        for (size_t i = 0; i < aud->n; i++) {
            if (aud->items[i]->kind != CORRAL_VAL_STR)
                return NULL;
        }
        return aud;
    }
    aud = corral_val_new(r->a, CORRAL_VAL_SEQ);
    corral_val_push(r->a, aud, corral_val_new_str(r->a, AUDIENCE));
    return aud;
}

void corral__h_sa_token(corral__req_t *r)
{
    corral_val_t *body = r->body_len ? corral__body_tree(r) : corral_val_new(r->a, CORRAL_VAL_MAP);
    if (!body)
        return;
    corral__cur_t cur;
    if (!corral__read_current(r, &cur))
        return;
    const corral_val_t *spec = corral_val_get(body, "spec");
    const corral_val_t *ev = corral_val_get(spec, "expirationSeconds");
    int64_t secs = ev && ev->kind == CORRAL_VAL_INT ? ev->u.i : DEFAULT_EXPIRY;
    if (secs < MIN_EXPIRY) {
        token_invalid(r, "spec.expirationSeconds",
                      "Invalid value: may not specify a duration less than 10 minutes");
        return;
    }
    if (secs > MAX_EXPIRY) {
        token_invalid(r, "spec.expirationSeconds",
                      "Invalid value: may not specify a duration larger than 2^32 seconds");
        return;
    }
    corral_val_t *aud = audiences(r, spec);
    if (!aud) {
        token_invalid(r, "spec.audiences", "Invalid value: must be a list of strings");
        return;
    }
    const char *uid = corral__meta_str(cur.tree, "uid");
    int64_t iat = now_s(), exp = iat + secs;
    corral_buf_t tok, b;
    corral_buf_init(&tok);
    make_token(r->srv, &tok, r->ns, r->name, uid ? uid : "", aud, iat, exp);
    char when[40];
    corral_time_format(exp * 1000000, false, when, sizeof(when));
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"TokenRequest\",\"apiVersion\":\"authentication.k8s.io/v1\","
                        "\"metadata\":{\"name\":");
    quoted(&b, r->name);
    corral_buf_puts(&b, ",\"namespace\":");
    quoted(&b, r->ns);
    corral_buf_puts(&b, ",\"creationTimestamp\":null},\"spec\":{\"audiences\":");
    corral_val_to_json(aud, &b, false);
    corral_buf_printf(&b, ",\"expirationSeconds\":%lld,\"boundObjectRef\":", (long long)secs);
    const corral_val_t *bound = corral_val_get(spec, "boundObjectRef");
    if (bound)
        corral_val_to_json(bound, &b, false);
    else
        corral_buf_puts(&b, "null");
    corral_buf_puts(&b, "},\"status\":{\"token\":");
    corral_json_quote(&b, tok.p, tok.len);
    corral_buf_puts(&b, ",\"expirationTimestamp\":");
    quoted(&b, when);
    corral_buf_puts(&b, "}}");
    corral_buf_fini(&tok);
    corral__reply_buf(r, 201, &b);
}

/* --- authentication
 * -------------------------------------------------------------------------------- */

bool corral__sa_token_like(const char *tok, size_t len)
{
    const char *d1 = memchr(tok, '.', len);
    const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok)) : NULL;
    return d2 && len > 3 && tok[0] == 'e' && tok[1] == 'y';
}

static bool aud_ok(const corral_val_t *aud)
{
    if (aud && aud->kind == CORRAL_VAL_STR)
        return strcmp(aud->s, AUDIENCE) == 0;
    for (size_t i = 0; aud && aud->kind == CORRAL_VAL_SEQ && i < aud->n; i++) {
        if (aud->items[i]->kind == CORRAL_VAL_STR && strcmp(aud->items[i]->s, AUDIENCE) == 0)
            return true;
    }
    return false;
}

/* The claims of a token this server signed, or NULL. */
static corral_val_t *verified_claims(corral__req_t *r, const char *tok, size_t len)
{
    const char *d1 = memchr(tok, '.', len);
    const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok)) : NULL;
    if (!d2)
        return NULL;
    unsigned char mac[32];
    sign(r->srv, tok, (size_t)(d2 - tok), mac);
    corral_buf_t sig, hdr, claims;
    corral_buf_init(&sig);
    corral_buf_init(&hdr);
    corral_buf_init(&claims);
    corral_val_t *v = NULL, *h = NULL;
    bool ok = unb64url(d2 + 1, len - (size_t)(d2 + 1 - tok), &sig) && sig.len == sizeof(mac) &&
              CRYPTO_memcmp(sig.p, mac, sizeof(mac)) == 0 &&
              unb64url(tok, (size_t)(d1 - tok), &hdr) &&
              unb64url(d1 + 1, (size_t)(d2 - d1 - 1), &claims) &&
              corral_json_parse(r->a, hdr.p ? hdr.p : "", hdr.len, &h, NULL) == 0 &&
              corral_val_get_str(h, "alg") && strcmp(corral_val_get_str(h, "alg"), "HS256") == 0 &&
              corral_json_parse(r->a, claims.p ? claims.p : "", claims.len, &v, NULL) == 0 && v &&
              v->kind == CORRAL_VAL_MAP;
    corral_buf_fini(&sig);
    corral_buf_fini(&hdr);
    corral_buf_fini(&claims);
    return ok ? v : NULL;
}

const corral_user_t *corral__sa_authenticate(corral__req_t *r, const char *tok, size_t len)
{
    corral_val_t *c = verified_claims(r, tok, len);
    if (!c)
        return NULL;
    const corral_val_t *exp = corral_val_get(c, "exp"), *nbf = corral_val_get(c, "nbf");
    int64_t now = now_s();
    if (!exp || exp->kind != CORRAL_VAL_INT || exp->u.i <= now ||
        (nbf && nbf->kind == CORRAL_VAL_INT && nbf->u.i > now + 60) ||
        !aud_ok(corral_val_get(c, "aud")))
        return NULL;
    const corral_val_t *k = corral_val_get(c, "kubernetes.io");
    const char *ns = corral_val_get_str(k, "namespace");
    const corral_val_t *sa = corral_val_get(k, "serviceaccount");
    const char *name = corral_val_get_str(sa, "name"), *uid = corral_val_get_str(sa, "uid");
    if (!ns || !name || !uid)
        return NULL;
    corral_store_row_t row;
    const corral__res_t *res = corral__res_of_kind(CORRAL_KIND_SERVICEACCOUNT);
    if (corral_store_get(corral__rd(r), res->key, ns, name, r->a, &row) != 0)
        return NULL;
    corral_val_t *cur = corral__json_tree(r->a, row.json, row.json_len);
    const char *cur_uid = cur ? corral__meta_str(cur, "uid") : NULL;
    if (!cur_uid || strcmp(cur_uid, uid) != 0)
        return NULL;
    return corral__sa_user(r->a, ns, name, uid, NULL, 0);
}

const corral_user_t *corral__sa_user(corral_arena_t *a, const char *ns, const char *name,
                                     const char *uid, const char **extra, size_t nextra)
{
    corral_user_t *u = corral_arena_alloc(a, sizeof(*u));
    u->name = corral_arena_printf(a, "system:serviceaccount:%s:%s", ns, name);
    u->uid = uid ? uid : "";
    const char **g = corral_arena_alloc(a, (3 + nextra) * sizeof(*g));
    size_t n = 0;
    for (size_t i = 0; i < nextra; i++)
        g[n++] = extra[i];
    g[n++] = "system:serviceaccounts";
    g[n++] = corral_arena_printf(a, "system:serviceaccounts:%s", ns);
    g[n++] = CORRAL_GROUP_AUTHENTICATED;
    u->groups = g;
    u->ngroups = n;
    return u;
}

/* --- SelfSubjectReview
 * ------------------------------------------------------------------------------ */

void corral__h_ssr(corral__req_t *r)
{
    if (r->body_len && !corral__body_tree(r))
        return;
    const corral_user_t *u = r->ident;
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b,
                    "{\"kind\":\"SelfSubjectReview\",\"apiVersion\":\"authentication.k8s.io/v1\","
                    "\"metadata\":{\"creationTimestamp\":null},\"status\":{\"userInfo\":{"
                    "\"username\":");
    quoted(&b, u ? u->name : CORRAL_USER_ANONYMOUS);
    if (u && u->uid && *u->uid) {
        corral_buf_puts(&b, ",\"uid\":");
        quoted(&b, u->uid);
    }
    corral_buf_puts(&b, ",\"groups\":[");
    if (!u)
        quoted(&b, CORRAL_GROUP_UNAUTHENTICATED);
    for (size_t i = 0; u && i < u->ngroups; i++) {
        if (i)
            corral_buf_putc(&b, ',');
        quoted(&b, u->groups[i]);
    }
    corral_buf_putc(&b, ']');
    if (r->ident_extra && r->ident_extra->n) {
        corral_buf_puts(&b, ",\"extra\":");
        corral_val_to_json(r->ident_extra, &b, false);
    }
    corral_buf_puts(&b, "}}}");
    corral__reply_buf(r, 201, &b);
}

/* --- default ServiceAccounts and the kubernetes Service
 * ------------------------------------------- */

/* The "default" ServiceAccount of namespace ns, as JSON. */
static char *default_sa_json(corral_arena_t *a, const char *ns)
{
    return corral_arena_printf(a,
                               "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":"
                               "{\"name\":\"default\",\"namespace\":\"%s\"}}",
                               ns);
}

typedef struct ns_list {
    corral_arena_t *a;
    const char **names;
    size_t n, cap;
} ns_list_t;

static int ns_cb(void *ctx, const corral_store_row_t *row)
{
    ns_list_t *l = ctx;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 16;
        l->names =
            corral_arena_grow(l->a, l->names, l->cap * sizeof(*l->names), ncap * sizeof(*l->names));
        l->cap = ncap;
    }
    l->names[l->n++] = corral_arena_strdup(l->a, row->name);
    return 0;
}

/* The address clients reach the server at: the listen host when it is an
 * IP address other than "any", else 127.0.0.1. */
static const char *endpoint_ip(const corral_apiserver_t *s)
{
    unsigned char buf[16];
    const char *h = s->listen_host;
    if ((inet_pton(AF_INET, h, buf) == 1 && strcmp(h, "0.0.0.0") != 0) ||
        (inet_pton(AF_INET6, h, buf) == 1 && strcmp(h, "::") != 0))
        return h;
    return "127.0.0.1";
}

int corral__bootstrap_services(corral_apiserver_t *s, char *err, size_t errlen)
{
    corral_store_reader_t *rd = NULL;
    if (corral_store_reader_open(s->store, &rd) != 0) {
        snprintf(err, errlen, "cannot open a store reader");
        return CORRAL_EIO;
    }
    corral_arena_t a;
    corral_arena_init(&a);
    ns_list_t l = {&a, NULL, 0, 0};
    int64_t rev;
    int rc = corral_store_list(rd, "namespaces", NULL, NULL, NULL, ns_cb, &l, &rev);
    for (size_t i = 0; i < l.n && rc == 0; i++)
        rc = corral__create_sync(s, rd, default_sa_json(&a, l.names[i]), err, errlen);
    if (rc == 0)
        rc = corral__create_sync(
            s, rd,
            corral_arena_printf(
                &a,
                "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"kubernetes\","
                "\"namespace\":\"default\",\"labels\":{\"component\":\"apiserver\",\"provider\":"
                "\"kubernetes\"}},\"spec\":{\"clusterIP\":\"10.96.0.1\",\"ports\":[{\"name\":"
                "\"https\",\"port\":443,\"protocol\":\"TCP\",\"targetPort\":%d}]}}",
                s->port),
            err, errlen);
    if (rc == 0)
        rc = corral__put_sync(
            s, rd,
            corral_arena_printf(
                &a,
                "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":"
                "\"kubernetes\",\"namespace\":\"default\",\"labels\":{\"endpointslice.kubernetes."
                "io/skip-mirror\":\"true\"}},\"subsets\":[{\"addresses\":[{\"ip\":\"%s\"}],"
                "\"ports\":[{\"name\":\"https\",\"port\":%d,\"protocol\":\"TCP\"}]}]}",
                endpoint_ip(s), s->port),
            err, errlen);
    corral_arena_fini(&a);
    corral_store_reader_close(rd);
    return rc;
}

/* --- the default ServiceAccount of a new namespace ----------------------------------------------
 */

static void ns_sa_done(corral__req_t *r, corral_store_op_t *op)
{
    corral_store_event_t *ns_ev = r->hctx;
    r->hctx = NULL;
    r->cleanup = NULL;
    corral_store_op_release(op); /* the namespace exists whatever became of its account */
    corral__reply_obj(r, 201, ns_ev->json, ns_ev->json_len);
    corral_store_event_unref(ns_ev);
}

static void ns_sa_cleanup(corral__req_t *r)
{
    corral_store_event_unref(r->hctx);
    r->hctx = NULL;
}

void corral__create_default_sa(corral__req_t *r, const char *ns, corral_store_event_t *ns_ev)
{
    corral_store_op_t *op = corral__create_op(r->a, corral__res_of_kind(CORRAL_KIND_SERVICEACCOUNT),
                                              default_sa_json(r->a, ns));
    if (!op) {
        corral__reply_obj(r, 201, ns_ev->json, ns_ev->json_len);
        corral_store_event_unref(ns_ev);
        return;
    }
    r->hctx = ns_ev;
    r->cleanup = ns_sa_cleanup;
    r->cont = ns_sa_done;
    corral__submit(r, op);
}
