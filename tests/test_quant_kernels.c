/* The 8-bit quantization kernels of quant_ukernels.h against the scalar expressions of
 * ops/quant/quantize.c, bit for bit: lengths around the vector widths, quotients exactly on
 * rounding ties, past the 8-bit range and past int32, NaN and infinities, scales below 1 and
 * denormal; the AVX2 kernels whenever the CPU has AVX2 and the level's entries through nn_isa().
 * Bytes past the end must stay untouched. The two-byte table lookup (QLinearAdd/Mul's creation-time
 * table) likewise, at every offset and length around its vector widths, dequantize8, i32_scale and qbinary8. Then DynamicQuantizeLinear and QuantizeLinear through
 * a session, long enough for several threaded chunks, against the same expressions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/cpu_features.h"
#include "providers/cpu/kernels/isa_config.h"
#include "providers/cpu/kernels/quant_ukernels.h"
#include "providers/cpu/ops/quant/quant.h"

static uint32_t rng = 4242u;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }

static uint8_t ref_q(float x, float s, int32_t z, int sg) {
    const int32_t v = nn_q_add_sat(nn_q_round(x / s), z);
    return (uint8_t)(sg ? (v < -128 ? -128 : v > 127 ? 127 : v) : (v < 0 ? 0 : v > 255 ? 255 : v));
}

/* x[i] for test pattern i: ties, big, special values and plain randoms mixed */
static float sample(size_t i, float s) {
    switch (next() % 8) {
    case 0: return ((float)(int)(next() % 600) - 300.0f + 0.5f) * s;   /* a tie after the division */
    case 1: return (float)((int)(next() % 2000001) - 1000000) * s * 1000.0f;   /* past int32 */
    case 2: { const float sp[5] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f }; return sp[next() % 5]; }
    default: return ((float)(next() % 100000) / 100000.0f - 0.5f) * 700.0f * s + (float)(i % 3) * 1e-3f;
    }
}

enum { CAP = 300 };

static void check(const char *name, void (*q8)(const float *, size_t, float, int32_t, int, void *),
                  void (*mm)(const float *, size_t, float *, float *)) {
    static const float scales[] = { 0.5f, 0.0173f, 3.0f, 1e-39f };
    float x[CAP];
    uint8_t y[CAP + 16];
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
        for (int sg = 0; sg < 2; sg++)
            for (size_t n = 0; n <= 40 || n == CAP; n = n == 40 ? CAP : n + 1) {
                const float s = scales[si];
                const int32_t z = sg ? (int32_t)(next() % 256) - 128 : (int32_t)(next() % 256);
                for (size_t i = 0; i < n; i++) x[i] = sample(i, s);
                if (q8) {
                    memset(y, 0xA5, sizeof y);
                    q8(x, n, s, z, sg, y);
                    size_t bad = 0, first = 0;
                    for (size_t i = 0; i < n; i++)
                        if (y[i] != ref_q(x[i], s, z, sg) && !bad++) first = i;
                    CHECK_MSG(bad == 0, "%s quantize8 n %zu scale %g zp %d %s: %zu wrong, first x=%g gives %d, want %d",
                              name, n, (double)s, z, sg ? "s8" : "u8", bad, (double)x[first], y[first],
                              ref_q(x[first], s, z, sg));
                    for (size_t i = n; i < n + 16; i++) CHECK_MSG(y[i] == 0xA5, "%s quantize8 n %zu wrote past the end", name, n);
                }
                if (mm) {
                    float lo = 0.0f, hi = 0.0f, wl = 0.0f, wh = 0.0f;
                    for (size_t i = 0; i < n; i++) {
                        wl = x[i] < wl ? x[i] : wl;
                        wh = x[i] > wh ? x[i] : wh;
                    }
                    mm(x, n, &lo, &hi);
                    CHECK_MSG(memcmp(&lo, &wl, sizeof lo) == 0 && memcmp(&hi, &wh, sizeof hi) == 0,
                              "%s minmax n %zu: [%g, %g], want [%g, %g]", name, n, (double)lo, (double)hi, (double)wl,
                              (double)wh);
                }
            }
}

/* DynamicQuantizeLinear and QuantizeLinear (uint8 and int8) on 100003 floats through a session
 * (tests/models/quant_ops.onnx, written by make_qdq_models.py) */
