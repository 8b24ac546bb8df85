/* Internal status helpers. A status is { code, message }; the OOM status is static. */
#ifndef CORT_CORE_STATUS_H
#define CORT_CORE_STATUS_H
#include "cort.h"
#include <stdarg.h>

struct cort_status {
    cort_code code;
    int       is_static;
    char     *message;
};

/* A new status with a printf-formatted message. Never returns NULL: on allocation failure it
 * returns the static out-of-memory status. */
cort_status *cort_error(cort_code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cort_status *cort_error_v(cort_code code, const char *fmt, va_list ap);
/* The static out-of-memory status (no allocation). */
cort_status *cort_error_oom(void);
/* Prefixes an existing status' message with a formatted context ("node 'x' (Conv): ..."),
 * returning the (possibly new) status. st must be non-NULL. Keeps the code. */
cort_status *cort_error_wrap(cort_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CORT_TRY(expr) do { cort_status *cort_try_st_ = (expr); if (cort_try_st_) return cort_try_st_; } while (0)
#endif
