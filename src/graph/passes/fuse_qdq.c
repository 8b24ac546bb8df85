/* QDQ graphs (what static quantizers write) run as integer operators:
 *   QuantizeLinear([Relu|Clip](Conv(DQ(x), DQ(w)[, DQ(bias int32)])))  -> QLinearConv
 *   QuantizeLinear(MatMul(DQ(a), DQ(b)))                                -> QLinearMatMul
 *   QuantizeLinear([Relu](Add(DQ(a), DQ(b))))                           -> com.microsoft.QLinearAdd
 *   QuantizeLinear(Mul(DQ(a), DQ(b)))                                   -> com.microsoft.QLinearMul
 *   QuantizeLinear(Gemm(DQ(a), DQ(w)[, DQ(bias int32)]))                -> com.microsoft.QGemm
 *   QuantizeLinear(Concat(DQ(a), DQ(b), ...)), parameters differing      -> com.microsoft.QLinearConcat
 *   QuantizeLinear(Reshape|Transpose(DQ(x))), x's parameters               -> Reshape|Transpose of the bytes
 * Runs before kernels are built, so the integer op packs the constant weights once and the weight
 * DequantizeLinear (constant-folded otherwise) disappears. Fires only where the integer op computes
 * the same function up to the requantization's float rounding: 8-bit x, w and y with constant scalar
 * float scales and zero points (w's may be per output channel: Conv's axis 0, MatMul's B per
 * column, axis 1), a bias whose scale is exactly x_scale * w_scale[m] with zero point 0, and a
 * Relu/Clip only when the saturation of y already does what it does (Relu with y_zero_point at
 * the type's minimum, Clip(0, hi) with also quantize(hi) at or past the type's maximum). The DQ
 * nodes stay when anything else reads them. The float graph rounds x*sx, w*sw, their sum and y/sy
 * separately where QLinearConv rounds acc * (sx*sw/sy) once: a value that falls within float
 * rounding of a half may land one unit apart (docs/performance.md). Level 0 and 1 keep the graph
 * as written. */
#include <math.h>
#include <string.h>
#include "pattern.h"
#include "../../core/alloc.h"

static const void *cbytes(const cort_value *v) { return v->data ? v->data : v->lazy_src; }

/* The constant tensor in slot s, or NULL. */
static const cort_value *cval(const cort_graph *g, int32_t s) {
    const cort_value *v = s >= 0 ? g->consts[s] : NULL;
    return v && v->kind == CORT_VKIND_TENSOR && cbytes(v) ? v : NULL;
}
static int is8(cort_type t) { return t == CORT_TYPE_UINT8 || t == CORT_TYPE_INT8; }
static float cf32(const cort_value *v, size_t i) {
    float f;
    memcpy(&f, (const char *)cbytes(v) + i * sizeof f, sizeof f);
    return f;
}
static int32_t c8(const cort_value *v, size_t i) {
    const uint8_t b = ((const uint8_t *)cbytes(v))[i];
    return v->type == CORT_TYPE_INT8 ? (int32_t)(int8_t)b : (int32_t)b;
}

static cort_node *producer(cort_graph *g, const cort_pass_index *x, int32_t s, const char *op) {
    if (s < 0 || x->producer[s] < 0) return NULL;
    cort_node *n = &g->nodes[x->producer[s]];
    return !n->domain[0] && !strcmp(n->op_type, op) ? n : NULL;
}
static int32_t in_at(const cort_node *n, size_t i) { return i < n->n_inputs ? n->in_slot[i] : -1; }

/* Per-tensor or (count > 1) per-`axis` DQ/Q parameters: scale float, zero point 8-bit of `type` or absent. */
static int qparams_ok(const cort_graph *g, const cort_node *q, int32_t rank, size_t count_max, int axis) {
    const cort_value *s = cval(g, in_at(q, 1)), *z = cval(g, in_at(q, 2));
    if (!s || s->type != CORT_TYPE_FLOAT || (s->count != 1 && s->count != count_max) || s->rank > 1) return 0;
    if (in_at(q, 2) >= 0 && (!z || !is8(z->type) || z->count != s->count)) return 0;
    if (cort_attr_int(q, "block_size", 0) != 0 || cort_attr_int(q, "output_dtype", 0) != 0) return 0;
    if (s->count > 1) {
        int64_t a = cort_attr_int(q, "axis", 1);
        if (a < 0) a += rank;
        if (a != axis) return 0;
    }
    for (size_t i = 0; i < s->count; i++)
        if (!(cf32(s, i) > 0)) return 0;
    return 1;
}

