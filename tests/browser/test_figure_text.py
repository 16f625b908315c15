"""What a newcomer reads in a figure on a phone (issue 35): every panel names its rows and columns
where it is drawn, heads have one name (L0H1: layer 0, head 1), and no figure text, control,
output or error shows a code name instead of the articles' words. Checked on the drawing the
reader sees, the build's before Python and plotly's after."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

#: Code names a reader must never see (the library's keys, the model's file name, Python's words).
CODE_NAMES = ("frobenius_baseline", "svd_bound", "frobenius_unfolded", "svd_component", "projection_kernel",
              "token_diagonal", "attn-only-2l", "mean-circuit", "resample-circuit", "parameter '", "W_OV", "W_QK",
              "E_x", "layer.head", "d^-1/2")
#: A head in the old notation, "1.2" where a head is meant: beside an arrow or a role, or after "head".
OLD_HEAD = re.compile(r"(\bhead \d\.\d\b|\b\d\.\d (→|previous-token|induction)|→ \d\.\d\b)")
#: The one notation: layer and head, L1H2.
HEAD = re.compile(r"\bL\d+H\d+\b")

#: A name in snake case ("prev_token_scores"): a key of the library's, not a word of the page's.
SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
#: A zoo family's or a shipped model's file name ("induction-none-attn-2l"): the menus name them in words.
MODEL_FILE = re.compile(r"\b(?:[a-z]+-(?:none|rms|ln)-(?:attn|mlp)-\d+l|attn-only-\d+l(?:-rms)?)\b")


def plain(text) -> str:
    return " ".join(re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", " ", str(text))).split())


def category_axes(fig: dict, layout: dict) -> dict[str, list[str]]:
    """``{axis key: its labels}`` for every axis that names rows or columns with words (categories
    or listed tick texts that are not numbers)."""
    labels: dict[str, list[str]] = {}
    for key, spec in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and spec.get("ticktext"):
            texts = [plain(t) for t in spec["ticktext"]]
            if any(not re.fullmatch(r"[−\-\d.,\s ]*", t) for t in texts):
                labels[key] = texts
    for tr in fig["data"]:
        for a in "xy":
            values = tr.get(a) or []
            if values and all(isinstance(v, str) for v in values):
                key = f"{a}axis" + (tr.get(f"{a}axis", a)[1:])
                if not layout.get(key, {}).get("ticktext"):
                    labels.setdefault(key, [])
                    labels[key] += [plain(v) for v in values if plain(v) not in labels[key]]
    return labels


def unlabelled(fig: dict, layout: dict, texts: list[dict], scale: float) -> list[str]:
    """Labels of category axes that are not drawn beside their own panel: a y axis's to the left of
    its panel within its height, an x axis's below its panel within its width."""
    W, H, m = layout["width"], layout["height"], layout["margin"]
    pw, ph = W - m["l"] - m["r"], H - m["t"] - m["b"]
    missing = []
    for key, labels in category_axes(fig, layout).items():
        spec = layout[key]
        other = layout.get(("xaxis" if key[0] == "y" else "yaxis") + spec.get("anchor", "x")[1:], {})
        d0, d1 = spec.get("domain", [0, 1])
        o0, o1 = other.get("domain", [0, 1])
        if key[0] == "y":
            lo, hi, edge = m["t"] + (1 - d1) * ph, m["t"] + (1 - d0) * ph, m["l"] + o0 * pw
            beside = lambda b: b[0] + b[2] <= edge * scale + 3 and lo * scale - 4 <= b[1] + b[3] / 2 <= hi * scale + 4  # noqa: E731
        else:
            lo, hi, edge = m["l"] + d0 * pw, m["l"] + d1 * pw, m["t"] + (1 - o0) * ph
            beside = lambda b: b[1] >= edge * scale - 3 and lo * scale - 4 <= b[0] + b[2] / 2 <= hi * scale + 4  # noqa: E731
        for label in labels:
            if not any(t["text"] == label and beside(t["box"]) for t in texts):
                missing.append(f"{key} {label!r}")
    return missing


@pytest.mark.parametrize("view", [(390, "dark")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_stacked_panels_keep_their_labels(live_walk, view):
    """At 390 px every panel of every figure names its rows and columns beside it, as built and live
    (path-expansion's second panel once showed 27 bars without a name, residual-basis's "after T"
    grid no writers). Every figure page, from tests/browser/live_walk.py's walk."""
    found, checked = {}, 0
    for fig in live_walk(*view).figures:
        pre = fig.prerender
        width = str(int(fig.size[0] + 0.5))
        layout = pre["layouts"].get(width) or pre["layouts"]["330"]
        scale = fig.size[0] / layout["width"]
        assert fig.drawn["live"] == fig.live or not fig.live, f"{fig.path} figure {fig.index}: still the build's drawing"
        missing = unlabelled(pre["figure"], layout, fig.drawn["texts"], scale)
        checked += len(category_axes(pre["figure"], layout))
        if missing:
            found[f"{fig.path} {fig.demo} ({fig.state})"] = missing
    assert checked > 20, f"only {checked} category axes checked"
    assert found == {}, f"category labels missing beside their panel at 390 px: {found}"


@pytest.mark.parametrize("view", [(1280, "light")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_one_head_notation_and_no_code_names(browser, site_url, live_walk, view):
    """Every figure's title, axes, legend, notes, controls, menus and outputs, as built and live, name
    heads L0H1 and never show a code name (every figure page, from tests/browser/live_walk.py's walk);
    and a refused value's message names the control."""
    bad, heads = {}, {"as built": 0, "live": 0}
    for fig in live_walk(*view).figures:
        text = " | ".join([t["text"] for t in fig.drawn["texts"]] + fig.words)
        heads[fig.state] += len(HEAD.findall(text))
        hits = [n for n in CODE_NAMES if n in text] + [m.group(0) for m in OLD_HEAD.finditer(text)] \
            + SNAKE.findall(text) + MODEL_FILE.findall(text)
        if hits:
            bad[f"{fig.path} {fig.demo} ({fig.state})"] = hits
    # a refused value: the message names the control by its label, no Python list
    ctx = browser.new_context(viewport={"width": view[0], "height": 900}, reduced_motion="reduce")
    page = ctx.new_page()
    try:
        page.goto(site_url + "/gallery/")
        target = page.locator('figure[data-demo="circuits"]').first.get_attribute("id")
        page.goto(site_url + f"/gallery/?head=0.1#{target}")
        fig = page.locator(f"#{target}")
        page.wait_for_function("f => f.dataset.status === 'error'", arg=fig.element_handle(), timeout=90_000)
        message = fig.locator('[data-role="error"]').text_content()
        assert "Head must be one of" in message and "L0H1" in message and "[" not in message \
            and "parameter 'head'" not in message, message
    finally:
        ctx.close()
    assert min(heads.values()) > 50, f"heads named L0H1-style {heads}: is the check reading the figures?"
    assert bad == {}, f"code names or old head names a reader sees: {bad}"
