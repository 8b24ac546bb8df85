/* ai.onnx.ml operators against references written here: random tree ensembles (legacy v3 and v5
 * encodings of the same trees, every branch mode, NaN routing, every aggregate) evaluated by a
 * recursive walk; post-transforms against their formulas (probit by bisection on erfc); label
 * encoders, category mapper, one-hot, ZipMap's sequence of maps; and malformed models. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

/* ---------------- model building (pb_* writer: testutil.h) ---------------- */

/* A node under construction: its attributes are appended as they come. */
typedef struct mnode { pb n; } mnode;
static void a_int(mnode *m, const char *name, int64_t v) { pb a = { 0 }; pb_str(&a, 1, name); pb_int(&a, 20, 2); pb_int(&a, 3, v); pb_sub(&m->n, 5, &a); }
static void a_float(mnode *m, const char *name, float v) { pb a = { 0 }; pb_str(&a, 1, name); pb_int(&a, 20, 1); pb_f32(&a, 2, v); pb_sub(&m->n, 5, &a); }
static void a_str(mnode *m, const char *name, const char *v) { pb a = { 0 }; pb_str(&a, 1, name); pb_int(&a, 20, 3); pb_str(&a, 4, v); pb_sub(&m->n, 5, &a); }
static void a_ints(mnode *m, const char *name, const int64_t *v, size_t n) {
    pb a = { 0 }; pb_str(&a, 1, name); pb_int(&a, 20, 7);
    for (size_t i = 0; i < n; i++) pb_int(&a, 8, v[i]);
    pb_sub(&m->n, 5, &a);
}
static void a_floats(mnode *m, const char *name, const float *v, size_t n) {
    pb a = { 0 }; pb_str(&a, 1, name); pb_int(&a, 20, 6);
    for (size_t i = 0; i < n; i++) pb_f32(&a, 7, v[i]);
    pb_sub(&m->n, 5, &a);
}
static void a_strs(mnode *m, const char *name, const char *const *v, size_t n) {
    pb a = { 0 }; pb_str(&a, 1, name); pb_int(&a, 20, 8);
    for (size_t i = 0; i < n; i++) pb_str(&a, 9, v[i]);
    pb_sub(&m->n, 5, &a);
}
/* Tensor attribute: 1-D, elem 11 (double, raw), 2 (uint8, raw) or 1 (float, raw). */
static void a_tensor(mnode *m, const char *name, int elem, const void *raw, size_t count) {
    size_t es = elem == 11 ? 8 : elem == 1 ? 4 : 1;
    pb a = { 0 }, t = { 0 };
    pb_str(&a, 1, name); pb_int(&a, 20, 4);
    pb_int(&t, 1, (int64_t)count);
    pb_int(&t, 2, elem);
    pb_str(&t, 8, name);
    pb_bytes(&t, 9, raw, count * es);
    pb_sub(&a, 5, &t);
    pb_sub(&m->n, 5, &a);
}
static void start_node(mnode *m, const char *op, int n_in, int n_out) {
    memset(m, 0, sizeof *m);
    char name[16];
    for (int i = 0; i < n_in; i++) { snprintf(name, sizeof name, "x%d", i); pb_str(&m->n, 1, name); }
    for (int i = 0; i < n_out; i++) { snprintf(name, sizeof name, "y%d", i); pb_str(&m->n, 2, name); }
    pb_str(&m->n, 3, "n");
    pb_str(&m->n, 4, op);
    pb_str(&m->n, 7, "ai.onnx.ml");
}
/* Model with one node; inputs typed by in_elem, outputs left untyped (inference decides). */
static void *finish_model(mnode *m, int ml_opset, int n_in, const int *in_elem, int n_out, size_t *len) {
    pb mo = { 0 }, g = { 0 }, os = { 0 }, os2 = { 0 };
    char name[16];
    pb_int(&mo, 1, 8);
    pb_str(&os, 1, ""); pb_int(&os, 2, 17); pb_sub(&mo, 8, &os);
    pb_str(&os2, 1, "ai.onnx.ml"); pb_int(&os2, 2, ml_opset); pb_sub(&mo, 8, &os2);
    pb_sub(&g, 1, &m->n);
    pb_str(&g, 2, "g");
    for (int i = 0; i < n_in; i++) {
        pb vi = { 0 }, tp = { 0 }, tt = { 0 };
        snprintf(name, sizeof name, "x%d", i);
        pb_str(&vi, 1, name);
        if (in_elem[i] < 0) {
            /* -T: map(int64, tensor(T)) */
            pb mt = { 0 }, vt = { 0 };
            pb_int(&mt, 1, 7);
            pb_int(&tt, 1, -in_elem[i]);
            pb_sub(&vt, 1, &tt);
            pb_sub(&mt, 2, &vt);
            pb_sub(&tp, 5, &mt);
        } else {
            pb_int(&tt, 1, in_elem[i]);
            pb_sub(&tp, 1, &tt);
        }
        pb_sub(&vi, 2, &tp);
        pb_sub(&g, 11, &vi);
    }
    for (int i = 0; i < n_out; i++) {
        pb vi = { 0 };
        snprintf(name, sizeof name, "y%d", i);
        pb_str(&vi, 1, name);
        pb_sub(&g, 12, &vi);
    }
    pb_sub(&mo, 7, &g);
    *len = mo.n;
    return mo.p;
}
static cort_status *run(void *bytes, size_t len, int threads, int n_in, cort_value **in, int n_out, cort_value **out) {
    cort_session *s = NULL;
    cort_session_options *o = NULL;
    cort_status *st = cort_session_options_create(&o);
    if (!st && threads) st = cort_session_options_set_threads(o, threads);
    if (!st) st = cort_session_create_from_memory(bytes, len, o, &s);
    cort_session_options_free(o);
    free(bytes);
    if (st) return st;
    const char *in_names[4] = { "x0", "x1", "x2", "x3" }, *out_names[4] = { "y0", "y1", "y2", "y3" };
    for (int i = 0; i < n_out; i++) out[i] = NULL;
    st = cort_session_run(s, NULL, in_names, in, (size_t)n_in, out_names, (size_t)n_out, out);
    cort_session_release(s);
    return st;
}
static cort_value *tensor(cort_type t, const void *data, const int64_t *shape, size_t rank) {
    cort_value *v = NULL;
    if (cort_tensor_create(t, shape, rank, &v)) return NULL;
    if (t == CORT_TYPE_STRING) {
        for (size_t i = 0; i < cort_tensor_element_count(v); i++) cort_status_free(cort_tensor_set_string(v, i, ((const char *const *)data)[i]));
    } else memcpy(cort_tensor_data(v), data, cort_tensor_bytes(v));
    return v;
}

