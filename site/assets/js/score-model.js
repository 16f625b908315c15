// The "Score your model" page: the reader's checkpoint, read and scored by Python in the worker
// (headspace_site.own_model), one block per request, so the page stays responsive and a cancel
// takes effect at the next block. The files go to the worker as File objects, which it reads a
// slice at a time; nothing is sent anywhere else. Python's answers come back as JSON; the
// figures are SVG drawn by the site's own figure engine, exported by figure/image.js.

import { boot, request, stats } from "./figure/python.js";
import { figureSVG, toPNG } from "./figure/image.js";

const root = document.querySelector("[data-own-model]");
const $ = (role) => root.querySelector(`[data-role="${role}"]`);
const MODES = ["Q", "K", "V"];

// The memory this tab may give the model: a quarter of the device's memory (navigator.deviceMemory,
// Chromium only; else a touch screen counts as a 2 GB phone), at most 1.75 GB of Python's 32-bit
// address space, less 256 MB for the runtime. Tests set window.HEADSPACE_MEMORY_LIMIT.
const deviceGB = navigator.deviceMemory || (matchMedia("(pointer: coarse)").matches ? 2 : 8);
const LIMIT = window.HEADSPACE_MEMORY_LIMIT || Math.min(1.75 * 2 ** 30, (deviceGB * 2 ** 30) / 4) - 2 ** 28;

let run = 0; // the run under way: a new choice or a cancel moves it on, and an older run stops
let shown = null; // the checkpoint whose scores are on the page: {summary, name}
let pair = null; // the pair whose detail shows
const fmt = (x, d = 4) => (Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-3 && x !== 0) ? x.toExponential(d - 1) : x.toPrecision(d));
const mb = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : `${(n / 1e6).toFixed(1)} MB`);
const head = (l, h) => `L${l}H${h}`;

function say(text) { $("status").textContent = text; }
function fail(message) {
  const error = $("error");
  error.textContent = message;
  error.hidden = false;
}

async function ask(op, args, files) {
  const reply = await request({ type: "checkpoint", op, args, ...(files ? { files } : {}) });
  if (!reply) throw new Error("the Python worker stopped");
  if (reply.type === "error") throw new Error(reply.error.message);
  return JSON.parse(reply.json);
}

