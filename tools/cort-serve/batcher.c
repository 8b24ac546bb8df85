/* Dynamic batching: requests to a model whose inputs and outputs all have a symbolic dimension 0
 * wait up to batch_delay_us for company, are concatenated along that dimension into one run of at
 * most max_batch rows, and the outputs are cut back into per-request tensors. Only requests with the
 * same trailing input shapes and the same requested outputs are merged; a request that cannot be
 * merged runs alone through the same queue, so order and the queue bound hold for every request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "serve.h"

typedef struct pending {
    struct pending      *next;
    const serve_request *req;
    serve_done_fn        done;
    void                *user;
    int64_t              rows;
} pending;

typedef struct serve_batcher {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    pthread_t       thread;
    pending        *head, *tail;
    int64_t         queued_rows;   /* rows of every request in the queue */
    int             stop;
    serve_model    *m;
} serve_batcher;

typedef struct batch_run {
    serve_model *m;
    pending     *items;
    size_t       n_items;
    size_t       n_outputs;
} batch_run;

int serve_batcher_accepts(const serve_model *m, const serve_request *req) {
    if (!m->batcher) return 0;
    for (size_t i = 0; i < m->n_inputs; i++)
        if (m->inputs[i].kind != 1 || m->inputs[i].rank < 1 || m->inputs[i].dims[0] != -1) return 0;
    for (size_t i = 0; i < m->n_outputs; i++)
        if (m->outputs[i].kind != 1 || m->outputs[i].rank < 1 || m->outputs[i].dims[0] != -1) return 0;
    for (size_t i = 0; i < req->n_inputs; i++)
        if (cort_tensor_rank(req->inputs[i]) < 1) return 0;
    return 1;
}

/* Same model inputs (by position in the request, which the parser fills in the client's order, so
 * compare by name), same trailing dims, same outputs in the same order. */
static int compatible(const serve_request *a, const serve_request *b) {
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs) return 0;
    for (size_t i = 0; i < a->n_outputs; i++)
        if (a->output_names[i] != b->output_names[i]) return 0;
    for (size_t i = 0; i < a->n_inputs; i++) {
        size_t j = 0;
        while (j < b->n_inputs && b->input_names[j] != a->input_names[i]) j++;
        if (j == b->n_inputs) return 0;
        const cort_value *x = a->inputs[i], *y = b->inputs[j];
        if (cort_tensor_rank(x) != cort_tensor_rank(y) || cort_tensor_type(x) != cort_tensor_type(y)) return 0;
        for (size_t d = 1; d < cort_tensor_rank(x); d++)
            if (cort_tensor_shape(x)[d] != cort_tensor_shape(y)[d]) return 0;
    }
    return 1;
}

static cort_value *find_input(const serve_request *r, const char *name) {
    for (size_t i = 0; i < r->n_inputs; i++)
        if (r->input_names[i] == name) return r->inputs[i];
    return NULL;
}

static cort_status *concat_rows(pending *items, const char *name, int64_t total, cort_value **out) {
    const cort_value *first = find_input(items->req, name);
    const size_t rank = cort_tensor_rank(first);
    int64_t shape[SERVE_MAX_RANK];
    memcpy(shape, cort_tensor_shape(first), rank * sizeof *shape);
    shape[0] = total;
    cort_value *v = NULL;
    cort_status *st = cort_tensor_create(cort_tensor_type(first), shape, rank, &v);
    if (st) return st;
    const int strings = cort_tensor_type(first) == CORT_TYPE_STRING;
    size_t at = 0;   /* bytes, or elements for strings */
    for (pending *p = items; p; p = p->next) {
        const cort_value *x = find_input(p->req, name);
        if (strings) {
            char *const *s = cort_tensor_data(x);
            for (size_t i = 0; i < cort_tensor_element_count(x); i++, at++)
                if ((st = cort_tensor_set_string(v, at, s[i]))) {
                    cort_value_release(v);
                    return st;
                }
        } else {
            const size_t bytes = cort_tensor_bytes(x);
            if (bytes) memcpy((char *)cort_tensor_data(v) + at, cort_tensor_data(x), bytes);
            at += bytes;
        }
    }
    *out = v;
    return NULL;
}

