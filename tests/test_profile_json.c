/* Profiling to ONNX Runtime's chrome-trace JSON: the file parses as JSON (a small strict parser
 * below), holds one Session event per creation phase and run, and fence_before / kernel_time /
 * fence_after Node events per executed node with ORT's args; disabled profiling writes nothing.
 * relu_add.onnx: Y = Relu(X) + B, Z = Identity(X), X float [N, 4]. */
#include "testutil.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODEL(name) "tests/models/" name

/* ---- a strict JSON parser, enough to read the trace ---- */
typedef struct ev {
    char cat[32], name[128], ph[8], op_name[64], provider[64], in_shape[128];
    double dur, ts;
    int has_dur, has_ts, has_pid, has_tid, n_in_shapes, has_sched;
} ev;
typedef struct jp { const char *p; int bad; } jp;

static void ws(jp *j) { while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r') j->p++; }
static int lit(jp *j, char c) { ws(j); if (*j->p == c) { j->p++; return 1; } return 0; }

static void str(jp *j, char *out, size_t cap) {
    size_t n = 0;
    ws(j);
    if (*j->p != '"') { j->bad = 1; return; }
    j->p++;
    while (*j->p && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            c = *j->p++;
            if (c == 'u') { for (int k = 0; k < 4; k++) if (!*j->p++) { j->bad = 1; return; } c = '?'; }
            else if (!strchr("\"\\/bfnrt", c)) { j->bad = 1; return; }
        } else if ((unsigned char)c < 0x20) { j->bad = 1; return; }
        if (out && n + 1 < cap) out[n++] = c;
    }
    if (*j->p != '"') { j->bad = 1; return; }
    j->p++;
    if (out) out[n] = 0;
}

static double num(jp *j) {
    ws(j);
    char *end;
    double v = strtod(j->p, &end);
    if (end == j->p) j->bad = 1;
    j->p = end;
    return v;
}

static void value(jp *j, int depth);
static void skip_obj(jp *j, int depth) {
    if (lit(j, '}')) return;
    do { str(j, NULL, 0); if (!lit(j, ':')) { j->bad = 1; return; } value(j, depth + 1); } while (!j->bad && lit(j, ','));
    if (!lit(j, '}')) j->bad = 1;
}
static void skip_arr(jp *j, int depth) {
    if (lit(j, ']')) return;
    do value(j, depth + 1); while (!j->bad && lit(j, ','));
    if (!lit(j, ']')) j->bad = 1;
}
static void value(jp *j, int depth) {
    ws(j);
    if (depth > 32) { j->bad = 1; return; }
    if (lit(j, '{')) skip_obj(j, depth);
    else if (lit(j, '[')) skip_arr(j, depth);
    else if (*j->p == '"') str(j, NULL, 0);
    else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) j->p += 4;
    else if (!strncmp(j->p, "false", 5)) j->p += 5;
    else num(j);
}

/* {"float":[3,4]} ... the first shape as "float:3,4" */
static void type_shape_list(jp *j, ev *e) {
    if (!lit(j, '[')) { j->bad = 1; return; }
    if (lit(j, ']')) return;
    do {
        if (!lit(j, '{')) { j->bad = 1; return; }
        char ty[32];
        str(j, ty, sizeof ty);
        if (!lit(j, ':') || !lit(j, '[')) { j->bad = 1; return; }
        char buf[96];
        int o = snprintf(buf, sizeof buf, "%s:", ty);
        if (!lit(j, ']')) {
            do o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%lld", buf[o - 1] == ':' ? "" : ",", (long long)num(j));
            while (!j->bad && lit(j, ',') && o < 80);
            if (!lit(j, ']')) { j->bad = 1; return; }
        }
        if (!lit(j, '}')) { j->bad = 1; return; }
        if (!e->n_in_shapes++) snprintf(e->in_shape, sizeof e->in_shape, "%s", buf);
    } while (!j->bad && lit(j, ','));
    if (!lit(j, ']')) j->bad = 1;
}

