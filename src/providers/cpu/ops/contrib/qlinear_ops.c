/* The com.microsoft quantized ops of ONNX Runtime's QOperator format that are a float op between
 * a dequantization of each input and a quantization of the output, with per-tensor scales and
 * zero points: QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax,
 * QLinearGlobalAveragePool, QLinearAveragePool (both with channels_last), QLinearConcat. Each
 * input is dequantized exactly ((q - zero_point) * scale, in float), cort's float kernel of the
 * op runs on that, and the result is quantized with round-half-to-even and saturation to the
 * output zero point's type (QLinearAdd and QLinearMul compute in double directly). Also the ops ONNX Runtime registers under com.microsoft with ai.onnx
 * semantics: QuantizeLinear, DequantizeLinear (axis; as opset 13) and GridSample (as opset 16). */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "contrib.h"
#include "../quant/quant.h"
#include "../../kernels/isa_config.h"
#include "../../../../core/alloc.h"

extern const cort_op_def ew_op_sigmoid, ew_op_leaky_relu, rd_op_softmax,
    nn_op_global_average_pool, nn_op_average_pool, sh_op_concat, nn_op_quantize_linear, nn_op_dequantize_linear,
    rd_op_grid_sample;

/* ---- ai.onnx semantics under com.microsoft ---- */
static cort_status *opset13_fill(const cort_node *node, ctb_delegate *d) { (void)node; d->opset = 13; return NULL; }
static cort_status *opset16_fill(const cort_node *node, ctb_delegate *d) { (void)node; d->opset = 16; return NULL; }
static cort_status *q_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &nn_op_quantize_linear, opset13_fill, state);
}
static cort_status *dq_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &nn_op_dequantize_linear, opset13_fill, state);
}
static cort_status *gs_init(const cort_node *node, void **state) {
    return ctb_delegate_init(node, &rd_op_grid_sample, opset16_fill, state);
}

/* ---- dequantize, float op, quantize ---- */
typedef struct qdesc {
    const cort_op_def *inner;
    size_t n_q;                 /* quantized tensor inputs (QLinearConcat: from the node) */
    size_t q[2], s[2], z[2];    /* their input, scale and zero point indices */
    size_t ys, yz;              /* output scale and zero point */
    int channels_last_attr;     /* honours channels_last (pools) */
} qdesc;

static const qdesc D_SIGMOID = { &ew_op_sigmoid, 1, { 0 }, { 1 }, { 2 }, 3, 4, 0 };
static const qdesc D_LEAKY = { &ew_op_leaky_relu, 1, { 0 }, { 1 }, { 2 }, 3, 4, 0 };
static const qdesc D_SOFTMAX = { &rd_op_softmax, 1, { 0 }, { 1 }, { 2 }, 3, 4, 0 };
static const qdesc D_GAP = { &nn_op_global_average_pool, 1, { 0 }, { 1 }, { 2 }, 3, 4, 1 };
static const qdesc D_AP = { &nn_op_average_pool, 1, { 0 }, { 1 }, { 2 }, 3, 4, 1 };
static const qdesc D_CONCAT = { &sh_op_concat, 0, { 0 }, { 0 }, { 0 }, 0, 1, 0 };

static cort_status *softmax_fill(const cort_node *node, ctb_delegate *d) {
    int64_t v = cort_attr_int(node, "opset", 0);
    if (v < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'opset' = %lld, expected the opset of the "
                               "Softmax it replaces", (long long)v);
    d->opset = (int)(v > 13 ? 13 : v);
    return NULL;
}
static cort_status *plain_fill(const cort_node *node, ctb_delegate *d) { (void)node; d->opset = 14; return NULL; }
static cort_status *pool_fill(const cort_node *node, ctb_delegate *d) { (void)node; d->opset = 11; return NULL; }

#define QINIT(fn, desc, fill) \
    static cort_status *fn(const cort_node *node, void **state) { return ctb_delegate_init(node, (desc).inner, fill, state); }
QINIT(qsigmoid_init, D_SIGMOID, plain_fill)
QINIT(qleaky_init, D_LEAKY, plain_fill)
QINIT(qsoftmax_init, D_SOFTMAX, softmax_fill)
QINIT(qgap_init, D_GAP, pool_fill)
QINIT(qap_init, D_AP, pool_fill)
QINIT(qconcat_init, D_CONCAT, plain_fill)

static cort_status *scalar_param(const cort_kernel_ctx *ctx, size_t i, const char *what, int required, float *scale,
                                 const cort_value **zp) {
    const cort_value *v = nn_opt_input(ctx, i);
    if (!v) {
        if (required) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu (%s) is missing", i, what);
        return NULL;
    }
    if (v->kind != CORT_VKIND_TENSOR || v->count != 1) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu (%s) has shape %s, expected a "
                               "scalar (per-tensor quantization)", i, what, nn_shape(v, buf, sizeof buf));
    }
    if (scale) {
        if (v->type != CORT_TYPE_FLOAT)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu (%s) is %s, expected float", i, what,
                                   cort_type_name(v->type));
        *scale = *(const float *)v->data;
    } else {
        if (!nn_q_is_8bit(v->type))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu (%s) is %s, expected int8 or "
                                   "uint8", i, what, cort_type_name(v->type));
        *zp = v;
    }
    return NULL;
}

