"""The headers the deploy sends (netlify.toml plus the _headers file Hugo writes),
as the dev server serves them: embed pages, and only they, may be framed by
other sites, and no served path matches two Content-Security-Policy rules."""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import re
import urllib.request
from pathlib import Path

import pytest

from sitebuild import devserver

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "site" / "public"
FRAMEABLE = "frame-ancestors 'self' https: http://localhost:* http://127.0.0.1:*"


def served_paths() -> list[str]:
    """Every URL path the built site serves: files, and directories by their index.html."""
    paths = []
    for f in sorted(PUBLIC.rglob("*")):
        if f.is_file() and f.name != "_headers":
            rel = "/" + f.relative_to(PUBLIC).as_posix()
            paths.append(rel)
            if f.name == "index.html":
                paths.append(rel[: -len("index.html")])
    return paths


def matching(header: str, path: str, rules) -> list[str]:
    """The values of ``header`` that the rules matching ``path`` set (one per rule)."""
    return [values[header] for pattern, values in rules if header in values and fnmatch.fnmatch(path, pattern)]


def csp_rules(path: str, rules) -> list[str]:
    return matching("Content-Security-Policy", path, rules)


@pytest.fixture(scope="module")
def rules():
    if not (PUBLIC / "_headers").exists():
        pytest.fail("site/public/_headers is missing; scripts/build writes it (layouts/home.headers)")
    return devserver.header_rules(public=PUBLIC)


def test_every_page_and_worker_matches_exactly_one_policy(rules):
    pages = [p for p in served_paths() if p.endswith("/") or p.endswith(".html") or p.startswith("/js/") or p == "/sw.js"]
    assert len(pages) > 40
    wrong = {p: len(csp_rules(p, rules)) for p in pages if len(csp_rules(p, rules)) != 1}
    assert wrong == {}, f"paths matching other than one Content-Security-Policy rule: {wrong}"


def test_inline_scripts_are_exactly_those_the_policy_allows(rules):
    """A page's inline script runs only if the policy lists its sha256 (the head's warm.js, which
    starts Python's worker at the first paint, before demos.js may have run): a minifier that rewrote it, or a hash the
    policy lacks, would leave the script blocked and Python starting late, with no test failing."""
    checked = set()
    for page in PUBLIC.rglob("*.html"):
        html = page.read_text()
        path = "/" + page.relative_to(PUBLIC).as_posix()
        (policy,) = csp_rules(path, rules)
        script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src")).split()
        for attributes, body in re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S):
            if "src=" in attributes or "application/json" in attributes:
                continue  # a file (allowed as 'self') or data (never run)
            digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in script_src, f"{path}: an inline script the policy does not allow: {body[:80]!r}"
            assert "SharedWorker" in body and "<figure class=demo" in html, f"{path}: an unexpected inline script"
            checked.add(path)
    with_figures = {"/" + f.relative_to(PUBLIC).as_posix() for f in PUBLIC.rglob("*.html") if "<figure class=demo" in f.read_text()}
    assert len(with_figures) > 25 and checked == with_figures, f"pages with figures that start no worker early: {with_figures - checked}"


def test_every_served_file_matches_exactly_one_caching_rule(rules):
    """Two matching Cache-Control rules would leave the deploy to pick one (a host may join them);
    none would leave it to a default."""
    wrong = {p: matching("Cache-Control", p, rules) for p in served_paths()
             if len(matching("Cache-Control", p, rules)) != 1}
    assert wrong == {}, f"paths matching other than one Cache-Control rule: {wrong}"


def test_what_may_be_cached_for_a_year(rules):
    """Only files whose address changes with their content are immutable: the runtime under its
    version or content hash, plotly and KaTeX under their content hash, Hugo's fingerprinted
    scripts and stylesheet. The site lockfile, which names our wheel, lives in that wheel's
    content-hashed folder. Everything else revalidates."""
    contract = json.loads((ROOT / "site" / "data" / "contract.json").read_text())
    assert contract["lockfile"].startswith("pyodide/headspace/") and contract["lockfile"].split("/")[2]
    assert re.fullmatch(r"vendor/[0-9a-f]{12}/", contract["vendor_dir"]), contract["vendor_dir"]
    for path in served_paths():
        (value,) = matching("Cache-Control", path, rules)
        if "immutable" in value:
            assert path.startswith(("/pyodide/", "/vendor/", "/js/", "/css/")), path
            if path.startswith(("/js/", "/css/")):
                assert re.search(r"\.[0-9a-f]{64}\.(js|css)$", path), f"{path} is immutable but not fingerprinted"
            if path.startswith("/vendor/"):
                assert path.startswith("/" + contract["vendor_dir"]), f"{path} is immutable but outside {contract['vendor_dir']}"
        else:
            assert "max-age=0, must-revalidate" in value, (path, value)