/* Whether Relu/Clip node act before Q (scale sy, zero point zy of type t) changes nothing after saturation. */
static int act_is_noop(const cort_graph *g, const cort_node *act, float sy, int32_t zy, cort_type t) {
    const int32_t lo = t == CORT_TYPE_INT8 ? -128 : 0, hi = t == CORT_TYPE_INT8 ? 127 : 255;
    if (zy != lo) return 0;
    if (!strcmp(act->op_type, "Relu")) return act->n_inputs == 1;
    if (strcmp(act->op_type, "Clip")) return 0;
    float mn, mx;
    if (act->opset < 11) {
        mn = cort_attr_float(act, "min", -3.4028235e38f);
        mx = cort_attr_float(act, "max", 3.4028235e38f);
    } else {
        const cort_value *a = cval(g, in_at(act, 1)), *b = cval(g, in_at(act, 2));
        if (in_at(act, 1) < 0 || !a || a->type != CORT_TYPE_FLOAT || a->count != 1) return 0;
        mn = cf32(a, 0);
        if (in_at(act, 2) < 0) mx = 3.4028235e38f;
        else if (!b || b->type != CORT_TYPE_FLOAT || b->count != 1) return 0;
        else mx = cf32(b, 0);
    }
    /* quantize(mn) == zy (mn == 0) and quantize(mx) >= hi: the clip is the saturation */
    return mn == 0.0f && (double)nearbyintf(mx / sy) + zy >= (double)hi;
}

/* Slot and node pointers of one match. */
typedef struct qdq_match { cort_node *q, *act, *op, *dx, *dw, *db; } qdq_match;

/* A DQ reading an 8-bit x with scalar params. */
static int dq_act_ok(const cort_graph *g, const cort_node *dq) {
    const cort_value *z = cval(g, in_at(dq, 2));
    return dq && in_at(dq, 2) >= 0 && z && is8(z->type) && qparams_ok(g, dq, 0, 1, 0);
}

static cort_status *rewrite_in(cort_graph *g, const cort_pass_index *x, const qdq_match *m, const char *domain,
                               const char *op_type, const int32_t *in, size_t n_in, const char *drop_attr) {
    cort_node *q = m->q;
    cort_node_ir *ir = cort_arena_alloc(g->arena, sizeof *ir);
    int32_t *slots = cort_arena_alloc(g->arena, (n_in + 1) * sizeof *slots);
    const char **names = cort_arena_alloc(g->arena, (n_in + 1) * sizeof *names);
    if (!ir || !slots || !names) return cort_error_oom();
    *ir = *q->ir;
    ir->name = m->op->ir->name;
    ir->op_type = op_type;
    ir->domain = domain;
    ir->attrs = m->op->ir->attrs;   /* Conv's attributes are QLinearConv's (MatMul has none) */
    ir->n_attrs = m->op->ir->n_attrs;
    if (drop_attr) {   /* an attribute the fused op does not define (Gemm's beta for QGemm) */
        cort_attr_ir *at = cort_arena_alloc(g->arena, (ir->n_attrs + 1) * sizeof *at);
        if (!at) return cort_error_oom();
        size_t na = 0;
        for (size_t k = 0; k < m->op->ir->n_attrs; k++)
            if (strcmp(m->op->ir->attrs[k].name, drop_attr)) at[na++] = m->op->ir->attrs[k];
        ir->attrs = at;
        ir->n_attrs = na;
    }
    for (size_t k = 0; k < n_in; k++) {
        slots[k] = in[k];
        names[k] = in[k] >= 0 ? g->slot_names[in[k]] : "";
    }
    ir->inputs = names;
    ir->n_inputs = n_in;
    q->ir = ir;
    q->name = ir->name;
    q->op_type = op_type;
    if (*domain) {   /* the com.microsoft ops are version 1 whatever the model imports */
        q->domain = domain;
        q->opset = 1;
    }
    q->in_slot = slots;
    q->n_inputs = n_in;
    g->skip[m->op->index] = 1;
    if (m->act) g->skip[m->act->index] = 1;
    /* a DQ read only by the fused op goes (its output read count is that op's reads of it) */
    cort_node *dqs[3] = { m->dx, m->dw, m->db };
    for (int i = 0; i < 3; i++) {
        if (!dqs[i]) continue;
        int32_t reads = 0, s = dqs[i]->out_slot[0];
        for (size_t k = 0; k < m->op->n_inputs; k++) reads += m->op->in_slot[k] == s;
        if (x->uses[s] == reads) g->skip[dqs[i]->index] = 1;
    }
    return NULL;
}

