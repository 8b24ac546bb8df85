/* RoiAlign (opsets 10, 16), following the onnxruntime kernel: each output bin averages (or takes
 * the max of) roi_bin_grid_h x roi_bin_grid_w bilinear samples. Opset 10 and
 * coordinate_transformation_mode = output_half_pixel use no half-pixel offset and a minimum ROI
 * size of 1; half_pixel (the opset 16 default) shifts by -0.5. In max mode each sample contributes
 * the largest of its four weighted corner values, as onnxruntime does. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct ra_sample { size_t p1, p2, p3, p4; double w1, w2, w3, w4; } ra_sample;

typedef struct ra_job {
    const cort_value *x, *rois, *bidx;
    cort_value *y;
    size_t C, H, W, oh, ow;
    int is_max, half_pixel;
    int64_t sampling_ratio;
    double spatial_scale;
} ra_job;

/* Bilinear sample at (y, x) as four (position, weight) pairs; all-zero outside [-1, H] x [-1, W]. */
static void ra_sample_at(double y, double x, size_t H, size_t W, ra_sample *s) {
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) { memset(s, 0, sizeof *s); return; }
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    size_t yl = (size_t)y, xl = (size_t)x, yh, xh;
    if (yl >= H - 1) { yh = yl = H - 1; y = (double)yl; } else yh = yl + 1;
    if (xl >= W - 1) { xh = xl = W - 1; x = (double)xl; } else xh = xl + 1;
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
    s->p1 = yl * W + xl; s->p2 = yl * W + xh; s->p3 = yh * W + xl; s->p4 = yh * W + xh;
    s->w1 = hy * hx; s->w2 = hy * lx; s->w3 = ly * hx; s->w4 = ly * lx;
}

static void ra_one(const ra_job *j, size_t n) {
    double r[4];
    for (int k = 0; k < 4; k++) r[k] = cort_load_f64(j->rois->data, j->rois->type, n * 4 + (size_t)k);
    size_t b = (size_t)cort_load_i64(j->bidx->data, j->bidx->type, n);
    double off = j->half_pixel ? 0.5 : 0;
    double sw = r[0] * j->spatial_scale - off, sh = r[1] * j->spatial_scale - off;
    double rw = r[2] * j->spatial_scale - off - sw, rh = r[3] * j->spatial_scale - off - sh;
    if (!j->half_pixel) { rw = fmax(rw, 1); rh = fmax(rh, 1); }
    double bh = rh / (double)j->oh, bw = rw / (double)j->ow;
    /* an adaptive grid is capped so that a huge or non-finite ROI cannot stall the run */
    double gh_d = j->sampling_ratio > 0 ? (double)j->sampling_ratio : ceil(rh / (double)j->oh);
    double gw_d = j->sampling_ratio > 0 ? (double)j->sampling_ratio : ceil(rw / (double)j->ow);
    size_t gh = !(gh_d >= 1) ? 1 : gh_d > 1024 ? 1024 : (size_t)gh_d;
    size_t gw = !(gw_d >= 1) ? 1 : gw_d > 1024 ? 1024 : (size_t)gw_d;
    double count = (double)(gh * gw);
    for (size_t ph = 0; ph < j->oh; ph++)
        for (size_t pw = 0; pw < j->ow; pw++)
            for (size_t c = 0; c < j->C; c++) {
                size_t base = (b * j->C + c) * j->H * j->W;
                double acc = 0;
                int first = 1;
                for (size_t iy = 0; iy < gh; iy++) {
                    double y = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                    for (size_t ix = 0; ix < gw; ix++) {
                        double x = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                        ra_sample s;
                        ra_sample_at(y, x, j->H, j->W, &s);
                        double v1 = cort_load_f64(j->x->data, j->x->type, base + s.p1) * s.w1;
                        double v2 = cort_load_f64(j->x->data, j->x->type, base + s.p2) * s.w2;
                        double v3 = cort_load_f64(j->x->data, j->x->type, base + s.p3) * s.w3;
                        double v4 = cort_load_f64(j->x->data, j->x->type, base + s.p4) * s.w4;
                        if (j->is_max) {
                            double m = fmax(fmax(v1, v2), fmax(v3, v4));
                            acc = first ? m : fmax(acc, m);
                            first = 0;
                        } else {
                            acc += v1 + v2 + v3 + v4;
                        }
                    }
                }
                if (!j->is_max) acc /= count;
                cort_store_f64(j->y->data, j->y->type, ((n * j->C + c) * j->oh + ph) * j->ow + pw, acc);
            }
}

