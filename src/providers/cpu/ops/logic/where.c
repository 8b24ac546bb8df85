/* Where(condition, X, Y): elementwise select with three-way numpy broadcasting. Kernels are
 * chosen by element size, so every type (including complex) is covered; strings are copied. */
#include <string.h>
#include "../math/elementwise.h"
#include "../math/elementwise_ops.h"

#define EW_WHERE_ROW(name, T) \
    static int name(const ew_params *P, size_t n, void *out_, const void *const *in, const ptrdiff_t *s) { \
        const uint8_t *c = (const uint8_t *)in[0]; const T *x = (const T *)in[1], *y = (const T *)in[2]; \
        T *o = (T *)out_; (void)P; \
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) { \
            for (size_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i]; \
        } else if (s[0] == 0) { /* whole row from one side */ \
            const T *src = c[0] ? x : y; ptrdiff_t ss = c[0] ? s[1] : s[2]; \
            if (ss == 1) memcpy(o, src, n * sizeof(T)); \
            else for (size_t i = 0; i < n; i++) o[i] = src[(ptrdiff_t)i * ss]; \
        } else { \
            for (size_t i = 0; i < n; i++) \
                o[i] = c[(ptrdiff_t)i * s[0]] ? x[(ptrdiff_t)i * s[1]] : y[(ptrdiff_t)i * s[2]]; \
        } \
        return 0; \
    }
typedef struct { uint64_t lo, hi; } ew_u128;
EW_WHERE_ROW(where_1, uint8_t)
EW_WHERE_ROW(where_2, uint16_t)
EW_WHERE_ROW(where_4, uint32_t)
EW_WHERE_ROW(where_8, uint64_t)
EW_WHERE_ROW(where_16, ew_u128)

static int where_str(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s) {
    const uint8_t *c = (const uint8_t *)in[0];
    char *const *x = (char *const *)in[1], *const *y = (char *const *)in[2];
    size_t base = (size_t)((char **)out - (char **)P->out->data);
    for (size_t i = 0; i < n; i++) {
        const char *v = c[(ptrdiff_t)i * s[0]] ? x[(ptrdiff_t)i * s[1]] : y[(ptrdiff_t)i * s[2]];
        if (!v) v = "";
        if (cort_string_set(P->out, base + i, v, strlen(v))) return 1;
    }
    return 0;
}

static cort_status *run_where(cort_kernel_ctx *ctx) {
    const cort_value *in[3];
    for (size_t k = 0; k < 3; k++) CORT_TRY(ew_input(ctx, k, &in[k]));
    if (in[0]->type != CORT_TYPE_BOOL)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' (condition) has type %s, expected bool",
                               ew_input_name(ctx->node, 0), cort_type_name(in[0]->type));
    cort_type t = in[1]->type;
    if (in[2]->type != t)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 '%s' has type %s, expected %s like input 1 '%s'",
                               ew_input_name(ctx->node, 2), cort_type_name(in[2]->type), cort_type_name(t),
                               ew_input_name(ctx->node, 1));
    ew_row_fn fn;
    size_t grain = EW_GRAIN_CHEAP;
    if (t == CORT_TYPE_STRING) { fn = where_str; grain = 0; }   /* string copies run on one thread */
    else switch (cort_type_size(t)) {
        case 1: fn = where_1; break;
        case 2: fn = where_2; break;
        case 4: fn = where_4; break;
        case 8: fn = where_8; break;
        case 16: fn = where_16; break;
        default: return ew_type_error(ctx, 1, t);
    }
    ew_params p;
    memset(&p, 0, sizeof p);
    return ew_run_nary(ctx, 3, in, NULL, NULL, NULL, t, fn, &p, grain, NULL);
}

static cort_status *infer_where(cort_infer_ctx *ctx) {
    if (ctx->n_outputs < 1 || ctx->n_inputs < 3) return NULL;
    cort_type t = ctx->inputs[1].elem != CORT_TYPE_UNDEFINED ? ctx->inputs[1].elem : ctx->inputs[2].elem;
    CORT_TRY(cort_infer_broadcast(ctx));
    ctx->outputs[0].kind = CORT_VKIND_TENSOR;
    ctx->outputs[0].elem = t;
    return NULL;
}

const cort_op_def ew_op_where = { .name = "Where", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_ALL, .type_input = 1, .infer = infer_where, .run = run_where };
