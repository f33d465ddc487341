/*
 * bleu_core.tokenizers._spm_ids -- SentencePiece's ids of a batch as Arrow-style buffers.
 *
 * SentencePiece returns a batch's piece ids as a list of lists of ints; flatten_ids turns them into
 * int32 values and int64 offsets, the layout bleu_core._bleu.stats_ids counts (spBLEU), without a
 * Python loop over the ids (bleu_core.tokenizers.tokenizer_spm).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

PyDoc_STRVAR(flatten_ids_doc,
"flatten_ids(lists) -> (values, offsets)\n"
"\n"
"A list of lists of ints in 0..2**31-1 (SentencePiece's ids of a batch of lines) as two\n"
"bytearrays: the int32 values one after the other, and the int64 offsets of each list in\n"
"them (len(lists)+1 values). TypeError if an item is not a list or a value not an int,\n"
"ValueError if an int is outside 0..2**31-1.");

static PyObject *k_flatten_ids(PyObject *self, PyObject *lists) {
    (void)self;
    if (!PyList_Check(lists)) { PyErr_SetString(PyExc_TypeError, "flatten_ids takes a list of lists"); return NULL; }
    Py_ssize_t n = PyList_GET_SIZE(lists), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(lists, i);
        if (!PyList_Check(item)) { PyErr_SetString(PyExc_TypeError, "flatten_ids takes a list of lists"); return NULL; }
        total += PyList_GET_SIZE(item);
    }
    PyObject *values = PyByteArray_FromStringAndSize(NULL, total * 4);
    PyObject *offsets = values ? PyByteArray_FromStringAndSize(NULL, (n + 1) * 8) : NULL;
    if (!offsets) { Py_XDECREF(values); return NULL; }
    int32_t *v = (int32_t *)PyByteArray_AS_STRING(values);
    int64_t *o = (int64_t *)PyByteArray_AS_STRING(offsets);
    Py_ssize_t k = 0;
    o[0] = 0;
    /* no Python code runs below (only exact ints are converted, so no __index__), but allocating
       the two buffers may have run some (a collection's __del__): the lists are checked again */
    if (PyList_GET_SIZE(lists) != n) { PyErr_SetString(PyExc_ValueError, "flatten_ids: the lists changed"); goto fail; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(lists, i);
        if (!PyList_Check(item)) { PyErr_SetString(PyExc_TypeError, "flatten_ids takes a list of lists"); goto fail; }
        Py_ssize_t len = PyList_GET_SIZE(item);
        if (k + len > total) { PyErr_SetString(PyExc_ValueError, "flatten_ids: the lists changed"); goto fail; }
        for (Py_ssize_t j = 0; j < len; j++) {
            PyObject *value = PyList_GET_ITEM(item, j);
            if (!PyLong_Check(value)) {
                PyErr_SetString(PyExc_TypeError, "flatten_ids: a value is not an int");
                goto fail;
            }
            int overflow = 0;
            long x = PyLong_AsLongAndOverflow(value, &overflow);
            if (x == -1 && PyErr_Occurred()) goto fail;
            if (overflow || x < 0 || x > INT32_MAX) {
                PyErr_SetString(PyExc_ValueError, "flatten_ids: a value is not an int in 0..2**31-1");
                goto fail;
            }
            v[k++] = (int32_t)x;
        }
        o[i + 1] = k;
    }
    if (k != total) { PyErr_SetString(PyExc_ValueError, "flatten_ids: the lists changed"); goto fail; }
    return Py_BuildValue("(NN)", values, offsets);
fail:
    Py_DECREF(values);
    Py_DECREF(offsets);
    return NULL;
}

static PyMethodDef methods[] = {
    {"flatten_ids", k_flatten_ids, METH_O, flatten_ids_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bleu_core.tokenizers._spm_ids", "SentencePiece ids as Arrow-style buffers.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__spm_ids(void) { return PyModule_Create(&module); }
