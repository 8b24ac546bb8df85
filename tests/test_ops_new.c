/* Operators ONNX added after opset 17 that cort lacked: CumProd, Col2Im, DeformConv, AffineGrid,
 * TensorScatter, StringConcat, StringSplit, RegexFullMatch and ImageDecoder. Each runs as a
 * single-node model built in memory against an independent reference: naive loops written
 * the other way round (gather instead of scatter, products from the definition), DeformConv
 * with zero offsets against cort's own Conv, AffineGrid against PyTorch's affine_grid,
 * StringSplit and RegexFullMatch against Python's str.split and re.fullmatch, ImageDecoder
 * against images this test encodes itself (PNG, BMP, PNM exactly; JPEG within the codec's
 * error) and then truncates and corrupts. Every op also gets an allocation-failure walk. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/types.h"
#include "core/value.h"
#ifdef CORT_HAVE_JPEG
#include <stdio.h>
#include <jpeglib.h>
#endif
#ifdef CORT_HAVE_PNG
#include <png.h>
#endif
#ifdef CORT_HAVE_WEBP
#include <webp/encode.h>
#endif

/* CHECK as an expression, for conditions that guard further checks */
#define ECHECK(c) echeck((c), __FILE__, __LINE__, #c)
static int echeck(int c, const char *file, int line, const char *expr) {
    if (c) tu_passed++;
    else { tu_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr); }
    return c;
}

static uint32_t rng = 12345;
static uint32_t urand(uint32_t n) { rng = rng * 1664525u + 1013904223u; return (rng >> 8) % n; }
static double frand(void) { return (double)urand(1u << 20) / (double)(1u << 20) * 2.0 - 1.0; }

/* ---------------- single-node models (pb_* writer: testutil.h) ---------------- */
static void pb_value_info(pb *g, int field, const char *name, int elem) {
    pb vi = { 0 }, tp = { 0 }, tt = { 0 };
    pb_str(&vi, 1, name);
    pb_int(&tt, 1, elem);
    pb_sub(&tp, 1, &tt);
    pb_sub(&vi, 2, &tp);
    pb_sub(g, field, &vi);
}
/* type: 2 int, 3 string, 7 ints */
typedef struct attr_spec { const char *name; int type; int64_t i; const int64_t *ints; size_t n; const char *s; } attr_spec;

typedef struct node_spec {
    const char *op;
    const char *const *in, *const *out;   /* NULL-terminated names ("" = missing input) */
    const attr_spec *attrs;
    int n_attrs;
} node_spec;

static void pb_node(pb *g, const node_spec *ns, const char *name) {
    pb node = { 0 };
    for (const char *const *s = ns->in; *s; s++) pb_str(&node, 1, *s);
    for (const char *const *s = ns->out; *s; s++) pb_str(&node, 2, *s);
    pb_str(&node, 3, name);
    pb_str(&node, 4, ns->op);
    for (int a = 0; a < ns->n_attrs; a++) {
        pb at = { 0 };
        pb_str(&at, 1, ns->attrs[a].name);
        pb_int(&at, 20, ns->attrs[a].type);
        if (ns->attrs[a].type == 2) pb_int(&at, 3, ns->attrs[a].i);
        if (ns->attrs[a].type == 3) pb_str(&at, 4, ns->attrs[a].s);
        if (ns->attrs[a].type == 7) for (size_t k = 0; k < ns->attrs[a].n; k++) pb_int(&at, 8, ns->attrs[a].ints[k]);
        pb_sub(&node, 5, &at);
    }
    pb_sub(g, 1, &node);
}

/* A graph of the given nodes with inputs x0.. and outputs y0.. (element types given). */
static void *make_graph(int opset, const node_spec *nodes, int n_nodes, int n_in, const int *in_elem, int n_out, const int *out_elem,
                        size_t *len) {
    pb m = { 0 }, g = { 0 }, os = { 0 };
    char name[16];
    pb_int(&m, 1, 8);
    pb_str(&os, 1, "");
    pb_int(&os, 2, opset);
    pb_sub(&m, 8, &os);
    for (int k = 0; k < n_nodes; k++) { snprintf(name, sizeof name, "node%d", k); pb_node(&g, &nodes[k], name); }
    pb_str(&g, 2, "g");
    for (int i = 0; i < n_in; i++) { snprintf(name, sizeof name, "x%d", i); pb_value_info(&g, 11, name, in_elem[i]); }
    for (int i = 0; i < n_out; i++) { snprintf(name, sizeof name, "y%d", i); pb_value_info(&g, 12, name, out_elem[i]); }
    pb_sub(&m, 7, &g);
    *len = m.n;
    return m.p;
}

static const char *const XN[] = { "x0", "x1", "x2", "x3", "x4", NULL };
static const char *const YN[] = { "y0", "y1", NULL };

/* One node reading x0..x{n_in-1} (an entry of `skip` >= 0 leaves that input missing). */
static void *make_model(const char *op, int opset, int n_in, const int *in_elem, int n_out, const int *out_elem, const attr_spec *attrs,
                        int n_attrs, size_t *len) {
    const char *in[6] = { 0 }, *out[3] = { 0 };
    for (int i = 0; i < n_in; i++) in[i] = XN[i];
    for (int i = 0; i < n_out; i++) out[i] = YN[i];
    node_spec ns = { op, in, out, attrs, n_attrs };
    return make_graph(opset, &ns, 1, n_in, in_elem, n_out, out_elem, len);
}

static cort_status *run_model(const void *bytes, size_t len, int n_in, cort_value **in, int n_out, cort_value **out) {
    cort_session *s = NULL;
    cort_status *st = cort_session_create_from_memory(bytes, len, NULL, &s);
    if (st) return st;
    for (int i = 0; i < n_out; i++) out[i] = NULL;
    st = cort_session_run(s, NULL, (const char **)XN, in, (size_t)n_in, (const char **)YN, (size_t)n_out, out);
    cort_session_release(s);
    return st;
}

static size_t in_use(void) { cort_allocator_stats s; cort_status_free(cort_allocator_get_stats(&s)); return s.bytes_in_use; }

static void release_all(cort_value **v, size_t n) { for (size_t i = 0; i < n; i++) { cort_value_release(v[i]); v[i] = NULL; } }

/* Fails every allocation of a run in turn: each must give OUT_OF_MEMORY, no output, no leak. */
static void oom_walk(const char *what, const void *bytes, size_t len, int n_in, cort_value **in, int n_out) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create_from_memory(bytes, len, NULL, &s))) return;
    cort_value *out[2] = { NULL, NULL };
    /* one run first: the session's caches fill then and stay filled */
    if (!CHECK_OK(cort_session_run(s, NULL, (const char **)XN, in, (size_t)n_in, (const char **)YN, (size_t)n_out, out))) {
        cort_session_release(s);
        return;
    }
    release_all(out, (size_t)n_out);
    size_t base = in_use();
    int bad = 0, leaks = 0;
    long n;
    for (n = 1; n < 20000; n++) {
        cort_test_alloc_fail_at(n);
        cort_status *st = cort_session_run(s, NULL, (const char **)XN, in, (size_t)n_in, (const char **)YN, (size_t)n_out, out);
        long made = cort_test_alloc_count();
        cort_test_alloc_fail_at(0);
        if (!st) {
            for (int i = 0; i < n_out; i++) { cort_value_release(out[i]); out[i] = NULL; }
            if (made < n) break;
            continue;
        }
        for (int i = 0; i < n_out; i++) if (out[i]) { bad++; cort_value_release(out[i]); out[i] = NULL; }
        if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY && bad++ < 3)
            fprintf(stderr, "%s: failing allocation %ld gave %s\n", what, n, cort_status_message(st));
        cort_status_free(st);
        if (in_use() != base && leaks++ < 3) fprintf(stderr, "%s: failing allocation %ld leaked\n", what, n);
    }
    CHECK_MSG(bad == 0 && leaks == 0 && n < 20000, "%s: allocation-failure walk (%ld allocations): %d bad, %d leaks", what, n - 1, bad, leaks);
    cort_session_release(s);
}

