"""Import ``headspace`` and the build tools (``sitebuild``) from this checkout, whichever checkout
the shared venv's .pth last pointed at (a second clone, CI's fresh clone). The only place that
touches sys.path."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "py" / "src"), str(ROOT / "scripts")]