/* NHWC <-> NCHW of a float tensor (dims of the source), for channels_last pools */
static void to_channels_first(const float *src, float *dst, const int64_t *d, size_t rank, int back) {
    const size_t N = (size_t)d[0], C = back ? (size_t)d[1] : (size_t)d[rank - 1];
    size_t sp = 1;
    for (size_t i = back ? 2 : 1; i < (back ? rank : rank - 1); i++) sp *= (size_t)d[i];
    for (size_t n = 0; n < N; n++)
        for (size_t c = 0; c < C; c++)
            for (size_t p = 0; p < sp; p++) {
                if (back) dst[(n * sp + p) * C + c] = src[(n * C + c) * sp + p];
                else dst[(n * C + c) * sp + p] = src[(n * sp + p) * C + c];
            }
}

static cort_status *qrun(cort_kernel_ctx *ctx, const qdesc *D) {
    const ctb_delegate *d = ctx->state;
    size_t n_q = D->n_q, qi[16], si[16], zi[16], ys = D->ys, yz = D->yz;
    if (D->inner == &sh_op_concat) {   /* Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples */
        if (ctx->n_inputs < 5 || (ctx->n_inputs - 2) % 3)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "%zu inputs, expected Y_scale, Y_zero_point and triples (X, X_scale, X_zero_point)",
                                   ctx->n_inputs);
        n_q = (ctx->n_inputs - 2) / 3;
        if (n_q > 16) return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "more than 16 inputs to concatenate");
        for (size_t j = 0; j < n_q; j++) { qi[j] = 2 + 3 * j; si[j] = qi[j] + 1; zi[j] = qi[j] + 2; }
    } else {
        for (size_t j = 0; j < n_q; j++) { qi[j] = D->q[j]; si[j] = D->s[j]; zi[j] = D->z[j]; }
    }
    float ysc = 0.0f;
    const cort_value *yzp = NULL;
    CORT_TRY(scalar_param(ctx, ys, "the output's scale", 1, &ysc, NULL));
    CORT_TRY(scalar_param(ctx, yz, "the output's zero point", 0, NULL, &yzp));
    const int cl = D->channels_last_attr && cort_attr_int(ctx->node, "channels_last", 0) != 0;
    cort_value *fin[16] = { NULL }, *fout[1] = { NULL };
    cort_status *st = NULL;
    cort_type qt = CORT_TYPE_UINT8;
    for (size_t j = 0; j < n_q && !st; j++) {
        const cort_value *x = nn_opt_input(ctx, qi[j]), *zp = NULL;
        float sc = 0.0f;
        if (!x || x->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(x->type)) {
            st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is %s, expected an int8 or uint8 "
                                 "tensor", qi[j], x ? cort_type_name(x->type) : "missing");
            break;
        }
        if (j == 0) qt = x->type;
        if ((st = scalar_param(ctx, si[j], "a scale", 1, &sc, NULL))) break;
        if ((st = scalar_param(ctx, zi[j], "a zero point", 0, NULL, &zp))) break;
        int64_t dims[CORT_MAX_RANK];
        memcpy(dims, x->shape, x->rank * sizeof *dims);
        if (cl && x->rank >= 3) {   /* the float kernel gets NCHW */
            dims[1] = x->shape[x->rank - 1];
            for (size_t i = 2; i < x->rank; i++) dims[i] = x->shape[i - 1];
        }
        if ((st = cort_kernel_tensor(ctx, CORT_TYPE_FLOAT, dims, x->rank, &fin[j]))) break;
        const int32_t z = zp ? nn_q_load(zp, 0) : 0;
        float *f = fin[j]->data;
        float *tmp = cl && x->rank >= 3 ? cort_kernel_scratch(ctx, (x->count + 1) * sizeof(float)) : NULL;
        if (cl && x->rank >= 3 && !tmp) { st = cort_error_oom(); break; }
        float *dst = tmp ? tmp : f;
        for (size_t i = 0; i < x->count; i++) dst[i] = (float)(nn_q_load(x, i) - z) * sc;
        if (tmp) {
            to_channels_first(tmp, f, x->shape, x->rank, 0);
            cort_kernel_scratch_free(ctx, tmp);
        }
    }
    if (!st) st = ctb_run_inner(ctx, d, fin, n_q, fout, 1);
    if (!st && (!fout[0] || fout[0]->type != CORT_TYPE_FLOAT))
        st = cort_node_error(ctx->node, CORT_ERROR_RUNTIME, "internal: the float kernel gave no float output");
    if (!st) {
        const cort_value *f = fout[0];
        int64_t dims[CORT_MAX_RANK];
        memcpy(dims, f->shape, f->rank * sizeof *dims);
        const float *src = f->data;
        float *tmp = NULL;
        if (cl && f->rank >= 3) {
            dims[f->rank - 1] = f->shape[1];
            for (size_t i = 2; i < f->rank; i++) dims[i - 1] = f->shape[i];
            if (!(tmp = cort_kernel_scratch(ctx, (f->count + 1) * sizeof(float)))) st = cort_error_oom();
            else to_channels_first(f->data, tmp, f->shape, f->rank, 1);
            src = tmp;
        }
        cort_value *y = NULL;
        if (!st) st = cort_kernel_output(ctx, 0, yzp ? yzp->type : qt, dims, f->rank, &y);
        if (!st) {
            const int32_t z = yzp ? nn_q_load(yzp, 0) : 0;
            /* a division, not a multiply by 1/scale: ties round as the exact quotient does */
            for (size_t i = 0; i < f->count; i++) nn_q_store(y, i, nn_q_add_sat(nn_q_round(src[i] / ysc), z));
        }
        cort_kernel_scratch_free(ctx, tmp);
    }
    for (size_t j = 0; j < 16; j++) cort_value_release(fin[j]);
    cort_value_release(fout[0]);
    return st;
}

