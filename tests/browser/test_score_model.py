"""The "Score your model" page (issue 50): checkpoints written here, in each layout the reader reads,
chosen with the page's file chooser, scored by Python in the tab; every score the page shows and
exports equals ``python -m headspace scores`` on the same files within 1e-5; no request leaves after
the files are chosen; each bad file is named and the page goes on working.

One page serves the module (Python boots once): each test chooses new files, as a reader does.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

from browser_support import BOOT_MS
from headspace import checkpoint as ckp
from headspace.cli import main
from headspace.layer_pairs import SCORES
from headspace.safetensors_file import to_bytes

pytestmark = pytest.mark.browser

ATTR = {s: "data-" + s.replace("_", "-") for s in SCORES}         # each score's raw value on a table row
LAYOUTS = {
    "gpt2": dict(n_layers=3, n_heads=4, d_model=32),
    "gpt_neox": dict(n_layers=3, n_heads=4, d_model=32),
    "llama": dict(n_layers=3, n_heads=4, d_model=32, n_kv_heads=2),
    "mistral": dict(n_layers=2, n_heads=8, d_model=32, n_kv_heads=2),
    "qwen2": dict(n_layers=3, n_heads=2, d_model=24),
    "transformer_lens": dict(n_layers=3, n_heads=4, d_model=32, n_kv_heads=2),
}


class Session:
    """The module's page, its console errors and every request it made since ``mark()``."""

    def __init__(self, page, origin):
        self.page, self.origin, self.errors, self.requests = page, origin, [], []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))

    def choose(self, paths) -> None:
        """Choose ``paths`` with the page's file chooser, as a reader does."""
        with self.page.expect_file_chooser() as chooser:
            self.page.locator(".own-choose").click()
        chooser.value.set_files([str(p) for p in paths])

    def scored(self, paths) -> None:
        before = self.page.locator("[data-own-model]").get_attribute("data-scored")
        self.choose(paths)
        self.page.wait_for_function(
            """before => { const r = document.querySelector('[data-own-model]');
                return r.dataset.scored && r.dataset.scored !== before
                    && r.querySelectorAll('[data-role=top] tbody tr').length > 0
                    && r.querySelector('.own-figure[data-mode=V] svg'); }""", arg=before, timeout=BOOT_MS)

    def refused(self, paths) -> str:
        self.page.evaluate("() => { const e = document.querySelector('[data-role=error]'); e.hidden = true; e.textContent = ''; }")
        self.choose(paths)
        error = self.page.locator("[data-role=error]")
        error.wait_for(state="visible", timeout=BOOT_MS)
        return error.text_content()


@pytest.fixture(scope="module")
def own(browser, site_url):
    context = browser.new_context(reduced_motion="reduce", viewport={"width": 1100, "height": 900},
                                  accept_downloads=True)
    page = context.new_page()
    session = Session(page, site_url)
    page.goto(f"{site_url}/score-your-model/")
    page.wait_for_selector("[data-own-model][data-ready]", timeout=BOOT_MS)
    yield session
    context.close()
    assert session.errors == [], f"console errors: {session.errors}"
    off = [u for u in session.requests if urlparse(u).scheme not in ("data", "blob")
           and f"{urlparse(u).scheme}://{urlparse(u).netloc}" != site_url]
    assert off == [], f"requests left the origin: {off}"


def folder(tmp_path: Path, arch: str, dtype: str = "F32", seed: int = 0) -> Path:
    config = ckp.example_config(arch, **LAYOUTS[arch])
    where = tmp_path / f"{arch}-{dtype}"
    where.mkdir()
    (where / "config.json").write_text(json.dumps(config))
    ckp.write_example(where / "model.safetensors", config, seed=seed, dtype=dtype)
    return where


def cli_scores(where: Path, tmp_path: Path) -> dict:
    out = tmp_path / f"{where.name}.csv"
    assert main(["scores", str(where), "--mode", "Q,K,V", "--metric", ",".join(SCORES), "--out", str(out)]) == 0
    return {key(r): r for r in csv.DictReader(out.open())}


def key(r) -> tuple:
    return (r["mode"], int(r["layer1"]), int(r["head1"]), int(r["layer2"]), int(r["head2"]))


def page_csv(own) -> list[dict]:
    with own.page.expect_download() as info:
        own.page.locator("[data-role=csv]").click()
    return list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))


