/* QuantizeLinear, DequantizeLinear (per-tensor, per-axis, blocked; 8/16/4/2-bit integers, float8,
 * float4e2m1), DynamicQuantizeLinear. */
#include <float.h>
#include <string.h>
#include "quant.h"
#include "../../kernels/isa_config.h"

/* Which scale/zero-point entry element i of x uses. x is seen as [pre, A, post] around the axis;
 * per-tensor: entry 0; per-axis (1-D scale of A): entry a; blocked (opset 21+, scale of x's rank with
 * ceil(A / block) along the axis): entry (p * nblk + a / block) * post + q. */
typedef struct q_axis { size_t pre, A, post, block, nblk; int mode; } q_axis;   /* mode 0 tensor, 1 axis, 2 blocked */

static size_t q_entry(const q_axis *qa, size_t i) {
    if (qa->mode == 0) return 0;
    size_t q = i % qa->post, a = (i / qa->post) % qa->A;
    if (qa->mode == 1) return a;
    size_t p = i / (qa->post * qa->A);
    return (p * qa->nblk + a / qa->block) * qa->post + q;
}

static cort_status *q_layout(cort_kernel_ctx *ctx, const cort_value *x, const cort_value *scale,
                             const cort_value *zp, q_axis *qa) {
    char bs[160], bx[160];
    memset(qa, 0, sizeof *qa);
    qa->pre = qa->A = qa->post = 1;
    if (zp && zp->count != scale->count)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 2 zero point has shape %s but the scale has shape %s",
                               nn_shape(zp, bx, sizeof bx), nn_shape(scale, bs, sizeof bs));
    int64_t block = ctx->opset >= 21 ? cort_attr_int(ctx->node, "block_size", 0) : 0;
    if (block < 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'block_size' = %lld is negative",
                               (long long)block);
    if (!block && (scale->rank == 0 || (scale->rank == 1 && scale->count == 1 && ctx->opset < 13))) {
        if (scale->count != 1) goto bad;
        return NULL;
    }
    if (ctx->opset < 13 || (!block && scale->rank != 1)) goto bad;
    int64_t axis = cort_attr_int(ctx->node, "axis", 1);
    if (axis < 0) axis += (int64_t)x->rank;
    if (axis < 0 || axis >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 'x' of shape %s", (long long)cort_attr_int(ctx->node, "axis", 1),
                               nn_shape(x, bx, sizeof bx));
    for (size_t i = 0; i < (size_t)axis; i++) qa->pre *= (size_t)x->shape[i];
    qa->A = (size_t)x->shape[axis];
    for (size_t i = (size_t)axis + 1; i < x->rank; i++) qa->post *= (size_t)x->shape[i];
    if (block) {
        if (scale->rank != x->rank) goto bad;
        qa->block = (size_t)block;
        qa->nblk = qa->A / qa->block + (qa->A % qa->block != 0);
        for (size_t i = 0; i < x->rank; i++)
            if (scale->shape[i] != (i == (size_t)axis ? (int64_t)qa->nblk : x->shape[i])) goto bad;
        if (zp && (zp->rank != scale->rank || memcmp(zp->shape, scale->shape, scale->rank * sizeof *scale->shape)))
            goto bad;
        qa->mode = 2;
        return NULL;
    }
    if ((int64_t)scale->count != x->shape[axis]) {
        if (scale->count == 1) return NULL;
        goto bad;
    }
    qa->mode = 1;
    return NULL;
bad:
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                           "input 1 scale has shape %s, expected a scalar, a 1-D tensor matching the axis of 'x' %s "
                           "or (block_size %lld) x's shape with ceil(dim / block_size) along the axis (zero point the same)",
                           nn_shape(scale, bs, sizeof bs), nn_shape(x, bx, sizeof bx),
                           (long long)(ctx->opset >= 21 ? cort_attr_int(ctx->node, "block_size", 0) : 0));
}