static cort_status *q_infer_type(cort_infer_ctx *ctx, size_t zp_input, size_t x_input) {
    cort_type t = zp_input < ctx->n_inputs && ctx->inputs[zp_input].present && ctx->inputs[zp_input].elem
                      ? ctx->inputs[zp_input].elem : ctx->inputs[x_input].elem;
    if (t) nn_infer_type(ctx, 0, t);
    return NULL;
}
static cort_status *qsame_infer(cort_infer_ctx *ctx) {
    /* elementwise and softmax: the output shape is the float op's */
    const cort_tinfo *x = &ctx->inputs[0];
    size_t zi = ctx->n_inputs >= 8 ? 7 : 4;
    q_infer_type(ctx, zi, 0);
    if (ctx->n_inputs < 8 && x->rank >= 0 && ctx->outputs[0].elem)
        cort_tinfo_tensor_shape(&ctx->outputs[0], ctx->outputs[0].elem, x->dims, x->rank);
    return NULL;
}
static cort_status *qpool_infer(cort_infer_ctx *ctx) { return q_infer_type(ctx, 4, 0); }
static cort_status *qconcat_infer(cort_infer_ctx *ctx) { return q_infer_type(ctx, 1, ctx->n_inputs > 2 ? 2 : 0); }

/* QLinearAdd / QLinearMul directly, in double: the float kernel's rounding of the dequantized
 * sum would move results that fall near a rounding tie by one step. Each input's 256 dequantized
 * values are tabulated once per run, so an element costs two lookups, the op and a division. */
