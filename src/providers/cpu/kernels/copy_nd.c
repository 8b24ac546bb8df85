/* The strided N-D copy engine behind Transpose, Slice, Concat, Split, Expand, Tile, Pad, ...
 *
 * A plan is first simplified (size-1 dimensions dropped, dimensions that are contiguous in both
 * src and dst merged), then one of three inner kernels runs over the remaining "rows":
 *   RUN   innermost dimension contiguous on both sides: one memcpy per row;
 *   ELEM  strided element loop (gathers with an innermost src stride, broadcasts with stride 0);
 *   TILE  a transpose: the innermost dst dimension is strided in src and some other dimension is
 *         contiguous in src (or the mirror case); copied in 2-D cache blocks.
 * Rows (and tile blocks) are split over the pool when the copy is large. */
#include <string.h>
#include "../ops/tensor/tensor_common.h"

enum { K_RUN, K_ELEM, K_TILE };
#define TILE 32                      /* tile edge in elements */
#define PAR_MIN_BYTES (256 * 1024)   /* smaller copies run inline */
#define CHUNK_BYTES (32 * 1024)      /* target work per parallel chunk */

typedef struct nd_job {
    sh_nd p;                         /* simplified plan */
    size_t esize;
    char *dst;
    const char *src;
    int kind;
    int a, b;                        /* TILE: a = innermost dim, b = its partner */
    int n_outer;
    int outer[SH_MAX_ND];            /* dims iterated by the row odometer, outermost first */
    size_t nblk;                     /* TILE: blocks along b per outer row; else 1 */
    size_t run_bytes;                /* RUN: bytes per row */
} nd_job;

#define SH_ELEM_FNS(ES)                                                                                        \
    static void elem_##ES(char *d, const char *s, int64_t n, int64_t ds, int64_t ss) {                        \
        for (int64_t i = 0; i < n; i++) memcpy(d + i * ds * ES, s + i * ss * ES, ES);                          \
    }                                                                                                          \
    static void tile_##ES(char *d, const char *s, int64_t nb, int64_t na, int64_t dsb, int64_t dsa,           \
                          int64_t ssb, int64_t ssa) {                                                          \
        for (int64_t a0 = 0; a0 < na; a0 += TILE) {                                                            \
            int64_t a1 = a0 + TILE < na ? a0 + TILE : na;                                                      \
            for (int64_t ib = 0; ib < nb; ib++)                                                                \
                for (int64_t ia = a0; ia < a1; ia++)                                                           \
                    memcpy(d + (ib * dsb + ia * dsa) * ES, s + (ib * ssb + ia * ssa) * ES, ES);                \
        }                                                                                                      \
    }
SH_ELEM_FNS(1)
SH_ELEM_FNS(2)
SH_ELEM_FNS(4)
SH_ELEM_FNS(8)
SH_ELEM_FNS(16)

static void elem_any(size_t es, char *d, const char *s, int64_t n, int64_t ds, int64_t ss) {
    switch (es) {
    case 1: elem_1(d, s, n, ds, ss); return;
    case 2: elem_2(d, s, n, ds, ss); return;
    case 4: elem_4(d, s, n, ds, ss); return;
    case 8: elem_8(d, s, n, ds, ss); return;
    case 16: elem_16(d, s, n, ds, ss); return;
    default:
        for (int64_t i = 0; i < n; i++) memcpy(d + i * ds * (int64_t)es, s + i * ss * (int64_t)es, es);
    }
}

#if defined(__SSE2__)
#include <emmintrin.h>
/* 4-byte transpose of an n0 x n1 block whose source is contiguous along 0 and destination along 1,
 * in 4x4 register transposes. Power-of-two row strides make the scalar loop thrash L1 sets; this
 * touches each cache line once per 4 elements instead. */
