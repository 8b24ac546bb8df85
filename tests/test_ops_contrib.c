/* The com.microsoft ops (src/providers/cpu/ops/contrib/): each run as a hand-assembled node on
 * several shapes and compared with an independent reference: plain double-precision loops written
 * here from the ops' definitions, or for FusedConv / FusedGemm cort's ai.onnx Conv / Gemm with the
 * activation applied here; and a block as ONNX Runtime saves it (tests/models/contrib_fused_block.onnx)
 * at levels 0 and 2, where FusedConv is lowered to Conv. ONNX Runtime itself is the reference of bench/make_contrib_cases.py. */
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

/* an activation parameter the node omits takes the activation's own default (HardSigmoid alpha 0.2) */
static void test_fused_gemm_defaults(void) {
    int64_t as[2] = { 3, 5 }, bs[2] = { 5, 4 };
    cort_value *in[2] = { frand_tensor(as, 2, 2), frand_tensor(bs, 2, 2) }, *ref[1] = { NULL }, *out[1] = { NULL };
    CHECK_OK(run_op("", "Gemm", 13, NULL, 0, in, 2, ref, 1, NULL));
    cort_attr_ir at[2] = { a_str("activation", "HardSigmoid"), a_float("activation_beta", 0.4f) };
    CHECK_OK(run_op("com.microsoft", "FusedGemm", 1, at, 2, in, 2, out, 1, NULL));
    if (ref[0] && out[0]) {
        float want[12], p[2] = { 0.2f, 0.4f };
        for (size_t i = 0; i < 12; i++) want[i] = (float)act_ref("HardSigmoid", p, fdata(ref[0])[i]);
        CHECK_CLOSE(fdata(out[0]), want, 12, TOL, "FusedGemm HardSigmoid with the default alpha");
    } else {
        CHECK(0);
    }
    release(out, 1);
    release(ref, 1);
    release(in, 2);
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


/* Attention's mask_index forms for the tests: 1 raw 0/1 (B, T), 2 key end positions (B), 3 raw
 * (B, S, T); 0 none. */
static cort_value *att_test_mask(int kind, size_t B, size_t S, size_t T) {
    int64_t md[3] = { (int64_t)B, (int64_t)T, 0 };
    cort_value *mask = NULL;
    if (kind == 1) mask = tensor(CORT_TYPE_INT32, md, 2);
    if (kind == 2) mask = tensor(CORT_TYPE_INT32, md, 1);
    if (kind == 3) { md[1] = (int64_t)S; md[2] = (int64_t)T; mask = tensor(CORT_TYPE_INT32, md, 3); }
    if (mask) {
        int32_t *mp = cort_tensor_data(mask);
        for (size_t i = 0; i < count(mask); i++) mp[i] = kind == 2 ? (int32_t)(T - i) : (i * 5 + 1) % 4 != 0;
    }
    return mask;
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
        cort_value *mask = att_test_mask(cases[c].mask_kind, B, S, T);
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

/* ---- quantized ops: exact integer / double references ---- */
static cort_value *q_tensor(cort_type t, const int64_t *shape, size_t rank, int lo, int hi) {
    cort_value *v = tensor(t, shape, rank);
    if (!v) return NULL;
    for (size_t i = 0; i < count(v); i++) {
        rng_state = rng_state * 1664525u + 1013904223u;
        int q = lo + (int)((rng_state >> 8) % (uint32_t)(hi - lo + 1));
        if (t == CORT_TYPE_UINT8) ((uint8_t *)cort_tensor_data(v))[i] = (uint8_t)q;
        else if (t == CORT_TYPE_INT8) ((int8_t *)cort_tensor_data(v))[i] = (int8_t)q;
        else ((int32_t *)cort_tensor_data(v))[i] = q;
    }
    return v;
}
static cort_value *scalar_f(float f) {
    cort_value *v = tensor(CORT_TYPE_FLOAT, NULL, 0);
    if (v) *fdata(v) = f;
    return v;
}
static cort_value *scalar_q(cort_type t, int q) {
    cort_value *v = tensor(t, NULL, 0);
    if (!v) return NULL;
    if (t == CORT_TYPE_UINT8) *(uint8_t *)cort_tensor_data(v) = (uint8_t)q;
    else *(int8_t *)cort_tensor_data(v) = (int8_t)q;
    return v;
}
static int qget(const cort_value *v, size_t i) {
    if (cort_tensor_type(v) == CORT_TYPE_UINT8) return ((const uint8_t *)cort_tensor_data((cort_value *)v))[i];
    if (cort_tensor_type(v) == CORT_TYPE_INT8) return ((const int8_t *)cort_tensor_data((cort_value *)v))[i];
    return ((const int32_t *)cort_tensor_data((cort_value *)v))[i];
}
static int qsat(double v, int lo, int hi) {
    double r = nearbyint(v);
    return r < lo ? lo : r > hi ? hi : (int)r;
}

/* QAttention against the double reference on the dequantized input and weight: uint8 input, int8 and uint8
 * weights, per-tensor and per-column scales and zero points, masks, past, causal. */
static void test_qattention(void) {
    struct { size_t B, S, Hin, N, P; int mask_kind, causal, w_signed, per_col; } cases[] = {
        { 2, 5, 16, 4, 0, 0, 0, 1, 0 }, { 2, 5, 24, 2, 0, 1, 0, 0, 1 }, { 1, 7, 8, 2, 0, 2, 1, 1, 1 },
        { 2, 4, 16, 4, 3, 0, 1, 0, 0 }, { 2, 6, 40, 4, 0, 3, 0, 1, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t B = cases[c].B, S = cases[c].S, Hin = cases[c].Hin, N = cases[c].N, qh = 16, P = cases[c].P,
                     T = P + S, W3 = 3 * qh, h = qh / N;
        const cort_type wt = cases[c].w_signed ? CORT_TYPE_INT8 : CORT_TYPE_UINT8;
        int64_t xd[3] = { (int64_t)B, (int64_t)S, (int64_t)Hin }, wd[2] = { (int64_t)Hin, (int64_t)W3 }, bd = (int64_t)W3;
        int64_t pd[5] = { 2, (int64_t)B, (int64_t)N, (int64_t)P, (int64_t)h };
        cort_value *x = q_tensor(CORT_TYPE_UINT8, xd, 3, 0, 255);
        cort_value *w = cases[c].w_signed ? q_tensor(wt, wd, 2, -128, 127) : q_tensor(wt, wd, 2, 0, 255);
        cort_value *bias = frand_tensor(&bd, 1, 0.3f), *xs = scalar_f(0.011f), *xz = scalar_q(CORT_TYPE_UINT8, 121);
        cort_value *ws = cases[c].per_col ? frand_tensor(&bd, 1, 0.004f) : scalar_f(0.0037f), *wz;
        if (cases[c].per_col) {
            for (size_t j = 0; j < W3; j++) fdata(ws)[j] = fabsf(fdata(ws)[j]) + 0.001f;
            wz = cases[c].w_signed ? q_tensor(wt, &bd, 1, -4, 4) : q_tensor(wt, &bd, 1, 120, 136);
        } else {
            wz = scalar_q(wt, cases[c].w_signed ? 3 : 130);
        }
        cort_value *past = P ? frand_tensor(pd, 5, 1) : NULL, *mask = att_test_mask(cases[c].mask_kind, B, S, T);
        float *xf = malloc(B * S * Hin * sizeof *xf), *wf = malloc(Hin * W3 * sizeof *wf);
        for (size_t i = 0; i < B * S * Hin; i++) xf[i] = (float)(qget(x, i) - 121) * 0.011f;
        for (size_t k = 0; k < Hin; k++)
            for (size_t j = 0; j < W3; j++)
                wf[k * W3 + j] = (float)(qget(w, k * W3 + j) - qget(wz, cases[c].per_col ? j : 0)) *
                                 fdata(ws)[cases[c].per_col ? j : 0];
        cort_attr_ir at[2] = { a_int("num_heads", (int64_t)N), a_int("unidirectional", cases[c].causal) };
        cort_value *in[9] = { x, w, bias, xs, ws, mask, xz, wz, past }, *out[2] = { NULL };
        int want[2] = { 1, P > 0 };
        CHECK_OK(run_op("com.microsoft", "QAttention", 1, at, 2, in, 9, out, 2, want));
        float *ref = malloc(B * S * qh * sizeof *ref), *pres = P ? malloc(2 * B * N * T * h * sizeof *pres) : NULL;
        attention_ref(xf, wf, fdata(bias), B, S, Hin, N, qh, qh, mask ? cort_tensor_data(mask) : NULL,
                      cases[c].mask_kind, past ? fdata(past) : NULL, P, cases[c].causal, NULL, 1.0f / sqrtf((float)h),
                      ref, pres);
        if (out[0]) CHECK_CLOSE(fdata(out[0]), ref, B * S * qh, TOL, "QAttention case %zu", c);
        else CHECK(0);
        if (P) {
            if (out[1]) CHECK_CLOSE(fdata(out[1]), pres, 2 * B * N * T * h, TOL, "QAttention present case %zu", c);
            else CHECK(0);
        }
        free(xf); free(wf); free(ref); free(pres);
        release(out, 2);
        release(in, 9);
    }
    /* a weight scale that is neither per tensor nor per column is refused, naming the input */
    int64_t xd[3] = { 1, 2, 8 }, wd[2] = { 8, 12 }, sd = 5;
    cort_value *in[5] = { q_tensor(CORT_TYPE_UINT8, xd, 3, 0, 255), q_tensor(CORT_TYPE_INT8, wd, 2, -128, 127), NULL,
                          scalar_f(0.1f), frand_tensor(&sd, 1, 1) };
    cort_attr_ir at[1] = { a_int("num_heads", 2) };
    cort_value *out[1] = { NULL };
    CHECK_ERR(run_op("com.microsoft", "QAttention", 1, at, 1, in, 5, out, 1, NULL), CORT_ERROR_INVALID_ARGUMENT,
              "weight_scale");
    release(out, 1);
    release(in, 5);
}

static void test_quant_matmul(void) {
    /* full-range int8 weights: exact where a 16-bit pair-sum kernel would saturate */
    const int64_t M = 6, K = 40, N = 9;
    int64_t ad[3] = { 2, M / 2, K }, bd[2] = { K, N }, nd = N;
    for (int variant = 0; variant < 2; variant++) {
        cort_value *a = q_tensor(CORT_TYPE_UINT8, ad, 3, 0, 255), *b = q_tensor(CORT_TYPE_INT8, bd, 2, -128, 127);
        cort_value *as = scalar_f(0.02f), *bs = frand_tensor(&nd, 1, 0.01f), *az = scalar_q(CORT_TYPE_UINT8, 131);
        cort_value *bz = variant ? q_tensor(CORT_TYPE_INT8, &nd, 1, -3, 3) : NULL, *bias = frand_tensor(&nd, 1, 1.0f);
        cort_value *in[7] = { a, b, as, bs, az, bz, bias }, *out[1] = { NULL };
        CHECK_OK(run_op("com.microsoft", "MatMulIntegerToFloat", 1, NULL, 0, in, 7, out, 1, NULL));
        float want[6 * 9];
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t acc = 0;
                for (int64_t k = 0; k < K; k++)
                    acc += (int64_t)(qget(a, (size_t)(m * K + k)) - 131) * (qget(b, (size_t)(k * N + n)) - (bz ? qget(bz, (size_t)n) : 0));
                want[m * N + n] = (float)((double)acc * 0.02f * fdata(bs)[n] + fdata(bias)[n]);
            }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, (size_t)(M * N), TOL, "MatMulIntegerToFloat variant %d", variant);
        else CHECK(0);
        release(out, 1);
        /* DynamicQuantizeMatMul: A float, quantized as DynamicQuantizeLinear */
        cort_value *af = frand_tensor(ad, 3, 3.0f), *in2[5] = { af, b, bs, bz, bias };
        CHECK_OK(run_op("com.microsoft", "DynamicQuantizeMatMul", 1, NULL, 0, in2, 5, out, 1, NULL));
        double lo = 0, hi = 0;
        for (size_t i = 0; i < count(af); i++) { lo = fmin(lo, fdata(af)[i]); hi = fmax(hi, fdata(af)[i]); }
        const float sc = (float)((float)hi - (float)lo) / 255.0f;
        const int zp = qsat(-lo / sc, 0, 255);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t acc = 0;
                for (int64_t k = 0; k < K; k++) {
                    int q = qsat(fdata(af)[m * K + k] / sc + zp, 0, 255);
                    acc += (int64_t)(q - zp) * (qget(b, (size_t)(k * N + n)) - (bz ? qget(bz, (size_t)n) : 0));
                }
                want[m * N + n] = (float)((double)acc * sc * fdata(bs)[n] + fdata(bias)[n]);
            }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, (size_t)(M * N), TOL, "DynamicQuantizeMatMul variant %d", variant);
        else CHECK(0);
        release(out, 1);
        cort_value_release(af);
        release(in, 7);
    }
    /* QGemm, float and quantized output, transposes, int32 C per column; variant 3: int8 output and
     * C [M, N]; variant 4: uint8 output and one C for all ([1]) */
    for (int variant = 0; variant < 5; variant++) {
        const int ta = variant == 1, tb = variant != 0, quant = variant >= 2;
        int64_t a2[2] = { ta ? K : M, ta ? M : K }, b2[2] = { tb ? N : K, tb ? K : N };
        cort_value *a = q_tensor(CORT_TYPE_UINT8, a2, 2, 0, 255), *b = q_tensor(CORT_TYPE_INT8, b2, 2, -128, 127);
        int64_t cmn[2] = { M, N }, one = 1;
        cort_value *c = variant == 3 ? q_tensor(CORT_TYPE_INT32, cmn, 2, -3000, 3000)
                      : variant == 4 ? q_tensor(CORT_TYPE_INT32, &one, 1, -3000, 3000)
                                     : q_tensor(CORT_TYPE_INT32, &nd, 1, -3000, 3000);
        const int yzp = variant == 3 ? -5 : variant == 4 ? 7 : 100, ylo = variant == 3 ? -128 : 0;
        const float ysf = variant == 4 ? 0.25f : 0.5f;
        cort_value *ys = quant ? scalar_f(ysf) : NULL;
        cort_value *yz = quant ? scalar_q(variant == 3 ? CORT_TYPE_INT8 : CORT_TYPE_UINT8, yzp) : NULL;
        cort_value *bs = variant == 1 ? frand_tensor(&nd, 1, 0.01f) : scalar_f(0.004f);
        cort_value *in[9] = { a, scalar_f(0.03f), scalar_q(CORT_TYPE_UINT8, 128), b, bs, scalar_q(CORT_TYPE_INT8, 2), c, ys, yz };
        cort_attr_ir at[3] = { a_int("transA", ta), a_int("transB", tb), a_float("alpha", 0.75f) };
        cort_value *out[1] = { NULL };
        CHECK_OK(run_op("com.microsoft", "QGemm", 1, at, 3, in, 9, out, 1, NULL));
        float want[6 * 9], got[6 * 9];
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                int64_t acc = qget(c, (size_t)(variant == 3 ? m * N + n : variant == 4 ? 0 : n));
                for (int64_t k = 0; k < K; k++)
                    acc += (int64_t)(qget(a, (size_t)(ta ? k * M + m : m * K + k)) - 128) *
                           (qget(b, (size_t)(tb ? n * K + k : k * N + n)) - 2);
                double v = (double)acc * 0.75 * 0.03f * fdata(bs)[variant == 1 ? n : 0];
                want[m * N + n] = quant ? (float)qsat(v / ysf + yzp, ylo, ylo + 255) : (float)v;
                if (out[0]) got[m * N + n] = quant ? (float)qget(out[0], (size_t)(m * N + n)) : fdata(out[0])[m * N + n];
            }
        if (out[0]) {
            if (quant) {   /* quantized: the exact value's rounding, a tie at most one step away */
                float worst = 0;
                for (int64_t i = 0; i < M * N; i++) worst = fmaxf(worst, fabsf(got[i] - want[i]));
                CHECK_MSG(worst <= 1.0f, "QGemm quantized output off by %g steps", worst);
            }
            else CHECK_CLOSE(got, want, (size_t)(M * N), TOL, "QGemm variant %d", variant);
        } else {
            CHECK(0);
        }
        release(out, 1);
        release(in, 9);
    }
}

