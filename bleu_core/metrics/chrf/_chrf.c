/*
 * bleu_core._chrf -- batch chrF / chrF++ statistics.
 *
 * One call turns a batch of candidates and their references (Arrow-style buffers: UTF-8 data,
 * int64 offsets, validity bytes) into sacrebleu's chrF sufficient statistics, one row per pair
 * or their sum: for each character order 1..C, then each word order 1..W, the triple
 * [hyp_count, ref_count, match_count].
 *
 * Every step mirrors sacrebleu 2.6.0 (metrics/chrf.py, metrics/helpers.py):
 *   - lowercasing calls Python's str.lower (ASCII segments take a byte fast path, identical
 *     for ASCII); nothing is stripped;
 *   - character n-grams are of code points, after removing every code point at which
 *     str.split() splits (Py_UNICODE_ISSPACE) unless `whitespace`;
 *   - words are str.split() tokens; a token of two or more code points whose last code point is
 *     ASCII punctuation becomes [w[:-1], w[-1]], else one whose first is becomes [w[0], w[1:]];
 *     word n-grams are compared as token sequences (sacrebleu joins them with ' ', which is
 *     injective because tokens are non-empty and contain no whitespace);
 *   - per order: hyp_count is 0 when the reference has no n-gram of that order, match_count is
 *     the sum over distinct n-grams of min(hyp count, ref count);
 *   - with several references, each is scored with CHRF._compute_f_score (the same double
 *     operations in the same order; built with -ffp-contract=off) and the first reference with
 *     the strictly greatest F is kept.
 *
 * Counting is exact. A hypothesis table holds every distinct hypothesis n-gram of the pair with
 * its count; the n-gram itself is encoded in its 64-bit key, hashes only pick the bucket:
 *   - a character n-gram with n <= 3 is packed as sum((cp_j + 1) << 21 j) (cp + 1 < 2**21 and
 *     is never 0, so n-grams of different lengths differ too; bit 63 stays clear);
 *   - a longer character n-gram is (table slot of its (n-1)-prefix, last code point), and a
 *     word n-gram is (slot of its prefix, token id) with tokens interned per pair (a word
 *     unigram has a reserved prefix value instead of a slot); a slot names one distinct n-gram
 *     for the whole pair, so these keys are exact as well, and bit 63 marks them.
 * (64-bit keys with a separate count array and a table at most 1/4 full measured 1.5-2x faster
 * than 128-bit keys packing n <= 6, on WMT text.) Each reference then walks its
 * n-grams position by position, looking each one up (a prefix that is not in the table ends
 * the walk at that position: no longer n-gram there can be in the hypothesis), counting its
 * occurrences in a per-entry counter and adding 1 to the match count while that counter is
 * still <= the hypothesis count, which sums min(hyp, ref) without a reference table.
 * Counters are reset through a list of touched entries (not needed after a row's last reference:
 * the table is cleared next), the table through a list of inserted ones; buffers are reused
 * across the batch and nothing is allocated per n-gram. The walks and their per-n-gram steps are
 * inlined into each caller with the table's fields in a local W (kept in registers), and a
 * position's packed and chained orders are two loops, unrolled for the default order 6: on WMT
 * text this took chrF's instructions (callgrind) from 1.11e9 to 0.64e9 per 20k pairs.
 *
 * Each entry point only parses and checks its arguments (into a Batch, the systems into Sys, the
 * options into K); run and run_many do the work over them in plain C and return a status (ST_*),
 * which the entry point turns into its exception (status_result). The GIL is released for the
 * whole batch and taken back only to call str.lower on non-ASCII text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buffers.h" /* View, get_view, rel_view, batch_shape, Sys, get_systems: shared with _bleu.c */
#include "_text.h"    /* u8dec, is_space: shared with _bleu.c */
#include "_cps.h"     /* grow/GROW, decode_cps, lower_cps, hash_cps, same_cps: shared with _ter.c */
#include "_status.h"  /* ST_*, status_result: shared with _bleu.c and _ter.c */

/* the table's walks and their steps: inlined into each caller, so that a walk's W stays in registers */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* character orders up to this are packed into the key itself (3 * 21 bits) */
#define PACKED_MAX 3
/* keys: a packed character n-gram has bit 63 clear and is never 0; every other key is
 * CHAIN | prefix << 32 | symbol, where prefix is the table slot of the (n-1)-gram, or WORD_ROOT
 * for a word unigram */
#define EMPTY 0ULL
#define CHAIN (1ULL << 63)
#define WORD_ROOT 0x7FFFFFFFu
#define NO_SLOT UINT32_MAX
/* slots must stay below WORD_ROOT */
#define MAX_TABLE ((size_t)1 << 30)
/* table capacity per hypothesis n-gram: a load of 1/4 or less measured faster than 1/2 on WMT
 * text (fewer second probes, so fewer mispredicted branches) */
#define SLOTS_PER_NGRAM 4

static PyObject *lower_name; /* interned "lower" */

/* ASCII punctuation (string.punctuation), as a 128-bit set */
static uint64_t punct_bits[2];

static inline int is_punct(uint32_t c) { return c < 128 && ((punct_bits[c >> 6] >> (c & 63)) & 1); }


/* str.split()'s whitespace test, with the answers for the Basic Multilingual Plane cached in a
 * byte table (one load; a bitmap took two shifts and a mask more per character) filled from
 * Py_UNICODE_ISSPACE when the module is imported. */
static uint8_t space_tab[0x10000];

static inline int is_space_fast(uint32_t c) {
    return c < 0x10000 ? space_tab[c] : is_space(c);
}

/* ------------------------------------------------------------------ buffers */

/* One segment, hypothesis or reference, ready for counting. */
typedef struct {
    uint32_t *cp; size_t cp_cap; Py_ssize_t ncp;  /* code points (after lowercasing) */
    uint32_t *chbuf; size_t ch_cap;               /* code points without whitespace */
    const uint32_t *ch; Py_ssize_t nch;           /* the character sequence: cp or chbuf */
    uint32_t *bd; size_t bd_cap;                  /* starts of space / non-space runs */
    uint32_t *ts, *tl; size_t ts_cap, tl_cap;     /* word token spans in cp */
    uint64_t *th; size_t th_cap;                  /* their hashes */
    Py_ssize_t nt;
    int32_t *id; size_t id_cap;                   /* token ids (-1: not a hypothesis token) */
} Seg;

typedef struct { uint32_t hc, rc; } Cnt; /* counts of a hypothesis n-gram */
typedef struct { uint64_t h; const uint32_t *s; uint32_t len; int32_t id; } Tok; /* an interned token */

