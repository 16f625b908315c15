"""Colours: read once, here, and written in one form for every renderer.

A demo may write a colour as plotly reads it (``#rgb``, ``#rrggbb``, ``rgb()``, ``rgba()``,
``white``); ``Demo.run`` rewrites every colour of its figure in one form (``canonical_figure``):
``#rrggbb`` when opaque, else ``rgba(r,g,b,a)``. So plotly and the figure engine's SVG
(``figure/svg.py``) both see the colour Python read, and a colour Python cannot read is an error naming it, not a grey.

>>> canonical("#F80"), canonical("white"), canonical("rgba(47, 111, 222, 1)"), canonical("rgba(0,0,0,0.15)")
('#ff8800', '#ffffff', '#2f6fde', 'rgba(0,0,0,0.15)')
"""

from __future__ import annotations

import functools
import re

from .keys import number

#: The CSS names the demos use; any other name is refused (write it as ``#rrggbb``).
NAMES = {"white": "#ffffff", "black": "#000000", "transparent": "rgba(0,0,0,0)"}


@functools.lru_cache(maxsize=256)
def rgba(color: str) -> tuple[float, float, float, float]:
    """(r, g, b, alpha) of a ``#rgb``, ``#rrggbb``, ``rgb(...)`` or ``rgba(...)`` colour, or of one of
    ``NAMES``; anything else raises ValueError naming it.

    >>> rgba("#ff8000"), rgba("#f80"), rgba("rgba(0, 0, 255, 0.5)")
    ((255, 128, 0, 1.0), (255, 136, 0, 1.0), (0.0, 0.0, 255.0, 0.5))

    Cached (a figure has few colours; a heatmap's notes read the same scale's stops each move).
    """
    text = NAMES.get(color.strip().lower(), color.strip())
    if re.fullmatch(r"#[0-9a-fA-F]{6}", text):
        return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5)) + (1.0,)
    if re.fullmatch(r"#[0-9a-fA-F]{3}", text):
        return tuple(int(h * 2, 16) for h in text[1:]) + (1.0,)
    m = re.fullmatch(r"rgba?\(([^)]+)\)", text)
    if m:
        try:
            parts = [float(c) for c in m.group(1).split(",")]
        except ValueError:
            parts = []
        if len(parts) in (3, 4):
            return tuple(parts[:3]) + (parts[3] if len(parts) > 3 else 1.0,)
    raise ValueError(f"colour: expected #rgb, #rrggbb, rgb(r, g, b), rgba(r, g, b, a) or one of "
                     f"{', '.join(NAMES)}; got {color!r}")


@functools.lru_cache(maxsize=256)
def canonical(color: str) -> str:
    """``color`` in the one form the figures carry: ``#rrggbb`` when opaque, else ``rgba(r,g,b,a)``."""
    r, g, b, a = rgba(color)
    r, g, b = (min(255, max(0, round(c))) for c in (r, g, b))
    return f"#{r:02x}{g:02x}{b:02x}" if a >= 1 else f"rgba({r},{g},{b},{number(max(0.0, a))})"


def canonical_figure(node) -> None:
    """Rewrite, in place, every colour of a plotly figure dict (each ``...color`` key, a list of
    colours under one, each ``colorscale`` stop) in its ``canonical`` form. Lists of numbers
    (coordinates, ``z``, colours through a scale) are not walked."""
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict):
                canonical_figure(item)
        return
    for k, v in node.items():
        if k.endswith("color") and isinstance(v, str):
            node[k] = _canonical_at(v, k)
        elif k.endswith("color") and isinstance(v, list):
            node[k] = [_canonical_at(c, k) if isinstance(c, str) else c for c in v]
        elif k == "colorscale" and isinstance(v, list):
            node[k] = [[t, _canonical_at(c, k)] for t, c in v]
        elif isinstance(v, (dict, list)):
            canonical_figure(v)


def _canonical_at(color: str, where: str) -> str:
    try:
        return canonical(color)
    except ValueError as exc:
        raise ValueError(f"figure {where}: {exc}") from None


def scale_colour(scale, t: float) -> tuple[float, float, float, float]:
    """The colour (r, g, b, alpha) at ``t`` in [0, 1] of a plotly colour scale ``[[0, c0], ..., [1, c1]]``,
    interpolated in RGB as plotly does; the build's static SVG paints cells with it too."""
    if not isinstance(scale, list) or not scale:
        scale = [[0, "#f7fbff"], [1, "#08306b"]]
    t = min(1.0, max(0.0, t))
    for (a, ca), (b, cb) in zip(scale, scale[1:]):
        if a <= t <= b:
            u = (t - a) / ((b - a) or 1)
            return tuple(x + u * (y - x) for x, y in zip(rgba(ca), rgba(cb)))
    return rgba(scale[-1][1])


def luminance(rgb) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (0 to 255 a channel); contrast is
    (L1 + 0.05) / (L2 + 0.05).

    >>> luminance((255, 255, 255)), luminance((0, 0, 0))
    (1.0, 0.0)
    """
    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ink_on(rgb) -> str:
    """Black or white, whichever contrasts more with ``rgb``: at least 4.58:1 on any colour (where
    the two tie), so WCAG AA's 4.5:1 holds for text in any cell.

    >>> ink_on((8, 48, 107)), ink_on((247, 251, 255))
    ('#ffffff', '#000000')
    """
    lum = luminance(rgb)
    white, black = 1.05 / (lum + 0.05), (lum + 0.05) / 0.05
    return "#ffffff" if white >= black else "#000000"