/* Types QuantizeLinear may produce / DequantizeLinear may read (by opset). */
static int q_type_ok(cort_type t, int opset, int dequant) {
    if (nn_q_is_8bit(t)) return 1;
    if (dequant && t == CORT_TYPE_INT32) return 1;
    if (opset >= 19 && cort_type_is_float8(t)) return 1;
    if (opset >= 21 && (t == CORT_TYPE_INT16 || t == CORT_TYPE_UINT16 || t == CORT_TYPE_INT4 || t == CORT_TYPE_UINT4))
        return 1;
    if (opset >= 23 && t == CORT_TYPE_FLOAT4E2M1) return 1;
    if (opset >= 25 && (t == CORT_TYPE_INT2 || t == CORT_TYPE_UINT2)) return 1;
    return 0;
}

static cort_type quantize_out_type(const cort_node *n, int opset, cort_type zp_type) {
    int64_t od = opset >= 21 ? cort_attr_int(n, "output_dtype", 0) : 0;
    if (od > 0 && od <= CORT_TYPE_INT2) return (cort_type)od;
    return zp_type ? zp_type : CORT_TYPE_UINT8;
}

static cort_status *quantize_infer(cort_infer_ctx *ctx) {
    cort_type zt = nn_infer_has(ctx, 2) ? ctx->inputs[2].elem : CORT_TYPE_UNDEFINED;
    cort_type t = quantize_out_type(ctx->node, ctx->opset, zt);
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, ctx->inputs[0].dims, ctx->inputs[0].rank);
    return NULL;
}

/* Rounds a quotient computed in float to the precision the op divides in (a float16 or bfloat16
 * scale divides in that type unless the 'precision' attribute says otherwise). */
static float q_in_precision(float v, cort_type prec) {
    if (prec == CORT_TYPE_FLOAT16) return cort_f16_to_f32(cort_f32_to_f16(v));
    if (prec == CORT_TYPE_BFLOAT16) return cort_bf16_to_f32(cort_f32_to_bf16(v));
    return v;
}

/* ---- per-tensor float -> 8-bit (QuantizeLinear's common case, DynamicQuantizeLinear) in chunks ---- */
#define Q8_CHUNK 16384
typedef struct q8_job {
    const float *x;
    size_t n;
    float scale;
    int32_t zp;
    int is_signed;
    uint8_t *y;
    void (*kernel)(const float *x, size_t n, float scale, int32_t zp, int is_signed, void *y);
} q8_job;

static void q8_range(void *arg, size_t begin, size_t end) {
    const q8_job *j = arg;
    const size_t i0 = begin * Q8_CHUNK, i1 = end * Q8_CHUNK < j->n ? end * Q8_CHUNK : j->n;
    if (j->kernel) {
        j->kernel(j->x + i0, i1 - i0, j->scale, j->zp, j->is_signed, j->y + i0);
        return;
    }
    /* the portable loop (nn_q_round_fast is nn_q_round without its libm call) */
    for (size_t i = i0; i < i1; i++) {
        const int32_t v = nn_q_add_sat(nn_q_round_fast(j->x[i] / j->scale), j->zp);
        j->y[i] = (uint8_t)(j->is_signed ? (v < -128 ? -128 : v > 127 ? 127 : v) : (v < 0 ? 0 : v > 255 ? 255 : v));
    }
}

typedef struct mm_job {
    const float *x;
    size_t n;
    float *lo, *hi;   /* per chunk */
    void (*kernel)(const float *x, size_t n, float *lo, float *hi);
} mm_job;

static void mm_range(void *arg, size_t begin, size_t end) {
    const mm_job *j = arg;
    for (size_t c = begin; c < end; c++) {
        const size_t i0 = c * Q8_CHUNK, i1 = i0 + Q8_CHUNK < j->n ? i0 + Q8_CHUNK : j->n;
        float lo = 0.0f, hi = 0.0f;   /* DynamicQuantizeLinear's range always includes 0 */
        if (j->kernel) j->kernel(j->x + i0, i1 - i0, &lo, &hi);
        else
            for (size_t i = i0; i < i1; i++) {
                lo = j->x[i] < lo ? j->x[i] : lo;
                hi = j->x[i] > hi ? j->x[i] : hi;
            }
        j->lo[c] = lo;
        j->hi[c] = hi;
    }
}

