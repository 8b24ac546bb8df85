/* The pooling fast paths (fused AVX-512 rows, padded MaxPool borders, the row-buffer path for wide
 * windows and strides > 2, row-split threading) against nn_pool_f32_ref over random 1-D/2-D shapes,
 * including NaN inputs for MaxPool (a window's first valid value wins if NaN, a later NaN never),
 * and the 8-bit MaxPool against the same reference. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/threadpool.h"
#include "providers/cpu/ops/nn/pool.h"
#include "providers/cpu/kernels/pool_ukernels.h"
#include "core/cpu_features.h"

static uint32_t rng = 7u;
static uint32_t urand(uint32_t n) {
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) % n;
}
static float frand(void) { return (float)urand(65536) / 32768.0f - 1.0f; }

/* 2-D (or 1-D when h == 1 and nd == 1) geometry in the 3-D normalized form nn_geom uses. */
static int make_geom(int nd, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pt,
                     int64_t pl, int64_t pb, int64_t pr, nn_geom *g) {
    memset(g, 0, sizeof *g);
    g->nd = nd;
    for (int i = 0; i < 3; i++) { g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1; }
    g->in[1] = h; g->in[2] = w; g->k[1] = kh; g->k[2] = kw; g->s[1] = sh; g->s[2] = sw;
    g->pb[1] = pt; g->pb[2] = pl; g->pe[1] = pb; g->pe[2] = pr;
    int64_t sph = h + pt + pb - kh, spw = w + pl + pr - kw;
    if (sph < 0 || spw < 0) return 0;
    g->out[1] = sph / sh + 1;
    g->out[2] = spw / sw + 1;
    return 1;
}

static int same_float(float a, float b) { return (isnan(a) && isnan(b)) || a == b; }

static void check_case(cort_pool *pool, const nn_geom *g, size_t planes, int kind, int cip, int with_nan,
                       const char *what) {
    size_t in = (size_t)nn_geom_in_size(g), out = (size_t)nn_geom_out_size(g);
    float *x = malloc(planes * in * sizeof(float) + 1), *y = malloc(planes * out * sizeof(float) + 1);
    float *r = malloc(planes * out * sizeof(float) + 1);
    for (size_t i = 0; i < planes * in; i++) x[i] = with_nan && urand(16) == 0 ? NAN : frand();
    for (size_t i = 0; i < planes * out; i++) y[i] = 12345.0f;
    nn_pool_params pp = { kind, cip, 2.0f, 0 };
    nn_pool_f32(pool, &pp, g, planes, x, y, NULL);
    nn_pool_f32_ref(&pp, g, planes, x, r, NULL);
    size_t bad = (size_t)-1;
    if (kind == NN_POOL_MAX) {   /* a max is exact */
        for (size_t i = 0; i < planes * out && bad == (size_t)-1; i++) if (!same_float(y[i], r[i])) bad = i;
    } else {   /* averages and Lp norms sum in another order than the reference */
        size_t at = 0;
        if (!(tu_close_err(y, r, planes * out, TU_TOL(1e-5, 1e-5, 0), &at) <= 1)) bad = at;
    }
    CHECK_MSG(bad == (size_t)-1,
              "%s kind %d cip %d nan %d: in %lldx%lld k %lldx%lld s %lldx%lld pads %lld,%lld,%lld,%lld planes %zu: "
              "y[%zu] = %g, ref %g", what, kind, cip, with_nan, (long long)g->in[1], (long long)g->in[2],
              (long long)g->k[1], (long long)g->k[2], (long long)g->s[1], (long long)g->s[2], (long long)g->pb[1],
              (long long)g->pb[2], (long long)g->pe[1], (long long)g->pe[2], planes,
              bad == (size_t)-1 ? (size_t)0 : bad, bad == (size_t)-1 ? 0.0 : (double)y[bad],
              bad == (size_t)-1 ? 0.0 : (double)r[bad]);
    free(x); free(y); free(r);
}

