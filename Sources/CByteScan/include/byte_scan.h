#ifndef CX_BYTE_SCAN_H
#define CX_BYTE_SCAN_H

/* Sixteen bytes tested at once, for the JSON writer's and the readers' string scans.
 * In C because Swift's SIMD types compile to a loop over their lanes on this toolchain
 * (SIMD16<UInt8> compares were stored and reloaded a byte at a time); these are inline,
 * so Swift's optimizer inlines them where they are called. SSE2 is part of every x86-64;
 * elsewhere the same masks are computed a byte at a time. */

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__SSE2__)
/* The escape mask of a block already loaded. */
static inline uint32_t cx_escape_bits(__m128i block) {
    __m128i quote = _mm_cmpeq_epi8(block, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(block, _mm_set1_epi8('\\'));
    /* Unsigned below 0x20: the byte is its own minimum with 0x1F. */
    __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(block, _mm_set1_epi8(0x1F)), block);
    return (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control));
}
#endif

/* Bit i is set when byte i of the sixteen at `bytes` is one a JSON string escapes:
 * below 0x20, '"' or '\'. */
static inline uint32_t cx_escape_mask16(const uint8_t *bytes) {
#if defined(__SSE2__)
    return cx_escape_bits(_mm_loadu_si128((const __m128i *)bytes));
#else
    uint32_t mask = 0;
    for (int i = 0; i < 16; i++) {
        uint8_t byte = bytes[i];
        if (byte < 0x20 || byte == '"' || byte == '\\') mask |= 1u << i;
    }
    return mask;
#endif
}

/* The sixteen bytes at `from` stored at `to` as they are, and their escape mask as above:
 * the JSON writer copies a block whole and then moves on only to its first escape. Loaded
 * once: `to` may be where `from` is, for all the compiler knows. */
static inline uint32_t cx_copy_escape_mask16(const uint8_t *from, uint8_t *to) {
#if defined(__SSE2__)
    __m128i block = _mm_loadu_si128((const __m128i *)from);
    _mm_storeu_si128((__m128i *)to, block);
    return cx_escape_bits(block);
#else
    uint32_t mask = cx_escape_mask16(from);
    for (int i = 0; i < 16; i++) to[i] = from[i];
    return mask;
#endif
}

/* Bit i is set when byte i is not plain: an escaped byte (as above), DEL (0x7F) or a
 * byte past ASCII (0x80 and above). Plain text is its bytes in a JSON string. */
static inline uint32_t cx_not_plain_mask16(const uint8_t *bytes) {
#if defined(__SSE2__)
    __m128i block = _mm_loadu_si128((const __m128i *)bytes);
    __m128i quote = _mm_cmpeq_epi8(block, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(block, _mm_set1_epi8('\\'));
    __m128i del = _mm_cmpeq_epi8(block, _mm_set1_epi8(0x7F));
    /* Signed below 0x20: a control byte, or one past ASCII (negative as signed). */
    __m128i outside = _mm_cmplt_epi8(block, _mm_set1_epi8(0x20));
    return (uint32_t)_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(quote, backslash), _mm_or_si128(del, outside)));
#else
    uint32_t mask = 0;
    for (int i = 0; i < 16; i++) {
        uint8_t byte = bytes[i];
        if (byte < 0x20 || byte >= 0x7F || byte == '"' || byte == '\\') mask |= 1u << i;
    }
    return mask;
#endif
}

#endif
