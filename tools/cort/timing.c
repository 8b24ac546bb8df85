/* Wall-clock timing, peak memory, quantiles and the terminal progress line. */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

double cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

long cli_peak_rss_kb(void) {
    /* VmHWM of this process: getrusage's ru_maxrss survives execve, so a big parent would leak its
     * high-water mark into ours. */
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long kb = -1;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) { kb = strtol(line + 6, NULL, 10); break; }
        fclose(f);
        if (kb >= 0) return kb;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    return ru.ru_maxrss;   /* Linux reports kilobytes */
}

int cli_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_quantile(const double *sorted, size_t n, double q) {
    if (n == 0) return 0.0;
    if (q <= 0) return sorted[0];
    if (q == 0.5) return (n % 2) ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    size_t rank = (size_t)(q * (double)n + 0.999999);   /* nearest-rank: ceil(q*n) */
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

int cli_progress_enabled(void) {
    return isatty(STDERR_FILENO);
}

void cli_progress(const char *fmt, ...) {
    if (!cli_progress_enabled()) return;
    va_list ap;
    fputs("\r\033[K", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

void cli_progress_clear(void) {
    if (!cli_progress_enabled()) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}
