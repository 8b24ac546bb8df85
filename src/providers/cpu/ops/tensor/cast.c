/* Cast and CastLike between all numeric types, bool and string.
 * Float -> integer conversions saturate to int64/uint64 (NaN -> 0) and then wrap like C integer
 * conversions, so no input value is undefined behaviour. Numbers are printed like numpy's str():
 * the shortest digits that round-trip in the source type. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../math/elementwise.h"
#include "../math/elementwise_ops.h"
#include "../../../../core/alloc.h"

/* Cast to bfloat16 truncates the float (NaN kept quiet), as the ONNX reference and its backend
 * test data do; arithmetic on bfloat16 elsewhere rounds to nearest even. */
static inline uint16_t ew_bf16_trunc(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)(x >> 16);
}

/* ---- numeric <-> numeric: one function per (source, destination) pair ----
 * X(sfx, T, CT, KIND, LD, ST, E): KIND is B (bool), I (integer up to int64), Q (uint64), F (float). */
#define EW_CT_A(X) \
    X(b, uint8_t, uint8_t, B, EW_ID, EW_ID, BOOL) X(i8, int8_t, int8_t, I, EW_ID, EW_ID, INT8) \
    X(i16, int16_t, int16_t, I, EW_ID, EW_ID, INT16) X(i32, int32_t, int32_t, I, EW_ID, EW_ID, INT32) \
    X(i64, int64_t, int64_t, I, EW_ID, EW_ID, INT64) X(u8, uint8_t, uint8_t, I, EW_ID, EW_ID, UINT8) \
    X(u16, uint16_t, uint16_t, I, EW_ID, EW_ID, UINT16) X(u32, uint32_t, uint32_t, I, EW_ID, EW_ID, UINT32) \
    X(u64, uint64_t, uint64_t, Q, EW_ID, EW_ID, UINT64) X(f32, float, float, F, EW_ID, EW_ID, FLOAT) \
    X(f64, double, double, F, EW_ID, EW_ID, DOUBLE) \
    X(f16, uint16_t, float, F, cort_f16_to_f32, cort_f32_to_f16, FLOAT16) \
    X(bf16, uint16_t, float, F, cort_bf16_to_f32, ew_bf16_trunc, BFLOAT16)
#define EW_CT_B(X, ...) \
    X(__VA_ARGS__, b, uint8_t, uint8_t, B, EW_ID, EW_ID, BOOL) X(__VA_ARGS__, i8, int8_t, int8_t, I, EW_ID, EW_ID, INT8) \
    X(__VA_ARGS__, i16, int16_t, int16_t, I, EW_ID, EW_ID, INT16) X(__VA_ARGS__, i32, int32_t, int32_t, I, EW_ID, EW_ID, INT32) \
    X(__VA_ARGS__, i64, int64_t, int64_t, I, EW_ID, EW_ID, INT64) X(__VA_ARGS__, u8, uint8_t, uint8_t, I, EW_ID, EW_ID, UINT8) \
    X(__VA_ARGS__, u16, uint16_t, uint16_t, I, EW_ID, EW_ID, UINT16) X(__VA_ARGS__, u32, uint32_t, uint32_t, I, EW_ID, EW_ID, UINT32) \
    X(__VA_ARGS__, u64, uint64_t, uint64_t, Q, EW_ID, EW_ID, UINT64) X(__VA_ARGS__, f32, float, float, F, EW_ID, EW_ID, FLOAT) \
    X(__VA_ARGS__, f64, double, double, F, EW_ID, EW_ID, DOUBLE) \
    X(__VA_ARGS__, f16, uint16_t, float, F, cort_f16_to_f32, cort_f32_to_f16, FLOAT16) \
    X(__VA_ARGS__, bf16, uint16_t, float, F, cort_bf16_to_f32, ew_bf16_trunc, BFLOAT16)

