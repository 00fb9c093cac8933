/*
 * Listening sockets from a written address (see include/corral/net.h).
 */
#include "corral/net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int corral_net_bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    memset(&ss, 0, sizeof(ss));
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

int corral_net_listen(const char *addr, int backlog, int *port, const char *what, char *err,
                      size_t errlen)
{
    const char *colon = strrchr(addr, ':');
    char host[256];
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (!colon || hl >= sizeof(host) || !colon[1]) {
        snprintf(err, errlen, "%s: want HOST:PORT or :PORT, got \"%s\"", what, addr);
        return -1;
    }
    const char *h = addr;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    if (getaddrinfo(hl ? host : NULL, colon + 1, &hints, &ai) != 0 || !ai) {
        snprintf(err, errlen, "%s: \"%s\" is not a numeric HOST:PORT", what, addr);
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
        snprintf(err, errlen, "%s: listen on %s: %s", what, addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    *port = corral_net_bound_port(fd);
    return fd;
}
