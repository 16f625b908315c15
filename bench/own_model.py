"""The "Score your model" section of scripts/bench (issue 50): a GPT-2-small-shaped checkpoint scored
in the page, desktop and on the phone profile, beside the same work natively.

    bench/run.py --own-model        (scripts/bench --own-model: only this section)

The checkpoint: written here, random weights with GPT-2 small's real tensor names and shapes (12
layers of 12 heads, d_model 768, vocabulary 50257, 1024 positions; biases and norms included, MLPs
left out: the page never reads them), float32, as ``model.safetensors`` + ``config.json``.

The page: a fresh context, /score-your-model/, Python booted (``data-ready``), then both files
chosen through the file chooser; the time from the choice until every score is drawn
(``data-scored`` and the V heatmap on screen), all three modes and every score the page computes
(``headspace.layer_pairs.SCORES``: frobenius, svd_bound, subspace, product_norm, norm_product;
28,512 head pairs x modes in 66 layer-pair blocks after 12 layer reads). Memory: the worker's wasm heap at the end (it only grows, so this is its peak), and the
peak over the run of the resident memory of every Chromium process this benchmark started
(sampled from /proc every 100 ms), less what they held before the files were chosen. The phone:
390 x 844 at 3x with touch and the page's main thread slowed 4x (``sitebuild.browser.PHONE``);
Chromium cannot slow a worker, so the scoring itself runs at desktop speed there; its page is
dark, the desktop's light, and each is saved as bench/results/own-model-<profile>.png to look at.

Natively, in a fresh process each: the page's own work (``headspace_site.own_model``'s ops, the same
steps) and the command line (``python -m headspace scores DIR --mode Q,K,V --metric
frobenius,svd_bound,subspace,product_norm,norm_product --out CSV``), wall time and peak resident memory (``ru_maxrss``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from headspace import checkpoint as ckp

BOOT_MS = 180_000
SHOTS = Path(__file__).resolve().parent / "results"
SCORE_MS = 30 * 60_000
GPT2_SMALL = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": 12, "n_head": 12, "n_embd": 768,
              "vocab_size": 50257, "n_positions": 1024, "layer_norm_epsilon": 1e-5}

# Peak memory from /proc/self/status's VmHWM, not ru_maxrss: Linux carries the maximum over exec, so
# a child started by a process that held the checkpoint would report the parent's peak.
USAGE = """
def usage():
    import resource
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {"peak_rss_bytes": int(hwm) * 1024, "cpu_s": r.ru_utime + r.ru_stime}
"""

NATIVE_PAGE = USAGE + """
import json, resource, sys, time
from headspace_site.own_model import answer
class F:
    def __init__(self, path):
        self.name, self.path = path.split("/")[-1], path
        import os; self.size = os.path.getsize(path)
    def read(self, offset, length):
        with open(self.path, "rb") as f:
            f.seek(offset); return f.read(length)
t0 = time.perf_counter()
status, out = answer("open", json.dumps({"limitBytes": 2**31}), [F(p) for p in sys.argv[1:]])
assert status == "result", out
steps = json.loads(out)["steps"]
for s in range(steps):
    status, out = answer("step", json.dumps({"step": s}))
    assert status == "result", out
t1 = time.perf_counter()
for mode in "QKV":
    answer("view", json.dumps({"mode": mode, "score": "frobenius", "width": 840}))
t2 = time.perf_counter()
print(json.dumps({"score_s": t1 - t0, "draw_s": t2 - t1, **usage()}))
"""

NATIVE_CLI = USAGE + """
import json, resource, sys, time
from headspace.cli import main
t0 = time.perf_counter()
assert main(["scores", sys.argv[1], "--mode", "Q,K,V", "--metric", "frobenius,svd_bound,subspace,product_norm,norm_product",
             "--out", sys.argv[2], "--top", "3"]) == 0
