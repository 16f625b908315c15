"""A parameter value's key: its JSON as the page writes it (``JSON.stringify``), made here.

Two values are the same setting when their keys are equal (0 and 0.0 are one setting; so are
``[1.0]`` and ``[1]``). Python writes every key the page compares with: each option's
``data-value``, the keys of ``off_when``, the text a number control holds, so the page
compares texts it was given (``JSON.stringify`` of a value it read back from them is that text)
and Hugo compares nothing.

>>> key(30.0), key(0.1), key(1e-7), key(1e21), key([1.0, "two", True, None])
('30', '0.1', '1e-7', '1e+21', '[1,"two",true,null]')
>>> same(0, 0.0), same([1.0], [1]), same(True, 1)
(True, True, False)
"""

from __future__ import annotations

import json
import math
import numbers


def number(x) -> str:
    """A finite number as JavaScript prints it (``String(x)``, ``JSON.stringify(x)``): the shortest
    digits that read back as ``x``, whole numbers without a point, powers of ten only below 1e-6
    and from 1e21 (ECMAScript's Number::toString).

    >>> [number(v) for v in (2, -0.5, 123.456, 1e-6, 1.5e-7, 1e20, 2.5e21, -0.0)]
    ['2', '-0.5', '123.456', '0.000001', '1.5e-7', '100000000000000000000', '2.5e+21', '0']
    """
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
        raise ValueError(f"number: expected a finite number; got {x!r}")
    if isinstance(x, numbers.Integral) and abs(x) < 2 ** 53:
        return str(int(x))
    x = float(x)
    if x == 0:
        return "0"
    mantissa, _, exp = repr(abs(x)).partition("e")  # repr: the shortest digits that round-trip
    whole, _, frac = mantissa.partition(".")
    d = (whole + frac).lstrip("0")
    n = len(whole) - (len(whole + frac) - len(d)) + int(exp or 0)  # x = 0.d × 10^n
    d = d.rstrip("0")
    k = len(d)
    minus = "-" if x < 0 else ""
    if k <= n <= 21:
        return minus + d + "0" * (n - k)
    if 0 < n <= 21:
        return minus + d[:n] + "." + d[n:]
    if -6 < n <= 0:
        return minus + "0." + "0" * -n + d
    e = n - 1
    return f"{minus}{d[0]}{'.' + d[1:] if k > 1 else ''}e{'+' if e >= 0 else '-'}{abs(e)}"


def key(value) -> str:
    """``value``'s JSON as the page writes it: compact, numbers as JavaScript prints them."""
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, numbers.Real):
        return number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(key(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{key(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"key: a parameter value must be JSON; got {type(value).__name__} {value!r}")


def same(a, b) -> bool:
    """Whether ``a`` and ``b`` are one setting of a control: their keys are equal."""
    return key(a) == key(b)
