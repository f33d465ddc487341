/*
 * bleu_core._resample -- the Poisson bootstrap and the randomization test's swaps, for every metric.
 *
 * One call adds each row's statistics, times its weight in each replicate, into that replicate's
 * totals. A weight counts the thresholds at or below a counter-based 32-bit draw (half of a 64-bit
 * one: draw32): Poisson(1) with bleu_core.resampling.counter's thresholds (bootstrap_totals), a fair
 * coin with one threshold at 2**31 (the randomization test's swaps, swap_totals). A row is any
 * metric's int64 statistics vector: the kernel knows widths, never a metric.
 *
 * The entry point only parses and checks its arguments into a Boot (boot_check); run_bootstrap
 * bounds the totals, picks the checked or the unchecked loop by that bound and runs it, in plain
 * C without the GIL (after boot_values, the checks of the buffers' values, also without it), and
 * returns the row that overflowed, which the entry point turns into its OverflowError. The
 * unchecked loop draws sixteen replicates' weights at a time (draw16) and adds blocks of sixteen
 * rows with int16 products (pair_block, with AVX2) or of eight with precomputed multiples.
 *
 * poisson_level1, poisson_level2 and add_rows are the byte work and the sums of
 * bleu_core.items.bootstrap's blocks (see their section below); libm_each is the C library's log or
 * exp of many floats, for the replicates' scores (see its section).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "_buffers.h" /* View, get_view, rel_view: shared with _bleu.c and _chrf.c */

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27; x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

/* The golden-ratio step between a row's draws (splitmix64's increment). */
#define GOLDEN 0x9E3779B97F4A7C15ULL

/* Replicate b's 32-bit draw for the mixed row key k: draw j = b / 2 is x_j = mix64(k + (j + 1) * G);
 * replicate 2j takes its low 32 bits, replicate 2j + 1 its high 32 bits. */
static inline uint64_t draw32(uint64_t k, Py_ssize_t b) {
    const uint64_t x = mix64(k + (uint64_t)(b / 2 + 1) * GOLDEN);
    return b & 1 ? x >> 32 : x & 0xFFFFFFFFULL;
}

#if defined(__GNUC__) && !defined(__clang__)
/* GCC's vectorised width loop spills the weight loop's registers (~25% slower) */
#define NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#else
#define NO_VECTORIZE
#endif

/* A bootstrap call, its arguments checked (boot_check): n rows of width int64 statistics (all
 * non-negative) and their keys, K ascending thresholds, n_sets groupings of the rows (indices in
 * [0, n_groups)), and out, n_groups * n_boot * width non-negative int64 totals. */
typedef struct {
    const uint64_t *keys, *thr;
    uint64_t seed_key;
    const int64_t *groups, *stats;
    int64_t *out;
    Py_ssize_t n, K, n_sets, n_groups, width, n_boot;
} Boot;

/* The bootstrap loop (see run_bootstrap), inlined into boot_plain and boot_checked with
 * `checked` a constant. With `checked`, every product is checked with __builtin_mul_overflow
 * and every sum acc + p (both in [0, 2**63 - 1]) is computed in uint64, where it is exact
 * (< 2**64) and exceeds int64 exactly when its top bit is set; OR-ing the sums collects that
 * bit. Returns the first row whose sums overflowed, or -1. */
static inline __attribute__((always_inline)) Py_ssize_t boot_loop(const Boot *bt, const int checked) {
    const uint64_t *kp = bt->keys, *tp = bt->thr;
    const uint64_t seed_key = bt->seed_key;
    const int64_t *gp = bt->groups, *sp = bt->stats;
    int64_t *op = bt->out;
    const Py_ssize_t n = bt->n, K = bt->K, n_sets = bt->n_sets, width = bt->width, n_boot = bt->n_boot;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t k = mix64(kp[i] ^ seed_key);
        const int64_t *row = sp + i * width;
        uint64_t top = 0;
        int overflow = 0;
        for (Py_ssize_t b = 0; b < n_boot; b++) {
            const uint64_t x = draw32(k, b);
            int64_t w = 0;
            while (w < K && tp[w] <= x) w++;
            if (!w) continue;
            for (Py_ssize_t s = 0; s < n_sets; s++) {
                int64_t *acc = op + (gp[s * n + i] * n_boot + b) * width;
                for (Py_ssize_t l = 0; l < width; l++) {
                    if (!checked) {
                        acc[l] += w * row[l];
                    } else {
                        int64_t p;
                        overflow |= __builtin_mul_overflow(w, row[l], &p);
                        uint64_t v = (uint64_t)acc[l] + (uint64_t)p;
                        acc[l] = (int64_t)v;
                        top |= v;
                    }
                }
            }
        }
        if (checked && (overflow || top >> 63)) return i;
    }
    return -1;
}

static NO_VECTORIZE Py_ssize_t boot_plain(const Boot *bt) { return boot_loop(bt, 0); }
static NO_VECTORIZE Py_ssize_t boot_checked(const Boot *bt) { return boot_loop(bt, 1); }

/* Rows per block of boot_split_loop, and the weights its block tables hold (0 .. BLOCK_W - 1). */
#define BLOCK_ROWS 8
#define BLOCK_W 8

/* Whether rows i and j go to the same group in every grouping set. */
static inline int same_groups(const int64_t *gp, Py_ssize_t n, Py_ssize_t n_sets, Py_ssize_t i, Py_ssize_t j) {
    for (Py_ssize_t s = 0; s < n_sets; s++)
        if (gp[s * n + i] != gp[s * n + j]) return 0;
    return 1;
}

/* acc[l] += the sum of m[r][l] over the block's BLOCK_ROWS rows (one vector add chain per few
 * statistics; m[r] is row r's multiple for its weight in this replicate, the zero row for 0). */
static inline __attribute__((always_inline)) void add_block(int64_t *restrict acc, const int64_t *const *m,
                                                            Py_ssize_t width) {
    const int64_t *restrict m0 = m[0], *restrict m1 = m[1], *restrict m2 = m[2], *restrict m3 = m[3];
    const int64_t *restrict m4 = m[4], *restrict m5 = m[5], *restrict m6 = m[6], *restrict m7 = m[7];
    for (Py_ssize_t l = 0; l < width; l++)
        acc[l] += ((m0[l] + m1[l]) + (m2[l] + m3[l])) + ((m4[l] + m5[l]) + (m6[l] + m7[l]));
}

/* The rest of a draw x's weight when its first four thresholds are at or below it (K > 4 only). */
static inline Py_ssize_t heavy_weight(const uint64_t *tp, Py_ssize_t K, uint64_t x) {
    Py_ssize_t w = 4;
    while (w < K && tp[w] <= x) w++;
    return w;
}

/* The vector draws (GCC's and clang's vector extensions) read a 64-bit lane's low 32 bits as its
 * first 32-bit lane and the weights' bytes in memory order: little-endian targets only (elsewhere
 * the scalar loop of draw_row draws every replicate). */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VECTOR_DRAWS 1
#endif

#if defined(VECTOR_DRAWS)
/* four 64-bit lanes, or eight 32-bit ones (each target's own instructions, e.g. a vpmuludq sequence
 * for the 64-bit products with AVX2 or SSE2, vpmullq with AVX-512) */
typedef uint64_t u64x4 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));

/* The weights of sixteen replicates b .. b + 15 from their eight draws: lane l of c[q] is the counter
 * of draw b / 2 + 2l + q, whose low and high 32 bits are replicates b + 4l + 2q and b + 4l + 2q + 1.
 * w counts the K4 thresholds at or below a draw as K4 - #(threshold > draw), compared in int32 lanes
 * as signed numbers with their top bits flipped. t: the first K4 thresholds (each below 2**32), their
 * top bits flipped. Then the 16 weights (each <= K4 <= 4) are packed into bytes, in replicate order,
 * and stored at w_r. A weight of 4 with K > 4 is not final: draw_row counts it on (heavy_weight). */
