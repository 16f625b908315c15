"""Following a link to another article without leaving the page (site/assets/js/navigate.js, issue 51):
the worker Python booted in stays, the new article's figures answer from it, back and forward work,
focus and a screen reader's announcement follow, and anything unexpected is a full navigation."""

from pathlib import Path

import pytest

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import BOOT_MS, output_values, set_control, wait_ready

pytestmark = pytest.mark.browser

A, B = "/posts/polariser/", "/posts/composition-and-subspaces/"
LINK_TO_B = f'main a[href="{B}"]'
B_LIVE = f"() => location.pathname === '{B}' && window.headspace.marks.pageLive > 0"
# every figure of the page on show set up (the ones off screen are wired after those on screen)
SET_UP = "() => window.headspace.marks.pageSetUp > 0 && [...document.querySelectorAll('figure.demo')].every(f => window.headspace.wired(f))"
A_LIVE = f"() => location.pathname === '{A}' && window.headspace.marks.pageLive > 0"
SHOTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "shots"  # (ignored by git)


def open_a_live(page, site_url):
    page.goto(site_url + A)
    page.evaluate("() => window.headspace.ready()")
    wait_ready(page)
    assert page.evaluate("() => window.headspace.workers().opened") == 1


def moved_and_answered(page, fig, name, value):
    """Move ``name`` and wait for Python's drawing; its outputs are the registry's for the settings sent."""
    set_control(fig, name, value)
    page.wait_for_function("f => f.dataset.renderCount === '1' && f.dataset.status === 'ready'", arg=fig.element_handle(),
                           timeout=BOOT_MS)
    params = page.evaluate("f => window.headspace.params(f)", fig.element_handle())
    assert_json_close(output_values(fig), REGISTRY[fig.get_attribute("data-demo")].run(params)["outputs"])


@pytest.mark.parametrize("kind", ["shared", "dedicated"])
def test_the_next_article_keeps_the_worker_and_answers_from_python(page, site_url, kind):
    page.add_init_script(f"window.HEADSPACE_WORKER = '{kind}';")
    open_a_live(page, site_url)
    page.evaluate("() => window.headspace.settle()")  # plotly runs, and adds its stylesheet to the head once
    plotly_style = "() => Boolean(document.getElementById('plotly.js-style-global'))"
    assert page.evaluate(plotly_style)
    worker = page.workers[0] if kind == "dedicated" else None
    downloads = []
    page.on("request", lambda r: downloads.append(r.url) if r.url.endswith((".wasm", ".whl", "python_stdlib.zip", ".xz")) else None)
    page.locator(LINK_TO_B).first.click()
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    assert page.evaluate("() => window.headspace.navigations") == 1, "the link was followed by a full navigation"
    assert page.evaluate("() => window.headspace.workers()") == {"opened": 1, "kind": kind}
    if kind == "dedicated":  # the browser's own count: the one worker A started, still running
        assert page.workers == [worker]
    assert downloads == [], f"the runtime was fetched again: {downloads}"
    assert page.evaluate(plotly_style), "plotly's stylesheet went with the old page's head"
    assert page.title().startswith("Composition and Subspaces")
    # a <noscript> holds text, as on a full load with scripts on (parsed into elements, its paragraph
    # would be a block of the page: hidden, but counted by whatever walks the page's blocks)
    assert page.evaluate("() => document.querySelectorAll('main noscript').length > 0"
                         " && document.querySelectorAll('main noscript *').length === 0")
    figures = page.locator("figure.demo")
    page.wait_for_function(SET_UP, timeout=BOOT_MS)
    wait_ready(page)
    statuses = page.evaluate("() => [...document.querySelectorAll('figure.demo')].map(f => f.dataset.status)")
    assert statuses and set(statuses) == {"ready"}, statuses
    fig = figures.first
    control = fig.locator(".demo-controls input[type=range]").first
    moved_and_answered(page, fig, control.get_attribute("name"), control.get_attribute("max"))


