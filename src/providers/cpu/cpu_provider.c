/* The CPU provider's vtable: the default provider, which takes every node no appended provider took.
 * Its kernels are the operator table (cort_op_find); it has no options and no per-session instance,
 * and it allocates from cort's process-wide allocator. Its kernels understand everything the graph
 * passes plan: the fused cort.* operators, in-place Concat views. */
#include <stdio.h>
#include "../../graph/provider.h"

static const char *const cpu_option_keys[] = { NULL };

static cort_status *cpu_create(const char *const *keys, const char *const *values, size_t n, int session_threads,
                               void **instance) {
    (void)keys; (void)values; (void)n; (void)session_threads;
    *instance = NULL;
    return NULL;
}

static void cpu_destroy(void *instance) { (void)instance; }

static int cpu_supports(void *instance, const cort_node *node, const cort_tinfo *inputs, char *reason, size_t len) {
    (void)instance; (void)inputs;
    if (cort_op_find(node->domain, node->op_type, node->opset)) return 1;
    if (len) snprintf(reason, len, "operator not implemented");
    return 0;
}

static const cort_op_def *cpu_kernel(void *instance, const cort_node *node) {
    (void)instance;
    return cort_op_find(node->domain, node->op_type, node->opset);
}

static const void *cpu_allocator(void *instance) {
    (void)instance;
    return cort_cpu_allocator_identity();
}

static const cort_op_def *cpu_find(void *instance, const char *domain, const char *op_type, int opset) {
    (void)instance;
    return cort_op_find(domain, op_type, opset);
}

static int cpu_known(void *instance, const char *domain, const char *op_type, int *min_opset, int *max_opset) {
    (void)instance;
    return cort_op_known(domain, op_type, min_opset, max_opset);
}

const cort_provider_vtable cort_provider_cpu = {
    .name = "cpu",
    .caps = CORT_PROVIDER_DEFAULT | CORT_PROVIDER_PATTERNS | CORT_PROVIDER_OUTPUT_VIEWS,
    .option_keys = cpu_option_keys,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .supports = cpu_supports,
    .kernel = cpu_kernel,
    .allocator = cpu_allocator,
    .find = cpu_find,
    .known = cpu_known,
};
