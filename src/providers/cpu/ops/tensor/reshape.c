/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: the output shares the input's data (a view that
 * retains the input), so they cost no copy. */
#include <stdio.h>
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

static cort_status *make_view(cort_kernel_ctx *ctx, cort_value *in, const int64_t *dims, size_t rank) {
    cort_value *v = NULL;
    CORT_TRY(cort_kernel_view(ctx, in->type, dims, rank, in->data, in, &v));
    cort_kernel_set_output(ctx, 0, v);
    return NULL;
}

/* ---------------- Reshape ---------------- */

/* Output dims of Reshape. in_dims may hold -1 (unknown) when `infer` is set: the result then holds
 * -1 where it cannot be known. Returns 0, or -1 with a message in err. */
static int reshape_dims(const int64_t *in, size_t in_rank, const int64_t *shape, size_t n, int allowzero,
                        int infer, int64_t *out, char *err, size_t errlen) {
    int neg = -1, has_zero = 0, in_known = 1;
    int64_t in_count = 1;
    for (size_t i = 0; i < in_rank; i++) {
        if (in[i] < 0) in_known = 0;
        else if (__builtin_mul_overflow(in_count, in[i], &in_count)) in_known = 0;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = shape[i];
        if (s == 0 && !allowzero) {
            if (i >= in_rank) {
                snprintf(err, errlen, "shape[%zu] = 0 copies input dimension %zu, but the input has rank %zu", i, i, in_rank);
                return -1;
            }
            out[i] = in[i];
        } else if (s == -1) {
            if (neg >= 0) {
                snprintf(err, errlen, "shape has more than one -1 (at %d and %zu)", neg, i);
                return -1;
            }
            neg = (int)i;
            out[i] = -1;
        } else if (s < -1) {
            snprintf(err, errlen, "shape[%zu] = %lld is invalid", i, (long long)s);
            return -1;
        } else {
            if (s == 0) has_zero = 1;
            out[i] = s;
        }
    }
    if (allowzero && has_zero && neg >= 0) {
        snprintf(err, errlen, "shape has both 0 and -1 with allowzero=1");
        return -1;
    }
    int64_t prod = 1;
    int out_known = 1;
    for (size_t i = 0; i < n; i++) {
        if ((int)i == neg) continue;
        if (out[i] < 0) { out_known = 0; continue; }
        if (__builtin_mul_overflow(prod, out[i], &prod)) {
            snprintf(err, errlen, "shape product overflows");
            return -1;
        }
    }
    if (!in_known || !out_known) {
        if (!infer) { snprintf(err, errlen, "unknown dimension"); return -1; }
        return 0;   /* -1 entries stay unknown */
    }
    if (neg >= 0) {
        if (prod == 0 || in_count % prod != 0) {
            char b1[256];
            snprintf(err, errlen, "cannot infer the -1 dimension: input has %lld elements, other dims of shape %s multiply to %lld",
                     (long long)in_count, sh_dims_str(shape, n, b1, sizeof b1), (long long)prod);
            return -1;
        }
        out[neg] = in_count / prod;
    } else if (prod != in_count) {
        char b1[256], b2[256];
        snprintf(err, errlen, "input shape %s (%lld elements) cannot be reshaped to %s (%lld elements)",
                 sh_dims_str(in, in_rank, b1, sizeof b1), (long long)in_count, sh_dims_str(shape, n, b2, sizeof b2),
                 (long long)prod);
        return -1;
    }
    return 0;
}

static cort_status *reshape_init(const cort_node *node, void **state) {
    if (node->opset < 5) {
        const int64_t *s;
        size_t n = cort_attr_ints(node, "shape", &s);
        if (!s) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'shape' is required");
        if (n > CORT_MAX_RANK)
            return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'shape' has rank %zu, at most %d supported",
                                   n, CORT_MAX_RANK);
    }
    *state = NULL;
    return NULL;
}

