/*
 * bleu_core._ter -- batch TER statistics.
 *
 * One call turns a batch of candidates and their references (Arrow-style buffers: UTF-8 data,
 * int64 offsets, validity bytes) into beambleu's TER statistics, one row per pair or their sum:
 * [edits, insertions, deletions, substitutions, shifts, ref_len_1 .. ref_len_64] (see
 * bleu_core/metrics/ter/metric.py for the layout and the definition).
 *
 * Every step mirrors sacrebleu 2.6.0 (metrics/ter.py, metrics/lib_ter.py, tokenizers/
 * tokenizer_ter.py):
 *   - words: str.lower (ASCII text takes a byte fast path, identical for ASCII) unless
 *     case-sensitive; with no_punct the code points .,?:;!"() (and with asian the CJK and
 *     full-width punctuation) are removed; then the str.split() tokens (Py_UNICODE_ISSPACE).
 *     Tercom's `normalized` rules are applied in Python before the call (bleu_core/ter_batch.py);
 *   - words are compared by id: the candidate's distinct words are numbered, a reference word is
 *     the id of the equal candidate word or -1 (only candidate/reference comparisons are made);
 *   - the banded edit distance: row i (i candidate words) is computed in columns
 *     [max(0, d - w), min(m + 1, d + w)) with d = floor(i * (m / n)) in doubles (built with
 *     -ffp-contract=off, so the products are Python's), the last row in full, w = 25 or
 *     ceil(m / n / 2 + 25) when 25 < m / n / 2; cells outside are INF and stay INF (a step from
 *     INF is never strictly below INF); a cell takes the first strictly smaller of diagonal,
 *     deletion (a candidate word), insertion (a reference word); column 0 is always a deletion;
 *   - the shift search: sacrebleu's candidates in its order, its filters, its targets and its
 *     ranking (gain, length, -start, -target), the 1,000-candidate cap counted across rounds and
 *     checked after each block, before a round's gain is used.
 *
 * Exact shortcuts that keep sacrebleu's choices (its prefix cache is the first of them):
 *   - a shifted candidate equals the current one before min(start, new position), so its rows up
 *     to there are the current rows (rows depend only on the words consumed and the band, and
 *     the band only on the length);
 *   - after the last changed word, once a row of the shifted candidate is the current row plus a
 *     constant c in every band cell (all finite), every later row is too (same words, same band,
 *     same finite predecessors), so its distance is the current one plus c;
 *   - a candidate only matters if it would become the round's best and its gain is at least 1
 *     (a round whose best gain is <= 0 applies nothing, whatever the best is): its distance must
 *     be at most a limit, and the candidate is dropped as soon as a lower bound exceeds it
 *     (|n - m|, then per row min over j of cost + |(m - j) - (n - i)|: every path crosses
 *     each row, and a cell's cost grows by at least the difference of the remaining lengths).
 *     Dropped candidates are still counted towards the cap.
 *
 * The GIL is released for the whole batch and taken back only to call str.lower on non-ASCII
 * text. Buffers are reused across the batch.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buffers.h" /* View, get_view, rel_view, batch_shape: shared with the other kernels */
#include "_text.h"    /* u8dec, is_space */
#include "_cps.h"     /* grow/GROW, decode_cps, lower_cps, hash_cps, same_cps: shared with _chrf.c */
#include "_status.h"  /* ST_*, status_result: shared with _bleu.c and _chrf.c */

#define BEAM_WIDTH 25
#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define MAX_SHIFT_CANDIDATES 1000
#define MAX_REFS 64 /* = bleu_core.metrics.ter.reference.MAX_REFS */
#define N_EDITS 5
#define WIDTH (N_EDITS + MAX_REFS)
#define STR_(x) #x
#define STR(x) STR_(x)
/* the cost of a cell outside the band; real costs are at most n + m < INF */
#define INF 0x3FFFFFFF
/* words per segment: keeps every cost, and INF + 1, in int32 */
#define MAX_WORDS (1 << 28)
/* band cells of one pair's matrix */
#define MAX_CELLS ((size_t)1 << 31)

enum { OP_NOP = 0, OP_SUB = 1, OP_DEL = 2, OP_INS = 3, OP_UNDEF = 4 };

static PyObject *lower_name; /* interned "lower" */

