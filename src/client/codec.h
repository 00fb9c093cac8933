/*
 * The client's protobuf hook (codec.c): what client.c asks for and how a
 * protobuf answer becomes the JSON its callers read.
 */
#ifndef CORRAL_CLIENT_CODEC_H
#define CORRAL_CLIENT_CODEC_H

#include <curl/curl.h>
#include <stdbool.h>

#include "corral/buf.h"

/* The Accept header line: protobuf first (then JSON) when pb. */
const char *corral__codec_accept(bool pb);
/* A protobuf body ("k8s\0" magic) replaced by its JSON, in place; a List's
 * items get apiVersion and kind back, as Corral's JSON lists have them. A
 * body that does not decode is replaced by a JSON Status saying why. */
void corral__codec_body(corral_buf_t *body);
/* Streamed bytes p of h's 2xx response: when its Content-Type is a
 * protobuf watch stream, the complete frames in pending + p go to line as
 * JSON event lines (a frame that does not decode: an ERROR event, then the
 * stream stops) and 1 is returned, or -1 when line (or the error) stopped
 * the stream; 0 when the stream is not protobuf (p untouched). */
int corral__codec_stream(CURL *h, corral_buf_t *pending, const char *p, size_t len,
                         int (*line)(void *ctx, const char *text, size_t len), void *ctx);
/* Whether h's response is a protobuf stream (its leftover is no line). */
bool corral__codec_is_pb(CURL *h);

#endif