static void test_matmul_nbits(void) {
    struct { int64_t K, N, bits, block; int zp, gidx, bias; int64_t M; } cases[] = {
        { 64, 12, 4, 32, 1, 0, 0, 4 }, { 64, 12, 4, 32, 0, 0, 1, 4 }, { 96, 5, 4, 32, 1, 1, 0, 4 },
        { 48, 7, 8, 16, 1, 0, 1, 4 },
        { 50, 3, 4, 16, 1, 0, 0, 4 },    /* K not a multiple of the block */
        { 200, 37, 4, 64, 1, 0, 1, 1 },  /* the 4-bit GEMV kernel ... */
        { 200, 37, 4, 64, 0, 0, 1, 40 }, /* ... and the SGEMM on dequantized panels */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t K = cases[c].K, N = cases[c].N, bits = cases[c].bits, bsz = cases[c].block;
        const int64_t blocks = (K + bsz - 1) / bsz, blob = bsz * bits / 8, zbytes = (blocks * bits + 7) / 8;
        const int64_t M = cases[c].M;
        int64_t bd[3] = { N, blocks, blob }, sd = N * blocks, zd = N * zbytes, ad[2] = { M, K };
        cort_value *a = frand_tensor(ad, 2, 1), *b = q_tensor(CORT_TYPE_UINT8, bd, 3, 0, 255);
        cort_value *sc = frand_tensor(&sd, 1, 0.05f), *zp = cases[c].zp ? q_tensor(CORT_TYPE_UINT8, &zd, 1, 0, 255) : NULL;
        cort_value *g = NULL, *bias = cases[c].bias ? frand_tensor(&N, 1, 1) : NULL;
        if (cases[c].gidx) {
            g = tensor(CORT_TYPE_INT32, &K, 1);
            for (int64_t k = 0; k < K; k++) ((int32_t *)cort_tensor_data(g))[k] = (int32_t)((k * 7) % blocks);
        }
        cort_attr_ir at[4] = { a_int("K", K), a_int("N", N), a_int("bits", bits), a_int("block_size", bsz) };
        cort_value *in[6] = { a, b, sc, zp, g, bias }, *out[1] = { NULL };
        CHECK_OK(run_op("com.microsoft", "MatMulNBits", 1, at, 4, in, 6, out, 1, NULL));
        const uint8_t *bp = cort_tensor_data(b), *zpp = zp ? cort_tensor_data(zp) : NULL;
        float *want = malloc((size_t)(M * N) * sizeof *want);
        const int64_t per = 8 / bits, mask = (1 << bits) - 1;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = bias ? fdata(bias)[n] : 0;
                for (int64_t k = 0; k < K; k++) {
                    int64_t kb = k / bsz, j = k % bsz, gg = g ? ((int32_t *)cort_tensor_data(g))[k] : kb;
                    int64_t q = (bp[(n * blocks + kb) * blob + j / per] >> ((j % per) * bits)) & mask;
                    int64_t z = zpp ? (zpp[n * zbytes + gg / per] >> ((gg % per) * bits)) & mask : 1 << (bits - 1);
                    s += (double)fdata(a)[m * K + k] * (double)(q - z) * fdata(sc)[n * blocks + gg];
                }
                want[m * N + n] = (float)s;
            }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, (size_t)(M * N), TOL, "MatMulNBits case %zu", c);
        else CHECK(0);
        free(want);
        release(out, 1);
        release(in, 6);
    }
}

