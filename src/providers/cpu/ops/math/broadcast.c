/* Numpy-broadcast iteration and the parallel drivers of the elementwise family. */
#include <stdatomic.h>
#include <string.h>
#include "elementwise.h"

const char *ew_input_name(const cort_node *node, size_t i) {
    if (!node->ir || i >= node->ir->n_inputs || !node->ir->inputs[i]) return "";
    return node->ir->inputs[i];
}

cort_status *ew_input(cort_kernel_ctx *ctx, size_t i, const cort_value **out) {
    if (i >= ctx->n_inputs || !ctx->inputs[i])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is missing", i,
                               ew_input_name(ctx->node, i));
    const cort_value *v = ctx->inputs[i];
    if (v->kind != CORT_VKIND_TENSOR)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is not a tensor (kind %d)", i,
                               ew_input_name(ctx->node, i), (int)v->kind);
    *out = v;
    return NULL;
}

cort_status *ew_type_error(cort_kernel_ctx *ctx, size_t i, cort_type t) {
    return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "input %zu '%s' has unsupported element type %s", i,
                           ew_input_name(ctx->node, i), cort_type_name(t));
}

cort_status *ew_broadcast_shape(const cort_node *node, size_t n, const int64_t *const *dims, const size_t *ranks,
                                const size_t *which, int64_t *out, size_t *out_rank) {
    size_t rank = 0;
    for (size_t k = 0; k < n; k++)
        if (ranks[k] > rank) rank = ranks[k];
    if (rank > CORT_MAX_RANK)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "rank %zu exceeds the maximum %d", rank, CORT_MAX_RANK);
    for (size_t d = 0; d < rank; d++) out[d] = 1;
    for (size_t k = 0; k < n; k++) {
        size_t off = rank - ranks[k];
        for (size_t d = 0; d < ranks[k]; d++) {
            int64_t v = dims[k][d], *o = &out[off + d];
            if (v == *o || v == 1) continue;
            if (*o == 1) { *o = v; continue; }
            /* incompatible: name this input and the shape accumulated so far */
            char a[128], b[128];
            size_t ik = which ? which[k] : k;
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input %zu '%s' has shape %s, which cannot be broadcast with %s (dimension %zu: %lld vs %lld)",
                                   ik, ew_input_name(node, ik), cort_shape_str(dims[k], ranks[k], a, sizeof a),
                                   cort_shape_str(out, rank, b, sizeof b), off + d, (long long)v, (long long)*o);
        }
    }
    *out_rank = rank;
    return NULL;
}

void ew_plan_init(ew_plan *p, const int64_t *out_dims, size_t out_rank, size_t n_in, const int64_t *const *in_dims,
                  const size_t *in_ranks) {
    int64_t full[EW_MAX_IN][CORT_MAX_RANK];
    memset(p, 0, sizeof *p);
    p->n_in = n_in;
    p->count = 1;
    for (size_t d = 0; d < out_rank; d++) p->count *= (size_t)out_dims[d];
    /* contiguous element strides of each input, aligned to the output's trailing dims */
    for (size_t k = 0; k < n_in; k++) {
        int64_t s = 1;
        size_t off = out_rank - in_ranks[k];
        for (size_t d = out_rank; d-- > 0;) {
            if (d < off) { full[k][d] = 0; continue; }
            int64_t dim = in_dims[k][d - off];
            full[k][d] = (dim == 1) ? 0 : s;
            s *= dim;
        }
    }
    /* drop size-1 output dims, then merge neighbours every input walks contiguously */
    size_t r = 0;
    for (size_t d = 0; d < out_rank; d++) {
        if (out_dims[d] == 1) continue;
        if (r > 0) {
            int merge = 1;
            for (size_t k = 0; k < n_in && merge; k++)
                merge = (p->strides[k][r - 1] == full[k][d] * out_dims[d]);
            if (merge) {
                p->dims[r - 1] *= out_dims[d];
                for (size_t k = 0; k < n_in; k++) p->strides[k][r - 1] = full[k][d];
                continue;
            }
        }
        p->dims[r] = out_dims[d];
        for (size_t k = 0; k < n_in; k++) p->strides[k][r] = full[k][d];
        r++;
    }
    if (r == 0) {   /* scalar (or all-ones) output */
        p->dims[0] = 1;
        for (size_t k = 0; k < n_in; k++) p->strides[k][0] = 0;
        r = 1;
    }
    p->rank = r;
}

