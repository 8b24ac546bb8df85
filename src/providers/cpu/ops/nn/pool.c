/* MaxPool, AveragePool, LpPool, their Global* forms, MaxRoiPool and MaxUnpool. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "pool.h"
#include "../../kernels/isa_config.h"

typedef struct pool_state {
    nn_window      w;
    nn_pool_params p;
} pool_state;

static cort_status *pool_init_kind(const cort_node *node, void **state, int kind) {
    pool_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = nn_window_parse(node, 1, &s->w);
    if (st) { cort_free(s); return st; }
    s->p.kind = kind;
    s->p.count_include_pad = cort_attr_int(node, "count_include_pad", 0) != 0;
    s->p.p = cort_attr_float(node, "p", 2.0f);
    s->p.storage_order = cort_attr_int(node, "storage_order", 0) != 0;
    if (kind == NN_POOL_LP && !(s->p.p > 0.0f)) {
        st = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'p' = %g, expected > 0", (double)s->p.p);
        cort_free(s);
        return st;
    }
    *state = s;
    return NULL;
}
static cort_status *maxpool_init(const cort_node *node, void **state) { return pool_init_kind(node, state, NN_POOL_MAX); }
static cort_status *avgpool_init(const cort_node *node, void **state) { return pool_init_kind(node, state, NN_POOL_AVG); }
static cort_status *lppool_init(const cort_node *node, void **state) { return pool_init_kind(node, state, NN_POOL_LP); }

static cort_status *pool_infer(cort_infer_ctx *ctx) {
    const pool_state *s = ctx->state;
    const cort_tinfo *x = &ctx->inputs[0];
    nn_infer_type(ctx, 0, x->elem);
    nn_infer_type(ctx, 1, CORT_TYPE_INT64);
    if (x->rank < 3 || x->rank - 2 > NN_MAX_SPATIAL) return NULL;
    nn_geom g;
    cort_status *st = nn_window_geom(ctx->node, &s->w, x->rank - 2, x->dims + 2, NULL, 1, &g);
    if (st) { cort_status_free(st); return NULL; }
    int64_t dims[NN_MAX_SPATIAL + 2] = { x->dims[0], x->dims[1] };
    nn_geom_out_dims(&g, dims + 2);
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, x->rank);
    if (ctx->n_outputs > 1) cort_tinfo_tensor_shape(&ctx->outputs[1], CORT_TYPE_INT64, dims, x->rank);
    return NULL;
}

static cort_status *pool_run(cort_kernel_ctx *ctx) {
    const pool_state *s = ctx->state;
    CORT_TRY(nn_check_input(ctx, 0, "X", 3, -1));
    const cort_value *x = ctx->inputs[0];
    nn_geom g;
    CORT_TRY(nn_window_geom(ctx->node, &s->w, (int)x->rank - 2, x->shape + 2, NULL, 1, &g));
    int64_t dims[NN_MAX_SPATIAL + 2] = { x->shape[0], x->shape[1] };
    nn_geom_out_dims(&g, dims + 2);
    cort_value *y, *ind = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, x->rank, &y));
    if (s->p.kind == NN_POOL_MAX && ctx->n_outputs > 1 && ctx->node->out_slot[1] >= 0)
        CORT_TRY(cort_kernel_output(ctx, 1, CORT_TYPE_INT64, dims, x->rank, &ind));
    if (s->p.kind == NN_POOL_MAX && !ind && (x->type == CORT_TYPE_UINT8 || x->type == CORT_TYPE_INT8) &&
        nn_pool_max8(ctx->pool, &g, (size_t)(x->shape[0] * x->shape[1]), x->type == CORT_TYPE_INT8, x->data, y->data))
        return NULL;
    nn_fbuf fx = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        nn_pool_f32(ctx->pool, &s->p, &g, (size_t)(x->shape[0] * x->shape[1]), fx.p, fy.p, ind ? ind->data : NULL);
        nn_fbuf_commit(&fy, y);
    }
    nn_fbuf_free(&fx);
    nn_fbuf_free(&fy);
    return st;
}

/* ---- global pools ---- */
typedef struct gpool_job { int kind; float p; size_t plane; const float *x; float *y; } gpool_job;

