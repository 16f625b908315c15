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

from sitebuild import devserver
from sitebuild.browser import CHROMIUM, CHROMIUM_ARGS

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


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing; scripts/setup --browser installs Debian's chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
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
