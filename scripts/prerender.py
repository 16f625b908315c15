"""Prerender every demo the site shows, with native Python, into site/data/demos.json.

Hugo reads that file: the shortcode builds each demo's controls from the
registry's parameter declarations and shows the figure and outputs computed
here, so a page is complete before any Python runs in the browser.

Each render also carries a static SVG of its figure (scripts/static_svg.py),
which the page paints before plotly.js has even loaded.

It also writes site/data/values.json: every number the articles state, from
scripts/values.py, which the ``value`` shortcode prints.

It renders every registry demo at its defaults (the gallery) and every
``{{< demo ... >}}`` found under site/content with its overrides. The key of
a render is ``name + JSON of the overrides`` (sorted keys, compact), the same
string the shortcode builds with Hugo's ``jsonify``. Bad overrides fail here
with the file and line.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from headspace.demos import REGISTRY
from static_svg import PHONE_WIDTH, render as render_svg
import values

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "site" / "content"
OUT = ROOT / "site" / "data" / "demos.json"
VALUES = ROOT / "site" / "data" / "values.json"

SHORTCODE = re.compile(r"\{\{[<%]\s*demo\s+(.*?)\s*/?[>%]\}\}", re.S)
ARG = re.compile(r'(?:(\w+)\s*=\s*)?("(?:[^"\\]|\\.)*"|`[^`]*`|[^\s"`]+)')


def parse_value(token: str):
    """Typed like Hugo's shortcode parser: quoted -> str, true/false -> bool, numbers -> int/float."""
    if token[0] in "\"`":
        return json.loads(token) if token[0] == '"' else token[1:-1]
    if token in ("true", "false"):
        return token == "true"
    try:
        return int(token)
    except ValueError:
        pass
    try:
        return float(token)
    except ValueError:
        raise ValueError(f"cannot read shortcode value {token!r}; quote strings") from None


def render_key(name: str, overrides: dict) -> str:
    """The lookup key shared with the shortcode (Hugo prints whole floats as ints)."""
    norm = {k: (int(v) if isinstance(v, float) and v.is_integer() else v) for k, v in overrides.items()}
    return name + json.dumps(dict(sorted(norm.items())), separators=(",", ":"), ensure_ascii=False)


def shortcodes(text: str):
    """Yield (line, name, overrides) for each demo shortcode in ``text``."""
    for m in SHORTCODE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        args = [(k, parse_value(v)) for k, v in ARG.findall(m.group(1))]
        if args and not args[0][0]:
            name, rest = args[0][1], args[1:]
        else:
            named = dict(args)
            name, rest = named.pop("name", None), list(named.items())
        yield line, name, {k: v for k, v in rest}


def main() -> int:
    renders: dict[str, dict] = {}

    def render(name, overrides, where):
        key = render_key(name, overrides)
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
        renders[key] = {"params": params, **out, "svg": render_svg(out["figure"], uid=f"c{len(renders)}")
                         + render_svg(out["figure"], PHONE_WIDTH, uid=f"n{len(renders)}", css_class="narrow")}

    for name in REGISTRY:
        render(name, {}, "registry")
    for path in sorted(CONTENT.rglob("*.md")):
        for line, name, overrides in shortcodes(path.read_text(encoding="utf-8")):
            render(name, overrides, f"{path.relative_to(ROOT)}:{line}")

    data = {"registry": {n: d.to_json() for n, d in REGISTRY.items()}, "renders": renders}
    write_json(OUT, data)
    print(f"[prerender] {len(renders)} figures from {len(REGISTRY)} demos -> {OUT.relative_to(ROOT)}", file=sys.stderr)
    numbers = values.compute()
    write_json(VALUES, numbers)
    print(f"[prerender] {sum(map(len, numbers.values()))} values for {len(numbers)} articles "
          f"-> {VALUES.relative_to(ROOT)}", file=sys.stderr)
    return 0


def write_json(path: Path, data) -> None:
    """Write compact JSON, leaving the file untouched (and Hugo's watcher quiet) when nothing changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
