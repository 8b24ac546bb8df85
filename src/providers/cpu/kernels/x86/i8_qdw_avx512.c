/* AVX-512 (BW/VL) int8 depthwise helpers, see nn_qconv_ops in int_gemm.h.
 * dw_taps: taps are paired horizontally: two taps whose offsets differ by one element read, for the
 * even outputs o + 2i, the int16 pairs (x[o + c + 2i], x[o + c + 2i + 1]) of one plain load at
 * x + o + c, and for the odd outputs the pairs of a load one element further, so one vpmaddwd (or
 * vpdpwssd) does two taps for 16 outputs with no unpacking (the vpunpck* pairing of the AVX2 kernel
 * costs two shuffles per pair of taps). A tap without such a neighbour pairs with a zero weight and
 * loads only its even words (masked), so no load ever reads an element the taps do not need. 3x3
 * stride 1 gives 6 pairs (rows: kw 0+1, kw 2 alone); stride 2 on phase planes also 6 (kw 0+2, kw 1).
 * |x|, |w| <= 255 keep every pair sum exact; int32 adds wrap like the scalar loop.
 * widen / widen2 / rq_row: 32 values per step, the tails with masked loads and stores instead of a
 * scalar loop (planes of 7 to 56 columns are mostly tail at 32 lanes). */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <math.h>
#include "i8_rq16_avx512.h"

#define QDW_T512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define QDW_T512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

typedef struct qdw_pairs {
    size_t n;
    const int16_t *x[64];
    int32_t w[64];
    __mmask32 m[64];   /* words a load may touch: all, or only the even ones of a zero-weight partner */
} qdw_pairs;

/* At most 64 taps. The search for a tap's neighbour starts right after it: kernel windows list
 * taps in row order, so it is found in a step or two and small planes (one call each) pay little. */
static void qdw_pair_taps(qdw_pairs *p, const int16_t *x, const size_t *off, size_t ntaps, const int16_t *w) {
    uint64_t used = 0;
    p->n = 0;
    for (size_t t = 0; t < ntaps; t++) {
        if (used >> t & 1) continue;
        used |= (uint64_t)1 << t;
        size_t u = ntaps;
        for (size_t i = 1; i < ntaps; i++) {
            const size_t v = t + i < ntaps ? t + i : t + i - ntaps;
            if (!(used >> v & 1) && off[v] == off[t] + 1) { u = v; break; }
        }
        uint32_t w1 = 0;
        if (u < ntaps) { used |= (uint64_t)1 << u; w1 = (uint16_t)w[u]; }
        p->x[p->n] = x + off[t];
        p->w[p->n] = (int32_t)((uint32_t)(uint16_t)w[t] | w1 << 16);
        p->m[p->n] = u < ntaps ? (__mmask32)0xffffffffu : (__mmask32)0x55555555u;
        p->n++;
    }
}

/* Even and odd outputs back into order. */
#define QDW_STORE(Y, E, O)                                                                                           \
    do {                                                                                                             \
        const __m512i lo_ = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);               \
        const __m512i hi_ = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);         \
        _mm512_storeu_si512((void *)(Y), _mm512_permutex2var_epi32((E), lo_, (O)));                                  \
        _mm512_storeu_si512((void *)((Y) + 16), _mm512_permutex2var_epi32((E), hi_, (O)));                           \
    } while (0)

