/* Shared by the AMX byte kernels (i8_gemm_u8s8_32x32_amx.c, i8_qconv_s8u8_64x16_amx.c); include after
 * <immintrin.h>. */
#ifndef CORT_CPU_KERNELS_X86_I8_AMX_H
#define CORT_CPU_KERNELS_X86_I8_AMX_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NN_AMX_TARGET "amx-tile,amx-int8,avx512f,avx512bw,avx512vnni"
/* GCC 12's tile load/store intrinsics are asm statements that take their addresses in registers and
 * declare no memory access: this barrier keeps the stores to the tail copies before the tile loads,
 * and the vector reads of c after the tile stores. */
#define NN_AMX_MEMORY_BARRIER() __asm__ volatile("" ::: "memory")

/* A tile step over K's last n bytes (n < 64, a multiple of 4), zero-padded: rows rows of A from byte
 * k0 (lda apart) into at (64 bytes each), and the n / 4 quad rows of B from b (bq bytes each, the
 * panel's quad row) into bt, the rest of its 16 rows zero. */
static inline void nn_amx_pad_tail(uint8_t *at, const uint8_t *a, size_t lda, size_t rows, size_t k0, size_t n,
                                   uint8_t *bt, const void *b, size_t bq) {
    memset(at, 0, 64 * rows);
    for (size_t i = 0; i < rows; i++) memcpy(at + 64 * i, a + i * lda + k0, n);
    memcpy(bt, b, bq * (n / 4));
    memset(bt + bq * (n / 4), 0, bq * (16 - n / 4));
    NN_AMX_MEMORY_BARRIER();
}
#endif