typedef struct {
    Py_ssize_t co, wo, order;
    int lowercase, whitespace, eps;
    double factor, one_plus; /* float(beta ** 2), float(1 + beta ** 2) */
    PyThreadState *ts;
    Seg h, r;
    Seg *rs; Py_ssize_t rs_cap;  /* a row's references, prepared once for every system (stats_many) */
    Tok *tt; size_t tt_cap, tt_mask;
    /* stats_many: the row's references' n-grams in the table with their count in reference q at
       rcs[slot * R + q], and each reference's matches (R x order) */
    uint32_t *rcs; size_t rcs_cap; Py_ssize_t nshared;
    int64_t *matches; size_t matches_cap;
    uint64_t *key; Cnt *cnt; size_t t_cap, mask; int shift;
    uint32_t *ins, *touch; size_t ins_cap, touch_cap, nins, ntouch;
    int64_t *match, *cur, *best;
    Py_ssize_t bad_row, bad_ref;
    const char *bad_what;
} K;

static void seg_free(Seg *g) {
    free(g->cp); free(g->chbuf); free(g->bd); free(g->ts); free(g->tl); free(g->th); free(g->id);
}

static void k_free(K *k) {
    seg_free(&k->h); seg_free(&k->r);
    for (Py_ssize_t i = 0; i < k->rs_cap; i++) seg_free(&k->rs[i]);
    free(k->rs);
    free(k->tt); free(k->key); free(k->cnt); free(k->ins); free(k->touch);
    free(k->rcs); free(k->matches);
    free(k->match); free(k->cur); free(k->best);
}

/* ------------------------------------------------------------ preprocessing */

/* Replace g->cp by str.lower() of it. Takes the GIL for the call. */
static int python_lower(K *k, Seg *g) {
    return lower_cps(&k->ts, lower_name, &g->cp, &g->cp_cap, &g->ncp) < 0 ? ST_PYERR : ST_OK;
}

/* Decode s into g->cp, validating it; *ascii tells whether it was all ASCII. ASCII runs are
 * found eight bytes at a time and widened by a loop the compiler vectorises. */
static int decode(K *k, Seg *g, const uint8_t *s, Py_ssize_t n, int *ascii) {
    if (decode_cps(s, n, g->cp, &g->ncp, ascii) < 0) {
        k->bad_what = "invalid UTF-8";
        return ST_BAD;
    }
    return ST_OK;
}

/* Decode (validating) and lowercase the segment, then build its character sequence and its
 * word tokens (spans of g->cp, with their hashes) in one pass over the code points. */
static int prepare(K *k, Seg *g, const uint8_t *s, Py_ssize_t n) {
    if (n > INT32_MAX) { k->bad_what = "text too long (over 2**31 - 1 bytes in one segment)"; return ST_BAD; }
    if (GROW(g->cp, g->cp_cap, n + 1) < 0) return ST_NOMEM;
    int ascii, st;
    if ((st = decode(k, g, s, n, &ascii)) != ST_OK) return st;
    if (k->lowercase) {
        if (ascii) {
            for (Py_ssize_t j = 0; j < g->ncp; j++) g->cp[j] += (g->cp[j] - 'A' < 26u) ? 32u : 0u;
        } else if ((st = python_lower(k, g)) != ST_OK) {
            return st;
        }
    }
    const uint32_t *cp = g->cp;
    Py_ssize_t m = g->ncp;
    g->ch = cp; g->nch = m;
    g->nt = 0;
    int need_chars = k->co > 0 && !k->whitespace;
    if (!need_chars && k->wo == 0) return ST_OK;
    /* the code points without whitespace (branch-free) */
    if (GROW(g->chbuf, g->ch_cap, m + 1) < 0 || GROW(g->bd, g->bd_cap, m + 2) < 0) return ST_NOMEM;
    uint32_t *chb = g->chbuf, *bd = g->bd;
    if (k->wo == 0) {
        Py_ssize_t q = 0;
        if (ascii) { /* (lowercasing keeps ASCII text ASCII) */
            for (Py_ssize_t j = 0; j < m; j++) {
                chb[q] = cp[j];
                q += 1 - space_tab[cp[j]];
            }
        } else {
            for (Py_ssize_t j = 0; j < m; j++) {
                chb[q] = cp[j];
                q += !is_space_fast(cp[j]);
            }
        }
        g->ch = chb; g->nch = q;
        return ST_OK;
    }
    /* the same, and the positions where runs of space / non-space begin: str.split() tokens are
     * the non-space runs */
    Py_ssize_t q = 0, nb = 0;
    int prev = 1;
    for (Py_ssize_t j = 0; j < m; j++) {
        uint32_t c = cp[j];
        int sp = is_space_fast(c);
        chb[q] = c;
        q += !sp;
        bd[nb] = (uint32_t)j;
        nb += sp != prev;
        prev = sp;
    }
    if (!prev) bd[nb++] = (uint32_t)m;
    if (need_chars) { g->ch = chb; g->nch = q; }
    /* the tokens, after sacrebleu's punctuation rule */
    if (GROW(g->ts, g->ts_cap, nb + 1) < 0 || GROW(g->tl, g->tl_cap, nb + 1) < 0 ||
        GROW(g->th, g->th_cap, nb + 1) < 0 || GROW(g->id, g->id_cap, nb + 1) < 0)
        return ST_NOMEM;
    uint32_t *ts = g->ts, *tl = g->tl;
    Py_ssize_t nt = 0;
    for (Py_ssize_t b = 0; b < nb; b += 2) {
        uint32_t a = bd[b], len = bd[b + 1] - a;
        if (len > 1 && is_punct(cp[a + len - 1])) {
            ts[nt] = a; tl[nt++] = len - 1;
            ts[nt] = a + len - 1; tl[nt++] = 1;
        } else if (len > 1 && is_punct(cp[a])) {
            ts[nt] = a; tl[nt++] = 1;
            ts[nt] = a + 1; tl[nt++] = len - 1;
        } else {
            ts[nt] = a; tl[nt++] = len;
        }
    }
    for (Py_ssize_t t = 0; t < nt; t++) g->th[t] = hash_cps(cp + ts[t], tl[t]);
    g->nt = nt;
    return ST_OK;
}

/* ------------------------------------------------------------ token interning */

