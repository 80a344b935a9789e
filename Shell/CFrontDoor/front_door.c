/* The front door's transport (front_door.h). Written in C because it is glue between
   two C libraries, OpenSSL (TLS, ALPN) and nghttp2 (HTTP/2), whose APIs are built on
   C callbacks, unions and macros; it parses nothing itself but the first bytes that
   tell TLS from clear-text HTTP/2. */
#define _GNU_SOURCE /* accept4 */
#include "front_door.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <http_parser.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

enum {
    MAX_CONNECTIONS = 1024,
    MAX_HEADER_BYTES = 64 * 1024,
    MAX_BODY_BYTES = 1 << 20,
    MAX_STREAMS = 1000,
    MAX_CONNECT_BYTES = 8192,
    CHUNK = 16384,
    /* A connection that sends nothing for this long is dropped (a stalled client). */
    IDLE_SECONDS = 30,
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

static void headers_free(const cx_http_header *headers, size_t count) {
    for (size_t i = 0; i < count; i++) {
        free((char *)headers[i].name);
        free((char *)headers[i].value);
    }
    free((void *)headers);
}

static void answer_free(cx_http_answer *answer) {
    headers_free(answer->headers, answer->header_count);
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
    struct stream *prev, *next; /* the connection's open HTTP/2 streams */
} stream;

/* What runs inside the (clear or TLS) byte stream, once the first bytes told. */
typedef enum { APP_UNDECIDED, APP_HTTP2, APP_HTTP1 } app_protocol;

typedef struct connection {
    int fd;
    cx_front_door *door;
    time_t last_activity; /* CLOCK_MONOTONIC seconds */
    bool decided, tls, closing;
    bool watching_writes; /* epoll also wakes this connection when its socket can take more */
    SSL *ssl;
    BIO *rbio, *wbio;
    app_protocol app;
    nghttp2_session *h2;
    http_parser h1;
    stream *h1_request; /* the HTTP/1.1 request being read */
    bool h1_field_last; /* the last header callback was a name (a value follows) */
    buffer in, app_in, out;
    char server_name[256];
    /* nghttp2_session_del frees its streams without closing them, so the streams a
       connection still has open when it ends are freed from this list. */
    stream *streams;
} connection;

struct cx_front_door {
    int listen_fd;
    int epoll_fd;
    int wake[2];
    pthread_t thread;
    cx_tunnel_filter tunnel_filter;
    cx_before_answers before_answers;
    bool stopping; /* set once, by cx_front_door_stop, before it wakes the loop */
    SSL_CTX *ctx;
    cx_http_handler handler;
    void *context;
    connection *connections[MAX_CONNECTIONS];
    size_t count;
};

/* ---- streams and requests -------------------------------------------------------- */

static void stream_free(stream *s) {
    headers_free(s->headers, s->header_count);
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
            .http2 = c->app == APP_HTTP2,
            .headers = s->headers,
            .header_count = s->header_count,
            .body = s->body.data,
            .body_len = s->body.len,
        };
        c->door->handler(c->door->context, &request, &s->answer);
        if (!s->answer.status) cx_http_answer_set(&s->answer, 500, NULL, 0, NULL, 0);
    }
}

