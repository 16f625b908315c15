"""Four figures embedded in one host page: one shared Python, or one per figure.

A blog on another origin (``localhost`` against the site's ``127.0.0.1``: another
site) frames four embed pages (three small demos and one that loads the shipped
models). Each variant runs in a freshly launched browser:

- ``shared``: the browser allows third-party storage, so the four frames reach
  one SharedWorker (Chromium launched with BlockThirdPartyCookies disabled);
- ``dedicated``: the page's fallback, forced, one worker per frame;
- ``browser_default``: Debian's Chromium as it comes, which blocks third-party
  storage and with it the SharedWorker, so the frames fall back by themselves.

Recorded per run: time from navigation to the last frame's "ready" (the host
hears each frame's status by postMessage), the worker kind each frame used, the
wasm heap each frame's interpreter reports, and the proportional set size (PSS)
summed over every process of the browser once all four are ready.
"""

from __future__ import annotations

import functools
import http.server
import os
import statistics
import tempfile
import threading
from pathlib import Path

DEMOS = ("polarizer", "three-polarizers", "bottleneck", "composition-scores")
ALLOW_THIRD_PARTY = "--disable-features=BlockThirdPartyCookies"
VARIANTS = {"shared": ([ALLOW_THIRD_PARTY], None),
            "dedicated": ([ALLOW_THIRD_PARTY], "window.HEADSPACE_WORKER = 'dedicated'"),
            "browser_default": ([], None)}


def host_page(directory: Path, site: str) -> None:
    frames = "\n".join(f'<iframe id="f{i}" src="{site}/embed/{name}/" title="{name}" width="100%" height="400" '
                       f'style="border:0" data-headspace></iframe>' for i, name in enumerate(DEMOS))
    (directory / "index.html").write_text(f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>host</title><link rel="icon" href="data:,"></head><body>
<script>
window.readyAt = {{}};
addEventListener("message", (e) => {{
  if (!e.data || e.data.type !== "headspace:status" || e.data.status !== "ready") return;
  for (const f of document.querySelectorAll("iframe"))
    if (f.contentWindow === e.source && !(f.id in readyAt)) readyAt[f.id] = performance.now();
}});
</script>
{frames}
<script async src="{site}/embed.js"></script>
</body></html>""")


def serve_host(directory: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            out.append(child)
            todo.append(child)
    return out


def browser_pss_mb() -> float:
    """PSS of every Chromium process under this one (the Playwright driver's children)."""
    total_kb = 0
    for pid in descendants(os.getpid()):
        try:
            if "chrom" not in Path(f"/proc/{pid}/comm").read_text():
                continue
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
    return total_kb / 1024


def one_run(playwright, chromium: str, base_args: list[str], host: str, variant: str, boot_ms: int) -> dict:
    extra, init = VARIANTS[variant]
    browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=base_args + extra)
    try:
        context = browser.new_context(viewport={"width": 1000, "height": 900}, reduced_motion="reduce")
        if init:
            context.add_init_script(init)
        page = context.new_page()
        page.goto(f"{host}/")
        page.wait_for_function(f"() => Object.keys(window.readyAt).length === {len(DEMOS)}", timeout=boot_ms)
        ready_ms = max(page.evaluate("() => window.readyAt").values())
        frames = page.frames[1:]
        kinds = [f.evaluate("() => window.headspace.marks.workerKind") for f in frames]
        heaps = [f.evaluate("() => window.headspace.stats()")["heapBytes"] for f in frames]
        page.wait_for_timeout(500)  # let allocation settle before reading memory
        pss = browser_pss_mb()
        return {"all_ready_ms": ready_ms, "worker_kinds": kinds, "interpreters": len(set(heaps)) if "shared" in kinds else len(heaps),
                "wasm_heaps_mb": [h / 2**20 for h in heaps], "browser_pss_mb": pss}
    finally:
        browser.close()


def embeds_bench(playwright, chromium: str, base_args: list[str], site: str, runs: int, boot_ms: int) -> dict:
    """Median over ``runs`` of each variant, interleaved so that machine load hits all alike."""
    with tempfile.TemporaryDirectory() as tmp:
        host_page(Path(tmp), site)
        server = serve_host(Path(tmp))
        host = f"http://localhost:{server.server_port}"
        try:
            results = {v: [] for v in VARIANTS}
            for _ in range(runs):
                for variant in VARIANTS:
                    results[variant].append(one_run(playwright, chromium, base_args, host, variant, boot_ms))
        finally:
            server.shutdown()
    report = {"demos": list(DEMOS), "runs": results}
    for variant, rs in results.items():
        report[variant] = {"all_ready_ms": statistics.median(r["all_ready_ms"] for r in rs),
                           "browser_pss_mb": statistics.median(r["browser_pss_mb"] for r in rs),
                           "worker_kinds": rs[0]["worker_kinds"]}
    report["ready_ratio_shared_over_dedicated"] = report["shared"]["all_ready_ms"] / report["dedicated"]["all_ready_ms"]
    report["pss_ratio_shared_over_dedicated"] = report["shared"]["browser_pss_mb"] / report["dedicated"]["browser_pss_mb"]
    return report


def print_embeds(r: dict) -> None:
    for variant in VARIANTS:
        v = r[variant]
        print(f"4 embeds {variant:16s} all ready {v['all_ready_ms']:7.0f} ms   browser PSS {v['browser_pss_mb']:6.0f} MB"
              f"   workers: {', '.join(v['worker_kinds'])}")
    print(f"4 embeds shared/dedicated: time {r['ready_ratio_shared_over_dedicated']:.2f}x, "
          f"memory {r['pss_ratio_shared_over_dedicated']:.2f}x")
