/* AVX-512 VNNI + VBMI depthwise int8 conv, one plane per call, 16 outputs of a row per vector (see
 * nn_qdwr16_args in int_gemm.h). The plane is read as bytes where it lies: no padded or widened copy,
 * no transposes. For 16 outputs of a row, one 64-byte load of an input row holds every byte their
 * taps of one group read; vpermb lays out, in output j's dword, the four bytes at columns j * sw + t
 * (t < 4), and one vpdpbusd multiplies them with the group's four int8 weights. Columns outside the
 * plane come from the masked load's fill, so padding needs no branch; rows outside it are the fill
 * alone. A 3x3 conv costs three load-permute-dot steps per 16 outputs, then the requantization of
 * nn_qrq16_avx512. |x| <= 255 and |w| <= 128 keep every dword's sum far inside int32; the int32 adds
 * wrap like the scalar loop's. */
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include <stdint.h>
#include "i8_rq16_avx512.h"

#define DWR_T __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

/* Which of the 64 bytes from column b lie in [0, iw). */
DWR_T static inline __mmask64 dwr_cols(int64_t b, int64_t iw) {
    const int64_t lo = b < 0 ? -b : 0, hi = iw - b;
    if (hi <= 0 || lo >= 64) return 0;
    const __mmask64 m = hi >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << hi) - 1;
    return m & ~(((__mmask64)1 << lo) - 1);
}

/* vpermb's index: output j's dword takes the four bytes at columns j * sw + t (t < 4) of the load. */
DWR_T static inline __m512i dwr_index(size_t sw) {
    uint8_t ixb[64];
    for (size_t j = 0; j < 16; j++)
        for (size_t t = 0; t < 4; t++) ixb[4 * j + t] = (uint8_t)(j * sw + t);
    return _mm512_loadu_si512((const void *)ixb);
}

/* The 15 sw + 4 bytes the 16 outputs of a group read: the load never touches the ones past them. */
DWR_T static inline __mmask64 dwr_used(size_t sw) {
    const size_t used = 15 * sw + 4;
    return used >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << used) - 1;
}

/* A tile of ROWS (1, or 2 when dh = 1 and sh = SH) output rows from row i by COLS (1 or 2) blocks of 16
 * from column j0: every input row slot the tile reads is loaded and laid out once per tap group, then each
 * output row takes its KH slots (row 1 of a pair reads slots SH..SH + KH - 1). Slots outside the plane have an
 * empty mask, so their loads return the fill without touching memory. */
