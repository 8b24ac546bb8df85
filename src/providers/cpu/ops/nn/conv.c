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
    nn_conv_attrs a;
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
    if (!s->shared) conv_packs_free_parts((size_t)s->a.group, s->wpack, s->wino, s->wpack_t);
    cort_free(s);
}

cort_status *nn_conv_attrs_parse(const cort_node *node, nn_conv_attrs *s) {
    memset(s, 0, sizeof *s);
    CORT_TRY(nn_window_parse(node, 0, &s->w));
    s->group = cort_attr_int(node, "group", 1);
    if (s->group < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'group' = %lld, expected >= 1",
                               (long long)s->group);
    const int64_t *v;
    size_t n = cort_attr_ints(node, "output_padding", &v);
    if (n > NN_MAX_SPATIAL)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'output_padding' has %zu values", n);
    for (size_t i = 0; i < n; i++) s->output_padding[i] = v[i];
    n = cort_attr_ints(node, "output_shape", &v);
    if (n > NN_MAX_SPATIAL + 2)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'output_shape' has %zu values", n);
    for (size_t i = 0; i < n; i++) s->output_shape[i] = v[i];
    s->n_output_shape = n;
    return NULL;
}

static cort_status *conv_init(const cort_node *node, void **state) {
    conv_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = nn_conv_attrs_parse(node, &s->a);
    if (st) {
        cort_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* Whether the input shape inferred at creation makes this a Winograd conv; if so makes s->wino
 * (left NULL on out-of-memory, which the caller reports). Unknown shapes keep the gemm path. */
/* The conv's shape as inferred at creation for a one-group 2-D conv (or 1-D, where with_1d), if
 * fully known. */
static int conv_static_shape(const cort_node *node, const conv_state *s, const cort_value *w, int with_1d,
                             nn_conv_shape *cs) {
    if ((w->rank != 4 && !(with_1d && w->rank == 3)) || s->a.group != 1 || !node->graph || node->n_inputs < 1 ||
        node->in_slot[0] < 0 || !node->graph->slot_info)
        return 0;
    const cort_tinfo *xi = &node->graph->slot_info[node->in_slot[0]];
    if (xi->kind != CORT_VKIND_TENSOR || (size_t)xi->rank != w->rank || xi->elem != CORT_TYPE_FLOAT) return 0;
    for (size_t i = 0; i < w->rank; i++)
        if (xi->dims[i] < 1) return 0;
    if (xi->dims[1] != w->shape[1]) return 0;
    nn_conv_shape z = { (size_t)xi->dims[0], (size_t)xi->dims[1], (size_t)w->shape[0], 1, { 0 } };
    *cs = z;
    cort_status *st = nn_window_geom(node, &s->a.w, (int)w->rank - 2, xi->dims + 2, w->shape + 2, 0, &cs->g);
    if (st) { cort_status_free(st); return 0; }
    return 1;
}

/* Whether the static shape makes this a small-plane (transposed) conv; if so packs s->wpack_t
 * (left NULL on out-of-memory, which the caller reports). */
static int conv_init_small(const cort_node *node, conv_state *s, const cort_value *w, const float *wd) {
    nn_conv_shape cs;
    if (!conv_static_shape(node, s, w, 0, &cs) || !nn_conv_small_prefers(&cs, nn_gemm_best_kernel())) return 0;
    s->wpack_t = cort_calloc(1, sizeof *s->wpack_t);
    if (s->wpack_t && nn_conv_small_pack_par(cort_node_init_pool(node), wd, cs.M, w->count / cs.M, s->wpack_t)) {
        cort_free(s->wpack_t);
        s->wpack_t = NULL;
    }
    return 1;
}

static int conv_init_winograd(const cort_node *node, conv_state *s, const cort_value *w, const float *wd) {
    nn_conv_shape cs;
    if (!conv_static_shape(node, s, w, 1, &cs)) return 0;   /* 1-D convs of 3 taps: F(4, 3) along W */
    const int tile = nn_wino_applies(&cs);
    if (!tile) return 0;
    s->wino = cort_malloc(sizeof *s->wino);
    if (s->wino && nn_wino_pack_par(cort_node_init_pool(node), wd, cs.M, cs.C, tile, nn_wino_axis(&cs), s->wino)) {   /* only on OOM */
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
    const int tile = conv_static_shape(node, s, w, 1, &cs) ? nn_wino_applies(&cs) : 0;
    const int small = !tile && conv_static_shape(node, s, w, 0, &cs) && nn_conv_small_prefers(&cs, k);
    key->params[0] = tile ? 1 : small ? 2 : 3;
    key->params[1] = (uint64_t)tile | (tile ? (uint64_t)nn_wino_axis(&cs) << 8 : 0);
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
    const size_t M = (size_t)w->shape[0], Kg = w->count / M, group = (size_t)s->a.group;
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
static cort_status *convt_geom(const cort_node *node, const nn_conv_attrs *s, int nd, const int64_t *in,
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
static cort_status *conv_infer_attrs(cort_infer_ctx *ctx, const nn_conv_attrs *s, size_t wi, int transpose,
                                     cort_type out_type) {
    nn_infer_type(ctx, 0, out_type);
    const cort_tinfo *x = &ctx->inputs[0], *wt = ctx->n_inputs > wi ? &ctx->inputs[wi] : NULL;
    if (x->rank < 3 || !wt) return NULL;
    int nd = x->rank - 2;
    if (nd > NN_MAX_SPATIAL) return NULL;
    int64_t k[NN_MAX_SPATIAL], dims[CORT_MAX_RANK];
    for (int i = 0; i < nd; i++)
        k[i] = s->w.has_kernel ? s->w.kernel[i] : (wt->rank == x->rank ? wt->dims[2 + i] : -1);
    nn_geom g;
    cort_status *st = transpose ? convt_geom(ctx->node, s, nd, x->dims + 2, k, &g)
                                     : nn_window_geom(ctx->node, &s->w, nd, x->dims + 2, k, 0, &g);
    if (st) { cort_status_free(st); return NULL; }   /* reported at run time with the real shapes */
    dims[0] = x->dims[0];
    dims[1] = -1;
    if (wt->rank == x->rank) {
        if (transpose) dims[1] = cort_dim_mul(wt->dims[1], s->group);
        else dims[1] = wt->dims[0];
    }
    nn_geom_out_dims(&g, dims + 2);
    cort_tinfo_tensor_shape(&ctx->outputs[0], out_type, dims, x->rank);
    return NULL;
}

cort_status *nn_conv_infer(cort_infer_ctx *ctx, const nn_conv_attrs *a, size_t wi, cort_type out_type) {
    return conv_infer_attrs(ctx, a, wi, 0, out_type);
}
static cort_status *conv_infer(cort_infer_ctx *ctx) {
    return conv_infer_attrs(ctx, &((const conv_state *)ctx->state)->a, 1, 0, ctx->inputs[0].elem);
}
static cort_status *convt_infer(cort_infer_ctx *ctx) {
    return conv_infer_attrs(ctx, &((const conv_state *)ctx->state)->a, 1, 1, ctx->inputs[0].elem);
}

/* ---- run-time validation shared by the float and integer convs ---- */
static cort_status *conv_prepare_attrs(cort_kernel_ctx *ctx, const nn_conv_attrs *s, size_t xi, size_t wi,
                                       int transpose, nn_conv_shape *cs, int64_t *ydims) {
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

cort_status *nn_conv_prepare(cort_kernel_ctx *ctx, const nn_conv_attrs *a, size_t xi, size_t wi, nn_conv_shape *cs,
                            int64_t *ydims) {
    return conv_prepare_attrs(ctx, a, xi, wi, 0, cs, ydims);
}
static cort_status *conv_prepare(cort_kernel_ctx *ctx, size_t xi, size_t wi, int transpose, nn_conv_shape *cs,
                                 int64_t *ydims) {
    return conv_prepare_attrs(ctx, &((const conv_state *)ctx->state)->a, xi, wi, transpose, cs, ydims);
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
    const int wino = ww && nn_wino_geometry_ok(&cs) && ww->axis == nn_wino_axis(&cs) && ww->M == cs.M && ww->C == cs.C;
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

const cort_op_def nn_op_conv = {
    .name = "Conv", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0,
    .init = conv_init_packed, .free_state = conv_free, .infer = conv_infer, .run = conv_run,
    .flags = CORT_OP_FUSES_ACTIVATION | CORT_OP_FUSES_SILU | CORT_OP_FUSES_SUM | CORT_OP_OUTPUT_VIEW };
const cort_op_def nn_op_conv_transpose = {
    .name = "ConvTranspose", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .init = conv_init, .free_state = cort_free, .infer = convt_infer, .run = convt_run,
    .flags = CORT_OP_FUSES_ACTIVATION | CORT_OP_FUSES_SILU };
