/* Custom operators registered on session options (src/session/custom_ops.c): a reference-counted
 * set that options and the sessions made from them share, and the provider that offers its ops to
 * the graph compiler before every other provider. */
#ifndef CORT_SESSION_CUSTOM_OPS_H
#define CORT_SESSION_CUSTOM_OPS_H
#include "cort.h"
#include "../graph/provider.h"

typedef struct cort_custom_op_set cort_custom_op_set;

/* Adds op to *set (created when NULL; copied first when a session shares it, so sessions already
 * made never see later additions). Rejects bad descriptions and overlapping version ranges. */
cort_status *cort_custom_op_set_add(cort_custom_op_set **set, const cort_custom_op *op);
cort_custom_op_set *cort_custom_op_set_retain(cort_custom_op_set *set);
void cort_custom_op_set_release(cort_custom_op_set *set);     /* NULL is a no-op */
size_t cort_custom_op_set_count(const cort_custom_op_set *set);
cort_status *cort_custom_op_library_load(cort_session_options *options, const char *path);

/* instance: a cort_custom_op_set (one reference, released by destroy) */
extern const cort_provider_vtable cort_custom_provider;
#endif
