/* TEMPORARY stand-in (replaced by the real probe on merge). */
#include <stdlib.h>
#include <string.h>
#include "cpu_features.h"
cort_isa_level cort_cpu_isa(void) {
    const char *e = getenv("CORT_ISA");
    if (e && !strcmp(e, "generic")) return CORT_ISA_GENERIC;
#if defined(__x86_64__)
    if (e && !strcmp(e, "avx2")) return CORT_ISA_AVX2;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return CORT_ISA_AVX512;
    if (__builtin_cpu_supports("avx2")) return CORT_ISA_AVX2;
#endif
    return CORT_ISA_GENERIC;
}
