/* Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
 * ([prod(dims[:axis]), prod(dims[axis:])]); from 13 the operation runs along the single `axis`.
 * Both views are [outer, n, inner]; inner == 1 (the transformer attention case) runs contiguous
 * rows in parallel, other layouts process `inner` columns in blocks. float16/bfloat16 compute in
 * float32, double in double. */
#include <math.h>
#include <string.h>
#include "softmax.h"
#include "../../kernels/elementwise.h"
#include "../../kernels/vec.h"
#include "../../kernels/isa_config.h"

typedef struct sm_job {
    rd_softmax_kind kind;
    size_t n, inner;
    const void *x;
    void *y;
} sm_job;

#define SM_DEFINE(T, EXP, LOG, SUF)                                                                   \
static void row_##SUF(rd_softmax_kind k, const T *x, T *y, size_t n) {                                \
    T m = x[0];                                                                                       \
    size_t am = 0;                                                                                    \
    for (size_t i = 1; i < n; i++) if (x[i] > m) { m = x[i]; am = i; }                               \
    if (k == RD_HARDMAX) {                                                                            \
        memset(y, 0, n * sizeof *y);                                                                  \
        y[am] = 1;                                                                                    \
        return;                                                                                       \
    }                                                                                                 \
    T s = 0;                                                                                          \
    if (k == RD_SOFTMAX) {                                                                            \
        for (size_t i = 0; i < n; i++) { T e = EXP(x[i] - m); y[i] = e; s += e; }                     \
        T inv = 1 / s;                                                                                \
        for (size_t i = 0; i < n; i++) y[i] *= inv;                                                   \
    } else {                                                                                          \
        for (size_t i = 0; i < n; i++) s += EXP(x[i] - m);                                            \
        T l = m + LOG(s);                                                                             \
        for (size_t i = 0; i < n; i++) y[i] = x[i] - l;                                               \
    }                                                                                                 \
}                                                                                                     \
/* n x inner block of one outer index, `cn` columns at a time */                                     \
static void cols_##SUF(rd_softmax_kind k, const T *x, T *y, size_t n, size_t inner) {                 \
    enum { CH = 128 };                                                                                \
    T m[CH], s[CH];                                                                                   \
    size_t am[CH];                                                                                    \
    for (size_t c0 = 0; c0 < inner; c0 += CH) {                                                       \
        size_t cn = inner - c0 < CH ? inner - c0 : CH;                                                \
        const T *xb = x + c0;                                                                         \
        T *yb = y + c0;                                                                               \
        for (size_t c = 0; c < cn; c++) { m[c] = xb[c]; am[c] = 0; s[c] = 0; }                        \
        for (size_t i = 1; i < n; i++)                                                                \
            for (size_t c = 0; c < cn; c++)                                                           \
                if (xb[i * inner + c] > m[c]) { m[c] = xb[i * inner + c]; am[c] = i; }                \
        if (k == RD_HARDMAX) {                                                                        \
            for (size_t i = 0; i < n; i++)                                                            \
                for (size_t c = 0; c < cn; c++) yb[i * inner + c] = am[c] == i ? 1 : 0;               \
            continue;                                                                                 \
        }                                                                                             \
        for (size_t i = 0; i < n; i++)                                                                \
            for (size_t c = 0; c < cn; c++) {                                                         \
                T e = EXP(xb[i * inner + c] - m[c]);                                                  \
                if (k == RD_SOFTMAX) yb[i * inner + c] = e;                                           \
                s[c] += e;                                                                            \
            }                                                                                         \
        if (k == RD_SOFTMAX) {                                                                        \
            for (size_t c = 0; c < cn; c++) s[c] = 1 / s[c];                                          \
            for (size_t i = 0; i < n; i++)                                                            \
                for (size_t c = 0; c < cn; c++) yb[i * inner + c] *= s[c];                            \
        } else {                                                                                      \
            for (size_t c = 0; c < cn; c++) s[c] = m[c] + LOG(s[c]);                                  \
            for (size_t i = 0; i < n; i++)                                                            \
                for (size_t c = 0; c < cn; c++) yb[i * inner + c] = xb[i * inner + c] - s[c];         \
        }                                                                                             \
    }                                                                                                 \
}                                                                                                     \
static void task_##SUF(void *arg, size_t begin, size_t end) {                                         \
    const sm_job *j = arg;                                                                            \
    const T *x = j->x;                                                                                \
    T *y = j->y;                                                                                      \
    size_t blk = j->n * j->inner;                                                                     \
    for (size_t o = begin; o < end; o++) {                                                            \
        if (j->inner == 1) row_##SUF(j->kind, x + o * blk, y + o * blk, j->n);                        \
        else cols_##SUF(j->kind, x + o * blk, y + o * blk, j->n, j->inner);                           \
    }                                                                                                 \
}