static inline __attribute__((always_inline)) void draw16(const u64x4 c[2], const int32_t t[4], Py_ssize_t K4,
                                                         uint8_t *w_r) {
    const i32x8 ts0 = {t[0], t[0], t[0], t[0], t[0], t[0], t[0], t[0]};
    const i32x8 ts1 = {t[1], t[1], t[1], t[1], t[1], t[1], t[1], t[1]};
    const i32x8 ts2 = {t[2], t[2], t[2], t[2], t[2], t[2], t[2], t[2]};
    const i32x8 ts3 = {t[3], t[3], t[3], t[3], t[3], t[3], t[3], t[3]};
    const int32_t k4 = (int32_t)K4;
    u64x4 w[2];
    for (int q = 0; q < 2; q++) {
        u64x4 y = c[q]; /* mix64, lane by lane */
        y ^= y >> 30; y *= 0xBF58476D1CE4E5B9ULL;
        y ^= y >> 27; y *= 0x94D049BB133111EBULL;
        y ^= y >> 31;
        const i32x8 xs = (i32x8)((u32x8)y ^ 0x80000000U);
        i32x8 v = (i32x8){k4, k4, k4, k4, k4, k4, k4, k4};
        /* a true lane is -1 */
        if (K4 > 0) v += (i32x8)(ts0 > xs);
        if (K4 > 1) v += (i32x8)(ts1 > xs);
        if (K4 > 2) v += (i32x8)(ts2 > xs);
        if (K4 > 3) v += (i32x8)(ts3 > xs);
        w[q] = (u64x4)v;
    }
    /* lane l of w[q]: replicate b + 4l + 2q's weight in its low 32 bits, b + 4l + 2q + 1's in its high
       32 bits; the low four bytes of lane l of packed: replicates b + 4l .. b + 4l + 3 */
    const u64x4 packed = w[0] | (w[0] >> 24) | (w[1] << 16) | (w[1] >> 8);
#if defined(__clang__)
    const u32x8 low = __builtin_shufflevector((u32x8)packed, (u32x8)packed, 0, 2, 4, 6, 0, 2, 4, 6);
#else
    const u32x8 low = __builtin_shuffle((u32x8)packed, (u32x8){0, 2, 4, 6, 0, 2, 4, 6});
#endif
    memcpy(w_r, &low, 16);
}
#endif

/* Row key k's weights in the n_boot replicates into w_r (bytes): w_r[b] = #{j : tp[j] <= draw32(k, b)},
 * as boot_loop counts them (the first K4 = min(K, 4) thresholds compared without a branch, the rare
 * draws above the fourth counted on), sixteen replicates at a time where the compiler has vector
 * extensions (draw16). Returns whether a weight reached BLOCK_W. */
static inline __attribute__((always_inline)) int draw_row(uint64_t k, const uint64_t *tp, Py_ssize_t K,
                                                          Py_ssize_t K4, Py_ssize_t n_boot, uint8_t *w_r) {
    int heavy = 0;
    Py_ssize_t b = 0;
#if defined(VECTOR_DRAWS)
#define FLIPPED(j) ((int32_t)((uint32_t)(K4 > j ? tp[j] : 0) ^ 0x80000000U))
    const int32_t t0 = FLIPPED(0), t1 = FLIPPED(1), t2 = FLIPPED(2), t3 = FLIPPED(3);
#undef FLIPPED
    /* c[q] lane l: the counter of draw b / 2 + 2l + q, k + (b / 2 + 2l + q + 1) * G */
    u64x4 c[2];
    for (int q = 0; q < 2; q++)
        c[q] = (u64x4){k + (1 + q) * GOLDEN, k + (3 + q) * GOLDEN, k + (5 + q) * GOLDEN, k + (7 + q) * GOLDEN};
    const u64x4 step = (u64x4){8 * GOLDEN, 8 * GOLDEN, 8 * GOLDEN, 8 * GOLDEN};
    for (; b + 16 <= n_boot; b += 16) {
        draw16(c, (const int32_t[4]){t0, t1, t2, t3}, K4, w_r + b);
        for (int q = 0; q < 2; q++) c[q] += step;
        if (K > 4) {
            /* the weights of 4 (bit 2 of a byte: draw16's are at most 4), rare (P(Poisson(1) >= 4) < 2%),
               counted on from their draws */
            uint64_t m[2];
            memcpy(m, w_r + b, 16);
            if (__builtin_expect(((m[0] | m[1]) & 0x0404040404040404ULL) != 0, 0))
                for (int h = 0; h < 2; h++)
                    for (uint64_t bits = m[h] & 0x0404040404040404ULL; bits; bits &= bits - 1) {
                        const Py_ssize_t j = b + 8 * h + (__builtin_ctzll(bits) >> 3);
                        const Py_ssize_t w = heavy_weight(tp, K, draw32(k, j));
                        w_r[j] = (uint8_t)w;
                        heavy |= w >= BLOCK_W;
                    }
        }
    }
#endif
    for (; b < n_boot; b++) {
        const uint64_t x = draw32(k, b);
        Py_ssize_t w = 0;
        for (Py_ssize_t j = 0; j < K4; j++) w += tp[j] <= x;
        if (w == 4) w = heavy_weight(tp, K, x);
        w_r[b] = (uint8_t)w;
        heavy |= w >= BLOCK_W;
    }
    return heavy;
}

/* add_block's sums in int32 lanes (w32 of them, a multiple of 8): acc is a row of the stage. */
static inline __attribute__((always_inline)) void add_block32(int32_t *restrict acc, const int32_t *const *m,
                                                              Py_ssize_t w32) {
    const int32_t *restrict m0 = m[0], *restrict m1 = m[1], *restrict m2 = m[2], *restrict m3 = m[3];
    const int32_t *restrict m4 = m[4], *restrict m5 = m[5], *restrict m6 = m[6], *restrict m7 = m[7];
    for (Py_ssize_t l = 0; l < w32; l++)
        acc[l] += ((m0[l] + m1[l]) + (m2[l] + m3[l])) + ((m4[l] + m5[l]) + (m6[l] + m7[l]));
}

/* The stage of boot_split_loop: the int32 replicate totals (n_boot rows of w32 >= width entries)
 * of full blocks of rows that go to the groups of row `first`, added since the last flush, each
 * entry at most `bound`. */
typedef struct {
    int32_t *sums;
    Py_ssize_t w32, first;
    int64_t bound;
} Stage;

/* Adds the stage into its groups' totals in out (every grouping set), and empties it. */
static inline __attribute__((always_inline)) void stage_flush(const Boot *bt, Stage *st) {
    if (st->first < 0) return;
    const Py_ssize_t n_boot = bt->n_boot, width = bt->width, w32 = st->w32;
    for (Py_ssize_t s = 0; s < bt->n_sets; s++) {
        int64_t *restrict acc = bt->out + bt->groups[s * bt->n + st->first] * n_boot * width;
        const int32_t *restrict src = st->sums;
        for (Py_ssize_t b = 0; b < n_boot; b++)
            for (Py_ssize_t l = 0; l < width; l++) acc[b * width + l] += src[b * w32 + l];
    }
    memset(st->sums, 0, (size_t)n_boot * (size_t)w32 * sizeof(int32_t));
    st->first = -1;
    st->bound = 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define BOOT_AVX2 1
#include <immintrin.h>
#endif

/* Rows of a block of the int16 path (pair_block), and the replicates whose weights it pairs at once. */
#define PAIR_ROWS 16
#define PAIR_CHUNK 64

/* The int16 path's buffers: inter, the block's statistics as int16 pairs (PAIR_ROWS / 2 pairs of
 * w32 / 8 vectors of 16 int16), and wpair, PAIR_CHUNK replicates' weights of each pair of rows. */
typedef struct {
    int16_t *inter;
    uint32_t *wpair;
} Pairs;

#if defined(BOOT_AVX2)
/* The block's sums of replicates j < cb (stage rows sums[j]) for column vectors g .. g + NV - 1: per
 * replicate, each pair of rows (p) adds vpmaddwd(its two weights, its two rows' statistics) =
 * w[2p] * s[2p][l] + w[2p + 1] * s[2p + 1][l] in int32 lanes. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
pair_reps(const uint32_t *wpair, Py_ssize_t cb, const int16_t *inter, Py_ssize_t nv, Py_ssize_t g, int32_t *sums,
          Py_ssize_t w32, const int NV) {
    for (Py_ssize_t j = 0; j < cb; j++) {
        __m256i acc[4];
        for (int q = 0; q < NV; q++) acc[q] = _mm256_setzero_si256();
        for (int p = 0; p < PAIR_ROWS / 2; p++) {
            const __m256i wv = _mm256_set1_epi32((int)wpair[p * PAIR_CHUNK + j]);
            const __m256i *s = (const __m256i *)inter + p * nv + g;
            for (int q = 0; q < NV; q++) {
                acc[q] = _mm256_add_epi32(acc[q], _mm256_madd_epi16(wv, _mm256_loadu_si256(s + q)));
                /* one add chain per vector, in registers (GCC's reassociated tree of the adds spills) */
                __asm__("" : "+x"(acc[q]));
            }
        }
        __m256i *d = (__m256i *)(sums + j * w32 + 8 * g);
        for (int q = 0; q < NV; q++) _mm256_storeu_si256(d + q, _mm256_add_epi32(_mm256_loadu_si256(d + q), acc[q]));
    }
}

