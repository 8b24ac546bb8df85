/* libFuzzer target 1: arbitrary bytes as a model, through the public API: create a session from
 * memory and release it. Beyond "no crash, no leak, no hang, no sanitizer report": a failure must
 * come back as a status with a message, and no single allocation may exceed libFuzzer's
 * -malloc_limit_mb (scripts/fuzz.sh sets it): the size policy must refuse absurd shapes before
 * they reach the allocator. The session uses a small max_tensor_bytes and fold budget (1 MiB:
 * the light_* models of the 1.23 suite fold their weights from ConstantOfShape, which under ASan
 * took seconds per input with the 16 MiB default), as a service loading untrusted models would. Seeds: tests/fuzz/corpus/ and every model of both ONNX
 * backend suites (scripts/fuzz.sh); run with `make fuzz` / `make fuzz-long`. */
#include <stddef.h>
#include <stdint.h>
#include "cort.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cort_session_options *o = NULL;
    if (cort_session_options_create(&o)) return 0;
    cort_status_free(cort_session_options_set_threads(o, 1));
    cort_status_free(cort_session_options_set_max_tensor_bytes(o, (uint64_t)256 << 20));
    cort_status_free(cort_session_options_set_fold_budget(o, (uint64_t)1 << 20));
    cort_session *session = NULL;
    cort_status *st = cort_session_create_from_memory(data, size, o, &session);
    if (st && !cort_status_message(st)[0]) __builtin_trap();   /* every failure says what failed */
    cort_status_free(st);
    cort_session_release(session);
    cort_session_options_free(o);
    return 0;
}