SM_DEFINE(float, expf, logf, f32)
SM_DEFINE(double, exp, log, f64)

/* Contiguous float rows (inner == 1, softmax / logsoftmax): max, subtract, sum and scale through the
 * run-time dispatched row primitives of kernels/vec.h and exp through the ew_simd kernel (AVX-512 /
 * AVX2 / portable). Subtract, exp and sum run chunk by chunk while the chunk is in L1, so a row
 * is read and written three times, not five. */
#define SM_CHUNK 1024
static void row_f32_fast(rd_softmax_kind k, const float *x, float *y, size_t n, const fu_vec_kernels *v,
                         ew_f32_un vexp) {
    const float m = v->max(x, n);
    /* softmax: subtract, exp and sum in one pass where the level has the kernel */
    float (*const exp_shift_sum)(const float *, float *, size_t, float) = nn_isa()->exp_shift_sum;
    if (k == RD_SOFTMAX && exp_shift_sum) {
        v->scale(y, n, 1.0f / exp_shift_sum(x, y, n, m));
        return;
    }
    float s = 0.0f, tmp[SM_CHUNK];
    for (size_t i = 0; i < n; i += SM_CHUNK) {
        const size_t c = n - i < SM_CHUNK ? n - i : SM_CHUNK;
        /* logsoftmax still needs x afterwards: its exps go to a stack chunk when x is y */
        float *e = k == RD_SOFTMAX || x != y ? y + i : tmp;
        v->addc(x + i, e, c, -m);
        vexp(c, e, e, 0.0f, 0.0f);
        s += v->sum(e, c);
    }
    if (k == RD_SOFTMAX) v->scale(y, n, 1.0f / s);
    else v->addc(x, y, n, -(m + logf(s)));
}

static void task_f32_rows(void *arg, size_t begin, size_t end) {
    const sm_job *j = arg;
    const fu_vec_kernels *v = fu_vec_best();
    const ew_f32_un vexp = ew_f32_best()->un[EW_FU_EXP];
    for (size_t o = begin; o < end; o++)
        row_f32_fast(j->kind, (const float *)j->x + o * j->n, (float *)j->y + o * j->n, j->n, v, vexp);
}

/* Reference: one outer index at a time, straightforward loops in double. */
static void ref_block(rd_softmax_kind k, const float *x, float *y, size_t n, size_t inner) {
    for (size_t c = 0; c < inner; c++) {
        double m = x[c];
        size_t am = 0;
        for (size_t i = 1; i < n; i++) if (x[i * inner + c] > m) { m = x[i * inner + c]; am = i; }
        double s = 0;
        for (size_t i = 0; i < n; i++) s += exp((double)x[i * inner + c] - m);
        for (size_t i = 0; i < n; i++) {
            double v = x[i * inner + c];
            y[i * inner + c] = (float)(k == RD_HARDMAX ? (i == am) : k == RD_SOFTMAX ? exp(v - m) / s : v - m - log(s));
        }
    }
}

