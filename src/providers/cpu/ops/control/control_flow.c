/* Control flow: If, Loop, Scan. Bodies are compiled once at session creation (init) into
 * subgraphs; outer-scope values reach them as the node's implicit inputs. */
#include <string.h>
#include "../../../../graph/op.h"

/* ---------------------------------------------------------------- helpers */
/* Copies n elements (strings duplicated). */
static cort_status *copy_elems(cort_value *dst, size_t doff, const cort_value *src, size_t soff, size_t n) {
    if (src->type == CORT_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            const char *s = cort_string_get(src, soff + i);
            CORT_TRY(cort_string_set(dst, doff + i, s, strlen(s)));
        }
        return NULL;
    }
    size_t es = cort_type_size(src->type);
    if (n) memcpy((char *)dst->data + doff * es, (const char *)src->data + soff * es, n * es);
    return NULL;
}

/* Stacks T tensors of one shape along a new axis `axis` (0..rank). order[t] gives the source index. */
static cort_status *stack(cort_kernel_ctx *ctx, cort_value *const *items, size_t T, int axis, int reverse,
                          const cort_tinfo *hint, cort_value **out) {
    const cort_node *node = ctx->node;
    if (T == 0) {
        /* zero iterations: shape [0] + the body's static output shape where known */
        int64_t dims[CORT_MAX_RANK] = { 0 };
        size_t rank = 1;
        cort_type ty = hint && hint->elem ? hint->elem : CORT_TYPE_FLOAT;
        if (hint && hint->rank >= 0 && hint->rank < CORT_MAX_RANK) {
            int ok = 1;
            for (int i = 0; i < hint->rank; i++) ok &= hint->dims[i] >= 0;
            if (ok) {
                rank = (size_t)hint->rank + 1;
                for (size_t i = 0, j = 0; i < rank; i++) dims[i] = (int)i == axis ? 0 : hint->dims[j++];
            }
        }
        return cort_kernel_tensor(ctx, ty, dims, rank, out);
    }
    const cort_value *f = items[0];
    if (f->kind != CORT_VKIND_TENSOR)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "scan output is a %s; only tensors can be stacked",
                               f->kind == CORT_VKIND_SEQUENCE ? "sequence" : "non-tensor");
    if (f->rank + 1 > CORT_MAX_RANK || axis < 0 || (size_t)axis > f->rank)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "scan output axis %d is out of range for rank %zu", axis,
                               f->rank);
    for (size_t t = 1; t < T; t++) {
        const cort_value *v = items[t];
        int same = v->kind == CORT_VKIND_TENSOR && v->type == f->type && v->rank == f->rank;
        for (size_t i = 0; same && i < f->rank; i++) same = v->shape[i] == f->shape[i];
        if (!same) {
            char a[256], b[256];
            return cort_node_error(node, CORT_ERROR_RUNTIME,
                                   "scan output of iteration %zu has shape %s, iteration 0 had %s (they must match to be stacked)",
                                   t, cort_shape_str(v->shape, v->rank, a, sizeof a), cort_shape_str(f->shape, f->rank, b, sizeof b));
        }
    }
    int64_t dims[CORT_MAX_RANK];
    size_t rank = f->rank + 1;
    for (size_t i = 0, j = 0; i < rank; i++) dims[i] = (int)i == axis ? (int64_t)T : f->shape[j++];
    cort_value *o = NULL;
    CORT_TRY(cort_kernel_tensor(ctx, f->type, dims, rank, &o));
    size_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)f->shape[i];
    for (size_t i = (size_t)axis; i < f->rank; i++) inner *= (size_t)f->shape[i];
    for (size_t t = 0; t < T; t++) {
        const cort_value *src = items[reverse ? T - 1 - t : t];
        for (size_t q = 0; q < outer; q++) {
            cort_status *st = copy_elems(o, (q * T + t) * inner, src, q * inner, inner);
            if (st) { cort_value_release(o); return st; }
        }
    }
    *out = o;
    return NULL;
}

