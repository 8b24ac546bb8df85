/* cort.PwDwConv(X, Wp, Bp?, Wd, Bd?): Y = dwact(DepthwiseConv(pwact(Conv1x1(X, Wp) + Bp), Wd) + Bd),
 * the expand and depthwise convs of an inverted-residual block when the expanded tensor is bigger
 * than the caches (the level-2 optimizer fuses them: cort_graph_fuse_pw_dw). The expanded tensor is
 * never materialized: each task walks a run of bands of output rows, computes the expand conv for
 * the input rows a band needs into its own scratch (E planes of a few rows, L2-sized) and runs the
 * depthwise kernel over it. Rows two bands share (the 3x3 window's halo) move to the front of the
 * scratch instead of being computed again. Attributes: the depthwise conv's (kernel_shape, strides,
 * pads, dilations, group, auto_pad), pw_activation / pw_alpha / pw_beta (CORT_ACT_*). node->act is
 * the depthwise conv's activation. float32 only. */
#include <string.h>
#include "fused.h"
#include "../nn/nn_common.h"
#include "../nn/conv.h"
#include "../../kernels/depthwise.h"
#include "../../kernels/gemm.h"
#include "../../../../core/alloc.h"
#include "../../../../core/prepacked.h"

/* Scratch per task: E planes of this many bytes' worth of expanded rows (at least the window's);
 * smaller bands measured slower, larger ones no faster */
#define PWDW_BAND_BYTES (1024 * 1024)

typedef struct pwdw_state {
    nn_window w;             /* the depthwise conv's window attributes */
    nn_act pw_act;
    nn_gemm_packed pack;     /* Wp as the gemm's A (E x C), packed at creation; k == NULL if not */
    int shared;              /* pack.data belongs to the session's prepacked-weights container */
} pwdw_state;

static void pwdw_free(void *state) {
    pwdw_state *s = state;
    if (!s) return;
    if (!s->shared) nn_gemm_packed_free(&s->pack);
    cort_free(s);
}

static void pwdw_pack_free(void *obj) {
    nn_gemm_packed_free(obj);
    cort_free(obj);
}

/* Packs Wp[E, C] into s->pack, or finds the pack another session sharing the container made (keyed
 * by Wp's bytes, E, C and the micro-kernel of the ISA level in force). */
static cort_status *pwdw_pack(const cort_node *node, pwdw_state *s, const float *wp, size_t E, size_t C) {
    cort_prepacked_weights *pw = cort_node_prepacked(node);
    if (!pw) return nn_conv_pack_weights(wp, E, C, 1, &s->pack);
    const nn_gemm_kernel *k = nn_gemm_best_kernel();
    cort_prepack_key key;
    memset(&key, 0, sizeof key);
    cort_prepack_hash(wp, E * C * sizeof(float), &key);
    key.kind = CORT_PREPACK_KIND_PWDW;
    key.params[0] = E;
    key.params[1] = C;
    key.params[2] = (uint64_t)(uintptr_t)k;
    key.params[3] = k ? (uint64_t)k->isa : 0;
    const nn_gemm_packed *got = cort_prepack_find(pw, &key);
    if (!got) {
        nn_gemm_packed *mine = cort_calloc(1, sizeof *mine);
        if (!mine) return cort_error_oom();
        cort_huge_arena *prev = cort_huge_arena_bind(NULL);   /* shared packs outlive the session */
        cort_status *st = nn_conv_pack_weights(wp, E, C, 1, mine);
        cort_huge_arena_bind(prev);
        if (st) {
            cort_free(mine);
            return st;
        }
        if (!(got = cort_prepack_insert(pw, &key, mine, pwdw_pack_free))) return cort_error_oom();
    }
    s->pack = *got;
    s->shared = 1;
    return NULL;
}

static cort_status *pwdw_init(const cort_node *node, void **state) {
    pwdw_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = nn_window_parse(node, 0, &s->w);
    if (st) goto error;
    s->pw_act.kind = (int)cort_attr_int(node, "pw_activation", CORT_ACT_NONE);
    s->pw_act.alpha = cort_attr_float(node, "pw_alpha", 0.0f);
    s->pw_act.beta = cort_attr_float(node, "pw_beta", 0.0f);
    const cort_value *w = cort_node_const_input_lazy(node, 1);
    if (w && w->kind == CORT_VKIND_TENSOR && w->type == CORT_TYPE_FLOAT && w->rank == 4 && w->count &&
        w->shape[2] == 1 && w->shape[3] == 1) {
        const void *wv;
        if ((st = cort_node_const_data(node, 1, &wv))) goto error;
        if ((st = pwdw_pack(node, s, wv, (size_t)w->shape[0], (size_t)w->shape[1]))) goto error;
        cort_node_const_input_packed(node, 1);
    }
    *state = s;
    return NULL;
error:
    pwdw_free(s);
    return st;
}

