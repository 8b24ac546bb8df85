/* Level-2 pattern fusions (src/graph/passes/) and the fused kernels (src/providers/cpu/fu_*.c):
 * every model of tests/models/make_fuse_models.py must give the same outputs at levels 0 and 2, the
 * patterns must fire (or, for the near misses, not fire), and the row primitives of every ISA
 * level must agree with plain double-precision loops. Run from the repository root. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "providers/cpu/ops/fused/fused.h"
#include "providers/cpu/kernels/vec.h"
#include "providers/cpu/kernels/act_ukernels.h"
#include "core/cpu_features.h"

#define MODEL(name) "tests/models/" name

static float frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static cort_session *open_at(const char *path, int level, int threads) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_optimization_level(o, level));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    CHECK_OK(cort_session_create(path, o, &s));
    cort_session_options_free(o);
    return s;
}

static size_t count_op(const cort_session *s, const char *op) {
    size_t c = 0;
    for (size_t i = 0; i < cort_session_node_count(s); i++) {
        const char *name, *type, *prov;
        if (cort_session_node_info(s, i, &name, &type, &prov)) continue;
        if (!strcmp(type, op) && strcmp(prov, "folded")) c++;
    }
    return c;
}

/* How many `op` nodes a session of path at level / threads runs; SIZE_MAX if it cannot be opened. */
static size_t count_at(const char *path, int level, int threads, const char *op) {
    cort_session *s = open_at(path, level, threads);
    const size_t c = s ? count_op(s, op) : SIZE_MAX;
    cort_session_release(s);
    return c;
}

/* Runs the model at levels 0 and 2 on the same input [1, 8, 16] and compares every output. */
static void check_model(const char *path, size_t fused_mm, size_t ln, size_t gelu, int threads) {
    cort_session *s0 = open_at(path, 0, 1), *s2 = open_at(path, 2, threads);
    if (!s0 || !s2) { cort_session_release(s0); cort_session_release(s2); return; }
    CHECK_MSG(count_op(s2, "FusedMatMul") == fused_mm, "%s: %zu FusedMatMul, expected %zu", path,
              count_op(s2, "FusedMatMul"), fused_mm);
    CHECK_MSG(count_op(s2, "LayerNorm") == ln, "%s: %zu LayerNorm, expected %zu", path, count_op(s2, "LayerNorm"), ln);
    CHECK_MSG(count_op(s2, "Gelu") == gelu, "%s: %zu Gelu, expected %zu", path, count_op(s2, "Gelu"), gelu);
    CHECK(count_op(s0, "FusedMatMul") + count_op(s0, "LayerNorm") + count_op(s0, "Gelu") == 0);
    CHECK_MSG(count_op(s2, "HardSwish") == (strstr(path, "hardswish") ? 1u : 0u), "%s: %zu HardSwish", path,
              count_op(s2, "HardSwish"));
    int64_t shape[8];
    cort_value_type vt;
    cort_value *x = NULL;
    CHECK_OK(cort_session_input_type(s0, 0, &vt, shape, 8));   /* every model has one static input */
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, vt.rank, &x));
    if (!x) goto done;
    unsigned seed = 5;
    float *xd = cort_tensor_data(x);
    for (size_t i = 0; i < cort_tensor_element_count(x); i++) xd[i] = 2.0f * frand(&seed);
    size_t no = cort_session_output_count(s0);
    const char *in_name = cort_session_input_name(s0, 0);
    const char *names[8];
    cort_value *y0[8] = { 0 }, *y2[8] = { 0 };
    for (size_t i = 0; i < no && i < 8; i++) names[i] = cort_session_output_name(s0, i);
    CHECK_OK(cort_session_run(s0, NULL, &in_name, &x, 1, names, no, y0));
    CHECK_OK(cort_session_run(s2, NULL, &in_name, &x, 1, names, no, y2));
    for (size_t i = 0; i < no && i < 8; i++) {
        if (!y0[i] || !y2[i]) { CHECK(0); continue; }
        size_t n = cort_tensor_element_count(y0[i]);
        CHECK(n == cort_tensor_element_count(y2[i]));
        /* fused kernels sum in another order: the absolute part of the tolerance scales with the
         * output's magnitude (an output near zero among values ~500 may differ by 2e-4) */
        CHECK_CLOSE((const float *)cort_tensor_data(y2[i]), (const float *)cort_tensor_data(y0[i]), n,
                    TU_TOL(1e-4, 1e-5, 0), "%s output %zu: level 2 vs level 0", path, i);
        cort_value_release(y0[i]);
        cort_value_release(y2[i]);
    }
