/* XNNPACK provider: outputs equal the CPU provider's, concurrency, options, allocator identity.
 *
 *   test_xnnpack                      all checks (skipped when the provider is not built)
 *   test_xnnpack --bench MODEL [N [T]] throughput of 1 vs 2 concurrent runs on one session: CPU, XNNPACK with
 *                                     transposes per node (nhwc_chains 0), XNNPACK (NHWC chains); T threads (1)
 *
 * The ONNX backend node tests of the ops XNNPACK takes run twice — CPU only, then with "xnnpack"
 * appended — and the outputs must agree (rtol 1e-3, atol 1e-4). Backend tests feed weights as
 * graph inputs, which XNNPACK cannot pack, so tests/models/xnnpack_node/ holds copies with every
 * input but the first turned into initializers (tests/models/make_xnnpack_models.py).
 *
 * NHWC chains: tests/models/xnnpack_chain_*.onnx (make_xnnpack_chain_models.py) and the CNNs in
 * build/models/ run on the CPU, on XNNPACK with nhwc_chains 0 and with chains; outputs must agree,
 * transposes per run (cort_xnnpack_test_transpose_count) must drop, and no channels-last value may
 * reach a non-XNNPACK node or a graph output. */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"
#include "onnx/onnx.h"
#include "session/session.h"
#include "providers/xnnpack/xnn_test.h"
#include "core/alloc.h"

#define SUITE "/usr/share/libonnx-testdata/data/node"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *const prefixes[] = {
    "test_conv", "test_basic_conv", "test_maxpool", "test_averagepool", "test_globalaveragepool", "test_gemm",
    "test_matmul", "test_add", "test_sub", "test_mul", "test_div", "test_min", "test_max", "test_relu", "test_clip",
    "test_sigmoid", "test_hardswish", "test_leakyrelu", "test_prelu", "test_elu", "test_softmax", "test_resize",
    "test_constant_pad", "test_depthtospace", NULL
};

static cort_status *make_session(const char *path, int xnnpack, int threads, cort_session **out) {
    cort_session_options *o = NULL;
    cort_status *st = cort_session_options_create(&o);
    if (!st) st = cort_session_options_set_threads(o, threads);
    if (!st && xnnpack) st = cort_session_options_append_provider(o, "xnnpack", NULL, NULL, 0);
    if (!st) st = cort_session_create(path, o, out);
    cort_session_options_free(o);
    return st;
}

/* nhwc: the provider's nhwc_chains option ("0"/"1"), or NULL for the default */
static cort_status *make_session_nhwc(const char *path, int threads, const char *nhwc, cort_session **out) {
    cort_session_options *o = NULL;
    const char *k[] = { "nhwc_chains" }, *v[] = { nhwc };
    cort_status *st = cort_session_options_create(&o);
    if (!st) st = cort_session_options_set_threads(o, threads);
    if (!st) st = cort_session_options_append_provider(o, "xnnpack", k, v, nhwc ? 1 : 0);
    if (!st) st = cort_session_create(path, o, out);
    cort_session_options_free(o);
    return st;
}

static size_t provider_nodes(const cort_session *s, const char *provider) {
    size_t n = 0;
    for (size_t i = 0; i < s->graph->n_nodes; i++)
        if (!s->graph->skip[i] && s->graph->nodes[i].provider && !strcmp(s->graph->nodes[i].provider->name, provider)) n++;
    return n;
}

/* Same type and shape; non-float data equal; floats close by tu_close_err (the absolute part of the
 * tolerance scales with the output's magnitude: XNNPACK sums in another order than the CPU kernels). */
static int close_enough(const cort_value *a, const cort_value *b, tu_tol tol, char *why, size_t len) {
    if (a->type != b->type || a->rank != b->rank || memcmp(a->shape, b->shape, a->rank * sizeof(int64_t))) {
        snprintf(why, len, "type or shape differs");
        return 0;
    }
    if (a->type != CORT_TYPE_FLOAT) {
        if (a->type == CORT_TYPE_STRING || memcmp(a->data, b->data, a->bytes)) { snprintf(why, len, "data differs"); return 0; }
        return 1;
    }
    const float *x = a->data, *y = b->data;
    size_t at = 0;
    const double e = tu_close_err(x, y, a->count, tol, &at);
    if (e <= 1) return 1;
    snprintf(why, len, "element %zu: %.9g vs %.9g (%.3g x the tolerance)", at, x[at], y[at], e);
    return 0;
}

