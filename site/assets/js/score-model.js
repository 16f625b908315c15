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
// The scores Python computes (headspace.layer_pairs.SCORES) and the CSV column of each one's random baseline.
const SCORES = ["frobenius", "svd_bound", "subspace", "product_norm", "norm_product"];
const BASE = { frobenius: "frobenius_random", svd_bound: "svd_bound_random", subspace: "subspace_random",
  product_norm: "product_norm_random" };
const key = (score) => score.replace(/_(\w)/g, (_, c) => c.toUpperCase()); // data-svd-bound <-> dataset.svdBound
let names = {}; // each score's name for readers, as Python gives it (headspace_site.figure.names)
let random = {}; // what random heads of these shapes score (the page's model), from Python

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
  tip.hidden = true;
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
      values[mode] = view.values;
      if (mode === "Q") { names = view.names; random = view.random; top(view.top); detail(view); }
    }
  } catch (err) {
    fail(`Could not draw the scores: ${err.message}`);
  }
}

function cells(tr, texts) {
  tr.replaceChildren(...texts.map((v) => Object.assign(document.createElement("td"), { textContent: v })));
}

// A score's random baseline for one pair: path size's is the random ratio times the pair's head sizes.
const baseOf = (score, r) => (score === "product_norm" ? random.size_ratio * r.norm_product : random[score]);
// A score as the heatmaps show it: a multiple of random heads' (head sizes, which has no baseline, as it is).
const shownValue = (score, r) => (score in BASE ? r[score] / baseOf(score, r) : r[score]);
const shownText = (score, r) => (score in BASE ? `${fmt(shownValue(score, r), 3)}×` : fmt(r[score]));

function header(table, first) {
  const tr = document.createElement("tr");
  tr.replaceChildren(...[...first, ...SCORES.map((s) => names[s] || s)].map((t) => Object.assign(document.createElement("th"), { textContent: t })));
  table.querySelector("thead").replaceChildren(tr);
}

function top(rows) {
  header($("top"), ["mode", "pair"]);
  const body = $("top").querySelector("tbody");
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    cells(tr, [r.mode, `${head(r.layer1, r.head1)} → ${head(r.layer2, r.head2)}`, ...SCORES.map((s) => shownText(s, r))]);
    tr.dataset.mode = r.mode;
    tr.dataset.pair = JSON.stringify([r.layer1, r.head1, r.layer2, r.head2]);
    for (const s of SCORES) tr.dataset[key(s)] = r[s];
    tr.tabIndex = 0;
    return tr;
  }));
}

// One pair's detail: a row per score, a column per mode; each cell the value and, under it, the
// multiple of random heads' (the figure above draws those).
function detail(view) {
  const p = view.pair;
  const fig = root.querySelector('.own-figure[data-mode="pair"]');
  fig.querySelector('[data-role="plot"]').innerHTML = view.pairSvg;
  $("pair-title").textContent = `writer ${head(p.layer1, p.head1)} → reader ${head(p.layer2, p.head2)}`;
  const headRow = document.createElement("tr");
  headRow.replaceChildren(...["score", ...MODES].map((t) => Object.assign(document.createElement("th"), { textContent: t })));
  $("pair-table").querySelector("thead").replaceChildren(headRow);
  $("pair-table").querySelector("tbody").replaceChildren(...SCORES.map((s) => {
    const tr = document.createElement("tr");
    tr.dataset.score = s;
    tr.append(Object.assign(document.createElement("th"), { textContent: names[s] || s, scope: "row" }));
    for (const m of MODES) {
      const r = p.modes[m], td = document.createElement("td");
      td.append(fmt(r[s]));
      if (s in BASE) td.append(Object.assign(document.createElement("small"), { textContent: `${fmt(shownValue(s, r), 3)}×` }));
      Object.assign(td.dataset, { mode: m, value: r[s] });
      tr.append(td);
    }
    return tr;
  }));
  fig.dataset.pair = JSON.stringify([p.layer1, p.head1, p.layer2, p.head2]);
}

// ---------- the values under a pointer or a finger: a heatmap's cell, a table's row ----------
const values = {}; // per mode: {score: [n * n]} as the heatmap lays the pairs out (Python's view)
const tip = Object.assign(document.createElement("div"), { className: "own-tip", hidden: true });
// A screen without hover (a phone) shows values on a tap only: a row scrolled under a resting
// pointer is not a reader pointing at it.
const canHover = matchMedia("(hover: hover)").matches;
tip.setAttribute("role", "status");
root.append(tip);

function pairValues(mode, cell) {
  const fig = root.querySelector(`.own-figure[data-mode="${mode}"]`);
  const n = Number(fig.dataset.n), H = Number(fig.dataset.heads), [l1, h1, l2, h2] = cell;
  const i = (l1 * H + h1) * n + (l2 - 1) * H + h2, v = values[mode];
  if (!v) return null;
  return Object.fromEntries(SCORES.map((s) => [s, v[s][i]]));
}

