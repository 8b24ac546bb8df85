/* Buffers with XNNPACK's read slack, and NCHW <-> NHWC transposes. */
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

void xnn_nchw_to_nhwc(cort_pool *pool, const float *src, float *dst, size_t n, size_t c, size_t s) {
    transpose(pool, src, dst, n, c, s);
}

void xnn_nhwc_to_nchw(cort_pool *pool, const float *src, float *dst, size_t n, size_t c, size_t s) {
    transpose(pool, src, dst, n, s, c);
}
#else
typedef int xnn_layout_unused;
#endif
