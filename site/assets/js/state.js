// A figure's state as a URL, and back.
//
// A link to a figure in a state is the page's address with the parameters as
// a query and, on a page with many figures, the figure's id as the fragment:
//   /posts/polariser/?theta=30#demo-polarizer-1      /embed/polarizer/?theta=30
// Strings (select options, token text) are written as they are; numbers,
// booleans and matrices as JSON. Reading a link types each value by the
// control it names and leaves every check to Python: the registry's own
// validation names an unknown parameter or a bad value.

/** Every control's current value, as the worker receives it: {name: value}. ``asBuilt``: the
 * values the page arrived with (the build's), whatever the reader or the browser did since. */
export function readParams(fig, { asBuilt = false } = {}) {
  const params = {};
  const value = (el) => (asBuilt ? el.defaultValue : el.value);
  for (const el of fig.querySelectorAll(".demo-controls [name]")) {
    const name = el.getAttribute("name");
    if (el.tagName === "FIELDSET") {
      const rows = [];
      for (const cell of el.querySelectorAll("input[data-row]")) {
        (rows[+cell.dataset.row] ||= [])[+cell.dataset.col] = Number(value(cell));
      }
      params[name] = rows;
    } else if (el.type === "checkbox") params[name] = asBuilt ? el.defaultChecked : el.checked;
    else if (el.dataset.kind === "tokens") params[name] = value(el); // Python checks it and names a bad token
    else if (el.tagName === "SELECT") {
      const option = asBuilt ? [...el.options].find((o) => o.defaultSelected) || el.options[0] : el.selectedOptions[0];
      params[name] = JSON.parse(option.dataset.value);
    } else params[name] = Number(value(el));
  }
  return params;
}

/** Set every control named in ``params`` (values already accepted by Python). */
export function writeParams(fig, params) {
  for (const [name, value] of Object.entries(params)) {
    const el = control(fig, name);
    if (!el) continue;
    if (el.tagName === "FIELDSET") {
      for (const cell of el.querySelectorAll("input[data-row]")) cell.value = String(value[+cell.dataset.row][+cell.dataset.col]);
    } else if (el.type === "checkbox") el.checked = Boolean(value);
    else if (el.dataset.kind === "tokens") el.value = Array.isArray(value) ? value.join(" ") : String(value);
    else if (el.tagName === "SELECT") {
      const json = JSON.stringify(value);
      const index = [...el.options].findIndex((o) => o.dataset.value === json);
      if (index >= 0) el.selectedIndex = index;
    } else el.value = String(value);
  }
}

/** The query string of a state: ``theta=30&middle=false``. */
export function toQuery(params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) query.set(name, typeof value === "string" ? value : JSON.stringify(value));
  return query.toString();
}

/** The parameters a query names for ``fig``, typed by its controls, or null if it names none. */
export function fromQuery(fig, search) {
  const query = new URLSearchParams(search);
  const params = {};
  for (const [name, raw] of query) params[name] = typed(control(fig, name), raw);
  return Object.keys(params).length ? params : null;
}

/** The address of ``fig`` in state ``params``: its embed page, or its place on this page. */
export function linkTo(fig, params, { embed = false } = {}) {
  const query = toQuery(params);
  if (embed || document.body.classList.contains("embed")) {
    return new URL(`${embedPath(fig)}${query ? `?${query}` : ""}`, location.href).href;
  }
  const url = new URL(location.href);
  url.search = query;
  url.hash = fig.id;
  return url.href;
}

export function embedPath(fig) {
  const root = document.querySelector("script[data-worker]").dataset.embedRoot;
  return `${root}${fig.dataset.demo}/`;
}

function control(fig, name) {
  return [...fig.querySelectorAll(".demo-controls [name]")].find((el) => el.getAttribute("name") === name) || null;
}

function typed(el, raw) {
  if (el && el.dataset.kind === "tokens") return raw; // token text, as a reader types it
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw; // a word: a string option, or a bad value Python will name
  }
  if (el && el.tagName === "SELECT") {
    for (const candidate of [parsed, raw]) {
      const json = JSON.stringify(candidate);
      const option = [...el.options].find((o) => o.dataset.value === json);
      if (option) return JSON.parse(option.dataset.value);
    }
  }
  return parsed;
}
