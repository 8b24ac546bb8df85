/* Allocation-failure injection: the N-th allocation (and every later one) fails, for every N over
 * session creation and over a run. Each must fail cleanly with CORT_ERROR_OUT_OF_MEMORY, leak
 * nothing (bytes in use return to the baseline) and never crash. */
#include <stdint.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/bufcache.h"
#include "session/session.h"

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

static void walk_create(const char *path) {
    size_t base = in_use();
    int bad_code = 0, leaks = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        cort_session *s = NULL;
        cort_test_alloc_fail_at(n);
        cort_status *st = cort_session_create(path, NULL, &s);
        long made = cort_test_alloc_count();
        cort_test_alloc_fail_at(0);
        if (!st) { cort_session_release(s); if (made < n) break; continue; }
        if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY) {
            if (bad_code++ < 5) fprintf(stderr, "%s: failing allocation %ld gave [%s] %s\n", path, n,
                                        cort_code_name(cort_status_code(st)), cort_status_message(st));
        }
        cort_status_free(st);
        if (in_use() != base && leaks++ < 5)
            fprintf(stderr, "%s: failing allocation %ld leaked %zd bytes\n", path, n, (ssize_t)(in_use() - base));
    }
    printf("%s: session creation makes %ld allocations; every one failed cleanly: %s\n", path, n - 1,
           bad_code || leaks ? "no" : "yes");
    CHECK_MSG(bad_code == 0, "%s: %d injected failures were not reported as OUT_OF_MEMORY", path, bad_code);
    CHECK_MSG(leaks == 0, "%s: %d injected failures leaked", path, leaks);
    CHECK(n < 100000);
}

static void walk_run(const char *path, const char *in_name, const int64_t *shape, size_t rank, const char *out_name) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(path, NULL, &s))) return;
    cort_value *in = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, rank, &in));
    size_t base = in_use() - cort_bufcache_cached_bytes(s->cache);
    int bad_code = 0, leaks = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        cort_value *out = NULL;
        cort_test_alloc_fail_at(n);
        cort_status *st = cort_session_run(s, NULL, &in_name, &in, 1, &out_name, 1, &out);
        long made = cort_test_alloc_count();
        cort_test_alloc_fail_at(0);
        if (!st) { cort_value_release(out); if (made < n) break; continue; }
        if (out) { bad_code++; cort_value_release(out); }
        if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY && bad_code++ < 5)
            fprintf(stderr, "%s run: failing allocation %ld gave [%s] %s\n", path, n, cort_code_name(cort_status_code(st)),
                    cort_status_message(st));
        cort_status_free(st);
        /* blocks the failed run already used went back to the session's cache: not a leak */
        size_t held = in_use() - cort_bufcache_cached_bytes(s->cache);
        if (held != base && leaks++ < 5)
            fprintf(stderr, "%s run: failing allocation %ld leaked %zd bytes\n", path, n, (ssize_t)(held - base));
    }
    printf("%s: a run makes %ld allocations; every one failed cleanly: %s\n", path, n - 1, bad_code || leaks ? "no" : "yes");
    CHECK(bad_code == 0 && leaks == 0);
    cort_value_release(in);
    cort_session_release(s);
}

/* The session weight arena: blocks carved while it is bound are 64-byte aligned, disjoint, counted
 * in the statistics and uncounted by cort_free; failure injection reaches them too. */
static void test_huge_arena(void) {
    size_t base = in_use();
    cort_huge_arena *a = NULL;
    if (!CHECK_OK(cort_huge_arena_create(&a))) return;
    cort_huge_arena *prev = cort_huge_arena_bind(a);
    /* small blocks, blocks over half a chunk, then past 32 MB where chunks may use huge pages */
    static const size_t sizes[] = { 1, 100, 4096, 1u << 20, 3u << 20, 9u << 20, 64, 2u << 20, 24u << 20, 5000, 3u << 20, 77 };
    char *blk[sizeof sizes / sizeof sizes[0]];
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        blk[i] = cort_malloc_huge(sizes[i]);
        CHECK_MSG(blk[i] && (uintptr_t)blk[i] % CORT_ALIGNMENT == 0, "arena block %zu: %p", i, (void *)blk[i]);
        if (!blk[i]) continue;
        memset(blk[i], (int)i + 1, sizes[i]);
        total += sizes[i];
    }
    CHECK_MSG(in_use() - base >= total, "arena blocks counted: %zu of %zu bytes", in_use() - base, total);
    /* disjoint: every block still holds its own fill */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (!blk[i]) continue;
        int ok = 1;
        for (size_t b = 0; b < sizes[i]; b += 997) ok &= blk[i][b] == (char)(i + 1);
        ok &= blk[i][sizes[i] - 1] == (char)(i + 1);
        CHECK_MSG(ok, "arena block %zu overwritten", i);
    }
    cort_test_alloc_fail_at(1);
    CHECK(cort_malloc_huge(1000) == NULL);   /* injected failure inside the arena */
    cort_test_alloc_fail_at(0);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) cort_free(blk[i]);
    CHECK(cort_huge_arena_bind(prev) == a);
    cort_huge_arena_free(a);
    CHECK_MSG(in_use() == base, "arena: %zd bytes still counted", (ssize_t)(in_use() - base));
    /* unbound: an ordinary block, big ones huge-page aligned */
    char *p = cort_malloc_huge(9u << 20);
    CHECK(p && (uintptr_t)p % CORT_ALIGNMENT == 0);
    if (p) memset(p, 1, 9u << 20);
    cort_free(p);
    CHECK(in_use() == base);
}

int main(void) {
    test_huge_arena();
    /* OOM status must not need an allocation */
    cort_test_alloc_fail_at(1);
    cort_session *s = NULL;
    cort_status *st = cort_session_create("tests/models/relu_add.onnx", NULL, &s);
    cort_test_alloc_fail_at(0);
    CHECK(cort_status_code(st) == CORT_ERROR_OUT_OF_MEMORY && strstr(cort_status_message(st), "memory"));
    cort_status_free(st);

    walk_create("tests/models/relu_add.onnx");
    walk_create("tests/models/mlp.onnx");
    walk_create("tests/models/local_function.onnx");
    walk_create("tests/models/slow_loop.onnx");
    int64_t s24[2] = { 2, 4 }, s864[2] = { 3, 64 };
    walk_run("tests/models/relu_add.onnx", "X", s24, 2, "Y");
    walk_run("tests/models/mlp.onnx", "X", s864, 2, "P");
    return tu_finish();
}
