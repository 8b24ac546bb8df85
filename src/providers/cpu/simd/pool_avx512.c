/* AVX-512F row kernels of the pools (see pool_ukernels.h). Stride-2 windows deinterleave the
 * loaded columns with permutex2var instead of gathering. */
#include "pool_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>

#define POOL_TARGET __attribute__((target("avx512f")))
#define POOL_INLINE POOL_TARGET static inline __attribute__((always_inline))

POOL_TARGET static inline __mmask16 tail_mask(size_t n) { return (__mmask16)((1u << n) - 1u); }

/* v > best ? v : best: vmaxps returns its second operand on NaN and on equal values. Folding
 * from a non-NaN start this is the NaN-ignoring maximum. */
POOL_TARGET static inline __m512 max_gt(__m512 best, __m512 v) { return _mm512_max_ps(v, best); }

POOL_TARGET static inline __mmask16 nan_lanes(__m512 v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q); }

POOL_TARGET static inline __m512 ninf_ps(void) { return _mm512_set1_ps(-__builtin_inff()); }

POOL_TARGET
void nn_pool_rows_max_avx512(const float *x, size_t stride, size_t nrows, size_t n, float *buf) {
    const __m512 ninf = ninf_ps();
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : tail_mask(n - i);
        __m512 a = ninf;
        for (size_t r = 0; r < nrows; r++) a = max_gt(a, _mm512_maskz_loadu_ps(m, x + r * stride + i));
        _mm512_mask_storeu_ps(buf + i, m, a);
    }
}

POOL_TARGET
void nn_pool_rows_sum_avx512(const float *x, size_t stride, size_t nrows, size_t n, float *buf) {
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : tail_mask(n - i);
        __m512 a = _mm512_maskz_loadu_ps(m, x + i);
        for (size_t r = 1; r < nrows; r++) a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(m, x + r * stride + i));
        _mm512_mask_storeu_ps(buf + i, m, a);
    }
}

/* Lanes of a 16-float load at a column offset with `avail` readable columns left. */
POOL_TARGET static inline __mmask16 avail_mask(ptrdiff_t avail) {
    return avail >= 16 ? (__mmask16)0xFFFF : avail <= 0 ? (__mmask16)0 : tail_mask((size_t)avail);
}

POOL_INLINE __m512 reduce(__m512 acc, __m512 v, int is_max) {
    return is_max ? max_gt(acc, v) : _mm512_add_ps(acc, v);
}

/* Block b of a row window: lanes = columns [16b, 16b + 16) of p reduced over the nrows rows in
 * row order (max: each later value replaces a smaller one, so a NaN only counts in the first
 * row). Columns outside [lpad, avail) are not read: past avail they are 0 for a sum and -inf for a
 * max (never greater); before lpad (block 0) the max takes column lpad, the first value of every
 * window that starts in the padding. nan marks NaN lanes of the first row (max). */
typedef struct vblock_t { __m512 red; __mmask16 nan; } vblock_t;

/* full: the block lies inside [lpad, avail) (no checks, plain loads) */
POOL_INLINE vblock_t vblock(const float *p, size_t stride, size_t nrows, size_t lpad, ptrdiff_t avail, size_t b,
                            int is_max, int full) {
    const __m512 fill = is_max ? ninf_ps() : _mm512_setzero_ps();
    vblock_t v = { fill, 0 };
    p += 16 * b;
    const __mmask16 lead = b == 0 ? tail_mask(lpad) : 0;
    const __mmask16 m = full ? (__mmask16)0xFFFF : avail_mask(avail - (ptrdiff_t)(16 * b)) & (__mmask16)~lead;
    if (m == 0xFFFF) {   /* inner blocks: plain loads */
        v.red = _mm512_loadu_ps(p);
        if (is_max) v.nan = nan_lanes(v.red);
        for (size_t r = 1; r < nrows; r++) v.red = reduce(v.red, _mm512_loadu_ps(p + r * stride), is_max);
        return v;
    }
    if (!m) return v;   /* past the row: no loads */
    v.red = _mm512_mask_loadu_ps(fill, m, p);
    if (is_max) v.nan = nan_lanes(v.red);
    for (size_t r = 1; r < nrows; r++) v.red = reduce(v.red, _mm512_mask_loadu_ps(fill, m, p + r * stride), is_max);
    if (is_max && lead) v.red = _mm512_mask_permutexvar_ps(v.red, lead, _mm512_set1_epi32((int)lpad), v.red);
    return v;
}

