/* Counters per model version and their Prometheus text exposition (format 0.0.4). Counters are
 * relaxed atomics: a scrape may see one request's count before its latency, never a torn value. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serve.h"

static const double k_bounds_s[SERVE_BUCKETS - 1] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                       0.1,    0.25,  0.5,    1.0,   2.5,  10.0 };

void serve_stats_observe(serve_stats *s, uint64_t latency_us, int failed) {
    atomic_fetch_add_explicit(&s->requests, 1, memory_order_relaxed);
    if (failed) atomic_fetch_add_explicit(&s->failures, 1, memory_order_relaxed);
    const double sec = (double)latency_us * 1e-6;
    size_t b = 0;
    while (b < SERVE_BUCKETS - 1 && sec > k_bounds_s[b]) b++;
    atomic_fetch_add_explicit(&s->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->latency_us_sum, latency_us, memory_order_relaxed);
}

typedef struct sbuf {
    char  *p;
    size_t len, cap;
    int    oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        const size_t want = b->len + (size_t)n + 1;
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < want) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static void header(sbuf *b, const char *name, const char *type, const char *help) {
    put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#define LOAD(x) ((unsigned long long)atomic_load_explicit(&(x), memory_order_relaxed))

char *serve_metrics_text(const serve_repo *repo) {
    sbuf b = { 0 };
    static const struct { const char *name, *help; size_t off; } counters[] = {
        { "cort_requests_total", "Inference requests that reached the model.", offsetof(serve_stats, requests) },
        { "cort_request_failures_total", "Inference requests answered with an error.", offsetof(serve_stats, failures) },
        { "cort_requests_rejected_total", "Inference requests refused because the model's queue was full.",
          offsetof(serve_stats, rejected) },
        { "cort_batches_total", "Runs executed for merged (dynamically batched) requests.", offsetof(serve_stats, batches) },
        { "cort_batched_requests_total", "Requests that ran inside a merged batch.", offsetof(serve_stats, batched_rows) },
        { "cort_inline_requests_total", "Requests run on the HTTP thread that read them (short runs).",
          offsetof(serve_stats, inline_runs) },
        { "cort_request_timeouts_total", "Requests cancelled and answered 504 by the request timeout.",
          offsetof(serve_stats, timeouts) },
    };
    for (size_t c = 0; c < sizeof counters / sizeof counters[0]; c++) {
        header(&b, counters[c].name, "counter", counters[c].help);
        for (size_t i = 0; i < repo->n_models; i++) {
            serve_model *m = repo->models[i];
            atomic_uint_fast64_t *v = (atomic_uint_fast64_t *)((char *)&m->stats + counters[c].off);
            put(&b, "%s{model=\"%s\",version=\"%s\"} %llu\n", counters[c].name, m->name, m->version, LOAD(*v));
        }
    }
    header(&b, "cort_queue_depth", "gauge", "Requests of the model queued or running.");
    for (size_t i = 0; i < repo->n_models; i++) {
        serve_model *m = repo->models[i];
        put(&b, "cort_queue_depth{model=\"%s\",version=\"%s\"} %d\n", m->name, m->version,
            atomic_load_explicit(&m->in_flight, memory_order_relaxed));
    }
    header(&b, "cort_request_duration_seconds", "histogram",
           "Time from a complete request body to a complete response body.");
    for (size_t i = 0; i < repo->n_models; i++) {
        serve_model *m = repo->models[i];
        unsigned long long cum = 0;
        for (size_t k = 0; k < SERVE_BUCKETS; k++) {
            cum += LOAD(m->stats.bucket[k]);
            if (k < SERVE_BUCKETS - 1)
                put(&b, "cort_request_duration_seconds_bucket{model=\"%s\",version=\"%s\",le=\"%g\"} %llu\n", m->name,
                    m->version, k_bounds_s[k], cum);
            else
                put(&b, "cort_request_duration_seconds_bucket{model=\"%s\",version=\"%s\",le=\"+Inf\"} %llu\n", m->name,
                    m->version, cum);
        }
        put(&b, "cort_request_duration_seconds_sum{model=\"%s\",version=\"%s\"} %.6f\n", m->name, m->version,
            (double)LOAD(m->stats.latency_us_sum) * 1e-6);
        put(&b, "cort_request_duration_seconds_count{model=\"%s\",version=\"%s\"} %llu\n", m->name, m->version, cum);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
