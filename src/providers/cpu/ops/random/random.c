/* Random generators: RandomNormal, RandomUniform, their *Like forms, Multinomial, Bernoulli.
 * xoshiro256** seeded through splitmix64. With a `seed` attribute every run yields the same values
 * (the generator lives on the stack of the run, never in shared state); without one, each run draws
 * a fresh seed from a process-wide atomic counter mixed with the clock. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "../misc_common.h"

typedef struct rng { uint64_t s[4]; } rng;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t rng_next(rng *r) {
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 45);
    return out;
}
/* uniform in [0, 1) with 53 random bits */
static double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
static double rng_normal(rng *r) {
    double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);   /* u1 in (0, 1] keeps log finite */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static atomic_uint_fast64_t run_counter;

static void rng_seed(rng *r, const cort_node *node) {
    uint64_t x;
    const cort_attr_ir *a = cort_attr_get(node, "seed");
    if (a) {
        double d = (double)a->f;
        memcpy(&x, &d, sizeof x);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)atomic_fetch_add(&run_counter, 1) * 0x9e3779b97f4a7c15ULL ^
            ((uint64_t)ts.tv_sec * 1000000007ULL + (uint64_t)ts.tv_nsec);
    }
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static int float_out(cort_type t) { return t == CORT_TYPE_FLOAT || t == CORT_TYPE_DOUBLE || t == CORT_TYPE_FLOAT16 || t == CORT_TYPE_BFLOAT16; }

enum { DIST_NORMAL, DIST_UNIFORM };

static void fill(cort_value *out, rng *r, int dist, double p0, double p1) {
    for (size_t i = 0; i < out->count; i++) {
        double v = dist == DIST_NORMAL ? p0 + p1 * rng_normal(r) : p0 + (p1 - p0) * rng_uniform(r);
        cort_store_f64(out->data, out->type, i, v);
    }
}

static void dist_params(const cort_node *node, int dist, double *p0, double *p1) {
    if (dist == DIST_NORMAL) { *p0 = cort_attr_float(node, "mean", 0.0f); *p1 = cort_attr_float(node, "scale", 1.0f); }
    else { *p0 = cort_attr_float(node, "low", 0.0f); *p1 = cort_attr_float(node, "high", 1.0f); }
}

/* ---- RandomNormal / RandomUniform (shape attribute) ---- */
static cort_status *random_init(const cort_node *node, void **state) {
    const int64_t *shape;
    size_t rank = cort_attr_ints(node, "shape", &shape);
    if (!cort_attr_get(node, "shape"))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "required attribute 'shape' is missing");
    if (rank > CORT_MAX_RANK)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'shape' has rank %zu, more than %d", rank, CORT_MAX_RANK);
    for (size_t i = 0; i < rank; i++)
        if (shape[i] < 0)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'shape' has negative dimension %lld",
                                   (long long)shape[i]);
    int64_t dt = cort_attr_int(node, "dtype", CORT_TYPE_FLOAT);
    if (!float_out((cort_type)dt))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'dtype' is %lld, expected a float type", (long long)dt);
    *state = NULL;
    return NULL;
}
static cort_status *random_infer(cort_infer_ctx *ctx) {
    const int64_t *shape;
    size_t rank = cort_attr_ints(ctx->node, "shape", &shape);
    if (ctx->n_outputs && rank <= CORT_MAX_RANK)
        cort_tinfo_tensor_shape(&ctx->outputs[0], (cort_type)cort_attr_int(ctx->node, "dtype", CORT_TYPE_FLOAT), shape, (int)rank);
    return NULL;
}
static cort_status *random_run(cort_kernel_ctx *ctx, int dist) {
    const int64_t *shape;
    size_t rank = cort_attr_ints(ctx->node, "shape", &shape);
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, (cort_type)cort_attr_int(ctx->node, "dtype", CORT_TYPE_FLOAT), shape, rank, &out));
    rng r;
    double p0, p1;
    rng_seed(&r, ctx->node);
    dist_params(ctx->node, dist, &p0, &p1);
    fill(out, &r, dist, p0, p1);
    return NULL;
}
static cort_status *random_normal_run(cort_kernel_ctx *ctx) { return random_run(ctx, DIST_NORMAL); }
static cort_status *random_uniform_run(cort_kernel_ctx *ctx) { return random_run(ctx, DIST_UNIFORM); }

/* ---- *Like: shape (and by default type) of the input ---- */
static cort_type like_type(const cort_node *node, cort_type in) {
    return cort_attr_get(node, "dtype") ? (cort_type)cort_attr_int(node, "dtype", CORT_TYPE_FLOAT) : in;
}
static cort_status *like_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!x || !ctx->n_outputs) return NULL;
    cort_tinfo_tensor_shape(&ctx->outputs[0], like_type(ctx->node, x->elem), x->dims, x->rank);
    return NULL;
}
static cort_status *like_run(cort_kernel_ctx *ctx, int dist) {
    CORT_TRY(mi_want_tensor(ctx, 0, "input"));
    const cort_value *x = ctx->inputs[0];
    cort_type t = like_type(ctx->node, x->type);
    if (!float_out(t))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "output type %s is not a float type (set attribute 'dtype')",
                               cort_type_name(t));
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, t, x->shape, x->rank, &out));
    rng r;
    double p0, p1;
    rng_seed(&r, ctx->node);
    dist_params(ctx->node, dist, &p0, &p1);
    fill(out, &r, dist, p0, p1);
    return NULL;
}
static cort_status *normal_like_run(cort_kernel_ctx *ctx) { return like_run(ctx, DIST_NORMAL); }
static cort_status *uniform_like_run(cort_kernel_ctx *ctx) { return like_run(ctx, DIST_UNIFORM); }

