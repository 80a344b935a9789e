/* Ops sent for answers given later (later.c) go back to the door's spares once applied,
   are taken from there by the next sender, never pass MAX_SPARE_OPS, and are all freed
   with the door (AddressSanitizer's leak check). Ops for ids no answer holds are applied
   as nothing, as when a client went away, so no connection is needed. */
#include "../../Shell/CFrontDoor/later.c"

#include <stdio.h>

static int failures;

static void expect(bool holds, const char *what) {
    if (!holds) {
        fprintf(stderr, "spare_ops_test: %s\n", what);
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
    settle_many(&door, 1);
    expect(door.ops_head == first && door.spare_count == 31, "the next op sent is a spare one");
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
    pthread_mutex_destroy(&door.ops_lock);
    printf("spare_ops_test: %s\n", failures ? "FAILED" : "spares reused, bounded and freed");
    return failures ? 1 : 0;
}