/* Slice index `idx` along `axis` (removing that axis). */
static cort_status *take(cort_kernel_ctx *ctx, const cort_value *v, int axis, int64_t idx, cort_value **out) {
    int64_t dims[CORT_MAX_RANK];
    size_t rank = 0;
    for (size_t i = 0; i < v->rank; i++)
        if ((int)i != axis) dims[rank++] = v->shape[i];
    cort_value *o = NULL;
    CORT_TRY(cort_kernel_tensor(ctx, v->type, dims, rank, &o));
    size_t outer = 1, inner = 1, len = (size_t)v->shape[axis];
    for (int i = 0; i < axis; i++) outer *= (size_t)v->shape[i];
    for (size_t i = (size_t)axis + 1; i < v->rank; i++) inner *= (size_t)v->shape[i];
    for (size_t q = 0; q < outer; q++) {
        cort_status *st = copy_elems(o, q * inner, v, (q * len + (size_t)idx) * inner, inner);
        if (st) { cort_value_release(o); return st; }
    }
    *out = o;
    return NULL;
}

static void release_all(cort_value **v, size_t n) {
    for (size_t i = 0; i < n; i++) { cort_value_release(v[i]); v[i] = NULL; }
}

static void tinfo_copy_type(cort_tinfo *dst, const cort_tinfo *src) {
    if (!src) return;
    dst->kind = src->kind;
    dst->elem = src->elem;
    dst->inner = src->inner;
    dst->rank = src->rank;
    if (src->rank > 0) memcpy(dst->dims, src->dims, (size_t)src->rank * sizeof src->dims[0]);
}

/* ---------------------------------------------------------------- If */
typedef struct if_state { cort_subgraph *then_g, *else_g; } if_state;

static void if_free(void *p) {
    if_state *s = p;
    if (!s) return;
    cort_subgraph_free(s->then_g);
    cort_subgraph_free(s->else_g);
    cort_free(s);
}

static cort_status *if_init(const cort_node *node, void **state) {
    const cort_graph_ir *tg = cort_attr_graph(node, "then_branch"), *eg = cort_attr_graph(node, "else_branch");
    if (!tg || !eg) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "missing attribute then_branch or else_branch");
    if_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = cort_subgraph_compile(node, tg, &s->then_g);
    if (!st) st = cort_subgraph_compile(node, eg, &s->else_g);
    if (!st && (cort_subgraph_output_count(s->then_g) != node->n_outputs ||
                cort_subgraph_output_count(s->else_g) != node->n_outputs))
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "branches have %zu and %zu outputs, the node has %zu",
                             cort_subgraph_output_count(s->then_g), cort_subgraph_output_count(s->else_g), node->n_outputs);
    if (st) { if_free(s); return st; }
    *state = s;
    return NULL;
}

static cort_status *if_infer(cort_infer_ctx *ctx) {
    const if_state *s = ctx->state;
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        const cort_tinfo *a = cort_subgraph_output_info(s->then_g, i), *b = cort_subgraph_output_info(s->else_g, i);
        tinfo_copy_type(&ctx->outputs[i], a && a->kind ? a : b);
        /* branches may differ in shape: keep only what both agree on */
        if (a && b && (a->rank != b->rank || memcmp(a->dims, b->dims, (size_t)(a->rank > 0 ? a->rank : 0) * sizeof a->dims[0])))
            ctx->outputs[i].rank = -1;
    }
    return NULL;
}

static cort_status *if_run(cort_kernel_ctx *ctx) {
    const if_state *s = ctx->state;
    const cort_value *c = ctx->inputs[0];
    if (!c || c->kind != CORT_VKIND_TENSOR || c->count != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'cond' must be a single-element tensor");
    int cond = cort_load_f64(c->data, c->type, 0) != 0;
    return cort_subgraph_run(ctx, cond ? s->then_g : s->else_g, NULL, 0, ctx->outputs, ctx->n_outputs);
}

const cort_op_def ctl_op_if = { .name = "If", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .init = if_init, .free_state = if_free, .infer = if_infer, .run = if_run };

/* ---------------------------------------------------------------- Loop */
typedef struct body_state { cort_subgraph *body; } body_state;

static void body_free(void *p) {
    body_state *s = p;
    if (!s) return;
    cort_subgraph_free(s->body);
    cort_free(s);
}

static cort_status *body_init(const cort_node *node, void **state) {
    const cort_graph_ir *b = cort_attr_graph(node, "body");
    if (!b) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "missing attribute 'body'");
    body_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = cort_subgraph_compile(node, b, &s->body);
    if (st) { body_free(s); return st; }
    *state = s;
    return NULL;
}

