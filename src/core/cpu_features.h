/* TEMPORARY stand-in (replaced by the real probe on merge). */
#ifndef CORT_CORE_CPU_FEATURES_H
#define CORT_CORE_CPU_FEATURES_H
#include <stdint.h>
#include "status.h"
typedef enum cort_isa_level { CORT_ISA_GENERIC = 0, CORT_ISA_AVX2 = 1, CORT_ISA_AVX512 = 2, CORT_ISA_NEON = 3 } cort_isa_level;
typedef struct cort_cpu_info { cort_isa_level level, detected; int capped; uint32_t flags; } cort_cpu_info;
cort_status *cort_cpu_info_get(const cort_cpu_info **out);
cort_isa_level cort_cpu_isa(void);
const char *cort_isa_name(cort_isa_level l);
int cort_cpu_levels(cort_isa_level *out, int max);
#endif
