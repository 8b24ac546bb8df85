/* LinearAttention-27: the recurrent (state-space) form of attention. Per (batch, KV head) a state
 * S[d_k][d_v] runs over the time steps t:
 *   gated rules:  S *= exp(decay_t)                 (per key dim, or one value per head)
 *   delta rules:  v_t = beta_t * (v_t - S^T (erase_t * k_t))
 *   always:       S += k_t v_t^T;   o_t = scale * q_t S   for every query head of the group
 * update_rule: linear (neither), gated, delta, gated_delta (default). The state is kept in float;
 * present_state gets past_state's type (query's without one).
 *
 * CausalConvWithState-27: a depthwise causal 1-D convolution over [B, C, L] whose left context is
 * the carried state (k - 1 positions, zeros without past_state), optional bias and fused
 * SiLU; present_state holds the last k - 1 positions of context + input. */
#include <math.h>
#include <string.h>
#include "tx_common.h"

/* ---------------- LinearAttention ---------------- */
typedef struct la_job {
    const float *q, *k, *v, *past, *decay, *beta, *erase;
    float *y, *state;
    size_t B, T, Hq, Hkv, dk, dv;
    size_t decay_w, beta_w;     /* decay: 1 or d_k values per head; beta: kv_num_heads or 1 per step */
    int gating, delta;
    float scale;
} la_job;

static void la_heads(void *arg, size_t begin, size_t end) {
    const la_job *j = arg;
    const size_t dk = j->dk, dv = j->dv, group = j->Hq / j->Hkv;
    float vbuf[512], kbuf[512];
    for (size_t bh = begin; bh < end; bh++) {
        const size_t b = bh / j->Hkv, h = bh % j->Hkv;
        float *S = j->state + bh * dk * dv;
        if (j->past) memcpy(S, j->past + bh * dk * dv, dk * dv * sizeof(float));
        else memset(S, 0, dk * dv * sizeof(float));
        for (size_t t = 0; t < j->T; t++) {
            const size_t bt = b * j->T + t;
            const float *kt = j->k + (bt * j->Hkv + h) * dk;
            const float *vt = j->v + (bt * j->Hkv + h) * dv;
            if (j->gating) {
                const float *g = j->decay + (bt * j->Hkv + h) * j->decay_w;
                for (size_t d = 0; d < dk; d++) {
                    const float e = expf(g[j->decay_w == 1 ? 0 : d]);
                    float *row = S + d * dv;
                    for (size_t m = 0; m < dv; m++) row[m] *= e;
                }
            }
            const float *vw = vt;
            for (size_t m0 = 0; m0 < dv; m0 += 512) {
                const size_t mn = dv - m0 < 512 ? dv - m0 : 512;
                if (j->delta) {
                    const float bt_ = j->beta[j->beta_w == 1 ? bt : bt * j->Hkv + h];
                    const float *ke = kt;
                    if (j->erase) {
                        const float *eg = j->erase + (bt * j->Hkv + h) * dk;
                        for (size_t d = 0; d < dk; d++) kbuf[d] = eg[d] * kt[d];   /* dk <= 512: checked */
                        ke = kbuf;
                    }
                    for (size_t m = 0; m < mn; m++) vbuf[m] = 0.0f;
                    for (size_t d = 0; d < dk; d++) {
                        const float kd = ke[d];
                        const float *row = S + d * dv + m0;
                        for (size_t m = 0; m < mn; m++) vbuf[m] += row[m] * kd;
                    }
                    for (size_t m = 0; m < mn; m++) vbuf[m] = bt_ * (vt[m0 + m] - vbuf[m]);
                    vw = vbuf;
                } else {
                    vw = vt + m0;
                }
                for (size_t d = 0; d < dk; d++) {
                    const float kd = kt[d];
                    float *row = S + d * dv + m0;
                    for (size_t m = 0; m < mn; m++) row[m] += kd * vw[m];
                }
            }
            for (size_t gq = 0; gq < group; gq++) {
                const size_t hq = h * group + gq;
                const float *qt = j->q + (bt * j->Hq + hq) * dk;
                float *o = j->y + (bt * j->Hq + hq) * dv;
                for (size_t m = 0; m < dv; m++) o[m] = 0.0f;
                for (size_t d = 0; d < dk; d++) {
                    const float qd = qt[d] * j->scale;
                    const float *row = S + d * dv;
                    for (size_t m = 0; m < dv; m++) o[m] += qd * row[m];
                }
            }
        }
    }
}

