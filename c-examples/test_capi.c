/*
 * test_capi.c: the C API against every kind of bad input, compiled as C and as C++.
 *
 * Each bad call must return its documented status with a last-error message that names the
 * problem, must leave its outputs untouched, and must leave the plan usable: every section ends
 * with a good upload/factor/solve on the same plan. Exits non-zero when any check fails.
 */
#include <btchol.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, N = 4, n = 3, ROWS = N * n, DLEN = B * N * n * n, ELEN = B * (N - 1) * n * n };

static int checks = 0, failures = 0;

static void report(int ok, int line, const char *expr, const char *why) {
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "FAILED line %d: %s\n    %s\n", line, expr, why);
    }
}

#define CHECK(cond) report((cond) ? 1 : 0, __LINE__, #cond, "condition is false")

/* The call must return `want`; a failure must leave a message containing `needle` (and the name
 * of the function), a success an empty message. */
#define EXPECT(call, want, needle) expect_status((call), (want), (needle), #call, __LINE__)

static void expect_status(btchol_status got, btchol_status want, const char *needle, const char *expr, int line) {
    char why[1536];
    const char *msg = btchol_last_error_message();
    int ok = 1;
    if (got != want) {
        snprintf(why, sizeof why, "status %d (%s), expected %d (%s); message: %s", (int)got,
                 btchol_status_string(got), (int)want, btchol_status_string(want), msg);
        ok = 0;
    } else if (want == BTCHOL_STATUS_SUCCESS && msg[0] != '\0') {
        snprintf(why, sizeof why, "success left a message: %s", msg);
        ok = 0;
    } else if (want != BTCHOL_STATUS_SUCCESS && (strncmp(msg, "btchol_", 7) != 0 || strlen(msg) < 20)) {
        snprintf(why, sizeof why, "the message does not name the function and the problem: \"%s\"", msg);
        ok = 0;
    } else if (want != BTCHOL_STATUS_SUCCESS && needle != NULL && strstr(msg, needle) == NULL) {
        snprintf(why, sizeof why, "the message lacks \"%s\": %s", needle, msg);
        ok = 0;
    } else {
        why[0] = '\0';
        if (want != BTCHOL_STATUS_SUCCESS && getenv("BTCHOL_TEST_VERBOSE") != NULL) printf("  ok: %s\n", msg);
    }
    report(ok, line, expr, why);
}

/* ---- problems and an independent reference ---- */

static double uniform(unsigned long long *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Row-major element (r, c) of block `blk`. */
#define AT(buf, blk, r, c) ((buf)[(size_t)(blk) * n * n + (size_t)(r) * n + (size_t)(c)])

/* A random, diagonally dominant (so SPD) batch with full symmetric D blocks, row-major. */
static void make_problem(double *d, double *e, unsigned long long seed) {
    for (int k = 0; k < ELEN; k++) e[k] = 0.5 * uniform(&seed);
    for (int blk = 0; blk < B * N; blk++) {
        for (int r = 0; r < n; r++)
            for (int c = 0; c <= r; c++) AT(d, blk, r, c) = AT(d, blk, c, r) = 0.3 * uniform(&seed);
        for (int r = 0; r < n; r++) AT(d, blk, r, r) = 4.0 + r;
    }
}

/* y = Psi x for one item, dense vectors of ROWS elements. */
static void matvec(const double *d, const double *e, int item, const double *x, double *y) {
    for (int i = 0; i < N; i++)
        for (int r = 0; r < n; r++) {
            double s = 0.0;
            for (int c = 0; c < n; c++) s += AT(d, item * N + i, r, c) * x[i * n + c];
            if (i > 0)
                for (int c = 0; c < n; c++) s += AT(e, item * (N - 1) + i - 1, r, c) * x[(i - 1) * n + c];
            if (i + 1 < N)
                for (int c = 0; c < n; c++) s += AT(e, item * (N - 1) + i, c, r) * x[(i + 1) * n + c];
            y[i * n + r] = s;
        }
}

/* max |b - Psi x| / (1 + max |x|) for one item. */
static double residual(const double *d, const double *e, int item, const double *x, const double *b) {
    double y[ROWS], r = 0.0, xm = 0.0;
    matvec(d, e, item, x, y);
    for (int k = 0; k < ROWS; k++) {
        r = fmax(r, fabs(b[k] - y[k]));
        xm = fmax(xm, fabs(x[k]));
    }
    return r / (1.0 + xm);
}

/* log det Psi of one item by a dense Cholesky factorization (the reference for logdet). */
static double dense_logdet(const double *d, const double *e, int item) {
    static double a[ROWS * ROWS];
    double x[ROWS], y[ROWS], ld = 0.0;
    for (int c = 0; c < ROWS; c++) {
        for (int k = 0; k < ROWS; k++) x[k] = (k == c);
        matvec(d, e, item, x, y);
        for (int r = 0; r < ROWS; r++) a[r * ROWS + c] = y[r];
    }
    for (int j = 0; j < ROWS; j++) {
        double s = a[j * ROWS + j];
        for (int k = 0; k < j; k++) s -= a[j * ROWS + k] * a[j * ROWS + k];
        if (!(s > 0.0)) return NAN;
        a[j * ROWS + j] = sqrt(s);
        ld += 2.0 * log(a[j * ROWS + j]);
        for (int i = j + 1; i < ROWS; i++) {
            double t = a[i * ROWS + j];
            for (int k = 0; k < j; k++) t -= a[i * ROWS + k] * a[j * ROWS + k];
            a[i * ROWS + j] = t / a[j * ROWS + j];
        }
    }
    return ld;
}

static btchol_plan *create_plan(btchol_dtype dtype, btchol_algorithm algorithm, btchol_layout layout) {
    btchol_plan_options o;
    btchol_plan *p = NULL;
    EXPECT(btchol_plan_options_init(&o), BTCHOL_STATUS_SUCCESS, NULL);
    o.backend = BTCHOL_BACKEND_CPU;
    o.algorithm = algorithm;
    o.layout = layout;
    o.threads = 1;
    EXPECT(btchol_plan_create(B, N, n, dtype, &o, &p), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(p != NULL);
    return p;
}

/* The full good cycle on `p` (f64, row-major): proves the plan is still usable. */
static void good_cycle(btchol_plan *p, const double *d, const double *e, const double *b) {
    double x[B * ROWS];
    int64_t failed_item = 99, info = 99;
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(p, &failed_item, &info), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(failed_item == -1 && info == 0);
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_SUCCESS, NULL);
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, x + item * ROWS, b + item * ROWS) < 1e-13);
}