typedef struct ew_job {
    const ew_plan *p;
    const uint8_t *in[EW_MAX_IN];
    size_t esize[EW_MAX_IN];
    uint8_t *out;
    size_t out_esize;
    ew_row_fn fn;
    const ew_params *params;
    atomic_int failed;
} ew_job;

static void ew_job_range(void *arg, size_t begin, size_t end) {
    ew_job *j = (ew_job *)arg;
    const ew_plan *p = j->p;
    size_t r = p->rank, n_in = p->n_in, inner = (size_t)p->dims[r - 1];
    size_t idx[CORT_MAX_RANK] = {0};
    size_t q = begin / inner, ii = begin % inner;
    for (size_t d = r - 1; d-- > 0;) { idx[d] = q % (size_t)p->dims[d]; q /= (size_t)p->dims[d]; }
    /* row_off[k]: element offset of input k at the start of the current row; kept up to date
     * incrementally (odometer) so a row costs O(inputs), not O(rank * inputs) */
    ptrdiff_t row_off[EW_MAX_IN], st[EW_MAX_IN];
    const void *ptr[EW_MAX_IN];
    for (size_t k = 0; k < n_in; k++) {
        ptrdiff_t off = 0;
        for (size_t d = 0; d + 1 < r; d++) off += (ptrdiff_t)idx[d] * (ptrdiff_t)p->strides[k][d];
        row_off[k] = off;
        st[k] = (ptrdiff_t)p->strides[k][r - 1];
    }
    if (atomic_load_explicit(&j->failed, memory_order_relaxed)) return;
    size_t pos = begin;
    for (;;) {
        size_t len = inner - ii;
        if (len > end - pos) len = end - pos;
        for (size_t k = 0; k < n_in; k++)
            ptr[k] = j->in[k] + (row_off[k] + (ptrdiff_t)ii * st[k]) * (ptrdiff_t)j->esize[k];
        if (j->fn(j->params, len, j->out + pos * j->out_esize, ptr, st)) {
            atomic_store(&j->failed, 1);
            return;
        }
        pos += len;
        if (pos >= end) return;
        ii = 0;
        for (size_t d = r - 1; d-- > 0;) {
            if (++idx[d] < (size_t)p->dims[d]) {
                for (size_t k = 0; k < n_in; k++) row_off[k] += (ptrdiff_t)p->strides[k][d];
                break;
            }
            idx[d] = 0;
            for (size_t k = 0; k < n_in; k++)
                row_off[k] -= (ptrdiff_t)p->strides[k][d] * (ptrdiff_t)(p->dims[d] - 1);
        }
    }
}

cort_status *ew_plan_run(cort_kernel_ctx *ctx, const ew_plan *p, const void *const *in_data, const size_t *in_esize,
                         void *out, size_t out_esize, ew_row_fn fn, const ew_params *params, size_t grain) {
    if (p->count == 0) return NULL;
    ew_job j;
    j.p = p;
    for (size_t k = 0; k < p->n_in; k++) { j.in[k] = (const uint8_t *)in_data[k]; j.esize[k] = in_esize[k]; }
    j.out = (uint8_t *)out;
    j.out_esize = out_esize;
    j.fn = fn;
    j.params = params;
    atomic_init(&j.failed, 0);
    if (grain == 0 || p->count <= grain || !ctx->pool)
        ew_job_range(&j, 0, p->count);
    else
        cort_parallel_for(ctx->pool, p->count, grain, ew_job_range, &j);
    return atomic_load(&j.failed) ? cort_error_oom() : NULL;
}

