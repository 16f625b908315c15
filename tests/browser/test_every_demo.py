"""Every control of every demo, moved in a real browser, shows exactly the
native outputs for the parameters the page now holds; every article's demos
go ready; pages fit a phone's width."""

from __future__ import annotations

import os

import pytest

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import (
    AS_PARSED, BOOT_MS, PUBLIC, READ_PARAMS, article_paths, output_values, printed, printed_for,
    set_control, wait_ready)

pytestmark = pytest.mark.browser


def another_value(p, current):
    """A valid value different from ``current`` for parameter declaration ``p`` (JSON form)."""
    kind = p["kind"]
    if kind == "checkbox":
        return not current
    if kind == "select":
        options = p["options"]
        return options[(options.index(current) + 1) % len(options)]
    if kind == "matrix":
        return [[v + 0.5 for v in row] for row in current]
    if kind == "tokens":  # the same ids, rotated by one (or the first one changed if that is no change)
        ids = current.split()
        turned = ids[1:] + ids[:1]
        return " ".join(turned if turned != ids else [str((int(ids[0]) + 1) % (p["max"] + 1))] + ids[1:])
    lo, hi = p["min"], p["max"]
    step = p.get("step") or (hi - lo) / 10
    n = round((hi - lo) / step)
    k = round((current - lo) / step)
    k2 = (k + max(1, n // 3)) % (n + 1)
    return lo + k2 * step


def gallery_demos(demos_data):
    """Every demo, or those named in $HEADSPACE_TEST_DEMOS (comma-separated: a quick look at new ones)."""
    only = [n for n in os.environ.get("HEADSPACE_TEST_DEMOS", "").split(",") if n]
    return sorted(n for n in demos_data["registry"] if not only or n in only)


def test_every_control_of_every_demo(page, site_url, demos_data):
    page.goto(f"{site_url}/gallery/")
    wait_ready(page)
    for name in gallery_demos(demos_data):
        fig = page.locator(f'figure.demo[data-demo="{name}"]')
        fig.scroll_into_view_if_needed()
        for p in demos_data["registry"][name]["params"]:
            current = fig.evaluate(READ_PARAMS)[p["name"]]
            if p["kind"] == "matrix":
                pytest.fail("matrix controls need a setter in this test")  # none shipped yet
            before = int(fig.get_attribute("data-render-count"))
            set_control(fig, p["name"], another_value(p, current))
            page.wait_for_function(
                f"() => Number(document.querySelector('figure.demo[data-demo=\"{name}\"]').dataset.renderCount) > {before}"
                f" || document.querySelector('figure.demo[data-demo=\"{name}\"]').dataset.status === 'error'",
                timeout=30_000)
            assert fig.get_attribute("data-status") == "ready", fig.locator('[data-role="error"]').text_content()
            params = fig.evaluate(READ_PARAMS)
            assert params[p["name"]] != current
            native = REGISTRY[name].run(params)["outputs"]
            assert_json_close(output_values(fig), native, path=f"{name}{params}")
            assert printed(fig) == fig.evaluate(AS_PARSED, printed_for(name, output_values(fig), native)), name


def test_every_article_goes_live(page, site_url):
    for slug in article_paths(PUBLIC):
        page.goto(f"{site_url}/posts/{slug}/")
        if page.locator("figure.demo").count():
            wait_ready(page)
            page.evaluate("() => window.headspace.settle()")  # plotly draws every figure, as for a pointer on each
            page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every("
                                   "f => f.querySelector('.demo-plot .main-svg') && !f.querySelector('svg.static-figure'))",
                                   timeout=BOOT_MS)


def test_pages_fit_a_phone(browser, site_url):
    context = browser.new_context(viewport={"width": 375, "height": 740}, device_scale_factor=2,
                                  is_mobile=True, has_touch=True, reduced_motion="reduce")
    page = context.new_page()
    try:
        for path in ["/", "/gallery/", "/embedding/", "/embed/polarizer/", "/embed/residual-basis/"] + [
                f"/posts/{s}/" for s in article_paths(PUBLIC)]:
            page.goto(f"{site_url}{path}")
            page.wait_for_load_state("load")
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{path} is {overflow}px wider than a 375px phone"
            wide = page.evaluate("""() => [...document.querySelectorAll('main *')]
                .filter(e => !e.closest('.katex-display, .katex-mathml, pre, .demo-plot, .output-scroll, .md-table') && !(e.closest('.katex') && e.closest('svg')))
                .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
                .map(e => e.tagName + ' ' + (e.textContent || '').slice(0, 40)).slice(0, 5)""")
            assert wide == [], f"{path}: elements overflow a phone screen: {wide}"
    finally:
        context.close()
