/* Runs one backend test folder. Inputs are positional over the session inputs (graph inputs that
 * are not initializers), expected outputs positional over the graph outputs. */
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "testrun.h"
#include "valueio.h"
#include "core/alloc.h"
#include "core/status.h"

#define MAX_DATA_SETS 256

typedef struct data_set {
    cort_value **inputs;   size_t n_inputs;     /* first n_inputs session inputs */
    cort_value **expected; size_t n_expected;   /* first n_expected session outputs */
} data_set;

static void data_set_clear(data_set *d) {
    for (size_t i = 0; d->inputs && i < d->n_inputs; i++) cort_value_release(d->inputs[i]);
    for (size_t i = 0; d->expected && i < d->n_expected; i++) cort_value_release(d->expected[i]);
    cort_free(d->inputs);
    cort_free(d->expected);
    memset(d, 0, sizeof *d);
}

/* Reads PREFIX_0.pb, PREFIX_1.pb, ... while they exist (at most max files). */
static cort_status *load_numbered(cort_session *s, const char *dir, const char *prefix, int outputs, size_t max,
                                  cort_value ***out, size_t *n_out) {
    cort_status *st = NULL;
    cort_value **vals = NULL;
    size_t n = 0;
    char name[64];
    for (;;) {
        snprintf(name, sizeof name, "%s_%zu.pb", prefix, n);
        char *path = cli_path_join(dir, name);
        if (!path) { st = cort_error_oom(); goto error; }
        if (!cli_file_exists(path)) { cort_free(path); break; }
        if (n >= max) {
            cort_free(path);
            st = cort_error(CORT_ERROR_INVALID_ARGUMENT, "%s has %s but the model has only %zu %s", dir, name, max,
                            outputs ? "outputs" : "inputs");
            goto error;
        }
        cort_value **p = cort_realloc(vals, (n + 1) * sizeof *p);
        if (!p) { cort_free(path); st = cort_error_oom(); goto error; }
        vals = p;
        vals[n] = NULL;
        cort_value_type ty = {0, CORT_TYPE_UNDEFINED, -1};
        st = outputs ? cort_session_output_type(s, n, &ty, NULL, 0) : cort_session_input_type(s, n, &ty, NULL, 0);
        if (st) { cort_status_free(st); st = NULL; ty.kind = 0; }   /* unknown type: let the parser guess */
        st = cli_load_value(path, ty.kind, &vals[n]);
        cort_free(path);
        if (!st && (st = cli_retype_input(&vals[n], &ty))) n++;   /* vals[n] is released below */
        if (st) goto error;
        n++;
    }
    *out = vals;
    *n_out = n;
    return NULL;
error:
    for (size_t i = 0; i < n; i++) cort_value_release(vals[i]);
    cort_free(vals);
    return st;
}

/* test_data_set_N folders sorted by N. */
static int list_data_sets(const char *dir, int *ids, int max) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        const char *p = "test_data_set_";
        if (strncmp(e->d_name, p, strlen(p)) != 0) continue;
        char *end = NULL;
        long id = strtol(e->d_name + strlen(p), &end, 10);
        if (end == e->d_name + strlen(p) || *end || id < 0 || id > 1000000) continue;
        char *path = cli_path_join(dir, e->d_name);
        int isdir = path && cli_dir_exists(path);
        cort_free(path);
        if (isdir) ids[n++] = (int)id;
    }
    closedir(d);
    for (int i = 1; i < n; i++)   /* insertion sort: few entries */
        for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) { int t = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = t; }
    return n;
}

typedef struct run_ctx {
    cort_session *s;
    const data_set *ds;
    const char **in_names, **out_names;
    size_t n_out;
    cort_value **outputs;          /* n_out, owned */
    cort_status *st;
    pthread_barrier_t *barrier;
} run_ctx;

static void run_once(run_ctx *c) {
    c->st = cort_session_run(c->s, NULL, c->in_names, (cort_value *const *)c->ds->inputs, c->ds->n_inputs,
                             c->out_names, c->n_out, c->outputs);
}

