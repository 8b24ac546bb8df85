/* Quantization helpers shared by the integer/QLinear operators. */
#ifndef CORT_CPU_NN_QUANT_H
#define CORT_CPU_NN_QUANT_H
#include <math.h>
#include "../nn/nn_common.h"

static inline int nn_q_is_8bit(cort_type t) { return t == CORT_TYPE_UINT8 || t == CORT_TYPE_INT8; }

/* Element i of an int8/uint8/int32 tensor. */
static inline int32_t nn_q_load(const cort_value *v, size_t i) {
    switch (v->type) {
    case CORT_TYPE_UINT8: return ((const uint8_t *)v->data)[i];
    case CORT_TYPE_INT8: return ((const int8_t *)v->data)[i];
    case CORT_TYPE_INT32: return ((const int32_t *)v->data)[i];
    default: return (int32_t)cort_load_i64(v->data, v->type, i);
    }
}

/* Element i of a float/float16/double scale tensor. */
static inline float nn_q_scale(const cort_value *v, size_t i) {
    if (v->type == CORT_TYPE_FLOAT) return ((const float *)v->data)[i];
    return (float)cort_load_f64(v->data, v->type, i);
}

/* Round half to even, clamped into int32 range (saturation happens at the store). */
static inline int32_t nn_q_round(float v) {
    if (!(v == v)) return 0;
    if (v > 2147483520.0f) return INT32_MAX;
    if (v < -2147483648.0f) return INT32_MIN;
    return (int32_t)nearbyintf(v);
}

/* nn_q_round's value without its nearbyintf call (a library call without SSE4.1): below 2^22 in
 * magnitude, adding and subtracting 1.5 * 2^23 rounds half to even in the default rounding mode,
 * the one nearbyintf uses (no -ffast-math, so the pair is not folded away); larger values and NaN
 * take nn_q_round itself. */
static inline int32_t nn_q_round_fast(float v) {
    const float magic = 12582912.0f;
    if (fabsf(v) < 4194304.0f) return (int32_t)((v + magic) - magic);
    return nn_q_round(v);
}

static inline int32_t nn_q_add_sat(int32_t a, int32_t b) {
    int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
}

/* Stores v saturated to the range of y's type (uint8 / int8, else int32). */
static inline void nn_q_store(cort_value *y, size_t i, int32_t v) {
    if (y->type == CORT_TYPE_UINT8) ((uint8_t *)y->data)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    else if (y->type == CORT_TYPE_INT8) ((int8_t *)y->data)[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    else ((int32_t *)y->data)[i] = v;
}
#endif
