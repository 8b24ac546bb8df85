/* Portable 4x16 SGEMM micro-kernel (plain C; compilers vectorize the inner loops). */
#include "../gemm_ukernels.h"

void nn_ukr_scalar_4x16(const nn_ukr_args *args) {
    float acc[4][16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 16; j++) acc[i][j] = args->bias ? args->bias[i] : 0.0f;
    const float *a = args->a, *b = args->b;
    for (size_t p = 0; p < args->kc; p++, a += args->a_cs, b += args->ldb) {
        for (int i = 0; i < 4; i++) {
            const float ai = a[(size_t)i * args->a_rs];
            for (int j = 0; j < 16; j++) acc[i][j] += ai * b[j];
        }
    }
    const float lo = args->act_lo, hi = args->act_hi;
    for (int i = 0; i < 4; i++) {
        float *ci = args->c + (size_t)i * args->ldc;
        for (int j = 0; j < 16; j++) {
            float v = args->accumulate ? ci[j] + acc[i][j] : acc[i][j];
            if (args->act == 1) v = v > 0.0f ? v : 0.0f;
            else if (args->act == 2) v = v < lo ? lo : v > hi ? hi : v;
            else if (args->act == 3) v = v >= 0.0f ? v : v * lo;
            ci[j] = v;
        }
    }
}