/* str.split()'s whitespace test, with the Basic Multilingual Plane cached in a bitmap */
static uint8_t space_bmp[0x10000 / 8];
/* code points no_punct removes: ASCII (.,?:;!"()) and, with asian, the CJK / full-width sets */
static uint64_t punct_ascii[2];

static inline int is_space_fast(uint32_t c) {
    return c < 0x10000 ? (space_bmp[c >> 3] >> (c & 7)) & 1 : is_space(c);
}

static inline int is_punct(uint32_t c) { return c < 128 && ((punct_ascii[c >> 6] >> (c & 63)) & 1); }

/* sacrebleu's ASIAN_PUNCT and FULL_WIDTH_PUNCT */
static inline int is_asian_punct(uint32_t c) {
    return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
           (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB || c == 0xFF0E || c == 0xFF0C || c == 0xFF1F ||
           c == 0xFF1A || c == 0xFF1B || c == 0xFF01 || c == 0xFF02 || c == 0xFF08 || c == 0xFF09;
}

/* ------------------------------------------------------------------ buffers */

/* One segment's words. */
typedef struct {
    uint32_t *cp; size_t cp_cap; Py_ssize_t ncp;  /* code points (lowercased, punctuation removed) */
    uint32_t *ts, *tl; size_t ts_cap, tl_cap;     /* word spans in cp */
    uint64_t *th; size_t th_cap;                  /* their hashes */
    int32_t *id; size_t id_cap;                   /* word ids */
    Py_ssize_t nt;
} Seg;

typedef struct { uint64_t h; uint32_t start, len; int32_t id; } Tok;

/* The matrix and the search state of one candidate/reference pair. */
typedef struct {
    int32_t n, m;
    const int32_t *ref;
    int32_t *w; size_t w_cap;        /* the current candidate (after the shifts applied) */
    int32_t *cw; size_t cw_cap;      /* a shifted candidate being tried */
    int32_t *blo, *bhi; size_t blo_cap, bhi_cap;  /* band of each row: [blo, bhi) */
    size_t *boff; size_t boff_cap;   /* first cell of each row in cost/op */
    int32_t *cost; size_t cost_cap;  /* the current candidate's band cells */
    uint8_t *op; size_t op_cap;
    int32_t *ra, *rb; size_t ra_cap, rb_cap;  /* full-width rows of a tried candidate */
    uint8_t *tr; size_t tr_cap;      /* trace, last operation first */
    int32_t *align; size_t al_cap;   /* ref position -> candidate position */
    int32_t *herr, *rerr; size_t he_cap, re_cap;  /* prefix sums of the error flags */
} Pair;

typedef struct {
    int lowercase, no_punct, asian;
    PyThreadState *ts;
    Seg h, r;
    Tok *tt; size_t tt_cap, tt_mask;
    Pair p;
    Py_ssize_t bad_row, bad_ref;
    const char *bad_what;
} K;

static void seg_free(Seg *g) { free(g->cp); free(g->ts); free(g->tl); free(g->th); free(g->id); }

static void k_free(K *k) {
    seg_free(&k->h); seg_free(&k->r);
    free(k->tt);
    Pair *p = &k->p;
    free(p->w); free(p->cw); free(p->blo); free(p->bhi); free(p->boff); free(p->cost); free(p->op);
    free(p->ra); free(p->rb); free(p->tr); free(p->align); free(p->herr); free(p->rerr);
}

/* ------------------------------------------------------------------ words */

/* Replace g->cp by str.lower() of it. Takes the GIL for the call. */
static int python_lower(K *k, Seg *g) {
    return lower_cps(&k->ts, lower_name, &g->cp, &g->cp_cap, &g->ncp) < 0 ? ST_PYERR : ST_OK;
}

/* Decode s into g->cp, validating it; *ascii tells whether it was all ASCII. */
static int decode(K *k, Seg *g, const uint8_t *s, Py_ssize_t n, int *ascii) {
    if (decode_cps(s, n, g->cp, &g->ncp, ascii) < 0) {
        k->bad_what = "invalid UTF-8";
        return ST_BAD;
    }
    return ST_OK;
}


/* Decode, lowercase, remove punctuation and split one segment into its words. */
static int words(K *k, Seg *g, const uint8_t *s, Py_ssize_t n) {
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
    uint32_t *cp = g->cp;
    Py_ssize_t m = g->ncp;
    if (k->no_punct) {
        Py_ssize_t q = 0;
        for (Py_ssize_t j = 0; j < m; j++) {
            uint32_t c = cp[j];
            cp[q] = c;
            q += !(is_punct(c) || (k->asian && is_asian_punct(c)));
        }
        m = g->ncp = q;
    }
    Py_ssize_t cap = m / 2 + 1;
    if (GROW(g->ts, g->ts_cap, cap) < 0 || GROW(g->tl, g->tl_cap, cap) < 0 || GROW(g->th, g->th_cap, cap) < 0 ||
        GROW(g->id, g->id_cap, cap) < 0)
        return ST_NOMEM;
    Py_ssize_t nt = 0, j = 0;
    while (j < m) {
        while (j < m && is_space_fast(cp[j])) j++;
        if (j == m) break;
        Py_ssize_t a = j;
        while (j < m && !is_space_fast(cp[j])) j++;
        g->ts[nt] = (uint32_t)a;
        g->tl[nt] = (uint32_t)(j - a);
        g->th[nt] = hash_cps(cp + a, (uint32_t)(j - a));
        nt++;
    }
    if (nt > MAX_WORDS) { k->bad_what = "text too long (over 2**28 words in one segment)"; return ST_BAD; }
    g->nt = nt;
    return ST_OK;
}

static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* Number the candidate's distinct words (ids 0..). */
static int intern_hyp(K *k) {
    Seg *g = &k->h;
    size_t cap = pow2_at_least(2 * (size_t)g->nt + 2);
    if (GROW(k->tt, k->tt_cap, cap) < 0) return ST_NOMEM;
    k->tt_mask = cap - 1;
    for (size_t i = 0; i < cap; i++) k->tt[i].id = -1;
    int32_t next = 0;
    for (Py_ssize_t j = 0; j < g->nt; j++) {
        uint32_t l = g->tl[j];
        uint64_t h = g->th[j];
        for (size_t pos = (size_t)h & k->tt_mask;; pos = (pos + 1) & k->tt_mask) {
            Tok *e = &k->tt[pos];
            if (e->id < 0) {
                e->h = h; e->start = g->ts[j]; e->len = l; e->id = next++;
                g->id[j] = e->id;
                break;
            }
            if (e->h == h && e->len == l && same_cps(g->cp + e->start, g->cp + g->ts[j], l)) {
                g->id[j] = e->id;
                break;
            }
        }
    }
    return ST_OK;
}

/* Ids of the reference words: the candidate's id, or -1 for a word the candidate lacks. */
static void lookup_ref(K *k) {
    Seg *g = &k->r;
    for (Py_ssize_t j = 0; j < g->nt; j++) {
        uint32_t l = g->tl[j];
        uint64_t h = g->th[j];
        int32_t id = -1;
        for (size_t pos = (size_t)h & k->tt_mask;; pos = (pos + 1) & k->tt_mask) {
            Tok *e = &k->tt[pos];
            if (e->id < 0) break;
            if (e->h == h && e->len == l && same_cps(k->h.cp + e->start, g->cp + g->ts[j], l)) {
                id = e->id;
                break;
            }
        }
        g->id[j] = id;
    }
}

/* ------------------------------------------------------------------ the banded distance */

static inline int32_t min32(int32_t a, int32_t b) { return a < b ? a : b; }

/* The bands of rows 0..n and the buffers of a pair. */
static int pair_setup(Pair *p, const int32_t *hyp, int32_t n, const int32_t *ref, int32_t m, const char **bad) {
    p->n = n; p->m = m; p->ref = ref;
    if (GROW(p->w, p->w_cap, n + 1) < 0 || GROW(p->cw, p->cw_cap, n + 1) < 0 || GROW(p->blo, p->blo_cap, n + 1) < 0 ||
        GROW(p->bhi, p->bhi_cap, n + 1) < 0 || GROW(p->boff, p->boff_cap, n + 2) < 0 ||
        GROW(p->ra, p->ra_cap, m + 2) < 0 || GROW(p->rb, p->rb_cap, m + 2) < 0 ||
        GROW(p->tr, p->tr_cap, (size_t)n + m + 1) < 0 || GROW(p->align, p->al_cap, m + 1) < 0 ||
        GROW(p->herr, p->he_cap, n + 1) < 0 || GROW(p->rerr, p->re_cap, m + 1) < 0)
        return ST_NOMEM;
    memcpy(p->w, hyp, (size_t)n * sizeof(int32_t));
    memcpy(p->cw, hyp, (size_t)n * sizeof(int32_t));
    double ratio = n ? (double)m / (double)n : 1.0;
    int64_t width = BEAM_WIDTH < ratio / 2 ? (int64_t)ceil(ratio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
    size_t cells = (size_t)m + 1;
    p->blo[0] = 0; p->bhi[0] = m + 1; p->boff[0] = 0; p->boff[1] = cells;
    for (int32_t i = 1; i <= n; i++) {
        int64_t diag = (int64_t)floor((double)i * ratio);
        int64_t lo = diag - width < 0 ? 0 : diag - width;
        int64_t hi = i == n ? (int64_t)m + 1 : (diag + width < (int64_t)m + 1 ? diag + width : (int64_t)m + 1);
        if (lo > m + 1) lo = m + 1;
        if (hi < lo) hi = lo;
        p->blo[i] = (int32_t)lo;
        p->bhi[i] = (int32_t)hi;
        cells += (size_t)(hi - lo);
        if (cells > MAX_CELLS) {
            *bad = "segments too long (the edit distance band exceeds 2**31 cells)";
            return ST_BAD;
        }
        p->boff[i + 1] = cells;
    }
    if (GROW(p->cost, p->cost_cap, cells) < 0 || GROW(p->op, p->op_cap, cells) < 0) return ST_NOMEM;
    for (int32_t j = 0; j <= m; j++) { p->cost[j] = j; p->op[j] = OP_INS; }
    return ST_OK;
}

/* Rows q+1..n of the current candidate, with their operations. */
static void base_rows(Pair *p, int32_t q) {
    const int32_t *ref = p->ref;
    for (int32_t i = q + 1; i <= p->n; i++) {
        int32_t lo = p->blo[i], hi = p->bhi[i], plo = p->blo[i - 1], phi = p->bhi[i - 1];
        const int32_t *P = p->cost + p->boff[i - 1];
        int32_t *C = p->cost + p->boff[i];
        uint8_t *O = p->op + p->boff[i];
        int32_t wi = p->w[i - 1];
        for (int32_t j = lo; j < hi; j++) {
            if (j == 0) { C[0] = P[0] + 1; O[0] = OP_DEL; continue; }
            int32_t best = INF, v;
            uint8_t o = OP_UNDEF;
            if (j - 1 >= plo && j - 1 < phi) {
                int same = wi == ref[j - 1];
                v = P[j - 1 - plo] + !same;
                if (v < best) { best = v; o = same ? OP_NOP : OP_SUB; }
            }
            if (j >= plo && j < phi && (v = P[j - plo] + 1) < best) { best = v; o = OP_DEL; }
            if (j - 1 >= lo && (v = C[j - 1 - lo] + 1) < best) { best = v; o = OP_INS; }
            C[j - lo] = best;
            O[j - lo] = o;
        }
    }
}

static inline int32_t base_cost(const Pair *p) { return p->cost[p->boff[p->n] + (p->m - p->blo[p->n])]; }

/* Trace the current alignment back; count its operations and fill align and the error sums. */
static int trace(Pair *p, int64_t *ins, int64_t *del, int64_t *sub) {
    int32_t i = p->n, j = p->m;
    size_t t = 0;
    while (i > 0 || j > 0) {
        if (j < p->blo[i] || j >= p->bhi[i]) return -1;
        uint8_t o = p->op[p->boff[i] + (j - p->blo[i])];
        p->tr[t++] = o;
        if (o == OP_INS) j--;
        else if (o == OP_DEL) i--;
        else if (o == OP_NOP || o == OP_SUB) { i--; j--; }
        else return -1;
    }
    int32_t h = -1, r = 0;
    int64_t ni = 0, nd = 0, ns = 0;
    p->herr[0] = 0;
    p->rerr[0] = 0;
    while (t > 0) {
        uint8_t o = p->tr[--t];
        if (o != OP_INS) { h++; p->herr[h + 1] = p->herr[h] + (o != OP_NOP); }
        if (o != OP_DEL) { p->align[r] = h; p->rerr[r + 1] = p->rerr[r] + (o != OP_NOP); r++; }
        ni += o == OP_INS; nd += o == OP_DEL; ns += o == OP_SUB;
    }
    *ins = ni; *del = nd; *sub = ns;
    return 0;
}

/* The distance of the tried candidate p->cw, which equals the current one before word q and from
 * word e on, or any value above `limit` once it is certain to exceed it. */
static int32_t tried_cost(Pair *p, int32_t q, int32_t e, int32_t pre, int32_t limit) {
    const int32_t n = p->n, m = p->m, *ref = p->ref, *w = p->cw;
    int32_t *A = p->ra, *B = p->rb;
    for (int32_t j = 0; j <= m + 1; j++) A[j] = B[j] = INF;
    memcpy(A + p->blo[q], p->cost + p->boff[q], (size_t)(p->bhi[q] - p->blo[q]) * sizeof(int32_t));
    for (int32_t i = q + 1; i <= n; i++) {
        int32_t lo = p->blo[i], hi = p->bhi[i], wi = w[i - 1];
        const int32_t *P = A;
        int32_t *C = B;
        int32_t j = lo, lb = INF, rest = n - i;
        if (lo > 0) C[lo - 1] = INF;
        if (j == 0) {
            C[0] = P[0] + 1;
            lb = C[0] + abs(m - rest);
            j = 1;
        }
        for (; j < hi; j++) {
            int32_t v = min32(min32(P[j - 1] + (wi != ref[j - 1]), P[j] + 1), min32(C[j - 1] + 1, INF));
            C[j] = v;
            lb = min32(lb, v + abs(m - j - rest));
        }
        int32_t next_hi = i < n ? p->bhi[i + 1] : hi;
        for (int32_t x = hi; x < next_hi && x <= m + 1; x++) C[x] = INF;
        if (lb > limit) return limit + 1;
        if (i >= e && i < n) {
            const int32_t *R = p->cost + p->boff[i];
            int32_t c = C[lo] - R[0];
            int same = 1;
            for (int32_t x = lo; x < hi && same; x++) same = C[x] < INF && R[x - lo] < INF && C[x] - R[x - lo] == c;
            if (same) return pre + c;
        }
        int32_t *t = A;
        A = B;
        B = t;
    }
    return A[m];
}

/* Move the block cw[start..start+len) of the current candidate so that it begins at `at` of the
 * result (sacrebleu's _perform_shift, with `at` its position in the shifted words). */
static void place_block(Pair *p, int32_t start, int32_t len, int32_t at) {
    const int32_t *w = p->w;
    int32_t *c = p->cw;
    if (at < start) {
        memcpy(c + at, w + start, (size_t)len * sizeof(int32_t));
        memcpy(c + at + len, w + at, (size_t)(start - at) * sizeof(int32_t));
    } else if (at > start) {
        memcpy(c + start, w + start + len, (size_t)(at - start) * sizeof(int32_t));
        memcpy(c + at, w + start, (size_t)len * sizeof(int32_t));
    }
}

typedef struct { int32_t gain, len, start, target, at; int valid; } Shift;

/* Whether (len, -start, -target) ranks above the best's. */
static inline int ranks_above(const Shift *b, int32_t len, int32_t start, int32_t target) {
    if (len != b->len) return len > b->len;
    if (start != b->start) return start < b->start;
    return target < b->target;
}

/* One round of the search over the current candidate (its rows and alignment are current):
 * the best shift with a gain of at least 1, if any. */
static void search(Pair *p, int32_t *checked, Shift *best) {
    const int32_t n = p->n, m = p->m, *w = p->w, *ref = p->ref, *align = p->align;
    const int32_t pre = base_cost(p), floor_cost = abs(n - m);
    best->valid = 0;
    for (int32_t h = 0; h < n; h++) {
        int32_t rlo = h - MAX_SHIFT_DIST < 0 ? 0 : h - MAX_SHIFT_DIST;
        int32_t rhi = h + MAX_SHIFT_DIST + 1 < m ? h + MAX_SHIFT_DIST + 1 : m;
        for (int32_t r = rlo; r < rhi; r++) {
            for (int32_t len = 1; len <= MAX_SHIFT_SIZE && h + len <= n && r + len <= m &&
                                  w[h + len - 1] == ref[r + len - 1]; len++) {
                if (p->herr[h + len] == p->herr[h] || p->rerr[r + len] == p->rerr[r]) continue;
                if (h <= align[r] && align[r] < h + len) continue;
                int32_t last = -1;
                for (int32_t k = r - 1; k < r + len; k++) {
                    int32_t target = k < 0 ? 0 : align[k] + 1;
                    if (target == last) continue;
                    last = target;
                    ++*checked;
                    int32_t at = target > h + len ? target - len : (target < n - len ? target : n - len);
                    int32_t need = 1;
                    if (best->valid) need = ranks_above(best, len, h, target) ? best->gain : best->gain + 1;
                    if (need < 1) need = 1;
                    int32_t limit = pre - need;
                    if (limit < floor_cost || at == h) continue; /* cannot matter (at == h: nothing moves) */
                    int32_t q = at < h ? at : h, e = (at > h ? at : h) + len;
                    place_block(p, h, len, at);
                    int32_t cost = tried_cost(p, q, e, pre, limit);
                    memcpy(p->cw + q, w + q, (size_t)(e - q) * sizeof(int32_t));
                    if (cost <= limit) {
                        best->gain = pre - cost; best->len = len; best->start = h;
                        best->target = target; best->at = at; best->valid = 1;
                    }
                }
                if (*checked >= MAX_SHIFT_CANDIDATES) return;
            }
        }
    }
}

/* TER's edits between a candidate and a reference (word ids): res = [edits, ins, del, sub, shifts]. */
static int ter_pair(K *k, const int32_t *hyp, int32_t n, const int32_t *ref, int32_t m, int64_t *res) {
    if (m == 0) {
        res[0] = n; res[1] = 0; res[2] = n; res[3] = 0; res[4] = 0;
        return ST_OK;
    }
    Pair *p = &k->p;
    int st = pair_setup(p, hyp, n, ref, m, &k->bad_what);
    if (st != ST_OK) return st;
    base_rows(p, 0);
    int32_t checked = 0, shifts = 0;
    int64_t ins, del, sub;
    for (;;) {
        if (trace(p, &ins, &del, &sub) < 0) {
            k->bad_what = "internal error: the alignment left the band";
            return ST_BAD;
        }
        Shift best;
        search(p, &checked, &best);
        if (checked >= MAX_SHIFT_CANDIDATES || !best.valid) break;
        place_block(p, best.start, best.len, best.at);
        int32_t q = best.at < best.start ? best.at : best.start;
        memcpy(p->w, p->cw, (size_t)n * sizeof(int32_t));
        shifts++;
        base_rows(p, q);
    }
    res[0] = ins + del + sub + shifts;
    res[1] = ins; res[2] = del; res[3] = sub; res[4] = shifts;
    return ST_OK;
}

/* ----------------------------------------------------------------- the batch */

typedef struct {
    const uint8_t *hdata, *rdata, *hval, *rval;
    const int64_t *hoff, *roff, *loff;
    Py_ssize_t n, m;
    int64_t *out;
    int per_row;
} Batch;

static int run(K *k, const Batch *b) {
    int64_t row_out[WIDTH], cur[N_EDITS];
    for (Py_ssize_t row = 0; row < b->n; row++) {
        int st;
        k->bad_row = row;
        k->bad_ref = -1;
        if (b->hval && !b->hval[row]) { k->bad_what = "candidate is null"; return ST_BAD; }
        int64_t a = b->hoff[row], e = b->hoff[row + 1];
        int64_t la = b->loff[row], lb = b->loff[row + 1];
        if (e < a || e > b->hoff[b->n] || lb < la || lb > b->loff[b->n]) {
            k->bad_what = "offsets are not monotonic";
            return ST_BAD;
        }
        if ((st = words(k, &k->h, b->hdata + a, (Py_ssize_t)(e - a))) != ST_OK) return st;
        if ((st = intern_hyp(k)) != ST_OK) return st;
        memset(row_out, 0, sizeof(row_out));
        int64_t ref_len = 0, best = -1;
        Py_ssize_t nrefs = 0;
        for (int64_t j = la; j < lb; j++) {
            if (b->rval && !b->rval[j]) continue; /* a missing reference (None) */
            k->bad_ref = (Py_ssize_t)(j - la);
            int64_t ra = b->roff[j], rb = b->roff[j + 1];
            if (rb < ra || ra < b->roff[0] || rb > b->roff[b->m]) {
                k->bad_what = "offsets are not monotonic";
                return ST_BAD;
            }
            if (++nrefs > MAX_REFS) {
                k->bad_what = "more than " STR(MAX_REFS) " references (TER's statistics hold at most "
                              STR(MAX_REFS) " per pair)";
                return ST_BAD;
            }
            if ((st = words(k, &k->r, b->rdata + ra, (Py_ssize_t)(rb - ra))) != ST_OK) return st;
            lookup_ref(k);
            if ((st = ter_pair(k, k->h.id, (int32_t)k->h.nt, k->r.id, (int32_t)k->r.nt, cur)) != ST_OK) return st;
            ref_len += k->r.nt;
            if (best < 0 || cur[0] < best) {
                best = cur[0];
                memcpy(row_out, cur, sizeof(cur));
            }
        }
        k->bad_ref = -1;
        if (nrefs == 0) { k->bad_what = "no reference (all references are missing)"; return ST_BAD; }
        row_out[N_EDITS + nrefs - 1] = ref_len;
        if (b->per_row) {
            memcpy(b->out + row * WIDTH, row_out, sizeof(row_out));
        } else {
            int overflow = 0;
            for (Py_ssize_t q = 0; q < WIDTH; q++)
                overflow |= __builtin_add_overflow(b->out[q], row_out[q], &b->out[q]);
            if (overflow) return ST_OVERFLOW;
        }
    }
    return ST_OK;
}

PyDoc_STRVAR(stats_doc,
"stats(hyp_data, hyp_offsets, hyp_valid, ref_data, ref_offsets, ref_valid, list_offsets,\n"
"      lowercase, no_punct, asian_punct, out, per_row)\n"
"\n"
"Fill `out` (int64, n*69 when per_row, else 69, added to) with beambleu's TER statistics of\n"
"words that are str.split() tokens after lowercasing (lowercase) and removing punctuation\n"
"(no_punct; asian_punct: CJK and full-width punctuation too). Offsets are int64 (n+1 / m+1 /\n"
"n+1 values), valid buffers one byte per value (or None: all valid). Raises\n"
"ValueError(row, ref_index or -1, reason) for a bad row and OverflowError if a sum added to\n"
"`out` would exceed int64.");

static PyObject *k_stats(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_hd, *o_ho, *o_hv, *o_rd, *o_ro, *o_rv, *o_lo, *o_out;
    int lowercase, no_punct, asian, per_row;
    if (!PyArg_ParseTuple(args, "OOOOOOOpppOp", &o_hd, &o_ho, &o_hv, &o_rd, &o_ro, &o_rv, &o_lo, &lowercase,
                          &no_punct, &asian, &o_out, &per_row))
        return NULL;
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
    Py_ssize_t n, m;
    if (batch_shape(&ho, &ro, &lo, &hv, &rv, &out, per_row, WIDTH, &n, &m) < 0) goto done;
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
    k.lowercase = lowercase; k.no_punct = no_punct; k.asian = asian;

    k.ts = PyEval_SaveThread();
    int st = run(&k, &b);
    PyEval_RestoreThread(k.ts);

    result = status_result(st, "TER", k.bad_row, k.bad_ref, k.bad_what);
done:
    k_free(&k);
    for (int i = 0; i < 8; i++) rel_view(all[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"stats", k_stats, METH_VARARGS, stats_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core._ter", "Batch TER statistics kernel.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ter(void) {
    for (const char *c = ".,?:;!\"()"; *c; c++) punct_ascii[(uint8_t)*c >> 6] |= 1ULL << ((uint8_t)*c & 63);
    for (uint32_t c = 0; c < 0x10000; c++)
        if (is_space(c)) space_bmp[c >> 3] |= (uint8_t)(1u << (c & 7));
    if (!lower_name && !(lower_name = PyUnicode_InternFromString("lower"))) return NULL;
    return PyModule_Create(&module);
}
