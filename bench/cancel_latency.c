/* Cancel latency: time from cort_run_options_set_terminate to the run_async callback, on a model
 * given on the command line (the issue asks for the BERT-base encoder:
 * build/models/bert_encoder/model.onnx from bench/make_models.py). Inputs are random.
 * Usage: cort_cancel_latency MODEL [TRIALS] [THREADS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cort.h"
#include "bench_inputs.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

typedef struct res { atomic_int done; double at; cort_code code; } res;
static void cb(void *u, cort_status *st, cort_value **outs, size_t n) {
    res *r = u;
    r->at = now_ms();
    r->code = cort_status_code(st);
    cort_status_free(st);
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    atomic_store(&r->done, 1);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s MODEL [TRIALS] [THREADS]\n", argv[0]); return 2; }
    int trials = argc > 2 ? atoi(argv[2]) : 20, threads = argc > 3 ? atoi(argv[3]) : 1;
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    cort_status_free(cort_session_options_create(&o));
    cort_status_free(cort_session_options_set_threads(o, threads));
    cort_status *st = cort_session_create(argv[1], o, &s);
    cort_session_options_free(o);
    if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); return 1; }
    const char *names[64];
    cort_value *ins[64];
    size_t n_in = bench_make_inputs(s, names, ins, 64);
    const char *out0 = cort_session_output_name(s, 0);
    /* full run time, to spread the cancel points over the run */
    double t0 = now_ms();
    cort_value *out = NULL;
    st = cort_session_run(s, NULL, names, ins, n_in, &out0, 1, &out);
    double full = now_ms() - t0;
    if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); return 1; }
    cort_value_release(out);
    double *lat = calloc((size_t)trials, sizeof *lat);
    int cancelled = 0;
    for (int t = 0; t < trials; t++) {
        cort_run_options *ro = NULL;
        cort_status_free(cort_run_options_create(&ro));
        res r = { 0 };
        st = cort_session_run_async(s, ro, names, ins, n_in, &out0, 1, NULL, cb, &r);
        if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); return 1; }
        double wait = full * (0.1 + 0.8 * (t % 10) / 10.0);
        struct timespec ts = { (time_t)(wait / 1000), (long)(((long long)(wait * 1e6)) % 1000000000LL) };
        nanosleep(&ts, NULL);
        double set_at = now_ms();
        cort_run_options_set_terminate(ro, 1);
        while (!atomic_load(&r.done)) { struct timespec q = { 0, 20000 }; nanosleep(&q, NULL); }
        lat[t] = r.at - set_at;
        cancelled += r.code == CORT_ERROR_CANCELLED;
        cort_run_options_free(ro);
    }
    qsort(lat, (size_t)trials, sizeof *lat, cmp);
    printf("model %s, threads %d: full run %.1f ms; cancel latency over %d trials (%d cancelled): median %.3f ms, max %.3f ms\n",
           argv[1], threads, full, trials, cancelled, lat[trials / 2], lat[trials - 1]);
    for (size_t i = 0; i < n_in; i++) cort_value_release(ins[i]);
    cort_session_release(s);
    free(lat);
    return 0;
}