static void respond_http2(connection *c, stream *s) {
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

static int add_header(stream *s, const char *name, size_t name_len, const char *value, size_t value_len) {
    s->header_bytes += name_len + value_len + 32;
    if (s->header_bytes > MAX_HEADER_BYTES) return -1;
    if (s->header_count == s->header_cap) {
        size_t cap = s->header_cap ? s->header_cap * 2 : 16;
        cx_http_header *headers = realloc(s->headers, cap * sizeof *headers);
        if (!headers) return -1;
        s->headers = headers;
        s->header_cap = cap;
    }
    s->headers[s->header_count++] = (cx_http_header){strndup(name, name_len), name_len, strndup(value, value_len),
                                                     value_len};
    return 0;
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    connection *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    stream *s = calloc(1, sizeof *s);
    if (!s) return NGHTTP2_ERR_CALLBACK_FAILURE;
    s->id = frame->hd.stream_id;
    s->next = c->streams;
    if (c->streams) c->streams->prev = s;
    c->streams = s;
    nghttp2_session_set_stream_user_data(session, s->id, s);
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t name_len,
                     const uint8_t *value, size_t value_len, uint8_t flags, void *user_data) {
    (void)flags, (void)user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s) return 0;
    if (add_header(s, (const char *)name, name_len, (const char *)value, value_len) != 0)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
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
        if (s) {
            dispatch(c, s);
            respond_http2(c, s);
        }
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
    (void)error_code;
    connection *c = user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (s) {
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        if (s->prev) s->prev->next = s->next;
        else c->streams = s->next;
        if (s->next) s->next->prev = s->prev;
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
    /* Bounds on what a flood can make the session hold: queued acks (PING and
       SETTINGS floods), settings entries, CONTINUATION frames, and resets. */
    nghttp2_option *options;
    if (nghttp2_option_new(&options) != 0) {
        nghttp2_session_callbacks_del(callbacks);
        return -1;
    }
    nghttp2_option_set_max_outbound_ack(options, 1000);
    nghttp2_option_set_max_settings(options, 32);
    nghttp2_option_set_max_continuations(options, 8);
    nghttp2_option_set_stream_reset_rate_limit(options, 1000, 100);
    nghttp2_option_set_max_send_header_block_length(options, MAX_HEADER_BYTES);
    int rv = nghttp2_session_server_new2(&c->h2, callbacks, c, options);
    nghttp2_option_del(options);
    nghttp2_session_callbacks_del(callbacks);
    if (rv != 0) return -1;
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_BYTES},
    };
    return nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 2) == 0 ? 0 : -1;
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

/* Bytes for the peer: through TLS when the connection has it. */
static void send_plain(connection *c, const void *data, size_t len) {
    if (c->tls) {
        SSL_write(c->ssl, data, (int)len);
        drain_tls(c);
    } else {
        buffer_append(&c->out, data, len);
    }
}

static const char *reason_phrase(int status) {
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 410: return "Gone";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
    }
}

/* An HTTP/1.1 answer; `close` ends the connection after it. */
static void send_http1(connection *c, int status, const cx_http_header *headers, size_t count, const buffer *body,
                       bool close) {
    buffer text = {0};
    char line[256];
    int n = snprintf(line, sizeof line, "HTTP/1.1 %03d %s\r\n", status, reason_phrase(status));
    buffer_append(&text, line, (size_t)n);
    for (size_t i = 0; i < count; i++) {
        buffer_append(&text, headers[i].name, headers[i].name_len);
        buffer_append(&text, ": ", 2);
        buffer_append(&text, headers[i].value, headers[i].value_len);
        buffer_append(&text, "\r\n", 2);
    }
    n = snprintf(line, sizeof line, "content-length: %zu\r\n%s\r\n", body ? body->len : 0,
                 close ? "connection: close\r\n" : "");
    buffer_append(&text, line, (size_t)n);
    if (body && body->len) buffer_append(&text, body->data, body->len);
    send_plain(c, text.data, text.len);
    buffer_free(&text);
    if (close) c->closing = true;
}

static stream *h1_request(connection *c) {
    if (!c->h1_request) c->h1_request = calloc(1, sizeof(stream));
    return c->h1_request;
}

/* Extends the last header's name or value with a piece http-parser handed over. */
static int extend(const char **text, size_t *len, const char *at, size_t more) {
    char *joined = realloc((char *)*text, *len + more + 1);
    if (!joined) return -1;
    memcpy(joined + *len, at, more);
    joined[*len + more] = 0;
    *text = joined;
    *len += more;
    return 0;
}

