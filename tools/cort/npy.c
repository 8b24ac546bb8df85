/* NumPy .npy format: magic "\x93NUMPY", version, header length (2 bytes in 1.0, 4 bytes in 2.0/3.0),
 * a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with spaces and
 * '\n', then the raw C-order data. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "npy.h"
#include "cli.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/value.h"

#define NPY_MAX_RANK 16

typedef struct npy_header {
    cort_type type;
    size_t    itemsize;      /* bytes per element in the file */
    int       unicode;       /* '<U': itemsize/4 UCS-4 code points per element */
    int       bytestr;       /* '|S': itemsize raw bytes per element */
    int       fortran;
    size_t    rank;
    int64_t   shape[NPY_MAX_RANK];
    int       have_descr, have_fortran, have_shape;
} npy_header;

/* ---- header parsing: a tiny reader for the dict literal numpy writes ---- */

typedef struct npy_cursor { const char *p, *end; } npy_cursor;

static void npy_skip_ws(npy_cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int npy_eat(npy_cursor *c, char ch) {
    npy_skip_ws(c);
    if (c->p < c->end && *c->p == ch) { c->p++; return 1; }
    return 0;
}

/* A quoted string literal; returns its bounds (no escapes appear in numpy headers). */
static int npy_string(npy_cursor *c, const char **s, size_t *n) {
    npy_skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    const char *b = c->p;
    while (c->p < c->end && *c->p != q) c->p++;
    if (c->p >= c->end) return 0;
    *s = b;
    *n = (size_t)(c->p - b);
    c->p++;
    return 1;
}

static int npy_word(npy_cursor *c, const char *w) {
    npy_skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) { c->p += n; return 1; }
    return 0;
}

static cort_status *npy_descr(const char *s, size_t n, const char *what, npy_header *h) {
    char buf[32];
    if (n == 0 || n >= sizeof buf) goto bad;
    memcpy(buf, s, n);
    buf[n] = 0;
    char order = buf[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') goto bad;
    char kind = buf[1];
    if (kind == 0) goto bad;
    size_t size = 0;
    const char *d = buf + 2;
    if (*d == 0) goto bad;
    for (; *d; d++) {
        if (*d < '0' || *d > '9' || size > 100000000) goto bad;
        size = size * 10 + (size_t)(*d - '0');
    }
    if (size == 0 && kind != 'U' && kind != 'S') goto bad;
    if (order == '>' && size > 1 && kind != 'S')
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: big-endian dtype '%s' is not supported (use little-endian)",
                          what, buf);
    h->itemsize = size;
    switch (kind) {
    case 'f':
        if (size == 2) h->type = CORT_TYPE_FLOAT16;
        else if (size == 4) h->type = CORT_TYPE_FLOAT;
        else if (size == 8) h->type = CORT_TYPE_DOUBLE;
        else goto unsupported;
        break;
    case 'i':
        if (size == 1) h->type = CORT_TYPE_INT8;
        else if (size == 2) h->type = CORT_TYPE_INT16;
        else if (size == 4) h->type = CORT_TYPE_INT32;
        else if (size == 8) h->type = CORT_TYPE_INT64;
        else goto unsupported;
        break;
    case 'u':
        if (size == 1) h->type = CORT_TYPE_UINT8;
        else if (size == 2) h->type = CORT_TYPE_UINT16;
        else if (size == 4) h->type = CORT_TYPE_UINT32;
        else if (size == 8) h->type = CORT_TYPE_UINT64;
        else goto unsupported;
        break;
    case 'b':
        if (size != 1) goto unsupported;
        h->type = CORT_TYPE_BOOL;
        break;
    case 'c':
        if (size == 8) h->type = CORT_TYPE_COMPLEX64;
        else if (size == 16) h->type = CORT_TYPE_COMPLEX128;
        else goto unsupported;
        break;
    case 'U':
        if (order == '>' ) goto unsupported;
        h->type = CORT_TYPE_STRING;
        h->unicode = 1;
        h->itemsize = size * 4;
        break;
    case 'S':
        h->type = CORT_TYPE_STRING;
        h->bytestr = 1;
        break;
    default:
        goto unsupported;
    }
    h->have_descr = 1;
    return NULL;
unsupported:
    return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: unsupported dtype '%s'", what, buf);
bad:
    return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: malformed dtype '%.*s'", what, (int)(n < 32 ? n : 32), s);
}