static uint32_t rng = 12345;
static uint32_t urand(uint32_t n) { rng = rng * 1664525u + 1013904223u; return (rng >> 8) % n; }
static double drand(void) { return (double)urand(1u << 20) / (double)(1u << 20) * 4 - 2; }

/* ---------------- tree ensembles ---------------- */
enum { MAXN = 4096, NTREES = 9, NFEAT = 5, NTARGET = 3 };
typedef struct rnode { int leaf, feat, mode, mtrue, left, right; double th; int tgt[2]; double w[2]; int nw; } rnode;
static rnode nodes[MAXN];
static int n_nodes, roots[NTREES];
static int one_mode = -1;   /* >= 0: every split has this mode (the one-mode fast paths) */
static int no_mtrue;        /* no missing_value_tracks_true */

/* Random subtree; thresholds picked among a few grid values so that EQ/NEQ hit. */
static int grow(int depth) {
    int id = n_nodes++;
    rnode *r = &nodes[id];
    memset(r, 0, sizeof *r);
    if (depth == 0 || urand(5) == 0) {
        r->leaf = 1;
        r->nw = 1 + (int)urand(2);
        for (int k = 0; k < r->nw; k++) { r->tgt[k] = (int)urand(NTARGET); r->w[k] = drand(); }
        if (r->nw == 2 && r->tgt[1] == r->tgt[0]) r->nw = 1;
        return id;
    }
    r->feat = (int)urand(NFEAT);
    r->mode = one_mode >= 0 ? one_mode : (int)urand(6);
    r->mtrue = no_mtrue ? 0 : (int)urand(2);
    r->th = (double)((int)urand(9) - 4) * 0.5;
    int l = grow(depth - 1), rr = grow(depth - 1);
    nodes[id].left = l;
    nodes[id].right = rr;
    return id;
}
static int cond(const rnode *r, double x) {
    int c = 0;
    switch (r->mode) {
    case 0: c = x <= r->th; break;
    case 1: c = x < r->th; break;
    case 2: c = x >= r->th; break;
    case 3: c = x > r->th; break;
    case 4: c = x == r->th; break;
    default: c = x != r->th; break;
    }
    if (isnan(x)) c = r->mode == 5 ? 1 : r->mtrue;   /* NaN != th is true; else missing_value_tracks_true */
    return c;
}
static const rnode *walk(int id, const double *x) {
    const rnode *r = &nodes[id];
    return r->leaf ? r : walk(cond(r, x[r->feat]) ? r->left : r->right, x);
}
static void reference(int agg, const double *x, double *out) {
    int has[NTARGET] = { 0 };
    for (int j = 0; j < NTARGET; j++) out[j] = 0;
    for (int t = 0; t < NTREES; t++) {
        const rnode *l = walk(roots[t], x);
        for (int k = 0; k < l->nw; k++) {
            int j = l->tgt[k];
            double w = l->w[k];
            if (agg <= 1) out[j] += w;
            else if (!has[j] || (agg == 2 ? w < out[j] : w > out[j])) out[j] = w;
            has[j] = 1;
        }
    }
    if (agg == 0) for (int j = 0; j < NTARGET; j++) out[j] /= NTREES;
}

