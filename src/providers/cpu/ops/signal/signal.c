/* Signal operators (opset 17; DFT also 20): DFT, STFT, Hann/Hamming/Blackman windows, MelWeightMatrix.
 * Transforms run in double precision through mi_fft and are stored in the input's type. */
#include <math.h>
#include <string.h>
#include "../misc_common.h"
#include "../../kernels/fft.h"
#include "../../../../core/once.h"

/* The FFT plan of a DFT or STFT node: built by its first run and kept for the runs after it
 * (published once through an atomic pointer, then read-only); a run with another length or
 * direction builds and frees its own. */
typedef struct sig_state {
    cort_slot plan;
} sig_state;

static void sig_plan_release(mi_fft_plan *p) {
    if (!p) return;
    mi_fft_plan_free(p);
    cort_free(p);
}

static cort_status *sig_init(const cort_node *node, void **state) {
    (void)node;
    sig_state *s = cort_calloc(1, sizeof *s);
    if (!s) return cort_error_oom();
    cort_slot_init(&s->plan);
    *state = s;
    return NULL;
}

static void sig_free(void *state) {
    sig_state *s = state;
    if (!s) return;
    sig_plan_release(cort_slot_get(&s->plan));
    cort_free(s);
}

/* *out: the plan for (n, sign); *own: non-NULL when the caller must release it. */
static cort_status *sig_plan(const void *state, size_t n, int sign, const mi_fft_plan **out, mi_fft_plan **own) {
    sig_state *s = (sig_state *)state;   /* the plan slot is the only field a run writes, atomically */
    *own = NULL;
    mi_fft_plan *p = cort_slot_get(&s->plan);
    if (p && p->n == n && p->sign == sign) { *out = p; return NULL; }
    mi_fft_plan *mine = cort_calloc(1, sizeof *mine);
    if (!mine) return cort_error_oom();
    cort_status *st = mi_fft_plan_init(mine, n, sign);
    if (st) { cort_free(mine); return st; }
    *out = mine;
    if (p || !cort_slot_publish(&s->plan, mine)) *own = mine;
    return NULL;
}

#define SIG_TYPES (CORT_TBIT(CORT_TYPE_FLOAT) | CORT_TBIT(CORT_TYPE_DOUBLE) | CORT_TBIT(CORT_TYPE_FLOAT16) | \
                   CORT_TBIT(CORT_TYPE_BFLOAT16))

/* ---- DFT ----
 * Opset 17 takes the axis from an attribute (default 1), opset 20 from the optional input 2
 * (default -2, the last signal axis). onesided with inverse is the inverse real transform in both:
 * a one-sided complex spectrum in, a real signal (last dimension 1) of dft_length out, whose
 * default is 2 * (bins - 1). */
static int dft_axis_input(int opset) { return opset >= 20; }

/* The axis as written (attribute or constant input); *known = 0 when it is a run-time input. */
static int64_t dft_axis_raw(const cort_node *node, int opset, const cort_value *axis_in, int *known) {
    *known = 1;
    if (!dft_axis_input(opset)) return cort_attr_int(node, "axis", 1);
    if (!axis_in) return -2;
    if (axis_in->count != 1 || !cort_type_is_int(axis_in->type)) { *known = 0; return 0; }
    return cort_load_i64(axis_in->data, axis_in->type, 0);
}

static cort_status *dft_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (!x || !ctx->n_outputs) return NULL;
    cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    if (x->rank < 2) return NULL;
    const cort_tinfo *ax = dft_axis_input(ctx->opset) ? mi_tin(ctx, 2) : NULL;
    if (ax && !ax->value) return NULL;
    int known;
    int64_t axis = dft_axis_raw(ctx->node, ctx->opset, ax ? ax->value : NULL, &known);
    if (!known) return NULL;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank - 2) return NULL;
    int inverse = cort_attr_int(ctx->node, "inverse", 0) != 0, onesided = cort_attr_int(ctx->node, "onesided", 0) != 0;
    int64_t dims[CORT_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    dims[x->rank - 1] = onesided && inverse ? 1 : 2;
    const cort_tinfo *len = mi_tin(ctx, 1);
    int64_t n = dims[axis];
    if (len) n = len->value && len->value->count == 1 ? cort_load_i64(len->value->data, len->value->type, 0) : -1;
    else if (onesided && inverse) n = n > 0 ? 2 * (n - 1) : -1;
    if (n >= 0 && onesided && !inverse) n = n / 2 + 1;
    dims[axis] = n;
    cort_tinfo_tensor_shape(&ctx->outputs[0], x->elem, dims, x->rank);
    return NULL;
}