static cort_status *npy_parse_header(const char *text, size_t len, const char *what, npy_header *h) {
    npy_cursor c = { text, text + len };
    memset(h, 0, sizeof *h);
    if (!npy_eat(&c, '{')) goto bad;
    for (;;) {
        if (npy_eat(&c, '}')) break;
        const char *key;
        size_t klen;
        if (!npy_string(&c, &key, &klen) || !npy_eat(&c, ':')) goto bad;
        if (klen == 5 && memcmp(key, "descr", 5) == 0) {
            const char *s;
            size_t n;
            npy_skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: structured dtypes are not supported", what);
            if (!npy_string(&c, &s, &n)) goto bad;
            CORT_TRY(npy_descr(s, n, what, h));
        } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
            if (npy_word(&c, "True")) h->fortran = 1;
            else if (npy_word(&c, "False")) h->fortran = 0;
            else goto bad;
            h->have_fortran = 1;
        } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
            if (!npy_eat(&c, '(')) goto bad;
            h->rank = 0;
            for (;;) {
                if (npy_eat(&c, ')')) break;
                npy_skip_ws(&c);
                int64_t v = 0;
                int digits = 0;
                while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
                    if (v > (INT64_MAX - 9) / 10) goto bad;
                    v = v * 10 + (*c.p - '0');
                    c.p++;
                    digits++;
                }
                if (c.p < c.end && *c.p == 'L') c.p++;   /* Python 2 long literal */
                if (!digits) goto bad;
                if (h->rank >= NPY_MAX_RANK)
                    return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: rank above %d is not supported", what, NPY_MAX_RANK);
                h->shape[h->rank++] = v;
                if (npy_eat(&c, ')')) break;
                if (!npy_eat(&c, ',')) goto bad;
            }
            h->have_shape = 1;
        } else {
            goto bad;
        }
        if (npy_eat(&c, '}')) break;
        if (!npy_eat(&c, ',')) goto bad;
    }
    if (!h->have_descr || !h->have_fortran || !h->have_shape) goto bad;
    if (h->fortran)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "%s: fortran_order True is not supported (save a C-contiguous array)", what);
    return NULL;
bad:
    return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: malformed .npy header '%.*s'", what,
                      (int)(len < 200 ? len : 200), text);
}

/* ---- UTF-8 <-> code points ---- */

static size_t utf8_encode(uint32_t cp, char *o) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xc0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decodes one code point at s; returns bytes consumed, 0 for invalid UTF-8. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp) {
    unsigned char c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t n;
    uint32_t v, min;
    if ((c & 0xe0) == 0xc0) { n = 2; v = c & 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { n = 3; v = c & 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { n = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return n;
}

static uint32_t rd_u32le(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* ---- reading ---- */

static cort_status *npy_fill_strings(cort_value *t, const unsigned char *data, size_t count, const npy_header *h,
                                     const char *what) {
    cort_status *st = NULL;
    size_t ncp = h->unicode ? h->itemsize / 4 : h->itemsize;
    char *buf = cort_malloc(ncp * 4 + 1);
    if (!buf) return cort_error_oom();
    for (size_t i = 0; i < count; i++) {
        const unsigned char *e = data + i * h->itemsize;
        size_t o = 0;
        if (h->unicode) {
            for (size_t k = 0; k < ncp; k++) {
                uint32_t cp = rd_u32le(e + 4 * k);
                if (cp == 0) break;   /* numpy pads with NUL code points */
                if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                    st = cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: string element %zu holds invalid code point 0x%x",
                                    what, i, (unsigned)cp);
                    goto done;
                }
                o += utf8_encode(cp, buf + o);
            }
        } else {
            while (o < ncp && e[o]) { buf[o] = (char)e[o]; o++; }
        }
        buf[o] = 0;
        if ((st = cort_tensor_set_string(t, i, buf))) goto done;
    }
done:
    cort_free(buf);
    return st;
}

cort_status *npy_parse(const void *bytes, size_t len, const char *what, cort_value **out) {
    const unsigned char *b = bytes;
    cort_value *t = NULL;
    cort_status *st = NULL;
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", what);
    unsigned major = b[6], minor = b[7];
    size_t hlen, hoff;
    if (major == 1) {
        hlen = (size_t)b[8] | ((size_t)b[9] << 8);
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: truncated .npy header", what);
        hlen = rd_u32le(b + 8);
        hoff = 12;
    } else {
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: unsupported .npy format version %u.%u", what, major, minor);
    }
    if (hlen > len - hoff) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: truncated .npy header", what);
    npy_header h;
    CORT_TRY(npy_parse_header((const char *)b + hoff, hlen, what, &h));
    int overflow = 0;
    size_t count = 1;
    for (size_t i = 0; i < h.rank; i++) {
        if (h.shape[i] != 0 && count > SIZE_MAX / (size_t)h.shape[i]) overflow = 1;
        count *= (size_t)h.shape[i];
    }
    if (overflow || (h.itemsize && count > SIZE_MAX / h.itemsize))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: shape is too large", what);
    /* Zero-width elements ('<U0') take no bytes in the file, so any count passes the length check
     * below, yet each becomes a string pointer: a 130-byte file asked for 26 TB (fuzz_values). */
    if (!h.itemsize && count > ((size_t)1 << 20))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: %zu elements of zero width (at most %zu)", what, count,
                          (size_t)1 << 20);
    size_t need = count * h.itemsize, doff = hoff + hlen;
    if (len - doff < need)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s: data is truncated (%zu bytes, shape needs %zu)", what,
                          len - doff, need);
    CORT_TRY(cort_tensor_create(h.type, h.shape, h.rank, &t));
    if (h.type == CORT_TYPE_STRING) {
        if ((st = npy_fill_strings(t, b + doff, count, &h, what))) goto error;
    } else if (h.type == CORT_TYPE_BOOL) {
        uint8_t *d = cort_tensor_data(t);
        for (size_t i = 0; i < count; i++) d[i] = b[doff + i] != 0;
    } else if (need) {
        memcpy(cort_tensor_data(t), b + doff, need);
    }
    *out = t;
    return NULL;
error:
    cort_value_release(t);
    return st;
}