typedef struct qbin_job {
    const uint8_t *lut;          /* [a byte][b byte] -> y byte, or NULL */
    void (*lut16)(const uint8_t *lut, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);   /* or NULL */
    const double *ta, *tb;
    const uint8_t *a, *b;        /* bytes of the 8-bit inputs */
    uint8_t *y;
    size_t astep, bstep;         /* 1, or 0 for a broadcast scalar */
    double ys;
    int32_t zy;
    int mul, y_signed;
    size_t n;
    /* the level's double kernel (or NULL) with its parameters, and with A and B exchanged for a
     * broadcast A (both ops commute exactly in double) */
    void (*k)(const nn_qbinary8_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
    nn_qbinary8_params kp, kp_swap;
} qbin_job;

/* The reference expression below (nearbyint, then nn_q_round of its float) without libm calls:
 * values past +-2^30 saturate either way, and below 2^51 adding and subtracting 1.5 * 2^52 rounds
 * half to even in the default rounding mode (no -ffast-math, so the pair is not folded away). */
static inline int32_t qbin_round(double v) {
    if (!(v == v)) return 0;
    if (v > 1073741824.0) v = 1073741824.0;
    if (v < -1073741824.0) v = -1073741824.0;
    const double magic = 6755399441055744.0;
    return (int32_t)((v + magic) - magic);
}

static void qbin_range(void *arg, size_t begin, size_t end) {
    const qbin_job *j = arg;
    const int lo = j->y_signed ? -128 : 0, hi = j->y_signed ? 127 : 255;
    if (j->k && j->astep + j->bstep >= 1) {
        if (j->astep) j->k(&j->kp, j->a + begin, j->b + begin * j->bstep, j->y + begin, end - begin);
        else j->k(&j->kp_swap, j->b + begin, j->a, j->y + begin, end - begin);
        return;
    }
    if (j->lut && j->lut16 && j->astep == 1 && j->bstep == 1) {
        j->lut16(j->lut, j->a + begin, j->b + begin, j->y + begin, end - begin);
        return;
    }
    if (j->lut && j->lut16 && j->astep + j->bstep == 1) {
        /* one side a broadcast scalar (GELU's 1 + erf): its byte repeated, then the same vector lookup */
        uint8_t rep[4096];
        memset(rep, j->astep ? j->b[0] : j->a[0], sizeof rep);
        for (size_t i = begin; i < end; i += sizeof rep) {
            const size_t m = end - i < sizeof rep ? end - i : sizeof rep;
            j->lut16(j->lut, j->astep ? j->a + i : rep, j->astep ? rep : j->b + i, j->y + i, m);
        }
        return;
    }
    if (j->lut) {
        for (size_t i = begin; i < end; i++) j->y[i] = j->lut[(size_t)j->a[i * j->astep] << 8 | j->b[i * j->bstep]];
        return;
    }
    for (size_t i = begin; i < end; i++) {
        const double va = j->ta[j->a[i * j->astep]], vb = j->tb[j->b[i * j->bstep]];
        int32_t r = qbin_round((j->mul ? va * vb : va + vb) / j->ys) + j->zy;
        r = r < lo ? lo : r > hi ? hi : r;
        j->y[i] = (uint8_t)r;   /* int8 stored as its two's-complement byte */
    }
}

/* Both inputs are bytes, so with constant scales and zero points (what quantizers and the QDQ
 * pass write) the whole op is a 64 KB table made once at creation from the same expression. */
typedef struct qbin_state {
    float as, bs, ys;
    int32_t za, zb, zy;
    cort_type t, yt;
    uint8_t lut[65536 + 4];   /* + the bytes a 4-byte gather at the last index reads (nn_lut16_u8) */
} qbin_state;

static void qbin_tables(int sgn, int32_t za, float as, int32_t zb, float bs, double *ta, double *tb) {
    for (int q = 0; q < 256; q++) {
        const int32_t v = sgn ? (int32_t)(int8_t)q : q;
        ta[q] = (double)(v - za) * as;
        tb[q] = (double)(v - zb) * bs;
    }
}

/* A constant scalar input's value: a float scale, or an 8-bit zero point (and its type). */
static int qbin_const(const cort_node *node, size_t i, int is_scale, float *f, int32_t *z, cort_type *t) {
    const cort_value *v = node->n_inputs > i && node->in_slot[i] >= 0 ? cort_node_const_input_lazy(node, i) : NULL;
    const void *d;
    if (!v || v->kind != CORT_VKIND_TENSOR || v->count != 1 || (is_scale ? v->type != CORT_TYPE_FLOAT : !nn_q_is_8bit(v->type)) ||
        cort_node_const_data(node, i, &d))
        return 0;
    if (is_scale) memcpy(f, d, sizeof *f);
    else {
        *z = v->type == CORT_TYPE_INT8 ? (int32_t)*(const int8_t *)d : (int32_t)*(const uint8_t *)d;
        *t = v->type;
    }
    return 1;
}

static cort_status *qbin_init(const cort_node *node, void **state, int mul) {
    *state = NULL;
    qbin_state p;
    cort_type tb = CORT_TYPE_UNDEFINED;
    if (!qbin_const(node, 1, 1, &p.as, NULL, NULL) || !qbin_const(node, 2, 0, NULL, &p.za, &p.t) ||
        !qbin_const(node, 4, 1, &p.bs, NULL, NULL) || !qbin_const(node, 5, 0, NULL, &p.zb, &tb) ||
        !qbin_const(node, 6, 1, &p.ys, NULL, NULL) || !qbin_const(node, 7, 0, NULL, &p.zy, &p.yt) || tb != p.t)
        return NULL;   /* parameters known only at run time: the per-run tables */
    qbin_state *s = cort_malloc(sizeof *s);
    if (!s) return cort_error_oom();
    memcpy(s, &p, offsetof(qbin_state, lut));
    memset(s->lut + 65536, 0, 4);
    double ta[256], tb2[256];
    qbin_tables(s->t == CORT_TYPE_INT8, s->za, s->as, s->zb, s->bs, ta, tb2);
    const int lo = s->yt == CORT_TYPE_INT8 ? -128 : 0, hi = s->yt == CORT_TYPE_INT8 ? 127 : 255;
    for (size_t qa = 0; qa < 256; qa++)
        for (size_t qb = 0; qb < 256; qb++) {
            int32_t r = qbin_round((mul ? ta[qa] * tb2[qb] : ta[qa] + tb2[qb]) / (double)s->ys) + s->zy;
            s->lut[qa << 8 | qb] = (uint8_t)(r < lo ? lo : r > hi ? hi : r);
        }
    *state = s;
    return NULL;
}
static cort_status *qadd_init(const cort_node *node, void **state) { return qbin_init(node, state, 0); }
static cort_status *qmul_init(const cort_node *node, void **state) { return qbin_init(node, state, 1); }
static void qbin_free(void *state) { cort_free(state); }

static void qbin_chunks(void *arg, size_t begin, size_t end) {
    const qbin_job *j = arg;
    const size_t n = j->n;
    for (size_t c = begin; c < end; c++) qbin_range(arg, c * 16384, (c + 1) * 16384 < n ? (c + 1) * 16384 : n);
}

/* One side full, the other repeating with period P (a bias row [C] against [.., C]): rows of P. */
typedef struct qbin_rows_job { qbin_job j; size_t period; int b_repeats; } qbin_rows_job;

static void qbin_rows(void *arg, size_t begin, size_t end) {
    const qbin_rows_job *r = arg;
    for (size_t row = begin; row < end; row++) {
        qbin_job j = r->j;
        const size_t off = row * r->period;
        j.y += off;
        if (r->b_repeats) j.a += off;
        else j.b += off;
        qbin_range(&j, 0, r->period);
    }
}

/* Whether v's shape, leading 1s dropped, is y's trailing dims (v repeats every v->count elements). */
static int q_suffix(const cort_value *v, const int64_t *yd, int yr) {
    size_t r = 0;
    while (r < v->rank && v->shape[r] == 1) r++;
    const size_t n = v->rank - r;
    if (n > (size_t)yr) return 0;
    for (size_t i = 0; i < n; i++)
        if (v->shape[r + i] != yd[(size_t)yr - n + i]) return 0;
    return 1;
}

/* y[i] = t[x[i]] over chunks of 16 KB. */
typedef struct qlut_job { nn_lut8_fn f; const uint8_t *t, *x; uint8_t *y; size_t n; } qlut_job;
static void qlut_chunks(void *arg, size_t begin, size_t end) {
    const qlut_job *j = arg;
    const size_t b = begin * 16384, e = end * 16384 < j->n ? end * 16384 : j->n;
    j->f(j->t, j->x + b, j->y + b, e - b);
}

static cort_status *qbinary_run(cort_kernel_ctx *ctx, int mul) {
    const cort_value *a = nn_opt_input(ctx, 0), *b = nn_opt_input(ctx, 3), *az = NULL, *bz = NULL, *yz = NULL;
    float as = 0.0f, bs = 0.0f, ys = 0.0f;
    if (!a || !b || a->kind != CORT_VKIND_TENSOR || b->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(a->type) ||
        b->type != a->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 0 'A' and 3 'B' must be int8 or uint8 "
                               "tensors of one type");
    CORT_TRY(scalar_param(ctx, 1, "A_scale", 1, &as, NULL));
    CORT_TRY(scalar_param(ctx, 2, "A_zero_point", 0, NULL, &az));
    CORT_TRY(scalar_param(ctx, 4, "B_scale", 1, &bs, NULL));
    CORT_TRY(scalar_param(ctx, 5, "B_zero_point", 0, NULL, &bz));
    CORT_TRY(scalar_param(ctx, 6, "C_scale", 1, &ys, NULL));
    CORT_TRY(scalar_param(ctx, 7, "C_zero_point", 0, NULL, &yz));
    int64_t yd[CORT_MAX_RANK], sa[CORT_MAX_RANK], sb[CORT_MAX_RANK];
    int yr;
    CORT_TRY(cort_broadcast_shapes(a->shape, (int)a->rank, b->shape, (int)b->rank, yd, &yr));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yz ? yz->type : a->type, yd, (size_t)yr, &y));
    if (y->count == 0) return NULL;
    const int32_t za = az ? nn_q_load(az, 0) : 0, zb = bz ? nn_q_load(bz, 0) : 0, zy = yz ? nn_q_load(yz, 0) : 0;
    double ta[256], tb[256];
    qbin_tables(a->type == CORT_TYPE_INT8, za, as, zb, bs, ta, tb);
    /* the creation-time table when this run's parameters are the ones it was made from */
    const qbin_state *st = ctx->state;
    const uint8_t *lut = st && st->as == as && st->bs == bs && st->ys == ys && az && bz && yz && st->za == za &&
                         st->zb == zb && st->zy == zy && st->t == a->type && st->yt == y->type ? st->lut : NULL;
    /* the double kernel computes the tables' expression directly; finite scales and a nonzero
     * ys keep every lane finite, which it needs */
    void (*k)(const nn_qbinary8_params *, const uint8_t *, const uint8_t *, uint8_t *, size_t) =
        nn_q_is_8bit(y->type) && isfinite(as) && isfinite(bs) && isfinite(ys) && ys != 0.0f ? nn_isa()->qbinary8 : NULL;
    const int in_sgn = a->type == CORT_TYPE_INT8, out_sgn = y->type == CORT_TYPE_INT8;
    const nn_qbinary8_params kp = { as, bs, (double)ys, za, zb, zy, mul, in_sgn, out_sgn, b->count == 1 && y->count > 1 };
    const nn_qbinary8_params kp_swap = { bs, as, (double)ys, zb, za, zy, mul, in_sgn, out_sgn, 1 };
    /* else an Add in fixed point (kp_swap has the same scales, so the same verdict) */
    int32_t fx_a, fx_b;
    int fx_k;
    if (!k && nn_q_is_8bit(y->type) && isfinite(as) && isfinite(bs) && isfinite(ys) && ys != 0.0f && nn_isa()->qadd8_fixed &&
        nn_qadd8_fixed_params(&kp, &fx_a, &fx_b, &fx_k))
        k = nn_isa()->qadd8_fixed;
    /* one side a single element (GELU's x * 0.5): a table of the 256 results of the expression above for the
     * other side's bytes, looked up by the level's byte-table kernel */
    const nn_lut8_fn lut8 = nn_isa_lut8();
    if (lut8 && nn_q_is_8bit(y->type) && (a->count == 1) != (b->count == 1) &&
        (a->count == y->count || b->count == y->count)) {
        const int a_one = a->count == 1;
        const uint8_t one = a_one ? ((const uint8_t *)a->data)[0] : ((const uint8_t *)b->data)[0];
        const int lo = out_sgn ? -128 : 0, hi = out_sgn ? 127 : 255;
        uint8_t t[256];
        for (int v = 0; v < 256; v++) {
            const double va = ta[a_one ? one : v], vb = tb[a_one ? v : one];
            int32_t r = qbin_round((mul ? va * vb : va + vb) / (double)ys) + zy;
            t[v] = (uint8_t)(r < lo ? lo : r > hi ? hi : r);
        }
        qlut_job lj = { lut8, t, a_one ? b->data : a->data, y->data, y->count };
        cort_parallel_for(y->count < 32768 ? NULL : ctx->pool, (y->count + 16383) / 16384, 1, qlut_chunks, &lj);
        return NULL;
    }
    /* same shapes, or one side a single element: flat, threaded */
    if (nn_q_is_8bit(y->type) && (a->count == y->count || a->count == 1) && (b->count == y->count || b->count == 1)) {
        qbin_job j = { lut, nn_isa()->lut16_u8, ta, tb, a->data, b->data, y->data, a->count == 1 ? 0 : 1, b->count == 1 ? 0 : 1, (double)ys,
                       zy, mul, y->type == CORT_TYPE_INT8, y->count, k, kp, kp_swap };
        cort_parallel_for(y->count < 32768 ? NULL : ctx->pool, (y->count + 16383) / 16384, 1, qbin_chunks, &j);
        return NULL;
    }
    if (nn_q_is_8bit(y->type) && ((a->count == y->count && q_suffix(b, yd, yr)) ||
                                  (b->count == y->count && q_suffix(a, yd, yr)))) {
        const int b_rep = a->count == y->count;
        const size_t period = b_rep ? b->count : a->count;
        qbin_rows_job r = { { lut, nn_isa()->lut16_u8, ta, tb, a->data, b->data, y->data, 1, 1, (double)ys, zy, mul,
                              y->type == CORT_TYPE_INT8, y->count, k, kp, kp_swap }, period, b_rep };
        const size_t rows = y->count / period;
        cort_parallel_for(y->count < 32768 ? NULL : ctx->pool, rows, (16384 + period - 1) / period, qbin_rows, &r);
        return NULL;
    }
    cort_broadcast_strides(yd, (size_t)yr, a->shape, a->rank, sa);
    cort_broadcast_strides(yd, (size_t)yr, b->shape, b->rank, sb);
    const uint8_t *ab = a->data, *bb = b->data;
    size_t idx[CORT_MAX_RANK] = { 0 }, oa = 0, ob = 0;
    for (size_t i = 0; i < y->count; i++) {
        if (lut) {
            ((uint8_t *)y->data)[i] = lut[(size_t)ab[oa] << 8 | bb[ob]];
        } else {
            const double va = ta[ab[oa]], vb = tb[bb[ob]];
            const double v = (mul ? va * vb : va + vb) / ys;
            nn_q_store(y, i, nn_q_add_sat(nn_q_round((float)nearbyint(v)), zy));
        }
        for (int d = yr - 1; d >= 0; d--) {   /* odometer over y, tracking both inputs' offsets */
            oa += (size_t)sa[d];
            ob += (size_t)sb[d];
            if (++idx[d] < (size_t)yd[d]) break;
            oa -= (size_t)sa[d] * idx[d];
            ob -= (size_t)sb[d] * idx[d];
            idx[d] = 0;
        }
    }
    return NULL;
}
static cort_status *qadd_run(cort_kernel_ctx *ctx) { return qbinary_run(ctx, 0); }
static cort_status *qmul_run(cort_kernel_ctx *ctx) { return qbinary_run(ctx, 1); }

