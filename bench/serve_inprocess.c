/* The in-process baseline for cort-serve's load test: keeps CONC cort_session_run_async calls in
 * flight on one session for SECONDS and reports throughput and latency percentiles, with the same
 * session settings cort-serve uses by default (1 intra-op thread per session, spinning off). Also
 * prints the process's CPU time per run, which serve_load.sh sets next to cort-serve's.
 *
 *   cort_serve_inprocess MODEL.onnx [CONC=64] [SECONDS=30] [THREADS=1] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "bench_inputs.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct state {
    cort_session   *s;
    const char     *names[16];
    cort_value     *ins[16];
    size_t          n_in;
    double          end;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    int             active;
    size_t          done, failed, cap;
    double         *lat;
} state;

typedef struct job { state *st; double t0; } job;

static void submit(state *st);

static void on_done(void *user, cort_status *status, cort_value **outs, size_t n) {
    job *j = user;
    state *st = j->st;
    const double t = now_s();
    for (size_t i = 0; i < n; i++) cort_value_release(outs[i]);
    pthread_mutex_lock(&st->mu);
    if (status) st->failed++;
    else if (st->done < st->cap) st->lat[st->done++] = t - j->t0;
    pthread_mutex_unlock(&st->mu);
    cort_status_free(status);
    free(j);
    if (t < st->end) submit(st);
    else {
        pthread_mutex_lock(&st->mu);
        st->active--;
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
    }
}

static void submit(state *st) {
    job *j = malloc(sizeof *j);
    j->st = st;
    j->t0 = now_s();
    cort_status *e = j ? cort_session_run_async(st->s, NULL, st->names, st->ins, st->n_in, NULL, 0, NULL, on_done, j) : NULL;
    if (e || !j) {
        fprintf(stderr, "run_async: %s\n", e ? cort_status_message(e) : "out of memory");
        cort_status_free(e);
        free(j);
        pthread_mutex_lock(&st->mu);
        st->failed++;
        st->active--;
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
    }
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.onnx [CONC] [SECONDS] [THREADS]\n", argv[0]);
        return 2;
    }
    const int conc = argc > 2 ? atoi(argv[2]) : 64;
    const double secs = argc > 3 ? atof(argv[3]) : 30;
    const int threads = argc > 4 ? atoi(argv[4]) : 1;
    state st;
    memset(&st, 0, sizeof st);
    cort_session_options *o = NULL;
    cort_status_free(cort_session_options_create(&o));
    cort_status_free(cort_session_options_set_threads(o, threads));
    cort_status_free(cort_session_options_set_spinning(o, 0));
    cort_status *e = cort_session_create(argv[1], o, &st.s);
    cort_session_options_free(o);
    if (e) {
        fprintf(stderr, "%s\n", cort_status_message(e));
        return 1;
    }
    st.n_in = bench_make_inputs(st.s, st.names, st.ins, 16);
    st.cap = 1 << 22;
    st.lat = malloc(st.cap * sizeof *st.lat);
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    const double t0 = now_s();
    st.end = t0 + secs;
    st.active = conc;
    for (int i = 0; i < conc; i++) submit(&st);
    pthread_mutex_lock(&st.mu);
    while (st.active > 0) pthread_cond_wait(&st.cv, &st.mu);
    pthread_mutex_unlock(&st.mu);
    const double el = now_s() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    /* CPU time, not wall time, is what compares fairly on a machine shared with other work */
    const double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                       (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1e-6;
    qsort(st.lat, st.done, sizeof *st.lat, cmp);
    printf("in-process run_async: %d in flight, %.1f s: %zu runs, %zu failed, %.1f runs/s, p50 %.2f ms, p99 %.2f ms, "
           "CPU %.2f s = %.1f us per run\n", conc, el, st.done, st.failed, (double)st.done / el,
           st.done ? st.lat[st.done / 2] * 1e3 : 0, st.done ? st.lat[(size_t)((double)st.done * 0.99)] * 1e3 : 0, cpu,
           st.done ? cpu / (double)st.done * 1e6 : 0);
    for (size_t i = 0; i < st.n_in; i++) cort_value_release(st.ins[i]);
    cort_session_release(st.s);
    free(st.lat);
    return 0;
}
