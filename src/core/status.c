#include "status.h"
#include "alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cort_status oom_status = { CORT_ERROR_OUT_OF_MEMORY, 1, (char *)"out of memory" };

cort_status *cort_error_oom(void) { return &oom_status; }

cort_status *cort_error_v(cort_code code, const char *fmt, va_list ap) {
    if (code == CORT_ERROR_OUT_OF_MEMORY && !strcmp(fmt, "out of memory")) return &oom_status;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    cort_status *st = cort_malloc(sizeof *st + (size_t)n + 1);
    if (!st) return &oom_status;
    st->code = code;
    st->is_static = 0;
    st->message = (char *)(st + 1);
    vsnprintf(st->message, (size_t)n + 1, fmt, ap);
    return st;
}

cort_status *cort_error(cort_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cort_status *st = cort_error_v(code, fmt, ap);
    va_end(ap);
    return st;
}

cort_status *cort_error_wrap(cort_status *st, const char *fmt, ...) {
    if (!st || st->is_static) return st;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    cort_status *n = cort_error(st->code, "%s%s", prefix, st->message);
    if (n->is_static) return st; /* OOM while wrapping: keep the original */
    cort_status_free(st);
    return n;
}

cort_code cort_status_code(const cort_status *status) { return status ? status->code : CORT_OK; }
const char *cort_status_message(const cort_status *status) { return status ? status->message : ""; }
void cort_status_free(cort_status *status) {
    if (status && !status->is_static) cort_free(status);
}

const char *cort_code_name(cort_code code) {
    switch (code) {
    case CORT_OK: return "OK";
    case CORT_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case CORT_ERROR_INVALID_MODEL: return "INVALID_MODEL";
    case CORT_ERROR_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case CORT_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case CORT_ERROR_IO: return "IO";
    case CORT_ERROR_CANCELLED: return "CANCELLED";
    case CORT_ERROR_RUNTIME: return "RUNTIME";
    }
    return "UNKNOWN";
}

const char *cort_version(void) { return "0.1.0"; }

cort_status *cort_status_create(cort_code code, const char *message) {
    if (code <= CORT_OK || code > CORT_ERROR_RUNTIME) code = CORT_ERROR_RUNTIME;
    return cort_error(code, "%s", message ? message : "");
}
