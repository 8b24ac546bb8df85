/* TopK: the k largest (or smallest) entries along an axis with their int64 indices. Ties keep the
 * lower index first (a stable sort over ascending indices); NaN ranks above every number.
 * k comes from the attribute before opset 10 and from input 1 afterwards. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct topk_keys {
    const double *f;      /* float keys (all types but int64/uint64) */
    const int64_t *i;     /* integer keys */
    int u64, largest;
} topk_keys;

static int cmp_keys(const void *ctx, int64_t a, int64_t b) {
    const topk_keys *k = ctx;
    int c;
    if (k->f) {
        double x = k->f[a], y = k->f[b];
        int xn = x != x, yn = y != y;
        c = xn || yn ? xn - yn : (x > y) - (x < y);
    } else if (k->u64) {
        uint64_t x = (uint64_t)k->i[a], y = (uint64_t)k->i[b];
        c = (x > y) - (x < y);
    } else {
        c = (k->i[a] > k->i[b]) - (k->i[a] < k->i[b]);
    }
    return k->largest ? -c : c;
}

typedef struct topk_job {
    const cort_value *x;
    cort_value *vals;
    int64_t *idxs;
    size_t n, inner, k;
    int largest;
    void *scratch;        /* per-task blocks of `scratch_per` bytes */
    size_t scratch_per, tasks_grain;
} topk_job;

static void topk_task(void *arg, size_t begin, size_t end) {
    const topk_job *j = arg;
    size_t n = j->n, inner = j->inner, es = cort_type_size(j->x->type);
    cort_type t = j->x->type;
    /* one scratch block per task: begin / grain identifies the task uniquely */
    uint8_t *s = (uint8_t *)j->scratch + (begin / j->tasks_grain) * j->scratch_per;
    int64_t *idx = (int64_t *)s, *tmp = idx + n;
    double *kf = (double *)(tmp + n);
    int64_t *ki = (int64_t *)(tmp + n);
    int intkeys = t == CORT_TYPE_INT64 || t == CORT_TYPE_UINT64;
    topk_keys keys = { intkeys ? NULL : kf, intkeys ? ki : NULL, t == CORT_TYPE_UINT64, j->largest };
    for (size_t r = begin; r < end; r++) {
        size_t o = r / inner, c = r % inner, base = o * n * inner + c;
        for (size_t i = 0; i < n; i++) {
            idx[i] = (int64_t)i;
            if (intkeys) ki[i] = ((const int64_t *)j->x->data)[base + i * inner];
            else if (t == CORT_TYPE_FLOAT) kf[i] = ((const float *)j->x->data)[base + i * inner];
            else kf[i] = cort_load_f64(j->x->data, t, base + i * inner);
        }
        rd_sort(idx, tmp, n, cmp_keys, &keys);
        size_t obase = o * j->k * inner + c;
        for (size_t i = 0; i < j->k; i++) {
            memcpy((uint8_t *)j->vals->data + (obase + i * inner) * es,
                   (const uint8_t *)j->x->data + (base + (size_t)idx[i] * inner) * es, es);
            j->idxs[obase + i * inner] = idx[i];
        }
    }
}

static cort_status *topk_get_k(cort_kernel_ctx *ctx, int64_t *k) {
    if (ctx->opset < 10) { *k = cort_attr_int(ctx->node, "k", -1); return NULL; }
    const cort_value *kt = rd_input(ctx, 1);
    int64_t buf[1];
    size_t n;
    if (!kt) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'K' is required");
    CORT_TRY(rd_read_ints(ctx->node, kt, 1, "K", buf, 1, &n));
    if (n != 1) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'K' must hold one value, has %zu", n);
    *k = buf[0];
    return NULL;
}

static cort_status *topk_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || !(cort_type_is_float(x->type) || cort_type_is_int(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a numeric tensor");
    size_t axis;
    CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", -1), x->rank, "attribute 'axis'", &axis));
    int64_t k = 0;
    CORT_TRY(topk_get_k(ctx, &k));
    size_t n = (size_t)x->shape[axis];
    if (k < 0 || (uint64_t)k > n) {
        char sb[128];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "K = %lld is out of range for input 0 'X' of shape %s (axis %zu)",
                               (long long)k, rd_shape_str(x, sb, sizeof sb), axis);
    }
    int64_t od[CORT_MAX_RANK];
    memcpy(od, x->shape, x->rank * sizeof *od);
    od[axis] = k;
    cort_value *vals, *idxs;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, od, x->rank, &vals));
    CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_INT64, od, x->rank, &idxs));
    size_t outer = rd_prod(x->shape, 0, axis), inner = rd_prod(x->shape, axis + 1, x->rank), rows = outer * inner;
    if (rows == 0 || k == 0) return NULL;
    size_t grain = 65536 / (n + 1) + 1;
    size_t tasks = (rows + grain - 1) / grain;
    size_t per = (3 * n * sizeof(int64_t) + 63) & ~(size_t)63;
    if (per && tasks > SIZE_MAX / per) return cort_error_oom();
    void *scratch = cort_kernel_scratch(ctx, tasks * per);
    if (!scratch) return cort_error_oom();
    topk_job j = { x, vals, idxs->data, n, inner, (size_t)k, cort_attr_int(ctx->node, "largest", 1) != 0,
                   scratch, per, grain };
    cort_parallel_for(ctx->pool, rows, grain, topk_task, &j);
    cort_kernel_scratch_free(ctx, scratch);
    return NULL;
}

static cort_status *topk_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0);
    cort_type elem = x ? x->elem : CORT_TYPE_UNDEFINED;
    if (elem) cort_tinfo_tensor(&ctx->outputs[0], elem);
    if (ctx->n_outputs > 1) cort_tinfo_tensor(&ctx->outputs[1], CORT_TYPE_INT64);
    if (!x || x->rank < 0) return NULL;
    size_t axis;
    CORT_TRY(rd_axis(ctx->node, cort_attr_int(ctx->node, "axis", -1), (size_t)x->rank, "attribute 'axis'", &axis));
    int64_t od[CORT_MAX_RANK];
    memcpy(od, x->dims, (size_t)x->rank * sizeof *od);
    int64_t kb[1];
    size_t nk;
    if (ctx->opset < 10) od[axis] = cort_attr_int(ctx->node, "k", -1);
    else if (rd_const_ints(rd_tinput(ctx, 1), kb, 1, &nk) && nk == 1) od[axis] = kb[0];
    else od[axis] = -1;
    if (elem) cort_tinfo_tensor_shape(&ctx->outputs[0], elem, od, x->rank);
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_INT64, od, x->rank);
    return NULL;
}

const cort_op_def rd_op_topk = { .name = "TopK", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = topk_infer, .run = topk_run };
