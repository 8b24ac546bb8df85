/* v2 infer requests and responses <-> cort values.
 *
 * The parser never trusts a number it has not checked: element counts are products with overflow
 * checks, capped by serve_limits, and compared with the data actually present (JSON elements counted,
 * or binary_data_size bytes) before anything is allocated, so a request can only make the server
 * allocate in proportion to its own size. Errors name the input and the bad value; they become HTTP
 * 400 answers. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "serve.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 400;
}

static const struct { const char *name; cort_type type; } k_types[] = {
    { "BOOL", CORT_TYPE_BOOL },     { "UINT8", CORT_TYPE_UINT8 },   { "UINT16", CORT_TYPE_UINT16 },
    { "UINT32", CORT_TYPE_UINT32 }, { "UINT64", CORT_TYPE_UINT64 }, { "INT8", CORT_TYPE_INT8 },
    { "INT16", CORT_TYPE_INT16 },   { "INT32", CORT_TYPE_INT32 },   { "INT64", CORT_TYPE_INT64 },
    { "FP16", CORT_TYPE_FLOAT16 },  { "FP32", CORT_TYPE_FLOAT },    { "FP64", CORT_TYPE_DOUBLE },
    { "BF16", CORT_TYPE_BFLOAT16 }, { "BYTES", CORT_TYPE_STRING },
};

const char *serve_datatype_name(cort_type t) {
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (k_types[i].type == t) return k_types[i].name;
    return NULL;
}

int serve_datatype_parse(const char *s, cort_type *t) {
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (strcmp(k_types[i].name, s) == 0) {
            *t = k_types[i].type;
            return 1;
        }
    return 0;
}

/* IEEE half and bfloat16 from float, round to nearest even; NaN stays NaN. */
static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        const int shift = 14 - e;
        uint32_t half = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1);
        const uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;   /* may carry into the exponent: correct */
    return (uint16_t)(sign | half);
}