/* Model shapes and the edges of the fused kernel (k = 17/18, stride 3, pads up to >= k, rows of
 * 1..48 columns around the 16-lane blocks, rows wider than the row buffer). */
static void test_fixed(cort_pool *pool) {
    static const int64_t cases[][10] = {
        /* h, w, kh, kw, sh, sw, pt, pl, pb, pr */
        {111, 111, 3, 3, 2, 2, 0, 0, 1, 1}, {55, 55, 3, 3, 2, 2, 0, 0, 1, 1}, {27, 27, 3, 3, 2, 2, 0, 0, 1, 1},
        {112, 112, 3, 3, 2, 2, 1, 1, 1, 1}, {56, 56, 3, 3, 1, 1, 1, 1, 1, 1}, {56, 56, 2, 2, 2, 2, 0, 0, 0, 0},
        {3, 40, 3, 1, 3, 1, 0, 0, 0, 0},    {20, 20, 5, 5, 1, 1, 2, 2, 2, 2}, {13, 13, 13, 13, 1, 1, 6, 6, 6, 6},
        {9, 40, 17, 17, 1, 1, 8, 8, 8, 8},  {9, 40, 17, 17, 2, 2, 8, 15, 8, 15}, {9, 40, 18, 18, 1, 2, 3, 3, 3, 3},
        {7, 70, 3, 4, 3, 3, 1, 1, 1, 2},    {5, 33, 2, 2, 1, 1, 1, 1, 1, 1},  {5, 33, 3, 3, 2, 2, 3, 3, 3, 3},
        {4, 2100, 3, 3, 2, 2, 1, 1, 1, 1},  {4, 2100, 3, 20, 1, 1, 0, 9, 0, 9}, {4, 2100, 2, 5, 2, 4, 0, 2, 1, 2},
        {6, 1, 3, 1, 1, 1, 1, 0, 1, 0},     {1, 1, 1, 1, 1, 1, 0, 0, 0, 0},   {2, 2, 2, 2, 1, 1, 1, 1, 1, 1},
        {8, 16, 3, 3, 2, 2, 0, 15, 0, 0},   {8, 16, 16, 16, 1, 1, 15, 15, 15, 15},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t *c = cases[ci];
        nn_geom g;
        if (!make_geom(2, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], &g)) continue;
        for (int kind = 0; kind < 2; kind++)
            for (int v = 0; v < 2; v++) {
                check_case(pool, &g, 3, kind, v, 0, "fixed");
                if (kind == NN_POOL_MAX) check_case(v ? pool : NULL, &g, 2, kind, 0, 1, "fixed");
            }
    }
}

static void test_random(cort_pool *pool) {
    for (int t = 0; t < 1500; t++) {
        int nd = urand(4) == 0 ? 1 : 2;
        int64_t h = nd == 1 ? 1 : 1 + urand(24), w = 1 + urand(t % 10 == 0 ? 300 : 60);
        int64_t kh = nd == 1 ? 1 : 1 + urand(5), kw = 1 + urand(t % 7 == 0 ? 20 : 6);
        int64_t sh = nd == 1 ? 1 : 1 + urand(3), sw = 1 + urand(3);
        int64_t pt = nd == 1 ? 0 : urand((uint32_t)kh + 1), pl = urand((uint32_t)kw + 1);
        int64_t pb = nd == 1 ? 0 : urand((uint32_t)kh + 1), pr = urand((uint32_t)kw + 1);
        nn_geom g;
        if (!make_geom(nd, h, w, kh, kw, sh, sw, pt, pl, pb, pr, &g)) continue;
        size_t planes = 1 + urand(5);
        int kind = (int)urand(2), cip = (int)urand(2), with_nan = kind == NN_POOL_MAX && urand(3) == 0;
        check_case(urand(2) ? pool : NULL, &g, planes, kind, cip, with_nan, "random");
    }
}

