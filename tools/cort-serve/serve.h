/* cort-serve: the Open Inference Protocol (KServe v2) REST API over cort's public C API.
 *
 * Layers: repo.c loads a model repository into serve_model entries; tensor_json.c turns a v2 infer
 * request (JSON plus the binary tensor data extension) into cort values and outputs back into a v2
 * response, with no HTTP in sight (so it is fuzzed on its own); http.c maps URLs to those and runs
 * requests through cort_session_run_async; batcher.c merges requests along a symbolic batch dimension;
 * metrics.c renders Prometheus text. Only cort.h is used: the server is an ordinary client of libcort. */
#ifndef CORT_SERVE_H
#define CORT_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cort.h>

#define SERVE_MAX_RANK 16

typedef struct serve_io {
    char     *name;
    int       kind;            /* 1 tensor; anything else cannot be carried by v2 */
    cort_type type;
    int       rank;            /* -1 unknown */
    int64_t   dims[SERVE_MAX_RANK];   /* -1 symbolic */
} serve_io;

/* Latency histogram bucket upper bounds in seconds (Prometheus `le`), the last is +Inf. */
#define SERVE_BUCKETS 14

typedef struct serve_stats {
    atomic_uint_fast64_t requests;      /* infer requests that reached the model */
    atomic_uint_fast64_t failures;      /* of those, answered with an error */
    atomic_uint_fast64_t rejected;      /* refused because the queue was full */
    atomic_uint_fast64_t batches;       /* runs executed (a batch counts once) */
    atomic_uint_fast64_t batched_rows;  /* requests that ran inside a merged batch */
    atomic_uint_fast64_t inline_runs;   /* requests run on the HTTP polling thread that parsed them */
    atomic_uint_fast64_t timeouts;      /* requests cancelled by the request timeout */
    atomic_uint_fast64_t bucket[SERVE_BUCKETS];
    atomic_uint_fast64_t latency_us_sum;
} serve_stats;

struct serve_batcher;

typedef struct serve_model {
    char         *name;
    char         *version;          /* repository folder name, e.g. "1" */
    char         *path;
    cort_session *session;
    size_t        n_inputs, n_outputs;
    serve_io     *inputs, *outputs;
    /* limits and knobs (repository `config` file or command line) */
    int           threads;
    int           max_queue;        /* requests in flight or queued; more get 429 */
    int           max_batch;        /* > 1: dynamic batching along dimension 0 */
    int           batch_delay_us;   /* how long the first request of a batch waits for company */
    int           inline_max_us;    /* runs shorter than this run on the HTTP polling thread; 0: never */
    int           request_timeout_ms; /* > 0: a request not answered this long after it was read is
                                       * cancelled and answered 504 (not for merged batches) */
    atomic_int    in_flight;
    /* Mean duration of the runs made on a polling thread (µs, exponentially weighted, 0 before the
     * first) and a counter that sends every SERVE_INLINE_PROBE-th request of a model that ran too long
     * back there, so a model whose runs became short again is noticed. */
    atomic_uint_fast32_t inline_run_us;
    atomic_uint_fast32_t inline_probe;
    serve_stats   stats;
    struct serve_batcher *batcher;  /* NULL without dynamic batching */
} serve_model;

typedef struct serve_repo {
    serve_model **models;           /* sorted by name, then numeric version */
    size_t        n_models;
} serve_repo;

/* Defaults applied to every model unless its config says otherwise. */
typedef struct serve_defaults {
    int         threads;
    int         max_queue;
    int         max_batch;
    int         batch_delay_us;
    int         inline_max_us;
    int         request_timeout_ms;
    int         optimization_level;  /* -1: cort's default */
    const char *provider;            /* NULL or "cpu": CPU only; "xnnpack" appends XNNPACK */
} serve_defaults;

