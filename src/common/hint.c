/*
 * Typo hints. The distance is the optimal-string-alignment variant of
 * Damerau-Levenshtein, which counts a swap of two adjacent letters ("mniMember")
 * as one edit, the most common typing error.
 */
#include <ctype.h>
#include <string.h>

#include "corral/common.h"
#include "corral/hint.h"

#define HINT_MAX_LEN 64

size_t corral_hint_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > HINT_MAX_LEN || m > HINT_MAX_LEN)
        return (size_t)-1;
    size_t d[HINT_MAX_LEN + 1][HINT_MAX_LEN + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

/* Lowercase with '_' and '-' removed: "min_member" and "MinMember" agree. */
static void hint_fold(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (; *s && o + 1 < cap; s++) {
        if (*s == '_' || *s == '-')
            continue;
        out[o++] = (char)tolower((unsigned char)*s);
    }
    out[o] = '\0';
}

const char *corral_hint_closest(const char *word, const char *const *cands, size_t n)
{
    char fw[HINT_MAX_LEN + 1] = "", fc[HINT_MAX_LEN + 1] = "";
    size_t wl = strlen(word);
    if (wl == 0 || wl > HINT_MAX_LEN)
        return NULL;
    hint_fold(word, fw, sizeof(fw));
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    size_t limit = wl <= 3 ? 1 : wl <= 7 ? 2 : 3;
    for (size_t i = 0; i < n; i++) {
        hint_fold(cands[i], fc, sizeof(fc));
        if (strcmp(fw, fc) == 0)
            return cands[i];
        size_t d = corral_hint_distance(fw, fc);
        if (d <= limit && d < best_d) {
            best = cands[i];
            best_d = d;
        }
    }
    return best;
}

bool corral_hint_colon_nospace(const char *s, size_t len, size_t *key_len)
{
    size_t i = 0;
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    while (i < len && (isalnum((unsigned char)s[i]) || strchr("_.-/", s[i])))
        i++;
    if (i >= len || s[i] != ':' || i + 1 >= len)
        return false;
    char next = s[i + 1];
    /* "http://x" and "a::b" are not typos; "8080:80" never starts a key. */
    if (next == '/' || next == ':' || isspace((unsigned char)next))
        return false;
    *key_len = i;
    return true;
}
