/* Writes the graph a session runs (after constant folding and the level-2 passes) as an ONNX model
 * (ONNX Runtime's optimized_model_filepath). What cort fused is written back in standard operators
 * so any ONNX runtime loads it, cort included (which fuses it again):
 *   node->act (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, SiLU, HardSwish, -> an activation node
 *             GELU of a MatMulIntegerToFloat)
 *   a residual summed in a conv's epilogue (sum_input)                       -> Add
 *   cort.FusedMatMul(A, B, bias?, residual?; alpha, activation)              -> MatMul, Mul, Add, Add, GELU
 *   cort.Gelu(X, bias?)                                                      -> Add, x * 0.5 * (1 + erf(x / sqrt 2))
 *   cort.LayerNorm(X, scale?, bias?, skip?, skip_bias?; epsilon)            -> Add, LayerNormalization
 *                                                                              (opset >= 17) or its decomposition
 *   cort.PwDwConv(X, Wp, Bp?, Wd, Bd?)                                       -> Conv, activation, Conv
 * Constants (initializers and folded values) become initializers; subgraphs are written from
 * their IR. The numbers written are the ones cort computes with (folded BatchNorm weights, etc.). */
#include "session.h"
#include "../onnx/onnx.h"
#include "../onnx/wire.h"
#include "../core/act.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef cort_pb_writer W;

typedef struct saver {
    const cort_graph *g;
    int64_t opset;            /* the model's default-domain opset */
    W nodes, inits;           /* GraphProto fields 1 and 5, accumulated */
    uint8_t *init_done;       /* per slot: initializer written */
    FILE *ext; const char *ext_name, *ext_path; size_t ext_min; uint64_t ext_off;   /* external initializers */
    size_t n_tmp;             /* generated names */
    char **names; size_t n_names, cap_names;   /* node names written (ONNX wants them unique) */
    const char **slot_name;   /* per slot: its value name in the file (passes may repeat a name) */
    char **own_names; size_t n_own;
    cort_status *st;
} saver;

static void w_str(W *w, uint32_t f, const char *s) { cort_pbw_len_field(w, f, s, strlen(s)); }
static void w_int(W *w, uint32_t f, int64_t v) { cort_pbw_tag(w, f, CORT_PB_VARINT); cort_pbw_varint(w, (uint64_t)v); }
static void w_sub(W *w, uint32_t f, W *sub) {
    if (sub->oom) w->oom = 1;
    cort_pbw_len_field(w, f, sub->buf, sub->len);
    cort_free(sub->buf);
    memset(sub, 0, sizeof *sub);
}
static void w_float(W *w, uint32_t f, float v) { cort_pbw_tag(w, f, CORT_PB_I32); cort_pbw_bytes(w, &v, 4); }

/* ---- from the IR (attributes, types, subgraphs) ---- */
static cort_status *w_graph_ir(W *w, const cort_graph_ir *gi);

static cort_status *w_tensor(W *w, uint32_t f, const cort_value *v, const char *name) {
    cort_value *view = NULL;
    if (v->kind == CORT_VKIND_TENSOR && !v->data && v->lazy_src && v->bytes)   /* still in the mapped file */
        CORT_TRY(cort_tensor_view(v->type, v->shape, v->rank, (void *)v->lazy_src, NULL, &view));
    void *buf = NULL;
    size_t len = 0;
    cort_status *st = cort_value_serialize(view ? view : v, name, &buf, &len);
    cort_value_release(view);
    if (st) return st;
    cort_pbw_len_field(w, f, buf, len);
    cort_free(buf);
    return NULL;
}

