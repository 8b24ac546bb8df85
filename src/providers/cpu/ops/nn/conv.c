/* Conv, ConvTranspose, ConvInteger, QLinearConv operators (ai.onnx). */
#include <math.h>
#include <string.h>
#include "conv.h"
#include "../quant/quant.h"
#include "../../kernels/winograd.h"
#include "../../../../graph/graph.h"   /* statically inferred input shapes (slot_info) at init */
#include "../../../../core/alloc.h"
#include "../../../../core/prepacked.h"

typedef struct conv_state {
    nn_window w;
    int64_t   group;
    int64_t   output_padding[NN_MAX_SPATIAL];
    int64_t   output_shape[NN_MAX_SPATIAL + 2];
    size_t    n_output_shape;
    /* Conv only: constant float weights packed per group at creation (NULL when W is not constant) */
    nn_gemm_packed *wpack;
    const cort_value *wsrc;    /* the constant the packs were made from (it lives as long as the graph) */
    int64_t         wdims[NN_MAX_SPATIAL + 2];
    size_t          wrank;
    /* Conv only: Winograd-transformed weights instead of wpack when the statically known input
     * shape makes Winograd the faster path (NULL otherwise) */
    nn_wino_weights *wino;
    /* Conv only: W^T packed for the transposed small-plane path instead of wpack, when the
     * statically known shape makes that path the faster one (NULL otherwise) */
    nn_gemm_packed  *wpack_t;
    int shared;   /* wpack, wino and wpack_t belong to the session's prepacked-weights container */
} conv_state;

/* What a conv packs from its weights, as stored in a prepacked-weights container. */
typedef struct conv_packs {
    size_t group;
    nn_gemm_packed *wpack;
    nn_wino_weights *wino;
    nn_gemm_packed *wpack_t;
} conv_packs;

static void conv_packs_free_parts(size_t group, nn_gemm_packed *wpack, nn_wino_weights *wino, nn_gemm_packed *wpack_t) {
    if (wpack)
        for (size_t g = 0; g < group; g++) nn_gemm_packed_free(&wpack[g]);
    cort_free(wpack);
    nn_wino_free(wino);
    cort_free(wino);
    nn_gemm_packed_free(wpack_t);
    cort_free(wpack_t);
}

static void conv_packs_free(void *obj) {
    conv_packs *p = obj;
    conv_packs_free_parts(p->group, p->wpack, p->wino, p->wpack_t);
    cort_free(p);
}

static void conv_free(void *state) {
    conv_state *s = state;
    if (!s) return;
    if (!s->shared) conv_packs_free_parts((size_t)s->group, s->wpack, s->wino, s->wpack_t);
    cort_free(s);
}

static cort_status *conv_init(const cort_node *node, void **state) {
    conv_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = nn_window_parse(node, 0, &s->w);
    if (st) goto error;
    s->group = cort_attr_int(node, "group", 1);
    if (s->group < 1) {
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'group' = %lld, expected >= 1",
                             (long long)s->group);
        goto error;
    }
    const int64_t *v;
    size_t n = cort_attr_ints(node, "output_padding", &v);
    if (n > NN_MAX_SPATIAL) {
        st = cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'output_padding' has %zu values", n);
        goto error;
    }
    for (size_t i = 0; i < n; i++) s->output_padding[i] = v[i];
    n = cort_attr_ints(node, "output_shape", &v);
    if (n > NN_MAX_SPATIAL + 2) {
        st = cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'output_shape' has %zu values", n);
        goto error;
    }
    for (size_t i = 0; i < n; i++) s->output_shape[i] = v[i];
    s->n_output_shape = n;
    *state = s;
    return NULL;
error:
    cort_free(s);
    return st;
}

/* Whether the input shape inferred at creation makes this a Winograd conv; if so makes s->wino
 * (left NULL on out-of-memory, which the caller reports). Unknown shapes keep the gemm path. */
