/* NumPy .npy reader/writer (format versions 1.0, 2.0, 3.0; C order only).
 * dtypes: <f2 <f4 <f8 <i1..<i8 <u1..<u8 |b1 <c8 <c16, and unicode arrays '<Un' which become UTF-8
 * string tensors (and back). Big-endian data, Fortran order and structured dtypes are rejected. */
#ifndef CORT_CLI_NPY_H
#define CORT_CLI_NPY_H
#include <stddef.h>
#include "cort.h"

/* Parses .npy bytes into a new tensor. `what` names the source in error messages (e.g. a path). */
cort_status *npy_parse(const void *bytes, size_t len, const char *what, cort_value **out);
cort_status *npy_load(const char *path, cort_value **out);
/* Serializes a tensor; *out is allocated with cort_malloc. */
cort_status *npy_serialize(const cort_value *tensor, void **out, size_t *out_len);
cort_status *npy_save(const char *path, const cort_value *tensor);
/* 1 if tensors of this element type can be written as .npy (bfloat16 cannot). */
int npy_type_supported(cort_type type);
#endif
