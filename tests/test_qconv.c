/* QLinearConv and ConvInteger: the paths for constant weights (int GEMM with im2col into packed B,
 * 1x1 without im2col, direct depthwise loop; weights given as session initializers) against the
 * scalar path (the same model with the weights as run-time inputs) and both against a plain loop
 * written here, bit for bit: odd sizes, strides, asymmetric pads, dilations, groups, depthwise with
 * channel multipliers, 1-D and 3-D, uint8/int8 for x, w and y, zero points absent, scalar and per
 * output channel, with and without bias, 1 and 3 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "providers/cpu/kernels/int_gemm.h"
#include "providers/cpu/ops/quant/quant.h"

static uint32_t rng_state = 777;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* ---- single-node models (pb_* writer: testutil.h) ---- */
static void attr_ints(pb *node, const char *name, const int64_t *v, size_t n) {
    pb at = { 0 };
    pb_str(&at, 1, name);
    pb_int(&at, 20, 7);
    for (size_t i = 0; i < n; i++) pb_int(&at, 8, v[i]);
    pb_sub(node, 5, &at);
}

/* One conv node; inputs x0..x{n-1} (absent where elem[i] == 0), output y. */
static void *conv_model(const char *op, int n_in, const int *elem, int out_elem, int nd, const int64_t *strides,
                        const int64_t *pads, const int64_t *dil, int64_t group, size_t *len) {
    pb m = { 0 }, g = { 0 }, node = { 0 }, os = { 0 };
    char name[16];
    pb_int(&m, 1, 8);
    pb_str(&os, 1, "");
    pb_int(&os, 2, 13);
    pb_sub(&m, 8, &os);
    for (int i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "x%d", i);
        pb_str(&node, 1, elem[i] ? name : "");
    }
    pb_str(&node, 2, "y");
    pb_str(&node, 3, "n");
    pb_str(&node, 4, op);
    attr_ints(&node, "strides", strides, (size_t)nd);
    attr_ints(&node, "pads", pads, 2 * (size_t)nd);
    attr_ints(&node, "dilations", dil, (size_t)nd);
    {
        pb at = { 0 };
        pb_str(&at, 1, "group");
        pb_int(&at, 20, 2);
        pb_int(&at, 3, group);
        pb_sub(&node, 5, &at);
    }
    pb_sub(&g, 1, &node);
    pb_str(&g, 2, "g");
    for (int i = 0; i <= n_in; i++) {
        if (i < n_in && !elem[i]) continue;
        pb vi = { 0 }, tp = { 0 }, tt = { 0 };
        snprintf(name, sizeof name, i < n_in ? "x%d" : "y", i);
        pb_str(&vi, 1, name);
        pb_int(&tt, 1, i < n_in ? elem[i] : out_elem);
        pb_sub(&tp, 1, &tt);
        pb_sub(&vi, 2, &tp);
        pb_sub(&g, i < n_in ? 11 : 12, &vi);
    }
    pb_sub(&m, 7, &g);
    *len = m.n;
    return m.p;
}

typedef struct qcase {
    int nd;
    int64_t N, C, M, group;
    int64_t in[3], k[3], s[3], pb[3], pe[3], d[3];
    int xs, ws, ys;   /* signedness of x, w, y */
    int xz, wz;       /* zero points: 0 none, 1 scalar, 2 (w only) per output channel */
    int bias;
} qcase;

static int32_t ld8(const uint8_t *p, int s, size_t i) { return s ? (int32_t)(int8_t)p[i] : (int32_t)p[i]; }

static cort_value *mk(cort_type t, const int64_t *shape, size_t rank, const void *data) {
    cort_value *v = NULL;
    if (!CHECK_OK(cort_tensor_create(t, shape, rank, &v))) return NULL;
    if (cort_tensor_bytes(v)) memcpy(cort_tensor_data(v), data, cort_tensor_bytes(v));
    return v;
}

/* Runs the model with inputs vals; constants (bit i of const_mask) as initializers. Returns y. */
static cort_value *run_model(void *model, size_t len, cort_value **vals, int n_in, unsigned const_mask, int threads) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    cort_value *y = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    const char *names[9];
    cort_value *feed[9];
    size_t nf = 0;
    static const char *const nm[9] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8" };
    for (int i = 0; i < n_in; i++) {
        if (!vals[i]) continue;
        if (const_mask >> i & 1) CHECK_OK(cort_session_options_add_initializer(o, nm[i], vals[i]));
        else { names[nf] = nm[i]; feed[nf++] = vals[i]; }
    }
    const char *on = "y";
    if (CHECK_OK(cort_session_create_from_memory(model, len, o, &s))) {
        CHECK_OK(cort_session_run(s, NULL, names, feed, nf, &on, 1, &y));
        cort_session_release(s);
    }
    cort_session_options_free(o);
    return y;
}

static void run_case(const qcase *q, int ci) {
    const int nd = q->nd;
    int64_t out[3], xshape[5] = { q->N, q->C }, wshape[5] = { q->M, q->C / q->group };
    size_t in_size = 1, out_size = 1, ks = 1;
    for (int i = 0; i < nd; i++) {
        out[i] = (q->in[i] + q->pb[i] + q->pe[i] - q->d[i] * (q->k[i] - 1) - 1) / q->s[i] + 1;
        xshape[2 + i] = q->in[i];
        wshape[2 + i] = q->k[i];
        in_size *= (size_t)q->in[i];
        out_size *= (size_t)out[i];
        ks *= (size_t)q->k[i];
    }
    const size_t Cg = (size_t)(q->C / q->group), Mg = (size_t)(q->M / q->group), M = (size_t)q->M;
    const size_t xn = (size_t)(q->N * q->C) * in_size, wn = M * Cg * ks, yn = (size_t)q->N * M * out_size;
    uint8_t *x = malloc(xn + 1), *w = malloc(wn + 1), xzp = 0, *wzp = malloc(M + 1), yzp = (uint8_t)(rnd() & 255);
    int32_t *bias = malloc((M + 1) * sizeof(int32_t)), *ref = malloc((yn + 1) * sizeof(int32_t));
    float xsc = 0.01f + (float)(rnd() % 100) * 1e-4f, ysc = 0.02f + (float)(rnd() % 100) * 5e-4f, *wsc = malloc((M + 1) * sizeof(float));
    for (size_t i = 0; i < xn; i++) x[i] = (uint8_t)rnd();
    for (size_t i = 0; i < wn; i++) w[i] = (uint8_t)rnd();
    for (size_t i = 0; i < xn && i < 5; i++) x[i] = (uint8_t)(i & 1 ? (q->xs ? 0x80 : 0) : (q->xs ? 0x7f : 255));
    if (q->xz) xzp = (uint8_t)rnd();
    for (size_t m = 0; m < M; m++) {
        wzp[m] = q->wz ? (uint8_t)(q->wz == 1 && m ? wzp[0] : rnd()) : 0;
        bias[m] = q->bias ? (int32_t)(rnd() % 20001) - 10000 : 0;
        wsc[m] = 0.002f + (float)(rnd() % 100) * 1e-4f;
    }
    /* the plain loop */
    for (size_t n = 0; n < (size_t)q->N; n++)
        for (size_t m = 0; m < M; m++)
            for (size_t o = 0; o < out_size; o++) {
                int64_t op[3] = { 0, 0, 0 };
                size_t r = o;
                for (int i = nd - 1; i >= 0; i--) { op[i] = (int64_t)(r % (size_t)out[i]); r /= (size_t)out[i]; }
                int32_t acc = 0;
                const size_t gi = m / Mg;
                for (size_t c = 0; c < Cg; c++)
                    for (size_t kk = 0; kk < ks; kk++) {
                        int64_t kp[3] = { 0, 0, 0 };
                        size_t rr = kk, xi = 0;
                        int ok = 1;
                        for (int i = nd - 1; i >= 0; i--) { kp[i] = (int64_t)(rr % (size_t)q->k[i]); rr /= (size_t)q->k[i]; }
                        for (int i = 0; i < nd; i++) {
                            int64_t p = op[i] * q->s[i] - q->pb[i] + kp[i] * q->d[i];
                            ok = ok && p >= 0 && p < q->in[i];
                            xi = xi * (size_t)q->in[i] + (size_t)(p < 0 ? 0 : p);
                        }
                        if (!ok) continue;
                        const int32_t xv = ld8(x, q->xs, (n * (size_t)q->C + gi * Cg + c) * in_size + xi) - ld8(&xzp, q->xs, 0);
                        const int32_t wv = ld8(w, q->ws, (m * Cg + c) * ks + kk) - ld8(wzp, q->ws, m);
                        acc += xv * wv;
                    }
                ref[(n * M + m) * out_size + o] = acc;
            }
    int64_t mshape[1] = { (int64_t)M }, one[1] = { 1 };
    const cort_type xt = q->xs ? CORT_TYPE_INT8 : CORT_TYPE_UINT8, wt = q->ws ? CORT_TYPE_INT8 : CORT_TYPE_UINT8;
    const cort_type yt = q->ys ? CORT_TYPE_INT8 : CORT_TYPE_UINT8;
    for (int op = 0; op < 2; op++) {   /* 0 ConvInteger, 1 QLinearConv */
        cort_value *v[9] = { 0 };
        int elem[9] = { 0 }, n_in;
        const size_t wzn = q->wz == 2 ? M : 1;
        if (op == 0) {
            n_in = 4;
            v[0] = mk(xt, xshape, (size_t)nd + 2, x);
            v[1] = mk(wt, wshape, (size_t)nd + 2, w);
            if (q->xz) v[2] = mk(xt, one, 1, &xzp);
            if (q->wz) v[3] = mk(wt, q->wz == 2 ? mshape : one, 1, wzp);
        } else {
            n_in = 9;
            v[0] = mk(xt, xshape, (size_t)nd + 2, x);
            v[1] = mk(CORT_TYPE_FLOAT, one, 0, &xsc);
            if (q->xz) v[2] = mk(xt, one, 0, &xzp);
            v[3] = mk(wt, wshape, (size_t)nd + 2, w);
            v[4] = mk(CORT_TYPE_FLOAT, q->wz == 2 ? mshape : one, q->wz == 2 ? 1 : 0, wsc);
            if (q->wz) v[5] = mk(wt, wzn > 1 ? mshape : one, wzn > 1 ? 1 : 0, wzp);
            v[6] = mk(CORT_TYPE_FLOAT, one, 0, &ysc);
            v[7] = mk(yt, one, 0, &yzp);
            if (q->bias) v[8] = mk(CORT_TYPE_INT32, mshape, 1, bias);
        }
        for (int i = 0; i < n_in; i++) elem[i] = v[i] ? (int)cort_tensor_type(v[i]) : 0;
        int64_t pads[6];
        for (int i = 0; i < nd; i++) { pads[i] = q->pb[i]; pads[nd + i] = q->pe[i]; }
        size_t len;
        void *model = conv_model(op ? "QLinearConv" : "ConvInteger", n_in, elem, op ? (int)yt : CORT_TYPE_INT32, nd, q->s,
                                 pads, q->d, q->group, &len);
        /* expected output: the plain loop, requantized as the spec says (float product, round half to even, saturate) */
        uint8_t *want8 = malloc(yn + 1);
        for (size_t i = 0; i < yn; i++) {
            const size_t m = i / out_size % M;
            if (op == 1) {
                const float mult = xsc * wsc[q->wz == 2 ? m : 0] / ysc;
                float f = (float)(ref[i] + bias[m]) * mult;
                int64_t r = (int64_t)nearbyintf(f) + ld8(&yzp, q->ys, 0);
                int64_t lo = q->ys ? -128 : 0, hi = q->ys ? 127 : 255;
                r = r < lo ? lo : r > hi ? hi : r;
                want8[i] = (uint8_t)r;
            }
        }
        /* weights (and w zero point) constant: the fast paths; as inputs: the scalar path */
        const unsigned wmask = op ? (1u << 3 | 1u << 5) : (1u << 1 | 1u << 3);
        for (int variant = 0; variant < 3; variant++) {
            cort_value *y = run_model(model, len, v, n_in, variant ? wmask : 0, variant == 2 ? 3 : 1);
            if (!y) continue;
            size_t bad = 0, first = 0;
            if (cort_tensor_element_count(y) != yn) bad = 1;
            else if (op == 0) {
                const int32_t *got = cort_tensor_data(y);
                for (size_t i = 0; i < yn; i++) if (got[i] != ref[i] && !bad++) first = i;
            } else {
                const uint8_t *got = cort_tensor_data(y);
                for (size_t i = 0; i < yn; i++) if (got[i] != want8[i] && !bad++) first = i;
            }
            CHECK_MSG(bad == 0, "case %d %s %s: %zu of %zu wrong (first at %zu)", ci, op ? "QLinearConv" : "ConvInteger",
                      variant == 0 ? "scalar" : variant == 1 ? "packed 1 thread" : "packed 3 threads", bad, yn, first);
            cort_value_release(y);
        }
        free(want8);
        free(model);
        for (int i = 0; i < 9; i++) cort_value_release(v[i]);
    }
    free(x); free(w); free(wzp); free(bias); free(ref); free(wsc);
}

