/* One map of the CPU: the only place in src/ that asks the processor what it can do.
 *
 * The CPU is probed once per process (cpuid + xgetbv on x86, getauxval(AT_HWCAP) on aarch64) behind
 * a cort_once guard, and CORT_ISA is read (getenv) at that same first call. The result is an ISA
 * level: the widest kernel family this process may use.
 *
 *   generic  portable C, every CPU
 *   avx2     x86-64 with AVX2 + FMA + F16C and the OS saving YMM state (XCR0 bits 1-2)
 *   avx512   avx2 plus AVX-512 F + BW + DQ + VL and the OS saving opmask/ZMM state (XCR0 bits 5-7)
 *   neon     aarch64 with Advanced SIMD (ASIMD)
 *
 * CORT_ISA=generic|avx2|avx512|neon caps the level (case-insensitive; unset or empty: no cap). A value
 * that is unknown, names a level above what the CPU supports, or belongs to another architecture
 * is an error: cort_cpu_info_get returns INVALID_ARGUMENT (the message names CORT_ISA, the value and
 * what the CPU has), remembers it, and returns the same error on every later call; session creation
 * reports it. A process never silently runs at a level other than the one asked for.
 *
 * Kernels choose by `level` (via cort_cpu_isa()), never by `flags` alone: `flags` is what the CPU and
 * OS offer, independent of CORT_ISA; an extension above the level in use (e.g. AVX512VNNI while
 * CORT_ISA=avx2) must not be used. Optional extensions within the level (AVX512VNNI, AVX512BF16,
 * DOTPROD, ...) may be tested in `flags`. */
#ifndef CORT_CORE_CPU_FEATURES_H
#define CORT_CORE_CPU_FEATURES_H
#include <stddef.h>
#include <stdint.h>
#include "cort.h"

typedef enum cort_isa_level { CORT_ISA_GENERIC = 0, CORT_ISA_AVX2 = 1, CORT_ISA_AVX512 = 2, CORT_ISA_NEON = 3 } cort_isa_level;
#define CORT_ISA_LEVEL_COUNT 4

/* Flags: a bit is set only when the CPU has the extension and the OS saves its register state. */
enum {
    CORT_CPU_AVX2 = 1u << 0, CORT_CPU_FMA = 1u << 1, CORT_CPU_F16C = 1u << 2, CORT_CPU_AVX512F = 1u << 3,
    CORT_CPU_AVX512BW = 1u << 4, CORT_CPU_AVX512DQ = 1u << 5, CORT_CPU_AVX512VL = 1u << 6,
    CORT_CPU_AVX512VNNI = 1u << 7, CORT_CPU_AVX512BF16 = 1u << 8, CORT_CPU_AVXVNNI = 1u << 9,
    CORT_CPU_AVX512FP16 = 1u << 10,
    CORT_CPU_AMX = 1u << 11,        /* AMX-TILE + AMX-INT8 + AMX-BF16 with XTILE state in XCR0 (whether cort
                                     * may use the tiles: cort_cpu_info.amx_tiles) */
    CORT_CPU_AVX512VBMI = 1u << 12, /* byte permutes across a zmm (vpermb, vpermi2b) */
    CORT_CPU_NEON = 1u << 16, CORT_CPU_DOTPROD = 1u << 17,
    CORT_CPU_FP16ARITH = 1u << 18   /* FP16 scalar and vector arithmetic (HWCAP_FPHP + HWCAP_ASIMDHP) */
};

typedef struct cort_cpu_info {
    cort_isa_level level;      /* in use: detected, capped by CORT_ISA */
    cort_isa_level detected;   /* the highest level this CPU (and OS) supports */
    int            capped;     /* level < detected because of CORT_ISA */
    uint32_t       flags;      /* CORT_CPU_* of this CPU, whatever CORT_ISA says */
    /* 1: the AMX kernels may run: the CPU has AMX, level avx512 is in use, CORT_AMX is not "0", and
     * (Linux) the process was granted the tile state (arch_prctl ARCH_REQ_XCOMP_PERM, asked by the
     * probe only under those conditions: the grant is process-wide and enlarges signal frames) */
    int            amx_tiles;
    /* Bytes of one core's level-2 data (or unified) cache, 0 if the CPU does not say: x86 from
     * cpuid's deterministic cache parameters (leaf 4, or AMD's 0x8000001D, else 0x80000006),
     * elsewhere from sysconf. Blocking that keeps a working set in L2 sizes itself by it (Zen 3:
     * 512 KB, Zen 4/5: 1 MB, Intel client cores 256 KB to 2 MB). */
    size_t         l2_bytes;
} cort_cpu_info;

/* Probes once (thread-safe). On success *out points to a static, immutable structure (the same
 * pointer for every call and thread). If CORT_ISA is invalid, returns INVALID_ARGUMENT (caller
 * frees) and leaves *out untouched; that failure is remembered and returned by every call. */
cort_status *cort_cpu_info_get(const cort_cpu_info **out);
/* The level in use; CORT_ISA_GENERIC when cort_cpu_info_get fails. */
cort_isa_level cort_cpu_isa(void);
/* "generic", "avx2", "avx512", "neon"; "unknown" for other values. Static string. */
const char *cort_isa_name(cort_isa_level l);
/* The levels this CPU supports, lowest first (generic always first), ignoring CORT_ISA. Writes at
 * most `max` entries (out may be NULL when max is 0) and returns how many there are. */
int cort_cpu_levels(cort_isa_level *out, int max);
/* cort_cpu_info.amx_tiles; 0 when cort_cpu_info_get fails. */
int cort_cpu_amx_tiles(void);
/* cort_cpu_info.l2_bytes where the CPU reports it, else `fallback` (also when cort_cpu_info_get
 * fails: the cache sizes do not depend on CORT_ISA, so they are probed regardless). */
size_t cort_cpu_l2_bytes(size_t fallback);
/* The CPU's flags (whatever CORT_ISA says; valid even when cort_cpu_info_get fails). */
uint32_t cort_cpu_flags(void);
/* Writes the space-separated names of `flags` ("avx2 fma f16c ...") like snprintf; returns the
 * full length. */
int cort_cpu_flag_names(uint32_t flags, char *buf, size_t size);
#endif