/* ---- sections ---- */

static void test_library(void) {
    char expect[64];
    snprintf(expect, sizeof expect, "%d.%d.%d", BTCHOL_VERSION_MAJOR, BTCHOL_VERSION_MINOR, BTCHOL_VERSION_PATCH);
    CHECK(strcmp(btchol_version(), expect) == 0);
    CHECK(btchol_version_number() == (uint32_t)BTCHOL_VERSION_NUMBER);
    for (int s = BTCHOL_STATUS_SUCCESS; s <= BTCHOL_STATUS_UNSUPPORTED; s++) {
        const char *text = btchol_status_string(s);
        CHECK(text != NULL && strlen(text) > 3 && strcmp(text, "unknown status") != 0);
    }
    CHECK(strcmp(btchol_status_string(-1), "unknown status") == 0);
    CHECK(strcmp(btchol_status_string(1000), "unknown status") == 0);
    CHECK(BTCHOL_STATUS_NO_CUDA == BTCHOL_STATUS_BACKEND_UNAVAILABLE);
    CHECK(btchol_cuda_available() == 0 || btchol_cuda_available() == 1);
    EXPECT(btchol_plan_options_init(NULL), BTCHOL_STATUS_NULL_POINTER, "options");
    btchol_plan_destroy(NULL); /* a no-op */
}