static void tile4_sse(char *d, const char *s, int64_t n0, int64_t n1, int64_t ds0, int64_t ss1) {
    const float *S = (const float *)s;
    float *D = (float *)d;
    int64_t i1 = 0;
    for (; i1 + 4 <= n1; i1 += 4) {
        int64_t i0 = 0;
        for (; i0 + 4 <= n0; i0 += 4) {
            __m128 r0 = _mm_loadu_ps(S + (i1 + 0) * ss1 + i0), r1 = _mm_loadu_ps(S + (i1 + 1) * ss1 + i0);
            __m128 r2 = _mm_loadu_ps(S + (i1 + 2) * ss1 + i0), r3 = _mm_loadu_ps(S + (i1 + 3) * ss1 + i0);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(D + (i0 + 0) * ds0 + i1, r0);
            _mm_storeu_ps(D + (i0 + 1) * ds0 + i1, r1);
            _mm_storeu_ps(D + (i0 + 2) * ds0 + i1, r2);
            _mm_storeu_ps(D + (i0 + 3) * ds0 + i1, r3);
        }
        for (; i0 < n0; i0++)
            for (int64_t k = 0; k < 4; k++) memcpy(D + i0 * ds0 + i1 + k, S + (i1 + k) * ss1 + i0, 4);
    }
    for (; i1 < n1; i1++)
        for (int64_t i0 = 0; i0 < n0; i0++) memcpy(D + i0 * ds0 + i1, S + i1 * ss1 + i0, 4);
}
#endif

static void tile_any(size_t es, char *d, const char *s, int64_t nb, int64_t na, int64_t dsb, int64_t dsa,
                     int64_t ssb, int64_t ssa) {
#if defined(__SSE2__)
    if (es == 4 && ((ssb == 1 && dsa == 1) || (ssa == 1 && dsb == 1))) {
        for (int64_t a0 = 0; a0 < na; a0 += TILE) {
            int64_t a1 = a0 + TILE < na ? a0 + TILE : na;
            char *dd = d + a0 * dsa * 4;
            const char *ss = s + a0 * ssa * 4;
            if (ssb == 1) tile4_sse(dd, ss, nb, a1 - a0, dsb, ssa);
            else tile4_sse(dd, ss, a1 - a0, nb, dsa, ssb);
        }
        return;
    }
#endif
    switch (es) {
    case 1: tile_1(d, s, nb, na, dsb, dsa, ssb, ssa); return;
    case 2: tile_2(d, s, nb, na, dsb, dsa, ssb, ssa); return;
    case 4: tile_4(d, s, nb, na, dsb, dsa, ssb, ssa); return;
    case 8: tile_8(d, s, nb, na, dsb, dsa, ssb, ssa); return;
    case 16: tile_16(d, s, nb, na, dsb, dsa, ssb, ssa); return;
    default:
        for (int64_t ib = 0; ib < nb; ib++) elem_any(es, d + ib * dsb * (int64_t)es, s + ib * ssb * (int64_t)es, na, dsa, ssa);
    }
}

/* Drops size-1 dims and merges dims that are contiguous in both src and dst. Returns 0 when the
 * copy is empty. */
static int simplify(const sh_nd *in, sh_nd *out) {
    int r = 0;
    int64_t dims[SH_MAX_ND], ss[SH_MAX_ND], ds[SH_MAX_ND];
    for (int i = 0; i < in->rank; i++) {
        if (in->dims[i] == 0) return 0;
        if (in->dims[i] == 1) continue;
        dims[r] = in->dims[i]; ss[r] = in->ss[i]; ds[r] = in->ds[i]; r++;
    }
    /* merge from the inside out into reversed arrays, then flip */
    int64_t md[SH_MAX_ND], ms[SH_MAX_ND], mdd[SH_MAX_ND];
    int m = 0;
    for (int i = r - 1; i >= 0; i--) {
        if (m > 0 && ss[i] == ms[m - 1] * md[m - 1] && ds[i] == mdd[m - 1] * md[m - 1]) {
            md[m - 1] *= dims[i];
            continue;
        }
        md[m] = dims[i]; ms[m] = ss[i]; mdd[m] = ds[i]; m++;
    }
    out->rank = m;
    for (int i = 0; i < m; i++) {
        out->dims[i] = md[m - 1 - i]; out->ss[i] = ms[m - 1 - i]; out->ds[i] = mdd[m - 1 - i];
    }
    return 1;
}

