/* TfIdfVectorizer (ai.onnx, opset 9+): counts pool n-grams (with skips) in each input row.
 *
 * Semantics (ONNX spec; matches onnxruntime): for every n in [min_gram_length, max_gram_length]
 * and every skip s in [0, max_skip_count], the n-grams of a row are x[i], x[i+d], ..., x[i+(n-1)d]
 * with d = s + 1. Unigrams do not depend on d, so they are counted once (d = 1 only).
 * ngram_counts holds the start offsets (in pool elements) of the 1-grams, 2-grams, ... sections.
 * The weight of pool n-gram k is weights[k] (all ones by default); TF writes counts, IDF writes
 * the weight of every n-gram found at least once, TFIDF writes count * weight.
 *
 * String pools are turned into integer ids once at init, so matching always compares int64
 * tuples; a pool n-gram is found by binary search in the pool sorted by (length, items). */
#include <stdlib.h>
#include <string.h>
#include "../misc_common.h"

enum { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF };

typedef struct tfidf_gram {
    const int64_t *items;   /* into tfidf_state.keys */
    size_t len;
    size_t id;              /* index of the n-gram in the pool (ngram_indexes / weights position) */
} tfidf_gram;

typedef struct tfidf_str {
    const char *s;          /* borrowed from the node's attribute (lives as long as the session) */
    int64_t id;
} tfidf_str;

typedef struct tfidf_state {
    int mode;
    size_t min_n, max_n;
    int64_t max_skip;
    size_t out_size;                /* max(ngram_indexes) + 1 */
    const int64_t *ngram_indexes;   /* borrowed attribute, one per pool n-gram */
    const float *weights;           /* borrowed attribute or NULL (all ones) */
    int is_string;
    int64_t *keys;                  /* pool items as int64 (string pools: ids into strs) */
    tfidf_gram *grams;              /* pool n-grams with length in [min_n, max_n], sorted */
    size_t n_grams;
    size_t n_ids;                   /* 1 + largest pool n-gram id among grams (size of the count array) */
    tfidf_str *strs;                /* unique pool strings, sorted by strcmp */
    size_t n_strs;
} tfidf_state;

static int gram_cmp(const void *pa, const void *pb) {
    const tfidf_gram *a = pa, *b = pb;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    for (size_t i = 0; i < a->len; i++)
        if (a->items[i] != b->items[i]) return a->items[i] < b->items[i] ? -1 : 1;
    return 0;
}
static int str_cmp(const void *pa, const void *pb) {
    return strcmp(((const tfidf_str *)pa)->s, ((const tfidf_str *)pb)->s);
}

static void tfidf_free(void *p) {
    tfidf_state *st = p;
    if (!st) return;
    cort_free(st->keys);
    cort_free(st->grams);
    cort_free(st->strs);
    cort_free(st);
}

/* Id of a string among the unique pool strings, -1 if absent (never matches a pool item). */
static int64_t str_id(const tfidf_state *st, const char *s) {
    tfidf_str key = { s, 0 };
    const tfidf_str *hit = st->n_strs ? bsearch(&key, st->strs, st->n_strs, sizeof key, str_cmp) : NULL;
    return hit ? hit->id : -1;
}

/* Maps the string pool to ids: strs gets the unique strings, keys[i] the id of pool[i]. */
static cort_status *tfidf_intern(tfidf_state *st, const char *const *pool, size_t n) {
    st->strs = cort_malloc((n ? n : 1) * sizeof *st->strs);
    if (!st->strs) return cort_error_oom();
    for (size_t i = 0; i < n; i++) st->strs[i] = (tfidf_str){ pool[i] ? pool[i] : "", 0 };
    qsort(st->strs, n, sizeof *st->strs, str_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(st->strs[u - 1].s, st->strs[i].s)) { st->strs[u] = st->strs[i]; st->strs[u].id = (int64_t)u; u++; }
    st->n_strs = u;
    for (size_t i = 0; i < n; i++) st->keys[i] = str_id(st, pool[i] ? pool[i] : "");
    return NULL;
}

