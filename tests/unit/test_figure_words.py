"""What a figure says, in the registry (issue 35): heads named L0H1 (layer 0, head 1) everywhere,
scores and models in the articles' words, maths as maths, a one-line key per figure, and panels
that keep their rows' and columns' names when they stack on a phone. The browser test
tests/browser/test_figure_words.py checks the same on the drawn pages."""

from __future__ import annotations

import re

import pytest

from headspace_site.demos import REGISTRY
from headspace_site.figure.fit import STRIP, WIDTHS, fit
from headspace_site.figure.outputs import METRIC_NAMES, head
from headspace_site.figure.registry import Param

#: Code names a reader must never see in a figure, a control or an output.
CODE_NAMES = ("frobenius_baseline", "svd_bound", "frobenius_unfolded", "svd_component", "projection_kernel",
              "token_diagonal", "attn-only-2l", "mean-circuit", "parameter '", "W_OV", "W_QK", "W_E", "W_up",
              "W_down", "E_x", "E_y", "layer.head", "d^")
#: A zoo family's or a shipped model's file name: figures and menus name them in words.
MODEL_FILE = re.compile(r"\b(?:[a-z]+-(?:none|rms|ln)-(?:attn|mlp)-\d+l|attn-only-\d+l(?:-rms)?)\b")
#: A head in the old notation: "1.2" beside an arrow or a role, or after "head".
OLD_HEAD = re.compile(r"(\bhead \d\.\d\b|\b\d\.\d (→|previous-token|induction)|→ \d\.\d\b)")


def texts(fig: dict) -> list[str]:
    """Every text a figure draws: title, axis titles and tick texts, notes, legend entries."""
    lay = fig["layout"]
    out = [lay.get("title", {}).get("text", "") if isinstance(lay.get("title"), dict) else lay.get("title") or ""]
    for key, spec in lay.items():
        if re.fullmatch(r"[xy]axis\d*", key):
            title = spec.get("title")
            out.append(title.get("text", "") if isinstance(title, dict) else title or "")
            out += [str(t) for t in spec.get("ticktext") or []]
    out += [str(n.get("text", "")) for n in lay.get("annotations", [])]
    for tr in fig["data"]:
        out.append(str(tr.get("name") or ""))
        out += [str(v) for a in "xy" for v in (tr.get(a) or []) if isinstance(v, str)]
        out.append(str((tr.get("colorbar") or {}).get("title", {}).get("text", "")))
    return out


def settings() -> list[tuple[str, dict]]:
    """Every demo at its defaults and at each option of each of its menus of words (heads, scores,
    models, modes; not the training steps or sizes, which change numbers only)."""
    out = []
    for name, demo in REGISTRY.items():
        out.append((name, {}))
        for p in demo.params:
            if p.name != "step":
                out += [(name, {p.name: v}) for v in p.options if v != p.default and isinstance(v, str)]
    return out


@pytest.mark.parametrize("name, params", settings(), ids=lambda v: v if isinstance(v, str) else str(v))
def test_figures_say_it_in_words(name, params):
    """Titles, axes, notes and legends name heads L0H1 and scores as the articles do."""
    fig = REGISTRY[name].run(params)["figure"]
    said = " | ".join(texts(fig))
    assert [n for n in CODE_NAMES if n in said] == [], said
    assert MODEL_FILE.findall(said) == [], said
    assert OLD_HEAD.findall(said) == [], said


def test_controls_outputs_and_keys_say_it_in_words():
    for name, demo in REGISTRY.items():
        words = [demo.title, demo.key] + [o.label + " " + o.help for o in demo.described]
        words += [p.label + " " + p.help for p in demo.params]
        words += [p.label_of(v) for p in demo.params for v in p.options]
        said = " | ".join(re.sub(r"<[^>]+>", "", w) for w in words)
        assert [n for n in CODE_NAMES if n in said] == [], f"{name}: {said}"
        assert OLD_HEAD.findall(said) == [], f"{name}: {said}"