static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* Intern the word tokens of the segments segs[0..n) (ids 0.., one dictionary for all of them:
   the hypothesis' for run, a row's references' for stats_many) into k->tt and each one's id. */
static int intern_tokens(K *k, Seg *segs, Py_ssize_t n) {
    size_t total = 0;
    for (Py_ssize_t q = 0; q < n; q++) total += (size_t)segs[q].nt;
    size_t cap = pow2_at_least(2 * total + 2);
    if (GROW(k->tt, k->tt_cap, cap) < 0) return ST_NOMEM;
    k->tt_mask = cap - 1;
    for (size_t i = 0; i < cap; i++) k->tt[i].id = -1;
    int32_t next = 0;
    for (Py_ssize_t q = 0; q < n; q++) {
        Seg *g = &segs[q];
        for (Py_ssize_t j = 0; j < g->nt; j++) {
            const uint32_t *s = g->cp + g->ts[j];
            uint32_t l = g->tl[j];
            uint64_t h = g->th[j];
            size_t pos = (size_t)h & k->tt_mask;
            for (;;) {
                Tok *e = &k->tt[pos];
                if (e->id < 0) {
                    e->h = h; e->s = s; e->len = l; e->id = next++;
                    g->id[j] = e->id;
                    break;
                }
                if (e->h == h && e->len == l && same_cps(e->s, s, l)) {
                    g->id[j] = e->id;
                    break;
                }
                pos = (pos + 1) & k->tt_mask;
            }
        }
    }
    return ST_OK;
}

/* Ids of g's tokens in the dictionary intern_tokens made: -1 for a token it lacks. */
static void lookup_tokens(K *k, Seg *g) {
    for (Py_ssize_t j = 0; j < g->nt; j++) {
        const uint32_t *s = g->cp + g->ts[j];
        uint32_t l = g->tl[j];
        uint64_t h = g->th[j];
        size_t pos = (size_t)h & k->tt_mask;
        int32_t id = -1;
        for (;;) {
            Tok *e = &k->tt[pos];
            if (e->id < 0) break;
            if (e->h == h && e->len == l && same_cps(e->s, s, l)) {
                id = e->id;
                break;
            }
            pos = (pos + 1) & k->tt_mask;
        }
        g->id[j] = id;
    }
}

/* ------------------------------------------------------------ n-gram table */

/* A walk's view of the table and of its counters, held in a local W (never address-taken once
 * the walk is inlined): stores into the table's arrays cannot alias it, so the compiler keeps the
 * pointers, mask, shift and list lengths in registers instead of reloading K's fields (size_t and
 * uint64_t are the same type) after every store. */
typedef struct {
    uint64_t *key; Cnt *cnt; uint32_t *ins, *touch;
    size_t mask, nins, ntouch; int shift;
    uint32_t hc0;                    /* the hypothesis count an inserted n-gram starts with */
    int64_t *match;                  /* count_ref: k->match; count_hyp_refs: k->matches */
    uint32_t *rcs; Py_ssize_t R, order;
} W;

ALWAYS_INLINE W w_load(const K *k, int64_t *match) {
    W w;
    w.key = k->key; w.cnt = k->cnt; w.ins = k->ins; w.touch = k->touch;
    w.mask = k->mask; w.nins = k->nins; w.ntouch = 0; w.shift = k->shift; w.hc0 = 0;
    w.match = match; w.rcs = k->rcs; w.R = k->nshared; w.order = k->order;
    return w;
}

ALWAYS_INLINE size_t slot_of(const W *w, uint64_t key) {
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> w->shift);
}

/* The slot of key, inserted (with counts {hc0, 0}, and *fresh set) if the table lacks it. */
ALWAYS_INLINE uint32_t tab_insert(W *w, uint64_t key, int *fresh) {
    size_t pos = slot_of(w, key);
    for (;;) {
        uint64_t e = w->key[pos];
        if (e == key) { *fresh = 0; return (uint32_t)pos; }
        if (e == EMPTY) {
            w->key[pos] = key;
            w->cnt[pos] = (Cnt){w->hc0, 0};
            w->ins[w->nins++] = (uint32_t)pos;
            *fresh = 1;
            return (uint32_t)pos;
        }
        pos = (pos + 1) & w->mask;
    }
}

ALWAYS_INLINE uint32_t tab_find(const W *w, uint64_t key) {
    size_t pos = slot_of(w, key);
    for (;;) {
        uint64_t e = w->key[pos];
        if (e == key) return (uint32_t)pos;
        if (e == EMPTY) return NO_SLOT;
        pos = (pos + 1) & w->mask;
    }
}

/* Number of n-grams of orders 1..order in a sequence of length L. */
static size_t ngram_total(Py_ssize_t L, Py_ssize_t order) {
    size_t l = (size_t)L;
    if ((size_t)order >= l) return l * (l + 1) / 2;
    size_t o = (size_t)order;
    return o * l - o * (o - 1) / 2;
}

/* Number of n-grams (every order, characters and words) of a segment. */
static size_t seg_ngrams(const K *k, const Seg *g) {
    return (k->co > 0 ? ngram_total(g->nch, k->co) : 0) + (k->wo > 0 ? ngram_total(g->nt, k->wo) : 0);
}

/* ST_BAD (k->bad_what set) for a candidate with too many n-grams for one table. */
static int check_hyp_size(K *k) {
    if (seg_ngrams(k, &k->h) >= MAX_TABLE / SLOTS_PER_NGRAM) {
        k->bad_what = "candidate too long (2**28 n-grams or more)";
        return ST_BAD;
    }
    return ST_OK;
}

/* Size the table for `count` n-grams (below MAX_TABLE / SLOTS_PER_NGRAM); entries beyond the
   previous pair's are empty. */
static int tab_size(K *k, size_t count) {
    size_t cap = pow2_at_least(SLOTS_PER_NGRAM * count + 2);
    if (cap > k->t_cap) {
        free(k->key);
        free(k->cnt);
        k->key = (uint64_t *)calloc(cap, sizeof(uint64_t)); /* EMPTY is 0 */
        k->cnt = (Cnt *)malloc(cap * sizeof(Cnt));
        if (!k->key || !k->cnt) { k->t_cap = 0; return ST_NOMEM; }
        k->t_cap = cap;
    }
    if (GROW(k->ins, k->ins_cap, count + 1) < 0 || GROW(k->touch, k->touch_cap, count + 1) < 0)
        return ST_NOMEM;
    k->mask = cap - 1;
    k->shift = 64 - __builtin_ctzll((unsigned long long)cap);
    k->nins = 0;
    return ST_OK;
}

/* Size the table for the hypothesis. */
static int tab_prepare(K *k) {
    int st = check_hyp_size(k);
    return st != ST_OK ? st : tab_size(k, seg_ngrams(k, &k->h));
}

static void tab_clear(K *k) {
    uint64_t *key = k->key;
    const uint32_t *ins = k->ins;
    _Pragma("GCC unroll 4")
    for (size_t i = 0; i < k->nins; i++) key[ins[i]] = EMPTY;
    k->nins = 0;
}

