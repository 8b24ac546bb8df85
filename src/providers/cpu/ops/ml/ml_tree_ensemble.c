/* Tree ensembles of ai.onnx.ml: TreeEnsembleRegressor and TreeEnsembleClassifier (v1, and v3 with
 * the *_as_tensor double attributes) and TreeEnsemble (v5, with BRANCH_MEMBER sets). All three are
 * compiled at init into one flat form: interior nodes in an array, each child either a node index
 * (>= 0) or a leaf -(leaf + 1); a leaf owns a run of (target, weight) contributions. Rows are
 * evaluated independently, spread over the thread pool for big batches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ml_common.h"
#include "../misc_common.h"
#include "../ops_common.h"

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER, M_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

/* 24 bytes: a walk touches one node per level, so the smaller the node the more of a forest
 * stays in cache. BRANCH_MEMBER nodes keep their set's place in te_state.set_off / set_n. */
typedef struct tnode {
    double th;
    int32_t feat, t, f;
    uint8_t mode, mtrue;
} tnode;

/* 16 bytes: the one-mode form with float thresholds, for float inputs; feat is negated - 1 when
 * the node's missing_value_tracks_true is set. */
typedef struct tnode_f { float th; int32_t feat, t, f; } tnode_f;

typedef struct te_state {
    tnode *nodes; size_t n_nodes;
    int32_t *roots; size_t n_trees;
    uint32_t *leaf_off, *leaf_n; size_t n_leaves;
    int32_t *c_target; double *c_weight; size_t n_contrib;
    double *sets; size_t n_sets;
    uint32_t *set_off, *set_n;    /* per node (v5 only) */
    double *base; size_t n_base;
    size_t n_targets;
    int64_t max_feat;
    int agg, post;
    int one_mode;             /* M_LEQ or M_LT when every node has that mode, else -1 */
    int any_mtrue;            /* some node has missing_value_tracks_true */
    tnode_f *fnodes;          /* one_mode and every threshold exact in float: float rows compare in float */
    /* classifier */
    int classifier, binary, str_labels;
    size_t n_labels;
    const int64_t *labels_i;
    const char *const *labels_s;
    int32_t binary_id;
} te_state;

static void te_free(void *p) {
    te_state *st = p;
    if (!st) return;
    cort_free(st->nodes); cort_free(st->roots); cort_free(st->leaf_off); cort_free(st->leaf_n);
    cort_free(st->c_target); cort_free(st->c_weight); cort_free(st->sets); cort_free(st->base);
    cort_free(st->set_off); cort_free(st->set_n); cort_free(st->fnodes);
    cort_free(st);
}

static int mode_of(const char *s) {
    static const char *const names[] = { "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER", "LEAF" };
    for (int i = 0; i < 8; i++) if (!strcmp(s, names[i])) return i;
    return -1;
}

static cort_status *agg_attr(const cort_node *node, int *out) {
    const char *s = cort_attr_str(node, "aggregate_function", "SUM");
    if (!strcmp(s, "AVERAGE")) *out = AGG_AVERAGE;
    else if (!strcmp(s, "SUM")) *out = AGG_SUM;
    else if (!strcmp(s, "MIN")) *out = AGG_MIN;
    else if (!strcmp(s, "MAX")) *out = AGG_MAX;
    else return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'aggregate_function' is '%s', expected AVERAGE, SUM, MIN or MAX", s);
    return NULL;
}

/* Sort key of the legacy (tree id, node id) pairs. */
typedef struct tn_key { int64_t tree, node; size_t idx; } tn_key;
static int tn_cmp(const void *a, const void *b) {
    const tn_key *x = a, *y = b;
    if (x->tree != y->tree) return x->tree < y->tree ? -1 : 1;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}
static long tn_find(const tn_key *keys, size_t n, int64_t tree, int64_t node) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].tree < tree || (keys[mid].tree == tree && keys[mid].node < node)) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo].tree == tree && keys[lo].node == node ? (long)keys[lo].idx : -1;
}

#define NEED(cond, ...) do { if (!(cond)) { err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, __VA_ARGS__); goto done; } } while (0)
#define ALLOC(p, n) do { if (!((p) = cort_calloc((n) ? (n) : 1, sizeof *(p)))) { err = cort_error_oom(); goto done; } } while (0)

/* Legacy (v1/v3) attributes: nodes_* tuples keyed by (tree id, node id), and target_* / class_*
 * contributions keyed the same way. */
