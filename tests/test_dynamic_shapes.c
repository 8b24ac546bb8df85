/* Symbolic batch/time dimensions resolve at run time; every new shape works, and running many
 * different shapes neither leaks nor grows memory without bound (the session's cache is capped). */
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

int main(void) {
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
