/* Template of the float32 kernels; included by kernels/elementwise.c once per ISA level with
 *   EW_SFX     name suffix (_ref, _avx2, _avx512)
 *   EW_VBYTES  vector width in bytes
 *   EW_TARGET  function attribute selecting the ISA (empty for the portable build)
 *   EW_FMA     a*b+c on vectors (fused where the ISA has it)
 * Written with GCC/Clang vector extensions so that it vectorizes at -O2 regardless of the
 * compiler's cost model. Vectors never cross a function boundary by value (that would change
 * the ABI between levels); loads and stores go through memcpy (unaligned moves). */
#define EW_CAT_(a, b) a##b
#define EW_CAT(a, b) EW_CAT_(a, b)
#define EWN(x) EW_CAT(x, EW_SFX)
#define VF EWN(ew_vf)
#define VI EWN(ew_vi)
#define VN (EW_VBYTES / 4)

typedef float   VF __attribute__((vector_size(EW_VBYTES)));
typedef int32_t VI __attribute__((vector_size(EW_VBYTES)));

#define VLOAD(v, p) memcpy(&(v), (p), sizeof(v))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(v))
#define VSPLAT(s) ((VF){0} + (float)(s))
/* m ? a : b with m a comparison result (all-ones / zero lanes) */
#define VSEL(m, a, b) ((VF)(((m) & (VI)(a)) | (~(m) & (VI)(b))))

/* ---- binary: o = a OP b, three broadcast modes ---- */
#define EW_BIN_KERNEL(NAME, VEXPR, SEXPR) \
    static EW_TARGET void EWN(NAME##_vv)(size_t n, float *o, const float *a, const float *b) { \
        size_t i = 0; \
        for (; i + VN <= n; i += VN) { VF x, y, r; VLOAD(x, a + i); VLOAD(y, b + i); r = VEXPR; VSTORE(o + i, r); } \
        for (; i < n; i++) { float x = a[i], y = b[i]; o[i] = SEXPR; } \
    } \
    static EW_TARGET void EWN(NAME##_vs)(size_t n, float *o, const float *a, const float *b) { \
        size_t i = 0; float ys = b[0]; VF y = VSPLAT(ys); \
        for (; i + VN <= n; i += VN) { VF x, r; VLOAD(x, a + i); r = VEXPR; VSTORE(o + i, r); } \
        for (; i < n; i++) { float x = a[i], y = ys; o[i] = SEXPR; } \
    } \
    static EW_TARGET void EWN(NAME##_sv)(size_t n, float *o, const float *a, const float *b) { \
        size_t i = 0; float xs = a[0]; VF x = VSPLAT(xs); \
        for (; i + VN <= n; i += VN) { VF y, r; VLOAD(y, b + i); r = VEXPR; VSTORE(o + i, r); } \
        for (; i < n; i++) { float x = xs, y = b[i]; o[i] = SEXPR; } \
    }

EW_BIN_KERNEL(ew_add, x + y, x + y)
EW_BIN_KERNEL(ew_sub, x - y, x - y)
EW_BIN_KERNEL(ew_mul, x * y, x * y)
EW_BIN_KERNEL(ew_div, x / y, x / y)
/* max/min propagate NaN from either side like numpy */
EW_BIN_KERNEL(ew_max, VSEL((x > y) | (x != x), x, y), (x > y || x != x) ? x : y)
EW_BIN_KERNEL(ew_min, VSEL((x < y) | (x != x), x, y), (x < y || x != x) ? x : y)

/* ---- unary ---- */
#define EW_UN_KERNEL(NAME, VEXPR, SEXPR) \
    static EW_TARGET void EWN(NAME)(size_t n, float *o, const float *in, float pa, float pb) { \
        size_t i = 0; VF va = VSPLAT(pa), vb = VSPLAT(pb); (void)va; (void)vb; \
        for (; i + VN <= n; i += VN) { VF x, r; VLOAD(x, in + i); r = VEXPR; VSTORE(o + i, r); } \
        for (; i < n; i++) { float x = in[i]; o[i] = SEXPR; } \
    }

EW_UN_KERNEL(ew_relu, VSEL(x > 0.0f, x, VSPLAT(0.0f)), x > 0.0f ? x : 0.0f)
EW_UN_KERNEL(ew_leaky, VSEL(x < 0.0f, x * va, x), x < 0.0f ? x * pa : x)
/* min(max(x, lo), hi): hi wins when lo > hi, NaN passes through */
EW_UN_KERNEL(ew_clip, VSEL(VSEL(x < va, va, x) > vb, vb, VSEL(x < va, va, x)), (x < pa ? pa : x) > pb ? pb : (x < pa ? pa : x))
EW_UN_KERNEL(ew_neg, -x, -x)
EW_UN_KERNEL(ew_abs, (VF)((VI)x & 0x7fffffff), fabsf(x))
EW_UN_KERNEL(ew_hardsigmoid, VSEL(x * va + vb > 1.0f, VSPLAT(1.0f), VSEL(x * va + vb > 0.0f, x * va + vb, VSPLAT(0.0f))),
             fmaxf(0.0f, fminf(1.0f, x * pa + pb)))