static cort_status *rewrite(cort_graph *g, const cort_pass_index *x, const qdq_match *m, const char *op_type,
                            const int32_t *in, size_t n_in) {
    return rewrite_in(g, x, m, "", op_type, in, n_in, NULL);
}

/* Whether DQ node dq and Q node q use the same scale and zero point (values and zero-point type). */
static int same_qparams(const cort_graph *g, const cort_node *dq, const cort_node *q) {
    const cort_value *s1 = cval(g, in_at(dq, 1)), *s2 = cval(g, in_at(q, 1));
    const cort_value *z1 = cval(g, in_at(dq, 2)), *z2 = cval(g, in_at(q, 2));
    return s1 && s2 && z1 && z2 && s1->count == 1 && s2->count == 1 && cf32(s1, 0) == cf32(s2, 0) &&
           z1->type == z2->type && z1->count == 1 && z2->count == 1 && c8(z1, 0) == c8(z2, 0);
}

/* Q(MaxPool(DQ(x))) and Q(Concat(DQ(a), DQ(b), ...)) with one scale and zero point throughout: the op
 * on the 8-bit values. Exact: dequantization is increasing, and Q(DQ(v)) == v. */
static cort_status *try_passthrough(cort_graph *g, const cort_pass_index *x, cort_node *q, cort_node *p) {
    const int pool = !strcmp(p->op_type, "MaxPool");
    if ((!pool && strcmp(p->op_type, "Concat")) || p->n_outputs != 1 || p->n_inputs < 1 || p->n_inputs > 64 ||
        (pool && p->opset < 12))
        return NULL;
    int32_t *in = cort_arena_alloc(g->arena, (3 * p->n_inputs + 2) * sizeof *in);
    if (!in) return cort_error_oom();
    int same = 1;
    for (size_t k = 0; k < p->n_inputs; k++) {
        cort_node *dq = producer(g, x, p->in_slot[k], "DequantizeLinear");
        if (!dq || !dq_act_ok(g, dq)) return NULL;
        same &= same_qparams(g, dq, q);
        in[k] = dq->in_slot[0];
    }
    if (!same) {
        /* a Concat of differently quantized inputs (squeezenet's fire modules): com.microsoft.QLinearConcat,
         * which maps each input byte through a table of the very DQ-then-Q expression the float graph
         * computes, so the result is the same bit for bit */
        if (pool) return NULL;
        in[0] = q->in_slot[1];
        in[1] = q->in_slot[2];
        for (size_t k = 0; k < p->n_inputs; k++) {
            const cort_node *dq = producer(g, x, p->in_slot[k], "DequantizeLinear");
            in[2 + 3 * k] = in_at(dq, 0);
            in[3 + 3 * k] = in_at(dq, 1);
            in[4 + 3 * k] = in_at(dq, 2);
        }
        qdq_match m = { q, NULL, p, NULL, NULL, NULL };
        CORT_TRY(rewrite_in(g, x, &m, "com.microsoft", "QLinearConcat", in, 3 * p->n_inputs + 2, NULL));
        for (size_t k = 0; k < p->n_inputs; k++) {
            cort_node *dq = producer(g, x, p->in_slot[k], "DequantizeLinear");
            int32_t reads = 0, sl = p->in_slot[k];
            for (size_t i = 0; i < p->n_inputs; i++) reads += p->in_slot[i] == sl;
            if (dq && x->uses[sl] == reads) g->skip[dq->index] = 1;
        }
        return NULL;
    }
    qdq_match m = { q, NULL, p, NULL, NULL, NULL };
    CORT_TRY(rewrite(g, x, &m, p->op_type, in, p->n_inputs));
    for (size_t k = 0; k < p->n_inputs; k++) {
        cort_node *dq = producer(g, x, p->in_slot[k], "DequantizeLinear");
        int32_t reads = 0, s = p->in_slot[k];
        for (size_t i = 0; i < p->n_inputs; i++) reads += p->in_slot[i] == s;
        if (dq && x->uses[s] == reads) g->skip[dq->index] = 1;
    }
    return NULL;
}

