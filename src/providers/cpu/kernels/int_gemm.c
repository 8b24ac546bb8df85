/* Exact int GEMM driver: kernel tables per ISA level, packing, threaded tiling (see int_gemm.h). */
#include <string.h>
#include "int_gemm.h"
#include "isa_config.h"
#include "../../../core/checked.h"

#define NN_IK(NAME, ISA, MR, UKR, HALF, ONE) \
    { .name = NAME, .isa = ISA, .mr = MR, .nr = 16, .ukr = UKR, .ukr_half = HALF, .ukr1 = ONE }
static const nn_igemm_kernel k_generic = NN_IK("i8_generic_4x16", CORT_ISA_GENERIC, 4, nn_igemm_ukr_generic_4x16,
                                               nn_igemm_ukr_generic_4x16_half, nn_igemm_ukr_generic_1x16);
#ifdef NN_HAVE_X86_IGEMM
static const nn_igemm_kernel k_avx2 = NN_IK("i8_avx2_6x16", CORT_ISA_AVX2, 6, nn_igemm_ukr_avx2_6x16,
                                            nn_igemm_ukr_avx2_6x16_half, nn_igemm_ukr_avx2_1x16);
static const nn_igemm_kernel k_avxvnni = NN_IK("i8_avxvnni_6x16", CORT_ISA_AVX2, 6, nn_igemm_ukr_avxvnni_6x16,
                                               nn_igemm_ukr_avxvnni_6x16_half, nn_igemm_ukr_avxvnni_1x16);
static const nn_igemm_kernel k_avx512 = NN_IK("i8_avx512_16x16", CORT_ISA_AVX512, 16, nn_igemm_ukr_avx512_16x16,
                                              nn_igemm_ukr_avx512_16x16_half, nn_igemm_ukr_avx512_1x16);
static const nn_igemm_kernel k_avx512vnni = NN_IK("i8_avx512vnni_16x16", CORT_ISA_AVX512, 16,
                                                  nn_igemm_ukr_avx512vnni_16x16, nn_igemm_ukr_avx512vnni_16x16_half,
                                                  nn_igemm_ukr_avx512vnni_1x16);
static const nn_igemm_kernel k_u8s8_avx512vnni = { .name = "u8s8_avx512vnni_16x16", .isa = CORT_ISA_AVX512, .mr = 16,
                                                   .nr = 16, .quad = 1, .qukr = nn_igemm_qukr_avx512vnni_16x16,
                                                   .qukr1 = nn_igemm_qukr_avx512vnni_1x16 };
static const nn_igemm_kernel k_u8s8_avx512vnni_8x32 = { .name = "u8s8_avx512vnni_8x32", .isa = CORT_ISA_AVX512,
                                                        .mr = 8, .nr = 32, .quad = 1,
                                                        .qukr = nn_igemm_qukr_avx512vnni_8x32,
                                                        .qukr1 = nn_igemm_qukr_avx512vnni_1x32 };
/* AMX: 32x32 tiles from tdpbusd, the 8x32 tile's packs (so its one-row kernel for 1-2 row tiles) */
static const nn_igemm_kernel k_u8s8_amx = { .name = "u8s8_amx_32x32", .isa = CORT_ISA_AVX512, .mr = 32, .nr = 32,
                                            .quad = 1, .qukr = nn_igemm_qukr_amx_32x32,
                                            .qukr1 = nn_igemm_qukr_avx512vnni_1x32,
                                            .qukr_top = nn_igemm_qukr_amx_16x32, .qbegin = nn_igemm_amx_begin,
                                            .qend = nn_igemm_amx_end };
static const nn_igemm_kernel k_u8s8_avxvnni = { .name = "u8s8_avxvnni_6x16", .isa = CORT_ISA_AVX2, .mr = 6, .nr = 16,
                                                .quad = 1, .qukr = nn_igemm_qukr_avxvnni_6x16,
                                                .qukr1 = nn_igemm_qukr_avxvnni_1x16 };
static const nn_igemm_kernel *const kernels_avx2[] = { &k_avx2, &k_generic };
static const nn_igemm_kernel *const kernels_avxvnni[] = { &k_avxvnni, &k_avx2, &k_generic, &k_u8s8_avxvnni };
static const nn_igemm_kernel *const kernels_avx512[] = { &k_avx512, &k_avx2, &k_generic };
static const nn_igemm_kernel *const kernels_avx512vnni[] = { &k_avx512vnni, &k_avx512, &k_avx2, &k_generic,
                                                              &k_u8s8_avx512vnni, &k_u8s8_avx512vnni_8x32 };