static const char *const mode_names[] = { "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ" };
static const char *const agg_names[] = { "AVERAGE", "SUM", "MIN", "MAX" };

static void *legacy_model(int agg, int elem, size_t *len) {
    static int64_t tid[MAXN], nid[MAXN], fid[MAXN], tr[MAXN], fa[MAXN], mt[MAXN], ct[2 * MAXN], cn[2 * MAXN], ci[2 * MAXN];
    static double vals[MAXN], cw[2 * MAXN];
    static const char *modes[MAXN];
    size_t nc = 0;
    int tree = 0;
    for (int i = 0; i < n_nodes; i++) {
        while (tree + 1 < NTREES && i >= roots[tree + 1]) tree++;
        const rnode *r = &nodes[i];
        tid[i] = tree; nid[i] = i - roots[tree];
        fid[i] = r->feat; vals[i] = r->th; mt[i] = r->mtrue;
        modes[i] = r->leaf ? "LEAF" : mode_names[r->mode];
        tr[i] = r->leaf ? 0 : r->left - roots[tree];
        fa[i] = r->leaf ? 0 : r->right - roots[tree];
        for (int k = 0; r->leaf && k < r->nw; k++) { ct[nc] = tree; cn[nc] = nid[i]; ci[nc] = r->tgt[k]; cw[nc] = r->w[k]; nc++; }
    }
    mnode m;
    start_node(&m, "TreeEnsembleRegressor", 1, 1);
    size_t n = (size_t)n_nodes;
    a_int(&m, "n_targets", NTARGET);
    a_str(&m, "aggregate_function", agg_names[agg]);
    a_ints(&m, "nodes_treeids", tid, n); a_ints(&m, "nodes_nodeids", nid, n); a_ints(&m, "nodes_featureids", fid, n);
    a_ints(&m, "nodes_truenodeids", tr, n); a_ints(&m, "nodes_falsenodeids", fa, n);
    a_ints(&m, "nodes_missing_value_tracks_true", mt, n);
    a_strs(&m, "nodes_modes", modes, n);
    a_tensor(&m, "nodes_values_as_tensor", 11, vals, n);
    a_ints(&m, "target_treeids", ct, nc); a_ints(&m, "target_nodeids", cn, nc); a_ints(&m, "target_ids", ci, nc);
    a_tensor(&m, "target_weights_as_tensor", 11, cw, nc);
    return finish_model(&m, 3, 1, &elem, 1, len);
}

/* v5: interior nodes in nodes_*, leaves (one vote each: test_trees gives v5 trees single-vote
 * leaves) in leaf_*. */
static void *v5_model(int agg, size_t *len) {
    static int64_t fid[MAXN], tr[MAXN], tl[MAXN], fa[MAXN], fl[MAXN], mt[MAXN], lt[MAXN], rootv[NTREES];
    static double splits[MAXN], lw[MAXN];
    static uint8_t modes[MAXN];
    static int idx[MAXN];
    size_t ni = 0, nl = 0;
    for (int i = 0; i < n_nodes; i++) idx[i] = nodes[i].leaf ? (int)nl++ : (int)ni++;
    for (int i = 0; i < n_nodes; i++) {
        const rnode *r = &nodes[i];
        if (r->leaf) { lt[idx[i]] = r->tgt[0]; lw[idx[i]] = r->w[0]; continue; }
        size_t k = (size_t)idx[i];
        fid[k] = r->feat; splits[k] = r->th; modes[k] = (uint8_t)r->mode; mt[k] = r->mtrue;
        tr[k] = idx[r->left]; tl[k] = nodes[r->left].leaf;
        fa[k] = idx[r->right]; fl[k] = nodes[r->right].leaf;
    }
    for (int t = 0; t < NTREES; t++) rootv[t] = idx[roots[t]];
    mnode m;
    start_node(&m, "TreeEnsemble", 1, 1);
    a_int(&m, "n_targets", NTARGET);
    a_int(&m, "aggregate_function", agg);
    a_ints(&m, "tree_roots", rootv, NTREES);
    a_ints(&m, "nodes_featureids", fid, ni); a_ints(&m, "nodes_truenodeids", tr, ni); a_ints(&m, "nodes_trueleafs", tl, ni);
    a_ints(&m, "nodes_falsenodeids", fa, ni); a_ints(&m, "nodes_falseleafs", fl, ni);
    a_ints(&m, "nodes_missing_value_tracks_true", mt, ni);
    a_tensor(&m, "nodes_modes", 2, modes, ni);
    a_tensor(&m, "nodes_splits", 11, splits, ni);
    a_ints(&m, "leaf_targetids", lt, nl);
    a_tensor(&m, "leaf_weights", 11, lw, nl);
    int elem = 11;
    return finish_model(&m, 5, 1, &elem, 1, len);
}

