/* The 'shape' family: the strided copy engine against a naive reference (every element size,
 * transposes, negative and zero strides, inline and pooled), and single-node models built in memory
 * for what the backend tests do not cover: string tensors, views, out-of-range index errors, leaks
 * and allocation failures. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "core/value.h"
#include "providers/cpu/ops/tensor/tensor_common.h"

static uint32_t rng = 777;
static uint32_t urand(uint32_t n) { rng = rng * 1664525u + 1013904223u; return (rng >> 8) % n; }

/* ---------------- copy engine ---------------- */

static void ref_copy(size_t es, char *dst, const char *src, const sh_nd *p) {
    int64_t idx[SH_MAX_ND] = { 0 }, total = 1;
    for (int i = 0; i < p->rank; i++) total *= p->dims[i];
    for (int64_t n = 0; n < total; n++) {
        int64_t so = 0, dof = 0;
        for (int i = 0; i < p->rank; i++) { so += idx[i] * p->ss[i]; dof += idx[i] * p->ds[i]; }
        memcpy(dst + dof * (int64_t)es, src + so * (int64_t)es, es);
        for (int i = p->rank; i-- > 0;) { if (++idx[i] < p->dims[i]) break; idx[i] = 0; }
    }
}

static void test_copy_engine(cort_pool *pool) {
    static const size_t sizes[] = { 1, 2, 4, 8, 16, 3 };
    for (int iter = 0; iter < 600; iter++) {
        size_t es = sizes[iter % 6];
        int rank = 1 + (int)urand(5);
        int64_t dims[8], perm[8], in_strides[8];
        int64_t total = 1;
        /* bounded sizes: at most 70^3 or 300 * 9^4 elements, so ASan runs stay small */
        int wide = iter % 7 == 0 && rank <= 3 && iter % 50 != 0;
        for (int i = 0; i < rank; i++) {
            dims[i] = 1 + urand(wide ? 70 : 9);
            total *= dims[i];
        }
        if (iter % 50 == 0) { total = total / dims[0] * 300; dims[0] = 300; }   /* large enough for the pool */
        for (int i = 0; i < rank; i++) perm[i] = i;
        for (int i = rank - 1; i > 0; i--) { int j = (int)urand((uint32_t)i + 1); int64_t t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
        sh_strides(dims, (size_t)rank, in_strides);
        sh_nd p = { .rank = rank };
        int64_t out_dims[8], src_off = 0;
        int mode = iter % 3;   /* 0 transpose, 1 reversed axis + transpose, 2 broadcast axis */
        for (int i = 0; i < rank; i++) {
            out_dims[i] = dims[perm[i]];
            p.dims[i] = out_dims[i];
            p.ss[i] = in_strides[perm[i]];
        }
        if (mode == 1) { src_off = (p.dims[0] - 1) * p.ss[0]; p.ss[0] = -p.ss[0]; }
        if (mode == 2) p.ss[rank - 1] = 0;
        sh_strides(out_dims, (size_t)rank, p.ds);
        char *src = malloc((size_t)total * es), *a = malloc((size_t)total * es), *b = malloc((size_t)total * es);
        for (int64_t i = 0; i < total * (int64_t)es; i++) src[i] = (char)urand(256);
        memset(a, 0, (size_t)total * es);
        memset(b, 0, (size_t)total * es);
        sh_nd_copy(iter & 1 ? pool : NULL, es, a, src + src_off * (int64_t)es, &p);
        ref_copy(es, b, src + src_off * (int64_t)es, &p);
        CHECK_MSG(memcmp(a, b, (size_t)total * es) == 0, "copy iter %d es %zu rank %d mode %d", iter, es, rank, mode);
        free(src); free(a); free(b);
    }
    /* big 2-D transposes take the blocked paths (both directions) */
    for (int t = 0; t < 2; t++) {
        const int64_t R = 333, C = 517;
        float *src = malloc(R * C * 4), *a = malloc(R * C * 4), *b = malloc(R * C * 4);
        for (int64_t i = 0; i < R * C; i++) src[i] = (float)i;
        sh_nd p = { .rank = 2, .dims = { C, R }, .ss = { 1, C }, .ds = { R, 1 } };
        sh_nd_copy(t ? pool : NULL, 4, a, src, &p);
        ref_copy(4, (char *)b, (const char *)src, &p);
        CHECK(memcmp(a, b, R * C * 4) == 0);
        free(src); free(a); free(b);
    }
}

/* ---------------- single-node models (pb_* writer: testutil.h) ---------------- */


/* ValueInfo with element type only (shape unknown). */
static void pb_value_info(pb *g, int field, const char *name, int elem) {
    pb vi = { 0 }, tp = { 0 }, tt = { 0 };
    pb_str(&vi, 1, name);
    pb_int(&tt, 1, elem);
    pb_sub(&tp, 1, &tt);
    pb_sub(&vi, 2, &tp);
    pb_sub(g, field, &vi);
}

typedef struct attr_spec { const char *name; int type; int64_t i; const int64_t *ints; size_t n; const char *s; } attr_spec;

/* One node, inputs "x0".."xN" and outputs "y0".."yM" (all of element type elem[i]). */
static void *make_model(const char *op, int opset, int n_in, const int *in_elem, int n_out, const int *out_elem,
                        const attr_spec *attrs, int n_attrs, size_t *len) {
    pb m = { 0 }, g = { 0 }, node = { 0 }, os = { 0 };
    char name[16];
    pb_int(&m, 1, 8);
    pb_str(&os, 1, "");
    pb_int(&os, 2, opset);
    pb_sub(&m, 8, &os);
    for (int i = 0; i < n_in; i++) { snprintf(name, sizeof name, "x%d", i); pb_str(&node, 1, name); }
    for (int i = 0; i < n_out; i++) { snprintf(name, sizeof name, "y%d", i); pb_str(&node, 2, name); }
    pb_str(&node, 3, "the_node");
    pb_str(&node, 4, op);
    for (int a = 0; a < n_attrs; a++) {
        pb at = { 0 };
        pb_str(&at, 1, attrs[a].name);
        pb_int(&at, 20, attrs[a].type);
        if (attrs[a].type == 2) pb_int(&at, 3, attrs[a].i);
        if (attrs[a].type == 3) pb_str(&at, 4, attrs[a].s);
        if (attrs[a].type == 7) for (size_t k = 0; k < attrs[a].n; k++) pb_int(&at, 8, attrs[a].ints[k]);
        pb_sub(&node, 5, &at);
    }
    pb_sub(&g, 1, &node);
    pb_str(&g, 2, "g");
    for (int i = 0; i < n_in; i++) { snprintf(name, sizeof name, "x%d", i); pb_value_info(&g, 11, name, in_elem[i]); }
    for (int i = 0; i < n_out; i++) { snprintf(name, sizeof name, "y%d", i); pb_value_info(&g, 12, name, out_elem[i]); }
    pb_sub(&m, 7, &g);
    *len = m.n;
    return m.p;
}

/* Runs a model on the given inputs; outputs receive new references. */
static cort_status *run_model(void *bytes, size_t len, int n_in, cort_value **in, int n_out, cort_value **out) {
    cort_session *s = NULL;
    cort_status *st = cort_session_create_from_memory(bytes, len, NULL, &s);
    if (st) return st;
    const char *in_names[4] = { "x0", "x1", "x2", "x3" }, *out_names[4] = { "y0", "y1", "y2", "y3" };
    for (int i = 0; i < n_out; i++) out[i] = NULL;
    st = cort_session_run(s, NULL, in_names, in, (size_t)n_in, out_names, (size_t)n_out, out);
    cort_session_release(s);
    return st;
}

static cort_value *tensor_i64(const int64_t *v, const int64_t *shape, size_t rank) {
    cort_value *t = NULL;
    if (cort_tensor_create(CORT_TYPE_INT64, shape, rank, &t)) return NULL;
    memcpy(cort_tensor_data(t), v, cort_tensor_bytes(t));
    return t;
}
static cort_value *tensor_str(const char *const *v, const int64_t *shape, size_t rank) {
    cort_value *t = NULL;
    if (cort_tensor_create(CORT_TYPE_STRING, shape, rank, &t)) return NULL;
    for (size_t i = 0; i < cort_tensor_element_count(t); i++) cort_status_free(cort_tensor_set_string(t, i, v[i]));
    return t;
}
static int str_eq(const cort_value *t, const char *const *expect, size_t n) {
    if (!t || cort_tensor_type(t) != CORT_TYPE_STRING || cort_tensor_element_count(t) != n) return 0;
    char **d = cort_tensor_data(t);
    for (size_t i = 0; i < n; i++) if (strcmp(d[i], expect[i])) return 0;
    return 1;
}

static size_t bytes_in_use(void) { cort_allocator_stats s; cort_status_free(cort_allocator_get_stats(&s)); return s.bytes_in_use; }

static void test_strings(void) {
    size_t base = bytes_in_use(), len;
    const int S = CORT_TYPE_STRING, I = CORT_TYPE_INT64;
    const char *words[6] = { "a", "bb", "", "dddd", "eeeee", "f" };
    int64_t shape23[2] = { 2, 3 };
    /* Transpose */
    {
        void *m = make_model("Transpose", 13, 1, &S, 1, &S, NULL, 0, &len);
        cort_value *x = tensor_str(words, shape23, 2), *y = NULL;
        CHECK_OK(run_model(m, len, 1, &x, 1, &y));
        const char *expect[6] = { "a", "dddd", "bb", "eeeee", "", "f" };
        CHECK(str_eq(y, expect, 6));
        cort_value_release(x); cort_value_release(y); free(m);
    }
    /* Concat of a tensor with itself along axis 1 */
    {
        attr_spec ax = { "axis", 2, 1, NULL, 0, NULL };
        int ins[2] = { S, S };
        void *m = make_model("Concat", 13, 2, ins, 1, &S, &ax, 1, &len);
        cort_value *x = tensor_str(words, shape23, 2), *y = NULL, *in[2] = { x, x };
        CHECK_OK(run_model(m, len, 2, in, 1, &y));
        const char *expect[12] = { "a", "bb", "", "a", "bb", "", "dddd", "eeeee", "f", "dddd", "eeeee", "f" };
        CHECK(str_eq(y, expect, 12));
        cort_value_release(x); cort_value_release(y); free(m);
    }
    /* Gather with a negative index; then an out-of-range one */
    {
        int ins[2] = { S, I };
        void *m = make_model("Gather", 13, 2, ins, 1, &S, NULL, 0, &len);
        int64_t idx[2] = { -1, 0 }, ishape[1] = { 2 };
        cort_value *x = tensor_str(words, shape23, 2), *iv = tensor_i64(idx, ishape, 1), *y = NULL, *in[2] = { x, iv };
        CHECK_OK(run_model(m, len, 2, in, 1, &y));
        const char *expect[6] = { "dddd", "eeeee", "f", "a", "bb", "" };
        CHECK(str_eq(y, expect, 6));
        cort_value_release(y); y = NULL;
        ((int64_t *)cort_tensor_data(iv))[1] = 7;
        cort_status *st = run_model(m, len, 2, in, 1, &y);
        CHECK_ERR(st, CORT_ERROR_INVALID_ARGUMENT, "index 7");
        CHECK(y == NULL);
        cort_value_release(x); cort_value_release(iv); free(m);
    }
    /* Pad (edge) of strings */
    {
        attr_spec md = { "mode", 3, 0, NULL, 0, "edge" };
        int ins[2] = { S, I };
        void *m = make_model("Pad", 13, 2, ins, 1, &S, &md, 1, &len);
        int64_t pads[4] = { 0, 1, 0, 0 }, pshape[1] = { 4 };
        cort_value *x = tensor_str(words, shape23, 2), *pv = tensor_i64(pads, pshape, 1), *y = NULL, *in[2] = { x, pv };
        CHECK_OK(run_model(m, len, 2, in, 1, &y));
        const char *expect[8] = { "a", "a", "bb", "", "dddd", "dddd", "eeeee", "f" };
        CHECK(str_eq(y, expect, 8));
        cort_value_release(x); cort_value_release(pv); cort_value_release(y); free(m);
    }
    CHECK_MSG(bytes_in_use() == base, "leak: %zu bytes in use, %zu before", bytes_in_use(), base);
}

static void test_views_and_errors(void) {
    size_t len;
    const int F = CORT_TYPE_FLOAT, I = CORT_TYPE_INT64;
    int64_t shape[3] = { 2, 3, 4 };
    cort_value *x = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 3, &x));
    /* Reshape output shares the input's data */
    {
        int ins[2] = { F, I };
        void *m = make_model("Reshape", 14, 2, ins, 1, &F, NULL, 0, &len);
        int64_t s[2] = { 0, -1 }, sshape[1] = { 2 };
        cort_value *sv = tensor_i64(s, sshape, 1), *y = NULL, *in[2] = { x, sv };
        CHECK_OK(run_model(m, len, 2, in, 1, &y));
        CHECK(y && cort_tensor_rank(y) == 2 && cort_tensor_shape(y)[1] == 12);
        CHECK(y && cort_tensor_data(y) == cort_tensor_data(x));
        cort_value_release(y); y = NULL;
        int64_t bad[2] = { 5, -1 };
        memcpy(cort_tensor_data(sv), bad, sizeof bad);
        CHECK_ERR(run_model(m, len, 2, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "the_node");
        cort_value_release(sv); free(m);
    }
    /* Squeeze of a non-1 axis names the axis */
    {
        int ins[2] = { F, I };
        void *m = make_model("Squeeze", 13, 2, ins, 1, &F, NULL, 0, &len);
        int64_t a[1] = { 1 }, ashape[1] = { 1 };
        cort_value *av = tensor_i64(a, ashape, 1), *y = NULL, *in[2] = { x, av };
        CHECK_ERR(run_model(m, len, 2, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "axis 1");
        cort_value_release(av); free(m);
    }
    /* ScatterND with an out-of-range index */
    {
        int ins[3] = { F, I, F };
        void *m = make_model("ScatterND", 16, 3, ins, 1, &F, NULL, 0, &len);
        int64_t idx[1] = { -3 }, ishape[2] = { 1, 1 }, ushape[3] = { 1, 3, 4 };
        cort_value *iv = tensor_i64(idx, ishape, 2), *u = NULL, *y = NULL;
        CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, ushape, 3, &u));
        cort_value *in[3] = { x, iv, u };
        CHECK_ERR(run_model(m, len, 3, in, 1, &y), CORT_ERROR_INVALID_ARGUMENT, "index -3");
        cort_value_release(iv); cort_value_release(u); free(m);
    }
    cort_value_release(x);
}

