/* FFT used by DFT and STFT (see kernels/fft.h). */
#include <math.h>
#include <string.h>
#include "fft.h"
#include "../../../core/alloc.h"
#include "../../../core/status.h"

static int is_pow2(size_t n) { return n && !(n & (n - 1)); }

/* In-place radix-2 FFT of length m (power of two) with twiddles tw (sign -1); conj = 1 gives sign +1. */
static void fft_pow2(double *x, size_t m, const double *tw, int conj) {
    for (size_t i = 1, j = 0; i < m; i++) {
        size_t bit = m >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double tr = x[2 * i], ti = x[2 * i + 1];
            x[2 * i] = x[2 * j]; x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = tr; x[2 * j + 1] = ti;
        }
    }
    for (size_t len = 2; len <= m; len <<= 1) {
        size_t half = len >> 1, step = m / len;
        for (size_t i = 0; i < m; i += len)
            for (size_t k = 0; k < half; k++) {
                double wr = tw[2 * k * step], wi = conj ? -tw[2 * k * step + 1] : tw[2 * k * step + 1];
                double *a = x + 2 * (i + k), *b = x + 2 * (i + k + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br; b[1] = a[1] - bi;
                a[0] += br; a[1] += bi;
            }
    }
}

cort_status *mi_fft_plan_init(mi_fft_plan *p, size_t n, int sign) {
    memset(p, 0, sizeof *p);
    p->n = n;
    p->sign = sign;
    if (n == 0) return NULL;
    size_t m = 1;
    if (is_pow2(n)) m = n;
    else while (m < 2 * n - 1) m <<= 1;
    p->m = m;
    p->tw = cort_malloc((m / 2 + 1) * 2 * sizeof(double));
    if (!p->tw) goto oom;
    for (size_t k = 0; k < m / 2; k++) {
        double a = -2.0 * M_PI * (double)k / (double)m;
        p->tw[2 * k] = cos(a);
        p->tw[2 * k + 1] = sin(a);
    }
    if (m != n) {
        p->chirp = cort_malloc(n * 2 * sizeof(double));
        p->bfft = cort_calloc(m * 2, sizeof(double));
        if (!p->chirp || !p->bfft) goto oom;
        for (size_t j = 0; j < n; j++) {
            /* j^2 mod 2n keeps the angle argument small and exact */
            unsigned long long q = ((unsigned long long)j * j) % (2ULL * n);
            double a = (double)sign * M_PI * (double)q / (double)n;
            p->chirp[2 * j] = cos(a);
            p->chirp[2 * j + 1] = sin(a);
        }
        p->bfft[0] = p->chirp[0]; p->bfft[1] = -p->chirp[1];
        for (size_t j = 1; j < n; j++) {
            p->bfft[2 * j] = p->bfft[2 * (m - j)] = p->chirp[2 * j];
            p->bfft[2 * j + 1] = p->bfft[2 * (m - j) + 1] = -p->chirp[2 * j + 1];
        }
        fft_pow2(p->bfft, m, p->tw, 0);
    }
    return NULL;
oom:
    mi_fft_plan_free(p);
    return cort_error_oom();
}

void mi_fft_plan_free(mi_fft_plan *p) {
    cort_free(p->tw);
    cort_free(p->chirp);
    cort_free(p->bfft);
    memset(p, 0, sizeof *p);
}

size_t mi_fft_work_len(const mi_fft_plan *p) { return p->m != p->n ? p->m : 0; }

void mi_fft_run(const mi_fft_plan *p, double *x, double *work) {
    size_t n = p->n, m = p->m;
    if (n <= 1) return;
    if (m == n) { fft_pow2(x, n, p->tw, p->sign > 0); return; }
    double *a = work;
    memset(a, 0, m * 2 * sizeof(double));
    for (size_t j = 0; j < n; j++) {
        double cr = p->chirp[2 * j], ci = p->chirp[2 * j + 1];
        a[2 * j] = x[2 * j] * cr - x[2 * j + 1] * ci;
        a[2 * j + 1] = x[2 * j] * ci + x[2 * j + 1] * cr;
    }
    fft_pow2(a, m, p->tw, 0);
    for (size_t k = 0; k < m; k++) {
        double ar = a[2 * k], ai = a[2 * k + 1], br = p->bfft[2 * k], bi = p->bfft[2 * k + 1];
        a[2 * k] = ar * br - ai * bi;
        a[2 * k + 1] = ar * bi + ai * br;
    }
    fft_pow2(a, m, p->tw, 1);
    double s = 1.0 / (double)m;
    for (size_t k = 0; k < n; k++) {
        double ar = a[2 * k] * s, ai = a[2 * k + 1] * s, cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
        x[2 * k] = ar * cr - ai * ci;
        x[2 * k + 1] = ar * ci + ai * cr;
    }
}
