"""The primer's attention explorer in a real browser: a sequence typed by keyboard is what
Python computes on; a mistyped token is named inline while the last good figure stays;
Random repeat writes a repeated span and the figure follows."""

from __future__ import annotations

import json

import pytest

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import output_values, wait_ready, worker_caught_up

pytestmark = pytest.mark.browser
URL = "/posts/transformer-circuits-primer/"
FIG = 'figure.demo[data-demo="attention-explorer"]'


def settled(page, fig, text):
    """Wait until the figure is ready and shows the outputs of ``text`` (keystrokes coalesce)."""
    want = REGISTRY["attention-explorer"].run({**fig.evaluate("f => window.headspace.params(f)"), "tokens": text})
    n = len(want["outputs"]["loss"])
    page.wait_for_function(
        f"""() => {{ const f = document.querySelector('{FIG}');
                    const loss = JSON.parse(f.querySelector('output[data-output=loss]').dataset.value);
                    return f.dataset.status === 'ready' && loss.length === {n}
                        && window.headspace.params(f).tokens === {json.dumps(text)}; }}""", timeout=30_000)
    worker_caught_up(page)  # a request sent for an earlier keystroke may still land: let it
    assert_json_close(output_values(fig), want["outputs"])


def test_typing_a_sequence_by_keyboard(page, site_url):
    page.goto(site_url + URL)
    wait_ready(page)
    fig = page.locator(FIG)
    box = fig.locator('input[name="tokens"]')
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("7 8 9 10 11 7 8 9 10 11")
    settled(page, fig, "7 8 9 10 11 7 8 9 10 11")
    assert fig.locator('[data-role="error"]').is_hidden()
    # keyboard only: Tab reaches the Random repeat button and Enter presses it
    before = box.input_value()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.role") == "random-tokens"
    page.keyboard.press("Enter")
    text = box.input_value()
    assert text != before
    ids = text.split()
    span = (len(ids) - 4) // 2
    assert ids[4:4 + span] == ids[4 + span:] and all(0 <= int(t) <= 127 for t in ids)
    settled(page, fig, text)


def test_a_bad_token_is_named_and_the_last_figure_stays(page, site_url):
    page.goto(site_url + URL)
    wait_ready(page)
    fig = page.locator(FIG)
    fig.hover()  # a reader's pointer: plotly draws the figure, so "the last figure" is plotly's
    page.wait_for_selector(f"{FIG} .demo-plot .main-svg", timeout=30_000)
    good = output_values(fig)
    count = int(fig.get_attribute("data-render-count"))
    box = fig.locator('input[name="tokens"]')
    for bad, named in [("1 2 3 x9", "token 4 must be a whole number"), ("1 2 300", "token 3 must be from 0 to 127"),
                       ("5", "from 2 to 64 tokens")]:
        box.fill(bad)
        page.wait_for_function(f"() => document.querySelector('{FIG}').dataset.status === 'error'", timeout=30_000)
        message = fig.locator('[data-role="error"]')
        assert message.is_visible() and named in message.text_content(), message.text_content()
        assert "Python raised" not in message.text_content()      # a reader's typo, not a crash
        assert output_values(fig) == good and int(fig.get_attribute("data-render-count")) == count
        assert fig.locator(".demo-plot .main-svg").count() >= 1
    box.fill("4 5 6 4 5 6")
    settled(page, fig, "4 5 6 4 5 6")
    assert fig.locator('[data-role="error"]').is_hidden()
