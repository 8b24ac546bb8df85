/* Portable integer-conv helpers (int_gemm.h: nn_qconv_ops). */
#include "../int_gemm.h"
#include "../../ops/quant/quant.h"

void nn_qdw_row_generic(int32_t *y, size_t n, const int16_t *x, size_t xstep, size_t dw, size_t kh, size_t kw,
                        const int16_t *w) {
    for (size_t o = 0; o < n; o++) y[o] = 0;
    for (size_t i = 0; i < kh; i++)
        for (size_t j = 0; j < kw; j++) {
            const int32_t wv = w[i * kw + j];
            const int16_t *xs = x + i * xstep + j * dw;
            for (size_t o = 0; o < n; o++) y[o] += xs[o] * wv;
        }
}

void nn_qrq_row_generic(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed, void *dst) {
    for (size_t q = 0; q < n; q++) {
        const int32_t a = (int32_t)((uint32_t)acc[q] + (uint32_t)bias);   /* wraps as the int32 sum does */
        const int32_t v = nn_q_add_sat(nn_q_round_fast((float)a * mult), yzp);
        if (is_signed) ((int8_t *)dst)[q] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
        else ((uint8_t *)dst)[q] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}