static void test_create(void) {
    btchol_plan_options o;
    /* A failed create must leave *out_plan alone: start from a recognisable non-NULL value. */
    static int sentinel_object;
    btchol_plan *const sentinel = (btchol_plan *)(void *)&sentinel_object;
    btchol_plan *p = sentinel;

    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "out_plan");
    EXPECT(btchol_plan_create(0, N, n, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "batch");
    EXPECT(btchol_plan_create(-3, N, n, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "batch");
    EXPECT(btchol_plan_create(B, -5, n, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "n_blocks");
    EXPECT(btchol_plan_create(B, 0, n, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "N");
    EXPECT(btchol_plan_create(B, N, 0, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "block size");
    EXPECT(btchol_plan_create(B, N, -1, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "block_size");
    EXPECT(btchol_plan_create(B, N, 5000, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION, "maximum");
    EXPECT(btchol_plan_create(B, INT64_C(1) << 40, n, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION,
           "maximum");
    EXPECT(btchol_plan_create(INT64_MAX, 2, 2, BTCHOL_DTYPE_F64, NULL, &p), BTCHOL_STATUS_INVALID_DIMENSION,
           "overflows");
    EXPECT(btchol_plan_create(INT64_C(1) << 40, INT64_C(1) << 20, 64, BTCHOL_DTYPE_F32, NULL, &p),
           BTCHOL_STATUS_INVALID_DIMENSION, "overflows");
    EXPECT(btchol_plan_create(B, N, n, 7, NULL, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "dtype");
    EXPECT(btchol_plan_create(B, N, n, -1, NULL, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "dtype");

    /* Options: uninitialised, out-of-range codes, reserved words. */
    memset(&o, 0, sizeof o);
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT,
           "btchol_plan_options_init");
    memset(&o, 0xA5, sizeof o); /* garbage */
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "struct_size");
    btchol_plan_options_init(&o);
    CHECK(o.struct_size == sizeof o && o.backend == BTCHOL_BACKEND_AUTO && o.threads == 0 && o.diag_shift == 0.0 &&
          o.pivot_boost == 0.0 && o.deterministic == 0 && o.partition_chunk == BTCHOL_PARTITION_AUTO &&
          o.reserved[0] == 0);
    o.backend = 99;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "backend");
    btchol_plan_options_init(&o);
    o.algorithm = 3;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "algorithm");
    btchol_plan_options_init(&o);
    o.partition_chunk = -2;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "partition_chunk");
    btchol_plan_options_init(&o);
    o.layout = 2;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "layout");
    btchol_plan_options_init(&o);
    o.threads = -4;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "threads");
    btchol_plan_options_init(&o);
    o.max_nrhs = -1;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "max_nrhs");
    btchol_plan_options_init(&o);
    o.reserved[0] = 1;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "reserved[0]");
    btchol_plan_options_init(&o);
    o.pivot_threshold = 1e-8; /* a threshold without a boost */
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "pivot_boost");
    btchol_plan_options_init(&o);
    o.diag_shift = 1.0 / 0.0;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_INVALID_ARGUMENT, "diag_shift");
    btchol_plan_options_init(&o);
    o.pivot_boost = 1.0;
    o.backend = BTCHOL_BACKEND_CUDA; /* pivot boosting runs on both backends */
    {
        btchol_plan *boosting = NULL;
        EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &boosting),
               btchol_cuda_available() ? BTCHOL_STATUS_SUCCESS : BTCHOL_STATUS_NO_CUDA, NULL);
        btchol_plan_destroy(boosting); /* NULL is allowed */
    }

    /* CUDA requested: NO_CUDA where there is none. */
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CUDA;
    if (btchol_cuda_available()) {
        btchol_plan *gpu = NULL;
        EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &gpu), BTCHOL_STATUS_SUCCESS, NULL);
        btchol_plan_destroy(gpu);
    } else {
        EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_NO_CUDA, NULL);
    }
    CHECK(p == sentinel);

    /* Defaults (NULL options) and AUTO resolve to a concrete backend and algorithm. */
    p = NULL;
    EXPECT(btchol_plan_create(1, 1, 1, BTCHOL_DTYPE_F32, NULL, &p), BTCHOL_STATUS_SUCCESS, NULL);
    btchol_backend backend = -1;
    btchol_algorithm algorithm = -1;
    EXPECT(btchol_plan_backend(p, &backend), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_algorithm(p, &algorithm), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(backend == BTCHOL_BACKEND_CPU || backend == BTCHOL_BACKEND_CUDA);
    CHECK(algorithm == BTCHOL_ALGORITHM_SEQUENTIAL || algorithm == BTCHOL_ALGORITHM_NESTED_DISSECTION);
    /* N = 1: there are no E blocks, so sub may be NULL. */
    float d1 = 4.0f, x1 = 2.0f;
    EXPECT(btchol_plan_factor_solve(p, &d1, NULL, &x1, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL),
           BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(fabs(x1 - 0.5f) < 1e-6);
    btchol_plan_destroy(p);
}

static void test_plan_queries(btchol_plan *p) {
    int64_t bytes = -1;
    btchol_backend backend = -1;
    btchol_algorithm algorithm = -1;
    EXPECT(btchol_plan_workspace_bytes(NULL, &bytes), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_workspace_bytes(p, NULL), BTCHOL_STATUS_NULL_POINTER, "out_bytes");
    EXPECT(btchol_plan_workspace_bytes(p, &bytes), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(bytes >= (int64_t)(DLEN * sizeof(double)));
    EXPECT(btchol_plan_backend(p, NULL), BTCHOL_STATUS_NULL_POINTER, "out_backend");
    EXPECT(btchol_plan_backend(p, &backend), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(backend == BTCHOL_BACKEND_CPU);
    EXPECT(btchol_plan_algorithm(NULL, &algorithm), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_algorithm(p, &algorithm), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(algorithm == BTCHOL_ALGORITHM_SEQUENTIAL);
}

static void test_call_order(btchol_plan *p, const double *d, const double *e, const double *b) {
    double x[B * ROWS], logdet[B] = {7.0, 7.0};
    int64_t status[B] = {5, 5}, info = 77, failed_item = 77;
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_item_status(p, status), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(status[0] == BTCHOL_ITEM_PENDING && status[1] == BTCHOL_ITEM_PENDING);
    EXPECT(btchol_plan_factor(p, &failed_item, &info), BTCHOL_STATUS_INVALID_STATE, "before upload");
    CHECK(failed_item == 77 && info == 77);
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_INVALID_STATE, "before factor");
    CHECK(memcmp(x, b, sizeof x) == 0);
    EXPECT(btchol_plan_logdet(p, logdet), BTCHOL_STATUS_INVALID_STATE, "before factor");
    CHECK(logdet[0] == 7.0 && logdet[1] == 7.0);
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_INVALID_STATE, "before factor");
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_INVALID_STATE, "upload it again");
    EXPECT(btchol_plan_item_status(p, NULL), BTCHOL_STATUS_NULL_POINTER, "out_info");
    EXPECT(btchol_plan_item_status(NULL, status), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_item_status(p, status), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(status[0] == 0 && status[1] == 0);
    good_cycle(p, d, e, b);
}

static void test_upload(btchol_plan *p, double *d, double *e, const double *b) {
    static double unaligned_storage[DLEN + 1];
    EXPECT(btchol_plan_upload(NULL, d, e), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_upload(p, NULL, e), BTCHOL_STATUS_NULL_POINTER, "diag");
    EXPECT(btchol_plan_upload(p, d, NULL), BTCHOL_STATUS_NULL_POINTER, "sub");
    /* A double* that is not 8-byte aligned. */
    char *misaligned = (char *)(void *)unaligned_storage + 1;
    memcpy(misaligned, d, DLEN * sizeof(double));
    EXPECT(btchol_plan_upload(p, misaligned, e), BTCHOL_STATUS_INVALID_ARGUMENT, "aligned");

    /* NaN in the lower triangle of D_2 of item 1; Inf in E_1 of item 0. */
    double saved = AT(d, 1 * N + 2, 2, 1);
    AT(d, 1 * N + 2, 2, 1) = NAN;
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_NON_FINITE_INPUT, "batch item 1, block 2, row 2, column 1");
    AT(d, 1 * N + 2, 2, 1) = saved;
    saved = AT(e, 0 * (N - 1) + 1, 0, 2);
    AT(e, 0 * (N - 1) + 1, 0, 2) = -INFINITY;
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_NON_FINITE_INPUT, "sub-diagonal block E of batch item 0, block 1");
    AT(e, 0 * (N - 1) + 1, 0, 2) = saved;
    /* Only the lower triangle of D is read: a NaN above the diagonal is ignored. */
    saved = AT(d, 0, 0, 2);
    AT(d, 0, 0, 2) = NAN;
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    AT(d, 0, 0, 2) = saved;
    good_cycle(p, d, e, b);
}

static void test_solve_arguments(btchol_plan *p, const double *d, const double *e, const double *b) {
    enum { M = 2, LD = M + 1, STRIDE = ROWS * LD + 5, LEN = (B - 1) * STRIDE + ROWS * LD };
    double x[B * ROWS * 4], before[B * ROWS * 4];
    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_SUCCESS, NULL);
    for (int k = 0; k < B * ROWS * 4; k++) x[k] = before[k] = 1.0 + k % 7;

