"""btchol for Python: Cholesky factor and solve of batches of symmetric positive-definite
block-tridiagonal systems, on the CPU or an NVIDIA GPU, through btchol's C API (ctypes + NumPy).

    import numpy as np, btchol

    with btchol.Plan(B, N, n) as plan:          # float64, C layout, best backend
        plan.upload(D, E)                       # D: (B, N, n, n), E: (B, N-1, n, n)
        plan.factor()                           # NotPositiveDefiniteError(item, block, column)
        plan.solve(b)                           # b: (B, N*n) or (B, N*n, m), overwritten by x
        plan.logdet()                           # (B,) float64

Array conventions follow the plan's ``layout``:

* ``'C'`` (row-major blocks, NumPy's convention): ``D`` has shape (B, N, n, n) with
  ``D[b, i]`` the diagonal block D_i of item b; ``E`` has shape (B, N-1, n, n) with
  ``E[b, i]`` = E_i = Psi[i+1, i] (the block below the diagonal); right-hand sides have shape
  (B, N*n) or (B, N*n, m).
* ``'F'`` (column-major blocks, the Fortran/MATLAB/Julia convention): ``D`` has shape
  (n, n, N, B), ``E`` (n, n, N-1, B), right-hand sides (N*n, B) or (N*n, m, B).

Only the lower triangle of each D_i is read. ``upload`` copies its inputs into the plan, so it
accepts any array of the right shape and dtype and makes it contiguous in the plan's layout
(a NumPy copy only when it is not already). ``solve`` works in place and never copies: the
array must be writable, of the plan's dtype, and strided so that the C API can address it
(contiguous in either order per item, or a view with a unit stride along rows or columns).

Beyond factor and solve:

* ``Plan.gradient(x, grad_x)``: the backward pass of ``solve`` (dL/db and dL/dPsi's blocks),
  for reverse-mode differentiation (e.g. inside a ``torch.autograd.Function``).
* 16-bit inputs: ``Plan.upload`` and ``Plan.solve`` accept ``np.float16`` arrays (IEEE binary16),
  and, with ``half_format="bf16"``, ``uint16``/``int16`` arrays holding bfloat16 bits; they are
  widened exactly to the plan's dtype.
* ``host_array(shape, dtype)``: a zeroed NumPy array in page-locked memory where a GPU is
  present (ordinary memory elsewhere), from which a GPU plan's ``upload`` copies at the bus's
  rate (measured on an H200: 51-54 GB/s, against 35-47 GB/s from large ordinary NumPy arrays
  and 7-12 GB/s below 4 MB).
  Allocate it once and fill it in place for each new matrix.
* ``MixedPlan``: float64 problems factored in float32 and solved to float64 accuracy by
  iterative refinement (falling back to a float64 factor when refinement does not converge);
  ``last_report`` (a ``RefineReport``) says how each solve went.
"""

from __future__ import annotations

import ctypes
import re
import threading
from typing import NamedTuple

import numpy as np

from . import _capi
from ._errors import (
    BackendUnavailableError,
    BTCholError,
    BufferTooSmallError,
    CudaError,
    InternalError,
    InvalidArgumentError,
    InvalidDimensionError,
    InvalidStateError,
    NoCudaError,
    NonFiniteInputError,
    NotPositiveDefiniteError,
    NullPointerError,
    OutOfMemoryError,
    UnsupportedError,
    check as _check,
    error_for as _error_for,
    last_message as _last_message,
)

__version__ = "0.1.0"

__all__ = [
    "Plan",
    "MixedPlan",
    "RefineReport",
    "HALF_F16",
    "HALF_BF16",
    "version",
    "version_number",
    "cuda_available",
    "host_array",
    "host_array_is_page_locked",
    "status_string",
    "library_path",
    "BTCholError",
    "InvalidArgumentError",
    "NullPointerError",
    "InvalidDimensionError",
    "BufferTooSmallError",
    "NonFiniteInputError",
    "NotPositiveDefiniteError",
    "InvalidStateError",
    "BackendUnavailableError",
    "NoCudaError",
    "CudaError",
    "OutOfMemoryError",
    "InternalError",
    "UnsupportedError",
    "ITEM_PENDING",
]

#: ``item_status()`` value of an item not factored since the last upload.
ITEM_PENDING = _capi.ITEM_PENDING

#: Path of the loaded libbtchol.
library_path = _capi.lib_path

_DTYPES = {np.dtype(np.float32): _capi.DTYPE_F32, np.dtype(np.float64): _capi.DTYPE_F64}
_LAYOUTS = {"C": _capi.LAYOUT_ROW_MAJOR, "F": _capi.LAYOUT_COL_MAJOR}
_BACKENDS = {"auto": _capi.BACKEND_AUTO, "cpu": _capi.BACKEND_CPU, "cuda": _capi.BACKEND_CUDA}
_BACKEND_NAMES = {v: k for k, v in _BACKENDS.items()}
_ALGORITHMS = {
    "auto": _capi.ALGORITHM_AUTO,
    "seq": _capi.ALGORITHM_SEQUENTIAL,
    "nd": _capi.ALGORITHM_NESTED_DISSECTION,
}
_ALGORITHM_NAMES = {v: k for k, v in _ALGORITHMS.items()}

#: ``half_format`` values (btchol_half_format): IEEE binary16 and bfloat16.
HALF_F16 = _capi.HALF_F16
HALF_BF16 = _capi.HALF_BF16
_HALF_FORMATS = {
    "f16": _capi.HALF_F16,
    "float16": _capi.HALF_F16,
    "bf16": _capi.HALF_BF16,
    "bfloat16": _capi.HALF_BF16,
    _capi.HALF_F16: _capi.HALF_F16,
    _capi.HALF_BF16: _capi.HALF_BF16,
}
_HALF_NAMES = {_capi.HALF_F16: "f16", _capi.HALF_BF16: "bf16"}


def version() -> str:
    """The library's version string, e.g. ``"0.1.0"``."""
    return _capi.version().decode()


def version_number() -> int:
    """The library's version as MAJOR*1000000 + MINOR*1000 + PATCH."""
    return int(_capi.version_number())


def cuda_available() -> bool:
    """True when the NVIDIA driver loads and reports a device (CUDA plans can be created)."""
    return bool(_capi.cuda_available())


class _HostAllocation:
    """Memory from btchol_host_alloc, freed when the last array that views it is gone."""

    def __init__(self, nbytes):
        ptr, locked = ctypes.c_void_p(), ctypes.c_int32(0)
        _check(_capi.host_alloc(nbytes, ctypes.byref(ptr), ctypes.byref(locked)), "btchol_host_alloc")
        self.ptr, self.page_locked = ptr.value, bool(locked.value)

    def __del__(self):
        if getattr(self, "ptr", None) and _capi is not None:
            _capi.host_free(self.ptr)
            self.ptr = None


