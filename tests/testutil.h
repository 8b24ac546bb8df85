/* Minimal test harness: CHECK records failures without stopping; main returns nonzero if any failed.
 * Each test binary ends with the line "N passed, M failed". */
#ifndef CORT_TESTUTIL_H
#define CORT_TESTUTIL_H
#include <stdint.h>
#include <stdio.h>
#include <spawn.h>
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
int tu_spawn_self(pid_t *pid, const posix_spawn_file_actions_t *fa, char *const args[], char *const envp[]);
int tu_fresh_process_trials(const char *name, char *argv0, int trials, int expect_failures);
/* ---- comparing floats with a reference ----
 * A kernel and its reference (or two ISA levels, or a fused and an unfused graph) may sum in a
 * different order. The rounding error of a sum is then of the order of eps times the magnitude of
 * its terms, not of its result: an output near zero in a tensor whose values are ~500 may differ
 * by 1e-4 in absolute terms, which a purely relative check reports as a 100% error. So the absolute
 * part of the tolerance scales with the output's magnitude:
 *   |got[i] - want[i]| <= rtol * |want[i]| + atol_eff,   atol_eff = atol_abs + atol_rel * max_j |want[j]|
 * NaN matches NaN only; an infinity matches the same infinity only. */
typedef struct tu_tol { double rtol, atol_rel, atol_abs; } tu_tol;
#define TU_TOL(rtol, atol_rel, atol_abs) ((tu_tol){ (rtol), (atol_rel), (atol_abs) })
/* The worst element's error in units of its tolerance: <= 1 means all n elements are close; INFINITY
 * for a NaN or infinity mismatch. *at (if not NULL) receives that element's index. */
double tu_close_err(const float *got, const float *want, size_t n, tu_tol tol, size_t *at);
/* A check: every element close; on failure prints the printf-formatted context, the worst element
 * (index, got, want, allowed difference) and the output's magnitude. Returns whether it passed. */
#define CHECK_CLOSE(got, want, n, tol, ...) tu_check_close((got), (want), (n), (tol), __FILE__, __LINE__, __VA_ARGS__)
int tu_check_close(const float *got, const float *want, size_t n, tu_tol tol, const char *file, int line,
                   const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* For exactness claims (a copy, a max, a result that must not depend on the ISA level): the largest
 * distance in units in the last place between a[i] and b[i] (0: bitwise equal up to the sign of
 * zero; NaN vs NaN is 0, NaN vs a number UINT32_MAX). *at (if not NULL) receives the index. */
uint32_t tu_max_ulp(const float *a, const float *b, size_t n, size_t *at);
/* Reads a whole file into a malloc'd buffer (test-side helper; NULL on error). */
void *tu_read_file(const char *path, size_t *len);

/* ---- a minimal protobuf writer, for tests that build ONNX models byte by byte ----
 * pb_key writes a field key (wire type 0 varint, 2 length-delimited, 5 fixed32); pb_sub appends a
 * finished sub-message as field `field` and resets it. The buffer grows on demand (exits on OOM). */
typedef struct pb { unsigned char *p; size_t n, cap; } pb;
void pb_byte(pb *b, unsigned char c);
void pb_varint(pb *b, uint64_t v);
void pb_key(pb *b, int field, int wt);
void pb_int(pb *b, int field, int64_t v);
void pb_f32(pb *b, int field, float f);
void pb_bytes(pb *b, int field, const void *d, size_t n);
void pb_str(pb *b, int field, const char *s);
void pb_sub(pb *b, int field, pb *sub);
#endif
