/* Recurrent cell math, instantiated for float and double by ops/rnn/rnn_cell.c with
 *   MI_T (element type), MI_FN(name) (suffixing), MI_COMPUTE (the entry point's full name, so that
 *   grep finds mi_rnn_compute_f32 / _f64 in rnn_cell.c), MI_EXP / MI_TANH / MI_LOG1P (libm for MI_T).
 * W and R are packed once per direction into GEMM panels; the input projection covers all timesteps
 * in one GEMM, each step then adds h * R^T. */

/* ---- GEMM: C[M,N] += A[M,K] * B^T, with B given as N rows of K values (W, R) and packed once into
 * panels of MI_NR columns: panel p holds B rows p*NR.. p*NR+NR-1 interleaved per k (zero padded),
 * so the micro-kernel streams it linearly while a 4 x NR tile of C lives in vector registers. ---- */
typedef MI_T MI_FN(vec) __attribute__((vector_size(16)));
#define MI_VL (16 / sizeof(MI_T))
#define MI_NR (2 * MI_VL)

static inline MI_FN(vec) MI_FN(vload)(const MI_T *p) { MI_FN(vec) v; memcpy(&v, p, sizeof v); return v; }
static inline void MI_FN(vstore)(MI_T *p, MI_FN(vec) v) { memcpy(p, &v, sizeof v); }

static size_t MI_FN(panels)(size_t N) { return (N + MI_NR - 1) / MI_NR; }

/* Packs rows [0, N) of B (row stride ldb, K values each) into dst (panels(N) * K * MI_NR values). */
static void MI_FN(pack)(size_t N, size_t K, const MI_T *B, size_t ldb, MI_T *dst) {
    for (size_t p = 0; p < MI_FN(panels)(N); p++)
        for (size_t j = 0; j < MI_NR; j++) {
            size_t n = p * MI_NR + j;
            MI_T *d = dst + p * K * MI_NR + j;
            if (n < N) for (size_t k = 0; k < K; k++) d[k * MI_NR] = B[n * ldb + k];
            else for (size_t k = 0; k < K; k++) d[k * MI_NR] = 0;
        }
}

/* Adds the product of `rows` (1..4) rows of A with one packed panel into C (nv valid columns). */
static void MI_FN(micro)(size_t rows, size_t K, const MI_T *A, size_t lda, const MI_T *bp, MI_T *C, size_t ldc, size_t nv) {
    const MI_FN(vec) zero = { 0 };
    MI_FN(vec) c00 = zero, c01 = zero, c10 = zero, c11 = zero, c20 = zero, c21 = zero, c30 = zero, c31 = zero;
    const MI_T *a0 = A, *a1 = A + (rows > 1 ? lda : 0), *a2 = A + (rows > 2 ? 2 * lda : 0), *a3 = A + (rows > 3 ? 3 * lda : 0);
    if (rows == 4) {
        for (size_t k = 0; k < K; k++, bp += MI_NR) {
            MI_FN(vec) b0 = MI_FN(vload)(bp), b1 = MI_FN(vload)(bp + MI_VL);
            MI_FN(vec) x0 = zero + a0[k], x1 = zero + a1[k], x2 = zero + a2[k], x3 = zero + a3[k];
            c00 += x0 * b0; c01 += x0 * b1; c10 += x1 * b0; c11 += x1 * b1;
            c20 += x2 * b0; c21 += x2 * b1; c30 += x3 * b0; c31 += x3 * b1;
        }
    } else {
        for (size_t k = 0; k < K; k++, bp += MI_NR) {
            MI_FN(vec) b0 = MI_FN(vload)(bp), b1 = MI_FN(vload)(bp + MI_VL);
            MI_FN(vec) x0 = zero + a0[k];
            c00 += x0 * b0; c01 += x0 * b1;
            if (rows > 1) { MI_FN(vec) x1 = zero + a1[k]; c10 += x1 * b0; c11 += x1 * b1; }
            if (rows > 2) { MI_FN(vec) x2 = zero + a2[k]; c20 += x2 * b0; c21 += x2 * b1; }
        }
    }
    MI_T acc[4][MI_NR];
    MI_FN(vstore)(acc[0], c00); MI_FN(vstore)(acc[0] + MI_VL, c01);
    MI_FN(vstore)(acc[1], c10); MI_FN(vstore)(acc[1] + MI_VL, c11);
    MI_FN(vstore)(acc[2], c20); MI_FN(vstore)(acc[2] + MI_VL, c21);
    MI_FN(vstore)(acc[3], c30); MI_FN(vstore)(acc[3] + MI_VL, c31);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < nv; j++) C[r * ldc + j] += acc[r][j];
}

