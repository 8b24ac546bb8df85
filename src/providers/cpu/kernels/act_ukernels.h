/* Vectorized activation epilogues. kind: CORT_ACT_* (core/act.h), RELU through HARD_SWISH.
 *
 * Sigmoid / SiLU math (shared by the epilogue loops and, inlined, by the depthwise kernels):
 *   x clamped to <= 103 (AVX2: also >= -87.336), t = -x; exp(t) = 2^n * p(r), n = round(t / ln2),
 *   r = t - n*ln2 (two-part ln2, |r| <= ln2/2), p a degree-5 minimax polynomial (relative error
 *   1.1e-7 there);
 *   d = 1 + exp(t); AVX-512: 1/d from rcp14 and one Newton step, sigmoid = 1/d, silu = x * (1/d);
 *   AVX2: sigmoid = 1 / d, silu = x / d (divisions; see nn_1pexpn256). For x < -87.336, where 1/d would fall below FLT_MIN,
 *   1 + exp(-x) rounds to exp(-x) anyway: a rarely taken branch computes sigmoid = exp(x) and
 *   silu = x * exp(x) directly (exact into the denormals). NaN propagates; sigmoid(+inf) = 1,
 *   sigmoid(-inf) = 0, silu(+inf) = +inf, silu(-inf) = -0 (the limit; an unfused
 *   Sigmoid + Mul would give -inf * 0 = NaN).
 *   Measured against double math over [-100, 100] (tests/test_act_math.c): sigmoid relative error
 *   < 2.2e-7 where the result is a normal float; silu |error| < 1.4e-7 * |x| (same for AVX2). */
#ifndef CORT_CPU_SIMD_ACT_UKERNELS_H
#define CORT_CPU_SIMD_ACT_UKERNELS_H
#include <stddef.h>
#include "gemm_ukernels.h"
#include "../../../core/act.h"

/* LOOP(KIND, lo, hi, y, n) instantiated once per kind RELU .. HARD_SWISH and called for `kind` (others:
 * nothing), so each per-ISA row loop is straight-line code for its kind. */
#define NN_ACT_KIND_DISPATCH(LOOP, kind, lo, hi, y, n)                                   \
    do {                                                                                 \
        switch (kind) {                                                                  \
        case CORT_ACT_RELU: LOOP(CORT_ACT_RELU, lo, hi, y, n); break;                    \
        case CORT_ACT_CLIP: LOOP(CORT_ACT_CLIP, lo, hi, y, n); break;                    \
        case CORT_ACT_LEAKY_RELU: LOOP(CORT_ACT_LEAKY_RELU, lo, hi, y, n); break;        \
        case CORT_ACT_SIGMOID: LOOP(CORT_ACT_SIGMOID, lo, hi, y, n); break;              \
        case CORT_ACT_HARD_SIGMOID: LOOP(CORT_ACT_HARD_SIGMOID, lo, hi, y, n); break;    \
        case CORT_ACT_SILU: LOOP(CORT_ACT_SILU, lo, hi, y, n); break;                    \
        case CORT_ACT_HARD_SWISH: LOOP(CORT_ACT_HARD_SWISH, lo, hi, y, n); break;        \
        default: break;                                                                  \
        }                                                                                \
    } while (0)

/* p = the polynomial of Numerical Recipes' erfc (erfc(z) = t * exp(p(t) - z^2), t = 1 / (1 + z/2),
 * fractional error < 1.2e-7) in t by Horner's rule, for a vector width's FMA and broadcast: one list
 * of coefficients for every ISA's GELU kernel (kernels/vec_body.h has the portable form). */
#define NN_ERFC_POLY(FMA, SET1, p, t)                                   \
    do {                                                                \
        p = FMA(t, SET1(0.17087277f), SET1(-0.82215223f));              \
        p = FMA(p, t, SET1(1.48851587f));                               \
        p = FMA(p, t, SET1(-1.13520398f));                              \
        p = FMA(p, t, SET1(0.27886807f));                               \
        p = FMA(p, t, SET1(-0.18628806f));                              \
        p = FMA(p, t, SET1(0.09678418f));                               \
        p = FMA(p, t, SET1(0.37409196f));                               \
        p = FMA(p, t, SET1(1.00002368f));                               \
        p = FMA(p, t, SET1(-1.26551223f));                              \
    } while (0)