static cort_status *loop_infer(cort_infer_ctx *ctx) {
    const body_state *s = ctx->state;
    size_t n_carried = ctx->n_inputs > 2 ? ctx->n_inputs - 2 : 0;
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        const cort_tinfo *b = cort_subgraph_output_info(s->body, i + 1);
        if (i < n_carried) {
            tinfo_copy_type(&ctx->outputs[i], b && b->kind ? b : &ctx->inputs[i + 2]);
            if (b && b->rank != ctx->inputs[i + 2].rank) ctx->outputs[i].rank = -1;
            else if (b && b->rank > 0 && memcmp(b->dims, ctx->inputs[i + 2].dims, (size_t)b->rank * sizeof b->dims[0]))
                ctx->outputs[i].rank = -1;
        } else if (b) {
            ctx->outputs[i].kind = b->kind;
            ctx->outputs[i].elem = b->elem;
            ctx->outputs[i].rank = -1;
        }
    }
    return NULL;
}

static cort_status *loop_run(cort_kernel_ctx *ctx) {
    const body_state *s = ctx->state;
    const cort_node *node = ctx->node;
    size_t n_carried = ctx->n_inputs > 2 ? ctx->n_inputs - 2 : 0;
    size_t n_body_out = cort_subgraph_output_count(s->body);
    if (cort_subgraph_input_count(s->body) != n_carried + 2 || n_body_out < n_carried + 1)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "body has %zu inputs and %zu outputs; %zu loop-carried values",
                               cort_subgraph_input_count(s->body), n_body_out, n_carried);
    size_t n_scan = n_body_out - 1 - n_carried;
    if (ctx->n_outputs > n_carried + n_scan)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "node has %zu outputs, body produces %zu", ctx->n_outputs,
                               n_carried + n_scan);
    int64_t max_trip = INT64_MAX;
    if (ctx->inputs[0]) {
        if (ctx->inputs[0]->kind != CORT_VKIND_TENSOR || ctx->inputs[0]->count != 1)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'M' must be a single-element tensor");
        max_trip = cort_load_i64(ctx->inputs[0]->data, ctx->inputs[0]->type, 0);
    }
    int cond = 1;
    if (n_carried + 2 <= ctx->n_inputs && ctx->inputs[1]) {
        if (ctx->inputs[1]->kind != CORT_VKIND_TENSOR || ctx->inputs[1]->count != 1)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'cond' must be a single-element tensor");
        cond = cort_load_i64(ctx->inputs[1]->data, ctx->inputs[1]->type, 0) != 0;
    }
    cort_status *st = NULL;
    size_t n_in = n_carried + 2;
    /* the value arrays from the session's recycled scratch: a steady-state run does not allocate */
    cort_value **body_in = cort_kernel_scratch(ctx, (n_in + n_body_out) * sizeof *body_in);
    cort_value ***scans = cort_kernel_scratch(ctx, (n_scan + 1) * sizeof *scans);
    size_t scan_cap = 0, T = 0;
    if (!body_in || !scans) {
        cort_kernel_scratch_free(ctx, body_in);
        cort_kernel_scratch_free(ctx, scans);
        return cort_error_oom();
    }
    memset(body_in, 0, (n_in + n_body_out) * sizeof *body_in);
    memset(scans, 0, (n_scan + 1) * sizeof *scans);
    cort_value **body_out = body_in + n_in;
    for (size_t i = 0; i < n_carried; i++) body_in[2 + i] = cort_value_retain(ctx->inputs[2 + i]);
    for (int64_t it = 0; it < max_trip && cond; it++) {
        if (cort_kernel_cancelled(ctx)) { st = cort_kernel_cancelled_status(ctx); goto done; }
        int64_t one = 1;
        (void)one;
        if ((st = cort_kernel_tensor(ctx, CORT_TYPE_INT64, NULL, 0, &body_in[0]))) goto done;
        *(int64_t *)body_in[0]->data = it;
        if ((st = cort_kernel_tensor(ctx, CORT_TYPE_BOOL, NULL, 0, &body_in[1]))) goto done;
        *(uint8_t *)body_in[1]->data = 1;
        st = cort_subgraph_run(ctx, s->body, body_in, n_in, body_out, n_body_out);
        cort_value_release(body_in[0]);
        cort_value_release(body_in[1]);
        body_in[0] = body_in[1] = NULL;
        if (st) goto done;
        const cort_value *c = body_out[0];
        if (!c || c->kind != CORT_VKIND_TENSOR || c->count != 1) {
            st = cort_node_error(node, CORT_ERROR_RUNTIME, "body output 0 'cond' must be a single-element tensor");
            release_all(body_out, n_body_out);
            goto done;
        }
        cond = cort_load_i64(c->data, c->type, 0) != 0;
        for (size_t i = 0; i < n_carried; i++) {
            cort_value_release(body_in[2 + i]);
            body_in[2 + i] = body_out[1 + i];
            body_out[1 + i] = NULL;
        }
        if (T == scan_cap) {
            size_t cap = scan_cap ? scan_cap * 2 : 16;
            for (size_t k = 0; k < n_scan; k++) {
                cort_value **n = cort_kernel_scratch(ctx, cap * sizeof *n);
                if (!n) { st = cort_error_oom(); release_all(body_out, n_body_out); goto done; }
                if (T) memcpy(n, scans[k], T * sizeof *n);
                cort_kernel_scratch_free(ctx, scans[k]);
                scans[k] = n;
            }
            scan_cap = cap;
        }
        for (size_t k = 0; k < n_scan; k++) {
            scans[k][T] = body_out[1 + n_carried + k];
            body_out[1 + n_carried + k] = NULL;
        }
        T++;
        release_all(body_out, n_body_out);
    }
    for (size_t i = 0; i < n_carried && i < ctx->n_outputs; i++) {
        cort_kernel_set_output(ctx, i, body_in[2 + i]);
        body_in[2 + i] = NULL;
    }
    for (size_t k = 0; k < n_scan && n_carried + k < ctx->n_outputs; k++) {
        cort_value *o = NULL;
        if (T && scans[k][0]->kind == CORT_VKIND_SEQUENCE) {
            st = cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "scan output %zu is a sequence", k);
            goto done;
        }
        if ((st = stack(ctx, scans[k], T, 0, 0, cort_subgraph_output_info(s->body, 1 + n_carried + k), &o))) goto done;
        cort_kernel_set_output(ctx, n_carried + k, o);
    }