done:
    cort_value_release(x);
    cort_session_release(s0);
    cort_session_release(s2);
}

/* Whether two float tensors hold the same bytes. */
static int same_bytes(const cort_value *a, const cort_value *b) {
    const size_t n = cort_tensor_element_count(a);
    return n == cort_tensor_element_count(b) && !memcmp(cort_tensor_data(a), cort_tensor_data(b), n * sizeof(float));
}

/* MatMulInteger -> Cast -> Mul(scale) as com.microsoft.MatMulIntegerToFloat: two fused, the near miss
 * (its Cast is a graph output) kept, and every output equal to level 0's bit for bit. Negative
 * control: one flipped bit in a level-0 output must fail the comparison. */
static void test_int_matmul(int threads) {
    const char *path = MODEL("fuse_int_matmul.onnx");
    cort_session *s0 = open_at(path, 0, 1), *s2 = open_at(path, 2, threads);
    if (!s0 || !s2) { CHECK(0); cort_session_release(s0); cort_session_release(s2); return; }
    CHECK_MSG(count_op(s2, "MatMulIntegerToFloat") == 2 && count_op(s2, "MatMulInteger") == 1 &&
                  count_op(s2, "Cast") == 1 && count_op(s0, "MatMulIntegerToFloat") == 0,
              "int matmul: %zu MatMulIntegerToFloat, %zu MatMulInteger, %zu Cast at level 2",
              count_op(s2, "MatMulIntegerToFloat"), count_op(s2, "MatMulInteger"), count_op(s2, "Cast"));
    int64_t shape[8];
    cort_value_type vt;
    cort_value *x = NULL;
    CHECK_OK(cort_session_input_type(s0, 0, &vt, shape, 8));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, vt.rank, &x));
    const char *in_name = cort_session_input_name(s0, 0), *names[4];
    cort_value *y0[4] = { 0 }, *y2[4] = { 0 };
    const size_t no = cort_session_output_count(s0);
    CHECK(no == 4);
    for (size_t i = 0; i < 4; i++) names[i] = cort_session_output_name(s0, i);
    for (unsigned seed = 1; x && no == 4 && seed <= 3; seed++) {
        unsigned st = seed;
        float *xd = cort_tensor_data(x);
        for (size_t i = 0; i < cort_tensor_element_count(x); i++) xd[i] = (seed == 3 ? 40.0f : 2.0f) * frand(&st);
        CHECK_OK(cort_session_run(s0, NULL, &in_name, &x, 1, names, 4, y0));
        CHECK_OK(cort_session_run(s2, NULL, &in_name, &x, 1, names, 4, y2));
        for (size_t i = 0; i < 4; i++) {
            if (!y0[i] || !y2[i]) { CHECK(0); continue; }
            CHECK_MSG(same_bytes(y0[i], y2[i]), "int matmul output %zu, seed %u: level 2 differs from level 0", i, seed);
            if (i == 0) {
                uint32_t *d = cort_tensor_data(y0[i]);
                d[5] ^= 1u;
                CHECK_MSG(!same_bytes(y0[i], y2[i]), "negative control: a flipped bit went unnoticed");
            }
            cort_value_release(y0[i]);
            cort_value_release(y2[i]);
            y0[i] = y2[i] = NULL;
        }
    }
    cort_value_release(x);
    cort_session_release(s0);
    cort_session_release(s2);
}

