"""Input checks shared by every module: one place that turns bad input into a
ValueError naming the argument, what was expected and what arrived.

>>> as_array("W", [[1.0, 2.0]], ndim=2).shape
(1, 2)
>>> as_array("W", [1.0, float("nan")], ndim=1)
Traceback (most recent call last):
...
ValueError: W must be finite; got nan at index (1,)
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def as_array(name: str, value, ndim: int | None = None, shape: tuple | None = None,
             dtype=np.float64) -> np.ndarray:
    """Return ``value`` as a finite float array, checking ndim and shape.

    ``shape`` may hold ``None`` for axes of any length.
    """
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a numeric array; got a string {value!r}")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array; got {type(value).__name__}: {exc}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "[" + ", ".join("*" if s is None else str(s) for s in shape) + "]"
            raise ValueError(f"{name} must have shape {want}; got {list(arr.shape)}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty; got shape {arr.shape}")
    bad = _first_nonfinite(arr)
    if bad is not None:
        raise ValueError(f"{name} must be finite; got {arr[bad]} at index {bad}")
    return arr


#: Elements per step of the finiteness check: its boolean temporary never exceeds this many bytes.
_CHUNK = 1 << 22


def _first_nonfinite(arr: np.ndarray) -> tuple | None:
    """Index of the first NaN or infinity of ``arr`` in C order, or None.

    Checked a chunk of ``_CHUNK`` elements at a time (a contiguous array as flat slices, any other
    by slabs of its first axis), so a 2 GB weight tensor needs no 2 GB temporary of booleans.

    >>> _first_nonfinite(np.arange(6.0).reshape(2, 3).T) is None, _first_nonfinite(np.array(np.inf))
    (True, ())
    """
    if arr.size <= _CHUNK:
        ok = np.isfinite(arr)
        return None if ok.all() else tuple(int(i) for i in np.argwhere(~ok)[0])
    if arr.flags.c_contiguous:
        flat = arr.reshape(-1)                              # a view
        for start in range(0, flat.size, _CHUNK):
            ok = np.isfinite(flat[start:start + _CHUNK])
            if not ok.all():
                return tuple(int(i) for i in np.unravel_index(start + int(np.argmin(ok)), arr.shape))
        return None
    step = max(1, _CHUNK // (arr.size // arr.shape[0]))    # rows of the first axis per slab
    for start in range(0, arr.shape[0], step):
        bad = _first_nonfinite(arr[start:start + step]) if step > 1 else _first_nonfinite(arr[start])
        if bad is not None:
            return (start + bad[0],) + bad[1:] if step > 1 else (start,) + bad
    return None


def as_number(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    """Return ``value`` as a finite float within ``[lo, hi]``.

    >>> as_number("theta", "45")
    Traceback (most recent call last):
    ...
    ValueError: theta must be a number; got str '45'
    >>> as_number("batch", 0, lo=1)
    Traceback (most recent call last):
    ...
    ValueError: batch must be at least 1; got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number; got {type(value).__name__} {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite; got {x}")
    if lo is not None and x < lo or hi is not None and x > hi:
        # the bound that exists, and the value as given (batch=0 reads "got 0", not "got 0.0")
        want = (f"at least {lo}" if hi is None else f"at most {hi}" if lo is None else f"between {lo} and {hi}")
        got = int(value) if isinstance(value, numbers.Integral) else x
        raise ValueError(f"{name} must be {want}; got {got}")
    return x