static int on_h1_url(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = h1_request(c);
    if (!s) return -1;
    if (s->header_count && strcmp(s->headers[s->header_count - 1].name, ":path") == 0) {
        cx_http_header *h = &s->headers[s->header_count - 1];
        return extend(&h->value, &h->value_len, at, len);
    }
    const char *method = http_method_str((enum http_method)parser->method);
    if (add_header(s, ":method", 7, method, strlen(method)) != 0) return -1;
    return add_header(s, ":path", 5, at, len);
}

static int on_h1_header_field(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = h1_request(c);
    if (!s) return -1;
    if (c->h1_field_last && s->header_count) {
        cx_http_header *h = &s->headers[s->header_count - 1];
        if (extend(&h->name, &h->name_len, at, len) != 0) return -1;
    } else if (add_header(s, at, len, "", 0) != 0) {
        return -1;
    }
    cx_http_header *h = &s->headers[s->header_count - 1];
    for (size_t i = 0; i < h->name_len; i++) ((char *)h->name)[i] = (char)tolower((unsigned char)h->name[i]);
    c->h1_field_last = true;
    s->header_bytes += len;
    return s->header_bytes > MAX_HEADER_BYTES ? -1 : 0;
}

static int on_h1_header_value(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = h1_request(c);
    if (!s || !s->header_count) return -1;
    cx_http_header *h = &s->headers[s->header_count - 1];
    if (extend(&h->value, &h->value_len, at, len) != 0) return -1;
    s->header_bytes += len;
    c->h1_field_last = false;
    return s->header_bytes > MAX_HEADER_BYTES ? -1 : 0;
}

static int on_h1_body(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = h1_request(c);
    if (!s) return -1;
    if (s->body.len + len > MAX_BODY_BYTES) {
        s->too_large = true;
        return -1;
    }
    return buffer_append(&s->body, at, len);
}

static int on_h1_message_complete(http_parser *parser) {
    connection *c = parser->data;
    stream *s = h1_request(c);
    if (!s) return -1;
    for (size_t i = 0; i < s->header_count; i++) { /* HTTP/2's :authority, from Host */
        if (strcmp(s->headers[i].name, "host") == 0) {
            add_header(s, ":authority", 10, s->headers[i].value, s->headers[i].value_len);
            break;
        }
    }
    dispatch(c, s);
    send_http1(c, s->answer.status, s->answer.headers, s->answer.header_count, &s->answer.body,
               !http_should_keep_alive(parser));
    stream_free(s);
    c->h1_request = NULL;
    c->h1_field_last = false;
    return 0;
}

static const http_parser_settings h1_settings = {
    .on_url = on_h1_url,
    .on_header_field = on_h1_header_field,
    .on_header_value = on_h1_header_value,
    .on_body = on_h1_body,
    .on_message_complete = on_h1_message_complete,
};

static void receive_http1(connection *c, const unsigned char *data, size_t len) {
    size_t parsed = http_parser_execute(&c->h1, &h1_settings, (const char *)data, len);
    if (c->closing) return;
    if (c->h1.upgrade) {
        /* The request was answered as HTTP/1.1; its Upgrade (h2c's too) is ignored, as a
           server may: HTTP/2 in clear text needs prior knowledge. */
        http_parser_init(&c->h1, HTTP_REQUEST);
        c->h1.data = c;
        if (parsed < len) receive_http1(c, data + parsed, len - parsed);
    } else if (parsed != len || HTTP_PARSER_ERRNO(&c->h1) != HPE_OK) {
        bool large = c->h1_request && c->h1_request->too_large;
        bool headers = c->h1_request && c->h1_request->header_bytes > MAX_HEADER_BYTES;
        send_http1(c, large ? 413 : headers ? 431 : 400, NULL, 0, NULL, true);
    }
}

/* The application protocol inside the byte stream: TLS's ALPN decides; without it
   (and in clear text) the HTTP/2 connection preface does. */
