/* A bounded, zero-copy protobuf wire-format reader and a small writer.
 *
 * Every offset is a size_t into one buffer (no 2 GB limit). Readers never read past `end`; every
 * length and count is checked before use. Errors carry a "path" naming the message chain, e.g.
 * "ModelProto.graph.node[3] (NodeProto) field 1 at byte 1234: length 99999 exceeds buffer".
 * Groups (wire types 3/4, deprecated) are rejected. Only little-endian hosts are supported:
 * fixed32/fixed64 payloads and raw_data are used with memcpy / in place. */
#ifndef CORT_ONNX_WIRE_H
#define CORT_ONNX_WIRE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "cort.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cort's ONNX loader assumes a little-endian host"
#endif

enum { CORT_PB_VARINT = 0, CORT_PB_I64 = 1, CORT_PB_LEN = 2, CORT_PB_SGROUP = 3, CORT_PB_EGROUP = 4, CORT_PB_I32 = 5 };

/* Message nesting limit (graph -> node -> attribute -> graph ... uses 3 levels per subgraph). */
#define CORT_PB_MAX_DEPTH 192

/* One link of the chain of messages being parsed, for error messages. */
typedef struct cort_pb_path {
    const struct cort_pb_path *parent;
    const char *field;      /* field name in the parent (NULL for the root) */
    const char *type;       /* message type name, e.g. "NodeProto" */
    long        index;      /* index in a repeated field, -1 if not repeated */
    int         depth;
} cort_pb_path;

typedef struct cort_pb {
    const uint8_t *buf;     /* the whole buffer: offsets in messages are relative to it */
    size_t pos, end;
} cort_pb;

typedef struct cort_pb_field {
    uint32_t num;
    uint32_t wire;
    size_t   off;           /* offset of the tag */
    uint64_t u;             /* VARINT, I32, I64 value */
    size_t   data, len;     /* LEN payload (offset into buf, length) */
} cort_pb_field;

static inline void cort_pb_init(cort_pb *r, const uint8_t *buf, size_t off, size_t len) {
    r->buf = buf; r->pos = off; r->end = off + len;
}
static inline void cort_pb_sub(cort_pb *r, const cort_pb *parent, const cort_pb_field *f) {
    r->buf = parent->buf; r->pos = f->data; r->end = f->data + f->len;
}

/* Decodes a varint at *pos (< end). Returns 0 on success, 1 if truncated, 2 if longer than 10 bytes. */
static inline int cort_pb_varint(const uint8_t *buf, size_t *pos, size_t end, uint64_t *out) {
    size_t p = *pos;
    if (p < end && buf[p] < 0x80) { *out = buf[p]; *pos = p + 1; return 0; }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end) return 1;
        uint8_t b = buf[p++];
        if (shift == 63 && b > 1) return 2;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = v; *pos = p; return 0; }
    }
    return 2;
}

/* A child path; returns NULL (and the caller reports) if nesting is too deep. */
static inline int cort_pb_path_child(cort_pb_path *child, const cort_pb_path *parent, const char *field,
                                     const char *type, long index) {
    child->parent = parent; child->field = field; child->type = type; child->index = index;
    child->depth = parent ? parent->depth + 1 : 0;
    return child->depth <= CORT_PB_MAX_DEPTH;
}

/* INVALID_MODEL error "<path> (<type>) field N at byte OFF: <message>". field 0 omits the field part. */
cort_status *cort_pb_error(const cort_pb_path *path, uint32_t field, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same with a chosen code (e.g. NOT_IMPLEMENTED, IO). */
cort_status *cort_pb_error_code(cort_code code, const cort_pb_path *path, uint32_t field, size_t off,
                                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Error for nesting deeper than CORT_PB_MAX_DEPTH. */
cort_status *cort_pb_depth_error(const cort_pb_path *path, size_t off);

/* Reads the next field. *got = 0 at the end of the message. LEN payloads are bounds-checked. */
cort_status *cort_pb_next(cort_pb *r, const cort_pb_path *path, cort_pb_field *f, int *got);
/* Error unless f has wire type `wire`. */
cort_status *cort_pb_expect(const cort_pb_path *path, const cort_pb_field *f, uint32_t wire);

/* Repeated scalar fields, packed (LEN) or not. elem_wire: VARINT, I32 or I64.
 * count: number of elements this occurrence contributes (validates the packed payload). */
cort_status *cort_pb_scalar_count(const cort_pb *r, const cort_pb_path *path, const cort_pb_field *f,
                                  uint32_t elem_wire, size_t *count);
/* Appends the elements of this occurrence to dst (capacity cap, *n updated). Values are the raw
 * 64-bit varints / 32-bit / 64-bit patterns. */
cort_status *cort_pb_scalar_u64(const cort_pb *r, const cort_pb_path *path, const cort_pb_field *f,
                                uint32_t elem_wire, uint64_t *dst, size_t *n, size_t cap);
/* Counts occurrences of field numbers 1..nmax-1 in the message (counts[num] += 1) and validates framing. */
cort_status *cort_pb_count_fields(const cort_pb *msg, const cort_pb_path *path, size_t *counts, uint32_t nmax);

/* ---- writer: a growable byte buffer (cort_realloc) ---- */
typedef struct cort_pb_writer {
    uint8_t *buf;
    size_t   len, cap;
    int      oom;           /* sticky: set on allocation failure, later writes are ignored */
} cort_pb_writer;

void   cort_pbw_bytes(cort_pb_writer *w, const void *p, size_t n);
void   cort_pbw_varint(cort_pb_writer *w, uint64_t v);
void   cort_pbw_tag(cort_pb_writer *w, uint32_t field, uint32_t wire);
void   cort_pbw_len_field(cort_pb_writer *w, uint32_t field, const void *p, size_t n);
size_t cort_pb_varint_size(uint64_t v);
#endif
