/* The element types added after ONNX 1.12: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float8e8m0,
 * float4e2m1, int4/uint4, int2/uint2. Conversions are checked against a brute-force reference (the
 * nearest of all 256 decoded values, ties to the even code) over every bit pattern, every midpoint
 * and random values; packing, the loader's packed forms, Cast and blocked Quantize/DequantizeLinear
 * run through sessions against loops written here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/types.h"
#include "core/alloc.h"
#include "onnx/onnx.h"

/* ---- independent reference: the format's fields, decoded by definition ---- */
typedef struct ref_fmt { cort_type t; int ebits, mbits, bias, nbits; int fnuz, ieee, no_nan; } ref_fmt;
static const ref_fmt FMTS[] = {
    { CORT_TYPE_FLOAT8E4M3FN, 4, 3, 7, 8, 0, 0, 0 },   { CORT_TYPE_FLOAT8E4M3FNUZ, 4, 3, 8, 8, 1, 0, 0 },
    { CORT_TYPE_FLOAT8E5M2, 5, 2, 15, 8, 0, 1, 0 },    { CORT_TYPE_FLOAT8E5M2FNUZ, 5, 2, 16, 8, 1, 0, 0 },
    { CORT_TYPE_FLOAT4E2M1, 2, 1, 1, 4, 0, 0, 1 },
};

static double pow2(int e) {   /* by repeated multiplication, not ldexp */
    double r = 1.0;
    for (; e > 0; e--) r *= 2.0;
    for (; e < 0; e++) r /= 2.0;
    return r;
}

/* NAN for NaN patterns, +-INFINITY for inf patterns. */
static double ref_decode(const ref_fmt *f, unsigned c) {
    unsigned sign = (c >> (f->nbits - 1)) & 1, e = (c >> f->mbits) & ((1u << f->ebits) - 1), m = c & ((1u << f->mbits) - 1);
    unsigned emax = (1u << f->ebits) - 1, mmax = (1u << f->mbits) - 1;
    if (f->fnuz && c == 0x80) return NAN;
    if (f->ieee && e == emax) return m ? NAN : (sign ? -INFINITY : INFINITY);
    if (!f->fnuz && !f->ieee && !f->no_nan && e == emax && m == mmax) return NAN;
    double frac = (double)m / (double)(1u << f->mbits);
    double v = e ? (1.0 + frac) * pow2((int)e - f->bias) : frac * pow2(1 - f->bias);
    return sign ? -v : v;
}

static unsigned ref_maxcode(const ref_fmt *f) {   /* the largest finite positive code */
    unsigned best = 0;
    for (unsigned c = 0; c < (1u << (f->nbits - 1)); c++) {
        double v = ref_decode(f, c);
        if (isfinite(v) && v > ref_decode(f, best)) best = c;
    }
    return best;
}

/* Expected code of x: nearest finite magnitude, ties to the even code; overflow per the spec. */
static unsigned ref_encode(const ref_fmt *f, double x, int saturate) {
    unsigned signbitc = 1u << (f->nbits - 1), maxc = ref_maxcode(f);
    unsigned sign = signbit(x) ? signbitc : 0;
    double a = fabs(x), max = ref_decode(f, maxc), ulp = max - ref_decode(f, maxc - 1);
    int over = isinf(a) || a > max + ulp / 2 || (a == max + ulp / 2 && (maxc & 1));
    if (over) {
        if (saturate || f->no_nan) return sign | maxc;
        if (f->ieee) return sign | (((1u << f->ebits) - 1) << f->mbits);
        return f->fnuz ? 0x80 : (sign | 0x7f);
    }
    unsigned best = 0;
    for (unsigned c = 1; c <= maxc; c++) {
        double d = fabs(ref_decode(f, c) - a), db = fabs(ref_decode(f, best) - a);
        if (d < db || (d == db && !(c & 1))) best = c;
    }
    if (best == 0 && f->fnuz) return 0;
    return sign | best;
}

