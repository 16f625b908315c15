"""What "readable" means for a figure, measured in the browser: the checks test_readable.py runs
on every page, importable on their own to list every problem on one page
(``~/.cache/headspace/venv/bin/python tests/browser/readable.py /gallery/ 390 dark`` with the
site built; the venv's .pth puts this checkout's py/src and scripts/ on the path).

A figure is readable when no two of its texts overlap, no text leaves its plot box, every text
meets WCAG AA contrast (4.5:1) against the pixels behind it, and nothing on the page is wider
than the column unless it is a scroll region a reader can see and reach.

>>> problems_of_text([{"text": "a", "box": [0, 0, 10, 10]}, {"text": "b", "box": [5, 5, 10, 10]}], [0, 0, 100, 100])
["texts overlap: 'a' and 'b' (5 x 5 px)"]
"""

from __future__ import annotations

import base64

from headspace_site.figure.colour import luminance  # WCAG's formula, one copy

#: Two text boxes may touch or share this much (px in each direction): glyph boxes include line gaps.
OVERLAP_PX = (2.0, 3.0)
#: WCAG 2.x AA for normal-size text (the figures' text is 10 to 14 px).
AA = 4.5

#: Every visible text of a figure's drawing, with its box relative to the plot box and its colour.
COLLECT = """fig => {
  const plot = fig.querySelector('[data-role="plot"]');
  const p = plot.getBoundingClientRect();
  const visible = el => {
    for (let e = el; e && e !== plot; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || Number(cs.opacity) === 0) return false;
    }
    return true;
  };
  const alpha = el => { let a = 1; for (let e = el; e && e !== plot; e = e.parentElement) a *= Number(getComputedStyle(e).opacity); return a; };
  const texts = [...plot.querySelectorAll('text')].filter(t => t.textContent.trim() && !t.closest('.hoverlayer') && visible(t))
    .map(t => {
      const r = t.getBoundingClientRect();
      const cs = getComputedStyle(t);
      // lines: plotly's tspan.line, the build's tspans placed at an x (a <sub> or <sup> run reads on within its line)
      const lines = [...t.querySelectorAll('tspan.line, svg.static-figure text > tspan[x]')].map(l => l.textContent.trim());
      return {text: (lines.length ? lines.join(' ') : t.textContent.trim()).replace(/\\u200b/g, '').replace(/\\s+/g, ' '), box: [r.x - p.x, r.y - p.y, r.width, r.height],
              fill: cs.fill, alpha: alpha(t) * Number(cs.fillOpacity || 1)};
    }).filter(t => t.box[2] > 0 && t.box[3] > 0);
  return {texts, plot: [0, 0, p.width, p.height], live: !plot.querySelector(':scope > svg.static-figure')};
}"""

#: The size of a figure's drawing on screen: the build's SVG showing, or plotly's.
DRAWING_SIZE = """fig => {
  const plot = fig.querySelector('[data-role="plot"]');
  const svg = [...plot.querySelectorAll(':scope > svg.static-figure')].find(e => getComputedStyle(e).display !== 'none')
    || plot.querySelector('.main-svg');
  const b = svg.getBoundingClientRect();
  return [b.width, b.height];
}"""

#: The colour most often found behind each box of each screenshot (taken with the texts hidden): one
#: list of colours a shot, ``[{png, boxes}]`` in.
SAMPLE = """async shots => Promise.all(shots.map(async ({png, boxes}) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const ctx = c.getContext('2d', {willReadFrequently: true});
  ctx.drawImage(img, 0, 0);
  return boxes.map(([x, y, w, h]) => {
    const x0 = Math.max(0, Math.floor(x)), y0 = Math.max(0, Math.floor(y));
    const x1 = Math.min(c.width, Math.ceil(x + w)), y1 = Math.min(c.height, Math.ceil(y + h));
    if (x1 <= x0 || y1 <= y0) return null;
    const d = ctx.getImageData(x0, y0, x1 - x0, y1 - y0).data;
    const counts = new Map();
    for (let i = 0; i < d.length; i += 4) {
      const key = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    let best = 0, most = -1;
    for (const [k, n] of counts) if (n > most) { most = n; best = k; }
    return [(best >> 16) & 255, (best >> 8) & 255, best & 255];
  });
}))"""