static void *run_thread(void *arg) {
    run_ctx *c = arg;
    if (c->barrier) pthread_barrier_wait(c->barrier);   /* start together to maximize overlap */
    run_once(c);
    return NULL;
}

/* Compares outputs with the expected values; 1 if all match. */
static int check_outputs(const run_ctx *c, const cli_test_opts *o, const char *what, char *why, size_t len) {
    char sub[1536];
    for (size_t k = 0; k < c->ds->n_expected; k++) {
        if (!cli_compare(c->outputs[k], c->ds->expected[k], &o->tol, sub, sizeof sub)) {
            snprintf(why, len, "%soutput %zu '%s': %s", what, k, c->out_names[k], sub);
            return 0;
        }
    }
    return 1;
}

static void release_outputs(run_ctx *c) {
    for (size_t k = 0; c->outputs && k < c->n_out; k++) {
        cort_value_release(c->outputs[k]);
        c->outputs[k] = NULL;
    }
}

/* Runs `count` concurrent runs of one data set; 1 if all succeed and match. */
static int run_concurrent(cort_session *s, const data_set *ds, const char **in_names, const char **out_names,
                          size_t n_out, const cli_test_opts *o, const char *ds_name, char *why, size_t len) {
    int count = o->concurrency, ok = 1, barrier_ok = 0;
    run_ctx *ctx = cort_calloc((size_t)count, sizeof *ctx);
    pthread_t *th = cort_calloc((size_t)count, sizeof *th);
    int *started = cort_calloc((size_t)count, sizeof *started);
    pthread_barrier_t barrier;
    if (!ctx || !th || !started) { snprintf(why, len, "%s: out of memory", ds_name); ok = 0; goto done; }
    for (int i = 0; i < count; i++) {
        ctx[i] = (run_ctx){ s, ds, in_names, out_names, n_out, NULL, NULL, NULL };
        ctx[i].outputs = cort_calloc(n_out ? n_out : 1, sizeof *ctx[i].outputs);
        if (!ctx[i].outputs) { snprintf(why, len, "%s: out of memory", ds_name); ok = 0; goto done; }
    }
    barrier_ok = pthread_barrier_init(&barrier, NULL, (unsigned)count) == 0;
    for (int i = 0; i < count; i++) {
        ctx[i].barrier = barrier_ok ? &barrier : NULL;
        started[i] = pthread_create(&th[i], NULL, run_thread, &ctx[i]) == 0;
        if (!started[i] && barrier_ok) {
            /* the barrier would never fill up: run the rest without it */
            for (int j = 0; j < i; j++) pthread_join(th[j], NULL);
            pthread_barrier_destroy(&barrier);
            barrier_ok = 0;
            for (int j = 0; j < count; j++) {
                ctx[j].barrier = NULL;
                if (j < i) { release_outputs(&ctx[j]); cort_status_free(ctx[j].st); ctx[j].st = NULL; }
                started[j] = 0;
            }
            for (int j = 0; j < count; j++) run_once(&ctx[j]);
            break;
        }
    }
    for (int i = 0; i < count; i++)
        if (started[i]) pthread_join(th[i], NULL);
    if (barrier_ok) pthread_barrier_destroy(&barrier);
    for (int i = 0; i < count && ok; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s: concurrent run %d of %d: ", ds_name, i + 1, count);
        if (ctx[i].st) {
            snprintf(why, len, "%s%s: %s", what, cort_code_name(cort_status_code(ctx[i].st)),
                     cort_status_message(ctx[i].st));
            ok = 0;
        } else if (!check_outputs(&ctx[i], o, what, why, len)) {
            ok = 0;
        }
    }
done:
    for (int i = 0; ctx && i < count; i++) {
        release_outputs(&ctx[i]);
        cort_free(ctx[i].outputs);
        cort_status_free(ctx[i].st);
    }
    cort_free(ctx);
    cort_free(th);
    cort_free(started);
    return ok;
}