/* GELU and its bias into MatMulIntegerToFloat's tile epilogue: the N = 48 product fused (no cort.Gelu
 * left for it), the N = 24 near miss kept, and both GELU outputs bit for bit those of the _ref model,
 * whose products are graph outputs so its GELUs run as cort.Gelu. Negative control: one flipped bit. */
static void test_int_matmul_gelu(int threads) {
    cort_session *sf = open_at(MODEL("fuse_int_matmul_gelu.onnx"), 2, threads),
                 *sr = open_at(MODEL("fuse_int_matmul_gelu_ref.onnx"), 2, threads);
    if (!sf || !sr) { CHECK(0); cort_session_release(sf); cort_session_release(sr); return; }
    CHECK_MSG(count_op(sf, "Gelu") == 1 && count_op(sf, "MatMulIntegerToFloat") == 2 && count_op(sr, "Gelu") == 2,
              "int matmul gelu: %zu Gelu (want 1), %zu MatMulIntegerToFloat (want 2); reference %zu Gelu (want 2)",
              count_op(sf, "Gelu"), count_op(sf, "MatMulIntegerToFloat"), count_op(sr, "Gelu"));
    int64_t shape[8];
    cort_value_type vt;
    cort_value *x = NULL;
    CHECK_OK(cort_session_input_type(sf, 0, &vt, shape, 8));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, vt.rank, &x));
    const char *in_name = cort_session_input_name(sf, 0), *names[2];
    CHECK(cort_session_output_count(sf) == 2 && cort_session_output_count(sr) == 4);
    for (size_t i = 0; i < 2; i++) names[i] = cort_session_output_name(sf, i);
    for (unsigned seed = 1; x && seed <= 3; seed++) {
        unsigned st = seed;
        float *xd = cort_tensor_data(x);
        for (size_t i = 0; i < cort_tensor_element_count(x); i++) xd[i] = (seed == 3 ? 40.0f : 2.0f) * frand(&st);
        cort_value *yf[2] = { 0 }, *yr[2] = { 0 };
        CHECK_OK(cort_session_run(sf, NULL, &in_name, &x, 1, names, 2, yf));
        CHECK_OK(cort_session_run(sr, NULL, &in_name, &x, 1, names, 2, yr));
        for (size_t i = 0; i < 2; i++) {
            if (!yf[i] || !yr[i]) { CHECK(0); continue; }
            CHECK_MSG(same_bytes(yf[i], yr[i]), "int matmul gelu output %zu, seed %u, %d threads: fused differs",
                      i, seed, threads);
            if (i == 0 && seed == 1) {
                ((uint32_t *)cort_tensor_data(yr[i]))[7] ^= 1u;
                CHECK_MSG(!same_bytes(yf[i], yr[i]), "negative control: a flipped bit went unnoticed");
            }
            cort_value_release(yf[i]);
            cort_value_release(yr[i]);
        }
    }
    cort_value_release(x);
    cort_session_release(sf);
    cort_session_release(sr);
}

