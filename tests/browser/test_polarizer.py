"""The whole path in a real browser: prerendered figure, Pyodide boot, a slider
move re-rendered by Python with exactly the native outputs."""

import pytest

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import output_values, set_control, wait_ready, worker_caught_up

pytestmark = pytest.mark.browser


def test_polariser_static_then_live(page, site_url):
    page.goto(f"{site_url}/posts/polariser/")
    fig = page.locator('figure.demo[data-demo="polarizer"]')
    # Before Python: the build's figure is drawn and the outputs are the native defaults.
    assert fig.get_attribute("data-status") in ("static", "loading")
    assert fig.locator(".demo-plot svg.static-figure:visible").count() == 1
    assert output_values(fig) == REGISTRY["polarizer"].run({})["outputs"]

    wait_ready(page)
    # plotly (costly to parse on a phone's main thread) has not run: nobody reached for a figure.
    assert page.evaluate("() => window.Plotly === undefined")
    assert fig.locator(".demo-plot svg.static-figure:visible").count() == 1
    fig.hover()  # a reader's pointer reaches the figure: plotly takes it over
    page.wait_for_function("() => document.querySelector('figure.demo .demo-plot .main-svg') !== null")
    assert fig.locator(".demo-plot svg.static-figure").count() == 0
    assert fig.get_attribute("data-render-count") == "0"
    for count, theta in enumerate([0, 73, 180], start=1):
        set_control(fig, "theta", theta)
        page.wait_for_function(f"() => document.querySelector('figure.demo').dataset.renderCount === '{count}'")
        expected = REGISTRY["polarizer"].run({"theta": theta})["outputs"]
        assert_json_close(output_values(fig), expected)
        assert fig.get_attribute("data-status") == "ready"
    assert fig.locator('[data-role="error"]').is_hidden()


def test_rapid_moves_coalesce_to_the_latest_value(page, site_url):
    page.goto(f"{site_url}/posts/polariser/")
    wait_ready(page)
    fig = page.locator('figure.demo[data-demo="polarizer"]')
    fig.locator('input[name="theta"]').evaluate(
        "el => { for (let v = 0; v <= 150; v++) { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); } }")
    expected = REGISTRY["polarizer"].run({"theta": 150})["outputs"]
    # The last value's answer lands in the end, however slow the machine: a page that dropped it
    # (or drew an older answer after it) never shows 150's matrix, and the wait times out.
    page.wait_for_function("""want => Math.abs(JSON.parse(document.querySelector('output[data-output=jones]')
        .dataset.value)[0][1] - want) < 1e-9""", arg=expected["jones"][0][1], timeout=30_000)
    worker_caught_up(page)  # an older answer still in flight would have landed over it by now
    assert_json_close(output_values(fig), expected)
    # 151 moves, at most a handful of Python calls: stale values were dropped, not queued.
    assert int(fig.get_attribute("data-render-count")) < 10
