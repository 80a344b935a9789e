/* The front door's transport (front_door.h). Written in C because it is glue between
   two C libraries, OpenSSL (TLS, ALPN) and nghttp2 (HTTP/2), whose APIs are built on
   C callbacks, unions and macros; it parses nothing itself but the first bytes that
   tell TLS from clear-text HTTP/2. */
#define _GNU_SOURCE /* accept4 */
#include "front_door.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

enum {
    MAX_CONNECTIONS = 1024,
    MAX_HEADER_BYTES = 64 * 1024,
    MAX_BODY_BYTES = 1 << 20,
    MAX_STREAMS = 1000,
    CHUNK = 16384,
};

static const char PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
enum { PREFACE_LEN = sizeof PREFACE - 1 };

typedef struct buffer {
    unsigned char *data;
    size_t len, cap;
} buffer;

static int buffer_append(buffer *b, const void *bytes, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        unsigned char *data = realloc(b->data, cap);
        if (!data) return -1;
        b->data = data;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, bytes, n);
    b->len += n;
    return 0;
}

static void buffer_consume(buffer *b, size_t n) {
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

static void buffer_free(buffer *b) {
    free(b->data);
    *b = (buffer){0};
}

struct cx_http_answer {
    int status;
    cx_http_header *headers;
    size_t header_count;
    buffer body;
};

void cx_http_answer_set(cx_http_answer *answer, int status, const cx_http_header *headers, size_t header_count,
                        const unsigned char *body, size_t body_len) {
    answer->status = status;
    answer->headers = calloc(header_count ? header_count : 1, sizeof *answer->headers);
    answer->header_count = answer->headers ? header_count : 0;
    for (size_t i = 0; i < answer->header_count; i++) {
        answer->headers[i].name = strndup(headers[i].name, headers[i].name_len);
        answer->headers[i].name_len = headers[i].name_len;
        answer->headers[i].value = strndup(headers[i].value, headers[i].value_len);
        answer->headers[i].value_len = headers[i].value_len;
    }
    buffer_append(&answer->body, body, body_len);
}

static void answer_free(cx_http_answer *answer) {
    for (size_t i = 0; i < answer->header_count; i++) {
        free((char *)answer->headers[i].name);
        free((char *)answer->headers[i].value);
    }
    free(answer->headers);
    buffer_free(&answer->body);
}

typedef struct stream {
    int32_t id;
    cx_http_header *headers;
    size_t header_count, header_cap, header_bytes;
    buffer body;
    bool too_large;
    cx_http_answer answer;
    size_t sent;
} stream;

typedef struct connection {
    int fd;
    cx_front_door *door;
    bool decided, tls, closing;
    SSL *ssl;
    BIO *rbio, *wbio;
    nghttp2_session *h2;
    buffer in, out;
    char server_name[256];
} connection;

struct cx_front_door {
    int listen_fd;
    int wake[2];
    pthread_t thread;
    bool stopping; /* set once, by cx_front_door_stop, before it wakes the loop */
    SSL_CTX *ctx;
    cx_http_handler handler;
    void *context;
    connection *connections[MAX_CONNECTIONS];
    size_t count;
};

/* ---- streams and requests -------------------------------------------------------- */

static void stream_free(stream *s) {
    for (size_t i = 0; i < s->header_count; i++) {
        free((char *)s->headers[i].name);
        free((char *)s->headers[i].value);
    }
    free(s->headers);
    buffer_free(&s->body);
    answer_free(&s->answer);
    free(s);
}

static ssize_t read_answer_body(nghttp2_session *session, int32_t stream_id, uint8_t *out, size_t length,
                                uint32_t *flags, nghttp2_data_source *source, void *user_data) {
    (void)session, (void)stream_id, (void)user_data;
    stream *s = source->ptr;
    size_t left = s->answer.body.len - s->sent;
    size_t n = left < length ? left : length;
    memcpy(out, s->answer.body.data + s->sent, n);
    s->sent += n;
    if (s->sent == s->answer.body.len) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* A complete request: the handler answers, and the answer is submitted on its stream. */
static void dispatch(connection *c, stream *s) {
    if (s->too_large) {
        cx_http_answer_set(&s->answer, 413, NULL, 0, NULL, 0);
    } else {
        cx_http_request request = {
            .server_name = c->server_name[0] ? c->server_name : NULL,
            .tls = c->tls,
            .headers = s->headers,
            .header_count = s->header_count,
            .body = s->body.data,
            .body_len = s->body.len,
        };
        c->door->handler(c->door->context, &request, &s->answer);
        if (!s->answer.status) cx_http_answer_set(&s->answer, 500, NULL, 0, NULL, 0);
    }
    char status[4];
    snprintf(status, sizeof status, "%03d", s->answer.status % 1000);
    size_t count = s->answer.header_count + 1;
    nghttp2_nv *nva = calloc(count, sizeof *nva);
    if (!nva) return;
    nva[0] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)status, 7, 3, NGHTTP2_NV_FLAG_NONE};
    for (size_t i = 0; i < s->answer.header_count; i++) {
        const cx_http_header *h = &s->answer.headers[i];
        nva[i + 1] = (nghttp2_nv){(uint8_t *)h->name, (uint8_t *)h->value, h->name_len, h->value_len,
                                  NGHTTP2_NV_FLAG_NONE};
    }
    nghttp2_data_provider provider = {.source.ptr = s, .read_callback = read_answer_body};
    nghttp2_submit_response(c->h2, s->id, nva, count, s->answer.body.len ? &provider : NULL);
    free(nva);
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    (void)user_data;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    stream *s = calloc(1, sizeof *s);
    if (!s) return NGHTTP2_ERR_CALLBACK_FAILURE;
    s->id = frame->hd.stream_id;
    nghttp2_session_set_stream_user_data(session, s->id, s);
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t name_len,
                     const uint8_t *value, size_t value_len, uint8_t flags, void *user_data) {
    (void)flags, (void)user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s) return 0;
    s->header_bytes += name_len + value_len + 32;
    if (s->header_bytes > MAX_HEADER_BYTES) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
    if (s->header_count == s->header_cap) {
        size_t cap = s->header_cap ? s->header_cap * 2 : 16;
        cx_http_header *headers = realloc(s->headers, cap * sizeof *headers);
        if (!headers) return NGHTTP2_ERR_CALLBACK_FAILURE;
        s->headers = headers;
        s->header_cap = cap;
    }
    s->headers[s->header_count++] = (cx_http_header){
        strndup((const char *)name, name_len), name_len, strndup((const char *)value, value_len), value_len};
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data,
                         size_t len, void *user_data) {
    (void)flags, (void)user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!s) return 0;
    if (s->body.len + len > MAX_BODY_BYTES) s->too_large = true;
    else if (buffer_append(&s->body, data, len) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    connection *c = user_data;
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (s) dispatch(c, s);
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
    (void)error_code, (void)user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (s) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        stream_free(s);
    }
    return 0;
}