static void test_trees(void) {
    enum { ROWS = 700 };
    static double x[ROWS * NFEAT], want[ROWS * NTARGET];
    static float xf[ROWS * NFEAT];
    /* variant 0: legacy, every mode, double rows; 1: v5; 2: legacy, all BRANCH_LEQ, no missing
     * routing, float-exact thresholds, float rows (float nodes); 3: legacy, all BRANCH_LT with
     * missing routing, float rows (float nodes); 4: v5, all BRANCH_LEQ with missing routing,
     * double rows (double one-mode path) */
    for (int variant = 0; variant < 5; variant++) {
        int v5 = variant == 1 || variant == 4;
        int float_rows = variant == 2 || variant == 3;
        one_mode = variant == 2 || variant == 4 ? 0 : variant == 3 ? 1 : -1;
        no_mtrue = variant == 2;
        /* legacy: tree 0 is a lone leaf; v5 roots are interior nodes and leaves hold one vote */
        n_nodes = 0;
        for (int t = 0; t < NTREES; t++) {
            int start = n_nodes;
            do { n_nodes = start; roots[t] = grow(t == 0 && !v5 ? 0 : 2 + (int)urand(6)); } while (v5 && nodes[roots[t]].leaf);
        }
        if (v5) for (int i = 0; i < n_nodes; i++) if (nodes[i].leaf) nodes[i].nw = 1;
        for (size_t i = 0; i < ROWS * NFEAT; i++) {
            uint32_t r = urand(10);
            x[i] = r == 0 ? NAN : r < 5 ? (double)((int)urand(9) - 4) * 0.5 : drand();
            if (float_rows) x[i] = xf[i] = (float)x[i];
        }
        for (int agg = 0; agg < 4; agg++) {
            for (int r = 0; r < ROWS; r++) reference(agg, x + r * NFEAT, want + r * NTARGET);
            for (int threads = 1; threads <= 2; threads++) {
                size_t len;
                void *bytes = v5 ? v5_model(agg, &len) : legacy_model(agg, float_rows ? 1 : 11, &len);
                int64_t shape[2] = { ROWS, NFEAT };
                cort_value *in = float_rows ? tensor(CORT_TYPE_FLOAT, xf, shape, 2) : tensor(CORT_TYPE_DOUBLE, x, shape, 2), *out = NULL;
                cort_status *st = run(bytes, len, threads, 1, &in, 1, &out);
                CHECK_MSG(st == NULL, "variant %d agg %s: %s", variant, agg_names[agg], st ? cort_status_message(st) : "");
                cort_status_free(st);
                if (out) {
                    /* legacy regressors output float, v5 the input's type */
                    CHECK(cort_tensor_type(out) == (v5 ? CORT_TYPE_DOUBLE : CORT_TYPE_FLOAT));
                    CHECK(cort_tensor_element_count(out) == ROWS * NTARGET);
                    size_t bad = 0;
                    for (size_t i = 0; i < ROWS * NTARGET; i++) {
                        double g = v5 ? ((double *)cort_tensor_data(out))[i] : ((float *)cort_tensor_data(out))[i];
                        if (fabs(g - want[i]) > 1e-6 * (1 + fabs(want[i]))) bad++;
                    }
                    CHECK_MSG(bad == 0, "variant %d agg %s threads %d: %zu of %d values differ", variant, agg_names[agg], threads, bad,
                              ROWS * NTARGET);
                }
                cort_value_release(in);
                cort_value_release(out);
            }
        }
    }
}

