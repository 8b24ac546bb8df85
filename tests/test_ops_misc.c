/* The 'misc' operator family: FFT against a naive DFT, backend-test models for RNN/GRU/LSTM,
 * sequences, optionals, signal and training ops run end to end (results compared, then every
 * allocation of a run failed in turn: each must report OUT_OF_MEMORY and leak nothing), locale-free
 * StringNormalizer case mapping, and error messages for malformed inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/types.h"
#include "core/value.h"
#include "onnx/onnx.h"
#include "providers/cpu/kernels/fft.h"

#define TESTDATA "/usr/share/libonnx-testdata/data/"

static void test_fft(void) {
    for (size_t n = 1; n <= 72; n += (n < 20 ? 1 : 7)) {
        for (int sign = -1; sign <= 1; sign += 2) {
            double *x = malloc(n * 2 * sizeof(double)), *ref = malloc(n * 2 * sizeof(double));
            for (size_t i = 0; i < 2 * n; i++) x[i] = sin((double)i * 1.7 + 0.3) + (double)(i % 3);
            for (size_t k = 0; k < n; k++) {
                double re = 0, im = 0;
                for (size_t j = 0; j < n; j++) {
                    double a = sign * 2.0 * M_PI * (double)((j * k) % n) / (double)n;
                    re += x[2 * j] * cos(a) - x[2 * j + 1] * sin(a);
                    im += x[2 * j] * sin(a) + x[2 * j + 1] * cos(a);
                }
                ref[2 * k] = re; ref[2 * k + 1] = im;
            }
            mi_fft_plan p;
            if (CHECK_OK(mi_fft_plan_init(&p, n, sign))) {
                double *work = malloc((mi_fft_work_len(&p) + 1) * 2 * sizeof(double));
                mi_fft_run(&p, x, work);
                free(work);
                double err = 0;
                for (size_t i = 0; i < 2 * n; i++) err = fmax(err, fabs(x[i] - ref[i]));
                CHECK_MSG(err < 1e-9 * (double)n, "fft n=%zu sign=%d: max error %g", n, sign, err);
                mi_fft_plan_free(&p);
            }
            free(x); free(ref);
        }
    }
}

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

static int exists(const char *path) { struct stat st; return stat(path, &st) == 0; }

static cort_value *load_pb(const char *path) {
    size_t len;
    void *bytes = tu_read_file(path, &len);
    if (!bytes) return NULL;
    cort_value *v = NULL;
    cort_status *st = cort_value_parse(bytes, len, 0, &v);
    free(bytes);
    if (st) { fprintf(stderr, "%s: %s\n", path, cort_status_message(st)); cort_status_free(st); return NULL; }
    return v;
}

/* Recursive comparison of a result with the expected value (floats with a relative tolerance). */
static int same_value(const cort_value *a, const cort_value *b) {
    if (!a || !b) return a == b;
    if (a->kind == CORT_VKIND_OPTIONAL && b->kind == CORT_VKIND_OPTIONAL) return same_value(a->elem, b->elem);
    if (a->kind != b->kind) return 0;
    if (a->kind == CORT_VKIND_SEQUENCE) {
        if (a->n_items != b->n_items) return 0;
        for (size_t i = 0; i < a->n_items; i++) if (!same_value(a->items[i], b->items[i])) return 0;
        return 1;
    }
    if (a->type != b->type || a->rank != b->rank || memcmp(a->shape, b->shape, a->rank * sizeof(int64_t))) return 0;
    for (size_t i = 0; i < a->count; i++) {
        if (a->type == CORT_TYPE_STRING) { if (strcmp(cort_string_get(a, i), cort_string_get(b, i))) return 0; continue; }
        double x = cort_load_f64(a->data, a->type, i), y = cort_load_f64(b->data, b->type, i);
        if (!(fabs(x - y) <= 1e-4 + 1e-3 * fabs(y))) return 0;
    }
    return 1;
}

typedef struct loaded {
    cort_session *s;
    size_t n_in, n_out;
    const char *in_names[16], *out_names[16];
    cort_value *in[16], *expect[16];
} loaded;