/* EW_CV_<source kind>_<destination kind>(destination compute type, value) */
#define EW_CV_B_B(DT, x) ((DT)((x) != 0))
#define EW_CV_B_I(DT, x) ((DT)((x) != 0))
#define EW_CV_B_Q(DT, x) ((DT)((x) != 0))
#define EW_CV_B_F(DT, x) ((DT)((x) != 0))
#define EW_CV_I_B(DT, x) ((DT)((x) != 0))
#define EW_CV_Q_B(DT, x) ((DT)((x) != 0))
#define EW_CV_F_B(DT, x) ((DT)((x) != 0))
#define EW_CV_I_I(DT, x) ((DT)(x))
#define EW_CV_I_Q(DT, x) ((DT)(x))
#define EW_CV_Q_I(DT, x) ((DT)(x))
#define EW_CV_Q_Q(DT, x) ((DT)(x))
#define EW_CV_I_F(DT, x) ((DT)(x))
#define EW_CV_Q_F(DT, x) ((DT)(x))
#define EW_CV_F_F(DT, x) ((DT)(x))
#define EW_CV_F_I(DT, x) ((DT)ew_f2i64((double)(x)))
#define EW_CV_F_Q(DT, x) ((DT)ew_f2u64((double)(x)))

#define EW_CAST_PAIR(s1, T1, C1, K1, LD1, ST1, E1, s2, T2, C2, K2, LD2, ST2, E2) \
    static void cast_##s1##_##s2(const ew_params *P, size_t n, void *out_, const void *in_) { \
        const T1 *a = (const T1 *)in_; T2 *o = (T2 *)out_; (void)P; \
        for (size_t i = 0; i < n; i++) o[i] = ST2(EW_CV_##K1##_##K2(C2, LD1(a[i]))); \
    }
#define EW_CAST_ROW(s1, T1, C1, K1, LD1, ST1, E1) EW_CT_B(EW_CAST_PAIR, s1, T1, C1, K1, LD1, ST1, E1)
EW_CT_A(EW_CAST_ROW)

