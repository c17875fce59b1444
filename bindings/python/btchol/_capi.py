"""Loading libbtchol and declaring its C API (include/btchol.h) for ctypes.

The library is found, in this order:

1. the path in the environment variable ``BTCHOL_LIB`` (an error if it is set but cannot be
   loaded: a wrong explicit path never falls back to another library);
2. ``target/release/libbtchol.so`` of the btchol repository this package sits in
   (``bindings/python/btchol`` -> ``../../../target/release``), i.e. a ``cargo build --release``
   checkout;
3. the system loader: ``libbtchol.so.0`` (the SONAME of ABI 0), then ``ctypes.util.find_library``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import POINTER, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32, c_void_p

#: The ABI this binding was written for (BTCHOL_ABI_VERSION, the N of libbtchol.so.N).
ABI_VERSION = 0

# Fixed status values (btchol.h: "the numeric values of all statuses are fixed forever").
STATUS_SUCCESS = 0
STATUS_INVALID_ARGUMENT = 1
STATUS_NULL_POINTER = 2
STATUS_INVALID_DIMENSION = 3
STATUS_BUFFER_TOO_SMALL = 4
STATUS_NON_FINITE_INPUT = 5
STATUS_NOT_POSITIVE_DEFINITE = 6
STATUS_INVALID_STATE = 7
STATUS_BACKEND_UNAVAILABLE = 8
STATUS_CUDA_ERROR = 9
STATUS_OUT_OF_MEMORY = 10
STATUS_INTERNAL = 11
STATUS_UNSUPPORTED = 12

STATUS_NAMES = {
    0: "BTCHOL_STATUS_SUCCESS",
    1: "BTCHOL_STATUS_INVALID_ARGUMENT",
    2: "BTCHOL_STATUS_NULL_POINTER",
    3: "BTCHOL_STATUS_INVALID_DIMENSION",
    4: "BTCHOL_STATUS_BUFFER_TOO_SMALL",
    5: "BTCHOL_STATUS_NON_FINITE_INPUT",
    6: "BTCHOL_STATUS_NOT_POSITIVE_DEFINITE",
    7: "BTCHOL_STATUS_INVALID_STATE",
    8: "BTCHOL_STATUS_BACKEND_UNAVAILABLE",
    9: "BTCHOL_STATUS_CUDA_ERROR",
    10: "BTCHOL_STATUS_OUT_OF_MEMORY",
    11: "BTCHOL_STATUS_INTERNAL",
    12: "BTCHOL_STATUS_UNSUPPORTED",
}

DTYPE_F32 = 0
DTYPE_F64 = 1
LAYOUT_ROW_MAJOR = 0
LAYOUT_COL_MAJOR = 1
BACKEND_AUTO = 0
BACKEND_CPU = 1
BACKEND_CUDA = 2
ALGORITHM_AUTO = 0
ALGORITHM_SEQUENTIAL = 1
ALGORITHM_NESTED_DISSECTION = 2
PARTITION_AUTO = 0
PARTITION_NONE = -1
ITEM_PENDING = -1
HALF_F16 = 0
HALF_BF16 = 1


class Options(ctypes.Structure):
    """``btchol_plan_options`` (72 bytes on 64-bit platforms, fixed for ABI 0)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("backend", c_int32),
        ("algorithm", c_int32),
        ("layout", c_int32),
        ("threads", c_int32),
        ("max_nrhs", c_int64),
        ("diag_shift", c_double),
        ("pivot_threshold", c_double),
        ("pivot_boost", c_double),
        ("deterministic", c_int32),
        ("partition_chunk", c_int32),
        ("reserved", c_int64 * 1),
    ]


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", "..", ".."))
    yield os.path.join(repo, "target", "release", "libbtchol.so")
    yield "libbtchol.so.0"
    found = ctypes.util.find_library("btchol")
    if found:
        yield found


def _load():
    explicit = os.environ.get("BTCHOL_LIB")
    if explicit:
        try:
            return ctypes.CDLL(explicit), explicit
        except OSError as e:
            raise ImportError(f"btchol: cannot load BTCHOL_LIB={explicit!r}: {e}") from e
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError(
        "btchol: libbtchol.so not found. Build it with `cargo build --release` in the btchol "
        "repository, or set BTCHOL_LIB to its path. Tried: " + "; ".join(tried)
    )


lib, lib_path = _load()