/* Adds a block of PAIR_ROWS rows (stats rows, every statistic at most INT16_MAX) times their weights
 * (wt, n_boot bytes per row, as draw_row writes them) into the stage rows sums (n_boot rows of w32
 * int32), in int32 lanes: the caller's bound keeps every partial sum within INT32_MAX. The
 * statistics are put in pairs of rows once (pr->inter: lane 2l + h of a pair's vector is row
 * 2p + h's statistic l), then, PAIR_CHUNK replicates at a time, each pair's two weights in one
 * int32 (pr->wpair: w[2p] | w[2p + 1] << 16) and pair_reps' products. */
__attribute__((target("avx2"))) static void pair_block(const uint8_t *wt, Py_ssize_t n_boot, const int64_t *rows,
                                                       Py_ssize_t width, int32_t *sums, Py_ssize_t w32,
                                                       const Pairs *pr) {
    const Py_ssize_t nv = w32 / 8;
    int16_t *inter = pr->inter;
    for (Py_ssize_t p = 0; p < PAIR_ROWS / 2; p++)
        for (Py_ssize_t l = 0; l < w32; l++)
            for (Py_ssize_t h = 0; h < 2; h++)
                inter[(p * nv + l / 8) * 16 + 2 * (l % 8) + h] = l < width ? (int16_t)rows[(2 * p + h) * width + l] : 0;
    for (Py_ssize_t b0 = 0; b0 < n_boot; b0 += PAIR_CHUNK) {
        const Py_ssize_t cb = n_boot - b0 < PAIR_CHUNK ? n_boot - b0 : PAIR_CHUNK;
        for (Py_ssize_t p = 0; p < PAIR_ROWS / 2; p++) {
            const uint8_t *a = wt + 2 * p * n_boot + b0, *c = a + n_boot;
            uint32_t *dst = pr->wpair + p * PAIR_CHUNK;
            Py_ssize_t j = 0;
            for (; j + 16 <= cb; j += 16) {
                const __m128i x = _mm_loadu_si128((const __m128i *)(a + j));
                const __m128i y = _mm_loadu_si128((const __m128i *)(c + j));
                _mm256_storeu_si256((__m256i *)(dst + j), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(x, y)));
                _mm256_storeu_si256((__m256i *)(dst + j + 8), _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(x, y)));
            }
            for (; j < cb; j++) dst[j] = (uint32_t)a[j] | (uint32_t)c[j] << 16;
        }
        int32_t *sb = sums + b0 * w32;
        for (Py_ssize_t g = 0; g < nv; g += 4) {
            switch (nv - g) {
            case 1: pair_reps(pr->wpair, cb, inter, nv, g, sb, w32, 1); break;
            case 2: pair_reps(pr->wpair, cb, inter, nv, g, sb, w32, 2); break;
            case 3: pair_reps(pr->wpair, cb, inter, nv, g, sb, w32, 3); break;
            default: pair_reps(pr->wpair, cb, inter, nv, g, sb, w32, 4); break;
            }
        }
    }
}
#endif

/* The unchecked loop of boot_loop, for the same sums, in blocks of up to BLOCK_ROWS consecutive
 * rows of the same groups: every row's weights in every replicate first (wt, n_boot bytes per
 * row: draw_row), then the adds. In a full block, the rare weights of BLOCK_W or more are added
 * on their own (and count as 0 after); then, per replicate, the sum of its rows' precomputed
 * multiples (bmult[r][w][l] = w * row_r[l], the zero row for weight 0: no branch) is added once,
 * so that the totals are read and written once per block rather than once per row. Those block
 * sums go into the stage (st, int32: twice the lanes per vector) when the block's bound and the
 * stage's allow it (bmult32), the stage into out when the groups change, when it could pass
 * INT32_MAX, and at the end; else straight into out (bmult, int64). Other rows add their own
 * multiple (mult, (K + 1) * width) where their weight is not 0. Every sum is of non-negative
 * integers, exact, and the order of the additions does not change it. Only run when
 * run_bootstrap's bound says nothing can overflow int64 (every partial sum is at most that bound).
 * st is NULL when the stage could not be allocated (no int32 path then). With pr (the AVX2 builds,
 * with the stage), PAIR_ROWS rows of the same groups whose statistics all fit int16 go first to
 * pair_block: their products summed in int32 lanes two rows at a time into the stage, any weight
 * (at most K <= 255), bounded by K times the sum of the rows' largest statistics. */
