/* Weights left in the mapped model file (lazy initializers, src/core/value.h): a float initializer
 * whose raw_data is misaligned in a mapped file is copied only if something reads it in place.
 * tests/models/lazy_{aligned,misaligned}.onnx hold one graph (make_lazy_models.py) whose big
 * initializers start at offsets 0 mod 4 in one file and 2 mod 4 in the other. Checks, at
 * optimization levels 0 and 2 and 1 and 2 threads:
 *  - every output of the misaligned file equals the aligned file's bit for bit, and the same
 *    model loaded from memory (where every misaligned initializer is copied at load), over
 *    repeated runs — the packed weights, the BN-folded one, the MatMul + bias fusion's, the ones
 *    read in place (shared with an Add, a graph output, depthwise weights) and the one constant
 *    folding reads;
 *  - the memory a session holds after creation: the misaligned file's session holds exactly the
 *    copies of the 4 initializers read in place (264 KB) more than the aligned file's, give or
 *    take the small tensors — not also the 865 KB of weights that are only packed, which is what
 *    it held when every misaligned initializer was copied at load;
 *  - the peak of creation (through a counting allocator): the misaligned file's exceeds the aligned
 *    file's by no more than those copies, give or take the small tensors — the buffer the Conv
 *    weights are copied through to be packed (as big as W1) is gone before the MatMul and Gemm
 *    weights after them are packed. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

#define N_OUT 6
#define COPIED_BYTES ((size_t)3 * (128 * 128 * 4) + 2048 * 9 * 4)   /* Ws, Wo, Wb, Wd */
#define PACKED_BYTES ((size_t)(2 * 128 * 64 * 9 + 128 * 128 + 128 * 300 + 64 * 300) * 4)   /* W1, W3, W2, Wm, Wg */
#define SLACK ((size_t)32 << 10)   /* tensors under 64 KB are copied when misaligned in either file */

typedef struct { cort_value *out[N_OUT]; size_t held, peak; } result;

/* A counting allocator whose peak can be restarted (cort_allocator_stats' never comes down). */
static atomic_size_t g_in_use, g_peak;

static void *count_alloc(void *ctx, size_t size, size_t alignment) {
    (void)ctx;
    if (alignment < 64) alignment = 64;
    char *base = aligned_alloc(alignment, (size + 2 * alignment - 1) / alignment * alignment);
    if (!base) return NULL;
    char *p = base + alignment;   /* the block's base and size just below what cort gets */
    ((void **)p)[-1] = base;
    ((size_t *)p)[-2] = size;
    size_t now = atomic_fetch_add(&g_in_use, size) + size, pk = atomic_load(&g_peak);
    while (now > pk && !atomic_compare_exchange_weak(&g_peak, &pk, now)) {}
    return p;
}

static void count_free(void *ctx, void *ptr) {
    (void)ctx;
    if (!ptr) return;
    atomic_fetch_sub(&g_in_use, ((size_t *)ptr)[-2]);
    free(((void **)ptr)[-1]);
}

static cort_value *input(const int64_t *shape, size_t rank, unsigned seed) {
    cort_value *v = NULL;
    if (!CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, rank, &v))) return NULL;
    float *d = cort_tensor_data(v);
    size_t n = 1;
    for (size_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    for (size_t i = 0; i < n; i++) d[i] = (float)((int)((i * 2654435761u + seed) % 97) - 48) / 32.0f;
    return v;
}

/* Creates a session (from the file, or from its bytes with from_memory), records what creation
 * left allocated, runs it `runs` times and keeps the last outputs. */
static int run_model(const char *path, int from_memory, int level, int threads, int runs, result *r) {
    memset(r, 0, sizeof *r);
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    CHECK_OK(cort_session_options_set_optimization_level(o, level));
    size_t len = 0;
    void *bytes = from_memory ? tu_read_file(path, &len) : NULL;
    cort_allocator_stats before, after;
    CHECK_OK(cort_allocator_get_stats(&before));
    atomic_store(&g_peak, atomic_load(&g_in_use));
    int ok = from_memory ? CHECK_OK(cort_session_create_from_memory(bytes, len, o, &s))
                         : CHECK_OK(cort_session_create(path, o, &s));
    CHECK_OK(cort_allocator_get_stats(&after));
    cort_session_options_free(o);
    free(bytes);
    if (!ok) return 0;
    r->held = after.bytes_in_use - before.bytes_in_use;
    r->peak = atomic_load(&g_peak) - before.bytes_in_use;
    const int64_t xs[4] = { 1, 64, 8, 8 }, x2s[4] = { 1, 2048, 2, 2 };
    cort_value *in[2] = { input(xs, 4, 1), input(x2s, 4, 7) };
    const char *in_names[2] = { "x", "x2" }, *out_names[N_OUT] = { "y1", "y2", "y3", "y4", "y5", "Wo" };
    for (int k = 0; k < runs && ok; k++) {
        for (int i = 0; i < N_OUT; i++) { cort_value_release(r->out[i]); r->out[i] = NULL; }
        ok = CHECK_OK(cort_session_run(s, NULL, in_names, in, 2, out_names, N_OUT, r->out));
    }
    cort_value_release(in[0]);
    cort_value_release(in[1]);
    cort_session_release(s);
    return ok;
}

