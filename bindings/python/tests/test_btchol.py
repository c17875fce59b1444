"""Tests of the Python binding against dense NumPy references.

CUDA tests run where btchol.cuda_available() is true; the device-pointer tests also need CuPy
(PyTorch tensors are tried too where torch is importable).
"""

import threading

import numpy as np
import pytest

import btchol

CUDA = btchol.cuda_available()
requires_cuda = pytest.mark.skipif(not CUDA, reason="no usable CUDA GPU (btchol.cuda_available() is False)")
try:
    import cupy  # noqa: F401

    HAVE_CUPY = True
except Exception:  # ImportError, or CuPy failing to find CUDA
    HAVE_CUPY = False
requires_cupy = pytest.mark.skipif(not (CUDA and HAVE_CUPY), reason="needs a CUDA GPU and CuPy")

BACKENDS = ["cpu"] + (["cuda"] if CUDA else [])
# (algorithm, backend): the CUDA backend runs nested dissection only (test_cuda_refuses_sequential).
ENGINES = [("seq", "cpu"), ("nd", "cpu")] + ([("nd", "cuda")] if CUDA else [])
TOL = {np.float64: 1e-9, np.float32: 2e-3}
EPS = {np.float64: np.finfo(np.float64).eps, np.float32: np.finfo(np.float32).eps}


# ---- helpers ---------------------------------------------------------------------------------


def make_problem(B, N, n, m, dtype=np.float64, seed=0):
    """Random diagonally dominant SPD block-tridiagonal batch in the C convention:
    D (B, N, n, n) symmetric, E (B, N-1, n, n), b (B, N*n, m) (or (B, N*n) when m is None)."""
    rng = np.random.default_rng(seed)
    E = rng.uniform(-1, 1, (B, N - 1, n, n)) / n
    S = rng.uniform(-1, 1, (B, N, n, n)) / n
    D = (S + S.transpose(0, 1, 3, 2)) / 2 + 4.0 * np.eye(n)
    shape = (B, N * n) if m is None else (B, N * n, m)
    b = rng.standard_normal(shape)
    return D.astype(dtype), E.astype(dtype), b.astype(dtype)


def dense(D, E):
    """The dense matrix of one item from its C-convention blocks (lower triangle of D only)."""
    N, n = D.shape[0], D.shape[1]
    A = np.zeros((N * n, N * n))
    for i in range(N):
        L = np.tril(D[i].astype(np.float64))
        A[i * n : (i + 1) * n, i * n : (i + 1) * n] = L + np.tril(L, -1).T
    for i in range(N - 1):
        A[(i + 1) * n : (i + 2) * n, i * n : (i + 1) * n] = E[i]
        A[i * n : (i + 1) * n, (i + 1) * n : (i + 2) * n] = E[i].T
    return A


def to_layout(layout, D, E, b):
    """C-convention arrays in the plan layout's convention ('F': (n, n, N, B) and (N*n, m, B))."""
    if layout == "C":
        return D, E, b
    Df = np.asfortranarray(D.transpose(2, 3, 1, 0))
    Ef = np.asfortranarray(E.transpose(2, 3, 1, 0))
    bf = np.asfortranarray(b.T if b.ndim == 2 else b.transpose(1, 2, 0))
    return Df, Ef, bf


def from_layout(layout, x):
    if layout == "C":
        return x
    return x.T if x.ndim == 2 else x.transpose(2, 0, 1)


def check_solution(D, E, b0, x, dtype):
    """x (C convention) against numpy.linalg.solve, plus the normwise backward error."""
    for k in range(D.shape[0]):
        A = dense(D[k], E[k])
        rhs = b0[k].astype(np.float64)
        ref = np.linalg.solve(A, rhs)
        xk = x[k].astype(np.float64)
        assert np.linalg.norm(xk - ref) <= TOL[dtype] * np.linalg.norm(ref), f"item {k}"
        r = A @ xk - rhs
        berr = np.linalg.norm(r) / (np.linalg.norm(A, 2) * np.linalg.norm(xk) + np.linalg.norm(rhs))
        assert berr <= 50 * A.shape[0] * EPS[dtype], f"item {k}: backward error {berr}"


