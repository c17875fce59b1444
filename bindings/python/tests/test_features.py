"""Tests of the features beyond the paper (regularisation, batch masks, deterministic mode,
gradients, 16-bit inputs, mixed precision) through the Python binding, against dense NumPy
references and finite differences (CPU plans)."""

import numpy as np
import pytest

import btchol
from test_btchol import check_solution, dense, from_layout, make_problem, requires_cuda, requires_cupy, to_layout


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
    # Pivot boosting runs on both backends: a CUDA plan with it is created where a GPU is usable.
    if btchol.cuda_available():
        assert btchol.Plan(1, 2, 2, backend="cuda", pivot_boost=1.0).backend == "cuda"
    else:
        with pytest.raises(btchol.BackendUnavailableError):
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


@pytest.mark.parametrize("partition", ["auto", "none", 1, 3, 7])
def test_partitioned_nested_dissection_solves(partition):
    B, N, n = 2, 37, 4
    D, E, b = make_problem(B, N, n, 2, seed=13)
    with btchol.Plan(B, N, n, backend="cpu", algorithm="nd", threads=2, partition=partition) as p:
        x = p.factor_solve(D, E, b.copy())
    for k in range(B):
        np.testing.assert_allclose(dense(D[k], E[k]) @ x[k], b[k], atol=1e-10)


@pytest.mark.parametrize("partition", [0, -1, "chunks", 2.0, True])
def test_partition_rejects_what_is_not_a_chunk_length(partition):
    with pytest.raises(ValueError, match="partition"):
        btchol.Plan(1, 8, 2, backend="cpu", partition=partition)


# ---- gradient (backward pass of solve) ----------------------------------------------------


def _dense_solve(D, E, b):
    """x for every item by numpy.linalg.solve on the dense matrices (C convention)."""
    return np.stack([np.linalg.solve(dense(D[k], E[k]), b[k]) for k in range(D.shape[0])])


def _loss(D, E, b, w):
    return float(np.sum(w * _dense_solve(D, E, b)))


def _finite_differences(D, E, b, w, h=1e-6):
    """Central differences of L = sum(w * x) with respect to every entry of b and E and every
    lower-triangle entry of D (the only ones read: the upper triangle stays zero)."""
    grads = []
    for arr, lower in ((D, True), (E, False), (b, False)):
        g = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            if lower and idx[-1] > idx[-2]:
                continue
            old = arr[idx]
            arr[idx] = old + h
            up = _loss(D, E, b, w)
            arr[idx] = old - h
            down = _loss(D, E, b, w)
            arr[idx] = old
            g[idx] = (up - down) / (2 * h)
        grads.append(g)
    return grads


def _as_upload_gradients(gD, gE):
    """dL/dD (lower triangle, as read by upload) and dL/dE from the blocks of G."""
    n = gD.shape[-1]
    return 2 * np.tril(gD, -1) + gD * np.eye(n), 2 * gE


@pytest.mark.parametrize("algorithm", ["seq", "nd"])
@pytest.mark.parametrize("m", [2, None])
def test_gradient_matches_finite_differences(algorithm, m):
    B, N, n = 2, 3, 2
    D, E, b = make_problem(B, N, n, m, seed=17)
    w = np.random.default_rng(18).standard_normal(b.shape)  # dL/dx of L = sum(w * x)
    with btchol.Plan(B, N, n, backend="cpu", algorithm=algorithm) as p:
        x = p.factor_solve(D, E, b.copy())
        x0, w0 = x.copy(), w.copy()
        gb, gD, gE = p.gradient(x, w)
        np.testing.assert_array_equal(x, x0)  # inputs untouched
        np.testing.assert_array_equal(w, w0)
    assert gb.shape == b.shape and gD.shape == (B, N, n, n) and gE.shape == (B, N - 1, n, n)
    assert gb.dtype == gD.dtype == gE.dtype == np.float64
    np.testing.assert_allclose(gD, gD.transpose(0, 1, 3, 2), atol=1e-15)  # G is symmetric
    fd_D, fd_E, fd_b = _finite_differences(D.copy(), E.copy(), b.copy(), w)
    dD, dE = _as_upload_gradients(gD, gE)
    np.testing.assert_allclose(gb, fd_b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dE, fd_E, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dD, fd_D, rtol=1e-6, atol=1e-8)
    # grad_b = Psi^-1 grad_x exactly, and G from its definition
    np.testing.assert_allclose(gb, _dense_solve(D, E, w), rtol=1e-12, atol=1e-14)
    for k in range(B):
        lam, xk = gb[k].reshape(N * n, -1), x[k].reshape(N * n, -1)
        G = -(lam @ xk.T + xk @ lam.T) / 2
        for i in range(N):
            np.testing.assert_allclose(gD[k, i], G[i * n : (i + 1) * n, i * n : (i + 1) * n], atol=1e-14)
        for i in range(N - 1):
            np.testing.assert_allclose(gE[k, i], G[(i + 1) * n : (i + 2) * n, i * n : (i + 1) * n], atol=1e-14)


