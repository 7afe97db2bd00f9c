/* Quantiles of num / den for two independent discrete laws, the denominator positive.
 *
 * The compiled twin of `ratio_grid.Grid.quantiles` for the common case (every denominator
 * value > 0), with the same definitions, so both give the same outcome:
 *
 *   P(num / den <= r) = sum over rows j of w[j] * cum[idx_j(r)],
 *   idx_j(r) = how many numerator values a[k] satisfy a[k] <= r * d[j] (bisect_right),
 *
 * summed over the rows in ascending order, and the quantile for (p, strict) is the
 * (numerator, denominator) of the smallest outcome whose cumulative mass exceeds p (strict)
 * or reaches it, found by walking the outcomes of a bracket in (ratio, probability,
 * numerator, denominator) order from the mass below the bracket; the largest outcome when
 * none crosses.
 *
 * The search differs from the Python one only in how it picks cut points: it bisects the
 * bracket's ends on the order-preserving integer image of doubles (at most 64 halvings,
 * whatever the values), then lists the few outcomes left. Each cut is a merge over the rows:
 * r * d[j] is monotone in j, so each row's index starts where its neighbour's stopped.
 *
 * Arguments: quantiles(num_values, num_probs, num_cumulative, den_values, den_probs, wanted),
 * sequences of floats (num_cumulative one longer than num_values, starting at 0) and a
 * sequence of (p, strict) pairs. Returns a list of (numerator, denominator) pairs, or None
 * when a denominator value is not positive or a value is not finite (the caller then uses
 * the Python search).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LIST_AT 64          /* list the bracket once it holds this many outcomes plus one per row */

typedef struct {
    double ratio, prob, num, den;
} Outcome;

typedef struct {
    const double *a, *pa, *cum;     /* numerator values, probabilities, cumulative (len na + 1) */
    const double *d, *w;            /* denominator values (> 0, ascending), probabilities */
    Py_ssize_t na, nd;
} Grid;

typedef struct {
    double r;                       /* nominal cut point (guides the next pivot only) */
    double mass;                    /* P(num / den <= r) */
    Py_ssize_t *idx;                /* per row: first numerator index beyond r */
} Cut;

/* Doubles in order as unsigned integers, so a midpoint of two images halves the doubles
 * between them. */
static uint64_t order_key(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u >> 63) ? ~u : (u | 0x8000000000000000ULL);
}

