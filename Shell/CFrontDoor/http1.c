/* HTTP/1.1 by http-parser (transport.h).

   Bounds and framing, beside the connection's: a request target of at most
   MAX_TARGET_BYTES however many pieces the parser hands it over in (414), a header
   block of at most MAX_HEADER_BYTES (431), a body of at most MAX_BODY_BYTES (413), and
   header names that are RFC 9110 tokens (400): http-parser, built lenient, takes
   white space inside a name, and RFC 9112 makes `name : value` invalid. Every error
   answers once and closes the connection. */
#include "transport.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A PubNub publish by GET carries its message (up to 32 KiB, escaped) in the target. */
enum { MAX_TARGET_BYTES = 40 * 1024 };

const char *http1_reason_phrase(int status) {
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
    }
}

/* An HTTP/1.1 answer; `close` ends the connection after it. */
static void answer(connection *c, int status, const cx_http_header *headers, size_t count, const buffer *body,
                   bool close) {
    buffer text = {0};
    char line[256];
    int n = snprintf(line, sizeof line, "HTTP/1.1 %03d %s\r\n", status, http1_reason_phrase(status));
    buffer_append(&text, line, (size_t)n);
    for (size_t i = 0; i < count; i++) {
        buffer_append(&text, headers[i].name, headers[i].name_len);
        buffer_append(&text, ": ", 2);
        buffer_append(&text, headers[i].value, headers[i].value_len);
        buffer_append(&text, "\r\n", 2);
    }
    /* A 204 has no body and says nothing of its length (RFC 9110 8.6). */
    n = status == 204 ? snprintf(line, sizeof line, "%s\r\n", close ? "connection: close\r\n" : "")
                      : snprintf(line, sizeof line, "content-length: %zu\r\n%s\r\n", body ? body->len : 0,
                                 close ? "connection: close\r\n" : "");
    buffer_append(&text, line, (size_t)n);
    if (body && body->len) buffer_append(&text, body->data, body->len);
    connection_send(c, text.data, text.len);
    buffer_free(&text);
    if (close) c->closing = true;
}

static stream *request(connection *c) {
    if (!c->h1_request) c->h1_request = stream_new(c);
    return c->h1_request;
}

/* Stops the parser, with the status the request is to be answered. */
static int refuse(stream *s, header_result result) {
    s->refusal = result == HEADER_BLOCK_TOO_LARGE ? 431 : result == HELD_TOO_MUCH ? 503 : 500;
    return -1;
}

static int on_url(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = request(c);
    if (!s) return -1;
    c->h1_target_bytes += len;
    if (c->h1_target_bytes > MAX_TARGET_BYTES) {
        s->refusal = 414;
        return -1;
    }
    header_result result;
    if (s->header_count && strcmp(request_header_name(s, s->header_count - 1), ":path") == 0) {
        result = request_extend_header(c, s, true, at, len);
    } else {
        const char *method = http_method_str((enum http_method)parser->method);
        result = request_add_header(c, s, ":method", 7, method, strlen(method));
        if (result == HEADER_ADDED) result = request_add_header(c, s, ":path", 5, at, len);
    }
    return result == HEADER_ADDED ? 0 : refuse(s, result);
}

/* RFC 9110's tchar: what a header name is made of. */
static bool is_token(const char *text, size_t len) {
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == 0 || (!isalnum(ch) && !strchr("!#$%&'*+-.^_`|~", ch))) return false;
    }
    return true;
}

static int on_header_field(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = request(c);
    if (!s) return -1;
    if (!is_token(at, len)) {
        s->refusal = 400;
        return -1;
    }
    header_result result = c->h1_field_last && s->header_count ? request_extend_header(c, s, false, at, len)
                                                                : request_add_header(c, s, at, len, "", 0);
    if (result != HEADER_ADDED) return refuse(s, result);
    char *name = request_header_name(s, s->header_count - 1);
    for (char *at = name; *at; at++) *at = (char)tolower((unsigned char)*at);
    c->h1_field_last = true;
    return 0;
}

static int on_header_value(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = request(c);
    if (!s || !s->header_count) return -1;
    header_result result = request_extend_header(c, s, true, at, len);
    c->h1_field_last = false;
    return result == HEADER_ADDED ? 0 : refuse(s, result);
}

static int on_body(http_parser *parser, const char *at, size_t len) {
    connection *c = parser->data;
    stream *s = request(c);
    if (!s) return -1;
    if (s->body.len + len > MAX_BODY_BYTES) {
        s->refusal = 413;
        return -1;
    }
    return request_append_body(c, s, (const unsigned char *)at, len);
}

