/* Answers given later (front_door.h): long polls and streams of events.

   The handler runs on the door's thread and may leave its answer open; the door keeps
   the request (`later`) and what other threads send for it arrives through a queue
   under a lock, with a byte on the wake pipe. Bounds: at most MAX_LATERS open at once
   (past that the handler's own answer is sent at once); a stream whose unsent pieces
   pass MAX_STREAM_BUFFER is dropped (a client that does not read); an open answer
   keeps its connection from counting as idle. */
#include "transport.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A spare op keeps its body's room, up to SPARE_BODY_ROOM bytes, for the next answer. */
enum { MAX_LATERS = MAX_HELD_ANSWERS, MAX_STREAM_BUFFER = 1 << 20, MAX_SPARE_OPS = 1024, SPARE_BODY_ROOM = 4096 };
_Static_assert(LATER_INDEX_SLOTS >= 2 * MAX_LATERS, "the index stays at most half full");

bool cx_front_door_can_hold(cx_front_door *door) {
    return door->later_count < __atomic_load_n(&door->max_laters, __ATOMIC_RELAXED) && door->later_gone;
}

void cx_front_door_limit_held(cx_front_door *door, size_t most) {
    __atomic_store_n(&door->max_laters, most < MAX_LATERS ? most : MAX_LATERS, __ATOMIC_RELAXED);
}

typedef enum { OP_COMPLETE, OP_SETTLE, OP_BEGIN, OP_WRITE, OP_END } op_kind;

struct later_op {
    op_kind kind;
    cx_http_later id;
    /* Status, headers and body; for OP_WRITE, the piece framed as an HTTP/1.1 chunk
       (where it lies in the writer's block, or in a copy with room, so that HTTP/1's
       connection takes the bytes as they are), its size line `chunk_head` bytes long;
       HTTP/2 reads the piece inside. */
    cx_http_answer answer;
    size_t chunk_head;
    int fault;             /* OP_SETTLE: CX_FAULT_* */
    int64_t hold_ms;       /* OP_SETTLE: < 0 send now; else hold, with this deadline (0: none) */
    later_op *next;
};

int64_t monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Ids are unique in the process, so one never names another door's answer. */
static cx_http_later last_id;

cx_http_later cx_http_answer_later(cx_http_answer *answer, int64_t wait_ms) {
    answer->later = __atomic_add_fetch(&last_id, 1, __ATOMIC_RELAXED);
    answer->wait_ms = wait_ms > 0 ? wait_ms : 0;
    return answer->later;
}

void cx_http_answer_later_cancel(cx_http_answer *answer) {
    answer->later = 0;
    answer->wait_ms = 0;
}

/* The index's home slot for an id: ids are handed out in sequence, so a multiplier
   spreads neighbours apart. */
static size_t home(cx_http_later id) { return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 51) & (LATER_INDEX_SLOTS - 1); }

/* The index slot that holds `id`, or the empty one where it would go. */
static size_t slot_of(const cx_front_door *door, cx_http_later id) {
    size_t slot = home(id);
    while (door->later_index[slot] && door->laters[door->later_index[slot] - 1].id != id)
        slot = (slot + 1) & (LATER_INDEX_SLOTS - 1);
    return slot;
}

static later *find(cx_front_door *door, cx_http_later id) {
    uint32_t entry = door->later_index[slot_of(door, id)];
    return entry ? &door->laters[entry - 1] : NULL;
}

/* Empties an index slot, moving later entries of its probe run back so that every id
   stays reachable from its home slot (linear probing's deletion). */
static void unindex(cx_front_door *door, size_t slot) {
    size_t hole = slot;
    for (size_t next = (hole + 1) & (LATER_INDEX_SLOTS - 1); door->later_index[next];
         next = (next + 1) & (LATER_INDEX_SLOTS - 1)) {
        size_t want = home(door->laters[door->later_index[next] - 1].id);
        /* It may fill the hole when its home is not in (hole, next]. */
        if (((next - want) & (LATER_INDEX_SLOTS - 1)) >= ((next - hole) & (LATER_INDEX_SLOTS - 1))) {
            door->later_index[hole] = door->later_index[next];
            hole = next;
        }
    }
    door->later_index[hole] = 0;
}