/* The conv's shape as inferred at creation for a one-group 2-D conv, if fully known. */
static int conv_static_shape(const cort_node *node, const conv_state *s, const cort_value *w, nn_conv_shape *cs) {
    if (w->rank != 4 || s->group != 1 || !node->graph || node->n_inputs < 1 || node->in_slot[0] < 0 ||
        !node->graph->slot_info)
        return 0;
    const cort_tinfo *xi = &node->graph->slot_info[node->in_slot[0]];
    if (xi->kind != CORT_VKIND_TENSOR || xi->rank != 4 || xi->elem != CORT_TYPE_FLOAT) return 0;
    for (int i = 0; i < 4; i++)
        if (xi->dims[i] < 1) return 0;
    if (xi->dims[1] != w->shape[1]) return 0;
    nn_conv_shape z = { (size_t)xi->dims[0], (size_t)xi->dims[1], (size_t)w->shape[0], 1, { 0 } };
    *cs = z;
    cort_status *st = nn_window_geom(node, &s->w, 2, xi->dims + 2, w->shape + 2, 0, &cs->g);
    if (st) { cort_status_free(st); return 0; }
    return 1;
}

/* Whether the static shape makes this a small-plane (transposed) conv; if so packs s->wpack_t
 * (left NULL on out-of-memory, which the caller reports). */
static int conv_init_small(const cort_node *node, conv_state *s, const cort_value *w, const float *wd) {
    nn_conv_shape cs;
    if (!conv_static_shape(node, s, w, &cs) || !nn_conv_small_prefers(&cs, nn_gemm_best_kernel())) return 0;
    s->wpack_t = cort_calloc(1, sizeof *s->wpack_t);
    if (s->wpack_t && nn_conv_small_pack_par(cort_node_init_pool(node), wd, cs.M, w->count / cs.M, s->wpack_t)) {
        cort_free(s->wpack_t);
        s->wpack_t = NULL;
    }
    return 1;
}

static int conv_init_winograd(const cort_node *node, conv_state *s, const cort_value *w, const float *wd) {
    nn_conv_shape cs;
    if (!conv_static_shape(node, s, w, &cs)) return 0;
    const int tile = nn_wino_applies(&cs);
    if (!tile) return 0;
    s->wino = cort_malloc(sizeof *s->wino);
    if (s->wino && nn_wino_pack_par(cort_node_init_pool(node), wd, cs.M, cs.C, tile, s->wino)) {   /* only on OOM */
        cort_free(s->wino);
        s->wino = NULL;
    }
    return 1;
}

/* Conv: packs constant float weights once so every run skips packing them. */
/* The packs in s were made from W: remember which constant (runs check it) and let its file pages go. */
static void conv_packed_from(const cort_node *node, conv_state *s, const cort_value *w) {
    s->wsrc = w;
    s->wrank = w->rank;
    for (size_t i = 0; i < w->rank; i++) s->wdims[i] = w->shape[i];
    cort_node_const_input_packed(node, 1);
}

/* Packs W into s along the path the per-ISA config and the static shape choose. */
static cort_status *conv_build_packs(const cort_node *node, conv_state *s, const cort_value *w, const float *wd,
                                     size_t M, size_t Kg, size_t group) {
    if (conv_init_winograd(node, s, w, wd)) return s->wino ? NULL : cort_error_oom();
    if (conv_init_small(node, s, w, wd)) return s->wpack_t ? NULL : cort_error_oom();
    s->wpack = cort_calloc(group, sizeof *s->wpack);
    if (!s->wpack) return cort_error_oom();
    cort_status *st = nn_conv_pack_weights_par(cort_node_init_pool(node), wd, M, Kg, group, s->wpack);
    if (st) {
        cort_free(s->wpack);
        s->wpack = NULL;
    }
    return st;
}

/* The container key of W's packs: its bytes plus everything the packed layout depends on (the
 * path and tile chosen, the shapes, the micro-kernel of the ISA level in force). */
static void conv_pack_key(const cort_node *node, const conv_state *s, const cort_value *w, const float *wd,
                          size_t M, size_t Kg, size_t group, cort_prepack_key *key) {
    memset(key, 0, sizeof *key);
    cort_prepack_hash(wd, w->count * sizeof(float), key);
    key->kind = CORT_PREPACK_KIND_CONV;
    nn_conv_shape cs;
    const nn_gemm_kernel *k = nn_gemm_best_kernel();
    const int st = conv_static_shape(node, s, w, &cs);
    const int tile = st ? nn_wino_applies(&cs) : 0;
    const int small = !tile && st && nn_conv_small_prefers(&cs, k);
    key->params[0] = tile ? 1 : small ? 2 : 3;
    key->params[1] = (uint64_t)tile;
    key->params[2] = M;
    key->params[3] = Kg;
    key->params[4] = group;
    key->params[5] = (uint64_t)w->shape[1];
    key->params[6] = (uint64_t)(uintptr_t)k;
    key->params[7] = k ? (uint64_t)k->isa : 0;
}

