"""The demo registry: one name -> one pure function, shared by every runtime.

The build prerenders each demo with native Python, the browser's worker runs
the same ``Demo.run`` in Pyodide, and pytest calls exactly what both call.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["polarizer"].run({"theta": 90})
>>> sorted(out), sorted(out["outputs"])
(['figure', 'outputs'], ['jones', 'transmission'])
"""

from __future__ import annotations

import math
import numbers
import random
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import colour
from .fit import readable_colorbars
from .keys import key, same
from .outputs import Output, escape, legacy

KINDS = ("range", "number", "select", "checkbox", "matrix", "tokens")


class ParameterError(ValueError):
    """A value a demo refused: ``param`` names the parameter, so that the page marks that control
    (the message says what was expected and what came)."""

    def __init__(self, param: str, message: str):
        super().__init__(message)
        self.param = param


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
    #: When this control does anything: ``{"pairs": ["two"]}`` (that parameter holds one of these
    #: values) or ``{"decay": {"not": [0]}}`` (any value but these); every entry must hold. Otherwise
    #: the page disables it and shows ``inactive`` (default: "Only when <label> is <values>"); its
    #: value is kept and still sent. Its ``Demo`` turns it into ``off_when``, the one table both
    #: ``active`` and the page read.
    active_when: Any = None
    inactive: str = ""
    #: What the menu shows for each of ``options`` (default: the option itself), e.g. "SVD bound" for
    #: "svd_bound": a reader sees the articles' words, a link keeps the value.
    option_labels: tuple = ()
    #: ``((other, keys), ...)``: the values of other controls, by key, that switch this one off.
    #: Made from ``active_when`` by its ``Demo`` (which knows the other controls' values); read by
    #: ``active`` here and, as ``data-off-when``, by the page (figure/controls.js ``applyActive``).
    off_when: tuple = field(default=(), init=False, repr=False)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Param {self.name!r}: kind must be one of {KINDS}; got {self.kind!r}")
        if self.option_labels and len(self.option_labels) != len(self.options):
            raise ValueError(f"Param {self.name!r}: option_labels must name each of its {len(self.options)} options; "
                             f"got {len(self.option_labels)}")
        self.validate(self.default)
        if self.active_when is not None:
            if not isinstance(self.active_when, dict) or not self.active_when:
                raise ValueError(f"Param {self.name!r}: active_when must be a non-empty dict of parameter "
                                 f"conditions; got {self.active_when!r}")
            rules = {}
            for other, rule in self.active_when.items():
                if isinstance(rule, dict) and set(rule) == {"not"}:
                    rules[other] = ("not", tuple(rule["not"]))
                elif isinstance(rule, (list, tuple)) and rule:
                    rules[other] = ("in", tuple(rule))
                else:
                    raise ValueError(f"Param {self.name!r}: active_when[{other!r}] must be a list of values or "
                                     f"{{'not': [values]}}; got {rule!r}")
            object.__setattr__(self, "active_when", tuple(rules.items()))

    def active(self, params: dict) -> bool:
        """Whether this control does anything when the demo's parameters are ``params`` (resolved):
        no other control holds a value of ``off_when``. The page asks the same table the same
        question (figure/controls.js ``applyActive``), so the two cannot disagree."""
        return not any(key(params[other]) in keys for other, keys in self.off_when)

    def values(self) -> tuple | None:
        """Every value this control can hold, when they can be listed: a drop-down's options, a
        tick box's two, a slider of whole steps; otherwise None.

        >>> Param("r", "R", "range", 2, min=1, max=4, step=1).values(), Param("c", "C", "checkbox", False).values()
        ((1, 2, 3, 4), (False, True))
        """
        if self.kind == "select":
            return tuple(self.options)
        if self.kind == "checkbox":
            return (False, True)
        if self.kind == "range" and self.step and all(float(x).is_integer() for x in (self.min, self.max, self.step)):
            return tuple(range(int(self.min), int(self.max) + 1, int(self.step)))
        return None

    def control(self, value, params: dict) -> dict:
        """This control as the page shows it at ``value`` (resolved, as are the demo's ``params``):
        ``text``, what it holds (a number as JavaScript prints it, tokens separated by spaces, a
        matrix's cells, a tick box's ``true`` or ``false``); ``option``, a drop-down's option at
        ``value``; ``checked``, a tick box's state; ``active``, whether it does anything (``active``).
        The one writer of a value as its control's text: the build's controls (``demo.html``) and
        a link's settings once Python accepted them (``runtime.call`` → ``state.js`` ``writeParams``)
        are both written from it; the page reads a text back with ``state.js`` ``typed``.

        >>> Param("t", "T", "range", 30.0, min=0, max=90).control(7.5, {})
        {'text': '7.5', 'active': True}
        """
        if self.kind == "tokens":
            text = " ".join(map(str, value))
        elif self.kind == "matrix":
            text = [[key(v) for v in row] for row in value]
        else:
            text = key(value)
        out = {"text": text, "active": self.active(params)}
        if self.kind == "select":
            out["option"] = next(i for i, o in enumerate(self.options) if same(o, value))
        elif self.kind == "checkbox":
            out["checked"] = bool(value)
        return out

    def validate(self, value):
        """Return ``value`` checked and normalised, or raise ValueError naming this parameter."""
        name = self.name
        if self.kind in ("range", "number"):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ParameterError(name, f"{self.label} must be a finite number; got {value!r}")
            if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
                raise ParameterError(name, f"{self.label} must be between {self.min} and {self.max}; got {value!r}")
            return int(value) if isinstance(self.default, int) and float(value).is_integer() else float(value)
        if self.kind == "select":
            if value not in self.options:
                raise ParameterError(name, f"{self.label} must be one of {self.said(self.options)}; got {value!r}")
            return value
        if self.kind == "checkbox":
            if not isinstance(value, (bool, np.bool_)):
                raise ParameterError(name, f"{self.label} must be true or false; got {value!r}")
            return bool(value)
        if self.kind == "tokens":
            return self._tokens(value)
        arr = np.asarray(value, dtype=object)
        if arr.shape != tuple(self.shape) or not all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in arr.flat):
            raise ParameterError(name, f"{self.label} must be a {' × '.join(map(str, self.shape))} matrix of finite numbers; "
                                       f"got {value!r}")
        return [[float(v) for v in row] for row in arr.tolist()]

    def said(self, values) -> str:
        """``values`` as a reader reads them in a message: each option's label, joined by commas and "or".

        >>> Param("m", "Metric", "select", "a", options=("a", "b", "c"), option_labels=("A", "B", "C")).said("abc")
        'A, B or C'
        """
        shown = [self.label_of(v) for v in values]
        return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"

    def label_of(self, value) -> str:
        """What the menu shows for option ``value`` (the value itself when it has no label)."""
        for option, label in zip(self.options, self.option_labels):
            if same(option, value):
                return str(label)
        return str(value)

    def _tokens(self, value) -> list[int]:
        """Token ids from text (``"5 9, 2"``) or a list of ints, each in [min, max]; messages number
        the tokens from 1, as a reader counts them."""
        name, lo, hi, most = self.name, int(self.min), int(self.max), int(self.shape[0])
        if isinstance(value, str):
            items = [t for t in value.replace(",", " ").split() if t]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise ParameterError(name, f"{self.label} must be token ids separated by spaces; got {value!r}")
        ids = []
        for i, item in enumerate(items, start=1):
            text = str(item)
            if isinstance(item, bool) or not (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
                raise ParameterError(name, f"{self.label}: token {i} must be a whole number from {lo} to {hi}; "
                                 f"got {text!r}")
            if not lo <= int(text) <= hi:
                raise ParameterError(name, f"{self.label}: token {i} must be from {lo} to {hi}; got {int(text)}")
            ids.append(int(text))
        if not 2 <= len(ids) <= most:
            raise ParameterError(name, f"{self.label} must hold from 2 to {most} tokens; got {len(ids)}")
        return ids

    def to_json(self) -> dict:
        out = {"name": self.name, "label": self.label, "kind": self.kind, "default": self.default}
        for attr in ("min", "max", "step", "unit", "help"):
            if getattr(self, attr) not in (None, ""):
                out[attr] = getattr(self, attr)
        if self.options:
            out["options"] = list(self.options)
            out["option_keys"] = [key(v) for v in self.options]  # each option's data-value
            out["option_labels"] = [self.label_of(v) for v in self.options]
        if self.shape:
            out["shape"] = list(self.shape)
        if self.animate:
            out["animate"] = True
        if self.off_when:
            # the page looks a control's key up in this table (figure/controls.js applyActive), as ``active`` does
            out["off_when"] = {other: list(keys) for other, keys in self.off_when}
            out["inactive"] = self.inactive
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
    described: tuple[Output, ...] = ()  # what each output is and how the page prints it, by ``outputs``
    #: One line beside the plot saying what its marks, axes and colours mean (a reader on a phone
    #: should not need the caption, a screen below, to read the figure); <i>, <sub>, <sup> allowed.
    key: str = ""

    def __post_init__(self):
        known = {p.name: p for p in self.params}
        for p in self.params:
            off = []
            for other, (how, values) in p.active_when or ():
                if other not in known or other == p.name:
                    raise ValueError(f"demo {self.name!r}: parameter {p.name!r} is active_when {other!r}, which is "
                                     f"not another of its parameters {sorted(known)}")
                for v in values:
                    try:
                        known[other].validate(v)
                    except ValueError as exc:
                        raise ValueError(f"demo {self.name!r}: parameter {p.name!r}: active_when {other!r}: {exc}") \
                            from None
                if not p.inactive:
                    said = " or ".join(str(v) for v in values)
                    note = f"Only when {known[other].label} is {'not ' if how == 'not' else ''}{said}"
                    object.__setattr__(p, "inactive", note)
                off.append((other, _off_keys(self.name, p.name, other, how, values, known[other])))
            object.__setattr__(p, "off_when", tuple(off))
        if not self.described:
            object.__setattr__(self, "described", tuple(Output.of(k) for k in self.outputs))
        if tuple(o.key for o in self.described) != tuple(self.outputs):
            raise ValueError(f"demo {self.name!r}: outputs {list(self.outputs)} and their declarations "
                             f"{[o.key for o in self.described]} differ")

    def output(self, key: str) -> Output:
        """The declaration of output ``key``."""
        for o in self.described:
            if o.key == key:
                return o
        raise ValueError(f"demo {self.name!r} has no output {key!r}; its outputs are {list(self.outputs)}")

    def resolve(self, params: dict | None = None) -> dict:
        """Defaults overlaid with ``params``, every value validated."""
        params = dict(params or {})
        known = {p.name: p for p in self.params}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ParameterError(unknown[0], f"demo {self.name!r} has no parameter {unknown[0]!r}; its parameters are "
                                             + ", ".join(f"{n} ({p.label})" for n, p in known.items()))
        return {n: p.validate(params.get(n, p.default)) for n, p in known.items()}

    def controls(self, params: dict | None = None) -> dict:
        """``{name: Param.control}``: every control as the page shows it at ``params`` (the build
        writes the controls of each figure from this; Hugo decides nothing)."""
        params = self.resolve(params)
        return {p.name: p.control(params[p.name], params) for p in self.params}

    def run(self, params: dict | None = None) -> dict:
        """Run the demo; the result is plain JSON (lists, floats, str, bool, None)."""
        result = self.fn(**self.resolve(params))
        outputs = result["outputs"]
        if set(outputs) != set(self.outputs):
            raise ValueError(f"demo {self.name!r} must return outputs {sorted(self.outputs)}; "
                             f"got {sorted(outputs)}")
        out = to_json_value({"figure": result["figure"], "outputs": outputs})
        colour.canonical_figure(out["figure"])  # one form of each colour, for every renderer
        readable_colorbars(out["figure"])       # colour-bar titles that fit and clear their ticks
        out["outputs"] = Outputs(out["outputs"], self)
        return out

    def format(self, outputs: dict) -> dict:
        """``{key: HTML}``: each output as the page prints it (``Output.html``)."""
        return {o.key: o.html(outputs[o.key], outputs) for o in self.described}

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "key": self.key, "needs_models": self.needs_models,
                "params": [p.to_json() for p in self.params], "outputs": list(self.outputs),
                "output_info": {o.key: o.to_json() for o in self.described}}