#define EW_CAST_ENTRY(s1, T1, C1, K1, LD1, ST1, E1, s2, T2, C2, K2, LD2, ST2, E2) \
    [CORT_TYPE_##E1][CORT_TYPE_##E2] = cast_##s1##_##s2,
#define EW_CAST_TROW(s1, T1, C1, K1, LD1, ST1, E1) EW_CT_B(EW_CAST_ENTRY, s1, T1, C1, K1, LD1, ST1, E1)
static const ew_map_fn cast_tbl[EW_NTYPES][EW_NTYPES] = { EW_CT_A(EW_CAST_TROW) };

/* ---- numbers -> strings ---- */

/* Whether s parses back to v in the source type. */
static int ew_roundtrips(const char *s, double v, cort_type t) {
    switch (t) {
    case CORT_TYPE_FLOAT: return strtof(s, NULL) == (float)v;
    case CORT_TYPE_FLOAT16: return cort_f32_to_f16(strtof(s, NULL)) == cort_f32_to_f16((float)v);
    case CORT_TYPE_BFLOAT16: return cort_f32_to_bf16(strtof(s, NULL)) == cort_f32_to_bf16((float)v);
    default: return strtod(s, NULL) == v;
    }
}

/* numpy str() of a float value of type t: shortest round-trip digits, positional for
 * 1e-4 <= |v| < 1e16, else scientific with a two-digit exponent ("1e-05"). */
static void ew_format_real(char *buf, size_t cap, double v, cort_type t) {
    if (v != v) { snprintf(buf, cap, "nan"); return; }
    if (isinf(v)) { snprintf(buf, cap, v > 0 ? "inf" : "-inf"); return; }
    if (v == 0) { snprintf(buf, cap, signbit(v) ? "-0.0" : "0.0"); return; }
    char tmp[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (ew_roundtrips(tmp, v, t)) break;
    }
    /* split "[-]d.ddde[+-]XX" into sign, digits and exponent */
    char digits[24];
    size_t nd = 0;
    const char *c = tmp;
    int neg = (*c == '-');
    if (neg) c++;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && nd < sizeof digits - 1) digits[nd++] = *c;
    int e10 = (*c == 'e') ? atoi(c + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    double av = fabs(v);
    size_t o = 0;
#define EW_PUT(ch) do { if (o + 1 < cap) buf[o++] = (ch); } while (0)
    if (neg) EW_PUT('-');
    if (av >= 1e-4 && av < 1e16) {
        if (e10 >= 0) {
            for (int i = 0; i <= e10; i++) EW_PUT((size_t)i < nd ? digits[i] : '0');
            EW_PUT('.');
            if ((size_t)e10 + 1 >= nd) EW_PUT('0');
            else for (size_t i = (size_t)e10 + 1; i < nd; i++) EW_PUT(digits[i]);
        } else {
            EW_PUT('0'); EW_PUT('.');
            for (int i = 0; i < -e10 - 1; i++) EW_PUT('0');
            for (size_t i = 0; i < nd; i++) EW_PUT(digits[i]);
        }
        buf[o] = 0;
    } else {
        EW_PUT(digits[0]);
        if (nd > 1) { EW_PUT('.'); for (size_t i = 1; i < nd; i++) EW_PUT(digits[i]); }
        buf[o] = 0;
        snprintf(buf + o, cap - o, "e%c%02d", e10 < 0 ? '-' : '+', e10 < 0 ? -e10 : e10);
    }
#undef EW_PUT
}

static void ew_format_value(char *buf, size_t cap, const void *data, cort_type t, size_t i) {
    switch (t) {
    case CORT_TYPE_FLOAT: ew_format_real(buf, cap, ((const float *)data)[i], t); break;
    case CORT_TYPE_DOUBLE: ew_format_real(buf, cap, ((const double *)data)[i], t); break;
    case CORT_TYPE_FLOAT16: ew_format_real(buf, cap, cort_f16_to_f32(((const uint16_t *)data)[i]), t); break;
    case CORT_TYPE_BFLOAT16: ew_format_real(buf, cap, cort_bf16_to_f32(((const uint16_t *)data)[i]), t); break;
    case CORT_TYPE_BOOL: snprintf(buf, cap, "%s", ((const uint8_t *)data)[i] ? "True" : "False"); break;
    case CORT_TYPE_UINT64: snprintf(buf, cap, "%llu", (unsigned long long)((const uint64_t *)data)[i]); break;
    default: snprintf(buf, cap, "%lld", (long long)cort_load_i64(data, t, i)); break;
    }
}

/* ---- strings -> numbers ---- */

static int ew_all_space(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return *s == 0;
}

/* Parses s into element i of data (type t). Returns 0 on success. */
static int ew_parse_value(const char *s, void *data, cort_type t, size_t i) {
    char *end = NULL;
    if (!s) s = "";
    if (t == CORT_TYPE_BOOL) {
        if (!strcasecmp(s, "true")) { ((uint8_t *)data)[i] = 1; return 0; }
        if (!strcasecmp(s, "false")) { ((uint8_t *)data)[i] = 0; return 0; }
        double d = strtod(s, &end);
        if (end == s || !ew_all_space(end)) return 1;
        ((uint8_t *)data)[i] = d != 0;
        return 0;
    }
    if (t == CORT_TYPE_FLOAT || t == CORT_TYPE_FLOAT16 || t == CORT_TYPE_BFLOAT16) {
        float f = strtof(s, &end);   /* accepts "NaN", "INF", "+INF", "-inf" */
        if (end == s || !ew_all_space(end)) return 1;
        if (t == CORT_TYPE_FLOAT) ((float *)data)[i] = f;
        else ((uint16_t *)data)[i] = t == CORT_TYPE_FLOAT16 ? cort_f32_to_f16(f) : ew_bf16_trunc(f);
        return 0;
    }
    if (t == CORT_TYPE_DOUBLE) {
        double d = strtod(s, &end);
        if (end == s || !ew_all_space(end)) return 1;
        ((double *)data)[i] = d;
        return 0;
    }
    /* integers: exact parse first, then through double for forms like "1e3" or "2.5" */
    errno = 0;
    if (t == CORT_TYPE_UINT64) {
        unsigned long long u = strtoull(s, &end, 10);
        if (end != s && ew_all_space(end) && errno == 0 && !strchr(s, '-')) { ((uint64_t *)data)[i] = u; return 0; }
    } else {
        long long v = strtoll(s, &end, 10);
        if (end != s && ew_all_space(end) && errno == 0) { cort_store_i64(data, t, i, v); return 0; }
    }
    double d = strtod(s, &end);
    if (end == s || !ew_all_space(end)) return 1;
    if (t == CORT_TYPE_UINT64) ((uint64_t *)data)[i] = ew_f2u64(d);
    else cort_store_i64(data, t, i, ew_f2i64(d));
    return 0;
}

/* ---- the types added after ONNX 1.12: one element at a time through double or int64 ----
 * P->flag: source type, P->flag2: destination, P->lo_i: saturate, P->hi_i: e8m0 round mode. */
static void cast_small(const ew_params *P, size_t n, void *out, const void *in) {
    cort_type from = (cort_type)P->flag, to = (cort_type)P->flag2;
    int sat = (int)P->lo_i, rm = (int)P->hi_i;
    if (to == CORT_TYPE_FLOAT && (cort_type_is_small_float(from) || cort_type_is_small_int(from))) {
        float lut[256];   /* one-byte sources: 256 decodes instead of one per element */
        for (unsigned b = 0; b < 256; b++) {
            uint8_t byte = (uint8_t)b;
            lut[b] = (float)cort_load_f64(&byte, from, 0);
        }
        const uint8_t *a = in;
        for (size_t i = 0; i < n; i++) ((float *)out)[i] = lut[a[i]];
        return;
    }
    if ((from == CORT_TYPE_FLOAT || from == CORT_TYPE_FLOAT16) && cort_type_is_small_float(to) && to != CORT_TYPE_FLOAT8E8M0) {
        uint8_t *o = out;
        if (from == CORT_TYPE_FLOAT) for (size_t i = 0; i < n; i++) o[i] = cort_f32_to_small(((const float *)in)[i], to, sat);
        else for (size_t i = 0; i < n; i++) o[i] = cort_f32_to_small(cort_f16_to_f32(((const uint16_t *)in)[i]), to, sat);
        return;
    }
    int from_int = cort_type_is_int(from) || cort_type_is_small_int(from) || from == CORT_TYPE_BOOL;
    for (size_t i = 0; i < n; i++) {
        if (cort_type_is_small_float(to)) {
            double v = from == CORT_TYPE_UINT64 ? (double)((const uint64_t *)in)[i] : cort_load_f64(in, from, i);
            ((uint8_t *)out)[i] = cort_f64_to_small(v, to, sat, rm);
        } else if (to == CORT_TYPE_BOOL) {
            ((uint8_t *)out)[i] = cort_load_f64(in, from, i) != 0;
        } else if (from_int && (cort_type_is_int(to) || cort_type_is_small_int(to))) {
            cort_store_i64(out, to, i, cort_load_i64(in, from, i));
        } else {
            cort_store_f64(out, to, i, cort_load_f64(in, from, i));
        }
    }
}

/* float/float16 -> bfloat16 rounding to nearest even (opset 19+), without the per-element switch */
static void cast_f32_bf16_rne(const ew_params *P, size_t n, void *out, const void *in) {
    const float *a = in; uint16_t *o = out; (void)P;
    for (size_t i = 0; i < n; i++) o[i] = cort_f32_to_bf16(a[i]);
}
static void cast_f16_bf16_rne(const ew_params *P, size_t n, void *out, const void *in) {
    const uint16_t *a = in; uint16_t *o = out; (void)P;
    for (size_t i = 0; i < n; i++) o[i] = cort_f32_to_bf16(cort_f16_to_f32(a[i]));
}

/* ---- driver ---- */

static int ew_cast_supported(cort_type t) {
    return t == CORT_TYPE_STRING || ((unsigned)t < EW_NTYPES && cast_tbl[CORT_TYPE_FLOAT][t] != NULL) ||
           cort_type_is_small_float(t) || cort_type_is_small_int(t);
}

typedef struct cast_state { int to, saturate, round_mode; } cast_state;

static cort_status *cast_attrs(const cort_node *n, cast_state *cs) {
    cs->saturate = (int)cort_attr_int(n, "saturate", 1) != 0;
    cs->round_mode = CORT_ROUND_UP;
    const cort_attr_ir *a = cort_attr_get(n, "round_mode");
    if (a) {
        const char *m = a->s ? a->s : "";
        if (!strcmp(m, "up")) cs->round_mode = CORT_ROUND_UP;
        else if (!strcmp(m, "down")) cs->round_mode = CORT_ROUND_DOWN;
        else if (!strcmp(m, "nearest")) cs->round_mode = CORT_ROUND_NEAREST;
        else return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "attribute 'round_mode' = \"%.40s\" is not "
                                    "\"up\", \"down\" or \"nearest\"", m);
    }
    return NULL;
}

