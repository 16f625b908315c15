// Redraw a plotly figure's moving parts in place, within a frame.
//
// Plotly.react rebuilds its internal state and re-measures the page even for a
// two-point figure, which takes longer than a frame; a dragged slider needs a new
// picture every frame. Between two figures of one demo, usually only data moves: points,
// line paths, bar ends and their outside labels, heatmap colours, a colour bar's
// listed ticks for a new range, the text of a legend entry, an annotation (and its colour), an axis's
// listed tick labels or the title. patchFigure writes exactly those into the SVG that
// plotly drew, using plotly's own axes to place them, so the picture is the one
// plotly would draw. Anything else (an axis range, a new trace, a shape) returns
// false and the caller draws with plotly. Plotly's internal state (hover
// values) is then one figure behind: the caller redraws with plotly when
// something reads it (figure/draw.js, settle).
//
// Relies on plotly.js-cartesian 3.1.0's SVG structure (pinned in package-lock.json):
// trace groups carry their calcdata as d3's __data__; tests/browser/test_patch.py
// compares patched frames with plotly's own drawing of the same figure.

// Why the last frame needed plotly (for tests and benchmarks): the check that refused.
export let refusal = "";
const refuse = (why) => { refusal = why; return null; };

// Two values of a figure (JSON's kinds) equal entry by entry: writing both out as JSON to compare
// them allocated two long strings for every heatmap on every move.
function same(a, b) {
  if (a === b) return true;
  if (!a || !b || typeof a !== "object" || typeof b !== "object" || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((v, k) => same(v, b[k]));
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}

// Keys a frame may change, per trace type; a change to any other key needs plotly.
const MOVABLE = {
  scatter: ["x", "y", "name", "customdata", "hovertext", "text", "marker", "line"],
  bar: ["x", "y", "customdata", "hovertext", "text", "marker"],
  heatmap: ["z", "customdata", "hovertext", "text", "zmin", "zmax", "colorbar"],
};

const axisOf = (layout, id) => layout[id.replace(/^([xy])/, "$1axis")];
const finite = (v) => typeof v === "number" && Number.isFinite(v);
const plainText = (t) => typeof t === "string" && !/[<&]/.test(t);
const f2 = (v) => Math.round(v * 100) / 100;

// The plan for one trace, or null when plotly must draw. Nothing is written
// until every trace has a plan, so a refused frame leaves the SVG untouched.
function planTrace(gd, groups, i, before, after) {
  const type = after.type || "scatter";
  if ((before.type || "scatter") !== type || !MOVABLE[type]) return refuse("trace type");
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  keys.delete("uid"); // plotly names each trace it draws
  const changed = [...keys].filter((k) => !same(before[k], after[k]));
  if (!changed.length) return () => {};
  if (changed.some((k) => !MOVABLE[type].includes(k))) return refuse("a key plotly must draw changed");
  const full = gd._fullData[i];
  const group = groups.get(i);
  if (!full || !group || full.visible !== true) return refuse("trace not drawn");
  const xa = axisOf(gd._fullLayout, full.xaxis || "x"), ya = axisOf(gd._fullLayout, full.yaxis || "y");
  if (!xa || !ya) return refuse("axis missing");
  // An autoranged axis would move with the data: plotly must redraw the axis.
  const moved = (k) => changed.includes(k);
  if (type !== "heatmap" && ((moved("x") && xa.autorange) || (moved("y") && ya.autorange))) return refuse("data moved on an autoranged axis");
  if (type === "scatter") return planScatter(gd, group, before, after, full, xa, ya, changed);
  if (type === "bar") return planBar(group, before, after, full, xa, ya, changed);
  return planHeatmap(gd, group, before, after, full, xa, ya, changed);
}

function planScatter(gd, group, before, after, full, xa, ya, changed) {
  const mode = full.mode || "";
  if (changed.includes("text") && mode.includes("text")) return refuse("scatter text changed");
  if (changed.includes("marker") && !sameExceptColor(before.marker, after.marker)) return refuse("marker style changed");
  // A line may change its colour and width (a line per score, thicker for a larger one) where no
  // legend entry shows its look; anything else about a line is plotly's to draw.
  const stroke = changed.includes("line") ? lineLook(before.line, after.line) : null;
  if (changed.includes("line") && (!stroke || full.showlegend !== false || !mode.includes("lines"))) return refuse("line style changed");
  const x = after.x || [], y = after.y || [];
  const n = x.length;
  // A gap (null) splits plotly's line; the gaps must stay where they were.
  const gap = (k) => !finite(x[k]) || !finite(y[k]);
  const wasGap = (k) => !finite((before.x || [])[k]) || !finite((before.y || [])[k]);
  if (y.length !== n || (before.x || []).length !== n || x.some((_, k) => gap(k) !== wasGap(k))) return refuse("gaps moved or length changed");
  const runs = []; // the unbroken stretches, as plotly draws them
  for (let k = 0; k < n; k++) if (!gap(k)) (k && !gap(k - 1) ? runs[runs.length - 1] : runs[runs.push([]) - 1]).push(k);
  const kept = runs.flat();
  const points = mode.includes("markers") ? group.querySelectorAll(".points > path.point") : [];
  if (points.length !== (mode.includes("markers") ? kept.length : 0)) return refuse("point count");
  const lines = group.querySelectorAll(".lines > path.js-line");
  const segments = runs.filter((r) => r.length > 1);
  if (mode.includes("lines") && (lines.length !== segments.length || (full.line && full.line.shape !== "linear"))) return refuse("line shape");
  const fills = group.querySelectorAll(".fills > path.js-fill");
  if (!["none", "toself"].includes(full.fill || "none") || fills.length > 1 || (fills.length && runs.length > 1)) return refuse("fill kind");
  const colors = changed.includes("marker") ? colorList(after.marker, n) : null;
  if (changed.includes("marker") && !colors) return refuse("marker colours from a scale");
  const legend = changed.includes("name") ? legendText(gd, full.index, after.name) : () => {};
  if (!legend) return refuse("legend entry");
  const dots = points.length ? oneShape(group, points, colors) : null;
  return () => {
    const at = (k) => `${f2(xa.d2p(x[k]))},${f2(ya.d2p(y[k]))}`;
    if (dots) {
      dots.path.setAttribute("d", kept.map((k) => dots.shape(xa.d2p(x[k]), ya.d2p(y[k]))).join(""));
      if (colors) dots.path.style.fill = colors[0];
    } else {
      unmerge(group);
      points.forEach((p, j) => {
        p.setAttribute("transform", `translate(${at(kept[j])})`);
        if (colors) p.style.fill = colors[kept[j]];
      });
    }
    segments.forEach((run, j) => { if (lines[j]) lines[j].setAttribute("d", "M" + run.map(at).join("L")); });
    if (stroke) lines.forEach((line) => Object.assign(line.style, stroke));
    if (fills.length) fills[0].setAttribute("d", "M" + kept.map(at).join("L") + "Z");
    legend();
  };
}

// ---------- markers as one path ----------
// Every marker plotly draws is an element placed by its own transform, and on a phone's CPU
// restyling and re-compositing a few hundred of them took most of a frame. Opaque markers of one
// symbol, size and colour without an outline look the same drawn as one path, so a patch hides
// plotly's points and writes a single path of dots beside them; plotly's own points
// come back with restore() before plotly draws again. Anything else keeps plotly's points.
// What a patch draws in place of plotly's own marks carries this class; plotly's marks it stands
// for are its previous sibling, hidden meanwhile.
const OURS = "drawn-in-place";
const merged = (group) => group.querySelector(`:scope > path.${OURS}`);

/** The merged path of ``group``'s markers (made on first use) and its symbol, or null. */
function oneShape(group, points, colors) {
  if (colors && colors.some((c) => c !== colors[0])) return null;
  const path = merged(group);
  if (path) return { path, shape: shapes.get(path) };
  const [d, style] = [points[0].getAttribute("d"), points[0].getAttribute("style") || ""];
  const look = points[0].style;
  if (![look.opacity, look.fillOpacity].every((v) => v === "" || v === "1")) return null;
  if (!(look.stroke === "" || look.stroke === "none" || /^0(px)?$/.test(look.strokeWidth))) return null;
  for (const p of points) if (p.getAttribute("d") !== d || (p.getAttribute("style") || "") !== style) return null;
  const shape = symbolAt(d);
  if (!shape) return null;
  const made = document.createElementNS("http://www.w3.org/2000/svg", "path");
  made.setAttribute("class", OURS);
  made.setAttribute("style", style);
  shapes.set(made, shape);
  points[0].parentNode.setAttribute("display", "none");
  points[0].parentNode.after(made);
  return { path: made, shape };
}
const shapes = new WeakMap(); // merged path -> (x, y) => its symbol's path data at (x, y)

function unmerge(group) {
  const path = merged(group);
  if (path) putBack(path);
}
function putBack(ours) {
  ours.previousElementSibling.removeAttribute("display");
  ours.remove();
}

/** Plotly's own marks, wherever a patch drew in their place: call before plotly draws ``gd`` again. */
export function restore(gd) {
  for (const ours of gd.querySelectorAll(`.${OURS}`)) putBack(ours);
}

// A symbol's path data as plotly writes it about (0, 0), in absolute commands, moved to (x, y):
// the number of coordinates each command takes, and which of them are x (0) or y (1) or neither.
const AXES = { M: [0, 1], L: [0, 1], H: [0], V: [1], Z: [], C: [0, 1, 0, 1, 0, 1], Q: [0, 1, 0, 1], A: [2, 2, 2, 2, 2, 0, 1] };
function symbolAt(d) {
  const parts = []; // strings, and [axis, value] pairs to be moved
  let axes = null, k = 0;
  for (const token of d.match(/[a-z]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/gi) || []) {
    if (/^[a-z]$/i.test(token)) {
      if (axes && k % (axes.length || 1)) return null; // a command cut short
      axes = AXES[token]; // a relative command, or one plotly's symbols do not use: null
      if (!axes) return null;
      parts.push(token);
      k = 0;
      continue;
    }
    if (!axes || !axes.length) return null;
    if (k) parts.push(" "); // repeated arguments (L x,y x,y) go on as the same command
    const axis = axes[k++ % axes.length];
    parts.push(axis === 2 ? token : [axis, Number(token)]);
  }
  if (!axes || k % (axes.length || 1)) return null;
  return (x, y) => parts.map((p) => (typeof p === "string" ? p : f2(p[1] + (p[0] ? y : x)))).join("");
}

// Vertical bars change their top, horizontal ones their right end; text outside a bar moves with it.
// plotly draws every bar as "M x0,y0 V y1 H x1 V y0 Z" (for a horizontal bar x1 is its end, else y1).
const BAR_PATH = /^M([-\d.e]+),([-\d.e]+)V([-\d.e]+)H([-\d.e]+)V([-\d.e]+)Z$/;
const TRANSLATE = /^translate\(([-\d.e]+),\s*([-\d.e]+)\)$/;
const TEXTPAD = 3; // plotly's gap between a bar's end and its outside label, when the bar is thicker than 2 gaps
function planBar(group, before, after, full, xa, ya, changed) {
  if (changed.includes("marker") && !sameExceptColor(before.marker, after.marker)) return refuse("bar style changed");
  const horizontal = full.orientation === "h";
  const values = horizontal ? after.x : after.y, old = horizontal ? before.x : before.y;
  if (changed.includes(horizontal ? "y" : "x") || !values || !old || values.length !== old.length) return refuse("bar categories changed");
  if (!values.every(finite) || !old.every(finite)) return refuse("bar empty");
  if (full.base !== undefined && full.base !== null) return refuse("bar base");
  const bars = [...group.querySelectorAll(".points > g.point")].map((g) => [g, g.querySelector("path"), g.querySelector("text.bartext")]);
  if (bars.length !== values.length || bars.some(([, p]) => !p || !BAR_PATH.test(p.getAttribute("d")))) return refuse("bar paths");
  const labelled = bars.some(([, , label]) => label);
  // An outside label sits TEXTPAD beyond the bar's end, centred (text-anchor middle) on its side.
  if (labelled && (full.textposition !== "outside" || full.textangle !== "auto" && full.textangle !== 0
      || bars.some(([, , label]) => !label || label.getAttribute("text-anchor") !== "middle"
        || !TRANSLATE.test(label.getAttribute("transform") || "")))) return refuse("bar label placement");
  const texts = changed.includes("text") ? after.text : null;
  if (texts && (!labelled || !Array.isArray(texts) || texts.length !== values.length || !texts.every(plainText))) return refuse("bar text");
  const colors = changed.includes("marker") ? colorList(after.marker, values.length) : null;
  if (changed.includes("marker") && !colors) return refuse("bar colours from a scale");
  const axis = horizontal ? xa : ya;
  // With cliponaxis false plotly hides a label whose bar ends outside the value axis's range.
  const lo = Math.min(...axis.range), hi = Math.max(...axis.range);
  const hides = full.cliponaxis === false;
  const up = Math.sign(axis.d2p(1) - axis.d2p(0));
  return () => {
    const moves = bars.map(([, path], k) => {
      const [, x0, y0, y1, x1] = BAR_PATH.exec(path.getAttribute("d")).map(Number);
      const [base, was] = horizontal ? [x0, x1] : [y0, y1];
      const end = f2(axis.d2p(values[k]));
      path.setAttribute("d", horizontal ? `M${x0},${y0}V${y1}H${end}V${y0}Z` : `M${x0},${y0}V${end}H${x1}V${y0}Z`);
      if (colors) path.style.fill = colors[k];
      const pad = Math.abs(horizontal ? y1 - y0 : x1 - x0) > 2 * TEXTPAD ? TEXTPAD : 0;
      return { base, was, end, pad };
    });
    if (!labelled) return;
    // A label's centre is its bar's end plus, away from the base, the gap and half its extent.
    bars.forEach(([, , label]) => label.removeAttribute("display"));
    const oldSize = bars.map(([, , label]) => extent(label, horizontal));
    if (texts) bars.forEach(([, , label], k) => { label.textContent = texts[k]; label.setAttribute("data-unformatted", texts[k]); });
    const newSize = texts ? bars.map(([, , label]) => extent(label, horizontal)) : oldSize;
    bars.forEach(([, , label], k) => {
      const { base, was, end, pad } = moves[k];
      // A bar of height 0 keeps its label on the side a positive value's would be.
      const centre = (at, size) => at + (Math.sign(at - base) || up) * (pad + size / 2);
      const shift = centre(end, newSize[k]) - centre(was, oldSize[k]);
      const [, tx, ty] = TRANSLATE.exec(label.getAttribute("transform")).map(Number);
      label.setAttribute("transform", horizontal ? `translate(${tx + shift},${ty})` : `translate(${tx},${ty + shift})`);
      if (hides && !(values[k] >= lo && values[k] <= hi)) label.setAttribute("display", "none");
    });
  };
}

// Measuring an SVG text lays the page out in the middle of a move. Across a
// vertical bar a one-line label's extent is its font's line height, whatever it says: measured once
// per font. Along a horizontal bar it is the text's advance, which a canvas measures without layout.
const lineHeights = new Map(); // a label's inline style (plotly sets its font there) -> its height
const ruler = document.createElement("canvas").getContext("2d");
function extent(label, horizontal) {
  if (horizontal) {
    const look = label.style;
    ruler.font = `${look.fontStyle || "normal"} ${look.fontWeight || "normal"} ${look.fontSize} ${look.fontFamily}`;
    return ruler.measureText(label.textContent).width;
  }
  const key = label.getAttribute("style");
  if (!lineHeights.has(key)) lineHeights.set(key, label.getBBox().height);
  return lineHeights.get(key);
}

// A heatmap's cells are one image: repaint it from z through the trace's colour scale, cell by
// cell into a canvas the size of plotly's image box, with the trace's gaps between cells.
function planHeatmap(gd, group, before, after, full, xa, ya, changed) {
  if (changed.includes("text") && (full.texttemplate || (full.text && full.textposition))) return refuse("heatmap text");
  // A colour bar whose ticks the figure lists (tickvals) gets its labels rewritten and moved;
  // plotly's own ticks for a new range would be plotly's to choose.
  const ticksOnly = (c) => ({ ...(c || {}), tickvals: 0, ticktext: 0 });
  if (changed.includes("colorbar") && !same(ticksOnly(before.colorbar), ticksOnly(after.colorbar))) return refuse("colour bar style");
  const barMoved = ["zmin", "zmax", "colorbar"].some((k) => changed.includes(k));
  const barStep = barMoved && full.showscale ? planColorbar(gd, before, after, full) : () => {};
  if (!barStep) return null;
  if (full.zsmooth) return refuse("heatmap smoothing");
  const image = group.querySelector("image");
  const z = after.z;
  if (!image || !Array.isArray(z) || !z.length || !Array.isArray(z[0]) || !same(shape(before.z), shape(z))) return refuse("heatmap shape");
  const rows = z.length, cols = z[0].length;
  let lo = after.zmin, hi = after.zmax;
  if (!finite(lo) || !finite(hi)) {
    if (full.showscale) return refuse("autoscaled colour bar"); // its ticks would change
    const all = z.flat().filter(finite);
    if (!all.length) return refuse("heatmap empty");
    lo = finite(lo) ? lo : Math.min(...all);
    hi = finite(hi) ? hi : Math.max(...all);
  }
  const scale = full.reversescale ? [...full.colorscale].reverse().map(([t, c]) => [1 - t, c]) : full.colorscale;
  const stops = (scale || []).map(([t, c]) => [t, rgba(c)]);
  if (stops.length < 2 || stops.some(([, c]) => !c)) return refuse("colour scale");
  const cd = group.__data__ && group.__data__[0];
  if (!cd || !cd.x || !cd.y || cd.x.length !== cols + 1 || cd.y.length !== rows + 1) return refuse("heatmap cells");
  // A cell's colour, written into ``out`` at ``at`` (RGBA); a missing cell is transparent.
  const paint = (v, out, at) => (finite(v) ? colorAt(stops, hi === lo ? 0.5 : (v - lo) / (hi - lo), out, at) : out.fill(0, at, at + 4));
  // Without gaps plotly draws one pixel per cell and lets the browser stretch the image
  // (image-rendering: pixelated). The same pixels on a canvas stretched over the image's box are the
  // same picture, without encoding a PNG for the image and decoding it again on every move.
  if (/image-rendering/.test(image.getAttribute("style") || "")) {
    const flipX = xa.c2p(cd.x[cols]) < xa.c2p(cd.x[0]), flipY = ya.c2p(cd.y[rows]) < ya.c2p(cd.y[0]);
    return () => {
      const ctx = canvasInPlace(image, cols, rows), pixels = ctx.createImageData(cols, rows);
      for (let r = 0; r < rows; r++) {
        const row = flipY ? rows - 1 - r : r;
        for (let c = 0; c < cols; c++) paint(z[r][c], pixels.data, (row * cols + (flipX ? cols - 1 - c : c)) * 4);
      }
      ctx.putImageData(pixels, 0, 0);
      barStep();
    };
  }
  // Translucent stops: plotly's image and a canvas of cells blend them differently.
  if (stops.some(([, c]) => c[3] < 255)) return refuse("translucent colour scale");
  const width = Math.round(Number(image.getAttribute("width"))), height = Math.round(Number(image.getAttribute("height")));
  // The cells' edges, as plotly computed them (calcdata), in pixels from the image's corner.
  if (!(width > 0 && height > 0)) return refuse("heatmap cells");
  const left = Number(image.getAttribute("x")), top = Number(image.getAttribute("y"));
  const xs = cd.x.map((v) => Math.round(xa.c2p(v) - left)), ys = cd.y.map((v) => Math.round(ya.c2p(v) - top));
  const xgap = full.xgap || 0, ygap = full.ygap || 0;
  const cell = [0, 0, 0, 0];
  return () => {
    const ctx = canvasInPlace(image, width, height);
    ctx.clearRect(0, 0, width, height);
    for (let r = 0; r < rows; r++) {
      const [y0, y1] = [ys[r], ys[r + 1]].sort((a, b) => a - b);
      for (let c = 0; c < cols; c++) {
        if (!finite(z[r][c])) continue; // transparent, as plotly leaves a missing cell
        const [R, G, B, A] = paint(z[r][c], cell, 0);
        ctx.fillStyle = `rgba(${R},${G},${B},${A / 255})`;
        const [x0, x1] = [xs[c], xs[c + 1]].sort((a, b) => a - b);
        ctx.fillRect(x0 + xgap / 2, y0 + ygap / 2, x1 - x0 - xgap, y1 - y0 - ygap);
      }
    }
    barStep();
  };
}

// A heatmap's new cells are drawn on a canvas shown in its image's place (in a foreignObject at
// the same box, plotly's image hidden) until plotly draws again: encoding a PNG for the image's
// href took most of a move on a phone. The canvas has ``width`` x ``height`` pixels, stretched over
// the box as plotly's image is (a pixelated image: one pixel per cell).
function canvasInPlace(image, width, height) {
  let holder = image.nextElementSibling;
  if (!holder || !holder.classList.contains(OURS)) {
    holder = document.createElementNS(image.namespaceURI, "foreignObject");
    for (const name of ["x", "y", "width", "height", "style"]) if (image.hasAttribute(name)) holder.setAttribute(name, image.getAttribute(name));
    holder.classList.add(OURS);
    const canvas = holder.appendChild(document.createElement("canvas"));
    Object.assign(canvas.style, { display: "block", width: "100%", height: "100%" });
    image.setAttribute("display", "none");
    image.after(holder);
  }
  const canvas = holder.firstChild;
  if (canvas.width !== width || canvas.height !== height) Object.assign(canvas, { width, height });
  return canvas.getContext("2d");
}

// A colour bar's tick labels for a new range. plotly places tick value v at A + B f along the bar,
// f = (v - zmin) / (zmax - zmin): A and B are read off the ticks it drew (checked on every one).
// A label of another width would move the bar's title and the plot's right margin: plotly's.
function planColorbar(gd, before, after, full) {
  const [b, a] = [before.colorbar || {}, after.colorbar || {}];
  const frac = (t, v) => (v - t.zmin) / (t.zmax - t.zmin);
  const ok = (t, c) => finite(t.zmin) && finite(t.zmax) && t.zmin < t.zmax && Array.isArray(c.tickvals)
    && Array.isArray(c.ticktext) && c.ticktext.length === c.tickvals.length && c.ticktext.every(plainText)
    && c.tickvals.every((v) => finite(v) && v >= t.zmin && v <= t.zmax);
  if (!ok(before, b) || !ok(after, a) || a.tickvals.length !== b.tickvals.length || b.tickvals.length < 2) return refuse("colour bar ticks");
  const cb = gd.querySelector(`.infolayer g.colorbar.cb${full.uid}`);
  const labels = cb ? [...cb.querySelectorAll("g.cbaxis > g > text")] : [];
  if (labels.length !== b.tickvals.length) return refuse("colour bar labels");
  const ys = labels.map((t) => TRANSLATE.exec(t.getAttribute("transform") || ""));
  if (ys.some((m) => !m)) return refuse("colour bar label placement");
  // plotly draws the ticks in the order of their values
  const order = b.tickvals.map((v, k) => [v, k]).sort((p, q) => p[0] - q[0]).map(([, k]) => k);
  if (labels.some((t, j) => t.textContent !== b.ticktext[order[j]])) return refuse("colour bar labels");
  const f = order.map((k) => frac(before, b.tickvals[k])), y = ys.map((m) => Number(m[2]));
  const [j0, j1] = [0, labels.length - 1];
  if (f[j1] === f[j0]) return refuse("colour bar ticks");
  const B = (y[j1] - y[j0]) / (f[j1] - f[j0]), A = y[j0] - B * f[j0];
  if (f.some((v, j) => Math.abs(A + B * v - y[j]) > 0.02)) return refuse("colour bar scale");
  const next = a.tickvals.map((v, k) => [v, k]).sort((p, q) => p[0] - q[0]).map(([, k]) => k);
  // Same widths? Write the new labels, measure, put the old back (no paint in between).
  const axis = cb.querySelector("g.cbaxis");
  const width = () => axis.getBBox().width;
  const was = width();
  labels.forEach((t, j) => { t.textContent = a.ticktext[next[j]]; });
  const now = width();
  labels.forEach((t, j) => { t.textContent = b.ticktext[order[j]]; });
  if (Math.abs(now - was) > 0.01) return refuse("colour bar label width");
  return () => labels.forEach((t, j) => {
    const k = next[j];
    t.textContent = a.ticktext[k];
    t.setAttribute("data-unformatted", a.ticktext[k]);
    t.setAttribute("transform", `translate(${ys[j][1]},${f2(A + B * frac(after, a.tickvals[k]))})`);
  });
}

const shape = (z) => (Array.isArray(z) ? [z.length, Array.isArray(z[0]) ? z[0].length : 0] : null);

/** The stroke style of line ``after`` where it differs from ``before`` only in colour and width, or null. */
function lineLook(before = {}, after = {}) {
  const strip = (l) => ({ ...(l || {}), color: undefined, width: undefined });
  if (!same(strip(before), strip(after)) || typeof after.color !== "string" || !finite(after.width)) return null;
  return { stroke: after.color, strokeWidth: `${after.width}px` };
}

function sameExceptColor(a = {}, b = {}) {
  const strip = (m) => ({ ...(m || {}), color: undefined });
  return same(strip(a), strip(b));
}

// One CSS colour per point, or null for colours plotly maps through a colour scale.
function colorList(marker, n) {
  const c = marker && marker.color;
  if (typeof c === "string") return Array(n).fill(c);
  if (Array.isArray(c) && c.length === n && c.every((v) => typeof v === "string")) return c;
  return null;
}

function legendText(gd, index, name) {
  if (!plainText(String(name))) return null;
  const item = [...gd.querySelectorAll(".legend .traces")].find((t) => t.__data__ && t.__data__[0]
    && t.__data__[0].trace && t.__data__[0].trace.index === index);
  if (!item) return gd._fullData[index].showlegend === false ? () => {} : null;
  const text = item.querySelector("text.legendtext");
  return text ? () => { text.textContent = String(name); } : null;
}

// ---------- colours ----------
// Python writes every colour of a figure as #rrggbb or rgba() (headspace.figure.colour); plotly's
// own default scales are rgb().
const parsed = new Map();
function rgba(color) {
  if (parsed.has(color)) return parsed.get(color);
  let out = null;
  let m = /^#([0-9a-f]{6})$/i.exec(color);
  if (m) out = [0, 2, 4].map((k) => parseInt(m[1].slice(k, k + 2), 16)).concat(255);
  else if ((m = /^rgba?\(([^)]+)\)$/.exec(color))) {
    const v = m[1].split(",").map(Number);
    out = [v[0], v[1], v[2], Math.round(255 * (v.length > 3 ? v[3] : 1))];
  }
  parsed.set(color, out);
  return out;
}

