/* Test-only entry points of the XNNPACK provider (not part of the public API). */
#ifndef CORT_PROVIDERS_XNNPACK_TEST_H
#define CORT_PROVIDERS_XNNPACK_TEST_H
#include <stddef.h>
#include "cort.h"

/* Creates and deletes an XNNPACK operator and checks that XNNPACK allocated (and freed) through the
 * process-wide owner, which must equal expected_owner when that is non-NULL (the identity sessions
 * report through cort_session_allocator(s, "xnnpack")). NOT_IMPLEMENTED without XNNPACK. */
cort_status *cort_xnnpack_test_roundtrip(const void *expected_owner);
/* Bytes XNNPACK currently holds through the owner (0 before initialization). */
size_t cort_xnnpack_test_bytes_in_use(void);
/* NCHW <-> NHWC transposes the XNNPACK provider performed in this process (every session; counted
 * only when data actually moves, i.e. C > 1 and spatial size > 1). */
size_t cort_xnnpack_test_transpose_count(void);
/* 1 if the node is an XNNPACK Relu/Clip whose producer already applies it, 0 if not, -1 if the node
 * is not an XNNPACK Relu/Clip. */
struct cort_node;
int cort_xnnpack_test_passthrough(const struct cort_node *node);
#endif
