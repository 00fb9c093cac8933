/* The stand-in model server's pure parts and its loop: OpenAI request
 * decoding (prompts, messages, bounds, refusals), the reply's deterministic
 * words, the encoders' JSON, continuous batching (slots, FIFO waiting, one
 * token per step), the model reader, the GPU load file, and a server in a
 * thread answering a request and draining on stop. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "corral/arena.h"
#include "corral/json.h"
#include "standin/standin_int.h"

static int parse(const char *body, corral__si_kind_t kind, corral__si_req_t *r, char *err)
{
    return corral__si_parse(body, strlen(body), kind, 16, r, err, 256);
}

Test(standin_req, completion_fields)
{
    corral__si_req_t r;
    char err[256];
    cr_assert_eq(parse("{\"model\":\"m\",\"prompt\":\"a b  c\",\"max_tokens\":7,\"stream\":true,"
                       "\"stream_options\":{\"include_usage\":true},\"temperature\":0.5}",
                       CORRAL__SI_COMPLETION, &r, err),
                 0, "%s", err);
    cr_assert_str_eq(r.model, "m");
    cr_assert_eq(r.prompt_tokens, 3);
    cr_assert_eq(r.max_tokens, 7);
    cr_assert(r.stream && r.include_usage);
    cr_assert_eq(parse("{\"prompt\":[[1,2,3],[4]]}", CORRAL__SI_COMPLETION, &r, err), 0, "%s", err);
    cr_assert_eq(r.prompt_tokens, 4, "token ids count one each");
    cr_assert_eq(r.max_tokens, 16, "the default");
    cr_assert_eq(r.model[0], '\0');
}

Test(standin_req, chat_messages)
{
    corral__si_req_t r;
    char err[256];
    cr_assert_eq(parse("{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                       "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x y z\"}]}],"
                       "\"max_completion_tokens\":3}",
                       CORRAL__SI_CHAT, &r, err),
                 0, "%s", err);
    cr_assert_eq(r.prompt_tokens, 5);
    cr_assert_eq(r.max_tokens, 3);
}

Test(standin_req, refusals_say_why)
{
    corral__si_req_t r;
    char err[256];
    cr_assert_eq(parse("{\"prompt\":", CORRAL__SI_COMPLETION, &r, err), CORRAL_EPARSE);
    cr_assert(strstr(err, "not valid JSON"));
    cr_assert_eq(parse("[1]", CORRAL__SI_COMPLETION, &r, err), CORRAL_EINVAL);
    cr_assert_eq(parse("{}", CORRAL__SI_COMPLETION, &r, err), CORRAL_EINVAL);
    cr_assert(strstr(err, "prompt is required"));
    cr_assert_eq(parse("{\"prompt\":\"x\",\"max_tokens\":0}", CORRAL__SI_COMPLETION, &r, err),
                 CORRAL_EINVAL);
    cr_assert(strstr(err, "max_tokens must be an integer from 1 to 4096"), "%s", err);
    cr_assert_eq(parse("{\"prompt\":\"x\",\"max_tokens\":4097}", CORRAL__SI_COMPLETION, &r, err),
                 CORRAL_EINVAL);
    cr_assert_eq(parse("{\"prompt\":\"x\",\"stream\":1}", CORRAL__SI_COMPLETION, &r, err),
                 CORRAL_EINVAL);
    cr_assert_eq(parse("{\"prompt\":\"x\",\"n\":2}", CORRAL__SI_COMPLETION, &r, err),
                 CORRAL_EINVAL);
    cr_assert_eq(parse("{\"prompt\":[[[1]]]}", CORRAL__SI_COMPLETION, &r, err), CORRAL_EINVAL);
    cr_assert_eq(parse("{\"messages\":[]}", CORRAL__SI_CHAT, &r, err), CORRAL_EINVAL);
    cr_assert_eq(parse("{\"messages\":[{\"content\":\"x\"}]}", CORRAL__SI_CHAT, &r, err),
                 CORRAL_EINVAL);
}

Test(standin_req, same_prompt_same_words)
{
    corral__si_req_t a, b, c;
    char err[256];
    parse("{\"prompt\":\"hello world\"}", CORRAL__SI_COMPLETION, &a, err);
    parse("{\"prompt\":\"hello world\",\"max_tokens\":3}", CORRAL__SI_COMPLETION, &b, err);
    parse("{\"prompt\":\"other words\"}", CORRAL__SI_COMPLETION, &c, err);
    cr_assert_eq(a.seed, b.seed);
    cr_assert_neq(a.seed, c.seed);
    for (int i = 0; i < 40; i++) {
        const char *t = corral__si_token(a.seed, i);
        cr_assert_eq(t[0], ' ');
        cr_assert_str_eq(t, corral__si_token(b.seed, i));
    }
}

/* The encoders write JSON the project's parser reads back. */
static corral_val_t *json(corral_arena_t *a, const corral_buf_t *b, size_t skip)
{
    corral_val_t *v = NULL;
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(a, b->p + skip, b->len - skip, &v, &e), 0, "%s: %s", e.msg,
                 b->p);
    return v;
}