static int on_message_complete(http_parser *parser) {
    connection *c = parser->data;
    stream *s = request(c);
    if (!s) return -1;
    for (size_t i = 0; i < s->header_count; i++) { /* HTTP/2's :authority, from Host */
        if (strcmp(request_header_name(s, i), "host") == 0) {
            /* Copied first: adding a header may move the fields it is in. By its length,
               not as a C string: a value may hold a NUL (strndup stopped there, and the
               copy was read past its end). */
            size_t length = s->spans[i].value_len;
            char *host = malloc(length ? length : 1);
            if (host) memcpy(host, request_header_value(s, i), length);
            header_result result = host ? request_add_header(c, s, ":authority", 10, host, length) : HEADER_NO_MEMORY;
            free(host);
            if (result != HEADER_ADDED) return refuse(s, HEADER_BLOCK_TOO_LARGE);
            break;
        }
    }
    request_answer(c, s, 0);
    if (s->answer.fault) { /* HTTP/1.1 has no GOAWAY or reset: every fault closes, unanswered */
        c->closing = c->discard = true;
        c->h1_request = NULL;
        stream_free(c, s);
        http_parser_pause(parser, 1);
        return 0;
    }
    s->close_after = !http_should_keep_alive(parser);
    c->h1_request = NULL;
    c->h1_field_last = false;
    c->h1_target_bytes = 0;
    if (s->answer.later) later_park(c, s);
    if (s->answer.later) { /* answered later: the next request waits for it, as HTTP/1.1 orders them */
        c->h1_waiting = s;
        http_parser_pause(parser, 1);
        return 0;
    }
    answer(c, s->answer.status, s->answer.headers, s->answer.header_count, &s->answer.body, s->close_after);
    stream_free(c, s);
    return 0;
}

static const http_parser_settings settings = {
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http1_start(connection *c) {
    http_parser_init(&c->h1, HTTP_REQUEST);
    c->h1.data = c;
}

void http1_answer_waiting(connection *c) {
    stream *s = c->h1_waiting;
    if (!s) return;
    if (s->answer.fault) { /* HTTP/1.1 has no GOAWAY or reset: every fault closes, unanswered */
        c->closing = c->discard = true;
        stream_free(c, s);
        c->h1_waiting = NULL;
        return;
    }
    if (s->streaming) {
        connection_send(c, "0\r\n\r\n", 5);
        if (s->close_after) c->closing = true;
    } else {
        answer(c, s->answer.status, s->answer.headers, s->answer.header_count, &s->answer.body, s->close_after);
    }
    stream_free(c, s);
    c->h1_waiting = NULL;
    http_parser_pause(&c->h1, 0);
    buffer rest = c->h1_input;
    c->h1_input = (buffer){0};
    if (rest.len && !c->closing) http1_receive(c, rest.data, rest.len);
    buffer_free(&rest);
}

void http1_stream_begin(connection *c, stream *s) {
    buffer text = {0};
    char line[256];
    int n = snprintf(line, sizeof line, "HTTP/1.1 %03d %s\r\n", s->answer.status, http1_reason_phrase(s->answer.status));
    buffer_append(&text, line, (size_t)n);
    for (size_t i = 0; i < s->answer.header_count; i++) {
        buffer_append(&text, s->answer.headers[i].name, s->answer.headers[i].name_len);
        buffer_append(&text, ": ", 2);
        buffer_append(&text, s->answer.headers[i].value, s->answer.headers[i].value_len);
        buffer_append(&text, "\r\n", 2);
    }
    static const char chunked[] = "transfer-encoding: chunked\r\n\r\n";
    buffer_append(&text, chunked, sizeof chunked - 1);
    connection_send(c, text.data, text.len);
    buffer_free(&text);
}

size_t http1_chunk_in_place(buffer *out, unsigned char *block, size_t head, size_t len, size_t size) {
    if (!len || head < 3 || head > HTTP1_WIDEST_CHUNK_HEAD) return 0;
    size_t digits = head - 2;
    if (digits < 16 && len >> (4 * digits)) return 0;
    size_t end = head + len + 2;
    if (size < end) { /* room for the CRLF after the bytes */
        unsigned char *grown = realloc(block, end);
        if (!grown) return 0;
        block = grown;
        size = end;
    }
    static const char hex[] = "0123456789abcdef";
    size_t value = len;
    for (size_t i = digits; i-- > 0; value >>= 4) block[i] = (unsigned char)hex[value & 15];
    memcpy(block + digits, "\r\n", 2);
    memcpy(block + head + len, "\r\n", 2);
    *out = (buffer){.data = block, .len = end, .cap = size};
    return head;
}

void http1_stream_write(connection *c, buffer *chunk) {
    if (!chunk->len) return;
    if (c->tls || c->out.len) {
        connection_send(c, chunk->data, chunk->len);
        return;
    }
    buffer taken = c->out; /* empty, perhaps with room: the chunk's buffer frees it */
    c->out = *chunk;
    *chunk = taken;
}

void http1_receive(connection *c, const unsigned char *data, size_t len) {
    if (c->h1_waiting) { /* pipelined behind an answer given later */
        buffer_append(&c->h1_input, data, len);
        return;
    }
    size_t parsed = http_parser_execute(&c->h1, &settings, (const char *)data, len);
    if (c->closing) return;
    if (HTTP_PARSER_ERRNO(&c->h1) == HPE_PAUSED) {
        buffer_append(&c->h1_input, data + parsed, len - parsed);
        return;
    }
    if (c->h1.upgrade) {
        /* The request was answered as HTTP/1.1; its Upgrade (h2c's too) is ignored, as a
           server may: HTTP/2 in clear text needs prior knowledge. */
        http1_start(c);
        if (parsed < len) http1_receive(c, data + parsed, len - parsed);
    } else if (parsed != len || HTTP_PARSER_ERRNO(&c->h1) != HPE_OK) {
        int refusal = c->h1_request && c->h1_request->refusal ? c->h1_request->refusal : 400;
        answer(c, refusal, NULL, 0, NULL, true);
    }
}
