/* Slice, Pad, CenterCropPad: rectangular windows of the input, expressed as strided copy plans.
 * A slice that is one contiguous block of the input is returned as a view. */
#include <stdio.h>
#include <string.h>
#include "tensor_common.h"
#include "tensor_ops.h"

/* ---------------- Slice ---------------- */

/* Per-axis start/step/count for Slice. dims may hold -1 (inference): those axes get count -1.
 * axes/steps may be NULL. Returns 0, or -1 with a message. */
static int slice_compute(const int64_t *dims, size_t r, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                         const int64_t *steps, size_t n, int64_t *start, int64_t *step, int64_t *count, char *err,
                         size_t errlen) {
    uint8_t seen[CORT_MAX_RANK] = { 0 };
    for (size_t d = 0; d < r; d++) { start[d] = 0; step[d] = 1; count[d] = dims[d]; }
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes ? axes[i] : (int64_t)i;
        if (a < 0) a += (int64_t)r;
        if (a < 0 || a >= (int64_t)r || seen[a]) {
            snprintf(err, errlen, "axes[%zu] = %lld is out of range or repeated for rank %zu", i,
                     (long long)(axes ? axes[i] : (int64_t)i), r);
            return -1;
        }
        seen[a] = 1;
        int64_t st = steps ? steps[i] : 1, d = dims[a], s = starts[i], e = ends[i];
        if (st == 0) { snprintf(err, errlen, "steps[%zu] is 0", i); return -1; }
        if (st < -INT64_MAX) st = -INT64_MAX;
        step[a] = st;
        if (d < 0) { count[a] = -1; continue; }
        if (s < 0) s += d;
        if (e < 0) e += d;
        if (st > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            count[a] = e > s ? (e - s - 1) / st + 1 : 0;
        } else {
            s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            count[a] = s > e ? (s - e - 1) / (-st) + 1 : 0;
        }
        start[a] = count[a] > 0 ? s : 0;
    }
    return 0;
}

typedef struct slice_attrs { size_t n; const int64_t *starts, *ends, *axes; } slice_attrs;

static cort_status *slice_init(const cort_node *node, void **state) {
    *state = NULL;
    if (node->opset >= 10) return NULL;
    const int64_t *s, *e, *a;
    size_t ns = cort_attr_ints(node, "starts", &s), ne = cort_attr_ints(node, "ends", &e);
    size_t na = cort_attr_ints(node, "axes", &a);
    if (!s || !e) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attributes 'starts' and 'ends' are required");
    if (ns != ne || (a && na != ns))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "'starts' (%zu), 'ends' (%zu) and 'axes' (%zu) differ in length",
                               ns, ne, na);
    if (ns > CORT_MAX_RANK) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "'starts' has too many entries (%zu)", ns);
    return NULL;
}

static cort_status *slice_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    if (!in || in->rank < 0) return NULL;
    int64_t s[CORT_MAX_RANK], e[CORT_MAX_RANK], a[CORT_MAX_RANK], st[CORT_MAX_RANK], out[CORT_MAX_RANK];
    int64_t start[CORT_MAX_RANK], step[CORT_MAX_RANK];
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    int have_axes = 0, have_steps = 0, known;
    if (ctx->opset < 10) {
        const int64_t *ps, *pe, *pa;
        ns = cort_attr_ints(ctx->node, "starts", &ps);
        ne = cort_attr_ints(ctx->node, "ends", &pe);
        na = cort_attr_ints(ctx->node, "axes", &pa);
        known = ps && pe && ns == ne && ns <= CORT_MAX_RANK && (!pa || na == ns);
        if (known) {
            memcpy(s, ps, ns * sizeof *s);
            memcpy(e, pe, ne * sizeof *e);
            if (pa) { memcpy(a, pa, na * sizeof *a); have_axes = 1; }
        }
    } else {
        known = sh_tinfo_ints(sh_tin(ctx, 1), s, CORT_MAX_RANK, &ns) && sh_tinfo_ints(sh_tin(ctx, 2), e, CORT_MAX_RANK, &ne);
        if (sh_tin(ctx, 3)) known = known && (have_axes = sh_tinfo_ints(sh_tin(ctx, 3), a, CORT_MAX_RANK, &na));
        if (sh_tin(ctx, 4)) known = known && (have_steps = sh_tinfo_ints(sh_tin(ctx, 4), st, CORT_MAX_RANK, &nst));
        known = known && ns == ne && (!have_axes || na == ns) && (!have_steps || nst == ns);
    }
    char err[128];
    if (known && slice_compute(in->dims, (size_t)in->rank, s, e, have_axes ? a : NULL, have_steps ? st : NULL, ns, start,
                               step, out, err, sizeof err) == 0) {
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank);
        return NULL;
    }
    /* axes known but not the bounds: the other axes keep their size */
    for (int d = 0; d < in->rank; d++) out[d] = -1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank);
    return NULL;
}

