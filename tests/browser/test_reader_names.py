"""One reader-facing name per score and per model family, on every page (issue 49, point 1).

Prose, captions, table headers, menus and printed outputs name a score as
``headspace_site.figure.names`` does ("SVD bound", "path size") and a zoo family in words
("induction, 2 layers, no norm"); the library's keys (``svd_bound``, ``product_norm``,
``induction-none-attn-2l``, the model file ``attn-only-2l``) appear only in code a reader would
type: a ``pre`` block, or inline code that is a call or an assignment (``metric="svd_bound"``); on
the library's own pages (Use it, the models, the reference) any inline code, where a model's file
name is what the reader types.
The live figures' own texts are checked by test_figure_text.py with the same names.
"""

from __future__ import annotations

import re

import pytest

from browser_support import PUBLIC
from headspace.benchmark import FAMILIES
from headspace_site.figure.names import METRIC_NAMES, family, family_short

pytestmark = pytest.mark.browser

#: The library's keys for scores that a reader could mistake for words of the page: those with an
#: underscore (the one-word keys, "token", "subspace", are also the scores' names).
SCORE_KEYS = tuple(k for k in METRIC_NAMES if "_" in k)
#: A zoo family's or a shipped model's file name.
MODEL_FILE = re.compile(r"\b(?:[a-z]+-(?:none|rms|ln)-(?:attn|mlp)-\d+l|attn-only-\d+l(?:-rms)?)\b")
#: A name in snake case ("d_model"): a key of the code's, not a word of a table's header.
SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
#: Names a score had before it had one: the menus' "(baseline)" suffix.
OLD_ALIASES = ("path size (baseline)", "head sizes (baseline)")

#: What a reader reads, by where it sits; code a reader would type is left out.
READ = """() => {
  const article = location.pathname.startsWith('/posts/');
  const typed = el => el.closest('pre') || (el.closest('code') && (!article || /[=(]/.test(el.closest('code').textContent)));
  const text = sel => [...document.querySelectorAll(sel)].filter(e => !typed(e))
    .map(e => e.textContent.replace(/\\s+/g, ' ').trim()).filter(Boolean);
  const prose = [];
  const walk = document.createTreeWalker(document.querySelector('main') || document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || typed(el) || el.closest('script, style, figure.demo')) continue;
    const t = n.textContent.replace(/\\s+/g, ' ').trim();
    if (t) prose.push(t);
  }
  const scoreCells = [...document.querySelectorAll('table')].filter(t => {
    const h = t.querySelector('th'); return h && h.textContent.trim() === 'score';
  }).flatMap(t => [...t.querySelectorAll('tbody tr td:first-child')].map(td => td.textContent.trim()));
  const scoreOptions = [...document.querySelectorAll('figure.demo select[name="score"] option,'
    + ' figure.demo select[name="metric"] option')].map(o => o.textContent.trim());
  return {captions: text('figcaption'), headers: text('th'), prose,
          figure: text('figure.demo label, figure.demo option, figure.demo output, figure.demo .output-name'),
          scoreCells, scoreOptions};
}"""


def pages() -> list[str]:
    """Every built HTML page but the embed pages (each shows one gallery figure) and the API reference
    (pdoc's pages of the library, where the keys are the names a reader types)."""
    out = []
    for p in sorted(PUBLIC.rglob("index.html")):
        rel = "/" + str(p.parent.relative_to(PUBLIC)).strip(".") + "/"
        if not rel.startswith(("/embed/", "/reference/")) and "/page/" not in rel:   # the API's own keys
            out.append(rel.replace("//", "/"))
    return out


def code_names(text: str) -> list[str]:
    return [k for k in SCORE_KEYS if re.search(rf"(?<![\w-]){k}(?![\w-])", text)] + MODEL_FILE.findall(text) \
        + [a for a in OLD_ALIASES if a in text]


def test_family_names_cover_the_zoo():
    """Every family of the benchmark's zoo has a name in words, and a short one, and no two share one."""
    names = [family(f) for f in FAMILIES]
    assert len(set(names)) == len(set(FAMILIES)) == len({family_short(f) for f in FAMILIES})
    assert all(MODEL_FILE.search(n) is None and "_" not in n for n in names), names


def test_no_code_names_where_a_reader_reads(browser, site_url):
    """No score key, family key or model file name in any caption, table header, menu, output or
    running prose of any page; and every score a table row or a menu names is named as the figures
    name it."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = ctx.new_page()
    bad, seen, named = {}, 0, set()
    words = set(METRIC_NAMES.values())
    try:
        for path in pages():
            page.goto(site_url + path)
            read = page.evaluate(READ)
            for where in ("captions", "headers", "prose", "figure"):
                seen += len(read[where])
                hits = sorted({h for t in read[where] for h in code_names(t)}
                              | ({h for t in read[where] for h in SNAKE.findall(t)} if where == "headers" else set()))
                if hits:
                    bad[f"{path} {where}"] = hits
            for where in ("scoreCells", "scoreOptions"):
                other = sorted({t for t in read[where] if t not in words})
                named |= set(read[where])
                if other:
                    bad[f"{path} {where} (not a score's one name)"] = other
    finally:
        ctx.close()
    assert seen > 1000 and len(named) >= 10, (seen, named)
    assert bad == {}, f"code names or second names where a reader reads: {bad}"


def test_a_refused_input_names_its_control_once(browser, site_url):
    """A mistyped token: the message under the control names it once ("Tokens: token 3 must be ..."),
    not "Tokens: Tokens: token 3 ..." (issue 49, point 11)."""
    from browser_support import wait_ready
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    page = ctx.new_page()
    try:
        page.goto(site_url + "/posts/transformer-circuits-primer/")
        wait_ready(page)
        fig = page.locator('figure[data-demo="attention-explorer"]').first
        box = fig.locator('input[name="tokens"]')
        box.fill("1 2 x")
        box.dispatch_event("change")
        page.wait_for_function("f => f.dataset.status === 'error'", arg=fig.element_handle(), timeout=60_000)
        message = fig.locator('[data-role="error"]').text_content()
    finally:
        ctx.close()
    assert "token 3" in message and message.count("Tokens") == 1, message


def test_a_full_stop_keeps_to_its_formula(browser, site_url):
    """At 390 px a full stop or comma after inline maths never starts a line alone: each formula
    followed by one (render-passthrough.html, page.html) lies on a single line with it."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
    page = ctx.new_page()
    broken, seen = [], 0
    try:
        for path in ["/posts/formalising-composition/", "/posts/composition-and-subspaces/"]:
            page.goto(site_url + path)
            rows = page.evaluate("""() => [...document.querySelectorAll('.mi')].filter(m => m.querySelector(':scope > .mi-p'))
              .map(m => { const tops = new Set([...m.getClientRects()].map(r => Math.round(r.top)));
                          return {text: m.textContent.slice(-30), lines: tops.size}; })""")
            seen += len(rows)
            broken += [f"{path}: {r['text']!r}" for r in rows if r["lines"] != 1]
    finally:
        ctx.close()
    assert seen > 20, f"only {seen} formulas followed by a stop: is the marker there?"
    assert broken == [], broken
