/* libFuzzer target 2: session creation, then runs. Every tensor input gets a value of its declared
 * element type and shape (unknown or symbolic dims = 1..3, chosen from the input bytes' hash; at
 * most 4096 elements per input, else the model is not run), filled with small values, so kernels
 * see what a real caller sends; each model runs twice (the second run takes the steady-state
 * paths: recycled buffers, cached plans) and the outputs must be the same both times for the same
 * inputs (bitwise, NaN included) unless the model holds random ops or control flow. A watchdog
 * cancels a run after 2 s (a Loop with a huge trip count is a valid model, not a finding), through
 * the public cort_run_options_set_terminate. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cort.h"

#define MAX_IN 16
#define MAX_ELEMS 4096

static cort_run_options *g_ro;
static _Atomic long g_started_ms;   /* 0 = no run in flight */

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void *watchdog(void *arg) {
    (void)arg;
    for (;;) {
        usleep(20000);
        long s = g_started_ms;
        if (s && now_ms() - s > 2000) cort_run_options_set_terminate(g_ro, 1);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    if (cort_run_options_create(&g_ro)) return 0;
    pthread_t t;
    if (!pthread_create(&t, NULL, watchdog, NULL)) pthread_detach(t);
    return 0;
}

static uint64_t hash(const uint8_t *d, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

static void fill(cort_value *v, uint64_t seed) {
    size_t n = cort_tensor_element_count(v);
    void *p = cort_tensor_data(v);
    cort_type t = cort_tensor_type(v);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int small = (int)((seed >> 33) % 7) - 2;   /* -2..4: valid indices and axes most of the time */
        switch (t) {
        case CORT_TYPE_FLOAT: ((float *)p)[i] = (float)small * 0.75f; break;
        case CORT_TYPE_DOUBLE: ((double *)p)[i] = small * 0.75; break;
        case CORT_TYPE_INT64: ((int64_t *)p)[i] = small; break;
        case CORT_TYPE_INT32: ((int32_t *)p)[i] = small; break;
        case CORT_TYPE_INT8: ((int8_t *)p)[i] = (int8_t)small; break;
        case CORT_TYPE_UINT8: case CORT_TYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(small & 1); break;
        default: break;   /* zero-filled by cort_tensor_create; strings "" */
        }
    }
}

static int same(const cort_value *a, const cort_value *b) {
    if (cort_value_kind(a) != cort_value_kind(b)) return 0;
    if (cort_value_kind(a) != 1) return 1;   /* sequences etc.: compared by kind only */
    if (cort_tensor_type(a) != cort_tensor_type(b) || cort_tensor_rank(a) != cort_tensor_rank(b)) return 0;
    if (memcmp(cort_tensor_shape(a), cort_tensor_shape(b), cort_tensor_rank(a) * sizeof(int64_t))) return 0;
    if (cort_tensor_type(a) == CORT_TYPE_STRING) return 1;
    return !memcmp(cort_tensor_data(a), cort_tensor_data(b), cort_tensor_bytes(a));
}

static int has_random_op(const cort_session *s) {
    for (size_t i = 0; i < cort_session_node_count(s); i++) {
        const char *name, *op, *prov;
        if (cort_session_node_info(s, i, &name, &op, &prov)) return 1;
        /* control-flow bodies are not listed here: they may hold random ops too */
        if (!strncmp(op, "Random", 6) || !strcmp(op, "Bernoulli") || !strcmp(op, "Multinomial") ||
            !strcmp(op, "Dropout") || !strcmp(op, "If") || !strcmp(op, "Loop") || !strcmp(op, "Scan") ||
            !strcmp(op, "SequenceMap"))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cort_session_options *o = NULL;
    if (cort_session_options_create(&o)) return 0;
    cort_status_free(cort_session_options_set_threads(o, 1));
    cort_status_free(cort_session_options_set_max_tensor_bytes(o, (uint64_t)64 << 20));
    cort_status_free(cort_session_options_set_fold_budget(o, (uint64_t)1 << 20));
    cort_session *s = NULL;
    cort_status *st = cort_session_create_from_memory(data, size, o, &s);
    cort_session_options_free(o);
    if (st) { cort_status_free(st); return 0; }
    size_t ni = cort_session_input_count(s), no = cort_session_output_count(s);
    cort_value *in[MAX_IN] = { 0 };
    const char *names[MAX_IN], *onames[MAX_IN];
    uint64_t h = hash(data, size);
    int ok = ni <= MAX_IN && no <= MAX_IN && no > 0;
    for (size_t i = 0; ok && i < ni; i++) {
        cort_value_type vt;
        int64_t dims[16];
        names[i] = cort_session_input_name(s, i);
        if (cort_session_input_type(s, i, &vt, dims, 16)) { ok = 0; break; }
        if (vt.kind != 1 || vt.rank < 0 || vt.rank > 16) { ok = 0; break; }
        size_t n = 1;
        for (int d = 0; d < vt.rank; d++) {
            if (dims[d] < 0) dims[d] = 1 + (int64_t)((h >> (2 * d)) % 3);
            if (dims[d] > MAX_ELEMS || (n *= (size_t)dims[d]) > MAX_ELEMS) { ok = 0; break; }
        }
        if (!ok) break;
        if ((st = cort_tensor_create(vt.elem_type, dims, (size_t)vt.rank, &in[i]))) { cort_status_free(st); ok = 0; break; }
        fill(in[i], h + i);
    }
    for (size_t i = 0; ok && i < no; i++) onames[i] = cort_session_output_name(s, i);
    if (ok) {
        cort_value *out1[MAX_IN] = { 0 }, *out2[MAX_IN] = { 0 };
        cort_run_options_set_terminate(g_ro, 0);
        g_started_ms = now_ms();
        cort_status *st1 = cort_session_run(s, g_ro, names, in, ni, onames, no, out1);
        cort_status *st2 = st1 ? NULL : cort_session_run(s, g_ro, names, in, ni, onames, no, out2);
        g_started_ms = 0;
        if (st1 && !cort_status_message(st1)[0]) __builtin_trap();
        /* the second run of the same inputs must agree with the first (cancellation and OOM aside) */
        if (!st1 && !st2 && !has_random_op(s))
            for (size_t i = 0; i < no; i++)
                if (!same(out1[i], out2[i])) __builtin_trap();
        cort_status_free(st1);
        cort_status_free(st2);
        for (size_t i = 0; i < no; i++) { cort_value_release(out1[i]); cort_value_release(out2[i]); }
    }
    for (size_t i = 0; i < ni && i < MAX_IN; i++) cort_value_release(in[i]);
    cort_session_release(s);
    return 0;
}
