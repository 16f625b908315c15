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
    flat = arr.reshape(-1)           # a view for contiguous input; checked in chunks so a 2 GB
    for start in range(0, flat.size, _CHUNK):  # weight tensor needs no 2 GB temporary of booleans
        part = flat[start:start + _CHUNK]
        if not np.isfinite(part).all():
            i = start + int(np.argmin(np.isfinite(part)))
            bad = np.unravel_index(i, arr.shape)
            raise ValueError(f"{name} must be finite; got {flat[i]} at index {tuple(int(j) for j in bad)}")
    return arr


_CHUNK = 1 << 22


def as_number(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    """Return ``value`` as a finite float within ``[lo, hi]``.

    >>> as_number("theta", "45")
    Traceback (most recent call last):
    ...
    ValueError: theta must be a number; got str '45'
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number; got {type(value).__name__} {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite; got {x}")
    if lo is not None and x < lo or hi is not None and x > hi:
        raise ValueError(f"{name} must be between {lo} and {hi}; got {x}")
    return x
