/* Depthwise convolution paths (kernels/depthwise.c: channel-blocked, plane, row and portable
 * kernels) against the reference convolution followed by the activation in double precision:
 * 7x7 .. 56x56 and odd planes, 3x3/5x5 (and other kernels that take the generic paths), strides
 * 1/2, symmetric/asymmetric/oversized pads, channel counts that are not multiples of 16, batch > 1,
 * depth multiplier 2 and rows too wide for the channel-blocked scratch (the per-plane kernels), every fused activation, with and without a thread pool, for every ISA the
 * gemm kernel list selects. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/threadpool.h"
#include "providers/cpu/ops/nn/conv.h"
#include "graph/op.h"

static uint32_t rng_state = 4242;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct dw_case {
    size_t N, C, mult;
    int64_t H, W, KH, KW, s, pt, pl, pb, pr;
} dw_case;

static double act_ref(const nn_act *a, double v) {
    switch (a->kind) {
    case CORT_ACT_RELU: return v > 0 ? v : 0;
    case CORT_ACT_CLIP: return v < a->alpha ? a->alpha : v > a->beta ? a->beta : v;
    case CORT_ACT_LEAKY_RELU: return v >= 0 ? v : v * a->alpha;
    case CORT_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case CORT_ACT_HARD_SIGMOID: { double h = a->alpha * v + a->beta; return h < 0 ? 0 : h > 1 ? 1 : h; }
    case CORT_ACT_SILU: return v / (1.0 + exp(-v));
    case CORT_ACT_HARD_SWISH: { double h = v / 6.0 + 0.5; return v * (h < 0 ? 0 : h > 1 ? 1 : h); }
    default: return v;
    }
}

static int make_shape(const dw_case *c, nn_conv_shape *s) {
    memset(s, 0, sizeof *s);
    s->N = c->N; s->C = c->C; s->M = c->C * c->mult; s->group = c->C;
    nn_geom *g = &s->g;
    g->nd = 2;
    g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
    g->in[1] = c->H; g->in[2] = c->W; g->k[1] = c->KH; g->k[2] = c->KW;
    g->s[1] = g->s[2] = c->s; g->d[1] = g->d[2] = 1;
    g->pb[1] = c->pt; g->pb[2] = c->pl; g->pe[1] = c->pb; g->pe[2] = c->pr;
    int64_t sh = c->H + c->pt + c->pb - c->KH, sw = c->W + c->pl + c->pr - c->KW;
    if (sh < 0 || sw < 0) return 0;
    g->out[1] = sh / c->s + 1; g->out[2] = sw / c->s + 1;
    return 1;
}

int main(void) {
    static const dw_case cases[] = {
        /* N, C, mult, H, W, KH, KW, s, pt, pl, pb, pr */
        {1, 16, 1, 7, 7, 3, 3, 1, 1, 1, 1, 1},      {1, 40, 1, 7, 7, 5, 5, 1, 2, 2, 2, 2},
        {1, 33, 1, 14, 14, 5, 5, 1, 2, 2, 2, 2},    {1, 17, 1, 14, 14, 3, 3, 2, 0, 0, 1, 1},
        {1, 24, 1, 28, 28, 5, 5, 1, 2, 2, 2, 2},    {1, 20, 1, 28, 28, 3, 3, 1, 1, 1, 1, 1},
        {1, 18, 1, 28, 28, 5, 5, 2, 1, 1, 2, 2},    {1, 9, 1, 56, 56, 3, 3, 1, 1, 1, 1, 1},
        {1, 7, 1, 56, 56, 3, 3, 2, 0, 0, 1, 1},     {1, 5, 1, 57, 63, 5, 5, 2, 2, 2, 2, 2},
        {2, 19, 1, 9, 13, 3, 3, 1, 1, 0, 0, 1},     {2, 3, 1, 15, 17, 5, 5, 2, 2, 1, 1, 2},
        {1, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1},       {1, 2, 1, 2, 3, 5, 5, 1, 2, 2, 2, 2},
        {1, 31, 1, 31, 33, 3, 3, 1, 1, 1, 1, 1},    {1, 16, 1, 33, 32, 5, 5, 1, 2, 2, 2, 2},
        {1, 21, 1, 11, 11, 3, 3, 1, 3, 2, 3, 0},    {1, 16, 1, 8, 8, 5, 5, 2, 0, 0, 0, 0},
        {1, 13, 1, 6, 30, 3, 3, 2, 1, 1, 1, 1},     {1, 48, 1, 4, 4, 5, 5, 1, 4, 4, 4, 4},
        {1, 8, 2, 10, 10, 3, 3, 1, 1, 1, 1, 1},     {1, 6, 1, 12, 12, 7, 7, 1, 3, 3, 3, 3},
        {1, 5, 1, 10, 9, 3, 5, 1, 1, 2, 1, 2},      {1, 160, 1, 7, 7, 3, 3, 1, 1, 1, 1, 1},
        /* several bands of output rows */
        {1, 17, 1, 70, 90, 5, 5, 2, 2, 2, 2, 2},    {1, 16, 1, 64, 320, 3, 3, 1, 1, 1, 1, 1},
        {1, 5, 1, 41, 160, 5, 5, 1, 2, 2, 2, 2},    {1, 3, 1, 50, 60, 3, 3, 2, 1, 1, 1, 1},
        /* bands times channel blocks times images (with a pool: the items band-major) */
        {2, 40, 1, 48, 48, 3, 3, 1, 1, 1, 1, 1},
        /* depth multiplier 2 and very wide rows: the per-plane kernels */
        {1, 5, 2, 9, 13, 5, 5, 2, 2, 1, 1, 2},      {1, 3, 2, 20, 71, 5, 5, 2, 2, 1, 1, 2},
        {1, 4, 2, 17, 66, 3, 3, 2, 0, 1, 1, 0},     {2, 6, 2, 19, 37, 5, 5, 1, 2, 2, 2, 2},
        {1, 3, 2, 7, 7, 3, 3, 1, 1, 1, 1, 1},       {1, 2, 1, 3, 3000, 5, 5, 1, 2, 2, 2, 2},
        {1, 2, 1, 4, 4000, 3, 3, 2, 1, 1, 1, 1},
        /* 3x3 stride 2 rows wider than the channel-blocked limit (the plane kernel; its load masks are
         * computed per chunk of 256 output columns: 265 columns end in a second, partial chunk) */
        {1, 7, 1, 112, 112, 3, 3, 2, 0, 0, 1, 1},   {1, 3, 1, 9, 530, 3, 3, 2, 1, 1, 1, 1},
        /* stride 2, left padding, no right padding and an odd span: the last input column lies past
         * every window (the channel-blocked kernels must not place it in their band buffer) */
        {1, 11, 1, 9, 11, 3, 3, 2, 1, 1, 0, 0},     {1, 9, 1, 12, 12, 5, 5, 2, 2, 2, 0, 0},
        {2, 20, 1, 6, 7, 3, 3, 2, 1, 1, 1, 0},
        /* output rows of 2, 4, 5, 10 and 12 pixels: every group width of the AVX2 channel-blocked
         * kernel's unrolled taps (1..8 pixels), both strides, 3x3 and 5x5 */
        {1, 11, 1, 4, 4, 3, 3, 2, 1, 1, 1, 1},      {1, 10, 1, 8, 8, 3, 3, 2, 1, 1, 1, 1},
        {1, 25, 1, 9, 9, 5, 5, 2, 2, 2, 2, 2},      {1, 12, 1, 10, 10, 3, 3, 1, 1, 1, 1, 1},
        {1, 9, 1, 12, 12, 5, 5, 1, 2, 2, 2, 2},     {1, 14, 1, 23, 23, 5, 5, 2, 2, 2, 2, 2},
        /* widths that are multiples of 8 (the AVX2 kernel loads those row by row) with stride 2 and
         * no right padding: the last input columns have no place in the band buffer */
        {1, 13, 1, 9, 16, 3, 3, 2, 0, 0, 0, 0},     {1, 9, 1, 10, 24, 5, 5, 2, 0, 0, 0, 0},
        {2, 12, 1, 7, 40, 3, 3, 2, 1, 0, 1, 0},
        /* an empty input row: every output from the padding */
        {1, 18, 1, 4, 0, 3, 3, 1, 1, 2, 1, 2},
    };
    const nn_act acts[] = {
        { CORT_ACT_NONE, 0, 0 },           { CORT_ACT_RELU, 0, 0 },    { CORT_ACT_CLIP, 0.0f, 6.0f },
        { CORT_ACT_LEAKY_RELU, 0.1f, 0 },  { CORT_ACT_SIGMOID, 0, 0 }, { CORT_ACT_HARD_SIGMOID, 0.2f, 0.5f },
        { CORT_ACT_SILU, 0, 0 },           { CORT_ACT_HARD_SWISH, 0, 0 },
    };
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(2, &pool));
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        nn_conv_shape s;
        if (!make_shape(&cases[ci], &s)) { CHECK_MSG(0, "case %zu has no output", ci); continue; }
        const size_t in = (size_t)nn_geom_in_size(&s.g), out = (size_t)nn_geom_out_size(&s.g);
        const size_t ks = (size_t)nn_geom_k_size(&s.g), xn = s.N * s.C * in, yn = s.N * s.M * out;
        float *x = malloc((xn + 1) * sizeof(float)), *w = malloc(s.M * ks * sizeof(float)), *b = malloc(s.M * sizeof(float));
        float *y = malloc(yn * sizeof(float)), *r = malloc(yn * sizeof(float)), *want = malloc(yn * sizeof(float));
        if (!x || !w || !b || !y || !r || !want) return 1;
        for (size_t i = 0; i < xn; i++) x[i] = 3.0f * frand();
        for (size_t i = 0; i < s.M * ks; i++) w[i] = frand();
        for (size_t i = 0; i < s.M; i++) b[i] = frand();
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
            for (size_t ki = 0; ki <= nk; ki++)   /* ki == nk: best kernel (NULL) */
                for (int with_pool = 0; with_pool < 2; with_pool++) {
                    const int with_bias = (ai + ki) % 2 == 0;
                    nn_conv_f32_ref(&s, x, w, with_bias ? b : NULL, r);
                    for (size_t i = 0; i < yn; i++) y[i] = NAN;
                    CHECK_OK(nn_conv_f32(with_pool ? pool : NULL, ki < nk ? kernels[ki] : NULL, &s, x, w,
                                         with_bias ? b : NULL, &acts[ai], y));
                    for (size_t i = 0; i < yn; i++) want[i] = (float)act_ref(&acts[ai], r[i]);
                    /* the kernels sum the taps in another order than the reference: the absolute part
                     * of the tolerance follows the output's magnitude (NaN, an unwritten output, fails) */
                    size_t at = 0;
                    const double worst = tu_close_err(y, want, yn, TU_TOL(1e-5, 1e-6, 1e-6), &at);
                    CHECK_MSG(worst <= 1, "case %zu act %d kernel %s pool %d: err %g at %zu (y %g)", ci,
                              acts[ai].kind, ki < nk ? kernels[ki]->name : "best", with_pool, worst, at,
                              (double)y[at]);
                }
        free(x); free(w); free(b); free(y); free(r); free(want);
    }
    cort_pool_free(pool);
    return tu_finish();
}
