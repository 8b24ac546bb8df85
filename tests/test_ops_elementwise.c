/* Elementwise family: SIMD kernels of every ISA level this CPU runs against the portable build
 * and against libm, the broadcast iterator (serial and parallel, chunks starting mid-row) against
 * naive indexing, and one-node models for semantics the backend tests do not cover (legacy
 * broadcast/axis, Clip attributes, exact integer Pow, Python-style Mod, division by zero, numpy
 * float formatting in Cast, strings in Where/Equal, broadcast errors). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/threadpool.h"
#include "providers/cpu/ops/math/elementwise.h"

/* CHECK that can be used as a condition */
static int echeck(int cond, int line, const char *expr) {
    if (cond) tu_passed++;
    else { tu_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, line, expr); }
    return cond;
}
#define ECHECK(c) echeck(!!(c), __LINE__, #c)

static uint32_t rng_state = 987654321u;
static float frand(float lo, float hi) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(rng_state >> 8) / 16777216.0f;
}

/* ---- SIMD kernels ---- */

static int same_bits_or_both_nan(float a, float b) {
    if (a != a && b != b) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_simd_binary(void) {
    const ew_f32_kernels *ref = ew_f32_level(0);
    CHECK(ref != NULL);
    enum { N = 203 };
    float a[N], b[N], o1[N], o2[N];
    for (int i = 0; i < N; i++) { a[i] = frand(-100, 100); b[i] = frand(-100, 100); }
    a[3] = NAN; b[5] = NAN; a[7] = INFINITY; b[8] = -INFINITY; b[9] = 0.0f; a[10] = -0.0f; b[10] = 0.0f;
    for (int level = 0; level <= 2; level++) {
        const ew_f32_kernels *k = ew_f32_level(level);
        if (!k) continue;
        for (int op = 0; op < EW_FB_COUNT; op++)
            for (int mode = 0; mode < 3; mode++)
                for (size_t n = 0; n <= N; n += (n < 40 ? 1 : 37)) {
                    k->bin[op][mode](n, o1, a, b);
                    int bad = 0;
                    for (size_t i = 0; i < n && !bad; i++) {
                        float x = mode == EW_SV ? a[0] : a[i], y = mode == EW_VS ? b[0] : b[i], r;
                        ref->bin[op][EW_VV](1, &r, &x, &y);
                        bad = !same_bits_or_both_nan(o1[i], r);
                        if (op == EW_FB_ADD) bad |= !same_bits_or_both_nan(o1[i], x + y);
                        if (op == EW_FB_DIV) bad |= !same_bits_or_both_nan(o1[i], x / y);
                        if (op == EW_FB_MAX && (x != x || y != y)) bad |= o1[i] == o1[i];   /* NaN propagates */
                    }
                    CHECK_MSG(!bad, "%s op %d mode %d n %zu", k->name, op, mode, n);
                }
        /* in place (Sum/Max accumulate into their output) */
        memcpy(o2, a, sizeof a);
        k->bin[EW_FB_ADD][EW_VV](N, o2, o2, b);
        ref->bin[EW_FB_ADD][EW_VV](N, o1, a, b);
        CHECK(memcmp(o1, o2, sizeof o1) == 0);
    }
}

/* libm reference of the transcendental kernels, in double */
static double ref_un(int op, double x) {
    switch (op) {
    case EW_FU_EXP: return exp(x);
    case EW_FU_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case EW_FU_TANH: return tanh(x);
    case EW_FU_ERF: return erf(x);
    default: return 0;
    }
}

static void test_simd_unary(void) {
    const ew_f32_kernels *ref = ew_f32_level(0);
    enum { N = 4099 };
    static float x[N], o[N], r[N];
    for (int i = 0; i < N; i++) x[i] = frand(-12, 12);
    for (int i = 0; i < 200; i++) x[i] = frand(-0.01f, 0.01f);        /* small: relative accuracy */
    for (int i = 200; i < 260; i++) x[i] = frand(-110, 95);           /* exp over/underflow */
    x[300] = NAN; x[301] = INFINITY; x[302] = -INFINITY; x[303] = 0.0f; x[304] = -0.0f; x[305] = 1e-30f;
    x[306] = 88.7f; x[307] = -87.5f; x[308] = -100.0f; x[309] = 0.625f; x[310] = -0.624f; x[311] = 4.5f;
    static const int exact_ops[] = { EW_FU_RELU, EW_FU_LEAKY, EW_FU_CLIP, EW_FU_NEG, EW_FU_ABS };
    static const int approx_ops[] = { EW_FU_EXP, EW_FU_SIGMOID, EW_FU_TANH, EW_FU_ERF, EW_FU_HARDSIGMOID,
                                      EW_FU_HARDSWISH };
    for (int level = 0; level <= 2; level++) {
        const ew_f32_kernels *k = ew_f32_level(level);
        if (!k) continue;
        for (size_t e = 0; e < sizeof exact_ops / sizeof exact_ops[0]; e++) {
            int op = exact_ops[e];
            k->un[op](N, o, x, -0.25f, 3.0f);
            ref->un[op](N, r, x, -0.25f, 3.0f);
            int bad = 0;
            for (int i = 0; i < N; i++) bad += !same_bits_or_both_nan(o[i], r[i]);
            CHECK_MSG(!bad, "%s exact op %d: %d mismatches", k->name, op, bad);
        }
        for (size_t e = 0; e < sizeof approx_ops / sizeof approx_ops[0]; e++) {
            int op = approx_ops[e];
            float pa = op == EW_FU_HARDSWISH ? 1.0f / 6 : 0.2f, pb = 0.5f;
            for (size_t n = 1; n <= 40; n += 13) {   /* tails */
                k->un[op](n, o, x + 1000, pa, pb);
                ref->un[op](n, r, x + 1000, pa, pb);
                for (size_t i = 0; i < n; i++) CHECK(fabsf(o[i] - r[i]) <= 1e-6f * (1 + fabsf(r[i])));
            }
            k->un[op](N, o, x, pa, pb);
            double worst = 0;
            int worst_i = 0, nan_bad = 0;
            for (int i = 0; i < N; i++) {
                double xi = x[i], want;
                int hard = op == EW_FU_HARDSIGMOID || op == EW_FU_HARDSWISH;
                if (hard && xi != xi) continue;   /* NaN: unspecified by ONNX */
                if (op == EW_FU_HARDSIGMOID) want = fmax(0, fmin(1, (double)pa * xi + pb));
                else if (op == EW_FU_HARDSWISH) want = xi * fmax(0, fmin(1, xi / 6 + 0.5));
                else want = ref_un(op, xi);
                if (want != want) { nan_bad += o[i] == o[i]; continue; }
                if (isinf(want)) { nan_bad += o[i] != (float)want; continue; }
                /* piecewise-linear ops: float rounding of alpha*x+beta, so absolute near zero */
                double err = fabs(o[i] - want) / (fabs(want) + (hard ? 1.0 : 1e-37));
                if (fabs(o[i] - want) < 1e-37) err = 0;    /* subnormal results: absolute */
                if (err > worst) { worst = err; worst_i = i; }
            }
            CHECK_MSG(worst < 5e-6, "%s op %d: rel err %g at x=%g", k->name, op, worst, (double)x[worst_i]);
            CHECK_MSG(nan_bad == 0, "%s op %d: %d NaN/inf mismatches", k->name, op, nan_bad);
        }
    }
}

/* ---- broadcast iterator ---- */

/* row function writing, for each output element, the (1-based) linear indices of its inputs */
static int index_row(const ew_params *P, size_t n, void *out, const void *const *in, const ptrdiff_t *s) {
    int64_t *o = out;
    const int64_t *a = in[0], *b = in[1];
    for (size_t i = 0; i < n; i++) o[i] = a[(ptrdiff_t)i * s[0]] * 100000 + b[(ptrdiff_t)i * s[1]];
    return 0;
}

static void test_plan(cort_pool *pool) {
    static const struct { size_t ra; int64_t a[4]; size_t rb; int64_t b[4]; } cases[] = {
        {4, {2, 3, 4, 5}, 4, {2, 3, 4, 5}}, {4, {2, 3, 4, 5}, 1, {5}}, {4, {2, 3, 4, 5}, 3, {3, 1, 1}},
        {3, {7, 1, 9}, 3, {1, 11, 1}}, {2, {1, 1}, 0, {0}}, {0, {0}, 3, {3, 1, 4}}, {4, {1, 3, 1, 5}, 4, {2, 1, 4, 1}},
        {3, {5, 1, 3}, 2, {1, 3}}, {2, {13, 1}, 2, {1, 17}}, {3, {2, 0, 3}, 1, {3}}, {1, {1}, 1, {1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int par = 0; par < 2; par++) {
            const int64_t *dims[2] = { cases[c].a, cases[c].b };
            size_t ranks[2] = { cases[c].ra, cases[c].rb };
            int64_t od[CORT_MAX_RANK];
            size_t orank = 0;
            cort_node node;
            memset(&node, 0, sizeof node);
            node.name = "n"; node.op_type = "Test"; node.domain = "";
            cort_status *st = ew_broadcast_shape(&node, 2, dims, ranks, NULL, od, &orank);
            if (!CHECK_OK(st)) continue;
            size_t na = 1, nb = 1, no = 1;
            for (size_t d = 0; d < ranks[0]; d++) na *= (size_t)dims[0][d];
            for (size_t d = 0; d < ranks[1]; d++) nb *= (size_t)dims[1][d];
            for (size_t d = 0; d < orank; d++) no *= (size_t)od[d];
            int64_t *A = malloc((na + 1) * 8), *B = malloc((nb + 1) * 8), *O = calloc(no + 1, 8);
            for (size_t i = 0; i < na; i++) A[i] = (int64_t)i + 1;
            for (size_t i = 0; i < nb; i++) B[i] = (int64_t)i + 1;
            ew_plan p;
            ew_plan_init(&p, od, orank, 2, dims, ranks);
            CHECK(p.count == no);
            cort_kernel_ctx ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.node = &node;
            ctx.pool = par ? pool : NULL;
            const void *data[2] = { A, B };
            size_t esz[2] = { 8, 8 };
            ew_params prm;
            memset(&prm, 0, sizeof prm);
            CHECK_OK(ew_plan_run(&ctx, &p, data, esz, O, 8, index_row, &prm, par ? 3 : 0));
            /* naive multi-index walk */
            int bad = 0;
            for (size_t i = 0; i < no; i++) {
                size_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
                for (size_t d = orank; d-- > 0;) {
                    size_t id = rem % (size_t)od[d];
                    rem /= (size_t)od[d];
                    size_t offa = orank - ranks[0], offb = orank - ranks[1];
                    if (d >= offa) { size_t dd = (size_t)dims[0][d - offa]; ia += (dd == 1 ? 0 : id) * sa; sa *= dd; }
                    if (d >= offb) { size_t dd = (size_t)dims[1][d - offb]; ib += (dd == 1 ? 0 : id) * sb; sb *= dd; }
                }
                bad += O[i] != A[ia] * 100000 + B[ib];
            }
            CHECK_MSG(!bad, "plan case %zu parallel %d: %d wrong", c, par, bad);
            free(A); free(B); free(O);
        }
    /* incompatible shapes name the input */
    cort_node node;
    memset(&node, 0, sizeof node);
    node.name = "n"; node.op_type = "Test"; node.domain = "";
    int64_t a[2] = { 2, 3 }, b[1] = { 4 }, od[CORT_MAX_RANK];
    const int64_t *dims[2] = { a, b };
    size_t ranks[2] = { 2, 1 }, orank;
    CHECK_ERR(ew_broadcast_shape(&node, 2, dims, ranks, NULL, od, &orank), CORT_ERROR_INVALID_ARGUMENT, "input 1");
}

/* ---- one-node models through the public API ---- */
/* generated by a onnx.helper script: one-node models */
static const unsigned char model_add_legacy[] = {
    8, 7, 58, 150, 1, 10, 57, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 10, 97, 100, 100, 95, 108, 101,
    103, 97, 99, 121, 34, 3, 65, 100, 100, 42, 11, 10, 4, 97, 120, 105, 115, 24, 1, 160, 1, 2, 42, 16,
    10, 9, 98, 114, 111, 97, 100, 99, 97, 115, 116, 24, 1, 160, 1, 2, 18, 10, 97, 100, 100, 95, 108, 101,
    103, 97, 99, 121, 90, 27, 10, 1, 97, 18, 22, 10, 20, 8, 1, 18, 16, 10, 2, 8, 2, 10, 2, 8,
    3, 10, 2, 8, 4, 10, 2, 8, 5, 90, 19, 10, 1, 98, 18, 14, 10, 12, 8, 1, 18, 8, 10, 2,
    8, 3, 10, 2, 8, 4, 98, 27, 10, 1, 121, 18, 22, 10, 20, 8, 1, 18, 16, 10, 2, 8, 2, 10,
    2, 8, 3, 10, 2, 8, 4, 10, 2, 8, 5, 66, 4, 10, 0, 16, 6,
};
static const unsigned char model_clip_legacy[] = {
    8, 7, 58, 104, 10, 55, 10, 1, 120, 18, 1, 121, 26, 11, 99, 108, 105, 112, 95, 108, 101, 103, 97, 99,
    121, 34, 4, 67, 108, 105, 112, 42, 13, 10, 3, 109, 97, 120, 21, 0, 0, 0, 63, 160, 1, 1, 42, 13,
    10, 3, 109, 105, 110, 21, 0, 0, 0, 191, 160, 1, 1, 18, 11, 99, 108, 105, 112, 95, 108, 101, 103, 97,
    99, 121, 90, 15, 10, 1, 120, 18, 10, 10, 8, 8, 1, 18, 4, 10, 2, 8, 5, 98, 15, 10, 1, 121,
    18, 10, 10, 8, 8, 1, 18, 4, 10, 2, 8, 5, 66, 4, 10, 0, 16, 6,
};
static const unsigned char model_pow_i64[] = {
    8, 8, 58, 85, 10, 23, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 112, 111, 119, 95, 105, 54, 52,
    34, 3, 80, 111, 119, 18, 7, 112, 111, 119, 95, 105, 54, 52, 90, 15, 10, 1, 97, 18, 10, 10, 8, 8,
    7, 18, 4, 10, 2, 8, 5, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 7, 18, 4, 10, 2, 8, 5,
    98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 7, 18, 4, 10, 2, 8, 5, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_pow_f_i64[] = {
    8, 8, 58, 89, 10, 25, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 9, 112, 111, 119, 95, 102, 95, 105,
    54, 52, 34, 3, 80, 111, 119, 18, 9, 112, 111, 119, 95, 102, 95, 105, 54, 52, 90, 15, 10, 1, 97, 18,
    10, 10, 8, 8, 1, 18, 4, 10, 2, 8, 3, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 7, 18, 4,
    10, 2, 8, 3, 98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 1, 18, 4, 10, 2, 8, 3, 66, 4, 10,
    0, 16, 17,
};
static const unsigned char model_mod_i32[] = {
    8, 8, 58, 85, 10, 23, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 109, 111, 100, 95, 105, 51, 50,
    34, 3, 77, 111, 100, 18, 7, 109, 111, 100, 95, 105, 51, 50, 90, 15, 10, 1, 97, 18, 10, 10, 8, 8,
    6, 18, 4, 10, 2, 8, 6, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 6, 18, 4, 10, 2, 8, 6,
    98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 6, 18, 4, 10, 2, 8, 6, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_div_i32[] = {
    8, 8, 58, 85, 10, 23, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 100, 105, 118, 95, 105, 51, 50,
    34, 3, 68, 105, 118, 18, 7, 100, 105, 118, 95, 105, 51, 50, 90, 15, 10, 1, 97, 18, 10, 10, 8, 8,
    6, 18, 4, 10, 2, 8, 4, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 6, 18, 4, 10, 2, 8, 4,
    98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 6, 18, 4, 10, 2, 8, 4, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_sum_i8[] = {
    8, 8, 58, 115, 10, 25, 10, 1, 97, 10, 1, 98, 10, 1, 99, 18, 1, 121, 26, 6, 115, 117, 109, 95,
    105, 56, 34, 3, 83, 117, 109, 18, 6, 115, 117, 109, 95, 105, 56, 90, 19, 10, 1, 97, 18, 14, 10, 12,
    8, 3, 18, 8, 10, 2, 8, 2, 10, 2, 8, 3, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 3, 18,
    4, 10, 2, 8, 3, 90, 19, 10, 1, 99, 18, 14, 10, 12, 8, 3, 18, 8, 10, 2, 8, 2, 10, 2,
    8, 1, 98, 19, 10, 1, 121, 18, 14, 10, 12, 8, 3, 18, 8, 10, 2, 8, 2, 10, 2, 8, 3, 66,
    4, 10, 0, 16, 17,
};
static const unsigned char model_max_u64[] = {
    8, 8, 58, 85, 10, 23, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 109, 97, 120, 95, 117, 54, 52,
    34, 3, 77, 97, 120, 18, 7, 109, 97, 120, 95, 117, 54, 52, 90, 15, 10, 1, 97, 18, 10, 10, 8, 8,
    13, 18, 4, 10, 2, 8, 3, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 13, 18, 4, 10, 2, 8, 1,
    98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 13, 18, 4, 10, 2, 8, 3, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_mean_u16[] = {
    8, 8, 58, 108, 10, 28, 10, 1, 97, 10, 1, 98, 10, 1, 99, 18, 1, 121, 26, 8, 109, 101, 97, 110,
    95, 117, 49, 54, 34, 4, 77, 101, 97, 110, 18, 8, 109, 101, 97, 110, 95, 117, 49, 54, 90, 15, 10, 1,
    97, 18, 10, 10, 8, 8, 4, 18, 4, 10, 2, 8, 2, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 4,
    18, 4, 10, 2, 8, 2, 90, 15, 10, 1, 99, 18, 10, 10, 8, 8, 4, 18, 4, 10, 2, 8, 2, 98,
    15, 10, 1, 121, 18, 10, 10, 8, 8, 4, 18, 4, 10, 2, 8, 2, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_cast_d2s[] = {
    8, 8, 58, 79, 10, 33, 10, 1, 120, 18, 1, 121, 26, 8, 99, 97, 115, 116, 95, 100, 50, 115, 34, 4,
    67, 97, 115, 116, 42, 9, 10, 2, 116, 111, 24, 8, 160, 1, 2, 18, 8, 99, 97, 115, 116, 95, 100, 50,
    115, 90, 15, 10, 1, 120, 18, 10, 10, 8, 8, 11, 18, 4, 10, 2, 8, 8, 98, 15, 10, 1, 121, 18,
    10, 10, 8, 8, 8, 18, 4, 10, 2, 8, 8, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_cast_s2i[] = {
    8, 8, 58, 79, 10, 33, 10, 1, 120, 18, 1, 121, 26, 8, 99, 97, 115, 116, 95, 115, 50, 105, 34, 4,
    67, 97, 115, 116, 42, 9, 10, 2, 116, 111, 24, 6, 160, 1, 2, 18, 8, 99, 97, 115, 116, 95, 115, 50,
    105, 90, 15, 10, 1, 120, 18, 10, 10, 8, 8, 8, 18, 4, 10, 2, 8, 4, 98, 15, 10, 1, 121, 18,
    10, 10, 8, 8, 6, 18, 4, 10, 2, 8, 4, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_cast_f2i8[] = {
    8, 8, 58, 81, 10, 34, 10, 1, 120, 18, 1, 121, 26, 9, 99, 97, 115, 116, 95, 102, 50, 105, 56, 34,
    4, 67, 97, 115, 116, 42, 9, 10, 2, 116, 111, 24, 3, 160, 1, 2, 18, 9, 99, 97, 115, 116, 95, 102,
    50, 105, 56, 90, 15, 10, 1, 120, 18, 10, 10, 8, 8, 1, 18, 4, 10, 2, 8, 5, 98, 15, 10, 1,
    121, 18, 10, 10, 8, 8, 3, 18, 4, 10, 2, 8, 5, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_where_s[] = {
    8, 8, 58, 119, 10, 28, 10, 1, 99, 10, 1, 120, 10, 1, 121, 18, 1, 122, 26, 7, 119, 104, 101, 114,
    101, 95, 115, 34, 5, 87, 104, 101, 114, 101, 18, 7, 119, 104, 101, 114, 101, 95, 115, 90, 19, 10, 1, 99,
    18, 14, 10, 12, 8, 9, 18, 8, 10, 2, 8, 2, 10, 2, 8, 2, 90, 15, 10, 1, 120, 18, 10, 10,
    8, 8, 8, 18, 4, 10, 2, 8, 2, 90, 19, 10, 1, 121, 18, 14, 10, 12, 8, 8, 18, 8, 10, 2,
    8, 2, 10, 2, 8, 1, 98, 19, 10, 1, 122, 18, 14, 10, 12, 8, 8, 18, 8, 10, 2, 8, 2, 10,
    2, 8, 2, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_equal_s[] = {
    8, 8, 58, 83, 10, 25, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 101, 113, 117, 97, 108, 95, 115,
    34, 5, 69, 113, 117, 97, 108, 18, 7, 101, 113, 117, 97, 108, 95, 115, 90, 15, 10, 1, 97, 18, 10, 10,
    8, 8, 8, 18, 4, 10, 2, 8, 3, 90, 11, 10, 1, 98, 18, 6, 10, 4, 8, 8, 18, 0, 98, 15,
    10, 1, 121, 18, 10, 10, 8, 8, 9, 18, 4, 10, 2, 8, 3, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_add_big[] = {
    8, 8, 58, 112, 10, 23, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 97, 100, 100, 95, 98, 105, 103,
    34, 3, 65, 100, 100, 18, 7, 97, 100, 100, 95, 98, 105, 103, 90, 24, 10, 1, 97, 18, 19, 10, 17, 8,
    1, 18, 13, 10, 2, 8, 64, 10, 2, 8, 1, 10, 3, 8, 128, 1, 90, 24, 10, 1, 98, 18, 19, 10,
    17, 8, 1, 18, 13, 10, 2, 8, 1, 10, 2, 8, 100, 10, 3, 8, 128, 1, 98, 24, 10, 1, 121, 18,
    19, 10, 17, 8, 1, 18, 13, 10, 2, 8, 64, 10, 2, 8, 100, 10, 3, 8, 128, 1, 66, 4, 10, 0,
    16, 17,
};
static const unsigned char model_mul_bad[] = {
    8, 8, 58, 83, 10, 23, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 7, 109, 117, 108, 95, 98, 97, 100,
    34, 3, 77, 117, 108, 18, 7, 109, 117, 108, 95, 98, 97, 100, 90, 15, 10, 1, 97, 18, 10, 10, 8, 8,
    1, 18, 4, 10, 2, 8, 3, 90, 15, 10, 1, 98, 18, 10, 10, 8, 8, 1, 18, 4, 10, 2, 8, 4,
    98, 13, 10, 1, 121, 18, 8, 10, 6, 8, 1, 18, 2, 10, 0, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_bitshift_u64[] = {
    8, 8, 58, 122, 10, 55, 10, 1, 97, 10, 1, 98, 18, 1, 121, 26, 12, 98, 105, 116, 115, 104, 105, 102,
    116, 95, 117, 54, 52, 34, 8, 66, 105, 116, 83, 104, 105, 102, 116, 42, 20, 10, 9, 100, 105, 114, 101, 99,
    116, 105, 111, 110, 34, 4, 76, 69, 70, 84, 160, 1, 3, 18, 12, 98, 105, 116, 115, 104, 105, 102, 116, 95,
    117, 54, 52, 90, 15, 10, 1, 97, 18, 10, 10, 8, 8, 13, 18, 4, 10, 2, 8, 3, 90, 15, 10, 1,
    98, 18, 10, 10, 8, 8, 13, 18, 4, 10, 2, 8, 3, 98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 13,
    18, 4, 10, 2, 8, 3, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_exp_f[] = {
    8, 8, 58, 63, 10, 18, 10, 1, 120, 18, 1, 121, 26, 5, 101, 120, 112, 95, 102, 34, 3, 69, 120, 112,
    18, 5, 101, 120, 112, 95, 102, 90, 16, 10, 1, 120, 18, 11, 10, 9, 8, 1, 18, 5, 10, 3, 8, 232,
    7, 98, 16, 10, 1, 121, 18, 11, 10, 9, 8, 1, 18, 5, 10, 3, 8, 232, 7, 66, 4, 10, 0, 16,
    17,
};
static const unsigned char model_sigmoid_f[] = {
    8, 8, 58, 75, 10, 26, 10, 1, 120, 18, 1, 121, 26, 9, 115, 105, 103, 109, 111, 105, 100, 95, 102, 34,
    7, 83, 105, 103, 109, 111, 105, 100, 18, 9, 115, 105, 103, 109, 111, 105, 100, 95, 102, 90, 16, 10, 1, 120,
    18, 11, 10, 9, 8, 1, 18, 5, 10, 3, 8, 232, 7, 98, 16, 10, 1, 121, 18, 11, 10, 9, 8, 1,
    18, 5, 10, 3, 8, 232, 7, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_tanh_f[] = {
    8, 8, 58, 66, 10, 20, 10, 1, 120, 18, 1, 121, 26, 6, 116, 97, 110, 104, 95, 102, 34, 4, 84, 97,
    110, 104, 18, 6, 116, 97, 110, 104, 95, 102, 90, 16, 10, 1, 120, 18, 11, 10, 9, 8, 1, 18, 5, 10,
    3, 8, 232, 7, 98, 16, 10, 1, 121, 18, 11, 10, 9, 8, 1, 18, 5, 10, 3, 8, 232, 7, 66, 4,
    10, 0, 16, 17,
};
static const unsigned char model_erf_f[] = {
    8, 8, 58, 63, 10, 18, 10, 1, 120, 18, 1, 121, 26, 5, 101, 114, 102, 95, 102, 34, 3, 69, 114, 102,
    18, 5, 101, 114, 102, 95, 102, 90, 16, 10, 1, 120, 18, 11, 10, 9, 8, 1, 18, 5, 10, 3, 8, 232,
    7, 98, 16, 10, 1, 121, 18, 11, 10, 9, 8, 1, 18, 5, 10, 3, 8, 232, 7, 66, 4, 10, 0, 16,
    17,
};
static const unsigned char model_prelu_f[] = {
    8, 8, 58, 107, 10, 25, 10, 1, 120, 10, 1, 115, 18, 1, 121, 26, 7, 112, 114, 101, 108, 117, 95, 102,
    34, 5, 80, 82, 101, 108, 117, 18, 7, 112, 114, 101, 108, 117, 95, 102, 90, 23, 10, 1, 120, 18, 18, 10,
    16, 8, 1, 18, 12, 10, 2, 8, 2, 10, 2, 8, 3, 10, 2, 8, 4, 90, 19, 10, 1, 115, 18, 14,
    10, 12, 8, 1, 18, 8, 10, 2, 8, 3, 10, 2, 8, 1, 98, 23, 10, 1, 121, 18, 18, 10, 16, 8,
    1, 18, 12, 10, 2, 8, 2, 10, 2, 8, 3, 10, 2, 8, 4, 66, 4, 10, 0, 16, 17,
};
static const unsigned char model_isinf_neg[] = {
    8, 8, 58, 95, 10, 48, 10, 1, 120, 18, 1, 121, 26, 9, 105, 115, 105, 110, 102, 95, 110, 101, 103, 34,
    5, 73, 115, 73, 110, 102, 42, 22, 10, 15, 100, 101, 116, 101, 99, 116, 95, 112, 111, 115, 105, 116, 105, 118,
    101, 24, 0, 160, 1, 2, 18, 9, 105, 115, 105, 110, 102, 95, 110, 101, 103, 90, 15, 10, 1, 120, 18, 10,
    10, 8, 8, 1, 18, 4, 10, 2, 8, 4, 98, 15, 10, 1, 121, 18, 10, 10, 8, 8, 9, 18, 4, 10,
    2, 8, 4, 66, 4, 10, 0, 16, 17,
};

static cort_value *tensor(cort_type t, const int64_t *shape, size_t rank, const void *data) {
    cort_value *v = NULL;
    if (!CHECK_OK(cort_tensor_create(t, shape, rank, &v))) return NULL;
    if (t == CORT_TYPE_STRING) {
        const char *const *s = data;
        for (size_t i = 0; i < cort_tensor_element_count(v); i++) CHECK_OK(cort_tensor_set_string(v, i, s[i]));
    } else if (cort_tensor_bytes(v)) {
        memcpy(cort_tensor_data(v), data, cort_tensor_bytes(v));
    }
    return v;
}

/* Runs a one-output model; returns the output (NULL on failure, with *st set when st != NULL). */
static cort_value *run_model(const unsigned char *bytes, size_t len, int threads, cort_value **in, size_t n_in,
                             cort_status **st_out) {
    cort_session_options *opt = NULL;
    cort_session *s = NULL;
    cort_value *out = NULL;
    CHECK_OK(cort_session_options_create(&opt));
    CHECK_OK(cort_session_options_set_threads(opt, threads));
    cort_status *st = cort_session_create_from_memory(bytes, len, opt, &s);
    cort_session_options_free(opt);
    if (!st) {
        const char *names[4];
        for (size_t i = 0; i < n_in; i++) names[i] = cort_session_input_name(s, i);
        const char *oname = cort_session_output_name(s, 0);
        st = cort_session_run(s, NULL, names, in, n_in, &oname, 1, &out);
    }
    if (st_out) *st_out = st;
    else CHECK_OK(st);
    cort_session_release(s);
    for (size_t i = 0; i < n_in; i++) cort_value_release(in[i]);
    return out;
}
#define RUN(name, threads, ...) \
    run_model(model_##name, sizeof model_##name, threads, (cort_value *[]){ __VA_ARGS__ }, \
              sizeof((cort_value *[]){ __VA_ARGS__ }) / sizeof(cort_value *), NULL)

static void test_models(void) {
    cort_value *y;
    /* Add-6 with broadcast=1, axis=1: B[3,4] aligned to A's dims 1..2 */
    {
        float a[120], b[12];
        for (int i = 0; i < 120; i++) a[i] = (float)i;
        for (int i = 0; i < 12; i++) b[i] = 1000.0f * (float)i;
        y = RUN(add_legacy, 1, tensor(CORT_TYPE_FLOAT, (int64_t[]){2, 3, 4, 5}, 4, a), tensor(CORT_TYPE_FLOAT, (int64_t[]){3, 4}, 2, b));
        if (ECHECK(y && cort_tensor_element_count(y) == 120)) {
            const float *o = cort_tensor_data(y);
            int bad = 0;
            for (int i = 0; i < 120; i++) bad += o[i] != a[i] + b[(i / 5) % 12];
            CHECK(!bad);
        }
        cort_value_release(y);
    }
    /* Clip-6 attributes */
    {
        float x[5] = { -2, -0.25f, 0, 0.3f, 7 };
        y = RUN(clip_legacy, 1, tensor(CORT_TYPE_FLOAT, (int64_t[]){5}, 1, x));
        if (ECHECK(y)) {
            const float *o = cort_tensor_data(y);
            CHECK(o[0] == -0.5f && o[1] == -0.25f && o[2] == 0 && o[3] == 0.3f && o[4] == 0.5f);
        }
        cort_value_release(y);
    }
    /* exact int64 Pow, including results beyond 2^53 and negative exponents */
    {
        int64_t a[5] = { 3, -2, 2, 7, 1 }, b[5] = { 39, 3, -1, 0, -5 };
        y = RUN(pow_i64, 1, tensor(CORT_TYPE_INT64, (int64_t[]){5}, 1, a), tensor(CORT_TYPE_INT64, (int64_t[]){5}, 1, b));
        if (ECHECK(y)) {
            const int64_t *o = cort_tensor_data(y);
            CHECK(o[0] == 4052555153018976267LL && o[1] == -8 && o[2] == 0 && o[3] == 1 && o[4] == 1);
        }
        cort_value_release(y);
        float fa[3] = { 2, -3, 0.5f };
        int64_t fb[3] = { 10, 3, -2 };
        y = RUN(pow_f_i64, 1, tensor(CORT_TYPE_FLOAT, (int64_t[]){3}, 1, fa), tensor(CORT_TYPE_INT64, (int64_t[]){3}, 1, fb));
        if (ECHECK(y)) {
            const float *o = cort_tensor_data(y);
            CHECK(o[0] == 1024 && o[1] == -27 && o[2] == 4);
        }
        cort_value_release(y);
    }
    /* Mod (Python sign) and integer division by zero / overflow */
    {
        int32_t a[6] = { -4, 7, 5, 4, -7, 8 }, b[6] = { 2, -3, 8, -2, 3, 5 };
        y = RUN(mod_i32, 1, tensor(CORT_TYPE_INT32, (int64_t[]){6}, 1, a), tensor(CORT_TYPE_INT32, (int64_t[]){6}, 1, b));
        if (ECHECK(y)) {
            const int32_t *o = cort_tensor_data(y);
            CHECK(o[0] == 0 && o[1] == -2 && o[2] == 5 && o[3] == 0 && o[4] == 2 && o[5] == 3);
        }
        cort_value_release(y);
        int32_t da[4] = { 7, -7, INT32_MIN, 9 }, db[4] = { 0, 2, -1, -2 };
        y = RUN(div_i32, 1, tensor(CORT_TYPE_INT32, (int64_t[]){4}, 1, da), tensor(CORT_TYPE_INT32, (int64_t[]){4}, 1, db));
        if (ECHECK(y)) {
            const int32_t *o = cort_tensor_data(y);
            CHECK(o[0] == 0 && o[1] == -3 && o[2] == INT32_MIN && o[3] == -4);
        }
        cort_value_release(y);
    }
    /* variadic with broadcasting and narrow types */
    {
        int8_t a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 10, 20, 30 }, c[2] = { 100, -100 };
        y = RUN(sum_i8, 1, tensor(CORT_TYPE_INT8, (int64_t[]){2, 3}, 2, a), tensor(CORT_TYPE_INT8, (int64_t[]){3}, 1, b),
                tensor(CORT_TYPE_INT8, (int64_t[]){2, 1}, 2, c));
        if (ECHECK(y)) {
            const int8_t *o = cort_tensor_data(y);
            CHECK(o[0] == 111 && o[2] == (int8_t)133 && o[3] == -86 && o[5] == -64);
        }
        cort_value_release(y);
        uint64_t ma[3] = { 1, UINT64_MAX, 5 }, mb[1] = { 3 };
        y = RUN(max_u64, 1, tensor(CORT_TYPE_UINT64, (int64_t[]){3}, 1, ma), tensor(CORT_TYPE_UINT64, (int64_t[]){1}, 1, mb));
        if (ECHECK(y)) {
            const uint64_t *o = cort_tensor_data(y);
            CHECK(o[0] == 3 && o[1] == UINT64_MAX && o[2] == 5);
        }
        cort_value_release(y);
        uint16_t ua[2] = { 60000, 1 }, ub[2] = { 60000, 2 }, uc[2] = { 60000, 4 };
        y = RUN(mean_u16, 1, tensor(CORT_TYPE_UINT16, (int64_t[]){2}, 1, ua), tensor(CORT_TYPE_UINT16, (int64_t[]){2}, 1, ub),
                tensor(CORT_TYPE_UINT16, (int64_t[]){2}, 1, uc));
        if (ECHECK(y)) {
            const uint16_t *o = cort_tensor_data(y);
            CHECK(o[1] == 2);   /* 7 / 3 truncated; o[0] wraps like uint16 arithmetic */
        }
        cort_value_release(y);
    }
    /* Cast: numpy formatting, string parsing, saturating float -> int */
    {
        double x[8] = { 0.1, 1e-5, 100, 1e16, -0.0, NAN, 123456789.0, -2.5e-300 };
        static const char *want[8] = { "0.1", "1e-05", "100.0", "1e+16", "-0.0", "nan", "123456789.0", "-2.5e-300" };
        y = RUN(cast_d2s, 1, tensor(CORT_TYPE_DOUBLE, (int64_t[]){8}, 1, x));
        if (ECHECK(y)) {
            char *const *o = cort_tensor_data(y);
            for (int i = 0; i < 8; i++) CHECK_MSG(!strcmp(o[i], want[i]), "got '%s' want '%s'", o[i], want[i]);
        }
        cort_value_release(y);
        static const char *s[4] = { "42", "-7", "1e3", " 5" };
        y = RUN(cast_s2i, 1, tensor(CORT_TYPE_STRING, (int64_t[]){4}, 1, s));
        if (ECHECK(y)) {
            const int32_t *o = cort_tensor_data(y);
            CHECK(o[0] == 42 && o[1] == -7 && o[2] == 1000 && o[3] == 5);
        }
        cort_value_release(y);
        static const char *bad[4] = { "42", "abc", "1", "2" };
        cort_status *st = NULL;
        y = run_model(model_cast_s2i, sizeof model_cast_s2i, 1,
                      (cort_value *[]){ tensor(CORT_TYPE_STRING, (int64_t[]){4}, 1, bad) }, 1, &st);
        CHECK(y == NULL);
        CHECK_ERR(st, CORT_ERROR_INVALID_ARGUMENT, "abc");
        float f[5] = { NAN, 1e30f, -1e30f, -1.9f, 300 };
        y = RUN(cast_f2i8, 1, tensor(CORT_TYPE_FLOAT, (int64_t[]){5}, 1, f));
        if (ECHECK(y)) {
            const int8_t *o = cort_tensor_data(y);
            CHECK(o[0] == 0 && o[3] == -1 && o[4] == (int8_t)300);
        }
        cort_value_release(y);
    }
    /* strings in Where and Equal */
    {
        uint8_t c[4] = { 1, 0, 0, 1 };
        static const char *x[2] = { "a", "bb" }, *yy[2] = { "X", "Y" };
        y = RUN(where_s, 1, tensor(CORT_TYPE_BOOL, (int64_t[]){2, 2}, 2, c), tensor(CORT_TYPE_STRING, (int64_t[]){2}, 1, x),
                tensor(CORT_TYPE_STRING, (int64_t[]){2, 1}, 2, yy));
        if (ECHECK(y)) {
            char *const *o = cort_tensor_data(y);
            CHECK(!strcmp(o[0], "a") && !strcmp(o[1], "X") && !strcmp(o[2], "Y") && !strcmp(o[3], "bb"));
        }
        cort_value_release(y);
        static const char *ea[3] = { "cat", "dog", "" }, *eb[1] = { "dog" };
        y = RUN(equal_s, 1, tensor(CORT_TYPE_STRING, (int64_t[]){3}, 1, ea), tensor(CORT_TYPE_STRING, NULL, 0, eb));
        if (ECHECK(y)) {
            const uint8_t *o = cort_tensor_data(y);
            CHECK(o[0] == 0 && o[1] == 1 && o[2] == 0);
        }
        cort_value_release(y);
    }
    /* large broadcast Add on the thread pool */
    {
        float *a = malloc(64 * 128 * 4), *b = malloc(100 * 128 * 4);
        for (int i = 0; i < 64 * 128; i++) a[i] = frand(-1, 1);
        for (int i = 0; i < 100 * 128; i++) b[i] = frand(-1, 1);
        y = RUN(add_big, 2, tensor(CORT_TYPE_FLOAT, (int64_t[]){64, 1, 128}, 3, a), tensor(CORT_TYPE_FLOAT, (int64_t[]){1, 100, 128}, 3, b));
        if (ECHECK(y && cort_tensor_element_count(y) == 64 * 100 * 128)) {
            const float *o = cort_tensor_data(y);
            int bad = 0;
            for (int i = 0; i < 64; i++)
                for (int j = 0; j < 100; j++)
                    for (int k = 0; k < 128; k++) bad += o[(i * 100 + j) * 128 + k] != a[i * 128 + k] + b[j * 128 + k];
            CHECK(!bad);
        }
        cort_value_release(y);
        free(a); free(b);
    }
    /* incompatible shapes: a message naming the node and the input */
    {
        float a[3] = { 0 }, b[4] = { 0 };
        cort_status *st = NULL;
        y = run_model(model_mul_bad, sizeof model_mul_bad, 1,
                      (cort_value *[]){ tensor(CORT_TYPE_FLOAT, (int64_t[]){3}, 1, a), tensor(CORT_TYPE_FLOAT, (int64_t[]){4}, 1, b) },
                      2, &st);
        CHECK(y == NULL);
        CHECK_MSG(cort_status_code(st) == CORT_ERROR_INVALID_ARGUMENT && strstr(cort_status_message(st), "mul_bad"),
                  "got: %s", cort_status_message(st));
        cort_status_free(st);
    }
    /* BitShift by the bit width or more gives 0 */
    {
        uint64_t a[3] = { 1, 1, 3 }, b[3] = { 63, 64, 200 };
        y = RUN(bitshift_u64, 1, tensor(CORT_TYPE_UINT64, (int64_t[]){3}, 1, a), tensor(CORT_TYPE_UINT64, (int64_t[]){3}, 1, b));
        if (ECHECK(y)) {
            const uint64_t *o = cort_tensor_data(y);
            CHECK(o[0] == (1ULL << 63) && o[1] == 0 && o[2] == 0);
        }
        cort_value_release(y);
    }
    /* float32 transcendental ops end to end against libm */
    {
        static const unsigned char *models[4] = { model_exp_f, model_sigmoid_f, model_tanh_f, model_erf_f };
        static const size_t lens[4] = { sizeof model_exp_f, sizeof model_sigmoid_f, sizeof model_tanh_f, sizeof model_erf_f };
        static const int ops[4] = { EW_FU_EXP, EW_FU_SIGMOID, EW_FU_TANH, EW_FU_ERF };
        float x[1000];
        for (int i = 0; i < 1000; i++) x[i] = frand(-20, 20);
        for (int m = 0; m < 4; m++) {
            y = run_model(models[m], lens[m], 1, (cort_value *[]){ tensor(CORT_TYPE_FLOAT, (int64_t[]){1000}, 1, x) }, 1, NULL);
            if (!ECHECK(y)) continue;
            const float *o = cort_tensor_data(y);
            double worst = 0;
            for (int i = 0; i < 1000; i++) {
                double w = ref_un(ops[m], x[i]), e = fabs(o[i] - w) / (fabs(w) + 1e-30);
                if (e > worst) worst = e;
            }
            CHECK_MSG(worst < 1e-5, "op %d rel err %g", ops[m], worst);
            cort_value_release(y);
        }
    }
    /* PRelu with a broadcast slope; IsInf with detect_positive = 0 */
    {
        float x[24], s[3] = { 0.1f, 0.2f, 0.3f };
        for (int i = 0; i < 24; i++) x[i] = (float)(i - 12);
        y = RUN(prelu_f, 1, tensor(CORT_TYPE_FLOAT, (int64_t[]){2, 3, 4}, 3, x), tensor(CORT_TYPE_FLOAT, (int64_t[]){3, 1}, 2, s));
        if (ECHECK(y)) {
            const float *o = cort_tensor_data(y);
            int bad = 0;
            for (int i = 0; i < 24; i++) bad += o[i] != (x[i] < 0 ? x[i] * s[(i / 4) % 3] : x[i]);
            CHECK(!bad);
        }
        cort_value_release(y);
        float v[4] = { INFINITY, -INFINITY, NAN, 1 };
        y = RUN(isinf_neg, 1, tensor(CORT_TYPE_FLOAT, (int64_t[]){4}, 1, v));
        if (ECHECK(y)) {
            const uint8_t *o = cort_tensor_data(y);
            CHECK(o[0] == 0 && o[1] == 1 && o[2] == 0 && o[3] == 0);
        }
        cort_value_release(y);
    }
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    test_simd_binary();
    test_simd_unary();
    test_plan(pool);
    test_models();
    cort_pool_free(pool);
    return tu_finish();
}