static double from_key(uint64_t k)
{
    uint64_t u = (k >> 63) ? (k & 0x7FFFFFFFFFFFFFFFULL) : ~k;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The index of the first numerator value beyond r * d[j], from k on, at most hi. */
static Py_ssize_t row_index(const Grid *g, double r, Py_ssize_t j, Py_ssize_t k, Py_ssize_t hi)
{
    double t = r * g->d[j];
    while (k < hi && g->a[k] <= t)
        k++;
    return k;
}

/* The cut at r, its indices bounded by lo and hi (cuts at or below and at or above r). The
 * rows' indices rise with j for r >= 0 and fall with j for r < 0, so the merge runs up or
 * down the rows; the mass is summed up the rows either way, as the Python search sums it. */
static double cut_at(const Grid *g, double r, const Py_ssize_t *lo, const Py_ssize_t *hi,
                     Py_ssize_t *out)
{
    Py_ssize_t k = 0;
    if (r >= 0) {
        for (Py_ssize_t j = 0; j < g->nd; j++)
            k = out[j] = row_index(g, r, j, k > lo[j] ? k : lo[j], hi[j]);
    } else {
        for (Py_ssize_t j = g->nd - 1; j >= 0; j--)
            k = out[j] = row_index(g, r, j, k > lo[j] ? k : lo[j], hi[j]);
    }
    double mass = 0.0;
    for (Py_ssize_t j = 0; j < g->nd; j++)
        mass += g->w[j] * g->cum[out[j]];
    return mass;
}

static int crossed(double mass, double p, int strict)
{
    return strict ? mass > p : mass >= p;
}

static int by_outcome(const void *x, const void *y)
{
    const Outcome *s = x, *t = y;
    if (s->ratio != t->ratio) return s->ratio < t->ratio ? -1 : 1;
    if (s->prob != t->prob) return s->prob < t->prob ? -1 : 1;
    if (s->num != t->num) return s->num < t->num ? -1 : 1;
    if (s->den != t->den) return s->den < t->den ? -1 : 1;
    return 0;
}

static Py_ssize_t bracket_count(const Grid *g, const Cut *lo, const Cut *hi)
{
    Py_ssize_t count = 0;
    for (Py_ssize_t j = 0; j < g->nd; j++)
        count += hi->idx[j] - lo->idx[j];
    return count;
}

/* One quantile; returns 0, or -1 with MemoryError set. */
static int quantile(const Grid *g, double p, int strict, Cut *lo, Cut *hi, Cut *mid,
                    double *num_out, double *den_out)
{
    Py_ssize_t limit = LIST_AT + g->nd;
    Py_ssize_t count = bracket_count(g, lo, hi);
    while (count > limit) {
        uint64_t klo = order_key(lo->r), khi = order_key(hi->r);
        if (khi - klo < 2)
            break;
        double r = from_key(klo + (khi - klo) / 2);
        mid->r = r;
        mid->mass = cut_at(g, r, lo->idx, hi->idx, mid->idx);
        Cut spare = crossed(mid->mass, p, strict) ? *hi : *lo;
        if (crossed(mid->mass, p, strict))
            *hi = *mid;
        else
            *lo = *mid;
        *mid = spare;
        count = bracket_count(g, lo, hi);
    }

    Outcome *items = PyMem_New(Outcome, count > 0 ? count : 1);   /* NULL on overflow too */
    if (items == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t j = 0; j < g->nd; j++)
        for (Py_ssize_t k = lo->idx[j]; k < hi->idx[j]; k++) {
            items[n].ratio = g->a[k] / g->d[j];
            items[n].prob = g->w[j] * g->pa[k];
            items[n].num = g->a[k];
            items[n].den = g->d[j];
            n++;
        }
    if (n == 0) {
        *num_out = 1.0;
        *den_out = 1.0;
        PyMem_Free(items);
        return 0;
    }
    qsort(items, (size_t)n, sizeof(Outcome), by_outcome);
    double running = lo->mass;
    Py_ssize_t at = n - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        running += items[i].prob;
        if (crossed(running, p, strict)) {
            at = i;
            break;
        }
    }
    *num_out = items[at].num;
    *den_out = items[at].den;
    PyMem_Free(items);
    return 0;
}

/* A sequence of floats as a new C array, *finite cleared when a value is not finite; NULL
 * with an exception set on error. A tuple, not PySequence_Fast's list: an item's __float__
 * may change a list while it is read (and free the items). */
