/* HTTP side: libmicrohttpd with its own polling threads; an infer request is parsed on the polling
 * thread, its connection suspended, the run submitted (cort_session_run_async, or the model's
 * batcher), and the completion callback builds the response on cort's worker and resumes the
 * connection. Polling threads therefore never wait for a model. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <microhttpd.h>
#include "http.h"

typedef struct conn_ctx {
    serve_server          *srv;
    struct MHD_Connection *conn;
    char                  *body;   /* body_mem + a pad that puts the binary data on a cache line */
    char                  *body_mem;
    size_t                 len, cap;
    int                    too_big;
    /* 0 receiving, 1 running (suspended), 2 answer ready. Atomic: the completion callback sets 2 on a
     * cort worker while the handler that submitted the run may still be returning. */
    atomic_int             state;
    unsigned               status;
    serve_response         resp;
    serve_model           *model;
    serve_request          req;
    uint64_t               t0_us;
    /* request timeout: the run's options, its deadline and links in srv->timed (under timer_mu) */
    cort_run_options      *opts;
    uint64_t               deadline_us;
    struct conn_ctx       *tprev, *tnext;
    int                    fired;
} conn_ctx;

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static enum MHD_Result send_buf(serve_server *srv, struct MHD_Connection *c, unsigned status, char *body, size_t len,
                                const char *content_type, size_t json_length) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (json_length < len) {
        char h[32];
        snprintf(h, sizeof h, "%zu", json_length);
        MHD_add_response_header(r, "Inference-Header-Content-Length", h);
    }
    /* while draining, ask keep-alive clients to go away so the drain can finish */
    if (atomic_load(&srv->draining)) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (status == 503 || status == 429) MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    const enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result send_json(serve_server *srv, struct MHD_Connection *c, unsigned status, json_t *j) {
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!s) return MHD_NO;
    return send_buf(srv, c, status, s, strlen(s), "application/json", (size_t)-1);
}

static enum MHD_Result send_error(serve_server *srv, struct MHD_Connection *c, unsigned status, const char *msg) {
    char *s = serve_error_json(msg);
    if (!s) return MHD_NO;
    return send_buf(srv, c, status, s, strlen(s), "application/json", (size_t)-1);
}

static json_t *io_json(const serve_io *io, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        json_t *shape = json_array();
        const char *dt = io[i].kind == 1 ? serve_datatype_name(io[i].type) : NULL;
        json_object_set_new(o, "name", json_string(io[i].name));
        /* v2 has no name for sequences and maps; such ports are listed but cannot be requested */
        json_object_set_new(o, "datatype", json_string(dt ? dt : io[i].kind == 1 ? cort_type_name(io[i].type)
                                                              : io[i].kind == 2 ? "SEQUENCE" : io[i].kind == 4 ? "MAP" : "UNKNOWN"));
        for (int d = 0; d < io[i].rank; d++) json_array_append_new(shape, json_integer(io[i].dims[d]));
        json_object_set_new(o, "shape", shape);
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *model_metadata(const serve_server *srv, const serve_model *m, int one_version) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_t *versions = json_array();
    if (one_version) json_array_append_new(versions, json_string(m->version));
    else
        for (size_t i = 0; i < srv->repo.n_models; i++)
            if (strcmp(srv->repo.models[i]->name, m->name) == 0)
                json_array_append_new(versions, json_string(srv->repo.models[i]->version));
    json_object_set_new(o, "versions", versions);
    json_object_set_new(o, "platform", json_string("onnx_onnxv1"));
    json_object_set_new(o, "inputs", io_json(m->inputs, m->n_inputs));
    json_object_set_new(o, "outputs", io_json(m->outputs, m->n_outputs));
    return o;
}

/* ---- request timeouts ----
 * One thread holds the requests that have a deadline and sets their run options' terminate flag
 * when it passes; the run then stops at its next node boundary (or before it starts, when still
 * queued) and the request is answered 504. The list is short (requests in flight), so the thread
 * scans it and sleeps until the earliest deadline; a new request only wakes it when its deadline
 * is earlier than that, which with one timeout per model is rare. */