static const nn_igemm_kernel *const kernels_avx512amx[] = { &k_avx512vnni, &k_avx512, &k_avx2, &k_generic,
                                                             &k_u8s8_avx512vnni, &k_u8s8_avx512vnni_8x32,
                                                             &k_u8s8_amx };
#endif
static const nn_igemm_kernel *const kernels_generic[] = { &k_generic };

typedef struct igemm_config { const nn_igemm_kernel *const *kernels; size_t n; } igemm_config;
static const igemm_config igemm_configs[CORT_ISA_LEVEL_COUNT] = {
    [CORT_ISA_GENERIC] = { kernels_generic, 1 },
#ifdef NN_HAVE_X86_IGEMM
    [CORT_ISA_AVX2] = { kernels_avx2, 2 },
    [CORT_ISA_AVX512] = { kernels_avx512, 3 },
#else
    [CORT_ISA_AVX2] = { kernels_generic, 1 },
    [CORT_ISA_AVX512] = { kernels_generic, 1 },
#endif
    [CORT_ISA_NEON] = { kernels_generic, 1 },
};

/* The level's table, or its VNNI twin when the CPU has the level's VNNI extension (the pair dot fused
 * with the add: same results, fewer instructions). */
static const igemm_config *igemm_config_in_use(void) {
    const cort_isa_level l = cort_cpu_isa();
#ifdef NN_HAVE_X86_IGEMM
    static const igemm_config vnni512 = { kernels_avx512vnni, 6 }, vnni256 = { kernels_avxvnni, 4 },
                              amx = { kernels_avx512amx, 7 };
    const uint32_t f = cort_cpu_flags();
    if (l == CORT_ISA_AVX512 && (f & CORT_CPU_AVX512VNNI) && cort_cpu_amx_tiles()) return &amx;
    if (l == CORT_ISA_AVX512 && (f & CORT_CPU_AVX512VNNI)) return &vnni512;
    if (l == CORT_ISA_AVX2 && (f & CORT_CPU_AVXVNNI)) return &vnni256;
#endif
    return &igemm_configs[l];
}

static const nn_qconv_ops q_generic = { "qconv_generic", nn_qdw_taps_generic, nn_qrq_row_generic, nn_qpack2_16_generic, nn_qwiden_generic,
                                        nn_qwiden2_generic, nn_qwino_in_generic,
                                        nn_qpack2_8_generic, nn_qrq_tile_generic, nn_qrq_tile_cols_generic,
                                        nn_qquad4_generic, NULL, NULL, NULL };
#ifdef NN_HAVE_X86_IGEMM
static const nn_qconv_ops q_avx2 = { "qconv_avx2", nn_qdw_taps_avx2, nn_qrq_row_avx2, nn_qpack2_16_avx2, nn_qwiden_avx2,
                                     nn_qwiden2_avx2, nn_qwino_in_avx2, nn_qpack2_8_avx2,
                                     nn_qrq_tile_avx2, nn_qrq_tile_cols_avx2, nn_qquad4_avx2, nn_qdwc16_avx2, NULL, NULL };
static const nn_qconv_ops *const qops_avx2[] = { &q_avx2, &q_generic };
/* The AVX-512 sets keep the AVX2 int16 packing and Winograd: they run once per packed row, where 256 bits
 * already keep up with the GEMM. The tile requantization runs on every output and is one zmm per row; the
 * byte path's quad interleave fills four panels per step. */
static const nn_qconv_ops q_avx512 = { "qconv_avx512", nn_qdw_taps_avx512, nn_qrq_row_avx512, nn_qpack2_16_avx2,
                                       nn_qwiden_avx512, nn_qwiden2_avx512, nn_qwino_in_avx2, nn_qpack2_8_avx2,
                                       nn_qrq_tile_avx512, nn_qrq_tile_cols_avx512, nn_qquad4_avx512, nn_qdwc16_avx512, NULL, NULL };
static const nn_qconv_ops q_avx512vnni = { "qconv_avx512vnni", nn_qdw_taps_avx512vnni, nn_qrq_row_avx512,
                                           nn_qpack2_16_avx2, nn_qwiden_avx512, nn_qwiden2_avx512, nn_qwino_in_avx2,
                                           nn_qpack2_8_avx2, nn_qrq_tile_avx512, nn_qrq_tile_cols_avx512, nn_qquad4_avx512,
                                           nn_qdwc16_avx512, NULL, nn_qcdirect16_avx512vnni };
