#include <math.h>
#include "types.h"
#include "status.h"
#include "checked.h"

/* ---- small floats ----
 * One description per format; conversions go through double, where every value of every source
 * type (float, float16, bfloat16, the small floats themselves) and every rounding step is exact. */
typedef struct small_fmt {
    int mbits, bias, sign_shift;   /* mantissa bits, exponent bias, position of the sign bit */
    double max;                    /* largest finite value */
    int kind;                      /* 0: finite only with NaN all-ones (e4m3fn); 1: IEEE-like inf/NaN (e5m2);
                                      2: "fnuz": NaN is -0's pattern, no inf; 3: float4e2m1, no inf/NaN */
} small_fmt;

static const small_fmt *small_format(cort_type t) {
    static const small_fmt e4m3fn = { 3, 7, 7, 448.0, 0 }, e4m3fnuz = { 3, 8, 7, 240.0, 2 },
                           e5m2 = { 2, 15, 7, 57344.0, 1 }, e5m2fnuz = { 2, 16, 7, 57344.0, 2 },
                           e2m1 = { 1, 1, 3, 6.0, 3 };
    switch (t) {
    case CORT_TYPE_FLOAT8E4M3FN: return &e4m3fn;
    case CORT_TYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case CORT_TYPE_FLOAT8E5M2: return &e5m2;
    case CORT_TYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    case CORT_TYPE_FLOAT4E2M1: return &e2m1;
    default: return NULL;
    }
}

double cort_small_to_f64(uint8_t v, cort_type t) {
    if (t == CORT_TYPE_FLOAT8E8M0) return v == 0xff ? NAN : ldexp(1.0, (int)v - 127);
    const small_fmt *f = small_format(t);
    if (!f) return 0;
    int nbits = f->sign_shift + 1, ebits = f->sign_shift - f->mbits;
    v &= (uint8_t)((1u << nbits) - 1);
    int neg = (v >> f->sign_shift) & 1;
    unsigned e = (v >> f->mbits) & ((1u << ebits) - 1), m = v & ((1u << f->mbits) - 1);
    if (f->kind == 2 && v == 0x80) return NAN;
    if (f->kind == 0 && (v & 0x7f) == 0x7f) return neg ? -NAN : NAN;
    if (f->kind == 1 && e == 31) return m ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
    double r = e ? ldexp(1.0 + ldexp((double)m, -f->mbits), (int)e - f->bias) : ldexp((double)m, 1 - f->bias - f->mbits);
    return neg ? -r : r;
}

static uint8_t e8m0_from(double x, int saturate, int round_mode) {
    if (x != x) return 0xff;
    if (x < 0) return 0xff;                 /* unsigned format: negative values are not representable */
    if (isinf(x)) return saturate ? 0xfe : 0xff;
    if (x == 0) return 0;                   /* no zero: the smallest value, 2^-127 */
    int e;
    double m = 2 * frexp(x, &e);            /* x = m * 2^(e-1), m in [1, 2) */
    int E = e - 1;
    if ((round_mode == CORT_ROUND_UP && m > 1.0) || (round_mode == CORT_ROUND_NEAREST && m >= 1.5)) E++;
    if (E > 127) return saturate ? 0xfe : 0xff;
    if (E < -127) return 0;
    return (uint8_t)(E + 127);
}

uint8_t cort_f64_to_small(double x, cort_type t, int saturate, int round_mode) {
    if (t == CORT_TYPE_FLOAT8E8M0) return e8m0_from(x, saturate, round_mode);
    const small_fmt *f = small_format(t);
    if (!f) return 0;
    uint8_t sign = signbit(x) ? (uint8_t)(1u << f->sign_shift) : 0;
    uint8_t maxcode = (uint8_t)(f->kind == 0 ? 0x7e : f->kind == 1 ? 0x7b : f->kind == 2 ? 0x7f : 0x7);
    if (x != x) {
        switch (f->kind) {
        case 0: return (uint8_t)(sign | 0x7f);
        case 1: return (uint8_t)(sign | 0x7e);
        case 2: return 0x80;
        default: return 0x8;                /* float4e2m1 has no NaN: ONNX's reference gives -0's pattern */
        }
    }
    double a = fabs(x);
    if (!isinf(a)) {
        int e;
        frexp(a, &e);
        int E = e - 1, emin = 1 - f->bias;
        if (E < emin) E = emin;
        double q = ldexp(1.0, E - f->mbits);
        a = nearbyint(a / q) * q;            /* round half to even (default rounding mode) */
    }
    if (a > f->max) {
        if (saturate || f->kind == 3) return (uint8_t)(sign | maxcode);
        switch (f->kind) {
        case 0: return (uint8_t)(sign | 0x7f);
        case 1: return (uint8_t)(sign | 0x7c);
        default: return 0x80;
        }
    }
    if (a == 0) return f->kind == 2 ? 0 : sign;   /* fnuz has no -0 */
    int e;
    frexp(a, &e);
    int E = e - 1, emin = 1 - f->bias;
    unsigned code;
    if (E < emin) code = (unsigned)ldexp(a, f->bias - 1 + f->mbits);
    else code = ((unsigned)(E + f->bias) << f->mbits) | (unsigned)((ldexp(a, -E) - 1.0) * (1 << f->mbits));
    return (uint8_t)(sign | code);
}

