"""Small things a newcomer trips on (issue 49, point 11), checked on the built site: the models page
prints no "0 KB" file, the Use-it page names heads L0H1 and sends readers who ask which score to trust
to the benchmark, and Home lists the articles in reading order, each part after the one it builds on,
with the note on how the figures work next to the primer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PUBLIC = Path(__file__).resolve().parents[2] / "site" / "public"


def page(path: str) -> str:
    file = PUBLIC / path / "index.html"
    if not file.exists():
        pytest.fail(f"{file} is not built; run scripts/build")
    return file.read_text(encoding="utf-8")


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(script|style|svg)\b.*?</\1>", " ", html)).split())


def test_the_models_page_prints_every_file_size():
    words = text(page("trained-models"))
    sizes = re.findall(r"(\d[\d.,]*) (bytes|kB|KB|MB)\b", words)
    assert sizes and not [s for s in sizes if float(s[0].replace(",", "")) == 0], sizes


def test_use_it_names_heads_and_points_to_the_benchmark():
    html = page("use-it")
    assert "head 0.1" not in html and "L0H1" in html
    assert "/posts/which-composition-score/" in html


def test_home_lists_the_articles_in_reading_order():
    html = page("")
    cards = re.findall(r'<article class="?post-card"?>(.*?)</article>', html, re.S)
    titles = [text(re.search(r"<h2>(.*?)</h2>", c, re.S).group(1)) for c in cards]
    parts = [int(m.group(1)) for c in cards for m in [re.search(r"Part (\d+)", text(c))] if m]
    assert parts == sorted(parts) == list(range(1, len(parts) + 1)), parts
    order = [t.lower() for t in titles]
    at = {k: next(i for i, t in enumerate(order) if k in t) for k in
          ("primer", "polariser", "subspaces", "measuring composition", "formalising", "why is measuring", "which")}
    assert at["primer"] < at["polariser"] < at["subspaces"] < at["measuring composition"] < at["formalising"] \
        < at["why is measuring"] < at["which"], titles
    assert at["formalising"] == at["measuring composition"] + 1   # it opens where Measuring ends
