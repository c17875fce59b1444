/*
 * kalman_smoother.c: a fixed-interval Kalman smoother in information form, solved with btchol,
 * checked against an independent Kalman filter + Rauch-Tung-Striebel (RTS) smoother.
 *
 * Model (2-D constant-velocity target, state x = (px, py, vx, vy), position measurements):
 *     x_0 ~ N(m0, P0),   x_{t+1} = A x_t + w_t,  w_t ~ N(0, Q),   y_t = C x_t + v_t,  v_t ~ N(0, R).
 * The smoothed means minimise the negative log posterior
 *     1/2 |x_0 - m0|^2_{P0^-1} + 1/2 sum_t |x_{t+1} - A x_t|^2_{Q^-1} + 1/2 sum_t |y_t - C x_t|^2_{R^-1},
 * whose normal equations Psi x = b are block tridiagonal and SPD, with T blocks of size 4:
 *     D_0 = P0^-1 + A^T Q^-1 A + C^T R^-1 C,   D_t = Q^-1 + A^T Q^-1 A + C^T R^-1 C,
 *     D_{T-1} = Q^-1 + C^T R^-1 C,             E_t = Psi[t+1][t] = -Q^-1 A,
 *     b_0 = P0^-1 m0 + C^T R^-1 y_0,           b_t = C^T R^-1 y_t.
 * Psi is the posterior precision, so (Psi^-1)[t][t] is the smoothed covariance P_{t|T}, and
 *     log det Psi = -log det P0 - (T-1) log det Q - T log det R + sum_t log det S_t
 * (S_t: the filter's innovation covariances; the prediction-error decomposition).
 *
 * The batch holds two tracks with different measurement noise. The program checks the smoothed
 * means, one smoothed covariance (from n extra right-hand sides, column-major) and log det Psi
 * against the filter/RTS recursion, and exits non-zero on a mismatch.
 */
#include <btchol.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NX = 4, NY = 2, T = 300, TRACKS = 2, ROWS = T * NX };

/* ---- small dense helpers (row-major, at most NX x NX) ---- */

/* c = a (r x k) * b (k x m); c may not alias a or b. */
static void mul(const double *a, const double *b, double *c, int r, int k, int m) {
    for (int i = 0; i < r; i++)
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            for (int l = 0; l < k; l++) s += a[i * k + l] * b[l * m + j];
            c[i * m + j] = s;
        }
}

static void transpose(const double *a, double *t, int r, int c) {
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++) t[j * r + i] = a[i * c + j];
}

/* Inverse of an SPD matrix by Cholesky (Gauss-Jordan on L); returns log det, or NAN if not SPD. */
static double spd_inverse(const double *a, double *inv, int m) {
    double l[NX * NX], li[NX * NX], logdet = 0.0;
    memset(l, 0, sizeof l);
    for (int j = 0; j < m; j++) {
        double s = a[j * m + j];
        for (int k = 0; k < j; k++) s -= l[j * m + k] * l[j * m + k];
        if (!(s > 0.0)) return NAN;
        l[j * m + j] = sqrt(s);
        logdet += 2.0 * log(l[j * m + j]);
        for (int i = j + 1; i < m; i++) {
            double t = a[i * m + j];
            for (int k = 0; k < j; k++) t -= l[i * m + k] * l[j * m + k];
            l[i * m + j] = t / l[j * m + j];
        }
    }
    /* li = L^-1 (lower triangular), then inv = li^T li. */
    memset(li, 0, sizeof li);
    for (int j = 0; j < m; j++) {
        li[j * m + j] = 1.0 / l[j * m + j];
        for (int i = j + 1; i < m; i++) {
            double s = 0.0;
            for (int k = j; k < i; k++) s += l[i * m + k] * li[k * m + j];
            li[i * m + j] = -s / l[i * m + i];
        }
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            for (int k = 0; k < m; k++) s += li[k * m + i] * li[k * m + j];
            inv[i * m + j] = s;
        }
    return logdet;
}