/* A cycle, a child out of range, a feature the input lacks. */
static void test_tree_errors(void) {
    int64_t tid[2] = { 0, 0 }, nid[2] = { 0, 1 }, fid[2] = { 0, 3 }, tr[2] = { 1, 0 }, fa[2] = { 1, 0 };
    const char *modes[2] = { "BRANCH_LEQ", "BRANCH_LEQ" };
    double v[2] = { 0, 0 };
    int elem = 1;
    size_t len;
    mnode m;
    start_node(&m, "TreeEnsembleRegressor", 1, 1);
    a_ints(&m, "nodes_treeids", tid, 2); a_ints(&m, "nodes_nodeids", nid, 2); a_ints(&m, "nodes_featureids", fid, 2);
    a_ints(&m, "nodes_truenodeids", tr, 2); a_ints(&m, "nodes_falsenodeids", fa, 2); a_strs(&m, "nodes_modes", modes, 2);
    a_tensor(&m, "nodes_values_as_tensor", 11, v, 2);
    void *bytes = finish_model(&m, 3, 1, &elem, 1, &len);
    cort_value *out[1];
    CHECK_ERR(run(bytes, len, 1, 0, NULL, 0, out), CORT_ERROR_INVALID_MODEL, "cycle");

    tr[0] = 7;
    modes[1] = "LEAF";
    start_node(&m, "TreeEnsembleRegressor", 1, 1);
    a_ints(&m, "nodes_treeids", tid, 2); a_ints(&m, "nodes_nodeids", nid, 2); a_ints(&m, "nodes_featureids", fid, 2);
    a_ints(&m, "nodes_truenodeids", tr, 2); a_ints(&m, "nodes_falsenodeids", fa, 2); a_strs(&m, "nodes_modes", modes, 2);
    a_tensor(&m, "nodes_values_as_tensor", 11, v, 2);
    bytes = finish_model(&m, 3, 1, &elem, 1, &len);
    CHECK_ERR(run(bytes, len, 1, 0, NULL, 0, out), CORT_ERROR_INVALID_MODEL, "does not have");

    /* root reads feature 3; leaves are nodes 1 */
    tr[0] = 1; fa[0] = 1; fid[0] = 3;
    start_node(&m, "TreeEnsembleRegressor", 1, 1);
    a_ints(&m, "nodes_treeids", tid, 2); a_ints(&m, "nodes_nodeids", nid, 2); a_ints(&m, "nodes_featureids", fid, 2);
    a_ints(&m, "nodes_truenodeids", tr, 2); a_ints(&m, "nodes_falsenodeids", fa, 2); a_strs(&m, "nodes_modes", modes, 2);
    a_tensor(&m, "nodes_values_as_tensor", 11, v, 2);
    bytes = finish_model(&m, 3, 1, &elem, 1, &len);
    float xv[3] = { 1, 2, 3 };
    int64_t shape[2] = { 1, 3 };
    cort_value *in = tensor(CORT_TYPE_FLOAT, xv, shape, 2);
    CHECK_ERR(run(bytes, len, 1, 1, &in, 1, out), CORT_ERROR_INVALID_ARGUMENT, "feature 3");
    cort_value_release(in);
}

/* ---------------- post transforms (through LinearRegressor, identity coefficients) ---------------- */
static double std_normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double probit_ref(double p) {
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; i++) { double mid = 0.5 * (lo + hi); if (std_normal_cdf(mid) < p) lo = mid; else hi = mid; }
    return 0.5 * (lo + hi);
}
static void test_post_transforms(void) {
    static const char *const posts[] = { "NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT" };
    enum { R = 6, C = 4 };
    float x[R * C];
    for (int i = 0; i < R * C; i++) x[i] = (float)(drand() * 3);
    x[5] = 0; x[6] = 0;                   /* zeros: SOFTMAX_ZERO keeps them at zero */
    for (int c = 0; c < C; c++) x[4 * C + c] = 0;   /* an all-zero row */
    float pr[R * C];                      /* probabilities for PROBIT */
    for (int i = 0; i < R * C; i++) pr[i] = (float)(0.02 + 0.96 * (double)urand(1000) / 1000.0);
    float coef[C * C] = { 0 };
    for (int c = 0; c < C; c++) coef[c * C + c] = 1;
    for (int p = 0; p < 5; p++) {
        const float *in_data = p == 4 ? pr : x;
        double want[R * C];
        for (int r = 0; r < R; r++) {
            const float *row = in_data + r * C;
            double *w = want + r * C, m = -INFINITY, s = 0;
            for (int c = 0; c < C; c++) if (row[c] > m) m = row[c];
            for (int c = 0; c < C; c++) {
                switch (p) {
                case 0: w[c] = row[c]; break;
                case 1: w[c] = exp(row[c] - m); s += w[c]; break;
                case 2: w[c] = 1 / (1 + exp(-(double)row[c])); break;
                case 3: w[c] = row[c] == 0 ? 0 : exp(row[c] - m); s += w[c]; break;
                default: w[c] = probit_ref(row[c]); break;
                }
            }
            if (p == 1 || p == 3)
                for (int c = 0; c < C; c++) w[c] = s == 0 ? 0.5 : w[c] / s;
        }
        mnode m;
        start_node(&m, "LinearRegressor", 1, 1);
        a_floats(&m, "coefficients", coef, C * C);
        a_int(&m, "targets", C);
        a_str(&m, "post_transform", posts[p]);
        int elem = 1;
        size_t len;
        void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
        int64_t shape[2] = { R, C };
        cort_value *in = tensor(CORT_TYPE_FLOAT, in_data, shape, 2), *out = NULL;
        CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
        if (out) {
            float wf[R * C];
            for (int i = 0; i < R * C; i++) wf[i] = (float)want[i];
            CHECK_CLOSE((const float *)cort_tensor_data(out), wf, R * C, TU_TOL(1e-5, 0, 1e-6), "post_transform %s", posts[p]);
        }
        cort_value_release(in);
        cort_value_release(out);
    }
}

