/* Process-wide XNNPACK initialization and the allocator XNNPACK allocates through.
 *
 * xnn_initialize(allocator) keeps the allocator pointer (first caller wins, compare-and-swap) and
 * copies the struct inside its own pthread_once; the struct's `context` is then used for every
 * XNNPACK allocation for the rest of the process. So the owner behind that context must be created,
 * published and handed over exactly once, and must never be replaced or freed (ONNX Runtime PR
 * #32489: two sessions both passed a null check, XNNPACK kept the first owner, the second replaced
 * it, and the first was freed under XNNPACK). Here all three steps run inside one cort_once:
 *   - a failed attempt returns its status and a later session retries;
 *   - the owner published by a failed attempt stays published and the retry reuses it (XNNPACK may
 *     already hold its pointer: in this revision the allocator is captured before the hardware
 *     check can fail);
 *   - providers never write the owner or its table afterwards; they only read its identity.
 * The owner itself is one cort_malloc block that is never freed (it outlives every session). */
#ifdef CORT_HAVE_XNNPACK
#include <string.h>
#include "xnn_internal.h"
#include "xnn_test.h"
#include "../../core/once.h"

struct xnn_owner {
    struct xnn_allocator table;     /* handed to xnn_initialize; context = this owner */
    atomic_size_t bytes_in_use;     /* bytes XNNPACK holds through this owner */
    atomic_size_t allocations;
    atomic_size_t transposes;       /* NCHW <-> NHWC layout transposes performed (a statistic for tests) */
};

static cort_once g_xnn_once = CORT_ONCE_INIT;
static xnn_owner *_Atomic g_xnn_owner;

/* Every block carries its size and base pointer just below the returned address, so alignment
 * above cort's 64 bytes, reallocation and statistics all work on top of cort_malloc/cort_free. */
typedef struct block_info { void *base; size_t size; } block_info;

static void *owner_alloc(xnn_owner *o, size_t size, size_t alignment) {
    if (alignment < CORT_ALIGNMENT) alignment = CORT_ALIGNMENT;
    if (alignment & (alignment - 1)) return NULL;
    if (size > SIZE_MAX - alignment) return NULL;
    char *base = cort_malloc(size + alignment);
    if (!base) return NULL;
    uintptr_t p = ((uintptr_t)base + sizeof(block_info) + alignment - 1) & ~(uintptr_t)(alignment - 1);
    block_info *bi = (block_info *)p - 1;
    bi->base = base;
    bi->size = size;
    atomic_fetch_add_explicit(&o->bytes_in_use, size, memory_order_relaxed);
    atomic_fetch_add_explicit(&o->allocations, 1, memory_order_relaxed);
    return (void *)p;
}

static void owner_free(xnn_owner *o, void *p) {
    if (!p) return;
    block_info *bi = (block_info *)p - 1;
    atomic_fetch_sub_explicit(&o->bytes_in_use, bi->size, memory_order_relaxed);
    cort_free(bi->base);
}

static void *xa_allocate(void *ctx, size_t size) { return owner_alloc(ctx, size, CORT_ALIGNMENT); }
static void *xa_aligned_allocate(void *ctx, size_t alignment, size_t size) { return owner_alloc(ctx, size, alignment); }
static void  xa_deallocate(void *ctx, void *p) { owner_free(ctx, p); }
static void *xa_reallocate(void *ctx, void *p, size_t size) {
    if (!p) return owner_alloc(ctx, size, CORT_ALIGNMENT);
    size_t old = ((block_info *)p - 1)->size;
    void *n = owner_alloc(ctx, size, CORT_ALIGNMENT);
    if (!n) return NULL;   /* like realloc: the old block stays valid */
    memcpy(n, p, old < size ? old : size);
    owner_free(ctx, p);
    return n;
}

#ifdef CORT_BROKEN_ONCE
/* Test-only build (negative control): the guard around init_xnnpack is the naive unsynchronized
 * check, so the check-then-create below is exactly ONNX Runtime's old `if (!stored) stored = Create()`.
 * Widen its window by the once-guard's test delay: a cort_once_run whose initializer always fails
 * sleeps for that delay and returns. */
static cort_status *never_done(void *arg) { (void)arg; return cort_error_oom(); }
static void widen_window(void) {
    static cort_once window = CORT_ONCE_INIT;
    cort_status_free(cort_once_run(&window, never_done, NULL));
}
#else
static void widen_window(void) {}
#endif

