/* RegexFullMatch (opset 20): whether each string matches the pattern as a whole. ONNX specifies
 * RE2 syntax; cort matches with PCRE2 (optional: CORT_PCRE2), configured to behave like RE2 where
 * the two differ (docs/text_image_ops.md): UTF-8 mode, `$` only at the very end, invalid UTF-8
 * never matching a character, and the PCRE-only constructs RE2 rejects (backreferences, lookaround,
 * atomic groups, recursion, conditionals, callouts, \Z, possessive quantifiers) rejected at session
 * creation too. PCRE2 backtracks where RE2 does not, so matching has a step limit: a pattern
 * that exceeds it on some input fails the run instead of running for ages. Without PCRE2 the
 * op fails session creation with NOT_IMPLEMENTED. */
#include <string.h>
#include "../misc_common.h"

#ifdef CORT_HAVE_PCRE2
#include <stdatomic.h>
#include <pcre2.h>

/* Backtracking budget per element: RE2-valid patterns on ordinary strings stay far below it. */
#define RFM_MATCH_LIMIT 10000000u
#define RFM_HEAP_LIMIT_KB 65536u

typedef struct rfm_state {
    pcre2_general_context *gctx;
    pcre2_compile_context *cctx;
    pcre2_match_context *mctx;
    pcre2_code *code;
    /* One match block kept between runs (PCRE2 keeps its backtracking frames in it), so steady
     * runs do not allocate; a run takes it by exchange, concurrent runs make their own. */
    _Atomic(pcre2_match_data *) spare;
} rfm_state;

static void *rfm_malloc(PCRE2_SIZE n, void *ud) { (void)ud; return cort_malloc(n); }
static void rfm_free(void *p, void *ud) { (void)ud; cort_free(p); }

static void rfm_free_state(void *p) {
    rfm_state *s = p;
    if (!s) return;
    pcre2_match_data_free(atomic_load(&s->spare));
    pcre2_code_free(s->code);
    pcre2_match_context_free(s->mctx);
    pcre2_compile_context_free(s->cctx);
    pcre2_general_context_free(s->gctx);
    cort_free(s);
}

/* The first construct of `pat` that PCRE2 accepts but RE2 rejects, or NULL. */
static const char *rfm_non_re2(const char *pat) {
    int in_class = 0, quoted = 0;
    for (const char *p = pat; *p; p++) {
        if (quoted) { if (p[0] == '\\' && p[1] == 'E') { quoted = 0; p++; } continue; }
        if (*p == '\\') {
            char c = p[1];
            if (!c) return NULL;
            if (c == 'Q') { quoted = 1; p++; continue; }
            if ((c == 'p' || c == 'P' || c == 'x') && p[2] == '{') {
                /* \p{Greek}, \x{263a}: the braces are no quantifier */
                const char *e = strchr(p + 2, '}');
                if (!e) return NULL;
                p = e;
                continue;
            }
            /* RE2 reads \1 alone as a backreference (an error) and \12 as octal */
            if (!in_class && c >= '1' && c <= '9' && !(c <= '7' && p[2] >= '0' && p[2] <= '7')) return "backreference";
            if (!in_class && (c == 'g' || c == 'k')) return "backreference";
            if (!in_class && c == 'Z') return "\\Z (use \\z)";
            if (!in_class && (c == 'K' || c == 'G' || c == 'R' || c == 'X')) return "\\K, \\G, \\R or \\X";
            p++;
            continue;
        }
        if (in_class) {
            if (*p == '[' && p[1] == ':') { const char *e = strstr(p + 2, ":]"); if (e) p = e + 1; continue; }
            if (*p == ']') in_class = 0;
            continue;
        }
        if (*p == '[') {
            in_class = 1;
            if (p[1] == '^') p++;
            if (p[1] == ']') p++;   /* a leading ] is a literal */
            continue;
        }
        if (*p == '(' && p[1] == '*') return "(*VERB)";
        if (*p == '(' && p[1] == '?') {
            char c = p[2];
            if (c == '=' || c == '!') return "lookahead";
            if (c == '<' && (p[3] == '=' || p[3] == '!')) return "lookbehind";
            if (c == '>') return "atomic group";
            if (c == '|') return "branch reset";
            if (c == '(') return "conditional";
            if (c == 'R' || (c >= '0' && c <= '9') || c == '+' || c == '&') return "recursion";
            if (c == 'C') return "callout";
            if (c == '#') return "comment group";
            if (c == 'P' && (p[3] == '=' || p[3] == '>')) return "named backreference or recursion";
            /* flag groups (?imsU-imsU) or (?flags:...): RE2 knows no other flags */
            const char *f = p + 2;
            while ((*f >= 'a' && *f <= 'z') || (*f >= 'A' && *f <= 'Z') || *f == '-') f++;
            if (f > p + 2 && (*f == ')' || *f == ':'))
                for (const char *q = p + 2; q < f; q++)
                    if (!strchr("imsU-", *q)) return "flag other than i, m, s, U";
        }
        if (*p == '{' && p[1] >= '0' && p[1] <= '9') {
            /* RE2 caps counted repetition at 1000 */
            for (const char *q = p + 1; (*q >= '0' && *q <= '9') || *q == ','; q++) {
                long v = 0;
                while (*q >= '0' && *q <= '9' && v <= 1000) v = v * 10 + (*q++ - '0');
                if (v > 1000) return "repetition count above 1000";
                if (*q != ',') break;
            }
        }
        if ((*p == '*' || *p == '+' || *p == '?' || *p == '}') && p[1] == '+') return "possessive quantifier";
    }
    return NULL;
}

