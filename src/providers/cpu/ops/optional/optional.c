/* Optional, OptionalHasElement, OptionalGetElement (opset 15; opset 18 also accepts plain tensors and
 * sequences, and a missing input for OptionalHasElement). */
#include "../misc_common.h"

/* ---- Optional ---- */
static cort_status *optional_infer(cort_infer_ctx *ctx) {
    if (!ctx->n_outputs) return NULL;
    cort_tinfo *o = &ctx->outputs[0];
    cort_tinfo_unknown(o);
    o->kind = CORT_VKIND_OPTIONAL;
    const cort_tinfo *in = mi_tin(ctx, 0);
    if (in) {
        o->inner = in->kind;
        o->elem = in->elem;
        return NULL;
    }
    const cort_attr_ir *a = cort_attr_get(ctx->node, "type");
    if (a && a->tp) {
        o->inner = a->tp->kind;
        o->elem = a->tp->kind == CORT_VKIND_SEQUENCE && a->tp->inner ? a->tp->inner->elem_type : a->tp->elem_type;
    }
    return NULL;
}
static cort_status *optional_run(cort_kernel_ctx *ctx) {
    cort_value *in = mi_in(ctx, 0), *out;
    if (in) {
        if (in->kind != CORT_VKIND_TENSOR && in->kind != CORT_VKIND_SEQUENCE)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 0 'input' must be a tensor or a sequence (got value kind %d)", (int)in->kind);
        CORT_TRY(cort_optional_new(in, in->kind, in->type, &out));
    } else {
        const cort_attr_ir *a = cort_attr_get(ctx->node, "type");
        if (!a || !a->tp)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL,
                                   "attribute 'type' is required when input 0 'input' is absent");
        cort_vkind k = a->tp->kind;
        cort_type e = k == CORT_VKIND_SEQUENCE && a->tp->inner ? a->tp->inner->elem_type : a->tp->elem_type;
        CORT_TRY(cort_optional_new(NULL, k, e, &out));
    }
    cort_kernel_set_output(ctx, 0, out);
    return NULL;
}

/* ---- OptionalHasElement ---- */
static cort_status *has_element_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_BOOL, NULL, 0);
    return NULL;
}
static cort_status *has_element_run(cort_kernel_ctx *ctx) {
    const cort_value *in = mi_in(ctx, 0);
    int has;
    if (!in) {
        if (ctx->opset < 18)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' is missing");
        has = 0;
    } else if (in->kind == CORT_VKIND_OPTIONAL) {
        has = in->elem != NULL;
    } else if (in->kind == CORT_VKIND_TENSOR || in->kind == CORT_VKIND_SEQUENCE) {
        /* opset 18 allows plain values; earlier models get them too, e.g. a Loop carrying a sequence
         * in an optional-typed slot (onnxruntime treats any present value as an element) */
        has = 1;
    } else {
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' must be an optional (got value kind %d)",
                               (int)in->kind);
    }
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_BOOL, NULL, 0, &out));
    *(uint8_t *)out->data = (uint8_t)has;
    return NULL;
}

/* ---- OptionalGetElement ---- */
static cort_status *get_element_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = mi_tin(ctx, 0);
    if (!in || !ctx->n_outputs) return NULL;
    cort_tinfo *o = &ctx->outputs[0];
    if (in->kind == CORT_VKIND_OPTIONAL) {
        cort_tinfo_unknown(o);
        o->kind = in->inner;
        o->elem = in->elem;
        if (in->inner == CORT_VKIND_TENSOR && in->rank >= 0) cort_tinfo_tensor_shape(o, in->elem, in->dims, in->rank);
    } else {
        *o = *in;
        o->value = NULL;
    }
    return NULL;
}
static cort_status *get_element_run(cort_kernel_ctx *ctx) {
    cort_value *in = mi_in(ctx, 0);
    if (!in) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' is missing");
    if (in->kind == CORT_VKIND_OPTIONAL) {
        if (!in->elem)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' is an empty optional");
        cort_kernel_set_output(ctx, 0, cort_value_retain(in->elem));
        return NULL;
    }
    if (in->kind == CORT_VKIND_TENSOR || in->kind == CORT_VKIND_SEQUENCE) {   /* see has_element_run */
        cort_kernel_set_output(ctx, 0, cort_value_retain(in));
        return NULL;
    }
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' must be an optional (got value kind %d)",
                           (int)in->kind);
}

const cort_op_def mi_op_optional = { .name = "Optional", .domain = "", .min_opset = 15, .max_opset = CORT_OPSET_MAX,
    .infer = optional_infer, .run = optional_run };
const cort_op_def mi_op_optional_has_element = { .name = "OptionalHasElement", .domain = "", .min_opset = 15, .max_opset = CORT_OPSET_MAX,
    .infer = has_element_infer, .run = has_element_run };
const cort_op_def mi_op_optional_get_element = { .name = "OptionalGetElement", .domain = "", .min_opset = 15, .max_opset = CORT_OPSET_MAX,
    .infer = get_element_infer, .run = get_element_run };
