"""The faithful token path of one writer and one reader of a shipped model, as a token x token map.

``composition.token_path`` gives the map the model computes from tokens through the writer's OV and
then the reader (Elhage et al.'s virtual weights), with the embedding the heads see
(``headspace.weights.embedding_read``):

* Q: ``W_E A (W_Q W_K^T) W_E^T``: query token (through the writer) x key token;
* K: ``W_E (W_Q W_K^T) A^T W_E^T``: query token x key token (through the writer);
* V: ``W_E A (W_V W_O) W_U``: input token x output logit.

Rows are shown as the reader's query (Q, K) or input token (V). ``copying_fraction`` is the share
of row tokens whose largest entry is their own column (for K with a previous-token writer and an
induction reader: the key whose previous token equals the query token wins). ``token_score`` is the
``token`` metric of the same pair. The heatmap shows the first ``tokens`` tokens; the outputs use
all of them.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["token-path"].run({})["outputs"]
>>> out["copying_fraction"]
1.0
"""

from __future__ import annotations

import numpy as np

from headspace.circuits import diagonal_top_fraction
from headspace.composition import composition_score, token_path as _token_path
from headspace.weights import embedding_read

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, colorbar_ticks, figure
from headspace_site.figure.outputs import head
from headspace_site.figure.registry import Output, Param, ParameterError, register

SCALE = [[0.0, "#2166ac"], [0.5, "#f7f7f7"], [1.0, "#b2182b"]]
#: A map's colour range: this percentile of its entries' sizes; the few larger entries saturate, so a
#: diagonal that is forming shows (at step 800 the K path's diagonal averages 9.9, a third of its
#: largest entry, 29.5, and was faint scaled to that).
SCALE_PERCENTILE = 99


def map_scale(M) -> float:
    """The size a map's colours are scaled to: ``SCALE_PERCENTILE`` of its entries' sizes (1 if all are 0).

    >>> map_scale(np.arange(101.0))
    99.0
    """
    return float(np.percentile(np.abs(M), SCALE_PERCENTILE)) or 1.0


def path_matrix(model: str, step, mode: str, writer: tuple[int, int], reader: tuple[int, int]) -> np.ndarray:
    """[d_vocab, d_vocab]: rows the query (Q, K) or input (V) token, columns the key token or logit."""
    m = shipped.weights(model, step)
    (l1, h1), (l2, h2) = writer, reader
    A = m.W_V[l1, h1] @ m.W_O[l1, h1]
    B = {"Q": m.W_Q[l2, h2] @ m.W_K[l2, h2].T, "K": m.W_K[l2, h2] @ m.W_Q[l2, h2].T,
         "V": m.W_V[l2, h2] @ m.W_O[l2, h2]}[mode]
    M = _token_path(A, B, W_E=embedding_read(m.W_E, m.config.get("normalization_type"), m.eps), W_U=m.W_U, mode=mode)
    return M.T if mode == "K" else M


def _check_layers(writer, reader):
    if reader[0] <= writer[0]:
        raise ParameterError("head2", f"Later head (reads) must be in a later layer than the earlier head; got "
                                      f"{head(*writer)} writing and {head(*reader)} reading")


@register(
    "token-path", "The token path through a writer and a reader",
    key="Row and column: tokens; colour: the path's entry, red raising, blue lowering, pale near zero; ring: each row's largest entry in view.",
    params=[
        shipped.model_param(),
        shipped.mode_param(),
        Param("head1", "Earlier head (writes)", "select", shipped.PREV, options=shipped.HEAD1_OPTIONS,
              help="L0H1 is layer 0, head 1; 'previous-token' is the model's previous-token head"),
        Param("head2", "Later head (reads)", "select", shipped.INDUCTION, options=shipped.HEAD2_OPTIONS,
              help="L1H2 is layer 1, head 2; 'induction' is the model's induction head"),
        Param("step", "Training step", "select", "final", options=shipped.STEP_OPTIONS,
              help="final weights, or a training checkpoint (a model's latest checkpoint not after this step)"),
        Param("tokens", "Tokens shown", "select", 32, options=(16, 32, 64, 128),
              help="the heatmap shows the first this many tokens; the outputs use every token"),
    ],
    outputs=[
        Output("copying_fraction", "copying fraction", "number",
               "the share of row tokens whose largest entry is their own column (on the diagonal)"),
        Output("token_score", "token score", "number", "the token metric of this pair of heads"),
    ],
    needs_models=True,
)
def token_path(model: str, mode: str, head1: str, head2: str, step, tokens: int) -> dict:
    a, b = shipped.parse_head(head1, model), shipped.parse_head(head2, model)
    _check_layers(a, b)
    at = shipped.resolve_step(model, step)
    M = path_matrix(model, at, mode, a, b)
    score = float(shipped.scores(model, at, mode, "token")[a[0], a[1], b[0], b[1]])
    frac = diagonal_top_fraction(M)
    return {"figure": _figure(M[:tokens, :tokens], model, mode, a, b, step, at, frac),
            "outputs": {"copying_fraction": frac, "token_score": score}}


def _figure(M, model, mode, a, b, step, at, frac) -> dict:
    """The path's entries, each row's largest ringed: the diagonal the copying fraction counts shows
    as a line of rings before its colour stands out (one ring a row, so a move redraws in place)."""
    n = M.shape[0]
    lim = map_scale(M)
    rows, cols = {"Q": ("query token (through the writer)", "key token"),
                  "K": ("query token", "key token (through the writer)"),
                  "V": ("input token", "output logit")}[mode]
    heat = {"type": "heatmap", "z": np.round(M, 4).tolist(), "x": list(range(n)), "y": list(range(n)),
            "zmin": round(-lim, 4), "zmax": round(lim, 4), "colorscale": SCALE,
            "colorbar": {"title": {"text": "path"}, "thickness": 12, **colorbar_ticks(round(-lim, 4), round(lim, 4))},
            "name": "token path",
            "hovertemplate": f"{rows[0].split(' (')[0]} %{{y}}<br>{cols[0].split(' (')[0]} %{{x}}"
                             "<br>%{z}<extra></extra>"}
    when = "final weights" if at is None else f"step {at}"
    title = f"{mode} path {head(*a)} → {head(*b)}, {when}"
    rings = {"type": "scatter", "mode": "markers", "x": M.argmax(axis=1).tolist(), "y": list(range(n)),
             "name": "row's largest", "showlegend": False,
             "marker": {"size": 7, "color": "rgba(0,0,0,0)", "line": {"color": COLORS["ink"], "width": 1.5}},
             "hovertemplate": f"{rows[0].split(' (')[0]} %{{y}}: largest at {cols[0].split(' (')[0]} %{{x}}<extra></extra>"}
    return figure([heat, rings], title=title, height=440, showlegend=False,
                  xaxis={"title": {"text": cols}, "zeroline": False, "showgrid": False},
                  yaxis={"title": {"text": rows}, "autorange": "reversed", "zeroline": False,
                         "showgrid": False},
                  annotations=[])