static cort_status *tfidf_init(const cort_node *node, void **state) {
    cort_status *err = NULL;
    const char *mode = cort_attr_str(node, "mode", NULL);
    int m;
    if (!mode) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'mode' is required (TF, IDF or TFIDF)");
    if (!strcmp(mode, "TF")) m = TFIDF_TF;
    else if (!strcmp(mode, "IDF")) m = TFIDF_IDF;
    else if (!strcmp(mode, "TFIDF")) m = TFIDF_TFIDF;
    else return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'mode' is '%s', expected TF, IDF or TFIDF", mode);

    const int64_t min_n = cort_attr_int(node, "min_gram_length", 0), max_n = cort_attr_int(node, "max_gram_length", 0);
    const int64_t max_skip = cort_attr_int(node, "max_skip_count", 0);
    if (min_n < 1) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'min_gram_length' is %lld, expected >= 1", (long long)min_n);
    if (max_n < min_n)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'max_gram_length' is %lld, expected >= min_gram_length %lld",
                               (long long)max_n, (long long)min_n);
    if (max_skip < 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'max_skip_count' is %lld, expected >= 0", (long long)max_skip);

    const int64_t *counts = NULL, *indexes = NULL, *pool_i = NULL;
    const float *weights = NULL;
    const char *const *pool_s = NULL;
    const size_t n_counts = cort_attr_ints(node, "ngram_counts", &counts);
    const size_t n_indexes = cort_attr_ints(node, "ngram_indexes", &indexes);
    const size_t n_weights = cort_attr_floats(node, "weights", &weights);
    const size_t n_pool_i = cort_attr_ints(node, "pool_int64s", &pool_i);
    const size_t n_pool_s = cort_attr_strings(node, "pool_strings", &pool_s);
    if (n_counts == 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'ngram_counts' is required and must not be empty");
    if ((uint64_t)max_n > n_counts)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'max_gram_length' is %lld but 'ngram_counts' has only %zu entries",
                               (long long)max_n, n_counts);
    if (n_indexes == 0) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'ngram_indexes' is required and must not be empty");
    if (weights && n_weights != n_indexes)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'weights' has %zu entries, expected %zu like 'ngram_indexes'",
                               n_weights, n_indexes);
    if ((n_pool_i > 0) == (n_pool_s > 0))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "exactly one of the attributes 'pool_int64s' and 'pool_strings' must be set (non-empty)");
    int64_t max_index = 0;
    for (size_t i = 0; i < n_indexes; i++) {
        if (indexes[i] < 0 || indexes[i] >= INT32_MAX)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'ngram_indexes'[%zu] is %lld, expected in [0, %d)", i,
                                   (long long)indexes[i], INT32_MAX);
        if (indexes[i] > max_index) max_index = indexes[i];
    }
    const size_t total = n_pool_i ? n_pool_i : n_pool_s;

    /* count the pool n-grams section by section and validate the layout */
    size_t n_all = 0, n_used = 0;
    for (size_t k = 0; k < n_counts; k++) {
        const int64_t b = counts[k], e = k + 1 < n_counts ? counts[k + 1] : (int64_t)total;
        const size_t len = k + 1;
        if (b < 0 || e < b || (uint64_t)e > total)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'ngram_counts'[%zu] = %lld gives %zu-gram section [%lld, %lld) outside the pool of %zu items",
                                   k, (long long)counts[k], len, (long long)b, (long long)e, total);
        if ((size_t)(e - b) % len)
            return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "the %zu-gram section of the pool has %lld items, not a multiple of %zu",
                                   len, (long long)(e - b), len);
        n_all += (size_t)(e - b) / len;
        if (len >= (size_t)min_n && len <= (size_t)max_n) n_used += (size_t)(e - b) / len;
    }
    if (n_indexes < n_all)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'ngram_indexes' has %zu entries but the pool holds %zu n-grams",
                               n_indexes, n_all);

    tfidf_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    st->mode = m;
    st->min_n = (size_t)min_n;
    st->max_n = (size_t)max_n;
    st->max_skip = max_skip;
    st->out_size = (size_t)max_index + 1;
    st->ngram_indexes = indexes;
    st->weights = weights;
    st->is_string = n_pool_s > 0;
    st->keys = cort_malloc(total * sizeof *st->keys);
    st->grams = cort_malloc((n_used ? n_used : 1) * sizeof *st->grams);
    if (!st->keys || !st->grams) { err = cort_error_oom(); goto error; }
    if (st->is_string) {
        if ((err = tfidf_intern(st, pool_s, total))) goto error;
    } else {
        memcpy(st->keys, pool_i, total * sizeof *st->keys);
    }
    size_t id = 0;
    for (size_t k = 0; k < n_counts; k++) {
        const size_t b = (size_t)counts[k], e = k + 1 < n_counts ? (size_t)counts[k + 1] : total, len = k + 1;
        for (size_t off = b; off < e; off += len, id++)
            if (len >= st->min_n && len <= st->max_n) st->grams[st->n_grams++] = (tfidf_gram){ st->keys + off, len, id };
    }
    for (size_t i = 0; i < st->n_grams; i++)
        if (st->grams[i].id + 1 > st->n_ids) st->n_ids = st->grams[i].id + 1;
    qsort(st->grams, st->n_grams, sizeof *st->grams, gram_cmp);
    for (size_t i = 1; i < st->n_grams; i++)
        if (!gram_cmp(&st->grams[i - 1], &st->grams[i])) {
            err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "the pool holds the same %zu-gram twice (n-grams %zu and %zu)",
                                  st->grams[i].len, st->grams[i - 1].id, st->grams[i].id);
            goto error;
        }
    *state = st;
    return NULL;
error:
    tfidf_free(st);
    return err;
}