static cort_status *pwdw_infer(cort_infer_ctx *ctx) {
    nn_infer_type(ctx, 0, CORT_TYPE_FLOAT);
    const pwdw_state *s = ctx->state;
    if (ctx->n_inputs < 4) return NULL;
    const cort_tinfo *x = &ctx->inputs[0], *wp = &ctx->inputs[1], *wd = &ctx->inputs[3];
    if (x->rank != 4 || wd->rank != 4 || wp->rank != 4) return NULL;
    nn_geom g;
    cort_status *st = nn_window_geom(ctx->node, &s->w, 2, x->dims + 2, wd->dims + 2, 0, &g);
    if (st) { cort_status_free(st); return NULL; }   /* reported at run time with the real shapes */
    int64_t dims[4] = { x->dims[0], wp->dims[0], -1, -1 };
    nn_geom_out_dims(&g, dims + 2);
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, dims, 4);
    return NULL;
}

typedef struct pwdw_job {
    const pwdw_state *st;
    const nn_geom *g;
    const float *x, *wp, *bp, *wd, *bd;
    nn_act dw_act;
    float *y, *scratch;
    size_t C, E, H, W, rows_alloc, band, nbands, ntasks;
    cort_kernel_ctx *ctx;
    cort_status *err[64];    /* per task (ntasks <= 64) */
} pwdw_job;

static void pwdw_task(void *arg, size_t begin, size_t end) {
    pwdw_job *j = arg;
    const nn_geom *g = j->g;
    const size_t W = j->W, H = j->H, ps = j->rows_alloc * W;
    const int64_t s = g->s[1], pt = g->pb[1], KH = (g->k[1] - 1) * g->d[1] + 1, OH = g->out[1], OW = g->out[2];
    for (size_t t = begin; t < end; t++) {
        float *sc = j->scratch + t * j->E * ps;
        int64_t have_lo = 0, have_hi = 0;   /* input rows [have_lo, have_hi) are in the scratch */
        for (size_t b = t * j->nbands / j->ntasks; b < (t + 1) * j->nbands / j->ntasks; b++) {
            if (j->ctx && cort_kernel_cancelled(j->ctx)) return;
            const int64_t o0 = (int64_t)(b * j->band), o1 = o0 + (int64_t)j->band < OH ? o0 + (int64_t)j->band : OH;
            int64_t lo = o0 * s - pt, hi = (o1 - 1) * s - pt + KH;
            if (lo < 0) lo = 0;
            if (hi > (int64_t)H) hi = (int64_t)H;
            if (hi < lo) hi = lo;
            int64_t from = lo;
            if (have_hi > lo && have_lo <= lo && have_hi <= hi) {
                /* the halo rows the previous band expanded move to the front */
                const size_t keep = (size_t)(have_hi - lo) * W, shift = (size_t)(lo - have_lo) * W;
                if (shift)
                    for (size_t e = 0; e < j->E; e++) memmove(sc + e * ps, sc + e * ps + shift, keep * sizeof(float));
                from = have_hi;
            }
            if (hi > from) {
                /* expand rows [from, hi): E x (rows * W) = Wp (E x C) * X[:, rows] (C planes H*W apart) */
                nn_gemm_b xb = nn_gemm_b_matrix(j->x + (size_t)from * W, H * W, 0);
                nn_gemm_opts o = { j->st->pack.k ? &j->st->pack : NULL, NULL, j->bp, &j->st->pw_act, j->ctx, NULL, NULL };
                cort_status *e = nn_sgemm_opt(NULL, NULL, j->E, (size_t)(hi - from) * W, j->C, 1.0f, j->wp, j->C, 0,
                                              &xb, 0.0f, sc + (size_t)(from - lo) * W, ps, &o);
                if (e) {
                    if (!j->err[t]) j->err[t] = e;
                    else cort_status_free(e);
                    return;
                }
            }
            have_lo = lo;
            have_hi = hi;
            /* the depthwise conv of output rows [o0, o1) over the expanded rows [lo, hi) */
            nn_geom gb = *g;
            gb.in[1] = hi - lo;
            gb.out[1] = o1 - o0;
            gb.pb[1] = pt + lo - o0 * s;
            gb.pe[1] = (gb.out[1] - 1) * s + KH - gb.in[1] - gb.pb[1];
            if (gb.pe[1] < 0) gb.pe[1] = 0;
            nn_conv_depthwise_planes_f32(&gb, 0, j->E, sc, ps, j->wd, j->bd, &j->dw_act, j->y + (size_t)(o0 * OW),
                                         (size_t)(OH * OW));
        }
    }
}

