"""Every built page that shows a figure carries the CSS Python wrote from the one table of drawing
widths (``headspace_site.figure.widths.css``; tests/unit/test_widths.py checks that CSS itself)."""

from __future__ import annotations

from pathlib import Path

from headspace_site.figure import widths

PUBLIC = Path(__file__).resolve().parents[2] / "site" / "public"


def test_pages_with_figures_carry_the_tables_css():
    pages = [p for p in PUBLIC.rglob("*.html") if 'class="static-figure' in p.read_text()]
    assert len(pages) > 5, "the site is not built; run scripts/build"
    # as Hugo's minifier writes them: no line breaks, no space after "@media"
    rules = widths.css().replace("\n", "").replace("@media (", "@media(")
    assert [p for p in pages if rules not in p.read_text()] == []