def host_array(shape, dtype=np.float64, order: str = "C") -> np.ndarray:
    """A zeroed array of ``shape`` and ``dtype`` in memory from ``btchol_host_alloc``: page-locked
    where a GPU is present, so that ``Plan.upload`` (and ``factor_solve``'s blocks) copy from it
    at the bus's rate instead of through a CPU copy of ordinary memory (H200: 51-54 GB/s, against
    35-47 GB/s through btchol's threaded staging of large arrays and 7-12 GB/s below 4 MB; f64
    n=32, N=1024 upload 0.35 instead of 0.88 ms). Ordinary memory where no GPU is (``host_array_is_page_locked`` tells). The memory is freed when the array and
    every view of it are gone. Page-locked memory cannot be paged out: allocate the arrays a
    solve loop reuses once and fill them in place (``D[...] = new_blocks``)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    count = int(np.prod(shape, dtype=np.int64))
    owner = _HostAllocation(max(1, count * dtype.itemsize))
    buf = (ctypes.c_byte * max(1, count * dtype.itemsize)).from_address(owner.ptr)
    buf._btchol_owner = owner  # the array's base is buf, buf keeps the allocation
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape, order=order)


def host_array_is_page_locked(a: np.ndarray) -> bool:
    """Whether ``a`` (or the array it views) came from ``host_array`` with page-locked memory."""
    base = a
    while base is not None and not hasattr(base, "_btchol_owner"):
        base = getattr(base, "base", None)
    return base is not None and base._btchol_owner.page_locked


def status_string(status: int) -> str:
    """The library's short description of a status value."""
    return _capi.status_string(int(status)).decode()


def _choice(value, table, what):
    key = value.lower() if isinstance(value, str) else value
    if what == "layout" and isinstance(value, str):
        key = value.upper()
    if key not in table:
        raise ValueError(f"unknown {what} {value!r}; expected one of {sorted(table)}")
    return table[key]


class _DeviceArray:
    """The fields of a ``__cuda_array_interface__`` that btchol needs."""

    def __init__(self, obj, name):
        try:
            cai = obj.__cuda_array_interface__
        except AttributeError:
            raise TypeError(
                f"{name} must expose __cuda_array_interface__ (a CuPy array, a PyTorch CUDA tensor, ...); "
                f"got {type(obj).__name__}"
            ) from None
        self.obj = obj
        self.shape = tuple(int(s) for s in cai["shape"])
        self.dtype = np.dtype(cai["typestr"])
        self.ptr, self.readonly = int(cai["data"][0]), bool(cai["data"][1])
        if cai.get("mask") is not None:
            raise ValueError(f"{name}: masked device arrays are not supported")
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], self.dtype.itemsize
            for s in reversed(self.shape):
                strides.append(step)
                step *= s
            strides = strides[::-1]
        self.strides = tuple(int(s) for s in strides)
        self.stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None


_libcuda = None


def _cu_stream_synchronize(stream: int) -> None:
    """cuStreamSynchronize through the driver (loaded only when a producer stream needs it)."""
    global _libcuda
    if _libcuda is None:
        _libcuda = ctypes.CDLL("libcuda.so.1")
        _libcuda.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        _libcuda.cuStreamSynchronize.restype = ctypes.c_int
    rc = _libcuda.cuStreamSynchronize(ctypes.c_void_p(stream))
    if rc != 0:
        raise CudaError(f"cuStreamSynchronize on the producer's stream {stream:#x} failed with CUresult {rc}")


