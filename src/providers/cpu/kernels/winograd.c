/* Winograd F(4x4, 3x3) (Lavin & Gray) on top of the packed SGEMM. Tiles are processed in blocks
 * so the transformed input and the gemm outputs of one block stay in L2/L3; the transforms run on
 * 16 tiles at once in GCC/Clang vector types (zmm registers on AVX-512 CPUs). */
#include "../../../core/cpu_features.h"
#include <stdatomic.h>
#include <string.h>
#include "winograd.h"
#include "../../../core/alloc.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define WT 16   /* tiles per vector */
typedef float wv __attribute__((vector_size(WT * sizeof(float))));
typedef float hv __attribute__((vector_size(WT / 2 * sizeof(float))));
/* unaligned, aliasing views for loads and stores that stay whole vector moves (a memcpy of a wv
 * into an array element became 16-byte pieces, read back whole through a store-forward stall) */
typedef float wvu __attribute__((vector_size(WT * sizeof(float)), aligned(4), may_alias));
typedef float hvu __attribute__((vector_size(WT / 2 * sizeof(float)), aligned(4), may_alias));
#define WV_LOAD(p) ((wv) * (const wvu *)(p))
#define WV_STORE(p, v) (*(wvu *)(p) = (v))
#define HV_LOAD(p) ((hv) * (const hvu *)(p))

int nn_wino_axis(const nn_conv_shape *s) {
    const nn_geom *g = &s->g;
    return g->k[1] == 3 && g->k[2] == 1 ? NN_WINO_H : g->k[1] == 1 && g->k[2] == 3 ? NN_WINO_W : NN_WINO_2D;
}

int nn_wino_geometry_ok(const nn_conv_shape *s) {
    const nn_geom *g = &s->g;
    if (s->group != 1 || s->M < 2 || s->C < 1 || g->k[0] != 1 || g->in[0] != 1 || g->out[0] != 1 || g->s[1] != 1 ||
        g->s[2] != 1 || g->pb[0] != 0 || g->pe[0] != 0 || g->out[1] < 1 || g->out[2] < 1)
        return 0;
    if (g->k[1] == 3 && g->k[2] == 3) return g->d[1] == 1 && g->d[2] == 1;
    /* 1-D: the one-tap axis must map input to output one to one (no padding there) */
    if (g->k[1] == 3 && g->k[2] == 1) return g->d[1] == 1 && g->pb[2] == 0 && g->pe[2] == 0;
    if (g->k[1] == 1 && g->k[2] == 3) return g->d[2] == 1 && g->pb[1] == 0 && g->pe[1] == 0;
    return 0;
}

int nn_wino_applies(const nn_conv_shape *s) {
    if (!nn_wino_geometry_ok(s)) return 0;
    const size_t oh = (size_t)s->g.out[1], ow = (size_t)s->g.out[2];
    const int axis = nn_wino_axis(s);
    if (axis != NN_WINO_2D) {
        /* 1-D F(4, 3) halves the products; its transforms cost 1.5 vector loads and stores per
         * input and output element, which few channels do not pay back (24 -> 32 lost 7 %,
         * 32 -> 64 won 5 %, docs/performance.md) */
        const size_t along = axis == NN_WINO_H ? oh : ow;
        return s->C >= 32 && s->M >= 32 && along >= 8 ? 4 : 0;
    }
    /* few tiles make the 36 gemms too narrow; very few channels leave the transforms dominant:
     * since the transforms move whole vectors, 8 input channels win, 4 still lose, 8 outputs break
     * even (docs/performance.md, "Depthwise and Winograd measurements") */
    if (s->C >= 8 && s->M >= 16 && oh >= 12 && ow >= 12) return 4;
    /* 7x7 .. 11x11 maps: 4x4 tiles would leave the gemms 4-9 columns wide, 2x2 tiles give 16-36;
     * with many channels the 16 gemms beat the direct conv (resnet50's 512-channel 7x7 convs) */
    if (s->C >= 128 && s->M >= 128 && oh >= 7 && ow >= 7 && oh <= 11 && ow <= 11) return 2;
    return 0;
}

/* ---- filter transform: U = G g G^T, WT input channels at once ---- */
void nn_wino_free(nn_wino_weights *w) {
    if (!w) return;
    for (size_t i = 0; i < w->ne; i++) nn_gemm_packed_free(&w->u[i]);
}

/* The 9 taps of filters (m, c0 .. c0 + lanes) in vector lanes (the others zero). */
static inline __attribute__((always_inline)) void wino_filter_taps(const float *w, size_t m, size_t C, size_t c0,
                                                                   size_t lanes, wv g[9]) {
    for (int k = 0; k < 9; k++)
        for (size_t l = 0; l < WT; l++) g[k][l] = l < lanes ? w[(m * C + c0 + l) * 9 + k] : 0.0f;
}

/* u[e][m][c] for e = 6x6 element, m in [0, M), all c. */
static inline __attribute__((always_inline)) void wino_filter_body(const float *w, size_t M, size_t C, float *u) {
    for (size_t m = 0; m < M; m++)
        for (size_t c0 = 0; c0 < C; c0 += WT) {
            const size_t lanes = C - c0 < WT ? C - c0 : WT;
            wv g[9], t[18];
            wino_filter_taps(w, m, C, c0, lanes, g);
            for (int j = 0; j < 3; j++) {   /* t = G g (6x3) */
                const wv g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
                t[j] = g0 * (1.0f / 4);
                t[3 + j] = (g0 + g1 + g2) * (-1.0f / 6);
                t[6 + j] = (g0 - g1 + g2) * (-1.0f / 6);
                t[9 + j] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
                t[12 + j] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
                t[15 + j] = g2;
            }
            for (int i = 0; i < 6; i++) {   /* u = t G^T (6x6) */
                const wv r0 = t[3 * i], r1 = t[3 * i + 1], r2 = t[3 * i + 2];
                const wv o[6] = { r0 * (1.0f / 4), (r0 + r1 + r2) * (-1.0f / 6), (r0 - r1 + r2) * (-1.0f / 6),
                                  r0 * (1.0f / 24) + r1 * (1.0f / 12) + r2 * (1.0f / 6),
                                  r0 * (1.0f / 24) - r1 * (1.0f / 12) + r2 * (1.0f / 6), r2 };
                for (int j = 0; j < 6; j++)
                    memcpy(u + ((size_t)(i * 6 + j) * M + m) * C + c0, &o[j], lanes * sizeof(float));
            }
        }
}
/* F(2x2, 3x3): u[e][m][c] for e = 4x4 element, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]. */
static inline __attribute__((always_inline)) void wino2_filter_body(const float *w, size_t M, size_t C, float *u) {
    for (size_t m = 0; m < M; m++)
        for (size_t c0 = 0; c0 < C; c0 += WT) {
            const size_t lanes = C - c0 < WT ? C - c0 : WT;
            wv g[9], t[12];
            wino_filter_taps(w, m, C, c0, lanes, g);
            for (int j = 0; j < 3; j++) {   /* t = G g (4x3) */
                const wv g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
                t[j] = g0;
                t[3 + j] = (g0 + g1 + g2) * 0.5f;
                t[6 + j] = (g0 - g1 + g2) * 0.5f;
                t[9 + j] = g2;
            }
            for (int i = 0; i < 4; i++) {   /* u = t G^T (4x4) */
                const wv r0 = t[3 * i], r1 = t[3 * i + 1], r2 = t[3 * i + 2];
                const wv o[4] = { r0, (r0 + r1 + r2) * 0.5f, (r0 - r1 + r2) * 0.5f, r2 };
                for (int j = 0; j < 4; j++)
                    memcpy(u + ((size_t)(i * 4 + j) * M + m) * C + c0, &o[j], lanes * sizeof(float));
            }
        }
}

/* 1-D F(4, 3): u[e][m][c] for e = 0..5, u = G g of the 3 taps (3x1 and 1x3 filters store them
 * alike: 3 consecutive floats per (m, c)). */
static inline __attribute__((always_inline)) void wino1_filter_body(const float *w, size_t M, size_t C, float *u) {
    for (size_t m = 0; m < M; m++)
        for (size_t c0 = 0; c0 < C; c0 += WT) {
            const size_t lanes = C - c0 < WT ? C - c0 : WT;
            wv g[3];
            for (int k = 0; k < 3; k++)
                for (size_t l = 0; l < WT; l++) g[k][l] = l < lanes ? w[(m * C + c0 + l) * 3 + k] : 0.0f;
            const wv g0 = g[0], g1 = g[1], g2 = g[2];
            const wv o[6] = { g0 * (1.0f / 4), (g0 + g1 + g2) * (-1.0f / 6), (g0 - g1 + g2) * (-1.0f / 6),
                              g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6),
                              g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6), g2 };
            for (int e = 0; e < 6; e++) memcpy(u + ((size_t)e * M + m) * C + c0, &o[e], lanes * sizeof(float));
        }
}