static void test_qlinear(void) {
    int64_t xd[3] = { 2, 3, 8 }, bd1 = 8, pd[4] = { 2, 4, 5, 5 }, nhwc[4] = { 2, 5, 5, 4 };
    for (int ti = 0; ti < 2; ti++) {
        const cort_type t = ti ? CORT_TYPE_INT8 : CORT_TYPE_UINT8;
        const int lo = ti ? -128 : 0, hi = ti ? 127 : 255, z0 = ti ? -5 : 120;
        /* Add / Mul with broadcasting */
        for (int mul = 0; mul < 2; mul++) {
            cort_value *a = q_tensor(t, xd, 3, lo, hi), *b = q_tensor(t, &bd1, 1, lo, hi);
            cort_value *in[8] = { a, scalar_f(0.03f), scalar_q(t, z0), b, scalar_f(0.02f), scalar_q(t, z0 + 3),
                                  scalar_f(mul ? 0.01f : 0.04f), scalar_q(t, ti ? 0 : 128) }, *out[1] = { NULL };
            CHECK_OK(run_op("com.microsoft", mul ? "QLinearMul" : "QLinearAdd", 1, NULL, 0, in, 8, out, 1, NULL));
            int bad = 0;
            for (size_t i = 0; out[0] && i < 48; i++) {
                double va = (qget(a, i) - z0) * (double)0.03f, vb = (qget(b, i % 8) - z0 - 3) * (double)0.02f;
                int want = qsat((mul ? va * vb : va + vb) / (mul ? (double)0.01f : (double)0.04f) + (ti ? 0 : 128), lo, hi);
                bad += qget(out[0], i) != want;
            }
            CHECK_MSG(out[0] && !bad, "QLinear%s type %d: %d elements differ", mul ? "Mul" : "Add", ti, bad);
            release(out, 1);
            release(in, 8);
        }
        /* the flat threaded path: same shapes (more elements than one chunk) and a one-element side,
         * with scales that push some results past the type's range */
        int sat_cases = 0;
        for (int shape = 0; shape < 3; shape++)
            for (int mul = 0; mul < 2; mul++) {
                int64_t big[3] = { 3, 111, 103 }, one = 1;
                cort_value *a = shape == 2 ? q_tensor(t, &one, 1, lo, hi) : q_tensor(t, big, 3, lo, hi);
                cort_value *b = shape == 1 ? q_tensor(t, &one, 1, lo, hi) : q_tensor(t, big, 3, lo, hi);
                const float sa = 0.037f, sb = 0.011f, sy = mul ? 0.013f : 0.021f;
                const int za = z0 + 7, zb = ti ? 3 : 250, zy = ti ? 5 : 100;
                cort_value *in[8] = { a, scalar_f(sa), scalar_q(t, za), b, scalar_f(sb), scalar_q(t, zb), scalar_f(sy),
                                      scalar_q(t, zy) }, *out[1] = { NULL };
                CHECK_OK(run_op("com.microsoft", mul ? "QLinearMul" : "QLinearAdd", 1, NULL, 0, in, 8, out, 1, NULL));
                const size_t n = 3 * 111 * 103;
                int bad = 0, sat = 0;
                for (size_t i = 0; out[0] && i < n; i++) {
                    double va = (qget(a, shape == 2 ? 0 : i) - za) * (double)sa, vb = (qget(b, shape == 1 ? 0 : i) - zb) * (double)sb;
                    int want = qsat((mul ? va * vb : va + vb) / (double)sy + zy, lo, hi);
                    bad += qget(out[0], i) != want;
                    sat += want == lo || want == hi;
                }
                CHECK_MSG(out[0] && !bad, "QLinear%s type %d shape case %d: %d of %zu elements differ (%d saturated)",
                          mul ? "Mul" : "Add", ti, shape, bad, n, sat);
                sat_cases += sat > 0 && (size_t)sat < n;
                release(out, 1);
                release(in, 8);
            }
        CHECK_MSG(sat_cases >= 3, "type %d: only %d of 6 QLinearAdd/Mul cases saturate some outputs", ti, sat_cases);
        /* Sigmoid, LeakyRelu, Softmax: exact dequantize, the function in double, quantize */
        const char *ops[] = { "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax" };
        for (int o = 0; o < 3; o++) {
            cort_value *x = q_tensor(t, xd, 3, lo, hi);
            const float ys = o == 1 ? 0.03f : 1.0f / 256.0f;
            const int yz = o == 1 ? z0 : (ti ? -128 : 0);
            cort_value *in[5] = { x, scalar_f(0.05f), scalar_q(t, z0), scalar_f(ys), scalar_q(t, yz) }, *out[1] = { NULL };
            cort_attr_ir at[3] = { a_float("alpha", 0.1f), a_int("axis", -1), a_int("opset", 13) };
            CHECK_OK(run_op("com.microsoft", ops[o], 1, at, 3, in, 5, out, 1, NULL));
            int worst = 0;
            for (size_t r = 0; out[0] && r < 6; r++) {
                double sum = 0, mx = -1e30;
                for (size_t i = 0; i < 8; i++) mx = fmax(mx, (qget(x, r * 8 + i) - z0) * (double)0.05f);
                for (size_t i = 0; i < 8; i++) sum += exp((qget(x, r * 8 + i) - z0) * (double)0.05f - mx);
                for (size_t i = 0; i < 8; i++) {
                    double v = (qget(x, r * 8 + i) - z0) * (double)0.05f;
                    double f = o == 0 ? 1.0 / (1.0 + exp(-v)) : o == 1 ? (v >= 0 ? v : 0.1 * v) : exp(v - mx) / sum;
                    int d = abs(qget(out[0], r * 8 + i) - qsat(f / ys + yz, lo, hi));
                    worst = d > worst ? d : worst;
                }
            }
            /* the float kernels round once more than the double reference: a tie may move one step */
            CHECK_MSG(out[0] && worst <= 1, "%s type %d: off by %d", ops[o], ti, worst);
            release(out, 1);
            release(in, 5);
        }
        /* GlobalAveragePool, NCHW and NHWC */
        for (int cl = 0; cl < 2; cl++) {
            cort_value *x = q_tensor(t, cl ? nhwc : pd, 4, lo, hi);
            cort_value *in[5] = { x, scalar_f(0.05f), scalar_q(t, z0), scalar_f(0.02f), scalar_q(t, 3) }, *out[1] = { NULL };
            cort_attr_ir at[1] = { a_int("channels_last", cl) };
            CHECK_OK(run_op("com.microsoft", "QLinearGlobalAveragePool", 1, at, 1, in, 5, out, 1, NULL));
            int worst = 0;
            for (size_t n = 0; out[0] && n < 2; n++)
                for (size_t c = 0; c < 4; c++) {
                    double s = 0;
                    for (size_t p = 0; p < 25; p++) s += (qget(x, cl ? (n * 25 + p) * 4 + c : (n * 4 + c) * 25 + p) - z0) * (double)0.05f;
                    int d = abs(qget(out[0], n * 4 + c) - qsat(s / 25 / (double)0.02f + 3, lo, hi));
                    worst = d > worst ? d : worst;
                }
            /* integer sums and one double expression in the reference's order: no step of difference */
            CHECK_MSG(out[0] && worst == 0 && cort_tensor_shape(out[0])[cl ? 3 : 1] == 4,
                      "QLinearGlobalAveragePool channels_last %d type %d: off by %d", cl, ti, worst);
            release(out, 1);
            release(in, 5);
        }
        /* GlobalAveragePool over planes of 1601 bytes (the byte sum's 16-bit lanes flushed every 1024
         * bytes): channel 0 all at the type's top, 1 all at its bottom, 2 random */
        {
            int64_t big[4] = { 1, 3, 1, 1601 };
            cort_value *x = q_tensor(t, big, 4, lo, hi);
            for (size_t p = 0; x && p < 1601; p++) {
                if (t == CORT_TYPE_UINT8) { ((uint8_t *)cort_tensor_data(x))[p] = 255; ((uint8_t *)cort_tensor_data(x))[1601 + p] = 0; }
                else { ((int8_t *)cort_tensor_data(x))[p] = 127; ((int8_t *)cort_tensor_data(x))[1601 + p] = -128; }
            }
            cort_value *in[5] = { x, scalar_f(0.05f), scalar_q(t, z0), scalar_f(0.07f), scalar_q(t, 9) }, *out[1] = { NULL };
            CHECK_OK(run_op("com.microsoft", "QLinearGlobalAveragePool", 1, NULL, 0, in, 5, out, 1, NULL));
            int worst = 0;
            for (size_t c = 0; out[0] && c < 3; c++) {
                long long s = 0;
                for (size_t p = 0; p < 1601; p++) s += qget(x, c * 1601 + p) - z0;
                int d = abs(qget(out[0], c) - qsat((double)s * (double)0.05f / 1601 / (double)0.07f + 9, lo, hi));
                worst = d > worst ? d : worst;
            }
            CHECK_MSG(out[0] && worst == 0, "QLinearGlobalAveragePool 1601-byte planes type %d: off by %d", ti, worst);
            release(out, 1);
            release(in, 5);
        }
        /* Concat: each input requantized to the output's parameters */
        int64_t c1[3] = { 2, 3, 4 }, c2[3] = { 2, 5, 4 };
        cort_value *x1 = q_tensor(t, c1, 3, lo, hi), *x2 = q_tensor(t, c2, 3, lo, hi);
        cort_value *in[8] = { scalar_f(0.05f), scalar_q(t, z0), x1, scalar_f(0.03f), scalar_q(t, 0), x2, scalar_f(0.06f),
                              scalar_q(t, 10) }, *out[1] = { NULL };
        cort_attr_ir at[1] = { a_int("axis", 1) };
        CHECK_OK(run_op("com.microsoft", "QLinearConcat", 1, at, 1, in, 8, out, 1, NULL));
        int bad = 0;
        for (size_t n = 0; out[0] && n < 2; n++)
            for (size_t r = 0; r < 8; r++)
                for (size_t k = 0; k < 4; k++) {
                    double v = r < 3 ? qget(x1, (n * 3 + r) * 4 + k) * (double)0.03f
                                     : (qget(x2, (n * 5 + r - 3) * 4 + k) - 10) * (double)0.06f;
                    bad += abs(qget(out[0], (n * 8 + r) * 4 + k) - qsat(v / (double)0.05f + z0, lo, hi)) > 1;
                }
        CHECK_MSG(out[0] && !bad, "QLinearConcat type %d: %d elements off", ti, bad);
        release(out, 1);
        release(in, 8);
        /* big inputs, one quantized like the output (copied byte for byte): along the channels of a
         * batch of 1 (long runs split into chunks) and along the last axis (many short rows) */
        for (int ax = 1; ax <= 3; ax += 2) {
            int64_t b1[4] = { 1, 40, 50, 40 }, b2[4] = { 1, 24, 50, 40 };
            if (ax == 3) { b1[1] = b2[1] = 40; b1[3] = 7; b2[3] = 5; }
            cort_value *y1 = q_tensor(t, b1, 4, lo, hi), *y2 = q_tensor(t, b2, 4, lo, hi);
            cort_value *bin[8] = { scalar_f(0.05f), scalar_q(t, z0), y1, scalar_f(0.05f), scalar_q(t, z0), y2,
                                   scalar_f(0.07f), scalar_q(t, 4) }, *bout[1] = { NULL };
            cort_attr_ir bat[1] = { a_int("axis", ax) };
            CHECK_OK(run_op("com.microsoft", "QLinearConcat", 1, bat, 1, bin, 8, bout, 1, NULL));
            const size_t outer = ax == 1 ? 1 : 40 * 50, l1 = ax == 1 ? 40 * 2000 : 7, l2 = ax == 1 ? 24 * 2000 : 5;
            int copied = 0, off = 0;
            for (size_t o = 0; bout[0] && o < outer; o++)
                for (size_t i = 0; i < l1 + l2; i++) {
                    const int got = qget(bout[0], o * (l1 + l2) + i);
                    if (i < l1) copied += got != qget(y1, o * l1 + i);
                    else off += abs(got - qsat((qget(y2, o * l2 + i - l1) - 4) * (double)0.07f / (double)0.05f + z0,
                                                lo, hi)) > 1;
                }
            CHECK_MSG(bout[0] && !copied && !off, "QLinearConcat axis %d type %d: %d copied and %d requantized "
                      "elements off", ax, ti, copied, off);
            release(bout, 1);
            release(bin, 8);
        }
    }
    /* per-channel scales are refused with a message naming the input */
    int64_t three = 3;
    cort_value *in[5] = { q_tensor(CORT_TYPE_UINT8, xd, 3, 0, 255), frand_tensor(&three, 1, 1), NULL, scalar_f(0.1f), NULL };
    cort_value *out[1] = { NULL };
    CHECK_ERR(run_op("com.microsoft", "QLinearSigmoid", 1, NULL, 0, in, 5, out, 1, NULL), CORT_ERROR_INVALID_ARGUMENT,
              "per-tensor");
    release(out, 1);
    release(in, 5);
}

