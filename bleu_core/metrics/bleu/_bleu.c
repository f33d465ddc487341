/*
 * bleu_core._bleu -- BLEU's batch statistics: its tokenizer passes and its n-gram counting.
 *
 * One call turns a batch of candidates and their references (Arrow-style
 * buffers: UTF-8 data + int64 offsets + validity bytes) into BLEU sufficient
 * statistics, either one row per pair or their sum:
 *
 *     [c, r, matches_1..N, totals_1..N]
 *
 * `stats` tokenizes text; `stats_many` does so for several systems' candidates of the same
 * references; `stats_ids` counts text already tokenized and numbered (spBLEU: SentencePiece's
 * piece ids, flattened by bleu_core.tokenizers._spm_ids); `stages` runs only stats's first passes
 * (normalising, tokenizing), for the benchmarks' stage timings. The metric-independent bootstrap
 * is bleu_core._resample.
 *
 * Each entry point only parses and checks its arguments into a struct (Batch, IdBatch; the
 * options in K); run, run_many, run_ids and run_stages do the work over it in plain C and return
 * a status (ST_*), which the entry point turns into its exception (run_result). The runs touch
 * no Python object and are run with the GIL released (other threads, such as the bundles one
 * Beam worker runs at once, go on meanwhile); the one exception, str.lower of non-ASCII text,
 * takes it back for the call (lower_segment). Errors are statuses, raised once it is held again.
 *
 * Every step mirrors sacrebleu 2.6.0 exactly:
 *   - lowercasing calls Python's str.lower (ASCII rows take a byte fast path,
 *     which is identical for ASCII);
 *   - rstrip/strip/split use Py_UNICODE_ISSPACE, the predicate behind
 *     str.rstrip() and str.split();
 *   - each tokenizer regex of sacrebleu is a pattern of one or two
 *     single-code-point classes, so re.sub's leftmost non-overlapping scan is
 *     reproduced by a left-to-right scan over code points: intl runs its three
 *     regexes side by side in the scan that splits (split_intl); 13a and zh,
 *     whose regexes only isolate single characters, find their tokens in one
 *     scan (split_regexp);
 *   - the Unicode classes that depend on a library (zh ranges as sacrebleu's
 *     string comparisons evaluate them; \p{N}, \p{P}, \p{S} of the `regex`
 *     module) arrive as a flag table computed in Python from that library;
 *   - each token is interned as the scan that splits it ends it (put_token: the
 *     candidate's tokens get ids 0.., the references' are looked up), compared
 *     by its bytes; n-grams are compared exactly (token ids, then id
 *     sequences); hashes only pick the bucket, so collisions cannot change a
 *     count; unigrams of the candidate's ids are counted in arrays indexed by id; stats's rows
 *     of order <= 4 with fewer than 65,536 distinct candidate tokens pack each
 *     n-gram's dense ids into one 64-bit key (16 bits an id), compared as one
 *     integer, and count the clipped matches as the references are read; of those rows, the
 *     n-grams whose first token the candidate has once (most) are not tabled: a reference's ids
 *     are compared with the candidate's from that token's position (count_ref_packed);
 *   - 13a and intl without lowercase validate UTF-8 in the scan that splits the
 *     text (each multi-byte character is decoded as it is met, or, in 13a, checked
 *     by one masked word when its lead byte starts no whitespace; whitespace is
 *     a bitmap of the BMP made from Py_UNICODE_ISSPACE), and 13a splits before its
 *     rewrites, which only text with '<', '&' or a newline needs: that text is
 *     split again after them (segment_tokens);
 *   - clipping uses the maximum count in any single reference and r is the
 *     closest reference length, ties to the shorter one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* hash_bytes and same_token read a token's bytes as little-endian 64-bit words */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "bleu_core's BLEU kernel reads bytes as little-endian words; big-endian machines are not supported"
#endif
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#include "_buffers.h" /* View, get_view, rows_shape, batch_shape, Sys, get_systems: shared with _chrf.c */
#include "_text.h"    /* u8dec, u8len, u8cp, is_space: shared with _chrf.c */
#include "_status.h"  /* ST_*, status_result: shared with _chrf.c and _ter.c */

enum { TOK_NONE = 0, TOK_13A = 1, TOK_INTL = 2, TOK_ZH = 3, TOK_CHAR = 4 };

/* flag bits of the Unicode table passed from Python */
enum { F_N = 1, F_P = 2, F_S = 4, F_ZH = 8 };

#define UNI_SIZE 0x110000

/* ------------------------------------------------------------------ buffers */

/* Growable buffers; *_reserve returns -1 when out of memory (no Python error is set). */
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
    if (!p) return -1;
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
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* ------------------------------------------------------------ kernel state */

/* stages: the passes of stats that run_stages runs, for the benchmarks' stage timings */
enum { STAGE_NORMALISE = 1, STAGE_TOKENIZE = 2 };

typedef struct {
    int tokenizer, lowercase, order;
    int unchecked; /* the current segment's text is not yet validated as UTF-8: the split does it */
    int rewrites;  /* split_regexp met a '<', '&' or newline in unchecked text (see segment_tokens) */
    const uint8_t *flags; /* UNI_SIZE bytes, or NULL when the tokenizer needs none */
    uint8_t intl_plain[256]; /* intl: the ASCII bytes (NUL excepted) with no flag and no whitespace */
    Buf a, b, lower;      /* scratch for the tokenizer passes */
    Buf arena;            /* final text of every segment of the current pair */
    /* tokens are interned as they are split (put_token): open addressing over tk[0..tk_mask], an
       entry per distinct token (the high half of its hash, its id, its span in the arena; id -1:
       empty), tk_used[id] its position; tk_n ids given so far (0..tk_n-1, in order of first
       occurrence). tk_insert: a token not met yet gets the next id (the candidate; stats_many's
       references); otherwise it gets -1 (looked up). Each token's id is appended to *tk_ids. */
    struct tk { uint32_t tag; int32_t id, start, len; } *tk;
    int32_t *tk_used; Py_ssize_t tk_cap, tk_mask, tk_n;
    int tk_insert;
    IBuf *tk_ids;
    IBuf hyp_ids, ref_ids;
    IBuf touched; /* stats_many: the table entries a candidate found */
    /* n-gram table */
    struct ng { uint64_t h; int32_t start, n, hyp, rmax, rcur, rseen; } *ng;
    Py_ssize_t ng_cap, ng_mask;
    int32_t *ng_used; Py_ssize_t ng_nused;
    /* the n-gram table of rows packed into 64-bit keys (packed: stats's rows of order <= 4 whose
       hypothesis has at most PK_IDS distinct tokens): an n-gram of dense ids is the key
       (id_1 + 1) | (id_2 + 1) << 16 | ..., so keys compare as one integer and say their order; an
       entry is in use when its gen is the row's (nothing to clear between rows) */
    struct pk { uint64_t key; uint32_t gen; int32_t hyp, rmax, rcur, rseen; } *pk;
    Py_ssize_t pk_cap, pk_mask; uint32_t pk_gen; int packed;
    /* unigrams when the hypothesis ids are dense (0..n_uniq-1, as put_token numbers them): per id,
       its count in the hypothesis, the highest in one reference, the count in reference u_rseen */
    int dense;
    int32_t *u_hyp, *u_rmax, *u_rcur, *u_rseen; Py_ssize_t u_cap, n_uniq;
    /* packed rows (count_hyp_packed): per id, its position in the hypothesis (its last), and which
       n-grams (bit g - 1: order g) starting there a reference has matched, for the ids the
       hypothesis has once (u_once: 0 until then; cleared by finish_row_packed) */
    int32_t *u_pos, *u_once;
    int64_t *row;                 /* the statistics of the current row (row_width values) */
    /* per reference of the row: its length, and its first token (stats_many) */
    int64_t *reflens, *rstart; Py_ssize_t refs_cap;
    Py_ssize_t bad_row, bad_ref; const char *bad_what; /* what ST_BAD and ST_OVERFLOW report */
    PyThreadState *ts; /* the GIL, released by the entry point for the run: lower_segment takes it back */
} K;

static void k_free(K *k) {
    free(k->a.p); free(k->b.p); free(k->lower.p); free(k->arena.p);
    free(k->tk); free(k->tk_used);
    free(k->hyp_ids.p); free(k->ref_ids.p); free(k->touched.p);
    free(k->ng); free(k->ng_used); free(k->pk);
    free(k->u_hyp); free(k->u_rmax); free(k->u_rcur); free(k->u_rseen); free(k->u_pos); free(k->u_once);
    free(k->row); free(k->reflens); free(k->rstart);
}

/* ST_BAD for the current row: `what` is the reason its ValueError gives. */
static int bad(K *k, const char *what) {
    k->bad_what = what;
    return ST_BAD;
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
enum { C_SPACE = 1, C_PUNCT = 2, C_DOT = 4, C_DASH = 8, C_HIGH = 16, C_NUL = 32,
       C_REWRITE = 64 /* beside C_SPACE or C_PUNCT: '\n', '<' and '&', which 13a's rewrites look for */ };

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
        t['\n'] |= C_REWRITE; t['<'] |= C_REWRITE; t['&'] |= C_REWRITE;
        init = 1;
    }
    return t;
}

static inline int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

/* is_space of the BMP as a bitmap, made from Py_UNICODE_ISSPACE when the module is initialised
   (space_bitmap, from PyInit__bleu: no call ever sees it half made); above the BMP the predicate
   itself. */
static uint64_t space_bmp[0x10000 / 64];

static void space_bitmap(void) {
    static int init = 0;
    if (init) return;
    for (uint32_t c = 0; c < 0x10000; c++)
        if (is_space(c)) space_bmp[c >> 6] |= 1ULL << (c & 63);
    init = 1;
}