static cort_status *dft_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    CORT_TRY(mi_want_tensor(ctx, 0, "input"));
    const cort_value *x = ctx->inputs[0];
    int64_t r = (int64_t)x->rank;
    char buf[128];
    if (r < 2 || (x->shape[r - 1] != 1 && x->shape[r - 1] != 2))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has shape %s, expected [batch,...,1|2]",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    const cort_value *ax = dft_axis_input(ctx->opset) ? mi_in(ctx, 2) : NULL;
    int64_t axis_raw;
    if (ax) CORT_TRY(mi_scalar_i64(ctx, 2, "axis", &axis_raw));
    else { int known; axis_raw = dft_axis_raw(node, ctx->opset, NULL, &known); }
    int64_t axis = axis_raw < 0 ? axis_raw + r : axis_raw;
    if (axis < 0 || axis > r - 2)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "%s 'axis' is %lld, expected -%lld..-2 or 0..%lld",
                               ax ? "input 2" : "attribute", (long long)axis_raw, (long long)r, (long long)(r - 2));
    int inverse = cort_attr_int(node, "inverse", 0) != 0, onesided = cort_attr_int(node, "onesided", 0) != 0;
    const int irfft = inverse && onesided;
    size_t cin = (size_t)x->shape[r - 1];
    if (irfft && cin != 2)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has shape %s: the inverse one-sided "
                               "transform takes a complex spectrum (last dimension 2)",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    int64_t in_n = x->shape[axis], n = irfft ? 2 * (in_n - 1) : in_n;
    if (mi_in(ctx, 1)) {
        CORT_TRY(mi_scalar_i64(ctx, 1, "dft_length", &n));
        if (n < 1 || n > ((int64_t)1 << 40))
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'dft_length' is %lld, expected >= 1", (long long)n);
    } else if (n < 1) {
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input' has %lld bins on axis %lld: the inverse "
                               "one-sided transform needs at least 2 (or input 1 'dft_length')", (long long)in_n, (long long)axis);
    }
    int64_t out_n = onesided && !inverse ? n / 2 + 1 : n;
    int64_t dims[CORT_MAX_RANK];
    memcpy(dims, x->shape, (size_t)r * sizeof(int64_t));
    dims[axis] = out_n;
    dims[r - 1] = irfft ? 1 : 2;
    const size_t cout = (size_t)dims[r - 1];
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, (size_t)r, &out));
    size_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; k++) outer *= (size_t)x->shape[k];
    for (int64_t k = axis + 1; k < r - 1; k++) inner *= (size_t)x->shape[k];
    if (outer * inner == 0 || out->count == 0) return NULL;
    const mi_fft_plan *plan;
    mi_fft_plan *own;
    CORT_TRY(sig_plan(ctx->state, (size_t)n, inverse ? 1 : -1, &plan, &own));
    /* a line and the transform's work, from the session's recycled scratch */
    double *line = cort_kernel_scratch(ctx, ((size_t)n + mi_fft_work_len(plan) + 1) * 2 * sizeof(double));
    if (!line) { sig_plan_release(own); return cort_error_oom(); }
    double *work = line + (size_t)n * 2;
    /* irfft: bins 0..n/2 come from the input (zero beyond it), the rest are their conjugates, so
     * the real part of the full inverse is the real signal (the imaginary parts of the DC and
     * Nyquist bins drop out of it, as in numpy's irfft) */
    const size_t half = (size_t)n / 2 + 1;
    size_t take = (size_t)(in_n < n ? in_n : n);
    if (irfft && take > half) take = half;
    double scale = inverse ? 1.0 / (double)n : 1.0;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            memset(line, 0, (size_t)n * 2 * sizeof(double));
            for (size_t j = 0; j < take; j++) {
                size_t src = ((o * (size_t)in_n + j) * inner + i) * cin;
                line[2 * j] = cort_load_f64(x->data, x->type, src);
                if (cin == 2) line[2 * j + 1] = cort_load_f64(x->data, x->type, src + 1);
            }
            if (irfft)
                for (size_t j = 1; j < take; j++) {
                    size_t m = (size_t)n - j;
                    if (m < half) break;
                    line[2 * m] = line[2 * j];
                    line[2 * m + 1] = -line[2 * j + 1];
                }
            mi_fft_run(plan, line, work);
            for (size_t k = 0; k < (size_t)out_n; k++) {
                size_t dst = ((o * (size_t)out_n + k) * inner + i) * cout;
                cort_store_f64(out->data, out->type, dst, line[2 * k] * scale);
                if (cout == 2) cort_store_f64(out->data, out->type, dst + 1, line[2 * k + 1] * scale);
            }
        }
    cort_kernel_scratch_free(ctx, line);
    sig_plan_release(own);
    return NULL;
}

