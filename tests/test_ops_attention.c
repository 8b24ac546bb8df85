/* The transformer operators against naive double-precision references written from the ONNX
 * spec here (not from any kernel): Attention-23/24 over many shapes (3-D and 4-D, grouped heads,
 * causal, bool and float masks of every rank and shorter than the keys, KV caches, scale, softcap,
 * each qk_matmul_output_mode, nonpad_kv_seqlen, float16), RMSNormalization, RotaryEmbedding, Gelu,
 * Swish, SwiGLU, LinearAttention (every update rule) and CausalConvWithState. The kernels run at the ISA level CORT_ISA selects (the test lanes run each). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "core/types.h"
#include "graph/op.h"

static uint32_t rng_state = 777;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static cort_pool *g_pool;
static const char *g_domain = "";   /* domain of the next run_node */

/* Runs one node; inputs[i] NULL is a missing optional input, want_out[i] 0 an output not asked for. */
static cort_status *run_node(const char *op_type, int opset, cort_attr_ir *attrs, size_t n_attrs, cort_value **inputs,
                             size_t n_in, cort_value **outputs, const int *want_out, size_t n_out) {
    const cort_op_def *def = cort_op_find(g_domain, op_type, opset);
    if (!def) return cort_error(CORT_ERROR_NOT_IMPLEMENTED, "%s-%d not found", op_type, opset);
    cort_node_ir ir;
    memset(&ir, 0, sizeof ir);
    ir.name = "t"; ir.op_type = op_type; ir.domain = g_domain; ir.attrs = attrs; ir.n_attrs = n_attrs;
    int32_t in_slots[8], out_slots[8];
    for (size_t i = 0; i < 8; i++) {
        in_slots[i] = i < n_in && inputs[i] ? (int32_t)i : -1;
        out_slots[i] = i < n_out && (!want_out || want_out[i]) ? (int32_t)(8 + i) : -1;
    }
    cort_node node;
    memset(&node, 0, sizeof node);
    node.ir = &ir; node.name = "t"; node.op_type = op_type; node.domain = g_domain; node.opset = opset; node.op = def;
    node.n_inputs = n_in; node.n_outputs = n_out; node.in_slot = in_slots; node.out_slot = out_slots;
    void *state = NULL;
    if (def->init) {
        cort_status *st = def->init(&node, &state);
        if (st) return st;
    }
    node.state = state;
    cort_kernel_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.node = &node; ctx.state = state; ctx.opset = opset; ctx.inputs = inputs; ctx.n_inputs = n_in;
    ctx.outputs = outputs; ctx.n_outputs = n_out; ctx.pool = g_pool;
    cort_status *st = def->run(&ctx);
    if (def->free_state) def->free_state(state);
    return st;
}

static cort_attr_ir attr_int(const char *name, int64_t v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_INT; a.i = v; return a;
}
static cort_attr_ir attr_float(const char *name, float v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_FLOAT; a.f = v; return a;
}
static cort_attr_ir attr_str(const char *name, const char *v) {
    cort_attr_ir a; memset(&a, 0, sizeof a); a.name = name; a.type = CORT_ATTR_STRING; a.s = v; return a;
}

static cort_value *tensor(cort_type t, const int64_t *shape, size_t rank) {
    cort_value *v = NULL;
    if (!tu_check_ok(cort_tensor_create(t, shape, rank, &v), __FILE__, __LINE__, "tensor_create")) return NULL;
    return v;
}
static cort_value *tensor_rand(cort_type t, const int64_t *shape, size_t rank, float amp) {
    cort_value *v = tensor(t, shape, rank);
    size_t n = cort_tensor_element_count(v);
    for (size_t i = 0; i < n; i++) {
        float f = frand() * amp;
        if (t == CORT_TYPE_FLOAT) ((float *)cort_tensor_data(v))[i] = f;
        else if (t == CORT_TYPE_FLOAT16) ((uint16_t *)cort_tensor_data(v))[i] = cort_f32_to_f16(f);
    }
    return v;
}
static float tget(const cort_value *v, size_t i) {
    if (cort_tensor_type(v) == CORT_TYPE_FLOAT16) return cort_f16_to_f32(((const uint16_t *)cort_tensor_data(v))[i]);
    return ((const float *)cort_tensor_data(v))[i];
}
static float *to_f32(const cort_value *v) {
    size_t n = cort_tensor_element_count(v);
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = tget(v, i);
    return p;
}
static void release_all(cort_value **v, size_t n) {
    for (size_t i = 0; i < n; i++) { cort_value_release(v[i]); v[i] = NULL; }
}

/* ---------------- Attention ---------------- */
typedef struct at_case {
    int rank;                 /* 3 or 4 */
    size_t B, Hq, Hkv, Sq, Skv, P, D, Dv;
    int causal;
    int mask;                 /* 0 none, 1 float, 2 bool */
    int mrank;                /* mask rank 2..4 */
    int mshort;               /* mask last dim this much shorter than the keys */
    int mbcast;               /* mask with size-1 batch/head dims */
    float scale;              /* 0: default */
    float softcap;
    int mode;                 /* -1: no qk output, else qk_matmul_output_mode */
    int nonpad;               /* give nonpad_kv_seqlen (opset 24) */
    int want_present;
} at_case;

/* Element (b, h, i, d) of a Q/K/V-like tensor in the 4-D view, from its 3-D or 4-D layout. */
static double at_el(const float *x, int rank, size_t H, size_t S, size_t hd, size_t b, size_t h, size_t i, size_t d) {
    if (rank == 4) return x[((b * H + h) * S + i) * hd + d];
    return x[(b * S + i) * H * hd + h * hd + d];
}