static cort_value *tensor(cort_type t, const int64_t *shape, size_t rank, const void *data) {
    cort_value *v = NULL;
    if (cort_tensor_create(t, shape, rank, &v)) return NULL;
    if (data) memcpy(cort_tensor_data(v), data, cort_tensor_bytes(v));
    return v;
}
static cort_value *tensor_str(const char *const *s, const int64_t *shape, size_t rank) {
    cort_value *v = NULL;
    if (cort_tensor_create(CORT_TYPE_STRING, shape, rank, &v)) return NULL;
    for (size_t i = 0; i < cort_tensor_element_count(v); i++) cort_status_free(cort_tensor_set_string(v, i, s[i]));
    return v;
}
static int shape_is(const cort_value *v, const int64_t *shape, size_t rank) {
    return v && cort_tensor_rank(v) == rank && !memcmp(cort_tensor_shape(v), shape, rank * sizeof *shape);
}

/* ---------------- CumProd ---------------- */
static void test_cumprod(void) {
    const int F = CORT_TYPE_DOUBLE, I = CORT_TYPE_INT64, I32 = CORT_TYPE_INT32;
    for (int excl = 0; excl <= 1; excl++)
        for (int rev = 0; rev <= 1; rev++)
            for (int64_t axis = -3; axis < 3; axis++) {
                attr_spec at[2] = { { "exclusive", 2, excl, NULL, 0, NULL }, { "reverse", 2, rev, NULL, 0, NULL } };
                int ins[2] = { F, I };
                size_t len;
                void *m = make_model("CumProd", 26, 2, ins, 1, &F, at, 2, &len);
                int64_t shape[3] = { 3, 4, 5 }, one = 1;
                double x[60], want[60];
                for (int i = 0; i < 60; i++) x[i] = 0.6 + 0.9 * (frand() + 1.0) / 2.0;
                /* definition: the product of the elements before (or after) each one along the axis */
                size_t ax = (size_t)(axis < 0 ? axis + 3 : axis);
                size_t stride[3] = { 20, 5, 1 };
                for (int i = 0; i < 60; i++) {
                    size_t pos = ((size_t)i / stride[ax]) % (size_t)shape[ax], base = (size_t)i - pos * stride[ax];
                    double p = 1;
                    for (size_t k = 0; k < (size_t)shape[ax]; k++) {
                        int take = rev ? (excl ? k > pos : k >= pos) : (excl ? k < pos : k <= pos);
                        if (take) p *= x[base + k * stride[ax]];
                    }
                    want[i] = p;
                }
                cort_value *in[2] = { tensor(CORT_TYPE_DOUBLE, shape, 3, x), tensor(CORT_TYPE_INT64, &one, 0, &axis) }, *y = NULL;
                if (CHECK_OK(run_model(m, len, 2, in, 1, &y)) && ECHECK(shape_is(y, shape, 3))) {
                    const double *g = cort_tensor_data(y);
                    double err = 0;
                    for (int i = 0; i < 60; i++) err = fmax(err, fabs(g[i] - want[i]) / fabs(want[i]));
                    CHECK_MSG(err < 1e-13, "CumProd excl %d rev %d axis %lld: rel err %g", excl, rev, (long long)axis, err);
                }
                cort_value_release(y);
                if (excl && rev && axis == 1) oom_walk("CumProd", m, len, 2, in, 1);
                release_all(in, 2);
                free(m);
            }
    /* int32 wraps like the C type; float32 within float rounding */
    {
        int ins[2] = { I32, I32 };
        size_t len;
        void *m = make_model("CumProd", 26, 2, ins, 1, &I32, NULL, 0, &len);
        int64_t n = 40;
        int32_t x[40], ax = 0;
        for (int i = 0; i < 40; i++) x[i] = (int32_t)urand(2000) - 1000;
        cort_value *in[2] = { tensor(CORT_TYPE_INT32, &n, 1, x), tensor(CORT_TYPE_INT32, &n, 0, &ax) }, *y = NULL;
        if (CHECK_OK(run_model(m, len, 2, in, 1, &y))) {
            const int32_t *g = cort_tensor_data(y);
            uint32_t p = 1;
            int ok = 1;
            for (int i = 0; i < 40; i++) { p *= (uint32_t)x[i]; ok &= g[i] == (int32_t)p; }
            CHECK(ok);
        }
        cort_value_release(y);
        release_all(in, 2);
        free(m);
    }
    {
        const int FL = CORT_TYPE_FLOAT;
        int ins[2] = { FL, I };
        size_t len;
        void *m = make_model("CumProd", 26, 2, ins, 1, &FL, NULL, 0, &len);
        int64_t shape[2] = { 2, 30 }, ax = -1;
        float x[60], want[60];
        for (int r = 0; r < 2; r++) {
            double p = 1;
            for (int i = 0; i < 30; i++) { x[r * 30 + i] = (float)(0.8 + 0.4 * (frand() + 1) / 2); p *= x[r * 30 + i]; want[r * 30 + i] = (float)p; }
        }
        cort_value *in[2] = { tensor(CORT_TYPE_FLOAT, shape, 2, x), tensor(CORT_TYPE_INT64, shape, 0, &ax) }, *y = NULL;
        if (CHECK_OK(run_model(m, len, 2, in, 1, &y))) CHECK_CLOSE((const float *)cort_tensor_data(y), want, 60, TU_TOL(1e-5, 0, 0), "CumProd float");
        cort_value_release(y);
        /* axis out of range: an error naming the input */
        int64_t bad = 2;
        cort_value_release(in[1]);
        in[1] = tensor(CORT_TYPE_INT64, shape, 0, &bad);
        CHECK_ERR(run_model(m, len, 2, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "axis");
        release_all(in, 2);
        free(m);
    }
}

/* ---------------- Col2Im ---------------- */
/* Gather formulation: each image element sums the column entries whose block covers it. */
static void col2im_ref(const double *x, double *y, int64_t N, int64_t C, int nd, const int64_t *img, const int64_t *blk, const int64_t *dil,
                       const int64_t *pad, const int64_t *str) {
    int64_t nb[3], K = 1, L = 1, V = 1;
    for (int d = 0; d < nd; d++) {
        nb[d] = (img[d] + pad[d] + pad[d + nd] - dil[d] * (blk[d] - 1) - 1) / str[d] + 1;
        K *= blk[d]; L *= nb[d]; V *= img[d];
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t v = 0; v < V; v++) {
                int64_t pos[3], r = v;
                for (int d = nd - 1; d >= 0; d--) { pos[d] = r % img[d]; r /= img[d]; }
                double s = 0;
                for (int64_t k = 0; k < K; k++) {
                    int64_t kk[3], rk = k, l = 0, ok = 1;
                    for (int d = nd - 1; d >= 0; d--) { kk[d] = rk % blk[d]; rk /= blk[d]; }
                    for (int d = 0; d < nd && ok; d++) {
                        int64_t t = pos[d] + pad[d] - kk[d] * dil[d];
                        if (t < 0 || t % str[d] || t / str[d] >= nb[d]) ok = 0;
                        else l = l * nb[d] + t / str[d];
                    }
                    if (ok) s += x[((n * C + c) * K + k) * L + l];
                }
                y[(n * C + c) * V + v] = s;
            }
}

static void test_col2im(void) {
    const int D = CORT_TYPE_DOUBLE, I = CORT_TYPE_INT64;
    struct { int nd; int64_t img[3], blk[3], dil[3], pad[6], str[3]; } cases[] = {
        { 2, { 5, 5 }, { 1, 5 }, { 1, 1 }, { 0, 0, 0, 0 }, { 1, 1 } },
        { 2, { 6, 7 }, { 2, 3 }, { 1, 2 }, { 1, 0, 2, 1 }, { 2, 1 } },
        { 2, { 5, 5 }, { 3, 3 }, { 2, 1 }, { 0, 1, 0, 1 }, { 1, 3 } },
        { 3, { 3, 4, 5 }, { 2, 2, 2 }, { 1, 1, 2 }, { 0, 1, 0, 1, 0, 1 }, { 1, 2, 1 } },
        { 1, { 9 }, { 3 }, { 2 }, { 1, 2 }, { 2 } },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int nd = cases[ci].nd;
        int64_t N = 2, C = 3, K = 1, L = 1, V = 1;
        for (int d = 0; d < nd; d++) {
            K *= cases[ci].blk[d];
            L *= (cases[ci].img[d] + cases[ci].pad[d] + cases[ci].pad[d + nd] - cases[ci].dil[d] * (cases[ci].blk[d] - 1) - 1) / cases[ci].str[d] + 1;
            V *= cases[ci].img[d];
        }
        attr_spec at[3] = { { "dilations", 7, 0, cases[ci].dil, (size_t)nd, NULL }, { "pads", 7, 0, cases[ci].pad, (size_t)(2 * nd), NULL },
                            { "strides", 7, 0, cases[ci].str, (size_t)nd, NULL } };
        int ins[3] = { D, I, I };
        size_t len;
        void *m = make_model("Col2Im", 18, 3, ins, 1, &D, at, 3, &len);
        int64_t xs[3] = { N, C * K, L }, vn = nd;
        double *x = malloc(sizeof(double) * (size_t)(N * C * K * L)), *want = malloc(sizeof(double) * (size_t)(N * C * V));
        for (int64_t i = 0; i < N * C * K * L; i++) x[i] = frand();
        col2im_ref(x, want, N, C, nd, cases[ci].img, cases[ci].blk, cases[ci].dil, cases[ci].pad, cases[ci].str);
        cort_value *in[3] = { tensor(CORT_TYPE_DOUBLE, xs, 3, x), tensor(CORT_TYPE_INT64, &vn, 1, cases[ci].img),
                              tensor(CORT_TYPE_INT64, &vn, 1, cases[ci].blk) }, *y = NULL;
        int64_t ys[5] = { N, C, cases[ci].img[0], cases[ci].img[1], cases[ci].img[2] };
        if (CHECK_OK(run_model(m, len, 3, in, 1, &y)) && ECHECK(shape_is(y, ys, (size_t)(2 + nd)))) {
            const double *g = cort_tensor_data(y);
            double err = 0;
            for (int64_t i = 0; i < N * C * V; i++) err = fmax(err, fabs(g[i] - want[i]));
            CHECK_MSG(err < 1e-12, "Col2Im case %zu: max err %g", ci, err);
        }
        cort_value_release(y);
        if (ci == 1) {
            oom_walk("Col2Im", m, len, 3, in, 1);
            /* a column count that does not match the geometry is an error naming the input */
            int64_t bad[3] = { N, C * K, L + 1 };
            cort_value_release(in[0]);
            in[0] = tensor(CORT_TYPE_DOUBLE, bad, 3, NULL);
            CHECK_ERR(run_model(m, len, 3, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "number of blocks");
        }
        release_all(in, 3);
        free(x); free(want); free(m);
    }
}

/* ---------------- DeformConv ---------------- */
static double bilinear_f(const float *plane, int64_t H, int64_t W, double y, double x) {
    double y0 = floor(y), x0 = floor(x), s = 0;
    for (int dy = 0; dy <= 1; dy++)
        for (int dx = 0; dx <= 1; dx++) {
            double yy = y0 + dy, xx = x0 + dx;
            if (yy < 0 || yy >= (double)H || xx < 0 || xx >= (double)W) continue;
            double w = (dy ? y - y0 : 1 - (y - y0)) * (dx ? x - x0 : 1 - (x - x0));
            s += w * plane[(int64_t)yy * W + (int64_t)xx];
        }
    return s;
}

static void test_deform_conv(void) {
    const int F = CORT_TYPE_FLOAT;
    const int64_t N = 2, C = 4, H = 7, W = 6, OC = 6, KH = 3, KW = 2, G = 2, OG = 2;
    const int64_t strides[2] = { 2, 1 }, dil[2] = { 1, 2 }, pads[4] = { 1, 0, 2, 1 };
    int64_t OH = (H + pads[0] + pads[2] - (dil[0] * (KH - 1) + 1)) / strides[0] + 1;
    int64_t OW = (W + pads[1] + pads[3] - (dil[1] * (KW - 1) + 1)) / strides[1] + 1;
    int64_t xs[4] = { N, C, H, W }, ws[4] = { OC, C / G, KH, KW }, os[4] = { N, OG * KH * KW * 2, OH, OW }, ms[4] = { N, OG * KH * KW, OH, OW };
    int64_t bs = OC, ys[4] = { N, OC, OH, OW };
    size_t nx = (size_t)(N * C * H * W), nw = (size_t)(OC * C / G * KH * KW), no = (size_t)(N * OG * KH * KW * 2 * OH * OW),
           nm = (size_t)(N * OG * KH * KW * OH * OW), ny = (size_t)(N * OC * OH * OW);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *off = malloc(no * 4), *mask = malloc(nm * 4), b[6], *want = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = (float)frand();
    for (size_t i = 0; i < nw; i++) w[i] = (float)frand();
    for (size_t i = 0; i < nm; i++) mask[i] = (float)((frand() + 1) / 2);
    for (int i = 0; i < 6; i++) b[i] = (float)frand();
    attr_spec at[5] = { { "strides", 7, 0, strides, 2, NULL }, { "dilations", 7, 0, dil, 2, NULL }, { "pads", 7, 0, pads, 4, NULL },
                        { "group", 2, G, NULL, 0, NULL }, { "offset_group", 2, OG, NULL, 0, NULL } };
    int ins[5] = { F, F, F, F, F };
    size_t len, clen;
    void *m = make_model("DeformConv", 22, 5, ins, 1, &F, at, 5, &len);
    /* 1. zero offsets, unit mask: exactly a grouped Conv (cort's own Conv as the reference) */
    {
        memset(off, 0, no * 4);
        float *ones = malloc(nm * 4);
        for (size_t i = 0; i < nm; i++) ones[i] = 1;
        void *cm = make_model("Conv", 18, 3, ins, 1, &F, at, 4, &clen);
        cort_value *in[5] = { tensor(F, xs, 4, x), tensor(F, ws, 4, w), tensor(F, os, 4, off), tensor(F, &bs, 1, b), tensor(F, ms, 4, ones) };
        cort_value *y = NULL, *yc = NULL, *cin[3] = { in[0], in[1], in[3] };
        if (CHECK_OK(run_model(m, len, 5, in, 1, &y)) && CHECK_OK(run_model(cm, clen, 3, cin, 1, &yc)) && ECHECK(shape_is(y, ys, 4)) &&
            ECHECK(shape_is(yc, ys, 4)))
            CHECK_CLOSE((const float *)cort_tensor_data(y), (const float *)cort_tensor_data(yc), ny, TU_TOL(1e-5, 1e-6, 0), "DeformConv = Conv");
        cort_value_release(y); cort_value_release(yc);
        release_all(in, 5);
        free(ones); free(cm);
    }
    /* 2. fractional offsets (some far outside the image) and a mask: direct loops with bilinear sampling */
    for (size_t i = 0; i < no; i++) off[i] = (float)(frand() * (i % 17 == 0 ? 9.0 : 1.5));
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = b[oc];
                    int64_t g = oc / (OC / G);
                    for (int64_t icl = 0; icl < C / G; icl++) {
                        int64_t ic = g * (C / G) + icl, og = ic / (C / OG);
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t k = kh * KW + kw;
                                size_t ob = (size_t)((((n * OG + og) * KH * KW + k) * 2) * OH * OW + oh * OW + ow);
                                double py = (double)(oh * strides[0] - pads[0] + kh * dil[0]) + off[ob];
                                double px = (double)(ow * strides[1] - pads[1] + kw * dil[1]) + off[ob + (size_t)(OH * OW)];
                                double mk = mask[(size_t)(((n * OG + og) * KH * KW + k) * OH * OW + oh * OW + ow)];
                                s += w[((oc * (C / G) + icl) * KH + kh) * KW + kw] * mk * bilinear_f(x + (n * C + ic) * H * W, H, W, py, px);
                            }
                    }
                    want[((n * OC + oc) * OH + oh) * OW + ow] = (float)s;
                }
    {
        cort_value *in[5] = { tensor(F, xs, 4, x), tensor(F, ws, 4, w), tensor(F, os, 4, off), tensor(F, &bs, 1, b), tensor(F, ms, 4, mask) };
        cort_value *y = NULL;
        if (CHECK_OK(run_model(m, len, 5, in, 1, &y)) && ECHECK(shape_is(y, ys, 4)))
            CHECK_CLOSE((const float *)cort_tensor_data(y), want, ny, TU_TOL(1e-5, 1e-6, 0), "DeformConv with offsets and mask");
        cort_value_release(y);
        oom_walk("DeformConv", m, len, 5, in, 1);
        /* an offset tensor of the wrong channel count is an error naming it */
        int64_t bad[4] = { N, OG * KH * KW, OH, OW };
        cort_value_release(in[2]);
        in[2] = tensor(F, bad, 4, NULL);
        CHECK_ERR(run_model(m, len, 5, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "offset");
        release_all(in, 5);
    }
    free(m);
    free(x); free(w); free(off); free(mask); free(want);
}

/* ---------------- AffineGrid (expected values from PyTorch's affine_grid, float64) ---------------- */
static void test_affine_grid(void) {
    const int D = CORT_TYPE_DOUBLE, I = CORT_TYPE_INT64;
    static const double t2[6] = { 1.1, 0.2, -0.3, 0.1, 0.9, 0.25 };
    static const double t3[12] = { 1.0, 0.1, 0.2, 0.05, 0.3, 0.8, -0.1, 0.0, 0.0, 0.2, 1.2, -0.4 };
    static const double w2[2][12] = {
        { -1.133333333, -0.2666666667, -0.4, -0.2, 0.3333333333, -0.1333333333, -0.9333333333, 0.6333333333, -0.2, 0.7, 0.5333333333, 0.7666666667 },
        { -1.6, -0.75, -0.5, -0.65, 0.6, -0.55, -1.2, 1.05, -0.1, 1.15, 1, 1.25 } };
    static const double w3[2][18] = {
        { -0.7166666667, -0.15, -1, -0.05, 0.05, -1, 0.6166666667, 0.25, -1, -0.5166666667, -0.25, 0.2, 0.15, -0.05, 0.2, 0.8166666667, 0.15, 0.2 },
        { -1.15, -0.2, -1.6, -0.15, 0.1, -1.6, 0.85, 0.4, -1.6, -0.75, -0.4, 0.8, 0.25, -0.1, 0.8, 1.25, 0.2, 0.8 } };
    for (int align = 0; align <= 1; align++)
        for (int three = 0; three <= 1; three++) {
            attr_spec at = { "align_corners", 2, align, NULL, 0, NULL };
            int ins[2] = { D, I };
            size_t len;
            void *m = make_model("AffineGrid", 20, 2, ins, 1, &D, &at, 1, &len);
            int64_t ts[3] = { 1, three ? 3 : 2, three ? 4 : 3 }, size2[4] = { 1, 1, 2, 3 }, size3[5] = { 1, 1, 2, 1, 3 }, ns = three ? 5 : 4;
            cort_value *in[2] = { tensor(CORT_TYPE_DOUBLE, ts, 3, three ? t3 : t2), tensor(CORT_TYPE_INT64, &ns, 1, three ? size3 : size2) }, *y = NULL;
            int64_t y2[4] = { 1, 2, 3, 2 }, y3[5] = { 1, 2, 1, 3, 3 };
            if (CHECK_OK(run_model(m, len, 2, in, 1, &y)) && ECHECK(three ? shape_is(y, y3, 5) : shape_is(y, y2, 4))) {
                const double *g = cort_tensor_data(y), *want = three ? w3[align] : w2[align];
                double err = 0;
                for (int i = 0; i < (three ? 18 : 12); i++) err = fmax(err, fabs(g[i] - want[i]));
                CHECK_MSG(err < 1e-9, "AffineGrid align %d 3d %d: max err %g", align, three, err);
            }
            cort_value_release(y);
            if (align && three) oom_walk("AffineGrid", m, len, 2, in, 1);
            release_all(in, 2);
            free(m);
        }
}

/* ---------------- TensorScatter ---------------- */
static void test_tensor_scatter(void) {
    const int F = CORT_TYPE_FLOAT, I = CORT_TYPE_INT64;
    for (int circ = 0; circ <= 1; circ++)
        for (int with_idx = 0; with_idx <= 1; with_idx++)
            for (int inplace = 0; inplace <= 1; inplace++) {
                const int64_t B = 3, Hh = 2, S = 7, U = 3, Dd = 4;
                attr_spec at[2] = { { "mode", 3, 0, NULL, 0, circ ? "circular" : "linear" }, { "axis", 2, -2, NULL, 0, NULL } };
                /* in place: the cache comes from a first TensorScatter with an empty update (a copy) inside
                 * the graph, so the second is its last reader */
                const char *nin[] = { "x0", "x3", NULL }, *nout[] = { "neg", NULL };
                const char *sin[] = { inplace ? "neg" : "x0", "x1", with_idx ? "x2" : "", NULL }, *sout[] = { "y0", NULL };
                node_spec nodes[2] = { { "TensorScatter", nin, nout, at, 2 }, { "TensorScatter", sin, sout, at, 2 } };
                int ins[4] = { F, F, I, F };
                size_t len;
                int n_in = inplace ? 4 : with_idx ? 3 : 2;
                void *m = make_graph(24, inplace ? nodes : nodes + 1, inplace ? 2 : 1, n_in, ins, 1, &F, &len);
                int64_t ps[4] = { B, Hh, S, Dd }, us[4] = { B, Hh, U, Dd }, is = B;
                float past[3 * 2 * 7 * 4], upd[3 * 2 * 3 * 4], want[3 * 2 * 7 * 4];
                int64_t wi[3] = { 0, 4, circ ? 6 : 2 };
                for (size_t i = 0; i < sizeof past / 4; i++) past[i] = (float)i;
                for (size_t i = 0; i < sizeof upd / 4; i++) upd[i] = -1000.0f - (float)i;
                /* per output element: which update row (if any) lands there */
                for (int64_t b = 0; b < B; b++)
                    for (int64_t h = 0; h < Hh; h++)
                        for (int64_t s = 0; s < S; s++)
                            for (int64_t d = 0; d < Dd; d++) {
                                size_t o = (size_t)(((b * Hh + h) * S + s) * Dd + d);
                                int64_t start = with_idx ? wi[b] : 0, r = s - start;
                                if (circ) r = ((r % S) + S) % S;
                                want[o] = r >= 0 && r < U ? upd[((b * Hh + h) * U + r) * Dd + d] : past[o];
                            }
                int64_t es[4] = { B, Hh, 0, Dd };
                cort_value *in[4] = { tensor(F, ps, 4, past), tensor(F, us, 4, upd), tensor(I, &is, 1, wi), tensor(F, es, 4, NULL) }, *y = NULL;
                if (CHECK_OK(run_model(m, len, n_in, in, 1, &y)) && ECHECK(shape_is(y, ps, 4)))
                    CHECK_MSG(!memcmp(cort_tensor_data(y), want, sizeof want), "TensorScatter circ %d idx %d inplace %d", circ, with_idx, inplace);
                cort_value_release(y);
                /* the caller's cache is never written */
                CHECK(((const float *)cort_tensor_data(in[0]))[5] == 5.0f);
                if (circ && with_idx && inplace) oom_walk("TensorScatter", m, len, 4, in, 1);
                if (!circ && with_idx) {
                    int64_t bad[3] = { 0, 5, 0 };
                    memcpy(cort_tensor_data(in[2]), bad, sizeof bad);
                    CHECK_ERR(run_model(m, len, n_in, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "write_indices");
                }
                release_all(in, 4);
                free(m);
            }
    /* strings */
    {
        const int S = CORT_TYPE_STRING;
        int ins[2] = { S, S };
        attr_spec at = { "axis", 2, 1, NULL, 0, NULL };
        size_t len;
        void *m = make_model("TensorScatter", 24, 2, ins, 1, &S, &at, 1, &len);
        const char *past[6] = { "a", "b", "c", "d", "e", "f" }, *upd[2] = { "X", "Y" }, *want[6] = { "X", "b", "c", "Y", "e", "f" };
        int64_t ps[2] = { 2, 3 }, us[2] = { 2, 1 };
        cort_value *in[2] = { tensor_str(past, ps, 2), tensor_str(upd, us, 2) }, *y = NULL;
        if (CHECK_OK(run_model(m, len, 2, in, 1, &y))) {
            int ok = 1;
            for (int i = 0; i < 6; i++) ok &= !strcmp(((char **)cort_tensor_data(y))[i], want[i]);
            CHECK(ok);
        }
        cort_value_release(y);
        release_all(in, 2);
        free(m);
    }
}

/* ---------------- strings ---------------- */
static int str_eq(const cort_value *t, const char *const *expect, size_t n) {
    if (!t || cort_tensor_type(t) != CORT_TYPE_STRING || cort_tensor_element_count(t) != n) return 0;
    char **d = cort_tensor_data(t);
    for (size_t i = 0; i < n; i++) if (strcmp(d[i], expect[i])) return 0;
    return 1;
}

static void test_string_concat(void) {
    const int S = CORT_TYPE_STRING;
    int ins[2] = { S, S };
    size_t len;
    void *m = make_model("StringConcat", 20, 2, ins, 1, &S, NULL, 0, &len);
    const char *a[6] = { "ab", "", "\xce\xb1", "x", "yy", "z" }, *b[3] = { ".com", "", "\xce\xb2!" };
    int64_t as[2] = { 2, 3 }, bs[2] = { 1, 3 }, ys[2] = { 2, 3 };
    cort_value *in[2] = { tensor_str(a, as, 2), tensor_str(b, bs, 2) }, *y = NULL;
    const char *want[6] = { "ab.com", "", "\xce\xb1\xce\xb2!", "x.com", "yy", "z\xce\xb2!" };
    if (CHECK_OK(run_model(m, len, 2, in, 1, &y))) CHECK(shape_is(y, ys, 2) && str_eq(y, want, 6));
    cort_value_release(y);
    oom_walk("StringConcat", m, len, 2, in, 1);
    int64_t bad[1] = { 2 };
    cort_value_release(in[1]);
    in[1] = tensor_str(b, bad, 1);
    CHECK_CODE(run_model(m, len, 2, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT);
    release_all(in, 2);
    free(m);
}

/* Expected pieces from Python's str.split (sep None when the delimiter is ""). */
static void test_string_split(void) {
    static const struct { const char *s, *delim; int64_t maxsplit; int n; const char *want[5]; } cases[] = {
        { "a,b,,c", ",", -1, 4, { "a", "b", "", "c" } },
        { "a,b,,c", ",", 1, 2, { "a", "b,,c" } },
        { "", ",", -1, 1, { "" } },
        { "  hello   world \t x  ", "", -1, 3, { "hello", "world", "x" } },
        { "  hello   world \t x  ", "", 1, 2, { "hello", "world \t x  " } },
        { "abcabcab", "ab", -1, 4, { "", "c", "c", "" } },
        { "no-delim", ";", -1, 1, { "no-delim" } },
        { "   ", "", -1, 0, { "" } },
        { "x\xc2\xa0y\xe3\x80\x80z", "", -1, 3, { "x", "y", "z" } },
        { "a::b::", "::", 0, 1, { "a::b::" } },
    };
    const int S = CORT_TYPE_STRING, I = CORT_TYPE_INT64;
    int outs[2] = { S, I };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        attr_spec at[2] = { { "delimiter", 3, 0, NULL, 0, cases[c].delim }, { "maxsplit", 2, cases[c].maxsplit, NULL, 0, NULL } };
        size_t len;
        void *m = make_model("StringSplit", 20, 1, &S, 2, outs, at, cases[c].maxsplit >= 0 ? 2 : 1, &len);
        /* each case together with a longer string, so its row is padded with "" */
        const char *xs[2] = { cases[c].s, "1 2 3 4 5 6" };
        int64_t shp = 2;
        cort_value *in[1] = { tensor_str(xs, &shp, 1) }, *y[2] = { NULL, NULL };
        if (CHECK_OK(run_model(m, len, 1, in, 2, y))) {
            const int64_t *cnt = cort_tensor_data(y[1]);
            int64_t w = cort_tensor_shape(y[0])[1];
            CHECK_MSG(cnt[0] == cases[c].n, "StringSplit case %zu: %lld pieces, want %d", c, (long long)cnt[0], cases[c].n);
            int ok = cnt[0] == cases[c].n && w >= cases[c].n;
            char **d = cort_tensor_data(y[0]);
            for (int64_t k = 0; ok && k < w; k++) ok &= !strcmp(d[k], k < cases[c].n ? cases[c].want[k] : "");
            CHECK_MSG(ok, "StringSplit case %zu pieces", c);
        }
        release_all(y, 2);
        if (c == 4) oom_walk("StringSplit", m, len, 1, in, 2);
        release_all(in, 1);
        free(m);
    }
    /* an empty input gives an empty [0, 0] result */
    {
        size_t len;
        void *m = make_model("StringSplit", 20, 1, &S, 2, outs, NULL, 0, &len);
        int64_t zero = 0, ys[2] = { 0, 0 };
        cort_value *in[1] = { tensor(CORT_TYPE_STRING, &zero, 1, NULL) }, *y[2] = { NULL, NULL };
        if (CHECK_OK(run_model(m, len, 1, in, 2, y))) CHECK(shape_is(y[0], ys, 2) && shape_is(y[1], &zero, 1));
        release_all(y, 2);
        release_all(in, 1);
        free(m);
    }
}

/* Expected matches from Python's re.fullmatch on patterns where Python and RE2 agree. */
static void test_regex(void) {
    const int S = CORT_TYPE_STRING, B = CORT_TYPE_BOOL;
    static const struct { const char *pat; int n; const char *s[4]; int want[4]; } cases[] = {
        { "www\\.[\\w.-]+\\.\\bcom\\b", 4, { "www.google.com", "www.example.org", "www.x-y.com", "www.a.coma" }, { 1, 0, 1, 0 } },
        { "a|ab", 4, { "a", "ab", "abc", "" }, { 1, 1, 0, 0 } },
        { "(?i)hello\\s\\d+", 3, { "HeLLo 42", "hello x", "hello 1\n" }, { 1, 0, 0 } },
        { "[^@]+@[^@]+\\.(com|org)$", 3, { "me@x.org", "a@b@c.com", "me@x.org\n" }, { 1, 0, 0 } },
        { "", 2, { "", "a" }, { 1, 0 } },
        { "\\p{Greek}+", 3, { "\xce\xb1\xce\xb2\xce\xb3", "abc", "\xce\xb1\xff" }, { 1, 0, 0 } },
        { "x*", 2, { "xxxx", "xxy" }, { 1, 0 } },
        { "(?i:ab)c{2,3}\\101", 3, { "aBccA", "abcccA", "ABcA" }, { 1, 1, 0 } },
        { "(?P<word>[a-z]+)-[[:digit:]]{1000}", 1, { "x-1" }, { 0 } },
        { ".*", 2, { "one line", "line\nbreak" }, { 1, 0 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        attr_spec at = { "pattern", 3, 0, NULL, 0, cases[c].pat };
        size_t len;
        void *m = make_model("RegexFullMatch", 20, 1, &S, 1, &B, &at, 1, &len);
        int64_t n = cases[c].n;
        cort_value *in[1] = { tensor_str(cases[c].s, &n, 1) }, *y = NULL;
#ifdef CORT_HAVE_PCRE2
        if (CHECK_OK(run_model(m, len, 1, in, 1, &y))) {
            const uint8_t *g = cort_tensor_data(y);
            for (int i = 0; i < cases[c].n; i++)
                CHECK_MSG(g[i] == cases[c].want[i], "RegexFullMatch /%s/ on \"%s\": %d, want %d", cases[c].pat, cases[c].s[i], g[i], cases[c].want[i]);
        }
        if (c == 0) oom_walk("RegexFullMatch", m, len, 1, in, 1);
#else
        CHECK_ERR(run_model(m, len, 1, in, 1, &y), CORT_ERROR_NOT_IMPLEMENTED, "built without PCRE2");
#endif
        cort_value_release(y);
        release_all(in, 1);
        free(m);
    }
#ifdef CORT_HAVE_PCRE2
    /* RE2 rejects these at creation; so does cort */
    static const char *const rejected[] = { "(a)\\1", "a(?=b)", "(?<!x)y", "(?>ab)", "a++", "x\\Z", "(", "(?x) a b", "a{1001}", "a{2,5000}" };
    for (size_t r = 0; r < sizeof rejected / sizeof rejected[0]; r++) {
        attr_spec at = { "pattern", 3, 0, NULL, 0, rejected[r] };
        size_t len;
        void *m = make_model("RegexFullMatch", 20, 1, &S, 1, &B, &at, 1, &len);
        cort_session *s = NULL;
        CHECK_ERR(cort_session_create_from_memory(m, len, NULL, &s), CORT_ERROR_INVALID_MODEL, "pattern");
        cort_session_release(s);
        free(m);
    }
    /* nested quantifiers on a long non-matching subject end quickly (false or a step-limit error) */
    {
        attr_spec at = { "pattern", 3, 0, NULL, 0, "(a|aa)*c?(a|aa)*b" };
        size_t len;
        void *m = make_model("RegexFullMatch", 20, 1, &S, 1, &B, &at, 1, &len);
        char buf[64];
        memset(buf, 'a', 60);
        buf[60] = 'c';
        buf[61] = 0;
        const char *sp = buf;
        int64_t one = 1;
        cort_value *in[1] = { tensor_str(&sp, &one, 1) }, *y = NULL;
        cort_status *st = run_model(m, len, 1, in, 1, &y);
        CHECK(st ? cort_status_code(st) == CORT_ERROR_RUNTIME : ((const uint8_t *)cort_tensor_data(y))[0] == 0);
        cort_status_free(st);
        cort_value_release(y);
        release_all(in, 1);
        free(m);
    }
#endif
}

/* ---------------- ImageDecoder ---------------- */
/* corruptions per encoded image; CORT_TEST_FUZZ_ITERS raises it for longer runs */
static int fuzz_iters = 200;

typedef struct buf { uint8_t *p; size_t n; } buf;

static void make_pixels(uint8_t *rgb, int w, int h, int smooth) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                rgb[(y * w + x) * 3 + c] = smooth ? (uint8_t)(40 + 3 * x + 2 * y + 30 * c) : (uint8_t)urand(256);
}

#if defined(CORT_HAVE_JPEG) && defined(CORT_HAVE_PNG)
static buf encode_bmp(const uint8_t *rgb, int w, int h, int topdown) {
    size_t stride = ((size_t)w * 3 + 3) & ~(size_t)3, n = 54 + stride * (size_t)h;
    buf b = { calloc(1, n), n };
    uint8_t *p = b.p;
    p[0] = 'B'; p[1] = 'M';
    uint32_t v[] = { (uint32_t)n, 0, 54, 40, (uint32_t)w, topdown ? (uint32_t)-h : (uint32_t)h };
    for (int i = 0; i < 6; i++) memcpy(p + 2 + 4 * i, &v[i], 4);
    p[26] = 1; p[28] = 24;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int row = topdown ? y : h - 1 - y;
            uint8_t *q = p + 54 + (size_t)row * stride + (size_t)x * 3;
            const uint8_t *s = rgb + (y * w + x) * 3;
            q[0] = s[2]; q[1] = s[1]; q[2] = s[0];
        }
    return b;
}

static buf encode_ppm(const uint8_t *rgb, int w, int h) {
    char hdr[64];
    int hl = snprintf(hdr, sizeof hdr, "P6\n# made by cort's test\n%d %d\n255\n", w, h);
    buf b = { malloc((size_t)hl + (size_t)w * h * 3), (size_t)hl + (size_t)w * h * 3 };
    memcpy(b.p, hdr, (size_t)hl);
    memcpy(b.p + hl, rgb, (size_t)w * h * 3);
    return b;
}

/* Uncompressed TIFF in strips of 5 rows, little or big endian, with a resolution tag the decoder skips. */
static void put16(uint8_t *p, uint32_t v, int be) { if (be) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; } else { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); } }
static void put32(uint8_t *p, uint32_t v, int be) {
    for (int i = 0; i < 4; i++) p[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}
static buf encode_tiff(const uint8_t *rgb, int w, int h, int be) {
    const uint32_t rps = 5, nstrips = ((uint32_t)h + rps - 1) / rps, pix = (uint32_t)(w * h * 3), ne = 11;
    uint32_t ifd = 8 + pix, extra = ifd + 2 + ne * 12 + 4;   /* out-of-line values follow the IFD */
    size_t n = extra + 6 + 8 + nstrips * 8;
    buf b = { calloc(1, n), n };
    uint8_t *p = b.p;
    p[0] = p[1] = be ? 'M' : 'I';
    put16(p + 2, 42, be);
    put32(p + 4, ifd, be);
    memcpy(p + 8, rgb, pix);
    put16(p + ifd, ne, be);
    uint32_t bps_off = extra, res_off = extra + 6, so_off = extra + 14, sc_off = so_off + nstrips * 4;
    for (int k = 0; k < 3; k++) put16(p + bps_off + 2 * k, 8, be);
    put32(p + res_off, 72, be); put32(p + res_off + 4, 1, be);
    for (uint32_t s = 0; s < nstrips; s++) {
        uint32_t rows = (uint32_t)h - s * rps < rps ? (uint32_t)h - s * rps : rps;
        put32(p + so_off + 4 * s, 8 + s * rps * (uint32_t)w * 3, be);
        put32(p + sc_off + 4 * s, rows * (uint32_t)w * 3, be);
    }
    const uint32_t tags[11][4] = { { 256, 4, 1, (uint32_t)w }, { 257, 4, 1, (uint32_t)h }, { 258, 3, 3, bps_off }, { 259, 3, 1, 1 },
                                   { 262, 3, 1, 2 }, { 273, 4, nstrips, so_off }, { 277, 3, 1, 3 }, { 278, 4, 1, rps },
                                   { 279, 4, nstrips, sc_off }, { 282, 5, 1, res_off }, { 284, 3, 1, 1 } };
    for (uint32_t e = 0; e < ne; e++) {
        uint8_t *q = p + ifd + 2 + 12 * e;
        put16(q, tags[e][0], be); put16(q + 2, tags[e][1], be); put32(q + 4, tags[e][2], be);
        if (tags[e][1] == 3 && tags[e][2] == 1) put16(q + 8, tags[e][3], be);
        else if (tags[e][1] == 4 && tags[e][2] == 1) put32(q + 8, tags[e][3], be);
        else put32(q + 8, tags[e][3], be);
    }
    return b;
}

#ifdef CORT_HAVE_PNG
static buf encode_png(const uint8_t *rgb, int w, int h) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    im.width = (png_uint_32)w; im.height = (png_uint_32)h;
    im.format = PNG_FORMAT_RGB;
    png_alloc_size_t n = 0;
    buf b = { NULL, 0 };
    if (!png_image_write_to_memory(&im, NULL, &n, 0, rgb, 0, NULL)) return b;
    b.p = malloc(n);
    if (!png_image_write_to_memory(&im, b.p, &n, 0, rgb, 0, NULL)) { free(b.p); b.p = NULL; return b; }
    b.n = n;
    return b;
}
#endif