static cort_status *la_bad(cort_kernel_ctx *ctx, size_t i, const char *name, const char *want) {
    const cort_value *v = nn_opt_input(ctx, i);
    char buf[160];
    return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' has shape %s, expected %s", i, name,
                           v ? nn_shape(v, buf, sizeof buf) : "(absent)", want);
}

static cort_status *la_infer(cort_infer_ctx *ctx) {
    cort_type t = ctx->inputs[0].elem;
    nn_infer_type(ctx, 0, t);
    nn_infer_type(ctx, 1, nn_infer_has(ctx, 3) ? ctx->inputs[3].elem : t);
    return NULL;
}

static cort_status *la_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    const char *rule = cort_attr_str(node, "update_rule", "gated_delta");
    int gating, delta;
    if (!strcmp(rule, "linear")) gating = 0, delta = 0;
    else if (!strcmp(rule, "gated")) gating = 1, delta = 0;
    else if (!strcmp(rule, "delta")) gating = 0, delta = 1;
    else if (!strcmp(rule, "gated_delta")) gating = 1, delta = 1;
    else return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'update_rule' = '%s', expected linear, "
                                "gated, delta or gated_delta", rule);
    const int64_t hq = cort_attr_int(node, "q_num_heads", 0), hkv = cort_attr_int(node, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv)
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attributes q_num_heads = %lld, kv_num_heads = %lld: "
                               "need positive counts, q a multiple of kv", (long long)hq, (long long)hkv);
    static const char *const names[3] = { "query", "key", "value" };
    for (size_t i = 0; i < 3; i++) CORT_TRY(nn_check_input(ctx, i, names[i], 3, 3));
    const cort_value *q = ctx->inputs[0], *k = ctx->inputs[1], *v = ctx->inputs[2];
    const cort_value *past = nn_opt_input(ctx, 3), *decay = nn_opt_input(ctx, 4), *beta = nn_opt_input(ctx, 5);
    const cort_value *erase = nn_opt_input(ctx, 6);
    const size_t B = (size_t)q->shape[0], T = (size_t)q->shape[1], Hq = (size_t)hq, Hkv = (size_t)hkv;
    if (q->shape[2] % hq || v->shape[2] % hkv)
        return la_bad(ctx, 0, "query", "a last dim divisible by q_num_heads (and value's by kv_num_heads)");
    const size_t dk = (size_t)q->shape[2] / Hq, dv = (size_t)v->shape[2] / Hkv;
    if ((size_t)k->shape[0] != B || (size_t)k->shape[1] != T || (size_t)k->shape[2] != Hkv * dk)
        return la_bad(ctx, 1, "key", "[batch, seq, kv_num_heads * d_k] matching query");
    if ((size_t)v->shape[0] != B || (size_t)v->shape[1] != T)
        return la_bad(ctx, 2, "value", "[batch, seq, kv_num_heads * d_v] matching query");
    if (gating != !!decay) return la_bad(ctx, 4, "decay", gating ? "present for a gated update_rule" : "absent");
    if (delta != !!beta) return la_bad(ctx, 5, "beta", delta ? "present for a delta update_rule" : "absent");
    if (erase && !delta) return la_bad(ctx, 6, "erase_gate", "absent unless update_rule is delta or gated_delta");
    size_t decay_w = 0, beta_w = 0;
    if (decay) {
        if (decay->rank != 3 || (size_t)decay->shape[0] != B || (size_t)decay->shape[1] != T ||
            ((size_t)decay->shape[2] != Hkv && (size_t)decay->shape[2] != Hkv * dk))
            return la_bad(ctx, 4, "decay", "[batch, seq, kv_num_heads] or [batch, seq, kv_num_heads * d_k]");
        decay_w = (size_t)decay->shape[2] == Hkv ? 1 : dk;
    }
    if (beta) {
        if (beta->rank != 3 || (size_t)beta->shape[0] != B || (size_t)beta->shape[1] != T ||
            ((size_t)beta->shape[2] != Hkv && beta->shape[2] != 1))
            return la_bad(ctx, 5, "beta", "[batch, seq, kv_num_heads] or [batch, seq, 1]");
        beta_w = (size_t)beta->shape[2];
    }
    if (erase && (erase->rank != 3 || (size_t)erase->shape[0] != B || (size_t)erase->shape[1] != T ||
                  (size_t)erase->shape[2] != Hkv * dk))
        return la_bad(ctx, 6, "erase_gate", "[batch, seq, kv_num_heads * d_k]");
    if (past && (past->rank != 4 || (size_t)past->shape[0] != B || (size_t)past->shape[1] != Hkv ||
                 (size_t)past->shape[2] != dk || (size_t)past->shape[3] != dv))
        return la_bad(ctx, 3, "past_state", "[batch, kv_num_heads, d_k, d_v]");
    if (erase && dk > 512) return la_bad(ctx, 6, "erase_gate", "d_k <= 512");
    const int has_scale = cort_attr_get(node, "scale") != NULL;
    float scale = cort_attr_float(node, "scale", 0.0f);
    if (!has_scale || scale == 0.0f) scale = (float)(1.0 / sqrt((double)(dk ? dk : 1)));
    int64_t yd[3] = { (int64_t)B, (int64_t)T, (int64_t)(Hq * dv) }, sd[4] = { (int64_t)B, (int64_t)Hkv, (int64_t)dk,
                                                                                 (int64_t)dv };
    cort_value *y, *ps = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, q->type, yd, 3, &y));
    if (ctx->n_outputs > 1 && node->out_slot[1] >= 0)
        CORT_TRY(cort_kernel_output(ctx, 1, past ? past->type : q->type, sd, 4, &ps));
    nn_fbuf f[7], fy = { 0 };
    memset(f, 0, sizeof f);
    float *state = cort_kernel_scratch(ctx, (B * Hkv * dk * dv + 1) * sizeof(float));
    cort_status *st = state ? NULL : cort_error_oom();
    for (size_t i = 0; i < 7 && !st; i++)
        if (nn_opt_input(ctx, i)) st = tx_fbuf_in(ctx, ctx->inputs[i], &f[i]);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    if (!st) {
        la_job j = { f[0].p, f[1].p, f[2].p, f[3].p, f[4].p, f[5].p, f[6].p, fy.p, state, B, T, Hq, Hkv, dk, dv,
                     decay_w, beta_w, gating, delta, scale };
        cort_parallel_for(B * Hkv * T * dk * dv < 16384 ? NULL : ctx->pool, B * Hkv, 1, la_heads, &j);
        nn_fbuf_commit(&fy, y);
        if (ps) nn_f32_to_type(state, ps->data, ps->type, ps->count);
    }
    cort_kernel_scratch_free(ctx, state);
    for (size_t i = 0; i < 7; i++) tx_fbuf_free(ctx, &f[i]);
    tx_fbuf_free(ctx, &fy);
    return st;
}