/** The colour at ``t`` (0 to 1) along ``stops``, written as RGBA into ``out`` from ``at``; returns ``out``. */
function colorAt(stops, t, out, at) {
  t = Math.min(1, Math.max(0, t));
  let k = 1;
  while (k < stops.length - 1 && stops[k][0] < t) k++;
  const [t0, c0] = stops[k - 1], [t1, c1] = stops[k];
  const u = t1 === t0 ? 0 : (t - t0) / (t1 - t0);
  for (let j = 0; j < 4; j++) out[at + j] = Math.round(c0[j] + (c1[j] - c0[j]) * u);
  return out;
}

// ---------- text with simple markup ----------
// plotly turns a text's markup (<br>, <b>, <span style=...>) into tspans; each piece of text between
// tags becomes one text node, in order. When two texts have the same tags and only the pieces
// differ, the new pieces go into those text nodes, and the lines and styles stay as plotly made them.
const pieces = (t) => String(t).split(/(<[^>]*>)/);

/** A step writing text ``after`` into ``node`` (plotly drew ``before`` there), or null. */
function textStep(node, before, after) {
  if (!node) return null;
  if (plainText(before) && plainText(after)) {
    // one text node's words changed in place: cheaper to lay out than a new node
    const only = node.childNodes.length === 1 && node.firstChild.nodeType === Node.TEXT_NODE && node.firstChild;
    return only ? () => { only.data = after; } : () => { node.textContent = after; };
  }
  const [a, b] = [pieces(before), pieces(after)];
  const tags = (p) => p.filter((_, k) => k % 2);
  if (a.length !== b.length || !same(tags(a), tags(b))) return null;
  if (!tags(a).every((tag) => /^<(br|\/?(b|i|sub|sup|span)( style='[^'<>&]*'| style="[^"<>&]*")?)\s*\/?>$/i.test(tag))) return null;
  const texts = (p) => p.filter((_, k) => k % 2 === 0);
  const [old, now] = [texts(a), texts(b)];
  // the pieces that plotly drew as text nodes: the non-empty ones, empty in neither text
  if (old.some((t, k) => !t !== !now[k]) || !now.every((t) => !/[<&]/.test(t))) return null;
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  const drawn = [];
  while (walker.nextNode()) if (walker.currentNode.data) drawn.push(walker.currentNode);
  const kept = old.filter((t) => t), written = now.filter((t) => t);
  if (drawn.length !== kept.length || drawn.some((n, k) => n.data !== kept[k])) return null;
  return () => drawn.forEach((n, k) => { n.data = written[k]; });
}

/** A step writing listed tick labels ``after`` (plotly drew ``before``) into axis ``key``'s ticks, or null.
 * plotly draws one g.<id>tick per shown tick (g.xtick, g.y2tick), its value in the node's data. */
function tickStep(gd, key, before, after) {
  const values = (gd._fullLayout[key] || {}).tickvals;
  if (!Array.isArray(values) || !Array.isArray(before) || !Array.isArray(after) || after.length !== values.length
      || !before.concat(after).every(plainText)) return null;
  const id = key.replace("axis", "");
  const labels = [];
  for (const g of gd.querySelectorAll(`g.${id}tick`)) {
    const k = values.indexOf(g.__data__ && g.__data__.x);
    const text = g.querySelector("text");
    if (k < 0 || !text || text.textContent !== before[k]) return null; // not the tick it seems
    labels.push([text, after[k]]);
  }
  return () => labels.forEach(([text, label]) => { text.textContent = label; });
}

// ---------- the layout: text may change, nothing else ----------
// Plotly writes into the layout it is given (computed ranges, defaults), so a frame's
// layout is compared through a snapshot taken before plotly sees it.
const titleOf = (l) => (l.title && typeof l.title === "object" ? l.title.text : l.title);

// An annotation at a point of the data may move with it (its text and arrow keep their offsets).
const placed = (a) => finite(a.x) && finite(a.y) && !/paper|domain/.test(`${a.xref || "x"} ${a.yref || "y"}`);

/** What of ``layout`` a frame may not change (JSON), and the texts it may. */
export function layoutSnapshot(layout) {
  const notes = layout.annotations || [];
  const axes = Object.keys(layout).filter((k) => /^[xy]axis\d*$/.test(k) && layout[k] && typeof layout[k] === "object");
  const axisTitle = (ax) => (ax.title && typeof ax.title === "object" ? ax.title.text : ax.title);
  // An axis's listed tick labels (ticktext at fixed tickvals) may change: a role moves to another head.
  const listed = (ax) => Array.isArray(ax.tickvals) && Array.isArray(ax.ticktext) && ax.ticktext.length === ax.tickvals.length;
  const untitled = Object.fromEntries(axes.map((k) => [k, { ...layout[k],
    title: layout[k].title && typeof layout[k].title === "object" ? { ...layout[k].title, text: undefined } : undefined,
    ...(listed(layout[k]) ? { ticktext: layout[k].ticktext.length } : {}) }]));
  // A cell's value is set in black or white, whichever reads on the cell's colour: that may change.
  const uncoloured = (a) => (a.font && a.font.color ? { ...a.font, color: undefined } : a.font);
  const shapes = layout.shapes || [];
  const movable = (sh) => ["line", "rect"].includes(sh.type || "rect");
  const ends = ["x0", "x1", "y0", "y1"];
  return {
    fixed: JSON.stringify({ ...layout, ...untitled, title: { ...(layout.title || {}), text: undefined },
      annotations: notes.map((a) => ({ ...a, text: undefined, font: uncoloured(a), ...(placed(a) ? { x: 0, y: 0 } : {}) })),
      shapes: shapes.map((sh) => (movable(sh) ? { ...sh, x0: 0, x1: 0, y0: 0, y1: 0 } : sh)) }),
    title: titleOf(layout), notes: notes.map((a) => a.text), noteColors: notes.map((a) => a.font && a.font.color),
    axisTicks: Object.fromEntries(axes.filter((k) => listed(layout[k])).map((k) => [k, layout[k].ticktext])),
    notePoints: notes.map((a) => (placed(a) ? [a.x, a.y] : null)),
    noteRefs: notes.map((a) => [a.xref || "x", a.yref || "y"]),
    axisTitles: Object.fromEntries(axes.map((k) => [k, axisTitle(layout[k])])),
    shapes: shapes.map((sh) => (movable(sh) ? ends.map((k) => sh[k]) : null)),
    shapeSpecs: shapes,
  };
}

// A shape's corner in the page's SVG coordinates (plotly draws shapes unshifted by the subplot).
function shapePoint(gd, ref, v, vertical) {
  const L = gd._fullLayout;
  if (ref === "paper") return vertical ? L._size.t + (1 - v) * L._size.h : L._size.l + v * L._size.w;
  const ax = axisOf(L, ref.split(" ")[0]);
  if (ax && / domain$/.test(ref)) return ax._offset + (vertical ? 1 - v : v) * ax._length; // along that panel alone
  return ax ? ax._offset + ax.d2p(v) : NaN;
}

// Move annotation ``node`` (drawn for the point ``from``) to the point ``to``: its text box and its
// arrow keep their offsets from the point, so the whole group shifts by the point's move in pixels.
// plotly hides an annotation whose point leaves the axes: that needs plotly.
function moveNote(gd, node, [xref, yref], from, to) {
  const L = gd._fullLayout;
  const [xa, ya] = [axisOf(L, xref), axisOf(L, yref)];
  if (!node || !xa || !ya || xa.type !== "linear" || ya.type !== "linear") return null;
  const inside = (ax, v) => v >= Math.min(...ax.range) && v <= Math.max(...ax.range);
  if (!inside(xa, to[0]) || !inside(ya, to[1])) return null;
  const [sx, sy] = node.__shift || [0, 0];
  const dx = sx + xa.d2p(to[0]) - xa.d2p(from[0]), dy = sy + ya.d2p(to[1]) - ya.d2p(from[1]);
  return () => {
    node.__shift = [dx, dy];
    node.setAttribute("transform", `translate(${f2(dx)},${f2(dy)})`);
  };
}

function planLayout(gd, before, after) {
  if (before.fixed !== after.fixed) {
    const [a, b] = [JSON.parse(before.fixed), JSON.parse(after.fixed)];
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !same(a[k], b[k]));
    return refuse(`layout changed: ${keys.join(", ")}`);
  }
  const steps = [];
  if (before.title !== after.title) {
    const step = textStep(gd.querySelector(".g-gtitle text.gtitle"), before.title, after.title);
    if (!step) return refuse("title markup");
    steps.push(step);
  }
  for (const [k, text] of Object.entries(after.axisTitles || {})) {
    const old = (before.axisTitles || {})[k];
    if (text === old) continue;
    // plotly's class for an axis's title: xtitle, x2title, ytitle, ...
    const id = k.replace("axis", "");
    const step = typeof text === "string" && typeof old === "string" && text && old
      && textStep(gd.querySelector(`.infolayer .g-${id}title text.${id}title`), old, text);
    if (!step) return refuse("axis title");
    steps.push(step);
  }
  for (const [k, texts] of Object.entries(after.axisTicks || {})) {
    const old = (before.axisTicks || {})[k];
    if (same(texts, old)) continue;
    const step = tickStep(gd, k, old, texts);
    if (!step) return refuse("axis tick labels");
    steps.push(step);
  }
  const nodes = gd.querySelectorAll(".infolayer g.annotation");
  for (let k = 0; k < (after.noteColors || []).length; k++) {
    const [a, b] = [(before.noteColors || [])[k], after.noteColors[k]];
    if (a === b) continue;
    const text = nodes[k] && nodes[k].querySelector("text.annotation-text");
    const color = typeof b === "string" && rgba(b);
    if (!text || !color || color[3] !== 255) return refuse("annotation colour");
    steps.push(() => { text.style.fill = `rgb(${color[0]}, ${color[1]}, ${color[2]})`; });
  }
  for (let k = 0; k < after.notes.length; k++) {
    if (after.notes[k] === before.notes[k]) continue;
    const step = nodes[k] && textStep(nodes[k].querySelector("text.annotation-text"), before.notes[k], after.notes[k]);
    if (!step) return refuse("annotation markup");
    steps.push(step);
  }
  for (let k = 0; k < (after.notePoints || []).length; k++) {
    const [a, b] = [(before.notePoints || [])[k], after.notePoints[k]];
    if (!b || same(a, b)) continue;
    const step = a && moveNote(gd, nodes[k], after.noteRefs[k], a, b);
    if (!step) return refuse("annotation moved");
    steps.push(step);
  }
  for (let k = 0; k < after.shapes.length; k++) {
    if (same(after.shapes[k], before.shapes[k])) continue;
    const holder = gd.querySelector(`.shapelayer [data-index="${k}"]`);
    const path = holder && (holder.tagName === "path" ? holder : holder.querySelector("path"));
    const spec = after.shapeSpecs[k];
    const [x0, x1] = [spec.x0, spec.x1].map((v) => shapePoint(gd, spec.xref || "x", v, false));
    const [y0, y1] = [spec.y0, spec.y1].map((v) => shapePoint(gd, spec.yref || "y", v, true));
    if (!path || ![x0, x1, y0, y1].every(Number.isFinite)) return refuse("shape");
    const d = (spec.type || "rect") === "line" ? `M${f2(x0)},${f2(y0)}L${f2(x1)},${f2(y1)}`
      : `M${f2(x0)},${f2(y0)}H${f2(x1)}V${f2(y1)}H${f2(x0)}Z`;
    steps.push(() => path.setAttribute("d", d));
  }
  return () => steps.forEach((step) => step());
}

/**
 * Write figure ``after`` into the plot ``gd`` that plotly drew from ``before``
 * (frames: {data, layout, snapshot: layoutSnapshot(layout)}). Returns true if done, false if
 * plotly must draw ``after`` itself (nothing was changed then; ``refusal`` says why).
 */
export function patchFigure(gd, before, after) {
  refusal = "";
  const step = planFigure(gd, before, after);
  if (!step) return false;
  step();
  return true;
}

// Every check returns a plan (a function that writes) or null with the refusal set, never a
// boolean: a refusal cannot then read as "done" (a refused frame once counted as drawn).
function planFigure(gd, before, after) {
  if (!gd._fullLayout || !gd._fullData || !before) return refuse("not drawn by plotly yet");
  const [drawn, shown, next] = [gd._fullData.length, before.data.length, after.data.length];
  if (shown !== next || drawn !== next) return refuse(`trace count: ${drawn} drawn, ${next} in the new figure`);
  const layoutStep = planLayout(gd, before.snapshot, after.snapshot);
  if (!layoutStep) return null;
  const groups = new Map();
  for (const g of gd.querySelectorAll(".cartesianlayer g.trace, .cartesianlayer g.hm")) {
    const cd = g.__data__ && g.__data__[0];
    if (cd && cd.trace) groups.set(cd.trace.index, g);
  }
  const steps = [];
  for (let i = 0; i < after.data.length; i++) {
    const step = planTrace(gd, groups, i, before.data[i], after.data[i]);
    if (!step) return null;
    steps.push(step);
  }
  return () => {
    steps.forEach((step) => step());
    layoutStep();
  };
}
