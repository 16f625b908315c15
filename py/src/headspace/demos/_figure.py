"""Plotly figure dicts in one house style, so every demo looks like the others.

Colours here are the defaults; the page re-themes fonts, grid and background
for dark mode, so demos only pick trace colours from ``COLORS``.

>>> fig = figure([scatter([0, 1], [0, 1], name="line")], title="t")
>>> fig["data"][0]["type"], fig["layout"]["title"]["text"]
('scatter', 't')
"""

from __future__ import annotations

import numpy as np

COLORS = {"ink": "#1f2933", "muted": "#9aa5b1", "blue": "#2f6fde", "orange": "#e07b24",
          "green": "#2e9e6a", "red": "#d1495b", "purple": "#7b4fd6"}


def rounded(values, digits: int = 6) -> list:
    """Round plotted coordinates: smaller pages and messages, no visible change."""
    return np.round(np.asarray(values, dtype=float), digits).tolist()


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
           "margin": {"l": 40, "r": 10, "t": 36 if title else 10, "b": 36},
           "showlegend": True, "legend": {"orientation": "h", "y": -0.12},
           "xaxis": {"zeroline": True}, "yaxis": {"zeroline": True}}
    if extent is not None:
        lay["xaxis"]["range"] = [-extent, extent]
        lay["yaxis"]["range"] = [-extent, extent]
    if equal_axes:
        lay["yaxis"].update({"scaleanchor": "x", "scaleratio": 1})
    for key, value in layout.items():
        if isinstance(value, dict) and isinstance(lay.get(key), dict):
            lay[key] = {**lay[key], **value}
        else:
            lay[key] = value
    return {"data": traces, "layout": lay}


def point_cloud(n: int, seed: int, spread: float = 1.0) -> np.ndarray:
    """``n`` seeded Gaussian points in the plane, shape [2, n]: light, or data."""
    return spread * np.random.default_rng(seed).standard_normal((2, n))
