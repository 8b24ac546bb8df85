/* Float Conv / ConvTranspose kernels. Conv runs as SGEMM W[Mg, Cg*K] x im2col(X)[Cg*K, OUT] per
 * (batch, group), the im2col matrix never materialized: the gemm's B packer reads patches straight
 * from X. Depthwise convs (one input channel per group) use a direct row kernel instead, since a
 * gemm with K = 9 would be all packing. ConvTranspose is SGEMM W^T X followed by col2im. */
#include <string.h>
#include "nn_conv.h"
#include "simd/dw_ukernels.h"

typedef struct im2col_ctx {
    const float   *x;     /* first input channel of the group */
    const nn_geom *g;
} im2col_ctx;

/* rows k = ((c*KD + kd)*KH + kh)*KW + kw, columns j = (od*OH + oh)*OW + ow */
static void pack_im2col(const nn_gemm_b *b, size_t k0, size_t kc, size_t j0, size_t ncols, size_t nr, float *dst) {
    const im2col_ctx *c = b->ctx;
    const nn_geom *g = c->g;
    const int64_t KD = g->k[0], KH = g->k[1], KW = g->k[2];
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OH = g->out[1], OW = g->out[2];
    const int64_t in_size = ID * IH * IW;
    /* the divisions once per panel; the kernel position then advances incrementally per row */
    int64_t kw = (int64_t)k0 % KW, t = (int64_t)k0 / KW;
    int64_t kh = t % KH; t /= KH;
    int64_t kd = t % KD, ch = t / KD;
    const int64_t ow0 = (int64_t)j0 % OW, oh0 = ((int64_t)j0 / OW) % OH, od0 = (int64_t)j0 / OW / OH;
    for (size_t p = 0; p < kc; p++) {
        if (p) {
            if (++kw == KW) {
                kw = 0;
                if (++kh == KH) {
                    kh = 0;
                    if (++kd == KD) { kd = 0; ch++; }
                }
            }
        }
        const float *xc = c->x + ch * in_size;
        float *d = dst + p * nr;
        int64_t ow = ow0, oh = oh0, od = od0;
        size_t q = 0;
        const int64_t off_w = kw * g->d[2] - g->pb[2], sw = g->s[2];
        while (q < ncols) {
            size_t run = (size_t)(OW - ow);
            if (run > ncols - q) run = ncols - q;
            int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
                memset(d + q, 0, run * sizeof(float));
            } else {
                const float *xr = xc + (id * IH + ih) * IW;
                int64_t iw0 = ow * sw + off_w, iw_last = (ow + (int64_t)run - 1) * sw + off_w;
                if (sw == 1) {
                    /* zeros where the run hangs over the padding, one copy for the rest */
                    int64_t lo = iw0 < 0 ? -iw0 : 0, hi = iw_last >= IW ? IW - iw0 : (int64_t)run;
                    if (lo > (int64_t)run) lo = (int64_t)run;
                    if (hi < lo) hi = lo;
                    for (int64_t r = 0; r < lo; r++) d[q + (size_t)r] = 0.0f;
                    if (hi > lo) memcpy(d + q + lo, xr + iw0 + lo, (size_t)(hi - lo) * sizeof(float));
                    for (int64_t r = hi; r < (int64_t)run; r++) d[q + (size_t)r] = 0.0f;
                } else {
                    /* valid r: 0 <= iw0 + r*sw < IW; a branch-free strided copy between zero ends */
                    int64_t lo = iw0 < 0 ? (-iw0 + sw - 1) / sw : 0;
                    int64_t hi = iw0 >= IW ? 0 : (IW - iw0 + sw - 1) / sw;
                    if (hi > (int64_t)run) hi = (int64_t)run;
                    if (lo > hi) lo = hi;
                    for (int64_t r = 0; r < lo; r++) d[q + (size_t)r] = 0.0f;
                    for (int64_t r = lo; r < hi; r++) d[q + (size_t)r] = xr[iw0 + r * sw];
                    for (int64_t r = hi; r < (int64_t)run; r++) d[q + (size_t)r] = 0.0f;
                }
            }
            q += run;
            ow = 0;
            if (++oh == OH) { oh = 0; od++; }
        }
        for (size_t r = ncols; r < nr; r++) d[r] = 0.0f;
    }
}