static void nd_rows(void *arg, size_t begin, size_t end) {
    const nd_job *j = arg;
    const sh_nd *p = &j->p;
    int64_t idx[SH_MAX_ND];
    size_t lin = begin / j->nblk, blk = begin % j->nblk;
    int64_t so = 0, dof = 0;
    for (int k = j->n_outer - 1; k >= 0; k--) {
        int d = j->outer[k];
        idx[k] = (int64_t)(lin % (size_t)p->dims[d]);
        lin /= (size_t)p->dims[d];
        so += idx[k] * p->ss[d];
        dof += idx[k] * p->ds[d];
    }
    const int64_t es = (int64_t)j->esize;
    const int last = p->rank - 1;
    for (size_t it = begin; it < end; it++) {
        char *d = j->dst + dof * es;
        const char *s = j->src + so * es;
        switch (j->kind) {
        case K_RUN:
            memcpy(d, s, j->run_bytes);
            break;
        case K_ELEM:
            elem_any(j->esize, d, s, p->dims[last], p->ds[last], p->ss[last]);
            break;
        default: {
            int64_t b0 = (int64_t)blk * TILE, nb = p->dims[j->b] - b0;
            if (nb > TILE) nb = TILE;
            tile_any(j->esize, d + b0 * p->ds[j->b] * es, s + b0 * p->ss[j->b] * es, nb, p->dims[j->a],
                     p->ds[j->b], p->ds[j->a], p->ss[j->b], p->ss[j->a]);
        }
        }
        if (++blk < j->nblk) continue;
        blk = 0;
        for (int k = j->n_outer - 1; k >= 0; k--) {
            int dd = j->outer[k];
            idx[k]++;
            so += p->ss[dd];
            dof += p->ds[dd];
            if (idx[k] < p->dims[dd]) break;
            so -= p->ss[dd] * p->dims[dd];
            dof -= p->ds[dd] * p->dims[dd];
            idx[k] = 0;
        }
    }
}

typedef struct flat_job { char *dst; const char *src; size_t bytes; } flat_job;
static void flat_rows(void *arg, size_t begin, size_t end) {
    const flat_job *f = arg;
    size_t b0 = begin * CHUNK_BYTES, b1 = end * CHUNK_BYTES;
    if (b1 > f->bytes) b1 = f->bytes;
    memcpy(f->dst + b0, f->src + b0, b1 - b0);
}

void sh_nd_copy(cort_pool *pool, size_t esize, void *dst, const void *src, const sh_nd *plan) {
    nd_job j;
    if (!simplify(plan, &j.p)) return;
    sh_nd *p = &j.p;
    if (p->rank == 0) { memcpy(dst, src, esize); return; }
    j.esize = esize; j.dst = dst; j.src = src; j.nblk = 1; j.run_bytes = 0;
    size_t total = esize;
    for (int i = 0; i < p->rank; i++) total *= (size_t)p->dims[i];
    const int last = p->rank - 1;
    int parallel = pool && cort_pool_threads(pool) > 1 && total >= PAR_MIN_BYTES;

    if (p->ss[last] == 1 && p->ds[last] == 1) {
        if (p->rank == 1) {   /* one flat block */
            if (!parallel) { memcpy(dst, src, total); return; }
            flat_job f = { dst, src, total };
            cort_parallel_for(pool, (total + CHUNK_BYTES - 1) / CHUNK_BYTES, 1, flat_rows, &f);
            return;
        }
        j.kind = K_RUN;
        j.run_bytes = (size_t)p->dims[last] * esize;
    } else {
        j.kind = K_ELEM;
        int partner = -1;
        if (p->dims[last] >= 4) {
            for (int i = 0; i < last; i++) {
                if (p->dims[i] < 8) continue;
                if ((p->ds[last] == 1 && p->ss[i] == 1) || (p->ss[last] == 1 && p->ds[i] == 1)) { partner = i; break; }
            }
        }
        if (partner >= 0) {
            j.kind = K_TILE;
            j.a = last;
            j.b = partner;
            j.nblk = ((size_t)p->dims[partner] + TILE - 1) / TILE;
        }
    }
    j.n_outer = 0;
    for (int i = 0; i < last; i++)
        if (j.kind != K_TILE || i != j.b) j.outer[j.n_outer++] = i;
    size_t items = j.nblk;
    for (int k = 0; k < j.n_outer; k++) items *= (size_t)p->dims[j.outer[k]];
    if (!parallel || items < 2) { nd_rows(&j, 0, items); return; }
    size_t per_item = total / items;
    size_t grain = per_item ? CHUNK_BYTES / per_item : items;
    if (grain < 1) grain = 1;
    cort_parallel_for(pool, items, grain, nd_rows, &j);
}