static void conv_adopt(conv_state *s, const conv_packs *p) {
    s->wpack = p->wpack;
    s->wino = p->wino;
    s->wpack_t = p->wpack_t;
    s->shared = 1;
}

static cort_status *conv_init_packed(const cort_node *node, void **state) {
    CORT_TRY(conv_init(node, state));
    conv_state *s = *state;
    /* W may still be in the model file: packed from cort_node_const_data, never copied for good */
    const cort_value *w = cort_node_const_input_lazy(node, 1);
    if (!w || w->kind != CORT_VKIND_TENSOR || w->type != CORT_TYPE_FLOAT || w->rank < 3 ||
        w->rank > NN_MAX_SPATIAL + 2 || w->count == 0 || (!w->data && !w->lazy_src))
        return NULL;
    const size_t M = (size_t)w->shape[0], Kg = w->count / M, group = (size_t)s->group;
    const size_t C = (size_t)w->shape[1] * group;
    if (M % group || !nn_conv_uses_gemm(C, group)) return NULL;   /* invalid (reported at run) or depthwise */
    const void *wv;
    cort_status *st = cort_node_const_data(node, 1, &wv);
    if (st) {
        conv_free(s);
        *state = NULL;
        return st;
    }
    const float *wd = wv;
    cort_prepacked_weights *pw = cort_node_prepacked(node);
    cort_prepack_key key;
    if (pw) {
        conv_pack_key(node, s, w, wd, M, Kg, group, &key);
        const conv_packs *got = cort_prepack_find(pw, &key);
        if (got) {
            conv_adopt(s, got);
            conv_packed_from(node, s, w);
            return NULL;
        }
    }
    /* shared packs must outlive this session: off its huge arena */
    cort_huge_arena *prev = pw ? cort_huge_arena_bind(NULL) : NULL;
    st = conv_build_packs(node, s, w, wd, M, Kg, group);
    if (pw) cort_huge_arena_bind(prev);
    if (st) {
        conv_free(s);
        *state = NULL;
        return st;
    }
    conv_packs *mine = pw ? cort_malloc(sizeof *mine) : NULL;
    if (mine) {   /* else (out of memory for the entry) the session keeps its packs to itself */
        mine->group = group;
        mine->wpack = s->wpack;
        mine->wino = s->wino;
        mine->wpack_t = s->wpack_t;
        s->wpack = NULL; s->wino = NULL; s->wpack_t = NULL;
        const conv_packs *got = cort_prepack_insert(pw, &key, mine, conv_packs_free);
        if (!got) {
            conv_free(s);
            *state = NULL;
            return cort_error_oom();
        }
        conv_adopt(s, got);
    }
    conv_packed_from(node, s, w);
    return NULL;
}

static int conv_state_matches(const conv_state *s, const cort_value *w) {
    if (w != s->wsrc || w->rank != s->wrank || w->type != CORT_TYPE_FLOAT) return 0;
    for (size_t i = 0; i < w->rank; i++)
        if (w->shape[i] != s->wdims[i]) return 0;
    return 1;
}

/* The prepacked weights when they were made from exactly this W, else NULL (pack per run). */
static const nn_gemm_packed *conv_packed_for(const conv_state *s, const cort_value *w) {
    return s->wpack && conv_state_matches(s, w) ? s->wpack : NULL;
}

/* The Winograd weights when they were made from exactly this W, else NULL. */
static const nn_wino_weights *conv_wino_for(const conv_state *s, const cort_value *w) {
    return s->wino && conv_state_matches(s, w) ? s->wino : NULL;
}

