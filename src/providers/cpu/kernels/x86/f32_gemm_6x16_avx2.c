/* AVX2+FMA SGEMM micro-kernels: up to 6 rows x 16 columns. 12 ymm accumulators, 2 B vectors and
 * 1 broadcast use 15 of the 16 registers; a 4x24 tile would need all 16 and 3 B loads per k step
 * (the same loads per FMA), so 6x16 keeps a register free for the loop's address arithmetic.
 * Edge tiles (fewer rows or columns) run narrower copies of the same body and store with masks
 * straight into C; the epilogue adds the column bias, the residual (c_add) and any activation
 * while the tile is in registers, so conv and MatMul get the same fused paths as at avx512. */
#define NN_ACT_VEC_INLINE 1
#include "../gemm_ukernels.h"
#include "../act_ukernels.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#include "x32_store_avx2.h"
#include "x32_transpose_8x8_avx2.h"

#define NN_AVX2 __attribute__((target("avx2,fma")))
#define NN_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

/* 8 lanes of -1 then 8 of 0: loadu at (8 - n) is the mask of the first n lanes (0 <= n <= 8). */
static const int32_t nn_lane_mask_tbl[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
NN_AVX2_INLINE __m256i nn_lanes8(size_t n) {
    return _mm256_loadu_si256((const __m256i *)(const void *)(nn_lane_mask_tbl + 8 - (n > 8 ? 8 : n)));
}

/* Any CORT_ACT_* on a register; Sigmoid, SiLU and GELU only when X (their code stays out of the
 * common kernels). */
NN_AVX2_INLINE __m256 nn_act8(int kind, __m256 v, __m256 lo, __m256 hi, const int X) {
    const __m256 zero = _mm256_setzero_ps();
    switch (kind) {
    case CORT_ACT_RELU: return _mm256_max_ps(v, zero);
    case CORT_ACT_CLIP: return _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    case CORT_ACT_LEAKY_RELU: return _mm256_blendv_ps(v, _mm256_mul_ps(v, lo), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    case CORT_ACT_SIGMOID: return X ? nn_sigmoid256(v) : v;
    case CORT_ACT_HARD_SIGMOID:
        return _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(lo, v, hi), zero), _mm256_set1_ps(1.0f));
    case CORT_ACT_SILU: return X ? nn_silu256(v) : v;
    case CORT_ACT_GELU: return X ? nn_gelu256(v) : v;
    case CORT_ACT_HARD_SWISH: {
        const __m256 h = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(_mm256_max_ps(h, zero), _mm256_set1_ps(1.0f)));
    }
    default: return v;
    }
}

/* the activations whose code only the X variants carry */
static inline int nn_xact(int kind) {
    return (kind >= CORT_ACT_SIGMOID && kind <= CORT_ACT_SILU) || kind == CORT_ACT_GELU;
}

/* loads/stores of 8 floats: plain for a full tile, masked for an edge one */
#define NN_LD(p, m) (FULL ? _mm256_loadu_ps(p) : _mm256_maskload_ps((p), (m)))
#define NN_ST(p, m, v) do { if (FULL) _mm256_storeu_ps((p), (v)); else _mm256_maskstore_ps((p), (m), (v)); } while (0)

/* R rows (1..6; with packed A, rows beyond args->rows read zero padding and are not stored), W = 1
 * (8 columns) or 2 (16 columns); m0/m1 mask the two column halves. */
#define NN_ROW(i, av)                                                \
    do {                                                             \
        if (R > i) {                                                 \
            const __m256 ai = _mm256_set1_ps(av);                    \
            c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);              \
            if (W > 1) c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);   \
        }                                                            \
    } while (0)
#define NN_ROWS(A0, A1, A2, A3, A4, A5) \
    do { NN_ROW(0, A0); NN_ROW(1, A1); NN_ROW(2, A2); NN_ROW(3, A3); NN_ROW(4, A4); NN_ROW(5, A5); } while (0)
