/* cort-serve: serves ONNX models over the Open Inference Protocol (KServe v2) REST API.
 *
 *   cort-serve [OPTIONS] --model-repository DIR
 *   cort-serve [OPTIONS] [NAME=]MODEL.onnx ...
 *
 * SIGTERM or SIGINT: stop accepting, finish every accepted request, exit 0. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "http.h"

static const char usage[] =
    "usage: cort-serve [OPTIONS] --model-repository DIR\n"
    "       cort-serve [OPTIONS] [NAME=]MODEL.onnx ...\n"
    "\n"
    "Serves ONNX models over the KServe v2 (Open Inference Protocol) REST API.\n"
    "A repository holds DIR/<model>/<version>/model.onnx and an optional DIR/<model>/config of\n"
    "`key = value` lines: threads, max_queue, max_batch_size, max_queue_delay_us, inline_max_us,\n"
    "request_timeout_ms, optimization_level, provider (cpu|xnnpack). Models given as files are version 1, named after the file.\n"
    "\n"
    "options:\n"
    "  --host ADDR             address to listen on (default 0.0.0.0; IPv6 addresses allowed)\n"
    "  --port N                TCP port (default 8080; 0 picks a free port, printed at start)\n"
    "  --threads N             intra-op threads per model (default 1: requests run side by side on\n"
    "                          cort's run_async workers, one per core, so cores are not oversubscribed)\n"
    "  --http-threads N        HTTP polling threads (default 2)\n"
    "  --http-poll MODE        how they wait: epoll (default; best with many idle connections) or poll\n"
    "                          (no system calls to suspend and resume a connection: faster with up to\n"
    "                          a few hundred busy ones, e.g. behind a proxy, with dynamic batching)\n"
    "  --inline-max-us N       a model whose runs take less than N µs runs them on the HTTP thread that\n"
    "                          read the request, sparing two thread hand-offs (default 1000; 0: never)\n"
    "  --request-timeout MS    a request not answered MS ms after it was read is cancelled and gets 504\n"
    "                          (default 0: none; requests merged by dynamic batching are not cancelled)\n"
    "  --max-queue N           requests per model queued or running before 429 (default 256)\n"
    "  --max-batch N           dynamic batching: merge requests along a symbolic dimension 0 up to N rows\n"
    "  --batch-delay-us N      how long a request waits for others to batch with (default 500)\n"
    "  --max-body-bytes N      largest request body (default 64 MiB; larger get 413)\n"
    "  --max-elements N        largest input tensor in elements (default 2^28)\n"
    "  --timeout S             idle connection timeout in seconds: slow clients are dropped (default 30)\n"
    "  --max-connections N     (default 1024)\n"
    "  --drain-timeout S       on SIGTERM, how long idle keep-alive connections may stay (default 10)\n"
    "  --optimization-level N  cort's graph optimization level 0..2\n"
    "  --provider P            cpu (default) or xnnpack\n"
    "  --access-log            one line per request on stderr\n"
    "  --verbose               libmicrohttpd's own errors on stderr\n";

static int parse_num(const char *opt, const char *v, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    const long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "cort-serve: %s needs an integer in [%lld, %lld]\n", opt, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int main(int argc, char **argv) {
    serve_server srv;
    memset(&srv, 0, sizeof srv);
    srv.host = "0.0.0.0";
    srv.port = 8080;
    srv.http_threads = 2;
    srv.timeout_s = 30;
    srv.max_connections = 1024;
    srv.max_body = (size_t)64 << 20;
    srv.limits.max_elements = (uint64_t)1 << 28;
    serve_defaults d = { .threads = 1, .max_queue = 256, .max_batch = 0, .batch_delay_us = 500,
                         .inline_max_us = 1000,
                         .optimization_level = -1, .provider = NULL };
    const char *repo_dir = NULL;
    int drain_s = 10;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t n_files = 0;
    if (!files) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            free(files);
            return 0;
        }
#define NUM(name, lo, hi, dst) else if (strcmp(a, name) == 0) { if (parse_num(a, v, lo, hi, &x)) goto usage_fail; dst = x; i++; }
        if (strcmp(a, "--host") == 0) {
            if (!v) goto usage_fail;
            srv.host = v;
            i++;
        } else if (strcmp(a, "--model-repository") == 0) {
            if (!v) goto usage_fail;
            repo_dir = v;
            i++;
        } else if (strcmp(a, "--http-poll") == 0) {
            if (!v || (strcmp(v, "epoll") && strcmp(v, "poll"))) goto usage_fail;
            srv.http_poll = strcmp(v, "poll") == 0;
            i++;
        } else if (strcmp(a, "--provider") == 0) {
            if (!v || (strcmp(v, "cpu") && strcmp(v, "xnnpack"))) goto usage_fail;
            d.provider = v;
            i++;
        }
        NUM("--port", 0, 65535, srv.port)
        NUM("--threads", 0, 256, d.threads)
        NUM("--http-threads", 1, SERVE_MAX_HTTP_THREADS, srv.http_threads)
        NUM("--max-queue", 1, 1 << 20, d.max_queue)
        NUM("--max-batch", 0, 1 << 16, d.max_batch)
        NUM("--batch-delay-us", 0, 10000000, d.batch_delay_us)
        NUM("--inline-max-us", 0, 10000000, d.inline_max_us)
        NUM("--request-timeout", 0, 86400000, d.request_timeout_ms)
        NUM("--max-body-bytes", 1024, (long long)1 << 40, srv.max_body)
        NUM("--max-elements", 1, (long long)1 << 40, srv.limits.max_elements)
        NUM("--timeout", 1, 86400, srv.timeout_s)
        NUM("--max-connections", 1, 1 << 20, srv.max_connections)
        NUM("--drain-timeout", 0, 3600, drain_s)
        NUM("--optimization-level", 0, 2, d.optimization_level)
        else if (strcmp(a, "--access-log") == 0) srv.access_log = 1;
        else if (strcmp(a, "--verbose") == 0) srv.verbose = 1;
        else if (a[0] == '-') {
            fprintf(stderr, "cort-serve: unknown option %s\n", a);
            goto usage_fail;
        } else files[n_files++] = a;
#undef NUM
    }
    if (!repo_dir && n_files == 0) {
        fprintf(stderr, "cort-serve: give --model-repository DIR or model files\n");
        goto usage_fail;
    }

    /* Every thread started from here on (cort's, libmicrohttpd's) inherits the blocked signals;
     * this thread takes SIGTERM/SIGINT with sigwait. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    char err[2048];
    if (repo_dir && serve_repo_add_dir(&srv.repo, repo_dir, &d, err, sizeof err)) goto fail;
    for (size_t i = 0; i < n_files; i++)
        if (serve_repo_add_file(&srv.repo, files[i], &d, err, sizeof err)) goto fail;
    free(files);
    files = NULL;
    if (serve_http_start(&srv, err, sizeof err)) goto fail;
    printf("cort-serve: listening on http://%s:%d (%zu model version%s)\n", srv.host, srv.port, srv.repo.n_models,
           srv.repo.n_models == 1 ? "" : "s");
    for (size_t i = 0; i < srv.repo.n_models; i++)
        printf("cort-serve: model %s version %s from %s\n", srv.repo.models[i]->name, srv.repo.models[i]->version,
               srv.repo.models[i]->path);
    fflush(stdout);

    int sig = 0;
    while (sigwait(&sigs, &sig) != 0) {}
    printf("cort-serve: signal %d, draining\n", sig);
    fflush(stdout);
    serve_http_drain(&srv, drain_s);
    serve_repo_free(&srv.repo);
    printf("cort-serve: stopped\n");
    return 0;

fail:
    fprintf(stderr, "cort-serve: %s\n", err);
    serve_repo_free(&srv.repo);
    free(files);
    return 1;
usage_fail:
    fputs(usage, stderr);
    free(files);
    return 2;
}
