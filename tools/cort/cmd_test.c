/* `cort test DIR...`: finds backend-test folders, runs each one (by default in a forked child with a
 * timeout, so a crash or hang in one test is reported as that test's failure instead of ending the
 * whole run), prints per-test status in order and the summary "N passed, M failed[, K skipped]". */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "testrun.h"
#include "core/alloc.h"
#include "core/status.h"

static const char test_usage[] =
    "usage: cort test [OPTIONS] DIR...\n"
    "Runs ONNX backend-test folders (model.onnx + test_data_set_N/{input_K,output_K}.pb). A DIR is a\n"
    "test folder, or a folder whose subfolders with a model.onnx are tests. Each test runs every data\n"
    "set once, then again with concurrent runs on the same session; outputs are compared with\n"
    "|got-expected| <= atol + rtol*|expected| for floats, exactly otherwise.\n"
    "  --threads N             intra-op threads (0 = one per core)\n"
    "  --no-spin               idle pool workers sleep at once instead of spinning briefly\n"
    "  --custom-op-library P   load custom operators from shared library P (repeatable)\n"
    "  --provider NAME         execution provider (repeatable)\n"
    "  --optimization 0|1|2    graph optimization level\n"
    "  --max-tensor-bytes N    refuse any tensor above N bytes (default 1 TiB)\n"
    "  --fold-budget N         bytes constant folding may create beyond twice the initializers\n"
    "                          (default 16 MiB)\n"
    "  --concurrency N         concurrent runs per data set (default 2; 1 disables)\n"
    "  --list-failures FILE    write failing test ids (suite/name), one per line\n"
    "  --quiet                 print only failures and the summary\n"
    "  --jobs N, -j N, -jN     tests run in parallel (default 1)\n"
    "  --timeout SEC           a test running longer fails (default 120; 0 = none)\n"
    "  --no-fork               run tests in this process (no crash isolation, no timeout)\n"
    "  --rtol R, --atol A      tolerances (default 1e-3, 1e-7)\n"
    "  --times                 append each test's wall time\n"
    "  --steady-allocs         also fail a test whose runs allocate after the first two (same shapes)\n"
    "Prints 'PASS suite/name' or 'FAIL suite/name: reason' per test and finally\n"
    "'N passed, M failed' (', K skipped' when some were skipped). Exit status 1 if any failed.\n";

typedef struct test_item {
    char *dir;          /* the test folder */
    char *id;           /* suite/name */
    int   status;       /* CLI_TEST_* */
    char *reason;
    double ms;
    int   done;
} test_item;

typedef struct test_list { test_item *items; size_t n, cap; } test_list;

static void list_free(test_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        cort_free(l->items[i].dir);
        cort_free(l->items[i].id);
        cort_free(l->items[i].reason);
    }
    cort_free(l->items);
}

static const char *base_name(const char *p, size_t *len) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && p[b - 1] != '/') b--;
    *len = n - b;
    return p + b;
}

/* Adds the test in folder `dir` (made absolute to name its suite). */
static cort_status *list_add(test_list *l, const char *dir) {
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) return cort_error(CORT_ERROR_IO, "cannot resolve '%s': %s", dir, strerror(errno));
    size_t nl, sl = 0;
    const char *name = base_name(abs, &nl);
    const char *suite = "";
    if (name > abs + 1) {
        char parent[PATH_MAX];
        memcpy(parent, abs, (size_t)(name - abs - 1));
        parent[name - abs - 1] = 0;
        suite = base_name(parent, &sl);
        suite = abs + (suite - parent);
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        test_item *p = cort_realloc(l->items, cap * sizeof *p);
        if (!p) return cort_error_oom();
        l->items = p;
        l->cap = cap;
    }
    test_item *t = &l->items[l->n];
    memset(t, 0, sizeof *t);
    t->dir = cort_strdup(dir);
    t->id = cort_malloc(sl + nl + 2);
    if (!t->dir || !t->id) {
        cort_free(t->dir);
        cort_free(t->id);
        return cort_error_oom();
    }
    memcpy(t->id, suite, sl);
    t->id[sl] = '/';
    memcpy(t->id + sl + 1, name, nl);
    t->id[sl + 1 + nl] = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].id, t->id) == 0) {   /* overlapping globs name a test twice: run it once */
            cort_free(t->dir);
            cort_free(t->id);
            return NULL;
        }
    }
    l->n++;
    return NULL;
}