EW_UN_KERNEL(ew_hardswish,
             x * VSEL(x * (1.0f / 6) + 0.5f > 1.0f, VSPLAT(1.0f),
                      VSEL(x * (1.0f / 6) + 0.5f > 0.0f, x * (1.0f / 6) + 0.5f, VSPLAT(0.0f))),
             x * fmaxf(0.0f, fminf(1.0f, x * (1.0f / 6) + 0.5f)))

/* exp: Cody-Waite reduction x = n ln2 + r, degree-6 polynomial (Cephes expf), 2^n applied in two
 * halves so that overflow gives inf and results down to the subnormal range stay accurate. */
#define EW_VEXP(res, xin) do { \
        VF x_ = (xin); \
        x_ = VSEL(x_ > 89.0f, VSPLAT(89.0f), x_); \
        x_ = VSEL(x_ < -104.0f, VSPLAT(-104.0f), x_); \
        VF t_ = x_ * 1.44269504088896341f + 12582912.0f; \
        VF n_ = t_ - 12582912.0f; \
        VI ni_ = (VI)t_ - 0x4B400000; \
        VF r_ = EW_FMA(n_, VSPLAT(-0.693359375f), x_); \
        r_ = EW_FMA(n_, VSPLAT(2.12194440e-4f), r_); \
        VF p_ = VSPLAT(1.9875691500e-4f); \
        p_ = EW_FMA(p_, r_, VSPLAT(1.3981999507e-3f)); \
        p_ = EW_FMA(p_, r_, VSPLAT(8.3334519073e-3f)); \
        p_ = EW_FMA(p_, r_, VSPLAT(4.1665795894e-2f)); \
        p_ = EW_FMA(p_, r_, VSPLAT(1.6666665459e-1f)); \
        p_ = EW_FMA(p_, r_, VSPLAT(5.0000001201e-1f)); \
        VF y_ = EW_FMA(p_ * r_, r_, r_ + 1.0f); \
        VI n1_ = ni_ >> 1, n2_ = ni_ - n1_; \
        VF s1_ = (VF)((n1_ + 127) << 23), s2_ = (VF)((n2_ + 127) << 23); \
        (res) = y_ * s1_ * s2_; \
    } while (0)

static EW_TARGET void EWN(ew_exp)(size_t n, float *o, const float *in, float pa, float pb) {
    size_t i = 0;
    for (; i + VN <= n; i += VN) { VF x, r; VLOAD(x, in + i); EW_VEXP(r, x); VSTORE(o + i, r); }
    if (i < n) {   /* tail through the same vector code for identical results */
        float tmp[VN] = {0};
        memcpy(tmp, in + i, (n - i) * sizeof(float));
        VF x, r; VLOAD(x, tmp); EW_VEXP(r, x); VSTORE(tmp, r);
        memcpy(o + i, tmp, (n - i) * sizeof(float));
    }
}

/* sigmoid(x) = 1/(1+e) for x >= 0, e/(1+e) for x < 0, with e = exp(-|x|) <= 1 (no overflow). */
#define EW_VSIGMOID(res, x) do { \
        VF ax_ = (VF)((VI)(x) & 0x7fffffff), e_, r_; \
        EW_VEXP(e_, -ax_); \
        r_ = 1.0f / (1.0f + e_); \
        (res) = VSEL((x) < 0.0f, e_ * r_, r_); \
    } while (0)

static EW_TARGET void EWN(ew_sigmoid)(size_t n, float *o, const float *in, float pa, float pb) {
    size_t i = 0;
    for (; i + VN <= n; i += VN) { VF x, r; VLOAD(x, in + i); EW_VSIGMOID(r, x); VSTORE(o + i, r); }
    if (i < n) {
        float tmp[VN] = {0};
        memcpy(tmp, in + i, (n - i) * sizeof(float));
        VF x, r; VLOAD(x, tmp); EW_VSIGMOID(r, x); VSTORE(tmp, r);
        memcpy(o + i, tmp, (n - i) * sizeof(float));
    }
}

/* tanh: odd polynomial for |x| < 0.625 (Cephes tanhf), else 1 - 2/(exp(2|x|)+1) with x's sign. */
#define EW_VTANH(res, x) do { \
        VF ax_ = (VF)((VI)(x) & 0x7fffffff), z_ = (x) * (x), p_, e_, l_; \
        p_ = EW_FMA(z_, VSPLAT(-5.70498872745e-3f), VSPLAT(2.06390887954e-2f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-5.37397155531e-2f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(1.33314422036e-1f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-3.33332819422e-1f)); \
        p_ = EW_FMA(p_ * z_, (x), (x)); \
        VF c_ = VSEL(ax_ > 10.0f, VSPLAT(10.0f), ax_); \
        EW_VEXP(e_, c_ + c_); \
        l_ = 1.0f - 2.0f / (e_ + 1.0f); \
        l_ = (VF)((VI)l_ | ((VI)(x) & (int32_t)0x80000000u)); \
        (res) = VSEL(ax_ < 0.625f, p_, l_); \
    } while (0)

