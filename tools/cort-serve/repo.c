/* The model repository: Triton's layout (REPO/<model>/<version>/model.onnx, an optional
 * REPO/<model>/config of `key = value` lines) or models named on the command line. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "serve.h"

static char *dup_str(const char *s) {
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int numeric(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

static int version_cmp(const char *a, const char *b) {
    if (numeric(a) && numeric(b)) {
        const size_t la = strlen(a), lb = strlen(b);
        if (la != lb) return la < lb ? -1 : 1;
    }
    return strcmp(a, b);
}

static int model_cmp(const void *pa, const void *pb) {
    const serve_model *a = *(serve_model *const *)pa, *b = *(serve_model *const *)pb;
    const int c = strcmp(a->name, b->name);
    return c ? c : version_cmp(a->version, b->version);
}

static void io_free(serve_io *io, size_t n) {
    if (!io) return;
    for (size_t i = 0; i < n; i++) free(io[i].name);
    free(io);
}

static void model_free(serve_model *m) {
    if (!m) return;
    serve_batcher_stop(m);
    cort_session_release(m->session);
    io_free(m->inputs, m->n_inputs);
    io_free(m->outputs, m->n_outputs);
    free(m->name);
    free(m->version);
    free(m->path);
    free(m);
}

void serve_repo_free(serve_repo *repo) {
    for (size_t i = 0; i < repo->n_models; i++) model_free(repo->models[i]);
    free(repo->models);
    repo->models = NULL;
    repo->n_models = 0;
}

serve_model *serve_repo_find(const serve_repo *repo, const char *name, const char *version) {
    serve_model *best = NULL;
    for (size_t i = 0; i < repo->n_models; i++) {
        serve_model *m = repo->models[i];
        if (strcmp(m->name, name) != 0) continue;
        if (version && *version) {
            if (strcmp(m->version, version) == 0) return m;
        } else best = m;   /* sorted: the last one of the name is the highest version */
    }
    return best;
}

static int describe(cort_session *s, int is_input, size_t n, serve_io **out, char *err, size_t errlen) {
    serve_io *io = calloc(n ? n : 1, sizeof *io);
    if (!io) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = is_input ? cort_session_input_name(s, i) : cort_session_output_name(s, i);
        io[i].name = dup_str(name ? name : "");
        cort_value_type vt;
        cort_status *st = is_input ? cort_session_input_type(s, i, &vt, io[i].dims, SERVE_MAX_RANK)
                                   : cort_session_output_type(s, i, &vt, io[i].dims, SERVE_MAX_RANK);
        if (st || !io[i].name) {
            snprintf(err, errlen, "%s", st ? cort_status_message(st) : "out of memory");
            cort_status_free(st);
            io_free(io, i + 1);
            return -1;
        }
        io[i].kind = vt.kind;
        io[i].type = vt.elem_type;
        io[i].rank = vt.rank > SERVE_MAX_RANK ? -1 : vt.rank;
    }
    *out = io;
    return 0;
}

int serve_model_load(serve_model *m, const serve_defaults *defaults, char *err, size_t errlen) {
    cort_session_options *o = NULL;
    cort_status *st = cort_session_options_create(&o);
    if (!st && m->threads > 0) st = cort_session_options_set_threads(o, m->threads);
    if (!st && defaults->optimization_level >= 0) st = cort_session_options_set_optimization_level(o, defaults->optimization_level);
    if (!st && defaults->provider && strcmp(defaults->provider, "cpu") != 0)
        st = cort_session_options_append_provider(o, defaults->provider, NULL, NULL, 0);
    if (!st) st = cort_session_create(m->path, o, &m->session);
    cort_session_options_free(o);
    if (st) {
        snprintf(err, errlen, "model '%s' version %s (%s): %s", m->name, m->version, m->path, cort_status_message(st));
        cort_status_free(st);
        return -1;
    }
    m->n_inputs = cort_session_input_count(m->session);
    m->n_outputs = cort_session_output_count(m->session);
    char sub[512];
    if (describe(m->session, 1, m->n_inputs, &m->inputs, sub, sizeof sub) ||
        describe(m->session, 0, m->n_outputs, &m->outputs, sub, sizeof sub)) {
        snprintf(err, errlen, "model '%s' version %s: %s", m->name, m->version, sub);
        return -1;
    }
    if (m->max_batch > 1 && serve_batcher_start(m, sub, sizeof sub)) {
        snprintf(err, errlen, "model '%s' version %s: %s", m->name, m->version, sub);
        return -1;
    }
    return 0;
}

static int repo_push(serve_repo *repo, serve_model *m) {
    serve_model **n = realloc(repo->models, (repo->n_models + 1) * sizeof *n);
    if (!n) return -1;
    repo->models = n;
    repo->models[repo->n_models++] = m;
    qsort(repo->models, repo->n_models, sizeof *repo->models, model_cmp);
    return 0;
}

static serve_model *model_new(const char *name, const char *version, const char *path, const serve_defaults *d) {
    serve_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->name = dup_str(name);
    m->version = dup_str(version);
    m->path = dup_str(path);
    m->threads = d->threads;
    m->max_queue = d->max_queue;
    m->max_batch = d->max_batch;
    m->batch_delay_us = d->batch_delay_us;
    m->inline_max_us = d->inline_max_us;
    m->request_timeout_ms = d->request_timeout_ms;
    if (!m->name || !m->version || !m->path) {
        model_free(m);
        return NULL;
    }
    return m;
}

static int valid_name(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') return 0;
    return 1;
}