DWR_T static inline __attribute__((always_inline)) void dwr_tile(const nn_qdwr16_args *a, size_t i, size_t j0,
                                                                int flip, __m512i fv, size_t KH, size_t NG, size_t SH, size_t ROWS, size_t COLS,
                                                                const uintptr_t *rows, const __mmask64 *okm,
                                                                const __m512i *wv, __m512i idx, __m512i fill,
                                                                __mmask64 mused, __m512i vb, __m512 vm) {
    const size_t sw = a->sw, ow = a->ow, used = 15 * sw + 4;
    const int64_t iw = (int64_t)a->iw;
    __m512i acc[2][2];
#pragma GCC unroll 2
    for (size_t c = 0; c < COLS; c++) {
        const int64_t b0 = (int64_t)((j0 + 16 * c) * sw) - (int64_t)a->pl;
        __mmask64 m[NN_QDWR16_MAX_GROUPS] = { 0 };
        const int inside = b0 >= 0 && b0 + (int64_t)(4 * (NG - 1) + used) <= iw;
#pragma GCC unroll 2
        for (size_t g = 0; g < NG; g++) m[g] = inside ? mused : dwr_cols(b0 + (int64_t)(4 * g), iw) & mused;
        acc[0][c] = acc[1][c] = _mm512_setzero_si512();
#pragma GCC unroll 17
        for (size_t r = 0; r < KH + (ROWS - 1) * SH; r++)
#pragma GCC unroll 2
            for (size_t g = 0; g < NG; g++) {
                /* masked-off bytes are never touched, so the address may lie before the row */
                __m512i v = _mm512_mask_loadu_epi8(fill, m[g] & okm[r], (const void *)(rows[r] + (uintptr_t)(b0 + (int64_t)(4 * g))));
                if (flip) v = _mm512_xor_si512(v, fv);
                v = _mm512_permutexvar_epi8(idx, v);
                if (r < KH) acc[0][c] = _mm512_dpbusd_epi32(acc[0][c], v, wv[r * NG + g]);
                if (ROWS == 2 && r >= SH) acc[1][c] = _mm512_dpbusd_epi32(acc[1][c], v, wv[(r - SH) * NG + g]);
            }
    }
    const size_t n = ow - j0 < 16 * COLS ? ow - j0 : 16 * COLS;
    if (a->y && ROWS == 2 && COLS == 2) {
        /* lanes 0-1: row i's 32 bytes, lanes 2-3: row i + 1's */
        const __m512i o = nn_qrq_pack4_avx512(nn_qrq_i32_avx512(acc[0][0], vb, vm), nn_qrq_i32_avx512(acc[0][1], vb, vm),
                                              nn_qrq_i32_avx512(acc[1][0], vb, vm), nn_qrq_i32_avx512(acc[1][1], vb, vm),
                                              _mm512_set1_epi16((int16_t)a->yzp), a->y_signed);
        const __mmask32 sm = n == 32 ? 0xffffffffu : (1u << n) - 1;
        _mm256_mask_storeu_epi8(a->y + i * ow + j0, sm, _mm512_castsi512_si256(o));
        _mm256_mask_storeu_epi8(a->y + (i + 1) * ow + j0, sm, _mm512_extracti64x4_epi64(o, 1));
        return;
    }
#pragma GCC unroll 2
    for (size_t rr = 0; rr < ROWS; rr++)
#pragma GCC unroll 2
        for (size_t c = 0; c < COLS; c++) {
            const size_t nc = n - 16 * c < 16 ? n - 16 * c : 16;
            const __mmask16 sm = (__mmask16)(nc == 16 ? 0xffffu : (1u << nc) - 1);
            const size_t o = (i + rr) * ow + j0 + 16 * c;
            if (a->y)
                _mm_mask_storeu_epi8(a->y + o, sm, nn_qrq16_avx512(acc[rr][c], vb, vm, _mm256_set1_epi16((int16_t)a->yzp), a->y_signed));
            else
                _mm512_mask_storeu_epi32(a->yint + o, sm, _mm512_add_epi32(acc[rr][c], vb));
        }
}

/* The plane with kh = KH and ng = NG (compile-time constants in the common cases, so the tap loops unroll
 * and the weights stay in registers; a->kh and a->ng otherwise). */
DWR_T static inline __attribute__((always_inline)) void dwr_plane(const nn_qdwr16_args *a, int flip, size_t KH,
                                                                   size_t NG, size_t SH) {
    const size_t ow = a->ow;
    const __m512i idx = dwr_index(a->sw);
    const __m512i fill = _mm512_set1_epi8((char)a->fill), fv = _mm512_set1_epi8((char)a->flip);
    const __m512i vb = _mm512_set1_epi32(a->bias);
    const __m512 vm = _mm512_set1_ps(a->mult);
    const __mmask64 mused = dwr_used(a->sw);
    const int64_t ih = (int64_t)a->ih;
    __m512i wv[NN_QDWR16_MAX_ROWS * NN_QDWR16_MAX_GROUPS];
#pragma GCC unroll 32
    for (size_t k = 0; k < KH * NG; k++) wv[k] = _mm512_set1_epi32(a->w[k]);
    for (size_t i = 0; i < a->oh;) {
        const size_t R = i + 1 < a->oh ? 2 : 1;
        uintptr_t rows[NN_QDWR16_MAX_ROWS + 2] = { 0 };
        __mmask64 okm[NN_QDWR16_MAX_ROWS + 2] = { 0 };
#pragma GCC unroll 18
        for (size_t r = 0; r < KH + (R - 1) * SH; r++) {
            /* slot r: kernel row r of output row i, or (pairs) kernel row r - SH of row i + 1 */
            const int64_t ir = (int64_t)(i * a->sh + r * a->dh) - (int64_t)a->pt;
            const int ok = ir >= 0 && ir < ih;
            okm[r] = ok ? ~(__mmask64)0 : 0;
            rows[r] = (uintptr_t)(a->x + (ok ? (size_t)ir * a->iw : 0));
        }
        size_t j0 = 0;
        if (R == 2) {
            for (; j0 + 16 < ow; j0 += 32) dwr_tile(a, i, j0, flip, fv, KH, NG, SH, 2, 2, rows, okm, wv, idx, fill, mused, vb, vm);
            if (j0 < ow) dwr_tile(a, i, j0, flip, fv, KH, NG, SH, 2, 1, rows, okm, wv, idx, fill, mused, vb, vm);
        } else {
            for (; j0 + 16 < ow; j0 += 32) dwr_tile(a, i, j0, flip, fv, KH, NG, 1, 1, 2, rows, okm, wv, idx, fill, mused, vb, vm);
            if (j0 < ow) dwr_tile(a, i, j0, flip, fv, KH, NG, 1, 1, 1, rows, okm, wv, idx, fill, mused, vb, vm);
        }
        i += R;
    }
}