static void event(jp *j, ev *e) {
    memset(e, 0, sizeof *e);
    if (!lit(j, '{')) { j->bad = 1; return; }
    do {
        char key[64];
        str(j, key, sizeof key);
        if (!lit(j, ':')) { j->bad = 1; return; }
        if (!strcmp(key, "cat")) str(j, e->cat, sizeof e->cat);
        else if (!strcmp(key, "name")) str(j, e->name, sizeof e->name);
        else if (!strcmp(key, "ph")) str(j, e->ph, sizeof e->ph);
        else if (!strcmp(key, "dur")) { e->dur = num(j); e->has_dur = 1; }
        else if (!strcmp(key, "ts")) { e->ts = num(j); e->has_ts = 1; }
        else if (!strcmp(key, "pid")) { num(j); e->has_pid = 1; }
        else if (!strcmp(key, "tid")) { num(j); e->has_tid = 1; }
        else if (!strcmp(key, "args")) {
            if (!lit(j, '{')) { j->bad = 1; return; }
            if (lit(j, '}')) continue;
            do {
                char ak[64];
                str(j, ak, sizeof ak);
                if (!lit(j, ':')) { j->bad = 1; return; }
                if (!strcmp(ak, "op_name")) str(j, e->op_name, sizeof e->op_name);
                else if (!strcmp(ak, "provider")) str(j, e->provider, sizeof e->provider);
                else if (!strcmp(ak, "input_type_shape")) type_shape_list(j, e);
                else if (!strcmp(ak, "thread_scheduling_stats")) { e->has_sched = 1; value(j, 2); }
                else value(j, 2);
            } while (!j->bad && lit(j, ','));
            if (!lit(j, '}')) j->bad = 1;
        } else value(j, 1);
    } while (!j->bad && lit(j, ','));
    if (!lit(j, '}')) j->bad = 1;
}

/* Parses the trace file into events (at most cap); -1 if it is not a JSON array of objects. */
static int read_trace(const char *path, ev *evs, int cap) {
    size_t len = 0;
    char *text = tu_read_file(path, &len);
    if (!text) return -1;
    char *z = realloc(text, len + 1);
    if (!z) { free(text); return -1; }
    z[len] = 0;
    jp j = { z, 0 };
    int n = 0;
    if (!lit(&j, '[')) j.bad = 1;
    else if (!lit(&j, ']')) {
        do {
            ev scratch;
            event(&j, n < cap ? &evs[n] : &scratch);
            n++;
        } while (!j.bad && lit(&j, ','));
        if (!lit(&j, ']')) j.bad = 1;
    }
    ws(&j);
    if (*j.p) j.bad = 1;
    free(z);
    return j.bad ? -1 : n;
}

static int count(const ev *e, int n, const char *cat, const char *name) {
    int c = 0;
    for (int i = 0; i < n; i++) c += !strcmp(e[i].cat, cat) && (!name || !strcmp(e[i].name, name));
    return c;
}

static int run_once(cort_session *s, int64_t batch) {
    float x[32];
    for (int i = 0; i < 32; i++) x[i] = (float)i - 10;
    int64_t shape[2] = { batch, 4 };
    cort_value *in = NULL, *outs[2] = { NULL, NULL };
    if (!CHECK_OK(cort_tensor_wrap(x, (size_t)batch * 4 * sizeof(float), CORT_TYPE_FLOAT, shape, 2, &in))) return 0;
    const char *in_names[1] = { "X" }, *out_names[2] = { "Y", "Z" };
    int ok = CHECK_OK(cort_session_run(s, NULL, in_names, &in, 1, out_names, 2, outs));
    cort_value_release(outs[0]);
    cort_value_release(outs[1]);
    cort_value_release(in);
    return ok;
}