#ifdef CORT_HAVE_WEBP
static buf encode_webp(const uint8_t *rgb, int w, int h) {
    uint8_t *out = NULL;
    size_t n = WebPEncodeLosslessRGB(rgb, w, h, w * 3, &out);
    buf b = { n ? malloc(n) : NULL, n };
    if (n) memcpy(b.p, out, n);
    WebPFree(out);
    return b;
}
#endif

#ifdef CORT_HAVE_JPEG
static buf encode_jpeg(const uint8_t *rgb, int w, int h, int gray) {
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr err;
    ci.err = jpeg_std_error(&err);
    jpeg_create_compress(&ci);
    unsigned char *out = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&ci, &out, &n);
    ci.image_width = (JDIMENSION)w; ci.image_height = (JDIMENSION)h;
    ci.input_components = 3; ci.in_color_space = JCS_RGB;
    jpeg_set_defaults(&ci);
    if (gray) jpeg_set_colorspace(&ci, JCS_GRAYSCALE);
    jpeg_set_quality(&ci, 95, TRUE);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)ci.next_scanline * (size_t)w * 3);
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    buf b = { malloc(n), n };
    memcpy(b.p, out, n);
    free(out);
    return b;
}
#endif

static uint8_t luma(const uint8_t *p) { return (uint8_t)lround(0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]); }

