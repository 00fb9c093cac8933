/*
 * A small gRPC layer over nghttp2, for the kubelet device plugin API
 * (docs/decisions.md, "The device plugin's gRPC"): HTTP/2 over unix
 * sockets, unary calls and server streams, 5-byte length-prefixed messages
 * (no compression), grpc-status / grpc-message trailers. Messages are
 * opaque bytes here (protobuf-c packs and unpacks them).
 *
 * Bounds: a message is at most CORRAL__GRPC_MAX_MSG bytes (larger ones are
 * refused with RESOURCE_EXHAUSTED), a server takes CORRAL__GRPC_MAX_CONNS
 * connections of CORRAL__GRPC_MAX_STREAMS streams each, headers of at most
 * CORRAL__GRPC_MAX_HEADERS bytes a stream, and resets a server stream whose
 * reader leaves more than CORRAL__GRPC_MAX_PENDING bytes unread.
 */
#ifndef CORRAL_AGENT_GRPC_H
#define CORRAL_AGENT_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"

#define CORRAL__GRPC_MAX_MSG     ((size_t)256 * 1024)
#define CORRAL__GRPC_MAX_CONNS   16
#define CORRAL__GRPC_MAX_STREAMS 16
#define CORRAL__GRPC_MAX_HEADERS ((size_t)16 * 1024)
#define CORRAL__GRPC_MAX_PENDING ((size_t)1024 * 1024)

/* gRPC status codes (the subset used). */
enum {
    CORRAL__GRPC_OK = 0,
    CORRAL__GRPC_CANCELLED = 1,
    CORRAL__GRPC_UNKNOWN = 2,
    CORRAL__GRPC_INVALID_ARGUMENT = 3,
    CORRAL__GRPC_DEADLINE_EXCEEDED = 4,
    CORRAL__GRPC_NOT_FOUND = 5,
    CORRAL__GRPC_RESOURCE_EXHAUSTED = 8,
    CORRAL__GRPC_FAILED_PRECONDITION = 9,
    CORRAL__GRPC_UNIMPLEMENTED = 12,
    CORRAL__GRPC_INTERNAL = 13,
    CORRAL__GRPC_UNAVAILABLE = 14,
};

/* A handler's return for a server stream: resp is its first message and
 * the stream stays open for corral__grpc_server_broadcast. */
#define CORRAL__GRPC_KEEP_OPEN (-1)

/* One length-prefixed message at the start of p[0..len): 1 with *msg,
 * *msglen and *used (prefix included) set; 0 when more bytes are needed;
 * CORRAL_ETOOBIG over max, CORRAL_EUNSUPPORTED for a compressed message. */
int corral__grpc_frame_parse(const uint8_t *p, size_t len, size_t max, const uint8_t **msg,
                             size_t *msglen, size_t *used);
struct ProtobufCMessage;
/* A protobuf-c message packed into out (replacing what it held). */
void corral__grpc_pack(const struct ProtobufCMessage *m, corral_buf_t *out);
/* Append msg with its 5-byte prefix to out. */
void corral__grpc_frame_put(corral_buf_t *out, const void *msg, size_t len);

/* A request: path ("/v1beta1.DevicePlugin/Allocate") and its one message.
 * Fills resp with the response message; returns a gRPC status (message in
 * why) or CORRAL__GRPC_KEEP_OPEN. Runs on the server's thread. */
typedef int (*corral__grpc_handler_fn)(void *ctx, const char *path, const uint8_t *req, size_t len,
                                       corral_buf_t *resp, char *why, size_t whylen);

typedef struct corral__grpc_server corral__grpc_server_t;

/* Listen on the unix socket path (a stale socket there is replaced) and
 * serve on a new thread. NULL with a message in err on failure. */
corral__grpc_server_t *corral__grpc_server_start(const char *path, corral__grpc_handler_fn h,
                                                 void *ctx, char *err, size_t errlen);
/* Send msg on every open server stream of path (any thread). */
void corral__grpc_server_broadcast(corral__grpc_server_t *s, const char *path, const void *msg,
                                   size_t len);
/* Open server streams now (for tests; any thread). */
int corral__grpc_server_streams(corral__grpc_server_t *s);
/* Is the socket file still the one this server made? */
bool corral__grpc_server_socket_ok(corral__grpc_server_t *s);
/* Stop the thread, close every connection, remove the socket file when it
 * is still ours, free (NULL is fine). */
void corral__grpc_server_stop(corral__grpc_server_t *s);

/* Feed bytes to a fresh server connection as a peer would, then drop it
 * (the fuzz target's entry; the handler runs as on a server). */
void corral__grpc_server_feed(corral__grpc_handler_fn h, void *ctx, const uint8_t *data,
                              size_t len);

/* --- client ---------------------------------------------------------------------------- */

typedef struct corral__grpc_client corral__grpc_client_t;

/* Connect to the unix socket path. NULL with a message in err. */
corral__grpc_client_t *corral__grpc_connect(const char *path, char *err, size_t errlen);
void corral__grpc_close(corral__grpc_client_t *c);
/* A unary call: the gRPC status (0: resp holds the response message), or a
 * negative CORRAL_E* when the connection failed or timeout_ms passed;
 * why gets a message unless the status is 0. */
int corral__grpc_call(corral__grpc_client_t *c, const char *path, const void *req, size_t len,
                      corral_buf_t *resp, int timeout_ms, char *why, size_t whylen);
/* A server stream: on_msg runs for each message until the stream ends, it
 * returns non-zero, or *stop becomes non-zero (checked every 100 ms).
 * Returns as corral__grpc_call (CORRAL__GRPC_CANCELLED when stopped). */
int corral__grpc_stream(corral__grpc_client_t *c, const char *path, const void *req, size_t len,
                        int (*on_msg)(void *ctx, const uint8_t *msg, size_t len), void *ctx,
                        const volatile int *stop, char *why, size_t whylen);

#endif