static void gpool_run(void *arg, size_t begin, size_t end) {
    const gpool_job *j = arg;
    const nn_isa_config *isa = nn_isa();
    const int vec = j->plane > 0 && isa->pool_max && isa->pool_sum;
    for (size_t c = begin; c < end; c++) {
        const float *x = j->x + c * j->plane;
        float r;
        if (vec && j->kind != NN_POOL_LP) {
            j->y[c] = j->kind == NN_POOL_MAX ? isa->pool_max(x, j->plane) : isa->pool_sum(x, j->plane) / (float)j->plane;
            continue;
        }
        if (j->kind == NN_POOL_MAX) {
            r = -FLT_MAX;
            for (size_t i = 0; i < j->plane; i++) if (x[i] > r || i == 0) r = x[i];
        } else if (j->kind == NN_POOL_AVG) {
            /* 16 independent float lanes (vectorized, no serial add chain), summed in double */
            float lane[16] = { 0 };
            size_t i = 0;
            for (; i + 16 <= j->plane; i += 16)
                for (size_t l = 0; l < 16; l++) lane[l] += x[i + l];
            double acc = 0.0;
            for (; i < j->plane; i++) acc += x[i];
            for (size_t l = 0; l < 16; l++) acc += lane[l];
            r = j->plane ? (float)(acc / (double)j->plane) : 0.0f;
        } else {
            double acc = 0.0;
            for (size_t i = 0; i < j->plane; i++) acc += pow(fabs((double)x[i]), j->p);
            r = (float)pow(acc, 1.0 / j->p);
        }
        j->y[c] = r;
    }
}

static cort_status *gpool_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = &ctx->inputs[0];
    nn_infer_type(ctx, 0, x->elem);
    if (x->rank < 2) return NULL;
    int64_t dims[CORT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : 1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, x->rank);
    return NULL;
}

static cort_status *gpool_run_kind(cort_kernel_ctx *ctx, int kind) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 2, -1));
    const cort_value *x = ctx->inputs[0];
    int64_t dims[CORT_MAX_RANK];
    for (size_t i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->shape[i] : 1;
    size_t planes = (size_t)(x->shape[0] * x->shape[1]);
    if (kind == NN_POOL_MAX && x->count == 0 && planes) {
        char buf[160];
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s: empty window",
                               nn_shape(x, buf, sizeof buf));
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, x->rank, &y));
    nn_fbuf fx = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_out(y, &fy);
    if (!st) {
        gpool_job j = { kind, cort_attr_float(ctx->node, "p", 2.0f), planes ? x->count / planes : 0, fx.p, fy.p };
        cort_parallel_for(x->count < 65536 ? NULL : ctx->pool, planes, 1, gpool_run, &j);
        nn_fbuf_commit(&fy, y);
    }
    nn_fbuf_free(&fx);
    nn_fbuf_free(&fy);
    return st;
}
static cort_status *gmaxpool_run(cort_kernel_ctx *ctx) { return gpool_run_kind(ctx, NN_POOL_MAX); }
static cort_status *gavgpool_run(cort_kernel_ctx *ctx) { return gpool_run_kind(ctx, NN_POOL_AVG); }
static cort_status *glppool_run(cort_kernel_ctx *ctx) { return gpool_run_kind(ctx, NN_POOL_LP); }

/* ---- MaxRoiPool (Caffe semantics, as ONNX Runtime) ---- */
static cort_status *roipool_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = &ctx->inputs[0], *r = &ctx->inputs[1];
    nn_infer_type(ctx, 0, x->elem);
    const int64_t *ps;
    if (cort_attr_ints(ctx->node, "pooled_shape", &ps) != 2 || x->rank != 4) return NULL;
    int64_t dims[4] = { r->rank == 2 ? r->dims[0] : -1, x->dims[1], ps[0], ps[1] };
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, 4);
    return NULL;
}

