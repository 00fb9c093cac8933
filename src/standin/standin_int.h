/*
 * Internals of the stand-in model server shared by its files: the OpenAI
 * request decoder and response encoders (req.c, pure, fuzzed), the
 * continuous-batching queue (batch.c, pure: no clocks, no I/O), the model
 * loader and the GPU load file (load.c), and the libevent server
 * (server.c) that ties them together.
 */
#ifndef CORRAL_STANDIN_INT_H
#define CORRAL_STANDIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"
#include "corral/standin.h"

/* --- requests and responses (req.c) ------------------------------------------------ */

typedef enum corral__si_kind {
    CORRAL__SI_COMPLETION, /* POST /v1/completions */
    CORRAL__SI_CHAT,       /* POST /v1/chat/completions */
} corral__si_kind_t;

#define CORRAL__SI_MAX_MODEL 256

typedef struct corral__si_req {
    corral__si_kind_t kind;
    char model[CORRAL__SI_MAX_MODEL]; /* "" when the request names none */
    uint32_t prompt_tokens;           /* words of the prompt (or its token ids) */
    uint64_t seed;                    /* hash of the prompt: picks the reply's words */
    int max_tokens;                   /* in [1, CORRAL_STANDIN_MAX_TOKENS] */
    bool stream;
    bool include_usage; /* stream_options.include_usage */
} corral__si_req_t;

/*
 * Decode an OpenAI request body (JSON) of the given kind. Fields the
 * stand-in has no use for (temperature, top_p, stop, ...) are accepted and
 * ignored, as long as the body is a JSON object. Returns 0 with *out, or
 * CORRAL_EPARSE (not JSON) / CORRAL_EINVAL (a field of the wrong type or out
 * of range, no prompt, no messages) with a message for the client in err.
 */
int corral__si_parse(const char *body, size_t len, corral__si_kind_t kind, int max_tokens_default,
                     corral__si_req_t *out, char *err, size_t errlen);

/* The i-th token (0-based) of the reply to a prompt with this seed: a word
 * with a leading space. Deterministic. */
const char *corral__si_token(uint64_t seed, int i);

/* What one response is about, for the encoders. */
typedef struct corral__si_resp {
    const corral__si_req_t *req;
    const char *id;    /* "cmpl-1f", "chatcmpl-20" */
    int64_t created;   /* Unix seconds */
    const char *model; /* the served model name */
} corral__si_resp_t;

/* A whole non-streaming response: text is the reply, completion_tokens its
 * token count. */
void corral__si_encode_full(corral_buf_t *out, const corral__si_resp_t *r, const char *text,
                            int completion_tokens);
/* One server-sent event "data: {chunk}\n\n" carrying token (NULL: the chat
 * reply's opening role chunk) and finish_reason (NULL while unfinished). */
void corral__si_encode_chunk(corral_buf_t *out, const corral__si_resp_t *r, const char *token,
                             const char *finish);
/* The usage event sent before [DONE] when stream_options.include_usage. */
void corral__si_encode_usage(corral_buf_t *out, const corral__si_resp_t *r, int completion_tokens);
/* An error body as vLLM writes it ({"object":"error","message",...}). */
void corral__si_encode_error(corral_buf_t *out, int code, const char *message);
/* The GET /v1/models body. */
void corral__si_encode_models(corral_buf_t *out, const char *model, const char *root,
                              int64_t created);

/* --- continuous batching (batch.c) -------------------------------------------------- */

enum { CORRAL__SI_WAITING = 1, CORRAL__SI_RUNNING, CORRAL__SI_DONE };

typedef struct corral__si_seq {
    struct corral__si_seq *prev, *next; /* in the waiting or the running list */
    int state;                          /* 0 before it is added */
    int generated;                      /* tokens produced so far */
    int max_tokens;
    void *owner; /* the caller's (the connection) */
} corral__si_seq_t;

typedef struct corral__si_list {
    corral__si_seq_t *head, *tail;
    int n;
} corral__si_list_t;

typedef struct corral__si_batch {
    int max_running;
    corral__si_list_t waiting, running;
} corral__si_batch_t;

void corral__si_batch_init(corral__si_batch_t *b, int max_running);
/* Queue seq (zeroed but for max_tokens and owner) at the end of the waiting line. */
void corral__si_batch_add(corral__si_batch_t *b, corral__si_seq_t *seq);
/* Take seq out, wherever it is (a client that went away). */
void corral__si_batch_remove(corral__si_batch_t *b, corral__si_seq_t *seq);
/* Called for each token: seq->generated is its count so far (1 for the first);
 * seq->state is CORRAL__SI_DONE on the last one, when seq is already out of
 * the batch (the callback may free it then). The callback must not add or
 * remove other sequences. */
typedef void (*corral__si_token_fn)(corral__si_seq_t *seq, void *arg);
/* One decode step: admit waiting sequences into free running slots (oldest
 * first), then give each running sequence its next token. Returns the
 * number of tokens produced. */
int corral__si_batch_step(corral__si_batch_t *b, corral__si_token_fn fn, void *arg);

/* --- model files and GPU load (load.c) ---------------------------------------------- */

/* Read every regular file under dir (recursively, symlinks to files followed,
 * at most 32 levels), adding up bytes and files. 0, or a negative code with a
 * message naming the file in err. */
int corral__si_read_model(const char *dir, uint64_t *bytes, uint64_t *files, char *err,
                          size_t errlen);
/* Write percent (0-100) to path through a temporary name and rename(2). */
int corral__si_write_load(const char *path, double percent);

#endif