def _off_keys(demo: str, name: str, other: str, how: str, values: tuple, gate: Param) -> tuple[str, ...]:
    """The keys of ``gate``'s values that switch control ``name`` off: those listed after "not",
    or every value of ``gate`` not listed (which needs ``gate.values()``)."""
    keys = tuple(key(v) for v in values)
    if how == "not":
        return keys
    every = gate.values()
    if every is None:
        raise ValueError(f"demo {demo!r}: parameter {name!r}: active_when {other!r} lists the values it is active at, "
                         f"but {gate.label} can hold values that cannot be listed (a {gate.kind} without whole "
                         f"steps); say {{'not': [values]}} instead")
    return tuple(k for k in map(key, every) if k not in keys)


class Outputs(dict):
    """A result's outputs (a plain dict to JSON) that remember their demo, so ``format_outputs``
    prints each by its declaration wherever the result goes (the build, the worker's call)."""

    __slots__ = ("demo",)

    def __init__(self, values: dict, demo: Demo):
        super().__init__(values)
        self.demo = demo


REGISTRY: dict[str, Demo] = {}


def register(name: str, title: str, params, outputs, needs_models: bool = False, key: str = ""):
    """Decorator that adds ``fn`` to ``REGISTRY`` under ``name``. ``outputs``: an ``Output`` per
    key (what it is, how the page prints it), or bare keys; ``key``: the figure's one-line key."""
    def wrap(fn):
        if name in REGISTRY:
            raise ValueError(f"demo {name!r} is registered twice")
        described = tuple(Output.of(o) for o in outputs)
        REGISTRY[name] = Demo(name, title, tuple(params), tuple(o.key for o in described), fn, needs_models,
                              described, key)
        return fn
    return wrap


