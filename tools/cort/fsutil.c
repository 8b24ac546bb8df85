/* File helpers: whole-file read/write, existence checks, path joining, mkdir -p. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "core/alloc.h"
#include "core/status.h"

cort_status *cli_read_file(const char *path, void **out, size_t *out_len) {
    cort_status *st = NULL;
    unsigned char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return cort_error(CORT_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = cort_error(CORT_ERROR_IO, "'%s' is not a regular file", path);
        goto error;
    }
    size_t len = (size_t)sb.st_size;
    buf = cort_malloc(len + 1);   /* +1: a terminating NUL lets text readers use string functions */
    if (!buf) { st = cort_error_oom(); goto error; }
    if (len && fread(buf, 1, len, f) != len) {
        st = cort_error(CORT_ERROR_IO, "cannot read '%s': %s", path, ferror(f) ? strerror(errno) : "short read");
        goto error;
    }
    buf[len] = 0;
    fclose(f);
    *out = buf;
    *out_len = len;
    return NULL;
error:
    cort_free(buf);
    fclose(f);
    return st;
}

cort_status *cli_write_file(const char *path, const void *bytes, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return cort_error(CORT_ERROR_IO, "cannot create '%s': %s", path, strerror(errno));
    int ok = (len == 0 || fwrite(bytes, 1, len, f) == len);
    if (fclose(f) != 0) ok = 0;
    if (!ok) return cort_error(CORT_ERROR_IO, "cannot write '%s': %s", path, strerror(errno));
    return NULL;
}

int cli_file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int cli_dir_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

char *cli_path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    while (a > 1 && dir[a - 1] == '/') a--;
    char *p = cort_malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

int cli_has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

cort_status *cli_mkdirs(const char *path) {
    if (cli_dir_exists(path)) return NULL;
    char *p = cort_strdup(path);
    if (!p) return cort_error_oom();
    for (char *c = p + 1; ; c++) {
        if (*c == '/' || *c == '\0') {
            char saved = *c;
            *c = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                cort_status *st = cort_error(CORT_ERROR_IO, "cannot create directory '%s': %s", p, strerror(errno));
                cort_free(p);
                return st;
            }
            *c = saved;
            if (saved == '\0') break;
        }
    }
    cort_free(p);
    if (!cli_dir_exists(path)) return cort_error(CORT_ERROR_IO, "'%s' is not a directory", path);
    return NULL;
}
