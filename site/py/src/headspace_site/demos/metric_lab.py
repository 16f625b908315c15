"""The metric lab: two synthetic heads whose geometry the reader sets, scored by every metric.

The residual stream has ``d_model = 8`` dimensions. In our row convention a writer
``A`` [d_model, d_model] (an earlier head's ``W_V W_O``) sends ``x`` to ``x A``,
which lies in A's row space W; a reader ``B`` (a later head's ``W_Q W_K^T``)
sees ``x B``, which depends only on the part of ``x`` in B's column space R.
Both have rank ``r`` (the ``rank`` parameter, 1 to 4):

    R = span(e_1, ..., e_r)
    w_i = cos(angle) e_i + sin(angle) e_(r+i)            (i = 1..r)
    A = P diag(sigma) [w_1 ... w_r]^T,   B = [e_1 ... e_r] diag(tau) Q^T

with fixed seeded orthonormal ``P, Q`` [8, r]. Every principal angle between W
and R equals ``angle``, and ``A B = cos(angle) P diag(sigma * tau) Q^T``.
Singular values decay as ``sigma_i = exp(-decay (i - 1))``; ``tau`` is the
same list (``order = "same"``: the loudest written direction is the most
attended one) or reversed. ``stretch`` applies a change of residual basis T
of that condition number (``symmetry.adversarial_basis``, seeded by ``seed``):
``A -> T^-1 A T``, ``B -> T^-1 B T^-T``, ``W_E -> W_E T``, ``W_U -> T^-1 W_U``.
It leaves the model's function unchanged; stretch 1 applies no change of basis.

Outputs:

- ``scores``: ``{metric: composition_score(A, B, metric)}`` for every metric of
  the library. ``frobenius_baseline`` subtracts the mean score of random
  products of rank-r Gaussian factors (``ranks=(r, r)``, as
  ``all_composition_scores`` does for heads); ``token`` uses a fixed seeded
  ``W_E`` [16, 8] and ``W_U`` [8, 16] and reads B as a QK circuit.
- ``axioms``: ``headspace.axioms.axiom_table(seed=seed)``: which metric meets
  Lieberum's axioms 1-3 and Axiom 4 of Snell, by seeded random trials. It is
  the very function the property tests call; it depends only on ``seed``, and
  is cached per seed. A new seed costs about 60 ms natively (more in the
  browser), so ``write_axioms()`` computes the table of every seed the slider
  offers once into ``metric_lab_axioms.json``, package data of the wheel; the
  tests recompute every seed and compare, and a seed the file lacks is computed.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["metric-lab"].run({"angle": 0, "decay": 0.5, "order": "same", "rank": 2})["outputs"]
>>> round(out["scores"]["svd_bound"], 12), round(out["scores"]["subspace"], 12)
(1.0, 1.0)
>>> {k: v["meets"] for k, v in out["axioms"]["subspace"].items()}
{'1': False, '1-strict': True, '2': True, '3': True, '4': False}
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from headspace.axioms import AXIOMS, axiom_table
from headspace.composition import METRICS, composition_score
from headspace.symmetry import adversarial_basis, random_orthogonal

from headspace_site.figure.style import METRIC_COLORS, two_panels
from headspace_site.figure.outputs import AXIOM_NAMES, METRIC_NAMES
from headspace_site.figure.registry import Output, Param, register

D_MODEL = 8
D_VOCAB = 16
#: The seeds the seed slider offers (its Param below): the committed table holds each one's axioms.
SEEDS = range(10)
#: ``{seed: axiom_table(seed=seed)}``, written by ``write_axioms()``; the wheel ships it.
AXIOMS_FILE = Path(__file__).with_name("metric_lab_axioms.json")


@lru_cache(maxsize=None)
def _frames():
    """Fixed seeded input side P, output side Q [8, 8] (orthonormal columns) and W_E, W_U."""
    rng = np.random.default_rng(6)
    P, Q = random_orthogonal(D_MODEL, rng), random_orthogonal(D_MODEL, rng)
    W_E = rng.standard_normal((D_VOCAB, D_MODEL)) / np.sqrt(D_MODEL)
    W_U = rng.standard_normal((D_MODEL, D_VOCAB)) / np.sqrt(D_MODEL)
    return P, Q, W_E, W_U


def heads(angle: float, decay: float, order: str, rank: int, stretch: float = 1, seed: int = 0):
    """``(A, B, W_E, W_U)`` for the lab's setting (see the module docstring).

    >>> A, B, _, _ = heads(60, 0.0, "same", 1)
    >>> round(float(np.linalg.norm(A @ B) / (np.linalg.norm(A) * np.linalg.norm(B))), 12)  # cos 60
    0.5
    """
    P, Q, W_E, W_U = _frames()
    r = int(rank)
    t = np.deg2rad(angle)
    eye = np.eye(D_MODEL)
    read = eye[:, :r]                                            # R: the first r axes
    write = np.cos(t) * eye[:, :r] + np.sin(t) * eye[:, r:2 * r]  # W: turned by `angle` away from R
    sigma = np.exp(-decay * np.arange(r))
    tau = sigma if order == "same" else sigma[::-1]
    A = (P[:, :r] * sigma) @ write.T
    B = (read * tau) @ Q[:, :r].T
    if stretch != 1:
        T = adversarial_basis(D_MODEL, condition=stretch, seed=seed)
        Ti = np.linalg.inv(T)
        A, B, W_E, W_U = Ti @ A @ T, Ti @ B @ Ti.T, W_E @ T, Ti @ W_U
    return A, B, W_E, W_U


def scores(A, B, W_E, W_U, rank: int) -> dict:
    """Every metric of the library on the pair (A, B)."""
    kw = {"frobenius_baseline": {"ranks": (rank, rank)}, "token": {"W_E": W_E, "W_U": W_U, "mode": "Q"},
          "whitened": {"W_E": W_E, "mode": "Q"}}
    return {m: float(composition_score(A, B, m, **kw.get(m, {}))) for m in METRICS}


def write_axioms(path: Path = AXIOMS_FILE) -> Path:
    """Compute ``axiom_table`` for every seed of the slider and save it (about 1 s natively)."""
    path.write_text(json.dumps({"numpy": np.__version__, "tables": {str(s): axiom_table(seed=s) for s in SEEDS}},
                               separators=(",", ":")) + "\n")
    return path


@lru_cache(maxsize=1)
def _committed() -> dict:
    """The committed tables by seed, or {} when this copy of the package lacks the file."""
    try:
        return {int(s): t for s, t in json.loads(AXIOMS_FILE.read_text())["tables"].items()}
    except (OSError, ValueError, KeyError):
        return {}


def axioms(seed: int) -> dict:
    """``axiom_table(seed=seed)`` from ``headspace.axioms``: from the committed table, else computed
    (its verdicts cached per seed)."""
    return _committed().get(int(seed)) or axiom_table(seed=int(seed))


@lru_cache(maxsize=4096)
def _scores(angle, decay, order, rank, stretch, seed) -> tuple:
    s = scores(*heads(angle, decay, order, rank, stretch, seed), rank)
    return tuple(s.items())


@register(
    "metric-lab", "Metric lab: every score and every axiom, on two heads you control",
    key='Bars: each score of the pair. Grid: each score (row) against each axiom (column): ✓ proved, ✓? no counterexample, ✗ fails.',
    params=[
        Param("angle", "Angle between write and read spaces", "range", 30, min=0, max=90, step=1, unit="°",
              help="every principal angle between the space A writes and the space B reads"),
        Param("decay", "Singular-value decay", "range", 0.5, min=0, max=2, step=0.05,
              help="singular values fall as exp(-decay·i); 0 makes them all equal",
              active_when={"rank": [2, 3, 4]}, inactive="Only with rank 2 or more"),
        Param("order", "Orders of singular values", "select", "same", options=("same", "reversed"),
              help="whether A's loudest written direction is B's most heeded read direction",
              active_when={"rank": [2, 3, 4], "decay": {"not": [0]}},
              inactive="Only with rank 2 or more and decay above 0"),
        Param("rank", "Rank of each head", "range", 2, min=1, max=4, step=1,
              help="number of directions each head writes or reads (d_model = 8)"),
        Param("stretch", "Residual basis change (condition number)", "select", 1, options=(1, 10, 100, 1000),
              help="rescale the residual stream by T; the model computes the same function"),
        Param("seed", "Seed of the trials", "range", 0, min=SEEDS.start, max=SEEDS.stop - 1, step=1,
              help="seeds the axiom table's random trials and the basis change"),
    ],
    outputs=[
        Output("scores", "scores", "mapping", "the composition score of A with B, by every metric"),
        Output("axioms", "axioms met", "axioms",
               "which metric meets which axiom: ✓ proved, ✓? no counterexample in the trials, ✗ a counterexample",
               fold=True),
        Output("axiom_text", "what each axiom asks", "statements",
               "the grid's columns in words, as hovering a cell tells them", fold=True),
    ],
)
def metric_lab(angle: float, decay: float, order: str, rank: int, stretch: int, seed: int) -> dict:
    s = dict(_scores(float(angle), float(decay), order, int(rank), stretch, int(seed)))
    table = axioms(seed)
    return {"figure": _figure(s, table), "outputs": {"scores": s, "axioms": table, "axiom_text": dict(AXIOMS)}}


def _figure(s: dict, table: dict) -> dict:
    keys_down = list(METRICS)[::-1]                 # first metric on top
    names = [METRIC_NAMES[m] for m in keys_down]
    bars = [{"type": "bar", "orientation": "h", "y": names, "x": [round(s[m], 6) for m in keys_down],
             "marker": {"color": [METRIC_COLORS[m] for m in keys_down]}, "name": "score", "showlegend": False,
             "text": [f"{s[m]:.3f}" for m in keys_down], "textposition": "outside", "cliponaxis": False,
             "hoverinfo": "x+y"}]
    keys = list(AXIOMS)
    label = AXIOM_NAMES
    # 1 = proved, 0.75 = no counterexample in the trials (evidence only), 0 = a counterexample
    level = lambda v: 0 if not v["meets"] else 1 if v["known"] == "proved" else 0.75  # noqa: E731
    z = [[level(table[m][k]) for k in keys] for m in keys_down]
    # short marks that fit a phone's cells; the hover text says it in words
    text = [["✓" if v["meets"] and v["known"] == "proved" else "✓?" if v["meets"] else "✗"
             for v in (table[m][k] for k in keys)] for m in keys_down]
    hover = [[f"{METRIC_NAMES[m]}, Axiom {label[k]}: {'meets' if table[m][k]['meets'] else 'fails'} "
              f"({table[m][k]['known']})<br>{AXIOMS[k]}" for k in keys] for m in keys_down]
    grid = [{"type": "heatmap", "z": z, "x": [label[k] for k in keys], "y": names, "zmin": 0, "zmax": 1,
             "colorscale": [[0, "#f3c6cc"], [0.75, "#e6efc0"], [1, "#bfe6d2"]], "showscale": False,
             "xgap": 3, "ygap": 3, "customdata": hover, "hovertemplate": "%{customdata}<extra></extra>",
             "name": "axioms"}]
    notes = [{"x": label[k], "y": m, "xref": "x2", "yref": "y2", "showarrow": False,
              "text": text[i][j], "font": {"size": 14, "color": "#111111"}}  # on pastel cells in both schemes
             for i, m in enumerate(names) for j, k in enumerate(keys)]
    fig = two_panels(bars, grid, titles=("score of this pair", "axioms"),
                     split=0.5, gap=0.22, height=360,
                     xaxis={"range": [-0.25, 1.25], "zeroline": True, "title": {"text": "score"}},
                     yaxis={"zeroline": False, "automargin": True},
                     xaxis2={"zeroline": False, "showgrid": False, "ticks": "", "title": {"text": "axiom"},
                             "type": "category"},   # "1" and "2" are names, not numbers
                     yaxis2={"zeroline": False, "showgrid": False, "ticks": ""},
                     annotations=notes)
    fig["layout"]["showlegend"] = False
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "l": 130, "t": 50, "b": 50}
    return fig