done:
    for (size_t i = 0; i < n_in; i++) cort_value_release(body_in[i]);
    for (size_t k = 0; k < n_scan; k++) {
        for (size_t t = 0; t < T; t++) cort_value_release(scans[k][t]);
        cort_kernel_scratch_free(ctx, scans[k]);
    }
    cort_kernel_scratch_free(ctx, scans);
    cort_kernel_scratch_free(ctx, body_in);
    return st;
}

const cort_op_def ctl_op_loop = { .name = "Loop", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .init = body_init, .free_state = body_free, .infer = loop_infer, .run = loop_run };

/* ---------------------------------------------------------------- Scan */
static cort_status *scan_infer(cort_infer_ctx *ctx) {
    const body_state *s = ctx->state;
    int64_t M = cort_attr_int(ctx->node, "num_scan_inputs", 0);
    size_t first = ctx->opset < 9 ? 1 : 0;
    size_t n_state = ctx->n_inputs - first - (size_t)M;
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        const cort_tinfo *b = cort_subgraph_output_info(s->body, i);
        if (!b) continue;
        ctx->outputs[i].kind = b->kind;
        ctx->outputs[i].elem = b->elem;
        ctx->outputs[i].rank = -1;
        if (i < n_state && ctx->opset >= 9) tinfo_copy_type(&ctx->outputs[i], b);
    }
    return NULL;
}