static void receive_app(connection *c, const unsigned char *data, size_t len) {
    if (c->app == APP_UNDECIDED) {
        const unsigned char *alpn = NULL;
        unsigned int alpn_len = 0;
        if (c->tls) SSL_get0_alpn_selected(c->ssl, &alpn, &alpn_len);
        if (alpn_len == 2 && memcmp(alpn, "h2", 2) == 0) {
            c->app = APP_HTTP2;
        } else if (alpn_len == 8 && memcmp(alpn, "http/1.1", 8) == 0) {
            c->app = APP_HTTP1;
        } else {
            buffer_append(&c->app_in, data, len);
            size_t compared = c->app_in.len < PREFACE_LEN ? c->app_in.len : PREFACE_LEN;
            bool preface = memcmp(c->app_in.data, PREFACE, compared) == 0;
            if (preface && c->app_in.len < PREFACE_LEN) return; /* a prefix of the preface so far */
            c->app = preface ? APP_HTTP2 : APP_HTTP1;
            data = c->app_in.data;
            len = c->app_in.len;
        }
        if (c->app == APP_HTTP1) {
            http_parser_init(&c->h1, HTTP_REQUEST);
            c->h1.data = c;
        }
    }
    if (c->app == APP_HTTP2) receive_http2(c, data, len);
    else receive_http1(c, data, len);
    if (c->app_in.len) buffer_consume(&c->app_in, c->app_in.len);
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
        const char *sni = SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
        if (sni) snprintf(c->server_name, sizeof c->server_name, "%s", sni);
        receive_app(c, plain, (size_t)n);
        if (c->closing) break;
    }
    drain_tls(c);
}

static void start_tls(connection *c) {
    c->tls = true;
    c->ssl = SSL_new(c->door->ctx);
    c->rbio = BIO_new(BIO_s_mem());
    c->wbio = BIO_new(BIO_s_mem());
    if (!c->ssl || !c->rbio || !c->wbio) {
        c->closing = true;
        return;
    }
    SSL_set_bio(c->ssl, c->rbio, c->wbio);
    SSL_set_accept_state(c->ssl);
}

static void refuse_raw(connection *c, const char *answer) {
    buffer_append(&c->out, answer, strlen(answer));
    c->closing = true;
}

/* `CONNECT host:port HTTP/1.x` and its headers, ending at `end`: 200 and a tunnel for
   an allowed host (what follows is sniffed again, usually TLS), 403 for another host,
   400 for anything malformed. */