/* repo.c. Errors are written into err (a complete sentence naming the file). 0 on success. */
int  serve_repo_add_file(serve_repo *repo, const char *spec, const serve_defaults *defaults, char *err, size_t errlen);
int  serve_repo_add_dir(serve_repo *repo, const char *dir, const serve_defaults *defaults, char *err, size_t errlen);
void serve_repo_free(serve_repo *repo);
/* version NULL or "": the highest version of that name. NULL if absent. */
serve_model *serve_repo_find(const serve_repo *repo, const char *name, const char *version);
int  serve_model_load(serve_model *m, const serve_defaults *defaults, char *err, size_t errlen);

/* tensor_json.c: a parsed infer request. */
typedef struct serve_request {
    char        *id;                /* NULL when the request has none */
    size_t       n_inputs;
    char       **input_names;       /* model's names (borrowed from the model) */
    cort_value **inputs;
    size_t       n_outputs;         /* requested outputs (all of the model's when none were named) */
    const char **output_names;      /* borrowed from the model */
    unsigned char *output_binary;   /* per requested output: answer in the binary extension */
    int          borrows_body;      /* an input wraps bytes of the parsed body in place */
    void        *body;              /* set by the caller when borrows_body: freed after the inputs */
} serve_request;

/* Limits the parser enforces before allocating anything. */
typedef struct serve_limits {
    uint64_t max_elements;          /* per input tensor */
    int      json_fast_path_off;    /* 1: jansson parses all of the JSON (tests compare the two paths) */
} serve_limits;

/* Parses body[0..length) (header_length: Inference-Header-Content-Length, or length when the body
 * is JSON only) for model m. Returns 0 and fills req, or an HTTP status (400) with a message in err
 * naming the input and the bad value. req must be zeroed; serve_request_free releases it in both
 * cases. A binary input of a fixed-size type whose bytes are aligned to its element size wraps them
 * in place instead of being copied (req->borrows_body is then 1): the body must stay unchanged and
 * valid until serve_request_free, which frees req->body when the caller hands it over there. */
int  serve_parse_request(const serve_model *m, const char *body, size_t length, size_t header_length,
                         const serve_limits *limits, serve_request *req, char *err, size_t errlen);
void serve_request_free(serve_request *req);

/* A response ready to send: JSON followed by binary sections (json_length bytes of JSON). */
typedef struct serve_response {
    char  *body;
    size_t length;
    size_t json_length;             /* < length: Inference-Header-Content-Length is needed */
} serve_response;
/* Builds the v2 response for outputs[0..n) of a request. Returns 0, or an HTTP status (500 for an
 * output v2 cannot carry, e.g. a sequence) with a message in err. */
int  serve_build_response(const serve_model *m, const serve_request *req, cort_value *const *outputs,
                          serve_response *resp, char *err, size_t errlen);
/* {"error": msg} */
char *serve_error_json(const char *msg);

/* v2 datatype names. */
const char *serve_datatype_name(cort_type t);       /* NULL when v2 has no name for it */
int         serve_datatype_parse(const char *s, cort_type *t);

/* metrics.c */
void   serve_stats_observe(serve_stats *s, uint64_t latency_us, int failed);
char  *serve_metrics_text(const serve_repo *repo);   /* malloc'd Prometheus text exposition */

/* batcher.c: requests that may be merged go through serve_batcher_submit instead of run_async. */
typedef void (*serve_done_fn)(void *user, cort_status *status, cort_value **outputs, size_t n_outputs);
int  serve_batcher_start(serve_model *m, char *err, size_t errlen);
void serve_batcher_stop(serve_model *m);
/* 1 when req can be merged with others (every input has the symbolic batch dimension 0) */
int  serve_batcher_accepts(const serve_model *m, const serve_request *req);
/* Takes over nothing: the request stays the caller's until done is called (exactly once). */
cort_status *serve_batcher_submit(serve_model *m, const serve_request *req, serve_done_fn done, void *user);

#endif
