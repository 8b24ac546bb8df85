/* Shape/type inference helpers shared by the operator families. */
#include "op.h"
#include <string.h>

void cort_tinfo_unknown(cort_tinfo *t) {
    memset(t, 0, sizeof *t);
    t->rank = -1;
    t->present = 1;
}

void cort_tinfo_tensor(cort_tinfo *t, cort_type elem) {
    t->kind = CORT_VKIND_TENSOR;
    t->elem = elem;
    t->rank = -1;
    t->value = NULL;
}

void cort_tinfo_tensor_shape(cort_tinfo *t, cort_type elem, const int64_t *dims, int rank) {
    t->kind = CORT_VKIND_TENSOR;
    t->elem = elem;
    t->value = NULL;
    if (rank < 0 || rank > CORT_MAX_RANK) { t->rank = -1; return; }
    t->rank = rank;
    /* dims often come straight from a constant input or attribute (ConstantOfShape's shape, a
     * window's size, RoiAlign's output_height): a negative one is no shape. Unknown here; the
     * kernel refuses the value, naming it, at run time. */
    for (int i = 0; i < rank; i++) t->dims[i] = dims && dims[i] >= 0 ? dims[i] : -1;
}

int cort_tinfo_shape_known(const cort_tinfo *t) {
    if (t->rank < 0) return 0;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) return 0;
    return 1;
}

cort_status *cort_infer_same(cort_infer_ctx *ctx) {
    if (ctx->n_inputs < 1 || ctx->n_outputs < 1) return NULL;
    const cort_tinfo *in = &ctx->inputs[0];
    cort_tinfo *o = &ctx->outputs[0];
    o->kind = in->kind;
    o->elem = in->elem;
    o->inner = in->inner;
    o->rank = in->rank;
    if (in->rank > 0) memcpy(o->dims, in->dims, (size_t)in->rank * sizeof in->dims[0]);
    return NULL;
}

cort_status *cort_infer_same_all(cort_infer_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_outputs && ctx->n_inputs; i++) {
        const cort_tinfo *in = &ctx->inputs[0];
        cort_tinfo *o = &ctx->outputs[i];
        o->kind = in->kind;
        o->elem = in->elem;
        o->rank = in->rank;
        if (in->rank > 0) memcpy(o->dims, in->dims, (size_t)in->rank * sizeof in->dims[0]);
    }
    return NULL;
}

cort_status *cort_broadcast_shapes(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out, int *rout) {
    int r = ra > rb ? ra : rb;
    if (r > CORT_MAX_RANK) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "broadcast: rank %d too large", r);
    for (int i = 0; i < r; i++) {
        int64_t da = i - (r - ra) >= 0 ? a[i - (r - ra)] : 1;
        int64_t db = i - (r - rb) >= 0 ? b[i - (r - rb)] : 1;
        int64_t d;
        if (da == 1) d = db;
        else if (db == 1) d = da;
        else if (da < 0 || db < 0) d = da < 0 ? (db < 0 ? -1 : db) : da;
        else if (da == db) d = da;
        else {
            char sa[256], sb[256];
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "shapes %s and %s cannot be broadcast (dimension %d: %lld vs %lld)",
                              cort_shape_str(a, (size_t)ra, sa, sizeof sa), cort_shape_str(b, (size_t)rb, sb, sizeof sb),
                              i, (long long)da, (long long)db);
        }
        out[i] = d;
    }
    *rout = r;
    return NULL;
}

static cort_status *infer_broadcast_type(cort_infer_ctx *ctx, cort_type out_type) {
    cort_tinfo *o = &ctx->outputs[0];
    o->kind = CORT_VKIND_TENSOR;
    o->elem = out_type;
    int64_t dims[CORT_MAX_RANK];
    int rank = 0, known = 1;
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        const cort_tinfo *t = &ctx->inputs[i];
        if (!t->present) continue;
        if (t->rank < 0) { known = 0; break; }
        int64_t nd[CORT_MAX_RANK];
        int nr;
        cort_status *st = cort_broadcast_shapes(dims, rank, t->dims, t->rank, nd, &nr);
        if (st) return cort_error_wrap(st, "node '%s' (%s): ", ctx->node->name, ctx->node->op_type);
        memcpy(dims, nd, sizeof nd);
        rank = nr;
    }
    if (known) cort_tinfo_tensor_shape(o, out_type, dims, rank);
    return NULL;
}

cort_status *cort_infer_broadcast(cort_infer_ctx *ctx) {
    if (!ctx->n_inputs || !ctx->n_outputs) return NULL;
    return infer_broadcast_type(ctx, ctx->inputs[0].elem);
}

cort_status *cort_infer_broadcast_bool(cort_infer_ctx *ctx) {
    if (!ctx->n_inputs || !ctx->n_outputs) return NULL;
    return infer_broadcast_type(ctx, CORT_TYPE_BOOL);
}

void cort_broadcast_strides(const int64_t *out_dims, size_t out_rank, const int64_t *in_dims, size_t in_rank,
                            int64_t *strides) {
    int64_t s = 1;
    for (size_t k = out_rank; k-- > 0;) {
        size_t off = out_rank - in_rank;
        if (k < off) { strides[k] = 0; continue; }
        int64_t d = in_dims[k - off];
        strides[k] = (d == 1 && out_dims[k] != 1) ? 0 : s;
        s *= d;
    }
}