static void test_models(void) {
    for (int threads = 1; threads <= 2; threads++) {
        /* scores * scale, and the Q/K/V projections' biases (constant B); two LayerNorms with
         * residual and bias; fc1 (constant B) + bias + GELU as one FusedMatMul, GELU per tile */
        check_model(MODEL("fuse_encoder.onnx"), 5, 2, 0, threads);
        check_model(MODEL("fuse_variants.onnx"), 1, 1, 0, threads);
        /* run-time B: bias + GELU, bias + residual */
        check_model(MODEL("fuse_dynamic.onnx"), 2, 1, 0, threads);
        check_model(MODEL("fuse_hardswish.onnx"), 0, 0, 0, threads);
        check_model(MODEL("fuse_blocked.onnx"), 0, 0, 0, threads);
        /* Conv epilogues: residual Add (+ Relu) and HardSwish fused, broadcast / self / output adds kept */
        check_model(MODEL("fuse_conv_epilogue.onnx"), 0, 0, 0, threads);
        cort_session *s = open_at(MODEL("fuse_conv_epilogue.onnx"), 2, threads);
        CHECK_MSG(s && count_op(s, "Add") == 3 && count_op(s, "Relu") == 0 && count_op(s, "Conv") == 8,
                  "conv epilogue: %zu Add, %zu Relu, %zu Conv at level 2", s ? count_op(s, "Add") : 0,
                  s ? count_op(s, "Relu") : 0, s ? count_op(s, "Conv") : 0);
        cort_session_release(s);
        /* in-place Concat and its near misses give the level-0 outputs */
        check_model(MODEL("fuse_concat.onnx"), 0, 0, 0, threads);
        /* the addend is computed after the conv: the conv moves next to the Add and takes it */
        check_model(MODEL("fuse_conv_later.onnx"), 0, 0, 0, threads);
        s = open_at(MODEL("fuse_conv_later.onnx"), 2, threads);
        CHECK_MSG(s && count_op(s, "Add") == 0, "conv later: %zu Add at level 2", s ? count_op(s, "Add") : 0);
        cort_session_release(s);
        /* convs writing over a dead residual, and the residuals they must not overwrite */
        check_model(MODEL("fuse_conv_inplace.onnx"), 0, 0, 0, threads);
        /* BatchNormalization folded into Conv / ConvTranspose (and the Relu after it fused); the
         * one whose conv output is read twice and the one with a computed mean are kept */
        check_model(MODEL("fuse_conv_bn.onnx"), 0, 0, 0, threads);
        s = open_at(MODEL("fuse_conv_bn.onnx"), 2, threads);
        CHECK_MSG(s && count_op(s, "BatchNormalization") == 2 && count_op(s, "Relu") == 0,
                  "conv + bn: %zu BatchNormalization, %zu Relu at level 2", s ? count_op(s, "BatchNormalization") : 0,
                  s ? count_op(s, "Relu") : 0);
        cort_session_release(s);
        size_t c = count_at(MODEL("fuse_conv_bn.onnx"), 0, threads, "BatchNormalization");
        CHECK_MSG(c == 5, "conv + bn: %zu BatchNormalization at level 0", c);
        /* expand + depthwise pairs with a big intermediate: two fused (stride 1 and 2), four near
         * misses kept; a batch of 2 */
        check_model(MODEL("fuse_pwdw.onnx"), 0, 0, 0, threads);
        c = count_at(MODEL("fuse_pwdw.onnx"), 2, threads, "PwDwConv");
        const size_t convs = count_at(MODEL("fuse_pwdw.onnx"), 2, threads, "Conv");
        CHECK_MSG(c == 2 && convs == 10, "expand + depthwise: %zu PwDwConv, %zu Conv at level 2", c, convs);
        check_model(MODEL("fuse_pwdw_batch.onnx"), 0, 0, 0, threads);
        c = count_at(MODEL("fuse_pwdw_batch.onnx"), 2, threads, "PwDwConv");
        CHECK_MSG(c == 1, "batch: %zu PwDwConv", c);
        /* SiLU, LeakyRelu, HardSigmoid and Clip into the conv before them; a Sigmoid read twice kept */
        check_model(MODEL("fuse_conv_act.onnx"), 0, 0, 0, threads);
        s = open_at(MODEL("fuse_conv_act.onnx"), 2, threads);
        CHECK_MSG(s && count_op(s, "Conv") == 5 && count_op(s, "Sigmoid") == 1 && count_op(s, "Mul") == 1 &&
                      count_op(s, "LeakyRelu") + count_op(s, "HardSigmoid") + count_op(s, "Clip") == 0,
                  "conv activations: %zu Conv, %zu Sigmoid, %zu Mul, %zu LeakyRelu/HardSigmoid/Clip at level 2",
                  s ? count_op(s, "Conv") : 0, s ? count_op(s, "Sigmoid") : 0, s ? count_op(s, "Mul") : 0,
                  s ? count_op(s, "LeakyRelu") + count_op(s, "HardSigmoid") + count_op(s, "Clip") : 0);
        cort_session_release(s);
        c = count_at(MODEL("fuse_conv_act.onnx"), 0, threads, "Sigmoid");
        CHECK_MSG(c == 2, "conv activations: %zu Sigmoid at level 0", c);
        /* GELU after a bias Add (-> cort.Gelu(x, bias)) and after a Relu, no MatMul to take them */
        check_model(MODEL("fuse_gelu_bias.onnx"), 0, 0, 2, threads);
        s = open_at(MODEL("fuse_gelu_bias.onnx"), 2, threads);
        CHECK_MSG(s && count_op(s, "Add") == 0 && count_op(s, "Erf") == 0 && count_op(s, "Relu") == 1,
                  "gelu + bias: %zu Add, %zu Erf, %zu Relu at level 2", s ? count_op(s, "Add") : 0,
                  s ? count_op(s, "Erf") : 0, s ? count_op(s, "Relu") : 0);
        cort_session_release(s);
    }
}

