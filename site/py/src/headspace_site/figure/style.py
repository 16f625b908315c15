"""Plotly figure dicts in one house style, so every demo looks like the others.

Colours here are the defaults; the page re-themes fonts, grid and background
for dark mode, so demos only pick trace colours from ``COLORS``.

>>> fig = figure([scatter([0, 1], [0, 1], name="line")], title="t")
>>> fig["data"][0]["type"], fig["layout"]["title"]["text"]
('scatter', 't')
"""

from __future__ import annotations

import numpy as np

from .outputs import METRIC_NAMES  # noqa: F401  (each score's name in words: figures import it from here)

COLORS = {"ink": "#1f2933", "muted": "#9aa5b1", "blue": "#2f6fde", "orange": "#e07b24",
          "green": "#2e9e6a", "red": "#d1495b", "purple": "#7b4fd6"}
#: One colour per score, the same in every figure that compares scores ("causal": path ablation).
METRIC_COLORS = {"frobenius": COLORS["blue"], "frobenius_baseline": COLORS["orange"],
                 "svd_bound": COLORS["green"], "subspace": COLORS["purple"], "token": COLORS["red"],
                 "whitened": COLORS["muted"], "causal": "#a0741c"}
#: The colour scale of every heatmap of composition scores: white (0) to deep blue (the largest).
SCORE_SCALE = [[0.0, "#f7fbff"], [0.5, "#6baed6"], [1.0, "#08306b"]]
#: token and whitened agree exactly for Q and K, so whitened is dashed to let token show through.
METRIC_DASH = {"whitened": "dash"}


def rounded(values, digits: int = 6) -> list:
    """Round plotted coordinates: smaller pages and messages, no visible change."""
    return np.round(np.asarray(values, dtype=float), digits).tolist()



def named_colorbar(title: str, ticks: dict, thickness: int = 10) -> dict:
    """A colour bar on a fixed scale, its ticks named by the figure (``{value: label}``): one
    style for every such bar (``colorbar_ticks`` is the bar whose labels follow the data).

    >>> named_colorbar("weight", {0: "0", 1: "1"})["ticktext"]
    ['0', '1']
    """
    return {"title": {"text": title}, "thickness": thickness, "tickmode": "array",
            "tickvals": list(ticks), "ticktext": list(ticks.values())}


def colorbar_ticks(lo: float, hi: float, n: int = 5) -> dict:
    """A colour bar's ticks for the range ``[lo, hi]``: ``n`` evenly spaced values from end to end,
    each labelled with the same number of decimals (three significant digits of the larger end).

    Marks the range's own ends (its largest value is read off the bar), and puts every tick at the
    same place on the bar for any range, so when only the range changes the page rewrites the
    labels in place instead of plotly redrawing the figure. A label of another width would move
    the plot's margin, so each is padded after its last digit to the width of four digits and a
    decimal point (digits are tabular; U+2007 is a digit's width, U+2008 a point's): the labels
    read the same, and a range of 27.7 and one of 173 give bars of one width.

    >>> [t.rstrip("\u2007\u2008") for t in colorbar_ticks(0, 0.207)["ticktext"]]
    ['0', '0.052', '0.103', '0.155', '0.207']
    >>> colorbar_ticks(-24.3, 24.3, 3)          # U+2212 minus, as plotly writes it
    {'tickmode': 'array', 'tickvals': [-24.3, 0.0, 24.3], 'ticktext': ['−24.3\u2007', '0\u2008\u2007\u2007\u2007', '24.3\u2007']}
    """
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"colorbar_ticks: lo must be below hi, both finite; got lo={lo}, hi={hi}")
    if n < 2:
        raise ValueError(f"colorbar_ticks: n must be at least 2; got {n}")
    top = max(abs(lo), abs(hi))
    decimals = max(0, 2 - int(np.floor(np.log10(top))))
    vals = [float(v) for v in np.linspace(lo, hi, n)]
    vals[0], vals[-1] = float(lo), float(hi)                 # exactly the ends plotly is given
    text = [f"{v:.{decimals}f}" for v in vals]
    text = ["0" if float(t) == 0 else t.replace("-", "\u2212") for t in text]
    text = [t + ("" if "." in t else "\u2008") + "\u2007" * max(0, 4 - sum(c.isdigit() for c in t)) for t in text]
    return {"tickmode": "array", "tickvals": [round(v, 10) for v in vals], "ticktext": text}

def scatter(x, y, name: str = "", color: str = COLORS["blue"], mode: str = "markers",
            size: float = 5, opacity: float = 1.0, width: float = 2, **extra) -> dict:
    trace = {"type": "scatter", "x": rounded(x), "y": rounded(y), "name": name, "mode": mode,
             "opacity": opacity, "hoverinfo": "skip" if mode == "markers" else "name"}
    if "markers" in mode:
        trace["marker"] = {"size": size, "color": color}
    if "lines" in mode:
        trace["line"] = {"color": color, "width": width}
    trace.update(extra)
    return trace


def line_through(angle_deg: float, length: float, name: str, color: str, dash: str = "solid") -> dict:
    """A line through the origin at ``angle_deg``, drawn from -length to +length."""
    t = np.deg2rad(angle_deg)
    x, y = length * np.cos(t), length * np.sin(t)
    return scatter([-x, x], [-y, y], name=name, color=color, mode="lines", line={"color": color, "width": 2.5, "dash": dash})