static void test_rotary(void) {
    const int64_t B = 2, S = 5, NH = 3, H = 8, P = 16;
    int64_t cd[2] = { P, H / 2 }, pd[2] = { B, S };
    cort_value *cc = tensor(CORT_TYPE_FLOAT, cd, 2), *sc = tensor(CORT_TYPE_FLOAT, cd, 2), *pos = tensor(CORT_TYPE_INT64, pd, 2);
    if (!cc || !sc || !pos) return;
    for (int64_t p = 0; p < P; p++)
        for (int64_t i = 0; i < H / 2; i++) {
            double ang = (double)p / pow(10000.0, 2.0 * (double)i / (double)H);
            fdata(cc)[p * H / 2 + i] = (float)cos(ang);
            fdata(sc)[p * H / 2 + i] = (float)sin(ang);
        }
    for (int64_t i = 0; i < B * S; i++) ((int64_t *)cort_tensor_data(pos))[i] = (i * 3) % (P - 1);
    for (int variant = 0; variant < 3; variant++) {   /* 3-D, 4-D interleaved, 3-D with one offset */
        const int four = variant == 1, inter = variant == 1;
        int64_t xd3[3] = { B, S, NH * H }, xd4[4] = { B, NH, S, H }, one = 1;
        cort_value *x = four ? frand_tensor(xd4, 4, 1) : frand_tensor(xd3, 3, 1);
        cort_value *p1 = NULL;
        if (variant == 2) { p1 = tensor(CORT_TYPE_INT64, &one, 1); if (p1) *(int64_t *)cort_tensor_data(p1) = 3; }
        cort_value *in[4] = { x, p1 ? p1 : pos, cc, sc }, *out[1] = { NULL };
        cort_attr_ir at[2] = { a_int("num_heads", NH), a_int("interleaved", inter) };
        CHECK_OK(run_op("com.microsoft", "RotaryEmbedding", 1, at, 2, in, 4, out, 1, NULL));
        float want[2 * 5 * 24];
        for (int64_t b = 0; b < B; b++)
            for (int64_t s = 0; s < S; s++)
                for (int64_t h = 0; h < NH; h++) {
                    int64_t off = four ? ((b * NH + h) * S + s) * H : (b * S + s) * NH * H + h * H;
                    int64_t p = p1 ? 3 + s : ((int64_t *)cort_tensor_data(pos))[b * S + s];
                    for (int64_t i = 0; i < H / 2; i++) {
                        int64_t i1 = inter ? 2 * i : i, i2 = inter ? 2 * i + 1 : i + H / 2;
                        double ang = (double)p / pow(10000.0, 2.0 * (double)i / (double)H);
                        double x1 = fdata(x)[off + i1], x2 = fdata(x)[off + i2];
                        want[off + i1] = (float)(x1 * cos(ang) - x2 * sin(ang));
                        want[off + i2] = (float)(x2 * cos(ang) + x1 * sin(ang));
                    }
                }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, (size_t)(B * S * NH * H), TOL, "RotaryEmbedding variant %d", variant);
        else CHECK(0);
        release(out, 1);
        cort_value_release(x);
        cort_value_release(p1);
    }
    cort_value *vals[3] = { cc, sc, pos };
    release(vals, 3);
}