static cort_status *read_list(cort_kernel_ctx *ctx, size_t i, int64_t *out, size_t *n, int *have) {
    cort_value *v;
    *have = 0;
    CORT_TRY(sh_input_opt(ctx, i, &v));
    if (!v) return NULL;
    CORT_TRY(sh_read_ints(ctx->node, i, v, out, CORT_MAX_RANK, n));
    *have = 1;
    return NULL;
}

static cort_status *slice_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out;
    int64_t s[CORT_MAX_RANK], e[CORT_MAX_RANK], a[CORT_MAX_RANK], st[CORT_MAX_RANK];
    int64_t start[CORT_MAX_RANK], step[CORT_MAX_RANK], count[CORT_MAX_RANK], strides[CORT_MAX_RANK];
    size_t ns = 0, ne = 0, na = 0, nst = 0;
    int have_s, have_e, have_axes = 0, have_steps = 0;
    CORT_TRY(sh_input(ctx, 0, &in));
    if (ctx->opset < 10) {
        const int64_t *ps, *pe, *pa;
        ns = cort_attr_ints(ctx->node, "starts", &ps);
        ne = cort_attr_ints(ctx->node, "ends", &pe);
        na = cort_attr_ints(ctx->node, "axes", &pa);
        if (!ps || !pe || ns > CORT_MAX_RANK || ne != ns || (pa && na != ns))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "invalid 'starts'/'ends'/'axes' attributes");
        memcpy(s, ps, ns * sizeof *s);
        memcpy(e, pe, ne * sizeof *e);
        if (pa) { memcpy(a, pa, na * sizeof *a); have_axes = 1; }
    } else {
        CORT_TRY(read_list(ctx, 1, s, &ns, &have_s));
        CORT_TRY(read_list(ctx, 2, e, &ne, &have_e));
        if (!have_s || !have_e)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 1 'starts' and 2 'ends' are required");
        CORT_TRY(read_list(ctx, 3, a, &na, &have_axes));
        CORT_TRY(read_list(ctx, 4, st, &nst, &have_steps));
        if (ne != ns || (have_axes && na != ns) || (have_steps && nst != ns))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "starts (%zu), ends (%zu), axes (%zu) and steps (%zu) must have the same length", ns, ne,
                                   have_axes ? na : ns, have_steps ? nst : ns);
    }
    const size_t r = in->rank;
    char err[160];
    if (ns > r && !have_axes)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "starts has %zu entries but input 0 '%s' has rank %zu",
                               ns, sh_in_name(ctx->node, 0), r);
    if (slice_compute(in->shape, r, s, e, have_axes ? a : NULL, have_steps ? st : NULL, ns, start, step, count, err,
                      sizeof err))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s': %s", sh_in_name(ctx->node, 0), err);
    sh_strides(in->shape, r, strides);
    const size_t es = sh_esize(in->type);
    int64_t offset = 0;
    size_t total = 1;
    for (size_t d = 0; d < r; d++) { offset += start[d] * strides[d]; total *= (size_t)count[d]; }
    /* contiguous window: all dims after the first non-1 one are full with step 1 */
    int contiguous = 1;
    size_t first = 0;
    while (first < r && count[first] == 1) first++;
    for (size_t d = first; d < r && contiguous; d++)
        contiguous = (step[d] == 1 || count[d] <= 1) && (d == first || count[d] == in->shape[d]);
    if (contiguous && total > 0) {
        cort_value *v;
        CORT_TRY(cort_kernel_view(ctx, in->type, count, r, (char *)in->data + (size_t)offset * es, in, &v));
        cort_kernel_set_output(ctx, 0, v);
        return NULL;
    }
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, count, r, &out));
    if (total == 0) return NULL;
    sh_nd plan = { .rank = (int)r };
    for (size_t d = 0; d < r; d++) { plan.dims[d] = count[d]; plan.ss[d] = strides[d] * step[d]; }
    sh_strides(count, r, plan.ds);
    sh_nd_copy(ctx->pool, es, out->data, (const char *)in->data + offset * (int64_t)es, &plan);
    return sh_strings_own(out);
}

