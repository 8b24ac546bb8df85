/* Portable integer-conv helpers (int_gemm.h: nn_qconv_ops). */
#include "../int_gemm.h"
#include <math.h>
#include "../../ops/quant/quant.h"

void nn_qdw_taps_generic(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps, const int16_t *w) {
    for (size_t o = 0; o < n; o++) {
        uint32_t acc = 0;   /* wraps as the SIMD lanes do */
        for (size_t t = 0; t < ntaps; t++) acc += (uint32_t)(x[off[t] + o] * (int32_t)w[t]);
        y[o] = (int32_t)acc;
    }
}

void nn_qpack2_16_generic(const int16_t *ra, const int16_t *rb, size_t n, int16_t *out, size_t pstride) {
    for (size_t q = 0; q < n; q += 16, out += pstride)
        for (size_t t = 0; t < 16; t++) {
            out[2 * t] = ra[q + t];
            out[2 * t + 1] = rb[q + t];
        }
}

void nn_qwiden_generic(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out) {
    const int16_t z = (int16_t)zp;
    if (is_signed) { const int8_t *s = x; for (size_t i = 0; i < n; i++) out[i] = (int16_t)(s[i] - z); }
    else { const uint8_t *u = x; for (size_t i = 0; i < n; i++) out[i] = (int16_t)(u[i] - z); }
}

void nn_qwiden2_generic(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev, int16_t *od) {
    const int16_t z = (int16_t)zp;
    if (is_signed) {
        const int8_t *s = x;
        for (size_t i = 0; 2 * i < n; i++) ev[i] = (int16_t)(s[2 * i] - z);
        for (size_t i = 0; 2 * i + 1 < n; i++) od[i] = (int16_t)(s[2 * i + 1] - z);
    } else {
        const uint8_t *u = x;
        for (size_t i = 0; 2 * i < n; i++) ev[i] = (int16_t)(u[2 * i] - z);
        for (size_t i = 0; 2 * i + 1 < n; i++) od[i] = (int16_t)(u[2 * i + 1] - z);
    }
}

void nn_qwino_in_generic(const int16_t *const *e, const int16_t *const *o, size_t n, int16_t *v, size_t vstride) {
    for (size_t t = 0; t < n; t++) {
        int16_t h[4][4];
        for (int i = 0; i < 4; i++) {   /* d B along the row */
            h[i][0] = (int16_t)(e[i][t] - e[i][t + 1]);
            h[i][1] = (int16_t)(o[i][t] + e[i][t + 1]);
            h[i][2] = (int16_t)(e[i][t + 1] - o[i][t]);
            h[i][3] = (int16_t)(o[i][t] - o[i][t + 1]);
        }
        for (int j = 0; j < 4; j++) {   /* B^T (d B) down the column */
            v[(size_t)j * vstride + t] = (int16_t)(h[0][j] - h[2][j]);
            v[(size_t)(4 + j) * vstride + t] = (int16_t)(h[1][j] + h[2][j]);
            v[(size_t)(8 + j) * vstride + t] = (int16_t)(h[2][j] - h[1][j]);
            v[(size_t)(12 + j) * vstride + t] = (int16_t)(h[1][j] - h[3][j]);
        }
    }
}

void nn_qpack2_8_generic(const void *xa, const void *xb, size_t n, int is_signed, int32_t zp, int16_t *out,
                         size_t pstride) {
    for (size_t q0 = 0; q0 < n; q0 += 16, out += pstride)
        for (size_t t = 0; t < 16; t++) {
            const size_t q = q0 + t;
            int16_t a = 0, b = 0;
            if (q < n) {
                a = (int16_t)((is_signed ? (int32_t)((const int8_t *)xa)[q] : (int32_t)((const uint8_t *)xa)[q]) - zp);
                if (xb) b = (int16_t)((is_signed ? (int32_t)((const int8_t *)xb)[q] : (int32_t)((const uint8_t *)xb)[q]) - zp);
            }
            out[2 * t] = a;
            out[2 * t + 1] = b;
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

void nn_qrq_tile_generic(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                         const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd) {
    for (size_t r = 0; r < rows; r++)
        nn_qrq_row_generic(acc + r * ldt, cols, bias ? bias[r] : 0, mult[r], yzp, is_signed, dst + r * ldd);
}

void nn_qrq_tile_cols_generic(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const float *mult, int32_t yzp,
                              int is_signed, uint8_t *dst, size_t ldd) {
    for (size_t r = 0; r < rows; r++)
        for (size_t q = 0; q < cols; q++) nn_qrq_row_generic(acc + r * ldt + q, 1, 0, mult[q], yzp, is_signed, dst + r * ldd + q);
}

void nn_qquad4_generic(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, size_t n,
                       uint8_t flip, uint8_t *out, size_t pstride) {
    for (size_t q = 0; q < n; q++) {
        uint8_t *d = out + (q / 16) * pstride + 4 * (q % 16);
        d[0] = (uint8_t)(r0[q] ^ flip);
        d[1] = (uint8_t)(r1[q] ^ flip);
        d[2] = (uint8_t)(r2[q] ^ flip);
        d[3] = (uint8_t)(r3[q] ^ flip);
    }
}
