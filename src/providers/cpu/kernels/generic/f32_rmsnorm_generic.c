/* Portable RMSNormalization row: eight partial sums the compiler keeps in one vector register. */
#include <math.h>
#include "../norm_ukernels.h"
#include "../../../../core/cpu_features.h"

void nn_rmsnorm_row_generic(const float *x, const float *w, float *y, size_t n, float eps) {
    float acc[8] = { 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t l = 0; l < 8; l++) acc[l] += x[i + l] * x[i + l];
    double ss = 0.0;
    for (size_t l = 0; l < 8; l++) ss += acc[l];
    for (; i < n; i++) ss += (double)x[i] * x[i];
    const float inv = (float)(1.0 / sqrt(ss / (double)(n ? n : 1) + (double)eps));
    for (i = 0; i < n; i++) y[i] = x[i] * inv * w[i];
}

static const nn_rmsnorm_row_fn rmsnorm_by_isa[CORT_ISA_LEVEL_COUNT] = {
    [CORT_ISA_GENERIC] = nn_rmsnorm_row_generic,
    [CORT_ISA_NEON] = nn_rmsnorm_row_generic,
#ifdef NN_HAVE_X86_UKERNELS
    [CORT_ISA_AVX2] = nn_rmsnorm_row_avx2,
    [CORT_ISA_AVX512] = nn_rmsnorm_row_avx2,
#else
    [CORT_ISA_AVX2] = nn_rmsnorm_row_generic,
    [CORT_ISA_AVX512] = nn_rmsnorm_row_generic,
#endif
};

nn_rmsnorm_row_fn nn_rmsnorm_row(void) { return rmsnorm_by_isa[cort_cpu_isa()]; }
