/*
 * The stand-in's OpenAI API surface: decoding /v1/completions and
 * /v1/chat/completions request bodies (with the project's bounded JSON
 * parser, so a hostile body costs linear time and bounded memory), and
 * encoding responses, streaming chunks, errors and the model list as the
 * OpenAI API (and vLLM, which follows it) writes them. Pure functions: the
 * fuzz target tests/fuzz/fuzz_standin.c drives the decoder directly.
 *
 * The prompt is only measured (words, or token ids when it is given as
 * tokens) and hashed: the hash picks the reply's words, so one prompt always
 * gets the same reply.
 */
#include <stdio.h>
#include <string.h>

#include "corral/arena.h"
#include "corral/hmap.h"
#include "corral/json.h"
#include "standin/standin_int.h"

/* Words of the replies: plain ASCII, so a token is one JSON string as is. */
static const char *const words[] = {
    " stand-in", " tokens", " arrive", " one",     " by",  " one", " from",
    " a",        " model",  " server", " that",    " is",  " not", " vLLM",
    " but",      " keeps",  " its",    " metrics", " and", " its", " batching"};

const char *corral__si_token(uint64_t seed, int i)
{
    return words[(seed + (uint64_t)i) % CORRAL_ARRAY_LEN(words)];
}

/* Words in s[0..len) and the seed folded over the text. */
static void measure(corral__si_req_t *r, const char *s, size_t len)
{
    bool in_word = false;
    for (size_t i = 0; i < len; i++) {
        bool sp = s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r';
        if (!sp && !in_word)
            r->prompt_tokens++;
        in_word = !sp;
    }
    r->seed = corral_hash_stable(s, len, (uint32_t)r->seed);
}

static int bad(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return CORRAL_EINVAL;
}

/* prompt: a string, token ids, or a list of either (counted together). */
static int measure_prompt(corral__si_req_t *r, const corral_val_t *p, int depth, char *err,
                          size_t errlen)
{
    if (p->kind == CORRAL_VAL_STR) {
        measure(r, p->s, p->len);
        return 0;
    }
    if (p->kind == CORRAL_VAL_INT && depth > 0) {
        r->prompt_tokens++;
        r->seed = corral_hash_stable(p->s, p->len, (uint32_t)r->seed);
        return 0;
    }
    if (p->kind == CORRAL_VAL_SEQ && depth < 2 && p->n > 0) {
        for (size_t i = 0; i < p->n; i++)
            if (measure_prompt(r, p->items[i], depth + 1, err, errlen) < 0)
                return CORRAL_EINVAL;
        return 0;
    }
    return bad(err, errlen,
               "prompt must be a string, an array of strings or an array of token ids");
}

/* messages: [{role, content: "text" | [{type: "text", text}, ...]}, ...] */
static int measure_messages(corral__si_req_t *r, const corral_val_t *m, char *err, size_t errlen)
{
    if (!m || m->kind != CORRAL_VAL_SEQ || m->n == 0)
        return bad(err, errlen, "messages must be a non-empty array");
    for (size_t i = 0; i < m->n; i++) {
        const corral_val_t *msg = m->items[i];
        if (msg->kind != CORRAL_VAL_MAP || !corral_val_get_str(msg, "role"))
            return bad(err, errlen, "each message must be an object with a string role");
        const corral_val_t *c = corral_val_get(msg, "content");
        if (!c || c->kind == CORRAL_VAL_NULL)
            continue;
        if (c->kind == CORRAL_VAL_STR) {
            measure(r, c->s, c->len);
            continue;
        }
        if (c->kind != CORRAL_VAL_SEQ)
            return bad(err, errlen, "message content must be a string or an array of parts");
        for (size_t j = 0; j < c->n; j++) {
            const corral_val_t *t =
                c->items[j]->kind == CORRAL_VAL_MAP ? corral_val_get(c->items[j], "text") : NULL;
            if (t && t->kind == CORRAL_VAL_STR)
                measure(r, t->s, t->len);
        }
    }
    return 0;
}

