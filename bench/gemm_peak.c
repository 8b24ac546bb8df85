/* The SGEMM micro-kernels against the core's FMA peak, and the M = 1 (GEMV) path against copy
 * bandwidth, on one thread at the ISA level in use (CORT_ISA):
 *   peak:   independent FMA chains on 8- (and 16-) float registers, GFLOP/s;
 *   kernel: each listed micro-kernel on L1-resident packed panels (K = 256), GFLOP/s and % of the
 *           peak of its register width;
 *   sgemm:  whole products with B prepacked (BERT's MatMul shapes), GFLOP/s;
 *   gemv:   nn_sgemm_opt with M = 1 and B prepacked (as a MatMul's constant weights), GB/s of B
 *           streamed, next to a memcpy of the same bytes (GB/s copied, and read + written) and a
 *           read-only vector sum over them.
 * Every figure is the best of many short repetitions, so a shared machine's preemptions drop out.
 * Usage: cort_gemm_peak [reps] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "providers/cpu/kernels/gemm.h"
#include "core/alloc.h"
#ifdef NN_HAVE_X86_UKERNELS
#include <immintrin.h>
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef NN_HAVE_X86_UKERNELS
/* 12 independent chains: more than FMA latency x ports (4 x 2) so the ports never wait */
__attribute__((noinline, target("avx2,fma"))) static float fma_peak8(size_t iters) {
    /* distinct start values: identical chains would be merged into one by the compiler, and the loop
     * would time one FMA's latency instead of the ports' throughput */
    __m256 a0 = _mm256_set1_ps(1.00f), a1 = _mm256_set1_ps(1.01f), a2 = _mm256_set1_ps(1.02f);
    __m256 a3 = _mm256_set1_ps(1.03f), a4 = _mm256_set1_ps(1.04f), a5 = _mm256_set1_ps(1.05f);
    __m256 a6 = _mm256_set1_ps(1.06f), a7 = _mm256_set1_ps(1.07f), a8 = _mm256_set1_ps(1.08f);
    __m256 a9 = _mm256_set1_ps(1.09f), a10 = _mm256_set1_ps(1.10f), a11 = _mm256_set1_ps(1.11f);
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (size_t i = 0; i < iters; i++) {
        a0 = _mm256_fmadd_ps(a0, m, c); a1 = _mm256_fmadd_ps(a1, m, c); a2 = _mm256_fmadd_ps(a2, m, c);
        a3 = _mm256_fmadd_ps(a3, m, c); a4 = _mm256_fmadd_ps(a4, m, c); a5 = _mm256_fmadd_ps(a5, m, c);
        a6 = _mm256_fmadd_ps(a6, m, c); a7 = _mm256_fmadd_ps(a7, m, c); a8 = _mm256_fmadd_ps(a8, m, c);
        a9 = _mm256_fmadd_ps(a9, m, c); a10 = _mm256_fmadd_ps(a10, m, c); a11 = _mm256_fmadd_ps(a11, m, c);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((noinline, target("avx512f"))) static float fma_peak16(size_t iters) {
    __m512 a0 = _mm512_set1_ps(1.00f), a1 = _mm512_set1_ps(1.01f), a2 = _mm512_set1_ps(1.02f);
    __m512 a3 = _mm512_set1_ps(1.03f), a4 = _mm512_set1_ps(1.04f), a5 = _mm512_set1_ps(1.05f);
    __m512 a6 = _mm512_set1_ps(1.06f), a7 = _mm512_set1_ps(1.07f), a8 = _mm512_set1_ps(1.08f);
    __m512 a9 = _mm512_set1_ps(1.09f), a10 = _mm512_set1_ps(1.10f), a11 = _mm512_set1_ps(1.11f);
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (size_t i = 0; i < iters; i++) {
        a0 = _mm512_fmadd_ps(a0, m, c); a1 = _mm512_fmadd_ps(a1, m, c); a2 = _mm512_fmadd_ps(a2, m, c);
        a3 = _mm512_fmadd_ps(a3, m, c); a4 = _mm512_fmadd_ps(a4, m, c); a5 = _mm512_fmadd_ps(a5, m, c);
        a6 = _mm512_fmadd_ps(a6, m, c); a7 = _mm512_fmadd_ps(a7, m, c); a8 = _mm512_fmadd_ps(a8, m, c);
        a9 = _mm512_fmadd_ps(a9, m, c); a10 = _mm512_fmadd_ps(a10, m, c); a11 = _mm512_fmadd_ps(a11, m, c);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

/* GFLOP/s of the peak loop for vectors of `lanes` floats (best of reps) */
static double peak_gflops(int lanes, int reps) {
    const size_t iters = 20000;
    double best = 1e30;
    volatile float sink = 0.0f;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        sink += lanes == 16 ? fma_peak16(iters) : fma_peak8(iters);
        const double dt = now() - t0;
        if (dt < best) best = dt;
    }
    (void)sink;
    return 2.0 * 12.0 * (double)lanes * (double)iters / best * 1e-9;
}
#endif

#ifdef NN_HAVE_X86_UKERNELS
/* a read-only stream: the sum of n floats, 4 independent accumulators */
__attribute__((noinline, target("avx2,fma"))) static float read_stream(const float *x, size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + i + 24));
    }
    float out[8], t = 0.0f;
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (int q = 0; q < 8; q++) t += out[q];
    for (; i < n; i++) t += x[i];
    return t;
}
#endif

