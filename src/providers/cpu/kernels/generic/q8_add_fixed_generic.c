/* The fixed-point form of QLinearAdd (quant_ukernels.h, nn_qadd8_fixed_params): its multipliers and
 * fraction bits, shared by the kernels that use it. */
#include <math.h>
#include "../quant_ukernels.h"

int nn_qadd8_fixed_params(const nn_qbinary8_params *p, int32_t *ma, int32_t *mb, int *k) {
    if (p->mul) return 0;
    const double ra = fabs((double)p->as / p->ys), rb = fabs((double)p->bs / p->ys), big = ra > rb ? ra : rb;
    if (!(big > 0.0) || !isfinite(big)) return 0;
    int e = 0;
    (void)frexp(big, &e);   /* big in [2^(e-1), 2^e) */
    int kk = 20 - e;        /* big * 2^k in [2^19, 2^20) */
    if (kk > 30) kk = 30;
    if (kk < 16) return 0;
    const double fa = nearbyint(ldexp((double)p->as / p->ys, kk)), fb = nearbyint(ldexp((double)p->bs / p->ys, kk));
    if (!(fabs(fa) < 2097152.0) || !(fabs(fb) < 2097152.0)) return 0;
    *ma = (int32_t)fa;
    *mb = (int32_t)fb;
    *k = kk;
    return 1;
}