/* Keys (see the top of the file): a character n-gram's walk from position i ORs (c + 1) << 21 (n - 1)
 * into the key for n <= PACKED_MAX, then takes CHAIN | slot of the prefix << 32 | c (two loops, so
 * that neither tests n); a word n-gram's: */
#define WORD_KEY(prev, t, n) (CHAIN | (uint64_t)((n) == 1 ? WORD_ROOT : (prev)) << 32 | (t))

/* What a walk does with each n-gram it meets: its slot, its order index j (characters first, then
 * words), whether the walk has just inserted it, and the walk's argument. */
typedef void (*Visit)(W *w, uint32_t slot, Py_ssize_t j, int fresh, Py_ssize_t arg);

/* The character n-grams of orders 1..nmax starting at c inserted into the table, and visited
 * (np = min(nmax, PACKED_MAX): the packed ones). */
ALWAYS_INLINE void insert_at(W *w, const uint32_t *c, Py_ssize_t np, Py_ssize_t nmax, Visit visit, Py_ssize_t arg) {
    uint64_t key = 0;
    uint32_t prev = 0;
    int fresh;
    Py_ssize_t n = 0;
    _Pragma("GCC unroll 8")
    for (; n < np; n++) {
        key |= (uint64_t)(c[n] + 1) << (21 * n);
        prev = tab_insert(w, key, &fresh);
        visit(w, prev, n, fresh, arg);
    }
    _Pragma("GCC unroll 8")
    for (; n < nmax; n++) {
        prev = tab_insert(w, CHAIN | (uint64_t)prev << 32 | c[n], &fresh);
        visit(w, prev, n, fresh, arg);
    }
}

/* The character n-grams of orders 1..nmax starting at c that the table has, visited, up to the
 * first it lacks: no longer n-gram starting there can be in it either. */
ALWAYS_INLINE void find_at(W *w, const uint32_t *c, Py_ssize_t np, Py_ssize_t nmax, Visit visit, Py_ssize_t arg) {
    uint64_t key = 0;
    uint32_t prev = 0;
    Py_ssize_t n = 0;
    _Pragma("GCC unroll 8")
    for (; n < np; n++) {
        key |= (uint64_t)(c[n] + 1) << (21 * n);
        if ((prev = tab_find(w, key)) == NO_SLOT) return;
        visit(w, prev, n, 0, arg);
    }
    _Pragma("GCC unroll 8")
    for (; n < nmax; n++) {
        if ((prev = tab_find(w, CHAIN | (uint64_t)prev << 32 | c[n])) == NO_SLOT) return;
        visit(w, prev, n, 0, arg);
    }
}

/* The character walk of a segment: AT (insert_at or find_at) at every position. Positions with
 * all co orders ahead take constant bounds (the default order 6 its own copy, fully unrolled). */
#define CHAR_WALK(AT, w, ch, L, co, visit, arg) do {                                              \
    Py_ssize_t i_ = 0;                                                                            \
    if ((co) == 6)                                                                                \
        for (; i_ + 6 <= (L); i_++) AT(w, (ch) + i_, PACKED_MAX, 6, visit, arg);                  \
    else if ((co) >= PACKED_MAX)                                                                  \
        for (; i_ + (co) <= (L); i_++) AT(w, (ch) + i_, PACKED_MAX, co, visit, arg);              \
    for (; i_ < (L); i_++) {                                                                      \
        Py_ssize_t nmax_ = (L) - i_ < (co) ? (L) - i_ : (co);                                     \
        AT(w, (ch) + i_, nmax_ < PACKED_MAX ? nmax_ : PACKED_MAX, nmax_, visit, arg);             \
    }                                                                                             \
} while (0)

/* Every n-gram of g inserted into the table, and visited. (static inline, called with a named
 * visit: the compiler inlines the visit into each walk.) */
ALWAYS_INLINE void insert_ngrams(K *k, W *w, const Seg *g, Visit visit, Py_ssize_t arg) {
    Py_ssize_t L = g->nch, co = k->co, wo = k->wo;
    if (co > 0) CHAR_WALK(insert_at, w, g->ch, L, co, visit, arg);
    const int32_t *id = g->id;
    Py_ssize_t T = g->nt;
    int fresh;
    for (Py_ssize_t i = 0; i < T; i++) {
        Py_ssize_t nmax = T - i < wo ? T - i : wo;
        uint32_t prev = 0;
        for (Py_ssize_t n = 1; n <= nmax; n++) {
            prev = tab_insert(w, WORD_KEY(prev, (uint32_t)id[i + n - 1], n), &fresh);
            visit(w, prev, co + n - 1, fresh, arg);
        }
    }
}

/* The n-grams of g that the table has, visited; an n-gram it lacks (or a token id -1) ends the scan
 * from that position: no longer n-gram starting there can be in it either. */
ALWAYS_INLINE void find_ngrams(K *k, W *w, const Seg *g, Visit visit, Py_ssize_t arg) {
    Py_ssize_t L = g->nch, co = k->co, wo = k->wo;
    if (co > 0) CHAR_WALK(find_at, w, g->ch, L, co, visit, arg);
    const int32_t *id = g->id;
    Py_ssize_t T = g->nt;
    for (Py_ssize_t i = 0; i < T; i++) {
        Py_ssize_t nmax = T - i < wo ? T - i : wo;
        uint32_t prev = 0;
        for (Py_ssize_t n = 1; n <= nmax; n++) {
            int32_t t = id[i + n - 1];
            if (t < 0) break;
            prev = tab_find(w, WORD_KEY(prev, (uint32_t)t, n));
            if (prev == NO_SLOT) break;
            visit(w, prev, co + n - 1, 0, arg);
        }
    }
}

ALWAYS_INLINE void count_in_hyp(W *w, uint32_t slot, Py_ssize_t j, int fresh, Py_ssize_t arg) {
    (void)j; (void)arg;
    if (!fresh) w->cnt[slot].hc++; /* else inserted with hc0 = 1 */
}

/* Insert every hypothesis n-gram and count it. */
static void count_hyp(K *k) {
    W w = w_load(k, NULL);
    w.hc0 = 1;
    insert_ngrams(k, &w, &k->h, count_in_hyp, 0);
    k->nins = w.nins;
}

/* One reference occurrence of the hypothesis n-gram in `slot`, of order index j; the counter is
 * listed for its reset (hit) unless the table is cleared before its next use (hit_last). */
ALWAYS_INLINE void hit(W *w, uint32_t slot, Py_ssize_t j, int fresh, Py_ssize_t arg) {
    (void)fresh; (void)arg;
    Cnt *e = &w->cnt[slot];
    uint32_t rc = ++e->rc;
    if (rc == 1) w->touch[w->ntouch++] = slot;
    w->match[j] += rc <= e->hc;
}

