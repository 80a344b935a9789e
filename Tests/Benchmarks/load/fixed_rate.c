/* A fixed-rate HTTP/2 load client (issue 22's latency figure): POSTs sent at evenly spaced
 * instants, request i at start + i / rate, round robin over a few connections (h2c with prior
 * knowledge, or TLS with ALPN h2), and each request's latency measured from the instant it
 * was due, not from when it left. So a server that falls behind is charged for the whole
 * wait of every request it delayed (no coordinated omission), and the load has no bursts of
 * the client's own: h2load's --rps starts every client's timer at once, so 100 clients send
 * 100 requests at the same instant, 1 / rps apart.
 *
 * usage: fixed_rate URIS BODY RATE REQUESTS CONNECTIONS [HEADER ...]
 *   URIS: one URI a line (http:// or https://, one host and port for all); request i uses
 *   line i modulo their number. HEADER: "name: value".
 * Prints one JSON line: sent, answered, ok (2xx), seconds, rate (answered a second), and the
 * latency percentiles in milliseconds. Exits 1 when it could not run at all. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    SSL *ssl;
    nghttp2_session *session;
    uint8_t *out; /* bytes nghttp2 produced that the socket did not take yet */
    size_t out_len, out_cap;
    int want_write;
} connection;

typedef struct {
    int64_t due;   /* when it was due (ns, monotonic) */
    int status;    /* :status, 0 until answered */
    int done;
} request;

static request *requests;
static int64_t answered, ok;
static double *latencies;
static const uint8_t *body_bytes;
static size_t body_length;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void fail(const char *what) {
    fprintf(stderr, "fixed_rate: %s\n", what);
    exit(1);
}

static char *read_file(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    size_t cap = 4096, len = 0;
    char *text = malloc(cap + 1);
    size_t n;
    while ((n = fread(text + len, 1, cap - len, file)) > 0) {
        len += n;
        if (len == cap) text = realloc(text, (cap *= 2) + 1);
    }
    fclose(file);
    text[len] = 0;
    *length = len;
    return text;
}

/* The bytes of `c->out` the socket takes now; the rest waits for EPOLLOUT. */
static int flush(connection *c) {
    size_t sent = 0;
    while (sent < c->out_len) {
        ssize_t n;
        if (c->ssl) {
            n = SSL_write(c->ssl, c->out + sent, (int)(c->out_len - sent));
            if (n <= 0) {
                int error = SSL_get_error(c->ssl, (int)n);
                if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) break;
                return -1;
            }
        } else {
            n = write(c->fd, c->out + sent, c->out_len - sent);
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR) break;
                return -1;
            }
        }
        sent += (size_t)n;
    }
    memmove(c->out, c->out + sent, c->out_len - sent);
    c->out_len -= sent;
    return 0;
}

/* What nghttp2 has to send, into the connection's buffer, then to the socket. */
static int pump(connection *c) {
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->session, &data);
        if (n < 0) return -1;
        if (n == 0) break;
        if (c->out_len + (size_t)n > c->out_cap) {
            while (c->out_len + (size_t)n > c->out_cap) c->out_cap = c->out_cap ? c->out_cap * 2 : 65536;
            c->out = realloc(c->out, c->out_cap);
        }
        memcpy(c->out + c->out_len, data, (size_t)n);
        c->out_len += (size_t)n;
    }
    return flush(c);
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
    (void)session, (void)flags, (void)user;
    if (frame->hd.type != NGHTTP2_HEADERS || namelen != 7 || memcmp(name, ":status", 7) != 0) return 0;
    request *r = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (r) {
        int status = 0;
        for (size_t i = 0; i < valuelen && isdigit(value[i]); i++) status = status * 10 + (value[i] - '0');
        r->status = status;
    }
    return 0;
}

static int on_close(nghttp2_session *session, int32_t stream_id, uint32_t error, void *user) {
    (void)error, (void)user;
    request *r = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!r || r->done) return 0;
    r->done = 1;
    latencies[answered++] = (double)(now_ns() - r->due) / 1e6;
    if (r->status >= 200 && r->status < 300) ok++;
    return 0;
}

