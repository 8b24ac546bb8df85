/* The prepacked-weights container (cort.h: cort_prepacked_weights) on tests/models/lazy_*.onnx
 * (three Convs, one BN-folded, a MatMul and a Gemm whose weights are packed at creation):
 *  - sessions sharing a container give outputs bit-identical to a session without one, and the
 *    second session adds no buffer (the packs are shared);
 *  - the same weights in another file (lazy_misaligned.onnx: other offsets) hit the same buffers,
 *    since they are keyed by content, not by name or address;
 *  - a negative control: one conv weight replaced by other values adds exactly one buffer and
 *    changes the outputs that depend on it;
 *  - the container, the options and the sessions released in any order leave the survivors
 *    working;
 *  - 8 threads creating sessions with one container at once all get the reference outputs and
 *    the container ends with one buffer per packed weight;
 *  - the fused expand + depthwise conv (tests/models/fuse_pwdw.onnx, PwDwConv at level 2) stores
 *    and shares its packed expand weights the same way. */
#include <pthread.h>
#include <string.h>
#include "testutil.h"

#define N_OUT 5
static const char *g_out_names[N_OUT] = { "y1", "y2", "y3", "y4", "y5" };
static const char *ALIGNED = "tests/models/lazy_aligned.onnx", *MISALIGNED = "tests/models/lazy_misaligned.onnx";

typedef struct { cort_value *out[N_OUT]; } result;

static cort_value *pattern(const int64_t *shape, size_t rank, unsigned seed) {
    cort_value *v = NULL;
    if (!CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, rank, &v))) return NULL;
    float *d = cort_tensor_data(v);
    size_t n = 1;
    for (size_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    for (size_t i = 0; i < n; i++) d[i] = (float)((int)((i * 2654435761u + seed) % 97) - 48) / 32.0f;
    return v;
}

static cort_session_options *options(cort_prepacked_weights *pw) {
    cort_session_options *o = NULL;
    if (!CHECK_OK(cort_session_options_create(&o))) return NULL;
    CHECK_OK(cort_session_options_set_threads(o, 1));
    CHECK_OK(cort_session_options_set_prepacked_weights(o, pw));
    return o;
}

static cort_session *create(const char *path, const cort_session_options *o) {
    cort_session *s = NULL;
    return CHECK_OK(cort_session_create(path, o, &s)) ? s : NULL;
}

static int run(cort_session *s, result *r) {
    memset(r, 0, sizeof *r);
    if (!s) return 0;
    const int64_t xs[4] = { 1, 64, 8, 8 }, x2s[4] = { 1, 2048, 2, 2 };
    cort_value *in[2] = { pattern(xs, 4, 1), pattern(x2s, 4, 7) };
    const char *in_names[2] = { "x", "x2" };
    cort_status *st = cort_session_run(s, NULL, in_names, in, 2, g_out_names, N_OUT, r->out);
    cort_value_release(in[0]);
    cort_value_release(in[1]);
    return CHECK_OK(st);
}

static void result_free(result *r) {
    for (int i = 0; i < N_OUT; i++) cort_value_release(r->out[i]);
}

static size_t count_of(const cort_value *v) {
    size_t n = 1;
    for (size_t i = 0; i < cort_tensor_rank(v); i++) n *= (size_t)cort_tensor_shape(v)[i];
    return n;
}

/* Whether output i is bit-identical in a and b (and not trivially zero). */
static int same_output(const result *a, const result *b, int i) {
    if (!a->out[i] || !b->out[i] || count_of(a->out[i]) != count_of(b->out[i])) return 0;
    const size_t n = count_of(a->out[i]);
    const float *x = cort_tensor_data(a->out[i]), *y = cort_tensor_data(b->out[i]);
    size_t nonzero = 0;
    for (size_t k = 0; k < n; k++) nonzero += x[k] != 0.0f;
    return nonzero > n / 2 && memcmp(x, y, n * sizeof *x) == 0;
}

static void check_same(const char *what, const result *a, const result *b) {
    for (int i = 0; i < N_OUT; i++) CHECK_MSG(same_output(a, b, i), "%s: output %s differs from the reference", what, g_out_names[i]);
}

typedef struct { const cort_session_options *o; const result *ref; int ok; } thread_arg;