static int get_max_tokens(const corral_val_t *root, const char *key, int *out, char *err,
                          size_t errlen)
{
    const corral_val_t *v = corral_val_get(root, key);
    if (!v || v->kind == CORRAL_VAL_NULL)
        return 0;
    if (v->kind != CORRAL_VAL_INT || v->u.i < 1 || v->u.i > CORRAL_STANDIN_MAX_TOKENS) {
        snprintf(err, errlen, "%s must be an integer from 1 to %d", key, CORRAL_STANDIN_MAX_TOKENS);
        return CORRAL_EINVAL;
    }
    *out = (int)v->u.i;
    return 0;
}

static int get_bool(const corral_val_t *root, const char *key, bool *out, char *err, size_t errlen)
{
    const corral_val_t *v = corral_val_get(root, key);
    if (!v || v->kind == CORRAL_VAL_NULL)
        return 0;
    if (v->kind != CORRAL_VAL_BOOL) {
        snprintf(err, errlen, "%s must be true or false", key);
        return CORRAL_EINVAL;
    }
    *out = v->u.b;
    return 0;
}

static int decode(const corral_val_t *root, corral__si_req_t *out, char *err, size_t errlen)
{
    if (root->kind != CORRAL_VAL_MAP)
        return bad(err, errlen, "the request body must be a JSON object");
    const corral_val_t *model = corral_val_get(root, "model");
    if (model && model->kind != CORRAL_VAL_NULL) {
        if (model->kind != CORRAL_VAL_STR || model->len >= sizeof(out->model))
            return bad(err, errlen, "model must be a string of at most 255 bytes");
        memcpy(out->model, model->s, model->len + 1);
    }
    int rc = 0;
    if (out->kind == CORRAL__SI_CHAT) {
        rc = measure_messages(out, corral_val_get(root, "messages"), err, errlen);
        if (rc == 0)
            rc = get_max_tokens(root, "max_completion_tokens", &out->max_tokens, err, errlen);
    } else {
        const corral_val_t *p = corral_val_get(root, "prompt");
        rc = p ? measure_prompt(out, p, 0, err, errlen) : bad(err, errlen, "prompt is required");
    }
    if (rc == 0)
        rc = get_max_tokens(root, "max_tokens", &out->max_tokens, err, errlen);
    if (rc == 0)
        rc = get_bool(root, "stream", &out->stream, err, errlen);
    const corral_val_t *so = corral_val_get(root, "stream_options");
    if (rc == 0 && so && so->kind == CORRAL_VAL_MAP)
        rc = get_bool(so, "include_usage", &out->include_usage, err, errlen);
    const corral_val_t *n = corral_val_get(root, "n");
    if (rc == 0 && n && n->kind != CORRAL_VAL_NULL && (n->kind != CORRAL_VAL_INT || n->u.i != 1))
        rc = bad(err, errlen, "the stand-in answers one choice per request: n must be 1");
    return rc;
}

int corral__si_parse(const char *body, size_t len, corral__si_kind_t kind, int max_tokens_default,
                     corral__si_req_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    out->max_tokens = max_tokens_default;
    err[0] = '\0';
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *root = NULL;
    corral_json_err_t jerr;
    int rc = corral_json_parse(&a, body, len, &root, &jerr);
    if (rc < 0) {
        snprintf(err, errlen, "the request body is not valid JSON: line %d column %d: %s",
                 jerr.line, jerr.col, jerr.msg);
        rc = CORRAL_EPARSE;
    } else {
        rc = decode(root, out, err, errlen);
    }
    corral_arena_fini(&a);
    return rc;
}

/* --- encoders ------------------------------------------------------------------------ */

static void put_head(corral_buf_t *out, const corral__si_resp_t *r, const char *object)
{
    corral_buf_puts(out, "{\"id\":");
    corral_json_quote(out, r->id, strlen(r->id));
    corral_buf_printf(out, ",\"object\":\"%s\",\"created\":%lld,\"model\":", object,
                      (long long)r->created);
    corral_json_quote(out, r->model, strlen(r->model));
}