async function score(files) {
  const mine = ++run;
  $("error").hidden = true;
  const names = files.map((f) => f.name);
  say(`Reading the headers of ${names.join(", ")}…`);
  let opened;
  try {
    await boot();
    opened = await ask("open", { limitBytes: Math.floor(LIMIT) }, files);
  } catch (err) {
    if (mine === run) {
      fail(`Could not read ${names.join(", ")}: ${err.message}`);
      say(shown ? `Still showing ${shown.name}.` : "Choose a model's files to score it.");
    }
    return;
  }
  // Python now holds this model, not the last one: the last one's scores leave the page with it.
  const s = opened.summary;
  const name = names.find((n) => !n.endsWith(".json")) || names[0];
  shown = null;
  $("results").hidden = true;
  summary(s, name);
  const progress = $("progress"), bar = $("bar");
  progress.hidden = false;
  const t0 = performance.now();
  let scoredAt = null;
  for (let step = 0; step < opened.steps; step++) {
    if (mine !== run) return; // cancelled, or another model chosen
    let out;
    try {
      out = await ask("step", { step });
    } catch (err) {
      if (mine === run) { fail(`Stopped at step ${step + 1}: ${err.message}`); progress.hidden = true; }
      return;
    }
    if (mine !== run) return;
    const now = performance.now();
    bar.value = (step + 1) / opened.steps;
    if (out.phase === "read") {
      say(`Reading layer ${out.layersRead} of ${s.n_layers}: ${mb(out.bytesRead)} read of ${mb(s.file_bytes)} in the file.`);
      if (out.layersRead === s.n_layers) scoredAt = now;
    } else {
      const rate = out.pairsDone / Math.max(1e-3, (now - scoredAt) / 1000);
      const left = (opened.pairs - out.pairsDone) / Math.max(rate, 1e-9);
      say(`Scoring: ${out.pairsDone.toLocaleString("en")} of ${opened.pairs.toLocaleString("en")} head pairs × modes, `
        + `${Math.round(rate).toLocaleString("en")} a second, about ${Math.ceil(left)} s left.`);
      $("summary").querySelector("[data-field=read]").textContent = `${mb(out.bytesRead)} of ${mb(s.file_bytes)}`;
    }
  }
  progress.hidden = true;
  shown = { summary: s, name };
  pair = null;
  say(`Scored ${opened.pairs.toLocaleString("en")} head pairs × modes of ${name} in ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
  root.dataset.scored = String(mine);
  await draw();
}

function summary(s, name) {
  const rows = [
    ["file", name, "file"],
    ["architecture", `${s.model_type} (${s.architecture} layout, named by ${s.named_by})`, "architecture"],
    ["layers", s.n_layers, "layers"],
    ["heads", s.n_kv_heads !== s.n_heads ? `${s.n_heads} per layer (${s.n_kv_heads} key/value heads)` : `${s.n_heads} per layer`, "heads"],
    ["d_model", s.d_model, "d_model"], ["d_head", s.d_head, "d_head"],
    ["dtype", s.dtypes.join(", "), "dtype"],
    ["read", `${mb(s.bytes_read)} of ${mb(s.file_bytes)}`, "read"],
    ...s.notes.map((n, i) => ["note", n, `note${i}`]),
  ];
  const dl = $("summary");
  dl.replaceChildren(...rows.flatMap(([k, v, field]) => {
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = k;
    dd.textContent = String(v);
    dd.dataset.field = field;
    return [dt, dd];
  }));
  dl.hidden = false;
}

const plotWidth = () => Math.round(root.querySelector(".own-figure .own-plot").clientWidth || root.clientWidth || 640);

async function draw() {
  if (!shown) return;
  const results = $("results");
  results.hidden = false;
  const scoreName = $("score").value, width = plotWidth();
  try {
    for (const mode of MODES) {
      const view = await ask("view", { mode, score: scoreName, width, ...(pair ? { pair } : {}) });
      const fig = root.querySelector(`.own-figure[data-mode="${mode}"]`);
      fig.querySelector('[data-role="plot"]').innerHTML = view.svg;
      fig.dataset.box = JSON.stringify(view.box);
      fig.dataset.n = view.n;
      fig.dataset.heads = view.heads;
      if (mode === "Q") { top(view.top); detail(view); }
    }
  } catch (err) {
    fail(`Could not draw the scores: ${err.message}`);
  }
}

function cells(tr, values) {
  tr.replaceChildren(...values.map((v) => Object.assign(document.createElement("td"), { textContent: v })));
}

function top(rows) {
  const body = $("top").querySelector("tbody");
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    cells(tr, [r.mode, head(r.layer1, r.head1), head(r.layer2, r.head2), fmt(r.frobenius), fmt(r.frobenius / r.frobenius_random, 3),
      fmt(r.product_norm), fmt(r.product_norm / r.product_norm_random, 3), fmt(r.norm_product)]);
    Object.assign(tr.dataset, { mode: r.mode, pair: JSON.stringify([r.layer1, r.head1, r.layer2, r.head2]),
      frobenius: r.frobenius, productNorm: r.product_norm, normProduct: r.norm_product });
    tr.tabIndex = 0;
    return tr;
  }));
}

function detail(view) {
  const p = view.pair;
  const fig = root.querySelector('.own-figure[data-mode="pair"]');
  fig.querySelector('[data-role="plot"]').innerHTML = view.pairSvg;
  $("pair-title").textContent = `writer ${head(p.layer1, p.head1)} → reader ${head(p.layer2, p.head2)}`;
  const body = $("pair-table").querySelector("tbody");
  body.replaceChildren(...MODES.map((m) => {
    const r = p.modes[m], tr = document.createElement("tr");
    cells(tr, [m, fmt(r.frobenius), fmt(r.frobenius_random), fmt(r.product_norm), fmt(r.product_norm_random), fmt(r.norm_product)]);
    Object.assign(tr.dataset, { mode: m, frobenius: r.frobenius, productNorm: r.product_norm, normProduct: r.norm_product });
    return tr;
  }));
  fig.dataset.pair = JSON.stringify([p.layer1, p.head1, p.layer2, p.head2]);
}

async function choosePair(next) {
  pair = next;
  try {
    detail(await ask("view", { mode: "K", score: $("score").value, width: plotWidth(), pair, heatmap: false }));
    root.querySelector('.own-figure[data-mode="pair"]').scrollIntoView({ block: "nearest" });
  } catch (err) {
    fail(`Could not show that pair: ${err.message}`);
  }
}

// A tap on a heatmap: the cell under it, from the plot's box in the drawing's own units.
function cellAt(fig, event) {
  const svg = fig.querySelector("svg");
  if (!svg || !fig.dataset.box) return null;
  const box = JSON.parse(fig.dataset.box), rect = svg.getBoundingClientRect();
  const x = ((event.clientX - rect.left) / rect.width) * box.width, y = ((event.clientY - rect.top) / rect.height) * box.height;
  const n = Number(fig.dataset.n), H = Number(fig.dataset.heads);
  const col = Math.floor(((x - box.x0) / (box.x1 - box.x0)) * n), row = Math.floor(((y - box.y0) / (box.y1 - box.y0)) * n);
  if (row < 0 || col < 0 || row >= n || col >= n) return null;
  // rows: writers from layer 0; columns: readers from layer 1
  const [l1, h1, l2, h2] = [Math.floor(row / H), row % H, Math.floor(col / H) + 1, col % H];
  return l1 < l2 ? [l1, h1, l2, h2] : null;
}

function download(filename, data, type) {
  const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }));
  const a = Object.assign(document.createElement("a"), { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const stem = () => (shown ? shown.name.replace(/\.[^.]*$/, "") : "model");

// ---------- wiring ----------
$("files").addEventListener("change", (event) => {
  const files = [...event.target.files];
  if (files.length) score(files);
});
const drop = $("drop");
drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  const files = [...event.dataTransfer.files];
  if (files.length) score(files);
});
$("cancel").addEventListener("click", () => {
  run++;
  $("progress").hidden = true;
  say("Cancelled. Choose a model's files to score it again, or another model.");
});
$("score").addEventListener("change", () => draw());
$("csv").addEventListener("click", async () => {
  try {
    download(`${stem()}-composition.csv`, (await ask("csv", {})).csv, "text/csv");
  } catch (err) { fail(`Could not write the CSV: ${err.message}`); }
});
for (const mode of MODES) {
  root.querySelector(`.own-figure[data-mode="${mode}"] [data-role="plot"]`).addEventListener("click", (event) => {
    const cell = cellAt(event.currentTarget.closest("figure"), event);
    if (cell) choosePair(cell);
  });
}
$("top").addEventListener("click", (event) => {
  const tr = event.target.closest("tr[data-pair]");
  if (tr) choosePair(JSON.parse(tr.dataset.pair));
});
$("top").addEventListener("keydown", (event) => {
  const tr = event.target.closest("tr[data-pair]");
  if (tr && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); choosePair(JSON.parse(tr.dataset.pair)); }
});
root.addEventListener("click", (event) => {
  const button = event.target.closest("[data-export]");
  if (!button) return;
  const fig = button.closest("figure");
  const title = fig.dataset.mode === "pair" ? `${stem()}: ${$("pair-title").textContent}` : `${stem()}: ${fig.dataset.mode}-composition, ${$("score").value}`;
  try {
    const svg = figureSVG(fig, title, location.href.split("#")[0]);
    const file = `${stem()}-${fig.dataset.mode}`;
    if (button.dataset.export === "svg") download(`${file}.svg`, svg, "image/svg+xml");
    else toPNG(svg).then((png) => download(`${file}.png`, png, "image/png"), (err) => fail(err.message));
  } catch (err) { fail(err.message); }
});
let resized = null, lastWidth = 0;
addEventListener("resize", () => {
  clearTimeout(resized);
  resized = setTimeout(() => { if (shown && Math.abs(plotWidth() - lastWidth) > 20) { lastWidth = plotWidth(); draw(); } }, 300);
});

// For scripts/bench (bench/own_model.py): the worker's wasm heap.
window.headspace = { ...(window.headspace || {}), ownStats: stats };

// Python starts now, so that choosing a file needs no download.
boot().then(() => {
  if (!shown && run === 0) say("Python is ready in this tab. Choose a model's files to score it.");
  root.dataset.ready = "true";
}, (err) => fail(`Python could not start: ${err.message}`));