typedef struct dq8_job {
    const uint8_t *x;
    float *y;
    size_t n;
    int is_signed;
    int32_t zp;
    float scale;
    void (*kernel)(const void *x, size_t n, int is_signed, int32_t zp, float scale, float *y);
    float t[256];
} dq8_job;

static void dq8_range(void *arg, size_t begin, size_t end) {
    const dq8_job *j = arg;
    const size_t i0 = begin * Q8_CHUNK, i1 = end * Q8_CHUNK < j->n ? end * Q8_CHUNK : j->n;
    if (j->kernel) {
        j->kernel(j->x + i0, i1 - i0, j->is_signed, j->zp, j->scale, j->y + i0);
        return;
    }
    for (size_t i = i0; i < i1; i++) j->y[i] = j->t[j->x[i]];
}

static cort_status *quantize_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "x", 0, -1));
    CORT_TRY(nn_check_input(ctx, 1, "y_scale", 0, -1));
    const cort_value *x = ctx->inputs[0], *sc = ctx->inputs[1], *zp = nn_opt_input(ctx, 2);
    cort_type yt = quantize_out_type(ctx->node, ctx->opset, zp ? zp->type : CORT_TYPE_UNDEFINED);
    if (!q_type_ok(yt, ctx->opset, 0) || (zp && zp->type != yt))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "output type %s (zero point %s) is not a quantized type QuantizeLinear-%d supports",
                               cort_type_name(yt), zp ? cort_type_name(zp->type) : "absent", ctx->opset);
    q_axis qa;
    CORT_TRY(q_layout(ctx, x, sc, zp, &qa));
    int64_t prec_attr = ctx->opset >= 25 ? cort_attr_int(ctx->node, "precision", 0) : 0;
    cort_type prec = prec_attr > 0 ? (cort_type)prec_attr : sc->type;
    int sat = ctx->opset >= 19 ? (int)cort_attr_int(ctx->node, "saturate", 1) != 0 : 1;
    int32_t lo, hi;
    cort_small_int_range(yt, &lo, &hi);
    int small_float = cort_type_is_small_float(yt);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yt, x->shape, x->rank, &y));
    if (x->type == CORT_TYPE_FLOAT && sc->type == CORT_TYPE_FLOAT && prec == CORT_TYPE_FLOAT && sc->count == 1 &&
        (yt == CORT_TYPE_UINT8 || yt == CORT_TYPE_INT8)) {
        /* the common QDQ case without the per-element type dispatch and nearbyintf call (same values:
         * nn_q_round_fast is nn_q_round) */
        q8_job j = { x->data, x->count, ((const float *)sc->data)[0], zp ? nn_q_load(zp, 0) : 0,
                     yt == CORT_TYPE_INT8, y->data, nn_isa()->quantize8 };
        cort_parallel_for(x->count < 2 * Q8_CHUNK ? NULL : ctx->pool, (x->count + Q8_CHUNK - 1) / Q8_CHUNK, 1,
                          q8_range, &j);
        return NULL;
    }
    for (size_t i = 0; i < x->count; i++) {
        size_t c = q_entry(&qa, i);
        float v = x->type == CORT_TYPE_FLOAT ? ((const float *)x->data)[i] : (float)cort_load_f64(x->data, x->type, i);
        float qv = q_in_precision(v / nn_q_scale(sc, c), prec);
        if (small_float) {
            double z = zp ? cort_load_f64(zp->data, zp->type, c) : 0.0;
            ((uint8_t *)y->data)[i] = cort_f64_to_small((double)qv + z, yt, sat, CORT_ROUND_UP);
        } else if (yt == CORT_TYPE_UINT8 || yt == CORT_TYPE_INT8) {
            nn_q_store(y, i, nn_q_add_sat(nn_q_round(qv), zp ? nn_q_load(zp, c) : 0));
        } else {
            int64_t q = (int64_t)nn_q_round(qv) + (zp ? cort_load_i64(zp->data, zp->type, c) : 0);
            cort_store_i64(y->data, yt, i, q < lo ? lo : q > hi ? hi : q);
        }
    }
    return NULL;
}