static void *timer_main(void *arg) {
    serve_server *srv = arg;
    pthread_mutex_lock(&srv->timer_mu);
    while (!srv->timer_stop) {
        const uint64_t now = now_us();
        uint64_t next = UINT64_MAX;
        for (conn_ctx *x = srv->timed; x; x = x->tnext) {
            if (x->fired) continue;
            if (x->deadline_us <= now) {
                x->fired = 1;
                cort_run_options_set_terminate(x->opts, 1);
            } else if (x->deadline_us < next) next = x->deadline_us;
        }
        srv->timer_wake_us = next;
        if (next == UINT64_MAX) pthread_cond_wait(&srv->timer_cv, &srv->timer_mu);
        else {
            struct timespec ts = { .tv_sec = (time_t)(next / 1000000u), .tv_nsec = (long)(next % 1000000u) * 1000 };
            pthread_cond_timedwait(&srv->timer_cv, &srv->timer_mu, &ts);
        }
    }
    pthread_mutex_unlock(&srv->timer_mu);
    return NULL;
}

/* Gives x run options that the timer cancels at x->t0_us + timeout; without memory for them the
 * request runs without a timeout. */
static void timer_add(serve_server *srv, conn_ctx *x, int timeout_ms) {
    if (!srv->timer_started || cort_run_options_create(&x->opts) != NULL) {
        x->opts = NULL;
        return;
    }
    x->deadline_us = x->t0_us + (uint64_t)timeout_ms * 1000u;
    x->fired = 0;
    pthread_mutex_lock(&srv->timer_mu);
    x->tprev = NULL;
    x->tnext = srv->timed;
    if (srv->timed) srv->timed->tprev = x;
    srv->timed = x;
    if (x->deadline_us < srv->timer_wake_us) {
        srv->timer_wake_us = x->deadline_us;
        pthread_cond_signal(&srv->timer_cv);
    }
    pthread_mutex_unlock(&srv->timer_mu);
}

/* Takes x out of the timer's list and frees its run options; 1 when its deadline had passed. */
static int timer_remove(serve_server *srv, conn_ctx *x) {
    pthread_mutex_lock(&srv->timer_mu);
    if (x->tprev) x->tprev->tnext = x->tnext;
    else srv->timed = x->tnext;
    if (x->tnext) x->tnext->tprev = x->tprev;
    const int fired = x->fired;
    pthread_mutex_unlock(&srv->timer_mu);
    cort_run_options_free(x->opts);
    x->opts = NULL;
    return fired;
}

/* The end of a run wherever it ran: the answer (or error) into x->resp, statistics, the request and
 * its place in the model's queue released. */
static void finish_infer(conn_ctx *x, cort_status *status, cort_value **outputs, size_t n_outputs) {
    char err[1024];
    const int timed_out = x->opts ? timer_remove(x->srv, x) : 0;
    if (status && timed_out && cort_status_code(status) == CORT_ERROR_CANCELLED) {
        x->status = 504;
        snprintf(err, sizeof err, "model '%s' version %s: no answer within the request timeout of %d ms; the run was cancelled",
                 x->model->name, x->model->version, x->model->request_timeout_ms);
        cort_status_free(status);
        atomic_fetch_add_explicit(&x->model->stats.timeouts, 1, memory_order_relaxed);
    } else if (status) {
        const cort_code code = cort_status_code(status);
        x->status = code == CORT_ERROR_OUT_OF_MEMORY ? 503 : code == CORT_ERROR_INVALID_ARGUMENT ? 400 : 500;
        snprintf(err, sizeof err, "%s", cort_status_message(status));
        cort_status_free(status);
    } else {
        const int rc = serve_build_response(x->model, &x->req, outputs, &x->resp, err, sizeof err);
        x->status = rc ? (unsigned)rc : 200;
        for (size_t i = 0; i < n_outputs; i++) cort_value_release(outputs[i]);
    }
    if (x->status != 200) {
        free(x->resp.body);
        memset(&x->resp, 0, sizeof x->resp);
        x->resp.body = serve_error_json(err);
        x->resp.length = x->resp.json_length = x->resp.body ? strlen(x->resp.body) : 0;
    }
    serve_stats_observe(&x->model->stats, now_us() - x->t0_us, x->status != 200);
    atomic_fetch_sub(&x->model->in_flight, 1);
    serve_request_free(&x->req);
}

