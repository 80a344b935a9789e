/* The listening socket and the loop (front_door.h, transport.h): one thread, epoll,
   every connection.

   Bounds: at most MAX_CONNECTIONS at once (the next clients wait in the listen queue);
   a connection with no byte read or written for IDLE_SECONDS is dropped. The process's
   open-file limit is raised at start to fit the connections and the rest of the
   process; when descriptors run out all the same (EMFILE, ENFILE), the listener is
   disarmed until a connection closes or a second has passed, so the loop never spins
   on a listening socket it cannot accept from. */
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    IDLE_SECONDS = 30,
    /* Descriptors the rest of the process needs beside the connections: the world's
       files, pipes and MQTT sockets. */
    OTHER_DESCRIPTORS = 256,
};

/* What epoll wakes for: the two fixed descriptors by tag, a connection by pointer. */
enum { WAKE_TAG = 1, LISTEN_TAG = 2 };

static void watch(cx_front_door *door, int op, int fd, uint32_t events, uint64_t tag) {
    struct epoll_event event = {.events = events, .data.u64 = tag};
    epoll_ctl(door->epoll_fd, op, fd, &event);
}

static void write_pending(connection *c, time_t now) {
    while (c->out.len) {
        ssize_t n = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) c->closing = c->discard = true;
            return;
        }
        c->last_activity = now;
        buffer_consume(&c->out, (size_t)n);
    }
}

/* One connection's turn after the reads: output, the bounds, and what epoll watches.
   Returns false when the connection was closed (and freed). */
static bool tend(cx_front_door *door, connection *c, time_t now) {
    connection_resume(c);
    write_pending(c, now);
    /* A connection that waits for an answer given later is not idle: the door is. */
    bool idle = now - c->last_activity > IDLE_SECONDS && !c->laters;
    if (c->peer_done && !c->laters) c->closing = true;
    if (c->out.len > OUTPUT_CLOSE_BYTES || idle) c->closing = c->discard = true;
    if (c->closing && (c->discard || !c->out.len)) {
        connection_close(c);
        return false;
    }
    uint32_t events = (connection_wants_read(c) ? EPOLLIN : 0) | (c->out.len ? EPOLLOUT : 0);
    if (events != c->watched) {
        c->watched = events;
        watch(door, EPOLL_CTL_MOD, c->fd, events, (uintptr_t)c);
    }
    return true;
}

/* Accepts what the listen queue holds, up to the bound; false when descriptors ran out. */
static bool accept_waiting(cx_front_door *door, time_t now) {
    while (door->count < MAX_CONNECTIONS) {
        int fd = accept4(door->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return !(errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM);
        }
        connection *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            return false;
        }
        /* Each turn of the loop writes what it has in one send: Nagle's algorithm would
           only hold the next answer back until the client acknowledges the last (with
           delayed acknowledgements, milliseconds per answer under load). */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->door = door;
        c->last_activity = now;
        c->watched = EPOLLIN;
        door->connections[door->count++] = c;
        watch(door, EPOLL_CTL_ADD, fd, EPOLLIN, (uintptr_t)c);
    }
    return true;
}