static int reshape_shape_known(const cort_node *node, int opset, const cort_tinfo *shape_in, int64_t *shape, size_t *n) {
    if (opset < 5) {
        const int64_t *s;
        *n = cort_attr_ints(node, "shape", &s);
        if (!s || *n > CORT_MAX_RANK) return 0;
        memcpy(shape, s, *n * sizeof *s);
        return 1;
    }
    return sh_tinfo_ints(shape_in, shape, CORT_MAX_RANK, n);
}

static cort_status *reshape_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t shape[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n;
    int allowzero = ctx->opset >= 14 ? (int)cort_attr_int(ctx->node, "allowzero", 0) : 0;
    if (reshape_shape_known(ctx->node, ctx->opset, sh_tin(ctx, 1), shape, &n)) {
        char err[64];
        if (!in || in->rank < 0) {
            /* rank unknown: only explicit positive entries are known */
            for (size_t i = 0; i < n; i++) out[i] = shape[i] > 0 || (shape[i] == 0 && allowzero) ? shape[i] : -1;
            cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, (int)n);
            return NULL;
        }
        if (reshape_dims(in->dims, (size_t)in->rank, shape, n, allowzero, 1, out, err, sizeof err) == 0)
            cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, (int)n);
        return NULL;
    }
    if (ctx->opset >= 5) {
        const cort_tinfo *s = sh_tin(ctx, 1);
        if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= CORT_MAX_RANK) {
            for (int64_t i = 0; i < s->dims[0]; i++) out[i] = -1;
            cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, (int)s->dims[0]);
        }
    }
    return NULL;
}

static cort_status *reshape_run(cort_kernel_ctx *ctx) {
    cort_value *in, *sv;
    int64_t shape[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n;
    CORT_TRY(sh_input(ctx, 0, &in));
    if (ctx->opset < 5) {
        const int64_t *s;
        n = cort_attr_ints(ctx->node, "shape", &s);
        if (!s || n > CORT_MAX_RANK)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'shape' is missing or too long");
        memcpy(shape, s, n * sizeof *s);
    } else {
        CORT_TRY(sh_input(ctx, 1, &sv));
        if (sv->rank != 1)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s' has rank %zu, expected 1",
                                   sh_in_name(ctx->node, 1), sv->rank);
        CORT_TRY(sh_read_ints(ctx->node, 1, sv, shape, CORT_MAX_RANK, &n));
    }
    int allowzero = ctx->opset >= 14 ? (int)cort_attr_int(ctx->node, "allowzero", 0) : 0;
    char err[768];
    if (reshape_dims(in->shape, in->rank, shape, n, allowzero, 0, out, err, sizeof err))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s': %s", sh_in_name(ctx->node, 1), err);
    return make_view(ctx, in, out, n);
}

const cort_op_def sh_op_reshape = { .name = "Reshape", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = reshape_init, .infer = reshape_infer, .run = reshape_run };

/* ---------------- Flatten ---------------- */

static cort_status *flatten_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    int64_t out[2] = { -1, -1 };
    if (!in || in->rank < 0) { cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, 2); return NULL; }
    int64_t r = in->rank, axis = cort_attr_int(ctx->node, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) { cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, 2); return NULL; }
    out[0] = out[1] = 1;
    for (int64_t i = 0; i < r; i++) {
        int64_t *o = i < axis ? &out[0] : &out[1];
        if (in->dims[i] < 0 || *o < 0) *o = -1;
        else *o = cort_dim_mul(*o, in->dims[i]);
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, 2);
    return NULL;
}

static cort_status *flatten_run(cort_kernel_ctx *ctx) {
    cort_value *in;
    CORT_TRY(sh_input(ctx, 0, &in));
    int64_t r = (int64_t)in->rank, axis = cort_attr_int(ctx->node, "axis", 1);
    if (axis < -r || axis > r)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "attribute 'axis' = %lld is out of range [%lld, %lld] for input 0 '%s' of rank %lld",
                               (long long)axis, (long long)-r, (long long)r, sh_in_name(ctx->node, 0), (long long)r);
    if (axis < 0) axis += r;
    int64_t out[2] = { sh_prod(in->shape, 0, (size_t)axis), sh_prod(in->shape, (size_t)axis, (size_t)r) };
    return make_view(ctx, in, out, 2);
}