static cort_status *run_all(cort_session *s, cort_value **inputs, size_t n_in, cort_value **outputs) {
    const char *in_names[16], *out_names[16];
    size_t n_out = cort_session_output_count(s);
    for (size_t i = 0; i < n_in; i++) in_names[i] = cort_session_input_name(s, i);
    for (size_t i = 0; i < n_out; i++) { out_names[i] = cort_session_output_name(s, i); outputs[i] = NULL; }
    return cort_session_run(s, NULL, in_names, inputs, n_in, out_names, n_out, outputs);
}

static size_t load_inputs(const char *dir, cort_value **inputs, size_t max) {
    size_t n = 0;
    for (; n < max; n++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/test_data_set_0/input_%zu.pb", dir, n);
        size_t len = 0;
        void *bytes = tu_read_file(p, &len);
        if (!bytes) break;
        cort_status *st = cort_value_parse(bytes, len, 0, &inputs[n]);
        free(bytes);
        if (st) { cort_status_free(st); break; }
    }
    return n;
}

typedef struct totals { int tests, compared, on_xnnpack, nodes, mismatches; } totals;

/* Runs one backend test folder on CPU and on XNNPACK and compares. */
static void compare_dir(const char *dir, totals *t, int verbose) {
    char model[1200];
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    cort_session *cpu = NULL, *xnn = NULL;
    cort_status *st = make_session(model, 0, 1, &cpu);
    if (st) { cort_status_free(st); return; }   /* not a CPU-supported test either */
    t->tests++;
    st = make_session(model, 1, 1, &xnn);   /* no pthreadpool: ~10 ms to start, per session */
    if (!CHECK_OK(st)) { fprintf(stderr, "  in %s\n", dir); cort_session_release(cpu); return; }
    size_t nx = provider_nodes(xnn, "xnnpack");
    t->nodes += (int)nx;
    if (nx) t->on_xnnpack++;
    cort_value *inputs[16] = { 0 }, *a[16] = { 0 }, *b[16] = { 0 };
    size_t n_in = load_inputs(dir, inputs, 16), n_out = cort_session_output_count(cpu);
    if (n_in == cort_session_input_count(cpu) && n_out <= 16) {
        cort_status *sa = run_all(cpu, inputs, n_in, a), *sb = run_all(xnn, inputs, n_in, b);
        if (!sa) {
            t->compared++;
            if (CHECK_OK(sb)) {
                for (size_t i = 0; i < n_out; i++) {
                    char why[160];
                    if (!close_enough(b[i], a[i], TU_TOL(1e-3, 1e-5, 1e-4), why, sizeof why)) {
                        t->mismatches++;
                        CHECK_MSG(0, "%s output %zu: %s", dir, i, why);
                    }
                }
            } else {
                fprintf(stderr, "  in %s\n", dir);
            }
        } else {
            cort_status_free(sb);
        }
        cort_status_free(sa);
        for (size_t i = 0; i < n_out; i++) { cort_value_release(a[i]); cort_value_release(b[i]); }
    }
    for (size_t i = 0; i < n_in; i++) cort_value_release(inputs[i]);
    if (verbose) printf("  %-60s %zu node(s) on xnnpack\n", dir, nx);
    cort_session_release(cpu);
    cort_session_release(xnn);
}

static int has_prefix(const char *name) {
    for (const char *const *p = prefixes; *p; p++)
        if (!strncmp(name, *p, strlen(*p))) return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void compare_suite(const char *root, int filter, totals *t, int verbose) {
    DIR *d = opendir(root);
    if (!d) { printf("(no %s)\n", root); return; }
    char *names[2048];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 2048)
        if (!strncmp(e->d_name, "test_", 5) && (!filter || has_prefix(e->d_name))) names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        compare_dir(dir, t, verbose);
        free(names[i]);
    }
}