static inline __attribute__((always_inline)) void boot_split_loop(const Boot *bt, uint8_t *wt, int64_t *mult,
                                                                  int64_t *bmult, Stage *st, int32_t *bmult32,
                                                                  const Pairs *pr) {
    const uint64_t *kp = bt->keys, *tp = bt->thr;
    const uint64_t seed_key = bt->seed_key;
    const int64_t *gp = bt->groups, *sp = bt->stats;
    int64_t *op = bt->out;
    const Py_ssize_t n = bt->n, K = bt->K, n_sets = bt->n_sets, width = bt->width, n_boot = bt->n_boot;
    const Py_ssize_t K4 = K < 4 ? K : 4;
    for (Py_ssize_t i = 0; i < n;) {
#if defined(BOOT_AVX2)
        if (pr && i + PAIR_ROWS <= n) {
            /* PAIR_ROWS rows of the same groups whose statistics fit int16: pair_block, into the stage */
            int ok = 1;
            int64_t sum_max = 0;
            for (Py_ssize_t r = 1; r < PAIR_ROWS && ok; r++) ok = same_groups(gp, n, n_sets, i, i + r);
            for (Py_ssize_t r = 0; r < PAIR_ROWS && ok; r++) {
                const int64_t *row = sp + (i + r) * width;
                int64_t rowmax = 0;
                for (Py_ssize_t l = 0; l < width; l++) rowmax = row[l] > rowmax ? row[l] : rowmax;
                ok = rowmax <= INT16_MAX;
                sum_max += rowmax;
            }
            if (ok) {
                /* every weight is at most K <= 255: the block's terms sum to at most K * sum_max < 2**31 */
                const int64_t block_bound = (int64_t)K * sum_max;
                for (Py_ssize_t r = 0; r < PAIR_ROWS; r++) {
                    const uint64_t k = mix64(kp[i + r] ^ seed_key);
                    if (K4 == 4) draw_row(k, tp, K, 4, n_boot, wt + r * n_boot);
                    else draw_row(k, tp, K, K4, n_boot, wt + r * n_boot);
                }
                if (st->first >= 0 &&
                    (!same_groups(gp, n, n_sets, st->first, i) || st->bound + block_bound > INT32_MAX))
                    stage_flush(bt, st);
                if (st->first < 0) st->first = i;
                st->bound += block_bound;
                pair_block(wt, n_boot, sp + i * width, width, st->sums, st->w32, pr);
                i += PAIR_ROWS;
                continue;
            }
        }
#endif
        Py_ssize_t rows = 1;
        while (rows < BLOCK_ROWS && i + rows < n && same_groups(gp, n, n_sets, i, i + rows)) rows++;
        int heavy = 0;
        for (Py_ssize_t r = 0; r < rows; r++) {
            const uint64_t k = mix64(kp[i + r] ^ seed_key);
            uint8_t *w_r = wt + r * n_boot;
            if (K4 == 4) heavy |= draw_row(k, tp, K, 4, n_boot, w_r);
            else heavy |= draw_row(k, tp, K, K4, n_boot, w_r);
        }
        if (rows == BLOCK_ROWS && heavy) {
            /* the rare weights of BLOCK_W or more (a full block of 1000 replicates has one in about 13
               blocks) go straight into out, and count as 0 in the block's sums below */
            for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++) {
                const int64_t *row = sp + (i + r) * width;
                uint8_t *w_r = wt + r * n_boot;
                for (Py_ssize_t b = 0; b < n_boot; b++) {
                    if (w_r[b] < BLOCK_W) continue;
                    const int64_t w = w_r[b];
                    for (Py_ssize_t s = 0; s < n_sets; s++) {
                        int64_t *acc = op + (gp[s * n + i + r] * n_boot + b) * width;
                        for (Py_ssize_t l = 0; l < width; l++) acc[l] += w * row[l];
                    }
                    w_r[b] = 0;
                }
            }
            heavy = 0;
        }
        /* a full block's terms, each at most BLOCK_W - 1 times its row's largest statistic */
        int64_t block_bound = INT64_MAX;
        if (rows == BLOCK_ROWS && !heavy && st) {
            int64_t sum_max = 0;
            for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++) {
                const int64_t *row = sp + (i + r) * width;
                int64_t rowmax = 0;
                for (Py_ssize_t l = 0; l < width; l++) rowmax = row[l] > rowmax ? row[l] : rowmax;
                sum_max += rowmax > INT32_MAX ? (int64_t)INT32_MAX + 1 : rowmax;
            }
            block_bound = (BLOCK_W - 1) * sum_max;
        }
        if (block_bound <= INT32_MAX) {
            /* into the stage (flushed first when it holds other groups or could pass INT32_MAX) */
            if (st->first >= 0 && (!same_groups(gp, n, n_sets, st->first, i) || st->bound + block_bound > INT32_MAX))
                stage_flush(bt, st);
            if (st->first < 0) st->first = i;
            st->bound += block_bound;
            const Py_ssize_t w32 = st->w32;
            for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++) {
                const int64_t *row = sp + (i + r) * width;
                for (Py_ssize_t w = 0; w < BLOCK_W; w++) {
                    int32_t *mw = bmult32 + (r * BLOCK_W + w) * w32;
                    for (Py_ssize_t l = 0; l < width; l++) mw[l] = (int32_t)(w * row[l]);
                    for (Py_ssize_t l = width; l < w32; l++) mw[l] = 0;
                }
            }
            const int32_t *ptab[BLOCK_ROWS][BLOCK_W];
            for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++)
                for (Py_ssize_t w = 0; w < BLOCK_W; w++) ptab[r][w] = bmult32 + (r * BLOCK_W + w) * w32;
            for (Py_ssize_t b = 0; b < n_boot; b++) {
                const int32_t *m[BLOCK_ROWS];
                for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++) m[r] = ptab[r][wt[r * n_boot + b]];
                add_block32(st->sums + b * w32, m, w32);
            }
        } else if (rows == BLOCK_ROWS && !heavy) {
            for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++) {
                const int64_t *row = sp + (i + r) * width;
                for (Py_ssize_t w = 0; w < BLOCK_W; w++)
                    for (Py_ssize_t l = 0; l < width; l++) bmult[(r * BLOCK_W + w) * width + l] = (int64_t)w * row[l];
            }
            /* ptab[r][w]: row r's multiple for weight w, so that a replicate's eight come from eight loads */
            const int64_t *ptab[BLOCK_ROWS][BLOCK_W];
            for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++)
                for (Py_ssize_t w = 0; w < BLOCK_W; w++) ptab[r][w] = bmult + (r * BLOCK_W + w) * width;
            for (Py_ssize_t b = 0; b < n_boot; b++) {
                const int64_t *m[BLOCK_ROWS];
                for (Py_ssize_t r = 0; r < BLOCK_ROWS; r++) m[r] = ptab[r][wt[r * n_boot + b]];
                for (Py_ssize_t s = 0; s < n_sets; s++)
                    add_block(op + (gp[s * n + i] * n_boot + b) * width, m, width);
            }
        } else {
            for (Py_ssize_t r = 0; r < rows; r++) {
                const int64_t *row = sp + (i + r) * width;
                const uint8_t *w_r = wt + r * n_boot;
                for (Py_ssize_t w = 1; w <= K; w++)
                    for (Py_ssize_t l = 0; l < width; l++) mult[w * width + l] = (int64_t)w * row[l];
                for (Py_ssize_t b = 0; b < n_boot; b++) {
                    const Py_ssize_t w = w_r[b];
                    if (!w) continue;
                    const int64_t *m = mult + w * width;
                    for (Py_ssize_t s = 0; s < n_sets; s++) {
                        int64_t *acc = op + (gp[s * n + i + r] * n_boot + b) * width;
                        for (Py_ssize_t l = 0; l < width; l++) acc[l] += m[l];
                    }
                }
            }
        }
        i += rows;
    }
    if (st) stage_flush(bt, st);
}

static void boot_split(const Boot *bt, uint8_t *wt, int64_t *mult, int64_t *bmult, Stage *st, int32_t *bmult32) {
    boot_split_loop(bt, wt, mult, bmult, st, bmult32, NULL);
}

#if defined(BOOT_AVX2)
/* with AVX2, and the int16 path (pr, when its buffers and the stage are there) */
__attribute__((target("avx2"))) static void boot_split_avx2(const Boot *bt, uint8_t *wt, int64_t *mult,
                                                             int64_t *bmult, Stage *st, int32_t *bmult32,
                                                             const Pairs *pr) {
    boot_split_loop(bt, wt, mult, bmult, st, bmult32, st ? pr : NULL);
}

/* with AVX-512 (DQ: 64-bit products in one instruction, VL: on 256-bit vectors) */
__attribute__((target("avx2,avx512f,avx512dq,avx512vl,avx512bw"))) static void
boot_split_avx512(const Boot *bt, uint8_t *wt, int64_t *mult, int64_t *bmult, Stage *st, int32_t *bmult32,
                  const Pairs *pr) {
    boot_split_loop(bt, wt, mult, bmult, st, bmult32, st ? pr : NULL);
}
#endif

/* The widest of boot_split's builds that boot_unchecked may use (tests lower it to run the others:
 * _set_isa): 2 AVX-512, 1 AVX2, 0 the generic build. */
static int isa_cap = 2;

/* The unchecked bootstrap: boot_split (its AVX2 build when the CPU has it), or boot_plain when its
 * buffers cannot be had (or a weight could exceed a byte). */
