/*
 * Emitters for the value tree: JSON (RFC 8259) and block-style YAML in the
 * shape kubectl prints (sequences of maps as "- key: v" at the parent's indent).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "corral/val.h"

void corral_json_quote(corral_buf_t *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    corral_buf_putc(out, '"');
    size_t run = 0; /* bytes copied verbatim in one append */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else if (c < 0x20 || c == 0x7f) {
            u[0] = '\\', u[1] = 'u', u[2] = '0', u[3] = '0';
            u[4] = hex[c >> 4], u[5] = hex[c & 15], u[6] = '\0';
            esc = u;
        }
        if (esc) {
            corral_buf_append(out, s + i - run, run);
            run = 0;
            corral_buf_puts(out, esc);
        } else {
            run++;
        }
    }
    corral_buf_append(out, s + len - run, run);
    corral_buf_putc(out, '"');
}

/* True when text is a number JSON accepts as written. */
static bool json_number_ok(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && s[i] == '-')
        i++;
    if (i >= len || !isdigit((unsigned char)s[i]))
        return false;
    if (s[i] == '0' && i + 1 < len && isdigit((unsigned char)s[i + 1]))
        return false;
    while (i < len && isdigit((unsigned char)s[i]))
        i++;
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || !isdigit((unsigned char)s[i]))
            return false;
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= len || !isdigit((unsigned char)s[i]))
            return false;
        while (i < len && isdigit((unsigned char)s[i]))
            i++;
    }
    return i == len;
}

static void json_indent(corral_buf_t *out, int depth)
{
    corral_buf_putc(out, '\n');
    for (int i = 0; i < depth * 4; i++)
        corral_buf_putc(out, ' ');
}

static void json_emit(const corral_val_t *v, corral_buf_t *out, bool pretty, int depth)
{
    if (!v) {
        corral_buf_puts(out, "null");
        return;
    }
    switch (v->kind) {
    case CORRAL_VAL_NULL:
        corral_buf_puts(out, "null");
        break;
    case CORRAL_VAL_BOOL:
        corral_buf_puts(out, v->u.b ? "true" : "false");
        break;
    case CORRAL_VAL_INT:
        corral_buf_printf(out, "%lld", (long long)v->u.i);
        break;
    case CORRAL_VAL_FLOAT:
        if (v->s && json_number_ok(v->s, v->len))
            corral_buf_append(out, v->s, v->len);
        else if (isfinite(v->u.f))
            corral_buf_printf(out, "%.17g", v->u.f);
        else
            corral_buf_puts(out, "null");
        break;
    case CORRAL_VAL_STR:
        corral_json_quote(out, v->s, v->len);
        break;
    case CORRAL_VAL_SEQ:
        corral_buf_putc(out, '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                corral_buf_putc(out, ',');
            if (pretty)
                json_indent(out, depth + 1);
            json_emit(v->items[i], out, pretty, depth + 1);
        }
        if (pretty && v->n)
            json_indent(out, depth);
        corral_buf_putc(out, ']');
        break;
    case CORRAL_VAL_MAP:
        corral_buf_putc(out, '{');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                corral_buf_putc(out, ',');
            if (pretty)
                json_indent(out, depth + 1);
            corral_json_quote(out, v->pairs[i].key->s, v->pairs[i].key->len);
            corral_buf_puts(out, pretty ? ": " : ":");
            json_emit(v->pairs[i].val, out, pretty, depth + 1);
        }
        if (pretty && v->n)
            json_indent(out, depth);
        corral_buf_putc(out, '}');
        break;
    }
}

void corral_val_to_json(const corral_val_t *v, corral_buf_t *out, bool pretty)
{
    json_emit(v, out, pretty, 0);
}

/* --- YAML ---------------------------------------------------------------- */

static bool yaml_plain_reserved(const char *s, size_t len)
{
    static const char *const words[] = {"null", "Null",  "NULL",  "~",     "true",  "True",
                                        "TRUE", "false", "False", "FALSE", "yes",   "no",
                                        "on",   "off",   "y",     "n",     "Yes",   "No",
                                        "On",   "Off",   ".inf",  ".nan",  "-.inf", ".Inf"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(words); i++) {
        if (strlen(words[i]) == len && memcmp(words[i], s, len) == 0)
            return true;
    }
    /* Anything number-like would be read back as a number. */
    size_t i = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    if (i < len && (isdigit((unsigned char)s[i]) || s[i] == '.'))
        return true;
    return false;
}

