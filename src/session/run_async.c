/* cort_session_run_async.
 *
 * A submitted run becomes a job that owns copies of the names and references to the session, the
 * inputs, the preallocated outputs and the run options, so the caller may free all of them right
 * after submitting. Jobs go to a process-wide, unbounded FIFO served by a fixed set of worker
 * threads that belong to no session: a callback that releases the last reference of its session
 * destroys the session (and joins that session's intra-op threads) from a thread the session does
 * not own, so it never joins itself. The workers are created once (cort_once) on first use and live
 * for the rest of the process. The callback runs on a worker, after cort_session_run_async returned
 * (the submitting thread never runs jobs). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "session.h"
#include "../core/once.h"

typedef struct async_job {
    struct async_job *next;
    cort_session *session;
    cort_run_options *ropts;
    char **in_names, **out_names;
    cort_value **inputs, **outputs;
    size_t n_in, n_out;
    cort_run_callback cb;
    void *user;
} async_job;

typedef struct async_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    async_job *head, *tail;
    size_t pending;
    int n_workers;
} async_queue;

static cort_once g_async_once = CORT_ONCE_INIT;
static async_queue *_Atomic g_async;

static void job_free(async_job *j) {
    for (size_t i = 0; i < j->n_in; i++) { cort_free(j->in_names[i]); cort_value_release(j->inputs[i]); }
    for (size_t i = 0; i < j->n_out; i++) { cort_free(j->out_names[i]); cort_value_release(j->outputs[i]); }
    cort_free(j->in_names);
    cort_free(j->out_names);
    cort_free(j->inputs);
    cort_free(j->outputs);
    cort_run_options_free(j->ropts);
    cort_session_release(j->session);
    cort_free(j);
}

static void job_execute(async_job *j) {
    cort_value **outs = j->n_out ? cort_calloc(j->n_out, sizeof *outs) : NULL;
    cort_status *st;
    if (j->n_out && !outs) st = cort_error_oom();
    else {
        for (size_t i = 0; i < j->n_out; i++) outs[i] = j->outputs[i];   /* borrowed preallocated, or NULL */
        st = cort_session_run(j->session, j->ropts, (const char *const *)j->in_names, j->inputs, j->n_in,
                              (const char *const *)j->out_names, j->n_out, outs);
        if (!st)   /* the callback gets one reference per output; preallocated ones are retained for it */
            for (size_t i = 0; i < j->n_out; i++)
                if (outs[i] == j->outputs[i]) cort_value_retain(outs[i]);
    }
    if (st) j->cb(j->user, st, NULL, 0);
    else j->cb(j->user, NULL, outs, j->n_out);
    cort_free(outs);
    job_free(j);   /* drops the job's session reference after the callback returned */
}

static void *worker_main(void *p) {
    async_queue *q = p;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (!q->head) pthread_cond_wait(&q->cv, &q->mu);
        async_job *j = q->head;
        q->head = j->next;
        if (!q->head) q->tail = NULL;
        q->pending--;
        pthread_mutex_unlock(&q->mu);
        job_execute(j);
    }
    return NULL;
}

static cort_status *async_init(void *arg) {
    (void)arg;
    /* The queue and its workers live for the process: allocated from the system (never freed, so
     * they do not count as cort allocations in use). Published only after a worker started. */
    async_queue *q = calloc(1, sizeof *q);
    if (!q) return cort_error_oom();
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    int want = cort_cpu_count();
    if (want < 2) want = 2;
    if (want > 64) want = 64;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < want; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker_main, q)) break;
        q->n_workers++;
    }
    pthread_attr_destroy(&attr);
    if (!q->n_workers) {
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->cv);
        free(q);
        return cort_error(CORT_ERROR_RUNTIME, "cort_session_run_async: cannot start worker threads");
    }
    atomic_store_explicit(&g_async, q, memory_order_release);
    return NULL;
}

cort_status *cort_session_run_async(cort_session *session, const cort_run_options *run_options,
                                    const char *const *input_names, cort_value *const *inputs, size_t input_count,
                                    const char *const *output_names, size_t output_count, cort_value *const *outputs,
                                    cort_run_callback callback, void *user_data) {
    if (!session) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_run_async: session is NULL");
    if (!callback) return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_run_async: callback is NULL");
    if (input_count && (!input_names || !inputs))
        return cort_error(CORT_ERROR_INVALID_ARGUMENT,
                          "cort_session_run_async: input_count is %zu but input_names or inputs is NULL", input_count);
    if (output_count && !output_names)
        return cort_error(CORT_ERROR_INVALID_ARGUMENT, "cort_session_run_async: output_count is %zu but output_names is NULL",
                          output_count);
    {
        /* the seed's rule: what can be checked now is reported now, by this call, and no callback follows */
        size_t n_in = session->graph->n_inputs;
        cort_value *fed_stack[32];
        cort_value **fed = n_in <= 32 ? fed_stack : cort_calloc(n_in, sizeof *fed);
        if (!fed) return cort_error_oom();
        if (fed == fed_stack) memset(fed_stack, 0, sizeof fed_stack);
        cort_status *st = cort_run_check_args(session, "cort_session_run_async", input_names, inputs, input_count,
                                              output_names, output_count, outputs, fed, NULL);
        if (fed != fed_stack) cort_free(fed);
        if (st) return st;
    }
    CORT_TRY(cort_once_run(&g_async_once, async_init, NULL));
    async_queue *q = atomic_load_explicit(&g_async, memory_order_acquire);

    async_job *j = cort_calloc(1, sizeof *j);
    if (!j) return cort_error_oom();
    j->in_names = cort_calloc(input_count + 1, sizeof *j->in_names);
    j->inputs = cort_calloc(input_count + 1, sizeof *j->inputs);
    j->out_names = cort_calloc(output_count + 1, sizeof *j->out_names);
    j->outputs = cort_calloc(output_count + 1, sizeof *j->outputs);
    if (!j->in_names || !j->inputs || !j->out_names || !j->outputs) goto oom;
    for (size_t i = 0; i < input_count; i++) {
        if (!(j->in_names[i] = cort_strdup(input_names[i]))) goto oom;
        j->inputs[i] = cort_value_retain(inputs[i]);
        j->n_in++;
    }
    for (size_t i = 0; i < output_count; i++) {
        if (!(j->out_names[i] = cort_strdup(output_names[i]))) goto oom;
        j->outputs[i] = outputs ? cort_value_retain(outputs[i]) : NULL;
        j->n_out++;
    }
    j->session = cort_session_retain(session);
    j->ropts = (cort_run_options *)run_options;
    cort_run_options_retain_internal(j->ropts);
    j->cb = callback;
    j->user = user_data;

    pthread_mutex_lock(&q->mu);
    if (q->tail) q->tail->next = j;
    else q->head = j;
    q->tail = j;
    q->pending++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return NULL;
oom:
    job_free(j);
    return cort_error_oom();
}