const cort_op_def sh_op_slice = { .name = "Slice", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = slice_init, .infer = slice_infer, .run = slice_run };

/* ---------------- Pad ---------------- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static int pad_mode(const cort_node *node) {
    const char *m = cort_attr_str(node, "mode", "constant");
    if (!strcmp(m, "constant")) return PAD_CONSTANT;
    if (!strcmp(m, "reflect")) return PAD_REFLECT;
    if (!strcmp(m, "edge")) return PAD_EDGE;
    if (!strcmp(m, "wrap")) return PAD_WRAP;
    return -1;
}

static const char *pads_attr_name(const cort_node *node) { return node->opset < 2 ? "paddings" : "pads"; }

static cort_status *pad_init(const cort_node *node, void **state) {
    *state = NULL;
    if (pad_mode(node) < 0)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'mode' = '%s' is not constant, reflect, edge or wrap",
                               cort_attr_str(node, "mode", ""));
    if (node->opset < 11) {
        const int64_t *p;
        size_t n = cort_attr_ints(node, pads_attr_name(node), &p);
        if (!p) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s' is required", pads_attr_name(node));
        if (n % 2 || n > 2 * CORT_MAX_RANK)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s' has %zu entries", pads_attr_name(node), n);
    }
    return NULL;
}

/* Expands pads (n entries, for `axes` or all axes) into begin/end per axis. */
static int pad_expand(const int64_t *pads, size_t n, const int64_t *axes, size_t n_axes, int have_axes, size_t r,
                      int64_t *pb, int64_t *pe, char *err, size_t errlen) {
    for (size_t d = 0; d < r; d++) pb[d] = pe[d] = 0;
    size_t k = have_axes ? n_axes : r;
    if (n != 2 * k) {
        snprintf(err, errlen, "pads has %zu entries, expected %zu", n, 2 * k);
        return -1;
    }
    for (size_t i = 0; i < k; i++) {
        int64_t a = have_axes ? axes[i] : (int64_t)i;
        if (a < 0) a += (int64_t)r;
        if (a < 0 || a >= (int64_t)r) {
            snprintf(err, errlen, "axes[%zu] = %lld is out of range for rank %zu", i, (long long)axes[i], r);
            return -1;
        }
        pb[a] = pads[i];
        pe[a] = pads[i + k];
    }
    return 0;
}