#define NN_INIT(i)                                                                                   \
    __m256 c##i##0 = R > i && args->bias ? _mm256_add_ps(_mm256_set1_ps(args->bias[i]), cb0) : cb0;     \
    __m256 c##i##1 = R > i && args->bias ? _mm256_add_ps(_mm256_set1_ps(args->bias[i]), cb1) : cb1
#define NN_STORE(i)                                                                    \
    do {                                                                               \
        if (R > i && (size_t)(i) < rows) {                                             \
            float *ci = c + (size_t)(i) * ldc;                                         \
            if (args->accumulate) {                                                    \
                c##i##0 = _mm256_add_ps(c##i##0, NN_LD(ci, m0));                       \
                if (W > 1) c##i##1 = _mm256_add_ps(c##i##1, NN_LD(ci + 8, m1));        \
            }                                                                          \
            if (cadd) {                                                                \
                const float *ai = cadd + (size_t)(i) * ldc;                            \
                c##i##0 = _mm256_add_ps(c##i##0, NN_LD(ai, m0));                       \
                if (W > 1) c##i##1 = _mm256_add_ps(c##i##1, NN_LD(ai + 8, m1));        \
            }                                                                          \
            if (act) {                                                                 \
                c##i##0 = nn_act8(act, c##i##0, vlo, vhi, XACT);                       \
                if (W > 1) c##i##1 = nn_act8(act, c##i##1, vlo, vhi, XACT);            \
            }                                                                          \
            NN_ST(ci, m0, c##i##0);                                                    \
            if (W > 1) NN_ST(ci + 8, m1, c##i##1);                                     \
        }                                                                              \
    } while (0)

NN_AVX2_INLINE void ukr_body(const nn_ukr_args *args, const int R, const int W, const int XACT, const int FULL,
                             size_t rows, __m256i m0, __m256i m1) {
    /* column start values (a MatMul's bias) under the row ones */
    const __m256 cb0 = args->col_bias ? NN_LD(args->col_bias, m0) : _mm256_setzero_ps();
    const __m256 cb1 = args->col_bias && W > 1 ? NN_LD(args->col_bias + 8, m1) : _mm256_setzero_ps();
    NN_INIT(0); NN_INIT(1); NN_INIT(2); NN_INIT(3); NN_INIT(4); NN_INIT(5);
    const size_t kc = args->kc, ldb = args->ldb, ldc = args->ldc;
    const float *b = args->b;
    float *c = args->c;
    /* indirect B: where the panel does not stay in L1 (b_ind_ahead), row p + 8's 8 or 16 floats
     * (new lines the hardware prefetchers do not foresee) are fetched while row p is used */
#define NN_IND_PREFETCH_B(bi, p, kc, off, W)                                                   \
    do {                                                                                       \
        if (!args->b_ind_ahead) break;                                                         \
        const float *nb_ = (bi)[(p) + 8 < (kc) ? (p) + 8 : (p)] + (off);                       \
        _mm_prefetch((const char *)nb_, _MM_HINT_T0);                                          \
        _mm_prefetch((const char *)(nb_ + 8 * (W) - 1), _MM_HINT_T0);                          \
    } while (0)
    if (args->b_ind) {   /* indirect B (convolution taps read in place), A packed */
        const float *const *bi = args->b_ind;
        const float *a = args->a, *pf = args->b_prefetch;
        const size_t step = args->a_cs, off = args->b_off, pld = args->b_prefetch_ld;
        if (pf) {   /* ... fetching another stream meanwhile (the next A panel, cold conv weights) */
            for (size_t p = 0; p < kc; p++, a += step, pf += pld) {
                _mm_prefetch((const char *)pf, _MM_HINT_T1);
                NN_IND_PREFETCH_B(bi, p, kc, off, W);
                const float *bp = bi[p] + off;
                const __m256 b0 = _mm256_loadu_ps(bp), b1 = W > 1 ? _mm256_loadu_ps(bp + 8) : b0;
                NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
            }
        } else {
            for (size_t p = 0; p < kc; p++, a += step) {
                NN_IND_PREFETCH_B(bi, p, kc, off, W);
                const float *bp = bi[p] + off;
                const __m256 b0 = _mm256_loadu_ps(bp), b1 = W > 1 ? _mm256_loadu_ps(bp + 8) : b0;
                NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
            }
        }
    } else if (args->a_rs == 1 && args->b_prefetch) {
        /* B streamed from memory and reused by few rows: fetch the next panel into L2 meanwhile */
        const float *a = args->a, *pf = args->b_prefetch;
        const size_t step = args->a_cs, pld = args->b_prefetch_ld ? args->b_prefetch_ld : 16;
        for (size_t p = 0; p < kc; p++, a += step, b += ldb, pf += pld) {
            _mm_prefetch((const char *)pf, _MM_HINT_T1);
            const __m256 b0 = _mm256_loadu_ps(b), b1 = W > 1 ? _mm256_loadu_ps(b + 8) : b0;
            NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
        }
    } else if (args->a_rs == 1 && args->b_rows_ahead) {
        /* B rows a plane apart (a 1x1 conv's input read in place): each row's 16 floats are a line
         * the L1 prefetchers do not foresee */
        const float *a = args->a;
        const size_t step = args->a_cs, ahead = args->b_rows_ahead * ldb;
        for (size_t p = 0; p < kc; p++, a += step, b += ldb) {
            _mm_prefetch((const char *)(b + ahead), _MM_HINT_T0);
            const __m256 b0 = _mm256_loadu_ps(b), b1 = W > 1 ? _mm256_loadu_ps(b + 8) : b0;
            NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
        }
    } else if (args->a_rs == 1) {   /* a packed panel, or A^T read in place (a_cs = its row stride) */
        const float *a = args->a;
        const size_t step = args->a_cs;
        for (size_t p = 0; p < kc; p++, a += step, b += ldb) {
            const __m256 b0 = _mm256_loadu_ps(b), b1 = W > 1 ? _mm256_loadu_ps(b + 8) : b0;
            NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
        }
    } else {   /* rows of A read in place (a_cs == 1): R sequential streams */
        const size_t rs = args->a_rs;
        const float *r0 = args->a, *r1 = R > 1 ? r0 + rs : r0, *r2 = R > 2 ? r1 + rs : r0;
        const float *r3 = R > 3 ? r2 + rs : r0, *r4 = R > 4 ? r3 + rs : r0, *r5 = R > 5 ? r4 + rs : r0;
        for (size_t p = 0; p < kc; p++, b += ldb) {
            const __m256 b0 = _mm256_loadu_ps(b), b1 = W > 1 ? _mm256_loadu_ps(b + 8) : b0;
            NN_ROWS(r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]);
        }
    }
    const int act = args->act;
    const float *cadd = args->c_add;
    const __m256 vlo = _mm256_set1_ps(args->act_lo), vhi = _mm256_set1_ps(args->act_hi);
    NN_STORE(0); NN_STORE(1); NN_STORE(2); NN_STORE(3); NN_STORE(4); NN_STORE(5);
}

#define NN_VARIANT(R, W, X, NAME)                                                                  \
    static __attribute__((noinline, target("avx2,fma"))) void NAME(const nn_ukr_args *args, size_t rows, \
                                                                   __m256i m0, __m256i m1) {           \
        ukr_body(args, R, W, X, 0, rows, m0, m1);                                                  \
    }
/* all 16 columns, fewer rows: plain stores (vmaskmovps stores are microcoded on Zen 1, a dozen
 * cycles each; a 32-channel conv's last row panel of 2 paid them on every tile) */
#define NN_VARIANT_FULLW(R, X, NAME)                                                               \
    static __attribute__((noinline, target("avx2,fma"))) void NAME(const nn_ukr_args *args, size_t rows, \
                                                                   __m256i m0, __m256i m1) {           \
        ukr_body(args, R, 2, X, 1, rows, m0, m1);                                                  \
    }
/* one copy per row count: A^T read in place (the small-plane conv) must not be read past the tile */
#define NN_VARIANTS(R)                                                                             \
    NN_VARIANT(R, 1, 0, ukr_##R##x1) NN_VARIANT(R, 2, 0, ukr_##R##x2)                              \
    NN_VARIANT(R, 1, 1, ukr_x_##R##x1) NN_VARIANT(R, 2, 1, ukr_x_##R##x2)                          \
    NN_VARIANT_FULLW(R, 0, ukr_##R##xf) NN_VARIANT_FULLW(R, 1, ukr_x_##R##xf)
NN_VARIANTS(1) NN_VARIANTS(2) NN_VARIANTS(3) NN_VARIANTS(4) NN_VARIANTS(5)
NN_VARIANT(6, 1, 0, ukr_6x1) NN_VARIANT(6, 2, 0, ukr_6x2) NN_VARIANT(6, 1, 1, ukr_x_6x1) NN_VARIANT(6, 2, 1, ukr_x_6x2)
#undef NN_VARIANTS
#undef NN_VARIANT_FULLW
#undef NN_VARIANT

static __attribute__((noinline, target("avx2,fma"))) void ukr_full(const nn_ukr_args *args) {
    const __m256i ones = _mm256_set1_epi32(-1);
    ukr_body(args, 6, 2, 0, 1, 6, ones, ones);
}
/* full tiles with Sigmoid/SiLU: not the masked edge variant, whose vmaskmovps stores are
 * microcoded on Zen 1 (a 16 -> 96 1x1 conv + SiLU at 112x112: 4.8 -> 4.1 ms without them) */
static __attribute__((noinline, target("avx2,fma"))) void ukr_x_full(const nn_ukr_args *args) {
    const __m256i ones = _mm256_set1_epi32(-1);
    ukr_body(args, 6, 2, 1, 1, 6, ones, ones);
}

/* A run of full 6x16 tiles in one function: the recursive form below pays the dispatch and
 * argument set-up per tile, which counts at short K (a 16 -> 96 1x1 conv at 112x112: 1.53 ->
 * 1.42 ms this way) */
NN_AVX2_INLINE void ukr_full_run_body(const nn_ukr_args *args, const int X) {
    nn_ukr_args u = *args;
    u.panels = 0;
    const __m256i ones = _mm256_set1_epi32(-1);
    for (size_t q = 0; q < args->panels; q++) {
        if (q + 1 < args->panels)
            for (size_t r = 0; r < 6; r++) __builtin_prefetch(u.c + r * u.ldc + 16, 1, 3);
        ukr_body(&u, 6, 2, X, 1, 6, ones, ones);
        if (u.b_ind) u.b_off += 16;
        else u.b += 16;
        u.c += 16;
        if (u.c_add) u.c_add += 16;
        if (u.col_bias) u.col_bias += 16;
        if (u.b_prefetch) u.b_prefetch += 16;
    }
}
static __attribute__((noinline, target("avx2,fma"))) void ukr_full_run(const nn_ukr_args *args) {
    ukr_full_run_body(args, 0);
}
static __attribute__((noinline, target("avx2,fma"))) void ukr_x_full_run(const nn_ukr_args *args) {
    ukr_full_run_body(args, 1);
}

NN_AVX2
void nn_ukr_avx2_6x16(const nn_ukr_args *args) {
    if (args->panels > 1 && (args->rows == 0 || args->rows == 6)) {
        (nn_xact(args->act) ? ukr_x_full_run : ukr_full_run)(args);
        return;
    }
    if (args->panels > 1) {   /* a run of full tiles (short K: the per-tile call costs count) */
        nn_ukr_args u = *args;
        u.panels = 0;
        const size_t rows = args->rows ? args->rows : 6;
        for (size_t q = 0; q < args->panels; q++) {
            if (q + 1 < args->panels)
                for (size_t r = 0; r < rows; r++) __builtin_prefetch(u.c + r * u.ldc + 16, 1, 3);
            nn_ukr_avx2_6x16(&u);
            if (u.b_ind) u.b_off += 16;   /* indirect B: the taps' next 16 columns */
            else u.b += 16;
            u.c += 16;
            if (u.c_add) u.c_add += 16;
            if (u.col_bias) u.col_bias += 16;
            if (u.b_prefetch) u.b_prefetch += 16;
        }
        return;
    }
    const size_t rows = args->rows ? args->rows : 6, cols = args->cols ? args->cols : 16;
    const int xact = nn_xact(args->act);
    if (rows == 6 && cols == 16) {
        (xact ? ukr_x_full : ukr_full)(args);
        return;
    }
    const __m256i m0 = nn_lanes8(cols), m1 = nn_lanes8(cols > 8 ? cols - 8 : 0);
    typedef void (*edge_fn)(const nn_ukr_args *, size_t, __m256i, __m256i);
    if (cols == 16 && rows < 6) {
        static const edge_fn fullw[2][5] = { { ukr_1xf, ukr_2xf, ukr_3xf, ukr_4xf, ukr_5xf },
                                             { ukr_x_1xf, ukr_x_2xf, ukr_x_3xf, ukr_x_4xf, ukr_x_5xf } };
        fullw[xact][rows - 1](args, rows, m0, m1);
        return;
    }
    /* [activation on the accumulators][8 or 16 columns][rows] */
    static const edge_fn edge[2][2][6] = {
        { { ukr_1x1, ukr_2x1, ukr_3x1, ukr_4x1, ukr_5x1, ukr_6x1 }, { ukr_1x2, ukr_2x2, ukr_3x2, ukr_4x2, ukr_5x2, ukr_6x2 } },
        { { ukr_x_1x1, ukr_x_2x1, ukr_x_3x1, ukr_x_4x1, ukr_x_5x1, ukr_x_6x1 },
          { ukr_x_1x2, ukr_x_2x2, ukr_x_3x2, ukr_x_4x2, ukr_x_5x2, ukr_x_6x2 } },
    };
    edge[xact][cols > 8][(rows > 6 ? 6 : rows) - 1](args, rows, m0, m1);
}

/* acc[0..15] += sum_p a[p * inca] * b[p * 16 + j]: one packed B panel of the 6x16 kernel times a
 * vector (M == 1). Four k steps in flight (8 accumulators) hide the FMA latency; the loop is bound
 * by the stream of B. */
NN_AVX2
void nn_gemv_panel_avx2_16(size_t kc, const float *a, size_t inca, const float *b, float *acc) {
    __m256 x0 = _mm256_setzero_ps(), x1 = x0, y0 = x0, y1 = x0, z0 = x0, z1 = x0, u0 = x0, u1 = x0;
    size_t p = 0;
    for (; p + 4 <= kc; p += 4, b += 64) {
        const __m256 a0 = _mm256_set1_ps(a[p * inca]), a1 = _mm256_set1_ps(a[(p + 1) * inca]);
        const __m256 a2 = _mm256_set1_ps(a[(p + 2) * inca]), a3 = _mm256_set1_ps(a[(p + 3) * inca]);
        x0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b), x0);
        x1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + 8), x1);
        y0 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(b + 16), y0);
        y1 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(b + 24), y1);
        z0 = _mm256_fmadd_ps(a2, _mm256_loadu_ps(b + 32), z0);
        z1 = _mm256_fmadd_ps(a2, _mm256_loadu_ps(b + 40), z1);
        u0 = _mm256_fmadd_ps(a3, _mm256_loadu_ps(b + 48), u0);
        u1 = _mm256_fmadd_ps(a3, _mm256_loadu_ps(b + 56), u1);
    }
    for (; p < kc; p++, b += 16) {
        const __m256 a0 = _mm256_set1_ps(a[p * inca]);
        x0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b), x0);
        x1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + 8), x1);
    }
    x0 = _mm256_add_ps(_mm256_add_ps(x0, y0), _mm256_add_ps(z0, u0));
    x1 = _mm256_add_ps(_mm256_add_ps(x1, y1), _mm256_add_ps(z1, u1));
    _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_loadu_ps(acc), x0));
    _mm256_storeu_ps(acc + 8, _mm256_add_ps(_mm256_loadu_ps(acc + 8), x1));
}


