/* DeformConv (opsets 19, 22): N-D deformable convolution (v1, and v2 with the optional mask).
 * Each kernel tap samples the input at its regular position plus a learned fractional offset,
 * by multilinear interpolation where samples outside the input read zero. Per batch item the
 * samples (times the mask) fill a column matrix [C*K, out], then each group is one product
 * W_g [oC/g, C/g*K] x col_g. Everything computes in double and rounds once to the output type. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

#define DC_MAX_ND 4

typedef struct dc_geom {
    size_t nd, n, c, oc, group, ogroup, kvol, ovol, ivol;
    int64_t in[DC_MAX_ND], k[DC_MAX_ND], out[DC_MAX_ND], str[DC_MAX_ND], dil[DC_MAX_ND], pad[DC_MAX_ND];
} dc_geom;

typedef struct dc_job {
    const dc_geom *g;
    const double *x, *w, *off, *mask, *bias;
    double *col, *y;
    size_t batch;
} dc_job;

/* Row r = c*K + k of the column matrix of batch item j->batch. */
static void dc_col_task(void *arg, size_t begin, size_t end) {
    const dc_job *j = arg;
    const dc_geom *g = j->g;
    size_t nd = g->nd, cpo = g->c / g->ogroup, ncorner = (size_t)1 << nd;
    for (size_t r = begin; r < end; r++) {
        size_t c = r / g->kvol, k = r % g->kvol, og = c / cpo;
        int64_t kp[DC_MAX_ND];
        size_t rk = k;
        for (size_t d = nd; d-- > 0;) { kp[d] = (int64_t)(rk % (size_t)g->k[d]); rk /= (size_t)g->k[d]; }
        const double *plane = j->x + (j->batch * g->c + c) * g->ivol;
        const double *offs = j->off + (j->batch * g->ogroup * g->kvol + og * g->kvol + k) * nd * g->ovol;
        const double *mk = j->mask ? j->mask + (j->batch * g->ogroup * g->kvol + og * g->kvol + k) * g->ovol : NULL;
        double *col = j->col + r * g->ovol;
        for (size_t o = 0; o < g->ovol; o++) {
            int64_t lo[DC_MAX_ND];
            double fr[DC_MAX_ND];
            size_t ro = o;
            for (size_t d = nd; d-- > 0;) {
                int64_t od = (int64_t)(ro % (size_t)g->out[d]);
                ro /= (size_t)g->out[d];
                double p = (double)(od * g->str[d] - g->pad[d] + kp[d] * g->dil[d]) + offs[d * g->ovol + o];
                double f = floor(p);
                /* beyond the input by a whole pixel or more (or NaN): every corner reads zero */
                if (!(f > -2.0 && f < (double)g->in[d] + 1.0)) { lo[0] = INT64_MIN; break; }
                lo[d] = (int64_t)f;
                fr[d] = p - f;
            }
            double v = 0;
            if (lo[0] != INT64_MIN) {
                for (size_t corner = 0; corner < ncorner; corner++) {
                    double wgt = 1;
                    size_t idx = 0;
                    int inside = 1;
                    for (size_t d = 0; d < nd; d++) {
                        int hi = (int)((corner >> (nd - 1 - d)) & 1);
                        int64_t q = lo[d] + hi;
                        if (q < 0 || q >= g->in[d]) { inside = 0; break; }
                        wgt *= hi ? fr[d] : 1.0 - fr[d];
                        idx = idx * (size_t)g->in[d] + (size_t)q;
                    }
                    if (inside) v += wgt * plane[idx];
                }
            }
            col[o] = mk ? v * mk[o] : v;
        }
    }
}

/* Output channel oc of batch item j->batch. */
static void dc_gemm_task(void *arg, size_t begin, size_t end) {
    const dc_job *j = arg;
    const dc_geom *g = j->g;
    size_t cg = g->c / g->group, ocg = g->oc / g->group, rows = cg * g->kvol;
    for (size_t oc = begin; oc < end; oc++) {
        size_t grp = oc / ocg;
        double *y = j->y + (j->batch * g->oc + oc) * g->ovol;
        double b = j->bias ? j->bias[oc] : 0.0;
        for (size_t o = 0; o < g->ovol; o++) y[o] = b;
        const double *wr = j->w + oc * rows, *col = j->col + grp * rows * g->ovol;
        for (size_t r = 0; r < rows; r++) {
            double wv = wr[r];
            const double *cr = col + r * g->ovol;
            for (size_t o = 0; o < g->ovol; o++) y[o] += wv * cr[o];
        }
    }
}