/* Any other kernel: one row and one block at a time, no unrolling (the unrolled form's code for run-time
 * kh and ng would be large and slow to compile for nothing). */
DWR_T static void dwr_plane_any(const nn_qdwr16_args *a) {
    const size_t kh = a->kh, ng = a->ng, ow = a->ow, sw = a->sw;
    const __m512i idx = dwr_index(sw), fill = _mm512_set1_epi8((char)a->fill), fv = _mm512_set1_epi8((char)a->flip);
    const __m512i vb = _mm512_set1_epi32(a->bias);
    const __m512 vm = _mm512_set1_ps(a->mult);
    const __m256i vz16 = _mm256_set1_epi16((int16_t)a->yzp);
    const __mmask64 mused = dwr_used(sw);
    const int64_t iw = (int64_t)a->iw, ih = (int64_t)a->ih;
    for (size_t i = 0; i < a->oh; i++)
        for (size_t j0 = 0; j0 < ow; j0 += 16) {
            __m512i acc = _mm512_setzero_si512();
            for (size_t r = 0; r < kh; r++) {
                const int64_t ir = (int64_t)(i * a->sh + r * a->dh) - (int64_t)a->pt;
                if (ir < 0 || ir >= ih) {   /* a padded row: the fill alone */
                    const __m512i v = _mm512_permutexvar_epi8(idx, _mm512_xor_si512(fill, fv));
                    for (size_t g = 0; g < ng; g++) acc = _mm512_dpbusd_epi32(acc, v, _mm512_set1_epi32(a->w[r * ng + g]));
                    continue;
                }
                const uintptr_t row = (uintptr_t)(a->x + (size_t)ir * a->iw);
                for (size_t g = 0; g < ng; g++) {
                    const int64_t b = (int64_t)(j0 * sw + 4 * g) - (int64_t)a->pl;
                    /* masked-off bytes are never touched, so the address may lie before the row */
                    const __m512i v = _mm512_mask_loadu_epi8(fill, dwr_cols(b, iw) & mused, (const void *)(row + (uintptr_t)b));
                    acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(idx, _mm512_xor_si512(v, fv)),
                                              _mm512_set1_epi32(a->w[r * ng + g]));
                }
            }
            const size_t n = ow - j0 < 16 ? ow - j0 : 16;
            const __mmask16 sm = (__mmask16)(n == 16 ? 0xffffu : (1u << n) - 1);
            if (a->y) _mm_mask_storeu_epi8(a->y + i * ow + j0, sm, nn_qrq16_avx512(acc, vb, vm, vz16, a->y_signed));
            else _mm512_mask_storeu_epi32(a->yint + i * ow + j0, sm, _mm512_add_epi32(acc, vb));
        }
}

/* Pairs of output rows SH apart in the input (sh 1 or 2, dh 1), 3x3 and 5x5: mobilenet's and efficientnet's
 * depthwise convs. flip 1 XORs every load with a->flip (0x80 or 0); the 3x3 forms have a copy without it. */
DWR_T void nn_qdwr16_avx512vbmi(const nn_qdwr16_args *a) {
    const size_t sh = a->dh == 1 && a->sh <= 2 ? a->sh : 0;
    const int f = a->flip != 0;
    if (a->kh == 3 && a->ng == 1 && sh == 1) { if (f) dwr_plane(a, 1, 3, 1, 1); else dwr_plane(a, 0, 3, 1, 1); }
    else if (a->kh == 3 && a->ng == 1 && sh == 2) { if (f) dwr_plane(a, 1, 3, 1, 2); else dwr_plane(a, 0, 3, 1, 2); }
    else if (a->kh == 5 && a->ng == 2 && sh == 1) dwr_plane(a, 1, 5, 2, 1);
    else if (a->kh == 5 && a->ng == 2 && sh == 2) dwr_plane(a, 1, 5, 2, 2);
    else dwr_plane_any(a);
}
#endif