static cort_status *w_attr(W *w, const cort_attr_ir *a) {
    W s = { 0 };
    w_str(&s, 1, a->name);
    switch (a->type) {
    case CORT_ATTR_FLOAT: w_float(&s, 2, a->f); break;
    case CORT_ATTR_INT: w_int(&s, 3, a->i); break;
    case CORT_ATTR_STRING: cort_pbw_len_field(&s, 4, a->s, a->s_len); break;
    case CORT_ATTR_TENSOR: if (a->t) CORT_TRY(w_tensor(&s, 5, a->t, NULL)); break;
    case CORT_ATTR_GRAPH: {
        W g = { 0 };
        cort_status *st = w_graph_ir(&g, a->g);
        if (st) { cort_free(g.buf); cort_free(s.buf); return st; }
        w_sub(&s, 6, &g);
        break;
    }
    case CORT_ATTR_FLOATS: cort_pbw_len_field(&s, 7, a->floats, a->n * sizeof(float)); break;
    case CORT_ATTR_INTS: {
        size_t bytes = 0;
        for (size_t i = 0; i < a->n; i++) bytes += cort_pb_varint_size((uint64_t)a->ints[i]);
        cort_pbw_tag(&s, 8, CORT_PB_LEN);
        cort_pbw_varint(&s, bytes);
        for (size_t i = 0; i < a->n; i++) cort_pbw_varint(&s, (uint64_t)a->ints[i]);
        break;
    }
    case CORT_ATTR_STRINGS:
        for (size_t i = 0; i < a->n; i++) cort_pbw_len_field(&s, 9, a->strings[i], a->string_lens ? a->string_lens[i] : strlen(a->strings[i]));
        break;
    case CORT_ATTR_TENSORS:
        for (size_t i = 0; i < a->n; i++) CORT_TRY(w_tensor(&s, 10, a->tensors[i], NULL));
        break;
    case CORT_ATTR_GRAPHS:
        for (size_t i = 0; i < a->n; i++) {
            W g = { 0 };
            cort_status *st = w_graph_ir(&g, a->graphs[i]);
            if (st) { cort_free(g.buf); cort_free(s.buf); return st; }
            w_sub(&s, 11, &g);
        }
        break;
    default:
        cort_free(s.buf);
        return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "saving the optimized model: attribute '%s' of type %d cannot be written",
                          a->name, a->type);
    }
    w_int(&s, 20, a->type);
    w_sub(w, 5, &s);
    return NULL;
}

static void w_type(W *w, uint32_t f, const cort_type_ir *t) {
    W s = { 0 };
    if (t->kind == CORT_VKIND_TENSOR) {
        W tt = { 0 };
        if (t->elem_type) w_int(&tt, 1, t->elem_type);
        if (t->rank >= 0) {
            W sh = { 0 };
            for (int i = 0; i < t->rank; i++) {
                W dm = { 0 };
                if (t->dim_params && t->dim_params[i]) w_str(&dm, 2, t->dim_params[i]);
                else if (t->dims[i] >= 0) w_int(&dm, 1, t->dims[i]);
                w_sub(&sh, 1, &dm);
            }
            w_sub(&tt, 2, &sh);
        }
        w_sub(&s, 1, &tt);
    } else if (t->kind == CORT_VKIND_SEQUENCE || t->kind == CORT_VKIND_OPTIONAL) {
        W inner = { 0 };
        if (t->inner) w_type(&inner, 1, t->inner);
        w_sub(&s, t->kind == CORT_VKIND_SEQUENCE ? 4 : 9, &inner);
    } else if (t->kind == CORT_VKIND_MAP) {
        W m = { 0 };
        w_int(&m, 1, t->key_type);
        if (t->inner) w_type(&m, 2, t->inner);
        w_sub(&s, 5, &m);
    }
    w_sub(w, f, &s);
}

static void w_value_info(W *w, uint32_t f, const cort_value_info_ir *vi) {
    W s = { 0 };
    w_str(&s, 1, vi->name);
    if (vi->type.kind != CORT_VKIND_UNKNOWN) w_type(&s, 2, &vi->type);
    w_sub(w, f, &s);
}

static cort_status *w_node_ir(W *w, const cort_node_ir *nd) {
    W s = { 0 };
    for (size_t i = 0; i < nd->n_inputs; i++) w_str(&s, 1, nd->inputs[i]);
    for (size_t i = 0; i < nd->n_outputs; i++) w_str(&s, 2, nd->outputs[i]);
    if (nd->name && *nd->name) w_str(&s, 3, nd->name);
    w_str(&s, 4, nd->op_type);
    for (size_t i = 0; i < nd->n_attrs; i++) {
        cort_status *st = w_attr(&s, &nd->attrs[i]);
        if (st) { cort_free(s.buf); return st; }
    }
    if (nd->domain && *nd->domain) w_str(&s, 7, nd->domain);
    w_sub(w, 1, &s);
    return NULL;
}

static cort_status *w_graph_ir(W *w, const cort_graph_ir *gi) {
    for (size_t i = 0; i < gi->n_nodes; i++) CORT_TRY(w_node_ir(w, &gi->nodes[i]));
    w_str(w, 2, gi->name ? gi->name : "subgraph");
    for (size_t i = 0; i < gi->n_initializers; i++) CORT_TRY(w_tensor(w, 5, gi->initializers[i].value, gi->initializers[i].name));
    for (size_t i = 0; i < gi->n_inputs; i++) w_value_info(w, 11, &gi->inputs[i]);
    for (size_t i = 0; i < gi->n_outputs; i++) w_value_info(w, 12, &gi->outputs[i]);
    return NULL;
}

/* ---- the compiled top-level graph ---- */