static void wino_filter_isa(const float *w, size_t M, size_t C, int m, int axis, float *u);

#define WINO_FILTER_DISPATCH(w, M, C, m, axis, u)                                                                    \
    do {                                                                                                             \
        if (axis != NN_WINO_2D) wino1_filter_body(w, M, C, u);                                                       \
        else if (m == 2) wino2_filter_body(w, M, C, u);                                                              \
        else wino_filter_body(w, M, C, u);                                                                           \
    } while (0)
static void wino_filter_generic(const float *w, size_t M, size_t C, int m, int axis, float *u) {
    WINO_FILTER_DISPATCH(w, M, C, m, axis, u);
}
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) static void wino_filter_avx2(const float *w, size_t M, size_t C, int m, int axis,
                                                                float *u) {
    WINO_FILTER_DISPATCH(w, M, C, m, axis, u);
}
__attribute__((target("avx512f"))) static void wino_filter_avx512(const float *w, size_t M, size_t C, int m, int axis,
                                                                 float *u) {
    WINO_FILTER_DISPATCH(w, M, C, m, axis, u);
}
#endif

/* Filters are transformed WINO_PACK_ROWS output channels at a time and those rows packed into
 * each element's matrix right away: the whole transformed tensor (36 * M * C floats, 9.4 MB for a
 * 256-channel conv) was a temporary as big as the packs. */
#define WINO_PACK_ROWS 96

typedef struct wino_pack_job {
    const float *u;          /* [ne][rows][C]: the transformed rows [r0, r0 + rows) */
    size_t M, C, r0, rows;
    nn_wino_weights *out;
} wino_pack_job;

static void wino_pack_run(void *arg, size_t begin, size_t end) {
    const wino_pack_job *j = arg;
    for (size_t e = begin; e < end; e++) {
        const nn_gemm_packed *p = &j->out->u[e];
        const size_t mr = p->k->mr;
        nn_gemm_pack_a_panels(p->k, j->M, j->C, j->u + e * j->rows * j->C, j->C, 0, j->r0, j->r0 / mr,
                              (j->r0 + j->rows + mr - 1) / mr, p->data);
    }
}

cort_status *nn_wino_pack(const float *w, size_t M, size_t C, int m, int axis, nn_wino_weights *out) {
    return nn_wino_pack_par(NULL, w, M, C, m, axis, out);
}

cort_status *nn_wino_pack_par(cort_pool *pool, const float *w, size_t M, size_t C, int m, int axis,
                              nn_wino_weights *out) {
    memset(out, 0, sizeof *out);
    out->M = M; out->C = C;
    out->axis = axis == NN_WINO_H || axis == NN_WINO_W ? axis : NN_WINO_2D;
    out->m = m == 2 && out->axis == NN_WINO_2D ? 2 : 4;
    out->ne = out->axis != NN_WINO_2D ? (size_t)out->m + 2 : (size_t)(out->m + 2) * (size_t)(out->m + 2);
    const size_t taps = out->axis != NN_WINO_2D ? 3 : 9;
    const nn_gemm_kernel *k = nn_gemm_best_kernel();
    const size_t mr = k->mr, mpanels = (M + mr - 1) / mr, chunk = (WINO_PACK_ROWS + mr - 1) / mr * mr;
    if (C && mpanels > SIZE_MAX / sizeof(float) / mr / C / 36) return cort_error_oom();
    for (size_t e = 0; e < out->ne; e++) {
        nn_gemm_packed *p = &out->u[e];
        p->data = cort_malloc_huge((mpanels * mr * C + 1) * sizeof(float));
        if (!p->data) { nn_wino_free(out); return cort_error_oom(); }
        p->k = k; p->rows = M; p->K = C; p->alpha = 1.0f;
    }
    float *u = cort_malloc(out->ne * chunk * C * sizeof(float) + 1);   /* temporary: not from the huge arena */
    if (!u) { nn_wino_free(out); return cort_error_oom(); }
    for (size_t r0 = 0; r0 < M; r0 += chunk) {
        const size_t rows = M - r0 < chunk ? M - r0 : chunk;
        wino_filter_isa(w + r0 * C * taps, rows, C, out->m, out->axis, u);
        /* the element matrices are packed independently: spread them over the session's threads */
        wino_pack_job j = { u, M, C, r0, rows, out };
        cort_parallel_for(pool, out->ne, 1, wino_pack_run, &j);
    }
    cort_free(u);
    return NULL;
}

/* ---- tile transforms on WT tiles at once ---- */
/* V = B^T d B; d[36] row-major 6x6, v[36] likewise. */
static inline __attribute__((always_inline)) void wino_in(const wv *d, wv *v) {
    wv t[36];
    for (int j = 0; j < 6; j++) {   /* t = B^T d (columns) */
        const wv d0 = d[j], d1 = d[6 + j], d2 = d[12 + j], d3 = d[18 + j], d4 = d[24 + j], d5 = d[30 + j];
        t[j] = 4.0f * d0 - 5.0f * d2 + d4;
        t[6 + j] = -4.0f * (d1 + d2) + d3 + d4;
        t[12 + j] = 4.0f * (d1 - d2) - d3 + d4;
        t[18 + j] = -2.0f * (d1 - d3) - d2 + d4;
        t[24 + j] = 2.0f * (d1 - d3) - d2 + d4;
        t[30 + j] = 4.0f * d1 - 5.0f * d3 + d5;
    }
    for (int i = 0; i < 6; i++) {   /* v = t B (rows) */
        const wv *r = t + 6 * i;
        wv *o = v + 6 * i;
        o[0] = 4.0f * r[0] - 5.0f * r[2] + r[4];
        o[1] = -4.0f * (r[1] + r[2]) + r[3] + r[4];
        o[2] = 4.0f * (r[1] - r[2]) - r[3] + r[4];
        o[3] = -2.0f * (r[1] - r[3]) - r[2] + r[4];
        o[4] = 2.0f * (r[1] - r[3]) - r[2] + r[4];
        o[5] = 4.0f * r[1] - 5.0f * r[3] + r[5];
    }
}

/* F(2x2, 3x3): V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; d[16], v[16] 4x4. */
static inline __attribute__((always_inline)) void wino2_in(const wv *d, wv *v) {
    wv t[16];
    for (int j = 0; j < 4; j++) {
        const wv d0 = d[j], d1 = d[4 + j], d2 = d[8 + j], d3 = d[12 + j];
        t[j] = d0 - d2;
        t[4 + j] = d1 + d2;
        t[8 + j] = d2 - d1;
        t[12 + j] = d1 - d3;
    }
    for (int i = 0; i < 4; i++) {
        const wv *r = t + 4 * i;
        wv *o = v + 4 * i;
        o[0] = r[0] - r[2];
        o[1] = r[1] + r[2];
        o[2] = r[2] - r[1];
        o[3] = r[1] - r[3];
    }
}

/* F(2x2, 3x3): Y = A^T m A, A^T = [1 1 1 0; 0 1 -1 -1]; m[16] 4x4, y[4] 2x2. */
static inline __attribute__((always_inline)) void wino2_out(const wv *m, wv *y) {
    wv t[8];
    for (int j = 0; j < 4; j++) {
        const wv m0 = m[j], m1 = m[4 + j], m2 = m[8 + j], m3 = m[12 + j];
        t[j] = m0 + m1 + m2;
        t[4 + j] = m1 - m2 - m3;
    }
    for (int i = 0; i < 2; i++) {
        const wv *r = t + 4 * i;
        y[2 * i] = r[0] + r[1] + r[2];
        y[2 * i + 1] = r[1] - r[2] - r[3];
    }
}

/* Y = A^T m A; m[36] 6x6, y[16] 4x4. */
static inline __attribute__((always_inline)) void wino_out(const wv *m, wv *y) {
    wv t[24];
    for (int j = 0; j < 6; j++) {   /* t = A^T m */
        const wv m0 = m[j], m1 = m[6 + j], m2 = m[12 + j], m3 = m[18 + j], m4 = m[24 + j], m5 = m[30 + j];
        const wv s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
        t[j] = m0 + s12 + s34;
        t[6 + j] = d12 + 2.0f * d34;
        t[12 + j] = s12 + 4.0f * s34;
        t[18 + j] = d12 + 8.0f * d34 + m5;
    }
    for (int i = 0; i < 4; i++) {   /* y = t A */
        const wv *r = t + 6 * i;
        const wv s12 = r[1] + r[2], d12 = r[1] - r[2], s34 = r[3] + r[4], d34 = r[3] - r[4];
        y[4 * i] = r[0] + s12 + s34;
        y[4 * i + 1] = d12 + 2.0f * d34;
        y[4 * i + 2] = s12 + 4.0f * s34;
        y[4 * i + 3] = d12 + 8.0f * d34 + r[5];
    }
}