static void ra_task(void *arg, size_t begin, size_t end) {
    for (size_t n = begin; n < end; n++) ra_one(arg, n);
}

static cort_status *ra_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *rois = rd_input(ctx, 1), *bi = rd_input(ctx, 2);
    char s1[128], s2[128], s3[128];
    if (!x || !rois || !bi || x->kind != CORT_VKIND_TENSOR || rois->kind != CORT_VKIND_TENSOR || bi->kind != CORT_VKIND_TENSOR ||
        !cort_type_is_float(x->type) || !cort_type_is_float(rois->type) || !cort_type_is_int(bi->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 'X', 'rois' (float) and 'batch_indices' (int) are required");
    if (x->rank != 4 || rois->rank != 2 || rois->shape[1] != 4 || bi->rank != 1 || bi->shape[0] != rois->shape[0])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'X' has shape %s, 1 'rois' %s, 2 'batch_indices' %s; expected [N,C,H,W], [R,4], [R]",
                               rd_shape_str(x, s1, sizeof s1), rd_shape_str(rois, s2, sizeof s2), rd_shape_str(bi, s3, sizeof s3));
    int64_t oh = cort_attr_int(ctx->node, "output_height", 1), ow = cort_attr_int(ctx->node, "output_width", 1);
    int64_t sr = cort_attr_int(ctx->node, "sampling_ratio", 0);
    if (oh <= 0 || ow <= 0 || sr < 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output_height %lld, output_width %lld and sampling_ratio %lld must be positive",
                               (long long)oh, (long long)ow, (long long)sr);
    const char *mode = cort_attr_str(ctx->node, "mode", "avg");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'mode' has unsupported value '%s'", mode);
    const char *ctm = cort_attr_str(ctx->node, "coordinate_transformation_mode", ctx->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'coordinate_transformation_mode' has unsupported value '%s'", ctm);
    size_t R = (size_t)rois->shape[0];
    for (size_t n = 0; n < R; n++) {
        int64_t b = cort_load_i64(bi->data, bi->type, n);
        if (b < 0 || b >= x->shape[0])
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'batch_indices' entry %zu is %lld, expected [0,%lld)",
                                   n, (long long)b, (long long)x->shape[0]);
    }
    int64_t od[4] = { (int64_t)R, x->shape[1], oh, ow };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, od, 4, &y));
    if (!y->count) return NULL;
    if (x->shape[2] == 0 || x->shape[3] == 0) {
        for (size_t i = 0; i < y->count; i++) cort_store_f64(y->data, y->type, i, 0);
        return NULL;
    }
    ra_job j = { x, rois, bi, y, (size_t)x->shape[1], (size_t)x->shape[2], (size_t)x->shape[3], (size_t)oh, (size_t)ow,
                 !strcmp(mode, "max"), !strcmp(ctm, "half_pixel"), sr, cort_attr_float(ctx->node, "spatial_scale", 1.0f) };
    cort_parallel_for(ctx->pool, R, 1, ra_task, &j);
    return NULL;
}

static cort_status *ra_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0), *rois = rd_tinput(ctx, 1);
    if (!x) return NULL;
    int64_t d[4] = { rois && rois->rank == 2 ? rois->dims[0] : -1, x->rank == 4 ? x->dims[1] : -1,
                     cort_attr_int(ctx->node, "output_height", 1), cort_attr_int(ctx->node, "output_width", 1) };
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, d, 4);
    return NULL;
}

const cort_op_def rd_op_roi_align = { .name = "RoiAlign", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = ra_infer, .run = ra_run };
