/*
 * bleu_core/_status.h -- the statuses the metric kernels' plain-C runs return (_bleu.c, _chrf.c,
 * _ter.c), and the exception each one raises once the entry point has the GIL again.
 *
 * Header-only (static inline) so that each extension module gets its own copy and no symbol
 * is exported. Include it after <Python.h>.
 */
#ifndef BLEU_CORE_STATUS_H
#define BLEU_CORE_STATUS_H

/* Statuses of a kernel's run; a function returning a count returns a negative status instead on
   error. */
enum { ST_OK = 0, ST_BAD = -1, ST_NOMEM = -2, ST_PYERR = -3, ST_OVERFLOW = -4 };

/* The kernel's result for status `st`, with the GIL held: None for ST_OK; otherwise NULL with
 * the exception set -- ValueError((row, ref, what)) for ST_BAD, MemoryError, OverflowError
 * naming `metric` (none if NULL) and the row, or the exception already set for ST_PYERR. */
static inline PyObject *status_result(int st, const char *metric, Py_ssize_t row, Py_ssize_t ref,
                                      const char *what) {
    switch (st) {
    case ST_OK:
        Py_RETURN_NONE;
    case ST_BAD: {
        PyObject *e = Py_BuildValue("(nns)", row, ref, what);
        if (e) { PyErr_SetObject(PyExc_ValueError, e); Py_DECREF(e); }
        return NULL;
    }
    case ST_NOMEM:
        return PyErr_NoMemory();
    case ST_OVERFLOW:
        if (metric)
            PyErr_Format(PyExc_OverflowError, "%s statistics: the sum of row %zd into out exceeds int64", metric,
                         row);
        else
            PyErr_Format(PyExc_OverflowError, "statistics: the sum of row %zd into out exceeds int64", row);
        return NULL;
    default: /* ST_PYERR: the exception is set */
        return NULL;
    }
}

#endif /* BLEU_CORE_STATUS_H */
