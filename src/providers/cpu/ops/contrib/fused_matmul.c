/* com.microsoft.FusedMatMul(A, B): Y = alpha * op(A) @ op(B) with MatMul's broadcasting, where
 * ONNX Runtime has folded Transposes and a scale into the product. transA / transB swap the last
 * two axes of an operand; transBatchA / transBatchB (rank >= 3) first move its axis 0 to just
 * before the last axis ([d0, d1, .., dn-2, dn-1] -> [d1, .., dn-2, d0, dn-1]). The last-two-axes
 * transposes go to the gemm as strides; a batch transpose is a copy into scratch. A constant
 * 2-D B is packed at creation. */
#include <string.h>
#include "contrib.h"
#include "../math/matmul.h"
#include "../../kernels/gemm.h"

typedef struct fmm_attrs { int ta, tb, tba, tbb; float alpha; } fmm_attrs;

static fmm_attrs attrs_of(const cort_node *node) {
    fmm_attrs a = { cort_attr_int(node, "transA", 0) != 0, cort_attr_int(node, "transB", 0) != 0,
                    cort_attr_int(node, "transBatchA", 0) != 0, cort_attr_int(node, "transBatchB", 0) != 0,
                    cort_attr_float(node, "alpha", 1.0f) };
    return a;
}

static cort_status *fmm_init(const cort_node *node, void **state) {
    fmm_attrs a = attrs_of(node);
    if (a.tbb) { *state = NULL; return NULL; }
    return nn_mm_init_packed_b(node, state, a.tb);
}

/* The operand's matrix shape after its transposes: batch dims, rows, cols (as op(X) is read).
 * vec: rank 1 (a row for A, a column for B). */
typedef struct operand {
    int rank;               /* of the batch part */
    int64_t batch[CORT_MAX_RANK];
    int64_t rows, cols;     /* of op(X) */
    int vec;
} operand;

static int operand_of(const int64_t *d, int rank, int trans, int tbatch, int is_b, operand *o) {
    memset(o, 0, sizeof *o);
    if (rank < 1) return 0;
    if (rank == 1) {
        o->vec = 1;
        if (is_b) { o->rows = d[0]; o->cols = 1; } else { o->rows = 1; o->cols = d[0]; }
        return 1;
    }
    int64_t e[CORT_MAX_RANK];
    for (int i = 0; i < rank; i++) e[i] = d[i];
    if (tbatch) {
        if (rank < 3) return 0;
        for (int i = 0; i < rank - 2; i++) e[i] = d[i + 1];
        e[rank - 2] = d[0];
    }
    o->rank = rank - 2;
    for (int i = 0; i < rank - 2; i++) o->batch[i] = e[i];
    o->rows = trans ? e[rank - 1] : e[rank - 2];
    o->cols = trans ? e[rank - 2] : e[rank - 1];
    return 1;
}

/* Output dims from the two operands; 0 when they do not fit. */
static int out_dims(const operand *a, const operand *b, int64_t *y, int *yrank, int64_t *bdims, int *brank) {
    if (a->cols >= 0 && b->rows >= 0 && a->cols != b->rows) return 0;
    int nb = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - a->rank), ib = i - (nb - b->rank);
        int64_t da = ia >= 0 ? a->batch[ia] : 1, db = ib >= 0 ? b->batch[ib] : 1;
        if (da != db && da != 1 && db != 1 && da >= 0 && db >= 0) return 0;
        bdims[i] = da == 1 ? db : db == 1 ? da : (da < 0 ? db : da);
    }
    *brank = nb;
    int r = 0;
    for (int i = 0; i < nb; i++) y[r++] = bdims[i];
    if (!a->vec) y[r++] = a->rows;
    if (!b->vec) y[r++] = b->cols;
    *yrank = r;
    return 1;
}

static cort_status *fmm_infer(cort_infer_ctx *ctx) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    const cort_tinfo *ta = &ctx->inputs[0], *tb = &ctx->inputs[1];
    if (ctx->n_inputs < 2 || ta->rank < 1 || tb->rank < 1) return NULL;
    fmm_attrs at = attrs_of(ctx->node);
    operand a, b;
    int64_t y[CORT_MAX_RANK + 2], bd[CORT_MAX_RANK];
    int yr, br;
    if (!operand_of(ta->dims, ta->rank, at.ta, at.tba, 0, &a) || !operand_of(tb->dims, tb->rank, at.tb, at.tbb, 1, &b))
        return NULL;
    if (!out_dims(&a, &b, y, &yr, bd, &br) || yr > CORT_MAX_RANK) return NULL;
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, y, yr);
    return NULL;
}

