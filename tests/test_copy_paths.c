/* The vectorized copies of copy_ukernels.h (stride-2 gather, 2x repeat, 2-way interleave with bias,
 * 16x16 and scaled transposes) against scalar loops, bit-exact, over lengths around the vector
 * widths and odd leading dimensions: the AVX2 ones whenever the CPU has AVX2 (so the avx512 lane
 * covers them too), the AVX-512 ones when that level is in use, and the conv entry points of the
 * level under test through nn_isa(). Output floats past the end must stay untouched. The byte stride-2
 * gather of the int8 convs likewise. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/cpu_features.h"
#include "providers/cpu/kernels/copy_ukernels.h"
#include "providers/cpu/kernels/isa_config.h"

static uint32_t rng = 99u;
static float frand(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 4096.0f - 8.0f;
}

typedef struct copy_set {
    const char *name;
    void (*stride2)(const float *, float *, size_t);
    void (*rep2)(const float *, float *, size_t);
    void (*interleave2)(const float *, const float *, float, float *, size_t);
    void (*transpose16)(const float *, size_t, float *, size_t);
    void (*transpose)(const float *, size_t, size_t, float, float *, size_t, size_t);
} copy_set;

#define CANARY 1234.5f
enum { CAP = 200 };

static void check_set(const copy_set *k) {
    float src[2 * CAP + 64], src2[CAP + 64], dst[2 * CAP + 64], want[2 * CAP + 64];
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++) src[i] = frand();
    for (size_t i = 0; i < sizeof src2 / sizeof src2[0]; i++) src2[i] = frand();
    size_t at = 0;
    for (size_t n = 0; n <= 70 || n == CAP; n = n == 70 ? CAP : n + 1) {
        if (k->stride2) {
            for (size_t i = 0; i < n + 8; i++) dst[i] = want[i] = CANARY;
            for (size_t i = 0; i < n; i++) want[i] = src[2 * i];
            k->stride2(src, dst, n);
            CHECK_MSG(tu_max_ulp(dst, want, n + 8, &at) == 0, "%s copy_stride2 n %zu at %zu", k->name, n, at);
        }
        if (k->rep2) {
            for (size_t i = 0; i < n + 8; i++) dst[i] = want[i] = CANARY;
            for (size_t i = 0; i < n; i++) want[i] = src[i / 2];
            k->rep2(src, dst, n);
            CHECK_MSG(tu_max_ulp(dst, want, n + 8, &at) == 0, "%s copy_rep2 n %zu at %zu", k->name, n, at);
        }
        if (k->interleave2) {
            const float bias = 0.375f;
            for (size_t i = 0; i < 2 * n + 8; i++) dst[i] = want[i] = CANARY;
            for (size_t i = 0; i < n; i++) { want[2 * i] = src[i] + bias; want[2 * i + 1] = src2[i] + bias; }
            k->interleave2(src, src2, bias, dst, n);
            CHECK_MSG(tu_max_ulp(dst, want, 2 * n + 8, &at) == 0, "%s interleave2 n %zu at %zu", k->name, n, at);
        }
    }
    static const size_t lds[] = { 16, 17, 23, 40 };
    float m[40 * 16], t[40 * 17], tw[40 * 17];
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) m[i] = frand();
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++) {
            const size_t ld = lds[a], ldd = lds[b];
            if (k->transpose16) {
                for (size_t i = 0; i < 16 * ldd; i++) t[i] = tw[i] = CANARY;
                for (size_t r = 0; r < 16; r++)
                    for (size_t c = 0; c < 16; c++) tw[c * ldd + r] = m[r * ld + c];
                k->transpose16(m, ld, t, ldd);
                CHECK_MSG(tu_max_ulp(t, tw, 16 * ldd, &at) == 0, "%s transpose16 ld %zu ldd %zu at %zu", k->name, ld,
                          ldd, at);
            }
            if (k->transpose)
                for (size_t width = 1; width <= 16 && width <= ldd; width++)
                    for (size_t rows = 1; rows <= width; rows++) {
                        const float scale = rows % 2 ? 1.0f : -0.7f;
                        for (size_t i = 0; i < 16 * ldd; i++) t[i] = tw[i] = CANARY;
                        for (size_t c = 0; c < 16; c++)
                            for (size_t r = 0; r < width; r++) tw[c * ldd + r] = r < rows ? scale * m[r * ld + c] : 0.0f;
                        k->transpose(m, ld, rows, scale, t, ldd, width);
                        CHECK_MSG(tu_max_ulp(t, tw, 16 * ldd, &at) == 0,
                                  "%s transpose ld %zu ldd %zu rows %zu width %zu at %zu", k->name, ld, ldd, rows, width,
                                  at);
                    }
        }
}

/* The byte stride-2 gather: every length to 200 and offsets 0-3, the source ending right at its last byte
 * read (a heap block of exactly 2n - 1 bytes, so a read past it is a sanitizer error), nothing written past
 * n. Negative control: an odd-byte gather must be caught by the same comparison. */
static void check_stride2_u8(const char *name, void (*f)(const uint8_t *, uint8_t *, size_t)) {
    if (!f) return;
    uint8_t dst[CAP + 68];
    size_t wrong = 0;
    for (size_t n = 1; n <= CAP; n++)
        for (size_t off = 0; off < 4; off++) {
            uint8_t *src = malloc(2 * n - 1);
            if (!src) { CHECK_MSG(0, "out of memory"); return; }
            for (size_t i = 0; i < 2 * n - 1; i++) {
                rng = rng * 1664525u + 1013904223u;
                src[i] = (uint8_t)(rng >> 24);
            }
            memset(dst, 0xA5, sizeof dst);
            f(src, dst + off, n);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) bad += dst[off + i] != src[2 * i];
            for (size_t i = 0; i < off; i++) bad += dst[i] != 0xA5;
            for (size_t i = off + n; i < sizeof dst; i++) bad += dst[i] != 0xA5;
            CHECK_MSG(bad == 0, "%s copy_stride2_u8 n %zu offset %zu: %zu bytes wrong", name, n, off, bad);
            if (n > 1)
                for (size_t i = 0; i + 1 < n; i++) wrong += dst[off + i] != src[2 * i + 1];
            free(src);
        }
    CHECK_MSG(wrong > 0, "%s copy_stride2_u8 negative control: odd bytes matched the output", name);
}

int main(void) {
    const nn_isa_config *isa = nn_isa();
    check_stride2_u8("level", isa->copy_stride2_u8);
    const copy_set level = { "level", isa->copy_stride2, isa->copy_rep2, isa->interleave2, isa->transpose16,
                             isa->transpose_scaled };
    check_set(&level);
#ifdef NN_HAVE_X86_UKERNELS
    cort_isa_level lv[8];
    const int nl = cort_cpu_levels(lv, 8);
    for (int i = 0; i < nl && i < 8; i++) {
        if (lv[i] == CORT_ISA_AVX2) {
            const copy_set k = { "avx2", nn_copy_stride2_avx2, nn_copy_rep2_avx2, nn_interleave2_avx2,
                                 nn_transpose16_avx2, nn_transpose_avx2 };
            check_set(&k);
            check_stride2_u8("avx2", nn_copy_stride2_u8_avx2);
        }
        if (lv[i] == CORT_ISA_AVX512) {
            const copy_set k = { "avx512", nn_copy_stride2_avx512, nn_copy_rep2_avx512, nn_interleave2_avx512,
                                 nn_transpose16_avx512, nn_transpose_avx512 };
            check_set(&k);
            check_stride2_u8("avx512", nn_copy_stride2_u8_avx512);
        }
    }
#endif
    return tu_finish();
}
