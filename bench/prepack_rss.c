/* Resident memory of N sessions of one model, with or without a shared prepacked-weights container:
 * creates N sessions (1 thread each), runs each once, then reports VmRSS and VmHWM of the process
 * and the creation time of the first session and of the others.
 * Usage: cort_prepack_rss MODEL N [shared|own] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cort.h"
#include "bench_inputs.h"

static long status_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') { v = atol(line + n + 1); break; }
    fclose(f);
    return v;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int fail(cort_status *st) {
    fprintf(stderr, "%s\n", cort_status_message(st));
    cort_status_free(st);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s MODEL N [shared|own]\n", argv[0]); return 2; }
    const int n = atoi(argv[2]);
    const int shared = argc > 3 && !strcmp(argv[3], "shared");
    if (n < 1 || n > 1024) { fprintf(stderr, "N must be 1..1024\n"); return 2; }
    cort_session **s = calloc((size_t)n, sizeof *s);
    if (!s) return 1;
    cort_prepacked_weights *pw = NULL;
    cort_session_options *o = NULL;
    cort_status *st;
    if ((st = cort_session_options_create(&o)) || (st = cort_session_options_set_threads(o, 1))) return fail(st);
    if (shared && ((st = cort_prepacked_weights_create(&pw)) || (st = cort_session_options_set_prepacked_weights(o, pw))))
        return fail(st);
    double first_ms = 0, rest_ms = 0;
    for (int i = 0; i < n; i++) {
        const double t0 = now_ms();
        if ((st = cort_session_create(argv[1], o, &s[i]))) return fail(st);
        if (i) rest_ms += now_ms() - t0;
        else first_ms = now_ms() - t0;
    }
    cort_session_options_free(o);
    for (int i = 0; i < n; i++) {
        const char *names[64];
        cort_value *ins[64];
        size_t n_in = bench_make_inputs(s[i], names, ins, 64);
        const char *out0 = cort_session_output_name(s[i], 0);
        cort_value *out = NULL;
        st = cort_session_run(s[i], NULL, names, ins, n_in, &out0, 1, &out);
        for (size_t k = 0; k < n_in; k++) cort_value_release(ins[k]);
        if (st) return fail(st);
        cort_value_release(out);
    }
    printf("sessions %d, %s: VmRSS %.1f MB, VmHWM %.1f MB", n, shared ? "shared container" : "own packs",
           status_kb("VmRSS") / 1024.0, status_kb("VmHWM") / 1024.0);
    if (pw) printf(", container: %zu buffers from %.1f MB of weights", cort_prepacked_weights_count(pw),
                   cort_prepacked_weights_bytes(pw) / 1048576.0);
    printf("; creation: first %.1f ms", first_ms);
    if (n > 1) printf(", others %.1f ms each", rest_ms / (n - 1));
    printf("\n");
    for (int i = 0; i < n; i++) cort_session_release(s[i]);
    cort_prepacked_weights_release(pw);
    free(s);
    return 0;
}