/* ---- connections ------------------------------------------------------------------ */

static int start_http2(connection *c) {
    nghttp2_session_callbacks *callbacks;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) return -1;
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    int rv = nghttp2_session_server_new(&c->h2, callbacks, c);
    nghttp2_session_callbacks_del(callbacks);
    if (rv != 0) return -1;
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS}};
    return nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 1) == 0 ? 0 : -1;
}

/* Moves TLS's output (handshake records, encrypted data) to the socket's queue. */
static void drain_tls(connection *c) {
    unsigned char chunk[CHUNK];
    int n;
    while ((n = BIO_read(c->wbio, chunk, sizeof chunk)) > 0) buffer_append(&c->out, chunk, (size_t)n);
}

/* What HTTP/2 has to send, into TLS or straight to the socket's queue. */
static void flush_http2(connection *c) {
    if (!c->h2) return;
    const uint8_t *data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(c->h2, &data)) > 0) {
        if (c->tls) {
            SSL_write(c->ssl, data, (int)n);
        } else {
            buffer_append(&c->out, data, (size_t)n);
        }
    }
    if (n < 0) c->closing = true;
    if (c->tls) drain_tls(c);
    if (!nghttp2_session_want_read(c->h2) && !nghttp2_session_want_write(c->h2)) c->closing = true;
}

static void receive_http2(connection *c, const unsigned char *data, size_t len) {
    if (!c->h2 && start_http2(c) != 0) {
        c->closing = true;
        return;
    }
    if (nghttp2_session_mem_recv(c->h2, data, len) < 0) c->closing = true;
    flush_http2(c);
}