/* 1-D F(4, 3): v = B^T d and y = A^T m with the matrices of the 2-D transforms above; macros so
 * they run on whole (wv) and half (hv) vectors alike. */
#define WINO1_IN(d, v)                                                                                               \
    do {                                                                                                             \
        (v)[0] = 4.0f * (d)[0] - 5.0f * (d)[2] + (d)[4];                                                             \
        (v)[1] = -4.0f * ((d)[1] + (d)[2]) + (d)[3] + (d)[4];                                                        \
        (v)[2] = 4.0f * ((d)[1] - (d)[2]) - (d)[3] + (d)[4];                                                         \
        (v)[3] = -2.0f * ((d)[1] - (d)[3]) - (d)[2] + (d)[4];                                                        \
        (v)[4] = 2.0f * ((d)[1] - (d)[3]) - (d)[2] + (d)[4];                                                         \
        (v)[5] = 4.0f * (d)[1] - 5.0f * (d)[3] + (d)[5];                                                             \
    } while (0)
#define WINO1_OUT(m, y)                                                                                              \
    do {                                                                                                             \
        const __typeof__((m)[0]) s12_ = (m)[1] + (m)[2], d12_ = (m)[1] - (m)[2];                                     \
        const __typeof__((m)[0]) s34_ = (m)[3] + (m)[4], d34_ = (m)[3] - (m)[4];                                     \
        (y)[0] = (m)[0] + s12_ + s34_;                                                                               \
        (y)[1] = d12_ + 2.0f * d34_;                                                                                 \
        (y)[2] = s12_ + 4.0f * s34_;                                                                                 \
        (y)[3] = d12_ + 8.0f * d34_ + (m)[5];                                                                        \
    } while (0)
static inline __attribute__((always_inline)) void wino1_in(const wv *d, wv *v) { WINO1_IN(d, v); }
static inline __attribute__((always_inline)) void wino1_out(const wv *m, wv *y) { WINO1_OUT(m, y); }

typedef struct wino_job {
    const nn_geom *g;
    size_t C, M, tw, tiles, t0, tb;   /* tiles per row, total, this block's first tile and width (multiple of WT) */
    const float *x;                   /* one image [C][H][W] */
    float *v;                         /* [36][C][tb] */
    float *mo;                        /* [36][M][tb] */
    const float *bias;
    float *y;                         /* one image [M][OH][OW] */
    const nn_wino_weights *w;
    const nn_act *act;                /* applied per output plane by the output transform when the block
                                       * covers every tile (else after all blocks), or NULL */
    int act_tiles;                    /* apply act to each transformed tile before it is stored */
} wino_job;

/* Floats between consecutive elements' matrices in v (rows C) and mo (rows M): rows * tb rounded to
 * an odd number of cache lines. With a stride that is a multiple of 2 KB the 36 vectors a tile
 * group stores (or the output transform loads) all fell into one or two L1 sets (a 96-channel
 * block of 48 tiles: 18 KB apart, two sets for 36 lines); an odd number of lines spreads them. */
static size_t wino_plane(size_t rows, size_t tb) {
    size_t lines = (rows * tb + 15) / 16;
    return (lines | 1) * 16;
}

static void wino_gemms(void *arg, size_t begin, size_t end) {   /* one per transformed element */
    const wino_job *j = arg;
    const size_t sv = wino_plane(j->C, j->tb), sm = wino_plane(j->M, j->tb);
    for (size_t e = begin; e < end; e++)
        nn_gemm_packed_a_plain_b(&j->w->u[e], j->tb, j->v + e * sv, j->tb, j->mo + e * sm, j->tb);
}

/* Input transform of channels [begin, end) for the block's tiles; MT: output tile side (2 or 4). */
static inline __attribute__((always_inline)) void wino_in_body(const wino_job *j, size_t begin, size_t end,
                                                               const int MT) {
    const int A = MT + 2, NE = A * A;
    const int64_t H = j->g->in[1], W = j->g->in[2], pt = j->g->pb[1], pl = j->g->pb[2];
    const size_t sv = wino_plane(j->C, j->tb);
    wv d[36], v[36];
    for (size_t c = begin; c < end; c++) {
        const float *xc = j->x + c * (size_t)(H * W);
        for (size_t q = 0; q < j->tb; q += WT) {
            for (size_t l = 0; l < WT; l++) {
                const size_t t = j->t0 + q + l;
                const int64_t y0 = (int64_t)(t / j->tw) * MT - pt, x0 = (int64_t)(t % j->tw) * MT - pl;
                if (t < j->tiles && y0 >= 0 && x0 >= 0 && y0 + A <= H && x0 + A <= W) {   /* interior tile */
                    const float *src = xc + y0 * W + x0;
                    for (int r = 0; r < A; r++, src += W)
                        for (int s = 0; s < A; s++) d[r * A + s][l] = src[s];
                    continue;
                }
                for (int r = 0; r < A; r++)
                    for (int s = 0; s < A; s++) {
                        const int64_t yy = y0 + r, xx = x0 + s;
                        d[r * A + s][l] = t < j->tiles && yy >= 0 && yy < H && xx >= 0 && xx < W ? xc[yy * W + xx] : 0.0f;
                    }
            }
            if (MT == 2) wino2_in(d, v);
            else wino_in(d, v);
            for (int e = 0; e < NE; e++) WV_STORE(j->v + (size_t)e * sv + c * j->tb + q, v[e]);
        }
    }
}

/* Output transform (+ bias) of output channels [begin, end). */
static inline __attribute__((always_inline)) void wino_out_body(const wino_job *j, size_t begin, size_t end,
                                                                const int MT) {
    const int NE = (MT + 2) * (MT + 2);
    const int64_t OH = j->g->out[1], OW = j->g->out[2];
    const size_t sm = wino_plane(j->M, j->tb);
    wv m[36], o[16];
    for (size_t k = begin; k < end; k++) {
        float *yk = j->y + k * (size_t)(OH * OW);
        const float b = j->bias ? j->bias[k] : 0.0f;
        for (size_t q = 0; q < j->tb; q += WT) {
            for (int e = 0; e < NE; e++) m[e] = WV_LOAD(j->mo + (size_t)e * sm + k * j->tb + q);
            if (MT == 2) wino2_out(m, o);
            else wino_out(m, o);
            if (j->act_tiles) {   /* + bias first: the activation sees the conv's output */
                for (int e = 0; e < MT * MT; e++) o[e] += b;
                nn_act_apply(j->act, (float *)o, (size_t)(MT * MT * WT));
            }
            const float bo = j->act_tiles ? 0.0f : b;
            for (size_t l = 0; l < WT; l++) {
                const size_t t = j->t0 + q + l;
                if (t >= j->tiles) break;
                const int64_t y0 = (int64_t)(t / j->tw) * MT, x0 = (int64_t)(t % j->tw) * MT;
                for (int r = 0; r < MT && y0 + r < OH; r++)
                    for (int s = 0; s < MT && x0 + s < OW; s++) yk[(y0 + r) * OW + x0 + s] = o[r * MT + s][l] + bo;
            }
        }
        /* the whole plane was just written (one block): activate it while it is in cache */
        if (j->act && !j->act_tiles && j->t0 == 0 && j->tb >= j->tiles) nn_act_apply(j->act, yk, (size_t)(OH * OW));
    }
}


/* Whether the 8 tiles from t lie in one tile row. */
static inline int wino_half_in_row(const wino_job *j, size_t t) {
    return t + WT / 2 <= j->tiles && t % j->tw + WT / 2 <= j->tw;
}

/* 1-D input transform of channels [begin, end). A 3x1 conv's tile t is 4 output rows of one
 * column: tile row t / tw starts at input row 4 (t / tw) - pt, column t % tw, so 8 tiles that
 * share a tile row read 6 contiguous 8-float row segments; this runs on such half vectors, kept
 * in registers (partial copies into a stack vector read back whole stall on store forwarding).
 * A 1x3 conv's tile is 4 columns of one row (input row t / tw, columns from 4 (t % tw) - pl): here
 * per lane; the x86 levels deinterleave whole runs instead (wino1w_in_*). */