def test_every_figure_has_a_one_line_key():
    for name, demo in REGISTRY.items():
        assert demo.key and "\n" not in demo.key and len(demo.key) <= 150, f"{name}: key {demo.key!r}"


def test_menus_show_the_articles_words_and_links_keep_the_values():
    metric = next(p for p in REGISTRY["composition-scores"].params if p.name == "metric")
    assert metric.to_json()["option_labels"] == [METRIC_NAMES[m] for m in metric.options]
    assert "SVD bound" in metric.to_json()["option_labels"] and "svd_bound" in metric.options
    heads = next(p for p in REGISTRY["circuits"].params if p.name == "head")
    assert {head(0, 1), head(1, 2)} <= set(heads.options) and head(0, 1) == "L0H1"
    with pytest.raises(ValueError, match="option_labels must name each of its 2 options; got 1"):
        Param("m", "M", "select", "a", options=("a", "b"), option_labels=("A",))


def category_axes(fig: dict) -> dict[str, list]:
    """Axes whose labels are words: listed tick texts that are not numbers, or string categories."""
    out = {}
    for key, spec in fig["layout"].items():
        if re.fullmatch(r"[xy]axis\d*", key) and any(not re.fullmatch(r"[−\-\d.,\s ]*", str(t))
                                                    for t in spec.get("ticktext") or []):
            out[key] = spec["ticktext"]
    for tr in fig["data"]:
        for a in "xy":
            if (tr.get(a) or []) and all(isinstance(v, str) for v in tr[a]):
                out.setdefault(f"{a}axis" + tr.get(f"{a}axis", a)[1:], tr[a])
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_panel_names_its_rows_and_columns(name, width):
    """A panel that left its rows' names to its neighbour side by side names them itself once
    stacked (path-expansion's "loss change without it", residual-basis's "after T" grid); at every
    width, every axis of words shows its labels. The metric lab's axioms grid names its rows too."""
    fig = fit(REGISTRY[name].run({})["figure"], width)
    lay, axes = fig["layout"], category_axes(fig)
    for key, labels in axes.items():
        if lay[key].get("showticklabels", True):
            continue
        # side by side, a panel may leave its rows to the one beside it: the same rows, at the same height
        beside = [k for k, ls in axes.items() if k != key and k[0] == key[0] == "y" and list(ls) == list(labels)
                  and lay[k].get("showticklabels", True) and lay[k].get("domain", [0, 1]) == lay[key].get("domain", [0, 1])]
        assert beside and width >= 560, f"{name} at {width} px: {key} hides its labels"


def test_a_stacked_strip_is_a_strip():
    """projection-2d-1d's 1-D panel is one line of dots: stacked on a phone it is a strip, not a
    square box as wide as the 2-D panel."""
    fig = fit(REGISTRY["projection-2d-1d"].run({})["figure"], 330)
    lay = fig["layout"]
    plot_h = lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]
    d0, d1 = lay["yaxis2"]["domain"]
    assert abs((d1 - d0) * plot_h - STRIP) < 1, (d1 - d0) * plot_h
    side = fit(REGISTRY["projection-2d-1d"].run({})["figure"], 840)["layout"]
    assert side["yaxis2"].get("domain", [0, 1]) == [0, 1]   # side by side it keeps the full height


def test_norm_symmetry_marks_the_reorder_in_each_panel_alone():
    """The dashed marker of the first reordering spans its own panel, bottom to top (a panel's
    domain), never the gap and the axis title between the stacked panels."""
    import math
    out = REGISTRY["norm-symmetry"].run({})
    first = out["outputs"]["first_reorder_condition"]
    shapes = fit(out["figure"], 330)["layout"]["shapes"]
    assert first is not None and len(shapes) == 2
    for shape, axis in zip(shapes, ("", "2")):
        assert (shape["xref"], shape["yref"], shape["y0"], shape["y1"]) == ("x" + axis, f"y{axis} domain", 0, 1)
        assert shape["x0"] == shape["x1"] == pytest.approx(math.log10(first))