static double kernel_gflops(const nn_gemm_kernel *k, int reps) {
    const size_t kc = 256, mr = k->mr, nr = k->nr, calls = 40;
    float *a = cort_malloc(mr * kc * sizeof(float)), *b = cort_malloc(kc * nr * sizeof(float));
    float *c = cort_malloc(mr * nr * sizeof(float));
    if (!a || !b || !c) { cort_free(a); cort_free(b); cort_free(c); return 0.0; }
    for (size_t i = 0; i < mr * kc; i++) a[i] = 1e-3f * (float)(i % 7);
    for (size_t i = 0; i < kc * nr; i++) b[i] = 1e-3f * (float)(i % 5);
    memset(c, 0, mr * nr * sizeof(float));
    nn_ukr_args u;
    memset(&u, 0, sizeof u);
    u.kc = kc; u.a = a; u.a_rs = 1; u.a_cs = mr; u.b = b; u.ldb = nr; u.c = c; u.ldc = nr; u.accumulate = 1;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        for (size_t q = 0; q < calls; q++) k->ukr(&u);
        const double dt = now() - t0;
        if (dt < best) best = dt;
    }
    cort_free(a); cort_free(b); cort_free(c);
    return 2.0 * (double)(mr * nr * kc * calls) / best * 1e-9;
}

/* GB/s of B streamed by an M = 1 product with B prepacked (K x N), and of a memcpy of as many bytes */
static void gemv_bw(size_t K, size_t N, int reps) {
    float *A = cort_malloc(K * sizeof(float)), *B = cort_malloc(K * N * sizeof(float));
    float *C = cort_malloc(N * sizeof(float)), *D = cort_malloc(K * N * sizeof(float));
    if (!A || !B || !C || !D) { printf("gemv %zux%zu: out of memory\n", K, N); goto done; }
    for (size_t i = 0; i < K; i++) A[i] = 1e-3f * (float)(i % 11);
    for (size_t i = 0; i < K * N; i++) B[i] = 1e-3f * (float)(i % 13);
    memset(D, 0, K * N * sizeof(float));
    nn_gemm_b b = nn_gemm_b_matrix(B, N, 0);
    nn_gemm_packed bp;
    if (nn_gemm_pack_b(NULL, K, N, &b, &bp)) { printf("gemv %zux%zu: pack failed\n", K, N); goto done; }
    nn_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.bpack = &bp;
    double best = 1e30, best_copy = 1e30, best_read = 1e30;
    volatile float sink = 0.0f;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        cort_status *st = nn_sgemm_opt(NULL, NULL, 1, N, K, 1.0f, A, K, 0, &b, 0.0f, C, N, &o);
        double dt = now() - t0;
        if (st) { cort_status_free(st); break; }
        if (dt < best) best = dt;
        t0 = now();
        memcpy(D, bp.data, K * N * sizeof(float));
        dt = now() - t0;
        if (dt < best_copy) best_copy = dt;
#ifdef NN_HAVE_X86_UKERNELS
        if (cort_cpu_isa() == CORT_ISA_AVX2 || cort_cpu_isa() == CORT_ISA_AVX512) {
            t0 = now();
            sink += read_stream(bp.data, K * N);
            dt = now() - t0;
            if (dt < best_read) best_read = dt;
        }
#endif
    }
    (void)sink;
    const double bytes = (double)K * (double)N * sizeof(float);
    printf("gemv %5zu x %-5zu (%6.1f MB of B): %7.3f ms %6.1f GB/s | memcpy %6.1f GB/s copied (%6.1f moved) | "
           "read-only sum %6.1f GB/s\n", K, N, bytes / 1e6, best * 1e3, bytes / best * 1e-9, bytes / best_copy * 1e-9,
           2.0 * bytes / best_copy * 1e-9, best_read < 1e30 ? bytes / best_read * 1e-9 : 0.0);
    nn_gemm_packed_free(&bp);