static void check_ops(int threads) {
    const size_t n = 100003;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = ((float)(next() % 200001) - 100000.0f) / 7919.0f;
    x[n / 2] = -31.0f;   /* the minimum, in a middle chunk */
    x[n - 1] = 17.5f;    /* the maximum, in the last one */
    x[7] = NAN;          /* ignored by the range */
    const int64_t shape[2] = { 1, (int64_t)n };
    cort_value *xv = NULL, *outs[5] = { NULL, NULL, NULL, NULL, NULL };
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    CHECK_OK(cort_tensor_create(CORT_TYPE_FLOAT, shape, 2, &xv));
    if (xv) memcpy(cort_tensor_data(xv), x, n * sizeof *x);
    CHECK_OK(cort_session_options_create(&o));
    CHECK_OK(cort_session_options_set_threads(o, threads));
    const char *in = "x", *on[5] = { "dq_y", "dq_s", "dq_z", "q_u8", "q_s8" };
    if (CHECK_OK(cort_session_create("tests/models/quant_ops.onnx", o, &s)) && xv)
        CHECK_OK(cort_session_run(s, NULL, &in, &xv, 1, on, 5, outs));
    if (outs[0] && outs[1] && outs[2] && outs[3] && outs[4]) {
        const float scale = (17.5f - -31.0f) / 255.0f;
        int32_t zp = nn_q_round(31.0f / scale);
        zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
        CHECK_MSG(*(const float *)cort_tensor_data(outs[1]) == scale && *(const uint8_t *)cort_tensor_data(outs[2]) == zp,
                  "DynamicQuantizeLinear: scale %g zp %d, want %g %d", (double)*(const float *)cort_tensor_data(outs[1]),
                  *(const uint8_t *)cort_tensor_data(outs[2]), (double)scale, zp);
        const uint8_t *yd = cort_tensor_data(outs[0]), *yu = cort_tensor_data(outs[3]), *ys = cort_tensor_data(outs[4]);
        size_t bad_d = 0, bad_u = 0, bad_s = 0;
        for (size_t i = 0; i < n; i++) {
            bad_d += yd[i] != ref_q(x[i], scale, zp, 0);
            bad_u += yu[i] != ref_q(x[i], 0.0371f, 121, 0);
            bad_s += ys[i] != ref_q(x[i], 0.0371f, -7, 1);
        }
        CHECK_MSG(bad_d == 0 && bad_u == 0 && bad_s == 0, "%d threads: DynamicQuantizeLinear %zu, QuantizeLinear u8 %zu, "
                  "s8 %zu of %zu wrong", threads, bad_d, bad_u, bad_s, n);
    } else {
        CHECK_MSG(0, "quant_ops.onnx gave no outputs");
    }
    for (int i = 0; i < 5; i++) cort_value_release(outs[i]);
    cort_session_release(s);
    cort_session_options_free(o);
    cort_value_release(xv);
    free(x);
}

static void check_lut16(const char *name, void (*f)(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *,
                                                    size_t)) {
    if (!f) return;
    enum { MAXN = 200 };
    uint8_t *lut = malloc(65536 + 4), a[MAXN + 8], b[MAXN + 8], y[MAXN + 40];
    if (!lut) { CHECK_MSG(0, "out of memory"); return; }
    for (size_t i = 0; i < 65536; i++) lut[i] = (uint8_t)(next() & 0xff);
    memset(lut + 65536, 0x5A, 4);
    for (size_t n = 0; n <= MAXN; n += n < 70 ? 1 : 13)
        for (size_t off = 0; off < 4; off++) {
            for (size_t i = 0; i < n + off; i++) { a[i] = (uint8_t)next(); b[i] = (uint8_t)next(); }
            if (n > 2) { a[off] = b[off] = 255; a[off + n - 1] = 0; b[off + n - 1] = 255; }   /* both table ends */
            memset(y, 0xA5, sizeof y);
            f(lut, a + off, b + off, y + off, n);
            size_t bad = 0, first = 0;
            for (size_t i = 0; i < n; i++)
                if (y[off + i] != lut[(size_t)a[off + i] << 8 | b[off + i]] && !bad++) first = i;
            CHECK_MSG(bad == 0, "%s lut16 n %zu offset %zu: %zu wrong, first at %zu", name, n, off, bad, first);
            for (size_t i = 0; i < off; i++) CHECK_MSG(y[i] == 0xA5, "%s lut16 n %zu wrote before the start", name, n);
            for (size_t i = off + n; i < sizeof y; i++)
                CHECK_MSG(y[i] == 0xA5, "%s lut16 n %zu offset %zu wrote past the end", name, n, off);
        }
    free(lut);
}

