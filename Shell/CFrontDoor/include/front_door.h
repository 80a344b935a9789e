#ifndef CX_FRONT_DOOR_H
#define CX_FRONT_DOOR_H

/* The front door's transport: one listening port that takes an HTTPS proxy's CONNECT
   (to the hosts it is given), TLS (ALPN h2 and http/1.1), clear-text HTTP/2 with prior
   knowledge and clear-text HTTP/1.1, and hands each complete request to a handler. It
   knows no service: bytes → TLS (OpenSSL) → HTTP/2 frames (nghttp2) or HTTP/1.1
   messages (http-parser) → requests. One thread runs every connection; the handler
   runs on it. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cx_http_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
    /* In an answer: the value is made for this answer alone (an id), and HTTP/2 sends it
       as a literal never indexed, out of the connection's HPACK table. False in requests. */
    bool unique;
} cx_http_header;

/* One complete request. Pointers are valid during the handler call only. The
   pseudo-headers (:method, :path, :authority, :scheme) come first, as HTTP/2 sent them
   or as made from an HTTP/1.1 request line and Host; names are lowercase.
   `server_name` is the TLS SNI, else the host a CONNECT tunnel was opened to, else NULL. */
typedef struct cx_front_door cx_front_door;

typedef struct cx_http_request {
    cx_front_door *door; /* the door it came through (for an answer given later) */
    const char *server_name;
    bool tls;
    bool http2;
    const cx_http_header *headers;
    size_t header_count;
    const unsigned char *body;
    size_t body_len;
} cx_http_request;

/* The handler fills the answer: a status, headers (copied) and a body (copied). */
typedef struct cx_http_answer cx_http_answer;
void cx_http_answer_set(cx_http_answer *answer, int status, const cx_http_header *headers, size_t header_count,
                        const unsigned char *body, size_t body_len);

/* Instead of the answer, a transport fault (chaos.md): CX_FAULT_GOAWAY sends HTTP/2
   GOAWAY with a last stream id below the request's, so the client retries it on a new
   connection; CX_FAULT_RST_STREAM
   resets the stream with REFUSED_STREAM; CX_FAULT_CLOSE closes the TCP connection with
   no answer. Over HTTP/1.1 each of them closes the connection with no answer. */
enum { CX_FAULT_NONE = 0, CX_FAULT_GOAWAY = 1, CX_FAULT_RST_STREAM = 2, CX_FAULT_CLOSE = 3 };
void cx_http_answer_fault(cx_http_answer *answer, int fault);

typedef void (*cx_http_handler)(void *context, const cx_http_request *request, cx_http_answer *answer);

/* An answer given later (a long poll, a stream of events), named by an id that is
   never 0. The handler sets the answer to send if `wait_ms` pass first (0: no
   deadline) and calls cx_http_answer_later; the real answer then comes from any
   thread, through cx_front_door_complete, or as a stream: cx_front_door_stream_begin,
   _write, _end. An answer given later for a client that has gone is dropped. */
typedef uint64_t cx_http_later;
/* Returns the answer's id, or 0 when the door holds as many as it may (the answer
   set is then sent at once). */
cx_http_later cx_http_answer_later(cx_http_answer *answer, int64_t wait_ms);
/* Takes back cx_http_answer_later, in the handler: the answer set goes out now. */
void cx_http_answer_later_cancel(cx_http_answer *answer);

/* Called on the door's thread when an answer given later will take nothing more: it
   was sent at its deadline, or its client went away (the connection closed, the
   stream was reset, or a stream's unsent pieces passed their bound). */
typedef void (*cx_later_gone)(void *context, cx_http_later id);

/* Whether a CONNECT to `host` is allowed (else it is answered 403). */
typedef bool (*cx_tunnel_filter)(void *context, const char *host);

