/* GridSample: samples X [N,C,D1..Dr] at grid [N,O1..Or,r] (coordinates normalized to [-1, 1], listed
 * innermost dimension first) with linear / nearest / cubic modes (opset 16 spells them bilinear and
 * bicubic and takes 4-D inputs only; opset 20 any r >= 1) and zeros / border / reflection padding.
 * Reflection folds about [-0.5, size-0.5], or [0, size-1] with align_corners. N-linear and N-cubic
 * interpolation are the tensor products of the 1-D weights, summed over 2^r or 4^r taps. Integer X
 * is interpolated in double and truncated toward zero when stored, as the spec's cast. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };
/* spatial dimensions: rank limit minus N and C */
#define GS_MAX_DIMS (CORT_MAX_RANK - 2)

typedef struct gs_job {
    const cort_value *x, *grid;
    cort_value *y;
    size_t C, r;
    size_t in[GS_MAX_DIMS];     /* D1..Dr */
    size_t in_plane;            /* product of in[] */
    size_t out_plane;           /* O1 * ... * Or */
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

/* Index along one dimension of size `size` for tap position i after padding, or -1 for a zero. */
static int64_t gs_index(const gs_job *j, int64_t i, int64_t size, double lo, double hi) {
    if (j->pad == GS_ZEROS) return i < 0 || i >= size ? -1 : i;
    if (j->pad == GS_REFLECTION) i = (int64_t)gs_reflect((double)i, lo, hi);
    return i < 0 ? 0 : i >= size ? size - 1 : i;
}

static void cubic_coeffs(double t, double *w) {
    const double A = -0.75;
    double x = fabs(t);
    w[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    w[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    w[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

static void gs_task(void *arg, size_t begin, size_t end) {
    const gs_job *j = arg;
    const size_t r = j->r;
    const int taps = j->mode == GS_NEAREST ? 1 : j->mode == GS_BILINEAR ? 2 : 4;
    double lo[GS_MAX_DIMS], hi[GS_MAX_DIMS];
    for (size_t d = 0; d < r; d++) {
        lo[d] = j->align ? 0 : -0.5;
        hi[d] = j->align ? (double)j->in[d] - 1 : (double)j->in[d] - 0.5;
    }
    size_t total = 1;   /* taps^r, at most 4^6 */
    for (size_t d = 0; d < r; d++) total *= (size_t)taps;
    for (size_t it = begin; it < end; it++) {   /* it = (n, output point) */
        size_t n = it / j->out_plane, p = it % j->out_plane;
        /* per dimension: tap indices into X (-1 = zero) and weights */
        int64_t idx[GS_MAX_DIMS][4];
        double w[GS_MAX_DIMS][4];
        int finite = 1;
        for (size_t d = 0; d < r && finite; d++) {
            const size_t size = j->in[d];
            double g = cort_load_f64(j->grid->data, j->grid->type, (n * j->out_plane + p) * r + (r - 1 - d));
            double x = j->align ? (g + 1) / 2 * (double)(size - 1) : ((g + 1) * (double)size - 1) / 2;
            if (j->mode == GS_NEAREST) x = nearbyint(x);
            if (x < lo[d] || x > hi[d]) {
                if (j->pad == GS_BORDER) x = x < 0 ? 0 : x > (double)size - 1 ? (double)size - 1 : x;
                else if (j->pad == GS_REFLECTION) x = gs_reflect(x, lo[d], hi[d]);
            }
            /* non-finite or absurd coordinates sample nothing rather than overflow the index math */
            if (!(fabs(x) < 1e15)) { finite = 0; break; }
            if (j->mode == GS_NEAREST) {
                idx[d][0] = gs_index(j, (int64_t)x, (int64_t)size, lo[d], hi[d]);
                w[d][0] = 1;
            } else if (j->mode == GS_BILINEAR) {
                double x0 = floor(x), t = x - x0;
                idx[d][0] = gs_index(j, (int64_t)x0, (int64_t)size, lo[d], hi[d]);
                idx[d][1] = gs_index(j, (int64_t)x0 + 1, (int64_t)size, lo[d], hi[d]);
                w[d][0] = 1 - t;
                w[d][1] = t;
            } else {
                double x0 = floor(x);
                cubic_coeffs(x - x0, w[d]);
                for (int t = 0; t < 4; t++) idx[d][t] = gs_index(j, (int64_t)x0 - 1 + t, (int64_t)size, lo[d], hi[d]);
            }
        }
        for (size_t c = 0; c < j->C; c++) {
            size_t base = (n * j->C + c) * j->in_plane;
            double v = 0;
            for (size_t k = 0; finite && k < total; k++) {
                /* tap k: digit d (base taps, last dimension fastest) picks dimension d's tap */
                size_t rem = k, off = 0;
                double wk = 1;
                int zero = 0;
                for (size_t dd = r; dd-- > 0;) {
                    int t = (int)(rem % (size_t)taps);
                    rem /= (size_t)taps;
                    if (idx[dd][t] < 0) { zero = 1; break; }
                    wk *= w[dd][t];
                }
                if (zero || wk == 0) continue;
                rem = k;
                size_t stride = 1;
                for (size_t dd = r; dd-- > 0;) {
                    int t = (int)(rem % (size_t)taps);
                    rem /= (size_t)taps;
                    off += (size_t)idx[dd][t] * stride;
                    stride *= j->in[dd];
                }
                v += wk * cort_load_f64(j->x->data, j->x->type, base + off);
            }
            cort_store_f64(j->y->data, j->y->type, (n * j->C + c) * j->out_plane + p, v);
        }
    }
}

static cort_status *gs_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0), *g = rd_input(ctx, 1);
    char s1[128], s2[128];
    if (!x || !g || x->kind != CORT_VKIND_TENSOR || g->kind != CORT_VKIND_TENSOR ||
        !(cort_type_is_float(x->type) || cort_type_is_int(x->type)) || !cort_type_is_float(g->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a numeric tensor and 1 "
                               "'grid' a float tensor");
    const int nd_any = ctx->opset >= 20;
    const size_t r = x->rank >= 2 ? x->rank - 2 : 0;
    if ((nd_any ? r < 1 : r != 2) || g->rank != x->rank || g->shape[0] != x->shape[0] || g->shape[g->rank - 1] != (int64_t)r)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s and 1 'grid' %s, expected "
                               "%s", rd_shape_str(x, s1, sizeof s1), rd_shape_str(g, s2, sizeof s2),
                               nd_any ? "[N,C,D1..Dr] and [N,O1..Or,r]" : "[N,C,H,W] and [N,Ho,Wo,2]");
    /* opset 16 names the modes bilinear / bicubic, opset 20 linear / cubic */
    static const char *const modes16[] = { "bilinear", "nearest", "bicubic" };
    static const char *const modes20[] = { "linear", "nearest", "cubic" };
    static const char *const pads[] = { "zeros", "border", "reflection" };
    const char *const *modes = nd_any ? modes20 : modes16;
    const char *m = cort_attr_str(ctx->node, "mode", modes[0]), *pd = cort_attr_str(ctx->node, "padding_mode", "zeros");
    int mode = -1, pad = -1;
    /* either spelling is accepted at any opset; only the default follows the opset */
    for (int i = 0; i < 3; i++) {
        if (!strcmp(m, modes16[i]) || !strcmp(m, modes20[i])) mode = i;
        if (!strcmp(pd, pads[i])) pad = i;
    }
    if (mode < 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'mode' is '%s', expected %s, %s or %s "
                               "at opset %d", m, modes[0], modes[1], modes[2], ctx->opset);
    if (pad < 0) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'padding_mode' has unsupported value '%s'", pd);
    int64_t od[CORT_MAX_RANK] = { x->shape[0], x->shape[1] };
    gs_job j = { x, g, NULL, (size_t)x->shape[1], r, { 0 }, 1, 1, mode, pad,
                 cort_attr_int(ctx->node, "align_corners", 0) != 0 };
    int empty_in = 0;
    for (size_t d = 0; d < r; d++) {
        od[2 + d] = g->shape[1 + d];
        j.in[d] = (size_t)x->shape[2 + d];
        j.in_plane *= j.in[d];
        j.out_plane *= (size_t)g->shape[1 + d];
        if (!x->shape[2 + d]) empty_in = 1;
    }
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, od, x->rank, &y));
    if (!y->count) return NULL;
    if (empty_in) {
        for (size_t i = 0; i < y->count; i++) cort_store_f64(y->data, y->type, i, 0);
        return NULL;
    }
    j.y = y;
    cort_parallel_for(ctx->pool, (size_t)x->shape[0] * j.out_plane, 256 / (j.C + 1) + 1, gs_task, &j);
    return NULL;
}

static cort_status *gs_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0), *g = rd_tinput(ctx, 1);
    if (!x) return NULL;
    int rank = x->rank >= 3 ? x->rank : g && g->rank >= 3 ? g->rank : -1;
    if (rank < 0 || (ctx->opset < 20 && rank != 4)) { cort_tinfo_tensor(&ctx->outputs[0], x->elem); return NULL; }
    int64_t d[CORT_MAX_RANK];
    d[0] = x->rank == rank ? x->dims[0] : -1;
    d[1] = x->rank == rank ? x->dims[1] : -1;
    for (int i = 2; i < rank; i++) d[i] = g && g->rank == rank ? g->dims[i - 1] : -1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, d, rank);
    return NULL;
}

const cort_op_def rd_op_grid_sample = { .name = "GridSample", .domain = "", .min_opset = 16, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = gs_infer, .run = gs_run };
