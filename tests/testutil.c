#include "testutil.h"
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>
#include <math.h>
#include <stdarg.h>

int tu_passed, tu_failed;

int tu_check_ok(cort_status *st, const char *file, int line, const char *expr) {
    if (!st) { tu_passed++; return 1; }
    tu_failed++;
    fprintf(stderr, "%s:%d: %s failed: [%s] %s\n", file, line, expr, cort_code_name(cort_status_code(st)),
            cort_status_message(st));
    cort_status_free(st);
    return 0;
}

int tu_check_code(cort_status *st, cort_code code, const char *file, int line, const char *expr, const char *needle) {
    int ok = cort_status_code(st) == code && (!needle || strstr(cort_status_message(st), needle));
    if (ok) tu_passed++;
    else {
        tu_failed++;
        fprintf(stderr, "%s:%d: %s: expected %s%s%s, got [%s] %s\n", file, line, expr, cort_code_name(code),
                needle ? " containing " : "", needle ? needle : "", cort_code_name(cort_status_code(st)),
                cort_status_message(st));
    }
    cort_status_free(st);
    return ok;
}

int tu_finish(void) {
    printf("%d passed, %d failed\n", tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

void *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf && len) *len = (size_t)n;
    return buf;
}

extern char **environ;

int tu_spawn_self(pid_t *pid, const posix_spawn_file_actions_t *fa, char *const args[], char *const envp[]) {
    /* Under an emulator (qemu-aarch64 for the cross-built tests) /proc/self/exe is the emulator's
     * host binary: CORT_TEST_EMULATOR names the command that runs a test binary, and the child is
     * spawned through it. */
    const char *emu = getenv("CORT_TEST_EMULATOR");
    if (!emu || !*emu) return posix_spawn(pid, "/proc/self/exe", fa, NULL, args, envp);
    char buf[512], *argv[64];
    size_t n = 0, len = strlen(emu);
    if (len >= sizeof buf) return -1;
    memcpy(buf, emu, len + 1);
    for (char *tok = strtok(buf, " "); tok && n < 32; tok = strtok(NULL, " ")) argv[n++] = tok;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);   /* qemu-user reports the guest binary */
    if (sl <= 0) return -1;
    self[sl] = 0;
    argv[n++] = self;
    for (size_t i = 1; args[i] && n < 63; i++) argv[n++] = args[i];
    argv[n] = NULL;
    return posix_spawnp(pid, argv[0], fa, NULL, argv, envp);
}

int tu_fresh_process_trials(const char *name, char *argv0, int trials, int expect_failures) {
    int failed = 0, crashed = 0;
    for (int t = 0; t < trials; t++) {
        char *args[] = { argv0, (char *)"--trial", NULL };
        pid_t pid;
        if (tu_spawn_self(&pid, NULL, args, environ)) { perror("posix_spawn"); return 2; }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status)) crashed++;
        if (!WIFEXITED(status) || WEXITSTATUS(status)) failed++;
    }
    printf("%s trials: %d, failed: %d (crashed: %d)\n", name, trials, failed, crashed);
    if (expect_failures) {
        CHECK_MSG(failed * 2 >= trials, "negative control: only %d of %d trials failed", failed, trials);
    } else {
        CHECK_MSG(failed == 0, "%d of %d fresh-process trials failed", failed, trials);
    }
    return 0;
}

static int same_special(float g, float w) {   /* both NaN, or the same infinity */
    return (isnan(g) && isnan(w)) || (isinf(g) && g == w);
}

double tu_close_err(const float *got, const float *want, size_t n, tu_tol tol, size_t *at) {
    double mag = 0;
    for (size_t i = 0; i < n; i++) if (isfinite(want[i]) && fabs((double)want[i]) > mag) mag = fabs((double)want[i]);
    const double atol = tol.atol_abs + tol.atol_rel * mag;
    double worst = 0;
    size_t wi = 0;
    for (size_t i = 0; i < n; i++) {
        double e;
        if (same_special(got[i], want[i])) continue;
        if (!isfinite(got[i]) || !isfinite(want[i])) e = INFINITY;
        else {
            const double d = fabs((double)got[i] - (double)want[i]), allowed = atol + tol.rtol * fabs((double)want[i]);
            e = d == 0 ? 0 : allowed > 0 ? d / allowed : INFINITY;
        }
        if (e > worst) { worst = e; wi = i; }
    }
    if (at) *at = wi;
    return worst;
}

int tu_check_close(const float *got, const float *want, size_t n, tu_tol tol, const char *file, int line,
                   const char *fmt, ...) {
    size_t at = 0;
    const double e = tu_close_err(got, want, n, tol, &at);
    if (e <= 1) { tu_passed++; return 1; }
    tu_failed++;
    double mag = 0;
    for (size_t i = 0; i < n; i++) if (isfinite(want[i]) && fabs((double)want[i]) > mag) mag = fabs((double)want[i]);
    fprintf(stderr, "%s:%d: CHECK_CLOSE failed: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": element %zu of %zu: got %.9g, want %.9g (diff %.3g, allowed %.3g = rtol %g * |want| + "
            "atol_abs %g + atol_rel %g * max|want| %.4g)\n", at, n, (double)got[at], (double)want[at],
            fabs((double)got[at] - (double)want[at]),
            tol.rtol * fabs((double)want[at]) + tol.atol_abs + tol.atol_rel * mag, tol.rtol, tol.atol_abs,
            tol.atol_rel, mag);
    return 0;
}

static int64_t ordered(float x) {   /* monotonic integer image of a float; +0 and -0 both map to 0 */
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

uint32_t tu_max_ulp(const float *a, const float *b, size_t n, size_t *at) {
    uint32_t worst = 0;
    size_t wi = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t d;
        if (isnan(a[i]) || isnan(b[i])) d = isnan(a[i]) && isnan(b[i]) ? 0 : UINT32_MAX;
        else {
            const int64_t x = ordered(a[i]) - ordered(b[i]);
            d = (uint32_t)(x < 0 ? -x : x);
        }
        if (d > worst) { worst = d; wi = i; }
    }
    if (at) *at = wi;
    return worst;
}

/* ---- protobuf writer ---- */
void pb_byte(pb *b, unsigned char c) {
    if (b->n == b->cap) {
        const size_t cap = b->cap ? 2 * b->cap : 256;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "pb_byte: out of memory building a test model\n");
            exit(2);
        }
        b->p = p;
        b->cap = cap;
    }
    b->p[b->n++] = c;
}
void pb_varint(pb *b, uint64_t v) {
    while (v >= 0x80) {
        pb_byte(b, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    pb_byte(b, (unsigned char)v);
}
void pb_key(pb *b, int field, int wt) { pb_varint(b, (uint64_t)field << 3 | (uint64_t)wt); }
void pb_int(pb *b, int field, int64_t v) { pb_key(b, field, 0); pb_varint(b, (uint64_t)v); }
void pb_f32(pb *b, int field, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    pb_key(b, field, 5);
    for (int i = 0; i < 4; i++) pb_byte(b, (unsigned char)(u >> (8 * i)));
}
void pb_bytes(pb *b, int field, const void *d, size_t n) {
    pb_key(b, field, 2);
    pb_varint(b, n);
    for (size_t i = 0; i < n; i++) pb_byte(b, ((const unsigned char *)d)[i]);
}
void pb_str(pb *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
void pb_sub(pb *b, int field, pb *sub) {
    pb_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}