static unsigned long long rng = 12345;
static double gauss(void) {
    double u[2];
    for (int i = 0; i < 2; i++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        u[i] = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* ---- the model ---- */

struct model {
    double a[NX * NX], q[NX * NX], c[NY * NX], r[NY * NY], m0[NX], p0[NX * NX];
};

static void make_model(struct model *md, double meas_sigma) {
    const double dt = 0.1, qs = 0.5;
    memset(md, 0, sizeof *md);
    for (int i = 0; i < NX; i++) md->a[i * NX + i] = 1.0;
    md->a[0 * NX + 2] = md->a[1 * NX + 3] = dt;
    for (int k = 0; k < 2; k++) { /* white-acceleration noise, per axis */
        md->q[k * NX + k] = qs * dt * dt * dt / 3.0;
        md->q[k * NX + k + 2] = md->q[(k + 2) * NX + k] = qs * dt * dt / 2.0;
        md->q[(k + 2) * NX + k + 2] = qs * dt;
    }
    md->c[0 * NX + 0] = md->c[1 * NX + 1] = 1.0;
    md->r[0] = md->r[3] = meas_sigma * meas_sigma;
    md->m0[2] = 1.0;
    for (int i = 0; i < NX; i++) md->p0[i * NX + i] = 10.0;
}

/* Simulates T measurements y (T x NY) of one track. */
static void simulate(const struct model *md, double *y) {
    double x[NX] = {0.0, 0.0, 1.0, 0.5}, xn[NX], lq[NX * NX];
    /* A square root of Q for the process noise (Cholesky, lower). */
    memset(lq, 0, sizeof lq);
    for (int j = 0; j < NX; j++) {
        double s = md->q[j * NX + j];
        for (int k = 0; k < j; k++) s -= lq[j * NX + k] * lq[j * NX + k];
        lq[j * NX + j] = sqrt(s);
        for (int i = j + 1; i < NX; i++) {
            double t = md->q[i * NX + j];
            for (int k = 0; k < j; k++) t -= lq[i * NX + k] * lq[j * NX + k];
            lq[i * NX + j] = t / lq[j * NX + j];
        }
    }
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < NY; i++) y[t * NY + i] = x[i] + sqrt(md->r[i * NY + i]) * gauss();
        double w[NX];
        for (int i = 0; i < NX; i++) w[i] = gauss();
        mul(md->a, x, xn, NX, NX, 1);
        for (int i = 0; i < NX; i++)
            for (int k = 0; k <= i; k++) xn[i] += lq[i * NX + k] * w[k];
        memcpy(x, xn, sizeof x);
    }
}

/* Fills the blocks and right-hand side of one track's information-form normal equations. */
static void information_form(const struct model *md, const double *y, double *d, double *e, double *b) {
    double qi[NX * NX], ri[NY * NY], p0i[NX * NX], at[NX * NX], ct[NX * NY], tmp[NX * NX];
    double atqia[NX * NX], ctric[NX * NX], ctri[NX * NY], qia[NX * NX];
    spd_inverse(md->q, qi, NX);
    spd_inverse(md->r, ri, NY);
    spd_inverse(md->p0, p0i, NX);
    transpose(md->a, at, NX, NX);
    transpose(md->c, ct, NY, NX);
    mul(qi, md->a, qia, NX, NX, NX);
    mul(at, qia, atqia, NX, NX, NX);
    mul(ct, ri, ctri, NX, NY, NY);
    mul(ctri, md->c, ctric, NX, NY, NX);
    for (int t = 0; t < T; t++) {
        double *dt = d + t * NX * NX;
        for (int k = 0; k < NX * NX; k++)
            dt[k] = (t == 0 ? p0i[k] : qi[k]) + (t + 1 < T ? atqia[k] : 0.0) + ctric[k];
        if (t + 1 < T)
            for (int k = 0; k < NX * NX; k++) e[t * NX * NX + k] = -qia[k];
        mul(ctri, y + t * NY, b + t * NX, NX, NY, 1);
    }
    mul(p0i, md->m0, tmp, NX, NX, 1);
    for (int i = 0; i < NX; i++) b[i] += tmp[i];
}

/* The independent reference: Kalman filter, then RTS smoother. Writes the smoothed means
 * (T x NX), the smoothed covariance at step t_cov, and returns log det Psi. */
