"""Frames drawn in place by patch.js look like plotly's own drawing of the same figure.

While a reader drags, patch.js writes a figure's new data into the SVG plotly
drew for the previous one. Every demo's bench control (as scripts/bench picks it)
must be drawn in place: move it, photograph the patched figure, let plotly draw the same figure from scratch,
photograph again, and compare the pixels. Also: plotly draws the shown figure
itself when the reader's pointer reaches the plot, so hover values are the
shown figure's, and not before (a redraw is a long task on a phone).
"""

import base64

import pytest

from test_polarizer import BOOT_MS

pytestmark = pytest.mark.browser

# Fraction of a figure's pixels allowed to differ by more than DIFF_LEVEL in some channel:
# anti-aliasing where a line is drawn from plotly's simplified path instead of every point.
DIFF_LEVEL = 48
MAX_DIFFERING = 0.004

DIFF_JS = """async ([a, b]) => {
    const load = (src) => new Promise((ok, fail) => { const i = new Image(); i.onload = () => ok(i); i.onerror = fail; i.src = src; });
    const [A, B] = await Promise.all([load(a), load(b)]);
    if (A.width !== B.width || A.height !== B.height) return {size: [A.width, A.height, B.width, B.height]};
    const pixels = (img) => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
        const x = c.getContext('2d'); x.drawImage(img, 0, 0); return x.getImageData(0, 0, c.width, c.height).data; };
    const p = pixels(A), q = pixels(B);
    let differing = 0;
    for (let i = 0; i < p.length; i += 4)
        if (Math.max(Math.abs(p[i] - q[i]), Math.abs(p[i+1] - q[i+1]), Math.abs(p[i+2] - q[i+2])) > %d) differing++;
    return {differing: differing / (p.length / 4), pixels: p.length / 4};
}""" % DIFF_LEVEL

# Step the figure's control as scripts/bench picks it (its first range, else first select, else
# checkbox) and report whether patch.js drew it.
STEP_JS = """async (name) => {
    const fig = document.querySelector(`figure.demo[data-demo="${name}"]`);
    const controls = [...fig.querySelectorAll('.demo-controls [name]')];
    const el = controls.find(c => c.type === 'range') || controls.find(c => c.tagName === 'SELECT')
            || controls.find(c => c.type === 'checkbox');
    if (!el) return null;
    // Whether each render was drawn in place; a render of an earlier request may still arrive after
    // the first event (a slow Python call), so wait until renders stop and judge the last one.
    let count = Number(fig.dataset.patchCount || 0), last = null, quiet;
    const seen = () => { const now = Number(fig.dataset.patchCount || 0); last = now > count; count = now; quiet(); };
    fig.addEventListener('demo:rendered', seen);
    if (el.tagName === 'SELECT') el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
    else if (el.type === 'checkbox') el.checked = !el.checked;
    else {
        const step = Number(el.step) || 1;
        el.value = String(Number(el.value) + step <= Number(el.max) ? Number(el.value) + step : Number(el.value) - step);
    }
    await new Promise(r => {
        let timer = null;
        // a move that never renders (an error, a refusal) ends the step instead of hanging the test
        const cap = setTimeout(() => { last = `no render within 20 s (status ${fig.dataset.status})`; r(); }, 20000);
        quiet = () => { clearTimeout(timer); clearTimeout(cap); timer = setTimeout(r, 400); };
        el.dispatchEvent(new Event('input', {bubbles: true}));
    });
    fig.removeEventListener('demo:rendered', seen);
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    return last;
}"""


# What patch.js draws in a figure in place of plotly's own marks (hidden meanwhile) right now:
# "path" for markers as one path, "foreignObject" for a heatmap's canvas.
IN_PLACE_JS = """(name) => [...document.querySelector(`figure.demo[data-demo="${name}"]`)
    .querySelectorAll('.drawn-in-place')].filter(e => e.previousElementSibling.getAttribute('display') === 'none')
    .map(e => e.tagName)"""


def shot(page, name) -> str:
    png = page.locator(f'figure.demo[data-demo="{name}"] [data-role="plot"]').screenshot(animations="disabled")
    return "data:image/png;base64," + base64.b64encode(png).decode()