static cort_status *build_legacy(const cort_node *node, te_state *st, const char *pfx) {
    cort_status *err = NULL;
    tn_key *keys = NULL;
    int32_t *ref = NULL;
    double *values = NULL, *weights = NULL;
    const int64_t *treeids, *nodeids, *feats, *tids, *fids, *mtrue = NULL, *ct, *cn, *cid;
    const char *const *modes;
    size_t n = cort_attr_ints(node, "nodes_treeids", &treeids);
    NEED(n, "attribute 'nodes_treeids' is missing or empty");
    NEED(cort_attr_ints(node, "nodes_nodeids", &nodeids) == n, "attribute 'nodes_nodeids' must have %zu entries", n);
    NEED(cort_attr_ints(node, "nodes_featureids", &feats) == n, "attribute 'nodes_featureids' must have %zu entries", n);
    NEED(cort_attr_ints(node, "nodes_truenodeids", &tids) == n, "attribute 'nodes_truenodeids' must have %zu entries", n);
    NEED(cort_attr_ints(node, "nodes_falsenodeids", &fids) == n, "attribute 'nodes_falsenodeids' must have %zu entries", n);
    NEED(cort_attr_strings(node, "nodes_modes", &modes) == n, "attribute 'nodes_modes' must have %zu entries", n);
    size_t nm = cort_attr_ints(node, "nodes_missing_value_tracks_true", &mtrue);
    NEED(!nm || nm == n, "attribute 'nodes_missing_value_tracks_true' must have 0 or %zu entries", n);
    size_t nv;
    if ((err = ml_attr_f64(node, "nodes_values", "nodes_values_as_tensor", &values, &nv))) goto done;
    NEED(nv == n, "attribute 'nodes_values' must have %zu entries", n);
    char a_tree[32], a_node[32], a_id[32], a_w[32], a_wt[40];
    snprintf(a_tree, sizeof a_tree, "%s_treeids", pfx); snprintf(a_node, sizeof a_node, "%s_nodeids", pfx);
    snprintf(a_id, sizeof a_id, "%s_ids", pfx); snprintf(a_w, sizeof a_w, "%s_weights", pfx);
    snprintf(a_wt, sizeof a_wt, "%s_weights_as_tensor", pfx);
    size_t nc = cort_attr_ints(node, a_tree, &ct), nw;
    NEED(cort_attr_ints(node, a_node, &cn) == nc, "attribute '%s' must have %zu entries", a_node, nc);
    NEED(cort_attr_ints(node, a_id, &cid) == nc, "attribute '%s' must have %zu entries", a_id, nc);
    if ((err = ml_attr_f64(node, a_w, a_wt, &weights, &nw))) goto done;
    NEED(nw == nc, "attribute '%s' must have %zu entries", a_w, nc);

    ALLOC(keys, n);
    ALLOC(ref, n);
    for (size_t i = 0; i < n; i++) keys[i] = (tn_key){ treeids[i], nodeids[i], i };
    qsort(keys, n, sizeof *keys, tn_cmp);
    for (size_t i = 1; i < n; i++)
        NEED(keys[i].tree != keys[i - 1].tree || keys[i].node != keys[i - 1].node,
             "node id %lld appears twice in tree %lld", (long long)keys[i].node, (long long)keys[i].tree);
    size_t n_int = 0, n_leaf = 0;
    for (size_t i = 0; i < n; i++) {
        int m = mode_of(modes[i]);
        NEED(m >= 0 && m != M_MEMBER, "attribute 'nodes_modes' entry %zu is '%s'", i, modes[i]);
        ref[i] = m == M_LEAF ? -(int32_t)(++n_leaf) : (int32_t)n_int++;
    }
    st->n_nodes = n_int; st->n_leaves = n_leaf;
    ALLOC(st->nodes, n_int);
    for (size_t i = 0; i < n; i++) {
        if (ref[i] < 0) continue;
        tnode *t = &st->nodes[ref[i]];
        long a = tn_find(keys, n, treeids[i], tids[i]), b = tn_find(keys, n, treeids[i], fids[i]);
        NEED(a >= 0 && b >= 0, "node %lld of tree %lld points to a node the tree does not have", (long long)nodeids[i], (long long)treeids[i]);
        NEED(feats[i] >= 0 && feats[i] < INT32_MAX, "node %lld of tree %lld has feature id %lld", (long long)nodeids[i], (long long)treeids[i], (long long)feats[i]);
        t->feat = (int32_t)feats[i];
        if (feats[i] > st->max_feat) st->max_feat = feats[i];
        t->t = ref[a]; t->f = ref[b];
        t->mode = (uint8_t)mode_of(modes[i]);
        t->mtrue = nm ? mtrue[i] != 0 : 0;
        t->th = values[i];
    }
    /* trees: in order of first appearance of their id; root = smallest node id */
    for (size_t i = 0; i < n; i++) if (!i || keys[i].tree != keys[i - 1].tree) st->n_trees++;
    ALLOC(st->roots, st->n_trees);
    for (size_t i = 0, k = 0; i < n; i++) if (!i || keys[i].tree != keys[i - 1].tree) st->roots[k++] = ref[keys[i].idx];
    /* contributions grouped by leaf, in attribute order */
    ALLOC(st->leaf_off, n_leaf); ALLOC(st->leaf_n, n_leaf);
    ALLOC(st->c_target, nc); ALLOC(st->c_weight, nc);
    st->n_contrib = nc;
    int32_t *leaf_of = NULL;
    ALLOC(leaf_of, nc);
    for (size_t k = 0; k < nc; k++) {
        long a = tn_find(keys, n, ct[k], cn[k]);
        if (a < 0 || ref[a] >= 0) { cort_free(leaf_of); NEED(0, "%s entry %zu names node %lld of tree %lld, which is not a leaf", a_tree, k, (long long)cn[k], (long long)ct[k]); }
        if (cid[k] < 0 || (uint64_t)cid[k] >= st->n_targets) { cort_free(leaf_of); NEED(0, "attribute '%s' entry %zu is %lld, out of range [0, %zu)", a_id, k, (long long)cid[k], st->n_targets); }
        leaf_of[k] = -ref[a] - 1;
        st->leaf_n[leaf_of[k]]++;
    }
    for (size_t l = 1; l < n_leaf; l++) st->leaf_off[l] = st->leaf_off[l - 1] + st->leaf_n[l - 1];
    for (size_t l = 0; l < n_leaf; l++) st->leaf_n[l] = 0;
    for (size_t k = 0; k < nc; k++) {
        size_t pos = st->leaf_off[leaf_of[k]] + st->leaf_n[leaf_of[k]]++;
        st->c_target[pos] = (int32_t)cid[k];
        st->c_weight[pos] = weights[k];
    }
    if (st->classifier) {
        /* binary: every vote goes to one class of two */
        st->binary = st->n_labels == 2 && nc > 0;
        for (size_t k = 0; k < nc && st->binary; k++) st->binary = cid[k] == cid[0];
        if (st->binary) st->binary_id = (int32_t)cid[0];
    }
    cort_free(leaf_of);
done:
    cort_free(keys); cort_free(ref); cort_free(values); cort_free(weights);
    return err;
}