def figure(traces: list, title: str = "", equal_axes: bool = False, extent: float | None = None,
           height: int = 360, **layout) -> dict:
    """A figure dict; ``equal_axes`` keeps circles round, ``extent`` fixes +-range."""
    lay = {"title": {"text": title, "font": {"size": 14}}, "height": height,
           "margin": {"l": 44, "r": 10, "t": 60 if title else 34, "b": 40},
           "showlegend": True,
           "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom", "bgcolor": "rgba(0,0,0,0)"},
           "xaxis": {"zeroline": True}, "yaxis": {"zeroline": True}}
    if extent is not None:
        lay["xaxis"]["range"] = [-extent, extent]
        lay["yaxis"]["range"] = [-extent, extent]
    if equal_axes:
        lay["yaxis"].update({"scaleanchor": "x", "scaleratio": 1})
        lay["xaxis"]["constrain"] = "domain"  # shrink the plot, never widen the fixed range
    for key, value in layout.items():
        if isinstance(value, dict) and isinstance(lay.get(key), dict):
            lay[key] = {**lay[key], **value}
        else:
            lay[key] = value
    return {"data": traces, "layout": lay}


def point_cloud(n: int, seed: int, spread: float = 1.0) -> np.ndarray:
    """``n`` seeded Gaussian points in the plane, shape [2, n]: light, or data."""
    return spread * np.random.default_rng(seed).standard_normal((2, n))


def segments(starts, ends, name: str = "", color: str = COLORS["muted"], width: float = 1,
             dash: str = "dot", **extra) -> dict:
    """Many separate segments ``starts[:, i] -> ends[:, i]`` (shapes [2, n]) in one trace.

    Plotly breaks a line at ``None``, so one trace draws them all.

    >>> segments([[0, 1], [0, 1]], [[1, 2], [0, 1]])["x"]
    [0.0, 1.0, None, 1.0, 2.0, None]
    """
    s, e = np.round(np.asarray(starts, float), 6), np.round(np.asarray(ends, float), 6)
    x, y = [], []
    for x0, y0, x1, y1 in zip(s[0].tolist(), s[1].tolist(), e[0].tolist(), e[1].tolist()):
        x += [x0, x1, None]
        y += [y0, y1, None]
    trace = {"type": "scatter", "x": x, "y": y, "name": name, "mode": "lines", "hoverinfo": "skip",
             "line": {"color": color, "width": width, "dash": dash}}
    trace.update(extra)
    return trace


def arrow(tip, name: str, color: str, base=(0.0, 0.0), width: float = 3, **extra) -> dict:
    """An arrow from ``base`` to ``tip`` (a line whose end marker points along it)."""
    trace = scatter([base[0], tip[0]], [base[1], tip[1]], name=name, color=color, mode="lines+markers",
                    width=width, **extra)
    trace["marker"] = {"symbol": "arrow", "angleref": "previous", "size": [0, 13], "color": color}
    return trace


def two_panels(left: list, right: list, titles=("", ""), split: float = 0.5, gap: float = 0.1,
               height: int = 380, **layout) -> dict:
    """Two plots side by side: ``left`` on axes x/y, ``right`` on x2/y2.

    Pass ``xaxis``, ``yaxis``, ``xaxis2``, ``yaxis2`` dicts to set ranges and
    titles; ``equal_axes=(True, False)`` keeps the left panel's circles round.

    >>> fig = two_panels([scatter([0], [0])], [scatter([1], [1])], titles=("in", "out"))
    >>> fig["data"][1]["xaxis"], fig["layout"]["xaxis2"]["domain"]
    ('x2', [0.55, 1.0])
    """
    equal = layout.pop("equal_axes", (False, False))
    for trace in right:
        trace["xaxis"], trace["yaxis"] = "x2", "y2"
    lo, hi = round(split - gap / 2, 6), round(split + gap / 2, 6)
    base = {"xaxis": {"domain": [0.0, lo], "zeroline": True},
            "yaxis": {"zeroline": True},
            "xaxis2": {"domain": [hi, 1.0], "anchor": "y2", "zeroline": True},
            "yaxis2": {"anchor": "x2", "zeroline": True}}
    if equal[0]:
        base["yaxis"].update({"scaleanchor": "x", "scaleratio": 1})
    if equal[1]:
        base["yaxis2"].update({"scaleanchor": "x2", "scaleratio": 1})
    for key, value in list(layout.items()):
        if key in base and isinstance(value, dict):
            base[key] = {**base[key], **layout.pop(key)}
    notes = [{"text": text, "xref": "paper", "yref": "paper", "x": x, "y": 1.0, "xanchor": "center",
              "yanchor": "bottom", "showarrow": False, "font": {"size": 13}}
             for text, x in zip(titles, (lo / 2, (hi + 1) / 2)) if text]
    fig = figure(left + right, height=height, **layout)
    fig["layout"].update(base)
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "t": 30, "b": 80}
    fig["layout"]["legend"] = {**fig["layout"]["legend"], "y": -0.2, "yanchor": "top"}
    fig["layout"]["annotations"] = notes + list(layout.get("annotations", []))
    return fig
