/* NonMaxSuppression (opsets 10, 11): per batch and class, candidates above score_threshold are
 * visited by descending score (ties: lower box index first) and kept unless their IoU with an
 * already kept box exceeds iou_threshold; at most max_output_boxes_per_class per class. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct nms_box { double y1, x1, y2, x2, area; } nms_box;

static nms_box load_box(const cort_value *b, size_t i, int center) {
    double v[4];
    for (int k = 0; k < 4; k++) v[k] = cort_load_f64(b->data, b->type, i * 4 + (size_t)k);
    nms_box r;
    if (center) {   /* [x_center, y_center, width, height] */
        r.x1 = v[0] - v[2] / 2; r.x2 = v[0] + v[2] / 2;
        r.y1 = v[1] - v[3] / 2; r.y2 = v[1] + v[3] / 2;
    } else {        /* [y1, x1, y2, x2], any pair of diagonal corners */
        r.y1 = fmin(v[0], v[2]); r.y2 = fmax(v[0], v[2]);
        r.x1 = fmin(v[1], v[3]); r.x2 = fmax(v[1], v[3]);
    }
    r.area = (r.x2 - r.x1) * (r.y2 - r.y1);
    return r;
}

static int suppresses(const nms_box *a, const nms_box *b, double iou_threshold) {
    if (a->area <= 0 || b->area <= 0) return 0;
    double ix = fmin(a->x2, b->x2) - fmax(a->x1, b->x1), iy = fmin(a->y2, b->y2) - fmax(a->y1, b->y1);
    if (ix <= 0 || iy <= 0) return 0;
    double inter = ix * iy, uni = a->area + b->area - inter;
    return uni > 0 && inter / uni > iou_threshold;
}

typedef struct nms_scores { const double *s; } nms_scores;
static int cmp_score_desc(const void *ctx, int64_t a, int64_t b) {
    const double *s = ((const nms_scores *)ctx)->s;
    return (s[a] < s[b]) - (s[a] > s[b]);
}

static cort_status *scalar_input(cort_kernel_ctx *ctx, size_t i, const char *name, int is_int, double *out) {
    const cort_value *t = rd_input(ctx, i);
    if (!t) return NULL;
    if (t->kind != CORT_VKIND_TENSOR || t->count > 1 ||
        (is_int ? !cort_type_is_int(t->type) : !cort_type_is_float(t->type)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be a %s scalar or 1-element tensor",
                               i, name, is_int ? "int64" : "float");
    if (t->count == 1) *out = cort_load_f64(t->data, t->type, 0);
    return NULL;
}

static cort_status *nms_run(cort_kernel_ctx *ctx) {
    const cort_value *boxes = rd_input(ctx, 0), *scores = rd_input(ctx, 1);
    char sb[128], sc[128];
    if (!boxes || !scores || boxes->kind != CORT_VKIND_TENSOR || scores->kind != CORT_VKIND_TENSOR ||
        !cort_type_is_float(boxes->type) || !cort_type_is_float(scores->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "inputs 0 'boxes' and 1 'scores' must be float tensors");
    if (boxes->rank != 3 || boxes->shape[2] != 4 || scores->rank != 3 || scores->shape[0] != boxes->shape[0] ||
        scores->shape[2] != boxes->shape[1])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 0 'boxes' has shape %s and input 1 'scores' %s, expected [B,N,4] and [B,C,N]",
                               rd_shape_str(boxes, sb, sizeof sb), rd_shape_str(scores, sc, sizeof sc));
    double max_out = 0, iou = 0, score_thr = -INFINITY;
    CORT_TRY(scalar_input(ctx, 2, "max_output_boxes_per_class", 1, &max_out));
    CORT_TRY(scalar_input(ctx, 3, "iou_threshold", 0, &iou));
    CORT_TRY(scalar_input(ctx, 4, "score_threshold", 0, &score_thr));
    int has_thr = rd_input(ctx, 4) != NULL && rd_input(ctx, 4)->count == 1;
    int center = cort_attr_int(ctx->node, "center_point_box", 0) != 0;
    size_t B = (size_t)boxes->shape[0], N = (size_t)boxes->shape[1], C = (size_t)scores->shape[1];
    size_t limit = max_out <= 0 ? 0 : max_out > (double)N ? N : (size_t)max_out;
    /* selected triples: at most B*C*limit */
    size_t cap = B * C * limit;
    /* working arrays from the session's recycled scratch: no allocation per steady run */
    nms_box *bx = cort_kernel_scratch(ctx, (N ? N : 1) * sizeof *bx);
    double *s = cort_kernel_scratch(ctx, (N ? N : 1) * sizeof *s);
    int64_t *order = cort_kernel_scratch(ctx, (2 * N + 1) * sizeof *order);
    int64_t *kept = cort_kernel_scratch(ctx, (N + 1) * sizeof *kept);
    int64_t *sel = cort_kernel_scratch(ctx, (3 * cap + 1) * sizeof *sel);
    cort_status *st = NULL;
    if (!bx || !s || !order || !kept || !sel) { st = cort_error_oom(); goto done; }
    size_t ns = 0;
    for (size_t b = 0; b < B && limit; b++) {
        for (size_t i = 0; i < N; i++) bx[i] = load_box(boxes, b * N + i, center);
        for (size_t c = 0; c < C; c++) {
            size_t nc = 0;
            for (size_t i = 0; i < N; i++) {
                s[i] = cort_load_f64(scores->data, scores->type, (b * C + c) * N + i);
                if (!has_thr || s[i] > score_thr) order[nc++] = (int64_t)i;
            }
            nms_scores ks = { s };
            rd_sort(order, order + N, nc, cmp_score_desc, &ks);
            size_t nk = 0;
            for (size_t q = 0; q < nc && nk < limit; q++) {
                const nms_box *cand = &bx[order[q]];
                int drop = 0;
                for (size_t k = 0; k < nk && !drop; k++) drop = suppresses(&bx[kept[k]], cand, iou);
                if (drop) continue;
                kept[nk++] = order[q];
                sel[3 * ns] = (int64_t)b; sel[3 * ns + 1] = (int64_t)c; sel[3 * ns + 2] = order[q];
                ns++;
            }
        }
    }
    int64_t od[2] = { (int64_t)ns, 3 };
    cort_value *y;
    if (!(st = cort_kernel_output(ctx, 0, CORT_TYPE_INT64, od, 2, &y))) memcpy(y->data, sel, ns * 3 * sizeof *sel);
done:
    cort_kernel_scratch_free(ctx, bx); cort_kernel_scratch_free(ctx, s); cort_kernel_scratch_free(ctx, order);
    cort_kernel_scratch_free(ctx, kept); cort_kernel_scratch_free(ctx, sel);
    return st;
}

static cort_status *nms_infer(cort_infer_ctx *ctx) {
    int64_t d[2] = { -1, 3 };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_INT64, d, 2);
    return NULL;
}

const cort_op_def rd_op_nms = { .name = "NonMaxSuppression", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX,
    .infer = nms_infer, .run = nms_run };
