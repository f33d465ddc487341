/*
 * bleu_core._bleu -- BLEU's batch statistics: its tokenizer passes and its n-gram counting.
 *
 * One call turns a batch of candidates and their references (Arrow-style
 * buffers: UTF-8 data + int64 offsets + validity bytes) into BLEU sufficient
 * statistics, either one row per pair or their sum:
 *
 *     [c, r, matches_1..N, totals_1..N]
 *
 * `stats` tokenizes text; `stats_ids` counts text already tokenized and numbered (spBLEU:
 * SentencePiece's piece ids, flattened by bleu_core.tokenizers._spm_ids). The metric-independent
 * bootstrap is bleu_core._resample.
 *
 * Every step mirrors sacrebleu 2.6.0 exactly:
 *   - lowercasing calls Python's str.lower (ASCII rows take a byte fast path,
 *     which is identical for ASCII);
 *   - rstrip/strip/split use Py_UNICODE_ISSPACE, the predicate behind
 *     str.rstrip() and str.split();
 *   - each tokenizer regex of sacrebleu is a pattern of one or two
 *     single-code-point classes, so re.sub's leftmost non-overlapping scan is
 *     reproduced by a left-to-right scan over code points: intl makes one pass
 *     per regex, in sacrebleu's order; 13a and zh, whose regexes only isolate
 *     single characters, find their tokens in one scan (split_regexp);
 *   - the Unicode classes that depend on a library (zh ranges as sacrebleu's
 *     string comparisons evaluate them; \p{N}, \p{P}, \p{S} of the `regex`
 *     module) arrive as a flag table computed in Python from that library;
 *   - n-grams are compared exactly (token ids, then id sequences); hashes only
 *     pick the bucket, so collisions cannot change a count; unigrams of the
 *     candidate's interned ids are counted in arrays indexed by id;
 *   - clipping uses the maximum count in any single reference and r is the
 *     closest reference length, ties to the shorter one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#include "_buffers.h" /* View, get_view, rows_shape, batch_shape: shared with _chrf.c */
#include "_text.h"    /* u8dec, u8len, u8cp, is_space: shared with _chrf.c */

enum { TOK_NONE = 0, TOK_13A = 1, TOK_INTL = 2, TOK_ZH = 3, TOK_CHAR = 4 };

/* flag bits of the Unicode table passed from Python */
enum { F_N = 1, F_P = 2, F_S = 4, F_ZH = 8 };

#define UNI_SIZE 0x110000

/* ------------------------------------------------------------------ buffers */

