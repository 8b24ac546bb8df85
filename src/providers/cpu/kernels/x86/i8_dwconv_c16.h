/* Shared by the channel-lane depthwise kernels (i8_dwconv_c16_avx512.c, _avx2.c). */
#ifndef CORT_CPU_KERNELS_X86_I8_DWCONV_C16_H
#define CORT_CPU_KERNELS_X86_I8_DWCONV_C16_H
#include <string.h>
#include "../int_gemm.h"

/* The padding of the padded buffer xb (rows above and below the plane, columns left and right of
 * it) to zero; the plane's own pixels are written by the fill. */
static inline void nn_dwc_zero_borders(const nn_qdwc16_args *a) {
    const size_t rowf = a->wp * 16;
    for (size_t r = 0; r < a->pt; r++) memset(a->xb + r * rowf, 0, rowf * sizeof(float));
    for (size_t r = a->pt + a->ih; r < a->hp; r++) memset(a->xb + r * rowf, 0, rowf * sizeof(float));
    for (size_t ih = 0; ih < a->ih; ih++) {
        float *row = a->xb + (ih + a->pt) * rowf;
        memset(row, 0, a->pl * 16 * sizeof(float));
        memset(row + (a->pl + a->iw) * 16, 0, (a->wp - a->pl - a->iw) * 16 * sizeof(float));
    }
}

/* The J output pixels from p0, which sits at (*oh, *ow) of the output plane: where each one's window
 * starts in the padded buffer (b) and where its 16 sums go (idx, in pixels). Past the plane's last
 * pixel both repeat the last one, so a step is never short. (*oh, *ow) move on by J pixels. */
static inline void nn_dwc_pixel_block(const nn_qdwc16_args *a, size_t p0, size_t J, size_t *oh, size_t *ow,
                                      const float **b, size_t *idx) {
    const size_t ow_n = a->ow, P = a->oh * ow_n, rstep = a->sh * a->wp * 16, cstep = a->sw * 16;
    size_t h = *oh, w = *ow;
    for (size_t j = 0; j < J; j++) {
        if (p0 + j < P) {
            idx[j] = p0 + j;
            b[j] = a->xb + h * rstep + w * cstep;
        } else {
            idx[j] = idx[j - 1];
            b[j] = b[j - 1];
        }
        if (++w == ow_n) { w = 0; h++; }
    }
    *oh = h;
    *ow = w;
}
#endif
