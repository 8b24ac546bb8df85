/* AffineGrid (opset 20): the sampling grid theta * [x, y, (z,) 1] over a regular lattice in
 * [-1, 1] (PyTorch's affine_grid). Computed in double and rounded once to the output type. A
 * dimension of size 1 sits at 0 in both alignment modes (its only sample is the centre). */
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

/* Coordinate of sample i of n along one axis. */
static double ag_coord(int64_t i, int64_t n, int align) {
    if (n <= 1) return 0.0;
    if (align) return -1.0 + 2.0 * (double)i / (double)(n - 1);
    return (2.0 * (double)i + 1.0) / (double)n - 1.0;
}

static cort_status *affine_grid_run(cort_kernel_ctx *ctx) {
    const cort_value *theta = rd_input(ctx, 0), *size = rd_input(ctx, 1);
    if (!theta || theta->kind != CORT_VKIND_TENSOR || !cort_type_is_float(theta->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'theta' must be a float tensor");
    if (!size) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'size' is required");
    int64_t sz[5];
    size_t ns;
    if (size->rank != 1 || (size->count != 4 && size->count != 5))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'size' must hold 4 (N,C,H,W) or 5 (N,C,D,H,W) values, has %zu",
                               size->count);
    CORT_TRY(rd_read_ints(ctx->node, size, 1, "size", sz, 5, &ns));
    size_t sd = ns - 2;   /* spatial dims: 2 or 3 */
    if (theta->rank != 3 || theta->shape[1] != (int64_t)sd || theta->shape[2] != (int64_t)sd + 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'theta' must have shape [N,%zu,%zu] for a %zu-D size", sd, sd + 1, sd);
    if (sz[0] != theta->shape[0])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'size' N=%lld differs from theta's N=%lld", (long long)sz[0],
                               (long long)theta->shape[0]);
    int64_t dims[5] = { sz[0] };
    for (size_t d = 0; d < sd; d++) {
        if (sz[2 + d] < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'size' value %zu is negative (%lld)", 2 + d, (long long)sz[2 + d]);
        dims[1 + d] = sz[2 + d];
    }
    dims[1 + sd] = (int64_t)sd;
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, theta->type, dims, sd + 2, &y));
    int align = cort_attr_int(ctx->node, "align_corners", 0) != 0;
    int64_t D = sd == 3 ? sz[2] : 1, H = sz[ns - 2], W = sz[ns - 1];
    size_t o = 0, tn = sd * (sd + 1);
    for (int64_t n = 0; n < sz[0]; n++) {
        double th[12];
        for (size_t k = 0; k < tn; k++) th[k] = cort_load_f64(theta->data, theta->type, (size_t)n * tn + k);
        for (int64_t d = 0; d < D; d++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    /* homogeneous position (x, y[, z], 1): x runs along W, the last axis */
                    double p[4] = { ag_coord(w, W, align), ag_coord(h, H, align), sd == 3 ? ag_coord(d, D, align) : 1.0, 1.0 };
                    for (size_t r = 0; r < sd; r++) {
                        double v = 0;
                        for (size_t c = 0; c <= sd; c++) v += th[r * (sd + 1) + c] * p[c];
                        cort_store_f64(y->data, y->type, o++, v);
                    }
                }
    }
    return NULL;
}

static cort_status *affine_grid_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *theta = rd_tinput(ctx, 0), *size = rd_tinput(ctx, 1);
    if (!theta) return NULL;
    int64_t sz[5];
    size_t ns;
    if (size && rd_const_ints(size, sz, 5, &ns) && (ns == 4 || ns == 5)) {
        int64_t dims[5] = { sz[0] };
        for (size_t d = 0; d < ns - 2; d++) dims[1 + d] = sz[2 + d];
        dims[ns - 1] = (int64_t)ns - 2;
        cort_tinfo_tensor_shape(&ctx->outputs[0], theta->elem, dims, (int)ns);
    } else {
        cort_tinfo_tensor(&ctx->outputs[0], theta->elem);
    }
    return NULL;
}

const cort_op_def img_op_affine_grid = { .name = "AffineGrid", .domain = "", .min_opset = 20, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = affine_grid_infer, .run = affine_grid_run };
