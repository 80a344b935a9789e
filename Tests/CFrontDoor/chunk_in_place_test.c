/* A streamed piece framed as an HTTP/1.1 chunk where it lies (http1_chunk_in_place):
   its size line fills the room before the bytes in hex with leading zeros, and reads
   back as the bytes' length; room that cannot hold the line leaves the block to the
   caller. Then the door's write (cx_front_door_stream_write) with room and without (a
   copy, framed in room of its own):
   under AddressSanitizer's leak check, every block it is handed is freed. */
#include "../../Shell/CFrontDoor/later.c"

#include <stdio.h>

static size_t failures;
#define CHECK(condition, ...)                                                                                          \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            failures++;                                                                                                \
            fprintf(stderr, "chunk_in_place_test:%d: ", __LINE__);                                                    \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

/* A block of `size` bytes holding `len` bytes of 'a'.. after `head` bytes of room. */
static unsigned char *block_of(size_t head, size_t len, size_t size) {
    unsigned char *block = malloc(size ? size : 1);
    memset(block, '#', size);
    for (size_t i = 0; i < len; i++) block[head + i] = (unsigned char)('a' + i % 26);
    return block;
}

/* Frames a piece in place and reads the chunk back as a client would. */
static void framed(size_t head, size_t len, size_t size) {
    unsigned char *block = block_of(head, len, size);
    buffer out = {0};
    size_t taken = http1_chunk_in_place(&out, block, head, len, size);
    CHECK(taken == head, "head %zu len %zu: took %zu", head, len, taken);
    if (taken != head) {
        free(block);
        return;
    }
    CHECK(out.len == head + len + 2 && out.cap >= out.len, "head %zu len %zu: %zu bytes of %zu", head, len, out.len,
          out.cap);
    CHECK(size < head + len + 2 || out.data == block, "with room for the CRLF the block is taken as it is");
    char line[32] = {0};
    memcpy(line, out.data, head);
    char *end = NULL;
    unsigned long long read = strtoull(line, &end, 16);
    CHECK(read == len && end == line + head - 2 && strcmp(end, "\r\n") == 0, "head %zu len %zu: size line '%s'",
          head, len, line);
    for (size_t i = 0; i < len; i++) {
        if (out.data[head + i] != (unsigned char)('a' + i % 26)) {
            CHECK(false, "head %zu len %zu: byte %zu moved", head, len, i);
            break;
        }
    }
    CHECK(memcmp(out.data + head + len, "\r\n", 2) == 0, "the chunk ends with CRLF");
    buffer_free(&out);
}

static void refused(size_t head, size_t len) {
    unsigned char *block = block_of(head, len, head + len + 2);
    buffer out = {0};
    CHECK(http1_chunk_in_place(&out, block, head, len, head + len + 2) == 0 && !out.data,
          "head %zu len %zu: the room cannot hold the size line, so the block is not taken", head, len);
    free(block);
}

int main(void) {
    framed(10, 0x1a, 10 + 0x1a + 2);
    framed(10, 1000, 10 + 1000);      /* no room for the CRLF: grown */
    framed(10, 1000, 10 + 1000 + 64); /* room to spare */
    framed(3, 15, 3 + 15 + 2);        /* one digit: f */
    framed(18, 5, 18 + 5 + 2);        /* sixteen digits */
    framed(4, 255, 4 + 255 + 2);
    refused(3, 16);  /* 0x10 needs two digits */
    refused(4, 256);
    refused(2, 1);   /* no room for a digit */
    refused(19, 1);  /* more digits than a size holds */
    refused(10, 0);  /* a chunk of no bytes would end the answer */

    /* The door's write: with room the block becomes the op's; without, it is copied and
       freed. No answer has these ids, so the ops are dropped when applied. */
    static cx_front_door door;
    pthread_mutex_init(&door.ops_lock, NULL);
    door.wake[0] = door.wake[1] = -1;
    cx_front_door_stream_write(&door, 1, block_of(10, 100, 112), 10, 100, 112);
    cx_front_door_stream_write(&door, 2, block_of(1, 100, 101), 1, 100, 101);
    CHECK(door.ops_head && door.ops_head->chunk_head == 10 && door.ops_head->answer.body.len == 112,
          "framed in place: the op holds the block");
    CHECK(door.ops_tail && door.ops_tail->chunk_head == HTTP1_WIDEST_CHUNK_HEAD &&
              door.ops_tail->answer.body.len == HTTP1_WIDEST_CHUNK_HEAD + 100 + 2,
          "no room: the op holds a copy framed in room of its own");
    CHECK(door.ops_tail && memcmp(door.ops_tail->answer.body.data + HTTP1_WIDEST_CHUNK_HEAD, "abcdefghij", 10) == 0 &&
              memcmp(door.ops_tail->answer.body.data, "0000000000000064\r\n", HTTP1_WIDEST_CHUNK_HEAD) == 0,
          "the copy holds the piece after its size line");
    later_turn(&door);
    CHECK(!door.ops_head, "the ops were taken");
    pthread_mutex_destroy(&door.ops_lock);

    if (failures) {
        fprintf(stderr, "chunk_in_place_test: %zu failures\n", failures);
        return 1;
    }
    printf("chunk_in_place_test: the size line fills its room, and every block is freed\n");
    return 0;
}