/* completion of a run on a cort worker or the batcher thread: answer, wake the connection */
static void infer_done(void *user, cort_status *status, cort_value **outputs, size_t n_outputs) {
    conn_ctx *x = user;
    finish_infer(x, status, outputs, n_outputs);
    x->state = 2;
    serve_server *srv = x->srv;
    struct MHD_Connection *c = x->conn;
    MHD_resume_connection(c);
    atomic_fetch_sub(&srv->running, 1);
}

static enum MHD_Result send_answer(serve_server *srv, conn_ctx *x) {
    char *body = x->resp.body;
    x->resp.body = NULL;
    const int binary = x->resp.json_length < x->resp.length;
    return send_buf(srv, x->conn, x->status, body, x->resp.length, binary ? "application/octet-stream" : "application/json",
                    x->resp.json_length);
}

#define SERVE_INLINE_PROBE 256u

/* The polling thread's number (-1 until it first accepts) and its count of requests considered. */
static _Thread_local int      tls_slot = -1;
static _Thread_local unsigned tls_turn;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    serve_server *srv = cls;
    (void)c;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        if (tls_slot < 0) {
            const int s = atomic_fetch_add(&srv->n_http_slots, 1);
            tls_slot = s < SERVE_MAX_HTTP_THREADS ? s : SERVE_MAX_HTTP_THREADS;
        }
        if (tls_slot < SERVE_MAX_HTTP_THREADS) atomic_fetch_add(&srv->conns[tls_slot], 1);
        atomic_fetch_add(&srv->conns_total, 1);
        *socket_context = (void *)(intptr_t)(tls_slot + 1);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        const int slot = (int)(intptr_t)*socket_context - 1;
        if (slot < SERVE_MAX_HTTP_THREADS) atomic_fetch_sub(&srv->conns[slot], 1);
        atomic_fetch_sub(&srv->conns_total, 1);
        *socket_context = NULL;
    }
}

/* libmicrohttpd gives each accepted connection to one polling thread for good, and how many each
 * gets is up to who wins accept(): 64 connections opened at once have all landed on one of two
 * threads. A thread running every request itself would then leave the other core idle. A thread
 * with more than its share of the open connections therefore runs only a share's worth of requests
 * itself and hands the rest to run_async, whose workers run on every core. */
static int thread_has_room(serve_server *srv) {
    if (tls_slot < 0 || tls_slot >= SERVE_MAX_HTTP_THREADS || srv->http_threads <= 1) return 1;
    const unsigned mine = (unsigned)atomic_load_explicit(&srv->conns[tls_slot], memory_order_relaxed);
    const unsigned total = (unsigned)atomic_load_explicit(&srv->conns_total, memory_order_relaxed);
    const unsigned share = (total + (unsigned)srv->http_threads - 1) / (unsigned)srv->http_threads;
    if (mine <= share) return 1;
    return tls_turn++ % mine < share;
}

/* A short run costs less than handing it to a cort worker and back: a suspended connection is taken
 * out of and put back into the polling thread's epoll set, and two threads are woken, which on a
 * small model is as much CPU as the model. Such runs are made where the request was parsed (at most
 * --http-threads at once, so no more runs than cores either). Which runs are short is learnt from
 * the runs made here; a model that turned out long goes to run_async, except every
 * SERVE_INLINE_PROBE-th request, which measures it again. */
static int run_here(serve_server *srv, serve_model *m) {
    if (m->inline_max_us <= 0 || !thread_has_room(srv)) return 0;
    const uint_fast32_t mean = atomic_load_explicit(&m->inline_run_us, memory_order_relaxed);
    if (mean < (uint_fast32_t)m->inline_max_us) return 1;
    return atomic_fetch_add_explicit(&m->inline_probe, 1, memory_order_relaxed) % SERVE_INLINE_PROBE == 0;
}

static void note_run_here(serve_model *m, uint64_t us) {
    if (us > UINT32_MAX / 2) us = UINT32_MAX / 2;
    const uint_fast32_t old = atomic_load_explicit(&m->inline_run_us, memory_order_relaxed);
    /* weight 1/8: a few long runs in a row move the model to run_async; racing updates may lose one */
    const uint_fast32_t mean = old == 0 ? (uint_fast32_t)us + 1 : (uint_fast32_t)((old * 7 + us + 7) / 8);
    atomic_store_explicit(&m->inline_run_us, mean, memory_order_relaxed);
}