def test_gradient_single_block():
    B, N, n = 2, 1, 3
    D, E, b = make_problem(B, N, n, 1, seed=19)
    w = np.random.default_rng(20).standard_normal(b.shape)
    with btchol.Plan(B, N, n, backend="cpu") as p:
        p.upload(D)
        p.factor()
        x = p.solve(b.copy())
        gb, gD, gE = p.gradient(x, w)
    assert gE.shape == (B, 0, n, n)
    fd_D, _, fd_b = _finite_differences(D.copy(), E.copy(), b.copy(), w)
    dD, _ = _as_upload_gradients(gD, gE)
    np.testing.assert_allclose(gb, fd_b, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dD, fd_D, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_fortran_layout_matches_c(dtype):
    B, N, n, m = 3, 4, 2, 2
    D, E, b = make_problem(B, N, n, m, dtype, seed=23)
    w = np.random.default_rng(24).standard_normal(b.shape).astype(dtype)
    with btchol.Plan(B, N, n, dtype=dtype, backend="cpu") as p:
        x = p.factor_solve(D, E, b.copy())
        ref = p.gradient(x, w)
    Df, Ef, bf = to_layout("F", D, E, b.copy())
    with btchol.Plan(B, N, n, dtype=dtype, layout="F", backend="cpu") as p:
        xf = p.factor_solve(Df, Ef, bf)
        gb, gD, gE = p.gradient(xf, to_layout("F", D, E, w)[2])
    assert gD.shape == (n, n, N, B) and gE.shape == (n, n, N - 1, B)
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(from_layout("F", gb), ref[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(gD.transpose(3, 2, 0, 1), ref[1], rtol=tol, atol=tol)
    np.testing.assert_allclose(gE.transpose(3, 2, 0, 1), ref[2], rtol=tol, atol=tol)


def test_gradient_errors():
    B, N, n = 2, 3, 2
    D, E, b = make_problem(B, N, n, 2, seed=25)
    with btchol.Plan(B, N, n, backend="cpu") as p:
        with pytest.raises(btchol.InvalidStateError):
            p.gradient(b, b)  # before factor
        x = p.factor_solve(D, E, b.copy())
        with pytest.raises(ValueError, match="must match"):
            p.gradient(x, b[:, :, :1])
        with pytest.raises(ValueError, match="expected"):
            p.gradient(x[:, :4], b[:, :4])
        with pytest.raises(TypeError, match="dtype"):
            p.gradient(x, b.astype(np.float32))
        bad = b.copy()
        bad[1, 2, 0] = np.nan
        with pytest.raises(btchol.NonFiniteInputError):
            p.gradient(x, bad)
        with pytest.raises(btchol.NonFiniteInputError):
            p.gradient(bad, b)
        D2 = D.copy()
        D2[1, 1, 0, 0] = -5.0
        p.upload(D2, E)
        with pytest.raises(btchol.NotPositiveDefiniteError):
            p.factor()
        with pytest.raises(btchol.NotPositiveDefiniteError) as ei:
            p.gradient(x, b)
        assert ei.value.item == 1
    with pytest.raises(btchol.InvalidStateError, match="closed"):
        p.gradient(x, b)


# ---- 16-bit inputs -------------------------------------------------------------------------


def _bf16_bits(a):
    """bfloat16 bits (truncated float32) of a float array, as uint16."""
    return (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("B,N,n,m", [(2, 5, 3, 2), (1, 1, 2, None), (3, 4, 1, 1)])
def test_float16_upload_and_solve(B, N, n, m, dtype, layout):
    D, E, b = make_problem(B, N, n, m, seed=B + N + n)
    Dh, Eh, bh = D.astype(np.float16), E.astype(np.float16), b.astype(np.float16)
    Dw, Ew, bw = (a.astype(np.float64) for a in (Dh, Eh, bh))  # the problem actually solved
    Dl, El, bl = to_layout(layout, Dh, Eh, bh.copy())
    bl0 = bl.copy()
    with btchol.Plan(B, N, n, dtype=dtype, layout=layout, backend="cpu") as p:
        p.upload(Dl, El if N > 1 else None)
        p.factor()
        x = p.solve(bl)
        assert x is not bl and x.dtype == dtype and x.shape == bl.shape
        np.testing.assert_array_equal(bl, bl0)  # not modified
        check_solution(Dw, Ew, bw, from_layout(layout, x), dtype)
        # the same result as a solve of the widened right-hand side
        xr = p.solve(np.array(to_layout(layout, Dw, Ew, bw)[2], dtype=dtype))
        np.testing.assert_array_equal(x, xr)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bfloat16_bits_upload_and_solve(dtype):
    B, N, n, m = 2, 6, 3, 2
    D, E, b = make_problem(B, N, n, m, seed=29)
    Db, Eb, bb = _bf16_bits(D), _bf16_bits(E), _bf16_bits(b)
    Dw, Ew, bw = _from_bf16(Db), _from_bf16(Eb), _from_bf16(bb)
    with btchol.Plan(B, N, n, dtype=dtype, backend="cpu") as p:
        p.upload(Db, Eb, half_format="bf16")
        p.factor()
        x = p.solve(bb, half_format="bf16")
        assert x.dtype == dtype
        check_solution(Dw, Ew, bw, x, dtype)
        # int16 views (what torch's .view(torch.int16).numpy() gives) and the enum value work too
        p.upload(Db.view(np.int16), Eb.view(np.int16), half_format=btchol.HALF_BF16)
        p.factor()
        np.testing.assert_array_equal(p.solve(bb.view(np.int16), half_format="bfloat16"), x)
        # f16 bits in integers with half_format='f16'
        Dh, Eh, bh = D.astype(np.float16), E.astype(np.float16), b.astype(np.float16)
        p.upload(Dh.view(np.uint16), Eh.view(np.uint16), half_format="f16")
        p.factor()
        x16 = p.solve(bh.view(np.uint16), half_format="f16")
        check_solution(Dh.astype(np.float64), Eh.astype(np.float64), bh.astype(np.float64), x16, dtype)


class _FakeDeviceArray:
    """Exposes __cuda_array_interface__ for a pointer nothing dereferences (CPU plans refuse first)."""

    def __init__(self, shape, typestr, ptr=0x7F0000000000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3}


def test_device_half_arguments_checked_and_cpu_plan_refuses():
    B, N, n = 2, 3, 2
    with btchol.Plan(B, N, n, backend="cpu") as p:
        D16, E16 = _FakeDeviceArray((B, N, n, n), "<f2"), _FakeDeviceArray((B, N - 1, n, n), "<f2")
        # 16-bit device blocks reach btchol_plan_upload_device_half, which a CPU plan refuses
        with pytest.raises(btchol.NoCudaError, match="upload_device_half"):
            p.upload_device(D16, E16)
        with pytest.raises(btchol.NoCudaError, match="upload_device_half"):
            p.upload_device(_FakeDeviceArray((B, N, n, n), "<u2"), _FakeDeviceArray((B, N - 1, n, n), "<i2"),
                            half_format="bf16")
        with pytest.raises(TypeError, match="both hold 16-bit"):
            p.upload_device(D16, _FakeDeviceArray((B, N - 1, n, n), "<f8"))
        with pytest.raises(TypeError, match="half_format='bf16'"):
            p.upload_device(_FakeDeviceArray((B, N, n, n), "<u2"), E16)
        with pytest.raises(TypeError, match="bfloat16 bits"):
            p.upload_device(D16, E16, half_format="bf16")
        b16 = _FakeDeviceArray((B, N * n, 2), "<f2")
        with pytest.raises(ValueError, match="needs out="):
            p.solve_device(b16)
        with pytest.raises(TypeError, match="out has dtype"):
            p.solve_device(b16, out=_FakeDeviceArray((B, N * n, 2), "<f4"))
        with pytest.raises(ValueError, match="shape"):
            p.solve_device(b16, out=_FakeDeviceArray((B, N * n, 1), "<f8"))
        with pytest.raises(ValueError, match="only for 16-bit"):
            p.solve_device(_FakeDeviceArray((B, N * n, 2), "<f8"), out=_FakeDeviceArray((B, N * n, 2), "<f8"))
        with pytest.raises(btchol.NoCudaError, match="solve_device_half"):
            p.solve_device(b16, out=_FakeDeviceArray((B, N * n, 2), "<f8"))


@requires_cupy
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_half_upload_and_solve_cupy(dtype):
    import cupy as cp

    B, N, n, m = 3, 9, 5, 2
    D, E, b = make_problem(B, N, n, m, seed=53)
    Dh, Eh, bh = D.astype(np.float16), E.astype(np.float16), b.astype(np.float16)
    Dw, Ew, bw = (a.astype(np.float64) for a in (Dh, Eh, bh))
    with btchol.Plan(B, N, n, dtype=dtype, backend="cuda") as p:
        p.upload_device(cp.asarray(Dh), cp.asarray(Eh))
        p.factor()
        bd = cp.asarray(bh)
        out = cp.zeros(bh.shape, dtype=dtype)
        assert p.solve_device(bd, out=out) is out
        np.testing.assert_array_equal(cp.asnumpy(bd), bh)  # not modified
        check_solution(Dw, Ew, bw, cp.asnumpy(out), dtype)
        # bfloat16 bits from the device, and the host path gives the same solution
        Db, Eb, bb = _bf16_bits(D), _bf16_bits(E), _bf16_bits(b)
        p.upload_device(cp.asarray(Db), cp.asarray(Eb), half_format="bf16")
        p.factor()
        out = cp.zeros(bb.shape, dtype=dtype)
        p.solve_device(cp.asarray(bb.view(np.int16)), half_format="bf16", out=out)
        p.upload(Db, Eb, half_format="bf16")
        p.factor()
        np.testing.assert_array_equal(cp.asnumpy(out), p.solve(bb, half_format="bf16"))


def test_half_with_masks_widens_in_numpy():
    B, N, n = 4, 3, 2
    D1, E1, b = make_problem(B, N, n, 2, seed=31)
    D2, E2, _ = make_problem(B, N, n, 2, seed=32)
    mask = np.array([False, True, True, False])
    with btchol.Plan(B, N, n, backend="cpu") as p:
        p.upload(D1, E1)
        p.factor()
        D2h, E2h = D2.astype(np.float16), E2.astype(np.float16)
        p.upload(D2h, E2h, mask=mask)
        p.factor(mask=mask)
        bh = b.astype(np.float16)
        x = p.solve(bh, mask=mask)
        assert x.dtype == np.float64
        np.testing.assert_array_equal(x[~mask], bh[~mask].astype(np.float64))  # unselected: widened b
        Dw, Ew, bw = D2h.astype(np.float64), E2h.astype(np.float64), bh.astype(np.float64)
        check_solution(Dw[mask], Ew[mask], bw[mask], x[mask], np.float64)


def test_half_errors():
    B, N, n = 2, 3, 2
    D, E, b = make_problem(B, N, n, 1, seed=33)
    Dh, Eh, bh = D.astype(np.float16), E.astype(np.float16), b.astype(np.float16)
    with btchol.Plan(B, N, n, backend="cpu") as p:
        with pytest.raises(btchol.InvalidStateError):
            p.solve(bh)  # before factor
        bad = Dh.copy()
        bad[1, 2, 1, 0] = np.inf
        with pytest.raises(btchol.NonFiniteInputError):
            p.upload(bad, Eh)
        with pytest.raises(btchol.NonFiniteInputError):
            p.upload(_bf16_bits(np.where(np.isinf(bad), np.nan, D)), _bf16_bits(E), half_format="bf16")
        with pytest.raises(TypeError, match="half_format='bf16'"):
            p.upload(_bf16_bits(D), _bf16_bits(E))  # bits without a format
        with pytest.raises(TypeError, match="float16 but half_format is 'bf16'"):
            p.upload(Dh, Eh, half_format="bf16")
        with pytest.raises(TypeError, match="half_format='bf16' needs D"):
            p.upload(D, E, half_format="bf16")
        with pytest.raises(TypeError, match="both"):
            p.upload(Dh, E)
        with pytest.raises(ValueError, match="unknown half_format"):
            p.upload(Dh, Eh, half_format="fp8")
        with pytest.raises(ValueError, match="D has shape"):
            p.upload(Dh[:, :2], Eh)
        p.upload(Dh, Eh)
        p.factor()
        with pytest.raises(ValueError, match=r"b has shape"):
            p.solve(bh[:, :5])
        badb = bh.copy()
        badb[0, 1, 0] = np.nan
        with pytest.raises(btchol.NonFiniteInputError):
            p.solve(badb)
        with pytest.raises(TypeError, match="half_format='f16' needs b"):
            p.solve(b.copy(), half_format="f16")
        check_solution(Dh.astype(np.float64), Eh.astype(np.float64), bh.astype(np.float64), p.solve(bh), np.float64)


# ---- mixed precision -----------------------------------------------------------------------

EPS64 = np.finfo(np.float64).eps


def _normwise_berr(A, x, b):
    """||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), the report's measure, per column max."""
    r = b - A @ x
    return np.max(np.abs(r)) / (np.linalg.norm(A, np.inf) * np.max(np.abs(x)) + np.max(np.abs(b)))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("algorithm", ["seq", "nd"])
@pytest.mark.parametrize(
    "B,N,n,m", [(1, 1, 1, 1), (1, 1, 3, None), (2, 1, 4, 2), (3, 7, 1, 2), (3, 5, 4, 3), (2, 40, 6, 1)]
)
def test_mixed_plan_reaches_f64_accuracy(B, N, n, m, algorithm, layout):
    D, E, b = make_problem(B, N, n, m, seed=B * 7 + N + n)
    Dl, El, bl = to_layout(layout, D, E, b.copy())
    with btchol.MixedPlan(B, N, n, layout=layout, backend="cpu", algorithm=algorithm, threads=2) as p:
        assert p.last_report is None
        p.upload(Dl, El if N > 1 else None)
        p.factor()
        for rhs in (b, 3.0 * b - 1.0):  # the factor serves many solves
            xl = to_layout(layout, D, E, rhs.copy())[2]
            assert p.solve(xl) is xl
            rep = p.last_report
            assert isinstance(rep, btchol.RefineReport)
            assert rep.fell_back is False and 1 <= rep.iterations <= 6, rep
            assert 0.0 <= rep.backward_error <= 32 * EPS64, rep
            x = from_layout(layout, xl)
            check_solution(D, E, rhs, x, np.float64)
            for k in range(B):
                A = dense(D[k], E[k])
                assert _normwise_berr(A, x[k], rhs[k]) <= 64 * EPS64


def test_mixed_plan_ill_conditioned_falls_back():
    B, N, n = 2, 5, 2
    a = 1.0 - 1e-10  # rounds to 1 in float32: every D_i is singular there
    D = np.broadcast_to(np.array([[1.0, a], [a, 1.0]]), (B, N, n, n)).copy()
    E = np.full((B, N - 1, n, n), 0.005)
    b = np.random.default_rng(37).standard_normal((B, N * n, 2))
    with btchol.MixedPlan(B, N, n, backend="cpu") as p:
        x = p.factor_solve(D, E, b.copy())
        rep = p.last_report
        assert rep.fell_back is True and rep.backward_error <= 32 * EPS64, rep
        for k in range(B):
            A = dense(D[k], E[k])
            assert _normwise_berr(A, x[k], b[k]) <= 64 * EPS64
        # a plain float64 plan gives the same answer to the accuracy the conditioning allows
        with btchol.Plan(B, N, n, backend="cpu") as q:
            ref = q.factor_solve(D, E, b.copy())
        np.testing.assert_allclose(x, ref, rtol=1e-4)


def test_mixed_plan_options():
    B, N, n = 2, 6, 3
    D, E, b = make_problem(B, N, n, 2, seed=41)
    # one step, unreachable tolerance: refinement stops and the f64 factor answers
    with btchol.MixedPlan(B, N, n, backend="cpu", max_iterations=1) as p:
        p.factor_solve(D, E, b.copy())
        assert p.last_report.iterations == 1 and p.last_report.fell_back is True
        assert p.last_report.backward_error <= 32 * EPS64
    # a loose tolerance: one step is enough
    with btchol.MixedPlan(B, N, n, backend="cpu", tolerance=1e-5) as p:
        x = p.factor_solve(D, E, b.copy())
        assert p.last_report.iterations == 1 and p.last_report.fell_back is False
        assert p.last_report.backward_error <= 1e-5
        np.testing.assert_allclose(x, _dense_solve(D, E, b), rtol=1e-3, atol=1e-5)
    # diag_shift reaches the f32 factor and the residual alike
    with btchol.MixedPlan(B, N, n, backend="cpu", diag_shift=5.0) as p:
        x = p.factor_solve(_shifted(D, -5.0), E, b.copy())
        assert p.last_report.fell_back is False
        check_solution(D, E, b, x, np.float64)
    assert "MixedPlan(batch=2" in repr(p) and p.closed


def test_mixed_plan_errors():
    B, N, n = 2, 3, 2
    D, E, b = make_problem(B, N, n, 2, seed=43)
    with pytest.raises(btchol.InvalidArgumentError, match="tolerance"):
        btchol.MixedPlan(B, N, n, backend="cpu", tolerance=-1.0)
    with pytest.raises(btchol.InvalidArgumentError, match="tolerance"):
        btchol.MixedPlan(B, N, n, backend="cpu", tolerance=float("nan"))
    with pytest.raises(btchol.InvalidDimensionError, match="max_iterations"):
        btchol.MixedPlan(B, N, n, backend="cpu", max_iterations=-1)
    with pytest.raises(TypeError, match="max_iterations must be an int"):
        btchol.MixedPlan(B, N, n, backend="cpu", max_iterations=2.0)
    with pytest.raises(btchol.InvalidDimensionError):
        btchol.MixedPlan(0, N, n, backend="cpu")
    with pytest.raises(ValueError, match="backend"):
        btchol.MixedPlan(B, N, n, backend="gpu")
    with btchol.MixedPlan(B, N, n, backend="cpu") as p:
        with pytest.raises(btchol.InvalidStateError):
            p.factor()  # before upload
        with pytest.raises(btchol.InvalidStateError):
            p.solve(b.copy())  # before factor
        bad = D.copy()
        bad[0, 1, 1, 0] = np.nan
        with pytest.raises(btchol.NonFiniteInputError):
            p.upload(bad, E)
        big = E.copy()
        big[1, 0, 0, 1] = 1e39  # beyond float32
        with pytest.raises(btchol.InvalidArgumentError, match="f32"):
            p.upload(D, big)
        with pytest.raises(TypeError, match="dtype float32"):
            p.upload(D.astype(np.float32), E)
        with pytest.raises(ValueError, match="E has shape"):
            p.upload(D, E[:, :1])
        p.upload(D, E)
        p.factor()
        with pytest.raises(btchol.InvalidStateError):
            p.factor()  # twice without upload
        badb = b.copy()
        badb[1, 3, 1] = np.inf
        with pytest.raises(btchol.NonFiniteInputError):
            p.solve(badb)
        assert p.last_report is None
        with pytest.raises(ValueError, match="b has shape"):
            p.solve(np.zeros((B, 5, 2)))
        with pytest.raises(TypeError, match="never converts"):
            p.solve(b.astype(np.float32))
        x = p.solve(b.copy())
        check_solution(D, E, b, x, np.float64)
        # not positive definite even in float64
        D2 = D.copy()
        D2[1, 2, 1, 1] = -3.0
        p.upload(D2, E)
        with pytest.raises(btchol.NotPositiveDefiniteError) as ei:
            p.factor()
        assert (ei.value.item, ei.value.block, ei.value.column) == (1, 2, 1)
        with pytest.raises(btchol.InvalidStateError):
            p.solve(b.copy())
    with pytest.raises(btchol.InvalidStateError, match="closed"):
        p.upload(D, E)


def test_new_names_exported():
    for name in ("Plan", "MixedPlan", "RefineReport", "HALF_F16", "HALF_BF16"):
        assert name in btchol.__all__ and hasattr(btchol, name)
    assert (btchol.HALF_F16, btchol.HALF_BF16) == (0, 1)
    assert btchol.RefineReport(2, 1e-16, False).iterations == 2


@requires_cuda
def test_gradient_half_and_mixed_on_cuda_match_cpu():
    B, N, n, m = 2, 33, 4, 2
    D, E, b = make_problem(B, N, n, m, seed=47)
    w = np.random.default_rng(48).standard_normal(b.shape)
    out = {}
    for backend in ("cpu", "cuda"):
        with btchol.Plan(B, N, n, backend=backend, algorithm="nd") as p:
            assert p.backend == backend
            x = p.factor_solve(D, E, b.copy())
            grads = p.gradient(x, w)
            p.upload(D.astype(np.float16), E.astype(np.float16))
            p.factor()
            xh = p.solve(b.astype(np.float16))
        with btchol.MixedPlan(B, N, n, backend=backend, algorithm="nd") as mp:
            xm = mp.factor_solve(D, E, b.copy())
            rep = mp.last_report
        assert rep.fell_back is False and rep.backward_error <= 32 * EPS64, (backend, rep)
        check_solution(D, E, b, xm, np.float64)
        out[backend] = (x, *grads, xh, xm)
    for c, g in zip(out["cpu"], out["cuda"]):
        np.testing.assert_allclose(g, c, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_host_array_is_zeroed_and_page_locked_where_a_gpu_is(dtype, order):
    a = btchol.host_array((3, 5, 7), dtype, order=order)
    assert a.shape == (3, 5, 7) and a.dtype == dtype and a.flags[f"{order}_CONTIGUOUS"] and a.flags.writeable
    assert not a.any()
    assert btchol.host_array_is_page_locked(a) == btchol.cuda_available()
    assert btchol.host_array_is_page_locked(a[1:]) == btchol.cuda_available()  # views too
    assert not btchol.host_array_is_page_locked(np.zeros(3))
    a[...] = 1.5
    assert a.sum() == 1.5 * a.size
    assert btchol.host_array(0).shape == (0,)
    with pytest.raises(ValueError):
        btchol.host_array((2, -1))


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=requires_cuda)])
@pytest.mark.parametrize("B,N,n", [(1, 1, 1), (1, 37, 8), (3, 5, 13)])
def test_uploads_from_host_arrays_give_the_bits_of_numpy_arrays(backend, B, N, n):
    D, E, b = make_problem(B, N, n, 2, seed=B * 100 + N * 10 + n)
    hD, hE = btchol.host_array(D.shape), btchol.host_array(E.shape)
    hD[...], hE[...] = D, E
    with btchol.Plan(B, N, n, backend=backend) as p:
        x_numpy = p.factor_solve(D, E, b.copy())
        x_host = p.factor_solve(hD, hE, b.copy())
    np.testing.assert_array_equal(x_numpy, x_host)
    check_solution(D, E, b, x_host, np.float64)
