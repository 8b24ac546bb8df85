/* RotaryEmbedding-23: rotates the first rotary_embedding_dim features of every head by the angle
 * of its position: pairs (x1, x2) become (cos x1 - sin x2, sin x1 + cos x2), the pairs being the
 * two halves of the rotated block or (interleaved) adjacent features. cos/sin come from caches
 * indexed by position_ids, or given per (batch, position) when position_ids is absent.
 * Rows run on the level's row kernel (kernels/rope_ukernels.h), spread over the pool. */
#include <string.h>
#include "tx_common.h"
#include "../../kernels/rope_ukernels.h"

typedef struct rope_job {
    const float *x, *cosc, *sinc;
    const int64_t *pos;    /* [B, S] or NULL */
    float *y;
    size_t B, S, H, D, half, rank;
    int interleaved;
    nn_rope_row_fn fn;
} rope_job;

/* Head rows in memory order ([B, H, S] for 4-D input, [B, S, H] for 3-D), so reads and writes
 * stream; each row finds its (batch, position) cos/sin row. */
static void rope_rows(void *arg, size_t begin, size_t end) {
    const rope_job *j = arg;
    for (size_t r = begin; r < end; r++) {
        size_t b, s;
        if (j->rank == 4) { b = r / (j->H * j->S); s = r % j->S; }
        else { b = r / (j->S * j->H); s = (r / j->H) % j->S; }
        const size_t bs = b * j->S + s, crow = j->pos ? (size_t)j->pos[bs] : bs;
        j->fn(j->x + r * j->D, j->y + r * j->D, j->cosc + crow * j->half, j->sinc + crow * j->half, j->half, j->D,
              j->interleaved);
    }
}

static cort_status *rope_infer(cort_infer_ctx *ctx) { return cort_infer_same(ctx); }

static cort_status *rope_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "input", 3, -1));
    CORT_TRY(nn_check_input(ctx, 1, "cos_cache", 2, -1));
    CORT_TRY(nn_check_input(ctx, 2, "sin_cache", 2, -1));
    const cort_value *x = ctx->inputs[0], *cc = ctx->inputs[1], *sc = ctx->inputs[2], *pid = nn_opt_input(ctx, 3);
    char b0[160], b1[160];
    if (x->rank != 3 && x->rank != 4)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has shape %s, expected "
                               "[batch, seq, hidden] or [batch, heads, seq, head_size]", nn_shape(x, b0, sizeof b0));
    const size_t half = (size_t)cc->shape[cc->rank - 1];
    const int64_t rdim_attr = cort_attr_int(ctx->node, "rotary_embedding_dim", 0);
    const int64_t nh_attr = cort_attr_int(ctx->node, "num_heads", 0);
    const int interleaved = cort_attr_int(ctx->node, "interleaved", 0) != 0;
    size_t B = (size_t)x->shape[0], S, H, D;
    if (x->rank == 4) {
        H = (size_t)x->shape[1]; S = (size_t)x->shape[2]; D = (size_t)x->shape[3];
    } else {
        S = (size_t)x->shape[1];
        const size_t hidden = (size_t)x->shape[2];
        /* without num_heads the head size is the rotated size (the caches' width doubled) */
        const size_t hd = nh_attr > 0 ? 0 : rdim_attr > 0 ? 0 : 2 * half;
        H = nh_attr > 0 ? (size_t)nh_attr : hd ? hidden / hd : 0;
        if (!H || hidden % H)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has hidden size %zu, not a "
                                   "multiple of num_heads = %lld (3-D input needs attribute num_heads)", hidden,
                                   (long long)nh_attr);
        D = hidden / H;
    }
    const size_t rdim = rdim_attr > 0 ? (size_t)rdim_attr : D;
    if (rdim > D || rdim % 2 || rdim / 2 != half)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "rotary_embedding_dim %zu with head size %zu "
                               "needs caches of width %zu, input 1 'cos_cache' has shape %s", rdim, D, rdim / 2,
                               nn_shape(cc, b1, sizeof b1));
    if (sc->rank != cc->rank || memcmp(sc->shape, cc->shape, cc->rank * sizeof(int64_t)) ||
        sc->type != cc->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'sin_cache' has shape %s, expected the "
                               "shape %s and type of cos_cache", nn_shape(sc, b0, sizeof b0),
                               nn_shape(cc, b1, sizeof b1));
    if (pid) {
        if ((pid->type != CORT_TYPE_INT64) || pid->rank != 2 || (size_t)pid->shape[0] != B ||
            (size_t)pid->shape[1] != S || cc->rank != 2)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'position_ids' has shape %s (%s), "
                                   "expected int64 [%zu, %zu] with 2-D caches", nn_shape(pid, b0, sizeof b0),
                                   cort_type_name(pid->type), B, S);
        const int64_t *p = pid->data;
        for (size_t i = 0; i < pid->count; i++)
            if (p[i] < 0 || p[i] >= cc->shape[0])
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'position_ids'[%zu] = %lld is "
                                       "outside the caches' %lld positions", i, (long long)p[i],
                                       (long long)cc->shape[0]);
    } else if (cc->rank != 3 || (size_t)cc->shape[0] != B || (size_t)cc->shape[1] != S) {
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'cos_cache' has shape %s, expected "
                               "[%zu, %zu, %zu] when position_ids is absent", nn_shape(cc, b0, sizeof b0), B, S, half);
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank, &y));
    if (!x->count) return NULL;
    nn_fbuf fx = { 0 }, fc = { 0 }, fs = { 0 }, fy = { 0 };
    cort_status *st = tx_fbuf_in(ctx, x, &fx);
    if (!st) st = tx_fbuf_in(ctx, cc, &fc);
    if (!st) st = tx_fbuf_in(ctx, sc, &fs);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    if (!st) {
        rope_job j = { fx.p, fc.p, fs.p, pid ? pid->data : NULL, fy.p, B, S, H, D, half, x->rank, interleaved,
                       nn_rope_row() };
        cort_parallel_for(x->count < 16384 ? NULL : ctx->pool, B * S * H, 16384 / (D + 1) + 1, rope_rows, &j);
        nn_fbuf_commit(&fy, y);
    }
    tx_fbuf_free(ctx, &fx);
    tx_fbuf_free(ctx, &fc);
    tx_fbuf_free(ctx, &fs);
    tx_fbuf_free(ctx, &fy);
    return st;
}

const cort_op_def nn_op_rotary_embedding = { .name = "RotaryEmbedding", .domain = "", .min_opset = 23,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = rope_infer, .run = rope_run };