/* 0 when no memory was left for the outputs array (the caller then hands the run to run_async) */
static int run_inline(serve_server *srv, conn_ctx *x, serve_model *m, enum MHD_Result *rc) {
    cort_value *small[8] = { NULL };
    cort_value **outs = small;
    if (x->req.n_outputs > 8 && !(outs = calloc(x->req.n_outputs, sizeof *outs))) return 0;
    atomic_fetch_add(&srv->running, 1);
    const uint64_t t = now_us();
    cort_status *st = cort_session_run(m->session, x->opts, (const char *const *)x->req.input_names, x->req.inputs,
                                       x->req.n_inputs, x->req.output_names, x->req.n_outputs, outs);
    note_run_here(m, now_us() - t);
    atomic_fetch_add_explicit(&m->stats.inline_runs, 1, memory_order_relaxed);
    finish_infer(x, st, st ? NULL : outs, st ? 0 : x->req.n_outputs);
    if (outs != small) free(outs);
    atomic_fetch_sub(&srv->running, 1);
    x->state = 2;
    *rc = send_answer(srv, x);
    return 1;
}

static enum MHD_Result start_infer(serve_server *srv, conn_ctx *x, serve_model *m) {
    char err[1024];
    size_t header_len = x->len;
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Inference-Header-Content-Length");
    if (h) {
        char *end;
        errno = 0;
        const unsigned long long v = strtoull(h, &end, 10);
        if (errno || end == h || *end || v > x->len)
            return send_error(srv, x->conn, 400, "Inference-Header-Content-Length is not a size within the body");
        header_len = (size_t)v;
    }
    if (atomic_fetch_add(&m->in_flight, 1) >= m->max_queue) {
        atomic_fetch_sub(&m->in_flight, 1);
        atomic_fetch_add_explicit(&m->stats.rejected, 1, memory_order_relaxed);
        snprintf(err, sizeof err, "model '%s' version %s: queue full (%d requests waiting or running)", m->name, m->version,
                 m->max_queue);
        return send_error(srv, x->conn, 429, err);
    }
    x->model = m;
    x->t0_us = now_us();
    const int rc = serve_parse_request(m, x->body ? x->body : "", x->len, header_len, &srv->limits, &x->req, err, sizeof err);
    if (x->req.borrows_body) x->req.body = x->body_mem;
    else free(x->body_mem);
    x->body = x->body_mem = NULL;
    if (rc) {
        serve_request_free(&x->req);
        atomic_fetch_sub(&m->in_flight, 1);
        serve_stats_observe(&m->stats, now_us() - x->t0_us, 1);
        return send_error(srv, x->conn, (unsigned)rc, err);
    }
    const int batch = serve_batcher_accepts(m, &x->req);
    if (!batch && m->request_timeout_ms > 0) timer_add(srv, x, m->request_timeout_ms);
    enum MHD_Result answered;
    if (!batch && run_here(srv, m) && run_inline(srv, x, m, &answered)) return answered;
    /* suspend first: the callback may resume the connection before submit returns */
    x->state = 1;
    atomic_fetch_add(&srv->running, 1);
    MHD_suspend_connection(x->conn);
    cort_status *st;
    if (batch) st = serve_batcher_submit(m, &x->req, infer_done, x);
    else
        st = cort_session_run_async(m->session, x->opts, (const char *const *)x->req.input_names, x->req.inputs,
                                    x->req.n_inputs, x->req.output_names, x->req.n_outputs, NULL, infer_done, x);
    if (st) infer_done(x, st, NULL, 0);   /* refused before running: same path, no callback follows */
    return MHD_YES;
}

