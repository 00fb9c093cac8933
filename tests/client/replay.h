/*
 * The replay harness: a tiny HTTP server that plays back recorded
 * exchanges of a kube-apiserver (tests/client/exchanges/NAME.http) in order.
 * Each request the client sends is checked against the next recording:
 * method, path, query parameters (as a set; a recorded value "*" matches
 * any), the headers the recording names (value "*": present), and the body
 * as JSON (every recorded field must be there with the same value; "*"
 * matches any value; fields the recording omits are not checked). A match
 * is answered with the recorded response (then the connection is closed,
 * which also ends a streamed watch body); a mismatch fails the test with a
 * diff and is answered 400. Requests past the last recording are answered
 * 500 and counted (an informer or a leader keeps asking until stopped).
 *
 * File format: '#' comment lines; "> > > METHOD TARGET" (without the
 * spaces), header lines, a blank line, the request body; "< < < CODE TEXT",
 * header lines, a blank line, the response body (its lines end with '\n',
 * as a watch stream's events do).
 */
#ifndef CORRAL_TESTS_CLIENT_REPLAY_H
#define CORRAL_TESTS_CLIENT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct replay replay_t;

/* Start serving the file's exchanges on 127.0.0.1 (any port). */
replay_t *replay_start(const char *file);
/* "http://127.0.0.1:PORT" */
const char *replay_url(const replay_t *r);
/* Wait (up to ms) until every exchange was played; true when they were. */
bool replay_wait(replay_t *r, int ms);
/* Exchanges recorded, played, and requests past the end. */
size_t replay_count(const replay_t *r);
size_t replay_played(const replay_t *r);
size_t replay_extra(const replay_t *r);
/* The first mismatch's diff, or NULL when every request matched. */
const char *replay_diff(const replay_t *r);
void replay_stop(replay_t *r);

#endif