static cort_status *slice_rows(const cort_value *all, int64_t row0, int64_t rows, cort_value **out) {
    const size_t rank = cort_tensor_rank(all);
    if (rank < 1 || cort_tensor_shape(all)[0] < row0 + rows)
        return cort_status_create(CORT_ERROR_RUNTIME, "batched output has fewer rows than the merged requests");
    int64_t shape[SERVE_MAX_RANK];
    if (rank > SERVE_MAX_RANK) return cort_status_create(CORT_ERROR_RUNTIME, "batched output rank too large");
    memcpy(shape, cort_tensor_shape(all), rank * sizeof *shape);
    const int64_t total = shape[0];
    shape[0] = rows;
    cort_value *v = NULL;
    cort_status *st = cort_tensor_create(cort_tensor_type(all), shape, rank, &v);
    if (st) return st;
    const size_t per_row = total ? cort_tensor_element_count(all) / (size_t)total : 0;
    if (cort_tensor_type(all) == CORT_TYPE_STRING) {
        char *const *s = cort_tensor_data(all);
        for (size_t i = 0; i < per_row * (size_t)rows; i++)
            if ((st = cort_tensor_set_string(v, i, s[(size_t)row0 * per_row + i]))) {
                cort_value_release(v);
                return st;
            }
    } else {
        const size_t esize = cort_type_size(cort_tensor_type(all));
        if (per_row && rows)
            memcpy(cort_tensor_data(v), (const char *)cort_tensor_data(all) + (size_t)row0 * per_row * esize,
                   (size_t)rows * per_row * esize);
    }
    *out = v;
    return NULL;
}

static void free_items(pending *p) {
    while (p) {
        pending *n = p->next;
        free(p);
        p = n;
    }
}

static void batch_done(void *user, cort_status *status, cort_value **outputs, size_t n_outputs) {
    batch_run *b = user;
    int64_t row = 0;
    for (pending *p = b->items; p; p = p->next) {
        cort_status *st = status ? cort_status_create(cort_status_code(status), cort_status_message(status)) : NULL;
        cort_value *mine[64] = { 0 };
        cort_value **slices = n_outputs <= 64 ? mine : calloc(n_outputs, sizeof *slices);
        if (!st && !slices) st = cort_status_create(CORT_ERROR_OUT_OF_MEMORY, "out of memory splitting a batch");
        for (size_t i = 0; !st && i < n_outputs; i++) st = slice_rows(outputs[i], row, p->rows, &slices[i]);
        if (st) {
            for (size_t i = 0; slices && i < n_outputs; i++) cort_value_release(slices[i]);
            p->done(p->user, st, NULL, 0);
        } else p->done(p->user, NULL, slices, n_outputs);
        if (slices != mine) free(slices);
        row += p->rows;
    }
    for (size_t i = 0; i < n_outputs; i++) cort_value_release(outputs[i]);
    cort_status_free(status);
    free_items(b->items);
    free(b);
}

static void run_batch(serve_model *m, pending *items, size_t n_items) {
    const serve_request *r0 = items->req;
    const size_t n_in = r0->n_inputs;
    int64_t total = 0;
    for (pending *p = items; p; p = p->next) total += p->rows;
    atomic_fetch_add_explicit(&m->stats.batches, 1, memory_order_relaxed);
    if (n_items > 1) atomic_fetch_add_explicit(&m->stats.batched_rows, n_items, memory_order_relaxed);
    cort_value *merged[64] = { 0 };
    cort_status *st = NULL;
    if (r0->n_inputs > 64) st = cort_status_create(CORT_ERROR_INVALID_ARGUMENT, "too many inputs to batch");
    for (size_t i = 0; !st && i < r0->n_inputs; i++)
        st = n_items == 1 ? (merged[i] = cort_value_retain(r0->inputs[i]), NULL) : concat_rows(items, r0->input_names[i], total, &merged[i]);
    batch_run *b = st ? NULL : calloc(1, sizeof *b);
    if (!st && !b) st = cort_status_create(CORT_ERROR_OUT_OF_MEMORY, "out of memory batching");
    if (!st) {
        b->m = m;
        b->items = items;
        b->n_items = n_items;
        b->n_outputs = r0->n_outputs;
        st = cort_session_run_async(m->session, NULL, (const char *const *)r0->input_names, merged, r0->n_inputs,
                                    r0->output_names, r0->n_outputs, NULL, batch_done, b);
        if (st) free(b);
    }
    /* once submitted, the callback may already have answered and freed every request: use n_in */
    for (size_t i = 0; i < n_in && i < 64; i++) cort_value_release(merged[i]);
    if (st) {
        for (pending *p = items; p; p = p->next)
            p->done(p->user, cort_status_create(cort_status_code(st), cort_status_message(st)), NULL, 0);
        cort_status_free(st);
        free_items(items);
    }
}

