"""Failure is visible, never a hang: the prerendered figure stays, data-status
becomes "error" and the message says what failed."""

import pytest

from browser_support import BOOT_MS, set_control

pytestmark = pytest.mark.browser


# Playwright cannot route a SharedWorker's requests, so the tests that corrupt a download
# run the page with its dedicated-worker fallback, which loads the same files the same way;
# nor a service worker's, so those pages run without the site's (routes_downloads).
DEDICATED = "window.HEADSPACE_WORKER = 'dedicated'"


def wait_error(page):
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.status === 'error'", timeout=BOOT_MS)
    fig = page.locator("figure.demo")
    # The build's figure stays: its static SVG, or plotly's drawing of it if a reader reached for it.
    assert fig.locator(".demo-plot svg.static-figure:visible, .demo-plot .main-svg").count() >= 1, "the prerendered figure must stay"
    return fig.locator('[data-role="error"]')


@pytest.mark.routes_downloads
def test_corrupt_wasm_is_reported(page, site_url):
    page.expect_errors = True  # the broken wasm logs to the console by design
    page.add_init_script(DEDICATED)
    page.context.route("**/pyodide.asm.wasm*", lambda route: route.fulfill(
        status=200, body=b"not wasm at all", headers={"Content-Type": "application/wasm"}))
    page.add_init_script("window.HEADSPACE_BOOT_LIMIT_MS = 8000")  # Pyodide may hang on bad wasm
    page.goto(f"{site_url}/posts/polariser/")
    message = wait_error(page)
    assert message.is_visible()
    assert "Python could not start" in message.text_content() or "did not start" in message.text_content()


@pytest.mark.routes_downloads
def test_tampered_wheel_fails_its_integrity_check(page, site_url):
    page.expect_errors = True
    page.add_init_script(DEDICATED)
    page.context.route("**/headspace-*.whl*", lambda route: route.fulfill(status=200, body=b"PK\x03\x04 tampered"))
    page.goto(f"{site_url}/posts/polariser/")
    message = wait_error(page).text_content()
    assert "Python could not start: the headspace package failed to load" in message, message
    assert "sha256" in message, message


@pytest.mark.routes_downloads
def test_tampered_standard_library_fails_its_check(page, site_url):
    """The standard library is not checked by Pyodide's loader; the worker checks it against the
    sha256 in the site lockfile."""
    page.expect_errors = True
    page.add_init_script(DEDICATED)
    page.context.route("**/python_stdlib.zip*", lambda route: route.fulfill(status=200, body=b"PK\x03\x04 tampered"))
    page.goto(f"{site_url}/posts/polariser/")
    message = wait_error(page).text_content()
    assert "Python could not start" in message, message
    assert "standard library" in message and "sha256" in message, message


def damaged(route):
    """The file as the server sends it, with one byte in its middle flipped."""
    body = bytearray(route.fetch().body())
    body[len(body) // 2] ^= 0xFF
    route.fulfill(status=200, body=bytes(body), headers={"Content-Type": "application/x-xz"})


@pytest.mark.routes_downloads
def test_a_damaged_xz_wheel_fails_its_check(page, site_url):
    """The worker fetches numpy's wheel xz-compressed (scripts/sitebuild/xz.py): a damaged copy is
    reported as a failed sha256 check, as an uncompressed one was."""
    page.expect_errors = True
    page.add_init_script(DEDICATED)
    page.context.route("**/numpy-*.whl.xz", damaged)
    page.goto(f"{site_url}/posts/polariser/")
    message = wait_error(page).text_content()
    assert "Python could not start: the numpy package failed to load" in message, message
    assert "sha256" in message, message


def test_python_error_keeps_the_last_figure(page, site_url):
    page.goto(f"{site_url}/posts/polariser/")
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.status === 'ready'", timeout=BOOT_MS)
    fig = page.locator("figure.demo")
    # A value no slider can produce: the registry rejects it in Python.
    fig.locator('input[name="theta"]').evaluate(
        "el => { el.type = 'number'; el.removeAttribute('max'); el.value = '400'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    message = wait_error(page)
    # named by its label, as a reader sees it (the code name "theta" is for links and Python)
    assert "Polariser angle" in message.text_content() and "between 0 and 180" in message.text_content()
    set_control(fig, "theta", 10)  # the next good value recovers
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.status === 'ready'")
    assert message.is_hidden()


def test_a_shared_worker_that_never_answers_is_reported(page, site_url):
    """The same limit guards the SharedWorker: a boot that does not finish in time is an error.
    (A millisecond: since numpy is installed and imported while the small wheels still arrive, what
    is left after the last byte can take less than the 0.3 s this test once allowed.)"""
    page.expect_errors = True
    page.add_init_script("window.HEADSPACE_BOOT_LIMIT_MS = 1")
    page.goto(f"{site_url}/posts/polariser/")
    message = wait_error(page)
    assert page.evaluate("() => window.headspace.marks.workerKind") == "shared"
    assert "Python did not start within 0.001 s" in message.text_content()


def test_missing_plotly_is_reported(page, site_url):
    """plotly loads only when a reader reaches for a figure; if it cannot load, the build's
    figure stays and the message says what failed."""
    page.expect_errors = True  # the failed script load logs to the console
    page.context.route("**/vendor/*/plotly.min.js", lambda route: route.fulfill(status=404, body=b"gone"))
    page.goto(f"{site_url}/posts/polariser/")
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.status === 'ready'", timeout=BOOT_MS)
    page.locator("figure.demo").hover()
    message = wait_error(page).text_content()
    assert "(plotly.js) could not be loaded" in message, message


def test_missing_plotly_is_said_by_the_figure_reached(page, site_url):
    """Without plotly every figure still redraws from its controls: only a figure whose plot a
    pointer reached is missing something (its values under the pointer), and only it says so."""
    page.expect_errors = True  # the failed script load logs to the console
    page.context.route("**/vendor/*/plotly.min.js", lambda route: route.fulfill(status=404, body=b"gone"))
    page.goto(f"{site_url}/gallery/")
    page.evaluate("() => window.headspace.ready()")
    page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every(f => f.dataset.status === 'ready')",
                           timeout=BOOT_MS)
    figures = page.locator("figure.demo")
    figures.nth(1).locator('[data-role="plot"]').hover()
    page.wait_for_function("() => document.querySelectorAll('figure.demo')[1].dataset.status === 'error'", timeout=BOOT_MS)
    assert "(plotly.js) could not be loaded" in figures.nth(1).locator('[data-role="error"]').text_content()
    statuses = page.evaluate("() => [...document.querySelectorAll('figure.demo')].map(f => f.dataset.status)")
    assert statuses[0] == "ready" and statuses[2:] == ["ready"] * (len(statuses) - 2), statuses
