/* Element-type helpers: sizes, names, float16/bfloat16 conversion. */
#ifndef CORT_CORE_TYPES_H
#define CORT_CORE_TYPES_H
#include <stdint.h>
#include <string.h>
#include "cort.h"

static inline float cort_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0) {
        if (mant == 0) bits = sign;
        else { /* subnormal */
            exp = 127 - 15 + 1;
            while (!(mant & 0x400)) { mant <<= 1; exp--; }
            mant &= 0x3ff;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 31) bits = sign | 0x7f800000u | (mant << 13);
    else bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    float f; memcpy(&f, &bits, 4); return f;
}
static inline uint16_t cort_f32_to_f16(float f) {   /* round to nearest even */
    uint32_t x; memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* overflow to inf */
    if (absx < 0x38800000u) { /* subnormal or zero in half */
        if (absx < 0x33000000u) return (uint16_t)sign;
        uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((absx >> 13) - (112u << 10));
    uint32_t rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(sign | r);
}
static inline float cort_bf16_to_f32(uint16_t h) { uint32_t b = (uint32_t)h << 16; float f; memcpy(&f, &b, 4); return f; }
static inline uint16_t cort_f32_to_bf16(float f) {   /* round to nearest even, NaN preserved */
    uint32_t x; memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
static inline int cort_type_is_float(cort_type t) {
    return t == CORT_TYPE_FLOAT || t == CORT_TYPE_DOUBLE || t == CORT_TYPE_FLOAT16 || t == CORT_TYPE_BFLOAT16;
}
static inline int cort_type_is_int(cort_type t) {
    return t == CORT_TYPE_INT8 || t == CORT_TYPE_INT16 || t == CORT_TYPE_INT32 || t == CORT_TYPE_INT64 ||
           t == CORT_TYPE_UINT8 || t == CORT_TYPE_UINT16 || t == CORT_TYPE_UINT32 || t == CORT_TYPE_UINT64;
}
static inline int cort_type_is_signed_int(cort_type t) {
    return t == CORT_TYPE_INT8 || t == CORT_TYPE_INT16 || t == CORT_TYPE_INT32 || t == CORT_TYPE_INT64;
}
/* Type masks for op type constraints. */
#define CORT_TBIT(t) (1u << (t))
#define CORT_TMASK_FLOATS (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_FLOAT16) | CORT_TBIT(CORT_TYPE_BFLOAT16))
#define CORT_TMASK_SINTS (CORT_TBIT(CORT_TYPE_INT8) | CORT_TBIT(CORT_TYPE_INT16) | CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT64))
#define CORT_TMASK_UINTS (CORT_TBIT(CORT_TYPE_UINT8) | CORT_TBIT(CORT_TYPE_UINT16) | CORT_TBIT(CORT_TYPE_UINT32) | CORT_TBIT(CORT_TYPE_UINT64))
#define CORT_TMASK_INTS (CORT_TMASK_SINTS | CORT_TMASK_UINTS)
#define CORT_TMASK_NUMERIC (CORT_TMASK_FLOATS | CORT_TMASK_INTS)
#define CORT_TMASK_ALL (CORT_TMASK_NUMERIC | CORT_TBIT(CORT_TYPE_BOOL) | CORT_TBIT(CORT_TYPE_STRING) | CORT_TBIT(CORT_TYPE_COMPLEX64) | CORT_TBIT(CORT_TYPE_COMPLEX128))

/* Reads element i of a numeric buffer of type t as double / int64 (bool -> 0/1, f16/bf16 converted). */
double  cort_load_f64(const void *data, cort_type t, size_t i);
int64_t cort_load_i64(const void *data, cort_type t, size_t i);
/* Stores v into element i (saturation is NOT applied: C conversion semantics as ONNX Cast for in-range values). */
void    cort_store_f64(void *data, cort_type t, size_t i, double v);
void    cort_store_i64(void *data, cort_type t, size_t i, int64_t v);
#endif