#define UNCHANGED CHECK(memcmp(x, before, sizeof x) == 0)
    EXPECT(btchol_plan_solve(NULL, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_solve(p, NULL, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NULL_POINTER, "rhs");
    EXPECT(btchol_plan_solve(p, x, 0, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_INVALID_DIMENSION,
           "right-hand sides");
    EXPECT(btchol_plan_solve(p, x, -1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_INVALID_DIMENSION, "nrhs");
    EXPECT(btchol_plan_solve(p, x, 1, 3, 0, 0), BTCHOL_STATUS_INVALID_ARGUMENT, "layout");
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, -2, 0), BTCHOL_STATUS_INVALID_DIMENSION, "ld");
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, -1), BTCHOL_STATUS_INVALID_DIMENSION,
           "item_stride");
    /* Mismatched leading dimensions: ld < nrhs (row-major), ld < N*n (column-major). */
    EXPECT(btchol_plan_solve(p, x, 2, BTCHOL_LAYOUT_ROW_MAJOR, 1, 0), BTCHOL_STATUS_INVALID_ARGUMENT,
           "leading dimension");
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_COL_MAJOR, ROWS - 1, 0), BTCHOL_STATUS_INVALID_ARGUMENT,
           "leading dimension");
    /* Items that would overlap. */
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 1, ROWS - 1), BTCHOL_STATUS_INVALID_ARGUMENT,
           "overlap");
    /* Sizes whose product overflows 64 bits. */
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, INT64_MAX / 4, 0), BTCHOL_STATUS_INVALID_DIMENSION,
           "overflow");
    EXPECT(btchol_plan_solve(p, x, INT64_C(1) << 62, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0),
           BTCHOL_STATUS_INVALID_DIMENSION, "overflow");
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_COL_MAJOR, 0, INT64_MAX), BTCHOL_STATUS_INVALID_DIMENSION,
           "overflow");
    /* A misaligned buffer. */
    EXPECT(btchol_plan_solve(p, (char *)(void *)x + 4, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0),
           BTCHOL_STATUS_INVALID_ARGUMENT, "aligned");
    /* NaN in the right-hand side: nothing is written. */
    x[ROWS + 5] = NAN;
    before[ROWS + 5] = NAN;
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NON_FINITE_INPUT,
           "right-hand side of batch item 1, block 1, row 2, column 0");
    x[ROWS + 5] = before[ROWS + 5] = 1.0;
    UNCHANGED;
#undef UNCHANGED

    /* A good solve with padding: nrhs = 2, row-major, ld = 3, item stride ROWS*3 + 5. The padding
     * must be left alone. */
    static double rhs[LEN], sol[LEN];
    for (int k = 0; k < LEN; k++) rhs[k] = -12345.0;
    for (int item = 0; item < B; item++)
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < M; c++) rhs[item * STRIDE + r * LD + c] = b[item * ROWS + r] * (c + 1);
    memcpy(sol, rhs, sizeof sol);
    EXPECT(btchol_plan_solve(p, sol, M, BTCHOL_LAYOUT_ROW_MAJOR, LD, STRIDE), BTCHOL_STATUS_SUCCESS, NULL);
    for (int item = 0; item < B; item++) {
        for (int c = 0; c < M; c++) {
            double xc[ROWS], bc[ROWS];
            for (int r = 0; r < ROWS; r++) {
                xc[r] = sol[item * STRIDE + r * LD + c];
                bc[r] = rhs[item * STRIDE + r * LD + c];
            }
            CHECK(residual(d, e, item, xc, bc) < 1e-13);
        }
        for (int r = 0; r < ROWS; r++) CHECK(sol[item * STRIDE + r * LD + 2] == -12345.0);
    }
    for (int k = ROWS * LD; k < STRIDE; k++) CHECK(sol[k] == -12345.0);

    /* Column-major right-hand sides with ld = ROWS + 1 and the default item stride (nrhs * ld). */
    static double cm[B * M * (ROWS + 1)];
    for (int item = 0; item < B; item++)
        for (int c = 0; c < M; c++)
            for (int r = 0; r <= ROWS; r++)
                cm[item * M * (ROWS + 1) + c * (ROWS + 1) + r] = r < ROWS ? b[item * ROWS + r] * (c + 1) : 0.0;
    EXPECT(btchol_plan_solve(p, cm, M, BTCHOL_LAYOUT_COL_MAJOR, ROWS + 1, 0), BTCHOL_STATUS_SUCCESS, NULL);
    for (int item = 0; item < B; item++)
        for (int c = 0; c < M; c++)
            for (int r = 0; r < ROWS; r++)
                CHECK(fabs(cm[item * M * (ROWS + 1) + c * (ROWS + 1) + r] - sol[item * STRIDE + r * LD + c]) < 1e-13);

    /* log det against a dense Cholesky factorization. */
    double logdet[B];
    EXPECT(btchol_plan_logdet(p, NULL), BTCHOL_STATUS_NULL_POINTER, "out_logdet");
    EXPECT(btchol_plan_logdet(NULL, logdet), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_logdet(p, logdet), BTCHOL_STATUS_SUCCESS, NULL);
    for (int item = 0; item < B; item++) CHECK(fabs(logdet[item] - dense_logdet(d, e, item)) < 1e-10);
    good_cycle(p, d, e, b);
}

