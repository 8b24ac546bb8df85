/* Minimal test harness: CHECK records failures without stopping; main returns nonzero if any failed.
 * Each test binary ends with the line "N passed, M failed". */
#ifndef CORT_TESTUTIL_H
#define CORT_TESTUTIL_H
#include <stdio.h>
#include <sys/types.h>
#include "cort.h"

extern int tu_passed, tu_failed;
#define CHECK(cond) do { if (cond) tu_passed++; else { tu_failed++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { if (cond) tu_passed++; else { tu_failed++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)
/* Checks that st is NULL (success); frees it otherwise and prints its message. */
#define CHECK_OK(st) tu_check_ok((st), __FILE__, __LINE__, #st)
/* Checks that st has the given code; frees it. Returns the message check helper. */
#define CHECK_CODE(st, code) tu_check_code((st), (code), __FILE__, __LINE__, #st, NULL)
/* Also checks that the message contains `needle`. */
#define CHECK_ERR(st, code, needle) tu_check_code((st), (code), __FILE__, __LINE__, #st, (needle))
int tu_check_ok(cort_status *st, const char *file, int line, const char *expr);
int tu_check_code(cort_status *st, cort_code code, const char *file, int line, const char *expr, const char *needle);
/* Prints "N passed, M failed" and returns the exit code. */
int tu_finish(void);
/* Fresh-process trials: re-executes this binary (/proc/self/exe) `trials` times with the single argument
 * "--trial", counts the trials that failed (nonzero exit or a crash), prints "NAME trials: N, failed: F",
 * and records a check: with expect_failures (a negative control) at least half must fail, else none.
 * Returns 0, or 2 if a trial could not be started. */
/* Starts this test binary again (args[0] is ignored; args[1..] are passed) with envp; honours
 * CORT_TEST_EMULATOR (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu"). 0 on success. */
int tu_spawn_self(pid_t *pid, char *const args[], char *const envp[]);
int tu_fresh_process_trials(const char *name, char *argv0, int trials, int expect_failures);
/* Reads a whole file into a malloc'd buffer (test-side helper; NULL on error). */
void *tu_read_file(const char *path, size_t *len);
#endif