/* A new value name derived from base. Returned in a static-size buffer the caller owns. */
static void tmp_name(saver *sv, const char *base, const char *what, char *out, size_t cap) {
    snprintf(out, cap, "%s_cort_%s_%zu", base, what, sv->n_tmp++);
}

/* name, or name_cort_N when a node of that name was written already; the result lives in sv. */
static const char *unique_name(saver *sv, const char *name) {
    char buf[512];
    const char *want = name;
    for (int tries = 0;; tries++) {
        size_t i = 0;
        while (i < sv->n_names && strcmp(sv->names[i], want)) i++;
        if (i == sv->n_names) break;
        snprintf(buf, sizeof buf, "%s_cort_%zu", name, sv->n_tmp++);
        want = buf;
    }
    if (sv->n_names == sv->cap_names) {
        size_t nc = sv->cap_names ? 2 * sv->cap_names : 64;
        char **nn = cort_realloc(sv->names, nc * sizeof *nn);
        if (!nn) return NULL;
        sv->names = nn;
        sv->cap_names = nc;
    }
    char *copy = cort_strdup(want);
    if (!copy) return NULL;
    sv->names[sv->n_names++] = copy;
    return copy;
}

/* A node op_type(inputs) -> outputs with attributes given as prepared AttributeProto bytes. */
static void emit(saver *sv, const char *name, const char *op_type, const char *domain, const char *const *in, size_t n_in,
                 const char *const *out, size_t n_out, W *attrs) {
    W s = { 0 };
    if (name && *name && !(name = unique_name(sv, name))) {
        if (!sv->st) sv->st = cort_error_oom();
        cort_free(attrs ? attrs->buf : NULL);
        if (attrs) memset(attrs, 0, sizeof *attrs);
        return;
    }
    for (size_t i = 0; i < n_in; i++) w_str(&s, 1, in[i] ? in[i] : "");
    for (size_t i = 0; i < n_out; i++) w_str(&s, 2, out[i]);
    if (name && *name) w_str(&s, 3, name);
    w_str(&s, 4, op_type);
    if (attrs) {
        if (attrs->oom) s.oom = 1;
        cort_pbw_bytes(&s, attrs->buf, attrs->len);
        cort_free(attrs->buf);
        memset(attrs, 0, sizeof *attrs);
    }
    if (domain && *domain) w_str(&s, 7, domain);
    w_sub(&sv->nodes, 1, &s);
}

static void attr_f(W *w, const char *name, float v) {
    W s = { 0 };
    w_str(&s, 1, name);
    w_float(&s, 2, v);
    w_int(&s, 20, CORT_ATTR_FLOAT);
    w_sub(w, 5, &s);
}
static void attr_ints(W *w, const char *name, const int64_t *v, size_t n) {
    cort_attr_ir a = { 0 };
    a.name = name;
    a.type = CORT_ATTR_INTS;
    a.ints = (int64_t *)v;
    a.n = n;
    w_attr(w, &a);
}

/* A scalar float initializer (for the constants of a decomposition). */
static void const_scalar(saver *sv, const char *base, float v, char *name, size_t cap) {
    tmp_name(sv, base, "c", name, cap);
    cort_value *t = NULL;
    if ((sv->st = cort_tensor_alloc(CORT_TYPE_FLOAT, NULL, 0, &t))) return;
    *(float *)t->data = v;
    sv->st = w_tensor(&sv->inits, 5, t, name);
    cort_value_release(t);
}

/* x * 0.5 * (1 + erf(x / sqrt 2)) from x into y */
static void emit_gelu(saver *sv, const char *base, const char *x, const char *y) {
    char c_sqrt2[256], c_one[256], c_half[256], t1[256], t2[256], t3[256], t4[256];
    const_scalar(sv, base, 1.41421356237309504880f, c_sqrt2, sizeof c_sqrt2);
    const_scalar(sv, base, 1.0f, c_one, sizeof c_one);
    const_scalar(sv, base, 0.5f, c_half, sizeof c_half);
    tmp_name(sv, base, "gelu", t1, sizeof t1);
    tmp_name(sv, base, "gelu", t2, sizeof t2);
    tmp_name(sv, base, "gelu", t3, sizeof t3);
    tmp_name(sv, base, "gelu", t4, sizeof t4);
    const char *a[2];
    a[0] = x; a[1] = c_sqrt2; { const char *o = t1; emit(sv, t1, "Div", "", a, 2, &o, 1, NULL); }
    a[0] = t1; { const char *o = t2; emit(sv, t2, "Erf", "", a, 1, &o, 1, NULL); }
    a[0] = t2; a[1] = c_one; { const char *o = t3; emit(sv, t3, "Add", "", a, 2, &o, 1, NULL); }
    a[0] = x; a[1] = t3; { const char *o = t4; emit(sv, t4, "Mul", "", a, 2, &o, 1, NULL); }
    a[0] = t4; a[1] = c_half; emit(sv, y, "Mul", "", a, 2, &y, 1, NULL);
}