static cort_status *tfidf_infer(cort_infer_ctx *ctx) {
    const tfidf_state *st = ctx->state;
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!st || !x || x->rank < 0) { cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_FLOAT); return NULL; }
    int64_t dims[2] = { x->rank == 2 ? x->dims[0] : (int64_t)st->out_size, (int64_t)st->out_size };
    if (x->rank > 2) { cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_FLOAT); return NULL; }
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_FLOAT, dims, x->rank == 2 ? 2 : 1);
    return NULL;
}

/* Adds one to counts[id] for the pool n-gram equal to items[0..len), if any. */
static void tfidf_count(const tfidf_state *st, const int64_t *items, size_t len, uint32_t *counts) {
    const tfidf_gram key = { items, len, 0 };
    const tfidf_gram *hit = bsearch(&key, st->grams, st->n_grams, sizeof key, gram_cmp);
    if (hit) counts[hit->id]++;
}

/* Counts every pool n-gram of one row of tokens t[0..c). sample has max_n entries. */
static void tfidf_row(const tfidf_state *st, const int64_t *t, size_t c, int64_t *sample, uint32_t *counts) {
    size_t start = st->min_n;
    if (start == 1) {
        for (size_t i = 0; i < c; i++) tfidf_count(st, &t[i], 1, counts);
        if (++start > st->max_n) return;
    }
    /* a distance of c or more cannot fit a second item */
    const size_t max_d = (uint64_t)st->max_skip + 1 < c ? (size_t)st->max_skip + 1 : c;
    for (size_t d = 1; d <= max_d; d++) {
        for (size_t s = 0; s < c && (start - 1) <= (c - 1 - s) / d; s++) {
            size_t n = 0;
            for (size_t i = s; n < st->max_n && i < c; i += d) {
                sample[n++] = t[i];
                if (n >= start) tfidf_count(st, sample, n, counts);
                if (c - i <= d) break;
            }
        }
    }
}

static cort_status *tfidf_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    const tfidf_state *st = ctx->state;
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    const cort_value *x = ctx->inputs[0];
    char buf[128];
    if (x->rank > 2)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has shape %s, expected [C] or [N,C]",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    if (st->is_string ? x->type != CORT_TYPE_STRING : (x->type != CORT_TYPE_INT32 && x->type != CORT_TYPE_INT64))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' has type %s, expected %s for a %s pool",
                               cort_type_name(x->type), st->is_string ? "string" : "int32 or int64",
                               st->is_string ? "pool_strings" : "pool_int64s");
    const size_t rows = x->rank == 2 ? (size_t)x->shape[0] : 1, c = x->rank == 0 ? 1 : (size_t)x->shape[x->rank - 1];
    int64_t dims[2] = { (int64_t)rows, (int64_t)st->out_size };
    cort_value *y;
    if (x->rank == 2) CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, dims, 2, &y));
    else CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_FLOAT, dims + 1, 1, &y));
    float *out = y->data;
    memset(out, 0, y->count * sizeof *out);
    if (rows == 0 || c == 0) return NULL;

    const size_t n_ids = st->n_ids;
    int64_t *tokens = cort_malloc(c * sizeof *tokens), *sample = cort_malloc(st->max_n * sizeof *sample);
    uint32_t *counts = cort_malloc((n_ids ? n_ids : 1) * sizeof *counts);
    cort_status *err = NULL;
    if (!tokens || !sample || !counts) { err = cort_error_oom(); goto done; }
    for (size_t r = 0; r < rows; r++) {
        if (cort_kernel_cancelled(ctx)) { err = cort_kernel_cancelled_status(ctx); goto done; }
        for (size_t i = 0; i < c; i++)
            tokens[i] = st->is_string ? str_id(st, cort_string_get(x, r * c + i)) : cort_load_i64(x->data, x->type, r * c + i);
        memset(counts, 0, (n_ids ? n_ids : 1) * sizeof *counts);
        tfidf_row(st, tokens, c, sample, counts);
        float *o = out + r * st->out_size;
        for (size_t k = 0; k < n_ids; k++) {
            if (!counts[k]) continue;
            const float w = st->weights ? st->weights[k] : 1.0f;
            float v = (float)counts[k];
            if (st->mode == TFIDF_IDF) v = w;
            else if (st->mode == TFIDF_TFIDF) v *= w;
            o[st->ngram_indexes[k]] += v;
        }
    }
done:
    cort_free(tokens);
    cort_free(sample);
    cort_free(counts);
    return err;
}

#define TFIDF_TYPES (CORT_TBIT(CORT_TYPE_INT32) | CORT_TBIT(CORT_TYPE_INT64) | CORT_TBIT(CORT_TYPE_STRING))
const cort_op_def mi_op_tfidf_vectorizer = { .name = "TfIdfVectorizer", .domain = "", .min_opset = 9, .max_opset = CORT_OPSET_MAX,
    .types = TFIDF_TYPES, .init = tfidf_init, .free_state = tfidf_free, .infer = tfidf_infer,
    .run = tfidf_run };
