/* Col2Im (opset 18): scatters the columns [N, C*prod(block), L] of an N-D unfold back into an
 * image [N, C, *image_shape], summing where blocks overlap (PyTorch's fold). Floats accumulate in
 * double, integers in uint64 (wrapping like the C types). */
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

#define C2I_MAX_ND 8

typedef struct c2i_geom {
    size_t nd;
    int64_t img[C2I_MAX_ND], blk[C2I_MAX_ND], dil[C2I_MAX_ND], pad[C2I_MAX_ND], str[C2I_MAX_ND], nblk[C2I_MAX_ND];
    size_t kvol, lvol, ivol;
} c2i_geom;

static cort_status *read_vec(const cort_node *node, const cort_value *t, size_t index, const char *name, int64_t *buf, size_t *n) {
    if (!t) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is required", index, name);
    if (t->rank != 1) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be 1-D, has rank %zu", index, name, t->rank);
    return rd_read_ints(node, t, index, name, buf, C2I_MAX_ND, n);
}

static cort_status *c2i_geometry(const cort_node *node, const cort_value *x, const cort_value *is, const cort_value *bs, c2i_geom *g) {
    size_t ni, nb;
    if (is && is->count > C2I_MAX_ND)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "input 1 'image_shape' has %zu dims, at most %d supported", is->count, C2I_MAX_ND);
    if (bs && bs->count > C2I_MAX_ND)
        return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED, "input 2 'block_shape' has %zu dims, at most %d supported", bs->count, C2I_MAX_ND);
    CORT_TRY(read_vec(node, is, 1, "image_shape", g->img, &ni));
    CORT_TRY(read_vec(node, bs, 2, "block_shape", g->blk, &nb));
    if (ni != nb || ni < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'image_shape' has %zu values but input 2 'block_shape' %zu", ni, nb);
    g->nd = ni;
    const int64_t *dil, *pads, *str;
    size_t nd_ = cort_attr_ints(node, "dilations", &dil), np_ = cort_attr_ints(node, "pads", &pads), ns = cort_attr_ints(node, "strides", &str);
    if ((nd_ && nd_ != ni) || (np_ && np_ != 2 * ni) || (ns && ns != ni))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attributes dilations/pads/strides have %zu/%zu/%zu values for %zu spatial dims", nd_, np_, ns, ni);
    int64_t kv = 1, lv = 1, iv = 1;
    for (size_t d = 0; d < ni; d++) {
        g->dil[d] = nd_ ? dil[d] : 1;
        g->str[d] = ns ? str[d] : 1;
        int64_t pb = np_ ? pads[d] : 0, pe = np_ ? pads[d + ni] : 0;
        g->pad[d] = pb;
        if (g->img[d] < 0 || g->blk[d] < 1 || g->dil[d] < 1 || g->str[d] < 1 || pb < 0 || pe < 0 || g->img[d] > INT32_MAX ||
            g->blk[d] > INT32_MAX || g->dil[d] > INT32_MAX || g->str[d] > INT32_MAX || pb > INT32_MAX || pe > INT32_MAX)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                   "spatial dim %zu: image %lld, block %lld, dilation %lld, stride %lld, pads %lld/%lld out of range", d,
                                   (long long)g->img[d], (long long)g->blk[d], (long long)g->dil[d], (long long)g->str[d], (long long)pb, (long long)pe);
        int64_t span = g->dil[d] * (g->blk[d] - 1) + 1, ext = g->img[d] + pb + pe;
        if (ext < span)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "spatial dim %zu: dilated block %lld larger than padded image %lld", d,
                                   (long long)span, (long long)ext);
        g->nblk[d] = (ext - span) / g->str[d] + 1;
        if (cort_mul_i64_ovf(kv, g->blk[d], &kv) || cort_mul_i64_ovf(lv, g->nblk[d], &lv) || cort_mul_i64_ovf(iv, g->img[d], &iv))
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "block or image volume overflows");
    }
    g->kvol = (size_t)kv; g->lvol = (size_t)lv; g->ivol = (size_t)iv;
    if (x->rank != 3) return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' must be 3-D [N, C*prod(block), L], has rank %zu", x->rank);
    if ((size_t)x->shape[1] % g->kvol)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' dim 1 (%lld) is not a multiple of the block volume %zu",
                               (long long)x->shape[1], g->kvol);
    if ((size_t)x->shape[2] != g->lvol)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' dim 2 (%lld) must be the number of blocks %zu",
                               (long long)x->shape[2], g->lvol);
    return NULL;
}

typedef struct c2i_job {
    const c2i_geom *g;
    const cort_value *x;
    cort_value *y;
    double *acc;       /* float types: one image plane per (n, c) task */
} c2i_job;

