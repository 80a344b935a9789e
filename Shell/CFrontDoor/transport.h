/* The front door's transport, inside (front_door.h is its outside): the types every
   layer shares and the calls between layers. One file per layer, each with its own
   limits beside it:

     door.c        the listening socket, the epoll loop, accepting, descriptors
     connection.c  one connection: its first bytes (CONNECT, TLS or clear text), the
                   choice of HTTP/1.1 or HTTP/2, what it may read and must write
     tls.c         OpenSSL through memory BIOs, ALPN
     http1.c       HTTP/1.1 by http-parser, RFC 9112's framing rules
     http2.c       HTTP/2 by nghttp2, flow control and outbound bounds
     request.c     requests being read (their held bytes), the handler, answers
     later.c       answers given later (long polls, streams), from any thread
     buffer.c      a growable byte buffer

   Everything runs on the door's one thread. */
#ifndef CX_FRONT_DOOR_TRANSPORT_H
#define CX_FRONT_DOOR_TRANSPORT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4, memmem, memrchr, strndup */
#endif

#include "front_door.h"

#include <http_parser.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

enum {
    MAX_CONNECTIONS = 1024,
    /* One read from a socket, and one TLS record's plaintext at most. */
    CHUNK = 16384,
    /* A request's header block (HTTP/2 advertises it as SETTINGS_MAX_HEADER_LIST_SIZE). */
    MAX_HEADER_BYTES = 64 * 1024,
    MAX_BODY_BYTES = 1 << 20,
    /* Unsent output past which a connection is not read (HTTP/1.1) and nghttp2's queue
       is not drained into it (HTTP/2, whose own outbound bounds then apply), and past
       which it is closed (connection.c). */
    OUTPUT_PAUSE_BYTES = 256 * 1024,
    OUTPUT_CLOSE_BYTES = 1 << 20,
};

/* ---- buffer.c ---- */

typedef struct buffer {
    unsigned char *data;
    size_t len, cap;
} buffer;

/* Room for `n` more bytes past `len`; -1 when memory runs out (the buffer is as it was). */
int buffer_reserve(buffer *b, size_t n);
int buffer_append(buffer *b, const void *bytes, size_t n);
void buffer_consume(buffer *b, size_t n);
void buffer_free(buffer *b);

/* ---- request.c ---- */

struct cx_http_answer {
    int status;
    cx_http_header *headers;
    size_t header_count;
    buffer body;
    cx_http_later later; /* nonzero: given later (later.c) */
    int64_t wait_ms;
    int fault; /* CX_FAULT_*: sent instead of the answer */
};

/* Where one header's name and value are in its request's `fields`. */
typedef struct header_span {
    size_t name, name_len, value, value_len;
} header_span;

enum { INLINE_HEADERS = 16, MAX_SPARE_STREAMS = 1024 };

/* One request being read (an HTTP/2 stream, or the HTTP/1.1 request in progress),
   then its answer. Its headers and body are "held" until the handler has seen them:
   those bytes are counted per connection and door-wide, and bounded (request.c).
   The headers' names and values are kept in one buffer, each followed by a NUL, in the
   order they came (so the last one can be extended in place), with their spans beside
   it: a request costs a few allocations, not two per header. */
typedef struct stream {
    int32_t id;
    buffer fields;
    header_span *spans; /* `inline_spans` until more headers come */
    header_span inline_spans[INLINE_HEADERS];
    size_t header_count, header_cap, header_bytes;
    buffer body;
    size_t held;        /* bytes of headers and body counted as held */
    bool answered;      /* the handler (or a refusal) has answered: what arrives after is dropped */
    int refusal;        /* a status to answer instead of the handler, or REFUSE_STREAM, once its headers end */
    cx_http_answer answer;
    size_t sent;
    bool streaming, ended; /* an answer given later as a stream, and whether it has ended */
    bool close_after;      /* HTTP/1.1: the connection closes after this answer */
    struct stream *prev, *next; /* the connection's open HTTP/2 streams */
} stream;

typedef struct connection connection;

/* An HTTP/2 stream refused outright (RST_STREAM REFUSED_STREAM: the client may retry). */
enum { REFUSE_STREAM = -1 };

/* A request's stream, zeroed; freed, it is kept for the next (at most MAX_SPARE_STREAMS
   of them, the door's thread only) until stream_free_spares. */