const cort_op_def sh_op_flatten = { .name = "Flatten", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = flatten_infer, .run = flatten_run };

/* ---------------- Squeeze / Unsqueeze ---------------- */

/* Axes from the attribute (opset < 13) or input 1; *have = 0 when absent. *known = 0 in inference
 * when the input is not a constant. */
static cort_status *axes_attr_check(const cort_node *node, int required) {
    if (node->opset >= 13) return NULL;
    const int64_t *a;
    size_t n = cort_attr_ints(node, "axes", &a);
    if (required && !a) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'axes' is required");
    if (n > CORT_MAX_RANK)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'axes' has %zu entries, at most %d allowed", n,
                               CORT_MAX_RANK);
    return NULL;
}

static cort_status *squeeze_init(const cort_node *node, void **state) { *state = NULL; return axes_attr_check(node, 0); }
static cort_status *unsqueeze_init(const cort_node *node, void **state) { *state = NULL; return axes_attr_check(node, 1); }

/* Reads the axes at run time; returns via n (0 and *have=0 when absent). */
static cort_status *axes_run(cort_kernel_ctx *ctx, int64_t *axes, size_t *n, int *have) {
    *have = 0; *n = 0;
    if (ctx->opset < 13) {
        const int64_t *a;
        size_t k = cort_attr_ints(ctx->node, "axes", &a);
        if (!a) return NULL;
        if (k > CORT_MAX_RANK)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'axes' has too many entries (%zu)", k);
        memcpy(axes, a, k * sizeof *a);
        *n = k; *have = 1;
        return NULL;
    }
    cort_value *t;
    CORT_TRY(sh_input_opt(ctx, 1, &t));
    if (!t) return NULL;
    CORT_TRY(sh_read_ints(ctx->node, 1, t, axes, CORT_MAX_RANK, n));
    *have = 1;
    return NULL;
}

static int axes_infer(const cort_infer_ctx *ctx, int64_t *axes, size_t *n, int *have) {
    *have = 0; *n = 0;
    if (ctx->opset < 13) {
        const int64_t *a;
        size_t k = cort_attr_ints(ctx->node, "axes", &a);
        if (!a) return 1;
        if (k > CORT_MAX_RANK) return 0;
        memcpy(axes, a, k * sizeof *a);
        *n = k; *have = 1;
        return 1;
    }
    const cort_tinfo *t = sh_tin(ctx, 1);
    if (!t) return 1;
    if (!sh_tinfo_ints(t, axes, CORT_MAX_RANK, n)) return 0;
    *have = 1;
    return 1;
}

/* Marks normalized axes in `mark` (rank entries); -1 on a bad or repeated axis (index in *bad). */
static int mark_axes(const int64_t *axes, size_t n, int64_t rank, uint8_t *mark, size_t *bad) {
    memset(mark, 0, (size_t)rank);
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank || mark[a]) { *bad = i; return -1; }
        mark[a] = 1;
    }
    return 0;
}

static cort_status *squeeze_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t axes[CORT_MAX_RANK], out[CORT_MAX_RANK];
    uint8_t mark[CORT_MAX_RANK];
    size_t n, bad;
    int have;
    if (!in || in->rank < 0 || !axes_infer(ctx, axes, &n, &have)) return NULL;
    int r = 0;
    if (have) {
        if (mark_axes(axes, n, in->rank, mark, &bad)) return NULL;
        for (int i = 0; i < in->rank; i++) if (!mark[i]) out[r++] = in->dims[i];
    } else {
        for (int i = 0; i < in->rank; i++) {
            if (in->dims[i] < 0) return NULL;   /* cannot tell whether it is squeezed */
            if (in->dims[i] != 1) out[r++] = in->dims[i];
        }
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, r);
    return NULL;
}

