// mpc_lq.cpp: a finite-horizon linear-quadratic regulator (the core of linear MPC) solved with
// btchol, checked against an independent Riccati recursion.
//
// Plant: three unit masses in a row, joined to each other and to two walls by springs (stiffness
// k) with light damping; forces act on the first and the last mass. State x = (positions,
// velocities) in R^6, input u in R^2, discretised with step dt:  x_{k+1} = A x_k + B u_k.
//
// Problem: minimise  sum_{k<K} (x_k' Q x_k + u_k' R u_k) + x_K' Qf x_K  over u_0..u_{K-1}, from x_0.
//
// Block-tridiagonal form: write the decision vector z = (u_0, x_1, u_1, x_2, ..., u_{K-1}, x_K),
// the cost 1/2 z' H z with H = 2 blockdiag(R, Q, R, Q, ..., R, Qf), and the dynamics as G z = c
// (row k: x_{k+1} - A x_k - B u_k = 0, with c_0 = A x_0). The KKT conditions H z = G' lambda,
// G z = c reduce to the dual normal equations (the Schur complement of the KKT matrix)
//     M lambda = c,   M = G H^-1 G',   z = H^-1 G' lambda,
// and M is block tridiagonal and SPD (G has full row rank) with K blocks of size 6:
//     M_kk = Qh_{k+1}^-1 + [k > 0] A Qh_k^-1 A' + B Rh^-1 B',   M_{k+1,k} = -A Qh_{k+1}^-1,
// where Qh = 2Q, Rh = 2R, Qh_K = 2Qf. lambda_k is the costate of step k+1. The Riccati recursion
//     P_K = Qf,  K_k = (R + B' P_{k+1} B)^-1 B' P_{k+1} A,  P_k = Q + A' P_{k+1} (A - B K_k)
// gives the same optimum independently: u_k = -K_k x_k, lambda_k = 2 P_{k+1} x_{k+1}, and the
// optimal cost x_0' P_0 x_0 = x_0' Q x_0 + 1/2 z' H z = x_0' Q x_0 + 1/2 lambda_0' A x_0.
//
// The batch holds two plants (soft and stiff springs); each is solved for three initial states at
// once (three right-hand sides). Exits non-zero on a mismatch.
#include <btchol.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kMasses = 3;
constexpr int kNx = 2 * kMasses;  // state dimension: the block size n
constexpr int kNu = 2;            // inputs
constexpr int kHorizon = 40;      // K: the number of blocks N
constexpr int kStarts = 3;        // initial states, i.e. right-hand sides
constexpr double kDt = 0.1;

// A small dense row-major matrix.
struct Mat {
    int r = 0, c = 0;
    std::vector<double> a;
    Mat() = default;
    Mat(int rows, int cols) : r(rows), c(cols), a(static_cast<size_t>(rows) * cols, 0.0) {}
    double &operator()(int i, int j) { return a[static_cast<size_t>(i) * c + j]; }
    double operator()(int i, int j) const { return a[static_cast<size_t>(i) * c + j]; }
    static Mat eye(int m, double s = 1.0) {
        Mat e(m, m);
        for (int i = 0; i < m; i++) e(i, i) = s;
        return e;
    }
};

Mat operator*(const Mat &x, const Mat &y) {
    Mat z(x.r, y.c);
    for (int i = 0; i < x.r; i++)
        for (int k = 0; k < x.c; k++)
            for (int j = 0; j < y.c; j++) z(i, j) += x(i, k) * y(k, j);
    return z;
}
Mat operator+(Mat x, const Mat &y) {
    for (size_t i = 0; i < x.a.size(); i++) x.a[i] += y.a[i];
    return x;
}
Mat operator-(Mat x, const Mat &y) {
    for (size_t i = 0; i < x.a.size(); i++) x.a[i] -= y.a[i];
    return x;
}
Mat operator*(double s, Mat x) {
    for (double &v : x.a) v *= s;
    return x;
}
Mat transpose(const Mat &x) {
    Mat t(x.c, x.r);
    for (int i = 0; i < x.r; i++)
        for (int j = 0; j < x.c; j++) t(j, i) = x(i, j);
    return t;
}
// Inverse by Gauss-Jordan elimination with partial pivoting.
Mat inverse(Mat x) {
    const int m = x.r;
    Mat inv = Mat::eye(m);
    for (int col = 0; col < m; col++) {
        int p = col;
        for (int i = col + 1; i < m; i++)
            if (std::fabs(x(i, col)) > std::fabs(x(p, col))) p = i;
        if (x(p, col) == 0.0) throw std::runtime_error("singular matrix");
        for (int j = 0; j < m; j++) {
            std::swap(x(col, j), x(p, j));
            std::swap(inv(col, j), inv(p, j));
        }
        const double d = x(col, col);
        for (int j = 0; j < m; j++) {
            x(col, j) /= d;
            inv(col, j) /= d;
        }
        for (int i = 0; i < m; i++) {
            if (i == col) continue;
            const double f = x(i, col);
            for (int j = 0; j < m; j++) {
                x(i, j) -= f * x(col, j);
                inv(i, j) -= f * inv(col, j);
            }
        }
    }
    return inv;
}