@pytest.mark.parametrize("arch, dtype", [(a, "F32") for a in LAYOUTS] + [("gpt2", "F16"), ("llama", "BF16")])
def test_every_score_shown_equals_the_command_line(own, tmp_path, arch, dtype):
    where = folder(tmp_path, arch, dtype)
    cli = cli_scores(where, tmp_path)
    own.scored([where / "model.safetensors", where / "config.json"])
    page = own.page
    summary = {d.get_attribute("data-field"): d.text_content() for d in page.locator("[data-role=summary] dd").all()}
    sizes = LAYOUTS[arch]
    assert summary["layers"] == str(sizes["n_layers"]) and summary["d_model"] == str(sizes["d_model"])
    assert summary["dtype"] == dtype and f"{arch if arch not in ('mistral', 'qwen2') else 'llama'} layout" in summary["architecture"]
    # every pair, every score: the CSV export
    rows = page_csv(own)
    assert len(rows) == len(cli) == 3 * sizes["n_heads"] ** 2 * sizes["n_layers"] * (sizes["n_layers"] - 1) // 2
    worst = 0.0
    for r in rows:
        for s in SCORES:
            want = float(cli[key(r)][s])
            worst = max(worst, abs(float(r[s]) - want) / abs(want))
    assert worst < 1e-5, worst
    # the top pairs and the pair shown in detail: every number in their rows
    for tr in page.locator("[data-role=top] tbody tr").all():
        l1, h1, l2, h2 = json.loads(tr.get_attribute("data-pair"))
        want = cli[(tr.get_attribute("data-mode"), l1, h1, l2, h2)]
        for s in SCORES:
            assert float(tr.get_attribute(ATTR[s])) == pytest.approx(float(want[s]), rel=1e-5)
    l1, h1, l2, h2 = json.loads(page.locator(".own-pair").get_attribute("data-pair"))
    cells = page.locator("[data-role=pair-table] tbody td").all()
    assert len(cells) == 3 * len(SCORES)
    for td in cells:
        s = td.locator("xpath=..").get_attribute("data-score")
        want = cli[(td.get_attribute("data-mode"), l1, h1, l2, h2)]
        assert float(td.get_attribute("data-value")) == pytest.approx(float(want[s]), rel=1e-5)


def cell_point(page, mode, row, col):
    """Page coordinates of the heatmap cell (row: writer, col: reader) of ``mode``'s figure."""
    fig = page.locator(f".own-figure[data-mode={mode}]")
    fig.scroll_into_view_if_needed()
    box = json.loads(fig.get_attribute("data-box"))
    n = int(fig.get_attribute("data-n"))
    svg = fig.locator("svg").bounding_box()
    x = box["x0"] + (col + 0.5) / n * (box["x1"] - box["x0"])
    y = box["y0"] + (row + 0.5) / n * (box["y1"] - box["y0"])
    return svg["x"] + x / box["width"] * svg["width"], svg["y"] + y / box["height"] * svg["height"]


def tip_values(page) -> dict:
    """The values the pointer's box shows, by the names a reader reads: {name: value}."""
    out = {}
    for line in page.locator(".own-tip span").all_text_contents():
        name, value = line.split(" (")[0].rsplit(" ", 1)
        out[name] = float(value)
    return out


NAMES = {"frobenius": "Frobenius", "svd_bound": "SVD bound", "subspace": "subspace", "product_norm": "path size",
         "norm_product": "head sizes"}


def test_a_pointer_over_a_cell_shows_its_values_and_a_click_its_detail(own, tmp_path):
    where = folder(tmp_path, "gpt2")
    cli = cli_scores(where, tmp_path)
    own.scored([where / "model.safetensors", where / "config.json"])
    H = int(own.page.locator(".own-figure[data-mode=K]").get_attribute("data-heads"))
    assert int(own.page.locator(".own-figure[data-mode=K]").get_attribute("data-n")) == 2 * H
    x, y = cell_point(own.page, "K", 1, H + 3)          # writer L0H1, reader L2H3
    own.page.mouse.move(x, y)
    tip = own.page.locator(".own-tip")
    tip.wait_for(state="visible", timeout=5000)
    assert tip.get_attribute("data-pair") == "[0,1,2,3]" and tip.get_attribute("data-mode") == "K"
    assert tip.locator("strong").text_content() == "L0H1 → L2H3, K-composition"
    shown, want = tip_values(own.page), cli[("K", 0, 1, 2, 3)]
    for s in SCORES:                                     # four significant digits of the command line's
        assert shown[NAMES[s]] == pytest.approx(float(want[s]), rel=1e-3), s
    own.page.locator(".own-results h2").first.hover()    # away: the values go
    tip.wait_for(state="hidden", timeout=5000)
    x, y = cell_point(own.page, "K", 1, H + 3)          # (hovering may have scrolled the page)
    own.page.mouse.click(x, y)
    own.page.wait_for_function("() => document.querySelector('.own-pair').dataset.pair === '[0,1,2,3]'", timeout=20_000)
    assert own.page.locator("[data-role=pair-title]").text_content() == "writer L0H1 → reader L2H3"
    assert tip.is_visible()


