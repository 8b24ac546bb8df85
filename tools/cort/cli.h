/* Shared helpers of the `cort` command-line tool: argument parsing, session options, files,
 * timing and progress output. Each command lives in its own cmd_*.c file. */
#ifndef CORT_CLI_H
#define CORT_CLI_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "cort.h"

/* Exit codes of every command. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* Commands: argv[0] is the command name. Return a CLI_EXIT_* code. */
int cli_cmd_info(int argc, char **argv);
int cli_cmd_run(int argc, char **argv);
int cli_cmd_test(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_demo(int argc, char **argv);
int cli_cmd_quantize(int argc, char **argv);

/* ---- argument parsing ---- */
/* Matches option `name` at argv[*i], in the forms "--name VALUE" and "--name=VALUE". On a match
 * returns 1 and sets *value (advancing *i past a separate value); returns -1 (after printing a usage
 * message) when the value is missing, 0 when argv[*i] is another argument. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/* Strict integer parse within [min, max]; prints "cort CMD: bad value for OPT" and returns 0 on error. */
int cli_parse_int(const char *cmd, const char *opt, const char *s, long long min, long long max, long long *out);
/* Prints "cort CMD: MESSAGE" plus a hint to use --help on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "cort CMD: MESSAGE" for a status on stderr, frees it, returns CLI_EXIT_FAIL. */
int cli_fail(const char *cmd, cort_status *st);
int cli_is_help(const char *arg);

/* Options shared by every command that creates a session. */
typedef struct cli_dim { const char *name; int64_t value; } cli_dim;
typedef struct cli_session_args {
    int threads;                 /* -1: library default */
    int optimization;            /* -1: library default */
    const char *providers[8]; size_t n_providers;
    cli_dim dims[32]; size_t n_dims;
    long long max_tensor_bytes;  /* -1: library default (--max-tensor-bytes) */
    long long fold_budget;       /* -1: library default (--fold-budget) */
    int no_spin;                 /* --no-spin */
    const char *custom_op_libraries[8]; size_t n_custom_op_libraries;   /* --custom-op-library PATH */
    const char *profile_json;    /* --profile-json FILE: ONNX Runtime's chrome-trace profile */
    const char *save_optimized;  /* --save-optimized FILE: the graph after cort's passes, as ONNX */
} cli_session_args;
void cli_session_args_init(cli_session_args *a);
/* Consumes --threads, --provider, --optimization, --dim, --max-tensor-bytes, --fold-budget, --no-spin
 * --custom-op-library, --profile-json and --save-optimized at argv[*i]: 1 consumed, 0 not one of
 * them, -1 usage error (message printed). */
int cli_session_arg(const char *cmd, int argc, char **argv, int *i, cli_session_args *a);
cort_status *cli_session_options(const cli_session_args *a, cort_session_options **out);
/* After the runs: writes the --profile-json file (if asked) and prints where it went. */
cort_status *cli_session_finish(const cli_session_args *a, cort_session *s);
/* Value of --dim NAME, or `fallback` when not given. */
int64_t cli_dim_value(const cli_session_args *a, const char *name, int64_t fallback);

/* ---- files ---- */
/* Reads a whole file into memory allocated with cort_malloc (caller frees with cort_free). */
cort_status *cli_read_file(const char *path, void **out, size_t *out_len);
cort_status *cli_write_file(const char *path, const void *bytes, size_t len);
int  cli_file_exists(const char *path);
int  cli_dir_exists(const char *path);
/* "dir/name" into a new cort_malloc'd string (NULL on OOM). */
char *cli_path_join(const char *dir, const char *name);
int  cli_has_suffix(const char *s, const char *suffix);
/* Creates a directory (and its parents) if missing. */
cort_status *cli_mkdirs(const char *path);

/* ---- time, memory, progress ---- */
double cli_now_ms(void);
long   cli_peak_rss_kb(void);
int    cli_cmp_double(const void *a, const void *b);
/* q-quantile (0..1) of n sorted values, nearest rank. */
double cli_quantile(const double *sorted, size_t n, double q);
/* Progress line on stderr, shown only when stderr is a terminal. */
int  cli_progress_enabled(void);
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_clear(void);

/* Session input declared type, as reported by the session (tensor dims up to 16). */
typedef struct cli_io_type {
    cort_value_type t;
    int64_t dims[16];
} cli_io_type;
#endif