static cort_status *dc_geometry(const cort_node *node, const cort_value *x, const cort_value *w, const cort_value *off, const cort_value *b,
                                const cort_value *m, dc_geom *g) {
    if (x->rank < 3 || x->rank - 2 > DC_MAX_ND)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must have rank 3 to %d, has %zu", DC_MAX_ND + 2, x->rank);
    size_t nd = x->rank - 2;
    g->nd = nd;
    if (w->rank != x->rank) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'W' must have rank %zu, has %zu", x->rank, w->rank);
    int64_t grp = cort_attr_int(node, "group", 1), ogrp = cort_attr_int(node, "offset_group", 1);
    g->n = (size_t)x->shape[0]; g->c = (size_t)x->shape[1]; g->oc = (size_t)w->shape[0];
    if (grp < 1 || ogrp < 1 || g->c % (size_t)grp || g->oc % (size_t)grp || g->c % (size_t)ogrp || (size_t)w->shape[1] * (size_t)grp != g->c)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "group %lld / offset_group %lld do not divide C=%zu, oC=%zu (W dim 1 = %lld)",
                               (long long)grp, (long long)ogrp, g->c, g->oc, (long long)w->shape[1]);
    g->group = (size_t)grp; g->ogroup = (size_t)ogrp;
    const int64_t *ks, *st, *dl, *pd;
    size_t nks = cort_attr_ints(node, "kernel_shape", &ks), nst = cort_attr_ints(node, "strides", &st), ndl = cort_attr_ints(node, "dilations", &dl),
           npd = cort_attr_ints(node, "pads", &pd);
    if ((nks && nks != nd) || (nst && nst != nd) || (ndl && ndl != nd) || (npd && npd != 2 * nd))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "kernel_shape/strides/dilations/pads have %zu/%zu/%zu/%zu values for %zu spatial dims",
                               nks, nst, ndl, npd, nd);
    size_t kv = 1, ov = 1, iv = 1;
    for (size_t d = 0; d < nd; d++) {
        g->in[d] = x->shape[2 + d];
        g->k[d] = nks ? ks[d] : w->shape[2 + d];
        g->str[d] = nst ? st[d] : 1;
        g->dil[d] = ndl ? dl[d] : 1;
        g->pad[d] = npd ? pd[d] : 0;
        int64_t pe = npd ? pd[d + nd] : 0;
        if (g->k[d] != w->shape[2 + d] || g->k[d] < 1 || g->str[d] < 1 || g->dil[d] < 1 || g->pad[d] < 0 || pe < 0 || g->k[d] > INT32_MAX ||
            g->str[d] > INT32_MAX || g->dil[d] > INT32_MAX || g->pad[d] > INT32_MAX || pe > INT32_MAX)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "spatial dim %zu: kernel %lld (W has %lld), stride %lld, dilation %lld, pads %lld/%lld invalid",
                                   d, (long long)g->k[d], (long long)w->shape[2 + d], (long long)g->str[d], (long long)g->dil[d], (long long)g->pad[d],
                                   (long long)pe);
        int64_t span = (g->k[d] - 1) * g->dil[d] + 1, ext = g->in[d] + g->pad[d] + pe;
        if (ext < span) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "spatial dim %zu: dilated kernel %lld exceeds padded input %lld", d,
                                               (long long)span, (long long)ext);
        g->out[d] = (ext - span) / g->str[d] + 1;
        if (cort_mul_size_ovf(kv, (size_t)g->k[d], &kv) || cort_mul_size_ovf(ov, (size_t)g->out[d], &ov) || cort_mul_size_ovf(iv, (size_t)g->in[d], &iv))
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "sizes overflow");
    }
    g->kvol = kv; g->ovol = ov; g->ivol = iv;
    size_t ochan, mcount;
    if (cort_mul_size_ovf(g->ogroup, kv, &ochan) || cort_mul_size_ovf(ochan, ov, &mcount) || cort_mul_size_ovf(mcount, g->n, &mcount) ||
        cort_mul_size_ovf(ochan, nd, &ochan))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "offset/mask sizes overflow (offset_group %zu)", g->ogroup);
    if (off->rank != x->rank || (size_t)off->shape[0] != g->n || (size_t)off->shape[1] != ochan)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'offset' must have shape [%zu, %zu, out...]", g->n, g->ogroup * kv * nd);
    for (size_t d = 0; d < nd; d++)
        if (off->shape[2 + d] != g->out[d])
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'offset' spatial dim %zu is %lld, the output's is %lld", d,
                                   (long long)off->shape[2 + d], (long long)g->out[d]);
    if (b && (b->rank != 1 || (size_t)b->shape[0] != g->oc))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'B' must have shape [%zu]", g->oc);
    if (m && (m->count != mcount || m->rank != x->rank))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 4 'mask' must have shape [%zu, %zu, out...]", g->n, g->ogroup * kv);
    return NULL;
}