/* One (n, c) plane per task: planes are disjoint, so tasks never write the same element. */
static void c2i_task(void *arg, size_t begin, size_t end) {
    const c2i_job *j = arg;
    const c2i_geom *g = j->g;
    cort_type t = j->x->type;
    int isf = cort_type_is_float(t);
    for (size_t nc = begin; nc < end; nc++) {
        double *acc = j->acc + nc * g->ivol;
        uint64_t *iacc = (uint64_t *)acc;
        memset(acc, 0, g->ivol * sizeof *acc);
        for (size_t k = 0; k < g->kvol; k++) {
            int64_t koff[C2I_MAX_ND];
            size_t r = k;
            for (size_t d = g->nd; d-- > 0;) { koff[d] = (int64_t)(r % (size_t)g->blk[d]) * g->dil[d]; r /= (size_t)g->blk[d]; }
            size_t src = (nc * g->kvol + k) * g->lvol;
            for (size_t l = 0; l < g->lvol; l++) {
                size_t rl = l, dst = 0, mul = 1;
                int inside = 1;
                for (size_t d = g->nd; d-- > 0;) {
                    int64_t bi = (int64_t)(rl % (size_t)g->nblk[d]);
                    rl /= (size_t)g->nblk[d];
                    int64_t pos = bi * g->str[d] - g->pad[d] + koff[d];
                    if (pos < 0 || pos >= g->img[d]) { inside = 0; break; }
                    dst += (size_t)pos * mul;
                    mul *= (size_t)g->img[d];
                }
                if (!inside) continue;
                if (isf) acc[dst] += cort_load_f64(j->x->data, t, src + l);
                else iacc[dst] += (uint64_t)cort_load_i64(j->x->data, t, src + l);
            }
        }
        for (size_t i = 0; i < g->ivol; i++) {
            if (isf) cort_store_f64(j->y->data, t, nc * g->ivol + i, acc[i]);
            else cort_store_i64(j->y->data, t, nc * g->ivol + i, (int64_t)iacc[i]);
        }
    }
}

static cort_status *col2im_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || !(cort_type_is_float(x->type) || cort_type_is_int(x->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' must be a numeric tensor");
    c2i_geom g;
    CORT_TRY(c2i_geometry(ctx->node, x, rd_input(ctx, 1), rd_input(ctx, 2), &g));
    size_t n = (size_t)x->shape[0], c = (size_t)x->shape[1] / g.kvol;
    int64_t dims[2 + C2I_MAX_ND] = { (int64_t)n, (int64_t)c };
    for (size_t d = 0; d < g.nd; d++) dims[2 + d] = g.img[d];
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, 2 + g.nd, &y));
    size_t planes = n * c, bytes;
    if (!planes || !g.ivol) return NULL;
    if (cort_mul_size_ovf(planes * g.ivol, sizeof(double), &bytes))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output too large");
    double *acc = cort_kernel_scratch(ctx, bytes);
    if (!acc) return cort_node_error(ctx->node, CORT_ERROR_OUT_OF_MEMORY, "no memory for %zu bytes of accumulators", bytes);
    c2i_job j = { &g, x, y, acc };
    cort_parallel_for(ctx->pool, planes, 1, c2i_task, &j);
    cort_kernel_scratch_free(ctx, acc);
    return NULL;
}

static cort_status *col2im_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0), *is = rd_tinput(ctx, 1), *bs = rd_tinput(ctx, 2);
    if (!x) return NULL;
    int64_t img[C2I_MAX_ND], blk[C2I_MAX_ND];
    size_t ni = 0, nb = 0;
    int known_img = is && rd_const_ints(is, img, C2I_MAX_ND, &ni);
    int known_blk = bs && rd_const_ints(bs, blk, C2I_MAX_ND, &nb);
    if (!known_img) { cort_tinfo_tensor(&ctx->outputs[0], x->elem); return NULL; }
    int64_t dims[2 + C2I_MAX_ND] = { x->rank == 3 ? x->dims[0] : -1, -1 };
    if (x->rank == 3 && x->dims[1] >= 0 && known_blk && nb == ni) {
        int64_t kv = 1;
        for (size_t d = 0; d < nb; d++) kv = blk[d] > 0 ? cort_dim_mul(kv, blk[d]) : -1;
        if (kv > 0) dims[1] = x->dims[1] / kv;
    }
    for (size_t d = 0; d < ni; d++) dims[2 + d] = img[d];
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, (int)(2 + ni));
    return NULL;
}

const cort_op_def img_op_col2im = { .name = "Col2Im", .domain = "", .min_opset = 18, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = col2im_infer, .run = col2im_run };