/* HTTP/1.1 is not served yet: a clear answer, then the connection closes. */
static void refuse_http1(connection *c) {
    static const char answer[] =
        "HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Type: text/plain\r\nContent-Length: 45\r\n"
        "Connection: close\r\n\r\nthis front door serves HTTP/2 only, for now\r\n";
    if (c->tls) {
        SSL_write(c->ssl, answer, (int)(sizeof answer - 1));
        drain_tls(c);
    } else {
        buffer_append(&c->out, answer, sizeof answer - 1);
    }
    c->closing = true;
}

static void receive_tls(connection *c, const unsigned char *data, size_t len) {
    BIO_write(c->rbio, data, (int)len);
    unsigned char plain[CHUNK];
    for (;;) {
        int n = SSL_read(c->ssl, plain, sizeof plain);
        if (n <= 0) {
            int error = SSL_get_error(c->ssl, n);
            if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) c->closing = true;
            break;
        }
        if (!c->server_name[0]) {
            const char *sni = SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
            if (sni) snprintf(c->server_name, sizeof c->server_name, "%s", sni);
        }
        const unsigned char *alpn;
        unsigned int alpn_len;
        SSL_get0_alpn_selected(c->ssl, &alpn, &alpn_len);
        if (alpn_len == 8 && memcmp(alpn, "http/1.1", 8) == 0) {
            refuse_http1(c);
            break;
        }
        receive_http2(c, plain, (size_t)n); /* h2, or no ALPN: the preface decides in nghttp2 */
        if (c->closing) break;
    }
    drain_tls(c);
}

static void receive(connection *c, const unsigned char *data, size_t len) {
    if (c->decided) {
        if (c->tls) receive_tls(c, data, len);
        else receive_http2(c, data, len);
        return;
    }
    buffer_append(&c->in, data, len);
    if (c->in.data[0] == 0x16) { /* a TLS handshake record */
        c->decided = c->tls = true;
        c->ssl = SSL_new(c->door->ctx);
        c->rbio = BIO_new(BIO_s_mem());
        c->wbio = BIO_new(BIO_s_mem());
        if (!c->ssl || !c->rbio || !c->wbio) {
            c->closing = true;
            return;
        }
        SSL_set_bio(c->ssl, c->rbio, c->wbio);
        SSL_set_accept_state(c->ssl);
        receive_tls(c, c->in.data, c->in.len);
        buffer_consume(&c->in, c->in.len);
        return;
    }
    size_t compared = c->in.len < PREFACE_LEN ? c->in.len : PREFACE_LEN;
    if (memcmp(c->in.data, PREFACE, compared) != 0) {
        c->decided = true;
        refuse_http1(c);
        return;
    }
    if (c->in.len < PREFACE_LEN) return; /* a prefix of the preface so far */
    c->decided = true;
    receive_http2(c, c->in.data, c->in.len);
    buffer_consume(&c->in, c->in.len);
}

static void connection_close(connection *c) {
    if (c->h2) nghttp2_session_del(c->h2); /* closes its streams, which frees them */
    if (c->ssl) SSL_free(c->ssl);           /* frees both BIOs */
    buffer_free(&c->in);
    buffer_free(&c->out);
    close(c->fd);
    free(c);
}

/* ---- the loop ----------------------------------------------------------------------- */

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_len, const unsigned char *in,
                       unsigned int in_len, void *arg) {
    (void)ssl, (void)arg;
    static const unsigned char ours[] = "\x02h2\x08http/1.1";
    if (SSL_select_next_proto((unsigned char **)out, out_len, ours, sizeof ours - 1, in, in_len) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no common protocol: go on without ALPN */
    return SSL_TLSEXT_ERR_OK;
}

static void write_pending(connection *c) {
    while (c->out.len) {
        ssize_t n = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                c->out.len = 0;
                c->closing = true;
            }
            if (errno != EINTR) return;
            continue;
        }
        buffer_consume(&c->out, (size_t)n);
    }
}

