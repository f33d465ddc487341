/*
 * bleu_core._resample -- the Poisson bootstrap and the randomization test's swaps, for every metric.
 *
 * One call adds each row's statistics, times its weight in each replicate, into that replicate's
 * totals. A weight counts the thresholds at or below a counter-based 64-bit draw: Poisson(1) with
 * bleu_core.bootstrap's thresholds (bootstrap_totals), a fair coin with one threshold at 2**63 (the
 * randomization test's swaps, swap_totals). A row is any metric's int64 statistics vector: the
 * kernel knows widths, never a metric.
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

/* The bootstrap loop (see k_bootstrap), inlined into boot_plain and boot_checked with
 * `checked` a constant. With `checked`, every product is checked with __builtin_mul_overflow
 * and every sum acc + p (both in [0, 2**63 - 1]) is computed in uint64, where it is exact
 * (< 2**64) and exceeds int64 exactly when its top bit is set; OR-ing the sums collects that
 * bit. Returns the first row whose sums overflowed, or -1. */
#define BOOT_ARGS const uint64_t *kp, uint64_t seed_key, const uint64_t *tp, Py_ssize_t K, const int64_t *gp, \
    Py_ssize_t n_sets, const int64_t *sp, Py_ssize_t n, Py_ssize_t width, Py_ssize_t n_boot, int64_t *op
#define BOOT_PASS kp, seed_key, tp, K, gp, n_sets, sp, n, width, n_boot, op

static inline __attribute__((always_inline)) Py_ssize_t
boot_loop(BOOT_ARGS, const int checked) {
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

static NO_VECTORIZE Py_ssize_t boot_plain(BOOT_ARGS) { return boot_loop(BOOT_PASS, 0); }
static NO_VECTORIZE Py_ssize_t boot_checked(BOOT_ARGS) { return boot_loop(BOOT_PASS, 1); }

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

static PyObject *k_bootstrap(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *o_keys, *o_thr, *o_groups, *o_stats, *o_out;
    unsigned long long seed_key;
    Py_ssize_t n_sets, width, n_boot;
    if (!PyArg_ParseTuple(args, "OKOOnOnnO", &o_keys, &seed_key, &o_thr, &o_groups, &n_sets, &o_stats, &width,
                          &n_boot, &o_out))
        return NULL;
    View keys, thr, groups, stats, out;
    View *all[] = {&keys, &thr, &groups, &stats, &out};
    for (int i = 0; i < 5; i++) all[i]->held = 0;
    PyObject *result = NULL;
    if (get_view(o_keys, &keys, 0) < 0 || get_view(o_thr, &thr, 0) < 0 || get_view(o_groups, &groups, 0) < 0 ||
        get_view(o_stats, &stats, 0) < 0 || get_view(o_out, &out, 1) < 0)
        goto done;
    if (!keys.held || !thr.held || !groups.held || !stats.held || !out.held || width < 1 || n_boot < 1 || n_sets < 1) {
        PyErr_SetString(PyExc_ValueError, "bootstrap: missing buffer or bad sizes");
        goto done;
    }
    Py_ssize_t n = keys.view.len / 8, K = thr.view.len / 8;
    Py_ssize_t per_group, set_cells, stat_cells;
    if (__builtin_mul_overflow(n_boot, width, &per_group) || __builtin_mul_overflow(n_sets, n, &set_cells) ||
        __builtin_mul_overflow(n, width, &stat_cells)) {
        PyErr_SetString(PyExc_ValueError, "bootstrap: sizes too large (their products overflow Py_ssize_t)");
        goto done;
    }
    /* n_groups * per_group <= out.view.len / 8, so no index into out below can overflow */
    Py_ssize_t n_groups = out.view.len / 8 / per_group;
    if (groups.view.len / 8 != set_cells || stats.view.len / 8 != stat_cells ||
        out.view.len / 8 != n_groups * per_group) {
        PyErr_SetString(PyExc_ValueError, "bootstrap: buffer lengths do not match n, width, n_boot");
        goto done;
    }
    const uint64_t *kp = (const uint64_t *)keys.view.buf, *tp = (const uint64_t *)thr.view.buf;
    const int64_t *gp = (const int64_t *)groups.view.buf, *sp = (const int64_t *)stats.view.buf;
    int64_t *op = (int64_t *)out.view.buf;
    for (Py_ssize_t j = 0; j < set_cells; j++) {
        if (gp[j] < 0 || gp[j] >= n_groups) {
            PyErr_SetString(PyExc_ValueError, "bootstrap: group index out of range");
            goto done;
        }
    }
    /* Weights are at most K, stats and out are non-negative, and a row is added at most n_sets
     * times into one entry, so every entry of out ends at most
     * max(out) + n_sets * K * sum_i max(stats[i]) = bound. When bound fits int64 (always, with
     * real text) nothing can overflow and the loop runs unchecked; otherwise it checks every
     * operation. */
    int64_t bound = 0, sum_rowmax = 0;
    int checked = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t rowmax = 0;
        for (Py_ssize_t l = 0; l < width; l++) {
            int64_t v = sp[i * width + l];
            if (v < 0) { PyErr_SetString(PyExc_ValueError, "bootstrap: statistics must be non-negative"); goto done; }
            if (v > rowmax) rowmax = v;
        }
        checked |= __builtin_add_overflow(sum_rowmax, rowmax, &sum_rowmax);
    }
    for (Py_ssize_t j = 0; j < n_groups * per_group; j++) {
        if (op[j] < 0) { PyErr_SetString(PyExc_ValueError, "bootstrap: out must start non-negative"); goto done; }
        if (op[j] > bound) bound = op[j];
    }
    checked |= __builtin_mul_overflow(sum_rowmax, (int64_t)K, &sum_rowmax);
    checked |= __builtin_mul_overflow(sum_rowmax, (int64_t)n_sets, &sum_rowmax);
    checked |= __builtin_add_overflow(bound, sum_rowmax, &bound);
    Py_ssize_t bad_row;
    Py_BEGIN_ALLOW_THREADS
    bad_row = (checked ? boot_checked : boot_plain)(kp, (uint64_t)seed_key, tp, K, gp, n_sets, sp, n, width,
                                                    n_boot, op);
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
    for (int i = 0; i < 5; i++) rel_view(all[i]);
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
