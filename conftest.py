"""Import the library (``headspace``), the site's Python (``headspace_site``) and the build tools
(``sitebuild``) from this checkout, whichever checkout the shared venv's .pth last pointed at (a
second clone, CI's fresh clone). The only place that touches sys.path."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "py" / "src"), str(ROOT / "site" / "py" / "src"), str(ROOT / "scripts")]


import faulthandler  # noqa: E402
import os  # noqa: E402

import pytest  # noqa: E402

# A test that hangs (a page that never answers, a promise never settled) ends its worker with every
# thread's stack after this long, and pytest-xdist reports that test as failed, instead of stalling
# the whole run until CI's limit. The slowest test takes a few minutes on a loaded 2-core machine.
HANG_S = float(os.environ.get("HEADSPACE_HANG_S", 1200))


@pytest.fixture(autouse=True)
def _hang_guard():
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