static double *read_doubles(PyObject *seq, Py_ssize_t *len, int *finite)
{
    PyObject *fast = PySequence_Tuple(seq);
    if (fast == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(fast);
    double *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (out == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double x = PyFloat_AsDouble(PyTuple_GET_ITEM(fast, i));
        if (x == -1.0 && PyErr_Occurred()) {
            PyMem_Free(out);
            Py_DECREF(fast);
            return NULL;
        }
        if (!isfinite(x))
            *finite = 0;
        out[i] = x;
    }
    Py_DECREF(fast);
    *len = n;
    return out;
}

/* A (p, strict) pair, as `for p, strict in wanted` takes it: any sequence of two. */
static int read_pair(PyObject *pair, double *p, int *strict)
{
    PyObject *two = PySequence_Tuple(pair);
    if (two == NULL)
        return -1;
    int rc = -1;
    if (PyTuple_GET_SIZE(two) != 2) {
        PyErr_SetString(PyExc_TypeError, "expected (p, strict) pairs");
    } else {
        *p = PyFloat_AsDouble(PyTuple_GET_ITEM(two, 0));
        if (!(*p == -1.0 && PyErr_Occurred()))
            rc = (*strict = PyObject_IsTrue(PyTuple_GET_ITEM(two, 1))) < 0 ? -1 : 0;
    }
    Py_DECREF(two);
    return rc;
}

static PyObject *quantiles(PyObject *self, PyObject *args)
{
    PyObject *num_v, *num_p, *num_c, *den_v, *den_p, *wanted;
    if (!PyArg_ParseTuple(args, "OOOOOO", &num_v, &num_p, &num_c, &den_v, &den_p, &wanted))
        return NULL;

    PyObject *result = NULL;
    double *arrays[5] = {NULL, NULL, NULL, NULL, NULL};
    Py_ssize_t lens[5] = {0, 0, 0, 0, 0};
    PyObject *sources[5] = {num_v, num_p, num_c, den_v, den_p};
    Py_ssize_t *indices = NULL;
    PyObject *fast_wanted = NULL;
    int finite = 1;

    for (int i = 0; i < 5; i++)
        if ((arrays[i] = read_doubles(sources[i], &lens[i], &finite)) == NULL)
            goto done;
    Grid g = {arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], lens[0], lens[3]};
    if (g.na < 1 || g.nd < 1 || lens[1] != g.na || lens[2] != g.na + 1 || lens[4] != g.nd) {
        PyErr_SetString(PyExc_ValueError, "laws of mismatched lengths");
        goto done;
    }
    int usable = finite;
    for (Py_ssize_t j = 0; j < g.nd && usable; j++)
        usable = g.d[j] > 0 && (j == 0 || g.d[j - 1] <= g.d[j]);
    for (Py_ssize_t k = 1; k < g.na && usable; k++)
        usable = g.a[k - 1] <= g.a[k];
    if (!usable) {
        result = Py_NewRef(Py_None);
        goto done;
    }

    fast_wanted = PySequence_Tuple(wanted);     /* a tuple: see read_doubles */
    if (fast_wanted == NULL)
        goto done;
    Py_ssize_t n_wanted = PyTuple_GET_SIZE(fast_wanted);
    indices = PyMem_New(Py_ssize_t, 5 * g.nd);
    if (indices == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t *low_ends = indices, *high_ends = indices + g.nd;
    double total = 0.0;
    for (Py_ssize_t j = 0; j < g.nd; j++) {
        low_ends[j] = 0;
        high_ends[j] = g.na;
        total += g.w[j];
    }
    /* Nominal ends just outside every outcome: they only steer the first pivots. */
    double extremes[4] = {g.a[0] / g.d[0], g.a[0] / g.d[g.nd - 1],
                          g.a[g.na - 1] / g.d[0], g.a[g.na - 1] / g.d[g.nd - 1]};
    double smallest = extremes[0], largest = extremes[0];
    for (int i = 1; i < 4; i++) {
        smallest = fmin(smallest, extremes[i]);
        largest = fmax(largest, extremes[i]);
    }
    smallest = nextafter(smallest, -INFINITY);
    largest = nextafter(largest, INFINITY);

    result = PyList_New(n_wanted);
    if (result == NULL)
        goto done;
    for (Py_ssize_t q = 0; q < n_wanted; q++) {
        double p;
        int strict;
        if (read_pair(PyTuple_GET_ITEM(fast_wanted, q), &p, &strict) < 0) {
            Py_CLEAR(result);
            goto done;
        }
        double num, den;
        if (crossed(0.0, p, strict)) {
            num = -1.0;                 /* as the Python search reports -inf */
            den = 0.0;
        } else {
            Cut lo = {smallest, 0.0, indices + 2 * g.nd};
            Cut hi = {largest, total, indices + 3 * g.nd};
            Cut mid = {0.0, 0.0, indices + 4 * g.nd};
            memcpy(lo.idx, low_ends, (size_t)g.nd * sizeof(Py_ssize_t));
            memcpy(hi.idx, high_ends, (size_t)g.nd * sizeof(Py_ssize_t));
            if (quantile(&g, p, strict, &lo, &hi, &mid, &num, &den) < 0) {
                Py_CLEAR(result);
                goto done;
            }
        }
        PyObject *pair = Py_BuildValue("(dd)", num, den);
        if (pair == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, q, pair);
    }

done:
    for (int i = 0; i < 5; i++)
        PyMem_Free(arrays[i]);
    PyMem_Free(indices);
    Py_XDECREF(fast_wanted);
    return result;
}

static PyMethodDef methods[] = {
    {"quantiles", quantiles, METH_VARARGS,
     "quantiles(num_values, num_probs, num_cumulative, den_values, den_probs, wanted) -> "
     "[(numerator, denominator), ...] or None: see ratio_grid.Grid.quantiles."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ratio_quantiles",
    "Compiled quantile search of ratio_grid for positive denominators.", -1, methods,
};

PyMODINIT_FUNC PyInit__ratio_quantiles(void)
{
    return PyModule_Create(&module);
}
