/* Transpose, DepthToSpace, SpaceToDepth: permutations of the input expressed as strided copy plans
 * (see kernels/copy_nd.c). A transpose that keeps the order of all non-1 dimensions is a view. */
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

/* Output of a permuted copy of `in`: plan dims/strides are given in output order. */
static cort_status *run_plan(cort_kernel_ctx *ctx, cort_value *in, const int64_t *out_dims, size_t out_rank,
                             const sh_nd *plan) {
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, out_dims, out_rank, &out));
    sh_nd_copy(ctx->pool, sh_esize(in->type), out->data, in->data, plan);
    return sh_strings_own(out);
}

/* ---------------- Transpose ---------------- */

static cort_status *transpose_init(const cort_node *node, void **state) {
    const int64_t *p;
    size_t n = cort_attr_ints(node, "perm", &p);
    uint8_t seen[CORT_MAX_RANK] = { 0 };
    *state = NULL;
    if (!p) return NULL;
    if (n > CORT_MAX_RANK)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'perm' has %zu entries, at most %d supported",
                               n, CORT_MAX_RANK);
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= (int64_t)n || seen[p[i]])
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'perm' is not a permutation: perm[%zu] = %lld",
                                   i, (long long)p[i]);
        seen[p[i]] = 1;
    }
    return NULL;
}

/* The permutation for rank r: the attribute or the reversed axes. Returns 0 when it does not fit r. */
static int get_perm(const cort_node *node, size_t r, int64_t *perm) {
    const int64_t *p;
    size_t n = cort_attr_ints(node, "perm", &p);
    if (!p) {
        for (size_t i = 0; i < r; i++) perm[i] = (int64_t)(r - 1 - i);
        return 1;
    }
    if (n != r) return 0;
    memcpy(perm, p, n * sizeof *p);
    return 1;
}

static cort_status *transpose_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t perm[CORT_MAX_RANK], out[CORT_MAX_RANK];
    if (!in || in->rank < 0 || !get_perm(ctx->node, (size_t)in->rank, perm)) return NULL;
    for (int i = 0; i < in->rank; i++) out[i] = in->dims[perm[i]];
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank);
    return NULL;
}

static cort_status *transpose_run(cort_kernel_ctx *ctx) {
    cort_value *in;
    int64_t perm[CORT_MAX_RANK], out_dims[CORT_MAX_RANK], in_strides[CORT_MAX_RANK];
    CORT_TRY(sh_input(ctx, 0, &in));
    size_t r = in->rank;
    if (!get_perm(ctx->node, r, perm)) {
        const int64_t *p;
        size_t n = cort_attr_ints(ctx->node, "perm", &p);
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "attribute 'perm' has %zu entries but input 0 '%s' has rank %zu", n,
                               sh_in_name(ctx->node, 0), r);
    }
    sh_strides(in->shape, r, in_strides);
    sh_nd plan;
    plan.rank = (int)r;
    int64_t prev = -1;
    int keeps_order = 1;
    for (size_t i = 0; i < r; i++) {
        out_dims[i] = in->shape[perm[i]];
        plan.dims[i] = out_dims[i];
        plan.ss[i] = in_strides[perm[i]];
        if (out_dims[i] != 1) {
            if (perm[i] < prev) keeps_order = 0;
            prev = perm[i];
        }
    }
    if (keeps_order) {   /* same memory order: share the data */
        cort_value *v;
        CORT_TRY(cort_kernel_view(ctx, in->type, out_dims, r, in->data, in, &v));
        cort_kernel_set_output(ctx, 0, v);
        return NULL;
    }
    sh_strides(out_dims, r, plan.ds);
    return run_plan(ctx, in, out_dims, r, &plan);
}

const cort_op_def sh_op_transpose = { .name = "Transpose", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = transpose_init, .infer = transpose_infer, .run = transpose_run };

/* ---------------- DepthToSpace / SpaceToDepth ---------------- */

static cort_status *block_init(const cort_node *node, void **state) {
    *state = NULL;
    int64_t b = cort_attr_int(node, "blocksize", 0);
    if (b <= 0 || b > (1 << 20))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'blocksize' = %lld must be positive", (long long)b);
    if (!strcmp(node->op_type, "DepthToSpace") && node->opset >= 11) {
        const char *m = cort_attr_str(node, "mode", "DCR");
        if (strcmp(m, "DCR") && strcmp(m, "CRD"))
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'mode' = '%s' must be DCR or CRD", m);
    }
    return NULL;
}