static cort_type dequantize_out_type(const cort_node *n, int opset, cort_type scale_type) {
    int64_t od = opset >= 23 ? cort_attr_int(n, "output_dtype", 0) : 0;
    if (od > 0 && od <= CORT_TYPE_INT2) return (cort_type)od;
    return scale_type && cort_type_is_float(scale_type) ? scale_type : CORT_TYPE_FLOAT;
}

static cort_status *dequantize_infer(cort_infer_ctx *ctx) {
    cort_type st = nn_infer_has(ctx, 1) ? ctx->inputs[1].elem : CORT_TYPE_UNDEFINED;
    cort_type t = dequantize_out_type(ctx->node, ctx->opset, st);
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, ctx->inputs[0].dims, ctx->inputs[0].rank);
    return NULL;
}

static cort_status *dequantize_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "x", 0, -1));
    CORT_TRY(nn_check_input(ctx, 1, "x_scale", 0, -1));
    const cort_value *x = ctx->inputs[0], *sc = ctx->inputs[1], *zp = nn_opt_input(ctx, 2);
    if (!q_type_ok(x->type, ctx->opset, 1) || (zp && zp->type != x->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'x' has type %s (zero point %s), not a quantized type DequantizeLinear-%d supports",
                               cort_type_name(x->type), zp ? cort_type_name(zp->type) : "absent", ctx->opset);
    q_axis qa;
    CORT_TRY(q_layout(ctx, x, sc, zp, &qa));
    cort_type yt = dequantize_out_type(ctx->node, ctx->opset, sc->type);
    if (!cort_type_is_float(yt))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'output_dtype' = %d (%s) is not a float type",
                               (int)yt, cort_type_name(yt));
    int small_float = cort_type_is_small_float(x->type);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yt, x->shape, x->rank, &y));
    if (cort_type_size(x->type) == 1) {
        /* one-byte types: every byte's value from a table, the entry walked without divisions
         * (blocked weights of large models go through here, often at constant folding) */
        float lut[256];
        for (unsigned b = 0; b < 256; b++) {
            uint8_t byte = (uint8_t)b;
            lut[b] = (float)(small_float ? cort_load_f64(&byte, x->type, 0) : (double)cort_load_i64(&byte, x->type, 0));
        }
        const uint8_t *xd = x->data, *zd = zp ? zp->data : NULL;
        if (qa.mode == 0 && yt == CORT_TYPE_FLOAT) {
            /* per tensor to float (the DQ nodes of QDQ graphs): every output from a table of the 256
             * results of the expression below, in chunks on the pool */
            const int int8 = x->type == CORT_TYPE_INT8;
            dq8_job j = { xd, y->data, x->count, int8, zd ? (int8 ? (int32_t)(int8_t)zd[0] : (int32_t)zd[0]) : 0,
                          nn_q_scale(sc, 0), int8 || x->type == CORT_TYPE_UINT8 ? nn_isa()->dequantize8 : NULL, { 0 } };
            for (unsigned b = 0; b < 256; b++) j.t[b] = (lut[b] - (zd ? lut[zd[0]] : 0.0f)) * nn_q_scale(sc, 0);
            cort_parallel_for(x->count < 2 * Q8_CHUNK ? NULL : ctx->pool, (x->count + Q8_CHUNK - 1) / Q8_CHUNK, 1,
                              dq8_range, &j);
            return NULL;
        }
        if (qa.mode == 0) { qa.pre = qa.A = 1; qa.post = x->count; }   /* one entry for everything */
        size_t i = 0;
        for (size_t p = 0; p < qa.pre; p++)
            for (size_t a = 0; a < qa.A; a++) {
                size_t c0 = qa.mode == 0 ? 0 : qa.mode == 1 ? a : (p * qa.nblk + a / qa.block) * qa.post;
                for (size_t q = 0; q < qa.post; q++, i++) {
                    size_t c = qa.mode == 2 ? c0 + q : c0;
                    float v = (lut[xd[i]] - (zd ? lut[zd[c]] : 0.0f)) * nn_q_scale(sc, c);
                    if (yt == CORT_TYPE_FLOAT) ((float *)y->data)[i] = v;
                    else cort_store_f64(y->data, yt, i, v);
                }
            }
        return NULL;
    }
    for (size_t i = 0; i < x->count; i++) {
        size_t c = q_entry(&qa, i);
        float v = (float)(cort_load_i64(x->data, x->type, i) - (zp ? cort_load_i64(zp->data, zp->type, c) : 0)) *
                  nn_q_scale(sc, c);
        if (yt == CORT_TYPE_FLOAT) ((float *)y->data)[i] = v;
        else cort_store_f64(y->data, yt, i, v);
    }
    return NULL;
}