/* ---- STFT ---- */
static cort_status *stft_infer(cort_infer_ctx *ctx) {
    const cort_tinfo *x = mi_tin(ctx, 0);
    if (x && ctx->n_outputs) cort_tinfo_tensor(&ctx->outputs[0], x->elem);
    return NULL;
}

static cort_status *stft_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    CORT_TRY(mi_want_tensor(ctx, 0, "signal"));
    const cort_value *x = ctx->inputs[0], *win = mi_in(ctx, 2);
    char buf[128];
    if (x->rank != 3 || (x->shape[2] != 1 && x->shape[2] != 2))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'signal' has shape %s, expected [batch,length,1|2]",
                               cort_shape_str(x->shape, x->rank, buf, sizeof buf));
    int64_t step, n_fft = -1;
    CORT_TRY(mi_scalar_i64(ctx, 1, "frame_step", &step));
    if (step < 1)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'frame_step' is %lld, expected >= 1", (long long)step);
    if (win) {
        CORT_TRY(mi_want_tensor(ctx, 2, "window"));
        if (win->rank != 1 || !cort_type_is_float(win->type))
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 2 'window' is %s%s, expected a 1-D float tensor",
                                   cort_type_name(win->type), cort_shape_str(win->shape, win->rank, buf, sizeof buf));
        n_fft = win->shape[0];
    }
    if (mi_in(ctx, 3)) {
        int64_t fl;
        CORT_TRY(mi_scalar_i64(ctx, 3, "frame_length", &fl));
        if (win && fl != n_fft)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 3 'frame_length' is %lld but input 2 'window' has length %lld",
                                   (long long)fl, (long long)n_fft);
        n_fft = fl;
    }
    if (n_fft < 0)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "either input 2 'window' or input 3 'frame_length' is required");
    const int64_t Bt = x->shape[0], L = x->shape[1], cin = x->shape[2];
    if (n_fft < 1 || n_fft > L)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "frame length %lld must be in 1..%lld (the signal length)",
                               (long long)n_fft, (long long)L);
    int onesided = cort_attr_int(node, "onesided", 1) != 0;
    int64_t frames = (L - n_fft) / step + 1, bins = onesided ? n_fft / 2 + 1 : n_fft;
    int64_t dims[4] = { Bt, frames, bins, 2 };
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, x->type, dims, 4, &out));
    if (out->count == 0) return NULL;
    const mi_fft_plan *plan;
    mi_fft_plan *own;
    CORT_TRY(sig_plan(ctx->state, (size_t)n_fft, -1, &plan, &own));
    double *line = cort_kernel_scratch(ctx, ((size_t)n_fft + mi_fft_work_len(plan) + 1) * 2 * sizeof(double));
    if (!line) { sig_plan_release(own); return cort_error_oom(); }
    double *work = line + (size_t)n_fft * 2;
    for (int64_t b = 0; b < Bt; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t j = 0; j < n_fft; j++) {
                size_t src = (size_t)((b * L + f * step + j) * cin);
                double w = win ? cort_load_f64(win->data, win->type, (size_t)j) : 1.0;
                line[2 * j] = cort_load_f64(x->data, x->type, src) * w;
                line[2 * j + 1] = cin == 2 ? cort_load_f64(x->data, x->type, src + 1) * w : 0.0;
            }
            mi_fft_run(plan, line, work);
            for (int64_t k = 0; k < bins; k++) {
                size_t dst = (size_t)(((b * frames + f) * bins + k) * 2);
                cort_store_f64(out->data, out->type, dst, line[2 * k]);
                cort_store_f64(out->data, out->type, dst + 1, line[2 * k + 1]);
            }
        }
    cort_kernel_scratch_free(ctx, line);
    sig_plan_release(own);
    return NULL;
}

