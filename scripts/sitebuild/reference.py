"""Generate the site's API reference from the package's docstrings, with pdoc, at build time.

One Hugo content page per public module under ``site/content/reference/`` (generated, not
committed): pdoc renders each module's docstrings, signatures and members with our own frame
template (``scripts/sitebuild/reference_templates/``, which keeps only the content, so the page wears the
site's layout and styles); links between modules are rewritten to the site's reference URLs.

    python -m sitebuild.reference          # run by scripts/setup, after vendor.py
"""

from __future__ import annotations

import importlib
import posixpath
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "site" / "content" / "reference"
TEMPLATES = Path(__file__).resolve().parent / "reference_templates"

#: The public modules, in the order a researcher meets them.
MODULES = ("headspace", "headspace.composition", "headspace.weights", "headspace.model", "headspace.store",
           "headspace.heads", "headspace.causal", "headspace.paths", "headspace.circuits",
           "headspace.symmetry", "headspace.axioms", "headspace.cli", "headspace_site.optics")


def _modules() -> tuple[str, ...]:
    """MODULES plus the all-pairs engine module, whatever it is named, if composition re-exports it."""
    import headspace.composition as composition
    engine = getattr(composition.all_composition_scores, "__module__", "headspace.composition")
    names = list(MODULES)
    if engine not in names:
        names.insert(names.index("headspace.composition") + 1, engine)
    return tuple(names)


def _site_links(html: str, name: str) -> str:
    """pdoc's relative links (``model.html#Model`` from ``headspace/store.html``) -> the site's
    ``/reference/headspace.model/#Model``; anchors within the page and external links stay."""
    here = posixpath.dirname(name.replace(".", "/") + ".html")

    def fix(match: re.Match) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        module = posixpath.normpath(posixpath.join(here, target))[:-len(".html")].replace("/", ".")
        return f'href="/reference/{module}/{anchor}"'

    html = re.sub(r'href="((?!https?:|#)[^"#]+\.html)(#[^"]*)?"', fix, html)
    return html.replace('<main class="pdoc">', '<div class="pdoc">').replace("</main>", "</div>")


def render() -> list[Path]:
    import pdoc
    import pdoc.doc
    import pdoc.render

    pdoc.render.configure(docformat="restructuredtext", search=False, show_source=False, math=False,
                          mermaid=False, template_directory=TEMPLATES)
    names = _modules()
    for name in names:  # pdoc reads a module's namespace: the names a package imports on first use
        module = importlib.import_module(name)  # (PEP 562, headspace/__init__) are imported first
        for member in getattr(module, "__all__", ()):
            getattr(module, member)
    modules = {n: pdoc.doc.Module.from_name(n) for n in names}
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    (OUT / "_index.md").write_text(
        '+++\ntitle = "API reference"\ndescription = "Every public function of the headspace package, '
        'generated from its docstrings."\n+++\n\n'
        "Generated from the package's docstrings at build time (pdoc). Every `>>>` example on these "
        "pages runs as a test. To install the package and score your own model, see "
        "[Use it on your model](/use-it/).\n")
    written = []
    for weight, (name, module) in enumerate(modules.items(), start=1):
        html = pdoc.render.html_module(module, modules)
        html = _site_links(html, name)
        summary = (module.docstring.strip().split("\n\n")[0].replace("\n", " ") or name).replace('"', "'")
        path = OUT / f"{name}.html"
        path.write_text(f'+++\ntitle = "{name}"\nweight = {weight}\ndescription = "{summary}"\n'
                        f'layout = "reference"\n+++\n{html}')
        written.append(path)
    return written


if __name__ == "__main__":
    pages = render()
    print(f"[reference] {len(pages)} module pages in {OUT.relative_to(ROOT)}", file=sys.stderr)