static int is_crd(const cort_node *node) {
    return node->opset >= 11 && !strcmp(cort_attr_str(node, "mode", "DCR"), "CRD");
}

static cort_status *d2s_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    int64_t b = cort_attr_int(ctx->node, "blocksize", 1), out[4] = { -1, -1, -1, -1 };
    int d2s = !strcmp(ctx->node->op_type, "DepthToSpace");
    if (in && in->rank == 4 && b > 0) {
        out[0] = in->dims[0];
        if (d2s) {
            int64_t bb = cort_dim_mul(b, b);
            out[1] = in->dims[1] >= 0 ? in->dims[1] / bb : -1;
            out[2] = cort_dim_mul(in->dims[2], b);
            out[3] = cort_dim_mul(in->dims[3], b);
        } else {
            out[1] = cort_dim_mul(cort_dim_mul(in->dims[1], b), b);
            out[2] = in->dims[2] >= 0 ? in->dims[2] / b : -1;
            out[3] = in->dims[3] >= 0 ? in->dims[3] / b : -1;
        }
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, 4);
    return NULL;
}

static cort_status *d2s_check(cort_kernel_ctx *ctx, cort_value **in, int64_t *b) {
    char buf[256];
    CORT_TRY(sh_input(ctx, 0, in));
    *b = cort_attr_int(ctx->node, "blocksize", 0);
    if ((*in)->rank != 4)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' has shape %s, expected rank 4",
                               sh_in_name(ctx->node, 0), sh_dims_str((*in)->shape, (*in)->rank, buf, sizeof buf));
    if (*b <= 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'blocksize' must be positive");
    return NULL;
}

static cort_status *d2s_run(cort_kernel_ctx *ctx) {
    cort_value *in;
    int64_t b;
    char buf[256];
    CORT_TRY(d2s_check(ctx, &in, &b));
    const int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2], W = in->shape[3];
    if (C % (b * b))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 '%s' has shape %s: channels are not divisible by blocksize^2 = %lld",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, 4, buf, sizeof buf), (long long)(b * b));
    const int64_t Cp = C / (b * b);
    int64_t out_dims[4] = { N, Cp, H * b, W * b };
    /* output viewed as [N, C', H, b1, W, b2]; source index depends on the mode */
    sh_nd plan = { .rank = 6, .dims = { N, Cp, H, b, W, b } };
    int64_t s_c, s_b1, s_b2;
    if (is_crd(ctx->node)) { s_c = b * b * H * W; s_b1 = b * H * W; s_b2 = H * W; }
    else { s_b1 = b * Cp * H * W; s_b2 = Cp * H * W; s_c = H * W; }
    int64_t ss[6] = { C * H * W, s_c, W, s_b1, 1, s_b2 };
    memcpy(plan.ss, ss, sizeof ss);
    sh_strides(plan.dims, 6, plan.ds);
    return run_plan(ctx, in, out_dims, 4, &plan);
}

static cort_status *s2d_run(cort_kernel_ctx *ctx) {
    cort_value *in;
    int64_t b;
    char buf[256];
    CORT_TRY(d2s_check(ctx, &in, &b));
    const int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2], W = in->shape[3];
    if (H % b || W % b)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 '%s' has shape %s: height and width must be divisible by blocksize %lld",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, 4, buf, sizeof buf), (long long)b);
    const int64_t Hp = H / b, Wp = W / b;
    int64_t out_dims[4] = { N, C * b * b, Hp, Wp };
    /* output viewed as [N, b1, b2, C, H', W'] reading input [N, C, H', b1, W', b2] */
    sh_nd plan = { .rank = 6, .dims = { N, b, b, C, Hp, Wp } };
    int64_t ss[6] = { C * H * W, W, 1, H * W, b * W, b };
    memcpy(plan.ss, ss, sizeof ss);
    sh_strides(plan.dims, 6, plan.ds);
    return run_plan(ctx, in, out_dims, 4, &plan);
}

const cort_op_def sh_op_depth_to_space = { .name = "DepthToSpace", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = block_init, .infer = d2s_infer, .run = d2s_run };
const cort_op_def sh_op_space_to_depth = { .name = "SpaceToDepth", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = block_init, .infer = d2s_infer, .run = s2d_run };
