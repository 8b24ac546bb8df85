/* Value comparison for `cort test`: tensors element by element, containers recursively. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "compare.h"
#include "core/types.h"

static void shape_str(const cort_value *t, char *buf, size_t len) {
    size_t rank = cort_tensor_rank(t), o = 0;
    const int64_t *s = cort_tensor_shape(t);
    o += (size_t)snprintf(buf + o, len - o, "[");
    for (size_t i = 0; i < rank && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, i ? "," : "", s[i]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

void cli_describe_value(const cort_value *v, char *buf, size_t len) {
    char sh[256];
    if (len == 0) return;
    switch (cort_value_kind(v)) {
    case 1:
        shape_str(v, sh, sizeof sh);
        snprintf(buf, len, "%s%s", cort_type_name(cort_tensor_type(v)), sh);
        break;
    case 2:
        snprintf(buf, len, "seq(%s) of length %zu", cort_type_name(cort_sequence_elem_type(v)), cort_sequence_length(v));
        break;
    case 3: {
        const cort_value *c = cort_optional_value(v);
        if (!c) { snprintf(buf, len, "optional(empty)"); break; }
        char inner[256];
        cli_describe_value(c, inner, sizeof inner);
        snprintf(buf, len, "optional(%s)", inner);
        break;
    }
    case 4:
        snprintf(buf, len, "map(%s -> %s)", cort_type_name(cort_tensor_type(cort_map_keys(v))),
                 cort_value_kind(cort_map_values(v)) == 1 ? cort_type_name(cort_tensor_type(cort_map_values(v))) : "seq");
        break;
    default:
        snprintf(buf, len, "(null)");
    }
}

static double load_float(const void *data, cort_type t, size_t i) {
    switch (t) {
    case CORT_TYPE_FLOAT: return ((const float *)data)[i];
    case CORT_TYPE_DOUBLE: return ((const double *)data)[i];
    case CORT_TYPE_FLOAT16: return cort_f16_to_f32(((const uint16_t *)data)[i]);
    case CORT_TYPE_BFLOAT16: return cort_bf16_to_f32(((const uint16_t *)data)[i]);
    case CORT_TYPE_COMPLEX64: return ((const float *)data)[i];    /* i indexes real/imag parts */
    case CORT_TYPE_COMPLEX128: return ((const double *)data)[i];
    default: return cort_type_is_small_float(t) ? cort_small_to_f64(((const uint8_t *)data)[i], t) : 0.0;
    }
}

static int close_enough(double g, double e, const cli_tolerance *tol) {
    if (isnan(e) || isnan(g)) return isnan(e) && isnan(g);
    if (g == e) return 1;   /* also equal infinities */
    if (isinf(e) || isinf(g)) return 0;
    return fabs(g - e) <= tol->atol + tol->rtol * fabs(e);
}

/* Element i of an integer/bool tensor as text. */
static void int_str(const void *data, cort_type t, size_t i, char *buf, size_t len) {
    switch (t) {
    case CORT_TYPE_INT8: snprintf(buf, len, "%d", ((const int8_t *)data)[i]); break;
    case CORT_TYPE_INT16: snprintf(buf, len, "%d", ((const int16_t *)data)[i]); break;
    case CORT_TYPE_INT32: snprintf(buf, len, "%" PRId32, ((const int32_t *)data)[i]); break;
    case CORT_TYPE_INT64: snprintf(buf, len, "%" PRId64, ((const int64_t *)data)[i]); break;
    case CORT_TYPE_UINT8: snprintf(buf, len, "%u", ((const uint8_t *)data)[i]); break;
    case CORT_TYPE_UINT16: snprintf(buf, len, "%u", ((const uint16_t *)data)[i]); break;
    case CORT_TYPE_UINT32: snprintf(buf, len, "%" PRIu32, ((const uint32_t *)data)[i]); break;
    case CORT_TYPE_UINT64: snprintf(buf, len, "%" PRIu64, ((const uint64_t *)data)[i]); break;
    case CORT_TYPE_BOOL: snprintf(buf, len, "%s", ((const uint8_t *)data)[i] ? "true" : "false"); break;
    default:
        if (cort_type_is_small_int(t)) snprintf(buf, len, "%" PRId64, cort_load_i64(data, t, i));
        else snprintf(buf, len, "?");
    }
}

