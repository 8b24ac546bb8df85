/* Float Conv / ConvTranspose kernels. Conv runs as SGEMM W[Mg, Cg*K] x im2col(X)[Cg*K, OUT] per
 * (batch, group), the im2col matrix never materialized: the gemm's B packer reads patches straight
 * from X. Depthwise convs (one input channel per group) go to kernels/depthwise.c instead, since a
 * gemm with K = 9 would be all packing. ConvTranspose is SGEMM W^T X followed by col2im. */
#include <string.h>
#include "../ops/nn/conv.h"
#include "depthwise.h"
#include "isa_config.h"

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

int nn_conv_uses_gemm(size_t C, size_t group) { return !(C == group && group > 1); }

cort_status *nn_conv_pack_weights(const float *w, size_t M, size_t Kg, size_t group, nn_gemm_packed *out) {
    return nn_conv_pack_weights_par(NULL, w, M, Kg, group, out);
}

cort_status *nn_conv_pack_weights_par(cort_pool *pool, const float *w, size_t M, size_t Kg, size_t group,
                                      nn_gemm_packed *out) {
    const size_t Mg = M / group;
    for (size_t gi = 0; gi < group; gi++) {
        cort_status *st = nn_gemm_pack_a_par(pool, NULL, Mg, Kg, 1.0f, w + gi * Mg * Kg, Kg, 0, &out[gi]);
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
    return nn_conv_f32_sum(pool, kernel, s, x, w, bias, NULL, act, y, wpack, ctx);
}

int nn_conv_sum_in_place(const nn_conv_shape *s, const nn_gemm_packed *wpack) {
    const size_t Cg = s->group ? s->C / s->group : 0;
    if (Cg == 1 && s->group > 1) return 0;                                  /* depthwise: sum added after */
    return !(wpack && nn_conv_indirect_applies(s, wpack));                   /* indirect: sum per K slice */
}

cort_status *nn_conv_f32_sum(cort_pool *pool, const nn_gemm_kernel *kernel, const nn_conv_shape *s, const float *x,
                             const float *w, const float *bias, const float *sum, const nn_act *act, float *y,
                             const nn_gemm_packed *wpack, cort_kernel_ctx *ctx) {
    const size_t in_size = (size_t)nn_geom_in_size(&s->g), out_size = (size_t)nn_geom_out_size(&s->g);
    const size_t ks = (size_t)nn_geom_k_size(&s->g);
    const size_t Cg = s->C / s->group, Mg = s->M / s->group, Kg = Cg * ks;
    if (s->N == 0 || s->M == 0 || out_size == 0) return NULL;
    if (Cg == 1 && s->group > 1) {
        const nn_act none = { CORT_ACT_NONE, 0.0f, 0.0f };
        nn_conv_depthwise_f32(pool, kernel, s, x, w, bias, sum ? &none : act, y, ctx);
        if (sum) nn_add_act(pool, y, sum, s->N * s->M * out_size, act);
        return NULL;
    }
    const nn_geom *g = &s->g;
    const int pointwise = ks == 1 && g->s[0] == 1 && g->s[1] == 1 && g->s[2] == 1 && g->pb[0] == 0 &&
                          g->pb[1] == 0 && g->pb[2] == 0 && g->pe[0] == 0 && g->pe[1] == 0 && g->pe[2] == 0;
    /* strided or k x k convs with prepacked weights: read the taps in place, no im2col packing */
    if (wpack && (!kernel || kernel == wpack->k) && nn_conv_indirect_applies(s, wpack))
        return nn_conv_indirect_f32(pool, s, x, wpack, bias, sum, act, y, ctx);
    for (size_t n = 0; n < s->N; n++)
        for (size_t gi = 0; gi < s->group; gi++) {
            const float *xg = x + (n * s->C + gi * Cg) * in_size;
            float *yg = y + (n * s->M + gi * Mg) * out_size;
            im2col_ctx ic = { xg, g };
            nn_gemm_b b = nn_gemm_b_matrix(xg, in_size, 0);
            if (!pointwise) { b.pack = pack_im2col; b.ctx = &ic; }
            /* y written over the residual (sum == y): accumulate onto it from the first K slice */
            const int onto = sum == y;
            nn_gemm_opts o = { wpack ? &wpack[gi] : NULL, NULL, bias ? bias + gi * Mg : NULL, act, ctx,
                               sum && !onto ? sum + (n * s->M + gi * Mg) * out_size : NULL };
            CORT_TRY(nn_sgemm_opt(pool, kernel, Mg, out_size, Kg, 1.0f, wpack ? NULL : w + gi * Mg * Kg, Kg, 0, &b, onto ? 1.0f : 0.0f,
                                  yg, out_size, &o));
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
    void (*const interleave2)(const float *, const float *, float, float *, size_t) = nn_isa()->interleave2;
    /* 2 x KH kernel with stride (KH, 2), no padding or dilation (an upsampling ConvTranspose):
     * every output pixel gets exactly one tap, and each output row is the two column taps' rows
     * interleaved; one vector pass instead of a bias fill and two stride-2 scalar scatter-adds
     * (col2im was 4 % of an OCR detector) */
    if (g->in[0] == 1 && g->k[0] == 1 && g->k[2] == 2 && g->s[2] == 2 && g->s[1] == g->k[1] && g->d[1] == 1 &&
        g->d[2] == 1 && g->pb[1] == 0 && g->pb[2] == 0 && OH == g->in[1] * g->k[1] && OW == 2 * g->in[2] &&
        interleave2) {
        const int64_t IH = g->in[1], IW = g->in[2], KH = g->k[1];
        for (size_t m = begin; m < end; m++) {
            float *ym = j->y + (int64_t)m * out_size;
            const float bv = j->bias ? j->bias[m] : 0.0f;
            for (int64_t ih = 0; ih < IH; ih++)
                for (int64_t kh = 0; kh < KH; kh++) {
                    const float *c0 = j->col + ((int64_t)m * ks + kh * 2) * in_size + ih * IW;
                    interleave2(c0, c0 + in_size, bv, ym + (ih * KH + kh) * OW, (size_t)IW);
                }
            nn_act_apply(j->act, ym, (size_t)out_size);
        }
        return;
    }
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
                                  const float *x, const float *w, const float *bias, const nn_act *act, float *y,
                                  cort_kernel_ctx *ctx) {
    const nn_geom *g = &s->g;
    const size_t in_size = (size_t)nn_geom_in_size(g), out_size = (size_t)nn_geom_out_size(g);
    const size_t ks = (size_t)nn_geom_k_size(g);
    const size_t Cg = s->C / s->group, Mg = s->M / s->group;
    if (s->N == 0 || s->M == 0 || out_size == 0) return NULL;
    if (Mg * ks > SIZE_MAX / sizeof(float) / (in_size ? in_size : 1)) return cort_error_oom();
    /* the column matrix and the gemm's packing buffers come from the session's recycled scratch:
     * a steady-state run does not call the allocator */
    float *col = cort_kernel_scratch(ctx, Mg * ks * (in_size ? in_size : 1) * sizeof(float));
    if (!col) return cort_error_oom();
    cort_status *st = NULL;
    const nn_gemm_opts o = { .ctx = ctx };
    for (size_t n = 0; n < s->N && !st; n++)
        for (size_t gi = 0; gi < s->group; gi++) {
            const float *xg = x + (n * s->C + gi * Cg) * in_size;
            nn_gemm_b b = nn_gemm_b_matrix(xg, in_size, 0);
            st = nn_sgemm_opt(pool, kernel, Mg * ks, in_size, Cg, 1.0f, w + gi * Cg * Mg * ks, Mg * ks, 1, &b, 0.0f,
                              col, in_size, &o);
            if (st) break;
            col2im_job j = { s, col, bias ? bias + gi * Mg : NULL, act, y + (n * s->M + gi * Mg) * out_size };
            cort_parallel_for(pool, Mg, 1, col2im_run, &j);
        }
    cort_kernel_scratch_free(ctx, col);
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

typedef struct add_act_job { float *y; const float *r; const nn_act *act; } add_act_job;

static void add_act_run(void *arg, size_t begin, size_t end) {
    const add_act_job *j = arg;
    for (size_t c = begin; c < end; c++) {
        float *y = j->y + c * 4096;
        const float *r = j->r + c * 4096;
        for (size_t i = 0; i < 4096; i++) y[i] += r[i];
        nn_act_apply(j->act, y, 4096);
    }
}

void nn_add_act(cort_pool *pool, float *y, const float *sum, size_t n, const nn_act *act) {
    const size_t full = n / 4096;
    add_act_job j = { y, sum, act };
    cort_parallel_for(n < 65536 ? NULL : pool, full, 1, add_act_run, &j);
    for (size_t i = full * 4096; i < n; i++) y[i] += sum[i];
    if (n > full * 4096) nn_act_apply(act, y + full * 4096, n - full * 4096);
}