/* ---------------- encoders ---------------- */
static void test_encoders(void) {
    /* LabelEncoder v2, float keys: NaN matches NaN, a repeated key takes the last value */
    {
        float keys[4] = { 1.5f, NAN, -2.0f, 1.5f };
        int64_t vals[4] = { 10, 20, 30, 40 };
        mnode m;
        start_node(&m, "LabelEncoder", 1, 1);
        a_floats(&m, "keys_floats", keys, 4);
        a_ints(&m, "values_int64s", vals, 4);
        a_int(&m, "default_int64", -7);
        int elem = 1;
        size_t len;
        void *bytes = finish_model(&m, 2, 1, &elem, 1, &len);
        float x[5] = { 1.5f, NAN, 0.0f, -2.0f, 3.0f };
        int64_t shape[1] = { 5 }, want[5] = { 40, 20, -7, 30, -7 };
        cort_value *in = tensor(CORT_TYPE_FLOAT, x, shape, 1), *out = NULL;
        CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
        CHECK(out && cort_tensor_type(out) == CORT_TYPE_INT64 && !memcmp(cort_tensor_data(out), want, sizeof want));
        cort_value_release(in);
        cort_value_release(out);
    }
    /* LabelEncoder v1: classes_strings, both directions */
    {
        const char *classes[3] = { "cat", "dog", "emu" };
        for (int dir = 0; dir < 2; dir++) {
            mnode m;
            start_node(&m, "LabelEncoder", 1, 1);
            a_strs(&m, "classes_strings", classes, 3);
            a_int(&m, "default_int64", 99);
            a_str(&m, "default_string", "none");
            int elem = dir ? 7 : 8;
            size_t len;
            void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
            int64_t shape[1] = { 4 };
            const char *sx[4] = { "emu", "cow", "cat", "dog" };
            int64_t ix[4] = { 2, 5, 0, -1 };
            cort_value *in = dir ? tensor(CORT_TYPE_INT64, ix, shape, 1) : tensor(CORT_TYPE_STRING, sx, shape, 1), *out = NULL;
            CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
            if (!dir) {
                int64_t want[4] = { 2, 99, 0, 1 };
                CHECK(out && cort_tensor_type(out) == CORT_TYPE_INT64 && !memcmp(cort_tensor_data(out), want, sizeof want));
            } else {
                const char *want[4] = { "emu", "none", "cat", "none" };
                int ok = out && cort_tensor_type(out) == CORT_TYPE_STRING;
                for (int i = 0; ok && i < 4; i++) ok = !strcmp(((char **)cort_tensor_data(out))[i], want[i]);
                CHECK(ok);
            }
            cort_value_release(in);
            cort_value_release(out);
        }
    }
    /* CategoryMapper both ways */
    {
        const char *cs[3] = { "red", "green", "blue" };
        int64_t ci[3] = { 7, 3, 5 };
        for (int dir = 0; dir < 2; dir++) {
            mnode m;
            start_node(&m, "CategoryMapper", 1, 1);
            a_strs(&m, "cats_strings", cs, 3);
            a_ints(&m, "cats_int64s", ci, 3);
            a_int(&m, "default_int64", -1);
            a_str(&m, "default_string", "?");
            int elem = dir ? 7 : 8;
            size_t len;
            void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
            int64_t shape[2] = { 2, 2 };
            const char *sx[4] = { "blue", "pink", "red", "green" };
            int64_t ix[4] = { 3, 7, 4, 5 };
            cort_value *in = dir ? tensor(CORT_TYPE_INT64, ix, shape, 2) : tensor(CORT_TYPE_STRING, sx, shape, 2), *out = NULL;
            CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
            if (!dir) {
                int64_t want[4] = { 5, -1, 7, 3 };
                CHECK(out && !memcmp(cort_tensor_data(out), want, sizeof want));
            } else {
                const char *want[4] = { "green", "red", "?", "blue" };
                int ok = out && cort_tensor_type(out) == CORT_TYPE_STRING;
                for (int i = 0; ok && i < 4; i++) ok = !strcmp(((char **)cort_tensor_data(out))[i], want[i]);
                CHECK(ok);
            }
            cort_value_release(in);
            cort_value_release(out);
        }
    }
    /* OneHotEncoder: double input cast to int64; zeros=0 fails on an unknown category */
    for (int zeros = 0; zeros < 2; zeros++) {
        int64_t cats[3] = { 4, 1, 9 };
        mnode m;
        start_node(&m, "OneHotEncoder", 1, 1);
        a_ints(&m, "cats_int64s", cats, 3);
        a_int(&m, "zeros", zeros);
        int elem = 11;
        size_t len;
        void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
        double x[3] = { 9.0, 1.0, 5.0 };
        int64_t shape[1] = { 3 };
        cort_value *in = tensor(CORT_TYPE_DOUBLE, x, shape, 1), *out = NULL;
        cort_status *st = run(bytes, len, 1, 1, &in, 1, &out);
        if (!zeros) CHECK_ERR(st, CORT_ERROR_INVALID_ARGUMENT, "not a known category");
        else {
            CHECK_OK(st);
            float want[9] = { 0, 0, 1, 0, 1, 0, 0, 0, 0 };
            CHECK(out && cort_tensor_element_count(out) == 9 && !memcmp(cort_tensor_data(out), want, sizeof want));
        }
        cort_value_release(in);
        cort_value_release(out);
    }
}

