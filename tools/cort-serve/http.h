/* The HTTP front end of cort-serve (http.c) and the state main.c hands it. */
#ifndef CORT_SERVE_HTTP_H
#define CORT_SERVE_HTTP_H

#include "serve.h"

struct MHD_Daemon;

#define SERVE_MAX_HTTP_THREADS 64

typedef struct serve_server {
    serve_repo         repo;
    serve_limits       limits;
    const char        *host;
    int                port;             /* 0: any free port; the bound port after start */
    int                http_threads;     /* libmicrohttpd polling threads */
    /* 1: the polling threads wait with poll(2) instead of epoll. A suspended connection then leaves
     * and rejoins the wait set without two epoll_ctl calls, but every wait scans all of a thread's
     * connections (docs/serving.md: which wins when) */
    int                http_poll;
    int                timeout_s;        /* idle connection timeout (slow clients) */
    int                max_connections;
    size_t             max_body;
    int                access_log;
    int                verbose;
    atomic_int         draining;
    atomic_int         running;          /* requests whose connection is suspended on a run */
    /* open connections per polling thread (threads numbered as they first accept) and in all */
    atomic_int         conns[SERVE_MAX_HTTP_THREADS];
    atomic_int         conns_total;
    atomic_int         n_http_slots;
    /* request timeouts: runs with a deadline, checked by one timer thread */
    pthread_mutex_t    timer_mu;
    pthread_cond_t     timer_cv;
    pthread_t          timer_thread;
    int                timer_started, timer_stop;
    uint64_t           timer_wake_us;    /* when the timer thread means to look next */
    struct conn_ctx   *timed;            /* doubly linked list of requests with a deadline */
    struct MHD_Daemon *daemon;
} serve_server;

int  serve_http_start(serve_server *srv, char *err, size_t errlen);
/* Stops accepting, answers what is in flight (telling keep-alive clients to close), then stops. */
void serve_http_drain(serve_server *srv, int drain_timeout_s);

#endif
