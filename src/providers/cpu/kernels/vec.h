/* Small float32 row primitives for the fused kernels and Softmax, built per ISA level (portable,
 * AVX2+FMA, AVX-512F) from one template (kernels/vec_body.h) and picked at run time, because plain loops
 * with reductions do not vectorize at -O2. */
#ifndef CORT_CPU_FU_VEC_H
#define CORT_CPU_FU_VEC_H
#include <stddef.h>

typedef struct fu_vec_kernels {
    const char *name;
    float (*max)(const float *x, size_t n);                    /* n >= 1; NaN lanes are ignored unless first */
    float (*sum)(const float *x, size_t n);
    /* sum of (x - m)^2; *dev_sum = sum of (x - m) (corrects a rounded mean) */
    float (*sqdev)(const float *x, size_t n, float m, float *dev_sum);
    void  (*addc)(const float *x, float *y, size_t n, float c);              /* y = x + c */
    void  (*scale)(float *y, size_t n, float c);                             /* y *= c */
    void  (*add)(const float *a, const float *b, float *y, size_t n);        /* y = a + b */
    /* y = (x - m) * inv * scale + bias; scale, bias may be NULL */
    void  (*norm)(const float *x, float *y, size_t n, float m, float inv, const float *scale, const float *bias);
    /* GELU in two halves around an exp (see kernels/vec_body.h): gelu(x) = finish(x, t, exp(a)) */
    void  (*gelu_arg)(const float *x, float *t, float *a, size_t n);
    void  (*gelu_finish)(const float *x, const float *t, const float *e, float *y, size_t n);
} fu_vec_kernels;

const fu_vec_kernels *fu_vec_best(void);
/* level 0 portable, 1 AVX2+FMA, 2 AVX-512F; NULL if unavailable (for tests). */
const fu_vec_kernels *fu_vec_level(int level);
#endif
