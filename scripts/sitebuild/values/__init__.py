"""Every number an article states, computed by the library at build time.

One module per article, named by its key (``primer.py``, ``subspaces.py``, ...), holds a
function of that name that returns ``{name: value}``, beside the helpers and checks only that
article uses (``_shared.py``: what several use). ``compute()`` gathers them under the article's
key and scripts/sitebuild/prerender.py writes the result to site/data/values.json. An article prints one with the ``value`` shortcode
(site/layouts/_shortcodes/value.html), which fails the build on an unknown key:

    {{< value "subspaces.gpt2_d_model" >}}             768
    {{< value key="subspaces.chain_10" digits=2 >}}    0.78

A value is a number or a short string. It is never a result typed in by hand:
each one calls ``headspace`` (mostly a registry demo, run exactly as the page
runs it), so the prose cannot drift from the code. The few inputs that come
from outside the library are named constants with their source. Where the
prose makes a claim about a whole range (the same transmission at every
angle), the function checks the claim and fails the build if it breaks. It checks only claims
that are exact (counts, identities, orders of weights); a claim about noisy estimates (a rank
correlation with path ablation on data) holds within an interval, which the build reports
(``headspace.stats``) and tests/site/test_claims.py checks.

tests/site/test_numbers.py fails on a bare number in an article's prose and
on a value that no article uses. To state a new number: add one line to the
article's function in its module here, with a comment saying what it is, and write
``{{< value "article.name" >}}`` where the number goes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np

from . import benchmark, difficult, formalising, measuring, polariser, primer, subspaces

#: Each article's key (``{{< value "key.name" >}}``) and the function of its module that computes its values.
ARTICLES = {"primer": primer.primer, "polariser": polariser.polariser, "subspaces": subspaces.subspaces,
            "measuring": measuring.measuring, "difficult": difficult.difficult,
            "formalising": formalising.formalising, "benchmark": benchmark.benchmark}


def compute() -> dict:
    """``{article: {name: value}}`` for every article, as site/data/values.json holds it."""
    out = {}
    for article, fn in ARTICLES.items():
        values = fn()
        for name, value in values.items():
            ok = isinstance(value, str) and len(value) <= 40 or \
                isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
                and math.isfinite(value)
            if not ok:
                raise ValueError(f"{article}.{name}: a value is a finite number or a short string; got {value!r}")
        out[article] = {name: value.item() if isinstance(value, np.generic) else value
                        for name, value in values.items()}
    return out


ROOT = Path(__file__).resolve().parents[3]
#: Where computed values are kept, one file per state of what they are computed from (compute_cached).
CACHE = Path(os.environ.get("HEADSPACE_CACHE", Path.home() / ".cache" / "headspace")) / "values"
#: What the values are computed from: the library (its models and tables), the site's Python, the
#: build tools (these modules among them), the trainer (measuring reads it), both zoos' files.
SOURCES = ("py/src", "site/py/src", "scripts/sitebuild", "scripts/train_models.py", "zoo", "zoo-next")


def source_hash() -> str:
    """A hash of every file the values are computed from (``SOURCES``), and of Python's and numpy's
    versions: equal hashes, equal values."""
    h = hashlib.sha256(f"python {sys.version}\nnumpy {np.__version__}\n".encode())
    for top in SOURCES:
        for f in sorted((ROOT / top).rglob("*")) if (ROOT / top).is_dir() else [ROOT / top]:
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:24]


def compute_cached() -> dict:
    """``compute()``, kept in ``CACHE`` by ``source_hash()``: the build and the tests that read every
    value share one computation (minutes of CPU) as long as nothing they are computed from changed.
    The JSON round trip gives back exactly what ``compute`` returned (finite floats, ints, strings)."""
    path = CACHE / f"{source_hash()}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    out = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(out), encoding="utf-8")
    os.replace(tmp, path)  # whole or absent: another build may read it at the same time
    return out


def text(value, digits=None, format=None, pct=False) -> str:
    """``value`` as the ``value`` shortcode prints it (its ``digits``, ``format`` and ``pct``): a
    string as it is; ``format``, a printf format; ``digits``, fixed decimals; by default three
    significant figures, and whole numbers and numbers from 1000 up to the nearest integer;
    ``pct``, 100 times the value and a % sign (0 decimals unless ``digits`` says).

    >>> text(0.78125), text(768), text(1234.5), text(0.78125, digits=2), text(0.78125, pct=True)
    ('0.781', '768', '1234', '0.78', '78%')
    >>> text(0.78125, format="%.1e"), text(0.000123456), text(-0.5, pct=True, digits=1), text("L1H0")
    ('7.8 × 10⁻¹', '0.000123', '-50.0%', 'L1H0')
    >>> text(7.0e-07, format="%.1e"), text(3.9e-16)    # powers of ten as the figures' outputs write them
    ('7.0 × 10⁻⁷', '3.9 × 10⁻¹⁶')
    """
    if isinstance(value, str):
        return value
    x = float(value)
    if pct:
        x, digits = 100 * x, 0 if digits is None else digits
    if format:
        try:
            out = format % x
        except (TypeError, ValueError) as exc:
            raise ValueError(f"value: format must be a printf format of one number, e.g. \"%.1e\"; got "
                             f"{format!r} ({exc})") from None
    elif digits is not None:
        out = f"{x:.{int(digits)}f}"
    elif x == math.floor(x) or abs(x) >= 1000:
        out = f"{x:.0f}"
    else:
        out = f"{x:.3g}"
    out = _EXPONENT.sub(lambda m: f"{m[1]} × 10{str(int(m[2])).translate(_SUPERSCRIPT)}", out)
    return f"{out}%" if pct else out


_EXPONENT = re.compile(r"^(-?\d+(?:\.\d+)?)e([+-]\d+)$")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def texts(numbers: dict, uses: list[str]) -> dict:
    """``{use: text}`` for every ``value`` shortcode of the content (``use``: the JSON of its key,
    digits, format and pct, as Hugo's collect pass wrote it), from ``numbers`` (``compute()``)."""
    out = {}
    for use in uses:
        # Hugo's .Get gives "" for a named parameter left out and null for every one of a positional call
        args = {k: (None if v == "" else v) for k, v in json.loads(use).items()}
        article, _, name = args["key"].partition(".")
        out[use] = text(numbers[article][name], args["digits"], args["format"], bool(args["pct"]))
    return out
