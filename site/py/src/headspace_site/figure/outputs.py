"""What a figure's outputs mean, and how the page prints them: one ``Output`` per key.

A demo declares each output's ``label`` (words, as the page names it), a one-sentence ``help``
the page shows beside the value, and its ``kind``, which picks how the value is printed:

========== ================================ =========================================
kind       value                            printed as
========== ================================ =========================================
number     a float (``none``: when None)    ``0.433``, ``−1.5``, ``3.9 × 10⁻¹⁶``, unit
integer    an int                           ``2``
boolean    a bool                           ``yes`` / ``no``
vector     a list of numbers                ``50°`` or ``0.643, 0.121``, or labelled
matrix     a list of rows                   a bracketed grid, columns aligned
head-pair  ``[l1, h1, l2, h2]``             ``L0H1 → L1H2``
mapping    ``{name: number}``               ``Frobenius 0.675 · SVD bound 0.866``
layer-head ``[layer][head]``                a table: layers down, heads across
head-pairs ``[l1][h1][l2][h2]``             a table: writers down, readers across
series     ``{name: [one per step]}``       a table: steps (output ``index``) down
steps      a list of training steps         ``18 checkpoints, step 0 to 3000``
sequence   one number per position          position and value, wrapping
paths      ``{path: number}``               a table; ``0.1>1.2`` reads ``L0H1 → L1H2``
axioms     ``{metric: {axiom: verdict}}``   a table of ✓, ✓? and ✗
statements ``{name: sentence}``             a table: each name and what it says
tensor     any nested list                  its shape, axes named by ``labels``
========== ================================ =========================================

``format_html(value, outputs)`` is the one formatter of every runtime: the build prints the
prerendered outputs with it and the browser's worker returns the same HTML with each result. It
escapes every text it prints; its markup is phrasing content (spans with ARIA table roles), so it
may sit inside ``<output>``. The exact JSON stays in the page's ``data-value``.

>>> Output("jones", "Jones matrix", "matrix", "the filter's matrix").text([[0.75, 0.433], [0.433, 0.25]])
'[0.750 0.433; 0.433 0.250]'
>>> Output("top_pair", "top pair", "head-pair", "the largest").text([0, 1, 1, 2])
'L0H1 → L1H2'
>>> number(-3.885780586188048e-16, floor=0), number(12345.6), number(0.5, unit="°")
('−3.9 × 10⁻¹⁶', '12,346', '0.5°')
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass

# One name per score and axiom, everywhere a reader looks; demos import them from here too.
from .names import AXIOM_NAMES, METRIC_NAMES, words  # noqa: F401

KINDS = ("number", "integer", "boolean", "vector", "matrix", "head-pair", "mapping", "layer-head",
         "head-pairs", "series", "steps", "sequence", "paths", "axioms", "statements", "tensor", "auto")
MINUS = "\u2212"


def escape(text: str) -> str:
    """``text`` safe inside an element: ``html.escape(text, quote=False)`` without importing
    ``html``, whose entity table is a noticeable share of a figure's first import in Pyodide.

    >>> escape("a < b & c > d")
    'a &lt; b &amp; c &gt; d'
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def verdict(v: dict) -> str:
    """An axiom verdict as the metric lab's grid marks it: ✓ proved, ✓? met in every trial, ✗ not met."""
    return "✓" if v["meets"] and v["known"] == "proved" else "✓?" if v["meets"] else "✗"