static Py_ssize_t boot_unchecked(const Boot *bt) {
    if (bt->K > 255) return boot_plain(bt);
    /* wt: room for the int16 path's PAIR_ROWS rows (the byte path uses BLOCK_ROWS of them) */
    uint8_t *wt = malloc((size_t)PAIR_ROWS * (size_t)bt->n_boot);
    int64_t *mult = malloc((size_t)(bt->K + 1) * (size_t)bt->width * sizeof(int64_t));
    int64_t *bmult = malloc((size_t)BLOCK_ROWS * BLOCK_W * (size_t)bt->width * sizeof(int64_t));
    if (!wt || !mult || !bmult) {
        free(wt);
        free(mult);
        free(bmult);
        return boot_plain(bt);
    }
    /* the stage and its blocks' multiples (without them, full blocks add into out directly) */
    Stage stage = {.w32 = (bt->width + 7) / 8 * 8, .first = -1, .bound = 0}, *st = &stage;
    stage.sums = calloc((size_t)bt->n_boot * (size_t)stage.w32, sizeof(int32_t));
    int32_t *bmult32 = malloc((size_t)BLOCK_ROWS * BLOCK_W * (size_t)stage.w32 * sizeof(int32_t));
    if (!stage.sums || !bmult32) st = NULL;
    /* the int16 path's buffers (without them, only the byte path) */
    Pairs pairs = {.inter = malloc((size_t)PAIR_ROWS * (size_t)stage.w32 * sizeof(int16_t)),
                   .wpair = malloc((size_t)PAIR_ROWS / 2 * PAIR_CHUNK * sizeof(uint32_t))};
    const Pairs *pr = pairs.inter && pairs.wpair ? &pairs : NULL;
#if defined(BOOT_AVX2)
    if (isa_cap >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        boot_split_avx512(bt, wt, mult, bmult, st, bmult32, pr);
    else if (isa_cap >= 1 && __builtin_cpu_supports("avx2")) boot_split_avx2(bt, wt, mult, bmult, st, bmult32, pr);
    else
#endif
    boot_split(bt, wt, mult, bmult, st, bmult32);
    (void)pr;
    free(wt);
    free(mult);
    free(bmult);
    free(stage.sums);
    free(bmult32);
    free(pairs.inter);
    free(pairs.wpair);
    return -1;
}

/* The bootstrap of bt into bt->out, in plain C (the GIL may be released): -1, or the first row
 * whose weighted sums overflowed int64 (out is then partly updated).
 *
 * Weights are at most K, stats and out are non-negative, and a row is added at most n_sets
 * times into one entry, so every entry of out ends at most
 * max(out) + n_sets * K * sum_i max(stats[i]) = bound. When bound fits int64 (always, with
 * real text) nothing can overflow and the loop runs unchecked; otherwise it checks every
 * operation. */
static Py_ssize_t run_bootstrap(const Boot *bt) {
    int64_t bound = 0, sum_rowmax = 0;
    int checked = 0;
    for (Py_ssize_t i = 0; i < bt->n; i++) {
        int64_t rowmax = 0;
        for (Py_ssize_t l = 0; l < bt->width; l++) {
            int64_t v = bt->stats[i * bt->width + l];
            if (v > rowmax) rowmax = v;
        }
        checked |= __builtin_add_overflow(sum_rowmax, rowmax, &sum_rowmax);
    }
    for (Py_ssize_t j = 0; j < bt->n_groups * bt->n_boot * bt->width; j++)
        if (bt->out[j] > bound) bound = bt->out[j];
    checked |= __builtin_mul_overflow(sum_rowmax, (int64_t)bt->K, &sum_rowmax);
    checked |= __builtin_mul_overflow(sum_rowmax, (int64_t)bt->n_sets, &sum_rowmax);
    checked |= __builtin_add_overflow(bound, sum_rowmax, &bound);
    return checked ? boot_checked(bt) : boot_unchecked(bt);
}

PyDoc_STRVAR(bootstrap_doc,
"bootstrap(row_keys, seed_key, thresholds, groups, n_sets, stats, width, n_boot, out)\n\n"
"Adds w[b, i] * stats[i] into out[groups[s, i], b] for every row i, replicate b and grouping\n"
"set s, where w[b, i] = #{k : thresholds[k] <= u[b, i]}, u[b, i] the low 32 bits of\n"
"x = mix(mix(row_keys[i] ^ seed_key) + (b // 2 + 1) * G) for an even b, its high 32 bits for an\n"
"odd b (G = 0x9E3779B97F4A7C15, mix = splitmix64's finaliser):\n"
"bleu_core.resampling.counter.weights, fused.\n"
"row_keys uint64[n]; thresholds uint64[K] ascending, each below 2**32; groups int64[n_sets, n]\n"
"(indices into out);\n"
"stats int64[n, width]; out int64[n_groups, n_boot, width], C-contiguous, written in place.\n"
"stats and out must be non-negative. Products and sums are checked: OverflowError instead of\n"
"wrapping (out is then partly updated); ValueError for sizes whose products do not fit\n"
"Py_ssize_t or do not match the buffers.");

/* The buffers v (keys, thresholds, groups, stats, out) and sizes of a bootstrap call, checked into
 * bt: 0, or -1 with ValueError. Their values are checked by boot_values, without the GIL. */
static int boot_check(Boot *bt, const View v[5], uint64_t seed_key, Py_ssize_t n_sets, Py_ssize_t width,
                      Py_ssize_t n_boot) {
    const View *keys = v, *thr = v + 1, *groups = v + 2, *stats = v + 3, *out = v + 4;
    if (!keys->held || !thr->held || !groups->held || !stats->held || !out->held || width < 1 || n_boot < 1 ||
        n_sets < 1) {
        PyErr_SetString(PyExc_ValueError, "bootstrap: missing buffer or bad sizes");
        return -1;
    }
    Py_ssize_t n = keys->view.len / 8, K = thr->view.len / 8;
    Py_ssize_t per_group, set_cells, stat_cells;
    if (__builtin_mul_overflow(n_boot, width, &per_group) || __builtin_mul_overflow(n_sets, n, &set_cells) ||
        __builtin_mul_overflow(n, width, &stat_cells)) {
        PyErr_SetString(PyExc_ValueError, "bootstrap: sizes too large (their products overflow Py_ssize_t)");
        return -1;
    }
    /* n_groups * per_group <= out.view.len / 8, so no index into out in the loop can overflow */
    Py_ssize_t n_groups = out->view.len / 8 / per_group;
    if (groups->view.len / 8 != set_cells || stats->view.len / 8 != stat_cells ||
        out->view.len / 8 != n_groups * per_group) {
        PyErr_SetString(PyExc_ValueError, "bootstrap: buffer lengths do not match n, width, n_boot");
        return -1;
    }
    *bt = (Boot){
        .keys = (const uint64_t *)keys->view.buf, .thr = (const uint64_t *)thr->view.buf, .seed_key = seed_key,
        .groups = (const int64_t *)groups->view.buf, .stats = (const int64_t *)stats->view.buf,
        .out = (int64_t *)out->view.buf,
        .n = n, .K = K, .n_sets = n_sets, .n_groups = n_groups, .width = width, .n_boot = n_boot,
    };
    return 0;
}

/* The values of a bootstrap call whose sizes boot_check accepted, in plain C (no GIL needed): NULL,
 * or the message of the ValueError for the first check that fails. */
static const char *boot_values(const Boot *bt) {
    /* the loops count thresholds differently (the first K at or below a draw, or the leading run of
       them); for thresholds in order the two counts are the same */
    for (Py_ssize_t k = 1; k < bt->K; k++)
        if (bt->thr[k] < bt->thr[k - 1]) return "bootstrap: thresholds are not in ascending order";
    /* the draws are 32-bit (the vector loop compares the thresholds as 32-bit numbers) */
    for (Py_ssize_t k = 0; k < bt->K; k++)
        if (bt->thr[k] >> 32) return "bootstrap: thresholds must be below 2**32";
    for (Py_ssize_t j = 0; j < bt->n_sets * bt->n; j++)
        if (bt->groups[j] < 0 || bt->groups[j] >= bt->n_groups) return "bootstrap: group index out of range";
    for (Py_ssize_t j = 0; j < bt->n * bt->width; j++)
        if (bt->stats[j] < 0) return "bootstrap: statistics must be non-negative";
    for (Py_ssize_t j = 0; j < bt->n_groups * bt->n_boot * bt->width; j++)
        if (bt->out[j] < 0) return "bootstrap: out must start non-negative";
    return NULL;
}

static PyObject *k_bootstrap(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[5]; /* keys, thresholds, groups, stats, out */
    unsigned long long seed_key;
    Py_ssize_t n_sets, width, n_boot;
    if (!PyArg_ParseTuple(args, "OKOOnOnnO", &o[0], &seed_key, &o[1], &o[2], &n_sets, &o[3], &width, &n_boot,
                          &o[4]))
        return NULL;
    View v[5];
    for (int i = 0; i < 5; i++) v[i].held = 0;
    PyObject *result = NULL;
    Boot bt;
    Py_ssize_t bad_row = -1;
    const char *bad_value;
    for (int i = 0; i < 5; i++)
        if (get_view(o[i], &v[i], i == 4) < 0) goto done;
    if (boot_check(&bt, v, (uint64_t)seed_key, n_sets, width, n_boot) < 0) goto done;
    Py_BEGIN_ALLOW_THREADS
    if (!(bad_value = boot_values(&bt))) bad_row = run_bootstrap(&bt);
    Py_END_ALLOW_THREADS
    if (bad_value) {
        PyErr_SetString(PyExc_ValueError, bad_value);
        goto done;
    }
    if (bad_row >= 0) {
        PyErr_Format(PyExc_OverflowError,
                     "bootstrap: a replicate's weighted statistics total exceeds int64 (2**63 - 1) at row %zd",
                     bad_row);
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (int i = 0; i < 5; i++) rel_view(&v[i]);
    return result;
}

/* ---------------------------------------------------------------- bleu_core.items' Poisson stage
 *
 * bleu_core.items._Draws reads each item's Poisson count from a 64-bit uniform's bytes: the first
 * byte through a 256-entry table (255: a threshold falls inside that byte's range, more bytes
 * decide), the second through a 65536-entry table, the rest in numpy. These two functions are the
 * byte work of one block, written straight into the block's count matrix (float32, float64 or
 * int64: the dtype of bootstrap's matrix product), in place of bytes.translate, astype,
 * flatnonzero and the fancy-indexed fixes; add_rows adds the extra items' rows into the sums
 * of the block's product. They draw nothing: the bytes come from numpy's bit generator, in the
 * order items.py consumes them. Every buffer's size is checked first (ValueError); the loops, with
 * the checks of the values they read, run without the GIL. */

enum { KIND_F32 = 0, KIND_F64 = 1, KIND_I64 = 2 };

static int kind_size(int kind) {
    return kind == KIND_F32 ? 4 : (kind == KIND_F64 || kind == KIND_I64) ? 8 : 0;
}

/* out[i] = v for the element i of a count matrix of `kind` */
static inline void put_count(void *out, int kind, Py_ssize_t i, unsigned v) {
    if (kind == KIND_F32) ((float *)out)[i] = (float)v;
    else if (kind == KIND_F64) ((double *)out)[i] = (double)v;
    else ((int64_t *)out)[i] = (int64_t)v;
}

#if defined(__SSE2__)
/* The level-1 table as a step function, for the vector loop: outside the straddle bytes str[],
 * table[b] = base0 + the sum of step_by[j] over the steps with step_at[j] <= b (the straddle
 * bytes get a value of the same form, a placeholder: their cells are written again by
 * poisson_level2 or by items.py). 0 if the table is not of that form (a count that decreases)
 * or has more than 32 steps or straddles: the scalar loop takes it. */
typedef struct {
    uint8_t base0;
    int n_steps, n_str;
    uint8_t step_at[32], step_by[32], str[32];
} Level1Plan;

static int level1_plan(const uint8_t *table, Level1Plan *pl) {
    uint8_t base[256];
    for (int b = 0; b < 256; b++) base[b] = table[b] != 255 ? table[b] : (b ? base[b - 1] : 0);
    pl->base0 = base[0];
    pl->n_steps = pl->n_str = 0;
    for (int b = 1; b < 256; b++) {
        if (base[b] < base[b - 1]) return 0;
        if (base[b] > base[b - 1]) {
            if (pl->n_steps == 32) return 0;
            pl->step_at[pl->n_steps] = (uint8_t)b;
            pl->step_by[pl->n_steps++] = (uint8_t)(base[b] - base[b - 1]);
        }
    }
    for (int b = 0; b < 256; b++) {
        if (table[b] == 255) {
            if (pl->n_str == 32) return 0;
            pl->str[pl->n_str++] = (uint8_t)b;
        }
    }
    return 1;
}
#endif

/* The level-1 loop for one element type T from byte `from`: out[i] = table[raw[i]]; the positions
 * of 255 into pos from *pnp. Branch-free: every position is written at pos[np], kept only if its
 * byte straddles (pos has room for L). */
#define LEVEL1_LOOP(T)                                                                       \
    do {                                                                                     \
        T val[256];                                                                          \
        for (int b = 0; b < 256; b++) val[b] = (T)table[b];                                  \
        T *o = (T *)out;                                                                     \
        for (Py_ssize_t i = from; i < L; i++) {                                              \
            const uint8_t b = raw[i];                                                        \
            o[i] = val[b];                                                                   \
            pos[np] = i;                                                                     \
            np += straddle[b];                                                               \
        }                                                                                    \
    } while (0)

static Py_ssize_t level1_scalar(const uint8_t *raw, Py_ssize_t from, Py_ssize_t L, const uint8_t *table, void *out,
                                int kind, int64_t *pos, Py_ssize_t np) {
    uint8_t straddle[256];
    for (int b = 0; b < 256; b++) straddle[b] = table[b] == 255;
    if (kind == KIND_F32) LEVEL1_LOOP(float);
    else if (kind == KIND_F64) LEVEL1_LOOP(double);
    else LEVEL1_LOOP(int64_t);
    return np;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The float32 level-1 loop, 16 bytes at a time (SSE2, which every x86-64 has): each byte's count
 * by the plan's steps (unsigned compares: max(x, at) == x), its straddle bit by the plan's
 * bytes, the straddles' positions from the bit mask, in order. Returns the bytes done (a
 * multiple of 16); the straddles' count into *pnp. */
static Py_ssize_t level1_f32_sse2(const uint8_t *raw, Py_ssize_t L, const Level1Plan *pl, float *o, int64_t *pos,
                                  Py_ssize_t *pnp) {
    const __m128i zero = _mm_setzero_si128(), b0 = _mm_set1_epi8((char)pl->base0);
    __m128i at[32], by[32], st[32];
    const int ns = pl->n_steps, nt = pl->n_str;
    for (int j = 0; j < ns; j++) {
        at[j] = _mm_set1_epi8((char)pl->step_at[j]);
        by[j] = _mm_set1_epi8((char)pl->step_by[j]);
    }
    for (int j = 0; j < nt; j++) st[j] = _mm_set1_epi8((char)pl->str[j]);
    Py_ssize_t np = 0, i = 0;
    for (; i + 16 <= L; i += 16) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(raw + i));
        __m128i acc = b0, s = zero;
        for (int j = 0; j < ns; j++)
            acc = _mm_add_epi8(acc, _mm_and_si128(_mm_cmpeq_epi8(_mm_max_epu8(x, at[j]), x), by[j]));
        for (int j = 0; j < nt; j++) s = _mm_or_si128(s, _mm_cmpeq_epi8(x, st[j]));
        unsigned m = (unsigned)_mm_movemask_epi8(s);
        while (m) {
            pos[np++] = i + __builtin_ctz(m);
            m &= m - 1;
        }
        const __m128i lo = _mm_unpacklo_epi8(acc, zero), hi = _mm_unpackhi_epi8(acc, zero);
        _mm_storeu_ps(o + i, _mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)));
        _mm_storeu_ps(o + i + 4, _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)));
        _mm_storeu_ps(o + i + 8, _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)));
        _mm_storeu_ps(o + i + 12, _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)));
    }
    *pnp = np;
    return i;
}
#endif