static void *create_and_run(void *p) {
    thread_arg *a = p;
    cort_session *s = NULL;
    cort_status *st = cort_session_create(ALIGNED, a->o, &s);
    if (st) { cort_status_free(st); return NULL; }
    result r;
    memset(&r, 0, sizeof r);
    const int64_t xs[4] = { 1, 64, 8, 8 }, x2s[4] = { 1, 2048, 2, 2 };
    cort_value *in[2] = { NULL, NULL };
    cort_tensor_create(CORT_TYPE_FLOAT, xs, 4, &in[0]);
    cort_tensor_create(CORT_TYPE_FLOAT, x2s, 4, &in[1]);
    /* the same pattern as pattern(), without the CHECK counters (not thread-safe) */
    for (int j = 0; j < 2; j++) {
        if (!in[j]) continue;
        float *d = cort_tensor_data(in[j]);
        size_t n = count_of(in[j]);
        for (size_t i = 0; i < n; i++) d[i] = (float)((int)((i * 2654435761u + (j ? 7u : 1u)) % 97) - 48) / 32.0f;
    }
    const char *in_names[2] = { "x", "x2" };
    if (in[0] && in[1] && !(st = cort_session_run(s, NULL, in_names, in, 2, g_out_names, N_OUT, r.out))) {
        a->ok = 1;
        for (int i = 0; i < N_OUT; i++) a->ok &= same_output(&r, a->ref, i);
    }
    cort_status_free(st);
    cort_value_release(in[0]);
    cort_value_release(in[1]);
    result_free(&r);
    cort_session_release(s);
    return NULL;
}

/* Runs s on patterned float inputs (symbolic dims 1); every output in outs, their count in *n. */
static int run_all(cort_session *s, cort_value **outs, size_t max, size_t *n) {
    *n = 0;
    if (!s) return 0;
    const size_t ni = cort_session_input_count(s), no = cort_session_output_count(s);
    if (ni > 8 || no > max) {
        CHECK_MSG(0, "model has %zu inputs, %zu outputs", ni, no);
        return 0;
    }
    const char *in_names[8], *out_names[16];
    cort_value *in[8] = { NULL };
    int ok = 1;
    for (size_t i = 0; i < ni; i++) {
        cort_value_type t;
        int64_t dims[8];
        in_names[i] = cort_session_input_name(s, i);
        ok &= CHECK_OK(cort_session_input_type(s, i, &t, dims, 8)) && t.elem_type == CORT_TYPE_FLOAT && t.rank >= 0;
        if (!ok) break;
        for (int d = 0; d < t.rank; d++) if (dims[d] < 0) dims[d] = 1;
        in[i] = pattern(dims, (size_t)t.rank, (unsigned)i + 3);
        ok &= in[i] != NULL;
    }
    for (size_t i = 0; i < no; i++) out_names[i] = cort_session_output_name(s, i);
    if (ok) ok = CHECK_OK(cort_session_run(s, NULL, in_names, in, ni, out_names, no, outs));
    for (size_t i = 0; i < ni; i++) cort_value_release(in[i]);
    *n = ok ? no : 0;
    return ok;
}

/* packed: how many weights the model packs (one buffer each in the container). */
static void check_model_shared(const char *path, size_t packed) {
    cort_session_options *o0 = options(NULL);
    cort_session *s0 = create(path, o0);
    cort_session_options_free(o0);
    cort_value *ref[16] = { NULL }, *got[16] = { NULL };
    size_t n = 0, m = 0;
    if (!run_all(s0, ref, 16, &n)) { cort_session_release(s0); return; }
    cort_session_release(s0);
    cort_prepacked_weights *pw = NULL;
    if (CHECK_OK(cort_prepacked_weights_create(&pw))) {
        cort_session_options *o = options(pw);
        cort_session *a = create(path, o);
        const size_t n1 = cort_prepacked_weights_count(pw);
        CHECK_MSG(n1 == packed, "%s: %zu buffers in the container, expected %zu", path, n1, packed);
        cort_session *b = create(path, o);
        CHECK_MSG(cort_prepacked_weights_count(pw) == n1, "%s: second session: %zu buffers, expected %zu", path,
                  cort_prepacked_weights_count(pw), n1);
        cort_session_options_free(o);
        cort_prepacked_weights_release(pw);
        cort_session_release(a);
        CHECK(run_all(b, got, 16, &m) && m == n);
        if (m == n)
            for (size_t i = 0; i < n; i++) {
                const size_t c = count_of(ref[i]);
                CHECK_MSG(c == count_of(got[i]) && !memcmp(cort_tensor_data(ref[i]), cort_tensor_data(got[i]), c * sizeof(float)),
                          "%s: output %zu differs with the container", path, i);
            }
        cort_session_release(b);
    }
    for (size_t i = 0; i < 16; i++) { cort_value_release(ref[i]); cort_value_release(got[i]); }
}