/* The spec, one score at a time. Outputs y (Y's layout) and qk ([B, Hq, Sq, L]). */
static void at_reference(const at_case *c, const float *q, const float *k, const float *v, const float *pk,
                         const float *pv, const float *mf, const uint8_t *mb, const int64_t *mshape, size_t mrank,
                         const int64_t *nonpad, double *y, double *qk) {
    const size_t L = c->P + c->Skv, group = c->Hq / c->Hkv;
    const double scale = c->scale > 0 ? c->scale : 1.0 / sqrt((double)c->D);
    double *s = malloc((L + 1) * sizeof(double));
    for (size_t b = 0; b < c->B; b++)
        for (size_t h = 0; h < c->Hq; h++)
            for (size_t i = 0; i < c->Sq; i++) {
                const size_t kh = h / group;
                for (size_t j = 0; j < L; j++) {
                    double dot = 0;
                    for (size_t d = 0; d < c->D; d++) {
                        double kv = j < c->P ? pk[((b * c->Hkv + kh) * c->P + j) * c->D + d]
                                             : at_el(k, c->rank, c->Hkv, c->Skv, c->D, b, kh, j - c->P, d);
                        dot += at_el(q, c->rank, c->Hq, c->Sq, c->D, b, h, i, d) * kv;
                    }
                    double x = dot * scale;
                    if (c->softcap > 0) x = c->softcap * tanh(x / c->softcap);
                    double bias = 0;
                    if (c->mask) {
                        size_t mlen = (size_t)mshape[mrank - 1];
                        if (j >= mlen) bias = -INFINITY;
                        else {
                            /* broadcast: index dims of [B, Hq, Sq] aligned right with the mask's leading dims */
                            size_t idx[3] = { b, h, i }, off = 0, mul = 1;
                            for (size_t dd = mrank; dd-- > 0;) {
                                size_t pos = dd == mrank - 1 ? j : idx[3 - (mrank - 1 - dd)];
                                size_t ext = (size_t)mshape[dd];
                                off += (ext == 1 ? 0 : pos) * mul;
                                mul *= ext;
                            }
                            if (mf) bias = mf[off];
                            else bias = mb[off] ? 0.0 : -INFINITY;
                        }
                    }
                    if (c->causal) {
                        long long off = c->P ? (long long)c->P : nonpad ? nonpad[b] - (long long)c->Sq : 0;
                        if ((long long)j > (long long)i + off) bias = -INFINITY;
                    }
                    if (nonpad && (long long)j >= nonpad[b]) bias = -INFINITY;
                    double *qo = qk + ((b * c->Hq + h) * c->Sq + i) * L + j;
                    if (c->mode == 0 || c->mode == 1) *qo = x;
                    s[j] = x + bias;
                    if (c->mode == 2) *qo = s[j];
                }
                double mx = -INFINITY, sum = 0;
                for (size_t j = 0; j < L; j++) mx = s[j] > mx ? s[j] : mx;
                for (size_t j = 0; j < L; j++) { s[j] = mx == -INFINITY ? 0 : exp(s[j] - mx); sum += s[j]; }
                for (size_t j = 0; j < L; j++) {
                    s[j] = sum > 0 ? s[j] / sum : 0;
                    if (c->mode == 3) qk[((b * c->Hq + h) * c->Sq + i) * L + j] = s[j];
                }
                for (size_t d = 0; d < c->Dv; d++) {
                    double acc = 0;
                    for (size_t j = 0; j < L; j++) {
                        double vv = j < c->P ? pv[((b * c->Hkv + kh) * c->P + j) * c->Dv + d]
                                             : at_el(v, c->rank, c->Hkv, c->Skv, c->Dv, b, kh, j - c->P, d);
                        acc += s[j] * vv;
                    }
                    size_t yo = c->rank == 4 ? ((b * c->Hq + h) * c->Sq + i) * c->Dv + d
                                             : (b * c->Sq + i) * c->Hq * c->Dv + h * c->Dv + d;
                    y[yo] = acc;
                }
            }
    free(s);
}

static void check_vs(const cort_value *got, const double *want, size_t n, double tol, const char *what,
                     size_t ci) {
    float *g = to_f32(got), *w = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) w[i] = (float)want[i];
    CHECK_CLOSE(g, w, n, TU_TOL(tol, tol, 0), "case %zu: %s", ci, what);
    free(g);
    free(w);
}