def test_back_and_forward_show_each_article_with_working_figures(page, site_url):
    open_a_live(page, site_url)
    # where the link was on screen when clicked: back shows it there again (the browser's scroll
    # anchoring keeps it there as the figures above it change their status lines)
    page.evaluate(f"() => document.addEventListener('click', () => {{ window.leftAt = document.querySelector('{LINK_TO_B}')"
                  ".getBoundingClientRect().top; }, {capture: true, once: true})")
    page.locator(LINK_TO_B).first.click()
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    left_at = page.evaluate("() => window.leftAt")
    assert page.evaluate("() => scrollY") == 0, "the new article starts at its top"
    page.go_back()
    page.wait_for_function(A_LIVE, timeout=BOOT_MS)
    assert page.title().startswith("A polariser is a projection")
    assert page.evaluate("() => [window.headspace.navigations, window.headspace.workers().opened]") == [2, 1]
    page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every(f => f.dataset.status === 'ready')")
    back_at = page.evaluate(f"() => document.querySelector('{LINK_TO_B}').getBoundingClientRect().top")
    assert abs(back_at - left_at) <= 2, "back returns to where the reader was"
    moved_and_answered(page, page.locator("figure.demo").first, "theta", 73)
    page.go_forward()
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    assert page.evaluate("() => [window.headspace.navigations, window.headspace.workers().opened]") == [3, 1]


def test_focus_moves_to_the_new_heading_and_the_page_is_announced(page, site_url):
    open_a_live(page, site_url)
    page.locator(LINK_TO_B).first.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    focused = page.evaluate("() => [document.activeElement.localName, document.activeElement.closest('main') !== null,"
                            " document.activeElement.textContent]")
    assert focused[:2] == ["h1", True] and "Composition" in focused[2], focused
    region = page.locator('[data-role="page-announcement"]')
    assert region.get_attribute("aria-live") == "polite"
    page.wait_for_function("() => document.querySelector('[data-role=page-announcement]').textContent.startsWith('Page loaded: ')")
    assert region.text_content() == f"Page loaded: {page.title()}"
    page.keyboard.press("Tab")  # the next stop is in the new article, not back at the page's top
    assert page.evaluate("() => document.activeElement.closest('main') !== null")


# Each link kind, clicked (a synthetic click: the window's listener, after the page's, records whether
# the page took the click over and stops the browser from following it).
KINDS = {
    "a place in this page": ("#{first_id}", False),
    "a figure's state": (B + "?w1=0.5", False),
    "a download": (B, False, "download"),
    "another tab": (B, False, "target=_blank"),
    "a file": ("/index.xml", False),
    "an embed page": ("/embed/polarizer/", False),
    "another site": ("https://example.org/", False),
    "a modified click": (B, False, "ctrl"),
    "another article": (B, True),
}
CLICK = """([href, attr]) => {
    const a = document.createElement('a');
    a.href = href;
    if (attr === 'download') a.setAttribute('download', '');
    if (attr === 'target=_blank') a.target = '_blank';
    document.querySelector('main p').append(a);
    let taken = null;
    addEventListener('click', (e) => { taken = e.defaultPrevented; e.preventDefault(); }, {once: true});
    a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, button: 0, ctrlKey: attr === 'ctrl'}));
    a.remove();
    return taken;
}"""


def test_only_links_to_site_pages_are_followed_in_place(page, site_url):
    open_a_live(page, site_url)
    first_id = page.evaluate("() => document.querySelector('main [id]').id")
    taken = {name: page.evaluate(CLICK, [spec[0].format(first_id=first_id), spec[2] if len(spec) > 2 else None])
             for name, spec in KINDS.items()}
    assert taken == {name: spec[1] for name, spec in KINDS.items()}
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)  # the last one was followed, in place


