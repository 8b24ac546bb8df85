/* v2 infer requests and responses <-> cort values.
 *
 * The parser never trusts a number it has not checked: element counts are products with overflow
 * checks, capped by serve_limits, and compared with the data actually present (JSON elements counted,
 * or binary_data_size bytes) before anything is allocated, so a request can only make the server
 * allocate in proportion to its own size. Errors name the input and the bad value; they become HTTP
 * 400 answers. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "serve.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 400;
}

static const struct { const char *name; cort_type type; } k_types[] = {
    { "BOOL", CORT_TYPE_BOOL },     { "UINT8", CORT_TYPE_UINT8 },   { "UINT16", CORT_TYPE_UINT16 },
    { "UINT32", CORT_TYPE_UINT32 }, { "UINT64", CORT_TYPE_UINT64 }, { "INT8", CORT_TYPE_INT8 },
    { "INT16", CORT_TYPE_INT16 },   { "INT32", CORT_TYPE_INT32 },   { "INT64", CORT_TYPE_INT64 },
    { "FP16", CORT_TYPE_FLOAT16 },  { "FP32", CORT_TYPE_FLOAT },    { "FP64", CORT_TYPE_DOUBLE },
    { "BF16", CORT_TYPE_BFLOAT16 }, { "BYTES", CORT_TYPE_STRING },
};

const char *serve_datatype_name(cort_type t) {
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (k_types[i].type == t) return k_types[i].name;
    return NULL;
}

int serve_datatype_parse(const char *s, cort_type *t) {
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (strcmp(k_types[i].name, s) == 0) {
            *t = k_types[i].type;
            return 1;
        }
    return 0;
}

/* IEEE half and bfloat16 from float, round to nearest even; NaN stays NaN. */
static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        const int shift = 14 - e;
        uint32_t half = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1);
        const uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;   /* may carry into the exponent: correct */
    return (uint16_t)(sign | half);
}

