"""The first Hugo pass (the "collect" environment) tells prerender which figures the content
places, as Hugo itself reads the shortcodes; it must work on a fresh clone, before any data."""

import json
import shutil
from pathlib import Path

from headspace_site.demos import REGISTRY
from sitebuild import prerender

ROOT = Path(__file__).resolve().parents[2]


def test_collect_pass_finds_every_shortcode_without_prerendered_data(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(ROOT / "site", site, ignore=shutil.ignore_patterns("public", "resources", "demos.json", "answers"))
    (tmp_path / "py").symlink_to(ROOT / "py")  # the models mount: ../py/src/headspace/models
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")  # the worker's bundled xz decoder
    assert not (site / "data" / "demos.json").exists()
    read = prerender.collect(site)
    uses = read["demo-uses.json"]

    built = json.loads((ROOT / "site" / "data" / "demos.json").read_text())["renders"]
    assert {u["key"] for u in uses} <= set(built), "the build prerendered every figure the content places"
    assert len(uses) == sum(text.count("{{< demo ") for text in
                            (p.read_text() for p in (ROOT / "site" / "content").rglob("*.md")))
    assert len(read["value-uses.json"]) == sum(text.count("{{< value ") for text in
                                               (p.read_text() for p in (ROOT / "site" / "content").rglob("*.md")))
    for use in uses:  # Hugo's own key: the demo's name and its parameters as jsonify writes them
        assert use["key"] == use["name"] + json.dumps(use["params"] or {}, separators=(",", ":"), sort_keys=True)
        assert use["position"].strip('"').startswith(str(site / "content")) and ".md:" in use["position"]


def test_every_demo_at_its_defaults_is_the_builds_exactly():
    """Every demo at its defaults, computed in this process, gives what the build computed in its
    own interpreter, with another hash seed (set and dict-of-set orders, ids, anything process-wide):
    the build already ran each one fresh, so this check costs one run of each, not two."""
    renders = json.loads((ROOT / "site" / "data" / "demos.json").read_text())["renders"]
    for name in sorted(REGISTRY):
        ours = json.loads(json.dumps(REGISTRY[name].run({})))
        theirs = renders[name + "{}"]
        assert (theirs["figure"], theirs["outputs"]) == (ours["figure"], ours["outputs"]), \
            f"{name}: the build's interpreter computed another result"