stream *stream_new(connection *c);
void stream_free(connection *c, stream *s);
void stream_free_spares(cx_front_door *door);
/* Adds a header, counting its bytes against the request's header block and the
   connection's held bytes; the caller refuses the request when a bound is passed. */
typedef enum { HEADER_ADDED, HEADER_BLOCK_TOO_LARGE, HELD_TOO_MUCH, HEADER_NO_MEMORY } header_result;
header_result request_add_header(connection *c, stream *s, const char *name, size_t name_len, const char *value,
                                 size_t value_len);
/* Extends the last header's name (while its value is empty) or value with a piece
   HTTP/1.1's parser handed over, counted as request_add_header counts. */
header_result request_extend_header(connection *c, stream *s, bool value, const char *at, size_t more);
/* Header `i`'s name and value, NUL-terminated; valid until the next header is added or
   extended. The name may be changed in place (HTTP/1.1 lowercases it). */
char *request_header_name(const stream *s, size_t i);
const char *request_header_value(const stream *s, size_t i);
/* Appends to the request's body, counting the memory it takes as held: 0, or -1. */
int request_append_body(connection *c, stream *s, const unsigned char *data, size_t len);
/* Whether the connection, and the door as a whole, hold less than their bounds. */
bool request_holding_room(const connection *c);
/* Hands the complete request to the handler (or answers `refusal` without it, when it
   is not 0), then frees what it held: only the answer stays. */
void request_answer(connection *c, stream *s, int refusal);
void answer_set_empty(cx_http_answer *answer, int status);
/* Frees an answer's headers and body (its status stays). */
void answer_clear(cx_http_answer *answer);

/* ---- connection.c ---- */

/* What runs inside the (clear or TLS) byte stream, once the first bytes told. */
typedef enum { APP_UNDECIDED, APP_HTTP2, APP_HTTP1 } app_protocol;

struct connection {
    int fd;
    cx_front_door *door;
    time_t last_activity; /* CLOCK_MONOTONIC seconds of the last byte read or written */
    bool decided, tls, closing;
    bool discard;  /* close without waiting for the unsent output (a client that does not read) */
    bool peer_done; /* the client sent all it will (EOF): close once its answers given later went out */
    uint32_t watched; /* the epoll events it is registered for */
    SSL *ssl;
    BIO *rbio, *wbio;
    app_protocol app;
    nghttp2_session *h2;
    size_t owed; /* HTTP/2 DATA bytes received but not yet given back as connection window */
    http_parser h1;
    stream *h1_request; /* the HTTP/1.1 request being read */
    stream *h1_waiting; /* the HTTP/1.1 request whose answer is given later: the parser waits */
    buffer h1_input;    /* what arrived after it, parsed once it is answered */
    size_t laters;      /* answers given later on this connection (it is not idle while it has one) */
    bool h1_field_last; /* the last header callback was a name (a value follows) */
    size_t h1_target_bytes;
    buffer in, app_in, out;
    buffer unsealed; /* TLS: plaintext sent this turn, sealed by connection_resume */
    size_t held; /* bytes of requests not yet handed to the handler */
    char server_name[256];
    /* nghttp2_session_del frees its streams without closing them, so the streams a
       connection still has open when it ends are freed from this list. */
    stream *streams;
};

/* Bytes read from the socket. */
void connection_receive(connection *c, const unsigned char *data, size_t len);
/* Plaintext: from TLS, or the clear-text stream after its first bytes. */
void connection_receive_plain(connection *c, const unsigned char *data, size_t len);
/* Bytes for the peer, through TLS when the connection has it. */
void connection_send(connection *c, const void *data, size_t len);
/* Whether the connection may be read now (unsent output and held bytes decide). */
bool connection_wants_read(const connection *c);
/* After output left or held bytes were freed: what the protocol can now send; then,
   through TLS, what the turn sent is sealed onto the output. */
void connection_resume(connection *c);
void connection_close(connection *c);

/* ---- tls.c ---- */

SSL_CTX *tls_context(cx_front_door *door, const char *certificate_file, const char *key_file, char *error,
                     size_t error_size);
void tls_start(connection *c);
void tls_receive(connection *c, const unsigned char *data, size_t len);
/* Plaintext for the peer, held (`unsealed`) until a record's worth or `tls_seal`. */
void tls_send(connection *c, const void *data, size_t len);
/* Seals what `tls_send` holds into records on the connection's output. */
void tls_seal(connection *c);

/* ---- http1.c / http2.c ---- */

