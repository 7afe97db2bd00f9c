/* The rocprofv3 kernel-trace scan of `rocprof_trace_scan`, in C: the same per-kernel totals,
 * the same rows left out, for the same reasons, in the same words.
 *
 * The Python scanner is the reference. It reads the data rows in blocks of whole lines (a
 * block of `block` bytes, plus the start of a line carried over, cut after its last newline)
 * and hands each block to the csv module's default dialect, which starts afresh at every block.
 * This file does the same: the same blocks, and a parser that follows the csv module's reader
 * state by state (delimiter ',', quote '"' doubled inside quotes, no escape character, not
 * strict, a field limit), then the same checks per row. Bytes are latin-1 text to the Python
 * scanner, so one byte is one character here.
 *
 * Memory: one block, the line carried over (at most `max_line` bytes), four field buffers and
 * one entry per distinct kernel name. Every length is checked before it is used; hostile
 * input gives skipped rows, never a read out of bounds.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Growing byte buffers                                                                      */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

typedef struct {
    const char *data;
    Py_ssize_t len;
    int joined;                      /* data is the copy buffer's */
} Text;

static int
buf_reserve(Buf *b, Py_ssize_t need)
{
    if (need <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int
buf_append(Buf *b, const char *from, Py_ssize_t n)
{
    if (n > PY_SSIZE_T_MAX - b->len || buf_reserve(b, b->len + n) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    memcpy(b->data + b->len, from, (size_t)n);
    b->len += n;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Per-kernel totals: an open-addressing table over entries kept in the order they were first
 * counted (the order `TraceScan.kernels` gets). Sums stay in int64 until one would overflow;
 * then the int64 part is moved into a Python int (`big_total`), as Python's ints never
 * overflow. A duration beyond int64 (timestamps of 19+ digits) goes to the Python ints. */

typedef struct {
    char *name;
    Py_ssize_t len;
    uint64_t hash;
    int64_t total, calls, longest;   /* longest < 0: none in int64 yet */
    PyObject *big_total;             /* NULL or a Python int added to `total` */
    PyObject *big_longest;           /* NULL or a Python int longer than int64 */
} Kernel;

typedef struct {
    Kernel *entries;
    Py_ssize_t count, cap;
    Py_ssize_t *slots;               /* index + 1 into entries; 0 = empty */
    Py_ssize_t nslots;               /* a power of two, at least twice count */
} Kernels;

static uint64_t
hash_bytes(const char *p, Py_ssize_t n)
{
    /* Eight bytes a step: names are long (hundreds of bytes) and hashed once a row. */
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, (size_t)n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

static int
kernels_grow(Kernels *k)
{
    Py_ssize_t nslots = k->nslots ? k->nslots * 2 : 64;
    Py_ssize_t *slots = PyMem_Calloc((size_t)nslots, sizeof(Py_ssize_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k->count; i++) {
        size_t at = (size_t)k->entries[i].hash & (size_t)(nslots - 1);
        while (slots[at])
            at = (at + 1) & (size_t)(nslots - 1);
        slots[at] = i + 1;
    }
    PyMem_Free(k->slots);
    k->slots = slots;
    k->nslots = nslots;
    return 0;
}

static Kernel *
kernels_get(Kernels *k, const char *name, Py_ssize_t len)
{
    if (2 * (k->count + 1) > k->nslots && kernels_grow(k) < 0)
        return NULL;
    uint64_t h = hash_bytes(name, len);
    size_t at = (size_t)h & (size_t)(k->nslots - 1);
    while (k->slots[at]) {
        Kernel *e = &k->entries[k->slots[at] - 1];
        if (e->hash == h && e->len == len && memcmp(e->name, name, (size_t)len) == 0)
            return e;
        at = (at + 1) & (size_t)(k->nslots - 1);
    }
    if (k->count == k->cap) {
        Py_ssize_t cap = k->cap ? k->cap * 2 : 32;
        Kernel *entries = PyMem_Realloc(k->entries, (size_t)cap * sizeof(Kernel));
        if (entries == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        k->entries = entries;
        k->cap = cap;
    }
    Kernel *e = &k->entries[k->count];
    memset(e, 0, sizeof(*e));
    e->name = PyMem_Malloc(len ? (size_t)len : 1);
    if (e->name == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(e->name, name, (size_t)len);
    e->len = len;
    e->hash = h;
    e->longest = -1;
    k->slots[at] = ++k->count;
    return e;
}

static void
kernels_free(Kernels *k)
{
    for (Py_ssize_t i = 0; i < k->count; i++) {
        PyMem_Free(k->entries[i].name);
        Py_XDECREF(k->entries[i].big_total);
        Py_XDECREF(k->entries[i].big_longest);
    }
    PyMem_Free(k->entries);
    PyMem_Free(k->slots);
}

/* big += value (a new reference is kept in *big) */
static int
big_add(PyObject **big, PyObject *value)
{
    if (*big == NULL) {
        Py_INCREF(value);
        *big = value;
        return 0;
    }
    PyObject *sum = PyNumber_Add(*big, value);
    if (sum == NULL)
        return -1;
    Py_SETREF(*big, sum);
    return 0;
}

static int
big_add_int64(PyObject **big, int64_t value)
{
    PyObject *v = PyLong_FromLongLong(value);
    if (v == NULL)
        return -1;
    int rc = big_add(big, v);
    Py_DECREF(v);
    return rc;
}

static int
kernel_add(Kernel *e, int64_t ns)
{
    int64_t sum;
    if (__builtin_add_overflow(e->total, ns, &sum)) {
        /* move what was summed so far out of int64, then start again from this row */
        if (big_add_int64(&e->big_total, e->total) < 0)
            return -1;
        e->total = ns;
    }
    else {
        e->total = sum;
    }
    e->calls++;
    if (ns > e->longest)
        e->longest = ns;
    return 0;
}

static int
kernel_add_big(Kernel *e, PyObject *ns)
{
    if (big_add(&e->big_total, ns) < 0)
        return -1;
    e->calls++;
    if (e->big_longest == NULL) {
        Py_INCREF(ns);
        e->big_longest = ns;
        return 0;
    }
    int longer = PyObject_RichCompareBool(ns, e->big_longest, Py_GT);
    if (longer < 0)
        return -1;
    if (longer)
        Py_SETREF(e->big_longest, Py_NewRef(ns));
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The scan's state                                                                          */

enum { KIND, NAME, START, END, WANTED };

typedef struct {
    /* the header */
    Py_ssize_t column[WANTED];       /* column index of each wanted field; -1: no Kind */
    Py_ssize_t width;
    Py_ssize_t field_limit;          /* csv.field_size_limit() */
    PyObject *nul_error;             /* the csv module's message for a NUL, or NULL: allowed */
    /* the csv reader's state within a row */
    int state;
    Py_ssize_t fields;               /* fields saved in this row */
    Py_ssize_t field_len;            /* characters in the field being read */
    int wanted;                      /* which of column[] the current field is, or -1 */
    signed char *wanted_at;          /* per column: which of column[] it is, or -1 */
    Text value[WANTED];              /* the wanted fields' text: in the block, or in copy[] */
    Buf copy[WANTED];                /* a field in pieces ("" inside quotes) joined */
    unsigned char ends_plain[256];   /* characters that end a run of unquoted text */
    Py_ssize_t cache[64];            /* recent kernels by a cheap key: index + 1, 0 = none */
    /* results */
    Kernels kernels;
    Py_ssize_t rows, used, filtered, skipped;
    PyObject *examples;              /* list of str, as Skips.examples */
    Py_ssize_t max_examples;
} Scan;

/* The csv module's reader states that the default dialect reaches. */
enum { START_RECORD, START_FIELD, IN_FIELD, IN_QUOTED_FIELD, QUOTE_IN_QUOTED_FIELD };

/* Skips.skip(why, records): count, and keep the reason while fewer than max_examples are kept.
 * `why` is built only while it can still be kept (a format and its arguments). */
static int
skip_n(Scan *s, Py_ssize_t records, const char *format, ...)
{
    s->skipped += records;
    if (PyList_GET_SIZE(s->examples) >= s->max_examples)
        return 0;
    va_list args;
    va_start(args, format);
    PyObject *why = PyUnicode_FromFormatV(format, args);
    va_end(args);
    if (why == NULL)
        return -1;
    int known = PySequence_Contains(s->examples, why);
    int rc = known < 0 ? -1 : known ? 0 : PyList_Append(s->examples, why);
    Py_DECREF(why);
    return rc;
}

static void
start_field(Scan *s)
{
    s->field_len = 0;
    s->wanted = s->fields < s->width ? s->wanted_at[s->fields] : -1;
    if (s->wanted >= 0) {
        s->value[s->wanted].len = 0;
        s->value[s->wanted].joined = 0;
    }
}

static void
start_record(Scan *s)
{
    s->state = START_RECORD;
    s->fields = 0;
    start_field(s);
}

/* ---------------------------------------------------------------------------------------- */
/* One row, as `rocprof_trace_scan._csv_row` reads it                                        */

/* str.strip()'s whitespace among latin-1 characters */
static int
is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == 0x85
           || c == 0xa0;
}

/* A timestamp as `_timestamp` reads it: stripped, ASCII digits only, then int(). 1 with
 * *small set when it fits int64 (at most 18 digits), 1 with *big set (a new reference) for
 * more, 0 when it is no whole number (int() refusing too many digits included), -1 on error. */
static int
timestamp(const Text *b, int64_t *small, PyObject **big)
{
    const unsigned char *p = (const unsigned char *)b->data, *e = p + b->len;
    *big = NULL;
    if (b->len > 0 && b->len <= 18) {             /* the usual case: digits only */
        int64_t v = 0;
        const unsigned char *q = p;
        for (; q < e && (unsigned)(*q - '0') < 10; q++)
            v = v * 10 + (*q - '0');
        if (q == e) {
            *small = v;
            return 1;
        }
    }
    while (p < e && is_space(*p))
        p++;
    while (e > p && is_space(e[-1]))
        e--;
    if (p == e)
        return 0;
    for (const unsigned char *q = p; q < e; q++)
        if (*q < '0' || *q > '9')
            return 0;
    if (e - p <= 18) {
        int64_t v = 0;
        for (; p < e; p++)
            v = v * 10 + (*p - '0');
        *small = v;
        return 1;
    }
    PyObject *text = PyBytes_FromStringAndSize((const char *)p, e - p);  /* NUL-terminated */
    if (text == NULL)
        return -1;
    *big = PyLong_FromString(PyBytes_AS_STRING(text), NULL, 10);
    Py_DECREF(text);
    if (*big == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError))    /* the int max str digits limit */
            return -1;
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* The entry of a kernel name. Traces repeat a few names over and over, so a small cache keyed
 * by the length and the first and last bytes saves hashing the whole name (often hundreds of
 * bytes) on most rows; the name is still compared whole. */
static Kernel *
kernel_of(Scan *s, const Text *name)
{
    uint64_t head = 0, tail = 0;
    Py_ssize_t n = name->len < 8 ? name->len : 8;
    memcpy(&head, name->data, (size_t)n);
    memcpy(&tail, name->data + name->len - n, (size_t)n);
    uint64_t key = ((head * 0x9E3779B97F4A7C15ull) ^ tail ^ (uint64_t)name->len)
                   * 0xFF51AFD7ED558CCDull;
    Py_ssize_t *hit = &s->cache[key >> 58];
    if (*hit) {
        Kernel *e = &s->kernels.entries[*hit - 1];
        if (e->len == name->len && memcmp(e->name, name->data, (size_t)name->len) == 0)
            return e;
    }
    Kernel *e = kernels_get(&s->kernels, name->data, name->len);
    if (e != NULL)
        *hit = e - s->kernels.entries + 1;
    return e;
}

/* bad[:40]!r where bad is the field's text */
static PyObject *
field_repr(const Text *b)
{
    PyObject *text = PyUnicode_DecodeLatin1(b->data, b->len < 40 ? b->len : 40, NULL);
    if (text == NULL)
        return NULL;
    PyObject *repr = PyObject_Repr(text);
    Py_DECREF(text);
    return repr;
}

static int
add_row(Scan *s)
{
    Py_ssize_t row = ++s->rows;
    if (s->fields != s->width)
        return skip_n(s, 1, "row %zd: %zd fields, the header has %zd", row, s->fields,
                      s->width);
    if (s->column[KIND] >= 0) {
        const Text *kind = &s->value[KIND];
        if (kind->len != 15 || memcmp(kind->data, "KERNEL_DISPATCH", 15) != 0) {
            s->filtered++;
            return 0;
        }
    }
    int64_t start = 0, end = 0;
    PyObject *big_start = NULL, *big_end = NULL;
    int ok_start = timestamp(&s->value[START], &start, &big_start);
    if (ok_start < 0)
        return -1;
    int ok_end = ok_start ? timestamp(&s->value[END], &end, &big_end) : 0;
    int rc = 0;
    if (ok_end < 0) {
        rc = -1;
    }
    else if (!ok_start || !ok_end) {
        if (PyList_GET_SIZE(s->examples) < s->max_examples) {   /* the reason may be kept */
            const Text *bad = ok_start ? &s->value[END] : &s->value[START];
            PyObject *repr = field_repr(bad);
            if (repr == NULL) {
                rc = -1;
            }
            else {
                rc = skip_n(s, 1, "row %zd: %s is %U, not a whole number of ns", row,
                            ok_start ? "End_Timestamp" : "Start_Timestamp", repr);
                Py_DECREF(repr);
            }
        }
        else {
            s->skipped++;
        }
    }
    else if (big_start == NULL && big_end == NULL) {
        if (end < start)
            rc = skip_n(s, 1, "row %zd: End_Timestamp before Start_Timestamp", row);
        else if (s->value[NAME].len == 0)
            rc = skip_n(s, 1, "row %zd: empty Kernel_Name", row);
        else {
            Kernel *e = kernel_of(s, &s->value[NAME]);
            rc = e == NULL ? -1 : kernel_add(e, end - start);
            s->used += rc == 0;
        }
    }
    else {                                   /* more than 18 digits: Python's ints */
        if (big_start == NULL && (big_start = PyLong_FromLongLong(start)) == NULL)
            rc = -1;
        if (rc == 0 && big_end == NULL && (big_end = PyLong_FromLongLong(end)) == NULL)
            rc = -1;
        int before = rc < 0 ? -1 : PyObject_RichCompareBool(big_end, big_start, Py_LT);
        if (before < 0)
            rc = -1;
        else if (before)
            rc = skip_n(s, 1, "row %zd: End_Timestamp before Start_Timestamp", row);
        else if (s->value[NAME].len == 0)
            rc = skip_n(s, 1, "row %zd: empty Kernel_Name", row);
        else {
            PyObject *ns = PyNumber_Subtract(big_end, big_start);
            Kernel *e = ns == NULL ? NULL
                        : kernel_of(s, &s->value[NAME]);
            if (e == NULL) {
                rc = -1;
            }
            else {
                int overflow = 0;
                long long small_ns = PyLong_AsLongLongAndOverflow(ns, &overflow);
                rc = overflow ? kernel_add_big(e, ns) : kernel_add(e, small_ns);
                s->used += rc == 0;
            }
            Py_XDECREF(ns);
        }
    }
    Py_XDECREF(big_start);
    Py_XDECREF(big_end);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* The csv module's reader over one block                                                    */

/* The end of the line holding position `at`, as io.StringIO(newline="") splits lines: after
 * "\n", after "\r\n", after a "\r" not followed by "\n", or the block's end. */
static Py_ssize_t
line_end(const char *data, Py_ssize_t len, Py_ssize_t at)
{
    for (; at < len; at++) {
        if (data[at] == '\n')
            return at + 1;
        if (data[at] == '\r')
            return at + 1 < len && data[at + 1] == '\n' ? at + 2 : at + 1;
    }
    return len;
}

/* A character of the current field; 1 when the field grows past the limit (csv.Error). */
static inline int
add_chars(Scan *s, const char *from, Py_ssize_t n, Py_ssize_t *accepted)
{
    Py_ssize_t room = s->field_limit - s->field_len;
    *accepted = n <= room ? n : (room > 0 ? room : 0);
    if (s->wanted >= 0 && *accepted > 0) {
        /* a field read in one piece is used where it lies in the block; pieces are joined */
        Text *v = &s->value[s->wanted];
        Buf *copy = &s->copy[s->wanted];
        if (v->len == 0 && !v->joined) {
            v->data = from;
        }
        else if (v->joined || v->data + v->len != from) {
            if (!v->joined) {
                copy->len = 0;
                if (buf_append(copy, v->data, v->len) < 0)
                    return -1;
                v->joined = 1;
            }
            if (buf_append(copy, from, *accepted) < 0)
                return -1;
            v->data = copy->data;
            v->len = copy->len;
            s->field_len += *accepted;
            return *accepted < n;
        }
        v->len += *accepted;
    }
    s->field_len += *accepted;
    return *accepted < n;
}

static void
save_field(Scan *s)
{
    s->fields++;
    start_field(s);
}

/* A row the csv module refuses: counted, and the rest of its line dropped, as the reader
 * drops the line it was reading when it raises. */
static int
unreadable(Scan *s, PyObject *why)
{
    Py_ssize_t row = ++s->rows;
    int rc = skip_n(s, 1, "row %zd: unreadable CSV (%U)", row, why);
    start_record(s);
    return rc;
}

/* Parse one block of whole lines (or the last, unterminated part of one) and add its rows. */
static int
parse_block(Scan *s, const char *data, Py_ssize_t len)
{
    Py_ssize_t i = 0, took;
    start_record(s);
    while (i < len) {
        char c = data[i];
        if (c == '\0' && s->nul_error != NULL) {   /* Python 3.10's csv refuses the line */
            if (unreadable(s, s->nul_error) < 0)
                return -1;
            i = line_end(data, len, i);
            continue;
        }
        switch (s->state) {
        case START_RECORD:
            if (c == '\n' || c == '\r') {              /* a blank line: no row */
                i = line_end(data, len, i);
                continue;
            }
            s->state = START_FIELD;
            /* fall through */
        case START_FIELD:
            if (c == '"') {
                s->state = IN_QUOTED_FIELD;
                i++;
                continue;
            }
            if (c == ',') {
                save_field(s);
                i++;
                continue;
            }
            if (c == '\n' || c == '\r')
                goto end_of_line;
            s->state = IN_FIELD;
            /* fall through */
        case IN_FIELD: {
            /* a run of plain characters; a quote here is a plain character */
            Py_ssize_t j = i;
            while (j < len && !s->ends_plain[(unsigned char)data[j]])
                j++;
            int over = add_chars(s, data + i, j - i, &took);
            if (over < 0)
                return -1;
            if (over) {
                goto too_large;
            }
            i = j;
            if (i < len && data[i] == ',') {
                save_field(s);
                s->state = START_FIELD;
                i++;
            }
            else if (i < len && (data[i] == '\n' || data[i] == '\r')) {
                goto end_of_line;
            }
            continue;
        }
        case IN_QUOTED_FIELD: {
            /* everything up to the next quote is text, line breaks included */
            const char *q = memchr(data + i, '"', (size_t)(len - i));
            Py_ssize_t j = q ? q - data : len;
            if (s->nul_error != NULL) {
                const char *nul = memchr(data + i, '\0', (size_t)(j - i));
                if (nul != NULL)
                    j = nul - data;
            }
            int over = add_chars(s, data + i, j - i, &took);
            if (over < 0)
                return -1;
            if (over)
                goto too_large;
            i = j;
            if (i < len && data[i] == '"') {
                s->state = QUOTE_IN_QUOTED_FIELD;
                i++;
            }
            continue;
        }
        case QUOTE_IN_QUOTED_FIELD:
            if (c == '"') {                            /* "" is one quote */
                int over = add_chars(s, data + i, 1, &took);
                if (over < 0)
                    return -1;
                if (over)
                    goto too_large;
                s->state = IN_QUOTED_FIELD;
                i++;
            }
            else if (c == ',') {
                save_field(s);
                s->state = START_FIELD;
                i++;
            }
            else if (c == '\n' || c == '\r') {
                goto end_of_line;
            }
            else {                                     /* not strict: text after the quote */
                s->state = IN_FIELD;
            }
            continue;
        }
        continue;

    end_of_line:
        /* "\r" or "\n" ends the field and the row; the line ends after "\r\n" */
        save_field(s);
        if (add_row(s) < 0)
            return -1;
        start_record(s);
        i = line_end(data, len, i);
        continue;

    too_large: {
        PyObject *why = PyUnicode_FromFormat("field larger than field limit (%zd)",
                                             s->field_limit);
        if (why == NULL || unreadable(s, why) < 0) {
            Py_XDECREF(why);
            return -1;
        }
        Py_DECREF(why);
        /* the character refused is at i + took; its line is dropped */
        i = line_end(data, len, i + took);
        continue;
    }
    }
    /* The block's end. Blocks end with a newline, so only a quote left open gets here: the
     * csv module then ends the field and the row at the end of its input (not strict). The
     * other states are for a block without final newline, which the reader ends as a line. */
    if (s->state != START_RECORD) {
        save_field(s);
        if (add_row(s) < 0)
            return -1;
    }
    start_record(s);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading the file in the Python scanner's blocks                                           */

/* fh.read(n)'s length into `into`: readinto until n bytes or the end of the file. */
static Py_ssize_t
read_full(PyObject *readinto, char *into, Py_ssize_t n)
{
    Py_ssize_t done = 0;
    while (done < n) {
        PyObject *view = PyMemoryView_FromMemory(into + done, n - done, PyBUF_WRITE);
        if (view == NULL)
            return -1;
        PyObject *got = PyObject_CallOneArg(readinto, view);
        Py_DECREF(view);
        if (got == NULL)
            return -1;
        Py_ssize_t k = got == Py_None ? 0 : PyLong_AsSsize_t(got);
        Py_DECREF(got);
        if (k < 0 || k > n - done) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_OSError, "readinto returned a bad length");
            return -1;
        }
        if (k == 0)
            break;
        done += k;
    }
    return done;
}

static const char *
last_newline(const char *data, Py_ssize_t len)
{
    while (len > 0) {
        if (data[--len] == '\n')
            return data + len;
    }
    return NULL;
}

/* One kernel's [total ns, launches, longest ns] as Python ints. */
static PyObject *
kernel_entry(const Kernel *e)
{
    PyObject *total = PyLong_FromLongLong(e->total);
    if (total != NULL && e->big_total != NULL)
        Py_SETREF(total, PyNumber_Add(total, e->big_total));
    if (total == NULL)
        return NULL;
    /* big_longest is only ever set beyond int64, so it is the longest when set */
    PyObject *longest = e->big_longest != NULL ? Py_NewRef(e->big_longest)
                        : PyLong_FromLongLong(e->longest);
    if (longest == NULL) {
        Py_DECREF(total);
        return NULL;
    }
    return Py_BuildValue("[NLN]", total, (long long)e->calls, longest);
}

static PyObject *
results(Scan *s, int cut)
{
    PyObject *kernels = PyDict_New();
    if (kernels == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < s->kernels.count; i++) {
        Kernel *e = &s->kernels.entries[i];
        PyObject *entry = kernel_entry(e);
        PyObject *name = entry ? PyBytes_FromStringAndSize(e->name, e->len) : NULL;
        int rc = name ? PyDict_SetItem(kernels, name, entry) : -1;
        Py_XDECREF(name);
        Py_XDECREF(entry);
        if (rc < 0) {
            Py_DECREF(kernels);
            return NULL;
        }
    }
    return Py_BuildValue("NnnnnOO", kernels, s->rows, s->used, s->filtered, s->skipped,
                         s->examples, cut ? Py_True : Py_False);
}

PyDoc_STRVAR(scan_doc,
"scan(fh, kind, name, start, end, width, block, max_line, field_limit, nul_error,\n"
"     max_examples)\n"
"--\n\n"
"Read the data rows of an open binary trace file (just after its header) as\n"
"rocprof_trace_scan.scan_trace reads them. `kind` is -1 when there is no Kind column.\n"
"Returns (kernels, rows, used, filtered, skipped, examples, cut): kernels maps each raw\n"
"name to [total ns, launches, longest ns] in the order of its first counted row; cut is\n"
"True when the file ends inside a row (that row is not counted in rows).");

static PyObject *
scan(PyObject *module, PyObject *args)
{
    PyObject *fh, *nul_error;
    Py_ssize_t block, max_line;
    Scan s;
    (void)module;
    memset(&s, 0, sizeof(s));
    if (!PyArg_ParseTuple(args, "OnnnnnnnnOn:scan", &fh, &s.column[KIND], &s.column[NAME],
                          &s.column[START], &s.column[END], &s.width, &block, &max_line,
                          &s.field_limit, &nul_error, &s.max_examples))
        return NULL;
    for (int w = 0; w < WANTED; w++) {
        int twice = 0;
        for (int v = 0; v < w; v++)
            twice |= s.column[v] == s.column[w];
        if (s.column[w] >= s.width || s.column[w] < (w == KIND ? -1 : 0) || twice) {
            PyErr_SetString(PyExc_ValueError, "column indices must be distinct, in the header");
            return NULL;
        }
    }
    if (block <= 0 || max_line < 0 || s.field_limit < 0) {
        PyErr_SetString(PyExc_ValueError, "block must be positive, limits not negative");
        return NULL;
    }
    if (nul_error != Py_None && !PyUnicode_Check(nul_error)) {
        PyErr_SetString(PyExc_TypeError, "nul_error must be str or None");
        return NULL;
    }
    s.nul_error = nul_error == Py_None ? NULL : nul_error;
    s.ends_plain[','] = s.ends_plain['\n'] = s.ends_plain['\r'] = 1;
    s.ends_plain[0] = s.nul_error != NULL;
    s.wanted_at = PyMem_Malloc((size_t)s.width + 1);
    if (s.wanted_at == NULL)
        return PyErr_NoMemory();
    memset(s.wanted_at, -1, (size_t)s.width + 1);
    for (int w = 0; w < WANTED; w++)
        if (s.column[w] >= 0)
            s.wanted_at[s.column[w]] = (signed char)w;
    PyObject *readinto = PyObject_GetAttrString(fh, "readinto");
    if (readinto == NULL) {
        PyMem_Free(s.wanted_at);
        return NULL;
    }
    s.examples = PyList_New(0);
    Buf data = {0};
    PyObject *result = NULL;
    int cut = 0;
    if (s.examples == NULL)
        goto done;
    Py_ssize_t pending = 0;       /* bytes of data.data carried from the last block */
    for (;;) {
        if (pending > PY_SSIZE_T_MAX - block || buf_reserve(&data, pending + block) < 0)
            goto done;
        Py_ssize_t got = read_full(readinto, data.data + pending, block);
        if (got < 0)
            goto done;
        if (got == 0)
            break;
        Py_ssize_t size = pending + got;
        /* the carried part holds no newline, so the last one is in what was just read */
        const char *nl = last_newline(data.data + pending, got);
        if (nl == NULL) {
            pending = size;
            if (pending > max_line) {
                if (skip_n(&s, 1, "a line longer than %zd bytes", max_line) < 0)
                    goto done;
                pending = 0;
            }
            continue;
        }
        Py_ssize_t whole = nl - data.data + 1;
        if (parse_block(&s, data.data, whole) < 0)
            goto done;
        pending = size - whole;
        memmove(data.data, data.data + whole, (size_t)pending);
    }
    for (Py_ssize_t i = 0; i < pending; i++) {     /* bytes.strip()'s whitespace */
        char c = data.data[i];
        if (!(c == ' ' || (c >= '\t' && c <= '\r'))) {
            cut = 1;
            break;
        }
    }
    result = results(&s, cut);
done:
    Py_DECREF(readinto);
    PyMem_Free(data.data);
    for (int w = 0; w < WANTED; w++)
        PyMem_Free(s.copy[w].data);
    PyMem_Free(s.wanted_at);
    kernels_free(&s.kernels);
    Py_XDECREF(s.examples);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "aorta.parsers._rocprof_scan",
    "The rocprofv3 kernel-trace scan of rocprof_trace_scan, compiled.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__rocprof_scan(void)
{
    return PyModule_Create(&module);
}