static cort_status *roipool_run(cort_kernel_ctx *ctx) {
    CORT_TRY(nn_check_input(ctx, 0, "X", 4, 4));
    CORT_TRY(nn_check_input(ctx, 1, "rois", 2, 2));
    const cort_value *x = ctx->inputs[0], *rois = ctx->inputs[1];
    const int64_t *ps;
    char buf[160];
    if (cort_attr_ints(ctx->node, "pooled_shape", &ps) != 2 || ps[0] < 1 || ps[1] < 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'pooled_shape' must be 2 positive ints");
    if (rois->shape[1] != 5)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'rois' has shape %s, expected [*,5]",
                               nn_shape(rois, buf, sizeof buf));
    float scale = cort_attr_float(ctx->node, "spatial_scale", 1.0f);
    const int64_t R = rois->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], PH = ps[0], PW = ps[1];
    int64_t dims[4] = { R, C, PH, PW };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, 4, &y));
    nn_fbuf fx = { 0 }, fr = { 0 }, fy = { 0 };
    cort_status *st = nn_fbuf_in(x, &fx);
    if (!st) st = nn_fbuf_in(rois, &fr);
    if (!st) st = nn_fbuf_out(y, &fy);
    for (int64_t r = 0; r < R && !st; r++) {
        const float *roi = fr.p + r * 5;
        int64_t b = (int64_t)roi[0];
        if (b < 0 || b >= x->shape[0]) {
            st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'rois'[%lld] has batch index %g, "
                                 "X has %lld images", (long long)r, (double)roi[0], (long long)x->shape[0]);
            break;
        }
        int64_t sw = (int64_t)roundf(roi[1] * scale), sh = (int64_t)roundf(roi[2] * scale);
        int64_t ew = (int64_t)roundf(roi[3] * scale), eh = (int64_t)roundf(roi[4] * scale);
        int64_t rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1, rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1;
        float bh = (float)rh / (float)PH, bw = (float)rw / (float)PW;
        for (int64_t c = 0; c < C; c++) {
            const float *xp = fx.p + (b * C + c) * H * W;
            float *yp = fy.p + (r * C + c) * PH * PW;
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    int64_t hs = (int64_t)floorf((float)ph * bh) + sh, he = (int64_t)ceilf((float)(ph + 1) * bh) + sh;
                    int64_t ws = (int64_t)floorf((float)pw * bw) + sw, we = (int64_t)ceilf((float)(pw + 1) * bw) + sw;
                    hs = hs < 0 ? 0 : hs > H ? H : hs; he = he < 0 ? 0 : he > H ? H : he;
                    ws = ws < 0 ? 0 : ws > W ? W : ws; we = we < 0 ? 0 : we > W ? W : we;
                    float m = (he <= hs || we <= ws) ? 0.0f : -FLT_MAX;
                    for (int64_t h = hs; h < he; h++)
                        for (int64_t w = ws; w < we; w++) if (xp[h * W + w] > m) m = xp[h * W + w];
                    yp[ph * PW + pw] = m;
                }
        }
    }
    if (!st) nn_fbuf_commit(&fy, y);
    nn_fbuf_free(&fx); nn_fbuf_free(&fr); nn_fbuf_free(&fy);
    return st;
}

/* ---- MaxUnpool ---- */
static cort_status *unpool_init(const cort_node *node, void **state) {
    pool_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_status *st = nn_window_parse(node, 1, &s->w);
    if (st) { cort_free(s); return st; }
    *state = s;
    return NULL;
}

static void unpool_dims(const pool_state *s, int rank, const int64_t *xd, int64_t *dims) {
    dims[0] = xd[0];
    dims[1] = xd[1];
    for (int i = 0; i < rank - 2; i++)
        dims[2 + i] = xd[2 + i] < 0 ? -1 : (xd[2 + i] - 1) * s->w.strides[i] + s->w.kernel[i] - s->w.pads[i] -
                                           s->w.pads[rank - 2 + i];
}

static cort_status *unpool_infer(cort_infer_ctx *ctx) {
    const pool_state *s = ctx->state;
    const cort_tinfo *x = &ctx->inputs[0];
    nn_infer_type(ctx, 0, x->elem);
    if (nn_infer_has(ctx, 2)) {
        const cort_value *os = ctx->inputs[2].value;
        if (os && os->type == CORT_TYPE_INT64 && os->rank == 1 && os->count <= CORT_MAX_RANK)
            cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, os->data, (int)os->count);
        return NULL;
    }
    if (x->rank < 3 || x->rank - 2 > NN_MAX_SPATIAL || (s->w.nd && s->w.nd != x->rank - 2)) return NULL;
    int64_t dims[NN_MAX_SPATIAL + 2];
    unpool_dims(s, x->rank, x->dims, dims);
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, x->rank);
    return NULL;
}