static cort_status *rfm_init(const cort_node *node, void **state) {
    const cort_attr_ir *a = cort_attr_get(node, "pattern");
    if (!a) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'pattern' is required");
    const char *pat = cort_attr_str(node, "pattern", "");
    const char *bad = rfm_non_re2(pat);
    if (bad) return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'pattern' \"%s\" uses a %s, which RE2 syntax does not have", pat, bad);
    rfm_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_node_error(node, CORT_ERROR_OUT_OF_MEMORY, "no memory for the regex state");
    s->gctx = pcre2_general_context_create(rfm_malloc, rfm_free, NULL);
    s->cctx = s->gctx ? pcre2_compile_context_create(s->gctx) : NULL;
    s->mctx = s->gctx ? pcre2_match_context_create(s->gctx) : NULL;
    if (!s->cctx || !s->mctx) { rfm_free_state(s); return cort_node_error(node, CORT_ERROR_OUT_OF_MEMORY, "no memory for PCRE2 contexts"); }
    pcre2_set_match_limit(s->mctx, RFM_MATCH_LIMIT);
    pcre2_set_heap_limit(s->mctx, RFM_HEAP_LIMIT_KB);
    /* RE2: \d, \s, \w and \b are ASCII-only, which is PCRE2's default without PCRE2_UCP */
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C;
    int err;
    PCRE2_SIZE off;
    s->code = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, opts, &err, &off, s->cctx);
    if (!s->code) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(err, msg, sizeof msg) < 0) strcpy((char *)msg, "unknown error");
        rfm_free_state(s);
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'pattern' \"%s\" does not compile at offset %zu: %s", pat, (size_t)off,
                               (const char *)msg);
    }
    *state = s;
    return NULL;
}

static cort_status *rfm_run(cort_kernel_ctx *ctx) {
    rfm_state *s = (rfm_state *)ctx->state;   /* only `spare` changes, atomically */
    const cort_value *x = mi_in(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_STRING)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'X' must be a string tensor");
    cort_value *y;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_BOOL, x->shape, x->rank, &y));
    if (!x->count) return NULL;
    pcre2_match_data *md = atomic_exchange(&s->spare, NULL);
    if (!md) md = pcre2_match_data_create_from_pattern(s->code, s->gctx);
    if (!md) return cort_node_error(ctx->node, CORT_ERROR_OUT_OF_MEMORY, "no memory for PCRE2 match data");
    cort_status *st = NULL;
    uint8_t *out = y->data;
    for (size_t i = 0; i < x->count; i++) {
        const char *str = cort_string_get(x, i);
        size_t n = strlen(str);
        int rc = pcre2_match(s->code, (PCRE2_SPTR)str, n, 0, 0, md, s->mctx);
        if (rc >= 0) {
            /* with invalid UTF-8 in the subject PCRE2 matches within the valid stretches, and the
             * end anchor can then hold at a stretch's end: the match must span the whole string */
            const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            out[i] = ov[0] == 0 && ov[1] == n;
        } else if (rc == PCRE2_ERROR_NOMATCH) {
            out[i] = 0;
        } else {
            PCRE2_UCHAR msg[256];
            if (pcre2_get_error_message(rc, msg, sizeof msg) < 0) strcpy((char *)msg, "unknown error");
            st = cort_node_error(ctx->node, rc == PCRE2_ERROR_NOMEMORY ? CORT_ERROR_OUT_OF_MEMORY : CORT_ERROR_RUNTIME,
                                 "input 0 'X' element %zu: matching failed: %s", i, (const char *)msg);
            break;
        }
    }
    pcre2_match_data *none = NULL;
    if (!atomic_compare_exchange_strong(&s->spare, &none, md)) pcre2_match_data_free(md);
    return st;
}
#else
static cort_status *rfm_init(const cort_node *node, void **state) {
    (void)state;
    return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                           "RegexFullMatch is unavailable: this cort was built without PCRE2 (CORT_PCRE2=OFF or libpcre2-dev not found)");
}
static void rfm_free_state(void *p) { (void)p; }
static cort_status *rfm_run(cort_kernel_ctx *ctx) {
    return cort_node_error(ctx->node, CORT_ERROR_NOT_IMPLEMENTED, "RegexFullMatch is unavailable (built without PCRE2)");
}
#endif

static cort_status *rfm_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (x && x->rank >= 0) cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_BOOL, x->dims, x->rank);
    else cort_tinfo_tensor(&ctx->outputs[0], CORT_TYPE_BOOL);
    return NULL;
}

const cort_op_def txt_op_regex_full_match = { .name = "RegexFullMatch", .domain = "", .min_opset = 20, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_STRING), .init = rfm_init, .free_state = rfm_free_state, .infer = rfm_infer, .run = rfm_run };
