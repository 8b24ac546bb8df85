/* Command-line argument helpers and the session options shared by run/test/bench/demo. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "cort %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'cort %s --help')\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_fail(const char *cmd, cort_status *st) {
    fprintf(stderr, "cort %s: %s: %s\n", cmd, cort_code_name(cort_status_code(st)), cort_status_message(st));
    cort_status_free(st);
    return CLI_EXIT_FAIL;
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '=') { *value = arg + n + 1; return 1; }
    if (arg[n] != '\0') return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "cort: option %s needs a value\n", name);
        return -1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

int cli_parse_int(const char *cmd, const char *opt, const char *s, long long min, long long max, long long *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        cli_usage_error(cmd, "bad value '%s' for %s (expected an integer in [%lld, %lld])", s, opt, min, max);
        return 0;
    }
    *out = v;
    return 1;
}

void cli_session_args_init(cli_session_args *a) {
    memset(a, 0, sizeof *a);
    a->threads = -1;
    a->optimization = -1;
    a->max_tensor_bytes = -1;
    a->fold_budget = -1;
}

int cli_session_arg(const char *cmd, int argc, char **argv, int *i, cli_session_args *a) {
    const char *v = NULL;
    long long n;
    int r;
    if ((r = cli_opt(argc, argv, i, "--threads", &v)) != 0) {
        if (r < 0 || !cli_parse_int(cmd, "--threads", v, 0, 1024, &n)) return -1;
        a->threads = (int)n;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--optimization", &v)) != 0) {
        if (r < 0 || !cli_parse_int(cmd, "--optimization", v, 0, 2, &n)) return -1;
        a->optimization = (int)n;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--max-tensor-bytes", &v)) != 0) {
        if (r < 0 || !cli_parse_int(cmd, "--max-tensor-bytes", v, 0, INT64_MAX, &n)) return -1;
        a->max_tensor_bytes = n;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--fold-budget", &v)) != 0) {
        if (r < 0 || !cli_parse_int(cmd, "--fold-budget", v, 0, INT64_MAX, &n)) return -1;
        a->fold_budget = n;
        return 1;
    }
    if (!strcmp(argv[*i], "--no-spin")) {
        a->no_spin = 1;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--custom-op-library", &v)) != 0) {
        if (r < 0) return -1;
        if (a->n_custom_op_libraries >= sizeof a->custom_op_libraries / sizeof a->custom_op_libraries[0]) {
            cli_usage_error(cmd, "too many --custom-op-library options");
            return -1;
        }
        a->custom_op_libraries[a->n_custom_op_libraries++] = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--profile-json", &v)) != 0) {
        if (r < 0) return -1;
        a->profile_json = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--save-optimized", &v)) != 0) {
        if (r < 0) return -1;
        a->save_optimized = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--provider", &v)) != 0) {
        if (r < 0) return -1;
        if (a->n_providers >= sizeof a->providers / sizeof a->providers[0]) {
            cli_usage_error(cmd, "too many --provider options");
            return -1;
        }
        a->providers[a->n_providers++] = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--dim", &v)) != 0) {
        if (r < 0) return -1;
        const char *eq = strrchr(v, '=');
        if (!eq || eq == v) {
            cli_usage_error(cmd, "--dim expects NAME=VALUE, got '%s'", v);
            return -1;
        }
        if (a->n_dims >= sizeof a->dims / sizeof a->dims[0]) {
            cli_usage_error(cmd, "too many --dim options");
            return -1;
        }
        if (!cli_parse_int(cmd, "--dim", eq + 1, 0, INT64_MAX, &n)) return -1;
        /* the name stays inside argv; store it NUL-terminated by splitting the argument in place */
        ((char *)eq)[0] = '\0';
        a->dims[a->n_dims].name = v;
        a->dims[a->n_dims].value = n;
        a->n_dims++;
        return 1;
    }
    return 0;
}

int64_t cli_dim_value(const cli_session_args *a, const char *name, int64_t fallback) {
    if (!name) return fallback;
    for (size_t i = a->n_dims; i-- > 0;)
        if (strcmp(a->dims[i].name, name) == 0) return a->dims[i].value;
    return fallback;
}

cort_status *cli_session_options(const cli_session_args *a, cort_session_options **out) {
    cort_session_options *o = NULL;
    cort_status *st = cort_session_options_create(&o);
    if (st) return st;
    if (a->threads >= 0 && (st = cort_session_options_set_threads(o, a->threads))) goto error;
    if (a->optimization >= 0 && (st = cort_session_options_set_optimization_level(o, a->optimization))) goto error;
    if (a->max_tensor_bytes >= 0 && (st = cort_session_options_set_max_tensor_bytes(o, (uint64_t)a->max_tensor_bytes)))
        goto error;
    if (a->fold_budget >= 0 && (st = cort_session_options_set_fold_budget(o, (uint64_t)a->fold_budget))) goto error;
    if (a->no_spin && (st = cort_session_options_set_spinning(o, 0))) goto error;
    for (size_t i = 0; i < a->n_custom_op_libraries; i++)
        if ((st = cort_session_options_load_custom_op_library(o, a->custom_op_libraries[i]))) goto error;
    for (size_t i = 0; i < a->n_providers; i++)
        if ((st = cort_session_options_append_provider(o, a->providers[i], NULL, NULL, 0))) goto error;
    for (size_t i = 0; i < a->n_dims; i++)
        if ((st = cort_session_options_set_dim(o, a->dims[i].name, a->dims[i].value))) goto error;
    /* the library names the file PREFIX_date.json; cli_session_finish renames it to what was asked */
    if (a->profile_json && (st = cort_session_options_set_profile_file(o, 1, a->profile_json))) goto error;
    if (a->save_optimized && (st = cort_session_options_set_optimized_model_path(o, a->save_optimized))) goto error;
    *out = o;
    return NULL;
error:
    cort_session_options_free(o);
    return st;
}

cort_status *cli_session_finish(const cli_session_args *a, cort_session *s) {
    if (!a->profile_json || !s) return NULL;
    const char *file = NULL;
    cort_status *st = cort_session_end_profiling(s, &file);
    if (st) return st;
    if (rename(file, a->profile_json)) {
        char msg[1024];
        snprintf(msg, sizeof msg, "--profile-json: cannot move '%s' to '%s': %s", file, a->profile_json, strerror(errno));
        return cort_status_create(CORT_ERROR_IO, msg);
    }
    fprintf(stderr, "profile: %s\n", a->profile_json);
    return NULL;
}
