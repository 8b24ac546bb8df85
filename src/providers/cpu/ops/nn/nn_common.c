/* Shared helpers of the 'nn' family (see ops/nn/nn_common.h). */
#include <string.h>
#include "nn_common.h"

void nn_type_to_f32(const void *src, cort_type t, float *dst, size_t n) {
    switch (t) {
    case CORT_TYPE_FLOAT: memcpy(dst, src, n * sizeof(float)); break;
    case CORT_TYPE_FLOAT16: for (size_t i = 0; i < n; i++) dst[i] = cort_f16_to_f32(((const uint16_t *)src)[i]); break;
    case CORT_TYPE_BFLOAT16: for (size_t i = 0; i < n; i++) dst[i] = cort_bf16_to_f32(((const uint16_t *)src)[i]); break;
    case CORT_TYPE_DOUBLE: for (size_t i = 0; i < n; i++) dst[i] = (float)((const double *)src)[i]; break;
    case CORT_TYPE_UINT8: for (size_t i = 0; i < n; i++) dst[i] = ((const uint8_t *)src)[i]; break;
    case CORT_TYPE_INT8: for (size_t i = 0; i < n; i++) dst[i] = ((const int8_t *)src)[i]; break;
    default: for (size_t i = 0; i < n; i++) dst[i] = (float)cort_load_f64(src, t, i); break;
    }
}

void nn_f32_to_type(const float *src, void *dst, cort_type t, size_t n) {
    switch (t) {
    case CORT_TYPE_FLOAT: if (src != dst) memmove(dst, src, n * sizeof(float)); break;
    case CORT_TYPE_FLOAT16: for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = cort_f32_to_f16(src[i]); break;
    case CORT_TYPE_BFLOAT16: for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = cort_f32_to_bf16(src[i]); break;
    case CORT_TYPE_DOUBLE: for (size_t i = 0; i < n; i++) ((double *)dst)[i] = src[i]; break;
    case CORT_TYPE_UINT8: for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)src[i]; break;
    case CORT_TYPE_INT8: for (size_t i = 0; i < n; i++) ((int8_t *)dst)[i] = (int8_t)src[i]; break;
    default: for (size_t i = 0; i < n; i++) cort_store_f64(dst, t, i, src[i]); break;
    }
}

cort_status *nn_fbuf_in(const cort_value *v, nn_fbuf *out) {
    out->owned = NULL;
    if (v->type == CORT_TYPE_FLOAT) { out->p = v->data; return NULL; }
    float *p = cort_malloc((v->count ? v->count : 1) * sizeof(float));
    if (!p) return cort_error_oom();
    nn_type_to_f32(v->data, v->type, p, v->count);
    out->p = out->owned = p;
    return NULL;
}

cort_status *nn_fbuf_out(cort_value *v, nn_fbuf *out) {
    out->owned = NULL;
    if (v->type == CORT_TYPE_FLOAT) { out->p = v->data; return NULL; }
    float *p = cort_malloc((v->count ? v->count : 1) * sizeof(float));
    if (!p) return cort_error_oom();
    out->p = out->owned = p;
    return NULL;
}

void nn_fbuf_commit(const nn_fbuf *b, cort_value *v) {
    if (b->owned) nn_f32_to_type(b->owned, v->data, v->type, v->count);
}

void nn_fbuf_free(nn_fbuf *b) {
    cort_free(b->owned);
    b->owned = NULL;
    b->p = NULL;
}

const char *nn_shape(const cort_value *v, char *buf, size_t len) {
    if (!v) return "(missing)";
    return cort_shape_str(v->shape, v->rank, buf, len);
}

cort_status *nn_check_input(const cort_kernel_ctx *ctx, size_t i, const char *name, int min_rank, int exact_rank) {
    const cort_value *v = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
    if (!v) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is missing", i, name);
    if (v->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is not a tensor", i, name);
    char buf[160];
    if (exact_rank >= 0 && (int)v->rank != exact_rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected rank %d",
                               i, name, nn_shape(v, buf, sizeof buf), exact_rank);
    if ((int)v->rank < min_rank)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu '%s' has shape %s, expected rank >= %d", i, name, nn_shape(v, buf, sizeof buf),
                               min_rank);
    return NULL;
}

void nn_infer_type(cort_infer_ctx *ctx, size_t i, cort_type elem) {
    if (i < ctx->n_outputs) cort_tinfo_tensor(&ctx->outputs[i], elem);
}

static cort_status *parse_ints(const cort_node *node, const char *name, int64_t *dst, int *nd, int64_t min_value,
                               int *has) {
    const int64_t *v;
    size_t n = cort_attr_ints(node, name, &v);
    *has = cort_attr_get(node, name) != NULL;
    if (!*has) return NULL;
    size_t cap = strcmp(name, "pads") ? NN_MAX_SPATIAL : 2 * NN_MAX_SPATIAL;
    if (n > cap || (strcmp(name, "pads") == 0 && n % 2))
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                               "attribute '%s' has %zu values; at most %d spatial dimensions are supported", name, n,
                               NN_MAX_SPATIAL);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < min_value)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute '%s'[%zu] = %lld, expected >= %lld", name,
                                   i, (long long)v[i], (long long)min_value);
        dst[i] = v[i];
    }
    int d = strcmp(name, "pads") ? (int)n : (int)n / 2;
    if (*nd && d != *nd)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL,
                               "attribute '%s' describes %d spatial dimensions, other attributes %d", name, d, *nd);
    *nd = d;
    return NULL;
}