struct Plant {
    Mat A, B, Q, R, Qf;
};

// The mass-spring chain with spring stiffness `k`, discretised by a second-order Taylor step.
Plant make_plant(double k) {
    const double damping = 0.1;
    Mat ac(kNx, kNx), bc(kNx, kNu);
    for (int i = 0; i < kMasses; i++) {
        ac(i, kMasses + i) = 1.0;                // d/dt position = velocity
        ac(kMasses + i, i) = -2.0 * k;           // springs on both sides
        if (i > 0) ac(kMasses + i, i - 1) = k;   // neighbour on the left
        if (i + 1 < kMasses) ac(kMasses + i, i + 1) = k;
        ac(kMasses + i, kMasses + i) = -damping;
    }
    bc(kMasses + 0, 0) = 1.0;            // force on the first mass
    bc(kMasses + kMasses - 1, 1) = 1.0;  // force on the last mass
    Plant p;
    p.A = Mat::eye(kNx) + kDt * ac + (0.5 * kDt * kDt) * (ac * ac);
    p.B = (kDt * Mat::eye(kNx) + (0.5 * kDt * kDt) * ac) * bc;
    p.Q = Mat::eye(kNx);
    for (int i = 0; i < kMasses; i++) p.Q(i, i) = 10.0;  // positions matter more than velocities
    p.R = Mat::eye(kNu, 0.1);
    p.Qf = 10.0 * p.Q;
    return p;
}

// The dual normal equations' blocks for one plant: D (K blocks), E (K-1 blocks), row-major.
void dual_blocks(const Plant &p, double *d, double *e) {
    const Mat qhi = inverse(2.0 * p.Q), qfhi = inverse(2.0 * p.Qf), rhi = inverse(2.0 * p.R);
    const Mat at = transpose(p.A), brb = p.B * rhi * transpose(p.B), aqa = p.A * qhi * at;
    for (int k = 0; k < kHorizon; k++) {
        const Mat &next = (k + 1 == kHorizon) ? qfhi : qhi;  // Qh_{k+1}^-1
        Mat mkk = next + brb;
        if (k > 0) mkk = mkk + aqa;
        std::copy(mkk.a.begin(), mkk.a.end(), d + static_cast<size_t>(k) * kNx * kNx);
        if (k + 1 < kHorizon) {
            const Mat sub = -1.0 * (p.A * qhi);  // -A Qh_{k+1}^-1, and k + 1 < K: a stage weight
            std::copy(sub.a.begin(), sub.a.end(), e + static_cast<size_t>(k) * kNx * kNx);
        }
    }
}

void check(btchol_status status, const char *what) {
    if (status != BTCHOL_STATUS_SUCCESS)
        throw std::runtime_error(std::string(what) + " failed: " + btchol_status_string(status) + ": " +
                                 btchol_last_error_message());
}

// RAII owner of a plan.
struct PlanHandle {
    btchol_plan *p = nullptr;
    PlanHandle() = default;
    PlanHandle(const PlanHandle &) = delete;
    PlanHandle &operator=(const PlanHandle &) = delete;
    ~PlanHandle() { btchol_plan_destroy(p); }
};

}  // namespace