static int has_model(const char *dir) {
    char *m = cli_path_join(dir, "model.onnx");
    int r = m && cli_file_exists(m);
    cort_free(m);
    return r;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR is a test, or holds tests one level down (sorted by name). */
static cort_status *discover(test_list *l, const char *dir) {
    if (!cli_dir_exists(dir)) return cort_error(CORT_ERROR_IO, "'%s' is not a directory", dir);
    if (has_model(dir)) return list_add(l, dir);
    DIR *d = opendir(dir);
    if (!d) return cort_error(CORT_ERROR_IO, "cannot open '%s': %s", dir, strerror(errno));
    cort_status *st = NULL;
    char **subs = NULL;
    size_t n = 0, cap = 0, before = l->n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *p = cli_path_join(dir, e->d_name);
        if (!p) { st = cort_error_oom(); goto done; }
        if (!cli_dir_exists(p) || !has_model(p)) { cort_free(p); continue; }
        if (n == cap) {
            size_t c2 = cap ? 2 * cap : 64;
            char **q = cort_realloc(subs, c2 * sizeof *q);
            if (!q) { cort_free(p); st = cort_error_oom(); goto done; }
            subs = q;
            cap = c2;
        }
        subs[n++] = p;
    }
    if (n) qsort(subs, n, sizeof *subs, cmp_str);
    for (size_t i = 0; i < n && !st; i++) st = list_add(l, subs[i]);
    if (!st && l->n == before) st = cort_error(CORT_ERROR_IO, "no tests (folders with model.onnx) in '%s'", dir);
done:
    for (size_t i = 0; i < n; i++) cort_free(subs[i]);
    cort_free(subs);
    closedir(d);
    return st;
}

typedef struct test_cfg {
    cli_test_opts opts;
    int quiet, times, fork_mode, jobs;
    long timeout_s;
} test_cfg;

static void set_result(test_item *t, int status, const char *reason, double ms) {
    t->status = status;
    t->reason = reason && reason[0] ? cort_strdup(reason) : NULL;
    t->ms = ms;
    t->done = 1;
}

static void print_result(const test_cfg *cfg, const test_item *t) {
    if (cfg->quiet && t->status != CLI_TEST_FAIL) return;
    cli_progress_clear();
    const char *tag = t->status == CLI_TEST_PASS ? "PASS" : t->status == CLI_TEST_FAIL ? "FAIL" : "SKIP";
    printf("%s %s", tag, t->id);
    if (t->status != CLI_TEST_PASS) {
        /* one line per test: fold any line breaks of the message */
        fputs(": ", stdout);
        for (const char *c = t->reason ? t->reason : "unknown reason"; *c; c++) putchar(*c == '\n' || *c == '\r' ? ' ' : *c);
    }
    if (cfg->times) printf(" (%.0f ms)", t->ms);
    printf("\n");
    fflush(stdout);
}

/* ---- forked execution ---- */

typedef struct job { pid_t pid; int fd; size_t index; double start; } job;

#define CHILD_MSG_MAX 3000   /* below PIPE_BUF: the child's single write never blocks */

/* jobs: the parent's slot array, which the child frees: held only in the parent's registers it
 * would otherwise be reported as a leak by LeakSanitizer at the child's exit (at -O1) */
static void child_main(const test_cfg *cfg, const test_item *t, int fd, job *jobs) {
    char msg[CHILD_MSG_MAX];
    cort_free(jobs);
    if (cfg->timeout_s > 0) alarm((unsigned)cfg->timeout_s);
    int r = cli_backend_test_run(t->dir, &cfg->opts, msg + 1, sizeof msg - 1);
    msg[0] = r == CLI_TEST_PASS ? 'P' : r == CLI_TEST_SKIP ? 'S' : 'F';
    if (r == CLI_TEST_PASS) msg[1] = 0;
    size_t len = strlen(msg);
    ssize_t w = write(fd, msg, len);
    (void)w;
    close(fd);
    exit(0);   /* exit, not _exit: sanitizers' leak checks run at exit */
}

static cort_status *start_job(const test_cfg *cfg, test_list *l, size_t index, job *jobs, int slot) {
    job *j = &jobs[slot];
    int p[2];
    if (pipe(p) != 0) return cort_error(CORT_ERROR_RUNTIME, "pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return cort_error(CORT_ERROR_RUNTIME, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        child_main(cfg, &l->items[index], p[1], jobs);
    }
    close(p[1]);
    j->pid = pid;
    j->fd = p[0];
    j->index = index;
    j->start = cli_now_ms();
    return NULL;
}