/* Decodes `enc` in each pixel format and compares with rgb (max_diff: lossy codecs). */
static void check_decode(const char *what, buf enc, const uint8_t *rgb, int w, int h, int max_diff, int walk) {
    static const char *const fmts[3] = { "RGB", "BGR", "Grayscale" };
    for (int f = 0; f < 3; f++) {
        attr_spec at = { "pixel_format", 3, 0, NULL, 0, fmts[f] };
        const int U8 = CORT_TYPE_UINT8;
        size_t len;
        void *m = make_model("ImageDecoder", 20, 1, &U8, 1, &U8, &at, 1, &len);
        int64_t n = (int64_t)enc.n, ch = f == 2 ? 1 : 3, ys[3] = { h, w, ch };
        cort_value *in[1] = { tensor(CORT_TYPE_UINT8, &n, 1, enc.p) }, *y = NULL;
        if (CHECK_OK(run_model(m, len, 1, in, 1, &y)) && ECHECK(shape_is(y, ys, 3))) {
            const uint8_t *g = cort_tensor_data(y);
            int worst = 0;
            for (int i = 0; i < w * h; i++)
                for (int c = 0; c < ch; c++) {
                    int want = f == 2 ? luma(rgb + 3 * i) : rgb[3 * i + (f == 1 ? 2 - c : c)];
                    int d = abs((int)g[i * ch + c] - want);
                    if (d > worst) worst = d;
                }
            /* grayscale: fixed-point luma may round the other way on exact .5 ties */
            CHECK_MSG(worst <= max_diff + (f == 2), "%s %s: max difference %d", what, fmts[f], worst);
        }
        cort_value_release(y);
        if (walk && f == 2) oom_walk(what, m, len, 1, in, 1);
        release_all(in, 1);
        /* truncated at many lengths and with corrupted bytes: never a crash, an empty image or a full one */
        if (f == 0) {
            int empty = 0, runs = 0;
            for (size_t cut = 0; cut < enc.n; cut += 1 + enc.n / 97) {
                int64_t cn = (int64_t)cut;
                in[0] = tensor(CORT_TYPE_UINT8, &cn, 1, enc.p);
                cort_status *st = run_model(m, len, 1, in, 1, &y);
                int64_t es[3] = { 0, 0, 3 };
                if (!st) { runs++; empty += shape_is(y, es, 3); CHECK(shape_is(y, es, 3) || shape_is(y, ys, 3)); }
                else CHECK_MSG(0, "%s truncated to %zu: %s", what, cut, cort_status_message(st));
                cort_status_free(st);
                cort_value_release(y);
                release_all(in, 1);
            }
            CHECK_MSG(empty > runs / 2, "%s: only %d of %d truncations gave the empty image", what, empty, runs);
            uint8_t *bad = malloc(enc.n);
            for (int t = 0; t < fuzz_iters; t++) {
                memcpy(bad, enc.p, enc.n);
                int flips = 1 + (int)urand(8);
                for (int k = 0; k < flips; k++) bad[urand((uint32_t)enc.n)] = (uint8_t)urand(256);
                in[0] = tensor(CORT_TYPE_UINT8, &n, 1, bad);
                cort_status *st = run_model(m, len, 1, in, 1, &y);
                int64_t es[3] = { 0, 0, 3 };
                CHECK(!st && cort_tensor_rank(y) == 3 && (shape_is(y, es, 3) || cort_tensor_shape(y)[2] == 3));
                cort_status_free(st);
                cort_value_release(y);
                release_all(in, 1);
            }
            free(bad);
        }
        free(m);
    }
}