#ifdef NN_HAVE_X86_UKERNELS
/* Every kind above; lo/hi are the activation's alpha/beta. */
void nn_act_avx512(int kind, float lo, float hi, float *y, size_t n);
/* Sigmoid and SiLU only (the kinds whose scalar form needs expf). */
void nn_act_avx2(int kind, float *y, size_t n);
/* Every kind up to CORT_ACT_HARD_SWISH (nn_act256's math), the avx2 level's act_all. */
void nn_act_all_avx2(int kind, float lo, float hi, float *y, size_t n);
/* y[i] = exp(x[i] - m) for x[i] <= m (a softmax row; the same polynomial exp, relative error
 * < 2.5e-7 where the result is a normal float; NaN propagates), returning their sum. y may be x. */
float nn_exp_shift_sum_avx512(const float *x, float *y, size_t n, float m);
/* The same with AVX2 (2^n built in the exponent field; same polynomial and error bound). */
float nn_exp_shift_sum_avx2(const float *x, float *y, size_t n, float m);
/* y = x * erfc(-x / sqrt(2)) / 2 (the exact GELU) in one pass: kernels/vec_body.h's erfc (t = 1/(1 + z/2)
 * from rcp14 + one Newton step instead of a division) with the exp inlined. y may be x. */
void nn_gelu_avx512(const float *x, float *y, size_t n);
/* The same with AVX2 (rcpps + one Newton step); a tail goes through the same vector math, so
 * any split of a row gives the same bits. */
void nn_gelu_avx2(const float *x, float *y, size_t n);
#endif

/* Register-level forms, for kernels that apply the activation before their store. Only files
 * that define NN_ACT_VEC_INLINE (the SIMD translation units) see them. */
#if defined(NN_HAVE_X86_UKERNELS) && defined(NN_ACT_VEC_INLINE)
#include <immintrin.h>

#define NN_EXP_LN2_HI 0.693359375f
#define NN_EXP_LN2_LO -2.12194440e-4f
#define NN_EXP_C5 8.3128605e-3f
#define NN_EXP_C4 4.1889019e-2f
#define NN_EXP_C3 1.6667111e-1f
#define NN_EXP_C2 4.9999243e-1f

/* 1 / (1 + exp(-x)) (rcp14 estimate; *d_out = the denominator for the Newton step) except in the
 * lanes of *tiny (x < -87.336), left to the caller.
 * Written in terms of u = -r = x + n*ln2 (n = round(-x / ln2)) so -x is never formed: the
 * polynomial's odd terms change sign instead (fnmadd). */
static inline __attribute__((always_inline, target("avx512f"))) __m512 nn_recip_1pexpn512(__m512 x, __mmask16 *tiny,
                                                                                          __m512 *d_out) {
    *tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.336f), _CMP_LT_OQ);
    /* no lower clamp: the tiny lanes (where this overflows to inf/NaN) are recomputed by the
     * caller. The upper one keeps n finite for x up to +inf; operand order keeps NaN (min returns
     * the second operand when either is NaN). */
    const __m512 xc = _mm512_min_ps(_mm512_set1_ps(103.0f), x);
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(-1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 u = _mm512_fmadd_ps(n, _mm512_set1_ps(NN_EXP_LN2_HI), xc);
    u = _mm512_fmadd_ps(n, _mm512_set1_ps(NN_EXP_LN2_LO), u);
    __m512 p = _mm512_fnmadd_ps(_mm512_set1_ps(NN_EXP_C5), u, _mm512_set1_ps(NN_EXP_C4));
    p = _mm512_fnmadd_ps(p, u, _mm512_set1_ps(NN_EXP_C3));
    p = _mm512_fnmadd_ps(p, u, _mm512_set1_ps(NN_EXP_C2));
    const __m512 one = _mm512_set1_ps(1.0f);
    p = _mm512_fnmadd_ps(p, u, one);
    p = _mm512_fnmadd_ps(p, u, one);
    const __m512 d = _mm512_add_ps(one, _mm512_scalef_ps(p, n));   /* <= e^87.336 < 2^126 */
    *d_out = d;
    return _mm512_rcp14_ps(d);
}

/* exp(x) as 2^n * p for x <= 0: the lanes with x < -87.336 of sigmoid/silu (rare; taken out of
 * line by a branch), where 1 + exp(x) rounds to 1: sigmoid = 2^n * p and silu = 2^n * (x * p)
 * (denormal or -0 below -87.336 - ln(|x|)); and a softmax row minus its maximum. x is clamped at
 * -110, where exp rounds to zero, with the operand order that keeps NaN. */
