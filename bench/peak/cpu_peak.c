/* CPU peak probe for the limit columns of `btchol bench` (src/bin/btchol/limits.rs).
 *
 *   gcc -O3 -mavx2 -mfma -pthread bench/peak/cpu_peak.c -o /tmp/cpu_peak && /tmp/cpu_peak [threads]
 *
 * FMA: 12 independent 256-bit FMA chains per thread (enough to cover latency x throughput on
 * Zen and Skylake-class cores), counted as 2 flops per lane. Bandwidth: memcpy-like streaming
 * copy of 256 MiB (read + write counted, like the GPU's device-to-device figure). Each number is
 * the best of several trials, so it is an upper bound of what the kernels can reach. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define ITERS 20000000L
static void *fma_pd(void *out) {
    __m256d a[12], m = _mm256_set1_pd(0.999999), c = _mm256_set1_pd(1e-7);
    for (int k = 0; k < 12; k++) a[k] = _mm256_set1_pd(k);
    for (long i = 0; i < ITERS; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm256_fmadd_pd(a[k], m, c);
    __m256d s = a[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_pd(s, a[k]);
    *(double *)out = _mm256_cvtsd_f64(s);
    return NULL;
}
static void *fma_ps(void *out) {
    __m256 a[12], m = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < 12; k++) a[k] = _mm256_set1_ps(k);
    for (long i = 0; i < ITERS; i++)
        for (int k = 0; k < 12; k++) a[k] = _mm256_fmadd_ps(a[k], m, c);
    __m256 s = a[0];
    for (int k = 1; k < 12; k++) s = _mm256_add_ps(s, a[k]);
    *(double *)out = _mm256_cvtss_f32(s);
    return NULL;
}

#define BYTES (256L << 20)
struct copy_arg { char *src, *dst; long len; };
static void *copy(void *p) {
    struct copy_arg *a = p;
    memcpy(a->dst, a->src, a->len);
    return NULL;
}

static double run(int threads, void *(*f)(void *), void *args, size_t argsize) {
    pthread_t t[64];
    double t0 = now();
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, f, (char *)args + i * argsize);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return now() - t0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    double sink[64];
    double best_pd = 1e30, best_ps = 1e30, best_bw = 1e30;
    for (int trial = 0; trial < 5; trial++) {
        double t = run(threads, fma_pd, sink, sizeof(double));
        if (t < best_pd) best_pd = t;
        t = run(threads, fma_ps, sink, sizeof(double));
        if (t < best_ps) best_ps = t;
    }
    char *src = malloc(BYTES), *dst = malloc(BYTES);
    memset(src, 1, BYTES);
    memset(dst, 2, BYTES);
    struct copy_arg ca[64];
    for (int i = 0; i < threads; i++)
        ca[i] = (struct copy_arg){src + i * (BYTES / threads), dst + i * (BYTES / threads), BYTES / threads};
    for (int trial = 0; trial < 10; trial++) {
        double t = run(threads, copy, ca, sizeof ca[0]);
        if (t < best_bw) best_bw = t;
    }
    double fl = (double)ITERS * 12 * 2 * threads;
    printf("threads %d\nfp64 %.2f GFLOP/s\nfp32 %.2f GFLOP/s\ncopy %.2f GB/s (read+write)\n", threads,
           fl * 4 / best_pd / 1e9, fl * 8 / best_ps / 1e9, 2.0 * BYTES / best_bw / 1e9);
    return sink[0] == 12345.0;
}