@pytest.mark.routes_downloads
@pytest.mark.parametrize("failure", ["the fetch fails", "not a page of the site's structure"])
def test_a_failure_falls_back_to_a_full_navigation(page, site_url, failure):
    page.expect_errors = True  # an aborted request is a console error; checked below

    def route(r):
        if r.request.resource_type == "document":
            return r.continue_()  # the full navigation itself
        if failure == "the fetch fails":
            return r.abort()
        return r.fulfill(status=200, content_type="text/html", body="<!doctype html><title>x</title><p>No main here</p>")
    page.route(site_url + B, route)
    open_a_live(page, site_url)
    page.evaluate("() => { window.stillThere = true; }")
    page.locator(LINK_TO_B).first.click()
    page.wait_for_function(f"() => location.pathname === '{B}' && !window.stillThere && window.headspace", timeout=BOOT_MS)
    assert page.evaluate("() => window.headspace.navigations") == 0, "a new document, loaded in full"
    assert page.title().startswith("Composition and Subspaces")
    page.evaluate("() => window.headspace.ready()")
    wait_ready(page)
    errors = [e for e in page.watch.errors if "Failed to load resource" not in e and "net::ERR_FAILED" not in e]
    assert errors == []


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_next_article_looks_as_on_a_full_load(browser, site_url, width, scheme):
    """Screenshots of B shown in place (to look at: bench/results/shots/), and its first screen the
    same as a full load's: the build's drawings at once, the same layout."""
    shots = {}
    for how in ("in place", "full"):
        context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme, reduced_motion="reduce")
        try:
            page = context.new_page()
            if how == "in place":
                open_a_live(page, site_url)
                page.locator(LINK_TO_B).first.click()
                page.wait_for_function(B_LIVE, timeout=BOOT_MS)
                page.wait_for_function(SET_UP, timeout=BOOT_MS)
                wait_ready(page)
            else:
                page.goto(site_url + B)
                page.evaluate("() => window.headspace.ready()")
                wait_ready(page)
            page.evaluate("() => document.activeElement.blur()")
            if how == "in place":
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"next-article-top-{width}-{scheme}.png"))
            page.locator("figure.demo").first.scroll_into_view_if_needed()
            shots[how] = page.evaluate("""() => ({
                figures: [...document.querySelectorAll('figure.demo')].map(f => [f.dataset.demo, f.dataset.status]),
                // where the first figure sits and how tall it is (a later one's height follows its status
                // line, which says what the figure last did: not the same from one load to the next)
                first: (r => [Math.round(r.top + scrollY), Math.round(r.height)])(document.querySelector('figure.demo').getBoundingClientRect()),
                styles: [...document.styleSheets].map(s => s.ownerNode.outerHTML.slice(0, 80)), background: getComputedStyle(document.body).backgroundColor,
                title: document.title})""")
            if how == "in place":
                page.screenshot(path=str(SHOTS / f"next-article-figure-{width}-{scheme}.png"))
        finally:
            context.close()
    assert shots["in place"] == shots["full"]


def test_a_page_without_figures_in_between_keeps_the_worker(page, site_url):
    open_a_live(page, site_url)
    page.locator('header a[href="/about/"]').click()
    page.wait_for_function("() => location.pathname === '/about/' && window.headspace.navigations === 1")
    assert page.locator("main figure.demo").count() == 0
    page.locator('header nav a[href="/"]').click()  # the home page, which has figures of its own
    page.wait_for_function("() => location.pathname === '/' && window.headspace.marks.pageLive > 0", timeout=BOOT_MS)
    page.wait_for_function(SET_UP, timeout=BOOT_MS)
    wait_ready(page)
    assert page.evaluate("() => [window.headspace.navigations, window.headspace.workers().opened]") == [2, 1]
    statuses = page.evaluate("() => [...document.querySelectorAll('figure.demo')].map(f => f.dataset.status)")
    assert statuses and set(statuses) == {"ready"}, statuses


# What the figures do, in order: a figure's menu enabled (it is wired: its controls are enabled
# earlier, as it is named) and its status "ready" (it answers from Python), each with the figure's id,
# as a MutationObserver sees them.
RECORD_ORDER = """() => {
    window.order = [];
    new MutationObserver((records) => {
        for (const r of records) {
            const fig = r.target.closest('figure.demo');
            if (r.attributeName === 'disabled' && r.target.matches('[data-action=link]') && !r.target.disabled) window.order.push(['wired', fig.id]);
            if (r.attributeName === 'data-status' && r.target === fig && fig.dataset.status === 'ready') window.order.push(['ready', fig.id]);
        }
    }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['disabled', 'data-status']});
}"""
ON_SCREEN = "() => [...document.querySelectorAll('figure.demo')].filter(f => { const r = f.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }).map(f => f.id)"