def number(x, digits: int = 3, unit: str = "", floor: float = 1e-10) -> str:
    """``x`` to ``digits`` significant digits as a reader writes it: a true minus sign, thousands
    separated, powers of ten below 0.001 and from 100,000 up, ``|x| < floor`` as 0.

    >>> number(0.43301), number(7.832e-05), number(-2.0), number(1e-12), number(2.5e6, unit=" nats")
    ('0.433', '7.8 × 10⁻⁵', '−2', '0', '2.5 × 10⁶ nats')
    >>> number(0.9997), number(0.5), number(0.6301), number(0.0078125), number(9.996)
    ('1.00', '0.5', '0.630', '0.00781', '10.0')
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"number: x must be a finite number; got {x!r}")
    if abs(x) < floor or x == 0:
        return f"0{unit}"
    mag = math.floor(math.log10(abs(x)))
    if mag < -3 or mag >= 5:
        mant = f"{x / 10 ** mag:.{max(digits - 2, 0) + 1}g}"
        if abs(float(mant)) >= 10:                                   # 9.96 rounds up to 10
            mag, mant = mag + 1, f"{x / 10 ** (mag + 1):.{max(digits - 2, 0) + 1}g}"
        return f"{mant.replace('-', MINUS)} × 10{str(mag).translate(_SUPER)}{unit}"
    return column([x], digits, floor)[0] + unit


def column(values, digits: int = 3, floor: float = 1e-10) -> list[str]:
    """Numbers printed to shared decimals, so a column (or a matrix) lines up on its point: the
    largest gets ``digits`` significant digits, and zeros every entry ends in are dropped.

    >>> column([0.75, 0.433, 0.25]), column([2.0, 0.0, 1.0]), column([-1.5, 3.2]), column([0.9997, 0.5])
    (['0.750', '0.433', '0.250'], ['2', '0', '1'], ['−1.5', '3.2'], ['1.00', '0.50'])
    """
    vals = [float(v) for v in values]
    for v in vals:
        if not math.isfinite(v):
            raise ValueError(f"column: every value must be finite; got {v!r}")
    big = max((abs(v) for v in vals if abs(v) >= floor), default=0.0)
    if big == 0:
        return ["0"] * len(vals)
    mag = math.floor(math.log10(big))
    if mag >= 5:
        return [number(v, digits, floor=floor) for v in vals]
    decimals = min(max(digits - 1 - mag, 0), 6)
    if decimals and round(big, decimals) >= 10 ** (mag + 1):          # 9.996 -> 10.0, not 10.00
        decimals -= 1
    texts = [f"{round(v, decimals):,.{decimals}f}" if abs(v) >= floor else f"{0:.{decimals}f}" for v in vals]
    # Zeros every entry ends in go only where they say nothing: each value is exactly that short
    # (0.5, not 0.500), while 0.9997 stays 1.00.
    while decimals and all(t.endswith("0") and (abs(v) < floor or _exact(v, decimals - 1))
                           for t, v in zip(texts, vals)):
        texts, decimals = [t[:-1] for t in texts], decimals - 1
    if not decimals:
        texts = [t.rstrip(".") for t in texts]
    return [_signed(t) for t in texts]


def _exact(v: float, decimals: int) -> bool:
    return abs(v - round(v, decimals)) <= 1e-9 * max(1.0, abs(v))


def _signed(text: str) -> str:
    """A true minus sign, and none on a number that rounded to zero."""
    if text.startswith("-"):
        return text[1:] if not text.strip("-0.,") else MINUS + text[1:]
    return text


def head(layer: int, h: int) -> str:
    """A head as interpretability papers write it: ``L1H2``."""
    return f"L{int(layer)}H{int(h)}"


@functools.lru_cache(maxsize=1024)
def path_label(key: str) -> str:
    """A path of the logit expansion in words: ``"0.1>1.2"`` -> ``"L0H1 → L1H2"``. Cached: a move
    of path-expansion names its 27 paths three times, and the names never change.

    >>> path_label("direct"), path_label("bias"), path_label("none"), path_label("1.3"), path_label("0.1>1.2")
    ('direct', 'biases', 'no term removed', 'L1H3', 'L0H1 → L1H2')
    """
    words = {"direct": "direct", "bias": "biases", "none": "no term removed"}
    if key in words:
        return words[key]
    parts = key.split(">")
    if all(re.fullmatch(r"\d+\.\d+", p) for p in parts):
        return " → ".join(head(*p.split(".")) for p in parts)
    return key


@dataclass(frozen=True)
class Output:
    """One output of a demo: its key in ``run(...)["outputs"]``, what the page calls it, one
    sentence saying what it is, and how to print it (``kind``, see the module docstring).

    ``unit`` follows each number (``"°"``, ``" nats"``); ``digits`` are significant digits;
    values below ``floor`` print as 0 (``floor=0`` keeps rounding error visible); ``none`` is
    printed for a None; ``labels`` name a vector's entries or a matrix's rows, ``columns`` a
    matrix's columns; ``index`` names the output whose values label a series' rows; ``fold``
    puts the value behind a disclosure (a long table).
    """

    key: str
    label: str
    kind: str = "auto"
    help: str = ""
    unit: str = ""
    digits: int = 3
    floor: float = 1e-10
    none: str = "none"
    labels: tuple = ()
    columns: tuple = ()
    index: str = ""
    fold: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Output {self.key!r}: kind must be one of {KINDS}; got {self.kind!r}")
        if not self.key or not self.label:
            raise ValueError(f"Output: key and label must be non-empty; got key={self.key!r}, label={self.label!r}")
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "columns", tuple(self.columns))

    @classmethod
    def of(cls, spec) -> "Output":
        """An ``Output`` as declared, or one made from a bare key (its words as the label)."""
        if isinstance(spec, Output):
            return spec
        if isinstance(spec, str):
            return cls(spec, spec.replace("_", " "))
        raise ValueError(f"an output must be an Output or a key string; got {spec!r}")

    def to_json(self) -> dict:
        return {"label": self.label, "help": self.help, "kind": self.kind, "fold": self.fold}

    # ---- printing -------------------------------------------------------------------------
    def node(self, value, outputs: dict | None = None):
        """``value`` printed: a string, or a ``Pairs`` or ``Table`` of strings."""
        try:
            return getattr(self, "_" + self.kind.replace("-", "_"))(value, outputs or {})
        except (TypeError, KeyError, IndexError, AttributeError, ValueError) as exc:
            raise ValueError(f"output {self.key!r} of kind {self.kind!r} cannot print {_short(value)}: {exc}") from None

    def html(self, value, outputs: dict | None = None) -> str:
        """``value`` as the page shows it: escaped text and spans (phrasing content)."""
        node = self.node(value, outputs)
        return escape(node) if isinstance(node, str) else node.html()

    def text(self, value, outputs: dict | None = None) -> str:
        """The same as plain text (cells by spaces, rows by semicolons): for tests and doctests."""
        node = self.node(value, outputs)
        return node if isinstance(node, str) else node.text()

    def _num(self, x) -> str:
        return self.none if x is None else number(x, self.digits, self.unit, self.floor)

    def _number(self, value, _):
        return self._num(value)

    def _integer(self, value, _):
        return f"{int(value):,}{self.unit}".replace("-", MINUS)

    def _boolean(self, value, _):
        return "yes" if value else "no"

    def _vector(self, value, _):
        items = [self._num(v) for v in value]
        if self.labels and all(v is not None and (v == 0 or 1e-3 <= abs(v) < 1e5) for v in value):
            # labelled values are read side by side: to shared decimals, as a column ("with B 0.940
            # with D 0.500", not "0.940 ... 0.5"); a tiny or huge one keeps its power of ten
            items = [t + self.unit for t in column(value, self.digits, self.floor)]
        if self.labels:
            return Pairs([(self.labels[i] if i < len(self.labels) else str(i), t) for i, t in enumerate(items)])
        return ", ".join(items)

    def _matrix(self, value, _):
        rows = [list(r) for r in value]
        flat = column([v for r in rows for v in r], self.digits, self.floor)
        n = len(rows[0]) if rows else 0
        cells = [[t + self.unit for t in flat[i * n:(i + 1) * n]] for i in range(len(rows))]
        if self.labels or self.columns:
            return Table(cells, [self.labels[i] if i < len(self.labels) else "" for i in range(len(rows))],
                         [self.columns[j] if j < len(self.columns) else "" for j in range(n)], kind="matrix")
        return Table(cells, kind="matrix")

    def _head_pair(self, value, _):
        l1, h1, l2, h2 = value
        return f"{head(l1, h1)} → {head(l2, h2)}"

    def _mapping(self, value, _):
        keys = list(value)
        texts = column([value[k] for k in keys], self.digits, self.floor) if keys else []
        return Pairs([(words(k), t + self.unit) for k, t in zip(keys, texts)])

    def _layer_head(self, value, _):
        rows = [list(r) for r in value]
        n = max((len(r) for r in rows), default=0)
        texts = column([v for r in rows for v in r], self.digits, self.floor)
        cells = [texts[i * n:(i + 1) * n] for i in range(len(rows))]
        return Table(cells, [f"layer {i}" for i in range(len(rows))], [f"head {j}" for j in range(n)])

    def _head_pairs(self, value, _):
        n_layers, n_heads = len(value), len(value[0])
        writers = [(l, h) for l in range(n_layers - 1) for h in range(n_heads)]
        readers = [(l, h) for l in range(1, n_layers) for h in range(n_heads)]
        shown = [value[a][b][c][d] for a, b in writers for c, d in readers if c > a]
        texts = iter(column(shown, self.digits, self.floor))
        cells = [[next(texts) + self.unit if c > a else "" for c, d in readers] for a, b in writers]
        return Table(cells, [head(*w) for w in writers], [head(*r) for r in readers], corner="writer → reader")

    def _series(self, value, outputs):
        names = list(value)
        steps = outputs.get(self.index) or list(range(len(value[names[0]]) if names else 0))
        cols = {n: column(value[n], self.digits, self.floor) for n in names}
        cells = [[cols[n][i] for n in names] for i in range(len(steps))]
        return Table(cells, [f"{s:,}" if isinstance(s, int) else str(s) for s in steps], [words(n) for n in names],
                     corner=self.index.rstrip("s") or "")

    def _steps(self, value, _):
        steps = list(value)
        if not steps:
            return "no checkpoints"
        return f"{len(steps)} checkpoints, step {steps[0]:,} to {steps[-1]:,}"

    def _sequence(self, value, _):
        texts = column(list(value), self.digits, self.floor)
        return Pairs([(str(i), t + self.unit) for i, t in enumerate(texts)], kind="sequence")

    def _paths(self, value, _):
        keys = list(value)
        texts = column([value[k] for k in keys], self.digits, self.floor)
        return Table([[t + self.unit] for t in texts], [path_label(k) for k in keys], [self.label], corner="path")

    def _axioms(self, value, _):
        metrics = list(value)
        axioms = list(value[metrics[0]]) if metrics else []
        cells = [[verdict(value[m][a]) for a in axioms] for m in metrics]
        return Table(cells, [words(m) for m in metrics], [words(a) for a in axioms], corner="axiom")

    def _statements(self, value, _):
        return Table([[str(value[k])] for k in value], [words(k) for k in value], [self.label], corner="")

    def _tensor(self, value, _):
        shape, v = [], value
        while isinstance(v, list):
            shape.append(len(v))
            v = v[0] if v else None
        axes = [f"{n} {self.labels[i]}" if i < len(self.labels) else str(n) for i, n in enumerate(shape)]
        return " × ".join(axes) + "; every value is in the menu's data"

    def _auto(self, value, _):
        return legacy(value)


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) < 60 else text[:57] + "..."


@dataclass(frozen=True)
class Pairs:
    """Name-value pairs that wrap as the column allows: ``name value · name value``."""

    items: list
    kind: str = "pairs"

    def html(self) -> str:
        return f'<span class="out-{self.kind}">' + "".join(
            f'<span class="out-pair"><span class="out-key">{escape(str(k))}</span> '
            f'{escape(v)}</span>' for k, v in self.items) + "</span>"

    def text(self) -> str:
        return " · ".join(f"{k} {v}" for k, v in self.items)


@dataclass(frozen=True)
class Table:
    """Cells in rows, optionally headed: spans with ARIA table roles in the page (``<output>``
    holds phrasing content only), cells by spaces and rows by semicolons as text."""

    cells: list
    rows: list | None = None
    cols: list | None = None
    kind: str = "table"
    corner: str = ""

    def html(self) -> str:
        e = lambda t: escape(str(t))  # noqa: E731
        labelled = " out-labelled" if self.kind == "matrix" and (self.rows or self.cols) else ""
        out = [f'<span class="out-{self.kind}{labelled}" role="table">']
        if self.cols is not None:
            out.append('<span class="out-head" role="row">')
            if self.rows is not None:
                out.append(f'<span class="out-corner" role="columnheader">{e(self.corner)}</span>')
            # a long name (frobenius_baseline) may break after an underscore: narrower tables on a phone
            out += [f'<span role="columnheader">{e(c).replace("_", "_<wbr>")}</span>' for c in self.cols]
            out.append("</span>")
        for i, row in enumerate(self.cells):
            out.append('<span role="row">')
            if self.rows is not None:
                out.append(f'<span role="rowheader">{e(self.rows[i])}</span>')
            out += [f'<span role="cell">{e(c)}</span>' for c in row]
            out.append("</span>")
        out.append("</span>")
        return "".join(out)

    def text(self) -> str:
        lines = []
        if self.cols is not None:
            lines.append(" ".join(([self.corner] if self.rows is not None else []) + list(self.cols)).strip())
        for i, row in enumerate(self.cells):
            lines.append(" ".join(([self.rows[i]] if self.rows is not None else []) + [c or "·" for c in row]))
        return "[" + "; ".join(lines) + "]"


def legacy(value) -> str:
    """An undeclared output, printed as before: numbers to 4 significant digits, lists in
    brackets, mappings in braces.

    >>> legacy({"b": [0.123456, 1e-05, 2e-12], "a": True, "n": 3000})
    '{b: [0.1235, 1e-05, 0], a: true, n: 3000}'
    """
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return "0" if abs(value) < 1e-10 else f"{float(value):.4g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {legacy(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(legacy(v) for v in value) + "]"
    return str(value)