static void *run(void *argument) {
    cx_front_door *door = argument;
    /* Named, so that tools (top -H, /proc/<pid>/task, cxbench) tell it from the world's. */
    pthread_setname_np(pthread_self(), "door");
    struct epoll_event events[256];
    unsigned char chunk[CHUNK];
    bool listening = true;
    time_t starved_at = -1; /* when descriptors last ran out; -1: they have not */
    int timeout = 1000;
    while (!__atomic_load_n(&door->stopping, __ATOMIC_ACQUIRE)) {
        /* Wake at least once a second, to drop connections that stalled, and at the
           next deadline of an answer given later. */
        int ready = epoll_wait(door->epoll_fd, events, 256, timeout);
        if (ready < 0 && errno != EINTR) break;
        time_t now = (time_t)(monotonic_ms() / 1000);
        if (__atomic_load_n(&door->stopping, __ATOMIC_ACQUIRE)) break;
        bool incoming = false;
        for (int i = 0; i < ready; i++) {
            uint64_t tag = events[i].data.u64;
            if (tag == WAKE_TAG) { /* another thread sent something for an answer given later */
                unsigned char drained[256];
                while (read(door->wake[0], drained, sizeof drained) > 0) {}
                continue;
            }
            if (tag == LISTEN_TAG) {
                incoming = true;
                continue;
            }
            connection *c = (connection *)(uintptr_t)tag;
            if (!(c->watched & EPOLLIN)) {
                /* Not being read: a hang-up or an error is its end. */
                if (events[i].events & (EPOLLHUP | EPOLLERR)) c->closing = c->discard = true;
                continue;
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t n = recv(c->fd, chunk, sizeof chunk, 0);
                if (n > 0) {
                    c->last_activity = now;
                    connection_receive(c, chunk, (size_t)n);
                } else if (n == 0 && c->app != APP_HTTP2 && c->h1_waiting && !c->h1_waiting->streaming) {
                    /* An HTTP/1.1 client that sent its request and shut its side (a
                       half-close): the answer it is owed still goes out, then the close.
                       A stream's reader that leaves is gone: nothing is owed to it. */
                    c->peer_done = true;
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    c->closing = true;
                }
            }
        }
        int64_t next_deadline = later_turn(door);
        timeout = next_deadline >= 0 && next_deadline < 1000 ? (int)next_deadline + 1 : 1000;
        size_t before = door->count;
        for (size_t i = 0; i < door->count;) {
            if (tend(door, door->connections[i], now)) i++;
            else door->connections[i] = door->connections[--door->count];
        }
        if (door->count < before || (starved_at >= 0 && now > starved_at)) starved_at = -1;
        if (incoming && starved_at < 0 && !accept_waiting(door, now)) starved_at = now;
        /* At the connection bound, or out of descriptors, clients wait in the listen queue. */
        bool listen_now = door->count < MAX_CONNECTIONS && starved_at < 0;
        if (listening != listen_now) {
            listening = listen_now;
            watch(door, EPOLL_CTL_MOD, door->listen_fd, listening ? EPOLLIN : 0, LISTEN_TAG);
        }
        __atomic_store_n(&door->open_connections, door->count, __ATOMIC_RELAXED);
    }
    for (size_t i = 0; i < door->count; i++) connection_close(door->connections[i]);
    door->count = 0;
    return NULL;
}

/* Raises the soft open-file limit to fit every connection and the rest of the process
   (the common default of 1,024 would not), up to the hard limit. */
static void raise_descriptor_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
    rlim_t wanted = MAX_CONNECTIONS + OTHER_DESCRIPTORS;
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
        limit.rlim_cur = limit.rlim_max != RLIM_INFINITY && limit.rlim_max < wanted ? limit.rlim_max : wanted;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

