/* BitCast-26: the input's bits reinterpreted as another type of the same width, shape unchanged.
 * Sub-byte types are unpacked in memory (one byte per element), so the element's bits are the low
 * bits of its byte: reinterpreting masks them and sign-extends for int4/int2. */
#include <string.h>
#include "tensor_common.h"
#include "../../../../core/types.h"

static cort_status *bitcast_init(const cort_node *n, void **st) {
    int64_t to = cort_attr_int(n, "to", 0);
    if (!cort_attr_get(n, "to")) return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "required attribute 'to' is missing");
    if (to <= 0 || to > CORT_TYPE_INT2 || to == CORT_TYPE_STRING || !cort_type_size((cort_type)to))
        return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "attribute 'to' = %lld is not a non-string tensor type",
                               (long long)to);
    (void)st;
    return NULL;
}

static cort_status *bitcast_infer(cort_infer_ctx *ctx) {
    cort_type to = (cort_type)cort_attr_int(ctx->node, "to", 0);
    const cort_tinfo *in = sh_tin(ctx, 0);
    if (in && in->elem && cort_type_bits(in->elem) != cort_type_bits(to))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "input 0 '%s' is %s (%d bits) but 'to' is %s (%d bits)",
                               sh_in_name(ctx->node, 0), cort_type_name(in->elem), cort_type_bits(in->elem),
                               cort_type_name(to), cort_type_bits(to));
    if (in && in->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], to, in->dims, (size_t)in->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], to);
    return NULL;
}

static cort_status *bitcast_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    CORT_TRY(sh_input(ctx, 0, &in));
    cort_type to = (cort_type)cort_attr_int(ctx->node, "to", 0);
    int bits = cort_type_bits(to);
    if (in->type == CORT_TYPE_STRING || cort_type_bits(in->type) != bits)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' is %s (%d bits) but 'to' is %s (%d bits)",
                               sh_in_name(ctx->node, 0), cort_type_name(in->type), cort_type_bits(in->type),
                               cort_type_name(to), bits);
    CORT_TRY(cort_kernel_output(ctx, 0, to, in->shape, in->rank, &out));
    if (bits >= 8) {
        if (in->bytes) memcpy(out->data, in->data, in->bytes);
        return NULL;
    }
    const uint8_t *s = in->data;
    uint8_t *d = out->data;
    for (size_t i = 0; i < in->count; i++) {
        int64_t v = s[i] & ((1u << bits) - 1);
        d[i] = (uint8_t)(int8_t)(to == CORT_TYPE_INT4 || to == CORT_TYPE_INT2 ? cort_small_int_wrap(v, to) : v);
    }
    return NULL;
}

#define BITCAST_TYPES (SH_TYPES_ALL & ~CORT_TBIT(CORT_TYPE_STRING))
const cort_op_def sh_op_bitcast = { .name = "BitCast", .domain = "", .min_opset = 26, .max_opset = CORT_OPSET_MAX,
    .types = BITCAST_TYPES | CORT_TMASK_NEW, .init = bitcast_init, .infer = bitcast_infer, .run = bitcast_run };
