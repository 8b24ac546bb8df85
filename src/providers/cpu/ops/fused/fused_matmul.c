/* cort.FusedMatMul(A, B, bias?, residual?): Y = act(alpha * A @ B + bias + residual), MatMul
 * broadcasting for A and B. bias is [N] (broadcast over rows), residual has Y's shape. The GEMM
 * starts from the bias (its column bias), or, with a residual, accumulates onto both written into
 * Y first (beta = 1), so neither needs its own pass over a separate tensor. attribute activation: 0 none, 1 GELU (erf); node->act (Relu, Clip,
 * ... fused by the generic activation pass) runs after it. */
#include <stdio.h>
#include <string.h>
#include "fused.h"
#include "../nn/nn_common.h"
#include "../../kernels/gemm.h"
#include "../math/matmul.h"
#include "../../kernels/vec.h"

/* B packed at creation when it is a constant float matrix: the MatMul state (ops/math/matmul.h). */
static cort_status *fmm_init(const cort_node *node, void **state) { return nn_mm_init_packed_b(node, state, 0); }

static cort_status *fmm_infer(cort_infer_ctx *ctx) {
    nn_mm_infer(ctx, 0, 1, CORT_TYPE_FLOAT);
    return NULL;
}

typedef struct prefill_job {
    float *y;
    const float *bias, *res;
    size_t n;
} prefill_job;

/* Y = residual (+ bias) row by row: the gemm then accumulates onto it */
static void prefill_task(void *arg, size_t begin, size_t end) {
    const prefill_job *j = arg;
    for (size_t r = begin; r < end; r++) {
        float *y = j->y + r * j->n;
        const float *x = j->res + r * j->n;
        if (j->bias) fu_vec_best()->add(x, j->bias, y, j->n);
        else memcpy(y, x, j->n * sizeof *y);
    }
}

typedef struct gelu_rows_job { float *y; } gelu_rows_job;
static void gelu_task(void *arg, size_t begin, size_t end) {
    const gelu_rows_job *j = arg;
    fu_gelu_f32(j->y + begin, j->y + begin, end - begin);
}

static cort_status *fmm_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "A", 1, -1));
    CORT_TRY(nn_check_input(ctx, 1, "B", 1, -1));
    const cort_value *a = ctx->inputs[0], *b = ctx->inputs[1];
    const cort_value *bias = nn_opt_input(ctx, 2), *res = nn_opt_input(ctx, 3);
    if (a->type != CORT_TYPE_FLOAT || b->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'A' and 'B' have types %s and %s, "
                               "expected float", cort_type_name(a->type), cort_type_name(b->type));
    nn_mm_shape s;
    CORT_TRY(nn_mm_shape_make(ctx, 0, 1, &s));
    const size_t M = s.M, N = s.N, K = s.K, rows = s.batch * M;
    char sh[160];
    if (bias && (bias->kind != CORT_VKIND_TENSOR || bias->type != CORT_TYPE_FLOAT || bias->count != N))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 2 'bias' is %s%s, expected float with %zu elements", cort_type_name(bias->type),
                               nn_shape(bias, sh, sizeof sh), N);
    if (res) {
        int ok = res->kind == CORT_VKIND_TENSOR && res->type == CORT_TYPE_FLOAT && res->rank == s.yrank;
        for (size_t i = 0; ok && i < s.yrank; i++) ok = res->shape[i] == s.ydims[i];
        if (!ok) {
            char ps[160];
            size_t o = 0;
            for (size_t i = 0; i < s.yrank && o + 24 < sizeof ps; i++)
                o += (size_t)snprintf(ps + o, sizeof ps - o, "%s%lld", i ? "," : "", (long long)s.ydims[i]);
            ps[o] = 0;
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 3 'residual' is %s%s, expected float[%s] (the product's shape)",
                                   cort_type_name(res->type), nn_shape(res, sh, sizeof sh), ps);
        }
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, s.ydims, s.yrank, &y));
    if (!y->count) return NULL;
    float *yp = y->data;
    const float *ap = a->data, *bp = b->data;
    const float alpha = cort_attr_float(ctx->node, "alpha", 1.0f);
    const int gelu = cort_attr_int(ctx->node, "activation", FU_ACT_NONE) == FU_ACT_GELU;
    float beta = 0.0f;
    /* a residual is written into Y first (with the bias) and accumulated onto; a bias alone is
     * where the gemm starts its accumulators (no pass over Y) */
    if (res) {
        prefill_job pj = { yp, bias ? bias->data : NULL, res->data, N };
        cort_parallel_for(ctx->pool, rows, 16384 / (N ? N : 1) + 1, prefill_task, &pj);
        beta = 1.0f;
    }
    const nn_act act = nn_act_of(ctx->node), gelu_act = { CORT_ACT_GELU, 0.0f, 0.0f };
    /* GELU alone goes to the gemm, which applies it tile by tile while the tile is in L1 (BERT's
     * 128 x 3072 FFN: 0.45 ms of separate pass gone per layer); with another activation after it
     * both run over Y afterwards */
    const int gelu_after = gelu && act.kind != CORT_ACT_NONE;
    const nn_act *gact = gelu_after ? NULL : gelu ? &gelu_act : &act;
    cort_status *st = NULL;
    int fold = s.batch > 1 && b->rank <= 2;   /* B shared by every batch and A contiguous: one tall gemm */
    for (size_t i = 0; i < s.nb && fold; i++) if (s.astride[i] == 0) fold = 0;
    nn_gemm_opts o = { NULL, nn_mm_packed_b(ctx), NULL, gact, ctx, NULL, bias && !res ? (const float *)bias->data : NULL };
    if (s.batch == 1 || fold) {
        nn_gemm_b gb = nn_gemm_b_matrix(bp, N, 0);
        st = nn_sgemm_opt(ctx->pool, NULL, rows, N, K, alpha, ap, K, 0, &gb, beta, yp, N, &o);
    } else {
        for (size_t bt = 0; bt < s.batch && !st; bt++) {
            size_t am, bm;
            nn_mm_batch(&s, bt, &am, &bm);
            nn_gemm_b gb = nn_gemm_b_matrix(bp ? bp + bm * K * N : NULL, N, 0);   /* NULL: packed, in the file */
            o.bpack = bm == 0 ? nn_mm_packed_b(ctx) : NULL;
            st = nn_sgemm_opt(ctx->pool, NULL, M, N, K, alpha, ap + am * M * K, K, 0, &gb, beta, yp + bt * M * N, N,
                              &o);
        }
    }
    if (st) return st;
    if (gelu_after) {
        gelu_rows_job gj = { yp };
        cort_parallel_for(ctx->pool, y->count, 16384, gelu_task, &gj);
        nn_act_apply(&act, yp, y->count);
    }
    return NULL;
}

const cort_op_def fu_op_fused_matmul = { .name = "FusedMatMul", .domain = "cort", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = fmm_init, .free_state = nn_mm_free_packed_b,
    .infer = fmm_infer, .run = fmm_run, .flags = CORT_OP_FUSES_ACTIVATION };