static double kalman_rts(const struct model *md, const double *y, double *ms, int t_cov, double *pcov) {
    static double mf[T * NX], pf[T * NX * NX], mp[T * NX], pp[T * NX * NX];
    double at[NX * NX], ct[NX * NY], tmp[NX * NX], tmp2[NX * NX], s[NY * NY], si[NY * NY], k[NX * NY];
    double logdet = 0.0, ldq, ldr, ldp0;
    transpose(md->a, at, NX, NX);
    transpose(md->c, ct, NY, NX);
    ldq = spd_inverse(md->q, tmp, NX);
    ldr = spd_inverse(md->r, tmp, NY);
    ldp0 = spd_inverse(md->p0, tmp, NX);
    memcpy(mp, md->m0, sizeof(double) * NX);
    memcpy(pp, md->p0, sizeof(double) * NX * NX);
    for (int t = 0; t < T; t++) {
        const double *m = mp + t * NX, *p = pp + t * NX * NX;
        double pct[NX * NY], innov[NY], cm[NY];
        /* S = C P C^T + R, K = P C^T S^-1. */
        mul(p, ct, pct, NX, NX, NY);
        mul(md->c, pct, s, NY, NX, NY);
        for (int i = 0; i < NY * NY; i++) s[i] += md->r[i];
        logdet += spd_inverse(s, si, NY);
        mul(pct, si, k, NX, NY, NY);
        mul(md->c, m, cm, NY, NX, 1);
        for (int i = 0; i < NY; i++) innov[i] = y[t * NY + i] - cm[i];
        mul(k, innov, mf + t * NX, NX, NY, 1);
        for (int i = 0; i < NX; i++) mf[t * NX + i] += m[i];
        /* P_f = P - K C P. */
        mul(k, md->c, tmp, NX, NY, NX);
        mul(tmp, p, tmp2, NX, NX, NX);
        for (int i = 0; i < NX * NX; i++) pf[t * NX * NX + i] = p[i] - tmp2[i];
        if (t + 1 < T) { /* predict */
            mul(md->a, mf + t * NX, mp + (t + 1) * NX, NX, NX, 1);
            mul(md->a, pf + t * NX * NX, tmp, NX, NX, NX);
            mul(tmp, at, pp + (t + 1) * NX * NX, NX, NX, NX);
            for (int i = 0; i < NX * NX; i++) pp[(t + 1) * NX * NX + i] += md->q[i];
        }
    }
    /* RTS backwards: G = P_f A^T P_p^-1, m_s = m_f + G (m_s' - m_p'), P_s = P_f + G (P_s' - P_p') G^T. */
    static double ps[T * NX * NX];
    memcpy(ms + (T - 1) * NX, mf + (T - 1) * NX, sizeof(double) * NX);
    memcpy(ps + (T - 1) * NX * NX, pf + (T - 1) * NX * NX, sizeof(double) * NX * NX);
    for (int t = T - 2; t >= 0; t--) {
        double ppi[NX * NX], g[NX * NX], gt[NX * NX], dm[NX], dp[NX * NX];
        spd_inverse(pp + (t + 1) * NX * NX, ppi, NX);
        mul(pf + t * NX * NX, at, tmp, NX, NX, NX);
        mul(tmp, ppi, g, NX, NX, NX);
        for (int i = 0; i < NX; i++) dm[i] = ms[(t + 1) * NX + i] - mp[(t + 1) * NX + i];
        mul(g, dm, ms + t * NX, NX, NX, 1);
        for (int i = 0; i < NX; i++) ms[t * NX + i] += mf[t * NX + i];
        for (int i = 0; i < NX * NX; i++) dp[i] = ps[(t + 1) * NX * NX + i] - pp[(t + 1) * NX * NX + i];
        transpose(g, gt, NX, NX);
        mul(g, dp, tmp, NX, NX, NX);
        mul(tmp, gt, tmp2, NX, NX, NX);
        for (int i = 0; i < NX * NX; i++) ps[t * NX * NX + i] = pf[t * NX * NX + i] + tmp2[i];
    }
    memcpy(pcov, ps + t_cov * NX * NX, sizeof(double) * NX * NX);
    return -ldp0 - (T - 1) * ldq - T * ldr + logdet;
}

static void check(btchol_status status, const char *what) {
    if (status != BTCHOL_STATUS_SUCCESS) {
        fprintf(stderr, "%s failed: %s: %s\n", what, btchol_status_string(status), btchol_last_error_message());
        exit(1);
    }
}