#define NN_DW_MAX_TAPS 64

/* Depthwise plane through a row kernel: the taps of each output row are gathered first so the
 * kernel can keep its accumulators in registers across all of them. */
static int depthwise_plane_rows(const nn_geom *g, const float *x, const float *w, float bias, const nn_act *act,
                                float *y,
                                void (*row)(float *, int64_t, float, const float *const *, const float *,
                                            const int64_t *, int, int64_t, int64_t, const nn_dw_act *)) {
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
    const int64_t KD = g->k[0], KH = g->k[1], KW = g->k[2];
    if (KD * KH * KW > NN_DW_MAX_TAPS) return 0;
    /* Relu/Clip/LeakyRelu are applied by the row kernel on its registers */
    const int in_kernel = act && act->kind >= CORT_ACT_RELU && act->kind <= CORT_ACT_LEAKY_RELU;
    const nn_dw_act ka = { in_kernel ? act->kind : 0, act ? act->alpha : 0.0f, act ? act->beta : 0.0f };
    const float *rows[NN_DW_MAX_TAPS];
    float wt[NN_DW_MAX_TAPS];
    int64_t offs[NN_DW_MAX_TAPS];
    for (int64_t od = 0; od < OD; od++)
        for (int64_t oh = 0; oh < OH; oh++) {
            int nt = 0;
            for (int64_t kd = 0; kd < KD; kd++) {
                int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                if (id < 0 || id >= ID) continue;
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                    if (ih < 0 || ih >= IH) continue;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        rows[nt] = x + (id * IH + ih) * IW;
                        wt[nt] = w[(kd * KH + kh) * KW + kw];
                        offs[nt] = kw * g->d[2] - g->pb[2];
                        nt++;
                    }
                }
            }
            row(y + (od * OH + oh) * OW, OW, bias, rows, wt, offs, nt, IW, g->s[2], in_kernel ? &ka : NULL);
            if (!in_kernel) nn_act_apply(act, y + (od * OH + oh) * OW, (size_t)OW);
        }
    return 1;
}

/* One output plane of a depthwise conv: y = bias + sum_k w[k] * x[window]. Row oriented so the
 * innermost loop runs along contiguous output (and, for stride 1, input) elements. */
static void depthwise_plane(const nn_geom *g, const float *x, const float *w, float bias, const nn_act *act,
                            float *y) {
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
    const int64_t KD = g->k[0], KH = g->k[1], KW = g->k[2];
    const int64_t sw = g->s[2];
    for (int64_t od = 0; od < OD; od++)
        for (int64_t oh = 0; oh < OH; oh++) {
            float *yr = y + (od * OH + oh) * OW;
            for (int64_t ow = 0; ow < OW; ow++) yr[ow] = bias;
            for (int64_t kd = 0; kd < KD; kd++) {
                int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                if (id < 0 || id >= ID) continue;
                for (int64_t kh = 0; kh < KH; kh++) {
                    int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                    if (ih < 0 || ih >= IH) continue;
                    const float *xr = x + (id * IH + ih) * IW;
                    const float *wr = w + (kd * KH + kh) * KW;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float wv = wr[kw];
                        const int64_t off = kw * g->d[2] - g->pb[2];
                        /* valid ow: 0 <= ow*sw + off < IW */
                        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                        int64_t hi = IW - 1 - off < 0 ? -1 : (IW - 1 - off) / sw;
                        if (hi > OW - 1) hi = OW - 1;
                        if (sw == 1) {
                            const float *xs = xr + off;
                            for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xs[ow];
                        } else {
                            for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xr[ow * sw + off];
                        }
                    }
                }
            }
            nn_act_apply(act, yr, (size_t)OW);
        }
}

#ifdef NN_HAVE_X86_UKERNELS
/* The common MobileNet/EfficientNet case, 2-D 3x3 or 5x5 without dilation at stride 1 or 2, through
 * a plane kernel (masked loads handle the padding, one accumulator per kernel row). */