static void *run(void *argument) {
    cx_front_door *door = argument;
    struct pollfd *fds = calloc(MAX_CONNECTIONS + 2, sizeof *fds);
    unsigned char chunk[CHUNK];
    while (fds && !__atomic_load_n(&door->stopping, __ATOMIC_ACQUIRE)) {
        fds[0] = (struct pollfd){door->wake[0], POLLIN, 0};
        fds[1] = (struct pollfd){door->listen_fd, door->count < MAX_CONNECTIONS ? POLLIN : 0, 0};
        for (size_t i = 0; i < door->count; i++)
            fds[i + 2] = (struct pollfd){door->connections[i]->fd,
                                         (short)(POLLIN | (door->connections[i]->out.len ? POLLOUT : 0)), 0};
        if (poll(fds, door->count + 2, -1) < 0 && errno != EINTR) break;
        if (__atomic_load_n(&door->stopping, __ATOMIC_ACQUIRE)) break;
        size_t count = door->count;
        for (size_t i = 0; i < count; i++) {
            connection *c = door->connections[i];
            if (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t n = recv(c->fd, chunk, sizeof chunk, 0);
                if (n > 0) receive(c, chunk, (size_t)n);
                else if (n == 0 || (errno != EAGAIN && errno != EINTR)) c->closing = true;
            }
            write_pending(c);
        }
        for (size_t i = 0; i < door->count;) { /* close what is done and written */
            connection *c = door->connections[i];
            if (c->closing && !c->out.len) {
                connection_close(c);
                door->connections[i] = door->connections[--door->count];
            } else {
                i++;
            }
        }
        if (fds[1].revents & POLLIN) {
            int fd = accept4(door->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            connection *c = fd >= 0 ? calloc(1, sizeof *c) : NULL;
            if (c) {
                c->fd = fd;
                c->door = door;
                door->connections[door->count++] = c;
            } else if (fd >= 0) {
                close(fd);
            }
        }
    }
    for (size_t i = 0; i < door->count; i++) connection_close(door->connections[i]);
    door->count = 0;
    free(fds);
    return NULL;
}

int cx_front_door_start(const char *address, int port, const char *certificate_file, const char *key_file,
                        cx_http_handler handler, void *context, cx_front_door **out, int *bound_port, char *error,
                        size_t error_size) {
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
    cx_front_door *door = calloc(1, sizeof *door);
    if (!door) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    door->handler = handler;
    door->context = context;
    door->ctx = SSL_CTX_new(TLS_server_method());
    if (!door->ctx || SSL_CTX_use_certificate_chain_file(door->ctx, certificate_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(door->ctx, key_file, SSL_FILETYPE_PEM) != 1) {
        unsigned long code = ERR_get_error();
        snprintf(error, error_size, "cannot load the server certificate: %s",
                 code ? ERR_reason_error_string(code) : "unknown error");
        ERR_clear_error();
        SSL_CTX_free(door->ctx);
        free(door);
        return -1;
    }
    SSL_CTX_set_min_proto_version(door->ctx, TLS1_2_VERSION);
    SSL_CTX_set_alpn_select_cb(door->ctx, select_alpn, NULL);
    door->listen_fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int yes = 1;
    if (door->listen_fd < 0 || setsockopt(door->listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0 ||
        bind(door->listen_fd, (struct sockaddr *)&storage, length) != 0 || listen(door->listen_fd, 128) != 0 ||
        pipe(door->wake) != 0) {
        snprintf(error, error_size, "cannot listen on %s:%d: %s", address, port, strerror(errno));
        if (door->listen_fd >= 0) close(door->listen_fd);
        SSL_CTX_free(door->ctx);
        free(door);
        return -1;
    }
    getsockname(door->listen_fd, (struct sockaddr *)&storage, &length);
    *bound_port = ntohs(storage.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    if (pthread_create(&door->thread, NULL, run, door) != 0) {
        snprintf(error, error_size, "cannot start the front door's thread");
        close(door->listen_fd);
        close(door->wake[0]);
        close(door->wake[1]);
        SSL_CTX_free(door->ctx);
        free(door);
        return -1;
    }
    *out = door;
    return 0;
}

void cx_front_door_stop(cx_front_door *door) {
    if (!door) return;
    __atomic_store_n(&door->stopping, true, __ATOMIC_RELEASE);
    ssize_t ignored = write(door->wake[1], "x", 1);
    (void)ignored;
    pthread_join(door->thread, NULL);
    close(door->listen_fd);
    close(door->wake[0]);
    close(door->wake[1]);
    SSL_CTX_free(door->ctx);
    free(door);
}
