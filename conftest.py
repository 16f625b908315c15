"""Import ``headspace`` from this checkout, whichever checkout the shared venv's
editable install last pointed at (a second clone, CI's fresh clone)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "py" / "src"))