#define QDW_BODY(DOT)                                                                                                \
    qdw_pairs p;                                                                                                     \
    qdw_pair_taps(&p, x, off, ntaps, w);                                                                             \
    size_t o = 0;                                                                                                    \
    for (; o + 64 <= n; o += 64) {                                                                                   \
        __m512i e0 = _mm512_setzero_si512(), o0 = e0, e1 = e0, o1 = e0;                                              \
        for (size_t k = 0; k < p.n; k++) {                                                                           \
            const int16_t *s = p.x[k] + o;                                                                           \
            const __m512i wv = _mm512_set1_epi32(p.w[k]);                                                            \
            const __mmask32 m = p.m[k];                                                                              \
            e0 = DOT(e0, _mm512_maskz_loadu_epi16(m, s), wv);                                                        \
            o0 = DOT(o0, _mm512_maskz_loadu_epi16(m, s + 1), wv);                                                    \
            e1 = DOT(e1, _mm512_maskz_loadu_epi16(m, s + 32), wv);                                                   \
            o1 = DOT(o1, _mm512_maskz_loadu_epi16(m, s + 33), wv);                                                   \
        }                                                                                                            \
        QDW_STORE(y + o, e0, o0);                                                                                    \
        QDW_STORE(y + o + 32, e1, o1);                                                                               \
    }                                                                                                                \
    for (; o < n; o += 32) {                                                                                         \
        const size_t r = n - o < 32 ? n - o : 32, ne = (r + 1) / 2, no = r / 2;                                      \
        const __mmask32 me = (__mmask32)(ne == 16 ? 0xffffffffu : (1u << 2 * ne) - 1);                                \
        const __mmask32 mo = (__mmask32)(no == 16 ? 0xffffffffu : (1u << 2 * no) - 1);                                \
        __m512i e0 = _mm512_setzero_si512(), o0 = e0;                                                                \
        for (size_t k = 0; k < p.n; k++) {                                                                           \
            const int16_t *s = p.x[k] + o;                                                                           \
            const __m512i wv = _mm512_set1_epi32(p.w[k]);                                                            \
            e0 = DOT(e0, _mm512_maskz_loadu_epi16(p.m[k] & me, s), wv);                                              \
            o0 = DOT(o0, _mm512_maskz_loadu_epi16(p.m[k] & mo, s + 1), wv);                                          \
        }                                                                                                            \
        if (r == 32) {                                                                                               \
            QDW_STORE(y + o, e0, o0);                                                                                \
        } else {                                                                                                     \
            int32_t t_[32];                                                                                          \
            QDW_STORE(t_, e0, o0);                                                                                   \
            const __mmask16 m0 = (__mmask16)(r >= 16 ? 0xffffu : (1u << r) - 1);                                      \
            const __mmask16 m1 = (__mmask16)(r <= 16 ? 0u : (1u << (r - 16)) - 1);                                   \
            _mm512_mask_storeu_epi32(y + o, m0, _mm512_loadu_si512((const void *)t_));                               \
            _mm512_mask_storeu_epi32(y + o + 16, m1, _mm512_loadu_si512((const void *)(t_ + 16)));                   \
        }                                                                                                            \
    }

#define QDW_MADD(A, X, W) _mm512_add_epi32((A), _mm512_madd_epi16((X), (W)))
#define QDW_DPWSSD(A, X, W) _mm512_dpwssd_epi32((A), (X), (W))

QDW_T512 void nn_qdw_taps_avx512(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps,
                                 const int16_t *w) {
    if (ntaps > 64) { nn_qdw_taps_generic(y, n, x, off, ntaps, w); return; }
    QDW_BODY(QDW_MADD)
}

QDW_T512VNNI void nn_qdw_taps_avx512vnni(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps,
                                         const int16_t *w) {
    if (ntaps > 64) { nn_qdw_taps_generic(y, n, x, off, ntaps, w); return; }
    QDW_BODY(QDW_DPWSSD)
}

QDW_T512 void nn_qwiden_avx512(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out) {
    const __m512i vz = _mm512_set1_epi16((int16_t)zp);
    const uint8_t *u = x;
    for (size_t i = 0; i < n; i += 32) {
        const size_t r = n - i < 32 ? n - i : 32;
        const __mmask32 m = (__mmask32)(r == 32 ? 0xffffffffu : (1u << r) - 1);
        const __m256i b = _mm256_maskz_loadu_epi8(m, u + i);
        const __m512i v = is_signed ? _mm512_cvtepi8_epi16(b) : _mm512_cvtepu8_epi16(b);
        _mm512_mask_storeu_epi16(out + i, m, _mm512_sub_epi16(v, vz));
    }
}

