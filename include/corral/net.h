/*
 * Listening sockets from an address a person wrote: "HOST:PORT" with a
 * numeric host, "[V6ADDR]:PORT", or ":PORT" for every address. Shared by
 * the small servers (agent log server, metrics server) so that every one
 * of them reads an address the same way and says the same about a bad one.
 */
#ifndef CORRAL_NET_H
#define CORRAL_NET_H

#include <stddef.h>

/*
 * A non-blocking, close-on-exec listening TCP socket with SO_REUSEADDR on
 * addr, with the given backlog. Port 0 lets the kernel choose; the port
 * bound is written to *port. Returns the descriptor, or -1 with a message
 * in err that starts with what ("metrics: ...").
 */
int corral_net_listen(const char *addr, int backlog, int *port, const char *what, char *err,
                      size_t errlen);

/* The local port a bound socket has (0 when it cannot be read). */
int corral_net_bound_port(int fd);

#endif