static inline __attribute__((always_inline)) void wino1_in_body(const wino_job *j, size_t begin, size_t end) {
    const int64_t H = j->g->in[1], W = j->g->in[2], pt = j->g->pb[1], pl = j->g->pb[2];
    const int axis = j->w->axis;
    const size_t sv = wino_plane(j->C, j->tb);
    for (size_t c = begin; c < end; c++) {
        const float *xc = j->x + c * (size_t)(H * W);
        for (size_t q = 0; q < j->tb; q += WT) {
            const size_t t0 = j->t0 + q;
            if (axis == NN_WINO_H) {
                for (size_t h = 0; h < WT; h += WT / 2) {
                    const size_t t = t0 + h;
                    hv d[6], hvv[6];
                    if (wino_half_in_row(j, t)) {
                        const int64_t y0 = (int64_t)(t / j->tw) * 4 - pt;
                        const float *src = xc + (int64_t)(t % j->tw);
                        for (int r = 0; r < 6; r++)
                            d[r] = y0 + r >= 0 && y0 + r < H ? HV_LOAD(src + (y0 + r) * W) : (hv){ 0 };
                    } else {
                        for (size_t l = 0; l < WT / 2; l++) {
                            const int64_t y0 = (int64_t)((t + l) / j->tw) * 4 - pt, x = (int64_t)((t + l) % j->tw);
                            for (int r = 0; r < 6; r++)
                                d[r][l] = t + l < j->tiles && y0 + r >= 0 && y0 + r < H ? xc[(y0 + r) * W + x] : 0.0f;
                        }
                    }
                    WINO1_IN(d, hvv);
                    for (int e = 0; e < 6; e++) *(hvu *)(j->v + (size_t)e * sv + c * j->tb + q + h) = hvv[e];
                }
                continue;
            }
            wv d[6], v[6];
            for (size_t l = 0; l < WT; l++) {
                const size_t t = t0 + l;
                const int64_t y = (int64_t)(t / j->tw), x0 = (int64_t)(t % j->tw) * 4 - pl;
                for (int r = 0; r < 6; r++)
                    d[r][l] = t < j->tiles && x0 + r >= 0 && x0 + r < W ? xc[y * W + x0 + r] : 0.0f;
            }
            wino1_in(d, v);
            for (int e = 0; e < 6; e++) WV_STORE(j->v + (size_t)e * sv + c * j->tb + q, v[e]);
        }
    }
}

/* 1-D output transform (+ bias) of output channels [begin, end); the tile layout of wino1_in_body. */
static inline __attribute__((always_inline)) void wino1_out_body(const wino_job *j, size_t begin, size_t end) {
    const int64_t OH = j->g->out[1], OW = j->g->out[2];
    const int axis = j->w->axis;
    const size_t sm = wino_plane(j->M, j->tb);
    for (size_t k = begin; k < end; k++) {
        float *yk = j->y + k * (size_t)(OH * OW);
        const float b = j->bias ? j->bias[k] : 0.0f;
        for (size_t q = 0; q < j->tb; q += WT) {
            const size_t t0 = j->t0 + q;
            if (axis == NN_WINO_H) {
                for (size_t h = 0; h < WT; h += WT / 2) {
                    const size_t t = t0 + h;
                    hv m[6], o[4];
                    for (int e = 0; e < 6; e++) m[e] = HV_LOAD(j->mo + (size_t)e * sm + k * j->tb + q + h);
                    WINO1_OUT(m, o);
                    for (int e = 0; e < 4; e++) o[e] += b;
                    if (j->act_tiles) nn_act_apply(j->act, (float *)o, (size_t)(4 * WT / 2));
                    if (wino_half_in_row(j, t)) {
                        const int64_t y0 = (int64_t)(t / j->tw) * 4;
                        float *dst = yk + (int64_t)(t % j->tw);
                        for (int64_t r = 0; r < 4 && y0 + r < OH; r++) *(hvu *)(dst + (y0 + r) * OW) = o[r];
                        continue;
                    }
                    for (size_t l = 0; l < WT / 2 && t + l < j->tiles; l++) {
                        const int64_t y0 = (int64_t)((t + l) / j->tw) * 4, x = (int64_t)((t + l) % j->tw);
                        for (int64_t r = 0; r < 4 && y0 + r < OH; r++) yk[(y0 + r) * OW + x] = o[r][l];
                    }
                }
                continue;
            }
            wv m[6], o[4];
            for (int e = 0; e < 6; e++) m[e] = WV_LOAD(j->mo + (size_t)e * sm + k * j->tb + q);
            wino1_out(m, o);
            for (int e = 0; e < 4; e++) o[e] += b;
            if (j->act_tiles) nn_act_apply(j->act, (float *)o, (size_t)(4 * WT));
            for (size_t l = 0; l < WT && t0 + l < j->tiles; l++) {
                const size_t t = t0 + l;
                const int64_t y = (int64_t)(t / j->tw), x0 = (int64_t)(t % j->tw) * 4;
                for (int64_t s = 0; s < 4 && x0 + s < OW; s++) yk[y * OW + x0 + s] = o[s][l];
            }
        }
        /* the whole plane was just written (one block): activate it while it is in cache */
        if (j->act && !j->act_tiles && j->t0 == 0 && j->tb >= j->tiles) nn_act_apply(j->act, yk, (size_t)(OH * OW));
    }
}

typedef struct wino_act_job { const nn_act *act; float *y; size_t plane; } wino_act_job;

static void wino_act_run(void *arg, size_t begin, size_t end) {
    const wino_act_job *a = arg;
    for (size_t k = begin; k < end; k++) nn_act_apply(a->act, a->y + k * a->plane, a->plane);
}

static void wino_in_generic(void *arg, size_t begin, size_t end) { wino_in_body(arg, begin, end, 4); }
static void wino_out_generic(void *arg, size_t begin, size_t end) { wino_out_body(arg, begin, end, 4); }
static void wino2_in_generic(void *arg, size_t begin, size_t end) { wino_in_body(arg, begin, end, 2); }
static void wino2_out_generic(void *arg, size_t begin, size_t end) { wino_out_body(arg, begin, end, 2); }
static void wino1_in_generic(void *arg, size_t begin, size_t end) { wino1_in_body(arg, begin, end); }
static void wino1_out_generic(void *arg, size_t begin, size_t end) { wino1_out_body(arg, begin, end); }
#if defined(__x86_64__) || defined(__i386__)
/* Tiles from t (in lane l of its group) that lie side by side in t's tile row: up to the group's
 * last lane, the row's end and the last tile. */
static size_t wino_run_len(const wino_job *j, size_t t, size_t l) {
    size_t n = WT - l;
    if (n > j->tw - t % j->tw) n = j->tw - t % j->tw;
    if (n > j->tiles - t) n = j->tiles - t;
    return n;
}

/* AVX2: the portable bodies on ymm pairs (the baseline x86-64 build runs each 16-lane vector
 * operation as four SSE ones). */

/* Lanes [lane, lane + m) (m <= 8, within one 8-lane half of the 16) of the 6 * rows vectors
 * d[r * 6 + s] (rows: 6 for 3x3 windows, 1 for a 1x3 conv's) for m tiles side by side in one tile
 * row, the first one's window at (y0, x0): d[r][s] of tile i is input (y0 + r, x0 + 4 i + s). Per
 * window row, 32 floats in four loads are split by columns mod 4 with two rounds of unpacks and a
 * lane permute (0 2 4 6 | 1 3 5 7 -> tile order); columns 4 and 5 are columns 0 and 1 of the next
 * tile, the last lane from floats 32 and 33. Rows or columns outside the image go through a zeroed
 * stack copy of the row, which is the padding. A partial run is moved to its lanes and blended
 * into the whole aligned half: a masked store there, read back by the transform's whole-half
 * loads, stalled on store forwarding (1x3 convs whose rows are 12 tiles made most runs partial). */