/* Item 1's matrix loses positive definiteness at pivot (block 2, column 1): LAPACK INFO 2*n + 2. */
static void test_not_positive_definite(btchol_plan *p, double *d, double *e, const double *b) {
    const int64_t want_info = 2 * n + 1 + 1;
    double x[B * ROWS], logdet[B];
    int64_t failed_item = 77, info = 77, status[B];
    double saved = AT(d, 1 * N + 2, 1, 1);
    AT(d, 1 * N + 2, 1, 1) = -100.0;
    CHECK(isnan(dense_logdet(d, e, 1)));

    EXPECT(btchol_plan_upload(p, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(p, &failed_item, &info), BTCHOL_STATUS_NOT_POSITIVE_DEFINITE, "batch item 1");
    CHECK(strstr(btchol_last_error_message(), "diagonal block 2") != NULL);
    CHECK(failed_item == 1 && info == want_info);
    EXPECT(btchol_plan_item_status(p, status), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(status[0] == 0 && status[1] == want_info);
    /* Solve: item 0 is solved, item 1 is left as it was, the status says why. */
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_solve(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NOT_POSITIVE_DEFINITE,
           "not positive definite");
    CHECK(residual(d, e, 0, x, b) < 1e-13);
    CHECK(memcmp(x + ROWS, b + ROWS, ROWS * sizeof(double)) == 0);
    EXPECT(btchol_plan_logdet(p, logdet), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(isfinite(logdet[0]) && isnan(logdet[1]));

    /* factor_solve reports the same. */
    memcpy(x, b, sizeof x);
    failed_item = info = 77;
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &failed_item, &info),
           BTCHOL_STATUS_NOT_POSITIVE_DEFINITE, "info = 8");
    CHECK(failed_item == 1 && info == want_info);
    CHECK(residual(d, e, 0, x, b) < 1e-13);

    /* Nested dissection eliminates in another order: same item, some pivot of it. */
    btchol_plan *nd = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_NESTED_DISSECTION, BTCHOL_LAYOUT_ROW_MAJOR);
    EXPECT(btchol_plan_upload(nd, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(nd, &failed_item, &info), BTCHOL_STATUS_NOT_POSITIVE_DEFINITE, "batch item 1");
    CHECK(failed_item == 1 && info >= 1 && info <= ROWS);
    AT(d, 1 * N + 2, 1, 1) = saved;
    good_cycle(nd, d, e, b);
    btchol_plan_destroy(nd);
    good_cycle(p, d, e, b);
}

/* Regularisation: a diagonal shift factors Psi + sigma*I without touching the caller's arrays;
 * boosting replaces a negative pivot and counts it per item. */
static void test_regularize(double *d, double *e, const double *b) {
    static double ds[DLEN];
    double x[B * ROWS], d0 = AT(d, 1 * N + 0, 0, 0);
    int64_t failed_item = 77, info = 77, counts[B] = {77, 77};
    btchol_plan_options o;
    btchol_plan *p = NULL;
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CPU;
    o.diag_shift = 0.5;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_SUCCESS, NULL);
    memcpy(ds, d, sizeof ds);
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL), BTCHOL_STATUS_SUCCESS,
           NULL);
    CHECK(memcmp(ds, d, sizeof ds) == 0); /* the caller's blocks are untouched */
    for (int blk = 0; blk < B * N; blk++)
        for (int r = 0; r < n; r++) AT(ds, blk, r, r) += 0.5;
    for (int item = 0; item < B; item++) CHECK(residual(ds, e, item, x + item * ROWS, b + item * ROWS) < 1e-13);
    btchol_plan_destroy(p);

    /* Item 1's first pivot is -1: boosted to 1e6 (so x solves the matrix with D[0,0] = 1e6). */
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CPU;
    o.pivot_threshold = 1e-10;
    o.pivot_boost = 1e6;
    EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_boosted_pivots(p, counts), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(counts[0] == 0 && counts[1] == 0);
    EXPECT(btchol_plan_boosted_pivots(p, NULL), BTCHOL_STATUS_NULL_POINTER, "out_counts");
    EXPECT(btchol_plan_boosted_pivots(NULL, counts), BTCHOL_STATUS_NULL_POINTER, "plan");
    AT(d, 1 * N + 0, 0, 0) = -1.0;
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &failed_item, &info),
           BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(failed_item == -1 && info == 0);
    EXPECT(btchol_plan_boosted_pivots(p, counts), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(counts[0] == 0 && counts[1] == 1);
    AT(d, 1 * N + 0, 0, 0) = 1e6;
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, x + item * ROWS, b + item * ROWS) < 1e-12);
    AT(d, 1 * N + 0, 0, 0) = d0;
    good_cycle(p, d, e, b);
    EXPECT(btchol_plan_boosted_pivots(p, counts), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(counts[0] == 0 && counts[1] == 0);
    btchol_plan_destroy(p);
}

/* Partitioned nested dissection (chunks of 1 and 2 blocks, and plain): the same good cycle. */
static void test_partition(const double *d, const double *e, const double *b) {
    const btchol_partition chunks[] = {1, 2, BTCHOL_PARTITION_NONE};
    for (int k = 0; k < 3; k++) {
        btchol_plan_options o;
        btchol_plan *p = NULL;
        btchol_plan_options_init(&o);
        o.backend = BTCHOL_BACKEND_CPU;
        o.algorithm = BTCHOL_ALGORITHM_NESTED_DISSECTION;
        o.partition_chunk = chunks[k];
        EXPECT(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p), BTCHOL_STATUS_SUCCESS, NULL);
        good_cycle(p, d, e, b);
        btchol_plan_destroy(p);
    }
}