/* Batches of few planes split output rows over the threads; the work estimate must be big enough. */
static void test_row_split(cort_pool *pool) {
    nn_geom g;
    if (make_geom(2, 200, 300, 3, 3, 2, 2, 1, 1, 1, 1, &g)) {
        check_case(pool, &g, 1, NN_POOL_MAX, 0, 0, "rows");
        check_case(pool, &g, 3, NN_POOL_AVG, 1, 0, "rows");
        check_case(pool, &g, 2, NN_POOL_MAX, 0, 1, "rows");
    }
    if (make_geom(2, 5, 700, 3, 3, 1, 1, 1, 1, 1, 1, &g)) check_case(pool, &g, 1, NN_POOL_AVG, 0, 0, "rows");
}

#ifdef NN_HAVE_X86_UKERNELS
/* The AVX2 kernels called directly whenever the CPU has AVX2, so they are covered when the level
 * under test is avx512 too: row reductions, window steps (max exact, avg in the reference's
 * order, hence also exact) and the global sum/max with NaN anywhere. */
static void test_avx2_direct(void) {
    cort_isa_level lv[8];
    const int n = cort_cpu_levels(lv, 8);
    int has = 0;
    for (int i = 0; i < n && i < 8; i++) has |= lv[i] == CORT_ISA_AVX2;
    if (!has) return;
    enum { CAP = 600 };
    float x[4 * CAP], buf[CAP], ref[CAP], y[CAP], r[CAP];
    for (int t = 0; t < 400; t++) {
        const size_t width = 1 + urand(t % 5 == 0 ? CAP : 70), nrows = 1 + urand(4);
        for (size_t i = 0; i < 4 * CAP; i++) x[i] = urand(9) == 0 ? -INFINITY : frand();
        for (int is_max = 0; is_max < 2; is_max++) {
            if (is_max) nn_pool_rows_max_avx2(x, CAP, nrows, width, buf);
            else nn_pool_rows_sum_avx2(x, CAP, nrows, width, buf);
            for (size_t i = 0; i < width; i++) {
                float a = is_max ? -INFINITY : x[i];
                for (size_t q = is_max ? 0 : 1; q < nrows; q++)
                    a = is_max ? (x[q * CAP + i] > a ? x[q * CAP + i] : a) : a + x[q * CAP + i];
                ref[i] = a;
            }
            size_t at = 0;
            CHECK_MSG(tu_max_ulp(buf, ref, width, &at) == 0, "avx2 rows %s width %zu rows %zu at %zu",
                      is_max ? "max" : "sum", width, nrows, at);
            const size_t k = 1 + urand(6), sw = 1 + urand(3);
            if (k > width) continue;
            const size_t count = (width - k) / sw + 1;
            const float scale = 1.0f / (float)k;
            if (is_max) nn_pool_window_max_avx2(buf, k, sw, count, y);
            else nn_pool_window_avg_avx2(buf, k, sw, count, scale, y);
            for (size_t o = 0; o < count; o++) {
                float a = buf[o * sw];
                for (size_t kw = 1; kw < k; kw++) {
                    const float v = buf[o * sw + kw];
                    a = is_max ? (v > a ? v : a) : a + v;
                }
                r[o] = is_max ? a : a * scale;
            }
            CHECK_MSG(tu_max_ulp(y, r, count, &at) == 0, "avx2 window %s k %zu s %zu count %zu at %zu",
                      is_max ? "max" : "avg", k, sw, count, at);
        }
        /* stride-2 max windows of 2 columns over 1-4 rows, NaN anywhere: the window's first value
         * decides NaN */
        {
            const size_t count = width / 2;
            for (size_t i = 0; i < 4 * CAP; i++) if (urand(11) == 0) x[i] = NAN;
            nn_pool_max_k2s2_avx2(x, CAP, nrows, count, y);
            size_t bad = 0;
            for (size_t o = 0; o < count; o++) {
                float a = x[2 * o];
                for (size_t q = 0; q < nrows; q++)
                    for (size_t c = 0; c < 2; c++) a = x[q * CAP + 2 * o + c] > a ? x[q * CAP + 2 * o + c] : a;
                bad += !same_float(y[o], a);
            }
            CHECK_MSG(bad == 0, "avx2 2-wide stride-2 max, %zu rows, %zu outputs: %zu differ", nrows, count, bad);
            /* 3 columns: the last dozen counts of the row (or all; 1..7 take the scalar loop, longer
             * rows whole vectors and an overlapping last one), the windows reading column 2 count
             * at most */
            const size_t count3 = (width - 1) / 2;
            for (size_t c3 = count3 > 24 ? count3 - 12 : 1; c3 <= count3; c3++) {
                for (size_t o = 0; o <= c3; o++) y[o] = 12345.0f;
                /* +inf just past the windows: a kernel that used it would return it */
                float saved[4];
                for (size_t q = 0; q < nrows; q++) { saved[q] = x[q * CAP + 2 * c3 + 1]; x[q * CAP + 2 * c3 + 1] = INFINITY; }
                nn_pool_max_k3s2_avx2(x, CAP, nrows, c3, y);
                for (size_t q = 0; q < nrows; q++) x[q * CAP + 2 * c3 + 1] = saved[q];
                bad = 0;
                for (size_t o = 0; o < c3; o++) {
                    float a = x[2 * o];
                    for (size_t q = 0; q < nrows; q++)
                        for (size_t c = 0; c < 3; c++) a = x[q * CAP + 2 * o + c] > a ? x[q * CAP + 2 * o + c] : a;
                    bad += !same_float(y[o], a);
                }
                CHECK_MSG(bad == 0 && y[c3] == 12345.0f,
                          "avx2 3-wide stride-2 max, %zu rows, %zu outputs: %zu differ, y[count] %g", nrows, c3, bad,
                          (double)y[c3]);
            }
            for (size_t i = 0; i < 4 * CAP; i++) if (isnan(x[i])) x[i] = frand();
        }
        /* global pools: NaN first gives NaN, a later NaN is ignored */
        if (t % 3 == 1) x[urand((uint32_t)width)] = NAN;
        if (t % 7 == 2) x[0] = NAN;
        float best = x[0];
        double mag = 0.0;
        for (size_t i = 0; i < width; i++) {
            best = x[i] > best ? x[i] : best;
            if (isfinite(x[i])) mag += fabs(x[i]);
        }
        const float got = nn_pool_max_avx2(x, width);
        CHECK_MSG(same_float(got, best), "avx2 global max n %zu: %g, want %g", width, (double)got, (double)best);
        for (size_t i = 0; i < width; i++) if (!isfinite(x[i])) x[i] = 0.25f;
        const float s = nn_pool_sum_avx2(x, width);
        double want = 0.0;
        for (size_t i = 0; i < width; i++) want += x[i];
        CHECK_MSG(fabs(s - want) <= 1e-6 * (mag + 1.0) * 4, "avx2 global sum n %zu: %g, want %g", width, (double)s, want);
    }
}
#endif