def test_the_figure_on_screen_answers_before_the_others_are_set_up(page, site_url):
    """A link to a figure in the middle of B: that figure, on screen, is wired and answers from Python
    before any figure off screen is wired (order, not time)."""
    open_a_live(page, site_url)
    target = "demo-polarizer-4"
    page.evaluate(f"() => document.querySelector('{LINK_TO_B}').setAttribute('href', '{B}#{target}')")
    page.evaluate(RECORD_ORDER)
    page.locator(f'main a[href="{B}#{target}"]').first.click()
    page.wait_for_function(SET_UP, timeout=BOOT_MS)
    wait_ready(page)
    assert page.evaluate("() => window.headspace.navigations") == 1
    shown = page.evaluate(ON_SCREEN)
    assert target in shown and len(shown) < page.locator("figure.demo").count(), shown
    order = page.evaluate("() => window.order")
    first_ready = next(i for i, (what, _) in enumerate(order) if what == "ready")
    assert order[first_ready][1] in shown, order
    wired_before = [fig for what, fig in order[:first_ready] if what == "wired"]
    assert wired_before and set(wired_before) <= set(shown), order
    assert sorted(fig for what, fig in order if what == "wired") == sorted(page.evaluate(
        "() => [...document.querySelectorAll('figure.demo')].map(f => f.id)")), "each figure wired once"


# The worker's answer to the page's second "boot" (B's demos, asked after the swap) held back until
# the test lets it go: B's off-screen figures wait for it.
HOLD_REJOIN = """() => {
    const post = Worker.prototype.postMessage;
    let boots = 0;
    window.heldRejoin = null;
    Worker.prototype.postMessage = function (message, ...rest) {
        if (message && message.type === 'boot' && ++boots === 2) { window.heldRejoin = () => post.call(this, message, ...rest); return; }
        return post.call(this, message, ...rest);
    };
}"""


def test_a_figure_scrolled_to_before_its_turn_is_set_up_at_once(page, site_url):
    page.add_init_script("window.HEADSPACE_WORKER = 'dedicated';")
    page.add_init_script(f"({HOLD_REJOIN})()")
    open_a_live(page, site_url)
    page.locator(LINK_TO_B).first.click()
    page.wait_for_function(f"() => window.heldRejoin && location.pathname === '{B}'", timeout=BOOT_MS)
    wired = "() => [...document.querySelectorAll('figure.demo')].map(f => window.headspace.wired(f))"
    page.wait_for_timeout(500)  # idle time: the off-screen figures still wait for B's Python
    before = page.evaluate(wired)
    assert before[-1] is False and before.count(False) >= 2, before
    page.locator("figure.demo").last.scroll_into_view_if_needed()
    page.wait_for_function("() => window.headspace.wired([...document.querySelectorAll('figure.demo')].at(-1))")
    after = page.evaluate(wired)
    assert after.count(False) >= 1, "the figures in between wait their turn"
    page.evaluate("() => window.heldRejoin()")
    page.wait_for_function(SET_UP, timeout=BOOT_MS)
    wait_ready(page)


def test_back_shows_the_settings_the_reader_left(page, site_url):
    """A slider moved on A, a link followed, back: A's slider and figure at the moved value, drawn by Python."""
    open_a_live(page, site_url)
    fig = page.locator("figure.demo").first
    moved_and_answered(page, fig, "theta", 73)
    page.locator(LINK_TO_B).first.click()
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    page.go_back()
    page.wait_for_function(A_LIVE, timeout=BOOT_MS)
    assert fig.locator('[name="theta"]').input_value() == "73"
    page.wait_for_function("f => f.dataset.renderCount === '1' && f.dataset.status === 'ready'", arg=fig.element_handle(),
                           timeout=BOOT_MS)
    params = page.evaluate("f => window.headspace.params(f)", fig.element_handle())
    assert params["theta"] == 73
    assert_json_close(output_values(fig), REGISTRY["polarizer"].run(params)["outputs"])
    # and forward again, then back: still there (kept in the entry, not only in memory)
    page.go_forward()
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    page.go_back()
    page.wait_for_function(A_LIVE, timeout=BOOT_MS)
    assert fig.locator('[name="theta"]').input_value() == "73"


