/* The CPU provider's operator registry. Each family file (ops_<family>.c) exports a NULL-terminated
 * list of op definitions; this file only stitches the lists together and looks entries up. */
#include <string.h>
#include "../../graph/op.h"

extern const cort_op_def *const cort_ops_elementwise[];
extern const cort_op_def *const cort_ops_nn[];
extern const cort_op_def *const cort_ops_shape[];
extern const cort_op_def *const cort_ops_reduce[];
extern const cort_op_def *const cort_ops_misc[];
extern const cort_op_def *const cort_ops_control[];
extern const cort_op_def *const cort_ops_misc2[];
extern const cort_op_def *const cort_ops_fused[];

static const cort_op_def *const *const families[] = {
    cort_ops_elementwise, cort_ops_nn, cort_ops_shape, cort_ops_reduce, cort_ops_misc, cort_ops_control, cort_ops_misc2, cort_ops_fused,
};

static int domain_eq(const char *a, const char *b) {
    if (!strcmp(a, "ai.onnx")) a = "";
    if (!strcmp(b, "ai.onnx")) b = "";
    return strcmp(a, b) == 0;
}

const cort_op_def *cort_op_find(const char *domain, const char *op_type, int opset) {
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const cort_op_def *const *p = families[f]; *p; p++)
            if (!strcmp((*p)->name, op_type) && domain_eq((*p)->domain, domain) &&
                opset >= (*p)->min_opset && opset <= (*p)->max_opset)
                return *p;
    return NULL;
}

int cort_op_known(const char *domain, const char *op_type, int *min_opset, int *max_opset) {
    int found = 0, lo = 0, hi = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const cort_op_def *const *p = families[f]; *p; p++)
            if (!strcmp((*p)->name, op_type) && domain_eq((*p)->domain, domain)) {
                if (!found || (*p)->min_opset < lo) lo = (*p)->min_opset;
                if (!found || (*p)->max_opset > hi) hi = (*p)->max_opset;
                found = 1;
            }
    if (found) { if (min_opset) *min_opset = lo; if (max_opset) *max_opset = hi; }
    return found;
}
