"""Page weight and main thread, per article (issue 13): what a reader downloads and how long the
page's main thread is blocked until every figure is live, cold and on a warm second visit; and
Lighthouse's performance audit (mobile and desktop presets) of every article.

Bytes are counted by the server (sitebuild.devserver counts each body it sends), so requests made
by the page, its workers and its service worker all count, and a file a cache answered counts 0.
The server gzips text and wasm as the deploy's host does (serve(compress=True)); wheels, zips and
models go as they are (compressed already).

    scripts/bench --weight-only         (bench/run.py calls run() with a server it started)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from returning import KEPT  # the service worker holds what the page used

ROOT = Path(__file__).resolve().parent.parent
ARTICLES = sorted(p.stem for p in (ROOT / "site" / "content" / "posts").glob("*.md") if p.stem != "_index")
KINDS = ("wasm", "stdlib", "wheels", "models", "plotly", "katex", "html", "js", "css", "other")
LIVE = "() => [...document.querySelectorAll('figure.demo')].every(f => ['ready', 'error'].includes(f.dataset.status))"
LIVE_MS = 120_000

# Long tasks on the main thread, from the start (buffered); total blocking time is their time
# beyond 50 ms each, after the first contentful paint, as Lighthouse counts it.
LONGTASKS = """window.__longtasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longtasks.push([e.startTime, e.duration]); })
  .observe({type: 'longtask', buffered: true});"""
TBT_JS = """() => {
  const fcp = (performance.getEntriesByName('first-contentful-paint')[0] || {startTime: 0}).startTime;
  const tasks = window.__longtasks.filter(([start]) => start >= fcp);
  return {fcp_ms: fcp, tbt_ms: tasks.reduce((s, [, d]) => s + Math.max(0, d - 50), 0),
          long_tasks: tasks.length, live_ms: performance.now()};
}"""


def kind(path: str) -> str:
    """The part of the page a served path belongs to (the runtime's xz-compressed copies too).

    >>> kind("/pyodide/0.27.7/pyodide.asm.wasm"), kind("/a/python_stdlib.zip.xz"), kind("/a/numpy-2.whl.xz")
    ('wasm', 'stdlib', 'wheels')
    """
    path = path.removesuffix(".xz")
    if path.endswith(".wasm"):
        return "wasm"
    if path.endswith("python_stdlib.zip"):
        return "stdlib"
    if path.endswith(".whl"):
        return "wheels"
    if path.startswith("/models/"):
        return "models"
    if path.startswith("/vendor/") and path.endswith("/plotly.min.js"):
        return "plotly"
    if path.startswith("/vendor/") and "/katex/" in path:
        return "katex"
    if path.endswith((".html", "/")):
        return "html"
    if path.endswith((".js", ".mjs")):
        return "js"
    if path.endswith(".css"):
        return "css"
    return "other"


def by_kind(served: dict[str, int]) -> dict[str, int]:
    out = {k: 0 for k in KINDS}
    for path, n in served.items():
        out[kind(path)] += n
    out["total"] = sum(served.values())
    return out


def visit(context, url: str, counter) -> dict:
    """Open ``url``, wait until every figure is live; bytes the server sent meanwhile, and TBT."""
    counter.clear()
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(LIVE, timeout=LIVE_MS)
    main = page.evaluate(TBT_JS)
    page.wait_for_timeout(300)  # late requests (a service worker's own) still count
    served = dict(counter)
    figures = page.evaluate("() => document.querySelectorAll('figure.demo').length")
    page.close()
    return {"bytes": by_kind(served), "files": served, "figures": figures, **main}


def article_weight(playwright, chromium, args, base, article, counter) -> dict:
    """Cold (fresh profile) and warm (the same profile, browser restarted) visits of one article."""
    profile = tempfile.mkdtemp(prefix="headspace-weight-")
    url = f"{base}/posts/{article}/"
    try:
        out = {}
        for visit_name in ("cold", "warm"):
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=chromium, headless=True, args=args, viewport={"width": 1280, "height": 900})
            context.add_init_script(LONGTASKS)
            out[visit_name] = visit(context, url, counter)
            if visit_name == "cold":  # let the service worker (registered once live) keep what the page loaded
                page = context.new_page()
                page.goto(url)
                page.wait_for_function(LIVE, timeout=LIVE_MS)
                page.wait_for_function(KEPT, timeout=30_000)
            context.close()
        return out
    finally:
        shutil.rmtree(profile, ignore_errors=True)


# ---------- Lighthouse ----------

def lighthouse_cli() -> Path | None:
    """Lighthouse as scripts/bench installed it (bench/lighthouse/package-lock.json) into the cache."""
    cache = Path(os.environ.get("HEADSPACE_CACHE", Path.home() / ".cache" / "headspace"))
    cli = cache / "lighthouse" / "node_modules" / "lighthouse" / "cli" / "index.js"
    return cli if cli.exists() else None


def lighthouse(url: str, preset: str, chromium: str, flags: list[str], out_dir: Path) -> dict:
    """One Lighthouse run (performance only) of ``url`` with the ``mobile`` or ``desktop`` preset."""
    cli = lighthouse_cli()
    if cli is None:
        return {"error": "lighthouse is not installed (scripts/bench installs it)"}
    report = out_dir / f"{url.rstrip('/').rsplit('/', 1)[-1]}-{preset}.json"
    chrome_flags = " ".join(["--headless=new", *flags])
    cmd = ["node", str(cli), url, "--quiet", "--only-categories=performance", "--output=json",
           f"--output-path={report}", f"--chrome-flags={chrome_flags}", "--max-wait-for-load=90000"]
    if preset == "desktop":
        cmd.append("--preset=desktop")
    env = {**os.environ, "CHROME_PATH": chromium}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0 or not report.exists():
        return {"error": (proc.stderr or proc.stdout)[-1500:]}
    return summarise(json.loads(report.read_text()))


def summarise(lhr: dict) -> dict:
    """Score, the timings the issue names, bytes by resource type and the scripts that block."""
    audits = lhr["audits"]
    num = lambda key: round(audits[key]["numericValue"]) if audits.get(key, {}).get("numericValue") is not None else None  # noqa: E731
    summary = {item["resourceType"]: item["transferSize"] for item in audits["resource-summary"]["details"]["items"]}
    bootup = sorted(audits.get("bootup-time", {}).get("details", {}).get("items", []), key=lambda i: -i.get("total", 0))
    unused = audits.get("unused-javascript", {}).get("details", {}).get("items", [])
    render_blocking = audits.get("render-blocking-resources", {}).get("details", {}).get("items", [])
    short = lambda u: u.split("/", 3)[-1] if "://" in u else u  # noqa: E731
    return {
        "score": round(100 * (lhr["categories"]["performance"]["score"] or 0)),
        "tbt_ms": num("total-blocking-time"), "lcp_ms": num("largest-contentful-paint"),
        "fcp_ms": num("first-contentful-paint"), "si_ms": num("speed-index"), "cls": audits["cumulative-layout-shift"]["numericValue"],
        "bytes": num("total-byte-weight"), "bytes_by_type": summary,
        "main_thread_by_script_ms": {short(i["url"]): round(i["total"]) for i in bootup[:5]},
        "unused_js_bytes": {short(i["url"]): i.get("wastedBytes") for i in unused},
        "render_blocking": [short(i["url"]) for i in render_blocking],
        "warnings": lhr.get("runWarnings", []),
    }


def run(playwright, chromium: str, args: list[str], base: str, counter, lighthouse_runs: bool = True,
        articles=ARTICLES) -> dict:
    """Every article: bytes by kind and TBT, cold and warm; then Lighthouse mobile and desktop."""
    report = {"articles": {}, "load_average": os.getloadavg()}
    for article in articles:
        r = article_weight(playwright, chromium, args, base, article, counter)
        report["articles"][article] = r
        print_article(article, r)
    if lighthouse_runs:
        out_dir = ROOT / "bench" / "results" / "lighthouse"
        out_dir.mkdir(parents=True, exist_ok=True)
        flags = [f for f in args if f != "--disable-gpu"] + ["--disable-gpu"]
        for article in articles:
            for preset in ("mobile", "desktop"):
                t0 = time.time()
                r = lighthouse(f"{base}/posts/{article}/", preset, chromium, flags, out_dir)
                r["seconds"] = round(time.time() - t0)
                report["articles"][article][f"lighthouse_{preset}"] = r
                print_lighthouse(article, preset, r)
    report["load_average_after"] = os.getloadavg()
    return report


MB = 1e6


def print_article(article: str, r: dict) -> None:
    for name in ("cold", "warm"):
        b = r[name]["bytes"]
        parts = " ".join(f"{k} {b[k] / MB:.2f}" for k in KINDS if b[k])
        print(f"weight {article:40s} {name}: {b['total'] / MB:6.2f} MB ({parts})  TBT {r[name]['tbt_ms']:5.0f} ms"
              f"  live at {r[name]['live_ms']:6.0f} ms")


def print_lighthouse(article: str, preset: str, r: dict) -> None:
    if "error" in r:
        print(f"lighthouse {article:36s} {preset:7s} error: {r['error'][-300:]}")
        return
    print(f"lighthouse {article:36s} {preset:7s} score {r['score']:3d}  TBT {r['tbt_ms']:5d} ms  LCP {r['lcp_ms']:5d} ms"
          f"  FCP {r['fcp_ms']:5d} ms  {r['bytes'] / MB:5.2f} MB  ({r['seconds']} s)")


@contextlib.contextmanager
def weight_server():
    """A server of its own that gzips text as the deploy's host does: ``(base URL, bytes counter)``."""
    from sitebuild import devserver
    server = devserver.serve(0, compress=True)
    try:
        yield f"http://127.0.0.1:{server.server_port}", devserver.Handler.bytes_served
    finally:
        server.shutdown()


def weight_bench(playwright, chromium: str, args: list[str], runs: int) -> dict:
    """bench/run.py's hook: the returning reader (bench/returning.py) and every article's weight and
    Lighthouse audits, through ``weight_server``."""
    import returning
    with weight_server() as (base, counter):
        out = {"returning": returning.run(playwright, chromium, args, base, counter, runs)}
        returning.print_report(out["returning"])
        out["weight"] = run(playwright, chromium, args, base, counter)
    path = ROOT / "bench" / "results" / "weight.json"
    path.write_text(json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M:%S"), **out}, indent=1))
    print(f"weight report written to {path}")
    return out