static inline __attribute__((always_inline, target("avx512f"))) __m512 nn_exp_tiny512(__m512 x, __m512 *n_out) {
    const __m512 xc = _mm512_max_ps(_mm512_set1_ps(-110.0f), x);
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(NN_EXP_LN2_HI), xc);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(NN_EXP_LN2_LO), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(NN_EXP_C5), r, _mm512_set1_ps(NN_EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(NN_EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(NN_EXP_C2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    *n_out = n;
    return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

static inline __attribute__((always_inline, target("avx512f"))) __m512 nn_sigmoid512(__m512 x) {
    __mmask16 tiny;
    __m512 d, n;
    const __m512 r0 = nn_recip_1pexpn512(x, &tiny, &d);
    /* one Newton step, zeroing the tiny lanes on the way */
    __m512 s = _mm512_maskz_fmadd_ps((__mmask16)~tiny, r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(1.0f)), r0);
    if (__builtin_expect(tiny != 0, 0)) {
        const __m512 p = nn_exp_tiny512(x, &n);
        s = _mm512_mask_scalef_ps(s, tiny, p, n);
    }
    return s;
}

static inline __attribute__((always_inline, target("avx512f"))) __m512 nn_silu512(__m512 x) {
    __mmask16 tiny;
    __m512 d, n;
    const __m512 r0 = nn_recip_1pexpn512(x, &tiny, &d);
    const __m512 s = _mm512_fmadd_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(1.0f)), r0);
    __m512 y = _mm512_mul_ps(x, s);
    if (__builtin_expect(tiny != 0, 0)) {
        const __m512 p = nn_exp_tiny512(x, &n);
        y = _mm512_mask_scalef_ps(y, tiny, _mm512_mul_ps(_mm512_max_ps(x, _mm512_set1_ps(-110.0f)), p), n);
    }
    return y;
}

/* Any CORT_ACT_* on a register (0: none); lo/hi are alpha/beta broadcast. */
static inline __attribute__((always_inline, target("avx512f"))) __m512 nn_act512(int kind, __m512 v, __m512 lo,
                                                                                 __m512 hi) {
    const __m512 zero = _mm512_setzero_ps();
    switch (kind) {
    case CORT_ACT_RELU: return _mm512_max_ps(v, zero);
    case CORT_ACT_CLIP: return _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    case CORT_ACT_LEAKY_RELU: return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, lo);
    case CORT_ACT_SIGMOID: return nn_sigmoid512(v);
    case CORT_ACT_HARD_SIGMOID:
        return _mm512_min_ps(_mm512_max_ps(_mm512_fmadd_ps(lo, v, hi), zero), _mm512_set1_ps(1.0f));
    case CORT_ACT_SILU: return nn_silu512(v);
    case CORT_ACT_HARD_SWISH: {
        const __m512 h = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
        return _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(h, zero), _mm512_set1_ps(1.0f)));
    }
    default: return v;
    }
}

/* AVX2 form of the denominator of nn_recip_1pexpn512: d = 1 + exp(-x), 2^n built in the exponent
 * field (x <= 87 keeps n >= -126). n = round(-x / ln2) by the 1.5 * 2^23 shifter, whose low bits
 * are then n itself (the same n as a round instruction, without vroundps / vcvtps2dq). The callers
 * divide by d: on Zen 1 one vdivps measured faster than rcpps and two Newton steps (1.24 vs 1.78
 * ns per element in L1), and it is correctly rounded. */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_1pexpn256(__m256 x, __m256 *tiny) {
    *tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.336f), _CMP_LT_OQ);
    const __m256 xc = _mm256_min_ps(_mm256_set1_ps(87.0f), _mm256_max_ps(_mm256_set1_ps(-87.336f), x));
    const __m256 shifter = _mm256_set1_ps(12582912.0f);
    const __m256 nb = _mm256_add_ps(_mm256_mul_ps(xc, _mm256_set1_ps(-1.44269504088896341f)), shifter);
    const __m256 n = _mm256_sub_ps(nb, shifter);
    __m256 u = _mm256_fmadd_ps(n, _mm256_set1_ps(NN_EXP_LN2_HI), xc);
    u = _mm256_fmadd_ps(n, _mm256_set1_ps(NN_EXP_LN2_LO), u);
    __m256 p = _mm256_fnmadd_ps(_mm256_set1_ps(NN_EXP_C5), u, _mm256_set1_ps(NN_EXP_C4));
    p = _mm256_fnmadd_ps(p, u, _mm256_set1_ps(NN_EXP_C3));
    p = _mm256_fnmadd_ps(p, u, _mm256_set1_ps(NN_EXP_C2));
    const __m256 one = _mm256_set1_ps(1.0f);
    p = _mm256_fnmadd_ps(p, u, one);
    p = _mm256_fnmadd_ps(p, u, one);
    /* (n + 127) << 23 from the shifted sum's bits: the shifter's own bits leave through the shift.
     * NaN lanes: a garbage scale, but p is NaN so d stays NaN */
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(nb), _mm256_set1_epi32(127)), 23);
    return _mm256_fmadd_ps(p, _mm256_castsi256_ps(e), one);
}

