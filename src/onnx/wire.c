#include "wire.h"
#include <stdarg.h>
#include <stdio.h>
#include "../core/alloc.h"
#include "../core/status.h"

/* Formats the path root-first: "ModelProto.graph.node[3] (NodeProto)". */
static size_t path_format(const cort_pb_path *p, char *buf, size_t cap) {
    const cort_pb_path *chain[24];
    size_t n = 0, skipped = 0;
    for (const cort_pb_path *q = p; q; q = q->parent) {
        if (n < 24) chain[n++] = q;
        else skipped++;
    }
    /* keep the innermost links when the chain is long: chain[0] is the leaf */
    size_t o = 0;
    if (skipped && o < cap) o += (size_t)snprintf(buf + o, cap - o, "...");
    for (size_t i = n; i-- > 0 && o < cap;) {
        const cort_pb_path *q = chain[i];
        if (!q->field) o += (size_t)snprintf(buf + o, cap - o, "%s", q->type);
        else if (q->index >= 0) o += (size_t)snprintf(buf + o, cap - o, ".%s[%ld]", q->field, q->index);
        else o += (size_t)snprintf(buf + o, cap - o, ".%s", q->field);
    }
    if (p && p->field && o < cap) o += (size_t)snprintf(buf + o, cap - o, " (%s)", p->type);
    return o < cap ? o : cap;
}

static cort_status *pb_error_v(cort_code code, const cort_pb_path *path, uint32_t field, size_t off, const char *fmt,
                               va_list ap) {
    char where[512], what[512];
    size_t o = path_format(path, where, sizeof where);
    if (field && o < sizeof where) snprintf(where + o, sizeof where - o, " field %u at byte %zu", field, off);
    else if (o < sizeof where) snprintf(where + o, sizeof where - o, " at byte %zu", off);
    vsnprintf(what, sizeof what, fmt, ap);
    return cort_error(code, "%s: %s", where, what);
}

cort_status *cort_pb_error(const cort_pb_path *path, uint32_t field, size_t off, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cort_status *st = pb_error_v(CORT_ERROR_INVALID_MODEL, path, field, off, fmt, ap);
    va_end(ap);
    return st;
}

cort_status *cort_pb_error_code(cort_code code, const cort_pb_path *path, uint32_t field, size_t off,
                                const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cort_status *st = pb_error_v(code, path, field, off, fmt, ap);
    va_end(ap);
    return st;
}

cort_status *cort_pb_depth_error(const cort_pb_path *path, size_t off) {
    return cort_pb_error(path, 0, off, "messages nested deeper than %d levels", CORT_PB_MAX_DEPTH);
}

static const char *wire_name(uint32_t w) {
    static const char *const n[] = { "varint", "fixed64", "length-delimited", "start-group", "end-group", "fixed32" };
    return w < 6 ? n[w] : "invalid";
}

cort_status *cort_pb_next(cort_pb *r, const cort_pb_path *path, cort_pb_field *f, int *got) {
    if (r->pos >= r->end) { *got = 0; return NULL; }
    size_t off = r->pos;
    uint64_t tag;
    int e = cort_pb_varint(r->buf, &r->pos, r->end, &tag);
    if (e) return cort_pb_error(path, 0, off, e == 1 ? "truncated field tag" : "malformed field tag varint");
    uint64_t num = tag >> 3;
    uint32_t wire = (uint32_t)(tag & 7);
    if (num == 0 || num > 536870911u) return cort_pb_error(path, 0, off, "invalid field number %llu", (unsigned long long)num);
    f->num = (uint32_t)num;
    f->wire = wire;
    f->off = off;
    f->u = 0;
    f->data = f->len = 0;
    switch (wire) {
    case CORT_PB_VARINT:
        e = cort_pb_varint(r->buf, &r->pos, r->end, &f->u);
        if (e) return cort_pb_error(path, f->num, off, e == 1 ? "truncated varint" : "malformed varint (more than 10 bytes)");
        break;
    case CORT_PB_I64:
        if (r->end - r->pos < 8) return cort_pb_error(path, f->num, off, "truncated fixed64");
        memcpy(&f->u, r->buf + r->pos, 8);
        r->pos += 8;
        break;
    case CORT_PB_I32: {
        if (r->end - r->pos < 4) return cort_pb_error(path, f->num, off, "truncated fixed32");
        uint32_t v;
        memcpy(&v, r->buf + r->pos, 4);
        f->u = v;
        r->pos += 4;
        break;
    }
    case CORT_PB_LEN: {
        uint64_t len;
        e = cort_pb_varint(r->buf, &r->pos, r->end, &len);
        if (e) return cort_pb_error(path, f->num, off, e == 1 ? "truncated length" : "malformed length varint");
        if (len > r->end - r->pos)
            return cort_pb_error(path, f->num, off, "length %llu exceeds buffer (%zu bytes left)", (unsigned long long)len,
                                 r->end - r->pos);
        f->data = r->pos;
        f->len = (size_t)len;
        r->pos += (size_t)len;
        break;
    }
    case CORT_PB_SGROUP: case CORT_PB_EGROUP:
        return cort_pb_error(path, f->num, off, "deprecated group wire type %u is not supported", wire);
    default:
        return cort_pb_error(path, f->num, off, "invalid wire type %u", wire);
    }
    *got = 1;
    return NULL;
}

