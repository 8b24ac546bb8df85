/* RMSNormalization-23: Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * Scale.
 * Rows (the normalized trailing block) are spread over the pool; each row is one call of the
 * level's row kernel (kernels/norm_ukernels.h), so the sum of squares and the scaling are one read
 * and one read-write pass. A Scale smaller than a row is broadcast into a full row once per run. */
#include <string.h>
#include "tx_common.h"
#include "../../kernels/norm_ukernels.h"

typedef struct rms_job {
    const float *x, *w;
    float *y;
    size_t row;
    float eps;
    nn_rmsnorm_row_fn fn;
} rms_job;

static void rms_rows(void *arg, size_t begin, size_t end) {
    const rms_job *j = arg;
    for (size_t r = begin; r < end; r++) j->fn(j->x + r * j->row, j->w, j->y + r * j->row, j->row, j->eps);
}

static cort_status *rms_infer(cort_infer_ctx *ctx) {
    cort_infer_same(ctx);
    if (ctx->n_inputs > 1 && ctx->inputs[1].present && ctx->inputs[1].elem != CORT_TYPE_UNDEFINED)
        ctx->outputs[0].elem = ctx->inputs[1].elem;
    return NULL;
}

static cort_status *rms_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 1, -1));
    CORT_TRY(nn_check_input(ctx, 1, "scale", 0, -1));
    const cort_value *x = ctx->inputs[0], *sc = ctx->inputs[1];
    char bx[160], bs[160];
    const int64_t axis = cort_attr_int(ctx->node, "axis", -1);
    const int64_t a = axis < 0 ? axis + (int64_t)x->rank : axis;
    if (a < 0 || a >= (int64_t)x->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' = %lld is out of range for "
                               "input 0 'X' of shape %s", (long long)axis, nn_shape(x, bx, sizeof bx));
    if (!(CORT_TMASK_FLOATS & CORT_TBIT(sc->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'scale' is %s, expected a float type",
                               cort_type_name(sc->type));
    const size_t nrank = x->rank - (size_t)a;
    const int64_t *ndims = x->shape + a;
    size_t rows = 1, row = 1;
    for (size_t d = 0; d < x->rank; d++) *(d < (size_t)a ? &rows : &row) *= (size_t)x->shape[d];
    /* scale: broadcastable to the normalized dims (extra leading dims must be 1) */
    int ok = 1;
    for (size_t i = 0; i < sc->rank; i++) {
        int64_t sd = sc->shape[sc->rank - 1 - i];
        int64_t want = i < nrank ? ndims[nrank - 1 - i] : 1;
        if (sd != 1 && sd != want) ok = 0;
    }
    if (!ok)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'scale' has shape %s, not "
                               "broadcastable to the normalized dims of X %s from axis %lld",
                               nn_shape(sc, bs, sizeof bs), nn_shape(x, bx, sizeof bx), (long long)a);
    cort_value *y;
    /* Y has the type of scale (V in the spec) */
    CORT_TRY(cort_kernel_output(ctx, 0, sc->type, x->shape, x->rank, &y));
    if (!x->count) return NULL;
    nn_fbuf fx = { 0 }, fs = { 0 }, fy = { 0 };
    float *wrow = NULL;
    cort_status *st = tx_fbuf_in(ctx, x, &fx);
    if (!st) st = tx_fbuf_in(ctx, sc, &fs);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    if (st) goto done;
    const float *w = fs.p;
    if (sc->count != row) {
        wrow = cort_kernel_scratch(ctx, row * sizeof(float));
        if (!wrow) { st = cort_error_oom(); goto done; }
        int64_t str[CORT_MAX_RANK];
        size_t srank = sc->rank < nrank ? sc->rank : nrank;
        cort_broadcast_strides(ndims, nrank, sc->shape + (sc->rank - srank), srank, str);
        for (size_t i = 0; i < row; i++) {
            size_t rem = i, off = 0;
            for (size_t d = nrank; d-- > 0;) {
                off += (rem % (size_t)ndims[d]) * (size_t)str[d];
                rem /= (size_t)ndims[d];
            }
            wrow[i] = fs.p[off];
        }
        w = wrow;
    }
    rms_job j = { fx.p, w, fy.p, row, cort_attr_float(ctx->node, "epsilon", 1e-5f), nn_rmsnorm_row() };
    cort_parallel_for(x->count < 16384 ? NULL : ctx->pool, rows, 16384 / row + 1, rms_rows, &j);
    nn_fbuf_commit(&fy, y);
done:
    cort_kernel_scratch_free(ctx, wrow);
    tx_fbuf_free(ctx, &fx);
    tx_fbuf_free(ctx, &fs);
    tx_fbuf_free(ctx, &fy);
    return st;
}

const cort_op_def nn_op_rms_norm = { .name = "RMSNormalization", .domain = "", .min_opset = 23,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = rms_infer, .run = rms_run };