/* ---------------- CausalConvWithState ---------------- */
typedef struct cc_job {
    const float *x, *w, *bias, *past;
    float *y, *present;
    size_t C, L, K;
    int silu;
} cc_job;

static void cc_rows(void *arg, size_t begin, size_t end) {
    const cc_job *j = arg;
    const size_t L = j->L, K = j->K, P = K - 1;
    for (size_t bc = begin; bc < end; bc++) {
        const size_t c = bc % j->C;
        const float *x = j->x + bc * L, *w = j->w + c * K, *past = j->past ? j->past + bc * P : NULL;
        float *y = j->y + bc * L;
        const float b0 = j->bias ? j->bias[c] : 0.0f;
        for (size_t t = 0; t < L; t++) {
            /* context position p of output t is t + p in [past (P), input (L)] */
            float acc = b0;
            for (size_t p = 0; p < K; p++) {
                const size_t at = t + p;
                const float xv = at < P ? (past ? past[at] : 0.0f) : x[at - P];
                acc += w[p] * xv;
            }
            y[t] = acc;
        }
        if (j->silu) {
            const nn_act a = { CORT_ACT_SILU, 0.0f, 0.0f };
            nn_act_apply(&a, y, L);
        }
        if (j->present) {
            float *ps = j->present + bc * P;
            for (size_t p = 0; p < P; p++) {
                const size_t at = L + p;   /* the last P of the P + L context positions */
                ps[p] = at < P ? (past ? past[at] : 0.0f) : x[at - P];
            }
        }
    }
}