/* Batch masks: only the selected items are uploaded, factored and solved. */
static void test_masks(double *d, const double *e, const double *b) {
    static double d2[DLEN];
    double x[B * ROWS];
    const uint8_t first[B] = {1, 0}, second[B] = {0, 1}, bad[B] = {2, 0};
    int64_t failed_item = 77, info = 77;
    btchol_plan *p = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_LAYOUT_ROW_MAJOR);
    EXPECT(btchol_plan_upload_masked(p, bad, d, e), BTCHOL_STATUS_INVALID_ARGUMENT, "mask[0] is 2");
    EXPECT(btchol_plan_upload_masked(p, NULL, d, e), BTCHOL_STATUS_NULL_POINTER, "mask");
    EXPECT(btchol_plan_factor_masked(p, first, &failed_item, &info), BTCHOL_STATUS_INVALID_STATE, "before upload");
    /* Item 1 of the caller's array holds NaN: not read when only item 0 is uploaded. */
    memcpy(d2, d, sizeof d2);
    AT(d2, 1 * N + 1, 0, 0) = NAN;
    EXPECT(btchol_plan_upload_masked(p, first, d2, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_INVALID_STATE, "item 1");
    EXPECT(btchol_plan_factor_masked(p, first, &failed_item, &info), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(failed_item == -1 && info == 0);
    memcpy(x, b, sizeof x);
    x[ROWS] = NAN; /* item 1's right-hand side: not read */
    EXPECT(btchol_plan_solve_masked(p, first, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(residual(d, e, 0, x, b) < 1e-13 && isnan(x[ROWS]));
    EXPECT(btchol_plan_solve_masked(p, second, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_INVALID_STATE,
           "item 1 is not factored");
    /* Now item 1 alone, with a failing pivot: reported for item 1, item 0 keeps its factor. */
    AT(d2, 1 * N + 1, 0, 0) = -100.0;
    EXPECT(btchol_plan_upload_masked(p, second, d2, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor_masked(p, second, &failed_item, &info), BTCHOL_STATUS_NOT_POSITIVE_DEFINITE,
           "batch item 1");
    CHECK(failed_item == 1 && info == n + 1);
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_solve_masked(p, first, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(residual(d, e, 0, x, b) < 1e-13 && memcmp(x + ROWS, b + ROWS, ROWS * sizeof(double)) == 0);
    good_cycle(p, d, e, b);
    btchol_plan_destroy(p);
}

static void test_device_entry_points(btchol_plan *p, const double *d, const double *e, const double *b) {
    double x[B * ROWS];
    int stream_object = 0;
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_upload_device(NULL, d, e), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_upload_device(p, NULL, e), BTCHOL_STATUS_NULL_POINTER, "diag");
    EXPECT(btchol_plan_upload_device(p, d, NULL), BTCHOL_STATUS_NULL_POINTER, "sub");
    EXPECT(btchol_plan_upload_device(p, d, e), BTCHOL_STATUS_NO_CUDA, "CUDA");
    EXPECT(btchol_plan_solve_device(p, NULL, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NULL_POINTER, "rhs");
    EXPECT(btchol_plan_solve_device(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_NO_CUDA, "CUDA");
    EXPECT(btchol_plan_factor_solve_device(p, NULL, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL),
           BTCHOL_STATUS_NULL_POINTER, "rhs");
    EXPECT(btchol_plan_factor_solve_device(p, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL), BTCHOL_STATUS_NO_CUDA,
           "CUDA");
    {
        /* 16-bit inputs in device memory: the same checks (the bits are never read here). */
        const uint16_t *hd = (const uint16_t *)d, *he = (const uint16_t *)e, *hb = (const uint16_t *)b;
        EXPECT(btchol_plan_upload_device_half(NULL, BTCHOL_HALF_F16, hd, he), BTCHOL_STATUS_NULL_POINTER, "plan");
        EXPECT(btchol_plan_upload_device_half(p, BTCHOL_HALF_F16, NULL, he), BTCHOL_STATUS_NULL_POINTER, "diag");
        EXPECT(btchol_plan_upload_device_half(p, 7, hd, he), BTCHOL_STATUS_INVALID_ARGUMENT, "half format");
        EXPECT(btchol_plan_upload_device_half(p, BTCHOL_HALF_BF16, hd, he), BTCHOL_STATUS_NO_CUDA, "CUDA");
        EXPECT(btchol_plan_solve_device_half(p, BTCHOL_HALF_F16, hb, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL),
               BTCHOL_STATUS_NULL_POINTER, "x");
        EXPECT(btchol_plan_solve_device_half(p, BTCHOL_HALF_F16, hb, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, x),
               BTCHOL_STATUS_NO_CUDA, "CUDA");
    }
    EXPECT(btchol_plan_set_stream(NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_set_stream(p, NULL), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_set_stream(p, &stream_object), BTCHOL_STATUS_NO_CUDA, "stream");
    EXPECT(btchol_plan_synchronize(NULL), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_synchronize(p), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(memcmp(x, b, sizeof x) == 0);
    good_cycle(p, d, e, b);
}

static void test_factor_solve(btchol_plan *p, double *d, double *e, const double *b) {
    double x[B * ROWS];
    int64_t failed_item = 77, info = 77;
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_factor_solve(NULL, d, e, x, 1, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "plan");
    EXPECT(btchol_plan_factor_solve(p, NULL, e, x, 1, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "diag");
    EXPECT(btchol_plan_factor_solve(p, d, NULL, x, 1, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "sub");
    EXPECT(btchol_plan_factor_solve(p, d, e, NULL, 1, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "rhs");
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 0, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_INVALID_DIMENSION,
           "right-hand sides");
    /* The right-hand sides may not alias the matrix. */
    EXPECT(btchol_plan_factor_solve(p, d, e, d + 4, 1, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_INVALID_ARGUMENT,
           "overlap");
    x[3] = INFINITY;
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 1, 0, 0, 0, NULL, NULL), BTCHOL_STATUS_NON_FINITE_INPUT,
           "right-hand side");
    x[3] = b[3];
    CHECK(memcmp(x, b, sizeof x) == 0);
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &failed_item, &info),
           BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(failed_item == -1 && info == 0);
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, x + item * ROWS, b + item * ROWS) < 1e-13);
    good_cycle(p, d, e, b);
}

/* f32 plans take float buffers; column-major plans take transposed blocks. */
static void test_dtypes_and_layouts(const double *d, const double *e, const double *b) {
    static float df[DLEN], ef[ELEN], xf[B * ROWS];
    double xd[B * ROWS];
    for (int k = 0; k < DLEN; k++) df[k] = (float)d[k];
    for (int k = 0; k < ELEN; k++) ef[k] = (float)e[k];
    for (int k = 0; k < B * ROWS; k++) xf[k] = (float)b[k];
    btchol_plan *p32 = create_plan(BTCHOL_DTYPE_F32, BTCHOL_ALGORITHM_AUTO, BTCHOL_LAYOUT_ROW_MAJOR);
    EXPECT(btchol_plan_upload(p32, (const char *)(const void *)df + 2, ef), BTCHOL_STATUS_INVALID_ARGUMENT,
           "aligned to 4 bytes");
    EXPECT(btchol_plan_factor_solve(p32, df, ef, xf, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL),
           BTCHOL_STATUS_SUCCESS, NULL);
    for (int k = 0; k < B * ROWS; k++) xd[k] = xf[k];
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, xd + item * ROWS, b + item * ROWS) < 1e-5);
    btchol_plan_destroy(p32);

    /* Column-major blocks (each block transposed) give the same solution. */
    static double dc[DLEN], ec[ELEN];
    for (int blk = 0; blk < B * N; blk++)
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) AT(dc, blk, c, r) = AT(d, blk, r, c);
    for (int blk = 0; blk < B * (N - 1); blk++)
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) AT(ec, blk, c, r) = AT(e, blk, r, c);
    btchol_plan *pc = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_LAYOUT_COL_MAJOR);
    memcpy(xd, b, sizeof xd);
    EXPECT(btchol_plan_factor_solve(pc, dc, ec, xd, 1, BTCHOL_LAYOUT_COL_MAJOR, 0, 0, NULL, NULL),
           BTCHOL_STATUS_SUCCESS, NULL);
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, xd + item * ROWS, b + item * ROWS) < 1e-13);
    btchol_plan_destroy(pc);
}

