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
 * Since every block is parsed afresh, blocks are independent: a batch of them is split in two
 * halves, each parsed on a thread of its own without the GIL while the next batch is read,
 * and each half's totals and first reasons are then added in file order. A half that meets a
 * number beyond int64 is parsed again with the GIL, in Python ints.
 *
 * Memory: two batches of blocks, the line carried over (at most `max_line` bytes), a few field
 * buffers and one entry per distinct kernel name. Every length is checked before it is used;
 * hostile input gives skipped rows, never a read out of bounds.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifndef _WIN32
#include <pthread.h>
#define USE_THREADS 1
#else
typedef int pthread_t;        /* no threads: the halves are parsed one after the other */
#endif

/* ---------------------------------------------------------------------------------------- */
/* Growing byte buffers. Memory comes from PyMem_Raw*, which needs no GIL; a failure returns -1
 * and leaves raising MemoryError to the caller that holds the GIL.                          */

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
        if (cap > PY_SSIZE_T_MAX / 2)
            return -1;
        cap *= 2;
    }
    char *data = PyMem_RawRealloc(b->data, (size_t)cap);
    if (data == NULL)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static int
buf_append(Buf *b, const char *from, Py_ssize_t n)
{
    if (n > PY_SSIZE_T_MAX - b->len || buf_reserve(b, b->len + n) < 0)
        return -1;
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
    Py_ssize_t *slots = PyMem_RawCalloc((size_t)nslots, sizeof(Py_ssize_t));
    if (slots == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < k->count; i++) {
        size_t at = (size_t)k->entries[i].hash & (size_t)(nslots - 1);
        while (slots[at])
            at = (at + 1) & (size_t)(nslots - 1);
        slots[at] = i + 1;
    }
    PyMem_RawFree(k->slots);
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
        Kernel *entries = PyMem_RawRealloc(k->entries, (size_t)cap * sizeof(Kernel));
        if (entries == NULL)
            return NULL;
        k->entries = entries;
        k->cap = cap;
    }
    Kernel *e = &k->entries[k->count];
    memset(e, 0, sizeof(*e));
    e->name = PyMem_RawMalloc(len ? (size_t)len : 1);
    if (e->name == NULL)
        return NULL;
    memcpy(e->name, name, (size_t)len);
    e->len = len;
    e->hash = h;
    e->longest = -1;
    k->slots[at] = ++k->count;
    return e;
}