/* Every allocation of a string-moving run fails in turn: no crash, no leak. */
static void test_oom(void) {
    size_t len, base;
    const int S = CORT_TYPE_STRING, I = CORT_TYPE_INT64;
    int ins[2] = { S, I };
    attr_spec ax = { "axis", 2, 1, NULL, 0, NULL };
    void *m = make_model("Gather", 13, 2, ins, 1, &S, &ax, 1, &len);
    const char *words[6] = { "a", "bb", "c", "dddd", "eeeee", "f" };
    int64_t shape23[2] = { 2, 3 }, idx[3] = { 2, 0, -1 }, ishape[1] = { 3 };
    cort_value *x = tensor_str(words, shape23, 2), *iv = tensor_i64(idx, ishape, 1), *in[2] = { x, iv };
    base = bytes_in_use();
    int ok_seen = 0;
    for (long n = 1; n < 400 && !ok_seen; n++) {
        cort_value *y = NULL;
        cort_test_alloc_fail_at(n);
        cort_status *st = run_model(m, len, 2, in, 1, &y);
        cort_test_alloc_fail_at(0);
        if (!st) {
            ok_seen = 1;
            const char *expect[6] = { "c", "a", "c", "f", "dddd", "f" };
            CHECK(str_eq(y, expect, 6));
        } else {
            CHECK(y == NULL);
            cort_status_free(st);
        }
        cort_value_release(y);
        CHECK_MSG(bytes_in_use() == base, "leak after failing allocation %ld", n);
    }
    CHECK(ok_seen);
    cort_value_release(x); cort_value_release(iv); free(m);
}

int main(void) {
    cort_pool *pool = NULL;
    CHECK_OK(cort_pool_create(4, &pool));
    test_copy_engine(pool);
    cort_pool_free(pool);
    test_strings();
    test_views_and_errors();
    test_oom();
    return tu_finish();
}
