/*
 * Continuous batching as vLLM's scheduler does it, reduced to what can be
 * seen from outside: at most max_running sequences decode together; new ones
 * wait in arrival order and join at the next step that has a free slot (a
 * sequence that finishes frees its slot for the step after); each step gives
 * every running sequence one token. Pure: the server calls a step every
 * --token-ms and turns tokens into bytes.
 */
#include <stddef.h>

#include "standin/standin_int.h"

static void list_push(corral__si_list_t *l, corral__si_seq_t *s)
{
    s->next = NULL;
    s->prev = l->tail;
    if (l->tail)
        l->tail->next = s;
    else
        l->head = s;
    l->tail = s;
    l->n++;
}

static void list_unlink(corral__si_list_t *l, corral__si_seq_t *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        l->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        l->tail = s->prev;
    s->prev = s->next = NULL;
    l->n--;
}

void corral__si_batch_init(corral__si_batch_t *b, int max_running)
{
    b->max_running = max_running > 0 ? max_running : 1;
    b->waiting = (corral__si_list_t){0};
    b->running = (corral__si_list_t){0};
}

void corral__si_batch_add(corral__si_batch_t *b, corral__si_seq_t *seq)
{
    seq->state = CORRAL__SI_WAITING;
    seq->generated = 0;
    list_push(&b->waiting, seq);
}

void corral__si_batch_remove(corral__si_batch_t *b, corral__si_seq_t *seq)
{
    if (seq->state == CORRAL__SI_WAITING)
        list_unlink(&b->waiting, seq);
    else if (seq->state == CORRAL__SI_RUNNING)
        list_unlink(&b->running, seq);
    seq->state = 0;
}

int corral__si_batch_step(corral__si_batch_t *b, corral__si_token_fn fn, void *arg)
{
    while (b->running.n < b->max_running && b->waiting.head) {
        corral__si_seq_t *s = b->waiting.head;
        list_unlink(&b->waiting, s);
        s->state = CORRAL__SI_RUNNING;
        list_push(&b->running, s);
    }
    int produced = 0;
    corral__si_seq_t *next;
    for (corral__si_seq_t *s = b->running.head; s; s = next) {
        next = s->next;
        s->generated++;
        produced++;
        if (s->generated >= s->max_tokens) {
            list_unlink(&b->running, s);
            s->state = CORRAL__SI_DONE;
        }
        fn(s, arg);
    }
    return produced;
}
