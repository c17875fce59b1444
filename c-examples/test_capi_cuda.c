/*
 * test_capi_cuda.c: the C API on a GPU: CUDA plans with host buffers, and the _device entry
 * points with buffers in GPU memory on a caller-owned stream. Compiled as C and as C++.
 *
 * Without a usable GPU (btchol_cuda_available() == 0) it prints why and exits 77, which ctest
 * reports as skipped. GPU memory and streams come from the CUDA driver API, loaded with dlopen,
 * so the program needs no CUDA headers or toolkit to build.
 */
#include <btchol.h>

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, N = 33, n = 8, ROWS = N * n, DLEN = B * N * n * n, ELEN = B * (N - 1) * n * n, M = 2 };

static int checks = 0, failures = 0;
#define CHECK(cond) check_((cond) ? 1 : 0, __LINE__, #cond)
static void check_(int ok, int line, const char *expr) {
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "FAILED line %d: %s (last error: %s)\n", line, expr, btchol_last_error_message());
    }
}
#define EXPECT(call, want) expect_((call), (want), #call, __LINE__)
static void expect_(btchol_status got, btchol_status want, const char *expr, int line) {
    checks++;
    if (got != want) {
        failures++;
        fprintf(stderr, "FAILED line %d: %s\n    status %d (%s), expected %d: %s\n", line, expr, (int)got,
                btchol_status_string(got), (int)want, btchol_last_error_message());
    }
}

/* ---- the few driver-API calls the test needs ---- */
typedef int (*cuInit_t)(unsigned);
typedef int (*cuDeviceGet_t)(int *, int);
typedef int (*cuDevicePrimaryCtxRetain_t)(void **, int);
typedef int (*cuCtxSetCurrent_t)(void *);
typedef int (*cuMemAlloc_t)(unsigned long long *, size_t);
typedef int (*cuMemFree_t)(unsigned long long);
typedef int (*cuMemcpyHtoD_t)(unsigned long long, const void *, size_t);
typedef int (*cuMemcpyDtoH_t)(void *, unsigned long long, size_t);
typedef int (*cuStreamCreate_t)(void **, unsigned);
typedef int (*cuStreamDestroy_t)(void *);
static struct {
    cuMemAlloc_t alloc;
    cuMemFree_t free;
    cuMemcpyHtoD_t htod;
    cuMemcpyDtoH_t dtoh;
    cuStreamCreate_t stream_create;
    cuStreamDestroy_t stream_destroy;
} cu;

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (p == NULL) {
        fprintf(stderr, "libcuda has no %s\n", name);
        exit(1);
    }
    return p;
}

static void load_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    void *ctx = NULL;
    int dev = 0;
    if (lib == NULL) {
        fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
        exit(1);
    }
    cuInit_t init = (cuInit_t)sym(lib, "cuInit");
    cuDeviceGet_t device_get = (cuDeviceGet_t)sym(lib, "cuDeviceGet");
    cuDevicePrimaryCtxRetain_t retain = (cuDevicePrimaryCtxRetain_t)sym(lib, "cuDevicePrimaryCtxRetain");
    cuCtxSetCurrent_t set_current = (cuCtxSetCurrent_t)sym(lib, "cuCtxSetCurrent");
    cu.alloc = (cuMemAlloc_t)sym(lib, "cuMemAlloc_v2");
    cu.free = (cuMemFree_t)sym(lib, "cuMemFree_v2");
    cu.htod = (cuMemcpyHtoD_t)sym(lib, "cuMemcpyHtoD_v2");
    cu.dtoh = (cuMemcpyDtoH_t)sym(lib, "cuMemcpyDtoH_v2");
    cu.stream_create = (cuStreamCreate_t)sym(lib, "cuStreamCreate");
    cu.stream_destroy = (cuStreamDestroy_t)sym(lib, "cuStreamDestroy_v2");
    /* btchol works in device 0's primary context: allocate in the same one. */
    if (init(0) != 0 || device_get(&dev, 0) != 0 || retain(&ctx, dev) != 0 || set_current(ctx) != 0) {
        fprintf(stderr, "cannot make device 0's primary context current\n");
        exit(1);
    }
}