int cli_backend_test_run(const char *dir, const cli_test_opts *o, char *why, size_t len) {
    int result = CLI_TEST_FAIL, ids[MAX_DATA_SETS];
    cort_session_options *opts = NULL;
    cort_session *s = NULL;
    cort_status *st = NULL;
    const char **in_names = NULL, **out_names = NULL;
    data_set ds = {0};
    run_ctx c = {0};
    char *model = cli_path_join(dir, "model.onnx");
    if (!model) { snprintf(why, len, "out of memory"); goto done; }

    int n_sets = list_data_sets(dir, ids, MAX_DATA_SETS);
    if (n_sets < 0) { snprintf(why, len, "cannot read folder %s", dir); goto done; }
    if ((st = cli_session_options(&o->sargs, &opts))) goto status_fail;
    if ((st = cort_session_create(model, opts, &s))) goto status_fail;
    if (n_sets == 0) {
        snprintf(why, len, "no test_data_set_N folders");
        result = CLI_TEST_SKIP;
        goto done;
    }
    size_t n_in = cort_session_input_count(s), n_out = cort_session_output_count(s);
    in_names = cort_calloc(n_in ? n_in : 1, sizeof *in_names);
    out_names = cort_calloc(n_out ? n_out : 1, sizeof *out_names);
    c.outputs = cort_calloc(n_out ? n_out : 1, sizeof *c.outputs);
    if (!in_names || !out_names || !c.outputs) { st = cort_error_oom(); goto status_fail; }
    for (size_t k = 0; k < n_in; k++) in_names[k] = cort_session_input_name(s, k);
    for (size_t k = 0; k < n_out; k++) out_names[k] = cort_session_output_name(s, k);
    c.s = s;
    c.ds = &ds;
    c.in_names = in_names;
    c.out_names = out_names;
    c.n_out = n_out;

    for (int i = 0; i < n_sets; i++) {
        char sub[64], what[80];
        snprintf(sub, sizeof sub, "test_data_set_%d", ids[i]);
        snprintf(what, sizeof what, "%s: ", sub);
        char *sdir = cli_path_join(dir, sub);
        if (!sdir) { st = cort_error_oom(); goto status_fail; }
        st = load_numbered(s, sdir, "input", 0, n_in, &ds.inputs, &ds.n_inputs);
        if (!st) st = load_numbered(s, sdir, "output", 1, n_out, &ds.expected, &ds.n_expected);
        cort_free(sdir);
        if (st) goto status_fail;
        if (ds.n_expected == 0 && n_out > 0) {
            snprintf(why, len, "%sno output_K.pb files", sub);
            goto done;
        }
        run_once(&c);
        if (c.st) {
            snprintf(why, len, "%s%s: %s", what, cort_code_name(cort_status_code(c.st)), cort_status_message(c.st));
            goto done;
        }
        if (!check_outputs(&c, o, what, why, len)) goto done;
        release_outputs(&c);
        if (o->steady_allocs && i == 0) {
            /* a run with the shapes of the previous one must not call the allocator: a third run
             * (recycling caches filled by the first two), then two counted ones. The counter is
             * process-wide, so this is only meaningful with one test per process (the default
             * forked mode) or --jobs 1. */
            long n = 0;
            for (int r = 0; r < 3; r++) {
                if (r == 1) cort_test_alloc_fail_at(0);
                run_once(&c);
                if (c.st) {
                    snprintf(why, len, "%ssteady-state run: %s: %s", what, cort_code_name(cort_status_code(c.st)),
                             cort_status_message(c.st));
                    goto done;
                }
                if (r == 2) n = cort_test_alloc_count();
                release_outputs(&c);
            }
            if (n) {
                snprintf(why, len, "%s%ld allocations in 2 steady-state runs", what, n);
                goto done;
            }
        }
        if (o->concurrency > 1 && !run_concurrent(s, &ds, in_names, out_names, n_out, o, sub, why, len)) goto done;
        data_set_clear(&ds);
    }
    result = CLI_TEST_PASS;
    goto done;
status_fail:
    snprintf(why, len, "%s: %s", cort_code_name(cort_status_code(st)), cort_status_message(st));
done:
    cort_status_free(st);
    cort_status_free(c.st);
    release_outputs(&c);
    cort_free(c.outputs);
    data_set_clear(&ds);
    cort_free(in_names);
    cort_free(out_names);
    cort_session_release(s);
    cort_session_options_free(opts);
    cort_free(model);
    return result;
}
