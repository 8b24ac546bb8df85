#include "types.h"

/* Float -> integer without undefined behaviour: saturate to int64 (NaN -> 0), as Cast does; the
 * narrower integer types then wrap like C integer conversions. */
static int64_t f2i64(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}
static uint64_t f2u64(double x) {
    if (x != x) return 0;
    if (x >= 18446744073709551616.0) return UINT64_MAX;
    if (x < 0) return (uint64_t)f2i64(x);
    return (uint64_t)x;
}

double cort_load_f64(const void *d, cort_type t, size_t i) {
    switch (t) {
    case CORT_TYPE_FLOAT: return ((const float *)d)[i];
    case CORT_TYPE_DOUBLE: return ((const double *)d)[i];
    case CORT_TYPE_FLOAT16: return cort_f16_to_f32(((const uint16_t *)d)[i]);
    case CORT_TYPE_BFLOAT16: return cort_bf16_to_f32(((const uint16_t *)d)[i]);
    case CORT_TYPE_INT8: return ((const int8_t *)d)[i];
    case CORT_TYPE_INT16: return ((const int16_t *)d)[i];
    case CORT_TYPE_INT32: return ((const int32_t *)d)[i];
    case CORT_TYPE_INT64: return (double)((const int64_t *)d)[i];
    case CORT_TYPE_UINT8: case CORT_TYPE_BOOL: return ((const uint8_t *)d)[i];
    case CORT_TYPE_UINT16: return ((const uint16_t *)d)[i];
    case CORT_TYPE_UINT32: return ((const uint32_t *)d)[i];
    case CORT_TYPE_UINT64: return (double)((const uint64_t *)d)[i];
    default: return 0;
    }
}

int64_t cort_load_i64(const void *d, cort_type t, size_t i) {
    switch (t) {
    case CORT_TYPE_FLOAT: return f2i64(((const float *)d)[i]);
    case CORT_TYPE_DOUBLE: return f2i64(((const double *)d)[i]);
    case CORT_TYPE_FLOAT16: return f2i64(cort_f16_to_f32(((const uint16_t *)d)[i]));
    case CORT_TYPE_BFLOAT16: return f2i64(cort_bf16_to_f32(((const uint16_t *)d)[i]));
    case CORT_TYPE_INT8: return ((const int8_t *)d)[i];
    case CORT_TYPE_INT16: return ((const int16_t *)d)[i];
    case CORT_TYPE_INT32: return ((const int32_t *)d)[i];
    case CORT_TYPE_INT64: return ((const int64_t *)d)[i];
    case CORT_TYPE_UINT8: case CORT_TYPE_BOOL: return ((const uint8_t *)d)[i];
    case CORT_TYPE_UINT16: return ((const uint16_t *)d)[i];
    case CORT_TYPE_UINT32: return ((const uint32_t *)d)[i];
    case CORT_TYPE_UINT64: return (int64_t)((const uint64_t *)d)[i];
    default: return 0;
    }
}

void cort_store_f64(void *d, cort_type t, size_t i, double v) {
    switch (t) {
    case CORT_TYPE_FLOAT: ((float *)d)[i] = (float)v; break;
    case CORT_TYPE_DOUBLE: ((double *)d)[i] = v; break;
    case CORT_TYPE_FLOAT16: ((uint16_t *)d)[i] = cort_f32_to_f16((float)v); break;
    case CORT_TYPE_BFLOAT16: ((uint16_t *)d)[i] = cort_f32_to_bf16((float)v); break;
    case CORT_TYPE_INT8: ((int8_t *)d)[i] = (int8_t)f2i64(v); break;
    case CORT_TYPE_INT16: ((int16_t *)d)[i] = (int16_t)f2i64(v); break;
    case CORT_TYPE_INT32: ((int32_t *)d)[i] = (int32_t)f2i64(v); break;
    case CORT_TYPE_INT64: ((int64_t *)d)[i] = f2i64(v); break;
    case CORT_TYPE_UINT8: ((uint8_t *)d)[i] = (uint8_t)f2u64(v); break;
    case CORT_TYPE_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case CORT_TYPE_UINT16: ((uint16_t *)d)[i] = (uint16_t)f2u64(v); break;
    case CORT_TYPE_UINT32: ((uint32_t *)d)[i] = (uint32_t)f2u64(v); break;
    case CORT_TYPE_UINT64: ((uint64_t *)d)[i] = f2u64(v); break;
    default: break;
    }
}

void cort_store_i64(void *d, cort_type t, size_t i, int64_t v) {
    switch (t) {
    case CORT_TYPE_FLOAT: ((float *)d)[i] = (float)v; break;
    case CORT_TYPE_DOUBLE: ((double *)d)[i] = (double)v; break;
    case CORT_TYPE_FLOAT16: ((uint16_t *)d)[i] = cort_f32_to_f16((float)v); break;
    case CORT_TYPE_BFLOAT16: ((uint16_t *)d)[i] = cort_f32_to_bf16((float)v); break;
    case CORT_TYPE_INT8: ((int8_t *)d)[i] = (int8_t)v; break;
    case CORT_TYPE_INT16: ((int16_t *)d)[i] = (int16_t)v; break;
    case CORT_TYPE_INT32: ((int32_t *)d)[i] = (int32_t)v; break;
    case CORT_TYPE_INT64: ((int64_t *)d)[i] = v; break;
    case CORT_TYPE_UINT8: ((uint8_t *)d)[i] = (uint8_t)v; break;
    case CORT_TYPE_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case CORT_TYPE_UINT16: ((uint16_t *)d)[i] = (uint16_t)v; break;
    case CORT_TYPE_UINT32: ((uint32_t *)d)[i] = (uint32_t)v; break;
    case CORT_TYPE_UINT64: ((uint64_t *)d)[i] = (uint64_t)v; break;
    default: break;
    }
}