/* v5 attributes: nodes_* arrays, children flagged as leaves by nodes_trueleafs/falseleafs. */
static cort_status *build_v5(const cort_node *node, te_state *st) {
    cort_status *err = NULL;
    double *splits = NULL, *weights = NULL, *members = NULL;
    const int64_t *feats, *tids, *fids, *tleaf, *fleaf, *mtrue = NULL, *roots, *ltarget;
    size_t n = cort_attr_ints(node, "nodes_featureids", &feats);
    NEED(n, "attribute 'nodes_featureids' is missing or empty");
    NEED(cort_attr_ints(node, "nodes_truenodeids", &tids) == n, "attribute 'nodes_truenodeids' must have %zu entries", n);
    NEED(cort_attr_ints(node, "nodes_falsenodeids", &fids) == n, "attribute 'nodes_falsenodeids' must have %zu entries", n);
    NEED(cort_attr_ints(node, "nodes_trueleafs", &tleaf) == n, "attribute 'nodes_trueleafs' must have %zu entries", n);
    NEED(cort_attr_ints(node, "nodes_falseleafs", &fleaf) == n, "attribute 'nodes_falseleafs' must have %zu entries", n);
    size_t nm = cort_attr_ints(node, "nodes_missing_value_tracks_true", &mtrue);
    NEED(!nm || nm == n, "attribute 'nodes_missing_value_tracks_true' must have 0 or %zu entries", n);
    const cort_value *modes = cort_attr_tensor(node, "nodes_modes");
    NEED(modes && modes->count == n && (modes->type == CORT_TYPE_UINT8 || modes->type == CORT_TYPE_INT32 || modes->type == CORT_TYPE_INT64),
         "attribute 'nodes_modes' must be a uint8 tensor of %zu entries", n);
    size_t ns, nl, nmv = 0;
    if ((err = ml_attr_f64(node, "", "nodes_splits", &splits, &ns))) goto done;
    NEED(ns == n, "attribute 'nodes_splits' must have %zu entries", n);
    nl = cort_attr_ints(node, "leaf_targetids", &ltarget);
    size_t nw;
    if ((err = ml_attr_f64(node, "", "leaf_weights", &weights, &nw))) goto done;
    NEED(nw == nl && nl, "attributes 'leaf_targetids' and 'leaf_weights' must have the same, non-zero length");
    if ((err = ml_attr_f64(node, "", "membership_values", &members, &nmv))) goto done;
    st->n_trees = cort_attr_ints(node, "tree_roots", &roots);
    NEED(st->n_trees, "attribute 'tree_roots' is missing or empty");
    st->n_nodes = n; st->n_leaves = nl; st->n_contrib = nl;
    ALLOC(st->nodes, n); ALLOC(st->roots, st->n_trees);
    ALLOC(st->leaf_off, nl); ALLOC(st->leaf_n, nl); ALLOC(st->c_target, nl); ALLOC(st->c_weight, nl);
    ALLOC(st->sets, nmv);
    ALLOC(st->set_off, n); ALLOC(st->set_n, n);
    size_t set_pos = 0;
    for (size_t i = 0; i < n; i++) {
        tnode *t = &st->nodes[i];
        int64_t m = cort_load_i64(modes->data, modes->type, i);
        NEED(m >= 0 && m <= M_MEMBER, "attribute 'nodes_modes' entry %zu is %lld", i, (long long)m);
        NEED(feats[i] >= 0 && feats[i] < INT32_MAX, "attribute 'nodes_featureids' entry %zu is %lld", i, (long long)feats[i]);
        t->mode = (uint8_t)m;
        t->feat = (int32_t)feats[i];
        if (feats[i] > st->max_feat) st->max_feat = feats[i];
        t->mtrue = nm ? mtrue[i] != 0 : 0;
        t->th = splits[i];
        int64_t ids[2] = { tids[i], fids[i] }, lf[2] = { tleaf[i], fleaf[i] };
        int32_t r[2];
        for (int k = 0; k < 2; k++) {
            size_t lim = lf[k] ? nl : n;
            NEED(ids[k] >= 0 && (uint64_t)ids[k] < lim, "node %zu's %s child %lld is out of range [0, %zu)", i, k ? "false" : "true", (long long)ids[k], lim);
            r[k] = lf[k] ? -(int32_t)ids[k] - 1 : (int32_t)ids[k];
        }
        t->t = r[0]; t->f = r[1];
        if (m == M_MEMBER) {
            /* this node's set: the next run of membership_values up to a NaN */
            st->set_off[i] = (uint32_t)set_pos;
            while (set_pos < nmv && !isnan(members[set_pos])) st->sets[set_pos] = members[set_pos], set_pos++;
            st->set_n[i] = (uint32_t)(set_pos - st->set_off[i]);
            set_pos++;
        }
    }
    st->n_sets = nmv;
    for (size_t k = 0; k < st->n_trees; k++) {
        NEED(roots[k] >= 0 && (uint64_t)roots[k] < n, "attribute 'tree_roots' entry %zu is %lld, out of range [0, %zu)", k, (long long)roots[k], n);
        st->roots[k] = (int32_t)roots[k];
    }
    for (size_t l = 0; l < nl; l++) {
        NEED(ltarget[l] >= 0 && (uint64_t)ltarget[l] < st->n_targets, "attribute 'leaf_targetids' entry %zu is %lld, out of range [0, %zu)",
             l, (long long)ltarget[l], st->n_targets);
        st->leaf_off[l] = (uint32_t)l; st->leaf_n[l] = 1;
        st->c_target[l] = (int32_t)ltarget[l]; st->c_weight[l] = weights[l];
    }
done:
    cort_free(splits); cort_free(weights); cort_free(members);
    return err;
}