/* The internal ops used directly with inconsistent inputs fail at run time, naming node and input. */
static void test_bad_inputs(void) {
    static const struct { const char *model, *needle; } cases[] = {
        { MODEL("fuse_bad_ln.onnx"), "input 1 'scale'" },
        { MODEL("fuse_bad_gelu.onnx"), "input 1 'bias'" },
        { MODEL("fuse_bad_mm.onnx"), "input 3 'residual'" },
        { MODEL("fuse_bad_pwdw.onnx"), "input 0 'X'" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cort_session *s = open_at(cases[c].model, 2, 1);
        if (!s) continue;
        int64_t shape[3] = { 1, 8, 16 };
        cort_value *x = NULL, *y = NULL;
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 3, &x));
        if (x) memset(cort_tensor_data(x), 0, 128 * sizeof(float));
        const char *in = "x", *out = "y";
        if (x) CHECK_ERR(cort_session_run(s, NULL, &in, &x, 1, &out, 1, &y), CORT_ERROR_INVALID_ARGUMENT, cases[c].needle);
        cort_value_release(y);
        cort_value_release(x);
        cort_session_release(s);
    }
}

static void test_vec_levels(void) {
    enum { N = 1037 };
    static float x[N], b[N], s[N], y[N], r[N];
    unsigned seed = 9;
    for (size_t i = 0; i < N; i++) { x[i] = 4 * frand(&seed); b[i] = frand(&seed); s[i] = 1 + frand(&seed); }
    for (int l = 0; l <= 2; l++) {
        const fu_vec_kernels *k = fu_vec_level(l);
        if (!k) continue;
        for (size_t n = 1; n <= N; n += n < 40 ? 1 : 97) {
            double sum = 0, mx = x[0], sq = 0;
            for (size_t i = 0; i < n; i++) { sum += x[i]; if (x[i] > mx) mx = x[i]; }
            for (size_t i = 0; i < n; i++) sq += (x[i] - 0.25) * (x[i] - 0.25);
            CHECK_MSG(k->max(x, n) == (float)mx, "%s max n=%zu", k->name, n);
            CHECK_MSG(fabs(k->sum(x, n) - sum) <= 1e-4 * (1 + n), "%s sum n=%zu", k->name, n);
            double ds = 0;
            for (size_t i = 0; i < n; i++) ds += x[i] - 0.25;
            float dev;
            CHECK_MSG(fabs(k->sqdev(x, n, 0.25f, &dev) - sq) <= 1e-5 * (1 + sq), "%s sqdev n=%zu", k->name, n);
            CHECK_MSG(fabs(dev - ds) <= 1e-4 * (1 + n), "%s dev sum n=%zu", k->name, n);
            k->norm(x, y, n, 0.25f, 0.5f, s, b);
            for (size_t i = 0; i < n; i++) r[i] = (float)(((double)x[i] - 0.25) * 0.5 * s[i] + b[i]);
            CHECK_CLOSE(y, r, n, TU_TOL(1e-5, 0, 1e-11), "%s norm n=%zu", k->name, n);
            k->add(x, b, y, n);
            for (size_t i = 0; i < n; i++) r[i] = x[i] + b[i];
            CHECK_MSG(tu_max_ulp(y, r, n, NULL) == 0, "%s add n=%zu", k->name, n);
            k->addc(x, y, n, -1.5f);
            k->scale(y, n, 3.0f);
            for (size_t i = 0; i < n; i++) r[i] = (x[i] - 1.5f) * 3.0f;
            CHECK_MSG(tu_max_ulp(y, r, n, NULL) == 0, "%s addc/scale n=%zu", k->name, n);
        }
    }
}