__attribute__((target("avx2,fma"))) static void wino_gather8_avx2(const float *xc, int64_t H, int64_t W, int64_t y0,
                                                                 int64_t x0, size_t lane, size_t m, int rows, wv *d) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i next = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int lo = (int)(lane % 8);
    const __m256i to_lanes = _mm256_sub_epi32(iota, _mm256_set1_epi32(lo));
    const __m256 mask = _mm256_castsi256_ps(_mm256_and_si256(_mm256_cmpgt_epi32(iota, _mm256_set1_epi32(lo - 1)),
                                                             _mm256_cmpgt_epi32(_mm256_set1_epi32(lo + (int)m), iota)));
    for (int r = 0; r < rows; r++) {
        const int64_t y = y0 + r;
        __m256 v[6];
        if (y < 0 || y >= H) {
            for (int c = 0; c < 6; c++) v[c] = _mm256_setzero_ps();
        } else {
            const float *row = xc + y * W;
            __m256 a0, a1, a2, a3;
            float e32, e33;
            if (x0 < 0 || x0 + 34 > W) {
                /* columns outside [0, W) masked off (a masked-off lane is never read): a zeroed
                 * stack copy of the row cost as much as the rest of the gather, and a 1x3 conv's
                 * every row starts and ends in its padding */
                const uintptr_t base = (uintptr_t)row + (uintptr_t)(x0 * (int64_t)sizeof(float));
                /* valid columns relative to x0: [first, last) clamped to the 34 read */
                const int first = x0 < 0 ? (int)(-x0 < 40 ? -x0 : 40) : 0;
                const int last = W - x0 < 40 ? (int)(W - x0 > 0 ? W - x0 : 0) : 40;
                __m256 a[4];
                for (int k = 0; k < 4; k++) {
                    const __m256i col = _mm256_add_epi32(iota, _mm256_set1_epi32(8 * k));
                    const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(first), col),
                                                           _mm256_cmpgt_epi32(_mm256_set1_epi32(last), col));
                    a[k] = _mm256_maskload_ps((const float *)(base + (uintptr_t)(32 * k)), in);
                }
                a0 = a[0]; a1 = a[1]; a2 = a[2]; a3 = a[3];
                e32 = first <= 32 && 32 < last ? row[x0 + 32] : 0.0f;
                e33 = first <= 33 && 33 < last ? row[x0 + 33] : 0.0f;
            } else {
                const float *src = row + x0;
                a0 = _mm256_loadu_ps(src); a1 = _mm256_loadu_ps(src + 8);
                a2 = _mm256_loadu_ps(src + 16); a3 = _mm256_loadu_ps(src + 24);
                e32 = src[32]; e33 = src[33];
            }
            const __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
            const __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
            const __m256d p0 = _mm256_castps_pd(t0), p1 = _mm256_castps_pd(t1);
            const __m256d p2 = _mm256_castps_pd(t2), p3 = _mm256_castps_pd(t3);
            v[0] = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(p0, p2)), order);
            v[1] = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_unpackhi_pd(p0, p2)), order);
            v[2] = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(p1, p3)), order);
            v[3] = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_unpackhi_pd(p1, p3)), order);
            v[4] = _mm256_blend_ps(_mm256_permutevar8x32_ps(v[0], next), _mm256_set1_ps(e32), 0x80);
            v[5] = _mm256_blend_ps(_mm256_permutevar8x32_ps(v[1], next), _mm256_set1_ps(e33), 0x80);
        }
        for (int c = 0; c < 6; c++) {
            float *dst = (float *)&d[r * 6 + c] + (lane - (size_t)lo);
            if (m == 8) {
                _mm256_storeu_ps(dst, v[c]);
            } else {
                const __m256 moved = lo ? _mm256_permutevar8x32_ps(v[c], to_lanes) : v[c];
                _mm256_storeu_ps(dst, _mm256_blendv_ps(_mm256_loadu_ps(dst), moved, mask));
            }
        }
    }
}

/* wino_in_body for 4x4 tiles (ONED: the 1x4 tiles of a 1x3 conv, one input row each) with the
 * gather above for every run of tiles in one tile row, cut at the 8-lane halves so the
 * transform's vector loads forward from whole stores. */
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) void
wino_in_avx2_body(const wino_job *j, size_t begin, size_t end, const int ONED) {
    const int64_t H = j->g->in[1], W = j->g->in[2], pt = j->g->pb[1], pl = j->g->pb[2];
    const int NE = ONED ? 6 : 36;
    const size_t sv = wino_plane(j->C, j->tb);
    wv d[36], v[36];
    for (size_t c = begin; c < end; c++) {
        const float *xc = j->x + c * (size_t)(H * W);
        for (size_t q = 0; q < j->tb; q += WT) {
            /* lanes past the last tile must be zero */
            if (j->t0 + q + WT > j->tiles) memset(d, 0, (size_t)NE * sizeof(wv));
            for (size_t l = 0; l < WT && j->t0 + q + l < j->tiles;) {
                const size_t t = j->t0 + q + l;
                size_t n = wino_run_len(j, t, l);
                if (n > 8 - l % 8) n = 8 - l % 8;
                const int64_t y0 = (int64_t)(t / j->tw) * (ONED ? 1 : 4) - pt, x0 = (int64_t)(t % j->tw) * 4 - pl;
                wino_gather8_avx2(xc, H, W, y0, x0, l, n, ONED ? 1 : 6, d);
                l += n;
            }
            if (ONED) wino1_in(d, v);
            else wino_in(d, v);
            for (int e = 0; e < NE; e++) WV_STORE(j->v + (size_t)e * sv + c * j->tb + q, v[e]);
        }
    }
}
__attribute__((target("avx2,fma"))) static void wino_in_avx2(void *arg, size_t begin, size_t end) {
    wino_in_avx2_body(arg, begin, end, 0);
}
__attribute__((target("avx2,fma"))) static void wino1w_in_avx2(void *arg, size_t begin, size_t end) {
    wino_in_avx2_body(arg, begin, end, 1);
}
/* wino_out_body for 4x4 tiles: each run of tiles side by side in one tile row (cut at the 8-lane
 * halves) stores its output rows as whole vectors, two tiles (8 floats) per vector interleaved
 * from the 4 column vectors of a row by unpacks and a 128-bit lane exchange, instead of 16 scalar
 * stores per vector read back through the stack; floats outside the run (other tiles' lanes, the
 * columns past OW) are masked off. */