ALWAYS_INLINE void hit_last(W *w, uint32_t slot, Py_ssize_t j, int fresh, Py_ssize_t arg) {
    (void)fresh; (void)arg;
    Cnt *e = &w->cnt[slot];
    uint32_t rc = ++e->rc;
    w->match[j] += rc <= e->hc;
}

/* Match counts of the reference r into k->match (orders 0..order-1). `last`: the table is cleared
 * (tab_clear) before it is looked up again, so the reference counters need no reset. */
static void count_ref(K *k, const Seg *r, int last) {
    memset(k->match, 0, (size_t)k->order * sizeof(int64_t));
    W w = w_load(k, k->match);
    if (last) {
        find_ngrams(k, &w, r, hit_last, 0);
        return;
    }
    find_ngrams(k, &w, r, hit, 0);
    for (size_t u = 0; u < w.ntouch; u++) w.cnt[w.touch[u]].rc = 0;
}

/* One occurrence in reference q of the n-gram in `slot` (stats_many's shared table: the counts of
 * the R references at rcs[slot * R ..], cleared when the n-gram is inserted). */
ALWAYS_INLINE void count_in_ref(W *w, uint32_t slot, Py_ssize_t j, int fresh, Py_ssize_t q) {
    (void)j;
    uint32_t *rc = w->rcs + (size_t)slot * w->R;
    if (fresh) { /* one or two references without a call to memset (which cost 4x as much for 8 bytes) */
        if (w->R <= 2) { rc[0] = 0; rc[w->R - 1] = 0; }
        else memset(rc, 0, (size_t)w->R * sizeof(uint32_t));
    }
    rc[q]++;
}

/* stats_many's shared table: the n-grams of the row's references rs[0..R), each one's count in
   reference q at rcs[slot * R + q] (their word ids from intern_tokens). ST_BAD, with nothing built,
   when they are too many for one table (the row is then counted candidate by candidate). */
static int tab_refs(K *k, Py_ssize_t R) {
    size_t count = 0;
    for (Py_ssize_t q = 0; q < R; q++) count += seg_ngrams(k, &k->rs[q]);
    if (count >= MAX_TABLE / SLOTS_PER_NGRAM) return ST_BAD;
    int st = tab_size(k, count);
    if (st != ST_OK) return st;
    if (GROW(k->rcs, k->rcs_cap, (k->mask + 1) * (size_t)R) < 0) return ST_NOMEM;
    k->nshared = R;
    W w = w_load(k, NULL);
    for (Py_ssize_t q = 0; q < R; q++) insert_ngrams(k, &w, &k->rs[q], count_in_ref, q);
    k->nins = w.nins;
    return ST_OK;
}

/* One hypothesis occurrence of the references' n-gram in `slot`, of order index j: a match with
   reference q while the hypothesis has it at most as often as q. */
ALWAYS_INLINE void hit_refs(W *w, uint32_t slot, Py_ssize_t j, int fresh, Py_ssize_t arg) {
    (void)fresh; (void)arg;
    Cnt *e = &w->cnt[slot];
    uint32_t hc = ++e->hc;
    if (hc == 1) w->touch[w->ntouch++] = slot;
    const uint32_t *rc = w->rcs + (size_t)slot * w->R;
    for (Py_ssize_t q = 0; q < w->R; q++) w->match[q * w->order + j] += hc <= rc[q];
}

/* The hypothesis' n-grams looked up in tab_refs's table: matches[q * order + j] is, for reference
   q and order index j, the sum over n-grams of min(count in the hypothesis, count in q), as
   count_ref gives it (there each reference occurrence is counted while at most the hypothesis'
   count). */
static void count_hyp_refs(K *k) {
    memset(k->matches, 0, (size_t)k->nshared * (size_t)k->order * sizeof(int64_t));
    W w = w_load(k, k->matches);
    find_ngrams(k, &w, &k->h, hit_refs, 0);
    for (size_t u = 0; u < w.ntouch; u++) w.cnt[w.touch[u]].hc = 0;
}

/* The triples of the reference r (its matches in match) into out. */
static void triples(const K *k, const Seg *r, const int64_t *match, int64_t *out) {
    for (Py_ssize_t j = 0; j < k->order; j++) {
        int word = j >= k->co;
        Py_ssize_t n = word ? j - k->co + 1 : j + 1;
        Py_ssize_t lh = word ? k->h.nt : k->h.nch, lr = word ? r->nt : r->nch;
        int64_t nref = lr >= n ? lr - n + 1 : 0;
        out[3 * j] = nref > 0 && lh >= n ? lh - n + 1 : 0;
        out[3 * j + 1] = nref;
        out[3 * j + 2] = match[j];
    }
}

/* CHRF._compute_f_score, operation for operation. Never NaN: precision and recall are at
 * most 1 (or eps) and the factors are finite, so every quotient is finite. */
static double f_score(const K *k, const int64_t *st) {
    const double eps = 1e-16;
    double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    int64_t effective_order = 0;
    for (Py_ssize_t i = 0; i < k->order; i++) {
        int64_t n_hyp = st[3 * i], n_ref = st[3 * i + 1], n_match = st[3 * i + 2];
        double prec = n_hyp > 0 ? (double)n_match / (double)n_hyp : eps;
        double rec = n_ref > 0 ? (double)n_match / (double)n_ref : eps;
        double denom = k->factor * prec + rec;
        score += denom > 0 ? k->one_plus * prec * rec / denom : eps;
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            effective_order += 1;
        }
    }
    if (k->eps) return 100 * score / (double)k->order;
    if (effective_order == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= (double)effective_order;
        avg_rec /= (double)effective_order;
    }
    if (avg_prec + avg_rec != 0.0) {
        score = k->one_plus * avg_prec * avg_rec;
        score /= (k->factor * avg_prec) + avg_rec;
        return 100 * score;
    }
    return 0.0;
}

/* ----------------------------------------------------------------- the batch */

/* k->best, the row's statistics, into row `row` of out (per_row) or added to its one row. */
static int emit_best(const K *k, int64_t *out, Py_ssize_t row, int per_row) {
    Py_ssize_t W = 3 * k->order;
    if (per_row) {
        memcpy(out + row * W, k->best, (size_t)W * sizeof(int64_t));
        return ST_OK;
    }
    int overflow = 0;
    for (Py_ssize_t q = 0; q < W; q++) overflow |= __builtin_add_overflow(out[q], k->best[q], &out[q]);
    return overflow ? ST_OVERFLOW : ST_OK;
}