/* ---- Bernoulli ---- */
static cort_status *bernoulli_run(cort_kernel_ctx *ctx) {
    CORT_TRY(mi_want_tensor(ctx, 0, "input"));
    const cort_value *x = ctx->inputs[0];
    cort_type t = like_type(ctx->node, x->type);
    if (!cort_type_is_float(t) && !cort_type_is_int(t) && t != CORT_TYPE_BOOL)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'dtype' gives %s, expected a numeric or bool type",
                               cort_type_name(t));
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, t, x->shape, x->rank, &out));
    rng r;
    rng_seed(&r, ctx->node);
    for (size_t i = 0; i < x->count; i++) {
        double p = cort_load_f64(x->data, x->type, i);
        cort_store_f64(out->data, t, i, rng_uniform(&r) < p ? 1.0 : 0.0);
    }
    return NULL;
}

/* ---- Multinomial ---- */
static cort_status *multinomial_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs) return NULL;
    int64_t dims[2] = { x && x->rank == 2 ? x->dims[0] : -1, cort_attr_int(ctx->node, "sample_size", 1) };
    cort_tinfo_tensor_shape(&ctx->outputs[0], (cort_type)cort_attr_int(ctx->node, "dtype", CORT_TYPE_INT32), dims, 2);
    return NULL;
}
static cort_status *multinomial_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    CORT_TRY(mi_want_tensor(ctx, 0, "input"));
    const cort_value *x = ctx->inputs[0];
    char buf[128];
    if (x->rank != 2)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has shape %s, expected [batch_size, class_size]",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    int64_t dt = cort_attr_int(node, "dtype", CORT_TYPE_INT32), n = cort_attr_int(node, "sample_size", 1);
    if (dt != CORT_TYPE_INT32 && dt != CORT_TYPE_INT64)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'dtype' is %lld, expected int32 (6) or int64 (7)", (long long)dt);
    if (n < 0)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'sample_size' is %lld, expected >= 0", (long long)n);
    int64_t B = x->shape[0], C = x->shape[1];
    if (C < 1 && n > 0 && B > 0)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has no classes (shape %s)",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    int64_t dims[2] = { B, n };
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, (cort_type)dt, dims, 2, &out));
    double *cdf = cort_malloc(((size_t)C + 1) * sizeof(double));
    if (!cdf) return cort_error_oom();
    rng r;
    rng_seed(&r, node);
    for (int64_t b = 0; b < B && n > 0; b++) {
        double mx = -INFINITY, acc = 0.0;
        for (int64_t c = 0; c < C; c++) {
            double v = cort_load_f64(x->data, x->type, (size_t)(b * C + c));
            if (v > mx) mx = v;
        }
        for (int64_t c = 0; c < C; c++) {
            double v = cort_load_f64(x->data, x->type, (size_t)(b * C + c));
            double p = isfinite(mx) ? exp(v - mx) : 1.0;   /* all -inf rows sample uniformly */
            acc += isnan(p) ? 0.0 : p;
            cdf[c] = acc;
        }
        for (int64_t s = 0; s < n; s++) {
            double u = rng_uniform(&r) * acc;
            int64_t lo = 0, hi = C - 1;
            while (lo < hi) {   /* first class whose cumulative mass exceeds u */
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > u) hi = mid; else lo = mid + 1;
            }
            cort_store_i64(out->data, out->type, (size_t)(b * n + s), lo);
        }
    }
    cort_free(cdf);
    return NULL;
}

#define FLOATS (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_FLOAT16) | CORT_TBIT(CORT_TYPE_BFLOAT16))
const cort_op_def mi_op_random_normal = { .name = "RandomNormal", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .init = random_init, .infer = random_infer, .run = random_normal_run };
const cort_op_def mi_op_random_uniform = { .name = "RandomUniform", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .init = random_init, .infer = random_infer, .run = random_uniform_run };
const cort_op_def mi_op_random_normal_like = { .name = "RandomNormalLike", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .infer = like_infer, .run = normal_like_run };
const cort_op_def mi_op_random_uniform_like = { .name = "RandomUniformLike", .domain = "", .min_opset = 1, .max_opset = CORT_OPSET_MAX,
    .infer = like_infer, .run = uniform_like_run };
const cort_op_def mi_op_multinomial = { .name = "Multinomial", .domain = "", .min_opset = 7, .max_opset = CORT_OPSET_MAX,
    .types = FLOATS, .infer = multinomial_infer, .run = multinomial_run };
const cort_op_def mi_op_bernoulli = { .name = "Bernoulli", .domain = "", .min_opset = 15, .max_opset = CORT_OPSET_MAX,
    .types = FLOATS, .infer = like_infer, .run = bernoulli_run };
