/* Unique (opset 11): unique elements (or slices along `axis`), with first-occurrence indices,
 * inverse indices and counts. Elements/slices are ordered by a stable sort of their positions, so
 * each group's first member is its first occurrence; sorted = 0 then reorders the groups by it.
 * Slices compare lexicographically in [outer, inner] order, like numpy.unique(axis=...). */
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct uq_ctx {
    const cort_value *x;
    size_t outer, n, inner;   /* slice s covers x[o, s, c] for all o, c */
} uq_ctx;

static int cmp_elem(const cort_value *x, size_t i, size_t j) {
    switch (x->type) {
    case CORT_TYPE_STRING: {
        int c = strcmp(cort_string_get(x, i), cort_string_get(x, j));
        return (c > 0) - (c < 0);
    }
    case CORT_TYPE_UINT64: {
        uint64_t a = ((const uint64_t *)x->data)[i], b = ((const uint64_t *)x->data)[j];
        return (a > b) - (a < b);
    }
    case CORT_TYPE_INT64: {
        int64_t a = ((const int64_t *)x->data)[i], b = ((const int64_t *)x->data)[j];
        return (a > b) - (a < b);
    }
    default: {
        double a = cort_load_f64(x->data, x->type, i), b = cort_load_f64(x->data, x->type, j);
        int an = a != a, bn = b != b;
        if (an || bn) return an - bn;   /* NaN sorts last and NaNs compare equal */
        return (a > b) - (a < b);
    }
    }
}

static int cmp_slices(const void *vctx, int64_t a, int64_t b) {
    const uq_ctx *u = vctx;
    for (size_t o = 0; o < u->outer; o++)
        for (size_t c = 0; c < u->inner; c++) {
            size_t base = o * u->n * u->inner + c;
            int r = cmp_elem(u->x, base + (size_t)a * u->inner, base + (size_t)b * u->inner);
            if (r) return r;
        }
    return 0;
}

static int cmp_first(const void *vctx, int64_t a, int64_t b) {
    const int64_t *first = vctx;
    return (first[a] > first[b]) - (first[a] < first[b]);
}

static cort_status *unique_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a tensor");
    if (!(cort_type_is_float(x->type) || cort_type_is_int(x->type) || x->type == CORT_TYPE_BOOL || x->type == CORT_TYPE_STRING))
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "input 0 'X' has unsupported type %s", cort_type_name(x->type));
    int sorted = cort_attr_int(ctx->node, "sorted", 1) != 0;
    int has_axis = cort_attr_get(ctx->node, "axis") != NULL;
    uq_ctx u = { x, 1, x->count, 1 };
    size_t axis = 0;
    if (has_axis) {
        CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", 0), x->rank, "attribute 'axis'", &axis));
        u.outer = rd_prod(x->shape, 0, axis);
        u.n = (size_t)x->shape[axis];
        u.inner = rd_prod(x->shape, axis + 1, x->rank);
    }
    size_t n = u.n;
    /* order[], tmp[], group_of[] (per slice), first[] and gorder[] (per group), all n entries */
    int64_t *buf = cort_kernel_scratch(ctx, (5 * n + 1) * sizeof *buf);
    if (!buf) return cort_error_oom();
    int64_t *order = buf, *tmp = buf + n, *group_of = buf + 2 * n, *first = buf + 3 * n, *gorder = buf + 4 * n;
    for (size_t i = 0; i < n; i++) order[i] = (int64_t)i;
    rd_sort(order, tmp, n, cmp_slices, &u);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || cmp_slices(&u, order[i - 1], order[i]) != 0) first[ng++] = order[i];
        group_of[order[i]] = (int64_t)(ng - 1);
    }
    /* rank[g] of each sorted group in the output order */
    int64_t *rank = tmp;
    for (size_t g = 0; g < ng; g++) gorder[g] = (int64_t)g;
    if (!sorted) rd_sort(gorder, order, ng, cmp_first, first);   /* order[] is free again */
    for (size_t g = 0; g < ng; g++) rank[gorder[g]] = (int64_t)g;
    int64_t yd[CORT_MAX_RANK];
    size_t yr;
    if (has_axis) { memcpy(yd, x->shape, x->rank * sizeof *yd); yd[axis] = (int64_t)ng; yr = x->rank; }
    else { yd[0] = (int64_t)ng; yr = 1; }
    cort_value *y, *vi = NULL, *vinv = NULL, *vc = NULL;
    int64_t ngd = (int64_t)ng, nd = (int64_t)n;
    cort_status *st = cort_kernel_output(ctx, 0, x->type, yd, yr, &y);
    if (!st && ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0) st = cort_kernel_output(ctx, 1, CORT_TYPE_INT64, &ngd, 1, &vi);
    if (!st && ctx->n_outputs > 2 && ctx->node->out_slot[2] >= 0) st = cort_kernel_output(ctx, 2, CORT_TYPE_INT64, &nd, 1, &vinv);
    if (!st && ctx->n_outputs > 3 && ctx->node->out_slot[3] >= 0) st = cort_kernel_output(ctx, 3, CORT_TYPE_INT64, &ngd, 1, &vc);
    if (st) { cort_kernel_scratch_free(ctx, buf); return st; }
    size_t es = cort_type_size(x->type);
    for (size_t g = 0; g < ng; g++) {
        size_t src = (size_t)first[gorder[g]];
        for (size_t o = 0; o < u.outer; o++) {
            size_t from = (o * n + src) * u.inner, to = (o * ng + g) * u.inner;
            if (x->type == CORT_TYPE_STRING) {
                for (size_t c = 0; c < u.inner; c++) {
                    const char *s = cort_string_get(x, from + c);
                    if ((st = cort_string_set(y, to + c, s, strlen(s))) != NULL) { cort_kernel_scratch_free(ctx, buf); return st; }
                }
            } else {
                memcpy((uint8_t *)y->data + to * es, (const uint8_t *)x->data + from * es, u.inner * es);
            }
        }
        if (vi) ((int64_t *)vi->data)[g] = first[gorder[g]];
    }
    if (vc) {
        memset(vc->data, 0, ng * sizeof(int64_t));
        for (size_t i = 0; i < n; i++) ((int64_t *)vc->data)[rank[group_of[i]]]++;
    }
    if (vinv) for (size_t i = 0; i < n; i++) ((int64_t *)vinv->data)[i] = rank[group_of[i]];
    cort_kernel_scratch_free(ctx, buf);
    return NULL;
}

static cort_status *unique_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0);
    if (x) {
        int64_t d[CORT_MAX_RANK];
        if (cort_attr_get(ctx->node, "axis") && x->rank > 0) {
            size_t axis;
            CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", 0), (size_t)x->rank, "attribute 'axis'", &axis));
            memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
            d[axis] = -1;
            cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, d, x->rank);
        } else {
            d[0] = -1;
            cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, d, 1);
        }
    }
    int64_t u = -1;
    for (size_t i = 1; i < ctx->n_outputs && i < 4; i++) cort_tinfo_tensor_shape(&ctx->outputs[i], CORT_TYPE_INT64, &u, 1);
    return NULL;
}

const cort_op_def rd_op_unique = { .name = "Unique", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .infer = unique_infer, .run = unique_run };
