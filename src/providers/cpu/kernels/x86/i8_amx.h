/* Shared by the AMX byte kernels (i8_gemm_u8s8_32x32_amx.c, i8_qconv_s8u8_64x16_amx.c); include after
 * <immintrin.h>. */
#ifndef CORT_CPU_KERNELS_X86_I8_AMX_H
#define CORT_CPU_KERNELS_X86_I8_AMX_H

#define NN_AMX_TARGET "amx-tile,amx-int8,avx512f,avx512bw,avx512vnni"
/* GCC 12's tile load/store intrinsics are asm statements that take their addresses in registers and
 * declare no memory access: this barrier keeps the stores to the tail copies before the tile loads,
 * and the vector reads of c after the tile stores. */
#define NN_AMX_MEMORY_BARRIER() __asm__ volatile("" ::: "memory")
#endif