/* Can s be written as a plain scalar and read back as the same string? */
static bool yaml_plain_ok(const char *s, size_t len)
{
    if (len == 0 || yaml_plain_reserved(s, len))
        return false;
    if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]) || s[0] == ' ' || s[len - 1] == ' ')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return false;
        if (c == ':' && (i + 1 == len || s[i + 1] == ' '))
            return false;
        if (c == '#' && i > 0 && s[i - 1] == ' ')
            return false;
    }
    return true;
}

static void yaml_scalar_str(corral_buf_t *out, const char *s, size_t len)
{
    if (yaml_plain_ok(s, len)) {
        corral_buf_append(out, s, len);
        return;
    }
    bool single_ok = true;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            single_ok = false;
    }
    if (!single_ok) {
        corral_json_quote(out, s, len); /* JSON escapes are valid YAML double-quoted */
        return;
    }
    corral_buf_putc(out, '\'');
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\'')
            corral_buf_putc(out, '\'');
        corral_buf_putc(out, s[i]);
    }
    corral_buf_putc(out, '\'');
}

static void yaml_pad(corral_buf_t *out, int n)
{
    for (int i = 0; i < n; i++)
        corral_buf_putc(out, ' ');
}

static bool yaml_is_block(const corral_val_t *v)
{
    return v && ((v->kind == CORRAL_VAL_MAP || v->kind == CORRAL_VAL_SEQ) && v->n > 0);
}

static void yaml_emit(const corral_val_t *v, corral_buf_t *out, int indent, bool inline_first);

static void yaml_scalar(const corral_val_t *v, corral_buf_t *out)
{
    if (!v) {
        corral_buf_puts(out, "null");
        return;
    }
    switch (v->kind) {
    case CORRAL_VAL_NULL:
        corral_buf_puts(out, "null");
        break;
    case CORRAL_VAL_BOOL:
        corral_buf_puts(out, v->u.b ? "true" : "false");
        break;
    case CORRAL_VAL_INT:
        corral_buf_printf(out, "%lld", (long long)v->u.i);
        break;
    case CORRAL_VAL_FLOAT:
        if (v->s && json_number_ok(v->s, v->len))
            corral_buf_append(out, v->s, v->len);
        else
            corral_buf_printf(out, "%.17g", v->u.f);
        break;
    case CORRAL_VAL_STR:
        yaml_scalar_str(out, v->s, v->len);
        break;
    case CORRAL_VAL_SEQ:
        corral_buf_puts(out, "[]");
        break;
    case CORRAL_VAL_MAP:
        corral_buf_puts(out, "{}");
        break;
    }
}

/* Emit v at indent. inline_first: the first line continues a "- " prefix. */
static void yaml_emit(const corral_val_t *v, corral_buf_t *out, int indent, bool inline_first)
{
    if (!v || !yaml_is_block(v)) {
        yaml_scalar(v, out);
        corral_buf_putc(out, '\n');
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        if (i > 0 || !inline_first)
            yaml_pad(out, indent);
        if (v->kind == CORRAL_VAL_SEQ) {
            corral_buf_puts(out, "- ");
            const corral_val_t *it = v->items[i];
            if (it && it->kind == CORRAL_VAL_SEQ && it->n) {
                corral_buf_putc(out, '\n');
                yaml_emit(it, out, indent + 2, false);
            } else {
                yaml_emit(it, out, indent + 2, true);
            }
        } else {
            const corral_val_pair_t *p = &v->pairs[i];
            yaml_scalar_str(out, p->key->s, p->key->len);
            corral_buf_putc(out, ':');
            if (yaml_is_block(p->val)) {
                corral_buf_putc(out, '\n');
                /* kubectl style: a list under a key is not indented further. */
                int child = p->val->kind == CORRAL_VAL_SEQ ? indent : indent + 2;
                yaml_emit(p->val, out, child, false);
            } else {
                corral_buf_putc(out, ' ');
                yaml_scalar(p->val, out);
                corral_buf_putc(out, '\n');
            }
        }
    }
}

void corral_val_to_yaml(const corral_val_t *v, corral_buf_t *out)
{
    yaml_emit(v, out, 0, false);
}