/* act(x) -> y in standard operators */
static void emit_act(saver *sv, const char *base, int act, float alpha, float beta, const char *x, const char *y) {
    const char *a[3] = { x, NULL, NULL };
    W at = { 0 };
    switch (act) {
    case CORT_ACT_RELU: emit(sv, y, "Relu", "", a, 1, &y, 1, NULL); break;
    case CORT_ACT_CLIP: {
        char lo[256], hi[256];
        const_scalar(sv, base, alpha, lo, sizeof lo);
        const_scalar(sv, base, beta, hi, sizeof hi);
        a[1] = lo;
        a[2] = hi;
        emit(sv, y, "Clip", "", a, 3, &y, 1, NULL);
        break;
    }
    case CORT_ACT_LEAKY_RELU: attr_f(&at, "alpha", alpha); emit(sv, y, "LeakyRelu", "", a, 1, &y, 1, &at); break;
    case CORT_ACT_SIGMOID: emit(sv, y, "Sigmoid", "", a, 1, &y, 1, NULL); break;
    case CORT_ACT_HARD_SIGMOID:
        attr_f(&at, "alpha", alpha);
        attr_f(&at, "beta", beta);
        emit(sv, y, "HardSigmoid", "", a, 1, &y, 1, &at);
        break;
    case CORT_ACT_SILU:
    case CORT_ACT_HARD_SWISH: {
        char t[256];
        tmp_name(sv, base, "gate", t, sizeof t);
        const char *o = t;
        if (act == CORT_ACT_SILU) emit(sv, t, "Sigmoid", "", a, 1, &o, 1, NULL);
        else {
            attr_f(&at, "alpha", 1.0f / 6.0f);
            attr_f(&at, "beta", 0.5f);
            emit(sv, t, "HardSigmoid", "", a, 1, &o, 1, &at);
        }
        a[1] = t;
        emit(sv, y, "Mul", "", a, 2, &y, 1, NULL);
        break;
    }
    case CORT_ACT_GELU: emit_gelu(sv, base, x, y); break;
    default: sv->st = cort_error(CORT_ERROR_NOT_IMPLEMENTED, "saving the optimized model: activation %d", act);
    }
}

static const cort_attr_ir *find_attr(const cort_node *n, const char *name) {
    for (size_t i = 0; i < n->ir->n_attrs; i++)
        if (!strcmp(n->ir->attrs[i].name, name)) return &n->ir->attrs[i];
    return NULL;
}

static const char *in_name(const saver *sv, const cort_node *n, size_t k) {
    return k < n->n_inputs && n->in_slot[k] >= 0 ? sv->slot_name[n->in_slot[k]] : NULL;
}

