/* Buffers with XNNPACK's read slack, NCHW <-> NHWC transposes, and channels-last values. */
#ifdef CORT_HAVE_XNNPACK
#include <string.h>
#include "xnn_internal.h"

float *xnn_buf(size_t count) {
    if (count > (SIZE_MAX - XNN_EXTRA_BYTES) / sizeof(float)) return NULL;
    return cort_malloc(count * sizeof(float) + XNN_EXTRA_BYTES);
}

cort_status *xnn_input(const cort_value *v, const float **data, float **tmp) {
    *tmp = NULL;
    /* XNNPACK may read up to XNN_EXTRA_BYTES past its inputs (never using the values). That is safe
     * when those bytes lie on the same page as the last element; otherwise copy. */
    uintptr_t end = (uintptr_t)v->data + v->bytes;
    if (v->bytes && ((end - 1) & 4095) + XNN_EXTRA_BYTES < 4096) { *data = v->data; return NULL; }
    float *c = xnn_buf(v->count ? v->count : 1);
    if (!c) return cort_error_oom();
    if (v->bytes) memcpy(c, v->data, v->bytes);
    *tmp = c;
    *data = c;
    return NULL;
}

/* dst[c][r] = src[r][c] for a rows x cols matrix, in 32x32 tiles; ranges are tiles of rows,
 * over `batch` matrices laid out back to back. */
typedef struct tr_args { const float *src; float *dst; size_t rows, cols, row_tiles; } tr_args;
#define TILE 32

static void tr_range(void *p, size_t begin, size_t end) {
    const tr_args *a = p;
    for (size_t t = begin; t < end; t++) {
        size_t b = t / a->row_tiles, r0 = (t % a->row_tiles) * TILE;
        size_t r1 = r0 + TILE < a->rows ? r0 + TILE : a->rows;
        const float *src = a->src + b * a->rows * a->cols;
        float *dst = a->dst + b * a->rows * a->cols;
        for (size_t c0 = 0; c0 < a->cols; c0 += TILE) {
            size_t c1 = c0 + TILE < a->cols ? c0 + TILE : a->cols;
            for (size_t r = r0; r < r1; r++)
                for (size_t c = c0; c < c1; c++) dst[c * a->rows + r] = src[r * a->cols + c];
        }
    }
}

static void transpose(cort_pool *pool, const float *src, float *dst, size_t batch, size_t rows, size_t cols) {
    if (!batch || !rows || !cols) return;
    if (rows == 1 || cols == 1) { memcpy(dst, src, batch * rows * cols * sizeof(float)); return; }
    tr_args a = { src, dst, rows, cols, (rows + TILE - 1) / TILE };
    size_t tiles = batch * a.row_tiles;
    size_t grain = (TILE * cols < 16384) ? (16384 / (TILE * cols) + 1) : 1;
    cort_parallel_for(pool, tiles, grain, tr_range, &a);
}

static void count(xnn_instance *inst, size_t n, size_t c, size_t s) {
    if (inst && n && c > 1 && s > 1) xnn_owner_count_transpose(inst->owner);
}

void xnn_nchw_to_nhwc(xnn_instance *inst, cort_pool *pool, const float *src, float *dst, size_t n, size_t c, size_t s) {
    count(inst, n, c, s);
    transpose(pool, src, dst, n, c, s);
}

void xnn_nhwc_to_nchw(xnn_instance *inst, cort_pool *pool, const float *src, float *dst, size_t n, size_t c, size_t s) {
    count(inst, n, c, s);
    transpose(pool, src, dst, n, s, c);
}

/* ---------------------------------------------------------------- channels-last values */
size_t xnn_spatial(const int64_t *shape, size_t rank) {
    size_t sp = 1;
    for (size_t i = 2; i < rank; i++) sp *= (size_t)shape[i];
    return sp;
}

static int layouts_differ(const int64_t *shape, size_t rank) {
    return rank >= 3 && shape[1] > 1 && xnn_spatial(shape, rank) > 1;
}

int xnn_is_nhwc(const cort_value *v) {
    return v && v->kind == CORT_VKIND_TENSOR && v->layout == 1 && layouts_differ(v->shape, v->rank);
}

int xnn_want_nhwc(const cort_node *node, const int64_t *shape, size_t rank) {
    return (node->provider_flags & XNN_EMIT_NHWC) && layouts_differ(shape, rank);
}

cort_status *xnn_input_nhwc(xnn_instance *inst, cort_pool *pool, const cort_value *X, const float **data, float **tmp) {
    *tmp = NULL;
    if (xnn_is_nhwc(X) || !layouts_differ(X->shape, X->rank)) return xnn_input(X, data, tmp);
    float *b = xnn_buf(X->count);
    if (!b) return cort_error_oom();
    xnn_nchw_to_nhwc(inst, pool, X->data, b, (size_t)X->shape[0], (size_t)X->shape[1], xnn_spatial(X->shape, X->rank));
    *tmp = b;
    *data = b;
    return NULL;
}

cort_status *xnn_output_begin(const cort_node *node, cort_value *Y, float **data, float **tmp) {
    *tmp = NULL;
    Y->layout = 0;
    if (xnn_want_nhwc(node, Y->shape, Y->rank)) Y->layout = 1;
    if (Y->layout || !layouts_differ(Y->shape, Y->rank)) { *data = Y->data; return NULL; }
    if (!(*tmp = xnn_buf(Y->count))) return cort_error_oom();
    *data = *tmp;
    return NULL;
}

void xnn_output_done(xnn_instance *inst, cort_pool *pool, cort_value *Y, float *tmp) {
    if (!tmp) return;
    xnn_nhwc_to_nchw(inst, pool, tmp, Y->data, (size_t)Y->shape[0], (size_t)Y->shape[1], xnn_spatial(Y->shape, Y->rank));
    cort_free(tmp);
}

cort_status *xnn_relayout(xnn_instance *inst, cort_pool *pool, const cort_value *X, int to_nhwc, cort_value **out) {
    cort_value *Y = NULL;
    CORT_TRY(cort_tensor_alloc(X->type, X->shape, X->rank, &Y));
    size_t n = X->rank ? (size_t)X->shape[0] : 1, c = X->rank > 1 ? (size_t)X->shape[1] : 1;
    size_t sp = xnn_spatial(X->shape, X->rank);
    if (to_nhwc) xnn_nchw_to_nhwc(inst, pool, X->data, Y->data, n, c, sp);
    else xnn_nhwc_to_nchw(inst, pool, X->data, Y->data, n, c, sp);
    Y->layout = to_nhwc && layouts_differ(Y->shape, Y->rank);
    *out = Y;
    return NULL;
}

int xnn_any_nhwc_input(const cort_kernel_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_inputs; i++)
        if (xnn_is_nhwc(ctx->inputs[i])) return 1;
    return 0;
}
#else
typedef int xnn_layout_unused;
#endif
