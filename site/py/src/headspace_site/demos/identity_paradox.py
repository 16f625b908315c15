"""The identity paradox: a map that reads exactly what it writes scores d^-1/2.

Compose the identity ``I_d`` with itself. It writes to every direction of a
d-dimensional space and reads from every direction, with equal weight, so any
sensible measure of "reads what the other writes" should give it full marks.
The Frobenius score of Elhage et al. (2021) gives

    ||I I||_F / (||I||_F ||I||_F) = sqrt(d) / (sqrt(d) sqrt(d)) = d^-1/2,

which falls to 1/32 at d = 1024. The same score reaches 1 for a pair of
rank-1 matrices whose rows (left) and columns (right) are constant: here the
all-ones matrix ``J_d`` with itself, ``||J J||_F = d ||J||_F``.

Outputs, each from ``headspace.composition`` (``composition_score`` on
``I_d, I_d``):

- ``frobenius``: ``d**-0.5``.
- ``frobenius_baseline``: the Frobenius score minus the mean score of random
  Gaussian d x d pairs (64 seeded draws). Random pairs also score about
  ``d**-0.5`` (``E||GH||^2 / (E||G||^2 E||H||^2) = 1/d``), so the corrected
  identity scores about 0: no more composition than chance.
- ``random_frobenius``: that random mean.
- ``svd_bound``: 1 (singular values all 1, same basis, same order).
- ``subspace``: 1 (the write space lies inside the read space).
- ``rank_one_frobenius``: the Frobenius score of ``J_d`` with ``J_d``: 1.

The token metric is left out: it needs an embedding and an unembedding.

Scores for d up to 32 are computed when asked. Above that the dense d x d
algebra (SVDs of 1024 x 1024 matrices, 64 random 1024 x 1024 products) takes
seconds natively and far longer in the browser, so those rows are computed
once with ``identity_scores`` (the same library calls) by
``python -m headspace_site.demos.identity_paradox`` into ``identity_table.json``,
committed data that ships in the wheel; the tests recompute every row and
compare. Without that file the rows are computed on demand.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["identity-paradox"].run({"d": 16})["outputs"]
>>> out["frobenius"], out["svd_bound"], out["subspace"], out["rank_one_frobenius"]
(0.25, 1.0, 1.0, 1.0)
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from headspace.composition import composition_score, random_baseline

from headspace_site.figure.style import COLORS, figure, scatter
from headspace_site.figure.registry import Output, Param, register

#: The dimensions offered: powers of two from 1 to 1024 (a log scale).
DIMS = tuple(2 ** p for p in range(11))
#: Output keys of one row, in the order of a table row.
KEYS = ("frobenius", "frobenius_baseline", "svd_bound", "subspace", "random_frobenius", "rank_one_frobenius")
#: Largest d computed on demand; larger rows come from the committed table.
LIVE_MAX = 32

#: The rows for d > LIVE_MAX, written by ``write_table()`` (run this module); the wheel ships it.
TABLE_FILE = Path(__file__).with_name("identity_table.json")


def write_table(path: Path = TABLE_FILE) -> Path:
    """Compute every row with the library (the largest d costs most) and save it."""
    rows = {str(d): identity_scores(d) for d in DIMS}
    path.write_text(json.dumps({"numpy": np.__version__, "rows": rows}, indent=1))
    return path


@lru_cache(maxsize=1)
def _table() -> dict:
    """The committed rows, or {} when this copy of the package lacks the file."""
    try:
        rows = json.loads(TABLE_FILE.read_text())["rows"]
    except (OSError, ValueError, KeyError):
        return {}
    return {int(d): tuple(row[k] for k in KEYS) for d, row in rows.items()}


def identity_scores(d: int) -> dict:
    """Every score of ``I_d`` composed with itself, and of ``J_d`` (all ones) with itself.

    >>> identity_scores(4)["frobenius"], identity_scores(4)["svd_bound"]
    (0.5, 1.0)
    """
    if d not in DIMS:
        raise ValueError(f"d must be one of {', '.join(map(str, DIMS))}; got {d!r}")
    eye, ones = np.eye(d), np.ones((d, d))
    out = {m: composition_score(eye, eye, m) for m in ("frobenius", "frobenius_baseline", "svd_bound", "subspace")}
    out["random_frobenius"] = random_baseline((d, d), (d, d))[0]
    out["rank_one_frobenius"] = composition_score(ones, ones, "frobenius")
    return {k: float(out[k]) for k in KEYS}


@lru_cache(maxsize=None)
def _row(d: int) -> tuple:
    """One row: computed now for small d; for large d from the committed table
    (computed by the same calls), or computed now if there is none."""
    if d > LIVE_MAX and d in _table():
        return _table()[d]
    row = identity_scores(d)
    return tuple(row[k] for k in KEYS)


@register(
    "identity-paradox", "The identity composed with itself",
    key='Each line: one score against the matrix size d (log scale); the ring marks the d chosen.',
    params=[
        Param("d", "Dimension d", "select", 64, options=DIMS,
              help="size of the identity matrix I (and of the all-ones matrix J)"),
    ],
    outputs=[
        Output("frobenius", "Frobenius of I", "number", "the Frobenius score of the identity with itself: <i>d</i><sup>−1/2</sup>"),
        Output("frobenius_baseline", "baseline-corrected of I", "number",
               "the Frobenius score minus the mean score of random pairs of the same size"),
        Output("svd_bound", "SVD bound of I", "number", "the score with the singular-value bound as denominator"),
        Output("subspace", "subspace of I", "number", "how much of the write space lies in the read space"),
        Output("random_frobenius", "Frobenius of random pairs", "number",
               "the mean Frobenius score of pairs of random Gaussian d × d matrices"),
        Output("rank_one_frobenius", "Frobenius of J", "number",
               "the Frobenius score of the all-ones matrix J with itself"),
    ],
)
def identity_paradox(d: int) -> dict:
    outputs = dict(zip(KEYS, _row(d)))
    rows = {k: [_row(x)[i] for x in DIMS] for i, k in enumerate(KEYS)}
    logd = np.log2(DIMS)
    traces = [
        scatter(logd, rows["svd_bound"], name="SVD bound and subspace of I (both 1)", color=COLORS["green"],
                mode="lines+markers", size=6),
        scatter(logd, rows["rank_one_frobenius"], name="Frobenius of J (all ones, rank 1)", color=COLORS["purple"],
                mode="lines+markers", size=6, line={"color": COLORS["purple"], "width": 2, "dash": "dot"}),
        scatter(logd, rows["frobenius"], name="Frobenius of I = d<sup>−1/2</sup>", color=COLORS["blue"],
                mode="lines+markers", size=6),
        scatter(logd, rows["random_frobenius"], name="Frobenius of random pairs", color=COLORS["muted"],
                mode="lines", line={"color": COLORS["muted"], "width": 3, "dash": "dash"}),
        scatter(logd, rows["frobenius_baseline"], name="baseline-corrected of I", color=COLORS["orange"],
                mode="lines+markers", size=6),
    ]
    here = np.log2(d)
    traces.append(scatter([here] * 3, [outputs["frobenius"], outputs["frobenius_baseline"], outputs["svd_bound"]],
                          name=f"d = {d}", color=COLORS["ink"], size=11, showlegend=False,
                          marker={"size": 12, "color": "rgba(0,0,0,0)", "line": {"color": COLORS["ink"], "width": 2}}))
    ticks = list(range(11))
    fig = figure(traces, height=400,
                 xaxis={"title": {"text": "dimension d"}, "tickvals": ticks, "ticktext": [str(x) for x in DIMS],
                        "range": [-0.3, 10.3], "zeroline": False},
                 yaxis={"title": {"text": "score"}, "range": [-0.08, 1.08]},
                 annotations=[{"x": here, "y": outputs["frobenius"], "text": f"{outputs['frobenius']:.4g}",
                               "showarrow": True, "arrowhead": 0, "ax": 30, "ay": -24, "font": {"size": 12}}])
    fig["layout"]["margin"]["t"] = 90
    return {"figure": fig, "outputs": outputs}


if __name__ == "__main__":  # python -m headspace_site.demos.identity_paradox: rewrite the committed table
    print(write_table())