static void test_qdq_grid(void) {
    /* com.microsoft QuantizeLinear / DequantizeLinear with an axis */
    int64_t xd[3] = { 2, 3, 4 }, three = 3;
    cort_value *x = frand_tensor(xd, 3, 4), *s = tensor(CORT_TYPE_FLOAT, &three, 1), *z = tensor(CORT_TYPE_UINT8, &three, 1);
    if (!x || !s || !z) return;
    const float sv[3] = { 0.02f, 0.05f, 0.1f };
    const uint8_t zv[3] = { 3, 128, 250 };
    memcpy(fdata(s), sv, sizeof sv);
    memcpy(cort_tensor_data(z), zv, sizeof zv);
    cort_value *in[3] = { x, s, z }, *out[1] = { NULL }, *back[1] = { NULL };
    cort_attr_ir at[1] = { a_int("axis", 1) };
    CHECK_OK(run_op("com.microsoft", "QuantizeLinear", 1, at, 1, in, 3, out, 1, NULL));
    int bad = 0;
    for (size_t i = 0; out[0] && i < 24; i++) {
        size_t c = i / 4 % 3;
        bad += qget(out[0], i) != qsat((double)fdata(x)[i] / sv[c] + zv[c], 0, 255);
    }
    CHECK_MSG(out[0] && !bad, "com.microsoft.QuantizeLinear: %d elements differ", bad);
    if (out[0]) {
        cort_value *in2[3] = { out[0], s, z };
        CHECK_OK(run_op("com.microsoft", "DequantizeLinear", 1, at, 1, in2, 3, back, 1, NULL));
        float want[24];
        for (size_t i = 0; i < 24; i++) want[i] = (float)(qget(out[0], i) - zv[i / 4 % 3]) * sv[i / 4 % 3];
        if (back[0]) CHECK_CLOSE(fdata(back[0]), want, 24, TOL, "com.microsoft.DequantizeLinear");
        else CHECK(0);
    }
    release(out, 1);
    release(back, 1);
    release(in, 3);
    /* GridSample (contrib spelling "bilinear") against bilinear interpolation written out */
    int64_t id[4] = { 1, 2, 5, 6 }, gd[4] = { 1, 4, 3, 2 };
    for (int ac = 0; ac < 2; ac++) {
        cort_value *img = frand_tensor(id, 4, 1), *grid = frand_tensor(gd, 4, 1.1f), *gin[2] = { img, grid }, *gout[1] = { NULL };
        cort_attr_ir gat[3] = { a_str("mode", "bilinear"), a_str("padding_mode", "zeros"), a_int("align_corners", ac) };
        CHECK_OK(run_op("com.microsoft", "GridSample", 1, gat, 3, gin, 2, gout, 1, NULL));
        float want[2 * 12];
        for (int c = 0; c < 2; c++)
            for (int p = 0; p < 12; p++) {
                double gx = fdata(grid)[p * 2], gy = fdata(grid)[p * 2 + 1];
                double fx = ac ? (gx + 1) / 2 * 5 : ((gx + 1) * 6 - 1) / 2, fy = ac ? (gy + 1) / 2 * 4 : ((gy + 1) * 5 - 1) / 2;
                int x0 = (int)floor(fx), y0 = (int)floor(fy);
                double v = 0;
                for (int dy = 0; dy < 2; dy++)
                    for (int dx = 0; dx < 2; dx++) {
                        int xx = x0 + dx, yy = y0 + dy;
                        double w = (dx ? fx - x0 : 1 - (fx - x0)) * (dy ? fy - y0 : 1 - (fy - y0));
                        if (xx >= 0 && xx < 6 && yy >= 0 && yy < 5) v += w * fdata(img)[(c * 5 + yy) * 6 + xx];
                    }
                want[c * 12 + p] = (float)v;
            }
        if (gout[0]) CHECK_CLOSE(fdata(gout[0]), want, 24, TOL, "com.microsoft.GridSample align_corners %d", ac);
        else CHECK(0);
        release(gout, 1);
        release(gin, 2);
    }
}