static void test_gelu_kernel(void (*gelu)(const float *, float *, size_t), const char *name) {
    enum { N = 4099 };
    static float x[N], y[N], r[N];
    for (size_t i = 0; i < N; i++) x[i] = -9.0f + 18.0f * (float)i / (N - 1);
    gelu(x, y, N);
    fu_gelu_f32_ref(x, r, N);
    /* like the unfused graph (and ORT), 1 + erf cancels for x << 0: relative accuracy where the
     * result is not tiny, absolute below */
    double rel = 0, abs_err = 0;
    for (size_t i = 0; i < N; i++) {
        double d = fabs((double)y[i] - r[i]);
        if (fabs(r[i]) > 1e-2 && d / fabs(r[i]) > rel) rel = d / fabs(r[i]);
        d /= 1 + fabs(x[i]);
        if (d > abs_err) abs_err = d;
    }
    printf("gelu %s: relative error %g, absolute (scaled) %g\n", name, rel, abs_err);
    CHECK_MSG(rel < 2e-6 && abs_err < 1e-7, "gelu %s: relative error %g, absolute (scaled) %g", name, rel, abs_err);
    memcpy(y, x, sizeof y);
    gelu(y, r, N);
    gelu(y, y, N);   /* in place */
    CHECK(tu_max_ulp(y, r, N, NULL) == 0);
    /* rows whose length is a multiple of 16, whole or in pieces of 16 and 32 (MatMulIntegerToFloat's
     * GELU per tile, passes/fuse_int_matmul.c, relies on it): the same bits */
    static const size_t rows[] = { 16, 48, 512, 784, 3072 };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
        for (size_t piece = 16; piece <= 32; piece += 16) {
            gelu(x, r, rows[k]);
            for (size_t i = 0; i < rows[k]; i += piece) gelu(x + i, y + i, rows[k] - i < piece ? rows[k] - i : piece);
            CHECK_MSG(!memcmp(y, r, rows[k] * sizeof *y), "gelu %s: a row of %zu in pieces of %zu differs", name,
                      rows[k], piece);
        }
}

static void test_layernorm_kernel(cort_pool *pool) {
    enum { R = 37, C = 300 };
    static float x[R * C], y[R * C], r[R * C], g[C], b[C];
    unsigned seed = 3;
    for (size_t i = 0; i < R * C; i++) x[i] = 100.0f + 3 * frand(&seed);   /* large mean: two passes needed */
    for (size_t i = 0; i < C; i++) { g[i] = 1 + frand(&seed); b[i] = frand(&seed); }
    for (size_t q = 0; q < R; q++) {
        double m = 0, v = 0;
        for (size_t i = 0; i < C; i++) m += x[q * C + i];
        m /= C;
        for (size_t i = 0; i < C; i++) v += (x[q * C + i] - m) * (x[q * C + i] - m);
        v /= C;
        for (size_t i = 0; i < C; i++) r[q * C + i] = (float)((x[q * C + i] - m) / sqrt(v + 1e-5) * g[i] + b[i]);
    }
    fu_layernorm_rows(x, NULL, NULL, y, R, C, g, b, 1e-5f, pool);
    CHECK_CLOSE(y, r, R * C, TU_TOL(1e-3, 0, 1e-5), "layernorm");
}