typedef struct MI_FN(gemm_job) {
    size_t M, N, K, lda, ldc;
    const MI_T *A, *Bp;
    MI_T *C;
} MI_FN(gemm_job);

/* Panels [begin, end) for all rows; rows go in blocks of 64 so the A block stays cached across panels. */
static void MI_FN(gemm_range)(void *arg, size_t begin, size_t end) {
    const MI_FN(gemm_job) *j = arg;
    for (size_t m0 = 0; m0 < j->M; m0 += 64) {
        size_t m1 = m0 + 64 < j->M ? m0 + 64 : j->M;
        for (size_t p = begin; p < end; p++) {
            size_t n0 = p * MI_NR, nv = j->N - n0 < MI_NR ? j->N - n0 : MI_NR;
            const MI_T *bp = j->Bp + p * j->K * MI_NR;
            for (size_t m = m0; m < m1; m += 4) {
                size_t rows = m1 - m < 4 ? m1 - m : 4;
                MI_FN(micro)(rows, j->K, j->A + m * j->lda, j->lda, bp, j->C + m * j->ldc + n0, j->ldc, nv);
            }
        }
    }
}

static void MI_FN(gemm)(cort_pool *pool, size_t M, size_t N, size_t K, const MI_T *A, size_t lda, const MI_T *Bp, MI_T *C,
                        size_t ldc) {
    if (M == 0 || N == 0 || K == 0) return;
    MI_FN(gemm_job) job = { M, N, K, lda, ldc, A, Bp, C };
    size_t per_panel = M * K * MI_NR, np = MI_FN(panels)(N);
    size_t grain = per_panel >= (1u << 16) ? 1 : ((size_t)1 << 16) / per_panel;
    if (np <= grain) MI_FN(gemm_range)(&job, 0, np);
    else cort_parallel_for(pool, np, grain, MI_FN(gemm_range), &job);
}

static MI_T MI_FN(sigmoid)(MI_T x) {
    if (x >= 0) return (MI_T)1 / ((MI_T)1 + MI_EXP(-x));
    MI_T e = MI_EXP(x);
    return e / ((MI_T)1 + e);
}