def test_a_row_of_the_top_pairs_shows_its_values(own, tmp_path):
    where = folder(tmp_path, "gpt2")
    own.scored([where / "model.safetensors", where / "config.json"])
    row = own.page.locator("[data-role=top] tbody tr").nth(2)
    row.hover()
    tip = own.page.locator(".own-tip")
    tip.wait_for(state="visible", timeout=5000)
    assert tip.get_attribute("data-pair") == row.get_attribute("data-pair")
    shown = tip_values(own.page)
    for s in SCORES:
        assert shown[NAMES[s]] == pytest.approx(float(row.get_attribute(ATTR[s])), rel=1e-3)
    row.focus()                                          # the keyboard: the row's values too
    assert tip.get_attribute("data-pair") == row.get_attribute("data-pair")


def test_each_score_can_be_shown(own, tmp_path):
    """The menu redraws every heatmap with the score chosen, in its reader-facing name, and the top
    pairs are those of that score against random heads."""
    where = folder(tmp_path, "llama")
    own.scored([where / "model.safetensors", where / "config.json"])
    for s in SCORES:
        own.page.locator("[data-role=score]").select_option(s)
        own.page.wait_for_function("name => [...document.querySelectorAll('.own-figure[data-mode] svg')]"
                                   ".filter(svg => svg.textContent.includes('-composition: ' + name)).length === 3",
                                   arg=NAMES[s], timeout=20_000)
        text = own.page.locator("[data-role=results]").inner_text() + own.page.locator(".own-tip").text_content()
        assert not [k for k in SCORES if "_" in k and k in text], text   # readers read names.py's words
        rows = own.page.locator("[data-role=top] tbody tr").all()
        key = [float(r.get_attribute(ATTR[s])) for r in rows]
        if s != "norm_product":                          # divided by each pair's random value: not raw order
            shown = [float(r.locator("td").nth(2 + SCORES.index(s)).text_content().rstrip("×")) for r in rows]
            assert shown == sorted(shown, reverse=True)
        else:
            assert key == sorted(key, reverse=True)


