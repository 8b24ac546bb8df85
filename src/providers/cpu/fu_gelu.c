/* cort.Gelu: the exact (erf) GELU, x * 0.5 * (1 + erf(x / sqrt(2))), in one pass. The erf comes
 * from the vectorized elementwise kernels (ew_simd), so results match the unfused Erf node. */
#include <math.h>
#include <string.h>
#include "fu_common.h"
#include "ew_simd.h"
#include "nn_common.h"

#define FU_GELU_CHUNK 512

/* restrict lets -O2 vectorize without alias checks */
static void gelu_finish(const float *restrict x, const float *restrict e, float *restrict y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = x[i] * 0.5f * (1.0f + e[i]);
}

static void scale_by(const float *restrict x, float *restrict t, size_t n, float s) {
    for (size_t i = 0; i < n; i++) t[i] = x[i] * s;
}

void fu_gelu_f32(const float *x, float *y, size_t n) {
    const ew_f32_un erf_fn = ew_f32_best()->un[EW_FU_ERF];
    float t[FU_GELU_CHUNK], e[FU_GELU_CHUNK];
    for (size_t i = 0; i < n; i += FU_GELU_CHUNK) {
        size_t m = n - i < FU_GELU_CHUNK ? n - i : FU_GELU_CHUNK;
        scale_by(x + i, t, m, (float)M_SQRT1_2);
        erf_fn(m, e, t, 0.0f, 0.0f);
        gelu_finish(x + i, e, y + i, m);   /* x is fully read into t before y (maybe == x) is written */
    }
}

void fu_gelu_f32_ref(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = (float)(x[i] * 0.5 * (1.0 + erf(x[i] / sqrt(2.0))));
}

typedef struct gelu_job { const float *x; float *y; } gelu_job;

static void gelu_task(void *arg, size_t begin, size_t end) {
    const gelu_job *j = arg;
    fu_gelu_f32(j->x + begin, j->y + begin, end - begin);
}

static cort_status *gelu_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *gelu_run(cort_kernel_ctx *ctx) {
    const cort_value *x = ctx->inputs[0];
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a float tensor, got %s",
                               x ? cort_type_name(x->type) : "nothing");
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    gelu_job j = { x->data, y->data };
    cort_parallel_for(ctx->pool, x->count, 16384, gelu_task, &j);
    return NULL;
}

const cort_op_def fu_op_gelu = { "Gelu", "cort", 1, 1 << 30, CORT_TBIT(CORT_TYPE_FLOAT), 0, NULL, NULL,
                                 gelu_infer, gelu_run };
