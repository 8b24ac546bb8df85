/* The kernels each ISA level runs, chosen once from the level in use (core/cpu_features: the
 * detected CPU capped by CORT_ISA). Callers take an entry and call it; a NULL entry means the level
 * has no special kernel there and the caller's portable loop runs. Nothing below src/providers/cpu
 * asks the CPU itself. Engines whose ISA variants are static functions of their own file
 * (gemm micro-kernels, Winograd transforms, depthwise planes, the small-plane conv's tile stores)
 * keep a table of the same kind indexed by cort_cpu_isa() next to those functions. */
#ifndef CORT_CPU_KERNELS_ISA_CONFIG_H
#define CORT_CPU_KERNELS_ISA_CONFIG_H
#include <stddef.h>
#include <stdint.h>
#include "../../../core/cpu_features.h"
#include "pool_ukernels.h"
#include "quant_ukernels.h"

typedef struct nn_isa_config {
    cort_isa_level isa;
    /* copies (see copy_ukernels.h for what each computes) */
    void (*copy_stride2)(const float *src, float *dst, size_t n);
    void (*copy_stride2_u8)(const uint8_t *src, uint8_t *dst, size_t n);
    void (*copy_rep2)(const float *src, float *dst, size_t n);
    void (*interleave2)(const float *a, const float *b, float bias, float *dst, size_t n);
    void (*transpose16)(const float *src, size_t ld, float *dst, size_t ldd);
    void (*transpose_scaled)(const float *src, size_t ld, size_t rows, float scale, float *dst, size_t ldd,
                             size_t width);
    /* 8-bit quantization of float rows (quant_ukernels.h) */
    void (*minmax)(const float *x, size_t n, float *lo, float *hi);
    void (*quantize8)(const float *x, size_t n, float scale, int32_t zp, int is_signed, void *y);
    void (*lut16_u8)(const uint8_t *lut, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
    void (*dequantize8)(const void *x, size_t n, int is_signed, int32_t zp, float scale, float *y);
    void (*qbinary8)(const nn_qbinary8_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
    /* QLinearAdd where nn_qadd8_fixed_params accepts the scales and qbinary8 is NULL */
    void (*qadd8_fixed)(const nn_qbinary8_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y, size_t n);
    void (*i32_scale)(const int32_t *x, size_t n, const float *scale, const float *bias, float *y);
    uint32_t (*u8_sum)(const uint8_t *x, size_t n);
    /* pooling (pool_ukernels.h) */
    void (*pool_rows_max)(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
    void (*pool_rows_sum)(const float *x, size_t stride, size_t nrows, size_t n, float *buf);
    void (*pool_max2d)(const nn_pool2d_rows *a);
    void (*pool_avg2d)(const nn_pool2d_rows *a);
    /* window step after pool_rows_* (NULL: the portable loop) */
    void (*pool_window_max)(const float *t, size_t k, size_t sw, size_t count, float *y);
    void (*pool_window_avg)(const float *t, size_t k, size_t sw, size_t count, float scale, float *y);
    /* max windows of 2 columns at stride 2 over nrows rows (nn_pool_max_k2s2_avx2's contract); NULL:
     * pool_rows_max and pool_window_max */
    void (*pool_max_k2s2)(const float *x, size_t stride, size_t nrows, size_t count, float *y);
    /* ... and of 3 columns (nn_pool_max_k3s2_avx2's contract) */
    void (*pool_max_k3s2)(const float *x, size_t stride, size_t nrows, size_t count, float *y);
    float (*pool_sum)(const float *x, size_t n);
    float (*pool_max)(const float *x, size_t n);
    /* 8-bit MaxPool's row reduction and window step (strides 1 and 2); NULL: the portable loops */
    void (*pool_rows_max8)(const uint8_t *x, size_t stride, size_t nrows, size_t n, uint8_t flip, int acc,
                           uint8_t *buf);
    void (*pool_window_max8)(const uint8_t *row, size_t k, size_t s, size_t n, uint8_t flip, uint8_t *y);
    /* activations in place (act_ukernels.h): every CORT_ACT_* up to hard swish, or only
     * sigmoid and SiLU */
    void (*act_all)(int kind, float lo, float hi, float *y, size_t n);
    void (*act_sigmoid_silu)(int kind, float *y, size_t n);
    void (*gelu)(const float *x, float *y, size_t n);
    /* y = exp(x - m), returns the sum (Softmax) */
    float (*exp_shift_sum)(const float *x, float *y, size_t n, float m);
} nn_isa_config;

/* The configuration of the level in use. Never NULL; the same pointer for the process's life. */
const nn_isa_config *nn_isa(void);
/* The 256-entry byte table kernel (quant_ukernels.h) for the level in use and this CPU's extensions
 * (AVX-512 VBMI at avx512), or NULL: the caller's loop. */
nn_lut8_fn nn_isa_lut8(void);
#endif