#endif

static void test_image_decoder(void) {
    const int w = 19, h = 13;
    uint8_t rgb[19 * 13 * 3], smooth[19 * 13 * 3];
    make_pixels(rgb, w, h, 0);
    make_pixels(smooth, w, h, 1);
    const int U8 = CORT_TYPE_UINT8;
#if defined(CORT_HAVE_JPEG) && defined(CORT_HAVE_PNG)
    buf b = encode_bmp(rgb, w, h, 0);
    check_decode("BMP bottom-up", b, rgb, w, h, 0, 1);
    free(b.p);
    b = encode_bmp(rgb, w, h, 1);
    check_decode("BMP top-down", b, rgb, w, h, 0, 0);
    free(b.p);
    b = encode_ppm(rgb, w, h);
    check_decode("PPM", b, rgb, w, h, 0, 0);
    free(b.p);
    b = encode_tiff(rgb, w, h, 0);
    check_decode("TIFF little-endian", b, rgb, w, h, 0, 1);
    free(b.p);
    b = encode_tiff(rgb, w, h, 1);
    check_decode("TIFF big-endian", b, rgb, w, h, 0, 0);
    free(b.p);
    b = encode_png(rgb, w, h);
    if (ECHECK(b.p != NULL)) check_decode("PNG", b, rgb, w, h, 0, 1);
    free(b.p);
    b = encode_jpeg(smooth, w, h, 0);
    check_decode("JPEG", b, smooth, w, h, 6, 1);
    free(b.p);
#ifdef CORT_HAVE_WEBP
    b = encode_webp(rgb, w, h);
    if (ECHECK(b.p != NULL)) check_decode("WebP lossless", b, rgb, w, h, 0, 1);
    free(b.p);
#endif
#ifdef CORT_HAVE_OPENJP2
    /* lossless JPEG 2000 files of the smooth image made with Pillow (tests/data/images/make_images.py) */
    static const char *const jp2[2] = { "tests/data/images/smooth_19x13.jp2", "tests/data/images/smooth_19x13.j2k" };
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        b.p = tu_read_file(jp2[k], &n);
        b.n = n;
        if (ECHECK(b.p != NULL)) check_decode(jp2[k], b, smooth, w, h, 0, k == 0);
        free(b.p);
    }