static int depthwise_kxk(const nn_geom *g, const float *x, const float *w, float bias, const nn_act *act, float *y) {
    if (g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1 || g->k[1] != g->k[2] || (g->k[1] != 3 && g->k[1] != 5) || g->d[1] != 1 ||
        g->d[2] != 1 || g->s[1] != g->s[2] || (g->s[2] != 1 && g->s[2] != 2))
        return 0;
    const int in_kernel = act && act->kind >= CORT_ACT_RELU && act->kind <= CORT_ACT_LEAKY_RELU;
    const nn_dw_act ka = { in_kernel ? act->kind : 0, act ? act->alpha : 0.0f, act ? act->beta : 0.0f };
    nn_dw_plane_avx512((int)g->k[1], x, g->in[1], g->in[2], w, bias, y, g->out[1], g->out[2], g->s[2], g->pb[1], g->pb[2],
                          in_kernel ? &ka : NULL);
    if (!in_kernel) nn_act_apply(act, y, (size_t)(g->out[1] * g->out[2]));
    return 1;
}
#endif

typedef struct dw_job {
    const nn_conv_shape *s;
    const float *x, *w, *bias;
    const nn_act *act;
    float *y;
    int isa;   /* 2: AVX-512 row kernel, 1: AVX2, 0: portable */
} dw_job;

static void dw_run(void *arg, size_t begin, size_t end) {
    const dw_job *j = arg;
    const nn_conv_shape *s = j->s;
    const size_t in_size = (size_t)nn_geom_in_size(&s->g), out_size = (size_t)nn_geom_out_size(&s->g);
    const size_t ks = (size_t)nn_geom_k_size(&s->g), mult = s->M / s->group;
    for (size_t t = begin; t < end; t++) {
        size_t n = t / s->M, m = t % s->M, c = m / mult;
        const float *xp = j->x + (n * s->C + c) * in_size, *wp = j->w + m * ks;
        float bv = j->bias ? j->bias[m] : 0.0f, *yp = j->y + (n * s->M + m) * out_size;
#ifdef NN_HAVE_X86_UKERNELS
        if (j->isa == 2 && depthwise_kxk(&s->g, xp, wp, bv, j->act, yp)) continue;
        if (j->isa == 2 && depthwise_plane_rows(&s->g, xp, wp, bv, j->act, yp, nn_dw_row_avx512)) continue;
        if (j->isa == 1 && depthwise_plane_rows(&s->g, xp, wp, bv, j->act, yp, nn_dw_row_avx2)) continue;
#endif
        depthwise_plane(&s->g, xp, wp, bv, j->act, yp);
    }
}

int nn_conv_uses_gemm(size_t C, size_t group) { return !(C == group && group > 1); }

cort_status *nn_conv_pack_weights(const float *w, size_t M, size_t Kg, size_t group, nn_gemm_packed *out) {
    const size_t Mg = M / group;
    for (size_t gi = 0; gi < group; gi++) {
        cort_status *st = nn_gemm_pack_a(NULL, Mg, Kg, 1.0f, w + gi * Mg * Kg, Kg, 0, &out[gi]);
        if (st) {
            while (gi-- > 0) nn_gemm_packed_free(&out[gi]);
            return st;
        }
    }
    return NULL;
}

cort_status *nn_conv_f32(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                         const float *w, const float *bias, const nn_act *act, float *y) {
    return nn_conv_f32_opt(pool, kernel, s, x, w, bias, act, y, NULL, NULL);
}