static ssize_t read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                               uint32_t *flags, nghttp2_data_source *source, void *user) {
    (void)session, (void)stream_id, (void)user;
    size_t offset = (size_t)source->ptr;
    size_t n = body_length - offset < length ? body_length - offset : length;
    memcpy(buf, body_bytes + offset, n);
    source->ptr = (void *)(offset + n);
    if (offset + n == body_length) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(double p) {
    if (answered == 0) return 0;
    int64_t index = (int64_t)(p * (double)answered);
    return latencies[index >= answered ? answered - 1 : index];
}

int main(int argc, char **argv) {
    if (argc < 6) fail("usage: fixed_rate URIS BODY RATE REQUESTS CONNECTIONS [HEADER ...]");
    size_t uris_length;
    char *uris_text = read_file(argv[1], &uris_length);
    body_bytes = (const uint8_t *)read_file(argv[2], &body_length);
    double rate = atof(argv[3]);
    int64_t total = atoll(argv[4]);
    int connection_count = atoi(argv[5]);
    if (!uris_text || !body_bytes || rate <= 0 || total <= 0 || connection_count <= 0) fail("bad arguments");

    /* The URIs' paths, and the scheme, host and port of the first. */
    int path_count = 0;
    char **paths = calloc(uris_length / 8 + 2, sizeof *paths);
    char scheme[8] = "", host[256] = "";
    int port = 0;
    for (char *line = strtok(uris_text, "\n"); line; line = strtok(NULL, "\n")) {
        char *authority = strstr(line, "://");
        char *path = authority ? strchr(authority + 3, '/') : NULL;
        if (!path) continue;
        if (path_count == 0) {
            snprintf(scheme, sizeof scheme, "%.*s", (int)(authority - line), line);
            char *colon = memchr(authority + 3, ':', (size_t)(path - authority - 3));
            if (!colon) fail("a URI without a port");
            snprintf(host, sizeof host, "%.*s", (int)(colon - authority - 3), authority + 3);
            port = atoi(colon + 1);
        }
        paths[path_count++] = path;
    }
    if (path_count == 0) fail("no URI");
    int tls = strcmp(scheme, "https") == 0;
    char authority[300];
    snprintf(authority, sizeof authority, "%s:%d", host, port);

    /* The request's headers: the pseudo-headers, then the caller's. */
    int extra = argc - 6;
    nghttp2_nv *nva = calloc((size_t)extra + 5, sizeof *nva);
#define NV(i, n, v) (nva[i] = (nghttp2_nv){(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE})
    NV(0, ":method", "POST");
    NV(1, ":scheme", scheme);
    NV(2, ":authority", authority);
    NV(3, ":path", "/");
    char length_text[32];
    snprintf(length_text, sizeof length_text, "%zu", body_length);
    NV(4, "content-length", length_text);
    for (int i = 0; i < extra; i++) {
        char *colon = strchr(argv[6 + i], ':');
        if (!colon) fail("a header without a colon");
        *colon = 0;
        char *value = colon + 1;
        while (*value == ' ') value++;
        NV(5 + i, argv[6 + i], value);
    }

    SSL_CTX *context = NULL;
    if (tls) {
        context = SSL_CTX_new(TLS_client_method());
        static const unsigned char alpn[] = {2, 'h', '2'};
        SSL_CTX_set_alpn_protos(context, alpn, sizeof alpn);
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL); /* the bench's own server, as h2load does */
    }

    int poll = epoll_create1(0);
    connection *connections = calloc((size_t)connection_count, sizeof *connections);
    nghttp2_session_callbacks *callbacks;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);
    for (int i = 0; i < connection_count; i++) {
        connection *c = &connections[i];
        c->fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, host, &address.sin_addr) != 1) fail("the host must be an IPv4 literal");
        if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0) fail("could not connect");
        int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (tls) {
            c->ssl = SSL_new(context);
            SSL_set_fd(c->ssl, c->fd);
            /* No SNI: the host is an IP literal, as with h2load. */
            if (SSL_connect(c->ssl) != 1) fail("the TLS handshake failed");
            const unsigned char *protocol;
            unsigned int protocol_length;
            SSL_get0_alpn_selected(c->ssl, &protocol, &protocol_length);
            if (protocol_length != 2 || memcmp(protocol, "h2", 2) != 0) fail("the server did not choose h2");
            SSL_set_mode(c->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        }
        fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
        nghttp2_session_client_new(&c->session, callbacks, c);
        nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24}};
        nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
        if (pump(c) != 0) fail("could not write the connection preface");
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(poll, EPOLL_CTL_ADD, c->fd, &event);
    }

    requests = calloc((size_t)total, sizeof *requests);
    latencies = calloc((size_t)total, sizeof *latencies);
    int64_t start = now_ns();
    int64_t interval = (int64_t)(1e9 / rate);
    int64_t sent = 0;
    /* Past the schedule, the stragglers get 10 s before they count as unanswered. */
    int64_t deadline = start + interval * total + 10 * (int64_t)1000000000;
    uint8_t input[65536];
    while (answered < total && now_ns() < deadline) {
        int64_t now = now_ns();
        /* Every request due by now, each on the next connection. */
        while (sent < total && start + sent * interval <= now) {
            request *r = &requests[sent];
            r->due = start + sent * interval;
            connection *c = &connections[sent % connection_count];
            nva[3].value = (uint8_t *)paths[sent % path_count];
            nva[3].valuelen = strlen(paths[sent % path_count]);
            nghttp2_data_provider provider = {.source.ptr = (void *)0, .read_callback = read_body};
            if (nghttp2_submit_request(c->session, NULL, nva, (size_t)extra + 5, &provider, r) < 0)
                fail("could not submit a request");
            sent++;
        }
        for (int i = 0; i < connection_count; i++) {
            connection *c = &connections[i];
            if (pump(c) != 0) fail("a connection failed while writing");
            int want = c->out_len > 0;
            if (want != c->want_write) {
                struct epoll_event event = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c};
                epoll_ctl(poll, EPOLL_CTL_MOD, c->fd, &event);
                c->want_write = want;
            }
        }
        /* Sleep until the next request is due (or input comes). */
        struct timespec wait = {0, 0};
        if (sent < total) {
            int64_t until = start + sent * interval - now_ns();
            if (until > 0) wait = (struct timespec){until / 1000000000, until % 1000000000};
        } else {
            wait.tv_nsec = 10000000;
        }
        struct epoll_event events[64];
        int ready = epoll_pwait2(poll, events, 64, &wait, NULL);
        if (ready < 0 && errno != EINTR) fail("epoll_pwait2 failed (it needs Linux 5.11)");
        for (int e = 0; e < ready; e++) {
            connection *c = events[e].data.ptr;
            if (events[e].events & EPOLLOUT && flush(c) != 0) fail("a connection failed while writing");
            if (!(events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            for (;;) {
                ssize_t n;
                if (c->ssl) {
                    n = SSL_read(c->ssl, input, sizeof input);
                    if (n <= 0) {
                        int error = SSL_get_error(c->ssl, (int)n);
                        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) break;
                        fail("a TLS connection closed");
                    }
                } else {
                    n = read(c->fd, input, sizeof input);
                    if (n == 0) fail("a connection closed");
                    if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR) break;
                        fail("a connection failed while reading");
                    }
                }
                if (nghttp2_session_mem_recv(c->session, input, (size_t)n) < 0) fail("the server's HTTP/2 was refused");
            }
        }
    }
    double seconds = (double)(now_ns() - start) / 1e9;
    qsort(latencies, (size_t)answered, sizeof *latencies, compare);
    printf("{\"sent\":%lld,\"answered\":%lld,\"ok\":%lld,\"seconds\":%.3f,\"rate\":%.1f,\"p50_ms\":%.3f,"
           "\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f}\n",
           (long long)sent, (long long)answered, (long long)ok, seconds, (double)answered / seconds,
           percentile(0.5), percentile(0.9), percentile(0.99), percentile(0.999),
           answered ? latencies[answered - 1] : 0.0);
    return 0;
}