/* Evaluation follows child links until a leaf: a cycle would never end. Every tree must reach
 * at most n_nodes interior nodes from its root. */
static cort_status *check_trees(const cort_node *node, const te_state *st) {
    int32_t *stack = cort_malloc((st->n_nodes + 2) * sizeof *stack);
    if (!stack) return cort_error_oom();
    for (size_t k = 0; k < st->n_trees; k++) {
        size_t sp = 0, visits = 0;
        stack[sp++] = st->roots[k];
        while (sp) {
            int32_t r = stack[--sp];
            if (r < 0) { if ((size_t)(-(int64_t)r - 1) >= st->n_leaves) goto bad; continue; }
            if ((size_t)r >= st->n_nodes || ++visits > st->n_nodes) goto bad;
            stack[sp++] = st->nodes[r].t;   /* sp <= visits + 1 <= n_nodes + 1 */
            stack[sp++] = st->nodes[r].f;
            continue;
        bad:
            cort_free(stack);
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "tree %zu is not a tree: its nodes form a cycle or share children", k);
        }
    }
    cort_free(stack);
    return NULL;
}

static cort_status *te_init_common(const cort_node *node, void **state, int kind) {
    te_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    st->max_feat = -1;
    if (kind == 5) {
        int64_t agg = cort_attr_int(node, "aggregate_function", 1), post = cort_attr_int(node, "post_transform", 0);
        NEED(agg >= 0 && agg <= 3, "attribute 'aggregate_function' is %lld, expected 0..3", (long long)agg);
        NEED(post >= 0 && post <= 4, "attribute 'post_transform' is %lld, expected 0..4", (long long)post);
        /* v5 numbers NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT like ML_POST_* */
        st->agg = (int)agg; st->post = (int)post;
        int64_t nt = cort_attr_int(node, "n_targets", 0);
        NEED(nt > 0 && nt < INT32_MAX, "attribute 'n_targets' is %lld, expected > 0", (long long)nt);
        st->n_targets = (size_t)nt;
        if ((err = build_v5(node, st))) goto done;
    } else {
        if ((err = ml_post_attr(node, &st->post))) goto done;
        if ((err = agg_attr(node, &st->agg))) goto done;
        if (kind == 'c') {
            st->classifier = 1;
            size_t ni = cort_attr_ints(node, "classlabels_int64s", &st->labels_i);
            size_t ns = cort_attr_strings(node, "classlabels_strings", &st->labels_s);
            NEED(!ni != !ns, "exactly one of 'classlabels_int64s' and 'classlabels_strings' must be set");
            st->str_labels = ns > 0;
            st->n_labels = ni ? ni : ns;
            st->n_targets = st->n_labels;
        } else {
            int64_t nt = cort_attr_int(node, "n_targets", 1);
            NEED(nt > 0 && nt < INT32_MAX, "attribute 'n_targets' is %lld, expected > 0", (long long)nt);
            st->n_targets = (size_t)nt;
        }
        if ((err = build_legacy(node, st, kind == 'c' ? "class" : "target"))) goto done;
        if ((err = ml_attr_f64(node, "base_values", "base_values_as_tensor", &st->base, &st->n_base))) goto done;
        NEED(!st->n_base || st->n_base == st->n_targets || (st->binary && st->n_base <= 2),
             "attribute 'base_values' has %zu entries, expected %zu", st->n_base, st->n_targets);
    }
    if ((err = check_trees(node, st))) goto done;
    /* converters use one mode throughout: BRANCH_LEQ (sklearn, LightGBM) or BRANCH_LT (XGBoost) */
    st->one_mode = st->n_nodes && (st->nodes[0].mode == M_LEQ || st->nodes[0].mode == M_LT) ? st->nodes[0].mode : -1;
    for (size_t i = 0; i < st->n_nodes && st->one_mode >= 0; i++)
        if (st->nodes[i].mode != st->one_mode) st->one_mode = -1;
    for (size_t i = 0; i < st->n_nodes; i++) st->any_mtrue |= st->nodes[i].mtrue;
    int exact = st->one_mode >= 0;
    for (size_t i = 0; i < st->n_nodes && exact; i++) exact = (double)(float)st->nodes[i].th == st->nodes[i].th;
    if (exact) {
        ALLOC(st->fnodes, st->n_nodes);
        for (size_t i = 0; i < st->n_nodes; i++) {
            const tnode *t = &st->nodes[i];
            st->fnodes[i] = (tnode_f){ (float)t->th, t->mtrue ? -t->feat - 1 : t->feat, t->t, t->f };
        }
    }
done:
    if (err) { te_free(st); return err; }
    *state = st;
    return NULL;
}
static cort_status *te5_init(const cort_node *node, void **state) { return te_init_common(node, state, 5); }
static cort_status *ter_init(const cort_node *node, void **state) { return te_init_common(node, state, 'r'); }
static cort_status *tec_init(const cort_node *node, void **state) { return te_init_common(node, state, 'c'); }