done:
    cort_free(A); cort_free(B); cort_free(C); cort_free(D);
}

/* GFLOP/s of a whole product with B prepacked (a MatMul against constant weights), one thread:
 * what the driver's blocking keeps of the micro-kernel's rate */
static void sgemm_packed(size_t M, size_t K, size_t N, int reps) {
    float *A = cort_malloc(M * K * sizeof(float)), *B = cort_malloc(K * N * sizeof(float));
    float *C = cort_malloc(M * N * sizeof(float));
    if (!A || !B || !C) { printf("sgemm %zux%zux%zu: out of memory\n", M, K, N); goto done; }
    for (size_t i = 0; i < M * K; i++) A[i] = 1e-3f * (float)(i % 11);
    for (size_t i = 0; i < K * N; i++) B[i] = 1e-3f * (float)(i % 13);
    nn_gemm_b b = nn_gemm_b_matrix(B, N, 0);
    nn_gemm_packed bp;
    if (nn_gemm_pack_b(NULL, K, N, &b, &bp)) { printf("sgemm %zux%zux%zu: pack failed\n", M, K, N); goto done; }
    nn_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.bpack = &bp;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        cort_status *st = nn_sgemm_opt(NULL, NULL, M, N, K, 1.0f, A, K, 0, &b, 0.0f, C, N, &o);
        const double dt = now() - t0;
        if (st) { cort_status_free(st); break; }
        if (dt < best) best = dt;
    }
    printf("sgemm %4zu x %4zu x %-4zu (B packed): %7.3f ms %6.1f GFLOP/s\n", M, K, N, best * 1e3,
           2.0 * (double)M * (double)K * (double)N / best * 1e-9);
    nn_gemm_packed_free(&bp);
done:
    cort_free(A); cort_free(B); cort_free(C);
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 200;
    const nn_gemm_kernel *const *kernels;
    const size_t nk = nn_gemm_kernels(&kernels);
    printf("ISA level %d, best kernel %s\n", (int)cort_cpu_isa(), nn_gemm_best_kernel()->name);
#ifdef NN_HAVE_X86_UKERNELS
    const double p8 = cort_cpu_isa() >= CORT_ISA_AVX2 && cort_cpu_isa() != CORT_ISA_NEON ? peak_gflops(8, reps) : 0.0;
    const double p16 = cort_cpu_isa() == CORT_ISA_AVX512 ? peak_gflops(16, reps) : 0.0;
    if (p8 > 0.0) printf("FMA peak, 8-float vectors:  %7.1f GFLOP/s\n", p8);
    if (p16 > 0.0) printf("FMA peak, 16-float vectors: %7.1f GFLOP/s\n", p16);
#else
    const double p8 = 0.0, p16 = 0.0;
#endif
    for (size_t i = 0; i < nk; i++) {
        const nn_gemm_kernel *k = kernels[i];
        const double g = kernel_gflops(k, reps);
        const double peak = k->isa == CORT_ISA_AVX512 ? p16 : k->isa == CORT_ISA_AVX2 ? p8 : 0.0;
        if (peak > 0.0) printf("kernel %-14s %7.1f GFLOP/s  %5.1f %% of peak\n", k->name, g, 100.0 * g / peak);
        else printf("kernel %-14s %7.1f GFLOP/s\n", k->name, g);
    }
    sgemm_packed(128, 768, 768, reps / 10 + 1);     /* BERT-base attention projections, 128 tokens */
    sgemm_packed(128, 768, 3072, reps / 20 + 1);    /* its feed-forward layers */
    sgemm_packed(128, 3072, 768, reps / 20 + 1);
    gemv_bw(3264, 512, reps / 4 + 1);
    gemv_bw(1024, 1024, reps / 4 + 1);
    gemv_bw(4096, 4096, reps / 20 + 1);
    return 0;
}
