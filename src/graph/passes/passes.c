/* The pass driver: the level-2 passes in the order they run (see passes.h). */
#include "pattern.h"

#define SOLO 1u   /* only when no provider was appended (the default provider runs the whole graph) */

typedef struct pass { const char *name; int phase; unsigned flags; cort_pass_fn run; } pass;

static const pass passes[] = {
    { "fuse_qdq", CORT_PASSES_BEFORE_KERNELS, 0, cort_pass_fuse_qdq },
    { "fold_bn", CORT_PASSES_BEFORE_KERNELS, 0, cort_pass_fold_bn },
    { "fuse_qdq_lut", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_qdq_lut },
    { "fuse_int_matmul", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_int_matmul },
    { "lower_contrib", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_lower_contrib },
    { "fuse_layernorm", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_layernorm },
    { "fuse_gelu", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_gelu },
    { "fuse_matmul_bias_dynamic", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_matmul_bias_dynamic },
    { "fuse_matmul_scale", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_matmul_scale },
    { "fuse_matmul_residual", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_matmul_residual },
    { "fuse_matmul_gelu", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_matmul_gelu },
    { "fuse_skip_layernorm", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_skip_layernorm },
    { "fuse_bias_gelu", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_bias_gelu },
    { "fuse_int_matmul_gelu", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_int_matmul_gelu },
    { "fuse_packed_matmul_gelu", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_packed_matmul_gelu },
    { "fuse_hardswish", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_hardswish },
    { "fuse_matmul_bias_packed", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_matmul_bias_packed },
    { "fuse_residual", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_residual },
    { "fuse_activation", CORT_PASSES_AFTER_KERNELS, 0, cort_pass_fuse_activation },
    { "fuse_pw_dw", CORT_PASSES_AFTER_KERNELS, SOLO, cort_pass_fuse_pw_dw },
    { "plan_inplace", CORT_PASSES_AFTER_KERNELS, SOLO, cort_pass_plan_inplace },
};

cort_status *cort_passes_run(cort_graph *g, int phase) {
    if (!g->n_nodes || !g->n_slots) return NULL;
    cort_pass_index x = { 0 };
    cort_status *st = NULL;
    const int solo = !g->opts->n_providers;
    for (size_t i = 0; !st && i < sizeof passes / sizeof passes[0]; i++)
        if (passes[i].phase == phase && (solo || !(passes[i].flags & SOLO))) st = passes[i].run(g, &x);
    cort_free(x.producer);
    return st;
}