/* Multi-dimensional index of flat element i, "[1,0,3]". */
static void index_str(const cort_value *t, size_t flat, char *buf, size_t len) {
    size_t rank = cort_tensor_rank(t);
    const int64_t *s = cort_tensor_shape(t);
    size_t idx[16] = {0};
    for (size_t d = rank; d-- > 0 && d < 16;) {
        size_t n = (size_t)s[d];
        idx[d] = n ? flat % n : 0;
        flat = n ? flat / n : 0;
    }
    size_t o = (size_t)snprintf(buf, len, "[");
    for (size_t d = 0; d < rank && d < 16 && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%zu", d ? "," : "", idx[d]);
    if (o < len) snprintf(buf + o, len - o, "]");
}

static int compare_tensors(const cort_value *g, const cort_value *e, const cli_tolerance *tol, char *why, size_t n) {
    cort_type tg = cort_tensor_type(g), te = cort_tensor_type(e);
    char a[256], b[256];
    if (tg != te) {
        cli_describe_value(g, a, sizeof a);
        cli_describe_value(e, b, sizeof b);
        snprintf(why, n, "type mismatch: got %s vs expected %s", a, b);
        return 0;
    }
    size_t rank = cort_tensor_rank(g);
    if (rank != cort_tensor_rank(e) ||
        (rank && memcmp(cort_tensor_shape(g), cort_tensor_shape(e), rank * sizeof(int64_t)) != 0)) {
        cli_describe_value(g, a, sizeof a);
        cli_describe_value(e, b, sizeof b);
        snprintf(why, n, "shape mismatch: got %s vs expected %s", a, b);
        return 0;
    }
    size_t count = cort_tensor_element_count(e);
    const void *dg = cort_tensor_data(g), *de = cort_tensor_data(e);
    if (count && (!dg || !de)) {
        snprintf(why, n, "tensor has no data");
        return 0;
    }
    size_t bad = 0, first = 0;
    char gs[64] = "", es[64] = "";
    int is_complex = (te == CORT_TYPE_COMPLEX64 || te == CORT_TYPE_COMPLEX128);
    /* float8/float4 values are compared decoded: every NaN pattern is NaN, and one step of these
     * types exceeds rtol, so the tolerance leaves the comparison exact */
    if (cort_type_is_float(te) || is_complex || cort_type_is_small_float(te)) {
        size_t parts = is_complex ? 2 : 1;
        for (size_t i = 0; i < count; i++) {
            int ok = 1;
            for (size_t p = 0; p < parts; p++)
                ok &= close_enough(load_float(dg, te, i * parts + p), load_float(de, te, i * parts + p), tol);
            if (!ok && bad++ == 0) first = i;
        }
        if (bad) {
            if (is_complex) {
                snprintf(gs, sizeof gs, "%.9g%+.9gi", load_float(dg, te, 2 * first), load_float(dg, te, 2 * first + 1));
                snprintf(es, sizeof es, "%.9g%+.9gi", load_float(de, te, 2 * first), load_float(de, te, 2 * first + 1));
            } else {
                snprintf(gs, sizeof gs, "%.9g", load_float(dg, te, first));
                snprintf(es, sizeof es, "%.9g", load_float(de, te, first));
            }
        }
    } else if (te == CORT_TYPE_STRING) {
        const char *const *sg = dg, *const *se = de;
        for (size_t i = 0; i < count; i++) {
            const char *x = sg[i] ? sg[i] : "", *y = se[i] ? se[i] : "";
            if (strcmp(x, y) != 0 && bad++ == 0) first = i;
        }
        if (bad) {
            snprintf(gs, sizeof gs, "\"%.40s\"", sg[first] ? sg[first] : "");
            snprintf(es, sizeof es, "\"%.40s\"", se[first] ? se[first] : "");
        }
    } else if (cort_type_is_int(te) || te == CORT_TYPE_BOOL || cort_type_is_small_int(te)) {
        size_t sz = cort_type_size(te);
        const unsigned char *pg = dg, *pe = de;
        for (size_t i = 0; i < count; i++) {
            int differ = (te == CORT_TYPE_BOOL) ? ((pg[i] != 0) != (pe[i] != 0)) : memcmp(pg + i * sz, pe + i * sz, sz) != 0;
            if (differ && bad++ == 0) first = i;
        }
        if (bad) {
            int_str(dg, te, first, gs, sizeof gs);
            int_str(de, te, first, es, sizeof es);
        }
    } else {
        snprintf(why, n, "cannot compare tensors of type %s", cort_type_name(te));
        return 0;
    }
    if (!bad) return 1;
    index_str(e, first, a, sizeof a);
    snprintf(why, n, "element %zu %s: got %s vs expected %s; %zu of %zu elements differ", first, a, gs, es, bad, count);
    return 0;
}

int cli_compare(const cort_value *got, const cort_value *exp, const cli_tolerance *tol, char *why, size_t why_len) {
    int kg = cort_value_kind(got), ke = cort_value_kind(exp);
    char a[256], b[256], sub[1024];
    if (kg != ke) {
        cli_describe_value(got, a, sizeof a);
        cli_describe_value(exp, b, sizeof b);
        snprintf(why, why_len, "kind mismatch: got %s vs expected %s", a, b);
        return 0;
    }
    switch (ke) {
    case 1:
        return compare_tensors(got, exp, tol, why, why_len);
    case 2: {
        size_t lg = cort_sequence_length(got), le = cort_sequence_length(exp);
        if (lg != le) {
            snprintf(why, why_len, "sequence length %zu vs expected %zu", lg, le);
            return 0;
        }
        for (size_t i = 0; i < le; i++) {
            if (!cli_compare(cort_sequence_at(got, i), cort_sequence_at(exp, i), tol, sub, sizeof sub)) {
                snprintf(why, why_len, "sequence item %zu: %s", i, sub);
                return 0;
            }
        }
        if (le == 0 && cort_sequence_elem_type(got) != cort_sequence_elem_type(exp) &&
            cort_sequence_elem_type(exp) != CORT_TYPE_UNDEFINED) {
            snprintf(why, why_len, "empty sequence of %s vs expected %s", cort_type_name(cort_sequence_elem_type(got)),
                     cort_type_name(cort_sequence_elem_type(exp)));
            return 0;
        }
        return 1;
    }
    case 3: {
        const cort_value *cg = cort_optional_value(got), *ce = cort_optional_value(exp);
        if (!cg || !ce) {
            if (!cg && !ce) return 1;
            snprintf(why, why_len, "optional is %s vs expected %s", cg ? "present" : "empty", ce ? "present" : "empty");
            return 0;
        }
        if (!cli_compare(cg, ce, tol, sub, sizeof sub)) {
            snprintf(why, why_len, "optional contents: %s", sub);
            return 0;
        }
        return 1;
    }
    case 4:
        if (!cli_compare(cort_map_keys(got), cort_map_keys(exp), tol, sub, sizeof sub)) {
            snprintf(why, why_len, "map keys: %s", sub);
            return 0;
        }
        if (!cli_compare(cort_map_values(got), cort_map_values(exp), tol, sub, sizeof sub)) {
            snprintf(why, why_len, "map values: %s", sub);
            return 0;
        }
        return 1;
    default:
        snprintf(why, why_len, "value is missing");
        return 0;
    }
}
