/*
 * minimal.c: the smallest complete use of btchol's C API.
 *
 * Builds a batch of B = 2 random symmetric positive-definite block-tridiagonal matrices (N = 6
 * diagonal blocks of size n = 3), factors them, solves Psi x = b for one right-hand side, and
 * checks the residual b - Psi x with a hand-written block mat-vec. Exits non-zero on failure.
 */
#include <btchol.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 2, N = 6, n = 3, ROWS = N * n };

/* Row-major element (r, c) of block `blk` in a buffer of n-by-n blocks. */
#define AT(buf, blk, r, c) ((buf)[(size_t)(blk) * n * n + (size_t)(r) * n + (size_t)(c)])

static double uniform(unsigned long long *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* in [-1, 1) */
}

/* Reports a failed call with its status and message, and exits. */
static void check(btchol_status status, const char *what) {
    if (status != BTCHOL_STATUS_SUCCESS) {
        fprintf(stderr, "%s failed: %s (%d): %s\n", what, btchol_status_string(status), (int)status,
                btchol_last_error_message());
        exit(1);
    }
}

int main(void) {
    /* D holds B*N blocks, E holds B*(N-1) blocks: Psi[i+1][i] = E_i, Psi[i][i+1] = E_i^T. */
    static double d[B * N * n * n], e[B * (N - 1) * n * n], b[B * ROWS], x[B * ROWS];
    unsigned long long seed = 42;
    for (int k = 0; k < B * (N - 1) * n * n; k++) e[k] = 0.5 * uniform(&seed);
    for (int item = 0; item < B; item++) {
        for (int i = 0; i < N; i++) {
            int blk = item * N + i;
            for (int r = 0; r < n; r++)
                for (int c = 0; c <= r; c++) AT(d, blk, r, c) = AT(d, blk, c, r) = 0.3 * uniform(&seed);
            for (int r = 0; r < n; r++) AT(d, blk, r, r) = 4.0 + (double)r; /* diagonally dominant */
        }
    }
    for (int k = 0; k < B * ROWS; k++) x[k] = b[k] = uniform(&seed);

    printf("btchol %s (header %d.%d.%d)\n", btchol_version(), BTCHOL_VERSION_MAJOR, BTCHOL_VERSION_MINOR,
           BTCHOL_VERSION_PATCH);

    btchol_plan_options options;
    check(btchol_plan_options_init(&options), "btchol_plan_options_init");
    options.backend = BTCHOL_BACKEND_CPU;
    options.layout = BTCHOL_LAYOUT_ROW_MAJOR;

    btchol_plan *plan = NULL;
    check(btchol_plan_create(B, N, n, BTCHOL_DTYPE_F64, &options, &plan), "btchol_plan_create");
    check(btchol_plan_upload(plan, d, e), "btchol_plan_upload");
    int64_t failed_item = 0, info = 0;
    check(btchol_plan_factor(plan, &failed_item, &info), "btchol_plan_factor");
    /* x holds b; solved in place. ld = 0 and item_stride = 0: a dense (B, N*n, 1) array. */
    check(btchol_plan_solve(plan, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), "btchol_plan_solve");
    double logdet[B];
    check(btchol_plan_logdet(plan, logdet), "btchol_plan_logdet");
    btchol_plan_destroy(plan);

    /* Residual r = b - Psi x, item by item, using the full blocks. */
    int ok = 1;
    for (int item = 0; item < B; item++) {
        const double *xi = x + item * ROWS, *bi = b + item * ROWS;
        double rmax = 0.0, xmax = 0.0;
        for (int i = 0; i < N; i++) {
            for (int r = 0; r < n; r++) {
                double s = 0.0;
                for (int c = 0; c < n; c++) s += AT(d, item * N + i, r, c) * xi[i * n + c];
                if (i > 0)
                    for (int c = 0; c < n; c++) s += AT(e, item * (N - 1) + i - 1, r, c) * xi[(i - 1) * n + c];
                if (i + 1 < N)
                    for (int c = 0; c < n; c++) s += AT(e, item * (N - 1) + i, c, r) * xi[(i + 1) * n + c];
                rmax = fmax(rmax, fabs(bi[i * n + r] - s));
                xmax = fmax(xmax, fabs(xi[i * n + r]));
            }
        }
        printf("item %d: max |b - Psi x| = %.3e, max |x| = %.3f, log det Psi = %.6f\n", item, rmax, xmax,
               logdet[item]);
        if (!(rmax <= 1e-12 * (1.0 + xmax)) || !isfinite(logdet[item])) ok = 0;
    }
    printf("%s\n", ok ? "minimal: OK" : "minimal: FAILED");
    return ok ? 0 : 1;
}