#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
/* level1_f32_sse2 32 bytes at a time with AVX2 (when the CPU has it: __builtin_cpu_supports).
 * Unsigned x >= at is the signed (x ^ 0x80) > (at - 1) ^ 0x80, at >= 1 (a step is never at 0). */
__attribute__((target("avx2"))) static Py_ssize_t level1_f32_avx2(const uint8_t *raw, Py_ssize_t L,
                                                                  const Level1Plan *pl, float *o, int64_t *pos,
                                                                  Py_ssize_t *pnp) {
    const __m256i flip = _mm256_set1_epi8((char)0x80), b0 = _mm256_set1_epi8((char)pl->base0);
    __m256i at[32], by[32], st[32];
    const int ns = pl->n_steps, nt = pl->n_str;
    for (int j = 0; j < ns; j++) {
        at[j] = _mm256_set1_epi8((char)((pl->step_at[j] - 1) ^ 0x80));
        by[j] = _mm256_set1_epi8((char)pl->step_by[j]);
    }
    for (int j = 0; j < nt; j++) st[j] = _mm256_set1_epi8((char)pl->str[j]);
    Py_ssize_t np = 0, i = 0;
    for (; i + 32 <= L; i += 32) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(raw + i)), xs = _mm256_xor_si256(x, flip);
        __m256i acc = b0, s = _mm256_setzero_si256();
        for (int j = 0; j < ns; j++) acc = _mm256_add_epi8(acc, _mm256_and_si256(_mm256_cmpgt_epi8(xs, at[j]), by[j]));
        for (int j = 0; j < nt; j++) s = _mm256_or_si256(s, _mm256_cmpeq_epi8(x, st[j]));
        uint32_t m = (uint32_t)_mm256_movemask_epi8(s);
        while (m) {
            pos[np++] = i + __builtin_ctz(m);
            m &= m - 1;
        }
        const __m128i lo = _mm256_castsi256_si128(acc), hi = _mm256_extracti128_si256(acc, 1);
        _mm256_storeu_ps(o + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo)));
        _mm256_storeu_ps(o + i + 8, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8))));
        _mm256_storeu_ps(o + i + 16, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi)));
        _mm256_storeu_ps(o + i + 24, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8))));
    }
    *pnp = np;
    return i;
}
#endif

