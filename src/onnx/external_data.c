/* TensorProto external data: bytes in a file next to the model (data_location = EXTERNAL).
 * A model may name only a regular file inside its own folder. The rules, each with its own message:
 *  1. the location is relative, without a ".." component or a NUL byte;
 *  2. its real path (symbolic links resolved) lies inside the real path of the model's folder, so a
 *     link inside the folder pointing out of it (link.bin -> /etc/passwd) is refused; links that
 *     stay inside are fine;
 *  3. the file opened (O_NOFOLLOW on the resolved path, then checked again through /proc/self/fd
 *     so a path swapped between the check and the open is caught) is a regular file with a single
 *     hard link: a second link may be a hard link made to a file outside the folder, which no
 *     path check can tell apart;
 *  4. offset + the tensor's byte size lie within the file (and length, when given, equals that).
 * The bytes are read (pread) into an owned tensor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "load.h"
#include "../core/alloc.h"
#include "../core/status.h"

/* Parses a non-negative decimal; 0 on success. */
static int parse_u64(const uint8_t *s, size_t n, uint64_t *out) {
    if (!n || n > 20) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = s[i] - '0';
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Rejects absolute paths, ".." components, empty names and embedded NULs. */
static const char *bad_location(const uint8_t *s, size_t n) {
    if (!n) return "is empty";
    if (memchr(s, 0, n)) return "contains a NUL byte";
    if (s[0] == '/' || s[0] == '\\') return "is an absolute path";
    if (n >= 2 && s[1] == ':') return "is an absolute path";
    size_t start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '/' || s[i] == '\\') {
            if (i - start == 2 && s[start] == '.' && s[start + 1] == '.') return "contains a '..' component";
            start = i + 1;
        }
    return NULL;
}

