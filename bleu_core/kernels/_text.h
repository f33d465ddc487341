/*
 * bleu_core/_text.h -- UTF-8 and whitespace helpers shared by the text kernels (_bleu.c, _chrf.c).
 *
 * Header-only (static inline) so that each extension module gets its own copy and no symbol
 * is exported. Include it after <Python.h>: is_space uses Py_UNICODE_ISSPACE, the predicate
 * behind str.split() and str.strip(), so the kernels split exactly where Python does.
 */
#ifndef BLEU_CORE_TEXT_H
#define BLEU_CORE_TEXT_H

#include <stdint.h>

/* Decode one code point at s[i] (i < n). Returns its byte length, or 0 if the bytes are not
 * valid UTF-8 (overlong forms, surrogates and values above U+10FFFF are invalid, as for
 * Python's strict decoder). */
static inline int u8dec(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, uint32_t *cp) {
    uint8_t c = s[i];
    if (c < 0x80) { *cp = c; return 1; }
    if (c < 0xC2) return 0;
    if (c < 0xE0) {
        if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
        *cp = ((uint32_t)(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
        return 2;
    }
    if (c < 0xF0) {
        if (i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return 0;
        uint32_t v = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
        if (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF)) return 0;
        *cp = v;
        return 3;
    }
    if (c < 0xF5) {
        if (i + 3 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 ||
            (s[i + 3] & 0xC0) != 0x80) return 0;
        uint32_t v = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
                     ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
        if (v < 0x10000 || v > 0x10FFFF) return 0;
        *cp = v;
        return 4;
    }
    return 0;
}

/* Length of the code point starting with byte c, in text already validated. */
static inline int u8len(uint8_t c) {
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* The code point of byte length len at s[i], in text already validated. */
static inline uint32_t u8cp(const uint8_t *s, Py_ssize_t i, int len) {
    switch (len) {
    case 1: return s[i];
    case 2: return ((uint32_t)(s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F);
    case 3: return ((uint32_t)(s[i] & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    default:
        return ((uint32_t)(s[i] & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |
               ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
    }
}

/* Whether str.split() splits at code point cp. */
static inline int is_space(uint32_t cp) { return Py_UNICODE_ISSPACE((Py_UCS4)cp); }

#endif /* BLEU_CORE_TEXT_H */