/* /v2/models/NAME[/versions/V][/ready|/infer] */
static enum MHD_Result route_model(serve_server *srv, conn_ctx *x, const char *method, const char *rest) {
    char name[256], version[64] = "", action[16] = "";
    const char *slash = strchr(rest, '/');
    const size_t nlen = slash ? (size_t)(slash - rest) : strlen(rest);
    if (nlen == 0 || nlen >= sizeof name) return send_error(srv, x->conn, 404, "no such model");
    memcpy(name, rest, nlen);
    name[nlen] = 0;
    const char *p = slash;
    if (p && strncmp(p, "/versions/", 10) == 0) {
        p += 10;
        const char *s2 = strchr(p, '/');
        const size_t vlen = s2 ? (size_t)(s2 - p) : strlen(p);
        if (vlen == 0 || vlen >= sizeof version) return send_error(srv, x->conn, 404, "no such model version");
        memcpy(version, p, vlen);
        version[vlen] = 0;
        p = s2;
    }
    if (p) {
        if (strcmp(p, "/ready") == 0) strcpy(action, "ready");
        else if (strcmp(p, "/infer") == 0) strcpy(action, "infer");
        else return send_error(srv, x->conn, 404, "unknown endpoint");
    }
    serve_model *m = serve_repo_find(&srv->repo, name, version);
    if (!m) {
        char err[512];
        if (version[0] && serve_repo_find(&srv->repo, name, NULL))
            snprintf(err, sizeof err, "model '%s' has no version '%s'", name, version);
        else snprintf(err, sizeof err, "unknown model '%s'", name);
        return send_error(srv, x->conn, 404, err);
    }
    if (strcmp(action, "infer") == 0) {
        if (strcmp(method, "POST") != 0) return send_error(srv, x->conn, 405, "infer takes POST");
        if (atomic_load(&srv->draining)) return send_error(srv, x->conn, 503, "the server is shutting down");
        return start_infer(srv, x, m);
    }
    if (strcmp(method, "GET") != 0) return send_error(srv, x->conn, 405, "this endpoint takes GET");
    if (strcmp(action, "ready") == 0) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(m->name));
        json_object_set_new(o, "ready", json_boolean(!atomic_load(&srv->draining)));
        return send_json(srv, x->conn, atomic_load(&srv->draining) ? 503 : 200, o);
    }
    return send_json(srv, x->conn, 200, model_metadata(srv, m, version[0] != 0));
}

/* takes s; NULL when out of memory */
static char *append_connection_gauges(serve_server *srv, char *s) {
    const size_t len = strlen(s);
    const int n = atomic_load(&srv->n_http_slots) < SERVE_MAX_HTTP_THREADS ? atomic_load(&srv->n_http_slots) : SERVE_MAX_HTTP_THREADS;
    char *r = realloc(s, len + 200 + (size_t)n * 64);
    if (!r) {
        free(s);
        return NULL;
    }
    char *p = r + len;
    p += sprintf(p, "# HELP cort_http_connections Open connections per HTTP polling thread.\n"
                    "# TYPE cort_http_connections gauge\n");
    for (int i = 0; i < n; i++) p += sprintf(p, "cort_http_connections{thread=\"%d\"} %d\n", i, atomic_load(&srv->conns[i]));
    return r;
}