/* One scan over T steps (opset-9 semantics). states: borrowed initial states; scan_in: borrowed. */
static cort_status *scan_core(cort_kernel_ctx *ctx, const cort_subgraph *body, cort_value *const *states, size_t N,
                              cort_value *const *scan_in, size_t M, const int64_t *in_axes, const int64_t *in_dirs,
                              size_t K, const int64_t *out_axes, const int64_t *out_dirs, cort_value **outs) {
    const cort_node *node = ctx->node;
    cort_status *st = NULL;
    if (cort_subgraph_input_count(body) != N + M || cort_subgraph_output_count(body) != N + K)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "body has %zu inputs/%zu outputs, expected %zu/%zu",
                               cort_subgraph_input_count(body), cort_subgraph_output_count(body), N + M, N + K);
    int64_t T = -1;
    for (size_t j = 0; j < M; j++) {
        const cort_value *v = scan_in[j];
        if (!v || v->kind != CORT_VKIND_TENSOR)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "scan input %zu is not a tensor", j);
        int64_t ax = in_axes ? in_axes[j] : 0;
        if (ax < 0) ax += (int64_t)v->rank;
        if (ax < 0 || ax >= (int64_t)v->rank)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "scan_input_axes[%zu] = %lld is out of range for rank %zu",
                                   j, (long long)(in_axes ? in_axes[j] : 0), v->rank);
        if (T < 0) T = v->shape[ax];
        else if (T != v->shape[ax])
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "scan input %zu has %lld steps, input 0 has %lld", j,
                                   (long long)v->shape[ax], (long long)T);
    }
    if (T < 0) T = 0;
    cort_value **cur = cort_kernel_scratch(ctx, (N + M + N + K + 1) * sizeof *cur);
    cort_value **steps = cort_kernel_scratch(ctx, ((size_t)T * K + 1) * sizeof *steps);
    if (!cur || !steps) {
        cort_kernel_scratch_free(ctx, cur);
        cort_kernel_scratch_free(ctx, steps);
        return cort_error_oom();
    }
    memset(cur, 0, (N + M + N + K + 1) * sizeof *cur);
    memset(steps, 0, ((size_t)T * K + 1) * sizeof *steps);
    cort_value **bo = cur + N + M;
    for (size_t i = 0; i < N; i++) cur[i] = cort_value_retain(states[i]);
    for (int64_t t = 0; t < T; t++) {
        if (cort_kernel_cancelled(ctx)) { st = cort_kernel_cancelled_status(ctx); goto done; }
        for (size_t j = 0; j < M; j++) {
            const cort_value *v = scan_in[j];
            int64_t ax = in_axes ? in_axes[j] : 0;
            if (ax < 0) ax += (int64_t)v->rank;
            int64_t idx = in_dirs && in_dirs[j] ? T - 1 - t : t;
            if ((st = take(ctx, v, (int)ax, idx, &cur[N + j]))) goto done;
        }
        st = cort_subgraph_run(ctx, body, cur, N + M, bo, N + K);
        release_all(cur + N, M);
        if (st) goto done;
        for (size_t i = 0; i < N; i++) { cort_value_release(cur[i]); cur[i] = bo[i]; bo[i] = NULL; }
        for (size_t k = 0; k < K; k++) { steps[(size_t)t * K + k] = bo[N + k]; bo[N + k] = NULL; }
    }
    for (size_t k = 0; k < K; k++) {
        cort_value **items = cort_kernel_scratch(ctx, ((size_t)T + 1) * sizeof *items);
        if (!items) { st = cort_error_oom(); goto done; }
        for (int64_t t = 0; t < T; t++) items[t] = steps[(size_t)t * K + k];
        int64_t ax = out_axes ? out_axes[k] : 0;
        if (ax < 0 && T) ax += (int64_t)items[0]->rank + 1;
        if (ax < 0) ax = 0;
        st = stack(ctx, items, (size_t)T, (int)ax, out_dirs && out_dirs[k], cort_subgraph_output_info(body, N + k), &outs[N + k]);
        cort_kernel_scratch_free(ctx, items);
        if (st) goto done;
    }
    for (size_t i = 0; i < N; i++) { outs[i] = cur[i]; cur[i] = NULL; }
