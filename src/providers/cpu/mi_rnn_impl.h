/* Recurrent cell math, instantiated for float and double by mi_rnn_math.c with
 *   MI_T (element type), MI_FN(name) (suffixing), MI_EXP / MI_TANH / MI_LOG1P (libm for MI_T).
 * Layout: W/R are transposed once per direction to [K, G*H] so every product is a row-times-matrix
 * axpy over contiguous memory; the input projection covers all timesteps in one GEMM. */

/* C[M,N] += A[M,K] * B[K,N] (row-major, explicit leading dimensions). */
static void MI_FN(gemm_nn)(size_t M, size_t N, size_t K, const MI_T *A, size_t lda, const MI_T *B, size_t ldb,
                           MI_T *C, size_t ldc) {
    const size_t KB = 128;   /* k-block keeps a slab of B hot while four rows of C accumulate */
    for (size_t k0 = 0; k0 < K; k0 += KB) {
        size_t k1 = k0 + KB < K ? k0 + KB : K;
        size_t m = 0;
        for (; m + 4 <= M; m += 4) {
            MI_T *c0 = C + m * ldc, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
            const MI_T *a0 = A + m * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
            for (size_t k = k0; k < k1; k++) {
                const MI_T *b = B + k * ldb;
                MI_T x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
                for (size_t n = 0; n < N; n++) {
                    MI_T bv = b[n];
                    c0[n] += x0 * bv; c1[n] += x1 * bv; c2[n] += x2 * bv; c3[n] += x3 * bv;
                }
            }
        }
        for (; m < M; m++) {
            MI_T *c = C + m * ldc;
            const MI_T *a = A + m * lda;
            for (size_t k = k0; k < k1; k++) {
                const MI_T *b = B + k * ldb;
                MI_T x = a[k];
                for (size_t n = 0; n < N; n++) c[n] += x * b[n];
            }
        }
    }
}

typedef struct MI_FN(proj_job) {
    size_t N, K, ldx;
    const MI_T *X, *Wt;
    MI_T *XW;
} MI_FN(proj_job);

static void MI_FN(proj_range)(void *arg, size_t begin, size_t end) {
    const MI_FN(proj_job) *j = arg;
    MI_FN(gemm_nn)(end - begin, j->N, j->K, j->X + begin * j->ldx, j->ldx, j->Wt, j->N, j->XW + begin * j->N, j->N);
}

static MI_T MI_FN(sigmoid)(MI_T x) {
    if (x >= 0) return (MI_T)1 / ((MI_T)1 + MI_EXP(-x));
    MI_T e = MI_EXP(x);
    return e / ((MI_T)1 + e);
}

