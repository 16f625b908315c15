// The menu under each figure: a link to its current state, the iframe code
// that embeds it, the figure as an image (SVG, PNG: figure/image.js), its
// outputs as data (JSON; CSV for tables and matrices) and a Python snippet that
// recomputes them with the pip package, and a BibTeX entry that cites the
// figure in this state.
//
// Every action reads the figure as the reader sees it now: the parameters its
// controls hold and the outputs Python last computed (data-value, exact JSON).

import { linkTo, readParams } from "./state.js";
import { figureSVG, toPNG } from "./figure/image.js";

const script = document.querySelector("script[data-worker]");

/** Wire up the menu of one figure; ``title`` names it in the iframe code. */
export function setupMenu(fig, title) {
  const menu = fig.querySelector('[data-role="menu"]');
  if (!menu) return;
  const panel = menu.querySelector('[data-role="share"]');
  const box = panel.querySelector("textarea");
  const label = panel.querySelector('[data-role="share-label"]');
  const status = panel.querySelector('[data-role="share-status"]');
  const actions = menu.querySelector(".demo-menu-actions");

  // One CSV button per output that is a table or a matrix (the prerendered values tell which).
  const python = actions.querySelector('[data-action="python"]');
  for (const [name, value] of Object.entries(outputs(fig))) {
    if (toCSV(value) === null) continue;
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.action = "csv";
    button.dataset.output = name;
    // the output's label as the figure shows it, not its code name
    const shown = fig.querySelector(`output[data-output="${CSS.escape(name)}"]`);
    const label = shown && document.getElementById(shown.getAttribute("aria-labelledby"));
    button.textContent = `CSV: ${label ? label.textContent.trim() : name}`;
    actions.insertBefore(button, python);
  }

  const show = (heading, text) => {
    label.textContent = heading;
    box.value = text;
    box.rows = Math.min(12, text.split("\n").length + 1);
    panel.hidden = false;
    status.textContent = "";
    box.focus();
    box.select();
  };

  menu.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    const params = readParams(fig);
    if (action === "link") {
      show("Link to this figure with these settings", linkTo(fig, params));
      copy(box.value, status);
    } else if (action === "embed") {
      show("Paste this into your page's HTML to embed the figure", iframeCode(fig, params, title));
    } else if (action === "cite") {
      show("Cite this figure with these settings (BibTeX)", citation(fig, params, title));
    } else if (action === "python") {
      show("Recompute these outputs with the headspace package", pythonSnippet(fig.dataset.demo, params));
    } else if (action === "json") {
      const data = { demo: fig.dataset.demo, params, outputs: outputs(fig), link: linkTo(fig, params) };
      download(`${fig.dataset.demo}.json`, `${JSON.stringify(data, null, 2)}\n`, "application/json");
    } else if (action === "csv") {
      const name = button.dataset.output;
      download(`${fig.dataset.demo}-${name}.csv`, toCSV(outputs(fig)[name]), "text/csv");
    } else if (action === "svg" || action === "png") {
      Promise.resolve().then(() => {
        const svg = figureSVG(fig, title, linkTo(fig, params));
        if (action === "svg") return download(`${fig.dataset.demo}.svg`, svg, "image/svg+xml");
        return toPNG(svg).then((png) => download(`${fig.dataset.demo}.png`, png, "image/png"));
      }).catch((err) => show("The image could not be made", err.message));
    } else if (action === "copy") {
      copy(box.value, status);
    }
  });
  for (const el of menu.querySelectorAll("button, textarea")) el.disabled = false; // disabled as built: nothing works without this script
  menu.hidden = false;
}

/** {output name: value} as Python last computed them (exact JSON kept in data-value). */
export function outputs(fig) {
  const out = {};
  for (const el of fig.querySelectorAll("output[data-output]")) out[el.dataset.output] = JSON.parse(el.dataset.value);
  return out;
}