typedef struct {
    uint8_t *p;
    Py_ssize_t len, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    Py_ssize_t need = b->len + extra;
    if (need <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    uint8_t *p = (uint8_t *)realloc(b->p, (size_t)cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline void buf_put(Buf *b, const uint8_t *s, Py_ssize_t n) {
    memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
}

static inline void buf_putc(Buf *b, uint8_t c) { b->p[b->len++] = c; }

typedef struct {
    int32_t *p;
    Py_ssize_t len, cap;
} IBuf;

static int ibuf_reserve(IBuf *b, Py_ssize_t extra) {
    Py_ssize_t need = b->len + extra;
    if (need <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    int32_t *p = (int32_t *)realloc(b->p, (size_t)cap * sizeof(int32_t));
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* ------------------------------------------------------------ kernel state */

/* stages, for benchmarks: stop after normalising, after tokenizing, or run everything */
enum { STAGE_NORMALISE = 1, STAGE_TOKENIZE = 2, STAGE_ALL = 3 };

typedef struct {
    int tokenizer, lowercase, order, stop_after;
    const uint8_t *flags; /* UNI_SIZE bytes, or NULL when the tokenizer needs none */
    Buf a, b, lower;      /* scratch for the tokenizer passes */
    Buf arena;            /* final text of every segment of the current pair */
    IBuf tok_start, tok_len; /* token spans (offsets into arena) of the pair */
    uint64_t *tok_hash; Py_ssize_t tok_hash_cap; /* hash_bytes of each token, set as it is split */
    /* token interning: open addressing, keys are arena spans */
    int32_t *tk_slot; uint64_t *tk_hash; Py_ssize_t tk_cap, tk_mask;
    IBuf hyp_ids, ref_ids;
    IBuf touched; /* stats_many: the table entries a candidate found */
    /* n-gram table */
    struct ng { uint64_t h; int32_t start, n, hyp, rmax, rcur, rseen; } *ng;
    Py_ssize_t ng_cap, ng_mask;
    int32_t *ng_used; Py_ssize_t ng_nused;
    /* unigrams when the hypothesis ids are dense (0..n_uniq-1, as intern_hyp numbers them): per id,
       its count in the hypothesis, the highest in one reference, the count in reference u_rseen */
    int dense;
    int32_t *u_hyp, *u_rmax, *u_rcur, *u_rseen; Py_ssize_t u_cap, n_uniq;
    Py_ssize_t bad_row, bad_ref; const char *bad_what;
} K;

static void k_free(K *k) {
    free(k->a.p); free(k->b.p); free(k->lower.p); free(k->arena.p);
    free(k->tok_start.p); free(k->tok_len.p); free(k->tok_hash);
    free(k->tk_slot); free(k->tk_hash);
    free(k->hyp_ids.p); free(k->ref_ids.p); free(k->touched.p);
    free(k->ng); free(k->ng_used);
    free(k->u_hyp); free(k->u_rmax); free(k->u_rcur); free(k->u_rseen);
}

/* --------------------------------------------------------- tokenizer passes */

/* str.replace(pat, rep): one left-to-right non-overlapping pass. */
static int replace_all(const uint8_t *s, Py_ssize_t n, const char *pat, const char *rep, Buf *out) {
    Py_ssize_t pl = (Py_ssize_t)strlen(pat), rl = (Py_ssize_t)strlen(rep);
    out->len = 0;
    if (buf_reserve(out, n + 1) < 0) return -1; /* rep is never longer than pat here */
    Py_ssize_t i = 0;
    while (i < n) {
        if (s[i] == (uint8_t)pat[0] && i + pl <= n && memcmp(s + i, pat, (size_t)pl) == 0) {
            buf_put(out, (const uint8_t *)rep, rl);
            i += pl;
        } else {
            buf_putc(out, s[i++]);
        }
    }
    return 0;
}

static int contains(const uint8_t *s, Py_ssize_t n, const char *pat) {
    Py_ssize_t pl = (Py_ssize_t)strlen(pat);
    for (Py_ssize_t i = 0; i + pl <= n; i++)
        if (s[i] == (uint8_t)pat[0] && memcmp(s + i, pat, (size_t)pl) == 0) return 1;
    return 0;
}

/* 13a and zh: sacrebleu's regexp post-tokenizer (TokenizerRegexp) in one scan.
 *
 * Its four regexes only ever insert spaces, and every space they insert stands on both sides
 * of one character, which so becomes a token of its own ("isolated"); the final str.split()
 * then cuts at the text's whitespace and around the isolated characters. So the tokens are the
 * runs of the text between whitespace and isolated characters, and a scan that decides which
 * characters are isolated gives them without building the four intermediate strings:
 *   1. ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 ": every character of that ASCII class;
 *   2. ([^0-9])([\.,]) -> "\1 \2 ": a '.'/',' at j whose left neighbour exists and is not a
 *      digit, unless that neighbour is a '.'/',' matched by this regex (re.sub consumed it);
 *   3. ([\.,])([^0-9]) -> " \1 \2" (on 2's output): a '.'/',' matched by 2 (2 put a space after
 *      it), or whose right neighbour exists and is not a digit. It is never blocked by being
 *      the \2 of a match at its left: of two adjacent '.'/',' 2 matches one, and so puts a space
 *      between them. Two adjacent '.'/',' are therefore both isolated;
 *   4. ([0-9])(-) -> "\1 \2 ": a '-' right after a digit.
 * The neighbours are those of the text the regexes see: the spaces that 1 (and zh's isolation
 * of Chinese characters) put around a character are, for "is it a digit" and "is it '.'/','",
 * the same as the character itself, so the scan reads the original bytes; at either end the
 * neighbour exists only where 13a pads the line (f' {line} '). A byte of a multi-byte
 * character is neither a digit nor '.'/',', as the character is not. zh isolates Chinese
 * characters (the F_ZH flag) before the regexes; 13a isolates nothing else. */

/* byte classes of split_regexp; 0: a byte of a token (letters, digits, ...) */
enum { C_SPACE = 1, C_PUNCT = 2, C_DOT = 4, C_DASH = 8, C_HIGH = 16, C_NUL = 32 };

static const uint8_t *byte_classes(void) {
    static uint8_t t[256];
    static int init = 0;
    if (!init) {
        for (int c = 0x7B; c <= 0x7E; c++) t[c] = C_PUNCT; /* { | } ~ */
        for (int c = 0x5B; c <= 0x60; c++) t[c] = C_PUNCT; /* [ \ ] ^ _ ` */
        for (int c = 0x20; c <= 0x26; c++) t[c] = C_PUNCT; /* space ! " # $ % & */
        for (int c = 0x28; c <= 0x2B; c++) t[c] = C_PUNCT; /* ( ) * + */
        for (int c = 0x3A; c <= 0x40; c++) t[c] = C_PUNCT; /* : ; < = > ? @ */
        t[0x2F] = C_PUNCT;                                 /* / */
        t['.'] = t[','] = C_DOT;
        t['-'] = C_DASH;
        for (int c = 0; c < 128; c++)                      /* str.split()'s: the space leaves the class */
            if (_Py_ascii_whitespace[c]) t[c] = C_SPACE;
        for (int c = 0x80; c < 256; c++) t[c] = C_HIGH;    /* a multi-byte character */
        t[0] = C_NUL; /* a byte of a token too, but it also ends the text (see split_regexp) */
        init = 1;
    }
    return t;
}

static inline int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

static inline void put_token(K *k, Py_ssize_t start, Py_ssize_t len) {
    k->tok_start.p[k->tok_start.len++] = (int32_t)start;
    k->tok_len.p[k->tok_len.len++] = (int32_t)len;
}

/* The tokens of t[0..n) (at arena offset base) as 13a (pad) or zh (zh) leave them; returns
 * their number. The token lists have room for n + 1 more. */
static Py_ssize_t split_regexp(K *k, const uint8_t *t, Py_ssize_t n, Py_ssize_t base, int pad, int zh) {
    const uint8_t *cls = byte_classes();
    Py_ssize_t before = k->tok_start.len, st = -1, i = 0;
    int m2prev = 0; /* t[i-1] is a '.'/',' matched by regex 2 */
#define END_TOKEN() do { if (st >= 0) { put_token(k, base + st, i - st); st = -1; } } while (0)
    while (i < n) {
        uint8_t f = cls[t[i]];
        /* bit tests rather than equalities: the compiler made a jump table of these, and its
           indirect jump mispredicted at most token boundaries */
        if (__builtin_expect(f == 0, 1)) {
            /* a run of token bytes: t[n] is a NUL (the arena's spare bytes), which stops it */
            if (st < 0) st = i;
            do i++; while (!cls[t[i]]);
            m2prev = 0;
        } else if (f & C_SPACE) {
            END_TOKEN();
            m2prev = 0;
            i++;
        } else if (f & C_HIGH) {
            int l = u8len(t[i]);
            uint32_t cp = u8cp(t, i, l);
            if (is_space(cp)) END_TOKEN();
            else if (zh && (k->flags[cp] & F_ZH)) { END_TOKEN(); put_token(k, base + i, l); }
            else if (st < 0) st = i;
            m2prev = 0;
            i += l;
        } else {
            int iso = 0, m2 = 0;
            if (f & C_PUNCT) iso = 1;
            else if (f & C_DOT) {
                m2 = (i > 0 ? !is_digit(t[i - 1]) : pad) && !m2prev;
                iso = m2 || (i + 1 < n ? !is_digit(t[i + 1]) : pad);
            } else if (f & C_DASH) iso = i > 0 && is_digit(t[i - 1]);
            m2prev = m2;
            if (iso) { END_TOKEN(); put_token(k, base + i, 1); }
            else if (st < 0) st = i; /* C_NUL, or a '.', ',' or '-' that stays in its token */
            i++;
        }
    }
    END_TOKEN();
#undef END_TOKEN
    return k->tok_start.len - before;
}

/* intl: (\P{N})(\p{P}) -> "\1 \2 " */
static int pass_intl1(const uint8_t *s, Py_ssize_t n, const uint8_t *f, Buf *out) {
    out->len = 0;
    if (buf_reserve(out, 2 * n + 1) < 0) return -1;
    Py_ssize_t i = 0;
    while (i < n) {
        int l = u8len(s[i]);
        uint32_t c = u8cp(s, i, l);
        if (i + l < n && !(f[c] & F_N)) {
            int l2 = u8len(s[i + l]);
            uint32_t c2 = u8cp(s, i + l, l2);
            if (f[c2] & F_P) {
                buf_put(out, s + i, l); buf_putc(out, ' '); buf_put(out, s + i + l, l2); buf_putc(out, ' ');
                i += l + l2;
                continue;
            }
        }
        buf_put(out, s + i, l);
        i += l;
    }
    return 0;
}

/* intl: (\p{P})(\P{N}) -> " \1 \2" */
static int pass_intl2(const uint8_t *s, Py_ssize_t n, const uint8_t *f, Buf *out) {
    out->len = 0;
    if (buf_reserve(out, 2 * n + 1) < 0) return -1;
    Py_ssize_t i = 0;
    while (i < n) {
        int l = u8len(s[i]);
        uint32_t c = u8cp(s, i, l);
        if (i + l < n && (f[c] & F_P)) {
            int l2 = u8len(s[i + l]);
            uint32_t c2 = u8cp(s, i + l, l2);
            if (!(f[c2] & F_N)) {
                buf_putc(out, ' '); buf_put(out, s + i, l); buf_putc(out, ' '); buf_put(out, s + i + l, l2);
                i += l + l2;
                continue;
            }
        }
        buf_put(out, s + i, l);
        i += l;
    }
    return 0;
}

/* intl: (\p{S}) -> " \1 "; zh: Chinese character c -> " c " */
static int pass_isolate(const uint8_t *s, Py_ssize_t n, const uint8_t *f, uint8_t flag, Buf *out) {
    out->len = 0;
    if (buf_reserve(out, 3 * n + 1) < 0) return -1;
    Py_ssize_t i = 0;
    while (i < n) {
        int l = u8len(s[i]);
        uint32_t c = u8cp(s, i, l);
        if (f[c] & flag) { buf_putc(out, ' '); buf_put(out, s + i, l); buf_putc(out, ' '); }
        else buf_put(out, s + i, l);
        i += l;
    }
    return 0;
}

/* ------------------------------------------------------ segment processing */

/* Lowercase with str.lower semantics. Returns 0 and sets *ps and *pn to the
 * lowered text (in k->lower), -1 on error. */
static int lower_segment(K *k, const uint8_t **ps, Py_ssize_t *pn) {
    const uint8_t *s = *ps;
    Py_ssize_t n = *pn, i;
    int ascii = 1;
    for (i = 0; i < n; i++) if (s[i] & 0x80) { ascii = 0; break; }
    k->lower.len = 0;
    if (ascii) {
        if (buf_reserve(&k->lower, n + 1) < 0) return -1;
        for (i = 0; i < n; i++) {
            uint8_t c = s[i];
            k->lower.p[i] = (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
        }
        k->lower.len = n;
    } else {
        PyObject *u = PyUnicode_DecodeUTF8((const char *)s, n, "strict");
        if (!u) return -1;
        PyObject *lo = PyObject_CallMethod(u, "lower", NULL);
        Py_DECREF(u);
        if (!lo) return -1;
        Py_ssize_t ln;
        const char *lp = PyUnicode_AsUTF8AndSize(lo, &ln);
        if (!lp || buf_reserve(&k->lower, ln + 1) < 0) { Py_DECREF(lo); return -1; }
        buf_put(&k->lower, (const uint8_t *)lp, ln);
        Py_DECREF(lo);
    }
    *ps = k->lower.p;
    *pn = k->lower.len;
    return 0;
}

/* Length of s once trailing whitespace is removed (str.rstrip()). */
static Py_ssize_t rstrip_len(const uint8_t *s, Py_ssize_t n) {
    while (n > 0) {
        Py_ssize_t j = n - 1;
        while (j > 0 && (s[j] & 0xC0) == 0x80) j--;
        uint32_t cp = u8cp(s, j, u8len(s[j]));
        if (!is_space(cp)) break;
        n = j;
    }
    return n;
}

static Py_ssize_t lstrip_off(const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        int l = u8len(s[i]);
        if (!is_space(u8cp(s, i, l))) break;
        i += l;
    }
    return i;
}

static inline uint64_t hash_bytes(const uint8_t *s, Py_ssize_t n);

/* Whether s[0..n) is valid UTF-8 (eight ASCII bytes at a time where it can). */
static int valid_utf8(const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        if (s[i] < 0x80) { i++; continue; }
        uint32_t cp;
        int l = u8dec(s, n, i, &cp);
        if (!l) return 0;
        i += l;
    }
    return 1;
}

/* Tokenize one segment and append its tokens (spans into the arena, and their hashes) to the
 * pair's token list. Returns the number of tokens, or -1 on error. */
static Py_ssize_t segment_tokens(K *k, const uint8_t *s, Py_ssize_t n) {
    /* validate UTF-8 once; every later pass relies on it */
    if (!valid_utf8(s, n)) { k->bad_what = "invalid UTF-8"; return -1; }
    if (k->lowercase && lower_segment(k, &s, &n) < 0) return -1;
    n = rstrip_len(s, n);
    if (k->stop_after == STAGE_NORMALISE) return 0;

    Buf *A = &k->a, *B = &k->b, *T;
    const uint8_t *cur = s;
    Py_ssize_t cn = n;
#define STEP(call) do { if ((call) < 0) return -1; cur = A->p; cn = A->len; T = A; A = B; B = T; } while (0)

    switch (k->tokenizer) {
    case TOK_13A:
        if (memchr(cur, '<', (size_t)cn) && contains(cur, cn, "<skipped>"))
            STEP(replace_all(cur, cn, "<skipped>", "", A));
        if (memchr(cur, '\n', (size_t)cn)) {
            if (contains(cur, cn, "-\n")) STEP(replace_all(cur, cn, "-\n", "", A));
            if (memchr(cur, '\n', (size_t)cn)) STEP(replace_all(cur, cn, "\n", " ", A));
        }
        if (memchr(cur, '&', (size_t)cn)) {
            STEP(replace_all(cur, cn, "&quot;", "\"", A));
            STEP(replace_all(cur, cn, "&amp;", "&", A));
            STEP(replace_all(cur, cn, "&lt;", "<", A));
            STEP(replace_all(cur, cn, "&gt;", ">", A));
        }
        break; /* then f' {line} ' and the regexp post-tokenizer: split_regexp */
    case TOK_ZH: {
        Py_ssize_t off = lstrip_off(cur, cn);
        cur += off; cn -= off; /* line.strip(); the right side is already stripped */
        break;                 /* then Chinese characters isolated and the regexps: split_regexp */
    }
    case TOK_INTL:
        STEP(pass_intl1(cur, cn, k->flags, A));
        STEP(pass_intl2(cur, cn, k->flags, A));
        STEP(pass_isolate(cur, cn, k->flags, F_S, A));
        break;
    default:
        break;
    }
#undef STEP

    /* copy the final text into the arena (8 spare bytes for hash_bytes) and split it; token
       spans are int32 */
    Py_ssize_t base = k->arena.len;
    if (cn > (Py_ssize_t)INT32_MAX - 8 - base) {
        k->bad_what = "text too long (over 2**31 - 1 bytes in one pair)";
        return -1;
    }
    if (buf_reserve(&k->arena, cn + 8) < 0) return -1;
    buf_put(&k->arena, cur, cn);
    memset(k->arena.p + k->arena.len, 0, 8);
    const uint8_t *t = k->arena.p + base;
    Py_ssize_t ntok = 0, i = 0, first = k->tok_start.len;
    if (ibuf_reserve(&k->tok_start, cn + 1) < 0 || ibuf_reserve(&k->tok_len, cn + 1) < 0) return -1;
    if (k->tok_hash_cap < k->tok_start.cap) {
        uint64_t *p = (uint64_t *)realloc(k->tok_hash, (size_t)k->tok_start.cap * sizeof(uint64_t));
        if (!p) { PyErr_NoMemory(); return -1; }
        k->tok_hash = p;
        k->tok_hash_cap = k->tok_start.cap;
    }
    if (k->tokenizer == TOK_13A || k->tokenizer == TOK_ZH) {
        ntok = split_regexp(k, t, cn, base, k->tokenizer == TOK_13A, k->tokenizer == TOK_ZH);
    } else if (k->tokenizer == TOK_CHAR) {
        while (i < cn) {
            int l = u8len(t[i]);
            if (!is_space(u8cp(t, i, l))) { put_token(k, base + i, l); ntok++; }
            i += l;
        }
    } else {
        while (i < cn) {
            uint8_t c = t[i];
            if (c < 0x80) {
                if (_Py_ascii_whitespace[c]) { i++; continue; }
            } else {
                int l = u8len(c);
                if (is_space(u8cp(t, i, l))) { i += l; continue; }
            }
            Py_ssize_t st = i;
            while (i < cn) {
                c = t[i];
                if (c < 0x80) {
                    if (_Py_ascii_whitespace[c]) break;
                    i++;
                } else {
                    int l = u8len(c);
                    if (is_space(u8cp(t, i, l))) break;
                    i += l;
                }
            }
            put_token(k, base + st, i - st);
            ntok++;
        }
    }
    for (Py_ssize_t j = first; j < first + ntok; j++)
        k->tok_hash[j] = hash_bytes(k->arena.p + k->tok_start.p[j], k->tok_len.p[j]);
    return ntok;
}

/* ------------------------------------------------------ counting and clipping */

/* A token's hash: eight bytes at a time. It only picks a bucket (tokens are compared by their
 * bytes), so its one requirement is that equal bytes hash equally: the bytes past the token
 * that the last load reads (the arena keeps 8 spare bytes after its text) are masked off. */
static inline uint64_t hash_bytes(const uint8_t *s, Py_ssize_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xC2B2AE3D27D4EB4FULL), w;
    for (; n > 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    memcpy(&w, s, 8);
    w &= n == 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

static inline uint64_t mix(uint64_t h, uint32_t v) {
    h ^= (uint64_t)v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

static Py_ssize_t pow2_at_least(Py_ssize_t n) {
    Py_ssize_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* Room for the unigram arrays of n ids, all cleared (u_rseen -1: no reference yet). */
static int unigrams_reserve(K *k, Py_ssize_t n) {
    if (n <= k->u_cap) return 0;
    Py_ssize_t cap = pow2_at_least(n);
    int32_t **arrays[] = {&k->u_hyp, &k->u_rmax, &k->u_rcur, &k->u_rseen};
    for (int a = 0; a < 4; a++) {
        int32_t *p = (int32_t *)realloc(*arrays[a], (size_t)cap * sizeof(int32_t));
        if (!p) { PyErr_NoMemory(); return -1; }
        *arrays[a] = p;
        for (Py_ssize_t i = k->u_cap; i < cap; i++) p[i] = a == 3 ? -1 : 0;
    }
    k->u_cap = cap;
    return 0;
}

/* Intern the hypothesis tokens [t0, t0+nt) into ids 0..; fills hyp_ids, and the ids are dense. */
static int intern_hyp(K *k, Py_ssize_t t0, Py_ssize_t nt) {
    Py_ssize_t cap = pow2_at_least(2 * nt + 2);
    if (cap > k->tk_cap) {
        free(k->tk_slot); free(k->tk_hash);
        k->tk_slot = (int32_t *)malloc((size_t)cap * sizeof(int32_t));
        k->tk_hash = (uint64_t *)malloc((size_t)cap * sizeof(uint64_t));
        if (!k->tk_slot || !k->tk_hash) { PyErr_NoMemory(); return -1; }
        k->tk_cap = cap;
    }
    k->tk_mask = cap - 1;
    for (Py_ssize_t i = 0; i < cap; i++) k->tk_slot[i] = -1;
    k->hyp_ids.len = 0;
    if (ibuf_reserve(&k->hyp_ids, nt + 1) < 0) return -1;
    int32_t next = 0;
    for (Py_ssize_t j = 0; j < nt; j++) {
        const uint8_t *s = k->arena.p + k->tok_start.p[t0 + j];
        int32_t l = k->tok_len.p[t0 + j];
        uint64_t h = k->tok_hash[t0 + j];
        Py_ssize_t m = cap - 1, pos = (Py_ssize_t)(h & (uint64_t)m);
        int32_t id = -1;
        for (;;) {
            int32_t sl = k->tk_slot[pos];
            if (sl < 0) break;
            if (k->tk_hash[pos] == h) {
                /* tk_slot holds the token index (into the token list) of the first occurrence */
                int32_t tl = k->tok_len.p[sl];
                if (tl == l && memcmp(k->arena.p + k->tok_start.p[sl], s, (size_t)l) == 0) {
                    id = k->hyp_ids.p[sl - t0];
                    break;
                }
            }
            pos = (pos + 1) & m;
        }
        if (id < 0) {
            id = next++;
            k->tk_slot[pos] = (int32_t)(t0 + j);
            k->tk_hash[pos] = h;
        }
        k->hyp_ids.p[k->hyp_ids.len++] = id;
    }
    k->dense = 1;
    k->n_uniq = next;
    return 0;
}

/* Id of reference token ti, or -1 if the hypothesis (tokens t0..) does not contain it. */
static inline int32_t lookup_token(K *k, Py_ssize_t t0, Py_ssize_t ti) {
    uint64_t h = k->tok_hash[ti];
    const uint8_t *s = k->arena.p + k->tok_start.p[ti];
    int32_t l = k->tok_len.p[ti];
    Py_ssize_t m = k->tk_mask, pos = (Py_ssize_t)(h & (uint64_t)m);
    for (;;) {
        int32_t sl = k->tk_slot[pos];
        if (sl < 0) return -1;
        if (k->tk_hash[pos] == h) {
            int32_t tl = k->tok_len.p[sl];
            if (tl == l && memcmp(k->arena.p + k->tok_start.p[sl], s, (size_t)l) == 0)
                return k->hyp_ids.p[sl - t0];
        }
        pos = (pos + 1) & m;
    }
}

static int ng_prepare(K *k, Py_ssize_t nhyp) {
    Py_ssize_t want = pow2_at_least(2 * (nhyp * k->order) + 2);
    if (want > k->ng_cap) {
        free(k->ng); free(k->ng_used);
        k->ng = malloc((size_t)want * sizeof(*k->ng));
        k->ng_used = (int32_t *)malloc((size_t)want * sizeof(int32_t));
        if (!k->ng || !k->ng_used) { PyErr_NoMemory(); return -1; }
        k->ng_cap = want;
        for (Py_ssize_t i = 0; i < want; i++) k->ng[i].n = 0;
    }
    /* entries are cleared through ng_used, so [0, want) is empty here */
    k->ng_mask = want - 1;
    return 0;
}

static void ng_clear(K *k) {
    for (Py_ssize_t i = 0; i < k->ng_nused; i++) k->ng[k->ng_used[i]].n = 0;
    k->ng_nused = 0;
}

/* Whether a[0..n) == b[0..n) (n is at most the order: a loop beats a call to memcmp). */
static inline int same_ids(const int32_t *a, const int32_t *b, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Find the entry for ids[start..start+n) (hypothesis positions when insert). */
static inline struct ng *ng_find(K *k, uint64_t h, const int32_t *ids, int32_t n, int insert, int32_t start) {
    Py_ssize_t m = k->ng_mask, pos = (Py_ssize_t)(h & (uint64_t)m);
    const int32_t *hyp = k->hyp_ids.p;
    for (;;) {
        struct ng *e = &k->ng[pos];
        if (e->n == 0) {
            if (!insert) return NULL;
            e->h = h; e->n = n; e->start = start; e->hyp = 0; e->rmax = 0; e->rcur = 0; e->rseen = -1;
            k->ng_used[k->ng_nused++] = (int32_t)pos;
            return e;
        }
        if (e->h == h && e->n == n && same_ids(hyp + e->start, ids, n))
            return e;
        pos = (pos + 1) & m;
    }
}

/* --------------------------------------------- counting shared by stats and stats_ids */

/* row[0] and the totals of a hypothesis of nh tokens. */
static void hyp_totals(int64_t *row, Py_ssize_t nh, int32_t order) {
    row[0] = nh;
    for (int32_t g = 1; g <= order; g++) row[2 + order + g - 1] = nh >= g ? nh - g + 1 : 0;
}

/* Count the hypothesis n-grams of k->hyp_ids[0..nh) into the table; row[0] and the totals. */
static int count_hyp(K *k, Py_ssize_t nh, int64_t *row, Py_ssize_t K2) {
    if (ng_prepare(k, nh) < 0 || (k->dense && unigrams_reserve(k, k->n_uniq) < 0)) return -1;
    memset(row, 0, (size_t)K2 * sizeof(int64_t));
    row[0] = nh;
    const int32_t *hid = k->hyp_ids.p;
    int32_t order = k->order;
    for (Py_ssize_t i = 0; i < nh; i++) {
        uint64_t h = 0;
        int32_t g = 1;
        if (k->dense) { /* the unigram in its array; the table holds the longer n-grams */
            k->u_hyp[hid[i]]++;
            h = mix(h, (uint32_t)hid[i]);
            g = 2;
        }
        for (; g <= order && i + g <= nh; g++) {
            h = mix(h, (uint32_t)hid[i + g - 1]);
            struct ng *e = ng_find(k, h, hid + i, g, 1, (int32_t)i);
            e->hyp++;
        }
    }
    hyp_totals(row, nh, order);
    return 0;
}

/* Reference number `nref` with token ids rid[0..nr) (-1: a token the hypothesis lacks): the
   highest count of each hypothesis n-gram in one reference. An n-gram the hypothesis lacks
   ends the scan from that position: no longer n-gram starting there can be in it either. */
static void count_ref(K *k, const int32_t *rid, Py_ssize_t nr, Py_ssize_t nref) {
    int32_t order = k->order;
    for (Py_ssize_t i = 0; i < nr; i++) {
        uint64_t h = 0;
        int32_t g = 1;
        if (k->dense) {
            int32_t u = rid[i];
            if (u < 0) continue;
            if (k->u_rseen[u] != nref) { k->u_rseen[u] = (int32_t)nref; k->u_rcur[u] = 0; }
            if (++k->u_rcur[u] > k->u_rmax[u]) k->u_rmax[u] = k->u_rcur[u];
            h = mix(h, (uint32_t)u);
            g = 2;
        }
        for (; g <= order && i + g <= nr; g++) {
            if (rid[i + g - 1] < 0) break;
            h = mix(h, (uint32_t)rid[i + g - 1]);
            struct ng *e = ng_find(k, h, rid + i, g, 0, 0);
            if (!e) break;
            if (e->rseen != nref) { e->rseen = (int32_t)nref; e->rcur = 0; }
            if (++e->rcur > e->rmax) e->rmax = e->rcur;
        }
    }
}

/* r: the closest reference length, ties to the shorter. */
static int64_t closest_length(Py_ssize_t nh, const int64_t *reflens, Py_ssize_t nrefs) {
    int64_t cdiff = -1, clen = -1;
    for (Py_ssize_t j = 0; j < nrefs; j++) {
        int64_t d = nh - reflens[j];
        if (d < 0) d = -d;
        if (cdiff == -1 || d < cdiff) { cdiff = d; clen = reflens[j]; }
        else if (d == cdiff && reflens[j] < clen) clen = reflens[j];
    }
    return clen;
}

/* Close the row: r and the clipped matches; the table (and the unigram arrays) are emptied. */
static void finish_row(K *k, int64_t *row, Py_ssize_t nh, const int64_t *reflens, Py_ssize_t nrefs) {
    row[1] = closest_length(nh, reflens, nrefs);
    for (Py_ssize_t u = 0; u < k->ng_nused; u++) {
        struct ng *e = &k->ng[k->ng_used[u]];
        row[2 + e->n - 1] += e->hyp < e->rmax ? e->hyp : e->rmax;
    }
    ng_clear(k);
    if (k->dense) {
        for (Py_ssize_t u = 0; u < k->n_uniq; u++) {
            row[2] += k->u_hyp[u] < k->u_rmax[u] ? k->u_hyp[u] : k->u_rmax[u];
            k->u_hyp[u] = 0; k->u_rmax[u] = 0; k->u_rseen[u] = -1;
        }
        k->n_uniq = 0;
    }
}

/* stats_many: reference number `nref`, its tokens t0.. (ids in hyp_ids, where intern_hyp numbered
   the references' tokens), into the table: each n-gram's highest count in one reference. */
static void add_ref_ngrams(K *k, Py_ssize_t t0, Py_ssize_t nr, Py_ssize_t nref) {
    const int32_t *ids = k->hyp_ids.p + t0;
    int32_t order = k->order;
    for (Py_ssize_t i = 0; i < nr; i++) {
        uint64_t h = 0;
        for (int32_t g = 1; g <= order && i + g <= nr; g++) {
            h = mix(h, (uint32_t)ids[i + g - 1]);
            struct ng *e = ng_find(k, h, ids + i, g, 1, (int32_t)(t0 + i));
            if (e->rseen != nref) { e->rseen = (int32_t)nref; e->rcur = 0; }
            if (++e->rcur > e->rmax) e->rmax = e->rcur;
        }
    }
}

/* stats_many: a candidate's row against the references' table (add_ref_ngrams): its token ids
   cid[0..nh) are the references' (-1: a token none of them has); each occurrence of an n-gram
   matches while the candidate has it at most as often as the reference that has it most, which
   is clipping. An n-gram the references lack ends the scan from that position. */
static int count_matches(K *k, const int32_t *cid, Py_ssize_t nh, int64_t *row, Py_ssize_t K2) {
    int32_t order = k->order;
    memset(row, 0, (size_t)K2 * sizeof(int64_t));
    hyp_totals(row, nh, order);
    k->touched.len = 0;
    if (ibuf_reserve(&k->touched, nh * order + 1) < 0) return -1;
    for (Py_ssize_t i = 0; i < nh; i++) {
        uint64_t h = 0;
        for (int32_t g = 1; g <= order && i + g <= nh; g++) {
            if (cid[i + g - 1] < 0) break;
            h = mix(h, (uint32_t)cid[i + g - 1]);
            struct ng *e = ng_find(k, h, cid + i, g, 0, 0);
            if (!e) break;
            if (e->hyp++ == 0) k->touched.p[k->touched.len++] = (int32_t)(e - k->ng);
            if (e->hyp <= e->rmax) row[2 + g - 1]++;
        }
    }
    for (Py_ssize_t u = 0; u < k->touched.len; u++) k->ng[k->touched.p[u]].hyp = 0;
    return 0;
}

/* Write row r to out (per_row) or add it to the sum; -1 with OverflowError if the sum overflows. */
static int emit_row(int64_t *o, const int64_t *row, Py_ssize_t r, Py_ssize_t K2, int per_row) {
    if (per_row) {
        memcpy(o + r * K2, row, (size_t)K2 * sizeof(int64_t));
        return 0;
    }
    int overflow = 0;
    for (Py_ssize_t q = 0; q < K2; q++) overflow |= __builtin_add_overflow(o[q], row[q], &o[q]);
    if (overflow) {
        PyErr_Format(PyExc_OverflowError, "statistics: the sum of row %zd into out exceeds int64", r);
        return -1;
    }
    return 0;
}

/* The ValueError(row, ref_index, reason) of a bad row (unless an error is already set). */
static void row_error(const K *k) {
    if (PyErr_Occurred()) return;
    PyObject *e = Py_BuildValue("(nns)", k->bad_row, k->bad_ref, k->bad_what ? k->bad_what : "invalid row");
    if (e) { PyErr_SetObject(PyExc_ValueError, e); Py_DECREF(e); }
}

/* ----------------------------------------------------------------- the call */

PyDoc_STRVAR(stats_doc,
"stats(hyp_data, hyp_offsets, hyp_valid, ref_data, ref_offsets, ref_valid,\n"
"      list_offsets, tokenizer, lowercase, max_order, flags, out, per_row[, stop_after])\n"
"\n"
"Fill `out` (int64, n*(2+2N) when per_row else 2+2N, added to) with BLEU\n"
"statistics. Offsets are int64 (n+1 / m+1 / n+1 values), valid buffers are\n"
"one byte per value (or None: all valid). Raises OverflowError if a sum added\n"
"to `out` would exceed int64, and\n"
"ValueError(row, ref_index or -1 for the candidate, reason). stop_after (1: normalise,\n"
"2: tokenize, 3: everything, the default) exists for stage timings.");

static PyObject *k_stats(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_hd, *o_ho, *o_hv, *o_rd, *o_ro, *o_rv, *o_lo, *o_flags, *o_out;
    int tokenizer, lowercase, order, per_row, stop_after = STAGE_ALL;
    if (!PyArg_ParseTuple(args, "OOOOOOOiiiOOi|i", &o_hd, &o_ho, &o_hv, &o_rd, &o_ro, &o_rv, &o_lo,
                          &tokenizer, &lowercase, &order, &o_flags, &o_out, &per_row, &stop_after))
        return NULL;
    if (order < 1 || order > 64) { PyErr_SetString(PyExc_ValueError, "max_order must be in 1..64"); return NULL; }
    if (tokenizer < TOK_NONE || tokenizer > TOK_CHAR) { PyErr_SetString(PyExc_ValueError, "unknown tokenizer id"); return NULL; }

    View hd, ho, hv, rd, ro, rv, lo, fl, out;
    View *all[] = {&hd, &ho, &hv, &rd, &ro, &rv, &lo, &fl, &out};
    for (int i = 0; i < 9; i++) all[i]->held = 0;
    PyObject *result = NULL;
    K k;
    memset(&k, 0, sizeof(k));
    if (get_view(o_hd, &hd, 0) < 0 || get_view(o_ho, &ho, 0) < 0 || get_view(o_hv, &hv, 0) < 0 ||
        get_view(o_rd, &rd, 0) < 0 || get_view(o_ro, &ro, 0) < 0 || get_view(o_rv, &rv, 0) < 0 ||
        get_view(o_lo, &lo, 0) < 0 || get_view(o_flags, &fl, 0) < 0 || get_view(o_out, &out, 1) < 0)
        goto done;
    if (!hd.held || !ho.held || !rd.held || !ro.held || !lo.held || !out.held) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        goto done;
    }
    Py_ssize_t n, m, K2 = 2 + 2 * (Py_ssize_t)order;
    if (batch_shape(&ho, &ro, &lo, &hv, &rv, &out, per_row, K2, &n, &m) < 0) goto done;
    if ((tokenizer == TOK_INTL || tokenizer == TOK_ZH) && (!fl.held || fl.view.len != UNI_SIZE)) {
        PyErr_SetString(PyExc_ValueError, "this tokenizer needs the Unicode flag table");
        goto done;
    }
    const uint8_t *hdata = (const uint8_t *)hd.view.buf, *rdata = (const uint8_t *)rd.view.buf;
    const int64_t *hoff = (const int64_t *)ho.view.buf, *roff = (const int64_t *)ro.view.buf;
    const int64_t *loff = (const int64_t *)lo.view.buf;
    const uint8_t *hval = hv.held ? (const uint8_t *)hv.view.buf : NULL;
    const uint8_t *rval = rv.held ? (const uint8_t *)rv.view.buf : NULL;
    int64_t *o = (int64_t *)out.view.buf;
    if (hoff[0] < 0 || hoff[n] > hd.view.len || roff[0] < 0 || roff[m] > rd.view.len ||
        loff[0] < 0 || loff[n] > m) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
        goto done;
    }

    k.tokenizer = tokenizer; k.lowercase = lowercase; k.order = order; k.stop_after = stop_after;
    k.flags = fl.held ? (const uint8_t *)fl.view.buf : NULL;
    int64_t *row = (int64_t *)calloc((size_t)K2, sizeof(int64_t));
    int64_t *reflens = NULL;
    Py_ssize_t reflens_cap = 0;
    if (!row) { PyErr_NoMemory(); goto done; }

    for (Py_ssize_t r = 0; r < n; r++) {
        k.bad_row = r;
        k.bad_ref = -1;
        if (hval && !hval[r]) { k.bad_what = "candidate is null"; goto bad; }
        int64_t a = hoff[r], b = hoff[r + 1];
        int64_t la = loff[r], lb = loff[r + 1];
        if (b < a || lb < la) { k.bad_what = "offsets are not monotonic"; goto bad; }
        k.arena.len = 0; k.tok_start.len = 0; k.tok_len.len = 0;
        Py_ssize_t nh = segment_tokens(&k, hdata + a, (Py_ssize_t)(b - a));
        if (nh < 0) goto bad;
        if (stop_after < STAGE_ALL) { /* benchmark stages: tokenize the references too, count nothing */
            for (int64_t j = la; j < lb; j++) {
                if (rval && !rval[j]) continue;
                k.bad_ref = (Py_ssize_t)(j - la);
                if (segment_tokens(&k, rdata + roff[j], (Py_ssize_t)(roff[j + 1] - roff[j])) < 0) goto bad;
            }
            continue;
        }
        if (intern_hyp(&k, 0, nh) < 0) goto fail;
        if (count_hyp(&k, nh, row, K2) < 0) goto fail;
        /* references */
        Py_ssize_t nrefs = 0;
        if (lb - la > reflens_cap) {
            reflens_cap = (Py_ssize_t)(lb - la) * 2;
            int64_t *p = (int64_t *)realloc(reflens, (size_t)reflens_cap * sizeof(int64_t));
            if (!p) { PyErr_NoMemory(); goto fail; }
            reflens = p;
        }
        for (int64_t j = la; j < lb; j++) {
            if (rval && !rval[j]) continue; /* a missing reference (None) */
            int64_t ra = roff[j], rb = roff[j + 1];
            k.bad_ref = (Py_ssize_t)(j - la);
            if (rb < ra) { k.bad_what = "offsets are not monotonic"; goto bad; }
            Py_ssize_t t0 = k.tok_start.len;
            Py_ssize_t nr = segment_tokens(&k, rdata + ra, (Py_ssize_t)(rb - ra));
            if (nr < 0) goto bad;
            reflens[nrefs] = nr;
            k.ref_ids.len = 0;
            if (ibuf_reserve(&k.ref_ids, nr + 1) < 0) goto fail;
            for (Py_ssize_t t = 0; t < nr; t++) k.ref_ids.p[t] = lookup_token(&k, 0, t0 + t);
            count_ref(&k, k.ref_ids.p, nr, nrefs);
            nrefs++;
            /* drop this reference's tokens from the lists; the arena text can stay */
            k.tok_start.len = t0; k.tok_len.len = t0;
        }
        k.bad_ref = -1;
        if (nrefs == 0) { k.bad_what = "no reference (all references are missing)"; goto bad; }
        finish_row(&k, row, nh, reflens, nrefs);
        if (emit_row(o, row, r, K2, per_row) < 0) goto fail;
    }
    Py_INCREF(Py_None);
    result = Py_None;
    goto cleanup;
bad:
    row_error(&k);
fail:
cleanup:
    free(row);
    free(reflens);
done:
    k_free(&k);
    for (int i = 0; i < 9; i++) rel_view(all[i]);
    return result;
}


PyDoc_STRVAR(stats_many_doc,
"stats_many(systems, ref_data, ref_offsets, ref_valid, list_offsets, tokenizer, lowercase,\n"
"           max_order, flags, per_row)\n"
"\n"
"As stats, for several candidates of the same references (the systems of one test set): each\n"
"row's references are tokenized once and their n-grams tabled once (with each one's highest\n"
"count in one reference), then every system's candidate is looked up in that table.\n"
"`systems` is a sequence of (hyp_data, hyp_offsets, hyp_valid, out) tuples, each with as many\n"
"rows as list_offsets; each `out` is filled (added to) as stats fills its one. The errors are\n"
"stats's: ValueError(row, ref_index or -1, reason) for the first bad row met (a row's\n"
"references before its candidates, systems in order), which is not necessarily the one stats\n"
"called system by system reports first.");

static PyObject *k_stats_many(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_sys, *o_rd, *o_ro, *o_rv, *o_lo, *o_flags;
    int tokenizer, lowercase, order, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOiiiOi", &o_sys, &o_rd, &o_ro, &o_rv, &o_lo, &tokenizer, &lowercase, &order,
                          &o_flags, &per_row))
        return NULL;
    if (order < 1 || order > 64) { PyErr_SetString(PyExc_ValueError, "max_order must be in 1..64"); return NULL; }
    if (tokenizer < TOK_NONE || tokenizer > TOK_CHAR) { PyErr_SetString(PyExc_ValueError, "unknown tokenizer id"); return NULL; }
    PyObject *seq = PySequence_Fast(o_sys, "systems must be a sequence of (data, offsets, valid, out) tuples");
    if (!seq) return NULL;
    Py_ssize_t S = PySequence_Fast_GET_SIZE(seq);
    View rd, ro, rv, lo, fl;
    View *shared[] = {&rd, &ro, &rv, &lo, &fl};
    for (int i = 0; i < 5; i++) shared[i]->held = 0;
    View *hv4 = (View *)calloc((size_t)(S > 0 ? S : 1) * 4, sizeof(View)); /* hd, ho, hv, out per system */
    PyObject *result = NULL;
    K k;
    memset(&k, 0, sizeof(k));
    int64_t *row = NULL, *reflens = NULL, *rstart = NULL;
    Py_ssize_t reflens_cap = 0;
    if (!hv4) { PyErr_NoMemory(); goto done; }
    if (get_view(o_rd, &rd, 0) < 0 || get_view(o_ro, &ro, 0) < 0 || get_view(o_rv, &rv, 0) < 0 ||
        get_view(o_lo, &lo, 0) < 0 || get_view(o_flags, &fl, 0) < 0)
        goto done;
    if (!rd.held || !ro.held || !lo.held) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        goto done;
    }
    Py_ssize_t n = 0, m = 0, K2 = 2 + 2 * (Py_ssize_t)order;
    for (Py_ssize_t s = 0; s < S; s++) {
        View *v = hv4 + 4 * s;
        if (get_system_views(PySequence_Fast_GET_ITEM(seq, s), v) < 0) goto done;
        Py_ssize_t ns, ms;
        if (batch_shape(v + 1, &ro, &lo, v + 2, &rv, v + 3, per_row, K2, &ns, &ms) < 0) goto done;
        n = ns; m = ms;
        const int64_t *hoff = (const int64_t *)v[1].view.buf;
        if (hoff[0] < 0 || hoff[n] > v[0].view.len) {
            PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
            goto done;
        }
    }
    if (S == 0) { Py_INCREF(Py_None); result = Py_None; goto done; }
    if ((tokenizer == TOK_INTL || tokenizer == TOK_ZH) && (!fl.held || fl.view.len != UNI_SIZE)) {
        PyErr_SetString(PyExc_ValueError, "this tokenizer needs the Unicode flag table");
        goto done;
    }
    const uint8_t *rdata = (const uint8_t *)rd.view.buf;
    const int64_t *roff = (const int64_t *)ro.view.buf, *loff = (const int64_t *)lo.view.buf;
    const uint8_t *rval = rv.held ? (const uint8_t *)rv.view.buf : NULL;
    if (roff[0] < 0 || roff[m] > rd.view.len || loff[0] < 0 || loff[n] > m) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
        goto done;
    }
    k.tokenizer = tokenizer; k.lowercase = lowercase; k.order = order; k.stop_after = STAGE_ALL;
    k.flags = fl.held ? (const uint8_t *)fl.view.buf : NULL;
    row = (int64_t *)calloc((size_t)K2, sizeof(int64_t));
    if (!row) { PyErr_NoMemory(); goto done; }

    for (Py_ssize_t r = 0; r < n; r++) {
        k.bad_row = r;
        k.bad_ref = -1;
        int64_t la = loff[r], lb = loff[r + 1];
        if (lb < la) { k.bad_what = "offsets are not monotonic"; goto bad; }
        if (lb - la > reflens_cap) {
            reflens_cap = (Py_ssize_t)(lb - la) * 2;
            int64_t *p1 = (int64_t *)realloc(reflens, (size_t)reflens_cap * sizeof(int64_t));
            if (p1) reflens = p1;
            int64_t *p2 = (int64_t *)realloc(rstart, (size_t)reflens_cap * sizeof(int64_t));
            if (p2) rstart = p2;
            if (!p1 || !p2) { PyErr_NoMemory(); goto done; }
        }
        /* the references, once: their tokens stay in the lists, before any candidate's */
        k.arena.len = 0; k.tok_start.len = 0; k.tok_len.len = 0;
        Py_ssize_t nrefs = 0;
        for (int64_t j = la; j < lb; j++) {
            if (rval && !rval[j]) continue; /* a missing reference (None) */
            int64_t ra = roff[j], rb = roff[j + 1];
            k.bad_ref = (Py_ssize_t)(j - la);
            if (rb < ra) { k.bad_what = "offsets are not monotonic"; goto bad; }
            rstart[nrefs] = k.tok_start.len;
            Py_ssize_t nr = segment_tokens(&k, rdata + ra, (Py_ssize_t)(rb - ra));
            if (nr < 0) goto bad;
            reflens[nrefs++] = nr;
        }
        k.bad_ref = -1;
        if (nrefs == 0) { k.bad_what = "no reference (all references are missing)"; goto bad; }
        Py_ssize_t R = k.tok_start.len, A = k.arena.len;
        /* their n-grams into the table once, with the highest count of each in one reference (the
           references' tokens numbered as a hypothesis' are); each candidate is looked up there */
        if (intern_hyp(&k, 0, R) < 0 || ng_prepare(&k, R) < 0) goto done;
        for (Py_ssize_t q = 0; q < nrefs; q++) add_ref_ngrams(&k, (Py_ssize_t)rstart[q], (Py_ssize_t)reflens[q], q);
        for (Py_ssize_t s = 0; s < S; s++) {
            View *v = hv4 + 4 * s;
            const int64_t *hoff = (const int64_t *)v[1].view.buf;
            const uint8_t *hval = v[2].held ? (const uint8_t *)v[2].view.buf : NULL;
            if (hval && !hval[r]) { k.bad_what = "candidate is null"; goto bad; }
            int64_t a = hoff[r], b = hoff[r + 1];
            if (b < a) { k.bad_what = "offsets are not monotonic"; goto bad; }
            k.arena.len = A; k.tok_start.len = R; k.tok_len.len = R;
            Py_ssize_t nh = segment_tokens(&k, (const uint8_t *)v[0].view.buf + a, (Py_ssize_t)(b - a));
            if (nh < 0) goto bad;
            if (ibuf_reserve(&k.ref_ids, nh + 1) < 0) goto done;
            for (Py_ssize_t t = 0; t < nh; t++) k.ref_ids.p[t] = lookup_token(&k, 0, R + t);
            if (count_matches(&k, k.ref_ids.p, nh, row, K2) < 0) goto done;
            row[1] = closest_length(nh, reflens, nrefs);
            if (emit_row((int64_t *)v[3].view.buf, row, r, K2, per_row) < 0) goto done;
        }
        ng_clear(&k);
    }
    Py_INCREF(Py_None);
    result = Py_None;
    goto done;
bad:
    row_error(&k);
done:
    free(row); free(reflens); free(rstart);
    k_free(&k);
    for (int i = 0; i < 5; i++) rel_view(shared[i]);
    if (hv4)
        for (Py_ssize_t i = 0; i < 4 * S; i++) rel_view(hv4 + i);
    free(hv4);
    Py_DECREF(seq);
    return result;
}


PyDoc_STRVAR(stats_ids_doc,
"stats_ids(hyp_ids, hyp_offsets, hyp_index, hyp_valid, ref_ids, ref_offsets, ref_index, ref_valid,\n"
"          list_offsets, max_order, out, per_row)\n"
"\n"
"As stats, for text already split into tokens and the tokens numbered (equal ids: equal\n"
"tokens). Each side is a dictionary of token lists, ids (int32 >= 0) and int64 offsets into\n"
"them (d+1 values), and an index (int32, one value per candidate / reference: the dictionary\n"
"entry it is; or None: entry i is candidate / reference i). The validity bytes are one per\n"
"candidate / reference; a null value's index is neither read nor checked. ValueError (one\n"
"line) for a negative id, an offset or index outside its data; ValueError(row, ref_index or\n"
"-1, reason) for a null candidate or a row without references; OverflowError if a sum added\n"
"to `out` would exceed int64.");

/* One side: its ids >= 0 (a negative id is how count_ref marks a token the candidate lacks),
   its dictionary offsets d[0..nd] monotonic and inside the ids, its index (when given) inside
   the dictionary for every valid value. -1 with ValueError if not. */
static int check_side(const int32_t *ids, Py_ssize_t nids, const int64_t *off, Py_ssize_t nd, const int32_t *idx,
                      const uint8_t *valid, Py_ssize_t count) {
    int32_t low = 0;
    for (Py_ssize_t i = 0; i < nids; i++) low |= ids[i];
    if (low < 0) {
        PyErr_SetString(PyExc_ValueError, "token ids must be >= 0");
        return -1;
    }
    for (Py_ssize_t e = 0; e < nd; e++)
        if (off[e] < 0 || off[e + 1] < off[e] || off[e + 1] > nids) {
            PyErr_SetString(PyExc_ValueError, "offsets are not monotonic or point outside their data");
            return -1;
        }
    if (idx)
        for (Py_ssize_t i = 0; i < count; i++)
            if ((!valid || valid[i]) && (idx[i] < 0 || idx[i] >= nd)) {
                PyErr_SetString(PyExc_ValueError, "an index points outside its dictionary");
                return -1;
            }
    return 0;
}

static PyObject *k_stats_ids(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_hi, *o_ho, *o_hx, *o_hv, *o_ri, *o_ro, *o_rx, *o_rv, *o_lo, *o_out;
    int order, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOiOi", &o_hi, &o_ho, &o_hx, &o_hv, &o_ri, &o_ro, &o_rx, &o_rv, &o_lo,
                          &order, &o_out, &per_row))
        return NULL;
    if (order < 1 || order > 64) { PyErr_SetString(PyExc_ValueError, "max_order must be in 1..64"); return NULL; }
    View hi, ho, hx, hv, ri, ro, rx, rv, lo, out;
    View *all[] = {&hi, &ho, &hx, &hv, &ri, &ro, &rx, &rv, &lo, &out};
    for (int i = 0; i < 10; i++) all[i]->held = 0;
    PyObject *result = NULL;
    K k;
    memset(&k, 0, sizeof(k));
    int64_t *row = NULL, *reflens = NULL;
    if (get_view(o_hi, &hi, 0) < 0 || get_view(o_ho, &ho, 0) < 0 || get_view(o_hx, &hx, 0) < 0 ||
        get_view(o_hv, &hv, 0) < 0 || get_view(o_ri, &ri, 0) < 0 || get_view(o_ro, &ro, 0) < 0 ||
        get_view(o_rx, &rx, 0) < 0 || get_view(o_rv, &rv, 0) < 0 || get_view(o_lo, &lo, 0) < 0 ||
        get_view(o_out, &out, 1) < 0)
        goto done;
    if (!hi.held || !ho.held || !ri.held || !ro.held || !lo.held || !out.held) {
        PyErr_SetString(PyExc_TypeError, "ids, offsets and out buffers are required");
        goto done;
    }
    Py_ssize_t nhi = hi.view.len / 4, nri = ri.view.len / 4;
    Py_ssize_t nhd = ho.view.len / 8 - 1, nrd = ro.view.len / 8 - 1;
    Py_ssize_t n = hx.held ? hx.view.len / 4 : nhd, m = rx.held ? rx.view.len / 4 : nrd;
    Py_ssize_t K2 = 2 + 2 * (Py_ssize_t)order;
    if (nhd < 0 || nrd < 0) {
        PyErr_SetString(PyExc_ValueError, "offset buffers have inconsistent lengths");
        goto done;
    }
    if (rows_shape(n, m, &lo, &hv, &rv, &out, per_row, K2) < 0) goto done;
    const int32_t *hids = (const int32_t *)hi.view.buf, *rids = (const int32_t *)ri.view.buf;
    const int64_t *hoff = (const int64_t *)ho.view.buf, *roff = (const int64_t *)ro.view.buf;
    const int32_t *hidx = hx.held ? (const int32_t *)hx.view.buf : NULL;
    const int32_t *ridx = rx.held ? (const int32_t *)rx.view.buf : NULL;
    const int64_t *loff = (const int64_t *)lo.view.buf;
    const uint8_t *hval = hv.held ? (const uint8_t *)hv.view.buf : NULL;
    const uint8_t *rval = rv.held ? (const uint8_t *)rv.view.buf : NULL;
    int64_t *o = (int64_t *)out.view.buf;
    /* every offset and index is checked here, so the loops below cannot read outside the buffers */
    if (check_side(hids, nhi, hoff, nhd, hidx, hval, n) < 0 || check_side(rids, nri, roff, nrd, ridx, rval, m) < 0)
        goto done;
    for (Py_ssize_t r = 0; r < n; r++)
        if (loff[r] < 0 || loff[r + 1] < loff[r] || loff[r + 1] > m) {
            PyErr_SetString(PyExc_ValueError, "offsets are not monotonic or point outside their data");
            goto done;
        }
    k.order = order;
    row = (int64_t *)calloc((size_t)K2, sizeof(int64_t));
    Py_ssize_t reflens_cap = 0;
    if (!row) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t r = 0; r < n; r++) {
        k.bad_row = r;
        k.bad_ref = -1;
        if (hval && !hval[r]) { k.bad_what = "candidate is null"; goto bad; }
        Py_ssize_t he = hidx ? hidx[r] : r;
        Py_ssize_t nh = (Py_ssize_t)(hoff[he + 1] - hoff[he]);
        k.hyp_ids.len = 0;
        if (ibuf_reserve(&k.hyp_ids, nh + 1) < 0) goto fail;
        memcpy(k.hyp_ids.p, hids + hoff[he], (size_t)nh * sizeof(int32_t));
        k.hyp_ids.len = nh;
        if (count_hyp(&k, nh, row, K2) < 0) goto fail;
        Py_ssize_t nrefs = 0;
        if (loff[r + 1] - loff[r] > reflens_cap) {
            reflens_cap = (Py_ssize_t)(loff[r + 1] - loff[r]) * 2;
            int64_t *p = (int64_t *)realloc(reflens, (size_t)reflens_cap * sizeof(int64_t));
            if (!p) { PyErr_NoMemory(); goto fail; }
            reflens = p;
        }
        for (int64_t j = loff[r]; j < loff[r + 1]; j++) {
            if (rval && !rval[j]) continue; /* a missing reference (None) */
            Py_ssize_t re = ridx ? ridx[j] : j;
            Py_ssize_t nr = (Py_ssize_t)(roff[re + 1] - roff[re]);
            reflens[nrefs] = nr;
            count_ref(&k, rids + roff[re], nr, nrefs);
            nrefs++;
        }
        if (nrefs == 0) { ng_clear(&k); k.bad_what = "no reference (all references are missing)"; goto bad; }
        finish_row(&k, row, nh, reflens, nrefs);
        if (emit_row(o, row, r, K2, per_row) < 0) goto fail;
    }
    Py_INCREF(Py_None);
    result = Py_None;
    goto done;