def live_gallery(browser, site_url, scheme, width=1100):
    """(context, page, page errors) on the gallery with Python ready and plotly drawing every figure;
    plotly redraws a patched figure only when the test says (its pointer stays off the plots)."""
    context = browser.new_context(reduced_motion="reduce", color_scheme=scheme, viewport={"width": width, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{site_url}/gallery/")
        page.evaluate("() => window.headspace.ready()")
        page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every(f => f.dataset.status === 'ready')",
                               timeout=BOOT_MS)
        page.locator("figure.demo").first.hover()  # a reader reaches for a figure: plotly takes over
        page.wait_for_function("() => window.headspace.marks.firstFigure", timeout=BOOT_MS)
        page.mouse.move(-10, -10)  # off the page: figures scrolled under a pointer would settle
    except Exception:
        context.close()
        raise
    return context, page, errors


# Both schemes, and a phone's width, where figures are laid out for the narrowest drawing width
# (a title that wraps for one setting and not for the next needs plotly).
@pytest.mark.parametrize("scheme, width", [("light", 1100), ("dark", 390)])
def test_patched_frames_look_like_plotly(browser, site_url, scheme, width):
    context, page, errors = live_gallery(browser, site_url, scheme, width)
    try:
        names = page.evaluate("() => [...new Set([...document.querySelectorAll('figure.demo')].map(f => f.dataset.demo))]")
        compared, results, refused, in_place = [], {}, {}, {}
        for name in names:
            page.locator(f'figure.demo[data-demo="{name}"]').scroll_into_view_if_needed()
            patched = [page.evaluate(STEP_JS, name) for _ in range(3)]
            if patched[-1] is None:  # no control to move
                continue
            if isinstance(patched[-1], str):  # no render came
                refused[name] = patched[-1]
                continue
            if not patched[-1]:  # plotly drew it: the control changed more than patch.js draws
                refused[name] = page.get_attribute(f'figure.demo[data-demo="{name}"]', "data-patch-refused")
                continue
            patched_png = shot(page, name)
            for tag in page.evaluate(IN_PLACE_JS, name):
                in_place.setdefault(tag, set()).add(name)
            page.evaluate("() => window.headspace.settle()")
            page.wait_for_timeout(50)
            plotly_png = shot(page, name)
            results[name] = page.evaluate(DIFF_JS, [patched_png, plotly_png])
            compared.append(name)
        # Every demo's bench control is drawn in place (scripts/bench's slider measure moves it).
        assert not refused, f"plotly had to draw these demos' moves: {refused}; drawn in place: {compared}"
        assert len(compared) >= 20, f"patch.js drew too few demos' frames: {compared}"
        bad = {n: r for n, r in results.items() if "size" in r or r["differing"] > MAX_DIFFERING}
        assert not bad, f"patched frames differ from plotly's drawing: {bad}; all: {results}"
        # The frames compared include markers drawn as one path and a heatmap's canvas shown in
        # place of plotly's image (patch.js: oneShape, canvasInPlace).
        assert {"polarizer", "score-benchmark"} <= in_place.get("path", set()), in_place
        assert "transform-rules" in in_place.get("foreignObject", set()), in_place
        assert errors == []
    finally:
        context.close()


def test_plotly_takes_over_when_the_pointer_reaches_the_plot(page, site_url):
    """After patched frames plotly's own copy of the figure waits: no redraw after a pause, nor for
    a pointer resting on the plot while the figure changes under it (keys move the slider). A
    pointer that moves on the plot, or comes onto it, makes plotly draw the shown figure, so its
    hover values are the shown ones."""
    page.goto(f"{site_url}/posts/polariser/")
    page.evaluate("() => window.headspace.ready()")
    fig = 'figure.demo[data-demo="polarizer"]'
    page.wait_for_function(f"() => document.querySelector('{fig}').dataset.status === 'ready'", timeout=BOOT_MS)
    plot = page.locator(fig).locator("[data-role=plot]")
    plot.hover()  # plotly loads and draws; the pointer rests on the plot
    page.wait_for_function("() => window.headspace.marks.firstFigure", timeout=BOOT_MS)
    plotlys = f"""() => {{
        const fig = document.querySelector('{fig}');
        const gd = fig.querySelector('[data-role=plot]');
        // the line trace's name carries the angle
        return [gd._fullData.map(t => t.name).join('|'), Number(fig.querySelector('input[name=theta]').value)];
    }}"""
    for pointer in ("resting on the plot", "off the plot"):
        if pointer == "off the plot":
            page.locator(fig).locator("input[name=theta]").hover()
        patched = int(page.locator(fig).get_attribute("data-patch-count") or 0)
        for _ in range(3):
            assert page.evaluate(STEP_JS, "polarizer") is not None
        assert int(page.locator(fig).get_attribute("data-patch-count")) > patched, f"moves not patched, pointer {pointer}"
        page.wait_for_timeout(600)  # a pause: nothing redraws
        names, theta = page.evaluate(plotlys)
        assert f"{theta:g}" not in names, f"plotly redrew with the pointer {pointer} ({names!r}, theta {theta})"
        if pointer == "resting on the plot":
            box = plot.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2 + 5, box["y"] + box["height"] / 2 + 5)
        else:
            plot.hover()
        names, theta = page.evaluate(plotlys)
        assert f"{theta:g}" in names, f"plotly's data {names!r} are not the shown figure's (theta {theta})"