/* ConvTranspose geometry: g->in = X spatial dims, g->out = Y spatial dims, pads resolved. */
static cort_status *convt_geom(const cort_node *node, const conv_state *s, int nd, const int64_t *in,
                               const int64_t *k, nn_geom *g) {
    if (nd < 1 || nd > NN_MAX_SPATIAL)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "%d spatial dimensions (supported: 1 to %d)", nd,
                               NN_MAX_SPATIAL);
    const nn_window *w = &s->w;
    if (w->nd && w->nd != nd)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                               "attributes describe %d spatial dimensions but the input has %d", w->nd, nd);
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    g->nd = nd;
    const int64_t *oshape = NULL;
    if (s->n_output_shape == (size_t)nd) oshape = s->output_shape;
    else if (s->n_output_shape == (size_t)nd + 2) oshape = s->output_shape + 2;
    else if (s->n_output_shape)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'output_shape' has %zu values for %d "
                               "spatial dimensions", s->n_output_shape, nd);
    for (int i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        g->in[j] = in[i];
        g->k[j] = k[i];
        g->s[j] = w->strides[i];
        g->d[j] = w->dilations[i];
        int64_t op = s->output_padding[i];
        if (in[i] < 0 || k[i] < 0) { g->out[j] = -1; continue; }
        /* stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1, every term from the model */
        int64_t ext, base, out;
        int ovf = cort_mul_i64_ovf(g->d[j], g->k[j] - 1, &ext) || cort_add_i64_ovf(ext, 1, &ext) ||
                  cort_mul_i64_ovf(g->s[j], in[i] - 1, &base) || cort_add_i64_ovf(base, op, &base) ||
                  cort_add_i64_ovf(base, ext, &base);
        if (!ovf && (oshape || w->auto_pad == NN_PAD_SAME_UPPER || w->auto_pad == NN_PAD_SAME_LOWER)) {
            int64_t total = 0;
            ovf = oshape ? (out = oshape[i], 0) : cort_mul_i64_ovf(in[i], g->s[j], &out);
            ovf = ovf || cort_sub_i64_ovf(base, out, &total);
            if (!oshape && total < 0) total = 0;
            /* floor division: a negative total (output_shape larger than natural) pads at the end */
            int64_t half = total >= 0 ? total / 2 : -(total / -2 + (total % 2 != 0));
            if (w->auto_pad == NN_PAD_SAME_UPPER) { g->pb[j] = half; g->pe[j] = total - half; }
            else { g->pb[j] = total - half; g->pe[j] = half; }
            g->out[j] = out;
        } else if (!ovf) {
            if (w->auto_pad == NN_PAD_NOTSET) { g->pb[j] = w->pads[i]; g->pe[j] = w->pads[nd + i]; }
            ovf = cort_sub_i64_ovf(base, g->pb[j], &out) || cort_sub_i64_ovf(out, g->pe[j], &out);
            g->out[j] = out;
        }
        if (ovf)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                   "spatial dimension %d: output size of input %lld, kernel %lld, stride %lld overflows", i,
                                   (long long)in[i], (long long)k[i], (long long)g->s[j]);
        if (g->out[j] < 0)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "spatial dimension %d: output size %lld < 0", i,
                                   (long long)g->out[j]);
    }
    return NULL;
}

/* ---- inference ---- */
static cort_status *conv_infer_common(cort_infer_ctx *ctx, int transpose, cort_type out_type) {
    nn_infer_type(ctx, 0, out_type);
    const conv_state *s = ctx->state;
    const size_t wi = transpose == 2 ? 3 : 1;   /* QLinearConv: w is input 3 */
    const cort_tinfo *x = &ctx->inputs[0], *wt = ctx->n_inputs > wi ? &ctx->inputs[wi] : NULL;
    if (x->rank < 3 || !wt) return NULL;
    int nd = x->rank - 2;
    if (nd > NN_MAX_SPATIAL) return NULL;
    int64_t k[NN_MAX_SPATIAL], dims[CORT_MAX_RANK];
    for (int i = 0; i < nd; i++)
        k[i] = s->w.has_kernel ? s->w.kernel[i] : (wt->rank == x->rank ? wt->dims[2 + i] : -1);
    nn_geom g;
    cort_status *st = transpose == 1 ? convt_geom(ctx->node, s, nd, x->dims + 2, k, &g)
                                     : nn_window_geom(ctx->node, &s->w, nd, x->dims + 2, k, 0, &g);
    if (st) { cort_status_free(st); return NULL; }   /* reported at run time with the real shapes */
    dims[0] = x->dims[0];
    dims[1] = -1;
    if (wt->rank == x->rank) {
        if (transpose == 1) dims[1] = cort_dim_mul(wt->dims[1], s->group);
        else dims[1] = wt->dims[0];
    }
    nn_geom_out_dims(&g, dims + 2);
    cort_tinfo_tensor_shape(&ctx->outputs[0], out_type, dims, x->rank);
    return NULL;
}

