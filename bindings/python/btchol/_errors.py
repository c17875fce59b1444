"""Exceptions: one class per ``btchol_status``, each carrying the library's last-error message."""

from __future__ import annotations

import numpy as np

from . import _capi


class BTCholError(Exception):
    """A btchol call failed.

    Attributes: ``status`` (the ``btchol_status`` value), ``status_name``
    (e.g. ``"BTCHOL_STATUS_INVALID_STATE"``), ``function`` (the C function that failed, or the
    Python method for errors found before any C call) and ``message`` (the text of
    ``btchol_last_error_message()``, copied right after the failing call).
    """

    #: The status value of this class (subclasses override it).
    status = -1

    def __init__(self, message: str, function: str = "", status: int | None = None):
        if status is not None:
            self.status = status
        self.status_name = _capi.STATUS_NAMES.get(self.status, f"status {self.status}")
        self.function = function
        self.message = message
        # The library's messages start with the C function's name; name it where one does not.
        named = not function or message.startswith(function + ":")
        super().__init__(f"{message if named else f'{function}: {message}'} [{self.status_name}]")


class InvalidArgumentError(BTCholError, ValueError):
    """An argument is outside its documented range (BTCHOL_STATUS_INVALID_ARGUMENT)."""

    status = _capi.STATUS_INVALID_ARGUMENT


class NullPointerError(BTCholError, ValueError):
    """A required pointer was NULL (BTCHOL_STATUS_NULL_POINTER)."""

    status = _capi.STATUS_NULL_POINTER


class InvalidDimensionError(BTCholError, ValueError):
    """A size is zero, negative or too large (BTCHOL_STATUS_INVALID_DIMENSION)."""

    status = _capi.STATUS_INVALID_DIMENSION


class BufferTooSmallError(BTCholError, ValueError):
    """A buffer is smaller than the plan needs (BTCHOL_STATUS_BUFFER_TOO_SMALL)."""

    status = _capi.STATUS_BUFFER_TOO_SMALL


class NonFiniteInputError(BTCholError, ValueError):
    """The input holds a NaN or an infinity (BTCHOL_STATUS_NON_FINITE_INPUT)."""

    status = _capi.STATUS_NON_FINITE_INPUT


class NotPositiveDefiniteError(BTCholError, np.linalg.LinAlgError):
    """A matrix of the batch is not positive definite (BTCHOL_STATUS_NOT_POSITIVE_DEFINITE).

    ``item`` is the first (0-based) failing batch item, ``info`` its LAPACK INFO (1 + the failed
    row of that item's matrix), ``block`` = (info-1) // n and ``column`` = (info-1) % n, all
    0-based. ``Plan.item_status()`` has the outcome of every item.
    """

    status = _capi.STATUS_NOT_POSITIVE_DEFINITE

    def __init__(self, message, function="", item=-1, info=0, n=1):
        super().__init__(message, function)
        self.item = int(item)
        self.info = int(info)
        self.block = (self.info - 1) // n if self.info > 0 else -1
        self.column = (self.info - 1) % n if self.info > 0 else -1


class InvalidStateError(BTCholError, RuntimeError):
    """A call came in the wrong order, the plan is closed or in use by another thread
    (BTCHOL_STATUS_INVALID_STATE)."""

    status = _capi.STATUS_INVALID_STATE


class BackendUnavailableError(BTCholError, RuntimeError):
    """The requested backend cannot run here, e.g. no usable CUDA GPU
    (BTCHOL_STATUS_BACKEND_UNAVAILABLE, alias BTCHOL_STATUS_NO_CUDA)."""

    status = _capi.STATUS_BACKEND_UNAVAILABLE


NoCudaError = BackendUnavailableError


class CudaError(BTCholError, RuntimeError):
    """A CUDA driver, runtime or NVRTC call failed (BTCHOL_STATUS_CUDA_ERROR)."""

    status = _capi.STATUS_CUDA_ERROR


class OutOfMemoryError(BTCholError, MemoryError):
    """A workspace allocation failed (BTCHOL_STATUS_OUT_OF_MEMORY)."""

    status = _capi.STATUS_OUT_OF_MEMORY


class InternalError(BTCholError, RuntimeError):
    """A bug in btchol (BTCHOL_STATUS_INTERNAL): close the plan involved and report the message."""

    status = _capi.STATUS_INTERNAL


class UnsupportedError(BTCholError, NotImplementedError):
    """The plan's backend does not provide the requested feature yet (BTCHOL_STATUS_UNSUPPORTED),
    e.g. pivot boosting or batch masks on the CUDA backend."""

    status = _capi.STATUS_UNSUPPORTED


_BY_STATUS = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        NullPointerError,
        InvalidDimensionError,
        BufferTooSmallError,
        NonFiniteInputError,
        NotPositiveDefiniteError,
        InvalidStateError,
        BackendUnavailableError,
        CudaError,
        OutOfMemoryError,
        InternalError,
        UnsupportedError,
    )
}


def last_message() -> str:
    """``btchol_last_error_message()`` of this thread, as a str."""
    return _capi.last_error_message().decode("utf-8", "replace")


def error_for(status: int, function: str) -> BTCholError:
    """The exception for a failed call, with the message read right now (call it at once)."""
    message = last_message() or _capi.status_string(status).decode()
    cls = _BY_STATUS.get(status)
    if cls is None:
        return BTCholError(message, function, status=status)
    return cls(message, function)


def check(status: int, function: str) -> None:
    """Raises the mapped exception unless ``status`` is BTCHOL_STATUS_SUCCESS."""
    if status != _capi.STATUS_SUCCESS:
        raise error_for(status, function)
