"""Two subspaces placed at random in many dimensions are far apart: their principal angles.

A writer's space ``W`` and a reader's space ``R``, each of dimension ``k`` in a stream of ``n``
dimensions, are spanned by seeded Gaussian ``n x k`` matrices. ``shared`` of R's spanning vectors
are replaced by W's, so the two spaces share that many directions (angles of 0°): a pair that
really communicates. The figure places each principal angle ``theta_i`` on the curve
``cos^2 theta``, with the mean of ``cos^2 theta_i``, which is the ``subspace`` score of the pair,
and the chance level ``k / n``, the expected mean for two random subspaces.

Outputs:

- ``principal_angles``: the k angles, in degrees, ascending (``axioms.principal_angles``).
- ``mean_cos2``: their mean squared cosine, the ``subspace`` score of a writer writing W and a
  reader reading R.
- ``chance``: ``k / n``.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["random-subspaces"].run({"n": 128, "k": 4, "shared": 2})["outputs"]
>>> [round(a, 9) for a in out["principal_angles"][:2]], out["chance"]
([0.0, 0.0], 0.03125)
"""

from __future__ import annotations

import functools

import numpy as np

from headspace.axioms import principal_angles

from headspace_site.figure.style import COLORS, figure, scatter
from headspace_site.figure.registry import Output, Param, register

_CURVE = np.linspace(0.0, 90.0, 91)


def spaces(n: int, k: int, shared: int, seed: int):
    """Spanning matrices ``(W, R)`` [n, k] of the two spaces; R's first ``shared`` columns are W's."""
    rng = np.random.default_rng(seed)
    W, R = rng.standard_normal((n, k)), rng.standard_normal((n, k))
    R[:, :shared] = W[:, :shared]
    return W, R


@functools.lru_cache(maxsize=32)
def _angles(shared: int, n: int, k: int, seed: int) -> np.ndarray:
    """The principal angles of ``spaces(n, k, shared, seed)`` in degrees, to 1e-9 (read-only).

    Cached, as they depend on nothing else: two QRs and two SVDs of 768 x 64 matrices are too slow
    for a slider move in Pyodide, and a reader drags ``shared`` back and forth over its five values.

    >>> _angles(2, 128, 4, 0)[:2].tolist(), _angles(2, 128, 4, 0).flags.writeable
    ([0.0, 0.0], False)
    """
    W, R = spaces(n, k, shared, seed)
    angles = np.round(principal_angles(W, R), 9) + 0.0
    angles.flags.writeable = False
    return angles


@register(
    "random-subspaces", "Principal angles between a writer's and a reader's space, placed at random",
    key='Dots: each principal angle θ at its cos²θ; dashed: their mean; dotted: chance, k/n.',
    params=[
        Param("shared", "Shared directions", "range", 0, min=0, max=4, step=1,
              help="how many directions the reader's space takes from the writer's"),
        Param("n", "Stream dimensions n", "select", 768, options=(128, 256, 768)),
        Param("k", "Head dimensions k", "select", 64, options=(4, 16, 64)),
        Param("seed", "Seed", "range", 0, min=0, max=9, step=1, help="another random pair of spaces"),
    ],
    outputs=[
        Output("principal_angles", "principal angles", "vector",
               "the k angles between the writer's and the reader's spaces, smallest first", unit="°",
               fold=True),
        Output("mean_cos2", "mean cos²", "number",
               "the mean squared cosine of the principal angles: the subspace score of the pair"),
        Output("chance", "chance k/n", "number",
               "the mean squared cosine expected of two spaces placed at random"),
    ],
)
def random_subspaces(shared: int, n: int, k: int, seed: int) -> dict:
    angles = _angles(shared, n, k, seed)
    cos2 = np.cos(np.deg2rad(angles)) ** 2
    mean, chance = float(cos2.mean()), k / n
    traces = [scatter(_CURVE, np.cos(np.deg2rad(_CURVE)) ** 2, name="cos²θ curve", color=COLORS["muted"],
                      mode="lines", width=1.5),
              scatter([0, 90], [chance, chance], name="chance k/n", color=COLORS["ink"], mode="lines",
                      line={"color": COLORS["ink"], "width": 1.5, "dash": "dot"}),
              scatter([0, 90], [mean, mean], name="mean cos²", color=COLORS["purple"], mode="lines",
                      line={"color": COLORS["purple"], "width": 2, "dash": "dash"}),
              scatter(angles, cos2, name="principal angles", color=COLORS["blue"], size=8, opacity=0.8,
                      hovertemplate="θ = %{x:.1f}°<extra></extra>", hoverinfo=None)]
    fig = figure(traces, title=f"mean cos² {mean:.3f}, chance {chance:.3f}", height=360,
                 xaxis={"range": [-2, 92], "title": {"text": "principal angle θ (°)"}, "fixedrange": True,
                        "dtick": 15},
                 yaxis={"range": [-0.03, 1.03], "title": {"text": "cos²θ"}, "fixedrange": True})
    return {"figure": fig, "outputs": {"principal_angles": angles.tolist(), "mean_cos2": mean, "chance": chance}}
