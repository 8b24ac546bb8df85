/* AVX-512F SGEMM micro-kernels: up to 12 rows x 32 columns, 24 zmm accumulators, 2 B vectors per
 * k step, broadcasts of A. Edge tiles (fewer rows or columns) are computed by narrower variants of
 * the same body and stored with masks straight into C, so a 4-row or 16-column remainder costs a
 * third or a half of a full tile instead of a whole one plus a copy. */
#define NN_ACT_VEC_INLINE 1
#include "../gemm_ukernels.h"
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "x32_transpose_16x16_avx512.h"

static inline __attribute__((target("avx512f"))) __m512 nn_act16(__m512 v, int act, __m512 lo, __m512 hi) {
    if (act == 1) return _mm512_max_ps(v, _mm512_setzero_ps());
    if (act == 2) return _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    if (act == 3) return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, lo);
    if (act == 7) {   /* HardSwish: v * clamp(v / 6 + 0.5, 0, 1) */
        const __m512 t = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
        return _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(1.0f)));
    }
    return v;
}

/* R rows (4, 8 or 12; rows beyond args->rows read zero padding and are not stored), W = 1 (16
 * columns) or 2 (32 columns); m0/m1 mask the stores of the two column halves. */
#define NN_ROW(i, av)                                                \
    do {                                                             \
        if (R > i) {                                                 \
            const __m512 ai = _mm512_set1_ps(av);                    \
            c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);              \
            if (W > 1) c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);   \
        }                                                            \
    } while (0)
#define NN_INIT(i)                                                                                   \
    __m512 c##i##0 = R > i && args->bias ? _mm512_add_ps(_mm512_set1_ps(args->bias[i]), cb0) : cb0;     \
    __m512 c##i##1 = R > i && args->bias ? _mm512_add_ps(_mm512_set1_ps(args->bias[i]), cb1) : cb1