static void run_attention_case(const at_case *c, size_t ci, cort_type t) {
    const size_t L = c->P + c->Skv;
    int64_t qs[4], ks[4], vs[4];
    if (c->rank == 4) {
        int64_t a[4] = { (int64_t)c->B, (int64_t)c->Hq, (int64_t)c->Sq, (int64_t)c->D };
        int64_t b[4] = { (int64_t)c->B, (int64_t)c->Hkv, (int64_t)c->Skv, (int64_t)c->D };
        int64_t d[4] = { (int64_t)c->B, (int64_t)c->Hkv, (int64_t)c->Skv, (int64_t)c->Dv };
        memcpy(qs, a, sizeof a); memcpy(ks, b, sizeof b); memcpy(vs, d, sizeof d);
    } else {
        int64_t a[3] = { (int64_t)c->B, (int64_t)c->Sq, (int64_t)(c->Hq * c->D) };
        int64_t b[3] = { (int64_t)c->B, (int64_t)c->Skv, (int64_t)(c->Hkv * c->D) };
        int64_t d[3] = { (int64_t)c->B, (int64_t)c->Skv, (int64_t)(c->Hkv * c->Dv) };
        memcpy(qs, a, sizeof a); memcpy(ks, b, sizeof b); memcpy(vs, d, sizeof d);
    }
    cort_value *in[7] = { 0 }, *out[4] = { 0 };
    in[0] = tensor_rand(t, qs, (size_t)c->rank, 1.5f);
    in[1] = tensor_rand(t, ks, (size_t)c->rank, 1.5f);
    in[2] = tensor_rand(t, vs, (size_t)c->rank, 1.0f);
    int64_t mshape[4];
    size_t mrank = 0;
    if (c->mask) {
        const int64_t full[4] = { (int64_t)c->B, (int64_t)c->Hq, (int64_t)c->Sq, (int64_t)(L - (size_t)c->mshort) };
        mrank = (size_t)c->mrank;
        for (size_t d = 0; d < mrank; d++) {
            mshape[d] = full[4 - mrank + d];
            if (c->mbcast && d + 2 < mrank) mshape[d] = 1;
        }
        in[3] = tensor(c->mask == 2 ? CORT_TYPE_BOOL : t, mshape, mrank);
        size_t n = cort_tensor_element_count(in[3]);
        for (size_t i = 0; i < n; i++) {
            float r = frand();
            if (c->mask == 2) ((uint8_t *)cort_tensor_data(in[3]))[i] = r > -0.6f;
            else {
                float f = r < -0.8f ? -INFINITY : r * 2.0f;
                if (t == CORT_TYPE_FLOAT) ((float *)cort_tensor_data(in[3]))[i] = f;
                else ((uint16_t *)cort_tensor_data(in[3]))[i] = cort_f32_to_f16(f);
            }
        }
    }
    if (c->P) {
        int64_t pks[4] = { (int64_t)c->B, (int64_t)c->Hkv, (int64_t)c->P, (int64_t)c->D };
        int64_t pvs[4] = { (int64_t)c->B, (int64_t)c->Hkv, (int64_t)c->P, (int64_t)c->Dv };
        in[4] = tensor_rand(t, pks, 4, 1.5f);
        in[5] = tensor_rand(t, pvs, 4, 1.0f);
    }
    int64_t *nonpad = NULL;
    if (c->nonpad) {
        int64_t ns[1] = { (int64_t)c->B };
        in[6] = tensor(CORT_TYPE_INT64, ns, 1);
        nonpad = cort_tensor_data(in[6]);
        for (size_t b = 0; b < c->B; b++) nonpad[b] = (int64_t)(L - (b * 3) % (L + 1));
    }
    cort_attr_ir attrs[8];
    size_t na = 0;
    if (c->rank == 3) { attrs[na++] = attr_int("q_num_heads", (int64_t)c->Hq); attrs[na++] = attr_int("kv_num_heads", (int64_t)c->Hkv); }
    if (c->causal) attrs[na++] = attr_int("is_causal", 1);
    if (c->scale > 0) attrs[na++] = attr_float("scale", c->scale);
    if (c->softcap > 0) attrs[na++] = attr_float("softcap", c->softcap);
    if (c->mode >= 0) attrs[na++] = attr_int("qk_matmul_output_mode", c->mode);
    int want[4] = { 1, c->want_present, c->want_present, c->mode >= 0 };
    cort_status *st = run_node("Attention", c->nonpad ? 24 : 23, attrs, na, in, c->nonpad ? 7 : 6, out, want, 4);
    if (CHECK_OK(st)) {
        float *q = to_f32(in[0]), *k = to_f32(in[1]), *v = to_f32(in[2]);
        float *pk = in[4] ? to_f32(in[4]) : NULL, *pv = in[5] ? to_f32(in[5]) : NULL;
        float *mf = c->mask == 1 ? to_f32(in[3]) : NULL;
        const uint8_t *mb = c->mask == 2 ? cort_tensor_data(in[3]) : NULL;
        size_t ny = c->B * c->Hq * c->Sq * c->Dv, nqk = c->B * c->Hq * c->Sq * L;
        double *y = calloc(ny + 1, sizeof(double)), *qk = calloc(nqk + 1, sizeof(double));
        at_reference(c, q, k, v, pk, pv, mf, mb, mshape, mrank, nonpad, y, qk);
        /* float16 inputs: every intermediate rounds to half at the end only, so the result is
         * within a few half ulps */
        const double tol = t == CORT_TYPE_FLOAT16 ? 4e-3 : 2e-5;
        CHECK(out[0] && cort_tensor_element_count(out[0]) == ny);
        if (out[0]) check_vs(out[0], y, ny, tol, "Y", ci);
        if (c->mode >= 0) {
            CHECK(out[3] && cort_tensor_element_count(out[3]) == nqk);
            if (out[3]) {
                /* masked entries: -inf on both sides (CHECK_CLOSE matches equal infinities) */
                check_vs(out[3], qk, nqk, tol, "qk_matmul_output", ci);
            }
        }
        if (c->want_present) {
            CHECK(out[1] && out[2]);
            if (out[1] && out[2]) {
                /* present = past rows then the new ones, exactly */
                size_t bad = 0;
                for (size_t b = 0; b < c->B; b++)
                    for (size_t h = 0; h < c->Hkv; h++)
                        for (size_t j = 0; j < L; j++) {
                            for (size_t d = 0; d < c->D; d++) {
                                float w = j < c->P ? pk[((b * c->Hkv + h) * c->P + j) * c->D + d]
                                                   : (float)at_el(k, c->rank, c->Hkv, c->Skv, c->D, b, h, j - c->P, d);
                                bad += tget(out[1], ((b * c->Hkv + h) * L + j) * c->D + d) != w;
                            }
                            for (size_t d = 0; d < c->Dv; d++) {
                                float w = j < c->P ? pv[((b * c->Hkv + h) * c->P + j) * c->Dv + d]
                                                   : (float)at_el(v, c->rank, c->Hkv, c->Skv, c->Dv, b, h, j - c->P, d);
                                bad += tget(out[2], ((b * c->Hkv + h) * L + j) * c->Dv + d) != w;
                            }
                        }
                CHECK_MSG(bad == 0, "case %zu: %zu present_key/value elements differ", ci, bad);
            }
        } else {
            CHECK(!out[1] && !out[2]);
        }
        free(q); free(k); free(v); free(pk); free(pv); free(mf); free(y); free(qk);
    }
    release_all(in, 7);
    release_all(out, 4);
}

