/* AMX conv byte kernel (int_gemm.h quad 2, weights as A), 64 rows x 16 columns: int8 weight rows stored
 * whole (row i of a tile at i * kq, nn_igemm_kernel.a_rows) against the conv code's uint8 activation
 * panels (16 positions x 4 bytes per k quad, which is a B tile row as it stands). Per 64 bytes of K one B
 * tile and four A tiles of 16 rows feed four tdpbsud (signed weights x unsigned activations) into four
 * accumulator tiles; the A tiles rotate over three tile registers so a load does not wait on the product
 * just issued. A K that is not a multiple of 64 ends with one step over zero-padded copies. The
 * corrections are the quad-2 ones (int_gemm.h), applied after the tiles are stored. Tile configuration:
 * nn_igemm_amx_begin / _end (i8_gemm_u8s8_32x32_amx.c), called by the GEMM driver around each range. */
#include <string.h>
#include "../int_gemm.h"
#ifdef NN_HAVE_X86_IGEMM
#include <immintrin.h>
#include "i8_vnni_avx512.h"
#include "i8_amx.h"

/* quarters: 4 for 64 rows, 2 for the first 32 (edge tiles of at most 32 rows) */
__attribute__((target(NN_AMX_TARGET), always_inline)) static inline void amx_conv_tile(size_t kq4, const uint8_t *a,
                                                                                      size_t lda, const int8_t *b,
                                                                                      int32_t *c, size_t ldc,
                                                                                      const int32_t *rz,
                                                                                      const int32_t *cz,
                                                                                      const int quarters) {
    _tile_zero(0);
    _tile_zero(1);
    if (quarters == 4) {
        _tile_zero(2);
        _tile_zero(3);
    }
    size_t q = 0;
    for (; q + 16 <= kq4; q += 16) {
        _tile_loadd(6, b + 64 * q, 64);
        _tile_loadd(4, a + 4 * q, lda);
        _tile_dpbsud(0, 4, 6);
        _tile_loadd(5, a + 16 * lda + 4 * q, lda);
        _tile_dpbsud(1, 5, 6);
        if (quarters == 4) {
            _tile_loadd(7, a + 32 * lda + 4 * q, lda);
            _tile_dpbsud(2, 7, 6);
            _tile_loadd(4, a + 48 * lda + 4 * q, lda);
            _tile_dpbsud(3, 4, 6);
        }
    }
    if (q < kq4) {
        /* the last quads, zero-padded to a full step (zero bytes add nothing) */
        _Alignas(64) uint8_t at[64 * 64], bt[16 * 64];
        nn_amx_pad_tail(at, a, lda, 16 * (size_t)quarters, 4 * q, 4 * (kq4 - q), bt, b + 64 * q, 64);
        _tile_loadd(6, bt, 64);
        _tile_loadd(4, at, 64);
        _tile_dpbsud(0, 4, 6);
        _tile_loadd(5, at + 16 * 64, 64);
        _tile_dpbsud(1, 5, 6);
        if (quarters == 4) {
            _tile_loadd(7, at + 32 * 64, 64);
            _tile_dpbsud(2, 7, 6);
            _tile_loadd(4, at + 48 * 64, 64);
            _tile_dpbsud(3, 4, 6);
        }
    }
    const size_t st = ldc * sizeof(int32_t);
    _tile_stored(0, c, st);
    _tile_stored(1, c + 16 * ldc, st);
    if (quarters == 4) {
        _tile_stored(2, c + 32 * ldc, st);
        _tile_stored(3, c + 48 * ldc, st);
    }
    NN_AMX_MEMORY_BARRIER();
    const __m512i zb = _mm512_loadu_si512((const void *)cz), cs = _mm512_loadu_si512((const void *)(cz + 16));
    for (size_t i = 0; i < 16 * (size_t)quarters; i++) {
        int32_t *r = c + i * ldc;
        _mm512_storeu_si512((void *)r, nn_q_fix(_mm512_loadu_si512((const void *)r), rz + 2 * i, zb, cs));
    }
}

__attribute__((target(NN_AMX_TARGET))) void nn_igemm_cukr_amx_64x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                    const int8_t *b, int32_t *c, size_t ldc,
                                                                    const int32_t *rz, const int32_t *cz) {
    amx_conv_tile(kq4, a, lda, b, c, ldc, rz, cz, 4);
}

__attribute__((target(NN_AMX_TARGET))) void nn_igemm_cukr_amx_32x16(size_t kq4, const uint8_t *a, size_t lda,
                                                                    const int8_t *b, int32_t *c, size_t ldc,
                                                                    const int32_t *rz, const int32_t *cz) {
    amx_conv_tile(kq4, a, lda, b, c, ldc, rz, cz, 2);
}
#endif
