/* One connection (transport.h): its first bytes (an HTTPS proxy's CONNECT, a TLS
   handshake, or clear text), then HTTP/1.1 or HTTP/2 inside, and the rules of what it
   may read and must write.

   Bounds: a CONNECT's head of at most MAX_CONNECT_BYTES (431). A connection whose
   unsent output passes OUTPUT_PAUSE_BYTES is not read while it stays there, as an
   HTTP/1.1 request whose body would pass the door's held bytes is not; an HTTP/2
   connection goes on being read (a client may read its answers only after it has
   sent), but nghttp2 keeps its answers until there is room, and its own outbound
   limits close a flood. Past OUTPUT_CLOSE_BYTES a connection is closed, its output
   dropped. */
#include "transport.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

enum {
    MAX_CONNECT_BYTES = 8192,
    /* What an HTTP/1.1 client may send behind a request whose answer is given later. */
    MAX_WAITING_INPUT = 64 * 1024,
};

static const char PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
enum { PREFACE_LEN = sizeof PREFACE - 1 };

void connection_send(connection *c, const void *data, size_t len) {
    if (c->tls) tls_send(c, data, len);
    else buffer_append(&c->out, data, len);
}

bool connection_wants_read(const connection *c) {
    if (c->closing || c->peer_done) return false;
    if (c->app != APP_HTTP2 && c->out.len >= OUTPUT_PAUSE_BYTES) return false;
    if (c->h1_request && c->h1_request->held && !request_holding_room(c)) return false;
    if (c->h1_waiting && c->h1_input.len >= MAX_WAITING_INPUT) return false;
    return true;
}

void connection_resume(connection *c) {
    if (!c->closing && c->app == APP_HTTP2) {
        http2_settle_window(c);
        if (c->out.len < OUTPUT_PAUSE_BYTES) http2_flush(c);
    }
    if (c->tls) tls_seal(c);
}

/* The application protocol inside the byte stream: TLS's ALPN decides; without it
   (and in clear text) the HTTP/2 connection preface does. */
void connection_receive_plain(connection *c, const unsigned char *data, size_t len) {
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
        if (c->app == APP_HTTP1) http1_start(c);
    }
    if (c->app == APP_HTTP2) http2_receive(c, data, len);
    else http1_receive(c, data, len);
    if (c->app_in.len) buffer_consume(&c->app_in, c->app_in.len);
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

void connection_receive(connection *c, const unsigned char *data, size_t len) {
    if (c->decided) {
        if (c->tls) tls_receive(c, data, len);
        else connection_receive_plain(c, data, len);
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
            tls_start(c);
            if (!c->closing) tls_receive(c, c->in.data, c->in.len);
        } else {
            connection_receive_plain(c, c->in.data, c->in.len);
        }
        buffer_consume(&c->in, c->in.len);
    }
}

void connection_close(connection *c) {
    later_forget_connection(c);
    if (c->h2) nghttp2_session_del(c->h2);
    while (c->streams) {
        stream *next = c->streams->next;
        stream_free(c, c->streams);
        c->streams = next;
    }
    if (c->h1_request) stream_free(c, c->h1_request);
    if (c->h1_waiting) stream_free(c, c->h1_waiting);
    buffer_free(&c->h1_input);
    buffer_free(&c->app_in);
    if (c->ssl) SSL_free(c->ssl); /* frees both BIOs */
    buffer_free(&c->in);
    buffer_free(&c->out);
    buffer_free(&c->unsealed);
    if (c->fd >= 0) {
        /* Taken out of epoll before it is closed: closing the descriptor removes it only
           when no other descriptor shares its open file (a child the process forks holds
           a copy until it execs), and meanwhile its events would still come, carrying
           the freed connection. */
        epoll_ctl(c->door->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    free(c);
}