/* The orders and F-score factors of a call; -1 with ValueError if they cannot be used. */
static int check_options(Py_ssize_t co, Py_ssize_t wo, double factor, double one_plus) {
    if (co < 0 || wo < 0 || co > PY_SSIZE_T_MAX / 48 || wo > PY_SSIZE_T_MAX / 48 || co + wo < 1) {
        PyErr_SetString(PyExc_ValueError, "char_order and word_order must be >= 0 with a positive sum");
        return -1;
    }
    if (!(factor >= 0 && factor <= DBL_MAX && one_plus >= 1 && one_plus <= DBL_MAX)) {
        PyErr_SetString(PyExc_ValueError, "factor and one_plus_factor must be finite, >= 0 and >= 1");
        return -1;
    }
    return 0;
}

/* The options of a call (checked by check_options) into k. */
static void k_options(K *k, Py_ssize_t co, Py_ssize_t wo, int lowercase, int whitespace, int eps, double factor,
                      double one_plus) {
    k->co = co; k->wo = wo; k->order = co + wo;
    k->lowercase = lowercase; k->whitespace = whitespace; k->eps = eps;
    k->factor = factor; k->one_plus = one_plus;
}

/* The per-row buffers of a run: a reference's matches, its triples and the best reference's. A
   status. */
static int k_alloc(K *k) {
    Py_ssize_t W = 3 * k->order;
    k->match = (int64_t *)malloc((size_t)k->order * sizeof(int64_t));
    k->cur = (int64_t *)malloc((size_t)W * sizeof(int64_t));
    k->best = (int64_t *)malloc((size_t)W * sizeof(int64_t));
    return k->match && k->cur && k->best ? ST_OK : ST_NOMEM;
}

/* The buffers of a stats call, checked by k_stats (a stats_many call's references alone, its
   candidates being in Sys): n candidates (UTF-8 data, n+1 offsets inside it, validity bytes or
   NULL), m references in all (the same), the n+1 list offsets of each row's references, and out. */
typedef struct {
    const uint8_t *hdata, *rdata, *hval, *rval;
    const int64_t *hoff, *roff, *loff;
    Py_ssize_t n, m; /* candidates, flat references */
    int64_t *out;
    int per_row;
} Batch;

/* A reference's triples k->cur into k->best if its F score is strictly above *best_f (so the first
   of the best references is kept). */
static void keep_best(K *k, double *best_f) {
    double f = f_score(k, k->cur);
    if (f > *best_f) {
        *best_f = f;
        memcpy(k->best, k->cur, (size_t)(3 * k->order) * sizeof(int64_t));
    }
}

/* run's row `row`: the candidate prepared and its n-grams tabled, then each reference prepared and
   counted against them; the best reference's triples into k->best. A status. */
static int stats_row(K *k, const Batch *b, Py_ssize_t row) {
    int st;
    k->bad_row = row;
    k->bad_ref = -1;
    if (b->hval && !b->hval[row]) { k->bad_what = "candidate is null"; return ST_BAD; }
    int64_t a = b->hoff[row], e = b->hoff[row + 1];
    int64_t la = b->loff[row], lb = b->loff[row + 1];
    /* rows are visited in order, so a >= hoff[0] and la >= loff[0] already hold */
    if (e < a || e > b->hoff[b->n] || lb < la || lb > b->loff[b->n]) {
        k->bad_what = "offsets are not monotonic";
        return ST_BAD;
    }
    if ((st = prepare(k, &k->h, b->hdata + a, (Py_ssize_t)(e - a))) != ST_OK) return st;
    if (k->wo > 0 && (st = intern_tokens(k, &k->h, 1)) != ST_OK) return st;
    if ((st = tab_prepare(k)) != ST_OK) return st;
    count_hyp(k);
    double best_f = -1.0;
    Py_ssize_t nrefs = 0;
    int64_t last = lb - 1; /* the last reference that is not missing */
    while (last >= la && b->rval && !b->rval[last]) last--;
    for (int64_t j = la; j < lb; j++) {
        if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
        k->bad_ref = (Py_ssize_t)(j - la);
        int64_t ra = b->roff[j], rb = b->roff[j + 1];
        if (rb < ra || ra < b->roff[0] || rb > b->roff[b->m]) {
            k->bad_what = "offsets are not monotonic";
            return ST_BAD;
        }
        if ((st = prepare(k, &k->r, b->rdata + ra, (Py_ssize_t)(rb - ra))) != ST_OK) return st;
        if (k->wo > 0) lookup_tokens(k, &k->r);
        count_ref(k, &k->r, j == last);
        triples(k, &k->r, k->match, k->cur);
        keep_best(k, &best_f);
        nrefs++;
    }
    k->bad_ref = -1;
    tab_clear(k);
    if (nrefs == 0) { k->bad_what = "no reference (all references are missing)"; return ST_BAD; }
    return ST_OK;
}

/* stats: every row's statistics into b->out. A status; for ST_BAD and ST_OVERFLOW, k->bad_row,
   bad_ref and bad_what say where and why it stopped. */
static int run(K *k, const Batch *b) {
    int st = k_alloc(k);
    for (Py_ssize_t row = 0; row < b->n && st == ST_OK; row++)
        if ((st = stats_row(k, b, row)) == ST_OK) st = emit_best(k, b->out, row, b->per_row);
    return st;
}

/* run_many's row `row`: its references prepared (decoded, lowercased, split, hashed) into k->rs,
   their number into *pnrefs. A status. */
static int prepare_refs(K *k, const Batch *b, Py_ssize_t row, Py_ssize_t *pnrefs) {
    int st;
    int64_t la = b->loff[row], lb = b->loff[row + 1];
    if (lb < la || lb > b->loff[b->n]) { k->bad_what = "offsets are not monotonic"; return ST_BAD; }
    if (lb - la > k->rs_cap) {
        Py_ssize_t cap = (Py_ssize_t)(lb - la) * 2;
        Seg *p = (Seg *)realloc(k->rs, (size_t)cap * sizeof(Seg));
        if (!p) return ST_NOMEM;
        memset(p + k->rs_cap, 0, (size_t)(cap - k->rs_cap) * sizeof(Seg));
        k->rs = p;
        k->rs_cap = cap;
    }
    Py_ssize_t nrefs = 0;
    for (int64_t j = la; j < lb; j++) {
        if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
        k->bad_ref = (Py_ssize_t)(j - la);
        int64_t ra = b->roff[j], rb = b->roff[j + 1];
        if (rb < ra || ra < b->roff[0] || rb > b->roff[b->m]) {
            k->bad_what = "offsets are not monotonic";
            return ST_BAD;
        }
        if ((st = prepare(k, &k->rs[nrefs], b->rdata + ra, (Py_ssize_t)(rb - ra))) != ST_OK) return st;
        nrefs++;
    }
    k->bad_ref = -1;
    if (nrefs == 0) { k->bad_what = "no reference (all references are missing)"; return ST_BAD; }
    *pnrefs = nrefs;
    return ST_OK;
}

