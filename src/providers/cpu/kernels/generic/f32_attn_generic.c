/* Portable attention decode kernels (see attn_ukernels.h); eight partial sums per dot product so
 * the compiler can keep them in one vector register. */
#include "../attn_ukernels.h"
#include "../../../../core/cpu_features.h"

void nn_attn_dots_generic(const float *k, const float *q, size_t ldq, size_t nq, size_t n, float *out, size_t ldo) {
    for (size_t r = 0; r < nq; r++) {
        const float *qr = q + r * ldq;
        float acc[8] = { 0 };
        size_t d = 0;
        for (; d + 8 <= n; d += 8)
            for (size_t l = 0; l < 8; l++) acc[l] += qr[d + l] * k[d + l];
        float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; d < n; d++) s += qr[d] * k[d];
        out[r * ldo] = s;
    }
}

void nn_attn_axpys_generic(const float *v, const float *p, size_t ldp, size_t nq, size_t n, float *y, size_t ldy) {
    for (size_t r = 0; r < nq; r++) {
        const float a = p[r * ldp];
        float *yr = y + r * ldy;
        for (size_t d = 0; d < n; d++) yr[d] += a * v[d];
    }
}

void nn_attn_scale_generic(const float *x, float *y, size_t n, float s) {
    for (size_t i = 0; i < n; i++) y[i] = x[i] * s;
}

void nn_attn_add_generic(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

static const nn_attn_kernels k_generic = { nn_attn_dots_generic, nn_attn_axpys_generic, nn_attn_scale_generic,
                                           nn_attn_add_generic };
#ifdef NN_HAVE_X86_UKERNELS
static const nn_attn_kernels k_avx2 = { nn_attn_dots_avx2, nn_attn_axpys_avx2, nn_attn_scale_avx2, nn_attn_add_avx2 };
#endif

static const nn_attn_kernels *const attn_by_isa[CORT_ISA_LEVEL_COUNT] = {
    [CORT_ISA_GENERIC] = &k_generic,
    [CORT_ISA_NEON] = &k_generic,
#ifdef NN_HAVE_X86_UKERNELS
    [CORT_ISA_AVX2] = &k_avx2,
    [CORT_ISA_AVX512] = &k_avx2,
#else
    [CORT_ISA_AVX2] = &k_generic,
    [CORT_ISA_AVX512] = &k_generic,
#endif
};

const nn_attn_kernels *nn_attn_best(void) { return attn_by_isa[cort_cpu_isa()]; }