/* ---------------- ZipMap: a sequence of maps sharing one keys tensor ---------------- */
static void test_zipmap(void) {
    int64_t labels[3] = { 10, 20, 30 };
    mnode m;
    start_node(&m, "ZipMap", 1, 1);
    a_ints(&m, "classlabels_int64s", labels, 3);
    int elem = 1;
    size_t len;
    void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
    float x[6] = { 0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f };
    int64_t shape[2] = { 2, 3 };
    cort_value *in = tensor(CORT_TYPE_FLOAT, x, shape, 2), *out = NULL;
    CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
    CHECK(out && cort_value_kind(out) == 2 && cort_sequence_length(out) == 2);
    for (size_t r = 0; out && r < cort_sequence_length(out); r++) {
        cort_value *mp = cort_sequence_at(out, r);
        CHECK(cort_value_kind(mp) == 4);
        cort_value *k = cort_map_keys(mp), *v = cort_map_values(mp);
        CHECK(k && cort_tensor_type(k) == CORT_TYPE_INT64 && !memcmp(cort_tensor_data(k), labels, sizeof labels));
        CHECK(v && cort_tensor_type(v) == CORT_TYPE_FLOAT && !memcmp(cort_tensor_data(v), x + 3 * r, 3 * sizeof(float)));
    }
    cort_value_release(in);
    cort_value_release(out);

    /* a row wider than the labels */
    start_node(&m, "ZipMap", 1, 1);
    a_ints(&m, "classlabels_int64s", labels, 2);
    bytes = finish_model(&m, 1, 1, &elem, 1, &len);
    in = tensor(CORT_TYPE_FLOAT, x, shape, 2);
    CHECK_ERR(run(bytes, len, 1, 1, &in, 1, &out), CORT_ERROR_INVALID_ARGUMENT, "one column per label");
    cort_value_release(in);
}

/* ---------------- Scaler / Normalizer / Imputer / Binarizer on int inputs ---------------- */
static void test_preprocess(void) {
    int32_t x[6] = { 3, -4, 0, 0, 0, 0 };
    int64_t shape[2] = { 2, 3 };
    static const char *const norms[3] = { "MAX", "L1", "L2" };
    static const float want[3][6] = { { 0.75f, -1.0f, 0, 0, 0, 0 }, { 3 / 7.f, -4 / 7.f, 0, 0, 0, 0 }, { 0.6f, -0.8f, 0, 0, 0, 0 } };
    for (int k = 0; k < 3; k++) {
        mnode m;
        start_node(&m, "Normalizer", 1, 1);
        a_str(&m, "norm", norms[k]);
        int elem = 6;
        size_t len;
        void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
        cort_value *in = tensor(CORT_TYPE_INT32, x, shape, 2), *out = NULL;
        CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
        if (out) CHECK_CLOSE((const float *)cort_tensor_data(out), want[k], 6, TU_TOL(1e-6, 0, 1e-7), "Normalizer %s", norms[k]);
        cort_value_release(in);
        cort_value_release(out);
    }
    /* Imputer on int64 with one value per feature */
    int64_t xi[6] = { -1, 5, -1, 2, -1, 8 }, imp[3] = { 100, 200, 300 }, wi[6] = { 100, 5, 300, 2, 200, 8 };
    mnode m;
    start_node(&m, "Imputer", 1, 1);
    a_ints(&m, "imputed_value_int64s", imp, 3);
    a_int(&m, "replaced_value_int64", -1);
    int elem = 7;
    size_t len;
    void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
    cort_value *in = tensor(CORT_TYPE_INT64, xi, shape, 2), *out = NULL;
    CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
    CHECK(out && !memcmp(cort_tensor_data(out), wi, sizeof wi));
    cort_value_release(in);
    cort_value_release(out);
    /* Scaler with one offset and per-feature scales */
    float off = 1.0f, sc[3] = { 2, 0.5f, -1 };
    start_node(&m, "Scaler", 1, 1);
    a_floats(&m, "offset", &off, 1);
    a_floats(&m, "scale", sc, 3);
    bytes = finish_model(&m, 1, 1, &elem, 1, &len);
    in = tensor(CORT_TYPE_INT64, xi, shape, 2);
    CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
    float ws[6];
    for (int i = 0; i < 6; i++) ws[i] = (float)((double)(xi[i] - 1) * sc[i % 3]);
    if (out) CHECK_CLOSE((const float *)cort_tensor_data(out), ws, 6, TU_TOL(1e-6, 0, 0), "Scaler");
    cort_value_release(in);
    cort_value_release(out);
    /* Binarizer keeps the type */
    start_node(&m, "Binarizer", 1, 1);
    a_float(&m, "threshold", 2.5f);
    bytes = finish_model(&m, 1, 1, &elem, 1, &len);
    in = tensor(CORT_TYPE_INT64, xi, shape, 2);
    CHECK_OK(run(bytes, len, 1, 1, &in, 1, &out));
    int64_t wb[6] = { 0, 1, 0, 0, 0, 1 };
    CHECK(out && cort_tensor_type(out) == CORT_TYPE_INT64 && !memcmp(cort_tensor_data(out), wb, sizeof wb));
    cort_value_release(in);
    cort_value_release(out);
}

