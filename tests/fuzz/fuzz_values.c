/* libFuzzer target 3: the value readers the CLI feeds from files: serialized TensorProto /
 * SequenceProto / OptionalProto / MapProto (.pb, cort_value_parse) and NumPy .npy (npy_parse).
 * Properties beyond "no crash, no leak": a value that parses must serialize; its serialization
 * must parse again as the same kind into bytes that serialize identically (.pb), and an .npy array
 * that parses and can be written must read back to the same type, shape and bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "cort.h"
#include "core/alloc.h"
#include "onnx/onnx.h"
#include "npy.h"

static void check_pb_roundtrip(const uint8_t *data, size_t size) {
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

static void check_npy_roundtrip(const uint8_t *data, size_t size) {
    cort_value *v = NULL, *w = NULL;
    cort_status *st = npy_parse(data, size, "fuzz.npy", &v);
    if (st) {
        if (!cort_status_message(st)[0]) __builtin_trap();
        cort_status_free(st);
        return;
    }
    void *b = NULL;
    size_t n = 0;
    if (npy_type_supported(cort_tensor_type(v)) && !(st = npy_serialize(v, &b, &n))) {
        if ((st = npy_parse(b, n, "roundtrip.npy", &w))) __builtin_trap();
        if (cort_tensor_type(v) != cort_tensor_type(w) || cort_tensor_rank(v) != cort_tensor_rank(w) ||
            memcmp(cort_tensor_shape(v), cort_tensor_shape(w), cort_tensor_rank(v) * sizeof(int64_t)))
            __builtin_trap();
        if (cort_tensor_type(v) == CORT_TYPE_STRING) {
            char **a = cort_tensor_data(v), **c = cort_tensor_data(w);
            for (size_t i = 0; i < cort_tensor_element_count(v); i++)
                if (strcmp(a[i] ? a[i] : "", c[i] ? c[i] : "")) __builtin_trap();
        } else if (memcmp(cort_tensor_data(v), cort_tensor_data(w), cort_tensor_bytes(v))) {
            __builtin_trap();
        }
        cort_value_release(w);
        cort_free(b);
    }
    cort_status_free(st);
    cort_value_release(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_pb_roundtrip(data, size);
    check_npy_roundtrip(data, size);
    return 0;
}
