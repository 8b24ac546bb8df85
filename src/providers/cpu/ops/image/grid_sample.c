/* GridSample (opset 16, 4-D): samples X [N,C,H,W] at grid [N,Ho,Wo,2] (x, y normalized to [-1, 1]),
 * with bilinear / nearest / bicubic modes and zeros / border / reflection padding, following the
 * onnxruntime kernel (reflection folds about [-0.5, size-0.5], or [0, size-1] with align_corners). */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct gs_job {
    const cort_value *x, *grid;
    cort_value *y;
    size_t C, H, W, Ho, Wo;
    int mode, pad, align;
} gs_job;

static double gs_reflect(double v, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return lo;
    if (v < lo) {
        double d = lo - v;
        double n = floor(d / range), r = d - n * range;
        return fmod(n, 2) == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        double d = v - hi;
        double n = floor(d / range), r = d - n * range;
        return fmod(n, 2) == 0 ? hi - r : lo + r;
    }
    return v;
}

static double gs_pixel(const gs_job *j, size_t base, int64_t r, int64_t c, const double *border) {
    int64_t H = (int64_t)j->H, W = (int64_t)j->W;
    if (j->pad == GS_ZEROS) {
        if (r < 0 || r >= H || c < 0 || c >= W) return 0;
    } else if (j->pad == GS_BORDER) {
        r = r < 0 ? 0 : r >= H ? H - 1 : r;
        c = c < 0 ? 0 : c >= W ? W - 1 : c;
    } else {
        c = (int64_t)gs_reflect((double)c, border[0], border[2]);
        r = (int64_t)gs_reflect((double)r, border[1], border[3]);
        r = r < 0 ? 0 : r >= H ? H - 1 : r;
        c = c < 0 ? 0 : c >= W ? W - 1 : c;
    }
    return cort_load_f64(j->x->data, j->x->type, base + (size_t)r * j->W + (size_t)c);
}

