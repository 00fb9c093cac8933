/*
 * The PKI of `corral up` (include/corral/up.h), on OpenSSL 3's EVP and X509
 * APIs: a CA (EC P-256, self-signed, ten years) made on first start and
 * never replaced, since every kubeconfig handed out trusts it; and the API
 * server's serving certificate, signed by the CA for 127.0.0.1, ::1,
 * localhost and the listen host. The serving certificate is cheap to remake,
 * so it is reissued whenever it no longer fits: missing, unreadable, not
 * matching its key, not signed by the CA, not naming the listen host, or
 * expiring within renew_days. Files are written whole to a temporary name
 * and renamed, keys mode 0600, so a crash never leaves half a key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "corral/common.h"
#include "up/up_int.h"

#define MAX_SANS 6

/* One subjectAltName entry the serving certificate must carry. */
typedef struct san {
    bool ip;
    char name[256];
} san_t;

static int ssl_fail(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char detail[256] = "";
    if (e)
        ERR_error_string_n(e, detail, sizeof(detail));
    ERR_clear_error();
    snprintf(err, errlen, "%s%s%s", what, *detail ? ": " : "", detail);
    return CORRAL_EIO;
}

/* The SANs for host: the loopback names, then host (an IP or a name), and
 * for a wildcard address the machine's hostname. */
static size_t wanted_sans(const char *host, san_t *out)
{
    size_t n = 0;
    out[n].ip = true;
    snprintf(out[n++].name, sizeof(out[0].name), "127.0.0.1");
    out[n].ip = true;
    snprintf(out[n++].name, sizeof(out[0].name), "::1");
    out[n].ip = false;
    snprintf(out[n++].name, sizeof(out[0].name), "localhost");
    if (!host || !*host)
        return n;
    unsigned char buf[16];
    bool v4 = inet_pton(AF_INET, host, buf) == 1, v6 = inet_pton(AF_INET6, host, buf) == 1;
    bool any = !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
    bool dup = false;
    for (size_t i = 0; i < n; i++)
        dup |= strcmp(out[i].name, host) == 0;
    if (!dup && !any) {
        out[n].ip = v4 || v6;
        snprintf(out[n++].name, sizeof(out[0].name), "%s", host);
    }
    char hn[256] = "";
    if (any && gethostname(hn, sizeof(hn) - 1) == 0 && *hn && strcmp(hn, "localhost") != 0) {
        out[n].ip = false;
        snprintf(out[n++].name, sizeof(out[0].name), "%s", hn);
    }
    return n;
}

/* --- files ---------------------------------------------------------------------------- */

int corral__up_write_file(const char *path, const void *data, size_t len, int mode, char *err,
                          size_t errlen)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return CORRAL_EIO;
    }
    const char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, p + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    /* fchmod too: the umask may have taken bits from a mode we want exact. */
    bool ok = done == len && fchmod(fd, (mode_t)mode) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return CORRAL_EIO;
    }
    return 0;
}

static X509 *load_cert(const char *path)
{
    BIO *b = BIO_new_file(path, "r");
    X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    ERR_clear_error();
    return x;
}

static EVP_PKEY *load_key(const char *path)
{
    BIO *b = BIO_new_file(path, "r");
    EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    ERR_clear_error();
    return k;
}

/* Write x and key as PEM files dir/name.crt and dir/name.key (0600). */
static int save_pair(const char *dir, const char *name, X509 *x, EVP_PKEY *key, char *err,
                     size_t errlen)
{
    char path[4096];
    BIO *kb = BIO_new(BIO_s_mem()), *cb = BIO_new(BIO_s_mem());
    int rc = 0;
    if (!kb || !cb || PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL) != 1 ||
        PEM_write_bio_X509(cb, x) != 1) {
        rc = ssl_fail(err, errlen, "cannot encode PEM");
    } else {
        char *data = NULL;
        long n = BIO_get_mem_data(kb, &data);
        snprintf(path, sizeof(path), "%s/%s.key", dir, name);
        rc = corral__up_write_file(path, data, (size_t)n, 0600, err, errlen);
        if (rc == 0) {
            n = BIO_get_mem_data(cb, &data);
            snprintf(path, sizeof(path), "%s/%s.crt", dir, name);
            rc = corral__up_write_file(path, data, (size_t)n, 0644, err, errlen);
        }
    }
    BIO_free(kb);
    BIO_free(cb);
    return rc;
}

/* --- issuing ---------------------------------------------------------------------------- */

