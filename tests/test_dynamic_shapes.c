/* Symbolic batch/time dimensions resolve at run time; every new shape works, and running many
 * different shapes neither leaks nor grows memory without bound (the session's cache is capped).
 * Kernels that keep per-shape tables from their first run (Resize's axis tables, DFT's FFT plan)
 * still compute every other shape right: one session alternating shapes matches a fresh session
 * per shape bit for bit. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/bufcache.h"
#include "session/session.h"

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

/* Runs X of shape dims (rank 3 or 4, deterministic contents) through session s; NULL on failure. */
static cort_value *run_x(cort_session *s, const int64_t *dims, size_t rank) {
    cort_value *x = NULL, *y = NULL;
    if (!CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, dims, rank, &x))) return NULL;
    float *d = cort_tensor_data(x);
    for (size_t i = 0; i < cort_tensor_element_count(x); i++) d[i] = (float)((i * 7 + (size_t)dims[1]) % 19) / 9.0f - 1.0f;
    const char *in = "X", *out = "Y";
    CHECK_OK(cort_session_run(s, NULL, &in, &x, 1, &out, 1, &y));
    cort_value_release(x);
    return y;
}

/* Runs 12 inputs alternating over 3 shapes through one session of `path` and compares each
 * output with a fresh session's (its first run) for that shape. */
static void check_alternating(const char *path, const int64_t shapes[3][4], size_t rank, size_t out_per_in) {
    cort_value *ref[3] = { NULL, NULL, NULL };
    for (int k = 0; k < 3; k++) {
        cort_session *f = NULL;
        if (CHECK_OK(cort_session_create(path, NULL, &f))) ref[k] = run_x(f, shapes[k], rank);
        cort_session_release(f);
    }
    cort_session *s = NULL;
    size_t before = in_use();
    if (!CHECK_OK(cort_session_create(path, NULL, &s))) goto done;
    int bad = 0;
    for (int r = 0; r < 12; r++) {
        const int k = (r * 5 + r / 3) % 3;
        cort_value *y = run_x(s, shapes[k], rank);
        size_t want = out_per_in;
        for (size_t d = 0; d < rank; d++) want *= (size_t)shapes[k][d];
        int same = y && ref[k] && cort_tensor_element_count(y) == cort_tensor_element_count(ref[k]) &&
                   cort_tensor_element_count(y) == want &&
                   !memcmp(cort_tensor_data(y), cort_tensor_data(ref[k]), cort_tensor_bytes(y));
        if (!same) {
            if (!bad) fprintf(stderr, "%s run %d (shape %d) differs from a fresh session's\n", path, r, k);
            bad++;
        }
        cort_value_release(y);
    }
    CHECK_MSG(bad == 0, "%s: %d of 12 runs alternating 3 shapes differ from fresh sessions", path, bad);
    cort_session_release(s);
    CHECK_MSG(in_use() == before, "%s: bytes in use %zu before the session, %zu after it", path, before, in_use());
done:
    for (int k = 0; k < 3; k++) cort_value_release(ref[k]);
}

static void check_kept_tables(void) {
    /* Resize linear 2x then nearest 3x: 36 outputs per input element */
    const int64_t shapes[3][4] = { { 1, 3, 5, 7 }, { 1, 3, 9, 4 }, { 1, 3, 1, 12 } };
    check_alternating("tests/models/resize_dynamic.onnx", shapes, 4, 36);
    /* DFT of lengths 16 (radix 2), 12 and 7 (Bluestein) */
    const int64_t lens[3][4] = { { 1, 16, 2 }, { 1, 12, 2 }, { 1, 7, 2 } };
    check_alternating("tests/models/dft_dynamic.onnx", lens, 3, 1);
}

int main(void) {
    check_kept_tables();
    size_t base0 = in_use();
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create("tests/models/realworld/vad_if_lstm/model.onnx", NULL, &s))) return tu_finish();
    size_t base = in_use() - cort_bufcache_cached_bytes(s->cache);
    const char *in_names[] = { "x", "sr", "h", "c" }, *out_names[] = { "prob", "hn", "cn" };
    unsigned seed = 7;
    int bad_shape = 0, leaked = 0;
    size_t max_cached = 0;
    for (int r = 0; r < 300; r++) {
        seed = seed * 1103515245u + 12345u;
        int64_t b = 1 + (seed >> 16) % 4, t = 1 + (seed >> 8) % 97;
        int64_t xs[3] = { b, t, 16 }, hs[3] = { 1, b, 24 };
        cort_value *x = NULL, *sr = NULL, *h = NULL, *c = NULL, *outs[3] = { NULL, NULL, NULL };
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, xs, 3, &x));
        CHECK_OK(cort_tensor_create(CORT_TYPE_INT64, NULL, 0, &sr));
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, hs, 3, &h));
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, hs, 3, &c));
        *(int64_t *)cort_tensor_data(sr) = r % 2 ? 16000 : 8000;
        float *xd = cort_tensor_data(x);
        for (size_t i = 0; i < cort_tensor_element_count(x); i++) xd[i] = (float)((i * 13 + (size_t)r) % 23) / 11.0f - 1.0f;
        cort_value *ins[4] = { x, sr, h, c };
        if (CHECK_OK(cort_session_run(s, NULL, in_names, ins, 4, out_names, 3, outs))) {
            const int64_t *ps = cort_tensor_shape(outs[0]);
            if (cort_tensor_rank(outs[0]) != 3 || ps[0] != b || ps[1] != t || ps[2] != 1) bad_shape++;
            if (cort_tensor_shape(outs[1])[1] != b) bad_shape++;
        }
        for (int k = 0; k < 3; k++) cort_value_release(outs[k]);
        for (int k = 0; k < 4; k++) cort_value_release(ins[k]);
        size_t cached = cort_bufcache_cached_bytes(s->cache);
        if (cached > max_cached) max_cached = cached;
        if (in_use() - cached != base) leaked++;
    }
    printf("300 runs over random (batch, time): max cached %zu bytes (cap %zu)\n", max_cached, (size_t)CORT_SESSION_CACHE_BYTES);
    CHECK_MSG(bad_shape == 0, "%d runs returned wrong output shapes", bad_shape);
    CHECK_MSG(leaked == 0, "%d runs left memory behind", leaked);
    CHECK(max_cached <= CORT_SESSION_CACHE_BYTES);
    cort_session_release(s);
    CHECK_MSG(in_use() == base0, "bytes in use %zu before the session, %zu after it", base0, in_use());
    return tu_finish();
}
