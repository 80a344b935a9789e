/* The front door's table of answers given later (later.c), against a model: answers
   parked and dropped in a random order, with random 64-bit ids so that their index
   slots collide as often as the table's real load makes them (the door's own ids come
   in sequence and rarely collide, so its traffic alone would not find a broken
   probe). After every step, each answer the model holds is found, with its stream,
   and none it dropped is; the count of answers with a deadline matches. (Every held
   answer is looked up every 64 steps, and a few at random in between.) */
#include "../../Shell/CFrontDoor/later.c"

#include <stdio.h>

static uint64_t state = 22;
static uint64_t next_random(void) { /* SplitMix64: the same run every time */
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t gone_told;
static void on_gone(void *context, cx_http_later id) {
    (void)context, (void)id;
    gone_told++;
}

int main(void) {
    static cx_front_door door;
    door.later_gone = on_gone;
    door.max_laters = MAX_LATERS;
    connection c = {.door = &door};
    enum { STEPS = 200000 };
    static stream streams[MAX_LATERS];
    static stream *live[MAX_LATERS];
    static cx_http_later dropped[64];
    size_t live_count = 0, deadlines = 0, failures = 0, checks = 0, told = 0;
    for (size_t i = 0; i < MAX_LATERS; i++) live[i] = &streams[i];
    /* `live[0..live_count)` are parked; the rest are free. */
    for (size_t step = 0; step < STEPS && failures < 10; step++) {
        bool park = live_count == 0 || (live_count < MAX_LATERS && next_random() % 100 < 55);
        if (park) {
            stream *s = live[live_count++];
            memset(s, 0, sizeof *s);
            s->answer.later = next_random() | 1;
            s->answer.wait_ms = next_random() % 4 == 0 ? 1000 : 0;
            deadlines += s->answer.wait_ms != 0;
            later_park(&c, s);
        } else {
            size_t at = (size_t)(next_random() % live_count);
            stream *s = live[at];
            later *l = find(&door, s->answer.later);
            deadlines -= l && l->deadline_ms != 0;
            bool gone = next_random() % 2;
            if (gone) {
                later_forget_stream(&c, s);
                told++;
            } else if (l) {
                drop(&door, l, false);
            }
            dropped[step % 64] = s->answer.later;
            live[at] = live[--live_count];
            live[live_count] = s;
        }
        checks++;
        bool right = door.later_count == live_count && door.later_deadlines == deadlines && gone_told == told &&
                     c.laters == live_count;
        /* Every held answer every 64 steps; in between, a few at random. */
        size_t sweep = step % 64 == 0 ? live_count : (live_count < 8 ? live_count : 8);
        for (size_t i = 0; i < sweep && right; i++) {
            stream *s = sweep == live_count ? live[i] : live[next_random() % live_count];
            later *l = find(&door, s->answer.later);
            right = l && l->s == s && l->c == &c;
        }
        for (size_t i = 0; i < 64 && right; i++) right = !dropped[i] || !find(&door, dropped[i]);
        if (!right) {
            failures++;
            fprintf(stderr, "step %zu: %zu answers held, the table disagrees with the model\n", step, live_count);
        }
    }
    later_free_all(&door);
    printf("later index: %zu steps checked against the model\n", checks);
    printf("Transport: %d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
