/* Einsum (opset 12+). The equation is bound to the input shapes as integer labels (letters in
 * ASCII order, then one label per ellipsis dimension, right-aligned and broadcast like numpy).
 * Two-operand float32 contractions without diagonals or broadcasting run as
 * permute -> batched GEMM ([batch, M, K] x [batch, K, N], the nn family's nn_sgemm; transposed
 * operand layouts are passed as transA/transB instead of copied) -> permute; everything else runs the
 * naive loop over output positions x contracted labels (doubles, or int64 for integers). */
#include <stdio.h>
#include <string.h>
#include "einsum.h"
#include "../reduce/reduce_ops.h"
#include "../../kernels/gemm.h"

static int label_code(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -1;
}
#define ELL (-2)
static char label_char(int l) { return (char)(l < 26 ? 'A' + l : l < 52 ? 'a' + (l - 26) : '.'); }

/* Splits one term into labels (ELL for "..."). Returns the count, or -1 on a syntax error. */
static int parse_term(const char *s, size_t len, int *out, int cap, char *err, size_t errlen) {
    int n = 0, ell = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.' || ell) {
                snprintf(err, errlen, "bad ellipsis in term '%.*s'", (int)len, s);
                return -1;
            }
            ell = 1; i += 2;
            if (n >= cap) goto too_many;
            out[n++] = ELL;
            continue;
        }
        int l = label_code(c);
        if (l < 0) { snprintf(err, errlen, "invalid character '%c' in term '%.*s'", c, (int)len, s); return -1; }
        if (n >= cap) goto too_many;
        out[n++] = l;
    }
    return n;
too_many:
    snprintf(err, errlen, "term '%.*s' has too many labels (at most %d)", (int)len, s, cap);
    return -1;
}

int rd_einsum_parse(const char *eq, size_t n_in, const int64_t *const *dims, const size_t *ranks, rd_einsum_plan *p,
                    char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    for (int l = 0; l < RD_EINSUM_MAX_LABELS; l++) p->size[l] = -1;
    if (n_in == 0 || n_in > RD_EINSUM_MAX_INPUTS) { snprintf(err, errlen, "%zu inputs (1..%d supported)", n_in, RD_EINSUM_MAX_INPUTS); return 0; }
    p->n_in = n_in;
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    int raw[RD_EINSUM_MAX_INPUTS][CORT_MAX_RANK + 1], nraw[RD_EINSUM_MAX_INPUTS];
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && eq[i] != ',') continue;
        if (k >= n_in) { snprintf(err, errlen, "equation has more terms than the %zu inputs", n_in); return 0; }
        nraw[k] = parse_term(eq + start, i - start, raw[k], CORT_MAX_RANK + 1, err, errlen);
        if (nraw[k] < 0) return 0;
        k++;
        start = i + 1;
    }
    if (k != n_in) { snprintf(err, errlen, "equation has %zu terms for %zu inputs", k, n_in); return 0; }
    /* ellipsis ranks */
    size_t E = 0, e_of[RD_EINSUM_MAX_INPUTS];
    for (k = 0; k < n_in; k++) {
        size_t letters = 0;
        int has_ell = 0;
        for (int i = 0; i < nraw[k]; i++) { if (raw[k][i] == ELL) has_ell = 1; else letters++; }
        if ((!has_ell && letters != ranks[k]) || (has_ell && letters > ranks[k])) {
            snprintf(err, errlen, "term %zu has %zu labels but input %zu has rank %zu", k, letters, k, ranks[k]);
            return 0;
        }
        e_of[k] = has_ell ? ranks[k] - letters : 0;
        if (e_of[k] > E) E = e_of[k];
    }
    int count[RD_EINSUM_MAX_LABELS] = {0};
    for (k = 0; k < n_in; k++) {
        size_t a = 0;
        for (int i = 0; i < nraw[k]; i++) {
            if (raw[k][i] == ELL) {
                for (size_t e = 0; e < e_of[k]; e++) p->in_label[k][a++] = (int)(52 + E - e_of[k] + e);
            } else {
                p->in_label[k][a++] = raw[k][i];
            }
        }
        p->in_rank[k] = ranks[k];
        for (a = 0; a < ranks[k]; a++) {
            int l = p->in_label[k][a];
            int64_t d = dims[k][a];
            p->in_dims[k][a] = d;
            count[l]++;
            if (p->size[l] < 0 || p->size[l] == d) p->size[l] = d;
            else if (l >= 52 && (d == 1 || p->size[l] == 1)) { if (d > p->size[l]) p->size[l] = d; }
            else {
                snprintf(err, errlen, "label '%c' has size %lld in input %zu but %lld elsewhere",
                         label_char(l), (long long)d, k, (long long)p->size[l]);
                return 0;
            }
        }
    }
    if (arrow) {
        int ro[CORT_MAX_RANK + 1];
        int n = parse_term(arrow + 2, strlen(arrow + 2), ro, CORT_MAX_RANK + 1, err, errlen);
        if (n < 0) return 0;
        int used[RD_EINSUM_MAX_LABELS] = {0};
        size_t r = 0;
        for (int i = 0; i < n; i++) {
            if (ro[i] == ELL) {
                for (size_t e = 0; e < E; e++) {
                    if (r >= CORT_MAX_RANK) goto out_rank;
                    p->out_label[r++] = (int)(52 + e);
                }
                continue;
            }
            if (p->size[ro[i]] < 0) { snprintf(err, errlen, "output label '%c' does not appear in the inputs", label_char(ro[i])); return 0; }
            if (used[ro[i]]++) { snprintf(err, errlen, "output label repeated"); return 0; }
            if (r >= CORT_MAX_RANK) goto out_rank;
            p->out_label[r++] = ro[i];
        }
        p->out_rank = r;
    } else {
        size_t r = 0;
        for (size_t e = 0; e < E; e++) p->out_label[r++] = (int)(52 + e);
        for (int l = 0; l < 52; l++)
            if (count[l] == 1) {
                if (r >= CORT_MAX_RANK) goto out_rank;
                p->out_label[r++] = l;
            }
        p->out_rank = r;
    }
    for (size_t i = 0; i < p->out_rank; i++) p->out_dims[i] = p->size[p->out_label[i]];
    return 1;