static inline int is_space_fast(uint32_t c) {
    return c < 0x10000 ? (int)((space_bmp[c >> 6] >> (c & 63)) & 1) : is_space(c);
}

/* 13a's fast path through a multi-byte character (split_regexp, token_run): per lead byte, a mask
   and a value that the character's first four bytes (one little-endian word) match exactly when
   they are one valid character (continuation bytes; the narrower second byte of E0, ED and F4),
   for the lead bytes none of whose code points is whitespace: such a character is u8_len bytes of
   its token. The lead bytes of whitespace (C2, E1, E2, E3: U+0085, U+00A0, U+1680, U+2000..,
   U+3000), F0 (second byte 90..BF), invalid lead bytes and ASCII have mask 0 and value 1, which
   nothing matches: they take u8dec_hi's path. Made from space_bmp when the module is initialised
   (u8_fast_table). */
static uint32_t u8_mask[256], u8_val[256];
static uint8_t u8_len[256];

static void u8_fast_table(void) {
    for (int c = 0; c < 256; c++) {
        uint32_t lo, hi, m, v; /* the code points of lead c, the mask and value of its bytes */
        int l;
        if (c >= 0xC2 && c <= 0xDF) { l = 2; lo = (uint32_t)(c & 0x1F) << 6; hi = lo + 0x3F; m = 0xC000; v = 0x8000; }
        else if (c >= 0xE0 && c <= 0xEF) {
            l = 3; lo = (uint32_t)(c & 0x0F) << 12; hi = lo + 0xFFF; m = 0xC0C000; v = 0x808000;
            if (c == 0xE0) { lo = 0x800; m = 0xC0E000; v = 0x80A000; }        /* second byte A0..BF */
            if (c == 0xED) { hi = 0xD7FF; m = 0xC0E000; v = 0x808000; }       /* 80..9F: no surrogate */
        } else if (c >= 0xF1 && c <= 0xF4) {
            l = 4; lo = 0x10000; hi = 0; m = 0xC0C0C000; v = 0x80808000;      /* above the BMP: no whitespace */
            if (c == 0xF4) { m = 0xC0C0F000; v = 0x80808000; }                /* 80..8F: at most U+10FFFF */
        } else {
            u8_mask[c] = 0; u8_val[c] = 1; u8_len[c] = 1;
            continue;
        }
        int spaces = 0;
        for (uint32_t cp = lo; cp <= hi && cp < 0x10000; cp++) spaces |= is_space_fast(cp);
        u8_mask[c] = spaces ? 0 : m | 0xFF;
        u8_val[c] = spaces ? 1 : v | (uint32_t)c;
        u8_len[c] = (uint8_t)l;
    }
}

/* Whether t[i] starts a multi-byte character of u8_fast_table's (t is followed by a NUL, and by
   eight spare bytes in all, so the four bytes read are there). */
static inline int u8_fast(const uint8_t *t, Py_ssize_t i) {
    uint32_t w;
    memcpy(&w, t + i, 4);
    return (w & u8_mask[t[i]]) == u8_val[t[i]];
}

/* The multi-byte character starting at s[0] (>= 0x80) of text followed by a NUL (the arena's
   spare bytes), validated as u8dec does (0: not valid UTF-8; the NUL ends any sequence, so no
   byte past it is read), its code point into *cp: u8dec without its bounds checks. */