/* dequantize8 against the per-byte table DequantizeLinear's portable loop reads ((float)v - (float)zp)
 * * scale, bit for bit: both signednesses, zero points at the type's ends, scales with low bits set
 * and denormal, lengths and offsets around the vector widths; nothing written past either end.
 * Negative control: the reference with the scale one ulp up must disagree somewhere. */
static void check_dq8(const char *name, void (*f)(const void *, size_t, int, int32_t, float, float *)) {
    if (!f) return;
    enum { MAXN = 150 };
    uint8_t x[MAXN + 8];
    float y[MAXN + 40];
    const float scales[] = { 0.0123f, 1.0f, 3.3333333f, 1e-39f, 7.1e5f };
    for (int sg = 0; sg < 2; sg++)
        for (size_t si = 0; si < sizeof scales / sizeof *scales; si++)
            for (int zi = 0; zi < 4; zi++) {
                const int32_t zs[4] = { 0, sg ? -128 : 255, sg ? 127 : 128, sg ? -3 : 7 }, zp = zs[zi];
                const float sc = scales[si];
                for (size_t n = 0; n <= MAXN; n += n < 40 ? 1 : 11)
                    for (size_t off = 0; off < 3; off++) {
                        for (size_t i = 0; i < n + off; i++) x[i] = (uint8_t)next();
                        if (n > 1) { x[off] = 0x80; x[off + n - 1] = 0x7f; }
                        for (size_t i = 0; i < sizeof y / sizeof *y; i++) y[i] = -99.0f;
                        f(x + off, n, sg, zp, sc, y + off);
                        size_t bad = 0, ctl = 0;
                        const float sc_up = nextafterf(sc, INFINITY);
                        for (size_t i = 0; i < n; i++) {
                            const int32_t v = sg ? (int32_t)(int8_t)x[off + i] : (int32_t)x[off + i];
                            const float want = ((float)v - (float)zp) * sc, wrong = ((float)v - (float)zp) * sc_up;
                            bad += memcmp(&y[off + i], &want, sizeof want) != 0;
                            ctl += memcmp(&y[off + i], &wrong, sizeof wrong) != 0;
                        }
                        CHECK_MSG(bad == 0, "%s dequantize8 n %zu signed %d zp %d scale %g: %zu wrong", name, n, sg,
                                  zp, sc, bad);
                        if (n >= 16 && si == 0)
                            CHECK_MSG(ctl > 0, "%s dequantize8 negative control: a 1-ulp scale change unnoticed", name);
                        for (size_t i = 0; i < off; i++) CHECK_MSG(y[i] == -99.0f, "%s dequantize8 wrote before", name);
                        for (size_t i = off + n; i < sizeof y / sizeof *y; i++)
                            CHECK_MSG(y[i] == -99.0f, "%s dequantize8 n %zu wrote past the end", name, n);
                    }
            }
}


/* i32_scale against the portable loop of MatMulIntegerToFloat's tile epilogue, bit for bit: the
 * product rounded, then the bias added and rounded (a fused multiply-add would differ on some of
 * these), with and without bias, int32 values past 2^24 (inexact as floats) and at the ends,
 * lengths and offsets around the vector widths; nothing written outside [y, y + n). Negative
 * control: the fused reference fmaf must disagree somewhere. */
static void check_i32s(const char *name, void (*f)(const int32_t *, size_t, const float *, const float *, float *)) {
    if (!f) return;
    enum { MAXN = 100 };
    int32_t x[MAXN + 4];
    float sc[MAXN + 4], bi[MAXN + 4], y[MAXN + 40];
    size_t fused_differs = 0;
    for (int wb = 0; wb < 2; wb++)
        for (size_t n = 0; n <= MAXN; n += n < 40 ? 1 : 7)
            for (size_t off = 0; off < 3; off++) {
                for (size_t i = 0; i < n + off; i++) {
                    const uint32_t r = next();
                    x[i] = r % 4 == 0 ? (int32_t)(r * 2654435761u) : r % 4 == 1 ? (r & 1 ? INT32_MAX : INT32_MIN)
                                                                    : (int32_t)(r % 20001) - 10000;
                    sc[i] = ((float)(next() % 100000) + 1.0f) * 1.1920929e-07f * (r & 2 ? 1.0f : -3.0f);
                    bi[i] = ((float)(next() % 200001) - 100000.0f) * 0.01234567f;
                }
                for (size_t i = 0; i < sizeof y / sizeof *y; i++) y[i] = -99.0f;
                f(x + off, n, sc + off, wb ? bi + off : NULL, y + off);
                size_t bad = 0;
                for (size_t i = off; i < off + n; i++) {
                    volatile float v = (float)x[i] * sc[i];
                    const float want = wb ? v + bi[i] : v;
                    bad += memcmp(&y[i], &want, sizeof want) != 0;
                    if (wb) {
                        const float fused = fmaf((float)x[i], sc[i], bi[i]);
                        fused_differs += memcmp(&fused, &want, sizeof want) != 0;
                    }
                }
                CHECK_MSG(bad == 0, "%s i32_scale n %zu bias %d: %zu wrong", name, n, wb, bad);
                for (size_t i = 0; i < off; i++) CHECK_MSG(y[i] == -99.0f, "%s i32_scale wrote before", name);
                for (size_t i = off + n; i < sizeof y / sizeof *y; i++)
                    CHECK_MSG(y[i] == -99.0f, "%s i32_scale n %zu wrote past the end", name, n);
            }
    CHECK_MSG(fused_differs > 0, "%s i32_scale negative control: a fused multiply-add matched every value", name);
}