static inline int node_true(const te_state *st, const tnode *t, double x) {
    int c;
    switch (t->mode) {
    case M_LEQ: c = x <= t->th; break;
    case M_LT: c = x < t->th; break;
    case M_GTE: c = x >= t->th; break;
    case M_GT: c = x > t->th; break;
    case M_EQ: c = x == t->th; break;
    case M_NEQ: c = x != t->th; break;
    default: {
        c = 0;
        size_t i = (size_t)(t - st->nodes);
        const double *s = st->sets + st->set_off[i];
        for (uint32_t k = 0; k < st->set_n[i] && !c; k++) c = s[k] == x;
    }
    }
    return c || (t->mtrue && isnan(x));
}

/* Leaves reached by nl rows (x, row stride c) in the tree rooted at root. The rows walk in
 * lockstep: their node loads are independent, so the cache misses of one level overlap instead
 * of following each other. With one mode throughout (the converters' way) a level is one compare,
 * OR-ed with the missing-value flag, without the mode switch. */
enum { TE_LANES = 8 };
#define TE_LOCKSTEP(NODE_T, VAL_T, NODES, FEAT, MTRUE, CMP)                              \
    for (;;) {                                                                           \
        int live = 0;                                                                    \
        for (size_t i = 0; i < nl; i++) {                                                \
            if (r[i] < 0) continue;                                                      \
            const NODE_T *t = &(NODES)[r[i]];                                            \
            VAL_T v = x[i * c + (size_t)(FEAT)];                                         \
            r[i] = ((v CMP t->th) | ((MTRUE) & (v != v))) ? t->t : t->f;                 \
            live = 1;                                                                    \
        }                                                                                \
        if (!live) break;                                                                \
    }