static void set_deadline(cx_front_door *door, later *l, int64_t deadline_ms) {
    door->later_deadlines += (deadline_ms != 0) - (l->deadline_ms != 0);
    l->deadline_ms = deadline_ms;
}

/* Removes a held answer; `gone`: tell the handler's side it will take nothing more. */
static void drop(cx_front_door *door, later *l, bool gone) {
    cx_http_later id = l->id;
    l->c->laters--;
    set_deadline(door, l, 0);
    unindex(door, slot_of(door, id));
    size_t last = --door->later_count;
    if (l != &door->laters[last]) { /* the last entry fills its place */
        *l = door->laters[last];
        door->later_index[slot_of(door, l->id)] = (uint32_t)(l - door->laters) + 1;
    }
    if (gone && door->later_gone) door->later_gone(door->context, id);
}

/* Sends the answer the stream now has (h2), or the one the HTTP/1.1 parser waits for. */
static void send_now(connection *c, stream *s) {
    if (c->app == APP_HTTP2) http2_submit_answer(c, s);
    else http1_answer_waiting(c);
}

/* Refuses to hold an answer: the handler's own goes now, and its side is told. */
static void refuse(connection *c, stream *s) {
    cx_http_later id = s->answer.later;
    s->answer.later = 0;
    if (c->door->later_gone) c->door->later_gone(c->door->context, id);
}

void later_park(connection *c, stream *s) {
    cx_front_door *door = c->door;
    if (!cx_front_door_can_hold(door)) return refuse(c, s);
    if (door->later_count == door->later_cap) {
        size_t cap = door->later_cap ? door->later_cap * 2 : 16;
        later *grown = realloc(door->laters, cap * sizeof *grown);
        if (!grown) return refuse(c, s);
        door->laters = grown;
        door->later_cap = cap;
    }
    cx_http_later id = s->answer.later;
    later *l = &door->laters[door->later_count++];
    *l = (later){id, c, s, 0};
    set_deadline(door, l, s->answer.wait_ms ? monotonic_ms() + s->answer.wait_ms : 0);
    door->later_index[slot_of(door, id)] = (uint32_t)door->later_count;
    c->laters++;
}

void later_forget_connection(connection *c) {
    cx_front_door *door = c->door;
    for (size_t i = 0; i < door->later_count;) {
        if (door->laters[i].c == c) drop(door, &door->laters[i], true);
        else i++;
    }
}

void later_forget_stream(connection *c, stream *s) {
    later *l = find(c->door, s->answer.later);
    if (l && l->s == s) drop(c->door, l, true);
}

static void queue(cx_front_door *door, later_op *op) {
    pthread_mutex_lock(&door->ops_lock);
    bool first = !door->ops_head; /* the door takes the whole queue at once: one wake-up does */
    if (door->ops_tail) door->ops_tail->next = op;
    else door->ops_head = op;
    door->ops_tail = op;
    pthread_mutex_unlock(&door->ops_lock);
    if (first && door->wake[1] >= 0) {
        ssize_t ignored = write(door->wake[1], "o", 1); /* non-blocking: a full pipe already wakes it */
        (void)ignored;
    }
}

/* A spare op the door gave back, emptied but for its body's room, or a new one. */
static later_op *op_take(cx_front_door *door) {
    pthread_mutex_lock(&door->ops_lock);
    later_op *op = door->spare_ops;
    if (op) {
        door->spare_ops = op->next;
        door->spare_count--;
    }
    pthread_mutex_unlock(&door->ops_lock);
    if (!op) return calloc(1, sizeof *op);
    buffer room = op->answer.body;
    *op = (later_op){0};
    op->answer.body = room;
    return op;
}

static void op_free(later_op *op) {
    answer_clear(&op->answer);
    free(op);
}

