/* Fresh-process race test of XNNPACK's process-wide initialization (ONNX Runtime PR #32489).
 *
 * The parent re-executes this binary once per trial, so each trial starts before XNNPACK was
 * initialized. In a trial, 32 threads wait at a barrier, are released together, and each creates
 * an XNNPACK session. Checks:
 *   - no error, and every session reports the same cort_session_allocator(s, "xnnpack");
 *   - after every session and reference is released, XNNPACK still allocates through the context it
 *     retained, that context is the owner the sessions reported, and it balances (an operator is
 *     created and deleted: cort_xnnpack_test_roundtrip); XNNPACK holds no bytes any more;
 *   - a 64-byte allocation and free through cort's allocator works and balances;
 *   - one more session gets the same owner.
 * cort's CPU allocator is initialized before the threads start, so the race is only XNNPACK's.
 *
 *   test_xnnpack_race                    200 trials, all must pass (default test run)
 *   test_xnnpack_race --trials N         N trials
 *   test_xnnpack_race --expect-failures  negative control (CORT_BROKEN_ONCE build): passes if at
 *                                        least half of the trials fail
 *   test_xnnpack_race --trial            one trial in this process (used by the parent)
 * CORT_TEST_ONCE_DELAY_US widens the window between the once-guard's check and the initializer
 * (default 2000 µs); in the correct build the window is inside the lock and harmless. */
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "core/once.h"
#include "providers/xnnpack/xnn_test.h"

extern char **environ;
#define THREADS 32
#define MODEL "tests/models/xnnpack_conv.onnx"

static pthread_barrier_t barrier;
typedef struct slot { cort_session *s; cort_status *st; const void *alloc; } slot;

static cort_status *xnn_session(cort_session **out) {
    cort_session_options *o = NULL;
    cort_status *st = cort_session_options_create(&o);
    if (!st) st = cort_session_options_set_threads(o, 1);
    if (!st) st = cort_session_options_append_provider(o, "xnnpack", NULL, NULL, 0);
    if (!st) st = cort_session_create(MODEL, o, out);
    cort_session_options_free(o);
    return st;
}

static void *racer(void *p) {
    slot *sl = p;
    pthread_barrier_wait(&barrier);
    sl->st = xnn_session(&sl->s);
    if (!sl->st) sl->alloc = cort_session_allocator(sl->s, "xnnpack");
    return NULL;
}

static int one_trial(void) {
    cort_allocator_stats before, after;
    cort_status *st = cort_allocator_get_stats(&before);   /* CPU allocator ready: only XNNPACK races */
    int bad = 0;
    if (st) { bad++; cort_status_free(st); }
    const char *d = getenv("CORT_TEST_ONCE_DELAY_US");
    cort_once_test_set_delay_us(d ? atoi(d) : 2000);
    pthread_t th[THREADS];
    slot slots[THREADS];
    memset(slots, 0, sizeof slots);
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, racer, &slots[i]);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    cort_once_test_set_delay_us(0);
    const void *first = NULL;
    for (int i = 0; i < THREADS; i++) {
        if (slots[i].st) {
            fprintf(stderr, "thread %d: %s\n", i, cort_status_message(slots[i].st));
            cort_status_free(slots[i].st);
            bad++;
            continue;
        }
        if (!slots[i].alloc) { fprintf(stderr, "thread %d: no xnnpack allocator\n", i); bad++; }
        if (!first) first = slots[i].alloc;
        else if (slots[i].alloc != first) {
            fprintf(stderr, "thread %d: xnnpack allocator %p differs from %p\n", i, slots[i].alloc, first);
            bad++;
        }
    }
    for (int i = 0; i < THREADS; i++) cort_session_release(slots[i].s);
    /* every session and reference is gone: XNNPACK must still allocate through the owner they reported */
    if (cort_xnnpack_test_bytes_in_use() != 0) {
        fprintf(stderr, "XNNPACK still holds %zu bytes after every session was released\n", cort_xnnpack_test_bytes_in_use());
        bad++;
    }
    st = cort_xnnpack_test_roundtrip(first);
    if (st) { fprintf(stderr, "roundtrip: %s\n", cort_status_message(st)); cort_status_free(st); bad++; }
    /* a 64-byte allocation and free through cort's allocator */
    cort_status_free(cort_allocator_get_stats(&before));
    int64_t shape[1] = { 16 };
    cort_value *v = NULL;
    st = cort_tensor_create(CORT_TYPE_FLOAT, shape, 1, &v);
    if (st) { bad++; cort_status_free(st); }
    cort_status_free(cort_allocator_get_stats(&after));
    if (after.bytes_in_use < before.bytes_in_use + 64) { fprintf(stderr, "allocation not counted\n"); bad++; }
    cort_value_release(v);
    cort_status_free(cort_allocator_get_stats(&after));
    if (after.bytes_in_use != before.bytes_in_use) { fprintf(stderr, "allocation not returned\n"); bad++; }
    /* one more session gets the same owner */
    cort_session *s = NULL;
    st = xnn_session(&s);
    if (st) { fprintf(stderr, "new session: %s\n", cort_status_message(st)); bad++; cort_status_free(st); }
    else {
        if (cort_session_allocator(s, "xnnpack") != first) { fprintf(stderr, "new session got another allocator\n"); bad++; }
        cort_session_release(s);
    }
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    int trials = 200, expect_failures = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trial")) return one_trial();
        if (!strcmp(argv[i], "--trials") && i + 1 < argc) trials = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-failures")) expect_failures = 1;
    }
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    cort_status *st = cort_session_options_append_provider(o, "xnnpack", NULL, NULL, 0);
    cort_session_options_free(o);
    if (cort_status_code(st) == CORT_ERROR_NOT_IMPLEMENTED) {
        cort_status_free(st);
        printf("XNNPACK provider not built: skipped\n");
        return tu_finish();
    }
    CHECK_OK(st);
    if (tu_fresh_process_trials("xnnpack race", argv[0], trials, expect_failures)) return 2;
    return tu_finish();
}
