/* Sigmoid / SiLU epilogue math (act_ukernels.h) against double precision: a dense sweep of
 * [-100, 100], random float bit patterns in that range, and the special values (+-0, +-inf, NaN,
 * denormals), for every entry point this CPU runs (nn_act_apply, AVX-512, AVX2, odd lengths so the
 * vector tails are covered too). Bounds: sigmoid relative error <= 1e-6 where the exact result
 * is a normal float (absolute <= 2e-38 below that); silu |error| <= 2e-7 * |x| + 1e-38, and relative
 * error <= 1e-6 where the exact silu is a normal float. */
#include <math.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "providers/cpu/ops/nn/nn_common.h"
#include "core/cpu_features.h"

enum { N = 200003 };

static uint32_t rng = 99991;
static uint32_t next_u32(void) {
    rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
    return rng;
}

static size_t fill_inputs(float *x) {
    size_t n = 0;
    const float specials[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f,
                               FLT_MAX, -FLT_MAX, 1e-7f, -1e-7f, 87.0f, -87.0f, -87.01f, -86.99f, 88.72f, -88.72f,
                               -89.0f, 89.0f, 103.0f, -103.0f, 0.5f, -0.5f, 0.34657359f, -0.34657359f };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) x[n++] = specials[i];
    const size_t dense = 120000;
    for (size_t i = 0; i < dense; i++) x[n++] = -100.0f + 200.0f * (float)i / (float)(dense - 1);
    while (n < N) {   /* random bit patterns with |x| <= 100: every exponent gets covered */
        uint32_t b = next_u32();
        float f;
        memcpy(&f, &b, sizeof f);
        if (f == f && fabsf(f) <= 100.0f) x[n++] = f;
    }
    return n;
}

typedef struct worst { double sig_rel, silu_abs_over_x, silu_rel; float sig_x, silu_x, silu_rx; int bad_special; } worst;

static void check_one(int kind, float xf, float yf, worst *w) {
    const double x = xf, y = yf;
    if (isnan(xf)) {
        if (!isnan(yf)) { w->bad_special++; fprintf(stderr, "bad %g -> %g\n", x, y); }
        return;
    }
    if (isinf(xf)) {
        double want = kind == CORT_ACT_SIGMOID ? (xf > 0 ? 1.0 : 0.0) : (xf > 0 ? INFINITY : 0.0);
        if (!(y == want)) { w->bad_special++; fprintf(stderr, "bad %g -> %g\n", x, y); }
        return;
    }
    const double s = 1.0 / (1.0 + exp(-x));
    if (kind == CORT_ACT_SIGMOID) {
        if (!(yf >= 0.0f && yf <= 1.0f)) { w->bad_special++; fprintf(stderr, "bad %g -> %g\n", x, y); return; }
        double err = s >= FLT_MIN ? fabs(y - s) / s : (fabs(y - s) <= 2e-38 ? 0.0 : 1.0);
        if (!(err <= w->sig_rel)) { w->sig_rel = err; w->sig_x = xf; }
    } else {
        const double want = x * s;
        if (xf == 0.0f && !(yf == 0.0f && signbit(yf) == signbit(xf))) w->bad_special++;
        double err = fabs(y - want) - 1e-38;
        err = err <= 0 ? 0.0 : fabs(x) > 0 ? err / fabs(x) : 1.0;
        if (!(err <= w->silu_abs_over_x)) { w->silu_abs_over_x = err; w->silu_x = xf; }
        if (fabs(want) >= FLT_MIN) {   /* also relative to the result where it is a normal float */
            const double rel = fabs(y - want) / fabs(want);
            if (!(rel <= w->silu_rel)) { w->silu_rel = rel; w->silu_rx = xf; }
        }
    }
}

typedef void (*act_fn)(int kind, float *y, size_t n);
static void via_apply(int kind, float *y, size_t n) {
    nn_act a = { kind, 0.0f, 0.0f };
    nn_act_apply(&a, y, n);
}
#ifdef NN_HAVE_X86_UKERNELS
static void via_avx512(int kind, float *y, size_t n) { nn_act_avx512(kind, 0.0f, 0.0f, y, n); }
static void via_avx2_all(int kind, float *y, size_t n) { nn_act_all_avx2(kind, 0.0f, 0.0f, y, n); }

/* The piecewise-linear kinds of a level's act_all against their definitions, through every tail
 * length: ReLU, Clip and LeakyReLU exact, HardSigmoid and HardSwish within 2 ulp-ish of double. */