/* dst = src with axis 0 moved before the last axis (src: [d0, inner..., dl]) */
static void batch_transpose(const float *src, float *dst, const int64_t *d, int rank) {
    size_t d0 = (size_t)d[0], dl = (size_t)d[rank - 1], mid = 1;
    for (int i = 1; i < rank - 1; i++) mid *= (size_t)d[i];
    for (size_t i0 = 0; i0 < d0; i0++)
        for (size_t m = 0; m < mid; m++)
            memcpy(dst + (m * d0 + i0) * dl, src + (i0 * mid + m) * dl, dl * sizeof *dst);
}

static cort_status *fmm_run(cort_kernel_ctx *ctx) {
    const cort_value *av, *bv;
    CORT_TRY(ctb_float_input(ctx, 0, "A", 1, &av));
    CORT_TRY(ctb_float_input(ctx, 1, "B", 1, &bv));
    fmm_attrs at = attrs_of(ctx->node);
    operand a, b;
    int64_t y[CORT_MAX_RANK + 2], bd[CORT_MAX_RANK];
    int yr = 0, br = 0;
    char sa[160], sb[160];
    if (!operand_of(av->shape, (int)av->rank, at.ta, at.tba, 0, &a) ||
        !operand_of(bv->shape, (int)bv->rank, at.tb, at.tbb, 1, &b) || !out_dims(&a, &b, y, &yr, bd, &br) ||
        yr > CORT_MAX_RANK)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "inputs 'A' %s and 'B' %s do not multiply (transA=%d transB=%d transBatchA=%d "
                               "transBatchB=%d)", nn_shape(av, sa, sizeof sa), nn_shape(bv, sb, sizeof sb), at.ta,
                               at.tb, at.tba, at.tbb);
    cort_value *yv;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, y, (size_t)yr, &yv));
    if (!yv->count) return NULL;
    const size_t M = (size_t)a.rows, K = (size_t)a.cols, N = (size_t)b.cols;
    if (!K) { memset(yv->data, 0, yv->count * sizeof(float)); return NULL; }
    const float *ap = av->data, *bp = bv->data;
    float *abuf = NULL, *bbuf = NULL;
    if (at.tba && !a.vec) {
        if (!(abuf = cort_kernel_scratch(ctx, av->count * sizeof(float)))) return cort_error_oom();
        batch_transpose(ap, abuf, av->shape, (int)av->rank);
        ap = abuf;
    }
    if (at.tbb && !b.vec) {
        if (!(bbuf = cort_kernel_scratch(ctx, bv->count * sizeof(float)))) {
            cort_kernel_scratch_free(ctx, abuf);
            return cort_error_oom();
        }
        batch_transpose(bp, bbuf, bv->shape, (int)bv->rank);
        bp = bbuf;
    }
    /* matrix index of each output batch entry in A and B (0 stride where broadcast) */
    size_t batch = 1, astr[CORT_MAX_RANK], bstr[CORT_MAX_RANK];
    for (int i = 0; i < br; i++) batch *= (size_t)bd[i];
    {
        size_t sa_ = 1, sb_ = 1;
        for (int i = br - 1; i >= 0; i--) {
            int ia = i - (br - a.rank), ib = i - (br - b.rank);
            int64_t da = ia >= 0 ? a.batch[ia] : 1, db = ib >= 0 ? b.batch[ib] : 1;
            astr[i] = da == 1 ? 0 : sa_;
            bstr[i] = db == 1 ? 0 : sb_;
            sa_ *= (size_t)da;
            sb_ *= (size_t)db;
        }
    }
    const int ta = at.ta && !a.vec, tb = at.tb && !b.vec;
    const nn_gemm_packed *bpack = !at.tbb && bv->rank == 2 ? nn_mm_packed_b(ctx) : NULL;
    nn_gemm_opts o = { NULL, bpack, NULL, NULL, ctx, NULL, NULL };
    cort_status *st = NULL;
    for (size_t t = 0; t < batch && !st; t++) {
        size_t rem = t, am = 0, bm = 0;
        for (int i = br - 1; i >= 0; i--) {
            size_t idx = rem % (size_t)bd[i];
            rem /= (size_t)bd[i];
            am += idx * astr[i];
            bm += idx * bstr[i];
        }
        nn_gemm_b gb = nn_gemm_b_matrix(bp + bm * K * N, tb ? K : N, tb);
        st = nn_sgemm_opt(ctx->pool, NULL, M, N, K, at.alpha, ap + am * M * K, ta ? M : K, ta, &gb, 0.0f,
                          (float *)yv->data + t * M * N, N, &o);
    }
    cort_kernel_scratch_free(ctx, abuf);
    cort_kernel_scratch_free(ctx, bbuf);
    return st;
}

const cort_op_def ctb_op_fused_matmul = { .name = "FusedMatMul", .domain = "com.microsoft", .min_opset = 1,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = fmm_init,
    .free_state = nn_mm_free_packed_b, .infer = fmm_infer, .run = fmm_run };
