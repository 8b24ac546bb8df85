/* Instantiates the float32 kernels of kernels/elementwise_body.h per ISA level and picks one at run time. */
#include "../../../core/cpu_features.h"
#include <stdint.h>
#include <string.h>
#include <math.h>
#include "elementwise.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define EW_SFX _ref
#define EW_VBYTES 16
#define EW_TARGET
#define EW_FMA(a, b, c) ((a) * (b) + (c))
#define EW_CAT_NAME "portable"
#include "elementwise_body.h"
#undef EW_SFX
#undef EW_VBYTES
#undef EW_TARGET
#undef EW_FMA
#undef EW_CAT_NAME

#if defined(__x86_64__) || defined(__i386__)
#define EW_X86 1
#define EW_SFX _avx2
#define EW_VBYTES 32
#define EW_TARGET __attribute__((target("avx2,fma")))
#define EW_FMA(a, b, c) ((VF)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define EW_CAT_NAME "avx2"
#include "elementwise_body.h"
#undef EW_SFX
#undef EW_VBYTES
#undef EW_TARGET
#undef EW_FMA
#undef EW_CAT_NAME

#define EW_SFX _avx512
#define EW_VBYTES 64
#define EW_TARGET __attribute__((target("avx512f")))
#define EW_FMA(a, b, c) ((VF)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define EW_CAT_NAME "avx512f"
#include "elementwise_body.h"
#undef EW_SFX
#undef EW_VBYTES
#undef EW_TARGET
#undef EW_FMA
#undef EW_CAT_NAME
#endif

const ew_f32_kernels *ew_f32_level(int level) {
    switch (level) {
    case 0: return &ew_kernels_ref;
#ifdef EW_X86
    /* levels are numbered as cort_isa_level: usable up to the level in use */
    case 1: return cort_cpu_isa() == CORT_ISA_AVX2 || cort_cpu_isa() == CORT_ISA_AVX512 ? &ew_kernels_avx2 : NULL;
    case 2: return cort_cpu_isa() == CORT_ISA_AVX512 ? &ew_kernels_avx512 : NULL;
#endif
    default: return NULL;
    }
}

const ew_f32_kernels *ew_f32_best(void) {
    for (int level = 2; level > 0; level--) {
        const ew_f32_kernels *k = ew_f32_level(level);
        if (k) return k;
    }
    return &ew_kernels_ref;
}