/* With VBMI too: depthwise planes read in place as bytes (vpermb lays out each output's taps for vpdpbusd) */
static const nn_qconv_ops q_avx512vbmi = { "qconv_avx512vnni_vbmi", nn_qdw_taps_avx512vnni, nn_qrq_row_avx512,
                                           nn_qpack2_16_avx2, nn_qwiden_avx512, nn_qwiden2_avx512, nn_qwino_in_avx2,
                                           nn_qpack2_8_avx2, nn_qrq_tile_avx512, nn_qrq_tile_cols_avx512, nn_qquad4_avx512,
                                           nn_qdwc16_avx512, nn_qdwr16_avx512vbmi, nn_qcdirect16_avx512vnni };
static const nn_qconv_ops *const qops_avx512[] = { &q_avx512, &q_avx2, &q_generic };
static const nn_qconv_ops *const qops_avx512vnni[] = { &q_avx512vnni, &q_avx512, &q_avx2, &q_generic };
static const nn_qconv_ops *const qops_avx512vbmi[] = { &q_avx512vbmi, &q_avx512vnni, &q_avx512, &q_avx2, &q_generic };
#endif
static const nn_qconv_ops *const qops_generic[] = { &q_generic };
typedef struct qconv_config { const nn_qconv_ops *const *ops; size_t n; } qconv_config;
static const qconv_config qconv_configs[CORT_ISA_LEVEL_COUNT] = {
    [CORT_ISA_GENERIC] = { qops_generic, 1 },
#ifdef NN_HAVE_X86_IGEMM
    [CORT_ISA_AVX2] = { qops_avx2, 2 },
    [CORT_ISA_AVX512] = { qops_avx512, 3 },
#else
    [CORT_ISA_AVX2] = { qops_generic, 1 },
    [CORT_ISA_AVX512] = { qops_generic, 1 },
#endif
    [CORT_ISA_NEON] = { qops_generic, 1 },
};
/* The level's sets, or the VNNI (and VBMI) twins when the CPU has them (as igemm_config_in_use). */
static const qconv_config *qconv_config_in_use(void) {
    const cort_isa_level l = cort_cpu_isa();
#ifdef NN_HAVE_X86_IGEMM
    static const qconv_config vnni512 = { qops_avx512vnni, 4 }, vbmi512 = { qops_avx512vbmi, 5 };
    const unsigned f = cort_cpu_flags();
    if (l == CORT_ISA_AVX512 && (f & CORT_CPU_AVX512VNNI) && (f & CORT_CPU_AVX512VBMI)) return &vbmi512;
    if (l == CORT_ISA_AVX512 && (f & CORT_CPU_AVX512VNNI)) return &vnni512;
#endif
    return &qconv_configs[l];
}
const nn_qconv_ops *nn_qconv_best_ops(void) { return qconv_config_in_use()->ops[0]; }
size_t nn_qconv_ops_list(const nn_qconv_ops *const **out) {
    const qconv_config *c = qconv_config_in_use();
    *out = c->ops;
    return c->n;
}

#ifdef NN_HAVE_X86_IGEMM
static const nn_igemm_kernel k_conv_avx512vnni = { .name = "i8_qconv_s8u8_avx512vnni_16x16", .isa = CORT_ISA_AVX512,
                                                   .mr = 16, .nr = 16, .quad = 2,
                                                   .qukr = nn_igemm_cukr_avx512vnni_16x16,
                                                   .qukr_cols = nn_igemm_cukr_avx512vnni_16xn,
                                                   .cols_max = NN_CUKR_COLS_MAX,
                                                   .qukr_rq = nn_igemm_cukr_rq_avx512vnni_16x16 };
static const nn_igemm_kernel k_conv_avxvnni = { .name = "i8_qconv_s8u8_avxvnni_6x16", .isa = CORT_ISA_AVX2, .mr = 6,
                                                .nr = 16, .quad = 2, .qukr = nn_igemm_cukr_avxvnni_6x16 };
static const nn_igemm_kernel k_conv_amx = { .name = "i8_qconv_s8u8_amx_64x16", .isa = CORT_ISA_AVX512, .mr = 64,
                                            .nr = 16, .quad = 2, .a_rows = 1, .qukr = nn_igemm_cukr_amx_64x16,
                                            .qukr_top = nn_igemm_cukr_amx_32x16, .qbegin = nn_igemm_amx_begin,
                                            .qend = nn_igemm_amx_end };