static void test_trace_file(void) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "/tmp/cort_test_profile_%d", (int)getpid());
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_profile_file(o, 1, prefix));
    CHECK_OK(cort_session_options_set_optimization_level(o, 0));   /* keep Relu and Add apart */
    cort_session *s = NULL;
    int ok = CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), o, &s));
    cort_session_options_free(o);
    if (!ok) return;
    CHECK(cort_session_profiling_start_ns(s) > (int64_t)1600000000 * 1000000000);
    run_once(s, 3);
    run_once(s, 2);
    const char *file = NULL;
    if (!CHECK_OK(cort_session_end_profiling(s, &file))) { cort_session_release(s); return; }
    CHECK(!strncmp(file, prefix, strlen(prefix)) && strstr(file, ".json"));
    const char *again = NULL;
    CHECK_OK(cort_session_end_profiling(s, &again));
    CHECK(again == file);
    run_once(s, 1);   /* after the end nothing is recorded (and nothing breaks) */
    ev evs[64];
    int n = read_trace(file, evs, 64);
    CHECK_MSG(n > 0, "%s is not a JSON array of events (%d)", file, n);
    if (n > 0 && n <= 64) {
        CHECK(count(evs, n, "Session", "model_loading_uri") == 1);
        CHECK(count(evs, n, "Session", "session_initialization") == 1);
        CHECK(count(evs, n, "Session", "model_run") == 2);
        /* 3 nodes x 2 runs x (fence_before, kernel_time, fence_after) */
        CHECK_MSG(count(evs, n, "Node", NULL) == 18, "%d node events", count(evs, n, "Node", NULL));
        int relu_kernel = 0, shapes_3x4 = 0, shapes_2x4 = 0;
        for (int i = 0; i < n; i++) {
            const ev *e = &evs[i];
            CHECK(!strcmp(e->ph, "X") && e->has_dur && e->has_ts && e->has_pid && e->has_tid && e->dur >= 0);
            size_t L = strlen(e->name);
            if (!strcmp(e->cat, "Node") && L > 12 && !strcmp(e->name + L - 12, "_kernel_time")) {
                CHECK(!strcmp(e->provider, "CPUExecutionProvider"));
                CHECK(e->has_sched && e->n_in_shapes >= 1);
                if (!strcmp(e->op_name, "Relu")) relu_kernel++;
                shapes_3x4 += !strcmp(e->in_shape, "float:3,4");
                shapes_2x4 += !strcmp(e->in_shape, "float:2,4");
            }
            if (!strcmp(e->cat, "Node")) CHECK(e->op_name[0] != 0);
        }
        CHECK(relu_kernel == 2);
        CHECK(shapes_3x4 == 3 && shapes_2x4 == 3);
        /* each run's events lie inside its model_run */
        for (int i = 0; i < n; i++)
            if (!strcmp(evs[i].name, "model_run")) {
                int inside = 0;
                for (int k = 0; k < n; k++)
                    inside += !strcmp(evs[k].cat, "Node") && evs[k].ts >= evs[i].ts && evs[k].ts <= evs[i].ts + evs[i].dur + 1;
                CHECK(inside >= 9);
            }
    }
    remove(file);
    cort_session_release(s);
}

static void test_disabled(void) {
    cort_session *s = NULL;
    if (!CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), NULL, &s))) return;
    run_once(s, 2);
    const char *file = "x";
    CHECK_OK(cort_session_end_profiling(s, &file));
    CHECK(file && file[0] == 0);
    CHECK(cort_session_profiling_start_ns(s) == 0);
    CHECK_CODE(cort_session_end_profiling(NULL, &file), CORT_ERROR_INVALID_ARGUMENT);
    cort_session_release(s);
    /* an unwritable prefix is reported, not ignored */
    cort_session_options *o = NULL;
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_profile_file(o, 1, "/nonexistent_dir_cort/p"));
    if (CHECK_OK(cort_session_create(MODEL("relu_add.onnx"), o, &s))) {
        CHECK_ERR(cort_session_end_profiling(s, &file), CORT_ERROR_IO, "/nonexistent_dir_cort/p");
        cort_session_release(s);
    }
    cort_session_options_free(o);
}

int main(void) {
    test_trace_file();
    test_disabled();
    return tu_finish();
}
