"""headspace_site.runtime.load(modules): a page's first render imports only its own demos, and any other
call still finds every demo. Each case runs in a fresh interpreter (the import state is the point)."""

from __future__ import annotations

import json
import subprocess
import sys

from headspace_site.demos import REGISTRY


def fresh(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_a_partial_load_imports_only_the_listed_demos_then_the_rest_on_demand():
    out = fresh("""
import json, sys
from headspace_site import runtime
first = sorted(runtime.load(["headspace_site.demos.polarizer"]))
other_imported = "headspace_site.demos.metric_lab" in sys.modules
polarizer = json.loads(runtime.call("polarizer", '{"theta": 90}'))["outputs"]["transmission"]
lab = sorted(json.loads(runtime.call("metric-lab", "{}"))["outputs"])
from headspace_site.demos import REGISTRY
print(json.dumps({"first": first, "other": other_imported, "polarizer": polarizer, "lab": lab,
                  "all": sorted(runtime.load()), "package": sorted(REGISTRY)}))
""")
    assert out["first"] == ["polarizer"] and out["other"] is False
    assert out["polarizer"] == 0.5
    assert out["lab"] == sorted(REGISTRY["metric-lab"].run({})["outputs"])
    assert out["all"] == out["package"] == sorted(REGISTRY)


def test_a_full_load_after_a_partial_one_registers_each_demo_once():
    out = fresh("""
import json
from headspace_site import runtime
runtime.load(["headspace_site.demos.projection", "headspace_site.demos.polarizer"])
partial = sorted(runtime.load(["headspace_site.demos.projection"]))
print(json.dumps({"partial": partial, "all": sorted(runtime.load())}))
""")
    assert out["partial"] == ["polarizer", "projection-1d-2d", "projection-2d-1d"]
    assert out["all"] == sorted(REGISTRY)


def test_a_live_drawing_is_the_builds_drawing_with_its_heatmaps_deflated_lightly():
    """runtime.call's drawing deflates its heatmaps' PNGs at LIVE_PNG_LEVEL, the build's at 9: the
    same markup and, once inflated, the same pixels; the bytes differ (else the level did nothing)."""
    import base64
    import re
    import zlib

    from headspace_site import runtime
    from headspace_site.figure.fit import fit
    from headspace_site.figure.svg import SVG_UID, render

    params = {"tokens": " ".join(str((7 * i) % 128) for i in range(48))}
    live = json.loads(runtime.call("attention-explorer", json.dumps(params), 600, figure=False))["svg"]
    fig = fit(REGISTRY["attention-explorer"].run(params)["figure"], 600)
    built = render(fig, 600, uid=f"{SVG_UID}600", css_class="live")
    images = re.compile(r'href="data:image/png;base64,([^"]+)"')

    def inflated(svg):
        # the IDAT chunk's body: after the signature (8), IHDR (8 + 13 + 4) and its own head (8); before
        # its CRC (4) and IEND (12)
        return [zlib.decompress(base64.b64decode(m)[8 + 8 + 13 + 4 + 8:-12 - 4]) for m in images.findall(svg)]
    assert len(images.findall(live)) == 8  # a heatmap a head
    assert images.sub("", live) == images.sub("", built)
    assert inflated(live) == inflated(built)
    assert live != built
