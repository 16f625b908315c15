"""Article sources: front matter an author can rely on, and maths free of
control characters (a TeX command like \\theta or \\top written through a
string with escapes turns into a tab and still "renders", wrongly)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

CONTENT = Path(__file__).resolve().parents[2] / "site" / "content"
POSTS = sorted(p for p in (CONTENT / "posts").glob("*.md") if p.name != "_index.md")
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def front_matter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("+++\n"), f"{path.name}: front matter must be TOML between +++ lines"
    return tomllib.loads(text.split("+++\n", 2)[1])


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.name)
def test_front_matter(path):
    meta = front_matter(path)
    for key in ("title", "date", "summary", "weight"):
        assert key in meta, f"{path.name}: front matter needs {key!r}"


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.name)
def test_maths_has_no_control_characters(path):
    text = path.read_text(encoding="utf-8")
    for m in MATH.finditer(text):
        body = m.group(1) or m.group(2)
        bad = [c for c in body if ord(c) < 32 and c != "\n"]
        line = text.count("\n", 0, m.start()) + 1
        assert not bad, f"{path.name}:{line}: control character {bad[0]!r} in maths {body[:40]!r}"


@pytest.mark.parametrize("path", POSTS, ids=lambda p: p.name)
def test_articles_cite_their_sources(path):
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^## References", text, re.M), f"{path.name}: end with a References section"