/* run_many: system y's candidate of row `row` against the row's references k->rs[0..nrefs), looked
   up in their table (shared: tab_refs built it) or, as run does, in a table of its own; the best
   reference's triples into k->best. A status. */
static int system_row(K *k, const Sys *y, Py_ssize_t row, Py_ssize_t n, Py_ssize_t nrefs, int shared) {
    int st;
    if (y->hval && !y->hval[row]) { k->bad_what = "candidate is null"; return ST_BAD; }
    int64_t a = y->hoff[row], e = y->hoff[row + 1];
    if (e < a || e > y->hoff[n]) { k->bad_what = "offsets are not monotonic"; return ST_BAD; }
    if ((st = prepare(k, &k->h, y->hdata + a, (Py_ssize_t)(e - a))) != ST_OK) return st;
    if (shared) {
        if ((st = check_hyp_size(k)) != ST_OK) return st; /* the limit run has */
        if (k->wo > 0) lookup_tokens(k, &k->h);
        count_hyp_refs(k);
    } else {
        if (k->wo > 0 && (st = intern_tokens(k, &k->h, 1)) != ST_OK) return st;
        if ((st = tab_prepare(k)) != ST_OK) return st;
        count_hyp(k);
    }
    double best_f = -1.0;
    for (Py_ssize_t q = 0; q < nrefs; q++) {
        const int64_t *match = k->matches + q * k->order;
        if (!shared) {
            if (k->wo > 0) lookup_tokens(k, &k->rs[q]);
            count_ref(k, &k->rs[q], q == nrefs - 1);
            match = k->match;
        }
        triples(k, &k->rs[q], match, k->cur);
        keep_best(k, &best_f);
    }
    if (!shared) tab_clear(k);
    return ST_OK;
}

/* run for several systems' candidates of the same references: each row's references are
   prepared once (prepare_refs), and their n-grams put in the table once, with their count in each
   reference; each candidate's n-grams are then looked up there (a row whose references have too
   many n-grams for one table is counted candidate by candidate, as run does). A status, as run's. */
static int run_many(K *k, const Batch *b, const Sys *sys, Py_ssize_t S) {
    int st = k_alloc(k);
    for (Py_ssize_t row = 0; row < b->n && st == ST_OK; row++) {
        Py_ssize_t nrefs = 0;
        k->bad_row = row;
        k->bad_ref = -1;
        if ((st = prepare_refs(k, b, row, &nrefs)) != ST_OK) break;
        /* the references' n-grams in the table once for every candidate, unless too many */
        if (k->wo > 0 && (st = intern_tokens(k, k->rs, nrefs)) != ST_OK) break;
        if ((st = tab_refs(k, nrefs)) == ST_NOMEM) break;
        int shared = st == ST_OK;
        st = GROW(k->matches, k->matches_cap, (size_t)nrefs * (size_t)k->order) < 0 ? ST_NOMEM : ST_OK;
        for (Py_ssize_t s = 0; s < S && st == ST_OK; s++)
            if ((st = system_row(k, &sys[s], row, b->n, nrefs, shared)) == ST_OK)
                st = emit_best(k, sys[s].out, row, b->per_row);
        if (shared) tab_clear(k);
    }
    return st;
}

PyDoc_STRVAR(stats_doc,
"stats(hyp_data, hyp_offsets, hyp_valid, ref_data, ref_offsets, ref_valid, list_offsets,\n"
"      char_order, word_order, factor, one_plus_factor, eps_smoothing, lowercase, whitespace,\n"
"      out, per_row)\n"
"\n"
"Fill `out` (int64, n*3*(char_order+word_order) when per_row, else 3*(char_order+word_order),\n"
"added to) with sacrebleu's chrF statistics. Offsets are int64 (n+1 / m+1 / n+1 values), valid\n"
"buffers one byte per value (or None: all valid). factor and one_plus_factor are\n"
"float(beta ** 2) and float(1 + beta ** 2). Raises ValueError(row, ref_index or -1, reason)\n"
"for a bad row and OverflowError if a sum added to `out` would exceed int64.");

static PyObject *k_stats(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_hd, *o_ho, *o_hv, *o_rd, *o_ro, *o_rv, *o_lo, *o_out;
    Py_ssize_t co, wo;
    double factor, one_plus;
    int eps, lowercase, whitespace, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOOOnnddpppOp", &o_hd, &o_ho, &o_hv, &o_rd, &o_ro, &o_rv, &o_lo, &co, &wo,
                          &factor, &one_plus, &eps, &lowercase, &whitespace, &o_out, &per_row))
        return NULL;
    if (check_options(co, wo, factor, one_plus) < 0) return NULL;
    View hd, ho, hv, rd, ro, rv, lo, out;
    View *all[] = {&hd, &ho, &hv, &rd, &ro, &rv, &lo, &out};
    for (int i = 0; i < 8; i++) all[i]->held = 0;
    PyObject *result = NULL;
    K k;
    memset(&k, 0, sizeof(k));
    if (get_view(o_hd, &hd, 0) < 0 || get_view(o_ho, &ho, 0) < 0 || get_view(o_hv, &hv, 0) < 0 ||
        get_view(o_rd, &rd, 0) < 0 || get_view(o_ro, &ro, 0) < 0 || get_view(o_rv, &rv, 0) < 0 ||
        get_view(o_lo, &lo, 0) < 0 || get_view(o_out, &out, 1) < 0)
        goto done;
    if (!hd.held || !ho.held || !rd.held || !ro.held || !lo.held || !out.held) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        goto done;
    }
    Py_ssize_t n, m, W = 3 * (co + wo);
    if (batch_shape(&ho, &ro, &lo, &hv, &rv, &out, per_row, W, &n, &m) < 0) goto done;
    Batch b;
    b.hdata = (const uint8_t *)hd.view.buf; b.rdata = (const uint8_t *)rd.view.buf;
    b.hoff = (const int64_t *)ho.view.buf; b.roff = (const int64_t *)ro.view.buf;
    b.loff = (const int64_t *)lo.view.buf;
    b.hval = hv.held ? (const uint8_t *)hv.view.buf : NULL;
    b.rval = rv.held ? (const uint8_t *)rv.view.buf : NULL;
    b.n = n; b.m = m; b.out = (int64_t *)out.view.buf; b.per_row = per_row;
    if (b.hoff[0] < 0 || b.hoff[n] > hd.view.len || b.roff[0] < 0 || b.roff[m] > rd.view.len ||
        b.loff[0] < 0 || b.loff[n] > m) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
        goto done;
    }
    k_options(&k, co, wo, lowercase, whitespace, eps, factor, one_plus);

    k.ts = PyEval_SaveThread();
    int st = run(&k, &b);
    PyEval_RestoreThread(k.ts);

    result = status_result(st, "chrF", k.bad_row, k.bad_ref, k.bad_what);