/* qbinary8 (QLinearAdd / QLinearMul in double) against the expression qlinear_ops.c tabulates:
 * both ops, both signednesses in and out, zero points at the type ends, scales that put many
 * quotients exactly on ties (0.5 steps), saturating ones past 2^30, a broadcast B, lengths and
 * offsets around the vector widths; nothing written outside [y, y + n). Negative control: with ys
 * one ulp up the reference must disagree somewhere on the tie-rich scales. */
static uint8_t ref_qbin(const nn_qbinary8_params *p, uint8_t a, uint8_t b, double ys) {
    const int32_t va = p->in_signed ? (int8_t)a : a, vb = p->in_signed ? (int8_t)b : b;
    const double da = (double)(va - p->za) * p->as, db = (double)(vb - p->zb) * p->bs;
    double v = (p->mul ? da * db : da + db) / ys;
    if (v > 1073741824.0) v = 1073741824.0;
    if (v < -1073741824.0) v = -1073741824.0;
    int32_t r = (int32_t)nearbyint(v) + p->zy;
    const int32_t lo = p->out_signed ? -128 : 0, hi = p->out_signed ? 127 : 255;
    return (uint8_t)(r < lo ? lo : r > hi ? hi : r);
}

static void check_qbin8(const char *name, void (*f)(const nn_qbinary8_params *, const uint8_t *, const uint8_t *,
                                                    uint8_t *, size_t)) {
    if (!f) return;
    enum { MAXN = 100 };
    uint8_t a[MAXN + 8], b[MAXN + 8], y[MAXN + 40];
    const float sc[][3] = { { 0.5f, 0.5f, 1.0f }, { 0.031f, 0.027f, 0.045f }, { 1e30f, 2e30f, 1e-30f },
                            { 0.25f, 0.75f, 0.5f }, { 3.3e-3f, 1.7f, 0.21f } };
    size_t ctl = 0;
    for (int mul = 0; mul < 2; mul++)
        for (int sg = 0; sg < 4; sg++)
            for (size_t si = 0; si < sizeof sc / sizeof *sc; si++)
                for (int bsc = 0; bsc < 2; bsc++) {
                    const int in_s = sg & 1, out_s = sg >> 1;
                    const nn_qbinary8_params p = { sc[si][0], sc[si][1], (double)sc[si][2], in_s ? -128 : 255,
                                                   in_s ? 5 : 3, out_s ? 127 : 0, mul, in_s, out_s, bsc };
                    for (size_t n = 0; n <= MAXN; n += n < 40 ? 1 : 7)
                        for (size_t off = 0; off < 3; off++) {
                            for (size_t i = 0; i < n + off; i++) { a[i] = (uint8_t)next(); b[i] = (uint8_t)next(); }
                            memset(y, 0xA5, sizeof y);
                            f(&p, a + off, b + off, y + off, n);
                            size_t bad = 0;
                            for (size_t i = 0; i < n; i++) {
                                const uint8_t bb = b[off + (bsc ? 0 : i)];
                                bad += y[off + i] != ref_qbin(&p, a[off + i], bb, p.ys);
                                if (si == 0) ctl += y[off + i] != ref_qbin(&p, a[off + i], bb, nextafter(p.ys, 2.0));
                            }
                            CHECK_MSG(bad == 0, "%s qbinary8 mul %d signed %d/%d scales %zu bscalar %d n %zu: %zu wrong",
                                      name, mul, in_s, out_s, si, bsc, n, bad);
                            for (size_t i = 0; i < off; i++) CHECK_MSG(y[i] == 0xA5, "%s qbinary8 wrote before", name);
                            for (size_t i = off + n; i < sizeof y; i++)
                                CHECK_MSG(y[i] == 0xA5, "%s qbinary8 n %zu wrote past the end", name, n);
                        }
                }
    CHECK_MSG(ctl > 0, "%s qbinary8 negative control: a 1-ulp change of ys went unnoticed", name);
}