static void walk_lanes(const te_state *st, int32_t root, const double *x, size_t c, size_t nl, int32_t *leaf) {
    int32_t r[TE_LANES];
    for (size_t i = 0; i < nl; i++) r[i] = root;
    if (st->one_mode == M_LEQ && !st->any_mtrue) {
        /* scikit-learn's trees: no missing-value routing, the flag test compiles away */
        TE_LOCKSTEP(tnode, double, st->nodes, t->feat, 0, <=)
    } else if (st->one_mode == M_LEQ) {
        TE_LOCKSTEP(tnode, double, st->nodes, t->feat, t->mtrue, <=)
    } else if (st->one_mode == M_LT) {
        TE_LOCKSTEP(tnode, double, st->nodes, t->feat, t->mtrue, <)
    } else {
        for (size_t i = 0; i < nl; i++)
            while (r[i] >= 0) {
                const tnode *t = &st->nodes[r[i]];
                r[i] = node_true(st, t, x[i * c + (size_t)t->feat]) ? t->t : t->f;
            }
    }
    for (size_t i = 0; i < nl; i++) leaf[i] = -r[i] - 1;
}

/* walk_lanes for float rows over the float nodes */
static void walk_lanes_f(const te_state *st, int32_t root, const float *x, size_t c, size_t nl, int32_t *leaf) {
    int32_t r[TE_LANES];
    for (size_t i = 0; i < nl; i++) r[i] = root;
    if (st->one_mode == M_LEQ && !st->any_mtrue) {
        TE_LOCKSTEP(tnode_f, float, st->fnodes, t->feat, 0, <=)
    } else if (st->one_mode == M_LEQ) {
        TE_LOCKSTEP(tnode_f, float, st->fnodes, t->feat < 0 ? -t->feat - 1 : t->feat, t->feat < 0, <=)
    } else {
        TE_LOCKSTEP(tnode_f, float, st->fnodes, t->feat < 0 ? -t->feat - 1 : t->feat, t->feat < 0, <)
    }
    for (size_t i = 0; i < nl; i++) leaf[i] = -r[i] - 1;
}

typedef struct te_job {
    const te_state *st;
    const double *x;
    const float *xf;              /* float rows on the float-node path (x is NULL then) */
    size_t c;
    double *acc; uint8_t *has;    /* n_rows x n_targets, from the run's scratch */
    void *y; cort_type ytype;     /* regressor / v5 scores, or the classifier's Z */
    void *labels;                 /* classifier's Y (int64) or NULL; strings are written after */
    int32_t *label_idx;
} te_job;

/* Final scores of one row from its aggregated votes acc (n_targets >= 2 entries for a binary
 * classifier, which reuses acc for its two columns): average, base values, post-transform,
 * label, output. */