static const nn_igemm_kernel *const conv_kernels_avx512vnni[] = { &k_conv_avx512vnni, &k_conv_avxvnni };
static const nn_igemm_kernel *const conv_kernels_avx512amx[] = { &k_conv_amx, &k_conv_avx512vnni, &k_conv_avxvnni };
static const nn_igemm_kernel *const conv_kernels_avxvnni[] = { &k_conv_avxvnni };
#endif
size_t nn_igemm_conv_kernels(const nn_igemm_kernel *const **out) {
    *out = NULL;
#ifdef NN_HAVE_X86_IGEMM
    const cort_isa_level l = cort_cpu_isa();
    const uint32_t f = cort_cpu_flags();
    if (l == CORT_ISA_AVX512 && (f & CORT_CPU_AVX512VNNI) && cort_cpu_amx_tiles()) {
        *out = conv_kernels_avx512amx;
        return (f & CORT_CPU_AVXVNNI) ? 3 : 2;
    }
    if (l == CORT_ISA_AVX512 && (f & CORT_CPU_AVX512VNNI)) {
        *out = conv_kernels_avx512vnni;
        return (f & CORT_CPU_AVXVNNI) ? 2 : 1;
    }
    if (l == CORT_ISA_AVX2 && (f & CORT_CPU_AVXVNNI)) {
        *out = conv_kernels_avxvnni;
        return 1;
    }
#endif
    return 0;
}
const nn_igemm_kernel *nn_igemm_conv_kernel(void) {
    const nn_igemm_kernel *const *ks;
    return nn_igemm_conv_kernels(&ks) ? ks[0] : NULL;
}
const nn_igemm_kernel *nn_igemm_conv_kernel_for(size_t M, size_t K) {
    const nn_igemm_kernel *const *ks;
    const size_t n = nn_igemm_conv_kernels(&ks);
    if (!n) return NULL;
    /* AMX only where a tile has work: at least 64 output channels and K 256. Below that the VNNI tile
     * won on every mobilenet_v2 and squeezenet layer measured (a K of 16-96 is one zero-padded tile
     * step; docs/performance.md). */
    if (ks[0]->a_rows && n > 1 && (M < NN_AMX_CONV_MIN_M || K < NN_AMX_CONV_MIN_K)) return ks[1];
    return ks[0];
}

size_t nn_igemm_kernels(const nn_igemm_kernel *const **out) {
    const igemm_config *c = igemm_config_in_use();
    *out = c->kernels;
    return c->n;
}
const nn_igemm_kernel *nn_igemm_best_kernel(void) { return igemm_config_in_use()->kernels[0]; }
const nn_igemm_kernel *nn_igemm_best_mm_kernel(void) {
    const igemm_config *c = igemm_config_in_use();
    return c->kernels[c->n - 1]->quad ? c->kernels[c->n - 1] : c->kernels[0];   /* a byte kernel comes last */
}

/* A byte pack's bytes: the rows (or panels) of kq bytes, then 2 int32 per row (per panel column). */
static size_t quad_bytes(size_t units, size_t width, size_t K, size_t *r) {
    size_t t;
    if (cort_mul_size_ovf(units, width, r) || cort_mul_size_ovf(*r, nn_igemm_kq(K), &t) ||
        cort_mul_size_ovf(*r, 8, r) || t > SIZE_MAX - *r - 2)
        return 0;
    return t + *r;
}

size_t nn_igemm_b_size(const nn_igemm_kernel *k, size_t K, size_t N) {
    size_t panels = N / k->nr + (N % k->nr != 0), r;
    if (k->quad) return (quad_bytes(panels, k->nr, K, &r) + 2) / 2;
    if (cort_mul_size_ovf(panels, k->nr, &r) || cort_mul_size_ovf(r, nn_igemm_kp(K), &r)) return 0;
    return r ? r : 1;
}
size_t nn_igemm_a_size(const nn_igemm_kernel *k, size_t M, size_t K) {
    size_t tiles = M / k->mr + (M % k->mr != 0), r;
    if (k->quad) return (quad_bytes(tiles, k->mr, K, &r) + 2) / 2;
    if (cort_mul_size_ovf(tiles, k->mr, &r) || cort_mul_size_ovf(r, nn_igemm_kp(K), &r)) return 0;
    return r ? r : 1;
}

static inline int32_t ld8(const void *p, int is_signed, size_t i) {
    return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}