cort_status *nn_conv_f32_opt(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                             const float *w, const float *bias, const nn_act *act, float *y,
                             const nn_gemm_packed *wpack, cort_kernel_ctx *ctx) {
    const size_t in_size = (size_t)nn_geom_in_size(&s->g), out_size = (size_t)nn_geom_out_size(&s->g);
    const size_t ks = (size_t)nn_geom_k_size(&s->g);
    const size_t Cg = s->C / s->group, Mg = s->M / s->group, Kg = Cg * ks;
    if (s->N == 0 || s->M == 0 || out_size == 0) return NULL;
    if (Cg == 1 && s->group > 1) {
        dw_job j = { s, x, w, bias, act, y, 0 };
#ifdef NN_HAVE_X86_UKERNELS
        j.isa = __builtin_cpu_supports("avx512f") ? 2
              : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
        /* an explicit gemm kernel (tests) selects the depthwise kernel of the same ISA */
        if (kernel && kernel->ukr == nn_ukr_avx2_6x16 && j.isa > 1) j.isa = 1;
        if (kernel && kernel->ukr == nn_ukr_scalar_4x16) j.isa = 0;
#endif
        size_t planes = s->N * s->M;
        cort_parallel_for(out_size * ks * planes < 32768 ? NULL : pool, planes, 1, dw_run, &j);
        return NULL;
    }
    const nn_geom *g = &s->g;
    const int pointwise = ks == 1 && g->s[0] == 1 && g->s[1] == 1 && g->s[2] == 1 && g->pb[0] == 0 &&
                          g->pb[1] == 0 && g->pb[2] == 0 && g->pe[0] == 0 && g->pe[1] == 0 && g->pe[2] == 0;
    for (size_t n = 0; n < s->N; n++)
        for (size_t gi = 0; gi < s->group; gi++) {
            const float *xg = x + (n * s->C + gi * Cg) * in_size;
            float *yg = y + (n * s->M + gi * Mg) * out_size;
            im2col_ctx ic = { xg, g };
            nn_gemm_b b = nn_gemm_b_matrix(xg, in_size, 0);
            if (!pointwise) { b.pack = pack_im2col; b.ctx = &ic; }
            nn_gemm_opts o = { wpack ? &wpack[gi] : NULL, NULL, bias ? bias + gi * Mg : NULL, act, ctx };
            CORT_TRY(nn_sgemm_opt(pool, kernel, Mg, out_size, Kg, 1.0f, w + gi * Mg * Kg, Kg, 0, &b, 0.0f, yg,
                                  out_size, &o));
        }
    return NULL;
}

void nn_conv_f32_ref(const nn_conv_shape *s, const float *x, const float *w, const float *bias, float *y) {
    const nn_geom *g = &s->g;
    const size_t Cg = s->C / s->group, Mg = s->M / s->group;
    const int64_t in_size = nn_geom_in_size(g), ks = nn_geom_k_size(g);
    size_t yi = 0;
    for (size_t n = 0; n < s->N; n++)
        for (size_t m = 0; m < s->M; m++) {
            size_t gi = m / Mg;
            for (int64_t od = 0; od < g->out[0]; od++)
                for (int64_t oh = 0; oh < g->out[1]; oh++)
                    for (int64_t ow = 0; ow < g->out[2]; ow++) {
                        double acc = bias ? bias[m] : 0.0;
                        for (size_t c = 0; c < Cg; c++) {
                            const float *xc = x + (int64_t)(n * s->C + gi * Cg + c) * in_size;
                            const float *wc = w + (int64_t)(m * Cg + c) * ks;
                            for (int64_t kd = 0; kd < g->k[0]; kd++)
                                for (int64_t kh = 0; kh < g->k[1]; kh++)
                                    for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                        int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                                        int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                                        int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                        if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1] || iw < 0 ||
                                            iw >= g->in[2])
                                            continue;
                                        acc += (double)xc[(id * g->in[1] + ih) * g->in[2] + iw] *
                                               wc[(kd * g->k[1] + kh) * g->k[2] + kw];
                                    }
                        }
                        y[yi++] = (float)acc;
                    }
        }
}

typedef struct col2im_job {
    const nn_conv_shape *s;
    const float *col;     /* [Mg*ks, in_size] */
    const float *bias;    /* already offset to the group, or NULL */
    const nn_act *act;
    float *y;             /* first output channel of the group */
} col2im_job;

static void col2im_run(void *arg, size_t begin, size_t end) {
    const col2im_job *j = arg;
    const nn_geom *g = &j->s->g;
    const int64_t in_size = nn_geom_in_size(g), out_size = nn_geom_out_size(g), ks = nn_geom_k_size(g);
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
    for (size_t m = begin; m < end; m++) {
        float *ym = j->y + (int64_t)m * out_size;
        float bv = j->bias ? j->bias[m] : 0.0f;
        for (int64_t q = 0; q < out_size; q++) ym[q] = bv;
        for (int64_t k = 0; k < ks; k++) {
            int64_t kw = k % g->k[2], kh = (k / g->k[2]) % g->k[1], kd = k / (g->k[2] * g->k[1]);
            const float *cr = j->col + ((int64_t)m * ks + k) * in_size;
            for (int64_t id = 0; id < g->in[0]; id++) {
                int64_t od = id * g->s[0] - g->pb[0] + kd * g->d[0];
                if (od < 0 || od >= OD) continue;
                for (int64_t ih = 0; ih < g->in[1]; ih++) {
                    int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->d[1];
                    if (oh < 0 || oh >= OH) continue;
                    const float *crow = cr + (id * g->in[1] + ih) * g->in[2];
                    float *yrow = ym + (od * OH + oh) * OW;
                    for (int64_t iw = 0; iw < g->in[2]; iw++) {
                        int64_t ow = iw * g->s[2] - g->pb[2] + kw * g->d[2];
                        if (ow >= 0 && ow < OW) yrow[ow] += crow[iw];
                    }
                }
            }
        }
        nn_act_apply(j->act, ym, (size_t)out_size);
    }
}

