/* TensorScatter (opset 24): writes `update` into a copy of the KV cache `past_cache` along the
 * sequence axis, at write_indices[batch] (+ i), linearly or wrapping around (mode "circular").
 * When the cache's last reader is this node its buffer is updated in place, so a decode step
 * copies only the new tokens, not the whole cache. Only the sequence index wraps in circular
 * mode (the spec's pseudocode takes every index modulo the sequence length; the two agree
 * whenever the leading dims are smaller than it). */
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

static cort_status *tensor_scatter_run(cort_kernel_ctx *ctx) {
    const cort_value *past = rd_input(ctx, 0), *upd = rd_input(ctx, 1), *wi = rd_input(ctx, 2);
    if (!past || past->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'past_cache' must be a tensor");
    if (!upd || upd->kind != CORT_VKIND_TENSOR || upd->type != past->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'update' must be a tensor of past_cache's type");
    size_t es = cort_type_size(past->type);
    if (!es) return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "input 0 'past_cache' element type %d is not supported", (int)past->type);
    if (past->rank < 2 || upd->rank != past->rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'past_cache' (rank %zu) and 'update' (rank %zu) need equal rank >= 2",
                               past->rank, upd->rank);
    size_t axis;
    CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", -2), past->rank, "attribute 'axis'", &axis));
    if (axis == 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' must not be the batch dimension 0");
    const char *mode = cort_attr_str(ctx->node, "mode", "linear");
    int circular = !strcmp(mode, "circular");
    if (!circular && strcmp(mode, "linear"))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'mode' is '%s', must be 'linear' or 'circular'", mode);
    for (size_t d = 0; d < past->rank; d++)
        if (d == axis ? upd->shape[d] > past->shape[d] : upd->shape[d] != past->shape[d])
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'update' dim %zu is %lld, past_cache's is %lld", d,
                                   (long long)upd->shape[d], (long long)past->shape[d]);
    size_t batch = (size_t)past->shape[0];
    if (wi) {
        if (wi->type != CORT_TYPE_INT64 || wi->rank != 1 || wi->count != batch)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'write_indices' must be int64 of shape [%zu]", batch);
    }
    int64_t maxlen = past->shape[axis], seqlen = upd->shape[axis];
    const int64_t *w = wi ? wi->data : NULL;
    for (size_t b = 0; b < batch && w; b++)
        if (!circular && (w[b] < 0 || w[b] > maxlen - seqlen))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 2 'write_indices'[%zu] = %lld: %lld update rows do not fit a sequence of %lld", b, (long long)w[b],
                                   (long long)seqlen, (long long)maxlen);
    cort_value *y = cort_kernel_reusable_input(ctx, 0, past->type, past->shape, past->rank);
    if (y) {
        cort_kernel_set_output(ctx, 0, cort_value_retain(y));
    } else {
        CORT_TRY(cort_kernel_output(ctx, 0, past->type, past->shape, past->rank, &y));
        if (past->type == CORT_TYPE_STRING) {
            for (size_t i = 0; i < past->count; i++) {
                const char *s = cort_string_get(past, i);
                CORT_TRY(cort_string_set(y, i, s, strlen(s)));
            }
        } else if (past->bytes) {
            memcpy(y->data, past->data, past->bytes);
        }
    }
    if (!maxlen || !seqlen) return NULL;
    size_t inner = rd_prod(past->shape, axis + 1, past->rank), per_batch = rd_prod(past->shape, 1, axis);
    for (size_t b = 0; b < batch; b++) {
        int64_t start = w ? w[b] : 0;
        for (size_t p = 0; p < per_batch; p++) {
            size_t prefix = b * per_batch + p;
            for (int64_t s = 0; s < seqlen; s++) {
                int64_t pos = start + s;
                if (circular) { pos %= maxlen; if (pos < 0) pos += maxlen; }
                size_t dst = (prefix * (size_t)maxlen + (size_t)pos) * inner, src = (prefix * (size_t)seqlen + (size_t)s) * inner;
                if (past->type == CORT_TYPE_STRING) {
                    for (size_t i = 0; i < inner; i++) {
                        const char *str = cort_string_get(upd, src + i);
                        CORT_TRY(cort_string_set(y, dst + i, str, strlen(str)));
                    }
                } else {
                    memcpy((char *)y->data + dst * es, (const char *)upd->data + src * es, inner * es);
                }
            }
        }
    }
    return NULL;
}

const cort_op_def sh_op_tensor_scatter = { .name = "TensorScatter", .domain = "", .min_opset = 24, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_ALL | CORT_TMASK_NEW, .infer = cort_infer_same, .run = tensor_scatter_run };