static void deadline_after(struct timespec *ts, int us) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_nsec += (long)us % 1000000 * 1000;
    ts->tv_sec += us / 1000000 + ts->tv_nsec / 1000000000;
    ts->tv_nsec %= 1000000000;
}

static void *batcher_main(void *arg) {
    serve_batcher *bt = arg;
    serve_model *m = bt->m;
    pthread_mutex_lock(&bt->mu);
    for (;;) {
        while (!bt->head && !bt->stop) pthread_cond_wait(&bt->cv, &bt->mu);
        if (!bt->head) break;   /* stopping and nothing left */
        /* wait for company until the batch is full or the first request's delay is over */
        struct timespec until;
        deadline_after(&until, m->batch_delay_us);
        for (;;) {
            int64_t rows = 0;
            for (pending *p = bt->head; p; p = p->next)
                if (compatible(bt->head->req, p->req)) rows += p->rows;
            if (rows >= m->max_batch || bt->stop) break;
            if (pthread_cond_timedwait(&bt->cv, &bt->mu, &until) == ETIMEDOUT) break;
        }
        /* take the head and every compatible request that still fits, keep the rest in order */
        pending *take = bt->head, *take_tail = bt->head, *keep = NULL, *keep_tail = NULL;
        int64_t rows = take->rows;
        size_t n = 1;
        pending *p = take->next;
        take->next = NULL;
        while (p) {
            pending *next = p->next;
            p->next = NULL;
            if (compatible(take->req, p->req) && rows + p->rows <= m->max_batch) {
                take_tail->next = p;
                take_tail = p;
                rows += p->rows;
                n++;
            } else {
                if (keep_tail) keep_tail->next = p;
                else keep = p;
                keep_tail = p;
            }
            p = next;
        }
        bt->head = keep;
        bt->tail = keep_tail;
        bt->queued_rows -= rows;
        pthread_mutex_unlock(&bt->mu);
        run_batch(m, take, n);
        pthread_mutex_lock(&bt->mu);
    }
    pthread_mutex_unlock(&bt->mu);
    return NULL;
}

int serve_batcher_start(serve_model *m, char *err, size_t errlen) {
    serve_batcher *bt = calloc(1, sizeof *bt);
    if (!bt) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&bt->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&bt->cv, &ca);
    pthread_condattr_destroy(&ca);
    bt->m = m;
    if (pthread_create(&bt->thread, NULL, batcher_main, bt)) {
        pthread_mutex_destroy(&bt->mu);
        pthread_cond_destroy(&bt->cv);
        free(bt);
        snprintf(err, errlen, "cannot start the batching thread");
        return -1;
    }
    m->batcher = bt;
    return 0;
}

void serve_batcher_stop(serve_model *m) {
    serve_batcher *bt = m->batcher;
    if (!bt) return;
    pthread_mutex_lock(&bt->mu);
    bt->stop = 1;
    pthread_cond_broadcast(&bt->cv);
    pthread_mutex_unlock(&bt->mu);
    pthread_join(bt->thread, NULL);
    pthread_mutex_destroy(&bt->mu);
    pthread_cond_destroy(&bt->cv);
    free(bt);
    m->batcher = NULL;
}

cort_status *serve_batcher_submit(serve_model *m, const serve_request *req, serve_done_fn done, void *user) {
    serve_batcher *bt = m->batcher;
    pending *p = calloc(1, sizeof *p);
    if (!p) return cort_status_create(CORT_ERROR_OUT_OF_MEMORY, "out of memory queueing a request");
    p->req = req;
    p->done = done;
    p->user = user;
    p->rows = req->n_inputs ? cort_tensor_shape(req->inputs[0])[0] : 1;
    for (size_t i = 1; i < req->n_inputs; i++)
        if (cort_tensor_shape(req->inputs[i])[0] != p->rows) {
            free(p);
            return cort_status_create(CORT_ERROR_INVALID_ARGUMENT, "inputs disagree on the batch dimension (dimension 0)");
        }
    pthread_mutex_lock(&bt->mu);
    const int first = bt->head == NULL;
    if (bt->tail) bt->tail->next = p;
    else bt->head = p;
    bt->tail = p;
    bt->queued_rows += p->rows;
    /* The batcher needs waking for a first request, or when a batch may be full; a request that
     * only adds company would wake it to count and sleep again (a futex call per request). */
    if (first || bt->queued_rows >= m->max_batch) pthread_cond_signal(&bt->cv);
    pthread_mutex_unlock(&bt->mu);
    return NULL;
}