/* ---- the fuse_qdq pass: QDQ models (tests/models/make_qdq_models.py) at levels 0 and 2 ---- */
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

static size_t count_op(const cort_session *s, const char *op) {
    size_t c = 0;
    for (size_t i = 0; i < cort_session_node_count(s); i++) {
        const char *name, *type, *prov;
        if (cort_session_node_info(s, i, &name, &type, &prov)) continue;
        if (!strcmp(type, op) && strcmp(prov, "folded")) c++;
    }
    return c;
}

/* Level 0 runs the graph as written (float Conv between Q/DQ): the reference. Fused, the float
 * rounding of the requantization may move a value that lies within rounding of a half by one unit,
 * and a layer's one-unit change moves the next layer's accumulator by at most |w - w_zp| * x_scale *
 * w_scale / y_scale units (< 1 here), so the final outputs stay within 2 units, nearly all exact. */
static void test_qdq_model_add(const char *file, const int64_t *shape, size_t rank, float out_scale, size_t qconv,
                               size_t qmm, size_t qadd, size_t conv_left, size_t q_left) {
    char path[256];
    snprintf(path, sizeof path, "tests/models/%s", file);
    cort_session *s0 = open_at(path, 0), *s2 = open_at(path, 2);
    if (!s0 || !s2) { cort_session_release(s0); cort_session_release(s2); return; }
    CHECK_MSG(count_op(s2, "QLinearConv") == qconv && count_op(s2, "QLinearMatMul") == qmm &&
              count_op(s2, "QLinearAdd") == qadd && count_op(s2, "Conv") == conv_left &&
              count_op(s2, "QuantizeLinear") == q_left && count_op(s0, "QLinearConv") == 0 && count_op(s0, "QLinearAdd") == 0,
              "%s: level 2 runs %zu QLinearConv, %zu QLinearMatMul, %zu QLinearAdd, %zu Conv, %zu QuantizeLinear "
              "(expected %zu, %zu, %zu, %zu, %zu)", file, count_op(s2, "QLinearConv"), count_op(s2, "QLinearMatMul"),
              count_op(s2, "QLinearAdd"), count_op(s2, "Conv"), count_op(s2, "QuantizeLinear"), qconv, qmm, qadd,
              conv_left, q_left);
    cort_value *x = NULL, *y0 = NULL, *y2 = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, rank, &x));
    if (x) {
        float *xd = cort_tensor_data(x);
        for (size_t i = 0; i < cort_tensor_element_count(x); i++) xd[i] = (float)(rnd() % 2000) / 400.0f - 1.0f;
        const char *in = "x", *on = "y";
        CHECK_OK(cort_session_run(s0, NULL, &in, &x, 1, &on, 1, &y0));
        CHECK_OK(cort_session_run(s2, NULL, &in, &x, 1, &on, 1, &y2));
    }
    CHECK(y0 && y2 && cort_tensor_element_count(y0) == cort_tensor_element_count(y2));
    if (y0 && y2 && cort_tensor_element_count(y0) == cort_tensor_element_count(y2)) {
        const float *a = cort_tensor_data(y0), *b = cort_tensor_data(y2);
        const size_t n = cort_tensor_element_count(y0);
        size_t off = 0;
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            const double d = fabs((double)a[i] - (double)b[i]) / out_scale;
            off += d > 0.5;
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst < 2.5 && off * 50 <= n, "%s: fused output differs from level 0 by up to %.2f units, %zu of %zu "
                  "elements off", file, worst, off, n);
        printf("%s: %zu of %zu outputs differ from level 0 (max %.0f unit)\n", file, off, n, worst);
    }
    cort_value_release(x); cort_value_release(y0); cort_value_release(y2);
    cort_session_release(s0); cort_session_release(s2);
}

/* ---- the requantization of GEMM tiles (rq_tile) and rows (rq_row) ---- */