static void finish_job(const test_cfg *cfg, test_list *l, job *j, int wstatus) {
    char msg[CHILD_MSG_MAX + 1], reason[CHILD_MSG_MAX + 128];
    size_t len = 0;
    ssize_t r;
    while (len < CHILD_MSG_MAX && (r = read(j->fd, msg + len, CHILD_MSG_MAX - len)) != 0) {
        if (r < 0) { if (errno == EINTR) continue; break; }
        len += (size_t)r;
    }
    msg[len] = 0;
    close(j->fd);
    double ms = cli_now_ms() - j->start;
    test_item *t = &l->items[j->index];
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        if (sig == SIGALRM) snprintf(reason, sizeof reason, "timeout after %ld s", cfg->timeout_s);
        else snprintf(reason, sizeof reason, "crashed with signal %d (%s)", sig, strsignal(sig));
        set_result(t, CLI_TEST_FAIL, reason, ms);
    } else if (len == 0) {
        snprintf(reason, sizeof reason, "test process exited with status %d without a result",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
        set_result(t, CLI_TEST_FAIL, reason, ms);
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
        /* e.g. a leak found by LeakSanitizer after the comparisons passed */
        snprintf(reason, sizeof reason, "test process exited with status %d (sanitizer report on stderr?)%s%s",
                 WEXITSTATUS(wstatus), msg[0] == 'F' ? "; " : "", msg[0] == 'F' ? msg + 1 : "");
        set_result(t, CLI_TEST_FAIL, reason, ms);
    } else {
        set_result(t, msg[0] == 'P' ? CLI_TEST_PASS : msg[0] == 'S' ? CLI_TEST_SKIP : CLI_TEST_FAIL, msg + 1, ms);
    }
}

static cort_status *run_forked(const test_cfg *cfg, test_list *l) {
    job *jobs = cort_calloc((size_t)cfg->jobs, sizeof *jobs);
    if (!jobs) return cort_error_oom();
    cort_status *st = NULL;
    size_t next = 0, printed = 0;
    int active = 0;
    while (printed < l->n) {
        while (!st && active < cfg->jobs && next < l->n) {
            int slot = 0;
            while (jobs[slot].pid) slot++;
            if ((st = start_job(cfg, l, next, jobs, slot))) break;
            next++;
            active++;
        }
        if (active == 0) break;   /* only after a fork failure */
        int ws = 0;
        pid_t pid = waitpid(-1, &ws, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            if (!st) st = cort_error(CORT_ERROR_RUNTIME, "waitpid: %s", strerror(errno));
            break;
        }
        for (int s = 0; s < cfg->jobs; s++) {
            if (jobs[s].pid != pid) continue;
            finish_job(cfg, l, &jobs[s], ws);
            jobs[s].pid = 0;
            active--;
            break;
        }
        while (printed < l->n && l->items[printed].done) print_result(cfg, &l->items[printed++]);
        if (printed < l->n) cli_progress("[%zu/%zu] %s", printed, l->n, l->items[printed].id);
    }
    cort_free(jobs);
    return st;
}

static cort_status *run_inline(const test_cfg *cfg, test_list *l) {
    char reason[4096];
    for (size_t i = 0; i < l->n; i++) {
        cli_progress("[%zu/%zu] %s", i, l->n, l->items[i].id);
        double t0 = cli_now_ms();
        reason[0] = 0;
        int r = cli_backend_test_run(l->items[i].dir, &cfg->opts, reason, sizeof reason);
        set_result(&l->items[i], r, reason, cli_now_ms() - t0);
        print_result(cfg, &l->items[i]);
    }
    return NULL;
}

static int parse_double(const char *s, double *out) {
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0)) return 0;
    *out = v;
    return 1;
}