static cort_status *pwdw_run(cort_kernel_ctx *ctx) {
    const pwdw_state *st = ctx->state;
    CORT_TRY(nn_check_input(ctx, 0, "X", 4, 4));
    CORT_TRY(nn_check_input(ctx, 1, "Wp", 4, 4));
    CORT_TRY(nn_check_input(ctx, 3, "Wd", 4, 4));
    const cort_value *x = ctx->inputs[0], *wp = ctx->inputs[1], *wd = ctx->inputs[3];
    const cort_value *bp = nn_opt_input(ctx, 2), *bd = nn_opt_input(ctx, 4);
    char bx[160], bw[160];
    const size_t N = (size_t)x->shape[0], C = (size_t)x->shape[1], H = (size_t)x->shape[2], W = (size_t)x->shape[3];
    const size_t E = (size_t)wp->shape[0];
    if (x->type != CORT_TYPE_FLOAT || wp->type != CORT_TYPE_FLOAT || wd->type != CORT_TYPE_FLOAT)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs X, Wp and Wd must be float32");
    if ((size_t)wp->shape[1] != C || wp->shape[2] != 1 || wp->shape[3] != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'Wp' has shape %s, expected [E,%zu,1,1] (X has shape %s)",
                               nn_shape(wp, bw, sizeof bw), C, nn_shape(x, bx, sizeof bx));
    if ((size_t)wd->shape[0] != E || wd->shape[1] != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'Wd' has shape %s, expected [%zu,1,k,k]",
                               nn_shape(wd, bw, sizeof bw), E);
    const cort_value *bs[2] = { bp, bd };
    for (int i = 0; i < 2; i++)
        if (bs[i] && (bs[i]->kind != CORT_VKIND_TENSOR || bs[i]->type != CORT_TYPE_FLOAT || bs[i]->rank != 1 ||
                      bs[i]->count != E))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %d '%s' has shape %s, expected [%zu]",
                                   i ? 4 : 2, i ? "Bd" : "Bp", nn_shape(bs[i], bw, sizeof bw), E);
    const int64_t group = cort_attr_int(ctx->node, "group", 1);
    if (group != (int64_t)E)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'group' = %lld, expected %zu",
                               (long long)group, E);
    nn_geom g;
    CORT_TRY(nn_window_geom(ctx->node, &st->w, 2, x->shape + 2, wd->shape + 2, 0, &g));
    int64_t ydims[4] = { (int64_t)N, (int64_t)E, 0, 0 };
    nn_geom_out_dims(&g, ydims + 2);
    cort_value *y = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, ydims, 4, &y));
    if (!y->count) return NULL;
    /* bands of output rows whose expanded input rows fit PWDW_BAND_BYTES */
    const int64_t s = g.s[1], KH = (g.k[1] - 1) * g.d[1] + 1, OH = g.out[1];
    const size_t row_bytes = E * W * sizeof(float);
    int64_t band = ((int64_t)(PWDW_BAND_BYTES / (row_bytes ? row_bytes : 1)) - KH) / s + 1;
    if (band < 1) band = 1;
    if (band > OH) band = OH;
    size_t ntasks = (size_t)cort_pool_threads(ctx->pool);
    if (ntasks > 64) ntasks = 64;
    if (ntasks > (size_t)OH) ntasks = (size_t)OH;
    /* as many bands per task for every task (7 bands of 46 rows on 2 threads: 8 of 40) */
    const int64_t per_task = (OH + band * (int64_t)ntasks - 1) / (band * (int64_t)ntasks);
    band = (OH + per_task * (int64_t)ntasks - 1) / (per_task * (int64_t)ntasks);
    const size_t rows_alloc = (size_t)((band - 1) * s + KH);
    const size_t nbands = (size_t)((OH + band - 1) / band);
    if (ntasks > nbands) ntasks = nbands;
    if (E > SIZE_MAX / sizeof(float) / rows_alloc / (W ? W : 1) / ntasks) return cort_error_oom();
    float *scratch = cort_kernel_scratch(ctx, ntasks * E * rows_alloc * W * sizeof(float));
    if (!scratch) return cort_error_oom();
    pwdw_job j;
    memset(&j, 0, sizeof j);
    j.st = st; j.g = &g; j.wd = wd->data; j.bd = bd ? bd->data : NULL; j.bp = bp ? bp->data : NULL;
    j.wp = wp->data;
    j.dw_act = nn_act_of(ctx->node);
    j.scratch = scratch; j.C = C; j.E = E; j.H = H; j.W = W; j.rows_alloc = rows_alloc;
    j.band = (size_t)band; j.nbands = nbands; j.ntasks = ntasks; j.ctx = ctx;
    cort_status *err = NULL;
    for (size_t n = 0; n < N && !err; n++) {
        j.x = (const float *)x->data + n * C * H * W;
        j.y = (float *)y->data + n * E * (size_t)(OH * g.out[2]);
        cort_parallel_for(ctx->pool, ntasks, 1, pwdw_task, &j);
        for (size_t t = 0; t < ntasks; t++)
            if (j.err[t]) {
                if (!err) err = j.err[t];
                else cort_status_free(j.err[t]);
                j.err[t] = NULL;
            }
        if (!err && cort_kernel_cancelled(ctx)) err = cort_kernel_cancelled_status(ctx);
    }
    cort_kernel_scratch_free(ctx, scratch);
    return err;
}

const cort_op_def fu_op_pwdw_conv = { .name = "PwDwConv", .domain = "cort", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_FLOAT), .init = pwdw_init, .free_state = pwdw_free, .infer = pwdw_infer,
    .run = pwdw_run };