function iframeCode(fig, params, title) {
  const src = linkTo(fig, params, { embed: true });
  const height = Math.ceil(fig.getBoundingClientRect().height + 40); // embed.js then fits it exactly
  const helper = new URL(script.dataset.embedScript, location.href).href;
  return `<iframe src="${escapeAttr(src)}" title="${escapeAttr(title)} (interactive figure from headspace)" ` +
    `width="100%" height="${height}" style="border:0;max-width:100%" loading="lazy" allow="clipboard-write" data-headspace></iframe>\n` +
    `<script async src="${escapeAttr(helper)}"></script>`;
}

/** A BibTeX entry for the figure in this state: its link is the state, its note the settings. */
function citation(fig, params, title) {
  const today = new Date().toISOString().slice(0, 10);
  const settings = Object.entries(params).map(([k, v]) => `${k} = ${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ");
  const tex = (text) => text.replace(/([&%$#_{}])/g, "\\$1");
  return [
    `@misc{headspace-${fig.dataset.demo},`,
    `  title        = {${tex(title)}},`,
    "  author       = {{headspace}},",
    `  howpublished = {Interactive figure, \\url{${linkTo(fig, params)}}},`,
    `  note         = {Settings: ${tex(settings)}. Accessed ${today}},`,
    `  year         = {${today.slice(0, 4)}}`,
    "}",
  ].join("\n");
}

/** Python source that recomputes a figure's outputs natively (a test runs each one). */
export function pythonSnippet(name, params) {
  const wheel = new URL(script.dataset.wheel, location.href).href;
  return [
    `# pip install ${wheel}`,
    "from headspace_site.demos import REGISTRY",
    "",
    `result = REGISTRY[${pyLiteral(name)}].run(${pyLiteral(params)})`,
    'print(result["outputs"])',
  ].join("\n");
}

function pyLiteral(v) {
  if (v === null || typeof v === "boolean") return { null: "None", true: "True", false: "False" }[v];
  if (typeof v === "number" || typeof v === "string") return JSON.stringify(v); // JSON's number or string is Python's too
  if (Array.isArray(v)) return `[${v.map(pyLiteral).join(", ")}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyLiteral(x)}`).join(", ")}}`;
}

/**
 * CSV text for an output that is a table or a matrix, else null:
 * a matrix as its rows; a list as one column; {name: number} as name,value rows;
 * {column: list} of equal lengths as a table; deeper arrays as one row per entry,
 * its indices then its value.
 */
export function toCSV(value) {
  const isNum = (x) => typeof x === "number";
  if (Array.isArray(value) && value.length && value.every(isNum)) return lines([["value"], ...value.map((x) => [x])]);
  if (Array.isArray(value) && value.length && value.every((r) => Array.isArray(r) && r.length === value[0].length && r.every(isNum))) {
    return lines(value);
  }
  if (Array.isArray(value) && value.length) {
    const rows = [];
    const walk = (x, index) => {
      if (isNum(x)) rows.push([...index, x]);
      else if (Array.isArray(x)) x.forEach((y, i) => walk(y, [...index, i]));
      else throw new Error("not numeric");
    };
    try {
      walk(value, []);
    } catch {
      return null;
    }
    const depth = rows[0].length - 1;
    return lines([[...Array.from({ length: depth }, (_, i) => `index_${i}`), "value"], ...rows]);
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length && entries.every(([, x]) => isNum(x))) return lines([["key", "value"], ...entries]);
    const columns = entries.map(([, x]) => x);
    if (entries.length && columns.every((c) => Array.isArray(c) && c.length === columns[0].length && c.every(isNum))) {
      return lines([entries.map(([k]) => k), ...columns[0].map((_, i) => columns.map((c) => c[i]))]);
    }
  }
  return null;
}

function lines(rows) {
  const cell = (x) => (typeof x === "string" && /[",\n]/.test(x) ? `"${x.replace(/"/g, '""')}"` : String(x));
  return `${rows.map((r) => r.map(cell).join(",")).join("\n")}\n`;
}

function download(filename, data, type) {
  const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function copy(text, status) {
  const fallback = () => { status.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy."; };
  if (!navigator.clipboard) return fallback();
  navigator.clipboard.writeText(text).then(() => { status.textContent = "Copied to the clipboard."; }, fallback);
}

function escapeAttr(s) {
  return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}