/* AVX2 form of nn_exp_tiny512: returns p with *scale = 2^(n + 64); exp(x) = p * scale * 2^-64. The
 * clamp's operand order keeps NaN. */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_exp_tiny256(__m256 x, __m256 *scale) {
    const __m256 xc = _mm256_max_ps(_mm256_set1_ps(-110.0f), x);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(NN_EXP_LN2_HI), xc);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(NN_EXP_LN2_LO), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(NN_EXP_C5), r, _mm256_set1_ps(NN_EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(NN_EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(NN_EXP_C2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    *scale = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127 + 64)), 23));
    return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_sigmoid256(__m256 x) {
    __m256 tiny, scale;
    __m256 s = _mm256_div_ps(_mm256_set1_ps(1.0f), nn_1pexpn256(x, &tiny));
    if (__builtin_expect(_mm256_movemask_ps(tiny) != 0, 0)) {
        const __m256 p = nn_exp_tiny256(x, &scale);
        s = _mm256_blendv_ps(s, _mm256_mul_ps(_mm256_mul_ps(p, scale), _mm256_set1_ps(0x1p-64f)), tiny);
    }
    return s;
}

static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_silu256(__m256 x) {
    __m256 tiny, scale;
    __m256 y = _mm256_div_ps(x, nn_1pexpn256(x, &tiny));
    if (__builtin_expect(_mm256_movemask_ps(tiny) != 0, 0)) {
        const __m256 p = _mm256_mul_ps(_mm256_max_ps(x, _mm256_set1_ps(-110.0f)), nn_exp_tiny256(x, &scale));
        y = _mm256_blendv_ps(y, _mm256_mul_ps(_mm256_mul_ps(p, scale), _mm256_set1_ps(0x1p-64f)), tiny);
    }
    return y;
}

/* exp(x) for x <= 0 (a softmax row minus its maximum, GELU's erfc): the scale is built as 2^(n + 64)
 * and the 2^-64 applied by a multiply, so results below FLT_MIN come out denormal (then 0) instead
 * of wrapping the exponent; the clamp at -110 (exp rounds to 0 there) keeps n >= -159. NaN lanes:
 * cvtps gives INT_MIN, a garbage scale, but p is NaN. */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_exp_nonpos256(__m256 x) {
    __m256 scale;
    const __m256 p = nn_exp_tiny256(x, &scale);
    return _mm256_mul_ps(_mm256_mul_ps(p, scale), _mm256_set1_ps(0x1p-64f));
}

/* GELU in one pass (erf through Numerical Recipes' erfc as in f32_act_avx512.c): t = 1 / (1 + z/2) by
 * rcpps and one Newton step (relative 2^-22), exp by nn_exp_nonpos256 (its argument is <= -1.2655). */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_gelu256(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
    const __m256 d = _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), one);
    __m256 t = _mm256_rcp_ps(d);
    t = _mm256_fmadd_ps(t, _mm256_fnmadd_ps(d, t, one), t);
    __m256 p;
    NN_ERFC_POLY(_mm256_fmadd_ps, _mm256_set1_ps, p, t);
    p = _mm256_fnmadd_ps(z, z, p);
    const __m256 h = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), t), nn_exp_nonpos256(p));
    /* x < 0: x * h; else x * (1 - h) (h = erfc(|x| / sqrt(2)) / 2) */
    const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    return _mm256_mul_ps(x, _mm256_blendv_ps(_mm256_sub_ps(one, h), h, neg));
}

/* Any CORT_ACT_* on a ymm register (0: none); lo/hi are alpha/beta broadcast. */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256 nn_act256(int kind, __m256 v, __m256 lo,
                                                                                 __m256 hi) {
    const __m256 zero = _mm256_setzero_ps();
    switch (kind) {
    case CORT_ACT_RELU: return _mm256_max_ps(v, zero);
    case CORT_ACT_CLIP: return _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    case CORT_ACT_LEAKY_RELU: return _mm256_blendv_ps(v, _mm256_mul_ps(v, lo), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    case CORT_ACT_SIGMOID: return nn_sigmoid256(v);
    case CORT_ACT_HARD_SIGMOID:
        return _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(lo, v, hi), zero), _mm256_set1_ps(1.0f));
    case CORT_ACT_SILU: return nn_silu256(v);
    case CORT_ACT_HARD_SWISH: {
        const __m256 h = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(_mm256_max_ps(h, zero), _mm256_set1_ps(1.0f)));
    }
    default: return v;
    }
}
#endif
#endif