/* Q(Reshape(DQ(x), shape)) and Q(Transpose(DQ(x))) with one scale and zero point: the op moves the
 * bytes themselves. Exact: the op only moves values, and Q(DQ(v)) == v (the transformer's head
 * split and merge). */
static cort_status *try_move(cort_graph *g, const cort_pass_index *x, cort_node *q, cort_node *p) {
    if (p->n_outputs != 1 || p->n_inputs < 1 || p->n_inputs > 2) return NULL;
    cort_node *dq = producer(g, x, p->in_slot[0], "DequantizeLinear");
    if (!dq || !dq_act_ok(g, dq) || !same_qparams(g, dq, q)) return NULL;
    int32_t *in = cort_arena_alloc(g->arena, 2 * sizeof *in);
    if (!in) return cort_error_oom();
    in[0] = dq->in_slot[0];
    if (p->n_inputs == 2) in[1] = p->in_slot[1];
    qdq_match m = { q, NULL, p, dq, NULL, NULL };
    return rewrite(g, x, &m, p->op_type, in, p->n_inputs);
}

/* Q(Add(DQ(a), DQ(b))) with one 8-bit type throughout -> com.microsoft.QLinearAdd (residual
 * connections): the sum of the dequantized values, divided by y's scale, in double. Q(Mul(DQ(a),
 * DQ(b))) likewise -> com.microsoft.QLinearMul (a transformer's GELU: x * 0.5 and x * (1 + erf)). */
static cort_status *try_add(cort_graph *g, const cort_pass_index *x, qdq_match *m, cort_node *p) {
    if (p->n_inputs != 2) return NULL;
    m->op = p;
    m->dx = producer(g, x, p->in_slot[0], "DequantizeLinear");
    m->dw = producer(g, x, p->in_slot[1], "DequantizeLinear");
    if (!m->dx || !m->dw || !dq_act_ok(g, m->dx) || !dq_act_ok(g, m->dw)) return NULL;
    const cort_value *za = cval(g, in_at(m->dx, 2)), *zb = cval(g, in_at(m->dw, 2)), *zy = cval(g, in_at(m->q, 2));
    if (!za || !zb || !zy || za->type != zb->type || zy->type != za->type) return NULL;
    const int32_t in[8] = { in_at(m->dx, 0), in_at(m->dx, 1), in_at(m->dx, 2), in_at(m->dw, 0), in_at(m->dw, 1),
                            in_at(m->dw, 2), m->q->in_slot[1], m->q->in_slot[2] };
    return rewrite_in(g, x, m, "com.microsoft", strcmp(p->op_type, "Mul") ? "QLinearAdd" : "QLinearMul", in, 8, NULL);
}

/* The bias of a fused Conv/Gemm: DQ(int32 b [count], scale exactly x_scale * w_scale[i], zero point 0),
 * the units QLinearConv's B and QGemm's C are in. Its slot, or -1 when it does not qualify. */