/* Writes node n; its (single fused) output goes through the activation / residual it carries. */
static void save_node(saver *sv, const cort_node *n) {
    const char *out0 = n->n_outputs && n->out_slot[0] >= 0 ? sv->slot_name[n->out_slot[0]] : "";
    const char *base = *n->name ? n->name : out0;
    char pre[256], pre2[256];
    /* the value before the node's own epilogue (residual, activation) */
    const char *core_out = out0;
    int post = n->act || n->sum_input;
    if (post) { tmp_name(sv, out0, "pre", pre, sizeof pre); core_out = pre; }
    const char *ins[8] = { 0 };
    W at = { 0 };
    if (!strcmp(n->domain, "cort") && !strcmp(n->op_type, "FusedMatMul")) {
        const cort_attr_ir *alpha = find_attr(n, "alpha"), *act = find_attr(n, "activation");
        const char *cur = NULL;
        char t[4][256];
        ins[0] = in_name(sv, n, 0); ins[1] = in_name(sv, n, 1);
        tmp_name(sv, out0, "mm", t[0], sizeof t[0]);
        cur = t[0];
        emit(sv, base, "MatMul", "", ins, 2, &cur, 1, NULL);
        if (alpha && alpha->f != 1.0f) {
            char c[256];
            const_scalar(sv, base, alpha->f, c, sizeof c);
            tmp_name(sv, out0, "scaled", t[1], sizeof t[1]);
            ins[0] = cur; ins[1] = c;
            const char *o = t[1];
            emit(sv, t[1], "Mul", "", ins, 2, &o, 1, NULL);
            cur = t[1];
        }
        for (size_t k = 2; k < 4 && k < n->n_inputs; k++) {
            if (!in_name(sv, n, k)) continue;
            tmp_name(sv, out0, k == 2 ? "bias" : "res", t[k], sizeof t[k]);
            ins[0] = cur; ins[1] = in_name(sv, n, k);
            const char *o = t[k];
            emit(sv, t[k], "Add", "", ins, 2, &o, 1, NULL);
            cur = t[k];
        }
        if (act && act->i == 1) emit_gelu(sv, base, cur, core_out);
        else { ins[0] = cur; emit(sv, core_out, "Identity", "", ins, 1, &core_out, 1, NULL); }
    } else if (!strcmp(n->domain, "cort") && !strcmp(n->op_type, "Gelu")) {
        const char *x = in_name(sv, n, 0);
        char t[256];
        if (in_name(sv, n, 1)) {
            tmp_name(sv, out0, "bias", t, sizeof t);
            ins[0] = x; ins[1] = in_name(sv, n, 1);
            const char *o = t;
            emit(sv, t, "Add", "", ins, 2, &o, 1, NULL);
            x = t;
        }
        emit_gelu(sv, base, x, core_out);
    } else if (!strcmp(n->domain, "cort") && !strcmp(n->op_type, "LayerNorm")) {
        const cort_attr_ir *eps_a = find_attr(n, "epsilon");
        float eps = eps_a ? eps_a->f : 1e-5f;
        const char *x = in_name(sv, n, 0);
        char t[2][256];
        for (size_t k = 3; k < 5 && k < n->n_inputs; k++) {
            if (!in_name(sv, n, k)) continue;
            tmp_name(sv, out0, "skip", t[k - 3], sizeof t[k - 3]);
            ins[0] = x; ins[1] = in_name(sv, n, k);
            const char *o = t[k - 3];
            emit(sv, t[k - 3], "Add", "", ins, 2, &o, 1, NULL);
            x = t[k - 3];
        }
        const char *scale = in_name(sv, n, 1), *bias = in_name(sv, n, 2);
        if (sv->opset >= 17 && scale) {
            ins[0] = x; ins[1] = scale; ins[2] = bias;
            attr_f(&at, "epsilon", eps);
            {
                cort_attr_ir a = { 0 };
                a.name = "axis"; a.type = CORT_ATTR_INT; a.i = -1;
                w_attr(&at, &a);
            }
            emit(sv, base, "LayerNormalization", "", ins, bias ? 3 : 2, &core_out, 1, &at);
        } else {
            /* mean, centred, variance, + eps, sqrt, divide, scale, shift (ReduceMean keeps axes as an
             * attribute up to opset 17; a model of opset 18+ with no scale takes this path too) */
            char m[256], c[256], sq[256], v[256], ve[256], sd[256], nrm[256], sc[256], ce[256];
            const int64_t axes[1] = { -1 };
            tmp_name(sv, out0, "mean", m, sizeof m);
            tmp_name(sv, out0, "centred", c, sizeof c);
            tmp_name(sv, out0, "sq", sq, sizeof sq);
            tmp_name(sv, out0, "var", v, sizeof v);
            tmp_name(sv, out0, "vareps", ve, sizeof ve);
            tmp_name(sv, out0, "std", sd, sizeof sd);
            tmp_name(sv, out0, "norm", nrm, sizeof nrm);
            tmp_name(sv, out0, "scaled", sc, sizeof sc);
            const_scalar(sv, base, eps, ce, sizeof ce);
            const char *o;
            int attr_axes = sv->opset < 18;
            char axes_name[256] = "";
            if (!attr_axes) {
                tmp_name(sv, out0, "axes", axes_name, sizeof axes_name);
                cort_value *av = NULL;
                int64_t one = 1;
                if ((sv->st = cort_tensor_alloc(CORT_TYPE_INT64, &one, 1, &av))) return;
                *(int64_t *)av->data = -1;
                sv->st = w_tensor(&sv->inits, 5, av, axes_name);
                cort_value_release(av);
            }
            ins[0] = x; ins[1] = axes_name; o = m;
            if (attr_axes) attr_ints(&at, "axes", axes, 1);
            emit(sv, m, "ReduceMean", "", ins, attr_axes ? 1 : 2, &o, 1, &at);
            ins[0] = x; ins[1] = m; o = c; emit(sv, c, "Sub", "", ins, 2, &o, 1, NULL);
            ins[0] = c; ins[1] = c; o = sq; emit(sv, sq, "Mul", "", ins, 2, &o, 1, NULL);
            ins[0] = sq; ins[1] = axes_name; o = v;
            if (attr_axes) attr_ints(&at, "axes", axes, 1);
            emit(sv, v, "ReduceMean", "", ins, attr_axes ? 1 : 2, &o, 1, &at);
            ins[0] = v; ins[1] = ce; o = ve; emit(sv, ve, "Add", "", ins, 2, &o, 1, NULL);
            ins[0] = ve; o = sd; emit(sv, sd, "Sqrt", "", ins, 1, &o, 1, NULL);
            const char *last = nrm;
            ins[0] = c; ins[1] = sd; o = nrm; emit(sv, nrm, "Div", "", ins, 2, &o, 1, NULL);
            if (scale) { ins[0] = last; ins[1] = scale; o = sc; emit(sv, sc, "Mul", "", ins, 2, &o, 1, NULL); last = sc; }
            if (bias) { ins[0] = last; ins[1] = bias; emit(sv, base, "Add", "", ins, 2, &core_out, 1, NULL); }
            else { ins[0] = last; emit(sv, base, "Identity", "", ins, 1, &core_out, 1, NULL); }
        }
    } else if (!strcmp(n->domain, "cort") && !strcmp(n->op_type, "PwDwConv")) {
        char e[256], ea[256];
        tmp_name(sv, out0, "expand", e, sizeof e);
        const cort_attr_ir *pa = find_attr(n, "pw_activation"), *pal = find_attr(n, "pw_alpha"), *pbe = find_attr(n, "pw_beta");
        ins[0] = in_name(sv, n, 0); ins[1] = in_name(sv, n, 1); ins[2] = in_name(sv, n, 2);
        const char *o = e;
        emit(sv, e, "Conv", "", ins, ins[2] ? 3 : 2, &o, 1, NULL);
        const char *expanded = e;
        if (pa && pa->i) {
            tmp_name(sv, out0, "expand_act", ea, sizeof ea);
            emit_act(sv, base, (int)pa->i, pal ? pal->f : 0, pbe ? pbe->f : 0, e, ea);
            expanded = ea;
        }
        for (size_t i = 0; i < n->ir->n_attrs && !sv->st; i++)
            if (strncmp(n->ir->attrs[i].name, "pw_", 3)) sv->st = w_attr(&at, &n->ir->attrs[i]);
        ins[0] = expanded; ins[1] = in_name(sv, n, 3); ins[2] = in_name(sv, n, 4);
        emit(sv, base, "Conv", "", ins, ins[2] ? 3 : 2, &core_out, 1, &at);
    } else if (!strcmp(n->domain, "cort")) {
        sv->st = cort_error(CORT_ERROR_NOT_IMPLEMENTED, "saving the optimized model: node '%s' (cort.%s) has no ONNX form",
                            n->name, n->op_type);
        return;
    } else if (!*n->domain && !strcmp(n->op_type, "HardSwish") && sv->opset < 14) {
        emit_act(sv, base, CORT_ACT_HARD_SWISH, 0, 0, in_name(sv, n, 0), core_out);
    } else {
        /* a standard node as the model wrote it; a fused residual is not one of its inputs */
        size_t n_in = n->sum_input ? n->sum_input : n->n_inputs;
        const char **outs = cort_calloc(n->ir->n_outputs + 1, sizeof *outs);
        if (!outs) { sv->st = cort_error_oom(); return; }
        for (size_t k = 0; k < n->ir->n_outputs; k++)
            outs[k] = k < n->n_outputs && n->out_slot[k] >= 0 ? sv->slot_name[n->out_slot[k]] : "";
        if (n->ir->n_outputs) outs[0] = core_out;
        for (size_t i = 0; i < n->ir->n_attrs && !sv->st; i++) sv->st = w_attr(&at, &n->ir->attrs[i]);
        /* names of inputs as the executor sees them (passes may have rewired slots) */
        const char **in = cort_calloc(n_in + 1, sizeof *in);
        if (!in) { cort_free(outs); sv->st = cort_error_oom(); return; }
        for (size_t k = 0; k < n_in; k++) in[k] = in_name(sv, n, k) ? in_name(sv, n, k) : "";
        emit(sv, n->name, n->op_type, n->domain, in, n_in, outs, n->ir->n_outputs, &at);
        cort_free(in);
        cort_free(outs);
    }
    if (sv->st || !post) return;
    const char *cur = core_out;
    if (n->sum_input) {
        const char *o = out0;
        if (n->act) { tmp_name(sv, out0, "sum", pre2, sizeof pre2); o = pre2; }
        ins[0] = cur; ins[1] = in_name(sv, n, n->sum_input);
        emit(sv, o, "Add", "", ins, 2, &o, 1, NULL);
        cur = o;
    }
    if (n->act) emit_act(sv, base, n->act, n->act_alpha, n->act_beta, cur, out0);
}