static inline int32_t zp_at(const nn_i8_operand *o, size_t idx) {
    return !o->zp ? 0 : ld8(o->zp, o->zp_signed, o->zp_count > 1 ? idx : 0);
}

/* sum[j] += the four rows' bytes of column j as int8 (top bit flipped by flip), for a fixed width n
 * so that the compiler vectorizes it */
static inline void colsum4(uint32_t *sum, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                           const uint8_t *r3, uint8_t flip, size_t n) {
    for (size_t j = 0; j < n; j++)
        sum[j] += (uint32_t)((int32_t)(int8_t)(r0[j] ^ flip) + (int8_t)(r1[j] ^ flip) + (int8_t)(r2[j] ^ flip) +
                             (int8_t)(r3[j] ^ flip));
}

/* Byte B: int8 (uint8 moved down by 128), per panel quad 4 bytes per column; then per panel the nr zero
 * points and the nr column sums. */
static void pack_b_quad(const nn_igemm_kernel *k, size_t K, size_t N, const nn_i8_operand *b, int16_t *out) {
    const size_t nr = k->nr, kq = nn_igemm_kq(K), panels = N / nr + (N % nr != 0);
    int8_t *dst = (int8_t *)out;
    int32_t *cz = (int32_t *)(void *)(dst + panels * nr * kq);
    const uint8_t flip = b->is_signed ? 0 : 0x80;   /* uint8 - 128 as a byte: the top bit flipped */
    const nn_qquad4_fn quad4 = nn_qconv_best_ops()->quad4;
    uint32_t sum[64];
    /* row by row of B within a panel: each row's nr columns are adjacent in memory (a column walk
     * strided by ld cost most of a BERT session's creation); full quads of full-width panels go
     * through the level's quad interleave (the conv packs' quad4) */
    for (size_t jp = 0; jp < panels; jp++) {
        const size_t j0 = jp * nr, w = N - j0 < nr ? N - j0 : nr;
        int8_t *d = dst + jp * nr * kq;
        memset(sum, 0, sizeof sum);
        for (size_t p = 0; p < kq; p += 4) {
            const uint8_t *row = (const uint8_t *)b->data + (p < K ? p : 0) * b->ld + j0;   /* no pointer past B */
            if (p + 4 <= K && w == nr && (nr == 16 || nr == 32)) {
                const uint8_t *r1 = row + b->ld, *r2 = r1 + b->ld, *r3 = r2 + b->ld;
                quad4(row, r1, r2, r3, nr, flip, (uint8_t *)d + p * nr, 64);
                if (nr == 32) colsum4(sum, row, r1, r2, r3, flip, 32);
                else colsum4(sum, row, r1, r2, r3, flip, 16);
                continue;
            }
            for (size_t pp = p; pp < p + 4; pp++) {
                int8_t *q = d + (pp >> 2) * 4 * nr + (pp & 3);
                const size_t n = pp < K ? w : 0;
                if (n) row = (const uint8_t *)b->data + pp * b->ld + j0;
                for (size_t j = 0; j < n; j++) {
                    const int8_t v = (int8_t)(row[j] ^ flip);
                    q[4 * j] = v;
                    sum[j] += (uint32_t)(int32_t)v;
                }
                for (size_t j = n; j < nr; j++) q[4 * j] = 0;
            }
        }
        for (size_t j = 0; j < nr; j++) {
            cz[jp * 2 * nr + j] = j < w ? zp_at(b, j0 + j) - (b->is_signed ? 0 : 128) : 0;
            cz[jp * 2 * nr + nr + j] = (int32_t)sum[j];
        }
    }
}

/* Byte A: uint8 (int8 moved up by 128), rows of kq bytes; then per row its zero point and
 * sum_k (a - za) (wrapping). */
