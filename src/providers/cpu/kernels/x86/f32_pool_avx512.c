/* AVX-512F row kernels of the pools (see pool_ukernels.h). Stride-2 windows deinterleave the
 * loaded columns with permutex2var instead of gathering. */
#include "../pool_ukernels.h"
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

/* Block b of a row window: lanes = columns [16b, 16b + 16) of the window row reduced over the
 * nrows rows in row order (max: a later value replaces a smaller one, so a NaN lane means a
 * first-row NaN). x is the row's first existing column, window column lpad. Columns outside
 * [lpad, avail) are not read: past avail they are 0 for a sum and -inf for a max (never greater);
 * before lpad (block 0) the max takes column lpad, the first value of every window that starts in
 * the padding. Block 0 of a padded row is expand-loaded so no address before x is formed. */
POOL_INLINE __m512 vblock(const float *x, size_t stride, size_t nrows, size_t lpad, ptrdiff_t avail, size_t b,
                          int is_max) {
    const __m512 fill = is_max ? ninf_ps() : _mm512_setzero_ps();
    if (avail <= (ptrdiff_t)(16 * b)) return fill;   /* past the row: no loads */
    const __mmask16 lead = b == 0 ? tail_mask(lpad) : 0;
    const __mmask16 m = avail_mask(avail - (ptrdiff_t)(16 * b)) & (__mmask16)~lead;
    __m512 v;
    if (lead) {
        v = _mm512_mask_expandloadu_ps(fill, m, x);
        for (size_t r = 1; r < nrows; r++) v = reduce(v, _mm512_mask_expandloadu_ps(fill, m, x + r * stride), is_max);
        if (is_max) v = _mm512_mask_permutexvar_ps(v, lead, _mm512_set1_epi32((int)lpad), v);
        return v;
    }
    const float *p = x + 16 * b - lpad;
    if (m == 0xFFFF) {   /* inner blocks: plain loads */
        v = _mm512_loadu_ps(p);
        for (size_t r = 1; r < nrows; r++) v = reduce(v, _mm512_loadu_ps(p + r * stride), is_max);
        return v;
    }
    v = _mm512_mask_loadu_ps(fill, m, p);
    for (size_t r = 1; r < nrows; r++) v = reduce(v, _mm512_mask_loadu_ps(fill, m, p + r * stride), is_max);
    return v;
}

/* Outputs [o, o + n) of a max row one by one in the reference's order (first valid value, then
 * each greater one), for rows where the vector path is not exact (see fused_row). x as in vblock. */
__attribute__((noinline)) static void max_chunk_ref(const float *x, size_t stride, size_t nrows, size_t lpad,
                                                    size_t avail, size_t k, size_t sw, size_t o, size_t n,
                                                    float *y) {
    for (size_t i = o; i < o + n; i++) {
        size_t c0 = i * sw, lo = c0 < lpad ? lpad : c0, hi = c0 + k < avail ? c0 + k : avail;
        float best = x[lo - lpad];
        for (size_t r = 0; r < nrows; r++)
            for (size_t c = lo; c < hi; c++) {
                const float v = x[r * stride + c - lpad];
                best = v > best ? v : best;
            }
        y[i] = best;
    }
}

/* The means of the 16 avg windows from output o when some meet the padding: each window's own
 * divisor (see nn_pool2d_rows), in int32 lanes (columns of a row fit). */
POOL_INLINE __m512 avg_border(const nn_pool2d_rows *a, size_t o, size_t sw, size_t k, __m512 sum) {
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i st = _mm512_mullo_epi32(_mm512_add_epi32(lanes, _mm512_set1_epi32((int)o)),
                                          _mm512_set1_epi32((int)sw));
    const __m512i end = _mm512_add_epi32(st, _mm512_set1_epi32((int)k));
    __m512i n;
    if (a->include_pad) {
        n = _mm512_sub_epi32(_mm512_min_epi32(end, _mm512_set1_epi32((int)a->pad_end)), st);
    } else {
        const __m512i lo = _mm512_max_epi32(st, _mm512_set1_epi32((int)a->lpad));
        n = _mm512_sub_epi32(_mm512_min_epi32(end, _mm512_set1_epi32((int)a->avail)), lo);
    }
    n = _mm512_mullo_epi32(_mm512_max_epi32(n, _mm512_setzero_si512()), _mm512_set1_epi32((int)a->row_count));
    const __mmask16 some = _mm512_cmpgt_epi32_mask(n, _mm512_setzero_si512());
    return _mm512_maskz_div_ps(some, sum, _mm512_cvtepi32_ps(n));
}

