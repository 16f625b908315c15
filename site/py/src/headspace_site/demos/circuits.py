"""One head's full OV and QK circuits as token x token maps, its OV eigenvalues, and a pair's token path.

Four panels for a head of a shipped model (``headspace.circuits``):

* OV circuit ``W_E W_V W_O W_U``: row = the token attended to, column = the logit it raises (red)
  or lowers (blue). A copying head has a red diagonal.

Each map is drawn divided by its own scale, ``SCALE_PERCENTILE`` of its entries' sizes (stated in
its title; the hover gives the entry times it), so one colour bar reads all three and a map's
structure shows whatever its size: scaled by its largest entry, the induction head's OV diagonal
(mean 2.3 against a largest entry of 6.6) was faint. Entries beyond the scale saturate.
* QK circuit ``W_E W_Q W_K^T W_E^T``: row = query token, column = key token.
* the OV circuit's nonzero eigenvalues in the complex plane, divided by the largest size
  (stated in the panel's title; the hover gives each eigenvalue itself): a copying head's sit to
  the right of zero; the copying score sums them over the sum of their sizes, which the division
  leaves unchanged.
* the token path from an earlier head (the writer) into this head (``composition.token_path``,
  as the token-path demo draws it); empty (no cell drawn) when this head is in layer 0.

Every head gets the same four panels on the same axes (the eigenvalues on the disc of radius
1.1, the path panel present and blank for a layer-0 head), so switching heads changes only the
data and texts and the page redraws it in place.

The maps use the embedding the heads read (``headspace.weights.embedding_read``) and the folded
``W_U``; positional embeddings are left out, as in Elhage et al. 2021. The heatmaps show the first
``shown`` tokens; the outputs use every token.

Outputs: ``copying_score``; ``ov_diag_rank``, the share of tokens whose own logit is the one the
OV circuit raises most; ``qk_diag_rank``, the share of query tokens whose top key is themselves.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["circuits"].run({})["outputs"]
>>> out["copying_score"] > 0.9
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace.circuits import copying_score, diagonal_top_fraction, full_ov_circuit, full_qk_circuit, ov_eigenvalues
from headspace.weights import embedding_read

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, figure, named_colorbar
from headspace_site.figure.outputs import head
from headspace_site.figure.registry import Output, Param, register
from .token_path import map_scale, path_matrix

#: red positive, blue negative, zero a light grey: opaque, so that zero is seen on the dark scheme too
#: (transparent, it was the page's background and the faint entries vanished into it)
DIVERGING = [[0.0, "#2166ac"], [0.5, "#f7f7f7"], [1.0, "#b2182b"]]

ALL_HEADS = (shipped.PREV, shipped.INDUCTION) + tuple(
    sorted(set(shipped.HEAD1_OPTIONS[1:]) | set(shipped.HEAD2_OPTIONS[1:])))
def _after_layer_0(head: str) -> bool:
    """Whether ``head`` is after layer 0 in some shipped model (an earlier head can write to it).
    Asked when the module is imported, so it loads no weights where the head finder decides the
    answer by design (``headspace.heads.find_pair`` takes the induction head from layer 1 on and the
    previous-token head from below the last layer): in a 2-layer model those roles are in layers 1
    and 0. Loading both models to ask took most of this module's import in the browser
    (docs/decisions/0011). Without models (the benchmark's plain page) the roles answer by what
    they are: an induction head reads what a previous-token head wrote.

    >>> _after_layer_0(shipped.INDUCTION), _after_layer_0(shipped.PREV), _after_layer_0("L1H0")
    (True, False, True)
    """
    if head == shipped.INDUCTION:
        return True
    try:
        if head == shipped.PREV:
            return any(shipped.n_layers(m) > 2 and shipped.roles(m)[0][0] > 0 for m in shipped.MODEL_NAMES)
        return any(shipped.parse_head(head, m)[0] > 0 for m in shipped.MODEL_NAMES)
    except ValueError:
        return False


#: The heads an earlier head can write to, in some shipped model: the path panel's controls act only on these.
_LATER_HEADS = [h for h in ALL_HEADS if _after_layer_0(h)]


@register(
    "circuits", "A head's OV and QK circuits in token space",
    key='Row and column: tokens; red raises, blue lowers, pale near zero, each map ÷ its scale (in its title); dots: the OV eigenvalues.',
    params=[
        Param("head", "Head", "select", shipped.INDUCTION, options=ALL_HEADS,
              help="L1H2 is layer 1, head 2; 'previous-token' and 'induction' are the model's heads with those roles"),
        Param("writer", "Writer for the path", "select", shipped.PREV, options=shipped.HEAD1_OPTIONS,
              help="an earlier head whose output this head reads (bottom right panel)",
              active_when={"head": _LATER_HEADS}, inactive="Only for a head after layer 0"),
        shipped.mode_param("Path reads in", "which input of this head reads the writer: queries, keys or values",
                            active_when={"head": _LATER_HEADS}, inactive="Only for a head after layer 0"),
        shipped.model_param(),
        shipped.step_param(),
        Param("shown", "Tokens shown", "select", 32, options=(16, 32, 64, 128),
              help="the heatmaps show the first this many tokens; the outputs use every token"),
    ],
    outputs=[
        Output("copying_score", "copying score", "number",
               "the OV circuit's eigenvalues summed over the sum of their sizes: 1 for a pure copying head"),
        Output("ov_diag_rank", "OV diagonal share", "number",
               "the share of tokens whose own logit is the one the OV circuit raises most"),
        Output("qk_diag_rank", "QK diagonal share", "number",
               "the share of query tokens whose top key is themselves"),
    ],
    needs_models=True,
)
def circuits(head: str, writer: str, mode: str, model: str, step, shown: int) -> dict:
    at = shipped.resolve_step(model, step)
    l, h = shipped.parse_head(head, model)
    ov, qk, eig, outputs = _head(shipped.models_where(), model, at, l, h)
    outputs = dict(outputs)
    w = shipped.parse_head(writer, model)
    path = path_matrix(model, at, mode, w, (l, h)) if w[0] < l else None
    # Two lines for every head: a phone's width would otherwise wrap a long role and not a short one,
    # and a title that changes its lines needs plotly to redraw the figure instead of a patch.
    title = f"head {shipped.head_label(l, h, model)}<br>copying score {outputs['copying_score']:.2f}"
    return {"figure": _figure(ov[:shown, :shown], qk[:shown, :shown], eig, path, w, (l, h), mode, title),
            "outputs": outputs}


@lru_cache(maxsize=4)
def _head(where: str, model: str, step, l: int, h: int) -> tuple:
    """(OV circuit, QK circuit, OV eigenvalues, outputs) of one head, arrays read-only: they do
    not depend on the writer, mode or tokens shown that the other controls move (two
    [d_vocab, d_vocab] maps, 260 kB, an entry)."""
    m = shipped.weights(model, step)
    W_E = embedding_read(m.W_E, m.config.get("normalization_type"), m.eps)
    ov = full_ov_circuit(W_E, m.W_V[l, h], m.W_O[l, h], m.W_U)
    qk = full_qk_circuit(W_E, m.W_Q[l, h], m.W_K[l, h])
    eig = ov_eigenvalues(W_E, m.W_V[l, h], m.W_O[l, h], m.W_U)
    for a in (ov, qk, eig):
        a.setflags(write=False)
    outputs = {"copying_score": copying_score(W_E, m.W_V[l, h], m.W_O[l, h], m.W_U),
               "ov_diag_rank": diagonal_top_fraction(ov), "qk_diag_rank": diagonal_top_fraction(qk)}
    return ov, qk, eig, tuple(outputs.items())


def _heat(M, axis: int, name: str, rows: str, cols: str) -> dict:
    """Map ``M`` divided by its scale, on the shared colour scale (its bar drawn once, by the OV map)."""
    lim = map_scale(M)
    ax = "" if axis == 1 else str(axis)
    return {"type": "heatmap", "z": np.round(M / lim, 3).tolist(), "zmin": -1, "zmax": 1,
            "colorscale": DIVERGING, "showscale": axis == 1, "xaxis": f"x{ax}", "yaxis": f"y{ax}", "name": name,
            "colorbar": named_colorbar("÷ scale", {-1: "−1", 0: "0", 1: "1"}, thickness=12),
            "hoverongaps": False,  # the blank path panel of a layer-0 head has nothing to hover
            "hovertemplate": f"{rows} %{{y}}, {cols} %{{x}}<br>%{{z}} × its scale<extra>{name}</extra>"}


#: The note over the path panel of a layer-0 head, in lines short enough for the panel on a phone,
#: and its blank stand-in for a later head (as many lines of no-break spaces: the same markup, so a
#: switch between the two rewrites the text alone).
NO_WRITER = "layer 0:<br>no earlier<br>head to read"
NO_NOTE = "<br>".join(["\u00a0"] * NO_WRITER.count("<br>") + ["\u00a0"])
#: Half-width of the eigenvalue panel, in units of the head's largest eigenvalue size.
EIG_REACH = 1.1


def _figure(ov, qk, eig, path, writer, reader, mode, title) -> dict:
    n = ov.shape[0]
    ticks = list(range(0, n, max(4, n // 4)))
    # the gap holds the right column's row labels beside the left column's maps, on a phone too
    # (0.08 of a 191 px plot put "24" over the OV map once the colour bar took its margin)
    # the row gap holds the upper maps' tick labels and the lower titles, three lines on a phone
    cols, gap = (0.0, 0.43), 0.14
    width = 0.43
    rows = ((0.58, 1.0), (0.0, 0.42))
    traces = [_heat(ov, 1, "OV circuit", "attended token", "logit"),
              _heat(qk, 2, "QK circuit", "query", "key")]
    scale = float(np.abs(eig).max()) or 1.0
    traces.append({"type": "scatter", "x": np.round(eig.real / scale, 4).tolist(),
                   "y": np.round(eig.imag / scale, 4).tolist(),
                   "customdata": np.round(np.stack([eig.real, eig.imag], axis=1), 4).tolist(),
                   "mode": "markers", "xaxis": "x3", "yaxis": "y3", "name": "eigenvalue",
                   "marker": {"size": 7, "color": [COLORS["red"] if r > 0 else COLORS["blue"] for r in eig.real]},
                   "hovertemplate": "%{customdata[0]} + %{customdata[1]}i<extra>eigenvalue</extra>"})
    traces.append(_heat(np.zeros((n, n)) if path is None else path[:n, :n], 4, "token path", "row", "column"))
    if path is None:  # no cell: a layer-0 head has no writer
        traces[-1]["z"] = [[None] * n for _ in range(n)]
    notes = [{"text": NO_WRITER if path is None else NO_NOTE, "xref": "x4 domain", "yref": "y4 domain",
              "x": 0.5, "y": 0.5, "showarrow": False, "font": {"size": 11, "color": COLORS["muted"]}}]
    layout = {}
    for k, (x, y) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)], start=1):
        ax = "" if k == 1 else str(k)
        x0 = round(x * (width + gap), 4)
        layout[f"xaxis{ax}"] = {"domain": [x0, round(x0 + width, 4)], "anchor": f"y{ax}", "zeroline": False,
                                "showgrid": False, "tickfont": {"size": 9}}
        layout[f"yaxis{ax}"] = {"domain": list(rows[y]), "anchor": f"x{ax}", "zeroline": False, "showgrid": False,
                                "tickfont": {"size": 9}}
        if k != 3:
            layout[f"xaxis{ax}"].update({"tickvals": ticks, "range": [-0.5, n - 0.5]})
            layout[f"yaxis{ax}"].update({"tickvals": ticks, "range": [n - 0.5, -0.5]})
    layout["xaxis3"].update({"range": [-EIG_REACH, EIG_REACH], "zeroline": True, "showgrid": True, "nticks": 5,
                             "title": {"text": "real part ÷ largest |λ|", "font": {"size": 10}}})
    layout["yaxis3"].update({"range": [-EIG_REACH, EIG_REACH], "zeroline": True, "showgrid": True, "nticks": 5,
                             "title": {"text": "imaginary part ÷ largest |λ|", "font": {"size": 10}, "standoff": 2}})
    # Each panel title is two lines at every width and for every head (the second a blank for a
    # layer-0 head's empty path panel), so that a move rewrites their text and nothing else.
    path_title = (f"{mode}: {head(*writer)} → {head(*reader)}<br>path scale {map_scale(path[:n, :n]):.3g}"
                  if path is not None else "token path<br>\u00a0")
    for text, x, y in [(f"OV: token → logit<br>scale {map_scale(ov):.3g}", 0.215, 1.0),
                       (f"QK: query × key<br>scale {map_scale(qk):.3g}", 0.785, 1.0),
                       (f"OV eigenvalues<br>largest |λ| {scale:.3g}", 0.215, 0.42), (path_title, 0.785, 0.42)]:
        notes.append({"text": text, "xref": "paper", "yref": "paper", "x": x, "y": y, "xanchor": "center",
                      "yanchor": "bottom", "showarrow": False, "font": {"size": 11}})
    fig = figure(traces, title=title, height=640, showlegend=False, annotations=notes,
                 margin={"l": 34, "r": 8, "t": 60, "b": 40}, **layout)
    fig["layout"].pop("legend", None)
    return fig
