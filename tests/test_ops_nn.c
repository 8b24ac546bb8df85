/* Optimized vs reference kernels of the 'nn' family: SGEMM (every micro-kernel this CPU runs, all
 * transpose/alpha/beta combinations, tails), Conv (groups, depthwise, strides, pads, dilations,
 * 1/2/3-D), ConvTranspose, and pooling. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "providers/cpu/nn_gemm.h"
#include "providers/cpu/nn_conv.h"
#include "providers/cpu/nn_pool.h"

static uint32_t rng_state = 12345;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static float *rand_buf(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = frand();
    return p;
}
static double max_rel_err(const float *a, const float *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / (1.0 + fabs((double)b[i]));
        if (!(d <= worst)) worst = d;   /* NaN counts as worst */
    }
    return worst;
}

static void test_gemm(cort_pool *pool) {
    const nn_gemm_kernel *const *kernels;
    size_t nk = nn_gemm_kernels(&kernels);
    CHECK(nk >= 1);
    static const size_t sizes[][3] = {
        {1, 1, 1}, {1, 7, 3}, {5, 1, 9}, {3, 5, 7}, {12, 32, 16}, {13, 33, 17}, {6, 16, 1}, {7, 17, 255},
        {24, 64, 256}, {25, 65, 257}, {100, 3, 40}, {3, 100, 600}, {64, 64, 64}, {97, 131, 300}, {1, 1000, 512},
        {200, 49, 512}, {31, 200, 8}, {1, 300, 70}, {1, 513, 1}, {1, 1, 300},
    };
    for (size_t ki = 0; ki <= nk; ki++)   /* ki == nk: NULL = automatic choice (incl. the M == 1 path) */
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int tr = 0; tr < 4; tr++) {
                size_t M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
                int ta = tr & 1, tb = tr >> 1;
                float alpha = (si % 3 == 0) ? 1.0f : 0.75f, beta = (float[]){0.0f, 1.0f, -0.5f}[(si + tr) % 3];
                size_t lda = (ta ? M : K) + (si & 1), ldb = (tb ? K : N) + (si % 3 == 1), ldc = N + (si & 2);
                float *A = rand_buf((ta ? K : M) * lda), *B = rand_buf((tb ? N : K) * ldb);
                float *C = rand_buf(M * ldc), *R = malloc(M * ldc * sizeof(float));
                memcpy(R, C, M * ldc * sizeof(float));
                nn_gemm_b b = nn_gemm_b_matrix(B, ldb, tb);
                const nn_gemm_kernel *kern = ki < nk ? kernels[ki] : NULL;
                float *bias = (si + tr) % 4 == 3 ? rand_buf(M) : NULL;
                CHECK_OK(nn_sgemm_bias((si & 1) ? pool : NULL, kern, M, N, K, alpha, A, lda, ta, &b, beta, bias, C,
                                       ldc));
                nn_sgemm_ref(M, N, K, alpha, A, lda, ta, &b, beta, R, ldc);
                for (size_t i = 0; i < M && bias; i++)
                    for (size_t q = 0; q < N; q++) R[i * ldc + q] += bias[i];
                free(bias);
                double err = max_rel_err(C, R, M * ldc);
                CHECK_MSG(err < 1e-4, "gemm %s M=%zu N=%zu K=%zu ta=%d tb=%d: err %g", kern ? kern->name : "auto", M, N, K, ta,
                          tb, err);
                free(A); free(B); free(C); free(R);
            }
}

typedef struct conv_case {
    int nd;
    size_t N, C, M, group;
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
} conv_case;

static int make_geom(const conv_case *c, int transpose, nn_conv_shape *s) {
    memset(s, 0, sizeof *s);
    s->N = c->N; s->C = c->C; s->M = c->M; s->group = c->group;
    nn_geom *g = &s->g;
    g->nd = c->nd;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->k[i] = g->s[i] = g->d[i] = 1; g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < c->nd; i++) {
        int j = 3 - c->nd + i;
        g->in[j] = c->in[i]; g->k[j] = c->k[i]; g->s[j] = c->s[i]; g->d[j] = c->d[i];
        g->pb[j] = c->pb[i]; g->pe[j] = c->pe[i];
        int64_t ext = c->d[i] * (c->k[i] - 1) + 1;
        if (!transpose) {
            int64_t span = c->in[i] + c->pb[i] + c->pe[i] - ext;
            if (span < 0) return 0;
            g->out[j] = span / c->s[i] + 1;
        } else {
            g->out[j] = c->s[i] * (c->in[i] - 1) + ext - c->pb[i] - c->pe[i];
            if (g->out[j] <= 0) return 0;
        }
    }
    return 1;
}

