/* cort.Gelu(X, bias?): the exact (erf) GELU of X (+ bias over the last axis), x * 0.5 * (1 + erf(x / sqrt(2))), in one pass. Evaluated as
 * x * erfc(-x / sqrt(2)) / 2 so that it stays accurate for x < 0, where 1 + erf cancels (the
 * unfused graph loses all precision there). */
#include <math.h>
#include <string.h>
#include "fused.h"
#include "../../kernels/elementwise.h"
#include "../nn/nn_common.h"
#include "../../kernels/vec.h"
#include "../../kernels/isa_config.h"

#define FU_GELU_CHUNK 512

void fu_gelu_f32(const float *x, float *y, size_t n) {
    /* one pass, no division, where the level has the kernel */
    void (*const gelu)(const float *, float *, size_t) = nn_isa()->gelu;
    if (gelu) {
        gelu(x, y, n);
        return;
    }
    fu_gelu_f32_chunks(x, y, n);
}

void fu_gelu_f32_chunks(const float *x, float *y, size_t n) {
    const ew_f32_un vexp = ew_f32_best()->un[EW_FU_EXP];
    const fu_vec_kernels *k = fu_vec_best();
    float t[FU_GELU_CHUNK], e[FU_GELU_CHUNK];
    for (size_t i = 0; i < n; i += FU_GELU_CHUNK) {
        size_t m = n - i < FU_GELU_CHUNK ? n - i : FU_GELU_CHUNK;
        k->gelu_arg(x + i, t, e, m);
        vexp(m, e, e, 0.0f, 0.0f);
        k->gelu_finish(x + i, t, e, y + i, m);   /* elementwise: y may equal x */
    }
}

void fu_gelu_f32_ref(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = (float)(x[i] * 0.5 * (1.0 + erf(x[i] / sqrt(2.0))));
}

typedef struct gelu_job { const float *x, *bias; float *y; size_t c; } gelu_job;

static void gelu_task(void *arg, size_t begin, size_t end) {
    const gelu_job *j = arg;
    fu_gelu_f32(j->x + begin, j->y + begin, end - begin);
}

/* rows of c: y = gelu(x + bias) */
static void gelu_bias_task(void *arg, size_t begin, size_t end) {
    const gelu_job *j = arg;
    const fu_vec_kernels *k = fu_vec_best();
    for (size_t r = begin; r < end; r++) {
        float *y = j->y + r * j->c;
        k->add(j->x + r * j->c, j->bias, y, j->c);
        fu_gelu_f32(y, y, j->c);
    }
}

static cort_status *gelu_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *gelu_run(cort_kernel_ctx *ctx) {
    const cort_value *x = nn_opt_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a float tensor, got %s",
                               x ? cort_type_name(x->type) : "nothing");
    const cort_value *b = nn_opt_input(ctx, 1);
    size_t c = x->rank ? (size_t)x->shape[x->rank - 1] : 1;
    if (b && (b->kind != CORT_VKIND_TENSOR || b->type != CORT_TYPE_FLOAT || x->rank < 1 || b->count != c))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'bias' is %s with %zu elements, expected float with %zu (input 0's last "
                               "dimension)", cort_type_name(b->type), b->count, c);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, x->shape, x->rank, &y));
    gelu_job j = { x->data, b ? b->data : NULL, y->data, c };
    if (b && c) cort_parallel_for(ctx->pool, x->count / c, 16384 / c + 1, gelu_bias_task, &j);
    else if (!b) cort_parallel_for(ctx->pool, x->count, 16384, gelu_task, &j);
    return NULL;
}

const cort_op_def fu_op_gelu = { .name = "Gelu", .domain = "cort", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .infer = gelu_infer, .run = gelu_run };
