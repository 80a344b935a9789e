/* HTTP/2 by nghttp2 (transport.h).

   Bounds, beside the connection's: at most MAX_STREAMS concurrent streams; nghttp2's
   own limits on what a flood makes it queue (acks of PING and SETTINGS, resets,
   settings entries, CONTINUATION frames), which close the connection when passed;
   and flow control that nghttp2 no longer runs by itself. The window a client may fill
   is given back as its bytes are taken, but only while the connection and the door
   hold less than their bounds (request.c): a client with many unfinished bodies is
   made to wait by HTTP/2's own means, holding at most the bound plus one window.
   Output is drained from nghttp2 only while the connection's unsent output is under
   OUTPUT_PAUSE_BYTES: a client that does not read leaves its answers and acks in
   nghttp2's queue, where its outbound limits find a flood. */
#include "transport.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_STREAMS = 1000 };

static ssize_t read_answer_body(nghttp2_session *session, int32_t stream_id, uint8_t *out, size_t length,
                                uint32_t *flags, nghttp2_data_source *source, void *user_data) {
    (void)session, (void)stream_id, (void)user_data;
    stream *s = source->ptr;
    size_t left = s->answer.body.len - s->sent;
    if (left == 0 && s->streaming && !s->ended) return NGHTTP2_ERR_DEFERRED; /* more is written later */
    size_t n = left < length ? left : length;
    memcpy(out, s->answer.body.data + s->sent, n);
    s->sent += n;
    if (s->sent == s->answer.body.len) {
        if (s->streaming) { /* what was sent is gone: the next pieces start the buffer again */
            s->answer.body.len = 0;
            s->sent = 0;
        }
        if (!s->streaming || s->ended) *flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return (ssize_t)n;
}

void http2_submit_answer(connection *c, stream *s) {
    /* Three digits by hand: snprintf was ~650 instructions of every answer. */
    int code = s->answer.status >= 100 && s->answer.status <= 999 ? s->answer.status : 500;
    char status[3] = {(char)('0' + code / 100), (char)('0' + code / 10 % 10), (char)('0' + code % 10)};
    size_t count = s->answer.header_count + 1;
    /* nghttp2 copies the pairs it is given, so an answer's few fit on the stack. */
    nghttp2_nv inline_nva[8];
    nghttp2_nv *nva = count <= sizeof inline_nva / sizeof *inline_nva ? inline_nva : calloc(count, sizeof *nva);
    if (!nva) {
        nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
        return;
    }
    nva[0] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)status, 7, 3, NGHTTP2_NV_FLAG_NONE};
    /* A value that never repeats (an id) is kept out of HPACK's dynamic table: there it
       would push out the values that do repeat, and nghttp2 compares every entry of the
       same name on each later lookup (~100 memcmp an APNs answer once the table is full
       of apns-ids). */
    for (size_t i = 0; i < s->answer.header_count; i++) {
        const cx_http_header *h = &s->answer.headers[i];
        nva[i + 1] = (nghttp2_nv){(uint8_t *)h->name, (uint8_t *)h->value, h->name_len, h->value_len,
                                  h->unique ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE};
    }
    nghttp2_data_provider provider = {.source.ptr = s, .read_callback = read_answer_body};
    /* Answered before its request ended (413, 431), nghttp2 resets the stream with
       NO_ERROR once the answer is sent, as RFC 9113 8.1 lets a server. */
    nghttp2_submit_response(c->h2, s->id, nva, count, s->answer.body.len || s->streaming ? &provider : NULL);
    if (nva != inline_nva) free(nva);
}

void http2_stream_more(connection *c, stream *s) { nghttp2_session_resume_data(c->h2, s->id); }

void http2_reset(connection *c, stream *s) {
    nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
}

/* The transport fault the stream's answer chose, done instead of answering; whether
   there was one. After a GOAWAY nghttp2 wants neither to read nor to write once the
   other streams are done, and the connection closes (http2_flush). */
