/*
 * bleu_core/_buffers.h -- buffer arguments and the shapes of a batch's buffers, shared by the C kernels.
 *
 * Header-only (static inline) so that each extension module gets its own copy and no symbol
 * is exported. Include it after <Python.h>.
 */
#ifndef BLEU_CORE_BUFFERS_H
#define BLEU_CORE_BUFFERS_H

#include <stdint.h>
#include <string.h>

/* A buffer argument held for the duration of a call: None (not held) or C-contiguous bytes. */
typedef struct {
    Py_buffer view;
    int held;
} View;

/* Get the buffer of `o` (nothing for None); -1 with a Python error set if it has none. */
static inline int get_view(PyObject *o, View *v, int writable) {
    v->held = 0;
    if (o == Py_None) return 0;
    if (PyObject_GetBuffer(o, &v->view, writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    v->held = 1;
    return 0;
}

static inline void rel_view(View *v) { if (v->held) PyBuffer_Release(&v->view); }

/* get_view of a buffer that must hold values of one C type, named by its struct format (e.g. "d",
   float64, itemsize 8), which get_view does not ask for: 0, or -1 with ValueError naming `what` when
   the format or item size is another (v then holds nothing), or the error of PyObject_GetBuffer. */
static inline int get_typed_view(PyObject *o, View *v, int writable, const char *format, Py_ssize_t itemsize,
                                 const char *what) {
    v->held = 0;
    const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, &v->view, flags) < 0) return -1;
    v->held = 1;
    if (v->view.itemsize != itemsize || !v->view.format || strcmp(v->view.format, format)) {
        rel_view(v);
        v->held = 0;
        PyErr_Format(PyExc_ValueError, "%s: the buffers must hold format '%s' values", what, format);
        return -1;
    }
    return 0;
}

/* The shapes of a batch's buffers around n rows and m references, checked alike by every
   kernel: n+1 int64 list offsets lo, validity bytes hv/rv (or none), and `out` of width int64
   values per row (per_row) or one row (out NULL: a call with no out buffer, such as _bleu.c's
   stages). -1 with ValueError if not. */
static inline int rows_shape(Py_ssize_t n, Py_ssize_t m, const View *lo, const View *hv, const View *rv,
                             const View *out, int per_row, Py_ssize_t width) {
    Py_ssize_t cells;
    if (n < 0 || m < 0 || lo->view.len / 8 != n + 1) {
        PyErr_SetString(PyExc_ValueError, "offset buffers have inconsistent lengths");
        return -1;
    }
    if ((hv->held && hv->view.len < n) || (rv->held && rv->view.len < m)) {
        PyErr_SetString(PyExc_ValueError, "validity buffers are too short");
        return -1;
    }
    if (out && (__builtin_mul_overflow(per_row ? n : 1, width, &cells) || out->view.len / 8 != cells ||
                out->view.len % 8)) {
        PyErr_SetString(PyExc_ValueError, "out buffer has the wrong size");
        return -1;
    }
    return 0;
}

/* rows_shape for n candidates (n+1 int64 offsets ho) and m references (m+1 offsets ro). */
static inline int batch_shape(const View *ho, const View *ro, const View *lo, const View *hv, const View *rv,
                              const View *out, int per_row, Py_ssize_t width, Py_ssize_t *pn, Py_ssize_t *pm) {
    Py_ssize_t n = ho->view.len / 8 - 1, m = ro->view.len / 8 - 1;
    if (rows_shape(n, m, lo, hv, rv, out, per_row, width) < 0) return -1;
    *pn = n;
    *pm = m;
    return 0;
}

/* The views of one system of a stats_many call, a (data, offsets, valid, out) tuple: data,
   offsets and out required, valid optional, out writable. -1 with TypeError if not. */
static inline int get_system_views(PyObject *t, View v[4]) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4) {
        PyErr_SetString(PyExc_TypeError, "systems must be a sequence of (data, offsets, valid, out) tuples");
        return -1;
    }
    for (int i = 0; i < 4; i++)
        if (get_view(PyTuple_GET_ITEM(t, i), v + i, i == 3) < 0) return -1;
    if (!v[0].held || !v[1].held || !v[3].held) {
        PyErr_SetString(PyExc_TypeError, "data, offsets and out buffers are required");
        return -1;
    }
    return 0;
}

/* One system of a stats_many call: its candidates and its out. */
typedef struct {
    const uint8_t *hdata, *hval;
    const int64_t *hoff;
    int64_t *out;
} Sys;

/* The systems of a stats_many call (`seq`, a PySequence_Fast of (data, offsets, valid, out)
   tuples) held in views (four per system: get_system_views) and checked into sys against the
   references' offsets ro, list offsets lo and validity rv (batch_shape, out of width values per
   row or one row): the number of rows into *pn, of references into *pm. -1 with TypeError or
   ValueError if one cannot be used. */
static inline int get_systems(PyObject *seq, View *views, Sys *sys, const View *ro, const View *lo, const View *rv,
                              int per_row, Py_ssize_t width, Py_ssize_t *pn, Py_ssize_t *pm) {
    for (Py_ssize_t s = 0; s < PySequence_Fast_GET_SIZE(seq); s++) {
        View *v = views + 4 * s;
        if (get_system_views(PySequence_Fast_GET_ITEM(seq, s), v) < 0 ||
            batch_shape(v + 1, ro, lo, v + 2, rv, v + 3, per_row, width, pn, pm) < 0)
            return -1;
        sys[s].hdata = (const uint8_t *)v[0].view.buf;
        sys[s].hoff = (const int64_t *)v[1].view.buf;
        sys[s].hval = v[2].held ? (const uint8_t *)v[2].view.buf : NULL;
        sys[s].out = (int64_t *)v[3].view.buf;
        if (sys[s].hoff[0] < 0 || sys[s].hoff[*pn] > v[0].view.len) {
            PyErr_SetString(PyExc_ValueError, "offsets point outside their data");
            return -1;
        }
    }
    return 0;
}

#endif /* BLEU_CORE_BUFFERS_H */
