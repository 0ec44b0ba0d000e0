/*
 * _kcast.c -- the C extension of the Python package kcast: thin types over
 * the public C API (include/kcast.h) and nothing else.  Python code in
 * kcast/ builds the user-facing API (DataFrames, scikit-learn estimator,
 * Kernel Tuner helpers) on these.
 *
 * Arrays cross by the buffer protocol: a C-contiguous float64 array is
 * read in place and predictions are written into arrays the caller made,
 * so numpy data is not copied.  The GIL is released around every call that
 * computes (batch prediction, training, emulation, reading a dataset, a
 * tuning space); a single prediction keeps it (releasing costs more than
 * the call).  Every failure raises KcastError (status: the KCAST_E_* name)
 * with kcast_last_error()'s text, or TypeError/ValueError for arguments of
 * the wrong kind.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kcast.h"

static PyObject *KcastError;

/* Prediction(value, lower, upper): a struct sequence (a named tuple made
   in C, cheaper than collections.namedtuple for one prediction). */
static PyTypeObject PredictionType;
static PyStructSequence_Field pred_fields[] = {
    {"value", "the point prediction (ns, W or J: the target's unit)"},
    {"lower", "the interval's lower end"},
    {"upper", "the interval's upper end"},
    {NULL, NULL}};
static PyStructSequence_Desc pred_desc = {"kcast.Prediction",
                                          "One prediction and its interval.", pred_fields, 3};

static PyObject *prediction(double v, double lo, double hi) {
  PyObject *p = PyStructSequence_New(&PredictionType);
  if (!p) return NULL;
  PyObject *a = PyFloat_FromDouble(v), *b = PyFloat_FromDouble(lo), *c = PyFloat_FromDouble(hi);
  if (!a || !b || !c) {
    Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
    Py_DECREF(p);
    return NULL;
  }
  PyStructSequence_SET_ITEM(p, 0, a);
  PyStructSequence_SET_ITEM(p, 1, b);
  PyStructSequence_SET_ITEM(p, 2, c);
  return p;
}

/* Raise KcastError for status st with the library's last error. */
static PyObject *raise_status(kcast_status st) {
  PyObject *msg = PyUnicode_FromString(kcast_last_error());
  if (!msg) return NULL;
  PyObject *e = PyObject_CallOneArg(KcastError, msg);
  Py_DECREF(msg);
  if (!e) return NULL;
  PyObject *name = PyUnicode_FromString(kcast_status_name(st));
  if (name) {
    PyObject_SetAttrString(e, "status", name);
    Py_DECREF(name);
  }
  PyErr_SetObject(KcastError, e);
  Py_DECREF(e);
  return NULL;
}

/* A C-contiguous buffer of doubles (ndim dims) from obj; writable when
   asked.  0, or -1 with TypeError/ValueError set. */
static int get_doubles(PyObject *obj, Py_buffer *v, int ndim, int writable, const char *what) {
  int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj, v, flags)) {
    PyErr_Format(PyExc_TypeError, "%s: a C-contiguous float64 array is needed", what);
    return -1;
  }
  if (!v->format || strcmp(v->format, "d") || v->ndim != ndim || v->itemsize != sizeof(double)) {
    PyBuffer_Release(v);
    PyErr_Format(PyExc_TypeError, "%s: a %d-D C-contiguous float64 array is needed", what, ndim);
    return -1;
  }
  return 0;
}

/* The UTF-8 of every str of a list or tuple into names[n] (borrowed from
   the str objects, which the list or tuple keeps alive); PyMem_Free it. */
static const char **utf8_list(PyObject *seq, Py_ssize_t *n, const char *what) {
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
    PyErr_Format(PyExc_TypeError, "%s: a list or tuple of str is needed", what);
    return NULL;
  }
  Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
  const char **names = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *names);
  if (!names) { PyErr_NoMemory(); return NULL; }
  for (Py_ssize_t i = 0; i < k; i++) {
    PyObject *s = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyUnicode_Check(s) || !(names[i] = PyUnicode_AsUTF8(s))) {
      PyMem_Free(names);
      if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: names must be str", what);
      return NULL;
    }
  }
  *n = k;
  return names;
}

/* -------------------------------------------------------------- Features -- */

typedef struct {
  PyObject_HEAD
  kcast_features *fs;
  PyObject *owner;  /* a TuneSpace whose set this is (then fs is not ours) */
} FeaturesObject;

static PyTypeObject FeaturesType;

static PyObject *features_wrap(kcast_features *fs, PyObject *owner) {
  FeaturesObject *o = PyObject_New(FeaturesObject, &FeaturesType);
  if (!o) {
    if (!owner) kcast_features_free(fs);
    return NULL;
  }
  o->fs = fs;
  o->owner = owner;
  Py_XINCREF(owner);
  return (PyObject *)o;
}

static PyObject *Features_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
  PyObject *init = NULL;
  static char *kwl[] = {"values", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwl, &init)) return NULL;
  kcast_features *fs = NULL;
  kcast_status st = kcast_features_new(&fs);
  if (st) return raise_status(st);
  FeaturesObject *o = (FeaturesObject *)t->tp_alloc(t, 0);
  if (!o) { kcast_features_free(fs); return NULL; }
  o->fs = fs;
  o->owner = NULL;
  if (init && init != Py_None) {
    PyObject *items = PyMapping_Items(init);
    if (!items) { Py_DECREF(o); return NULL; }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
      PyObject *kv = PyList_GET_ITEM(items, i);
      PyObject *k = PyTuple_GET_ITEM(kv, 0), *v = PyTuple_GET_ITEM(kv, 1);
      const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
      double x = PyFloat_AsDouble(v);
      if (!name || (x == -1.0 && PyErr_Occurred())) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "feature names must be str");
        Py_DECREF(items);
        Py_DECREF(o);
        return NULL;
      }
      if ((st = kcast_features_set(fs, name, x))) {
        Py_DECREF(items);
        Py_DECREF(o);
        return raise_status(st);
      }
    }
    Py_DECREF(items);
  }
  return (PyObject *)o;
}

static void Features_dealloc(FeaturesObject *o) {
  if (o->owner) Py_DECREF(o->owner);
  else kcast_features_free(o->fs);
  Py_TYPE(o)->tp_free((PyObject *)o);
}

static Py_ssize_t Features_len(FeaturesObject *o) { return (Py_ssize_t)kcast_features_count(o->fs); }

