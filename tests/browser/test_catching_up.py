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


# The build's answer for the seed moved alone is the exact answer: over Python's drawing it must be
# written into the drawing on screen (one width, as Python's), and so must Python's answer after it.
LIVE_THEN_EXACT = """fig => {
  const seed = fig.querySelector('[name=seed]'), condition = fig.querySelector('[name=log_condition]');
  window.startCondition = condition.value;
  condition.value = '0.5'; condition.dispatchEvent(new Event('input', {bubbles: true}));
}"""
BACK_WITH_A_NEW_SEED = """fig => {
  const seed = fig.querySelector('[name=seed]'), condition = fig.querySelector('[name=log_condition]');
  window.liveDrawing = fig.querySelector('[data-role=plot] > svg');
  condition.value = window.startCondition; seed.value = '7';
  seed.dispatchEvent(new Event('input', {bubbles: true}));
  return window.headspace.params(fig);
}"""
SAME_DRAWING = """fig => {
  const drawings = fig.querySelectorAll('[data-role=plot] > svg');
  return {one: drawings.length === 1, same: drawings[0] === window.liveDrawing, live: drawings[0].classList.contains('live')};
}"""


def test_the_builds_exact_answer_standing_in_is_written_into_pythons_drawing(page, site_url):
    fig = _catching_up_page(page, site_url)
    handle = fig.element_handle()
    start = page.evaluate("f => window.headspace.params(f)", handle)
    renders = int(fig.get_attribute("data-render-count") or 0)
    page.evaluate(LIVE_THEN_EXACT, handle)
    page.wait_for_function(f"f => Number(f.dataset.renderCount || 0) > {renders}", arg=handle, timeout=BOOT_MS)
    page.wait_for_function("f => !window.headspace.busy()", arg=handle, timeout=BOOT_MS)
    renders = int(fig.get_attribute("data-render-count"))
    catches = int(fig.get_attribute("data-catch-count") or 0)
    params = page.evaluate(BACK_WITH_A_NEW_SEED, handle)
    assert params == {**start, "seed": 7}  # the start with one control moved: the build has this answer
    page.wait_for_function(f"f => Number(f.dataset.catchCount || 0) > {catches}", arg=handle, timeout=BOOT_MS)
    assert fig.get_attribute("data-catching-up") == "built"
    assert int(fig.get_attribute("data-render-count")) == renders  # Python's answer has not come yet
    assert page.evaluate(SAME_DRAWING, handle) == {"one": True, "same": True, "live": True}
    assert_json_close(output_values(fig), REGISTRY[DEMO].run(params)["outputs"])
    page.wait_for_function(f"f => !('catchingUp' in f.dataset) && Number(f.dataset.renderCount) > {renders}",
                           arg=handle, timeout=BOOT_MS)
    assert page.evaluate(SAME_DRAWING, handle) == {"one": True, "same": True, "live": True}
    assert_json_close(output_values(fig), REGISTRY[DEMO].run(params)["outputs"])


def test_the_builds_answer_of_the_very_setting_is_drawn_without_waiting_for_the_timer(page, site_url):
    """A live move the build answered (a seed Python has not computed, moved alone) is fetched with
    Python's call and drawn when it comes: the timer that looks for a stand-in is set to a minute
    here, so only that fetch can draw it while Python's reply is held."""
    page.add_init_script("window.HEADSPACE_CATCH_UP_MS = 60000")
    fig = _catching_up_page(page, site_url, delay_ms=3000)
    handle = fig.element_handle()
    start = page.evaluate("f => window.headspace.params(f)", handle)
    renders = int(fig.get_attribute("data-render-count") or 0)
    page.evaluate("""f => { const seed = f.querySelector('[name=seed]');
      seed.value = '7'; seed.dispatchEvent(new Event('input', {bubbles: true})); }""", handle)
    page.wait_for_function("f => Number(f.dataset.catchCount || 0) >= 1", arg=handle, timeout=BOOT_MS)
    assert fig.get_attribute("data-catching-up") == "built"
    assert int(fig.get_attribute("data-render-count")) == renders  # Python's reply is still held
    params = {**start, "seed": 7}
    assert page.evaluate("f => window.headspace.params(f)", handle) == params
    assert_json_close(output_values(fig), REGISTRY[DEMO].run(params)["outputs"])
    page.wait_for_function(f"f => !('catchingUp' in f.dataset) && Number(f.dataset.renderCount) > {renders}",
                           arg=handle, timeout=BOOT_MS)
    assert_json_close(output_values(fig), REGISTRY[DEMO].run(params)["outputs"])


