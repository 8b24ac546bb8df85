/* libFuzzer target: arbitrary bytes as a model (public API: create a session, release it) and as
 * a standalone value (.pb). Properties checked beyond "no crash, no leak, no hang":
 * a value that parses must serialize, and its serialization must parse again as the same kind
 * into bytes that serialize identically. Run with scripts/fuzz.sh (or `make fuzz`). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "cort.h"
#include "../../src/core/alloc.h"
#include "../../src/onnx/onnx.h"

static void check_value_roundtrip(const uint8_t *data, size_t size) {
    cort_value *v = NULL, *w = NULL;
    void *s1 = NULL, *s2 = NULL;
    size_t n1 = 0, n2 = 0;
    cort_status *st = cort_value_parse(data, size, 0, &v);
    if (st) { cort_status_free(st); return; }
    st = cort_value_serialize(v, "v", &s1, &n1);
    if (st) {
        /* only allocation failure is acceptable for a value the parser produced */
        if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY) __builtin_trap();
        cort_status_free(st);
        cort_value_release(v);
        return;
    }
    st = cort_value_parse(s1, n1, cort_value_kind(v), &w);
    if (st) __builtin_trap();   /* our own output must parse */
    st = cort_value_serialize(w, "v", &s2, &n2);
    if (st || n1 != n2 || memcmp(s1, s2, n1)) __builtin_trap();
    cort_free(s1);
    cort_free(s2);
    cort_value_release(v);
    cort_value_release(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cort_session *session = NULL;
    cort_status *st = cort_session_create_from_memory(data, size, NULL, &session);
    cort_status_free(st);
    cort_session_release(session);
    check_value_roundtrip(data, size);
    return 0;
}