/* In-place activation of n values, clipping to [-clip, clip] first when clip >= 0. */
static void MI_FN(activate)(const mi_act *f, float clip, MI_T *x, size_t n) {
    if (clip >= 0) {
        MI_T c = (MI_T)clip;
        for (size_t i = 0; i < n; i++) x[i] = x[i] < -c ? -c : (x[i] > c ? c : x[i]);
    }
    MI_T al = (MI_T)f->alpha, be = (MI_T)f->beta;
    switch (f->kind) {
    case MI_ACT_RELU:    for (size_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0; break;
    case MI_ACT_TANH:    for (size_t i = 0; i < n; i++) x[i] = MI_TANH(x[i]); break;
    case MI_ACT_SIGMOID: for (size_t i = 0; i < n; i++) x[i] = MI_FN(sigmoid)(x[i]); break;
    case MI_ACT_AFFINE:  for (size_t i = 0; i < n; i++) x[i] = al * x[i] + be; break;
    case MI_ACT_LEAKYRELU: for (size_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * x[i]; break;
    case MI_ACT_THRESHOLDEDRELU: for (size_t i = 0; i < n; i++) x[i] = x[i] > al ? x[i] : 0; break;
    case MI_ACT_SCALEDTANH: for (size_t i = 0; i < n; i++) x[i] = al * MI_TANH(be * x[i]); break;
    case MI_ACT_HARDSIGMOID:
        for (size_t i = 0; i < n; i++) { MI_T v = al * x[i] + be; x[i] = v < 0 ? 0 : (v > 1 ? 1 : v); }
        break;
    case MI_ACT_ELU: for (size_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * (MI_EXP(x[i]) - 1); break;
    case MI_ACT_SOFTSIGN: for (size_t i = 0; i < n; i++) x[i] = x[i] / ((MI_T)1 + (x[i] < 0 ? -x[i] : x[i])); break;
    case MI_ACT_SOFTPLUS:
        for (size_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] + MI_LOG1P(MI_EXP(-x[i])) : MI_LOG1P(MI_EXP(x[i]));
        break;
    default: break;
    }
}

cort_status *MI_COMPUTE(const mi_rnn_args *a) {
    const mi_rnn_state *st = a->st;
    const size_t S = (size_t)a->S, Bt = (size_t)a->Bt, I = (size_t)a->I, H = (size_t)a->H, D = (size_t)a->D;
    const size_t G = (size_t)a->G, GH = G * H;
    const int layout = st->layout;
    /* one block of scratch, carved below */
    size_t n_wt = MI_FN(panels)(GH) * I * MI_NR, n_rt = (MI_FN(panels)(GH) + 2) * H * MI_NR, n_xw = S * Bt * GH, n_gates = Bt * GH, n_bh = Bt * H;
    size_t total = n_wt + n_rt + n_xw + n_gates + 4 * n_bh + 2 * GH;
    MI_T *buf = cort_kernel_scratch(a->kctx, total * sizeof(MI_T) + 1);   /* recycled: no allocation per run */
    if (!buf) return cort_error_oom();
    MI_T *Wp = buf, *Rp = Wp + n_wt, *XW = Rp + n_rt, *gates = XW + n_xw, *h = gates + n_gates, *c = h + n_bh;
    MI_T *tmp = c + n_bh, *tmp2 = tmp + n_bh, *bias = tmp2 + n_bh, *rbh = bias + GH;
    const MI_T *X = a->X;
    const float clip = st->has_clip ? st->clip : -1.0f;

    for (size_t d = 0; d < D; d++) {
        const int rev = st->direction == MI_DIR_REVERSE || (st->direction == MI_DIR_BIDI && d == 1);
        const mi_act *act = &st->act[d * (size_t)st->n_act];
        const MI_T *W = (const MI_T *)a->W + d * GH * I, *R = (const MI_T *)a->R + d * GH * H;
        MI_FN(pack)(GH, I, W, I, Wp);
        /* GRU multiplies the candidate block by a different left operand, so it is packed apart */
        MI_T *Rp_h = Rp;
        if (st->cell == MI_CELL_GRU) {
            MI_FN(pack)(2 * H, H, R, H, Rp);
            Rp_h = Rp + MI_FN(panels)(2 * H) * H * MI_NR;
            MI_FN(pack)(H, H, R + 2 * H * H, H, Rp_h);
        } else {
            MI_FN(pack)(GH, H, R, H, Rp);
        }
        /* bias folded into the projection: Wb + Rb, except GRU's Rbh under linear_before_reset, which
         * must sit inside the reset product */
        for (size_t r = 0; r < GH; r++) bias[r] = 0;
        for (size_t r = 0; r < H; r++) rbh[r] = 0;
        if (a->B) {
            const MI_T *Wb = (const MI_T *)a->B + d * 2 * GH, *Rb = Wb + GH;
            for (size_t r = 0; r < GH; r++) bias[r] = Wb[r] + Rb[r];
            if (st->cell == MI_CELL_GRU && st->linear_before_reset)
                for (size_t r = 0; r < H; r++) { bias[2 * H + r] = Wb[2 * H + r]; rbh[r] = Rb[2 * H + r]; }
        }
        for (size_t row = 0; row < S * Bt; row++) memcpy(XW + row * GH, bias, GH * sizeof(MI_T));
        MI_FN(gemm)(a->pool, S * Bt, GH, I, X, I, Wp, XW, GH);

        /* initial state */
        for (size_t b = 0; b < Bt; b++) {
            size_t off = layout ? (b * D + d) * H : (d * Bt + b) * H;
            if (a->init_h) memcpy(h + b * H, (const MI_T *)a->init_h + off, H * sizeof(MI_T));
            else for (size_t j = 0; j < H; j++) h[b * H + j] = 0;
            if (a->init_c) memcpy(c + b * H, (const MI_T *)a->init_c + off, H * sizeof(MI_T));
            else for (size_t j = 0; j < H; j++) c[b * H + j] = 0;
        }
        const MI_T *P = a->P ? (const MI_T *)a->P + d * 3 * H : NULL;

        for (size_t s = 0; s < S; s++) {
            const size_t t = rev ? S - 1 - s : s;
            if (a->kctx && cort_kernel_cancelled(a->kctx)) {
                cort_kernel_scratch_free(a->kctx, buf);
                return cort_kernel_cancelled_status(a->kctx);
            }
            for (size_t b = 0; b < Bt; b++) {
                size_t row = layout ? b * S + t : t * Bt + b;
                memcpy(gates + b * GH, XW + row * GH, GH * sizeof(MI_T));
            }
            if (st->cell == MI_CELL_GRU) {
                /* z and r see h directly; the candidate sees r (.) h (or r (.) (h Rh + Rbh)) */
                MI_FN(gemm)(a->pool, Bt, 2 * H, H, h, H, Rp, gates, GH);
                for (size_t b = 0; b < Bt; b++) {
                    MI_FN(activate)(&act[0], clip, gates + b * GH, 2 * H);
                }
                if (st->linear_before_reset) {
                    for (size_t b = 0; b < Bt; b++) memcpy(tmp + b * H, rbh, H * sizeof(MI_T));
                    MI_FN(gemm)(a->pool, Bt, H, H, h, H, Rp_h, tmp, H);
                    for (size_t b = 0; b < Bt; b++)
                        for (size_t j = 0; j < H; j++) gates[b * GH + 2 * H + j] += gates[b * GH + H + j] * tmp[b * H + j];
                } else {
                    for (size_t b = 0; b < Bt; b++)
                        for (size_t j = 0; j < H; j++) tmp[b * H + j] = gates[b * GH + H + j] * h[b * H + j];
                    MI_FN(gemm)(a->pool, Bt, H, H, tmp, H, Rp_h, gates + 2 * H, GH);
                }
                for (size_t b = 0; b < Bt; b++) MI_FN(activate)(&act[1], clip, gates + b * GH + 2 * H, H);
            } else {
                MI_FN(gemm)(a->pool, Bt, GH, H, h, H, Rp, gates, GH);
            }
            for (size_t b = 0; b < Bt; b++) {
                MI_T *hb = h + b * H, *cb = c + b * H, *g = gates + b * GH;
                const int active = t < (size_t)a->lens[b];
                if (active) {
                    if (st->cell == MI_CELL_RNN) {
                        MI_FN(activate)(&act[0], clip, g, H);
                        memcpy(hb, g, H * sizeof(MI_T));
                    } else if (st->cell == MI_CELL_GRU) {
                        for (size_t j = 0; j < H; j++) hb[j] = ((MI_T)1 - g[j]) * g[2 * H + j] + g[j] * hb[j];
                    } else {
                        /* gate blocks: i, o, f, c; peepholes: i, o, f */
                        MI_T *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
                        if (P) for (size_t j = 0; j < H; j++) { gi[j] += P[j] * cb[j]; gf[j] += P[2 * H + j] * cb[j]; }
                        MI_FN(activate)(&act[0], clip, gi, H);
                        if (st->input_forget) for (size_t j = 0; j < H; j++) gf[j] = (MI_T)1 - gi[j];
                        else MI_FN(activate)(&act[0], clip, gf, H);
                        MI_FN(activate)(&act[1], clip, gc, H);
                        for (size_t j = 0; j < H; j++) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
                        if (P) for (size_t j = 0; j < H; j++) go[j] += P[H + j] * cb[j];
                        MI_FN(activate)(&act[0], clip, go, H);
                        /* h(C) without clipping: clip applies to gate inputs only */
                        memcpy(tmp2 + b * H, cb, H * sizeof(MI_T));
                        MI_FN(activate)(&act[2], -1.0f, tmp2 + b * H, H);
                        for (size_t j = 0; j < H; j++) hb[j] = go[j] * tmp2[b * H + j];
                    }
                }
                if (a->Y) {
                    MI_T *y = (MI_T *)a->Y + (layout ? ((b * S + t) * D + d) * H : ((t * D + d) * Bt + b) * H);
                    if (active) memcpy(y, hb, H * sizeof(MI_T));
                    else for (size_t j = 0; j < H; j++) y[j] = 0;
                }
            }
        }
        for (size_t b = 0; b < Bt; b++) {
            size_t off = layout ? (b * D + d) * H : (d * Bt + b) * H;
            int empty = a->lens[b] == 0;
            if (a->Y_h) {
                if (empty) for (size_t j = 0; j < H; j++) ((MI_T *)a->Y_h)[off + j] = 0;
                else memcpy((MI_T *)a->Y_h + off, h + b * H, H * sizeof(MI_T));
            }
            if (a->Y_c) {
                if (empty) for (size_t j = 0; j < H; j++) ((MI_T *)a->Y_c)[off + j] = 0;
                else memcpy((MI_T *)a->Y_c + off, c + b * H, H * sizeof(MI_T));
            }
        }
    }
    cort_kernel_scratch_free(a->kctx, buf);
    return NULL;
}