cort_status *ew_run_nary(cort_kernel_ctx *ctx, size_t n, const cort_value *const *in, const int64_t *const *dims,
                         const size_t *ranks, const size_t *which, cort_type out_type, ew_row_fn fn,
                         const ew_params *params, size_t grain, cort_value **out) {
    const int64_t *d[EW_MAX_IN];
    size_t rk[EW_MAX_IN], esz[EW_MAX_IN];
    const void *data[EW_MAX_IN];
    for (size_t k = 0; k < n; k++) {
        d[k] = dims ? dims[k] : in[k]->shape;
        rk[k] = ranks ? ranks[k] : in[k]->rank;
        esz[k] = cort_type_size(in[k]->type);
        data[k] = in[k]->data;
    }
    int64_t od[CORT_MAX_RANK];
    size_t orank = 0;
    CORT_TRY(ew_broadcast_shape(ctx->node, n, d, rk, which, od, &orank));
    cort_value *o = NULL;
    for (size_t k = 0; params && params->in_place && !o && k < n; k++)
        if ((o = cort_kernel_reusable_input(ctx, k, out_type, od, orank)))
            cort_kernel_set_output(ctx, 0, cort_value_retain(o));
    if (!o) CORT_TRY(cort_kernel_output(ctx, 0, out_type, od, orank, &o));
    ew_plan p;
    ew_plan_init(&p, od, orank, n, d, rk);
    ew_params local;
    if (out_type == CORT_TYPE_STRING) {   /* string kernels set elements of this tensor */
        local = *params;
        local.out = o;
        params = &local;
    }
    if (out) *out = o;
    return ew_plan_run(ctx, &p, data, esz, o->data, cort_type_size(out_type), fn, params, grain);
}

typedef struct ew_map_job {
    const uint8_t *in;
    uint8_t *out;
    size_t in_esize, out_esize;
    ew_map_fn fn;
    const ew_params *params;
} ew_map_job;

static void ew_map_range(void *arg, size_t begin, size_t end) {
    const ew_map_job *j = (const ew_map_job *)arg;
    j->fn(j->params, end - begin, j->out + begin * j->out_esize, j->in + begin * j->in_esize);
}

cort_status *ew_run_map(cort_kernel_ctx *ctx, const cort_value *in, cort_type out_type, ew_map_fn fn,
                        const ew_params *params, size_t grain) {
    cort_value *o = NULL;
    if (params && params->in_place && ctx->n_inputs && ctx->inputs[0] == in &&
        (o = cort_kernel_reusable_input(ctx, 0, out_type, in->shape, in->rank)))
        cort_kernel_set_output(ctx, 0, cort_value_retain(o));
    if (!o) CORT_TRY(cort_kernel_output(ctx, 0, out_type, in->shape, in->rank, &o));
    if (in->count == 0) return NULL;
    ew_map_job j = { (const uint8_t *)in->data, (uint8_t *)o->data, cort_type_size(in->type), cort_type_size(out_type),
                     fn, params };
    if (in->count <= grain || !ctx->pool)
        ew_map_range(&j, 0, in->count);
    else
        cort_parallel_for(ctx->pool, in->count, grain, ew_map_range, &j);
    return NULL;
}

cort_status *ew_infer_same_type(cort_infer_ctx *ctx, cort_type t) {
    if (ctx->n_outputs < 1) return NULL;
    if (ctx->n_inputs >= 1 && ctx->inputs[0].present && ctx->inputs[0].rank >= 0)
        cort_tinfo_tensor_shape(&ctx->outputs[0], t, ctx->inputs[0].dims, ctx->inputs[0].rank);
    else
        cort_tinfo_tensor(&ctx->outputs[0], t);
    return NULL;
}