/* ---- sessions: a block as ONNX Runtime saves it, at levels 0 and 2 (FusedConv lowered) ---- */
static size_t count_op(const cort_session *s, const char *op) {
    size_t c = 0;
    for (size_t i = 0; i < cort_session_node_count(s); i++) {
        const char *name, *type, *prov;
        if (cort_session_node_info(s, i, &name, &type, &prov)) continue;
        if (!strcmp(type, op) && strcmp(prov, "folded")) c++;
    }
    return c;
}

static cort_session *open_at(const char *path, int level) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_optimization_level(o, level));
    CHECK_OK(cort_session_options_set_threads(o, 2));
    CHECK_OK(cort_session_create(path, o, &s));
    cort_session_options_free(o);
    return s;
}

static void test_saved_block(void) {
    const char *path = "tests/models/contrib_fused_block.onnx";
    cort_session *s0 = open_at(path, 0), *s2 = open_at(path, 2);
    if (!s0 || !s2) { cort_session_release(s0); cort_session_release(s2); return; }
    CHECK(count_op(s0, "FusedConv") == 5 && count_op(s0, "FusedGemm") == 1);
    /* Tanh has no epilogue: that FusedConv stays; the others run as Conv / Gemm with node->act */
    CHECK_MSG(count_op(s2, "FusedConv") == 1 && count_op(s2, "Conv") == 4 && count_op(s2, "Gemm") == 1,
              "level 2: %zu FusedConv, %zu Conv, %zu Gemm", count_op(s2, "FusedConv"), count_op(s2, "Conv"),
              count_op(s2, "Gemm"));
    int64_t xd[4] = { 1, 3, 64, 64 };
    cort_value *x = frand_tensor(xd, 4, 1.0f), *y0 = NULL, *y2 = NULL;
    const char *in = "x", *out = "y";
    CHECK_OK(cort_session_run(s0, NULL, &in, &x, 1, &out, 1, &y0));
    CHECK_OK(cort_session_run(s2, NULL, &in, &x, 1, &out, 1, &y2));
    if (y0 && y2) CHECK_CLOSE(fdata(y2), fdata(y0), 10, TOL, "saved block, level 2 vs level 0");
    else CHECK(0);
    cort_value_release(x);
    cort_value_release(y0);
    cort_value_release(y2);
    cort_session_release(s0);
    cort_session_release(s2);
}

/* ---- MultiHeadAttention: naive loops over projected Q, K, V ---- */
static void test_mha(void) {
    struct { size_t B, S, L, D, Dv, N, P; int bias, mask2d, bnsh; } cases[] = {
        { 2, 4, 6, 16, 16, 4, 0, 1, 1, 0 }, { 2, 4, 6, 16, 8, 2, 0, 0, 0, 1 }, { 1, 3, 3, 8, 8, 2, 2, 1, 0, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t B = cases[c].B, S = cases[c].S, L = cases[c].L, D = cases[c].D, Dv = cases[c].Dv, N = cases[c].N,
                     P = cases[c].P, h = D / N, hv = Dv / N, T = P + L;
        int64_t qd[3] = { (int64_t)B, (int64_t)S, (int64_t)D }, kd[4], vd[4], bd = (int64_t)(2 * D + Dv), md[2] = { (int64_t)B, (int64_t)T };
        int64_t pkd[4] = { (int64_t)B, (int64_t)N, (int64_t)P, (int64_t)h }, pvd[4] = { (int64_t)B, (int64_t)N, (int64_t)P, (int64_t)hv };
        if (cases[c].bnsh) {
            kd[0] = (int64_t)B; kd[1] = (int64_t)N; kd[2] = (int64_t)L; kd[3] = (int64_t)h;
            vd[0] = (int64_t)B; vd[1] = (int64_t)N; vd[2] = (int64_t)L; vd[3] = (int64_t)hv;
        } else {
            kd[0] = (int64_t)B; kd[1] = (int64_t)L; kd[2] = (int64_t)D;
            vd[0] = (int64_t)B; vd[1] = (int64_t)L; vd[2] = (int64_t)Dv;
        }
        const size_t kr = cases[c].bnsh ? 4 : 3;
        cort_value *q = frand_tensor(qd, 3, 1), *k = frand_tensor(kd, kr, 1), *v = frand_tensor(vd, kr, 1);
        cort_value *bias = cases[c].bias ? frand_tensor(&bd, 1, 0.5f) : NULL, *mask = NULL;
        cort_value *pk = P ? frand_tensor(pkd, 4, 1) : NULL, *pv = P ? frand_tensor(pvd, 4, 1) : NULL;
        if (cases[c].mask2d) {
            mask = tensor(CORT_TYPE_INT32, md, 2);
            for (size_t i = 0; mask && i < B * T; i++) ((int32_t *)cort_tensor_data(mask))[i] = i % 5 != 3;
        }
        cort_value *in[8] = { q, k, v, bias, mask, NULL, pk, pv }, *out[3] = { NULL };
        cort_attr_ir at[1] = { a_int("num_heads", (int64_t)N) };
        int want_out[3] = { 1, P > 0, P > 0 };
        CHECK_OK(run_op("com.microsoft", "MultiHeadAttention", 1, at, 1, in, 8, out, 3, want_out));
        float *want = malloc(B * S * Dv * sizeof *want);
        const float *bp = bias ? fdata(bias) : NULL;
        for (size_t b = 0; b < B; b++)
            for (size_t n = 0; n < N; n++)
                for (size_t s = 0; s < S; s++) {
                    double sc[16], m = -INFINITY, sum = 0;
                    for (size_t t = 0; t < T; t++) {
                        double dot = 0;
                        for (size_t i = 0; i < h; i++) {
                            double qv = fdata(q)[(b * S + s) * D + n * h + i] + (bp ? bp[n * h + i] : 0);
                            double kv = t < P ? fdata(pk)[((b * N + n) * P + t) * h + i]
                                      : cases[c].bnsh ? fdata(k)[((b * N + n) * L + t - P) * h + i]
                                                      : fdata(k)[(b * L + t - P) * D + n * h + i] + (bp ? bp[D + n * h + i] : 0);
                            dot += qv * kv;
                        }
                        sc[t] = dot / sqrt((double)h) + (mask && !((int32_t *)cort_tensor_data(mask))[b * T + t] ? -10000.0 : 0.0);
                        m = fmax(m, sc[t]);
                    }
                    for (size_t t = 0; t < T; t++) { sc[t] = exp(sc[t] - m); sum += sc[t]; }
                    for (size_t i = 0; i < hv; i++) {
                        double o = 0;
                        for (size_t t = 0; t < T; t++) {
                            double vv = t < P ? fdata(pv)[((b * N + n) * P + t) * hv + i]
                                      : cases[c].bnsh ? fdata(v)[((b * N + n) * L + t - P) * hv + i]
                                                      : fdata(v)[(b * L + t - P) * Dv + n * hv + i] + (bp ? bp[2 * D + n * hv + i] : 0);
                            o += sc[t] / sum * vv;
                        }
                        want[(b * S + s) * Dv + n * hv + i] = (float)o;
                    }
                }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, B * S * Dv, TOL, "MultiHeadAttention case %zu", c);
        else CHECK(0);
        if (P) CHECK(out[1] && out[2] && cort_tensor_shape(out[1])[2] == (int64_t)T &&
                     fdata(out[1])[0] == fdata(pk)[0] && fdata(out[2])[hv * P] == fdata(v)[0] + (bp ? bp[2 * D] : 0));
        free(want);
        release(out, 3);
        release(in, 8);
    }
}

