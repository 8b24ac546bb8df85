/* StringNormalizer (opset 10): stopword removal and case change. Case mapping is built in (ASCII,
 * Latin-1, Latin Extended-A and Additional, Greek, Cyrillic, Armenian) so results never depend on the
 * process locale; the `locale` attribute is accepted and ignored. Invalid UTF-8 bytes pass through. */
#include <string.h>
#include "../misc_common.h"

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

typedef struct strnorm_state {
    int    action, case_sensitive;
    size_t n_stop;
    char **stop;        /* case-folded (lower) unless case_sensitive */
} strnorm_state;

/* Lower/upper case partner of code point c (c itself when it has none). */
static uint32_t cp_lower(uint32_t c) {
    if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x130) return 'i';
        if (c == 0x178) return 0xFF;
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
        if (c == 0x138 || c == 0x149 || c == 0x17F || c == 0x131) return c;
        return (c & 1) ? c : c + 1;
    }
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F)) return (c & 1) ? c : c + 1;
    if (c == 0x4C0) return 0x4CF;
    if (c >= 0x4C1 && c <= 0x4CE) return (c & 1) ? c + 1 : c;
    if (c >= 0x531 && c <= 0x556) return c + 48;
    if ((c >= 0x1E00 && c <= 0x1E95) || (c >= 0x1EA0 && c <= 0x1EFF)) return (c & 1) ? c : c + 1;
    return c;
}
static uint32_t cp_upper(uint32_t c) {
    if (c < 0x80) return c >= 'a' && c <= 'z' ? c - 32 : c;
    if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c == 0xB5) return 0x39C;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x131) return 'I';
        if (c == 0x17F) return 'S';
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c : c - 1;
        if (c == 0x138 || c == 0x149 || c == 0x178 || c == 0x130) return c;
        return (c & 1) ? c - 1 : c;
    }
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c == 0x3C2) return 0x3A3;
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 37;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 63;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F)) return (c & 1) ? c - 1 : c;
    if (c == 0x4CF) return 0x4C0;
    if (c >= 0x4C1 && c <= 0x4CE) return (c & 1) ? c : c - 1;
    if (c >= 0x561 && c <= 0x586) return c - 48;
    if ((c >= 0x1E00 && c <= 0x1E95) || (c >= 0x1EA0 && c <= 0x1EFF)) return (c & 1) ? c - 1 : c;
    return c;
}

/* Decodes one UTF-8 sequence at s[0..len); returns its byte length, or 0 if malformed. */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp) {
    if (s[0] < 0x80) { *cp = s[0]; return 1; }
    size_t n = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!n || n > len) return 0;
    uint32_t c = s[0] & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (c < min_cp[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return n;
}
static size_t utf8_encode(uint32_t c, char *o) {
    if (c < 0x80) { o[0] = (char)c; return 1; }
    if (c < 0x800) { o[0] = (char)(0xC0 | (c >> 6)); o[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12)); o[1] = (char)(0x80 | ((c >> 6) & 0x3F)); o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18)); o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F)); o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Case-maps s into out (capacity 2*len+1 suffices: no mapping here grows a character by more than
 * one byte); returns the output length. */
static size_t map_case(const char *s, size_t len, int action, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t n = utf8_decode((const unsigned char *)s + i, len - i, &c);
        if (!n) { out[o++] = s[i++]; continue; }
        if (action == CASE_NONE) { memcpy(out + o, s + i, n); o += n; }
        else o += utf8_encode(action == CASE_LOWER ? cp_lower(c) : cp_upper(c), out + o);
        i += n;
    }
    out[o] = '\0';
    return o;
}

static void strnorm_free(void *p) {
    strnorm_state *st = p;
    if (!st) return;
    for (size_t i = 0; i < st->n_stop; i++) cort_free(st->stop[i]);
    cort_free(st->stop);
    cort_free(st);
}