__attribute__((target("avx2,fma"))) static inline __attribute__((always_inline)) void
wino_out_avx2_body(const wino_job *j, size_t begin, size_t end, const int ONED) {
    const int64_t OH = j->g->out[1], OW = j->g->out[2];
    const int NE = ONED ? 6 : 36, NO = ONED ? 4 : 16, ROWS = ONED ? 1 : 4;
    const size_t sm = wino_plane(j->M, j->tb);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    wv m[36], o[16];
    for (size_t k = begin; k < end; k++) {
        float *yk = j->y + k * (size_t)(OH * OW);
        const float b = j->bias ? j->bias[k] : 0.0f;
        for (size_t q = 0; q < j->tb; q += WT) {
            for (int e = 0; e < NE; e++) m[e] = WV_LOAD(j->mo + (size_t)e * sm + k * j->tb + q);
            if (ONED) wino1_out(m, o);
            else wino_out(m, o);
            for (int e = 0; e < NO; e++) o[e] += b;
            if (j->act_tiles) nn_act_apply(j->act, (float *)o, (size_t)NO * WT);
            for (size_t l = 0; l < WT && j->t0 + q + l < j->tiles;) {
                const size_t t = j->t0 + q + l, lo = l % 8, half = l - lo;
                size_t n = wino_run_len(j, t, l);
                if (n > 8 - lo) n = 8 - lo;
                const int64_t y0 = (int64_t)(t / j->tw) * ROWS, x0 = (int64_t)(t % j->tw) * 4;
                const int64_t cols = OW - x0 < 4 * (int64_t)n ? OW - x0 : 4 * (int64_t)n;
                const int full = lo == 0 && cols == 32;
                for (int r = 0; r < ROWS && y0 + r < OH; r++) {
                    /* base[4 (i - lo) + s] = tile i's column s, for the run's tiles i in [lo, lo + n) */
                    float *base = yk + (y0 + r) * OW + x0;
                    const __m256 c0 = _mm256_loadu_ps((const float *)&o[r * 4] + half);
                    const __m256 c1 = _mm256_loadu_ps((const float *)&o[r * 4 + 1] + half);
                    const __m256 c2 = _mm256_loadu_ps((const float *)&o[r * 4 + 2] + half);
                    const __m256 c3 = _mm256_loadu_ps((const float *)&o[r * 4 + 3] + half);
                    const __m256d u0 = _mm256_castps_pd(_mm256_unpacklo_ps(c0, c1));
                    const __m256d u1 = _mm256_castps_pd(_mm256_unpackhi_ps(c0, c1));
                    const __m256d u2 = _mm256_castps_pd(_mm256_unpacklo_ps(c2, c3));
                    const __m256d u3 = _mm256_castps_pd(_mm256_unpackhi_ps(c2, c3));
                    const __m256 w0 = _mm256_castpd_ps(_mm256_unpacklo_pd(u0, u2));   /* tiles 0 | 4 */
                    const __m256 w1 = _mm256_castpd_ps(_mm256_unpackhi_pd(u0, u2));   /* 1 | 5 */
                    const __m256 w2 = _mm256_castpd_ps(_mm256_unpacklo_pd(u1, u3));   /* 2 | 6 */
                    const __m256 w3 = _mm256_castpd_ps(_mm256_unpackhi_pd(u1, u3));   /* 3 | 7 */
                    const __m256 out[4] = { _mm256_permute2f128_ps(w0, w1, 0x20), _mm256_permute2f128_ps(w2, w3, 0x20),
                                            _mm256_permute2f128_ps(w0, w1, 0x31), _mm256_permute2f128_ps(w2, w3, 0x31) };
                    for (int v = 0; v < 4; v++) {
                        /* base offset of out[v]'s lane 0: -4 when only its second tile is the run's */
                        const int64_t first = 8 * v - 4 * (int64_t)lo;
                        if (first + 8 <= 0 || first >= cols) continue;
                        if (full) {
                            _mm256_storeu_ps(base + first, out[v]);
                        } else if (first < 0) {
                            const __m128i keep = _mm_cmpgt_epi32(_mm_set1_epi32((int)cols), _mm_setr_epi32(0, 1, 2, 3));
                            _mm_maskstore_ps(base, keep, _mm256_extractf128_ps(out[v], 1));
                        } else {
                            const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cols - first)), iota);
                            _mm256_maskstore_ps(base + first, keep, out[v]);
                        }
                    }
                }
                l += n;
            }
        }
        /* the whole plane was just written (one block): activate it while it is in cache */
        if (j->act && !j->act_tiles && j->t0 == 0 && j->tb >= j->tiles) nn_act_apply(j->act, yk, (size_t)(OH * OW));
    }
}
__attribute__((target("avx2,fma"))) static void wino_out_avx2(void *arg, size_t begin, size_t end) {
    wino_out_avx2_body(arg, begin, end, 0);
}
__attribute__((target("avx2,fma"))) static void wino1w_out_avx2(void *arg, size_t begin, size_t end) {
    wino_out_avx2_body(arg, begin, end, 1);
}
__attribute__((target("avx2,fma"))) static void wino2_in_avx2(void *arg, size_t begin, size_t end) {
    wino_in_body(arg, begin, end, 2);
}
__attribute__((target("avx2,fma"))) static void wino2_out_avx2(void *arg, size_t begin, size_t end) {
    wino_out_body(arg, begin, end, 2);
}
__attribute__((target("avx2,fma"))) static void wino1h_in_avx2(void *arg, size_t begin, size_t end) {
    wino1_in_body(arg, begin, end);
}
__attribute__((target("avx2,fma"))) static void wino1h_out_avx2(void *arg, size_t begin, size_t end) {
    wino1_out_body(arg, begin, end);
}
/* The rows x 6 windows (rows: 6, or 1 for a 1x3 conv) of n tiles that lie side by side in one tile
 * row (lanes [l0, l0 + n) of d[6 * rows]),
 * the first one's top-left input pixel at (y0, x0), x0 > -16. Row r of the input holds all their
 * row-r windows at columns x0 + 4 l + s, so each d[r][s] is a stride-4 deinterleave of 66 floats:
 * two permutes of register pairs and a 256-bit shuffle, instead of 16 scalar inserts through the
 * stack (which read back as vectors stalled on store forwarding, and made the input transform
 * cost twice the gemms of a few-channel conv). Rows and columns outside the image read as zero
 * (masked loads, zeroed lanes), which is the padding. */
__attribute__((target("avx512f"))) static void wino_gather_run(const float *xc, int64_t H, int64_t W, int64_t y0,
                                                               int64_t x0, size_t l0, size_t n, int rows, wv *d,
                                                               const float *xpf) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i quad = _mm512_slli_epi32(lane, 2);                  /* 0, 4, ..., 60: lanes 0..7 used */
    const __m512i shift = _mm512_sub_epi32(lane, _mm512_set1_epi32((int)l0));   /* lane l <- l - l0 */
    const __mmask16 lanes = (__mmask16)(((1u << n) - 1u) << l0);
    /* a window hanging over the left edge (x0 = -p < 0): the row is loaded from column 0 and
     * moved up by p lanes, the p columns in front reading as zero */
    const int64_t p = x0 < 0 ? -x0 : 0, from = x0 + p;
    const int64_t avail = W - from, need = 4 * (int64_t)n + 2 - p;
    const int64_t cnt = avail < need ? avail : need;
    if (cnt <= 0) {   /* windows wholly right of the image (a wide right pad) */
        for (int e = 0; e < 6 * rows; e++) d[e] = (wv)_mm512_mask_mov_ps((__m512)d[e], lanes, _mm512_setzero_ps());
        return;
    }
    const __m512i up = _mm512_sub_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16)), _mm512_set1_epi32((int)p));
    for (int r = 0; r < rows; r++) {
        const int64_t y = y0 + r;
        if (y < 0 || y >= H) {   /* padding rows */
            for (int c = 0; c < 6; c++) d[r * 6 + c] = (wv)_mm512_mask_mov_ps((__m512)d[r * 6 + c], lanes, _mm512_setzero_ps());
            continue;
        }
        const float *row = xc + y * W + from;
        /* the same run of a channel a few planes on: its rows are short streams (a block's one
         * or two tile rows per plane) that the hardware prefetcher does not catch in time */
        if (xpf)
            for (int64_t i = 0; i < cnt; i += 16) _mm_prefetch((const char *)(xpf + y * W + from + i), _MM_HINT_T0);
        __m512 a[5], prev = _mm512_setzero_ps();
        for (int i = 0; i < 5; i++) {
            const int64_t left = cnt - 16 * i;
            const __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1u) : 0;
            const __m512 raw = m ? _mm512_maskz_loadu_ps(m, row + 16 * i) : _mm512_setzero_ps();
            a[i] = p ? _mm512_permutex2var_ps(prev, up, raw) : raw;
            prev = raw;
        }
        __m512 v[6];
        for (int c = 0; c < 4; c++) {
            const __m512i idx = _mm512_add_epi32(quad, _mm512_set1_epi32(c));
            const __m512 lo = _mm512_permutex2var_ps(a[0], idx, a[1]), hi = _mm512_permutex2var_ps(a[2], idx, a[3]);
            v[c] = _mm512_shuffle_f32x4(lo, hi, 0x44);
        }
        /* columns 4 l + 4 and 4 l + 5: the lanes of columns 0 and 1 moved down by one, the last
         * lane from the fifth vector (floats 64, 65) */
        const __m512i a4 = _mm512_castps_si512(a[4]);
        v[4] = _mm512_castsi512_ps(_mm512_alignr_epi32(a4, _mm512_castps_si512(v[0]), 1));
        v[5] = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_alignr_epi32(a4, a4, 1), _mm512_castps_si512(v[1]), 1));
        for (int c = 0; c < 6; c++) {
            const __m512 t = l0 ? _mm512_permutexvar_ps(shift, v[c]) : v[c];
            d[r * 6 + c] = (wv)_mm512_mask_mov_ps((__m512)d[r * 6 + c], lanes, t);
        }
    }
}

#define WINO_PF_PLANES 2
/* wino_in_body for 4x4 tiles (ONED: a 1x3 conv's 1x4 tiles, one input row each) with the vector
 * gather above for every run of tiles in one tile row (lanes past the last tile stay zero). */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