static cort_status *ew_cast_run(cort_kernel_ctx *ctx, cort_type to, const cast_state *cs) {
    const cort_value *x = NULL;
    CORT_TRY(ew_input(ctx, 0, &x));
    cort_type from = x->type;
    if (!ew_cast_supported(from)) return ew_type_error(ctx, 0, from);
    if (!ew_cast_supported(to))
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "cast to %s is not supported", cort_type_name(to));
    if (from == to) {   /* the output shares the input's (immutable) data */
        cort_kernel_set_output(ctx, 0, cort_value_retain((cort_value *)x));
        return NULL;
    }
    int small = (unsigned)from >= EW_NTYPES || (unsigned)to >= EW_NTYPES ||
                (to == CORT_TYPE_BFLOAT16 && ctx->opset >= 19 && from != CORT_TYPE_STRING);
    if (small && (from == CORT_TYPE_STRING || to == CORT_TYPE_STRING))
        return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "cast from %s to %s is not supported",
                               cort_type_name(from), cort_type_name(to));
    if (from != CORT_TYPE_STRING && to != CORT_TYPE_STRING) {
        ew_params p;
        memset(&p, 0, sizeof p);
        /* ONNX's data for Cast up to opset 18 truncates to bfloat16; from 19 on its reference (and
         * the spec) rounds to nearest even */
        if (!small && !(to == CORT_TYPE_BFLOAT16 && ctx->opset >= 19 && from != CORT_TYPE_BFLOAT16))
            return ew_run_map(ctx, x, to, cast_tbl[from][to], &p, EW_GRAIN_CHEAP);
        if (to == CORT_TYPE_BFLOAT16 && (from == CORT_TYPE_FLOAT || from == CORT_TYPE_FLOAT16))
            return ew_run_map(ctx, x, to, from == CORT_TYPE_FLOAT ? cast_f32_bf16_rne : cast_f16_bf16_rne, &p,
                              EW_GRAIN_CHEAP);
        p.flag = (int)from;
        p.flag2 = (int)to;
        p.lo_i = cs->saturate;
        p.hi_i = cs->round_mode;
        return ew_run_map(ctx, x, to, cast_small, &p, EW_GRAIN_CHEAP);
    }
    cort_value *o = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, to, x->shape, x->rank, &o));
    char buf[64];
    for (size_t i = 0; i < x->count; i++) {
        if (to == CORT_TYPE_STRING) {
            ew_format_value(buf, sizeof buf, x->data, from, i);
            CORT_TRY(cort_string_set(o, i, buf, strlen(buf)));
        } else if (ew_parse_value(cort_string_get(x, i), o->data, to, i)) {
            const char *s = cort_string_get(x, i);
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                                   "input 0 '%s' element %zu \"%.40s%s\" is not a valid %s", ew_input_name(ctx->node, 0), i,
                                   s, strlen(s) > 40 ? "..." : "", cort_type_name(to));
        }
    }
    return NULL;
}