static cort_status *dynq_infer(cort_infer_ctx *ctx) {
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_UINT8, ctx->inputs[0].dims, ctx->inputs[0].rank);
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, NULL, 0);
    if (ctx->n_outputs > 2) cort_tinfo_tensor_shape(&ctx->outputs[2], CORT_TYPE_UINT8, NULL, 0);
    return NULL;
}

static cort_status *dynq_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "x", 0, -1));
    const cort_value *x = ctx->inputs[0];
    if (x->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'x' has type %s, expected float",
                               cort_type_name(x->type));
    /* the range (always including 0, NaN ignored) per chunk, then over the chunks */
    const size_t chunks = (x->count + Q8_CHUNK - 1) / Q8_CHUNK;
    float *part = cort_kernel_scratch(ctx, 2 * (chunks ? chunks : 1) * sizeof(float));
    if (!part) return cort_error_oom();
    mm_job mj = { x->data, x->count, part, part + chunks, nn_isa()->minmax };
    cort_parallel_for(chunks < 2 ? NULL : ctx->pool, chunks, 1, mm_range, &mj);
    float lo = 0.0f, hi = 0.0f;
    for (size_t c = 0; c < chunks; c++) {
        lo = mj.lo[c] < lo ? mj.lo[c] : lo;
        hi = mj.hi[c] > hi ? mj.hi[c] : hi;
    }
    cort_kernel_scratch_free(ctx, part);
    float scale = (hi - lo) / 255.0f;
    int32_t zp = scale > 0.0f ? nn_q_round(-lo / scale) : 0;
    zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
    cort_value *y, *ys, *yz;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_UINT8, x->shape, x->rank, &y));
    if (scale > 0.0f) {
        q8_job j = { x->data, x->count, scale, zp, 0, y->data, nn_isa()->quantize8 };
        cort_parallel_for(chunks < 2 ? NULL : ctx->pool, chunks, 1, q8_range, &j);
    } else if (x->count) {
        memset(y->data, zp, x->count);
    }
    if (ctx->n_outputs > 1) {
        CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, NULL, 0, &ys));
        *(float *)ys->data = scale;
    }
    if (ctx->n_outputs > 2) {
        CORT_TRY(cort_kernel_output(ctx, 2, CORT_TYPE_UINT8, NULL, 0, &yz));
        *(uint8_t *)yz->data = (uint8_t)zp;
    }
    return NULL;
}

const cort_op_def nn_op_quantize_linear = {
    .name = "QuantizeLinear", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .infer = quantize_infer, .run = quantize_run };
const cort_op_def nn_op_dequantize_linear = {
    .name = "DequantizeLinear", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .infer = dequantize_infer, .run = dequantize_run };
const cort_op_def nn_op_dynamic_quantize_linear = {
    .name = "DynamicQuantizeLinear", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX, .types = 0,
    .type_input = 0, .infer = dynq_infer, .run = dynq_run };
