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

/* The answer's headers and their bytes in one allocation: the array, then each name
   and value with a NUL after it. */
void cx_http_answer_set(cx_http_answer *answer, int status, const cx_http_header *headers, size_t header_count,
                        const unsigned char *body, size_t body_len) {
    answer->status = status;
    size_t bytes = header_count * sizeof *answer->headers;
    for (size_t i = 0; i < header_count; i++) bytes += headers[i].name_len + headers[i].value_len + 2;
    answer->headers = header_count ? malloc(bytes) : NULL;
    answer->header_count = answer->headers ? header_count : 0;
    char *text = (char *)(answer->headers + answer->header_count);
    for (size_t i = 0; i < answer->header_count; i++) {
        cx_http_header *h = &answer->headers[i];
        h->name = text;
        h->name_len = headers[i].name_len;
        memcpy(text, headers[i].name, h->name_len);
        text[h->name_len] = 0;
        text += h->name_len + 1;
        h->value = text;
        h->value_len = headers[i].value_len;
        h->unique = headers[i].unique;
        memcpy(text, headers[i].value, h->value_len);
        text[h->value_len] = 0;
        text += h->value_len + 1;
    }
    buffer_append(&answer->body, body, body_len);
}

void cx_http_answer_fault(cx_http_answer *answer, int fault) { answer->fault = fault; }

void answer_set_empty(cx_http_answer *answer, int status) { cx_http_answer_set(answer, status, NULL, 0, NULL, 0); }

void answer_clear(cx_http_answer *answer) {
    free(answer->headers);
    answer->headers = NULL;
    answer->header_count = 0;
    buffer_free(&answer->body);
}

/* Frees what the request held (its headers and body) and uncounts it. */
static void release(connection *c, stream *s) {
    buffer_free(&s->fields);
    if (s->spans != s->inline_spans) free(s->spans);
    s->spans = s->inline_spans;
    s->header_count = 0;
    s->header_cap = INLINE_HEADERS;
    buffer_free(&s->body);
    c->held -= s->held;
    c->door->held -= s->held;
    s->held = 0;
}

stream *stream_new(connection *c) {
    /* A stream the door freed before, or a new one. Made with calloc for every request,
       each took glibc's slow path: glibc 2.36's calloc takes nothing from the thread's
       cache, and clang turns a malloc that is then zeroed into a calloc. */
    cx_front_door *door = c->door;
    stream *s = door->spare_streams;
    if (s) {
        door->spare_streams = s->next;
        door->spare_stream_count--;
        memset(s, 0, sizeof *s);
    } else {
        s = calloc(1, sizeof *s);
        if (!s) return NULL;
    }
    s->spans = s->inline_spans;
    s->header_cap = INLINE_HEADERS;
    return s;
}

void stream_free(connection *c, stream *s) {
    release(c, s);
    answer_clear(&s->answer);
    cx_front_door *door = c->door;
    if (door->spare_stream_count < MAX_SPARE_STREAMS) {
        s->next = door->spare_streams;
        door->spare_streams = s;
        door->spare_stream_count++;
    } else {
        free(s);
    }
}

