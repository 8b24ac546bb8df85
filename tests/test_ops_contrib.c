/* The com.microsoft ops (src/providers/cpu/ops/contrib/): each run as a hand-assembled node on
 * several shapes and compared with an independent reference: plain double-precision loops written
 * here from the ops' definitions, or for FusedConv / FusedGemm cort's ai.onnx Conv / Gemm with the
 * activation applied here. ONNX Runtime itself is the reference of bench/make_contrib_cases.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/threadpool.h"
#include "graph/op.h"
#include "core/types.h"

static cort_pool *g_pool;
static uint32_t rng_state = 777;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Runs domain.op_type on inputs (NULL: missing optional input); outputs[i] preset to a non-NULL
 * marker value is not needed: want[i] says which outputs are requested. */
static cort_status *run_op(const char *domain, const char *op_type, int opset, cort_attr_ir *attrs, size_t n_attrs,
                           cort_value **inputs, size_t n_in, cort_value **outputs, size_t n_out, const int *want) {
    const cort_op_def *def = cort_op_find(domain, op_type, opset);
    if (!def) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "%s.%s-%d not found", domain, op_type, opset);
    cort_node_ir ir;
    memset(&ir, 0, sizeof ir);
    ir.name = "t"; ir.op_type = op_type; ir.domain = domain; ir.attrs = attrs; ir.n_attrs = n_attrs;
    int32_t in_slots[16], out_slots[8];
    for (size_t i = 0; i < n_in; i++) in_slots[i] = inputs[i] ? (int32_t)i : -1;
    for (size_t i = 0; i < n_out; i++) out_slots[i] = !want || want[i] ? (int32_t)(16 + i) : -1;
    cort_node node;
    memset(&node, 0, sizeof node);
    node.ir = &ir; node.name = "t"; node.op_type = op_type; node.domain = domain; node.opset = opset; node.op = def;
    node.n_inputs = n_in; node.n_outputs = n_out; node.in_slot = in_slots; node.out_slot = out_slots;
    void *state = NULL;
    if (def->init) CORT_TRY(def->init(&node, &state));
    node.state = state;
    cort_kernel_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.node = &node; ctx.state = state; ctx.opset = opset; ctx.inputs = inputs; ctx.n_inputs = n_in;
    ctx.outputs = outputs; ctx.n_outputs = n_out; ctx.pool = g_pool;
    cort_status *st = def->run(&ctx);
    if (def->free_state) def->free_state(state);
    return st;
}

static cort_attr_ir a_int(const char *name, int64_t v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_INT; a.i = v; return a;
}
static cort_attr_ir a_float(const char *name, float v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_FLOAT; a.f = v; return a;
}
static cort_attr_ir a_str(const char *name, const char *v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_STRING; a.s = (char *)v; return a;
}
static cort_attr_ir a_floats(const char *name, float *v, size_t n) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_FLOATS; a.floats = v; a.n = n; return a;
}
static cort_attr_ir a_ints(const char *name, int64_t *v, size_t n) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_INTS; a.ints = v; a.n = n; return a;
}

static cort_value *tensor(cort_type t, const int64_t *shape, size_t rank) {
    cort_value *v = NULL;
    CHECK_OK(cort_tensor_create(t, shape, rank, &v));
    return v;
}
static cort_value *frand_tensor(const int64_t *shape, size_t rank, float scale) {
    cort_value *v = tensor(CORT_TYPE_FLOAT, shape, rank);
    if (!v) return NULL;
    float *p = cort_tensor_data(v);
    for (size_t i = 0; i < cort_tensor_element_count(v); i++) p[i] = scale * frand();
    return v;
}
static float *fdata(cort_value *v) { return cort_tensor_data(v); }
static size_t count(const cort_value *v) { return cort_tensor_element_count(v); }
static void release(cort_value **v, size_t n) { for (size_t i = 0; i < n; i++) { cort_value_release(v[i]); v[i] = NULL; } }

static const tu_tol TOL = { 1e-4, 1e-5, 1e-6 };