bad:
    row_error(&k);
fail:
done:
    free(row);
    free(reflens);
    k_free(&k);
    for (int i = 0; i < 10; i++) rel_view(all[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"stats", k_stats, METH_VARARGS, stats_doc},
    {"stats_many", k_stats_many, METH_VARARGS, stats_many_doc},
    {"stats_ids", k_stats_ids, METH_VARARGS, stats_ids_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core._bleu", "Batch BLEU statistics kernel.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bleu(void) {
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    PyModule_AddIntConstant(mod, "TOK_NONE", TOK_NONE);
    PyModule_AddIntConstant(mod, "TOK_13A", TOK_13A);
    PyModule_AddIntConstant(mod, "TOK_INTL", TOK_INTL);
    PyModule_AddIntConstant(mod, "TOK_ZH", TOK_ZH);
    PyModule_AddIntConstant(mod, "TOK_CHAR", TOK_CHAR);
    PyModule_AddIntConstant(mod, "F_N", F_N);
    PyModule_AddIntConstant(mod, "F_P", F_P);
    PyModule_AddIntConstant(mod, "F_S", F_S);
    PyModule_AddIntConstant(mod, "F_ZH", F_ZH);
    PyModule_AddIntConstant(mod, "UNI_SIZE", UNI_SIZE);
    return mod;
}
