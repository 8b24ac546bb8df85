/* Profiling written as a Chrome trace (a JSON array of complete events, "ph": "X") with the
 * categories, names and args ONNX Runtime's profiler uses, so tools reading ORT's profiles (its
 * own profile summarizers, chrome://tracing, Perfetto) read cort's:
 *   "Session" events: model_loading_uri / session_initialization at creation, model_run per run;
 *   "Node" events: NAME_fence_before, NAME_kernel_time (op_name, provider, exec_plan_index,
 *   activation/parameter/output sizes, input/output type and shape, thread_scheduling_stats),
 *   NAME_fence_after.
 * ts and dur are microseconds from the start of the trace. Events are formatted when they happen
 * (runs are concurrent; shapes are only known then) and appended to one buffer under a lock; only
 * sessions that enabled profiling pay any of this. */
#include "profiler.h"
#include "../graph/provider.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ORT caps its events too; a trace left on for days must not take all memory */
#define MAX_TRACE_BYTES ((size_t)1 << 30)

struct cort_trace {
    pthread_mutex_t lock;
    char *prefix, *path;
    char *buf;
    size_t len, cap;
    int64_t t0, epoch_ns;
    int ended, threads;
    long pid;
};

int64_t cort_trace_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

cort_status *cort_trace_create(const char *prefix, int threads, cort_trace **out) {
    cort_trace *t = cort_calloc(1, sizeof *t);
    if (!t) return cort_error_oom();
    t->prefix = cort_strdup(prefix && *prefix ? prefix : "onnxruntime_profile_");
    if (!t->prefix) { cort_free(t); return cort_error_oom(); }
    pthread_mutex_init(&t->lock, NULL);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    t->epoch_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
    t->t0 = cort_trace_now();
    t->threads = threads;
    t->pid = (long)getpid();
    *out = t;
    return NULL;
}

void cort_trace_free(cort_trace *t) {
    if (!t) return;
    pthread_mutex_destroy(&t->lock);
    cort_free(t->prefix);
    cort_free(t->path);
    cort_free(t->buf);
    cort_free(t);
}

int64_t cort_trace_start_epoch_ns(const cort_trace *t) { return t ? t->epoch_ns : 0; }

/* A growable text buffer for one event. */
typedef struct sbuf { char *p; size_t len, cap; int oom; char stack[2048]; } sbuf;

static void sb_init(sbuf *b) { b->p = b->stack; b->len = 0; b->cap = sizeof b->stack; b->oom = 0; b->stack[0] = 0; }
static void sb_free(sbuf *b) { if (b->p != b->stack) cort_free(b->p); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) { b->oom = 1; return; }
        if ((size_t)n < b->cap - b->len) { b->len += (size_t)n; return; }
        size_t nc = 2 * b->cap + (size_t)n;
        char *np = b->p == b->stack ? cort_malloc(nc) : cort_realloc(b->p, nc);
        if (!np) { b->oom = 1; return; }
        if (b->p == b->stack) memcpy(np, b->stack, b->len + 1);
        b->p = np;
        b->cap = nc;
    }
}

/* s as the inside of a JSON string. */
static void sb_json(sbuf *b, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') sb_printf(b, "\\%c", c);
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_printf(b, "%c", c);
    }
}

static void append(cort_trace *t, const sbuf *b) {
    if (b->oom) return;
    pthread_mutex_lock(&t->lock);
    if (!t->ended && t->len + b->len + 2 <= MAX_TRACE_BYTES) {
        if (t->len + b->len + 2 > t->cap) {
            size_t nc = (t->cap ? 2 * t->cap : 65536) + b->len + 2;
            char *np = cort_realloc(t->buf, nc);
            if (!np) goto out;
            t->buf = np;
            t->cap = nc;
        }
        memcpy(t->buf + t->len, b->p, b->len);
        t->len += b->len;
        t->buf[t->len++] = ',';
        t->buf[t->len++] = '\n';
    }
out:
    pthread_mutex_unlock(&t->lock);
}

static void event_head(cort_trace *t, sbuf *b, const char *cat, int64_t t0, int64_t t1) {
    long tid = (long)syscall(SYS_gettid);
    int64_t ts = (t0 - t->t0) / 1000, dur = (t1 - t0) / 1000;
    sb_printf(b, "{\"cat\" : \"%s\",\"pid\" :%ld,\"tid\" :%ld,\"dur\" :%lld,\"ts\" :%lld,\"ph\" : \"X\",\"name\" :\"", cat,
              t->pid, tid, (long long)(dur > 0 ? dur : 0), (long long)(ts > 0 ? ts : 0));
}

void cort_trace_session(cort_trace *t, const char *name, int64_t t0, int64_t t1) {
    if (!t) return;
    sbuf b;
    sb_init(&b);
    event_head(t, &b, "Session", t0, t1);
    sb_json(&b, name);
    sb_printf(&b, "\",\"args\" : {}}");
    append(t, &b);
    sb_free(&b);
}