/* ---- FusedConv / FusedGemm: cort's Conv / Gemm, then the activation and Z applied here ---- */
static double act_ref(const char *act, const float *p, double x) {
    if (!strcmp(act, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(act, "LeakyRelu")) return x >= 0 ? x : p[0] * x;
    if (!strcmp(act, "Clip")) return x < p[0] ? p[0] : x > p[1] ? p[1] : x;
    if (!strcmp(act, "Sigmoid")) return 1.0 / (1.0 + exp(-x));
    if (!strcmp(act, "Tanh")) return tanh(x);
    if (!strcmp(act, "HardSigmoid")) { double v = p[0] * x + p[1]; return v < 0 ? 0 : v > 1 ? 1 : v; }
    if (!strcmp(act, "Elu")) return x >= 0 ? x : p[0] * (exp(x) - 1);
    return x;
}

static void test_fused_conv(void) {
    const char *acts[] = { "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid" };
    float params[][2] = { { 0, 0 }, { 0.15f, 0 }, { -0.4f, 0.6f }, { 0, 0 }, { 0, 0 }, { 0.25f, 0.45f } };
    size_t np[] = { 0, 1, 2, 0, 0, 2 };
    struct { int64_t x[4], w[4]; int group, stride, pad, with_z, with_b; } cases[] = {
        { { 1, 4, 9, 9 }, { 6, 4, 3, 3 }, 1, 1, 1, 0, 1 },
        { { 2, 6, 8, 7 }, { 6, 2, 3, 3 }, 3, 2, 0, 1, 1 },
        { { 1, 8, 5, 5 }, { 16, 8, 1, 1 }, 1, 1, 0, 1, 0 },
        { { 1, 4, 6, 6 }, { 4, 1, 3, 3 }, 4, 1, 1, 1, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t a = 0; a < 6; a++) {
            int64_t pads[4] = { cases[c].pad, cases[c].pad, cases[c].pad, cases[c].pad };
            int64_t strides[2] = { cases[c].stride, cases[c].stride };
            int64_t bs[1] = { cases[c].w[0] };
            cort_value *in[4] = { frand_tensor(cases[c].x, 4, 1.0f), frand_tensor(cases[c].w, 4, 0.5f),
                                  cases[c].with_b ? frand_tensor(bs, 1, 0.5f) : NULL, NULL };
            cort_attr_ir conv_at[3] = { a_ints("pads", pads, 4), a_ints("strides", strides, 2),
                                        a_int("group", cases[c].group) };
            cort_value *ref[1] = { NULL };
            CHECK_OK(run_op("", "Conv", 11, conv_at, 3, in, 3, ref, 1, NULL));
            if (!ref[0]) { release(in, 4); continue; }
            if (cases[c].with_z) {
                const int64_t *yd = cort_tensor_shape(ref[0]);
                in[3] = frand_tensor(yd, 4, 1.0f);
            }
            cort_attr_ir at[6] = { conv_at[0], conv_at[1], conv_at[2], a_str("activation", acts[a]),
                                   a_floats("activation_params", params[a], np[a]) };
            size_t nat = np[a] ? 5 : 4;
            cort_value *out[1] = { NULL };
            CHECK_OK(run_op("com.microsoft", "FusedConv", 1, at, nat, in, 4, out, 1, NULL));
            if (out[0]) {
                size_t n = count(ref[0]);
                float *want = malloc(n * sizeof *want);
                for (size_t i = 0; i < n; i++)
                    want[i] = (float)act_ref(acts[a], params[a], (double)fdata(ref[0])[i] + (in[3] ? fdata(in[3])[i] : 0));
                CHECK_CLOSE(fdata(out[0]), want, n, TOL, "FusedConv case %zu %s", c, acts[a]);
                free(want);
            }
            release(out, 1);
            release(ref, 1);
            release(in, 4);
        }
    /* an unknown activation is refused at creation, naming it */
    int64_t xs[4] = { 1, 1, 3, 3 }, ws[4] = { 1, 1, 1, 1 };
    cort_value *in[2] = { frand_tensor(xs, 4, 1), frand_tensor(ws, 4, 1) };
    cort_attr_ir at[1] = { a_str("activation", "Swish9") };
    cort_value *out[1] = { NULL };
    CHECK_ERR(run_op("com.microsoft", "FusedConv", 1, at, 1, in, 2, out, 1, NULL), CORT_ERROR_NOT_IMPLEMENTED, "Swish9");
    release(out, 1);
    release(in, 2);
}

static void test_fused_gemm(void) {
    struct { int64_t M, N, K; int ta, tb; int crank; const char *act; float p[2]; } cases[] = {
        { 5, 3, 7, 0, 0, 1, "LeakyRelu", { 0.1f, 0 } },
        { 5, 3, 7, 1, 1, 2, "Tanh", { 0, 0 } },
        { 17, 33, 20, 0, 1, 0, "Relu", { 0, 0 } },
        { 8, 40, 64, 1, 0, 1, "HardSigmoid", { 0.3f, 0.5f } },
        { 3, 9, 4, 0, 0, 2, "Elu", { 0.7f, 0 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t as[2] = { cases[c].ta ? cases[c].K : cases[c].M, cases[c].ta ? cases[c].M : cases[c].K };
        int64_t bs[2] = { cases[c].tb ? cases[c].N : cases[c].K, cases[c].tb ? cases[c].K : cases[c].N };
        int64_t cs[2] = { cases[c].M, cases[c].N };
        cort_value *in[3] = { frand_tensor(as, 2, 1), frand_tensor(bs, 2, 1),
                              cases[c].crank ? frand_tensor(cs + 2 - cases[c].crank, (size_t)cases[c].crank, 1) : NULL };
        cort_attr_ir gat[4] = { a_int("transA", cases[c].ta), a_int("transB", cases[c].tb), a_float("alpha", 0.8f),
                                a_float("beta", 0.6f) };
        cort_value *ref[1] = { NULL }, *out[1] = { NULL };
        CHECK_OK(run_op("", "Gemm", 13, gat, 4, in, cases[c].crank ? 3 : 2, ref, 1, NULL));
        cort_attr_ir at[7] = { gat[0], gat[1], gat[2], gat[3], a_str("activation", cases[c].act),
                               a_float("activation_alpha", cases[c].p[0]), a_float("activation_beta", cases[c].p[1]) };
        CHECK_OK(run_op("com.microsoft", "FusedGemm", 1, at, 7, in, cases[c].crank ? 3 : 2, out, 1, NULL));
        if (ref[0] && out[0]) {
            size_t n = count(ref[0]);
            float *want = malloc(n * sizeof *want);
            for (size_t i = 0; i < n; i++) want[i] = (float)act_ref(cases[c].act, cases[c].p, fdata(ref[0])[i]);
            CHECK_CLOSE(fdata(out[0]), want, n, TOL, "FusedGemm case %zu %s", c, cases[c].act);
            free(want);
        }
        release(out, 1);
        release(ref, 1);
        release(in, 3);
    }
}

/* ---- FusedMatMul: index arithmetic of the transposes written out ---- */
/* element (batch index bi over the operand's transposed batch dims, row r, col c) of op(X) */
static float op_elem(const cort_value *v, int trans, int tbatch, const int64_t *bidx, int nb, int64_t r, int64_t c) {
    const int64_t *d = cort_tensor_shape(v);
    const int rank = (int)cort_tensor_rank(v);
    int64_t idx[8];
    int64_t row = trans ? c : r, col = trans ? r : c;
    if (rank == 1) return fdata((cort_value *)v)[r + c];
    /* transposed layout: batch dims e[0..rank-3], then rows, cols; e = d permuted when tbatch */
    int nbv = rank - 2;
    int64_t eb[8];
    for (int i = 0; i < nbv; i++) eb[i] = bidx[nb - nbv + i];   /* broadcast: trailing batch dims */
    for (int i = 0; i < nbv; i++) {
        int64_t dim = tbatch ? d[i + 1] : d[i];
        if (dim == 1) eb[i] = 0;
    }
    if (tbatch) {
        /* e = [d1 .. d_{r-2}, d0, d_{r-1}]: e-batch i is d(i+1), e-row is d0 */
        idx[0] = row;
        for (int i = 0; i < nbv; i++) idx[i + 1] = eb[i];
        idx[rank - 1] = col;
    } else {
        for (int i = 0; i < nbv; i++) idx[i] = eb[i];
        idx[rank - 2] = row;
        idx[rank - 1] = col;
    }
    size_t off = 0;
    for (int i = 0; i < rank; i++) off = off * (size_t)d[i] + (size_t)idx[i];
    return fdata((cort_value *)v)[off];
}

static void test_fused_matmul(void) {
    struct { int64_t a[4]; size_t ra; int64_t b[4]; size_t rb; int ta, tb, tba, tbb; float alpha; } cases[] = {
        { { 2, 3, 5, 8 }, 4, { 8, 6 }, 2, 0, 0, 0, 0, 0.125f },
        { { 2, 4, 5, 8 }, 4, { 2, 4, 6, 8 }, 4, 0, 1, 0, 0, 0.5f },
        { { 3, 8, 5 }, 3, { 1, 8, 6 }, 3, 1, 0, 0, 0, 1.0f },
        { { 4, 3, 5 }, 3, { 6, 3, 5 }, 3, 0, 1, 1, 1, 1.0f },
        { { 5, 2, 3, 4 }, 4, { 2, 3, 5, 6 }, 4, 1, 0, 1, 0, 2.0f },
        { { 7 }, 1, { 3, 7, 4 }, 3, 0, 0, 0, 0, 1.0f },
        { { 2, 6, 7 }, 3, { 4, 7 }, 2, 0, 1, 0, 0, -1.5f },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cort_value *in[2] = { frand_tensor(cases[c].a, cases[c].ra, 1), frand_tensor(cases[c].b, cases[c].rb, 1) };
        cort_attr_ir at[5] = { a_int("transA", cases[c].ta), a_int("transB", cases[c].tb),
                               a_int("transBatchA", cases[c].tba), a_int("transBatchB", cases[c].tbb),
                               a_float("alpha", cases[c].alpha) };
        cort_value *out[1] = { NULL };
        CHECK_OK(run_op("com.microsoft", "FusedMatMul", 1, at, 5, in, 2, out, 1, NULL));
        if (!out[0]) { release(in, 2); continue; }
        /* shape of op(A), op(B) */
        const int64_t *ad = cases[c].a, *bd = cases[c].b;
        const int ra = (int)cases[c].ra, rb = (int)cases[c].rb;
        int64_t ea[4], eb[4];
        for (int i = 0; i < ra; i++) ea[i] = ad[i];
        for (int i = 0; i < rb; i++) eb[i] = bd[i];
        if (cases[c].tba) { for (int i = 0; i < ra - 2; i++) ea[i] = ad[i + 1]; ea[ra - 2] = ad[0]; }
        if (cases[c].tbb) { for (int i = 0; i < rb - 2; i++) eb[i] = bd[i + 1]; eb[rb - 2] = bd[0]; }
        int64_t M = ra == 1 ? 1 : cases[c].ta ? ea[ra - 1] : ea[ra - 2];
        int64_t K = ra == 1 ? ad[0] : cases[c].ta ? ea[ra - 2] : ea[ra - 1];
        int64_t N = cases[c].tb ? eb[rb - 2] : eb[rb - 1];
        int nb = (ra > rb ? ra : rb) - 2;
        int64_t bdims[4];
        for (int i = 0; i < nb; i++) {
            int ia = i - (nb - (ra - 2)), ib = i - (nb - (rb - 2));
            int64_t da = ia >= 0 && ra > 2 ? ea[ia] : 1, db = ib >= 0 ? eb[ib] : 1;
            bdims[i] = da > db ? da : db;
        }
        size_t batch = 1;
        for (int i = 0; i < nb; i++) batch *= (size_t)bdims[i];
        size_t n = count(out[0]);
        CHECK(n == batch * (size_t)M * (size_t)N);
        float *want = malloc((n ? n : 1) * sizeof *want);
        for (size_t t = 0; t < batch && n == batch * (size_t)M * (size_t)N; t++) {
            int64_t bi[4];
            size_t rem = t;
            for (int i = nb - 1; i >= 0; i--) { bi[i] = (int64_t)(rem % (size_t)bdims[i]); rem /= (size_t)bdims[i]; }
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double s = 0;
                    for (int64_t k = 0; k < K; k++)
                        s += (double)op_elem(in[0], cases[c].ta, cases[c].tba, bi, nb, ra == 1 ? 0 : i, k) *
                             op_elem(in[1], cases[c].tb, cases[c].tbb, bi, nb, k, j);
                    want[(t * (size_t)M + (size_t)i) * (size_t)N + (size_t)j] = (float)(cases[c].alpha * s);
                }
        }
        if (n == batch * (size_t)M * (size_t)N) CHECK_CLOSE(fdata(out[0]), want, n, TOL, "FusedMatMul case %zu", c);
        free(want);
        release(out, 1);
        release(in, 2);
    }
}

/* ---- GELUs, BiasAdd ---- */
static void test_elementwise(void) {
    const int64_t shapes[][3] = { { 2, 5, 16 }, { 1, 3, 1000 }, { 4, 1, 7 } };
    for (size_t s = 0; s < 3; s++) {
        const int64_t *sh = shapes[s];
        int64_t c = sh[2];
        cort_value *x = frand_tensor(sh, 3, 4.0f), *bias = frand_tensor(&c, 1, 1.0f), *skip = frand_tensor(sh, 3, 1.0f);
        const size_t n = count(x);
        float *want = malloc(n * sizeof *want);
        const float *xp = fdata(x), *bp = fdata(bias), *sp = fdata(skip);
        struct { const char *op; cort_value *in[3]; size_t n_in; } ops[] = {
            { "Gelu", { x }, 1 }, { "BiasGelu", { x, bias }, 2 }, { "FastGelu", { x }, 1 }, { "FastGelu", { x, bias }, 2 },
            { "QuickGelu", { x }, 1 }, { "BiasAdd", { x, bias, skip }, 3 },
        };
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            for (size_t i = 0; i < n; i++) {
                double v = xp[i] + (ops[o].n_in > 1 ? bp[i % (size_t)c] : 0.0);
                if (!strcmp(ops[o].op, "Gelu") || !strcmp(ops[o].op, "BiasGelu")) v = v * 0.5 * erfc(-v / sqrt(2.0));
                else if (!strcmp(ops[o].op, "FastGelu"))
                    v = 0.5 * v * (1.0 + tanh(sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
                else if (!strcmp(ops[o].op, "QuickGelu")) v = v / (1.0 + exp(-1.25 * v));
                else v += sp[i];
                want[i] = (float)v;
            }
            cort_attr_ir at[1] = { a_float("alpha", 1.25f) };
            cort_value *out[1] = { NULL };
            CHECK_OK(run_op("com.microsoft", ops[o].op, 1, at, 1, ops[o].in, ops[o].n_in, out, 1, NULL));
            if (out[0]) CHECK_CLOSE(fdata(out[0]), want, n, TOL, "%s (%zu inputs) shape %zu", ops[o].op, ops[o].n_in, s);
            release(out, 1);
        }
        /* a bias of the wrong length is refused, naming it */
        int64_t c1 = c + 1;
        cort_value *bad = frand_tensor(&c1, 1, 1.0f), *in2[2] = { x, bad }, *out[1] = { NULL };
        CHECK_ERR(run_op("com.microsoft", "BiasGelu", 1, NULL, 0, in2, 2, out, 1, NULL), CORT_ERROR_INVALID_ARGUMENT,
                  "'bias'");
        release(out, 1);
        cort_value_release(bad);
        free(want);
        cort_value_release(x);
        cort_value_release(bias);
        cort_value_release(skip);
    }
}

/* ---- normalizations ---- */
static void norm_ref(const double *t, size_t c, int simplified, double eps, const float *g, const float *b, float *y,
                     double *mean, double *inv) {
    double m = 0, v = 0;
    for (size_t i = 0; i < c; i++) m += t[i];
    m /= (double)c;
    if (simplified) m = 0;
    for (size_t i = 0; i < c; i++) v += (t[i] - m) * (t[i] - m);
    v /= (double)c;
    double iv = 1.0 / sqrt(v + eps);
    for (size_t i = 0; i < c; i++) y[i] = (float)((t[i] - m) * iv * (g ? g[i] : 1.0) + (b ? b[i] : 0.0));
    *mean = m;
    *inv = iv;
}

static void test_skip_layer_norm(void) {
    const int64_t shapes[][3] = { { 2, 6, 32 }, { 1, 5, 768 }, { 3, 1, 9 } };
    for (size_t s = 0; s < 3; s++)
        for (int simplified = 0; simplified < 2; simplified++)
            for (int variant = 0; variant < 3; variant++) {   /* 0: all inputs, 1: minimal, 2: broadcast skip */
                const int64_t *sh = shapes[s];
                const int64_t c = sh[2];
                const size_t C = (size_t)c;
                cort_value *x = frand_tensor(sh, 3, 2.0f), *g = frand_tensor(&c, 1, 1.0f), *be = frand_tensor(&c, 1, 1.0f);
                cort_value *bi = frand_tensor(&c, 1, 1.0f);
                cort_value *sk = variant == 2 ? frand_tensor(sh + 1, 2, 1.0f) : frand_tensor(sh, 3, 1.0f);
                cort_value *in[5] = { x, sk, g, NULL, NULL };
                size_t n_in = 3;
                if (variant == 0) {
                    if (simplified) { in[3] = bi; n_in = 4; }
                    else { in[3] = be; in[4] = bi; n_in = 5; }
                }
                const float eps = 1e-5f;
                cort_attr_ir at[1] = { a_float("epsilon", eps) };
                cort_value *out[4] = { NULL };
                const char *op = simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization";
                CHECK_OK(run_op("com.microsoft", op, 1, at, 1, in, n_in, out, 4, NULL));
                const size_t n = count(x), rows = n / C, srows = count(sk) / C;
                float *want = malloc(n * sizeof *want), *wsum = malloc(n * sizeof *wsum), wm[64], wi[64];
                double *t = malloc(C * sizeof *t);
                for (size_t r = 0; r < rows; r++) {
                    for (size_t i = 0; i < C; i++) {
                        t[i] = (double)fdata(x)[r * C + i] + fdata(sk)[(r % srows) * C + i] +
                               (variant == 0 ? fdata(bi)[i] : 0.0);
                        wsum[r * C + i] = (float)t[i];
                    }
                    double m, iv;
                    norm_ref(t, C, simplified, eps, fdata(g), variant == 0 && !simplified ? fdata(be) : NULL,
                             want + r * C, &m, &iv);
                    if (r < 64) { wm[r] = (float)m; wi[r] = (float)iv; }
                }
                if (out[0] && out[1] && out[2] && out[3]) {
                    CHECK_CLOSE(fdata(out[0]), want, n, TOL, "%s shape %zu variant %d", op, s, variant);
                    CHECK_CLOSE(fdata(out[3]), wsum, n, TOL, "%s sum shape %zu variant %d", op, s, variant);
                    CHECK_CLOSE(fdata(out[1]), wm, rows < 64 ? rows : 64, TOL, "%s mean", op);
                    CHECK_CLOSE(fdata(out[2]), wi, rows < 64 ? rows : 64, TOL, "%s inv_std_var", op);
                    CHECK(cort_tensor_rank(out[1]) == 3 && cort_tensor_shape(out[1])[2] == 1);
                } else {
                    CHECK(0);
                }
                free(want); free(wsum); free(t);
                release(out, 4);
                cort_value *vals[5] = { x, g, be, bi, sk };
                release(vals, 5);
            }
    /* a skip that is not a trailing part of input's shape is refused */
    int64_t xs[3] = { 2, 4, 8 }, ss[3] = { 2, 3, 8 }, c = 8;
    cort_value *in[3] = { frand_tensor(xs, 3, 1), frand_tensor(ss, 3, 1), frand_tensor(&c, 1, 1) }, *out[1] = { NULL };
    CHECK_ERR(run_op("com.microsoft", "SkipLayerNormalization", 1, NULL, 0, in, 3, out, 1, NULL),
              CORT_ERROR_INVALID_ARGUMENT, "'skip'");
    release(out, 1);
    release(in, 3);
}

static void test_ln_family(void) {
    /* ai.onnx SimplifiedLayerNormalization (axis -1 and 1) and LayerNormalization below opset 17 */
    const int64_t shape[3] = { 3, 4, 5 };
    for (int op = 0; op < 2; op++)
        for (int axis = 1; axis <= 2; axis++) {
            cort_value *x = frand_tensor(shape, 3, 3.0f);
            size_t C = axis == 1 ? 20 : 5, rows = 60 / C;
            cort_value *sc = frand_tensor(shape + axis, (size_t)(3 - axis), 1.0f);
            cort_value *b = frand_tensor(shape + axis, (size_t)(3 - axis), 1.0f);
            cort_value *in[3] = { x, sc, b };
            cort_attr_ir at[2] = { a_int("axis", axis == 2 ? -1 : 1), a_float("epsilon", 1e-4f) };
            cort_value *out[3] = { NULL };
            int simplified = op == 0;
            CHECK_OK(run_op("", simplified ? "SimplifiedLayerNormalization" : "LayerNormalization", 14, at, 2, in,
                            simplified ? 2 : 3, out, simplified ? 2 : 3, NULL));
            float want[60], wi[12];
            double t[20];
            for (size_t r = 0; r < rows; r++) {
                double m, iv;
                for (size_t i = 0; i < C; i++) t[i] = fdata(x)[r * C + i];
                norm_ref(t, C, simplified, 1e-4, fdata(sc), simplified ? NULL : fdata(b), want + r * C, &m, &iv);
                wi[r] = (float)iv;
            }
            const int iout = simplified ? 1 : 2;
            if (out[0] && out[iout]) {
                CHECK_CLOSE(fdata(out[0]), want, 60, TOL, "op %d axis %d", op, axis);
                CHECK_CLOSE(fdata(out[iout]), wi, rows, TOL, "op %d axis %d inv", op, axis);
            } else {
                CHECK(0);
            }
            release(out, 3);
            release(in, 3);
        }
}

/* ---- Trilu (com.microsoft), BiasSoftmax ---- */
static void test_trilu_bias_softmax(void) {
    int64_t xs[3] = { 2, 5, 6 }, one = 1;
    for (int upper = 0; upper < 2; upper++)
        for (int64_t k = -2; k <= 2; k += 2) {
            cort_value *kv = tensor(CORT_TYPE_INT64, &one, 0);
            if (kv) *(int64_t *)cort_tensor_data(kv) = k;
            cort_value *in[2] = { frand_tensor(xs, 3, 1), kv }, *out[1] = { NULL };
            cort_attr_ir at[1] = { a_int("upper", upper) };
            CHECK_OK(run_op("com.microsoft", "Trilu", 1, at, 1, in, 2, out, 1, NULL));
            float want[60];
            for (size_t i = 0; i < 60; i++) {
                int64_t r = (int64_t)(i / 6) % 5, c = (int64_t)(i % 6);
                int keep = upper ? c - r >= k : c - r <= k;
                want[i] = keep ? fdata(in[0])[i] : 0.0f;
            }
            if (out[0]) CHECK(tu_max_ulp(fdata(out[0]), want, 60, NULL) == 0);
            release(out, 1);
            release(in, 2);
        }
    struct { int64_t x[4], b[4]; size_t rb; int axis; } cases[] = {
        { { 2, 3, 4, 7 }, { 2, 1, 1, 7 }, 4, 3 },
        { { 2, 3, 4, 7 }, { 1, 3, 4, 7 }, 4, 3 },
        { { 2, 3, 4, 7 }, { 4, 7 }, 2, 2 },
    };
    for (size_t c = 0; c < 3; c++) {
        cort_value *in[2] = { frand_tensor(cases[c].x, 4, 3), frand_tensor(cases[c].b, cases[c].rb, 3) }, *out[1] = { NULL };
        cort_attr_ir at[2] = { a_int("axis", cases[c].axis), a_int("is_inner_broadcast", 0) };
        CHECK_OK(run_op("com.microsoft", "BiasSoftmax", 1, at, 2, in, 2, out, 1, NULL));
        float want[168];
        double t[168];
        for (size_t i = 0; i < 168; i++) {
            size_t idx[4] = { i / 84, i / 28 % 3, i / 7 % 4, i % 7 }, off = 0;
            const int64_t *bd = cases[c].b;
            size_t rb = cases[c].rb;
            for (size_t d = 0; d < rb; d++) {
                size_t xi = idx[4 - rb + d];
                off = off * (size_t)bd[d] + (bd[d] == 1 ? 0 : xi);
            }
            t[i] = (double)fdata(in[0])[i] + fdata(in[1])[off];
        }
        size_t n = cases[c].axis == 3 ? 7 : 28;
        for (size_t r = 0; r < 168 / n; r++) {
            double m = -INFINITY, s = 0;
            for (size_t i = 0; i < n; i++) m = fmax(m, t[r * n + i]);
            for (size_t i = 0; i < n; i++) s += exp(t[r * n + i] - m);
            for (size_t i = 0; i < n; i++) want[r * n + i] = (float)(exp(t[r * n + i] - m) / s);
        }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, 168, TOL, "BiasSoftmax case %zu", c);
        release(out, 1);
        release(in, 2);
    }
}

/* ---- EmbedLayerNormalization ---- */
static void test_embed_layer_norm(void) {
    const int64_t B = 2, S = 7, H = 16, V = 30, P = 16;
    int64_t bs[2] = { B, S }, wd[2] = { V, H }, pd[2] = { P, H }, sd[2] = { 2, H };
    for (int variant = 0; variant < 3; variant++) {   /* 0: full, 1: no segments/mask, 2: position_ids */
        cort_value *ids = tensor(CORT_TYPE_INT32, bs, 2), *seg = tensor(CORT_TYPE_INT32, bs, 2);
        cort_value *mask = tensor(CORT_TYPE_INT32, bs, 2), *pos = tensor(CORT_TYPE_INT32, bs, 2);
        if (!ids || !seg || !mask || !pos) return;
        int32_t *ip = cort_tensor_data(ids), *sp = cort_tensor_data(seg), *mp = cort_tensor_data(mask),
                *pp = cort_tensor_data(pos);
        for (int64_t i = 0; i < B * S; i++) {
            ip[i] = (int32_t)((i * 7 + 3) % V);
            sp[i] = (int32_t)(i % 3 == 0);
            mp[i] = !(i >= S && i % S >= 4);
            pp[i] = (int32_t)((S - 1 - i % S) + 2);
        }
        cort_value *we = frand_tensor(wd, 2, 1), *pe = frand_tensor(pd, 2, 1), *se = frand_tensor(sd, 2, 1);
        cort_value *g = frand_tensor(&H, 1, 1), *be = frand_tensor(&H, 1, 1);
        cort_value *in[9] = { ids, variant == 1 ? NULL : seg, we, pe, variant == 1 ? NULL : se, g, be,
                              variant == 1 ? NULL : mask, variant == 2 ? pos : NULL };
        cort_value *out[3] = { NULL };
        cort_attr_ir at[1] = { a_float("epsilon", 1e-5f) };
        CHECK_OK(run_op("com.microsoft", "EmbedLayerNormalization", 1, at, 1, in, 9, out, 3, NULL));
        float want[2 * 7 * 16], wsum[2 * 7 * 16];
        for (int64_t r = 0; r < B * S; r++) {
            double t[16], m, iv;
            int64_t p = variant == 2 ? pp[r] : r % S;
            for (int64_t i = 0; i < H; i++) {
                t[i] = (double)fdata(we)[ip[r] * H + i] + fdata(pe)[p * H + i] +
                       (variant == 1 ? 0.0 : fdata(se)[sp[r] * H + i]);
                wsum[r * H + i] = (float)t[i];
            }
            norm_ref(t, (size_t)H, 0, 1e-5, fdata(g), fdata(be), want + r * H, &m, &iv);
        }
        if (out[0] && out[1] && out[2]) {
            CHECK_CLOSE(fdata(out[0]), want, (size_t)(B * S * H), TOL, "EmbedLayerNormalization variant %d", variant);
            CHECK_CLOSE(fdata(out[2]), wsum, (size_t)(B * S * H), TOL, "embedding_sum variant %d", variant);
            const int32_t *mi = cort_tensor_data(out[1]);
            CHECK(mi[0] == (variant == 1 ? 0 : 7) && mi[1] == (variant == 1 ? 0 : 4));
        } else {
            CHECK(0);
        }
        release(out, 3);
        /* an id outside the table is an error naming the table */
        ip[3] = (int32_t)V;
        cort_value *out2[3] = { NULL };
        CHECK_ERR(run_op("com.microsoft", "EmbedLayerNormalization", 1, at, 1, in, 9, out2, 3, NULL),
                  CORT_ERROR_INVALID_ARGUMENT, "word_embedding");
        release(out2, 3);
        cort_value *vals[9] = { ids, seg, we, pe, se, g, be, mask, pos };
        release(vals, 9);
    }
}

/* ---- Attention: naive double loops ---- */
static void attention_ref(const float *x, const float *w, const float *bias, size_t B, size_t S, size_t Hin,
                          size_t N, size_t qh, size_t vh, const int32_t *mask, int mask_kind, const float *past,
                          size_t P, int causal, const float *abias, float scale, float *y, float *present) {
    const size_t W3 = 2 * qh + vh, h = qh / N, hv = vh / N, T = P + S;
    double *qkv = calloc(B * S * W3, sizeof *qkv);
    for (size_t r = 0; r < B * S; r++)
        for (size_t j = 0; j < W3; j++) {
            double s = bias ? bias[j] : 0;
            for (size_t k = 0; k < Hin; k++) s += (double)x[r * Hin + k] * w[k * W3 + j];
            qkv[r * W3 + j] = s;
        }
    for (size_t b = 0; b < B; b++)
        for (size_t n = 0; n < N; n++) {
            /* keys and values of this head over all T positions */
            double kk[64][16], vv[64][16];
            for (size_t t = 0; t < T; t++)
                for (size_t i = 0; i < h; i++) {
                    if (t < P) {
                        kk[t][i] = past[((b * N + n) * P + t) * h + i];
                        vv[t][i] = past[B * N * P * h + ((b * N + n) * P + t) * h + i];
                    } else {
                        kk[t][i] = qkv[(b * S + t - P) * W3 + qh + n * h + i];
                        if (i < hv) vv[t][i] = qkv[(b * S + t - P) * W3 + 2 * qh + n * hv + i];
                    }
                    if (present) {
                        present[((b * N + n) * T + t) * h + i] = (float)kk[t][i];
                        present[B * N * T * h + ((b * N + n) * T + t) * h + i] = (float)vv[t][i];
                    }
                }
            for (size_t s = 0; s < S; s++) {
                double sc[64], m = -INFINITY, sum = 0;
                for (size_t t = 0; t < T; t++) {
                    double d = 0;
                    for (size_t i = 0; i < h; i++) d += qkv[(b * S + s) * W3 + n * h + i] * kk[t][i];
                    d *= scale;
                    int keep = 1;
                    if (mask_kind == 1) keep = mask[b * T + t] != 0;
                    if (mask_kind == 2) keep = (int)t < mask[b];
                    if (mask_kind == 3) keep = mask[(b * S + s) * T + t] != 0;
                    if (!keep) d += -10000.0;
                    if (causal && t > P + s) d += -10000.0;
                    if (abias) d += abias[(n * S + s) * T + t];
                    sc[t] = d;
                    m = fmax(m, d);
                }
                for (size_t t = 0; t < T; t++) { sc[t] = exp(sc[t] - m); sum += sc[t]; }
                for (size_t i = 0; i < hv; i++) {
                    double o = 0;
                    for (size_t t = 0; t < T; t++) o += sc[t] / sum * vv[t][i];
                    y[(b * S + s) * vh + n * hv + i] = (float)o;
                }
            }
        }
    free(qkv);
}

static void test_attention(void) {
    struct { size_t B, S, Hin, N, qh, vh, P; int mask_kind, causal, with_abias; float scale; } cases[] = {
        { 2, 5, 16, 4, 16, 16, 0, 0, 0, 0, 0 },
        { 2, 5, 16, 4, 16, 16, 0, 1, 0, 0, 0 },
        { 2, 6, 12, 2, 16, 16, 0, 2, 0, 1, 0.3f },
        { 1, 7, 8, 2, 8, 8, 0, 3, 0, 0, 0 },
        { 2, 4, 16, 4, 16, 16, 3, 0, 1, 0, 0 },
        { 2, 3, 16, 2, 16, 8, 0, 1, 0, 0, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t B = cases[c].B, S = cases[c].S, Hin = cases[c].Hin, N = cases[c].N, qh = cases[c].qh,
                     vh = cases[c].vh, P = cases[c].P, T = P + S, W3 = 2 * qh + vh, h = qh / N;
        int64_t xd[3] = { (int64_t)B, (int64_t)S, (int64_t)Hin }, wd[2] = { (int64_t)Hin, (int64_t)W3 }, bd = (int64_t)W3;
        int64_t pd[5] = { 2, (int64_t)B, (int64_t)N, (int64_t)P, (int64_t)h };
        int64_t abd[4] = { 1, (int64_t)N, (int64_t)S, (int64_t)T };
        cort_value *x = frand_tensor(xd, 3, 1), *w = frand_tensor(wd, 2, 0.4f), *bias = frand_tensor(&bd, 1, 0.3f);
        cort_value *past = P ? frand_tensor(pd, 5, 1) : NULL, *ab = cases[c].with_abias ? frand_tensor(abd, 4, 1) : NULL;
        cort_value *mask = NULL;
        int64_t md[3] = { (int64_t)B, (int64_t)T, 0 };
        if (cases[c].mask_kind == 1) mask = tensor(CORT_TYPE_INT32, md, 2);
        if (cases[c].mask_kind == 2) mask = tensor(CORT_TYPE_INT32, md, 1);
        if (cases[c].mask_kind == 3) { md[1] = (int64_t)S; md[2] = (int64_t)T; mask = tensor(CORT_TYPE_INT32, md, 3); }
        if (mask) {
            int32_t *mp = cort_tensor_data(mask);
            for (size_t i = 0; i < count(mask); i++) mp[i] = cases[c].mask_kind == 2 ? (int32_t)(T - i) : (i * 5 + 1) % 4 != 0;
        }
        int64_t qkv_sizes[3] = { (int64_t)qh, (int64_t)qh, (int64_t)vh };
        cort_attr_ir at[4] = { a_int("num_heads", (int64_t)N), a_int("unidirectional", cases[c].causal),
                               a_ints("qkv_hidden_sizes", qkv_sizes, 3), a_float("scale", cases[c].scale) };
        size_t nat = cases[c].scale ? 4 : 3;
        cort_value *in[6] = { x, w, bias, mask, past, ab }, *out[2] = { NULL };
        const int want_present = P > 0;
        int want[2] = { 1, want_present };
        CHECK_OK(run_op("com.microsoft", "Attention", 1, at, nat, in, 6, out, 2, want));
        float *ref = malloc(B * S * vh * sizeof *ref), *pres = want_present ? malloc(2 * B * N * T * h * sizeof *pres) : NULL;
        attention_ref(fdata(x), fdata(w), fdata(bias), B, S, Hin, N, qh, vh, mask ? cort_tensor_data(mask) : NULL,
                      cases[c].mask_kind, past ? fdata(past) : NULL, P, cases[c].causal, ab ? fdata(ab) : NULL,
                      cases[c].scale ? cases[c].scale : 1.0f / sqrtf((float)h), ref, pres);
        if (out[0]) CHECK_CLOSE(fdata(out[0]), ref, B * S * vh, TOL, "Attention case %zu", c);
        else CHECK(0);
        if (want_present) {
            if (out[1]) CHECK_CLOSE(fdata(out[1]), pres, 2 * B * N * T * h, TOL, "Attention present case %zu", c);
            else CHECK(0);
        }
        free(ref);
        free(pres);
        release(out, 2);
        release(in, 6);
    }
    /* a mask of the wrong shape is refused, naming the input */
    int64_t xd[3] = { 2, 3, 8 }, wd[2] = { 8, 24 }, md = 3;
    cort_value *in[4] = { frand_tensor(xd, 3, 1), frand_tensor(wd, 2, 1), NULL, tensor(CORT_TYPE_INT32, &md, 1) };
    cort_attr_ir at[1] = { a_int("num_heads", 2) };
    cort_value *out[1] = { NULL };
    CHECK_ERR(run_op("com.microsoft", "Attention", 1, at, 1, in, 4, out, 1, NULL), CORT_ERROR_INVALID_ARGUMENT,
              "mask_index");
    release(out, 1);
    release(in, 4);
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    g_pool = pool;
    test_fused_conv();
    test_fused_gemm();
    test_fused_matmul();
    test_elementwise();
    test_skip_layer_norm();
    test_ln_family();
    test_trilu_bias_softmax();
    test_embed_layer_norm();
    test_attention();
    cort_pool_free(pool);
    return tu_finish();
}