typedef void (*act_all_fn)(int kind, float lo, float hi, float *y, size_t n);
static void check_act_all_cheap(const char *name, act_all_fn fn) {
    enum { M = 1003 };
    static float x[M], y[M];
    for (size_t i = 0; i < M; i++) x[i] = -9.0f + 18.0f * (float)i / (float)(M - 1);
    x[0] = -0.0f;
    x[1] = 0.0f;
    static const struct { int kind; float lo, hi; } cases[] = {
        { CORT_ACT_RELU, 0.0f, 0.0f }, { CORT_ACT_CLIP, -1.5f, 2.25f }, { CORT_ACT_LEAKY_RELU, 0.1f, 0.0f },
        { CORT_ACT_HARD_SIGMOID, 0.2f, 0.5f }, { CORT_ACT_HARD_SWISH, 0.0f, 0.0f } };
    static const size_t lens[] = { M, 1, 7, 8, 15, 17, 33 };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            memcpy(y, x, sizeof y);
            for (size_t i = 0; i < M; i += lens[l]) fn(cases[c].kind, cases[c].lo, cases[c].hi, y + i, M - i < lens[l] ? M - i : lens[l]);
            int bad = 0;
            for (size_t i = 0; i < M; i++) {
                const float v = x[i], lo = cases[c].lo, hi = cases[c].hi;
                double want;
                switch (cases[c].kind) {
                case CORT_ACT_RELU: want = v > 0.0f ? v : 0.0f; break;
                case CORT_ACT_CLIP: want = v < lo ? lo : v > hi ? hi : v; break;
                case CORT_ACT_LEAKY_RELU: want = v >= 0.0f ? v : v * lo; break;
                case CORT_ACT_HARD_SIGMOID: want = fmin(1.0, fmax(0.0, (double)lo * v + hi)); break;
                default: want = v * fmin(1.0, fmax(0.0, (double)v / 6.0 + 0.5)); break;
                }
                const int exact = cases[c].kind <= CORT_ACT_LEAKY_RELU;
                if (exact ? (float)want != y[i] || (want == 0.0 && !signbit(want) != !signbit(y[i]))
                          : fabs(y[i] - want) > 2.4e-7 * (fabs(want) + fabs((double)v)))
                    bad++;
            }
            CHECK_MSG(bad == 0, "%s act_all kind %d, pieces of %zu: %d values wrong", name, cases[c].kind, lens[l], bad);
        }
}
#endif

static void run_entry(const char *name, act_fn fn, const float *x, float *y, size_t n) {
    const int kinds[2] = { CORT_ACT_SIGMOID, CORT_ACT_SILU };
    for (int k = 0; k < 2; k++) {
        worst w = { 0, 0, 0, 0, 0, 0, 0 };
        /* several lengths so each element is also seen through the masked / scalar tails */
        const size_t chunks[] = { n, 1, 7, 15, 17, 31, 33 };
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            const size_t len = chunks[c];
            memcpy(y, x, n * sizeof(float));
            for (size_t i = 0; i < n; i += len) fn(kinds[k], y + i, n - i < len ? n - i : len);
            for (size_t i = 0; i < n; i++) check_one(kinds[k], x[i], y[i], &w);
        }
        if (kinds[k] == CORT_ACT_SIGMOID) {
            CHECK_MSG(w.sig_rel <= 1e-6, "%s sigmoid rel err %g at x=%.9g", name, w.sig_rel, (double)w.sig_x);
            printf("%s sigmoid: max rel err %.3g (x=%.9g)\n", name, w.sig_rel, (double)w.sig_x);
        } else {
            CHECK_MSG(w.silu_abs_over_x <= 2e-7, "%s silu err/|x| %g at x=%.9g", name, w.silu_abs_over_x,
                      (double)w.silu_x);
            CHECK_MSG(w.silu_rel <= 1e-6, "%s silu rel err %g at x=%.9g", name, w.silu_rel, (double)w.silu_rx);
            printf("%s silu: max err/|x| %.3g (x=%.9g), max rel err %.3g (x=%.9g)\n", name, w.silu_abs_over_x,
                   (double)w.silu_x, w.silu_rel, (double)w.silu_rx);
        }
        CHECK_MSG(w.bad_special == 0, "%s kind %d: %d special values wrong", name, kinds[k], w.bad_special);
    }
}

