/* Portable 4x16 SGEMM micro-kernel (plain C; compilers vectorize the inner loops). */
#include "gemm_ukernels.h"

void nn_ukr_scalar_4x16(size_t kc, const float *a, const float *b, size_t ldb, float *c, size_t ldc,
                        int accumulate) {
    float acc[4][16] = {{0}};
    for (size_t p = 0; p < kc; p++, a += 4, b += ldb) {
        for (int i = 0; i < 4; i++) {
            const float ai = a[i];
            for (int j = 0; j < 16; j++) acc[i][j] += ai * b[j];
        }
    }
    for (int i = 0; i < 4; i++) {
        float *ci = c + (size_t)i * ldc;
        if (accumulate)
            for (int j = 0; j < 16; j++) ci[j] += acc[i][j];
        else
            for (int j = 0; j < 16; j++) ci[j] = acc[i][j];
    }
}