bool http2_fault(connection *c, stream *s) {
    switch (s->answer.fault) {
    case CX_FAULT_GOAWAY:
        /* Once it is sent, nghttp2 closes the streams above the last id itself. */
        nghttp2_submit_goaway(c->h2, NGHTTP2_FLAG_NONE, s->id > 2 ? s->id - 2 : 0, NGHTTP2_NO_ERROR, NULL, 0);
        return true;
    case CX_FAULT_RST_STREAM:
        nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_REFUSED_STREAM);
        return true;
    case CX_FAULT_CLOSE:
        c->closing = c->discard = true;
        return true;
    default: return false;
    }
}

/* Answers a complete request: now, or later when its handler chose to, or with the
   transport fault it chose instead. */
static void answer(connection *c, stream *s, int refusal) {
    request_answer(c, s, refusal);
    if (http2_fault(c, s)) return;
    if (s->answer.later) later_park(c, s);
    if (!s->answer.later) http2_submit_answer(c, s);
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    connection *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    stream *s = stream_new(c);
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
    (void)flags;
    connection *c = user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s || s->answered || s->refusal) return 0;
    switch (request_add_header(c, s, (const char *)name, name_len, (const char *)value, value_len)) {
    case HEADER_ADDED: return 0;
    case HEADER_BLOCK_TOO_LARGE: s->refusal = 431; return 0;
    case HELD_TOO_MUCH: s->refusal = REFUSE_STREAM; return 0;
    case HEADER_NO_MEMORY: break;
    }
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data,
                         size_t len, void *user_data) {
    (void)flags;
    connection *c = user_data;
    /* A stream's own window is given back at once: its body is bounded by MAX_BODY_BYTES. */
    nghttp2_session_consume_stream(session, stream_id, len);
    stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!s || s->answered || s->refusal) {
        nghttp2_session_consume_connection(session, len); /* dropped: nothing is held */
        return 0;
    }
    if (s->body.len + len > MAX_BODY_BYTES) {
        request_answer(c, s, 413);
        http2_submit_answer(c, s);
        nghttp2_session_consume_connection(session, len);
        return 0;
    }
    if (request_append_body(c, s, data, len) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (!c->owed && request_holding_room(c)) nghttp2_session_consume_connection(session, len);
    else c->owed += len;
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    connection *c = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
    stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s || s->answered) return 0;
    if (s->refusal == REFUSE_STREAM) {
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_REFUSED_STREAM);
        s->answered = true;
    } else if (s->refusal || (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        answer(c, s, s->refusal);
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
    (void)error_code;
    connection *c = user_data;
    stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (s) {
        if (s->answer.later) later_forget_stream(c, s);
        nghttp2_session_set_stream_user_data(session, stream_id, NULL);
        if (s->prev) s->prev->next = s->next;
        else c->streams = s->next;
        if (s->next) s->next->prev = s->prev;
        stream_free(c, s);
    }
    return 0;
}

static int start(connection *c) {
    nghttp2_session_callbacks *callbacks;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) return -1;
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    nghttp2_option *options;
    if (nghttp2_option_new(&options) != 0) {
        nghttp2_session_callbacks_del(callbacks);
        return -1;
    }
    nghttp2_option_set_no_auto_window_update(options, 1);
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

void http2_settle_window(connection *c) {
    if (!c->h2 || !c->owed || !request_holding_room(c)) return;
    nghttp2_session_consume_connection(c->h2, c->owed);
    c->owed = 0;
}

void http2_flush(connection *c) {
    if (!c->h2) return;
    while (c->out.len < OUTPUT_PAUSE_BYTES) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->h2, &data);
        if (n < 0) {
            c->closing = c->discard = true;
            return;
        }
        if (n == 0) break;
        connection_send(c, data, (size_t)n);
    }
    if (!nghttp2_session_want_read(c->h2) && !nghttp2_session_want_write(c->h2)) c->closing = true;
}

void http2_receive(connection *c, const unsigned char *data, size_t len) {
    if (!c->h2 && start(c) != 0) {
        c->closing = true;
        return;
    }
    ssize_t rv = nghttp2_session_mem_recv(c->h2, data, len);
    if (rv == NGHTTP2_ERR_FLOODED) {
        /* A client that floods and does not read: what it was owed is dropped with it. */
        c->closing = c->discard = true;
        return;
    }
    if (rv < 0) c->closing = true; /* nghttp2 has queued a GOAWAY where one is due */
    http2_settle_window(c);
    http2_flush(c);
}
