/* In-place elementwise outputs (cort_kernel_reusable_input): a binary or unary op whose input is
 * dead after it writes its output over that input. Checks, at optimization levels 0 and 2, 1 and 2 threads and
 * over repeated runs, that every output is right, including those whose inputs must not be
 * overwritten (the graph inputs, a value that is also a graph output, a value read again later, a
 * reshaped view of a value read again later, the same value as both inputs); and that a scaled feature map really is computed in place: the
 * run's memory grows by one feature map (the output), not two. */
#include <math.h>
#include <string.h>
#include "testutil.h"

#define C 4
#define HW 30
#define N (C * HW)

static float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }

static void check_ew(int level, int threads) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    CHECK_OK(cort_session_options_set_optimization_level(o, level));
    if (!CHECK_OK(cort_session_create("tests/models/inplace_ew.onnx", o, &s))) { cort_session_options_free(o); return; }
    cort_session_options_free(o);
    const int64_t xs[4] = { 1, C, 6, 5 }, ss[4] = { 1, C, 1, 1 };
    cort_value *in[2] = { NULL, NULL };
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, xs, 4, &in[0]));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, ss, 4, &in[1]));
    float *x = cort_tensor_data(in[0]), *sc = cort_tensor_data(in[1]);
    for (size_t i = 0; i < N; i++) x[i] = (float)((int)(i * 37 % 23) - 11) / 4.0f;
    for (size_t c = 0; c < C; c++) sc[c] = 0.5f + (float)c * 0.75f;
    float x0[N];
    memcpy(x0, x, sizeof x0);
    const char *in_names[2] = { "x", "s" };
    enum { NOUT = 10 };
    const char *out_names[NOUT];
    CHECK(cort_session_output_count(s) == NOUT);
    for (size_t k = 0; k < NOUT; k++) out_names[k] = cort_session_output_name(s, k);
    for (int run = 0; run < 3; run++) {
        cort_value *out[NOUT] = { NULL };
        if (!CHECK_OK(cort_session_run(s, NULL, in_names, in, 2, out_names, NOUT, out))) break;
        const float *y[NOUT];
        for (int k = 0; k < NOUT; k++) y[k] = cort_tensor_data(out[k]);
        int bad[NOUT] = { 0 };
        for (size_t i = 0; i < N; i++) {
            const float v = x0[i], sv = sc[i / HW], r = v > 0 ? v : 0.0f, t = tanhf(v);
            const float g = sigm(-v);
            const float want[NOUT] = { r * sv, sv * sigm(v), r + r, -v, -v * sv, v * sv, (t - sv) + t, 2 * r + r,
                                       g < 0.2f ? 0.2f : g > 0.6f ? 0.6f : g, expf(-v) };
            for (int k = 0; k < NOUT; k++)
                if (fabsf(y[k][i] - want[k]) > 1e-5f * (1.0f + fabsf(want[k]))) bad[k]++;
        }
        for (int k = 0; k < NOUT; k++)
            CHECK_MSG(!bad[k], "level %d threads %d run %d: output %s: %d wrong elements\n", level, threads, run,
                      out_names[k], bad[k]);
        CHECK_MSG(!memcmp(x, x0, sizeof x0), "level %d run %d: the graph input was overwritten\n", level, run);
        for (int k = 0; k < NOUT; k++) cort_value_release(out[k]);
    }
    cort_value_release(in[0]);
    cort_value_release(in[1]);
    cort_session_release(s);
}

/* Neg, Relu, then a per-channel Mul on a 1 MB map: after the run (its output still held) the
 * allocator holds the output's block and the executor's small arrays; with Relu or Mul computed out
 * of place it would also hold a second block in the session's cache. */
static void check_memory(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create("tests/models/inplace_mem.onnx", NULL, &s))) return;
    const int64_t xs[4] = { 1, 16, 128, 128 };
    const size_t map_bytes = 16 * 128 * 128 * sizeof(float);
    cort_value *in = NULL, *out = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, xs, 4, &in));
    float *x = cort_tensor_data(in);
    for (size_t i = 0; i < map_bytes / sizeof(float); i++) x[i] = (float)(i % 7) - 3.0f;
    cort_allocator_stats before, after;
    CHECK_OK(cort_allocator_get_stats(&before));
    const char *in_name = "x", *out_name = cort_session_output_name(s, 0);
    CHECK_OK(cort_session_run(s, NULL, &in_name, &in, 1, &out_name, 1, &out));
    CHECK_OK(cort_allocator_get_stats(&after));
    const size_t grown = after.bytes_in_use - before.bytes_in_use;
    printf("inplace_mem: the run holds %zu bytes after returning (one map: %zu)\n", grown, map_bytes);
    CHECK_MSG(grown >= map_bytes && grown < map_bytes + map_bytes / 2,
              "the run holds %zu bytes, expected one %zu-byte map (plus small arrays)\n", grown, map_bytes);
    const float *y = out ? cort_tensor_data(out) : NULL;
    int nonneg = 1;
    for (size_t i = 0; y && i < map_bytes / sizeof(float); i++)
        if (x[i] >= 0 && y[i] != 0.0f) nonneg = 0;
    CHECK_MSG(y && nonneg, "Relu(-x) * s is not zero where x >= 0\n");
    cort_value_release(out);
    cort_value_release(in);
    cort_session_release(s);
}

int main(void) {
    for (int level = 0; level <= 2; level += 2)
        for (int threads = 1; threads <= 2; threads++) check_ew(level, threads);
    check_memory();
    return tu_finish();
}
