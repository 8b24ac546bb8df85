/* A custom-operator library as a user would ship it, loaded by tests/test_custom_ops.c through
 * cort_session_options_load_custom_op_library. It uses only the function table it is handed, so it
 * links against nothing of cort's.
 *
 * test.cort.ScaledAdd (versions 1..): Y = alpha * A + B, B's elements repeating along A (B's count
 * divides A's), float only; attribute alpha (default 1). */
#include <cort.h>
#include <stdio.h>

static const cort_custom_op_api *api;

static cort_status *scaled_add_infer(void *user, void *state, cort_op_context *ctx) {
    (void)user; (void)state;
    cort_type t;
    int64_t dims[16];
    int rank;
    cort_status *st = api->op_input_type(ctx, 0, &t, dims, 16, &rank);
    if (st) return st;
    return api->op_set_output_type(ctx, 0, CORT_TYPE_FLOAT, dims, rank);
}

static cort_status *scaled_add_compute(void *user, void *state, cort_op_context *ctx) {
    (void)user; (void)state;
    const cort_value *a = api->op_input(ctx, 0), *b = api->op_input(ctx, 1);
    if (!a || !b || api->tensor_type(a) != CORT_TYPE_FLOAT || api->tensor_type(b) != CORT_TYPE_FLOAT)
        return api->status_create(CORT_ERROR_INVALID_ARGUMENT, "ScaledAdd (library): needs two float inputs");
    size_t n = api->tensor_element_count(a), nb = api->tensor_element_count(b);
    if (!nb || n % nb) {
        char msg[128];
        snprintf(msg, sizeof msg, "ScaledAdd (library): B has %zu elements, which does not divide A's %zu", nb, n);
        return api->status_create(CORT_ERROR_INVALID_ARGUMENT, msg);
    }
    float alpha = 1.0f;
    api->op_attr_float(ctx, "alpha", &alpha);
    cort_value *y = NULL;
    cort_status *st = api->op_output(ctx, 0, CORT_TYPE_FLOAT, api->tensor_shape(a), api->tensor_rank(a), &y);
    if (st) return st;
    const float *pa = api->tensor_data(a), *pb = api->tensor_data(b);
    float *py = api->tensor_data(y);
    for (size_t i = 0; i < n; i++) py[i] = alpha * pa[i] + pb[i % nb];
    return NULL;
}

__attribute__((visibility("default"))) cort_status *cort_register_custom_ops(cort_session_options *options,
                                                                             const cort_custom_op_api *table) {
    if (!table || table->version < 1) return NULL;   /* cannot even report: nothing registered */
    api = table;
    cort_custom_op op = { CORT_CUSTOM_OP_VERSION, "test.cort", "ScaledAdd", 1, 0, NULL,
                          NULL, NULL, scaled_add_infer, scaled_add_compute };
    return api->add_custom_op(options, &op);
}