static enum MHD_Result route(serve_server *srv, conn_ctx *x, const char *method, const char *url) {
    const int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (strcmp(url, "/v2/health/live") == 0) {
        if (!get) return send_error(srv, x->conn, 405, "this endpoint takes GET");
        json_t *o = json_object();
        json_object_set_new(o, "live", json_true());
        return send_json(srv, x->conn, 200, o);
    }
    if (strcmp(url, "/v2/health/ready") == 0) {
        if (!get) return send_error(srv, x->conn, 405, "this endpoint takes GET");
        const int ready = !atomic_load(&srv->draining);
        json_t *o = json_object();
        json_object_set_new(o, "ready", json_boolean(ready));
        return send_json(srv, x->conn, ready ? 200 : 503, o);
    }
    if (strcmp(url, "/v2") == 0 || strcmp(url, "/v2/") == 0) {
        if (!get) return send_error(srv, x->conn, 405, "this endpoint takes GET");
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string("cort"));
        json_object_set_new(o, "version", json_string(cort_version()));
        json_t *ext = json_array();
        json_array_append_new(ext, json_string("binary_tensor_data"));
        json_object_set_new(o, "extensions", ext);
        return send_json(srv, x->conn, 200, o);
    }
    if (strcmp(url, "/metrics") == 0) {
        if (!get) return send_error(srv, x->conn, 405, "this endpoint takes GET");
        char *s = serve_metrics_text(&srv->repo);
        if (s) s = append_connection_gauges(srv, s);
        if (!s) return send_error(srv, x->conn, 503, "out of memory");
        return send_buf(srv, x->conn, 200, s, strlen(s), "text/plain; version=0.0.4", (size_t)-1);
    }
    if (strncmp(url, "/v2/models/", 11) == 0) return route_model(srv, x, method, url + 11);
    char err[300];
    snprintf(err, sizeof err, "unknown endpoint %.200s", url);
    return send_error(srv, x->conn, 404, err);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    (void)version;
    serve_server *srv = cls;
    conn_ctx *x = *con_cls;
    if (!x) {
        x = calloc(1, sizeof *x);
        if (!x) return MHD_NO;
        x->srv = srv;
        x->conn = c;
        *con_cls = x;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > srv->max_body) {
            char err[160];
            snprintf(err, sizeof err, "request body of %s bytes is above the server's limit of %zu", cl, srv->max_body);
            x->state = 2;   /* answered: the body is never read */
            return send_error(srv, c, 413, err);
        }
        /* one buffer of the announced size: no growing and copying while a large body arrives
         * (a body longer than announced, which HTTP does not allow anyway, still grows it) */
        const unsigned long long announced = cl ? strtoull(cl, NULL, 10) : 0;
        if (announced > 0) {
            /* the binary section starts 64-byte aligned, so its tensors can be used in place */
            const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length");
            const size_t json_len = h ? (size_t)strtoull(h, NULL, 10) : 0;
            x->body_mem = malloc((size_t)announced + 64);
            if (x->body_mem) {
                const size_t pad = (64 - ((uintptr_t)x->body_mem + json_len) % 64) % 64;
                x->body = x->body_mem + pad;
                x->cap = (size_t)announced + 64 - pad;
            }
        }
        return MHD_YES;
    }
    if (x->state == 2) {
        if (!x->resp.body) return MHD_YES;   /* answered early (413); MHD discards the upload */
        return send_answer(srv, x);
    }
    if (*upload_size) {
        if (!x->too_big) {
            if (*upload_size > srv->max_body - x->len) {
                x->too_big = 1;
                free(x->body_mem);
                x->body = x->body_mem = NULL;
            } else {
                if (x->len + *upload_size > x->cap) {
                    size_t cap = x->cap ? x->cap * 2 : 65536;
                    while (cap < x->len + *upload_size) cap *= 2;
                    if (cap > srv->max_body) cap = srv->max_body;
                    const size_t pad = x->body_mem ? (size_t)(x->body - x->body_mem) : 0;
                    char *n = realloc(x->body_mem, pad + cap);
                    if (!n) {
                        x->too_big = 2;
                        free(x->body_mem);
                        x->body = x->body_mem = NULL;
                        *upload_size = 0;
                        return MHD_YES;
                    }
                    x->body_mem = n;
                    x->body = n + pad;
                    x->cap = cap;
                }
                memcpy(x->body + x->len, upload, *upload_size);
                x->len += *upload_size;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (x->state == 1) return MHD_YES;   /* spurious wake-up while running */
    if (x->too_big) {
        char err[160];
        if (x->too_big == 2) snprintf(err, sizeof err, "out of memory reading the request body");
        else snprintf(err, sizeof err, "request body is above the server's limit of %zu bytes", srv->max_body);
        x->state = 2;
        return send_error(srv, c, x->too_big == 2 ? 503 : 413, err);
    }
    const enum MHD_Result rc = route(srv, x, method, url);
    if (x->state == 0) x->state = 2;   /* answered synchronously */
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    serve_server *srv = cls;
    (void)c;
    conn_ctx *x = *con_cls;
    if (!x) return;
    if (srv->access_log) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        fprintf(stderr, "cort-serve: %s %u %s\n", x->model ? x->model->name : "-", ci ? ci->http_status : 0,
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "ok" : "aborted");
    }
    free(x->body_mem);
    free(x->resp.body);
    serve_request_free(&x->req);
    free(x);
    *con_cls = NULL;
}

static int timer_start(serve_server *srv, char *err, size_t errlen) {
    int needed = 0;
    for (size_t i = 0; i < srv->repo.n_models; i++) needed |= srv->repo.models[i]->request_timeout_ms > 0;
    if (!needed) return 0;
    srv->timer_wake_us = UINT64_MAX;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);   /* deadlines are now_us() values */
    int rc = pthread_mutex_init(&srv->timer_mu, NULL);
    if (!rc && (rc = pthread_cond_init(&srv->timer_cv, &ca)) != 0) pthread_mutex_destroy(&srv->timer_mu);
    pthread_condattr_destroy(&ca);
    if (!rc && (rc = pthread_create(&srv->timer_thread, NULL, timer_main, srv)) != 0) {
        pthread_cond_destroy(&srv->timer_cv);
        pthread_mutex_destroy(&srv->timer_mu);
    }
    if (rc) {
        snprintf(err, errlen, "cannot start the request-timeout thread (%s)", strerror(rc));
        return -1;
    }
    srv->timer_started = 1;
    return 0;
}

