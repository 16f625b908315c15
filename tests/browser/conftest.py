"""Browser-tier fixtures that share work between tests (the rest are in tests/conftest.py)."""

from __future__ import annotations

import pytest

import live_walk as walks


@pytest.fixture(scope="session")
def live_walk(browser, site_url):
    """Factory: ``live_walk(width, scheme)``, the findings of live_walk.walk at those options, walked
    once per pytest worker (each test reading them only asserts on them)."""
    if not walks.AXE.exists():
        pytest.fail(f"{walks.AXE} is missing; scripts/setup installs the npm packages (npm ci)")
    done = {}

    def get(width: int, scheme: str) -> walks.Findings:
        if (width, scheme) not in done:
            done[width, scheme] = walks.walk(browser, site_url, width, scheme)
        return done[width, scheme]
    return get


#: Tests that read one walk: each of the second kind runs right after the first with the same id, so
#: pytest-xdist (which hands out runs of neighbouring tests) most often gives both to one worker.
SHARED_WALK = ("test_accessibility.py::test_live_pages[", "test_readable.py::test_every_figure_is_readable[")


def pytest_collection_modifyitems(items):
    first = {item.nodeid.split("::", 1)[1].split("[", 1)[1]: item for item in items if SHARED_WALK[0] in item.nodeid}
    second = [item for item in items if SHARED_WALK[1] in item.nodeid
              and item.nodeid.split("[", 1)[1] in first]
    for item in second:
        items.remove(item)
        items.insert(items.index(first[item.nodeid.split("[", 1)[1]]) + 1, item)