static inline int u8dec_hi(const uint8_t *s, uint32_t *cp) {
    uint32_t c = s[0], b1 = s[1] ^ 0x80u, b2, b3, v;
    if (c < 0xE0) {
        if (c < 0xC2 || b1 > 0x3F) return 0;
        *cp = ((c & 0x1F) << 6) | b1;
        return 2;
    }
    if (b1 > 0x3F || (b2 = s[2] ^ 0x80u) > 0x3F) return 0;
    if (c < 0xF0) {
        v = ((c & 0x0F) << 12) | (b1 << 6) | b2;
        if (v < 0x800 || (v & 0xF800) == 0xD800) return 0;
        *cp = v;
        return 3;
    }
    if (c > 0xF4 || (b3 = s[3] ^ 0x80u) > 0x3F) return 0;
    v = ((c & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3;
    if (v < 0x10000 || v > 0x10FFFF) return 0;
    *cp = v;
    return 4;
}

/* The multi-byte character at t[i] of arena text (followed by a NUL) into *cp and its length; in
   text not yet validated (check), 0 if the bytes there are not valid UTF-8. */
static inline int u8next(const uint8_t *t, Py_ssize_t i, int check, uint32_t *cp) {
    if (check) return u8dec_hi(t + i, cp);
    int l = u8len(t[i]);
    *cp = u8cp(t, i, l);
    return l;
}

static inline uint64_t hash_bytes(const uint8_t *s, Py_ssize_t n);
static inline int same_token(const uint8_t *a, const uint8_t *b, int32_t l);

/* What put_token needs of K, held in a split's locals (put_token's stores through K's pointers
   would otherwise have K's fields reloaded after each one): sink_open takes it from K, sink_close
   gives back the ids' and the table's new lengths. */
typedef struct {
    const uint8_t *arena;
    struct tk *tab;
    int32_t *used, *ids; /* ids: where the next id goes */
    Py_ssize_t mask;
    int32_t next; /* the next new id */
    int insert;
} Sink;

static inline Sink sink_open(const K *k) {
    Sink o = {k->arena.p, k->tk, k->tk_used, k->tk_ids->p + k->tk_ids->len, k->tk_mask, (int32_t)k->tk_n,
              k->tk_insert};
    return o;
}

/* Close o: returns the number of ids it appended. */
static inline Py_ssize_t sink_close(K *k, const Sink *o) {
    Py_ssize_t n = o->ids - (k->tk_ids->p + k->tk_ids->len);
    k->tk_ids->len += n;
    k->tk_n = o->next;
    return n;
}

/* The token arena[start..start+len) interned (insert) or looked up, as it is split: its id
   appended to the sink's ids (room made by split_tokens, and in the table by tk_room). Tokens are
   compared by their bytes; the hash only picks the bucket and filters. */
static inline void put_token(Sink *o, Py_ssize_t start, Py_ssize_t len) {
    const uint8_t *s = o->arena + start;
    uint64_t h = hash_bytes(s, len);
    uint32_t tag = (uint32_t)(h >> 32);
    Py_ssize_t m = o->mask, pos = (Py_ssize_t)(h & (uint64_t)m);
    int32_t id;
    for (;;) {
        struct tk *e = &o->tab[pos];
        if (e->id < 0) {
            if (!o->insert) { id = -1; break; }
            id = o->next++;
            e->tag = tag; e->id = id; e->start = (int32_t)start; e->len = (int32_t)len;
            o->used[id] = (int32_t)pos;
            break;
        }
        if (e->tag == tag && e->len == len && same_token(o->arena + e->start, s, (int32_t)len)) {
            id = e->id;
            break;
        }
        pos = (pos + 1) & m;
    }
    *o->ids++ = id;
}

/* split_regexp: the end of the run of token characters from t[i] on: ASCII token bytes (class 0)
 * and multi-byte characters that are neither whitespace nor isolated (zh), which stay in their
 * token whatever surrounds them. The NUL after the text (the arena's spare bytes) stops it; the
 * character it stops at (invalid UTF-8 too, when check) is split_regexp's to take. */
static inline Py_ssize_t token_run(const K *k, const uint8_t *cls, const uint8_t *t, Py_ssize_t i, int zh,
                                   int check) {
    for (;;) {
        const uint8_t *p = t + i;
        for (;;) { /* ASCII token bytes, four at a time: the loop the text spends most in */
            if (cls[p[0]]) break;
            if (cls[p[1]]) { p += 1; break; }
            if (cls[p[2]]) { p += 2; break; }
            if (cls[p[3]]) { p += 3; break; }
            p += 4;
        }
        i = p - t;
        uint8_t c = *p;
        if (!(cls[c] & C_HIGH)) return i;
        if (!zh && u8_fast(t, i)) { /* and the characters like it that follow (u8_fast of ASCII is 0) */
            do i += u8_len[t[i]]; while (u8_fast(t, i));
            continue;
        }
        uint32_t cp;
        int l = u8next(t, i, check, &cp);
        if (!l || is_space_fast(cp) || (zh && (k->flags[cp] & F_ZH))) return i;
        i += l;
    }
}

/* The tokens of t[0..n) (at arena offset base) as 13a (pad) or zh (zh) leave them; returns
 * their number, or -1 if check and the text is not valid UTF-8 (the multi-byte characters are
 * decoded as they are met, so that validating costs no pass of its own). Each token is interned
 * as it ends (put_token); the ids have room for n + 1 more. */
static Py_ssize_t split_regexp(K *k, const uint8_t *t, Py_ssize_t n, Py_ssize_t base, int pad, int zh, int check) {
    const uint8_t *cls = byte_classes();
    Py_ssize_t st = -1, i = 0;
    int m2prev = 0; /* t[i-1] is a '.'/',' matched by regex 2 */
    int rewrites = 0; /* (check) C_REWRITE: a '<', '&' or newline met (k->rewrites) */
    Sink o = sink_open(k);
#define PUT_TOKEN(start, len) put_token(&o, (start), (len))
#define END_TOKEN() do { if (st >= 0) { PUT_TOKEN(base + st, i - st); st = -1; } } while (0)
    /* A token's usual end: one ' ' and a token byte after it. That ends the token and starts the
       next one without a round of the dispatch below (what its C_SPACE case and its f == 0 case do;
       a ' ' is no rewrite and leaves m2prev 0; the NUL after the text is no token byte). */
#define NEXT_TOKENS() while (t[i] == ' ' && cls[t[i + 1]] == 0) { \
        PUT_TOKEN(base + st, i - st); st = i + 1; i = token_run(k, cls, t, i + 2, zh, check); }
    while (i < n) {
        uint8_t f = cls[t[i]];
        /* bit tests rather than equalities: the compiler made a jump table of these, and its
           indirect jump mispredicted at most token boundaries */
        if (__builtin_expect(f == 0, 1)) {
            if (st < 0) st = i;
            i = token_run(k, cls, t, i + 1, zh, check);
            NEXT_TOKENS();
            m2prev = 0;
        } else if (f & C_SPACE) {
            END_TOKEN();
            m2prev = 0;
            rewrites |= f; /* C_REWRITE for a newline */
            i++;
        } else if (f & C_HIGH) {
            if (!zh && u8_fast(t, i)) {
                if (st < 0) st = i;
                i = token_run(k, cls, t, i + u8_len[t[i]], zh, check);
                NEXT_TOKENS();
                m2prev = 0;
                continue;
            }
            uint32_t cp;
            int l = u8next(t, i, check, &cp);
            if (!l) { sink_close(k, &o); return -1; } /* the table's entries stay accounted for */
            m2prev = 0;
            if (is_space_fast(cp)) END_TOKEN();
            else if (zh && (k->flags[cp] & F_ZH)) { END_TOKEN(); PUT_TOKEN(base + i, l); }
            else {
                if (st < 0) st = i;
                i = token_run(k, cls, t, i + l, zh, check);
                continue;
            }
            i += l;
        } else {
            int iso = 0, m2 = 0;
            if (f & C_PUNCT) {
                iso = 1;
                rewrites |= f; /* C_REWRITE for '<' and '&' */
            }
            else if (f & C_DOT) {
                m2 = (i > 0 ? !is_digit(t[i - 1]) : pad) && !m2prev;
                iso = m2 || (i + 1 < n ? !is_digit(t[i + 1]) : pad);
            } else if (f & C_DASH) iso = i > 0 && is_digit(t[i - 1]);
            m2prev = m2;
            if (iso) { END_TOKEN(); PUT_TOKEN(base + i, 1); }
            else if (st < 0) st = i; /* C_NUL, or a '.', ',' or '-' that stays in its token */
            i++;
        }
    }
    END_TOKEN();
#undef NEXT_TOKENS
#undef END_TOKEN
#undef PUT_TOKEN
    if (check) k->rewrites = (rewrites & C_REWRITE) != 0;
    return sink_close(k, &o);
}

/* intl: sacrebleu's three regexes and its final split in one scan.
 *
 *   1. (\P{N})(\p{P}) -> "\1 \2 "   2. (\p{P})(\P{N}) -> " \1 \2"   3. (\p{S}) -> " \1 "
 *
 * each a re.sub (a leftmost, non-overlapping scan) of the previous one's output, then str.split().
 * They only insert spaces, so the tokens are the runs of the text's characters between its
 * whitespace and the gaps the regexes put spaces in; the scan decides the gaps from left to right,
 * running each regex as a machine fed the characters its input has (regex 2's input is regex 1's
 * output, with its spaces: a space is neither N nor P):
 *   - regex 1 at x[i] (p1: x[i-1] is no N and was not consumed as a match's \2): x[i] is P, so a
 *     match puts a space on each side of x[i]; x[i] is consumed;
 *   - regex 2 (p2: the last character fed is P and was not consumed): a match at that P puts a
 *     space on each side of it, which for x[i-1] can mean a gap before it, decided only at x[i]:
 *     so each character waits (pending) until the next one has been seen before it joins a token;
 *   - regex 3: every S character is its own token.
 * Whitespace is a character to the regexes (with its flags) and a gap to the split. The text is
 * validated as it is decoded (check: normalise left it unchecked). The tokens of t[0..n) (at arena
 * offset base) are interned as they end (put_token; room for n + 1 ids); returns their number, or
 * -1 if check and the text is not valid UTF-8. */
static Py_ssize_t split_intl(K *k, const uint8_t *t, Py_ssize_t n, Py_ssize_t base, int check) {
    const uint8_t *fl = k->flags;
    const uint8_t *plain = k->intl_plain; /* plain ASCII (no flag, no whitespace), NUL excepted */
    Sink o = sink_open(k);
    Py_ssize_t st = -1;                /* the token being built starts at t[st] (-1: none) */
    Py_ssize_t ps = -1, pe = 0;        /* the pending character is t[ps..pe) (ps < 0: none yet) */
    int p_ws = 0, p_gb = 0, p_ga = 0;  /* it is whitespace; a gap before it; a gap after it */
    int p1 = 0, p2 = 0;                /* regex 1's and regex 2's state (above) */
#define END_TOKEN(end) do { if (st >= 0) { put_token(&o, base + st, (end) - st); st = -1; } } while (0)
    Py_ssize_t i = 0;
    while (i < n) {
        uint8_t c = t[i];
        uint32_t cp;
        int l, ws;
        if (c < 0x80) {
            cp = c; l = 1; ws = _Py_ascii_whitespace[c];
        } else {
            if (!(l = u8next(t, i, check, &cp))) { sink_close(k, &o); return -1; } /* (as split_regexp) */
            ws = is_space_fast(cp);
        }
        uint8_t f = fl[cp];
        int gap = 0, ga = 0; /* a gap between the pending character and x[i]; after x[i] */
        if (p1 && (f & F_P)) {  /* regex 1 matches x[i-1] x[i] ... */
            gap = ga = 1;
            if (p2) p_gb = 1;   /* ... and its space after x[i-1] completes regex 2's match at x[i-1] */
            p1 = p2 = 0;        /* x[i] is consumed by regex 1; fed to regex 2 between two spaces, it
                                   matches there and consumes the second space */
        } else {
            if (p2 && !(f & F_N)) { p_gb = 1; gap = 1; p2 = 0; } /* regex 2 matches x[i-1] x[i] */
            else p2 = (f & F_P) != 0;
            p1 = !(f & F_N);
        }
        if ((f & F_S) || ws) gap = ga = 1;
        if (ps >= 0) { /* the pending character joins its token, or ends it */
            if (p_gb) END_TOKEN(ps);
            if (!p_ws && st < 0) st = ps;
            if (gap || p_ga) END_TOKEN(pe);
        }
        ps = i; pe = i + l; p_ws = ws; p_gb = 0; p_ga = ga;
        i += l;
        if (!f && !ws) {
            /* x[i] is plain (no flag, no whitespace): p1 = 1, p2 = 0, and the plain characters that
               follow only extend its token, the last of them pending; t[n] is a NUL (the arena's
               spare bytes), which stops the run, as does any other character, taken above */
            Py_ssize_t last = ps;
            for (;;) {
                uint8_t b = t[i];
                if (plain[b]) { last = i++; continue; }
                if (b < 0x80) break;
                int lb = u8next(t, i, check, &cp);
                if (!lb || fl[cp] || is_space_fast(cp)) break;
                last = i;
                i += lb;
            }
            if (last != ps) {
                if (st < 0) st = ps;
                ps = last; pe = i;
            }
        }
    }
    if (ps >= 0) {
        if (p_gb) END_TOKEN(ps);
        if (!p_ws && st < 0) st = ps;
        END_TOKEN(pe);
    }
#undef END_TOKEN
    return sink_close(k, &o);
}

/* ------------------------------------------------------ segment processing */

/* Lowercase with str.lower semantics: sets *ps and *pn to the lowered text (in k->lower). A
 * status (ST_PYERR, with the Python error set, if str.lower fails). */
static int lower_segment(K *k, const uint8_t **ps, Py_ssize_t *pn) {
    const uint8_t *s = *ps;
    Py_ssize_t n = *pn, i;
    int ascii = 1;
    for (i = 0; i < n; i++) if (s[i] & 0x80) { ascii = 0; break; }
    k->lower.len = 0;
    if (ascii) {
        if (buf_reserve(&k->lower, n + 1) < 0) return ST_NOMEM;
        for (i = 0; i < n; i++) {
            uint8_t c = s[i];
            k->lower.p[i] = (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
        }
        k->lower.len = n;
    } else {
        /* str.lower with the GIL taken back for the call (the run released it) */
        int st = ST_PYERR;
        PyEval_RestoreThread(k->ts);
        PyObject *u = PyUnicode_DecodeUTF8((const char *)s, n, "strict");
        PyObject *lo = u ? PyObject_CallMethod(u, "lower", NULL) : NULL;
        Py_XDECREF(u);
        if (lo) {
            Py_ssize_t ln;
            const char *lp = PyUnicode_AsUTF8AndSize(lo, &ln);
            st = !lp ? ST_PYERR : buf_reserve(&k->lower, ln + 1) < 0 ? ST_NOMEM : ST_OK;
            if (st == ST_OK) buf_put(&k->lower, (const uint8_t *)lp, ln);
            Py_DECREF(lo);
        }
        k->ts = PyEval_SaveThread();
        if (st != ST_OK) return st;
    }
    *ps = k->lower.p;
    *pn = k->lower.len;
    return ST_OK;
}

/* Length of s once trailing whitespace is removed (str.rstrip()). In text not yet validated
 * (check), it stops at bytes that are not one valid character ending the text: those stay for
 * the validation that follows, and what it removes was valid. */
static Py_ssize_t rstrip_len(const uint8_t *s, Py_ssize_t n, int check) {
    while (n > 0) {
        Py_ssize_t j = n - 1;
        uint32_t cp = 0;
        if (s[j] < 0x80) {
            cp = s[j];
        } else {
            while (j > 0 && n - j < 4 && (s[j] & 0xC0) == 0x80) j--;
            if (check) {
                if (u8dec(s, n, j, &cp) != n - j) break;
            } else {
                cp = u8cp(s, j, u8len(s[j]));
            }
        }
        if (!is_space_fast(cp)) break;
        n = j;
    }
    return n;
}

static Py_ssize_t lstrip_off(const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        int l = u8len(s[i]);
        if (!is_space_fast(u8cp(s, i, l))) break;
        i += l;
    }
    return i;
}

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

/* The text sacrebleu's tokenizers start from: s[0..n) validated as UTF-8 (every later pass
 * relies on it), lowercased (lowercase) and right-stripped, into *ps and *pn. A status.
 * 13a and intl without lowercase leave the validation to the scan that splits (split_regexp,
 * split_intl: k->unchecked), unless 13a's rewrite changes the text first (it validates it then). */
static int normalise(K *k, const uint8_t **ps, Py_ssize_t *pn) {
    k->unchecked = (k->tokenizer == TOK_13A || k->tokenizer == TOK_INTL) && !k->lowercase;
    if (!k->unchecked && !valid_utf8(*ps, *pn)) return bad(k, "invalid UTF-8");
    if (k->lowercase) {
        int st = lower_segment(k, ps, pn);
        if (st != ST_OK) return st;
    }
    *pn = rstrip_len(*ps, *pn, k->unchecked);
    return ST_OK;
}

/* The validation normalise left to split_regexp, done now (before the text changes). A status. */
static int check_now(K *k, const uint8_t *s, Py_ssize_t n) {
    if (!k->unchecked) return ST_OK;
    k->unchecked = 0;
    return valid_utf8(s, n) ? ST_OK : bad(k, "invalid UTF-8");
}

/* The tokenizer's passes that rewrite the normalised text *ps, *pn (13a's replacements, zh's strip),
 * leaving the text to split there; 13a's and zh's regexes are split_regexp's, intl's split_intl's.
 * A status. */
static int rewrite(K *k, const uint8_t **ps, Py_ssize_t *pn) {
    Buf *A = &k->a, *B = &k->b, *T;
    const uint8_t *cur = *ps;
    Py_ssize_t cn = *pn;
#define STEP(call) do { if ((call) < 0) return ST_NOMEM; cur = A->p; cn = A->len; T = A; A = B; B = T; } while (0)

    switch (k->tokenizer) {
    case TOK_13A:
        if (check_now(k, cur, cn) != ST_OK) return ST_BAD; /* segment_tokens validated it: a no-op */
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
    default:
        break;
    }
#undef STEP
    *ps = cur;
    *pn = cn;
    return ST_OK;
}

/* char: every code point but whitespace is a token. The tokens of t[0..n) (at arena offset
 * base); returns their number. */
static Py_ssize_t split_chars(K *k, const uint8_t *t, Py_ssize_t n, Py_ssize_t base) {
    Sink o = sink_open(k);
    Py_ssize_t i = 0;
    while (i < n) {
        int l = u8len(t[i]);
        if (!is_space_fast(u8cp(t, i, l))) put_token(&o, base + i, l);
        i += l;
    }
    return sink_close(k, &o);
}

/* none: str.split(). The tokens of t[0..n) (at arena offset base); returns their number. */
static Py_ssize_t split_space(K *k, const uint8_t *t, Py_ssize_t n, Py_ssize_t base) {
    Sink o = sink_open(k);
    Py_ssize_t i = 0;
    while (i < n) {
        uint8_t c = t[i];
        if (c < 0x80) {
            if (_Py_ascii_whitespace[c]) { i++; continue; }
        } else {
            int l = u8len(c);
            if (is_space_fast(u8cp(t, i, l))) { i += l; continue; }
        }
        Py_ssize_t st = i;
        while (i < n) {
            c = t[i];
            if (c < 0x80) {
                if (_Py_ascii_whitespace[c]) break;
                i++;
            } else {
                int l = u8len(c);
                if (is_space_fast(u8cp(t, i, l))) break;
                i += l;
            }
        }
        put_token(&o, base + st, i - st);
    }
    return sink_close(k, &o);
}

static int tk_room(K *k, Py_ssize_t n);
static Py_ssize_t pow2_at_least(Py_ssize_t n);

/* Copy the rewritten text s[0..n) into the arena (8 spare bytes for hash_bytes; token spans are
 * int32), split it and append its tokens' ids to *k->tk_ids (put_token). Returns the number of
 * tokens, or a status < 0. */
static Py_ssize_t split_tokens(K *k, const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t base = k->arena.len;
    if (n > (Py_ssize_t)INT32_MAX - 8 - base)
        return check_now(k, s, n) != ST_OK ? ST_BAD : bad(k, "text too long (over 2**31 - 1 bytes in one pair)");
    if (buf_reserve(&k->arena, n + 8) < 0) return ST_NOMEM;
    buf_put(&k->arena, s, n);
    memset(k->arena.p + k->arena.len, 0, 8);
    const uint8_t *t = k->arena.p + base;
    Py_ssize_t ntok;
    /* at most n tokens (a token is never empty) */
    if (ibuf_reserve(k->tk_ids, n + 1) < 0 || tk_room(k, n) != ST_OK) return ST_NOMEM;
    if (k->tokenizer == TOK_13A || k->tokenizer == TOK_ZH) {
        ntok = split_regexp(k, t, n, base, k->tokenizer == TOK_13A, k->tokenizer == TOK_ZH, k->unchecked);
        if (ntok < 0) return bad(k, "invalid UTF-8");
    }
    else if (k->tokenizer == TOK_INTL) {
        ntok = split_intl(k, t, n, base, k->unchecked);
        if (ntok < 0) return bad(k, "invalid UTF-8");
    }
    else if (k->tokenizer == TOK_CHAR)
        ntok = split_chars(k, t, n, base);
    else
        ntok = split_space(k, t, n, base);
    return ntok;
}

/* Forget the ids given from id n0 on (the last ones given: each entry is removed after every one
   added later, so the probes of those left still find them). */
static void tk_forget(K *k, Py_ssize_t n0) {
    for (Py_ssize_t j = k->tk_n; j-- > n0;) k->tk[k->tk_used[j]].id = -1;
    k->tk_n = n0;
}

/* An empty token table (its entries cleared through tk_used), of 16 entries until tk_room grows it. */
static void tk_clear(K *k) {
    tk_forget(k, 0);
    k->tk_mask = k->tk_cap >= 16 ? 15 : k->tk_cap - 1;
}

/* Room in the token table for n more tokens (always an empty entry, at most half full unless
   most tokens are distinct and a byte long). A status. */
static int tk_room(K *k, Py_ssize_t n) {
    if (!k->tk_insert && k->tk_cap) return ST_OK;
    Py_ssize_t need = k->tk_n + n + 2;
    if (need <= k->tk_mask + 1) return ST_OK;
    Py_ssize_t cap = pow2_at_least(need);
    if (k->tk_n == 0 && cap <= k->tk_cap) { /* empty: more of the same entries */
        k->tk_mask = cap - 1;
        return ST_OK;
    }
    /* a new table, the entries put back in id order */
    Py_ssize_t acap = cap > k->tk_cap ? cap : k->tk_cap;
    struct tk *t = (struct tk *)malloc((size_t)acap * sizeof(struct tk));
    int32_t *used = (int32_t *)malloc((size_t)acap * sizeof(int32_t));
    if (!t || !used) { free(t); free(used); return ST_NOMEM; }
    for (Py_ssize_t i = 0; i < acap; i++) t[i].id = -1;
    for (Py_ssize_t j = 0; j < k->tk_n; j++) {
        struct tk e = k->tk[k->tk_used[j]];
        Py_ssize_t pos = (Py_ssize_t)(hash_bytes(k->arena.p + e.start, e.len) & (uint64_t)(cap - 1));
        while (t[pos].id >= 0) pos = (pos + 1) & (cap - 1);
        t[pos] = e;
        used[j] = (int32_t)pos;
    }
    free(k->tk); free(k->tk_used);
    k->tk = t; k->tk_used = used; k->tk_cap = acap; k->tk_mask = cap - 1;
    return ST_OK;
}

/* Tokenize one segment (normalise, rewrite, split_tokens) and append its tokens' ids to *k->tk_ids
 * (put_token). Returns the number of tokens, or a status < 0.
 *
 * 13a without lowercase splits the normalised text at once, in the scan that validates it
 * (k->unchecked): rewrite changes only text with a '<', '&' or newline, which that scan notes
 * (k->rewrites); such text (rare) is split again, rewritten first, the first split's tokens (and
 * the ids they were given) forgotten. */
static Py_ssize_t segment_tokens(K *k, const uint8_t *s, Py_ssize_t n) {
    int st = normalise(k, &s, &n);
    if (st != ST_OK) return st;
    if (k->unchecked && k->tokenizer == TOK_13A) {
        Py_ssize_t a0 = k->arena.len, i0 = k->tk_ids->len, n0 = k->tk_n;
        k->rewrites = 0;
        Py_ssize_t nt = split_tokens(k, s, n);
        if (nt < 0 || !k->rewrites) return nt;
        k->unchecked = 0; /* the scan found it valid */
        k->arena.len = a0; k->tk_ids->len = i0;
        tk_forget(k, n0);
    }
    st = rewrite(k, &s, &n);
    return st != ST_OK ? st : split_tokens(k, s, n);
}

/* ------------------------------------------------------ counting and clipping */

/* A token's hash: eight bytes at a time. It only picks a bucket (tokens are compared by their
 * bytes), so its one requirement is that equal bytes hash equally: the bytes past the token
 * that the last load reads (the arena keeps 8 spare bytes after its text) are masked off. */
static inline uint64_t hash_bytes(const uint8_t *s, Py_ssize_t n) {
    uint64_t h = (uint64_t)n * 0xC2B2AE3D27D4EB4FULL, w;
    for (; n > 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    memcpy(&w, s, 8);
    w &= ~0ULL >> (64 - 8 * n); /* 1 <= n <= 8: a token is never empty */
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

/* Room for the unigram arrays of n ids, all cleared (u_rseen -1: no reference yet). A status. */
static int unigrams_reserve(K *k, Py_ssize_t n) {
    if (n <= k->u_cap) return ST_OK;
    Py_ssize_t cap = pow2_at_least(n);
    int32_t **arrays[] = {&k->u_hyp, &k->u_rmax, &k->u_rcur, &k->u_rseen, &k->u_pos, &k->u_once};
    for (int a = 0; a < 6; a++) {
        int32_t *p = (int32_t *)realloc(*arrays[a], (size_t)cap * sizeof(int32_t));
        if (!p) return ST_NOMEM;
        *arrays[a] = p;
        for (Py_ssize_t i = k->u_cap; i < cap; i++) p[i] = a == 3 ? -1 : 0;
    }
    k->u_cap = cap;
    return ST_OK;
}

/* Whether the tokens a[0..l) and b[0..l) (in the arena, which has 8 readable bytes past any token
   start) are equal: one masked 8-byte comparison for the short ones, memcmp for the others. */
static inline int same_token(const uint8_t *a, const uint8_t *b, int32_t l) {
    if (l <= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return !((x ^ y) & (l == 8 ? ~0ULL : (1ULL << (8 * l)) - 1));
    }
    return memcmp(a, b, (size_t)l) == 0;
}

/* Size the n-gram table for the n-grams of nhyp tokens. A status. */
static int ng_prepare(K *k, Py_ssize_t nhyp) {
    Py_ssize_t want = pow2_at_least(2 * (nhyp * k->order) + 2);
    if (want > k->ng_cap) {
        free(k->ng); free(k->ng_used);
        k->ng = malloc((size_t)want * sizeof(*k->ng));
        k->ng_used = (int32_t *)malloc((size_t)want * sizeof(int32_t));
        if (!k->ng || !k->ng_used) return ST_NOMEM;
        k->ng_cap = want;
        for (Py_ssize_t i = 0; i < want; i++) k->ng[i].n = 0;
    }
    /* entries are cleared through ng_used, so [0, want) is empty here */
    k->ng_mask = want - 1;
    return ST_OK;
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

/* Count the hypothesis n-grams of k->hyp_ids[0..nh) into the table; row[0] and the totals. A status. */
static int count_hyp(K *k, Py_ssize_t nh, int64_t *row, Py_ssize_t K2) {
    int st = ng_prepare(k, nh);
    if (st == ST_OK && k->dense) st = unigrams_reserve(k, k->n_uniq);
    if (st != ST_OK) return st;
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
    return ST_OK;
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

/* ------------------------------------------- the packed n-gram table (stats, order <= 4) */

/* the most distinct tokens a hypothesis has for its n-grams to be packed: ids + 1 in 16 bits */
#define PK_IDS 65535

/* Whether stats's current row (the dense ids put_token gave its candidate) is counted in the packed table. */
static inline int use_packed(const K *k) { return k->dense && k->order <= 4 && k->n_uniq <= PK_IDS; }

/* The packed table sized for the n-grams (orders 2..) of nhyp tokens, emptied (a new gen). A status. */
static int pk_prepare(K *k, Py_ssize_t nhyp) {
    Py_ssize_t want = pow2_at_least(2 * (nhyp * (k->order - 1)) + 2);
    if (want > k->pk_cap) {
        free(k->pk);
        k->pk = calloc((size_t)want, sizeof(*k->pk));
        if (!k->pk) { k->pk_cap = 0; return ST_NOMEM; }
        k->pk_cap = want;
        k->pk_gen = 0;
    }
    if (++k->pk_gen == 0) { /* after 2**32 rows: clear the gens once */
        memset(k->pk, 0, (size_t)k->pk_cap * sizeof(*k->pk));
        k->pk_gen = 1;
    }
    k->pk_mask = want - 1;
    return ST_OK;
}

/* The packed table of a row, held in locals (stores through its entries cannot then be taken for
   stores to K, which kept the compiler reloading K's fields). */
typedef struct {
    struct pk *tab;
    Py_ssize_t mask;
    uint32_t gen;
} PkTab;

static inline PkTab pk_tab(const K *k) {
    PkTab t = {k->pk, k->pk_mask, k->pk_gen};
    return t;
}

/* One more occurrence of the n-gram key in the candidate (a new entry's rcur is set when its
   first reference meets it: its rseen is none of them). */
static inline void pk_add(PkTab t, uint64_t key) {
    Py_ssize_t pos = (Py_ssize_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & t.mask;
    for (;;) {
        struct pk *e = &t.tab[pos];
        if (e->gen != t.gen) {
            e->key = key; e->gen = t.gen; e->hyp = 1; e->rmax = 0; e->rseen = -1;
            return;
        }
        if (e->key == key) {
            e->hyp++;
            return;
        }
        pos = (pos + 1) & t.mask;
    }
}

static inline struct pk *pk_find(PkTab t, uint64_t key) {
    Py_ssize_t pos = (Py_ssize_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & t.mask;
    for (;;) {
        struct pk *e = &t.tab[pos];
        if (e->gen != t.gen) return NULL;
        if (e->key == key) return e;
        pos = (pos + 1) & t.mask;
    }
}

/* count_hyp in the packed table: unigrams in their arrays (with each id's position), and by key the
   longer n-grams whose first token the hypothesis has more than once. Those whose first token it has
   once (most) occur once, at that token's position: count_ref_packed compares a reference's ids with
   the hypothesis' from there instead of looking them up. A status. */
static int count_hyp_packed(K *k, Py_ssize_t nh, int64_t *row, Py_ssize_t K2) {
    int st = unigrams_reserve(k, k->n_uniq);
    if (st != ST_OK) return st;
    memset(row, 0, (size_t)K2 * sizeof(int64_t));
    const int32_t *hid = k->hyp_ids.p;
    int32_t *u_hyp = k->u_hyp, *u_pos = k->u_pos;
    int32_t order = k->order;
    for (Py_ssize_t i = 0; i < nh; i++) {
        u_hyp[hid[i]]++;
        u_pos[hid[i]] = (int32_t)i;
    }
    /* the table sized for the positions whose token is there more than once: nh - n_uniq + the
       number of ids counted more than once, at most 2 * (nh - n_uniq) */
    if ((st = pk_prepare(k, 2 * (nh - k->n_uniq))) != ST_OK) return st;
    PkTab t = pk_tab(k);
    Py_ssize_t i = 0;
    if (order == 4) /* the usual order, unrolled */
        for (; i + 4 <= nh; i++) {
            if (u_hyp[hid[i]] == 1) continue;
            uint64_t key = ((uint64_t)hid[i] + 1) | ((uint64_t)hid[i + 1] + 1) << 16;
            pk_add(t, key);
            key |= ((uint64_t)hid[i + 2] + 1) << 32;
            pk_add(t, key);
            key |= ((uint64_t)hid[i + 3] + 1) << 48;
            pk_add(t, key);
        }
    for (; i < nh; i++) {
        if (u_hyp[hid[i]] == 1) continue;
        uint64_t key = (uint64_t)hid[i] + 1;
        Py_ssize_t top = nh - i < order ? nh - i : order; /* the longest n-gram starting at i */
        for (Py_ssize_t g = 2; g <= top; g++) {
            key |= ((uint64_t)hid[i + g - 1] + 1) << (16 * (g - 1));
            pk_add(t, key);
        }
    }
    hyp_totals(row, nh, order);
    return ST_OK;
}

/* count_ref in the packed table, with the matches counted as they come: an n-gram's clipped count
   min(hyp, highest count in one reference) grows by one exactly when that highest count grows to
   a value <= hyp. An n-gram whose first token the hypothesis has once occurs once in it (at
   u_pos), and is not in the table: its clipped count is 1 as soon as one reference has it, which
   u_once's bit records. */
static void count_ref_packed(K *k, const int32_t *rid, Py_ssize_t nr, Py_ssize_t nref, int64_t *row) {
    int32_t order = k->order;
    int32_t *u_hyp = k->u_hyp, *u_rmax = k->u_rmax, *u_rcur = k->u_rcur, *u_rseen = k->u_rseen;
    const int32_t *u_pos = k->u_pos, *hid = k->hyp_ids.p;
    int32_t *u_once = k->u_once;
    Py_ssize_t nh = k->hyp_ids.len;
    int64_t matches[4] = {0, 0, 0, 0};
    PkTab t = pk_tab(k);
    for (Py_ssize_t i = 0; i < nr; i++) {
        int32_t u = rid[i];
        if (u < 0) continue;
        if (u_rseen[u] != nref) { u_rseen[u] = (int32_t)nref; u_rcur[u] = 0; }
        if (++u_rcur[u] > u_rmax[u]) {
            u_rmax[u] = u_rcur[u];
            matches[0] += u_rmax[u] <= u_hyp[u];
        }
        Py_ssize_t top = nr - i < order ? nr - i : order;
        if (u_hyp[u] == 1) { /* the n-grams at u_pos[u] in the hypothesis */
            Py_ssize_t p = u_pos[u];
            if (nh - p < top) top = nh - p;
            int32_t seen = u_once[u];
            for (Py_ssize_t g = 2; g <= top; g++) {
                if (rid[i + g - 1] != hid[p + g - 1]) break;
                matches[g - 1] += !(seen & (1 << (g - 1)));
                seen |= 1 << (g - 1);
            }
            u_once[u] = seen;
            continue;
        }
        uint64_t key = (uint64_t)u + 1;
        for (Py_ssize_t g = 2; g <= top; g++) {
            int32_t v = rid[i + g - 1];
            if (v < 0) break;
            key |= ((uint64_t)v + 1) << (16 * (g - 1));
            struct pk *e = pk_find(t, key);
            if (!e) break;
            if (e->rseen != nref) { e->rseen = (int32_t)nref; e->rcur = 0; }
            if (++e->rcur > e->rmax) {
                e->rmax = e->rcur;
                matches[g - 1] += e->rmax <= e->hyp;
            }
        }
    }
    for (int32_t g = 0; g < order; g++) row[2 + g] += matches[g];
}

/* finish_row of a packed row: r; the matches are counted already, the table needs no clearing
   (its next gen), the unigram arrays are cleared. */
static void finish_row_packed(K *k, int64_t *row, Py_ssize_t nh, const int64_t *reflens, Py_ssize_t nrefs) {
    row[1] = closest_length(nh, reflens, nrefs);
    memset(k->u_hyp, 0, (size_t)k->n_uniq * sizeof(int32_t));
    memset(k->u_rmax, 0, (size_t)k->n_uniq * sizeof(int32_t));
    memset(k->u_rseen, 0xFF, (size_t)k->n_uniq * sizeof(int32_t)); /* -1: no reference yet */
    memset(k->u_once, 0, (size_t)k->n_uniq * sizeof(int32_t));
    k->n_uniq = 0;
}

/* stats_many: reference number `nref`, its tokens t0.. (ids in hyp_ids, where put_token numbered
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
   is clipping. An n-gram the references lack ends the scan from that position. A status. */
static int count_matches(K *k, const int32_t *cid, Py_ssize_t nh, int64_t *row, Py_ssize_t K2) {
    int32_t order = k->order;
    memset(row, 0, (size_t)K2 * sizeof(int64_t));
    hyp_totals(row, nh, order);
    k->touched.len = 0;
    if (ibuf_reserve(&k->touched, nh * order + 1) < 0) return ST_NOMEM;
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
    return ST_OK;
}

/* The number of statistics of a row: c, r, then N matches and N totals. */
static inline Py_ssize_t row_width(const K *k) { return 2 + 2 * (Py_ssize_t)k->order; }

/* Write the row's statistics k->row into row r of out (per_row) or add them to its one row:
   ST_OVERFLOW if the sum overflows. */
static int emit_row(const K *k, int64_t *o, Py_ssize_t r, int per_row) {
    Py_ssize_t K2 = row_width(k);
    if (per_row) {
        memcpy(o + r * K2, k->row, (size_t)K2 * sizeof(int64_t));
        return ST_OK;
    }
    int overflow = 0;
    for (Py_ssize_t q = 0; q < K2; q++) overflow |= __builtin_add_overflow(o[q], k->row[q], &o[q]);
    return overflow ? ST_OVERFLOW : ST_OK;
}

/* k->row, for a run's rows. A status. */
static int row_alloc(K *k) {
    k->row = (int64_t *)calloc((size_t)row_width(k), sizeof(int64_t));
    return k->row ? ST_OK : ST_NOMEM;
}

/* Room for the lengths (reflens) and first tokens (rstart) of n references. A status. */
static int refs_reserve(K *k, Py_ssize_t n) {
    if (n <= k->refs_cap) return ST_OK;
    Py_ssize_t cap = n * 2;
    int64_t *p = (int64_t *)realloc(k->reflens, (size_t)cap * sizeof(int64_t));
    if (!p) return ST_NOMEM;
    k->reflens = p;
    if (!(p = (int64_t *)realloc(k->rstart, (size_t)cap * sizeof(int64_t)))) return ST_NOMEM;
    k->rstart = p;
    k->refs_cap = cap;
    return ST_OK;
}

/* ----------------------------------------------------------------- the runs */

/* The buffers of a stats or stages call, checked by text_batch (a stats_many call's references,
   checked by ref_batch, with no candidates): n candidates (UTF-8 data, n+1 offsets inside it,
   validity bytes or NULL), m references in all (the same), the n+1 list offsets of each row's
   references, and out. */
typedef struct {
    const uint8_t *hdata, *rdata, *hval, *rval;
    const int64_t *hoff, *roff, *loff;
    Py_ssize_t n, m;
    int64_t *out;
    int per_row;
} Batch;

/* stats's row r into k->row: the candidate tokenized, its tokens interned and its n-grams counted,
   then each reference tokenized and its n-grams clipped against them. A status. */
static int stats_row(K *k, const Batch *b, Py_ssize_t r) {
    int st;
    k->bad_row = r;
    k->bad_ref = -1;
    if (b->hval && !b->hval[r]) return bad(k, "candidate is null");
    int64_t a = b->hoff[r], e = b->hoff[r + 1];
    int64_t la = b->loff[r], lb = b->loff[r + 1];
    if (e < a || lb < la) return bad(k, "offsets are not monotonic");
    k->arena.len = 0;
    tk_clear(k);
    k->tk_insert = 1; k->tk_ids = &k->hyp_ids; k->hyp_ids.len = 0;
    Py_ssize_t nh = segment_tokens(k, b->hdata + a, (Py_ssize_t)(e - a));
    if (nh < 0) return (int)nh;
    k->dense = 1; k->n_uniq = k->tk_n; /* the candidate's ids are 0..n_uniq-1 */
    k->tk_insert = 0; k->tk_ids = &k->ref_ids; /* the references' tokens are looked up */
    k->packed = use_packed(k);
    if ((st = (k->packed ? count_hyp_packed : count_hyp)(k, nh, k->row, row_width(k))) != ST_OK ||
        (st = refs_reserve(k, (Py_ssize_t)(lb - la))) != ST_OK)
        return st;
    Py_ssize_t nrefs = 0;
    for (int64_t j = la; j < lb; j++) {
        if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
        int64_t ra = b->roff[j], rb = b->roff[j + 1];
        k->bad_ref = (Py_ssize_t)(j - la);
        if (rb < ra) return bad(k, "offsets are not monotonic");
        k->ref_ids.len = 0; /* the arena text of the references before can stay */
        Py_ssize_t nr = segment_tokens(k, b->rdata + ra, (Py_ssize_t)(rb - ra));
        if (nr < 0) return (int)nr;
        k->reflens[nrefs] = nr;
        if (k->packed) count_ref_packed(k, k->ref_ids.p, nr, nrefs, k->row);
        else count_ref(k, k->ref_ids.p, nr, nrefs);
        nrefs++;
    }
    k->bad_ref = -1;
    if (nrefs == 0) return bad(k, "no reference (all references are missing)");
    (k->packed ? finish_row_packed : finish_row)(k, k->row, nh, k->reflens, nrefs);
    return ST_OK;
}

/* stats: every row's statistics into b->out. A status; for ST_BAD and ST_OVERFLOW, k->bad_row,
   bad_ref and bad_what say where and why it stopped. */
static int run(K *k, const Batch *b) {
    int st = row_alloc(k);
    for (Py_ssize_t r = 0; r < b->n && st == ST_OK; r++)
        if ((st = stats_row(k, b, r)) == ST_OK) st = emit_row(k, b->out, r, b->per_row);
    return st;
}

/* stats_many's row r: its references tokenized once (their ids stay in hyp_ids, and their tokens
   in the token table, for the candidates to be looked up), and their n-grams put in the table
   once, with the highest count of each in one reference (the references' tokens numbered as a
   hypothesis' are); their number into *pnrefs. A status. */
static int table_refs(K *k, const Batch *b, Py_ssize_t r, Py_ssize_t *pnrefs) {
    int st;
    int64_t la = b->loff[r], lb = b->loff[r + 1];
    if (lb < la) return bad(k, "offsets are not monotonic");
    if ((st = refs_reserve(k, (Py_ssize_t)(lb - la))) != ST_OK) return st;
    k->arena.len = 0;
    tk_clear(k);
    k->tk_insert = 1; k->tk_ids = &k->hyp_ids; k->hyp_ids.len = 0; /* numbered as a candidate's tokens */
    Py_ssize_t total = 0; /* the references' bytes: the token table sized once for all of them */
    for (int64_t j = la; j < lb; j++)
        if ((!b->rval || b->rval[j]) && b->roff[j + 1] > b->roff[j])
            total += (Py_ssize_t)(b->roff[j + 1] - b->roff[j]);
    if ((st = tk_room(k, total)) != ST_OK) return st;
    Py_ssize_t nrefs = 0;
    for (int64_t j = la; j < lb; j++) {
        if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
        int64_t ra = b->roff[j], rb = b->roff[j + 1];
        k->bad_ref = (Py_ssize_t)(j - la);
        if (rb < ra) return bad(k, "offsets are not monotonic");
        k->rstart[nrefs] = k->hyp_ids.len;
        Py_ssize_t nr = segment_tokens(k, b->rdata + ra, (Py_ssize_t)(rb - ra));
        if (nr < 0) return (int)nr;
        k->reflens[nrefs++] = nr;
    }
    k->bad_ref = -1;
    if (nrefs == 0) return bad(k, "no reference (all references are missing)");
    Py_ssize_t R = k->hyp_ids.len;
    k->dense = 1; k->n_uniq = k->tk_n;
    k->tk_insert = 0; k->tk_ids = &k->ref_ids; /* the candidates' tokens are looked up */
    if ((st = ng_prepare(k, R)) != ST_OK) return st;
    for (Py_ssize_t q = 0; q < nrefs; q++) add_ref_ngrams(k, (Py_ssize_t)k->rstart[q], (Py_ssize_t)k->reflens[q], q);
    *pnrefs = nrefs;
    return ST_OK;
}

/* stats_many: system y's candidate of row r into k->row, looked up in the references' table
   (table_refs; their ids, table entries and A arena bytes stay). A status. */
static int many_row(K *k, const Sys *y, Py_ssize_t r, Py_ssize_t A, Py_ssize_t nrefs) {
    int st;
    if (y->hval && !y->hval[r]) return bad(k, "candidate is null");
    int64_t a = y->hoff[r], e = y->hoff[r + 1];
    if (e < a) return bad(k, "offsets are not monotonic");
    k->arena.len = A; k->ref_ids.len = 0;
    Py_ssize_t nh = segment_tokens(k, y->hdata + a, (Py_ssize_t)(e - a));
    if (nh < 0) return (int)nh;
    if ((st = count_matches(k, k->ref_ids.p, nh, k->row, row_width(k))) != ST_OK) return st;
    k->row[1] = closest_length(nh, k->reflens, nrefs);
    return ST_OK;
}

/* stats_many: each row's references tabled once (table_refs), then every system's candidate
   counted against them, into that system's out. A status. */
static int run_many(K *k, const Batch *b, const Sys *sys, Py_ssize_t S) {
    int st = row_alloc(k);
    for (Py_ssize_t r = 0; r < b->n && st == ST_OK; r++) {
        Py_ssize_t nrefs = 0;
        k->bad_row = r;
        k->bad_ref = -1;
        if ((st = table_refs(k, b, r, &nrefs)) != ST_OK) break;
        Py_ssize_t A = k->arena.len;
        for (Py_ssize_t s = 0; s < S && st == ST_OK; s++)
            if ((st = many_row(k, &sys[s], r, A, nrefs)) == ST_OK) st = emit_row(k, sys[s].out, r, b->per_row);
        ng_clear(k);
    }
    return st;
}

/* The buffers of a stats_ids call, checked by ids_batch: per side, the ids, the dictionary's
   offsets into them and the index (NULL: entry i is value i), the validity bytes or NULL; the
   n+1 list offsets, and out. */
typedef struct {
    const int32_t *hids, *rids, *hidx, *ridx;
    const int64_t *hoff, *roff, *loff;
    const uint8_t *hval, *rval;
    Py_ssize_t n;
    int64_t *out;
    int per_row;
} IdBatch;

/* stats_ids's row r into k->row: as stats_row, with the tokens' ids given. A status. */
static int ids_row(K *k, const IdBatch *b, Py_ssize_t r) {
    int st;
    k->bad_row = r;
    k->bad_ref = -1;
    if (b->hval && !b->hval[r]) return bad(k, "candidate is null");
    Py_ssize_t he = b->hidx ? b->hidx[r] : r;
    Py_ssize_t nh = (Py_ssize_t)(b->hoff[he + 1] - b->hoff[he]);
    k->hyp_ids.len = 0;
    if (ibuf_reserve(&k->hyp_ids, nh + 1) < 0) return ST_NOMEM;
    memcpy(k->hyp_ids.p, b->hids + b->hoff[he], (size_t)nh * sizeof(int32_t));
    k->hyp_ids.len = nh;
    if ((st = count_hyp(k, nh, k->row, row_width(k))) != ST_OK ||
        (st = refs_reserve(k, (Py_ssize_t)(b->loff[r + 1] - b->loff[r]))) != ST_OK)
        return st;
    Py_ssize_t nrefs = 0;
    for (int64_t j = b->loff[r]; j < b->loff[r + 1]; j++) {
        if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
        Py_ssize_t re = b->ridx ? b->ridx[j] : j;
        Py_ssize_t nr = (Py_ssize_t)(b->roff[re + 1] - b->roff[re]);
        k->reflens[nrefs] = nr;
        count_ref(k, b->rids + b->roff[re], nr, nrefs);
        nrefs++;
    }
    if (nrefs == 0) {
        ng_clear(k);
        return bad(k, "no reference (all references are missing)");
    }
    finish_row(k, k->row, nh, k->reflens, nrefs);
    return ST_OK;
}

/* stats_ids: every row's statistics into b->out. A status. */
static int run_ids(K *k, const IdBatch *b) {
    int st = row_alloc(k);
    for (Py_ssize_t r = 0; r < b->n && st == ST_OK; r++)
        if ((st = ids_row(k, b, r)) == ST_OK) st = emit_row(k, b->out, r, b->per_row);
    return st;
}

/* stages: one segment through the passes of `stage` (normalised; with STAGE_TOKENIZE also
   rewritten, split and interned). A status. */
static int stage_segment(K *k, const uint8_t *s, Py_ssize_t n, int stage) {
    if (stage == STAGE_NORMALISE) {
        int st = normalise(k, &s, &n);
        return st != ST_OK ? st : check_now(k, s, n); /* the validation normalise leaves to the split */
    }
    Py_ssize_t nt = segment_tokens(k, s, n);
    return nt < 0 ? (int)nt : ST_OK;
}

/* stages: every candidate and reference through the passes of `stage`, as stats takes them (a
   row's tokens stay in the token table until the next row); nothing is counted. A status. */
static int run_stages(K *k, const Batch *b, int stage) {
    for (Py_ssize_t r = 0; r < b->n; r++) {
        int st;
        k->bad_row = r;
        k->bad_ref = -1;
        if (b->hval && !b->hval[r]) return bad(k, "candidate is null");
        int64_t a = b->hoff[r], e = b->hoff[r + 1];
        int64_t la = b->loff[r], lb = b->loff[r + 1];
        if (e < a || lb < la) return bad(k, "offsets are not monotonic");
        k->arena.len = 0;
        tk_clear(k);
        k->tk_insert = 1; k->tk_ids = &k->hyp_ids; k->hyp_ids.len = 0;
        if ((st = stage_segment(k, b->hdata + a, (Py_ssize_t)(e - a), stage)) != ST_OK) return st;
        for (int64_t j = la; j < lb; j++) {
            if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
            int64_t ra = b->roff[j], rb = b->roff[j + 1];
            k->bad_ref = (Py_ssize_t)(j - la);
            if (rb < ra) return bad(k, "offsets are not monotonic");
            if ((st = stage_segment(k, b->rdata + ra, (Py_ssize_t)(rb - ra), stage)) != ST_OK) return st;
        }
    }
    return ST_OK;
}

/* ----------------------------------------------------------------- the calls */

/* A call's result for its run's status st (status_result): None for ST_OK; otherwise NULL with the
   exception set -- ValueError((row, ref_index or -1, reason)) for ST_BAD, MemoryError, OverflowError
   naming the row (and no metric), or the Python error already set (ST_PYERR). */
static PyObject *run_result(int st, const K *k) {
    return status_result(st, NULL, k->bad_row, k->bad_ref, k->bad_what ? k->bad_what : "invalid row");
}

static int check_order(int order) {
    if (order < 1 || order > 64) {
        PyErr_SetString(PyExc_ValueError, "max_order must be in 1..64");
        return -1;
    }
    return 0;
}

static int check_tokenizer(int tokenizer) {
    if (tokenizer < TOK_NONE || tokenizer > TOK_CHAR) {
        PyErr_SetString(PyExc_ValueError, "unknown tokenizer id");
        return -1;
    }
    return 0;
}

/* The Unicode flag table, which intl and zh need; -1 with ValueError if they lack it. */
static int check_flags(int tokenizer, const View *fl) {
    if ((tokenizer == TOK_INTL || tokenizer == TOK_ZH) && (!fl->held || fl->view.len != UNI_SIZE)) {
        PyErr_SetString(PyExc_ValueError, "this tokenizer needs the Unicode flag table");
        return -1;
    }
    return 0;
}

/* The options of a text call into k. */
static void k_options(K *k, int tokenizer, int lowercase, int order, const View *fl) {
    k->tokenizer = tokenizer; k->lowercase = lowercase; k->order = order;
    k->flags = fl->held ? (const uint8_t *)fl->view.buf : NULL;
    if (tokenizer == TOK_INTL)
        for (int c = 1; c < 0x80; c++) k->intl_plain[c] = !k->flags[c] && !_Py_ascii_whitespace[c];
}

/* b's references: rd, ro, rv and lo (m references, n rows), their offsets inside their data; -1
   with ValueError if not. */
static int ref_batch(Batch *b, const View *rd, const View *ro, const View *rv, const View *lo, Py_ssize_t n,
                     Py_ssize_t m) {
    b->rdata = (const uint8_t *)rd->view.buf;
    b->roff = (const int64_t *)ro->view.buf;
    b->loff = (const int64_t *)lo->view.buf;
    b->rval = rv->held ? (const uint8_t *)rv->view.buf : NULL;
    b->n = n; b->m = m;
    if (b->roff[0] < 0 || b->roff[m] > rd->view.len || b->loff[0] < 0 || b->loff[n] > m) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
        return -1;
    }
    return 0;
}

/* The buffers of a stats call o[0..9) (hyp_data, hyp_offsets, hyp_valid, ref_data, ref_offsets,
   ref_valid, list_offsets, flags, out; out NULL: a stages call, which has none) held in v[0..9)
   and checked into b; -1 with TypeError or ValueError if they cannot be used. */
static int text_batch(View v[9], PyObject *const o[9], int tokenizer, int per_row, Py_ssize_t width, Batch *b) {
    View *out = o[8] ? &v[8] : NULL;
    for (int i = 0; i < 9; i++) v[i].held = 0;
    for (int i = 0; i < 9; i++)
        if (o[i] && get_view(o[i], &v[i], i == 8) < 0) return -1;
    if (!v[0].held || !v[1].held || !v[3].held || !v[4].held || !v[6].held || (out && !out->held)) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        return -1;
    }
    Py_ssize_t n, m;
    if (batch_shape(&v[1], &v[4], &v[6], &v[2], &v[5], out, per_row, width, &n, &m) < 0 ||
        check_flags(tokenizer, &v[7]) < 0)
        return -1;
    b->hdata = (const uint8_t *)v[0].view.buf;
    b->hoff = (const int64_t *)v[1].view.buf;
    b->hval = v[2].held ? (const uint8_t *)v[2].view.buf : NULL;
    b->out = out ? (int64_t *)out->view.buf : NULL;
    b->per_row = per_row;
    if (b->hoff[0] < 0 || b->hoff[n] > v[0].view.len) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
        return -1;
    }
    return ref_batch(b, &v[3], &v[4], &v[5], &v[6], n, m);
}

static void release_views(View *v, int n) {
    for (int i = 0; i < n; i++) rel_view(&v[i]);
}

PyDoc_STRVAR(stats_doc,
"stats(hyp_data, hyp_offsets, hyp_valid, ref_data, ref_offsets, ref_valid,\n"
"      list_offsets, tokenizer, lowercase, max_order, flags, out, per_row)\n"
"\n"
"Fill `out` (int64, n*(2+2N) when per_row else 2+2N, added to) with BLEU\n"
"statistics. Offsets are int64 (n+1 / m+1 / n+1 values), valid buffers are\n"
"one byte per value (or None: all valid). Raises OverflowError if a sum added\n"
"to `out` would exceed int64, and\n"
"ValueError(row, ref_index or -1 for the candidate, reason).");

static PyObject *k_stats(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[9]; /* the buffers, in text_batch's order */
    int tokenizer, lowercase, order, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOOOiiiOOi", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &tokenizer,
                          &lowercase, &order, &o[7], &o[8], &per_row))
        return NULL;
    if (check_order(order) < 0 || check_tokenizer(tokenizer) < 0) return NULL;
    PyObject *result = NULL;
    View v[9];
    Batch b;
    K k;
    memset(&k, 0, sizeof(k));
    if (text_batch(v, o, tokenizer, per_row, 2 + 2 * (Py_ssize_t)order, &b) == 0) {
        k_options(&k, tokenizer, lowercase, order, &v[7]);
        k.ts = PyEval_SaveThread();
        int st = run(&k, &b);
        PyEval_RestoreThread(k.ts);
        result = run_result(st, &k);
    }
    k_free(&k);
    release_views(v, 9);
    return result;
}

PyDoc_STRVAR(stages_doc,
"stages(hyp_data, hyp_offsets, hyp_valid, ref_data, ref_offsets, ref_valid, list_offsets,\n"
"       tokenizer, lowercase, flags, stop_after)\n"
"\n"
"For the benchmarks' stage timings: stats's first passes alone over the same buffers, each\n"
"candidate and reference normalised (stop_after 1: UTF-8 validated, lowercased, right-stripped)\n"
"or also tokenized (2: the tokenizer's passes, then split into tokens and interned); nothing is\n"
"counted, and None returned. Raises stats's ValueError(row, ref_index or -1, reason) for a\n"
"row it cannot take.");

static PyObject *k_stages(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[9] = {NULL}; /* the buffers, in text_batch's order; no out */
    int tokenizer, lowercase, stage;
    if (!PyArg_ParseTuple(args, "OOOOOOOiiOi", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &tokenizer,
                          &lowercase, &o[7], &stage))
        return NULL;
    if (check_tokenizer(tokenizer) < 0) return NULL;
    if (stage != STAGE_NORMALISE && stage != STAGE_TOKENIZE) {
        PyErr_SetString(PyExc_ValueError, "stop_after must be 1 (normalise) or 2 (tokenize)");
        return NULL;
    }
    PyObject *result = NULL;
    View v[9];
    Batch b;
    K k;
    memset(&k, 0, sizeof(k));
    if (text_batch(v, o, tokenizer, 0, 0, &b) == 0) {
        k_options(&k, tokenizer, lowercase, 0, &v[7]); /* no order: nothing is counted */
        k.ts = PyEval_SaveThread();
        int st = run_stages(&k, &b, stage);
        PyEval_RestoreThread(k.ts);
        result = run_result(st, &k);
    }
    k_free(&k);
    release_views(v, 9);
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
    if (check_order(order) < 0 || check_tokenizer(tokenizer) < 0) return NULL;
    PyObject *seq = PySequence_Fast(o_sys, "systems must be a sequence of (data, offsets, valid, out) tuples");
    if (!seq) return NULL;
    Py_ssize_t S = PySequence_Fast_GET_SIZE(seq), n = 0, m = 0;
    View rd, ro, rv, lo, fl;
    View *shared[] = {&rd, &ro, &rv, &lo, &fl};
    for (int i = 0; i < 5; i++) shared[i]->held = 0;
    View *views = (View *)calloc((size_t)(S > 0 ? S : 1) * 4, sizeof(View)); /* hd, ho, hv, out per system */
    Sys *sys = (Sys *)calloc((size_t)(S > 0 ? S : 1), sizeof(Sys));
    PyObject *result = NULL;
    Batch b;
    memset(&b, 0, sizeof(b));
    K k;
    memset(&k, 0, sizeof(k));
    if (!views || !sys) { PyErr_NoMemory(); goto done; }
    if (get_view(o_rd, &rd, 0) < 0 || get_view(o_ro, &ro, 0) < 0 || get_view(o_rv, &rv, 0) < 0 ||
        get_view(o_lo, &lo, 0) < 0 || get_view(o_flags, &fl, 0) < 0)
        goto done;
    if (!rd.held || !ro.held || !lo.held) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        goto done;
    }
    if (get_systems(seq, views, sys, &ro, &lo, &rv, per_row, 2 + 2 * (Py_ssize_t)order, &n, &m) < 0) goto done;
    if (S == 0) { Py_INCREF(Py_None); result = Py_None; goto done; }
    if (check_flags(tokenizer, &fl) < 0 || ref_batch(&b, &rd, &ro, &rv, &lo, n, m) < 0) goto done;
    b.per_row = per_row;
    k_options(&k, tokenizer, lowercase, order, &fl);
    k.ts = PyEval_SaveThread();
    int st = run_many(&k, &b, sys, S);
    PyEval_RestoreThread(k.ts);
    result = run_result(st, &k);
done:
    k_free(&k);
    for (int i = 0; i < 5; i++) rel_view(shared[i]);
    if (views)
        for (Py_ssize_t i = 0; i < 4 * S; i++) rel_view(views + i);
    free(views);
    free(sys);
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

/* The buffers of a stats_ids call o[0..10) (hyp_ids, hyp_offsets, hyp_index, hyp_valid, ref_ids,
   ref_offsets, ref_index, ref_valid, list_offsets, out) held in v and checked into b: every offset
   and index, so that run_ids cannot read outside the buffers. -1 with TypeError or ValueError if
   they cannot be used. */
static int ids_batch(View v[10], PyObject *const o[10], int per_row, Py_ssize_t width, IdBatch *b) {
    for (int i = 0; i < 10; i++) v[i].held = 0;
    for (int i = 0; i < 10; i++)
        if (get_view(o[i], &v[i], i == 9) < 0) return -1;
    if (!v[0].held || !v[1].held || !v[4].held || !v[5].held || !v[8].held || !v[9].held) {
        PyErr_SetString(PyExc_TypeError, "ids, offsets and out buffers are required");
        return -1;
    }
    Py_ssize_t nhi = v[0].view.len / 4, nri = v[4].view.len / 4;
    Py_ssize_t nhd = v[1].view.len / 8 - 1, nrd = v[5].view.len / 8 - 1;
    Py_ssize_t n = v[2].held ? v[2].view.len / 4 : nhd, m = v[6].held ? v[6].view.len / 4 : nrd;
    if (nhd < 0 || nrd < 0) {
        PyErr_SetString(PyExc_ValueError, "offset buffers have inconsistent lengths");
        return -1;
    }
    if (rows_shape(n, m, &v[8], &v[3], &v[7], &v[9], per_row, width) < 0) return -1;
    b->hids = (const int32_t *)v[0].view.buf; b->rids = (const int32_t *)v[4].view.buf;
    b->hoff = (const int64_t *)v[1].view.buf; b->roff = (const int64_t *)v[5].view.buf;
    b->hidx = v[2].held ? (const int32_t *)v[2].view.buf : NULL;
    b->ridx = v[6].held ? (const int32_t *)v[6].view.buf : NULL;
    b->hval = v[3].held ? (const uint8_t *)v[3].view.buf : NULL;
    b->rval = v[7].held ? (const uint8_t *)v[7].view.buf : NULL;
    b->loff = (const int64_t *)v[8].view.buf;
    b->n = n; b->out = (int64_t *)v[9].view.buf; b->per_row = per_row;
    if (check_side(b->hids, nhi, b->hoff, nhd, b->hidx, b->hval, n) < 0 ||
        check_side(b->rids, nri, b->roff, nrd, b->ridx, b->rval, m) < 0)
        return -1;
    for (Py_ssize_t r = 0; r < n; r++)
        if (b->loff[r] < 0 || b->loff[r + 1] < b->loff[r] || b->loff[r + 1] > m) {
            PyErr_SetString(PyExc_ValueError, "offsets are not monotonic or point outside their data");
            return -1;
        }
    return 0;
}

static PyObject *k_stats_ids(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[10]; /* the buffers, in ids_batch's order */
    int order, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOiOi", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8],
                          &order, &o[9], &per_row))
        return NULL;
    if (check_order(order) < 0) return NULL;
    PyObject *result = NULL;
    View v[10];
    IdBatch b;
    K k;
    memset(&k, 0, sizeof(k));
    if (ids_batch(v, o, per_row, 2 + 2 * (Py_ssize_t)order, &b) == 0) {
        k.order = order;
        k.ts = PyEval_SaveThread();
        int st = run_ids(&k, &b);
        PyEval_RestoreThread(k.ts);
        result = run_result(st, &k);
    }
    k_free(&k);
    release_views(v, 10);
    return result;
}

static PyMethodDef methods[] = {
    {"stats", k_stats, METH_VARARGS, stats_doc},
    {"stats_many", k_stats_many, METH_VARARGS, stats_many_doc},
    {"stats_ids", k_stats_ids, METH_VARARGS, stats_ids_doc},
    {"stages", k_stages, METH_VARARGS, stages_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core._bleu", "Batch BLEU statistics kernel.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bleu(void) {
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    space_bitmap();
    u8_fast_table(); /* from space_bmp */
    byte_classes(); /* made here too: the runs read it without the GIL */
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