/* In-place activation of n values, clipping first when the node has a clip attribute. */
static void MI_FN(activate)(const mi_act *f, const mi_rnn_state *st, MI_T *x, size_t n) {
    if (st->has_clip) {
        MI_T c = (MI_T)st->clip;
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

cort_status *MI_FN(mi_rnn_compute)(const mi_rnn_args *a) {
    const mi_rnn_state *st = a->st;
    const size_t S = (size_t)a->S, Bt = (size_t)a->Bt, I = (size_t)a->I, H = (size_t)a->H, D = (size_t)a->D;
    const size_t G = (size_t)a->G, GH = G * H;
    const int layout = st->layout;
    cort_status *status = NULL;
    /* one block of scratch, carved below */
    size_t n_wt = I * GH, n_rt = H * GH, n_xw = S * Bt * GH, n_gates = Bt * GH, n_bh = Bt * H;
    size_t total = n_wt + n_rt + n_xw + n_gates + 4 * n_bh + 2 * GH;
    MI_T *buf = cort_malloc(total * sizeof(MI_T) + 1);
    if (!buf) return cort_error_oom();
    MI_T *Wt = buf, *Rt = Wt + n_wt, *XW = Rt + n_rt, *gates = XW + n_xw, *h = gates + n_gates, *c = h + n_bh;
    MI_T *tmp = c + n_bh, *tmp2 = tmp + n_bh, *bias = tmp2 + n_bh, *rbh = bias + GH;
    const MI_T *X = a->X;

    for (size_t d = 0; d < D; d++) {
        const int rev = st->direction == MI_DIR_REVERSE || (st->direction == MI_DIR_BIDI && d == 1);
        const mi_act *act = &st->act[d * (size_t)st->n_act];
        const MI_T *W = (const MI_T *)a->W + d * GH * I, *R = (const MI_T *)a->R + d * GH * H;
        for (size_t r = 0; r < GH; r++) {
            for (size_t k = 0; k < I; k++) Wt[k * GH + r] = W[r * I + k];
            for (size_t k = 0; k < H; k++) Rt[k * GH + r] = R[r * H + k];
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
        MI_FN(proj_job) job = { GH, I, I, X, Wt, XW };
        cort_parallel_for(a->pool, S * Bt, 16, MI_FN(proj_range), &job);

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
            for (size_t b = 0; b < Bt; b++) {
                size_t row = layout ? b * S + t : t * Bt + b;
                memcpy(gates + b * GH, XW + row * GH, GH * sizeof(MI_T));
            }
            if (st->cell == MI_CELL_GRU) {
                /* z and r see h directly; the candidate sees r (.) h (or r (.) (h Rh + Rbh)) */
                MI_FN(gemm_nn)(Bt, 2 * H, H, h, H, Rt, GH, gates, GH);
                for (size_t b = 0; b < Bt; b++) {
                    MI_FN(activate)(&act[0], st, gates + b * GH, 2 * H);
                }
                if (st->linear_before_reset) {
                    for (size_t b = 0; b < Bt; b++) memcpy(tmp + b * H, rbh, H * sizeof(MI_T));
                    MI_FN(gemm_nn)(Bt, H, H, h, H, Rt + 2 * H, GH, tmp, H);
                    for (size_t b = 0; b < Bt; b++)
                        for (size_t j = 0; j < H; j++) gates[b * GH + 2 * H + j] += gates[b * GH + H + j] * tmp[b * H + j];
                } else {
                    for (size_t b = 0; b < Bt; b++)
                        for (size_t j = 0; j < H; j++) tmp[b * H + j] = gates[b * GH + H + j] * h[b * H + j];
                    MI_FN(gemm_nn)(Bt, H, H, tmp, H, Rt + 2 * H, GH, gates + 2 * H, GH);
                }
                for (size_t b = 0; b < Bt; b++) MI_FN(activate)(&act[1], st, gates + b * GH + 2 * H, H);
            } else {
                MI_FN(gemm_nn)(Bt, GH, H, h, H, Rt, GH, gates, GH);
            }
            for (size_t b = 0; b < Bt; b++) {
                MI_T *hb = h + b * H, *cb = c + b * H, *g = gates + b * GH;
                const int active = t < (size_t)a->lens[b];
                if (active) {
                    if (st->cell == MI_CELL_RNN) {
                        MI_FN(activate)(&act[0], st, g, H);
                        memcpy(hb, g, H * sizeof(MI_T));
                    } else if (st->cell == MI_CELL_GRU) {
                        for (size_t j = 0; j < H; j++) hb[j] = ((MI_T)1 - g[j]) * g[2 * H + j] + g[j] * hb[j];
                    } else {
                        /* gate blocks: i, o, f, c; peepholes: i, o, f */
                        MI_T *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
                        if (P) for (size_t j = 0; j < H; j++) { gi[j] += P[j] * cb[j]; gf[j] += P[2 * H + j] * cb[j]; }
                        MI_FN(activate)(&act[0], st, gi, H);
                        if (st->input_forget) for (size_t j = 0; j < H; j++) gf[j] = (MI_T)1 - gi[j];
                        else MI_FN(activate)(&act[0], st, gf, H);
                        MI_FN(activate)(&act[1], st, gc, H);
                        for (size_t j = 0; j < H; j++) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
                        if (P) for (size_t j = 0; j < H; j++) go[j] += P[H + j] * cb[j];
                        MI_FN(activate)(&act[0], st, go, H);
                        /* h(C) without clipping: clip applies to gate inputs only */
                        memcpy(tmp2 + b * H, cb, H * sizeof(MI_T));
                        mi_rnn_state noclip = *st;
                        noclip.has_clip = 0;
                        MI_FN(activate)(&act[2], &noclip, tmp2 + b * H, H);
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
    cort_free(buf);
    return status;
}
