"""Catching up (reduce.js, issue 51.1): once Python is live, a move it cannot answer within a frame or
two (a new seed: norm-symmetry computes its score curves) shows the nearest answer the page has at
once and says it is catching up; the next move is never blocked behind it, and the message goes
when Python's answer for the latest setting is drawn.

The seed's curves cost a few hundred ms of Python here; each reply is held a second more
(``HEADSPACE_REPLY_DELAY_MS``, figure/python.js), so that "the first answer has not come yet" is
certain on a loaded machine, not a race.
"""

import json

import pytest

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import BOOT_MS, output_values, wait_ready

pytestmark = pytest.mark.browser

DEMO = "norm-symmetry"
# Each drawing, as it happens: what the figure says and what its state holds at that moment.
RECORD = """fig => {
  window.seen = [];
  const note = () => {
    const s = window.headspace.state(fig);
    window.seen.push({catches: s.catchCount, renders: s.renderCount, catching: fig.dataset.catchingUp || null,
      line: fig.querySelector('[data-role=live] .demo-live-text').textContent, queued: s.queued,
      inFlight: s.inFlight, shown: s.shown && s.shown.key, lastKey: s.lastKey});
  };
  new MutationObserver(note).observe(fig, {attributes: true, attributeFilter: ['data-catch-count', 'data-render-count']});
}"""
# A reader's two moves, one straight after the other: a seed Python has not computed, then the
# condition-number slider.
TWO_MOVES = """fig => {
  const seed = fig.querySelector('[name=seed]'), condition = fig.querySelector('[name=log_condition]');
  seed.value = '7'; seed.dispatchEvent(new Event('input', {bubbles: true}));
  const first = JSON.parse(JSON.stringify(window.headspace.state(fig)));
  condition.value = '0.5'; condition.dispatchEvent(new Event('input', {bubbles: true}));
  return {first, params: window.headspace.params(fig)};
}"""


def _catching_up_page(page, site_url, delay_ms=1000):
    page.add_init_script(f"window.HEADSPACE_REPLY_DELAY_MS = {delay_ms}")
    page.goto(f"{site_url}/embed/{DEMO}/")
    wait_ready(page)
    return page.locator("figure.demo")


def test_a_new_seed_never_blocks_the_next_move_and_says_it_is_catching_up(page, site_url):
    fig = _catching_up_page(page, site_url)
    handle = fig.element_handle()
    start = page.evaluate("f => window.headspace.params(f)", handle)
    assert start["seed"] != 7 and start["log_condition"] != 0.5
    renders = int(fig.get_attribute("data-render-count") or 0)
    page.evaluate(RECORD, handle)
    moves = page.evaluate(TWO_MOVES, handle)
    latest = moves["params"]
    assert moves["first"]["inFlight"] == "controls", "the new seed was not sent to Python"
    assert latest == {**start, "seed": 7, "log_condition": 0.5}

    # The second move is drawn at once from the nearest answer, while Python still computes the first.
    page.wait_for_function("f => Number(f.dataset.catchCount || 0) >= 1", arg=handle, timeout=BOOT_MS)
    first_stand_in = page.evaluate("() => window.seen.find(s => s.catches >= 1)")
    assert first_stand_in["queued"] == latest, "the second move waited for the first move's answer"
    assert first_stand_in["lastKey"] == json.dumps(latest, separators=(",", ":"))
    assert first_stand_in["renders"] == renders  # Python has drawn nothing yet
    assert first_stand_in["catching"] == "nearest"
    assert first_stand_in["line"].startswith("Catching up: showing the nearest computed answer")
    # The nearest the page has: the build's answer with the slider the reader moved last where it is
    # now (the seed one setting apart): its outputs are the demo's at those settings.
    assert first_stand_in["shown"] == json.dumps({**start, "log_condition": 0.5}, separators=(",", ":"))
    assert_json_close(output_values(fig), REGISTRY[DEMO].run({**start, "log_condition": 0.5})["outputs"])
    line = fig.locator('[data-role="live"]')
    assert line.is_visible() and "Catching up" in line.text_content()

    # Python's answer for the latest setting ends it: drawn, and the line says live again.
    page.wait_for_function("f => !('catchingUp' in f.dataset) && Number(f.dataset.renderCount || 0) > %d" % renders,
                           arg=handle, timeout=BOOT_MS)
    state = page.evaluate("f => window.headspace.state(f)", handle)
    assert state["shown"]["key"] == json.dumps(latest, separators=(",", ":"))
    assert state["catching"] is None
    assert_json_close(output_values(fig), REGISTRY[DEMO].run(latest)["outputs"])
    assert line.text_content().startswith("Live:")
    # The first move's answer came while the second was caught up with: kept, never drawn over it.
    drawn = page.evaluate("() => window.seen.filter(s => s.renders > %d).map(s => s.shown)" % renders)
    assert drawn == [json.dumps(latest, separators=(",", ":"))]