int main(void) {
    /* the reference: no container */
    cort_session_options *o0 = options(NULL);
    cort_session *s0 = create(ALIGNED, o0);
    result ref;
    if (!run(s0, &ref)) return tu_finish();
    cort_session_release(s0);
    cort_session_options_free(o0);

    cort_prepacked_weights *pw = NULL;
    if (!CHECK_OK(cort_prepacked_weights_create(&pw))) return tu_finish();
    CHECK(cort_prepacked_weights_count(pw) == 0 && cort_prepacked_weights_bytes(pw) == 0);
    CHECK(cort_prepacked_weights_count(NULL) == 0);
    cort_session_options *o = options(pw);
    cort_session *a = create(ALIGNED, o);
    const size_t n1 = cort_prepacked_weights_count(pw);
    const uint64_t b1 = cort_prepacked_weights_bytes(pw);
    /* W1, W2, the folded W3, Wm and Wg at least (Ws, Wo and Wa may be packed too) */
    CHECK_MSG(n1 >= 5, "first session stored %zu buffers, expected >= 5", n1);
    CHECK_MSG(b1 >= (uint64_t)(2 * 128 * 64 * 9 + 128 * 128) * 4, "first session's buffers come from %llu bytes",
              (unsigned long long)b1);
    cort_session *b = create(ALIGNED, o);
    CHECK_MSG(cort_prepacked_weights_count(pw) == n1, "second session: %zu buffers, expected %zu (shared)",
              cort_prepacked_weights_count(pw), n1);
    cort_session *m = create(MISALIGNED, o);
    CHECK_MSG(cort_prepacked_weights_count(pw) == n1, "same weights in another file: %zu buffers, expected %zu",
              cort_prepacked_weights_count(pw), n1);
    result ra, rb, rm;
    run(a, &ra);
    run(b, &rb);
    run(m, &rm);
    check_same("session 1 with the container", &ra, &ref);
    check_same("session 2 with the container", &rb, &ref);
    check_same("the misaligned file with the container", &rm, &ref);
    result_free(&ra);
    result_free(&rb);
    result_free(&rm);

    /* negative control: other values for W1 (the first conv) make one more buffer and change y1 */
    cort_session_options *on = options(pw);
    const int64_t w1s[4] = { 128, 64, 3, 3 };
    cort_value *w1 = pattern(w1s, 4, 12345);
    CHECK_OK(cort_session_options_add_initializer(on, "W1", w1));
    cort_value_release(w1);
    cort_session *neg = create(ALIGNED, on);
    cort_session_options_free(on);
    CHECK_MSG(cort_prepacked_weights_count(pw) == n1 + 1, "other W1: %zu buffers, expected %zu",
              cort_prepacked_weights_count(pw), n1 + 1);
    result rn;
    if (run(neg, &rn)) {
        CHECK_MSG(!same_output(&rn, &ref, 0), "other W1 left y1 unchanged: a wrong buffer was shared");
        CHECK_MSG(same_output(&rn, &ref, 1), "other W1 changed y2, which does not depend on it");
    }
    result_free(&rn);
    cort_session_release(neg);

    /* release order: the container and options first, then a session, while the others still run */
    cort_prepacked_weights_release(pw);
    cort_session_options_free(o);
    cort_session_release(a);
    run(m, &rm);
    check_same("after releasing the container and session 1", &rm, &ref);
    result_free(&rm);
    cort_session_release(m);
    run(b, &rb);
    check_same("the last session", &rb, &ref);
    result_free(&rb);
    cort_session_release(b);

    /* 8 threads creating sessions with one container at once */
    if (CHECK_OK(cort_prepacked_weights_create(&pw))) {
        cort_session_options *ot = options(pw);
        pthread_t th[8];
        thread_arg args[8];
        int started[8] = { 0 };
        for (int i = 0; i < 8; i++) {
            args[i] = (thread_arg){ ot, &ref, 0 };
            started[i] = pthread_create(&th[i], NULL, create_and_run, &args[i]) == 0;
            CHECK_MSG(started[i], "thread %d not started", i);
        }
        for (int i = 0; i < 8; i++)
            if (started[i]) {
                pthread_join(th[i], NULL);
                CHECK_MSG(args[i].ok, "thread %d: session failed or its outputs differ from the reference", i);
            }
        CHECK_MSG(cort_prepacked_weights_count(pw) == n1, "8 concurrent sessions: %zu buffers, expected %zu",
                  cort_prepacked_weights_count(pw), n1);
        cort_session_options_free(ot);
        cort_prepacked_weights_release(pw);
    }
    CHECK_CODE(cort_session_options_set_prepacked_weights(NULL, NULL), CORT_ERROR_INVALID_ARGUMENT);
    /* 9 packs at level 2: 7 made by Convs and 2 by the PwDwConvs (depthwise weights are read in
     * place, never packed); without the PwDwConv's lookup the container would hold 7 */
    check_model_shared("tests/models/fuse_pwdw.onnx", 9);
    result_free(&ref);
    return tu_finish();
}