static cort_status *squeeze_run(cort_kernel_ctx *ctx) {
    cort_value *in;
    int64_t axes[CORT_MAX_RANK], out[CORT_MAX_RANK];
    uint8_t mark[CORT_MAX_RANK];
    size_t n, bad, r = 0;
    int have;
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(axes_run(ctx, axes, &n, &have));
    if (have) {
        if (mark_axes(axes, n, (int64_t)in->rank, mark, &bad))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "axes[%zu] = %lld is out of range or repeated for input 0 '%s' of rank %zu", bad,
                                   (long long)axes[bad], sh_in_name(ctx->node, 0), in->rank);
        for (size_t i = 0; i < in->rank; i++) {
            if (!mark[i]) { out[r++] = in->shape[i]; continue; }
            if (in->shape[i] != 1) {
                char b[256];
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                       "cannot squeeze axis %zu of input 0 '%s' with shape %s: dimension is %lld, not 1",
                                       i, sh_in_name(ctx->node, 0), sh_dims_str(in->shape, in->rank, b, sizeof b),
                                       (long long)in->shape[i]);
            }
        }
    } else {
        for (size_t i = 0; i < in->rank; i++) if (in->shape[i] != 1) out[r++] = in->shape[i];
    }
    return make_view(ctx, in, out, r);
}

const cort_op_def sh_op_squeeze = { .name = "Squeeze", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = squeeze_init, .infer = squeeze_infer, .run = squeeze_run };

static int unsqueeze_dims(const int64_t *in, size_t rank, const int64_t *axes, size_t n, int64_t *out, size_t *bad) {
    size_t out_rank = rank + n;
    uint8_t mark[CORT_MAX_RANK];
    if (out_rank > CORT_MAX_RANK) { *bad = n; return -1; }
    if (mark_axes(axes, n, (int64_t)out_rank, mark, bad)) return -1;
    for (size_t i = 0, j = 0; i < out_rank; i++) out[i] = mark[i] ? 1 : in[j++];
    return 0;
}

static cort_status *unsqueeze_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t axes[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n, bad;
    int have;
    if (!in || in->rank < 0 || !axes_infer(ctx, axes, &n, &have) || !have) return NULL;
    if (unsqueeze_dims(in->dims, (size_t)in->rank, axes, n, out, &bad) == 0)
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank + (int)n);
    return NULL;
}

static cort_status *unsqueeze_run(cort_kernel_ctx *ctx) {
    cort_value *in;
    int64_t axes[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n, bad;
    int have;
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(axes_run(ctx, axes, &n, &have));
    if (!have)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "axes are required (input 1 is missing)");
    if (unsqueeze_dims(in->shape, in->rank, axes, n, out, &bad)) {
        if (bad >= n)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output rank %zu exceeds the maximum %d",
                                   in->rank + n, CORT_MAX_RANK);
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "axes[%zu] = %lld is out of range or repeated for output rank %zu", bad,
                               (long long)axes[bad], in->rank + n);
    }
    return make_view(ctx, in, out, in->rank + n);
}

const cort_op_def sh_op_unsqueeze = { .name = "Unsqueeze", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = unsqueeze_init, .infer = unsqueeze_infer, .run = unsqueeze_run };

/* ---------------- Identity (any value kind: tensor, sequence, optional) ---------------- */

static cort_status *identity_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    if (in) {
        int present = ctx->outputs[0].present;
        ctx->outputs[0] = *in;
        ctx->outputs[0].present = present;
    }
    return NULL;
}

static cort_status *identity_run(cort_kernel_ctx *ctx) {
    cort_value *in = ctx->n_inputs ? ctx->inputs[0] : NULL;
    if (!in)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "required input 0 '%s' is missing",
                               sh_in_name(ctx->node, 0));
    cort_kernel_set_output(ctx, 0, cort_value_retain(in));
    return NULL;
}

const cort_op_def sh_op_identity = { .name = "Identity", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .infer = identity_infer, .run = identity_run };