static unsigned long long to_device(const void *host, size_t bytes) {
    unsigned long long p = 0;
    if (cu.alloc(&p, bytes) != 0 || cu.htod(p, host, bytes) != 0) {
        fprintf(stderr, "cuMemAlloc/cuMemcpyHtoD of %zu bytes failed\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- problem and residual (row-major blocks) ---- */
#define AT(buf, blk, r, c) ((buf)[(size_t)(blk) * n * n + (size_t)(r) * n + (size_t)(c)])

static double uniform(unsigned long long *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double residual(const double *d, const double *e, int item, const double *x, const double *b, int ld,
                       int col) {
    double r = 0.0, xm = 0.0;
    for (int i = 0; i < N; i++)
        for (int rr = 0; rr < n; rr++) {
            double s = 0.0;
            for (int c = 0; c < n; c++) s += AT(d, item * N + i, rr, c) * x[(i * n + c) * ld + col];
            if (i > 0)
                for (int c = 0; c < n; c++) s += AT(e, item * (N - 1) + i - 1, rr, c) * x[((i - 1) * n + c) * ld + col];
            if (i + 1 < N)
                for (int c = 0; c < n; c++) s += AT(e, item * (N - 1) + i, c, rr) * x[((i + 1) * n + c) * ld + col];
            r = fmax(r, fabs(b[(i * n + rr) * ld + col] - s));
            xm = fmax(xm, fabs(x[(i * n + rr) * ld + col]));
        }
    return r / (1.0 + xm);
}

static btchol_plan *cuda_plan(btchol_dtype dtype) {
    btchol_plan_options o;
    btchol_plan *p = NULL;
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CUDA;
    EXPECT(btchol_plan_create(B, N, n, dtype, &o, &p), BTCHOL_STATUS_SUCCESS);
    return p;
}

int main(void) {
    if (!btchol_cuda_available()) {
        printf("test_capi_cuda: skipped: no usable CUDA device (btchol_cuda_available() = 0)\n");
        return 77;
    }
    load_driver();
    static double d[DLEN], e[ELEN], b[B * ROWS * M], x[B * ROWS * M];
    unsigned long long seed = 99;
    for (int k = 0; k < ELEN; k++) e[k] = 0.5 * uniform(&seed);
    for (int blk = 0; blk < B * N; blk++) {
        for (int r = 0; r < n; r++)
            for (int c = 0; c <= r; c++) AT(d, blk, r, c) = AT(d, blk, c, r) = 0.3 * uniform(&seed);
        for (int r = 0; r < n; r++) AT(d, blk, r, r) = 2.0 * n + r;
    }
    for (int k = 0; k < B * ROWS * M; k++) b[k] = uniform(&seed);

    /* A CUDA plan runs nested dissection; the sequential algorithm cannot run there. */
    btchol_plan_options o;
    btchol_plan *bad = NULL;
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CUDA;
    o.algorithm = BTCHOL_ALGORITHM_SEQUENTIAL;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &bad), BTCHOL_STATUS_INVALID_ARGUMENT);
    CHECK(bad == NULL);

    btchol_plan *p = cuda_plan(BTCHOL_DTYPE_F64);
    btchol_backend backend = -1;
    btchol_algorithm algorithm = -1;
    int64_t bytes = 0;
    EXPECT(btchol_plan_backend(p, &backend), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_algorithm(p, &algorithm), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_workspace_bytes(p, &bytes), BTCHOL_STATUS_SUCCESS);
    CHECK(backend == BTCHOL_BACKEND_CUDA && algorithm == BTCHOL_ALGORITHM_NESTED_DISSECTION && bytes > 0);

    /* Host buffers on a CUDA plan. */
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_solve(p, x, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_SUCCESS);
    for (int item = 0; item < B; item++)
        for (int c = 0; c < M; c++) CHECK(residual(d, e, item, x + item * ROWS * M, b + item * ROWS * M, M, c) < 1e-12);
    double logdet[B];
    EXPECT(btchol_plan_logdet(p, logdet), BTCHOL_STATUS_SUCCESS);

    /* The same through device memory on the caller's stream. */
    void *stream = NULL;
    CHECK(cu.stream_create(&stream, 0) == 0);
    EXPECT(btchol_plan_set_stream(p, stream), BTCHOL_STATUS_SUCCESS);
    unsigned long long dd = to_device(d, sizeof d), de = to_device(e, sizeof e), dx = to_device(b, sizeof b);
    EXPECT(btchol_plan_upload_device(p, NULL, (void *)(uintptr_t)de), BTCHOL_STATUS_NULL_POINTER);
    EXPECT(btchol_plan_upload_device(p, (void *)(uintptr_t)(dd + 1), (void *)(uintptr_t)de),
           BTCHOL_STATUS_INVALID_ARGUMENT);
    EXPECT(btchol_plan_upload_device(p, (void *)(uintptr_t)dd, (void *)(uintptr_t)de), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_solve_device(p, NULL, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NULL_POINTER);
    EXPECT(btchol_plan_solve_device(p, (void *)(uintptr_t)dx, M, BTCHOL_LAYOUT_ROW_MAJOR, M - 1, 0),
           BTCHOL_STATUS_INVALID_ARGUMENT);
    EXPECT(btchol_plan_solve_device(p, (void *)(uintptr_t)dx, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0),
           BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_synchronize(p), BTCHOL_STATUS_SUCCESS);
    static double xd[B * ROWS * M];
    CHECK(cu.dtoh(xd, dx, sizeof xd) == 0);
    for (int k = 0; k < B * ROWS * M; k++) CHECK(fabs(xd[k] - x[k]) < 1e-12 * (1.0 + fabs(x[k])));
    /* Factor and device solve in one call: the same solution; a second call needs an upload. */
    int64_t fs_item = -7, fs_info = -7;
    CHECK(cu.htod(dx, b, sizeof b) == 0);
    EXPECT(btchol_plan_factor_solve_device(p, (void *)(uintptr_t)dx, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &fs_item,
                                           &fs_info),
           BTCHOL_STATUS_INVALID_STATE);
    EXPECT(btchol_plan_upload_device(p, (void *)(uintptr_t)dd, (void *)(uintptr_t)de), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_factor_solve_device(p, NULL, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL),
           BTCHOL_STATUS_NULL_POINTER);
    EXPECT(btchol_plan_factor_solve_device(p, (void *)(uintptr_t)dx, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &fs_item,
                                           &fs_info),
           BTCHOL_STATUS_SUCCESS);
    CHECK(fs_item == -1 && fs_info == 0);
    CHECK(cu.dtoh(xd, dx, sizeof xd) == 0);
    for (int k = 0; k < B * ROWS * M; k++) CHECK(fabs(xd[k] - x[k]) < 1e-12 * (1.0 + fabs(x[k])));
    double logdet2[B];
    EXPECT(btchol_plan_logdet(p, logdet2), BTCHOL_STATUS_SUCCESS);
    for (int item = 0; item < B; item++) CHECK(fabs(logdet2[item] - logdet[item]) < 1e-10 * fabs(logdet[item]));

    /* log det against a CPU plan. */
    btchol_plan *cpu = NULL;
    double logdet_cpu[B];
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CPU;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &cpu), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_upload(cpu, d, e), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_factor(cpu, NULL, NULL), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_logdet(cpu, logdet_cpu), BTCHOL_STATUS_SUCCESS);
    for (int item = 0; item < B; item++) CHECK(fabs(logdet_cpu[item] - logdet[item]) < 1e-10 * fabs(logdet[item]));
    btchol_plan_destroy(cpu);

    /* Not positive definite on the GPU: item 2, one pivot of block 17. */
    double saved = AT(d, 2 * N + 17, 3, 3);
    int64_t failed_item = -7, info = -7, status[B];
    AT(d, 2 * N + 17, 3, 3) = -1e4;
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS);
    EXPECT(btchol_plan_factor(p, &failed_item, &info), BTCHOL_STATUS_NOT_POSITIVE_DEFINITE);
    CHECK(failed_item == 2 && info >= 1 && info <= ROWS);
    CHECK(strstr(btchol_last_error_message(), "batch item 2") != NULL);
    EXPECT(btchol_plan_item_status(p, status), BTCHOL_STATUS_SUCCESS);
    CHECK(status[0] == 0 && status[1] == 0 && status[2] == info);
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_solve(p, x, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NOT_POSITIVE_DEFINITE);
    CHECK(residual(d, e, 0, x, b, M, 0) < 1e-12 && residual(d, e, 1, x + ROWS * M, b + ROWS * M, M, 1) < 1e-12);
    CHECK(memcmp(x + 2 * ROWS * M, b + 2 * ROWS * M, ROWS * M * sizeof(double)) == 0);
    AT(d, 2 * N + 17, 3, 3) = saved;
    /* NaN on a CUDA plan's host upload. */
    AT(d, 5, 2, 1) = NAN;
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_NON_FINITE_INPUT);
    AT(d, 5, 2, 1) = AT(d, 5, 1, 2);

    /* Back to the default stream; the plan is still usable. */
    EXPECT(btchol_plan_set_stream(p, NULL), BTCHOL_STATUS_SUCCESS);
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_factor_solve(p, d, e, x, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &failed_item, &info),
           BTCHOL_STATUS_SUCCESS);
    CHECK(failed_item == -1 && info == 0);
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, x + item * ROWS * M, b + item * ROWS * M, M, 0) < 1e-12);
    btchol_plan_destroy(p);
    CHECK(cu.stream_destroy(stream) == 0);

    /* f32 on the GPU. */
    static float df[DLEN], ef[ELEN], xf[B * ROWS * M];
    for (int k = 0; k < DLEN; k++) df[k] = (float)d[k];
    for (int k = 0; k < ELEN; k++) ef[k] = (float)e[k];
    for (int k = 0; k < B * ROWS * M; k++) xf[k] = (float)b[k];
    btchol_plan *p32 = cuda_plan(BTCHOL_DTYPE_F32);
    EXPECT(btchol_plan_factor_solve(p32, df, ef, xf, M, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL),
           BTCHOL_STATUS_SUCCESS);
    for (int k = 0; k < B * ROWS * M; k++) x[k] = xf[k];
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, x + item * ROWS * M, b + item * ROWS * M, M, 1) < 1e-5);
    btchol_plan_destroy(p32);

    cu.free(dd);
    cu.free(de);
    cu.free(dx);
    printf("test_capi_cuda: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