static void test_attention(void) {
    static const at_case cases[] = {
        /* rank B Hq Hkv Sq Skv P D Dv causal mask mrank mshort mbcast scale softcap mode nonpad present */
        { 4, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },
        { 4, 2, 3, 3, 4, 6, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },
        { 4, 2, 9, 3, 4, 6, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },          /* GQA */
        { 4, 1, 4, 1, 7, 7, 0, 5, 11, 1, 0, 0, 0, 0, 0, 0, -1, 0, 0 },         /* MQA, causal, Dv != D */
        { 3, 2, 3, 3, 5, 9, 0, 8, 10, 0, 0, 0, 0, 0, 0.2f, 0, -1, 0, 0 },      /* 3-D, scale */
        { 3, 2, 6, 2, 5, 9, 0, 4, 4, 1, 0, 0, 0, 0, 0, 0, -1, 0, 0 },          /* 3-D GQA causal */
        { 4, 2, 2, 2, 13, 29, 0, 16, 16, 0, 1, 2, 0, 0, 0, 0, -1, 0, 0 },      /* float mask 2-D */
        { 4, 2, 2, 2, 13, 29, 0, 16, 16, 0, 2, 4, 0, 0, 0, 0, -1, 0, 0 },      /* bool mask 4-D */
        { 4, 3, 4, 2, 9, 17, 0, 12, 7, 0, 1, 3, 0, 0, 0, 0, -1, 0, 0 },        /* mask 3-D */
        { 4, 3, 4, 2, 9, 17, 0, 12, 7, 0, 1, 4, 0, 1, 0, 0, -1, 0, 0 },        /* mask 4-D, broadcast B/H */
        { 4, 2, 2, 2, 6, 10, 0, 8, 8, 0, 1, 2, 3, 0, 0, 0, -1, 0, 0 },         /* mask shorter than keys */
        { 4, 2, 2, 2, 6, 10, 0, 8, 8, 1, 2, 2, 2, 0, 0, 0, -1, 0, 0 },         /* causal + short bool mask */
        { 4, 2, 4, 2, 3, 5, 7, 8, 6, 0, 0, 0, 0, 0, 0, 0, -1, 0, 1 },          /* cache */
        { 4, 2, 4, 2, 3, 5, 7, 8, 6, 1, 1, 2, 0, 0, 0, 0, -1, 0, 1 },          /* cache, causal, mask */
        { 3, 1, 3, 3, 1, 1, 30, 8, 8, 1, 0, 0, 0, 0, 0, 0, -1, 0, 1 },         /* decode step, 3-D */
        { 4, 2, 2, 2, 5, 8, 0, 8, 8, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0 },           /* qk modes */
        { 4, 2, 2, 2, 5, 8, 0, 8, 8, 0, 1, 2, 0, 0, 0, 2.0f, 1, 0, 0 },
        { 4, 2, 2, 2, 5, 8, 0, 8, 8, 1, 1, 2, 0, 0, 0, 2.0f, 2, 0, 0 },
        { 4, 2, 2, 2, 5, 8, 4, 8, 8, 1, 2, 3, 0, 0, 0, 1.0f, 3, 0, 1 },
        { 4, 2, 2, 2, 5, 8, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0.5f, -1, 0, 0 },       /* softcap */
        { 4, 4, 4, 2, 4, 12, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0, -1, 1, 0 },         /* nonpad */
        { 4, 4, 4, 2, 4, 12, 0, 8, 8, 1, 0, 0, 0, 0, 0, 0, -1, 1, 0 },         /* nonpad causal (offset) */
        { 4, 3, 2, 1, 1, 16, 0, 8, 8, 1, 1, 4, 0, 0, 0, 0, -1, 1, 0 },         /* nonpad decode + mask */
        /* big enough for many query blocks, edge tiles and every worker */
        { 4, 1, 3, 3, 130, 130, 0, 64, 64, 1, 0, 0, 0, 0, 0, 0, -1, 0, 0 },
        { 4, 2, 4, 2, 67, 301, 0, 40, 33, 0, 1, 2, 0, 0, 0, 0, -1, 0, 0 },
        { 3, 1, 2, 2, 100, 100, 50, 32, 32, 1, 2, 4, 0, 1, 0, 0, 3, 0, 1 },
        { 4, 1, 1, 1, 1, 1000, 0, 128, 128, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },
        { 4, 1, 2, 2, 0, 5, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },          /* empty query */
        { 4, 1, 2, 2, 3, 0, 0, 8, 8, 1, 0, 0, 0, 0, 0, 0, 3, 0, 1 },           /* no keys: zeros */
        { 3, 2, 2, 1, 1, 0, 4, 8, 8, 1, 0, 0, 0, 0, 0, 0, -1, 0, 1 },          /* cache only */
        /* decode path (one or two query rows): many query heads per KV head, in chunks of rows */
        { 4, 2, 12, 1, 2, 3, 40, 24, 20, 1, 1, 4, 0, 1, 0, 0, -1, 0, 1 },
        { 3, 1, 20, 2, 1, 1, 33, 16, 16, 1, 2, 2, 0, 0, 0, 1.5f, 3, 0, 1 },
        { 4, 3, 8, 2, 2, 9, 0, 13, 7, 1, 0, 0, 0, 0, 0, 0, 2, 1, 0 },
        /* decode with keys split over the workers and merged: masks, short masks (whole key ranges
         * masked), causal offsets, nonpad, caches */
        { 4, 1, 4, 1, 2, 300, 400, 16, 24, 1, 1, 4, 5, 1, 0, 0, -1, 1, 1 },
        { 3, 1, 3, 1, 1, 2, 700, 8, 8, 0, 2, 2, 400, 0, 0, 0, -1, 0, 1 },
        { 4, 2, 2, 1, 1, 600, 0, 32, 32, 0, 0, 0, 0, 0, 0, 1.0f, -1, 1, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_attention_case(&cases[i], i, CORT_TYPE_FLOAT);
    run_attention_case(&cases[2], 100, CORT_TYPE_FLOAT16);
    run_attention_case(&cases[13], 113, CORT_TYPE_FLOAT16);
    /* the same with one thread: the work split must not change the result */
    cort_pool *saved = g_pool;
    g_pool = NULL;
    run_attention_case(&cases[24], 124, CORT_TYPE_FLOAT);
    g_pool = saved;
}

/* FlexAttention without modifiers is plain attention with grouped heads (4-D only). */
static void test_flex_attention(void) {
    static const at_case cases[] = {
        { 4, 2, 8, 2, 4, 6, 0, 16, 16, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },
        { 4, 1, 3, 3, 70, 50, 0, 8, 12, 0, 0, 0, 0, 0, 0.3f, 0, -1, 0, 0 },
        { 4, 2, 6, 3, 1, 40, 0, 32, 32, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0 },
    };
    g_domain = "ai.onnx.preview";
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const at_case *c = &cases[ci];
        int64_t qs[4] = { (int64_t)c->B, (int64_t)c->Hq, (int64_t)c->Sq, (int64_t)c->D };
        int64_t ks[4] = { (int64_t)c->B, (int64_t)c->Hkv, (int64_t)c->Skv, (int64_t)c->D };
        int64_t vs[4] = { (int64_t)c->B, (int64_t)c->Hkv, (int64_t)c->Skv, (int64_t)c->Dv };
        cort_value *in[3] = { tensor_rand(CORT_TYPE_FLOAT, qs, 4, 1.5f), tensor_rand(CORT_TYPE_FLOAT, ks, 4, 1.5f),
                              tensor_rand(CORT_TYPE_FLOAT, vs, 4, 1) };
        cort_value *out[1] = { 0 };
        cort_attr_ir at[1] = { attr_float("scale", c->scale) };
        if (CHECK_OK(run_node("FlexAttention", 1, at, c->scale > 0, in, 3, out, NULL, 1))) {
            size_t ny = c->B * c->Hq * c->Sq * c->Dv;
            double *y = calloc(ny + 1, sizeof(double)), *qk = calloc(c->B * c->Hq * c->Sq * c->Skv + 1, sizeof(double));
            at_reference(c, cort_tensor_data(in[0]), cort_tensor_data(in[1]), cort_tensor_data(in[2]), NULL, NULL, NULL,
                         NULL, NULL, 0, NULL, y, qk);
            check_vs(out[0], y, ny, 2e-5, "FlexAttention", ci);
            free(y);
            free(qk);
        }
        release_all(in, 3);
        release_all(out, 1);
    }
    g_domain = "";
}

static void test_attention_errors(void) {
    int64_t q[4] = { 1, 3, 2, 4 }, k[4] = { 1, 2, 2, 4 }, k5[4] = { 1, 3, 2, 5 };
    cort_value *in[4] = { tensor_rand(CORT_TYPE_FLOAT, q, 4, 1), tensor_rand(CORT_TYPE_FLOAT, k, 4, 1),
                          tensor_rand(CORT_TYPE_FLOAT, k, 4, 1), NULL };
    cort_value *out[4] = { 0 };
    CHECK_ERR(run_node("Attention", 23, NULL, 0, in, 3, out, NULL, 1), CORT_ERROR_INVALID_ARGUMENT, "multiple");
    release_all(out, 4);
    cort_value_release(in[1]);
    in[1] = tensor_rand(CORT_TYPE_FLOAT, k5, 4, 1);
    CHECK_ERR(run_node("Attention", 23, NULL, 0, in, 3, out, NULL, 1), CORT_ERROR_INVALID_ARGUMENT, "'K'");
    release_all(out, 4);
    cort_value_release(in[1]);
    in[1] = tensor_rand(CORT_TYPE_FLOAT, q, 4, 1);
    cort_value_release(in[2]);
    in[2] = tensor_rand(CORT_TYPE_FLOAT, q, 4, 1);
    int64_t m[2] = { 3, 2 };
    in[3] = tensor_rand(CORT_TYPE_FLOAT, m, 2, 1);
    CHECK_ERR(run_node("Attention", 23, NULL, 0, in, 4, out, NULL, 1), CORT_ERROR_INVALID_ARGUMENT, "attn_mask");
    release_all(out, 4);
    int64_t q3[3] = { 1, 2, 12 };
    cort_value *in3[3] = { tensor_rand(CORT_TYPE_FLOAT, q3, 3, 1), tensor_rand(CORT_TYPE_FLOAT, q3, 3, 1),
                           tensor_rand(CORT_TYPE_FLOAT, q3, 3, 1) };
    CHECK_ERR(run_node("Attention", 23, NULL, 0, in3, 3, out, NULL, 1), CORT_ERROR_INVALID_MODEL, "q_num_heads");
    release_all(out, 4);
    cort_attr_ir bad = attr_int("qk_matmul_output_mode", 7);
    CHECK_ERR(run_node("Attention", 23, &bad, 1, in, 3, out, NULL, 1), CORT_ERROR_INVALID_MODEL, "qk_matmul_output_mode");
    release_all(out, 4);
    release_all(in, 4);
    release_all(in3, 3);
}

/* ---------------- RMSNormalization ---------------- */
static void test_rms_norm(void) {
    static const struct { size_t rank; int64_t dims[4]; int64_t axis; int bcast; } cases[] = {
        { 2, { 3, 5 }, -1, 0 }, { 2, { 3, 5 }, 0, 0 }, { 3, { 4, 7, 33 }, -1, 0 }, { 3, { 4, 7, 33 }, 1, 0 },
        { 3, { 4, 7, 33 }, 1, 1 }, { 4, { 2, 3, 4, 5 }, -2, 1 }, { 2, { 700, 768 }, -1, 0 }, { 2, { 5, 1000 }, -1, 0 },
        { 1, { 9 }, 0, 0 },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const size_t rank = cases[ci].rank;
        const int64_t *dims = cases[ci].dims;
        const size_t a = (size_t)(cases[ci].axis < 0 ? cases[ci].axis + (int64_t)rank : cases[ci].axis);
        int64_t sdims[4];
        size_t srank = rank - a;
        for (size_t d = 0; d < srank; d++) sdims[d] = cases[ci].bcast && d + 1 < srank ? 1 : dims[a + d];
        cort_value *in[2] = { tensor_rand(CORT_TYPE_FLOAT, dims, rank, 3.0f),
                              tensor_rand(CORT_TYPE_FLOAT, sdims, srank, 2.0f) };
        cort_value *out[1] = { 0 };
        cort_attr_ir at[2] = { attr_int("axis", cases[ci].axis), attr_float("epsilon", 0.01f) };
        if (CHECK_OK(run_node("RMSNormalization", 23, at, 2, in, 2, out, NULL, 1))) {
            size_t rows = 1, row = 1;
            for (size_t d = 0; d < rank; d++) *(d < a ? &rows : &row) *= (size_t)dims[d];
            const float *x = cort_tensor_data(in[0]), *w = cort_tensor_data(in[1]);
            double *want = malloc(rows * row * sizeof(double));
            for (size_t r = 0; r < rows; r++) {
                double ss = 0;
                for (size_t i = 0; i < row; i++) ss += (double)x[r * row + i] * x[r * row + i];
                double inv = 1.0 / sqrt(ss / (double)row + 0.01);
                for (size_t i = 0; i < row; i++) {
                    size_t wi = cases[ci].bcast ? i % (size_t)sdims[srank - 1] : i;
                    want[r * row + i] = x[r * row + i] * inv * w[wi];
                }
            }
            check_vs(out[0], want, rows * row, 1e-5, "RMSNormalization", ci);
            free(want);
        }
        release_all(in, 2);
        release_all(out, 1);
    }
}

/* ---------------- RotaryEmbedding ---------------- */
static void test_rotary(void) {
    static const struct { size_t rank, B, H, S, D, rot; int inter, pos; } cases[] = {
        { 4, 2, 4, 3, 8, 0, 0, 1 }, { 4, 2, 4, 3, 8, 0, 1, 1 }, { 4, 2, 4, 3, 8, 4, 0, 0 }, { 4, 2, 4, 3, 8, 4, 1, 0 },
        { 3, 2, 4, 3, 8, 0, 0, 1 }, { 3, 1, 2, 5, 16, 6, 1, 1 }, { 4, 1, 12, 64, 64, 0, 0, 1 },
        /* vector bodies plus scalar tails (10 pairs), and a rotated part with an unrotated rest */
        { 4, 1, 2, 5, 20, 0, 1, 1 }, { 4, 1, 2, 5, 20, 0, 0, 1 }, { 3, 2, 3, 4, 24, 20, 1, 1 }, { 3, 2, 3, 4, 24, 20, 0, 0 },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const size_t B = cases[ci].B, H = cases[ci].H, S = cases[ci].S, D = cases[ci].D;
        const size_t rot = cases[ci].rot ? cases[ci].rot : D, half = rot / 2, maxpos = 50;
        int64_t xs4[4] = { (int64_t)B, (int64_t)H, (int64_t)S, (int64_t)D };
        int64_t xs3[3] = { (int64_t)B, (int64_t)S, (int64_t)(H * D) };
        int64_t cs2[2] = { (int64_t)maxpos, (int64_t)half }, cs3[3] = { (int64_t)B, (int64_t)S, (int64_t)half };
        int64_t ps[2] = { (int64_t)B, (int64_t)S };
        cort_value *in[4] = { 0 }, *out[1] = { 0 };
        in[0] = cases[ci].rank == 4 ? tensor_rand(CORT_TYPE_FLOAT, xs4, 4, 2) : tensor_rand(CORT_TYPE_FLOAT, xs3, 3, 2);
        in[1] = cases[ci].pos ? tensor_rand(CORT_TYPE_FLOAT, cs2, 2, 1) : tensor_rand(CORT_TYPE_FLOAT, cs3, 3, 1);
        in[2] = cases[ci].pos ? tensor_rand(CORT_TYPE_FLOAT, cs2, 2, 1) : tensor_rand(CORT_TYPE_FLOAT, cs3, 3, 1);
        if (cases[ci].pos) {
            in[3] = tensor(CORT_TYPE_INT64, ps, 2);
            int64_t *p = cort_tensor_data(in[3]);
            for (size_t i = 0; i < B * S; i++) p[i] = (int64_t)((i * 7 + 3) % maxpos);
        }
        cort_attr_ir at[3];
        size_t na = 0;
        at[na++] = attr_int("interleaved", cases[ci].inter);
        if (cases[ci].rot) at[na++] = attr_int("rotary_embedding_dim", (int64_t)cases[ci].rot);
        if (cases[ci].rank == 3) at[na++] = attr_int("num_heads", (int64_t)H);
        if (CHECK_OK(run_node("RotaryEmbedding", 23, at, na, in, cases[ci].pos ? 4 : 3, out, NULL, 1))) {
            const float *x = cort_tensor_data(in[0]), *cc = cort_tensor_data(in[1]), *sc = cort_tensor_data(in[2]);
            const int64_t *p = in[3] ? cort_tensor_data(in[3]) : NULL;
            double *want = malloc(B * H * S * D * sizeof(double));
            for (size_t b = 0; b < B; b++)
                for (size_t h = 0; h < H; h++)
                    for (size_t s = 0; s < S; s++) {
                        size_t off = cases[ci].rank == 4 ? ((b * H + h) * S + s) * D : (b * S + s) * H * D + h * D;
                        size_t crow = p ? (size_t)p[b * S + s] : b * S + s;
                        for (size_t d = 0; d < D; d++) want[off + d] = x[off + d];
                        for (size_t i = 0; i < half; i++) {
                            size_t i1 = cases[ci].inter ? 2 * i : i, i2 = cases[ci].inter ? 2 * i + 1 : i + half;
                            double c = cc[crow * half + i], sn = sc[crow * half + i];
                            want[off + i1] = c * x[off + i1] - sn * x[off + i2];
                            want[off + i2] = sn * x[off + i1] + c * x[off + i2];
                        }
                    }
            check_vs(out[0], want, B * H * S * D, 1e-6, "RotaryEmbedding", ci);
            free(want);
        }
        release_all(in, 4);
        release_all(out, 1);
    }
}

/* ---------------- Gelu, Swish, SwiGLU ---------------- */
static void test_activations(void) {
    const size_t n = 5000;   /* past one chunk and a vector tail */
    int64_t s[2] = { 5, 1000 };
    for (int kind = 0; kind < 4; kind++) {
        cort_value *in[2] = { tensor_rand(CORT_TYPE_FLOAT, s, 2, 6.0f), tensor_rand(CORT_TYPE_FLOAT, s, 2, 2.0f) };
        cort_value *out[1] = { 0 };
        cort_attr_ir at[1];
        const float alpha = 0.7f;
        cort_status *st;
        if (kind == 0) { at[0] = attr_str("approximate", "none"); st = run_node("Gelu", 20, at, 1, in, 1, out, NULL, 1); }
        else if (kind == 1) { at[0] = attr_str("approximate", "tanh"); st = run_node("Gelu", 20, at, 1, in, 1, out, NULL, 1); }
        else if (kind == 2) { at[0] = attr_float("alpha", alpha); st = run_node("Swish", 24, at, 1, in, 1, out, NULL, 1); }
        else { at[0] = attr_float("alpha", alpha); st = run_node("SwiGLU", 28, at, 1, in, 2, out, NULL, 1); }
        if (CHECK_OK(st)) {
            const float *x = cort_tensor_data(in[0]), *b = cort_tensor_data(in[1]);
            double *want = malloc(n * sizeof(double));
            for (size_t i = 0; i < n; i++) {
                double v = x[i];
                if (kind == 0) want[i] = 0.5 * v * (1 + erf(v / sqrt(2.0)));
                else if (kind == 1) want[i] = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
                else if (kind == 2) want[i] = v / (1 + exp(-alpha * v));
                else want[i] = v / (1 + exp(-alpha * v)) * b[i];
            }
            check_vs(out[0], want, n, 2e-6, kind < 2 ? "Gelu" : kind == 2 ? "Swish" : "SwiGLU", (size_t)kind);
            free(want);
        }
        release_all(in, 2);
        release_all(out, 1);
    }
}

/* ---------------- LinearAttention ---------------- */
static void test_linear_attention(void) {
    static const struct { size_t B, T, Hq, Hkv, dk, dv; const char *rule; int decay_per_dim, beta_one, erase, past; }
    cases[] = {
        { 2, 4, 4, 4, 8, 8, "linear", 0, 0, 0, 0 }, { 2, 4, 4, 4, 8, 8, "gated", 0, 0, 0, 1 },
        { 2, 4, 4, 4, 8, 8, "gated", 1, 0, 0, 0 }, { 2, 4, 4, 4, 8, 8, "delta", 0, 0, 0, 1 },
        { 2, 5, 8, 4, 8, 6, "gated_delta", 1, 0, 0, 1 }, { 1, 3, 6, 1, 5, 7, "gated_delta", 0, 1, 1, 0 },
        { 2, 1, 4, 2, 16, 16, "gated_delta", 1, 0, 1, 1 }, { 1, 33, 4, 2, 32, 40, "gated_delta", 1, 0, 0, 1 },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const size_t B = cases[ci].B, T = cases[ci].T, Hq = cases[ci].Hq, Hkv = cases[ci].Hkv, dk = cases[ci].dk,
                     dv = cases[ci].dv;
        const int gating = !strcmp(cases[ci].rule, "gated") || !strcmp(cases[ci].rule, "gated_delta");
        const int delta = !strcmp(cases[ci].rule, "delta") || !strcmp(cases[ci].rule, "gated_delta");
        int64_t qs[3] = { (int64_t)B, (int64_t)T, (int64_t)(Hq * dk) }, ks[3] = { (int64_t)B, (int64_t)T, (int64_t)(Hkv * dk) };
        int64_t vs[3] = { (int64_t)B, (int64_t)T, (int64_t)(Hkv * dv) }, ss[4] = { (int64_t)B, (int64_t)Hkv, (int64_t)dk, (int64_t)dv };
        int64_t ds[3] = { (int64_t)B, (int64_t)T, (int64_t)(cases[ci].decay_per_dim ? Hkv * dk : Hkv) };
        int64_t bs[3] = { (int64_t)B, (int64_t)T, (int64_t)(cases[ci].beta_one ? 1 : Hkv) };
        cort_value *in[7] = { 0 }, *out[2] = { 0 };
        in[0] = tensor_rand(CORT_TYPE_FLOAT, qs, 3, 1);
        in[1] = tensor_rand(CORT_TYPE_FLOAT, ks, 3, 0.4f);
        in[2] = tensor_rand(CORT_TYPE_FLOAT, vs, 3, 1);
        if (cases[ci].past) in[3] = tensor_rand(CORT_TYPE_FLOAT, ss, 4, 1);
        if (gating) {
            in[4] = tensor_rand(CORT_TYPE_FLOAT, ds, 3, 0.2f);   /* log decay: negative mostly */
            float *g = cort_tensor_data(in[4]);
            for (size_t i = 0; i < cort_tensor_element_count(in[4]); i++) g[i] = g[i] - 0.2f;
        }
        if (delta) {
            in[5] = tensor_rand(CORT_TYPE_FLOAT, bs, 3, 0.5f);
            float *bt = cort_tensor_data(in[5]);
            for (size_t i = 0; i < cort_tensor_element_count(in[5]); i++) bt[i] += 0.5f;
        }
        if (cases[ci].erase) in[6] = tensor_rand(CORT_TYPE_FLOAT, ks, 3, 1);
        cort_attr_ir at[3] = { attr_int("q_num_heads", (int64_t)Hq), attr_int("kv_num_heads", (int64_t)Hkv),
                               attr_str("update_rule", cases[ci].rule) };
        if (CHECK_OK(run_node("LinearAttention", 27, at, 3, in, 7, out, NULL, 2))) {
            const float *q = cort_tensor_data(in[0]), *k = cort_tensor_data(in[1]), *v = cort_tensor_data(in[2]);
            const float *past = in[3] ? cort_tensor_data(in[3]) : NULL, *g = in[4] ? cort_tensor_data(in[4]) : NULL;
            const float *bt = in[5] ? cort_tensor_data(in[5]) : NULL, *eg = in[6] ? cort_tensor_data(in[6]) : NULL;
            double *y = calloc(B * T * Hq * dv, sizeof(double)), *S = calloc(B * Hkv * dk * dv, sizeof(double));
            double *vt = malloc(dv * sizeof(double));
            const double scale = 1.0 / sqrt((double)dk);
            for (size_t b = 0; b < B; b++)
                for (size_t h = 0; h < Hkv; h++) {
                    double *s = S + (b * Hkv + h) * dk * dv;
                    for (size_t i = 0; i < dk * dv; i++) s[i] = past ? past[(b * Hkv + h) * dk * dv + i] : 0;
                    for (size_t t = 0; t < T; t++) {
                        const float *kr = k + ((b * T + t) * Hkv + h) * dk, *vr = v + ((b * T + t) * Hkv + h) * dv;
                        if (g)
                            for (size_t d = 0; d < dk; d++) {
                                double e = exp(g[cases[ci].decay_per_dim ? ((b * T + t) * Hkv + h) * dk + d
                                                                         : (b * T + t) * Hkv + h]);
                                for (size_t m = 0; m < dv; m++) s[d * dv + m] *= e;
                            }
                        for (size_t m = 0; m < dv; m++) {
                            vt[m] = vr[m];
                            if (bt) {
                                double r = 0;
                                for (size_t d = 0; d < dk; d++)
                                    r += s[d * dv + m] * kr[d] * (eg ? eg[((b * T + t) * Hkv + h) * dk + d] : 1.0);
                                vt[m] = bt[cases[ci].beta_one ? b * T + t : (b * T + t) * Hkv + h] * (vr[m] - r);
                            }
                        }
                        for (size_t d = 0; d < dk; d++)
                            for (size_t m = 0; m < dv; m++) s[d * dv + m] += kr[d] * vt[m];
                        for (size_t gq = 0; gq < Hq / Hkv; gq++) {
                            size_t hq = h * (Hq / Hkv) + gq;
                            for (size_t m = 0; m < dv; m++) {
                                double o = 0;
                                for (size_t d = 0; d < dk; d++) o += q[((b * T + t) * Hq + hq) * dk + d] * s[d * dv + m];
                                y[((b * T + t) * Hq + hq) * dv + m] = scale * o;
                            }
                        }
                    }
                }
            check_vs(out[0], y, B * T * Hq * dv, 1e-5, "LinearAttention output", ci);
            CHECK(out[1] != NULL);
            if (out[1]) check_vs(out[1], S, B * Hkv * dk * dv, 1e-5, "LinearAttention present_state", ci);
            free(y); free(S); free(vt);
        }
        release_all(in, 7);
        release_all(out, 2);
    }
}

/* ---------------- CausalConvWithState ---------------- */
static void test_causal_conv(void) {
    static const struct { size_t B, C, L, K; int bias, past, silu; } cases[] = {
        { 2, 4, 8, 4, 0, 0, 0 }, { 2, 4, 8, 4, 1, 1, 0 }, { 2, 4, 1, 4, 1, 1, 1 }, { 1, 3, 2, 5, 0, 1, 1 },
        { 3, 70, 100, 4, 1, 1, 1 }, { 1, 1, 5, 1, 1, 0, 0 },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const size_t B = cases[ci].B, C = cases[ci].C, L = cases[ci].L, K = cases[ci].K, P = K - 1;
        int64_t xs[3] = { (int64_t)B, (int64_t)C, (int64_t)L }, ws[3] = { (int64_t)C, 1, (int64_t)K };
        int64_t bs[1] = { (int64_t)C }, ps[3] = { (int64_t)B, (int64_t)C, (int64_t)P };
        cort_value *in[4] = { tensor_rand(CORT_TYPE_FLOAT, xs, 3, 2), tensor_rand(CORT_TYPE_FLOAT, ws, 3, 1),
                              cases[ci].bias ? tensor_rand(CORT_TYPE_FLOAT, bs, 1, 1) : NULL,
                              cases[ci].past ? tensor_rand(CORT_TYPE_FLOAT, ps, 3, 2) : NULL };
        cort_value *out[2] = { 0 };
        cort_attr_ir at[1] = { attr_str("activation", cases[ci].silu ? "silu" : "none") };
        if (CHECK_OK(run_node("CausalConvWithState", 27, at, 1, in, 4, out, NULL, 2))) {
            const float *x = cort_tensor_data(in[0]), *w = cort_tensor_data(in[1]);
            const float *bias = in[2] ? cort_tensor_data(in[2]) : NULL, *past = in[3] ? cort_tensor_data(in[3]) : NULL;
            double *y = malloc(B * C * L * sizeof(double)), *pr = malloc((B * C * P + 1) * sizeof(double));
            for (size_t bc = 0; bc < B * C; bc++) {
                /* the padded sequence: P state values then the L inputs */
                double ctxv[256];
                for (size_t p = 0; p < P + L; p++)
                    ctxv[p] = p < P ? (past ? past[bc * P + p] : 0.0) : x[bc * L + p - P];
                for (size_t t = 0; t < L; t++) {
                    double a = bias ? bias[bc % C] : 0;
                    for (size_t p = 0; p < K; p++) a += w[(bc % C) * K + p] * ctxv[t + p];
                    y[bc * L + t] = cases[ci].silu ? a / (1 + exp(-a)) : a;
                }
                for (size_t p = 0; p < P; p++) pr[bc * P + p] = ctxv[L + p];
            }
            check_vs(out[0], y, B * C * L, 1e-5, "CausalConvWithState output", ci);
            if (out[1]) check_vs(out[1], pr, B * C * P, 0, "CausalConvWithState present_state", ci);
            CHECK(out[1] != NULL);
            free(y); free(pr);
        }
        release_all(in, 4);
        release_all(out, 2);
    }
}

int main(void) {
    CHECK_OK(cort_pool_create(3, &g_pool));
    test_attention();
    test_attention_errors();
    test_flex_attention();
    test_rms_norm();
    test_rotary();
    test_activations();
    test_linear_attention();
    test_causal_conv();
    cort_pool_free(g_pool);
    return tu_finish();
}