def lapack_info(A):
    """LAPACK potrf INFO from leading minors: the order of the first one that is not PD."""
    for k in range(1, A.shape[0] + 1):
        try:
            np.linalg.cholesky(A[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


# ---- module ----------------------------------------------------------------------------------


def test_module_functions():
    assert isinstance(btchol.version(), str) and btchol.version().count(".") == 2
    major, minor, patch = (int(v) for v in btchol.version().split("."))
    assert btchol.version_number() == major * 1000000 + minor * 1000 + patch
    assert isinstance(btchol.cuda_available(), bool)
    assert btchol.status_string(6) == "not positive definite"
    assert btchol.status_string(12345) == "unknown status"
    assert btchol.library_path


# ---- correctness -----------------------------------------------------------------------------

SHAPES = [  # (B, N, n, m); m None = 2-D right-hand side
    (3, 5, 4, 2),
    (2, 6, 3, None),
    (1, 1, 3, 1),
    (2, 1, 4, 3),
    (3, 7, 1, 2),
    (1, 1, 1, None),
    (2, 9, 5, 4),
]


@pytest.mark.parametrize("algorithm,backend", ENGINES)
@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("B,N,n,m", SHAPES)
def test_solve_matches_dense(B, N, n, m, dtype, layout, algorithm, backend):
    D, E, b = make_problem(B, N, n, m, dtype, seed=B * 100 + N * 10 + n)
    with btchol.Plan(B, N, n, dtype=dtype, layout=layout, backend=backend, algorithm=algorithm) as plan:
        assert plan.backend == backend and plan.algorithm == algorithm
        Dl, El, bl = to_layout(layout, D, E, b.copy())
        plan.upload(Dl, El if N > 1 else None)
        plan.factor()
        assert (plan.item_status() == 0).all()
        out = plan.solve(bl)
        assert out is bl
        check_solution(D, E, b, from_layout(layout, bl), dtype)
        # logdet against slogdet
        ld = plan.logdet()
        assert ld.shape == (B,) and ld.dtype == np.float64
        for k in range(B):
            sign, ref = np.linalg.slogdet(dense(D[k], E[k]))
            assert sign == 1
            assert abs(ld[k] - ref) <= (1e-10 if dtype == np.float64 else 1e-4) * max(1.0, abs(ref))
        # the factor serves many solves
        b2 = 2.0 * b - 1.0
        x2 = plan.solve(to_layout(layout, D, E, b2.copy())[2])
        check_solution(D, E, b2, from_layout(layout, x2), dtype)


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_factor_solve(dtype, layout):
    B, N, n, m = 3, 6, 3, 2
    D, E, b = make_problem(B, N, n, m, dtype, seed=7)
    Dl, El, bl = to_layout(layout, D, E, b.copy())
    with btchol.Plan(B, N, n, dtype=dtype, layout=layout, backend="cpu") as plan:
        assert plan.factor_solve(Dl, El, bl) is bl
        check_solution(D, E, b, from_layout(layout, bl), dtype)
        assert np.isfinite(plan.logdet()).all()


def test_upper_triangle_of_D_is_ignored():
    D, E, b = make_problem(2, 4, 3, 1, seed=3)
    garbage = D.copy()
    iu = np.triu_indices(3, 1)
    garbage[:, :, iu[0], iu[1]] = 1e3
    with btchol.Plan(2, 4, 3, backend="cpu") as plan:
        x = plan.factor_solve(garbage, E, b.copy())
    check_solution(D, E, b, x, np.float64)


def test_upload_copies_noncontiguous_and_solve_uses_strides():
    B, N, n, m = 2, 5, 3, 2
    D, E, b = make_problem(B, N, n, m, seed=11)
    # D and E as non-contiguous views: upload copies them into the plan's layout.
    Dbig = np.zeros((B, N, n, 2 * n))
    Dbig[..., ::2] = D
    with btchol.Plan(B, N, n, backend="cpu") as plan:
        plan.upload(Dbig[..., ::2], E)
        plan.factor()
        # A column slice of a wider array: row-major with ld = m + 3, solved in place.
        big = np.full((B, N * n, m + 3), 7.0)
        big[:, :, :m] = b
        plan.solve(big[:, :, :m])
        check_solution(D, E, b, big[:, :, :m], np.float64)
        assert (big[:, :, m:] == 7.0).all()
        # Column-major items inside a C-order batch: (B, N*n, m) with strides (R*m, 1, R).
        bc = np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1)
        assert bc.strides[1] == bc.itemsize
        plan.solve(bc)
        check_solution(D, E, b, bc, np.float64)
        # Not addressable in place: raise rather than copy.
        with pytest.raises(ValueError, match="in place"):
            plan.solve(np.asfortranarray(b.copy()))
        with pytest.raises(ValueError, match="negative strides|in place"):
            plan.solve(b.copy()[:, ::-1, :])


def test_fortran_layout_accepts_c_ordered_input_with_a_copy():
    B, N, n = 2, 3, 2
    D, E, b = make_problem(B, N, n, None, seed=5)
    Df, Ef, bf = to_layout("F", D, E, b.copy())
    with btchol.Plan(B, N, n, layout="F", backend="cpu") as plan:
        plan.upload(np.ascontiguousarray(Df), np.ascontiguousarray(Ef))  # right shape, C order
        plan.factor()
        plan.solve(bf)
    check_solution(D, E, b, bf.T, np.float64)


# ---- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_not_positive_definite_is_located(backend):
    B, N, n, m = 3, 5, 3, 2
    item, block, column = 1, 2, 1
    D, E, b = make_problem(B, N, n, m, seed=21)
    D[item, block, column, column] = -10.0
    expected_info = lapack_info(dense(D[item], E[item]))
    assert expected_info == block * n + column + 1
    # The CUDA backend runs nested dissection, which names the pivot that fails first in its
    # elimination order; the sequential algorithm gives exactly LAPACK's INFO.
    algorithm = "seq" if backend == "cpu" else "nd"
    with btchol.Plan(B, N, n, backend=backend, algorithm=algorithm) as plan:
        plan.upload(D, E)
        assert (plan.item_status() == btchol.ITEM_PENDING).all()
        with pytest.raises(btchol.NotPositiveDefiniteError) as ei:
            plan.factor()
        e = ei.value
        if algorithm == "seq":
            assert (e.item, e.block, e.column, e.info) == (item, block, column, expected_info)
        else:
            assert e.item == item and 0 <= e.block < N and 0 <= e.column < n
            expected_info = e.info
        assert isinstance(e, np.linalg.LinAlgError) and isinstance(e, btchol.BTCholError)
        assert e.status_name == "BTCHOL_STATUS_NOT_POSITIVE_DEFINITE" and e.function == "btchol_plan_factor"
        assert "not positive definite" in e.message and f"item {item}" in e.message
        assert list(plan.item_status()) == [0, expected_info, 0]
        # The other items solve; the failed one is left unchanged.
        x = b.copy()
        with pytest.raises(btchol.NotPositiveDefiniteError) as ei:
            plan.solve(x)
        assert (ei.value.item, ei.value.info) == (item, expected_info)
        assert np.array_equal(x[item], b[item])
        keep = [0, 2]
        check_solution(D[keep], E[keep], b[keep], x[keep], np.float64)
        ld = plan.logdet()
        assert np.isnan(ld[item]) and np.isfinite(ld[keep]).all()
        # The plan is usable again after a fresh upload.
        D[item, block, column, column] = 4.0
        plan.upload(D, E)
        plan.factor()
        x = plan.solve(b.copy())
        check_solution(D, E, b, x, np.float64)


def test_not_positive_definite_nested_dissection():
    B, N, n = 2, 8, 2
    D, E, b = make_problem(B, N, n, 1, seed=4)
    D[1, 5, 0, 0] = -3.0
    with btchol.Plan(B, N, n, backend="cpu", algorithm="nd") as plan:
        with pytest.raises(btchol.NotPositiveDefiniteError) as ei:
            plan.factor_solve(D, E, b.copy())
        e = ei.value
        assert e.item == 1 and 0 <= e.block < N and 0 <= e.column < n
        st = plan.item_status()
        assert st[0] == 0 and st[1] == e.info > 0


def test_nan_and_inf_rejected_and_plan_still_usable():
    B, N, n = 2, 4, 3
    D, E, b = make_problem(B, N, n, 2, seed=9)
    with btchol.Plan(B, N, n, backend="cpu") as plan:
        bad = D.copy()
        bad[1, 2, 2, 0] = np.nan
        with pytest.raises(btchol.NonFiniteInputError) as ei:
            plan.upload(bad, E)
        assert "item 1" in ei.value.message and "block 2" in ei.value.message
        bad = E.copy()
        bad[0, 1, 0, 2] = np.inf
        with pytest.raises(btchol.NonFiniteInputError):
            plan.upload(D, bad)
        # nothing was uploaded: factor is out of order
        with pytest.raises(btchol.InvalidStateError):
            plan.factor()
        plan.upload(D, E)
        plan.factor()
        x = b.copy()
        x[0, 3, 1] = np.nan
        with pytest.raises(btchol.NonFiniteInputError):
            plan.solve(x)
        assert np.isnan(x[0, 3, 1]) and np.array_equal(x[1], b[1])  # nothing written
        x = plan.solve(b.copy())
        check_solution(D, E, b, x, np.float64)


def test_wrong_shapes_and_dtypes_rejected_clearly():
    B, N, n = 2, 3, 2
    D, E, b = make_problem(B, N, n, 1, seed=1)
    with btchol.Plan(B, N, n, backend="cpu") as plan:
        with pytest.raises(TypeError, match="dtype float32.*float64"):
            plan.upload(D.astype(np.float32), E)
        with pytest.raises(ValueError, match=r"D has shape \(2, 3, 2\).*expected \(2, 3, 2, 2\)"):
            plan.upload(D[..., 0], E)
        with pytest.raises(ValueError, match="E has shape"):
            plan.upload(D, E[:, :1])
        with pytest.raises(ValueError, match="E is required"):
            plan.upload(D, None)
        plan.upload(D, E)
        plan.factor()
        with pytest.raises(ValueError, match=r"b has shape \(2, 5, 1\).*B=2, N\*n=6"):
            plan.solve(np.zeros((2, 5, 1)))
        with pytest.raises(ValueError, match="expected"):
            plan.solve(np.zeros(6))
        with pytest.raises(TypeError, match="never converts"):
            plan.solve(b.astype(np.float32))
        with pytest.raises(TypeError, match="NumPy array"):
            plan.solve(b.tolist())
        ro = b.copy()
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            plan.solve(ro)
        x = plan.solve(b.copy())  # still fine after all of that
        check_solution(D, E, b, x, np.float64)


def test_plan_arguments_rejected():
    with pytest.raises(btchol.InvalidDimensionError) as ei:
        btchol.Plan(0, 3, 2)
    assert "batch" in ei.value.message and ei.value.function == "btchol_plan_create"
    with pytest.raises(btchol.InvalidDimensionError):
        btchol.Plan(1, 3, 5000)
    with pytest.raises(ValueError, match="backend"):
        btchol.Plan(1, 3, 2, backend="gpu")
    with pytest.raises(ValueError, match="algorithm"):
        btchol.Plan(1, 3, 2, algorithm="fast")
    with pytest.raises(ValueError, match="layout"):
        btchol.Plan(1, 3, 2, layout="K")
    with pytest.raises(TypeError, match="dtype"):
        btchol.Plan(1, 3, 2, dtype=np.int32)
    with pytest.raises(TypeError, match="N must be an int"):
        btchol.Plan(1, 3.0, 2)
    with pytest.raises(btchol.InvalidArgumentError, match="threads"):
        btchol.Plan(1, 3, 2, threads=-1)


def test_call_order_and_lifetime():
    D, E, b = make_problem(1, 3, 2, 1, seed=2)
    plan = btchol.Plan(1, 3, 2, backend="cpu", threads=1)
    assert plan.workspace_bytes > 0 and plan.rows == 6 and "Plan(batch=1" in repr(plan)
    with pytest.raises(btchol.InvalidStateError):
        plan.solve(b.copy())  # before factor
    with pytest.raises(btchol.InvalidStateError):
        plan.logdet()
    plan.upload(D, E)
    plan.factor()
    with pytest.raises(btchol.InvalidStateError) as ei:
        plan.factor()  # twice without upload
    assert ei.value.message
    plan.close()
    plan.close()  # idempotent
    assert plan.closed
    with pytest.raises(btchol.InvalidStateError, match="closed"):
        plan.factor()
    with btchol.Plan(1, 3, 2, backend="cpu") as p2:
        pass
    assert p2.closed


def test_plans_in_threads():
    results = {}

    def work(k):
        D, E, b = make_problem(2, 6, 3, 2, seed=k)
        with btchol.Plan(2, 6, 3, backend="cpu", threads=1) as plan:
            results[k] = (D, E, b, plan.factor_solve(D, E, b.copy()))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for D, E, b, x in results.values():
        check_solution(D, E, b, x, np.float64)


# ---- CUDA ------------------------------------------------------------------------------------


@pytest.mark.skipif(CUDA, reason="a CUDA GPU is usable here")
def test_cuda_backend_unavailable_without_gpu():
    with pytest.raises(btchol.NoCudaError) as ei:
        btchol.Plan(1, 3, 2, backend="cuda")
    assert ei.value.message
    with btchol.Plan(1, 3, 2, backend="auto") as plan:
        assert plan.backend == "cpu"


@requires_cuda
def test_auto_picks_a_valid_target_and_solves():
    # 'auto' ranks the four targets by the calibrated cost model (the choice depends on the
    # machine); whatever it picks must be a real target and must solve correctly.
    targets = {("cpu", "seq"), ("cpu", "nd"), ("cuda", "nd"), ("cuda", "seq")}
    with btchol.Plan(1, 1024, 16) as plan:  # too large for the dense reference: choice only
        assert (plan.backend, plan.algorithm) in targets
    for B, N, n in [(1, 4, 2), (64, 12, 8), (1, 97, 16)]:
        D, E, b = make_problem(B, N, n, 2, np.float64, seed=B + N + n)
        with btchol.Plan(B, N, n) as plan:
            assert (plan.backend, plan.algorithm) in targets
            check_solution(D, E, b, plan.factor_solve(D, E, b.copy()), np.float64)
    with btchol.Plan(1, 1024, 16, algorithm="seq", backend="cpu") as plan:
        assert (plan.backend, plan.algorithm) == ("cpu", "seq")


@requires_cuda
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cuda_sequential_per_item(dtype):
    # the per-item sequential GPU algorithm (batches of short systems), block sizes up to 32
    D, E, b = make_problem(5, 7, 9, 3, dtype, seed=77)
    with btchol.Plan(5, 7, 9, dtype=dtype, backend="cuda", algorithm="seq") as plan:
        assert (plan.backend, plan.algorithm) == ("cuda", "seq")
        check_solution(D, E, b, plan.factor_solve(D, E, b.copy()), dtype)


@requires_cuda
def test_cuda_sequential_refuses_large_blocks():
    with pytest.raises(btchol.UnsupportedError, match="nested dissection"):
        btchol.Plan(1, 4, 33, backend="cuda", algorithm="seq")


@requires_cupy
@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_arrays_cupy(dtype, layout):
    import cupy as cp

    B, N, n, m = 3, 16, 4, 3
    D, E, b = make_problem(B, N, n, m, dtype, seed=31)
    Dl, El, bl = to_layout(layout, D, E, b.copy())
    order = "C" if layout == "C" else "F"
    with btchol.Plan(B, N, n, dtype=dtype, layout=layout, backend="cuda") as plan:
        plan.upload_device(cp.asarray(Dl, order=order), cp.asarray(El, order=order))
        plan.factor()
        xd = cp.asarray(bl, order=order)
        assert plan.solve_device(xd) is xd
        check_solution(D, E, b, from_layout(layout, cp.asnumpy(xd)), dtype)
        # a user stream
        s = cp.cuda.Stream(non_blocking=True)
        plan.set_stream(s)
        with s:
            xd = cp.asarray(bl, order=order)
        plan.solve_device(xd)
        check_solution(D, E, b, from_layout(layout, cp.asnumpy(xd)), dtype)
        plan.set_stream(None)
        # device arrays are checked like host ones
        with pytest.raises(TypeError, match="dtype"):
            plan.solve_device(xd.astype(np.float32 if dtype == np.float64 else np.float64))
        with pytest.raises(ValueError, match="shape"):
            plan.solve_device(cp.zeros((1, 2, 3), dtype=dtype))
        with pytest.raises(TypeError, match="solve_device"):
            plan.solve(xd)
        # factor and solve in one call: the same solution; a second call needs an upload
        plan.upload_device(cp.asarray(Dl, order=order), cp.asarray(El, order=order))
        xd = cp.asarray(bl, order=order)
        assert plan.factor_solve_device(xd) is xd
        check_solution(D, E, b, from_layout(layout, cp.asnumpy(xd)), dtype)
        with pytest.raises(btchol.InvalidStateError):
            plan.factor_solve_device(xd)
        with pytest.raises(ValueError, match="contiguous"):
            plan.upload_device(cp.asarray(Dl, order="F" if order == "C" else "C"), cp.asarray(El, order=order))


@requires_cupy
def test_device_inputs_from_a_busy_legacy_stream_cupy():
    # CuPy's arrays come from the legacy default stream (CUDA Array Interface 'stream': 1), and a
    # plan without set_stream runs on a non-blocking stream of its own: the binding must wait for
    # the producer. Milliseconds of queued work ahead of the inputs make a missing wait read them
    # before they are written (this raced under load: a NaN read from an unwritten E, 2026-11-26).
    import cupy as cp

    B, N, n, m = 2, 40, 6, 2
    D, E, b = make_problem(B, N, n, m, seed=57)
    with btchol.Plan(B, N, n, backend="cuda") as plan:
        for _ in range(3):
            busy = cp.ones((2048, 2048))
            for _ in range(12):
                busy = busy @ busy * (1.0 / 2048)  # stays all ones
            zero = busy[0, 0] - 1.0  # 0.0, known only once the products have run
            plan.upload_device(cp.asarray(D) + zero, cp.asarray(E) + zero)
            plan.factor()
            busy = cp.ones((2048, 2048))
            for _ in range(12):
                busy = busy @ busy * (1.0 / 2048)
            xd = cp.asarray(b) + (busy[0, 0] - 1.0)
            plan.solve_device(xd)
            check_solution(D, E, b, cp.asnumpy(xd), np.float64)


@requires_cupy
def test_device_arrays_rejected_by_cpu_plan():
    import cupy as cp

    D, E, b = make_problem(1, 3, 2, 1)
    with btchol.Plan(1, 3, 2, backend="cpu") as plan:
        with pytest.raises(btchol.NoCudaError):
            plan.upload_device(cp.asarray(D), cp.asarray(E))


@requires_cuda
def test_device_arrays_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    B, N, n, m = 2, 8, 3, 2
    D, E, b = make_problem(B, N, n, m, seed=41)
    with btchol.Plan(B, N, n, backend="cuda") as plan:
        plan.upload_device(torch.from_numpy(D).cuda(), torch.from_numpy(E).cuda())
        plan.factor()
        xt = torch.from_numpy(b.copy()).cuda()
        plan.solve_device(xt)
        check_solution(D, E, b, xt.cpu().numpy(), np.float64)


@requires_cupy
def test_device_not_positive_definite_and_larger_problem_cupy():
    import cupy as cp

    B, N, n, m = 2, 300, 8, 2
    D, E, b = make_problem(B, N, n, m, seed=51)
    with btchol.Plan(B, N, n, backend="cuda") as plan:
        plan.upload_device(cp.asarray(D), cp.asarray(E))
        plan.factor()
        xd = cp.asarray(b)
        plan.solve_device(xd)
        check_solution(D, E, b, cp.asnumpy(xd), np.float64)
        D[1, 5, 2, 2] = -10.0
        plan.upload_device(cp.asarray(D), cp.asarray(E))
        with pytest.raises(btchol.NotPositiveDefiniteError) as ei:
            plan.factor()
        assert ei.value.item == 1
        assert plan.item_status()[0] == 0 and plan.item_status()[1] > 0
        xd = cp.asarray(b)
        with pytest.raises(btchol.NotPositiveDefiniteError):
            plan.solve_device(xd)
        plan.synchronize()
        x = cp.asnumpy(xd)
        assert np.array_equal(x[1], b[1])
        check_solution(D[:1], E[:1], b[:1], x[:1], np.float64)