static bool add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return false;
    bool ok = X509_add_ext(x, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

/* A certificate for key named cn, valid days from an hour ago (clock skew),
 * with a random 127-bit serial; issuer NULL: self-signed. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, int days, X509 *issuer)
{
    X509 *x = X509_new();
    BIGNUM *bn = BN_new();
    bool ok = x && bn && X509_set_version(x, X509_VERSION_3) == 1 &&
              BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
              BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL &&
              X509_gmtime_adj(X509_getm_notBefore(x), -3600) != NULL &&
              X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) != NULL &&
              X509_set_pubkey(x, key) == 1;
    BN_free(bn);
    X509_NAME *name = X509_get_subject_name(x);
    ok = ok && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"corral",
                                          -1, -1, 0) == 1;
    ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
                                          -1, 0) == 1;
    ok = ok && X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) == 1;
    ok = ok && add_ext(x, issuer ? issuer : x, NID_subject_key_identifier, "hash");
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static int make_ca(const corral_pki_opts_t *o, X509 **ca, EVP_PKEY **cakey, char *err,
                   size_t errlen)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    if (!key)
        return ssl_fail(err, errlen, "cannot make the CA key");
    X509 *x = new_cert(key, "corral-ca", o->ca_days > 0 ? o->ca_days : 3650, NULL);
    bool ok = x && add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") &&
              add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") &&
              X509_sign(x, key, EVP_sha256()) > 0;
    int rc = ok ? save_pair(o->dir, "ca", x, key, err, errlen)
                : ssl_fail(err, errlen, "cannot make the CA certificate");
    if (rc != 0) {
        X509_free(x);
        EVP_PKEY_free(key);
        return rc;
    }
    *ca = x;
    *cakey = key;
    return 0;
}

static int issue_serving(const corral_pki_opts_t *o, X509 *ca, EVP_PKEY *cakey, char *err,
                         size_t errlen)
{
    san_t sans[MAX_SANS];
    size_t n = wanted_sans(o->host, sans);
    char list[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof(list); i++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s:%s", i ? "," : "",
                                 sans[i].ip ? "IP" : "DNS", sans[i].name);
    EVP_PKEY *key = EVP_EC_gen("P-256");
    if (!key)
        return ssl_fail(err, errlen, "cannot make the serving key");
    X509 *x = new_cert(key, "corral-apiserver", o->cert_days > 0 ? o->cert_days : 365, ca);
    bool ok = x && add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") &&
              add_ext(x, ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
              add_ext(x, ca, NID_ext_key_usage, "serverAuth") &&
              add_ext(x, ca, NID_authority_key_identifier, "keyid:always") &&
              add_ext(x, ca, NID_subject_alt_name, list) && X509_sign(x, cakey, EVP_sha256()) > 0;
    int rc = ok ? save_pair(o->dir, "apiserver", x, key, err, errlen)
                : ssl_fail(err, errlen, "cannot make the serving certificate");
    X509_free(x);
    EVP_PKEY_free(key);
    return rc;
}

/* Why the serving certificate in dir must be reissued, or NULL when it
 * still fits. */
static const char *serving_unfit(const corral_pki_opts_t *o, X509 *ca, char *why, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/apiserver.crt", o->dir);
    X509 *x = load_cert(path);
    snprintf(path, sizeof(path), "%s/apiserver.key", o->dir);
    EVP_PKEY *key = load_key(path);
    const char *res = NULL;
    if (!x || !key) {
        res = "none yet";
    } else if (X509_check_private_key(x, key) != 1) {
        res = "its key does not match";
    } else if (X509_verify(x, X509_get0_pubkey(ca)) != 1) {
        res = "not signed by the CA";
    } else {
        int days = o->renew_days > 0 ? o->renew_days : 30;
        time_t t = time(NULL) + (time_t)days * 86400;
        if (X509_cmp_time(X509_get0_notAfter(x), &t) < 0) {
            snprintf(why, len, "expires within %d days", days);
            res = why;
        }
        san_t sans[MAX_SANS];
        size_t n = wanted_sans(o->host, sans);
        for (size_t i = 0; i < n && !res; i++) {
            int ok = sans[i].ip ? X509_check_ip_asc(x, sans[i].name, 0)
                                : X509_check_host(x, sans[i].name, 0, 0, NULL);
            if (ok != 1) {
                snprintf(why, len, "does not name %s", sans[i].name);
                res = why;
            }
        }
    }
    ERR_clear_error();
    X509_free(x);
    EVP_PKEY_free(key);
    return res;
}

int corral_pki_ensure(const corral_pki_opts_t *o, corral_pki_status_t *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    if (mkdir(o->dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", o->dir, strerror(errno));
        return CORRAL_EIO;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/ca.crt", o->dir);
    X509 *ca = load_cert(path);
    bool had_ca = ca != NULL || access(path, F_OK) == 0;
    snprintf(path, sizeof(path), "%s/ca.key", o->dir);
    EVP_PKEY *cakey = load_key(path);
    had_ca = had_ca || cakey != NULL || access(path, F_OK) == 0;
    int rc = 0;
    if (had_ca && (!ca || !cakey || X509_check_private_key(ca, cakey) != 1)) {
        /* Never replace a CA: clients trust it. A person decides. */
        snprintf(err, errlen,
                 "%s/ca.crt or ca.key is missing, unreadable or mismatched; restore them, or "
                 "remove both to make a new CA (every kubeconfig is then rewritten)",
                 o->dir);
        rc = CORRAL_EINVAL;
    } else if (!had_ca) {
        rc = make_ca(o, &ca, &cakey, err, errlen);
        st->ca_created = rc == 0;
    }
    if (rc == 0) {
        const char *why = serving_unfit(o, ca, st->why, sizeof(st->why));
        if (why) {
            if (why != st->why)
                snprintf(st->why, sizeof(st->why), "%s", why);
            rc = issue_serving(o, ca, cakey, err, errlen);
            st->cert_issued = rc == 0;
        }
    }
    X509_free(ca);
    EVP_PKEY_free(cakey);
    return rc;
}