static cort_status *conv_infer(cort_infer_ctx *ctx) { return conv_infer_common(ctx, 0, ctx->inputs[0].elem); }
static cort_status *convt_infer(cort_infer_ctx *ctx) { return conv_infer_common(ctx, 1, ctx->inputs[0].elem); }
static cort_status *convint_infer(cort_infer_ctx *ctx) { return conv_infer_common(ctx, 0, CORT_TYPE_INT32); }
static cort_status *qlconv_infer(cort_infer_ctx *ctx) {
    cort_type t = ctx->n_inputs > 7 ? ctx->inputs[7].elem : CORT_TYPE_UNDEFINED;
    if (t == CORT_TYPE_UNDEFINED) t = ctx->inputs[0].elem;
    return conv_infer_common(ctx, 2, t);
}

/* ---- run-time validation shared by the float and integer convs ---- */
static cort_status *conv_prepare(cort_kernel_ctx *ctx, size_t xi, size_t wi, int transpose, nn_conv_shape *cs,
                                 int64_t *ydims) {
    const conv_state *s = ctx->state;
    CORT_TRY(nn_check_input(ctx, xi, "X", 3, -1));
    const cort_value *x = ctx->inputs[xi];
    CORT_TRY(nn_check_input(ctx, wi, "W", (int)x->rank, (int)x->rank));
    const cort_value *w = ctx->inputs[wi];
    char bx[160], bw[160];
    int nd = (int)x->rank - 2;
    const int64_t *k = w->shape + 2;
    for (int i = 0; i < nd && s->w.has_kernel; i++)
        if (s->w.kernel[i] != k[i])
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu 'W' has shape %s but attribute kernel_shape[%d] = %lld", wi,
                                   nn_shape(w, bw, sizeof bw), i, (long long)s->w.kernel[i]);
    cs->N = (size_t)x->shape[0];
    cs->C = (size_t)x->shape[1];
    cs->group = (size_t)s->group;
    if (cs->C % cs->group)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'X' has shape %s: %zu channels are not divisible by group %zu", xi,
                               nn_shape(x, bx, sizeof bx), cs->C, cs->group);
    if (!transpose) {
        cs->M = (size_t)w->shape[0];
        if ((size_t)w->shape[1] * cs->group != cs->C || cs->M % cs->group)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu 'W' has shape %s, expected [M,%zu,...] with M divisible by group %zu "
                                   "(X has shape %s)", wi, nn_shape(w, bw, sizeof bw), cs->C / cs->group, cs->group,
                                   nn_shape(x, bx, sizeof bx));
        CORT_TRY(nn_window_geom(ctx->node, &s->w, nd, x->shape + 2, k, 0, &cs->g));
    } else {
        if ((size_t)w->shape[0] != cs->C)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu 'W' has shape %s, expected [%zu,M/group,...] (X has shape %s)", wi,
                                   nn_shape(w, bw, sizeof bw), cs->C, nn_shape(x, bx, sizeof bx));
        cs->M = (size_t)w->shape[1] * cs->group;
        CORT_TRY(convt_geom(ctx->node, s, nd, x->shape + 2, k, &cs->g));
    }
    ydims[0] = (int64_t)cs->N;
    ydims[1] = (int64_t)cs->M;
    nn_geom_out_dims(&cs->g, ydims + 2);
    return NULL;
}

static cort_status *check_bias(cort_kernel_ctx *ctx, size_t bi, size_t M) {
    const cort_value *b = nn_opt_input(ctx, bi);
    if (!b) return NULL;
    char buf[160];
    if (b->kind != CORT_VKIND_TENSOR || b->count != M || b->rank != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu 'B' has shape %s, expected [%zu]", bi,
                               nn_shape(b, buf, sizeof buf), M);
    return NULL;
}