static later_op *op_new(cx_front_door *door, op_kind kind, cx_http_later id, int status,
                        const cx_http_header *headers, size_t count, const unsigned char *body, size_t len) {
    later_op *op = op_take(door);
    if (!op) return NULL;
    op->kind = kind;
    op->id = id;
    if (kind == OP_COMPLETE || kind == OP_SETTLE || kind == OP_BEGIN) cx_http_answer_set(&op->answer, status, headers, count, body, len);
    else buffer_free(&op->answer.body); /* a piece streamed brings its own block */
    return op;
}

void cx_front_door_complete(cx_front_door *door, cx_http_later id, int status, const cx_http_header *headers,
                            size_t header_count, const unsigned char *body, size_t body_len) {
    later_op *op = op_new(door, OP_COMPLETE, id, status, headers, header_count, body, body_len);
    if (op) queue(door, op);
}

void cx_front_door_settle(cx_front_door *door, cx_http_later id, int status, const cx_http_header *headers,
                          size_t header_count, const unsigned char *body, size_t body_len, int fault,
                          int64_t hold_ms) {
    later_op *op = op_new(door, OP_SETTLE, id, status, headers, header_count, body, body_len);
    if (!op) return;
    op->fault = fault;
    op->hold_ms = hold_ms;
    queue(door, op);
}

void cx_front_door_stream_begin(cx_front_door *door, cx_http_later id, int status, const cx_http_header *headers,
                                size_t header_count) {
    later_op *op = op_new(door, OP_BEGIN, id, status, headers, header_count, NULL, 0);
    if (op) queue(door, op);
}

void cx_front_door_stream_write(cx_front_door *door, cx_http_later id, void *block, size_t head, size_t len,
                                size_t size) {
    later_op *op = op_new(door, OP_WRITE, id, 0, NULL, 0, NULL, 0);
    if (!op) {
        free(block);
        return;
    }
    op->chunk_head = http1_chunk_in_place(&op->answer.body, block, head, len, size);
    if (!op->chunk_head) { /* no room to frame it where it lies: copied into a block with room */
        size_t copy_size = HTTP1_WIDEST_CHUNK_HEAD + len + 2;
        unsigned char *copy = len ? malloc(copy_size) : NULL;
        if (copy) {
            memcpy(copy + HTTP1_WIDEST_CHUNK_HEAD, (const unsigned char *)block + head, len);
            op->chunk_head = http1_chunk_in_place(&op->answer.body, copy, HTTP1_WIDEST_CHUNK_HEAD, len, copy_size);
        }
        free(block);
    }
    queue(door, op);
}

void cx_front_door_stream_end(cx_front_door *door, cx_http_later id) {
    later_op *op = op_new(door, OP_END, id, 0, NULL, 0, NULL, 0);
    if (op) queue(door, op);
}

/* The stream's answer becomes the op's status and headers (and body, when `body`). */
static void take_answer(stream *s, later_op *op, bool body) {
    answer_clear(&s->answer);
    s->answer.status = op->answer.status;
    s->answer.headers = op->answer.headers;
    s->answer.header_count = op->answer.header_count;
    op->answer.headers = NULL;
    op->answer.header_count = 0;
    if (body && op->answer.body.len) {
        /* Copied on the door's thread, which frees it with the stream, and the op keeps
           its room: made on the sender's thread and freed on the door's, every answer's
           body took glibc's slow paths on both. Moved when there is no memory for a copy. */
        if (buffer_append(&s->answer.body, op->answer.body.data, op->answer.body.len) == 0) {
            op->answer.body.len = 0;
        } else {
            s->answer.body = op->answer.body;
            op->answer.body = (buffer){0};
        }
    }
}