/* The 8-bit MaxPool against the float reference on the bytes' values: uint8 and int8, random 1-D/2-D
 * shapes with pads, strides and dilations, windows wholly in the padding (the type's minimum, as
 * the float path's -FLT_MAX saturates). Negative control: int8 data pooled as uint8 must differ. */
static void test_max8(cort_pool *pool) {
    size_t ctl = 0, ctl_runs = 0;
    for (int t = 0; t < 600; t++) {
        const int nd = urand(4) == 0 ? 1 : 2;
        const int64_t h = nd == 1 ? 1 : 1 + urand(20), w = 1 + urand(t % 9 == 0 ? 200 : 40);
        const int64_t kh = nd == 1 ? 1 : 1 + urand(4), kw = 1 + urand(5);
        const int64_t sh = nd == 1 ? 1 : 1 + urand(3), sw = 1 + urand(3);
        const int64_t dh = nd == 1 ? 1 : 1 + urand(2), dw = 1 + urand(2);
        const int64_t pt = nd == 1 ? 0 : urand((uint32_t)kh + 1), pl = urand((uint32_t)kw + 1);
        const int64_t pb = nd == 1 ? 0 : urand((uint32_t)kh + 1), pr = urand((uint32_t)kw + 1);
        nn_geom g;
        if (!make_geom(nd, h, w, kh, kw, sh, sw, pt, pl, pb, pr, &g)) continue;
        g.d[1] = dh; g.d[2] = dw;
        const int64_t eh = h + pt + pb - (kh - 1) * dh - 1, ew = w + pl + pr - (kw - 1) * dw - 1;
        if (eh < 0 || ew < 0) continue;
        g.out[1] = eh / sh + 1 + (t % 3 == 0 && eh % sh ? 1 : 0);   /* ceil_mode now and then */
        g.out[2] = ew / sw + 1 + (t % 3 == 0 && ew % sw ? 1 : 0);
        const size_t planes = 1 + urand(4), in = (size_t)nn_geom_in_size(&g), out = (size_t)nn_geom_out_size(&g);
        uint8_t *x = malloc(planes * in), *y = malloc(planes * out + 8);
        float *xf = malloc(planes * in * sizeof(float)), *r = malloc(planes * out * sizeof(float));
        if (!x || !y || !xf || !r) { CHECK_MSG(0, "out of memory"); free(x); free(y); free(xf); free(r); return; }
        for (int sg = 0; sg < 2; sg++) {
            for (size_t i = 0; i < planes * in; i++) {
                x[i] = (uint8_t)urand(256);
                xf[i] = sg ? (float)(int8_t)x[i] : (float)x[i];
            }
            memset(y, 0xA5, planes * out + 8);
            CHECK(nn_pool_max8(urand(2) ? pool : NULL, &g, planes, sg, x, y));
            const nn_pool_params pp = { NN_POOL_MAX, 0, 2.0f, 0 };
            nn_pool_f32_ref(&pp, &g, planes, xf, r, NULL);
            size_t bad = 0;
            for (size_t i = 0; i < planes * out; i++) {
                const float lo = sg ? -128.0f : 0.0f, v = r[i] < lo ? lo : r[i];
                const uint8_t want = sg ? (uint8_t)(int8_t)v : (uint8_t)v;
                bad += y[i] != want;
            }
            for (size_t i = planes * out; i < planes * out + 8; i++) bad += y[i] != 0xA5;
            CHECK_MSG(bad == 0, "max8 signed %d: in %lldx%lld k %lldx%lld s %lldx%lld d %lldx%lld: %zu wrong", sg,
                      (long long)h, (long long)w, (long long)kh, (long long)kw, (long long)sh, (long long)sw,
                      (long long)dh, (long long)dw, bad);
            if (sg && out >= 4) {
                uint8_t *yc = malloc(planes * out);
                if (yc && nn_pool_max8(NULL, &g, planes, 0, x, yc)) {
                    ctl_runs++;
                    ctl += memcmp(yc, y, planes * out) != 0;
                }
                free(yc);
            }
        }
        free(x); free(y); free(xf); free(r);
    }
    CHECK_MSG(ctl_runs > 0 && ctl > ctl_runs / 2, "max8 negative control: signedness ignored unnoticed (%zu of %zu)",
              ctl, ctl_runs);
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(2, &pool));
    test_fixed(pool);
    test_random(pool);
    test_row_split(pool);
    test_max8(pool);
#ifdef NN_HAVE_X86_UKERNELS
    test_avx2_direct();
#endif
    cort_pool_free(pool);
    return tu_finish();
}