static cort_status *pad_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    if (!in || in->rank < 0) return NULL;
    int64_t pads[2 * CORT_MAX_RANK], axes[CORT_MAX_RANK], pb[CORT_MAX_RANK], pe[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n = 0, na = 0;
    int known, have_axes = 0;
    if (ctx->opset < 11) {
        const int64_t *p;
        n = cort_attr_ints(ctx->node, pads_attr_name(ctx->node), &p);
        known = p && n <= 2 * CORT_MAX_RANK;
        if (known) memcpy(pads, p, n * sizeof *p);
    } else {
        known = sh_tinfo_ints(sh_tin(ctx, 1), pads, 2 * CORT_MAX_RANK, &n);
        if (ctx->opset >= 18 && sh_tin(ctx, 3)) known = known && (have_axes = sh_tinfo_ints(sh_tin(ctx, 3), axes, CORT_MAX_RANK, &na));
    }
    char err[128];
    if (known && pad_expand(pads, n, axes, na, have_axes, (size_t)in->rank, pb, pe, err, sizeof err) == 0) {
        for (int d = 0; d < in->rank; d++)
            if (in->dims[d] < 0 || __builtin_add_overflow(in->dims[d], pb[d], &out[d]) ||
                __builtin_add_overflow(out[d], pe[d], &out[d]) || out[d] < 0)
                out[d] = -1;
    } else {
        for (int d = 0; d < in->rank; d++) out[d] = -1;
    }
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank);
    return NULL;
}

/* Index of the source element for output index o along an axis of length d padded by pb in front. */
static int64_t pad_map(int mode, int64_t o, int64_t pb, int64_t d) {
    int64_t i = o - pb;
    if (i >= 0 && i < d) return i;
    switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : d - 1;
    case PAD_WRAP: i %= d; return i < 0 ? i + d : i;
    default: {   /* reflect without repeating the edge */
        if (d == 1) return 0;
        int64_t p = 2 * (d - 1);
        i %= p;
        if (i < 0) i += p;
        return i >= d ? p - i : i;
    }
    }
}

/* Non-constant modes: per-axis index maps, then a row loop over the output. */
static cort_status *pad_gather(cort_kernel_ctx *ctx, const cort_value *in, cort_value *out, int mode, const int64_t *pb) {
    const size_t r = in->rank, es = sh_esize(in->type);
    if (r == 0) { memcpy(out->data, in->data, es); return NULL; }
    size_t total_map = 0;
    for (size_t d = 0; d < r; d++) total_map += (size_t)out->shape[d];
    int64_t *maps = cort_kernel_scratch(ctx, (total_map + 1) * sizeof *maps), *map[CORT_MAX_RANK], strides[CORT_MAX_RANK];
    if (!maps) return cort_error_oom();
    sh_strides(in->shape, r, strides);
    size_t off = 0;
    for (size_t d = 0; d < r; d++) {
        map[d] = maps + off;
        for (int64_t o = 0; o < out->shape[d]; o++) map[d][o] = pad_map(mode, o, pb[d], in->shape[d]) * strides[d];
        off += (size_t)out->shape[d];
    }
    const int64_t inner = out->shape[r - 1];
    size_t rows = out->count / (size_t)(inner ? inner : 1);
    int64_t idx[CORT_MAX_RANK] = { 0 };
    const char *src = in->data;
    char *dst = out->data;
    for (size_t row = 0; row < rows && inner > 0; row++) {
        int64_t so = 0;
        for (size_t d = 0; d + 1 < r; d++) so += map[d][idx[d]];
        const int64_t *m = map[r - 1];
        for (int64_t o = 0; o < inner; o++) memcpy(dst + o * (int64_t)es, src + (so + m[o]) * (int64_t)es, es);
        dst += inner * (int64_t)es;
        for (size_t d = r - 1; d-- > 0;) {
            if (++idx[d] < out->shape[d]) break;
            idx[d] = 0;
        }
    }
    cort_kernel_scratch_free(ctx, maps);
    return NULL;
}

