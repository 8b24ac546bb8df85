/* Fresh-process race test of process-wide initialization (the XNNPACK allocator lesson).
 *
 * The parent re-executes this binary once per trial, so each trial starts before anything in cort
 * was initialized. In a trial, 32 threads wait at a barrier, are released together, and each
 * creates a session. Checks: no error; every session reports the same process-wide allocator;
 * after every session and reference is released the allocator still works and its statistics
 * balance; one more session gets the same owner.
 *
 *   test_race                      200 trials, all must pass (default test run)
 *   test_race --trials N           N trials
 *   test_race --expect-failures    negative control (CORT_BROKEN_ONCE build): passes if at least
 *                                  half of the trials fail
 *   test_race --trial              one trial in this process (used by the parent)
 * CORT_TEST_ONCE_DELAY_US widens the window between the once-guard's check and its publication
 * (default 2000 µs in trials); in the correct build the window is inside the lock and harmless. */
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "core/once.h"

extern char **environ;
#define THREADS 32

static pthread_barrier_t barrier;
typedef struct slot { cort_session *s; cort_status *st; const void *alloc; } slot;

static void *racer(void *p) {
    slot *sl = p;
    cort_session_options *o = NULL;
    pthread_barrier_wait(&barrier);
    sl->st = cort_session_options_create(&o);
    if (!sl->st) sl->st = cort_session_options_set_threads(o, 1);
    if (!sl->st) sl->st = cort_session_create("tests/models/relu_add.onnx", o, &sl->s);
    cort_session_options_free(o);
    if (!sl->st) sl->alloc = cort_session_allocator(sl->s, "cpu");
    return NULL;
}

static int one_trial(void) {
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
    int bad = 0;
    const void *first = NULL;
    for (int i = 0; i < THREADS; i++) {
        if (slots[i].st) {
            fprintf(stderr, "thread %d: %s\n", i, cort_status_message(slots[i].st));
            cort_status_free(slots[i].st);
            bad++;
            continue;
        }
        if (!slots[i].alloc) { fprintf(stderr, "thread %d: no allocator\n", i); bad++; }
        if (!first) first = slots[i].alloc;
        else if (slots[i].alloc != first) {
            fprintf(stderr, "thread %d: allocator %p differs from %p\n", i, slots[i].alloc, first);
            bad++;
        }
    }
    for (int i = 0; i < THREADS; i++) cort_session_release(slots[i].s);
    /* every session and reference is gone: the retained owner must still work and balance */
    cort_allocator_stats before, after;
    cort_status *st = cort_allocator_get_stats(&before);
    if (st) { bad++; cort_status_free(st); }
    if (before.bytes_in_use != 0) {
        fprintf(stderr, "after releasing everything, %zu bytes are still in use\n", before.bytes_in_use);
        bad++;
    }
    int64_t shape[1] = { 16 };
    cort_value *v = NULL;
    st = cort_tensor_create(CORT_TYPE_FLOAT, shape, 1, &v);   /* a 64-byte allocation through the owner */
    if (st) { bad++; cort_status_free(st); }
    cort_status_free(cort_allocator_get_stats(&after));
    if (after.bytes_in_use <= before.bytes_in_use) { fprintf(stderr, "allocation not counted\n"); bad++; }
    cort_value_release(v);
    cort_status_free(cort_allocator_get_stats(&after));
    if (after.bytes_in_use != before.bytes_in_use) { fprintf(stderr, "allocation not returned\n"); bad++; }
    /* one more session gets the same owner */
    cort_session *s = NULL;
    st = cort_session_create("tests/models/relu_add.onnx", NULL, &s);
    if (st) { bad++; cort_status_free(st); }
    else {
        if (cort_session_allocator(s, "cpu") != first) { fprintf(stderr, "new session got another allocator\n"); bad++; }
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
    if (tu_fresh_process_trials("race", argv[0], trials, expect_failures)) return 2;
    return tu_finish();
}