def format_value(value) -> str:
    """An undeclared output as plain text (``outputs.legacy``): numbers to 4 significant digits,
    lists in brackets, mappings as ``{key: value}``. Declared outputs print by ``Output.html``.

    >>> format_value({"b": [0.123456, 1e-05, 2e-12], "a": True, "n": 3000})
    '{b: [0.1235, 1e-05, 0], a: true, n: 3000}'
    """
    return legacy(value)


def format_outputs(outputs: dict) -> dict:
    """``{key: HTML}`` for every output of a result, the one formatter of every runtime: the build
    prints the prerendered outputs with it and the browser's worker returns it as a result's
    ``text``. Outputs from ``Demo.run`` print by their demo's declarations (``Demo.format``);
    a bare dict, value by value as escaped text.

    >>> from headspace_site.demos import REGISTRY
    >>> format_outputs(REGISTRY["polarizer"].run({"theta": 90})["outputs"])["transmission"]
    '0.5'
    """
    demo = getattr(outputs, "demo", None)
    if demo is not None:
        return demo.format(outputs)
    return {key: escape(legacy(value)) for key, value in outputs.items()}


_PLAIN = frozenset((str, int, bool, type(None)))  # JSON as they are


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
    if isinstance(obj, dict):  # plain values stay as they are, without a call: most of a figure's layout
        return {str(k): v if type(v) in _PLAIN or (type(v) is float and math.isfinite(v))
                else to_json_value(v, f"{path}.{k}") for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        # Fast paths for plotted coordinates: a flat list of finite floats (a nan or inf anywhere
        # makes the sum non-finite), or of plain ints, strings, bools and Nones, is already JSON.
        kinds = set(map(type, obj))  # in C: a third of the time of all() over a generator, in Pyodide
        if kinds == {float} and math.isfinite(sum(obj)) or kinds <= _PLAIN:
            return list(obj)
        return [to_json_value(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biu" or (obj.dtype.kind == "f" and obj.dtype.itemsize <= 8 and np.isfinite(obj).all()):
            return obj.tolist()  # plain ints, bools and finite floats already: no need to look at each
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


def sample_param(p, rng: random.Random):
    """A value a reader can produce with parameter ``p``'s control (sliders land on steps)."""
    if p.kind == "checkbox":
        return rng.random() < 0.5
    if p.kind == "select":
        return rng.choice(list(p.options))
    if p.kind == "tokens":  # what a reader types: ids, sometimes a repeated span, spaces or commas
        lo, hi, n = int(p.min), int(p.max), rng.randint(2, p.shape[0])
        ids = [rng.randint(lo, hi) for _ in range(n)]
        if n >= 6 and rng.random() < 0.5:
            span = ids[: n // 2]
            ids = span + span
        return rng.choice([" ", ", "]).join(map(str, ids))
    if p.kind == "matrix":
        return [[round(rng.uniform(-5, 5), 3) for _ in range(p.shape[1])] for _ in range(p.shape[0])]
    if p.kind == "range" and p.step:
        k = rng.randint(0, int(round((p.max - p.min) / p.step)))
        return min(p.max, p.min + k * p.step)
    return rng.uniform(p.min, p.max)


def sample_params(demo, rng: random.Random) -> dict:
    """Random settings a reader could give ``demo``: what the tests and the build's measures run.

    >>> import random
    >>> from headspace_site.demos import REGISTRY
    >>> sorted(sample_params(REGISTRY["polarizer"], random.Random(0)))
    ['theta']
    """
    return {p.name: sample_param(p, rng) for p in demo.params}