// Show one pair's values beside (x, y), page coordinates relative to the section.
function showTip(mode, cell, r, x, y) {
  if (!r) { tip.hidden = true; return; }
  const [l1, h1, l2, h2] = cell;
  const lines = [`${head(l1, h1)} → ${head(l2, h2)}, ${mode}-composition`,
    ...SCORES.map((s) => `${names[s] || s} ${fmt(r[s])}${s in BASE ? ` (${fmt(shownValue(s, r), 3)}× random)` : ""}`)];
  tip.replaceChildren(...lines.map((t, k) => Object.assign(document.createElement(k ? "span" : "strong"), { textContent: t })));
  Object.assign(tip.dataset, { mode, pair: JSON.stringify(cell) });
  tip.hidden = false;
  const box = root.getBoundingClientRect(), w = tip.offsetWidth, h = tip.offsetHeight;
  const left = Math.max(4, Math.min(x + 14, box.width - w - 4));
  tip.style.left = `${left}px`;
  tip.style.top = `${y + 16 + h > box.height ? Math.max(0, y - h - 12) : y + 16}px`;
}

function tipAtPointer(fig, event) {
  const cell = cellAt(fig, event);
  if (!cell) { tip.hidden = true; return null; }
  const box = root.getBoundingClientRect();
  showTip(fig.dataset.mode, cell, pairValues(fig.dataset.mode, cell), event.clientX - box.left, event.clientY - box.top);
  return cell;
}

function tipAtRow(tr) {
  const cell = JSON.parse(tr.dataset.pair), box = root.getBoundingClientRect(), row = tr.getBoundingClientRect();
  const r = Object.fromEntries(SCORES.map((s) => [s, Number(tr.dataset[key(s)])]));
  showTip(tr.dataset.mode, cell, r, row.left - box.left + 24, row.bottom - box.top - 8);
}

// A pair chosen: its detail below. From the table (just above the detail) the page scrolls to it; from
// a heatmap it stays, so that the values shown at the cell stay in view.
async function choosePair(next, scroll = false) {
  pair = next;
  try {
    detail(await ask("view", { mode: "K", score: $("score").value, width: plotWidth(), pair, heatmap: false }));
    if (scroll) root.querySelector('.own-figure[data-mode="pair"]').scrollIntoView({ block: "nearest" });
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
  const plot = root.querySelector(`.own-figure[data-mode="${mode}"] [data-role="plot"]`);
  // a mouse or pen shows the values under it; a finger shows them where it taps (the click below)
  plot.addEventListener("pointermove", (event) => {
    if (canHover && event.pointerType !== "touch") tipAtPointer(event.currentTarget.closest("figure"), event);
  });
  plot.addEventListener("pointerleave", (event) => { if (event.pointerType !== "touch") tip.hidden = true; });
  plot.addEventListener("click", (event) => {
    const cell = tipAtPointer(event.currentTarget.closest("figure"), event);
    if (cell) choosePair(cell);
  });
}
$("top").addEventListener("click", (event) => {
  const tr = event.target.closest("tr[data-pair]");
  if (tr) { tipAtRow(tr); choosePair(JSON.parse(tr.dataset.pair), true); }
});
$("top").addEventListener("pointerover", (event) => {
  const tr = event.target.closest("tr[data-pair]");
  if (tr && canHover && event.pointerType !== "touch") tipAtRow(tr);
});
$("top").addEventListener("pointerleave", (event) => { if (event.pointerType !== "touch") tip.hidden = true; });
$("top").addEventListener("focusin", (event) => {
  const tr = event.target.closest("tr[data-pair]");
  if (tr) tipAtRow(tr);
});
$("top").addEventListener("focusout", () => { tip.hidden = true; });
$("top").addEventListener("keydown", (event) => {
  const tr = event.target.closest("tr[data-pair]");
  if (tr && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); choosePair(JSON.parse(tr.dataset.pair), true); }
});
// a tap elsewhere, or Escape, puts the values away
document.addEventListener("pointerdown", (event) => {
  if (!event.target.closest(".own-plot, [data-role=top], .own-tip")) tip.hidden = true;
});
document.addEventListener("keydown", (event) => { if (event.key === "Escape") tip.hidden = true; });
root.addEventListener("click", (event) => {
  const button = event.target.closest("[data-export]");
  if (!button) return;
  const fig = button.closest("figure");
  const score = $("score").selectedOptions[0].textContent;
  const title = fig.dataset.mode === "pair" ? `${stem()}: ${$("pair-title").textContent}` : `${stem()}: ${fig.dataset.mode}-composition, ${score}`;
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