static PyObject *Features_getitem(FeaturesObject *o, PyObject *key) {
  const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
  if (!name) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "feature names are str");
    return NULL;
  }
  double v;
  if (kcast_features_get(o->fs, name, &v)) {
    PyErr_SetObject(PyExc_KeyError, key);
    return NULL;
  }
  return PyFloat_FromDouble(v);
}

static int Features_setitem(FeaturesObject *o, PyObject *key, PyObject *val) {
  if (o->owner) {
    PyErr_SetString(PyExc_TypeError, "the features of a tuning space are read-only");
    return -1;
  }
  if (!val) {
    PyErr_SetString(PyExc_TypeError, "features cannot be deleted");
    return -1;
  }
  const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
  if (!name) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "feature names are str");
    return -1;
  }
  double x = PyFloat_AsDouble(val);
  if (x == -1.0 && PyErr_Occurred()) return -1;
  kcast_status st = kcast_features_set(o->fs, name, x);
  if (st) { raise_status(st); return -1; }
  return 0;
}

static PyObject *Features_to_dict(FeaturesObject *o, PyObject *unused) {
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  size_t n = kcast_features_count(o->fs);
  for (size_t i = 0; i < n; i++) {
    const char *name = kcast_features_name(o->fs, i);
    double v = 0;
    kcast_features_get(o->fs, name, &v);
    PyObject *x = PyFloat_FromDouble(v);
    if (!x || PyDict_SetItemString(d, name, x)) { Py_XDECREF(x); Py_DECREF(d); return NULL; }
    Py_DECREF(x);
  }
  return d;
}

static PyObject *Features_keys(FeaturesObject *o, PyObject *unused) {
  size_t n = kcast_features_count(o->fs);
  PyObject *l = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; l && i < n; i++) {
    PyObject *s = PyUnicode_FromString(kcast_features_name(o->fs, i));
    if (!s) { Py_DECREF(l); return NULL; }
    PyList_SET_ITEM(l, (Py_ssize_t)i, s);
  }
  return l;
}

static PyMappingMethods Features_mapping = {(lenfunc)Features_len, (binaryfunc)Features_getitem,
                                            (objobjargproc)Features_setitem};

static PyMethodDef Features_methods[] = {
    {"to_dict", (PyCFunction)Features_to_dict, METH_NOARGS, "The features as a dict."},
    {"keys", (PyCFunction)Features_keys, METH_NOARGS, "The feature names, in insertion order."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject FeaturesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kcast._kcast.Features",
    .tp_basicsize = sizeof(FeaturesObject),
    .tp_dealloc = (destructor)Features_dealloc,
    .tp_as_mapping = &Features_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Named feature values of one kernel launch (docs/features.md).",
    .tp_methods = Features_methods,
    .tp_new = Features_new,
};

/* ----------------------------------------------------------------- Model -- */

typedef struct {
  PyObject_HEAD
  kcast_model *m;
  PyObject *names;      /* tuple of the feature names (str), model order */
  kcast_features *row;  /* scratch set of every feature, model order, for
                           predict_dict (written under the GIL only) */
} ModelObject;

static PyTypeObject ModelType;

static PyObject *model_wrap(PyTypeObject *t, kcast_model *m) {
  ModelObject *o = (ModelObject *)t->tp_alloc(t, 0);
  if (!o) { kcast_model_free(m); return NULL; }
  o->m = m;
  size_t n = kcast_model_nfeatures(m);
  o->names = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; o->names && i < n; i++) {
    PyObject *s = PyUnicode_FromString(kcast_model_feature_name(m, i));
    if (!s) { Py_DECREF(o); return NULL; }
    PyUnicode_InternInPlace(&s);
    PyTuple_SET_ITEM(o->names, (Py_ssize_t)i, s);
  }
  if (!o->names) { Py_DECREF(o); return NULL; }
  return (PyObject *)o;
}

static PyObject *Model_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
  PyObject *path;
  static char *kwl[] = {"path", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", kwl, PyUnicode_FSConverter, &path)) return NULL;
  kcast_model *m = NULL;
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_model_load(PyBytes_AS_STRING(path), &m);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return raise_status(st);
  return model_wrap(t, m);
}

static void Model_dealloc(ModelObject *o) {
  kcast_model_free(o->m);
  kcast_features_free(o->row);
  Py_XDECREF(o->names);
  Py_TYPE(o)->tp_free((PyObject *)o);
}

/* The Prediction of a kcast_prediction. */
static PyObject *pred_tuple(const kcast_prediction *p) { return prediction(p->value, p->lo, p->hi); }

/* predict_features(features, gpu=None, coverage=0.9) -> (value, lo, hi) */
static PyObject *Model_predict_features(ModelObject *o, PyObject *const *a, Py_ssize_t na) {
  if (na < 1 || na > 3 || !PyObject_TypeCheck(a[0], &FeaturesType)) {
    PyErr_SetString(PyExc_TypeError, "predict_features(features, gpu=None, coverage=0.9)");
    return NULL;
  }
  const char *gpu = NULL;
  double cov = 0.9;
  if (na > 1 && a[1] != Py_None && !(gpu = PyUnicode_AsUTF8(a[1]))) return NULL;
  if (na > 2 && (cov = PyFloat_AsDouble(a[2])) == -1.0 && PyErr_Occurred()) return NULL;
  kcast_prediction p;
  kcast_status st = kcast_predict_gpu(o->m, gpu, ((FeaturesObject *)a[0])->fs, cov, &p);
  if (st) return raise_status(st);
  return pred_tuple(&p);
}

/* predict_dict(dict, gpu=None, coverage=0.9) -> Prediction: the model's
   features looked up in the dict (hashes cached in the interned names).
   When the dict holds all of them, they go into the model's scratch set
   (laid out in the model's order, so the library finds each at once) and
   kcast_predict_gpu predicts; else the ones it holds go to
   kcast_predict_matrix, which fills the rest as for a set that lacks them. */