static cort_status *unpool_run(cort_kernel_ctx *ctx) {
    const pool_state *s = ctx->state;
    CORT_TRY(nn_check_input(ctx, 0, "X", 3, -1));
    const cort_value *x = ctx->inputs[0];
    CORT_TRY(nn_check_input(ctx, 1, "I", (int)x->rank, (int)x->rank));
    const cort_value *ind = ctx->inputs[1], *os = nn_opt_input(ctx, 2);
    char bx[160], bi[160];
    if (ind->type != CORT_TYPE_INT64 || memcmp(ind->shape, x->shape, x->rank * sizeof(int64_t)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'I' is %s%s, expected int64%s",
                               cort_type_name(ind->type), nn_shape(ind, bi, sizeof bi), nn_shape(x, bx, sizeof bx));
    if (s->w.nd != (int)x->rank - 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "kernel_shape has %d dims, input 'X' %s",
                               s->w.nd, nn_shape(x, bx, sizeof bx));
    int64_t dims[CORT_MAX_RANK];
    size_t rank = x->rank;
    if (os) {
        if (os->rank != 1 || os->count != x->rank || os->type != CORT_TYPE_INT64)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 2 'output_shape' is %s%s, expected int64[%zu]", cort_type_name(os->type),
                                   nn_shape(os, bi, sizeof bi), x->rank);
        memcpy(dims, os->data, rank * sizeof(int64_t));
    } else {
        unpool_dims(s, (int)rank, x->shape, dims);
    }
    for (size_t i = 0; i < rank; i++)
        if (dims[i] < 0)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output dimension %zu is %lld", i,
                                   (long long)dims[i]);
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, rank, &y));
    size_t es = cort_type_size(x->type);
    memset(y->data, 0, y->bytes);
    /* Indices address the unpooled tensor of the natural shape (what MaxPool saw); with an explicit
     * output_shape each element keeps its spatial coordinates inside the larger output. */
    int64_t nat[CORT_MAX_RANK];
    unpool_dims(s, (int)rank, x->shape, nat);
    int64_t nat_plane = 1, out_plane = 1;
    for (size_t d = 2; d < rank; d++) { nat_plane *= nat[d]; out_plane *= dims[d]; }
    const int64_t *id = ind->data;
    for (size_t i = 0; i < x->count; i++) {
        int64_t at = -1;
        if (id[i] >= 0 && nat_plane > 0) {
            int64_t plane = id[i] / nat_plane, rem = id[i] % nat_plane, off = 0, mul = 1;
            int ok = plane < dims[0] * dims[1];
            for (size_t d = rank; d-- > 2 && ok;) {
                int64_t c = rem % nat[d];
                rem /= nat[d];
                if (c >= dims[d]) ok = 0;
                off += c * mul;
                mul *= dims[d];
            }
            if (ok) at = plane * out_plane + off;
        }
        if (at < 0 || (size_t)at >= y->count)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 1 'I'[%zu] = %lld is out of range for the unpooled shape", i,
                                   (long long)id[i]);
        memcpy((char *)y->data + (size_t)at * es, (const char *)x->data + i * es, es);
    }
    return NULL;
}

#define NN_POOL_TYPES (CORT_TMASK_FLOATS | CORT_TBIT(CORT_TYPE_UINT8) | CORT_TBIT(CORT_TYPE_INT8))
const cort_op_def nn_op_max_pool = {
    .name = "MaxPool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = NN_POOL_TYPES, .type_input = 0,
    .init = maxpool_init, .free_state = cort_free, .infer = pool_infer, .run = pool_run };
const cort_op_def nn_op_average_pool = {
    .name = "AveragePool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .init = avgpool_init, .free_state = cort_free, .infer = pool_infer, .run = pool_run };
const cort_op_def nn_op_lp_pool = {
    .name = "LpPool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .init = lppool_init, .free_state = cort_free, .infer = pool_infer, .run = pool_run };
const cort_op_def nn_op_global_max_pool = {
    .name = "GlobalMaxPool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = gpool_infer, .run = gmaxpool_run };
const cort_op_def nn_op_global_average_pool = {
    .name = "GlobalAveragePool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = gpool_infer, .run = gavgpool_run };
const cort_op_def nn_op_global_lp_pool = {
    .name = "GlobalLpPool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = gpool_infer, .run = glppool_run };
const cort_op_def nn_op_max_roi_pool = {
    .name = "MaxRoiPool", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .infer = roipool_infer, .run = roipool_run };
const cort_op_def nn_op_max_unpool = {
    .name = "MaxUnpool", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS,
    .type_input = 0, .init = unpool_init, .free_state = cort_free, .infer = unpool_infer, .run = unpool_run };