int cli_cmd_test(int argc, char **argv) {
    test_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cli_session_args_init(&cfg.opts.sargs);
    cfg.opts.concurrency = 2;
    cfg.opts.tol = (cli_tolerance){ CLI_DEFAULT_RTOL, CLI_DEFAULT_ATOL };
    cfg.fork_mode = 1;
    cfg.jobs = 1;
    cfg.timeout_s = 120;
    const char *fail_list = NULL, *v = NULL;
    char **dirs = cort_calloc((size_t)argc, sizeof *dirs);
    int n_dirs = 0, rc = CLI_EXIT_OK;
    long long n;
    test_list l = {0};
    if (!dirs) return cli_fail("test", cort_error_oom());

    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) { fputs(test_usage, stdout); goto out; }
        if ((r = cli_session_arg("test", argc, argv, &i, &cfg.opts.sargs)) != 0) {
            if (r < 0) goto usage;
            continue;
        }
        if ((r = cli_opt(argc, argv, &i, "--concurrency", &v)) != 0) {
            if (r < 0 || !cli_parse_int("test", "--concurrency", v, 1, 64, &n)) goto usage;
            cfg.opts.concurrency = (int)n;
        } else if ((r = cli_opt(argc, argv, &i, "--list-failures", &v)) != 0) {
            if (r < 0) goto usage;
            fail_list = v;
        } else if ((r = cli_opt(argc, argv, &i, "--jobs", &v)) != 0 || (r = cli_opt(argc, argv, &i, "-j", &v)) != 0) {
            if (r < 0 || !cli_parse_int("test", "--jobs", v, 1, 256, &n)) goto usage;
            cfg.jobs = (int)n;
        } else if (strncmp(argv[i], "-j", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9') {
            if (!cli_parse_int("test", "-j", argv[i] + 2, 1, 256, &n)) goto usage;
            cfg.jobs = (int)n;
        } else if ((r = cli_opt(argc, argv, &i, "--timeout", &v)) != 0) {
            if (r < 0 || !cli_parse_int("test", "--timeout", v, 0, 86400, &n)) goto usage;
            cfg.timeout_s = (long)n;
        } else if ((r = cli_opt(argc, argv, &i, "--rtol", &v)) != 0) {
            if (r < 0) goto usage;
            if (!parse_double(v, &cfg.opts.tol.rtol)) { cli_usage_error("test", "bad --rtol '%s'", v); goto usage; }
        } else if ((r = cli_opt(argc, argv, &i, "--atol", &v)) != 0) {
            if (r < 0) goto usage;
            if (!parse_double(v, &cfg.opts.tol.atol)) { cli_usage_error("test", "bad --atol '%s'", v); goto usage; }
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            cfg.quiet = 1;
        } else if (strcmp(argv[i], "--steady-allocs") == 0) {
            cfg.opts.steady_allocs = 1;
        } else if (strcmp(argv[i], "--no-fork") == 0) {
            cfg.fork_mode = 0;
        } else if (strcmp(argv[i], "--times") == 0) {
            cfg.times = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_usage_error("test", "unknown option '%s'", argv[i]);
            goto usage;
        } else {
            dirs[n_dirs++] = argv[i];
        }
    }
    if (n_dirs == 0) { cli_usage_error("test", "missing DIR"); goto usage; }

    for (int i = 0; i < n_dirs; i++) {
        cort_status *st = discover(&l, dirs[i]);
        if (st) {
            if (cort_status_code(st) == CORT_ERROR_OUT_OF_MEMORY) { rc = cli_fail("test", st); goto out; }
            fprintf(stderr, "cort test: %s\n", cort_status_message(st));
            cort_status_free(st);
            rc = CLI_EXIT_FAIL;
        }
    }
    /* the child processes must not inherit a half-written stdout buffer */
    fflush(stdout);
    cort_status *st = cfg.fork_mode ? run_forked(&cfg, &l) : run_inline(&cfg, &l);
    cli_progress_clear();
    if (st) { rc = cli_fail("test", st); goto out; }

    size_t passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < l.n; i++) {
        passed += l.items[i].status == CLI_TEST_PASS;
        failed += l.items[i].status == CLI_TEST_FAIL;
        skipped += l.items[i].status == CLI_TEST_SKIP;
    }
    if (fail_list) {
        FILE *f = fopen(fail_list, "w");
        if (!f) {
            fprintf(stderr, "cort test: cannot write '%s': %s\n", fail_list, strerror(errno));
            rc = CLI_EXIT_FAIL;
        } else {
            for (size_t i = 0; i < l.n; i++)
                if (l.items[i].status == CLI_TEST_FAIL) fprintf(f, "%s\n", l.items[i].id);
            if (fclose(f) != 0) rc = CLI_EXIT_FAIL;
        }
    }
    if (skipped) printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    else printf("%zu passed, %zu failed\n", passed, failed);
    if (failed) rc = CLI_EXIT_FAIL;
out:
    list_free(&l);
    cort_free(dirs);
    return rc;
usage:
    list_free(&l);
    cort_free(dirs);
    return CLI_EXIT_USAGE;
}