out_rank:
    snprintf(err, errlen, "output rank exceeds %d", CORT_MAX_RANK);
    return 0;
}

/* ---------------- naive loops ---------------- */

typedef struct naive_job {
    const rd_einsum_plan *p;
    const void *const *x;
    cort_type type;
    void *y;
    size_t nc;                                           /* contracted labels */
    int cl[RD_EINSUM_MAX_LABELS];                        /* contracted label ids */
    int64_t ostr[RD_EINSUM_MAX_INPUTS][CORT_MAX_RANK];   /* per input, stride for each output axis */
    int64_t cstr[RD_EINSUM_MAX_INPUTS][RD_EINSUM_MAX_LABELS];
} naive_job;

static void naive_task(void *arg, size_t begin, size_t end) {
    const naive_job *j = arg;
    const rd_einsum_plan *p = j->p;
    cort_type t = j->type;
    int ints = cort_type_is_int(t);
    for (size_t o = begin; o < end; o++) {
        size_t off[RD_EINSUM_MAX_INPUTS] = {0}, rem = o;
        for (size_t a = p->out_rank; a-- > 0;) {
            size_t i = rem % (size_t)p->out_dims[a];
            rem /= (size_t)p->out_dims[a];
            for (size_t k = 0; k < p->n_in; k++) off[k] += i * (size_t)j->ostr[k][a];
        }
        size_t idx[RD_EINSUM_MAX_LABELS] = {0};
        double acc = 0;
        int64_t iacc = 0;
        for (;;) {
            if (ints) {
                uint64_t v = 1;
                for (size_t k = 0; k < p->n_in; k++) v *= (uint64_t)cort_load_i64(j->x[k], t, off[k]);
                iacc = (int64_t)((uint64_t)iacc + v);
            } else if (t == CORT_TYPE_FLOAT) {
                double v = 1;
                for (size_t k = 0; k < p->n_in; k++) v *= ((const float *)j->x[k])[off[k]];
                acc += v;
            } else {
                double v = 1;
                for (size_t k = 0; k < p->n_in; k++) v *= cort_load_f64(j->x[k], t, off[k]);
                acc += v;
            }
            size_t c = j->nc;
            while (c-- > 0) {
                int l = j->cl[c];
                for (size_t k = 0; k < p->n_in; k++) off[k] += (size_t)j->cstr[k][l];
                if (++idx[c] < (size_t)p->size[l]) break;
                for (size_t k = 0; k < p->n_in; k++) off[k] -= (size_t)j->cstr[k][l] * (size_t)p->size[l];
                idx[c] = 0;
            }
            if (c == (size_t)-1) break;
        }
        if (ints) cort_store_i64(j->y, t, o, iacc);
        else if (t == CORT_TYPE_FLOAT) ((float *)j->y)[o] = (float)acc;
        else cort_store_f64(j->y, t, o, acc);
    }
}

