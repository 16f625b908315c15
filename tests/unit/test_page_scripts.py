"""The page's own modules under Node's test runner (tests/js: the worker protocol and the figure's
transitions), run here so that scripts/test and CI run them. Node only: no npm package."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_page_scripts_pass_their_node_tests():
    node = shutil.which("node")
    assert node, "node is required (Node 20)"
    proc = subprocess.run([node, "--import", "./tests/js/register.mjs", "--test", "tests/js/"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout and "# pass 0" not in proc.stdout, proc.stdout[-2000:]