#define QRUN(fn, desc) static cort_status *fn(cort_kernel_ctx *ctx) { return qrun(ctx, &(desc)); }
QRUN(qsigmoid_run, D_SIGMOID)
QRUN(qleaky_run, D_LEAKY)
QRUN(qsoftmax_run, D_SOFTMAX)

/* The sum of n bytes (int8 when sgn): eight per step as four 16-bit lanes of a word (a byte loop did
 * not vectorize and ran at a byte per cycle); int8 as uint8 with the top bit flipped, minus 128 n. */
static int64_t q_sum_bytes(const uint8_t *p, size_t n, int sgn) {
    const uint64_t lo8 = 0x00FF00FF00FF00FFull, flip = sgn ? 0x8080808080808080ull : 0;
    uint64_t total = 0;
    size_t i = 0;
    while (n - i >= 8) {
        uint64_t lanes = 0;   /* at most 128 steps of 2 x 255 per lane: below 2^16 */
        for (size_t k = 0; k < 128 && n - i >= 8; k++, i += 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            w ^= flip;
            lanes += (w & lo8) + (w >> 8 & lo8);
        }
        total += (lanes & 0xFFFF) + (lanes >> 16 & 0xFFFF) + (lanes >> 32 & 0xFFFF) + (lanes >> 48);
    }
    for (; i < n; i++) total += (uint64_t)(p[i] ^ (uint8_t)flip);
    return (int64_t)total - (sgn ? 128 * (int64_t)n : 0);
}