def test_a_drop_downs_move_requests_the_builds_answer_with_the_call(page, site_url):
    """A click on a drop-down (another mode: Python computes its curves) requests the build's answer
    of that setting with Python's call, so its trip overlaps the frame's wait before it is read
    (reduce.js). The timers are set to a minute here: only the request made with the call can be
    seen while Python's reply is held, and nothing is drawn from it until the timer says so."""
    page.add_init_script("window.HEADSPACE_CATCH_UP_MS = 60000; window.HEADSPACE_EXACT_AFTER_MS = 60000")
    fig = _catching_up_page(page, site_url, delay_ms=3000)
    handle = fig.element_handle()
    start = page.evaluate("f => window.headspace.params(f)", handle)
    renders = int(fig.get_attribute("data-render-count") or 0)
    with page.expect_request(lambda r: "/mode/" in r.url and r.url.endswith(".json"), timeout=BOOT_MS) as asked:
        mode = page.evaluate("""f => { const mode = f.querySelector('[name=mode]');
          if (!mode.hasAttribute('data-answered')) return null;
          mode.selectedIndex = (mode.selectedIndex + 1) % mode.options.length;
          mode.dispatchEvent(new Event('input', {bubbles: true})); return window.headspace.params(f).mode; }""", handle)
    assert mode is not None and mode != start["mode"], "the build answers no other mode"
    assert asked.value.url.startswith(site_url)
    assert int(fig.get_attribute("data-render-count")) == renders  # Python's reply is still held
    assert not fig.get_attribute("data-catch-count")  # requested, not read: nothing stands in yet
    page.wait_for_function(f"f => Number(f.dataset.renderCount) > {renders}", arg=handle, timeout=BOOT_MS)
    assert_json_close(output_values(fig), REGISTRY[DEMO].run({**start, "mode": mode})["outputs"])


SPOKEN = """fig => {
  const region = fig.querySelector('[data-role=announce]');
  window.spoken = [];
  new MutationObserver(() => window.spoken.push(region.textContent)).observe(region, {childList: true, characterData: true, subtree: true});
  const box = region.getBoundingClientRect();
  return {live: region.getAttribute('aria-live'), text: region.textContent, width: box.width, height: box.height};
}"""


def test_catching_up_is_said_once_to_a_screen_reader_and_unsaid_when_it_ends(page, site_url):
    fig = _catching_up_page(page, site_url)
    handle = fig.element_handle()
    # the region is on the page, polite and empty, before there is anything to say; out of sight
    region = page.evaluate(SPOKEN, handle)
    assert region["live"] == "polite" and region["text"] == ""
    assert region["width"] <= 1 and region["height"] <= 1
    renders = int(fig.get_attribute("data-render-count") or 0)
    page.evaluate(TWO_MOVES, handle)  # two moves while Python catches up
    page.wait_for_function("f => 'catchingUp' in f.dataset", arg=handle, timeout=BOOT_MS)
    page.wait_for_function(f"f => !('catchingUp' in f.dataset) && Number(f.dataset.renderCount || 0) > {renders}",
                           arg=handle, timeout=BOOT_MS)
    spoken = page.evaluate("() => window.spoken")
    assert [s for s in spoken if s] == [
        "Catching up: the figure shows the nearest computed answer while Python computes this setting."]
    assert spoken[-1] == ""  # emptied when Python's drawing ended it: the next time is said again


TYPE = """([fig, text]) => {
  const box = fig.querySelector('[name=tokens]');
  box.value = text; box.dispatchEvent(new Event('input', {bubbles: true}));
  return JSON.stringify(window.headspace.params(fig));
}"""


def test_a_token_box_keeps_the_last_sequence_drawn_while_python_computes_the_next(page, site_url):
    """Typing: every kept answer is one setting (the tokens) from the new sequence, as the start is;
    the one on screen stands in, not an older one, so the figure does not jump back while typing."""
    page.add_init_script("window.HEADSPACE_REPLY_DELAY_MS = 1000")
    page.goto(f"{site_url}/embed/attention-explorer/")
    wait_ready(page)
    handle = page.locator("figure.demo").element_handle()
    for text in ("1 2 3 1 2 3", "4 5 6 4 5 6"):
        renders = page.evaluate("f => Number(f.dataset.renderCount || 0)", handle)
        key = page.evaluate(TYPE, [handle, text])
        page.wait_for_function(f"f => Number(f.dataset.renderCount || 0) > {renders} && !('catchingUp' in f.dataset)",
                               arg=handle, timeout=BOOT_MS)
        assert page.evaluate("f => window.headspace.state(f).shown.key", handle) == key
    catches = page.evaluate("f => window.headspace.state(f).catchCount", handle)
    page.evaluate(TYPE, [handle, "7 8 9 7 8 9"])
    page.wait_for_function("f => f.dataset.catchingUp === 'nearest'", arg=handle, timeout=BOOT_MS)
    state = page.evaluate("f => window.headspace.state(f)", handle)
    assert state["shown"]["key"] == key and state["catchCount"] == catches  # stayed: nothing drawn
    assert output_values(page.locator("figure.demo"))["loss"] == pytest.approx(
        REGISTRY["attention-explorer"].run(json.loads(key))["outputs"]["loss"], abs=1e-6)
