"""Heads that talk through a shared 2-D channel.

Each writer ``j`` adds its 1-D message ``m_j`` to the channel along the unit
vector ``w_j``; each reader ``i`` reads the channel along the unit vector
``r_i``. The channel holds ``x = sum_j m_j w_j`` and reader ``i`` receives
``r_i . x``, so the readers get ``T m`` with the transfer matrix

    T[i, j] = r_i . w_j = cos(read_i - write_j)      (rows readers, columns writers).

With one pair, ``T`` is the single gain ``cos(read1 - write1)``. With two,
both messages can be recovered from what the readers get when ``T`` is
invertible (its smaller singular value is not zero); each reader hears only
its own writer when ``T`` is diagonal. Outputs:

- ``transfer``: ``T``, readers by writers (1x1 or 2x2).
- ``singular_values``: of ``T``, descending: the gains of the independent
  routes through the channel.
- ``principal_angles``: in degrees (to 1e-9), ascending, between the span of
  the write directions and the span of the read directions. When each side's directions
  are orthonormal their cosines equal ``singular_values``.
- ``crosstalk``: for each reader, the share of the power it receives that
  comes from the other writer (random independent unit-variance messages).

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["communication"].run({"pairs": "one", "write1": 0, "read1": 60})["outputs"]
>>> [[round(g, 12) for g in row] for row in out["transfer"]], [round(a, 9) for a in out["principal_angles"]]
([[0.5]], [60.0])
"""

from __future__ import annotations

import numpy as np

from headspace_site.figure.style import COLORS, arrow, scatter, segments, two_panels
from headspace_site.figure.registry import Output, Param, register


def unit(deg) -> np.ndarray:
    """Unit vectors at angles ``deg`` (degrees) as columns, shape [2, len(deg)]."""
    t = np.deg2rad(np.atleast_1d(np.asarray(deg, dtype=float)))
    return np.stack([np.cos(t), np.sin(t)])