done:
    k_free(&k);
    for (int i = 0; i < 8; i++) rel_view(all[i]);
    return result;
}

PyDoc_STRVAR(stats_many_doc,
"stats_many(systems, ref_data, ref_offsets, ref_valid, list_offsets, char_order, word_order,\n"
"           factor, one_plus_factor, eps_smoothing, lowercase, whitespace, per_row)\n"
"\n"
"As stats, for several candidates of the same references (the systems of one test set): each\n"
"row's references are prepared once, then counted against every system's candidate. `systems`\n"
"is a sequence of (hyp_data, hyp_offsets, hyp_valid, out) tuples with as many rows as\n"
"list_offsets; each `out` is filled (added to) as stats fills its one. The errors are stats's,\n"
"for the first bad row met (a row's references before its candidates, systems in order).");

static PyObject *k_stats_many(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_sys, *o_rd, *o_ro, *o_rv, *o_lo;
    Py_ssize_t co, wo;
    double factor, one_plus;
    int eps, lowercase, whitespace, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOnnddpppp", &o_sys, &o_rd, &o_ro, &o_rv, &o_lo, &co, &wo,
                          &factor, &one_plus, &eps, &lowercase, &whitespace, &per_row))
        return NULL;
    if (check_options(co, wo, factor, one_plus) < 0) return NULL;
    PyObject *seq = PySequence_Fast(o_sys, "systems must be a sequence of (data, offsets, valid, out) tuples");
    if (!seq) return NULL;
    Py_ssize_t S = PySequence_Fast_GET_SIZE(seq);
    View rd, ro, rv, lo;
    View *shared[] = {&rd, &ro, &rv, &lo};
    for (int i = 0; i < 4; i++) shared[i]->held = 0;
    View *views = (View *)calloc((size_t)(S > 0 ? S : 1) * 4, sizeof(View)); /* hd, ho, hv, out per system */
    Sys *sys = (Sys *)calloc((size_t)(S > 0 ? S : 1), sizeof(Sys));
    PyObject *result = NULL;
    K k;
    memset(&k, 0, sizeof(k));
    if (!views || !sys) { PyErr_NoMemory(); goto done; }
    if (get_view(o_rd, &rd, 0) < 0 || get_view(o_ro, &ro, 0) < 0 || get_view(o_rv, &rv, 0) < 0 ||
        get_view(o_lo, &lo, 0) < 0)
        goto done;
    if (!rd.held || !ro.held || !lo.held) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        goto done;
    }
    Py_ssize_t n = 0, m = 0;
    if (get_systems(seq, views, sys, &ro, &lo, &rv, per_row, 3 * (co + wo), &n, &m) < 0) goto done;
    if (S == 0) { Py_INCREF(Py_None); result = Py_None; goto done; }
    Batch b;
    memset(&b, 0, sizeof(b));
    b.rdata = (const uint8_t *)rd.view.buf;
    b.roff = (const int64_t *)ro.view.buf;
    b.loff = (const int64_t *)lo.view.buf;
    b.rval = rv.held ? (const uint8_t *)rv.view.buf : NULL;
    b.n = n; b.m = m; b.per_row = per_row;
    if (b.roff[0] < 0 || b.roff[m] > rd.view.len || b.loff[0] < 0 || b.loff[n] > m) {
        PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
        goto done;
    }
    k_options(&k, co, wo, lowercase, whitespace, eps, factor, one_plus);

    k.ts = PyEval_SaveThread();
    int st = run_many(&k, &b, sys, S);
    PyEval_RestoreThread(k.ts);

    result = status_result(st, "chrF", k.bad_row, k.bad_ref, k.bad_what);
done:
    k_free(&k);
    for (int i = 0; i < 4; i++) rel_view(shared[i]);
    if (views)
        for (Py_ssize_t i = 0; i < 4 * S; i++) rel_view(views + i);
    free(views);
    free(sys);
    Py_DECREF(seq);
    return result;
}

PyDoc_STRVAR(f_score_doc,
"f_score(stats, factor, one_plus_factor, eps_smoothing)\n"
"\n"
"The F score the kernel ranks references by, for a sequence of 3 * order ints (the same layout\n"
"as a statistics row); factor and one_plus_factor are float(beta ** 2) and float(1 + beta ** 2).\n"
"Bit for bit CHRF._compute_f_score; exposed so that this can be tested directly.");

static PyObject *k_f_score(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_stats;
    K k;
    memset(&k, 0, sizeof(k));
    if (!PyArg_ParseTuple(args, "Oddp", &o_stats, &k.factor, &k.one_plus, &k.eps)) return NULL;
    PyObject *seq = PySequence_Fast(o_stats, "stats must be a sequence of ints");
    if (!seq) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    PyObject *result = NULL;
    int64_t *st = NULL;
    if (len < 3 || len % 3) {
        PyErr_SetString(PyExc_ValueError, "stats must hold 3 * order ints, order >= 1");
        goto done;
    }
    if (!(st = (int64_t *)malloc((size_t)len * sizeof(int64_t)))) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < len; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) goto done;
        if (v < 0 || v >= (1LL << 53)) {
            PyErr_SetString(PyExc_ValueError, "stats must be ints in [0, 2**53)");
            goto done;
        }
        st[i] = v;
    }
    k.order = len / 3;
    result = PyFloat_FromDouble(f_score(&k, st));
done:
    free(st);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef methods[] = {
    {"stats", k_stats, METH_VARARGS, stats_doc},
    {"stats_many", k_stats_many, METH_VARARGS, stats_many_doc},
    {"f_score", k_f_score, METH_VARARGS, f_score_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core._chrf", "Batch chrF/chrF++ statistics kernel.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__chrf(void) {
    const char *p = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    for (; *p; p++) punct_bits[(uint8_t)*p >> 6] |= 1ULL << ((uint8_t)*p & 63);
    for (uint32_t c = 0; c < 0x10000; c++)
        space_tab[c] = is_space(c) ? 1 : 0;
    if (!lower_name && !(lower_name = PyUnicode_InternFromString("lower"))) return NULL;
    return PyModule_Create(&module);
}