static cort_status *naive(const rd_einsum_plan *p, const void *const *x, cort_type t, void *y, cort_pool *pool,
                          cort_kernel_ctx *ctx) {
    naive_job *j = cort_kernel_scratch(ctx, sizeof *j);
    if (!j) return cort_error_oom();
    memset(j, 0, sizeof *j);
    j->p = p; j->x = x; j->type = t; j->y = y;
    int in_out[RD_EINSUM_MAX_LABELS] = {0};
    for (size_t a = 0; a < p->out_rank; a++) in_out[p->out_label[a]] = 1;
    size_t R = 1;
    for (int l = 0; l < RD_EINSUM_MAX_LABELS; l++)
        if (p->size[l] >= 0 && !in_out[l]) { j->cl[j->nc++] = l; R *= (size_t)p->size[l]; }
    for (size_t k = 0; k < p->n_in; k++) {
        int64_t s = 1;
        for (size_t a = p->in_rank[k]; a-- > 0;) {
            int l = p->in_label[k][a];
            /* a broadcast (size-1) dimension does not move; repeated labels (diagonals) add up */
            if (!(p->in_dims[k][a] == 1 && p->size[l] != 1)) {
                j->cstr[k][l] += s;
                for (size_t b = 0; b < p->out_rank; b++) if (p->out_label[b] == l) j->ostr[k][b] += s;
            }
            s *= p->in_dims[k][a];
        }
        for (size_t b = 0; b < p->out_rank; b++) j->cstr[k][p->out_label[b]] = 0;
    }
    size_t O = rd_prod(p->out_dims, 0, p->out_rank);
    if (R == 0) {
        for (size_t o = 0; o < O; o++) {
            if (t == CORT_TYPE_FLOAT) ((float *)y)[o] = 0;
            else cort_store_f64(y, t, o, 0);
        }
    } else {
        cort_parallel_for(pool, O, 16384 / (R * p->n_in) + 1, naive_task, j);
    }
    cort_kernel_scratch_free(ctx, j);
    return NULL;
}

/* ---------------- permute + batched GEMM (float32, two operands) ---------------- */

/* dst[i0..] = src with axes reordered: dst axis i is src axis perm[i]. */
static void permute_f32(const float *src, const int64_t *sdims, size_t rank, const size_t *perm, float *dst) {
    size_t sstr[CORT_MAX_RANK], s = 1, n = rd_prod(sdims, 0, rank);
    for (size_t a = rank; a-- > 0;) { sstr[a] = s; s *= (size_t)sdims[a]; }
    size_t dd[CORT_MAX_RANK], ds[CORT_MAX_RANK], idx[CORT_MAX_RANK] = {0}, off = 0;
    for (size_t i = 0; i < rank; i++) { dd[i] = (size_t)sdims[perm[i]]; ds[i] = sstr[perm[i]]; }
    if (rank == 0) { if (n) dst[0] = src[0]; return; }
    size_t last = rank - 1;
    for (size_t i = 0; i < n;) {
        size_t inner = dd[last], st = ds[last];
        for (size_t q = 0; q < inner; q++) dst[i + q] = src[off + q * st];
        i += inner;
        size_t a = last;
        while (a-- > 0) {
            off += ds[a];
            if (++idx[a] < dd[a]) break;
            off -= ds[a] * dd[a];
            idx[a] = 0;
        }
        if (a == (size_t)-1) break;
    }
}

static int is_identity(const size_t *perm, size_t n) {
    for (size_t i = 0; i < n; i++) if (perm[i] != i) return 0;
    return 1;
}

static size_t axis_of(const rd_einsum_plan *p, size_t k, int l) {
    for (size_t a = 0; a < p->in_rank[k]; a++) if (p->in_label[k][a] == l) return a;
    return 0;
}

/* Fills perm with the axes of input k holding labels g0 then g1 (then g2); returns the count. */
static size_t perm_of(const rd_einsum_plan *p, size_t k, const int *g0, size_t n0, const int *g1, size_t n1,
                      const int *g2, size_t n2, size_t *perm) {
    size_t n = 0;
    for (size_t i = 0; i < n0; i++) perm[n++] = axis_of(p, k, g0[i]);
    for (size_t i = 0; i < n1; i++) perm[n++] = axis_of(p, k, g1[i]);
    for (size_t i = 0; i < n2; i++) perm[n++] = axis_of(p, k, g2[i]);
    return n;
}

