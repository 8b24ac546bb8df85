/* The CPU probe (src/core/cpu_features.c): one probe shared by every thread, the levels list agrees
 * with the flags, and CORT_ISA caps the level, checked in fresh child processes (the variable is
 * read once per process): generic and every supported level work; an unknown value, a level above
 * the CPU's and another architecture's level fail at cort_cpu_info_get, cort_cpu_describe and
 * session creation with an error naming CORT_ISA and the value, every time it is asked. AMX tiles
 * are in use exactly where the CPU has them at level avx512 and CORT_AMX is not 0. */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/cpu_features.h"
#include "testutil.h"

extern char **environ;

/* ---- child: prints what it sees, one "key=value" per line ---- */
static int child(void) {
    const cort_cpu_info *info = NULL;
    cort_status *st = cort_cpu_info_get(&info);
    if (!st) {
        char line[512];
        cort_status *d = cort_cpu_describe(line, sizeof line, NULL);
        printf("level=%s\ndetected=%s\ncapped=%d\nflags=%u\nisa=%s\namx_tiles=%d\n%s\n", cort_isa_name(info->level),
               cort_isa_name(info->detected), info->capped, (unsigned)info->flags, cort_isa_name(cort_cpu_isa()),
               info->amx_tiles, d ? "describe-failed" : line);
        cort_status_free(d);
    } else {
        printf("error=%s\ncode=%s\n", cort_status_message(st), cort_code_name(cort_status_code(st)));
        /* remembered: the same failure again, from describe too, and cort_cpu_isa falls back to generic */
        cort_status *again = cort_cpu_info_get(&info);
        char line[64];
        cort_status *d = cort_cpu_describe(line, sizeof line, NULL);
        printf("again=%d\ndescribe=%d\nisa=%s\n", again && !strcmp(cort_status_message(again), cort_status_message(st)),
               d && !strcmp(cort_status_message(d), cort_status_message(st)), cort_isa_name(cort_cpu_isa()));
        cort_status_free(again);
        cort_status_free(d);
        cort_status_free(st);
    }
    cort_session *s = NULL;
    st = cort_session_create("demo/digits_cnn.onnx", NULL, &s);
    printf("session=%s\nsession_error=%s\n", cort_code_name(cort_status_code(st)), cort_status_message(st));
    cort_status_free(st);
    cort_session_release(s);
    fflush(stdout);
    return 0;
}