static float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
    if (exp == 0) {
        if (!mant) x = sign;
        else {
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) { mant <<= 1; exp--; }
            x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) x = sign | 0x7f800000u | (mant << 13);
    else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float bf16_to_f32(uint16_t b) {
    const uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* Counts the scalars of a (possibly nested) data array; -1 when deeper than any tensor can be. */
static int64_t count_leaves(const json_t *j, int depth) {
    if (!json_is_array(j)) return 1;
    if (depth > SERVE_MAX_RANK) return -1;
    int64_t n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(j, i, e) {
        const int64_t c = count_leaves(e, depth + 1);
        if (c < 0) return -1;
        n += c;
    }
    return n;
}

typedef struct fill_ctx {
    cort_value *value;
    cort_type   type;
    void       *data;
    size_t      at;
    const char *input;
    char       *err;
    size_t      errlen;
} fill_ctx;

static int json_number(const json_t *e, double *out) {
    if (json_is_integer(e)) *out = (double)json_integer_value(e);
    else if (json_is_real(e)) *out = json_real_value(e);
    else if (json_is_string(e)) {
        /* JSON has no NaN or infinity; responses spell them as these strings and requests may too */
        const char *s = json_string_value(e);
        if (strcmp(s, "NaN") == 0) *out = NAN;
        else if (strcmp(s, "Infinity") == 0) *out = INFINITY;
        else if (strcmp(s, "-Infinity") == 0) *out = -INFINITY;
        else return 0;
    } else return 0;
    return 1;
}

static int fill_one(fill_ctx *c, const json_t *e) {
    const size_t i = c->at++;
    const char *what = NULL;
    switch (c->type) {
    case CORT_TYPE_BOOL:
        if (!json_is_boolean(e)) { what = "a boolean"; break; }
        ((unsigned char *)c->data)[i] = json_is_true(e) ? 1 : 0;
        return 0;
    case CORT_TYPE_STRING: {
        if (!json_is_string(e)) { what = "a string"; break; }
        const size_t len = json_string_length(e);
        if (strlen(json_string_value(e)) != len)
            return fail(c->err, c->errlen, "input '%s': element %zu holds a NUL character, which cort strings cannot", c->input, i);
        cort_status *st = cort_tensor_set_string(c->value, i, json_string_value(e));
        if (st) {
            snprintf(c->err, c->errlen, "input '%s': %s", c->input, cort_status_message(st));
            cort_status_free(st);
            return 500;
        }
        return 0;
    }
    case CORT_TYPE_FLOAT: case CORT_TYPE_DOUBLE: case CORT_TYPE_FLOAT16: case CORT_TYPE_BFLOAT16: {
        double d;
        if (!json_number(e, &d)) { what = "a number"; break; }
        if (c->type == CORT_TYPE_DOUBLE) ((double *)c->data)[i] = d;
        else if (c->type == CORT_TYPE_FLOAT) ((float *)c->data)[i] = (float)d;
        else if (c->type == CORT_TYPE_FLOAT16) ((uint16_t *)c->data)[i] = f32_to_f16((float)d);
        else ((uint16_t *)c->data)[i] = f32_to_bf16((float)d);
        return 0;
    }
    default: {
        if (!json_is_integer(e)) { what = "an integer"; break; }
        const json_int_t v = json_integer_value(e);
        int64_t lo = 0, hi = 0;
        switch (c->type) {
        case CORT_TYPE_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
        case CORT_TYPE_UINT8: lo = 0; hi = UINT8_MAX; break;
        case CORT_TYPE_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
        case CORT_TYPE_UINT16: lo = 0; hi = UINT16_MAX; break;
        case CORT_TYPE_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
        case CORT_TYPE_UINT32: lo = 0; hi = UINT32_MAX; break;
        case CORT_TYPE_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
        case CORT_TYPE_UINT64: lo = 0; hi = INT64_MAX; break;   /* jansson integers are signed 64-bit */
        default: return fail(c->err, c->errlen, "input '%s': element type %s cannot be sent as JSON", c->input,
                             cort_type_name(c->type));
        }
        if (v < lo || v > hi)
            return fail(c->err, c->errlen, "input '%s': element %zu is %lld, outside %s's range", c->input, i,
                        (long long)v, serve_datatype_name(c->type));
        switch (c->type) {
        case CORT_TYPE_INT8: ((int8_t *)c->data)[i] = (int8_t)v; break;
        case CORT_TYPE_UINT8: ((uint8_t *)c->data)[i] = (uint8_t)v; break;
        case CORT_TYPE_INT16: ((int16_t *)c->data)[i] = (int16_t)v; break;
        case CORT_TYPE_UINT16: ((uint16_t *)c->data)[i] = (uint16_t)v; break;
        case CORT_TYPE_INT32: ((int32_t *)c->data)[i] = (int32_t)v; break;
        case CORT_TYPE_UINT32: ((uint32_t *)c->data)[i] = (uint32_t)v; break;
        case CORT_TYPE_INT64: ((int64_t *)c->data)[i] = (int64_t)v; break;
        default: ((uint64_t *)c->data)[i] = (uint64_t)v; break;
        }
        return 0;
    }
    }
    return fail(c->err, c->errlen, "input '%s': element %zu is not %s (datatype %s)", c->input, i, what,
                serve_datatype_name(c->type));
}

static int fill_tree(fill_ctx *c, const json_t *j) {
    if (!json_is_array(j)) return fill_one(c, j);
    size_t i;
    json_t *e;
    json_array_foreach(j, i, e) {
        const int rc = fill_tree(c, e);
        if (rc) return rc;
    }
    return 0;
}

/* Binary BYTES: each element is a 4-byte little-endian length and that many bytes. */
static int fill_binary_strings(cort_value *v, const unsigned char *p, size_t size, size_t count, const char *input,
                               char *err, size_t errlen) {
    size_t at = 0;
    char *tmp = NULL;
    size_t tmp_cap = 0;
    for (size_t i = 0; i < count; i++) {
        if (size - at < 4) {
            free(tmp);
            return fail(err, errlen, "input '%s': binary data ends inside the length of element %zu", input, i);
        }
        const uint32_t len = (uint32_t)p[at] | (uint32_t)p[at + 1] << 8 | (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 3] << 24;
        at += 4;
        if (len > size - at) {
            free(tmp);
            return fail(err, errlen, "input '%s': element %zu claims %u bytes but only %zu remain", input, i, len, size - at);
        }
        if (memchr(p + at, 0, len)) {
            free(tmp);
            return fail(err, errlen, "input '%s': element %zu holds a NUL byte, which cort strings cannot", input, i);
        }
        if ((size_t)len + 1 > tmp_cap) {
            char *n = realloc(tmp, (size_t)len + 1);
            if (!n) {
                free(tmp);
                snprintf(err, errlen, "out of memory");
                return 500;
            }
            tmp = n;
            tmp_cap = (size_t)len + 1;
        }
        memcpy(tmp, p + at, len);
        tmp[len] = 0;
        at += len;
        cort_status *st = cort_tensor_set_string(v, i, tmp);
        if (st) {
            snprintf(err, errlen, "input '%s': %s", input, cort_status_message(st));
            cort_status_free(st);
            free(tmp);
            return 500;
        }
    }
    free(tmp);
    if (at != size)
        return fail(err, errlen, "input '%s': binary_data_size is %zu but its %zu elements use %zu bytes", input, size,
                    count, at);
    return 0;
}

static int get_bool_param(const json_t *params, const char *key, int *out) {
    const json_t *v = params ? json_object_get(params, key) : NULL;
    if (!v) return 0;
    if (!json_is_boolean(v)) return -1;
    *out = json_is_true(v);
    return 1;
}

static int parse_input(const serve_model *m, const json_t *in, size_t index, const unsigned char *bin, size_t bin_size,
                       size_t *bin_at, const serve_limits *limits, serve_request *req, char *err, size_t errlen) {
    if (!json_is_object(in)) return fail(err, errlen, "inputs[%zu] is not an object", index);
    const json_t *jname = json_object_get(in, "name");
    if (!json_is_string(jname)) return fail(err, errlen, "inputs[%zu] has no string \"name\"", index);
    const char *name = json_string_value(jname);
    size_t mi = 0;
    while (mi < m->n_inputs && strcmp(m->inputs[mi].name, name) != 0) mi++;
    if (mi == m->n_inputs) {
        char list[512] = "";
        size_t len = 0;
        for (size_t k = 0; k < m->n_inputs && len < sizeof list; k++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", k ? ", " : "", m->inputs[k].name);
        return fail(err, errlen, "model '%s' has no input '%s' (inputs: %s)", m->name, name, list);
    }
    for (size_t k = 0; k < req->n_inputs; k++)
        if (strcmp(req->input_names[k], name) == 0) return fail(err, errlen, "input '%s' is given twice", name);
    const serve_io *io = &m->inputs[mi];

    const json_t *jtype = json_object_get(in, "datatype");
    if (!json_is_string(jtype)) return fail(err, errlen, "input '%s' has no string \"datatype\"", name);
    cort_type type;
    if (!serve_datatype_parse(json_string_value(jtype), &type))
        return fail(err, errlen, "input '%s': unknown datatype \"%s\"", name, json_string_value(jtype));
    if (type != io->type)
        return fail(err, errlen, "input '%s': datatype %s does not match the model's %s", name, json_string_value(jtype),
                    serve_datatype_name(io->type) ? serve_datatype_name(io->type) : cort_type_name(io->type));

    const json_t *jshape = json_object_get(in, "shape");
    if (!json_is_array(jshape)) return fail(err, errlen, "input '%s' has no \"shape\" array", name);
    const size_t rank = json_array_size(jshape);
    if (rank > SERVE_MAX_RANK) return fail(err, errlen, "input '%s': rank %zu is above %d", name, rank, SERVE_MAX_RANK);
    int64_t shape[SERVE_MAX_RANK];
    uint64_t count = 1;
    for (size_t d = 0; d < rank; d++) {
        const json_t *jd = json_array_get(jshape, d);
        if (!json_is_integer(jd) || json_integer_value(jd) < 0)
            return fail(err, errlen, "input '%s': shape[%zu] is not a non-negative integer", name, d);
        shape[d] = (int64_t)json_integer_value(jd);
        if (shape[d] != 0 && count > limits->max_elements / (uint64_t)shape[d])
            count = limits->max_elements + 1;
        else count *= (uint64_t)shape[d];
    }
    if (count > limits->max_elements) {
        char dims[256] = "";
        size_t len = 0;
        for (size_t d = 0; d < rank && len < sizeof dims; d++)
            len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", d ? "," : "", (long long)shape[d]);
        return fail(err, errlen, "input '%s': shape [%s] has more than %llu elements, the server's limit", name, dims,
                    (unsigned long long)limits->max_elements);
    }

    const json_t *params = json_object_get(in, "parameters");
    if (params && !json_is_object(params)) return fail(err, errlen, "input '%s': \"parameters\" is not an object", name);
    const json_t *jbin = params ? json_object_get(params, "binary_data_size") : NULL;
    const json_t *jdata = json_object_get(in, "data");
    if (jbin && jdata) return fail(err, errlen, "input '%s' has both \"data\" and binary_data_size", name);
    if (!jbin && !jdata) return fail(err, errlen, "input '%s' has neither \"data\" nor binary_data_size", name);

    const size_t esize = type == CORT_TYPE_STRING ? 0 : cort_type_size(type);
    if (jbin) {
        if (!json_is_integer(jbin) || json_integer_value(jbin) < 0)
            return fail(err, errlen, "input '%s': binary_data_size is not a non-negative integer", name);
        const uint64_t size = (uint64_t)json_integer_value(jbin);
        if (size > bin_size - *bin_at)
            return fail(err, errlen, "input '%s': binary_data_size is %llu but only %zu bytes of binary data remain", name,
                        (unsigned long long)size, bin_size - *bin_at);
        if (esize && size != count * esize)
            return fail(err, errlen, "input '%s': binary_data_size is %llu but shape and %s need %llu bytes", name,
                        (unsigned long long)size, serve_datatype_name(type), (unsigned long long)(count * esize));
        if (!esize && count > size / 4)
            return fail(err, errlen, "input '%s': %llu BYTES elements cannot fit in %llu bytes", name,
                        (unsigned long long)count, (unsigned long long)size);
    } else {
        const int64_t n = count_leaves(jdata, 0);
        if (n < 0) return fail(err, errlen, "input '%s': \"data\" is nested deeper than any tensor", name);
        if ((uint64_t)n != count)
            return fail(err, errlen, "input '%s': \"data\" holds %lld elements but shape needs %llu", name, (long long)n,
                        (unsigned long long)count);
    }

    cort_value *v = NULL;
    cort_status *st = cort_tensor_create(type, shape, rank, &v);
    if (st) {
        const int oom = cort_status_code(st) == CORT_ERROR_OUT_OF_MEMORY;
        snprintf(err, errlen, "input '%s': %s", name, cort_status_message(st));
        cort_status_free(st);
        return oom ? 503 : 400;
    }
    req->input_names[req->n_inputs] = io->name;
    req->inputs[req->n_inputs] = v;
    req->n_inputs++;
    if (jbin) {
        const size_t size = (size_t)json_integer_value(jbin);
        const unsigned char *p = bin + *bin_at;
        *bin_at += size;
        if (esize) {
            if (size) memcpy(cort_tensor_data(v), p, size);
            if (type == CORT_TYPE_BOOL)
                for (size_t i = 0; i < size; i++)
                    if (p[i] > 1) return fail(err, errlen, "input '%s': BOOL element %zu is byte %u, not 0 or 1", name, i, p[i]);
            return 0;
        }
        return fill_binary_strings(v, p, size, (size_t)count, name, err, errlen);
    }
    fill_ctx c = { v, type, cort_tensor_data(v), 0, name, err, errlen };
    return fill_tree(&c, jdata);
}

int serve_parse_request(const serve_model *m, const char *body, size_t length, size_t header_length,
                        const serve_limits *limits, serve_request *req, char *err, size_t errlen) {
    if (header_length > length)
        return fail(err, errlen, "Inference-Header-Content-Length is %zu but the body has %zu bytes", header_length, length);
    json_error_t jerr;
    json_t *root = json_loadb(body, header_length, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) return fail(err, errlen, "malformed JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = 0;
    if (!json_is_object(root)) {
        rc = fail(err, errlen, "the request is not a JSON object");
        goto done;
    }
    const json_t *jid = json_object_get(root, "id");
    if (jid) {
        if (!json_is_string(jid)) {
            rc = fail(err, errlen, "\"id\" is not a string");
            goto done;
        }
        req->id = strdup(json_string_value(jid));
        if (!req->id) { rc = 500; snprintf(err, errlen, "out of memory"); goto done; }
    }
    const json_t *params = json_object_get(root, "parameters");
    if (params && !json_is_object(params)) {
        rc = fail(err, errlen, "\"parameters\" is not an object");
        goto done;
    }
    int all_binary = 0;
    if (get_bool_param(params, "binary_data_output", &all_binary) < 0) {
        rc = fail(err, errlen, "parameters.binary_data_output is not a boolean");
        goto done;
    }
    const json_t *inputs = json_object_get(root, "inputs");
    if (!json_is_array(inputs)) {
        rc = fail(err, errlen, "the request has no \"inputs\" array");
        goto done;
    }
    const size_t n_in = json_array_size(inputs);
    if (n_in > m->n_inputs) {
        rc = fail(err, errlen, "%zu inputs given but model '%s' has %zu", n_in, m->name, m->n_inputs);
        goto done;
    }
    req->input_names = calloc(m->n_inputs ? m->n_inputs : 1, sizeof *req->input_names);
    req->inputs = calloc(m->n_inputs ? m->n_inputs : 1, sizeof *req->inputs);
    req->output_names = calloc(m->n_outputs ? m->n_outputs : 1, sizeof *req->output_names);
    req->output_binary = calloc(m->n_outputs ? m->n_outputs : 1, 1);
    if (!req->input_names || !req->inputs || !req->output_names || !req->output_binary) {
        rc = 500;
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    const unsigned char *bin = (const unsigned char *)body + header_length;
    const size_t bin_size = length - header_length;
    size_t bin_at = 0;
    for (size_t i = 0; i < n_in; i++) {
        rc = parse_input(m, json_array_get(inputs, i), i, bin, bin_size, &bin_at, limits, req, err, errlen);
        if (rc) goto done;
    }
    if (bin_at != bin_size) {
        rc = fail(err, errlen, "%zu bytes of binary data follow the JSON but the inputs use %zu", bin_size, bin_at);
        goto done;
    }
    for (size_t k = 0; k < m->n_inputs; k++) {
        size_t i = 0;
        while (i < req->n_inputs && req->input_names[i] != m->inputs[k].name) i++;
        if (i == req->n_inputs) {
            rc = fail(err, errlen, "input '%s' of model '%s' is missing", m->inputs[k].name, m->name);
            goto done;
        }
    }

    const json_t *outputs = json_object_get(root, "outputs");
    if (outputs && !json_is_array(outputs)) {
        rc = fail(err, errlen, "\"outputs\" is not an array");
        goto done;
    }
    if (!outputs || json_array_size(outputs) == 0) {
        for (size_t k = 0; k < m->n_outputs; k++) {
            req->output_names[k] = m->outputs[k].name;
            req->output_binary[k] = (unsigned char)all_binary;
        }
        req->n_outputs = m->n_outputs;
    } else {
        size_t i;
        json_t *o;
        json_array_foreach(outputs, i, o) {
            const json_t *jn = json_is_object(o) ? json_object_get(o, "name") : NULL;
            if (!json_is_string(jn)) {
                rc = fail(err, errlen, "outputs[%zu] has no string \"name\"", i);
                goto done;
            }
            size_t k = 0;
            while (k < m->n_outputs && strcmp(m->outputs[k].name, json_string_value(jn)) != 0) k++;
            if (k == m->n_outputs) {
                rc = fail(err, errlen, "model '%s' has no output '%s'", m->name, json_string_value(jn));
                goto done;
            }
            for (size_t r = 0; r < req->n_outputs; r++)
                if (req->output_names[r] == m->outputs[k].name) {
                    rc = fail(err, errlen, "output '%s' is requested twice", m->outputs[k].name);
                    goto done;
                }
            const json_t *op = json_object_get(o, "parameters");
            if (op && !json_is_object(op)) {
                rc = fail(err, errlen, "outputs[%zu].parameters is not an object", i);
                goto done;
            }
            int b = all_binary;
            if (get_bool_param(op, "binary_data", &b) < 0) {
                rc = fail(err, errlen, "output '%s': parameters.binary_data is not a boolean", m->outputs[k].name);
                goto done;
            }
            req->output_names[req->n_outputs] = m->outputs[k].name;
            req->output_binary[req->n_outputs] = (unsigned char)b;
            req->n_outputs++;
        }
    }
done:
    json_decref(root);
    return rc;
}

void serve_request_free(serve_request *req) {
    if (!req) return;
    for (size_t i = 0; i < req->n_inputs; i++) cort_value_release(req->inputs[i]);
    free(req->id);
    free(req->input_names);
    free(req->inputs);
    free(req->output_names);
    free(req->output_binary);
    memset(req, 0, sizeof *req);
}

char *serve_error_json(const char *msg) {
    json_t *o = json_object();
    char *s = NULL;
    if (o) {
        /* cort's messages quote model text; a non-UTF-8 byte must not lose the whole answer */
        json_t *m = json_string(msg);
        if (!m) m = json_string("error message is not valid UTF-8");
        json_object_set_new(o, "error", m);
        s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    return s;
}

static json_t *float_json(double d) {
    if (isnan(d)) return json_string("NaN");
    if (isinf(d)) return json_string(d > 0 ? "Infinity" : "-Infinity");
    return json_real(d);
}

static json_t *tensor_data_json(const cort_value *v, char *err, size_t errlen, const char *name) {
    const cort_type t = cort_tensor_type(v);
    const size_t n = cort_tensor_element_count(v);
    const void *p = cort_tensor_data(v);
    json_t *a = json_array();
    if (!a) return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *e = NULL;
        switch (t) {
        case CORT_TYPE_BOOL: e = json_boolean(((const unsigned char *)p)[i] != 0); break;
        case CORT_TYPE_UINT8: e = json_integer(((const uint8_t *)p)[i]); break;
        case CORT_TYPE_INT8: e = json_integer(((const int8_t *)p)[i]); break;
        case CORT_TYPE_UINT16: e = json_integer(((const uint16_t *)p)[i]); break;
        case CORT_TYPE_INT16: e = json_integer(((const int16_t *)p)[i]); break;
        case CORT_TYPE_UINT32: e = json_integer(((const uint32_t *)p)[i]); break;
        case CORT_TYPE_INT32: e = json_integer(((const int32_t *)p)[i]); break;
        case CORT_TYPE_INT64: e = json_integer(((const int64_t *)p)[i]); break;
        case CORT_TYPE_UINT64: {
            const uint64_t u = ((const uint64_t *)p)[i];
            e = u <= (uint64_t)INT64_MAX ? json_integer((json_int_t)u) : json_real((double)u);
            break;
        }
        case CORT_TYPE_FLOAT: e = float_json(((const float *)p)[i]); break;
        case CORT_TYPE_DOUBLE: e = float_json(((const double *)p)[i]); break;
        case CORT_TYPE_FLOAT16: e = float_json(f16_to_f32(((const uint16_t *)p)[i])); break;
        case CORT_TYPE_BFLOAT16: e = float_json(bf16_to_f32(((const uint16_t *)p)[i])); break;
        case CORT_TYPE_STRING: {
            const char *s = ((char *const *)p)[i];
            e = json_string(s ? s : "");
            if (!e) {
                snprintf(err, errlen, "output '%s': element %zu is not valid UTF-8; request it with binary_data", name, i);
                json_decref(a);
                return NULL;
            }
            break;
        }
        default:
            snprintf(err, errlen, "output '%s': element type %s has no v2 datatype", name, cort_type_name(t));
            json_decref(a);
            return NULL;
        }
        if (!e || json_array_append_new(a, e)) {
            snprintf(err, errlen, "out of memory");
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Bytes of an output in the binary extension. */
static size_t binary_size(const cort_value *v) {
    if (cort_tensor_type(v) != CORT_TYPE_STRING) return cort_tensor_bytes(v);
    const size_t n = cort_tensor_element_count(v);
    char *const *s = cort_tensor_data(v);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += 4 + (s[i] ? strlen(s[i]) : 0);
    return total;
}

static void binary_write(const cort_value *v, unsigned char *dst) {
    if (cort_tensor_type(v) != CORT_TYPE_STRING) {
        memcpy(dst, cort_tensor_data(v), cort_tensor_bytes(v));
        return;
    }
    const size_t n = cort_tensor_element_count(v);
    char *const *s = cort_tensor_data(v);
    for (size_t i = 0; i < n; i++) {
        const size_t len = s[i] ? strlen(s[i]) : 0;
        dst[0] = (unsigned char)len;
        dst[1] = (unsigned char)(len >> 8);
        dst[2] = (unsigned char)(len >> 16);
        dst[3] = (unsigned char)(len >> 24);
        if (len) memcpy(dst + 4, s[i], len);
        dst += 4 + len;
    }
}

int serve_build_response(const serve_model *m, const serve_request *req, cort_value *const *outputs,
                         serve_response *resp, char *err, size_t errlen) {
    memset(resp, 0, sizeof *resp);
    json_t *root = json_object();
    json_t *outs = json_array();
    int rc = 500;
    size_t bin_total = 0;
    int need_double = 0;
    if (!root || !outs) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    json_object_set_new(root, "model_name", json_string(m->name));
    json_object_set_new(root, "model_version", json_string(m->version));
    if (req->id) {
        json_t *jid = json_string(req->id);
        if (jid) json_object_set_new(root, "id", jid);
    }
    for (size_t i = 0; i < req->n_outputs; i++) {
        const cort_value *v = outputs[i];
        const char *name = req->output_names[i];
        if (cort_value_kind(v) != 1) {
            snprintf(err, errlen, "output '%s' is not a tensor (a sequence or map); the v2 protocol carries tensors only", name);
            goto fail;
        }
        const char *dt = serve_datatype_name(cort_tensor_type(v));
        if (!dt) {
            snprintf(err, errlen, "output '%s': element type %s has no v2 datatype", name, cort_type_name(cort_tensor_type(v)));
            goto fail;
        }
        if (cort_tensor_type(v) == CORT_TYPE_DOUBLE) need_double = 1;
        json_t *o = json_object();
        json_t *shape = json_array();
        if (!o || !shape) {
            json_decref(o);
            json_decref(shape);
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        json_array_append_new(outs, o);
        json_object_set_new(o, "name", json_string(name));
        json_object_set_new(o, "datatype", json_string(dt));
        for (size_t d = 0; d < cort_tensor_rank(v); d++) json_array_append_new(shape, json_integer(cort_tensor_shape(v)[d]));
        json_object_set_new(o, "shape", shape);
        if (req->output_binary[i]) {
            const size_t size = binary_size(v);
            json_t *p = json_object();
            if (!p) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            json_object_set_new(p, "binary_data_size", json_integer((json_int_t)size));
            json_object_set_new(o, "parameters", p);
            bin_total += size;
        } else {
            json_t *data = tensor_data_json(v, err, errlen, name);
            if (!data) goto fail;
            json_object_set_new(o, "data", data);
        }
    }
    json_object_set_new(root, "outputs", outs);
    outs = NULL;
    /* 9 significant digits give every float32 back exactly; float64 needs 17 */
    char *js = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(need_double ? 17 : 9));
    if (!js) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    const size_t jlen = strlen(js);
    if (bin_total) {
        char *all = malloc(jlen + bin_total);
        if (!all) {
            free(js);
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        memcpy(all, js, jlen);
        free(js);
        unsigned char *dst = (unsigned char *)all + jlen;
        for (size_t i = 0; i < req->n_outputs; i++)
            if (req->output_binary[i]) {
                binary_write(outputs[i], dst);
                dst += binary_size(outputs[i]);
            }
        resp->body = all;
        resp->length = jlen + bin_total;
    } else {
        resp->body = js;
        resp->length = jlen;
    }
    resp->json_length = jlen;
    rc = 0;
fail:
    json_decref(outs);
    json_decref(root);
    return rc;
}