static PyObject *Model_predict_dict(ModelObject *o, PyObject *const *a, Py_ssize_t na) {
  if (na < 1 || na > 3 || !PyDict_Check(a[0])) {
    PyErr_SetString(PyExc_TypeError, "predict_dict(dict, gpu=None, coverage=0.9)");
    return NULL;
  }
  const char *gpu = NULL;
  double cov = 0.9;
  if (na > 1 && a[1] != Py_None && !(gpu = PyUnicode_AsUTF8(a[1]))) return NULL;
  if (na > 2 && (cov = PyFloat_AsDouble(a[2])) == -1.0 && PyErr_Occurred()) return NULL;
  Py_ssize_t P = PyTuple_GET_SIZE(o->names), k = 0;
  double vstack[256];
  const char *nstack[256];
  double *vals = P <= 256 ? vstack : PyMem_Malloc((size_t)P * sizeof *vals);
  const char **names = P <= 256 ? nstack : PyMem_Malloc((size_t)P * sizeof *names);
  PyObject *res = NULL;
  if (!vals || !names) { PyErr_NoMemory(); goto out; }
  for (Py_ssize_t j = 0; j < P; j++) {
    PyObject *name = PyTuple_GET_ITEM(o->names, j);
    PyObject *v = PyDict_GetItemWithError(a[0], name);
    if (!v) {
      if (PyErr_Occurred()) goto out;
      continue; /* the library fills it, or names it as missing */
    }
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) goto out;
    vals[k] = x;
    names[k++] = PyUnicode_AsUTF8(name);
  }
  kcast_status st;
  if (k == P && P > 0) {
    if (!o->row) {
      if ((st = kcast_features_new(&o->row))) { raise_status(st); goto out; }
      for (Py_ssize_t j = 0; j < P; j++)
        if ((st = kcast_features_set(o->row, names[j], 0))) {
          kcast_features_free(o->row);
          o->row = NULL;
          raise_status(st);
          goto out;
        }
    }
    for (Py_ssize_t j = 0; j < P; j++)
      if ((st = kcast_features_set_at(o->row, (size_t)j, vals[j]))) {
        /* not finite: the matrix path names it */
        k = -1;
        break;
      }
    if (k == P) {
      kcast_prediction p;
      if ((st = kcast_predict_gpu(o->m, gpu, o->row, cov, &p))) { raise_status(st); goto out; }
      res = pred_tuple(&p);
      goto out;
    }
    k = P;
  }
  double pr, lo, hi;
  st = kcast_predict_matrix(o->m, gpu, vals, 1, (size_t)k, (size_t)k, names, cov, &pr, &lo, &hi, 1);
  if (st) { raise_status(st); goto out; }
  res = prediction(pr, lo, hi);
out:
  if (vals != vstack) PyMem_Free(vals);
  if (names != nstack) PyMem_Free(names);
  return res;
}

/* predict_matrix(x, names, gpu, coverage, pred, lo, hi, threads): x a 2-D
   float64 array (rows x len(names)), pred/lo/hi 1-D float64 arrays of the
   rows (lo/hi may be None).  The GIL is released. */
static PyObject *Model_predict_matrix(ModelObject *o, PyObject *args) {
  PyObject *x, *names, *gpuo, *pred, *lo, *hi;
  double cov;
  int threads;
  if (!PyArg_ParseTuple(args, "OOOdOOOi", &x, &names, &gpuo, &cov, &pred, &lo, &hi, &threads))
    return NULL;
  const char *gpu = NULL;
  if (gpuo != Py_None && !(gpu = PyUnicode_AsUTF8(gpuo))) return NULL;
  Py_buffer vx, vp, vl = {0}, vh = {0};
  Py_ssize_t nn = 0;
  const char **nm = utf8_list(names, &nn, "feature_names");
  if (!nm) return NULL;
  PyObject *res = NULL;
  int have_lo = lo != Py_None;
  if (get_doubles(x, &vx, 2, 0, "X")) { PyMem_Free(nm); return NULL; }
  if (get_doubles(pred, &vp, 1, 1, "pred")) goto out_x;
  if (have_lo && (get_doubles(lo, &vl, 1, 1, "lo") || get_doubles(hi, &vh, 1, 1, "hi"))) goto out_p;
  size_t rows = (size_t)vx.shape[0], cols = (size_t)vx.shape[1];
  if ((Py_ssize_t)cols != nn || vp.shape[0] != vx.shape[0] ||
      (have_lo && (vl.shape[0] != vx.shape[0] || vh.shape[0] != vx.shape[0]))) {
    PyErr_Format(PyExc_ValueError, "X has %zu columns for %zd names (and %zu rows)", cols, nn, rows);
    goto out_l;
  }
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_predict_matrix(o->m, gpu, vx.buf, rows, cols, cols, nm, cov, vp.buf,
                            have_lo ? vl.buf : NULL, have_lo ? vh.buf : NULL, threads);
  Py_END_ALLOW_THREADS
  if (st) raise_status(st);
  else res = Py_NewRef(Py_None);
out_l:
  if (have_lo) {
    if (vl.obj) PyBuffer_Release(&vl);
    if (vh.obj) PyBuffer_Release(&vh);
  }
out_p:
  PyBuffer_Release(&vp);
out_x:
  PyBuffer_Release(&vx);
  PyMem_Free(nm);
  return res;
}

/* check_features(features, gpu=None) -> (flags, feature or None):
   kcast_predict_check. */
static PyObject *Model_check_features(ModelObject *o, PyObject *args) {
  PyObject *f, *gpuo = Py_None;
  if (!PyArg_ParseTuple(args, "O!|O", &FeaturesType, &f, &gpuo)) return NULL;
  const char *gpu = NULL;
  if (gpuo != Py_None && !(gpu = PyUnicode_AsUTF8(gpuo))) return NULL;
  unsigned flags = 0;
  const char *feat = NULL;
  kcast_status st = kcast_predict_check(o->m, gpu, ((FeaturesObject *)f)->fs, &flags, &feat);
  if (st) return raise_status(st);
  if (feat) return Py_BuildValue("(Is)", flags, feat);
  return Py_BuildValue("(IO)", flags, Py_None);
}