cort_status *nn_window_parse(const cort_node *node, int kernel_required, nn_window *w) {
    memset(w, 0, sizeof *w);
    for (int i = 0; i < NN_MAX_SPATIAL; i++) w->strides[i] = w->dilations[i] = w->kernel[i] = 1;
    CORT_TRY(parse_ints(node, "kernel_shape", w->kernel, &w->nd, 1, &w->has_kernel));
    CORT_TRY(parse_ints(node, "strides", w->strides, &w->nd, 1, &w->has_strides));
    CORT_TRY(parse_ints(node, "dilations", w->dilations, &w->nd, 1, &w->has_dilations));
    CORT_TRY(parse_ints(node, "pads", w->pads, &w->nd, 0, &w->has_pads));
    if (kernel_required && !w->has_kernel)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'kernel_shape' is required");
    if (w->has_pads && w->nd) {
        /* pads were read as [b0..bn-1, e0..en-1] into a 2*NN_MAX_SPATIAL array: already in place */
    }
    const char *ap = cort_attr_str(node, "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET") || !*ap) w->auto_pad = NN_PAD_NOTSET;
    else if (!strcmp(ap, "SAME_UPPER")) w->auto_pad = NN_PAD_SAME_UPPER;
    else if (!strcmp(ap, "SAME_LOWER")) w->auto_pad = NN_PAD_SAME_LOWER;
    else if (!strcmp(ap, "VALID")) w->auto_pad = NN_PAD_VALID;
    else return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'auto_pad' = '%s' is not one of NOTSET, "
                                "SAME_UPPER, SAME_LOWER, VALID", ap);
    w->ceil_mode = cort_attr_int(node, "ceil_mode", 0) != 0;
    return NULL;
}


cort_status *nn_window_geom(const cort_node *node, const nn_window *w, int nd, const int64_t *in, const int64_t *k,
                            int is_pool, nn_geom *g) {
    if (nd < 1 || nd > NN_MAX_SPATIAL)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "%d spatial dimensions (supported: 1 to %d)", nd,
                               NN_MAX_SPATIAL);
    if (w->nd && w->nd != nd)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                               "attributes describe %d spatial dimensions but the input has %d", w->nd, nd);
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    g->nd = nd;
    int off = 3 - nd;
    for (int i = 0; i < nd; i++) {
        int j = off + i;
        g->in[j] = in[i];
        g->k[j] = k ? k[i] : w->kernel[i];
        g->s[j] = w->strides[i];
        g->d[j] = w->dilations[i];
        if (g->k[j] < 1 && g->k[j] != -1)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "kernel dimension %d is %lld", i,
                                   (long long)g->k[j]);
        /* every quantity below comes from the model: any overflow is an invalid geometry */
        int64_t ext = 1, total = 0, o = 0, span = 0;
        if (g->k[j] > 0 && (cort_mul_i64_ovf(g->d[j], g->k[j] - 1, &ext) || cort_add_i64_ovf(ext, 1, &ext)))
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                   "spatial dimension %d: dilation %lld times kernel %lld overflows", i,
                                   (long long)g->d[j], (long long)g->k[j]);
        if (w->auto_pad == NN_PAD_SAME_UPPER || w->auto_pad == NN_PAD_SAME_LOWER) {
            if (in[i] < 0) { g->out[j] = -1; continue; }
            o = in[i] / g->s[j] + (in[i] % g->s[j] != 0);
            if (cort_mul_i64_ovf(o - 1 < 0 ? 0 : o - 1, g->s[j], &total) || cort_add_i64_ovf(total, ext, &total))
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                       "spatial dimension %d: SAME padding of input %lld overflows", i, (long long)in[i]);
            total -= in[i];
            if (total < 0) total = 0;
            g->pb[j] = w->auto_pad == NN_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[j] = total - g->pb[j];
            g->out[j] = o;
        } else {
            if (w->auto_pad == NN_PAD_NOTSET) { g->pb[j] = w->pads[i]; g->pe[j] = w->pads[nd + i]; }
            if (in[i] < 0 || g->k[j] < 0) { g->out[j] = -1; continue; }
            if (cort_add_i64_ovf(in[i], g->pb[j], &span) || cort_add_i64_ovf(span, g->pe[j], &span))
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                       "spatial dimension %d: input %lld + pads %lld,%lld overflows", i, (long long)in[i],
                                       (long long)g->pb[j], (long long)g->pe[j]);
            span -= ext;
            if (span < 0)
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                       "spatial dimension %d: input %lld (+ pads %lld,%lld) is smaller than the kernel "
                                       "extent %lld", i, (long long)in[i], (long long)g->pb[j], (long long)g->pe[j],
                                       (long long)ext);
            /* span >= 0 here, so neither division can overflow; o <= span + 1 fits */
            o = (is_pool && w->ceil_mode ? span / g->s[j] + (span % g->s[j] != 0) : span / g->s[j]) + 1;
            /* the last window must start inside the input or the begin padding (no overflow: (o - 1) * s <= span + s - 1
             * and in + pb was computed above) */
            const int64_t start_lim = in[i] + g->pb[j];
            if (is_pool && w->ceil_mode && (start_lim == 0 || (o - 1) > (start_lim - 1) / g->s[j])) o--;
            g->out[j] = o;
        }
    }
    return NULL;
}

void nn_geom_out_dims(const nn_geom *g, int64_t *out) {
    for (int i = 0; i < g->nd; i++) out[i] = g->out[3 - g->nd + i];
}