int main() {
    try {
        const std::array<double, 2> stiffness = {1.0, 4.0};
        constexpr int kItems = static_cast<int>(stiffness.size());
        constexpr int kRows = kHorizon * kNx;
        std::vector<Plant> plants;
        for (double k : stiffness) plants.push_back(make_plant(k));

        // Initial states: displace one mass, or push one.
        std::array<std::array<double, kNx>, kStarts> x0s{};
        x0s[0][0] = 1.0;
        x0s[1][1] = -0.5;
        x0s[2][kMasses + 2] = 2.0;

        std::vector<double> d(static_cast<size_t>(kItems) * kHorizon * kNx * kNx);
        std::vector<double> e(static_cast<size_t>(kItems) * (kHorizon - 1) * kNx * kNx);
        // Right-hand sides: dense row-major (B, K*n, kStarts); only block 0 (c_0 = A x_0) is non-zero.
        std::vector<double> lambda(static_cast<size_t>(kItems) * kRows * kStarts, 0.0);
        for (int it = 0; it < kItems; it++) {
            dual_blocks(plants[it], d.data() + static_cast<size_t>(it) * kHorizon * kNx * kNx,
                        e.data() + static_cast<size_t>(it) * (kHorizon - 1) * kNx * kNx);
            for (int s = 0; s < kStarts; s++)
                for (int i = 0; i < kNx; i++)
                    for (int j = 0; j < kNx; j++)
                        lambda[(static_cast<size_t>(it) * kRows + i) * kStarts + s] += plants[it].A(i, j) * x0s[s][j];
        }

        btchol_plan_options options;
        check(btchol_plan_options_init(&options), "btchol_plan_options_init");
        options.layout = BTCHOL_LAYOUT_ROW_MAJOR;
        PlanHandle plan;
        check(btchol_plan_create(kItems, kHorizon, kNx, BTCHOL_DTYPE_F64, &options, &plan.p), "btchol_plan_create");
        int64_t failed_item = 0, info = 0;
        check(btchol_plan_factor_solve(plan.p, d.data(), e.data(), lambda.data(), kStarts, BTCHOL_LAYOUT_ROW_MAJOR, 0,
                                       0, &failed_item, &info),
              "btchol_plan_factor_solve");

        bool ok = true;
        for (int it = 0; it < kItems; it++) {
            const Plant &p = plants[it];
            const Mat at = transpose(p.A), bt = transpose(p.B);
            // Riccati recursion, backwards.
            std::vector<Mat> gains(kHorizon), cost_to_go(kHorizon + 1);
            cost_to_go[kHorizon] = p.Qf;
            for (int k = kHorizon - 1; k >= 0; k--) {
                const Mat &pn = cost_to_go[k + 1];
                gains[k] = inverse(p.R + bt * pn * p.B) * (bt * pn * p.A);
                cost_to_go[k] = p.Q + at * pn * (p.A - p.B * gains[k]);
            }
            const Mat rhi = inverse(2.0 * p.R), qhi = inverse(2.0 * p.Q), qfhi = inverse(2.0 * p.Qf);
            double max_err_u = 0, max_err_x = 0, max_err_lambda = 0, max_u = 0, max_x = 0, max_lambda = 0;
            double cost_err = 0;
            for (int s = 0; s < kStarts; s++) {
                auto lam = [&](int k) {  // lambda_k as a column (zero past the horizon)
                    Mat l(kNx, 1);
                    if (k < kHorizon)
                        for (int i = 0; i < kNx; i++)
                            l(i, 0) = lambda[(static_cast<size_t>(it) * kRows + k * kNx + i) * kStarts + s];
                    return l;
                };
                Mat x(kNx, 1);
                for (int i = 0; i < kNx; i++) x(i, 0) = x0s[s][i];
                const Mat x0 = x;
                for (int k = 0; k < kHorizon; k++) {
                    // Riccati: u_k = -K_k x_k, x_{k+1} = A x_k + B u_k.
                    const Mat u_ref = -1.0 * (gains[k] * x);
                    x = p.A * x + p.B * u_ref;
                    // btchol: u_k = -Rh^-1 B' lambda_k, x_{k+1} = Qh_{k+1}^-1 (lambda_k - A' lambda_{k+1}).
                    const Mat u = -1.0 * (rhi * bt * lam(k));
                    const Mat xk1 = (k + 1 == kHorizon ? qfhi : qhi) * (lam(k) - at * lam(k + 1));
                    const Mat lam_ref = 2.0 * (cost_to_go[k + 1] * x);
                    for (int i = 0; i < kNu; i++) {
                        max_err_u = std::max(max_err_u, std::fabs(u(i, 0) - u_ref(i, 0)));
                        max_u = std::max(max_u, std::fabs(u_ref(i, 0)));
                    }
                    for (int i = 0; i < kNx; i++) {
                        max_err_x = std::max(max_err_x, std::fabs(xk1(i, 0) - x(i, 0)));
                        max_x = std::max(max_x, std::fabs(x(i, 0)));
                        max_err_lambda = std::max(max_err_lambda, std::fabs(lam(k)(i, 0) - lam_ref(i, 0)));
                        max_lambda = std::max(max_lambda, std::fabs(lam_ref(i, 0)));
                    }
                }
                // Optimal cost: x0' P_0 x0 (Riccati) against x0' Q x0 + lambda_0' A x0 (btchol).
                const double j_ref = (transpose(x0) * cost_to_go[0] * x0)(0, 0);
                const double j = (transpose(x0) * p.Q * x0)(0, 0) + 0.5 * (transpose(lam(0)) * p.A * x0)(0, 0);
                cost_err = std::max(cost_err, std::fabs(j - j_ref) / std::fabs(j_ref));
            }
            std::printf("plant %d (k = %.1f): |u - u_riccati| / |u| = %.2e, |x - x_riccati| / |x| = %.2e, "
                        "|lambda - 2 P x| / |lambda| = %.2e, cost rel. err %.2e\n",
                        it, stiffness[it], max_err_u / max_u, max_err_x / max_x, max_err_lambda / max_lambda, cost_err);
            if (!(max_err_u <= 1e-9 * max_u) || !(max_err_x <= 1e-9 * max_x) ||
                !(max_err_lambda <= 1e-9 * max_lambda) || !(cost_err <= 1e-10))
                ok = false;
        }
        std::printf("%s\n", ok ? "mpc_lq: OK (btchol matches the Riccati recursion)" : "mpc_lq: MISMATCH");
        return ok ? 0 : 1;
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "mpc_lq: %s\n", ex.what());
        return 1;
    }
}