/* 64 bytes read as 32 16-bit words: the even bytes are each word's low byte, the odd ones its high byte. */
QDW_T512 void nn_qwiden2_avx512(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev, int16_t *od) {
    const __m512i vz = _mm512_set1_epi16((int16_t)zp);
    const uint8_t *u = x;
    for (size_t i = 0; i < n; i += 64) {
        const size_t r = n - i < 64 ? n - i : 64, ne = (r + 1) / 2, no = r / 2;
        const __mmask64 m = r == 64 ? ~(__mmask64)0 : ((__mmask64)1 << r) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(m, u + i);
        __m512i e, o;
        if (is_signed) { e = _mm512_srai_epi16(_mm512_slli_epi16(v, 8), 8); o = _mm512_srai_epi16(v, 8); }
        else { e = _mm512_and_si512(v, _mm512_set1_epi16(0xff)); o = _mm512_srli_epi16(v, 8); }
        const __mmask32 me = (__mmask32)(ne == 32 ? 0xffffffffu : (1u << ne) - 1);
        const __mmask32 mo = (__mmask32)(no == 32 ? 0xffffffffu : (1u << no) - 1);
        _mm512_mask_storeu_epi16(ev + i / 2, me, _mm512_sub_epi16(e, vz));
        _mm512_mask_storeu_epi16(od + i / 2, mo, _mm512_sub_epi16(o, vz));
    }
}

/* 64 values per step through nn_qrq_pack4_avx512 (one 64-byte store), then 16 at a time and a masked tail. */
QDW_T512 void nn_qrq_row_avx512(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed,
                                void *dst) {
    if (!isfinite(mult)) { nn_qrq_row_generic(acc, n, bias, mult, yzp, is_signed, dst); return; }
    const __m512i vb = _mm512_set1_epi32(bias), vz = _mm512_set1_epi16((int16_t)yzp);
    const __m256i vz16 = _mm256_set1_epi16((int16_t)yzp);
    const __m512 vm = _mm512_set1_ps(mult);
    uint8_t *d = dst;
    size_t q = 0;
    for (; q + 64 <= n; q += 64) {
        const __m512i v0 = nn_qrq_i32_avx512(_mm512_loadu_si512((const void *)(acc + q)), vb, vm);
        const __m512i v1 = nn_qrq_i32_avx512(_mm512_loadu_si512((const void *)(acc + q + 16)), vb, vm);
        const __m512i v2 = nn_qrq_i32_avx512(_mm512_loadu_si512((const void *)(acc + q + 32)), vb, vm);
        const __m512i v3 = nn_qrq_i32_avx512(_mm512_loadu_si512((const void *)(acc + q + 48)), vb, vm);
        _mm512_storeu_si512((void *)(d + q), nn_qrq_pack4_avx512(v0, v1, v2, v3, vz, is_signed));
    }
    for (; q + 16 <= n; q += 16)
        _mm_storeu_si128((__m128i *)(void *)(d + q), nn_qrq16_avx512(_mm512_loadu_si512((const void *)(acc + q)), vb, vm, vz16, is_signed));
    if (q < n) {
        const __mmask16 m = (__mmask16)((1u << (n - q)) - 1);
        _mm_mask_storeu_epi8(d + q, m, nn_qrq16_avx512(_mm512_maskz_loadu_epi32(m, acc + q), vb, vm, vz16, is_signed));
    }
}
/* Four rows of a tile through nn_qrq_pack4_avx512, whose lane j then holds row j. */
QDW_T512 static inline __attribute__((always_inline)) void qrq_rows4_512(const int32_t *acc, size_t ldt, __mmask16 m,
                                                                     int full, const int32_t *bias, const float *mult,
                                                                     __m512i vz16, int is_signed, uint8_t *dst,
                                                                     size_t ldd) {
    const __m512i z = _mm512_setzero_si512();
#define QRQ_ROW_(j) nn_qrq_i32_avx512(full ? _mm512_loadu_si512((const void *)(acc + (j) * ldt)) : _mm512_maskz_loadu_epi32(m, acc + (j) * ldt), \
                                bias ? _mm512_set1_epi32(bias[j]) : z, _mm512_set1_ps(mult[j]))
    const __m512i v0 = QRQ_ROW_(0), v1 = QRQ_ROW_(1), v2 = QRQ_ROW_(2), v3 = QRQ_ROW_(3);