# Moves whose frames patch.js draws in place although more than data moves: a bar and its
# outside label crossing zero, and the label hidden once its bar leaves the axis (metric-lab);
# a model switch that moves a colour bar's range (token-path).
# The first value of each is a warm-up (the first frame after the build's figure is plotly's);
# it differs from the demo's default, whose request the page would not send again.
CHOSEN = [("metric-lab", "angle", ["59", "60", "64", "70", "85"]),
          # at 90 degrees five metrics score 0: plotly draws bars of no height, labels on a positive side
          ("metric-lab", "angle", ["90", "89"]), ("metric-lab", "angle", ["90", "45"]),
          ("token-path", "model", ["attn-only-2l-rms", "attn-only-2l", "attn-only-2l-rms"])]

SET_JS = """async ([name, control, value]) => {
    const fig = document.querySelector(`figure.demo[data-demo="${name}"]`);
    const el = fig.querySelector(`.demo-controls [name="${control}"]`);
    const count = Number(fig.dataset.patchCount || 0);
    const done = new Promise(r => fig.addEventListener('demo:rendered', r, {once: true}));
    if (el.tagName === 'SELECT')  // options carry their value as JSON in data-value
        el.selectedIndex = [...el.options].findIndex(o => JSON.parse(o.dataset.value) == value);
    else el.value = value;
    el.dispatchEvent(new Event('input', {bubbles: true}));
    if (await Promise.race([done.then(() => 'ok'), new Promise(r => setTimeout(() => r('timeout'), 20000))]) !== 'ok')
        return [false, `no render after setting ${control} to ${value}`];
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    return [Number(fig.dataset.patchCount || 0) > count, fig.dataset.patchRefused || ""];
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chosen_moves_are_patched_like_plotly(browser, site_url, scheme):
    context, page, errors = live_gallery(browser, site_url, scheme)
    try:
        bad = {}
        for name, control, values in CHOSEN:
            page.locator(f'figure.demo[data-demo="{name}"]').scroll_into_view_if_needed()
            page.evaluate(SET_JS, [name, control, values[0]])
            for value in values[1:]:
                patched, why = page.evaluate(SET_JS, [name, control, value])
                assert patched, f"{name}: moving {control} to {value} was not drawn in place ({why})"
                patched_png = shot(page, name)
                page.evaluate("() => window.headspace.settle()")
                page.wait_for_timeout(50)
                diff = page.evaluate(DIFF_JS, [patched_png, shot(page, name)])
                if "size" in diff or diff["differing"] > MAX_DIFFERING:
                    bad[f"{name} {control}={value}"] = diff
        assert not bad, f"patched frames differ from plotly's drawing: {bad}"
        assert errors == []
    finally:
        context.close()