/* Empty the table (the GIL held: entries may hold Python ints); `keep` keeps its memory. */
static void
kernels_clear(Kernels *k, int keep)
{
    for (Py_ssize_t i = 0; i < k->count; i++) {
        PyMem_RawFree(k->entries[i].name);
        Py_XDECREF(k->entries[i].big_total);
        Py_XDECREF(k->entries[i].big_longest);
    }
    k->count = 0;
    if (keep && k->slots != NULL) {
        memset(k->slots, 0, (size_t)k->nslots * sizeof(Py_ssize_t));
        return;
    }
    PyMem_RawFree(k->entries);
    PyMem_RawFree(k->slots);
    memset(k, 0, sizeof(*k));
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

/* Add `calls` launches summing to `ns`, the longest `longest` (all int64). Without the GIL a
 * sum past int64 cannot be kept: 1, and nothing added. With it, what was summed so far moves
 * into Python ints. */
static int
kernel_add(Kernel *e, int64_t ns, int64_t calls, int64_t longest, int gil)
{
    int64_t sum;
    if (__builtin_add_overflow(e->total, ns, &sum)) {
        if (!gil)
            return 1;
        if (big_add_int64(&e->big_total, e->total) < 0)
            return -1;
        sum = ns;
    }
    e->total = sum;
    e->calls += calls;
    if (longest > e->longest)
        e->longest = longest;
    return 0;
}

/* Add launches summing to the Python int `ns`, the longest `longest` (NULL: none past int64). */
static int
kernel_add_big(Kernel *e, PyObject *ns, int64_t calls, PyObject *longest)
{
    if (big_add(&e->big_total, ns) < 0)
        return -1;
    e->calls += calls;
    if (longest == NULL)
        return 0;
    ns = longest;
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
/* Reasons. A half records the first few of its rows left out, numbered from its own start;
 * they are worded (as Skips.skip keeps them) when the half is added, in file order.        */

enum { WHY_FIELDS, WHY_START, WHY_END, WHY_BEFORE, WHY_EMPTY, WHY_TOO_LARGE, WHY_NUL,
       WHY_LONG_LINE };

#define KEPT_REASONS 3        /* Skips keeps 3 reasons; one "line longer" may come before */

typedef struct {
    int why;
    Py_ssize_t row;           /* within the half, from 1; 0 for WHY_LONG_LINE */
    Py_ssize_t fields;        /* WHY_FIELDS */
    char text[40];            /* WHY_START, WHY_END: the field's first 40 characters */
    int text_len;
} Reason;

/* ---------------------------------------------------------------------------------------- */
/* One half of a batch: the csv reader's state and what the rows gave                       */

enum { KIND, NAME, START, END, WANTED };

/* The csv module's reader states that the default dialect reaches. */
enum { START_RECORD, START_FIELD, IN_FIELD, IN_QUOTED_FIELD, QUOTE_IN_QUOTED_FIELD };

typedef struct {
    Py_ssize_t column[WANTED];       /* column index of each wanted field; -1: no Kind */
    Py_ssize_t width;
    Py_ssize_t field_limit;          /* csv.field_size_limit() */
    int nul_refused;                 /* this Python's csv refuses a line holding NUL */
    signed char *wanted_at;          /* per column: which of column[] it is, or -1 */
    unsigned char ends_plain[256];   /* characters that end a run of unquoted text */
} Layout;

#define BATCH_BLOCKS 32       /* blocks read per batch: 4 MiB at the scanner's 128 KiB (8 MiB
                                 * measured no faster, 1 MiB slower) */

typedef struct {
    Py_ssize_t start, end;           /* a block of whole lines: bytes [start, end) of the batch */
    int long_line;                   /* or: a line too long, dropped here */
} Item;

typedef struct {
    const Layout *layout;
    int gil;                         /* Python ints allowed (numbers past int64) */
    int again;                       /* met a number past int64 without the GIL */
    int nomem;
    /* the work: items of the batch */
    const char *data;
    const Item *items;
    Py_ssize_t nitems;
    /* the csv reader's state within a row */
    int state;
    Py_ssize_t fields;               /* fields saved in this row */
    Py_ssize_t field_len;            /* characters in the field being read */
    int wanted;                      /* which of column[] the current field is, or -1 */
    Text value[WANTED];              /* the wanted fields' text: in the block, or in copy[] */
    Buf copy[WANTED];                /* a field in pieces ("" inside quotes) joined */
    /* results */
    Kernels kernels;
    Py_ssize_t cache[64];            /* recent kernels by a cheap key: index + 1, 0 = none */
    Py_ssize_t rows, used, filtered, skipped;
    Reason reasons[KEPT_REASONS + 1];
    int nreasons, row_reasons, long_line_kept;
} Half;

/* A row (or a long line) left out. Returns a Reason to fill when it may be needed later. */
static Reason *
skip(Half *h, int why)
{
    h->skipped++;
    if (h->row_reasons >= KEPT_REASONS || (why == WHY_LONG_LINE && h->long_line_kept))
        return NULL;
    Reason *r = &h->reasons[h->nreasons++];
    memset(r, 0, sizeof(*r));
    r->why = why;
    if (why == WHY_LONG_LINE)
        h->long_line_kept = 1;
    else {
        h->row_reasons++;
        r->row = h->rows;
    }
    return r;
}

static void
start_field(Half *h)
{
    h->field_len = 0;
    h->wanted = h->fields < h->layout->width ? h->layout->wanted_at[h->fields] : -1;
    if (h->wanted >= 0) {
        h->value[h->wanted].len = 0;
        h->value[h->wanted].joined = 0;
    }
}

static void
start_record(Half *h)
{
    h->state = START_RECORD;
    h->fields = 0;
    start_field(h);
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
 * *small set when it has at most 18 digits; 2 when it has more, with *big set (a new
 * reference) when the GIL is held; 0 when it is no whole number (int() refusing too many
 * digits included); -1 on a Python error. */
static int
timestamp(const Half *h, const Text *b, int64_t *small, PyObject **big)
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
    if (!h->gil)
        return 2;
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
    return 2;
}

/* The entry of a kernel name. Traces repeat a few names over and over, so a small cache keyed
 * by the length and the first and last bytes saves hashing the whole name (often hundreds of
 * bytes) on most rows; the name is still compared whole. */
static Kernel *
kernel_of(Half *h, const Text *name)
{
    uint64_t head = 0, tail = 0;
    Py_ssize_t n = name->len < 8 ? name->len : 8;
    memcpy(&head, name->data, (size_t)n);
    memcpy(&tail, name->data + name->len - n, (size_t)n);
    uint64_t key = ((head * 0x9E3779B97F4A7C15ull) ^ tail ^ (uint64_t)name->len)
                   * 0xFF51AFD7ED558CCDull;
    Py_ssize_t *hit = &h->cache[key >> 58];
    if (*hit) {
        Kernel *e = &h->kernels.entries[*hit - 1];
        if (e->len == name->len && memcmp(e->name, name->data, (size_t)name->len) == 0)
            return e;
    }
    Kernel *e = kernels_get(&h->kernels, name->data, name->len);
    if (e == NULL)
        h->nomem = 1;
    else
        *hit = e - h->kernels.entries + 1;
    return e;
}

/* A row whose timestamps are past int64, in Python ints (the GIL held). */
static int
add_big_row(Half *h, int64_t start, int64_t end, PyObject *big_start, PyObject *big_end)
{
    PyObject *from = big_start ? Py_NewRef(big_start) : PyLong_FromLongLong(start);
    PyObject *to = big_end ? Py_NewRef(big_end) : PyLong_FromLongLong(end);
    PyObject *ns = NULL;
    int rc = -1;
    if (from == NULL || to == NULL)
        goto done;
    int before = PyObject_RichCompareBool(to, from, Py_LT);
    if (before < 0)
        goto done;
    if (before) {
        skip(h, WHY_BEFORE);
        rc = 0;
        goto done;
    }
    if (h->value[NAME].len == 0) {
        skip(h, WHY_EMPTY);
        rc = 0;
        goto done;
    }
    if ((ns = PyNumber_Subtract(to, from)) == NULL)
        goto done;
    Kernel *e = kernel_of(h, &h->value[NAME]);
    if (e == NULL)
        goto done;
    int overflow = 0;
    long long small = PyLong_AsLongLongAndOverflow(ns, &overflow);
    rc = overflow ? kernel_add_big(e, ns, 1, ns) : kernel_add(e, small, 1, small, 1);
    h->used += rc == 0;
done:
    Py_XDECREF(from);
    Py_XDECREF(to);
    Py_XDECREF(ns);
    return rc;
}

/* Check and add the row just read. -1: stop (a Python error, no memory, or `again` set). */
static int
add_row(Half *h)
{
    const Layout *l = h->layout;
    h->rows++;
    if (h->fields != l->width) {
        Reason *r = skip(h, WHY_FIELDS);
        if (r != NULL)
            r->fields = h->fields;
        return 0;
    }
    if (l->column[KIND] >= 0) {
        const Text *kind = &h->value[KIND];
        if (kind->len != 15 || memcmp(kind->data, "KERNEL_DISPATCH", 15) != 0) {
            h->filtered++;
            return 0;
        }
    }
    int64_t start = 0, end = 0;
    PyObject *big_start = NULL, *big_end = NULL;
    int ok_start = timestamp(h, &h->value[START], &start, &big_start);
    int ok_end = ok_start > 0 ? timestamp(h, &h->value[END], &end, &big_end) : 0;
    int rc = 0;
    if (ok_start < 0 || ok_end < 0) {
        rc = -1;
    }
    else if (ok_start == 0 || ok_end == 0) {
        const Text *bad = ok_start ? &h->value[END] : &h->value[START];
        Reason *r = skip(h, ok_start ? WHY_END : WHY_START);
        if (r != NULL && bad->len > 0) {       /* an empty field's data may be NULL */
            r->text_len = bad->len < 40 ? (int)bad->len : 40;
            memcpy(r->text, bad->data, (size_t)r->text_len);
        }
    }
    else if (ok_start == 2 || ok_end == 2) {
        if (!h->gil) {
            h->again = 1;
            rc = -1;
        }
        else {
            rc = add_big_row(h, start, end, big_start, big_end);
        }
    }
    else if (end < start) {
        skip(h, WHY_BEFORE);
    }
    else if (h->value[NAME].len == 0) {
        skip(h, WHY_EMPTY);
    }
    else {
        Kernel *e = kernel_of(h, &h->value[NAME]);
        rc = e == NULL ? -1 : kernel_add(e, end - start, 1, end - start, h->gil);
        if (rc > 0) {                        /* a sum past int64 without the GIL */
            h->again = 1;
            rc = -1;
        }
        h->used += rc == 0;
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

/* Characters of the current field: 0, or 1 when the field grows past the limit (the csv
 * module raises; *accepted says how many fitted), or -1 without memory. */
static inline int
add_chars(Half *h, const char *from, Py_ssize_t n, Py_ssize_t *accepted)
{
    Py_ssize_t room = h->layout->field_limit - h->field_len;
    *accepted = n <= room ? n : (room > 0 ? room : 0);
    if (h->wanted >= 0 && *accepted > 0) {
        /* a field read in one piece is used where it lies in the block; pieces are joined */
        Text *v = &h->value[h->wanted];
        Buf *copy = &h->copy[h->wanted];
        if (v->len == 0 && !v->joined) {
            v->data = from;
            v->len = *accepted;
        }
        else if (!v->joined && v->data + v->len == from) {
            v->len += *accepted;
        }
        else {
            if (!v->joined) {
                copy->len = 0;
                if (buf_append(copy, v->data, v->len) < 0)
                    goto nomem;
                v->joined = 1;
            }
            if (buf_append(copy, from, *accepted) < 0)
                goto nomem;
            v->data = copy->data;
            v->len = copy->len;
        }
    }
    h->field_len += *accepted;
    return *accepted < n;
nomem:
    h->nomem = 1;
    return -1;
}

static void
save_field(Half *h)
{
    h->fields++;
    start_field(h);
}

/* A row the csv module refuses (it raises csv.Error): counted; the caller drops the rest of
 * its line, as the reader drops the line it was reading when it raises. */
static void
unreadable(Half *h, int why)
{
    h->rows++;
    skip(h, why);
    start_record(h);
}

/* Parse one block of whole lines (or the last, unterminated part of one) and add its rows. */
static int
parse_block(Half *h, const char *data, Py_ssize_t len)
{
    const unsigned char *ends_plain = h->layout->ends_plain;
    const int nul_refused = h->layout->nul_refused;
    Py_ssize_t i = 0, took;
    int over;
    start_record(h);
    while (i < len) {
        char c = data[i];
        if (c == '\0' && nul_refused) {        /* Python 3.10's csv refuses the line */
            unreadable(h, WHY_NUL);
            i = line_end(data, len, i);
            continue;
        }
        switch (h->state) {
        case START_RECORD:
            if (c == '\n' || c == '\r') {      /* a blank line: no row */
                i = line_end(data, len, i);
                continue;
            }
            h->state = START_FIELD;
            /* fall through */
        case START_FIELD:
            if (c == '"') {
                h->state = IN_QUOTED_FIELD;
                i++;
                continue;
            }
            if (c == ',') {
                save_field(h);
                i++;
                continue;
            }
            if (c == '\n' || c == '\r')
                goto end_of_line;
            h->state = IN_FIELD;
            /* fall through */
        case IN_FIELD: {
            /* a run of plain characters; a quote here is a plain character */
            Py_ssize_t j = i;
            while (j < len && !ends_plain[(unsigned char)data[j]])
                j++;
            if ((over = add_chars(h, data + i, j - i, &took)) != 0)
                goto refused;
            i = j;
            if (i < len && data[i] == ',') {
                save_field(h);
                h->state = START_FIELD;
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
            if (nul_refused) {
                const char *nul = memchr(data + i, '\0', (size_t)(j - i));
                if (nul != NULL)
                    j = nul - data;
            }
            if ((over = add_chars(h, data + i, j - i, &took)) != 0)
                goto refused;
            i = j;
            if (i < len && data[i] == '"') {
                h->state = QUOTE_IN_QUOTED_FIELD;
                i++;
            }
            continue;
        }
        case QUOTE_IN_QUOTED_FIELD:
            if (c == '"') {                    /* "" is one quote */
                if ((over = add_chars(h, data + i, 1, &took)) != 0)
                    goto refused;
                h->state = IN_QUOTED_FIELD;
                i++;
            }
            else if (c == ',') {
                save_field(h);
                h->state = START_FIELD;
                i++;
            }
            else if (c == '\n' || c == '\r') {
                goto end_of_line;
            }
            else {                             /* not strict: text after the quote */
                h->state = IN_FIELD;
            }
            continue;
        }
        continue;

    end_of_line:
        /* "\r" or "\n" ends the field and the row; the line ends after "\r\n" */
        save_field(h);
        if (add_row(h) < 0)
            return -1;
        start_record(h);
        i = line_end(data, len, i);
        continue;

    refused:
        if (over < 0)
            return -1;
        /* past the field limit: the character refused is at i + took; its line is dropped */
        unreadable(h, WHY_TOO_LARGE);
        i = line_end(data, len, i + took);
    }
    /* The block's end. Blocks end with a newline, so only a quote left open gets here: the
     * csv module then ends the field and the row at the end of its input (not strict). The
     * other states are for a block without final newline, which the reader ends as a line. */
    if (h->state != START_RECORD) {
        save_field(h);
        if (add_row(h) < 0)
            return -1;
    }
    start_record(h);
    return 0;
}

/* Parse the half's items; -1 when stopped (see add_row). Needs the GIL only with h->gil. */
static int
parse_items(Half *h)
{
    for (Py_ssize_t k = 0; k < h->nitems; k++) {
        const Item *item = &h->items[k];
        if (item->long_line)
            skip(h, WHY_LONG_LINE);
        else if (parse_block(h, h->data + item->start, item->end - item->start) < 0)
            return -1;
    }
    return 0;
}

#ifdef USE_THREADS
static void *
parse_items_thread(void *half)
{
    parse_items((Half *)half);
    return NULL;
}
#endif

/* Forget what the half gave (the GIL held), keeping its memory. */
static void
half_reset(Half *h, int gil)
{
    kernels_clear(&h->kernels, 1);
    memset(h->cache, 0, sizeof(h->cache));
    h->rows = h->used = h->filtered = h->skipped = 0;
    h->nreasons = h->row_reasons = h->long_line_kept = 0;
    h->gil = gil;
    h->again = h->nomem = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The whole trace: halves added in file order                                               */

typedef struct {
    Kernels kernels;
    Py_ssize_t rows, used, filtered, skipped;
    PyObject *examples;              /* list of str, as Skips.examples */
    Py_ssize_t max_examples;
    PyObject *nul_error;             /* the csv module's message for a NUL */
} Totals;

static PyObject *
reason_text(const Totals *t, const Half *h, const Reason *r)
{
    Py_ssize_t row = t->rows + r->row;
    switch (r->why) {
    case WHY_FIELDS:
        return PyUnicode_FromFormat("row %zd: %zd fields, the header has %zd", row, r->fields,
                                    h->layout->width);
    case WHY_START:
    case WHY_END: {
        PyObject *text = PyUnicode_DecodeLatin1(r->text, r->text_len, NULL);
        PyObject *why = text == NULL ? NULL : PyUnicode_FromFormat(
            "row %zd: %s is %R, not a whole number of ns", row,
            r->why == WHY_START ? "Start_Timestamp" : "End_Timestamp", text);
        Py_XDECREF(text);
        return why;
    }
    case WHY_BEFORE:
        return PyUnicode_FromFormat("row %zd: End_Timestamp before Start_Timestamp", row);
    case WHY_EMPTY:
        return PyUnicode_FromFormat("row %zd: empty Kernel_Name", row);
    case WHY_TOO_LARGE:
        return PyUnicode_FromFormat("row %zd: unreadable CSV (field larger than field limit "
                                    "(%zd))", row, h->layout->field_limit);
    case WHY_NUL:
        return PyUnicode_FromFormat("row %zd: unreadable CSV (%S)", row, t->nul_error);
    default:
        return PyUnicode_FromString("");   /* WHY_LONG_LINE: worded by the caller */
    }
}

/* Add a half's kernels, counts and reasons to the totals (the GIL held). */
static int
add_half(Totals *t, const Half *h, Py_ssize_t max_line)
{
    for (Py_ssize_t i = 0; i < h->kernels.count; i++) {
        const Kernel *e = &h->kernels.entries[i];
        Kernel *g = kernels_get(&t->kernels, e->name, e->len);
        if (g == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (kernel_add(g, e->total, e->calls, e->longest, 1) < 0)
            return -1;
        if (e->big_total != NULL && kernel_add_big(g, e->big_total, 0, e->big_longest) < 0)
            return -1;
    }
    for (int k = 0; k < h->nreasons; k++) {
        if (PyList_GET_SIZE(t->examples) >= t->max_examples)
            break;
        const Reason *r = &h->reasons[k];
        PyObject *why = r->why == WHY_LONG_LINE
            ? PyUnicode_FromFormat("a line longer than %zd bytes", max_line)
            : reason_text(t, h, r);
        if (why == NULL)
            return -1;
        int known = PySequence_Contains(t->examples, why);
        int rc = known < 0 ? -1 : known ? 0 : PyList_Append(t->examples, why);
        Py_DECREF(why);
        if (rc < 0)
            return -1;
    }
    t->rows += h->rows;
    t->used += h->used;
    t->filtered += h->filtered;
    t->skipped += h->skipped;
    return 0;
}

/* A batch: blocks read together, as items of whole lines in `data`, and where the line
 * still open at its end starts (`pending`; it runs to `size`). */
typedef struct {
    Buf data;
    Item items[BATCH_BLOCKS];
    Py_ssize_t n, size, pending;
    int end_of_file;
} Batch;

/* Start parsing a batch in two halves, split where half its bytes are, each on a thread of
 * its own (no GIL needed); the caller reads the next batch meanwhile. Returns the number of
 * threads started; halves without a thread are parsed by finish_batch. */
static int
start_batch(Half halves[2], const Batch *b, pthread_t threads[2])
{
    Py_ssize_t bytes = 0, half = 0, split = b->n;
    for (Py_ssize_t k = 0; k < b->n; k++)
        bytes += b->items[k].end - b->items[k].start;
    for (Py_ssize_t k = 0; k < b->n; k++) {
        if (half * 2 >= bytes) {
            split = k;
            break;
        }
        half += b->items[k].end - b->items[k].start;
    }
    halves[0].data = halves[1].data = b->data.data;
    halves[0].items = b->items;
    halves[0].nitems = split;
    halves[1].items = b->items + split;
    halves[1].nitems = b->n - split;
    int started = 0;
#ifdef USE_THREADS
    for (int k = 0; k < 2; k++) {
        if (halves[k].nitems == 0 || bytes < 4096)
            break;
        if (pthread_create(&threads[k], NULL, parse_items_thread, &halves[k]) != 0)
            break;
        started++;
    }
#else
    (void)threads;
#endif
    return started;
}

/* Wait for the halves (parsing any that had no thread), then add them in file order (called
 * with the GIL, released while waiting). */
static int
finish_batch(Totals *t, Half halves[2], pthread_t threads[2], int started, Py_ssize_t max_line)
{
    Py_BEGIN_ALLOW_THREADS
#ifdef USE_THREADS
    for (int k = 0; k < started; k++)
        pthread_join(threads[k], NULL);
#else
    (void)threads;
#endif
    for (int k = started; k < 2; k++)
        parse_items(&halves[k]);
    Py_END_ALLOW_THREADS
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        Half *h = &halves[k];
        if (rc == 0 && PyErr_Occurred())          /* reading the next batch failed */
            rc = -1;
        if (rc == 0 && h->again && !h->nomem) {   /* numbers past int64: again, in Python */
            half_reset(h, 1);
            if (parse_items(h) < 0 && !PyErr_Occurred())
                h->nomem = 1;
        }
        if (rc == 0 && h->nomem) {
            if (!PyErr_Occurred())
                PyErr_NoMemory();
            rc = -1;
        }
        if (rc == 0 && (PyErr_Occurred() || add_half(t, h, max_line) < 0))
            rc = -1;
        half_reset(h, 0);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading the file in the Python scanner's blocks                                           */

/* Whether Python code can still reach the memory a view of ours was handed to readinto with:
 * through the view itself, a buffer exported from it, or a view made from it (a slice, a
 * cast). The view is released first, so holding the view object alone is harmless. A
 * readinto that keeps its argument would otherwise write into a buffer later reused by the
 * parser threads, reallocated or freed. Any exception pending is kept. */
static int
view_still_reachable(PyObject *view)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallMethod(view, "release", NULL);
    int reachable = released == NULL || ((PyMemoryViewObject *)view)->mbuf->exports != 0;
    Py_XDECREF(released);
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return reachable;
}

/* fh.read(n)'s length into `into`: readinto until n bytes or the end of the file. -2 (an
 * exception set) when readinto kept a way to the memory: the caller must never free or reuse
 * it. */
static Py_ssize_t
read_full(PyObject *readinto, char *into, Py_ssize_t n)
{
    Py_ssize_t done = 0;
    while (done < n) {
        PyObject *view = PyMemoryView_FromMemory(into + done, n - done, PyBUF_WRITE);
        if (view == NULL)
            return -1;
        PyObject *got = PyObject_CallOneArg(readinto, view);
        int kept = view_still_reachable(view);
        Py_DECREF(view);
        if (kept) {
            Py_XDECREF(got);
            PyErr_SetString(PyExc_BufferError,
                            "readinto kept a view of the buffer it was given");
            return -2;
        }
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
    /* big_longest is only ever set past int64, so it is the longest when set */
    PyObject *longest = e->big_longest != NULL ? Py_NewRef(e->big_longest)
                        : PyLong_FromLongLong(e->longest);
    if (longest == NULL) {
        Py_DECREF(total);
        return NULL;
    }
    return Py_BuildValue("[NLN]", total, (long long)e->calls, longest);
}

static PyObject *
results(Totals *t, int cut)
{
    PyObject *kernels = PyDict_New();
    if (kernels == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < t->kernels.count; i++) {
        Kernel *e = &t->kernels.entries[i];
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
    return Py_BuildValue("NnnnnOO", kernels, t->rows, t->used, t->filtered, t->skipped,
                         t->examples, cut ? Py_True : Py_False);
}

/* Read a batch of blocks as `_line_blocks` reads them, after the `carried` bytes of a line
 * left open by the last batch. -1 on error. */
static int
read_batch(PyObject *readinto, Batch *b, const char *carry, Py_ssize_t carried,
           Py_ssize_t block, Py_ssize_t max_line)
{
    b->n = 0;
    b->pending = 0;
    b->end_of_file = 0;
    b->size = carried;
    if (buf_reserve(&b->data, carried) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (carried)
        memcpy(b->data.data, carry, (size_t)carried);
    for (int k = 0; k < BATCH_BLOCKS; k++) {
        if (b->size > PY_SSIZE_T_MAX - block || buf_reserve(&b->data, b->size + block) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t got = read_full(readinto, b->data.data + b->size, block);
        if (got == -2)                  /* Python code may still write there: never freed */
            b->data = (Buf){NULL, 0, 0};
        if (got < 0)
            return -1;
        if (got == 0) {
            b->end_of_file = 1;
            return 0;
        }
        /* the open line holds no newline, so the last one is in what was just read */
        const char *nl = last_newline(b->data.data + b->size, got);
        b->size += got;
        if (nl == NULL) {
            if (b->size - b->pending > max_line) {      /* dropped, as the scanner does */
                b->items[b->n++] = (Item){b->size, b->size, 1};
                b->pending = b->size;
            }
            continue;
        }
        Py_ssize_t whole = nl - b->data.data + 1;
        b->items[b->n++] = (Item){b->pending, whole, 0};
        b->pending = whole;
    }
    return 0;
}

/* Read and parse the whole file, a batch parsed while the next is read. Returns whether the
 * file ends inside a row (1), 0, or -1 on error. */
static int
read_trace(PyObject *readinto, Totals *t, Half halves[2], Py_ssize_t block,
           Py_ssize_t max_line, Batch batches[2])
{
    pthread_t threads[2];
    Batch *now = &batches[0], *next = &batches[1];
    if (read_batch(readinto, now, NULL, 0, block, max_line) < 0)
        return -1;
    for (;;) {
        int started = start_batch(halves, now, threads);
        int read = now->end_of_file ? 0 : read_batch(readinto, next, now->data.data + now->pending,
                                                     now->size - now->pending, block, max_line);
        /* the threads are waited for even when reading failed */
        if (finish_batch(t, halves, threads, started, max_line) < 0 || read < 0)
            return -1;
        if (now->end_of_file)
            break;
        Batch *done = now;
        now = next;
        next = done;
    }
    for (Py_ssize_t i = now->pending; i < now->size; i++) {     /* bytes.strip()'s spaces */
        char c = now->data.data[i];
        if (!(c == ' ' || (c >= '\t' && c <= '\r')))
            return 1;
    }
    return 0;
}

PyDoc_STRVAR(scan_doc,
"scan(fh, kind, name, start, end, width, block, max_line, field_limit, nul_error,\n"
"     max_examples)\n"
"--\n\n"
"Read the data rows of an open binary trace file (just after its header) as\n"
"rocprof_trace_scan.scan_trace reads them: blocks of `block` bytes, lines longer than\n"
"`max_line` dropped, fields past `field_limit` refused, `nul_error` the csv module's\n"
"message for a NUL (None when it reads one as text). `kind` is -1 without a Kind column.\n"
"Returns (kernels, rows, used, filtered, skipped, examples, cut): kernels maps each raw\n"
"name to [total ns, launches, longest ns] in the order of its first counted row; examples\n"
"are the first `max_examples` distinct reasons; cut is True when the file ends inside a\n"
"row (that row is not counted in rows).");

static PyObject *
scan(PyObject *module, PyObject *args)
{
    PyObject *fh, *nul_error;
    Py_ssize_t block, max_line;
    Layout layout;
    Totals totals;
    Half halves[2];
    (void)module;
    memset(&layout, 0, sizeof(layout));
    memset(&totals, 0, sizeof(totals));
    memset(halves, 0, sizeof(halves));
    if (!PyArg_ParseTuple(args, "OnnnnnnnnOn:scan", &fh, &layout.column[KIND],
                          &layout.column[NAME], &layout.column[START], &layout.column[END],
                          &layout.width, &block, &max_line, &layout.field_limit, &nul_error,
                          &totals.max_examples))
        return NULL;
    for (int w = 0; w < WANTED; w++) {
        int twice = 0;
        for (int v = 0; v < w; v++)
            twice |= layout.column[v] == layout.column[w];
        if (layout.column[w] >= layout.width || layout.column[w] < (w == KIND ? -1 : 0)
            || twice) {
            PyErr_SetString(PyExc_ValueError, "column indices must be distinct, in the header");
            return NULL;
        }
    }
    if (block <= 0 || block > (1 << 30) || max_line < 0 || layout.field_limit < 0) {
        PyErr_SetString(PyExc_ValueError, "block must be 1 byte to 1 GiB, limits not negative");
        return NULL;
    }
    if (nul_error != Py_None && !PyUnicode_Check(nul_error)) {
        PyErr_SetString(PyExc_TypeError, "nul_error must be str or None");
        return NULL;
    }
    layout.nul_refused = nul_error != Py_None;
    totals.nul_error = nul_error;
    layout.ends_plain[','] = layout.ends_plain['\n'] = layout.ends_plain['\r'] = 1;
    layout.ends_plain[0] = (unsigned char)layout.nul_refused;
    PyObject *readinto = PyObject_GetAttrString(fh, "readinto");
    if (readinto == NULL)
        return NULL;
    PyObject *result = NULL;
    Batch *batches = PyMem_RawCalloc(2, sizeof(Batch));
    totals.examples = PyList_New(0);
    layout.wanted_at = PyMem_RawMalloc((size_t)layout.width + 1);
    if (totals.examples == NULL || layout.wanted_at == NULL || batches == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    memset(layout.wanted_at, -1, (size_t)layout.width + 1);
    for (int w = 0; w < WANTED; w++)
        if (layout.column[w] >= 0)
            layout.wanted_at[layout.column[w]] = (signed char)w;
    halves[0].layout = halves[1].layout = &layout;
    int cut = read_trace(readinto, &totals, halves, block, max_line, batches);
    if (cut >= 0)
        result = results(&totals, cut);
done:
    Py_DECREF(readinto);
    if (batches != NULL) {
        PyMem_RawFree(batches[0].data.data);
        PyMem_RawFree(batches[1].data.data);
        PyMem_RawFree(batches);
    }
    for (int k = 0; k < 2; k++) {
        for (int w = 0; w < WANTED; w++)
            PyMem_RawFree(halves[k].copy[w].data);
        kernels_clear(&halves[k].kernels, 0);
    }
    kernels_clear(&totals.kernels, 0);
    PyMem_RawFree(layout.wanted_at);
    Py_XDECREF(totals.examples);
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
