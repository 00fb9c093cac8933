/*
 * Credentials of `corral up` (include/corral/up.h): one bearer token per
 * component in kube-apiserver's static token file, which `corral apiserver
 * --token-auth-file` reads, and the kubeconfigs that hand those tokens and
 * the CA to kubectl and to the components. Tokens are kept across starts
 * (a component restarted by hand keeps working); kubeconfigs are rewritten
 * on every start, since the address may have changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "corral/csv.h"
#include "corral/buf.h"
#include "corral/common.h"
#include "corral/io.h"
#include "up/up_int.h"

#define TOKEN_FILE_MAX ((size_t)16 << 20)
#define CSV_LINE_MAX   (64 << 10) /* as the API server reads the file */

static int random_token(char out[65], char *err, size_t errlen)
{
    unsigned char b[32];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            snprintf(err, errlen, "getrandom: %s", strerror(errno));
            return CORRAL_EIO;
        }
        got += (size_t)k;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof(b); i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[64] = '\0';
    return 0;
}

/* Pick up the tokens of the users ids name from the token file's records
 * (read as the API server reads them). */
static void find_tokens(const char *text, size_t len, corral_up_ident_t *ids, size_t n)
{
    corral_csv_field_t fields[8];
    char *scratch = corral_malloc(CSV_LINE_MAX);
    corral_csv_t c;
    corral_csv_init(&c, fields, CORRAL_ARRAY_LEN(fields), scratch, CSV_LINE_MAX);
    c.trim_leading_space = true;
    corral_csv_feed(&c, text ? text : "", len, true);
    corral_csv_record_t rec;
    int got;
    while ((got = corral_csv_next(&c, &rec)) != 0) {
        if (got < 0 || rec.n < 2)
            continue; /* the API server reports bad lines; keep them as they are */
        const corral_csv_field_t *tok = &rec.fields[0], *user = &rec.fields[1];
        for (size_t i = 0; i < n; i++) {
            if (!ids[i].token[0] && strlen(ids[i].user) == user->len &&
                memcmp(ids[i].user, user->p, user->len) == 0 && tok->len > 0 &&
                tok->len < sizeof(ids[i].token)) {
                memcpy(ids[i].token, tok->p, tok->len);
                ids[i].token[tok->len] = '\0';
            }
        }
    }
    corral_free(scratch);
}

int corral_up_tokens_ensure(const char *path, corral_up_ident_t *ids, size_t n, char *err,
                            size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    corral_diag_t diag;
    corral_diag_init(&diag);
    int rc = corral_file_read(path, TOKEN_FILE_MAX, &diag, &text, &len);
    corral_diag_fini(&diag);
    if (rc == CORRAL_ENOENT) {
        rc = 0;
        text = NULL;
        len = 0;
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, corral_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        ids[i].token[0] = '\0';
    /* Keep every line; pick up the tokens of the users we know. */
    find_tokens(text, len, ids, n);
    corral_buf_t out;
    corral_buf_init(&out);
    corral_buf_append(&out, text ? text : "", len);
    if (text && len && text[len - 1] != '\n')
        corral_buf_putc(&out, '\n');
    bool added = false;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (ids[i].token[0])
            continue;
        rc = random_token(ids[i].token, err, errlen);
        /* The uid is the user name: stable across token changes. */
        corral_buf_printf(&out, "%s,%s,%s,\"%s\"\n", ids[i].token, ids[i].user, ids[i].user,
                          ids[i].groups ? ids[i].groups : "");
        added = true;
    }
    if (rc == 0 && (added || !text))
        rc = corral__up_write_file(path, corral_buf_str(&out), out.len, 0600, err, errlen);
    corral_buf_fini(&out);
    corral_free(text);
    return rc;
}

int corral_up_kubeconfig_write(const char *path, const char *server, const char *ca_pem,
                               const char *user, const char *token, char *err, size_t errlen)
{
    size_t calen = strlen(ca_pem);
    char *b64 = corral_malloc(4 * ((calen + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)ca_pem, (int)calen);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b,
                      "# Written by corral up; rewritten on every start.\n"
                      "apiVersion: v1\n"
                      "kind: Config\n"
                      "clusters:\n"
                      "- name: corral\n"
                      "  cluster:\n"
                      "    server: %s\n"
                      "    certificate-authority-data: %s\n"
                      "users:\n"
                      "- name: %s\n",
                      server, b64, user);
    if (token)
        corral_buf_printf(&b, "  user:\n    token: %s\n", token);
    else
        corral_buf_puts(&b, "  user: {}\n");
    corral_buf_printf(&b,
                      "contexts:\n"
                      "- name: corral\n"
                      "  context:\n"
                      "    cluster: corral\n"
                      "    user: %s\n"
                      "    namespace: default\n"
                      "current-context: corral\n",
                      user);
    int rc = corral__up_write_file(path, corral_buf_str(&b), b.len, 0600, err, errlen);
    corral_buf_fini(&b);
    corral_free(b64);
    return rc;
}