/* ---------------- CastMap ---------------- */
static void test_castmap(void) {
    int64_t keys[3] = { 4, 0, 2 };
    float vals[3] = { 1.5f, -2.0f, 7.25f };
    const char *svals[3] = { "1.5", "-2", "7.25" };
    int64_t kshape[1] = { 3 };
    for (int variant = 0; variant < 4; variant++) {
        /* 0: dense to float; 1: sparse to float; 2: string values dense to int64; 3: float to string */
        mnode m;
        start_node(&m, "CastMap", 1, 1);
        a_str(&m, "cast_to", variant == 2 ? "TO_INT64" : variant == 3 ? "TO_STRING" : "TO_FLOAT");
        a_str(&m, "map_form", variant == 1 ? "SPARSE" : "DENSE");
        a_int(&m, "max_map", 6);
        int elem = variant == 2 ? -8 : -1;
        size_t len;
        void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
        cort_value *k = tensor(CORT_TYPE_INT64, keys, kshape, 1);
        cort_value *v = variant == 2 ? tensor(CORT_TYPE_STRING, svals, kshape, 1) : tensor(CORT_TYPE_FLOAT, vals, kshape, 1);
        cort_value *map = NULL, *out = NULL;
        CHECK_OK(cort_map_create(k, v, &map));
        cort_value_release(k);
        cort_value_release(v);
        CHECK_OK(run(bytes, len, 1, 1, &map, 1, &out));
        if (out && variant == 0) {
            float want[3] = { -2.0f, 7.25f, 1.5f };   /* ascending keys 0, 2, 4 */
            CHECK(cort_tensor_element_count(out) == 3 && !memcmp(cort_tensor_data(out), want, sizeof want));
        } else if (out && variant == 1) {
            float want[6] = { -2.0f, 0, 7.25f, 0, 1.5f, 0 };
            CHECK(cort_tensor_element_count(out) == 6 && !memcmp(cort_tensor_data(out), want, sizeof want));
        } else if (out && variant == 2) {
            int64_t want[3] = { -2, 7, 1 };
            CHECK(cort_tensor_type(out) == CORT_TYPE_INT64 && !memcmp(cort_tensor_data(out), want, sizeof want));
        } else if (out) {
            const char *want[3] = { "-2.000000", "7.250000", "1.500000" };
            int ok = cort_tensor_type(out) == CORT_TYPE_STRING;
            for (int i = 0; ok && i < 3; i++) ok = !strcmp(((char **)cort_tensor_data(out))[i], want[i]);
            CHECK(ok);
        }
        cort_value_release(map);
        cort_value_release(out);
    }
}

/* DictVectorizer with an int64 vocabulary and double values: output [1, V] of doubles, keys
 * outside the vocabulary dropped. */
static void test_dict_vectorizer(void) {
    int64_t vocab[5] = { 40, 10, 30, 20, 50 }, keys[4] = { 20, 99, 40, 50 };
    double vals[4] = { 1.5, 7.0, -3.25, 8.0 }, want[5] = { -3.25, 0, 0, 1.5, 8.0 };
    mnode m;
    start_node(&m, "DictVectorizer", 1, 1);
    a_ints(&m, "int64_vocabulary", vocab, 5);
    int elem = -11;
    size_t len;
    void *bytes = finish_model(&m, 1, 1, &elem, 1, &len);
    int64_t shape[1] = { 4 };
    cort_value *k = tensor(CORT_TYPE_INT64, keys, shape, 1), *v = tensor(CORT_TYPE_DOUBLE, vals, shape, 1), *map = NULL, *out = NULL;
    CHECK_OK(cort_map_create(k, v, &map));
    cort_value_release(k);
    cort_value_release(v);
    CHECK_OK(run(bytes, len, 1, 1, &map, 1, &out));
    CHECK(out && cort_tensor_type(out) == CORT_TYPE_DOUBLE && cort_tensor_element_count(out) == 5 &&
          !memcmp(cort_tensor_data(out), want, sizeof want));
    cort_value_release(map);
    cort_value_release(out);
}

int main(void) {
    test_trees();
    test_tree_errors();
    test_post_transforms();
    test_encoders();
    test_zipmap();
    test_preprocess();
    test_castmap();
    test_dict_vectorizer();
    return tu_finish();
}