cort_status *cort_load_external(cort_load *L, const cort_pb_path *path, const cort_pb *tensor_msg, const char *tname,
                                cort_type type, const int64_t *dims, size_t rank, size_t bytes, cort_value **out) {
    const uint8_t *loc = NULL;
    size_t loc_len = 0;
    uint64_t offset = 0, length = 0;
    int has_length = 0;
    cort_pb r = *tensor_msg;
    cort_pb_field f;
    int got;
    for (;;) {
        CORT_TRY(cort_pb_next(&r, path, &f, &got));
        if (!got) break;
        if (f.num != 13) continue;
        CORT_TRY(cort_pb_expect(path, &f, CORT_PB_LEN));
        cort_pb e;
        cort_pb_sub(&e, &r, &f);
        cort_pb_field ef;
        const uint8_t *k = NULL, *v = NULL;
        size_t klen = 0, vlen = 0;
        for (;;) {
            CORT_TRY(cort_pb_next(&e, path, &ef, &got));
            if (!got) break;
            if (ef.num == 1 || ef.num == 2) {
                CORT_TRY(cort_pb_expect(path, &ef, CORT_PB_LEN));
                if (ef.num == 1) { k = e.buf + ef.data; klen = ef.len; }
                else { v = e.buf + ef.data; vlen = ef.len; }
            }
        }
        if (!k) continue;
        if (klen == 8 && !memcmp(k, "location", 8)) { loc = v ? v : (const uint8_t *)""; loc_len = vlen; }
        else if (klen == 6 && !memcmp(k, "offset", 6)) {
            if (parse_u64(v, vlen, &offset))
                return cort_pb_error(path, 13, f.off, "tensor '%s': external data offset '%.*s' is not a number", tname,
                                     (int)(vlen > 40 ? 40 : vlen), v ? (const char *)v : "");
        } else if (klen == 6 && !memcmp(k, "length", 6)) {
            if (parse_u64(v, vlen, &length))
                return cort_pb_error(path, 13, f.off, "tensor '%s': external data length '%.*s' is not a number", tname,
                                     (int)(vlen > 40 ? 40 : vlen), v ? (const char *)v : "");
            has_length = 1;
        }
    }
    if (!loc) return cort_pb_error(path, 13, tensor_msg->pos, "tensor '%s': external data has no location", tname);
    const char *why = bad_location(loc, loc_len);
    if (why)
        return cort_pb_error(path, 13, tensor_msg->pos, "tensor '%s': external data location '%.*s' %s", tname,
                             (int)(loc_len > 200 ? 200 : loc_len), (const char *)loc, why);
    if (has_length && length != bytes)
        return cort_pb_error(path, 13, tensor_msg->pos, "tensor '%s': external data length %llu, the shape needs %zu bytes",
                             tname, (unsigned long long)length, bytes);
    const cort_load_extras *x = L->extras;
    for (size_t i = 0; x && i < x->n_overridden; i++)
        if (!strcmp(x->overridden[i], tname)) return cort_tensor_alloc_zero(type, dims, rank, out);
    for (size_t i = 0; x && i < x->n_ext; i++) {
        const cort_ext_data *e = &x->ext[i];
        if (strlen(e->name) != loc_len || memcmp(e->name, loc, loc_len)) continue;
        if (offset > e->len || bytes > e->len - offset)
            return cort_pb_error(path, 13, tensor_msg->pos,
                                 "tensor '%s': external data '%s' given in memory has %zu bytes, offset %llu + %zu bytes "
                                 "exceeds it", tname, e->name, e->len, (unsigned long long)offset, bytes);
        cort_value *t = NULL;
        CORT_TRY(cort_tensor_alloc(type, dims, rank, &t));
        if (bytes) memcpy(t->data, (const uint8_t *)e->bytes + offset, bytes);
        *out = t;
        return NULL;
    }
    if (!L->dir)
        return cort_pb_error(path, 13, tensor_msg->pos,
                             "tensor '%s': external data '%.*s' needs a model loaded from a file path", tname,
                             (int)(loc_len > 200 ? 200 : loc_len), (const char *)loc);
    size_t dlen = strlen(L->dir);
    char *full = cort_malloc(dlen + 1 + loc_len + 1 + 2 * PATH_MAX);
    if (!full) return cort_error_oom();
    char *rdir = full + dlen + 1 + loc_len + 1, *rfile = rdir + PATH_MAX;
    memcpy(full, L->dir, dlen);
    full[dlen] = '/';
    memcpy(full + dlen + 1, loc, loc_len);
    full[dlen + 1 + loc_len] = 0;

    cort_status *st = NULL;
    int fd = -1;
    char eb[128];
    if (!realpath(L->dir, rdir)) {
        st = cort_error(CORT_ERROR_IO, "tensor '%s': cannot resolve the model's folder '%s': %s", tname, L->dir,
                        strerror_r(errno, eb, sizeof eb));
        goto done;
    }
    if (!realpath(full, rfile)) {
        st = cort_error(CORT_ERROR_IO, "tensor '%s': cannot open external data file '%s': %s", tname, full,
                        strerror_r(errno, eb, sizeof eb));
        goto done;
    }
    size_t rdlen = strlen(rdir);
    int inside = !strncmp(rfile, rdir, rdlen) && (rfile[rdlen] == '/' || (rdlen == 1 && rdir[0] == '/'));
    if (!inside) {
        st = cort_error(CORT_ERROR_INVALID_MODEL,
                        "tensor '%s': external data location '%s' resolves to '%s', outside the model's folder '%s' "
                        "(a symbolic link leaving the folder is refused)", tname, full + dlen + 1, rfile, rdir);
        goto done;
    }
    fd = open(rfile, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) {
        st = cort_error(errno == ELOOP ? CORT_ERROR_INVALID_MODEL : CORT_ERROR_IO,
                        "tensor '%s': cannot open external data file '%s': %s", tname, rfile,
                        strerror_r(errno, eb, sizeof eb));
        goto done;
    }
    {
        char proc[64], now[PATH_MAX];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        ssize_t nl = readlink(proc, now, sizeof now - 1);
        if (nl > 0) {   /* without /proc (some sandboxes) the real-path check above is all there is */
            now[nl] = 0;
            if (strncmp(now, rdir, rdlen) || (now[rdlen] != '/' && !(rdlen == 1 && rdir[0] == '/'))) {
                st = cort_error(CORT_ERROR_INVALID_MODEL,
                                "tensor '%s': external data file '%s' was replaced by '%s', outside the model's folder "
                                "'%s', while being opened", tname, rfile, now, rdir);
                goto done;
            }
        }
    }
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        st = cort_error(CORT_ERROR_INVALID_MODEL, "tensor '%s': external data '%s' is not a regular file", tname, rfile);
        goto done;
    }
    if (sb.st_nlink > 1) {
        st = cort_error(CORT_ERROR_INVALID_MODEL,
                        "tensor '%s': external data '%s' has %llu hard links; a hard link may lead outside the model's "
                        "folder, so only files with one link are read", tname, rfile, (unsigned long long)sb.st_nlink);
        goto done;
    }
    if (offset > (uint64_t)sb.st_size || bytes > (uint64_t)sb.st_size - offset) {
        st = cort_pb_error(path, 13, tensor_msg->pos,
                           "tensor '%s': external data '%s' has %lld bytes, offset %llu + %zu bytes exceeds it", tname,
                           full, (long long)sb.st_size, (unsigned long long)offset, bytes);
        goto done;
    }
    cort_value *t = NULL;
    if ((st = cort_tensor_alloc(type, dims, rank, &t))) goto done;
    uint8_t *dst = t->data;
    size_t done_bytes = 0;
    while (done_bytes < bytes) {
        size_t chunk = bytes - done_bytes > ((size_t)1 << 30) ? ((size_t)1 << 30) : bytes - done_bytes;
        ssize_t n = pread(fd, dst + done_bytes, chunk, (off_t)(offset + done_bytes));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            st = cort_error(CORT_ERROR_IO, "tensor '%s': reading external data '%s' failed at byte %llu", tname, full,
                            (unsigned long long)(offset + done_bytes));
            cort_value_release(t);
            goto done;
        }
        done_bytes += (size_t)n;
    }
    *out = t;
done:
    if (fd >= 0) close(fd);
    cort_free(full);
    return st;
}