static void cubic_coeffs(double t, double *w) {
    const double A = -0.75;
    double x = fabs(t);
    w[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    w[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    w[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

static double denorm(double v, size_t size, int align) {
    return align ? (v + 1) / 2 * (double)(size - 1) : ((v + 1) * (double)size - 1) / 2;
}

static void gs_task(void *arg, size_t begin, size_t end) {
    const gs_job *j = arg;
    double xmin = j->align ? 0 : -0.5, xmax = j->align ? (double)j->W - 1 : (double)j->W - 0.5;
    double ymin = j->align ? 0 : -0.5, ymax = j->align ? (double)j->H - 1 : (double)j->H - 0.5;
    double border[4] = { xmin, ymin, xmax, ymax };
    for (size_t it = begin; it < end; it++) {   /* it = (n, oy, ox) */
        size_t n = it / (j->Ho * j->Wo), p = it % (j->Ho * j->Wo);
        double gx = cort_load_f64(j->grid->data, j->grid->type, (n * j->Ho * j->Wo + p) * 2);
        double gy = cort_load_f64(j->grid->data, j->grid->type, (n * j->Ho * j->Wo + p) * 2 + 1);
        double x = denorm(gx, j->W, j->align), y = denorm(gy, j->H, j->align);
        if (j->mode == GS_NEAREST) { x = nearbyint(x); y = nearbyint(y); }
        if (x < xmin || x > xmax || y < ymin || y > ymax) {
            if (j->pad == GS_BORDER) {
                x = x < 0 ? 0 : x > (double)j->W - 1 ? (double)j->W - 1 : x;
                y = y < 0 ? 0 : y > (double)j->H - 1 ? (double)j->H - 1 : y;
            } else if (j->pad == GS_REFLECTION) {
                x = gs_reflect(x, xmin, xmax);
                y = gs_reflect(y, ymin, ymax);
            }
        }
        /* non-finite or absurd coordinates sample nothing rather than overflow the index math */
        int finite = fabs(x) < 1e15 && fabs(y) < 1e15;
        for (size_t c = 0; c < j->C; c++) {
            size_t base = (n * j->C + c) * j->H * j->W;
            double v = 0;
            if (!finite) v = 0;
            else if (j->mode == GS_NEAREST) {
                v = gs_pixel(j, base, (int64_t)y, (int64_t)x, border);
            } else if (j->mode == GS_BILINEAR) {
                double x1 = floor(x), y1 = floor(y), x2 = x1 + 1, y2 = y1 + 1;
                double p11 = gs_pixel(j, base, (int64_t)y1, (int64_t)x1, border);
                double p12 = gs_pixel(j, base, (int64_t)y1, (int64_t)x2, border);
                double p21 = gs_pixel(j, base, (int64_t)y2, (int64_t)x1, border);
                double p22 = gs_pixel(j, base, (int64_t)y2, (int64_t)x2, border);
                double dx2 = x2 - x, dx1 = x - x1, dy2 = y2 - y, dy1 = y - y1;
                v = dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22);
            } else {
                double x0 = floor(x) - 1, y0 = floor(y) - 1, wx[4], wy[4];
                cubic_coeffs(x - x0 - 1, wx);
                cubic_coeffs(y - y0 - 1, wy);
                for (int h = 0; h < 4; h++) {
                    double row = 0;
                    for (int w = 0; w < 4; w++) row += wx[w] * gs_pixel(j, base, (int64_t)y0 + h, (int64_t)x0 + w, border);
                    v += wy[h] * row;
                }
            }
            cort_store_f64(j->y->data, j->y->type, (n * j->C + c) * j->Ho * j->Wo + p, v);
        }
    }
}

static cort_status *gs_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *g = rd_input(ctx, 1);
    char s1[128], s2[128];
    if (!x || !g || x->kind != CORT_VKIND_TENSOR || g->kind != CORT_VKIND_TENSOR || !cort_type_is_float(x->type) ||
        !cort_type_is_float(g->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 0 'X' and 1 'grid' must be float tensors");
    if (x->rank != 4 || g->rank != 4 || g->shape[0] != x->shape[0] || g->shape[3] != 2)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s and 1 'grid' %s, expected [N,C,H,W] and [N,Ho,Wo,2]",
                               rd_shape_str(x, s1, sizeof s1), rd_shape_str(g, s2, sizeof s2));
    static const char *const modes[] = { "bilinear", "nearest", "bicubic" };
    static const char *const pads[] = { "zeros", "border", "reflection" };
    const char *m = cort_attr_str(ctx->node, "mode", "bilinear"), *pd = cort_attr_str(ctx->node, "padding_mode", "zeros");
    int mode = -1, pad = -1;
    for (int i = 0; i < 3; i++) { if (!strcmp(m, modes[i])) mode = i; if (!strcmp(pd, pads[i])) pad = i; }
    if (!strcmp(m, "linear")) mode = GS_BILINEAR;     /* opset 20 spelling */
    if (!strcmp(m, "cubic")) mode = GS_BICUBIC;
    if (mode < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'mode' has unsupported value '%s'", m);
    if (pad < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'padding_mode' has unsupported value '%s'", pd);
    int64_t od[4] = { x->shape[0], x->shape[1], g->shape[1], g->shape[2] };
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, od, 4, &y));
    if (!y->count) return NULL;
    if (!x->shape[2] || !x->shape[3]) {
        for (size_t i = 0; i < y->count; i++) cort_store_f64(y->data, y->type, i, 0);
        return NULL;
    }
    gs_job j = { x, g, y, (size_t)x->shape[1], (size_t)x->shape[2], (size_t)x->shape[3], (size_t)g->shape[1],
                 (size_t)g->shape[2], mode, pad, cort_attr_int(ctx->node, "align_corners", 0) != 0 };
    cort_parallel_for(ctx->pool, (size_t)x->shape[0] * j.Ho * j.Wo, 256 / (j.C + 1) + 1, gs_task, &j);
    return NULL;
}

static cort_status *gs_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0), *g = rd_tinput(ctx, 1);
    if (!x) return NULL;
    int64_t d[4] = { x->rank == 4 ? x->dims[0] : -1, x->rank == 4 ? x->dims[1] : -1,
                     g && g->rank == 4 ? g->dims[1] : -1, g && g->rank == 4 ? g->dims[2] : -1 };
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, d, 4);
    return NULL;
}

const cort_op_def rd_op_grid_sample = { .name = "GridSample", .domain = "", .min_opset = 16, .max_opset = 18,
    .types = CORT_TMASK_FLOATS, .infer = gs_infer, .run = gs_run };
