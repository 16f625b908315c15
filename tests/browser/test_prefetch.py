"""Before Python is live, a control a reader reaches for has the build's answers nearest its value
fetched at low priority (figure/answers.js, prefetchNearest), so a move of a step or two waits for no
network: on a phone's slow link a build answer's fetch is a round trip and about 30 kB."""

import json
import time
from urllib.parse import urlparse

import pytest

from browser_support import set_control

pytestmark = pytest.mark.browser


def answers_asked(page):
    asked = []
    page.on("request", lambda r: asked.append(urlparse(r.url).path) if "/answers/" in r.url else None)
    return asked


def wait_for(page, predicate, seconds=20.0):
    """Poll ``predicate`` while the page runs (Playwright hands events over only inside its own calls)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not predicate():
        page.wait_for_timeout(100)
    return predicate()


@pytest.mark.routes_downloads
def test_a_control_reached_for_before_python_has_its_nearest_answers_fetched(page, site_url):
    page.context.route("**/pyodide.asm.wasm*", lambda route: None)  # Python never arrives
    asked = answers_asked(page)
    page.goto(f"{site_url}/posts/polariser/")
    fig = page.locator("figure.demo")
    slider = fig.locator('input[name="theta"]')
    folder = fig.get_attribute("data-answers")
    grid = json.loads(slider.get_attribute("data-answered"))
    at = grid.index(json.loads(slider.input_value()))
    nearest = sorted((i for i in range(len(grid)) if i != at), key=lambda i: (abs(i - at), i))[:4]
    want = {f"{folder}theta/{i}.json" for i in nearest}
    assert asked == [], f"answers fetched before any reader reached for a control: {asked}"

    slider.hover()
    assert wait_for(page, lambda: want <= set(asked)), f"asked {asked}, wanted {sorted(want)}"
    assert set(asked) == want, asked  # those four, nothing else
    # a move to one of them is drawn from the build with no request of its own (the move is a reach too, so
    # the answers nearest its new value may follow: those are the only other requests)
    step = nearest[0]
    set_control(fig, "theta", grid[step])
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.life === 'answered'", timeout=10_000)
    assert json.loads(fig.locator('input[name="theta"]').input_value()) == grid[step]
    assert asked.count(f"{folder}theta/{step}.json") == 1, asked
    around = {f"{folder}theta/{i}.json" for i in range(len(grid)) if 0 < abs(i - step) <= 2}
    assert set(asked) <= want | around, asked
