/*
 * bleu_core._resample -- the Poisson bootstrap and the randomization test's swaps, for every metric.
 *
 * One call adds each row's statistics, times its weight in each replicate, into that replicate's
 * totals. A weight counts the thresholds at or below a counter-based 64-bit draw: Poisson(1) with
 * bleu_core.bootstrap's thresholds (bootstrap_totals), a fair coin with one threshold at 2**63 (the
 * randomization test's swaps, swap_totals). A row is any metric's int64 statistics vector: the
 * kernel knows widths, never a metric.
 *
 * The entry point only parses and checks its arguments into a Boot (boot_check); run_bootstrap
 * bounds the totals, picks the checked or the unchecked loop by that bound and runs it, in plain
 * C without the GIL, and returns the row that overflowed, which the entry point turns into its
 * OverflowError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_buffers.h" /* View, get_view, rel_view: shared with _bleu.c and _chrf.c */

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27; x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
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
            uint64_t x = mix64(k + (uint64_t)(b + 1) * 0x9E3779B97F4A7C15ULL);
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
    return checked ? boot_checked(bt) : boot_plain(bt);
}

PyDoc_STRVAR(bootstrap_doc,
"bootstrap(row_keys, seed_key, thresholds, groups, n_sets, stats, width, n_boot, out)\n\n"
"Adds w[b, i] * stats[i] into out[groups[s, i], b] for every row i, replicate b and grouping\n"
"set s, where w[b, i] = #{k : thresholds[k] <= mix(mix(row_keys[i] ^ seed_key) + (b + 1) * G)}\n"
"(G = 0x9E3779B97F4A7C15, mix = splitmix64's finaliser): bleu_core.bootstrap.weights, fused.\n"
"row_keys uint64[n]; thresholds uint64[K] ascending; groups int64[n_sets, n] (indices into out);\n"
"stats int64[n, width]; out int64[n_groups, n_boot, width], C-contiguous, written in place.\n"
"stats and out must be non-negative. Products and sums are checked: OverflowError instead of\n"
"wrapping (out is then partly updated); ValueError for sizes whose products do not fit\n"
"Py_ssize_t or do not match the buffers.");

/* The buffers v (keys, thresholds, groups, stats, out) and sizes of a bootstrap call, checked into
 * bt: 0, or -1 with ValueError. */
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
    for (Py_ssize_t j = 0; j < set_cells; j++) {
        if (bt->groups[j] < 0 || bt->groups[j] >= n_groups) {
            PyErr_SetString(PyExc_ValueError, "bootstrap: group index out of range");
            return -1;
        }
    }
    for (Py_ssize_t j = 0; j < stat_cells; j++) {
        if (bt->stats[j] < 0) {
            PyErr_SetString(PyExc_ValueError, "bootstrap: statistics must be non-negative");
            return -1;
        }
    }
    for (Py_ssize_t j = 0; j < n_groups * per_group; j++) {
        if (bt->out[j] < 0) {
            PyErr_SetString(PyExc_ValueError, "bootstrap: out must start non-negative");
            return -1;
        }
    }
    return 0;
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
    Py_ssize_t bad_row;
    for (int i = 0; i < 5; i++)
        if (get_view(o[i], &v[i], i == 4) < 0) goto done;
    if (boot_check(&bt, v, (uint64_t)seed_key, n_sets, width, n_boot) < 0) goto done;
    Py_BEGIN_ALLOW_THREADS
    bad_row = run_bootstrap(&bt);
    Py_END_ALLOW_THREADS
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

static PyMethodDef methods[] = {
    {"bootstrap", k_bootstrap, METH_VARARGS, bootstrap_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core._resample", "Poisson bootstrap and randomization kernel.", -1, methods, NULL,
    NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__resample(void) { return PyModule_Create(&module); }