static cort_status *deform_conv_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *w = rd_input(ctx, 1), *off = rd_input(ctx, 2), *b = rd_input(ctx, 3), *m = rd_input(ctx, 4);
    const cort_value *all[5] = { x, w, off, b, m };
    static const char *const names[5] = { "X", "W", "offset", "B", "mask" };
    for (size_t i = 0; i < 5; i++)
        if ((i < 3 && !all[i]) || (all[i] && (all[i]->kind != CORT_VKIND_TENSOR || all[i]->type != (x ? x->type : CORT_TYPE_UNDEFINED) ||
                                              !cort_type_is_float(all[i]->type))))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be a float tensor of X's type", i, names[i]);
    dc_geom g;
    CORT_TRY(dc_geometry(ctx->node, x, w, off, b, m, &g));
    int64_t dims[2 + DC_MAX_ND] = { (int64_t)g.n, (int64_t)g.oc };
    for (size_t d = 0; d < g.nd; d++) dims[2 + d] = g.out[d];
    cort_value *yv;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, 2 + g.nd, &yv));
    if (!yv->count) return NULL;
    size_t colsz, ysz;
    if (cort_mul_size_ovf(g.c * g.kvol, g.ovol, &colsz) || cort_mul_size_ovf(colsz, sizeof(double), &colsz) ||
        cort_mul_size_ovf(yv->count, sizeof(double), &ysz))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "column buffer too large");
    double *in[5] = { 0 };
    cort_status *st = NULL;
    for (size_t i = 0; i < 5 && !st; i++)
        if (all[i] && all[i]->count) st = rd_to_f64_scratch(ctx, all[i], &in[i]);
    double *col = st ? NULL : cort_kernel_scratch(ctx, colsz ? colsz : 1);
    double *y = st || !col ? NULL : cort_kernel_scratch(ctx, ysz);
    if (!st && (!col || !y)) st = cort_node_error(ctx->node, CORT_ERROR_OUT_OF_MEMORY, "no memory for the column buffer (%zu bytes)", colsz);
    if (!st && g.c && g.kvol) {
        dc_job j = { &g, in[0], in[1], in[2], in[4], in[3], col, y, 0 };
        for (size_t n = 0; n < g.n; n++) {
            j.batch = n;
            cort_parallel_for(ctx->pool, g.c * g.kvol, 1, dc_col_task, &j);
            cort_parallel_for(ctx->pool, g.oc, 1, dc_gemm_task, &j);
        }
        for (size_t i = 0; i < yv->count; i++) cort_store_f64(yv->data, yv->type, i, y[i]);
    } else if (!st) {
        for (size_t i = 0; i < yv->count; i++) cort_store_f64(yv->data, yv->type, i, in[3] ? in[3][(i / g.ovol) % g.oc] : 0.0);
    }
    if (y) cort_kernel_scratch_free(ctx, y);
    if (col) cort_kernel_scratch_free(ctx, col);
    for (size_t i = 0; i < 5; i++)
        if (in[i]) cort_kernel_scratch_free(ctx, in[i]);
    return st;
}

static cort_status *deform_conv_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0), *w = rd_tinput(ctx, 1), *off = rd_tinput(ctx, 2);
    if (!x) return NULL;
    if (x->rank >= 3 && off && off->rank == x->rank) {
        int64_t dims[CORT_MAX_RANK];
        dims[0] = x->dims[0];
        dims[1] = w && w->rank >= 1 ? w->dims[0] : -1;
        for (int d = 2; d < x->rank; d++) dims[d] = off->dims[d];
        cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, x->rank);
    } else {
        cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    }
    return NULL;
}

const cort_op_def nn_op_deform_conv = { .name = "DeformConv", .domain = "", .min_opset = 19, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = deform_conv_infer, .run = deform_conv_run };