static cort_status *strnorm_init(const cort_node *node, void **state) {
    strnorm_state *st = cort_calloc(1, sizeof *st);
    if (!st) return cort_error_oom();
    cort_status *err = NULL;
    const char *act = cort_attr_str(node, "case_change_action", "NONE");
    if (!strcmp(act, "NONE")) st->action = CASE_NONE;
    else if (!strcmp(act, "LOWER")) st->action = CASE_LOWER;
    else if (!strcmp(act, "UPPER")) st->action = CASE_UPPER;
    else {
        err = cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'case_change_action' is '%s', expected NONE, LOWER or UPPER", act);
        goto error;
    }
    st->case_sensitive = cort_attr_int(node, "is_case_sensitive", 0) != 0;
    const char *const *words = NULL;
    size_t n = cort_attr_strings(node, "stopwords", &words);
    if (n) {
        st->stop = cort_calloc(n, sizeof *st->stop);
        if (!st->stop) goto oom;
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(words[i]);
            st->stop[i] = cort_malloc(2 * len + 1);
            if (!st->stop[i]) goto oom;
            st->n_stop = i + 1;
            map_case(words[i], len, st->case_sensitive ? CASE_NONE : CASE_LOWER, st->stop[i]);
        }
    }
    *state = st;
    return NULL;
oom:
    err = cort_error_oom();
error:
    strnorm_free(st);
    return err;
}

static cort_status *strnorm_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!ctx->n_outputs) return NULL;
    cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_STRING);
    if (x && (x->rank == 1 || x->rank == 2)) {
        int64_t dims[2] = { 1, -1 };
        if (x->rank == 1) dims[0] = -1;
        cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_STRING, dims, x->rank);
    }
    return NULL;
}

static cort_status *strnorm_run(cort_kernel_ctx *ctx) {
    const strnorm_state *st = ctx->state;
    CORT_TRY(mi_want_tensor(ctx, 0, "X"));
    const cort_value *x = ctx->inputs[0];
    char buf[128];
    if (x->type != CORT_TYPE_STRING || !(x->rank == 1 || (x->rank == 2 && x->shape[0] == 1)))
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' is %s%s, expected string[C] or string[1,C]",
                               cort_type_name(x->type), cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    size_t n = x->count, maxlen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(cort_string_get(x, i));
        if (l > maxlen) maxlen = l;
    }
    cort_status *err = NULL;
    uint8_t *keep = cort_calloc(n + 1, 1);
    char *tmp = cort_malloc(2 * maxlen + 1);
    if (!keep || !tmp) { err = cort_error_oom(); goto done; }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = cort_string_get(x, i);
        const char *cmp = s;
        if (!st->case_sensitive) { map_case(s, strlen(s), CASE_LOWER, tmp); cmp = tmp; }
        int stop = 0;
        for (size_t k = 0; k < st->n_stop && !stop; k++) stop = !strcmp(cmp, st->stop[k]);
        keep[i] = (uint8_t)!stop;
        kept += !stop;
    }
    int64_t dims[2];
    if (x->rank == 1) dims[0] = kept ? (int64_t)kept : 1;
    else { dims[0] = 1; dims[1] = kept ? (int64_t)kept : 1; }
    cort_value *out;
    if ((err = cort_kernel_output(ctx, 0, CORT_TYPE_STRING, dims, x->rank, &out))) goto done;
    for (size_t i = 0, o = 0; i < n; i++) {
        if (!keep[i]) continue;
        const char *s = cort_string_get(x, i);
        size_t len = map_case(s, strlen(s), st->action, tmp);
        if ((err = cort_string_set(out, o++, tmp, len))) goto done;
    }
done:
    cort_free(keep);
    cort_free(tmp);
    return err;
}

const cort_op_def mi_op_string_normalizer = { .name = "StringNormalizer", .domain = "", .min_opset = 10, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_STRING), .init = strnorm_init, .free_state = strnorm_free,
    .infer = strnorm_infer, .run = strnorm_run };