static cort_status *cc_infer(cort_infer_ctx *ctx) {
    cort_infer_same(ctx);
    nn_infer_type(ctx, 1, ctx->inputs[0].elem);
    return NULL;
}

static cort_status *cc_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    const char *act = cort_attr_str(node, "activation", "none");
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish"))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'activation' = '%s', expected none, silu or "
                               "swish", act);
    CORT_TRY(nn_check_input(ctx, 0, "input", 3, 3));
    CORT_TRY(nn_check_input(ctx, 1, "weight", 3, 3));
    const cort_value *x = ctx->inputs[0], *w = ctx->inputs[1], *bias = nn_opt_input(ctx, 2),
                     *past = nn_opt_input(ctx, 3);
    const size_t B = (size_t)x->shape[0], C = (size_t)x->shape[1], L = (size_t)x->shape[2], K = (size_t)w->shape[2];
    if ((size_t)w->shape[0] != C || w->shape[1] != 1 || K < 1)
        return la_bad(ctx, 1, "weight", "[channels, 1, kernel_size >= 1]");
    if (bias && (bias->rank != 1 || (size_t)bias->shape[0] != C)) return la_bad(ctx, 2, "bias", "[channels]");
    if (past && (past->rank != 3 || (size_t)past->shape[0] != B || (size_t)past->shape[1] != C ||
                 (size_t)past->shape[2] != K - 1))
        return la_bad(ctx, 3, "past_state", "[batch, channels, kernel_size - 1]");
    int64_t pd[3] = { (int64_t)B, (int64_t)C, (int64_t)(K - 1) };
    cort_value *y, *ps = NULL;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, x->shape, 3, &y));
    if (ctx->n_outputs > 1 && node->out_slot[1] >= 0) CORT_TRY(cort_kernel_output(ctx, 1, x->type, pd, 3, &ps));
    nn_fbuf f[4], fy = { 0 }, fp = { 0 };
    memset(f, 0, sizeof f);
    cort_status *st = NULL;
    for (size_t i = 0; i < 4 && !st; i++)
        if (nn_opt_input(ctx, i)) st = tx_fbuf_in(ctx, ctx->inputs[i], &f[i]);
    if (!st) st = tx_fbuf_out(ctx, y, &fy);
    if (!st && ps) st = tx_fbuf_out(ctx, ps, &fp);
    if (!st) {
        cc_job j = { f[0].p, f[1].p, f[2].p, f[3].p, fy.p, ps ? fp.p : NULL, C, L, K, strcmp(act, "none") != 0 };
        cort_parallel_for(x->count * K < 32768 ? NULL : ctx->pool, B * C, 1, cc_rows, &j);
        nn_fbuf_commit(&fy, y);
        if (ps) nn_fbuf_commit(&fp, ps);
    }
    for (size_t i = 0; i < 4; i++) tx_fbuf_free(ctx, &f[i]);
    tx_fbuf_free(ctx, &fy);
    tx_fbuf_free(ctx, &fp);
    return st;
}

const cort_op_def nn_op_causal_conv_with_state = { .name = "CausalConvWithState", .domain = "", .min_opset = 27,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = cc_infer, .run = cc_run };
const cort_op_def nn_op_linear_attention = { .name = "LinearAttention", .domain = "", .min_opset = 27,
    .max_opset = CORT_OPSET_MAX, .types = CORT_TMASK_FLOATS, .type_input = 0, .infer = la_infer, .run = la_run };