/* An initializer whose bytes go to the external file: TensorProto dims, data_type, name,
 * external_data (location, offset, length), data_location = EXTERNAL. */
static cort_status *w_external(saver *sv, const cort_value *v, const char *name) {
    const void *data = v->data ? v->data : v->lazy_src;
    if (fwrite(data, 1, v->bytes, sv->ext) != v->bytes)
        return cort_error(CORT_ERROR_IO, "optimized model: writing external data '%s' failed", sv->ext_path);
    W t = { 0 };
    for (size_t i = 0; i < v->rank; i++) w_int(&t, 1, v->shape[i]);
    w_int(&t, 2, v->type);
    w_str(&t, 8, name);
    char num[32];
    const char *keys[3] = { "location", "offset", "length" };
    for (int k = 0; k < 3; k++) {
        W e = { 0 };
        w_str(&e, 1, keys[k]);
        if (k == 0) w_str(&e, 2, sv->ext_name);
        else {
            snprintf(num, sizeof num, "%llu", (unsigned long long)(k == 1 ? sv->ext_off : v->bytes));
            w_str(&e, 2, num);
        }
        w_sub(&t, 13, &e);
    }
    w_int(&t, 14, 1);
    w_sub(&sv->inits, 5, &t);
    /* the next tensor starts 64-byte aligned, so a loader may use the bytes in place */
    sv->ext_off += v->bytes;
    static const uint8_t zeros[64];
    size_t pad = (size_t)((64 - sv->ext_off % 64) % 64);
    if (pad && fwrite(zeros, 1, pad, sv->ext) != pad)
        return cort_error(CORT_ERROR_IO, "optimized model: writing external data '%s' failed", sv->ext_path);
    sv->ext_off += pad;
    return NULL;
}