#undef QRQ_ROW_
    const __m512i o = nn_qrq_pack4_avx512(v0, v1, v2, v3, vz16, is_signed);
    const __m128i o0 = _mm512_castsi512_si128(o), o1 = _mm512_extracti32x4_epi32(o, 1);
    const __m128i o2 = _mm512_extracti32x4_epi32(o, 2), o3 = _mm512_extracti32x4_epi32(o, 3);
    if (full) {
        _mm_storeu_si128((__m128i *)(void *)dst, o0);
        _mm_storeu_si128((__m128i *)(void *)(dst + ldd), o1);
        _mm_storeu_si128((__m128i *)(void *)(dst + 2 * ldd), o2);
        _mm_storeu_si128((__m128i *)(void *)(dst + 3 * ldd), o3);
    } else {
        _mm_mask_storeu_epi8(dst, m, o0);
        _mm_mask_storeu_epi8(dst + ldd, m, o1);
        _mm_mask_storeu_epi8(dst + 2 * ldd, m, o2);
        _mm_mask_storeu_epi8(dst + 3 * ldd, m, o3);
    }
}
/* A GEMM tile's rows (at most 16 columns): four rows at a time (qrq_rows4_512), the rest one zmm per
 * row, with masked narrow edges instead of a zero-padded copy. */
QDW_T512 void nn_qrq_tile_avx512(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                                 const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd) {
    if (cols > 16) {
        for (size_t r = 0; r < rows; r++)
            nn_qrq_row_avx512(acc + r * ldt, cols, bias ? bias[r] : 0, mult[r], yzp, is_signed, dst + r * ldd);
        return;
    }
    const __m256i vz16 = _mm256_set1_epi16((int16_t)yzp);
    const __mmask16 m = (__mmask16)((1u << cols) - 1);
    size_t r = 0;
    if (rows >= 4) {
        const __m512i vz = _mm512_set1_epi16((int16_t)yzp);
        const __m128 fmax = _mm_set1_ps(3.40282347e+38f);
        for (; r + 4 <= rows; r += 4) {
            /* |mult| <= FLT_MAX is false for infinities and NaN: from such a group on, the row loop */
            const __m128 am = _mm_andnot_ps(_mm_set1_ps(-0.0f), _mm_loadu_ps(mult + r));
            if (_mm_cmp_ps_mask(am, fmax, _CMP_LE_OQ) != 0xf) break;
            if (cols == 16) qrq_rows4_512(acc + r * ldt, ldt, m, 1, bias ? bias + r : NULL, mult + r, vz, is_signed, dst + r * ldd, ldd);
            else qrq_rows4_512(acc + r * ldt, ldt, m, 0, bias ? bias + r : NULL, mult + r, vz, is_signed, dst + r * ldd, ldd);
        }
    }
    for (; r < rows; r++) {
        const int32_t b = bias ? bias[r] : 0;
        if (!isfinite(mult[r])) {   /* a zero y_scale: the portable expression */
            nn_qrq_row_generic(acc + r * ldt, cols, b, mult[r], yzp, is_signed, dst + r * ldd);
            continue;
        }
        const __m128i v = nn_qrq16_avx512(_mm512_maskz_loadu_epi32(m, acc + r * ldt), _mm512_set1_epi32(b),
                                    _mm512_set1_ps(mult[r]), vz16, is_signed);
        if (cols == 16) _mm_storeu_si128((__m128i *)(void *)(dst + r * ldd), v);
        else _mm_mask_storeu_epi8(dst + r * ldd, m, v);
    }
}
/* rq_tile_cols at AVX-512: the column multipliers are one vector, four rows narrow together
 * (nn_qrq_pack4_avx512, lane j row j), narrow tiles load and store with masks. */