/* Different plans on different threads at once; each thread has its own last-error message. */
struct worker {
    const double *d, *e, *b;
    int bad_calls_first;
    int failures;
};

static void *worker_main(void *arg) {
    struct worker *w = (struct worker *)arg;
    btchol_plan_options o;
    btchol_plan *p = NULL;
    double x[B * ROWS];
    btchol_plan_options_init(&o);
    o.backend = BTCHOL_BACKEND_CPU;
    o.threads = 1;
    if (btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &o, &p) != BTCHOL_STATUS_SUCCESS) {
        w->failures++;
        return NULL;
    }
    for (int round = 0; round < 200; round++) {
        if (w->bad_calls_first && btchol_plan_solve(p, NULL, 1, 0, 0, 0) != BTCHOL_STATUS_NULL_POINTER) w->failures++;
        memcpy(x, w->b, sizeof x);
        if (btchol_plan_factor_solve(p, w->d, w->e, x, 1, 0, 0, 0, NULL, NULL) != BTCHOL_STATUS_SUCCESS ||
            btchol_last_error_message()[0] != '\0')
            w->failures++;
        for (int item = 0; item < B; item++)
            if (!(residual(w->d, w->e, item, x + item * ROWS, w->b + item * ROWS) < 1e-13)) w->failures++;
    }
    /* This thread's failure is not visible to the others. */
    if (btchol_plan_solve(p, NULL, 1, 0, 0, 0) != BTCHOL_STATUS_NULL_POINTER) w->failures++;
    btchol_plan_destroy(p);
    return NULL;
}

static void test_threads(const double *d, const double *e, const double *b) {
    struct worker w[3] = {{d, e, b, 1, 0}, {d, e, b, 0, 0}, {d, e, b, 1, 0}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++) CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].failures == 0);
    }
    /* The workers' last calls failed; this thread's last call succeeded. */
    CHECK(btchol_last_error_message()[0] == '\0');
}

/* bfloat16 bits of a float (truncation: the test only needs some bf16 values) and back. */
static uint16_t to_bf16(double v) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}
static double from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Mixed precision, gradients, half-precision inputs. */
static void test_learning_features(const double *d, const double *e, const double *b) {
    btchol_plan_options o;
    btchol_mixed_plan *m = NULL;
    double x[B * ROWS], be = -1.0;
    int64_t iterations = -1;
    int32_t fell_back = -1;
    EXPECT(btchol_plan_options_init(&o), BTCHOL_STATUS_SUCCESS, NULL);
    o.backend = BTCHOL_BACKEND_CPU;
    EXPECT(btchol_mixed_plan_create(B, N, n, &o, 0, 0.0, NULL), BTCHOL_STATUS_NULL_POINTER, "out_plan");
    EXPECT(btchol_mixed_plan_create(B, N, n, &o, -1, 0.0, &m), BTCHOL_STATUS_INVALID_DIMENSION, "max_iterations");
    EXPECT(btchol_mixed_plan_create(B, N, n, &o, 0, NAN, &m), BTCHOL_STATUS_INVALID_ARGUMENT, "tolerance");
    CHECK(m == NULL);
    EXPECT(btchol_mixed_plan_create(B, N, n, &o, 0, 0.0, &m), BTCHOL_STATUS_SUCCESS, NULL);
    memcpy(x, b, sizeof x);
    EXPECT(btchol_mixed_plan_solve(m, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL, NULL), BTCHOL_STATUS_INVALID_STATE,
           "before factor");
    EXPECT(btchol_mixed_plan_upload(m, NULL, e), BTCHOL_STATUS_NULL_POINTER, "diag");
    EXPECT(btchol_mixed_plan_upload(m, d, e), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_mixed_plan_factor(m), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_mixed_plan_solve(m, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, &iterations, &be, &fell_back),
           BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(iterations >= 1 && iterations <= 6 && fell_back == 0 && be <= 32 * 2.220446049250313e-16);
    for (int item = 0; item < B; item++) CHECK(residual(d, e, item, x + item * ROWS, b + item * ROWS) < 1e-13);
    EXPECT(btchol_mixed_plan_factor(NULL), BTCHOL_STATUS_NULL_POINTER, "plan");
    btchol_mixed_plan_destroy(m);
    btchol_mixed_plan_destroy(NULL);

    /* Gradient of L = sum(w .* x): dL/db = Psi^-1 w, checked against a finite difference in b. */
    btchol_plan *p = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_LAYOUT_ROW_MAJOR);
    static double gd[DLEN], ge[ELEN];
    double w[B * ROWS], g[B * ROWS], xp[B * ROWS];
    unsigned long long seed = 99;
    for (int k = 0; k < B * ROWS; k++) w[k] = uniform(&seed);
    memcpy(x, b, sizeof x);
    EXPECT(btchol_plan_factor_solve(p, d, e, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL), BTCHOL_STATUS_SUCCESS, NULL);
    memcpy(g, w, sizeof g);
    EXPECT(btchol_plan_gradient(p, x, g, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, gd, NULL), BTCHOL_STATUS_NULL_POINTER,
           "grad_sub");
    EXPECT(btchol_plan_gradient(p, x, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, gd, ge), BTCHOL_STATUS_INVALID_ARGUMENT,
           "overlap");
    EXPECT(btchol_plan_gradient(p, x, g, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, gd, ge), BTCHOL_STATUS_SUCCESS, NULL);
    {
        const double h = 1e-6;
        int k = 5;
        double lp = 0, lm = 0;
        memcpy(xp, b, sizeof xp);
        xp[k] += h;
        EXPECT(btchol_plan_solve(p, xp, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_SUCCESS, NULL);
        for (int i = 0; i < B * ROWS; i++) lp += w[i] * xp[i];
        memcpy(xp, b, sizeof xp);
        xp[k] -= h;
        EXPECT(btchol_plan_solve(p, xp, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), BTCHOL_STATUS_SUCCESS, NULL);
        for (int i = 0; i < B * ROWS; i++) lm += w[i] * xp[i];
        CHECK(fabs((lp - lm) / (2 * h) - g[k]) < 1e-7);
        /* G_D is symmetric: -(lambda x^T + x lambda^T)/2. */
        CHECK(gd[1] == gd[n] && gd[2] == gd[2 * n]);
        CHECK(fabs(gd[0] + g[0] * x[0]) < 1e-12);
    }
    btchol_plan_destroy(p);

    /* bf16 blocks and right-hand sides, widened exactly; f16 through the same path. */
    static uint16_t dh[DLEN], eh[ELEN];
    static double dw[DLEN], ew[ELEN];
    uint16_t bh[B * ROWS];
    double bw[B * ROWS];
    for (int k = 0; k < DLEN; k++) dw[k] = from_bf16(dh[k] = to_bf16(d[k]));
    for (int k = 0; k < ELEN; k++) ew[k] = from_bf16(eh[k] = to_bf16(e[k]));
    for (int k = 0; k < B * ROWS; k++) bw[k] = from_bf16(bh[k] = to_bf16(b[k]));
    p = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_LAYOUT_ROW_MAJOR);
    EXPECT(btchol_plan_upload_half(p, (btchol_half_format)7, dh, eh), BTCHOL_STATUS_INVALID_ARGUMENT, "half format");
    EXPECT(btchol_plan_upload_half(p, BTCHOL_HALF_BF16, dh, eh), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_factor(p, NULL, NULL), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_plan_solve_half(p, BTCHOL_HALF_BF16, bh, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL),
           BTCHOL_STATUS_NULL_POINTER, "x");
    EXPECT(btchol_plan_solve_half(p, BTCHOL_HALF_BF16, bh, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, x), BTCHOL_STATUS_SUCCESS,
           NULL);
    for (int item = 0; item < B; item++) CHECK(residual(dw, ew, item, x + item * ROWS, bw + item * ROWS) < 1e-13);
    bh[0] = 0x7f80; /* +Inf in bf16 and a large finite value in f16 */
    EXPECT(btchol_plan_solve_half(p, BTCHOL_HALF_BF16, bh, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, x),
           BTCHOL_STATUS_NON_FINITE_INPUT, NULL);
    good_cycle(p, d, e, b);
    btchol_plan_destroy(p);
}

