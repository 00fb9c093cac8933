/*
 * Informers: list+watch of one resource kept running on a thread, as
 * client-go's reflector does, delivering typed objects to an event queue
 * that the component's own thread drains. The scheduler, the controllers and
 * the node agent see the API only through these (and plain requests for
 * writes).
 *
 * One informer: LIST (paged with limit/continue), then WATCH from the list's
 * resourceVersion with bookmarks; a watch that ends is resumed from the last
 * resourceVersion seen; 410 Gone (or any error) relists, with a capped
 * exponential backoff on repeated failures. A relist is reconciled against
 * what the informer delivered before: objects that changed are MODIFIED,
 * new ones ADDED, vanished ones DELETED (with obj NULL: their final state is
 * unknown, as client-go's DeletedFinalStateUnknown). After every complete
 * LIST a SYNCED event follows, so a consumer knows its view is whole.
 *
 * Objects are decoded on the informer's thread (corral_obj_decode of the
 * JSON the server sent); each event owns its arena, and the consumer owns
 * each event it pops (keep it as its cached copy of the object, or free it).
 *
 * Threads: an informer runs one thread; the queue may be shared by several
 * informers and is drained by one consumer. corral_informer_stop returns
 * within about a second (libcurl's progress callback checks the flag).
 */
#ifndef CORRAL_INFORMER_H
#define CORRAL_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/arena.h"
#include "corral/client.h"
#include "corral/model.h"

typedef enum corral_watch_type {
    CORRAL_WATCH_ADDED = 0,
    CORRAL_WATCH_MODIFIED,
    CORRAL_WATCH_DELETED,
    CORRAL_WATCH_SYNCED, /* a LIST completed and every change it showed was delivered */
} corral_watch_type_t;

typedef struct corral_watch_ev corral_watch_ev_t;
struct corral_watch_ev {
    corral_watch_ev_t *next; /* queue link; the consumer may reuse it */
    corral_watch_type_t type;
    corral_kind_t kind;
    const char *ns;       /* "" for cluster-scoped kinds; never NULL (SYNCED: "") */
    const char *name;     /* never NULL (SYNCED: "") */
    const char *rv;       /* the object's resourceVersion ("" when unknown) */
    corral_obj_t *obj;    /* NULL for SYNCED and for a deletion seen only by a relist */
    corral_arena_t arena; /* owns everything above */
};

/* Free one event (NULL is fine). Does not follow ev->next. */
void corral_watch_ev_free(corral_watch_ev_t *ev);
/* Free a whole list linked by next. */
void corral_watch_ev_free_list(corral_watch_ev_t *ev);

/* --- the event queue ---------------------------------------------------------------- */

typedef struct corral_evq corral_evq_t;

corral_evq_t *corral_evq_new(void);
/* Frees queued events too. The informers feeding it must be stopped first. */
void corral_evq_free(corral_evq_t *q);
/* Append one event (takes ownership). Any thread. */
void corral_evq_push(corral_evq_t *q, corral_watch_ev_t *ev);
/* Take every queued event, oldest first, as a list linked by next; waits up
 * to timeout_ms (0: do not wait, -1: until something comes or a wake).
 * NULL when none came. The caller owns the list. */
corral_watch_ev_t *corral_evq_take(corral_evq_t *q, int timeout_ms);
/* Make a waiting corral_evq_take return now (any thread; e.g. on shutdown
 * or when the consumer has timed work of its own). */
void corral_evq_wake(corral_evq_t *q);
/* Events queued and not yet taken (for metrics and backpressure). */
size_t corral_evq_len(corral_evq_t *q);

/* --- informers ------------------------------------------------------------------------ */

typedef struct corral_informer corral_informer_t;

typedef struct corral_informer_opts {
    corral_kind_t kind;
    const char *ns;             /* one namespace; NULL: all */
    const char *label_selector; /* NULL: none */
    const char *field_selector; /* NULL: none (e.g. "spec.nodeName=node-1") */
    int page_size;              /* LIST limit; 0: 500 */
    int watch_timeout_s;        /* timeoutSeconds of each WATCH; 0: 240-360 s, jittered */
    int backoff_max_ms;         /* cap of the relist backoff; 0: 10000 */
    const char *name;           /* for log lines; NULL: the resource name */
} corral_informer_opts_t;

/*
 * Start an informer on its own thread, with its own connection made from cfg
 * (copied), delivering to q (borrowed: it must outlive the informer).
 * Returns 0 or a negative code with a message in err.
 */
int corral_informer_start(const corral_client_config_t *cfg, const corral_informer_opts_t *o,
                          corral_evq_t *q, corral_informer_t **out, char *err, size_t errlen);
/* Stop the thread, wait for it and free (NULL is fine). */
void corral_informer_stop(corral_informer_t *inf);
/* Ask the thread to stop without waiting (NULL is fine): a component with
 * several informers asks them all first, then stops each, so that shutting
 * down takes one second, not one per informer. */
void corral_informer_cancel(corral_informer_t *inf);
/* Has the first LIST been delivered (its SYNCED event queued)? Any thread. */
bool corral_informer_synced(const corral_informer_t *inf);
/* LISTs done so far (the first one and every relist): for tests and metrics. */
uint64_t corral_informer_lists(const corral_informer_t *inf);

/*
 * Decode one object from the JSON the server sent into arena a: parse,
 * decode with corral_obj_decode (warnings ignored). Returns 0, or
 * CORRAL_EINVAL when the text is not an object Corral knows (message in
 * err). Shared by informers and by components that GET one object.
 */
int corral_obj_from_json(corral_arena_t *a, const char *text, size_t len, corral_obj_t **out,
                         char *err, size_t errlen);

#endif