QDW_T512 void nn_qrq_tile_cols_avx512(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const float *mult,
                                      int32_t yzp, int is_signed, uint8_t *dst, size_t ldd) {
    if (cols > 16 || cols == 0) {
        if (cols) nn_qrq_tile_cols_generic(acc, ldt, rows, cols, mult, yzp, is_signed, dst, ldd);
        return;
    }
    const __mmask16 m = (__mmask16)(cols == 16 ? 0xffffu : (1u << cols) - 1);
    const __m512 vm = _mm512_maskz_loadu_ps(m, mult);
    /* |mult| <= FLT_MAX is false for infinities and NaN: those tiles take the portable expression */
    if (_mm512_mask_cmp_ps_mask(m, _mm512_abs_ps(vm), _mm512_set1_ps(3.40282347e+38f), _CMP_LE_OQ) != m) {
        nn_qrq_tile_cols_generic(acc, ldt, rows, cols, mult, yzp, is_signed, dst, ldd);
        return;
    }
    const __m512i z = _mm512_setzero_si512(), vz = _mm512_set1_epi16((int16_t)yzp);
    const __m256i vz16 = _mm256_set1_epi16((int16_t)yzp);
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        const __m512i o = nn_qrq_pack4_avx512(nn_qrq_i32_avx512(_mm512_maskz_loadu_epi32(m, acc + r * ldt), z, vm),
                                              nn_qrq_i32_avx512(_mm512_maskz_loadu_epi32(m, acc + (r + 1) * ldt), z, vm),
                                              nn_qrq_i32_avx512(_mm512_maskz_loadu_epi32(m, acc + (r + 2) * ldt), z, vm),
                                              nn_qrq_i32_avx512(_mm512_maskz_loadu_epi32(m, acc + (r + 3) * ldt), z, vm),
                                              vz, is_signed);
        _mm_mask_storeu_epi8(dst + r * ldd, m, _mm512_castsi512_si128(o));
        _mm_mask_storeu_epi8(dst + (r + 1) * ldd, m, _mm512_extracti32x4_epi32(o, 1));
        _mm_mask_storeu_epi8(dst + (r + 2) * ldd, m, _mm512_extracti32x4_epi32(o, 2));
        _mm_mask_storeu_epi8(dst + (r + 3) * ldd, m, _mm512_extracti32x4_epi32(o, 3));
    }
    for (; r < rows; r++)
        _mm_mask_storeu_epi8(dst + r * ldd, m, nn_qrq16_avx512(_mm512_maskz_loadu_epi32(m, acc + r * ldt), z, vm, vz16,
                                                               is_signed));
}

/* nn_qquad4_avx2's byte and word interleaves on four 16-column lanes at once: lane L of the four results
 * holds the quarters of panel L, so a 4x4 transpose of 128-bit lanes gives each panel one 64-byte store. */
QDW_T512 void nn_qquad4_avx512(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, size_t n,
                               uint8_t flip, uint8_t *out, size_t pstride) {
    const __m512i f = _mm512_set1_epi8((char)flip);
    size_t q = 0;
    for (; q + 64 <= n; q += 64, out += 4 * pstride) {
        const __m512i v0 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(r0 + q)), f);
        const __m512i v1 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(r1 + q)), f);
        const __m512i v2 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(r2 + q)), f);
        const __m512i v3 = _mm512_xor_si512(_mm512_loadu_si512((const void *)(r3 + q)), f);
        const __m512i l01 = _mm512_unpacklo_epi8(v0, v1), h01 = _mm512_unpackhi_epi8(v0, v1);
        const __m512i l23 = _mm512_unpacklo_epi8(v2, v3), h23 = _mm512_unpackhi_epi8(v2, v3);
        const __m512i a = _mm512_unpacklo_epi16(l01, l23), b = _mm512_unpackhi_epi16(l01, l23);
        const __m512i c = _mm512_unpacklo_epi16(h01, h23), d = _mm512_unpackhi_epi16(h01, h23);
        const __m512i t0 = _mm512_shuffle_i64x2(a, b, 0x44), t1 = _mm512_shuffle_i64x2(c, d, 0x44);
        const __m512i t2 = _mm512_shuffle_i64x2(a, b, 0xee), t3 = _mm512_shuffle_i64x2(c, d, 0xee);
        _mm512_storeu_si512((void *)out, _mm512_shuffle_i64x2(t0, t1, 0x88));
        _mm512_storeu_si512((void *)(out + pstride), _mm512_shuffle_i64x2(t0, t1, 0xdd));
        _mm512_storeu_si512((void *)(out + 2 * pstride), _mm512_shuffle_i64x2(t2, t3, 0x88));
        _mm512_storeu_si512((void *)(out + 3 * pstride), _mm512_shuffle_i64x2(t2, t3, 0xdd));
    }
    if (q < n) nn_qquad4_avx2(r0 + q, r1 + q, r2 + q, r3 + q, n - q, flip, out, pstride);
}
#endif