static float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
    if (exp == 0) {
        if (!mant) x = sign;
        else {
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) { mant <<= 1; exp--; }
            x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
    else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float bf16_to_f32(uint16_t b) {
    const uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* Counts the scalars of a (possibly nested) data array; -1 when deeper than any tensor can be. */
static int64_t count_leaves(const json_t *j, int depth) {
    if (!json_is_array(j)) return 1;
    if (depth > SERVE_MAX_RANK) return -1;
    int64_t n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(j, i, e) {
        const int64_t c = count_leaves(e, depth + 1);
        if (c < 0) return -1;
        n += c;
    }
    return n;
}

typedef struct fill_ctx {
    cort_value *value;
    cort_type   type;
    void       *data;
    size_t      at;
    const char *input;
    char       *err;
    size_t      errlen;
} fill_ctx;

static int json_number(const json_t *e, double *out) {
    if (json_is_integer(e)) *out = (double)json_integer_value(e);
    else if (json_is_real(e)) *out = json_real_value(e);
    else if (json_is_string(e)) {
        /* JSON has no NaN or infinity; responses spell them as these strings and requests may too */
        const char *s = json_string_value(e);
        if (strcmp(s, "NaN") == 0) *out = NAN;
        else if (strcmp(s, "Infinity") == 0) *out = INFINITY;
        else if (strcmp(s, "-Infinity") == 0) *out = -INFINITY;
        else return 0;
    } else return 0;
    return 1;
}

static int fill_one(fill_ctx *c, const json_t *e) {
    const size_t i = c->at++;
    const char *what = NULL;
    switch (c->type) {
    case CORT_TYPE_BOOL:
        if (!json_is_boolean(e)) { what = "a boolean"; break; }
        ((unsigned char *)c->data)[i] = json_is_true(e) ? 1 : 0;
        return 0;
    case CORT_TYPE_STRING: {
        if (!json_is_string(e)) { what = "a string"; break; }
        const size_t len = json_string_length(e);
        if (strlen(json_string_value(e)) != len)
            return fail(c->err, c->errlen, "input '%s': element %zu holds a NUL character, which cort strings cannot", c->input, i);
        cort_status *st = cort_tensor_set_string(c->value, i, json_string_value(e));
        if (st) {
            snprintf(c->err, c->errlen, "input '%s': %s", c->input, cort_status_message(st));
            cort_status_free(st);
            return 500;
        }
        return 0;
    }
    case CORT_TYPE_FLOAT: case CORT_TYPE_DOUBLE: case CORT_TYPE_FLOAT16: case CORT_TYPE_BFLOAT16: {
        double d;
        if (!json_number(e, &d)) { what = "a number"; break; }
        if (c->type == CORT_TYPE_DOUBLE) ((double *)c->data)[i] = d;
        else if (c->type == CORT_TYPE_FLOAT) ((float *)c->data)[i] = (float)d;
        else if (c->type == CORT_TYPE_FLOAT16) ((uint16_t *)c->data)[i] = f32_to_f16((float)d);
        else ((uint16_t *)c->data)[i] = f32_to_bf16((float)d);
        return 0;
    }
    default: {
        if (!json_is_integer(e)) { what = "an integer"; break; }
        const json_int_t v = json_integer_value(e);
        int64_t lo = 0, hi = 0;
        switch (c->type) {
        case CORT_TYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
        case CORT_TYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
        case CORT_TYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
        case CORT_TYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
        case CORT_TYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
        case CORT_TYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
        case CORT_TYPE_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
        case CORT_TYPE_UINT64: lo = 0; hi = INT64_MAX; break;   /* jansson integers are signed 64-bit */
        default: return fail(c->err, c->errlen, "input '%s': element type %s cannot be sent as JSON", c->input,
                             cort_type_name(c->type));
        }
        if (v < lo || v > hi)
            return fail(c->err, c->errlen, "input '%s': element %zu is %lld, outside %s's range", c->input, i,
                        (long long)v, serve_datatype_name(c->type));
        switch (c->type) {
        case CORT_TYPE_INT8: ((int8_t *)c->data)[i] = (int8_t)v; break;
        case CORT_TYPE_UINT8: ((uint8_t *)c->data)[i] = (uint8_t)v; break;
        case CORT_TYPE_INT16: ((int16_t *)c->data)[i] = (int16_t)v; break;
        case CORT_TYPE_UINT16: ((uint16_t *)c->data)[i] = (uint16_t)v; break;
        case CORT_TYPE_INT32: ((int32_t *)c->data)[i] = (int32_t)v; break;
        case CORT_TYPE_UINT32: ((uint32_t *)c->data)[i] = (uint32_t)v; break;
        case CORT_TYPE_INT64: ((int64_t *)c->data)[i] = (int64_t)v; break;
        default: ((uint64_t *)c->data)[i] = (uint64_t)v; break;
        }
        return 0;
    }
    }
    return fail(c->err, c->errlen, "input '%s': element %zu is not %s (datatype %s)", c->input, i, what,
                serve_datatype_name(c->type));
}

static int fill_tree(fill_ctx *c, const json_t *j) {
    if (!json_is_array(j)) return fill_one(c, j);
    size_t i;
    json_t *e;
    json_array_foreach(j, i, e) {
        const int rc = fill_tree(c, e);
        if (rc) return rc;
    }
    return 0;
}

/* Binary BYTES: each element is a 4-byte little-endian length and that many bytes. */
static int fill_binary_strings(cort_value *v, const unsigned char *p, size_t size, size_t count, const char *input,
                               char *err, size_t errlen) {
    size_t at = 0;
    char *tmp = NULL;
    size_t tmp_cap = 0;
    for (size_t i = 0; i < count; i++) {
        if (size - at < 4) {
            free(tmp);
            return fail(err, errlen, "input '%s': binary data ends inside the length of element %zu", input, i);
        }
        const uint32_t len = (uint32_t)p[at] | (uint32_t)p[at + 1] << 8 | (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 3] << 24;
        at += 4;
        if (len > size - at) {
            free(tmp);
            return fail(err, errlen, "input '%s': element %zu claims %u bytes but only %zu remain", input, i, len, size - at);
        }
        if (memchr(p + at, 0, len)) {
            free(tmp);
            return fail(err, errlen, "input '%s': element %zu holds a NUL byte, which cort strings cannot", input, i);
        }
        if ((size_t)len + 1 > tmp_cap) {
            char *n = realloc(tmp, (size_t)len + 1);
            if (!n) {
                free(tmp);
                snprintf(err, errlen, "out of memory");
                return 500;
            }
            tmp = n;
            tmp_cap = (size_t)len + 1;
        }
        memcpy(tmp, p + at, len);
        tmp[len] = 0;
        at += len;
        cort_status *st = cort_tensor_set_string(v, i, tmp);
        if (st) {
            snprintf(err, errlen, "input '%s': %s", input, cort_status_message(st));
            cort_status_free(st);
            free(tmp);
            return 500;
        }
    }
    free(tmp);
    if (at != size)
        return fail(err, errlen, "input '%s': binary_data_size is %zu but its %zu elements use %zu bytes", input, size,
                    count, at);
    return 0;
}

static int get_bool_param(const json_t *params, const char *key, int *out) {
    const json_t *v = params ? json_object_get(params, key) : NULL;
    if (!v) return 0;
    if (!json_is_boolean(v)) return -1;
    *out = json_is_true(v);
    return 1;
}

/* ---- The JSON fast path for the data arrays ------------------------------------------------------
 * jansson builds a tree with one allocation per number and reads each with strtod: on a 16 KB MLP
 * request that was 70% of the server's CPU. The data arrays, which are nearly all of a request,
 * are instead cut out of the text, and scanned into the tensor by the code below once the envelope
 * (parsed by jansson) has given their datatype and shape. The values are exactly those jansson's path
 * gives: integers as 64-bit integers, reals as the correctly rounded double (what strtod returns),
 * narrowed to the element type the same way. */

#define FAST_FALLBACK (-1)   /* not taken by the fast path: parse again with jansson alone */
#define MAX_SPANS 64

typedef struct data_span {
    size_t input;            /* index in the request's inputs array */
    size_t begin, end;       /* the array's text, '[' to ']' inclusive */
} data_span;

/* character classes for skipping text that jansson or scan_data validate later */
enum { C_OTHER = 0, C_WS = 1, C_OPEN = 2, C_CLOSE = 3, C_QUOTE = 4, C_COMMA = 5, C_COLON = 6 };
static const unsigned char k_class[256] = {
    [' '] = C_WS, ['\t'] = C_WS, ['\n'] = C_WS, ['\r'] = C_WS, ['['] = C_OPEN, ['{'] = C_OPEN,
    [']'] = C_CLOSE, ['}'] = C_CLOSE, ['"'] = C_QUOTE, [','] = C_COMMA, [':'] = C_COLON,
};

static const unsigned char k_bracket[256] = { ['['] = 1, ['{'] = 1, [']'] = 1, ['}'] = 1, ['"'] = 1 };

typedef struct lexer {
    const char *s;
    size_t      n, i;
} lexer;

static void lx_ws(lexer *l) {
    while (l->i < l->n && k_class[(unsigned char)l->s[l->i]] == C_WS) l->i++;
}

/* at '"': moves past the closing quote; *b, *e delimit the raw contents */
static int lx_string(lexer *l, size_t *b, size_t *e) {
    size_t i = l->i + 1;
    *b = i;
    while (i < l->n) {
        const char c = l->s[i];
        if (c == '"') {
            *e = i;
            l->i = i + 1;
            return 0;
        }
        i += c == '\\' ? 2 : 1;
    }
    return -1;
}

/* Skips one value without validating it (brackets and strings only matter). */
static int lx_skip(lexer *l) {
    lx_ws(l);
    if (l->i >= l->n) return -1;
    size_t b, e;
    const unsigned char c = k_class[(unsigned char)l->s[l->i]];
    if (c == C_QUOTE) return lx_string(l, &b, &e);
    if (c == C_OPEN) {
        size_t depth = 0;
        while (l->i < l->n) {
            /* a data array is mostly digits: run over them four at a time */
            const unsigned char *u = (const unsigned char *)l->s;
            size_t i = l->i;
            while (i + 4 <= l->n && !(k_bracket[u[i]] | k_bracket[u[i + 1]] | k_bracket[u[i + 2]] | k_bracket[u[i + 3]])) i += 4;
            while (i < l->n && !k_bracket[u[i]]) i++;
            l->i = i;
            if (i >= l->n) break;
            const unsigned char k = k_class[u[i]];
            if (k == C_QUOTE) {
                if (lx_string(l, &b, &e)) return -1;
                continue;
            }
            l->i++;
            if (k == C_OPEN) depth++;
            else if (k == C_CLOSE && --depth == 0) return 0;
        }
        return -1;
    }
    const size_t start = l->i;
    while (l->i < l->n && k_class[(unsigned char)l->s[l->i]] == C_OTHER) l->i++;
    return l->i > start ? 0 : -1;
}

static int lx_key_is(const lexer *l, size_t b, size_t e, const char *key) {
    return e - b == strlen(key) && memcmp(l->s + b, key, e - b) == 0;
}

/* Finds the text of every inputs[i].data that is an array. For valid JSON the walk is exact; for
 * anything else what it finds is harmless: the envelope goes to jansson and the arrays to scan_data,
 * which between them refuse whatever is not JSON (and the request then takes jansson's path). */
static int find_data_spans(const char *s, size_t n, data_span *spans, size_t *n_spans) {
    lexer l = { s, n, 0 };
    size_t b, e;
    lx_ws(&l);
    if (l.i >= n || s[l.i] != '{') return -1;
    l.i++;
    for (;;) {
        lx_ws(&l);
        if (l.i >= n) return -1;
        if (s[l.i] == '}') return 0;
        if (s[l.i] == ',') { l.i++; continue; }
        if (s[l.i] != '"' || lx_string(&l, &b, &e)) return -1;
        const int is_inputs = lx_key_is(&l, b, e, "inputs");
        lx_ws(&l);
        if (l.i >= n || s[l.i] != ':') return -1;
        l.i++;
        lx_ws(&l);
        if (!is_inputs || l.i >= n || s[l.i] != '[') {
            if (lx_skip(&l)) return -1;
            continue;
        }
        l.i++;
        for (size_t index = 0;; index++) {
            lx_ws(&l);
            if (l.i >= n) return -1;
            if (s[l.i] == ']') { l.i++; break; }
            if (s[l.i] != '{') {
                if (lx_skip(&l)) return -1;
            } else {
                l.i++;
                for (;;) {
                    lx_ws(&l);
                    if (l.i >= n) return -1;
                    if (s[l.i] == '}') { l.i++; break; }
                    if (s[l.i] == ',') { l.i++; continue; }
                    if (s[l.i] != '"' || lx_string(&l, &b, &e)) return -1;
                    const int is_data = lx_key_is(&l, b, e, "data");
                    lx_ws(&l);
                    if (l.i >= n || s[l.i] != ':') return -1;
                    l.i++;
                    lx_ws(&l);
                    const size_t begin = l.i;
                    if (lx_skip(&l)) return -1;
                    if (is_data && s[begin] == '[') {
                        if (*n_spans == MAX_SPANS) return -1;
                        for (size_t k = 0; k < *n_spans; k++)
                            if (spans[k].input == index) return -1;   /* a duplicate key: jansson's answer */
                        spans[*n_spans].input = index;
                        spans[*n_spans].begin = begin;
                        spans[*n_spans].end = l.i;
                        (*n_spans)++;
                    }
                }
            }
            lx_ws(&l);
            if (l.i < n && s[l.i] == ',') l.i++;
        }
    }
}

typedef struct num_token {
    int      neg, is_int, truncated;
    int      nd;         /* significant digits in m (at most 19) */
    uint64_t m;
    int64_t  e10;        /* value = m * 10^e10 (digits past the 19th dropped, truncated set) */
} num_token;

static void num_digit(num_token *t, int c, int frac) {
    if (t->m == 0 && c == '0') {
        if (frac) t->e10--;
        return;
    }
    if (t->nd < 19) {
        t->m = t->m * 10 + (uint64_t)(c - '0');
        t->nd++;
        if (frac) t->e10--;
    } else {
        if (c != '0') t->truncated = 1;
        if (!frac) t->e10++;
    }
}

/* Eight ASCII digits at s as their value, or -1 when any of the eight bytes is not a digit. A float
 * printed in full has 16-17 digits, and digit by digit each costs a multiply-add on the previous
 * one (the JSON MLP request's 784 numbers took a third of the server's CPU). Here the eight bytes
 * are combined pairwise in one 64-bit word: pairs of digits, then quads, then all eight, three
 * multiplications in all. The first character is the lowest byte on a little-endian machine. */
static int64_t eight_digits(const char *s) {
    uint64_t v;
    memcpy(&v, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    const uint64_t ones = UINT64_C(0x0101010101010101);
    /* every byte in '0'..'9': its high nibble is 3, and adding 6 does not carry out of the low one */
    if ((v & (ones * 0xf0)) != ones * 0x30 || ((v + ones * 6) & (ones * 0xf0)) != ones * 0x30) return -1;
    v -= ones * '0';
    v = (v * 10 + (v >> 8)) & UINT64_C(0x00ff00ff00ff00ff);        /* 16-bit lanes: d0d1, d2d3, ... */
    v = (v * 100 + (v >> 16)) & UINT64_C(0x0000ffff0000ffff);      /* 32-bit lanes: d0..d3, d4..d7 */
    return (int64_t)((v * 10000 + (v >> 32)) & UINT64_C(0xffffffff));
}

/* Appends the digits at s[i..stop) to m, eight at a time while eight digits are there; returns the
 * index of the first byte not taken. */
static size_t take_digits(const char *s, size_t i, size_t stop, uint64_t *m) {
    uint64_t v = *m;
    int64_t d8;
    while (i + 8 <= stop && (d8 = eight_digits(s + i)) >= 0) {
        v = v * 100000000u + (uint64_t)d8;
        i += 8;
    }
    while (i < stop && (unsigned)(s[i] - '0') < 10) v = v * 10 + (uint64_t)(s[i++] - '0');
    *m = v;
    return i;
}

/* One JSON number (RFC 8259 grammar) at s[0..n): its length, 0 when it is not one. */
static size_t lex_number(const char *s, size_t n, num_token *t) {
    /* field by field: a memset here compiled to rep stos, 15% of the scan */
    t->neg = 0;
    t->is_int = 1;
    t->truncated = 0;
    t->nd = 0;
    t->m = 0;
    t->e10 = 0;
    size_t i = 0;
    if (i < n && s[i] == '-') { t->neg = 1; i++; }
    if (i >= n) return 0;
    if (s[i] == '0') i++;
    else if (s[i] >= '1' && s[i] <= '9') {
        /* the first 19 digits fit in m whatever they are; past them num_digit keeps count */
        const size_t stop = n - i > 19 ? i + 19 : n;
        uint64_t m = 0;
        i = take_digits(s, i, stop, &m);
        t->m = m;
        t->nd = (int)(i - (size_t)t->neg);
        while (i < n && (unsigned)(s[i] - '0') < 10) num_digit(t, s[i++], 0);
    } else return 0;
    if (i < n && s[i] == '.') {
        t->is_int = 0;
        const size_t start = ++i;
        if (t->m == 0) {
            /* leading zeros of a fraction only scale it */
            while (i < n && s[i] == '0') i++;
            t->e10 -= (int64_t)(i - start);
        }
        const size_t room = (size_t)(19 - t->nd), first = i;
        const size_t stop = n - i > room ? i + room : n;
        uint64_t m = t->m;
        i = take_digits(s, i, stop, &m);
        t->m = m;
        t->nd += (int)(i - first);
        t->e10 -= (int64_t)(i - first);
        while (i < n && (unsigned)(s[i] - '0') < 10) num_digit(t, s[i++], 1);
        if (i == start) return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        t->is_int = 0;
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        const size_t start = i;
        int64_t ev = 0;
        while (i < n && (unsigned)(s[i] - '0') < 10) {
            if (ev < 1000000) ev = ev * 10 + (s[i] - '0');
            i++;
        }
        if (i == start) return 0;
        t->e10 += eneg ? -ev : ev;
    }
    return i;
}

/* strtod on the token, as jansson does it; -1 where jansson refuses the number (overflow) */
static int token_strtod(const char *s, size_t len, double *out) {
    char buf[512];
    if (len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    const double d = strtod(buf, &end);
    if (end != buf + len || isinf(d)) return -1;
    *out = d;
    return 0;
}

static const double k_pow10[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* The double of a real token, correctly rounded. m <= 2^53 and |e10| <= 22 make m and 10^|e10| exact
 * doubles and one multiplication or division rounds once (Clinger's fast path); otherwise strtod. */
static int real_double(const char *s, size_t len, const num_token *t, double *out) {
    if (t->m == 0 && !t->truncated) {
        *out = t->neg ? -0.0 : 0.0;
        return 0;
    }
    if (!t->truncated && t->m <= (UINT64_C(1) << 53) && t->e10 >= -22 && t->e10 <= 22) {
        const double d = t->e10 >= 0 ? (double)t->m * k_pow10[t->e10] : (double)t->m / k_pow10[-t->e10];
        *out = t->neg ? -d : d;
        return 0;
    }
    return token_strtod(s, len, out);
}

/* (float) of the correctly rounded double of a real token. With up to 19 digits the product
 * (double)m * 10^e10 is within 4 ulps of that double; unless it lies within 16 ulps of a midpoint
 * between two floats (or outside the normal float range) both round to the same float. */
static int real_float(const char *s, size_t len, const num_token *t, float *out) {
    if (t->m != 0 && t->m > (UINT64_C(1) << 53) && t->e10 >= -22 && t->e10 <= 22) {
        const double d = t->e10 >= 0 ? (double)t->m * k_pow10[t->e10] : (double)t->m / k_pow10[-t->e10];
        uint64_t bits;
        memcpy(&bits, &d, 8);
        const int exp = (int)(bits >> 52) & 0x7ff;
        const uint64_t low = bits & ((UINT64_C(1) << 29) - 1), mid = UINT64_C(1) << 28;
        if (exp > 1023 - 126 && exp < 1023 + 127 && (low + 16 < mid || low > mid + 16)) {
            *out = t->neg ? -(float)d : (float)d;
            return 0;
        }
    }
    double d;
    if (real_double(s, len, t, &d)) return -1;
    *out = (float)d;
    return 0;
}

static int match(const char *s, size_t n, const char *lit) {
    const size_t k = strlen(lit);
    return n >= k && memcmp(s, lit, k) == 0 ? (int)k : 0;
}

/* One element at s[0..n) into data[i]: its length, 0 when the fast path does not take it. */
static size_t scan_element(const char *s, size_t n, cort_type type, void *data, size_t i) {
    if (type == CORT_TYPE_BOOL) {
        int k;
        if ((k = match(s, n, "true"))) ((unsigned char *)data)[i] = 1;
        else if ((k = match(s, n, "false"))) ((unsigned char *)data)[i] = 0;
        return (size_t)k;
    }
    const int real = type == CORT_TYPE_FLOAT || type == CORT_TYPE_DOUBLE || type == CORT_TYPE_FLOAT16 ||
                     type == CORT_TYPE_BFLOAT16;
    if (s[0] == '"') {
        if (!real) return 0;
        double d;
        int k;
        if ((k = match(s, n, "\"NaN\""))) d = NAN;
        else if ((k = match(s, n, "\"Infinity\""))) d = INFINITY;
        else if ((k = match(s, n, "\"-Infinity\""))) d = -INFINITY;
        else return 0;
        if (type == CORT_TYPE_DOUBLE) ((double *)data)[i] = d;
        else if (type == CORT_TYPE_FLOAT) ((float *)data)[i] = (float)d;
        else if (type == CORT_TYPE_FLOAT16) ((uint16_t *)data)[i] = f32_to_f16((float)d);
        else ((uint16_t *)data)[i] = f32_to_bf16((float)d);
        return (size_t)k;
    }
    num_token t;
    const size_t len = lex_number(s, n, &t);
    if (!len) return 0;
    if (t.is_int) {
        /* jansson reads integers with strtoll; 18 digits always fit, longer ones take its path */
        if (t.truncated || t.nd > 18 || t.e10 != 0) return 0;
        const int64_t v = t.neg ? -(int64_t)t.m : (int64_t)t.m;
        switch (type) {
        case CORT_TYPE_FLOAT: ((float *)data)[i] = (float)(double)v; return len;
        case CORT_TYPE_DOUBLE: ((double *)data)[i] = (double)v; return len;
        case CORT_TYPE_FLOAT16: ((uint16_t *)data)[i] = f32_to_f16((float)(double)v); return len;
        case CORT_TYPE_BFLOAT16: ((uint16_t *)data)[i] = f32_to_bf16((float)(double)v); return len;
        case CORT_TYPE_INT8: if (v < INT8_MIN || v > INT8_MAX) return 0; ((int8_t *)data)[i] = (int8_t)v; return len;
        case CORT_TYPE_UINT8: if (v < 0 || v > UINT8_MAX) return 0; ((uint8_t *)data)[i] = (uint8_t)v; return len;
        case CORT_TYPE_INT16: if (v < INT16_MIN || v > INT16_MAX) return 0; ((int16_t *)data)[i] = (int16_t)v; return len;
        case CORT_TYPE_UINT16: if (v < 0 || v > UINT16_MAX) return 0; ((uint16_t *)data)[i] = (uint16_t)v; return len;
        case CORT_TYPE_INT32: if (v < INT32_MIN || v > INT32_MAX) return 0; ((int32_t *)data)[i] = (int32_t)v; return len;
        case CORT_TYPE_UINT32: if (v < 0 || v > UINT32_MAX) return 0; ((uint32_t *)data)[i] = (uint32_t)v; return len;
        case CORT_TYPE_INT64: ((int64_t *)data)[i] = v; return len;
        case CORT_TYPE_UINT64: if (v < 0) return 0; ((uint64_t *)data)[i] = (uint64_t)v; return len;
        default: return 0;
        }
    }
    if (!real) return 0;
    if (type == CORT_TYPE_DOUBLE) return real_double(s, len, &t, &((double *)data)[i]) ? 0 : len;
    float f;
    if (real_float(s, len, &t, &f)) return 0;
    if (type == CORT_TYPE_FLOAT) ((float *)data)[i] = f;
    else if (type == CORT_TYPE_FLOAT16) ((uint16_t *)data)[i] = f32_to_f16(f);
    else ((uint16_t *)data)[i] = f32_to_bf16(f);
    return len;
}

/* A data array s[0..n) ('[' to ']'), nested or flat, into exactly count elements. 0 on success, -1
 * for anything else (not JSON, not of the datatype, too deep, another count): jansson's path then
 * gives the answer and its message. */
static int scan_data(const char *s, size_t n, cort_type type, void *data, size_t count) {
    size_t i = 0, at = 0;
    int depth = 0, want_value = 1, may_close = 0;
    for (;;) {
        while (i < n && k_class[(unsigned char)s[i]] == C_WS) i++;
        if (i >= n) return -1;
        const char c = s[i];
        if (want_value) {
            if (c == '[') {
                /* count_leaves allows arrays nested SERVE_MAX_RANK deep below the outer one */
                if (++depth > SERVE_MAX_RANK + 1) return -1;
                i++;
                may_close = 1;
                continue;
            }
            if (c == ']' && may_close) {
                want_value = 0;
                continue;
            }
            if (at >= count) return -1;
            const size_t len = scan_element(s + i, n - i, type, data, at);
            if (!len) return -1;
            i += len;
            at++;
            want_value = 0;
            continue;
        }
        if (c == ',' && depth > 0) {
            i++;
            want_value = 1;
            may_close = 0;
            continue;
        }
        if (c != ']' || depth == 0) return -1;
        i++;
        if (--depth == 0) {
            while (i < n && k_class[(unsigned char)s[i]] == C_WS) i++;
            return i == n && at == count ? 0 : -1;
        }
    }
}

static int parse_input(const serve_model *m, const json_t *in, size_t index, const unsigned char *bin, size_t bin_size,
                       size_t *bin_at, const serve_limits *limits, const char *span, size_t span_len, serve_request *req,
                       char *err, size_t errlen) {
    if (!json_is_object(in)) return fail(err, errlen, "inputs[%zu] is not an object", index);
    const json_t *jname = json_object_get(in, "name");
    if (!json_is_string(jname)) return fail(err, errlen, "inputs[%zu] has no string \"name\"", index);
    const char *name = json_string_value(jname);
    size_t mi = 0;
    while (mi < m->n_inputs && strcmp(m->inputs[mi].name, name) != 0) mi++;
    if (mi == m->n_inputs) {
        char list[512] = "";
        size_t len = 0;
        for (size_t k = 0; k < m->n_inputs && len < sizeof list; k++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", k ? ", " : "", m->inputs[k].name);
        return fail(err, errlen, "model '%s' has no input '%s' (inputs: %s)", m->name, name, list);
    }
    for (size_t k = 0; k < req->n_inputs; k++)
        if (strcmp(req->input_names[k], name) == 0) return fail(err, errlen, "input '%s' is given twice", name);
    const serve_io *io = &m->inputs[mi];

    const json_t *jtype = json_object_get(in, "datatype");
    if (!json_is_string(jtype)) return fail(err, errlen, "input '%s' has no string \"datatype\"", name);
    cort_type type;
    if (!serve_datatype_parse(json_string_value(jtype), &type))
        return fail(err, errlen, "input '%s': unknown datatype \"%s\"", name, json_string_value(jtype));
    if (type != io->type)
        return fail(err, errlen, "input '%s': datatype %s does not match the model's %s", name, json_string_value(jtype),
                    serve_datatype_name(io->type) ? serve_datatype_name(io->type) : cort_type_name(io->type));

    const json_t *jshape = json_object_get(in, "shape");
    if (!json_is_array(jshape)) return fail(err, errlen, "input '%s' has no \"shape\" array", name);
    const size_t rank = json_array_size(jshape);
    if (rank > SERVE_MAX_RANK) return fail(err, errlen, "input '%s': rank %zu is above %d", name, rank, SERVE_MAX_RANK);
    int64_t shape[SERVE_MAX_RANK];
    uint64_t count = 1;
    for (size_t d = 0; d < rank; d++) {
        const json_t *jd = json_array_get(jshape, d);
        if (!json_is_integer(jd) || json_integer_value(jd) < 0)
            return fail(err, errlen, "input '%s': shape[%zu] is not a non-negative integer", name, d);
        shape[d] = (int64_t)json_integer_value(jd);
        if (shape[d] != 0 && count > limits->max_elements / (uint64_t)shape[d])
            count = limits->max_elements + 1;
        else count *= (uint64_t)shape[d];
    }
    if (count > limits->max_elements) {
        char dims[256] = "";
        size_t len = 0;
        for (size_t d = 0; d < rank && len < sizeof dims; d++)
            len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", d ? "," : "", (long long)shape[d]);
        return fail(err, errlen, "input '%s': shape [%s] has more than %llu elements, the server's limit", name, dims,
                    (unsigned long long)limits->max_elements);
    }

    const json_t *params = json_object_get(in, "parameters");
    if (params && !json_is_object(params)) return fail(err, errlen, "input '%s': \"parameters\" is not an object", name);
    const json_t *jbin = params ? json_object_get(params, "binary_data_size") : NULL;
    const json_t *jdata = json_object_get(in, "data");
    if (span && !json_is_null(jdata)) return FAST_FALLBACK;
    if (jbin && jdata) return fail(err, errlen, "input '%s' has both \"data\" and binary_data_size", name);
    if (!jbin && !jdata) return fail(err, errlen, "input '%s' has neither \"data\" nor binary_data_size", name);

    const size_t esize = type == CORT_TYPE_STRING ? 0 : cort_type_size(type);
    if (jbin) {
        if (!json_is_integer(jbin) || json_integer_value(jbin) < 0)
            return fail(err, errlen, "input '%s': binary_data_size is not a non-negative integer", name);
        const uint64_t size = (uint64_t)json_integer_value(jbin);
        if (size > bin_size - *bin_at)
            return fail(err, errlen, "input '%s': binary_data_size is %llu but only %zu bytes of binary data remain", name,
                        (unsigned long long)size, bin_size - *bin_at);
        if (esize && size != count * esize)
            return fail(err, errlen, "input '%s': binary_data_size is %llu but shape and %s need %llu bytes", name,
                        (unsigned long long)size, serve_datatype_name(type), (unsigned long long)(count * esize));
        if (!esize && count > size / 4)
            return fail(err, errlen, "input '%s': %llu BYTES elements cannot fit in %llu bytes", name,
                        (unsigned long long)count, (unsigned long long)size);
    } else if (span) {
        /* every element takes a character and a separator: allocation stays in proportion to the body */
        if (type == CORT_TYPE_STRING || count > span_len / 2 + 1) return FAST_FALLBACK;
    } else {
        const int64_t n = count_leaves(jdata, 0);
        if (n < 0) return fail(err, errlen, "input '%s': \"data\" is nested deeper than any tensor", name);
        if ((uint64_t)n != count)
            return fail(err, errlen, "input '%s': \"data\" holds %lld elements but shape needs %llu", name, (long long)n,
                        (unsigned long long)count);
    }

    cort_value *v = NULL;
    /* the bytes are used where they lie when they are aligned for the type: a 600 KB image is
     * neither zero-filled nor copied again */
    const unsigned char *in_place = jbin && esize ? bin + *bin_at : NULL;
    if (in_place && (uintptr_t)in_place % esize) in_place = NULL;
    cort_status *st = in_place ? cort_tensor_wrap((void *)(uintptr_t)in_place, (size_t)(count * esize), type, shape, rank, &v)
                               : cort_tensor_create(type, shape, rank, &v);
    if (st) {
        const int oom = cort_status_code(st) == CORT_ERROR_OUT_OF_MEMORY;
        snprintf(err, errlen, "input '%s': %s", name, cort_status_message(st));
        cort_status_free(st);
        return oom ? 503 : 400;
    }
    req->input_names[req->n_inputs] = io->name;
    req->inputs[req->n_inputs] = v;
    req->n_inputs++;
    if (jbin) {
        const size_t size = (size_t)json_integer_value(jbin);
        const unsigned char *p = bin + *bin_at;
        *bin_at += size;
        if (esize) {
            if (in_place) req->borrows_body = 1;
            else if (size) memcpy(cort_tensor_data(v), p, size);
            if (type == CORT_TYPE_BOOL)
                for (size_t i = 0; i < size; i++)
                    if (p[i] > 1) return fail(err, errlen, "input '%s': BOOL element %zu is byte %u, not 0 or 1", name, i, p[i]);
            return 0;
        }
        return fill_binary_strings(v, p, size, (size_t)count, name, err, errlen);
    }
    if (span) return scan_data(span, span_len, type, cort_tensor_data(v), (size_t)count) ? FAST_FALLBACK : 0;
    fill_ctx c = { v, type, cort_tensor_data(v), 0, name, err, errlen };
    return fill_tree(&c, jdata);
}

/* The request after its JSON is parsed; spans[0..n_spans) are the fast path's data arrays (none on
 * the jansson-only path). */
static int parse_root(const serve_model *m, json_t *root, const char *body, size_t length, size_t header_length,
                      const serve_limits *limits, const data_span *spans, size_t n_spans, serve_request *req, char *err,
                      size_t errlen) {
    int rc = 0;
    size_t spans_used = 0;
    if (!json_is_object(root)) {
        rc = fail(err, errlen, "the request is not a JSON object");
        goto done;
    }
    const json_t *jid = json_object_get(root, "id");
    if (jid) {
        if (!json_is_string(jid)) {
            rc = fail(err, errlen, "\"id\" is not a string");
            goto done;
        }
        req->id = strdup(json_string_value(jid));
        if (!req->id) { rc = 500; snprintf(err, errlen, "out of memory"); goto done; }
    }
    const json_t *params = json_object_get(root, "parameters");
    if (params && !json_is_object(params)) {
        rc = fail(err, errlen, "\"parameters\" is not an object");
        goto done;
    }
    int all_binary = 0;
    if (get_bool_param(params, "binary_data_output", &all_binary) < 0) {
        rc = fail(err, errlen, "parameters.binary_data_output is not a boolean");
        goto done;
    }
    const json_t *inputs = json_object_get(root, "inputs");
    if (!json_is_array(inputs)) {
        rc = fail(err, errlen, "the request has no \"inputs\" array");
        goto done;
    }
    const size_t n_in = json_array_size(inputs);
    if (n_in > m->n_inputs) {
        rc = fail(err, errlen, "%zu inputs given but model '%s' has %zu", n_in, m->name, m->n_inputs);
        goto done;
    }
    req->input_names = calloc(m->n_inputs ? m->n_inputs : 1, sizeof *req->input_names);
    req->inputs = calloc(m->n_inputs ? m->n_inputs : 1, sizeof *req->inputs);
    req->output_names = calloc(m->n_outputs ? m->n_outputs : 1, sizeof *req->output_names);
    req->output_binary = calloc(m->n_outputs ? m->n_outputs : 1, 1);
    if (!req->input_names || !req->inputs || !req->output_names || !req->output_binary) {
        rc = 500;
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    const unsigned char *bin = (const unsigned char *)body + header_length;
    const size_t bin_size = length - header_length;
    size_t bin_at = 0;
    for (size_t i = 0; i < n_in; i++) {
        const data_span *sp = NULL;
        for (size_t k = 0; k < n_spans; k++)
            if (spans[k].input == i) sp = &spans[k];
        spans_used += sp != NULL;
        rc = parse_input(m, json_array_get(inputs, i), i, bin, bin_size, &bin_at, limits, sp ? body + sp->begin : NULL,
                         sp ? sp->end - sp->begin : 0, req, err, errlen);
        if (rc) goto done;
    }
    if (spans_used != n_spans) {
        rc = FAST_FALLBACK;
        goto done;
    }
    if (bin_at != bin_size) {
        rc = fail(err, errlen, "%zu bytes of binary data follow the JSON but the inputs use %zu", bin_size, bin_at);
        goto done;
    }
    for (size_t k = 0; k < m->n_inputs; k++) {
        size_t i = 0;
        while (i < req->n_inputs && req->input_names[i] != m->inputs[k].name) i++;
        if (i == req->n_inputs) {
            rc = fail(err, errlen, "input '%s' of model '%s' is missing", m->inputs[k].name, m->name);
            goto done;
        }
    }

    const json_t *outputs = json_object_get(root, "outputs");
    if (outputs && !json_is_array(outputs)) {
        rc = fail(err, errlen, "\"outputs\" is not an array");
        goto done;
    }
    if (!outputs || json_array_size(outputs) == 0) {
        for (size_t k = 0; k < m->n_outputs; k++) {
            req->output_names[k] = m->outputs[k].name;
            req->output_binary[k] = (unsigned char)all_binary;
        }
        req->n_outputs = m->n_outputs;
    } else {
        size_t i;
        json_t *o;
        json_array_foreach(outputs, i, o) {
            const json_t *jn = json_is_object(o) ? json_object_get(o, "name") : NULL;
            if (!json_is_string(jn)) {
                rc = fail(err, errlen, "outputs[%zu] has no string \"name\"", i);
                goto done;
            }
            size_t k = 0;
            while (k < m->n_outputs && strcmp(m->outputs[k].name, json_string_value(jn)) != 0) k++;
            if (k == m->n_outputs) {
                rc = fail(err, errlen, "model '%s' has no output '%s'", m->name, json_string_value(jn));
                goto done;
            }
            for (size_t r = 0; r < req->n_outputs; r++)
                if (req->output_names[r] == m->outputs[k].name) {
                    rc = fail(err, errlen, "output '%s' is requested twice", m->outputs[k].name);
                    goto done;
                }
            const json_t *op = json_object_get(o, "parameters");
            if (op && !json_is_object(op)) {
                rc = fail(err, errlen, "outputs[%zu].parameters is not an object", i);
                goto done;
            }
            int b = all_binary;
            if (get_bool_param(op, "binary_data", &b) < 0) {
                rc = fail(err, errlen, "output '%s': parameters.binary_data is not a boolean", m->outputs[k].name);
                goto done;
            }
            req->output_names[req->n_outputs] = m->outputs[k].name;
            req->output_binary[req->n_outputs] = (unsigned char)b;
            req->n_outputs++;
        }
    }
done:
    return rc;
}

int serve_parse_request(const serve_model *m, const char *body, size_t length, size_t header_length,
                        const serve_limits *limits, serve_request *req, char *err, size_t errlen) {
    if (header_length > length)
        return fail(err, errlen, "Inference-Header-Content-Length is %zu but the body has %zu bytes", header_length, length);
    json_error_t jerr;
    int rc;
    if (!limits->json_fast_path_off) {
        /* jansson parses the envelope with the data arrays cut out (each replaced by null); the arrays
         * are scanned straight into the tensors. Anything the fast path does not take as it is,
         * including every error, is parsed again by jansson alone, so answers and messages are the same
         * either way (fuzz_serve compares the two). */
        data_span spans[MAX_SPANS];
        size_t n_spans = 0;
        if (find_data_spans(body, header_length, spans, &n_spans) == 0 && n_spans) {
            size_t env_len = header_length;
            for (size_t k = 0; k < n_spans; k++) env_len -= spans[k].end - spans[k].begin;
            env_len += 4 * n_spans;
            char *env = malloc(env_len ? env_len : 1);
            if (env) {
                size_t at = 0, from = 0;
                for (size_t k = 0; k < n_spans; k++) {
                    memcpy(env + at, body + from, spans[k].begin - from);
                    at += spans[k].begin - from;
                    memcpy(env + at, "null", 4);
                    at += 4;
                    from = spans[k].end;
                }
                memcpy(env + at, body + from, header_length - from);
                json_t *root = json_loadb(env, env_len, JSON_REJECT_DUPLICATES, &jerr);
                free(env);
                if (root) {
                    rc = parse_root(m, root, body, length, header_length, limits, spans, n_spans, req, err, errlen);
                    json_decref(root);
                    if (rc == 0) return 0;
                }
                serve_request_free(req);
            }
        }
    }
    json_t *root = json_loadb(body, header_length, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) return fail(err, errlen, "malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    rc = parse_root(m, root, body, length, header_length, limits, NULL, 0, req, err, errlen);
    json_decref(root);
    return rc;
}

void serve_request_free(serve_request *req) {
    if (!req) return;
    for (size_t i = 0; i < req->n_inputs; i++) cort_value_release(req->inputs[i]);
    free(req->id);
    free(req->input_names);
    free(req->inputs);
    free(req->output_names);
    free(req->output_binary);
    free(req->body);
    memset(req, 0, sizeof *req);
}

char *serve_error_json(const char *msg) {
    json_t *o = json_object();
    char *s = NULL;
    if (o) {
        /* cort's messages quote model text; a non-UTF-8 byte must not lose the whole answer */
        json_t *m = json_string(msg);
        if (!m) m = json_string("error message is not valid UTF-8");
        json_object_set_new(o, "error", m);
        s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    return s;
}

/* ---- Responses, written straight into one buffer ------------------------------------------------
 * No jansson tree per number: reals are printed with snprintf and spelled as jansson spells them (a
 * '.' or an exponent always present, no '+' or leading zeros in the exponent), with 9 significant
 * digits (every float32 reads back exactly) or 17 (every double). jansson still escapes
 * strings and checks their UTF-8. */
typedef struct sbuf {
    char  *p;
    size_t len, cap;
    int    oom;
} sbuf;

static char *sb_room(sbuf *b, size_t extra) {
    if (b->oom) return NULL;
    if (extra > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < extra) {
            if (cap > SIZE_MAX / 2) { b->oom = 1; return NULL; }
            cap *= 2;
        }
        char *n = realloc(b->p, cap);
        if (!n) { b->oom = 1; return NULL; }
        b->p = n;
        b->cap = cap;
    }
    return b->p + b->len;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
    char *d = sb_room(b, n);
    if (!d) return;
    memcpy(d, s, n);
    b->len += n;
}

static void sb_lit(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* a JSON string; -1 when s is not UTF-8 */
static int sb_string(sbuf *b, const char *s) {
    json_t *j = json_string(s);
    if (!j) return -1;
    const size_t need = json_dumpb(j, NULL, 0, JSON_ENCODE_ANY);
    char *d = need ? sb_room(b, need) : NULL;
    if (d) b->len += json_dumpb(j, d, need, JSON_ENCODE_ANY);
    else b->oom = 1;
    json_decref(j);
    return 0;
}

static void sb_u64(sbuf *b, uint64_t v, int neg) {
    char t[24];
    int k = (int)sizeof t;
    do {
        t[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (neg) t[--k] = '-';
    sb_put(b, t + k, sizeof t - (size_t)k);
}

static void sb_i64(sbuf *b, int64_t v) { sb_u64(b, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0); }

/* printf's "%.9g" of a float, character for character, for 0 and magnitudes in [2^-23, 2^39)
 * (where model outputs nearly always are); 0 for the others, which go to printf. snprintf costs about
 * 180 ns per number, and a 1000-class output answered in JSON was 3% of MobileNetV2's server CPU (a
 * 640x640 map would take 70 ms). The float is m * 2^e exactly; q, its first nine significant digits,
 * comes from that product times a power of ten in 128-bit integers, truncated to fix the decimal
 * exponent X and then rounded half to even, as printf rounds exact values. */
#ifdef __SIZEOF_INT128__
static const uint64_t k_p10u[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
                                     100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
                                     1000000000000ull, 10000000000000ull, 100000000000000ull,
                                     1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
                                     1000000000000000000ull, 10000000000000000000ull };

static int float_g9(float f, char *t) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    const uint32_t bexp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
    int n = 0;
    if (bits >> 31) t[n++] = '-';
    if (bexp == 0 && man == 0) {
        t[n++] = '0';
        return n;
    }
    if (bexp < 127 - 23 || bexp >= 127 + 39) return 0;
    const uint64_t m = man | 0x800000u;
    const int e = (int)bexp - 150;   /* f = m * 2^e, -46 <= e <= 15 */
    /* X = floor(log10 |f|), estimated from the binary exponent and corrected below */
    int X = (int)floor((double)((int)bexp - 127) * 0.30102999566398120);
    uint64_t q = 0;
    int settled = 0;
    for (int tries = 0; tries < 4 && !settled; tries++) {
        const int p = 8 - X;   /* q = |f| * 10^p, -3 <= p <= 16 */
        /* q0 = num / den with den a power of two (a shift) or, for |f| >= 1e9, a power of ten */
        unsigned __int128 q0, rem, den;
        if (p >= 0) {
            const unsigned __int128 num = (unsigned __int128)m * k_p10u[p];
            const int sh = e < 0 ? -e : 0;
            q0 = (num << (e > 0 ? e : 0)) >> sh;
            den = (unsigned __int128)1 << sh;
            rem = num & (den - 1);
        } else {
            if (e < 0) return 0;   /* not reached: |f| >= 1e9 has e >= 6, so m << e < 2^39 */
            const uint64_t num = m << e, d10 = k_p10u[-p];
            q0 = num / d10;
            rem = num % d10;
            den = d10;
        }
        if (q0 < k_p10u[8]) { X--; continue; }
        if (q0 >= k_p10u[9]) { X++; continue; }
        q = (uint64_t)q0;
        if (2 * rem > den || (2 * rem == den && (q & 1))) q++;
        if (q == k_p10u[9]) { q = k_p10u[8]; X++; }
        settled = 1;
    }
    if (!settled) return 0;
    char d[9];
    for (int i = 8; i >= 0; i--) { d[i] = (char)('0' + q % 10); q /= 10; }
    int nd = 9;
    while (nd > 1 && d[nd - 1] == '0') nd--;   /* %g drops trailing zeros, and a bare point */
    if (X < -4 || X >= 9) {
        t[n++] = d[0];
        if (nd > 1) {
            t[n++] = '.';
            for (int i = 1; i < nd; i++) t[n++] = d[i];
        }
        t[n++] = 'e';
        t[n++] = X < 0 ? '-' : '+';
        const int ax = X < 0 ? -X : X;
        t[n++] = (char)('0' + ax / 10);
        t[n++] = (char)('0' + ax % 10);
    } else if (X >= 0) {
        for (int i = 0; i <= X; i++) t[n++] = i < nd ? d[i] : '0';
        if (nd > X + 1) {
            t[n++] = '.';
            for (int i = X + 1; i < nd; i++) t[n++] = d[i];
        }
    } else {
        t[n++] = '0';
        t[n++] = '.';
        for (int i = 0; i < -X - 1; i++) t[n++] = '0';
        for (int i = 0; i < nd; i++) t[n++] = d[i];
    }
    return n;
}
#else
static int float_g9(float f, char *t) {
    (void)f;
    (void)t;
    return 0;
}
#endif

static void sb_real(sbuf *b, double d, int digits) {
    if (isnan(d)) { sb_lit(b, "\"NaN\""); return; }
    if (isinf(d)) { sb_lit(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\""); return; }
    char t[48];
    int n = digits == 9 && (double)(float)d == d ? float_g9((float)d, t) : 0;
    if (!n) n = snprintf(t, sizeof t - 2, "%.*g", digits, d);
    if (n <= 0 || n >= (int)sizeof t - 2) { b->oom = 1; return; }
    char *e = memchr(t, 'e', (size_t)n);
    if (!e && !memchr(t, '.', (size_t)n)) {
        memcpy(t + n, ".0", 2);
        n += 2;
    } else if (e) {
        /* "1e+20" -> "1e20", "1e-07" -> "1e-7", as jansson writes them */
        char *p = e + 1, *q = e + 1;
        if (*q == '-') *p++ = *q++;
        else if (*q == '+') q++;
        while (*q == '0' && q[1]) q++;
        const size_t rest = (size_t)(t + n - q);
        memmove(p, q, rest);
        n = (int)(p + rest - t);
    }
    sb_put(b, t, (size_t)n);
}

static int write_data(sbuf *b, const cort_value *v, int digits, char *err, size_t errlen, const char *name) {
    const cort_type t = cort_tensor_type(v);
    const size_t n = cort_tensor_element_count(v);
    const void *p = cort_tensor_data(v);
    sb_put(b, "[", 1);
    for (size_t i = 0; i < n && !b->oom; i++) {
        if (i) sb_put(b, ",", 1);
        switch (t) {
        case CORT_TYPE_BOOL: sb_lit(b, ((const unsigned char *)p)[i] ? "true" : "false"); break;
        case CORT_TYPE_UINT8: sb_u64(b, ((const uint8_t *)p)[i], 0); break;
        case CORT_TYPE_INT8: sb_i64(b, ((const int8_t *)p)[i]); break;
        case CORT_TYPE_UINT16: sb_u64(b, ((const uint16_t *)p)[i], 0); break;
        case CORT_TYPE_INT16: sb_i64(b, ((const int16_t *)p)[i]); break;
        case CORT_TYPE_UINT32: sb_u64(b, ((const uint32_t *)p)[i], 0); break;
        case CORT_TYPE_INT32: sb_i64(b, ((const int32_t *)p)[i]); break;
        case CORT_TYPE_INT64: sb_i64(b, ((const int64_t *)p)[i]); break;
        case CORT_TYPE_UINT64: sb_u64(b, ((const uint64_t *)p)[i], 0); break;   /* exact, also above 2^63 */
        case CORT_TYPE_FLOAT: sb_real(b, ((const float *)p)[i], digits); break;
        case CORT_TYPE_DOUBLE: sb_real(b, ((const double *)p)[i], digits); break;
        case CORT_TYPE_FLOAT16: sb_real(b, f16_to_f32(((const uint16_t *)p)[i]), digits); break;
        case CORT_TYPE_BFLOAT16: sb_real(b, bf16_to_f32(((const uint16_t *)p)[i]), digits); break;
        case CORT_TYPE_STRING: {
            const char *s = ((char *const *)p)[i];
            if (sb_string(b, s ? s : "")) {
                snprintf(err, errlen, "output '%s': element %zu is not valid UTF-8; request it with binary_data", name, i);
                return -1;
            }
            break;
        }
        default:
            snprintf(err, errlen, "output '%s': element type %s has no v2 datatype", name, cort_type_name(t));
            return -1;
        }
    }
    sb_put(b, "]", 1);
    return 0;
}

/* Bytes of an output in the binary extension. */
static size_t binary_size(const cort_value *v) {
    if (cort_tensor_type(v) != CORT_TYPE_STRING) return cort_tensor_bytes(v);
    const size_t n = cort_tensor_element_count(v);
    char *const *s = cort_tensor_data(v);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += 4 + (s[i] ? strlen(s[i]) : 0);
    return total;
}

static void binary_write(const cort_value *v, unsigned char *dst) {
    if (cort_tensor_type(v) != CORT_TYPE_STRING) {
        memcpy(dst, cort_tensor_data(v), cort_tensor_bytes(v));
        return;
    }
    const size_t n = cort_tensor_element_count(v);
    char *const *s = cort_tensor_data(v);
    for (size_t i = 0; i < n; i++) {
        const size_t len = s[i] ? strlen(s[i]) : 0;
        dst[0] = (unsigned char)len;
        dst[1] = (unsigned char)(len >> 8);
        dst[2] = (unsigned char)(len >> 16);
        dst[3] = (unsigned char)(len >> 24);
        if (len) memcpy(dst + 4, s[i], len);
        dst += 4 + len;
    }
}

int serve_build_response(const serve_model *m, const serve_request *req, cort_value *const *outputs,
                         serve_response *resp, char *err, size_t errlen) {
    memset(resp, 0, sizeof *resp);
    sbuf b = { 0 };
    size_t bin_total = 0;
    /* one precision for the whole answer, as jansson's writer had it: 17 digits when an FP64 output
     * is present (FP16 and BF16 values then read back exactly even as doubles), else 9 */
    int digits = 9;
    for (size_t i = 0; i < req->n_outputs; i++)
        if (cort_value_kind(outputs[i]) == 1 && cort_tensor_type(outputs[i]) == CORT_TYPE_DOUBLE) digits = 17;
    sb_lit(&b, "{\"model_name\":");
    if (sb_string(&b, m->name)) sb_lit(&b, "\"\"");
    sb_lit(&b, ",\"model_version\":");
    if (sb_string(&b, m->version)) sb_lit(&b, "\"\"");
    if (req->id) {
        const size_t at = b.len;
        sb_lit(&b, ",\"id\":");
        if (sb_string(&b, req->id)) b.len = at;
    }
    sb_lit(&b, ",\"outputs\":[");
    for (size_t i = 0; i < req->n_outputs; i++) {
        const cort_value *v = outputs[i];
        const char *name = req->output_names[i];
        if (cort_value_kind(v) != 1) {
            snprintf(err, errlen, "output '%s' is not a tensor (a sequence or map); the v2 protocol carries tensors only", name);
            goto fail;
        }
        const char *dt = serve_datatype_name(cort_tensor_type(v));
        if (!dt) {
            snprintf(err, errlen, "output '%s': element type %s has no v2 datatype", name, cort_type_name(cort_tensor_type(v)));
            goto fail;
        }
        sb_lit(&b, i ? ",{\"name\":" : "{\"name\":");
        if (sb_string(&b, name)) sb_lit(&b, "\"\"");
        sb_lit(&b, ",\"datatype\":\"");
        sb_lit(&b, dt);
        sb_lit(&b, "\",\"shape\":[");
        for (size_t d = 0; d < cort_tensor_rank(v); d++) {
            if (d) sb_put(&b, ",", 1);
            sb_i64(&b, cort_tensor_shape(v)[d]);
        }
        sb_put(&b, "]", 1);
        if (req->output_binary[i]) {
            const size_t size = binary_size(v);
            sb_lit(&b, ",\"parameters\":{\"binary_data_size\":");
            sb_u64(&b, size, 0);
            sb_put(&b, "}", 1);
            bin_total += size;
        } else {
            sb_lit(&b, ",\"data\":");
            if (write_data(&b, v, digits, err, errlen, name)) goto fail;
        }
        sb_put(&b, "}", 1);
    }
    sb_lit(&b, "]}");
    const size_t jlen = b.len;
    if (bin_total) {
        unsigned char *dst = (unsigned char *)sb_room(&b, bin_total);
        if (dst) {
            for (size_t i = 0; i < req->n_outputs; i++)
                if (req->output_binary[i]) {
                    binary_write(outputs[i], dst);
                    dst += binary_size(outputs[i]);
                }
            b.len += bin_total;
        }
    } else sb_room(&b, 1);
    if (b.oom) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (!bin_total) b.p[b.len] = 0;   /* callers may treat a JSON-only body as a string */
    resp->body = b.p;
    resp->length = b.len;
    resp->json_length = jlen;
    return 0;
fail:
    free(b.p);
    return 500;
}