static void finish_row(const te_job *job, size_t r, double *acc) {
    const te_state *st = job->st;
    size_t nt = st->n_targets, nz = nt;
    if (st->agg == AGG_AVERAGE && st->n_trees)
        for (size_t j = 0; j < nt; j++) acc[j] /= (double)st->n_trees;
    double *z = acc;
    if (st->classifier && st->binary) {
        /* one class gets every vote: its score s becomes [1 - s, s] (NONE, PROBIT) or [-s, s]
         * before the transform */
        double s = acc[st->binary_id] + (st->n_base ? st->base[st->n_base > (size_t)st->binary_id ? st->binary_id : 0] : 0);
        if (st->post == ML_POST_NONE || st->post == ML_POST_PROBIT) { z[0] = 1 - s; z[1] = s; }
        else { z[0] = -s; z[1] = s; }
        nz = 2;
    } else if (st->n_base) {
        for (size_t j = 0; j < nt; j++) acc[j] += st->base[j];
    }
    ml_post_apply(st->post, z, nz);
    if (st->classifier) {
        size_t best = 0;
        for (size_t j = 1; j < nz; j++) if (z[j] > z[best]) best = j;
        job->label_idx[r] = (int32_t)best;
        if (job->labels) ((int64_t *)job->labels)[r] = st->labels_i[best];
    }
    if (job->y) {
        if (job->ytype == CORT_TYPE_DOUBLE) memcpy((double *)job->y + r * nz, z, nz * sizeof *z);
        else if (job->ytype == CORT_TYPE_FLOAT) for (size_t j = 0; j < nz; j++) ((float *)job->y)[r * nz + j] = (float)z[j];
        else for (size_t j = 0; j < nz; j++) cort_store_f64(job->y, job->ytype, r * nz + j, z[j]);
    }
}

/* Rows [b, e) in blocks: each tree walks the whole block before the next tree starts, so a tree's
 * nodes stay in cache across rows (a forest is often far bigger than the cache; row by row every
 * tree would come from memory again). */
enum { TE_BLOCK = 64 };
static void te_rows(void *arg, size_t b, size_t e) {
    te_job *job = arg;
    const te_state *st = job->st;
    size_t nt = st->n_targets, c = job->c;
    for (size_t b0 = b; b0 < e; b0 += TE_BLOCK) {
        size_t b1 = e - b0 < TE_BLOCK ? e : b0 + TE_BLOCK;
        memset(job->acc + b0 * nt, 0, (b1 - b0) * nt * sizeof *job->acc);
        memset(job->has + b0 * nt, 0, (b1 - b0) * nt);
        for (size_t k = 0; k < st->n_trees; k++) {
            int32_t root = st->roots[k];
            for (size_t r0 = b0; r0 < b1; r0 += TE_LANES) {
                size_t nl = b1 - r0 < TE_LANES ? b1 - r0 : TE_LANES;
                int32_t leaf[TE_LANES];
                if (job->xf) walk_lanes_f(st, root, job->xf + r0 * c, c, nl, leaf);
                else walk_lanes(st, root, job->x + r0 * c, c, nl, leaf);
                for (size_t i = 0; i < nl; i++) {
                    size_t r = r0 + i, l = (size_t)leaf[i], o = st->leaf_off[l], end = o + st->leaf_n[l];
                    double *acc = job->acc + r * nt;
                    uint8_t *has = job->has + r * nt;
                    for (size_t q = o; q < end; q++) {
                        int32_t j = st->c_target[q];
                        double w = st->c_weight[q];
                        if (st->agg == AGG_SUM || st->agg == AGG_AVERAGE) acc[j] += w;
                        else if (!has[j] || (st->agg == AGG_MIN ? w < acc[j] : w > acc[j])) acc[j] = w;
                        has[j] = 1;
                    }
                }
            }
        }
        for (size_t r = b0; r < b1; r++) finish_row(job, r, job->acc + r * nt);
    }
}

static cort_status *te_infer(cort_infer_ctx *ctx) {
    const te_state *st = ctx->state;
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!st) return NULL;
    int64_t n = x && x->rank >= 1 ? (x->rank == 1 ? 1 : x->dims[0]) : -1;
    if (st->classifier) {
        int64_t d1[1] = { n }, d2[2] = { n, (int64_t)(st->binary ? 2 : st->n_targets) };
        cort_type lt = st->str_labels ? CORT_TYPE_STRING : CORT_TYPE_INT64;
        if (ctx->n_outputs > 0) cort_tinfo_tensor_shape(&ctx->outputs[0], lt, d1, 1);
        if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_FLOAT, d2, 2);
        return NULL;
    }
    int64_t d2[2] = { n, (int64_t)st->n_targets };
    cort_type yt = CORT_TYPE_FLOAT;
    if (!strcmp(ctx->node->op_type, "TreeEnsemble") && x && x->elem != CORT_TYPE_UNDEFINED) yt = x->elem;
    if (ctx->n_outputs > 0) cort_tinfo_tensor_shape(&ctx->outputs[0], yt, d2, 2);
    return NULL;
}