print(json.dumps({"score_s": time.perf_counter() - t0, **usage()}))
"""


def write_checkpoint(where: Path) -> dict:
    (where / "config.json").write_text(json.dumps(GPT2_SMALL))
    size = ckp.write_example(where / "model.safetensors", GPT2_SMALL, seed=0)
    return {"file_bytes": size, "attention_bytes": ckp.open_checkpoint(where).bytes_to_read()}


def native(where: Path) -> dict:
    files = [str(where / "model.safetensors"), str(where / "config.json")]
    env = dict(os.environ)
    page = subprocess.run([sys.executable, "-c", NATIVE_PAGE, *files], capture_output=True, text=True, env=env, check=True)
    cli = subprocess.run([sys.executable, "-c", NATIVE_CLI, str(where), str(where / "cli.csv")],
                         capture_output=True, text=True, env=env, check=True)
    return {"page_ops": json.loads(page.stdout.strip().splitlines()[-1]),
            "cli": json.loads(cli.stdout.strip().splitlines()[-1])}


def _descendants_rss() -> int:
    """Resident bytes of every process below this one (the Playwright driver and its Chromium)."""
    parent, rss = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        parent[int(pid)] = int(fields.get("PPid", "0").strip())
        rss[int(pid)] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
    me, total = os.getpid(), 0
    for pid in rss:
        p = pid
        while p and p != me:
            p = parent.get(p, 0)
        if p == me and pid != me:
            total += rss[pid]
    return total


class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.peak, self.running = 0, True

    def run(self):
        while self.running:
            self.peak = max(self.peak, _descendants_rss())
            time.sleep(0.1)


def in_page(playwright_browser, base: str, where: Path, profile: str) -> dict:
    from sitebuild.browser import phone_page
    if profile == "phone":
        page, _ = phone_page(playwright_browser, color_scheme="dark")
    else:
        page = playwright_browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light").new_page()
    try:
        page.goto(f"{base}/score-your-model/")
        page.wait_for_selector("[data-own-model][data-ready]", timeout=BOOT_MS)
        before = _descendants_rss()
        sampler = Sampler()
        sampler.start()
        with page.expect_file_chooser() as chooser:
            page.locator(".own-choose").click()
        t0 = time.perf_counter()
        chooser.value.set_files([str(where / "model.safetensors"), str(where / "config.json")])
        page.wait_for_function("() => document.querySelector('[data-own-model]').dataset.scored"
                               " && document.querySelector('.own-figure[data-mode=V] svg')", timeout=SCORE_MS, polling=200)
        seconds = time.perf_counter() - t0
        sampler.running = False
        sampler.join()
        stats = page.evaluate("() => window.headspace.ownStats()")
        SHOTS.mkdir(parents=True, exist_ok=True)             # to look at: 390 px dark, 1280 px light
        page.screenshot(path=str(SHOTS / f"own-model-{profile}.png"), full_page=True)
        return {"profile": profile, "seconds": seconds, "status": page.locator("[data-role=status]").text_content(),
                "wasm_heap_bytes": stats.get("heapBytes"), "peak_rss_bytes": sampler.peak,
                "rss_before_bytes": before, "peak_rss_growth_bytes": sampler.peak - before}
    finally:
        page.context.close()


def bench(playwright_browser, base: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        report = {"checkpoint": write_checkpoint(where)}
        report["native"] = native(where)
        report["page"] = [in_page(playwright_browser, base, where, profile) for profile in ("desktop", "phone")]
    show(report)
    return report


def show(report: dict) -> None:
    mb = lambda n: f"{n / 1e6:8.1f} MB"  # noqa: E731
    c, n = report["checkpoint"], report["native"]
    print(f"own model: GPT-2-small-shaped checkpoint, {mb(c['file_bytes'])} in the file, {mb(c['attention_bytes'])} read")
    print(f"  native, the page's ops   {n['page_ops']['score_s']:7.1f} s ({n['page_ops']['cpu_s']:.1f} s CPU)   peak "
          f"{mb(n['page_ops']['peak_rss_bytes'])}   (drawing the three heatmaps {n['page_ops']['draw_s']:.1f} s)")
    print(f"  native, the command line {n['cli']['score_s']:7.1f} s ({n['cli']['cpu_s']:.1f} s CPU)   peak "
          f"{mb(n['cli']['peak_rss_bytes'])}")
    for r in report["page"]:
        print(f"  page, {r['profile']:8s}          {r['seconds']:7.1f} s   wasm heap {mb(r['wasm_heap_bytes'] or 0)}"
              f"   Chromium peak {mb(r['peak_rss_bytes'])} (+{mb(r['peak_rss_growth_bytes'])} over idle)")
