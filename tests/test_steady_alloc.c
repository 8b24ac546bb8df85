/* Steady state: once a session has run a static shape, further runs of that shape make no heap
 * allocation through cort's allocator (outputs, intermediates, scratch and executor arrays come
 * from the session's recycling cache). Counts allocations with the allocator's test counter. */
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/bufcache.h"

static void check_model(const char *path, const char *in_name, const int64_t *shape, size_t rank, const char *out_name,
                        int threads) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    if (!CHECK_OK(cort_session_create(path, o, &s))) { cort_session_options_free(o); return; }
    cort_session_options_free(o);
    cort_value *in = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, rank, &in));
    float *x = cort_tensor_data(in);
    for (size_t i = 0; i < cort_tensor_element_count(in); i++) x[i] = (float)((i * 31) % 17) / 8.0f - 1.0f;
    long counts[6];
    for (int r = 0; r < 6; r++) {
        cort_value *out = NULL;
        cort_test_alloc_fail_at(0);   /* resets the counter */
        CHECK_OK(cort_session_run(s, NULL, &in_name, &in, 1, &out_name, 1, &out));
        counts[r] = cort_test_alloc_count();
        cort_value_release(out);
    }
    printf("%s (threads %d): allocations per run: %ld (first), then %ld %ld %ld %ld %ld\n", path, threads, counts[0],
           counts[1], counts[2], counts[3], counts[4], counts[5]);
    for (int r = 2; r < 6; r++)
        CHECK_MSG(counts[r] == 0, "%s: run %d made %ld allocations in steady state", path, r, counts[r]);
    cort_value_release(in);
    cort_session_release(s);
}

/* A recurrent model with control flow (If around an LSTM; four inputs, one int64): the LSTM's
 * weight panels and sequence lengths come from the recycled scratch too. */
static void check_vad(int threads) {
    const char *path = "tests/models/realworld/vad_if_lstm/model.onnx";
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    int ok = CHECK_OK(cort_session_create(path, o, &s));
    cort_session_options_free(o);
    if (!ok) return;
    const int64_t xs[3] = { 2, 20, 16 }, hs[3] = { 1, 2, 24 };
    cort_value *in[4] = { NULL, NULL, NULL, NULL };
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, xs, 3, &in[0]));
    CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, NULL, 0, &in[1]));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, hs, 3, &in[2]));
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, hs, 3, &in[3]));
    *(int64_t *)cort_tensor_data(in[1]) = 16000;
    float *x = cort_tensor_data(in[0]);
    for (size_t i = 0; i < cort_tensor_element_count(in[0]); i++) x[i] = (float)((i * 13) % 23) / 11.0f - 1.0f;
    const char *in_names[4] = { "x", "sr", "h", "c" }, *out_names[3] = { "prob", "hn", "cn" };
    long counts[6];
    for (int r = 0; r < 6; r++) {
        cort_value *outs[3] = { NULL, NULL, NULL };
        cort_test_alloc_fail_at(0);
        CHECK_OK(cort_session_run(s, NULL, in_names, in, 4, out_names, 3, outs));
        counts[r] = cort_test_alloc_count();
        for (int k = 0; k < 3; k++) cort_value_release(outs[k]);
    }
    printf("%s (threads %d): allocations per run: %ld (first), then %ld %ld %ld %ld %ld\n", path, threads, counts[0],
           counts[1], counts[2], counts[3], counts[4], counts[5]);
    for (int r = 2; r < 6; r++)
        CHECK_MSG(counts[r] == 0, "%s: run %d made %ld allocations in steady state", path, r, counts[r]);
    for (int k = 0; k < 4; k++) cort_value_release(in[k]);
    cort_session_release(s);
}

/* Graph outputs that are constants (a folded Shape, a Constant node) come back as copies the caller
 * may overwrite without changing later runs' results, and those copies come from the cache. */