void http1_start(connection *c);
void http1_receive(connection *c, const unsigned char *data, size_t len);
/* The answer of the request the parser waits for is complete (sent whole, or a stream
   that ended): the parser goes on with what arrived meanwhile. */
void http1_answer_waiting(connection *c);
void http1_stream_begin(connection *c, stream *s);
/* The room before the bytes that holds the size line of any length. */
enum { HTTP1_WIDEST_CHUNK_HEAD = 18 };
/* `block[head, head + len)` framed as one chunk of a streamed answer where it lies, `out`
   (empty) taking the block (from malloc, `size` bytes): the size line fills the `head`
   bytes before the bytes, in as many hex digits as fit (leading zeros: RFC 9112's
   chunk-size is 1*HEXDIG). Returns `head`; 0 when the room cannot hold the line (fewer
   than 3 bytes, more than HTTP1_WIDEST_CHUNK_HEAD, or too few digits for `len`) or for no
   bytes, and then the block is not taken. */
size_t http1_chunk_in_place(buffer *out, unsigned char *block, size_t head, size_t len, size_t size);
/* Sends a chunk `http1_chunk_in_place` framed, taking `chunk`'s bytes without a copy when the
   connection has nothing else waiting to go (`chunk` is then left empty). */
void http1_stream_write(connection *c, buffer *chunk);
const char *http1_reason_phrase(int status);

void http2_receive(connection *c, const unsigned char *data, size_t len);
void http2_flush(connection *c);
void http2_submit_answer(connection *c, stream *s);
bool http2_fault(connection *c, stream *s);
/* A streamed answer has more to send (or has ended): nghttp2 asks for it again. */
void http2_stream_more(connection *c, stream *s);
void http2_reset(connection *c, stream *s);
void http2_settle_window(connection *c);

/* ---- later.c ---- */

typedef struct later {
    cx_http_later id;
    connection *c;
    stream *s;
    int64_t deadline_ms; /* CLOCK_MONOTONIC; 0: none */
} later;

typedef struct later_op later_op;

/* Twice the most answers held at once (later.c), a power of two. */
enum { LATER_INDEX_SLOTS = 8192 };

/* A complete request whose handler chose to answer later: the door keeps it. */
void later_park(connection *c, stream *s);
/* The connection, or one stream, is gone: its answers given later are dropped. */
void later_forget_connection(connection *c);
void later_forget_stream(connection *c, stream *s);
/* On the door's thread, each turn: what other threads sent, and the deadlines that
   passed. Returns the milliseconds until the next deadline (-1: none). */
int64_t later_turn(cx_front_door *door);
void later_free_all(cx_front_door *door);
int64_t monotonic_ms(void);

/* ---- door.c ---- */

struct cx_front_door {
    int listen_fd;
    int epoll_fd;
    int wake[2];
    pthread_t thread;
    cx_tunnel_filter tunnel_filter;
    cx_handshake_filter handshake_filter;
    bool stopping; /* set once, by cx_front_door_stop, before it wakes the loop */
    SSL_CTX *ctx;
    cx_http_handler handler;
    void *context;
    connection *connections[MAX_CONNECTIONS];
    size_t count;
    size_t held; /* bytes of requests not yet handed to the handler, all connections */
    /* Answers given later: those held (door thread only), found by id through
       `later_index` (open addressing: index + 1 into `laters`, 0 for none), and what
       other threads sent for them, queued under `ops_lock` until the door's thread
       takes it. Every network request is one, so each step is O(1); only the answers
       with a deadline (`later_deadlines` of them) are looked at each turn. An op the
       door has applied goes back to `spare_ops` (under the same lock, at most
       MAX_SPARE_OPS of them), with its body's room, for the next one sent: made on the
       sender's thread and freed on the door's, each op and body took glibc's slow paths
       on both. */
    cx_later_gone later_gone;
    later *laters;
    size_t later_count, later_cap, later_deadlines;
    size_t max_laters; /* at most MAX_HELD_ANSWERS; lower only in tests (cx_front_door_limit_held) */
    uint32_t later_index[LATER_INDEX_SLOTS];
    pthread_mutex_t ops_lock;
    later_op *ops_head, *ops_tail;
    later_op *spare_ops;
    size_t spare_count;
    stream *spare_streams; /* freed streams kept for the next requests (door thread) */
    size_t spare_stream_count;
    size_t open_connections; /* `count`, published for other threads */
};

#endif
