/* Requests being read, the handler, and answers (transport.h).

   What a request holds until the handler has seen it (its headers and body) is
   counted per connection and door-wide. Past the connection's bound a new header is
   refused (HTTP/2 resets the stream; one HTTP/1.1 request never reaches it), and
   body bytes stop being taken: HTTP/2 stops giving back flow-control window
   (http2.c) and HTTP/1.1 stops reading the socket (connection.c), so a client that
   sends slowly or never finishes its bodies holds at most the bound plus one window. */
#include "transport.h"

#include <stdlib.h>
#include <string.h>

enum {
    /* One whole request (64 KiB of headers, a 1 MiB body) fits, with room to spare. */
    CONNECTION_HELD_BYTES = 2 << 20,
    DOOR_HELD_BYTES = 32 << 20,
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

void cx_http_answer_fault(cx_http_answer *answer, int fault) { answer->fault = fault; }

void answer_set_empty(cx_http_answer *answer, int status) { cx_http_answer_set(answer, status, NULL, 0, NULL, 0); }

static void headers_free(cx_http_header *headers, size_t count) {
    for (size_t i = 0; i < count; i++) {
        free((char *)headers[i].name);
        free((char *)headers[i].value);
    }
    free(headers);
}

void answer_clear(cx_http_answer *answer) {
    headers_free(answer->headers, answer->header_count);
    answer->headers = NULL;
    answer->header_count = 0;
    buffer_free(&answer->body);
}

/* Frees what the request held (its headers and body) and uncounts it. */
static void release(connection *c, stream *s) {
    headers_free(s->headers, s->header_count);
    s->headers = NULL;
    s->header_count = s->header_cap = 0;
    buffer_free(&s->body);
    c->held -= s->held;
    c->door->held -= s->held;
    s->held = 0;
}

stream *stream_new(connection *c) {
    (void)c;
    return calloc(1, sizeof(stream));
}

void stream_free(connection *c, stream *s) {
    release(c, s);
    answer_clear(&s->answer);
    free(s);
}

static void request_hold(connection *c, stream *s, size_t n) {
    s->held += n;
    c->held += n;
    c->door->held += n;
}

int request_append_body(connection *c, stream *s, const unsigned char *data, size_t len) {
    size_t before = s->body.cap;
    if (buffer_append(&s->body, data, len) != 0) return -1;
    request_hold(c, s, s->body.cap - before); /* the memory, not just the bytes */
    return 0;
}

bool request_holding_room(const connection *c) {
    return c->held <= CONNECTION_HELD_BYTES && c->door->held <= DOOR_HELD_BYTES;
}

header_result request_add_header(connection *c, stream *s, const char *name, size_t name_len, const char *value,
                                 size_t value_len) {
    size_t bytes = name_len + value_len + 32; /* RFC 9113's size of a header field */
    s->header_bytes += bytes;
    if (s->header_bytes > MAX_HEADER_BYTES) return HEADER_BLOCK_TOO_LARGE;
    if (c->held + bytes > CONNECTION_HELD_BYTES) return HELD_TOO_MUCH;
    if (s->header_count == s->header_cap) {
        size_t cap = s->header_cap ? s->header_cap * 2 : 16;
        cx_http_header *headers = realloc(s->headers, cap * sizeof *headers);
        if (!headers) return HEADER_NO_MEMORY;
        s->headers = headers;
        s->header_cap = cap;
    }
    char *name_copy = strndup(name, name_len), *value_copy = strndup(value, value_len);
    if (!name_copy || !value_copy) {
        free(name_copy);
        free(value_copy);
        return HEADER_NO_MEMORY;
    }
    s->headers[s->header_count++] = (cx_http_header){name_copy, name_len, value_copy, value_len};
    request_hold(c, s, bytes);
    return HEADER_ADDED;
}

header_result request_extend_header(connection *c, stream *s, bool value, const char *at, size_t more) {
    cx_http_header *h = &s->headers[s->header_count - 1];
    s->header_bytes += more;
    if (s->header_bytes > MAX_HEADER_BYTES) return HEADER_BLOCK_TOO_LARGE;
    if (c->held + more > CONNECTION_HELD_BYTES) return HELD_TOO_MUCH;
    const char **text = value ? &h->value : &h->name;
    size_t *len = value ? &h->value_len : &h->name_len;
    char *joined = realloc((char *)*text, *len + more + 1);
    if (!joined) return HEADER_NO_MEMORY;
    memcpy(joined + *len, at, more);
    joined[*len + more] = 0;
    *text = joined;
    *len += more;
    request_hold(c, s, more);
    return HEADER_ADDED;
}

void request_answer(connection *c, stream *s, int refusal) {
    if (s->answered) return;
    s->answered = true;
    if (refusal) {
        answer_set_empty(&s->answer, refusal);
    } else {
        cx_http_request request = {
            .door = c->door,
            .server_name = c->server_name[0] ? c->server_name : NULL,
            .tls = c->tls,
            .http2 = c->app == APP_HTTP2,
            .headers = s->headers,
            .header_count = s->header_count,
            .body = s->body.data,
            .body_len = s->body.len,
        };
        c->door->handler(c->door->context, &request, &s->answer);
        if (!s->answer.status && !s->answer.fault) answer_set_empty(&s->answer, 500); /* it set nothing */
    }
    release(c, s);
}
