/* Comparison of a computed value against an expected one (ONNX backend-test rules). */
#ifndef CORT_CLI_COMPARE_H
#define CORT_CLI_COMPARE_H
#include <stddef.h>
#include "cort.h"

typedef struct cli_tolerance { double rtol, atol; } cli_tolerance;
#define CLI_DEFAULT_RTOL 1e-3
#define CLI_DEFAULT_ATOL 1e-7

/* 1 if got matches expected: same kind, element type and shape; floating-point elements (float,
 * double, float16, bfloat16, complex parts) within atol + rtol*|expected| (NaN equals NaN), all
 * other elements exactly; sequences, optionals and maps recursively. On a mismatch returns 0 and
 * writes the first difference to why (e.g. "element 5 [1,2]: got 0.5 vs expected 0.25; 3 of 12
 * elements differ"). */
int cli_compare(const cort_value *got, const cort_value *expected, const cli_tolerance *tol, char *why, size_t why_len);
/* Formats "float[1,3,224,224]" (or "seq(float)", "optional(...)", "map(...)") for messages. */
void cli_describe_value(const cort_value *v, char *buf, size_t len);
#endif
