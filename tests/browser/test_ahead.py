"""Figures computed ahead (demos.js, worker.js "ahead"): once a reader reaches for a control,
Python computes the figure at its other values, and a move to one of them is drawn from that
answer at once. The figure and outputs must be exactly what a call computes, and an older answer
still on its way must never be drawn over a newer setting."""

import json

import pytest

from headspace_site.demos import REGISTRY
from headspace_site.figure.fit import fit
from support import assert_json_close
from browser_support import BOOT_MS, output_values, wait_ready, worker_caught_up

pytestmark = pytest.mark.browser

# Record each render's detail (demos.js's demo:rendered event) in window.renders.
RECORD = """() => { window.renders = [];
    for (const f of document.querySelectorAll('figure.demo'))
        f.addEventListener('demo:rendered', (e) => window.renders.push(e.detail)); }"""


def test_a_move_to_a_value_computed_ahead_draws_what_python_computes(page, site_url):
    page.goto(f"{site_url}/posts/polariser/")
    wait_ready(page)
    fig = page.locator("figure.demo")
    page.evaluate(RECORD)
    fig.locator('input[name="theta"]').hover()  # the reader reaches for the slider
    page.wait_for_function("f => window.headspace.answered(f) === 181", arg=fig.element_handle(), timeout=BOOT_MS)
    fig.locator('input[name="theta"]').evaluate("el => { el.value = '123'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    page.wait_for_function("() => window.renders.length === 1")
    assert page.evaluate("() => window.renders[0].ahead") is True
    assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 123})["outputs"])
    # What plotly holds once the move settles is the figure a call lays out at this drawing width.
    page.evaluate("() => window.headspace.settle()")
    width = int(fig.locator(".main-svg").first.get_attribute("width"))
    drawn = page.evaluate("f => f.querySelector('[data-role=plot]').data.map(t => [t.x, t.y])", fig.element_handle())
    native = fit(json.loads(json.dumps(REGISTRY["polarizer"].run({"theta": 123})["figure"])), width)["data"]
    assert len(drawn) == len(native)
    for (x, y), trace in zip(drawn, native):
        assert_json_close(x, list(trace["x"]))
        assert_json_close(y, list(trace["y"]))


def test_an_older_answer_in_flight_never_replaces_a_newer_setting(page, site_url):
    """Tick a box (a call: that setting was not computed ahead), then untick it before Python
    answers: the unticked figure is drawn from an answer ahead at once, and the late answer for the
    ticked box is dropped, not drawn over it."""
    page.goto(f"{site_url}/embed/three-polarizers/")
    wait_ready(page)
    fig = page.locator("figure.demo")
    page.evaluate(RECORD)
    fig.locator('input[name="theta1"]').hover()
    page.wait_for_function("f => window.headspace.answered(f) === 181", arg=fig.element_handle(), timeout=BOOT_MS)
    defaults = page.evaluate("f => window.headspace.params(f)", fig.element_handle())
    in_flight = fig.locator('input[name="middle"]').evaluate("""async (box) => {
        box.click();                                   // a setting not computed ahead: a call
        await Promise.resolve(); await Promise.resolve();  // demos.js sends it
        const sent = window.headspace.busy();
        box.click();                                   // back, before any answer can arrive
        return sent;
    }""")
    assert in_flight, "the first click's call was not on its way when the second came"
    page.wait_for_function("() => !window.headspace.busy()", timeout=BOOT_MS)
    worker_caught_up(page)  # the first click's answer, had it been drawn, is in window.renders now
    assert [r.get("ahead", False) for r in page.evaluate("() => window.renders")] == [True]
    assert page.evaluate("f => window.headspace.params(f)", fig.element_handle()) == defaults
    assert_json_close(output_values(fig), REGISTRY["three-polarizers"].run(defaults)["outputs"])