static void handle_connect(connection *c, size_t end) {
    const char *target = (const char *)c->in.data + 8;
    const char *line_end = memchr(target, '\r', end - 8);
    const char *space = line_end ? memchr(target, ' ', (size_t)(line_end - target)) : NULL;
    const char *colon = space ? memrchr(target, ':', (size_t)(space - target)) : NULL;
    char host[256] = "";
    long port = 0;
    bool well_formed = space && colon && colon > target && (size_t)(colon - target) < sizeof host &&
                       line_end - space == 9 &&
                       (memcmp(space + 1, "HTTP/1.1", 8) == 0 || memcmp(space + 1, "HTTP/1.0", 8) == 0) &&
                       colon + 1 < space && space - colon <= 6;
    for (const char *p = well_formed ? colon + 1 : space; well_formed && p < space; p++) {
        if (*p < '0' || *p > '9') well_formed = false;
        else port = port * 10 + (*p - '0');
    }
    if (well_formed) {
        size_t host_len = (size_t)(colon - target);
        if (host_len >= 2 && target[0] == '[' && target[host_len - 1] == ']') { /* [::1]:443 */
            target++;
            host_len -= 2;
        }
        memcpy(host, target, host_len);
        host[host_len] = 0;
        for (char *p = host; *p; p++) *p = (char)tolower((unsigned char)*p);
    }
    if (!well_formed || port < 1 || port > 65535 || !host[0]) {
        refuse_raw(c, "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
    }
    if (!c->door->tunnel_filter(c->door->context, host)) {
        refuse_raw(c, "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
    }
    static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    buffer_append(&c->out, established, sizeof established - 1);
    snprintf(c->server_name, sizeof c->server_name, "%s", host);
    buffer_consume(&c->in, end);
}

static void receive(connection *c, const unsigned char *data, size_t len) {
    if (c->decided) {
        if (c->tls) receive_tls(c, data, len);
        else receive_app(c, data, len);
        return;
    }
    buffer_append(&c->in, data, len);
    while (!c->decided && c->in.len && !c->closing) {
        size_t prefix = c->in.len < 8 ? c->in.len : 8;
        if (memcmp(c->in.data, "CONNECT ", prefix) == 0) {
            unsigned char *end = memmem(c->in.data, c->in.len, "\r\n\r\n", 4);
            if (!end) {
                if (c->in.len > MAX_CONNECT_BYTES)
                    refuse_raw(c, "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n"
                                  "connection: close\r\n\r\n");
                return;
            }
            handle_connect(c, (size_t)(end - c->in.data) + 4);
            continue;
        }
        c->decided = true;
        if (c->in.data[0] == 0x16) { /* a TLS handshake record */
            start_tls(c);
            if (!c->closing) receive_tls(c, c->in.data, c->in.len);
        } else {
            receive_app(c, c->in.data, c->in.len);
        }
        buffer_consume(&c->in, c->in.len);
    }
}

static void connection_close(connection *c) {
    if (c->h2) nghttp2_session_del(c->h2);
    while (c->streams) {
        stream *next = c->streams->next;
        stream_free(c->streams);
        c->streams = next;
    }
    if (c->h1_request) stream_free(c->h1_request);
    buffer_free(&c->app_in);
    if (c->ssl) SSL_free(c->ssl);           /* frees both BIOs */
    buffer_free(&c->in);
    buffer_free(&c->out);
    if (c->fd >= 0) close(c->fd);
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

static time_t now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec;
}

/* What epoll wakes for: the two fixed descriptors by tag, a connection by pointer. */
enum { WAKE_TAG = 1, LISTEN_TAG = 2 };

static void watch(cx_front_door *door, int op, int fd, uint32_t events, uint64_t tag) {
    struct epoll_event event = {.events = events, .data.u64 = tag};
    epoll_ctl(door->epoll_fd, op, fd, &event);
}

static void *run(void *argument) {
    cx_front_door *door = argument;
    struct epoll_event events[256];
    unsigned char chunk[CHUNK];
    bool accepting = true;
    while (!__atomic_load_n(&door->stopping, __ATOMIC_ACQUIRE)) {
        /* Wake at least once a second, to drop connections that stalled. */
        int ready = epoll_wait(door->epoll_fd, events, 256, 1000);
        if (ready < 0 && errno != EINTR) break;
        time_t now = now_seconds();
        if (__atomic_load_n(&door->stopping, __ATOMIC_ACQUIRE)) break;
        bool incoming = false;
        for (int i = 0; i < ready; i++) {
            uint64_t tag = events[i].data.u64;
            if (tag == WAKE_TAG) continue;
            if (tag == LISTEN_TAG) {
                incoming = true;
                continue;
            }
            connection *c = (connection *)(uintptr_t)tag;
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                ssize_t n = recv(c->fd, chunk, sizeof chunk, 0);
                if (n > 0) {
                    c->last_activity = now;
                    receive(c, chunk, (size_t)n);
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    c->closing = true;
                }
            }
        }
        if (door->before_answers) door->before_answers(door->context);
        for (size_t i = 0; i < door->count;) {
            connection *c = door->connections[i];
            write_pending(c);
            if (now - c->last_activity > IDLE_SECONDS) {
                c->closing = true;
                c->out.len = 0; /* a stalled client gets nothing more */
            }
            if (c->closing && !c->out.len) { /* done and written: close (epoll forgets it) */
                connection_close(c);
                door->connections[i] = door->connections[--door->count];
                continue;
            }
            if (c->watching_writes != (c->out.len > 0)) { /* wake for writability only while output waits */
                c->watching_writes = c->out.len > 0;
                watch(door, EPOLL_CTL_MOD, c->fd, EPOLLIN | (c->watching_writes ? EPOLLOUT : 0), (uintptr_t)c);
            }
            i++;
        }
        while (incoming && door->count < MAX_CONNECTIONS) {
            int fd = accept4(door->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) break;
            connection *c = calloc(1, sizeof *c);
            if (!c) {
                close(fd);
                break;
            }
            c->fd = fd;
            c->door = door;
            c->last_activity = now;
            door->connections[door->count++] = c;
            watch(door, EPOLL_CTL_ADD, fd, EPOLLIN, (uintptr_t)c);
        }
        /* At the connection bound, further clients wait in the listen queue. */
        if (accepting != (door->count < MAX_CONNECTIONS)) {
            accepting = door->count < MAX_CONNECTIONS;
            watch(door, EPOLL_CTL_MOD, door->listen_fd, accepting ? EPOLLIN : 0, LISTEN_TAG);
        }
    }
    for (size_t i = 0; i < door->count; i++) connection_close(door->connections[i]);
    door->count = 0;
    return NULL;
}

/* Closes what a door has opened (a descriptor it never opened is -1) and frees it. */
static void door_free(cx_front_door *door) {
    int fds[] = {door->epoll_fd, door->listen_fd, door->wake[0], door->wake[1]};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0) close(fds[i]);
    SSL_CTX_free(door->ctx);
    free(door);
}