/* The level-1 pass over L bytes: the number of straddle cells, whose positions go to pos (room
 * for L), in order. */
static Py_ssize_t level1_pass(const uint8_t *raw, Py_ssize_t L, const uint8_t *table, void *out, int kind,
                              int64_t *pos) {
    Py_ssize_t from = 0, np = 0;
#if defined(__SSE2__)
    Level1Plan pl;
    if (kind == KIND_F32 && level1_plan(table, &pl)) {
#if defined(HAVE_AVX2_PATH)
        if (__builtin_cpu_supports("avx2")) from = level1_f32_avx2(raw, L, &pl, (float *)out, pos, &np);
        else
#endif
        from = level1_f32_sse2(raw, L, &pl, (float *)out, pos, &np);
    }
#endif
    return level1_scalar(raw, from, L, table, out, kind, pos, np);
}

PyDoc_STRVAR(poisson_level1_doc,
"poisson_level1(raw, table, out, kind, pos) -> int\n\n"
"out[i] = table[raw[i]] for the L bytes of raw, as kind's elements (0: float32, 1: float64,\n"
"2: int64), and the positions i where that is 255 written in order to pos[0:count]; returns count.\n"
"Those cells of out hold placeholders (255 or another count): poisson_level2 writes them.\n"
"raw uint8[L]; table uint8[256]; out C-contiguous writable, exactly L elements of kind; pos\n"
"int64, writable, room for at least L. ValueError on any other size.");