static size_t in_use(void) {
    cort_allocator_stats st;
    cort_status_free(cort_allocator_get_stats(&st));
    return st.bytes_in_use;
}

/* Every allocation of session creation (which runs the fusions and the fused ops' init) and of a
 * run fails in turn: each must report OUT_OF_MEMORY and leak nothing. */
static void test_oom(const char *path) {
    size_t base = in_use();
    int bad = 0, leaks = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        cort_session *s = NULL;
        cort_test_alloc_fail_at(n);
        cort_status *st = cort_session_create(path, NULL, &s);
        long made = cort_test_alloc_count();
        cort_test_alloc_fail_at(0);
        if (!st) {
            cort_session_release(s);
            if (made < n) break;
            continue;
        }
        bad += cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY;
        cort_status_free(st);
        leaks += in_use() != base;
    }
    CHECK_MSG(n > 50, "%s: creation made only %ld allocations", path, n);
    CHECK_MSG(bad == 0 && leaks == 0 && n < 100000, "%s: creation OOM walk: %d bad codes, %d leaks", path, bad, leaks);
    cort_session *s = open_at(path, 2, 1);
    if (!s) return;
    int64_t shape[8];
    cort_value_type vt;
    cort_value *x = NULL;
    CHECK_OK(cort_session_input_type(s, 0, &vt, shape, 8));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, vt.rank, &x));
    if (!x) { cort_session_release(s); return; }
    const char *in_name = cort_session_input_name(s, 0), *out_name = cort_session_output_name(s, 0);
    base = in_use();
    bad = 0;
    for (n = 1; n < 100000; n++) {
        cort_value *y = NULL;
        cort_test_alloc_fail_at(n);
        cort_status *st = cort_session_run(s, NULL, &in_name, &x, 1, &out_name, 1, &y);
        long made = cort_test_alloc_count();
        cort_test_alloc_fail_at(0);
        cort_value_release(y);
        if (!st) { if (made < n) break; continue; }
        bad += cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY;
        cort_status_free(st);
    }
    CHECK_MSG(bad == 0 && n < 100000, "%s: run OOM walk: %d bad codes", path, bad);
    cort_value_release(x);
    cort_session_release(s);
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    test_vec_levels();
    test_gelu_kernel(fu_gelu_f32, "dispatched");
    test_gelu_kernel(fu_gelu_f32_chunks, "chunks");
#ifdef NN_HAVE_X86_UKERNELS
    if (cort_cpu_isa() == CORT_ISA_AVX2 || cort_cpu_isa() == CORT_ISA_AVX512) test_gelu_kernel(nn_gelu_avx2, "avx2");
    if (cort_cpu_isa() == CORT_ISA_AVX512) test_gelu_kernel(nn_gelu_avx512, "avx512");
#endif
    test_layernorm_kernel(pool);
    test_layernorm_kernel(NULL);
    test_models();
    test_int_matmul(1);
    test_int_matmul(2);
    test_int_matmul_gelu(1);
    test_int_matmul_gelu(3);
    test_bad_inputs();
    test_oom(MODEL("fuse_encoder.onnx"));
    test_oom(MODEL("fuse_variants.onnx"));
    test_oom(MODEL("fuse_dynamic.onnx"));
    test_oom(MODEL("fuse_conv_epilogue.onnx"));
    test_oom(MODEL("fuse_concat.onnx"));
    test_oom(MODEL("fuse_pwdw_batch.onnx"));
    test_oom(MODEL("fuse_conv_act.onnx"));
    test_oom(MODEL("fuse_gelu_bias.onnx"));
    test_oom(MODEL("fuse_int_matmul.onnx"));
    test_oom(MODEL("fuse_int_matmul_gelu.onnx"));
    cort_pool_free(pool);
    return tu_finish();
}
