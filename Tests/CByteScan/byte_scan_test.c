/* byte_scan.h's masks against the byte-by-byte rule, for every byte value at every place
 * of a block and for random blocks. The Makefile builds this twice: with the SSE2 path,
 * and with __SSE2__ undefined, for the path other machines take. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byte_scan.h"

static uint32_t reference(const uint8_t *bytes, int plain) {
    uint32_t mask = 0;
    for (int i = 0; i < 16; i++) {
        uint8_t byte = bytes[i];
        int flagged = byte < 0x20 || byte == '"' || byte == '\\' || (plain && byte >= 0x7F);
        if (flagged) mask |= 1u << i;
    }
    return mask;
}

static int check(const uint8_t *block) {
    uint8_t copied[16] = {0};
    uint32_t escape = reference(block, 0), not_plain = reference(block, 1);
    int failed = cx_escape_mask16(block) != escape || cx_not_plain_mask16(block) != not_plain ||
                 cx_copy_escape_mask16(block, copied) != escape || memcmp(copied, block, 16) != 0;
    if (failed) {
        fprintf(stderr, "block:");
        for (int i = 0; i < 16; i++) fprintf(stderr, " %02x", block[i]);
        fprintf(stderr, "\n");
    }
    return failed;
}

int main(void) {
    int failures = 0;
    uint8_t block[16];
    for (int byte = 0; byte < 256; byte++) {
        for (int place = 0; place < 16; place++) {
            for (int i = 0; i < 16; i++) block[i] = (uint8_t)('a' + i);
            block[place] = (uint8_t)byte;
            failures += check(block);
        }
    }
    srand(0x5eed);
    for (int round = 0; round < 200000; round++) {
        for (int i = 0; i < 16; i++) block[i] = (uint8_t)(rand() % 8 == 0 ? rand() % 256 : 0x20 + rand() % 0x5F);
        failures += check(block);
    }
    printf("C byte scan (%s): %d passed, %d failed\n",
#if defined(__SSE2__)
           "SSE2",
#else
           "byte by byte",
#endif
           failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