static cort_status *conv_float_run(cort_kernel_ctx *ctx, int transpose) {
    nn_conv_shape cs;
    int64_t ydims[NN_MAX_SPATIAL + 2];
    CORT_TRY(conv_prepare(ctx, 0, 1, transpose, &cs, ydims));
    CORT_TRY(check_bias(ctx, 2, cs.M));
    const cort_value *x = ctx->inputs[0], *w = ctx->inputs[1], *b = nn_opt_input(ctx, 2);
    const nn_wino_weights *ww = transpose ? NULL : conv_wino_for(ctx->state, w);
    const conv_state *cst = ctx->state;
    const nn_gemm_packed *wt = !transpose && cst->wpack_t && conv_state_matches(cst, w) ? cst->wpack_t : NULL;
    const int wino = ww && nn_wino_geometry_ok(&cs) && ww->M == cs.M && ww->C == cs.C;
    const int small = !wino && wt && wt->rows == cs.M && nn_conv_small_prefers(&cs, wt->k);
    const nn_act act = nn_act_of(ctx->node);   /* activation fused by the optimizer, applied per tile/row */
    /* a residual read by nothing after this conv takes the output, written over it as it is read
     * (no cold output block, one stream fewer) where the path reads each residual element before
     * storing over it */
    cort_value *y = NULL;
#ifndef CORT_NN_REFERENCE_KERNELS
    if (ctx->node->sum_input && !transpose && !wino && x->type == CORT_TYPE_FLOAT &&
        ctx->inputs[ctx->node->sum_input] != x &&   /* not the conv's own input (read to the end) */
        (small ? nn_conv_small_sum_in_place(wt, &act) : nn_conv_sum_in_place(&cs, conv_packed_for(cst, w))) &&
        (y = cort_kernel_reusable_input(ctx, ctx->node->sum_input, x->type, ydims, x->rank)))
        cort_kernel_set_output(ctx, 0, cort_value_retain(y));
#endif
    if (!y) CORT_TRY(cort_kernel_output(ctx, 0, x->type, ydims, x->rank, &y));
    nn_fbuf fx = { 0 }, fw = { 0 }, fb = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_in(w, &fw);
    if (!st && b) st = nn_fbuf_in(b, &fb);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        /* a fused residual Add (same shape as Y) goes in before the activation */
        const cort_value *r = ctx->node->sum_input ? ctx->inputs[ctx->node->sum_input] : NULL;
        const float *sum = r ? (const float *)r->data : NULL;
        if (r) {
            char br[160], by[160];
            int same = r->kind == CORT_VKIND_TENSOR && r->type == CORT_TYPE_FLOAT && r->rank == y->rank;
            for (size_t d = 0; same && d < y->rank; d++) same = r->shape[d] == y->shape[d];
            if (!same)
                st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                     "input %zu (the fused Add's addend) has shape %s, expected the output's %s",
                                     ctx->node->sum_input, nn_shape(r, br, sizeof br), nn_shape(y, by, sizeof by));
        }
        const nn_act none = { CORT_ACT_NONE, 0.0f, 0.0f };
#ifdef CORT_NN_REFERENCE_KERNELS   /* debugging aid: naive double-accumulating kernels */
        (void)wino; (void)small; (void)none; (void)conv_packed_for;
        if (!st) {
            if (transpose) nn_convtranspose_f32_ref(&cs, fx.p, fw.p, b ? fb.p : NULL, fy.p);
            else nn_conv_f32_ref(&cs, fx.p, fw.p, b ? fb.p : NULL, fy.p);
            if (sum) nn_add_act(NULL, fy.p, sum, y->count, &act);
            else nn_act_apply(&act, fy.p, y->count);
        }
#else
        if (st) {
        } else if (wino) {
            st = nn_wino_conv(ctx->pool, &cs, fx.p, ww, b ? fb.p : NULL, sum ? &none : &act, fy.p, ctx);
            if (!st && sum) nn_add_act(ctx->pool, fy.p, sum, y->count, &act);
        } else if (small) {
            st = nn_conv_small_f32(ctx->pool, &cs, fx.p, fw.p, wt, b ? fb.p : NULL, sum, &act, fy.p, ctx);
        } else if (transpose) {
            st = nn_convtranspose_f32(ctx->pool, NULL, &cs, fx.p, fw.p, b ? fb.p : NULL, &act, fy.p, ctx);
        } else {
            st = nn_conv_f32_sum(ctx->pool, NULL, &cs, fx.p, fw.p, b ? fb.p : NULL, sum, &act, fy.p,
                                 conv_packed_for(ctx->state, w), ctx);
        }
#endif
        if (!st) nn_fbuf_commit(&fy, y);
    }
    nn_fbuf_free(&fx); nn_fbuf_free(&fw); nn_fbuf_free(&fb); nn_fbuf_free(&fy);
    return st;
}

static cort_status *conv_run(cort_kernel_ctx *ctx) { return conv_float_run(ctx, 0); }
static cort_status *convt_run(cort_kernel_ctx *ctx) { return conv_float_run(ctx, 1); }

/* ---- integer convolution: int32 accumulation of (x - x_zp) * (w - w_zp[m]) ---- */
typedef struct iconv_job {
    const nn_conv_shape *s;
    const int32_t *x, *w;   /* zero points already subtracted */
    int32_t *y;
} iconv_job;