static void put_usage(corral_buf_t *out, const corral__si_resp_t *r, int completion_tokens)
{
    unsigned p = r->req->prompt_tokens;
    corral_buf_printf(out,
                      "\"usage\":{\"prompt_tokens\":%u,\"total_tokens\":%llu,"
                      "\"completion_tokens\":%d}",
                      p, (unsigned long long)p + (unsigned)completion_tokens, completion_tokens);
}

void corral__si_encode_full(corral_buf_t *out, const corral__si_resp_t *r, const char *text,
                            int completion_tokens)
{
    bool chat = r->req->kind == CORRAL__SI_CHAT;
    put_head(out, r, chat ? "chat.completion" : "text_completion");
    corral_buf_puts(out, ",\"choices\":[{\"index\":0,");
    if (chat) {
        corral_buf_puts(out, "\"message\":{\"role\":\"assistant\",\"content\":");
        corral_json_quote(out, text, strlen(text));
        corral_buf_puts(out, "},");
    } else {
        corral_buf_puts(out, "\"text\":");
        corral_json_quote(out, text, strlen(text));
        corral_buf_puts(out, ",");
    }
    corral_buf_puts(out, "\"logprobs\":null,\"finish_reason\":\"length\"}],");
    put_usage(out, r, completion_tokens);
    corral_buf_puts(out, "}");
}

void corral__si_encode_chunk(corral_buf_t *out, const corral__si_resp_t *r, const char *token,
                             const char *finish)
{
    bool chat = r->req->kind == CORRAL__SI_CHAT;
    corral_buf_puts(out, "data: ");
    put_head(out, r, chat ? "chat.completion.chunk" : "text_completion");
    corral_buf_puts(out, ",\"choices\":[{\"index\":0,");
    if (chat && !token)
        corral_buf_puts(out, "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},");
    else if (chat)
        corral_buf_printf(out, "\"delta\":{\"content\":\"%s\"},", token);
    else
        corral_buf_printf(out, "\"text\":\"%s\",", token ? token : "");
    corral_buf_puts(out, "\"logprobs\":null,\"finish_reason\":");
    if (finish)
        corral_buf_printf(out, "\"%s\"", finish);
    else
        corral_buf_puts(out, "null");
    corral_buf_puts(out, "}]}\n\n");
}

void corral__si_encode_usage(corral_buf_t *out, const corral__si_resp_t *r, int completion_tokens)
{
    corral_buf_puts(out, "data: ");
    put_head(out, r, r->req->kind == CORRAL__SI_CHAT ? "chat.completion.chunk" : "text_completion");
    corral_buf_puts(out, ",\"choices\":[],");
    put_usage(out, r, completion_tokens);
    corral_buf_puts(out, "}\n\n");
}

void corral__si_encode_error(corral_buf_t *out, int code, const char *message)
{
    const char *type = code == 404   ? "NotFoundError"
                       : code == 405 ? "MethodNotAllowed"
                       : code == 413 ? "RequestEntityTooLarge"
                       : code == 503 ? "ServiceUnavailable"
                       : code >= 500 ? "InternalServerError"
                                     : "BadRequestError";
    corral_buf_puts(out, "{\"object\":\"error\",\"message\":");
    corral_json_quote(out, message, strlen(message));
    corral_buf_printf(out, ",\"type\":\"%s\",\"param\":null,\"code\":%d}", type, code);
}

void corral__si_encode_models(corral_buf_t *out, const char *model, const char *root,
                              int64_t created)
{
    corral_buf_puts(out, "{\"object\":\"list\",\"data\":[{\"id\":");
    corral_json_quote(out, model, strlen(model));
    corral_buf_printf(out, ",\"object\":\"model\",\"created\":%lld,", (long long)created);
    /* Honest about what answers: a program that reads owned_by sees it. */
    corral_buf_puts(out, "\"owned_by\":\"corral-standin (a stand-in, not vLLM)\",\"root\":");
    corral_json_quote(out, root ? root : model, strlen(root ? root : model));
    corral_buf_printf(out, ",\"parent\":null,\"max_model_len\":%d}]}", CORRAL_STANDIN_MAX_TOKENS);
}