/* Outputs [o, o + n) of a max row one by one in the reference's order (first valid value, then
 * each greater one): the vector path is exact only while no first-row value is NaN. */
__attribute__((noinline)) static void max_chunk_ref(const float *p, size_t stride, size_t nrows, size_t lpad,
                                                    size_t avail, size_t k, size_t sw, size_t o, size_t n,
                                                    float *y) {
    for (size_t i = o; i < o + n; i++) {
        size_t c0 = i * sw, lo = c0 < lpad ? lpad : c0, hi = c0 + k < avail ? c0 + k : avail;
        float best = p[lo];
        for (size_t r = 0; r < nrows; r++)
            for (size_t c = lo; c < hi; c++) best = p[r * stride + c] > best ? p[r * stride + c] : best;
        y[i] = best;
    }
}

/* Output chunk c (16 outputs from o = 16c) of a row; b0 holds its first block on entry and the
 * first block of chunk c + 1 on return (loaded when more outputs follow). */
POOL_INLINE __m512 row_chunk(const float *p, size_t stride, size_t nrows, size_t lpad, ptrdiff_t av, size_t k,
                             size_t sw, size_t c, size_t count, int is_max, int full, vblock_t *b0, __mmask16 *nan) {
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, one);
    const int more = 16 * (c + 1) < count;
    __m512 acc;
    __m512i idx = lanes;
    vblock_t next = *b0;
    if (sw == 1) {
        acc = b0->red;
        if (k > 1 || more) next = vblock(p, stride, nrows, lpad, av, c + 1, is_max, full);
        for (size_t kw = 1; kw < k; kw++) {
            idx = _mm512_add_epi32(idx, one);
            acc = reduce(acc, _mm512_permutex2var_ps(b0->red, idx, next.red), is_max);
        }
    } else {
        const vblock_t b1 = vblock(p, stride, nrows, lpad, av, 2 * c + 1, is_max, full);
        if (k > 2 || more) next = vblock(p, stride, nrows, lpad, av, 2 * c + 2, is_max, full);
        *nan |= b1.nan;
        const __m512 e0 = _mm512_permutex2var_ps(b0->red, even, b1.red);
        const __m512 o0 = _mm512_permutex2var_ps(b0->red, odd, b1.red);
        acc = k > 1 ? reduce(e0, o0, is_max) : e0;
        if (k > 2) {
            const __m512 e1 = k > 3 ? _mm512_permutexvar_ps(even, next.red) : next.red;
            const __m512 o1 = _mm512_permutexvar_ps(odd, next.red);
            for (size_t kw = 2; kw < k; kw += 2) {
                idx = _mm512_add_epi32(idx, one);
                acc = reduce(acc, _mm512_permutex2var_ps(e0, idx, e1), is_max);
                if (kw + 1 < k) acc = reduce(acc, _mm512_permutex2var_ps(o0, idx, o1), is_max);
            }
        }
    }
    *nan |= b0->nan | next.nan;
    *b0 = next;
    return acc;
}

/* One output row of the fused kernels. The row's window rows are reduced one 16-column block at a
 * time and each block is loaded once: output chunk c (16 outputs) needs blocks c, c+1 (stride 1)
 * or 2c, 2c+1, 2c+2 (stride 2), and the last of them is the first of chunk c+1. Tap kw picks
 * column j*sw + kw for lane j with one two-source permute: stride 1 shifts the pair (b0, b1) by kw
 * lanes; stride 2 splits columns into even (e0 = 0,2,..,30; e1 = 32,34,..) and odd (o0, o1)
 * vectors and shifts those by kw/2 lanes (k <= 17 keeps kw/2 <= 8: e1/o1 come from b2 alone, and
 * for kw/2 == 1 e1's lane 0 is b2's). Taps are combined in kw order. Chunks whose blocks lie
 * inside the row run without masks.
 * Max: reducing rows first and columns second keeps the reference's result (the first valid value
 * unless a later one is greater) as long as the first row has no NaN: a NaN there would poison a
 * whole column. Rows that meet one are redone by max_chunk_ref. */