/* QLinearGlobalAveragePool without the float tensors: per (image, channel) the integer sum S of the
 * bytes, then (S - HW x_zp) x_scale / HW / y_scale in double, rounded half to even: the exact mean of
 * the dequantized values up to the double roundings (the float kernel's summation order moved ties),
 * at a cost of one pass over the bytes (resnet50's [1,2048,7,7]: 0.14 -> under 0.01 ms). */
static cort_status *qgap_run(cort_kernel_ctx *ctx) {
    const cort_value *x = nn_opt_input(ctx, 0), *xz = NULL, *yz = NULL;
    float xs = 0.0f, ys = 0.0f;
    if (!x || x->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(x->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected an int8 or uint8 "
                               "tensor", x ? cort_type_name(x->type) : "missing");
    if (x->rank < 3)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has rank %zu, expected at least 3 "
                               "(image, channel, spatial dims)", x->rank);
    CORT_TRY(scalar_param(ctx, 1, "x_scale", 1, &xs, NULL));
    CORT_TRY(scalar_param(ctx, 2, "x_zero_point", 0, NULL, &xz));
    CORT_TRY(scalar_param(ctx, 3, "y_scale", 1, &ys, NULL));
    CORT_TRY(scalar_param(ctx, 4, "y_zero_point", 0, NULL, &yz));
    const int cl = cort_attr_int(ctx->node, "channels_last", 0) != 0;
    const size_t r = x->rank, N = (size_t)x->shape[0], C = (size_t)x->shape[cl ? r - 1 : 1];
    int64_t dims[CORT_MAX_RANK];
    memcpy(dims, x->shape, r * sizeof *dims);
    for (size_t i = cl ? 1 : 2; i < (cl ? r - 1 : r); i++) dims[i] = 1;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yz ? yz->type : x->type, dims, r, &y));
    if (y->count == 0) return NULL;
    const size_t hw = x->count / (N * C);
    if (hw == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has no spatial elements: the "
                               "average of nothing is undefined");
    const int sgn = x->type == CORT_TYPE_INT8;
    const int64_t zx = xz ? nn_q_load(xz, 0) : 0, zy = yz ? nn_q_load(yz, 0) : 0;
    int64_t *sum = cort_kernel_scratch(ctx, C * sizeof *sum);
    if (!sum) return cort_error_oom();
    const uint8_t *u = x->data;
    const int8_t *i8 = x->data;
    for (size_t n = 0; n < N; n++) {
        if (cl) {   /* pixels outer, channels inner: contiguous in both */
            memset(sum, 0, C * sizeof *sum);
            const size_t base = n * hw * C;
            for (size_t p = 0; p < hw; p++)
                for (size_t c = 0; c < C; c++) sum[c] += sgn ? i8[base + p * C + c] : u[base + p * C + c];
        } else {
            for (size_t c = 0; c < C; c++) {
                const size_t base = (n * C + c) * hw;
                sum[c] = q_sum_bytes(u + base, hw, sgn);
            }
        }
        for (size_t c = 0; c < C; c++) {
            const double v = (double)(sum[c] - (int64_t)hw * zx) * (double)xs / (double)hw / (double)ys;
            const double q = nearbyint(v);
            const int64_t qi = q != q ? 0 : q > 1e12 ? (int64_t)1e12 : q < -1e12 ? -(int64_t)1e12 : (int64_t)q;
            const int64_t o = qi + zy;
            nn_q_store(y, n * C + c, o > INT32_MAX ? INT32_MAX : o < INT32_MIN ? INT32_MIN : (int32_t)o);
        }
    }
    cort_kernel_scratch_free(ctx, sum);
    return NULL;
}
QRUN(qap_run, D_AP)
typedef struct qcat_job {
    cort_kernel_ctx *ctx;
    const uint8_t *lut;   /* 256 entries per input */
    nn_lut8_fn lut8;      /* the level's table kernel, or NULL */
    uint64_t ident;       /* inputs whose table is the identity */
    size_t n, axis, inner;
    uint8_t *y;
    size_t row, o, j, off;   /* output bytes per outer index; the run qcat_chunks splits */
} qcat_job;