/* Runs this binary with "--child" and CORT_ISA=value (unset when NULL); returns its stdout (malloc'd). */
static char *run_child(const char *value) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 2, sizeof *env);
    char var[128];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) if (strncmp(environ[i], "CORT_ISA=", 9)) env[k++] = environ[i];
    if (value) { snprintf(var, sizeof var, "CORT_ISA=%s", value); env[k++] = var; }
    env[k] = NULL;
    int fd[2];
    if (pipe(fd)) { free(env); return NULL; }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *args[] = { (char *)"test_cpu_features", (char *)"--child", NULL };
    pid_t pid;
    int rc = tu_spawn_self(&pid, &fa, args, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(fd[1]);
    if (rc) { close(fd[0]); return NULL; }
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    ssize_t r;
    while (out && (r = read(fd[0], out + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (cap - len < 2) { char *o = realloc(out, cap *= 2); if (!o) { free(out); out = NULL; } else out = o; }
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!out) return NULL;
    out[len] = '\0';
    if (!WIFEXITED(status) || WEXITSTATUS(status)) { free(out); return NULL; }
    return out;
}

/* The value of "key=" in a child's output (static copy; "" if missing). */
static const char *field(const char *out, const char *key) {
    static char v[1024];
    v[0] = '\0';
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    for (const char *p = out; p && *p; ) {
        if (!strncmp(p, pat, strlen(pat))) {
            p += strlen(pat);
            size_t l = strcspn(p, "\n");
            if (l >= sizeof v) l = sizeof v - 1;
            memcpy(v, p, l);
            v[l] = '\0';
            return v;
        }
        p = strchr(p, '\n');
        if (p) p++;
    }
    return v;
}

/* ---- parent ---- */
static void *probe_thread(void *arg) {
    const cort_cpu_info **slot = arg;
    cort_status *st = cort_cpu_info_get(slot);
    if (st) { *slot = NULL; cort_status_free(st); }
    return NULL;
}

static void check_once(void) {
    enum { N = 8 };
    pthread_t t[N];
    const cort_cpu_info *seen[N] = { 0 };
    for (int i = 0; i < N; i++) CHECK(pthread_create(&t[i], NULL, probe_thread, &seen[i]) == 0);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    const cort_cpu_info *info = NULL;
    CHECK_OK(cort_cpu_info_get(&info));
    for (int i = 0; i < N; i++) CHECK_MSG(seen[i] && seen[i] == info, "thread %d saw %p, main %p", i, (void *)seen[i], (void *)info);
    if (!info) return;
    const char *env = getenv("CORT_ISA");
    if (env && *env) CHECK_MSG(!strcasecmp(cort_isa_name(info->level), env), "CORT_ISA=%s but level %s", env, cort_isa_name(info->level));
    else CHECK(info->level == info->detected && !info->capped);
    CHECK(cort_cpu_isa() == info->level);
    CHECK(info->capped == (info->level != info->detected));
}

static void check_levels(void) {
    const cort_cpu_info *info = NULL;
    CHECK_OK(cort_cpu_info_get(&info));
    if (!info) return;
    cort_isa_level lv[8];
    const int n = cort_cpu_levels(lv, 8);
    CHECK(n >= 1 && n <= CORT_ISA_LEVEL_COUNT);
    CHECK(cort_cpu_levels(NULL, 0) == n);
    if (n < 1) return;
    CHECK(lv[0] == CORT_ISA_GENERIC);
    for (int i = 1; i < n; i++) CHECK(lv[i] > lv[i - 1]);
    CHECK(lv[n - 1] == info->detected);
    const uint32_t f = info->flags;
    int has[CORT_ISA_LEVEL_COUNT] = { 0 };
    for (int i = 0; i < n; i++) has[lv[i]] = 1;
    const uint32_t avx2 = CORT_CPU_AVX2 | CORT_CPU_FMA | CORT_CPU_F16C;
    const uint32_t avx512 = CORT_CPU_AVX512F | CORT_CPU_AVX512BW | CORT_CPU_AVX512DQ | CORT_CPU_AVX512VL;
    CHECK(has[CORT_ISA_AVX2] == ((f & avx2) == avx2));
    CHECK(has[CORT_ISA_AVX512] == ((f & avx2) == avx2 && (f & avx512) == avx512));
    CHECK(has[CORT_ISA_NEON] == !!(f & CORT_CPU_NEON));
    CHECK(!(has[CORT_ISA_NEON] && has[CORT_ISA_AVX2]));
    if (f & (CORT_CPU_AVX512VNNI | CORT_CPU_AVX512BF16 | CORT_CPU_AVX512FP16)) CHECK(f & CORT_CPU_AVX512F);
    if (f & (CORT_CPU_DOTPROD | CORT_CPU_FP16ARITH)) CHECK(f & CORT_CPU_NEON);
#if defined(__x86_64__) || defined(__i386__)
    /* the compiler's own probe agrees (it also checks the OS register state) */
    CHECK(!!(f & CORT_CPU_AVX2) == !!__builtin_cpu_supports("avx2"));
    CHECK(!!(f & CORT_CPU_FMA) == !!__builtin_cpu_supports("fma"));
    CHECK(!!(f & CORT_CPU_AVX512F) == !!__builtin_cpu_supports("avx512f"));
    CHECK(!!(f & CORT_CPU_AVX512BW) == !!__builtin_cpu_supports("avx512bw"));
    CHECK(!!(f & CORT_CPU_AVX512DQ) == !!__builtin_cpu_supports("avx512dq"));
    CHECK(!!(f & CORT_CPU_AVX512VL) == !!__builtin_cpu_supports("avx512vl"));
    CHECK(!(f & (CORT_CPU_NEON | CORT_CPU_DOTPROD | CORT_CPU_FP16ARITH)));
#endif
    CHECK(!strcmp(cort_isa_name(CORT_ISA_GENERIC), "generic") && !strcmp(cort_isa_name(CORT_ISA_AVX2), "avx2") &&
          !strcmp(cort_isa_name(CORT_ISA_AVX512), "avx512") && !strcmp(cort_isa_name(CORT_ISA_NEON), "neon"));
    char names[256];
    cort_cpu_flag_names(f, names, sizeof names);
    printf("levels:");
    for (int i = 0; i < n; i++) printf(" %s", cort_isa_name(lv[i]));
    printf("; flags: %s\n", names);
}

static void check_describe(void) {
    char buf[512];
    size_t len = 0;
    CHECK_OK(cort_cpu_describe(buf, sizeof buf, &len));
    CHECK(len == strlen(buf) && !strncmp(buf, "isa: ", 5));
    char small[8];
    size_t len2 = 0;
    CHECK_OK(cort_cpu_describe(small, sizeof small, &len2));
    CHECK(len2 == len && strlen(small) == sizeof small - 1 && !strncmp(small, buf, sizeof small - 1));
    CHECK_OK(cort_cpu_describe(NULL, 0, &len2));
    CHECK(len2 == len);
    CHECK_ERR(cort_cpu_describe(NULL, 4, NULL), CORT_ERROR_INVALID_ARGUMENT, "buf");
    printf("%s\n", buf);
}

/* The L2 size: where the C library also reports one (glibc reads the same cpuid leaves on x86) the
 * two agree; any size reported is a plausible per-core L2; the fallback is returned only when the
 * CPU reports none; it appears in the describe line. */
static void check_l2(void) {
    const cort_cpu_info *info = NULL;
    CHECK_OK(cort_cpu_info_get(&info));
    if (!info) return;
    const size_t l2 = info->l2_bytes;
    CHECK_MSG(l2 == 0 || (l2 >= 64 * 1024 && l2 <= 64u * 1024 * 1024 && l2 % 1024 == 0), "l2_bytes %zu", l2);
    CHECK(cort_cpu_l2_bytes(12345) == (l2 ? l2 : 12345));
#if defined(_SC_LEVEL2_CACHE_SIZE) && (defined(__x86_64__) || defined(__i386__))
    const long libc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (libc > 0) CHECK_MSG(l2 == (size_t)libc, "l2_bytes %zu, sysconf %ld", l2, libc);
#endif
    char buf[512], want[48];
    CHECK_OK(cort_cpu_describe(buf, sizeof buf, NULL));
    snprintf(want, sizeof want, "; l2: %zu KB", l2 / 1024);
    CHECK_MSG(l2 == 0 ? strstr(buf, "; l2: ") == NULL : strstr(buf, want) != NULL, "describe '%s', l2 %zu", buf, l2);
    printf("l2: %zu bytes\n", l2);
}

static void expect_level(const char *value, const char *level) {
    char *out = run_child(value);
    CHECK_MSG(out != NULL, "child with CORT_ISA=%s did not run", value ? value : "(unset)");
    if (!out) return;
    const cort_cpu_info *info = NULL;
    cort_status *st = cort_cpu_info_get(&info);   /* the parent's (possibly capped) view: detected/flags are the CPU's */
    cort_status_free(st);
    CHECK_MSG(!strcmp(field(out, "level"), level), "CORT_ISA=%s: level %s, expected %s\n%s", value ? value : "(unset)",
              field(out, "level"), level, out);
    CHECK(!strcmp(field(out, "isa"), level));
    if (info) {
        CHECK(!strcmp(field(out, "detected"), cort_isa_name(info->detected)));
        CHECK((uint32_t)strtoul(field(out, "flags"), NULL, 10) == info->flags);
        CHECK(atoi(field(out, "capped")) == (strcmp(level, cort_isa_name(info->detected)) != 0));
        /* AMX tiles only at level avx512 of a CPU with AMX, never with CORT_AMX=0; on Linux x86-64 the
         * kernel grants the tile state to any process that asks */
        const char *amx_env = getenv("CORT_AMX");
        const int amx_want = (info->flags & CORT_CPU_AMX) && !strcmp(level, "avx512") && !(amx_env && !strcmp(amx_env, "0"));
        const int amx = atoi(field(out, "amx_tiles"));
#if defined(__linux__) && defined(__x86_64__)
        CHECK_MSG(amx == amx_want, "CORT_ISA=%s CORT_AMX=%s: amx_tiles %d, expected %d", value ? value : "(unset)",
                  amx_env ? amx_env : "(unset)", amx, amx_want);
#else
        CHECK(amx <= amx_want);
#endif
        CHECK((strstr(out, "; amx tiles in use") != NULL) == (amx == 1));
    }
    CHECK_MSG(!strcmp(field(out, "session"), "OK"), "CORT_ISA=%s: session %s: %s", value ? value : "(unset)",
              field(out, "session"), field(out, "session_error"));
    char want[64];
    snprintf(want, sizeof want, "isa: %s (", level);
    CHECK_MSG(strstr(out, want) != NULL, "describe line of CORT_ISA=%s:\n%s", value ? value : "(unset)", out);
    free(out);
}

static void expect_error(const char *value, const char *why) {
    char *out = run_child(value);
    CHECK_MSG(out != NULL, "child with CORT_ISA=%s did not run", value);
    if (!out) return;
    char want[128];
    snprintf(want, sizeof want, "CORT_ISA=%s", value);
    const char *err = field(out, "error");
    CHECK_MSG(strstr(err, want) && strstr(err, why) && strstr(err, "supports: generic"),
              "CORT_ISA=%s: error '%s' (expected to name the value, '%s' and the CPU's levels)", value, err, why);
    CHECK(!strcmp(field(out, "code"), "INVALID_ARGUMENT"));
    CHECK(!strcmp(field(out, "again"), "1"));
    CHECK(!strcmp(field(out, "describe"), "1"));
    CHECK(!strcmp(field(out, "isa"), "generic"));
    CHECK(!strcmp(field(out, "session"), "INVALID_ARGUMENT"));
    CHECK_MSG(strstr(field(out, "session_error"), want) != NULL, "session error: %s", field(out, "session_error"));
    free(out);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--child")) return child();
    check_once();
    check_levels();
    check_describe();
    check_l2();
    cort_isa_level lv[CORT_ISA_LEVEL_COUNT];
    const int n = cort_cpu_levels(lv, CORT_ISA_LEVEL_COUNT);
    expect_level(NULL, cort_isa_name(lv[n - 1]));
    expect_level("", cort_isa_name(lv[n - 1]));
    for (int i = 0; i < n; i++) expect_level(cort_isa_name(lv[i]), cort_isa_name(lv[i]));
    expect_level("GENERIC", "generic");
    /* CORT_AMX=0 keeps the tiles off at every level */
    const char *amx_env = getenv("CORT_AMX");
    char *saved = amx_env ? strdup(amx_env) : NULL;
    setenv("CORT_AMX", "0", 1);
    for (int i = 0; i < n; i++) expect_level(cort_isa_name(lv[i]), cort_isa_name(lv[i]));
    if (saved) setenv("CORT_AMX", saved, 1);
    else unsetenv("CORT_AMX");
    free(saved);
    expect_error("bogus", "unknown ISA level");
    expect_error("avx", "unknown ISA level");
    int has[CORT_ISA_LEVEL_COUNT] = { 0 };
    for (int i = 0; i < n; i++) has[lv[i]] = 1;
    if (has[CORT_ISA_NEON]) {
        expect_error("avx2", "another architecture");
        expect_error("avx512", "another architecture");
    } else {
        if (!has[CORT_ISA_AVX2]) expect_error("avx2", "does not support");
        if (!has[CORT_ISA_AVX512]) expect_error("avx512", "does not support");
#if defined(__x86_64__) || defined(__i386__)
        expect_error("neon", "another architecture");
#endif
    }
    return tu_finish();
}