POOL_INLINE void fused_row(const float *p, size_t stride, size_t nrows, size_t lpad, size_t avail, size_t k,
                           size_t sw, size_t count, int is_max, __m512 scale, float *y) {
    const ptrdiff_t av = (ptrdiff_t)avail;
    __mmask16 nan = 0;
    vblock_t b0 = vblock(p, stride, nrows, lpad, av, 0, is_max, 0);
    size_t o = 0, c = 0;
    /* chunks whose blocks (c + 1, or 2c + 1 and 2c + 2; block 0 is loaded above) lie inside the row */
    const size_t blocks = avail / 16;
    size_t full_chunks = sw == 1 ? (blocks >= 1 ? blocks - 1 : 0) : (blocks >= 3 ? (blocks - 3) / 2 + 1 : 0);
    if (full_chunks > count / 16) full_chunks = count / 16;
    for (; c < full_chunks; o += 16, c++) {
        __m512 acc = row_chunk(p, stride, nrows, lpad, av, k, sw, c, count, is_max, 1, &b0, &nan);
        _mm512_storeu_ps(y + o, is_max ? acc : _mm512_mul_ps(acc, scale));
    }
    for (; o < count; o += 16, c++) {
        __m512 acc = row_chunk(p, stride, nrows, lpad, av, k, sw, c, count, is_max, 0, &b0, &nan);
        if (!is_max) acc = _mm512_mul_ps(acc, scale);
        if (count - o >= 16) _mm512_storeu_ps(y + o, acc);
        else _mm512_mask_storeu_ps(y + o, tail_mask(count - o), acc);
    }
    if (is_max && nan) max_chunk_ref(p, stride, nrows, lpad, avail, k, sw, 0, count, y);
}

POOL_INLINE void fused_rows(const nn_pool2d_rows *a, size_t nrows, size_t k, size_t sw, int is_max) {
    const __m512 scale = _mm512_set1_ps(a->scale);
    for (size_t i = 0; i < a->out_rows; i++)
        fused_row(a->x + i * a->x_step, a->x_stride, nrows, a->lpad, a->avail, k, sw, a->count, is_max, scale,
                  a->y + i * a->y_stride);
}

/* The common square windows get constant-folded copies; the rest share one generic loop. */
#define POOL_DISPATCH(a, is_max)                                                                 \
    do {                                                                                         \
        const size_t n_ = (a)->nrows, k_ = (a)->k, s_ = (a)->sw;                                 \
        if (n_ == 3 && k_ == 3 && s_ == 2) fused_rows(a, 3, 3, 2, is_max);                       \
        else if (n_ == 2 && k_ == 2 && s_ == 2) fused_rows(a, 2, 2, 2, is_max);                  \
        else if (n_ == 3 && k_ == 3 && s_ == 1) fused_rows(a, 3, 3, 1, is_max);                  \
        else fused_rows(a, n_, k_, s_, is_max);                                                  \
    } while (0)

POOL_TARGET void nn_pool_max2d_avx512(const nn_pool2d_rows *a) { POOL_DISPATCH(a, 1); }
POOL_TARGET void nn_pool_avg2d_avx512(const nn_pool2d_rows *a) { POOL_DISPATCH(a, 0); }

POOL_TARGET
float nn_pool_sum_avx512(const float *x, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i + 16 <= n; i += 16) a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
    if (i < n) a1 = _mm512_add_ps(a1, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

POOL_TARGET
float nn_pool_max_avx512(const float *x, size_t n) {
    /* every lane starts from x[0]: a leading NaN reaches the result, no other NaN does */
    const __m512 first = _mm512_set1_ps(x[0]);
    __m512 a0 = first, a1 = first, a2 = first, a3 = first;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = max_gt(a0, _mm512_loadu_ps(x + i));
        a1 = max_gt(a1, _mm512_loadu_ps(x + i + 16));
        a2 = max_gt(a2, _mm512_loadu_ps(x + i + 32));
        a3 = max_gt(a3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i + 16 <= n; i += 16) a0 = max_gt(a0, _mm512_loadu_ps(x + i));
    if (i < n) a1 = max_gt(a1, _mm512_mask_loadu_ps(first, tail_mask(n - i), x + i));
    return _mm512_reduce_max_ps(max_gt(max_gt(a0, a1), max_gt(a2, a3)));
}
#endif