#define NN_STORE(i)                                                                    \
    do {                                                                               \
        if (R > i && (size_t)(i) < rows) {                                             \
            float *ci = c + (size_t)(i) * ldc;                                         \
            if (permute) {                                                             \
                const __m512 p0 = _mm512_permutex2var_ps(c##i##0, pidx0, c##i##1);    \
                c##i##1 = _mm512_permutex2var_ps(c##i##0, pidx1, c##i##1);             \
                c##i##0 = p0;                                                          \
            }                                                                          \
            if (args->accumulate) {                                                    \
                c##i##0 = _mm512_add_ps(c##i##0, _mm512_maskz_loadu_ps(m0, ci));       \
                if (W > 1) c##i##1 = _mm512_add_ps(c##i##1, _mm512_maskz_loadu_ps(m1, ci + 16)); \
            }                                                                          \
            if (cadd) {                                                                \
                const float *ai = cadd + (size_t)(i) * ldc;                            \
                c##i##0 = _mm512_add_ps(c##i##0, _mm512_maskz_loadu_ps(m0, ai));       \
                if (W > 1) c##i##1 = _mm512_add_ps(c##i##1, _mm512_maskz_loadu_ps(m1, ai + 16)); \
            }                                                                          \
            if (act && XACT) {                                                         \
                c##i##0 = nn_act512(act, c##i##0, vlo, vhi);                           \
                if (W > 1) c##i##1 = nn_act512(act, c##i##1, vlo, vhi);                \
            } else if (act) {                                                          \
                c##i##0 = nn_act16(c##i##0, act, vlo, vhi);                            \
                if (W > 1) c##i##1 = nn_act16(c##i##1, act, vlo, vhi);                 \
            }                                                                          \
            _mm512_mask_storeu_ps(ci, m0, c##i##0);                                    \
            if (W > 1) _mm512_mask_storeu_ps(ci + 16, m1, c##i##1);                    \
        }                                                                              \
    } while (0)

/* The indirect B rows are taps of different channels and phases, each a new run of lines that
 * the hardware prefetchers do not foresee; where the panel does not stay in L1 (b_ind_ahead)
 * fetch row p + NN_IND_B_AHEAD's lines (start, middle, end of its 16 or 32 floats) while row p
 * is multiplied. */
#define NN_IND_B_AHEAD 8
#define NN_IND_PREFETCH_B(bi, p, kc, off, W)                                                  \
    do {                                                                                      \
        if (!args->b_ind_ahead) break;                                                        \
        const float *nb_ = (bi)[(p) + NN_IND_B_AHEAD < (kc) ? (p) + NN_IND_B_AHEAD : (p)] + (off); \
        _mm_prefetch((const char *)nb_, _MM_HINT_T0);                                         \
        _mm_prefetch((const char *)(nb_ + 16 * (W) - 1), _MM_HINT_T0);                        \
        if ((W) > 1) _mm_prefetch((const char *)(nb_ + 16), _MM_HINT_T0);                     \
    } while (0)

static inline __attribute__((always_inline, target("avx512f"))) void
ukr_body(const nn_ukr_args *args, const int R, const int W, const int XACT, size_t rows, __mmask16 m0, __mmask16 m1) {
    /* column start values (a MatMul's bias) under the row ones */
    const __m512 cb0 = args->col_bias ? _mm512_maskz_loadu_ps(m0, args->col_bias) : _mm512_setzero_ps();
    const __m512 cb1 = args->col_bias && W > 1 ? _mm512_maskz_loadu_ps(m1, args->col_bias + 16) : _mm512_setzero_ps();
    NN_INIT(0); NN_INIT(1); NN_INIT(2); NN_INIT(3); NN_INIT(4); NN_INIT(5);
    NN_INIT(6); NN_INIT(7); NN_INIT(8); NN_INIT(9); NN_INIT(10); NN_INIT(11);
    const size_t kc = args->kc, ldb = args->ldb, ldc = args->ldc;
    const float *b = args->b;
    float *c = args->c;
    if (args->b_ind && args->b_prefetch) {
        /* ... fetching another stream meanwhile (the next A panel, cold conv weights) */
        const float *const *bi = args->b_ind;
        const float *a = args->a, *pf = args->b_prefetch;
        const size_t step = args->a_cs, off = args->b_off, pld = args->b_prefetch_ld;
        for (size_t p = 0; p < kc; p++, a += step, pf += pld) {
            _mm_prefetch((const char *)pf, _MM_HINT_T1);
            NN_IND_PREFETCH_B(bi, p, kc, off, W);
            const float *bp = bi[p] + off;
            const __m512 b0 = _mm512_loadu_ps(bp), b1 = W > 1 ? _mm512_loadu_ps(bp + 16) : b0;
            NN_ROW(0, a[0]); NN_ROW(1, a[1]); NN_ROW(2, a[2]); NN_ROW(3, a[3]); NN_ROW(4, a[4]); NN_ROW(5, a[5]);
            NN_ROW(6, a[6]); NN_ROW(7, a[7]); NN_ROW(8, a[8]); NN_ROW(9, a[9]); NN_ROW(10, a[10]); NN_ROW(11, a[11]);
        }
    } else if (args->b_ind) {   /* indirect B (convolution taps read in place), A packed */
        const float *const *bi = args->b_ind;
        const float *a = args->a;
        const size_t step = args->a_cs, off = args->b_off;
        for (size_t p = 0; p < kc; p++, a += step) {
            NN_IND_PREFETCH_B(bi, p, kc, off, W);
            const float *bp = bi[p] + off;
            const __m512 b0 = _mm512_loadu_ps(bp), b1 = W > 1 ? _mm512_loadu_ps(bp + 16) : b0;
            NN_ROW(0, a[0]); NN_ROW(1, a[1]); NN_ROW(2, a[2]); NN_ROW(3, a[3]); NN_ROW(4, a[4]); NN_ROW(5, a[5]);
            NN_ROW(6, a[6]); NN_ROW(7, a[7]); NN_ROW(8, a[8]); NN_ROW(9, a[9]); NN_ROW(10, a[10]); NN_ROW(11, a[11]);
        }
    } else if (args->a_rs == 1 && args->b_prefetch) {
        /* B streamed from memory and reused by few rows: fetch the next panel into L2 meanwhile */
        const float *a = args->a, *pf = args->b_prefetch;
        const size_t step = args->a_cs, pld = args->b_prefetch_ld ? args->b_prefetch_ld : 32;
        for (size_t p = 0; p < kc; p++, a += step, b += ldb, pf += pld) {
            _mm_prefetch((const char *)pf, _MM_HINT_T1);
            _mm_prefetch((const char *)(pf + 16), _MM_HINT_T1);
            const __m512 b0 = _mm512_loadu_ps(b), b1 = W > 1 ? _mm512_loadu_ps(b + 16) : b0;
            NN_ROW(0, a[0]); NN_ROW(1, a[1]); NN_ROW(2, a[2]); NN_ROW(3, a[3]); NN_ROW(4, a[4]); NN_ROW(5, a[5]);
            NN_ROW(6, a[6]); NN_ROW(7, a[7]); NN_ROW(8, a[8]); NN_ROW(9, a[9]); NN_ROW(10, a[10]); NN_ROW(11, a[11]);
        }
    } else if (args->a_rs == 1) {
        const float *a = args->a;
        const size_t step = args->a_cs;
        for (size_t p = 0; p < kc; p++, a += step, b += ldb) {
            const __m512 b0 = _mm512_loadu_ps(b), b1 = W > 1 ? _mm512_loadu_ps(b + 16) : b0;
            NN_ROW(0, a[0]); NN_ROW(1, a[1]); NN_ROW(2, a[2]); NN_ROW(3, a[3]); NN_ROW(4, a[4]); NN_ROW(5, a[5]);
            NN_ROW(6, a[6]); NN_ROW(7, a[7]); NN_ROW(8, a[8]); NN_ROW(9, a[9]); NN_ROW(10, a[10]); NN_ROW(11, a[11]);
        }
    } else {   /* rows of A read in place (a_cs == 1): R sequential streams (only full tiles come here) */
        const size_t rs = args->a_rs;
        const float *r0 = args->a, *r1 = r0 + rs, *r2 = r1 + rs, *r3 = r2 + rs, *r4 = r3 + rs, *r5 = r4 + rs;
        const float *r6 = r5 + rs, *r7 = r6 + rs, *r8 = r7 + rs, *r9 = r8 + rs, *r10 = r9 + rs, *r11 = r10 + rs;
        for (size_t p = 0; p < kc; p++, b += ldb) {
            const __m512 b0 = _mm512_loadu_ps(b), b1 = W > 1 ? _mm512_loadu_ps(b + 16) : b0;
            NN_ROW(0, r0[p]); NN_ROW(1, r1[p]); NN_ROW(2, r2[p]); NN_ROW(3, r3[p]); NN_ROW(4, r4[p]);
            NN_ROW(5, r5[p]); NN_ROW(6, r6[p]); NN_ROW(7, r7[p]); NN_ROW(8, r8[p]); NN_ROW(9, r9[p]);
            NN_ROW(10, r10[p]); NN_ROW(11, r11[p]);
        }
    }
    const int act = args->act;
    const float *cadd = args->c_add;
    __m512i pidx0 = _mm512_setzero_si512(), pidx1 = pidx0;
    const int permute = W > 1 && args->perm;
    if (permute) {
        pidx0 = _mm512_loadu_si512(args->perm);
        pidx1 = _mm512_loadu_si512(args->perm + 16);
    }
    const __m512 vlo = _mm512_set1_ps(args->act_lo), vhi = _mm512_set1_ps(args->act_hi);
    NN_STORE(0); NN_STORE(1); NN_STORE(2); NN_STORE(3); NN_STORE(4); NN_STORE(5);
    NN_STORE(6); NN_STORE(7); NN_STORE(8); NN_STORE(9); NN_STORE(10); NN_STORE(11);
}

#define NN_VARIANT(R, W, X, NAME)                                                                   \
    static __attribute__((noinline, target("avx512f"))) void NAME(const nn_ukr_args *args, size_t rows,  \
                                                                  __mmask16 m0, __mmask16 m1) {         \
        ukr_body(args, R, W, X, rows, m0, m1);                                                      \
    }
NN_VARIANT(4, 1, 0, ukr_4x1)
NN_VARIANT(8, 1, 0, ukr_8x1)
NN_VARIANT(12, 1, 0, ukr_12x1)
NN_VARIANT(4, 2, 0, ukr_4x2)
NN_VARIANT(8, 2, 0, ukr_8x2)
NN_VARIANT(12, 2, 0, ukr_12x2)
/* Sigmoid / HardSigmoid / SiLU on the accumulators: separate copies so the common kernels keep
 * their code (nn_gemm uses these only for short K, where a second pass would cost more) */
NN_VARIANT(4, 1, 1, ukr_x_4x1)
NN_VARIANT(8, 1, 1, ukr_x_8x1)
NN_VARIANT(12, 1, 1, ukr_x_12x1)
NN_VARIANT(4, 2, 1, ukr_x_4x2)
NN_VARIANT(8, 2, 1, ukr_x_8x2)
NN_VARIANT(12, 2, 1, ukr_x_12x2)

__attribute__((target("avx512f")))
void nn_ukr_avx512_12x32(const nn_ukr_args *args) {
    if (args->panels > 1) {   /* a run of full tiles (short K: the per-tile call costs count) */
        nn_ukr_args u = *args;
        u.panels = 0;
        const size_t rows = args->rows ? args->rows : 12;
        for (size_t q = 0; q < args->panels; q++) {
            if (q + 1 < args->panels)
                for (size_t r = 0; r < rows; r++) {
                    _mm_prefetch((const char *)(u.c + r * u.ldc + 32), _MM_HINT_ET0);
                    _mm_prefetch((const char *)(u.c + r * u.ldc + 48), _MM_HINT_ET0);
                }
            nn_ukr_avx512_12x32(&u);
            if (u.b_ind) u.b_off += 32;   /* indirect B: the taps' next 32 columns */
            else u.b += 32;
            u.c += 32;
            if (u.c_add) u.c_add += 32;
            if (u.col_bias) u.col_bias += 32;
            if (u.b_prefetch) u.b_prefetch += 32;
        }
        return;
    }
    const size_t rows = args->rows ? args->rows : 12;
    /* a permuted tile stores `kept` columns */
    const size_t cols = args->perm ? args->kept : args->cols ? args->cols : 32;
    const int xact = args->act >= CORT_ACT_SIGMOID && args->act <= CORT_ACT_SILU;
    if (rows == 12 && cols == 32 && !xact && !args->perm) {
        ukr_body(args, 12, 2, 0, 12, 0xffff, 0xffff);
        return;
    }
    const __mmask16 m0 = cols >= 16 ? 0xffff : (__mmask16)((1u << cols) - 1);
    const __mmask16 m1 = cols >= 32 ? 0xffff : cols <= 16 ? 0 : (__mmask16)((1u << (cols - 16)) - 1);
    /* edge tiles: [activation on the accumulators][16 or 32 columns][4, 8 or 12 rows] */
    typedef void (*edge_fn)(const nn_ukr_args *, size_t, __mmask16, __mmask16);
    static const edge_fn edge[2][2][3] = {
        { { ukr_4x1, ukr_8x1, ukr_12x1 }, { ukr_4x2, ukr_8x2, ukr_12x2 } },
        { { ukr_x_4x1, ukr_x_8x1, ukr_x_12x1 }, { ukr_x_4x2, ukr_x_8x2, ukr_x_12x2 } },
    };
    edge[xact][cols > 16 || args->perm][rows <= 4 ? 0 : rows <= 8 ? 1 : 2](args, rows, m0, m1);
}
#endif

#ifdef NN_HAVE_X86_UKERNELS
#if defined(__clang__)
#define NN_GEMM_UNROLL _Pragma("clang loop unroll(full)")
#else
#define NN_GEMM_UNROLL _Pragma("GCC unroll 32")
#endif

/* R rows (1..13, exactly the tile's) of accumulators over all K slices, A read in place (the
 * positions of one input channel are contiguous: no packing pass, which was 16 % of a 7x7 pointwise
 * conv), then the transposed epilogue: per 16-channel half, bias on the lanes, a 16x16 register
 * transpose (rows beyond R are zero), and each channel's run of positions stored with a mask after
 * the residual and the activation. 13 rows (26 accumulators) take 49 positions as 12+12+12+13
 * instead of a load-bound 1-row tile. */
static inline __attribute__((always_inline, target("avx512f"))) void tstore_body(const nn_tstore_args *t, const int R,
                                                                                  const int W) {
    __m512 acc[26];
NN_GEMM_UNROLL
    for (int i = 0; i < 2 * R; i++) acc[i] = _mm512_setzero_ps();
    const size_t lda = t->lda;
    for (size_t k0 = 0; k0 < t->K; k0 += t->kc_max) {
        const size_t kc = t->K - k0 < t->kc_max ? t->K - k0 : t->kc_max;
        const float *a = t->a + k0 * lda;
        const float *b = t->b + k0 * t->b_panels * 32 + t->jp * 32 * kc;
        /* the first tile of a panel pulls the next panel's weights from memory meanwhile */
        const float *pf = t->prefetch_next ? b + 32 * kc : NULL;
        for (size_t p = 0; p < kc; p++, a += lda, b += 32) {
            if (pf) {
                _mm_prefetch((const char *)(pf + 32 * p), _MM_HINT_T1);
                if (W > 1) _mm_prefetch((const char *)(pf + 32 * p + 16), _MM_HINT_T1);
            }
            /* A's rows are P floats apart (784 B for a 14x14 plane): the hardware prefetchers
             * did not keep up, and the broadcasts of a tile's rows stalled on L2 and L3 */
            _mm_prefetch((const char *)(a + NN_TSTORE_A_AHEAD * lda), _MM_HINT_T0);
            if (R > 1) _mm_prefetch((const char *)(a + NN_TSTORE_A_AHEAD * lda + R - 1), _MM_HINT_T0);
            const __m512 b0 = _mm512_loadu_ps(b), b1 = W > 1 ? _mm512_loadu_ps(b + 16) : b0;
NN_GEMM_UNROLL
            for (int i = 0; i < R; i++) {
                const __m512 ai = _mm512_set1_ps(a[i]);
                acc[2 * i] = _mm512_fmadd_ps(ai, b0, acc[2 * i]);
                if (W > 1) acc[2 * i + 1] = _mm512_fmadd_ps(ai, b1, acc[2 * i + 1]);
            }
        }
    }
    const __mmask16 mrow = (__mmask16)((1u << t->rows) - 1u);
    const __m512 lo = _mm512_set1_ps(t->act_lo), hi = _mm512_set1_ps(t->act_hi);
    for (size_t h = 0; h < (size_t)W && h * 16 < t->cols; h++) {
        const size_t nc = t->cols - h * 16 < 16 ? t->cols - h * 16 : 16;
        const __m512 vb = t->bias ? _mm512_maskz_loadu_ps((__mmask16)((1u << nc) - 1u), t->bias + h * 16)
                                  : _mm512_setzero_ps();
        __m512 r[16];
NN_GEMM_UNROLL
        for (int i = 0; i < 16; i++) r[i] = i < R ? _mm512_add_ps(acc[2 * i + (int)h], vb) : _mm512_setzero_ps();
        nn_tr16x16_avx512(r);
        float *y = t->y + h * 16 * t->ldy;
        const float *sum = t->sum ? t->sum + h * 16 * t->ldy : NULL;
NN_GEMM_UNROLL
        for (int c = 0; c < 16; c++) {
            if ((size_t)c >= nc) break;
            __m512 v = r[c];
            if (sum) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mrow, sum + (size_t)c * t->ldy));
            if (t->act) v = nn_act512(t->act, v, lo, hi);
            _mm512_mask_storeu_ps(y + (size_t)c * t->ldy, mrow, v);
        }
    }
}

/* W = 1: a last panel of at most 16 channels (112 = 3 x 32 + 16) computes only its half */
#define NN_TSTORE_VARIANT(R)                                                                          \
    __attribute__((target("avx512f"))) static void tstore_##R(const nn_tstore_args *t) { tstore_body(t, R, 2); } \
    __attribute__((target("avx512f"))) static void tstore_h##R(const nn_tstore_args *t) { tstore_body(t, R, 1); }
NN_TSTORE_VARIANT(1) NN_TSTORE_VARIANT(2) NN_TSTORE_VARIANT(3) NN_TSTORE_VARIANT(4) NN_TSTORE_VARIANT(5)
NN_TSTORE_VARIANT(6) NN_TSTORE_VARIANT(7) NN_TSTORE_VARIANT(8) NN_TSTORE_VARIANT(9) NN_TSTORE_VARIANT(10)
NN_TSTORE_VARIANT(11) NN_TSTORE_VARIANT(12) NN_TSTORE_VARIANT(13)
#undef NN_TSTORE_VARIANT

void nn_ukr_avx512_12x32_tstore(const nn_tstore_args *t) {
    /* one variant per row count: A is read in place, so no row beyond the tile may be loaded */
    static void (*const variant[2][13])(const nn_tstore_args *) = {
        { tstore_h1, tstore_h2, tstore_h3, tstore_h4, tstore_h5, tstore_h6, tstore_h7,
          tstore_h8, tstore_h9, tstore_h10, tstore_h11, tstore_h12, tstore_h13 },
        { tstore_1, tstore_2, tstore_3, tstore_4, tstore_5, tstore_6, tstore_7,
          tstore_8, tstore_9, tstore_10, tstore_11, tstore_12, tstore_13 },
    };
    variant[t->cols > 16][(t->rows < 1 ? 1 : t->rows > 13 ? 13 : t->rows) - 1](t);
}

/* acc[0..31] += sum_p a[p * inca] * b[p * 32 + j]: one packed B panel of the 12x32 kernel times
 * a vector (M == 1). Four k-steps in flight so the FMA latency is hidden. */
__attribute__((target("avx512f")))
void nn_gemv_panel_avx512_32(size_t kc, const float *a, size_t inca, const float *b, float *acc) {
    __m512 x0 = _mm512_setzero_ps(), x1 = x0, y0 = x0, y1 = x0, z0 = x0, z1 = x0, u0 = x0, u1 = x0;
    size_t p = 0;
    for (; p + 4 <= kc; p += 4, b += 128) {
        const __m512 a0 = _mm512_set1_ps(a[p * inca]), a1 = _mm512_set1_ps(a[(p + 1) * inca]);
        const __m512 a2 = _mm512_set1_ps(a[(p + 2) * inca]), a3 = _mm512_set1_ps(a[(p + 3) * inca]);
        x0 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b), x0);
        x1 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b + 16), x1);
        y0 = _mm512_fmadd_ps(a1, _mm512_loadu_ps(b + 32), y0);
        y1 = _mm512_fmadd_ps(a1, _mm512_loadu_ps(b + 48), y1);
        z0 = _mm512_fmadd_ps(a2, _mm512_loadu_ps(b + 64), z0);
        z1 = _mm512_fmadd_ps(a2, _mm512_loadu_ps(b + 80), z1);
        u0 = _mm512_fmadd_ps(a3, _mm512_loadu_ps(b + 96), u0);
        u1 = _mm512_fmadd_ps(a3, _mm512_loadu_ps(b + 112), u1);
    }
    for (; p < kc; p++, b += 32) {
        const __m512 a0 = _mm512_set1_ps(a[p * inca]);
        x0 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b), x0);
        x1 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b + 16), x1);
    }
    x0 = _mm512_add_ps(_mm512_add_ps(x0, y0), _mm512_add_ps(z0, u0));
    x1 = _mm512_add_ps(_mm512_add_ps(x1, y1), _mm512_add_ps(z1, u1));
    _mm512_storeu_ps(acc, _mm512_add_ps(_mm512_loadu_ps(acc), x0));
    _mm512_storeu_ps(acc + 16, _mm512_add_ps(_mm512_loadu_ps(acc + 16), x1));
}
#endif