def test_a_tap_shows_the_values_and_the_detail(browser, site_url, tmp_path):
    """A finger: no hover, a tap shows the cell's values and that pair's detail."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                  device_scale_factor=2)
    page = context.new_page()
    try:
        session = Session(page, site_url)
        page.goto(f"{site_url}/score-your-model/")
        page.wait_for_selector("[data-own-model][data-ready]", timeout=BOOT_MS)
        where = folder(tmp_path, "gpt2")
        session.scored([where / "model.safetensors", where / "config.json"])
        H = int(page.locator(".own-figure[data-mode=V]").get_attribute("data-heads"))
        x, y = cell_point(page, "V", H + 2, H + 1)       # writer L1H2, reader L2H1
        page.touchscreen.tap(x, y)
        page.wait_for_function("() => document.querySelector('.own-pair').dataset.pair === '[1,2,2,1]'", timeout=20_000)
        tip = page.locator(".own-tip")
        assert tip.is_visible() and tip.get_attribute("data-pair") == "[1,2,2,1]"
        box = tip.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390       # inside the phone's width
        assert session.errors == []
    finally:
        context.close()


def test_no_request_leaves_after_the_files_are_chosen(own, tmp_path):
    where = folder(tmp_path, "llama")
    own.requests.clear()
    own.scored([where / "model.safetensors", where / "config.json"])
    page_csv(own)
    own.page.locator("[data-role=score]").select_option("product_norm")
    own.page.wait_for_timeout(1500)
    assert [u for u in own.requests if urlparse(u).scheme not in ("blob", "data")] == []
    assert "Nothing is uploaded" in own.page.locator(".own-private").text_content()


def test_progress_says_the_work_done_and_cancel_stops_it(own, tmp_path):
    config = ckp.example_config("gpt2", n_layers=24, n_heads=8, d_model=256)
    where = tmp_path / "deep"
    where.mkdir()
    (where / "config.json").write_text(json.dumps(config))
    ckp.write_example(where / "model.safetensors", config)
    before = own.page.locator("[data-own-model]").get_attribute("data-scored")
    own.choose([where / "model.safetensors", where / "config.json"])
    own.page.wait_for_function("() => /^Scoring: [\\d,]+ of 52,992 head pairs × modes, [\\d,]+ a second, about \\d+ s left\\.$/"
                               ".test(document.querySelector('[data-role=status]').textContent)", timeout=BOOT_MS)
    own.page.locator("[data-role=cancel]").click()
    assert own.page.locator("[data-role=status]").text_content().startswith("Cancelled.")
    own.page.wait_for_timeout(1500)
    assert own.page.locator("[data-own-model]").get_attribute("data-scored") == before
    assert own.page.locator("[data-role=progress]").is_hidden() and own.page.locator("[data-role=results]").is_hidden()
    assert own.page.locator("[data-role=status]").text_content().startswith("Cancelled.")   # no step came after
    small = folder(tmp_path, "gpt2")
    own.scored([small / "model.safetensors", small / "config.json"])


# --------------------------------------------------------------------------- bad files, one test each

def good_and(tmp_path, name: str, data: bytes) -> list[Path]:
    where = folder(tmp_path, "gpt2")
    (where / "model.safetensors").unlink()
    bad = where / name
    bad.write_bytes(data)
    return [bad, where / "config.json"]


def with_header(data: bytes, change) -> bytes:
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    change(header)
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + data[8 + n:]


def gpt2_bytes(dtype="F32") -> bytes:
    state = ckp.example_state(ckp.example_config("gpt2", **LAYOUTS["gpt2"]))
    return to_bytes(state, {k: dtype for k in state})


def lie(header):
    header["transformer.h.1.attn.c_attn.weight"]["data_offsets"][1] -= 8


def as_int(header):
    header["transformer.h.0.attn.c_proj.weight"]["dtype"] = "I32"


BAD = {
    "not safetensors": (lambda: b"PK\x03\x04 a zip archive, not a checkpoint" * 10, "not a safetensors file"),
    "truncated": (lambda: gpt2_bytes()[:-1000], "is truncated"),
    "header lies": (lambda: with_header(gpt2_bytes(), lie), "header lies about tensor 'transformer.h.1.attn.c_attn.weight'"),
    "unknown architecture": (
        lambda: to_bytes({"encoder.layer.0.attention.self.query.weight": np.zeros((4, 4), np.float32)}),
        "Tensor names found: encoder.layer.0.attention.self.query.weight. Expected names such as gpt2: h.0.attn.c_attn.weight"),
    "unsupported dtype": (lambda: with_header(gpt2_bytes(), as_int), "has dtype I32; supported are F32, F16, BF16"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_file_is_named_and_the_page_keeps_working(own, tmp_path, case):
    make, words = BAD[case]
    paths = good_and(tmp_path, "model.safetensors", make())
    if case == "unknown architecture":
        paths = paths[:1]                                 # without config: the names must speak
    message = own.refused(paths)
    assert words in message, message
    assert message.startswith("Could not read model.safetensors")
    where = folder(tmp_path, "gpt_neox")
    own.scored([where / "model.safetensors", where / "config.json"])      # and the next file works


def test_a_model_too_large_for_the_tab_is_refused_before_reading(browser, site_url, tmp_path):
    context = browser.new_context(viewport={"width": 800, "height": 900})
    context.add_init_script("window.HEADSPACE_MEMORY_LIMIT = 50000;")  # a tab of 0.05 MB for the model
    page = context.new_page()
    try:
        session = Session(page, site_url)
        page.goto(f"{site_url}/score-your-model/")
        page.wait_for_selector("[data-own-model][data-ready]", timeout=BOOT_MS)
        where = folder(tmp_path, "gpt2")
        message = session.refused([where / "model.safetensors", where / "config.json"])
        assert "too large for this tab" in message and "this tab can use about 0.1 MB on this device" in message
        assert "Nothing was read beyond the headers" in message
        assert session.errors == []
    finally:
        context.close()