cort_status *npy_load(const char *path, cort_value **out) {
    void *bytes = NULL;
    size_t len = 0;
    CORT_TRY(cli_read_file(path, &bytes, &len));
    cort_status *st = npy_parse(bytes, len, path, out);
    cort_free(bytes);
    return st;
}

/* ---- writing ---- */

static const char *npy_descr_of(cort_type t);

int npy_type_supported(cort_type type) {
    switch (type) {
    case CORT_TYPE_FLOAT: case CORT_TYPE_DOUBLE: case CORT_TYPE_FLOAT16:
    case CORT_TYPE_INT8: case CORT_TYPE_INT16: case CORT_TYPE_INT32: case CORT_TYPE_INT64:
    case CORT_TYPE_UINT8: case CORT_TYPE_UINT16: case CORT_TYPE_UINT32: case CORT_TYPE_UINT64:
    case CORT_TYPE_BOOL: case CORT_TYPE_COMPLEX64: case CORT_TYPE_COMPLEX128: case CORT_TYPE_STRING:
        return 1;
    default:
        return npy_descr_of(type) != NULL;
    }
}

static const char *npy_descr_of(cort_type t) {
    switch (t) {
    case CORT_TYPE_FLOAT: return "<f4";
    case CORT_TYPE_DOUBLE: return "<f8";
    case CORT_TYPE_FLOAT16: return "<f2";
    case CORT_TYPE_INT8: return "|i1";
    case CORT_TYPE_INT16: return "<i2";
    case CORT_TYPE_INT32: return "<i4";
    case CORT_TYPE_INT64: return "<i8";
    case CORT_TYPE_UINT8: return "|u1";
    case CORT_TYPE_UINT16: return "<u2";
    case CORT_TYPE_UINT32: return "<u4";
    case CORT_TYPE_UINT64: return "<u8";
    case CORT_TYPE_BOOL: return "|b1";
    case CORT_TYPE_COMPLEX64: return "<c8";
    case CORT_TYPE_COMPLEX128: return "<c16";
    /* numpy has no dtype for these: their one-byte in-memory form (bit patterns; sub-byte integers
     * one value per byte), read back by cli_retype_input when a model declares the type */
    case CORT_TYPE_FLOAT8E4M3FN: case CORT_TYPE_FLOAT8E4M3FNUZ: case CORT_TYPE_FLOAT8E5M2: case CORT_TYPE_FLOAT8E5M2FNUZ:
    case CORT_TYPE_FLOAT8E8M0: case CORT_TYPE_FLOAT4E2M1: case CORT_TYPE_UINT4: case CORT_TYPE_UINT2: return "|u1";
    case CORT_TYPE_INT4: case CORT_TYPE_INT2: return "|i1";
    default: return NULL;
    }
}

