/* Data-dependent selections: NonZero, Compress, Trilu, ReverseSequence. */
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

/* ---------------- NonZero ---------------- */

/* Whether element i is non-zero (-0.0 counts as zero, NaN as non-zero, "" as zero). */
static int is_nonzero(const cort_value *t, size_t i) {
    switch (t->type) {
    case CORT_TYPE_FLOAT: case CORT_TYPE_DOUBLE: case CORT_TYPE_FLOAT16: case CORT_TYPE_BFLOAT16:
        return cort_load_f64(t->data, t->type, i) != 0.0;
    case CORT_TYPE_COMPLEX64: {
        const float *p = (const float *)t->data + 2 * i;
        return p[0] != 0.0f || p[1] != 0.0f;
    }
    case CORT_TYPE_COMPLEX128: {
        const double *p = (const double *)t->data + 2 * i;
        return p[0] != 0.0 || p[1] != 0.0;
    }
    case CORT_TYPE_STRING: return cort_string_get(t, i)[0] != 0;
    default: {
        size_t es = cort_type_size(t->type);
        const unsigned char *p = (const unsigned char *)t->data + i * es;
        for (size_t b = 0; b < es; b++) if (p[b]) return 1;
        return 0;
    }
    }
}

static cort_status *nonzero_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    int64_t dims[2] = { in && in->rank >= 0 ? in->rank : -1, -1 };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_INT64, dims, 2);
    return NULL;
}

static cort_status *nonzero_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    CORT_TRY(sh_input(ctx, 0, &in));
    const size_t r = in->rank;
    size_t nnz = 0;
    for (size_t i = 0; i < in->count; i++) nnz += (size_t)is_nonzero(in, i);
    int64_t dims[2] = { (int64_t)r, (int64_t)nnz };
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, dims, 2, &out));
    if (out->count == 0) return NULL;
    int64_t *o = out->data, idx[CORT_MAX_RANK] = { 0 };
    size_t j = 0;
    for (size_t i = 0; i < in->count; i++) {
        if (is_nonzero(in, i)) {
            for (size_t d = 0; d < r; d++) o[d * nnz + j] = idx[d];
            j++;
        }
        for (size_t d = r; d-- > 0;) {
            if (++idx[d] < in->shape[d]) break;
            idx[d] = 0;
        }
    }
    return NULL;
}

const cort_op_def sh_op_non_zero = { .name = "NonZero", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = nonzero_infer, .run = nonzero_run };

/* ---------------- Compress ---------------- */

static cort_status *compress_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    const cort_attr_ir *a = cort_attr_get(ctx->node, "axis");
    int64_t dims[CORT_MAX_RANK] = { -1 };
    if (!a) { cort_tinfo_tensor_shape(&ctx->outputs[0], t, dims, 1); return NULL; }
    if (!in || in->rank <= 0) { cort_tinfo_tensor(&ctx->outputs[0], t); return NULL; }
    int64_t axis = a->i < 0 ? a->i + in->rank : a->i;
    memcpy(dims, in->dims, (size_t)in->rank * sizeof *dims);
    if (axis >= 0 && axis < in->rank) dims[axis] = -1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, dims, in->rank);
    return NULL;
}

static cort_status *compress_run(cort_kernel_ctx *ctx) {
    cort_value *in, *cond, *out;
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(sh_input(ctx, 1, &cond));
    if (cond->rank != 1 || (cond->type != CORT_TYPE_BOOL && !cort_type_is_int(cond->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' must be a 1-D bool tensor, got %s of rank %zu",
                               sh_in_name(ctx->node, 1), cort_type_name(cond->type), cond->rank);
    const cort_attr_ir *a = cort_attr_get(ctx->node, "axis");
    const size_t es = sh_esize(in->type);
    int64_t outer = 1, inner = 1, D = (int64_t)in->count, dims[CORT_MAX_RANK];
    size_t rank = 1, axis = 0;
    if (a) {
        int64_t ax;
        if (in->rank == 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is a scalar", sh_in_name(ctx->node, 0));
        CORT_TRY(sh_axis(ctx->node, "attribute 'axis'", a->i, (int64_t)in->rank, &ax));
        axis = (size_t)ax;
        rank = in->rank;
        memcpy(dims, in->shape, rank * sizeof *dims);
        outer = sh_prod(in->shape, 0, axis);
        inner = sh_prod(in->shape, axis + 1, rank);
        D = in->shape[axis];
    }
    int64_t n = (int64_t)cond->count < D ? (int64_t)cond->count : D, kept = 0;
    for (int64_t i = 0; i < n; i++) kept += cort_load_i64(cond->data, cond->type, (size_t)i) != 0;
    dims[axis] = kept;
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, dims, rank, &out));
    if (out->count == 0) return NULL;
    const size_t row = (size_t)inner * es;
    char *dst = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++) {
            if (!cort_load_i64(cond->data, cond->type, (size_t)i)) continue;
            memcpy(dst, (const char *)in->data + (size_t)(o * D + i) * row, row);
            dst += row;
        }
    return sh_strings_own(out);
}

