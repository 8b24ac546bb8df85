/* Operator list of the 'misc2' family (see registry.c): TfIdfVectorizer and the preview-training
 * Gradient operator. */
#include "../../graph/op.h"

extern const cort_op_def mi_op_tfidf_vectorizer;   /* mi_tfidf.c */
extern const cort_op_def mi_op_gradient;           /* mi_gradient.c */

const cort_op_def *const cort_ops_misc2[] = {
    &mi_op_tfidf_vectorizer,
    &mi_op_gradient,
    NULL
};
