/* Shared helpers of the ai.onnx.ml operators (ml_*.c): score post-transforms, attribute readers
 * for the float / *_as_tensor pairs, the [N,C] view of an input, and the op definitions. */
#ifndef CORT_CPU_ML_COMMON_H
#define CORT_CPU_ML_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include "../../../../graph/op.h"

/* Newest ai.onnx.ml opset ONNX 1.23 defines. */
#define ML_OPSET_MAX 5
#define ML_DOMAIN "ai.onnx.ml"
#define ML_NUMERIC (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_INT64) | CORT_TBIT(CORT_TYPE_INT32))

enum { ML_POST_NONE, ML_POST_SOFTMAX, ML_POST_LOGISTIC, ML_POST_SOFTMAX_ZERO, ML_POST_PROBIT };

/* post_transform string attribute (default NONE) into *out; error naming the bad value. */
cort_status *ml_post_attr(const cort_node *node, int *out);
/* In place on one row of n scores. */
void ml_post_apply(int post, double *s, size_t n);
double ml_logistic(double x);
double ml_probit(double p);   /* sqrt(2) * erfinv(2p - 1) */

/* Reads a list-of-floats attribute `name`, or when absent the tensor attribute `tensor_name`
 * (may be NULL; any float type) into a new double array (cort_malloc; NULL when n is 0). */
cort_status *ml_attr_f64(const cort_node *node, const char *name, const char *tensor_name, double **out, size_t *n);

/* The [N,C] view of input 0 of a model op (rank 1: one row; rank >= 2: N = dim 0). */
cort_status *ml_rows(const cort_kernel_ctx *ctx, const cort_value *x, size_t *n, size_t *c);
/* Input x converted to double in the run's scratch (free with cort_kernel_scratch_free). */
cort_status *ml_to_f64(cort_kernel_ctx *ctx, const cort_value *x, double **out);

/* A lookup table over a list of strings or int64 (borrowed from the node's attributes): the
 * positions sorted by value once, then binary searches. With repeated values the last position
 * wins. */
typedef struct ml_index { size_t n; const char *const *s; const int64_t *i; size_t *order; } ml_index;
cort_status *ml_index_build(ml_index *ix);          /* set n and s or i first */
long ml_index_find_str(const ml_index *ix, const char *s);
long ml_index_find_i64(const ml_index *ix, int64_t v);
void ml_index_free(ml_index *ix);

extern const cort_op_def ml_op_array_feature_extractor, ml_op_binarizer, ml_op_cast_map, ml_op_category_mapper,
    ml_op_dict_vectorizer, ml_op_feature_vectorizer, ml_op_imputer, ml_op_label_encoder,
    ml_op_linear_classifier, ml_op_linear_regressor, ml_op_normalizer, ml_op_one_hot_encoder,
    ml_op_svm_classifier, ml_op_svm_regressor, ml_op_scaler, ml_op_tree_ensemble,
    ml_op_tree_ensemble_classifier, ml_op_tree_ensemble_regressor, ml_op_zipmap;
#endif
