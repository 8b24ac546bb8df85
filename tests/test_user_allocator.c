/* A user allocator installed before first use receives every allocation cort makes; installing one
 * after first use is refused; statistics still count. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static atomic_long allocs, frees;
static int context_tag;

static void *my_alloc(void *ctx, size_t size, size_t alignment) {
    if (ctx != &context_tag) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1)) return NULL;
    atomic_fetch_add(&allocs, 1);
    return p;
}

static void my_free(void *ctx, void *p) {
    if (ctx != &context_tag || !p) return;
    atomic_fetch_add(&frees, 1);
    free(p);
}

int main(void) {
    cort_allocator a = { CORT_ALLOCATOR_VERSION, my_alloc, my_free, &context_tag };
    cort_allocator bad = a;
    bad.version = 99;
    CHECK_ERR(cort_set_allocator(&bad), CORT_ERROR_INVALID_ARGUMENT, "version");
    bad = a;
    bad.free = NULL;
    CHECK_CODE(cort_set_allocator(&bad), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_set_allocator(NULL), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_OK(cort_set_allocator(&a));

    cort_session *s = NULL;
    if (CHECK_OK(cort_session_create("tests/models/mlp.onnx", NULL, &s))) {
        int64_t shape[2] = { 4, 64 };
        cort_value *in = NULL, *out = NULL;
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &in));
        const char *in_names[] = { "X" }, *out_names[] = { "P" };
        CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 1, &out));
        cort_value_release(out);
        cort_value_release(in);
        cort_session_release(s);
    }
    long n_alloc = atomic_load(&allocs), n_free = atomic_load(&frees);
    CHECK_MSG(n_alloc > 10, "the user allocator saw only %ld allocations", n_alloc);
    cort_allocator_stats st;
    CHECK_OK(cort_allocator_get_stats(&st));
    CHECK(st.allocations >= (size_t)n_alloc && st.bytes_in_use == 0);
    CHECK_MSG(n_alloc == n_free, "%ld allocations but %ld frees", n_alloc, n_free);

    /* already in use: a second install is refused and the first stays */
    cort_allocator other = a;
    CHECK_ERR(cort_set_allocator(&other), CORT_ERROR_INVALID_ARGUMENT, "already in use");
    int64_t one[1] = { 16 };
    cort_value *v = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, one, 1, &v));
    CHECK(atomic_load(&allocs) > n_alloc);
    cort_value_release(v);
    return tu_finish();
}