/* ---- windows ---- */
enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };

static cort_status *window_infer(cort_infer_ctx *ctx) {
    if (!ctx->n_outputs) return NULL;
    cort_type t = (cort_type)cort_attr_int(ctx->node, "output_datatype", CORT_TYPE_FLOAT);
    const cort_tinfo *s = mi_tin(ctx, 0);
    int64_t n = s && s->value && s->value->count == 1 ? cort_load_i64(s->value->data, s->value->type, 0) : -1;
    cort_tinfo_tensor_shape(&ctx->outputs[0], t, &n, 1);
    return NULL;
}

static cort_status *window_run(cort_kernel_ctx *ctx, int kind) {
    const cort_node *node = ctx->node;
    int64_t dt = cort_attr_int(node, "output_datatype", CORT_TYPE_FLOAT);
    cort_type t = (cort_type)dt;
    if (!cort_type_is_float(t) && !cort_type_is_int(t))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'output_datatype' is %lld, expected a numeric type",
                               (long long)dt);
    int64_t size;
    CORT_TRY(mi_scalar_i64(ctx, 0, "size", &size));
    if (size < 0 || size > ((int64_t)1 << 40))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'size' is %lld, expected >= 0", (long long)size);
    int periodic = cort_attr_int(node, "periodic", 1) != 0;
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, t, &size, 1, &out));
    double N = periodic ? (double)size : (double)(size - 1);
    for (int64_t i = 0; i < size; i++) {
        double a = N > 0 ? 2.0 * M_PI * (double)i / N : 0.0, v;
        if (kind == WIN_HANN) v = 0.5 - 0.5 * cos(a);
        else if (kind == WIN_HAMMING) v = 25.0 / 46.0 - (21.0 / 46.0) * cos(a);
        else v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2.0 * a);
        cort_store_f64(out->data, t, (size_t)i, v);
    }
    return NULL;
}
static cort_status *hann_run(cort_kernel_ctx *ctx) { return window_run(ctx, WIN_HANN); }
static cort_status *hamming_run(cort_kernel_ctx *ctx) { return window_run(ctx, WIN_HAMMING); }
static cort_status *blackman_run(cort_kernel_ctx *ctx) { return window_run(ctx, WIN_BLACKMAN); }

/* ---- MelWeightMatrix ---- */
static cort_status *mel_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs)
        cort_tinfo_tensor(&ctx->outputs[0], (cort_type)cort_attr_int(ctx->node, "output_datatype", CORT_TYPE_FLOAT));
    return NULL;
}

/* Follows the ONNX reference: band edges are spaced evenly in mel, mapped to FFT bins with
 * floor((dft_length + 1) * hz / sample_rate); the mel endpoints are computed in float as the
 * reference does with float inputs, the rest in double. */