/* ---- NhwcMaxPool: the window maximum written out in channels-last indexing ---- */
static void test_nhwc_max_pool(void) {
    for (int ti = 0; ti < 2; ti++) {
        const cort_type t = ti ? CORT_TYPE_INT8 : CORT_TYPE_UINT8;
        int64_t xd[4] = { 2, 7, 6, 5 }, ks[2] = { 3, 3 }, pads[4] = { 1, 1, 1, 1 }, st[2] = { 2, 2 };
        cort_value *x = q_tensor(t, xd, 4, ti ? -128 : 0, ti ? 127 : 255), *in[1] = { x }, *out[1] = { NULL };
        cort_attr_ir at[3] = { a_ints("kernel_shape", ks, 2), a_ints("pads", pads, 4), a_ints("strides", st, 2) };
        CHECK_OK(run_op("com.microsoft", "NhwcMaxPool", 1, at, 3, in, 1, out, 1, NULL));
        int bad = !out[0] || cort_tensor_shape(out[0])[1] != 4 || cort_tensor_shape(out[0])[2] != 3 ||
                  cort_tensor_shape(out[0])[3] != 5;
        for (int n = 0; !bad && n < 2; n++)
            for (int oh = 0; oh < 4; oh++)
                for (int ow = 0; ow < 3; ow++)
                    for (int c = 0; c < 5; c++) {
                        int m = -1000;
                        for (int kh = 0; kh < 3; kh++)
                            for (int kw = 0; kw < 3; kw++) {
                                int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
                                if (ih >= 0 && ih < 7 && iw >= 0 && iw < 6) {
                                    int v = qget(x, (size_t)(((n * 7 + ih) * 6 + iw) * 5 + c));
                                    m = v > m ? v : m;
                                }
                            }
                        bad += qget(out[0], (size_t)(((n * 4 + oh) * 3 + ow) * 5 + c)) != m;
                    }
        CHECK_MSG(!bad, "NhwcMaxPool type %d: %d elements differ", ti, bad);
        release(out, 1);
        release(in, 1);
    }
}

/* ---- GroupQueryAttention: the causal group attention written out in double ---- */
static void test_gqa(void) {
    struct { size_t B, S, N, KV, h, P; int32_t total, len[2]; int rotary, packed; int64_t window; float softcap; int smooth; } cases[] = {
        { 2, 5, 4, 2, 8, 0, 5, { 5, 5 }, 0, 0, -1, 0, 0 },
        { 2, 1, 4, 2, 8, 6, 7, { 5, 7 }, 0, 0, -1, 0, 0 },
        { 1, 4, 4, 1, 16, 0, 4, { 4, 0 }, 1, 1, -1, 0, 0 },
        { 2, 5, 2, 2, 8, 0, 5, { 5, 5 }, 0, 0, 2, 1.5f, 1 },
        { 1, 3, 4, 2, 8, 4, 7, { 7, 0 }, 1, 0, 3, 0, 0 },
        { 2, 5, 4, 2, 8, 0, 5, { 3, 5 }, 0, 0, -1, 0, 0 },   /* right-padded prompt */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t B = cases[c].B, S = cases[c].S, N = cases[c].N, KV = cases[c].KV, h = cases[c].h, P = cases[c].P;
        const size_t T = (size_t)cases[c].total > P ? (size_t)cases[c].total : P, half = h / 2;
        const int first = (size_t)cases[c].total == S;
        const size_t qw = cases[c].packed ? (N + 2 * KV) * h : N * h;
        int64_t qd[3] = { (int64_t)B, (int64_t)S, (int64_t)qw }, kd[3] = { (int64_t)B, (int64_t)S, (int64_t)(KV * h) };
        int64_t pd[4] = { (int64_t)B, (int64_t)KV, (int64_t)P, (int64_t)h }, bd = (int64_t)B, cd[2] = { 16, (int64_t)half };
        cort_value *q = frand_tensor(qd, 3, 1), *k = cases[c].packed ? NULL : frand_tensor(kd, 3, 1);
        cort_value *v = cases[c].packed ? NULL : frand_tensor(kd, 3, 1);
        cort_value *pk = P ? frand_tensor(pd, 4, 1) : NULL, *pv = P ? frand_tensor(pd, 4, 1) : NULL;
        cort_value *sl = tensor(CORT_TYPE_INT32, &bd, 1), *tl = tensor(CORT_TYPE_INT32, NULL, 0);
        cort_value *cc = tensor(CORT_TYPE_FLOAT, cd, 2), *sc = tensor(CORT_TYPE_FLOAT, cd, 2);
        if (!sl || !tl || !cc || !sc) return;
        for (size_t b = 0; b < B; b++) ((int32_t *)cort_tensor_data(sl))[b] = cases[c].len[b] - 1;
        *(int32_t *)cort_tensor_data(tl) = cases[c].total;
        for (size_t p = 0; p < 16; p++)
            for (size_t i = 0; i < half; i++) {
                fdata(cc)[p * half + i] = (float)cos((double)p * pow(10000.0, -2.0 * (double)i / (double)h));
                fdata(sc)[p * half + i] = (float)sin((double)p * pow(10000.0, -2.0 * (double)i / (double)h));
            }
        cort_value *in[9] = { q, k, v, pk, pv, sl, tl, cases[c].rotary ? cc : NULL, cases[c].rotary ? sc : NULL };
        cort_attr_ir at[7] = { a_int("num_heads", (int64_t)N), a_int("kv_num_heads", (int64_t)KV),
                               a_int("do_rotary", cases[c].rotary), a_int("local_window_size", cases[c].window),
                               a_float("softcap", cases[c].softcap), a_int("smooth_softmax", cases[c].smooth),
                               a_float("scale", 0.0f) };
        cort_value *out[3] = { NULL };
        CHECK_OK(run_op("com.microsoft", "GroupQueryAttention", 1, at, 7, in, 9, out, 3, NULL));
        float *want = malloc(B * S * N * h * sizeof *want), *wk = calloc(B * KV * T * h, sizeof *wk);
        for (size_t b = 0; b < B; b++) {
            const size_t len = (size_t)cases[c].len[b], past = first ? 0 : len - S;
            const size_t filled = past + S;   /* present rows written: a padded prompt's padding too */
            /* keys and values of every kv head over the present buffer; rotation as RotaryEmbedding's */
            double kk[2][16][16], vv[2][16][16];
            for (size_t g = 0; g < KV; g++)
                for (size_t t = 0; t < filled; t++)
                    for (size_t i = 0; i < h; i++) {
                        if (t < past) {
                            kk[g][t][i] = fdata(pk)[((b * KV + g) * P + t) * h + i];
                            vv[g][t][i] = fdata(pv)[((b * KV + g) * P + t) * h + i];
                        } else {
                            size_t s = t - past;
                            const float *kr = cases[c].packed ? fdata(q) + (b * S + s) * qw + N * h + g * h
                                                              : fdata(k) + (b * S + s) * KV * h + g * h;
                            const float *vr = cases[c].packed ? fdata(q) + (b * S + s) * qw + (N + KV) * h + g * h
                                                              : fdata(v) + (b * S + s) * KV * h + g * h;
                            kk[g][t][i] = kr[i];
                            vv[g][t][i] = vr[i];
                        }
                    }
            if (cases[c].rotary)
                for (size_t g = 0; g < KV; g++)
                    for (size_t t = past; t < filled; t++)
                        for (size_t i = 0; i < half; i++) {
                            double a = (double)t * pow(10000.0, -2.0 * (double)i / (double)h), x1 = kk[g][t][i], x2 = kk[g][t][i + half];
                            kk[g][t][i] = x1 * cos(a) - x2 * sin(a);
                            kk[g][t][i + half] = x2 * cos(a) + x1 * sin(a);
                        }
            for (size_t g = 0; g < KV; g++)
                for (size_t t = 0; t < filled; t++)
                    for (size_t i = 0; i < h; i++) wk[((b * KV + g) * T + t) * h + i] = (float)kk[g][t][i];
            for (size_t n = 0; n < N; n++)
                for (size_t s = 0; s < S; s++) {
                    double qv[16], sc2[16], m = cases[c].smooth ? 0.0 : -INFINITY, sum = 0;
                    const size_t rpos = past + s;   /* the query's rotary position */
                    const size_t pos = past + s < len ? past + s : len - 1, g = n / (N / KV);
                    for (size_t i = 0; i < h; i++) qv[i] = fdata(q)[(b * S + s) * qw + n * h + i];
                    if (cases[c].rotary)
                        for (size_t i = 0; i < half; i++) {
                            double a = (double)rpos * pow(10000.0, -2.0 * (double)i / (double)h), x1 = qv[i], x2 = qv[i + half];
                            qv[i] = x1 * cos(a) - x2 * sin(a);
                            qv[i + half] = x2 * cos(a) + x1 * sin(a);
                        }
                    size_t lo = cases[c].window > 0 && pos + 1 > (size_t)cases[c].window ? pos + 1 - (size_t)cases[c].window : 0;
                    for (size_t t = lo; t <= pos; t++) {
                        double d = 0;
                        for (size_t i = 0; i < h; i++) d += qv[i] * kk[g][t][i];
                        d /= sqrt((double)h);
                        if (cases[c].softcap > 0) d = cases[c].softcap * tanh(d / cases[c].softcap);
                        sc2[t] = d;
                        m = fmax(m, d);
                    }
                    if (cases[c].smooth) sum = exp(-m);
                    for (size_t t = lo; t <= pos; t++) { sc2[t] = exp(sc2[t] - m); sum += sc2[t]; }
                    for (size_t i = 0; i < h; i++) {
                        double o = 0;
                        for (size_t t = lo; t <= pos; t++) o += sc2[t] / sum * vv[g][t][i];
                        want[(b * S + s) * N * h + n * h + i] = (float)o;
                    }
                }
        }
        if (out[0]) CHECK_CLOSE(fdata(out[0]), want, B * S * N * h, TOL, "GroupQueryAttention case %zu", c);
        else CHECK(0);
        if (out[1]) CHECK_CLOSE(fdata(out[1]), wk, B * KV * T * h, TOL, "GroupQueryAttention present_key case %zu", c);
        else CHECK(0);
        free(want);
        free(wk);
        release(out, 3);
        cort_value *vals[11] = { q, k, v, pk, pv, sl, tl, cc, sc, NULL, NULL };
        release(vals, 9);
    }
}

