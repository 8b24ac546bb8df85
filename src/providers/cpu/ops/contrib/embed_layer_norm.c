/* com.microsoft.EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
 * segment_embedding?, gamma, beta, mask?, position_ids?) epsilon, mask_index_type: BERT's
 * embedding layer as ONNX Runtime fuses it, float32 tables, int32 (or int64) indices.
 *   t[b, s] = word[input_ids[b, s]] + position[position_ids[b, s] or s] + segment[segment_ids[b, s]]
 *   output = LayerNorm(t) * gamma + beta (over the hidden axis), embedding_sum = t;
 *   mask_index[b] = the number of ones in mask[b, :] (0 without a mask), when mask_index_type is 1.
 * An index out of its table's range is an error naming the input, row and value. */
#include <math.h>
#include <string.h>
#include "contrib.h"
#include "../../kernels/vec.h"

static cort_status *eln_infer(cort_infer_ctx *ctx) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    if (ctx->n_outputs > 1) nn_infer_type(ctx, 1, CORT_TYPE_INT32);
    if (ctx->n_outputs > 2) nn_infer_type(ctx, 2, CORT_TYPE_FLOAT);
    const cort_tinfo *ids = &ctx->inputs[0], *we = ctx->n_inputs > 2 ? &ctx->inputs[2] : NULL;
    if (ids->rank != 2 || !we || we->rank != 2) return NULL;
    int64_t d[3] = { ids->dims[0], ids->dims[1], we->dims[1] };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, d, 3);
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_INT32, d, 1);
    if (ctx->n_outputs > 2) cort_tinfo_tensor_shape(&ctx->outputs[2], CORT_TYPE_FLOAT, d, 3);
    return NULL;
}

static int64_t idx_at(const cort_value *v, size_t i) {
    return v->type == CORT_TYPE_INT64 ? ((const int64_t *)v->data)[i] : ((const int32_t *)v->data)[i];
}

static cort_status *index_input(const cort_kernel_ctx *ctx, size_t i, const char *name, size_t B, size_t S,
                                int allow_row, const cort_value **out) {
    const cort_value *v = nn_opt_input(ctx, i);
    *out = v;
    if (!v) return NULL;
    int ok = v->kind == CORT_VKIND_TENSOR && (v->type == CORT_TYPE_INT32 || v->type == CORT_TYPE_INT64) &&
             v->rank == 2 && (size_t)v->shape[1] == S && ((size_t)v->shape[0] == B || (allow_row && v->shape[0] == 1));
    if (!ok) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is %s%s, expected int32 of "
                               "shape (%zu, %zu)", i, name, cort_type_name(v->type), nn_shape(v, buf, sizeof buf), B, S);
    }
    return NULL;
}

static cort_status *table_input(const cort_kernel_ctx *ctx, size_t i, const char *name, size_t H,
                                const cort_value **out) {
    const cort_value *v = nn_opt_input(ctx, i);
    *out = v;
    if (!v) return NULL;
    if (v->kind != CORT_VKIND_TENSOR || v->type != CORT_TYPE_FLOAT || v->rank != 2 || (H && (size_t)v->shape[1] != H)) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is %s%s, expected float of "
                               "shape (rows, %zu)", i, name, cort_type_name(v->type), nn_shape(v, buf, sizeof buf), H);
    }
    return NULL;
}

static cort_status *lookup(const cort_kernel_ctx *ctx, const cort_value *tab, const char *name, const cort_value *ids,
                           size_t at, int64_t dflt, const float **row) {
    int64_t id = ids ? idx_at(ids, at) : dflt;
    if (id < 0 || id >= tab->shape[0])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "index %lld at position %zu is out of range "
                               "for '%s' with %lld rows", (long long)id, at, name, (long long)tab->shape[0]);
    *row = (const float *)tab->data + (size_t)id * (size_t)tab->shape[1];
    return NULL;
}

static cort_status *eln_run(cort_kernel_ctx *ctx) {
    const cort_value *ids = nn_opt_input(ctx, 0), *we, *pe, *se, *seg, *mask, *pos;
    if (!ids || ids->kind != CORT_VKIND_TENSOR || ids->rank != 2 ||
        (ids->type != CORT_TYPE_INT32 && ids->type != CORT_TYPE_INT64))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input_ids' must be int32 of shape "
                               "(batch, sequence)");
    const size_t B = (size_t)ids->shape[0], S = (size_t)ids->shape[1];
    CORT_TRY(table_input(ctx, 2, "word_embedding", 0, &we));
    if (!we) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'word_embedding' is missing");
    const size_t H = (size_t)we->shape[1];
    CORT_TRY(table_input(ctx, 3, "position_embedding", H, &pe));
    if (!pe) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'position_embedding' is missing");
    CORT_TRY(table_input(ctx, 4, "segment_embedding", H, &se));
    CORT_TRY(index_input(ctx, 1, "segment_ids", B, S, 0, &seg));
    CORT_TRY(index_input(ctx, 7, "mask", B, S, 0, &mask));
    CORT_TRY(index_input(ctx, 8, "position_ids", B, S, 1, &pos));
    if (seg && !se)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'segment_ids' needs input 4");
    const float *gamma, *beta;
    if (!nn_opt_input(ctx, 5)) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 5 'gamma' is missing");
    CORT_TRY(ctb_row_param(ctx, 5, "gamma", H, &gamma));
    CORT_TRY(ctb_row_param(ctx, 6, "beta", H, &beta));
    int64_t od[3] = { (int64_t)B, (int64_t)S, (int64_t)H };
    cort_value *y, *mi = NULL, *es = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, od, 3, &y));
    if (ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0) CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_INT32, od, 1, &mi));
    if (ctx->n_outputs > 2 && ctx->node->out_slot[2] >= 0) CORT_TRY(cort_kernel_output(ctx, 2, CORT_TYPE_FLOAT, od, 3, &es));
    const fu_vec_kernels *k = fu_vec_best();
    const float eps = cort_attr_float(ctx->node, "epsilon", 1e-12f), rc = H ? 1.0f / (float)H : 0.0f;
    for (size_t b = 0; b < B; b++)
        for (size_t s = 0; s < S; s++) {
            const size_t at = b * S + s;
            const float *wr, *pr, *sr = NULL;
            CORT_TRY(lookup(ctx, we, "word_embedding", ids, at, 0, &wr));
            CORT_TRY(lookup(ctx, pe, "position_embedding", pos, pos && pos->shape[0] == 1 ? s : at, (int64_t)s, &pr));
            if (se) CORT_TRY(lookup(ctx, se, "segment_embedding", seg, at, 0, &sr));
            float *t = es ? (float *)es->data + at * H : (float *)y->data + at * H;
            k->add(wr, pr, t, H);
            if (sr) k->add(t, sr, t, H);
            if (!H) continue;
            float dv, m = k->sum(t, H) * rc;
            float v = (k->sqdev(t, H, m, &dv) - dv * dv * rc) * rc;
            m += dv * rc;
            k->norm(t, (float *)y->data + at * H, H, m, 1.0f / sqrtf((v < 0.0f ? 0.0f : v) + eps), gamma, beta);
        }
    if (mi) {
        int32_t *mp = mi->data;
        for (size_t b = 0; b < B; b++) {
            int32_t c = 0;
            for (size_t s = 0; mask && s < S; s++) c += idx_at(mask, b * S + s) == 1;
            mp[b] = c;
        }
    }
    return NULL;
}

const cort_op_def ctb_op_embed_layer_norm = { .name = "EmbedLayerNormalization", .domain = "com.microsoft",
    .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = 0, .infer = eln_infer, .run = eln_run };
