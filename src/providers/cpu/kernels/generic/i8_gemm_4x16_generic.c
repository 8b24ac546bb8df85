/* Portable 4x16 exact int GEMM micro-kernel over the int16 packs of int_gemm.h. Products and sums
 * run in uint32 so that a sum overflowing int32 wraps (as the SIMD kernels' adds do) instead of
 * being undefined. */
#include "../int_gemm.h"

void nn_igemm_ukr_generic_4x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc) {
    uint32_t acc[4][16] = { { 0 } };
    for (size_t p = 0; p < kp2; p++, b += 32)
        for (int i = 0; i < 4; i++) {
            const int32_t a0 = a[(size_t)i * lda + 2 * p], a1 = a[(size_t)i * lda + 2 * p + 1];
            for (int j = 0; j < 16; j++)
                acc[i][j] += (uint32_t)(a0 * (int32_t)b[2 * j]) + (uint32_t)(a1 * (int32_t)b[2 * j + 1]);
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 16; j++) c[(size_t)i * ldc + j] = (int32_t)acc[i][j];
}

void nn_igemm_ukr_generic_1x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc) {
    (void)lda;
    (void)ldc;
    uint32_t acc[16] = { 0 };
    for (size_t p = 0; p < kp2; p++, b += 32) {
        const int32_t a0 = a[2 * p], a1 = a[2 * p + 1];
        for (int j = 0; j < 16; j++) acc[j] += (uint32_t)(a0 * (int32_t)b[2 * j]) + (uint32_t)(a1 * (int32_t)b[2 * j + 1]);
    }
    for (int j = 0; j < 16; j++) c[j] = (int32_t)acc[j];
}

void nn_igemm_ukr_generic_4x16_half(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc) {
    uint32_t acc[4][8] = { { 0 } };
    for (size_t p = 0; p < kp2; p++, b += 32)
        for (int i = 0; i < 4; i++) {
            const int32_t a0 = a[(size_t)i * lda + 2 * p], a1 = a[(size_t)i * lda + 2 * p + 1];
            for (int j = 0; j < 8; j++)
                acc[i][j] += (uint32_t)(a0 * (int32_t)b[2 * j]) + (uint32_t)(a1 * (int32_t)b[2 * j + 1]);
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) c[(size_t)i * ldc + j] = (int32_t)acc[i][j];
}