static const char *ort_provider_name(const cort_node *n) {
    const char *p = n->provider ? n->provider->name : "cpu";
    if (!strcmp(p, "cpu")) return "CPUExecutionProvider";
    if (!strcmp(p, "xnnpack")) return "XnnpackExecutionProvider";
    if (!strcmp(p, "custom")) return "CPUExecutionProvider";
    return p;
}

static size_t value_bytes(const cort_value *v) {
    return v && v->kind == CORT_VKIND_TENSOR ? v->bytes : 0;
}

static void type_shapes(sbuf *b, cort_value *const *vals, size_t n) {
    sb_printf(b, "[");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const cort_value *v = vals[i];
        if (!v || v->kind != CORT_VKIND_TENSOR) continue;
        sb_printf(b, "%s{\"%s\":[", first ? "" : ",", cort_type_name(v->type));
        for (size_t k = 0; k < v->rank; k++) sb_printf(b, "%s%lld", k ? "," : "", (long long)v->shape[k]);
        sb_printf(b, "]}");
        first = 0;
    }
    sb_printf(b, "]");
}

void cort_trace_node(cort_trace *t, const cort_node *n, cort_value *const *in, size_t n_in, cort_value *const *out,
                     size_t n_out, int64_t t0, int64_t t1) {
    if (!t) return;
    const char *name = n->name && *n->name ? n->name : n->op_type;
    size_t act = 0, param = 0, outb = 0;
    for (size_t i = 0; i < n_in; i++) {
        int32_t s = n->in_slot[i];
        if (s >= 0 && n->graph->consts[s]) param += value_bytes(in[i]);
        else act += value_bytes(in[i]);
    }
    for (size_t i = 0; i < n_out; i++) outb += value_bytes(out[i]);
    sbuf b;
    sb_init(&b);
    event_head(t, &b, "Node", t0, t0);
    sb_json(&b, name);
    sb_printf(&b, "_fence_before\",\"args\" : {\"op_name\" : \"");
    sb_json(&b, n->op_type);
    sb_printf(&b, "\"}},\n");
    event_head(t, &b, "Node", t0, t1);
    sb_json(&b, name);
    sb_printf(&b, "_kernel_time\",\"args\" : {\"op_name\" : \"");
    sb_json(&b, n->op_type);
    sb_printf(&b, "\",\"provider\" : \"%s\",\"graph_index\" : \"%zu\",\"exec_plan_index\" : \"%zu\","
                  "\"activation_size\" : \"%zu\",\"parameter_size\" : \"%zu\",\"output_size\" : \"%zu\","
                  "\"input_type_shape\" : ", ort_provider_name(n), n->index, n->index, act, param, outb);
    type_shapes(&b, in, n_in);
    sb_printf(&b, ",\"output_type_shape\" : ");
    type_shapes(&b, out, n_out);
    sb_printf(&b, ",\"thread_scheduling_stats\" : {\"main_thread\" : {\"thread_pool_name\" : \"session-intra-op\","
                  "\"thread_count\" : %d,\"block_size\" : [],\"dispatch\" : 0,\"run\" : 0}, \"sub_threads\" : {}}}},\n",
              t->threads);
    event_head(t, &b, "Node", t1, t1);
    sb_json(&b, name);
    sb_printf(&b, "_fence_after\",\"args\" : {\"op_name\" : \"");
    sb_json(&b, n->op_type);
    sb_printf(&b, "\"}}");
    append(t, &b);
    sb_free(&b);
}

cort_status *cort_trace_end(cort_trace *t, const char **path) {
    cort_status *st = NULL;
    pthread_mutex_lock(&t->lock);
    if (t->path) { *path = t->path; goto out; }
    {
        /* ORT's name: prefix + "_" + local date and time + ".json" */
        time_t now = time(NULL);
        struct tm tmv;
        localtime_r(&now, &tmv);
        char stamp[64];
        strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tmv);
        size_t plen = strlen(t->prefix) + strlen(stamp) + 8;
        char *p = cort_malloc(plen);
        if (!p) { st = cort_error_oom(); goto out; }
        snprintf(p, plen, "%s_%s.json", t->prefix, stamp);
        FILE *f = fopen(p, "w");
        if (!f) {
            st = cort_error(CORT_ERROR_IO, "cort_session_end_profiling: cannot create '%s'", p);
            cort_free(p);
            goto out;
        }
        /* the last event's ",\n" becomes "\n" */
        size_t body = t->len >= 2 ? t->len - 2 : 0;
        int ok = fputs("[\n", f) >= 0 && (!body || fwrite(t->buf, 1, body, f) == body) && fputs("\n]\n", f) >= 0;
        ok = fclose(f) == 0 && ok;
        if (!ok) {
            st = cort_error(CORT_ERROR_IO, "cort_session_end_profiling: writing '%s' failed", p);
            cort_free(p);
            goto out;
        }
        t->path = p;
        t->ended = 1;
        cort_free(t->buf);
        t->buf = NULL;
        t->len = t->cap = 0;
        *path = p;
    }
out:
    pthread_mutex_unlock(&t->lock);
    return st;
}
