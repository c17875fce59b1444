"""Tests of the features beyond the paper (regularisation, batch masks, deterministic mode,
gradients) through the Python binding, against dense NumPy references (CPU plans)."""

import numpy as np
import pytest

import btchol
from test_btchol import dense, make_problem


def _shifted(D, sigma):
    return D + sigma * np.eye(D.shape[-1])


@pytest.mark.parametrize("algorithm", ["seq", "nd"])
@pytest.mark.parametrize("B,N,n", [(1, 1, 1), (2, 3, 2), (3, 7, 5)])
def test_diag_shift_factors_the_shifted_matrix(algorithm, B, N, n):
    D, E, b = make_problem(B, N, n, 2, seed=N * 10 + n)
    D = _shifted(D, -5.0)  # indefinite without the shift
    D0 = D.copy()
    with btchol.Plan(B, N, n, backend="cpu", algorithm=algorithm, diag_shift=5.0) as p:
        x = p.factor_solve(D, E, b.copy())
        np.testing.assert_array_equal(D, D0)  # the caller's array is untouched
        for k in range(B):
            A = dense(_shifted(D[k], 5.0), E[k])
            np.testing.assert_allclose(A @ x[k], b[k], atol=1e-10)
        np.testing.assert_array_equal(p.boosted_pivots(), np.zeros(B, dtype=np.int64))


@pytest.mark.parametrize("algorithm", ["seq", "nd"])
def test_boosted_pivots_are_counted_per_item(algorithm):
    B, N, n = 3, 5, 3
    D, E, b = make_problem(B, N, n, 1, seed=3)
    D[1, 0, 0, 0] = -1.0  # item 1: its first pivot (block 0 is eliminated first by both algorithms)
    with btchol.Plan(B, N, n, backend="cpu", algorithm=algorithm) as p:
        p.upload(D, E)
        with pytest.raises(btchol.NotPositiveDefiniteError):
            p.factor()
    with btchol.Plan(B, N, n, backend="cpu", algorithm=algorithm, pivot_threshold=1e-12, pivot_boost=1e6) as p:
        x = p.factor_solve(D, E, b.copy())
        np.testing.assert_array_equal(p.boosted_pivots(), [0, 1, 0])
        np.testing.assert_array_equal(p.item_status(), [0, 0, 0])
        D[1, 0, 0, 0] = 1e6  # what the boosted factor factors
        for k in range(B):
            np.testing.assert_allclose(dense(D[k], E[k]) @ x[k], b[k], atol=1e-9)


def test_regularisation_options_rejected_clearly():
    with pytest.raises(btchol.InvalidArgumentError, match="pivot_boost"):
        btchol.Plan(1, 2, 2, backend="cpu", pivot_threshold=1e-6)
    with pytest.raises(btchol.InvalidArgumentError, match="diag_shift"):
        btchol.Plan(1, 2, 2, backend="cpu", diag_shift=float("nan"))
    with pytest.raises(btchol.UnsupportedError, match="CUDA backend"):
        btchol.Plan(1, 2, 2, backend="cuda", pivot_boost=1.0)
    assert btchol.UnsupportedError.status == 12


@pytest.mark.parametrize("algorithm", ["seq", "nd"])
def test_masks_work_on_selected_items_only(algorithm):
    B, N, n = 5, 6, 3
    D1, E1, b = make_problem(B, N, n, 2, seed=7)
    D2, E2, _ = make_problem(B, N, n, 2, seed=8)
    mask = np.array([True, False, True, False, False])
    with btchol.Plan(B, N, n, backend="cpu", algorithm=algorithm, threads=2) as p:
        p.upload(D1, E1)
        p.factor()
        D2n = D2.copy()
        D2n[~mask] = np.nan  # not read by the masked upload
        p.upload(D2n, E2, mask=mask)
        np.testing.assert_array_equal(p.item_status(), [-1, 0, -1, 0, 0])
        p.factor(mask=mask)
        x = b.copy()
        x[~mask] = np.nan  # not read by the masked solve
        p.solve(x, mask=mask)
        assert np.isnan(x[~mask]).all()
        x = p.solve(b.copy())  # every item, each with the factor it holds
        for k in range(B):
            D, E = (D2, E2) if mask[k] else (D1, E1)
            np.testing.assert_allclose(dense(D[k], E[k]) @ x[k], b[k], atol=1e-10)
        with pytest.raises(btchol.InvalidStateError, match="item 0"):
            p.factor(mask=mask)  # not uploaded again
        with pytest.raises(ValueError, match="mask"):
            p.factor(mask=[1, 0, 1, 0, 0])  # not bool


@pytest.mark.parametrize("algorithm", ["seq", "nd"])
def test_deterministic_runs_give_identical_bits(algorithm):
    B, N, n = 3, 40, 4
    D, E, b = make_problem(B, N, n, 2, seed=11)
    runs = []
    for _ in range(20):
        with btchol.Plan(B, N, n, backend="cpu", algorithm=algorithm, threads=2, deterministic=True) as p:
            runs.append(p.factor_solve(D, E, b.copy()).tobytes())
    assert all(r == runs[0] for r in runs)
