/* Inputs for the small benchmark programs: one tensor per session input, symbolic dimensions = 1,
 * float data deterministic in [0, 1). Returns the input count (at most max). */
#ifndef CORT_BENCH_INPUTS_H
#define CORT_BENCH_INPUTS_H
#include "cort.h"

static inline size_t bench_make_inputs(cort_session *s, const char **names, cort_value **ins, size_t max) {
    size_t n = cort_session_input_count(s);
    if (n > max) n = max;
    for (size_t i = 0; i < n; i++) {
        cort_value_type t;
        int64_t dims[16];
        names[i] = cort_session_input_name(s, i);
        ins[i] = NULL;
        cort_status_free(cort_session_input_type(s, i, &t, dims, 16));
        for (int d = 0; d < t.rank; d++) if (dims[d] < 0) dims[d] = 1;
        cort_status_free(cort_tensor_create(t.elem_type, dims, (size_t)(t.rank < 0 ? 0 : t.rank), &ins[i]));
        if (ins[i] && t.elem_type == CORT_TYPE_FLOAT) {
            float *p = cort_tensor_data(ins[i]);
            for (size_t k = 0; k < cort_tensor_element_count(ins[i]); k++) p[k] = (float)((k * 7919) % 1000) / 1000.0f;
        }
    }
    return n;
}
#endif