/* Every (a, b) pair at once (65536 elements, so every lane position and block sees ties and their
 * neighbours) for scales where QLinearAdd takes the fixed-point form (as, bs below 16 ys): tie-rich
 * ones (quotients on halves and quarters), typical model scales, opposite signs, a ratio just under
 * the form's limit and ones far below it; Mul and a ratio above the limit for the double form. The
 * last (A scale = y scale / 2) puts Mul's quotients on exact halves with a y scale for which a
 * product with the double reciprocal rounds to the other integer on 11056 of the 130051 products:
 * the kernel must divide on those. */
static void check_qbin8_pairs(const char *name, void (*f)(const nn_qbinary8_params *, const uint8_t *, const uint8_t *,
                                                          uint8_t *, size_t)) {
    if (!f) return;
    enum { N = 65536 };
    uint8_t *a = malloc(N), *b = malloc(N), *y = malloc(N + 64);
    if (!a || !b || !y) { CHECK_MSG(0, "out of memory"); free(a); free(b); free(y); return; }
    for (size_t i = 0; i < N; i++) { a[i] = (uint8_t)i; b[i] = (uint8_t)(i >> 8); }
    const float sc[][3] = { { 0.5f, 0.5f, 1.0f }, { 0.25f, 0.75f, 0.5f }, { 0.0213f, 0.0187f, 0.0391f },
                            { 0.1f, 0.2f, 0.3f }, { 0.0625f, -0.125f, 0.25f }, { 15.9f, 0.01f, 1.0f },
                            { 1e-6f, 3e-7f, 1.0f }, { 0.0117647f, 0.0235294f, 0.0235294f }, { 0.9f, 17.0f, 1.0f },
                            { 0.031f, 0.027f, 0.045f }, { 2.750220537185669f, 1.0f, 5.500441074371338f } };
    for (int mul = 0; mul < 2; mul++)
        for (int sg = 0; sg < 4; sg++)
            for (size_t si = 0; si < sizeof sc / sizeof *sc; si++) {
                const int in_s = sg & 1, out_s = sg >> 1;
                const nn_qbinary8_params p = { sc[si][0], sc[si][1], (double)sc[si][2], (int32_t)(next() % 256) - (in_s ? 128 : 0),
                                               (int32_t)(next() % 256) - (in_s ? 128 : 0),
                                               (int32_t)(next() % 256) - (out_s ? 128 : 0), mul, in_s, out_s, 0 };
                memset(y, 0xA5, N + 64);
                f(&p, a, b, y, N);
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < N; i++)
                    if (y[i] != ref_qbin(&p, a[i], b[i], p.ys) && !bad++) first = i;
                for (size_t i = N; i < N + 64; i++) bad += y[i] != 0xA5;
                CHECK_MSG(bad == 0, "%s qbinary8 all pairs mul %d signed %d/%d scales %zu: %zu wrong (first a %u b %u)",
                          name, mul, in_s, out_s, si, bad, a[first], b[first]);
            }
    free(a); free(b); free(y);
}

/* lut8 against the plain lookup: random tables, every length to 300 and offsets 0-2, nothing
 * written outside [y, y + n). Negative control: a table differing in one entry must change some
 * output on the lengths that cover all byte values. */