static cort_status *pad_run(cort_kernel_ctx *ctx) {
    cort_value *in, *out, *cv = NULL, *pv, *av = NULL;
    int64_t pads[2 * CORT_MAX_RANK], axes[CORT_MAX_RANK], pb[CORT_MAX_RANK], pe[CORT_MAX_RANK], dims[CORT_MAX_RANK];
    size_t n = 0, na = 0;
    char err[160], b1[256];
    CORT_TRY(sh_input(ctx, 0, &in));
    const size_t r = in->rank, es = sh_esize(in->type);
    const int mode = pad_mode(ctx->node);
    if (mode < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "invalid attribute 'mode'");
    if (ctx->opset < 11) {
        const int64_t *p;
        n = cort_attr_ints(ctx->node, pads_attr_name(ctx->node), &p);
        if (!p || n > 2 * CORT_MAX_RANK) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "invalid pads attribute");
        memcpy(pads, p, n * sizeof *p);
    } else {
        CORT_TRY(sh_input(ctx, 1, &pv));
        CORT_TRY(sh_read_ints(ctx->node, 1, pv, pads, 2 * CORT_MAX_RANK, &n));
        CORT_TRY(sh_input_opt(ctx, 2, &cv));
        if (ctx->opset >= 18) {
            CORT_TRY(sh_input_opt(ctx, 3, &av));
            if (av) CORT_TRY(sh_read_ints(ctx->node, 3, av, axes, CORT_MAX_RANK, &na));
        }
    }
    if (pad_expand(pads, n, axes, na, av != NULL, r, pb, pe, err, sizeof err))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 '%s' of shape %s: %s",
                               sh_in_name(ctx->node, 0), sh_dims_str(in->shape, r, b1, sizeof b1), err);
    for (size_t d = 0; d < r; d++) {
        if (__builtin_add_overflow(in->shape[d], pb[d], &dims[d]) || __builtin_add_overflow(dims[d], pe[d], &dims[d]))
            dims[d] = -1;
        if (dims[d] < 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "pads %lld/%lld on axis %zu of input 0 '%s' with shape %s give a negative size",
                                   (long long)pb[d], (long long)pe[d], d, sh_in_name(ctx->node, 0),
                                   sh_dims_str(in->shape, r, b1, sizeof b1));
        if (mode != PAD_CONSTANT && in->shape[d] == 0 && dims[d] > 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "cannot pad the empty axis %zu of input 0 '%s' in mode '%s'", d, sh_in_name(ctx->node, 0),
                                   cort_attr_str(ctx->node, "mode", ""));
    }
    /* constant value, checked before allocating */
    unsigned char value[16] = { 0 };
    const char *empty = cort_empty_string;
    if (in->type == CORT_TYPE_STRING) memcpy(value, &empty, sizeof empty);
    if (mode == PAD_CONSTANT) {
        if (ctx->opset < 11) {
            float v = cort_attr_float(ctx->node, "value", 0.0f);
            if (cort_type_is_float(in->type) || cort_type_is_int(in->type)) cort_store_f64(value, in->type, 0, v);
        } else if (cv && cv->count > 0) {
            if (cv->type != in->type)
                return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 '%s' has type %s, expected %s",
                                       sh_in_name(ctx->node, 2), cort_type_name(cv->type), cort_type_name(in->type));
            memcpy(value, cv->data, es);
        }
    }
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, dims, r, &out));
    if (out->count == 0) return NULL;
    if (mode != PAD_CONSTANT) {
        CORT_TRY(pad_gather(ctx, in, out, mode, pb));
        return sh_strings_own(out);
    }
    sh_fill(out->data, out->count, es, value);
    sh_nd plan = { .rank = (int)r };
    int64_t in_strides[CORT_MAX_RANK], src_off = 0, dst_off = 0;
    sh_strides(in->shape, r, in_strides);
    sh_strides(dims, r, plan.ds);
    for (size_t d = 0; d < r; d++) {
        int64_t s0 = pb[d] < 0 ? -pb[d] : 0, d0 = pb[d] > 0 ? pb[d] : 0;
        int64_t len = in->shape[d] - s0 - (pe[d] < 0 ? -pe[d] : 0);
        plan.dims[d] = len > 0 ? len : 0;
        plan.ss[d] = in_strides[d];
        src_off += s0 * in_strides[d];
        dst_off += d0 * plan.ds[d];
    }
    sh_nd_copy(ctx->pool, es, (char *)out->data + dst_off * (int64_t)es, (const char *)in->data + src_off * (int64_t)es,
               &plan);
    return sh_strings_own(out);
}

const cort_op_def sh_op_pad = { .name = "Pad", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .init = pad_init, .infer = pad_infer, .run = pad_run };