enum { QCAT_CHUNK = 16384 };

static void qcat_copy(const qcat_job *c, size_t j, const uint8_t *src, uint8_t *dst, size_t len) {
    if (c->ident >> j & 1) {
        memcpy(dst, src, len);
        return;
    }
    const uint8_t *t = c->lut + 256 * j;
    if (c->lut8) {
        c->lut8(t, src, dst, len);
        return;
    }
    for (size_t i = 0; i < len; i++) dst[i] = t[src[i]];
}

static void qcat_rows(void *arg, size_t begin, size_t end) {
    const qcat_job *c = arg;
    for (size_t o = begin; o < end; o++) {
        uint8_t *dst = c->y + o * c->row;
        for (size_t j = 0; j < c->n; j++) {
            const cort_value *x = c->ctx->inputs[2 + 3 * j];
            const size_t len = (size_t)x->shape[c->axis] * c->inner;
            qcat_copy(c, j, (const uint8_t *)x->data + o * len, dst, len);
            dst += len;
        }
    }
}

static void qcat_chunks(void *arg, size_t begin, size_t end) {
    const qcat_job *c = arg;
    const cort_value *x = c->ctx->inputs[2 + 3 * c->j];
    const size_t len = (size_t)x->shape[c->axis] * c->inner;
    const uint8_t *src = (const uint8_t *)x->data + c->o * len;
    uint8_t *dst = c->y + c->o * c->row + c->off;
    for (size_t k = begin; k < end; k++) {
        const size_t a = k * QCAT_CHUNK, b = a + QCAT_CHUNK < len ? a + QCAT_CHUNK : len;
        qcat_copy(c, c->j, src + a, dst + a, b - a);
    }
}

/* QLinearConcat: each output byte is a function of one input byte (dequantize, then quantize; the
 * float Concat between them only moves values), so each input goes through a 256-entry table of
 * exactly the expressions qrun evaluates, and no float tensor is made. */