static void pack_a_quad(const nn_igemm_kernel *k, size_t M, size_t K, const nn_i8_operand *a, int16_t *out) {
    const size_t kq = nn_igemm_kq(K), rows = (M / k->mr + (M % k->mr != 0)) * k->mr;
    uint8_t *dst = (uint8_t *)out;
    int32_t *rz = (int32_t *)(void *)(dst + rows * kq);
    const int32_t shift = a->is_signed ? 128 : 0;
    uint32_t (*const u8_sum)(const uint8_t *, size_t) = nn_isa()->u8_sum;
    for (size_t i = 0; i < rows; i++) {
        uint8_t *d = dst + i * kq;
        rz[2 * i] = rz[2 * i + 1] = 0;
        if (i >= M) {
            memset(d, 0, kq);
            continue;
        }
        memset(d + K, 0, kq - K);
        const int32_t z = zp_at(a, i) + shift;
        const uint8_t *src = (const uint8_t *)a->data + i * a->ld;
        if (a->is_signed)
            for (size_t p = 0; p < K; p++) d[p] = (uint8_t)(src[p] ^ 0x80u);   /* int8 + 128 */
        else
            memcpy(d, src, K);
        uint32_t sum = 0;   /* sum_k a, then less K * za */
        if (u8_sum) sum = u8_sum(d, K);
        else for (size_t p = 0; p < K; p++) sum += d[p];
        rz[2 * i] = z;
        rz[2 * i + 1] = (int32_t)(sum - (uint32_t)K * (uint32_t)z);
    }
}

void nn_igemm_pack_b(const nn_igemm_kernel *k, size_t K, size_t N, const nn_i8_operand *b, int16_t *out) {
    if (k->quad) { pack_b_quad(k, K, N, b, out); return; }
    const size_t nr = k->nr, kp = nn_igemm_kp(K), panels = N / nr + (N % nr != 0);
    for (size_t jp = 0; jp < panels; jp++) {
        int16_t *dst = out + jp * nr * kp;
        for (size_t j = 0; j < nr; j++) {
            const size_t col = jp * nr + j;
            if (col >= N) {
                for (size_t p = 0; p < kp; p++) dst[(p >> 1) * 2 * nr + 2 * j + (p & 1)] = 0;
                continue;
            }
            const int32_t z = zp_at(b, col);
            for (size_t p = 0; p < kp; p++)
                dst[(p >> 1) * 2 * nr + 2 * j + (p & 1)] =
                    p < K ? (int16_t)(ld8(b->data, b->is_signed, p * b->ld + col) - z) : 0;
        }
    }
}

void nn_igemm_pack_a(const nn_igemm_kernel *k, size_t M, size_t K, const nn_i8_operand *a, int16_t *out) {
    if (k->quad) { pack_a_quad(k, M, K, a, out); return; }
    const size_t kp = nn_igemm_kp(K), rows = (M / k->mr + (M % k->mr != 0)) * k->mr;
    for (size_t i = 0; i < rows; i++) {
        int16_t *dst = out + i * kp;
        if (i >= M) { memset(dst, 0, kp * sizeof *dst); continue; }
        const int32_t z = zp_at(a, i);
        const size_t base = i * a->ld;
        if (a->is_signed) {
            const int8_t *s = (const int8_t *)a->data + base;
            for (size_t p = 0; p < K; p++) dst[p] = (int16_t)(s[p] - z);
        } else {
            const uint8_t *s = (const uint8_t *)a->data + base;
            for (size_t p = 0; p < K; p++) dst[p] = (int16_t)(s[p] - z);
        }
        if (K & 1) dst[K] = 0;
    }
}

typedef struct igemm_job {
    const nn_igemm_kernel *k;
    size_t M, N, kp, mtiles;
    const int16_t *a, *b;
    int32_t *c;
    size_t ldc;
    nn_igemm_epi_fn epi;
    void *epi_ctx;
    const int32_t *arz, *bcz;   /* byte kernels: the row and column corrections after the packs' bytes */
    size_t panels;
    int rows_major;             /* items ordered tile-row-major instead of panel-major (igemm_order) */
    const nn_igemm_rq *rq;      /* full-width tiles requantized by the kernel (qukr_rq), or NULL */
} igemm_job;

