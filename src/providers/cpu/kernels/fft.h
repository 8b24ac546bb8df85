/* Complex FFT of any length in double precision: iterative radix-2 for powers of two, Bluestein's
 * chirp-z (through a power-of-two FFT) otherwise. A plan is read-only once built: runs (and threads)
 * may share one, each with its own work buffer. */
#ifndef CORT_CPU_MI_FFT_H
#define CORT_CPU_MI_FFT_H
#include <stddef.h>
#include "cort.h"

typedef struct mi_fft_plan {
    size_t n, m;          /* transform length; power-of-two work length (== n when n is a power of two) */
    int    sign;          /* -1 forward, +1 inverse (no scaling applied) */
    double *tw;           /* m/2 complex twiddles of the radix-2 stage, sign -1 */
    double *chirp;        /* n complex exp(sign*i*pi*j^2/n) (Bluestein only) */
    double *bfft;         /* m complex: FFT of the conjugate chirp filter (Bluestein only) */
} mi_fft_plan;

cort_status *mi_fft_plan_init(mi_fft_plan *p, size_t n, int sign);
void         mi_fft_plan_free(mi_fft_plan *p);
/* Complex values of work mi_fft_run needs (0 for powers of two). */
size_t       mi_fft_work_len(const mi_fft_plan *p);
/* In-place transform of n interleaved complex values; work: mi_fft_work_len(p) complex values. */
void         mi_fft_run(const mi_fft_plan *p, double *x, double *work);
#endif
