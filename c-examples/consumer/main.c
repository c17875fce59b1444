/* The smallest downstream program: solve tridiag(-1, 4, -1) x = Psi * ones, check x = ones. */
#include <btchol.h>

#include <stdio.h>

int main(void) {
    double d[3] = {4.0, 4.0, 4.0}, e[2] = {-1.0, -1.0}, x[3] = {3.0, 2.0, 3.0};
    btchol_plan *plan = NULL;
    btchol_status s = btchol_plan_create(1, 3, 1, BTCHOL_DTYPE_F64, NULL, &plan);
    if (s == BTCHOL_STATUS_SUCCESS)
        s = btchol_plan_factor_solve(plan, d, e, x, 1, BTCHOL_LAYOUT_ROW_MAJOR, 0, 0, NULL, NULL);
    btchol_plan_destroy(plan);
    if (s != BTCHOL_STATUS_SUCCESS) {
        fprintf(stderr, "btchol: %s: %s\n", btchol_status_string(s), btchol_last_error_message());
        return 1;
    }
    if (btchol_version_number() / 1000000 != BTCHOL_VERSION_MAJOR) {
        fprintf(stderr, "header %d.x but library %s\n", BTCHOL_VERSION_MAJOR, btchol_version());
        return 1;
    }
    for (int i = 0; i < 3; i++)
        if (x[i] - 1.0 > 1e-14 || 1.0 - x[i] > 1e-14) {
            fprintf(stderr, "x[%d] = %.17g, expected 1\n", i, x[i]);
            return 1;
        }
    printf("consumer: btchol %s OK\n", btchol_version());
    return 0;
}