uint8_t cort_f32_to_small(float x, cort_type t, int saturate) {
    const small_fmt *f = small_format(t);
    if (!f) return cort_f64_to_small(x, t, saturate, CORT_ROUND_UP);
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return cort_f64_to_small(x, t, saturate, CORT_ROUND_UP);   /* inf, NaN: rare */
    unsigned maxcode = f->kind == 0 ? 0x7e : f->kind == 1 ? 0x7b : f->kind == 2 ? 0x7f : 0x7;
    int e = (int)(a >> 23) - 127, emin = 1 - f->bias;
    uint32_t code;
    if (a < 0x00800000u) code = 0;   /* float32 subnormals are far below every small format's quantum */
    else if (e >= emin) {
        unsigned shift = 23u - (unsigned)f->mbits;
        uint32_t r = a >> shift, rem = a & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;   /* a carry moves into the exponent, as it should */
        code = r - ((uint32_t)(127 - f->bias) << f->mbits);
    } else {
        unsigned sh = (23u - (unsigned)f->mbits) + (unsigned)(emin - e);
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        if (sh >= 32) code = 0;
        else {
            uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
            if (rem > half || (rem == half && (r & 1))) r++;
            code = r;
        }
    }
    uint8_t sign = (u >> 31) ? (uint8_t)(1u << f->sign_shift) : 0;
    if (code > maxcode) {
        if (saturate || f->kind == 3) return (uint8_t)(sign | maxcode);
        return f->kind == 0 ? (uint8_t)(sign | 0x7f) : f->kind == 1 ? (uint8_t)(sign | 0x7c) : 0x80;
    }
    if (code == 0 && f->kind == 2) return 0;
    return (uint8_t)(sign | code);
}

int cort_type_bits(cort_type t) {
    switch (t) {
    case CORT_TYPE_UINT4: case CORT_TYPE_INT4: case CORT_TYPE_FLOAT4E2M1: return 4;
    case CORT_TYPE_UINT2: case CORT_TYPE_INT2: return 2;
    case CORT_TYPE_STRING: return 0;
    default: return (int)(8 * cort_type_size(t));
    }
}

cort_status *cort_type_packed_bytes(cort_type t, size_t count, size_t *bytes) {
    int bits = cort_type_bits(t);
    if (!bits) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "type %s (%d) has no packed form", cort_type_name(t), (int)t);
    if (bits >= 8) {
        if (cort_mul_size_ovf(count, (size_t)bits / 8, bytes))
            return cort_error(CORT_ERROR_INVALID_ARGUMENT, "%zu elements of %s overflow size_t", count, cort_type_name(t));
        return NULL;
    }
    size_t per = (size_t)(8 / bits);
    *bytes = count / per + (count % per != 0);
    return NULL;
}

void cort_type_pack(cort_type t, const void *elements, size_t count, void *packed) {
    int bits = cort_type_bits(t);
    const uint8_t *s = elements;
    uint8_t *d = packed;
    if (bits >= 8) { if (count) memcpy(packed, elements, count * ((size_t)bits / 8)); return; }
    size_t per = (size_t)(8 / bits), nb = count / per + (count % per != 0);
    uint8_t mask = (uint8_t)((1u << bits) - 1);
    memset(d, 0, nb);
    for (size_t i = 0; i < count; i++) d[i / per] |= (uint8_t)((s[i] & mask) << ((i % per) * (size_t)bits));
}

void cort_type_unpack(cort_type t, const void *packed, size_t count, void *elements) {
    int bits = cort_type_bits(t);
    const uint8_t *s = packed;
    uint8_t *d = elements;
    if (bits >= 8) { if (count) memmove(elements, packed, count * ((size_t)bits / 8)); return; }
    size_t per = (size_t)(8 / bits);
    /* backwards, so that unpacking in place (elements == packed) reads each byte before overwriting it */
    for (size_t i = count; i-- > 0;) {
        int64_t v = (s[i / per] >> ((i % per) * (size_t)bits)) & ((1u << bits) - 1);
        d[i] = (uint8_t)(int8_t)(t == CORT_TYPE_INT4 || t == CORT_TYPE_INT2 ? cort_small_int_wrap(v, t) : v);
    }
}

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
    case CORT_TYPE_INT4: case CORT_TYPE_INT2: return ((const int8_t *)d)[i];
    case CORT_TYPE_UINT4: case CORT_TYPE_UINT2: return ((const uint8_t *)d)[i];
    default: return cort_type_is_small_float(t) ? cort_small_to_f64(((const uint8_t *)d)[i], t) : 0;
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
    case CORT_TYPE_INT4: case CORT_TYPE_INT2: return ((const int8_t *)d)[i];
    case CORT_TYPE_UINT4: case CORT_TYPE_UINT2: return ((const uint8_t *)d)[i];
    default: return cort_type_is_small_float(t) ? f2i64(cort_small_to_f64(((const uint8_t *)d)[i], t)) : 0;
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
    case CORT_TYPE_INT4: case CORT_TYPE_INT2: case CORT_TYPE_UINT4: case CORT_TYPE_UINT2:
        ((int8_t *)d)[i] = (int8_t)cort_small_int_wrap(f2i64(v), t); break;
    default:
        if (cort_type_is_small_float(t)) ((uint8_t *)d)[i] = cort_f64_to_small(v, t, 1, CORT_ROUND_UP);
        break;
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
    case CORT_TYPE_INT4: case CORT_TYPE_INT2: case CORT_TYPE_UINT4: case CORT_TYPE_UINT2:
        ((int8_t *)d)[i] = (int8_t)cort_small_int_wrap(v, t); break;
    default:
        if (cort_type_is_small_float(t)) ((uint8_t *)d)[i] = cort_f64_to_small((double)v, t, 1, CORT_ROUND_UP);
        break;
    }
}
