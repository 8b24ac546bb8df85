/* One ONNX backend test folder (model.onnx + test_data_set_N/{input_K,output_K}.pb): create the
 * session, run every data set sequentially and then with concurrent runs, compare the outputs. */
#ifndef CORT_CLI_TESTRUN_H
#define CORT_CLI_TESTRUN_H
#include <stddef.h>
#include "cli.h"
#include "compare.h"

typedef struct cli_test_opts {
    cli_session_args sargs;
    int concurrency;          /* concurrent runs on one session after the sequential one; <= 1 disables */
    cli_tolerance tol;
    int steady_allocs;        /* after data set 0 passes: fail if 2 more runs of it allocate through cort */
} cli_test_opts;

enum { CLI_TEST_PASS = 0, CLI_TEST_FAIL = 1, CLI_TEST_SKIP = 2 };

/* Runs the test in `dir`; returns CLI_TEST_*; for FAIL/SKIP the reason is written to why. */
int cli_backend_test_run(const char *dir, const cli_test_opts *opts, char *why, size_t why_len);
#endif