const cort_op_def sh_op_compress = { .name = "Compress", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = compress_infer, .run = compress_run };

/* ---------------- Trilu ---------------- */

static cort_status *trilu_run(cort_kernel_ctx *ctx) {
    cort_value *in, *kv, *out;
    char b1[256];
    int64_t k = 0;
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(sh_input_opt(ctx, 1, &kv));
    if (kv) CORT_TRY(sh_read_scalar_i64(ctx->node, 1, kv, &k));
    const size_t r = in->rank;
    if (r < 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' has shape %s, expected rank >= 2",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, r, b1, sizeof b1));
    const int upper = cort_attr_int(ctx->node, "upper", 1) != 0;
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, in->shape, r, &out));
    if (out->count == 0) return NULL;
    const int64_t N = in->shape[r - 2], M = in->shape[r - 1], batch = (int64_t)in->count / (N * M);
    const int64_t lim = N + M + 1;
    if (k > lim) k = lim;
    if (k < -lim) k = -lim;
    const size_t es = sh_esize(in->type);
    const char *src = in->data;
    char *dst = out->data;
    sh_zero(out);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < N; i++) {
            int64_t lo, hi, e = i + k;
            if (upper) { lo = e < 0 ? 0 : e > M ? M : e; hi = M; }
            else { lo = 0; hi = e + 1 < 0 ? 0 : e + 1 > M ? M : e + 1; }
            size_t row = (size_t)((b * N + i) * M);
            if (hi > lo) memcpy(dst + (row + (size_t)lo) * es, src + (row + (size_t)lo) * es, (size_t)(hi - lo) * es);
        }
    return sh_strings_own(out);
}

const cort_op_def sh_op_trilu = { .name = "Trilu", .domain = "", .min_opset = 14, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = cort_infer_same, .run = trilu_run };

/* ---------------- ReverseSequence ---------------- */

static cort_status *revseq_init(const cort_node *node, void **state) {
    *state = NULL;
    int64_t t = cort_attr_int(node, "time_axis", 0), b = cort_attr_int(node, "batch_axis", 1);
    if (!((t == 0 && b == 1) || (t == 1 && b == 0)))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "time_axis = %lld and batch_axis = %lld must be 0 and 1 in some order",
                               (long long)t, (long long)b);
    return NULL;
}

static cort_status *revseq_run(cort_kernel_ctx *ctx) {
    cort_value *in, *lens, *out;
    char b1[256];
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(sh_input(ctx, 1, &lens));
    const int time0 = cort_attr_int(ctx->node, "time_axis", 0) == 0;
    const size_t r = in->rank;
    if (r < 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' has shape %s, expected rank >= 2",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, r, b1, sizeof b1));
    const int64_t T = in->shape[time0 ? 0 : 1], B = in->shape[time0 ? 1 : 0];
    if (!cort_type_is_int(lens->type) || lens->rank != 1 || lens->shape[0] != B)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 '%s' must be an integer tensor of shape [%lld] (batch size of input 0 shape %s)",
                               sh_in_name(ctx->node, 1), (long long)B, sh_dims_str(in->shape, r, b1, sizeof b1));
    for (int64_t b = 0; b < B; b++) {
        int64_t len = cort_load_i64(lens->data, lens->type, (size_t)b);
        if (len < 0 || len > T)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 1 '%s' has sequence length %lld at batch %lld, out of range [0, %lld]",
                                   sh_in_name(ctx->node, 1), (long long)len, (long long)b, (long long)T);
    }
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, in->shape, r, &out));
    if (out->count == 0) return NULL;
    const size_t es = sh_esize(in->type), row = (size_t)sh_prod(in->shape, 2, r) * es;
    const char *src = in->data;
    char *dst = out->data;
    for (int64_t b = 0; b < B; b++) {
        int64_t len = cort_load_i64(lens->data, lens->type, (size_t)b);
        for (int64_t t = 0; t < T; t++) {
            int64_t st = t < len ? len - 1 - t : t;
            size_t o_dst = (size_t)(time0 ? t * B + b : b * T + t), o_src = (size_t)(time0 ? st * B + b : b * T + st);
            memcpy(dst + o_dst * row, src + o_src * row, row);
        }
    }
    return sh_strings_own(out);
}

static cort_status *revseq_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

const cort_op_def sh_op_reverse_sequence = { .name = "ReverseSequence", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = revseq_init, .infer = revseq_infer, .run = revseq_run };