/* ---- concurrency: 4 threads x N runs on one XNNPACK session equal the sequential results */
#define CONC_THREADS 4
#define CONC_INPUTS 4
typedef struct conc_ctx {
    cort_session *s;
    int runs;
    cort_value *inputs[CONC_INPUTS], *expected[CONC_INPUTS];
    int bad, errors;
    pthread_mutex_t lock;
} conc_ctx;

static cort_value *random_input(const int64_t *shape, size_t rank, unsigned seed) {
    cort_value *v = NULL;
    if (cort_tensor_create(CORT_TYPE_FLOAT, shape, rank, &v)) return NULL;
    float *p = cort_tensor_data(v);
    for (size_t i = 0; i < cort_tensor_element_count(v); i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return v;
}

static void *conc_worker(void *arg) {
    conc_ctx *c = arg;
    for (int r = 0; r < c->runs; r++) {
        int k = r % CONC_INPUTS;
        cort_value *out[16];
        cort_status *st = run_all(c->s, &c->inputs[k], 1, out);
        pthread_mutex_lock(&c->lock);
        if (st) { c->errors++; fprintf(stderr, "concurrent run: %s\n", cort_status_message(st)); cort_status_free(st); }
        else {
            char why[160];
            if (!close_enough(out[0], c->expected[k], TU_TOL(1e-5, 0, 1e-6), why, sizeof why)) c->bad++;
            cort_value_release(out[0]);
        }
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

static void test_concurrency(const char *model, const int64_t *shape, size_t rank, int threads, int runs) {
    conc_ctx c;
    memset(&c, 0, sizeof c);
    c.runs = runs;
    pthread_mutex_init(&c.lock, NULL);
    if (!CHECK_OK(make_session(model, 1, threads, &c.s))) return;
    for (int k = 0; k < CONC_INPUTS; k++) {
        c.inputs[k] = random_input(shape, rank, 1234u + (unsigned)k);
        cort_value *out[16];
        CHECK_OK(run_all(c.s, &c.inputs[k], 1, out));
        c.expected[k] = out[0];
    }
    pthread_t th[CONC_THREADS];
    for (int i = 0; i < CONC_THREADS; i++) pthread_create(&th[i], NULL, conc_worker, &c);
    for (int i = 0; i < CONC_THREADS; i++) pthread_join(th[i], NULL);
    CHECK_MSG(c.errors == 0 && c.bad == 0, "%s: %d errors, %d results differ from sequential runs", model, c.errors, c.bad);
    printf("concurrency %s (threads %d): %d callers x %d runs, %d errors, %d mismatches\n", model, threads, CONC_THREADS,
           runs, c.errors, c.bad);
    for (int k = 0; k < CONC_INPUTS; k++) { cort_value_release(c.inputs[k]); cort_value_release(c.expected[k]); }
    cort_session_release(c.s);
    pthread_mutex_destroy(&c.lock);
}

/* ---- the small CNN: every node but Flatten on XNNPACK, Relu/Clip fused, same result as CPU */
static void test_cnn(void) {
    const char *model = "tests/models/xnnpack_conv.onnx";
    cort_session *cpu = NULL, *xnn = NULL;
    if (!CHECK_OK(make_session(model, 0, 1, &cpu)) || !CHECK_OK(make_session(model, 1, 2, &xnn))) {
        cort_session_release(cpu);
        return;
    }
    CHECK_MSG(provider_nodes(xnn, "xnnpack") == 10, "%zu nodes on xnnpack, expected 10", provider_nodes(xnn, "xnnpack"));
    for (size_t i = 0; i < xnn->graph->n_nodes; i++) {
        const cort_node *n = &xnn->graph->nodes[i];
        if (!strcmp(n->name, "relu1") || !strcmp(n->name, "relu6"))
            CHECK_MSG(cort_xnnpack_test_passthrough(n) == 1, "%s is not fused into its producer", n->name);
        if (!strcmp(n->name, "softmax")) CHECK(cort_xnnpack_test_passthrough(n) != 1);
    }
    int64_t shape[4] = { 1, 3, 16, 16 };
    cort_value *x = random_input(shape, 4, 99), *a[16], *b[16];
    CHECK_OK(run_all(cpu, &x, 1, a));
    CHECK_OK(run_all(xnn, &x, 1, b));
    char why[160];
    CHECK_MSG(close_enough(b[0], a[0], TU_TOL(1e-3, 1e-5, 1e-4), why, sizeof why), "xnnpack_conv: %s", why);
    cort_value_release(a[0]);
    cort_value_release(b[0]);
    cort_value_release(x);
    /* allocator identity: one process-wide owner, distinct from the CPU allocator */
    const void *ax = cort_session_allocator(xnn, "xnnpack");
    CHECK(ax != NULL);
    CHECK(ax != cort_session_allocator(xnn, "cpu"));
    CHECK(cort_session_allocator(cpu, "xnnpack") == NULL);
    cort_session *again = NULL;
    if (CHECK_OK(make_session(model, 1, 1, &again))) {
        CHECK(cort_session_allocator(again, "xnnpack") == ax);
        cort_session_release(again);
    }
    CHECK_OK(cort_xnnpack_test_roundtrip(ax));
    cort_session_release(cpu);
    cort_session_release(xnn);
}

/* ---- NHWC across chains: same outputs as the CPU, fewer transposes, channels-last never leaves the
 * XNNPACK nodes (a flagged output is read by XNNPACK nodes only and is no graph output) */
static int is_graph_output(const cort_graph *g, int32_t s) {
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->output_slots[i] == s) return 1;
    return 0;
}

static size_t check_flags(const cort_session *s, const char *model) {
    const cort_graph *g = s->graph;
    size_t flagged = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const cort_node *n = &g->nodes[i];
        if (g->skip[i] || !(n->provider_flags & 1u)) continue;
        flagged++;
        int32_t slot = n->out_slot[0];
        CHECK_MSG(n->provider && !strcmp(n->provider->name, "xnnpack") && !is_graph_output(g, slot), "%s: node %s", model,
                  n->name);
        for (size_t j = 0; j < g->n_nodes; j++) {
            const cort_node *m = &g->nodes[j];
            if (g->skip[j]) continue;
            for (size_t k = 0; k < m->n_inputs; k++)
                if (m->in_slot[k] == slot)
                    CHECK_MSG(m->provider && !strcmp(m->provider->name, "xnnpack"), "%s: %s emits NHWC into %s (%s)", model,
                              n->name, m->name, m->provider ? m->provider->name : "none");
        }
    }
    return flagged;
}

/* Transposes of one run of s on x (outputs in out; run twice, the second counted). */
static size_t counted_run(cort_session *s, cort_value *x, cort_value **out) {
    if (!CHECK_OK(run_all(s, &x, 1, out))) return 0;
    for (size_t i = 0; i < cort_session_output_count(s); i++) cort_value_release(out[i]);
    size_t t0 = cort_xnnpack_test_transpose_count();
    if (!CHECK_OK(run_all(s, &x, 1, out))) return 0;
    return cort_xnnpack_test_transpose_count() - t0;
}

/* Runs model on the CPU, on XNNPACK with nhwc_chains 0 and 1; outputs must agree; returns the
 * transposes per run without and with chains. */
static void compare_chains(const char *model, int threads, tu_tol tol, size_t *before, size_t *after) {
    cort_session *cpu = NULL, *per_node = NULL, *chains = NULL;
    *before = *after = 0;
    if (!CHECK_OK(make_session(model, 0, threads, &cpu))) return;
    if (!CHECK_OK(make_session_nhwc(model, threads, "0", &per_node)) ||
        !CHECK_OK(make_session_nhwc(model, threads, NULL, &chains))) {
        cort_session_release(cpu);
        cort_session_release(per_node);
        return;
    }
    CHECK_MSG(check_flags(per_node, model) == 0, "%s: nhwc_chains 0 still flags nodes", model);
    size_t flagged = check_flags(chains, model);
    cort_value_type ty;
    int64_t dims[8];
    CHECK_OK(cort_session_input_type(cpu, 0, &ty, dims, 8));
    for (int i = 0; i < ty.rank; i++) if (dims[i] < 0) dims[i] = 1;
    cort_value *x = random_input(dims, (size_t)ty.rank, 77);
    size_t n_out = cort_session_output_count(cpu);
    cort_value *ref[16], *a[16], *b[16];
    CHECK_OK(run_all(cpu, &x, 1, ref));
    *before = counted_run(per_node, x, a);
    *after = counted_run(chains, x, b);
    for (size_t i = 0; i < n_out; i++) {
        char why[160];
        CHECK_MSG(close_enough(a[i], ref[i], tol, why, sizeof why), "%s output %zu (per node): %s", model, i, why);
        CHECK_MSG(close_enough(b[i], ref[i], tol, why, sizeof why), "%s output %zu (chains): %s", model, i, why);
        CHECK_MSG(b[i]->layout == 0, "%s: output %zu leaves with layout %d", model, i, b[i]->layout);
        cort_value_release(ref[i]);
        cort_value_release(a[i]);
        cort_value_release(b[i]);
    }
    printf("chains %s (threads %d): %zu nodes on xnnpack, %zu emit NHWC; transposes per run %zu -> %zu\n", model, threads,
           provider_nodes(chains, "xnnpack"), flagged, *before, *after);
    cort_value_release(x);
    cort_session_release(cpu);
    cort_session_release(per_node);
    cort_session_release(chains);
}

static void test_chains(void) {
    size_t before, after;
    compare_chains("tests/models/xnnpack_chain_res.onnx", 1, TU_TOL(1e-4, 1e-6, 1e-5), &before, &after);
    /* only X into the first Conv; the GlobalAveragePool output is [1,8,1,1], where the layouts coincide */
    CHECK_MSG(before == 5 && after == 1, "xnnpack_chain_res: transposes %zu -> %zu, expected 5 -> 1", before, after);
    compare_chains("tests/models/xnnpack_chain_res.onnx", 2, TU_TOL(1e-4, 1e-6, 1e-5), &before, &after);
    CHECK(after == 1);
    compare_chains("tests/models/xnnpack_chain_mix.onnx", 2, TU_TOL(1e-4, 1e-6, 1e-5), &before, &after);
    /* boundaries: X; the graph output d2r (and its two readers; the channel Concat after them stays
     * NHWC); Neg reads se; Sub(se, Neg) computes NCHW (1 out); PRelu (4: in, out, and its per-channel
     * path); Softmax and Transpose (CPU) readers (q out, q2 out, GlobalAveragePool in) */
    CHECK_MSG(after == 14 && before == 34, "xnnpack_chain_mix: transposes %zu -> %zu, expected 34 -> 14", before, after);
    compare_chains("tests/models/xnnpack_chain_fallback.onnx", 1, TU_TOL(1e-4, 1e-6, 1e-5), &before, &after);
    compare_chains("tests/models/xnnpack_chain_1d.onnx", 1, TU_TOL(1e-4, 1e-6, 1e-5), &before, &after);
    /* X; pool2 out (read by Neg); Neg's NCHW output into the channel Concat; conv3 out (CPU Concat) */
    CHECK_MSG(before == 10 && after == 4, "xnnpack_chain_1d: transposes %zu -> %zu, expected 10 -> 4", before, after);
    /* bench/make_models.py's CNNs; ocr_det keeps boundaries around its CPU Resizes (nearest) */
    static const struct { const char *path; size_t factor; } big[] = {
        { "build/models/mobilenet_v2/model.onnx", 50 }, { "build/models/resnet50/model.onnx", 50 },
        { "build/models/efficientnet_b0/model.onnx", 50 }, { "build/models/squeezenet1_1/model.onnx", 50 },
        { "build/models/ocr_det/model.onnx", 2 }, { NULL, 0 } };
    for (size_t i = 0; big[i].path; i++) {
        FILE *f = fopen(big[i].path, "rb");
        if (!f) { printf("chains %s: missing, skipped\n", big[i].path); continue; }
        fclose(f);
        compare_chains(big[i].path, 2, TU_TOL(1e-3, 1e-5, 1e-3), &before, &after);
        CHECK_MSG(after * big[i].factor <= before, "%s: transposes %zu -> %zu (expected at least %zux fewer)", big[i].path,
                  before, after, big[i].factor);
    }
    /* option validation */
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    const char *k[] = { "nhwc_chains" }, *v[] = { "yes" };
    CHECK_OK(cort_session_options_append_provider(o, "xnnpack", k, v, 1));
    cort_session *s = NULL;
    CHECK_ERR(cort_session_create("tests/models/xnnpack_conv.onnx", o, &s), CORT_ERROR_INVALID_ARGUMENT, "nhwc_chains");
    cort_session_options_free(o);
}

static void test_options(void) {
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    const char *k1[] = { "thread" }, *v1[] = { "2" };
    CHECK_ERR(cort_session_options_append_provider(o, "xnnpack", k1, v1, 1), CORT_ERROR_INVALID_ARGUMENT, "threads");
    const char *k2[] = { "threads" }, *v2[] = { "two" };
    CHECK_OK(cort_session_options_append_provider(o, "xnnpack", k2, v2, 1));
    cort_session *s = NULL;
    CHECK_ERR(cort_session_create("tests/models/xnnpack_conv.onnx", o, &s), CORT_ERROR_INVALID_ARGUMENT, "'threads'");
    cort_session_options_free(o);
    CHECK_OK(cort_session_options_create(&o));
    const char *v3[] = { "1" };
    CHECK_OK(cort_session_options_append_provider(o, "xnnpack", k2, v3, 1));
    if (CHECK_OK(cort_session_create("tests/models/xnnpack_conv.onnx", o, &s))) {
        CHECK(provider_nodes(s, "xnnpack") == 10);
        cort_session_release(s);
    }
    cort_session_options_free(o);
}

/* ---- allocation failures: every allocation of creating and running an XNNPACK session may fail
 * (XNNPACK's own allocations go through cort too); each failure is reported, nothing leaks */
static void test_oom(const char *model, const int64_t *shape) {
    cort_value *x = random_input(shape, 4, 3);
    cort_allocator_stats base, now;
    cort_status_free(cort_allocator_get_stats(&base));
    size_t xbase = cort_xnnpack_test_bytes_in_use();
    int failures = 0, leaks = 0, ok = 0;
    for (long n = 1; n < 5000 && !ok; n++) {
        cort_session *s = NULL;
        cort_value *out[16] = { 0 };
        cort_test_alloc_fail_at(n);
        cort_status *st = make_session(model, 1, 1, &s);
        if (!st) st = run_all(s, &x, 1, out);
        cort_test_alloc_fail_at(0);
        if (st) { failures++; cort_status_free(st); }
        else ok = 1;
        for (size_t i = 0; i < 16; i++) cort_value_release(out[i]);
        cort_session_release(s);
        cort_status_free(cort_allocator_get_stats(&now));
        if (now.bytes_in_use != base.bytes_in_use || cort_xnnpack_test_bytes_in_use() != xbase) {
            if (!leaks++) fprintf(stderr, "failing allocation %ld: %zd bytes leaked (xnnpack %zd)\n", n,
                                  (ssize_t)(now.bytes_in_use - base.bytes_in_use),
                                  (ssize_t)(cort_xnnpack_test_bytes_in_use() - xbase));
            base = now;
            xbase = cort_xnnpack_test_bytes_in_use();
        }
    }
    CHECK_MSG(ok && leaks == 0, "OOM walk %s: %d failures reported, %d leaking, finished %d", model, failures, leaks, ok);
    printf("OOM walk %s: %d injected failures reported cleanly, %d leaks\n", model, failures, leaks);
    cort_value_release(x);
}

/* ---- throughput: runs/s of 1 and of 2 concurrent callers on one session */
typedef struct bench_ctx { cort_session *s; cort_value *x; int runs; } bench_ctx;
static void *bench_worker(void *arg) {
    bench_ctx *b = arg;
    for (int r = 0; r < b->runs; r++) {
        cort_value *out[16];
        cort_status *st = run_all(b->s, &b->x, 1, out);
        if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); cort_status_free(st); return NULL; }
        for (size_t i = 0; i < cort_session_output_count(b->s); i++) cort_value_release(out[i]);
    }
    return NULL;
}
static int bench(const char *model, int runs, int threads) {
    static const char *const variant[] = { "cpu", "cpu+xnnpack (nhwc_chains 0: transposes per node)", "cpu+xnnpack" };
    for (int xnn = 0; xnn <= 2; xnn++) {
        cort_session *s = NULL;
        cort_status *st = xnn == 0 ? make_session(model, 0, threads, &s)
                                   : make_session_nhwc(model, threads, xnn == 1 ? "0" : "1", &s);
        if (st) { fprintf(stderr, "%s\n", cort_status_message(st)); cort_status_free(st); return 1; }
        cort_value_type ty;
        int64_t dims[8];
        cort_status_free(cort_session_input_type(s, 0, &ty, dims, 8));
        for (int i = 0; i < ty.rank; i++) if (dims[i] < 0) dims[i] = 1;
        bench_ctx b = { s, random_input(dims, (size_t)ty.rank, 5), 3 };
        bench_worker(&b);   /* warm-up: operators created, pools started */
        double rate[2];
        for (int conc = 1; conc <= 2; conc++) {
            pthread_t th[2];
            b.runs = runs;
            double t0 = now_s();
            for (int i = 0; i < conc; i++) pthread_create(&th[i], NULL, bench_worker, &b);
            for (int i = 0; i < conc; i++) pthread_join(th[i], NULL);
            rate[conc - 1] = conc * runs / (now_s() - t0);
        }
        printf("%s %s (threads %d, %zu nodes on xnnpack): 1 caller %.1f runs/s, 2 concurrent callers %.1f runs/s (x%.2f)\n",
               model, variant[xnn], threads, xnn ? provider_nodes(s, "xnnpack") : 0, rate[0], rate[1],
               rate[1] / rate[0]);
        cort_value_release(b.x);
        cort_session_release(s);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "--bench")) return bench(argv[2], argc >= 4 ? atoi(argv[3]) : 50, argc >= 5 ? atoi(argv[4]) : 1);
    int verbose = argc >= 2 && !strcmp(argv[1], "-v");
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    cort_status *st = cort_session_options_append_provider(o, "xnnpack", NULL, NULL, 0);
    cort_session_options_free(o);
    if (cort_status_code(st) == CORT_ERROR_NOT_IMPLEMENTED) {
        cort_status_free(st);
        printf("XNNPACK provider not built: skipped\n");
        return tu_finish();
    }
    CHECK_OK(st);
    double t0 = now_s();
    test_options();
    test_cnn();
    test_chains();
    /* the chain models also walk the relayouts (a fused Relu before a graph output, CPU fallbacks) */
    static const int64_t cnn_in[4] = { 1, 3, 16, 16 }, fallback_in[4] = { 1, 3, 10, 10 }, mix_in[4] = { 2, 3, 16, 16 };
    test_oom("tests/models/xnnpack_conv.onnx", cnn_in);
    test_oom("tests/models/xnnpack_chain_fallback.onnx", fallback_in);
    test_oom("tests/models/xnnpack_chain_mix.onnx", mix_in);
    int64_t cnn_shape[4] = { 1, 3, 16, 16 };
    test_concurrency("tests/models/xnnpack_conv.onnx", cnn_shape, 4, 2, 25);
    test_concurrency("tests/models/xnnpack_conv.onnx", cnn_shape, 4, 1, 25);
    FILE *f = fopen("build/models/mobilenet_v2/model.onnx", "rb");
    if (f) {
        fclose(f);
        int64_t shape[4] = { 1, 3, 224, 224 };
        test_concurrency("build/models/mobilenet_v2/model.onnx", shape, 4, 2, 4);
    }
    printf("(%.1f s)\n", now_s() - t0);
    totals t = { 0 }, v = { 0 };
    compare_suite(SUITE, 1, &t, verbose);
    printf("backend node tests: %d compared, %d with nodes on xnnpack (%d nodes), %d mismatches\n", t.compared,
           t.on_xnnpack, t.nodes, t.mismatches);
    printf("(%.1f s)\n", now_s() - t0);
    compare_suite("tests/models/xnnpack_node", 0, &v, verbose);
    printf("constant-weight variants: %d compared, %d with nodes on xnnpack (%d nodes), %d mismatches\n", v.compared,
           v.on_xnnpack, v.nodes, v.mismatches);
    CHECK_MSG(t.on_xnnpack >= 60, "only %d backend tests reached XNNPACK", t.on_xnnpack);
    CHECK_MSG(v.on_xnnpack >= 45, "only %d constant-weight tests reached XNNPACK", v.on_xnnpack);
    return tu_finish();
}
