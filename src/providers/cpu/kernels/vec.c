/* Instantiates kernels/vec_body.h per ISA level and picks one at run time. */
#include "../../../core/cpu_features.h"
#include <stdint.h>
#include <math.h>
#include <string.h>
#include "vec.h"

#define FV_SFX _ref
#define FV_VBYTES 16
#define FV_TARGET
#define FV_NAME "portable"
#include "vec_body.h"
#undef FV_SFX
#undef FV_VBYTES
#undef FV_TARGET
#undef FV_NAME

#if defined(__x86_64__) || defined(__i386__)
#define FV_X86 1
#define FV_SFX _avx2
#define FV_VBYTES 32
#define FV_TARGET __attribute__((target("avx2,fma")))
#define FV_NAME "avx2"
#include "vec_body.h"
#undef FV_SFX
#undef FV_VBYTES
#undef FV_TARGET
#undef FV_NAME

#define FV_SFX _avx512
#define FV_VBYTES 64
#define FV_TARGET __attribute__((target("avx512f")))
#define FV_NAME "avx512f"
#include "vec_body.h"
#undef FV_SFX
#undef FV_VBYTES
#undef FV_TARGET
#undef FV_NAME
#endif

const fu_vec_kernels *fu_vec_level(int level) {
    switch (level) {
    case 0: return &fv_kernels_ref;
#ifdef FV_X86
    /* levels are numbered as cort_isa_level: usable up to the level in use */
    case 1: return cort_cpu_isa() == CORT_ISA_AVX2 || cort_cpu_isa() == CORT_ISA_AVX512 ? &fv_kernels_avx2 : NULL;
    case 2: return cort_cpu_isa() == CORT_ISA_AVX512 ? &fv_kernels_avx512 : NULL;
#endif
    default: return NULL;
    }
}

const fu_vec_kernels *fu_vec_best(void) {
    for (int l = 2; l > 0; l--) {
        const fu_vec_kernels *k = fu_vec_level(l);
        if (k) return k;
    }
    return &fv_kernels_ref;
}
