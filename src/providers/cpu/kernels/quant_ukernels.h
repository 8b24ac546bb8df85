/* 8-bit quantization of float rows (QuantizeLinear's per-tensor case, DynamicQuantizeLinear):
 *   minmax:    *lo = min(*lo, x[i]), *hi = max(*hi, x[i]) over i < n, NaN ignored (x < lo ? x : lo);
 *   quantize8: y[i] = sat8(nn_q_add_sat(nn_q_round(x[i] / scale), zp)), uint8 or (is_signed) int8.
 * The same values as the scalar loops in ops/quant/quantize.c: the quotient is a true division
 * (not a multiply by 1/scale), rounded half to even (vcvtps2dq in the default rounding mode, as
 * nearbyintf); quotients past +-2^30 are clamped first, which saturates the same, and a NaN
 * quotient gives 0 + zp, as nn_q_round does.
 * lut16_u8:  y[i] = lut[a[i] << 8 | b[i]] for i < n: a two-byte-indexed table (QLinearAdd/Mul made once at
 *            creation); the table must be readable 3 bytes past its 65536 (a gather reads 4 at a time).
 * dequantize8: y[i] = (float)(x[i] - zp) * scale, x uint8 or (is_signed) int8 (DequantizeLinear per tensor).
 * qbinary8:  QLinearAdd / QLinearMul of n bytes (b one byte repeated when b_scalar), in double:
 *            va = (double)(a[i] - za) * as, vb likewise, v = (va + vb) / ys (or va * vb / ys), clamped
 *            to +-2^30, rounded half to even, + zy, saturated to the output type: the expression
 *            qlinear_ops.c tabulates, so the same bytes. Scales must be finite and ys nonzero (the
 *            caller checks), so no lane sees a NaN. AVX-512 only: at avx2 (four doubles per
 *            step) the table's gathers were faster on the CPUs measured.
 * QLinearAdd's fixed-point form: with A = round(as / ys 2^k), B = round(bs / ys 2^k),
 *   W = (a - za) A + (b - zb) B is 2^k times the exact quotient to within
 *   0.5 (|a - za| + |b - zb|) <= 255, so (W + 2^(k-1)) >> k is the quotient rounded unless a tie
 *   (m + 1/2) lies within that distance; lanes near one (the low k bits of W + 2^(k-1) within
 *   NN_QADD8_WIN of 0 mod 2^k) are computed in double. Same bytes as qbinary8.
 * nn_qadd8_fixed_params: A, B and k for an Add whose scales allow the form (A, B below 2^21 keep
 *   every sum inside int32; k >= 16 keeps the window a small share of 2^k), else 0.
 * qadd8_fixed: qbinary8 for an Add whose parameters nn_qadd8_fixed_params accepts.
 * lut8:      y[i] = lut[x[i]] for i < n, a 256-entry byte table (requantizing byte maps).
 * i32_scale: y[i] = (float)x[i] * scale[i], then + bias[i] when bias is not NULL, each step rounded
 *            on its own (no fused multiply-add): the Cast, Mul and Add of the dynamic quantizer's tail
 *            (MatMulIntegerToFloat's tiles).
 * u8_sum:    the sum of n bytes, wrapping mod 2^32 (the byte GEMM's row sums when it packs A). */
#ifndef CORT_CPU_KERNELS_QUANT_UKERNELS_H
#define CORT_CPU_KERNELS_QUANT_UKERNELS_H
#include <stddef.h>
#include <stdint.h>
#include "gemm_ukernels.h"

typedef struct nn_qbinary8_params {
    float as, bs;
    double ys;
    int32_t za, zb, zy;
    int mul, in_signed, out_signed, b_scalar;
} nn_qbinary8_params;

#define NN_QADD8_WIN 320   /* > 255.5: the fixed point's error bound plus the reference's own rounding */
int nn_qadd8_fixed_params(const nn_qbinary8_params *p, int32_t *ma, int32_t *mb, int *k);
/* The multipliers as vpmaddwd pair words: (a - za, b - zb) dotted with *lo (their low 14 bits) plus
 * 2^14 times the dot with *hi (the rest, sign-extended) is a * ma + b * mb exactly (|ma|, |mb| < 2^21). */
static inline void nn_qadd8_pair_words(int32_t ma, int32_t mb, int32_t *lo, int32_t *hi) {
    *lo = (int32_t)(((uint32_t)(mb & 0x3fff) << 16) | (uint32_t)(ma & 0x3fff));
    *hi = (int32_t)(((uint32_t)(uint16_t)(int16_t)(mb >> 14) << 16) | (uint32_t)(uint16_t)(int16_t)(ma >> 14));
}
typedef void (*nn_lut8_fn)(const uint8_t *lut, const uint8_t *x, uint8_t *y, size_t n);

#ifdef NN_HAVE_X86_UKERNELS
void nn_minmax_f32_avx2(const float *x, size_t n, float *lo, float *hi);
void nn_quantize8_f32_avx2(const float *x, size_t n, float scale, int32_t zp, int is_signed, void *y);
void nn_quantize8_f32_avx512(const float *x, size_t n, float scale, int32_t zp, int is_signed, void *y);
void nn_lut16_u8_avx2(const uint8_t *lut, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
void nn_lut16_u8_avx512(const uint8_t *lut, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
void nn_dequantize8_f32_avx2(const void *x, size_t n, int is_signed, int32_t zp, float scale, float *y);
void nn_dequantize8_f32_avx512(const void *x, size_t n, int is_signed, int32_t zp, float scale, float *y);
void nn_qbinary8_avx512(const nn_qbinary8_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
void nn_lut8_u8_avx512vbmi(const uint8_t *lut, const uint8_t *x, uint8_t *y, size_t n);
void nn_i32_scale_f32_avx2(const int32_t *x, size_t n, const float *scale, const float *bias, float *y);
void nn_i32_scale_f32_avx512(const int32_t *x, size_t n, const float *scale, const float *bias, float *y);
uint32_t nn_u8_sum_avx2(const uint8_t *x, size_t n);
uint32_t nn_u8_sum_avx512(const uint8_t *x, size_t n);
void nn_qadd8_fixed_avx2(const nn_qbinary8_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
#endif
#endif
