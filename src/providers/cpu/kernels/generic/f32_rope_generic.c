/* Portable RotaryEmbedding row (see rope_ukernels.h). */
#include <string.h>
#include "../rope_ukernels.h"
#include "../../../../core/cpu_features.h"

void nn_rope_row_generic(const float *x, float *y, const float *c, const float *s, size_t half, size_t n,
                         int interleaved) {
    if (interleaved) {
        for (size_t i = 0; i < half; i++) {
            const float x1 = x[2 * i], x2 = x[2 * i + 1];
            y[2 * i] = c[i] * x1 - s[i] * x2;
            y[2 * i + 1] = s[i] * x1 + c[i] * x2;
        }
    } else {
        for (size_t i = 0; i < half; i++) {
            const float x1 = x[i], x2 = x[i + half];
            y[i] = c[i] * x1 - s[i] * x2;
            y[i + half] = s[i] * x1 + c[i] * x2;
        }
    }
    memcpy(y + 2 * half, x + 2 * half, (n - 2 * half) * sizeof(float));
}

static const nn_rope_row_fn rope_by_isa[CORT_ISA_LEVEL_COUNT] = {
    [CORT_ISA_GENERIC] = nn_rope_row_generic,
    [CORT_ISA_NEON] = nn_rope_row_generic,
#ifdef NN_HAVE_X86_UKERNELS
    [CORT_ISA_AVX2] = nn_rope_row_avx2,
    [CORT_ISA_AVX512] = nn_rope_row_avx2,
#else
    [CORT_ISA_AVX2] = nn_rope_row_generic,
    [CORT_ISA_AVX512] = nn_rope_row_generic,
#endif
};

nn_rope_row_fn nn_rope_row(void) { return rope_by_isa[cort_cpu_isa()]; }
