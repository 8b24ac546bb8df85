#include <math.h>
#include <string.h>
#include "pattern.h"
#include "../provider.h"

/* An expanded tensor at least this big leaves the caches between the two convs (it is written to
 * memory and read back); smaller ones stay in L2 / L3 and gain nothing (measured: docs/performance.md). */
#define PWDW_MIN_BYTES ((size_t)6 << 20)
/* narrowest depthwise output row (half of it at stride 2) fused: NN_DW_CB_MAX_OW_CHEAP_ACT */
#define PWDW_MIN_OW 56

static int ints_all(const cort_node *n, const char *name, int64_t v) {
    const int64_t *p;
    size_t k = cort_attr_ints(n, name, &p);
    for (size_t i = 0; i < k; i++)
        if (p[i] != v) return 0;
    return 1;
}

/* A static-shape, float, 2-D Conv on a pattern provider (the CPU) with constant weights (and bias):
 * rank-4 X, W, Y known. */
static int conv_static(const cort_graph *g, const cort_node *n) {
    if (!n || strcmp(n->op_type, "Conv") || n->domain[0] || !n->provider ||
        !(n->provider->caps & CORT_PROVIDER_PATTERNS) || n->n_outputs != 1 || n->out_slot[0] < 0 || n->sum_input || n->has_out_view || n->n_inputs < 2 ||
        n->n_inputs > 3 || n->in_slot[0] < 0 || n->in_slot[1] < 0 || !g->consts[n->in_slot[1]] ||
        (n->n_inputs == 3 && n->in_slot[2] >= 0 && !g->consts[n->in_slot[2]]))
        return 0;
    const int32_t sl[3] = { n->in_slot[0], n->in_slot[1], n->out_slot[0] };
    for (int i = 0; i < 3; i++) {
        const cort_tinfo *t = &g->slot_info[sl[i]];
        if (t->kind != CORT_VKIND_TENSOR || t->elem != CORT_TYPE_FLOAT || t->rank != 4 || !cort_tinfo_shape_known(t))
            return 0;
    }
    return ints_all(n, "dilations", 1);
}

/* Conv 1x1 (X -> T, stride 1, no pads, one group) whose only reader is a depthwise Conv (T -> Y,
 * one output channel per channel, 3x3 at stride 1 or 2), T at least PWDW_MIN_BYTES ->
 * cort.PwDwConv(X, Wp, Bp, Wd, Bd) carrying both activations: T never exists (ops/fused/pwdw_conv.c). Runs
 * after the activation fusion (the convs carry theirs) and only without other providers. */
cort_status *cort_pass_fuse_pw_dw(cort_graph *g, cort_pass_index *x) {
    cort_status *st = pat_index_build(g, x);
    for (size_t i = 0; !st && i < g->n_nodes; i++) {
        cort_node *d = &g->nodes[i];
        if (g->skip[i] || !conv_static(g, d)) continue;
        const int32_t t = d->in_slot[0];
        if (x->producer[t] < 0 || x->uses[t] != 1) continue;
        cort_node *p = &g->nodes[x->producer[t]];
        if (!conv_static(g, p) || p->act == CORT_ACT_GELU) continue;
        const cort_tinfo *ti = &g->slot_info[t], *wp = &g->slot_info[p->in_slot[1]], *wd = &g->slot_info[d->in_slot[1]];
        const cort_tinfo *xi = &g->slot_info[p->in_slot[0]];
        const int64_t E = ti->dims[1];
        if (wp->dims[0] != E || wp->dims[2] != 1 || wp->dims[3] != 1 || cort_attr_int(p, "group", 1) != 1 ||
            !ints_all(p, "strides", 1) || !ints_all(p, "pads", 0) || ti->dims[2] != xi->dims[2] ||
            ti->dims[3] != xi->dims[3])
            continue;
        const char *ap = cort_attr_str(p, "auto_pad", "NOTSET");
        if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) continue;
        const int64_t *ks, *ss;
        const size_t nk = cort_attr_ints(d, "kernel_shape", &ks), ns = cort_attr_ints(d, "strides", &ss);
        const int64_t k = wd->dims[2], stride = ns == 2 ? ss[0] : 1;
        if (cort_attr_int(d, "group", 1) != E || wd->dims[0] != E || wd->dims[1] != 1 || wd->dims[3] != k ||
            k != 3 || (nk && (nk != 2 || ks[0] != k || ks[1] != k)) || (ns && (ns != 2 || ss[1] != ss[0])) ||
            (stride != 1 && stride != 2))
            continue;
        /* declared dims may be anything (a graph input's): the product saturates, -1 stays unknown */
        const int64_t px = cort_dim_mul(cort_dim_mul(cort_dim_mul(ti->dims[0], E), ti->dims[2]), ti->dims[3]);
        if (px >= 0 && (size_t)px < PWDW_MIN_BYTES / sizeof(float)) continue;
        /* where the depthwise conv alone runs the per-plane 3x3 kernel (wide rows, an activation it
         * applies on its registers): the fused op runs that kernel band by band. The others take the
         * channel-blocked kernel (5x5 too), which the fused op does not (fusing those was measured
         * slower: docs/performance.md) */
        const int64_t ow = g->slot_info[d->out_slot[0]].dims[3];
        if ((d->act && d->act != CORT_ACT_RELU && d->act != CORT_ACT_CLIP && d->act != CORT_ACT_LEAKY_RELU) ||
            ow < (stride == 1 ? PWDW_MIN_OW : PWDW_MIN_OW / 2))
            continue;
        /* the depthwise conv's attributes, then the expand conv's activation */
        const size_t na = d->ir->n_attrs;
        cort_attr_ir *at = cort_arena_alloc(g->arena, (na + 3) * sizeof *at);
        if (!at) { st = cort_error_oom(); break; }
        if (na) memcpy(at, d->ir->attrs, na * sizeof *at);
        at[na] = pat_attr_i("pw_activation", p->act);
        at[na + 1] = pat_attr_f("pw_alpha", p->act_alpha);
        at[na + 2] = pat_attr_f("pw_beta", p->act_beta);
        const int32_t in[5] = { p->in_slot[0], p->in_slot[1], p->n_inputs == 3 ? p->in_slot[2] : -1, d->in_slot[1],
                                d->n_inputs == 3 ? d->in_slot[2] : -1 };
        /* rewrite_as clears the node's activation: the depthwise conv's stays the fused op's */
        const int act = d->act;
        const float alpha = d->act_alpha, beta = d->act_beta;
        if ((st = pat_rewrite_as(g, d, "cort", "PwDwConv", 1, in, 5, at, na + 3, NULL))) break;
        d->act = act;
        d->act_alpha = alpha;
        d->act_beta = beta;
        pat_drop(g, p);
        if ((st = pat_index_build(g, x))) break;
    }
    return st;
}