done:
    for (size_t i = 0; i < N + M + N + K; i++) cort_value_release(cur[i]);
    for (size_t i = 0; i < (size_t)T * K; i++) cort_value_release(steps[i]);
    cort_kernel_scratch_free(ctx, cur);
    cort_kernel_scratch_free(ctx, steps);
    if (st)
        for (size_t i = 0; i < N + K; i++) { cort_value_release(outs[i]); outs[i] = NULL; }
    return st;
}

static cort_status *check_len(const cort_node *node, const char *name, size_t got, size_t want) {
    if (got && got != want)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute %s has %zu entries, expected %zu", name, got, want);
    return NULL;
}

static cort_status *scan_run(cort_kernel_ctx *ctx) {
    const body_state *s = ctx->state;
    const cort_node *node = ctx->node;
    int64_t M = cort_attr_int(node, "num_scan_inputs", -1);
    size_t first = ctx->opset < 9 ? 1 : 0;
    if (M < 1 || (size_t)M + first > ctx->n_inputs)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "num_scan_inputs = %lld is invalid for %zu inputs",
                               (long long)M, ctx->n_inputs);
    size_t N = ctx->n_inputs - first - (size_t)M, K = ctx->n_outputs - N;
    if (ctx->n_outputs < N)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "%zu outputs for %zu states", ctx->n_outputs, N);
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
    size_t n_ia = cort_attr_ints(node, "scan_input_axes", &in_axes);
    size_t n_id = cort_attr_ints(node, ctx->opset < 9 ? "directions" : "scan_input_directions", &in_dirs);
    size_t n_oa = cort_attr_ints(node, "scan_output_axes", &out_axes);
    size_t n_od = cort_attr_ints(node, "scan_output_directions", &out_dirs);
    CORT_TRY(check_len(node, "scan_input_axes", n_ia, (size_t)M));
    CORT_TRY(check_len(node, "scan_input_directions", n_id, (size_t)M));
    CORT_TRY(check_len(node, "scan_output_axes", n_oa, K));
    CORT_TRY(check_len(node, "scan_output_directions", n_od, K));
    if (ctx->opset >= 9)
        return scan_core(ctx, s->body, ctx->inputs, N, ctx->inputs + N, (size_t)M, in_axes, in_dirs, K, out_axes, out_dirs,
                         ctx->outputs);
    /* opset 8: a leading batch axis on every input and output; optional sequence_lens (unsupported if given) */
    if (ctx->inputs[0])
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "input 0 'sequence_lens' is not supported");
    cort_value *const *in = ctx->inputs + 1;
    if (!in[0] || in[0]->kind != CORT_VKIND_TENSOR || in[0]->rank < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 must be a batched tensor");
    int64_t B = in[0]->shape[0];
    cort_status *st = NULL;
    size_t nio = N + (size_t)M;
    cort_value **bin = cort_calloc(nio + (size_t)B * (N + K) + 1, sizeof *bin);
    if (!bin) return cort_error_oom();
    cort_value **res = bin + nio;
    for (int64_t b = 0; b < B && !st; b++) {
        for (size_t i = 0; i < nio && !st; i++) {
            if (!in[i] || in[i]->kind != CORT_VKIND_TENSOR || in[i]->rank < 1 || in[i]->shape[0] != B)
                st = cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu must have batch dimension %lld", i + 1,
                                     (long long)B);
            else st = take(ctx, in[i], 0, b, &bin[i]);
        }
        if (!st) st = scan_core(ctx, s->body, bin, N, bin + N, (size_t)M, NULL, in_dirs, K, NULL, NULL, res + (size_t)b * (N + K));
        release_all(bin, nio);
    }
    for (size_t k = 0; k < N + K && !st; k++) {
        cort_value **items = cort_calloc((size_t)B + 1, sizeof *items);
        if (!items) { st = cort_error_oom(); break; }
        for (int64_t b = 0; b < B; b++) items[b] = res[(size_t)b * (N + K) + k];
        cort_value *o = NULL;
        st = stack(ctx, items, (size_t)B, 0, 0, NULL, &o);
        cort_free(items);
        if (!st) cort_kernel_set_output(ctx, k, o);
    }
    for (size_t i = 0; i < (size_t)B * (N + K); i++) cort_value_release(res[i]);
    cort_free(bin);
    return st;
}

