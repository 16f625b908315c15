"""A move is drawn into the drawing on screen, and what it shows is the engine's drawing.

Every figure is drawn by one engine, ``headspace_site.figure.svg``: the build's first paint, its
answers, and Python's figure for every move. A move writes into the SVG on screen only what
differs (draw.js, ``showDrawing``). Every demo's bench control (as scripts/bench picks it) must be
drawn in place, and what the plot then holds must be exactly the drawing Python made for that
setting, as if written afresh. Also: plotly draws the shown figure only when the reader's pointer
comes onto the plot or moves over it, so its hover values are the shown figure's, and not before.
"""

import pytest

from browser_support import BOOT_MS, next_frame, worker_caught_up

pytestmark = pytest.mark.browser

# The plot's drawing against the SVG the engine made for it, both read back through the browser's
# parser: equal when the move wrote every difference, and nothing else.
SAME_JS = """(name) => {
    const fig = document.querySelector(`figure.demo[data-demo="${name}"]`);
    const t = document.createElement('template');
    t.innerHTML = window.headspace.drawing(fig);
    const plot = fig.querySelector('[data-role=plot]');
    const shown = plot.innerHTML, fresh = t.innerHTML;
    if (shown === fresh) return null;
    let k = 0;
    while (shown[k] === fresh[k]) k++;
    return {shown: shown.slice(Math.max(0, k - 80), k + 80), fresh: fresh.slice(Math.max(0, k - 80), k + 80)};
}"""

# Step the figure's control as scripts/bench picks it (its first range, else first select, else
# checkbox) and report whether it was drawn in place.
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


def live_gallery(browser, site_url, scheme, width=1100):
    """(context, page, page errors) on the gallery with Python ready; the pointer stays off the
    plots, so plotly draws none of them."""
    context = browser.new_context(reduced_motion="reduce", color_scheme=scheme, viewport={"width": width, "height": 900})
    page = context.new_page()
    # Python's drawings only: no stand-in while Python catches up (a model switch under load can
    # take longer than CATCH_UP_MS; tests/browser/test_catching_up.py tests the stand-ins)
    page.add_init_script("window.HEADSPACE_CATCH_UP_MS = 60000")
    page.add_init_script("window.HEADSPACE_EXACT_AFTER_MS = 60000")
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{site_url}/gallery/")
        page.evaluate("() => window.headspace.ready()")
        page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every(f => f.dataset.status === 'ready')",
                               timeout=BOOT_MS)
        page.mouse.move(-10, -10)  # off the page: figures scrolled under a pointer would go to plotly
    except Exception:
        context.close()
        raise
    return context, page, errors


# Both schemes, and a phone's width, where figures are laid out for the narrowest drawing width.
@pytest.mark.parametrize("scheme, width", [("light", 1100), ("dark", 390)])
def test_every_demos_moves_are_drawn_in_place(browser, site_url, scheme, width):
    context, page, errors = live_gallery(browser, site_url, scheme, width)
    try:
        names = page.evaluate("() => [...new Set([...document.querySelectorAll('figure.demo')].map(f => f.dataset.demo))]")
        drawn, not_in_place, differ = [], {}, {}
        for name in names:
            page.locator(f'figure.demo[data-demo="{name}"]').scroll_into_view_if_needed()
            in_place = [page.evaluate(STEP_JS, name) for _ in range(3)]
            if in_place[-1] is None:  # no control to move
                continue
            if in_place[-1] is not True:  # no render came, or the drawing was written afresh
                not_in_place[name] = in_place[-1]
                continue
            if (diff := page.evaluate(SAME_JS, name)):
                differ[name] = diff
            drawn.append(name)
        # Every demo's bench control is drawn in place (scripts/bench's slider measure moves it).
        assert not not_in_place, f"these demos' moves were not drawn in place: {not_in_place}; in place: {drawn}"
        assert len(drawn) >= 20, f"too few demos' moves drawn: {drawn}"
        assert not differ, f"drawings that differ from the engine's: {differ}"
        assert page.locator("figure.demo [data-role=plot] .main-svg").count() == 0, "plotly drew without a pointer"
        assert errors == []
    finally:
        context.close()