/* A door with its TLS context (TLS 1.2 and later, ALPN h2 / http/1.1) and no
   descriptors yet; NULL and a sentence in `error` when the certificate will not load. */
static cx_front_door *door_new(const char *certificate_file, const char *key_file, cx_http_handler handler,
                               cx_tunnel_filter tunnel_filter, cx_before_answers before_answers, void *context,
                               char *error, size_t error_size) {
    cx_front_door *door = calloc(1, sizeof *door);
    if (!door) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    door->handler = handler;
    door->tunnel_filter = tunnel_filter;
    door->before_answers = before_answers;
    door->context = context;
    door->listen_fd = door->epoll_fd = door->wake[0] = door->wake[1] = -1;
    door->ctx = SSL_CTX_new(TLS_server_method());
    if (!door->ctx || SSL_CTX_use_certificate_chain_file(door->ctx, certificate_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(door->ctx, key_file, SSL_FILETYPE_PEM) != 1) {
        unsigned long code = ERR_get_error();
        snprintf(error, error_size, "cannot load the server certificate: %s",
                 code ? ERR_reason_error_string(code) : "unknown error");
        ERR_clear_error();
        door_free(door);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(door->ctx, TLS1_2_VERSION);
    SSL_CTX_set_alpn_select_cb(door->ctx, select_alpn, NULL);
    return door;
}

int cx_front_door_start(const char *address, int port, const char *certificate_file, const char *key_file,
                        cx_http_handler handler, cx_tunnel_filter tunnel_filter, cx_before_answers before_answers,
                        void *context, cx_front_door **out, int *bound_port, char *error, size_t error_size) {
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
        door_new(certificate_file, key_file, handler, tunnel_filter, before_answers, context, error, error_size);
    if (!door) return -1;
    door->listen_fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int yes = 1;
    if (door->listen_fd < 0 || setsockopt(door->listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0 ||
        bind(door->listen_fd, (struct sockaddr *)&storage, length) != 0 || listen(door->listen_fd, 128) != 0 ||
        pipe(door->wake) != 0) {
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
    return door_new(certificate_file, key_file, handler, tunnel_filter, NULL, context, error, sizeof error);
}

size_t cx_front_door_feed(cx_front_door *door, const unsigned char *data, size_t len, size_t chunk) {
    connection *c = calloc(1, sizeof *c);
    if (!c) return 0;
    c->fd = -1;
    c->door = door;
    size_t sent = 0;
    for (size_t at = 0; at < len && !c->closing; at += chunk ? chunk : len) {
        size_t n = chunk && len - at > chunk ? chunk : len - at;
        receive(c, data + at, n);
        sent += c->out.len;
        c->out.len = 0;
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