/* Page-locked host memory (ordinary memory where no GPU is): a plan fed from it solves like one
 * fed from any array; only btchol_host_alloc's own pointers are freed. */
static void test_host_memory(const double *d, const double *e, const double *b) {
    void *pd = NULL, *pe = NULL, *other = malloc(64);
    int32_t locked = -1;
    EXPECT(btchol_host_alloc(DLEN * sizeof(double), &pd, &locked), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_host_alloc(ELEN * sizeof(double), &pe, NULL), BTCHOL_STATUS_SUCCESS, NULL);
    CHECK(pd != NULL && pe != NULL && ((uintptr_t)pd % 64) == 0 && locked == btchol_cuda_available());
    CHECK(((const double *)pd)[DLEN - 1] == 0.0);
    memcpy(pd, d, DLEN * sizeof(double));
    memcpy(pe, e, ELEN * sizeof(double));
    btchol_plan *p = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_LAYOUT_ROW_MAJOR);
    good_cycle(p, (const double *)pd, (const double *)pe, b);
    btchol_plan_destroy(p);
    void *untouched = pd;
    EXPECT(btchol_host_alloc(0, &untouched, NULL), BTCHOL_STATUS_INVALID_DIMENSION, "at least 1");
    CHECK(untouched == pd);
    EXPECT(btchol_host_alloc(-1, &untouched, NULL), BTCHOL_STATUS_INVALID_DIMENSION, "negative");
    EXPECT(btchol_host_alloc(8, NULL, NULL), BTCHOL_STATUS_NULL_POINTER, "out");
    EXPECT(btchol_host_free(other), BTCHOL_STATUS_INVALID_ARGUMENT, "not memory from btchol_host_alloc");
    EXPECT(btchol_host_free((char *)pd + 8), BTCHOL_STATUS_INVALID_ARGUMENT, "not memory from btchol_host_alloc");
    EXPECT(btchol_host_free(pd), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_host_free(pd), BTCHOL_STATUS_INVALID_ARGUMENT, "freed already");
    EXPECT(btchol_host_free(pe), BTCHOL_STATUS_SUCCESS, NULL);
    EXPECT(btchol_host_free(NULL), BTCHOL_STATUS_SUCCESS, NULL);
    free(other);
}

int main(void) {
    static double d[DLEN], e[ELEN], b[B * ROWS];
    unsigned long long seed = 7;
    make_problem(d, e, 2024);
    for (int k = 0; k < B * ROWS; k++) b[k] = uniform(&seed);

    test_library();
    test_create();
    btchol_plan *p = create_plan(BTCHOL_DTYPE_F64, BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_LAYOUT_ROW_MAJOR);
    test_plan_queries(p);
    test_call_order(p, d, e, b);
    test_upload(p, d, e, b);
    test_solve_arguments(p, d, e, b);
    test_not_positive_definite(p, d, e, b);
    test_device_entry_points(p, d, e, b);
    test_factor_solve(p, d, e, b);
    btchol_plan_destroy(p);
    test_dtypes_and_layouts(d, e, b);
    test_threads(d, e, b);
    test_regularize(d, e, b);
    test_masks(d, e, b);
    test_partition(d, e, b);
    test_learning_features(d, e, b);
    test_host_memory(d, e, b);

    printf("test_capi: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
