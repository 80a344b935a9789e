/* A growable byte buffer (transport.h). */
#include "transport.h"

#include <stdlib.h>
#include <string.h>

int buffer_reserve(buffer *b, size_t n) {
    if (b->len + n <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n) cap *= 2;
    unsigned char *data = realloc(b->data, cap);
    if (!data) return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

int buffer_append(buffer *b, const void *bytes, size_t n) {
    if (buffer_reserve(b, n) != 0) return -1;
    if (n) memcpy(b->data + b->len, bytes, n);
    b->len += n;
    return 0;
}

void buffer_consume(buffer *b, size_t n) {
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    /* A buffer that once held a burst gives its room back when it empties. */
    if (b->len == 0 && b->cap > 64 * 1024) buffer_free(b);
}

void buffer_free(buffer *b) {
    free(b->data);
    *b = (buffer){0};
}