static cort_status *init_cast(const cort_node *n, void **st) {
    const cort_attr_ir *a = cort_attr_get(n, "to");
    if (!a) return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "required attribute 'to' is missing");
    int64_t to = cort_attr_int(n, "to", 0);
    if (a->type == CORT_ATTR_STRING) {   /* Cast-1 names the type: "FLOAT", "INT64", ... */
        static const char *const names[EW_NTYPES] = { "", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
            "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16" };
        /* Cast-1 predates the types added after ONNX 1.12: only the 16 names above exist there */
        to = 0;
        for (int t = 1; t < EW_NTYPES; t++)
            if (a->s && !strcasecmp(a->s, names[t])) to = t;
        if (!to)
            return cort_node_error(n, CORT_ERROR_INVALID_MODEL, "attribute 'to' = \"%s\" is not a type name", a->s ? a->s : "");
    }
    if (to <= 0 || to > CORT_TYPE_INT2 || !ew_cast_supported((cort_type)to))
        return cort_node_error(n, CORT_ERROR_NOT_IMPLEMENTED, "attribute 'to' = %lld (%s) is not a supported type",
                               (long long)to, cort_type_name((cort_type)to));
    cast_state *cs = cort_calloc(1, sizeof *cs);
    if (!cs) return cort_error_oom();
    cs->to = (int)to;
    cort_status *e = cast_attrs(n, cs);
    if (e) { cort_free(cs); return e; }
    *st = cs;
    return NULL;
}

