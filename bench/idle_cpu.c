/* Idle cost of a session's intra-op pool: CPU time burned while a session with N threads sits idle
 * after a run (workers spin briefly, then sleep; with "nospin" they sleep at once).
 * Usage: cort_idle_cpu MODEL [THREADS] [SECONDS] [spin|nospin] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "cort.h"
#include "bench_inputs.h"

static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s MODEL [THREADS] [SECONDS]\n", argv[0]); return 2; }
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    double secs = argc > 3 ? atof(argv[3]) : 2.0;
    int spin = !(argc > 4 && !strcmp(argv[4], "nospin"));
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    cort_status_free(cort_session_options_create(&o));
    cort_status_free(cort_session_options_set_threads(o, threads));
    cort_status_free(cort_session_options_set_spinning(o, spin));
    cort_status *st = cort_session_create(argv[1], o, &s);
    cort_session_options_free(o);
    if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); return 1; }
    const char *names[64];
    cort_value *ins[64];
    size_t n_in = bench_make_inputs(s, names, ins, 64);
    const char *out0 = cort_session_output_name(s, 0);
    cort_value *out = NULL;
    st = cort_session_run(s, NULL, names, ins, n_in, &out0, 1, &out);
    if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); return 1; }
    cort_value_release(out);
    double c0 = cpu_s();
    struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
    nanosleep(&ts, NULL);
    double used = cpu_s() - c0;
    printf("threads %d, %s: idle for %.1f s after a run, CPU used %.1f ms (%.2f%% of one core)\n", threads, spin ? "spinning" : "no spinning", secs, used * 1e3,
           100.0 * used / secs);
    for (size_t i = 0; i < n_in; i++) cort_value_release(ins[i]);
    cort_session_release(s);
    return 0;
}