static int32_t int_bias(const cort_graph *g, const cort_node *db, const cort_value *xs, const cort_value *ws,
                        size_t count) {
    const cort_value *b = cval(g, in_at(db, 0)), *bs = cval(g, in_at(db, 1)), *bz = cval(g, in_at(db, 2));
    if (!b || b->type != CORT_TYPE_INT32 || b->rank != 1 || b->count != count || !bs || bs->type != CORT_TYPE_FLOAT ||
        (bs->count != 1 && bs->count != b->count) || cort_attr_int(db, "block_size", 0))
        return -1;
    if (in_at(db, 2) >= 0) {
        if (!bz || bz->type != CORT_TYPE_INT32) return -1;
        for (size_t i = 0; i < bz->count; i++) {
            int32_t z;
            memcpy(&z, (const char *)cbytes(bz) + i * sizeof z, sizeof z);   /* a lazy constant may be unaligned */
            if (z != 0) return -1;
        }
    }
    for (size_t i = 0; i < b->count; i++)
        if (cf32(bs, bs->count == 1 ? 0 : i) != cf32(xs, 0) * cf32(ws, ws->count == 1 ? 0 : i)) return -1;
    return in_at(db, 0);
}

/* Q(Gemm(DQ(a), DQ(w)[, DQ(int32 bias)])) -> com.microsoft.QGemm (classifier heads, MLPs): w constant 8-bit
 * [K, N] (or [N, K] with transB) with scales per tensor or per output column, beta 1. */
static cort_status *try_gemm(cort_graph *g, const cort_pass_index *x, qdq_match *m, cort_node *p) {
    if (p->n_inputs < 2 || p->n_inputs > 3 || m->act) return NULL;
    m->op = p;
    m->dx = producer(g, x, p->in_slot[0], "DequantizeLinear");
    m->dw = producer(g, x, p->in_slot[1], "DequantizeLinear");
    if (!m->dx || !m->dw || !dq_act_ok(g, m->dx)) return NULL;
    const cort_value *w = cval(g, in_at(m->dw, 0)), *wz = cval(g, in_at(m->dw, 2)), *ws = cval(g, in_at(m->dw, 1));
    const cort_value *xz = cval(g, in_at(m->dx, 2)), *yz = cval(g, in_at(m->q, 2)), *xs = cval(g, in_at(m->dx, 1));
    if (!w || !is8(w->type) || w->rank != 2 || (wz && wz->type != w->type) || !xz || !yz) return NULL;
    /* QGemm's A and its output are uint8 or int8 with the weights' signedness free; keep x and y one type */
    if (xz->type != yz->type) return NULL;
    const int tb = cort_attr_int(p, "transB", 0) != 0;
    const size_t N = (size_t)w->shape[tb ? 0 : 1];
    if (!qparams_ok(g, m->dw, 2, N, tb ? 0 : 1)) return NULL;
    int32_t bslot = -1;
    if (p->n_inputs == 3 && p->in_slot[2] >= 0) {
        if (cort_attr_float(p, "beta", 1.0f) != 1.0f) return NULL;
        m->db = producer(g, x, p->in_slot[2], "DequantizeLinear");
        if (!m->db || (bslot = int_bias(g, m->db, xs, ws, N)) < 0) return NULL;
    }
    const int32_t in[9] = { in_at(m->dx, 0), in_at(m->dx, 1), in_at(m->dx, 2), in_at(m->dw, 0), in_at(m->dw, 1),
                            in_at(m->dw, 2), bslot, m->q->in_slot[1], m->q->in_slot[2] };
    return rewrite_in(g, x, m, "com.microsoft", "QGemm", in, 9, "beta");
}