# Idle moments that never come: a figure off screen stays named but not wired until the reader reaches it.
NO_IDLE = "window.requestIdleCallback = () => 0;"
# The build's drawing a figure shows (the one its CSS does not hide), and its texts' boxes in its plot box.
SHOWN_DRAWING = """fig => { const plot = fig.querySelector('[data-role=plot]'), p = plot.getBoundingClientRect();
  const shown = [...plot.querySelectorAll(':scope > svg.static-figure')].filter(s => getComputedStyle(s).display !== 'none');
  return {room: plot.clientWidth, classes: shown.map(s => s.getAttribute('class')), texts: shown.flatMap(s => [...s.querySelectorAll('text')])
    .map(t => { const r = t.getBoundingClientRect(); return [t.textContent, Math.round(r.x - p.x), Math.round(r.y - p.y)]; })}; }"""


def test_a_figure_off_screen_shows_the_drawing_for_its_width_before_it_is_set_up(browser, site_url):
    """At 390 px, the gallery's last figure, named but not wired (no idle moment came), shows the
    build's drawing of its plot box's width, with its texts where they are once it is on screen and wired."""
    from headspace_site.figure.widths import drawing_width
    context = browser.new_context(viewport={"width": 390, "height": 900}, reduced_motion="reduce")
    try:
        page = context.new_page()
        page.add_init_script(NO_IDLE)
        page.goto(site_url + "/gallery/")
        fig = page.locator("figure.demo").last
        assert fig.evaluate("f => window.headspace.wired(f)") is False
        before = fig.evaluate(SHOWN_DRAWING)
        assert before["classes"] == [f"static-figure w{drawing_width(before['room'])}"], before["classes"]
        assert before["texts"], "the drawing has texts"
        fig.scroll_into_view_if_needed()
        page.wait_for_function("f => window.headspace.wired(f)", arg=fig.element_handle())
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # drawn on screen
        assert fig.evaluate(SHOWN_DRAWING) == before
    finally:
        context.close()


# When the new article's content arrives (the "headspace:page" event, in the swap's own task, before
# any frame): how many of its prose blocks are skipped, and how many of them there are.
SKIPPED_ON_ARRIVAL = """() => document.addEventListener('headspace:page', () => {
  const prose = [...document.querySelectorAll('.post > :is(p, ul, ol)')];
  window.onArrival = {prose: prose.length, skipped: prose.filter(p => getComputedStyle(p).contentVisibility === 'auto').length};
}, {once: true})"""
SKIPPED_NOW = "() => [...document.querySelectorAll('.post > :is(p, ul, ol)')].filter(p => getComputedStyle(p).contentVisibility === 'auto').length"


def test_the_next_articles_prose_waits_until_its_figures_are_live(page, site_url):
    """Its first layout is the equations', headings' and figures' (navigate.js, prose-later.js's
    skipProse); once its figures answer from Python the prose is laid out, none left skipped."""
    open_a_live(page, site_url)
    page.evaluate(SKIPPED_ON_ARRIVAL)
    page.locator(LINK_TO_B).first.click()
    page.wait_for_function(B_LIVE, timeout=BOOT_MS)
    arrival = page.evaluate("() => window.onArrival")
    assert arrival["prose"] > 20 and arrival["skipped"] == arrival["prose"], arrival
    page.wait_for_function(f"() => ({SKIPPED_NOW})() === 0", timeout=BOOT_MS)
    assert page.evaluate("() => [...document.head.querySelectorAll('style')].some(s => s.textContent.includes('content-visibility'))") is False
