/* AMX byte GEMM micro-kernel, 32 rows x 32 columns, over the quad-1 byte packs of int_gemm.h (uint8 A
 * rows of kq bytes, int8 B panels of 32 columns x 4 bytes per k quad) — the same packs as the 8x32
 * VNNI tile, so its one-row kernel serves the few-row tiles. Per 64 bytes of K: two A tiles (16 rows
 * each, read in place at the packed row stride), two B tiles (16 columns each: the panel's 128-byte
 * quad rows read at stride 128, from byte 0 and byte 64), four tdpbusd into a 2 x 2 grid of int32
 * accumulator tiles. A K that is not a multiple of 64 ends with one step over zero-padded copies of
 * the last quads. The raw sums wrap like the reference's; the zero points come off afterwards with the
 * VNNI tile's correction.
 *
 * Tile state belongs to the thread: nn_igemm_amx_begin loads the configuration once per range of tiles
 * (int_gemm.c calls it around igemm_range_quad's loop) and nn_igemm_amx_end releases it, so no tile
 * state outlives a range and foreign AMX code on the thread between ranges is not disturbed. */
#include <string.h>
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include "i8_vnni_avx512.h"
#include "i8_amx.h"

/* The 64-byte tile configuration (palette 1): tiles 0..3 accumulate 16 rows x 16 int32, 4..5 hold A
 * (16 rows x 64 bytes), 6..7 B (16 quad rows x 64 bytes). */
typedef struct nn_amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} nn_amx_cfg;

/* A constant in memory, not a stack copy: GCC 12's _tile_loadconfig tells the compiler it reads only
 * the first 8 bytes, so stores to a local configuration beyond those were dropped as dead. */
static const nn_amx_cfg amx_cfg = { .palette = 1,
                                    .colsb = { 64, 64, 64, 64, 64, 64, 64, 64 },
                                    .rows = { 16, 16, 16, 16, 16, 16, 16, 16 } };

__attribute__((target(NN_AMX_TARGET))) void nn_igemm_amx_begin(void) { _tile_loadconfig(&amx_cfg); }

__attribute__((target(NN_AMX_TARGET))) void nn_igemm_amx_end(void) { _tile_release(); }

/* The tile body: 32 rows (halves 2) or the first 16 (halves 1, for edge tiles of at most 16 rows). */
__attribute__((target(NN_AMX_TARGET), always_inline)) static inline void amx_tile(size_t kq4, const uint8_t *a, size_t lda,
                                                                                 const int8_t *b, int32_t *c, size_t ldc,
                                                                                 const int32_t *rz, const int32_t *cz,
                                                                                 const int halves) {
    _tile_zero(0);
    _tile_zero(1);
    if (halves == 2) {
        _tile_zero(2);
        _tile_zero(3);
    }
    size_t q = 0;
    for (; q + 16 <= kq4; q += 16) {
        _tile_loadd(4, a + 4 * q, lda);
        _tile_loadd(6, b + 128 * q, 128);
        _tile_loadd(7, b + 128 * q + 64, 128);
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        if (halves == 2) {
            _tile_loadd(5, a + 16 * lda + 4 * q, lda);
            _tile_dpbusd(2, 5, 6);
            _tile_dpbusd(3, 5, 7);
        }
    }
    if (q < kq4) {
        /* the last quads, zero-padded to a full step (zero bytes add nothing) */
        _Alignas(64) uint8_t at[32 * 64], bt[16 * 128];
        nn_amx_pad_tail(at, a, lda, 16 * (size_t)halves, 4 * q, 4 * (kq4 - q), bt, b + 128 * q, 128);
        _tile_loadd(4, at, 64);
        _tile_loadd(6, bt, 128);
        _tile_loadd(7, bt + 64, 128);
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        if (halves == 2) {
            _tile_loadd(5, at + 16 * 64, 64);
            _tile_dpbusd(2, 5, 6);
            _tile_dpbusd(3, 5, 7);
        }
    }
    const size_t st = ldc * sizeof(int32_t);
    _tile_stored(0, c, st);
    _tile_stored(1, c + 16, st);
    if (halves == 2) {
        _tile_stored(2, c + 16 * ldc, st);
        _tile_stored(3, c + 16 * ldc + 16, st);
    }
    NN_AMX_MEMORY_BARRIER();
    const __m512i zb0 = _mm512_loadu_si512((const void *)cz), zb1 = _mm512_loadu_si512((const void *)(cz + 16));
    const __m512i cs0 = _mm512_loadu_si512((const void *)(cz + 32)), cs1 = _mm512_loadu_si512((const void *)(cz + 48));
    for (size_t i = 0; i < 16 * (size_t)halves; i++) {
        int32_t *r = c + i * ldc;
        _mm512_storeu_si512((void *)r, nn_q_fix(_mm512_loadu_si512((const void *)r), rz + 2 * i, zb0, cs0));
        _mm512_storeu_si512((void *)(r + 16),
                            nn_q_fix(_mm512_loadu_si512((const void *)(r + 16)), rz + 2 * i, zb1, cs1));
    }
}

__attribute__((target(NN_AMX_TARGET))) void nn_igemm_qukr_amx_32x32(size_t kq4, const uint8_t *a, size_t lda,
                                                                    const int8_t *b, int32_t *c, size_t ldc,
                                                                    const int32_t *rz, const int32_t *cz) {
    amx_tile(kq4, a, lda, b, c, ldc, rz, cz, 2);
}

__attribute__((target(NN_AMX_TARGET))) void nn_igemm_qukr_amx_16x32(size_t kq4, const uint8_t *a, size_t lda,
                                                                    const int8_t *b, int32_t *c, size_t ldc,
                                                                    const int32_t *rz, const int32_t *cz) {
    amx_tile(kq4, a, lda, b, c, ldc, rz, cz, 1);
}
#endif