static int load_test(const char *dir, loaded *t) {
    char path[512];
    memset(t, 0, sizeof *t);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (!CHECK_OK(cort_session_create(path, NULL, &t->s))) return 0;
    t->n_in = cort_session_input_count(t->s);
    t->n_out = cort_session_output_count(t->s);
    if (t->n_in > 16 || t->n_out > 16) return 0;
    for (size_t i = 0; i < t->n_in; i++) {
        t->in_names[i] = cort_session_input_name(t->s, i);
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
        if (!(t->in[i] = load_pb(path))) return 0;
    }
    for (size_t i = 0; i < t->n_out; i++) {
        t->out_names[i] = cort_session_output_name(t->s, i);
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%zu.pb", dir, i);
        if (!(t->expect[i] = load_pb(path))) return 0;
    }
    return 1;
}

static void unload_test(loaded *t) {
    for (size_t i = 0; i < 16; i++) { cort_value_release(t->in[i]); cort_value_release(t->expect[i]); }
    cort_session_release(t->s);
}

/* Runs the folder's model once and compares, then fails every allocation of a run in turn. */
static void run_backend_test(const char *dir, int compare) {
    loaded t;
    if (!load_test(dir, &t)) { CHECK_MSG(0, "%s: could not load", dir); unload_test(&t); return; }
    cort_value *out[16] = { NULL };
    if (CHECK_OK(cort_session_run(t.s, NULL, t.in_names, t.in, t.n_in, t.out_names, t.n_out, out)) && compare)
        for (size_t i = 0; i < t.n_out; i++) CHECK_MSG(same_value(out[i], t.expect[i]), "%s: output %zu differs", dir, i);
    for (size_t i = 0; i < t.n_out; i++) { cort_value_release(out[i]); out[i] = NULL; }

    size_t base = in_use();
    int bad = 0, leaks = 0;
    long n;
    for (n = 1; n < 100000; n++) {
        cort_test_alloc_fail_at(n);
        cort_status *st = cort_session_run(t.s, NULL, t.in_names, t.in, t.n_in, t.out_names, t.n_out, out);
        long made = cort_test_alloc_count();
        cort_test_alloc_fail_at(0);
        if (!st) {
            for (size_t i = 0; i < t.n_out; i++) { cort_value_release(out[i]); out[i] = NULL; }
            if (made < n) break;
            continue;
        }
        for (size_t i = 0; i < t.n_out; i++) if (out[i]) { bad++; cort_value_release(out[i]); out[i] = NULL; }
        if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY && bad++ < 3)
            fprintf(stderr, "%s: failing allocation %ld gave [%s] %s\n", dir, n, cort_code_name(cort_status_code(st)),
                    cort_status_message(st));
        cort_status_free(st);
        if (in_use() != base && leaks++ < 3) fprintf(stderr, "%s: failing allocation %ld leaked\n", dir, n);
    }
    CHECK_MSG(bad == 0 && leaks == 0 && n < 100000, "%s: allocation-failure walk (%ld allocations): %d bad, %d leaks", dir,
              n - 1, bad, leaks);
    unload_test(&t);
}

static void test_backend(void) {
    static const char *const tests[] = {
        "node/test_lstm_with_peepholes", "node/test_lstm_batchwise", "node/test_gru_seq_length", "node/test_gru_batchwise",
        "node/test_rnn_seq_length", "node/test_simple_rnn_batchwise",
        "simple/test_sequence_model1", "simple/test_sequence_model3", "simple/test_sequence_model5",
        "simple/test_sequence_model7", "simple/test_sequence_model8",
        "node/test_sequence_insert_at_front", "node/test_optional_get_element_sequence", "node/test_optional_has_element_empty",
        "node/test_dft", "node/test_dft_inverse", "node/test_stft_with_window", "node/test_melweightmatrix",
        "node/test_hannwindow_symmetric", "node/test_blackmanwindow", "node/test_adagrad_multiple", "node/test_adam",
        "node/test_momentum_multiple", "node/test_nesterov_momentum", "node/test_strnormalizer_export_monday_insensintive_upper_twodim",
    };
    if (!exists(TESTDATA)) { printf("%s missing: backend models skipped\n", TESTDATA); return; }
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, TESTDATA "%s", tests[i]);
        run_backend_test(dir, 1);
    }
    run_backend_test(TESTDATA "node/test_bernoulli_seed", 0);   /* values come from numpy's generator */
}