/* Constant slot s as an initializer (once). */
static void save_const(saver *sv, int32_t s) {
    if (s < 0 || !sv->g->consts[s] || sv->init_done[s] || sv->st) return;
    sv->init_done[s] = 1;
    const cort_value *v = sv->g->consts[s];
    if (sv->ext && v->kind == CORT_VKIND_TENSOR && v->type != CORT_TYPE_STRING && v->bytes &&
        v->bytes >= sv->ext_min && (v->data || v->lazy_src))
        sv->st = w_external(sv, v, sv->slot_name[s]);
    else
        sv->st = w_tensor(&sv->inits, 5, v, sv->slot_name[s]);
}

cort_status *cort_session_save_optimized(const cort_session *session, const char *path, const char *ext_file,
                                         size_t ext_min) {
    const cort_graph *g = session->graph;
    const cort_model_ir *m = session->model;
    saver sv = { 0 };
    sv.g = g;
    char *ext_path = NULL;
    if (ext_file) {
        /* next to the model: its folder + the file name */
        const char *slash = strrchr(path, '/');
        size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, n = dlen + strlen(ext_file) + 1;
        if (!(ext_path = cort_malloc(n))) return cort_error_oom();
        memcpy(ext_path, path, dlen);
        strcpy(ext_path + dlen, ext_file);
        if (!(sv.ext = fopen(ext_path, "wb"))) {
            cort_status *st = cort_error(CORT_ERROR_IO, "optimized model: cannot create external data file '%s'", ext_path);
            cort_free(ext_path);
            return st;
        }
        sv.ext_name = ext_file;
        sv.ext_path = ext_path;
        sv.ext_min = ext_min;
    }
    sv.opset = 1;
    for (size_t i = 0; i < m->n_opsets; i++)
        if (!m->opsets[i].domain || !*m->opsets[i].domain) sv.opset = m->opsets[i].version;
    /* value names, unique: a slot whose name an earlier slot has (folded weights the passes made
     * under one name) gets NAME_cort_N */
    cort_namemap used = { 0 };
    sv.slot_name = cort_calloc(g->n_slots + 1, sizeof *sv.slot_name);
    sv.own_names = cort_calloc(g->n_slots + 1, sizeof *sv.own_names);
    cort_status *nst = sv.slot_name && sv.own_names ? NULL : cort_error_oom();
    for (size_t i = 0; i < g->n_slots && !nst; i++) {
        const char *nm = g->slot_names[i] ? g->slot_names[i] : "";
        if (*nm && cort_namemap_get(&used, nm) >= 0) {
            char buf[512];
            do snprintf(buf, sizeof buf, "%s_cort_%zu", nm, sv.n_tmp++);
            while (cort_namemap_get(&used, buf) >= 0);
            if (!(sv.own_names[sv.n_own] = cort_strdup(buf))) { nst = cort_error_oom(); break; }
            nm = sv.own_names[sv.n_own++];
        }
        sv.slot_name[i] = nm;
        if (*nm) nst = cort_namemap_put(&used, nm, (int32_t)i);
    }
    cort_namemap_free(&used);
    if (nst || !(sv.init_done = cort_calloc(g->n_slots + 1, 1))) {
        for (size_t i = 0; i < sv.n_own; i++) cort_free(sv.own_names[i]);
        cort_free(sv.own_names);
        cort_free((void *)sv.slot_name);
        if (sv.ext) fclose(sv.ext);
        cort_free(ext_path);
        return nst ? nst : cort_error_oom();
    }
    for (size_t i = 0; i < g->n_nodes && !sv.st; i++) {
        if (g->skip[i]) continue;
        const cort_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++) save_const(&sv, n->in_slot[k]);
        for (size_t k = 0; k < n->n_implicit; k++) save_const(&sv, n->implicit_slot[k]);
        if (!sv.st) save_node(&sv, n);
    }
    for (size_t i = 0; i < g->n_outputs; i++) save_const(&sv, g->output_slots[i]);
    W graph = { 0 }, model = { 0 };
    cort_status *st = sv.st;
    if (!st) {
        cort_pbw_bytes(&graph, sv.nodes.buf, sv.nodes.len);
        w_str(&graph, 2, m->graph->name && *m->graph->name ? m->graph->name : "cort_optimized");
        cort_pbw_bytes(&graph, sv.inits.buf, sv.inits.len);
        for (size_t i = 0; i < g->n_inputs; i++) w_value_info(&graph, 11, g->input_info[i]);
        for (size_t i = 0; i < g->n_outputs; i++) w_value_info(&graph, 12, g->output_info[i]);
        w_int(&model, 1, m->ir_version > 0 ? m->ir_version : 8);
        w_str(&model, 2, "cort");
        w_str(&model, 3, cort_version());
        if (m->domain && *m->domain) w_str(&model, 4, m->domain);
        if (m->model_version) w_int(&model, 5, m->model_version);
        w_sub(&model, 7, &graph);
        int have_ms = 0, need_ms = 0;
        for (size_t i = 0; i < m->n_opsets; i++) {
            W op = { 0 };
            if (m->opsets[i].domain && *m->opsets[i].domain) w_str(&op, 1, m->opsets[i].domain);
            have_ms |= m->opsets[i].domain && !strcmp(m->opsets[i].domain, "com.microsoft");
            w_int(&op, 2, m->opsets[i].version);
            w_sub(&model, 8, &op);
        }
        /* the QDQ pass writes com.microsoft.QLinearAdd into models that never imported that domain */
        for (size_t i = 0; i < g->n_nodes && !have_ms && !need_ms; i++)
            need_ms = !g->skip[i] && !strcmp(g->nodes[i].domain, "com.microsoft");
        if (need_ms) {
            W op = { 0 };
            w_str(&op, 1, "com.microsoft");
            w_int(&op, 2, 1);
            w_sub(&model, 8, &op);
        }
        for (size_t i = 0; i < m->n_metadata; i++) {
            W kv = { 0 };
            w_str(&kv, 1, m->metadata[i].key);
            w_str(&kv, 2, m->metadata[i].value ? m->metadata[i].value : "");
            w_sub(&model, 14, &kv);
        }
        if (model.oom || sv.nodes.oom || sv.inits.oom) st = cort_error_oom();
    }
    if (sv.ext && fclose(sv.ext) && !st)
        st = cort_error(CORT_ERROR_IO, "optimized model: writing external data '%s' failed", ext_path);
    cort_free(ext_path);
    if (!st) {
        FILE *f = fopen(path, "wb");
        if (!f) st = cort_error(CORT_ERROR_IO, "optimized model: cannot create '%s'", path);
        else {
            int ok = fwrite(model.buf, 1, model.len, f) == model.len;
            ok = fclose(f) == 0 && ok;
            if (!ok) st = cort_error(CORT_ERROR_IO, "optimized model: writing '%s' failed", path);
        }
    }
    cort_free(graph.buf);
    cort_free(model.buf);
    cort_free(sv.nodes.buf);
    cort_free(sv.inits.buf);
    cort_free(sv.init_done);
    for (size_t i = 0; i < sv.n_names; i++) cort_free(sv.names[i]);
    cort_free(sv.names);
    for (size_t i = 0; i < sv.n_own; i++) cort_free(sv.own_names[i]);
    cort_free(sv.own_names);
    cort_free((void *)sv.slot_name);
    return st;
}