static EW_TARGET void EWN(ew_tanh)(size_t n, float *o, const float *in, float pa, float pb) {
    size_t i = 0;
    for (; i + VN <= n; i += VN) { VF x, r; VLOAD(x, in + i); EW_VTANH(r, x); VSTORE(o + i, r); }
    if (i < n) {
        float tmp[VN] = {0};
        memcpy(tmp, in + i, (n - i) * sizeof(float));
        VF x, r; VLOAD(x, tmp); EW_VTANH(r, x); VSTORE(tmp, r);
        memcpy(o + i, tmp, (n - i) * sizeof(float));
    }
}

/* erf: odd rational approximation x P(x^2) / Q(x^2) on [-4, 4] (|erf| rounds to 1 beyond);
 * max relative error 4.2e-7 against the exact function (checked over [-6, 6] and 1e-8..5). */
#define EW_VERF(res, xin) do { \
        VF x_ = (xin); \
        x_ = VSEL(x_ > 4.0f, VSPLAT(4.0f), x_); \
        x_ = VSEL(x_ < -4.0f, VSPLAT(-4.0f), x_); \
        VF z_ = x_ * x_; \
        VF p_ = EW_FMA(z_, VSPLAT(-2.72614225801306e-10f), VSPLAT(2.77068142495902e-08f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-2.10102402082508e-06f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-5.69250639462346e-05f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-7.34990630326855e-04f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-2.95459980854025e-03f)); \
        p_ = EW_FMA(p_, z_, VSPLAT(-1.60960333262415e-02f)); \
        VF q_ = EW_FMA(z_, VSPLAT(-1.45660718464996e-05f), VSPLAT(-2.13374055278905e-04f)); \
        q_ = EW_FMA(q_, z_, VSPLAT(-1.68282697438203e-03f)); \
        q_ = EW_FMA(q_, z_, VSPLAT(-7.37332916720468e-03f)); \
        q_ = EW_FMA(q_, z_, VSPLAT(-1.42647390514189e-02f)); \
        (res) = x_ * p_ / q_; \
    } while (0)

static EW_TARGET void EWN(ew_erf)(size_t n, float *o, const float *in, float pa, float pb) {
    size_t i = 0;
    for (; i + VN <= n; i += VN) { VF x, r; VLOAD(x, in + i); EW_VERF(r, x); VSTORE(o + i, r); }
    if (i < n) {
        float tmp[VN] = {0};
        memcpy(tmp, in + i, (n - i) * sizeof(float));
        VF x, r; VLOAD(x, tmp); EW_VERF(r, x); VSTORE(tmp, r);
        memcpy(o + i, tmp, (n - i) * sizeof(float));
    }
}

static const ew_f32_kernels EWN(ew_kernels) = {
    .name = EW_CAT_NAME,
    .bin = {
        [EW_FB_ADD] = { EWN(ew_add_vv), EWN(ew_add_vs), EWN(ew_add_sv) },
        [EW_FB_SUB] = { EWN(ew_sub_vv), EWN(ew_sub_vs), EWN(ew_sub_sv) },
        [EW_FB_MUL] = { EWN(ew_mul_vv), EWN(ew_mul_vs), EWN(ew_mul_sv) },
        [EW_FB_DIV] = { EWN(ew_div_vv), EWN(ew_div_vs), EWN(ew_div_sv) },
        [EW_FB_MAX] = { EWN(ew_max_vv), EWN(ew_max_vs), EWN(ew_max_sv) },
        [EW_FB_MIN] = { EWN(ew_min_vv), EWN(ew_min_vs), EWN(ew_min_sv) },
    },
    .un = {
        [EW_FU_RELU] = EWN(ew_relu), [EW_FU_LEAKY] = EWN(ew_leaky), [EW_FU_CLIP] = EWN(ew_clip),
        [EW_FU_NEG] = EWN(ew_neg), [EW_FU_ABS] = EWN(ew_abs), [EW_FU_EXP] = EWN(ew_exp),
        [EW_FU_SIGMOID] = EWN(ew_sigmoid), [EW_FU_TANH] = EWN(ew_tanh),
        [EW_FU_HARDSIGMOID] = EWN(ew_hardsigmoid), [EW_FU_HARDSWISH] = EWN(ew_hardswish),
        [EW_FU_ERF] = EWN(ew_erf),
    },
};

#undef EW_BIN_KERNEL
#undef EW_UN_KERNEL
#undef EW_VEXP
#undef EW_VSIGMOID
#undef EW_VTANH
#undef EW_VERF
#undef VF
#undef VI
#undef VN
#undef VLOAD
#undef VSTORE
#undef VSPLAT
#undef VSEL
#undef EWN
#undef EW_CAT
#undef EW_CAT_
