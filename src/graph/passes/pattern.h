/* Helpers shared by the level-2 pattern passes (passes/fuse_*.c): an index of each slot's producer
 * and readers, node and constant predicates, and the rewrite of a node into a fused operator of
 * the provider that took it. Each pattern keeps its last node, turns it into a fused operator of
 * domain "cort" (src/providers/cpu/fu_*.c) and marks the other nodes skipped. A pattern only fires
 * when every intermediate value is consumed inside it and is not a graph output, all its nodes run
 * on a provider with CORT_PROVIDER_PATTERNS (the CPU provider), and its constants have the exact
 * values the fused kernel assumes. */
#ifndef CORT_GRAPH_PASSES_PATTERN_H
#define CORT_GRAPH_PASSES_PATTERN_H
#include "passes.h"

#define PAT_OUTPUT_USE (1 << 20)   /* use count added for graph outputs: never fusible */

struct cort_pass_index {
    int32_t *producer;   /* per slot: executed node producing it, or -1 */
    int32_t *uses;       /* per slot: reads by executed nodes (+PAT_OUTPUT_USE for graph outputs) */
    int32_t *consumer;   /* per slot: the first executed reader, or -1 */
};

/* (Re)builds the index over the executed nodes (allocated on first use, freed by the driver). */
cort_status *pat_index_build(const cort_graph *g, cort_pass_index *x);
/* Whether n is a node of (domain, op) with float output 0, no fused activation and no subgraph, run
 * by a provider whose nodes the patterns may rewrite. */
int pat_is_op(const cort_graph *g, const cort_node *n, const char *domain, const char *op);
/* The executed producer of slot s if it is (domain, op) and s is read exactly `uses` times. */
cort_node *pat_producer_of(cort_graph *g, const cort_pass_index *x, int32_t s, const char *domain, const char *op,
                           int32_t uses);
/* The only consumer of slot s if it is (default domain, op). */
cort_node *pat_sole_consumer(cort_graph *g, const cort_pass_index *x, int32_t s, const char *op);
/* A constant float scalar (any shape with one element). */
int pat_const_scalar(const cort_graph *g, int32_t s, float *v);
/* A constant float vector broadcasting only along the last axis of a rank-`rank` value. */
int pat_const_row(const cort_graph *g, int32_t s, int64_t c, int rank);
/* Input slot of binary node n other than s (-1 if n does not read s exactly once). */
int32_t pat_other_input(const cort_node *n, int32_t s);
int pat_same_static_shape(const cort_tinfo *a, const cort_tinfo *b);
/* Turns `keep` into domain.<op_type>(in...) of the given opset with the given attributes (the
 * kernel found through keep's provider); its output slot stays. adopt: a node whose state (e.g.
 * packed weights) the new op takes over instead of running its init, or NULL. */
cort_status *pat_rewrite_as(cort_graph *g, cort_node *keep, const char *domain, const char *op_type, int opset,
                            const int32_t *in, size_t n_in, const cort_attr_ir *attrs, size_t n_attrs,
                            cort_node *adopt);
/* pat_rewrite_as into cort.<op_type> version 1, nothing adopted. */
cort_status *pat_rewrite(cort_graph *g, cort_node *keep, const char *op_type, const int32_t *in, size_t n_in,
                         const cort_attr_ir *attrs, size_t n_attrs);
/* Marks n as not executed and releases its state now. */
void pat_drop(cort_graph *g, cort_node *n);
cort_attr_ir pat_attr_f(const char *name, float f);
cort_attr_ir pat_attr_i(const char *name, int64_t i);
/* A MatMul of two float inputs. */
int pat_matmul_float(const cort_graph *g, const cort_node *mm);
/* If slot s is Add(v, bias row of length c) read only once, the Add node (and v's and the bias's
 * slots in *v, *bias), else NULL. */
cort_node *pat_bias_add(cort_graph *g, const cort_pass_index *x, int32_t s, int64_t c, int rank, int32_t *v,
                        int32_t *bias);
#endif