static cort_status *init_xnnpack(void *arg) {
    (void)arg;
    xnn_owner *o = atomic_load_explicit(&g_xnn_owner, memory_order_acquire);
    if (!o) {   /* a failed earlier attempt may have published (and handed over) one: keep it */
        widen_window();
        o = cort_malloc(sizeof *o);
        if (!o) return cort_error_oom();
        memset(o, 0, sizeof *o);
        atomic_init(&o->bytes_in_use, 0);
        atomic_init(&o->allocations, 0);
        atomic_init(&o->transposes, 0);
        o->table.context = o;
        o->table.allocate = xa_allocate;
        o->table.reallocate = xa_reallocate;
        o->table.deallocate = xa_deallocate;
        o->table.aligned_allocate = xa_aligned_allocate;
        o->table.aligned_deallocate = xa_deallocate;
        /* published before XNNPACK can see it; from here on it is final */
        atomic_store_explicit(&g_xnn_owner, o, memory_order_release);
    }
    enum xnn_status s = xnn_initialize(&o->table);
    if (s != xnn_status_success)
        return cort_error(s == xnn_status_out_of_memory ? CORT_ERROR_OUT_OF_MEMORY : CORT_ERROR_NOT_IMPLEMENTED,
                          "XNNPACK provider: xnn_initialize failed: %s", xnn_status_str(s));
    return NULL;
}

cort_status *xnn_owner_get(xnn_owner **out) {
    CORT_TRY(cort_once_run(&g_xnn_once, init_xnnpack, NULL));
    *out = atomic_load_explicit(&g_xnn_owner, memory_order_acquire);
    return NULL;
}

const char *xnn_status_str(enum xnn_status s) {
    switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid_parameter";
    case xnn_status_invalid_state: return "invalid_state";
    case xnn_status_unsupported_parameter: return "unsupported_parameter";
    case xnn_status_unsupported_hardware: return "unsupported_hardware";
    case xnn_status_out_of_memory: return "out_of_memory";
    }
    return "unknown status";
}

/* Test-only: proves XNNPACK allocates through the owner that every session reports. */
cort_status *cort_xnnpack_test_roundtrip(const void *expected_owner) {
    xnn_owner *o = NULL;
    CORT_TRY(xnn_owner_get(&o));
    if (expected_owner && expected_owner != o)
        return cort_error(CORT_ERROR_RUNTIME, "published XNNPACK owner %p differs from the sessions' %p", (void *)o,
                          expected_owner);
    size_t bytes0 = atomic_load(&o->bytes_in_use), allocs0 = atomic_load(&o->allocations);
    xnn_operator_t op = NULL;
    enum xnn_status s = xnn_create_clamp_nc_f32(4, 4, 4, 0.0f, 1.0f, 0, &op);
    if (s != xnn_status_success)
        return cort_error(CORT_ERROR_RUNTIME, "xnn_create_clamp_nc_f32 failed: %s", xnn_status_str(s));
    size_t allocs1 = atomic_load(&o->allocations), bytes1 = atomic_load(&o->bytes_in_use);
    xnn_delete_operator(op);
    size_t bytes2 = atomic_load(&o->bytes_in_use);
    if (allocs1 == allocs0 || bytes1 <= bytes0)
        return cort_error(CORT_ERROR_RUNTIME,
                          "XNNPACK did not allocate through the published owner %p (it retained another context)",
                          (void *)o);
    if (bytes2 != bytes0)
        return cort_error(CORT_ERROR_RUNTIME, "XNNPACK owner holds %zu bytes after the operator was deleted (%zu before)",
                          bytes2, bytes0);
    return NULL;
}

size_t cort_xnnpack_test_bytes_in_use(void) {
    xnn_owner *o = atomic_load_explicit(&g_xnn_owner, memory_order_acquire);
    return o ? atomic_load(&o->bytes_in_use) : 0;
}

void xnn_owner_count_transpose(xnn_owner *o) {
    if (o) atomic_fetch_add_explicit(&o->transposes, 1, memory_order_relaxed);
}

size_t cort_xnnpack_test_transpose_count(void) {
    xnn_owner *o = atomic_load_explicit(&g_xnn_owner, memory_order_acquire);
    return o ? atomic_load(&o->transposes) : 0;
}
#else
#include "xnn_test.h"
#include "../../core/status.h"
cort_status *cort_xnnpack_test_roundtrip(const void *expected_owner) {
    (void)expected_owner;
    return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "the XNNPACK provider is not built into this library");
}
size_t cort_xnnpack_test_bytes_in_use(void) { return 0; }
size_t cort_xnnpack_test_transpose_count(void) { return 0; }
int cort_xnnpack_test_passthrough(const struct cort_node *node) { (void)node; return -1; }
#endif
