/* What the door keeps to reuse, under AddressSanitizer's leak check: ops sent for answers
   given later (later.c) go back to the door's spares once applied, with their body's room,
   are taken from there by the next sender, never pass MAX_SPARE_OPS, and are all freed
   with the door; so are the streams its requests had (request.c), zeroed when reused. Ops
   for ids no answer holds are applied as nothing, as when a client went away. */
#include "../../Shell/CFrontDoor/later.c"

#include <stdio.h>

static int failures;

static void expect(bool holds, const char *what) {
    if (!holds) {
        fprintf(stderr, "spares_test: %s\n", what);
        failures++;
    }
}

static void settle_many(cx_front_door *door, size_t count) {
    static const unsigned char body[] = "{\"name\":\"projects/p/messages/0:1%x\"}";
    cx_http_header header = {"content-type", 12, "application/json", 16, false};
    for (size_t i = 0; i < count; i++)
        cx_front_door_settle(door, 1000 + i, 200, &header, 1, body, sizeof body - 1, 0, -1);
}

int main(void) {
    static cx_front_door door;
    door.wake[0] = door.wake[1] = -1;
    door.max_laters = MAX_LATERS;
    pthread_mutex_init(&door.ops_lock, NULL);

    settle_many(&door, 32);
    expect(door.spare_count == 0, "no op is spare before the door applied one");
    later_turn(&door);
    expect(door.spare_count == 32, "a batch the door applied is spare");

    later_op *first = door.spare_ops;
    unsigned char *room = first->answer.body.data;
    expect(room && first->answer.body.len == 0 && first->answer.header_count == 0,
           "a spare op keeps its body's room, and nothing else");
    settle_many(&door, 1);
    expect(door.ops_head == first && door.spare_count == 31, "the next op sent is a spare one");
    expect(door.ops_head->answer.body.data == room, "its body is written into the room it kept");
    expect(door.ops_head->answer.status == 200 && door.ops_head->answer.header_count == 1 &&
               door.ops_head->answer.body.len == 36 && door.ops_head->next == NULL,
           "a spare op holds only what it was sent with");
    later_turn(&door);
    expect(door.spare_count == 32, "applied again, it is spare again");

    settle_many(&door, MAX_SPARE_OPS + 100);
    later_turn(&door);
    expect(door.spare_count <= MAX_SPARE_OPS, "the spares never pass MAX_SPARE_OPS");

    settle_many(&door, 5); /* queued, never applied: freed with the door too */
    later_free_all(&door);
    expect(door.spare_ops == NULL && door.spare_count == 0, "the door's spares go with it");

    connection c = {.door = &door};
    stream *first_stream = stream_new(&c);
    expect(first_stream && first_stream->spans == first_stream->inline_spans &&
               first_stream->header_cap == INLINE_HEADERS,
           "a new stream has its inline headers");
    first_stream->id = 7;
    first_stream->answer.status = 200;
    stream_free(&c, first_stream);
    expect(door.spare_stream_count == 1, "a freed stream is kept");
    stream *again = stream_new(&c);
    expect(again == first_stream && door.spare_stream_count == 0, "the next stream is the one kept");
    expect(again->id == 0 && again->answer.status == 0 && again->next == NULL &&
               again->spans == again->inline_spans && again->header_cap == INLINE_HEADERS,
           "a kept stream comes back as a new one");
    static stream *open[MAX_SPARE_STREAMS + 10];
    open[0] = again;
    for (size_t i = 1; i < MAX_SPARE_STREAMS + 10; i++) open[i] = stream_new(&c);
    for (size_t i = 0; i < MAX_SPARE_STREAMS + 10; i++) stream_free(&c, open[i]);
    memset(open, 0, sizeof open); /* only the door holds them now: a leak shows */
    first_stream = again = NULL;
    expect(door.spare_stream_count == MAX_SPARE_STREAMS, "the kept streams never pass MAX_SPARE_STREAMS");
    stream_free_spares(&door);
    expect(door.spare_streams == NULL && door.spare_stream_count == 0, "the kept streams go with the door");

    pthread_mutex_destroy(&door.ops_lock);
    printf("spares_test: %s\n", failures ? "FAILED" : "ops and streams reused, bounded and freed");
    return failures ? 1 : 0;
}
