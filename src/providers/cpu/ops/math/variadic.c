/* Variadic operators: Sum, Mean, Max, Min over any number of inputs with numpy broadcasting.
 * The output is built pairwise: out = in0 op in1, then out = out op in_k. */
#include <string.h>
#include "elementwise.h"
#include "elementwise_ops.h"

#define EW_ADD_I(T, UT, x, y) ((T)((uint64_t)(x) + (uint64_t)(y)))
#define EW_MAX_I(T, UT, x, y) ((x) > (y) ? (x) : (y))
#define EW_MIN_I(T, UT, x, y) ((x) < (y) ? (x) : (y))
EW_ROWS_FLOAT(vsum, x + y)
EW_ROWS_SINT(vsum, EW_ADD_I)
EW_ROWS_UINT(vsum, EW_ADD_I)
/* NaN in either operand propagates, like numpy */
EW_ROWS_FLOAT(vmax, ((x > y || x != x) ? x : y))
EW_ROWS_SINT(vmax, EW_MAX_I)
EW_ROWS_UINT(vmax, EW_MAX_I)
EW_ROWS_FLOAT(vmin, ((x < y || x != x) ? x : y))
EW_ROWS_SINT(vmin, EW_MIN_I)
EW_ROWS_UINT(vmin, EW_MIN_I)
#define EW_TBL_NUM(name) EW_TBL_FLOAT(name) EW_TBL_SINT(name) EW_TBL_UINT(name)
static const ew_row_fn vsum_tbl[EW_NTYPES] = { EW_TBL_NUM(vsum) };
static const ew_row_fn vmax_tbl[EW_NTYPES] = { EW_TBL_NUM(vmax) };
static const ew_row_fn vmin_tbl[EW_NTYPES] = { EW_TBL_NUM(vmin) };

/* Mean's final division by the input count (P->scale holds the count) */
#define EW_DIVN_I(T, UT, x) ((T)((x) / (T)P->scale))
EW_MAPS_FLOAT(divn, x / P->scale)
EW_MAPS_SINT(divn, EW_DIVN_I)
EW_MAPS_UINT(divn, EW_DIVN_I)
static const ew_map_fn divn_tbl[EW_NTYPES] = { EW_TBL_NUM(divn) };

/* one input: copy with broadcasting (rows of any stride) */
static int copy_row(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s) {
    size_t es = (size_t)P->flag;
    const uint8_t *a = (const uint8_t *)in[0];
    uint8_t *o = (uint8_t *)out;
    if (s[0] == 1) memcpy(o, a, n * es);
    else
        for (size_t i = 0; i < n; i++) memcpy(o + i * es, a + (ptrdiff_t)i * s[0] * (ptrdiff_t)es, es);
    return 0;
}

typedef struct ew_variadic_desc { const ew_row_fn *tbl; int simd; int mean; } ew_variadic_desc;

static cort_status *ew_variadic_run(cort_kernel_ctx *ctx, const ew_variadic_desc *d) {
    size_t n = ctx->n_inputs;
    if (n == 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "needs at least one input");
    const cort_value *in0 = NULL;
    CORT_TRY(ew_input(ctx, 0, &in0));
    cort_type t = in0->type;
    ew_row_fn fn = ((unsigned)t < EW_NTYPES) ? d->tbl[t] : NULL;
    if (!fn) return ew_type_error(ctx, 0, t);
    /* output shape: fold the broadcast over all inputs */
    int64_t od[CORT_MAX_RANK];
    size_t orank = in0->rank;
    memcpy(od, in0->shape, orank * sizeof(int64_t));
    for (size_t k = 1; k < n; k++) {
        const cort_value *v = NULL;
        CORT_TRY(ew_input(ctx, k, &v));
        if (v->type != t)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has type %s, expected %s",
                                   k, ew_input_name(ctx->node, k), cort_type_name(v->type), cort_type_name(t));
        const int64_t *dims[2] = { od, v->shape };
        size_t ranks[2] = { orank, v->rank }, which[2] = { 0, k };
        int64_t tmp[CORT_MAX_RANK];
        CORT_TRY(ew_broadcast_shape(ctx->node, 2, dims, ranks, which, tmp, &orank));
        memcpy(od, tmp, orank * sizeof(int64_t));
    }
    cort_value *o = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, t, od, orank, &o));
    ew_params p;
    memset(&p, 0, sizeof p);
    p.k = ew_f32_best();
    if (t == CORT_TYPE_FLOAT && d->simd >= 0) { fn = ew_f32_bin_row; p.simd_op = d->simd; }
    size_t es = cort_type_size(t);
    ew_plan plan;
    if (n == 1) {
        const int64_t *dims[1] = { in0->shape };
        size_t ranks[1] = { in0->rank }, esz[1] = { es };
        const void *data[1] = { in0->data };
        ew_params cp = p;
        cp.flag = (int)es;
        ew_plan_init(&plan, od, orank, 1, dims, ranks);
        return ew_plan_run(ctx, &plan, data, esz, o->data, es, copy_row, &cp, EW_GRAIN_CHEAP);
    }
    for (size_t k = 1; k < n; k++) {
        const cort_value *a = k == 1 ? in0 : o, *b = ctx->inputs[k];
        const int64_t *dims[2] = { a->shape, b->shape };
        size_t ranks[2] = { a->rank, b->rank }, esz[2] = { es, es };
        const void *data[2] = { a->data, b->data };
        ew_plan_init(&plan, od, orank, 2, dims, ranks);
        CORT_TRY(ew_plan_run(ctx, &plan, data, esz, o->data, es, fn, &p, EW_GRAIN_CHEAP));
        if (cort_kernel_cancelled(ctx)) return cort_kernel_cancelled_status(ctx);
    }
    if (d->mean) {
        p.scale = (double)n;
        /* in place over the output: maps read element i before writing it */
        ew_map_fn divn = divn_tbl[t];
        if (divn && o->count) divn(&p, o->count, o->data, o->data);
    }
    return NULL;
}

#define EW_VAR(var, NAME, TBL, SIMD, MEAN) \
    static const ew_variadic_desc desc_##var = { TBL, SIMD, MEAN }; \
    static cort_status *run_##var(cort_kernel_ctx *ctx) { return ew_variadic_run(ctx, &desc_##var); } \
    const cort_op_def ew_op_##var = { .name = NAME, .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, \
    .types = CORT_TMASK_NUMERIC, .infer = cort_infer_broadcast, .run = run_##var };
EW_VAR(sum, "Sum", vsum_tbl, EW_FB_ADD, 0)
EW_VAR(mean, "Mean", vsum_tbl, EW_FB_ADD, 1)
EW_VAR(max, "Max", vmax_tbl, EW_FB_MAX, 0)
EW_VAR(min, "Min", vmin_tbl, EW_FB_MIN, 0)