static void check_lut8(const char *name, nn_lut8_fn f) {
    if (!f) return;
    enum { MAXN = 300 };
    uint8_t lut[256], x[MAXN + 4], y[MAXN + 68];
    size_t ctl = 0;
    for (int rep = 0; rep < 4; rep++) {
        for (int i = 0; i < 256; i++) lut[i] = (uint8_t)next();
        for (size_t n = 0; n <= MAXN; n++)
            for (size_t off = 0; off < 3; off++) {
                for (size_t i = 0; i < n + off; i++) x[i] = (uint8_t)(n == MAXN ? i : next());
                memset(y, 0xA5, sizeof y);
                f(lut, x + off, y + off, n);
                size_t bad = 0;
                for (size_t i = 0; i < n; i++) bad += y[off + i] != lut[x[off + i]];
                for (size_t i = 0; i < off; i++) bad += y[i] != 0xA5;
                for (size_t i = off + n; i < sizeof y; i++) bad += y[i] != 0xA5;
                CHECK_MSG(bad == 0, "%s lut8 n %zu off %zu: %zu wrong", name, n, off, bad);
                if (n == MAXN && off == 0) {
                    lut[200] ^= 1;
                    for (size_t i = 0; i < n; i++) ctl += y[i] != lut[x[i]];
                    lut[200] ^= 1;
                }
            }
    }
    CHECK_MSG(ctl > 0, "%s lut8 negative control: a changed entry went unnoticed", name);
}

/* u8_sum against the plain loop: lengths around every vector width, offsets, all-255 runs */
static void check_u8sum(const char *name, uint32_t (*f)(const uint8_t *, size_t)) {
    if (!f) return;
    enum { MAXN = 700 };
    static uint8_t x[MAXN + 64 + 3];
    size_t bad = 0, caught = 0, cases = 0;
    for (size_t n = 0; n <= MAXN; n += n < 260 ? 1 : 37)
        for (size_t off = 0; off < 3; off++) {
            const int ones = (n + off) % 5 == 0;
            for (size_t i = 0; i < sizeof x; i++) x[i] = ones ? 255 : (uint8_t)next();
            uint32_t want = 0;
            for (size_t i = 0; i < n; i++) want += x[off + i];
            bad += f(x + off, n) != want;
            if (n) {   /* the negative control: one byte of the range changed, one just past it */
                x[off + n] = (uint8_t)(x[off + n] + 1);
                bad += f(x + off, n) != want;
                x[off + n - 1] = (uint8_t)(x[off + n - 1] ^ 1);
                caught += f(x + off, n) != want;
                cases++;
            }
        }
    CHECK_MSG(bad == 0, "%s u8_sum: %zu wrong", name, bad);
    CHECK_MSG(caught == cases, "%s u8_sum: a changed byte went unnoticed in %zu of %zu cases", name, cases - caught,
              cases);
    static uint8_t big[70000];
    memset(big, 255, sizeof big);
    CHECK_MSG(f(big, sizeof big) == 255u * 70000u, "%s u8_sum: long run of 255", name);
}

int main(void) {
    const nn_isa_config *isa = nn_isa();
    check_dq8("level", isa->dequantize8);
    check_i32s("level", isa->i32_scale);
    check_u8sum("level", isa->u8_sum);
    check("level", isa->quantize8, isa->minmax);
    check_lut16("level", isa->lut16_u8);
    check_qbin8("level", isa->qbinary8);
    check_qbin8_pairs("level", isa->qbinary8);
    check_qbin8("level add", isa->qadd8_fixed);
    check_lut8("level", nn_isa_lut8());
    check_qbin8_pairs("level add", isa->qadd8_fixed);
#ifdef NN_HAVE_X86_UKERNELS
    cort_isa_level lv[8];
    const int nl = cort_cpu_levels(lv, 8);
    for (int i = 0; i < nl && i < 8; i++)
        if (lv[i] == CORT_ISA_AVX2) {
            check("avx2", nn_quantize8_f32_avx2, nn_minmax_f32_avx2);
            check_lut16("avx2", nn_lut16_u8_avx2);
            check_dq8("avx2", nn_dequantize8_f32_avx2);
            check_i32s("avx2", nn_i32_scale_f32_avx2);
            check_u8sum("avx2", nn_u8_sum_avx2);
            check_qbin8("avx2 add", nn_qadd8_fixed_avx2);
            check_qbin8_pairs("avx2 add", nn_qadd8_fixed_avx2);
        } else if (lv[i] == CORT_ISA_AVX512) {
            check("avx512", nn_quantize8_f32_avx512, NULL);
            check_lut16("avx512", nn_lut16_u8_avx512);
            check_dq8("avx512", nn_dequantize8_f32_avx512);
            check_i32s("avx512", nn_i32_scale_f32_avx512);
            check_u8sum("avx512", nn_u8_sum_avx512);
            check_qbin8("avx512", nn_qbinary8_avx512);
            check_qbin8_pairs("avx512", nn_qbinary8_avx512);
        }
#endif
    check_ops(1);
    check_ops(3);
    return tu_finish();
}