void rd_softmax_f32(rd_softmax_kind kind, const float *x, float *y, size_t outer, size_t n, size_t inner,
                    cort_pool *pool, int fast) {
    if (!outer || !n || !inner) return;
    if (!fast) {
        for (size_t o = 0; o < outer; o++) ref_block(kind, x + o * n * inner, y + o * n * inner, n, inner);
        return;
    }
    sm_job j = { kind, n, inner, x, y };
    if (inner == 1 && kind != RD_HARDMAX) cort_parallel_for(pool, outer, 8192 / n + 1, task_f32_rows, &j);
    else cort_parallel_for(pool, outer, 8192 / (n * inner) + 1, task_f32, &j);
}

static void softmax_f64(rd_softmax_kind kind, const double *x, double *y, size_t outer, size_t n, size_t inner,
                        cort_pool *pool) {
    if (!outer || !n || !inner) return;
    sm_job j = { kind, n, inner, x, y };
    cort_parallel_for(pool, outer, 8192 / (n * inner) + 1, task_f64, &j);
}

/* ---------------- operator glue ---------------- */

static int64_t default_axis(int opset) { return opset >= 13 ? -1 : 1; }

static void split(const int64_t *dims, size_t rank, size_t axis, int opset, size_t *outer, size_t *n, size_t *inner) {
    *outer = rd_prod(dims, 0, axis);
    if (opset >= 13) { *n = (size_t)dims[axis]; *inner = rd_prod(dims, axis + 1, rank); }
    else { *n = rd_prod(dims, axis, rank); *inner = 1; }
}

static cort_status *softmax_run(cort_kernel_ctx *ctx, rd_softmax_kind kind) {
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || !cort_type_is_float(x->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' must be a float tensor, got %s",
                               x ? cort_type_name(x->type) : "nothing");
    int64_t a = cort_attr_int(ctx->node, "axis", default_axis(ctx->opset));
    size_t axis = 0;
    if (x->rank == 0) {
        if (ctx->opset >= 13 || (a != 0 && a != -1 && a != 1))   /* a scalar is one row of one element */
            CORT_TRY(rd_axis(ctx->node, a, x->rank, "attribute 'axis'", &axis));
    } else if (ctx->opset < 13 && a == (int64_t)x->rank) {
        axis = x->rank;   /* coerced to [N, 1] */
    } else {
        CORT_TRY(rd_axis(ctx->node, a, x->rank, "attribute 'axis'", &axis));
    }
    size_t outer, n, inner;
    if (x->rank == 0) { outer = 1; n = 1; inner = 1; }
    else split(x->shape, x->rank, axis, ctx->opset, &outer, &n, &inner);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    if (x->type == CORT_TYPE_FLOAT) {
        rd_softmax_f32(kind, x->data, y->data, outer, n, inner, ctx->pool, 1);
    } else if (x->type == CORT_TYPE_DOUBLE) {
        softmax_f64(kind, x->data, y->data, outer, n, inner, ctx->pool);
    } else {
        float *xf, *yf = cort_malloc((x->count ? x->count : 1) * sizeof *yf);
        if (!yf) return cort_error_oom();
        cort_status *st = rd_to_f32(x, &xf);
        if (st) { cort_free(yf); return st; }
        rd_softmax_f32(kind, xf, yf, outer, n, inner, ctx->pool, 1);
        for (size_t i = 0; i < x->count; i++) cort_store_f64(y->data, y->type, i, yf[i]);
        cort_free(xf);
        cort_free(yf);
    }
    return NULL;
}

static cort_status *softmax_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *run_softmax(cort_kernel_ctx *ctx) { return softmax_run(ctx, RD_SOFTMAX); }
static cort_status *run_logsoftmax(cort_kernel_ctx *ctx) { return softmax_run(ctx, RD_LOGSOFTMAX); }
static cort_status *run_hardmax(cort_kernel_ctx *ctx) { return softmax_run(ctx, RD_HARDMAX); }

const cort_op_def rd_op_softmax = { .name = "Softmax", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = softmax_infer, .run = run_softmax };
const cort_op_def rd_op_log_softmax = { .name = "LogSoftmax", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = softmax_infer, .run = run_logsoftmax };
const cort_op_def rd_op_hardmax = { .name = "Hardmax", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = softmax_infer, .run = run_hardmax };
