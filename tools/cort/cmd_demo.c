/* `cort demo MODEL SAMPLES_DIR` (used by `make run`): classifies SAMPLES_DIR/sample_K.npy with the
 * digits CNN, compares with line K of SAMPLES_DIR/labels.txt, and reports accuracy and latency. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "npy.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/types.h"

static const char demo_usage[] =
    "usage: cort demo MODEL SAMPLES_DIR [--threads N] [--repeat R]\n"
    "Classifies SAMPLES_DIR/sample_K.npy (float32 [1,1,8,8]) with MODEL, prints the prediction (argmax\n"
    "of the first output) against line K of SAMPLES_DIR/labels.txt, the accuracy and the median latency\n"
    "per sample (each sample runs R times, default 5).\n";

#define DEMO_MAX_SAMPLES 100000

/* labels.txt: one integer per line; returns the count read (-1 if the file is missing). */
static cort_status *read_labels(const char *dir, long **out, long *n_out) {
    char *path = cli_path_join(dir, "labels.txt");
    if (!path) return cort_error_oom();
    *out = NULL;
    *n_out = -1;
    if (!cli_file_exists(path)) { cort_free(path); return NULL; }
    void *bytes = NULL;
    size_t len = 0;
    cort_status *st = cli_read_file(path, &bytes, &len);
    cort_free(path);
    if (st) return st;
    long *labels = cort_calloc(len / 2 + 1, sizeof *labels);   /* at most one label per 2 bytes */
    if (!labels) { cort_free(bytes); return cort_error_oom(); }
    long n = 0;
    char *p = bytes, *end = p + len;
    while (p < end) {
        char *e = NULL;
        long v = strtol(p, &e, 10);
        if (e == p) {   /* skip a non-numeric character (blank lines, stray text) */
            p++;
            continue;
        }
        labels[n++] = v;
        p = e;
    }
    cort_free(bytes);
    *out = labels;
    *n_out = n;
    return NULL;
}

static long argmax(const cort_value *t) {
    size_t n = cort_tensor_element_count(t);
    cort_type ty = cort_tensor_type(t);
    const void *d = cort_tensor_data(t);
    if (!n || !d) return -1;
    long best = 0;
    double bv = 0;
    for (size_t i = 0; i < n; i++) {
        double v;
        switch (ty) {
        case CORT_TYPE_FLOAT: v = ((const float *)d)[i]; break;
        case CORT_TYPE_DOUBLE: v = ((const double *)d)[i]; break;
        case CORT_TYPE_FLOAT16: v = cort_f16_to_f32(((const uint16_t *)d)[i]); break;
        case CORT_TYPE_INT64: v = (double)((const int64_t *)d)[i]; break;
        case CORT_TYPE_INT32: v = ((const int32_t *)d)[i]; break;
        default: return -1;
        }
        if (i == 0 || v > bv) { bv = v; best = (long)i; }
    }
    return best;
}