void stream_free_spares(cx_front_door *door) {
    while (door->spare_streams) {
        stream *next = door->spare_streams->next;
        free(door->spare_streams);
        door->spare_streams = next;
    }
    door->spare_stream_count = 0;
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

/* Appends bytes and the NUL after them to the request's fields. */
static int append_text(stream *s, const char *text, size_t len) {
    static const char nul = 0;
    return buffer_append(&s->fields, text, len) == 0 && buffer_append(&s->fields, &nul, 1) == 0 ? 0 : -1;
}

header_result request_add_header(connection *c, stream *s, const char *name, size_t name_len, const char *value,
                                 size_t value_len) {
    size_t bytes = name_len + value_len + 32; /* RFC 9113's size of a header field */
    s->header_bytes += bytes;
    if (s->header_bytes > MAX_HEADER_BYTES) return HEADER_BLOCK_TOO_LARGE;
    if (c->held + bytes > CONNECTION_HELD_BYTES) return HELD_TOO_MUCH;
    if (s->header_count == s->header_cap) {
        size_t cap = s->header_cap * 2;
        header_span *spans = s->spans == s->inline_spans ? malloc(cap * sizeof *spans)
                                                         : realloc(s->spans, cap * sizeof *spans);
        if (!spans) return HEADER_NO_MEMORY;
        if (s->spans == s->inline_spans) memcpy(spans, s->inline_spans, sizeof s->inline_spans);
        s->spans = spans;
        s->header_cap = cap;
    }
    /* Name, NUL, value, NUL in one reservation: four appends, each checking room and
       calling memcpy, were most of what a header cost here. */
    if (buffer_reserve(&s->fields, name_len + value_len + 2) != 0) return HEADER_NO_MEMORY;
    header_span span = {.name = s->fields.len, .name_len = name_len, .value = s->fields.len + name_len + 1,
                        .value_len = value_len};
    unsigned char *at = s->fields.data + s->fields.len;
    if (name_len) memcpy(at, name, name_len);
    at[name_len] = 0;
    at += name_len + 1;
    if (value_len) memcpy(at, value, value_len);
    at[value_len] = 0;
    s->fields.len += name_len + value_len + 2;
    s->spans[s->header_count++] = span;
    request_hold(c, s, bytes);
    return HEADER_ADDED;
}

header_result request_extend_header(connection *c, stream *s, bool value, const char *at, size_t more) {
    header_span *h = &s->spans[s->header_count - 1];
    s->header_bytes += more;
    if (s->header_bytes > MAX_HEADER_BYTES) return HEADER_BLOCK_TOO_LARGE;
    if (c->held + more > CONNECTION_HELD_BYTES) return HELD_TOO_MUCH;
    if (!value && h->value_len) return HEADER_NO_MEMORY; /* a name goes on only before its value */
    /* The piece extended is the last text in the fields: its NUL goes, the piece and a
       NUL follow (for a name, the empty value's NUL after it too). */
    s->fields.len = value ? h->value + h->value_len : h->name + h->name_len;
    if (value) {
        if (append_text(s, at, more) != 0) return HEADER_NO_MEMORY;
        h->value_len += more;
    } else {
        if (append_text(s, at, more) != 0 || append_text(s, "", 0) != 0) return HEADER_NO_MEMORY;
        h->name_len += more;
        h->value = h->name + h->name_len + 1;
    }
    request_hold(c, s, more);
    return HEADER_ADDED;
}

char *request_header_name(const stream *s, size_t i) { return (char *)s->fields.data + s->spans[i].name; }

const char *request_header_value(const stream *s, size_t i) { return (char *)s->fields.data + s->spans[i].value; }

void request_answer(connection *c, stream *s, int refusal) {
    if (s->answered) return;
    s->answered = true;
    if (refusal) {
        answer_set_empty(&s->answer, refusal);
    } else {
        /* The headers as the handler reads them, for the call only. */
        cx_http_header inline_headers[INLINE_HEADERS];
        cx_http_header *headers =
            s->header_count <= INLINE_HEADERS ? inline_headers : malloc(s->header_count * sizeof *headers);
        if (!headers) {
            answer_set_empty(&s->answer, 500);
            release(c, s);
            return;
        }
        for (size_t i = 0; i < s->header_count; i++)
            headers[i] = (cx_http_header){request_header_name(s, i), s->spans[i].name_len,
                                          request_header_value(s, i), s->spans[i].value_len, false};
        cx_http_request request = {
            .door = c->door,
            .server_name = c->server_name[0] ? c->server_name : NULL,
            .tls = c->tls,
            .http2 = c->app == APP_HTTP2,
            .headers = headers,
            .header_count = s->header_count,
            .body = s->body.data,
            .body_len = s->body.len,
        };
        c->door->handler(c->door->context, &request, &s->answer);
        if (headers != inline_headers) free(headers);
        if (!s->answer.status && !s->answer.fault) answer_set_empty(&s->answer, 500); /* it set nothing */
    }
    release(c, s);
}
