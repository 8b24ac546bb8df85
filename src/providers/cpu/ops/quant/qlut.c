/* cort.QLut(X) -> Y: y = table[x] for 8-bit X, with `table` (INTS, 256 entries in 0..255: the result
 * byte for each input byte) and `to` (the ONNX element type of Y, UINT8 or INT8). Made by the
 * fuse_qdq_lut pass from QuantizeLinear(f(...(DequantizeLinear(x)))) chains of elementwise ops, whose
 * table it evaluates with the graph's own kernels; never in a model file. */
#include <string.h>
#include "quant.h"
#include "../nn/nn_common.h"
#include "../../kernels/isa_config.h"
#include "../../../../core/alloc.h"

typedef struct qlut_state { uint8_t t[256]; cort_type to; } qlut_state;

static cort_status *qlut_init(const cort_node *node, void **state) {
    *state = NULL;
    const int64_t *v;
    const size_t n = cort_attr_ints(node, "table", &v);
    if (n != 256)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'table' has %zu entries, expected 256", n);
    const int64_t to = cort_attr_int(node, "to", 0);
    if (to != CORT_TYPE_UINT8 && to != CORT_TYPE_INT8)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'to' = %lld, expected uint8 (%d) or int8 (%d)",
                               (long long)to, CORT_TYPE_UINT8, CORT_TYPE_INT8);
    qlut_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    for (size_t i = 0; i < 256; i++) {
        if (v[i] < 0 || v[i] > 255) {
            cort_free(s);
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'table' entry %zu = %lld is not a byte", i,
                                   (long long)v[i]);
        }
        s->t[i] = (uint8_t)v[i];
    }
    s->to = (cort_type)to;
    *state = s;
    return NULL;
}

static void qlut_free(void *state) { cort_free(state); }

static cort_status *qlut_infer(cort_infer_ctx *ctx) {
    const int64_t to = cort_attr_int(ctx->node, "to", 0);
    if (to == CORT_TYPE_UINT8 || to == CORT_TYPE_INT8) {
        const cort_tinfo *x = &ctx->inputs[0];
        if (x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], (cort_type)to, x->dims, x->rank);
        else nn_infer_type(ctx, 0, (cort_type)to);
    }
    return NULL;
}

typedef struct qlut_job { const uint8_t *t, *x; uint8_t *y; size_t n; nn_lut8_fn f; } qlut_job;

static void qlut_range(void *arg, size_t begin, size_t end) {
    const qlut_job *j = arg;
    const size_t b = begin * 16384, e = end * 16384 < j->n ? end * 16384 : j->n;
    if (j->f) {
        j->f(j->t, j->x + b, j->y + b, e - b);
        return;
    }
    for (size_t i = b; i < e; i++) j->y[i] = j->t[j->x[i]];
}

static cort_status *qlut_run(cort_kernel_ctx *ctx) {
    const qlut_state *s = ctx->state;
    const cort_value *x = ctx->n_inputs ? ctx->inputs[0] : NULL;
    if (!s) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "no table");
    if (!x || x->kind != CORT_VKIND_TENSOR || !nn_q_is_8bit(x->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 is %s, expected an int8 or uint8 tensor",
                               x ? cort_type_name(x->type) : "missing");
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, s->to, x->shape, x->rank, &y));
    if (!y->count) return NULL;
    qlut_job j = { s->t, x->data, y->data, y->count, nn_isa_lut8() };
    cort_parallel_for(y->count < 65536 ? NULL : ctx->pool, (y->count + 16383) / 16384, 1, qlut_range, &j);
    return NULL;
}

const cort_op_def q_op_qlut = { .name = "QLut", .domain = "cort", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
                                .types = 0, .init = qlut_init, .free_state = qlut_free, .infer = qlut_infer,
                                .run = qlut_run };