def _basis(m: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """An orthonormal basis of the column space of ``m`` (shape [d, rank])."""
    u, s, _ = np.linalg.svd(m, full_matrices=False)
    return u[:, s > tol * max(1.0, s.max(initial=0.0))]


def principal_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Principal angles in degrees (ascending) between the column spaces of ``a`` and ``b``.

    With orthonormal bases ``Qa``, ``Qb``, the singular values of ``Qa^T Qb``
    are the cosines of the angles: the best-aligned pair of directions first,
    then the best pair orthogonal to those, and so on. Small angles are taken
    from their sines (the singular values of ``Qb - Qa Qa^T Qb``), because
    arccos loses half the digits near 0 (Bjorck and Golub 1973).

    >>> principal_angles(np.eye(2), unit([30, 120])).tolist()   # both span the plane
    [0.0, 0.0]
    >>> principal_angles(unit([0]), unit([75])).round(9).tolist()
    [75.0]
    """
    qa, qb = _basis(np.asarray(a, float)), _basis(np.asarray(b, float))
    if qa.shape[1] < qb.shape[1]:
        qa, qb = qb, qa                              # angles are symmetric; let qb be the smaller space
    if qb.shape[1] == 0:
        return np.zeros(0)
    cos = np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0.0, 1.0)           # descending
    sin = np.clip(np.linalg.svd(qb - qa @ (qa.T @ qb), compute_uv=False)[::-1], 0.0, 1.0)  # ascending
    angles = np.where(cos * cos > 0.5, np.arcsin(sin), np.arccos(cos))
    return np.degrees(angles)


def crosstalk(t: np.ndarray) -> np.ndarray:
    """For each reader (row of ``t``), the share of received power from writers other than its own."""
    power = t * t
    total = power.sum(axis=1)
    own = np.diag(power)
    return np.divide(total - own, total, out=np.zeros_like(total), where=total > 1e-15)


_ANGLE = dict(min=0, max=180, step=1, unit="°")


@register(
    "communication", "Two heads, one channel: how much gets through",
    key="In the channel: writers' directions (solid), readers' (dashed), what each reader picks up (dotted); then what comes through at each gain.",
    params=[
        Param("pairs", "Heads on each side", "select", "one", options=("one", "two"),
              help="one writer and one reader, or two of each sharing the channel"),
        Param("write1", "Writer 1 writes at", "range", 20, **_ANGLE),
        Param("read1", "Reader 1 reads at", "range", 70, **_ANGLE),
        Param("write2", "Writer 2 writes at", "range", 100, help="used with two pairs", **_ANGLE,
              active_when={"pairs": ["two"]}, inactive="Only with two heads on each side"),
        Param("read2", "Reader 2 reads at", "range", 150, help="used with two pairs", **_ANGLE,
              active_when={"pairs": ["two"]}, inactive="Only with two heads on each side"),
        Param("message", "Message phase", "range", 30, min=0, max=360, step=2, unit="°", animate=True,
              help="the messages sent: m₁ = cos, m₂ = sin of this angle"),
    ],
    outputs=[
        Output("transfer", "transfer matrix T", "matrix",
               "what each reader (row) gets from each writer (column): cos(read angle − write angle); "
               "with one pair, the gain", labels=("reader 1", "reader 2"), columns=("writer 1", "writer 2")),
        Output("singular_values", "singular values", "vector",
               "the gains of the independent routes through the channel (of T, largest first)"),
        Output("principal_angles", "principal angles", "vector",
               "the angles between the writers' directions and the readers' directions, smallest first",
               unit="°", digits=4),
        Output("crosstalk", "crosstalk", "vector",
               "for each reader, the share of the power it receives that comes from the other writer",
               labels=("reader 1", "reader 2")),
    ],
)
def communication(pairs: str, write1: float, read1: float, write2: float, read2: float, message: float) -> dict:
    two = pairs == "two"
    w = unit([write1, write2] if two else [write1])     # [2, k] write directions
    r = unit([read1, read2] if two else [read1])        # [2, k] read directions
    t = r.T @ w                                         # readers by writers
    sv = np.linalg.svd(t, compute_uv=False)
    phase = np.deg2rad(message)
    m = np.array([np.cos(phase), np.sin(phase)])[: w.shape[1]]
    x = w @ m                                           # the channel's contents
    received = r.T @ x
    outputs = {"transfer": t, "singular_values": sv, "principal_angles": np.round(principal_angles(w, r), 9),
               "crosstalk": crosstalk(t)}
    return {"figure": _figure(w, r, m, x, received, t, two), "outputs": outputs}


_WRITERS = (COLORS["blue"], COLORS["orange"])
_READERS = (COLORS["green"], COLORS["purple"])


def _figure(w, r, m, x, received, t, two) -> dict:
    k = w.shape[1]
    left = []
    for i in range(k):
        left.append(scatter(*np.outer(r[:, i], [-1.6, 1.6]), name=f"reader {i + 1} reads along",
                            color=_READERS[i], mode="lines",
                            line={"color": _READERS[i], "width": 2, "dash": "dash"}))
    for j in range(k):
        left.append(arrow(w[:, j], f"writer {j + 1} writes along", _WRITERS[j], width=2.5))
    feet = r * received                                 # where each reader's projection lands
    left += [segments(np.repeat(x[:, None], k, axis=1), feet, name="what each reader picks up",
                      color=COLORS["muted"], width=1.5, showlegend=False),
             arrow(x, "channel now: x", COLORS["ink"], width=2),
             scatter(*feet, name="received", mode="markers", marker={"color": list(_READERS[:k]), "size": 10},
                     showlegend=False)]

    if two:
        circle = np.stack([np.cos(np.linspace(0, 2 * np.pi, 73)), np.sin(np.linspace(0, 2 * np.pi, 73))])
        ellipse = t @ circle
        u, s, _ = np.linalg.svd(t)
        axes = u * s
        right = [scatter(*circle, name="sent (m₁, m₂)", color=COLORS["muted"], mode="lines"),
                 scatter(*ellipse, name="received T m", color=COLORS["blue"], mode="lines"),
                 segments(-axes, axes, name="singular values", color=COLORS["red"], width=2,
                          dash="solid"),
                 segments(m[:, None], received[:, None], name="", color=COLORS["muted"], width=1,
                          showlegend=False),
                 scatter(*m[:, None], name="sent now", mode="markers", showlegend=False,
                         marker={"color": COLORS["ink"], "size": 10, "symbol": "circle-open"}),
                 scatter(*received[:, None], name="received now", color=COLORS["ink"], size=9, showlegend=False)]
        axes2 = dict(xaxis2={"range": [-2.1, 2.1], "title": {"text": "message 1 / reader 1"}},
                     yaxis2={"range": [-2.1, 2.1], "title": {"text": "message 2 / reader 2"}})
        title = "sent (circle) → received (ellipse)"
    else:
        g = float(t[0, 0])
        right = [scatter([-1, 1], [-1, 1], name="gain 1", color=COLORS["muted"], mode="lines",
                         line={"color": COLORS["muted"], "width": 1.5, "dash": "dash"}),
                 scatter([-1, 1], [-g, g], name=f"gain {g:.2f}", color=COLORS["blue"], mode="lines", width=3),
                 scatter([m[0]], [received[0]], name="now", color=COLORS["ink"], size=10, showlegend=False)]
        axes2 = dict(xaxis2={"range": [-1.1, 1.1], "title": {"text": "writer sends m₁"}},
                     yaxis2={"range": [-1.1, 1.1], "title": {"text": "reader gets"}})
        title = "sent → received"
    return two_panels(left, right, titles=("the shared channel", title), equal_axes=(True, True),
                      height=420, xaxis={"range": [-1.6, 1.6]}, yaxis={"range": [-1.6, 1.6]}, **axes2)
