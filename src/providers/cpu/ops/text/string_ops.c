/* StringConcat and StringSplit (opset 20). StringSplit follows Python's str.split, which the
 * spec is written after: with a delimiter, consecutive delimiters delimit empty strings; without
 * one (or with ""), runs of whitespace separate and leading/trailing whitespace is dropped, where
 * whitespace is Python's str.isspace set (ASCII and the Unicode spaces, decoded from UTF-8;
 * invalid UTF-8 bytes are never whitespace). Rows shorter than the longest pad with "". */
#include <string.h>
#include "../misc_common.h"
#include "../reduce/reduce_ops.h"

/* ---- StringConcat ---- */

static cort_status *string_concat_run(cort_kernel_ctx *ctx) {
    const cort_value *a = mi_in(ctx, 0), *b = mi_in(ctx, 1);
    if (!a || a->kind != CORT_VKIND_TENSOR || a->type != CORT_TYPE_STRING)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a string tensor");
    if (!b || b->kind != CORT_VKIND_TENSOR || b->type != CORT_TYPE_STRING)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'Y' must be a string tensor");
    int64_t dims[CORT_MAX_RANK], sa[CORT_MAX_RANK], sb[CORT_MAX_RANK];
    int rank;
    CORT_TRY(cort_broadcast_shapes(a->shape, (int)a->rank, b->shape, (int)b->rank, dims, &rank));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_STRING, dims, (size_t)rank, &y));
    cort_broadcast_strides(dims, (size_t)rank, a->shape, a->rank, sa);
    cort_broadcast_strides(dims, (size_t)rank, b->shape, b->rank, sb);
    char *buf = NULL;
    size_t cap = 0;
    cort_status *st = NULL;
    for (size_t i = 0; i < y->count && !st; i++) {
        size_t ia = 0, ib = 0, r = i;
        for (int d = rank; d-- > 0;) {
            size_t c = r % (size_t)dims[d];
            r /= (size_t)dims[d];
            ia += c * (size_t)sa[d];
            ib += c * (size_t)sb[d];
        }
        const char *x1 = cort_string_get(a, ia), *x2 = cort_string_get(b, ib);
        size_t l1 = strlen(x1), l2 = strlen(x2);
        if (l1 + l2 + 1 > cap) {
            size_t ncap = (l1 + l2 + 1) * 2;
            char *nb = cort_realloc(buf, ncap);
            if (!nb) { st = cort_node_error(ctx->node, CORT_ERROR_OUT_OF_MEMORY, "no memory for a %zu-byte string", l1 + l2); break; }
            buf = nb;
            cap = ncap;
        }
        memcpy(buf, x1, l1);
        memcpy(buf + l1, x2, l2);
        st = cort_string_set(y, i, buf, l1 + l2);
    }
    cort_free(buf);
    return st;
}

static cort_status *string_concat_infer(cort_infer_ctx *ctx) {
    CORT_TRY(cort_infer_broadcast(ctx));
    ctx->outputs[0].elem = CORT_TYPE_STRING;
    return NULL;
}

const cort_op_def txt_op_string_concat = { .name = "StringConcat", .domain = "", .min_opset = 20, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_STRING), .infer = string_concat_infer, .run = string_concat_run };

/* ---- StringSplit ---- */

/* Length in bytes of the whitespace character at s (0 if s does not start with one). */
static size_t ws_len(const unsigned char *s) {
    unsigned c = s[0];
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) return 1;
    if (c == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (c == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3;                      /* U+1680 */
    if (c == 0xE2 && s[1] == 0x80 && ((s[2] >= 0x80 && s[2] <= 0x8A) || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF)) return 3;
    if (c == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) return 3;                      /* U+205F */
    if (c == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3;                      /* U+3000 */
    return 0;
}

/* Splits s; calls emit(piece) for each substring unless emit is NULL; returns the count. */
typedef struct ss_sink {
    cort_value *y;
    size_t base, k;
    cort_status *st;
} ss_sink;

static void ss_emit(ss_sink *sk, const char *p, size_t n) {
    if (!sk) return;
    if (!sk->st) sk->st = cort_string_set(sk->y, sk->base + sk->k, p, n);
    sk->k++;
}

static size_t ss_split(const char *s, const char *delim, int64_t maxsplit, ss_sink *sk) {
    size_t count = 0, n = strlen(s);
    if (delim && *delim) {
        size_t dl = strlen(delim), start = 0;
        int64_t splits = 0;
        for (size_t i = 0; i + dl <= n;) {
            if ((maxsplit < 0 || splits < maxsplit) && !memcmp(s + i, delim, dl)) {
                ss_emit(sk, s + start, i - start);
                count++;
                splits++;
                i += dl;
                start = i;
            } else {
                i++;
            }
        }
        ss_emit(sk, s + start, n - start);
        return count + 1;
    }
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, w;
    int64_t splits = 0;
    while (i < n) {
        while (i < n && (w = ws_len(u + i))) i += w;
        if (i >= n) break;
        if (maxsplit >= 0 && splits >= maxsplit) {
            /* the rest, trailing whitespace included, is the last piece (as str.split does) */
            ss_emit(sk, s + i, n - i);
            return count + 1;
        }
        size_t start = i;
        while (i < n && !ws_len(u + i)) i++;
        ss_emit(sk, s + start, i - start);
        count++;
        if (i < n) splits++;
    }
    return count;
}

static cort_status *string_split_run(cort_kernel_ctx *ctx) {
    const cort_value *x = mi_in(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_STRING)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a string tensor");
    if (x->rank + 1 > CORT_MAX_RANK)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' rank %zu leaves no room for the extra output dim", x->rank);
    const char *delim = cort_attr_str(ctx->node, "delimiter", "");
    int64_t maxsplit = cort_attr_get(ctx->node, "maxsplit") ? cort_attr_int(ctx->node, "maxsplit", -1) : -1;
    size_t maxn = 0;
    cort_value *z = NULL;
    if (mi_out_wanted(ctx, 1)) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_INT64, x->shape, x->rank, &z));
    for (size_t i = 0; i < x->count; i++) {
        size_t c = ss_split(cort_string_get(x, i), delim, maxsplit, NULL);
        if (z) ((int64_t *)z->data)[i] = (int64_t)c;
        if (c > maxn) maxn = c;
    }
    int64_t dims[CORT_MAX_RANK];
    memcpy(dims, x->shape, x->rank * sizeof dims[0]);
    dims[x->rank] = (int64_t)maxn;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_STRING, dims, x->rank + 1, &y));
    /* new string tensors hold "" everywhere, which is the padding */
    for (size_t i = 0; i < x->count; i++) {
        ss_sink sk = { y, i * maxn, 0, NULL };
        ss_split(cort_string_get(x, i), delim, maxsplit, &sk);
        if (sk.st) return sk.st;
    }
    return NULL;
}

static cort_status *string_split_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (x && x->rank >= 0 && x->rank < CORT_MAX_RANK) {
        int64_t dims[CORT_MAX_RANK];
        memcpy(dims, x->dims, (size_t)x->rank * sizeof dims[0]);
        dims[x->rank] = -1;
        cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_STRING, dims, x->rank + 1);
        if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_INT64, x->dims, x->rank);
    } else {
        cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_STRING);
        if (ctx->n_outputs > 1) cort_tinfo_tensor(&ctx->outputs[1], CORT_TYPE_INT64);
    }
    return NULL;
}

const cort_op_def txt_op_string_split = { .name = "StringSplit", .domain = "", .min_opset = 20, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_STRING), .infer = string_split_infer, .run = string_split_run };