/* Closes what a door has opened (a descriptor it never opened is -1) and frees it. */
static void door_free(cx_front_door *door) {
    int fds[] = {door->epoll_fd, door->listen_fd, door->wake[0], door->wake[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0) close(fds[i]);
    SSL_CTX_free(door->ctx);
    later_free_all(door);
    stream_free_spares(door);
    pthread_mutex_destroy(&door->ops_lock);
    free(door);
}

size_t cx_front_door_connections(cx_front_door *door) {
    return __atomic_load_n(&door->open_connections, __ATOMIC_RELAXED);
}

/* A door with its TLS context and no descriptors yet; NULL and a sentence in `error`
   when the certificate will not load. */
static cx_front_door *door_new(const char *certificate_file, const char *key_file, cx_http_handler handler,
                               cx_tunnel_filter tunnel_filter, cx_handshake_filter handshake_filter,
                               cx_later_gone later_gone, void *context, char *error,
                               size_t error_size) {
    cx_front_door *door = calloc(1, sizeof *door);
    if (!door) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    door->handler = handler;
    door->tunnel_filter = tunnel_filter;
    door->handshake_filter = handshake_filter;
    door->later_gone = later_gone;
    door->max_laters = MAX_HELD_ANSWERS;
    door->context = context;
    pthread_mutex_init(&door->ops_lock, NULL);
    door->listen_fd = door->epoll_fd = door->wake[0] = door->wake[1] = -1;
    door->ctx = tls_context(door, certificate_file, key_file, error, error_size);
    if (!door->ctx) {
        door_free(door);
        return NULL;
    }
    return door;
}

int cx_front_door_start(const char *address, int port, const char *certificate_file, const char *key_file,
                        cx_http_handler handler, cx_tunnel_filter tunnel_filter, cx_handshake_filter handshake_filter,
                        cx_later_gone later_gone, void *context,
                        cx_front_door **out, int *bound_port, char *error, size_t error_size) {
    struct sockaddr_storage storage = {0};
    socklen_t length;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        length = sizeof *v6;
    } else {
        snprintf(error, error_size, "'%s' is not an IPv4 or IPv6 address", address);
        return -1;
    }
    cx_front_door *door =
        door_new(certificate_file, key_file, handler, tunnel_filter, handshake_filter, later_gone,
                 context, error, error_size);
    if (!door) return -1;
    raise_descriptor_limit();
    door->listen_fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int yes = 1;
    if (door->listen_fd < 0 || setsockopt(door->listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0 ||
        bind(door->listen_fd, (struct sockaddr *)&storage, length) != 0 || listen(door->listen_fd, 128) != 0 ||
        pipe2(door->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        snprintf(error, error_size, "cannot listen on %s:%d: %s", address, port, strerror(errno));
        door_free(door);
        return -1;
    }
    door->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (door->epoll_fd < 0) {
        snprintf(error, error_size, "cannot make an epoll instance: %s", strerror(errno));
        door_free(door);
        return -1;
    }
    watch(door, EPOLL_CTL_ADD, door->wake[0], EPOLLIN, WAKE_TAG);
    watch(door, EPOLL_CTL_ADD, door->listen_fd, EPOLLIN, LISTEN_TAG);
    getsockname(door->listen_fd, (struct sockaddr *)&storage, &length);
    *bound_port = ntohs(storage.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    if (pthread_create(&door->thread, NULL, run, door) != 0) {
        snprintf(error, error_size, "cannot start the front door's thread");
        door_free(door);
        return -1;
    }
    *out = door;
    return 0;
}

cx_front_door *cx_front_door_detached(const char *certificate_file, const char *key_file, cx_http_handler handler,
                                      cx_tunnel_filter tunnel_filter, void *context) {
    char error[256];
    return door_new(certificate_file, key_file, handler, tunnel_filter, NULL, NULL, context, error,
                    sizeof error);
}

size_t cx_front_door_feed(cx_front_door *door, const unsigned char *data, size_t len, size_t chunk) {
    connection *c = calloc(1, sizeof *c);
    if (!c) return 0;
    c->fd = -1;
    c->door = door;
    size_t sent = 0;
    for (size_t at = 0; at < len && !c->closing; at += chunk ? chunk : len) {
        size_t n = chunk && len - at > chunk ? chunk : len - at;
        connection_receive(c, data + at, n);
        /* A client that reads everything: the output leaves, and what waited for room
           (HTTP/2's queue, its window) follows. */
        do {
            sent += c->out.len;
            c->out.len = 0;
            connection_resume(c);
        } while (c->out.len);
    }
    connection_close(c);
    return sent;
}

void cx_front_door_stop(cx_front_door *door) {
    if (!door) return;
    if (door->wake[1] >= 0) { /* a detached door has no thread */
        __atomic_store_n(&door->stopping, true, __ATOMIC_RELEASE);
        ssize_t ignored = write(door->wake[1], "x", 1);
        (void)ignored;
        pthread_join(door->thread, NULL);
    }
    door_free(door);
}