/* One output row of the fused kernels. The row's window rows are reduced one 16-column block at a
 * time and each block is loaded once: output chunk c (16 outputs) needs blocks c, c+1 (stride 1)
 * or 2c, 2c+1, 2c+2 (stride 2), and the last of them is the first of chunk c+1. Tap kw picks
 * column j*sw + kw for lane j with one two-source permute: stride 1 shifts the pair (b0, b1) by kw
 * lanes; stride 2 splits columns into even (e0 = 0,2,..,30; e1 = 32,34,..) and odd (o0, o1)
 * vectors and shifts those by kw/2 lanes (k <= 17 keeps kw/2 <= 8: e1/o1 come from b2 alone, and
 * for kw/2 == 1 e1's lane 0 is b2's). Taps are combined in kw order.
 * Max: rows first, then columns, gives the reference's result (the first valid value unless a
 * later one is greater) unless the first row holds a NaN, which would hide its whole column. The
 * blocks are summed into a probe (NaN iff a block has a NaN lane, or +inf meets -inf) checked
 * once per row; such rows are redone by max_chunk_ref. */
POOL_INLINE void fused_row(const nn_pool2d_rows *a, const float *x, size_t stride, size_t nrows, size_t lpad,
                           size_t avail, size_t k, size_t sw, size_t count, int is_max, __m512 scale, float *y) {
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, one);
    const ptrdiff_t av = (ptrdiff_t)avail;
    __m512 b0 = vblock(x, stride, nrows, lpad, av, 0, is_max), probe = b0;
    for (size_t o = 0, c = 0; o < count; o += 16, c++) {
        __m512 acc, next = b0;
        __m512i idx = lanes;
        if (sw == 1) {
            acc = b0;
            if (k > 1 || o + 16 < count) next = vblock(x, stride, nrows, lpad, av, c + 1, is_max);
            if (is_max) probe = _mm512_add_ps(probe, next);
            for (size_t kw = 1; kw < k; kw++) {
                idx = _mm512_add_epi32(idx, one);
                acc = reduce(acc, _mm512_permutex2var_ps(b0, idx, next), is_max);
            }
        } else {
            const __m512 b1 = vblock(x, stride, nrows, lpad, av, 2 * c + 1, is_max);
            if (k > 2 || o + 16 < count) next = vblock(x, stride, nrows, lpad, av, 2 * c + 2, is_max);
            if (is_max) probe = _mm512_add_ps(probe, _mm512_add_ps(b1, next));
            const __m512 e0 = _mm512_permutex2var_ps(b0, even, b1), o0 = _mm512_permutex2var_ps(b0, odd, b1);
            acc = k > 1 ? reduce(e0, o0, is_max) : e0;
            if (k > 2) {
                const __m512 e1 = k > 3 ? _mm512_permutexvar_ps(even, next) : next;
                const __m512 o1 = _mm512_permutexvar_ps(odd, next);
                for (size_t kw = 2; kw < k; kw += 2) {
                    idx = _mm512_add_epi32(idx, one);
                    acc = reduce(acc, _mm512_permutex2var_ps(e0, idx, e1), is_max);
                    if (kw + 1 < k) acc = reduce(acc, _mm512_permutex2var_ps(o0, idx, o1), is_max);
                }
            }
        }
        if (!is_max) {
            const int border = o * sw < lpad || (o + 15) * sw + k > avail;
            acc = border ? avg_border(a, o, sw, k, acc) : _mm512_mul_ps(acc, scale);
        }
        if (count - o >= 16) _mm512_storeu_ps(y + o, acc);
        else _mm512_mask_storeu_ps(y + o, tail_mask(count - o), acc);
        b0 = next;
    }
    if (is_max && nan_lanes(probe)) max_chunk_ref(x, stride, nrows, lpad, avail, k, sw, 0, count, y);
}

POOL_INLINE void fused_rows(const nn_pool2d_rows *a, size_t nrows, size_t k, size_t sw, int is_max) {
    const __m512 scale = _mm512_set1_ps(a->scale);
    for (size_t i = 0; i < a->out_rows; i++)
        fused_row(a, a->x + i * a->x_step, a->x_stride, nrows, a->lpad, a->avail, k, sw, a->count, is_max, scale,
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