#: Every figure's texts (COLLECT) in one call, each read laid out as it is drawn on screen (a figure off
#: screen is skipped by the browser, and may answer from an older layout: see live_walk.read_figures).
COLLECT_ALL = f"""figs => figs.map(fig => {{ const skip = fig.style.contentVisibility; fig.style.contentVisibility = 'visible';
  try {{ return ({COLLECT})(fig); }} finally {{ fig.style.contentVisibility = skip; }} }})"""
#: Every figure of the page wired (demos.js: those near the screen at once, the rest one an idle moment),
#: as each is by the time a reader scrolls to it.
WIRED = "() => window.headspace.marks.pageSetUp != null"

HIDE_TEXT = ".hs-hide-text [data-role='plot'] text { visibility: hidden !important; }"

#: Elements wider than the column (main's box, or the screen) that are not inside a scroll region.
OVERFLOW = """() => {
  const main = document.querySelector('main');
  const column = Math.min(innerWidth, main.getBoundingClientRect().right);
  // A figure may be wider than the text column (it is, on a laptop), never wider than the screen,
  // and what is in it stays inside its box.
  const limitOf = el => { const fig = el.closest('figure.demo');
    return (fig ? Math.min(innerWidth, fig.getBoundingClientRect().right) : column) + 1; };
  const scrolls = el => { const cs = getComputedStyle(el); return /(auto|scroll)/.test(cs.overflowX) && el.scrollWidth > el.clientWidth; };
  const bad = [];
  for (const el of main.querySelectorAll('*')) {
    if (el.closest('.katex-mathml') || el.parentElement.closest('svg')) continue; // hidden MathML; an SVG counts as one
    const r = el.getBoundingClientRect();
    const limit = limitOf(el);
    if (r.width === 0 || r.right <= limit) continue;
    let inside = false;
    for (let e = el.parentElement; e && e !== main; e = e.parentElement)
      if (scrolls(e) && e.getBoundingClientRect().right <= limit) { inside = e.hasAttribute('tabindex'); break; }
    if (!inside) bad.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}.${[...el.classList].join('.')} ends at ${Math.round(r.right)} px`);
  }
  const page = document.documentElement.scrollWidth > innerWidth ? [`the page scrolls sideways (${document.documentElement.scrollWidth} px)`] : [];
  return page.concat(bad.slice(0, 5));
}"""


def problems_of_text(texts: list[dict], plot: list[float]) -> list[str]:
    """Overlapping texts and texts outside the plot box; ``box`` is [x, y, width, height]."""
    out = []
    for i, a in enumerate(texts):
        ax, ay, aw, ah = a["box"]
        px, py, pw, ph = plot
        if ax < px - 1 or ay < py - 1 or ax + aw > px + pw + 1 or ay + ah > py + ph + 1:
            out.append(f"text outside the figure: {a['text']!r} at {[round(v) for v in a['box']]} in {[round(v) for v in plot]}")
        for b in texts[i + 1:]:
            bx, by, bw, bh = b["box"]
            w = min(ax + aw, bx + bw) - max(ax, bx)
            h = min(ay + ah, by + bh) - max(ay, by)
            if w > OVERLAP_PX[0] and h > OVERLAP_PX[1]:
                out.append(f"texts overlap: {a['text']!r} and {b['text']!r} ({w:.0f} x {h:.0f} px)")
    return out


def _rgb(css: str) -> tuple[float, float, float, float]:
    parts = css[css.index("(") + 1:css.index(")")].replace("/", ",").split(",")
    r, g, b = (float(v) for v in parts[:3])
    return r, g, b, float(parts[3]) if len(parts) > 3 else 1.0