wino_in_avx512_body(const wino_job *j, size_t begin, size_t end, const int ONED) {
    const int64_t H = j->g->in[1], W = j->g->in[2], pt = j->g->pb[1], pl = j->g->pb[2];
    const int ROWS = ONED ? 1 : 6, NE = ONED ? 6 : 36;
    const size_t sv = wino_plane(j->C, j->tb);
    wv d[36], v[36];
    for (size_t c = begin; c < end; c++) {
        const float *xc = j->x + c * (size_t)(H * W);
        for (size_t q = 0; q < j->tb; q += WT) {
            /* every lane of a tile is written below; the lanes past the last tile must be zero */
            if (j->t0 + q + WT > j->tiles)
                for (int e = 0; e < NE; e++) d[e] = (wv)_mm512_setzero_ps();
            for (size_t l = 0; l < WT && j->t0 + q + l < j->tiles;) {
                const size_t t = j->t0 + q + l, tx = t % j->tw;
                const int64_t y0 = (int64_t)(t / j->tw) * (ONED ? 1 : 4) - pt, x0 = (int64_t)tx * 4 - pl;
                if (x0 < -15) {   /* a left pad wider than a vector: one tile, scalar */
                    for (int r = 0; r < ROWS; r++)
                        for (int s = 0; s < 6; s++) {
                            const int64_t yy = y0 + r, xx = x0 + s;
                            d[r * 6 + s][l] = yy >= 0 && yy < H && xx >= 0 && xx < W ? xc[yy * W + xx] : 0.0f;
                        }
                    l++;
                    continue;
                }
                const size_t n = wino_run_len(j, t, l);
                wino_gather_run(xc, H, W, y0, x0, l, n, ROWS, d,
                                c + WINO_PF_PLANES < end ? xc + WINO_PF_PLANES * (size_t)(H * W) : NULL);
                l += n;
            }
            if (ONED) wino1_in(d, v);
            else wino_in(d, v);
            for (int e = 0; e < NE; e++) WV_STORE(j->v + (size_t)e * sv + c * j->tb + q, v[e]);
        }
    }
}
__attribute__((target("avx512f"))) static void wino_in_avx512(void *arg, size_t begin, size_t end) {
    wino_in_avx512_body(arg, begin, end, 0);
}
__attribute__((target("avx512f"))) static void wino1w_in_avx512(void *arg, size_t begin, size_t end) {
    wino_in_avx512_body(arg, begin, end, 1);
}
/* wino_out_body for 4x4 tiles: each run of tiles side by side in one tile row stores its output
 * rows as whole vectors, 4 tiles (16 floats) at a time interleaved from the 4 column vectors of a
 * row by two permutes and a blend, instead of 16 scalar stores per vector read back through the
 * stack. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
wino_out_avx512_body(const wino_job *j, size_t begin, size_t end, const int ONED) {
    const int64_t OH = j->g->out[1], OW = j->g->out[2];
    const int NE = ONED ? 6 : 36, NO = ONED ? 4 : 16, ROWS = ONED ? 1 : 4;
    const size_t sm = wino_plane(j->M, j->tb);
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    /* output float i of a 4-tile vector: tile i / 4, column i % 4; columns 1 and 3 from the second
     * operand of their pair */
    const __m512i pick = _mm512_add_epi32(_mm512_srli_epi32(lane, 2),
                                          _mm512_slli_epi32(_mm512_and_si512(lane, _mm512_set1_epi32(1)), 4));
    wv m[36], o[16];
    for (size_t k = begin; k < end; k++) {
        float *yk = j->y + k * (size_t)(OH * OW);
        const float b = j->bias ? j->bias[k] : 0.0f;
        for (size_t q = 0; q < j->tb; q += WT) {
            for (int e = 0; e < NE; e++) m[e] = WV_LOAD(j->mo + (size_t)e * sm + k * j->tb + q);
            if (ONED) wino1_out(m, o);
            else wino_out(m, o);
            for (int e = 0; e < NO; e++) o[e] += b;
            if (j->act_tiles) nn_act_apply(j->act, (float *)o, (size_t)NO * WT);
            for (size_t l = 0; l < WT && j->t0 + q + l < j->tiles;) {
                const size_t t = j->t0 + q + l, tx = t % j->tw;
                const size_t n = wino_run_len(j, t, l);
                const int64_t y0 = (int64_t)(t / j->tw) * ROWS, x0 = (int64_t)tx * 4;
                const int64_t cols = OW - x0 < 4 * (int64_t)n ? OW - x0 : 4 * (int64_t)n;
                for (int r = 0; r < ROWS && y0 + r < OH; r++) {
                    float *dst = yk + (y0 + r) * OW + x0;
                    const __m512 c0 = (__m512)o[r * 4], c1 = (__m512)o[r * 4 + 1];
                    const __m512 c2 = (__m512)o[r * 4 + 2], c3 = (__m512)o[r * 4 + 3];
                    for (int64_t v = 0; 16 * v < cols; v++) {
                        const __m512i idx = _mm512_add_epi32(pick, _mm512_set1_epi32((int)(l + 4 * (size_t)v)));
                        const __m512 a = _mm512_permutex2var_ps(c0, idx, c1), bb = _mm512_permutex2var_ps(c2, idx, c3);
                        const __m512 out = _mm512_mask_blend_ps((__mmask16)0xCCCC, a, bb);
                        const int64_t left = cols - 16 * v;
                        const __mmask16 mk = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
                        _mm512_mask_storeu_ps(dst + 16 * v, mk, out);
                    }
                }
                l += n;
            }
        }
        /* the whole plane was just written (one block): activate it while it is in cache */
        if (j->act && !j->act_tiles && j->t0 == 0 && j->tb >= j->tiles) nn_act_apply(j->act, yk, (size_t)(OH * OW));
    }
}
__attribute__((target("avx512f"))) static void wino_out_avx512(void *arg, size_t begin, size_t end) {
    wino_out_avx512_body(arg, begin, end, 0);
}
__attribute__((target("avx512f"))) static void wino1w_out_avx512(void *arg, size_t begin, size_t end) {
    wino_out_avx512_body(arg, begin, end, 1);
}
__attribute__((target("avx512f"))) static void wino2_in_avx512(void *arg, size_t begin, size_t end) {
    wino_in_body(arg, begin, end, 2);
}
__attribute__((target("avx512f"))) static void wino2_out_avx512(void *arg, size_t begin, size_t end) {
    wino_out_body(arg, begin, end, 2);
}
__attribute__((target("avx512f"))) static void wino1h_in_avx512(void *arg, size_t begin, size_t end) {
    wino1_in_body(arg, begin, end);
}
__attribute__((target("avx512f"))) static void wino1h_out_avx512(void *arg, size_t begin, size_t end) {
    wino1_out_body(arg, begin, end);
}
#endif

/* The transforms each ISA level runs (filter, then input/output for F(4x4), F(2x2), and F(4) along
 * H and along W). */
typedef struct wino_kernels {
    void (*filter)(const float *w, size_t M, size_t C, int m, int axis, float *u);
    void (*in_f4)(void *, size_t, size_t), (*out_f4)(void *, size_t, size_t);
    void (*in_f2)(void *, size_t, size_t), (*out_f2)(void *, size_t, size_t);
    void (*in_h)(void *, size_t, size_t), (*out_h)(void *, size_t, size_t);
    void (*in_w)(void *, size_t, size_t), (*out_w)(void *, size_t, size_t);
} wino_kernels;
static const wino_kernels wino_generic = { wino_filter_generic, wino_in_generic,   wino_out_generic,
                                           wino2_in_generic,    wino2_out_generic, wino1_in_generic,
                                           wino1_out_generic,   wino1_in_generic,  wino1_out_generic };
#if defined(__x86_64__) || defined(__i386__)
static const wino_kernels wino_avx2 = { wino_filter_avx2, wino_in_avx2,    wino_out_avx2,   wino2_in_avx2,  wino2_out_avx2,
                                        wino1h_in_avx2,   wino1h_out_avx2, wino1w_in_avx2, wino1w_out_avx2 };
static const wino_kernels wino_avx512 = { wino_filter_avx512, wino_in_avx512,    wino_out_avx512,
                                          wino2_in_avx512,    wino2_out_avx512,  wino1h_in_avx512,
                                          wino1h_out_avx512,  wino1w_in_avx512, wino1w_out_avx512 };
#endif
static const wino_kernels *wino_isa(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (cort_cpu_isa() == CORT_ISA_AVX512) return &wino_avx512;
    if (cort_cpu_isa() == CORT_ISA_AVX2) return &wino_avx2;
#endif
    return &wino_generic;
}
static void wino_filter_isa(const float *w, size_t M, size_t C, int m, int axis, float *u) {
    wino_isa()->filter(w, M, C, m, axis, u);
}

/* Tile-parallel mode: each task takes whole blocks of tiles through the input transform, the
 * gemms and the output transform on one thread, in a scratch slot it claims for the duration (at
 * most `threads` tasks run at once, so a slot is always free; the job lives on the caller's
 * stack: no allocation per run). The phase-parallel mode hands every block from one phase to the
 * next across the cores: half of each 1 MB block crosses between them three times. */
#define WINO_MAX_SLOTS 64
typedef struct wino_tp_job {
    wino_job base;
    size_t blocks, bt;                /* blocks of bt tiles (the last one shorter) */
    size_t slot_floats;
    float *scratch;
    atomic_int busy[WINO_MAX_SLOTS];
    size_t slots;
    void (*in_fn)(void *, size_t, size_t), (*out_fn)(void *, size_t, size_t);
    size_t step;
    /* image-parallel mode: tasks are whole images (x0/y0 plus b times the image sizes), each taken
     * through all its blocks on one thread */
    int per_image;
    const float *x0; float *y0;
    size_t x_img, y_img;
    cort_kernel_ctx *ctx;             /* image-parallel mode: checked for cancellation per image */
} wino_tp_job;

