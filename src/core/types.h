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
/* ---- types added after ONNX 1.12 ---- */
static inline int cort_type_is_float8(cort_type t) {   /* the four 1-4-3 / 1-5-2 formats */
    return t >= CORT_TYPE_FLOAT8E4M3FN && t <= CORT_TYPE_FLOAT8E5M2FNUZ;
}
/* Every small float: float8 formats, float8e8m0, float4e2m1 (decoded through cort_small_to_f64). */
static inline int cort_type_is_small_float(cort_type t) {
    return cort_type_is_float8(t) || t == CORT_TYPE_FLOAT8E8M0 || t == CORT_TYPE_FLOAT4E2M1;
}
static inline int cort_type_is_small_int(cort_type t) {
    return t == CORT_TYPE_UINT4 || t == CORT_TYPE_INT4 || t == CORT_TYPE_UINT2 || t == CORT_TYPE_INT2;
}
static inline int cort_type_is_subbyte(cort_type t) { return cort_type_is_small_int(t) || t == CORT_TYPE_FLOAT4E2M1; }
/* Rounding of conversions to float8e8m0 (Cast-24 round_mode): up = towards +inf in magnitude,
 * down = towards zero, nearest = to the nearer power of two, ties up. */
enum { CORT_ROUND_UP = 0, CORT_ROUND_DOWN = 1, CORT_ROUND_NEAREST = 2 };
/* Value of the bit pattern v of a small float type t (float4e2m1: low 4 bits). */
double  cort_small_to_f64(uint8_t v, cort_type t);
/* Bit pattern of x in small float type t: round to nearest even (float8e8m0: round_mode), with the
 * ONNX Cast saturation rules (saturate = 0: out-of-range values become inf or NaN where the type
 * has them). */
uint8_t cort_f64_to_small(double x, cort_type t, int saturate, int round_mode);
/* The same from float32 with integer arithmetic (what Cast uses); float8e8m0 goes through the
 * double version with round mode up. */
uint8_t cort_f32_to_small(float x, cort_type t, int saturate);
/* Wraps an integer into a small integer type like a C conversion to a narrower type. */
static inline int64_t cort_small_int_wrap(int64_t v, cort_type t) {
    switch (t) {
    case CORT_TYPE_UINT4: return v & 0xf;
    case CORT_TYPE_INT4: return (int64_t)((v & 0xf) ^ 8) - 8;
    case CORT_TYPE_UINT2: return v & 3;
    case CORT_TYPE_INT2: return (int64_t)((v & 3) ^ 2) - 2;
    default: return v;
    }
}
/* Range of a small integer type (saturating quantization). */
static inline void cort_small_int_range(cort_type t, int32_t *lo, int32_t *hi) {
    switch (t) {
    case CORT_TYPE_UINT4: *lo = 0; *hi = 15; break;
    case CORT_TYPE_INT4: *lo = -8; *hi = 7; break;
    case CORT_TYPE_UINT2: *lo = 0; *hi = 3; break;
    case CORT_TYPE_INT2: *lo = -2; *hi = 1; break;
    case CORT_TYPE_UINT8: *lo = 0; *hi = 255; break;
    case CORT_TYPE_INT8: *lo = -128; *hi = 127; break;
    case CORT_TYPE_UINT16: *lo = 0; *hi = 65535; break;
    case CORT_TYPE_INT16: *lo = -32768; *hi = 32767; break;
    default: *lo = INT32_MIN; *hi = INT32_MAX; break;
    }
}

/* Type masks for op type constraints. */
#define CORT_TBIT(t) (1u << (t))
#define CORT_TMASK_FLOATS (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_FLOAT16) | CORT_TBIT(CORT_TYPE_BFLOAT16))
#define CORT_TMASK_SINTS (CORT_TBIT(CORT_TYPE_INT8) | CORT_TBIT(CORT_TYPE_INT16) | CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT64))
#define CORT_TMASK_UINTS (CORT_TBIT(CORT_TYPE_UINT8) | CORT_TBIT(CORT_TYPE_UINT16) | CORT_TBIT(CORT_TYPE_UINT32) | CORT_TBIT(CORT_TYPE_UINT64))
#define CORT_TMASK_INTS (CORT_TMASK_SINTS | CORT_TMASK_UINTS)
#define CORT_TMASK_NUMERIC (CORT_TMASK_FLOATS | CORT_TMASK_INTS)
#define CORT_TMASK_NEW (CORT_TBIT(CORT_TYPE_FLOAT8E4M3FN) | CORT_TBIT(CORT_TYPE_FLOAT8E4M3FNUZ) | \
    CORT_TBIT(CORT_TYPE_FLOAT8E5M2) | CORT_TBIT(CORT_TYPE_FLOAT8E5M2FNUZ) | CORT_TBIT(CORT_TYPE_UINT4) | \
    CORT_TBIT(CORT_TYPE_INT4) | CORT_TBIT(CORT_TYPE_FLOAT4E2M1) | CORT_TBIT(CORT_TYPE_FLOAT8E8M0) | \
    CORT_TBIT(CORT_TYPE_UINT2) | CORT_TBIT(CORT_TYPE_INT2))
#define CORT_TMASK_ALL (CORT_TMASK_NUMERIC | CORT_TBIT(CORT_TYPE_BOOL) | CORT_TBIT(CORT_TYPE_STRING) | CORT_TBIT(CORT_TYPE_COMPLEX64) | CORT_TBIT(CORT_TYPE_COMPLEX128))

/* Reads element i of a numeric buffer of type t as double / int64 (bool -> 0/1, f16/bf16 converted). */
double  cort_load_f64(const void *data, cort_type t, size_t i);
int64_t cort_load_i64(const void *data, cort_type t, size_t i);
/* Stores v into element i (saturation is NOT applied: C conversion semantics as ONNX Cast for in-range values). */
void    cort_store_f64(void *data, cort_type t, size_t i, double v);
void    cort_store_i64(void *data, cort_type t, size_t i, int64_t v);
#endif