/* Whether a TLS handshake for `server_name` (the SNI, else the CONNECT target, else "")
   may go on; false makes it fail with a handshake_failure alert (a chaos rule's
   tls_fail). NULL: every handshake goes on. */
typedef bool (*cx_handshake_filter)(void *context, const char *server_name);

/* Listens on `address` (an IPv4 or IPv6 literal) and `port` (0: any free one), with
   the certificate chain and key in PEM files, and serves on a thread of its own.
   Returns 0 with *out and *bound_port set, or -1 with a sentence in `error`. */
int cx_front_door_start(const char *address, int port, const char *certificate_file, const char *key_file,
                        cx_http_handler handler, cx_tunnel_filter tunnel_filter, cx_handshake_filter handshake_filter,
                        cx_later_gone later_gone, void *context,
                        cx_front_door **out, int *bound_port, char *error, size_t error_size);

/* From any thread: the answer `id` is this (headers and body are copied). */
void cx_front_door_complete(cx_front_door *door, cx_http_later id, int status, const cx_http_header *headers,
                            size_t header_count, const unsigned char *body, size_t body_len);
/* From any thread: the answer `id` is decided, as a handler decides its answer on the
   door's thread: this answer, or the transport fault `fault` (CX_FAULT_*) instead; with
   `hold_ms` >= 0 it is not sent yet but held as the answer to send at that deadline (0:
   none), unless cx_front_door_complete or a stream answers first. How a handler that hands
   its requests to another thread (cx_http_answer_later with no deadline) answers them. */
void cx_front_door_settle(cx_front_door *door, cx_http_later id, int status, const cx_http_header *headers,
                          size_t header_count, const unsigned char *body, size_t body_len, int fault,
                          int64_t hold_ms);
/* From any thread: the answer `id` is a stream: its status and headers now, then each
   piece as written (HTTP/2 DATA frames; HTTP/1.1 chunks), until it ends. */
void cx_front_door_stream_begin(cx_front_door *door, cx_http_later id, int status, const cx_http_header *headers,
                                size_t header_count);
/* A piece: the `len` bytes `head` bytes into `block`, a block from malloc of `size` bytes
   that the door takes and frees (whatever happens to the stream). With 3 to 18 bytes of
   room before the bytes (10 hold the size line of any piece under 4 GiB) the HTTP/1.1
   chunk's size line is written there, and a clear-text connection with nothing else to
   send sends the block as it is; without, the piece is copied. */
void cx_front_door_stream_write(cx_front_door *door, cx_http_later id, void *block, size_t head, size_t len,
                                size_t size);
void cx_front_door_stream_end(cx_front_door *door, cx_http_later id);

/* The most answers given later held at once: long polls, streams, answers held by a
   deadline, and every request a handler hands to another thread. */
enum { MAX_HELD_ANSWERS = 4096 };
/* In the handler (door thread): whether an answer given later can be held now. A
   handler that hands its request on asks this first, so that a request it took is
   always answered with its own answer; past the bound it answers at once instead. */
bool cx_front_door_can_hold(cx_front_door *door);
/* Lowers the bound (at most MAX_HELD_ANSWERS), so that tests reach it with few requests. */
void cx_front_door_limit_held(cx_front_door *door, size_t most);

/* How many connections are open now (any thread; a moment's figure). */
size_t cx_front_door_connections(cx_front_door *door);

/* Closes every connection and the port, joins the thread, and frees the door (a
   detached one too). */
void cx_front_door_stop(cx_front_door *door);

/* For fuzzing the transport without sockets: a door that does not listen, and one
   connection's whole input run through it (in reads of at most `chunk` bytes). Returns
   how many bytes it would have sent back. */
cx_front_door *cx_front_door_detached(const char *certificate_file, const char *key_file, cx_http_handler handler,
                                      cx_tunnel_filter tunnel_filter, void *context);
size_t cx_front_door_feed(cx_front_door *door, const unsigned char *data, size_t len, size_t chunk);

#endif