#endif
    /* a grayscale JPEG decodes to three equal channels */
    {
        uint8_t grey[19 * 13 * 3];
        for (int i = 0; i < w * h; i++) grey[3 * i] = grey[3 * i + 1] = grey[3 * i + 2] = luma(smooth + 3 * i);
        b = encode_jpeg(smooth, w, h, 1);
        check_decode("grayscale JPEG", b, grey, w, h, 3, 0);
        free(b.p);
    }
    /* random bytes behind each format's signature: never a crash, always an empty or a complete image */
    {
        static const struct { const char *magic; size_t n; } sig[] = {
            { "BM", 2 }, { "P6\n", 3 }, { "P3 4 4 255 ", 11 }, { "P1\n", 3 }, { "II*\0\x08\0\0\0", 8 }, { "MM\0*\0\0\0\x08", 8 },
            { "\xff\xd8\xff\xe0", 4 }, { "\x89PNG\r\n\x1a\n", 8 }, { "RIFF\x40\0\0\0WEBPVP8L", 16 },
            { "\0\0\0\x0cjP  \r\n\x87\n", 12 }, { "\xff\x4f\xff\x51", 4 } };
        attr_spec at = { "pixel_format", 3, 0, NULL, 0, "Grayscale" };
        size_t len;
        void *m = make_model("ImageDecoder", 20, 1, &U8, 1, &U8, &at, 1, &len);
        cort_session *s = NULL;
        if (CHECK_OK(cort_session_create_from_memory(m, len, NULL, &s))) {
            int bad = 0;
            for (size_t k = 0; k < sizeof sig / sizeof sig[0]; k++)
                for (int t = 0; t < 150; t++) {
                    uint8_t bytes[96];
                    int64_t n = (int64_t)sig[k].n + (int64_t)urand(96 - (uint32_t)sig[k].n);
                    memcpy(bytes, sig[k].magic, sig[k].n);
                    for (int64_t i = (int64_t)sig[k].n; i < n; i++) bytes[i] = (uint8_t)(t & 1 ? urand(256) : urand(3) ? urand(16) : 255);
                    cort_value *in = tensor(CORT_TYPE_UINT8, &n, 1, bytes), *y = NULL;
                    const char *inn = "x0", *outn = "y0";
                    cort_status *st = cort_session_run(s, NULL, &inn, &in, 1, &outn, 1, &y);
                    if (st || cort_tensor_rank(y) != 3 || cort_tensor_shape(y)[2] != 1) bad++;
                    cort_status_free(st);
                    cort_value_release(y);
                    cort_value_release(in);
                }
            CHECK_MSG(bad == 0, "%d random streams failed", bad);
        }
        cort_session_release(s);
        free(m);
    }
    /* not an image at all, and an unknown pixel_format */
    {
        attr_spec at = { "pixel_format", 3, 0, NULL, 0, "RGB" };
        size_t len;
        void *m = make_model("ImageDecoder", 20, 1, &U8, 1, &U8, &at, 1, &len);
        int64_t n = 5, es[3] = { 0, 0, 3 };
        cort_value *in[1] = { tensor(CORT_TYPE_UINT8, &n, 1, "hello") }, *y = NULL;
        if (CHECK_OK(run_model(m, len, 1, in, 1, &y))) CHECK(shape_is(y, es, 3));
        cort_value_release(y);
        release_all(in, 1);
        free(m);
        attr_spec bad = { "pixel_format", 3, 0, NULL, 0, "CMYK" };
        m = make_model("ImageDecoder", 20, 1, &U8, 1, &U8, &bad, 1, &len);
        cort_session *s = NULL;
        CHECK_ERR(cort_session_create_from_memory(m, len, NULL, &s), CORT_ERROR_INVALID_MODEL, "pixel_format");
        free(m);
    }
#else
    attr_spec at = { "pixel_format", 3, 0, NULL, 0, "RGB" };
    size_t len;
    void *m = make_model("ImageDecoder", 20, 1, &U8, 1, &U8, &at, 1, &len);
    cort_session *s = NULL;
    CHECK_ERR(cort_session_create_from_memory(m, len, NULL, &s), CORT_ERROR_NOT_IMPLEMENTED, "without libjpeg-turbo/libpng");
    free(m);
    (void)rgb; (void)smooth;
#endif
}

int main(void) {
    const char *fi = getenv("CORT_TEST_FUZZ_ITERS");
    if (fi && atoi(fi) > 0) fuzz_iters = atoi(fi);
    size_t base = in_use();
    test_cumprod();
    test_col2im();
    test_deform_conv();
    test_affine_grid();
    test_tensor_scatter();
    test_string_concat();
    test_string_split();
    test_regex();
    test_image_decoder();
    CHECK_MSG(in_use() == base, "bytes in use %zu -> %zu", base, in_use());
    return tu_finish();
}