cort_status *nn_convtranspose_f32(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s,
                                  const float *x, const float *w, const float *bias, const nn_act *act, float *y) {
    const nn_geom *g = &s->g;
    const size_t in_size = (size_t)nn_geom_in_size(g), out_size = (size_t)nn_geom_out_size(g);
    const size_t ks = (size_t)nn_geom_k_size(g);
    const size_t Cg = s->C / s->group, Mg = s->M / s->group;
    if (s->N == 0 || s->M == 0 || out_size == 0) return NULL;
    if (Mg * ks > SIZE_MAX / sizeof(float) / (in_size ? in_size : 1)) return cort_error_oom();
    float *col = cort_malloc(Mg * ks * (in_size ? in_size : 1) * sizeof(float));
    if (!col) return cort_error_oom();
    cort_status *st = NULL;
    for (size_t n = 0; n < s->N && !st; n++)
        for (size_t gi = 0; gi < s->group; gi++) {
            const float *xg = x + (n * s->C + gi * Cg) * in_size;
            nn_gemm_b b = nn_gemm_b_matrix(xg, in_size, 0);
            st = nn_sgemm(pool, kernel, Mg * ks, in_size, Cg, 1.0f, w + gi * Cg * Mg * ks, Mg * ks, 1, &b, 0.0f, col,
                          in_size);
            if (st) break;
            col2im_job j = { s, col, bias ? bias + gi * Mg : NULL, act, y + (n * s->M + gi * Mg) * out_size };
            cort_parallel_for(pool, Mg, 1, col2im_run, &j);
        }
    cort_free(col);
    return st;
}

void nn_convtranspose_f32_ref(const nn_conv_shape *s, const float *x, const float *w, const float *bias, float *y) {
    const nn_geom *g = &s->g;
    const size_t Cg = s->C / s->group, Mg = s->M / s->group;
    const int64_t in_size = nn_geom_in_size(g), out_size = nn_geom_out_size(g), ks = nn_geom_k_size(g);
    for (size_t n = 0; n < s->N; n++)
        for (size_t m = 0; m < s->M; m++)
            for (int64_t q = 0; q < out_size; q++) y[(n * s->M + m) * out_size + q] = bias ? bias[m] : 0.0f;
    for (size_t n = 0; n < s->N; n++)
        for (size_t c = 0; c < s->C; c++) {
            size_t gi = c / Cg;
            for (size_t mg = 0; mg < Mg; mg++) {
                size_t m = gi * Mg + mg;
                const float *wk = w + (int64_t)(c * Mg + mg) * ks;
                float *ym = y + (n * s->M + m) * out_size;
                for (int64_t id = 0; id < g->in[0]; id++)
                    for (int64_t ih = 0; ih < g->in[1]; ih++)
                        for (int64_t iw = 0; iw < g->in[2]; iw++) {
                            float xv = x[(n * s->C + c) * in_size + (id * g->in[1] + ih) * g->in[2] + iw];
                            for (int64_t kd = 0; kd < g->k[0]; kd++)
                                for (int64_t kh = 0; kh < g->k[1]; kh++)
                                    for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                        int64_t od = id * g->s[0] - g->pb[0] + kd * g->d[0];
                                        int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->d[1];
                                        int64_t ow = iw * g->s[2] - g->pb[2] + kw * g->d[2];
                                        if (od < 0 || od >= g->out[0] || oh < 0 || oh >= g->out[1] || ow < 0 ||
                                            ow >= g->out[2])
                                            continue;
                                        ym[(od * g->out[1] + oh) * g->out[2] + ow] +=
                                            xv * wk[(kd * g->k[1] + kh) * g->k[2] + kw];
                                    }
                        }
            }
        }
}