/* Code points in a UTF-8 string; SIZE_MAX if it is not valid UTF-8. */
static size_t utf8_length(const char *s) {
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp;
        size_t k = utf8_decode(p, &cp);
        if (!k) return SIZE_MAX;
        p += k;
        n++;
    }
    return n;
}

cort_status *npy_serialize(const cort_value *tensor, void **out, size_t *out_len) {
    if (cort_value_kind(tensor) != 1)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "only tensors can be written as .npy (use .pb for this value)");
    cort_type type = cort_tensor_type(tensor);
    if (!npy_type_supported(type))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "element type %s cannot be written as .npy (use .pb)",
                          cort_type_name(type));
    size_t rank = cort_tensor_rank(tensor), count = cort_tensor_element_count(tensor);
    const int64_t *shape = cort_tensor_shape(tensor);
    const void *data = cort_tensor_data(tensor);
    size_t itemsize = cort_type_size(type), ncp = 1;
    char descr[32];
    if (type == CORT_TYPE_STRING) {
        const char *const *s = data;
        for (size_t i = 0; i < count; i++) {
            size_t n = utf8_length(s[i] ? s[i] : "");
            if (n == SIZE_MAX)
                return cort_error(CORT_ERROR_INVALID_ARGUMENT, "string element %zu is not valid UTF-8", i);
            if (n > ncp) ncp = n;
        }
        if (ncp > SIZE_MAX / 4) return cort_error_oom();
        itemsize = ncp * 4;
        snprintf(descr, sizeof descr, "<U%zu", ncp);
    } else {
        snprintf(descr, sizeof descr, "%s", npy_descr_of(type));
    }
    /* dict text; the shape of a 1-D array needs a trailing comma: (n,) */
    char dict[128 + 32 * NPY_MAX_RANK];
    int dn = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (size_t i = 0; i < rank; i++)
        dn += snprintf(dict + dn, sizeof dict - (size_t)dn, "%s%lld", i ? ", " : "", (long long)shape[i]);
    dn += snprintf(dict + dn, sizeof dict - (size_t)dn, "%s), }", rank == 1 ? "," : "");
    /* total header (magic + version + length field + dict + padding + '\n') is a multiple of 64 */
    size_t pre = 10, hl = (size_t)dn + 1;
    size_t padded = (pre + hl + 63) / 64 * 64 - pre;
    int major = 1;
    if (padded > 65535) {
        major = 2;
        pre = 12;
        padded = (pre + hl + 63) / 64 * 64 - pre;
    }
    if (count && itemsize > (SIZE_MAX - pre - padded) / count) return cort_error_oom();
    size_t total = pre + padded + count * itemsize;
    unsigned char *buf = cort_malloc(total ? total : 1);
    if (!buf) return cort_error_oom();
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    if (major == 1) {
        buf[8] = (unsigned char)(padded & 0xff);
        buf[9] = (unsigned char)(padded >> 8);
    } else {
        for (int k = 0; k < 4; k++) buf[8 + k] = (unsigned char)(padded >> (8 * k));
    }
    memcpy(buf + pre, dict, (size_t)dn);
    memset(buf + pre + dn, ' ', padded - (size_t)dn - 1);
    buf[pre + padded - 1] = '\n';
    unsigned char *d = buf + pre + padded;
    if (type == CORT_TYPE_STRING) {
        const char *const *s = data;
        memset(d, 0, count * itemsize);
        for (size_t i = 0; i < count; i++) {
            const unsigned char *p = (const unsigned char *)(s[i] ? s[i] : "");
            unsigned char *e = d + i * itemsize;
            for (size_t k = 0; *p; k++) {
                uint32_t cp = 0;
                p += utf8_decode(p, &cp);   /* validated above */
                for (int j = 0; j < 4; j++) e[4 * k + (size_t)j] = (unsigned char)(cp >> (8 * j));
            }
        }
    } else if (count) {
        memcpy(d, data, count * itemsize);
    }
    *out = buf;
    *out_len = total;
    return NULL;
}

cort_status *npy_save(const char *path, const cort_value *tensor) {
    void *bytes = NULL;
    size_t len = 0;
    CORT_TRY(npy_serialize(tensor, &bytes, &len));
    cort_status *st = cli_write_file(path, bytes, len);
    cort_free(bytes);
    return st;
}