def _declare(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_plan_p = c_void_p
_i64_p = POINTER(c_int64)

status_string = _declare("btchol_status_string", c_char_p, c_int32)
last_error_message = _declare("btchol_last_error_message", c_char_p)
plan_options_init = _declare("btchol_plan_options_init", c_int32, POINTER(Options))
host_alloc = _declare("btchol_host_alloc", c_int32, c_int64, POINTER(c_void_p), POINTER(c_int32))
host_free = _declare("btchol_host_free", c_int32, c_void_p)
plan_create = _declare(
    "btchol_plan_create", c_int32, c_int64, c_int64, c_int64, c_int32, POINTER(Options), POINTER(c_void_p)
)
plan_destroy = _declare("btchol_plan_destroy", None, _plan_p)
plan_workspace_bytes = _declare("btchol_plan_workspace_bytes", c_int32, _plan_p, _i64_p)
plan_backend = _declare("btchol_plan_backend", c_int32, _plan_p, POINTER(c_int32))
plan_algorithm = _declare("btchol_plan_algorithm", c_int32, _plan_p, POINTER(c_int32))
plan_upload = _declare("btchol_plan_upload", c_int32, _plan_p, c_void_p, c_void_p)
plan_upload_device = _declare("btchol_plan_upload_device", c_int32, _plan_p, c_void_p, c_void_p)
plan_factor = _declare("btchol_plan_factor", c_int32, _plan_p, _i64_p, _i64_p)
plan_item_status = _declare("btchol_plan_item_status", c_int32, _plan_p, c_void_p)
plan_logdet = _declare("btchol_plan_logdet", c_int32, _plan_p, c_void_p)
plan_boosted_pivots = _declare("btchol_plan_boosted_pivots", c_int32, _plan_p, c_void_p)
_solve_args = (_plan_p, c_void_p, c_int64, c_int32, c_int64, c_int64)
plan_solve = _declare("btchol_plan_solve", c_int32, *_solve_args)
plan_solve_device = _declare("btchol_plan_solve_device", c_int32, *_solve_args)
plan_factor_solve_device = _declare("btchol_plan_factor_solve_device", c_int32, *_solve_args, _i64_p, _i64_p)
plan_upload_masked = _declare("btchol_plan_upload_masked", c_int32, _plan_p, c_void_p, c_void_p, c_void_p)
plan_factor_masked = _declare("btchol_plan_factor_masked", c_int32, _plan_p, c_void_p, _i64_p, _i64_p)
plan_solve_masked = _declare(
    "btchol_plan_solve_masked", c_int32, _plan_p, c_void_p, c_void_p, c_int64, c_int32, c_int64, c_int64
)
plan_factor_solve = _declare(
    "btchol_plan_factor_solve",
    c_int32,
    _plan_p,
    c_void_p,
    c_void_p,
    c_void_p,
    c_int64,
    c_int32,
    c_int64,
    c_int64,
    _i64_p,
    _i64_p,
)
plan_gradient = _declare(
    "btchol_plan_gradient", c_int32, _plan_p, c_void_p, c_void_p, c_int64, c_int32, c_int64, c_int64, c_void_p, c_void_p
)
plan_upload_half = _declare("btchol_plan_upload_half", c_int32, _plan_p, c_int32, c_void_p, c_void_p)
plan_solve_half = _declare(
    "btchol_plan_solve_half", c_int32, _plan_p, c_int32, c_void_p, c_int64, c_int32, c_int64, c_int64, c_void_p
)
plan_upload_device_half = _declare("btchol_plan_upload_device_half", c_int32, _plan_p, c_int32, c_void_p, c_void_p)
plan_solve_device_half = _declare(
    "btchol_plan_solve_device_half", c_int32, _plan_p, c_int32, c_void_p, c_int64, c_int32, c_int64, c_int64, c_void_p
)
mixed_plan_create = _declare(
    "btchol_mixed_plan_create",
    c_int32,
    c_int64,
    c_int64,
    c_int64,
    POINTER(Options),
    c_int64,
    c_double,
    POINTER(c_void_p),
)
mixed_plan_destroy = _declare("btchol_mixed_plan_destroy", None, _plan_p)
mixed_plan_upload = _declare("btchol_mixed_plan_upload", c_int32, _plan_p, c_void_p, c_void_p)
mixed_plan_factor = _declare("btchol_mixed_plan_factor", c_int32, _plan_p)
mixed_plan_solve = _declare(
    "btchol_mixed_plan_solve",
    c_int32,
    _plan_p,
    c_void_p,
    c_int64,
    c_int32,
    c_int64,
    c_int64,
    _i64_p,
    POINTER(c_double),
    POINTER(c_int32),
)
plan_set_stream = _declare("btchol_plan_set_stream", c_int32, _plan_p, c_void_p)
plan_synchronize = _declare("btchol_plan_synchronize", c_int32, _plan_p)
cuda_available = _declare("btchol_cuda_available", c_int32)
version = _declare("btchol_version", c_char_p)
version_number = _declare("btchol_version_number", c_uint32)

# Refuse a library of another ABI instead of corrupting memory later.
_major = version_number() // 1000000
if _major != ABI_VERSION:
    raise ImportError(
        f"btchol: {lib_path} is version {version().decode()} (ABI {_major}); this binding needs ABI {ABI_VERSION}"
    )
if ctypes.sizeof(c_void_p) == 8:
    assert ctypes.sizeof(Options) == 72, "btchol_plan_options must be 72 bytes (ABI 0)"

__all__ = ["lib", "lib_path", "Options", "c_double", "c_int64", "c_int32", "c_void_p"]