static PyObject *k_poisson_level1(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[4]; /* raw, table, out, pos */
    int kind;
    if (!PyArg_ParseTuple(args, "OOOiO", &o[0], &o[1], &o[2], &kind, &o[3])) return NULL;
    View v[4];
    for (int i = 0; i < 4; i++) v[i].held = 0;
    PyObject *result = NULL;
    Py_ssize_t L, np, size = kind_size(kind), cells;
    for (int i = 0; i < 4; i++)
        if (get_view(o[i], &v[i], i >= 2) < 0) goto done;
    if (!v[0].held || !v[1].held || !v[2].held || !v[3].held || !size) {
        PyErr_SetString(PyExc_ValueError, "poisson_level1: missing buffer or unknown kind");
        goto done;
    }
    L = v[0].view.len;
    if (v[1].view.len != 256 || __builtin_mul_overflow(L, size, &cells) || v[2].view.len != cells ||
        v[3].view.len / 8 < L) {
        PyErr_SetString(PyExc_ValueError, "poisson_level1: table must hold 256 bytes, out L elements of kind, "
                                          "pos room for L int64 (L = len(raw))");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    np = level1_pass((const uint8_t *)v[0].view.buf, L, (const uint8_t *)v[1].view.buf, v[2].view.buf, kind,
                     (int64_t *)v[3].view.buf);
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(np);
done:
    for (int i = 0; i < 4; i++) rel_view(&v[i]);
    return result;
}

PyDoc_STRVAR(poisson_level2_doc,
"poisson_level2(raw, pos, count, second, table, out, kind, late) -> int\n\n"
"For j < count, with p = pos[j] and key = raw[p] << 8 | second[j]: out[p] = table[key] when that\n"
"is not 255, else j is written to late (in order); returns the number of late entries.\n"
"raw uint8[L]; pos int64[>= count], each in [0, L); second uint8[>= count]; table uint8[65536];\n"
"out writable, exactly L elements of kind (0: float32, 1: float64, 2: int64); late int64, writable,\n"
"room for count. ValueError on any other size or a position out of range (out then partly written).");

/* poisson_level2's loop, in plain C (no GIL needed): the number of late entries, or -1 at the first
 * position out of [0, L) (out and late then partly written). */
static Py_ssize_t level2_pass(const uint8_t *raw, Py_ssize_t L, const int64_t *pos, Py_ssize_t count,
                              const uint8_t *second, const uint8_t *table, void *out, int kind, int64_t *late) {
    Py_ssize_t n_late = 0;
    for (Py_ssize_t j = 0; j < count; j++) {
        const int64_t p = pos[j];
        if (p < 0 || p >= L) return -1;
        const unsigned f = table[((unsigned)raw[p] << 8) | second[j]];
        if (f == 255) late[n_late++] = j;
        else put_count(out, kind, p, f);
    }
    return n_late;
}

static PyObject *k_poisson_level2(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[6]; /* raw, pos, second, table, out, late */
    Py_ssize_t count;
    int kind;
    if (!PyArg_ParseTuple(args, "OOnOOOiO", &o[0], &o[1], &count, &o[2], &o[3], &o[4], &kind, &o[5])) return NULL;
    View v[6];
    for (int i = 0; i < 6; i++) v[i].held = 0;
    PyObject *result = NULL;
    Py_ssize_t L, size = kind_size(kind), cells, n_late = 0;
    for (int i = 0; i < 6; i++)
        if (get_view(o[i], &v[i], i >= 4) < 0) goto done;
    if (!v[0].held || !v[1].held || !v[2].held || !v[3].held || !v[4].held || !v[5].held || !size || count < 0) {
        PyErr_SetString(PyExc_ValueError, "poisson_level2: missing buffer, unknown kind or negative count");
        goto done;
    }
    L = v[0].view.len;
    if (v[1].view.len / 8 < count || v[2].view.len < count || v[3].view.len != 65536 ||
        __builtin_mul_overflow(L, size, &cells) || v[4].view.len != cells || v[5].view.len / 8 < count) {
        PyErr_SetString(PyExc_ValueError, "poisson_level2: buffer sizes do not match (table 65536 bytes, out L "
                                          "elements of kind, pos, second and late room for count)");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    n_late = level2_pass((const uint8_t *)v[0].view.buf, L, (const int64_t *)v[1].view.buf, count,
                         (const uint8_t *)v[2].view.buf, (const uint8_t *)v[3].view.buf, v[4].view.buf, kind,
                         (int64_t *)v[5].view.buf);
    Py_END_ALLOW_THREADS
    if (n_late < 0) {
        PyErr_SetString(PyExc_ValueError, "poisson_level2: a position is out of range");
        goto done;
    }
    result = PyLong_FromSsize_t(n_late);
done:
    for (int i = 0; i < 6; i++) rel_view(&v[i]);
    return result;
}

/* sums[b] += ext[extra[j]] over row b's segment of extra, for one element type T */
#define ADD_ROWS_LOOP(T)                                                                     \
    do {                                                                                     \
        T *sp = (T *)sums;                                                                   \
        const T *ep = (const T *)ext;                                                        \
        Py_ssize_t j = 0;                                                                    \
        for (Py_ssize_t b = 0; b < r; b++) {                                                 \
            T *acc = sp + b * W;                                                             \
            for (const Py_ssize_t end = j + (Py_ssize_t)deficits[b]; j < end; j++) {         \
                const T *row = ep + extra[j] * W;                                            \
                for (Py_ssize_t l = 0; l < W; l++) acc[l] += row[l];                         \
            }                                                                                \
        }                                                                                    \
    } while (0)

PyDoc_STRVAR(add_rows_doc,
"add_rows(sums, ext, width, extra, deficits, kind)\n\n"
"Adds ext[extra[j]] into sums[b] for the deficits[b] entries of extra that are row b's (row 0's\n"
"first, then row 1's, ...): bleu_core.bootstrap's extra items. sums: r x width, writable; ext:\n"
"n x width; both C-contiguous elements of kind (0: float32, 1: float64, 2: int64); extra int64,\n"
"each in [0, n); deficits int64[r], non-negative, summing to len(extra). ValueError otherwise\n"
"(nothing is added then). Sums are in the element type, in order (exact for the integers of\n"
"bootstrap's bounds).");

/* add_rows' checks of deficits and extra, then its sums, in plain C (no GIL needed): NULL, or the
 * message of the ValueError for the first check that fails (nothing is added then). */
static const char *add_rows_pass(void *sums, const void *ext, Py_ssize_t W, Py_ssize_t r, Py_ssize_t n,
                                 Py_ssize_t total, const int64_t *extra, const int64_t *deficits, int kind) {
    Py_ssize_t sum = 0;
    for (Py_ssize_t b = 0; b < r; b++) {
        if (deficits[b] < 0 || deficits[b] > total - sum)
            return "add_rows: deficits must be non-negative and sum to len(extra)";
        sum += deficits[b];
    }
    if (sum != total) return "add_rows: deficits must be non-negative and sum to len(extra)";
    for (Py_ssize_t j = 0; j < total; j++)
        if (extra[j] < 0 || extra[j] >= n) return "add_rows: an extra item is out of range";
    if (kind == KIND_F32) ADD_ROWS_LOOP(float);
    else if (kind == KIND_F64) ADD_ROWS_LOOP(double);
    else ADD_ROWS_LOOP(int64_t);
    return NULL;
}

static PyObject *k_add_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[4]; /* sums, ext, extra, deficits */
    Py_ssize_t W;
    int kind;
    if (!PyArg_ParseTuple(args, "OOnOOi", &o[0], &o[1], &W, &o[2], &o[3], &kind)) return NULL;
    View v[4];
    for (int i = 0; i < 4; i++) v[i].held = 0;
    PyObject *result = NULL;
    Py_ssize_t size = kind_size(kind), row_bytes, r, n, total, cells;
    const char *bad;
    for (int i = 0; i < 4; i++)
        if (get_view(o[i], &v[i], i == 0) < 0) goto done;
    if (!v[0].held || !v[1].held || !v[2].held || !v[3].held || !size || W < 1 ||
        __builtin_mul_overflow(W, size, &row_bytes)) {
        PyErr_SetString(PyExc_ValueError, "add_rows: missing buffer, unknown kind or bad width");
        goto done;
    }
    r = v[3].view.len / 8;
    n = v[1].view.len / row_bytes;
    total = v[2].view.len / 8;
    if (v[3].view.len % 8 || v[2].view.len % 8 || v[1].view.len % row_bytes ||
        __builtin_mul_overflow(r, row_bytes, &cells) || v[0].view.len != cells) {
        PyErr_SetString(PyExc_ValueError, "add_rows: buffer sizes do not match (sums r x width, ext n x width, "
                                          "deficits int64[r], extra int64)");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    bad = add_rows_pass(v[0].view.buf, v[1].view.buf, W, r, n, total, (const int64_t *)v[2].view.buf,
                        (const int64_t *)v[3].view.buf, kind);
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad);
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (int i = 0; i < 4; i++) rel_view(&v[i]);
    return result;
}

PyDoc_STRVAR(set_isa_doc,
"_set_isa(level) -> int\n\n"
"For tests: the widest build of bootstrap's unchecked loop to use where the CPU has it (2: AVX-512,\n"
"1: AVX2, 0: the generic build); returns the previous level. The sums are the same in every build.");

static PyObject *k_set_isa(PyObject *self, PyObject *args) {
    (void)self;
    int level, previous = isa_cap;
    if (!PyArg_ParseTuple(args, "i", &level)) return NULL;
    if (level < 0 || level > 2) {
        PyErr_SetString(PyExc_ValueError, "_set_isa: level must be 0, 1 or 2");
        return NULL;
    }
    isa_cap = level;
    return PyLong_FromLong(previous);
}

/* ---- libm_each: Python's math.log / math.exp of many float64 values ------------------------------- */

PyDoc_STRVAR(libm_each_doc,
"libm_each(values, out, kind) -> bool\n\n"
"out[i] = log(values[i]) (kind 0) or exp(values[i]) (kind 1): the C library's functions, which Python's\n"
"math.log and math.exp return for these values, so the same doubles bit for bit, without a Python\n"
"float per value. values, out: C-contiguous float64 buffers (format 'd') of one length (out writable).\n"
"Returns False (out partly written) at the first value outside that domain: log of a value that is\n"
"not finite and positive, exp of a value that is not finite or whose exp is not. There Python's\n"
"function raises (log of zero or a negative, exp's overflow) or returns an infinity or a NaN; the\n"
"caller then maps Python's function, which does what it does.");

static PyObject *k_libm_each(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o[2]; /* values, out */
    int kind;
    if (!PyArg_ParseTuple(args, "OOi", &o[0], &o[1], &kind)) return NULL;
    View v[2];
    v[0].held = v[1].held = 0;
    PyObject *result = NULL;
    int ok = 1;
    for (int i = 0; i < 2; i++)
        if (get_typed_view(o[i], &v[i], i == 1, "d", 8, "libm_each") < 0) goto done;
    if ((kind != 0 && kind != 1) || v[0].view.len != v[1].view.len) {
        PyErr_SetString(PyExc_ValueError, "libm_each: values and out must be float64 buffers of one length, "
                                          "kind 0 (log) or 1 (exp)");
        goto done;
    }
    const double *x = (const double *)v[0].view.buf;
    double *y = (double *)v[1].view.buf;
    const Py_ssize_t n = v[0].view.len / 8;
    Py_BEGIN_ALLOW_THREADS
    if (kind == 0) {
        for (Py_ssize_t i = 0; i < n && ok; i++) {
            if (!(isfinite(x[i]) && x[i] > 0.0)) ok = 0;
            else y[i] = log(x[i]);
        }
    } else {
        for (Py_ssize_t i = 0; i < n && ok; i++) {
            if (!isfinite(x[i])) ok = 0;
            else if (!isfinite(y[i] = exp(x[i]))) ok = 0;
        }
    }
    Py_END_ALLOW_THREADS
    result = PyBool_FromLong(ok);
done:
    for (int i = 0; i < 2; i++) rel_view(&v[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"_set_isa", k_set_isa, METH_VARARGS, set_isa_doc},
    {"add_rows", k_add_rows, METH_VARARGS, add_rows_doc},
    {"bootstrap", k_bootstrap, METH_VARARGS, bootstrap_doc},
    {"libm_each", k_libm_each, METH_VARARGS, libm_each_doc},
    {"poisson_level1", k_poisson_level1, METH_VARARGS, poisson_level1_doc},
    {"poisson_level2", k_poisson_level2, METH_VARARGS, poisson_level2_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core._resample", "Poisson bootstrap and randomization kernel.", -1, methods, NULL,
    NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__resample(void) { return PyModule_Create(&module); }