/* ---------------- CenterCropPad ---------------- */

/* Target size per axis from the shape list and the optional axes attribute. */
static int ccp_targets(const cort_node *node, const int64_t *dims, size_t r, const int64_t *shape, size_t n,
                       int64_t *target, char *err, size_t errlen) {
    const int64_t *axes;
    size_t na = cort_attr_ints(node, "axes", &axes);
    memcpy(target, dims, r * sizeof *dims);
    size_t k = axes ? na : r;
    if (n != k) { snprintf(err, errlen, "shape has %zu entries, expected %zu", n, k); return -1; }
    for (size_t i = 0; i < k; i++) {
        int64_t a = axes ? axes[i] : (int64_t)i;
        if (a < 0) a += (int64_t)r;
        if (a < 0 || a >= (int64_t)r) { snprintf(err, errlen, "axes[%zu] is out of range for rank %zu", i, r); return -1; }
        if (shape[i] < 0) { snprintf(err, errlen, "shape[%zu] = %lld is negative", i, (long long)shape[i]); return -1; }
        target[a] = shape[i];
    }
    return 0;
}

static cort_status *ccp_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *in = sh_tin(ctx, 0);
    cort_type t = in ? in->elem : CORT_TYPE_UNDEFINED;
    cort_tinfo_tensor(&ctx->outputs[0], t);
    int64_t shape[CORT_MAX_RANK], out[CORT_MAX_RANK];
    size_t n;
    char err[128];
    if (!in || in->rank < 0) return NULL;
    if (!sh_tinfo_ints(sh_tin(ctx, 1), shape, CORT_MAX_RANK, &n) ||
        ccp_targets(ctx->node, in->dims, (size_t)in->rank, shape, n, out, err, sizeof err))
        for (int d = 0; d < in->rank; d++) out[d] = -1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, out, in->rank);
    return NULL;
}

static cort_status *ccp_run(cort_kernel_ctx *ctx) {
    cort_value *in, *sv, *out;
    int64_t shape[CORT_MAX_RANK], dims[CORT_MAX_RANK], in_strides[CORT_MAX_RANK];
    size_t n;
    char err[128];
    CORT_TRY(sh_input(ctx, 0, &in));
    CORT_TRY(sh_input(ctx, 1, &sv));
    CORT_TRY(sh_read_ints(ctx->node, 1, sv, shape, CORT_MAX_RANK, &n));
    const size_t r = in->rank, es = sh_esize(in->type);
    if (ccp_targets(ctx->node, in->shape, r, shape, n, dims, err, sizeof err))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 '%s': %s", sh_in_name(ctx->node, 1), err);
    CORT_TRY(cort_kernel_output(ctx, 0, in->type, dims, r, &out));
    if (out->count == 0) return NULL;
    sh_zero(out);
    sh_nd plan = { .rank = (int)r };
    int64_t src_off = 0, dst_off = 0;
    sh_strides(in->shape, r, in_strides);
    sh_strides(dims, r, plan.ds);
    for (size_t d = 0; d < r; d++) {
        int64_t s0 = 0, d0 = 0, len;
        if (dims[d] <= in->shape[d]) { s0 = (in->shape[d] - dims[d]) / 2; len = dims[d]; }
        else { d0 = (dims[d] - in->shape[d]) / 2; len = in->shape[d]; }
        plan.dims[d] = len;
        plan.ss[d] = in_strides[d];
        src_off += s0 * in_strides[d];
        dst_off += d0 * plan.ds[d];
    }
    sh_nd_copy(ctx->pool, es, (char *)out->data + dst_off * (int64_t)es, (const char *)in->data + src_off * (int64_t)es,
               &plan);
    return sh_strings_own(out);
}

const cort_op_def sh_op_center_crop_pad = { .name = "CenterCropPad", .domain = "", .min_opset = 18, .max_opset = CORT_OPSET_MAX,
    .types = SH_TYPES_ALL, .infer = ccp_infer, .run = ccp_run };