Test(standin_req, encoders)
{
    corral__si_req_t q = {.kind = CORRAL__SI_CHAT, .prompt_tokens = 2, .max_tokens = 3};
    corral__si_resp_t r = {.req = &q, .id = "chatcmpl-1", .created = 5, .model = "m\"x"};
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    corral__si_encode_full(&b, &r, " a b \"c\"", 3);
    corral_val_t *v = json(&a, &b, 0);
    cr_assert_str_eq(corral_val_get_str(v, "model"), "m\"x");
    cr_assert_str_eq(corral_val_dig(v, "usage.total_tokens")->s, "5");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_get(corral_val_get(v, "choices")->items[0], "message"),
                           "content"),
        " a b \"c\"");
    corral_buf_reset(&b);
    corral__si_encode_chunk(&b, &r, " w", "length");
    cr_assert(strncmp(b.p, "data: ", 6) == 0 && b.p[b.len - 1] == '\n' && b.p[b.len - 2] == '\n');
    b.len -= 2;
    v = json(&a, &b, 6);
    cr_assert_str_eq(corral_val_get_str(v, "object"), "chat.completion.chunk");
    corral_buf_reset(&b);
    corral__si_encode_error(&b, 413, "too \"big\"");
    v = json(&a, &b, 0);
    cr_assert_str_eq(corral_val_get_str(v, "type"), "RequestEntityTooLarge");
    corral_buf_reset(&b);
    corral__si_encode_models(&b, "demo", NULL, 1);
    v = json(&a, &b, 0);
    cr_assert(
        strstr(corral_val_get_str(corral_val_get(v, "data")->items[0], "owned_by"), "not vLLM"));
    corral_buf_fini(&b);
    corral_arena_fini(&a);
}

/* --- batching ----------------------------------------------------------------------- */

typedef struct tally {
    int tokens[8];
    int done[8];
    int order[64];
    int norder;
} tally_t;

static corral__si_seq_t seqs[8];

static void count(corral__si_seq_t *s, void *arg)
{
    tally_t *t = arg;
    int i = (int)(s - seqs);
    t->tokens[i]++;
    cr_assert_eq(s->generated, t->tokens[i]);
    if (s->state == CORRAL__SI_DONE) {
        t->done[i] = 1;
        t->order[t->norder++] = i;
    }
}

Test(standin_batch, slots_and_fifo)
{
    corral__si_batch_t b;
    corral__si_batch_init(&b, 2);
    tally_t t = {0};
    int lens[4] = {2, 3, 1, 1};
    for (int i = 0; i < 4; i++) {
        seqs[i] = (corral__si_seq_t){.max_tokens = lens[i]};
        corral__si_batch_add(&b, &seqs[i]);
    }
    cr_assert_eq(b.waiting.n, 4);
    cr_assert_eq(corral__si_batch_step(&b, count, &t), 2, "two slots");
    cr_assert_eq(b.running.n, 2);
    cr_assert_eq(b.waiting.n, 2);
    cr_assert_eq(corral__si_batch_step(&b, count, &t), 2);
    cr_assert(t.done[0] && !t.done[1], "seq 0 is done after its 2 tokens");
    cr_assert_eq(b.running.n, 1);
    /* Step 3: seq 2 (first in line) takes the free slot, seq 3 still waits. */
    cr_assert_eq(corral__si_batch_step(&b, count, &t), 2);
    cr_assert_eq(t.tokens[3], 0);
    cr_assert(t.done[1] && t.done[2]);
    cr_assert_eq(corral__si_batch_step(&b, count, &t), 1);
    cr_assert(t.done[3]);
    cr_assert_eq(b.running.n + b.waiting.n, 0);
    cr_assert_eq(t.order[0], 0);
    cr_assert_eq(t.order[3], 3);
    cr_assert_eq(corral__si_batch_step(&b, count, &t), 0);
}