static void test_strnorm_unicode(void) {
    const char *model = TESTDATA "node/test_strnormalizer_export_monday_casesensintive_upper/model.onnx";
    const char *model_lo = TESTDATA "node/test_strnormalizer_export_monday_casesensintive_lower/model.onnx";
    if (!exists(model) || !exists(model_lo)) return;
    const char *words[4] = { "stra\303\237e \xc3\xbf", "monday", "\xc4\xb0\xc4\xb1 \xc3\x86r\xc3\xb8",
                             "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xce\xa9\xce\xbc\xce\xad\xce\xb3\xce\xb1 \xcf\x82" };
    const char *upper[3] = { "STRA\303\237E \xc5\xb8", "\xc4\xb0I \xc3\x86R\xc3\x98",
                             "\xd0\x9f\xd0\xa0\xd0\x98\xd0\x92\xd0\x95\xd0\xa2 \xce\xa9\xce\x9c\xce\x88\xce\x93\xce\x91 \xce\xa3" };
    const char *lower[3] = { "stra\303\237e \xc3\xbf", "i\xc4\xb1 \xc3\xa6r\xc3\xb8",
                             "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xcf\x89\xce\xbc\xce\xad\xce\xb3\xce\xb1 \xcf\x82" };
    int64_t shape[1] = { 4 };
    cort_value *x = NULL;
    if (!CHECK_OK(cort_tensor_create(CORT_TYPE_STRING, shape, 1, &x))) return;
    for (size_t i = 0; i < 4; i++) CHECK_OK(cort_tensor_set_string(x, i, words[i]));
    for (int pass = 0; pass < 2; pass++) {
        cort_session *s = NULL;
        if (!CHECK_OK(cort_session_create(pass ? model_lo : model, NULL, &s))) continue;
        const char *in = cort_session_input_name(s, 0), *on = cort_session_output_name(s, 0);
        cort_value *y = NULL;
        if (CHECK_OK(cort_session_run(s, NULL, &in, &x, 1, &on, 1, &y))) {
            CHECK(cort_tensor_element_count(y) == 3);
            char **got = cort_tensor_data(y);
            for (size_t i = 0; i < 3 && i < cort_tensor_element_count(y); i++)
                CHECK_MSG(!strcmp(got[i], (pass ? lower : upper)[i]), "%s %zu: got '%s'", pass ? "lower" : "upper", i, got[i]);
        }
        cort_value_release(y);
        cort_session_release(s);
    }
    cort_value_release(x);
}

/* Malformed inputs are reported with the input's name and shape, never crash. */
static void test_errors(void) {
    const char *dir = TESTDATA "node/test_lstm_with_peepholes";
    if (!exists(dir)) return;
    loaded t;
    if (!load_test(dir, &t)) { unload_test(&t); return; }
    int64_t bad_shape[3] = { 5, 2, 7 };
    for (size_t i = 0; i < t.n_in; i++) {
        cort_value *saved = t.in[i], *bad = NULL;
        if (!CHECK_OK(cort_tensor_create(saved->type, bad_shape, saved->type == CORT_TYPE_INT32 ? 1 : 3, &bad))) continue;
        t.in[i] = bad;
        cort_value *out[16] = { NULL };
        cort_status *st = cort_session_run(t.s, NULL, t.in_names, t.in, t.n_in, t.out_names, t.n_out, out);
        CHECK_MSG(st != NULL && strstr(cort_status_message(st), t.in_names[i]) != NULL, "input %zu '%s': %s", i,
                  t.in_names[i], st ? cort_status_message(st) : "accepted");
        cort_status_free(st);
        for (size_t k = 0; k < t.n_out; k++) cort_value_release(out[k]);
        t.in[i] = saved;
        cort_value_release(bad);
    }
    unload_test(&t);
}

int main(void) {
    test_fft();
    test_backend();
    test_strnorm_unicode();
    test_errors();
    return tu_finish();
}