int main(void) {
    const double sigmas[TRACKS] = {0.5, 2.0};
    const int t_cov = T / 3;
    struct model md[TRACKS];
    double *y = (double *)malloc(sizeof(double) * TRACKS * T * NY);
    double *d = (double *)malloc(sizeof(double) * TRACKS * T * NX * NX);
    double *e = (double *)malloc(sizeof(double) * TRACKS * (T - 1) * NX * NX);
    double *x = (double *)malloc(sizeof(double) * TRACKS * ROWS);
    double *ms = (double *)malloc(sizeof(double) * T * NX);
    /* n right-hand sides per track, column-major: the unit vectors of the rows of step t_cov. */
    double *cols = (double *)calloc((size_t)TRACKS * ROWS * NX, sizeof(double));
    if (!y || !d || !e || !x || !ms || !cols) return 1;

    for (int k = 0; k < TRACKS; k++) {
        make_model(&md[k], sigmas[k]);
        simulate(&md[k], y + k * T * NY);
        information_form(&md[k], y + k * T * NY, d + k * T * NX * NX, e + k * (T - 1) * NX * NX, x + k * ROWS);
        for (int j = 0; j < NX; j++) cols[(size_t)k * ROWS * NX + (size_t)j * ROWS + t_cov * NX + j] = 1.0;
    }

    btchol_plan_options options;
    btchol_plan *plan = NULL;
    check(btchol_plan_options_init(&options), "btchol_plan_options_init");
    options.layout = BTCHOL_LAYOUT_ROW_MAJOR;
    check(btchol_plan_create(TRACKS, T, NX, BTCHOL_DTYPE_F64, &options, &plan), "btchol_plan_create");
    check(btchol_plan_upload(plan, d, e), "btchol_plan_upload");
    check(btchol_plan_factor(plan, NULL, NULL), "btchol_plan_factor");
    check(btchol_plan_solve(plan, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0), "btchol_plan_solve (means)");
    check(btchol_plan_solve(plan, cols, NX, BTCHOL_LAYOUT_COL_MAJOR, 0, 0), "btchol_plan_solve (covariance)");
    double logdet[TRACKS];
    check(btchol_plan_logdet(plan, logdet), "btchol_plan_logdet");
    btchol_plan_destroy(plan);

    int ok = 1;
    for (int k = 0; k < TRACKS; k++) {
        double pcov[NX * NX], mean_err = 0.0, mean_scale = 0.0, cov_err = 0.0, cov_scale = 0.0;
        double ld_ref = kalman_rts(&md[k], y + k * T * NY, ms, t_cov, pcov);
        for (int i = 0; i < ROWS; i++) {
            mean_err = fmax(mean_err, fabs(x[k * ROWS + i] - ms[i]));
            mean_scale = fmax(mean_scale, fabs(ms[i]));
        }
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NX; j++) {
                /* Column j of Psi^-1 for row t_cov*NX + j, its rows of step t_cov: (P_{t|T})[i][j]. */
                double v = cols[(size_t)k * ROWS * NX + (size_t)j * ROWS + t_cov * NX + i];
                cov_err = fmax(cov_err, fabs(v - pcov[i * NX + j]));
                cov_scale = fmax(cov_scale, fabs(pcov[i * NX + j]));
            }
        double ld_err = fabs(logdet[k] - ld_ref) / fmax(1.0, fabs(ld_ref));
        printf("track %d (sigma %.1f): smoothed means rel. err %.2e, P_{%d|T} rel. err %.2e, "
               "log det Psi %.6f vs %.6f (rel. err %.2e)\n",
               k, sigmas[k], mean_err / mean_scale, t_cov, cov_err / cov_scale, logdet[k], ld_ref, ld_err);
        if (!(mean_err <= 1e-8 * mean_scale) || !(cov_err <= 1e-8 * cov_scale) || !(ld_err <= 1e-9)) ok = 0;
    }
    free(y);
    free(d);
    free(e);
    free(x);
    free(ms);
    free(cols);
    printf("%s\n", ok ? "kalman_smoother: OK (btchol matches Kalman filter + RTS)" : "kalman_smoother: MISMATCH");
    return ok ? 0 : 1;
}