/* GroupQueryAttention's position_ids and attention_bias through properties that need no second
 * implementation: rotary attention depends on position differences only, so shifting every
 * position of a prompt leaves the output unchanged; a bias that masks every key but the first
 * makes each query's output the first value row. */
static void test_gqa_inputs(void) {
    const int64_t B = 1, S = 4, N = 2, H = 16;
    int64_t qd[3] = { B, S, N * H }, kd[3] = { B, S, H }, bd = B, cd[2] = { 16, H / 2 }, pd[2] = { B, S };
    int64_t abd[4] = { B, 1, S, S };
    cort_value *q = frand_tensor(qd, 3, 1), *k = frand_tensor(kd, 3, 1), *v = frand_tensor(kd, 3, 1);
    cort_value *sl = tensor(CORT_TYPE_INT32, &bd, 1), *tl = tensor(CORT_TYPE_INT32, NULL, 0);
    cort_value *cc = tensor(CORT_TYPE_FLOAT, cd, 2), *sc = tensor(CORT_TYPE_FLOAT, cd, 2);
    cort_value *pos = tensor(CORT_TYPE_INT64, pd, 2), *ab = tensor(CORT_TYPE_FLOAT, abd, 4);
    if (!sl || !tl || !cc || !sc || !pos || !ab) return;
    *(int32_t *)cort_tensor_data(sl) = (int32_t)S - 1;
    *(int32_t *)cort_tensor_data(tl) = (int32_t)S;
    for (int64_t p = 0; p < 16; p++)
        for (int64_t i = 0; i < H / 2; i++) {
            fdata(cc)[p * H / 2 + i] = (float)cos((double)p * pow(10000.0, -2.0 * (double)i / (double)H));
            fdata(sc)[p * H / 2 + i] = (float)sin((double)p * pow(10000.0, -2.0 * (double)i / (double)H));
        }
    for (int64_t s = 0; s < S; s++) ((int64_t *)cort_tensor_data(pos))[s] = 5 + s;
    for (int64_t i = 0; i < S * S; i++) fdata(ab)[i] = i % S == 0 ? 0.0f : -10000.0f;
    cort_attr_ir at[3] = { a_int("num_heads", N), a_int("kv_num_heads", 1), a_int("do_rotary", 1) };
    cort_value *in[11] = { q, k, v, NULL, NULL, sl, tl, cc, sc, NULL, NULL }, *o1[1] = { NULL }, *o2[1] = { NULL },
               *o3[1] = { NULL };
    CHECK_OK(run_op("com.microsoft", "GroupQueryAttention", 1, at, 3, in, 9, o1, 1, NULL));
    in[9] = pos;
    CHECK_OK(run_op("com.microsoft", "GroupQueryAttention", 1, at, 3, in, 10, o2, 1, NULL));
    if (o1[0] && o2[0]) CHECK_CLOSE(fdata(o2[0]), fdata(o1[0]), (size_t)(S * N * H), TOL, "GQA shifted position_ids");
    else CHECK(0);
    in[10] = ab;
    CHECK_OK(run_op("com.microsoft", "GroupQueryAttention", 1, at, 3, in, 11, o3, 1, NULL));
    float want[4 * 32];
    for (int64_t s = 0; s < S; s++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < H; i++) want[(s * N + n) * H + i] = fdata(v)[i];
    if (o3[0]) CHECK_CLOSE(fdata(o3[0]), want, (size_t)(S * N * H), TOL, "GQA attention_bias keeping key 0");
    else CHECK(0);
    release(o1, 1);
    release(o2, 1);
    release(o3, 1);
    cort_value *vals[9] = { q, k, v, sl, tl, cc, sc, pos, ab };
    release(vals, 9);
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(3, &pool));
    g_pool = pool;
    test_fused_conv();
    test_fused_gemm();
    test_fused_gemm_defaults();
    test_fused_matmul();
    test_elementwise();
    test_skip_layer_norm();
    test_ln_family();
    test_trilu_bias_softmax();
    test_embed_layer_norm();
    test_attention();
    test_quant_matmul();
    test_qattention();
    test_matmul_nbits();
    test_qlinear();
    test_rotary();
    test_qdq_grid();
    test_mha();
    test_gqa();
    test_gqa_inputs();
    test_nhwc_max_pool();
    test_saved_block();
    cort_pool_free(pool);
    return tu_finish();
}