static int same_value(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

static void test_float8_exhaustive(void) {
    for (size_t k = 0; k < sizeof FMTS / sizeof FMTS[0]; k++) {
        const ref_fmt *f = &FMTS[k];
        size_t bad_dec = 0, bad_rt = 0, bad_enc = 0;
        unsigned ncodes = 1u << f->nbits;
        for (unsigned c = 0; c < ncodes; c++) {
            double want = ref_decode(f, c), got = cort_small_to_f64((uint8_t)c, f->t);
            if (!same_value(got, want)) bad_dec++;
            /* every non-NaN pattern survives a round trip (inf only without saturation) */
            if (!isnan(want) && cort_f64_to_small(want, f->t, !isinf(want), CORT_ROUND_UP) != c) bad_rt++;
        }
        CHECK_MSG(bad_dec == 0, "%s: %zu of %u patterns decode differently", cort_type_name(f->t), bad_dec, ncodes);
        CHECK_MSG(bad_rt == 0, "%s: %zu patterns do not round-trip", cort_type_name(f->t), bad_rt);
        /* midpoints between neighbours (ties to even), one float step either side, and beyond max */
        unsigned maxc = ref_maxcode(f);
        for (unsigned c = 0; c < maxc; c++) {
            double lo = ref_decode(f, c), hi = ref_decode(f, c + 1), mid = (lo + hi) / 2;
            double xs[3] = { mid, nextafterf((float)mid, 0.0f), nextafterf((float)mid, INFINITY) };
            for (int s = 0; s < 2; s++)
                for (int j = 0; j < 3; j++) {
                    double x = s ? -xs[j] : xs[j];
                    for (int sat = 0; sat < 2; sat++) {
                        if (cort_f64_to_small(x, f->t, sat, CORT_ROUND_UP) != ref_encode(f, x, sat)) bad_enc++;
                        if (cort_f32_to_small((float)x, f->t, sat) != ref_encode(f, (float)x, sat)) bad_enc++;
                    }
                }
        }
        uint32_t seed = 12345;
        for (int i = 0; i < 20000; i++) {
            seed = seed * 1664525u + 1013904223u;
            double x = ((double)(seed >> 8) / 16777216.0 - 0.5) * 4 * ref_decode(f, maxc);   /* past max both sides */
            if (i % 4 == 0) x *= pow2(-(int)(seed % 20));
            for (int sat = 0; sat < 2; sat++) {
                if (cort_f64_to_small(x, f->t, sat, CORT_ROUND_UP) != ref_encode(f, x, sat)) bad_enc++;
                if (cort_f32_to_small((float)x, f->t, sat) != ref_encode(f, (float)x, sat)) bad_enc++;
            }
        }
        /* the float32 path against the double one over every 4099th float32 bit pattern */
        size_t bad32 = 0;
        for (uint64_t b = 0; b <= 0xffffffffu; b += 4099) {
            uint32_t b32 = (uint32_t)b;
            float xf;
            memcpy(&xf, &b32, 4);
            if (xf != xf) continue;
            for (int sat = 0; sat < 2; sat++)
                if (cort_f32_to_small(xf, f->t, sat) != cort_f64_to_small(xf, f->t, sat, CORT_ROUND_UP)) bad32++;
        }
        CHECK_MSG(bad32 == 0, "%s: float32 path differs from the double path %zu times", cort_type_name(f->t), bad32);
        double specials[] = { INFINITY, -INFINITY, 1e30, -1e30, 0.0, -0.0, 1e-30, -1e-30 };
        for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
            for (int sat = 0; sat < 2; sat++) {
                if (cort_f64_to_small(specials[i], f->t, sat, CORT_ROUND_UP) != ref_encode(f, specials[i], sat)) bad_enc++;
                if (cort_f32_to_small((float)specials[i], f->t, sat) != ref_encode(f, (float)specials[i], sat)) bad_enc++;
            }
        CHECK_MSG(bad_enc == 0, "%s: %zu conversions differ from the reference", cort_type_name(f->t), bad_enc);
        double nan_back = cort_small_to_f64(cort_f64_to_small(NAN, f->t, 1, CORT_ROUND_UP), f->t);
        if (f->no_nan) CHECK(cort_f64_to_small(NAN, f->t, 1, CORT_ROUND_UP) == 0x8);   /* ONNX's choice: -0 */
        else CHECK_MSG(isnan(nan_back), "%s: NaN does not stay NaN", cort_type_name(f->t));
    }
    /* anchors from the format definitions */
    CHECK(cort_f64_to_small(448.0, CORT_TYPE_FLOAT8E4M3FN, 1, 0) == 0x7e);
    CHECK(cort_f64_to_small(1.0, CORT_TYPE_FLOAT8E4M3FN, 1, 0) == 0x38);
    CHECK(cort_f64_to_small(240.0, CORT_TYPE_FLOAT8E4M3FNUZ, 1, 0) == 0x7f);
    CHECK(cort_f64_to_small(57344.0, CORT_TYPE_FLOAT8E5M2, 1, 0) == 0x7b);
    CHECK(cort_f64_to_small(1e6, CORT_TYPE_FLOAT8E5M2, 0, 0) == 0x7c);
    CHECK(cort_f64_to_small(-1e6, CORT_TYPE_FLOAT8E4M3FN, 0, 0) == 0xff);
    CHECK(cort_f64_to_small(-0.0, CORT_TYPE_FLOAT8E5M2FNUZ, 1, 0) == 0x00);
    CHECK(cort_f64_to_small(-0.0, CORT_TYPE_FLOAT8E4M3FN, 1, 0) == 0x80);
    CHECK(cort_f64_to_small(-3.5, CORT_TYPE_FLOAT4E2M1, 1, 0) == 0xe);   /* tie between 3 and 4 -> 4 (even) */
}

static void test_e8m0(void) {
    for (unsigned c = 0; c < 255; c++) {
        double v = cort_small_to_f64((uint8_t)c, CORT_TYPE_FLOAT8E8M0);
        CHECK(v == pow2((int)c - 127));
        for (int rm = 0; rm < 3; rm++) CHECK(cort_f64_to_small(v, CORT_TYPE_FLOAT8E8M0, 1, rm) == c);
    }
    CHECK(isnan(cort_small_to_f64(0xff, CORT_TYPE_FLOAT8E8M0)));
    CHECK(cort_f64_to_small(NAN, CORT_TYPE_FLOAT8E8M0, 1, 0) == 0xff);
    struct { double x; int rm; unsigned want; } cases[] = {
        { 1.1, CORT_ROUND_UP, 0x80 }, { 1.1, CORT_ROUND_DOWN, 0x7f }, { 1.1, CORT_ROUND_NEAREST, 0x7f },
        { 1.5, CORT_ROUND_NEAREST, 0x80 }, { 1.49, CORT_ROUND_NEAREST, 0x7f }, { 0.124, CORT_ROUND_UP, 0x7c },
        { 0.0, CORT_ROUND_UP, 0x00 }, { 3.0, CORT_ROUND_DOWN, 0x80 }, { 5.9, CORT_ROUND_NEAREST, 0x81 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(cort_f64_to_small(cases[i].x, CORT_TYPE_FLOAT8E8M0, 1, cases[i].rm) == cases[i].want,
                  "e8m0(%g, mode %d)", cases[i].x, cases[i].rm);
    CHECK(cort_f64_to_small(INFINITY, CORT_TYPE_FLOAT8E8M0, 1, 0) == 0xfe);
    CHECK(cort_f64_to_small(INFINITY, CORT_TYPE_FLOAT8E8M0, 0, 0) == 0xff);
    CHECK(cort_f64_to_small(1.5 * pow2(127), CORT_TYPE_FLOAT8E8M0, 0, CORT_ROUND_UP) == 0xff);
    CHECK(cort_f64_to_small(1.5 * pow2(127), CORT_TYPE_FLOAT8E8M0, 1, CORT_ROUND_UP) == 0xfe);
}

static void test_packing(void) {
    int8_t i4[7] = { -8, -1, 0, 7, 3, -5, 1 };
    uint8_t packed[4] = { 0xaa, 0xaa, 0xaa, 0xaa }, back[7];
    size_t nb = 0;
    CHECK_OK(cort_type_packed_bytes(CORT_TYPE_INT4, 7, &nb));
    CHECK(nb == 4);
    cort_type_pack(CORT_TYPE_INT4, i4, 7, packed);
    /* element 0 in the low nibble; the last byte's unused high nibble is zero */
    CHECK(packed[0] == 0xf8 && packed[1] == 0x70 && packed[2] == 0xb3 && packed[3] == 0x01);
    cort_type_unpack(CORT_TYPE_INT4, packed, 7, back);
    CHECK(memcmp(back, i4, 7) == 0);
    uint8_t u2[5] = { 0, 1, 2, 3, 1 }, p2[2], b2[5];
    CHECK_OK(cort_type_packed_bytes(CORT_TYPE_UINT2, 5, &nb));
    CHECK(nb == 2);
    cort_type_pack(CORT_TYPE_UINT2, u2, 5, p2);
    CHECK(p2[0] == 0xe4 && p2[1] == 0x01);
    cort_type_unpack(CORT_TYPE_UINT2, p2, 5, b2);
    CHECK(memcmp(b2, u2, 5) == 0);
    int8_t s2[4];
    cort_type_unpack(CORT_TYPE_INT2, p2, 4, s2);   /* 0,1,2,3 as int2: 0,1,-2,-1 */
    CHECK(s2[0] == 0 && s2[1] == 1 && s2[2] == -2 && s2[3] == -1);
    /* unpacking in place (the loader does) */
    uint8_t inplace[8] = { 0x21, 0x43, 0, 0, 0, 0, 0, 0 };
    cort_type_unpack(CORT_TYPE_UINT4, inplace, 4, inplace);
    CHECK(inplace[0] == 1 && inplace[1] == 2 && inplace[2] == 3 && inplace[3] == 4);
    CHECK(cort_type_bits(CORT_TYPE_FLOAT4E2M1) == 4 && cort_type_bits(CORT_TYPE_INT2) == 2 &&
          cort_type_bits(CORT_TYPE_FLOAT8E8M0) == 8 && cort_type_bits(CORT_TYPE_FLOAT) == 32);
    CHECK(cort_type_size(CORT_TYPE_INT4) == 1 && cort_type_size(CORT_TYPE_FLOAT8E5M2) == 1);
    CHECK(!strcmp(cort_type_name(CORT_TYPE_FLOAT8E4M3FNUZ), "float8e4m3fnuz") && !strcmp(cort_type_name(CORT_TYPE_INT2), "int2"));
    CHECK_CODE(cort_type_packed_bytes(CORT_TYPE_DOUBLE, SIZE_MAX / 4, &nb), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_CODE(cort_type_packed_bytes(CORT_TYPE_STRING, 1, &nb), CORT_ERROR_INVALID_ARGUMENT);
    CHECK_OK(cort_type_packed_bytes(CORT_TYPE_INT4, SIZE_MAX, &nb));
    CHECK(nb == SIZE_MAX / 2 + 1);
}

/* ---- protobuf building (tests only) ---- */

static void test_loader_forms(void) {
    /* int4 [5] = {-8, 7, -1, 0, 3}: raw_data packed, then the same in int32_data (one packed byte each) */
    const int8_t want[5] = { -8, 7, -1, 0, 3 };
    uint8_t packed[3];
    cort_type_pack(CORT_TYPE_INT4, want, 5, packed);
    for (int form = 0; form < 2; form++) {
        pb t = { 0 };
        pb_int(&t, 1, 5);
        pb_int(&t, 2, CORT_TYPE_INT4);
        if (form == 0) pb_bytes(&t, 9, packed, 3);
        else for (int i = 0; i < 3; i++) pb_int(&t, 5, packed[i]);
        cort_value *v = NULL;
        CHECK_OK(cort_tensor_parse(t.p, t.n, &v));
        if (v) {
            CHECK(cort_tensor_type(v) == CORT_TYPE_INT4 && cort_tensor_element_count(v) == 5);
            CHECK_MSG(memcmp(cort_tensor_data(v), want, 5) == 0, "int4 form %d unpacks wrong", form);
            void *ser = NULL;
            size_t len = 0;
            CHECK_OK(cort_value_serialize(v, "t", &ser, &len));
            cort_value *w = NULL;
            if (ser) CHECK_OK(cort_tensor_parse(ser, len, &w));
            if (w) CHECK(memcmp(cort_tensor_data(w), want, 5) == 0);
            cort_value_release(w);
            cort_free(ser);
            cort_value_release(v);
        }
        free(t.p);
    }
    /* wrong packed size: 5 int4 need 3 bytes */
    const uint8_t five[5] = { packed[0], packed[1], packed[2], 0, 0 };
    pb t = { 0 };
    pb_int(&t, 1, 5);
    pb_int(&t, 2, CORT_TYPE_UINT4);
    pb_bytes(&t, 9, five, 5);
    cort_value *v = NULL;
    CHECK_ERR(cort_tensor_parse(t.p, t.n, &v), CORT_ERROR_INVALID_MODEL, "needs 3");
    free(t.p);
    /* float8 in int32_data: one value per entry */
    pb f = { 0 };
    pb_int(&f, 1, 2);
    pb_int(&f, 2, CORT_TYPE_FLOAT8E5M2);
    pb_int(&f, 5, 0x3c);
    pb_int(&f, 5, 0xfc);
    CHECK_OK(cort_tensor_parse(f.p, f.n, &v));
    if (v) {
        const uint8_t *d = cort_tensor_data(v);
        CHECK(cort_small_to_f64(d[0], CORT_TYPE_FLOAT8E5M2) == 1.0 && cort_small_to_f64(d[1], CORT_TYPE_FLOAT8E5M2) == -INFINITY);
        cort_value_release(v);
    }
    free(f.p);
}

/* ---- sessions ---- */
typedef struct attr_spec { const char *name; int type; int64_t i; const char *s; } attr_spec;

static void *make_model(const char *op, int opset, int n_in, const int *in_elem, int out_elem, const attr_spec *attrs,
                        int n_attrs, size_t *len) {
    pb m = { 0 }, g = { 0 }, node = { 0 }, os = { 0 };
    char name[16];
    pb_int(&m, 1, 10);
    pb_str(&os, 1, "");
    pb_int(&os, 2, opset);
    pb_sub(&m, 8, &os);
    for (int i = 0; i < n_in; i++) { snprintf(name, sizeof name, "x%d", i); pb_str(&node, 1, name); }
    pb_str(&node, 2, "y0");
    pb_str(&node, 3, "n");
    pb_str(&node, 4, op);
    for (int a = 0; a < n_attrs; a++) {
        pb at = { 0 };
        pb_str(&at, 1, attrs[a].name);
        pb_int(&at, 20, attrs[a].type);
        if (attrs[a].type == 2) pb_int(&at, 3, attrs[a].i);
        else pb_str(&at, 4, attrs[a].s);
        pb_sub(&node, 5, &at);
    }
    pb_sub(&g, 1, &node);
    pb_str(&g, 2, "g");
    for (int i = 0; i <= n_in; i++) {
        pb vi = { 0 }, tp = { 0 }, tt = { 0 };
        snprintf(name, sizeof name, i < n_in ? "x%d" : "y0", i);
        pb_str(&vi, 1, name);
        pb_int(&tt, 1, i < n_in ? in_elem[i] : out_elem);
        pb_sub(&tp, 1, &tt);
        pb_sub(&vi, 2, &tp);
        pb_sub(&g, i < n_in ? 11 : 12, &vi);
    }
    pb_sub(&m, 7, &g);
    *len = m.n;
    return m.p;
}

static cort_value *run1(void *bytes, size_t len, int n_in, cort_value **in) {
    cort_session *s = NULL;
    cort_value *out = NULL;
    const char *names[3] = { "x0", "x1", "x2" }, *on = "y0";
    if (!CHECK_OK(cort_session_create_from_memory(bytes, len, NULL, &s))) return NULL;
    CHECK_OK(cort_session_run(s, NULL, names, in, (size_t)n_in, &on, 1, &out));
    cort_session_release(s);
    return out;
}

static cort_value *tensor(cort_type t, const int64_t *shape, size_t rank, const void *data) {
    cort_value *v = NULL;
    if (cort_tensor_create(t, shape, rank, &v)) return NULL;
    memcpy(cort_tensor_data(v), data, cort_tensor_bytes(v));
    return v;
}

static void test_cast_sessions(void) {
    float x[12] = { 0.48f, -0.0f, 1e6f, -1e6f, NAN, INFINITY, 1e-7f, 3.3f, -17.0f, 300.0f, 0.0625f, 465.0f };
    int64_t sh[1] = { 12 };
    for (size_t k = 0; k < 4; k++)
        for (int sat = 0; sat < 2; sat++) {
            const ref_fmt *f = &FMTS[k];
            attr_spec at[2] = { { "to", 2, f->t, NULL }, { "saturate", 2, sat, NULL } };
            size_t len;
            void *m = make_model("Cast", 19, 1, (const int[]){ CORT_TYPE_FLOAT }, f->t, at, 2, &len);
            cort_value *in = tensor(CORT_TYPE_FLOAT, sh, 1, x);
            cort_value *out = run1(m, len, 1, &in);
            if (out) {
                const uint8_t *d = cort_tensor_data(out);
                size_t bad = 0;
                for (int i = 0; i < 12; i++)
                    if (isnan(x[i]) ? !isnan(cort_small_to_f64(d[i], f->t)) : d[i] != ref_encode(f, x[i], sat)) bad++;
                CHECK_MSG(cort_tensor_type(out) == f->t && bad == 0, "Cast float -> %s saturate %d: %zu wrong",
                          cort_type_name(f->t), sat, bad);
                /* and back to float: the decoded values */
                attr_spec back = { "to", 2, CORT_TYPE_FLOAT, NULL };
                size_t len2;
                void *m2 = make_model("Cast", 21, 1, (const int[]){ f->t }, CORT_TYPE_FLOAT, &back, 1, &len2);
                cort_value *fl = run1(m2, len2, 1, &out);
                if (fl) {
                    const float *y = cort_tensor_data(fl);
                    size_t bad2 = 0;
                    for (int i = 0; i < 12; i++)
                        if (!same_value(y[i], ref_decode(f, d[i]))) bad2++;
                    CHECK_MSG(bad2 == 0, "Cast %s -> float: %zu wrong", cort_type_name(f->t), bad2);
                }
                cort_value_release(fl);
                free(m2);
            }
            cort_value_release(in);
            cort_value_release(out);
            free(m);
        }
    /* int4 wraps like a C conversion; int4 -> float is exact */
    float xi[6] = { -9, -8, 7, 8, 15.7f, -1 };
    int8_t want4[6] = { 7, -8, 7, -8, -1, -1 };
    attr_spec to4 = { "to", 2, CORT_TYPE_INT4, NULL };
    size_t len;
    void *m = make_model("Cast", 21, 1, (const int[]){ CORT_TYPE_FLOAT }, CORT_TYPE_INT4, &to4, 1, &len);
    cort_value *in = tensor(CORT_TYPE_FLOAT, (const int64_t[]){ 6 }, 1, xi);
    cort_value *out = run1(m, len, 1, &in);
    if (out) CHECK(memcmp(cort_tensor_data(out), want4, 6) == 0);
    cort_value_release(in);
    cort_value_release(out);
    free(m);
    /* float8e8m0 with round_mode (Cast-24) */
    float xe[4] = { 1.1f, 3.0f, 0.3f, 6.0f };
    const char *modes[3] = { "up", "down", "nearest" };
    const uint8_t wante[3][4] = { { 0x80, 0x81, 0x7e, 0x82 }, { 0x7f, 0x80, 0x7d, 0x81 }, { 0x7f, 0x81, 0x7d, 0x82 } };
    for (int r = 0; r < 3; r++) {
        attr_spec at[2] = { { "to", 2, CORT_TYPE_FLOAT8E8M0, NULL }, { "round_mode", 3, 0, modes[r] } };
        m = make_model("Cast", 24, 1, (const int[]){ CORT_TYPE_FLOAT }, CORT_TYPE_FLOAT8E8M0, at, 2, &len);
        in = tensor(CORT_TYPE_FLOAT, (const int64_t[]){ 4 }, 1, xe);
        out = run1(m, len, 1, &in);
        if (out) CHECK_MSG(memcmp(cort_tensor_data(out), wante[r], 4) == 0, "e8m0 round_mode %s", modes[r]);
        cort_value_release(in);
        cort_value_release(out);
        free(m);
    }
    /* bfloat16: ONNX's data truncates up to opset 18, its reference rounds to nearest even from 19 */
    uint32_t bits = 0x3f808001u;
    float xb;
    memcpy(&xb, &bits, 4);
    for (int opset = 13; opset <= 19; opset += 6) {
        attr_spec tb = { "to", 2, CORT_TYPE_BFLOAT16, NULL };
        m = make_model("Cast", opset, 1, (const int[]){ CORT_TYPE_FLOAT }, CORT_TYPE_BFLOAT16, &tb, 1, &len);
        in = tensor(CORT_TYPE_FLOAT, NULL, 0, &xb);
        out = run1(m, len, 1, &in);
        if (out) CHECK_MSG(*(const uint16_t *)cort_tensor_data(out) == (opset < 19 ? 0x3f80 : 0x3f81), "bf16 opset %d", opset);
        cort_value_release(in);
        cort_value_release(out);
        free(m);
    }
    attr_spec badm[2] = { { "to", 2, CORT_TYPE_FLOAT8E8M0, NULL }, { "round_mode", 3, 0, "sideways" } };
    m = make_model("Cast", 24, 1, (const int[]){ CORT_TYPE_FLOAT }, CORT_TYPE_FLOAT8E8M0, badm, 2, &len);
    cort_session *s = NULL;
    CHECK_ERR(cort_session_create_from_memory(m, len, NULL, &s), CORT_ERROR_INVALID_MODEL, "round_mode");
    free(m);
}

/* QuantizeLinear-21 blocked to int4 and DequantizeLinear back, against loops written here. */
static void test_qdq_blocked(void) {
    enum { R = 3, C = 5, B = 2, NB = 3 };
    float x[R * C], sc[R * NB];
    int8_t zp[R * NB];
    uint32_t seed = 99;
    for (int i = 0; i < R * C; i++) { seed = seed * 1664525u + 1013904223u; x[i] = (float)((int)(seed >> 20) % 41 - 20) * 0.37f; }
    for (int i = 0; i < R * NB; i++) { sc[i] = 0.5f + 0.25f * (float)i; zp[i] = (int8_t)(i % 5 - 2); }
    int8_t want[R * C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            int e = r * NB + c / B;
            double q = rint((double)(x[r * C + c] / sc[e])) + zp[e];
            want[r * C + c] = (int8_t)(q < -8 ? -8 : q > 7 ? 7 : q);
        }
    attr_spec at[2] = { { "axis", 2, 1, NULL }, { "block_size", 2, B, NULL } };
    size_t len;
    int ins[3] = { CORT_TYPE_FLOAT, CORT_TYPE_FLOAT, CORT_TYPE_INT4 };
    void *m = make_model("QuantizeLinear", 21, 3, ins, CORT_TYPE_INT4, at, 2, &len);
    cort_value *in[3] = { tensor(CORT_TYPE_FLOAT, (const int64_t[]){ R, C }, 2, x),
                          tensor(CORT_TYPE_FLOAT, (const int64_t[]){ R, NB }, 2, sc),
                          tensor(CORT_TYPE_INT4, (const int64_t[]){ R, NB }, 2, zp) };
    cort_value *q = run1(m, len, 3, in);
    free(m);
    if (q) {
        CHECK(cort_tensor_type(q) == CORT_TYPE_INT4);
        CHECK_MSG(memcmp(cort_tensor_data(q), want, sizeof want) == 0, "blocked int4 quantization differs");
        int dins[3] = { CORT_TYPE_INT4, CORT_TYPE_FLOAT, CORT_TYPE_INT4 };
        m = make_model("DequantizeLinear", 21, 3, dins, CORT_TYPE_FLOAT, at, 2, &len);
        cort_value *din[3] = { q, in[1], in[2] };
        cort_value *y = run1(m, len, 3, din);
        free(m);
        if (y) {
            float wy[R * C];
            for (int i = 0; i < R * C; i++) { int e = (i / C) * NB + (i % C) / B; wy[i] = (float)(want[i] - zp[e]) * sc[e]; }
            CHECK_CLOSE((const float *)cort_tensor_data(y), wy, R * C, TU_TOL(1e-6, 0, 0), "blocked dequantize");
        }
        cort_value_release(y);
        /* a scale of the wrong blocked shape is rejected with the shapes in the message */
        cort_value *bad = tensor(CORT_TYPE_FLOAT, (const int64_t[]){ R, 2 }, 2, sc);
        m = make_model("DequantizeLinear", 21, 2, dins, CORT_TYPE_FLOAT, at, 2, &len);
        cort_session *s = NULL;
        CHECK_OK(cort_session_create_from_memory(m, len, NULL, &s));
        if (s) {
            const char *names[2] = { "x0", "x1" }, *on = "y0";
            cort_value *din2[2] = { q, bad }, *o = NULL;
            CHECK_ERR(cort_session_run(s, NULL, names, din2, 2, &on, 1, &o), CORT_ERROR_INVALID_ARGUMENT, "block_size");
            cort_session_release(s);
        }
        free(m);
        cort_value_release(bad);
    }
    cort_value_release(q);
    for (int i = 0; i < 3; i++) cort_value_release(in[i]);
    /* per-tensor uint8 and per-axis int4 dequantization (the one-byte table path walks all modes) */
    {
        uint8_t xu[7] = { 0, 1, 127, 128, 200, 254, 255 }, zu = 128;
        float s0 = 0.5f, wy[7];
        for (int i = 0; i < 7; i++) wy[i] = (float)((int)xu[i] - 128) * 0.5f;
        int dins[3] = { CORT_TYPE_UINT8, CORT_TYPE_FLOAT, CORT_TYPE_UINT8 };
        m = make_model("DequantizeLinear", 21, 3, dins, CORT_TYPE_FLOAT, NULL, 0, &len);
        cort_value *din[3] = { tensor(CORT_TYPE_UINT8, (const int64_t[]){ 7 }, 1, xu), tensor(CORT_TYPE_FLOAT, NULL, 0, &s0),
                               tensor(CORT_TYPE_UINT8, NULL, 0, &zu) };
        cort_value *y = run1(m, len, 3, din);
        if (y) CHECK_CLOSE((const float *)cort_tensor_data(y), wy, 7, TU_TOL(0, 0, 0), "per-tensor uint8 dequantize");
        cort_value_release(y);
        for (int i = 0; i < 3; i++) cort_value_release(din[i]);
        free(m);
        int8_t x4[6] = { -8, 7, 0, 3, -1, 5 }, z4[2] = { 1, -2 };
        float s4[2] = { 0.25f, 3.0f }, w4[6];
        for (int i = 0; i < 6; i++) w4[i] = (float)(x4[i] - z4[i / 3]) * s4[i / 3];
        attr_spec ax0 = { "axis", 2, 0, NULL };
        int dins4[3] = { CORT_TYPE_INT4, CORT_TYPE_FLOAT, CORT_TYPE_INT4 };
        m = make_model("DequantizeLinear", 21, 3, dins4, CORT_TYPE_FLOAT, &ax0, 1, &len);
        cort_value *din4[3] = { tensor(CORT_TYPE_INT4, (const int64_t[]){ 2, 3 }, 2, x4), tensor(CORT_TYPE_FLOAT, (const int64_t[]){ 2 }, 1, s4),
                                tensor(CORT_TYPE_INT4, (const int64_t[]){ 2 }, 1, z4) };
        y = run1(m, len, 3, din4);
        if (y) CHECK_CLOSE((const float *)cort_tensor_data(y), w4, 6, TU_TOL(0, 0, 0), "per-axis int4 dequantize");
        cort_value_release(y);
        for (int i = 0; i < 3; i++) cort_value_release(din4[i]);
        free(m);
    }
    /* float8 quantization saturates by default, not with saturate=0 */
    float xf[3] = { 1.0f, 1000.0f, -1000.0f }, s1 = 1.0f;
    for (int sat = 0; sat < 2; sat++) {
        attr_spec a1 = { "saturate", 2, sat, NULL };
        int fins[3] = { CORT_TYPE_FLOAT, CORT_TYPE_FLOAT, CORT_TYPE_FLOAT8E4M3FN };
        uint8_t z0 = 0;
        m = make_model("QuantizeLinear", 19, 3, fins, CORT_TYPE_FLOAT8E4M3FN, &a1, 1, &len);
        cort_value *fin[3] = { tensor(CORT_TYPE_FLOAT, (const int64_t[]){ 3 }, 1, xf), tensor(CORT_TYPE_FLOAT, NULL, 0, &s1),
                               tensor(CORT_TYPE_FLOAT8E4M3FN, NULL, 0, &z0) };
        cort_value *y = run1(m, len, 3, fin);
        free(m);
        if (y) {
            const uint8_t *d = cort_tensor_data(y);
            CHECK(d[0] == 0x38);
            CHECK(sat ? (d[1] == 0x7e && d[2] == 0xfe) : (d[1] == 0x7f && d[2] == 0xff));
        }
        cort_value_release(y);
        for (int i = 0; i < 3; i++) cort_value_release(fin[i]);
    }
}

/* QLinearMatMul-21 on float8e4m3fn operands: y = e4m3fn(sum(a*b) * sa*sb/sy), saturating. */
static void test_qlinear_matmul_float8(void) {
    enum { M = 2, K = 3, N = 2 };
    const ref_fmt *f = &FMTS[0];
    uint8_t a[M * K], b[K * N], z = 0;
    for (int i = 0; i < M * K; i++) a[i] = (uint8_t)(0x30 + 5 * i);          /* 0.5 .. ~1.6, mixed */
    for (int i = 0; i < K * N; i++) b[i] = (uint8_t)((i & 1 ? 0x80 : 0) | (0x38 + 3 * i));
    float sa = 2.0f, sb = 0.5f, sy = 0.25f;
    int ins[8] = { CORT_TYPE_FLOAT8E4M3FN, CORT_TYPE_FLOAT, CORT_TYPE_FLOAT8E4M3FN, CORT_TYPE_FLOAT8E4M3FN,
                   CORT_TYPE_FLOAT, CORT_TYPE_FLOAT8E4M3FN, CORT_TYPE_FLOAT, CORT_TYPE_FLOAT8E4M3FN };
    size_t len;
    void *m = make_model("QLinearMatMul", 21, 8, ins, CORT_TYPE_FLOAT8E4M3FN, NULL, 0, &len);
    cort_value *in[8] = { tensor(CORT_TYPE_FLOAT8E4M3FN, (const int64_t[]){ M, K }, 2, a), tensor(CORT_TYPE_FLOAT, NULL, 0, &sa),
                          tensor(CORT_TYPE_FLOAT8E4M3FN, NULL, 0, &z), tensor(CORT_TYPE_FLOAT8E4M3FN, (const int64_t[]){ K, N }, 2, b),
                          tensor(CORT_TYPE_FLOAT, NULL, 0, &sb), tensor(CORT_TYPE_FLOAT8E4M3FN, NULL, 0, &z),
                          tensor(CORT_TYPE_FLOAT, NULL, 0, &sy), tensor(CORT_TYPE_FLOAT8E4M3FN, NULL, 0, &z) };
    cort_session *s = NULL;
    cort_value *y = NULL;
    const char *names[8] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" }, *on = "y0";
    CHECK_OK(cort_session_create_from_memory(m, len, NULL, &s));
    if (s) CHECK_OK(cort_session_run(s, NULL, names, in, 8, &on, 1, &y));
    if (y) {
        const uint8_t *d = cort_tensor_data(y);
        size_t bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int k = 0; k < K; k++) acc += ref_decode(f, a[i * K + k]) * ref_decode(f, b[k * N + j]);
                if (d[i * N + j] != ref_encode(f, acc * sa * sb / sy, 1)) bad++;
            }
        CHECK_MSG(cort_tensor_type(y) == CORT_TYPE_FLOAT8E4M3FN && bad == 0, "float8 QLinearMatMul: %zu wrong", bad);
    }
    cort_value_release(y);
    cort_session_release(s);
    for (int i = 0; i < 8; i++) cort_value_release(in[i]);
    free(m);
}

/* Data movement on the new types: Transpose of int4 and BitCast between 4-bit types. */
static void test_movement(void) {
    int8_t x[6] = { -8, -1, 0, 1, 5, 7 };
    attr_spec none = { "perm", 0, 0, NULL };
    (void)none;
    size_t len;
    void *m = make_model("Transpose", 21, 1, (const int[]){ CORT_TYPE_INT4 }, CORT_TYPE_INT4, NULL, 0, &len);
    cort_value *in = tensor(CORT_TYPE_INT4, (const int64_t[]){ 2, 3 }, 2, x);
    cort_value *out = run1(m, len, 1, &in);
    const int8_t want[6] = { -8, 1, -1, 5, 0, 7 };
    if (out) CHECK(cort_tensor_rank(out) == 2 && memcmp(cort_tensor_data(out), want, 6) == 0);
    cort_value_release(out);
    free(m);
    attr_spec to = { "to", 2, CORT_TYPE_UINT4, NULL };
    m = make_model("BitCast", 26, 1, (const int[]){ CORT_TYPE_INT4 }, CORT_TYPE_UINT4, &to, 1, &len);
    out = run1(m, len, 1, &in);
    const uint8_t wantu[6] = { 8, 15, 0, 1, 5, 7 };
    if (out) CHECK(cort_tensor_type(out) == CORT_TYPE_UINT4 && memcmp(cort_tensor_data(out), wantu, 6) == 0);
    cort_value_release(out);
    free(m);
    attr_spec tof = { "to", 2, CORT_TYPE_FLOAT, NULL };
    m = make_model("BitCast", 26, 1, (const int[]){ CORT_TYPE_INT4 }, CORT_TYPE_FLOAT, &tof, 1, &len);
    cort_session *s = NULL;
    CHECK_ERR(cort_session_create_from_memory(m, len, NULL, &s), CORT_ERROR_INVALID_MODEL, "bits");
    free(m);
    cort_value_release(in);
}

int main(void) {
    test_float8_exhaustive();
    test_e8m0();
    test_packing();
    test_loader_forms();
    test_cast_sessions();
    test_qdq_blocked();
    test_movement();
    test_qlinear_matmul_float8();
    return tu_finish();
}