/* The 6x16 kernel's transposed-store tile (the small-plane conv; see nn_tstore_args): R rows
 * (1..6, exactly the tile's: A^T is read in place) of accumulators over all K slices, then per
 * 8-channel half an 8x8 register transpose (rows beyond R are zero) and each channel's R positions
 * stored with a mask after bias, residual and activation. */
/* A's rows are P floats apart; without this the broadcasts of a tile's rows stalled on L2/L3 */
#define NN_TSTORE_PREFETCH_A(a, lda, R)                                                         \
    do {                                                                                        \
        _mm_prefetch((const char *)((a) + NN_TSTORE_A_AHEAD * (lda)), _MM_HINT_T0);             \
        if ((R) > 1) _mm_prefetch((const char *)((a) + NN_TSTORE_A_AHEAD * (lda) + (R) - 1), _MM_HINT_T0); \
    } while (0)
#define NN_TSTORE_LOAD(i)                                                                  \
    do {                                                                                   \
        if (R > i) {                                                                       \
            c##i##0 = _mm256_loadu_ps(acc + i * 16);                                       \
            if (W > 1) c##i##1 = _mm256_loadu_ps(acc + i * 16 + 8);                        \
        }                                                                                  \
    } while (0)
#define NN_TSTORE_SAVE(i)                                                                  \
    do {                                                                                   \
        if (R > i) {                                                                       \
            _mm256_storeu_ps(acc + i * 16, c##i##0);                                       \
            if (W > 1) _mm256_storeu_ps(acc + i * 16 + 8, c##i##1);                        \
        }                                                                                  \
    } while (0)
NN_AVX2_INLINE void tstore_body(const nn_tstore_args *t, const int R, const int W, const int X) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    float *acc = t->acc;
    if (acc && !t->first) {
        NN_TSTORE_LOAD(0); NN_TSTORE_LOAD(1); NN_TSTORE_LOAD(2); NN_TSTORE_LOAD(3); NN_TSTORE_LOAD(4); NN_TSTORE_LOAD(5);
    }
    const size_t lda = t->lda, k_end = t->k_end ? t->k_end : t->K;
    const float *pfb = t->prefetch_block;
    for (size_t k0 = t->k_end ? t->k_begin : 0; k0 < k_end;) {
        /* the slice holding step k0, and the steps of it this call runs */
        const size_t s0 = k0 / t->kc_max * t->kc_max;
        const size_t kc = t->K - s0 < t->kc_max ? t->K - s0 : t->kc_max;
        const size_t n = s0 + kc < k_end ? s0 + kc - k0 : k_end - k0;
        const float *a = t->a + k0 * lda;
        const float *b = t->b + s0 * t->b_panels * 16 + t->jp * 16 * kc + (k0 - s0) * 16;
        k0 += n;
        if (t->prefetch_next || pfb) {   /* the next panel's weights, or the next block's, meanwhile */
            const float *pf = pfb ? pfb : b + 16 * kc;
            if (pfb) pfb += n * 16;
            for (size_t p = 0; p < n; p++, a += lda, b += 16, pf += 16) {
                _mm_prefetch((const char *)pf, _MM_HINT_T1);
                NN_TSTORE_PREFETCH_A(a, lda, R);
                const __m256 b0 = _mm256_loadu_ps(b), b1 = W > 1 ? _mm256_loadu_ps(b + 8) : b0;
                NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
            }
        } else {
            for (size_t p = 0; p < n; p++, a += lda, b += 16) {
                NN_TSTORE_PREFETCH_A(a, lda, R);
                const __m256 b0 = _mm256_loadu_ps(b), b1 = W > 1 ? _mm256_loadu_ps(b + 8) : b0;
                NN_ROWS(a[0], a[1], a[2], a[3], a[4], a[5]);
            }
        }
    }
    if (acc && !t->last) {
        NN_TSTORE_SAVE(0); NN_TSTORE_SAVE(1); NN_TSTORE_SAVE(2); NN_TSTORE_SAVE(3); NN_TSTORE_SAVE(4); NN_TSTORE_SAVE(5);
        return;
    }
    const __m256i mrow = nn_lanes8(t->rows);
    const __m256 lo = _mm256_set1_ps(t->act_lo), hi = _mm256_set1_ps(t->act_hi), zero = _mm256_setzero_ps();
    for (size_t h = 0; h < (size_t)W && h * 8 < t->cols; h++) {
        const size_t nc = t->cols - h * 8 < 8 ? t->cols - h * 8 : 8;
        const __m256 vb = t->bias ? _mm256_maskload_ps(t->bias + h * 8, nn_lanes8(nc)) : zero;
        __m256 r[8];
        r[0] = R > 0 ? _mm256_add_ps(h ? c01 : c00, vb) : zero;
        r[1] = R > 1 ? _mm256_add_ps(h ? c11 : c10, vb) : zero;
        r[2] = R > 2 ? _mm256_add_ps(h ? c21 : c20, vb) : zero;
        r[3] = R > 3 ? _mm256_add_ps(h ? c31 : c30, vb) : zero;
        r[4] = R > 4 ? _mm256_add_ps(h ? c41 : c40, vb) : zero;
        r[5] = R > 5 ? _mm256_add_ps(h ? c51 : c50, vb) : zero;
        r[6] = r[7] = zero;
        nn_tr8x8_avx2(r);
        float *y = t->y + h * 8 * t->ldy;
        const float *sum = t->sum ? t->sum + h * 8 * t->ldy : NULL;
        for (size_t c = 0; c < nc; c++) {
            __m256 v = r[c];
            if (sum) v = _mm256_add_ps(v, _mm256_maskload_ps(sum + c * t->ldy, mrow));
            if (t->act) v = nn_act8(t->act, v, lo, hi, X);
            nn_store_first8_avx2(y + c * t->ldy, v, t->rows);
        }
    }
}

#define NN_TSTORE_VARIANT(R)                                                                              \
    static __attribute__((noinline, target("avx2,fma"))) void tstore_##R(const nn_tstore_args *t) { tstore_body(t, R, 2, 0); } \
    static __attribute__((noinline, target("avx2,fma"))) void tstore_h##R(const nn_tstore_args *t) { tstore_body(t, R, 1, 0); } \
    static __attribute__((noinline, target("avx2,fma"))) void tstore_x##R(const nn_tstore_args *t) { tstore_body(t, R, 2, 1); }
NN_TSTORE_VARIANT(1) NN_TSTORE_VARIANT(2) NN_TSTORE_VARIANT(3) NN_TSTORE_VARIANT(4) NN_TSTORE_VARIANT(5)
NN_TSTORE_VARIANT(6)
#undef NN_TSTORE_VARIANT

NN_AVX2
void nn_ukr_avx2_6x16_tstore(const nn_tstore_args *t) {
    /* [Sigmoid/SiLU | 8 columns | 16 columns][rows]; the rare Sigmoid/SiLU tiles take 16 columns
     * (the masks keep the stores right) */
    static void (*const variant[3][6])(const nn_tstore_args *) = {
        { tstore_h1, tstore_h2, tstore_h3, tstore_h4, tstore_h5, tstore_h6 },
        { tstore_1, tstore_2, tstore_3, tstore_4, tstore_5, tstore_6 },
        { tstore_x1, tstore_x2, tstore_x3, tstore_x4, tstore_x5, tstore_x6 },
    };
    const int xact = t->act >= CORT_ACT_SIGMOID && t->act <= CORT_ACT_SILU;
    variant[xact ? 2 : t->cols > 8][(t->rows < 1 ? 1 : t->rows > 6 ? 6 : t->rows) - 1](t);
}
#endif