def _stream_handle(stream) -> int:
    """A CUDA stream handle from None, an int, a CuPy stream (``.ptr``) or a PyTorch stream
    (``.cuda_stream``)."""
    if stream is None:
        return 0
    for attr in ("ptr", "cuda_stream"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


def _half_format_arg(half_format):
    """A btchol_half_format from None, 'f16'/'float16', 'bf16'/'bfloat16', HALF_F16 or HALF_BF16."""
    if half_format is None:
        return None
    key = half_format.lower() if isinstance(half_format, str) else half_format
    if isinstance(key, bool) or not isinstance(key, (str, int, np.integer)) or key not in _HALF_FORMATS:
        raise ValueError(f"unknown half_format {half_format!r}; expected 'f16', 'bf16', HALF_F16 or HALF_BF16")
    return _HALF_FORMATS[key]


def _half_kind(a, fmt, name):
    """The btchol_half_format of the elements of ``a`` (float16: F16; uint16/int16 bits: ``fmt``),
    or None when ``a`` is not 16-bit data and no ``half_format`` was given."""
    dt = a.dtype
    if dt == np.float16:
        if fmt == _capi.HALF_BF16:
            raise TypeError(
                f"{name} has dtype float16 but half_format is 'bf16': pass bfloat16 bits as uint16 "
                f"(or int16) arrays, e.g. torch_tensor.view(torch.int16).numpy()"
            )
        return _capi.HALF_F16
    if dt == np.uint16 or dt == np.int16:
        if fmt is None:
            raise TypeError(
                f"{name} has dtype {dt}: pass half_format='bf16' when it holds bfloat16 bits "
                f"(or 'f16' for IEEE binary16 bits)"
            )
        return fmt
    if fmt is not None:
        raise TypeError(
            f"half_format={_HALF_NAMES[fmt]!r} needs {name} as float16 or as uint16/int16 holding the bits, "
            f"got dtype {dt}"
        )
    return None


def _check_same_kind(kinds):
    """TypeError unless the (name, half format or None) pairs of D and E agree on 16-bit or not."""
    if len({k for _, k in kinds}) > 1:
        desc = ", ".join(f"{name}: {'16-bit' if k is not None else 'not 16-bit'}" for name, k in kinds)
        raise TypeError(f"D and E must both hold 16-bit floats or both the plan's dtype ({desc})")


def _widen(bits, fmt, dtype):
    """16-bit values (an array of uint16 bits) widened exactly to ``dtype`` (same shape/order)."""
    bits = bits.view(np.uint16)
    if fmt == _capi.HALF_F16:
        return bits.view(np.float16).astype(dtype)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(dtype)


def _check_ints(**values):
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")


def _partition_code(partition):
    """``btchol_plan_options.partition_chunk`` for Plan's ``partition`` keyword."""
    if isinstance(partition, str):
        codes = {"auto": _capi.PARTITION_AUTO, "none": _capi.PARTITION_NONE}
        if partition.lower() not in codes:
            raise ValueError(f"partition must be 'auto', 'none' or a chunk length >= 1, got {partition!r}")
        return codes[partition.lower()]
    if isinstance(partition, bool) or not isinstance(partition, (int, np.integer)) or partition < 1:
        raise ValueError(f"partition must be 'auto', 'none' or a chunk length >= 1, got {partition!r}")
    return int(partition)


def _make_options(
    layout, backend, algorithm, threads, max_nrhs, diag_shift, pivot_threshold, pivot_boost, deterministic,
    partition="auto",
):
    """A ``btchol_plan_options`` from Plan's keyword arguments (shared by Plan and MixedPlan)."""
    opts = _capi.Options()
    _check(_capi.plan_options_init(ctypes.byref(opts)), "btchol_plan_options_init")
    opts.layout = _choice(layout, _LAYOUTS, "layout")
    opts.backend = _choice(backend, _BACKENDS, "backend")
    opts.algorithm = _choice(algorithm, _ALGORITHMS, "algorithm")
    opts.threads = int(threads)
    opts.max_nrhs = int(max_nrhs)
    opts.diag_shift = float(diag_shift)
    opts.pivot_threshold = float(pivot_threshold)
    opts.pivot_boost = float(pivot_boost)
    opts.deterministic = 1 if deterministic else 0
    opts.partition_chunk = _partition_code(partition)
    return opts


class _PlanBase:
    """What Plan and MixedPlan share: lifetime, shapes and the addressing of host arrays."""

    _handle = None
    _keep = ()

    # ---- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Destroys the plan (idempotent). Later calls raise InvalidStateError."""
        handle, self._handle = getattr(self, "_handle", None), None
        self._keep = ()
        if handle is not None:
            self._destroy(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _h(self):
        if self._handle is None:
            raise InvalidStateError("the plan is closed", type(self).__name__)
        return self._handle

    @property
    def rows(self) -> int:
        """N*n, the order of each system."""
        return self.N * self.n

    # ---- shapes ---------------------------------------------------------------------------

    def _block_shape(self, count):
        n, B = self.n, self.batch
        return (B, count, n, n) if self.layout == "C" else (n, n, count, B)

    def _host_blocks(self, D, E, dtype=None):
        """D and E as arrays contiguous in the plan's layout (copied only when needed), of the
        plan's dtype (or ``dtype``)."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        out = []
        for name, a, count in (("D", D, self.N), ("E", E, self.N - 1)):
            if a is None and count == 0:
                out.append(None)
                continue
            if a is None:
                raise ValueError(f"E is required when N > 1 (expected shape {self._block_shape(count)})")
            if hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
                raise TypeError(f"{name} is a device array: use upload_device for device memory")
            a = np.asarray(a)
            if a.dtype != dtype:
                raise TypeError(
                    f"{name} has dtype {a.dtype}, but the plan's dtype is {dtype}: "
                    f"convert it with {name}.astype(np.{dtype.name})"
                )
            want = self._block_shape(count)
            if a.shape != want:
                conv = "(B, N, n, n)" if self.layout == "C" else "(n, n, N, B)"
                raise ValueError(f"{name} has shape {a.shape}, expected {want} (layout {self.layout!r}: {conv})")
            if count == 0:
                out.append(None)
                continue
            a = np.ascontiguousarray(a) if self.layout == "C" else np.asfortranarray(a)
            out.append(a)
        return out

    def _rhs_args(self, shape, strides, itemsize, name):
        """(nrhs, layout, ld, item_stride) addressing an array of this shape and byte strides in
        place, or ValueError when the C API cannot address it without a copy."""
        R, B = self.rows, self.batch
        if self.layout == "C":
            conv = "(B, N*n) or (B, N*n, m)"
            if len(shape) == 2:
                shape, strides = shape + (1,), strides + (itemsize,)
        else:
            conv = "(N*n, B) or (N*n, m, B)"
            if len(shape) == 2:
                shape, strides = (shape[0], 1, shape[1]), (strides[0], itemsize, strides[1])
            if len(shape) == 3:  # to (B, R, m)
                shape, strides = (shape[2], shape[0], shape[1]), (strides[2], strides[0], strides[1])
        if len(shape) != 3 or shape[0] != B or shape[1] != R or shape[2] < 1:
            raise ValueError(f"{name} has shape {tuple(shape)} (as (B, N*n, m)), expected {conv} with B={B}, N*n={R}")
        m = shape[2]
        if any(s % itemsize for s in strides):
            raise ValueError(f"{name}'s strides {strides} are not multiples of its element size")
        sB, sR, sM = (s // itemsize for s in strides)
        # Strides of length-1 axes do not matter; normalise them.
        if B == 1:
            sB = 0
        if m == 1:
            sM = R if sR == 1 else 1
        if R == 1:
            sR = 1 if sM != 1 else m
        if min(sB, sR, sM) < 0:
            raise ValueError(f"{name} has negative strides {strides}: pass a copy (np.ascontiguousarray)")
        if sM == 1 and sR >= m:
            layout, ld = _capi.LAYOUT_ROW_MAJOR, sR
        elif sR == 1 and sM >= R:
            layout, ld = _capi.LAYOUT_COL_MAJOR, sM
        else:
            raise ValueError(
                f"{name} (strides {strides}) is not contiguous along the rows or the columns of each item, "
                "so it cannot be solved in place; pass a contiguous array (np.ascontiguousarray)"
            )
        if B > 1 and sB == 0:
            raise ValueError(f"{name} has a zero item stride: its batch items overlap")
        # item_stride 0 means "dense default" to the C API; B == 1 needs no stride.
        return m, layout, ld, (sB if B > 1 else 0)

    def _host_rhs(self, b):
        if not isinstance(b, np.ndarray):
            if hasattr(b, "__cuda_array_interface__"):
                raise TypeError("b is a device array: use solve_device for device memory")
            raise TypeError(
                f"b must be a NumPy array (solved in place), got {type(b).__name__}; "
                f"create it with np.asarray(b, dtype=np.{self.dtype.name})"
            )
        if b.dtype != self.dtype:
            raise TypeError(
                f"b has dtype {b.dtype}, but the plan's dtype is {self.dtype}; solve works in place and "
                f"never converts: pass b.astype(np.{self.dtype.name}) and read the result from it"
            )
        if not b.flags.writeable:
            raise ValueError("b is read-only; solve overwrites it with the solution (pass a writable copy)")
        if not b.flags.aligned:
            raise ValueError("b is not aligned for its dtype; pass an aligned copy")
        return self._rhs_args(b.shape, b.strides, b.itemsize, "b")



class Plan(_PlanBase):
    """A btchol plan for B systems of N diagonal blocks of size n, with all of its workspace.

    Parameters
    ----------
    batch, N, n : int
        Batch size B, number of diagonal blocks N and block size n (all >= 1).
    dtype : np.float64 (default) or np.float32
    layout : 'C' (default) or 'F'
        Storage of each block and the array conventions of the whole plan (module docstring).
    backend : 'auto' (default), 'cpu' or 'cuda'
    algorithm : 'auto' (default), 'seq' (sequential block recursion; on the GPU one item per
        thread block, n <= 32) or 'nd' (nested dissection)
        With 'auto' the plan picks the fastest target by the calibrated cost model (``btchol
        calibrate``; the GPU only where one is usable); ``backend`` / ``algorithm`` tell which.
    threads : int
        CPU threads of the plan's pool; 0 (default) means all cores.
    max_nrhs : int
        GPU only: right-hand sides solved per pass; 0 (default) means 16.
    diag_shift : float
        Static regularisation sigma: the plan factors Psi + sigma*I (your arrays are not
        modified). 0.0 (default) is off.
    pivot_threshold, pivot_boost : float
        "Boost small pivots": with ``pivot_boost`` > 0, a pivot d <= ``pivot_threshold`` is
        replaced by ``pivot_boost`` and counted (``boosted_pivots()``) instead of failing. Both
        backends. 0.0 (default) is off.
    deterministic : bool
        Bitwise-identical results for identical inputs, options and thread count on the same
        machine. Both backends are deterministic today, so it costs nothing.
    partition : 'auto' (default), 'none' or int k >= 1
        Nested dissection's ordering: the plan's choice, plain nested dissection, or chunks of k
        blocks eliminated in order, then their separators (partitioned nested dissection: fewer
        bytes moved, one GPU launch for all chunk steps). Ignored by 'seq'.

    A plan is not thread-safe (the library reports overlapping use as InvalidStateError); use one
    plan per thread. Close it with ``close()`` or a ``with`` block; ``__del__`` closes it too.
    """

    _destroy = staticmethod(_capi.plan_destroy)  # kept reachable for __del__ at interpreter exit

    def __init__(
        self,
        batch: int,
        N: int,
        n: int,
        dtype=np.float64,
        layout: str = "C",
        backend: str = "auto",
        algorithm: str = "auto",
        threads: int = 0,
        max_nrhs: int = 0,
        diag_shift: float = 0.0,
        pivot_threshold: float = 0.0,
        pivot_boost: float = 0.0,
        deterministic: bool = False,
        partition="auto",
    ):
        self._handle = None
        self._keep = ()
        self._stream_obj = None
        self._own_stream = True  # (until set_stream: the plan's own non-blocking stream)
        dt = np.dtype(dtype)
        if dt not in _DTYPES:
            raise TypeError(f"dtype must be float32 or float64, got {dt}")
        _check_ints(batch=batch, N=N, n=n, threads=threads, max_nrhs=max_nrhs)
        self.batch, self.N, self.n = int(batch), int(N), int(n)
        self.dtype = dt
        opts = _make_options(
            layout, backend, algorithm, threads, max_nrhs, diag_shift, pivot_threshold, pivot_boost, deterministic,
            partition,
        )
        self.layout = layout.upper()
        handle = ctypes.c_void_p()
        _check(
            _capi.plan_create(self.batch, self.N, self.n, _DTYPES[dt], ctypes.byref(opts), ctypes.byref(handle)),
            "btchol_plan_create",
        )
        self._handle = handle

    def __repr__(self):
        state = "closed" if self.closed else f"backend={self.backend!r}, algorithm={self.algorithm!r}"
        return f"Plan(batch={self.batch}, N={self.N}, n={self.n}, dtype={self.dtype.name}, layout={self.layout!r}, {state})"

    # ---- queries --------------------------------------------------------------------------

    @property
    def backend(self) -> str:
        """'cpu' or 'cuda': where the plan runs (never 'auto')."""
        out = ctypes.c_int32()
        _check(_capi.plan_backend(self._h(), ctypes.byref(out)), "btchol_plan_backend")
        return _BACKEND_NAMES[out.value]

    @property
    def algorithm(self) -> str:
        """'seq' or 'nd': the factorization the plan runs (never 'auto')."""
        out = ctypes.c_int32()
        _check(_capi.plan_algorithm(self._h(), ctypes.byref(out)), "btchol_plan_algorithm")
        return _ALGORITHM_NAMES[out.value]

    @property
    def workspace_bytes(self) -> int:
        """Bytes of workspace the plan holds (host and device)."""
        out = ctypes.c_int64()
        _check(_capi.plan_workspace_bytes(self._h(), ctypes.byref(out)), "btchol_plan_workspace_bytes")
        return out.value

    # ---- host data path -------------------------------------------------------------------

    def _mask(self, mask):
        """A batch mask as B contiguous uint8 of 0/1 (or None)."""
        if mask is None:
            return None
        m = np.asarray(mask)
        if m.shape != (self.batch,) or m.dtype != np.bool_:
            raise ValueError(f"mask must be a bool array of shape ({self.batch},), got {m.dtype} {m.shape}")
        return np.ascontiguousarray(m, dtype=np.uint8)

    def _half_blocks(self, D, E, half_format):
        """(format, D bits, E bits) as uint16 arrays contiguous in the plan's layout when D and E
        hold 16-bit floats, else None."""
        fmt = _half_format_arg(half_format)
        if self.N == 1 and E is not None and np.shape(E) == self._block_shape(0):
            E = None  # N == 1: nothing to read, whatever its dtype
        kinds, arrays = [], []
        for name, a in (("D", D), ("E", E)):
            if a is None or (hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray)):
                arrays.append(a)  # _host_blocks reports these
                continue
            a = np.asarray(a)
            kinds.append((name, _half_kind(a, fmt, name)))
            arrays.append(a)
        if all(k is None for _, k in kinds):
            return None
        _check_same_kind(kinds)
        views = [a.view(np.uint16) if isinstance(a, np.ndarray) else a for a in arrays]
        Dh, Eh = self._host_blocks(*views, dtype=np.uint16)
        return kinds[0][1], Dh, Eh

    def upload(self, D, E=None, mask=None, half_format=None) -> None:
        """Copies the batch's blocks into the plan (NaN/Inf are rejected with NonFiniteInputError
        and nothing is copied). ``E`` may be None when N == 1. With ``mask`` (bool, shape (B,)),
        only the selected items are read and copied; the plan keeps the others' factors (both
        backends).

        16-bit input: ``D`` and ``E`` may be ``np.float16`` arrays (IEEE binary16), or, with
        ``half_format='bf16'``, ``uint16``/``int16`` arrays holding bfloat16 bits (NumPy has no
        bfloat16 dtype; from PyTorch, ``t.view(torch.int16).numpy()``, or ``.cpu()`` first for a
        CUDA tensor). ``half_format='f16'`` reads 16-bit integer arrays as binary16 bits. The values
        are widened exactly to the plan's dtype (``btchol_plan_upload_half``; with ``mask``, by
        NumPy) and checked for NaN/Inf like any upload."""
        h = self._h()
        half = self._half_blocks(D, E, half_format)
        if half is None:
            D, E = self._host_blocks(D, E)
        m = self._mask(mask)
        self._keep = ()
        if half is not None:
            fmt, Dh, Eh = half
            if m is None:
                eh = None if Eh is None else Eh.ctypes.data
                _check(_capi.plan_upload_half(h, fmt, Dh.ctypes.data, eh), "btchol_plan_upload_half")
                return
            # No masked 16-bit upload in the C API: widen here (exact) and upload the selection.
            D, E = _widen(Dh, fmt, self.dtype), (None if Eh is None else _widen(Eh, fmt, self.dtype))
        e = None if E is None else E.ctypes.data
        if m is None:
            _check(_capi.plan_upload(h, D.ctypes.data, e), "btchol_plan_upload")
        else:
            _check(_capi.plan_upload_masked(h, m.ctypes.data, D.ctypes.data, e), "btchol_plan_upload_masked")

    def _npd(self, function, failed_item=None, info=None):
        """NotPositiveDefiniteError for the failing call (message read first)."""
        message = _last_message()
        if failed_item is None:
            st = self.item_status()
            bad = np.flatnonzero(st > 0)
            failed_item, info = (int(bad[0]), int(st[bad[0]])) if bad.size else (-1, 0)
        return NotPositiveDefiniteError(message, function, item=failed_item, info=info, n=self.n)

    def _factor_status(self, status, function, failed, info):
        self._keep = ()
        if status == _capi.STATUS_NOT_POSITIVE_DEFINITE:
            raise self._npd(function, failed.value, info.value)
        _check(status, function)

    def factor(self, mask=None) -> None:
        """Factors every item (Psi = L L^T). Raises NotPositiveDefiniteError (with ``item``,
        ``block``, ``column``, ``info``) naming the first failing item; the other items are still
        factored and can be solved (``item_status()`` tells which). With ``mask`` (bool, shape
        (B,)), only the selected items, each uploaded since its last factorization, are factored;
        the others keep their factor (CPU plans)."""
        failed, info = ctypes.c_int64(-1), ctypes.c_int64(0)
        m = self._mask(mask)
        if m is None:
            status = _capi.plan_factor(self._h(), ctypes.byref(failed), ctypes.byref(info))
            self._factor_status(status, "btchol_plan_factor", failed, info)
        else:
            status = _capi.plan_factor_masked(self._h(), m.ctypes.data, ctypes.byref(failed), ctypes.byref(info))
            self._factor_status(status, "btchol_plan_factor_masked", failed, info)

    def item_status(self) -> np.ndarray:
        """int64 array (B,): 0 factored, k > 0 LAPACK INFO (pivot of row k-1 failed),
        ITEM_PENDING (-1) not factored since the last upload."""
        out = np.empty(self.batch, dtype=np.int64)
        _check(_capi.plan_item_status(self._h(), out.ctypes.data), "btchol_plan_item_status")
        return out

    def boosted_pivots(self) -> np.ndarray:
        """int64 array (B,): pivots the last factorization of each item boosted (``pivot_boost``);
        all zero when boosting is off."""
        out = np.empty(self.batch, dtype=np.int64)
        _check(_capi.plan_boosted_pivots(self._h(), out.ctypes.data), "btchol_plan_boosted_pivots")
        return out

    def logdet(self) -> np.ndarray:
        """float64 array (B,) of log det Psi per item (NaN where the factorization failed)."""
        out = np.empty(self.batch, dtype=np.float64)
        _check(_capi.plan_logdet(self._h(), out.ctypes.data), "btchol_plan_logdet")
        return out

    def solve(self, b: np.ndarray, mask=None, half_format=None) -> np.ndarray:
        """Solves Psi x = b in place and returns ``b`` (now x). ``b``: shape (B, N*n) or
        (B, N*n, m) for layout 'C', (N*n, B) or (N*n, m, B) for 'F'; the plan's dtype; writable;
        never copied. Items whose factorization failed are left unchanged and
        NotPositiveDefiniteError is raised after the others are solved. With ``mask`` (bool,
        shape (B,)), only the selected items are solved; the others are neither read nor
        written (CPU plans).

        16-bit right-hand sides: a ``np.float16`` ``b`` (or, with ``half_format='bf16'``, a
        ``uint16``/``int16`` array of bfloat16 bits; ``'f16'`` for binary16 bits in integers) is
        not modified: it is widened exactly and the solution is returned as a **new** array of the
        plan's dtype and the same shape (``btchol_plan_solve_half``; with ``mask``, the unselected
        items of the result hold the widened ``b``)."""
        if half_format is not None or (isinstance(b, np.ndarray) and b.dtype == np.float16):
            return self._solve_half(b, mask, half_format)
        h = self._h()
        m, layout, ld, stride = self._host_rhs(b)
        mk = self._mask(mask)
        if mk is None:
            status, function = _capi.plan_solve(h, b.ctypes.data, m, layout, ld, stride), "btchol_plan_solve"
        else:
            status = _capi.plan_solve_masked(h, mk.ctypes.data, b.ctypes.data, m, layout, ld, stride)
            function = "btchol_plan_solve_masked"
        if status == _capi.STATUS_NOT_POSITIVE_DEFINITE:
            if mk is None:
                raise self._npd(function)
            st = self.item_status()
            k = int(np.flatnonzero((st > 0) & (mk == 1))[0])
            raise self._npd(function, k, int(st[k]))
        _check(status, function)
        return b

    def _solve_half(self, b, mask, half_format):
        h = self._h()
        fmt = _half_format_arg(half_format)
        if hasattr(b, "__cuda_array_interface__") and not isinstance(b, np.ndarray):
            raise TypeError("b is a device array: 16-bit right-hand sides are read from host memory")
        a = np.asarray(b)
        kind = _half_kind(a, fmt, "b")
        order = "C" if self.layout == "C" else "F"
        # A contiguous copy in the plan's order (16-bit: cheap), so that the result, allocated
        # in the same order, has the same strides in elements.
        bits = np.require(a.view(np.uint16), requirements=[order, "A"])
        m, layout, ld, stride = self._rhs_args(bits.shape, bits.strides, bits.itemsize, "b")
        mk = self._mask(mask)
        if mk is not None:  # no masked 16-bit solve in the C API: widen here (exact)
            return self.solve(np.require(_widen(bits, kind, self.dtype), requirements=[order, "A", "W"]), mask=mask)
        x = np.empty(bits.shape, dtype=self.dtype, order=order)
        status = _capi.plan_solve_half(h, kind, bits.ctypes.data, m, layout, ld, stride, x.ctypes.data)
        if status == _capi.STATUS_NOT_POSITIVE_DEFINITE:
            raise self._npd("btchol_plan_solve_half")
        _check(status, "btchol_plan_solve_half")
        return x

    def gradient(self, x, grad_x):
        """The backward pass of ``solve``, with the current factor: returns
        ``(grad_b, grad_D, grad_E)`` as new arrays of the plan's dtype; the inputs are not
        modified.

        ``x`` is the solution of the forward solve (``Psi x = b``) and ``grad_x`` = dL/dx, both of
        the plan's dtype and shaped like ``solve``'s ``b`` ((B, N*n) or (B, N*n, m) for layout
        'C'; (N*n, B) or (N*n, m, B) for 'F'). With lambda = Psi^-1 grad_x:

        * ``grad_b`` = lambda = dL/db, shaped like ``x``;
        * ``grad_D`` (B, N, n, n) and ``grad_E`` (B, N-1, n, n) (layout 'F': (n, n, N, B) and
          (n, n, N-1, B)) are the diagonal and sub-diagonal blocks of the symmetric matrix
          G = -(lambda x^T + x lambda^T)/2, summed over right-hand sides (``grad_D`` has both
          triangles). dL = <G, dPsi> for symmetric perturbations, so for the arrays passed to
          ``upload`` (of which only the lower triangle of each D_i is read)::

              dL/dE[b, i, r, c] = 2 * grad_E[b, i, r, c]
              dL/dD[b, i, r, c] = 2 * grad_D[b, i, r, c]   (r > c)
              dL/dD[b, i, r, r] =     grad_D[b, i, r, r]
              dL/dD[b, i, r, c] = 0                        (r < c: not read)

          i.e. ``gD = 2*np.tril(grad_D, -1) + grad_D * np.eye(n)`` and ``gE = 2*grad_E``.

        ``grad_E`` has shape (B, 0, n, n) when N == 1. Items whose factorization failed raise
        NotPositiveDefiniteError (InvalidStateError before ``factor``). With ``diag_shift``, the
        gradient is that of the shifted matrix the plan factored.

        Wrapping it for PyTorch (CPU tensors; ``.cpu()``/``.cuda()`` around it for GPU ones)::

            class BTCholSolve(torch.autograd.Function):
                @staticmethod
                def forward(ctx, D, E, b):             # (B,N,n,n), (B,N-1,n,n), (B,N*n,m)
                    B, N, n = D.shape[:3]
                    plan = btchol.Plan(B, N, n, dtype=np.float64)
                    plan.upload(D.detach().numpy(), E.detach().numpy())
                    plan.factor()
                    x = plan.solve(b.detach().numpy().copy())
                    ctx.plan, ctx.x = plan, x
                    return torch.from_numpy(x)

                @staticmethod
                def backward(ctx, grad_x):
                    gb, gD, gE = ctx.plan.gradient(ctx.x, grad_x.detach().numpy())
                    n = gD.shape[-1]
                    gD = 2 * np.tril(gD, -1) + gD * np.eye(n)   # only D's lower triangle is read
                    return torch.from_numpy(gD), torch.from_numpy(2 * gE), torch.from_numpy(gb)

            x = BTCholSolve.apply(D, E, b)   # D's upper triangle gets zero gradient

        (For a symmetric parametrisation, e.g. D = (S + S^T)/2, autograd applies the chain rule
        through that construction as usual.)
        """
        h = self._h()
        order = "C" if self.layout == "C" else "F"
        arrays = []
        for name, a in (("x", x), ("grad_x", grad_x)):
            if hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
                raise TypeError(f"{name} is a device array: gradient reads host memory")
            a = np.asarray(a)
            if a.dtype != self.dtype:
                raise TypeError(
                    f"{name} has dtype {a.dtype}, but the plan's dtype is {self.dtype}: "
                    f"convert it with {name}.astype(np.{self.dtype.name})"
                )
            arrays.append(a)
        if arrays[0].shape != arrays[1].shape:
            raise ValueError(f"x has shape {arrays[0].shape} but grad_x has shape {arrays[1].shape}: they must match")
        # Copies in the plan's order: grad_b is written by the library, and x then has the same
        # strides (the C API takes one shape for both).
        xc = np.array(arrays[0], order=order)
        gb = np.array(arrays[1], order=order)
        m, layout, ld, stride = self._rhs_args(gb.shape, gb.strides, gb.itemsize, "x")
        gD = np.empty(self._block_shape(self.N), dtype=self.dtype, order=order)
        gE = np.empty(self._block_shape(self.N - 1), dtype=self.dtype, order=order)
        status = _capi.plan_gradient(
            h,
            xc.ctypes.data,
            gb.ctypes.data,
            m,
            layout,
            ld,
            stride,
            gD.ctypes.data,
            gE.ctypes.data if self.N > 1 else None,
        )
        if status == _capi.STATUS_NOT_POSITIVE_DEFINITE:
            raise self._npd("btchol_plan_gradient")
        _check(status, "btchol_plan_gradient")
        return gb, gD, gE

    def factor_solve(self, D, E, b: np.ndarray) -> np.ndarray:
        """``upload(D, E)``, ``factor()`` and ``solve(b)`` in one C call; returns ``b`` (now x)."""
        h = self._h()
        m, layout, ld, stride = self._host_rhs(b)
        D, E = self._host_blocks(D, E)
        failed, info = ctypes.c_int64(-1), ctypes.c_int64(0)
        status = _capi.plan_factor_solve(
            h,
            D.ctypes.data,
            None if E is None else E.ctypes.data,
            b.ctypes.data,
            m,
            layout,
            ld,
            stride,
            ctypes.byref(failed),
            ctypes.byref(info),
        )
        self._factor_status(status, "btchol_plan_factor_solve", failed, info)
        return b

    # ---- device data path (CUDA plans) ----------------------------------------------------

    def set_stream(self, stream) -> None:
        """Runs the plan's GPU work on ``stream``: None (the legacy default stream), a raw
        ``cudaStream_t`` int, a CuPy stream or a PyTorch stream. The plan keeps a reference to
        the stream object; the stream must belong to device 0. CPU plans accept only None."""
        handle = _stream_handle(stream)
        _check(_capi.plan_set_stream(self._h(), handle or None), "btchol_plan_set_stream")
        self._stream_obj = stream
        self._own_stream = False

    def synchronize(self) -> None:
        """Waits for the plan's queued GPU work (reports earlier asynchronous GPU errors)."""
        _check(_capi.plan_synchronize(self._h()), "btchol_plan_synchronize")
        self._keep = ()

    def _consume(self, arr: _DeviceArray) -> None:
        """Orders the producer's work before ours (__cuda_array_interface__ v3 'stream')."""
        s = arr.stream
        if s is None:
            return
        ours = _stream_handle(self._stream_obj)
        # Same stream: stream order suffices. (Until set_stream, a CUDA plan runs on a non-blocking
        # stream of its own, ordered after no other stream, the legacy default one included.)
        if not self._own_stream and ((s == 1 and ours == 0) or s == ours):
            return
        _cu_stream_synchronize(s)

    def upload_device(self, D, E=None, half_format=None) -> None:
        """Like ``upload`` from GPU memory (device 0): ``D`` and ``E`` expose
        ``__cuda_array_interface__`` (CuPy, PyTorch, Numba), with the plan's dtype, the shapes of
        ``upload``, and contiguous in the plan's layout (C order for 'C', Fortran order for 'F';
        device arrays are never copied). The copy runs in order on the plan's stream; the plan
        keeps references to ``D`` and ``E`` until the next factor or synchronize. Elements are not
        checked for NaN/Inf.

        16-bit blocks (both ``D`` and ``E``): float16 arrays, or with ``half_format='bf16'``
        uint16/int16 arrays holding bfloat16 bits (``torch_tensor.view(torch.int16)``: PyTorch
        does not export bfloat16 through ``__cuda_array_interface__``) are widened exactly to the
        plan's dtype on the device, checked for NaN/Inf there (``btchol_plan_upload_device_half``)."""
        h = self._h()
        fmt = _half_format_arg(half_format)
        arrays, kinds = [], []
        for name, a, count in (("D", D, self.N), ("E", E, self.N - 1)):
            if count == 0 and a is None:
                arrays.append(None)
                continue
            if a is None:
                raise ValueError(f"E is required when N > 1 (expected shape {self._block_shape(count)})")
            d = _DeviceArray(a, name)
            want = self._block_shape(count)
            if count == 0 and d.shape == want:
                arrays.append(None)  # N == 1: nothing to read, whatever its dtype
                continue
            kind = _half_kind(d, fmt, name)
            if kind is None and d.dtype != self.dtype:
                raise TypeError(f"{name} has dtype {d.dtype}, but the plan's dtype is {self.dtype}")
            kinds.append((name, kind))
            if d.shape != want:
                raise ValueError(f"{name} has shape {d.shape}, expected {want} (layout {self.layout!r})")
            if not _is_contiguous(d.shape, d.strides, d.dtype.itemsize, self.layout):
                order = "C" if self.layout == "C" else "Fortran"
                raise ValueError(
                    f"{name} (strides {d.strides}) is not {order}-contiguous as layout {self.layout!r} requires; "
                    f"make a contiguous copy on the device first"
                )
            if d.ptr % d.dtype.itemsize:
                raise ValueError(f"{name}'s device pointer is not aligned for {d.dtype}")
            arrays.append(d)
        _check_same_kind(kinds)
        for d in arrays:
            if d is not None:
                self._consume(d)
        Dd, Ed = arrays
        Eptr = None if Ed is None else Ed.ptr
        kind = kinds[0][1] if kinds else None
        if kind is None:
            _check(_capi.plan_upload_device(h, Dd.ptr, Eptr), "btchol_plan_upload_device")
        else:
            _check(_capi.plan_upload_device_half(h, kind, Dd.ptr, Eptr), "btchol_plan_upload_device_half")
        self._keep = (D, E)

    def factor_solve_device(self, b):
        """``factor()`` then ``solve_device(b)`` as one call on the GPU: one launch sequence and
        one wait (``btchol_plan_factor_solve_device``; with the sequential algorithm on large
        float64 batches the factor does the forward substitution as it goes). ``b``: a writable
        device array of the plan's
        dtype, solved in place and returned. Raises as ``factor`` (the other items are solved; a
        failed item's ``b`` is left unchanged) and as ``solve_device`` (a NaN/Inf in ``b``: the
        factor stands and ``b`` is not written)."""
        h = self._h()
        d = _DeviceArray(b, "b")
        if d.dtype != self.dtype:
            raise TypeError(f"b has dtype {d.dtype}, but the plan's dtype is {self.dtype}")
        if d.readonly:
            raise ValueError("b is read-only; factor_solve_device overwrites it with the solution")
        if d.ptr % d.dtype.itemsize:
            raise ValueError(f"b's device pointer is not aligned for {d.dtype}")
        m, layout, ld, stride = self._rhs_args(d.shape, d.strides, d.dtype.itemsize, "b")
        self._consume(d)
        failed, info = ctypes.c_int64(-1), ctypes.c_int64(0)
        status = _capi.plan_factor_solve_device(
            h, d.ptr, m, layout, ld, stride, ctypes.byref(failed), ctypes.byref(info)
        )
        self._factor_status(status, "btchol_plan_factor_solve_device", failed, info)
        return b

    def solve_device(self, b, sync: bool = True, half_format=None, out=None):
        """Like ``solve`` for a writable device array exposing ``__cuda_array_interface__``
        (shape and strides as for ``solve``; never copied). The solve runs on the plan's stream
        and the call returns when it is complete (the library reads the device-side NaN/Inf check
        of ``b`` back after the solve), so ``b`` can be used on any stream afterwards; ``sync`` is
        kept for compatibility (``True`` also waits for any other work queued on the plan).
        Returns ``b``.

        16-bit right-hand sides (float16, or uint16/int16 bits with ``half_format``) are widened on
        the device and not modified: the solution goes to ``out``, a writable device array of the
        plan's dtype with ``b``'s shape and element strides, which is returned
        (``btchol_plan_solve_device_half``)."""
        h = self._h()
        d = _DeviceArray(b, "b")
        kind = _half_kind(d, _half_format_arg(half_format), "b")
        if kind is None and d.dtype != self.dtype:
            raise TypeError(f"b has dtype {d.dtype}, but the plan's dtype is {self.dtype}")
        if kind is None and out is not None:
            raise ValueError("out is only for 16-bit right-hand sides (b itself receives the solution)")
        if kind is None and d.readonly:
            raise ValueError("b is read-only; solve_device overwrites it with the solution")
        if d.ptr % d.dtype.itemsize:
            raise ValueError(f"b's device pointer is not aligned for {d.dtype}")
        m, layout, ld, stride = self._rhs_args(d.shape, d.strides, d.dtype.itemsize, "b")
        self._consume(d)
        if kind is None:
            status, fn, result = _capi.plan_solve_device(h, d.ptr, m, layout, ld, stride), "btchol_plan_solve_device", b
        else:
            if out is None:
                raise ValueError("a 16-bit b needs out=: a device array of the plan's dtype for the solution")
            x = _DeviceArray(out, "out")
            if x.dtype != self.dtype:
                raise TypeError(f"out has dtype {x.dtype}, but the plan's dtype is {self.dtype}")
            if x.readonly:
                raise ValueError("out is read-only")
            xs = tuple(s // x.dtype.itemsize for s in x.strides)
            if x.shape != d.shape or xs != tuple(s // d.dtype.itemsize for s in d.strides) or any(
                s % x.dtype.itemsize for s in x.strides
            ):
                raise ValueError(
                    f"out (shape {x.shape}, strides {x.strides}) must have b's shape {d.shape} and element strides"
                )
            if x.ptr % x.dtype.itemsize:
                raise ValueError(f"out's device pointer is not aligned for {x.dtype}")
            self._consume(x)
            status = _capi.plan_solve_device_half(h, kind, d.ptr, m, layout, ld, stride, x.ptr)
            fn, result = "btchol_plan_solve_device_half", out
        if status == _capi.STATUS_NOT_POSITIVE_DEFINITE:
            raise self._npd(fn)
        _check(status, fn)
        if sync:
            self.synchronize()
        return result


class RefineReport(NamedTuple):
    """What the last ``MixedPlan.solve`` did (the largest values over items and right-hand
    sides)."""

    #: Refinement steps taken (one float32 solve and one float64 residual each); 0 when the
    #: float64 fallback factor solved directly (the float32 factorization had failed).
    iterations: int
    #: Normwise backward error of the returned solution, computed in float64:
    #: ||b - Psi x||_inf / (||Psi||_inf ||x||_inf + ||b||_inf).
    backward_error: float
    #: True when refinement did not reach the tolerance (or the float32 factor failed) and the
    #: solution comes from a float64 factor of the same matrix.
    fell_back: bool


_NPD_MESSAGE = re.compile(r"item (\d+) is not positive definite: pivot (\d+) of diagonal block (\d+)")


class MixedPlan(_PlanBase):
    """A mixed-precision plan: float64 blocks and right-hand sides, a float32 factor (half the
    memory traffic of float64), float64 accuracy by iterative refinement; when refinement does not
    converge (roughly cond(Psi) > 1e7) or the float32 factorization fails, the plan falls back to
    a float64 factor of the same matrix and says so in ``last_report``.

    Parameters
    ----------
    batch, N, n, layout, backend, algorithm, threads, max_nrhs, diag_shift, pivot_threshold,
    pivot_boost, deterministic, partition
        As for ``Plan`` (they apply to the float32 factor and to the float64 fallback); there is
        no ``dtype``: inputs and results are float64.
    max_iterations : int
        Refinement steps per solve at most; 0 (default) means 10.
    tolerance : float
        Normwise backward error a solve must reach (``RefineReport.backward_error``); 0.0
        (default) means 32 * eps(float64) ~ 7.1e-15. Finite and >= 0.

    Methods: ``upload(D, E)`` (float64, the shapes of ``Plan.upload``; entries beyond the float32
    range raise InvalidArgumentError), ``factor()``, ``solve(b)`` (in place, float64, the shapes
    and strides of ``Plan.solve``; returns ``b``), ``factor_solve(D, E, b)``, ``close()`` and
    ``with`` blocks. ``last_report`` is a ``RefineReport`` after each successful solve (None
    before the first). Not thread-safe, like ``Plan``.
    """

    _destroy = staticmethod(_capi.mixed_plan_destroy)  # kept reachable for __del__ at interpreter exit

    def __init__(
        self,
        batch: int,
        N: int,
        n: int,
        layout: str = "C",
        backend: str = "auto",
        algorithm: str = "auto",
        threads: int = 0,
        max_nrhs: int = 0,
        diag_shift: float = 0.0,
        pivot_threshold: float = 0.0,
        pivot_boost: float = 0.0,
        deterministic: bool = False,
        partition="auto",
        max_iterations: int = 0,
        tolerance: float = 0.0,
    ):
        self._handle = None
        self._keep = ()
        self.last_report = None
        _check_ints(batch=batch, N=N, n=n, threads=threads, max_nrhs=max_nrhs, max_iterations=max_iterations)
        self.batch, self.N, self.n = int(batch), int(N), int(n)
        self.dtype = np.dtype(np.float64)
        opts = _make_options(
            layout, backend, algorithm, threads, max_nrhs, diag_shift, pivot_threshold, pivot_boost, deterministic,
            partition,
        )
        self.layout = layout.upper()
        self.max_iterations, self.tolerance = int(max_iterations), float(tolerance)
        handle = ctypes.c_void_p()
        _check(
            _capi.mixed_plan_create(
                self.batch,
                self.N,
                self.n,
                ctypes.byref(opts),
                self.max_iterations,
                self.tolerance,
                ctypes.byref(handle),
            ),
            "btchol_mixed_plan_create",
        )
        self._handle = handle

    def __repr__(self):
        state = "closed" if self.closed else f"max_iterations={self.max_iterations}, tolerance={self.tolerance}"
        return f"MixedPlan(batch={self.batch}, N={self.N}, n={self.n}, layout={self.layout!r}, {state})"

    def upload(self, D, E=None) -> None:
        """Copies the float64 blocks into the plan (shapes as ``Plan.upload``; ``E`` may be None
        when N == 1). NaN/Inf raise NonFiniteInputError, entries beyond the float32 range
        InvalidArgumentError."""
        h = self._h()
        D, E = self._host_blocks(D, E)
        _check(
            _capi.mixed_plan_upload(h, D.ctypes.data, None if E is None else E.ctypes.data),
            "btchol_mixed_plan_upload",
        )

    def factor(self) -> None:
        """Factors in float32 (in float64 when the float32 factorization fails). Raises
        NotPositiveDefiniteError when the float64 factorization fails too (``item``, ``block``
        and ``column`` are read from the library's message; -1 when it names none)."""
        status = _capi.mixed_plan_factor(self._h())
        if status == _capi.STATUS_NOT_POSITIVE_DEFINITE:
            message = _last_message()
            found = _NPD_MESSAGE.search(message)
            item, info = -1, 0
            if found:
                item, column, block = (int(v) for v in found.groups())
                info = block * self.n + column + 1
            raise NotPositiveDefiniteError(message, "btchol_mixed_plan_factor", item=item, info=info, n=self.n)
        _check(status, "btchol_mixed_plan_factor")

    def solve(self, b: np.ndarray) -> np.ndarray:
        """Solves Psi x = b in place to float64 accuracy and returns ``b`` (now x); ``b`` is a
        writable float64 array shaped and strided as for ``Plan.solve``. Sets ``last_report``."""
        h = self._h()
        m, layout, ld, stride = self._host_rhs(b)
        iterations, berr, fell_back = ctypes.c_int64(0), ctypes.c_double(0.0), ctypes.c_int32(0)
        status = _capi.mixed_plan_solve(
            h,
            b.ctypes.data,
            m,
            layout,
            ld,
            stride,
            ctypes.byref(iterations),
            ctypes.byref(berr),
            ctypes.byref(fell_back),
        )
        _check(status, "btchol_mixed_plan_solve")
        self.last_report = RefineReport(int(iterations.value), float(berr.value), bool(fell_back.value))
        return b

    def factor_solve(self, D, E, b: np.ndarray) -> np.ndarray:
        """``upload(D, E)``, ``factor()`` and ``solve(b)``; returns ``b`` (now x)."""
        self._host_rhs(b)  # check b before anything is uploaded
        self.upload(D, E)
        self.factor()
        return self.solve(b)


def _is_contiguous(shape, strides, itemsize, layout):
    """Whether byte ``strides`` make ``shape`` C- (layout 'C') or Fortran-contiguous ('F');
    the strides of axes of length 1 do not matter."""
    axes = range(len(shape) - 1, -1, -1) if layout == "C" else range(len(shape))
    step = itemsize
    for k in axes:
        if shape[k] != 1 and strides[k] != step:
            return False
        step *= shape[k]
    return True