static void iconv_run(void *arg, size_t begin, size_t end) {
    const iconv_job *j = arg;
    const nn_conv_shape *s = j->s;
    const nn_geom *g = &s->g;
    const size_t Cg = s->C / s->group, Mg = s->M / s->group;
    const int64_t in_size = nn_geom_in_size(g), ks = nn_geom_k_size(g), out_size = nn_geom_out_size(g);
    for (size_t t = begin; t < end; t++) {
        size_t n = t / s->M, m = t % s->M, gi = m / Mg;
        int32_t *y = j->y + (int64_t)t * out_size;
        for (int64_t od = 0; od < g->out[0]; od++)
            for (int64_t oh = 0; oh < g->out[1]; oh++)
                for (int64_t ow = 0; ow < g->out[2]; ow++) {
                    int32_t acc = 0;
                    for (size_t c = 0; c < Cg; c++) {
                        const int32_t *xc = j->x + (int64_t)(n * s->C + gi * Cg + c) * in_size;
                        const int32_t *wc = j->w + (int64_t)(m * Cg + c) * ks;
                        for (int64_t kd = 0; kd < g->k[0]; kd++) {
                            int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
                            if (id < 0 || id >= g->in[0]) continue;
                            for (int64_t kh = 0; kh < g->k[1]; kh++) {
                                int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
                                if (ih < 0 || ih >= g->in[1]) continue;
                                for (int64_t kw = 0; kw < g->k[2]; kw++) {
                                    int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
                                    if (iw < 0 || iw >= g->in[2]) continue;
                                    acc += xc[(id * g->in[1] + ih) * g->in[2] + iw] *
                                           wc[(kd * g->k[1] + kh) * g->k[2] + kw];
                                }
                            }
                        }
                    }
                    *y++ = acc;
                }
    }
}

/* Computes the int32 conv of inputs x (xi), w (wi) with zero points (indices, may be absent) into acc. */
static cort_status *int_conv(cort_kernel_ctx *ctx, size_t xi, size_t xzi, size_t wi, size_t wzi, nn_conv_shape *cs,
                             int64_t *ydims, int32_t **acc_out) {
    CORT_TRY(conv_prepare(ctx, xi, wi, 0, cs, ydims));
    const cort_value *x = ctx->inputs[xi], *w = ctx->inputs[wi];
    const cort_value *xz = nn_opt_input(ctx, xzi), *wz = nn_opt_input(ctx, wzi);
    if (!nn_q_is_8bit(x->type) || !nn_q_is_8bit(w->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'x'/'w' have types %s/%s, expected "
                               "int8 or uint8", cort_type_name(x->type), cort_type_name(w->type));
    char buf[160];
    if (xz && xz->count != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'x_zero_point' has shape %s, expected a scalar", xzi,
                               nn_shape(xz, buf, sizeof buf));
    if (wz && wz->count != 1 && wz->count != cs->M)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input %zu 'w_zero_point' has shape %s, expected a scalar or [%zu]", wzi,
                               nn_shape(wz, buf, sizeof buf), cs->M);
    int32_t *xb = cort_kernel_scratch(ctx, (x->count ? x->count : 1) * sizeof(int32_t));
    int32_t *wb = cort_kernel_scratch(ctx, (w->count ? w->count : 1) * sizeof(int32_t));
    int32_t *acc = cort_kernel_scratch(ctx, (cs->N * cs->M * (size_t)nn_geom_out_size(&cs->g) + 1) * sizeof(int32_t));
    if (!xb || !wb || !acc) {
        cort_kernel_scratch_free(ctx, xb); cort_kernel_scratch_free(ctx, wb); cort_kernel_scratch_free(ctx, acc);
        return cort_error_oom();
    }
    int32_t xzp = xz ? nn_q_load(xz, 0) : 0;
    for (size_t i = 0; i < x->count; i++) xb[i] = nn_q_load(x, i) - xzp;
    size_t per_m = cs->M ? w->count / cs->M : 0;
    for (size_t i = 0; i < w->count; i++) {
        int32_t zp = !wz ? 0 : wz->count == 1 ? nn_q_load(wz, 0) : nn_q_load(wz, i / per_m);
        wb[i] = nn_q_load(w, i) - zp;
    }
    iconv_job j = { cs, xb, wb, acc };
    cort_parallel_for(ctx->pool, cs->N * cs->M, 1, iconv_run, &j);
    cort_kernel_scratch_free(ctx, xb);
    cort_kernel_scratch_free(ctx, wb);
    *acc_out = acc;
    return NULL;
}