/* igemm_range for a byte kernel (kp is then kq). */
static void igemm_range_quad(const igemm_job *j, size_t begin, size_t end) {
    const size_t mr = j->k->mr, nr = j->k->nr, kq = j->kp;
    int32_t tile[16 * 64];
    const int tiles = j->k->qbegin && (j->M > 2 || !j->k->qukr1);   /* 1-2 rows run qukr1 alone */
    if (tiles) j->k->qbegin();
    for (size_t t = begin; t < end; t++) {
        const size_t jp = j->rows_major ? t % j->panels : t / j->mtiles, it = j->rows_major ? t / j->panels : t % j->mtiles;
        const size_t i0 = it * mr, j0 = jp * nr;
        const size_t rows = j->M - i0 < mr ? j->M - i0 : mr, cols = j->N - j0 < nr ? j->N - j0 : nr;
        const uint8_t *a = (const uint8_t *)(const void *)j->a + i0 * kq;
        const int8_t *b = (const int8_t *)(const void *)j->b + jp * nr * kq;
        const int32_t *rz = j->arz + 2 * i0, *cz = j->bcz + jp * 2 * nr;
        if (rows * 2 <= mr && j->k->qukr_top && (rows > 2 || !j->k->qukr1)) {   /* the top half of the tile */
            j->k->qukr_top(kq / 4, a, kq, b, tile, nr, rz, cz);
            if (j->epi) j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
            else for (size_t r = 0; r < rows; r++) memcpy(j->c + (i0 + r) * j->ldc + j0, tile + r * nr, cols * sizeof(int32_t));
        } else if (rows * 2 <= mr && j->k->qukr1) {   /* few rows: one pass per real row, no zero rows */
            for (size_t r = 0; r < rows; r++) {
                int32_t *dst = j->epi ? tile + r * nr : cols == nr ? j->c + (i0 + r) * j->ldc + j0 : tile;
                j->k->qukr1(kq / 4, a + r * kq, kq, b, dst, nr, rz + 2 * r, cz);
                if (!j->epi && cols < nr) memcpy(j->c + (i0 + r) * j->ldc + j0, tile, cols * sizeof(int32_t));
            }
            if (j->epi) j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
        } else if (j->rq && cols == nr) {
            j->k->qukr_rq(kq / 4, a, b, rz, cz, j->rq, i0, rows, j0);
        } else if (cols <= j->k->cols_max && j->k->qukr_cols) {   /* a narrow edge panel */
            const int direct = !j->epi && rows == mr;
            j->k->qukr_cols(kq / 4, a, b, cols, direct ? j->c + i0 * j->ldc + j0 : tile, direct ? j->ldc : nr, rz, cz);
            if (j->epi) j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
            else if (!direct) for (size_t r = 0; r < rows; r++) memcpy(j->c + (i0 + r) * j->ldc + j0, tile + r * nr, cols * sizeof(int32_t));
        } else if (!j->epi && rows == mr && cols == nr) {
            j->k->qukr(kq / 4, a, kq, b, j->c + i0 * j->ldc + j0, j->ldc, rz, cz);
        } else {
            j->k->qukr(kq / 4, a, kq, b, tile, nr, rz, cz);
            if (j->epi) j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
            else for (size_t r = 0; r < rows; r++) memcpy(j->c + (i0 + r) * j->ldc + j0, tile + r * nr, cols * sizeof(int32_t));
        }
    }
    if (tiles) j->k->qend();
}

/* Items are tiles ordered panel-major: a worker's consecutive tiles share one B panel (kept in L1)
 * while packed A streams from L2. Edge tiles go through a local tile. */
static void igemm_range(void *arg, size_t begin, size_t end) {
    const igemm_job *j = arg;
    if (j->k->quad) { igemm_range_quad(j, begin, end); return; }
    const size_t mr = j->k->mr, nr = j->k->nr;
    int32_t tile[16 * 64];
    for (size_t t = begin; t < end; t++) {
        const size_t jp = t / j->mtiles, it = t % j->mtiles;
        const size_t i0 = it * mr, j0 = jp * nr;
        const size_t rows = j->M - i0 < mr ? j->M - i0 : mr, cols = j->N - j0 < nr ? j->N - j0 : nr;
        const int16_t *a = j->a + i0 * j->kp, *b = j->b + jp * nr * j->kp;
        if (j->k->ukr1 && rows * 2 <= mr) {   /* few rows: one pass per real row, no zero rows */
            for (size_t r = 0; r < rows; r++) {
                int32_t *dst = j->epi ? tile + r * nr : cols == nr ? j->c + (i0 + r) * j->ldc + j0 : tile;
                j->k->ukr1(j->kp / 2, a + r * j->kp, j->kp, b, dst, nr);
                if (!j->epi && cols < nr) memcpy(j->c + (i0 + r) * j->ldc + j0, tile, cols * sizeof(int32_t));
            }
            if (j->epi) j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
        } else if (cols <= nr / 2 && j->k->ukr_half) {   /* a narrow edge panel: half the work */
            j->k->ukr_half(j->kp / 2, a, j->kp, b, tile, nr);
            if (j->epi) j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
            else for (size_t r = 0; r < rows; r++) memcpy(j->c + (i0 + r) * j->ldc + j0, tile + r * nr, cols * sizeof(int32_t));
        } else if (j->epi) {
            j->k->ukr(j->kp / 2, a, j->kp, b, tile, nr);
            j->epi(j->epi_ctx, tile, nr, i0, rows, j0, cols);
        } else if (rows == mr && cols == nr) {
            j->k->ukr(j->kp / 2, a, j->kp, b, j->c + i0 * j->ldc + j0, j->ldc);
        } else {
            j->k->ukr(j->kp / 2, a, j->kp, b, tile, nr);
            for (size_t r = 0; r < rows; r++) memcpy(j->c + (i0 + r) * j->ldc + j0, tile + r * nr, cols * sizeof(int32_t));
        }
    }
}

