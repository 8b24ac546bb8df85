/* Dispatch overhead of cort_parallel_for: an empty-ish loop split over the pool, many times.
 * Usage: cort_parallel_for_bench [ITERS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "core/threadpool.h"

static void touch(void *a, size_t b, size_t e) {
    float *x = a;
    for (size_t i = b; i < e; i++) x[i] += 1.0f;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    static float buf[4096];
    for (int th = 1; th <= 2; th++) {
        cort_pool *p = NULL;
        if (cort_pool_create(th, &p)) return 1;
        for (int i = 0; i < 1000; i++) cort_parallel_for(p, 4096, 256, touch, buf);   /* warm */
        double t0 = now_us();
        for (int i = 0; i < iters; i++) cort_parallel_for(p, 4096, 256, touch, buf);
        printf("threads %d: %.2f us per parallel_for over 4096 floats (%d calls)\n", th, (now_us() - t0) / iters, iters);
        cort_pool_free(p);
    }
    return 0;
}