def contrast(fg, bg) -> float:
    """WCAG contrast ratio of two RGB colours.

    >>> round(contrast((0, 0, 0), (255, 255, 255)), 1)
    21.0
    """
    hi, lo = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def problems_of_contrast(texts: list[dict], backgrounds: list) -> list[str]:
    out = []
    for t, bg in zip(texts, backgrounds):
        if bg is None:
            continue
        r, g, b, a = _rgb(t["fill"])
        a *= t["alpha"]
        fg = tuple(a * c + (1 - a) * d for c, d in zip((r, g, b), bg))
        ratio = contrast(fg, bg)
        if ratio < AA:
            out.append(f"low contrast {ratio:.2f}:1: {t['text']!r} ({t['fill']} on rgb{tuple(bg)})")
    return out


def page_problems(page) -> dict[str, list[str]]:
    """{figure id (or "page"): problems} for every figure on the page and the page's column.

    Every figure's texts are read in one call and every figure's texts hidden at once for the
    screenshots (one a figure's plot, which only shows its own figure), then every background sampled
    in one call: a figure's round trips to the browser once cost more than its screenshot (decision 0010).
    """
    found = {}
    overflow = page.evaluate(OVERFLOW)
    if overflow:
        found["page"] = overflow
    figs = page.locator("figure.demo")
    if figs.count():
        page.wait_for_function(WIRED, timeout=90_000)  # browser_support.BOOT_MS: a loaded machine
    infos = figs.evaluate_all(COLLECT_ALL)
    if not infos:
        return found
    problems = [problems_of_text(info["texts"], info["plot"]) for info in infos]
    drawn = [i for i, info in enumerate(infos) if info["texts"]]
    if drawn:
        page.add_style_tag(content=HIDE_TEXT)
        figs.evaluate_all("figs => figs.forEach(f => f.classList.add('hs-hide-text'))")
        try:
            shots = [{"png": base64.b64encode(figs.nth(i).locator('[data-role="plot"]').screenshot(animations="disabled")).decode(),
                      "boxes": [t["box"] for t in infos[i]["texts"]]} for i in drawn]
        finally:
            figs.evaluate_all("figs => figs.forEach(f => f.classList.remove('hs-hide-text'))")
        for i, backgrounds in zip(drawn, page.evaluate(SAMPLE, shots)):
            problems[i] += problems_of_contrast(infos[i]["texts"], backgrounds)
    ids = figs.evaluate_all("figs => figs.map(f => f.getAttribute('id'))")
    for fig_id, found_here in zip(ids, problems):
        if found_here:
            found[fig_id] = found_here
    return found


def main(argv: list[str]) -> int:
    """List the problems of every figure on a page, as built and once live."""
    from playwright.sync_api import sync_playwright
    from sitebuild import devserver
    from sitebuild.browser import CHROMIUM, CHROMIUM_ARGS
    path, width, scheme = argv[0], int(argv[1]), argv[2]
    server = devserver.serve(0)
    url = f"http://127.0.0.1:{server.server_port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True,
                                   reduced_motion="reduce").new_page()
        page.goto(url + path)
        built = page_problems(page)
        page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every(f => ['ready', 'error'].includes(f.dataset.status))", timeout=120000)
        page.evaluate("() => window.headspace.settle()")  # plotly draws every figure, as for a pointer
        live = page_problems(page)
        browser.close()
    server.shutdown()
    for name, found in (("as built", built), ("live", live)):
        print(f"{path} at {width} px, {scheme}, {name}: {sum(map(len, found.values()))} problems")
        for where, problems in found.items():
            for problem in problems:
                print(f"  {where}: {problem}")
    return 0


if __name__ == "__main__":
    import sys
    raise SystemExit(main(sys.argv[1:]))