static void result_free(result *r) {
    for (int i = 0; i < N_OUT; i++) cort_value_release(r->out[i]);
}

static size_t count_of(const cort_value *v) {
    size_t n = 1;
    for (size_t i = 0; i < cort_tensor_rank(v); i++) n *= (size_t)cort_tensor_shape(v)[i];
    return n;
}

/* Outputs equal bit for bit (tol 0) or within tol; and not all zero (the check can fail). */
static void same_outputs(const char *what, const result *a, const result *b, float tol) {
    for (int i = 0; i < N_OUT; i++) {
        if (!a->out[i] || !b->out[i]) { CHECK_MSG(0, "%s: output %d missing", what, i); continue; }
        size_t n = count_of(a->out[i]);
        CHECK_MSG(n == count_of(b->out[i]), "%s: output %d has %zu vs %zu values", what, i, n, count_of(b->out[i]));
        if (n != count_of(b->out[i])) continue;
        const float *x = cort_tensor_data(a->out[i]), *y = cort_tensor_data(b->out[i]);
        size_t bad = 0, nonzero = 0;
        for (size_t k = 0; k < n; k++) {
            nonzero += x[k] != 0.0f;
            if (tol == 0.0f ? memcmp(&x[k], &y[k], sizeof(float)) != 0 : !(fabsf(x[k] - y[k]) <= tol * (1.0f + fabsf(y[k])))) {
                if (!bad) fprintf(stderr, "%s: output %d [%zu] %.9g vs %.9g\n", what, i, k, x[k], y[k]);
                bad++;
            }
        }
        CHECK_MSG(!bad, "%s: output %d differs in %zu of %zu values", what, i, bad, n);
        CHECK_MSG(nonzero > n / 2, "%s: output %d is mostly zero (%zu of %zu nonzero)", what, i, nonzero, n);
    }
}

int main(void) {
    const cort_allocator counting = { CORT_ALLOCATOR_VERSION, count_alloc, count_free, NULL };
    if (!CHECK_OK(cort_set_allocator(&counting))) return tu_finish();
    const char *al = "tests/models/lazy_aligned.onnx", *mis = "tests/models/lazy_misaligned.onnx";
    result ref0;
    if (!run_model(al, 0, 0, 1, 1, &ref0)) return tu_finish();
    for (int level = 0; level <= 2; level += 2)
        for (int threads = 1; threads <= 2; threads++) {
            char what[96];
            result a, m, mem;
            int ok = run_model(al, 0, level, threads, 3, &a);
            ok &= run_model(mis, 0, level, threads, 3, &m);
            ok &= run_model(mis, 1, level, threads, 3, &mem);
            if (ok) {
                snprintf(what, sizeof what, "level %d, %d threads: misaligned vs aligned file", level, threads);
                same_outputs(what, &m, &a, 0.0f);
                snprintf(what, sizeof what, "level %d, %d threads: misaligned file vs memory", level, threads);
                same_outputs(what, &m, &mem, 0.0f);
                snprintf(what, sizeof what, "level %d, %d threads: vs level 0, 1 thread", level, threads);
                same_outputs(what, &m, &ref0, 1e-4f);
                const long long extra = (long long)m.held - (long long)a.held;
                printf("level %d, %d threads: session holds %zu bytes (aligned file %zu): %lld more; copies of the "
                       "weights read in place %zu, weights only packed %zu\n",
                       level, threads, m.held, a.held, extra, COPIED_BYTES, PACKED_BYTES);
                CHECK_MSG(extra >= (long long)(COPIED_BYTES - SLACK) && extra <= (long long)(COPIED_BYTES + SLACK),
                          "level %d, %d threads: the misaligned file's session holds %lld bytes more than the "
                          "aligned one's, expected the %zu of the copies read in place (packed-only weights: %zu)",
                          level, threads, extra, COPIED_BYTES, PACKED_BYTES);
                const long long extra_peak = (long long)m.peak - (long long)a.peak;
                printf("level %d, %d threads: creation peak %zu bytes (aligned file %zu): %lld more\n", level, threads,
                       m.peak, a.peak, extra_peak);
                CHECK_MSG(extra_peak <= (long long)(COPIED_BYTES + SLACK),
                          "level %d, %d threads: the misaligned file's creation peaks %lld bytes above the aligned "
                          "one's, more than the %zu of the copies read in place (the Conv weights' copy buffer "
                          "still held while the MatMul/Gemm weights are packed?)",
                          level, threads, extra_peak, COPIED_BYTES);
            }
            result_free(&a);
            result_free(&m);
            result_free(&mem);
        }
    result_free(&ref0);
    return tu_finish();
}