static cort_status *qconcat_run(cort_kernel_ctx *ctx) {
    if (ctx->n_inputs < 5 || (ctx->n_inputs - 2) % 3) return qrun(ctx, &D_CONCAT);   /* its message */
    const size_t n = (ctx->n_inputs - 2) / 3;
    float ysc = 0.0f;
    const cort_value *yzp = NULL, *x0 = nn_opt_input(ctx, 2);
    CORT_TRY(scalar_param(ctx, 0, "the output's scale", 1, &ysc, NULL));
    CORT_TRY(scalar_param(ctx, 1, "the output's zero point", 0, NULL, &yzp));
    if (!x0 || x0->kind != CORT_VKIND_TENSOR || x0->rank == 0 || n > 64) return qrun(ctx, &D_CONCAT);
    const int64_t rank = (int64_t)x0->rank;
    int64_t axis = cort_attr_int(ctx->node, "axis", 0);
    if (axis < -rank || axis >= rank) return qrun(ctx, &D_CONCAT);
    if (axis < 0) axis += rank;
    int64_t dims[CORT_MAX_RANK];
    memcpy(dims, x0->shape, x0->rank * sizeof *dims);
    dims[axis] = 0;
    for (size_t j = 0; j < n; j++) {
        const cort_value *x = nn_opt_input(ctx, 2 + 3 * j);
        if (!x || x->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(x->type) || x->rank != x0->rank)
            return qrun(ctx, &D_CONCAT);
        for (int64_t d = 0; d < rank; d++)
            if (d != axis && x->shape[d] != x0->shape[d]) return qrun(ctx, &D_CONCAT);
        dims[axis] += x->shape[axis];
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, yzp ? yzp->type : x0->type, dims, x0->rank, &y));
    if (y->count == 0) return NULL;
    size_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; d++) outer *= (size_t)dims[d];
    for (int64_t d = axis + 1; d < rank; d++) inner *= (size_t)dims[d];
    const int32_t yz = yzp ? nn_q_load(yzp, 0) : 0;
    uint8_t *lut = cort_kernel_scratch(ctx, n * 256);
    if (!lut) return cort_error_oom();
    cort_value tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.kind = CORT_VKIND_TENSOR;
    tmp.type = y->type;
    for (size_t j = 0; j < n; j++) {
        const cort_value *x = ctx->inputs[2 + 3 * j], *zp = NULL;
        float sc = 0.0f;
        cort_status *st = scalar_param(ctx, 3 + 3 * j, "a scale", 1, &sc, NULL);
        if (!st) st = scalar_param(ctx, 4 + 3 * j, "a zero point", 0, NULL, &zp);
        if (st) { cort_kernel_scratch_free(ctx, lut); return st; }
        const int32_t z = zp ? nn_q_load(zp, 0) : 0;
        tmp.data = lut + 256 * j;
        for (int q = 0; q < 256; q++) {
            const int32_t v = x->type == CORT_TYPE_INT8 ? (int32_t)(int8_t)q : q;
            nn_q_store(&tmp, (size_t)q, nn_q_add_sat(nn_q_round((float)(v - z) * sc / ysc), yz));
        }
    }
    /* an input quantized like the output maps every byte to itself: its rows are copied */
    uint64_t ident = 0;
    for (size_t j = 0; j < n; j++) {
        size_t q = 0;
        while (q < 256 && lut[256 * j + q] == q) q++;
        if (q == 256) ident |= (uint64_t)1 << j;
    }
    qcat_job cj = { ctx, lut, nn_isa_lut8(), ident, n, (size_t)axis, inner, y->data, 0, 0, 0 };
    size_t row = 0;   /* output bytes per outer index */
    for (size_t j = 0; j < n; j++) row += (size_t)ctx->inputs[2 + 3 * j]->shape[axis] * inner;
    cj.row = row;
    if (outer >= 8 || row < 65536) {
        cort_parallel_for(y->count < 65536 ? NULL : ctx->pool, outer, (65536 + row - 1) / row, qcat_rows, &cj);
    } else {   /* few long rows (batch 1, channel axis): each input's run split into chunks */
        for (size_t o = 0; o < outer; o++) {
            size_t off = 0;
            for (size_t j = 0; j < n; j++) {
                const size_t len = (size_t)ctx->inputs[2 + 3 * j]->shape[axis] * inner;
                cj.o = o; cj.j = j; cj.off = off;
                cort_parallel_for(ctx->pool, (len + QCAT_CHUNK - 1) / QCAT_CHUNK, 1, qcat_chunks, &cj);
                off += len;
            }
        }
    }
    cort_kernel_scratch_free(ctx, lut);
    return NULL;
}

#define QOP(var, nm, init_fn, infer_fn, run_fn) \
    const cort_op_def var = { .name = nm, .domain = "com.microsoft", .min_opset = 1, .max_opset = CORT_OPSET_MAX, \
                              .types = 0, .init = init_fn, .free_state = ctb_delegate_free, .infer = infer_fn, \
                              .run = run_fn }
const cort_op_def ctb_op_qlinear_add = { .name = "QLinearAdd", .domain = "com.microsoft", .min_opset = 1,
                                         .max_opset = CORT_OPSET_MAX, .types = 0, .init = qadd_init,
                                         .free_state = qbin_free, .infer = qsame_infer, .run = qadd_run };
const cort_op_def ctb_op_qlinear_mul = { .name = "QLinearMul", .domain = "com.microsoft", .min_opset = 1,
                                         .max_opset = CORT_OPSET_MAX, .types = 0, .init = qmul_init,
                                         .free_state = qbin_free, .infer = qsame_infer, .run = qmul_run };
QOP(ctb_op_qlinear_sigmoid, "QLinearSigmoid", qsigmoid_init, qsame_infer, qsigmoid_run);
QOP(ctb_op_qlinear_leaky_relu, "QLinearLeakyRelu", qleaky_init, qsame_infer, qleaky_run);
QOP(ctb_op_qlinear_softmax, "QLinearSoftmax", qsoftmax_init, qsame_infer, qsoftmax_run);
QOP(ctb_op_qlinear_global_average_pool, "QLinearGlobalAveragePool", qgap_init, qpool_infer, qgap_run);
QOP(ctb_op_qlinear_average_pool, "QLinearAveragePool", qap_init, qpool_infer, qap_run);
QOP(ctb_op_qlinear_concat, "QLinearConcat", qconcat_init, qconcat_infer, qconcat_run);
QOP(ctb_op_quantize_linear, "QuantizeLinear", q_init, ctb_delegate_infer, ctb_delegate_run);
QOP(ctb_op_dequantize_linear, "DequantizeLinear", dq_init, ctb_delegate_infer, ctb_delegate_run);
QOP(ctb_op_grid_sample, "GridSample", gs_init, ctb_delegate_infer, ctb_delegate_run);
