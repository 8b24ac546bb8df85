/* Template of kernels/vec.h's primitives; included by kernels/vec.c once per ISA level with FV_SFX (name
 * suffix), FV_VBYTES (vector bytes), FV_TARGET (function attribute). GCC/Clang vector extensions;
 * loads and stores through memcpy (unaligned). Tails run scalar. */
#define FV_CAT_(a, b) a##b
#define FV_CAT(a, b) FV_CAT_(a, b)
#define FVN(x) FV_CAT(x, FV_SFX)
#define FVF FVN(fv_vf)
#define FVL (FV_VBYTES / 4)

typedef float FVF __attribute__((vector_size(FV_VBYTES)));
typedef int32_t FVN(fv_vi) __attribute__((vector_size(FV_VBYTES)));
#define FVI FVN(fv_vi)

#define FLD(v, p) memcpy(&(v), (p), sizeof(v))
#define FST(p, v) memcpy((p), &(v), sizeof(v))
#define FSPLAT(s) ((FVF){0} + (float)(s))

static FV_TARGET float FVN(fv_max)(const float *x, size_t n) {
    float m = x[0];
    size_t i = 0;
    if (n >= FVL) {
        FVF a, v;
        FLD(a, x);
        for (i = FVL; i + FVL <= n; i += FVL) { FLD(v, x + i); FVI gt = v > a; a = (FVF)((gt & (FVI)v) | (~gt & (FVI)a)); }
        for (size_t l = 0; l < FVL; l++) m = a[l] > m ? a[l] : m;
    }
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

static FV_TARGET float FVN(fv_sum)(const float *x, size_t n) {
    FVF a = FSPLAT(0), b = FSPLAT(0), v, w;
    size_t i = 0;
    for (; i + 2 * FVL <= n; i += 2 * FVL) { FLD(v, x + i); FLD(w, x + i + FVL); a += v; b += w; }
    for (; i + FVL <= n; i += FVL) { FLD(v, x + i); a += v; }
    a += b;
    float s = 0;
    for (size_t l = 0; l < FVL; l++) s += a[l];
    for (; i < n; i++) s += x[i];
    return s;
}

static FV_TARGET float FVN(fv_sqdev)(const float *x, size_t n, float m, float *dev_sum) {
    FVF a = FSPLAT(0), b = FSPLAT(0), vm = FSPLAT(m), v, w;
    size_t i = 0;
    for (; i + 2 * FVL <= n; i += 2 * FVL) {
        FLD(v, x + i); FLD(w, x + i + FVL);
        v -= vm; w -= vm;
        a += v * v; b += v;
        a += w * w; b += w;
    }
    for (; i + FVL <= n; i += FVL) { FLD(v, x + i); v -= vm; a += v * v; b += v; }
    float s = 0, d = 0;
    for (size_t l = 0; l < FVL; l++) { s += a[l]; d += b[l]; }
    for (; i < n; i++) { float e = x[i] - m; s += e * e; d += e; }
    *dev_sum = d;
    return s;
}

static FV_TARGET void FVN(fv_addc)(const float *x, float *y, size_t n, float c) {
    FVF vc = FSPLAT(c), v;
    size_t i = 0;
    for (; i + FVL <= n; i += FVL) { FLD(v, x + i); v += vc; FST(y + i, v); }
    for (; i < n; i++) y[i] = x[i] + c;
}

static FV_TARGET void FVN(fv_scale)(float *y, size_t n, float c) {
    FVF vc = FSPLAT(c), v;
    size_t i = 0;
    for (; i + FVL <= n; i += FVL) { FLD(v, y + i); v *= vc; FST(y + i, v); }
    for (; i < n; i++) y[i] *= c;
}

static FV_TARGET void FVN(fv_add)(const float *a, const float *b, float *y, size_t n) {
    FVF v, w;
    size_t i = 0;
    for (; i + FVL <= n; i += FVL) { FLD(v, a + i); FLD(w, b + i); v += w; FST(y + i, v); }
    for (; i < n; i++) y[i] = a[i] + b[i];
}

static FV_TARGET void FVN(fv_norm)(const float *x, float *y, size_t n, float m, float inv, const float *scale,
                                   const float *bias) {
    FVF vm = FSPLAT(m), vi = FSPLAT(inv), v, s, b;
    size_t i = 0;
    if (scale && bias)
        for (; i + FVL <= n; i += FVL) { FLD(v, x + i); FLD(s, scale + i); FLD(b, bias + i); v = (v - vm) * vi * s + b; FST(y + i, v); }
    else if (scale)
        for (; i + FVL <= n; i += FVL) { FLD(v, x + i); FLD(s, scale + i); v = (v - vm) * vi * s; FST(y + i, v); }
    else if (bias)
        for (; i + FVL <= n; i += FVL) { FLD(v, x + i); FLD(b, bias + i); v = (v - vm) * vi + b; FST(y + i, v); }
    else
        for (; i + FVL <= n; i += FVL) { FLD(v, x + i); v = (v - vm) * vi; FST(y + i, v); }
    for (; i < n; i++) y[i] = (x[i] - m) * inv * (scale ? scale[i] : 1.0f) + (bias ? bias[i] : 0.0f);
}

/* GELU through erfc (Numerical Recipes' erfcc, fractional error < 1.2e-7): Phi(x) = erfc(-x/sqrt2)/2
 * has no 1 + erf cancellation for x < 0. Split around the exp so it can run on the ew_simd kernel:
 * arg() gives t = 1/(1 + z/2) and a with erfc(z) = t exp(a), z = |x|/sqrt2; finish() forms the result. */
static FV_TARGET void FVN(fv_gelu_arg)(const float *x, float *t, float *a, size_t n) {
    size_t i = 0;
    for (; i + FVL <= n; i += FVL) {
        FVF v, z, tt, p;
        FLD(v, x + i);
        z = (FVF)((FVI)v & 0x7fffffff) * 0.70710678118654752f;
        tt = 1.0f / (1.0f + 0.5f * z);
        p = tt * 0.17087277f - 0.82215223f;
        p = p * tt + 1.48851587f;
        p = p * tt - 1.13520398f;
        p = p * tt + 0.27886807f;
        p = p * tt - 0.18628806f;
        p = p * tt + 0.09678418f;
        p = p * tt + 0.37409196f;
        p = p * tt + 1.00002368f;
        p = p * tt - 1.26551223f - z * z;
        FST(t + i, tt);
        FST(a + i, p);
    }
    for (; i < n; i++) {
        float z = fabsf(x[i]) * 0.70710678118654752f, tt = 1.0f / (1.0f + 0.5f * z);
        float p = tt * 0.17087277f - 0.82215223f;
        p = p * tt + 1.48851587f;
        p = p * tt - 1.13520398f;
        p = p * tt + 0.27886807f;
        p = p * tt - 0.18628806f;
        p = p * tt + 0.09678418f;
        p = p * tt + 0.37409196f;
        p = p * tt + 1.00002368f;
        t[i] = tt;
        a[i] = p * tt - 1.26551223f - z * z;
    }
}

static FV_TARGET void FVN(fv_gelu_finish)(const float *x, const float *t, const float *e, float *y, size_t n) {
    size_t i = 0;
    for (; i + FVL <= n; i += FVL) {
        FVF v, tt, ee, h, r;
        FLD(v, x + i); FLD(tt, t + i); FLD(ee, e + i);
        h = 0.5f * tt * ee;
        FVI neg = v < 0.0f;
        r = (FVF)((neg & (FVI)h) | (~neg & (FVI)(1.0f - h)));
        r *= v;
        FST(y + i, r);
    }
    for (; i < n; i++) {
        float h = 0.5f * t[i] * e[i];
        y[i] = x[i] * (x[i] < 0.0f ? h : 1.0f - h);
    }
}

static const fu_vec_kernels FVN(fv_kernels) = {
    FV_NAME, FVN(fv_max), FVN(fv_sum), FVN(fv_sqdev), FVN(fv_addc), FVN(fv_scale), FVN(fv_add), FVN(fv_norm),
    FVN(fv_gelu_arg), FVN(fv_gelu_finish),
};

#undef FVF
#undef FVI
#undef FVL
#undef FLD
#undef FST
#undef FSPLAT