/* Returns 1 and fills y if the GEMM path applies; 0 to fall back to the naive loops. */
static int try_gemm(const rd_einsum_plan *p, const float *const *x, float *y, cort_pool *pool, cort_kernel_ctx *ctx,
                    cort_status **st) {
    *st = NULL;
    if (p->n_in != 2) return 0;
    int where[RD_EINSUM_MAX_LABELS] = {0};   /* bit 0: in A, bit 1: in B, bit 2: in output */
    for (size_t k = 0; k < 2; k++)
        for (size_t a = 0; a < p->in_rank[k]; a++) {
            int l = p->in_label[k][a];
            if (where[l] & (1 << k)) return 0;                       /* diagonal */
            if (p->in_dims[k][a] != p->size[l]) return 0;            /* broadcast */
            where[l] |= 1 << k;
        }
    for (size_t a = 0; a < p->out_rank; a++) where[p->out_label[a]] |= 4;
    /* batch / M / N labels in output order, K labels in A's order */
    int bl[CORT_MAX_RANK], ml[CORT_MAX_RANK], nl[CORT_MAX_RANK], kl[CORT_MAX_RANK];
    size_t nb = 0, nm = 0, nn = 0, nk = 0, Bs = 1, M = 1, N = 1, K = 1;
    for (size_t o = 0; o < p->out_rank; o++) {
        int l = p->out_label[o];
        size_t sz = (size_t)p->size[l];
        if (where[l] == 7) { bl[nb++] = l; Bs *= sz; }
        else if (where[l] == 5) { ml[nm++] = l; M *= sz; }
        else if (where[l] == 6) { nl[nn++] = l; N *= sz; }
    }
    for (size_t a = 0; a < p->in_rank[0]; a++) {
        int l = p->in_label[0][a];
        if (where[l] == 3) { kl[nk++] = l; K *= (size_t)p->size[l]; }
        else if (where[l] == 1) return 0;                            /* summed in A alone */
    }
    for (size_t a = 0; a < p->in_rank[1]; a++) if (where[p->in_label[1][a]] == 2) return 0;   /* summed in B alone */
    /* A as [batch, M, K] (or [batch, K, M] read transposed); B as [batch, K, N] (or [batch, N, K]) */
    size_t pa[CORT_MAX_RANK], pb[CORT_MAX_RANK], pc[CORT_MAX_RANK];
    size_t ra = perm_of(p, 0, bl, nb, ml, nm, kl, nk, pa), rb = perm_of(p, 1, bl, nb, kl, nk, nl, nn, pb);
    int ta = 0, tb = 0, permA = !is_identity(pa, ra), permB = !is_identity(pb, rb);
    if (permA) {
        size_t t[CORT_MAX_RANK];
        perm_of(p, 0, bl, nb, kl, nk, ml, nm, t);
        if (is_identity(t, ra)) { permA = 0; ta = 1; }
    }
    if (permB) {
        size_t t[CORT_MAX_RANK];
        perm_of(p, 1, bl, nb, nl, nn, kl, nk, t);
        if (is_identity(t, rb)) { permB = 0; tb = 1; }
    }
    int cl[3 * CORT_MAX_RANK];
    size_t ncl = 0;
    for (size_t i = 0; i < nb; i++) cl[ncl++] = bl[i];
    for (size_t i = 0; i < nm; i++) cl[ncl++] = ml[i];
    for (size_t i = 0; i < nn; i++) cl[ncl++] = nl[i];
    for (size_t o = 0; o < p->out_rank; o++)
        for (size_t q = 0; q < ncl; q++) if (cl[q] == p->out_label[o]) pc[o] = q;
    int permC = !is_identity(pc, p->out_rank);
    size_t nA = Bs * M * K, nB = Bs * K * N, nC = Bs * M * N;
    /* permuted operands in the session's recycled scratch (ctx NULL: the allocator) */
    float *tA = permA ? cort_kernel_scratch(ctx, (nA ? nA : 1) * sizeof *tA) : NULL;
    float *tB = permB ? cort_kernel_scratch(ctx, (nB ? nB : 1) * sizeof *tB) : NULL;
    float *tC = permC ? cort_kernel_scratch(ctx, (nC ? nC : 1) * sizeof *tC) : NULL;
    if ((permA && !tA) || (permB && !tB) || (permC && !tC)) {
        cort_kernel_scratch_free(ctx, tA); cort_kernel_scratch_free(ctx, tB); cort_kernel_scratch_free(ctx, tC);
        *st = cort_error_oom();
        return 1;
    }
    if (permA) permute_f32(x[0], p->in_dims[0], p->in_rank[0], pa, tA);
    if (permB) permute_f32(x[1], p->in_dims[1], p->in_rank[1], pb, tB);
    const float *A = permA ? tA : x[0], *B = permB ? tB : x[1];
    float *C = permC ? tC : y;
    if (nC && !K) memset(C, 0, nC * sizeof *C);
    else if (nC)
        for (size_t b = 0; b < Bs && !*st; b++) {
            nn_gemm_b bm = nn_gemm_b_matrix(B + b * K * N, tb ? K : N, tb);
            const nn_gemm_opts o = { .ctx = ctx };
            *st = nn_sgemm_opt(pool, NULL, M, N, K, 1.0f, A + b * M * K, ta ? M : K, ta, &bm, 0.0f, C + b * M * N, N, &o);
        }
    if (permC && !*st) {
        int64_t cd[3 * CORT_MAX_RANK];
        for (size_t q = 0; q < ncl; q++) cd[q] = p->size[cl[q]];
        permute_f32(tC, cd, ncl, pc, y);
    }
    cort_kernel_scratch_free(ctx, tA); cort_kernel_scratch_free(ctx, tB); cort_kernel_scratch_free(ctx, tC);
    return 1;
}

