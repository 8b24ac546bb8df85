/* Portable 4-bit weight kernels (q4_gemm.h): up to 4 rows of A against one 16-column panel, and a
 * panel's K slice dequantized into the SGEMM's packed-B rows. */
#include <string.h>
#include "../q4_gemm.h"

/* the block record's 16 scales and zero points as floats */
static void q4_block_params(const nn_q4_weights *w, const uint8_t *rec, float *s, float *z) {
    memcpy(s, rec, NN_Q4_NR * sizeof(float));
    for (size_t j = 0; j < NN_Q4_NR; j++)
        z[j] = w->zp_mode == NN_Q4_ZP_U8 ? (float)rec[64 + j] : 8.0f;
    if (w->zp_mode == NN_Q4_ZP_F32) memcpy(z, rec + 64, NN_Q4_NR * sizeof(float));
}

void nn_q4_gemv_generic_4x16(const nn_q4_weights *w, const uint8_t *panel, const float *a, size_t lda, size_t rows,
                             const float *bias, float *y, size_t ldy, size_t cols) {
    float acc[4][NN_Q4_NR] = { { 0 } };
    for (size_t g = 0; g < w->blocks; g++) {
        const uint8_t *rec = panel + g * w->rec, *q = rec + w->zp_off;
        const size_t k0 = g * w->block, kn = w->K - k0 < w->block ? w->K - k0 : w->block;
        float s[NN_Q4_NR], z[NN_Q4_NR];
        q4_block_params(w, rec, s, z);
        for (size_t i = 0; i < kn; i++) {
            const uint8_t *qr = q + (i / 2) * NN_Q4_NR;
            const unsigned sh = (unsigned)(i & 1) * 4;
            float d[NN_Q4_NR];
            for (size_t j = 0; j < NN_Q4_NR; j++) d[j] = ((float)((qr[j] >> sh) & 15) - z[j]) * s[j];
            for (size_t r = 0; r < rows; r++) {
                const float av = a[r * lda + k0 + i];
                for (size_t j = 0; j < NN_Q4_NR; j++) acc[r][j] += av * d[j];
            }
        }
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < cols; j++) y[r * ldy + j] = acc[r][j] + (bias ? bias[j] : 0.0f);
}

void nn_q4_dequant_generic_16(const nn_q4_weights *w, const uint8_t *panel, size_t k0, size_t kc, float *dst,
                              size_t ldd) {
    size_t g = (size_t)-1;
    float s[NN_Q4_NR], z[NN_Q4_NR];
    const uint8_t *q = NULL;
    for (size_t i = 0; i < kc; i++) {
        const size_t k = k0 + i;
        if (k / w->block != g) {
            g = k / w->block;
            const uint8_t *rec = panel + g * w->rec;
            q4_block_params(w, rec, s, z);
            q = rec + w->zp_off;
        }
        const size_t kb = k % w->block;
        const uint8_t *qr = q + (kb / 2) * NN_Q4_NR;
        const unsigned sh = (unsigned)(kb & 1) * 4;
        for (size_t j = 0; j < NN_Q4_NR; j++) dst[i * ldd + j] = ((float)((qr[j] >> sh) & 15) - z[j]) * s[j];
    }
}