int cli_cmd_demo(int argc, char **argv) {
    const char *model = NULL, *dir = NULL, *v = NULL;
    long long repeat = 5;
    cli_session_args sargs;
    cli_session_args_init(&sargs);
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) { fputs(demo_usage, stdout); return CLI_EXIT_OK; }
        if ((r = cli_session_arg("demo", argc, argv, &i, &sargs)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            continue;
        }
        if ((r = cli_opt(argc, argv, &i, "--repeat", &v)) != 0) {
            if (r < 0 || !cli_parse_int("demo", "--repeat", v, 1, 100000, &repeat)) return CLI_EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("demo", "unknown option '%s'", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else if (!dir) {
            dir = argv[i];
        } else {
            return cli_usage_error("demo", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!model || !dir) return cli_usage_error("demo", "expected MODEL and SAMPLES_DIR");

    cort_session_options *opts = NULL;
    cort_session *s = NULL;
    cort_status *st = NULL;
    long *labels = NULL, n_labels = -1;
    double *per_sample = NULL, *reps = NULL;
    cort_value *input = NULL, *output = NULL;
    size_t n_samples = 0, correct = 0, labelled = 0;

    if (!cli_dir_exists(dir)) { st = cort_error(CORT_ERROR_IO, "samples folder '%s' does not exist", dir); goto error; }
    if ((st = read_labels(dir, &labels, &n_labels))) goto error;
    if ((st = cli_session_options(&sargs, &opts))) goto error;
    if ((st = cort_session_create(model, opts, &s))) goto error;
    if (cort_session_input_count(s) < 1 || cort_session_output_count(s) < 1) {
        st = cort_error(CORT_ERROR_INVALID_MODEL, "the model needs at least one input and one output");
        goto error;
    }
    const char *in_name = cort_session_input_name(s, 0), *out_name = cort_session_output_name(s, 0);
    printf("model %s: input '%s', output '%s'\n", model, in_name, out_name);
    reps = cort_calloc((size_t)repeat, sizeof *reps);
    if (!reps) { st = cort_error_oom(); goto error; }
    for (size_t k = 0; k < DEMO_MAX_SAMPLES; k++) {
        char name[64];
        snprintf(name, sizeof name, "sample_%zu.npy", k);
        char *path = cli_path_join(dir, name);
        if (!path) { st = cort_error_oom(); goto error; }
        if (!cli_file_exists(path)) { cort_free(path); break; }
        st = npy_load(path, &input);
        cort_free(path);
        if (st) goto error;
        double *grown = cort_realloc(per_sample, (k + 1) * sizeof *grown);
        if (!grown) { st = cort_error_oom(); goto error; }
        per_sample = grown;
        for (long long r = 0; r < repeat; r++) {
            cort_value_release(output);
            output = NULL;
            double t0 = cli_now_ms();
            st = cort_session_run(s, NULL, &in_name, &input, 1, &out_name, 1, &output);
            reps[r] = cli_now_ms() - t0;
            if (st) { st = cort_error_wrap(st, "%s: ", name); goto error; }
        }
        qsort(reps, (size_t)repeat, sizeof *reps, cli_cmp_double);
        per_sample[k] = cli_quantile(reps, (size_t)repeat, 0.5);
        long pred = cort_value_kind(output) == 1 ? argmax(output) : -1;
        if (pred < 0) { st = cort_error(CORT_ERROR_RUNTIME, "%s: output '%s' is not a numeric tensor", name, out_name); goto error; }
        if (n_labels > (long)k) {
            long label = labels[k];
            labelled++;
            correct += pred == label;
            printf("%-16s predicted %ld  label %ld  %s  (%.3f ms)\n", name, pred, label, pred == label ? "ok" : "WRONG",
                   per_sample[k]);
        } else {
            printf("%-16s predicted %ld  (no label)  (%.3f ms)\n", name, pred, per_sample[k]);
        }
        cort_value_release(input);
        input = NULL;
        n_samples++;
    }
    if (n_samples == 0) { st = cort_error(CORT_ERROR_IO, "no sample_0.npy in '%s'", dir); goto error; }
    qsort(per_sample, n_samples, sizeof *per_sample, cli_cmp_double);
    if (labelled)
        printf("accuracy: %zu/%zu (%.1f%%)\n", correct, labelled, 100.0 * (double)correct / (double)labelled);
    else
        printf("accuracy: n/a (no labels.txt)\n");
    printf("median latency per sample: %.3f ms (%zu samples, %lld runs each)\n",
           cli_quantile(per_sample, n_samples, 0.5), n_samples, repeat);
    cort_value_release(output);
    cort_free(per_sample); cort_free(reps); cort_free(labels);
    cort_session_release(s);
    cort_session_options_free(opts);
    return CLI_EXIT_OK;
error:
    cort_value_release(input);
    cort_value_release(output);
    cort_free(per_sample); cort_free(reps); cort_free(labels);
    cort_session_release(s);
    cort_session_options_free(opts);
    return cli_fail("demo", st);
}