static void free_cast(void *st) { cort_free(st); }

static cort_status *run_cast(cort_kernel_ctx *ctx) {
    const cast_state *s = (const cast_state *)ctx->state;
    return ew_cast_run(ctx, (cort_type)s->to, s);
}

static cort_status *infer_cast(cort_infer_ctx *ctx) {
    const cast_state *s = (const cast_state *)ctx->state;
    if (s) return ew_infer_same_type(ctx, (cort_type)s->to);
    return NULL;
}

static cort_status *init_cast_like(const cort_node *n, void **st) {
    cast_state *cs = cort_calloc(1, sizeof *cs);
    if (!cs) return cort_error_oom();
    cort_status *e = cast_attrs(n, cs);
    if (e) { cort_free(cs); return e; }
    *st = cs;
    return NULL;
}

static cort_status *run_cast_like(cort_kernel_ctx *ctx) {
    const cort_value *like = NULL;
    CORT_TRY(ew_input(ctx, 1, &like));
    return ew_cast_run(ctx, like->type, (const cast_state *)ctx->state);
}

static cort_status *infer_cast_like(cort_infer_ctx *ctx) {
    if (ctx->n_inputs < 2) return NULL;
    return ew_infer_same_type(ctx, ctx->inputs[1].elem);
}

/* 19 added saturate and float8, 21 int4/uint4, 23 float4e2m1, 24 float8e8m0 and round_mode, 25 int2/uint2 */
#define EW_CAST_TYPES (CORT_TMASK_NUMERIC | CORT_TBIT(CORT_TYPE_BOOL) | CORT_TBIT(CORT_TYPE_STRING) | CORT_TMASK_NEW)
const cort_op_def ew_op_cast = { .name = "Cast", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .types = EW_CAST_TYPES, .init = init_cast, .free_state = free_cast, .infer = infer_cast,
    .run = run_cast };
const cort_op_def ew_op_cast_like = { .name = "CastLike", .domain = "", .min_opset = 15, .max_opset = CORT_OPSET_MAX,
    .types = EW_CAST_TYPES, .init = init_cast_like, .free_state = free_cast, .infer = infer_cast_like,
    .run = run_cast_like };