def test_vendored_files_are_named_by_their_content():
    """The vendor folder's name is the hash of what it holds: change a byte and the address changes."""
    contract = json.loads((ROOT / "site" / "data" / "contract.json").read_text())
    folder = PUBLIC / contract["vendor_dir"]
    listing = "".join(f"{p.relative_to(folder).as_posix()} {hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                      for p in sorted(folder.rglob("*"), key=lambda p: p.relative_to(folder).as_posix()) if p.is_file())
    assert hashlib.sha256(listing.encode()).hexdigest()[:12] == folder.name
    assert sorted(p.name for p in (PUBLIC / "vendor").iterdir()) == [folder.name], "an older vendor folder is still served"


def test_the_service_worker_is_never_cached(rules):
    """A new build's sw.js must reach readers on their next visit (site/layouts/home.sw.js)."""
    assert matching("Cache-Control", "/sw.js", rules) == ["public, max-age=0, must-revalidate"]


def test_only_embed_pages_may_be_framed(rules, demos_data):
    embeds = {f"/embed/{name}/" for name in demos_data["registry"]}
    embeds |= {p + "index.html" for p in embeds}
    assert embeds <= set(served_paths()), "every registry demo has an embed page"
    for path in served_paths():
        policies = csp_rules(path, rules)
        if not policies:
            continue  # assets: no document to frame
        (policy,) = policies
        if path.startswith("/js/") or path == "/sw.js":
            assert "frame-ancestors" not in policy  # a worker's policy: framing does not apply
        elif path in embeds:
            assert policy.endswith(FRAMEABLE), (path, policy)
        else:
            assert re.search(r"frame-ancestors 'none'$", policy), (path, policy)


def test_the_dev_server_sends_them(site_url):
    def csp(path):
        with urllib.request.urlopen(site_url + path) as response:
            return response.headers.get_all("Content-Security-Policy")

    assert csp("/embed/polarizer/?theta=30") == [csp("/embed/polarizer/")[0]]
    assert csp("/embed/polarizer/")[0].endswith(FRAMEABLE)
    for path in ("/", "/posts/polariser/", "/gallery/", "/embedding/", "/use-it/"):
        (policy,) = csp(path)
        assert policy.endswith("frame-ancestors 'none'"), (path, policy)
    worker = re.search(r'data-worker="?([^" >]+)', (PUBLIC / "embed/polarizer/index.html").read_text()).group(1)
    (policy,) = csp(worker)
    assert "connect-src 'self'" in policy and "'wasm-unsafe-eval'" in policy


def test_netlify_toml_sets_no_policy():
    """The policy lives in one place (site/hugo.toml, written per path by Hugo): a catch-all
    rule in netlify.toml would overlap every page's own."""
    toml_rules = devserver.header_rules(public=Path("/nonexistent"))
    assert not [p for p, values in toml_rules if "Content-Security-Policy" in values]


def test_embed_helper_is_served(site_url):
    with urllib.request.urlopen(site_url + "/embed.js") as response:
        text = response.read().decode()
        assert response.headers["Cache-Control"] == "public, max-age=0, must-revalidate"
    assert "headspace:height" in text and "data-headspace" in text


def test_the_dev_server_is_quiet_about_a_dropped_download_only(capsys):
    """A browser closing a connection mid-file is routine in tests (a page closed while its worker
    downloads); its traceback in CI's output hid the real failure. Any other error still prints."""
    server = devserver.serve(0)
    try:
        for error, printed in ((BrokenPipeError(32, "Broken pipe"), ""), (ConnectionResetError(104, "reset"), ""),
                               (ValueError("a real bug"), "ValueError: a real bug")):
            try:
                raise error
            except Exception:
                server.handle_error(None, ("127.0.0.1", 0))
            err = capsys.readouterr().err
            assert (printed in err and bool(err) == bool(printed)), (error, err)
    finally:
        server.shutdown()
        server.server_close()