cort_status *cort_pb_expect(const cort_pb_path *path, const cort_pb_field *f, uint32_t wire) {
    if (f->wire == wire) return NULL;
    return cort_pb_error(path, f->num, f->off, "wire type %s, expected %s", wire_name(f->wire), wire_name(wire));
}

cort_status *cort_pb_scalar_count(const cort_pb *r, const cort_pb_path *path, const cort_pb_field *f,
                                  uint32_t elem_wire, size_t *count) {
    if (f->wire == elem_wire) { *count = 1; return NULL; }
    if (f->wire != CORT_PB_LEN)
        return cort_pb_error(path, f->num, f->off, "wire type %s, expected %s or packed", wire_name(f->wire),
                             wire_name(elem_wire));
    if (elem_wire == CORT_PB_I32 || elem_wire == CORT_PB_I64) {
        size_t w = elem_wire == CORT_PB_I32 ? 4 : 8;
        if (f->len % w)
            return cort_pb_error(path, f->num, f->off, "packed %s payload of %zu bytes is not a multiple of %zu",
                                 wire_name(elem_wire), f->len, w);
        *count = f->len / w;
        return NULL;
    }
    /* varints: one terminating byte (MSB clear) per element; the last byte must terminate */
    const uint8_t *p = r->buf + f->data;
    size_t n = 0, run = 0;
    for (size_t i = 0; i < f->len; i++) {
        if (p[i] & 0x80) {
            if (++run >= 10) return cort_pb_error(path, f->num, f->off, "malformed packed varint at byte %zu", f->data + i);
        } else {
            /* a 10-byte varint may only carry bit 63 in its last byte */
            if (run == 9 && p[i] > 1)
                return cort_pb_error(path, f->num, f->off, "packed varint at byte %zu exceeds 64 bits", f->data + i);
            n++;
            run = 0;
        }
    }
    if (run) return cort_pb_error(path, f->num, f->off, "truncated packed varint");
    *count = n;
    return NULL;
}

cort_status *cort_pb_scalar_u64(const cort_pb *r, const cort_pb_path *path, const cort_pb_field *f,
                                uint32_t elem_wire, uint64_t *dst, size_t *n, size_t cap) {
    if (f->wire == elem_wire) {
        if (*n >= cap) return cort_pb_error(path, f->num, f->off, "more elements than counted");
        dst[(*n)++] = f->u;
        return NULL;
    }
    if (f->wire != CORT_PB_LEN) return cort_pb_expect(path, f, elem_wire);
    size_t pos = f->data, end = f->data + f->len, k = *n;
    if (elem_wire == CORT_PB_VARINT) {
        while (pos < end) {
            if (k >= cap) return cort_pb_error(path, f->num, f->off, "more elements than counted");
            if (cort_pb_varint(r->buf, &pos, end, &dst[k]))
                return cort_pb_error(path, f->num, f->off, "malformed packed varint");
            k++;
        }
    } else {
        size_t w = elem_wire == CORT_PB_I32 ? 4 : 8, cnt = f->len / w;
        if (f->len % w || cnt > cap - k) return cort_pb_error(path, f->num, f->off, "bad packed payload length %zu", f->len);
        for (size_t i = 0; i < cnt; i++) {
            if (w == 4) { uint32_t v; memcpy(&v, r->buf + pos + 4 * i, 4); dst[k + i] = v; }
            else memcpy(&dst[k + i], r->buf + pos + 8 * i, 8);
        }
        k += cnt;
    }
    *n = k;
    return NULL;
}

cort_status *cort_pb_count_fields(const cort_pb *msg, const cort_pb_path *path, size_t *counts, uint32_t nmax) {
    cort_pb r = *msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) return NULL;
        if (f.num < nmax) counts[f.num]++;
    }
}

/* ---- writer ---- */
static int pbw_reserve(cort_pb_writer *w, size_t n) {
    if (w->oom) return 0;
    if (n <= w->cap - w->len) return 1;
    if (n > SIZE_MAX / 2 - w->len) { w->oom = 1; return 0; }
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->len < n) cap *= 2;
    uint8_t *b = cort_realloc(w->buf, cap);
    if (!b) { w->oom = 1; return 0; }
    w->buf = b;
    w->cap = cap;
    return 1;
}

void cort_pbw_bytes(cort_pb_writer *w, const void *p, size_t n) {
    if (!n || !pbw_reserve(w, n)) return;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void cort_pbw_varint(cort_pb_writer *w, uint64_t v) {
    if (!pbw_reserve(w, 10)) return;
    uint8_t *p = w->buf + w->len;
    size_t i = 0;
    while (v >= 0x80) { p[i++] = (uint8_t)(v | 0x80); v >>= 7; }
    p[i++] = (uint8_t)v;
    w->len += i;
}

void cort_pbw_tag(cort_pb_writer *w, uint32_t field, uint32_t wire) { cort_pbw_varint(w, ((uint64_t)field << 3) | wire); }

void cort_pbw_len_field(cort_pb_writer *w, uint32_t field, const void *p, size_t n) {
    cort_pbw_tag(w, field, CORT_PB_LEN);
    cort_pbw_varint(w, n);
    cort_pbw_bytes(w, p, n);
}

size_t cort_pb_varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}