static void timer_stop(serve_server *srv) {
    if (!srv->timer_started) return;
    pthread_mutex_lock(&srv->timer_mu);
    srv->timer_stop = 1;
    pthread_cond_signal(&srv->timer_cv);
    pthread_mutex_unlock(&srv->timer_mu);
    pthread_join(srv->timer_thread, NULL);
    pthread_cond_destroy(&srv->timer_cv);
    pthread_mutex_destroy(&srv->timer_mu);
    srv->timer_started = 0;
}

int serve_http_start(serve_server *srv, char *err, size_t errlen) {
    if (timer_start(srv, err, errlen)) return -1;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (srv->http_poll ? MHD_USE_POLL : MHD_USE_EPOLL) |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (strchr(srv->host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)srv->port);
        if (inet_pton(AF_INET6, srv->host, &a->sin6_addr) != 1) {
            snprintf(err, errlen, "--host %s is not an IPv6 address", srv->host);
            timer_stop(srv);
            return -1;
        }
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)srv->port);
        if (inet_pton(AF_INET, srv->host, &a->sin_addr) != 1) {
            snprintf(err, errlen, "--host %s is not an IPv4 address", srv->host);
            timer_stop(srv);
            return -1;
        }
    }
    if (srv->verbose) flags |= MHD_USE_ERROR_LOG;
    srv->daemon = MHD_start_daemon(flags, (uint16_t)srv->port, NULL, NULL, on_request, srv,
                                   MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                                   MHD_OPTION_THREAD_POOL_SIZE, (unsigned)srv->http_threads,
                                   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->timeout_s,
                                   MHD_OPTION_CONNECTION_LIMIT, (unsigned)srv->max_connections,
                                   MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                                   MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
                                   MHD_OPTION_END);
    if (!srv->daemon) {
        snprintf(err, errlen, "cannot listen on %s:%d (%s)", srv->host, srv->port, errno ? strerror(errno) : "libmicrohttpd failed");
        timer_stop(srv);
        return -1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (di) srv->port = di->port;
    return 0;
}

void serve_http_drain(serve_server *srv, int drain_timeout_s) {
    atomic_store(&srv->draining, 1);
    /* The pool's workers drop the listening socket from their wait sets after quiesce returns, so
     * closing it now could hand its number to another file under them: new connections are refused
     * by shutdown here and the descriptor is closed once the workers are gone. */
    const MHD_socket s = MHD_quiesce_daemon(srv->daemon);
    if (s != MHD_INVALID_SOCKET) shutdown(s, SHUT_RDWR);
    /* accepted requests finish; keep-alive connections close after their next answer */
    const uint64_t until = now_us() + (uint64_t)drain_timeout_s * 1000000u;
    for (;;) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        const unsigned conns = di ? di->num_connections : 0;
        if (conns == 0 && atomic_load(&srv->running) == 0) break;
        /* idle keep-alive connections may never speak again; runs in flight are always waited for */
        if (now_us() > until && atomic_load(&srv->running) == 0) break;
        usleep(5000);
    }
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    timer_stop(srv);
    if (s != MHD_INVALID_SOCKET) close(s);
}