static cort_status *try_fuse(cort_graph *g, const cort_pass_index *x, cort_node *q) {
    if (q->n_inputs < 3 || q->n_outputs != 1 || q->out_slot[0] < 0 || !dq_act_ok(g, q)) return NULL;
    const cort_value *ys = cval(g, q->in_slot[1]), *yz = cval(g, q->in_slot[2]);
    qdq_match m = { q, NULL, NULL, NULL, NULL, NULL };
    int32_t s = q->in_slot[0];
    if (s < 0 || x->producer[s] < 0 || x->uses[s] != 1) return NULL;
    cort_node *p = &g->nodes[x->producer[s]];
    if (!p->domain[0] && (!strcmp(p->op_type, "Relu") || !strcmp(p->op_type, "Clip"))) {
        if (!act_is_noop(g, p, cf32(ys, 0), c8(yz, 0), yz->type) || p->n_outputs != 1) return NULL;
        m.act = p;
        s = p->in_slot[0];
        if (s < 0 || x->producer[s] < 0 || x->uses[s] != 1) return NULL;
        p = &g->nodes[x->producer[s]];
    }
    if (!p->domain[0] && !m.act && (!strcmp(p->op_type, "MaxPool") || !strcmp(p->op_type, "Concat")))
        return try_passthrough(g, x, q, p);
    if (!p->domain[0] && !m.act && (!strcmp(p->op_type, "Reshape") || !strcmp(p->op_type, "Transpose")))
        return try_move(g, x, q, p);
    if (p->domain[0] || p->n_outputs != 1 || p->n_inputs < 2) return NULL;
    if (!strcmp(p->op_type, "Add") || (!strcmp(p->op_type, "Mul") && !m.act)) return try_add(g, x, &m, p);
    if (!strcmp(p->op_type, "Gemm")) return try_gemm(g, x, &m, p);
    const int conv = !strcmp(p->op_type, "Conv");
    if (!conv && (strcmp(p->op_type, "MatMul") || m.act)) return NULL;   /* QLinearMatMul: no activation clamp needed */
    m.op = p;
    m.dx = producer(g, x, p->in_slot[0], "DequantizeLinear");
    m.dw = producer(g, x, p->in_slot[1], "DequantizeLinear");
    if (!m.dx || !m.dw || !dq_act_ok(g, m.dx)) return NULL;
    const cort_value *w = cval(g, in_at(m.dw, 0)), *ws = cval(g, in_at(m.dw, 1)), *wz = cval(g, in_at(m.dw, 2));
    if (!w || !is8(w->type) || (wz && wz->type != w->type)) return NULL;
    const cort_value *xs = cval(g, in_at(m.dx, 1));
    int32_t bslot = -1;
    if (conv) {
        if (w->rank < 3 || !qparams_ok(g, m.dw, (int32_t)w->rank, (size_t)w->shape[0], 0)) return NULL;
        if (p->n_inputs > 2 && p->in_slot[2] >= 0) {
            m.db = producer(g, x, p->in_slot[2], "DequantizeLinear");
            /* the bias must be in units of x_scale * w_scale[m], exactly as QLinearConv adds it */
            if (!m.db || (bslot = int_bias(g, m.db, xs, ws, (size_t)w->shape[0])) < 0) return NULL;
        }
        const int32_t in[9] = { in_at(m.dx, 0), in_at(m.dx, 1), in_at(m.dx, 2), in_at(m.dw, 0), in_at(m.dw, 1),
                                in_at(m.dw, 2), q->in_slot[1], q->in_slot[2], bslot };
        return rewrite(g, x, &m, "QLinearConv", in, bslot >= 0 ? 9 : 8);
    }
    /* MatMul: QLinearMatMul takes x's and y's parameters per tensor, B's per tensor or per column */
    if (w->rank != 2 || w->shape[1] < 1 || !qparams_ok(g, m.dw, 2, (size_t)w->shape[1], 1)) return NULL;
    const int32_t in[8] = { in_at(m.dx, 0), in_at(m.dx, 1), in_at(m.dx, 2), in_at(m.dw, 0), in_at(m.dw, 1),
                            in_at(m.dw, 2), q->in_slot[1], q->in_slot[2] };
    return rewrite(g, x, &m, "QLinearMatMul", in, 8);
}

cort_status *cort_pass_fuse_qdq(cort_graph *g, cort_pass_index *x) {
    CORT_TRY(pat_index_build(g, x));
    for (size_t i = 0; i < g->n_nodes; i++) {
        cort_node *q = &g->nodes[i];
        if (g->skip[i] || q->domain[0] || strcmp(q->op_type, "QuantizeLinear")) continue;
        CORT_TRY(try_fuse(g, x, q));
        if (strcmp(q->op_type, "QuantizeLinear")) CORT_TRY(pat_index_build(g, x));   /* fused: reads changed */
    }
    return NULL;
}
