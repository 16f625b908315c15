"""Fixtures shared by the site and browser tests.

The site must already be built into site/public (scripts/test builds it
first). Browser tests drive Debian's Chromium through Playwright; Playwright
never downloads a browser of its own here.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import pytest
from hypothesis import settings

# Property tests are seeded: every run (and CI) draws the same examples.
settings.register_profile("headspace", derandomize=True, print_blob=True)
settings.load_profile("headspace")

from sitebuild import devserver, throttle
from sitebuild.browser import CHROMIUM, CHROMIUM_ARGS, PHONE_CPU_SLOWDOWN, phone_page as _phone_page

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "site" / "public"


@pytest.fixture(scope="session")
def demos_data() -> dict:
    """The registry declarations and prerendered renders the site was built from."""
    return json.loads((ROOT / "site" / "data" / "demos.json").read_text())


@pytest.fixture(scope="session")
def site_url():
    if not (PUBLIC / "index.html").exists():
        pytest.fail("site/public is not built; run scripts/build (scripts/test does)")
    server = devserver.serve(0)
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def throttled_server():
    """Factory: a server of site/public through an emulated mobile link (sitebuild.throttle): one
    downlink shared by the page and its worker (Chromium's own network emulation does not reach a
    worker's requests), a round trip before each response, text gzipped as the deploy does.

    ``throttled_server("slow4g")`` or ``"fast4g"`` (Lighthouse's and DevTools' profiles), or
    ``throttled_server(rate=50_000, rtt=0.3)`` (bytes a second, seconds: slower than slow 4G is
    fine). Returns the server: ``.url``, and ``.traffic`` for what it sent
    (``.total()``, ``.by_path()``, ``.before(time.time())``). Each is shut down after the test.
    An unknown profile name raises ValueError naming the choices."""
    servers = []

    def make(link: str = "slow4g", *, rate: float | None = None, rtt: float = 0.0, compress: bool = True):
        spec = throttle.Profile("test", rate, rtt) if rate is not None else throttle.profile(link)
        servers.append(throttle.serve(spec, compress=compress))
        return servers[-1]
    yield make
    for server in servers:
        server.shutdown()


@pytest.fixture
def throttled_site_url(throttled_server):
    """Factory: the base URL of a throttled server (arguments as ``throttled_server``).

    A browser test of the page before Python is ready, on a phone over a slow link::

        def test_first_move_answered_before_python(throttled_site_url, phone_page):
            base = throttled_site_url(rate=100_000, rtt=0.3)  # slower than slow 4G
            page = phone_page()  # fresh cache, 390x844, touch, main thread 4x slower
            page.goto(f"{base}/posts/polariser/")
            set_control(page.locator("figure.demo"), "theta", 73)  # tests/browser/browser_support.py
            page.wait_for_function("() => document.querySelector('figure.demo').dataset.renderCount === '1'")
    """
    return lambda *args, **kwargs: throttled_server(*args, **kwargs).url


@pytest.fixture
def phone_page(browser):
    """Factory: ``phone_page(cpu_slowdown=4, **context_options)``, a new page in a fresh context
    emulating a phone (sitebuild.browser.PHONE: 390x844 at 3x, touch; service workers blocked
    unless ``service_workers="allow"``), its main thread slowed by Chromium (the worker is not:
    Chromium cannot slow a worker). ``page.cdp`` is its CDP session. Closed after the test."""
    pages = []

    def make(cpu_slowdown: float = PHONE_CPU_SLOWDOWN, **context_options):
        page, cdp = _phone_page(browser, cpu_slowdown, **context_options)
        page.cdp = cdp
        pages.append(page)
        return page
    yield make
    for page in pages:
        page.context.close()


@pytest.fixture(scope="session")
def playwright():
    """One Playwright for the session: its sync API cannot run inside another one's event loop."""
    from playwright.sync_api import sync_playwright
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing; scripts/setup --browser installs Debian's chromium")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright):
    b = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    yield b
    b.close()


class PageWatch:
    """Console errors, uncaught exceptions and requests that leave the origin."""

    def __init__(self, page, origin: str):
        self.errors: list[str] = []
        self.off_origin: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def on_request(req):
            u = urlparse(req.url)
            if u.scheme in ("data", "blob", "about"):
                return
            if f"{u.scheme}://{u.netloc}" != origin:
                self.off_origin.append(req.url)
        page.on("request", on_request)


@pytest.fixture
def page(browser, site_url, request):
    """A fresh page (reduced motion, so nothing animates by itself) that fails the
    test on any console error or off-origin request. A test marked ``routes_downloads`` runs
    without the site's service worker: Playwright cannot route the requests a service worker makes."""
    blocked = request.node.get_closest_marker("routes_downloads") is not None
    context = browser.new_context(reduced_motion="reduce", viewport={"width": 1100, "height": 900},
                                  service_workers="block" if blocked else "allow")
    pg = context.new_page()
    pg.watch = PageWatch(pg, site_url)
    yield pg
    watch = pg.watch
    context.close()
    assert watch.off_origin == [], f"requests left the origin: {watch.off_origin}"
    if not getattr(pg, "expect_errors", False):
        assert watch.errors == [], f"console errors: {watch.errors}"


@pytest.fixture(scope="session")
def live_walk(browser, site_url):
    """Factory: ``live_walk(width, scheme)``, the findings of tests/browser/live_walk.py's walk at those
    options, walked once per pytest worker (the tests reading them only assert on them)."""
    import live_walk as walks  # tests/browser/, on the path once its tests are collected
    if not walks.AXE.exists():
        pytest.fail(f"{walks.AXE} is missing; scripts/setup installs the npm packages (npm ci)")
    done = {}

    def get(width: int, scheme: str):
        if (width, scheme) not in done:
            done[width, scheme] = walks.walk(browser, site_url, width, scheme)
        return done[width, scheme]
    return get


def pytest_collection_modifyitems(items):
    """The tests that read one walk (those taking ``live_walk`` and a ``view``) side by side, where the
    first of them is: pytest-xdist hands out runs of neighbouring tests, so one worker most often gets
    them all and walks each view once."""
    def view(item):
        spec = getattr(item, "callspec", None)
        return spec.params.get("view") if spec and "live_walk" in getattr(item, "fixturenames", ()) else None
    groups = {}
    for item in items:
        if view(item) is not None:
            groups.setdefault(tuple(view(item)), []).append(item)
    if not groups:
        return
    firsts = {id(group[0]): group for group in groups.values()}
    reading = {id(item) for group in groups.values() for item in group}
    ordered = []
    for item in items:
        if id(item) in firsts:
            ordered += firsts[id(item)]
        elif id(item) not in reading:
            ordered.append(item)
    items[:] = ordered
