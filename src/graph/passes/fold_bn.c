/* Conv / ConvTranspose followed by an inference BatchNormalization with constant parameters: the
 * normalization is folded into the convolution's weights and bias (new constants; the originals are
 * left to their other readers), so it costs nothing at run time and an activation after it can fuse
 * into the convolution's epilogue (an OCR detector's ConvTranspose + BN + Relu head).
 *   y = (conv(x, W) + B - mean) * s + beta,  s = scale / sqrt(var + epsilon)
 *     = conv(x, W * s) + (B - mean) * s + beta         (s per output channel)
 * Runs before kernels are built, so the convolution packs the folded weights once. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "passes.h"
#include "../../core/alloc.h"
#include "../../core/value.h"

/* A float constant of rank 1 and length c in slot s, or NULL. */
static const float *const_vec(const cort_graph *g, int32_t s, int64_t c) {
    const cort_value *v = s >= 0 ? g->consts[s] : NULL;
    if (!v || v->kind != CORT_VKIND_TENSOR || v->type != CORT_TYPE_FLOAT || v->rank != 1 || v->shape[0] != c)
        return NULL;
    return v->data;
}

/* Folds BatchNormalization node bn into its producer p when everything is constant. */
static cort_status *fold_one(cort_graph *g, cort_node *p, cort_node *bn) {
    const int transposed = !strcmp(p->op_type, "ConvTranspose");
    const cort_value *w = p->in_slot[1] >= 0 ? g->consts[p->in_slot[1]] : NULL;
    if (!w || w->kind != CORT_VKIND_TENSOR || w->type != CORT_TYPE_FLOAT || w->rank < 3 || !w->count) return NULL;
    const int64_t group = cort_attr_int(p, "group", 1);
    if (group < 1 || w->shape[0] % group) return NULL;
    const int64_t C = transposed ? w->shape[1] * group : w->shape[0];
    const float *b = NULL;
    if (p->n_inputs > 2 && p->in_slot[2] >= 0 && !(b = const_vec(g, p->in_slot[2], C))) return NULL;
    const float *scale = const_vec(g, bn->in_slot[1], C), *beta = const_vec(g, bn->in_slot[2], C);
    const float *mean = const_vec(g, bn->in_slot[3], C), *var = const_vec(g, bn->in_slot[4], C);
    if (!scale || !beta || !mean || !var) return NULL;
    const double eps = cort_attr_float(bn, "epsilon", 1e-5f);

    cort_value *w2 = NULL, *b2 = NULL;
    cort_status *st = cort_tensor_alloc_ex(CORT_TYPE_FLOAT, w->shape, w->rank, 1, &w2);
    if (!st) st = cort_tensor_alloc(CORT_TYPE_FLOAT, &C, 1, &b2);
    if (st) goto error;
    float *wd = w2->data, *bd = b2->data;
    /* W still in the model file (lazy, misaligned): brought into w2 and scaled there */
    if (w->lazy_src) memcpy(wd, w->lazy_src, w->bytes);
    const float *ws = w->lazy_src ? wd : w->data;
    /* per output channel factor, in double: one rounding of the product instead of two */
    const size_t inner = w->count / ((size_t)w->shape[0] * (size_t)w->shape[1]);
    for (size_t i = 0; i < (size_t)w->shape[0]; i++)
        for (size_t j = 0; j < (size_t)w->shape[1]; j++) {
            /* Conv W [M][C/g][k..]: channel i; ConvTranspose W [C][M/g][k..]: channel (group of i) * M/g + j */
            const size_t o = transposed ? i / ((size_t)w->shape[0] / (size_t)group) * (size_t)w->shape[1] + j : i;
            const double s = (double)scale[o] / sqrt((double)var[o] + eps);
            const size_t at = (i * (size_t)w->shape[1] + j) * inner;
            for (size_t q = 0; q < inner; q++) wd[at + q] = (float)((double)ws[at + q] * s);
        }
    for (int64_t o = 0; o < C; o++) {
        const double s = (double)scale[o] / sqrt((double)var[o] + eps);
        bd[o] = (float)(((b ? (double)b[o] : 0.0) - (double)mean[o]) * s + (double)beta[o]);
    }

    int32_t sw, sb;
    char name[512];
    snprintf(name, sizeof name, "%s/bn_folded_W", bn->name);
    if ((st = cort_graph_const_slot(g, name, w2, &sw))) goto error;
    w2 = NULL;
    snprintf(name, sizeof name, "%s/bn_folded_B", bn->name);
    if ((st = cort_graph_const_slot(g, name, b2, &sb))) goto error;
    b2 = NULL;
    const size_t n_in = p->n_inputs > 3 ? p->n_inputs : 3;
    int32_t *in = cort_arena_alloc(g->arena, (n_in + 1) * sizeof *in);
    if (!in) return cort_error_oom();
    for (size_t k = 0; k < n_in; k++) in[k] = k < p->n_inputs ? p->in_slot[k] : -1;
    in[1] = sw;
    in[2] = sb;
    p->in_slot = in;
    p->n_inputs = n_in;
    p->out_slot[0] = bn->out_slot[0];
    g->skip[bn->index] = 1;
    return NULL;
error:
    cort_value_release(w2);
    cort_value_release(b2);
    return st;
}

cort_status *cort_pass_fold_bn(cort_graph *g, cort_pass_index *x) {
    (void)x;
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *bn = &g->nodes[i];
        if (g->skip[i] || bn->domain[0] || strcmp(bn->op_type, "BatchNormalization") || bn->n_inputs != 5 ||
            bn->n_outputs < 1 || bn->out_slot[0] < 0 || bn->in_slot[0] < 0 || cort_attr_int(bn, "training_mode", 0))
            continue;
        int extra = 0;
        for (size_t k = 1; k < bn->n_outputs; k++) extra |= bn->out_slot[k] >= 0;
        if (extra) continue;
        const int32_t x = bn->in_slot[0];
        size_t first = 0;
        cort_node *p = NULL;
        for (size_t j = 0; j < i && !p; j++)
            if (!g->skip[j] && g->nodes[j].n_outputs >= 1 && g->nodes[j].out_slot[0] == x) p = &g->nodes[j];
        if (!p || p->domain[0] || (strcmp(p->op_type, "Conv") && strcmp(p->op_type, "ConvTranspose")) ||
            p->n_inputs < 2 || p->n_outputs != 1 || cort_graph_consumers(g, x, &first) != 1 ||
            cort_graph_is_output(g->ir, g->slot_names[x]))
            continue;
        CORT_TRY(fold_one(g, p, bn));
    }
    return NULL;
}