def test_plotly_draws_when_the_pointer_reaches_the_plot(page, site_url):
    """plotly draws the figure shown when a pointer comes onto the plot or moves over it, so its
    hover values are the shown ones; not for a pointer resting on the plot while the figure changes
    under it (keys move the slider), nor after a pause. A move then shows the engine's drawing."""
    page.goto(f"{site_url}/posts/polariser/")
    page.evaluate("() => window.headspace.ready()")
    fig = 'figure.demo[data-demo="polarizer"]'
    page.wait_for_function(f"() => document.querySelector('{fig}').dataset.status === 'ready'", timeout=BOOT_MS)
    plot = page.locator(fig).locator("[data-role=plot]")
    plotly = plot.locator(".main-svg")
    plot.hover()  # plotly loads and draws the build's figure; the pointer rests on the plot
    plotly.first.wait_for(timeout=BOOT_MS)
    names = f"""() => {{
        const fig = document.querySelector('{fig}');
        const gd = fig.querySelector('[data-role=plot]');
        // the line trace's name carries the angle
        return [(gd._fullData || []).map(t => t.name).join('|'), Number(fig.querySelector('input[name=theta]').value)];
    }}"""
    for pointer in ("resting on the plot", "off the plot"):
        if pointer == "off the plot":
            page.locator(fig).locator("input[name=theta]").hover()
        in_place = [page.evaluate(STEP_JS, "polarizer") for _ in range(3)]
        assert in_place[-1] is True, f"moves not drawn in place, pointer {pointer}: {in_place}"
        # plotly would draw once the worker answered its figure data and plotly loaded: after that
        # answer (the worker answers in order) and a frame, nothing has redrawn
        worker_caught_up(page)
        next_frame(page)
        assert plotly.count() == 0, f"plotly drew with the pointer {pointer}"
        assert page.evaluate(SAME_JS, "polarizer") is None
        if pointer == "resting on the plot":
            box = plot.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2 + 5, box["y"] + box["height"] / 2 + 5)
        else:
            plot.hover()
        plotly.first.wait_for(timeout=BOOT_MS)
        shown, theta = page.evaluate(names)
        assert f"{theta:g}" in shown, f"plotly's data {shown!r} are not the shown figure's (theta {theta})"


# Moves that change more than numbers: a bar and its outside label crossing zero, and the label
# hidden once its bar leaves the axis (metric-lab); at 90 degrees five metrics score 0 (bars of no
# height); a model switch that moves a colour bar's range (token-path). The first value of each is
# a warm-up, different from the demo's default (whose request the page would not send again).
CHOSEN = [("metric-lab", "angle", ["59", "60", "64", "70", "85"]),
          ("metric-lab", "angle", ["90", "89"]), ("metric-lab", "angle", ["90", "45"]),
          ("token-path", "model", ["attn-only-2l-rms", "attn-only-2l", "attn-only-2l-rms"])]

SET_JS = """async ([name, control, value]) => {
    const fig = document.querySelector(`figure.demo[data-demo="${name}"]`);
    const el = fig.querySelector(`.demo-controls [name="${control}"]`);
    const done = new Promise(r => fig.addEventListener('demo:rendered', (e) => r(e.detail), {once: true}));
    if (el.tagName === 'SELECT')  // options carry their value as JSON in data-value
        el.selectedIndex = [...el.options].findIndex(o => JSON.parse(o.dataset.value) == value);
    else el.value = value;
    el.dispatchEvent(new Event('input', {bubbles: true}));
    const detail = await Promise.race([done, new Promise(r => setTimeout(() => r(null), 20000))]);
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    return detail ? detail.patched : `no render after setting ${control} to ${value}`;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chosen_moves_show_the_engines_drawing(browser, site_url, scheme):
    context, page, errors = live_gallery(browser, site_url, scheme)
    try:
        bad = {}
        for name, control, values in CHOSEN:
            page.locator(f'figure.demo[data-demo="{name}"]').scroll_into_view_if_needed()
            page.evaluate(SET_JS, [name, control, values[0]])
            for value in values[1:]:
                in_place = page.evaluate(SET_JS, [name, control, value])
                assert in_place is True, f"{name}: moving {control} to {value} was not drawn in place ({in_place})"
                if (diff := page.evaluate(SAME_JS, name)):
                    bad[f"{name} {control}={value}"] = diff
        assert not bad, f"drawings that differ from the engine's: {bad}"
        assert errors == []
    finally:
        context.close()
