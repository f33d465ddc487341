/*
 * bleu_core/_cps.h -- code-point buffers shared by the kernels that work on decoded text (_chrf.c,
 * _ter.c): growable buffers, UTF-8 decoding into code points, str.lower() of them, and the hash
 * and equality of a token's code points (the statuses their runs return are _status.h's).
 *
 * Header-only (static inline) so that each extension module gets its own copy and no symbol
 * is exported. Include it after <Python.h>, <string.h> and "_text.h" (u8dec).
 */
#ifndef BLEU_CORE_CPS_H
#define BLEU_CORE_CPS_H

#include <stdint.h>
#include <stdlib.h>

/* Grow *p (elements of `elem` bytes) to hold at least `need` elements. */
static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2) return -1;
        c *= 2;
    }
    if (c > SIZE_MAX / elem) return -1;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* GROW(ptr, cap, need): grow a typed buffer; 0, or -1 when out of memory (ptr unchanged) */
#define GROW(ptr, cap, need) __extension__({                                         \
    void *grow_p_ = (ptr);                                                            \
    int grow_r_ = grow(&grow_p_, &(cap), (size_t)(need), sizeof(*(ptr)));             \
    (ptr) = grow_p_;                                                                  \
    grow_r_;                                                                          \
})

/* Hash of a token (its code points, two per multiplication). */
static inline uint64_t hash_cps(const uint32_t *s, uint32_t n) {
    uint64_t h = 0x243F6A8885A308D3ULL ^ n;
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) h = (h ^ (s[i] | (uint64_t)s[i + 1] << 32)) * 0x9E3779B97F4A7C15ULL;
    if (i < n) h = (h ^ s[i]) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

static inline int same_cps(const uint32_t *a, const uint32_t *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Decode the n bytes at s into cp (room for n code points), validating them (ASCII runs are found
 * eight bytes at a time and widened by a loop the compiler vectorises): the count in *ncp
 * and 0, or -1 on invalid UTF-8; *ascii tells whether it was all ASCII. */
static int decode_cps(const uint8_t *s, Py_ssize_t n, uint32_t *cp, Py_ssize_t *ncp, int *ascii) {
    Py_ssize_t m = 0, i = 0;
    *ascii = 1;
    while (i < n) {
        Py_ssize_t j = i;
        for (uint64_t v; j + 8 <= n; j += 8) {
            memcpy(&v, s + j, 8);
            if (v & 0x8080808080808080ULL) break;
        }
        while (j < n && s[j] < 0x80) j++;
        for (Py_ssize_t q = 0; q < j - i; q++) cp[m + q] = s[i + q];
        m += j - i;
        if (j == n) break;
        uint32_t v;
        int l = u8dec(s, n, j, &v);
        if (!l) return -1;
        cp[m++] = v;
        i = j + l;
        *ascii = 0;
    }
    *ncp = m;
    return 0;
}

/* Replace the *ncp code points of *cp (capacity *cap) by str.lower() of them, calling the
 * method `lower_name` with the GIL taken back from *ts for the call: 0, or -1 with a Python
 * error set. */
static int lower_cps(PyThreadState **ts, PyObject *lower_name, uint32_t **cp, size_t *cap, Py_ssize_t *ncp) {
    int st = -1;
    PyEval_RestoreThread(*ts);
    PyObject *s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, *cp, *ncp);
    if (s) {
        PyObject *lo = PyObject_CallMethodNoArgs(s, lower_name);
        Py_DECREF(s);
        if (lo) {
            Py_ssize_t L = PyUnicode_GET_LENGTH(lo);
            uint32_t *buf = *cp;
            if (GROW(buf, *cap, L + 1) < 0) {
                PyErr_NoMemory();
            } else {
                int kind = PyUnicode_KIND(lo);
                const void *data = PyUnicode_DATA(lo);
                for (Py_ssize_t j = 0; j < L; j++) buf[j] = PyUnicode_READ(kind, data, j);
                *ncp = L;
                st = 0;
            }
            *cp = buf;
            Py_DECREF(lo);
        }
    }
    *ts = PyEval_SaveThread();
    return st;
}

#endif /* BLEU_CORE_CPS_H */
