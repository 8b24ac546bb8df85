/* The CPU probe (see cpu_features.h). */
#include "cpu_features.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "once.h"
#include "status.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CORT_CPU_X86 1
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define CORT_CPU_ARM64 1
#endif

#if CORT_CPU_X86 || !CORT_CPU_ARM64
#define CORT_CPU_X86_OR_NONE 1   /* neon is foreign here */
#else
#define CORT_CPU_X86_OR_NONE 0   /* avx2 and avx512 are foreign here */
#endif

static const char *const level_names[CORT_ISA_LEVEL_COUNT] = { "generic", "avx2", "avx512", "neon" };

static const struct { uint32_t bit; const char *name; } flag_names[] = {
    { CORT_CPU_AVX2, "avx2" }, { CORT_CPU_FMA, "fma" }, { CORT_CPU_F16C, "f16c" },
    { CORT_CPU_AVX512F, "avx512f" }, { CORT_CPU_AVX512BW, "avx512bw" }, { CORT_CPU_AVX512DQ, "avx512dq" },
    { CORT_CPU_AVX512VL, "avx512vl" }, { CORT_CPU_AVX512VNNI, "avx512vnni" },
    { CORT_CPU_AVX512BF16, "avx512bf16" }, { CORT_CPU_AVXVNNI, "avxvnni" },
    { CORT_CPU_AVX512FP16, "avx512fp16" }, { CORT_CPU_AMX, "amx" }, { CORT_CPU_AVX512VBMI, "avx512vbmi" },
    { CORT_CPU_NEON, "neon" }, { CORT_CPU_DOTPROD, "dotprod" }, { CORT_CPU_FP16ARITH, "fp16arith" },
};

#define LEVEL_AVX2_FLAGS   (CORT_CPU_AVX2 | CORT_CPU_FMA | CORT_CPU_F16C)
#define LEVEL_AVX512_FLAGS (CORT_CPU_AVX512F | CORT_CPU_AVX512BW | CORT_CPU_AVX512DQ | CORT_CPU_AVX512VL)

const char *cort_isa_name(cort_isa_level l) {
    return (unsigned)l < CORT_ISA_LEVEL_COUNT ? level_names[l] : "unknown";
}

int cort_cpu_flag_names(uint32_t flags, char *buf, size_t size) {
    size_t len = 0;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++) {
        if (!(flags & flag_names[i].bit)) continue;
        int n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%s", len ? " " : "",
                         flag_names[i].name);
        len += (size_t)n;
    }
    if (len == 0 && size) buf[0] = '\0';
    return (int)len;
}

#if CORT_CPU_X86
static uint64_t xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));   /* xgetbv */
    return ((uint64_t)hi << 32) | lo;
}

static uint32_t probe_flags(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned ecx1 = c;
    /* OSXSAVE (ECX bit 27) says xgetbv is usable; AVX (bit 28) is required for any VEX encoding. */
    if (!(ecx1 & (1u << 27)) || !(ecx1 & (1u << 28))) return 0;
    const uint64_t xcr = xcr0();
    const int ymm = (xcr & 0x6) == 0x6;          /* SSE + AVX state */
    const int zmm = ymm && (xcr & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    const int tiles = (xcr & 0x60000) == 0x60000; /* XTILECFG, XTILEDATA */
    if (!ymm) return 0;
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0;
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b7, c7, d7);
        const unsigned subleaves = a;
        if (subleaves >= 1) __cpuid_count(7, 1, a71, b, c, d);
    }
    uint32_t f = 0;
    if (b7 & (1u << 5)) f |= CORT_CPU_AVX2;
    if (ecx1 & (1u << 12)) f |= CORT_CPU_FMA;
    if (ecx1 & (1u << 29)) f |= CORT_CPU_F16C;
    if (a71 & (1u << 4)) f |= CORT_CPU_AVXVNNI;
    if (zmm) {
        if (b7 & (1u << 16)) f |= CORT_CPU_AVX512F;
        if (b7 & (1u << 17)) f |= CORT_CPU_AVX512DQ;
        if (b7 & (1u << 30)) f |= CORT_CPU_AVX512BW;
        if (b7 & (1u << 31)) f |= CORT_CPU_AVX512VL;
        if (c7 & (1u << 11)) f |= CORT_CPU_AVX512VNNI;
        if (c7 & (1u << 1)) f |= CORT_CPU_AVX512VBMI;
        if (d7 & (1u << 23)) f |= CORT_CPU_AVX512FP16;
        if (a71 & (1u << 5)) f |= CORT_CPU_AVX512BF16;
        if (!(f & CORT_CPU_AVX512F))
            f &= ~(uint32_t)(CORT_CPU_AVX512VNNI | CORT_CPU_AVX512FP16 | CORT_CPU_AVX512BF16 | CORT_CPU_AVX512VBMI);
    }
    if (tiles && (d7 & (1u << 22)) && (d7 & (1u << 24)) && (d7 & (1u << 25))) f |= CORT_CPU_AMX;
    return f;
}