Test(standin_batch, remove_from_either_line)
{
    corral__si_batch_t b;
    corral__si_batch_init(&b, 1);
    tally_t t = {0};
    for (int i = 0; i < 3; i++) {
        seqs[i] = (corral__si_seq_t){.max_tokens = 5};
        corral__si_batch_add(&b, &seqs[i]);
    }
    corral__si_batch_step(&b, count, &t);
    corral__si_batch_remove(&b, &seqs[0]); /* running */
    corral__si_batch_remove(&b, &seqs[1]); /* waiting */
    cr_assert_eq(b.running.n, 0);
    cr_assert_eq(b.waiting.n, 1);
    corral__si_batch_step(&b, count, &t);
    cr_assert_eq(t.tokens[2], 1);
    cr_assert_eq(t.tokens[1], 0);
}

/* --- model files, GPU load -------------------------------------------------------------- */

Test(standin_load, reads_every_file)
{
    char dir[] = "/tmp/standin-test-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char p[256];
    snprintf(p, sizeof(p), "%s/sub", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/sub/a", dir);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 300000; i++)
        fputc('x', f);
    fclose(f);
    snprintf(p, sizeof(p), "%s/b", dir);
    f = fopen(p, "w");
    fputs("12345", f);
    fclose(f);
    snprintf(p, sizeof(p), "%s/link", dir); /* a symlink to a directory is not entered */
    cr_assert_eq(symlink(dir, p), 0);
    uint64_t bytes, files;
    char err[256];
    cr_assert_eq(corral__si_read_model(dir, &bytes, &files, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(bytes, 300005);
    cr_assert_eq(files, 2);
    snprintf(p, sizeof(p), "%s/none", dir);
    cr_assert_lt(corral__si_read_model(p, &bytes, &files, err, sizeof(err)), 0);
    cr_assert(strstr(err, "none"));

    snprintf(p, sizeof(p), "%s/gpu-load", dir);
    cr_assert_eq(corral__si_write_load(p, 62.5), 0);
    char got[32] = {0};
    f = fopen(p, "r");
    cr_assert_not_null(fgets(got, sizeof(got), f));
    fclose(f);
    cr_assert_str_eq(got, "62.5\n");
    unlink(p);
    const char *names[] = {"sub/a", "sub", "b", "link"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        cr_assert_eq(remove(p), 0, "%s", p);
    }
    cr_assert_eq(rmdir(dir), 0);
}

/* --- the server ----------------------------------------------------------------------- */

static void *serve(void *arg)
{
    corral_standin_run(arg);
    return NULL;
}

/* One request on a new connection; the whole answer (the server closes). */
static void roundtrip(int port, const char *req, char *out, size_t outlen)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    size_t n = 0;
    ssize_t r;
    while (n + 1 < outlen && (r = read(fd, out + n, outlen - n - 1)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fd);
}

Test(standin_server, answers_then_drains)
{
    corral_standin_opts_t o;
    corral_standin_opts_init(&o);
    o.port = 0;
    o.token_ns = 1000000;
    o.drain_window_ns = 0;
    o.quiet = true;
    corral_standin_t *s;
    char err[256];
    cr_assert_eq(corral_standin_new(&o, &s, err, sizeof(err)), 0, "%s", err);
    pthread_t th;
    pthread_create(&th, NULL, serve, s);
    static char out[65536];
    roundtrip(corral_standin_port(s),
              "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              "Content-Length: 29\r\n\r\n{\"prompt\":\"a\",\"max_tokens\":4}",
              out, sizeof(out));
    cr_assert(strstr(out, "HTTP/1.1 200 OK"), "%s", out);
    cr_assert(strstr(out, "\"completion_tokens\":4"), "%s", out);
    cr_assert(strstr(out, "\"model\":\"standin\""), "%s", out);
    /* Pipelined: two requests in one write, two answers in order. */
    roundtrip(corral_standin_port(s),
              "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
              "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
              out, sizeof(out));
    char *second = strstr(out, "\"object\":\"list\"");
    cr_assert(strstr(out, "HTTP/1.1 200 OK") == out && second, "%s", out);
    corral_standin_stop(s);
    pthread_join(th, NULL);
    corral_standin_free(s);
}