#ifdef NN_HAVE_X86_UKERNELS
/* The softmax row kernel: y = exp(x - m) for x <= m and their sum, against double math: every
 * float step in [-120, 0] (a dense grid), then special values, through the masked tail lengths. */
typedef float (*exp_shift_sum_fn)(const float *x, float *y, size_t n, float m);
static void check_exp_shift_sum(const char *name, exp_shift_sum_fn fn) {
    enum { G = 1 << 20 };
    float *x = malloc(G * sizeof(float)), *y = malloc(G * sizeof(float));
    if (!x || !y) { free(x); free(y); CHECK(0); return; }
    for (size_t i = 0; i < G; i++) x[i] = -120.0f * (float)i / (float)(G - 1) + 3.0f;   /* m = 3 */
    double worst = 0, wx = 0, sum = 0;
    int bad_small = 0;
    const float s = fn(x, y, G, 3.0f);
    for (size_t i = 0; i < G; i++) {
        const double want = exp((double)x[i] - 3.0);
        sum += want;
        if (want >= FLT_MIN) {
            const double rel = fabs((double)y[i] - want) / want;
            if (!(rel <= worst)) { worst = rel; wx = x[i]; }
        } else if (!(y[i] >= 0.0f && y[i] <= 2.0f * FLT_MIN)) {
            bad_small++;
        }
    }
    printf("%s exp_shift_sum: max rel err %.3g (x - m = %.9g), sum rel err %.3g\n", name, worst, wx - 3.0,
           fabs(s - sum) / sum);
    CHECK_MSG(worst <= 2.5e-7, "%s exp_shift_sum rel err %g at x - m = %g", name, worst, wx - 3.0);
    /* float lane sums over 2^20 terms */
    CHECK_MSG(fabs(s - sum) / sum <= 1e-4, "%s exp_shift_sum sum %g, expected %g", name, (double)s, sum);
    CHECK_MSG(bad_small == 0, "%s exp_shift_sum: %d results below FLT_MIN out of [0, 2 FLT_MIN]", name, bad_small);
    /* -inf gives 0, NaN stays NaN, 0 gives 1; every tail length */
    for (size_t len = 1; len <= 35; len++) {
        for (size_t i = 0; i < len; i++) x[i] = i % 3 == 0 ? -INFINITY : i % 3 == 1 ? 0.0f : NAN;
        const float t = fn(x, y, len, 0.0f);
        int ok = 1;
        for (size_t i = 0; i < len; i++)
            ok &= i % 3 == 0 ? y[i] == 0.0f : i % 3 == 1 ? y[i] == 1.0f : isnan(y[i]);
        const int sum_ok = len == 1 ? t == 0.0f : len == 2 ? t == 1.0f : isnan(t);   /* NaN from the third on */
        CHECK_MSG(ok && sum_ok, "%s exp_shift_sum special values, length %zu (sum %g)", name, len, (double)t);
    }
    free(x);
    free(y);
}
#endif

int main(void) {
#ifdef NN_HAVE_X86_UKERNELS
    if (nn_isa()->exp_shift_sum == nn_exp_shift_sum_avx512) check_exp_shift_sum("avx512", nn_exp_shift_sum_avx512);
    /* the AVX2 kernel whenever the CPU has AVX2, so the avx512 lane covers it too */
    {
        cort_isa_level lv[8];
        const int nl = cort_cpu_levels(lv, 8);
        for (int i = 0; i < nl && i < 8; i++)
            if (lv[i] == CORT_ISA_AVX2) check_exp_shift_sum("avx2", nn_exp_shift_sum_avx2);
    }
#endif
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    if (!x || !y) return 1;
    const size_t n = fill_inputs(x);
    run_entry("nn_act_apply", via_apply, x, y, n);
#ifdef NN_HAVE_X86_UKERNELS
    /* the kernels of the level in use (CORT_ISA selects it; the per-ISA lanes run every level) */
    if (nn_isa()->act_all == nn_act_avx512) {
        run_entry("avx512", via_avx512, x, y, n);
        check_act_all_cheap("avx512", nn_act_avx512);
    }
    if (nn_isa()->act_all == nn_act_all_avx2) {
        run_entry("avx2 act_all", via_avx2_all, x, y, n);
        check_act_all_cheap("avx2", nn_act_all_avx2);
    }
    if (nn_isa()->act_sigmoid_silu == nn_act_avx2) run_entry("avx2", nn_act_avx2, x, y, n);
#endif
    free(x);
    free(y);
    return tu_finish();
}