/* The first level-2 data or unified cache in a deterministic-cache-parameters leaf (Intel's 4, AMD's
 * 0x8000001D: same layout), else AMD's legacy 0x80000006 (ECX bits 31-16: KB). */
static size_t probe_l2(void) {
    unsigned a, b, c, d;
    const unsigned max_leaf = __get_cpuid_max(0, NULL), max_ext = __get_cpuid_max(0x80000000, NULL);
    const unsigned leaves[2] = { 4, 0x8000001D };
    for (int li = 0; li < 2; li++) {
        const unsigned leaf = leaves[li];
        if (leaf < 0x80000000 ? max_leaf < leaf : max_ext < leaf) continue;
        for (unsigned sub = 0; sub < 16; sub++) {
            __cpuid_count(leaf, sub, a, b, c, d);
            const unsigned type = a & 31, level = (a >> 5) & 7;
            if (type == 0) break;
            if (level != 2 || (type != 1 && type != 3)) continue;
            const size_t ways = ((b >> 22) & 0x3ff) + 1, parts = ((b >> 12) & 0x3ff) + 1, line = (b & 0xfff) + 1;
            return ways * parts * line * ((size_t)c + 1);
        }
    }
    if (max_ext >= 0x80000006) {
        __cpuid(0x80000006, a, b, c, d);
        if (c >> 16) return (size_t)(c >> 16) * 1024;
    }
    return 0;
}
#elif CORT_CPU_ARM64
/* Bits of AT_HWCAP (Linux arch/arm64/include/uapi/asm/hwcap.h); ABI-stable. */
#define HWCAP_BIT_FPHP    (1ul << 9)
#define HWCAP_BIT_ASIMD   (1ul << 1)
#define HWCAP_BIT_ASIMDHP (1ul << 10)
#define HWCAP_BIT_ASIMDDP (1ul << 20)
static uint32_t probe_flags(void) {
    const unsigned long hw = getauxval(AT_HWCAP);
    uint32_t f = 0;
    if (hw & HWCAP_BIT_ASIMD) f |= CORT_CPU_NEON;
    if ((f & CORT_CPU_NEON) && (hw & HWCAP_BIT_ASIMDDP)) f |= CORT_CPU_DOTPROD;
    if ((f & CORT_CPU_NEON) && (hw & HWCAP_BIT_FPHP) && (hw & HWCAP_BIT_ASIMDHP)) f |= CORT_CPU_FP16ARITH;
    return f;
}
#else
static uint32_t probe_flags(void) { return 0; }
#endif
#if !CORT_CPU_X86
static size_t probe_l2(void) {
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? (size_t)v : 0;
#else
    return 0;
#endif
}
#endif

static int levels_of(uint32_t f, cort_isa_level *out, int max) {
    cort_isa_level all[CORT_ISA_LEVEL_COUNT];
    int n = 0;
    all[n++] = CORT_ISA_GENERIC;
    if ((f & LEVEL_AVX2_FLAGS) == LEVEL_AVX2_FLAGS) {
        all[n++] = CORT_ISA_AVX2;
        if ((f & LEVEL_AVX512_FLAGS) == LEVEL_AVX512_FLAGS) all[n++] = CORT_ISA_AVX512;
    }
    if (f & CORT_CPU_NEON) all[n++] = CORT_ISA_NEON;
    for (int i = 0; i < n && i < max; i++) out[i] = all[i];
    return n;
}

static int levels_string(uint32_t f, char *buf, size_t size) {
    cort_isa_level lv[CORT_ISA_LEVEL_COUNT];
    const int n = levels_of(f, lv, CORT_ISA_LEVEL_COUNT);
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%s", i ? " " : "",
                                cort_isa_name(lv[i]));
    return (int)len;
}

/* Linux hands out the 8 KB of AMX tile state only to processes that ask (arch_prctl
 * ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); a tile instruction before that faults. The grant is
 * process-wide and permanent, and it enlarges every signal frame, so it is asked only where the tile
 * kernels will run: level avx512 in use and CORT_AMX not 0. Returns whether tiles may be used. */
static int amx_usable(cort_isa_level level) {
#if CORT_CPU_X86 && defined(__linux__) && defined(SYS_arch_prctl)
    if (level != CORT_ISA_AVX512) return 0;
    const char *env = getenv("CORT_AMX");
    if (env && !strcmp(env, "0")) return 0;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    (void)level;
    return 0;
#endif
}

