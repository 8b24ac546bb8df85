/* float32 elementwise kernels in three builds of one source (kernels/elementwise_body.h): portable (GCC vector
 * extensions at the baseline ISA), AVX2+FMA and AVX-512F. The level is picked at run time. */
#ifndef CORT_CPU_EW_SIMD_H
#define CORT_CPU_EW_SIMD_H
#include <stddef.h>

enum { EW_FB_ADD, EW_FB_SUB, EW_FB_MUL, EW_FB_DIV, EW_FB_MAX, EW_FB_MIN, EW_FB_COUNT };
/* Broadcast modes of a binary row: both contiguous, b scalar, a scalar. */
enum { EW_VV, EW_VS, EW_SV };
enum {
    EW_FU_RELU, EW_FU_LEAKY, EW_FU_CLIP, EW_FU_NEG, EW_FU_ABS, EW_FU_EXP, EW_FU_SIGMOID, EW_FU_TANH,
    EW_FU_HARDSIGMOID, EW_FU_HARDSWISH, EW_FU_ERF, EW_FU_COUNT
};

typedef void (*ew_f32_bin)(size_t n, float *o, const float *a, const float *b);
/* a, b: activation parameters (LeakyRelu alpha, Clip lo/hi, HardSigmoid alpha/beta) */
typedef void (*ew_f32_un)(size_t n, float *o, const float *x, float a, float b);

typedef struct ew_f32_kernels {
    const char *name;
    ew_f32_bin bin[EW_FB_COUNT][3];
    ew_f32_un  un[EW_FU_COUNT];
} ew_f32_kernels;

/* Best level supported by this CPU. Never NULL. */
const ew_f32_kernels *ew_f32_best(void);
/* level 0 portable, 1 AVX2+FMA, 2 AVX-512F; NULL if the CPU (or the build) lacks it. */
const ew_f32_kernels *ew_f32_level(int level);
#endif