static void test_conv(cort_pool *pool) {
    static const conv_case cases[] = {
        {2, 1, 3, 8, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 4, 6, 2, {9, 8}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}},
        {2, 1, 16, 16, 16, {10, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},   /* depthwise */
        {2, 2, 8, 16, 8, {9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}},       /* depthwise x2 */
        {2, 1, 8, 8, 8, {12, 12}, {5, 5}, {2, 3}, {2, 1}, {2, 4}, {3, 1}},      /* depthwise odd */
        {2, 1, 4, 4, 4, {5, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},       /* depthwise, wide rows */
        {2, 1, 4, 8, 4, {6, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},       /* depthwise stride 2 */
        {2, 1, 3, 3, 3, {6, 77}, {3, 5}, {1, 3}, {1, 2}, {2, 3}, {0, 5}},       /* depthwise stride 3 */
        {1, 2, 5, 5, 5, {100}, {7}, {2}, {1}, {3}, {3}},                        /* depthwise 1-D */
        {2, 1, 32, 24, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},      /* pointwise */
        {2, 3, 13, 29, 1, {5, 6}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},      /* strided 1x1 */
        {1, 2, 5, 7, 1, {20}, {4}, {3}, {2}, {3}, {1}},
        {1, 1, 6, 6, 3, {15}, {3}, {1}, {1}, {1}, {1}},
        {3, 1, 4, 5, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {1, 1, 0}},
        {3, 2, 6, 6, 6, {4, 5, 6}, {2, 3, 3}, {2, 1, 1}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}},
        {2, 1, 64, 70, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 3, 17, 1, {33, 31}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
        {2, 2, 12, 18, 3, {8, 8}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},
    };
    const nn_gemm_kernel *const *kernels;
    size_t nk = nn_gemm_kernels(&kernels);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int transpose = 0; transpose < 2; transpose++)
            for (size_t ki = 0; ki < nk; ki++)
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    const conv_case *c = &cases[ci];
                    nn_conv_shape s;
                    if (!make_geom(c, transpose, &s)) continue;
                    size_t in = (size_t)nn_geom_in_size(&s.g), out = (size_t)nn_geom_out_size(&s.g);
                    size_t ks = (size_t)nn_geom_k_size(&s.g);
                    size_t xn = s.N * s.C * in, yn = s.N * s.M * out;
                    size_t wn = transpose ? s.C * (s.M / s.group) * ks : s.M * (s.C / s.group) * ks;
                    float *x = rand_buf(xn), *w = rand_buf(wn), *b = with_bias ? rand_buf(s.M) : NULL;
                    float *y = malloc(yn * sizeof(float)), *r = malloc(yn * sizeof(float));
                    for (size_t i = 0; i < yn; i++) y[i] = NAN;
                    if (!transpose) {
                        CHECK_OK(nn_conv_f32(ki ? NULL : pool, kernels[ki], &s, x, w, b, y));
                        nn_conv_f32_ref(&s, x, w, b, r);
                    } else {
                        CHECK_OK(nn_convtranspose_f32(ki ? NULL : pool, kernels[ki], &s, x, w, b, y));
                        nn_convtranspose_f32_ref(&s, x, w, b, r);
                    }
                    double err = max_rel_err(y, r, yn);
                    CHECK_MSG(err < 1e-4, "%s case %zu kernel %s bias %d: err %g", transpose ? "convT" : "conv", ci,
                              kernels[ki]->name, with_bias, err);
                    free(x); free(w); free(b); free(y); free(r);
                }
}

static void test_pool(cort_pool *pool) {
    static const conv_case cases[] = {
        {2, 1, 3, 3, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        {2, 2, 4, 4, 1, {9, 8}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}},
        {1, 2, 5, 5, 1, {20}, {4}, {3}, {2}, {3}, {1}},
        {3, 1, 4, 4, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {1, 1, 0}},
        {2, 1, 2, 2, 1, {12, 13}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int kind = 0; kind < NN_POOL_KINDS; kind++)
            for (int flag = 0; flag < 2; flag++) {
                const conv_case *c = &cases[ci];
                nn_conv_shape s;
                if (!make_geom(c, 0, &s)) continue;
                if (kind != NN_POOL_MAX) for (int i = 0; i < 3; i++) s.g.d[i] = 1;
                /* recompute outputs for the undilated window */
                if (kind != NN_POOL_MAX) {
                    conv_case cc = *c;
                    for (int i = 0; i < 3; i++) cc.d[i] = 1;
                    make_geom(&cc, 0, &s);
                }
                size_t planes = s.N * s.C, in = (size_t)nn_geom_in_size(&s.g), out = (size_t)nn_geom_out_size(&s.g);
                float *x = rand_buf(planes * in), *y = malloc(planes * out * sizeof(float));
                float *r = malloc(planes * out * sizeof(float));
                int64_t *iy = malloc(planes * out * sizeof(int64_t)), *ir = malloc(planes * out * sizeof(int64_t));
                nn_pool_params pp = { kind, flag, 3.0f, flag };
                nn_pool_f32(pool, &pp, &s.g, planes, x, y, kind == NN_POOL_MAX ? iy : NULL);
                nn_pool_f32_ref(&pp, &s.g, planes, x, r, kind == NN_POOL_MAX ? ir : NULL);
                double err = max_rel_err(y, r, planes * out);
                CHECK_MSG(err < 1e-5, "pool case %zu kind %d flag %d: err %g", ci, kind, flag, err);
                if (kind == NN_POOL_MAX)
                    CHECK_MSG(!memcmp(iy, ir, planes * out * sizeof(int64_t)), "pool indices case %zu", ci);
                free(x); free(y); free(r); free(iy); free(ir);
            }
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    test_gemm(pool);
    test_conv(pool);
    test_pool(pool);
    cort_pool_free(pool);
    return tu_finish();
}