static cort_status *te_run(cort_kernel_ctx *ctx) {
    const te_state *st = ctx->state;
    const cort_value *x = ctx->inputs[0];
    size_t n, c;
    CORT_TRY(ml_rows(ctx, x, &n, &c));
    int v5 = !strcmp(ctx->node->op_type, "TreeEnsemble");
    uint32_t ok = v5 ? (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_FLOAT16)) : ML_NUMERIC;
    if (!(ok & CORT_TBIT(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s, expected %s", cort_type_name(x->type),
                               v5 ? "float, double or float16" : "float, double, int64 or int32");
    if (st->max_feat >= 0 && (size_t)st->max_feat >= c)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has %zu features, the trees read feature %lld",
                               c, (long long)st->max_feat);
    double *xd = NULL;
    te_job job = { .st = st, .c = c };
    if (st->fnodes && x->type == CORT_TYPE_FLOAT) job.xf = x->data;
    else {
        CORT_TRY(rd_to_f64_scratch(ctx, x, &xd));
        job.x = xd;
    }
    cort_status *err = NULL;
    size_t cells = (n ? n : 1) * st->n_targets;
    job.acc = cort_kernel_scratch(ctx, cells * sizeof *job.acc);
    job.has = cort_kernel_scratch(ctx, cells);
    if (!job.acc || !job.has) { err = cort_error_oom(); goto done; }
    cort_value *y = NULL, *z = NULL;
    int64_t d1[1] = { (int64_t)n };
    if (st->classifier) {
        int64_t d2[2] = { (int64_t)n, (int64_t)(st->binary ? 2 : st->n_targets) };
        if ((err = cort_kernel_output(ctx, 0, st->str_labels ? CORT_TYPE_STRING : CORT_TYPE_INT64, d1, 1, &y))) goto done;
        if (mi_out_wanted(ctx, 1) && (err = cort_kernel_output(ctx, 1, CORT_TYPE_FLOAT, d2, 2, &z))) goto done;
        job.labels = st->str_labels ? NULL : y->data;
        job.label_idx = cort_kernel_scratch(ctx, (n ? n : 1) * sizeof(int32_t));
        if (!job.label_idx) { err = cort_error_oom(); goto done; }
        if (z) { job.y = z->data; job.ytype = CORT_TYPE_FLOAT; }
    } else {
        int64_t d2[2] = { (int64_t)n, (int64_t)st->n_targets };
        cort_type yt = v5 ? x->type : CORT_TYPE_FLOAT;
        if ((err = cort_kernel_output(ctx, 0, yt, d2, 2, &y))) goto done;
        job.y = y->data; job.ytype = yt;
    }
    /* a row costs about n_trees * depth node visits: split when the batch is big enough */
    size_t grain = st->n_trees >= 8 ? TE_BLOCK : 256;
    cort_parallel_for(ctx->pool, n, grain, te_rows, &job);
    if (st->classifier && st->str_labels)
        for (size_t r = 0; r < n && !err; r++) {
            const char *s = st->labels_s[job.label_idx[r]];
            err = cort_string_set(y, r, s, strlen(s));
        }
done:
    if (job.label_idx) cort_kernel_scratch_free(ctx, job.label_idx);
    if (job.acc) cort_kernel_scratch_free(ctx, job.acc);
    if (job.has) cort_kernel_scratch_free(ctx, job.has);
    if (xd) cort_kernel_scratch_free(ctx, xd);
    return err;
}

const cort_op_def ml_op_tree_ensemble = { .name = "TreeEnsemble", .domain = ML_DOMAIN, .min_opset = 5, .max_opset = ML_OPSET_MAX,
    .init = te5_init, .free_state = te_free, .infer = te_infer, .run = te_run };
const cort_op_def ml_op_tree_ensemble_regressor = { .name = "TreeEnsembleRegressor", .domain = ML_DOMAIN, .min_opset = 1,
    .max_opset = ML_OPSET_MAX, .init = ter_init, .free_state = te_free, .infer = te_infer, .run = te_run };
const cort_op_def ml_op_tree_ensemble_classifier = { .name = "TreeEnsembleClassifier", .domain = ML_DOMAIN, .min_opset = 1,
    .max_opset = ML_OPSET_MAX, .init = tec_init, .free_state = te_free, .infer = te_infer, .run = te_run };