static cort_status *mel_run(cort_kernel_ctx *ctx) {
    const cort_node *node = ctx->node;
    int64_t dt = cort_attr_int(node, "output_datatype", CORT_TYPE_FLOAT);
    cort_type t = (cort_type)dt;
    if (!cort_type_is_float(t) && !cort_type_is_int(t))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'output_datatype' is %lld, expected a numeric type",
                               (long long)dt);
    int64_t mel_bins, dft_len, rate;
    double lo, hi;
    CORT_TRY(mi_scalar_i64(ctx, 0, "num_mel_bins", &mel_bins));
    CORT_TRY(mi_scalar_i64(ctx, 1, "dft_length", &dft_len));
    CORT_TRY(mi_scalar_i64(ctx, 2, "sample_rate", &rate));
    CORT_TRY(mi_scalar_f64(ctx, 3, "lower_edge_hertz", &lo));
    CORT_TRY(mi_scalar_f64(ctx, 4, "upper_edge_hertz", &hi));
    if (mel_bins < 1 || mel_bins > (1 << 24) || dft_len < 1 || dft_len > ((int64_t)1 << 30) || rate < 1 || !(lo >= 0) ||
        !(hi > lo) || !isfinite(hi))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                               "invalid arguments num_mel_bins=%lld dft_length=%lld sample_rate=%lld lower_edge_hertz=%g "
                               "upper_edge_hertz=%g",
                               (long long)mel_bins, (long long)dft_len, (long long)rate, lo, hi);
    int64_t n_spec = dft_len / 2 + 1;
    int64_t dims[2] = { n_spec, mel_bins };
    if ((double)n_spec * (double)mel_bins > (double)((int64_t)1 << 34))
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "output [%lld,%lld] is too large", (long long)n_spec,
                               (long long)mel_bins);
    int64_t *edges = cort_malloc((size_t)(mel_bins + 2) * sizeof(int64_t));
    double *w = cort_calloc((size_t)(n_spec * mel_bins), sizeof(double));
    cort_status *err = NULL;
    if (!edges || !w) { err = cort_error_oom(); goto done; }
    float lo_mel = 2595.0f * log10f(1.0f + (float)lo / 700.0f);
    float hi_mel = 2595.0f * log10f(1.0f + (float)hi / 700.0f);
    float step = (hi_mel - lo_mel) / (float)(mel_bins + 2);
    for (int64_t i = 0; i < mel_bins + 2; i++) {
        double mel = (double)i * (double)step + (double)lo_mel;
        double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
        edges[i] = (int64_t)floor((double)(dft_len + 1) * hz / (double)rate);
    }
    for (int64_t i = 0; i < mel_bins; i++) {
        int64_t l = edges[i], c = edges[i + 1], h = edges[i + 2];
        if (c == l) {
            if (c >= 0 && c < n_spec) w[c * mel_bins + i] = 1.0;
        } else {
            for (int64_t j = l; j <= c; j++)
                if (j >= 0 && j < n_spec) w[j * mel_bins + i] = (double)(j - l) / (double)(c - l);
        }
        if (h > c)
            for (int64_t j = c; j < h; j++)
                if (j >= 0 && j < n_spec) w[j * mel_bins + i] = (double)(h - j) / (double)(h - c);
    }
    cort_value *out;
    if ((err = cort_kernel_output(ctx, 0, t, dims, 2, &out))) goto done;
    for (size_t i = 0; i < out->count; i++) cort_store_f64(out->data, t, i, w[i]);
done:
    cort_free(edges);
    cort_free(w);
    return err;
}

const cort_op_def mi_op_dft = { .name = "DFT", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .types = SIG_TYPES, .init = sig_init, .free_state = sig_free, .infer = dft_infer, .run = dft_run };
const cort_op_def mi_op_stft = { .name = "STFT", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .types = SIG_TYPES, .init = sig_init, .free_state = sig_free, .infer = stft_infer, .run = stft_run };
const cort_op_def mi_op_hann_window = { .name = "HannWindow", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .infer = window_infer, .run = hann_run };
const cort_op_def mi_op_hamming_window = { .name = "HammingWindow", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .infer = window_infer, .run = hamming_run };
const cort_op_def mi_op_blackman_window = { .name = "BlackmanWindow", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .infer = window_infer, .run = blackman_run };
const cort_op_def mi_op_mel_weight_matrix = { .name = "MelWeightMatrix", .domain = "", .min_opset = 17, .max_opset = CORT_OPSET_MAX,
    .infer = mel_infer, .run = mel_run };