static cort_status *convint_run(cort_kernel_ctx *ctx) {
    nn_conv_shape cs;
    int64_t ydims[NN_MAX_SPATIAL + 2];
    int32_t *acc;
    CORT_TRY(int_conv(ctx, 0, 2, 1, 3, &cs, ydims, &acc));
    cort_value *y;
    cort_status *st = cort_kernel_output(ctx, 0, CORT_TYPE_INT32, ydims, ctx->inputs[0]->rank, &y);
    if (!st) memcpy(y->data, acc, y->count * sizeof(int32_t));
    cort_kernel_scratch_free(ctx, acc);
    return st;
}

/* QLinearConv inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B */
static cort_status *qlconv_run(cort_kernel_ctx *ctx) {
    nn_conv_shape cs;
    int64_t ydims[NN_MAX_SPATIAL + 2];
    for (size_t i = 0; i < 8; i++)
        if (i != 2 && i != 5 && i != 7 && !nn_opt_input(ctx, i))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is missing", i);
    const cort_value *xs = ctx->inputs[1], *ws = ctx->inputs[4], *ys = ctx->inputs[6];
    const cort_value *yz = nn_opt_input(ctx, 7), *b = nn_opt_input(ctx, 8);
    char buf[160];
    if (xs->count != 1 || ys->count != 1 || (yz && yz->count != 1))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "x_scale, y_scale and y_zero_point must be scalars (x_scale has shape %s)",
                               nn_shape(xs, buf, sizeof buf));
    int32_t *acc;
    CORT_TRY(int_conv(ctx, 0, 2, 3, 5, &cs, ydims, &acc));
    cort_status *st = NULL;
    if (ws->count != 1 && ws->count != cs.M) {
        st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                             "input 4 'w_scale' has shape %s, expected a scalar or [%zu]", nn_shape(ws, buf, sizeof buf),
                             cs.M);
        goto done;
    }
    if (b && (b->count != cs.M || b->type != CORT_TYPE_INT32)) {
        st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 8 'B' is %s%s, expected int32[%zu]",
                             cort_type_name(b->type), nn_shape(b, buf, sizeof buf), cs.M);
        goto done;
    }
    cort_type yt = yz ? yz->type : ctx->inputs[0]->type;
    cort_value *y;
    st = cort_kernel_output(ctx, 0, yt, ydims, ctx->inputs[0]->rank, &y);
    if (st) goto done;
    {
        float xsc = nn_q_scale(xs, 0), ysc = nn_q_scale(ys, 0);
        int32_t yzp = yz ? nn_q_load(yz, 0) : 0;
        size_t out_size = (size_t)nn_geom_out_size(&cs.g);
        for (size_t n = 0; n < cs.N; n++)
            for (size_t m = 0; m < cs.M; m++) {
                float mult = xsc * nn_q_scale(ws, ws->count == 1 ? 0 : m) / ysc;
                int32_t bias = b ? ((const int32_t *)b->data)[m] : 0;
                size_t base = (n * cs.M + m) * out_size;
                for (size_t q = 0; q < out_size; q++)
                    nn_q_store(y, base + q, nn_q_round((float)(acc[base + q] + bias) * mult) + yzp);
            }
    }
done:
    cort_kernel_scratch_free(ctx, acc);
    return st;
}

const cort_op_def nn_op_conv = {
    .name = "Conv", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0,
    .init = conv_init_packed, .free_state = conv_free, .infer = conv_infer, .run = conv_run,
    .flags = CORT_OP_FUSES_ACTIVATION | CORT_OP_FUSES_SILU | CORT_OP_FUSES_SUM | CORT_OP_OUTPUT_VIEW };
const cort_op_def nn_op_conv_transpose = {
    .name = "ConvTranspose", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .init = conv_init, .free_state = cort_free, .infer = convt_infer, .run = convt_run,
    .flags = CORT_OP_FUSES_ACTIVATION | CORT_OP_FUSES_SILU };
const cort_op_def nn_op_conv_integer = {
    .name = "ConvInteger", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .init = conv_init, .free_state = cort_free, .infer = convint_infer, .run = convint_run };
const cort_op_def nn_op_qlinear_conv = {
    .name = "QLinearConv", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX, .types = 0, .type_input = 0,
    .init = conv_init, .free_state = cort_free, .infer = qlconv_infer, .run = qlconv_run };
