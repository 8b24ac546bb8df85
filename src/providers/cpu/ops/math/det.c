/* Det: determinants of the trailing [M, M] matrices, by LU decomposition with partial pivoting in
 * double precision. */
#include <math.h>
#include <string.h>
#include "../ops_common.h"
#include "../reduce/reduce_ops.h"

typedef struct det_job {
    const cort_value *x;
    cort_value *y;
    size_t m;
    double *scratch;      /* m*m per task, indexed by begin / grain */
    size_t grain;
} det_job;

static void det_task(void *arg, size_t begin, size_t end) {
    const det_job *j = arg;
    size_t m = j->m, mm = m * m;
    double *a = j->scratch + (begin / j->grain) * mm;
    for (size_t b = begin; b < end; b++) {
        for (size_t i = 0; i < mm; i++) a[i] = cort_load_f64(j->x->data, j->x->type, b * mm + i);
        double det = 1;
        for (size_t c = 0; c < m && det != 0; c++) {
            size_t piv = c;
            for (size_t r = c + 1; r < m; r++) if (fabs(a[r * m + c]) > fabs(a[piv * m + c])) piv = r;
            if (a[piv * m + c] == 0) { det = 0; break; }
            if (piv != c) {
                for (size_t k = 0; k < m; k++) { double t = a[c * m + k]; a[c * m + k] = a[piv * m + k]; a[piv * m + k] = t; }
                det = -det;
            }
            double d = a[c * m + c];
            det *= d;
            for (size_t r = c + 1; r < m; r++) {
                double f = a[r * m + c] / d;
                if (f == 0) continue;
                for (size_t k = c + 1; k < m; k++) a[r * m + k] -= f * a[c * m + k];
            }
        }
        cort_store_f64(j->y->data, j->y->type, b, det);
    }
}

static cort_status *det_run(cort_kernel_ctx *ctx) {
    const cort_value *x = rd_input(ctx, 0);
    char sb[128];
    if (!x || x->kind != CORT_VKIND_TENSOR || !cort_type_is_float(x->type))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a float tensor");
    if (x->rank < 2 || x->shape[x->rank - 1] != x->shape[x->rank - 2])
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s, expected [*,M,M]",
                               rd_shape_str(x, sb, sizeof sb));
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, x->rank - 2, &y));
    size_t m = (size_t)x->shape[x->rank - 1], nb = y->count;
    if (!nb) return NULL;
    if (m == 0) { for (size_t i = 0; i < nb; i++) cort_store_f64(y->data, y->type, i, 1); return NULL; }
    size_t grain = m >= 40 ? 1 : 65536 / (m * m * m + 1) + 1, tasks = (nb + grain - 1) / grain;
    if (m * m > SIZE_MAX / sizeof(double) / tasks) return cort_error_oom();
    double *scratch = cort_kernel_scratch(ctx, tasks * m * m * sizeof *scratch);
    if (!scratch) return cort_error_oom();
    det_job j = { x, y, m, scratch, grain };
    cort_parallel_for(ctx->pool, nb, grain, det_task, &j);
    cort_kernel_scratch_free(ctx, scratch);
    return NULL;
}

static cort_status *det_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0);
    if (!x) return NULL;
    cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    if (x->rank >= 2) cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, x->dims, x->rank - 2);
    return NULL;
}

const cort_op_def rd_op_det = { .name = "Det", .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_FLOATS, .infer = det_infer, .run = det_run };