/* [NAME=]PATH: the name defaults to the file name without ".onnx"; the version is "1". */
int serve_repo_add_file(serve_repo *repo, const char *spec, const serve_defaults *d, char *err, size_t errlen) {
    char name[256];
    const char *path = spec;
    const char *eq = strchr(spec, '=');
    if (eq && (size_t)(eq - spec) < sizeof name) {
        memcpy(name, spec, (size_t)(eq - spec));
        name[eq - spec] = 0;
        path = eq + 1;
    } else {
        const char *base = strrchr(spec, '/');
        base = base ? base + 1 : spec;
        snprintf(name, sizeof name, "%s", base);
        char *dot = strstr(name, ".onnx");
        if (dot && dot[5] == 0) *dot = 0;
    }
    if (!valid_name(name)) {
        snprintf(err, errlen, "model name '%s' (from '%s') may only hold letters, digits, '_', '-' and '.'", name, spec);
        return -1;
    }
    if (serve_repo_find(repo, name, "1")) {
        snprintf(err, errlen, "model '%s' is given twice", name);
        return -1;
    }
    serve_model *m = model_new(name, "1", path, d);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (serve_model_load(m, d, err, errlen) || repo_push(repo, m)) {
        model_free(m);
        return -1;
    }
    return 0;
}

static int parse_int(const char *v, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    const long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

/* REPO/<model>/config: `key = value` lines, '#' comments. */
static int read_config(const char *path, serve_defaults *d, int *opt_level, char *provider, size_t provider_len,
                       char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1);
    char line[512];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *k = line;
        while (isspace((unsigned char)*k)) k++;
        if (!*k) continue;
        char *eq = strchr(k, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected `key = value`", path, lineno);
            rc = -1;
            break;
        }
        char *ke = eq;
        while (ke > k && isspace((unsigned char)ke[-1])) ke--;
        *ke = 0;
        char *v = eq + 1;
        while (isspace((unsigned char)*v)) v++;
        char *ve = v + strlen(v);
        while (ve > v && isspace((unsigned char)ve[-1])) ve--;
        *ve = 0;
        int bad = 0;
        if (strcmp(k, "threads") == 0) bad = parse_int(v, 0, 256, &d->threads);
        else if (strcmp(k, "max_queue") == 0) bad = parse_int(v, 1, 1 << 20, &d->max_queue);
        else if (strcmp(k, "max_batch_size") == 0) bad = parse_int(v, 0, 1 << 16, &d->max_batch);
        else if (strcmp(k, "max_queue_delay_us") == 0) bad = parse_int(v, 0, 10000000, &d->batch_delay_us);
        else if (strcmp(k, "inline_max_us") == 0) bad = parse_int(v, 0, 10000000, &d->inline_max_us);
        else if (strcmp(k, "request_timeout_ms") == 0) bad = parse_int(v, 0, 86400000, &d->request_timeout_ms);
        else if (strcmp(k, "optimization_level") == 0) bad = parse_int(v, 0, 2, opt_level);
        else if (strcmp(k, "provider") == 0) {
            if (strcmp(v, "cpu") != 0 && strcmp(v, "xnnpack") != 0) bad = 1;
            else snprintf(provider, provider_len, "%s", v);
        } else {
            snprintf(err, errlen, "%s:%d: unknown key '%s' (threads, max_queue, max_batch_size, max_queue_delay_us, "
                     "inline_max_us, request_timeout_ms, optimization_level, provider)", path, lineno, k);
            rc = -1;
            break;
        }
        if (bad) {
            snprintf(err, errlen, "%s:%d: bad value '%s' for '%s'", path, lineno, v, k);
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

static int is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int serve_repo_add_dir(serve_repo *repo, const char *dir, const serve_defaults *defaults, char *err, size_t errlen) {
    DIR *top = opendir(dir);
    if (!top) {
        snprintf(err, errlen, "model repository %s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    size_t found = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(top))) {
        if (e->d_name[0] == '.') continue;
        char mdir[4096];
        snprintf(mdir, sizeof mdir, "%s/%s", dir, e->d_name);
        if (!is_dir(mdir)) continue;
        if (!valid_name(e->d_name)) {
            snprintf(err, errlen, "%s: model names may only hold letters, digits, '_', '-' and '.'", mdir);
            rc = -1;
            break;
        }
        serve_defaults d = *defaults;
        int opt = defaults->optimization_level;
        char provider[16] = "";
        if (defaults->provider) snprintf(provider, sizeof provider, "%s", defaults->provider);
        char cfg[4200];
        snprintf(cfg, sizeof cfg, "%s/config", mdir);
        if (read_config(cfg, &d, &opt, provider, sizeof provider, err, errlen)) {
            rc = -1;
            break;
        }
        d.optimization_level = opt;
        d.provider = provider[0] ? provider : NULL;
        DIR *vd = opendir(mdir);
        if (!vd) {
            snprintf(err, errlen, "%s: %s", mdir, strerror(errno));
            rc = -1;
            break;
        }
        struct dirent *v;
        while (rc == 0 && (v = readdir(vd))) {
            if (v->d_name[0] == '.' || !numeric(v->d_name)) continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s/model.onnx", mdir, v->d_name);
            struct stat sb;
            if (stat(path, &sb) != 0) continue;
            serve_model *m = model_new(e->d_name, v->d_name, path, &d);
            if (!m) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            } else if (serve_model_load(m, &d, err, errlen) || repo_push(repo, m)) {
                model_free(m);
                rc = -1;
            } else found++;
        }
        closedir(vd);
    }
    closedir(top);
    if (rc == 0 && found == 0) {
        snprintf(err, errlen, "model repository %s holds no <model>/<version>/model.onnx", dir);
        rc = -1;
    }
    return rc;
}