static void wino_tiles_run(void *arg, size_t begin, size_t end) {
    wino_tp_job *tp = arg;
    const size_t slot = cort_slot_claim(tp->busy, tp->slots);
    wino_job j = tp->base;
    j.v = tp->scratch + slot * tp->slot_floats;
    j.mo = j.v + (size_t)j.w->ne * wino_plane(j.C, tp->bt);
    for (size_t b = begin; b < end; b++) {
        size_t t0 = b * tp->bt, t1 = t0 + tp->bt;
        if (tp->per_image) {
            if (tp->ctx && cort_kernel_cancelled(tp->ctx)) break;
            j.x = tp->x0 + b * tp->x_img;
            j.y = tp->y0 + b * tp->y_img;
            t0 = 0; t1 = j.tiles;
        }
        for (; t0 < t1 && t0 < j.tiles; t0 += tp->bt) {
            j.t0 = t0;
            j.tb = j.tiles - t0 < tp->bt ? (j.tiles - t0 + tp->step - 1) / tp->step * tp->step : tp->bt;
            tp->in_fn(&j, 0, j.C);
            wino_gemms(&j, 0, j.w->ne);
            tp->out_fn(&j, 0, j.M);
        }
    }
    cort_slot_release(tp->busy, slot);
}

cort_status *nn_wino_conv(cort_pool *pool, const nn_conv_shape *s, const float *x, const nn_wino_weights *w,
                          const float *bias, const nn_act *act, float *y, cort_kernel_ctx *ctx) {
    const nn_geom *g = &s->g;
    const size_t C = s->C, M = s->M, OH = (size_t)g->out[1], OW = (size_t)g->out[2];
    const size_t mt = (size_t)w->m, ne = w->ne;
    /* tile height and width in outputs: 1-D tiles are 4x1 (3x1 conv) or 1x4 (1x3 conv) */
    const size_t mh = w->axis == NN_WINO_W ? 1 : mt, mw = w->axis == NN_WINO_H ? 1 : mt;
    const size_t th = (OH + mh - 1) / mh, tw = (OW + mw - 1) / mw, tiles = th * tw, in_size = (size_t)(g->in[1] * g->in[2]);
    if (s->N == 0 || M == 0 || tiles == 0) return NULL;
    /* a block of tiles whose transformed input and products fit in about 1 MB per thread (wider
     * blocks keep the 36 gemms big enough to be split over the threads) */
    const size_t per_tile = ne * (C + M) * sizeof(float);
    const size_t threads = (size_t)cort_pool_threads(pool);
    /* tb: whole gemm panels, or with an edge-capable kernel whole vectors of WT tiles (a 14x14 map
     * has 16 tiles: gemms 32 wide computed twice the work) */
    const nn_gemm_kernel *gk = w->u[0].k;
    const size_t nr = gk->nr, step = gk->edge && nr % WT == 0 ? WT : nr % WT == 0 ? nr : nr * WT;
    size_t tb = ((size_t)1 << 20) * (threads < 8 ? threads : 8) / per_tile / step * step;
    if (tb < step) tb = step;
    const size_t tiles_up = (tiles + step - 1) / step * step;
    if (tb > tiles_up) tb = tiles_up;
    const wino_kernels *wk = wino_isa();
    void (*const in_fn)(void *, size_t, size_t) =
        w->axis == NN_WINO_H ? wk->in_h : w->axis == NN_WINO_W ? wk->in_w : mt == 2 ? wk->in_f2 : wk->in_f4;
    void (*const out_fn)(void *, size_t, size_t) =
        w->axis == NN_WINO_H ? wk->out_h : w->axis == NN_WINO_W ? wk->out_w : mt == 2 ? wk->out_f2 : wk->out_f4;
    cort_status *st = NULL;
    if (act && act->kind == CORT_ACT_NONE) act = NULL;
    /* tile-parallel when every thread gets at least two blocks of its own (about 1 MB each): in a
     * model, with the cores' caches and the link between them busy, handing blocks between phases
     * cost more than the imbalance of whole blocks (the same in isolation). Fewer tiles (14x14:
     * 16) keep the phases split over the threads. */
    size_t bt = tb / threads / step * step >= step ? tb / threads / step * step : step;
    size_t blocks = (tiles + bt - 1) / bt;
    if (threads > 1 && s->N == 1 && blocks < 2 * threads && tiles / (2 * threads) / step * step >= step) {
        /* few channels make 1 MB blocks hold most of the map (squeezenet's 16 -> 64 expand at 55x55: 196
         * tiles in blocks of 88, so the phases were split, and 2 threads ran slower than 1): two blocks
         * per thread of whole panels (or steps) instead. Not for batches: there the phases' split by
         * channels is the one the neighbouring layers use, and a batch-36 net lost 30 % with this. */
        const size_t q = nr % step == 0 && tiles / (2 * threads) >= nr ? nr : step;   /* whole panels if it can */
        bt = tiles / (2 * threads) / q * q;
        blocks = (tiles + bt - 1) / bt;
    }
    /* a batch of at least two images per thread: whole images per thread, so no block crosses
     * between the cores and, with the pool's fixed lanes, a thread reads the images it wrote in the
     * layer before (a batch-36 net's 1x3 and 3x1 convs, split by phases, ran 1.05-1.4x as fast at 2
     * threads as at 1). Blocks of about 2 MB: one block per image there, measured ahead of 1 MB. */
    const int per_image = threads > 1 && s->N >= 2 * threads;
    if (per_image) {
        bt = ((size_t)2 << 20) / per_tile / step * step;
        if (bt < step) bt = step;
        if (bt > tiles_up) bt = tiles_up;
        blocks = (tiles + bt - 1) / bt;
    }
    if (threads > 1 && threads <= WINO_MAX_SLOTS && (per_image || blocks >= 2 * threads)) {
        wino_tp_job tp;
        tp.blocks = blocks; tp.bt = bt; tp.slots = threads; tp.step = step;
        tp.per_image = per_image;
        tp.x0 = x; tp.y0 = y; tp.x_img = C * in_size; tp.y_img = M * OH * OW; tp.ctx = ctx;
        tp.slot_floats = ne * (wino_plane(C, bt) + wino_plane(M, bt));
        tp.in_fn = in_fn; tp.out_fn = out_fn;
        tp.scratch = cort_kernel_scratch(ctx, tp.slots * tp.slot_floats * sizeof(float));
        if (!tp.scratch) return cort_error_oom();
        for (size_t n = 0; n < (per_image ? 1 : s->N) && !st; n++) {
            const wino_job j = { g, C, M, tw, tiles, 0, bt, x + n * C * in_size, NULL, NULL, bias,
                                 y + n * M * OH * OW, w, act, act != NULL };
            tp.base = j;
            for (size_t q = 0; q < tp.slots; q++) atomic_init(&tp.busy[q], 0);
            cort_parallel_for(pool, per_image ? s->N : blocks, 1, wino_tiles_run, &tp);
            if (ctx && cort_kernel_cancelled(ctx)) st = cort_kernel_cancelled_status(ctx);
        }
        cort_kernel_scratch_free(ctx, tp.scratch);
        return st;
    }
    float *v = cort_kernel_scratch(ctx, ne * (wino_plane(C, tb) + wino_plane(M, tb)) * sizeof(float));
    if (!v) return cort_error_oom();
    float *mo = v + ne * wino_plane(C, tb);
    for (size_t n = 0; n < s->N && !st; n++) {
        wino_job j = { g, C, M, tw, tiles, 0, tb, x + n * C * in_size, v, mo, bias, y + n * M * OH * OW, w, act, 0 };
        for (size_t t0 = 0; t0 < tiles && !st; t0 += tb) {
            j.t0 = t0;
            /* the last block only as wide as its tiles need (56x56 at 2 threads: 196 tiles in
             * blocks of 96 left a third block of 4 tiles computing 96) */
            j.tb = tiles - t0 < tb ? (tiles - t0 + step - 1) / step * step : tb;
            cort_parallel_for(pool, C, 1, in_fn, &j);
            /* the 36 products are independent: one single-threaded gemm per task */
            cort_parallel_for(pool, ne, 1, wino_gemms, &j);
            if (ctx && cort_kernel_cancelled(ctx)) st = cort_kernel_cancelled_status(ctx);
            if (!st) cort_parallel_for(pool, M, 1, out_fn, &j);
        }
        if (!st && act && tb < tiles) {   /* several blocks: activate once all are written */
            wino_act_job a = { act, j.y, OH * OW };
            cort_parallel_for(pool, M, 1, wino_act_run, &a);
        }
    }
    cort_kernel_scratch_free(ctx, v);
    return st;
}
