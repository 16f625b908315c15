"""Every page the build writes is valid HTML by the Nu HTML checker (vnu-jar, pinned in
package.json): no duplicate ids (one figure placed twice, a clip path per trace), no attribute
values the standard does not allow."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "site" / "public"
VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


def test_every_page_is_valid_html():
    if not VNU.exists():
        pytest.fail(f"{VNU} is missing; scripts/setup installs the npm packages (npm ci)")
    java = shutil.which("java")
    if not java:
        pytest.fail("java is missing; scripts/setup --browser installs Debian's default-jre-headless")
    pages = sorted(str(p) for p in PUBLIC.rglob("*.html"))
    assert len(pages) > 40, "the site is not built; run scripts/build"
    proc = subprocess.run([java, "-jar", str(VNU), "--errors-only", "--format", "json", *pages],
                          capture_output=True, text=True, timeout=600)
    errors = [f"{m['url'].split('/public/')[-1]}:{m.get('lastLine', '?')}: {m['message']}"
              for m in json.loads(proc.stderr or proc.stdout)["messages"] if m["type"] == "error"]
    assert errors == [], f"{len(errors)} HTML errors:\n" + "\n".join(errors[:40])