static PyObject *Model_save(ModelObject *o, PyObject *arg) {
  PyObject *path;
  if (!PyUnicode_FSConverter(arg, &path)) return NULL;
  kcast_status st = kcast_model_save(o->m, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (st) return raise_status(st);
  Py_RETURN_NONE;
}

static PyObject *Model_get_feature_names(ModelObject *o, void *c) { return Py_NewRef(o->names); }
static PyObject *Model_get_gpu(ModelObject *o, void *c) {
  return PyUnicode_FromString(kcast_model_gpu(o->m));
}
static PyObject *Model_get_target(ModelObject *o, void *c) {
  const char *t = kcast_model_target_name(o->m);
  return PyUnicode_FromString(t ? t : "");
}
static PyObject *Model_get_ntrees(ModelObject *o, void *c) {
  return PyLong_FromSize_t(kcast_model_ntrees(o->m));
}
static PyObject *Model_get_nrows(ModelObject *o, void *c) {
  return PyLong_FromUnsignedLongLong(kcast_model_nrows(o->m));
}
static PyObject *Model_get_importances(ModelObject *o, void *c) {
  size_t n = kcast_model_nfeatures(o->m);
  PyObject *l = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; l && i < n; i++) {
    PyObject *v = PyFloat_FromDouble(kcast_model_importance(o->m, i));
    if (!v) { Py_DECREF(l); return NULL; }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  return l;
}

static PyGetSetDef Model_getset[] = {
    {"feature_names", (getter)Model_get_feature_names, NULL, "the features the model reads", NULL},
    {"gpu", (getter)Model_get_gpu, NULL, "the GPU(s) it was trained on, comma-separated", NULL},
    {"target", (getter)Model_get_target, NULL, "the target's name (time, power, a column)", NULL},
    {"n_trees", (getter)Model_get_ntrees, NULL, "trees of the forest", NULL},
    {"n_rows", (getter)Model_get_nrows, NULL, "training rows", NULL},
    {"importances", (getter)Model_get_importances, NULL, "impurity importance per feature", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Model_methods[] = {
    {"predict_features", (PyCFunction)(void (*)(void))Model_predict_features, METH_FASTCALL,
     "predict_features(features, gpu=None, coverage=0.9) -> (value, lo, hi)"},
    {"predict_dict", (PyCFunction)(void (*)(void))Model_predict_dict, METH_FASTCALL,
     "predict_dict(dict, gpu=None, coverage=0.9) -> (value, lo, hi)"},
    {"predict_matrix", (PyCFunction)Model_predict_matrix, METH_VARARGS,
     "predict_matrix(X, names, gpu, coverage, pred, lo, hi, threads): fill pred/lo/hi"},
    {"save", (PyCFunction)Model_save, METH_O, "save(path): write the .kcm file"},
    {"check_features", (PyCFunction)Model_check_features, METH_VARARGS,
     "check_features(features, gpu=None) -> (flags, feature or None)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kcast._kcast.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A trained forest (.kcm).",
    .tp_methods = Model_methods,
    .tp_getset = Model_getset,
    .tp_new = Model_new,
};

/* train(x, names, y, n_trees, max_features, min_leaf, max_depth,
   extra_trees, bootstrap, log_target, calibrate, bins, seed, threads,
   base, target, gpu) -> Model.  The GIL is released while it trains. */
static PyObject *py_train(PyObject *self, PyObject *args) {
  PyObject *x, *names, *y, *base, *target, *gpu;
  unsigned n_trees, min_leaf, max_depth, bins;
  double max_features;
  int extra, boot, logt, calib, threads;
  unsigned long long seed;
  if (!PyArg_ParseTuple(args, "OOOIdIIiiiiIKiOOO", &x, &names, &y, &n_trees, &max_features,
                        &min_leaf, &max_depth, &extra, &boot, &logt, &calib, &bins, &seed,
                        &threads, &base, &target, &gpu))
    return NULL;
  kcast_train_params p = KCAST_TRAIN_PARAMS_INIT;
  p.n_trees = n_trees;
  p.max_features = max_features;
  p.min_leaf = min_leaf;
  p.max_depth = max_depth;
  p.extra_trees = extra;
  p.bootstrap = boot;
  p.log_target = logt;
  p.calibrate = calib;
  p.bins = bins;
  p.seed = seed;
  p.threads = threads;
  if ((base != Py_None && !(p.base = PyUnicode_AsUTF8(base))) ||
      (target != Py_None && !(p.target = PyUnicode_AsUTF8(target))) ||
      (gpu != Py_None && !(p.gpu = PyUnicode_AsUTF8(gpu))))
    return NULL;
  Py_ssize_t nn;
  const char **nm = utf8_list(names, &nn, "feature_names");
  if (!nm) return NULL;
  Py_buffer vx, vy;
  PyObject *res = NULL;
  if (get_doubles(x, &vx, 2, 0, "X")) { PyMem_Free(nm); return NULL; }
  if (get_doubles(y, &vy, 1, 0, "y")) goto out_x;
  if (vx.shape[1] != nn || vy.shape[0] != vx.shape[0]) {
    PyErr_Format(PyExc_ValueError, "X is %zd x %zd, y has %zd values, %zd feature names",
                 vx.shape[0], vx.shape[1], vy.shape[0], nn);
    goto out_y;
  }
  kcast_model *m = NULL;
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_model_train(vx.buf, (size_t)vx.shape[0], (size_t)vx.shape[1], (size_t)vx.shape[1], nm,
                         vy.buf, &p, &m);
  Py_END_ALLOW_THREADS
  if (st) raise_status(st);
  else res = model_wrap(&ModelType, m);
out_y:
  PyBuffer_Release(&vy);
out_x:
  PyBuffer_Release(&vx);
  PyMem_Free(nm);
  return res;
}

/* cv_folds(n, k, seed, out): out a writable uint32 array of n. */
static PyObject *py_cv_folds(PyObject *self, PyObject *args) {
  Py_ssize_t n;
  unsigned k;
  unsigned long long seed;
  PyObject *out;
  if (!PyArg_ParseTuple(args, "nIKO", &n, &k, &seed, &out)) return NULL;
  Py_buffer v;
  if (PyObject_GetBuffer(out, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE)) return NULL;
  if (v.itemsize != 4 || v.len != n * 4 || !v.format || (strcmp(v.format, "I") && strcmp(v.format, "=I") && strcmp(v.format, "<I"))) {
    PyBuffer_Release(&v);
    PyErr_SetString(PyExc_TypeError, "cv_folds: out must be a uint32 array of n");
    return NULL;
  }
  kcast_status st = n < 0 ? KCAST_E_ARG : kcast_cv_folds((size_t)n, k, seed, v.buf);
  PyBuffer_Release(&v);
  if (st) return raise_status(st);
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------- features -- */

/* One argument of features_from_ptx: ("scalar", bits) or ("buffer",
   bytes, fill, seed). */
static int parse_arg(PyObject *t, kcast_arg *a) {
  memset(a, 0, sizeof *a);
  const char *kind;
  unsigned long long b1 = 0, b2 = 0;
  int fill = 0;
  if (!PyArg_ParseTuple(t, "sK|iK", &kind, &b1, &fill, &b2)) return -1;
  if (!strcmp(kind, "scalar")) {
    a->kind = KCAST_ARG_SCALAR;
    a->bits = b1;
  } else if (!strcmp(kind, "buffer")) {
    a->kind = KCAST_ARG_BUFFER;
    a->bytes = b1;
    a->fill = (kcast_fill)fill;
    a->seed = b2;
  } else {
    PyErr_Format(PyExc_ValueError, "argument kind '%s' (scalar or buffer)", kind);
    return -1;
  }
  return 0;
}

/* features_from_ptx(path, kernel, grid, block, shared, sample, args, oob,
   budget, time_limit, threads, racecheck) -> Features */
static PyObject *py_features_from_ptx(PyObject *self, PyObject *args) {
  PyObject *path, *kernel, *arglist;
  unsigned g0, g1, g2, b0, b1, b2;
  unsigned long long shared, sample, budget;
  int oob, threads, race;
  double tlim;
  if (!PyArg_ParseTuple(args, "O&O(III)(III)KKOiKdip", PyUnicode_FSConverter, &path, &kernel, &g0,
                        &g1, &g2, &b0, &b1, &b2, &shared, &sample, &arglist, &oob, &budget, &tlim,
                        &threads, &race))
    return NULL;
  const char *kn = NULL;
  PyObject *res = NULL;
  kcast_arg *av = NULL;
  if (kernel != Py_None && !(kn = PyUnicode_AsUTF8(kernel))) goto out;
  PyObject *fast = PySequence_Fast(arglist, "args must be a sequence");
  if (!fast) goto out;
  Py_ssize_t na = PySequence_Fast_GET_SIZE(fast);
  av = PyMem_Calloc((size_t)(na ? na : 1), sizeof *av);
  if (!av) { Py_DECREF(fast); PyErr_NoMemory(); goto out; }
  for (Py_ssize_t i = 0; i < na; i++)
    if (parse_arg(PySequence_Fast_GET_ITEM(fast, i), &av[i])) { Py_DECREF(fast); goto out; }
  Py_DECREF(fast);
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  c.grid[0] = g0; c.grid[1] = g1; c.grid[2] = g2;
  c.block[0] = b0; c.block[1] = b1; c.block[2] = b2;
  c.shared_bytes = shared;
  c.sample_ctas = sample;
  c.args = av;
  c.nargs = (size_t)na;
  c.insn_budget = budget;
  c.time_limit_s = tlim;
  c.threads = threads;
  c.oob = oob;
  c.racecheck = race;
  kcast_features *fs = NULL;
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_features_from_ptx(PyBytes_AS_STRING(path), kn, &c, &fs);
  Py_END_ALLOW_THREADS
  if (st) raise_status(st);
  else res = features_wrap(fs, NULL);
out:
  PyMem_Free(av);
  Py_DECREF(path);
  return res;
}

static PyObject *py_features_from_launch(PyObject *self, PyObject *args) {
  PyObject *path;
  long long id;
  if (!PyArg_ParseTuple(args, "O&L", PyUnicode_FSConverter, &path, &id)) return NULL;
  kcast_features *fs = NULL;
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_features_from_launch(PyBytes_AS_STRING(path), id, &fs);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return raise_status(st);
  return features_wrap(fs, NULL);
}

/* features_from_op(description[, gpu[, model]]) -> (Features, assumed);
   with gpu, kcast_features_from_op_gpu (model a _kcast.Model or None) */
static PyObject *py_features_from_op(PyObject *self, PyObject *args) {
  const char *desc, *gpu = NULL;
  PyObject *mo = Py_None;
  if (!PyArg_ParseTuple(args, "s|zO", &desc, &gpu, &mo)) return NULL;
  if (mo != Py_None && !PyObject_TypeCheck(mo, &ModelType)) {
    PyErr_SetString(PyExc_TypeError, "features_from_op: model must be a kcast.Model or None");
    return NULL;
  }
  char assumed[1024];
  kcast_features *fs = NULL;
  kcast_status st;
  if (gpu) {
    const kcast_model *m = mo != Py_None ? ((ModelObject *)mo)->m : NULL;
    Py_BEGIN_ALLOW_THREADS
    st = kcast_features_from_op_gpu(desc, m, gpu, assumed, sizeof assumed, &fs);
    Py_END_ALLOW_THREADS
  } else {
    st = kcast_features_from_op(desc, assumed, sizeof assumed, &fs);
  }
  if (st) return raise_status(st);
  PyObject *f = features_wrap(fs, NULL);
  if (!f) return NULL;
  return Py_BuildValue("(Ns)", f, assumed);
}

/* analytic(features, gpu) -> (time_ns, lo, hi, power_w, lo, hi) */
static PyObject *py_analytic(PyObject *self, PyObject *args) {
  PyObject *f;
  const char *gpu;
  if (!PyArg_ParseTuple(args, "O!s", &FeaturesType, &f, &gpu)) return NULL;
  kcast_prediction t, p;
  kcast_status st = kcast_predict_analytic(gpu, ((FeaturesObject *)f)->fs, &t, &p);
  if (st) return raise_status(st);
  return Py_BuildValue("(dddddd)", t.value, t.lo, t.hi, p.value, p.lo, p.hi);
}

/* gpus() -> list of dicts */
static PyObject *py_gpus(PyObject *self, PyObject *unused) {
  size_t n = kcast_gpu_count();
  PyObject *l = PyList_New(0);
  for (size_t i = 0; l && i < n; i++) {
    kcast_gpu_desc d;
    d.size = sizeof d;
    if (kcast_gpu_info(i, &d)) { Py_DECREF(l); return raise_status(KCAST_E_NOTFOUND); }
    PyObject *row = Py_BuildValue(
        "{s:s,s:s,s:s,s:s,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "name", d.name, "full_name",
        d.full_name, "aliases", d.aliases, "cc", "", "sms", d.sms, "boost_mhz", d.boost_mhz,
        "fp32_gflops", d.fp32_gflops, "fp64_gflops", d.fp64_gflops, "mem_bw_gbs", d.mem_bw_gbs,
        "mem_gb", d.mem_gb, "l2_mb", d.l2_mb, "tdp_w", d.tdp_w);
    if (!row) { Py_DECREF(l); return NULL; }
    PyObject *cc = PyUnicode_FromFormat("%d.%d", d.cc_major, d.cc_minor);
    if (!cc || PyDict_SetItemString(row, "cc", cc) || PyList_Append(l, row)) {
      Py_XDECREF(cc);
      Py_DECREF(row);
      Py_DECREF(l);
      return NULL;
    }
    Py_DECREF(cc);
    Py_DECREF(row);
  }
  return l;
}

/* ------------------------------------------------------- feature models -- */

typedef struct {
  PyObject_HEAD
  kcast_featmodel *fm;
} FeatModelObject;

static PyObject *FeatModel_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
  PyObject *path;
  static char *kwl[] = {"path", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", kwl, PyUnicode_FSConverter, &path)) return NULL;
  kcast_featmodel *fm = NULL;
  kcast_status st = kcast_featmodel_load(PyBytes_AS_STRING(path), &fm);
  Py_DECREF(path);
  if (st) return raise_status(st);
  FeatModelObject *o = (FeatModelObject *)t->tp_alloc(t, 0);
  if (!o) { kcast_featmodel_free(fm); return NULL; }
  o->fm = fm;
  return (PyObject *)o;
}

static void FeatModel_dealloc(FeatModelObject *o) {
  kcast_featmodel_free(o->fm);
  Py_TYPE(o)->tp_free((PyObject *)o);
}

/* fill((gx,gy,gz), (bx,by,bz), shared, args: sequence of float, instance
   or None) -> (Features, flags) */
static PyObject *FeatModel_fill(FeatModelObject *o, PyObject *args) {
  unsigned g[3], b[3];
  unsigned long long shared;
  PyObject *seq, *inst;
  if (!PyArg_ParseTuple(args, "(III)(III)KOO", &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &shared,
                        &seq, &inst))
    return NULL;
  const char *in = NULL;
  if (inst != Py_None && !(in = PyUnicode_AsUTF8(inst))) return NULL;
  PyObject *fast = PySequence_Fast(seq, "args must be a sequence of numbers");
  if (!fast) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  double *av = PyMem_Calloc((size_t)(n ? n : 1), sizeof *av);
  if (!av) { Py_DECREF(fast); return PyErr_NoMemory(); }
  for (Py_ssize_t i = 0; i < n; i++) {
    av[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, i));
    if (av[i] == -1.0 && PyErr_Occurred()) { Py_DECREF(fast); PyMem_Free(av); return NULL; }
  }
  Py_DECREF(fast);
  kcast_features *fs = NULL;
  kcast_status st = kcast_featmodel_features_new(o->fm, &fs);
  unsigned flags = 0;
  if (!st)
    st = in ? kcast_featmodel_fill_instance(o->fm, in, NULL, 0, g, b, shared, av, (size_t)n, fs,
                                            &flags)
            : kcast_featmodel_fill(o->fm, g, b, shared, av, (size_t)n, fs, &flags);
  PyMem_Free(av);
  if (st) { kcast_features_free(fs); return raise_status(st); }
  PyObject *f = features_wrap(fs, NULL);
  if (!f) return NULL;
  return Py_BuildValue("(NI)", f, flags);
}

static PyObject *FeatModel_get_kernel(FeatModelObject *o, void *c) {
  return PyUnicode_FromString(kcast_featmodel_kernel(o->fm));
}
static PyObject *FeatModel_get_arg_params(FeatModelObject *o, void *c) {
  size_t n = kcast_featmodel_nargs(o->fm);
  PyObject *l = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; l && i < n; i++) {
    PyObject *v = PyLong_FromLong(kcast_featmodel_arg_param(o->fm, i));
    if (!v) { Py_DECREF(l); return NULL; }
    PyList_SET_ITEM(l, (Py_ssize_t)i, v);
  }
  return l;
}
static PyObject *FeatModel_get_heldout(FeatModelObject *o, void *c) {
  return PyFloat_FromDouble(kcast_featmodel_heldout_error(o->fm));
}

static PyGetSetDef FeatModel_getset[] = {
    {"kernel", (getter)FeatModel_get_kernel, NULL, "the kernel (or template) it models", NULL},
    {"arg_params", (getter)FeatModel_get_arg_params, NULL, "parameters whose values it reads", NULL},
    {"heldout_error", (getter)FeatModel_get_heldout, NULL, "median held-out relative error", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef FeatModel_methods[] = {
    {"fill", (PyCFunction)FeatModel_fill, METH_VARARGS,
     "fill(grid, block, shared, args, instance) -> (Features, flags)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject FeatModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kcast._kcast.FeatureModel",
    .tp_basicsize = sizeof(FeatModelObject),
    .tp_dealloc = (destructor)FeatModel_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A kernel's feature model (.kcf).",
    .tp_methods = FeatModel_methods,
    .tp_getset = FeatModel_getset,
    .tp_new = FeatModel_new,
};

/* -------------------------------------------------------------- datasets -- */

/* read_dataset(path) -> (names, columns): columns[j] a bytes object of
   doubles, or a list of str for a text column. */
static PyObject *py_read_dataset(PyObject *self, PyObject *args) {
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
  kcast_table *t = NULL;
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_dataset_read(PyBytes_AS_STRING(path), &t);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return raise_status(st);
  size_t nr = kcast_table_nrows(t), nc = kcast_table_ncols(t);
  PyObject *names = PyList_New((Py_ssize_t)nc), *cols = PyList_New((Py_ssize_t)nc);
  for (size_t j = 0; names && cols && j < nc; j++) {
    PyObject *nm = PyUnicode_FromString(kcast_table_colname(t, j)), *col;
    const double *num = kcast_table_numbers(t, j);
    if (num) {
      col = PyBytes_FromStringAndSize((const char *)num, (Py_ssize_t)(nr * sizeof(double)));
    } else {
      col = PyList_New((Py_ssize_t)nr);
      for (size_t i = 0; col && i < nr; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(kcast_table_text(t, j, i),
                                           (Py_ssize_t)strlen(kcast_table_text(t, j, i)),
                                           "replace");
        if (!s) { Py_CLEAR(col); break; }
        PyList_SET_ITEM(col, (Py_ssize_t)i, s);
      }
    }
    if (!nm || !col) {
      Py_XDECREF(nm);
      Py_XDECREF(col);
      Py_CLEAR(names);
      break;
    }
    PyList_SET_ITEM(names, (Py_ssize_t)j, nm);
    PyList_SET_ITEM(cols, (Py_ssize_t)j, col);
  }
  kcast_table_free(t);
  if (!names || !cols) { Py_XDECREF(names); Py_XDECREF(cols); return NULL; }
  return Py_BuildValue("(NNn)", names, cols, (Py_ssize_t)nr);
}

/* ----------------------------------------------------------- tune spaces -- */

typedef struct {
  PyObject_HEAD
  kcast_tunespace *ts;
} TuneSpaceObject;

static PyTypeObject TuneSpaceType;

/* A tuple/list of str into a PyMem array of UTF-8 pointers (borrowed). */
static const char **str_array(PyObject *seq, Py_ssize_t *n, const char *what) {
  if (seq == Py_None) { *n = 0; return PyMem_Malloc(sizeof(char *)); }
  return utf8_list(seq, n, what);
}

/* TuneSpace(source, kernel, problem_size(3), scalar, grid_div(3),
   block_size_names, names, values(flat), args, consts, copts, arch,
   shared, sample, jobs) -- computes the space (GIL released). */
static PyObject *TuneSpace_new(PyTypeObject *t, PyObject *a, PyObject *kw) {
  PyObject *src, *kernel, *gdiv, *bnames, *names, *values, *args, *consts, *copts, *arch;
  long long p0, p1, p2;
  int scalar;
  unsigned long long shared, sample;
  unsigned jobs;
  if (!PyArg_ParseTuple(a, "O&O(LLL)pOOOOOOOOKKI", PyUnicode_FSConverter, &src, &kernel, &p0, &p1,
                        &p2, &scalar, &gdiv, &bnames, &names, &values, &args, &consts, &copts,
                        &arch, &shared, &sample, &jobs))
    return NULL;
  kcast_tunespace_spec s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  s.source = PyBytes_AS_STRING(src);
  s.problem_size[0] = p0;
  s.problem_size[1] = p1;
  s.problem_size[2] = p2;
  s.problem_size_scalar = scalar;
  s.shared_bytes = shared;
  s.sample_ctas = sample;
  s.jobs = jobs;
  Py_ssize_t nn = 0, nv = 0, na = 0, nc = 0, no = 0, ng = 0;
  const char **vn = NULL, **vv = NULL, **va = NULL, **vc = NULL, **vo = NULL, **vg = NULL;
  PyObject *res = NULL;
  if (!(s.kernel = PyUnicode_AsUTF8(kernel))) goto out;
  if (bnames != Py_None && !(s.block_size_names = PyUnicode_AsUTF8(bnames))) goto out;
  if (arch != Py_None && !(s.arch = PyUnicode_AsUTF8(arch))) goto out;
  if (!(vg = utf8_list(gdiv, &ng, "grid_div")) || ng != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "grid_div: three entries ('' for none)");
    goto out;
  }
  for (int d = 0; d < 3; d++) s.grid_div[d] = vg[d][0] ? vg[d] : NULL;
  if (!(vn = str_array(names, &nn, "names")) || !(vv = str_array(values, &nv, "values")) ||
      !(va = str_array(args, &na, "args")) || !(vc = str_array(consts, &nc, "consts")) ||
      !(vo = str_array(copts, &no, "compiler_options")))
    goto out;
  if (!nn || nv % nn) {
    PyErr_Format(PyExc_ValueError, "%zd values for %zd parameters", nv, nn);
    goto out;
  }
  s.nparams = (size_t)nn;
  s.param_names = vn;
  s.nconfigs = (size_t)(nv / nn);
  s.values = vv;
  s.args = va;
  s.nargs = (size_t)na;
  s.consts = vc;
  s.nconsts = (size_t)nc;
  s.compiler_options = vo;
  s.ncompiler_options = (size_t)no;
  kcast_tunespace *ts = NULL;
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_tunespace_compute(&s, &ts);
  Py_END_ALLOW_THREADS
  if (st) { raise_status(st); goto out; }
  TuneSpaceObject *o = (TuneSpaceObject *)t->tp_alloc(t, 0);
  if (!o) { kcast_tunespace_free(ts); goto out; }
  o->ts = ts;
  res = (PyObject *)o;
out:
  PyMem_Free(vn);
  PyMem_Free(vv);
  PyMem_Free(va);
  PyMem_Free(vc);
  PyMem_Free(vo);
  PyMem_Free(vg);
  Py_DECREF(src);
  return res;
}

static void TuneSpace_dealloc(TuneSpaceObject *o) {
  kcast_tunespace_free(o->ts);
  Py_TYPE(o)->tp_free((PyObject *)o);
}

static Py_ssize_t TuneSpace_len(TuneSpaceObject *o) {
  return (Py_ssize_t)kcast_tunespace_count(o->ts);
}

/* entry(i) -> (key, Features or None, error or None, grid, block) */
static PyObject *TuneSpace_entry(TuneSpaceObject *o, PyObject *arg) {
  Py_ssize_t i = PyLong_AsSsize_t(arg);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0 || (size_t)i >= kcast_tunespace_count(o->ts)) {
    PyErr_SetString(PyExc_IndexError, "configuration index out of range");
    return NULL;
  }
  const kcast_features *fs = kcast_tunespace_features(o->ts, (size_t)i);
  const char *err = kcast_tunespace_error(o->ts, (size_t)i);
  unsigned g[3], b[3];
  kcast_tunespace_geometry(o->ts, (size_t)i, g, b);
  PyObject *f = fs ? features_wrap((kcast_features *)fs, (PyObject *)o) : Py_NewRef(Py_None);
  if (!f) return NULL;
  PyObject *e = err ? PyUnicode_DecodeUTF8(err, (Py_ssize_t)strlen(err), "replace") : Py_NewRef(Py_None);
  if (!e) { Py_DECREF(f); return NULL; }
  return Py_BuildValue("(sNN(III)(III))", kcast_tunespace_key(o->ts, (size_t)i), f, e, g[0], g[1],
                       g[2], b[0], b[1], b[2]);
}

/* write(path, device_name, time_ns: float64 array) */
static PyObject *TuneSpace_write(TuneSpaceObject *o, PyObject *args) {
  PyObject *path, *times;
  const char *dev;
  if (!PyArg_ParseTuple(args, "O&sO", PyUnicode_FSConverter, &path, &dev, &times)) return NULL;
  Py_buffer v;
  if (get_doubles(times, &v, 1, 0, "time_ns")) { Py_DECREF(path); return NULL; }
  PyObject *res = NULL;
  if ((size_t)v.shape[0] != kcast_tunespace_count(o->ts)) {
    PyErr_Format(PyExc_ValueError, "time_ns has %zd values for %zu configurations", v.shape[0],
                 kcast_tunespace_count(o->ts));
  } else {
    kcast_status st = kcast_tunespace_write(o->ts, PyBytes_AS_STRING(path), dev, v.buf);
    if (st) raise_status(st);
    else res = Py_NewRef(Py_None);
  }
  PyBuffer_Release(&v);
  Py_DECREF(path);
  return res;
}

static PySequenceMethods TuneSpace_seq = {.sq_length = (lenfunc)TuneSpace_len};

static PyMethodDef TuneSpace_methods[] = {
    {"entry", (PyCFunction)TuneSpace_entry, METH_O,
     "entry(i) -> (key, features or None, error or None, grid, block)"},
    {"write", (PyCFunction)TuneSpace_write, METH_VARARGS,
     "write(path, device_name, time_ns): a Kernel Tuner cachefile"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject TuneSpaceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kcast._kcast.TuneSpace",
    .tp_basicsize = sizeof(TuneSpaceObject),
    .tp_dealloc = (destructor)TuneSpace_dealloc,
    .tp_as_sequence = &TuneSpace_seq,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The features of every configuration of a Kernel Tuner tuning space.",
    .tp_methods = TuneSpace_methods,
    .tp_new = TuneSpace_new,
};

/* ------------------------------------------------------------ benchmarks -- */

#include <time.h>

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* _bench_c(model, features_list, calls) -> (ns per kcast_predict call,
   rows/s of kcast_predict_batch over the list on OpenMP's threads): the C
   API's own figures on the very objects the Python side predicts, for
   make bench to compare with (bench/py_bench.py). */
static PyObject *py_bench_c(PyObject *self, PyObject *args) {
  PyObject *model, *list;
  Py_ssize_t calls;
  if (!PyArg_ParseTuple(args, "O!O!n", &ModelType, &model, &PyList_Type, &list, &calls)) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(list);
  if (n < 1 || calls < 1) { PyErr_SetString(PyExc_ValueError, "nothing to time"); return NULL; }
  const kcast_features **fs = PyMem_Malloc((size_t)n * sizeof *fs);
  kcast_prediction *out = PyMem_Malloc((size_t)n * sizeof *out);
  if (!fs || !out) { PyMem_Free(fs); PyMem_Free(out); return PyErr_NoMemory(); }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *f = PyList_GET_ITEM(list, i);
    if (!PyObject_TypeCheck(f, &FeaturesType)) {
      PyMem_Free(fs);
      PyMem_Free(out);
      PyErr_SetString(PyExc_TypeError, "a list of Features");
      return NULL;
    }
    fs[i] = ((FeaturesObject *)f)->fs;
  }
  kcast_model *m = ((ModelObject *)model)->m;
  kcast_prediction p;
  double t0 = mono_s(), sink = 0;
  for (Py_ssize_t i = 0; i < calls; i++) {
    kcast_predict(m, fs[i % n], 0.9, &p);
    sink += p.value;
  }
  double per = (mono_s() - t0) / (double)calls * 1e9;
  double t1 = mono_s();
  kcast_status st;
  Py_BEGIN_ALLOW_THREADS
  st = kcast_predict_batch(m, fs, (size_t)n, 0.9, out);
  Py_END_ALLOW_THREADS
  double rate = (double)n / (mono_s() - t1);
  PyMem_Free(fs);
  PyMem_Free(out);
  if (st) return raise_status(st);
  return Py_BuildValue("(dd)", per + 0 * sink, rate);
}

/* ---------------------------------------------------------------- module -- */

static PyObject *py_version(PyObject *self, PyObject *unused) {
  return PyUnicode_FromString(kcast_version());
}

static PyMethodDef module_methods[] = {
    {"version", py_version, METH_NOARGS, "The library's version."},
    {"train", py_train, METH_VARARGS, "Train a forest on a matrix (kcast_model_train)."},
    {"cv_folds", py_cv_folds, METH_VARARGS, "kcast cv's k-fold assignment (kcast_cv_folds)."},
    {"features_from_ptx", py_features_from_ptx, METH_VARARGS, "Emulate one launch."},
    {"features_from_launch", py_features_from_launch, METH_VARARGS, "A dataset's launch."},
    {"features_from_op", py_features_from_op, METH_VARARGS, "An operator launch's features."},
    {"analytic", py_analytic, METH_VARARGS, "The analytic estimate of a launch on a GPU."},
    {"gpus", py_gpus, METH_NOARGS, "The GPU table."},
    {"read_dataset", py_read_dataset, METH_VARARGS, "A dataset as columns."},
    {"_bench_c", py_bench_c, METH_VARARGS, "The C API's figures on given objects (make bench)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kcast._kcast",
                                    "The C extension of kcast (include/kcast.h).", -1,
                                    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__kcast(void);
PyMODINIT_FUNC PyInit__kcast(void) {
  if (kcast_check_version(KCAST_VERSION_MAJOR, sizeof(kcast_launch_config))) {
    PyErr_SetString(PyExc_ImportError, kcast_last_error());
    return NULL;
  }
  if (PyStructSequence_InitType2(&PredictionType, &pred_desc) < 0) return NULL;
  if (PyType_Ready(&FeaturesType) < 0 || PyType_Ready(&ModelType) < 0 ||
      PyType_Ready(&FeatModelType) < 0 || PyType_Ready(&TuneSpaceType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  KcastError = PyErr_NewExceptionWithDoc(
      "kcast.KcastError", "A failure of libkcast; .status is the KCAST_E_* name.",
      PyExc_RuntimeError, NULL);
  if (!KcastError || PyModule_AddObjectRef(m, "KcastError", KcastError) ||
      PyModule_AddObjectRef(m, "Features", (PyObject *)&FeaturesType) ||
      PyModule_AddObjectRef(m, "Prediction", (PyObject *)&PredictionType) ||
      PyModule_AddObjectRef(m, "Model", (PyObject *)&ModelType) ||
      PyModule_AddObjectRef(m, "FeatureModel", (PyObject *)&FeatModelType) ||
      PyModule_AddObjectRef(m, "TuneSpace", (PyObject *)&TuneSpaceType)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