static void apply(cx_front_door *door, later_op *op) {
    later *l = find(door, op->id);
    if (!l) return; /* its client went away, or it was already answered */
    connection *c = l->c;
    stream *s = l->s;
    switch (op->kind) {
    case OP_COMPLETE:
        if (s->streaming) return;
        take_answer(s, op, true);
        drop(door, l, false);
        send_now(c, s);
        return;
    case OP_SETTLE:
        if (s->streaming) return;
        take_answer(s, op, true);
        s->answer.fault = op->fault;
        if (op->hold_ms >= 0 && !op->fault) { /* held: a later op, or the deadline, sends it */
            set_deadline(door, l, op->hold_ms ? monotonic_ms() + op->hold_ms : 0);
            return;
        }
        drop(door, l, false);
        if (c->app == APP_HTTP2 && http2_fault(c, s)) return;
        send_now(c, s);
        return;
    case OP_BEGIN:
        if (s->streaming) return;
        take_answer(s, op, false);
        s->streaming = true;
        set_deadline(door, l, 0);
        if (c->app == APP_HTTP2) http2_submit_answer(c, s);
        else http1_stream_begin(c, s);
        return;
    case OP_WRITE:
        if (!s->streaming || s->ended) return;
        if (c->app == APP_HTTP2) {
            size_t len = op->answer.body.len ? op->answer.body.len - op->chunk_head - 2 : 0;
            if (s->answer.body.len - s->sent + len > MAX_STREAM_BUFFER) {
                drop(door, l, true);
                http2_reset(c, s);
                return;
            }
            buffer_append(&s->answer.body, op->answer.body.data + op->chunk_head, len);
            http2_stream_more(c, s);
        } else {
            http1_stream_write(c, &op->answer.body);
        }
        return;
    case OP_END:
        if (!s->streaming || s->ended) return;
        s->ended = true;
        drop(door, l, false);
        if (c->app == APP_HTTP2) http2_stream_more(c, s);
        else http1_answer_waiting(c);
        return;
    }
}

static void free_ops(later_op *op) {
    while (op) {
        later_op *next = op->next;
        op_free(op);
        op = next;
    }
}

/* Applies a list of ops and gives them back as spares, one lock for the list, as many as
   MAX_SPARE_OPS leaves room for; the rest are freed. */
static void take_ops(cx_front_door *door, later_op *op) {
    later_op *spares = NULL;
    while (op) {
        later_op *next = op->next;
        apply(door, op);
        free(op->answer.headers);
        op->answer.headers = NULL;
        op->answer.header_count = 0;
        if (op->answer.body.cap > SPARE_BODY_ROOM) buffer_free(&op->answer.body);
        op->answer.body.len = 0;
        op->next = spares;
        spares = op;
        op = next;
    }
    if (!spares) return;
    pthread_mutex_lock(&door->ops_lock);
    size_t room = door->spare_count < MAX_SPARE_OPS ? MAX_SPARE_OPS - door->spare_count : 0;
    if (room) { /* the first `room` of the list stay spare; the rest are freed */
        later_op *end = spares;
        size_t kept = 1;
        for (; kept < room && end->next; kept++) end = end->next;
        later_op *rest = end->next;
        end->next = door->spare_ops;
        door->spare_ops = spares;
        door->spare_count += kept;
        spares = rest;
    }
    pthread_mutex_unlock(&door->ops_lock);
    free_ops(spares);
}

int64_t later_turn(cx_front_door *door) {
    pthread_mutex_lock(&door->ops_lock);
    later_op *ops = door->ops_head;
    door->ops_head = door->ops_tail = NULL;
    pthread_mutex_unlock(&door->ops_lock);
    take_ops(door, ops);
    if (!door->later_deadlines) return -1;
    int64_t now = monotonic_ms(), soonest = -1;
    for (size_t i = 0; i < door->later_count;) {
        later *l = &door->laters[i];
        if (l->deadline_ms && l->deadline_ms <= now) {
            connection *c = l->c;
            stream *s = l->s;
            drop(door, l, true); /* the handler's own answer, set when it chose to wait */
            send_now(c, s);
            continue;
        }
        if (l->deadline_ms && (soonest < 0 || l->deadline_ms - now < soonest)) soonest = l->deadline_ms - now;
        i++;
    }
    return soonest;
}

void later_free_all(cx_front_door *door) {
    free_ops(door->ops_head); /* sent and never applied: the door is going */
    door->ops_head = door->ops_tail = NULL;
    free_ops(door->spare_ops);
    door->spare_ops = NULL;
    door->spare_count = 0;
    free(door->laters);
    door->laters = NULL;
    door->later_count = door->later_cap = door->later_deadlines = 0;
    memset(door->later_index, 0, sizeof door->later_index);
}