static void check_const_outputs(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create("tests/models/const_outputs.onnx", NULL, &s))) return;
    const int64_t xs[3] = { 2, 3, 4 };
    cort_value *x = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, xs, 3, &x));
    const char *in = "X", *outs[3] = { "S", "K", "Y" };
    long counts[5];
    for (int r = 0; r < 5; r++) {
        cort_value *o[3] = { NULL, NULL, NULL };
        cort_test_alloc_fail_at(0);
        int ok = CHECK_OK(cort_session_run(s, NULL, &in, &x, 1, outs, 3, o));
        counts[r] = cort_test_alloc_count();
        if (ok) {
            const int64_t *sh = cort_tensor_data(o[0]);
            const float *k = cort_tensor_data(o[1]);
            CHECK_MSG(sh[0] == 2 && sh[1] == 3 && sh[2] == 4, "run %d: Shape output %lld %lld %lld", r, (long long)sh[0],
                      (long long)sh[1], (long long)sh[2]);
            CHECK_MSG(k[0] == 1.5f && k[1] == -2.0f && k[2] == 3.25f, "run %d: Constant output %g %g %g", r, k[0], k[1], k[2]);
            /* the caller owns these: scribbling over them must not reach the next run */
            memset(cort_tensor_data(o[0]), 0xff, cort_tensor_bytes(o[0]));
            memset(cort_tensor_data(o[1]), 0xff, cort_tensor_bytes(o[1]));
        }
        for (int i = 0; i < 3; i++) cort_value_release(o[i]);
    }
    printf("const_outputs: allocations per run: %ld (first), then %ld %ld %ld %ld\n", counts[0], counts[1], counts[2],
           counts[3], counts[4]);
    for (int r = 2; r < 5; r++) CHECK_MSG(counts[r] == 0, "const_outputs: run %d made %ld allocations", r, counts[r]);
    cort_value_release(x);
    cort_session_release(s);
}

/* The cache hands out the most recently freed block that fits (up to 4x bigger), so a tensor is
 * written where the caches still hold the lines: with a class-exact choice the first 100 KB
 * request below would get the block freed first (cold in a model), and the checks fail. */
static void check_hot_reuse(void) {
    cort_bufcache *c = NULL;
    if (!CHECK_OK(cort_bufcache_create(64u << 20, &c))) return;
    void *a = cort_bufcache_get(c, 100 << 10), *b = cort_bufcache_get(c, 300 << 10), *big = cort_bufcache_get(c, 2u << 20);
    CHECK(a && b && big);
    cort_bufcache_put(c, a);
    cort_bufcache_put(c, b);     /* the most recent that fits a 100 KB request */
    void *p = cort_bufcache_get(c, 100 << 10);
    CHECK_MSG(p == b, "100 KB request: got %p, want the 300 KB block freed last %p (first freed: %p)", p, b, a);
    void *q = cort_bufcache_get(c, 100 << 10);
    CHECK_MSG(q == a, "second 100 KB request: got %p, want its own class's block %p", q, a);
    cort_bufcache_put(c, q);
    cort_bufcache_put(c, big);   /* freed last but 20x too big: not taken */
    void *r = cort_bufcache_get(c, 100 << 10);
    CHECK_MSG(r == a, "100 KB request took %p (want %p; the 2 MB block is %p)", r, a, big);
    void *s = cort_bufcache_get(c, 1u << 20);   /* 2 MB is within 4x of 1 MB */
    CHECK_MSG(s == big, "1 MB request: got %p, want the 2 MB block %p", s, big);
    cort_bufcache_put(c, p);
    cort_bufcache_put(c, r);
    cort_bufcache_put(c, s);
    cort_bufcache_release(c);
}

int main(void) {
    check_hot_reuse();
    int64_t s24[2] = { 2, 4 }, s864[2] = { 8, 64 };
    check_model("tests/models/relu_add.onnx", "X", s24, 2, "Y", 1);
    check_model("tests/models/mlp.onnx", "X", s864, 2, "P", 1);
    check_model("tests/models/mlp.onnx", "X", s864, 2, "P", 2);
    int64_t digits[4] = { 4, 1, 8, 8 };
    check_model("demo/digits_cnn.onnx", "image", digits, 4, "logits", 1);
    check_model("demo/digits_cnn.onnx", "image", digits, 4, "logits", 2);
    /* ConvTranspose's column matrix and the Resize axis tables (built once per shape) */
    int64_t head[4] = { 1, 8, 10, 10 };
    check_model("tests/models/upsample_head.onnx", "X", head, 4, "Y", 1);
    check_model("tests/models/upsample_head.onnx", "X", head, 4, "Y", 2);
    /* Attention's packed K/V and score strips, RMSNormalization, and the decode path */
    int64_t pre[4] = { 2, 4, 40, 16 }, dec[4] = { 1, 8, 1, 32 };
    check_model("tests/models/attention_prefill.onnx", "X", pre, 4, "Y", 1);
    check_model("tests/models/attention_prefill.onnx", "X", pre, 4, "Y", 2);
    check_model("tests/models/attention_decode.onnx", "X", dec, 4, "Y", 1);
    check_model("tests/models/attention_decode.onnx", "X", dec, 4, "Y", 2);
    check_vad(1);
    check_vad(2);
    check_const_outputs();
    return tu_finish();
}