cort_status *rd_einsum_f32(const rd_einsum_plan *p, const float *const *x, float *y, cort_pool *pool, int fast,
                          cort_kernel_ctx *ctx) {
    if (fast) {
        cort_status *st;
        if (try_gemm(p, x, y, pool, ctx, &st)) return st;
    }
    return naive(p, (const void *const *)x, CORT_TYPE_FLOAT, y, pool, ctx);
}

/* ---------------- operator glue ---------------- */

static cort_status *einsum_run(cort_kernel_ctx *ctx) {
    const char *eq = cort_attr_str(ctx->node, "equation", NULL);
    if (!eq) return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'equation' is required");
    size_t n = ctx->n_inputs;
    if (n == 0 || n > RD_EINSUM_MAX_INPUTS)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "%zu inputs (1..%d supported)", n, RD_EINSUM_MAX_INPUTS);
    const int64_t *dims[RD_EINSUM_MAX_INPUTS];
    size_t ranks[RD_EINSUM_MAX_INPUTS];
    const void *data[RD_EINSUM_MAX_INPUTS];
    cort_type t = CORT_TYPE_UNDEFINED;
    for (size_t k = 0; k < n; k++) {
        const cort_value *v = ctx->inputs[k];
        if (!v || v->kind != CORT_VKIND_TENSOR)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu must be a tensor", k);
        if (k == 0) t = v->type;
        if (v->type != t || !(cort_type_is_float(t) || cort_type_is_int(t)))
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu has type %s, expected a numeric type equal to input 0's (%s)",
                                   k, cort_type_name(v->type), cort_type_name(t));
        dims[k] = v->shape; ranks[k] = v->rank; data[k] = v->data;
    }
    rd_einsum_plan *p = cort_kernel_scratch(ctx, sizeof *p);
    if (!p) return cort_error_oom();
    char err[256];
    cort_status *st = NULL;
    cort_value *y;
    if (!rd_einsum_parse(eq, n, dims, ranks, p, err, sizeof err))
        st = cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "equation '%s': %s", eq, err);
    else if (!(st = cort_kernel_output(ctx, 0, t, p->out_dims, p->out_rank, &y))) {
        if (t == CORT_TYPE_FLOAT) st = rd_einsum_f32(p, (const float *const *)data, y->data, ctx->pool, 1, ctx);
        else st = naive(p, data, t, y->data, ctx->pool, ctx);
    }
    cort_kernel_scratch_free(ctx, p);
    return st;
}

static cort_status *einsum_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = rd_tinput(ctx, 0);
    if (!x) return NULL;
    cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    const char *eq = cort_attr_str(ctx->node, "equation", NULL);
    size_t n = ctx->n_inputs;
    if (!eq || n == 0 || n > RD_EINSUM_MAX_INPUTS) return NULL;
    const int64_t *dims[RD_EINSUM_MAX_INPUTS];
    size_t ranks[RD_EINSUM_MAX_INPUTS];
    for (size_t k = 0; k < n; k++) {
        const cort_tinfo *t = rd_tinput(ctx, k);
        if (!t || !cort_tinfo_shape_known(t)) return NULL;
        dims[k] = t->dims; ranks[k] = (size_t)t->rank;
    }
    rd_einsum_plan *p = cort_malloc(sizeof *p);
    if (!p) return cort_error_oom();
    char err[256];
    cort_status *st = NULL;
    if (rd_einsum_parse(eq, n, dims, ranks, p, err, sizeof err))
        cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, p->out_dims, (int)p->out_rank);
    else
        st = cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "equation '%s': %s", eq, err);
    cort_free(p);
    return st;
}

const cort_op_def rd_op_einsum = { .name = "Einsum", .domain = "", .min_opset = 12, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TMASK_NUMERIC, .infer = einsum_infer, .run = einsum_run };