const cort_op_def ctl_op_scan = { .name = "Scan", .domain = "", .min_opset = 8, .max_opset = CORT_OPSET_MAX,
    .init = body_init, .free_state = body_free, .infer = scan_infer, .run = scan_run };


/* ---------------------------------------------------------------- SequenceMap */
static cort_status *seqmap_infer(cort_infer_ctx *ctx) {
    const body_state *s = ctx->state;
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        const cort_tinfo *b = cort_subgraph_output_info(s->body, i);
        cort_tinfo_unknown(&ctx->outputs[i]);
        ctx->outputs[i].kind = CORT_VKIND_SEQUENCE;
        ctx->outputs[i].elem = b ? b->elem : CORT_TYPE_UNDEFINED;
    }
    return NULL;
}

static cort_status *seqmap_run(cort_kernel_ctx *ctx) {
    const body_state *s = ctx->state;
    const cort_node *node = ctx->node;
    size_t n_in = ctx->n_inputs, n_out = ctx->n_outputs;
    if (cort_subgraph_input_count(s->body) != n_in || cort_subgraph_output_count(s->body) != n_out)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "body has %zu inputs/%zu outputs, node has %zu/%zu",
                               cort_subgraph_input_count(s->body), cort_subgraph_output_count(s->body), n_in, n_out);
    const cort_value *first = ctx->inputs[0];
    if (!first || first->kind != CORT_VKIND_SEQUENCE)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input_sequence' must be a sequence");
    size_t n = first->n_items;
    for (size_t i = 1; i < n_in; i++) {
        const cort_value *v = ctx->inputs[i];
        if (v && v->kind == CORT_VKIND_SEQUENCE && v->n_items != n)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu is a sequence of %zu items, input 0 has %zu",
                                   i, v->n_items, n);
    }
    cort_status *st = NULL;
    cort_value **args = cort_calloc(n_in + n_out + 1, sizeof *args);
    if (!args) return cort_error_oom();
    cort_value **res = args + n_in;
    for (size_t k = 0; k < n_out && !st; k++) {
        const cort_tinfo *b = cort_subgraph_output_info(s->body, k);
        cort_value *seq = NULL;
        st = cort_sequence_new(b ? b->elem : CORT_TYPE_UNDEFINED, &seq);
        if (!st) cort_kernel_set_output(ctx, k, seq);
    }
    for (size_t it = 0; it < n && !st; it++) {
        if (cort_kernel_cancelled(ctx)) { st = cort_kernel_cancelled_status(ctx); break; }
        for (size_t i = 0; i < n_in; i++) {
            cort_value *v = ctx->inputs[i];
            args[i] = v && v->kind == CORT_VKIND_SEQUENCE ? v->items[it] : v;
        }
        st = cort_subgraph_run(ctx, s->body, args, n_in, res, n_out);
        for (size_t k = 0; k < n_out && !st; k++) st = cort_sequence_push(ctx->outputs[k], res[k]);
        release_all(res, n_out);
    }
    cort_free(args);
    return st;
}

const cort_op_def ctl_op_sequence_map = { .name = "SequenceMap", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .init = body_init, .free_state = body_free, .infer = seqmap_infer, .run = seqmap_run };