/* ---- the once-probe ---- */
static cort_once     g_once = CORT_ONCE_INIT;
static cort_cpu_info g_info;
static int           g_failed;          /* CORT_ISA was invalid: g_error holds the message */
static char          g_error[512];
static char          g_env[32];         /* CORT_ISA as given (truncated), "" if unset */

static cort_status *probe(void *arg) {
    (void)arg;
    const uint32_t f = probe_flags();
    cort_isa_level lv[CORT_ISA_LEVEL_COUNT];
    const int n = levels_of(f, lv, CORT_ISA_LEVEL_COUNT);
    g_info.flags = f;
    g_info.detected = lv[n - 1];
    g_info.level = g_info.detected;
    g_info.capped = 0;
    const char *env = getenv("CORT_ISA");
    if (env && *env) {
        snprintf(g_env, sizeof g_env, "%s", env);
        int want = -1;
        for (int i = 0; i < CORT_ISA_LEVEL_COUNT; i++)
            if (!strcasecmp(env, level_names[i])) want = i;
        int ok = 0;
        for (int i = 0; i < n; i++) if ((int)lv[i] == want) ok = 1;
        if (ok) {
            g_info.level = (cort_isa_level)want;
            g_info.capped = g_info.level != g_info.detected;
        } else {
            char levels[64], flags[256];
            levels_string(f, levels, sizeof levels);
            cort_cpu_flag_names(f, flags, sizeof flags);
            const int other_arch = want == CORT_ISA_NEON ? !(f & CORT_CPU_NEON) && CORT_CPU_X86_OR_NONE
                                 : want > 0 && !CORT_CPU_X86_OR_NONE;
            const char *why = want < 0 ? "unknown ISA level (expected generic, avx2, avx512 or neon)"
                            : other_arch ? "a level of another architecture"
                            : "this CPU does not support that level";
            snprintf(g_error, sizeof g_error, "CORT_ISA=%.32s: %s; this CPU supports: %s (flags: %s)", env, why,
                     levels, *flags ? flags : "none");
            g_failed = 1;
        }
    }
    g_info.amx_tiles = (f & CORT_CPU_AMX) && !g_failed && amx_usable(g_info.level);
    g_info.l2_bytes = probe_l2();
    return NULL;   /* a bad CORT_ISA is a remembered result, not a retryable failure */
}

static cort_status *ensure(void) { return cort_once_run(&g_once, probe, NULL); }

cort_status *cort_cpu_info_get(const cort_cpu_info **out) {
    CORT_TRY(ensure());
    if (g_failed) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s", g_error);
    if (out) *out = &g_info;
    return NULL;
}

cort_isa_level cort_cpu_isa(void) {
    const cort_cpu_info *info;
    cort_status *st = cort_cpu_info_get(&info);
    if (st) { cort_status_free(st); return CORT_ISA_GENERIC; }
    return info->level;
}

int cort_cpu_amx_tiles(void) {
    const cort_cpu_info *info;
    cort_status *st = cort_cpu_info_get(&info);
    if (st) { cort_status_free(st); return 0; }
    return info->amx_tiles;
}

uint32_t cort_cpu_flags(void) {
    cort_status *st = ensure();
    if (st) { cort_status_free(st); return 0; }
    return g_info.flags;
}

size_t cort_cpu_l2_bytes(size_t fallback) {
    cort_status *st = ensure();
    if (st) { cort_status_free(st); return fallback; }
    return g_info.l2_bytes ? g_info.l2_bytes : fallback;
}

int cort_cpu_levels(cort_isa_level *out, int max) { return levels_of(cort_cpu_flags(), out, max); }

/* ---- public: include/cort.h ---- */
cort_status *cort_cpu_describe(char *buf, size_t size, size_t *length) {
    if (!buf && size) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_cpu_describe: buf is NULL");
    const cort_cpu_info *info;
    CORT_TRY(cort_cpu_info_get(&info));
    char flags[256];
    cort_cpu_flag_names(info->flags, flags, sizeof flags);
    const char *cap = info->capped ? "; capped by CORT_ISA" : *g_env ? "; CORT_ISA" : "";
    const char *amx = info->amx_tiles ? "; amx tiles in use" : "";
    char l2[40] = "";
    if (info->l2_bytes) snprintf(l2, sizeof l2, "; l2: %zu KB", info->l2_bytes / 1024);
    int n = snprintf(buf, size, "isa: %s (detected: %s; flags: %s%s%s%s%s%s)", cort_isa_name(info->level),
                     cort_isa_name(info->detected), *flags ? flags : "none", amx, l2, cap, *g_env ? "=" : "", g_env);
    if (length) *length = (size_t)n;
    return NULL;
}
