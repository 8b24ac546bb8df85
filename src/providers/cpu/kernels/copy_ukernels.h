/* Vectorized copies used around the convolution kernels. */
#ifndef CORT_CPU_SIMD_COPY_UKERNELS_H
#define CORT_CPU_SIMD_COPY_UKERNELS_H
#include <stddef.h>
#include <stdint.h>
#include "gemm_ukernels.h"

#ifdef NN_HAVE_X86_UKERNELS
/* dst[i] = src[2 * i] for i < n (every other float: a stride-2 convolution's input phase). Reads
 * src[0 .. 2n - 2] only. */
void nn_copy_stride2_avx512(const float *src, float *dst, size_t n);
/* dst[i] = src[i / 2] for i < n (each float twice: a 2x nearest upsampling row). Reads src[0 ..
 * (n - 1) / 2] only. */
void nn_copy_rep2_avx512(const float *src, float *dst, size_t n);
/* dst[2 i] = a[i] + bias, dst[2 i + 1] = b[i] + bias for i < n (the two column taps of a 2x2
 * stride-2 ConvTranspose merged into one output row). */
void nn_interleave2_avx512(const float *a, const float *b, float bias, float *dst, size_t n);
/* dst[c * ldd + r] = src[r * ld + c] for r, c < 16. */
void nn_transpose16_avx512(const float *src, size_t ld, float *dst, size_t ldd);
/* dst[c * ldd + r] = scale * src[r * ld + c] for c < 16 and r < width (<= 16), zero for rows <= r <
 * width: a 16-column block of at most 16 rows packed into width-wide rows (rows <= width). */
void nn_transpose_avx512(const float *src, size_t ld, size_t rows, float scale, float *dst, size_t ldd, size_t width);
/* The same five with AVX2 (x86/x32_copy_avx2.c). */
void nn_copy_stride2_avx2(const float *src, float *dst, size_t n);
void nn_copy_rep2_avx2(const float *src, float *dst, size_t n);
void nn_interleave2_avx2(const float *a, const float *b, float bias, float *dst, size_t n);
void nn_transpose16_avx2(const float *src, size_t ld, float *dst, size_t ldd);
void nn_transpose_avx2(const float *src, size_t ld, size_t rows, float scale, float *dst, size_t ldd, size_t width);
/* dst[i] = src[2 * i] for i < n bytes (a stride-2 int8 conv's input columns); reads src[0 .. 2n - 2] only
 * (x86/x8_copy_avx2.c, x86/x8_copy_avx512.c). */
void nn_copy_stride2_u8_avx2(const uint8_t *src, uint8_t *dst, size_t n);
void nn_copy_stride2_u8_avx512(const uint8_t *src, uint8_t *dst, size_t n);
#endif
#endif