int nn_igemm_rows_major(const nn_igemm_kernel *k, size_t M, size_t N) {
    const size_t mtiles = M / k->mr + (M % k->mr != 0), panels = N / k->nr + (N % k->nr != 0);
    return k->quad && mtiles * k->mr > panels * k->nr && mtiles > 1 && panels > 1;
}

static void igemm_quad_setup(igemm_job *j, size_t K, size_t panels) {
    if (!j->k->quad) return;
    j->panels = panels;
    /* Consecutive items share their panel (B in L1, A streamed), so A is read once per panel: when the
     * packed A is the larger operand (a late conv's 512 x 4608 weights over a 7x7 plane's 4 panels), the
     * tiles go row-major instead and the smaller B is the one read again. */
    j->rows_major = nn_igemm_rows_major(j->k, j->M, j->N);
    j->kp = nn_igemm_kq(K);
    j->arz = (const int32_t *)(const void *)((const uint8_t *)(const void *)j->a + j->mtiles * j->k->mr * j->kp);
    j->bcz = (const int32_t *)(const void *)((const uint8_t *)(const void *)j->b + panels * j->k->nr * j->kp);
}

void nn_igemm(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
              const int16_t *bpack, int32_t *c, size_t ldc) {
    if (M == 0 || N == 0) return;
    igemm_job j = { k, M, N, nn_igemm_kp(K), M / k->mr + (M % k->mr != 0), apack, bpack, c, ldc, NULL, NULL, NULL, NULL, 0, 0, NULL };
    const size_t panels = N / k->nr + (N % k->nr != 0), n = panels * j.mtiles;
    igemm_quad_setup(&j, K, panels);
    /* ~64K multiply-adds per range at least, so small products stay on one thread */
    size_t per = k->mr * k->nr * (j.kp ? j.kp : 1), grain = per >= 65536 ? 1 : 65536 / per;
    cort_parallel_for(pool, n, grain, igemm_range, &j);
}

void nn_igemm_epi(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
                  const int16_t *bpack, nn_igemm_epi_fn fn, void *ctx) {
    nn_igemm_epi_rq(pool, k, M, N, K, apack, bpack, fn, ctx, NULL);
}

void nn_igemm_epi_rq(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
                     const int16_t *bpack, nn_igemm_epi_fn fn, void *ctx, const nn_igemm_rq *rq) {
    if (M == 0 || N == 0) return;
    igemm_job j = { k, M, N, nn_igemm_kp(K), M / k->mr + (M % k->mr != 0), apack, bpack, NULL, 0, fn, ctx, NULL, NULL, 0, 0,
                    fn && k->quad && k->qukr_rq ? rq : NULL };
    const size_t panels = N / k->nr + (N % k->nr != 0), n = panels * j.mtiles;
    igemm_quad_setup(&j, K, panels);
    size_t per = k->mr * k->nr * (j.kp ? j.kp : 1), grain = per >= 65536 ? 1 : 65536 / per;
    cort_parallel_for(pool, n, grain, igemm_range, &j);
}

void nn_igemm_panels(const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
                     const int16_t *bpack, size_t jp0, size_t jp1, int32_t *c, size_t ldc, nn_igemm_epi_fn fn,
                     void *ctx, const nn_igemm_rq *rq) {
    if (M == 0 || N == 0 || !k->quad || jp1 <= jp0) return;
    igemm_job j = { k, M, N, nn_igemm_kp(K), M / k->mr + (M % k->mr != 0), apack, bpack, c, ldc, fn, ctx, NULL, NULL, 0, 0,
                    fn && k->qukr_rq ? rq : NULL };
    igemm_quad_setup(&j, K, N / k->nr + (N % k->nr != 0));
    j.rows_major = 0;
    igemm_range_quad(&j, jp0 * j.mtiles, jp1 * j.mtiles);
}
