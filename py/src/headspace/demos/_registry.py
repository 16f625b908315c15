"""The demo registry: one name -> one pure function, shared by every runtime.

The build prerenders each demo with native Python, the browser's worker runs
the same ``Demo.run`` in Pyodide, and pytest calls exactly what both call.

>>> from headspace.demos import REGISTRY
>>> out = REGISTRY["polarizer"].run({"theta": 90})
>>> sorted(out), sorted(out["outputs"])
(['figure', 'outputs'], ['jones', 'transmission'])
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

KINDS = ("range", "number", "select", "checkbox", "matrix", "tokens")


@dataclass(frozen=True)
class Param:
    """One control of a demo. ``kind`` picks the native HTML control:
    range -> slider, number -> number box, select -> drop-down,
    checkbox -> tick box, matrix -> a grid of number boxes of ``shape``, tokens -> a text box of
    token ids (whole numbers from ``min`` to ``max``, between 2 and ``shape[0]`` of them, separated
    by spaces or commas; the page sends the text, the demo receives a list of ints)."""

    name: str
    label: str
    kind: str
    default: Any
    min: float | None = None
    max: float | None = None
    step: float | None = None
    options: tuple = ()
    unit: str = ""
    shape: tuple | None = None
    help: str = ""
    animate: bool = False  # the page adds play/pause that steps this range param (still under reduced motion)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Param {self.name!r}: kind must be one of {KINDS}; got {self.kind!r}")
        self.validate(self.default)

    def validate(self, value):
        """Return ``value`` checked and normalised, or raise ValueError naming this parameter."""
        name = self.name
        if self.kind in ("range", "number"):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"parameter {name!r} must be a finite number; got {value!r}")
            if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
                raise ValueError(f"parameter {name!r} must be between {self.min} and {self.max}; got {value!r}")
            return int(value) if isinstance(self.default, int) and float(value).is_integer() else float(value)
        if self.kind == "select":
            if value not in self.options:
                raise ValueError(f"parameter {name!r} must be one of {list(self.options)}; got {value!r}")
            return value
        if self.kind == "checkbox":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"parameter {name!r} must be true or false; got {value!r}")
            return bool(value)
        if self.kind == "tokens":
            return self._tokens(value)
        arr = np.asarray(value, dtype=object)
        if arr.shape != tuple(self.shape) or not all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in arr.flat):
            raise ValueError(f"parameter {name!r} must be a {self.shape} matrix of finite numbers; got {value!r}")
        return [[float(v) for v in row] for row in arr.tolist()]

    def _tokens(self, value) -> list[int]:
        """Token ids from text (``"5 9, 2"``) or a list of ints, each in [min, max]; messages number
        the tokens from 1, as a reader counts them."""
        name, lo, hi, most = self.name, int(self.min), int(self.max), int(self.shape[0])
        if isinstance(value, str):
            items = [t for t in value.replace(",", " ").split() if t]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise ValueError(f"parameter {name!r} must be token ids separated by spaces; got {value!r}")
        ids = []
        for i, item in enumerate(items, start=1):
            text = str(item)
            if isinstance(item, bool) or not (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
                raise ValueError(f"parameter {name!r}: token {i} must be a whole number from {lo} to {hi}; "
                                 f"got {text!r}")
            if not lo <= int(text) <= hi:
                raise ValueError(f"parameter {name!r}: token {i} must be from {lo} to {hi}; got {int(text)}")
            ids.append(int(text))
        if not 2 <= len(ids) <= most:
            raise ValueError(f"parameter {name!r} must hold from 2 to {most} tokens; got {len(ids)}")
        return ids

    def to_json(self) -> dict:
        out = {"name": self.name, "label": self.label, "kind": self.kind, "default": self.default}
        for key in ("min", "max", "step", "unit", "help"):
            if getattr(self, key) not in (None, ""):
                out[key] = getattr(self, key)
        if self.options:
            out["options"] = list(self.options)
        if self.shape:
            out["shape"] = list(self.shape)
        if self.animate:
            out["animate"] = True
        return out


@dataclass(frozen=True)
class Demo:
    """A figure: declared parameters and output keys, and a pure function
    ``fn(**params) -> {"figure": plotly figure dict, "outputs": {key: value}}``."""

    name: str
    title: str
    params: tuple[Param, ...]
    outputs: tuple[str, ...]
    fn: Callable[..., dict] = field(repr=False)
    needs_models: bool = False  # the worker copies the shipped models (served at /models/) into Pyodide's files first

    def resolve(self, params: dict | None = None) -> dict:
        """Defaults overlaid with ``params``, every value validated."""
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValueError(f"demo {self.name!r} has no parameter {unknown[0]!r}; "
                             f"its parameters are {sorted(known)}")
        return {n: p.validate(params.get(n, p.default)) for n, p in known.items()}

    def run(self, params: dict | None = None) -> dict:
        """Run the demo; the result is plain JSON (lists, floats, str, bool, None)."""
        result = self.fn(**self.resolve(params))
        outputs = result["outputs"]
        if set(outputs) != set(self.outputs):
            raise ValueError(f"demo {self.name!r} must return outputs {sorted(self.outputs)}; "
                             f"got {sorted(outputs)}")
        return to_json_value({"figure": result["figure"], "outputs": outputs})

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "needs_models": self.needs_models,
                "params": [p.to_json() for p in self.params], "outputs": list(self.outputs)}


REGISTRY: dict[str, Demo] = {}


def register(name: str, title: str, params, outputs, needs_models: bool = False):
    """Decorator that adds ``fn`` to ``REGISTRY`` under ``name``."""
    def wrap(fn):
        if name in REGISTRY:
            raise ValueError(f"demo {name!r} is registered twice")
        REGISTRY[name] = Demo(name, title, tuple(params), tuple(outputs), fn, needs_models)
        return fn
    return wrap


def format_value(value) -> str:
    """An output as the page prints it under its figure, the one formatter of every runtime: the
    build prints the prerendered outputs with it and the browser's worker returns its text with
    each result. Numbers to 4 significant digits (``|x| < 1e-10`` as 0), lists in brackets,
    mappings as ``{key: value}`` in their own order; the exact JSON stays in ``data-value``.

    >>> format_value({"b": [0.123456, 1e-05, 2e-12], "a": True, "n": 3000})
    '{b: [0.1235, 1e-05, 0], a: true, n: 3000}'
    """
    kind = type(value)
    if kind is float or kind is int:  # the common leaf first: the ABC checks below are slow in Pyodide
        return "0" if abs(value) < 1e-10 else f"{float(value):.4g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        if all(type(v) is float for v in value):  # a row of a matrix: one loop, no recursion
            return "[" + ", ".join("0" if abs(v) < 1e-10 else f"{v:.4g}" for v in value) + "]"
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, numbers.Real):
        return "0" if abs(value) < 1e-10 else f"{float(value):.4g}"
    return str(value)


def format_outputs(outputs: dict) -> dict:
    """``{key: format_value(value)}`` for every output of a result."""
    return {key: format_value(value) for key, value in outputs.items()}


def to_json_value(obj, path="result"):
    """Convert numpy scalars and arrays to plain JSON; refuse NaN and inf.

    >>> to_json_value({"a": np.arange(2), "b": np.float32(0.5)})
    {'a': [0, 1], 'b': 0.5}
    """
    kind = type(obj)
    if kind is str or kind is int or kind is bool or obj is None:  # plain leaves: no ABC checks
        return obj
    if kind is float:
        if not math.isfinite(obj):
            raise ValueError(f"{path} must be finite; got {obj}")
        return obj
    if isinstance(obj, dict):
        return {str(k): to_json_value(v, f"{path}.{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        # Fast paths for plotted coordinates: a flat list of finite floats (a nan or inf anywhere
        # makes the sum non-finite), or of plain ints, strings and Nones, is already JSON.
        if obj and all(type(v) is float for v in obj) and math.isfinite(sum(obj)):
            return list(obj)
        if all(type(v) is int or type(v) is str or v is None for v in obj):
            return list(obj)
        return [to_json_value(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        return to_json_value(obj.tolist(), path)
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (numbers.Integral,)):
        return int(obj)
    if isinstance(obj, numbers.Real):
        x = float(obj)
        if not math.isfinite(x):
            raise ValueError(f"{path} must be finite; got {x}")
        return x
    if obj is None or isinstance(obj, str):
        return obj
    raise ValueError(f"{path} is not JSON: {type(obj).__name__}")