/* sat8(nn_q_add_sat(nn_q_round(a * mult), zp)), the scalar expression rq_tile must give for a finite mult. */
static int32_t rq_want(int32_t acc, int32_t bias, float mult, int32_t zp, int sgn) {
    const int32_t a = (int32_t)((uint32_t)acc + (uint32_t)bias);
    const int32_t v = nn_q_add_sat(nn_q_round((float)a * mult), zp);
    return sgn ? (v < -128 ? -128 : v > 127 ? 127 : v) : (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Wrong on purpose, for the negative controls: rows 1 and 2 of every four swapped (a wrong lane
 * permutation), the zero point added after the 8-bit saturation, ties rounded away from zero. */
static void rq_tile_swapped(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                            const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd) {
    nn_qrq_tile_generic(acc, ldt, rows, cols, bias, mult, yzp, is_signed, dst, ldd);
    for (size_t r = 0; r + 4 <= rows; r += 4)
        for (size_t q = 0; q < cols; q++) {
            const uint8_t t = dst[(r + 1) * ldd + q];
            dst[(r + 1) * ldd + q] = dst[(r + 2) * ldd + q];
            dst[(r + 2) * ldd + q] = t;
        }
}
static void rq_tile_late_zp(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                            const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd) {
    for (size_t r = 0; r < rows; r++)
        for (size_t q = 0; q < cols; q++) {
            const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
            int32_t v = rq_want(acc[r * ldt + q], bias ? bias[r] : 0, mult[r], 0, is_signed);
            v = isfinite(mult[r]) ? v + yzp : 0;
            dst[r * ldd + q] = (uint8_t)(v < lo ? lo : v > hi ? hi : v);
        }
}
static void rq_tile_half_away(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                              const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd) {
    nn_qrq_tile_generic(acc, ldt, rows, cols, bias, mult, yzp, is_signed, dst, ldd);
    for (size_t r = 0; r < rows; r++)
        for (size_t q = 0; q < cols; q++) {
            const float f = (float)(int32_t)((uint32_t)acc[r * ldt + q] + (uint32_t)(bias ? bias[r] : 0)) * mult[r];
            if (!(fabsf(f) < 1e6f)) continue;
            const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255, v = (int32_t)roundf(f) + yzp;
            dst[r * ldd + q] = (uint8_t)(v < lo ? lo : v > hi ? hi : v);
        }
}

/* Values of an accumulator: small, around the 8-bit edges at multiplier 1, ties at 1/2 and 1/4, huge,
 * the int32 ends (a bias wraps them). */
static int32_t rq_acc(int mode) {
    switch (mode % 6) {
    case 0: return (int32_t)(rnd() % 400001) - 200000;
    case 1: return (int32_t)(rnd() % 801) - 400;
    case 2: return (int32_t)(rnd() % 2049) - 1024;
    case 3: return (int32_t)(rnd() << 8);
    case 4: { const int32_t e[6] = { INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1, (1 << 24) + 1, -(1 << 24) - 3 };
              return e[rnd() % 6]; }
    default: return rnd() % 2 ? (int32_t)(rnd() % 33) - 16 : (int32_t)(rnd() << 6);
    }
}
static float rq_mult(int trial) {
    const uint32_t k = rnd() % 24;
    if (k == 0 && trial % 3 == 0) { const float nf[3] = { INFINITY, -INFINITY, NAN }; return nf[rnd() % 3]; }
    const float special[8] = { 1.0f, 0.5f, 0.25f, 3e9f, 1e-9f, -0.75f, 0.0f, 1.0f / 3.0f };
    return k < 8 ? special[k] : (float)(rnd() % 100000 + 1) * 1e-6f;
}

/* Wrong bytes of fn against the portable rows and the scalar expression over every rows x cols up to
 * 16 x 16, both signednesses, with and without bias, zero points at the ends and between, row strides
 * wider and narrower than 16 bytes; bytes outside the rows' columns must stay untouched. */
static size_t rq_tile_bad(nn_qrq_tile_fn fn, int trials) {
    enum { LDT = 19, MAXD = 16 * 22 + 16 };
    int32_t tacc[16 * LDT], tb[16];
    float tm[16];
    uint8_t td[MAXD], want[16];
    size_t bad = 0;
    for (int trial = 0; trial < trials; trial++)
        for (size_t rows = 1; rows <= 16; rows++)
            for (size_t cols = 1; cols <= 16; cols++) {
                const int sgn = (int)(rnd() & 1), with_bias = rnd() % 3 != 0, mode = (int)(rnd() % 7);
                const size_t ldt = rnd() % 2 ? 16 : LDT, ldd = cols == 16 || rnd() % 2 ? 16 + rnd() % 7 : cols + rnd() % 4;
                const uint32_t zk = rnd() % 4;
                const int32_t zp = zk == 0 ? (sgn ? -128 : 0) : zk == 1 ? (sgn ? 127 : 255)
                                   : sgn ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
                for (size_t i = 0; i < 16 * LDT; i++) tacc[i] = rq_acc(mode < 6 ? mode : (int)(rnd() % 6));
                for (size_t r = 0; r < 16; r++) {
                    const uint32_t bk = rnd() % 16;
                    tb[r] = bk == 0 ? INT32_MAX : bk == 1 ? INT32_MIN : (int32_t)(rnd() % 20001) - 10000;
                    tm[r] = rq_mult(trial);
                }
                memset(td, 0xa5, sizeof td);
                fn(tacc, ldt, rows, cols, with_bias ? tb : NULL, tm, zp, sgn, td, ldd);
                for (size_t i = 0; i < MAXD; i++)   /* nothing outside the rows' columns */
                    bad += (i >= rows * ldd || i % ldd >= cols) && td[i] != 0xa5;
                for (size_t r = 0; r < rows; r++) {
                    nn_qrq_row_generic(tacc + r * ldt, cols, with_bias ? tb[r] : 0, tm[r], zp, sgn, want);
                    for (size_t q = 0; q < cols; q++) {
                        const uint8_t got = td[r * ldd + q];
                        bad += got != want[q];
                        if (isfinite(tm[r]))
                            bad += (sgn ? (int32_t)(int8_t)got : (int32_t)got) !=
                                   rq_want(tacc[r * ldt + q], with_bias ? tb[r] : 0, tm[r], zp, sgn);
                    }
                }
            }
    return bad;
}

/* Wrong on purpose: the second and third 16-value quarters of every 64 swapped (a wrong lane order). */
static void rq_row_swapped(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed, void *dst) {
    uint8_t *d = dst;
    nn_qrq_row_generic(acc, n, bias, mult, yzp, is_signed, dst);
    for (size_t q = 0; q + 64 <= n; q += 64)
        for (size_t i = 0; i < 16; i++) {
            const uint8_t t = d[q + 16 + i];
            d[q + 16 + i] = d[q + 32 + i];
            d[q + 32 + i] = t;
        }
}

/* Wrong bytes of a rq_row over lengths 0 to 300 (the 64-, 16-wide steps and the tails), with the values,
 * finite multipliers and zero points of rq_tile_bad; bytes past n must stay untouched. */
static size_t rq_row_bad(nn_qrq_row_fn fn, int trials) {
    enum { N = 300 };
    int32_t acc[N];
    uint8_t d[N + 16], want[N];
    size_t bad = 0;
    for (int trial = 0; trial < trials; trial++)
        for (size_t n = 0; n <= N; n += trial % 2 ? 1 : 7) {
            const int sgn = (int)(rnd() & 1), mode = (int)(rnd() % 7);
            const uint32_t zk = rnd() % 4, bk = rnd() % 16;
            const int32_t zp = zk == 0 ? (sgn ? -128 : 0) : zk == 1 ? (sgn ? 127 : 255)
                               : sgn ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
            const int32_t bias = bk == 0 ? INT32_MAX : bk == 1 ? INT32_MIN : (int32_t)(rnd() % 20001) - 10000;
            float mult = rq_mult(trial);
            if (!isfinite(mult)) mult = 2.0f;   /* rq_row's multiplier is finite (int_gemm.h) */
            for (size_t i = 0; i < n; i++) acc[i] = rq_acc(mode < 6 ? mode : (int)(rnd() % 6));
            memset(d, 0xa5, sizeof d);
            fn(acc, n, bias, mult, zp, sgn, d);
            nn_qrq_row_generic(acc, n, bias, mult, zp, sgn, want);
            for (size_t i = 0; i < n; i++) {
                bad += d[i] != want[i];
                bad += (sgn ? (int32_t)(int8_t)d[i] : (int32_t)d[i]) != rq_want(acc[i], bias, mult, zp, sgn);
            }
            for (size_t i = n; i < sizeof d; i++) bad += d[i] != 0xa5;
        }
    return bad;
}

static void test_qrq_tile(void) {
    const nn_qconv_ops *const *ops;
    const size_t n_ops = nn_qconv_ops_list(&ops);
    for (size_t oi = 0; oi < n_ops; oi++) {
        const size_t bad = rq_tile_bad(ops[oi]->rq_tile, 12);
        CHECK_MSG(bad == 0, "%s: %zu tile-requantized values wrong", ops[oi]->name, bad);
        const size_t bad_row = rq_row_bad(ops[oi]->rq_row, 40);
        CHECK_MSG(bad_row == 0, "%s: %zu row-requantized values wrong", ops[oi]->name, bad_row);
    }
    CHECK_MSG(rq_tile_bad(nn_qrq_tile_generic, 2) == 0, "generic tile requantization disagrees with the scalar expression");
    /* negative controls: the check sees a swapped row, a late zero point and ties rounded away */
    CHECK_MSG(rq_tile_bad(rq_tile_swapped, 2) > 0, "negative control: rows swapped unnoticed");
    CHECK_MSG(rq_tile_bad(rq_tile_late_zp, 2) > 0, "negative control: zero point after saturation unnoticed");
    CHECK_MSG(rq_tile_bad(rq_tile_half_away, 2) > 0, "negative control: ties away from zero unnoticed");
    CHECK_MSG(rq_row_bad(rq_row_swapped, 2) > 0, "negative control: row quarters swapped unnoticed");
}

/* Every nn_qconv_ops set the ISA level lists against plain loops: the depthwise tap kernel (exact
 * int32, odd and even tap counts, runs across the 16- and 8-wide steps), the requantization
 * (nn_q_round, saturating add, 8-bit saturation) on random and extreme accumulators, wrapping biases,
 * tiny and huge multipliers, and the packed-B interleave. */
static void test_qconv_ops(void) {
    const nn_qconv_ops *const *ops;
    const size_t n_ops = nn_qconv_ops_list(&ops);
    CHECK(n_ops >= 1 && ops[0] == nn_qconv_best_ops());
    int16_t x[600], w[80], pa[80], pb[80], pk[4 * 48];
    int32_t y[160], acc[40];
    size_t off[80];
    uint8_t d[40];
    for (size_t oi = 0; oi < n_ops; oi++) {
        size_t bad_dw = 0, bad_rq = 0, bad_pk = 0;
        for (int trial = 0; trial < 300; trial++) {
            const size_t n = 1 + rnd() % (trial % 2 ? 140 : 70), ntaps = trial % 50 == 0 ? 65 + rnd() % 10 : 1 + rnd() % 26;
            for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (int16_t)((int)(rnd() % 511) - 255);
            for (size_t t = 0; t < ntaps; t++) {
                w[t] = (int16_t)((int)(rnd() % 511) - 255);
                off[t] = rnd() % (sizeof x / sizeof x[0] - n + 1);
            }
            if (trial % 4 == 1 && ntaps <= 64) {   /* a kernel window: runs of neighbouring offsets, as conv planes give */
                const size_t kw = 1 + rnd() % 5, row = n + 3 + rnd() % 8, base = rnd() % 8, lim = sizeof x / sizeof x[0] - n;
                for (size_t t = 0; t < ntaps; t++) {
                    const size_t o = base + (t / kw) * row + t % kw;
                    off[t] = o <= lim ? o : rnd() % (lim + 1);
                }
                if (trial % 8 == 1) for (size_t t = 0; t + 1 < ntaps; t += 2) {   /* neighbours listed out of order */
                    const size_t tmp = off[t]; off[t] = off[t + 1]; off[t + 1] = tmp;
                }
            }
            if (trial % 3 == 0) for (size_t t = 0; t < ntaps; t++) { x[off[t]] = -255; w[t] = trial & 1 ? -255 : 255; }
            ops[oi]->dw_taps(y, n, x, off, ntaps, w);
            for (size_t o = 0; o < n; o++) {
                int32_t want = 0;
                for (size_t t = 0; t < ntaps; t++) want += x[off[t] + o] * w[t];
                bad_dw += y[o] != want;
            }
            const size_t nn = n % 40;
            for (size_t i = 0; i < nn; i++) {
                const uint32_t r = rnd();
                acc[i] = r % 7 == 0 ? (int32_t)(rnd() << 8) : r % 7 == 1 ? INT32_MAX - (int32_t)(rnd() % 3) : (int32_t)(r % 200001) - 100000;
            }
            const int32_t bias = trial % 5 == 0 ? INT32_MAX : (int32_t)(rnd() % 20001) - 10000;
            const float mult = trial % 7 == 0 ? 3e9f : trial % 7 == 1 ? 1e-9f : (float)(rnd() % 100000 + 1) * 1e-6f;
            const int sgn = trial & 1;
            const int32_t zp = sgn ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
            ops[oi]->rq_row(acc, nn, bias, mult, zp, sgn, d);
            for (size_t i = 0; i < nn; i++) {
                const int32_t a = (int32_t)((uint32_t)acc[i] + (uint32_t)bias);
                int32_t v = nn_q_add_sat(nn_q_round((float)a * mult), zp);
                v = sgn ? (v < -128 ? -128 : v > 127 ? 127 : v) : (v < 0 ? 0 : v > 255 ? 255 : v);
                bad_rq += (sgn ? (int32_t)(int8_t)d[i] : (int32_t)d[i]) != v;
            }
            const size_t np = 16 * (1 + rnd() % 4), ps = 48;
            for (size_t i = 0; i < np; i++) { pa[i] = (int16_t)(rnd() % 511) - 255; pb[i] = (int16_t)(rnd() % 511) - 255; }
            for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++) pk[i] = 7777;
            ops[oi]->pack2_16(pa, pb, np, pk, ps);
            for (size_t q = 0; q < np; q++)
                bad_pk += pk[(q / 16) * ps + 2 * (q % 16)] != pa[q] || pk[(q / 16) * ps + 2 * (q % 16) + 1] != pb[q];
            for (size_t q = 0; q < np / 16; q++)
                for (size_t i = 32; i < ps; i++) bad_pk += pk[q * ps + i] != 7777;   /* nothing past the panel row */
        }
        /* widening with the zero point subtracted, plain and deinterleaved, odd and even lengths, both signs */
        size_t bad_wd = 0;
        uint8_t src[100];
        int16_t wo[110], we[60], wod[60];
        for (int trial = 0; trial < 200; trial++) {
            const size_t n = rnd() % 100;
            const int sgn = trial & 1;
            const int32_t zp = sgn ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
            for (size_t i = 0; i < n; i++) src[i] = (uint8_t)rnd();
            for (size_t i = 0; i < 110; i++) wo[i] = 7777;
            for (size_t i = 0; i < 60; i++) we[i] = wod[i] = 7777;
            ops[oi]->widen(src, n, sgn, zp, wo);
            ops[oi]->widen2(src, n, sgn, zp, we, wod);
            for (size_t i = 0; i < n; i++) {
                const int16_t want = (int16_t)(ld8(src, sgn, i) - zp);
                bad_wd += wo[i] != want || (i & 1 ? wod[i / 2] : we[i / 2]) != want;
            }
            bad_wd += wo[n] != 7777 || we[(n + 1) / 2] != 7777 || wod[n / 2] != 7777;
        }
        /* per-column multipliers (QLinearMatMul): against the scalar expression, ties and saturation included */
        size_t bad_rc = 0;
        for (int trial = 0; trial < 300; trial++) {
            const size_t rows = 1 + rnd() % 6, cols = 1 + rnd() % 16, ldt = 16, ldd = 20;
            int32_t tacc[6 * 16];
            float tm[16];
            uint8_t td[6 * 20];
            const int sgn = trial & 1;
            const int32_t zp = sgn ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
            for (size_t i = 0; i < 6 * 16; i++)
                tacc[i] = rnd() % 9 == 0 ? (int32_t)(rnd() << 4) : (int32_t)(rnd() % 400001) - 200000;
            for (size_t q = 0; q < 16; q++)
                tm[q] = q == 3 && trial % 7 == 0 ? INFINITY : q == 5 && trial % 5 == 0 ? 0.5f
                                                            : (float)(rnd() % 100000 + 1) * 1e-6f;
            memset(td, 0xa5, sizeof td);
            ops[oi]->rq_tile_cols(tacc, ldt, rows, cols, tm, zp, sgn, td, ldd);
            for (size_t r = 0; r < rows; r++) {
                for (size_t q = 0; q < cols; q++) {
                    int32_t v = isfinite(tm[q]) ? nn_q_add_sat(nn_q_round((float)tacc[r * ldt + q] * tm[q]), zp) : INT32_MIN;
                    if (v == INT32_MIN) {   /* the portable expression decides */
                        uint8_t w;
                        nn_qrq_row_generic(tacc + r * ldt + q, 1, 0, tm[q], zp, sgn, &w);
                        bad_rc += td[r * ldd + q] != w;
                        continue;
                    }
                    v = sgn ? (v < -128 ? -128 : v > 127 ? 127 : v) : (v < 0 ? 0 : v > 255 ? 255 : v);
                    bad_rc += (sgn ? (int32_t)(int8_t)td[r * ldd + q] : (int32_t)td[r * ldd + q]) != v;
                }
                for (size_t q = cols; q < ldd; q++) bad_rc += td[r * ldd + q] != 0xa5;
            }
            for (size_t q = rows * ldd; q < sizeof td; q++) bad_rc += td[q] != 0xa5;
        }
        CHECK_MSG(bad_rc == 0, "%s: %zu per-column requantized values wrong", ops[oi]->name, bad_rc);
        /* the fused pointwise pack: lengths across the panel width, a missing second row, zero columns past n */
        for (int trial = 0; trial < 200; trial++) {
            const size_t n = 1 + rnd() % 60, ps = 40, panels = (n + 15) / 16;
            const int sgn = trial & 1, second = trial % 3 != 0;
            const int32_t zp = sgn ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
            uint8_t xa[64], xb[64];
            int16_t out8[4 * 40];
            for (size_t i = 0; i < 64; i++) { xa[i] = (uint8_t)rnd(); xb[i] = (uint8_t)rnd(); }
            for (size_t i = 0; i < 4 * 40; i++) out8[i] = 7777;
            ops[oi]->pack2_8(xa, second ? xb : NULL, n, sgn, zp, out8, ps);
            for (size_t q = 0; q < panels * 16; q++) {
                const int16_t wa = q < n ? (int16_t)(ld8(xa, sgn, q) - zp) : 0;
                const int16_t wb = q < n && second ? (int16_t)(ld8(xb, sgn, q) - zp) : 0;
                bad_wd += out8[(q / 16) * ps + 2 * (q % 16)] != wa || out8[(q / 16) * ps + 2 * (q % 16) + 1] != wb;
            }
            for (size_t p = 0; p < panels; p++)
                for (size_t i = 32; i < ps; i++) bad_wd += out8[p * ps + i] != 7777;
        }
        CHECK_MSG(bad_dw == 0 && bad_rq == 0 && bad_pk == 0 && bad_wd == 0,
                  "%s: %zu depthwise, %zu requantized, %zu packed, %zu widened/pointwise-packed values wrong", ops[oi]->name, bad_dw,
                  bad_rq, bad_pk, bad_wd);
    }
}

/* Every int GEMM kernel's half-width micro-kernel against its full one: the first nr / 2 columns
 * equal, nothing written past them. */
/* ---- the byte-plane depthwise kernels (nn_qconv_ops.dwr16) against a plain loop over nn_qdwr16_args ----
 * Geometries: 3x3 and 5x5 (two tap groups), kw up to 8, strides 1..4, row dilation, pads on every side
 * (columns and rows outside the plane read as fill), rows of 1..3 vectors with ragged tails; int8 input
 * (flip), requantized and int32 outputs. Negative control: one tap changed must change some output. */
static void dwr16_ref(const nn_qdwr16_args *a, uint8_t *y8, int32_t *y32) {
    for (size_t i = 0; i < a->oh; i++)
        for (size_t j = 0; j < a->ow; j++) {
            uint32_t acc = (uint32_t)a->bias;
            for (size_t r = 0; r < a->kh; r++)
                for (size_t t = 0; t < 4 * a->ng; t++) {
                    const int64_t ir = (int64_t)(i * a->sh + r * a->dh) - (int64_t)a->pt;
                    const int64_t ic = (int64_t)(j * a->sw + t) - (int64_t)a->pl;
                    const int in = ir >= 0 && ir < (int64_t)a->ih && ic >= 0 && ic < (int64_t)a->iw;
                    const uint8_t xb = (uint8_t)((in ? a->x[(size_t)ir * a->iw + (size_t)ic] : a->fill) ^ a->flip);
                    const int8_t wb = (int8_t)(uint8_t)((uint32_t)a->w[r * a->ng + t / 4] >> (8 * (t % 4)));
                    acc += (uint32_t)((int32_t)xb * wb);
                }
            if (y8) y8[i * a->ow + j] = (uint8_t)rq_want((int32_t)acc, 0, a->mult, a->yzp, a->y_signed);
            else y32[i * a->ow + j] = (int32_t)acc;
        }
}

static void test_dwr16(void) {
    const nn_qconv_ops *const *ops;
    const size_t n_ops = nn_qconv_ops_list(&ops);
    /* ih iw kh kw sh sw dh pt pl pb pr */
    static const size_t geo[][11] = {
        { 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1 }, { 57, 113, 3, 3, 2, 2, 1, 1, 1, 1, 1 }, { 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1 },
        { 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   { 20, 37, 5, 5, 2, 2, 1, 2, 2, 2, 2 },   { 9, 40, 5, 5, 1, 1, 2, 4, 2, 4, 2 },
        { 6, 70, 2, 7, 1, 3, 1, 0, 3, 1, 3 },  { 9, 70, 3, 4, 2, 4, 1, 1, 2, 1, 1 },    { 5, 20, 1, 3, 1, 1, 1, 0, 1, 0, 1 },
        { 3, 33, 3, 8, 1, 1, 1, 2, 7, 2, 0 },  { 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1 },     { 12, 16, 3, 3, 3, 3, 1, 0, 0, 0, 0 },
        { 11, 50, 5, 5, 1, 1, 1, 2, 2, 2, 2 },
    };
    for (size_t oi = 0; oi < n_ops; oi++) {
        if (!ops[oi]->dwr16) continue;
        size_t bad = 0, controls = 0;
        for (size_t gi = 0; gi < sizeof geo / sizeof geo[0]; gi++)
            for (int form = 0; form < 4; form++) {   /* bit 0: int8 input; bit 1: int32 output */
                const size_t *q = geo[gi];
                const size_t ih = q[0], iw = q[1], kh = q[2], kw = q[3], sh = q[4], sw = q[5], dh = q[6];
                const size_t oh = (ih + q[7] + q[9] - dh * (kh - 1) - 1) / sh + 1, ow = (iw + q[8] + q[10] - kw) / sw + 1;
                const size_t ng = (kw + 3) / 4;
                uint8_t *x = malloc(ih * iw), *y = malloc(oh * ow), *yr = malloc(oh * ow);
                int32_t *yi = malloc(oh * ow * sizeof(int32_t)), *yir = malloc(oh * ow * sizeof(int32_t)), w[32] = { 0 };
                for (size_t i = 0; i < ih * iw; i++) x[i] = (uint8_t)rnd();
                for (size_t r = 0; r < kh; r++)
                    for (size_t t = 0; t < kw; t++)
                        w[r * ng + t / 4] |= (int32_t)((rnd() & 255u) << (8 * (t % 4)));
                nn_qdwr16_args a = { x, ih, iw, oh, ow, kh, ng, sh, sw, dh, q[7], q[8], (uint8_t)rnd(),
                                     (uint8_t)(form & 1 ? 0x80 : 0), w, (int32_t)(rnd() % 200001) - 100000,
                                     0.0005f + (float)(rnd() % 100) * 1e-5f, (int32_t)(rnd() & 255) - (form & 1 ? 128 : 0),
                                     form & 1, form & 2 ? NULL : y, form & 2 ? yi : NULL };
                dwr16_ref(&a, form & 2 ? NULL : yr, yi ? yir : NULL);
                ops[oi]->dwr16(&a);
                for (size_t i = 0; i < oh * ow; i++)
                    bad += form & 2 ? yi[i] != yir[i] : y[i] != yr[i];
                /* the control: tap (kh - 1, kw - 1) one step off (its inputs are not all fill here) */
                w[(kh - 1) * ng + (kw - 1) / 4] ^= (int32_t)(1u << (8 * ((kw - 1) % 4)));
                ops[oi]->dwr16(&a);
                size_t diff = 0;
                for (size_t i = 0; i < oh * ow; i++) diff += form & 2 ? yi[i] != yir[i] : y[i] != yr[i];
                controls += diff > 0;   /* requantized outputs may absorb one step: only int32 ones must change */
                if (form & 2) CHECK_MSG(diff > 0, "%s: dwr16 negative control %zu unchanged", ops[oi]->name, gi);
                free(x); free(y); free(yr); free(yi); free(yir);
            }
        CHECK_MSG(bad == 0, "%s: dwr16 %zu outputs wrong", ops[oi]->name, bad);
        printf("%s: dwr16 against the plain loop on %zu geometries x 4 forms, %zu of %zu controls changed the output\n", ops[oi]->name,
               sizeof geo / sizeof geo[0], controls, 4 * sizeof geo / sizeof geo[0]);
    }
}

/* ---- the direct conv tiles (nn_qconv_ops.cdirect16) against a plain loop over nn_qcdirect_args ----
 * Random operands, offsets anywhere in the input (unaligned), 1..16 rows, 1..3 store segments (disjoint
 * masks and targets, bases before the row's start), signed and unsigned outputs; bytes outside the masks and rows
 * must stay as they were. Negative control: one weight byte one step off moves an output held mid-range. */
static void cdirect16_ref(const nn_qcdirect_args *a, uint8_t *y) {
    for (size_t r = 0; r < a->rows; r++)
        for (size_t j = 0; j < 16; j++) {
            uint32_t acc = (uint32_t)a->bias[r];
            for (size_t t = 0; t < a->nq; t++)
                for (size_t b = 0; b < 4; b++)
                    acc += (uint32_t)((int32_t)a->x[a->off[t] + 4 * j + b] * (int8_t)a->a[64 * t + 4 * r + b]);
            for (size_t sg = 0; sg < a->nseg; sg++)
                if (a->mask[sg] >> j & 1)
                    y[(ptrdiff_t)(r * a->ldy + j) + a->delta[sg]] = (uint8_t)rq_want((int32_t)acc, 0, a->mult[r], a->yzp, a->is_signed);
        }
}

static void test_cdirect16(void) {
    const nn_qconv_ops *const *ops;
    const size_t n_ops = nn_qconv_ops_list(&ops);
    enum { XN = 8192, LDY = 80, YN = 16 * LDY + 64 };
    for (size_t oi = 0; oi < n_ops; oi++) {
        if (!ops[oi]->cdirect16) continue;
        size_t bad = 0, controls = 0, cases = 0;
        for (int ci = 0; ci < 60; ci++, cases++) {
            const size_t nq = 1 + rnd() % 150, rows = 1 + (size_t)ci % 16, nseg = 1 + (size_t)ci % 3;
            uint8_t *a = malloc(nq * 64), *x = malloc(XN), *y = malloc(YN), *yr = malloc(YN);
            int32_t *off = malloc(nq * sizeof *off), bias[16];
            float mult[16];
            for (size_t i = 0; i < nq * 64; i++) a[i] = (uint8_t)rnd();
            for (size_t i = 0; i < XN; i++) x[i] = (uint8_t)rnd();
            for (size_t t = 0; t < nq; t++) off[t] = (int32_t)(rnd() % (XN - 64));
            for (size_t r = 0; r < 16; r++) {
                bias[r] = (int32_t)(rnd() % 400001) - 200000;
                mult[r] = 0.0002f + (float)(rnd() % 100) * 1e-5f;
            }
            for (size_t i = 0; i < YN; i++) y[i] = yr[i] = (uint8_t)rnd();
            nn_qcdirect_args g = { nq, a, x, off, bias, mult, (int32_t)(rnd() & 255) - (ci & 1 ? 128 : 0), ci & 1, rows,
                                   y + 32, LDY, nseg, { 0 }, { 0 } };
            /* segments: split the 16 columns at up to two random points, each piece shifted by its own delta,
             * one piece left out when there are three */
            size_t cut1 = 1 + rnd() % 15, cut2 = cut1 + 1 + rnd() % (16 - cut1);
            if (cut2 > 16) cut2 = 16;
            const size_t lo[3] = { 0, nseg == 1 ? 16 : cut1, cut2 }, hi[3] = { nseg == 1 ? 16 : cut1, nseg == 3 ? cut2 : 16, 16 };
            for (size_t sg = 0; sg < nseg; sg++) {
                g.mask[sg] = (uint16_t)(hi[sg] > lo[sg] && !(nseg == 3 && sg == 1) ? ((1u << hi[sg]) - 1u) & ~((1u << lo[sg]) - 1u) : 0);
                /* piece sg lands at 20 sg + 0..3 within the row: disjoint, and its delta below 0 when lo > 3 */
                g.delta[sg] = (ptrdiff_t)(20 * sg + rnd() % 4) - (ptrdiff_t)lo[sg];
            }
            g.y = y + 32;
            nn_qcdirect_args gr = g;
            gr.y = yr + 32;
            cdirect16_ref(&gr, yr + 32);
            ops[oi]->cdirect16(&g);
            for (size_t i = 0; i < YN; i++) bad += y[i] != yr[i];
            /* the control: row 0 held at the middle of the range by its bias, then its first weight byte moved
             * by one against a nonzero input byte */
            if (g.mask[0]) {
                size_t j0 = 0;
                while (!(g.mask[0] >> j0 & 1)) j0++;
                x[off[0] + 4 * j0] |= 1;
                uint32_t acc = 0;
                for (size_t t = 0; t < nq; t++)
                    for (size_t b = 0; b < 4; b++) acc += (uint32_t)((int32_t)x[off[t] + 4 * j0 + b] * (int8_t)a[64 * t + b]);
                bias[0] = -(int32_t)acc;
                mult[0] = 1.0f;
                g.yzp = ci & 1 ? 0 : 100;
                ops[oi]->cdirect16(&g);
                const uint8_t before = y[32 + j0 + (size_t)g.delta[0]];
                a[0] = (uint8_t)((int8_t)a[0] == 127 ? 126 : a[0] + 1);
                ops[oi]->cdirect16(&g);
                controls += y[32 + j0 + (size_t)g.delta[0]] != before;
                CHECK_MSG(y[32 + j0 + (size_t)g.delta[0]] != before, "%s: cdirect16 negative control %d unchanged",
                          ops[oi]->name, ci);
            }
            free(a); free(x); free(y); free(yr); free(off);
        }
        CHECK_MSG(bad == 0, "%s: cdirect16 %zu bytes wrong", ops[oi]->name, bad);
        printf("%s: cdirect16 against the plain loop on %zu tiles, %zu controls changed the output\n", ops[oi]->name,
               cases, controls);
    }
}

static void test_igemm_half(void) {
    const nn_igemm_kernel *const *ks;
    const size_t nk = nn_igemm_kernels(&ks);
    for (size_t ki = 0; ki < nk; ki++) {
        const nn_igemm_kernel *k = ks[ki];
        if (k->quad) continue;   /* byte kernels: MatMul-like ops only, no half width */
        CHECK_MSG(k->ukr_half != NULL, "%s has no half-width micro-kernel", k->name);
        if (!k->ukr_half) continue;
        size_t bad = 0;
        for (int trial = 0; trial < 50; trial++) {
            const size_t kp2 = 1 + rnd() % 40, lda = 2 * kp2 + rnd() % 3;
            int16_t *a = malloc(k->mr * lda * sizeof *a), *b = malloc(kp2 * 2 * k->nr * sizeof *b);
            int32_t *full = malloc(k->mr * k->nr * sizeof *full), *half = malloc(k->mr * k->nr * sizeof *half);
            for (size_t i = 0; i < k->mr * lda; i++) a[i] = (int16_t)((int)(rnd() % 511) - 255);
            for (size_t i = 0; i < kp2 * 2 * k->nr; i++) b[i] = (int16_t)((int)(rnd() % 511) - 255);
            for (size_t i = 0; i < k->mr * k->nr; i++) half[i] = 0x5a5a5a5a;
            k->ukr(kp2, a, lda, b, full, k->nr);
            k->ukr_half(kp2, a, lda, b, half, k->nr);
            for (size_t i = 0; i < k->mr; i++)
                for (size_t j = 0; j < k->nr; j++)
                    bad += j < k->nr / 2 ? half[i * k->nr + j] != full[i * k->nr + j] : half[i * k->nr + j] != 0x5a5a5a5a;
            free(a); free(b); free(full); free(half);
        }
        CHECK_MSG(bad == 0, "%s: %zu half-width values wrong", k->name, bad);
    }
}

/* The conv byte kernels (int_gemm.h quad 2) against a plain loop: int8 weights in the interleaved tiles,
 * uint8 activation panels, zero points on both sides (the corrections), K quads 1..80; a corrupted weight
 * must show up (the comparison can fail). Also each ISA's quad4 against the portable one. */
/* byte p of weight row i in the kernel's A: interleaved by quad, or whole rows (a_rows) */
#define AIDX(i, p) (k->a_rows ? (i) * kq + (p) : ((p) / 4) * 4 * mr + 4 * (i) + (p) % 4)
static void test_conv_byte_kernels(void) {
    const nn_igemm_kernel *const *ks;
    const size_t nk = nn_igemm_conv_kernels(&ks);
    for (size_t ki = 0; ki < nk; ki++) {
        const nn_igemm_kernel *k = ks[ki];
        const size_t mr = k->mr, nr = k->nr;
        size_t bad = 0, caught = 0;
        for (int trial = 0; trial < 60; trial++) {
            const size_t kq4 = 1 + rnd() % 80, kq = 4 * kq4;
            int8_t *a = malloc(mr * kq), *b = malloc(nr * kq);
            int32_t *c = malloc(mr * (nr + 3) * sizeof *c), rz[2 * 64], cz[2 * 16];
            for (size_t i = 0; i < mr * kq; i++) a[i] = (int8_t)rnd();
            for (size_t i = 0; i < nr * kq; i++) b[i] = (int8_t)rnd();
            if (trial % 3 == 0)
                for (size_t i = 0; i < mr * kq; i++) a[i] = (int8_t)(rnd() & 1 ? -128 : 127);
            if (trial % 4 == 0)
                for (size_t i = 0; i < nr * kq; i++) b[i] = (int8_t)(uint8_t)(rnd() & 1 ? 255 : 0);
            for (size_t i = 0; i < mr; i++) {
                rz[2 * i] = trial & 1 ? (int32_t)(rnd() % 256) - 128 : 0;
                uint32_t sa = 0;
                for (size_t p = 0; p < kq; p++) sa += (uint32_t)(a[AIDX(i, p)] - rz[2 * i]);
                rz[2 * i + 1] = (int32_t)sa;
            }
            for (size_t j = 0; j < nr; j++) {
                uint32_t sb = 0;
                for (size_t p = 0; p < kq; p++) sb += ((const uint8_t *)b)[(p / 4) * 4 * nr + 4 * j + p % 4];
                cz[j] = (int32_t)(rnd() % 256);
                cz[nr + j] = (int32_t)sb;
            }
            for (int neg = 0; neg < 2; neg++) {
                if (neg) a[rnd() % (mr * kq)] ^= 0x11;   /* the negative control: one weight changed */
                if (k->qbegin) k->qbegin();
                k->qukr(kq4, (const uint8_t *)a, kq, b, c, nr + 3, rz, cz);
                if (k->qend) k->qend();
                size_t diff = 0;
                for (size_t i = 0; i < mr; i++)
                    for (size_t j = 0; j < nr; j++) {
                        uint32_t want = 0;
                        for (size_t p = 0; p < kq; p++)
                            want += (uint32_t)((a[AIDX(i, p)] - rz[2 * i]) *
                                               ((int32_t)((const uint8_t *)b)[(p / 4) * 4 * nr + 4 * j + p % 4] - cz[j]));
                        diff += c[i * (nr + 3) + j] != (int32_t)want;
                    }
                if (neg) caught += diff != 0;
                else bad += diff;
                if (neg) break;
                if (k->qukr_rq && nr == 16) {   /* requantized in registers: rq_row's bytes, only `rows` rows */
                    const size_t rows = 1 + (size_t)trial % mr, ldy = nr + 5;
                    int32_t bias[16];
                    float mult[16];
                    for (size_t i = 0; i < mr; i++) {
                        bias[i] = (int32_t)(rnd() % 20001) - 10000;
                        mult[i] = (float)(rnd() % 1000 + 1) * (trial % 5 == 0 ? 1e-3f : 1e-6f);
                    }
                    const int32_t yzp = (int32_t)(rnd() % 256) - (trial & 2 ? 128 : 0);
                    const int sgn = (trial & 2) != 0;
                    uint8_t got[16 * 21], want[16 * 21];
                    memset(got, 0xa5, sizeof got);
                    memset(want, 0xa5, sizeof want);
                    for (size_t i = 0; i < rows; i++)
                        nn_qrq_row_generic(c + i * (nr + 3), nr, trial & 1 ? bias[i] : 0, mult[i], yzp, sgn, want + i * ldy + 2);
                    const nn_igemm_rq rq = { trial & 1 ? bias : NULL, mult, yzp, sgn, got, ldy, 0 };
                    k->qukr_rq(kq4, (const uint8_t *)a, b, rz, cz, &rq, 0, rows, 2);   /* at column 2 of y */
                    CHECK_MSG(!memcmp(got, want, sizeof got), "%s: the tile requantized in registers differs (%zu rows)",
                              k->name, rows);
                    /* folded: the raw sums plus a bias that carries the corrections (every 16 rows on odd trials) */
                    const size_t frows = trial & 1 ? 16 : rows;
                    int32_t fb[16], raw[16];
                    memset(got, 0xa5, sizeof got);
                    memset(want, 0xa5, sizeof want);
                    for (size_t i = 0; i < frows; i++) {
                        fb[i] = (int32_t)(rnd() % 2000001) - 1000000;
                        for (size_t j = 0; j < nr; j++)
                            raw[j] = (int32_t)((uint32_t)c[i * (nr + 3) + j] + (uint32_t)rz[2 * i + 1] * (uint32_t)cz[j] +
                                               (uint32_t)rz[2 * i] * (uint32_t)cz[16 + j]);
                        nn_qrq_row_generic(raw, nr, fb[i], mult[i], yzp, sgn, want + i * ldy + 2);
                    }
                    const nn_igemm_rq frq = { fb, mult, yzp, sgn, got, ldy, 1 };
                    k->qukr_rq(kq4, (const uint8_t *)a, b, rz, cz, &frq, 0, frows, 2);
                    CHECK_MSG(!memcmp(got, want, sizeof got), "%s: the folded tile requantized in registers differs "
                              "(%zu rows)", k->name, frows);
                }
                if (k->qukr_top) {   /* the top half: the full tile's first mr / 2 rows, nothing below them */
                    int32_t *top = malloc(mr * (nr + 3) * sizeof *top);
                    for (size_t i = 0; i < mr * (nr + 3); i++) top[i] = 0x5a5a5a5a;
                    if (k->qbegin) k->qbegin();
                    k->qukr_top(kq4, (const uint8_t *)a, kq, b, top, nr + 3, rz, cz);
                    if (k->qend) k->qend();
                    size_t tbad = 0;
                    for (size_t i = 0; i < mr; i++)
                        for (size_t j = 0; j < nr; j++)
                            tbad += top[i * (nr + 3) + j] != (i < mr / 2 ? c[i * (nr + 3) + j] : 0x5a5a5a5a);
                    CHECK_MSG(tbad == 0, "%s: %zu values of the top-half tile wrong", k->name, tbad);
                    free(top);
                }
                if (k->qukr_cols) {   /* the narrow-edge tile: its first n columns, nothing past them */
                    const size_t n = 1 + (size_t)trial % k->cols_max;
                    int32_t *full = malloc(mr * (nr + 3) * sizeof *full);
                    memcpy(full, c, mr * (nr + 3) * sizeof *full);
                    for (size_t i = 0; i < mr * (nr + 3); i++) c[i] = 0x5a5a5a5a;
                    k->qukr_cols(kq4, (const uint8_t *)a, b, n, c, nr + 3, rz, cz);
                    size_t cbad = 0;
                    for (size_t i = 0; i < mr; i++)
                        for (size_t j = 0; j < nr + 3; j++)
                            cbad += c[i * (nr + 3) + j] != (j < n ? full[i * (nr + 3) + j] : 0x5a5a5a5a);
                    CHECK_MSG(cbad == 0, "%s: %zu values of the %zu-column edge tile wrong", k->name, cbad, n);
                    free(full);
                }
            }
            free(a); free(b); free(c);
        }
        CHECK_MSG(bad == 0, "%s: %zu values wrong", k->name, bad);
        CHECK_MSG(caught == 60, "%s: a corrupted weight went unnoticed in %d of 60 trials", k->name, 60 - (int)caught);
    }
    const nn_qconv_ops *const *ops;
    const size_t no = nn_qconv_ops_list(&ops);
    for (size_t oi = 0; oi < no; oi++) {
        size_t bad = 0;
        for (int trial = 0; trial < 50; trial++) {
            const size_t n = 16 * (1 + rnd() % 12), ps = 72;   /* 64-column steps and 16-column tails */
            const uint8_t flip = trial & 1 ? 0x80 : 0;
            uint8_t r[4][192], got[12 * 72], want[12 * 72];
            for (size_t i = 0; i < 4 * 192; i++) r[i / 192][i % 192] = (uint8_t)rnd();
            memset(got, 0xa5, sizeof got);
            memset(want, 0xa5, sizeof want);
            ops[oi]->quad4(r[0], r[1], r[2], r[3], n, flip, got, ps);
            nn_qquad4_generic(r[0], r[1], r[2], r[3], n, flip, want, ps);
            bad += memcmp(got, want, sizeof got) != 0;
            if (oi == 0 && trial == 0) {   /* and the portable one against the layout written out */
                for (size_t q = 0; q < n; q++)
                    for (size_t i = 0; i < 4; i++) bad += want[(q / 16) * ps + 4 * (q % 16) + i] != (uint8_t)(r[i][q] ^ flip);
            }
        }
        CHECK_MSG(bad == 0, "%s: quad4 wrong in %zu trials", ops[oi]->name, bad);
    }
}

/* Q(Mul(DQ, DQ)) -> com.microsoft.QLinearMul: both products of the GELU model fused (one with a
 * one-element side), within the same distance of level 0 as the other fused ops. */
static void test_qdq_model_mul(const char *file, const int64_t *shape, size_t rank) {
    char path[256];
    snprintf(path, sizeof path, "tests/models/%s", file);
    cort_session *s2 = open_at(path, 2);
    if (!s2) return;
    CHECK_MSG(count_op(s2, "QLinearMul") == 2 && count_op(s2, "Mul") == 0, "%s: level 2 runs %zu QLinearMul and %zu Mul "
              "(expected 2 and 0)", file, count_op(s2, "QLinearMul"), count_op(s2, "Mul"));
    cort_session_release(s2);
    test_qdq_model_add(file, shape, rank, 0.05f, 0, 0, 0, 0, 1);
}

/* Q(elementwise chain(DQ(x))) -> cort.QLut: both chains of the model become byte tables, whose outputs
 * are level 0's: the table holds what the same kernels compute for each byte. */
static void test_qdq_model_lut(const char *file, const int64_t *shape, size_t rank) {
    char path[256];
    snprintf(path, sizeof path, "tests/models/%s", file);
    cort_session *s2 = open_at(path, 2);
    if (!s2) return;
    CHECK_MSG(count_op(s2, "QLut") == 2 && count_op(s2, "Erf") == 0 && count_op(s2, "Sigmoid") == 0,
              "%s: level 2 runs %zu QLut, %zu Erf, %zu Sigmoid (expected 2, 0, 0)", file, count_op(s2, "QLut"),
              count_op(s2, "Erf"), count_op(s2, "Sigmoid"));
    cort_session_release(s2);
    test_qdq_model_add(file, shape, rank, 1.0f / 250, 0, 0, 0, 0, 1);
}

static void test_qdq_model(const char *file, const int64_t *shape, size_t rank, float out_scale, size_t qconv,
                           size_t qmm, size_t conv_left, size_t q_left) {
    test_qdq_model_add(file, shape, rank, out_scale, qconv, qmm, 0, conv_left, q_left);
}

int main(void) {
    test_qconv_ops();
    test_qrq_tile();
    test_igemm_half();
    test_dwr16();
    test_cdirect16();
    test_conv_byte_kernels();
    static const qcase cases[] = {
        /* nd  N  C  M  grp   in          k          s          pb         pe         d       xs ws ys xz wz bias */
        { 2, 1, 8, 16, 1, { 5, 7, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 2, 3, 5, 1, { 9, 11, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 0, 0, 1, 1, 1 },
        { 2, 1, 7, 19, 1, { 13, 10, 1 }, { 3, 2, 1 }, { 2, 1, 1 }, { 1, 0, 0 }, { 2, 1, 0 }, { 1, 2, 1 }, 1, 1, 1, 1, 2, 0 },
        { 2, 1, 6, 6, 3, { 8, 8, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 1, 1, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 1, 0, 0, 0, 2, 1 },
        { 2, 2, 12, 12, 12, { 9, 7, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 1, 8, 16, 8, { 10, 10, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 1, 1 },
        { 2, 1, 5, 5, 5, { 11, 9, 1 }, { 5, 5, 1 }, { 1, 2, 1 }, { 2, 2, 0 }, { 2, 1, 0 }, { 2, 1, 1 }, 0, 0, 1, 0, 0, 0 },
        { 2, 1, 4, 33, 1, { 6, 5, 1 }, { 1, 1, 1 }, { 2, 2, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 1, 1 },
        { 2, 1, 37, 20, 1, { 7, 9, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 0, 1, 0 }, { 2, 0, 0 }, { 1, 1, 1 }, 1, 1, 0, 1, 2, 1 },
        { 2, 1, 64, 70, 1, { 14, 14, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 1, 3, 1, 1, { 4, 4, 1 }, { 4, 4, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 0, 0, 0, 1, 0, 0 },
        { 1, 2, 6, 9, 3, { 17, 1, 1 }, { 3, 1, 1 }, { 2, 1, 1 }, { 1, 0, 0 }, { 1, 0, 0 }, { 2, 1, 1 }, 0, 1, 1, 1, 2, 1 },
        { 1, 1, 4, 4, 4, { 12, 1, 1 }, { 3, 1, 1 }, { 1, 1, 1 }, { 1, 0, 0 }, { 1, 0, 0 }, { 1, 1, 1 }, 1, 0, 0, 1, 2, 1 },
        { 2, 1, 16, 32, 16, { 6, 21, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 2, 0 }, { 1, 2, 0 }, { 1, 2, 1 }, 0, 1, 1, 1, 2, 1 },
        { 2, 2, 8, 8, 8, { 5, 33, 1 }, { 1, 5, 1 }, { 1, 1, 1 }, { 0, 2, 0 }, { 0, 2, 0 }, { 1, 1, 1 }, 1, 0, 0, 1, 1, 0 },
        { 3, 1, 3, 4, 1, { 4, 5, 6 }, { 2, 3, 3 }, { 1, 2, 1 }, { 0, 1, 1 }, { 1, 1, 0 }, { 1, 1, 2 }, 0, 1, 0, 1, 2, 1 },
        { 3, 1, 4, 8, 4, { 3, 5, 5 }, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, 1, 1, 1, 1, 2, 0 },
        /* depthwise as mobilenet has it: stride 2 (phase split, pads odd and even) and 1, rows wider than one vector */
        { 2, 1, 6, 6, 6, { 40, 37, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 2, 4, 4, 4, { 21, 34, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 0, 0, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 2, 1 },
        { 2, 1, 5, 10, 5, { 19, 30, 1 }, { 5, 3, 1 }, { 2, 3, 1 }, { 2, 1, 0 }, { 1, 2, 0 }, { 2, 2, 1 }, 0, 0, 0, 1, 2, 1 },
        { 2, 1, 3, 3, 3, { 30, 50, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        /* small planes (the channel-lane kernel where the level has one): 37 channels (a ragged group of 5),
         * 5x5 stride 2 with dilation and uneven pads, a plane smaller than the kernel's reach, int8 in and out,
         * and 17x17 = 289 taps (above the lanes' exact bound: the per-plane path) */
        { 2, 2, 37, 37, 37, { 7, 7, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 1, 20, 20, 20, { 13, 10, 1 }, { 5, 5, 1 }, { 2, 1, 1 }, { 2, 1, 0 }, { 1, 3, 0 }, { 1, 2, 1 }, 1, 1, 1, 1, 2, 1 },
        { 2, 1, 16, 16, 16, { 4, 3, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 0, 1, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, 1, 0, 1, 1, 1, 0 },
        { 2, 1, 3, 3, 3, { 9, 9, 1 }, { 17, 17, 1 }, { 1, 1, 1 }, { 8, 8, 0 }, { 8, 8, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        /* the direct path (cdirect16 where the ops have one; at 3 threads, and at 1 for a long K over wide
         * rows): 7 channels (a ragged quad) into 20 (a ragged tile) over 2 images, 5x5 int8 in and out with
         * rows 10 wide (16 positions meet three grid rows), 1x3 with uneven pads into 33 (7 channels), K 576 at 1 thread */
        { 2, 2, 7, 20, 1, { 9, 13, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 0, 1 },
        { 2, 1, 12, 16, 1, { 6, 6, 1 }, { 5, 5, 1 }, { 1, 1, 1 }, { 2, 2, 0 }, { 2, 2, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 0, 0 },
        { 2, 1, 7, 33, 1, { 10, 21, 1 }, { 1, 3, 1 }, { 1, 1, 1 }, { 0, 1, 0 }, { 0, 2, 0 }, { 1, 1, 1 }, 0, 1, 1, 1, 0, 1 },
        { 2, 1, 64, 18, 1, { 3, 62, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 0, 0, 0, 1 },
        /* ... at strides 2 and 3 (phase planes): 7x7 over 13 channels (a ragged quad), 3x3 with uneven pads,
         * 5x5 stride 3, a 2x2 kernel at stride 2 (taps in one phase of each) and odd padded sizes */
        { 2, 1, 13, 16, 1, { 30, 34, 1 }, { 7, 7, 1 }, { 2, 2, 1 }, { 3, 3, 0 }, { 3, 2, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 0, 1 },
        { 2, 2, 7, 17, 1, { 15, 40, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 0, 0 },
        { 2, 1, 10, 20, 1, { 17, 50, 1 }, { 5, 5, 1 }, { 3, 3, 1 }, { 2, 2, 0 }, { 1, 2, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 0, 1 },
        { 2, 1, 8, 16, 1, { 9, 33, 1 }, { 2, 2, 1 }, { 2, 2, 1 }, { 0, 0, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 0, 0, 0, 1 },
        /* symmetric int8 weights (the byte-plane kernel where the ops have one): 3x3 stride 1 and 2 with
         * ragged rows, int8 in and out, 5x5 with row dilation and channel multiplier 2, kw 7 at stride 3,
         * kw 4 at stride 4 with uneven pads, a single kernel row */
        { 2, 1, 16, 16, 16, { 30, 37, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 0, 1 },
        { 2, 2, 8, 8, 8, { 33, 70, 1 }, { 3, 3, 1 }, { 2, 2, 1 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 0, 1 },
        { 2, 1, 5, 10, 5, { 19, 40, 1 }, { 5, 5, 1 }, { 2, 2, 1 }, { 4, 2, 0 }, { 1, 2, 0 }, { 2, 1, 1 }, 0, 1, 0, 1, 0, 1 },
        { 2, 1, 3, 3, 3, { 12, 80, 1 }, { 2, 7, 1 }, { 1, 3, 1 }, { 0, 3, 0 }, { 1, 3, 0 }, { 1, 1, 1 }, 1, 1, 0, 1, 0, 0 },
        { 2, 1, 4, 4, 4, { 9, 70, 1 }, { 3, 4, 1 }, { 2, 4, 1 }, { 1, 2, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 1, 0, 0, 1 },
        { 2, 1, 3, 3, 3, { 5, 20, 1 }, { 1, 3, 1 }, { 1, 1, 1 }, { 0, 1, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 0, 1 },
        /* a padded plane above the size padded per thread (all planes padded first), and channel multiplier 2 */
        { 2, 1, 2, 4, 2, { 258, 262, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 0, 1, 2, 1 },
        /* rows longer than the depthwise buffer (split within the row), 1-D */
        { 1, 1, 2, 2, 2, { 4500, 1, 1 }, { 3, 1, 1 }, { 1, 1, 1 }, { 1, 0, 0 }, { 1, 0, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 1, 1, 2, 4, 2, { 4500, 1, 1 }, { 4, 1, 1 }, { 2, 1, 1 }, { 2, 0, 0 }, { 1, 0, 0 }, { 1, 1, 1 }, 1, 0, 1, 1, 2, 1 },
        /* dense 3x3 stride 1 (the Winograd path): odd output dims, pads 0..2, C odd and above one chunk of pairs,
         * M not a multiple of the row tile, tile rows longer than one panel */
        { 2, 1, 19, 13, 1, { 11, 37, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 0, 0 }, { 2, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 2, 8, 7, 1, { 6, 6, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 1, 1 },
        { 2, 1, 3, 4, 1, { 40, 34, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 0, 1, 2, 1 },
        { 2, 1, 2, 3, 1, { 3, 3, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 0, 0, 0, 1, 2, 0 },
        /* u8 weights whose bound 9 * C * 255 * max|w - w_zp| passes 2^29: the direct GEMM instead */
        { 2, 1, 1040, 2, 1, { 3, 3, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 0, 0, 1, 0, 1 },
        /* the byte path with K 2304 over 9 panels (a ragged last one) and over 36 */
        { 2, 1, 256, 20, 1, { 12, 11, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 0, 1, 2, 1 },
        { 2, 1, 256, 20, 1, { 24, 24, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 0, 1, 1, 1, 2, 1 },
        /* the byte path's shifted planes: a stem-like 7x7 stride 2, stride 3 with dilation, stride 2 with dilation 2
         * (one phase), asymmetric pads, u8 weights with per-channel zero points */
        { 2, 1, 3, 20, 1, { 23, 21, 1 }, { 7, 7, 1 }, { 2, 2, 1 }, { 3, 3, 0 }, { 2, 3, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        { 2, 1, 5, 17, 1, { 19, 29, 1 }, { 3, 3, 1 }, { 2, 3, 1 }, { 1, 2, 0 }, { 0, 1, 0 }, { 2, 2, 1 }, 1, 0, 1, 1, 2, 1 },
        { 2, 2, 6, 18, 2, { 15, 34, 1 }, { 3, 3, 1 }, { 1, 2, 1 }, { 2, 2, 0 }, { 1, 2, 0 }, { 1, 2, 1 }, 0, 0, 0, 1, 2, 0 },
        { 2, 1, 35, 40, 1, { 40, 40, 1 }, { 3, 3, 1 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 1, 0 }, { 1, 1, 1 }, 1, 1, 1, 1, 1, 1 },
        /* column stride above the padded width: phases past the last input column hold only padding */
        { 2, 1, 4, 8, 1, { 7, 2, 1 }, { 2, 2, 1 }, { 3, 4, 1 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, 0, 1, 0, 1, 2, 1 },
        /* strided 1x1 (a shifted plane that is its im2col) with padding */
        { 2, 1, 24, 20, 1, { 13, 11, 1 }, { 1, 1, 1 }, { 2, 2, 1 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 1 }, 1, 0, 0, 1, 2, 1 },
        /* pointwise with a plane that is not a multiple of the panel width, odd K */
        { 2, 2, 33, 20, 1, { 19, 23, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 1, 1, 0, 1, 2, 1 },
        { 2, 1, 16, 24, 2, { 20, 20, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, 0, 1, 1, 1, 2, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], (int)i);
    test_qdq_model("qdq_conv_u8s8_perchannel.onnx", (const int64_t[]){ 1, 3, 17, 15 }, 4, 0.05f, 4, 0, 0, 1);
    test_qdq_model("qdq_conv_u8u8_pertensor.onnx", (const int64_t[]){ 2, 3, 12, 12 }, 4, 0.05f, 4, 0, 0, 1);
    test_qdq_model("qdq_conv_s8s8_perchannel.onnx", (const int64_t[]){ 1, 3, 16, 16 }, 4, 0.05f, 4, 0, 0, 1);
    test_qdq_model("qdq_matmul_u8s8.onnx", (const int64_t[]){ 2, 5, 20 }, 3, 0.03f, 0, 1, 0, 1);
    test_qdq_model("qdq_matmul_u8s8_percolumn.onnx", (const int64_t[]){ 2, 5, 20 }, 3, 0.03f, 0, 1, 0, 1);
    /* residual Add (+ Relu) of two differently scaled branches, then a broadcast Add of a constant:
     * com.microsoft.QLinearAdd from its creation-time table */
    test_qdq_model_add("qdq_residual_add_u8.onnx", (const int64_t[]){ 1, 3, 11, 13 }, 4, 0.07f, 2, 0, 2, 0, 1);
    /* a Concat of differently quantized inputs: com.microsoft.QLinearConcat from per-input tables, the
     * same bytes as the float Concat between DQ and Q (only the convs' own ties may differ) */
    test_qdq_model("qdq_concat_mixed.onnx", (const int64_t[]){ 2, 3, 7, 9 }, 4, 0.037f, 2, 0, 0, 1);
    test_qdq_model_add("qdq_residual_add_s8.onnx", (const int64_t[]){ 2, 3, 9, 8 }, 4, 0.07f, 2, 0, 2, 0, 1);
    test_qdq_model_mul("qdq_gelu_mul_u8.onnx", (const int64_t[]){ 1, 3, 12, 13 }, 4);
    test_qdq_model_mul("qdq_gelu_mul_s8.onnx", (const int64_t[]){ 2, 3, 9, 11 }, 4);
    test_qdq_model_lut("qdq_erf_chain_u8.onnx", (const int64_t[]){ 3, 7, 11 }, 3);
    test_qdq_model_lut("qdq_erf_chain_s8.onnx", (const int64_t[]){ 2, 5, 13 }, 3);
    /* a float bias and a Relu that clamps above the zero point's saturation: left as float convs */
    test_qdq_model("qdq_unfusible.onnx", (const int64_t[]){ 1, 3, 9, 9 }, 4, 0.05f, 0, 0, 2, 3);
    /* MaxPool and Concat between equal Q/DQ parameters: run on the 8-bit values, only the input's Q left */
    test_qdq_model("qdq_pool_concat.onnx", (const int64_t[]){ 1, 3, 10, 11 }, 4, 0.05f, 2, 0, 0, 1);
    return tu_finish();
}
